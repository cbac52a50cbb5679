//! Transactions: begin, commit, abort.
//!
//! A transaction reads at a snapshot timestamp and writes by installing new
//! versions whose begin field holds its id, and by taking the end field of
//! the versions it replaces or deletes (a compare-and-swap from INFINITY to
//! its id: that is the whole of write locking). Nothing is changed in
//! place; abort never has to undo a value.
//!
//! ## Commit
//!
//! ```text
//!  Active --(take commit timestamp ts)--> Preparing(ts)
//!     Preparing: SERIALIZABLE validates its read and scan sets as of ts;
//!                then the redo record is appended to the log
//!  Preparing --(record appended)--> Logged(ts)
//!     Logged: the record is written and synced (group commit); others may
//!             build on this transaction's versions meanwhile, with a
//!             commit dependency on it (early lock release, `write.rs`)
//!  Logged --(publish)--> Committed(ts)      the commit point
//!  post-process: write ts into the begin/end fields it owns, release the
//!                slot, queue replaced versions for garbage collection,
//!                wait until the watermark reaches ts, acknowledge.
//! ```
//!
//! Read-only transactions take no timestamp and skip validation: they are
//! serialised at their read timestamp, where all their reads were valid.
//!
//! ## Commit dependencies
//!
//! A transaction that used a Logged transaction's changes (see
//! `visibility.rs`) depends on it. Its own record is appended after the
//! other's, so it is durable only if the other is; the log refuses it, or
//! fails it in its buffer, when a write failed for a record it may depend
//! on. A dependent that logs nothing, or whose record is delayed (so
//! acknowledged at the append), first waits for the transactions it
//! depends on to finish and then checks the log's failures. Either way a
//! dependent never commits without the changes it used: it fails with
//! 40001 instead.
//!
//! ## Abort
//!
//! The transaction publishes Aborted, gives back the end fields it took
//! (so waiting writers may take them), marks its new versions' begin as
//! INFINITY (visible to nobody), and unlinks and reclaims them.
//!
//! A Logged transaction aborts only when the log's write of its record
//! fails, and by then a dependent may hold the end field of one of its
//! versions. Such a version is freed by whichever of the two lets go last:
//! each claims it by swapping its end field from INFINITY to RETIRED after
//! the creator has marked its begin INFINITY, and only one swap succeeds.

use super::txn_table::TxnState;
use super::visibility::{self, End};
use super::word::{TxnId, INFINITY, RETIRED};
use crate::chunked::Chunked;
use crate::db::Shared;
use crate::durable;
use crate::error::{Error, Result};
use crate::gc::GcItem;
use crate::index::btree::Direction;
use crate::index::Index;
use crate::row::layout::Probe;
use crate::row::sortkey::KeyBytes;
use crate::row::version::VersionPtr;
use crate::schema::Durability;
use crate::sync::Ordering::SeqCst;
use crate::table::Table;
use centum_storage::log::record::Record;
use centum_storage::Durability as LogDurability;
use smallvec::SmallVec;
use std::cell::{Cell, RefCell};
use std::sync::Arc;

/// Versions an abort unlinks itself; a bigger abort leaves them to the
/// collector.
const ABORT_INLINE: usize = 1024;

/// Isolation levels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Isolation {
    /// Each statement reads the data committed before it began; a writer
    /// that meets a row being changed waits for the other transaction and
    /// goes on with the newest version (PostgreSQL's default).
    #[default]
    ReadCommitted,
    /// One snapshot for the whole transaction; the second writer of a row
    /// fails (PostgreSQL's REPEATABLE READ).
    Snapshot,
    /// Snapshot plus commit-time validation that every row read is
    /// unchanged and no scanned range gained rows: the transaction behaves
    /// as if it ran alone at its commit time.
    Serializable,
}

/// What a transaction did to a version.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WriteKind {
    /// Created it.
    Insert(VersionPtr),
    /// Replaced `old` by `new`.
    Update(VersionPtr, VersionPtr),
    /// Deleted it.
    Delete(VersionPtr),
}

impl WriteKind {
    /// The version the write created, if any.
    #[inline]
    pub(crate) fn created(self) -> Option<VersionPtr> {
        match self {
            WriteKind::Insert(n) | WriteKind::Update(_, n) => Some(n),
            WriteKind::Delete(_) => None,
        }
    }
}

/// A point in a transaction to roll back to ([`Transaction::savepoint`]).
#[derive(Clone, Debug)]
pub struct Savepoint {
    writes: usize,
    schema_steps: usize,
    schema_drops: usize,
}

