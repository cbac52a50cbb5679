//! Memory-optimized tables.
//!
//! A table is its row layout, its indexes and a *scan list*: every version
//! of the table is linked through link 0 into one of many short chains
//! (sized from the bucket counts declared at creation),
//! so full scans and garbage collection can reach rows whatever indexes
//! exist (a table needs no index at all, like pgbench's `history`).
//! User indexes own links 1 and up (range indexes leave theirs unused, and
//! may hold versions made before them: see `index::fill`).
//!
//! The set of indexes is swapped as a whole (copy on write) when an index is
//! created or dropped; each version records the generation of the set it
//! was made under, so an index knows which versions it covers.

use crate::counter::{Counter, Tally};
use crate::error::{Error, Result};
use crate::gc::LongChains;
use crate::index::chain::Chains;
use crate::index::hash::{HashIndex, IndexStats};
use crate::index::Index;
use crate::row::layout::RowLayout;
use crate::row::version::VersionPtr;
use crate::schema::{Column, Durability, TableDef};
use arc_swap::ArcSwap;
use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

/// Fewest chains in the scan list: enough that concurrent inserters rarely
/// meet on one head.
const MIN_SCAN_CHAINS: u64 = 256;
/// Most chains in the scan list (8 MiB of heads).
const MAX_SCAN_CHAINS: u64 = 1 << 20;
const SCAN_REGION_BITS: u32 = 8;

/// Chains for the scan list of a table whose largest index was declared
/// with `buckets` buckets: unlinking a version walks its scan chain, so the
/// chains must stay short as the table grows to its declared size (about
/// four versions per chain).
pub(crate) fn scan_chains(buckets: u64) -> u64 {
    (buckets / 4).clamp(MIN_SCAN_CHAINS, MAX_SCAN_CHAINS)
}

/// The indexes of a table at one moment.
pub(crate) struct IndexSet {
    /// Index in link slot `i + 1`, or a hole left by a dropped index.
    pub(crate) slots: Vec<Option<Arc<Index>>>,
    /// Slots whose index is being dropped: no longer found by name, read
    /// or written, but still unlinked from, because transactions that
    /// began before the drop may still walk it (see `Database::drop_index`).
    pub(crate) retiring: Vec<bool>,
    /// Generation: bumped whenever an index is added.
    pub(crate) gen: u32,
}

impl IndexSet {
    /// Links a version made under this set needs.
    pub(crate) fn links(&self) -> usize {
        1 + self.slots.len()
    }

    /// A set with these indexes and none retiring.
    pub(crate) fn new(slots: Vec<Option<Arc<Index>>>, gen: u32) -> IndexSet {
        let retiring = vec![false; slots.len()];
        IndexSet { slots, retiring, gen }
    }

    /// The live indexes (not those being dropped).
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<Index>> {
        self.slots.iter().zip(&self.retiring).filter(|(_, r)| !**r).filter_map(|(s, _)| s.as_ref())
    }

    /// Every index versions must be unlinked from, retiring ones included.
    pub(crate) fn iter_all(&self) -> impl Iterator<Item = &Arc<Index>> {
        self.slots.iter().flatten()
    }

    /// The indexes the table is defined with: the live ones less those an
    /// open transaction has dropped ([`Index::dropped_by`]).
    pub(crate) fn named(&self) -> impl Iterator<Item = &Arc<Index>> {
        self.iter().filter(|i| i.dropped_by() == 0)
    }

    /// The index named `name`.
    pub(crate) fn find(&self, name: &str) -> Option<&Arc<Index>> {
        self.named().find(|i| i.name() == name)
    }
}

