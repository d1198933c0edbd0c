//! Why an analysis could not run at all.

use url::Url;

/// Why an analysis could not run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    /// The URL is not an absolute `http`/`https` URL with a host.
    #[error("{url:?} is not an http(s) URL with a host: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why.
        reason: String,
    },
}

/// Validates the URL to analyse: an absolute `http` or `https` URL with a host.
pub fn parse_target(url: &str) -> Result<Url, AnalysisError> {
    let invalid = |reason: &str| AnalysisError::InvalidUrl {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let parsed = Url::parse(url.trim()).map_err(|error| invalid(&error.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("only http and https URLs can be analysed"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(invalid("no host"));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_must_be_http_with_a_host() {
        assert!(parse_target("https://example.com/a?b").is_ok());
        assert!(parse_target("ftp://example.com/").is_err());
        assert!(parse_target("/relative").is_err());
        assert!(parse_target("mailto:a@b.c").is_err());
    }
}
