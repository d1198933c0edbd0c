//! The service's typed errors.

use std::fmt;

use db::DbError;
use url::Url;

use crate::ids::ReportId;

/// The report whose stored row does not read: by its id, or by the URL it was asked for by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DamagedRow {
    /// The report with this id.
    Id(ReportId),
    /// The previous report of this URL (its id is in the row that did not read); boxed, as a URL
    /// would make every `ServiceError` large.
    PreviousOf(Box<Url>),
}

impl fmt::Display for DamagedRow {
    /// The id, or the URL: what the message has always named.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DamagedRow::Id(id) => id.fmt(f),
            DamagedRow::PreviousOf(url) => f.write_str(url.as_str()),
        }
    }
}

/// What can go wrong in the service's store and background work.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The store failed.
    #[error(transparent)]
    Db(#[from] DbError),
    /// A stored report document could not be read or written.
    #[error("report {id}: the stored document is unreadable")]
    Document {
        /// The report.
        id: ReportId,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// A stored report document could not be compressed or decompressed.
    #[error("report {id}: the stored document cannot be decoded")]
    Codec {
        /// The report.
        id: ReportId,
        /// Why.
        #[source]
        source: crate::codec::CodecError,
    },
    /// A stored report's row has a column that does not decode (damage, or a hand edit).
    #[error("report {id}: the stored row is unreadable")]
    BadRow {
        /// The report (or the URL whose report was read).
        id: DamagedRow,
        /// The driver's decoding error.
        #[source]
        source: db::sqlx::Error,
    },
    /// A lease was taken by another holder while its work ran (it could not be renewed).
    #[error("the {name} lease was lost")]
    LeaseLost {
        /// The lease.
        name: &'static str,
    },
    /// The operating system's random generator failed (report ids).
    #[error("no random numbers for a report id")]
    Random(#[source] getrandom::Error),
    /// A time computation left the supported range.
    #[error("time out of range")]
    Time(#[source] jiff::Error),
}

impl ServiceError {
    /// Whether this is one stored row that does not read (its document does not decode):
    /// lists, statistics and rankings skip such a row, its own page says it cannot be shown.
    pub fn is_bad_row(&self) -> bool {
        matches!(
            self,
            ServiceError::Document { .. }
                | ServiceError::Codec { .. }
                | ServiceError::BadRow { .. }
        )
    }

    /// Wrap a JSON error about report `id`.
    pub(crate) fn document(id: &ReportId) -> impl FnOnce(serde_json::Error) -> ServiceError + '_ {
        move |source| ServiceError::Document {
            id: id.clone(),
            source,
        }
    }
}

impl ServiceError {
    /// Wrap a codec error about report `id`.
    pub(crate) fn codec(
        id: &ReportId,
    ) -> impl FnOnce(crate::codec::CodecError) -> ServiceError + '_ {
        move |source| ServiceError::Codec {
            id: id.clone(),
            source,
        }
    }
}

/// Shorthand for the store's driver error mapping.
pub(crate) fn q(context: &'static str) -> impl FnOnce(db::sqlx::Error) -> ServiceError {
    move |source| ServiceError::Db(DbError::Query { context, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_rows_name_their_report_or_url_with_the_cause() {
        let id: ReportId = "a".repeat(crate::ids::REPORT_ID_LEN).parse().unwrap();
        let json = serde_json::from_str::<u8>("x").unwrap_err();
        let error = ServiceError::document(&id)(json);
        assert!(error.is_bad_row());
        assert_eq!(
            error.to_string(),
            format!("report {id}: the stored document is unreadable")
        );
        assert!(std::error::Error::source(&error).is_some());
        let url = Url::parse("https://a.test/x").unwrap();
        let error = ServiceError::BadRow {
            id: DamagedRow::PreviousOf(Box::new(url)),
            source: db::sqlx::Error::RowNotFound,
        };
        assert_eq!(
            error.to_string(),
            "report https://a.test/x: the stored row is unreadable"
        );
        assert!(std::error::Error::source(&error).is_some());
    }
}
