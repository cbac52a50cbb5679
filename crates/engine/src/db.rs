//! The database: catalog, background collector, and the embedded API's
//! entry point.
//!
//! ```
//! use centum_engine::{Database, IndexDef, Isolation, TableDef};
//! use centum_types::{DataType, Value};
//!
//! let db = Database::open(Default::default())?;
//! let accounts = db.create_table(
//!     TableDef::new("accounts")
//!         .column_not_null("id", DataType::BigInt)
//!         .column_not_null("balance", DataType::BigInt)
//!         .index(IndexDef::hash("accounts_pkey", &["id"], 1024).unique()),
//! )?;
//! db.run(Isolation::Snapshot, 10, |txn| {
//!     txn.insert(&accounts, vec![Value::BigInt(1), Value::BigInt(100)])
//! })?;
//! let balance = db.run(Isolation::Snapshot, 10, |txn| {
//!     let row = txn.get(&accounts, "accounts_pkey", &[Value::BigInt(1)])?;
//!     Ok(row.and_then(|r| r.int(1)))
//! })?;
//! assert_eq!(balance, Some(100));
//! # Ok::<(), centum_engine::Error>(())
//! ```

use crate::ddl::{DdlState, Undo};
use crate::durable;
use crate::durable::catalog::TableImage;
use crate::error::{Error, Result};
use crate::gc::{Gc, GcStats};
use crate::index::hash::HashIndex;
use crate::index::range::RangeIndex;
use crate::index::Index;
use crate::mvcc::clock::Clock;
use crate::mvcc::transaction::{Isolation, Transaction};
use crate::mvcc::txn_table::TxnTable;
use crate::mvcc::word::INFINITY;
use crate::row::layout::KeyDef;
use crate::row::sortkey::SortKeyDef;
use crate::schema::{Column, IndexDef, IndexKind, TableDef};
use crate::table::{IndexSet, Table, TableStats};
use arc_swap::ArcSwap;
use centum_storage::{
    CheckpointReport, CheckpointStats, Durability as LogDurability, FileInfo, Fs, LoadStats, LogStats,
    Options as StorageOptions, Record, StdFs, Storage,
};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Most indexes on one table.
pub const MAX_INDEXES: usize = 64;

/// Rows a table indexed only by range indexes is assumed to reach when its
/// scan list is sized.
const RANGE_TABLE_ROWS: u64 = 1 << 20;

/// Rows a table created without any index is assumed to reach. Such a
/// table is often loaded first and indexed afterwards (pgbench, restores
/// of a dump): its scan list cannot grow later, and every version the
/// collector unlinks walks its chain, so it must not be small. 2^16
/// chains cost 512 KiB of heads and a scan of the empty table walks them
/// in well under a millisecond.
const UNINDEXED_TABLE_ROWS: u64 = 1 << 18;

/// How a database is opened.
#[derive(Clone)]
pub struct Options {
    /// Most transactions open at once (at most 65,536).
    pub max_transactions: usize,
    /// How often the background collector runs; `None` for no background
    /// thread (collection then happens only inline and on request).
    pub gc_interval: Option<Duration>,
    /// The directory that keeps SCHEMA_AND_DATA tables across restarts:
    /// created if missing, recovered if it holds a database. `None` keeps
    /// everything in memory only; nothing survives the process.
    pub data_dir: Option<PathBuf>,
    /// Log, checkpoint and recovery settings of the data directory
    /// (delayed durability for every commit is `storage.log.delayed`).
    pub storage: StorageOptions,
    /// The file system the data directory is on: the operating system's,
    /// or a simulated one that tests crash and break.
    pub fs: Arc<dyn Fs>,
    /// Memory past which inserts and updates fail with 53200 (see
    /// [`crate::memory`]); `None` for no limit.
    pub memory_limit: Option<usize>,
    /// Log what logical decoding needs (PostgreSQL's `wal_level =
    /// logical`): the image of every deleted or replaced version, so a
    /// change feed can say which row a delete or an update ended.
    pub logical: bool,
    /// Where commits go when the database is one member of a replicated
    /// group (see [`crate::Replicate`]): each transaction's redo record,
    /// schema changes included, acknowledged once the group holds it, or
    /// with delayed durability (`storage.log.delayed` for every commit,
    /// or the transaction's own) once the group has taken it. Such a
    /// database has no data directory of its own.
    pub replicate: Option<Arc<dyn crate::Replicate>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_transactions: 4096,
            gc_interval: Some(Duration::from_millis(2)),
            data_dir: None,
            storage: StorageOptions::default(),
            fs: Arc::new(StdFs),
            memory_limit: None,
            logical: false,
            replicate: None,
        }
    }
}

impl Options {
    /// Defaults, with durable tables kept in `dir`.
    pub fn durable(dir: impl Into<PathBuf>) -> Options {
        Options { data_dir: Some(dir.into()), ..Options::default() }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("max_transactions", &self.max_transactions)
            .field("gc_interval", &self.gc_interval)
            .field("data_dir", &self.data_dir)
            .field("storage", &self.storage)
            .finish_non_exhaustive()
    }
}

/// State shared by the database handle and its transactions.
pub(crate) struct Shared {
    pub(crate) clock: Clock,
    pub(crate) txns: TxnTable,
    pub(crate) gc: Gc,
    pub(crate) catalog: ArcSwap<HashMap<String, Arc<Table>>>,
    /// The database-wide opaque bytes of the layer above, kept in the
    /// catalog image (changed under the DDL lock).
    pub(crate) catalog_extra: ArcSwap<Vec<u8>>,
    /// The DDL lock and the schema claim (see [`crate::ddl`]).
    pub(crate) ddl: Mutex<DdlState>,
    /// The id of the transaction holding the schema claim; 0 for none.
    pub(crate) claim_owner: AtomicU64,
    /// Counts the schema claims that have ended.
    pub(crate) claims_ended: AtomicU64,
    pub(crate) next_table_id: AtomicU64,
    /// The data directory's log and checkpoints; `None` in memory only.
    pub(crate) storage: Option<Storage>,
    /// Set once a log sync failed: no more commits until restart. (A
    /// failed log write fails only the commits it carried.)
    log_failed: AtomicBool,
    /// What recovery did when the database was opened.
    recovered: Option<LoadStats>,
    /// See [`Options::memory_limit`].
    pub(crate) memory_limit: Option<usize>,
    /// What the memory check remembers of this database between checks.
    memory_credit: crate::memory::Credit,
    /// See [`Options::logical`].
    pub(crate) logical: bool,
    /// Hash indexes a replicated schema change is still filling (see
    /// `durable::standby`).
    pub(crate) standby: Mutex<durable::standby::PendingIndexes>,
    /// Set once a replicated record was applied under a new timestamp:
    /// from then on a redo record's deletes look their versions' names up
    /// (see [`Shared::canonical_ts`]).
    pub(crate) renumbered: AtomicBool,
    /// In a replicated group: whether a commit of default durability is
    /// delayed (`storage.log.delayed`).
    delayed_default: bool,
    /// See [`Options::replicate`].
    pub(crate) replicate: Option<Arc<dyn crate::Replicate>>,
}

