//! A primary's side of replication: its commits go to a replicated log
//! instead of a log file of its own.
//!
//! ```text
//!  commit (Preparing) ── redo record ── Replicate::submit
//!      │   stamp() under the group's ordering lock: commit timestamps
//!      │   follow the replicated order (SERIALIZABLE validates there too,
//!      │   as of the timestamp it just took)
//!      ▼
//!  Logged(ts) ── the group appends the record, a majority syncs it ──
//!      Durable resolved: Ok ─▶ publish, acknowledge
//!                        Err ─▶ abort (25006: not taken; 08007: not known)
//! ```
//!
//! Everything else about a commit stays as it is with a local log: the
//! versions are held from Preparing to the outcome, a writer that meets
//! them takes a commit dependency, and the group's order makes a dependent
//! commit only if what it used did (a log's prefix commits before what
//! follows it). Members that are not the primary take the records through
//! [`crate::Database::apply_records`]; see `standby`.
//!
//! Commit timestamps must grow along the replicated log across changes of
//! primary. A new primary applies everything before it takes writes, then
//! raises its clock to a floor above anything an earlier primary may have
//! handed out ([`crate::Database::raise_clock`]; the group derives the
//! floor from its term).

use centum_storage::{Durable, Error, Record};

/// The replicated log a primary commits to.
pub trait Replicate: Send + Sync {
    /// Takes one transaction's record. The replicator calls `stamp` once,
    /// under the lock that orders records, and gives the record the
    /// timestamp it returns ([`Record::set_commit_ts`]); the returned
    /// [`Durable`] resolves once the group holds the record durably, or
    /// with the reason it never will or may not. An error here means the
    /// record was not taken (nothing to undo but the transaction); an
    /// error from `stamp` (a SERIALIZABLE transaction that failed its
    /// validation) is returned as it is, the record not taken.
    ///
    /// A `delayed` record's commit is acknowledged and published without
    /// waiting for the [`Durable`]. Should the group then lose it, this
    /// server holds a change the group does not: the replicator must not
    /// let it go on serving (the server restarts from the group's log).
    fn submit(
        &self,
        record: Record,
        delayed: bool,
        stamp: &mut dyn FnMut() -> Result<u64, Error>,
    ) -> Result<Durable, Error>;

    /// The highest commit timestamp among the records taken but then lost
    /// (0 if none): a transaction that used one of them must not commit.
    fn failed_upto(&self) -> u64;

    /// Whether this server takes writes now (it is the primary). A
    /// transaction that changed rows cannot commit otherwise, not even one
    /// that wrote only SCHEMA_ONLY tables and so logs nothing: a standby's
    /// clock belongs to the records it applies.
    fn accepts_writes(&self) -> bool;

    /// The group's log as the change feed reads it, where the group keeps
    /// one for it (logical decoding on the primary).
    fn feed(&self) -> Option<&dyn crate::feed::GroupFeed> {
        None
    }
}