/// A scanned range to re-check at commit (SERIALIZABLE).
pub(crate) enum ScanRecord {
    /// The whole table.
    Table(u32),
    /// One key of a hash index.
    Key(u32, Arc<Index>, Probe),
    /// The keys in `[lo, hi)` of a range index (`None`: unbounded).
    Range(Arc<Index>, Option<KeyBytes>, Option<KeyBytes>),
}

#[derive(Default)]
pub(crate) struct TxnInner {
    /// Tables touched; writes and scans refer to them by position.
    pub(crate) tables: Vec<Arc<Table>>,
    pub(crate) writes: Chunked<(u32, WriteKind)>,
    pub(crate) reads: Vec<VersionPtr>,
    pub(crate) scans: Vec<ScanRecord>,
    /// At least the bytes the write set's redo record takes (writes to
    /// logged tables; a row changed twice counts twice), so that the
    /// record of a bulk load is built in one buffer instead of one that
    /// doubles and copies itself into fresh memory, page fault by page
    /// fault.
    pub(crate) redo_bytes: usize,
}

impl TxnInner {
    /// Adds `w` to the write set, counting its redo bytes.
    pub(crate) fn push_write(&mut self, table: &Arc<Table>, w: WriteKind) {
        if table.durability == Durability::SchemaAndData {
            self.redo_bytes += match w {
                WriteKind::Insert(n) => Record::insert_size(n.data().len()),
                WriteKind::Update(_, n) => Record::DELETE_SIZE + Record::insert_size(n.data().len()),
                WriteKind::Delete(_) => Record::DELETE_SIZE,
            };
        }
        let t = self.table_no(table);
        self.writes.push((t, w));
    }

    /// Position of `table` in `tables`, adding it if new.
    pub(crate) fn table_no(&mut self, table: &Arc<Table>) -> u32 {
        match self.tables.iter().position(|t| Arc::ptr_eq(t, table)) {
            Some(i) => i as u32,
            None => {
                self.tables.push(table.clone());
                (self.tables.len() - 1) as u32
            }
        }
    }
}

/// A transaction. Dropping it without committing aborts it.
///
/// Operations take `&self` so that rows returned by a scan can be updated
/// while the scan's results are still borrowed; a transaction is used by
/// one thread at a time (it is `Send`, not `Sync`).
pub struct Transaction {
    pub(crate) db: Arc<Shared>,
    pub(crate) id: TxnId,
    pub(crate) isolation: Isolation,
    pub(crate) read_ts: u64,
    /// Operation counter: versions this transaction creates are stamped
    /// with it, so a scan never sees rows written after it started.
    pub(crate) op: Cell<u32>,
    pub(crate) inner: RefCell<TxnInner>,
    /// Set by a retryable failure: only abort is possible now.
    pub(crate) doomed: Cell<Option<Error>>,
    /// The latest commit timestamp of a version this transaction moved
    /// past to write the row's newest one (READ COMMITTED): its next
    /// statement must read at or after it (see `begin_statement`).
    pub(crate) followed: Cell<u64>,
    /// The commit timestamp once taken: it must be finished on every path,
    /// or the watermark would stop.
    pub(crate) commit_ts: Option<u64>,
    /// The read timestamp at begin: every transaction this one can depend
    /// on was stamped after it.
    first_read_ts: u64,
    pub(crate) finished: bool,
    /// When the commit returns: after the log sync, or before it.
    durability: LogDurability,
    /// What ends a wait for another transaction.
    pub(crate) waits: RefCell<WaitLimits>,
    /// What a write does on meeting a row another open transaction holds
    /// (set only for the length of [`Transaction::lock_row`]).
    pub(crate) on_held: Cell<OnHeld>,
}

/// What locking a row does when another open transaction holds it:
/// PostgreSQL's `FOR UPDATE`, `FOR UPDATE NOWAIT` and `FOR UPDATE SKIP
/// LOCKED`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnHeld {
    /// Wait for the holder to end (within the wait limits).
    #[default]
    Wait,
    /// Fail at once with [`Error::RowLocked`] (55P03).
    Fail,
    /// Leave the row out.
    Skip,
}

