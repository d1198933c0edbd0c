//! The addresses of the published pages, made in one place: the API's answers, the sitemap
//! and the pages' links all name a page the same way.

use std::fmt::Write as _;

use crate::ids::ReportId;

/// A domain's page: `/score/{domain}`.
pub fn domain(domain: &str) -> String {
    format!("/score/{}", segment(domain))
}

/// A report's page: `/score/{domain}/{id}`.
pub fn report(domain: &str, id: &ReportId) -> String {
    format!("/score/{}/{id}", segment(domain))
}

/// A paste's page: `/paste/{id}` (never listed or linked).
pub fn paste(id: &ReportId) -> String {
    format!("/paste/{id}")
}

/// A domain's icon: `/icon/{domain}`.
pub fn icon(domain: &str) -> String {
    format!("/icon/{}", segment(domain))
}

/// A report as JSON: `/api/report/{id}`.
pub fn api_report(id: &ReportId) -> String {
    format!("/api/report/{id}")
}

/// A path segment: everything outside the unreserved set percent-encoded (an IPv6 literal's
/// brackets and colons included).
pub fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// `public` (the service's public address) with `path` (already percent-encoded) in place of
/// its path.
pub fn absolute(public: &url::Url, path: &str) -> String {
    format!("{}{}", public.as_str().trim_end_matches('/'), path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_encoded() {
        let cases = [
            (segment("[2001:db8::1]"), "%5B2001%3Adb8%3A%3A1%5D"),
            (segment("example.com"), "example.com"),
            (domain("[::1]"), "/score/%5B%3A%3A1%5D"),
            (icon("a b"), "/icon/a%20b"),
        ];
        for (made, expected) in cases {
            assert_eq!(made, expected);
        }
    }
}
