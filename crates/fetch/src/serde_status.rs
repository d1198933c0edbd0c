//! `http::StatusCode` in serde formats as its number (`200`, not `"200 OK"`): for
//! `#[serde(with = "fetch::serde_status")]` on a `StatusCode` and
//! `#[serde(with = "fetch::serde_status::option")]` on an `Option<StatusCode>`. The one
//! encoding of a status in everything stored (the fetcher's redirect hops, the audit's reports,
//! the crawler's records), so a status written by one crate reads back in another.

use http::StatusCode;
use serde::{Deserialize, Deserializer, Serializer};

/// Serialises a status as its number.
pub fn serialize<S: Serializer>(status: &StatusCode, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u16(status.as_u16())
}

/// Reads a status from its number (100 to 999).
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<StatusCode, D::Error> {
    let code = u16::deserialize(deserializer)?;
    StatusCode::from_u16(code).map_err(serde::de::Error::custom)
}

/// The same for `Option<StatusCode>` (`null` when absent).
pub mod option {
    use http::StatusCode;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Serialises a status as its number, or `null`.
    pub fn serialize<S: Serializer>(
        status: &Option<StatusCode>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match status {
            Some(status) => serializer.serialize_some(&status.as_u16()),
            None => serializer.serialize_none(),
        }
    }

    /// Reads a status from its number, or `null`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<StatusCode>, D::Error> {
        Option::<u16>::deserialize(deserializer)?
            .map(|code| StatusCode::from_u16(code).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use http::StatusCode;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Both {
        #[serde(with = "super")]
        status: StatusCode,
        #[serde(with = "super::option")]
        maybe: Option<StatusCode>,
    }

    #[test]
    fn statuses_are_numbers() {
        let both = Both {
            status: StatusCode::from_u16(999).unwrap(),
            maybe: None,
        };
        let json = serde_json::to_string(&both).unwrap();
        assert_eq!(json, r#"{"status":999,"maybe":null}"#);
        assert_eq!(serde_json::from_str::<Both>(&json).unwrap(), both);
        let json = r#"{"status":200,"maybe":404}"#;
        let read: Both = serde_json::from_str(json).unwrap();
        assert_eq!(read.maybe, Some(StatusCode::NOT_FOUND));
        assert!(serde_json::from_str::<Both>(r#"{"status":42,"maybe":null}"#).is_err());
    }
}