/// A memory-optimized table.
pub struct Table {
    pub(crate) id: u64,
    /// The name, changed by `Database::rename_table` (under the DDL lock).
    name: ArcSwap<String>,
    pub(crate) columns: Vec<Column>,
    pub(crate) layout: RowLayout,
    pub(crate) durability: Durability,
    pub(crate) scan: Chains,
    pub(crate) indexes: ArcSwap<IndexSet>,
    pub(crate) dropped: AtomicBool,
    /// Serialises index creation and removal on this table.
    pub(crate) ddl: Mutex<()>,
    /// The opaque bytes of the layer above (see `TableDef::extra`), changed
    /// by `Database::set_table_extra` (under the DDL lock).
    extra: ArcSwap<Vec<u8>>,
    row_bytes: Counter,
    versions: Counter,
    /// Committed rows (inserts less deletes, and rows recovered).
    pub(crate) live: Counter,
    /// Scans and committed writes (positions in `usage`).
    pub(crate) usage: Tally<5>,
    /// Bytes past which new versions are refused (0: no limit of its own;
    /// see [`Table::set_memory_limit`]).
    memory_limit: AtomicUsize,
    /// Whether the 80% warning was logged (cleared below 70%).
    memory_warned: AtomicBool,
}

/// Positions in a table's usage tally.
pub(crate) mod usage {
    pub(crate) const SEQ_SCANS: usize = 0;
    pub(crate) const SEQ_ROWS: usize = 1;
    pub(crate) const INSERTED: usize = 2;
    pub(crate) const UPDATED: usize = 3;
    pub(crate) const DELETED: usize = 4;
}

/// How a table was read and written since the database opened (or the
/// counters were reset): `pg_stat_user_tables`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableUsage {
    /// Full scans started.
    pub seq_scans: u64,
    /// Visible rows those scans returned.
    pub seq_rows: u64,
    /// Look-ups and range scans through its indexes (their sum).
    pub index_scans: u64,
    /// Visible rows those returned.
    pub index_rows: u64,
    /// Rows inserted, updated and deleted by committed transactions.
    pub inserted: u64,
    /// See `inserted`.
    pub updated: u64,
    /// See `inserted`.
    pub deleted: u64,
    /// Rows live now: rows recovered at open, plus committed inserts, less
    /// committed deletes (not a count of the versions in memory).
    pub live_rows: u64,
    /// Versions in memory that are not live rows: replaced or deleted
    /// ones the collector has not freed yet, and uncommitted ones.
    pub dead_rows: u64,
}

/// Memory used by a table and its indexes.
#[derive(Clone, Debug, PartialEq)]
pub struct TableStats {
    /// Table name.
    pub name: String,
    /// Row versions in memory (live rows and versions awaiting collection).
    pub versions: u64,
    /// Bytes of row versions: headers, links and column data.
    pub row_bytes: u64,
    /// Each index.
    pub indexes: Vec<IndexStats>,
}

impl Table {
    pub(crate) fn new(
        id: u64,
        name: String,
        columns: Vec<Column>,
        durability: Durability,
        extra: Vec<u8>,
        scan_chains: u64,
    ) -> Table {
        let types: Vec<_> = columns.iter().map(|c| c.ty.clone()).collect();
        Table {
            id,
            name: ArcSwap::from_pointee(name),
            layout: RowLayout::new(&types),
            columns,
            durability,
            scan: Chains::with_occupancy(scan_chains, 0),
            indexes: ArcSwap::from_pointee(IndexSet::new(vec![], 0)),
            dropped: AtomicBool::new(false),
            ddl: Mutex::new(()),
            extra: ArcSwap::from_pointee(extra),
            row_bytes: Counter::default(),
            versions: Counter::default(),
            live: Counter::default(),
            usage: Tally::default(),
            memory_limit: AtomicUsize::new(0),
            memory_warned: AtomicBool::new(false),
        }
    }

    /// Bounds the memory of this table's versions and indexes: past
    /// `limit` bytes, inserts and updates into it fail with 53200 while
    /// reads, deletes and the collector go on (SQL Server's resource pool
    /// bound to one database, here to one table). `None` lifts it. The
    /// SQL layer keeps the limit with the table's definition and sets it
    /// whenever it reads that definition.
    pub fn set_memory_limit(&self, limit: Option<usize>) {
        self.memory_limit.store(limit.unwrap_or(0), Relaxed);
    }

    /// The table's own memory limit, if it has one.
    pub fn memory_limit(&self) -> Option<usize> {
        Some(self.memory_limit.load(Relaxed)).filter(|&l| l > 0)
    }

