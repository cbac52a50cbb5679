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

use crate::counter::Counter;
use crate::error::{Error, Result};
use crate::index::chain::Chains;
use crate::index::hash::IndexStats;
use crate::index::Index;
use crate::row::layout::RowLayout;
use crate::row::version::VersionPtr;
use crate::schema::{Column, Durability, TableDef};
use arc_swap::ArcSwap;
use std::sync::atomic::{fence, AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

/// Fewest chains in the scan list: enough that concurrent inserters rarely
/// meet on one head.
const MIN_SCAN_CHAINS: u64 = 256;
/// Most chains in the scan list (8 MiB of heads).
const MAX_SCAN_CHAINS: u64 = 1 << 20;

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

    /// The index named `name`.
    pub(crate) fn find(&self, name: &str) -> Option<&Arc<Index>> {
        self.iter().find(|i| i.name() == name)
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
        }
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
        self.indexes.load().iter().map(|i| i.name().to_string()).collect()
    }

    /// The definition that builds this table again: columns, durability,
    /// the indexes in use (not those being dropped) and the extra bytes.
    pub fn def(&self) -> TableDef {
        TableDef {
            name: self.name(),
            columns: self.columns.clone(),
            indexes: self.indexes.load().iter().map(|ix| ix.def(&self.columns)).collect(),
            durability: self.durability,
            extra: self.extra(),
        }
    }

    /// Memory statistics.
    pub fn stats(&self) -> TableStats {
        TableStats {
            name: self.name(),
            versions: self.versions.get().max(0) as u64,
            row_bytes: self.row_bytes.get().max(0) as u64,
            indexes: self.indexes.load().iter().map(|i| i.stats()).collect(),
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
        let a = v.word() as u64 >> 4;
        self.scan.bucket_of(a ^ (a >> 9) ^ (a >> 17))
    }

    /// Bytes of this table's row versions.
    pub(crate) fn row_bytes(&self) -> usize {
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

    /// Unlinks a claimed version from the scan list and every index that
    /// covers it. Afterwards no new reader can reach it.
    pub(crate) fn unlink(&self, v: VersionPtr) {
        let _c = crate::critical::Critical::enter("unlinking a row version from its indexes");
        let set = self.indexes.load();
        for ix in set.iter_all() {
            if ix.covers(v) && ix.slot() < v.links() {
                ix.remove(&self.layout, v);
            } else if ix.as_range().is_some() {
                // Entered by the fill of an index built after it was made.
                fence(SeqCst);
                ix.remove(&self.layout, v);
            }
        }
        self.scan.unlink(self.scan_bucket(v), v);
        v.set_unlinked();
    }

    /// Unlinks `v` (or waits for whoever claimed it to finish unlinking),
    /// stops counting it, and frees it once every epoch pin that might
    /// still see it is gone. The caller must own `v`'s reclamation: it was
    /// never visible to anyone but its creator, or it is garbage owned by
    /// the caller's collector item.
    pub(crate) fn retire(&self, guard: &crossbeam_epoch::Guard, v: VersionPtr) {
        let _c = crate::critical::Critical::enter("retiring a row version");
        if v.claim() {
            self.unlink(v);
        }
        self.forget(v);
        // SAFETY: `v` is unreachable from every chain; readers that reached
        // it before hold epoch pins the deferral waits for.
        unsafe { guard.defer_unchecked(move || v.free()) };
    }

    /// [`Table::retire`] for many versions at once, with one deferred free
    /// for all of them (see [`Table::unlink_many`]).
    pub(crate) fn retire_all(&self, guard: &crossbeam_epoch::Guard, vs: Vec<VersionPtr>) {
        if let [v] = vs[..] {
            return self.retire(guard, v);
        }
        self.unlink_many(|| vs.iter().copied());
        // SAFETY: as in `retire`, for every version of `vs`.
        unsafe { guard.defer_unchecked(move || vs.into_iter().for_each(|v| v.free())) };
    }

    /// Unlinks many versions the caller owns the reclamation of (claiming
    /// each, or waiting for whoever claimed it first) and stops counting
    /// them; the caller then frees them through the epoch. `vs` lists them,
    /// and is walked three times. Returns how many it lists.
    ///
    /// Nothing here grows with the number of versions but two bitsets, so
    /// undoing a bulk load that the memory limit stopped does not itself
    /// need much memory. First every claimed version's link is marked in
    /// each hash chain and the scan list (range indexes remove their entry
    /// directly); then each chain that holds one is swept once from its
    /// head, which unlinks every marked version in it (`Chains::sweep`).
    /// Unlinking them one by one would walk a chain once per version, which
    /// is quadratic in a long chain (a tiny `bucket_count`, duplicate keys).
    pub(crate) fn unlink_many<I: Iterator<Item = VersionPtr>>(&self, vs: impl Fn() -> I) -> usize {
        let _c = crate::critical::Critical::enter("unlinking row versions from their indexes");
        let set = self.indexes.load();
        let mut mine = Bits::default();
        let mut claimed = 0;
        for (i, v) in vs().enumerate() {
            if !v.claim() {
                continue;
            }
            mine.set(i);
            claimed += 1;
            for ix in set.iter_all() {
                if ix.covers(v) && ix.slot() < v.links() {
                    ix.mark(&self.layout, v);
                } else if ix.as_range().is_some() {
                    // As in `unlink`.
                    fence(SeqCst);
                    ix.mark(&self.layout, v);
                }
            }
            self.scan.mark(v);
        }
        let ours = || vs().enumerate().filter(|&(i, _)| mine.get(i)).map(|(_, v)| v);
        for ix in set.iter_all() {
            if let Some(h) = ix.as_hash() {
                let layout = &self.layout;
                let covered = ours().filter(|&v| ix.covers(v) && ix.slot() < v.links());
                h.chains.sweep_each(covered, claimed, |v| h.bucket_of_row(layout, v));
            }
        }
        self.scan.sweep_each(ours(), claimed, |v| self.scan_bucket(v));
        let (mut n, mut bytes) = (0, 0);
        for (i, v) in vs().enumerate() {
            if mine.get(i) {
                v.set_unlinked();
            } else {
                wait_unlinked(v);
            }
            n += 1;
            bytes += v.size() as i64;
        }
        self.versions.add(-n);
        self.row_bytes.add(-bytes);
        n as usize
    }

    /// Stops counting `v`, once it is unlinked (by the caller, or by a
    /// reader that claimed it first and is still at it).
    fn forget(&self, v: VersionPtr) {
        wait_unlinked(v);
        self.versions.add(-1);
        self.row_bytes.add(-(v.size() as i64));
    }
}

/// Waits until a version that a reader claimed (because it met it) is
/// unlinked by that reader.
fn wait_unlinked(v: VersionPtr) {
    let mut spins = 0;
    while !v.is_unlinked() {
        crate::mvcc::clock::backoff(&mut spins);
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

impl Drop for Table {
    fn drop(&mut self) {
        // Nothing else can reach the table now; versions still in the scan
        // list belong to it alone.
        for b in self.scan.buckets_in_use() {
            let mut cur = self.scan.first(b);
            while let Some(v) = cur {
                cur = self.scan.next(v);
                // SAFETY: no transaction, collector or reader holds the table
                // (they all hold an Arc to it), so the versions are ours.
                unsafe { v.free() };
            }
        }
    }
}
