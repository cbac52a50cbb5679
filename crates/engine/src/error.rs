//! Errors of the storage engine.
//!
//! One small enum for everything the engine can refuse. Each variant knows
//! whether the caller may simply run the transaction again
//! ([`Error::is_retryable`]) and which PostgreSQL SQLSTATE describes it
//! ([`Error::sqlstate`]), so the SQL and wire layers never have to guess.

use centum_types::TypeError;

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything the engine can refuse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Another transaction changed a row this one wanted to change or had
    /// read (write-write conflict under SNAPSHOT/SERIALIZABLE, or a failed
    /// SERIALIZABLE validation). Retrying the whole transaction may succeed.
    #[error("could not serialize access due to {0}")]
    Serialization(&'static str),
    /// A transaction waiting for another one would have waited forever.
    #[error("deadlock detected")]
    Deadlock,
    /// A wait for a row or key another transaction holds lasted longer
    /// than `lock_timeout` (55P03).
    #[error("canceling statement due to lock timeout")]
    LockTimeout,
    /// A wait was cut short by the statement's deadline or a cancel
    /// request (57014): why.
    #[error("canceling statement due to {0}")]
    Canceled(&'static str),
    /// The statement met a row (or key) that transaction `holder` holds,
    /// and its wait limits asked it not to sleep (see
    /// [`crate::WaitLimits::defer`]): the caller rolls the statement back,
    /// awaits a [`crate::RowWait`] and runs it again. It never reaches a
    /// client.
    #[error("the statement must wait for transaction {holder:?}")]
    WouldWait {
        /// The transaction to wait for.
        holder: crate::TxnId,
        /// Whether its commit record being logged ends the wait (early lock
        /// release), or only its end.
        or_logged: bool,
    },
    /// A unique index already holds the key.
    #[error("duplicate key value violates unique constraint \"{index}\"")]
    UniqueViolation {
        /// The index whose key was duplicated.
        index: String,
        /// Its table.
        table: String,
    },
    /// NULL given for a NOT NULL column.
    #[error("null value in column \"{column}\" of relation \"{table}\" violates not-null constraint")]
    NotNullViolation {
        /// The table.
        table: String,
        /// The column.
        column: String,
    },
    /// A value does not fit its column.
    #[error(transparent)]
    Type(#[from] TypeError),
    /// A row has the wrong number of values.
    #[error("table \"{table}\" has {expected} columns but {found} values were given")]
    ColumnCount {
        /// The table.
        table: String,
        /// Its column count.
        expected: usize,
        /// The number of values given.
        found: usize,
    },
    /// A key lookup gave the wrong number of key values.
    #[error("index \"{index}\" has {expected} key columns but {found} values were given")]
    KeyArity {
        /// The index.
        index: String,
        /// Its key column count.
        expected: usize,
        /// The number of values given.
        found: usize,
    },
    /// No such table.
    #[error("relation \"{0}\" does not exist")]
    NoSuchTable(String),
    /// A table of that name exists already.
    #[error("relation \"{0}\" already exists")]
    TableExists(String),
    /// No such index.
    #[error("index \"{0}\" does not exist")]
    NoSuchIndex(String),
    /// An index of that name exists already.
    #[error("relation \"{0}\" already exists")]
    IndexExists(String),
    /// No such column.
    #[error("column \"{0}\" does not exist")]
    NoSuchColumn(String),
    /// An index key column of a type with no equality or order (`json`).
    #[error("data type {ty} has no default operator class for access method \"{method}\"")]
    NoOperatorClass {
        /// The column's type.
        ty: String,
        /// `btree` (a range index) or `hash`.
        method: &'static str,
    },
    /// A definition that cannot be built (bad column list, too many indexes...).
    #[error("invalid definition: {0}")]
    InvalidDefinition(String),
    /// The index exists but cannot answer queries for this snapshot yet.
    #[error("index \"{0}\" is not ready for this transaction's snapshot")]
    IndexNotReady(String),
    /// A range scan was asked of an index that is not a range index.
    #[error("index \"{0}\" is not a range index and cannot serve a range scan")]
    NotRangeIndex(String),
    /// SELECT ... FOR UPDATE NOWAIT met a row another open transaction
    /// holds (55P03).
    #[error("could not obtain lock on row")]
    RowLocked,
    /// A row handle was used after the row was changed by the same transaction.
    #[error("row was already updated or deleted by this transaction")]
    RowAlreadyChanged,
    /// The transaction has already failed or ended; only abort is possible.
    #[error("current transaction is aborted, commands ignored until end of transaction block")]
    TransactionAborted,
    /// More transactions are open than the engine has slots for.
    #[error("too many concurrent transactions (limit {0})")]
    TooManyTransactions(usize),
    /// The table or index went away while the transaction used it.
    #[error("relation \"{0}\" was dropped by a concurrent transaction")]
    Dropped(String),
    /// The data directory could not be read or written, or holds bytes
    /// the engine did not write. A failed log write (disk full, I/O error)
    /// aborts the transactions whose records it carried; commits go on once
    /// a write succeeds again. After a failed log sync the database takes
    /// no more commits (reads go on) until it is restarted, and the
    /// transaction that met the failure is decided by recovery.
    #[error("{message}")]
    Storage {
        /// SQLSTATE: 53100 when the disk is full, 58030 for other I/O
        /// errors, XX001 for corruption, 54000 for a transaction too large
        /// to log, 57P01 once closed.
        code: &'static str,
        /// What failed, naming the file and offset where there is one.
        message: String,
    },
    /// A memory limit is reached (53200): the server's, or the table's own
    /// (`table`). Inserts and updates are refused until memory is freed;
    /// reads and deletes go on.
    #[error("out of memory: {}", oom_message(*limit, *used, table.as_deref()))]
    OutOfMemory {
        /// The limit, bytes.
        limit: usize,
        /// What was in use, bytes.
        used: usize,
        /// The table whose own limit it is (`None`: the server's).
        table: Option<String>,
    },
    /// A hash index's bucket array does not fit under the memory limit
    /// next to what is in use (53200).
    #[error("out of memory: the bucket array of hash index \"{index}\" takes {}, and with {} in use that passes the memory limit of {} (memory_limit); ask for fewer buckets", crate::memory::pretty_size(*bytes), crate::memory::pretty_size(*used), crate::memory::pretty_size(*limit))]
    BucketsTooLarge {
        /// The index.
        index: String,
        /// The array's bytes.
        bytes: usize,
        /// What was in use, bytes.
        used: usize,
        /// The limit, bytes.
        limit: usize,
    },
    /// A broken invariant inside the engine: a bug, reported rather than
    /// acted on.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<centum_storage::Error> for Error {
    fn from(e: centum_storage::Error) -> Error {
        Error::Storage { code: e.sqlstate(), message: e.to_string() }
    }
}

impl Error {
    /// Whether running the same transaction again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Serialization(_) | Error::Deadlock)
    }

    /// The PostgreSQL SQLSTATE code for this error.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            Error::Serialization(_) => "40001",
            Error::Deadlock => "40P01",
            Error::LockTimeout => "55P03",
            Error::Canceled(_) => "57014",
            // Internal to the server's scheduling: should it ever surface,
            // it reads as a lock not available.
            Error::WouldWait { .. } => "55P03",
            Error::UniqueViolation { .. } => "23505",
            Error::NotNullViolation { .. } => "23502",
            Error::Type(e) => e.sqlstate(),
            Error::ColumnCount { .. } => "42601",
            Error::KeyArity { .. } => "42601",
            Error::NoSuchTable(_) | Error::Dropped(_) => "42P01",
            Error::TableExists(_) | Error::IndexExists(_) => "42P07",
            Error::NoSuchIndex(_) | Error::NoOperatorClass { .. } => "42704",
            Error::NoSuchColumn(_) => "42703",
            Error::InvalidDefinition(_) => "42P16",
            Error::IndexNotReady(_) => "55000",
            Error::NotRangeIndex(_) => "0A000",
            Error::RowAlreadyChanged => "55000",
            Error::RowLocked => "55P03",
            Error::TransactionAborted => "25P02",
            Error::TooManyTransactions(_) => "53300",
            Error::Storage { code, .. } => code,
            Error::OutOfMemory { .. } | Error::BucketsTooLarge { .. } => "53200",
            Error::Internal(_) => "XX000",
        }
    }
}

/// The text of [`Error::OutOfMemory`].
fn oom_message(limit: usize, used: usize, table: Option<&str>) -> String {
    use crate::memory::pretty_size as show_size;
    match table {
        Some(t) => format!(
            "table \"{t}\" holds {}, which passes its memory limit of {} (memory_limit); rows cannot be added to it or changed until some are deleted or the limit is raised",
            show_size(used),
            show_size(limit)
        ),
        None => format!(
            "{} in use passes the server's memory limit of {} (memory_limit); rows cannot be added or changed until memory is freed",
            show_size(used),
            show_size(limit)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_errors_map_to_class_40() {
        for e in [Error::Serialization("concurrent update"), Error::Deadlock] {
            assert!(e.is_retryable());
            assert!(e.sqlstate().starts_with("40"));
        }
        let dup = Error::UniqueViolation { index: "pk".into(), table: "t".into() };
        assert!(!dup.is_retryable());
        assert_eq!(dup.sqlstate(), "23505");
    }
}