    /// Bytes the table holds: its versions, and its indexes' bucket
    /// arrays, nodes and links. Read from counters, no row is looked at.
    pub fn memory_bytes(&self) -> usize {
        self.row_bytes() + self.indexes.load().iter().map(|i| i.bytes()).sum::<usize>()
    }

    /// Fails with 53200 if a new version of `bytes` would take the table
    /// past its own memory limit; logs a warning once it passes 80%.
    #[inline]
    pub(crate) fn admit(&self, bytes: usize) -> Result<()> {
        let limit = self.memory_limit.load(Relaxed);
        if limit == 0 {
            return Ok(());
        }
        let used = self.memory_bytes();
        crate::memory::warn_near(&self.memory_warned, used, limit, || format!("table \"{}\"", self.name()));
        if used.saturating_add(bytes) > limit {
            return Err(Error::OutOfMemory { limit, used, table: Some(self.name()) });
        }
        Ok(())
    }

    /// Identifier, unique for the life of the database.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Table name (a copy: `Database::rename_table` may change it).
    pub fn name(&self) -> String {
        self.name.load().to_string()
    }

    pub(crate) fn set_name(&self, name: String) {
        self.name.store(Arc::new(name));
    }

    /// The opaque bytes the layer above keeps with the table (see
    /// `TableDef::extra`).
    pub fn extra(&self) -> Vec<u8> {
        self.extra.load().to_vec()
    }

    pub(crate) fn set_extra(&self, extra: Vec<u8>) {
        self.extra.store(Arc::new(extra));
    }

    /// Columns in order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The row layout.
    pub fn layout(&self) -> &RowLayout {
        &self.layout
    }

    /// Durability.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// Number of the column named `name`.
    pub fn column_index(&self, name: &str) -> Result<usize> {
        self.columns.iter().position(|c| c.name == name).ok_or_else(|| Error::NoSuchColumn(name.into()))
    }

    /// The index named `name`.
    pub fn index(&self, name: &str) -> Result<Arc<Index>> {
        self.indexes.load().find(name).cloned().ok_or_else(|| Error::NoSuchIndex(name.into()))
    }

    /// Names of the table's indexes.
    pub fn index_names(&self) -> Vec<String> {
        self.indexes.load().named().map(|i| i.name().to_string()).collect()
    }

    /// The definition that builds this table again: columns, durability,
    /// the indexes in use (not those being dropped) and the extra bytes.
    pub fn def(&self) -> TableDef {
        TableDef {
            name: self.name(),
            columns: self.columns.clone(),
            indexes: self.indexes.load().named().map(|ix| ix.def(&self.columns)).collect(),
            durability: self.durability,
            extra: self.extra(),
        }
    }

    /// The rows a scan should expect to meet, for the planner: the versions
    /// in memory (live rows, uncommitted ones, and replaced ones the
    /// collector has yet to free). One counter read; no row is looked at.
    pub fn row_estimate(&self) -> u64 {
        self.versions.get().max(0) as u64
    }

    /// Memory statistics.
    pub fn stats(&self) -> TableStats {
        TableStats {
            name: self.name(),
            versions: self.versions.get().max(0) as u64,
            row_bytes: self.row_bytes.get().max(0) as u64,
            indexes: self.indexes.load().named().map(|i| i.stats(&self.layout)).collect(),
        }
    }

    /// Scans, look-ups and committed writes; no row is looked at.
    pub fn usage(&self) -> TableUsage {
        let [seq_scans, seq_rows, inserted, updated, deleted] = self.usage.get();
        let (mut index_scans, mut index_rows) = (0, 0);
        for ix in self.indexes.load().iter() {
            let u = ix.usage();
            index_scans += u.scans;
            index_rows += u.rows;
        }
        let live = self.live.get().max(0) as u64;
        let versions = self.versions.get().max(0) as u64;
        TableUsage {
            seq_scans,
            seq_rows,
            index_scans,
            index_rows,
            inserted,
            updated,
            deleted,
            live_rows: live,
            dead_rows: versions.saturating_sub(live),
        }
    }