/// What ends a wait of a transaction for another one (a row or unique key
/// the other holds), besides the other finishing or a deadlock: see
/// [`Transaction::set_wait_limits`].
#[derive(Clone, Debug, Default)]
pub struct WaitLimits {
    /// The longest one wait may last (`lock_timeout`): then 55P03.
    pub lock_timeout: Option<std::time::Duration>,
    /// When the statement must stop (`statement_timeout`): then 57014.
    pub deadline: Option<std::time::Instant>,
    /// Set by a cancel request: then 57014.
    pub cancel: Option<Arc<std::sync::atomic::AtomicBool>>,
    /// Instead of sleeping, a wait for a row or key fails at once with
    /// [`Error::WouldWait`] (after a brief spin): for a caller that serves
    /// many sessions on one thread, rolls the statement back to where it
    /// began, awaits a [`crate::RowWait`] and runs it again.
    pub defer: bool,
}

impl Transaction {
    pub(crate) fn begin(db: Arc<Shared>, isolation: Isolation) -> Result<Transaction> {
        let id = db
            .txns
            .register(db.clock.watermark(), isolation)
            .ok_or(Error::TooManyTransactions(db.txns.capacity()))?;
        let read_ts = db.gc.start_reader(&db.clock, |w| db.txns.set_read_ts(id, w));
        Ok(Transaction {
            db,
            id,
            isolation,
            read_ts,
            op: Cell::new(1),
            inner: RefCell::new(TxnInner::default()),
            doomed: Cell::new(None),
            followed: Cell::new(0),
            commit_ts: None,
            first_read_ts: read_ts,
            finished: false,
            durability: LogDurability::Default,
            waits: RefCell::new(WaitLimits::default()),
            on_held: Cell::new(OnHeld::Wait),
        })
    }

    /// Whether waits for rows and keys are deferred (see
    /// [`WaitLimits::defer`]), keeping the other limits.
    pub fn set_defer_waits(&self, defer: bool) {
        self.waits.borrow_mut().defer = defer;
    }

    /// Bounds this transaction's waits for others (set per statement): a
    /// wait ends with [`Error::LockTimeout`] after `lock_timeout`, and
    /// with [`Error::Canceled`] at the deadline or on cancel. Waits poll
    /// these every few milliseconds.
    pub fn set_wait_limits(&self, limits: WaitLimits) {
        *self.waits.borrow_mut() = limits;
    }

    /// Chooses this transaction's durability: `true` makes its commit
    /// return once the redo record is appended, before it is on disk (the
    /// log's flusher syncs it within its flush interval; a crash in that
    /// window loses it, and only it and later commits); `false` waits for
    /// the sync whatever the database's default is.
    pub fn set_delayed_durability(&mut self, delayed: bool) {
        self.durability = if delayed { LogDurability::Delayed } else { LogDurability::Sync };
    }

    /// The transaction's id.
    pub fn id(&self) -> TxnId {
        self.id
    }

    /// The isolation level.
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// The snapshot timestamp reads use now.
    pub fn read_timestamp(&self) -> u64 {
        self.read_ts
    }

    /// Starts a new statement. Under READ COMMITTED the transaction now sees
    /// everything committed so far; under the other levels nothing changes.
    /// Rows returned before cannot outlive this call (the borrow checker
    /// enforces it).
    pub fn begin_statement(&mut self) {
        {
            // Published for `centum.transactions` once per statement, not
            // per row.
            let inner = self.inner.borrow();
            let (reads, writes) = (inner.reads.len() + inner.scans.len(), inner.writes.len());
            if reads | writes != 0 {
                self.db.txns.publish_sizes(self.id, reads, writes);
            }
        }
        if self.isolation == Isolation::ReadCommitted {
            // A row this transaction already wrote on top of a commit newer
            // than the watermark (or a logged one): a snapshot older than
            // that commit would see the row's replaced version beside this
            // transaction's own, so read at or after it (see
            // `visibility.rs` on snapshots above the watermark).
            let w = self.db.clock.watermark().max(self.followed.get());
            self.db.txns.set_read_ts(self.id, w);
            self.read_ts = w;
        }
    }

    /// Moves the snapshot of a transaction that has read nothing yet
    /// forward to `ts`, which the watermark has reached (the collector
    /// keeps what it needs: it never passes a running transaction's
    /// earlier snapshot).
    pub(crate) fn raise_snapshot(&mut self, ts: u64) {
        if ts > self.read_ts {
            self.db.txns.set_read_ts(self.id, ts);
            self.read_ts = ts;
            self.first_read_ts = ts;
        }
    }

    /// Whether the transaction has written anything.
    pub fn has_writes(&self) -> bool {
        !self.inner.borrow().writes.is_empty()
    }

    /// Fails if a retryable error already doomed the transaction.
    pub(crate) fn check_usable(&self) -> Result<()> {
        match self.doomed.take() {
            Some(e) => {
                self.doomed.set(Some(e));
                Err(Error::TransactionAborted)
            }
            None => Ok(()),
        }
    }

