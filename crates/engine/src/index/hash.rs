//! Hash indexes.
//!
//! The versions an index covers are chained through the index's link in
//! the versions themselves, in a split-ordered list whose buckets double
//! online ([`super::split`]): an index costs an 8-byte dummy per bucket
//! plus one link per version. A look-up hashes the key, walks one bucket
//! and compares keys; every key column must be given.
//!
//! `bucket_count` is where an index starts. Every 64th insert or so looks
//! at the entry count, and once the entries pass [`LOAD`] per bucket the
//! buckets double, unless a sample of buckets shows that the chains are
//! long because many versions share a key: more buckets would not shorten
//! those. Then the next look waits until the entries have doubled.
//!
//! Keys with many versions each (a column with few distinct values) make
//! long runs, and an insert walks past the runs of the keys before its own
//! in its bucket. An insert that passes [`CROWDED`] versions of other keys
//! doubles the buckets (while they number under two per entry), which
//! parts colliding keys: a column of 1,000 values ends with about as many
//! buckets as it takes for each value to have one to itself.
//!
//! Statistics never scan the whole index: the entry count is kept as a
//! striped counter, and chain lengths are estimated from a sample of
//! buckets.

use super::split::SplitChains;
use crate::counter::{Counter, Tally};
use crate::row::layout::{KeyDef, Probe, RowLayout};
use crate::row::version::VersionPtr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed, Ordering::SeqCst};

/// A hash index over one table.
pub struct HashIndex {
    pub(crate) name: String,
    pub(crate) unique: bool,
    pub(crate) key: KeyDef,
    pub(crate) chains: SplitChains,
    /// Entries at which growth is next considered.
    grow_at: AtomicU64,
    /// Covers the versions made under this layout generation or later.
    pub(crate) gen: u32,
    /// Snapshots reading at or after this timestamp may use the index.
    pub(crate) ready_ts: AtomicU64,
    /// The open transaction that dropped it (0: none); see
    /// [`super::Index::dropped_by`].
    pub(crate) dropped_by: AtomicU64,
    entries: Counter,
    /// Look-ups and the rows they returned.
    pub(crate) usage: Tally<2>,
}

/// Statistics of one index. The chain figures are for hash indexes, the
/// tree figures for range indexes; the others' are zero.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexStats {
    /// Index name.
    pub name: String,
    /// Number of buckets.
    pub buckets: u64,
    /// Versions linked into the index (all versions, not only live rows).
    pub entries: u64,
    /// Buckets the index was created with (`bucket_count`), which it
    /// doubles from as it grows.
    pub initial_buckets: u64,
    /// Buckets looked at for the chain figures: every bucket up to
    /// `SAMPLE` (4,096), else that many spread evenly over the array.
    pub sampled_buckets: u64,
    /// Estimated share of empty buckets, from the sample (exact when every
    /// bucket was looked at).
    pub empty_bucket_ratio: f64,
    /// Estimated average length of non-empty chains, from the sample.
    pub avg_chain: f64,
    /// Longest chain in the sample.
    pub max_chain: u64,
    /// Current versions (not deleted or replaced) in the sample whose key
    /// equals that of an earlier one in the same chain: rows sharing a key
    /// lengthen its chain whatever the bucket count.
    pub sampled_duplicates: u64,
    /// Range index: levels from the root to the leaves (1: one leaf).
    pub height: u64,
    /// Range index: leaf and inner nodes.
    pub leaves: u64,
    pub inners: u64,
    /// Range index: entries per leaf slot (1.0: every leaf full).
    pub fill: f64,
    /// Bytes used: the buckets plus one link per entry.
    pub bytes: u64,
}

/// Entries per bucket past which a hash index doubles its buckets.
pub const LOAD: u64 = 2;

/// Buckets a growth check samples.
const GROW_SAMPLE: usize = 32;

/// Versions of other keys an insert may walk past before its bucket is
/// split (see [`HashIndex::insert`]).
const CROWDED: usize = 32;

/// Buckets looked at for chain statistics.
pub const SAMPLE: usize = 4096;

impl HashIndex {
    pub(crate) fn new(
        name: String,
        unique: bool,
        key: KeyDef,
        buckets: u64,
        slot: usize,
        gen: u32,
        ready_ts: u64,
    ) -> HashIndex {
        let chains = SplitChains::new(buckets, slot);
        HashIndex {
            name,
            unique,
            key,
            grow_at: AtomicU64::new(LOAD * chains.len() as u64),
            chains,
            gen,
            ready_ts: AtomicU64::new(ready_ts),
            dropped_by: AtomicU64::new(0),
            entries: Counter::default(),
            usage: Tally::default(),
        }
    }

    /// Index name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether keys are unique.
    pub fn is_unique(&self) -> bool {
        self.unique
    }

    /// Key column numbers.
    pub fn key_columns(&self) -> &[usize] {
        &self.key.columns
    }