    /// Counts a commit's rows: `ins` inserted, `upd` updated, `del` deleted.
    #[inline]
    pub(crate) fn count_writes(&self, ins: u64, upd: u64, del: u64) {
        if ins | upd | del == 0 {
            return;
        }
        for (i, n) in [(usage::INSERTED, ins), (usage::UPDATED, upd), (usage::DELETED, del)] {
            if n > 0 {
                self.usage.add(i, n);
            }
        }
        if ins != del {
            self.live.add(ins as i64 - del as i64);
        }
    }

    /// Counts a full scan that starts.
    #[inline]
    pub(crate) fn count_scan(&self) {
        self.usage.add(usage::SEQ_SCANS, 1);
    }

    /// Counts `rows` rows a full scan returned.
    #[inline]
    pub(crate) fn count_scan_rows(&self, rows: u64) {
        self.usage.add(usage::SEQ_ROWS, rows);
    }

    /// Sets the scan and write counters of the table and its indexes back
    /// to zero (`pg_stat_reset`); the live row count stays.
    pub fn reset_usage(&self) {
        self.usage.reset();
        for ix in self.indexes.load().iter() {
            ix.tally().reset();
        }
    }

    pub(crate) fn check_not_dropped(&self) -> Result<()> {
        if self.dropped.load(SeqCst) {
            return Err(Error::Dropped(self.name()));
        }
        Ok(())
    }

    /// The scan chain a version lives in: chosen by address, so concurrent
    /// inserters spread over the chains.
    #[inline]
    fn scan_bucket(&self, v: VersionPtr) -> usize {
        self.scan.bucket_of(v.word() as u64 >> SCAN_REGION_BITS)
    }

    /// Bytes of this table's row versions.
    pub fn row_bytes(&self) -> usize {
        self.row_bytes.get().max(0) as usize
    }

    /// Links a new version into the scan list and every index of `set`.
    pub(crate) fn link(&self, set: &IndexSet, v: VersionPtr) {
        let _c = crate::critical::Critical::enter("linking a new row version into its indexes");
        self.versions.add(1);
        self.row_bytes.add(v.size() as i64);
        self.scan.push(self.scan_bucket(v), v);
        for ix in set.iter() {
            ix.insert(&self.layout, v);
        }
    }

    /// Unlinks a version the caller claimed: marks it in every chain, then
    /// sweeps each of its chains until past it, taking at most `budget`
    /// steps in each. Returns true when it is unlinked (and records so);
    /// otherwise it is left marked (see `VersionPtr::set_marked`), and
    /// the owner of its reclamation sweeps it out. A reader that meets
    /// garbage gives a small budget, so that a chain thousands long (a
    /// hash index with many duplicate keys) never costs it a walk.
    pub(crate) fn unlink(&self, v: VersionPtr, budget: usize) -> bool {
        let _c = crate::critical::Critical::enter("unlinking a row version from its indexes");
        let set = self.indexes.load();
        self.mark_everywhere(&set, v);
        let mut done = true;
        for h in self.hash_chains_of(&set, v) {
            done &= h.chains.sweep_within(h.bucket_of_row(&self.layout, v), Some(v), budget).is_some();
        }
        done &= self.scan.sweep_within(self.scan_bucket(v), Some(v), budget).is_some();
        if done {
            v.set_unlinked();
        } else {
            v.set_marked();
        }
        done
    }

    /// The first half of unlinking a claimed version: its link is marked
    /// in each hash chain and the scan list, and range indexes remove
    /// their entry at once.
    fn mark_everywhere(&self, set: &IndexSet, v: VersionPtr) {
        for ix in set.iter_all() {
            if ix.covers(v) && ix.slot() < v.links() {
                ix.mark(&self.layout, v);
            } else if ix.as_range().is_some() {
                // Entered by the fill of an index built after it was made:
                // the fence pairs with the fill's (see `index::fill`).
                fence(SeqCst);
                ix.mark(&self.layout, v);
            }
        }
        self.scan.mark(v);
    }

