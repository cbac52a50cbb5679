//! Lock-free chains of versions through one link slot: a table's scan list.
//!
//! An array of bucket heads; each bucket is a singly linked list that runs
//! through link `slot` of the versions in it. New versions go in at the
//! head with one compare-and-swap. Removal follows Harris and Michael:
//! first the version's own link is *marked* (bit 0), which freezes it, then
//! its predecessor is swung past it. A marked link can never be changed
//! again, so an unlink can never lose a concurrently inserted or
//! concurrently unlinked neighbour:
//!
//! ```text
//!   bucket -> A -> B -> C            mark B:   B.link = C|1   (frozen)
//!   bucket -> A ------> C            swing A:  CAS A.link B -> C
//! ```
//!
//! Readers walk the chain without locks and skip marked versions. Memory is
//! never freed here: whoever unlinks a version hands it to epoch-based
//! reclamation only after it is unlinked from every chain it was in.
//!
//! A table's scan list is such a family (hash indexes keep theirs in a
//! list that can grow, [`super::split`]), sized for the rows the table may
//! reach, and a scan must visit every bucket. So that a scan costs what
//! the table holds rather than what it was sized for, the scan list keeps
//! an *occupancy map*: one bit per bucket that has ever held a version,
//! and one summary bit per word of those bits. A push sets both (if
//! unset) before it returns, so a scan that begins after a version's
//! transaction commits finds its bucket. Bits are never cleared: clearing
//! one when a bucket empties would race with a push into it, and a scan
//! in the gap would miss a row. A scan therefore visits the buckets the
//! table has ever used, skipping 4,096 unused ones per summary word.

use crate::row::version::VersionPtr;
use crate::sync::{AtomicUsize, Ordering::SeqCst};

/// Bucket heads of one chain family.
pub(crate) struct Chains {
    buckets: Box<[AtomicUsize]>,
    mask: u64,
    slot: usize,
    /// The occupancy map (scan lists only; see the module header).
    occupied: Option<Occupancy>,
}

/// Bits per word of the occupancy map.
const BITS: usize = usize::BITS as usize;

/// Which buckets have ever held a version: bit `b % BITS` of `words[b /
/// BITS]`, and bit `w % BITS` of `summary[w / BITS]` when `words[w]` has
/// any bit set.
struct Occupancy {
    words: Box<[AtomicUsize]>,
    summary: Box<[AtomicUsize]>,
}

impl Occupancy {
    fn new(buckets: usize) -> Occupancy {
        let words = buckets.div_ceil(BITS);
        let zeros = |n: usize| (0..n).map(|_| AtomicUsize::new(0)).collect();
        Occupancy { words: zeros(words), summary: zeros(words.div_ceil(BITS)) }
    }

    /// Marks bucket `b`. Both levels are checked by every caller, so that
    /// when it returns both bits are set whoever set them.
    #[inline]
    fn set(&self, b: usize) {
        let set_bit = |word: &AtomicUsize, bit: usize| {
            if word.load(SeqCst) & (1 << bit) == 0 {
                word.fetch_or(1 << bit, SeqCst);
            }
        };
        let w = b / BITS;
        set_bit(&self.words[w], b % BITS);
        set_bit(&self.summary[w / BITS], w % BITS);
    }

    /// The first marked bucket at or after `from` (and before `end`).
    fn next(&self, from: usize, end: usize) -> Option<usize> {
        let mut w = from / BITS;
        // Bits of the first word below `from` do not count.
        let mut bits = self.words.get(w)?.load(SeqCst) & (usize::MAX << (from % BITS));
        loop {
            if bits != 0 {
                let b = w * BITS + bits.trailing_zeros() as usize;
                return (b < end).then_some(b);
            }
            // The next word with a bit, found through the summary.
            w += 1;
            let mut s = w / BITS;
            let mut marks = self.summary.get(s)?.load(SeqCst) & (usize::MAX << (w % BITS));
            while marks == 0 {
                s += 1;
                if s * BITS * BITS >= end {
                    return None;
                }
                marks = self.summary.get(s)?.load(SeqCst);
            }
            w = s * BITS + marks.trailing_zeros() as usize;
            bits = self.words.get(w)?.load(SeqCst);
        }
    }
}

/// The buckets a chain family (or a hash index, at its start) asked for
/// `buckets` gets: a power of two.
pub(crate) fn bucket_count(buckets: u64) -> u64 {
    buckets.clamp(1, 1 << super::split::MAX_LEVEL).next_power_of_two()
}