impl Shared {
    /// Fails with 53200 if a new version of `bytes` would pass the memory
    /// limit (checked every [`crate::memory::CHECK_EVERY`] bytes a thread
    /// creates).
    #[inline]
    pub(crate) fn admit(&self, bytes: usize) -> Result<()> {
        crate::memory::admit(self.memory_limit, &self.memory_credit, bytes, || self.counted_bytes())
    }

    /// Fails with 53200 if building a redo record of `bytes` would take
    /// the process past its memory limit: a bulk load's record is about as
    /// big as its rows, and is built whole at commit. Records under
    /// [`crate::memory::CHECK_EVERY`] are not checked.
    pub(crate) fn admit_record(&self, bytes: usize) -> Result<()> {
        let Some(limit) = self.memory_limit else { return Ok(()) };
        if bytes < crate::memory::CHECK_EVERY {
            return Ok(());
        }
        let used =
            crate::memory::in_use(&self.memory_credit, limit, || self.counted_bytes()).saturating_add(bytes);
        if used > limit {
            return Err(Error::OutOfMemory { limit, used, table: None });
        }
        Ok(())
    }

    /// Bytes of every table's versions and indexes, from counters.
    pub(crate) fn counted_bytes(&self) -> usize {
        self.catalog.load().values().map(|t| t.memory_bytes()).sum()
    }

    /// Fails if the log has failed: the database takes no more commits.
    pub(crate) fn check_log(&self) -> Result<()> {
        if self.log_failed.load(SeqCst) {
            let why = self.storage.as_ref().and_then(|s| s.log().failure()).unwrap_or_default();
            return Err(centum_storage::Error::LogFailed(why).into());
        }
        Ok(())
    }

    /// Appends a redo record and waits as `durability` says. The record's
    /// commit timestamp is `stamp`'s, taken as it is appended (so
    /// timestamps follow log order). On an error the record was not
    /// acknowledged and the caller undoes its change. A failed write
    /// (disk full: 53100, other I/O errors: 58030) refuses only the commits
    /// it carried, and later ones go on once the disk takes writes again; a
    /// failed sync stops every later commit until restart. `after` is for
    /// a transaction with commit dependencies (see
    /// `centum_storage::Log::commit_stamped`); a record refused for them
    /// fails with 40001.
    pub(crate) fn log(
        &self,
        record: Record,
        durability: LogDurability,
        after: Option<u64>,
        defer: bool,
        stamp: &mut dyn FnMut() -> u64,
    ) -> Result<Option<centum_storage::Durable>> {
        if let Some(group) = &self.replicate {
            return self.replicate(group.as_ref(), record, durability, defer, &mut || Ok(stamp()));
        }
        let Some(storage) = &self.storage else { return Ok(None) };
        if defer {
            storage.log().commit_deferred(record, durability, after, stamp).map(|(_, d)| d)
        } else {
            // Waits for the fsync unless delayed.
            let wait = !storage.delays(durability);
            let append = || storage.commit_stamped(record, durability, after, stamp).map(|_| None);
            if wait {
                crate::blocking::section(append)
            } else {
                append()
            }
        }
        .map_err(|e| self.log_error(e))
    }

    /// Hands a redo record to the replicated group, which calls `stamp`
    /// under the lock that orders its log; an error from `stamp` refuses
    /// the record, and is returned. Otherwise waits for the group to hold
    /// the record (unless `defer`) as [`Shared::log`] waits for the log.
    /// The group's order is the log's: a record that depends on an earlier
    /// one commits only if that one does.
    pub(crate) fn replicate(
        &self,
        group: &dyn crate::Replicate,
        record: Record,
        durability: LogDurability,
        defer: bool,
        stamp: &mut dyn FnMut() -> Result<u64>,
    ) -> Result<Option<centum_storage::Durable>> {
        let delayed = self.delays(durability);
        let mut refused = None;
        let submitted = group.submit(record, delayed, &mut || {
            stamp().map_err(|e| {
                let refusal =
                    centum_storage::Error::Replication { code: e.sqlstate(), message: e.to_string() };
                refused = Some(e);
                refusal
            })
        });
        let durable = match (submitted, refused) {
            (Ok(durable), _) => durable,
            (Err(_), Some(e)) => return Err(e),
            (Err(e), None) => return Err(e.into()),
        };
        // A delayed commit is acknowledged now; the group sees to one that
        // is then lost (see `Replicate::submit`).
        if delayed {
            Ok(None)
        } else if defer {
            Ok(Some(durable))
        } else {
            crate::blocking::section(|| durable.wait()).map(|()| None).map_err(Error::from)
        }
    }

    /// The name the replicated log gives the versions this server created
    /// at commit timestamp `local`: its own unless it applied that record
    /// under a new timestamp (see `durable::standby`). A redo record names
    /// the versions it ends by the log's name, so every member finds them.
    pub(crate) fn canonical_ts(&self, local: u64) -> u64 {
        if !self.renumbered.load(SeqCst) {
            return local;
        }
        self.standby.lock().unwrap_or_else(|p| p.into_inner()).canonical(local)
    }

    /// Whether commits write redo records: to a data directory's log or
    /// to a replicated group.
    pub(crate) fn logs(&self) -> bool {
        self.storage.is_some() || self.replicate.is_some()
    }