    /// The hash indexes of `set` whose chains `v` is in.
    fn hash_chains_of<'s>(&self, set: &'s IndexSet, v: VersionPtr) -> impl Iterator<Item = &'s HashIndex> {
        set.iter_all().filter(move |ix| ix.covers(v) && ix.slot() < v.links()).filter_map(|ix| ix.as_hash())
    }

    /// Unlinks `v` (or waits for whoever claimed it, and finishes its
    /// unlinking if it left that to the owner), stops counting it, and
    /// frees it once every epoch pin that might still see it is gone. The
    /// caller must own `v`'s reclamation: it was never visible to anyone
    /// but its creator, or it is garbage owned by the caller's collector
    /// item.
    pub(crate) fn retire(&self, guard: &crossbeam_epoch::Guard, v: VersionPtr) {
        let _c = crate::critical::Critical::enter("retiring a row version");
        if v.claim() {
            self.unlink(v, usize::MAX);
        } else if v.wait_settled() {
            let set = self.indexes.load();
            for h in self.hash_chains_of(&set, v) {
                h.chains.sweep(h.bucket_of_row(&self.layout, v), Some(v));
            }
            self.scan.sweep(self.scan_bucket(v), Some(v));
            v.set_unlinked();
        }
        self.forget(v);
        // SAFETY: `v` is unreachable from every chain; readers that reached
        // it before hold epoch pins the deferral waits for.
        unsafe { guard.defer_unchecked(move || v.free()) };
    }

    /// [`Table::retire`] for many versions at once, with one deferred free
    /// for all of them (see [`Table::unlink_many`]). With `long`, the
    /// collector's, versions in long hash chains may wait there instead.
    pub(crate) fn retire_all(
        self: &Arc<Self>,
        guard: &crossbeam_epoch::Guard,
        vs: Vec<VersionPtr>,
        long: Option<&mut LongChains>,
    ) {
        let (n, put_off) = self.unlink_many(|| vs.iter().copied(), long.map(|l| (l, guard)));
        let gone: Vec<VersionPtr> =
            if put_off == 0 { vs } else { vs.into_iter().filter(|v| v.is_unlinked()).collect() };
        debug_assert_eq!(gone.len(), n);
        // SAFETY: as in `retire`, for every version unlinked; the others
        // wait in `long`, which frees them.
        unsafe { guard.defer_unchecked(move || gone.into_iter().for_each(|v| v.free())) };
    }

    /// Unlinks many versions the caller owns the reclamation of (claiming
    /// each, or waiting for whoever claimed it first) and stops counting
    /// them; the caller then frees them through the epoch. `vs` lists them,
    /// and is walked three times. Returns how many of them are gone, and
    /// how many were put off (see below).
    ///
    /// Nothing here grows with the number of versions but two bitsets, so
    /// undoing a bulk load that the memory limit stopped does not itself
    /// need much memory. First every claimed version's link is marked in
    /// each hash chain and the scan list (range indexes remove their entry
    /// directly); then each chain that holds one is swept once from its
    /// head, which unlinks every marked version in it (`Chains::sweep`).
    /// Unlinking them one by one would walk a chain once per version, which
    /// is quadratic in a long chain (a tiny `bucket_count`, duplicate keys).
    ///
    /// With `long` (the collector's), a hash chain that its last sweep
    /// found long is swept only once enough versions wait in it (see
    /// [`LongChains`]); the versions put off wait there, still counted,
    /// and `long` frees them. So a sweep costs a bounded number of steps
    /// per version it unlinks, however many duplicate keys share a chain.
    pub(crate) fn unlink_many<I: Iterator<Item = VersionPtr>>(
        self: &Arc<Self>,
        vs: impl Fn() -> I,
        mut long: Option<(&mut LongChains, &crossbeam_epoch::Guard)>,
    ) -> (usize, usize) {
        let _c = crate::critical::Critical::enter("unlinking row versions from their indexes");
        let set = self.indexes.load();
        let mut mine = Bits::default();
        let mut claimed = 0;
        for (i, v) in vs().enumerate() {
            if v.claim() {
                self.mark_everywhere(&set, v);
            } else if !v.wait_settled() {
                continue; // a reader unlinked it
            }
            mine.set(i);
            claimed += 1;
        }
        let ours = || vs().enumerate().filter(|&(i, _)| mine.get(i)).map(|(_, v)| v);
        // Per hash index, the buckets put off (sorted), if any.
        let mut put_off: Vec<(&Arc<Index>, &HashIndex, Vec<usize>)> = vec![];
        for (ix, h) in set.iter_all().filter_map(|ix| ix.as_hash().map(|h| (ix, h))) {
            let layout = &self.layout;
            let covered = ours().filter(|&v| ix.covers(v) && ix.slot() < v.links());
            match long.as_mut() {
                None => h.chains.sweep_each(covered, |v| h.bucket_of_row(layout, v)),
                Some((long, guard)) => {
                    let off = long.sweep(guard, ix, covered.map(|v| h.bucket_of_row(layout, v)).collect());
                    if !off.is_empty() {
                        put_off.push((ix, h, off));
                    }
                }
            }
        }
        self.scan.sweep_each(ours(), claimed, |v| self.scan_bucket(v));
        let (mut n, mut bytes, mut waiting) = (0, 0, 0);
        for (i, v) in vs().enumerate() {
            if mine.get(i) {
                let mut waits = false;
                if let Some((long, _)) = long.as_mut() {
                    for (ix, h, off) in &put_off {
                        let b = h.bucket_of_row(&self.layout, v);
                        if ix.covers(v) && ix.slot() < v.links() && off.binary_search(&b).is_ok() {
                            long.wait(self, ix, b, v);
                            waits = true;
                        }
                    }
                }
                if waits {
                    waiting += 1;
                    continue;
                }
                v.set_unlinked();
            }
            n += 1;
            bytes += v.size() as i64;
        }
        self.versions.add(-n);
        self.row_bytes.add(-bytes);
        (n as usize, waiting)
    }

    /// Stops counting `v`, once it is unlinked.
    fn forget(&self, v: VersionPtr) {
        self.forget_all(&[v]);
    }

    /// Stops counting `vs`, once they are unlinked.
    pub(crate) fn forget_all(&self, vs: &[VersionPtr]) {
        self.versions.add(-(vs.len() as i64));
        self.row_bytes.add(-vs.iter().map(|v| v.size() as i64).sum::<i64>());
    }
}

