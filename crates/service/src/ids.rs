//! Typed names: report ids, registrable domains, sites.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use url::Url;

/// Characters of a [`ReportId`]: 128 random bits in lowercase base32 without padding.
pub const REPORT_ID_LEN: usize = 26;

/// A report's id: 128 random bits, so a paste's address cannot be guessed or enumerated.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ReportId(String);

/// Why a string is not a report id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a report id")]
pub struct BadReportId;

fn base32() -> data_encoding::Encoding {
    let mut spec = data_encoding::Specification::new();
    spec.symbols.push_str("abcdefghijklmnopqrstuvwxyz234567");
    // The alphabet is fixed and valid: this cannot fail.
    spec.encoding().unwrap_or(data_encoding::BASE32_NOPAD)
}

impl ReportId {
    /// A fresh random id from the operating system's generator.
    pub fn random() -> Result<ReportId, getrandom::Error> {
        let mut bytes = [0u8; 16];
        getrandom::getrandom(&mut bytes)?;
        Ok(ReportId(base32().encode(&bytes)))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for ReportId {
    type Err = BadReportId;

    fn from_str(text: &str) -> Result<ReportId, BadReportId> {
        let ok = text.len() == REPORT_ID_LEN
            && text
                .bytes()
                .all(|b| b.is_ascii_lowercase() || (b'2'..=b'7').contains(&b));
        if ok {
            Ok(ReportId(text.to_owned()))
        } else {
            Err(BadReportId)
        }
    }
}

impl TryFrom<String> for ReportId {
    type Error = BadReportId;
    fn try_from(text: String) -> Result<ReportId, BadReportId> {
        text.parse()
    }
}

impl From<ReportId> for String {
    fn from(id: ReportId) -> String {
        id.0
    }
}

impl fmt::Display for ReportId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The registrable domain of `url`'s host (`www.example.co.uk` → `example.co.uk`) by the
/// public suffix list (`www.site.test` → `site.test` by its default rule); an IP address, or a
/// name that is itself a suffix, is its own domain. Lower case.
pub fn registrable_domain(url: &Url) -> Option<String> {
    let host = url.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return None;
    }
    if url
        .host()
        .is_some_and(|h| !matches!(h, url::Host::Domain(_)))
    {
        return Some(host);
    }
    // A name under no listed suffix falls under the list's default rule `*` (its last
    // label is the suffix), as the PSL algorithm says.
    let domain = psl::domain(host.as_bytes())
        .and_then(|d| std::str::from_utf8(d.as_bytes()).ok().map(str::to_owned));
    Some(domain.unwrap_or(host))
}

/// A domain as typed in an address (`/api/score/{domain}`): lower case, no trailing dot.
pub fn normalize_domain(text: &str) -> String {
    text.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// The site of `url`: its scheme, host and port (`https://example.com:443`). One site is never
/// analysed twice at once, and the schedule backs off per site.
pub fn site_of(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let port = url.port_or_known_default().unwrap_or(0);
    format!("{}://{host}:{port}", url.scheme())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_128_bit_base32() {
        let a = ReportId::random().unwrap();
        let b = ReportId::random().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), REPORT_ID_LEN);
        assert_eq!(a.as_str().parse::<ReportId>().unwrap(), a);
        for bad in [
            "",
            "abc",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
            "aaaaaaaaaaaaaaaaaaaaaaaaa1",
            "../../etc/passwd",
        ] {
            assert!(bad.parse::<ReportId>().is_err(), "{bad}");
        }
    }

    #[test]
    fn domains_are_registrable() {
        let d = |u: &str| registrable_domain(&Url::parse(u).unwrap());
        assert_eq!(
            d("https://www.Example.co.uk/x").as_deref(),
            Some("example.co.uk")
        );
        assert_eq!(
            d("https://a.b.example.com/").as_deref(),
            Some("example.com")
        );
        assert_eq!(d("http://site.test:8080/").as_deref(), Some("site.test"));
        assert_eq!(d("http://127.0.0.1/").as_deref(), Some("127.0.0.1"));
        assert_eq!(d("http://www.site.test/").as_deref(), Some("site.test"));
        assert_eq!(d("http://localhost/").as_deref(), Some("localhost"));
        assert_eq!(
            site_of(&Url::parse("https://Example.com/a").unwrap()),
            "https://example.com:443"
        );
    }
}
