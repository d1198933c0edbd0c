//! The service's typed errors.

use db::DbError;

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
        id: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// A stored report document could not be compressed or decompressed.
    #[error("report {id}: the stored document cannot be decoded")]
    Codec {
        /// The report.
        id: String,
        /// Why.
        #[source]
        source: crate::codec::CodecError,
    },
    /// A stored report's row has a column that does not decode (damage, or a hand edit).
    #[error("report {id}: the stored row is unreadable")]
    BadRow {
        /// The report (or the URL whose report was read).
        id: String,
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
    pub(crate) fn document(id: &str) -> impl FnOnce(serde_json::Error) -> ServiceError + '_ {
        move |source| ServiceError::Document {
            id: id.to_owned(),
            source,
        }
    }
}

impl ServiceError {
    /// Wrap a codec error about report `id`.
    pub(crate) fn codec(id: &str) -> impl FnOnce(crate::codec::CodecError) -> ServiceError + '_ {
        move |source| ServiceError::Codec {
            id: id.to_owned(),
            source,
        }
    }
}

/// Shorthand for the store's driver error mapping.
pub(crate) fn q(context: &'static str) -> impl FnOnce(db::sqlx::Error) -> ServiceError {
    move |source| ServiceError::Db(DbError::Query { context, source })
}