impl Chains {
    /// `buckets` (rounded up to a power of two) chains through link `slot`.
    pub(crate) fn new(buckets: u64, slot: usize) -> Chains {
        let n = bucket_count(buckets);
        Chains { buckets: (0..n).map(|_| AtomicUsize::new(0)).collect(), mask: n - 1, slot, occupied: None }
    }

    /// Like [`Chains::new`], with an occupancy map: a scan list.
    pub(crate) fn with_occupancy(buckets: u64, slot: usize) -> Chains {
        let mut c = Chains::new(buckets, slot);
        c.occupied = Some(Occupancy::new(c.len()));
        c
    }

    /// The first bucket at or after `from` and before `end` that may hold
    /// a version: with an occupancy map, the next one that ever held one;
    /// without, `from` itself.
    #[inline]
    pub(crate) fn next_bucket(&self, from: usize, end: usize) -> Option<usize> {
        let end = end.min(self.len());
        match &self.occupied {
            _ if from >= end => None,
            Some(o) => o.next(from, end),
            None => Some(from),
        }
    }

    /// The buckets that may hold a version, in order (see
    /// [`Chains::next_bucket`]).
    pub(crate) fn buckets_in_use(&self) -> impl Iterator<Item = usize> + '_ {
        let mut from = 0;
        std::iter::from_fn(move || {
            let b = self.next_bucket(from, self.len())?;
            from = b + 1;
            Some(b)
        })
    }

    /// Number of buckets.
    pub(crate) fn len(&self) -> usize {
        self.buckets.len()
    }

    /// The bucket for a hash.
    #[inline]
    pub(crate) fn bucket_of(&self, hash: u64) -> usize {
        (hash & self.mask) as usize
    }

    /// Puts `v` at the head of bucket `b`.
    pub(crate) fn push(&self, b: usize, v: VersionPtr) {
        let head = &self.buckets[b];
        let link = v.link(self.slot);
        let mut cur = head.load(SeqCst);
        loop {
            link.store(cur, SeqCst);
            match head.compare_exchange_weak(cur, v.word(), SeqCst, SeqCst) {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
        if let Some(o) = &self.occupied {
            o.set(b);
        }
    }

    /// The first version of bucket `b` (possibly marked: use [`Chains::next`]
    /// and [`Chains::is_live`] to walk).
    #[inline]
    pub(crate) fn first(&self, b: usize) -> Option<VersionPtr> {
        VersionPtr::from_word(self.buckets[b].load(SeqCst))
    }

    /// The version after `v` in its chain.
    #[inline]
    pub(crate) fn next(&self, v: VersionPtr) -> Option<VersionPtr> {
        VersionPtr::from_word(v.link(self.slot).load(SeqCst))
    }

    /// Whether `v` is still in its chain (not marked for removal).
    #[inline]
    pub(crate) fn is_live(&self, v: VersionPtr) -> bool {
        v.link(self.slot).load(SeqCst) & 1 == 0
    }

    /// Removes `v` from bucket `b`. Only the one thread that claimed `v` may
    /// call this; when it returns, `v` is unreachable from the bucket.
    #[cfg(test)]
    pub(crate) fn unlink(&self, b: usize, v: VersionPtr) {
        self.mark(v);
        self.sweep(b, Some(v));
    }

    /// Freezes `v`'s link: the first half of an unlink. Only the one thread
    /// that claimed `v` may call this, and it must then sweep `v`'s bucket.
    pub(crate) fn mark(&self, v: VersionPtr) {
        let link = v.link(self.slot);
        let mut next = link.load(SeqCst);
        while next & 1 == 0 {
            match link.compare_exchange_weak(next, next | 1, SeqCst, SeqCst) {
                Ok(_) => break,
                Err(now) => next = now,
            }
        }
    }

    /// Walks bucket `b` from its head and swings every link that points at
    /// a marked version past it (helping whoever marked it), until it has
    /// swung past `until` or, with `None`, to the end of the chain. When it
    /// returns, every version marked before the call is unreachable from
    /// the bucket: a swing only ever moves a link to a marked version's
    /// successor, so no marked version is ever linked in again.
    ///
    /// Many versions of one bucket are unlinked by marking them all and
    /// sweeping once: unlinking them one by one walks the chain once each,
    /// which is quadratic in a long chain (a tiny `bucket_count`, or many
    /// duplicate keys).
    pub(crate) fn sweep(&self, b: usize, until: Option<VersionPtr>) {
        self.sweep_within(b, until, usize::MAX);
    }

    /// [`Chains::sweep`] that gives up after `budget` steps along the
    /// chain (restarts included). Returns the steps it took, or `None` if
    /// it gave up: then marked versions, `until` among them, may still be
    /// reachable, and whoever owns them must sweep again.
    pub(crate) fn sweep_within(&self, b: usize, until: Option<VersionPtr>, budget: usize) -> Option<usize> {
        sweep_links(&self.buckets[b], self.slot, until, budget, |_| None)
    }

    /// Sweeps, once each, the buckets of the `n` versions `vs` (each marked
    /// before the call), given the bucket of each by `bucket`. Which
    /// buckets are done is kept in a bitset over the buckets when that
    /// takes at most `n` bytes, otherwise in a sorted list of `n` buckets.
    pub(crate) fn sweep_each(
        &self,
        vs: impl Iterator<Item = VersionPtr>,
        n: usize,
        bucket: impl Fn(VersionPtr) -> usize,
    ) {
        if self.len() / 8 <= n.max(64) {
            let mut swept = crate::table::Bits::with_len(self.len());
            for b in vs.map(bucket) {
                if !swept.get(b) {
                    self.sweep(b, None);
                    swept.set(b);
                }
            }
        } else {
            let mut buckets: Vec<usize> = vs.map(bucket).collect();
            buckets.sort_unstable();
            buckets.dedup();
            buckets.into_iter().for_each(|b| self.sweep(b, None));
        }
    }

    /// Length of chain `b` counting only live versions.
    #[cfg(any(test, loom))]
    pub(crate) fn chain_len(&self, b: usize) -> usize {
        let mut n = 0;
        let mut cur = self.first(b);
        while let Some(v) = cur {
            if self.is_live(v) {
                n += 1;
            }
            cur = self.next(v);
        }
        n
    }
}

/// The sweep both kinds of chains share: walks from link `start` through
/// link `slot` of the versions and swings every link that points at a
/// marked version past it (helping whoever marked it), restarting from
/// `start` when a swing fails, until it has swung past `until` or reached
/// the end; after `budget` versions it gives up (`None`). `boundary` says
/// what a word that may not point at a version is: `None` when it does (or
/// ends the chain), `Some(None)` to stop there, `Some(Some(link))` to go
/// on from `link` (a bucket's dummy in a split-ordered list). Returns the
/// versions stepped on.
pub(crate) fn sweep_links<'a>(
    start: &'a AtomicUsize,
    slot: usize,
    until: Option<VersionPtr>,
    budget: usize,
    mut boundary: impl FnMut(usize) -> Option<Option<&'a AtomicUsize>>,
) -> Option<usize> {
    let mut steps = 0usize;
    'search: loop {
        let mut prev = start;
        let mut cur = prev.load(SeqCst);
        loop {
            match boundary(cur) {
                Some(None) => return Some(steps),
                Some(Some(link)) => {
                    prev = link;
                    cur = prev.load(SeqCst);
                    continue;
                }
                None => {}
            }
            // A split-ordered list's pending bit is never set in a version's
            // address, which is 8-aligned.
            let Some(c) = VersionPtr::from_word(cur & !super::split::PENDING) else {
                return Some(steps); // the end: nothing marked is reachable any more
            };
            steps += 1;
            if steps > budget {
                return None;
            }
            let after = c.link(slot).load(SeqCst);
            if after & 1 != 0 {
                // `c` is marked: swing `prev` past it.
                if prev.compare_exchange(cur, after & !1, SeqCst, SeqCst).is_err() {
                    continue 'search;
                }
                if until == Some(c) {
                    return Some(steps);
                }
                cur = after & !1;
            } else {
                prev = c.link(slot);
                cur = after;
            }
        }
    }
}

