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
use crate::schema::{IndexDef, IndexKind, TableDef};
use crate::table::{IndexSet, Table, TableStats};
use arc_swap::ArcSwap;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// Most indexes on one table.
pub const MAX_INDEXES: usize = 64;

/// Rows a table indexed only by range indexes is assumed to reach when its
/// scan list is sized.
const RANGE_TABLE_ROWS: u64 = 1 << 20;

/// How a database is opened.
#[derive(Clone, Debug)]
pub struct Options {
    /// Most transactions open at once (at most 65,536).
    pub max_transactions: usize,
    /// How often the background collector runs; `None` for no background
    /// thread (collection then happens only inline and on request).
    pub gc_interval: Option<Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_transactions: 4096, gc_interval: Some(Duration::from_millis(2)) }
    }
}

/// State shared by the database handle and its transactions.
pub(crate) struct Shared {
    pub(crate) clock: Clock,
    pub(crate) txns: TxnTable,
    pub(crate) gc: Gc,
    catalog: ArcSwap<HashMap<String, Arc<Table>>>,
    ddl: Mutex<()>,
    next_table_id: AtomicU64,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.gc.drain_on_close();
    }
}

/// An open database. Cheap to clone; every clone is the same database.
#[derive(Clone)]
pub struct Database {
    shared: Arc<Shared>,
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
    /// Opens a new, empty in-memory database.
    pub fn open(options: Options) -> Result<Database> {
        let shared = Arc::new(Shared {
            clock: Clock::new(0),
            txns: TxnTable::new(options.max_transactions),
            gc: Gc::new(0),
            catalog: ArcSwap::from_pointee(HashMap::new()),
            ddl: Mutex::new(()),
            next_table_id: AtomicU64::new(1),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let thread = options.gc_interval.map(|every| {
            let weak: Weak<Shared> = Arc::downgrade(&shared);
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("centum-gc".into())
                .spawn(move || {
                    while !stop.load(SeqCst) {
                        std::thread::park_timeout(every);
                        match weak.upgrade() {
                            Some(s) => {
                                s.gc.collect_all(&s.clock, &s.txns, || !stop.load(SeqCst));
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

    /// Creates a table with its indexes.
    pub fn create_table(&self, def: TableDef) -> Result<Arc<Table>> {
        let _ddl = self.shared.ddl.lock().unwrap_or_else(|p| p.into_inner());
        let cat = self.shared.catalog.load_full();
        if cat.contains_key(&def.name) {
            return Err(Error::TableExists(def.name));
        }
        for (i, c) in def.columns.iter().enumerate() {
            if def.columns[..i].iter().any(|d| d.name == c.name) {
                return Err(Error::InvalidDefinition(format!(
                    "column \"{}\" specified more than once",
                    c.name
                )));
            }
        }
        if def.indexes.len() > MAX_INDEXES {
            return Err(Error::InvalidDefinition(format!("more than {MAX_INDEXES} indexes")));
        }
        let id = self.shared.next_table_id.fetch_add(1, SeqCst);
        let declared = def.indexes.iter().map(|i| match i.kind {
            IndexKind::Hash { buckets } => buckets,
            // A range index gives no size; assume a large table.
            IndexKind::Range => RANGE_TABLE_ROWS,
        });
        let chains = crate::table::scan_chains(declared.max().unwrap_or(0));
        let table = Table::new(id, def.name.clone(), def.columns.clone(), def.durability, chains);
        let mut slots = Vec::new();
        for (i, ix) in def.indexes.iter().enumerate() {
            if self.index_owner(&cat, &ix.name).is_some()
                || def.indexes[..i].iter().any(|o| o.name == ix.name)
            {
                return Err(Error::IndexExists(ix.name.clone()));
            }
            slots.push(Some(Arc::new(build_index(&table, ix, i + 1, 0, 0)?)));
        }
        table.indexes.store(Arc::new(IndexSet::new(slots, 0)));
        let table = Arc::new(table);
        let mut new = (*cat).clone();
        new.insert(def.name, table.clone());
        self.shared.catalog.store(Arc::new(new));
        Ok(table)
    }

    /// Drops a table. Transactions already using it finish normally; the
    /// memory goes when the last of them does.
    pub fn drop_table(&self, name: &str) -> Result<()> {
        let _ddl = self.shared.ddl.lock().unwrap_or_else(|p| p.into_inner());
        let cat = self.shared.catalog.load_full();
        let Some(t) = cat.get(name) else {
            return Err(Error::NoSuchTable(name.into()));
        };
        t.dropped.store(true, SeqCst);
        let mut new = (*cat).clone();
        new.remove(name);
        self.shared.catalog.store(Arc::new(new));
        Ok(())
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
    pub fn create_index(&self, table: &str, def: IndexDef) -> Result<()> {
        let t = self.table(table)?;
        let _tddl = t.ddl.lock().unwrap_or_else(|p| p.into_inner());
        let ix = {
            let _ddl = self.shared.ddl.lock().unwrap_or_else(|p| p.into_inner());
            if self.index_owner(&self.shared.catalog.load(), &def.name).is_some() {
                return Err(Error::IndexExists(def.name));
            }
            let cur = t.indexes.load_full();
            if cur.iter().count() >= MAX_INDEXES {
                return Err(Error::InvalidDefinition(format!("more than {MAX_INDEXES} indexes")));
            }
            let pos = cur.slots.iter().position(Option::is_none).unwrap_or(cur.slots.len());
            let gen = cur.gen + 1;
            let ix = Arc::new(build_index(&t, &def, pos + 1, gen, INFINITY)?);
            let (mut slots, mut retiring) = (cur.slots.clone(), cur.retiring.clone());
            if pos == slots.len() {
                slots.push(None);
                retiring.push(false);
            }
            slots[pos] = Some(ix.clone());
            t.indexes.store(Arc::new(IndexSet { slots, retiring, gen }));
            ix
        };
        // Writers that loaded the old index set are in transactions open
        // now; once they are gone every new version is in the index.
        for id in self.shared.txns.active_ids() {
            self.shared.txns.wait_gone(id);
        }
        if let Err(e) = self.rewrite_old_versions(&t, &ix) {
            self.remove_index(&t, ix.name());
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
    fn rewrite_old_versions(&self, t: &Arc<Table>, ix: &Index) -> Result<()> {
        loop {
            let mut pending = false;
            // About 256 batches a pass, whatever the number of chains.
            let step = (t.scan.len() / 256).max(1);
            for bucket in (0..t.scan.len()).step_by(step) {
                let r = self.run(Isolation::Snapshot, 1, |txn| {
                    let old: Vec<_> =
                        txn.scan_buckets(t, bucket..bucket + step)?.filter(|r| !ix.covers(r.v)).collect();
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
                pending = self.old_versions_live(t, ix);
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
    fn old_versions_live(&self, t: &Table, ix: &Index) -> bool {
        use crate::mvcc::visibility::{end, End};
        let nobody = crate::mvcc::TxnId(0);
        let _pin = crossbeam_epoch::pin();
        for b in 0..t.scan.len() {
            let mut cur = t.scan.first(b);
            while let Some(v) = cur {
                cur = t.scan.next(v);
                if !t.scan.is_live(v) || ix.covers(v) || v.begin().load(SeqCst) == INFINITY {
                    continue;
                }
                loop {
                    match end(&self.shared.txns, v, nobody) {
                        End::Committed(_) => break,
                        End::Pending(id, _) => self.shared.txns.wait_gone(id),
                        End::Open | End::Mine => return true,
                    }
                }
            }
        }
        false
    }

    /// Drops an index. It disappears at once for new statements; its
    /// memory goes once the transactions open now have finished (they may
    /// still walk it, for instance to validate a SERIALIZABLE read).
    pub fn drop_index(&self, name: &str) -> Result<()> {
        let t = self
            .index_owner(&self.shared.catalog.load(), name)
            .ok_or_else(|| Error::NoSuchIndex(name.into()))?;
        let _tddl = t.ddl.lock().unwrap_or_else(|p| p.into_inner());
        self.remove_index(&t, name);
        Ok(())
    }

    /// Takes index `name` out of use in two steps. First it is marked
    /// retiring: no longer found, read or written, but versions are still
    /// unlinked from it, so nothing it reaches is ever freed. Once every
    /// transaction open at that moment has finished (no one can hold it
    /// then), a background thread removes it, freeing its slot.
    fn remove_index(&self, t: &Arc<Table>, name: &str) {
        let cur = t.indexes.load_full();
        let Some(pos) = cur.slots.iter().position(|s| s.as_ref().is_some_and(|ix| ix.name() == name)) else {
            return;
        };
        let mut retiring = cur.retiring.clone();
        retiring[pos] = true;
        t.indexes.store(Arc::new(IndexSet { slots: cur.slots.clone(), retiring, gen: cur.gen }));
        let open = self.shared.txns.active_ids();
        let (shared, table) = (self.shared.clone(), t.clone());
        let finish = move || {
            for id in open {
                shared.txns.wait_gone(id);
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

    /// Runs one garbage collection round now; returns versions freed.
    pub fn collect_garbage(&self) -> usize {
        self.shared.gc.collect_all(&self.shared.clock, &self.shared.txns, || true)
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

fn build_index(table: &Table, def: &IndexDef, slot: usize, gen: u32, ready_ts: u64) -> Result<Index> {
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
