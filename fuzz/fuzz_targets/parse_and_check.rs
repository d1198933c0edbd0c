//! Arbitrary bytes as a robots.txt file and a URL: never a panic, and both parses agree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robots::{AgentRules, ProductTokens, RobotsTxt};

fuzz_target!(|data: &[u8]| {
    // The first line is the URL, the rest the file.
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let (url, body) = data.split_at(split);
    let full = RobotsTxt::parse(body);
    for tokens in [&ProductTokens::JITTYBOT, &ProductTokens::JITTYBOT_IMAGE] {
        let agent = AgentRules::parse(body, tokens);
        assert_eq!(agent, full.rules_for(tokens));
        let decision = agent.check_bytes(url);
        let _ = decision.explain().to_string();
    }
    for diagnostic in full.diagnostics() {
        let _ = diagnostic.to_string();
    }
});