    /// Records a retryable failure: the transaction can only abort now.
    pub(crate) fn doom(&self, e: Error) -> Error {
        if e.is_retryable() {
            self.doomed.set(Some(e.clone()));
        }
        e
    }

    /// The next operation number.
    pub(crate) fn next_op(&self) -> u32 {
        let op = self.op.get();
        self.op.set(op.wrapping_add(1));
        op
    }

    /// Commits. On success every change is visible to transactions that
    /// start afterwards. On failure the transaction is aborted and the
    /// error says why (retryable for serialization failures).
    pub fn commit(self) -> Result<()> {
        self.commit_inner(false)?.finish()
    }

    /// Commits up to the wait for the redo record to be durable, and
    /// returns what is left: a [`Committing`] whose [`Committing::durable`]
    /// a caller that serves many sessions on one thread awaits, then
    /// [`Committing::finish`] publishes the commit (or reports its
    /// failure). Meanwhile the transaction is logged but not committed:
    /// others that meet its rows take a commit dependency on it, as during
    /// any commit's fsync. A transaction that changed the schema, or whose
    /// record is delayed or absent, is committed by the time this returns.
    pub fn commit_deferred(self) -> Result<Committing> {
        self.commit_inner(true)
    }

    fn commit_inner(mut self, defer: bool) -> Result<Committing> {
        // Until the commit point `finished` stays false, so that a panic on
        // the way aborts the transaction (and finishes its timestamp) in
        // `Drop`; after it, nothing may abort it.
        if let Some(e) = self.doomed.take() {
            self.finished = true;
            self.abort_inner();
            return Err(match e {
                Error::Serialization(_) | Error::Deadlock => Error::TransactionAborted,
                e => e,
            });
        }
        // A transaction that changed the schema holds the DDL lock from
        // here to the end of its commit: its record carries the catalog
        // image, and no other image may be logged in between.
        let claimed = self.db.holds_claim(self.id);
        let db = claimed.then(|| self.db.clone());
        let mut ddl = db.as_ref().map(|db| db.claim_lock());
        if self.inner.get_mut().writes.is_empty() && (!claimed || !self.db.logs()) {
            self.finished = true;
            if let Some(state) = ddl.as_mut() {
                self.db.release_committed(state);
            }
            self.db.txns.set_state(self.id, TxnState::Committed(self.read_ts));
            self.db.txns.release(self.id);
            return Ok(Committing::done());
        }
        let refused = match &self.db.replicate {
            Some(group) if !group.accepts_writes() => Err(Error::Storage {
                code: "25006",
                message: "cannot commit a transaction that wrote on a standby: writes go to the primary"
                    .into(),
            }),
            _ => self.db.check_log(),
        };
        if let Err(e) = refused {
            drop(ddl);
            self.finished = true;
            self.abort_inner();
            return Err(e);
        }
        // SERIALIZABLE validates as of its commit timestamp, so it takes
        // one first. Otherwise the timestamp is taken as late as possible:
        // by the log, as it appends the record (see `stamp`). In a
        // replicated group a SERIALIZABLE commit with a record takes its
        // timestamp and validates as its record is taken, under the
        // group's ordering lock: records then reach the group's log in
        // timestamp order, the order standbys apply them in (see
        // `durable::replicate`).
        let serializable = self.isolation == Isolation::Serializable;
        let in_group = self.db.replicate.is_some();
        if serializable && !in_group {
            if let Err(e) = self.stamp_validated() {
                drop(ddl);
                self.finished = true;
                self.abort_inner();
                return Err(e);
            }
        }
        // The redo record is durable (or, delayed, appended) before the
        // commit point: no one can see these versions before that, and a
        // transaction that depends on this one logs after it.
        let depends = self.db.txns.dependency(self.id);
        let mut logged_record = false;
        if self.db.logs() {
            let image = ddl.as_ref().and_then(|state| state.claim.as_ref()).map(|_| self.db.claim_image());
            // A schema change is durable before it is acknowledged, as
            // every schema change outside a transaction is.
            let durability = if image.is_some() { LogDurability::Sync } else { self.durability };
            if depends != 0 && self.db.delays(durability) {
                // Acknowledged once appended: only after what it depends on.
                self.db.clock.wait_visible(depends);
            }
            let after = (depends != 0).then_some(self.first_read_ts);
            let record = self.db.admit_record(self.inner.get_mut().redo_bytes).and_then(|()| {
                durable::redo_record(
                    self.inner.get_mut(),
                    &self.db.txns,
                    self.id,
                    self.commit_ts.unwrap_or(0),
                    image.as_deref(),
                    self.db.logical,
                    &|created| self.db.canonical_ts(created),
                )
            });
            // A schema change's record is waited for here: the DDL lock is
            // held until its commit is published.
            let defer = defer && ddl.is_none();
            let logged = match record {
                Err(e) => Err(e),
                Ok(None) if serializable && in_group => self.stamp_validated().map(|_| None),
                Ok(None) => Ok(None),
                Ok(Some(rec)) => {
                    logged_record = true;
                    let (db, id) = (&self.db, self.id);
                    let mut stamped = self.commit_ts;
                    let r = match &db.replicate {
                        Some(group) => db.replicate(group.as_ref(), rec, durability, defer, &mut || {
                            let t = *stamped.get_or_insert_with(|| stamp(db, id));
                            if serializable {
                                self.validate(t)?;
                            }
                            db.txns.set_state(id, TxnState::Logged(t));
                            Ok(t)
                        }),
                        None => db.log(rec, durability, after, defer, &mut || {
                            let t = *stamped.get_or_insert_with(|| stamp(db, id));
                            db.txns.set_state(id, TxnState::Logged(t));
                            t
                        }),
                    };
                    self.commit_ts = stamped;
                    r
                }
            };
            match logged {
                Err(e) => {
                    drop(ddl);
                    self.finished = true;
                    self.abort_inner();
                    return Err(e);
                }
                Ok(Some(durable)) => {
                    return Ok(Committing { txn: Some(self), durable: Some(durable) });
                }
                Ok(None) => {}
            }
        }
        let ts = self.publish(depends, logged_record, ddl)?;
        self.db.clock.wait_visible(ts);
        Ok(Committing::done())
    }

