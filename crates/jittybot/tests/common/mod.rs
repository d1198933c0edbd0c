//! Running the `jittybot` binary as a user runs it, shared by the command tests.

// Each test file uses its own part of this module.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Output, Stdio};

use testweb::TestWeb;

/// Runs `jittybot ARGS`, feeding `stdin` (if any) to it, and waits for it to exit.
///
/// Blocking is fine in the async tests too: the test web serves from the runtime's worker
/// threads while the test's own thread waits here.
pub fn jittybot<S: AsRef<OsStr>>(args: &[S], stdin: Option<&str>) -> Output {
    jittybot_with_env(args, stdin, &[])
}

/// [`jittybot`] with environment variables set (`RUST_LOG`).
pub fn jittybot_with_env<S: AsRef<OsStr>>(
    args: &[S],
    stdin: Option<&str>,
    env: &[(&str, &str)],
) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_jittybot"))
        .args(args)
        .env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("jittybot runs");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(text) = stdin {
        // A usage error exits before reading: a broken pipe is then expected.
        let _ = input.write_all(text.as_bytes());
    }
    drop(input);
    child.wait_with_output().expect("jittybot exits")
}

/// The options that let the binary reach `host` on the test web (loopback, pinned by name).
pub fn reach(web: &TestWeb, host: &str) -> Vec<String> {
    let mut args = vec!["--allow-private-addresses".to_owned()];
    for pin in web.pins(host) {
        args.push("--resolve".to_owned());
        args.push(pin);
    }
    args
}

/// The standard output, as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The standard error, as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Serves on `host` issue 7's hostile robots.txt, scaled down: a chain of five redirects
/// answered after 300 ms each, the file (allowing everything) after 1.8 s.
pub fn slow_redirect_chain(web: &TestWeb, host: &str) {
    for hop in 0..5 {
        let from = match hop {
            0 => "/robots.txt".to_owned(),
            n => format!("/r{n}"),
        };
        web.site(host).path(&from).respond(
            testweb::Reply::redirect(301, &format!("/r{}", hop + 1))
                .delay(std::time::Duration::from_millis(300)),
        );
    }
    web.site(host).path("/r5").respond(
        testweb::Reply::robots_txt("User-agent: *\nAllow: /\n")
            .delay(std::time::Duration::from_millis(300)),
    );
    web.site(host)
        .path("/")
        .respond(testweb::Reply::ok().body("<head></head>"));
}