/// Starts loading the cache line at `p` without waiting for it. Batched
/// look-ups prefetch every bucket, then every first version, so that their
/// cache misses overlap instead of following one another (the SQL layer's
/// operators that read rows out of order do the same).
#[inline]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn version(tag: u8) -> VersionPtr {
        VersionPtr::new(1, 0, 0, 1, 1, |d| d[0] = tag)
    }

    fn tags(c: &Chains, b: usize) -> Vec<u8> {
        let mut out = vec![];
        let mut cur = c.first(b);
        while let Some(v) = cur {
            if c.is_live(v) {
                out.push(v.data()[0]);
            }
            cur = c.next(v);
        }
        out
    }

    #[test]
    fn push_and_unlink_anywhere_in_the_chain() {
        let c = Chains::new(1, 0);
        let vs: Vec<_> = (0..4).map(version).collect();
        for v in &vs {
            c.push(0, *v);
        }
        assert_eq!(tags(&c, 0), [3, 2, 1, 0]);
        c.unlink(0, vs[2]);
        assert_eq!(tags(&c, 0), [3, 1, 0]);
        c.unlink(0, vs[3]);
        c.unlink(0, vs[0]);
        assert_eq!(tags(&c, 0), [1]);
        assert_eq!(c.chain_len(0), 1);
        for v in vs {
            unsafe { v.free() };
        }
    }

    /// Versions reachable from bucket `b`, marked ones included.
    fn reachable(c: &Chains, b: usize) -> usize {
        let mut reach = 0;
        let mut cur = c.first(b);
        while let Some(v) = cur {
            reach += 1;
            cur = c.next(v);
        }
        reach
    }

    #[test]
    fn one_sweep_unlinks_every_marked_version() {
        let c = Chains::new(1, 0);
        let vs: Vec<_> = (0..10).map(version).collect();
        for v in &vs {
            c.push(0, *v);
        }
        for v in vs.iter().filter(|v| v.data()[0] % 3 != 1) {
            c.mark(*v);
        }
        c.sweep(0, None);
        assert_eq!(tags(&c, 0), [7, 4, 1]);
        assert_eq!(reachable(&c, 0), 3, "marked versions are unreachable, not only skipped");
        for v in vs {
            unsafe { v.free() };
        }
    }

    /// One thread removes the odd versions of a 64-version chain (one by
    /// one, or marked together and swept once), the other removes every
    /// fourth one by one; only the versions neither touched remain, and
    /// nothing removed is reachable even through marked links.
    fn race_removals(batch: bool) {
        for _ in 0..200 {
            let c = std::sync::Arc::new(Chains::new(1, 0));
            let vs: Vec<_> = (0..64).map(|i| version(i as u8)).collect();
            for v in &vs {
                c.push(0, *v);
            }
            let odd: Vec<_> = vs.iter().copied().filter(|v| v.data()[0] % 2 == 1).collect();
            let fourth: Vec<_> = vs.iter().copied().filter(|v| v.data()[0] % 4 == 0).collect();
            let h = {
                let c = c.clone();
                std::thread::spawn(move || {
                    if batch {
                        odd.iter().for_each(|v| c.mark(*v));
                        c.sweep(0, None);
                    } else {
                        odd.into_iter().for_each(|v| c.unlink(0, v));
                    }
                })
            };
            fourth.into_iter().for_each(|v| c.unlink(0, v));
            h.join().unwrap();
            let want: Vec<u8> = (0..64u8).rev().filter(|i| i % 4 == 2).collect();
            assert_eq!(tags(&c, 0), want);
            assert_eq!(reachable(&c, 0), want.len());
            for v in vs {
                unsafe { v.free() };
            }
        }
    }

    #[test]
    fn concurrent_sweeps_and_unlinks_lose_nothing() {
        race_removals(true);
    }

    #[test]
    fn concurrent_unlinks_of_neighbours_lose_nothing() {
        race_removals(false);
    }
}

