//! The store's typed errors.

/// What can go wrong opening or using a store.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The `--db` value is neither a usable path nor a PostgreSQL URL.
    #[error("bad --db value {value:?}: {reason}")]
    BadTarget {
        /// The value given.
        value: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// Connecting failed (file not creatable, server unreachable, authentication).
    #[error("cannot open the store {target}")]
    Connect {
        /// The store, credentials removed.
        target: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// A migration failed; the store is left at the previous version.
    #[error("migration {schema} v{version} ({name}) failed")]
    Migration {
        /// The schema it belongs to.
        schema: &'static str,
        /// Its version.
        version: i64,
        /// Its name.
        name: &'static str,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// The store was written by a newer build: this one does not know its latest migration.
    #[error("the store has {schema} v{found}, newer than this build's v{known}: upgrade jittybot")]
    NewerSchema {
        /// The schema.
        schema: &'static str,
        /// The version found in the store.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// Any other query failure.
    #[error("store query failed: {context}")]
    Query {
        /// What was being done.
        context: &'static str,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
}

impl DbError {
    /// Wrap a driver error with what was being done.
    pub fn query(context: &'static str) -> impl FnOnce(sqlx::Error) -> DbError {
        move |source| DbError::Query { context, source }
    }

    /// Whether trying again may succeed (a lost connection, a busy database, a serialization
    /// conflict), as opposed to a bug or a broken store.
    pub fn is_retryable(&self) -> bool {
        let source = match self {
            DbError::Connect { source, .. }
            | DbError::Query { source, .. }
            | DbError::Migration { source, .. } => source,
            _ => return false,
        };
        match source {
            sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => true,
            sqlx::Error::Database(e) => matches!(
                e.code().as_deref(),
                // SQLite BUSY / LOCKED; PostgreSQL serialization failure / deadlock.
                Some("5" | "6" | "517" | "40001" | "40P01")
            ),
            _ => false,
        }
    }
}