    /// The commit point and after: every version is stamped with the
    /// commit timestamp (taken now unless the log or validation took it),
    /// old ones go to the collector. `ddl` is the schema lock of a
    /// transaction that changed the schema. Returns the commit timestamp,
    /// which new snapshots include once the watermark has reached it.
    fn publish(
        &mut self,
        depends: u64,
        logged_record: bool,
        ddl: Option<std::sync::MutexGuard<'_, crate::ddl::DdlState>>,
    ) -> Result<u64> {
        if depends != 0 && !logged_record {
            if let Err(e) = self.check_dependencies(depends) {
                drop(ddl);
                self.finished = true;
                self.abort_inner();
                return Err(e);
            }
        }
        let ts = match self.commit_ts {
            Some(ts) => ts,
            None => stamp(&self.db, self.id),
        };
        // From the commit point on, the versions are stamped one by one.
        let _c = crate::critical::Critical::enter("publishing a commit");
        self.db.txns.set_state(self.id, TxnState::Committed(ts));
        self.finished = true;
        self.commit_ts = None;
        self.db.clock.finish(ts);
        let inner = std::mem::take(self.inner.get_mut());
        let mut garbage = Chunked::default();
        // Rows inserted, updated and deleted, by table.
        let mut counts: SmallVec<[[u64; 3]; 4]> = smallvec::smallvec![[0; 3]; inner.tables.len()];
        for &(t, w) in inner.writes.iter() {
            match w {
                WriteKind::Insert(n) => {
                    n.begin().store(ts, SeqCst);
                    counts[t as usize][0] += 1;
                }
                WriteKind::Update(o, n) => {
                    n.begin().store(ts, SeqCst);
                    o.end().store(ts, SeqCst);
                    garbage.push((t, o));
                    counts[t as usize][1] += 1;
                }
                WriteKind::Delete(o) => {
                    o.end().store(ts, SeqCst);
                    garbage.push((t, o));
                    counts[t as usize][2] += 1;
                }
            }
        }
        for (table, &[ins, upd, del]) in inner.tables.iter().zip(&counts) {
            table.count_writes(ins, upd, del);
        }
        self.db.txns.release(self.id);
        if let Some(mut state) = ddl {
            self.db.release_committed(&mut state);
        }
        if !garbage.is_empty() {
            let item = GcItem { ts, tables: inner.tables, versions: garbage, undone: Chunked::default() };
            let help = self.db.gc.push(item);
            self.db.gc.help(&self.db.clock, &self.db.txns, help);
        }
        Ok(ts)
    }

