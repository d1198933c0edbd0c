//! Addresses a name resolved to stay private.
//!
//! A fetch that fails says where it tried to connect: "refused to connect to intranet.example
//! at 10.0.0.5: private address". Shown to whoever submitted the URL, that maps the
//! operator's network (or an attacker's DNS tricks) for them. Every text of a report or of a
//! failure that the public sees goes through [`text`] before it is stored: an IP address in it
//! becomes [`WITHHELD`], unless it is the host the URL itself names (the person typed it).

use std::net::{IpAddr, SocketAddr};

use audit::Analysis;
use serde_json::Value;
use url::Url;

/// What an address is replaced with.
pub const WITHHELD: &str = "(address withheld)";

fn is_address_char(c: char) -> bool {
    c.is_ascii_hexdigit() || matches!(c, '.' | ':' | '[' | ']' | '%')
}

fn is_address(token: &str) -> Option<IpAddr> {
    let trimmed = token.trim_end_matches(['.', ':']);
    if !trimmed.contains(['.', ':']) {
        return None;
    }
    trimmed
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .ok()
        .or_else(|| trimmed.parse::<SocketAddr>().ok().map(|s| s.ip()))
}

/// `text` with every IP address (with or without a port) other than `keep` replaced by
/// [`WITHHELD`].
pub fn text(text: &str, keep: Option<IpAddr>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(is_address_char) {
        out.push_str(&rest[..start]);
        let run = &rest[start..];
        let end = run.find(|c| !is_address_char(c)).unwrap_or(run.len());
        let token = &run[..end];
        match is_address(token) {
            Some(addr) if Some(addr) != keep => {
                out.push_str(WITHHELD);
                // Keep the punctuation that ended a sentence.
                let kept = token.len() - token.trim_end_matches(['.', ':']).len();
                out.push_str(&token[token.len() - kept..]);
            }
            _ => out.push_str(token),
        }
        rest = &run[end..];
    }
    out.push_str(rest);
    out
}

/// The address `url`'s host names literally, if it is an IP address.
pub fn literal_host(url: Option<&Url>) -> Option<IpAddr> {
    match url?.host()? {
        url::Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
        url::Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
        url::Host::Domain(_) => None,
    }
}

/// `analysis` with the addresses in its texts (errors, evidence, parameters) withheld. Only
/// the free texts are touched: URLs, headers and robots.txt's lines are left as they are.
pub fn analysis(analysis: &mut Analysis) {
    let keep = literal_host(analysis.url.as_ref());
    let fix = |field: &mut Option<String>| {
        if let Some(value) = field {
            *value = text(value, keep);
        }
    };
    fix(&mut analysis.robots.error);
    fix(&mut analysis.page.error);
    for sitemap in &mut analysis.sitemaps {
        fix(&mut sitemap.error);
    }
    for request in &mut analysis.requests {
        fix(&mut request.error);
    }
    for finding in &mut analysis.findings {
        fix(&mut finding.evidence.text);
        for value in finding.params.values_mut() {
            if let Value::String(param) = value {
                *param = text(param, keep);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolved_addresses_are_withheld_and_the_typed_one_kept() {
        assert_eq!(
            text(
                "refused to connect to intranet.example at 10.0.0.5: private address",
                None
            ),
            "refused to connect to intranet.example at (address withheld): private address"
        );
        assert_eq!(
            text(
                "tcp connect error: 192.168.1.2:8080, [fd00::1]:443 and fe80::1.",
                None
            ),
            "tcp connect error: (address withheld), (address withheld) and (address withheld)."
        );
        let typed: IpAddr = "203.0.113.7".parse().unwrap();
        assert_eq!(
            text("connection to 203.0.113.7 refused", Some(typed)),
            "connection to 203.0.113.7 refused"
        );
        assert_eq!(
            text("timed out (headers) after 10 s; 3 of 12 at 10:30", None),
            "timed out (headers) after 10 s; 3 of 12 at 10:30"
        );
        assert_eq!(text("deadbeef cafe", None), "deadbeef cafe");
    }
}
