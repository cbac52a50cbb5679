//! Multi-version concurrency control.
//!
//! - `word`: begin/end fields that hold a timestamp or a transaction id;
//! - `clock`: commit timestamps and the watermark snapshots read at;
//! - `txn_table`: transaction ids to states, waits and deadlocks;
//! - `visibility`: which version a transaction sees;
//! - `transaction`: begin, commit, abort and validation;
//! - `read` and `write`: the operations.

pub(crate) mod clock;
pub(crate) mod filtered;
pub(crate) mod read;
pub(crate) mod row_wait;
pub(crate) mod transaction;
pub(crate) mod txn_table;
pub(crate) mod visibility;
pub(crate) mod word;
pub(crate) mod write;

pub use filtered::{FilteredScan, Scanned};
pub use read::{RangeScan, Row, Scan};
pub use row_wait::RowWait;
pub use transaction::{Committing, Isolation, OnHeld, Savepoint, Transaction, Visible, WaitLimits};
pub use txn_table::{ddl_waits, TxnCounts, TxnInfo};
pub use word::TxnId;