    /// For a dependent whose record did not go through the log's check:
    /// waits until every transaction it depends on has finished, then fails
    /// if the log lost any of them.
    fn check_dependencies(&self, depends: u64) -> Result<()> {
        if !self.db.logs() {
            return Ok(());
        }
        self.db.clock.wait_visible(depends);
        let failed = self.db.storage.as_ref().is_some_and(|s| s.is_failed());
        if self.db.failed_upto() > self.first_read_ts || failed {
            return Err(Error::Serialization(crate::db::DEPENDENCY_FAILED));
        }
        Ok(())
    }

    /// A savepoint: [`Transaction::rollback_to`] takes back everything the
    /// transaction does after it.
    pub fn savepoint(&self) -> Savepoint {
        let (steps, drops) = self.db.claim_mark(self.id);
        Savepoint { writes: self.inner.borrow().writes.len(), schema_steps: steps, schema_drops: drops }
    }

    /// Takes back every write (and schema change, see [`crate::ddl`]) made
    /// since `sp`, as an abort does, and leaves the rest of the
    /// transaction as it was: its earlier writes stay, and so do the rows
    /// they hold. New versions made since are unlinked and freed; versions
    /// replaced or deleted since are current again. A retryable failure
    /// since `sp` (a deadlock, a write conflict) no longer dooms the
    /// transaction.
    pub fn rollback_to(&self, sp: &Savepoint) {
        let later = self.inner.borrow_mut().writes.split_off(sp.writes);
        if self.db.holds_claim(self.id) {
            let mut state = self.db.claim_lock();
            self.db.undo_since(&mut state, sp.schema_steps, sp.schema_drops);
        }
        self.doomed.take();
        if later.is_empty() {
            return;
        }
        let _c = crate::critical::Critical::enter("undoing writes after a savepoint");
        let me = self.id.raw();
        let tables = self.inner.borrow().tables.clone();
        let guard = crossbeam_epoch::pin();
        let orphans = self.built_on_others(&later);
        // Newest first: a version made and then replaced after the
        // savepoint is current again only for a moment, invisible to all.
        for &(_, w) in later.iter().rev() {
            if let WriteKind::Update(o, _) = w {
                o.set_newer(None);
            }
            match w {
                WriteKind::Update(o, _) | WriteKind::Delete(o) => {
                    let _ = o.end().compare_exchange(me, INFINITY, SeqCst, SeqCst);
                }
                WriteKind::Insert(_) => {}
            }
            if let Some(n) = w.created() {
                n.begin().store(INFINITY, SeqCst);
            }
        }
        free_orphans(&guard, &tables, orphans);
        // The read set may name versions made since (SERIALIZABLE records
        // what it read, its own writes too): they are about to be freed.
        if !self.inner.borrow().reads.is_empty() {
            let freed: std::collections::HashSet<VersionPtr> =
                later.iter().filter_map(|&(_, w)| w.created()).collect();
            self.inner.borrow_mut().reads.retain(|v| !freed.contains(v));
        }
        for &(t, w) in &later {
            if let Some(n) = w.created() {
                tables[t as usize].retire(&guard, n);
            }
        }
    }

