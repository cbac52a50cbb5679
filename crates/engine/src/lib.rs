//! Centum's storage engine: memory-optimized tables with optimistic
//! multi-version concurrency control.
//!
//! Rows live in memory as *versions* ([`row`]): a begin and an end field, one
//! link per index, then the column data. There are no pages and no buffer
//! pool. Hash indexes ([`index`]) chain versions through those links
//! without latches; range indexes keep an entry per version in a B+tree
//! that readers traverse without latches. Transactions ([`mvcc`]) read a snapshot without taking any lock,
//! and write by installing new versions; conflicts are found with
//! compare-and-swap on end fields, and SERIALIZABLE transactions validate
//! their reads at commit. Old versions are unlinked and reclaimed by the
//! garbage collector ([`gc`]).
//!
//! ```text
//!   Database ── catalog ── Table ── scan list (link 0) ──────┐
//!      │                     ├──── hash indexes (links 1..) ─┤
//!      │                     └──── range indexes (B+tree) ───┤
//!      │                                                  versions
//!   Transaction ── snapshot read ts, write set, read/scan sets
//! ```
//!
//! This crate knows nothing of SQL or the network; the SQL layer and the
//! server sit on top of the embedded API re-exported here. See
//! `docs/design.md` in the repository for the layouts, protocols and the
//! argument for why they are safe.

pub mod blocking;
mod chunked;
mod counter;
mod critical;
pub mod db;
pub mod ddl;
mod durable;
pub mod error;
pub mod feed;
pub mod gc;
pub mod index;
#[cfg(all(test, loom))]
mod loom_tests;
pub mod memory;
pub mod mvcc;
pub mod row;
pub mod schema;
mod sync;
pub mod table;

pub use centum_storage as storage;
pub use centum_storage::Durable;
pub use db::{Database, DatabaseStats, Options};
pub use ddl::{act_for, ddl_scope, ddl_txn};
pub use durable::replicate::Replicate;
pub use durable::standby::{Applied, Late};
pub use error::{Error, Result};
pub use feed::{Change, ChangeFeed, ChangeKind, ChangeTxn, FeedSource, GroupFeed};
pub use gc::GcStats;
pub use index::chain::prefetch;
pub use index::{Direction, HashIndex, Index, IndexStats, IndexUsage, RangeIndex};
pub use mvcc::{
    Committing, FilteredScan, Isolation, OnHeld, RangeScan, Row, RowWait, Savepoint, Scan, Scanned,
    Transaction, TxnCounts, TxnId, TxnInfo, Visible, WaitLimits,
};
pub use row::{KeyDef, KeyRange, RowLayout, SortKeyDef};
pub use schema::{Column, Durability, IndexDef, IndexKind, TableDef};
pub use table::{Table, TableStats, TableUsage};