#[cfg(all(test, not(loom)))]
mod occupancy_tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// The occupancy map finds exactly the buckets marked, from any
        /// start to any end, at the edges of words and summary words too.
        #[test]
        fn occupancy_finds_the_marked_buckets(
            shift in 6u32..15,
            marks in proptest::collection::vec(any::<u64>(), 0..40),
            edges in proptest::collection::vec(0usize..8, 0..6),
            probes in proptest::collection::vec((any::<u64>(), any::<u64>()), 1..20),
        ) {
            let n = 1usize << shift;
            let o = Occupancy::new(n);
            let mut model = BTreeSet::new();
            // Random buckets, and some at word and summary-word boundaries.
            let edge = [0, BITS - 1, BITS, BITS * BITS - 1, BITS * BITS, n - 1, n / 2, n / 2 - 1];
            for b in marks.iter().map(|m| *m as usize % n).chain(edges.iter().map(|&e| edge[e] % n)) {
                o.set(b);
                model.insert(b);
            }
            for (from, end) in probes {
                let (from, end) = (from as usize % (n + 1), end as usize % (n + 1));
                let want = if from < end { model.range(from..end).next().copied() } else { None };
                let got = if from < end { o.next(from, end) } else { None };
                prop_assert_eq!(got, want, "from {} end {}", from, end);
            }
            let mut all = Vec::new();
            let mut from = 0;
            while let Some(b) = o.next(from, n) {
                all.push(b);
                from = b + 1;
            }
            prop_assert_eq!(all, model.into_iter().collect::<Vec<_>>());
        }
    }
}
