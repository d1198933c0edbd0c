//! Row ids of the crawl store, one type per table, so that an origin's id can never be passed
//! where a host's or a URL's is expected.
//!
//! An id is made only by the store (read from a row) and handed back to it; outside the store
//! it is opaque: compared, hashed, ordered (the order of the rows), shown, never computed
//! with. Each binds and decodes as the `BIGINT` it is stored as, on both backends.

use std::fmt;

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::Database;

/// A row id type over the stored `i64`, with its sqlx encoding (that of `i64`, on any
/// backend whose `i64` has one).
macro_rules! row_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl<DB: Database> sqlx::Type<DB> for $name
        where
            i64: sqlx::Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <i64 as sqlx::Type<DB>>::type_info()
            }

            fn compatible(ty: &DB::TypeInfo) -> bool {
                <i64 as sqlx::Type<DB>>::compatible(ty)
            }
        }

        impl<'q, DB: Database> sqlx::Encode<'q, DB> for $name
        where
            i64: sqlx::Encode<'q, DB>,
        {
            fn encode_by_ref(
                &self,
                buf: &mut <DB as Database>::ArgumentBuffer<'q>,
            ) -> Result<IsNull, BoxDynError> {
                self.0.encode_by_ref(buf)
            }

            fn size_hint(&self) -> usize {
                self.0.size_hint()
            }
        }

        impl<'r, DB: Database> sqlx::Decode<'r, DB> for $name
        where
            i64: sqlx::Decode<'r, DB>,
        {
            fn decode(value: <DB as Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
                <i64 as sqlx::Decode<'r, DB>>::decode(value).map($name)
            }
        }
    };
}

row_id! {
    /// The row of an origin (`crawl_origins`): the hosts paced as one.
    OriginId
}

row_id! {
    /// The row of a host (`crawl_hosts`).
    HostId
}

row_id! {
    /// The row of a site (`crawl_sites`): a registrable domain and its hosts.
    SiteId
}

row_id! {
    /// The row of a URL in the frontier (`crawl_urls`).
    UrlId
}

/// The lease table (`db::LeaseTable`) takes and yields origins as bare integers.
impl OriginId {
    /// The origin of a row id the lease table yields.
    pub(super) fn of_row(id: i64) -> OriginId {
        OriginId(id)
    }

    /// The row id the lease table takes.
    pub(super) fn row(self) -> i64 {
        self.0
    }
}

#[cfg(test)]
impl UrlId {
    /// A URL id made up by a unit test of the store.
    pub(super) fn of_row(id: i64) -> UrlId {
        UrlId(id)
    }

    /// The stored integer, for a unit test's comparison.
    pub(super) fn row(self) -> i64 {
        self.0
    }
}