    /// The versions among `writes`' replaced and deleted ones that another
    /// transaction made, with their tables: those a logged transaction
    /// made may be left to this one to free (see the module docs).
    fn built_on_others<'a>(
        &self,
        writes: impl IntoIterator<Item = &'a (u32, WriteKind)>,
    ) -> Vec<(u32, VersionPtr)> {
        if self.db.txns.dependency(self.id) == 0 {
            return Vec::new();
        }
        let me = self.id.raw();
        writes
            .into_iter()
            .filter_map(|&(t, w)| match w {
                WriteKind::Update(o, _) | WriteKind::Delete(o) => Some((t, o)),
                WriteKind::Insert(_) => None,
            })
            .filter(|(_, o)| o.begin().load(SeqCst) != me)
            .collect()
    }

    /// Aborts, discarding every change.
    pub fn abort(mut self) {
        self.finished = true;
        self.abort_inner();
    }

    fn abort_inner(&mut self) {
        let db = self.db.holds_claim(self.id).then(|| self.db.clone());
        let mut ddl = db.as_ref().map(|db| db.claim_lock());
        let _c = crate::critical::Critical::enter("undoing an aborted transaction's writes");
        let inner = std::mem::take(self.inner.get_mut());
        let guard = crossbeam_epoch::pin();
        let orphans = self.built_on_others(inner.writes.iter());
        // Clear replacement links first: once Aborted is published another
        // writer may take the old version and set its own.
        for &(_, w) in inner.writes.iter() {
            if let WriteKind::Update(o, _) = w {
                o.set_newer(None);
            }
        }
        self.db.txns.set_state(self.id, TxnState::Aborted);
        // A stamped transaction may have been logged: others may hold the
        // end fields of its versions.
        let logged = self.commit_ts.is_some();
        if let Some(ts) = self.commit_ts.take() {
            self.db.clock.finish(ts);
        }
        let mut created = 0;
        for &(_, w) in inner.writes.iter() {
            match w {
                WriteKind::Update(o, _) | WriteKind::Delete(o) => {
                    let _ = o.end().compare_exchange(self.id.raw(), INFINITY, SeqCst, SeqCst);
                }
                WriteKind::Insert(_) => {}
            }
            if let Some(n) = w.created() {
                n.begin().store(INFINITY, SeqCst);
                created += 1;
            }
        }
        free_orphans(&guard, &inner.tables, orphans);
        // Its schema changes are taken back before its slot is free: a
        // schema change waiting for it finds the catalog as it was.
        if let Some(state) = ddl.as_mut() {
            self.db.release_aborted(state);
        }
        drop(ddl);
        self.db.txns.release(self.id);
        // A big transaction's versions (a bulk load cut short by a timeout
        // or an error) go to the collector, so the client hears of the
        // abort at once: they are invisible already.
        if created > ABORT_INLINE && !logged {
            let undone = inner.writes;
            self.db.gc.push(GcItem { ts: 0, tables: inner.tables, versions: Chunked::default(), undone });
            return;
        }
        for &(t, w) in inner.writes.iter() {
            if let Some(n) = w.created() {
                // A dependent holding its end field frees it instead.
                if !logged || claim_orphan(n) {
                    inner.tables[t as usize].retire(&guard, n);
                }
            }
        }
    }

    /// Takes the commit timestamp and validates as of it (SERIALIZABLE).
    /// On an error the caller aborts, which finishes the timestamp.
    fn stamp_validated(&mut self) -> Result<u64> {
        let t = stamp(&self.db, self.id);
        self.commit_ts = Some(t);
        self.validate(t)?;
        Ok(t)
    }

    /// SERIALIZABLE validation at commit timestamp `ts`: every version read
    /// must still be current, and no scanned key, key range or table may
    /// have gained a version committed between the read timestamp and `ts`
    /// (a row that left a scanned range was read, so the first check
    /// catches it).
    fn validate(&self, ts: u64) -> Result<()> {
        let inner = self.inner.borrow();
        let txns = &self.db.txns;
        for &v in &inner.reads {
            let mine = visibility::end(txns, v, self.id) == End::Mine;
            if !mine && !visibility::visible(txns, v, self.id, ts, u32::MAX) {
                return Err(Error::Serialization("read/write dependencies among transactions"));
            }
        }
        let _pin = crossbeam_epoch::pin();
        let phantom = |v: VersionPtr| {
            visibility::begin(txns, v, self.id) != visibility::Begin::Mine
                && visibility::visible(txns, v, self.id, ts, u32::MAX)
                && !visibility::visible(txns, v, self.id, self.read_ts, u32::MAX)
        };
        for s in &inner.scans {
            let found = match s {
                ScanRecord::Table(t) => {
                    let table = &inner.tables[*t as usize];
                    table.scan.buckets_in_use().any(|b| {
                        let mut cur = table.scan.first(b);
                        while let Some(v) = cur {
                            if table.scan.is_live(v) && phantom(v) {
                                return true;
                            }
                            cur = table.scan.next(v);
                        }
                        false
                    })
                }
                ScanRecord::Key(t, ix, probe) => {
                    let table = &inner.tables[*t as usize];
                    let Some(ix) = ix.as_hash() else { continue };
                    let (walk, mut cur) = ix.first(probe);
                    let mut hit = false;
                    while let Some(v) = cur {
                        if ix.chains.is_live(v)
                            && ix.key.matches(&table.layout, v.data(), probe)
                            && phantom(v)
                        {
                            hit = true;
                            break;
                        }
                        cur = ix.chains.next(&walk, v);
                    }
                    hit
                }
                ScanRecord::Range(ix, lo, hi) => {
                    let Some(r) = ix.as_range() else { continue };
                    let mut hit = false;
                    r.for_each(lo.as_deref(), hi.as_deref(), Direction::Forward, |v| {
                        hit = phantom(v);
                        !hit
                    });
                    hit
                }
            };
            if found {
                return Err(Error::Serialization("a phantom row inserted by a concurrent transaction"));
            }
        }
        Ok(())
    }
}