    /// Whether a commit of `durability` is acknowledged before its record
    /// is durable (never in a replicated group).
    pub(crate) fn delays(&self, durability: LogDurability) -> bool {
        match (&self.storage, &self.replicate) {
            (Some(s), _) => s.delays(durability),
            (None, Some(_)) => match durability {
                LogDurability::Default => self.delayed_default,
                LogDurability::Sync => false,
                LogDurability::Delayed => true,
            },
            (None, None) => false,
        }
    }

    /// The highest commit timestamp among the records a failed write (or a
    /// lost replication) took down.
    pub(crate) fn failed_upto(&self) -> u64 {
        match (&self.storage, &self.replicate) {
            (Some(s), _) => s.failed_upto(),
            (None, Some(r)) => r.failed_upto(),
            (None, None) => 0,
        }
    }

    /// The engine's error for a failed append or flush of a redo record.
    pub(crate) fn log_error(&self, e: centum_storage::Error) -> Error {
        if self.storage.as_ref().is_some_and(|s| s.is_failed()) && !self.log_failed.swap(true, SeqCst) {
            tracing::error!(error = %e, "the redo log failed: no more commits until restart");
        }
        match e {
            centum_storage::Error::DependencyFailed => Error::Serialization(DEPENDENCY_FAILED),
            e => Error::from(e),
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.gc.drain_on_close();
    }
}

/// The longest the background collector sleeps when there is nothing to
/// collect; a commit that queues garbage wakes it at once.
const IDLE_COLLECTOR: Duration = Duration::from_secs(1);

/// Why a transaction with a commit dependency fails when the transaction
/// it depended on does not commit.
pub(crate) const DEPENDENCY_FAILED: &str = "a transaction whose changes this one used failed to commit";

/// An open database. Cheap to clone; every clone is the same database.
#[derive(Clone)]
pub struct Database {
    pub(crate) shared: Arc<Shared>,
    _collector: Arc<Collector>,
}

struct Collector {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.stop.store(true, SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// Memory and collector statistics of a whole database.
#[derive(Clone, Debug)]
pub struct DatabaseStats {
    /// Each table.
    pub tables: Vec<TableStats>,
    /// The garbage collector.
    pub gc: GcStats,
}

impl Database {
    /// Opens a database. Without a data directory it starts empty and
    /// lives in memory only. With one it recovers what the directory holds:
    /// the newest checkpoint and the log after it, loaded on one thread per
    /// core, every index rebuilt; then it logs every commit to
    /// SCHEMA_AND_DATA tables there. A damaged file stops the opening with
    /// an error naming the file and the offset.
    pub fn open(options: Options) -> Result<Database> {
        let Some(dir) = options.data_dir.clone() else {
            return Database::start(&options, 0, 1, HashMap::new(), Vec::new(), None, None);
        };
        if options.replicate.is_some() {
            return Err(Error::InvalidDefinition(
                "a replicated database keeps no data directory of its own: its log is the group's".into(),
            ));
        }
        let started = std::time::Instant::now();
        let recovery = Storage::open(options.fs.clone(), &dir, options.storage.clone())?;
        let image = recovery.catalog().map(durable::read_catalog).transpose()?;
        let mut by_id = HashMap::new();
        let mut next_table_id = 1;
        let mut catalog_extra = Vec::new();
        if let Some(image) = image {
            next_table_id = image.next_table_id;
            for t in &image.tables {
                by_id.insert(t.id, Arc::new(build_table(t.id, &t.def)?));
            }
            catalog_extra = image.extra;
        }
        let stats = durable::load_rows(&recovery, &by_id)?;
        let max_ts = recovery.max_commit_ts();
        let storage = recovery.start()?;
        tracing::info!(
            dir = %dir.display(),
            tables = by_id.len(),
            rows = stats.checkpoint_rows + stats.tail_rows,
            max_commit_ts = max_ts,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "database recovered"
        );
        let catalog = by_id.into_values().map(|t| (t.name(), t)).collect();
        Database::start(&options, max_ts, next_table_id, catalog, catalog_extra, Some(storage), Some(stats))
    }

    fn start(
        options: &Options,
        start_ts: u64,
        next_table_id: u64,
        catalog: HashMap<String, Arc<Table>>,
        catalog_extra: Vec<u8>,
        storage: Option<Storage>,
        recovered: Option<LoadStats>,
    ) -> Result<Database> {
        let shared = Arc::new(Shared {
            clock: Clock::new(start_ts),
            txns: TxnTable::new(options.max_transactions),
            gc: Gc::new(start_ts),
            catalog: ArcSwap::from_pointee(catalog),
            catalog_extra: ArcSwap::from_pointee(catalog_extra),
            ddl: Mutex::new(DdlState::default()),
            claim_owner: AtomicU64::new(0),
            claims_ended: AtomicU64::new(0),
            next_table_id: AtomicU64::new(next_table_id),
            storage,
            log_failed: AtomicBool::new(false),
            recovered,
            memory_limit: options.memory_limit,
            memory_credit: Default::default(),
            logical: options.logical,
            standby: Mutex::default(),
            renumbered: AtomicBool::new(false),
            delayed_default: options.storage.log.delayed,
            replicate: options.replicate.clone(),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let thread = options.gc_interval.map(|every| {
            let weak: Weak<Shared> = Arc::downgrade(&shared);
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("centum-gc".into())
                .spawn(move || {
                    let mut doze = false;
                    while !stop.load(SeqCst) {
                        // Idle, it sleeps until a commit queues garbage
                        // (a long timeout only as a safety net), then
                        // gives the interval's other commits time to queue
                        // theirs: one round for them all, not one a commit.
                        if doze {
                            std::thread::park_timeout(IDLE_COLLECTOR);
                            std::thread::sleep(every);
                        } else {
                            std::thread::park_timeout(every);
                        }
                        match weak.upgrade() {
                            Some(s) => {
                                s.gc.collect_all(&s.clock, &s.txns, false, || !stop.load(SeqCst));
                                doze = s.gc.doze();
                            }
                            None => return,
                        }
                    }
                })
                .map_err(|e| Error::InvalidDefinition(format!("cannot start collector: {e}")))
        });
        let thread = thread.transpose()?;
        Ok(Database { shared, _collector: Arc::new(Collector { stop, thread }) })
    }

    /// Begins a transaction.
    pub fn begin(&self, isolation: Isolation) -> Result<Transaction> {
        Transaction::begin(self.shared.clone(), isolation)
    }

    /// The asynchronous wait that `e`, an [`Error::WouldWait`] of a statement
    /// whose wait limits deferred waits, asks for (`None` for any other
    /// error). `me` is the transaction that goes on holding its rows while
    /// it waits (a block's, rolled back to where the statement began), or
    /// `None` when the statement's transaction was abandoned.
    pub fn row_wait(
        &self,
        me: Option<crate::TxnId>,
        e: &Error,
        limits: crate::WaitLimits,
    ) -> Option<crate::RowWait> {
        crate::RowWait::new(self.shared.clone(), me, e, limits)
    }

    /// The transaction that running transaction `id` waits for (a row it
    /// holds), if it is waiting: for `pg_stat_activity`'s wait events and
    /// `pg_blocking_pids`.
    pub fn waiting_for(&self, id: crate::TxnId) -> Option<crate::TxnId> {
        self.shared.txns.waiting_for_of(id)
    }

    /// Whether transaction `id` is still running and, if so, whether it
    /// has written or locked a row that others may wait for (`pg_locks`).
    pub fn running(&self, id: crate::TxnId) -> Option<bool> {
        self.shared.txns.running(id)
    }

    /// Every transaction open now (`centum.transactions`).
    pub fn transactions(&self) -> Vec<crate::TxnInfo> {
        self.shared.txns.list()
    }

    /// Transactions committed and aborted, and deadlocks detected, since
    /// the database opened or [`Database::reset_usage`].
    pub fn transaction_counts(&self) -> crate::TxnCounts {
        self.shared.txns.counts()
    }

    /// Sets every table's and index's usage counters and the transaction
    /// counts back to zero (`pg_stat_reset()`).
    pub fn reset_usage(&self) {
        for t in self.shared.catalog.load().values() {
            t.reset_usage();
        }
        self.shared.txns.reset_counts();
    }

    /// Runs `f` in a transaction and commits, retrying on serialization
    /// failures and deadlocks up to `tries` times in all, with a short,
    /// growing, randomised pause between tries (so that the transaction it
    /// collided with can finish). Other errors abort and return at once.
    pub fn run<T>(
        &self,
        isolation: Isolation,
        tries: u32,
        mut f: impl FnMut(&mut Transaction) -> Result<T>,
    ) -> Result<T> {
        let mut last = Error::Serialization("no attempt made");
        for attempt in 0..tries.max(1) {
            if attempt > 0 {
                retry_backoff(attempt);
            }
            let mut txn = self.begin(isolation)?;
            let out = f(&mut txn);
            let failed = txn.doomed.take();
            txn.doomed.set(failed.clone());
            match (out, failed) {
                (Ok(v), None) => match txn.commit() {
                    Ok(()) => return Ok(v),
                    Err(e) if e.is_retryable() => last = e,
                    Err(e) => return Err(e),
                },
                (_, Some(e)) | (Err(e), None) if e.is_retryable() => {
                    txn.abort();
                    last = e;
                }
                (Err(e), _) | (Ok(_), Some(e)) => {
                    txn.abort();
                    return Err(e);
                }
            }
        }
        Err(last)
    }

    /// The table named `name`.
    pub fn table(&self, name: &str) -> Result<Arc<Table>> {
        self.shared.catalog.load().get(name).cloned().ok_or_else(|| Error::NoSuchTable(name.into()))
    }

    /// Names of all tables.
    pub fn table_names(&self) -> Vec<String> {
        let mut v: Vec<_> = self.shared.catalog.load().keys().cloned().collect();
        v.sort();
        v
    }

    /// Fails with 53200 if the bucket arrays of `indexes`' hash indexes do
    /// not fit under the memory limit next to what the process holds. An
    /// array is reserved, not written, when it is made, but rows spread
    /// over all of it and the kernel backs it with huge pages, so a few
    /// thousand rows make the whole array resident: it must be counted
    /// before it exists. Recovery builds the indexes a table already has
    /// without this check.
    fn admit_buckets(&self, indexes: &[IndexDef]) -> Result<()> {
        let Some(limit) = self.shared.memory_limit else { return Ok(()) };
        let mut used =
            crate::memory::in_use(&self.shared.memory_credit, limit, || self.shared.counted_bytes());
        for ix in indexes {
            let IndexKind::Hash { buckets } = ix.kind else { continue };
            let bytes = crate::index::bucket_bytes(buckets);
            if used.saturating_add(bytes) > limit {
                return Err(Error::BucketsTooLarge { index: ix.name.clone(), bytes, used, limit });
            }
            used += bytes;
        }
        Ok(())
    }

    /// Creates a table with its indexes. With a data directory the new
    /// catalog is durable before the table can be used.
    pub fn create_table(&self, def: TableDef) -> Result<Arc<Table>> {
        let mut ddl = self.shared.enter_ddl()?;
        let cat = self.shared.catalog.load_full();
        if cat.contains_key(&def.name) {
            return Err(Error::TableExists(def.name));
        }
        for ix in &def.indexes {
            if self.index_owner(&cat, &ix.name).is_some() {
                return Err(Error::IndexExists(ix.name.clone()));
            }
        }
        for ix in &def.indexes {
            check_key_types(&def.columns, ix)?;
        }
        self.admit_buckets(&def.indexes)?;
        let id = self.shared.next_table_id.load(SeqCst);
        let table = Arc::new(build_table(id, &def)?);
        self.shared.next_table_id.store(id + 1, SeqCst);
        if !ddl.remember(Undo::Created(table.clone())) {
            self.log_catalog(
                cat.values().chain([&table]).map(|t| image_of(t)),
                &self.shared.catalog_extra.load(),
            )?;
        }
        let mut new = (*cat).clone();
        new.insert(def.name, table.clone());
        self.shared.catalog.store(Arc::new(new));
        Ok(table)
    }

    /// Drops a table. Transactions already using it finish normally; the
    /// memory goes when the last of them does.
    pub fn drop_table(&self, name: &str) -> Result<()> {
        let mut ddl = self.shared.enter_ddl()?;
        let cat = self.shared.catalog.load_full();
        let Some(t) = cat.get(name) else {
            return Err(Error::NoSuchTable(name.into()));
        };
        // In a transaction the table keeps taking writes until the commit:
        // a rollback brings it back as it was.
        if !ddl.remember(Undo::Dropped(t.clone())) {
            let extra = self.shared.catalog_extra.load();
            self.log_catalog(cat.values().filter(|o| !Arc::ptr_eq(o, t)).map(|t| image_of(t)), &extra)?;
            t.dropped.store(true, SeqCst);
        }
        let mut new = (*cat).clone();
        new.remove(name);
        self.shared.catalog.store(Arc::new(new));
        Ok(())
    }

    /// Renames table `from` to `to`. Transactions already using the table
    /// go on using it; from now on it is found under `to` only. With a data
    /// directory the new name is durable before it is used.
    pub fn rename_table(&self, from: &str, to: &str) -> Result<()> {
        let mut ddl = self.shared.enter_ddl()?;
        let cat = self.shared.catalog.load_full();
        let Some(t) = cat.get(from).cloned() else {
            return Err(Error::NoSuchTable(from.into()));
        };
        if cat.contains_key(to) {
            return Err(Error::TableExists(to.into()));
        }
        let images = cat.values().map(|o| {
            let mut image = image_of(o);
            if Arc::ptr_eq(o, &t) {
                image.def.name = to.into();
            }
            image
        });
        if !ddl.remember(Undo::Renamed(t.clone(), from.into())) {
            self.log_catalog(images, &self.shared.catalog_extra.load())?;
        }
        t.set_name(to.into());
        let mut new = (*cat).clone();
        new.remove(from);
        new.insert(to.into(), t);
        self.shared.catalog.store(Arc::new(new));
        Ok(())
    }

    /// Replaces the opaque bytes the layer above keeps with table `table`
    /// (see `TableDef::extra`). With a data directory they are durable, in
    /// the catalog image, before this returns.
    pub fn set_table_extra(&self, table: &str, extra: Vec<u8>) -> Result<()> {
        let mut ddl = self.shared.enter_ddl()?;
        let cat = self.shared.catalog.load_full();
        let Some(t) = cat.get(table) else {
            return Err(Error::NoSuchTable(table.into()));
        };
        let images = cat.values().map(|o| {
            let mut image = image_of(o);
            if Arc::ptr_eq(o, t) {
                image.def.extra = extra.clone();
            }
            image
        });
        if !ddl.remember(Undo::Extra(t.clone(), t.extra())) {
            self.log_catalog(images, &self.shared.catalog_extra.load())?;
        }
        t.set_extra(extra);
        Ok(())
    }

    /// The database-wide opaque bytes of the layer above (empty until
    /// [`Database::set_catalog_extra`] is called); recovered on open.
    pub fn catalog_extra(&self) -> Vec<u8> {
        self.shared.catalog_extra.load().to_vec()
    }

    /// Replaces the database-wide opaque bytes of the layer above (for
    /// instance a SQL layer's sequences and schemas). With a data directory
    /// they are durable, in the catalog image, before this returns.
    ///
    /// Inside a transaction (see [`crate::ddl::ddl_scope`]) the change is
    /// the transaction's: logged with its commit, undone by its abort.
    pub fn set_catalog_extra(&self, extra: Vec<u8>) -> Result<()> {
        let ddl = self.shared.enter_ddl()?;
        self.put_catalog_extra(&ddl, extra)
    }

    pub(crate) fn put_catalog_extra(&self, ddl: &crate::ddl::Entered<'_>, extra: Vec<u8>) -> Result<()> {
        if !ddl.in_txn() {
            let cat = self.shared.catalog.load_full();
            self.log_catalog(cat.values().map(|t| image_of(t)), &extra)?;
        }
        self.shared.catalog_extra.store(Arc::new(extra));
        Ok(())
    }

    /// Replaces the database-wide extra bytes with a change that is no
    /// schema change and belongs to no transaction (a sequence's
    /// reservation mark): it never waits for the schema claim. `live` is
    /// what the catalog holds now; `committed` what it holds without the
    /// changes of the transaction holding the claim, if one does, and that
    /// is what the log gets then.
    pub fn write_catalog_extra(&self, live: Vec<u8>, committed: Vec<u8>) -> Result<()> {
        let mut state = self.shared.claim_lock();
        match state.claim.as_mut() {
            Some(claim) => {
                self.log_catalog(self.shared.committed_images(Some(claim)).into_iter(), &committed)?;
                claim.committed_extra = Arc::new(committed);
            }
            None => {
                let cat = self.shared.catalog.load_full();
                self.log_catalog(cat.values().map(|t| image_of(t)), &live)?;
            }
        }
        self.shared.catalog_extra.store(Arc::new(live));
        Ok(())
    }

    /// Writes the catalog image of `tables` and the database-wide `extra`
    /// to the log, durably. The caller holds the DDL lock, so images reach
    /// the log in the order of the changes they describe. The images are
    /// only made with a data directory.
    fn log_catalog(&self, tables: impl Iterator<Item = TableImage>, extra: &[u8]) -> Result<()> {
        if !self.shared.logs() {
            return Ok(());
        }
        self.shared.check_log()?;
        let image = durable::catalog_image(tables.collect(), self.shared.next_table_id.load(SeqCst), extra);
        let mut rec = Record::new(0);
        rec.schema(&image);
        let clock = &self.shared.clock;
        let mut ts = None;
        let r = self
            .shared
            .log(rec, LogDurability::Sync, None, false, &mut || *ts.get_or_insert_with(|| clock.allocate()));
        if let Some(ts) = ts {
            clock.finish(ts);
        }
        r.map(drop)
    }

    /// The current catalog, logged again (after an index change).
    fn log_current_catalog(&self) -> Result<()> {
        let cat = self.shared.catalog.load_full();
        self.log_catalog(cat.values().map(|t| image_of(t)), &self.shared.catalog_extra.load())
    }

    /// The table that has index `index`.
    pub fn index_table(&self, index: &str) -> Option<Arc<Table>> {
        self.index_owner(&self.shared.catalog.load(), index)
    }

    fn index_owner(&self, cat: &HashMap<String, Arc<Table>>, index: &str) -> Option<Arc<Table>> {
        cat.values().find(|t| t.indexes.load().find(index).is_some()).cloned()
    }

    /// Creates an index on a table that may already hold rows, while other
    /// transactions go on reading and writing it (see `docs/design.md`,
    /// "Building an index"). Waits for the transactions open when it
    /// starts, so it must not be called by a thread that holds an open
    /// transaction itself (that transaction would never finish). Snapshots
    /// taken before the index is complete do not use it.
    ///
    /// Its waits end as [`crate::mvcc::ddl_waits`] says, if the caller set
    /// limits; the index is then removed again.
    ///
    /// Inside a transaction (see [`crate::ddl::ddl_scope`]) the index is
    /// the transaction's: retired again if it aborts. The versions that
    /// transaction wrote itself are left for it to put into the index
    /// ([`Transaction::relink_own_writes`]).
    pub fn create_index(&self, table: &str, def: IndexDef) -> Result<()> {
        let t = self.table(table)?;
        // Wait out another transaction's schema claim before taking the
        // table's lock, which that transaction may want too.
        drop(self.shared.enter_ddl()?);
        let lock_deadline = crate::mvcc::txn_table::ddl_lock_deadline();
        let _tddl = loop {
            match t.ddl.try_lock() {
                Ok(g) => break g,
                Err(std::sync::TryLockError::Poisoned(p)) => break p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => {
                    crate::mvcc::txn_table::ddl_past_limits(lock_deadline)?;
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        };
        let me = crate::ddl::ddl_txn();
        let (ix, fresh) = {
            let mut ddl = self.shared.enter_ddl()?;
            if self.index_owner(&self.shared.catalog.load(), &def.name).is_some() {
                return Err(Error::IndexExists(def.name));
            }
            let cur = t.indexes.load_full();
            if cur.iter().count() >= MAX_INDEXES {
                return Err(Error::InvalidDefinition(format!("more than {MAX_INDEXES} indexes")));
            }
            check_key_types(&t.columns, &def)?;
            self.admit_buckets(std::slice::from_ref(&def))?;
            let ix = install_index(&t, &def)?;
            let fresh = ddl.state.claim.as_ref().is_some_and(|c| Some(c.owner) == me && c.created(&t));
            if !ddl.remember(Undo::IndexCreated(t.clone(), def.name.clone())) {
                if let Err(e) = self.log_current_catalog() {
                    remove_index(&self.shared, &t, ix.name());
                    return Err(e);
                }
            }
            (ix, fresh)
        };
        // Writers that loaded the old index set are in transactions open
        // now; once they are gone every new version is in the index. A
        // table created by the building transaction itself has had no
        // other writers (the layer above keeps others away from it until
        // the commit), and that transaction must not wait for itself.
        let others = self.shared.txns.active_ids().into_iter().filter(|&id| Some(id) != me && !fresh);
        let drained =
            others.into_iter().try_for_each(|id| self.shared.txns.wait_gone_within(id, lock_deadline));
        let filled = drained.and_then(|()| match &*ix {
            Index::Range(_) => crate::index::fill::fill(&self.shared.txns, &t, &ix, lock_deadline, me),
            Index::Hash(_) => self.rewrite_old_versions(&t, &ix, lock_deadline, me),
        });
        if let Err(e) = filled {
            self.forget_index(&t, ix.name(), me);
            return Err(e);
        }
        let tick = self.shared.clock.allocate();
        self.shared.clock.finish(tick);
        self.shared.clock.wait_visible(tick);
        ix.set_ready(tick);
        Ok(())
    }

    /// Replaces every live version made before `ix` existed by an identical
    /// one that is in `ix`, until none is left.
    /// Versions of transaction `me`, the builder's own, are its business.
    fn rewrite_old_versions(
        &self,
        t: &Arc<Table>,
        ix: &Index,
        lock_deadline: Option<Instant>,
        me: Option<crate::TxnId>,
    ) -> Result<()> {
        let mine = |v: crate::row::version::VersionPtr| {
            me.is_some_and(|m| v.begin().load(SeqCst) == m.raw() || v.end().load(SeqCst) == m.raw())
        };
        loop {
            crate::mvcc::txn_table::ddl_past_limits(lock_deadline)?;
            let mut pending = false;
            // About 256 batches a pass, whatever the number of chains.
            let step = (t.scan.len() / 256).max(1);
            for bucket in (0..t.scan.len()).step_by(step) {
                let r = self.run(Isolation::Snapshot, 1, |txn| {
                    let old: Vec<_> = txn
                        .scan_buckets(t, bucket..bucket + step)?
                        .filter(|r| !ix.covers(r.v) && !mine(r.v))
                        .collect();
                    for r in old {
                        txn.update(&r, r.values())?;
                    }
                    Ok(())
                });
                match r {
                    Ok(()) => {}
                    Err(e) if e.is_retryable() => pending = true,
                    Err(e) => return Err(e),
                }
            }
            if !pending {
                pending = self.old_versions_live(t, ix, lock_deadline, &mine)?;
            }
            if !pending {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Whether any version made before `ix` existed is still live. A
    /// version held by an unfinished writer is decided by waiting for that
    /// writer: if it commits the version is replaced, if it aborts the
    /// version needs rewriting.
    fn old_versions_live(
        &self,
        t: &Table,
        ix: &Index,
        lock_deadline: Option<Instant>,
        mine: &dyn Fn(crate::row::version::VersionPtr) -> bool,
    ) -> Result<bool> {
        use crate::mvcc::visibility::{end, End};
        let nobody = crate::mvcc::TxnId(0);
        let _pin = crossbeam_epoch::pin();
        for b in t.scan.buckets_in_use() {
            let mut cur = t.scan.first(b);
            while let Some(v) = cur {
                cur = t.scan.next(v);
                if !t.scan.is_live(v) || ix.covers(v) || v.begin().load(SeqCst) == INFINITY || mine(v) {
                    continue;
                }
                loop {
                    match end(&self.shared.txns, v, nobody) {
                        End::Committed(_) => break,
                        End::Pending(id, _) => self.shared.txns.wait_gone_within(id, lock_deadline)?,
                        End::Open | End::Mine => return Ok(true),
                    }
                }
            }
        }
        Ok(false)
    }

    /// Drops an index. It disappears at once for new statements; its
    /// memory goes once the transactions open now have finished (they may
    /// still walk it, for instance to validate a SERIALIZABLE read).
    ///
    /// Inside a transaction (see [`crate::ddl::ddl_scope`]) an index the
    /// transaction built goes at once; any other is retired at commit
    /// (until then the transaction still sees it).
    pub fn drop_index(&self, name: &str) -> Result<()> {
        let t = self
            .index_owner(&self.shared.catalog.load(), name)
            .ok_or_else(|| Error::NoSuchIndex(name.into()))?;
        drop(self.shared.enter_ddl()?);
        let _tddl = t.ddl.lock().unwrap_or_else(|p| p.into_inner());
        let mut ddl = self.shared.enter_ddl()?;
        if let Some(claim) = ddl.state.claim.as_mut().filter(|c| Some(c.owner) == ddl.txn) {
            let built = claim
                .undo
                .iter()
                .position(|u| matches!(u, Undo::IndexCreated(o, n) if Arc::ptr_eq(o, &t) && n == name));
            match built {
                Some(at) => {
                    claim.undo.remove(at);
                    remove_index(&self.shared, &t, name);
                }
                None => {
                    let ix = t.index(name)?;
                    ix.set_dropped_by(claim.owner.raw());
                    claim.drop_indexes.push((t.clone(), ix));
                }
            }
            return Ok(());
        }
        self.shared.check_log()?;
        remove_index(&self.shared, &t, name);
        self.log_current_catalog()
    }

    /// Takes back an index whose build failed: out of the transaction's
    /// undo steps if it belongs to one, else logged without it (it was
    /// logged with it, and a restart would build it again).
    fn forget_index(&self, t: &Arc<Table>, name: &str, me: Option<crate::TxnId>) {
        remove_index(&self.shared, t, name);
        let mut state = self.shared.claim_lock();
        if let Some(claim) = state.claim.as_mut().filter(|c| Some(c.owner) == me) {
            claim.undo.retain(|u| !matches!(u, Undo::IndexCreated(o, n) if Arc::ptr_eq(o, t) && n == name));
            return;
        }
        drop(state);
        let _ = self.log_current_catalog();
    }

    /// Takes a checkpoint now: makes every commit so far durable, closes
    /// the current data/delta pair, merges sparse pairs (unless turned
    /// off), writes a manifest and removes the log before it. Checkpoints
    /// also happen by themselves every `storage.checkpoint.auto_checkpoint_bytes`
    /// of log. Fails in memory-only databases.
    pub fn checkpoint(&self) -> Result<CheckpointReport> {
        Ok(self.storage()?.checkpoint()?)
    }

    /// A checkpoint that merges every pair whose live share has dropped
    /// below the threshold.
    pub fn merge(&self) -> Result<CheckpointReport> {
        Ok(self.storage()?.merge()?)
    }

    /// Stops (`true`) or restarts the continuous writing of committed rows
    /// into checkpoint files. While paused, commits go on (the log has
    /// them) and durable batches queue in memory; a checkpoint still
    /// processes them all, and resuming lets the writer catch up.
    pub fn pause_checkpoints(&self, paused: bool) -> Result<()> {
        self.storage()?.pause_checkpoints(paused);
        Ok(())
    }

    /// The checkpoint writer's counters; `None` in memory only.
    pub fn checkpoint_stats(&self) -> Option<CheckpointStats> {
        self.shared.storage.as_ref().map(|s| s.checkpoint_stats())
    }

    /// Makes every commit so far durable, delayed ones included.
    pub fn flush_log(&self) -> Result<()> {
        match &self.shared.storage {
            Some(s) => Ok(s.log().flush()?),
            None => Ok(()),
        }
    }

    /// The checkpoint files and their states; empty in memory only.
    pub fn checkpoint_files(&self) -> Vec<FileInfo> {
        self.shared.storage.as_ref().map(|s| s.files()).unwrap_or_default()
    }

    /// The log's counters (commits, flushes, bytes); `None` in memory only.
    pub fn log_stats(&self) -> Option<LogStats> {
        self.shared.storage.as_ref().map(|s| s.log().stats())
    }

    /// What recovery did when this database was opened from a data
    /// directory.
    pub fn recovery_stats(&self) -> Option<&LoadStats> {
        self.shared.recovered.as_ref()
    }

    /// Whether the log has failed after a failed sync (no commits are taken
    /// until restart). Failed writes do not set it: commits resume by
    /// themselves once the disk takes writes again.
    pub fn log_failed(&self) -> bool {
        self.shared.log_failed.load(SeqCst)
    }

    /// Why the log failed, if it has failed (see [`Database::log_failed`]).
    pub fn log_failure(&self) -> Option<String> {
        self.shared.storage.as_ref().and_then(|s| s.log().failure())
    }

    /// Whether the database has a data directory (is not in memory only).
    pub fn is_durable(&self) -> bool {
        self.shared.storage.is_some()
    }

    pub(crate) fn storage(&self) -> Result<&Storage> {
        self.shared.storage.as_ref().ok_or_else(|| {
            Error::InvalidDefinition("the database has no data directory (it is in memory only)".into())
        })
    }

    /// Runs one garbage collection round now; returns versions freed.
    pub fn collect_garbage(&self) -> usize {
        self.shared.gc.collect_all(&self.shared.clock, &self.shared.txns, true, || true)
    }

    /// Memory and collector statistics.
    pub fn stats(&self) -> DatabaseStats {
        let cat = self.shared.catalog.load();
        let mut tables: Vec<_> = cat.values().map(|t| t.stats()).collect();
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        DatabaseStats { tables, gc: self.shared.gc.stats() }
    }
}

/// Pauses before retry number `attempt`: about 2^attempt microseconds, up
/// to a millisecond, with jitter so that colliding retries spread out.
fn retry_backoff(attempt: u32) {
    use std::hash::{BuildHasher, Hasher};
    let ceiling = 1u64 << attempt.min(10);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(attempt);
    let micros = h.finish() % ceiling + 1;
    if micros < 4 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(micros));
    }
}

/// How the catalog image records `table`.
pub(crate) fn image_of(table: &Table) -> TableImage {
    TableImage { id: table.id, def: table.def() }
}

/// A table and its indexes from a definition, with no rows.
pub(crate) fn build_table(id: u64, def: &TableDef) -> Result<Table> {
    for (i, c) in def.columns.iter().enumerate() {
        if def.columns[..i].iter().any(|d| d.name == c.name) {
            return Err(Error::InvalidDefinition(format!("column \"{}\" specified more than once", c.name)));
        }
    }
    if def.indexes.len() > MAX_INDEXES {
        return Err(Error::InvalidDefinition(format!("more than {MAX_INDEXES} indexes")));
    }
    let declared = def.indexes.iter().map(|i| match i.kind {
        IndexKind::Hash { buckets } => buckets,
        // A range index gives no size; assume a large table.
        IndexKind::Range => RANGE_TABLE_ROWS,
    });
    let chains = crate::table::scan_chains(declared.max().unwrap_or(UNINDEXED_TABLE_ROWS));
    let table =
        Table::new(id, def.name.clone(), def.columns.clone(), def.durability, def.extra.clone(), chains);
    let mut slots = Vec::new();
    for (i, ix) in def.indexes.iter().enumerate() {
        if def.indexes[..i].iter().any(|o| o.name == ix.name) {
            return Err(Error::IndexExists(ix.name.clone()));
        }
        slots.push(Some(Arc::new(build_index(&table, ix, i + 1, 0, 0)?)));
    }
    table.indexes.store(Arc::new(IndexSet::new(slots, 0)));
    Ok(table)
}

/// Refuses a new index keyed on a column whose type has no equality
/// (`json`), as PostgreSQL does. Only new definitions are checked: a
/// catalog written before the check must still open.
fn check_key_types(columns: &[Column], def: &IndexDef) -> Result<()> {
    let json = columns.iter().find(|c| c.ty == centum_types::DataType::Json && def.columns.contains(&c.name));
    match json {
        Some(c) => {
            let method = if matches!(def.kind, IndexKind::Hash { .. }) { "hash" } else { "btree" };
            Err(Error::NoOperatorClass { ty: c.ty.to_string(), method })
        }
        None => Ok(()),
    }
}

pub(crate) fn build_index(
    table: &Table,
    def: &IndexDef,
    slot: usize,
    gen: u32,
    ready_ts: u64,
) -> Result<Index> {
    if def.columns.is_empty() {
        return Err(Error::InvalidDefinition(format!("index \"{}\" has no key columns", def.name)));
    }
    let cols = def.columns.iter().map(|c| table.column_index(c)).collect::<Result<Vec<_>>>()?;
    Ok(match def.kind {
        IndexKind::Hash { buckets } => {
            let key = KeyDef::new(&table.layout, cols);
            Index::Hash(HashIndex::new(def.name.clone(), def.unique, key, buckets, slot, gen, ready_ts))
        }
        IndexKind::Range => {
            let key = SortKeyDef::new(&table.columns, cols, &def.descending);
            Index::Range(RangeIndex::new(def.name.clone(), def.unique, key, slot, gen, ready_ts))
        }
    })
}

/// Puts a new index of `def` into the first free link slot of `t` (a new
/// slot if none is free), under a new layout generation, not yet serving
/// snapshots. The caller holds the table's DDL lock.
pub(crate) fn install_index(t: &Table, def: &IndexDef) -> Result<Arc<Index>> {
    let cur = t.indexes.load_full();
    let pos = cur.slots.iter().position(Option::is_none).unwrap_or(cur.slots.len());
    let gen = cur.gen + 1;
    let ix = Arc::new(build_index(t, def, pos + 1, gen, INFINITY)?);
    let (mut slots, mut retiring) = (cur.slots.clone(), cur.retiring.clone());
    if pos == slots.len() {
        slots.push(None);
        retiring.push(false);
    }
    slots[pos] = Some(ix.clone());
    t.indexes.store(Arc::new(IndexSet { slots, retiring, gen }));
    Ok(ix)
}

/// Takes index `name` out of use in two steps. First it is marked
/// retiring: no longer found, read or written, but versions are still
/// unlinked from it, so nothing it reaches is ever freed. Once every
/// transaction open at that moment has finished (no one can hold it
/// then), a background thread removes it, freeing its slot.
pub(crate) fn remove_index(shared: &Arc<Shared>, t: &Arc<Table>, name: &str) {
    // A slot still retiring may carry the same name (an index of that
    // name dropped, or failed to build, while transactions of its time
    // are still open), and so may one an open transaction has dropped:
    // only the one found by name is meant.
    let found = t.indexes.load().find(name).cloned();
    if let Some(ix) = found {
        retire_index(shared, t, &ix);
    }
}

/// Retires index `ix` of table `t`, as [`remove_index`] says.
pub(crate) fn retire_index(shared: &Arc<Shared>, t: &Arc<Table>, ix: &Arc<Index>) {
    let cur = t.indexes.load_full();
    let this = |(s, r): (&Option<Arc<Index>>, &bool)| !*r && s.as_ref().is_some_and(|s| Arc::ptr_eq(s, ix));
    let Some(pos) = cur.slots.iter().zip(&cur.retiring).position(this) else {
        return;
    };
    let mut retiring = cur.retiring.clone();
    retiring[pos] = true;
    t.indexes.store(Arc::new(IndexSet { slots: cur.slots.clone(), retiring, gen: cur.gen }));
    let open = shared.txns.active_ids();
    let (shared, table) = (shared.clone(), t.clone());
    let finish = move || {
        for id in open {
            // No limits here: this thread runs no statement.
            let _ = shared.txns.wait_gone_within(id, None);
        }
        let _tddl = table.ddl.lock().unwrap_or_else(|p| p.into_inner());
        let cur = table.indexes.load_full();
        let (mut slots, mut retiring) = (cur.slots.clone(), cur.retiring.clone());
        slots[pos] = None;
        retiring[pos] = false;
        table.indexes.store(Arc::new(IndexSet { slots, retiring, gen: cur.gen }));
    };
    // Without a thread the index just stays retiring: harmless.
    let _ = std::thread::Builder::new().name("centum-index-drop".into()).spawn(finish);
}
