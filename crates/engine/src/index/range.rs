//! Range indexes: an ordered index over one or more columns, serving
//! equality on leading key columns, ranges, ORDER BY in either direction,
//! and MIN/MAX.
//!
//! Every row version is one entry of a [`BTree`]: its key is the
//! order-preserving encoding of the version's key columns
//! ([`crate::row::sortkey`]) and its value is the version's address, so
//! many versions of one key (old versions, or rows of a non-unique key)
//! sit side by side. Readers filter entries by visibility as they do in a
//! hash chain. When the collector unlinks a version it removes the
//! version's entry, found again by recomputing its key from the version.
//!
//! The version keeps a link slot for the index as for any index (so index
//! creation and the index generation work the same for both kinds); the
//! range index does not use it.

use super::btree::{BTree, Cursor, Direction};
use super::hash::IndexStats;
use crate::counter::Tally;
use crate::row::layout::RowLayout;
use crate::row::sortkey::{KeyBytes, SortKeyDef};
use crate::row::version::VersionPtr;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

/// A range index over one table.
pub struct RangeIndex {
    pub(crate) name: String,
    pub(crate) unique: bool,
    pub(crate) key: SortKeyDef,
    pub(crate) tree: BTree,
    pub(crate) slot: usize,
    pub(crate) gen: u32,
    pub(crate) ready_ts: AtomicU64,
    /// The open transaction that dropped it (0: none); see
    /// [`super::Index::dropped_by`].
    pub(crate) dropped_by: AtomicU64,
    /// Look-ups and scans, and the rows they returned.
    pub(crate) usage: Tally<2>,
}

impl RangeIndex {
    pub(crate) fn new(
        name: String,
        unique: bool,
        key: SortKeyDef,
        slot: usize,
        gen: u32,
        ready_ts: u64,
    ) -> RangeIndex {
        RangeIndex {
            name,
            unique,
            key,
            tree: BTree::new(),
            slot,
            gen,
            ready_ts: AtomicU64::new(ready_ts),
            dropped_by: AtomicU64::new(0),
            usage: Tally::default(),
        }
    }

    /// The key bytes of a stored version.
    #[inline]
    pub(crate) fn key_of(&self, layout: &RowLayout, v: VersionPtr) -> KeyBytes {
        let mut k = KeyBytes::new();
        self.key.encode_row(layout, v.data(), &mut k);
        k
    }

    /// Adds a new version's entry.
    pub(crate) fn insert(&self, layout: &RowLayout, v: VersionPtr) {
        let k = self.key_of(layout, v);
        self.tree.insert(&k, v.word() as u64);
    }

    /// Removes an unlinked version's entry.
    pub(crate) fn remove(&self, layout: &RowLayout, v: VersionPtr) {
        let k = self.key_of(layout, v);
        self.tree.remove(&k, v.word() as u64);
    }

    /// Passes the versions whose key lies in `[lo, hi)` to `f` in direction
    /// `dir`, a leaf at a time, until `f` returns false. The caller holds
    /// an epoch pin for as long as it uses the versions.
    pub(crate) fn for_each(
        &self,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
        dir: Direction,
        mut f: impl FnMut(VersionPtr) -> bool,
    ) {
        let mut c = Cursor::new(lo, hi, dir);
        let mut go = true;
        while go
            && self.tree.next_batch(&mut c, |w| {
                go = VersionPtr::from_word(w as usize).is_none_or(&mut f);
                go
            })
        {}
    }

    /// [`RangeIndex::for_each`] forward over `[lo, hi)`, for a range that
    /// is usually a handful of entries (one key's versions): a single
    /// descent when one leaf holds it, a cursor scan otherwise.
    pub(crate) fn for_each_short(&self, lo: &[u8], hi: Option<&[u8]>, mut f: impl FnMut(VersionPtr) -> bool) {
        if let Some(hi) = hi {
            if self.tree.scan_short(lo, hi, |w| VersionPtr::from_word(w as usize).is_none_or(&mut f)) {
                return;
            }
        }
        self.for_each(Some(lo), hi, Direction::Forward, f)
    }

    /// Bytes used: nodes, keys and one link per entry.
    pub(crate) fn bytes(&self) -> u64 {
        self.tree.bytes() + 8 * self.tree.len()
    }

    /// Current statistics.
    pub fn stats(&self) -> IndexStats {
        let t = self.tree.stats();
        IndexStats {
            initial_buckets: 0,
            name: self.name.clone(),
            buckets: 0,
            entries: t.entries,
            sampled_buckets: 0,
            empty_bucket_ratio: 0.0,
            avg_chain: 0.0,
            max_chain: 0,
            sampled_duplicates: 0,
            height: t.height,
            leaves: t.leaves,
            inners: t.inners,
            fill: t.entries as f64 / (t.leaves * t.leaf_capacity).max(1) as f64,
            bytes: t.bytes + 8 * t.entries,
        }
    }

    pub(crate) fn ready_for(&self, read_ts: u64) -> bool {
        self.ready_ts.load(SeqCst) <= read_ts
    }
}