    /// Links a new version in, and now and then sees whether the buckets
    /// should double (see the module header).
    pub(crate) fn insert(&self, layout: &RowLayout, v: VersionPtr) {
        let hash = self.key.hash_row(layout, v.data());
        let _pin = crossbeam_epoch::pin();
        let (passed, level) = self.chains.insert(hash, v, &|w| self.key.hash_row(layout, w.data()));
        self.entries.add(1);
        if passed >= CROWDED {
            // Keys with many versions each share this bucket, and an insert
            // of one walks past the others' versions: a doubling parts them
            // (each pair with a chance of one half), so long as the buckets
            // stay under two per entry.
            if (self.chains.len() as i64) < 2 * self.entries.get() {
                self.chains.grow_from(level);
            }
        } else if (hash >> 40) & 63 == 0 {
            self.consider_growth(layout);
        }
    }

    /// Doubles the buckets if the entries passed [`LOAD`] per bucket and a
    /// sample of buckets holds more than one key per bucket on average.
    /// The caller holds an epoch pin.
    fn consider_growth(&self, layout: &RowLayout) {
        let entries = self.entries.get().max(0) as u64;
        let at = self.grow_at.load(Relaxed);
        if entries <= at || self.grow_at.compare_exchange(at, u64::MAX, SeqCst, SeqCst).is_err() {
            return; // not yet, or another insert is looking
        }
        let n = self.chains.len();
        let step = n.div_ceil(GROW_SAMPLE).max(1);
        let (mut filled, mut keys) = (0u64, 0u64);
        for b in (0..n).step_by(step).take(GROW_SAMPLE) {
            let mut hashes: Vec<u64> = self
                .chains
                .bucket_versions(b, &|w| self.key.hash_row(layout, w.data()))
                .into_iter()
                .map(|(_, h)| h)
                .collect();
            hashes.sort_unstable();
            hashes.dedup();
            filled += u64::from(!hashes.is_empty());
            keys += hashes.len() as u64;
        }
        // Distinct hashes stand for distinct keys: two keys rarely share one.
        let next = if keys > filled + filled / 2 && self.chains.grow() {
            LOAD * self.chains.len() as u64
        } else {
            entries.saturating_mul(2)
        };
        self.grow_at.store(next, SeqCst);
    }

    /// Marks a version (claimed by the caller) for removal: the first half
    /// of a batch unlink, which sweeps its region afterwards.
    pub(crate) fn mark(&self, v: VersionPtr) {
        self.chains.mark(v);
        self.entries.add(-1);
    }

    /// The region (see [`SplitChains::bucket_of`]) a stored version is in.
    pub(crate) fn bucket_of_row(&self, layout: &RowLayout, v: VersionPtr) -> usize {
        self.chains.bucket_of(self.key.hash_row(layout, v.data()))
    }

    /// The first version a look-up of `probe` walks, and its walk.
    #[inline]
    pub(crate) fn first(&self, probe: &Probe) -> (super::split::Walk, Option<VersionPtr>) {
        self.chains.first(probe.hash)
    }

    /// Whether the index may serve a snapshot reading at `read_ts`.
    pub(crate) fn ready_for(&self, read_ts: u64) -> bool {
        self.ready_ts.load(SeqCst) <= read_ts
    }

    /// Bytes used: the buckets plus one link per entry.
    pub(crate) fn bytes(&self) -> u64 {
        super::split::bucket_bytes(self.chains.len() as u64) as u64 + 8 * self.entries.get().max(0) as u64
    }

    /// Current statistics, from a sample of at most `SAMPLE` (4,096) buckets:
    /// walking chains takes no lock, so writers go on meanwhile.
    pub fn stats(&self, layout: &RowLayout) -> IndexStats {
        // Chains are walked, so versions must not be freed under us.
        let _pin = crossbeam_epoch::pin();
        let n = self.chains.len();
        let step = n.div_ceil(SAMPLE).max(1);
        let (mut seen, mut empty, mut total, mut max, mut dups) = (0u64, 0u64, 0u64, 0u64, 0u64);
        let mut current: Vec<VersionPtr> = Vec::new();
        let hash_of = |w: VersionPtr| self.key.hash_row(layout, w.data());
        for b in (0..n).step_by(step).take(SAMPLE) {
            let mut len = 0u64;
            current.clear();
            for (v, _) in self.chains.bucket_versions(b, &hash_of) {
                len += 1;
                if v.end().load(SeqCst) == crate::mvcc::word::INFINITY {
                    // Compared with the first 64 distinct keys of the
                    // chain: a chain holding more is long anyway.
                    let probe = self.key.probe_row(layout, v.data());
                    if current.iter().any(|c| self.key.matches(layout, c.data(), &probe)) {
                        dups += 1;
                    } else if current.len() < 64 {
                        current.push(v);
                    }
                }
            }
            seen += 1;
            if len == 0 {
                empty += 1;
            }
            total += len;
            max = max.max(len);
        }
        let entries = self.entries.get().max(0) as u64;
        IndexStats {
            name: self.name.clone(),
            buckets: n as u64,
            initial_buckets: self.chains.initial_len() as u64,
            entries,
            sampled_buckets: seen,
            empty_bucket_ratio: empty as f64 / seen.max(1) as f64,
            avg_chain: total as f64 / (seen - empty).max(1) as f64,
            max_chain: max,
            sampled_duplicates: dups,
            height: 0,
            leaves: 0,
            inners: 0,
            fill: 0.0,
            bytes: self.bytes(),
        }
    }
}