/// Claims version `v`, whose creator aborted, for freeing: true for the
/// one caller whose swap of its end field from INFINITY to RETIRED
/// succeeds (see the module docs).
fn claim_orphan(v: VersionPtr) -> bool {
    v.begin().load(SeqCst) == INFINITY && v.end().compare_exchange(INFINITY, RETIRED, SeqCst, SeqCst).is_ok()
}

/// Frees the versions among `candidates` (replaced or deleted by a
/// transaction that has just given back their end fields) whose creator
/// aborted and left them to it.
fn free_orphans(guard: &crossbeam_epoch::Guard, tables: &[Arc<Table>], candidates: Vec<(u32, VersionPtr)>) {
    for (t, v) in candidates {
        if claim_orphan(v) {
            tables[t as usize].retire(guard, v);
        }
    }
}

/// Takes a commit timestamp for transaction `id` and publishes it as
/// Preparing. Between taking the timestamp and publishing it, the state
/// reads Preparing(0): a SERIALIZABLE validator that meets one of this
/// transaction's versions then waits (0 is below every commit timestamp),
/// instead of taking Active to mean "will commit after me" while this
/// transaction already holds an earlier timestamp.
fn stamp(db: &Shared, id: TxnId) -> u64 {
    db.txns.set_state(id, TxnState::Preparing(0));
    let ts = db.clock.allocate();
    db.txns.set_state(id, TxnState::Preparing(ts));
    ts
}

/// A commit whose redo record is appended but maybe not yet durable (see
/// [`Transaction::commit_deferred`]). Dropping it finishes it: the record
/// is in the log and will be replayed at recovery, so the commit can only
/// go on, never be abandoned.
#[must_use = "a deferred commit is published by finish()"]
pub struct Committing {
    txn: Option<Transaction>,
    durable: Option<centum_storage::Durable>,
}

impl Committing {
    fn done() -> Committing {
        Committing { txn: None, durable: None }
    }

    /// The durability of the record, to await before [`Committing::finish`]
    /// (then it does not block); `None` when there is nothing to wait for.
    pub fn durable(&mut self) -> Option<&mut centum_storage::Durable> {
        self.durable.as_mut()
    }

    /// Waits for the record to be durable (if it is not yet) and publishes
    /// the commit; on a failed write or sync the transaction is aborted
    /// and the error says why, as [`Transaction::commit`] would have.
    pub fn finish(mut self) -> Result<()> {
        if let Some(v) = self.finish_inner()? {
            v.wait();
        }
        Ok(())
    }

    /// Like [`Committing::finish`], but returns before snapshots that
    /// start from now on are sure to see the commit: the transactions
    /// stamped before it may still be publishing theirs (on a server, in
    /// sessions waiting for a worker). The caller makes sure of it with
    /// [`Visible`] before it acknowledges the commit.
    pub fn publish(mut self) -> Result<Option<Visible>> {
        self.finish_inner()
    }

    fn finish_inner(&mut self) -> Result<Option<Visible>> {
        let Some(mut txn) = self.txn.take() else { return Ok(None) };
        let outcome = match self.durable.take() {
            Some(d) if d.is_resolved() => d.wait().map_err(|e| txn.db.log_error(e)),
            Some(d) => crate::blocking::section(|| d.wait()).map_err(|e| txn.db.log_error(e)),
            None => Ok(()),
        };
        match outcome {
            Ok(()) => {
                let depends = txn.db.txns.dependency(txn.id);
                let ts = txn.publish(depends, true, None)?;
                Ok(Some(Visible { db: txn.db.clone(), ts }))
            }
            Err(e) => {
                txn.finished = true;
                txn.abort_inner();
                Err(e)
            }
        }
    }
}

/// A published commit that new snapshots will include once the watermark
/// reaches its timestamp (see [`Committing::publish`]).
pub struct Visible {
    db: Arc<Shared>,
    ts: u64,
}

/// Resolves once snapshots taken from then on include the commit.
impl std::future::Future for Visible {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.db.clock.poll_visible(self.ts, cx.waker()) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    }
}

impl Visible {
    /// Waits until snapshots taken from then on include the commit.
    pub fn wait(&self) {
        self.db.clock.wait_visible(self.ts);
    }
}

impl Drop for Committing {
    fn drop(&mut self) {
        if let Err(e) = self.finish_inner() {
            tracing::warn!(error = %e, "a commit nobody waited for failed");
        }
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if !self.finished {
            self.finished = true;
            self.abort_inner();
        }
    }
}
