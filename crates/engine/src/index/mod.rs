//! Indexes: hash indexes built on lock-free chains that run through the row
//! versions themselves (`chain`, `hash`), and range indexes built on a
//! latch-free B+tree (`btree`, `range`).

pub(crate) mod btree;
pub(crate) mod chain;
pub(crate) mod fill;
pub(crate) mod hash;
pub(crate) mod range;
pub(crate) mod split;

use crate::counter::Tally;
use crate::row::layout::RowLayout;
use crate::row::version::VersionPtr;
pub use btree::{BTree, Cursor, Direction};
pub use hash::{HashIndex, IndexStats};
pub use range::RangeIndex;
pub(crate) use split::bucket_bytes;
use std::sync::atomic::Ordering::SeqCst;

/// An index of either kind.
pub enum Index {
    /// Point look-ups on the whole key.
    Hash(HashIndex),
    /// Ordered: prefixes, ranges, both directions.
    Range(RangeIndex),
}

impl Index {
    /// Index name.
    pub fn name(&self) -> &str {
        match self {
            Index::Hash(h) => &h.name,
            Index::Range(r) => &r.name,
        }
    }

    /// Whether keys are unique.
    pub fn is_unique(&self) -> bool {
        match self {
            Index::Hash(h) => h.unique,
            Index::Range(r) => r.unique,
        }
    }

    /// Key column numbers, in key order.
    pub fn key_columns(&self) -> &[usize] {
        match self {
            Index::Hash(h) => &h.key.columns,
            Index::Range(r) => &r.key.columns,
        }
    }

    /// Whether this is a range index.
    pub fn is_range(&self) -> bool {
        matches!(self, Index::Range(_))
    }

    /// The range index, if this is one.
    pub fn as_range(&self) -> Option<&RangeIndex> {
        match self {
            Index::Range(r) => Some(r),
            Index::Hash(_) => None,
        }
    }

    /// The hash index, if this is one.
    pub fn as_hash(&self) -> Option<&HashIndex> {
        match self {
            Index::Hash(h) => Some(h),
            Index::Range(_) => None,
        }
    }

    /// The version link slot the index owns.
    pub(crate) fn slot(&self) -> usize {
        match self {
            Index::Hash(h) => h.chains.slot(),
            Index::Range(r) => r.slot,
        }
    }

    /// Whether `v` was made under a layout that includes this index.
    #[inline]
    pub(crate) fn covers(&self, v: VersionPtr) -> bool {
        let gen = match self {
            Index::Hash(h) => h.gen,
            Index::Range(r) => r.gen,
        };
        v.header().gen >= gen
    }

    /// Adds a new version.
    #[inline]
    pub(crate) fn insert(&self, layout: &RowLayout, v: VersionPtr) {
        match self {
            Index::Hash(h) => h.insert(layout, v),
            Index::Range(r) => r.insert(layout, v),
        }
    }

    /// The first half of removing a version (claimed by the caller) in a
    /// batch: a hash index marks its link, to be swept later; a range index
    /// removes its entry at once.
    pub(crate) fn mark(&self, layout: &RowLayout, v: VersionPtr) {
        match self {
            Index::Hash(h) => h.mark(v),
            Index::Range(r) => r.remove(layout, v),
        }
    }

    /// Whether the index may serve a snapshot reading at `read_ts`.
    pub(crate) fn ready_for(&self, read_ts: u64) -> bool {
        match self {
            Index::Hash(h) => h.ready_for(read_ts),
            Index::Range(r) => r.ready_for(read_ts),
        }
    }

    /// The open transaction that has dropped the index (0: none). Such an
    /// index stays in its table, read and written by everyone, so that the
    /// transaction's abort (or a ROLLBACK TO) can bring it back; but to that
    /// transaction it is gone: not found by name, not in the table's
    /// definition, and not holding its writes to unique keys. Its name is
    /// free for a new index. It is retired when the transaction commits
    /// (see [`crate::ddl`]).
    pub(crate) fn dropped_by(&self) -> u64 {
        match self {
            Index::Hash(h) => h.dropped_by.load(SeqCst),
            Index::Range(r) => r.dropped_by.load(SeqCst),
        }
    }

    /// Marks the index dropped by transaction `txn` (0: brings it back).
    pub(crate) fn set_dropped_by(&self, txn: u64) {
        match self {
            Index::Hash(h) => h.dropped_by.store(txn, SeqCst),
            Index::Range(r) => r.dropped_by.store(txn, SeqCst),
        }
    }

    /// Lets snapshots from `ts` on use the index.
    pub(crate) fn set_ready(&self, ts: u64) {
        match self {
            Index::Hash(h) => h.ready_ts.store(ts, SeqCst),
            Index::Range(r) => r.ready_ts.store(ts, SeqCst),
        }
    }

    /// The definition that builds this index again, given its table's
    /// columns (a hash index gives its rounded bucket count).
    pub fn def(&self, columns: &[crate::schema::Column]) -> crate::schema::IndexDef {
        let names: Vec<&str> = self.key_columns().iter().map(|&c| columns[c].name.as_str()).collect();
        let def = match self {
            Index::Hash(h) => crate::schema::IndexDef::hash(&h.name, &names, h.chains.initial_len() as u64),
            Index::Range(r) => crate::schema::IndexDef::range(&r.name, &names).descending(r.key.descending()),
        };
        if self.is_unique() {
            def.unique()
        } else {
            def
        }
    }

    /// Bytes the index holds (as in its statistics), from counters.
    pub fn bytes(&self) -> usize {
        match self {
            Index::Hash(h) => h.bytes() as usize,
            Index::Range(r) => r.bytes() as usize,
        }
    }

    /// Current statistics.
    pub fn stats(&self, layout: &RowLayout) -> IndexStats {
        match self {
            Index::Hash(h) => h.stats(layout),
            Index::Range(r) => r.stats(),
        }
    }

    /// How often the index was read since the database opened (or the
    /// counters were reset): no chain or node is walked to answer.
    pub fn usage(&self) -> IndexUsage {
        let [scans, rows] = self.tally().get();
        IndexUsage { scans, rows }
    }

    pub(crate) fn tally(&self) -> &Tally<2> {
        match self {
            Index::Hash(h) => &h.usage,
            Index::Range(r) => &r.usage,
        }
    }

    /// Counts `scans` look-ups or scans of the index that returned `rows`
    /// rows.
    #[inline]
    pub(crate) fn count_scans(&self, scans: u64, rows: u64) {
        let t = self.tally();
        t.add(usage::SCANS, scans);
        if rows > 0 {
            t.add(usage::ROWS, rows);
        }
    }

    /// Counts `rows` more rows returned by a scan already counted.
    #[inline]
    pub(crate) fn count_rows(&self, rows: u64) {
        self.tally().add(usage::ROWS, rows);
    }
}

/// Positions in an index's usage tally.
mod usage {
    pub(super) const SCANS: usize = 0;
    pub(super) const ROWS: usize = 1;
}

/// How often an index was read (`pg_stat_user_indexes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IndexUsage {
    /// Look-ups and range scans started on it.
    pub scans: u64,
    /// Visible rows they returned.
    pub rows: u64,
}