/// A growable set of small numbers, one bit each.
#[derive(Default)]
pub(crate) struct Bits(Vec<u64>);

impl Bits {
    /// A set able to hold `0..n` without growing.
    pub(crate) fn with_len(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }

    /// Adds `i`.
    pub(crate) fn set(&mut self, i: usize) {
        if i / 64 >= self.0.len() {
            self.0.resize(i / 64 + 1, 0);
        }
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// Whether `i` is in.
    pub(crate) fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table").field("id", &self.id()).field("name", &self.name()).finish()
    }
}

/// Versions from which a dropped table's memory is given back on a thread
/// of its own: a DROP TABLE (or the commit that makes one final) then does
/// not wait for a million frees, as PostgreSQL's does not wait for its
/// files' blocks.
#[cfg(not(loom))]
const FREE_APART: i64 = 100_000;

impl Drop for Table {
    fn drop(&mut self) {
        // Nothing else can reach the table now; versions still in the scan
        // list belong to it alone.
        let versions = Doomed(std::mem::replace(&mut self.scan, Chains::with_occupancy(1, 0)));
        #[cfg(not(loom))]
        if self.versions.get() >= FREE_APART {
            // Should the thread not start, the closure, and with it the
            // versions, is dropped here.
            let _ = std::thread::Builder::new().name("centum-free".into()).spawn(move || drop(versions));
            return;
        }
        drop(versions);
    }
}

/// A dropped table's scan list: dropping it frees every version in it.
struct Doomed(Chains);

impl Drop for Doomed {
    fn drop(&mut self) {
        for b in self.0.buckets_in_use() {
            let mut cur = self.0.first(b);
            while let Some(v) = cur {
                cur = self.0.next(v);
                // SAFETY: no transaction, collector or reader holds the
                // table (they all hold an Arc to it), so the versions are
                // ours; the table gave this list up as it went.
                unsafe { v.free() };
            }
        }
    }
}
