//! Hash chains that grow online: a split-ordered list.
//!
//! A hash index keeps every version it covers in one lock-free list that
//! runs through the index's link slot in the versions, sorted by the
//! *split-order key* of each version's hash: the hash with its top bit set,
//! bit-reversed. A bucket is a *dummy* node in that list at the bucket
//! number bit-reversed, so the versions of bucket `b` (at `2^k` buckets:
//! the hashes whose low `k` bits are `b`) follow `b`'s dummy, up to the
//! next dummy:
//!
//! ```text
//!   4 buckets:  d0 -> h..00 -> d2 -> h..10 -> d1 -> h..01 -> d3 -> h..11
//!   8 buckets:  d0 -> h.000 -> d4 -> h.100 -> d2 -> ...
//! ```
//!
//! Doubling the buckets moves nothing (Shalev and Shavit, "Split-Ordered
//! Lists"): bucket `b + 2^k` is the upper half of bucket `b`'s versions, so
//! its dummy is inserted in the middle of `b`'s run, and until it is, the
//! versions are reached from `b`'s dummy. The growth publishes a new
//! segment of dummies (a directory of segments, so no array is ever
//! copied) and then the new bucket count; each new dummy is linked in by
//! the first insert into its bucket.
//!
//! Links are words: bit 0 marks the version that owns the link for removal
//! (Harris and Michael, as in [`super::chain`]), bit 1 tags a link to a
//! dummy, 0 ends the list. A dummy is just its link, 8 bytes: its key
//! follows from its place in the segments, and bit 2 of its link says that
//! the insert linking it in has not finished (a dummy no insert has linked
//! holds [`UNLINKED`]). Dummies are never removed. An insert walks from
//! its bucket's dummy to the first node whose key is not below its own
//! and links in there with one compare-and-swap, helping unlink the marked
//! versions it passes; a new version goes before the older versions with
//! its key, so a walk from a version meets the versions linked before it.
//!
//! A reader walks from its bucket's dummy (or the nearest ancestor whose
//! dummy is linked) and stops at the first dummy whose key is above its
//! hash's: every version with that hash lies before it. When the walk began
//! at the bucket's own dummy and the bucket count has not changed, the
//! first dummy met is known to end the bucket, and its key is not looked
//! up: a dummy between the bucket's own and that key would belong to a
//! bucket past the count.
//!
//! Memory is never freed here but the dummies' segments, when the index
//! is dropped; versions are reclaimed by their table through the epoch.

use super::chain::bucket_count;
use crate::row::version::VersionPtr;
use crate::sync::{AtomicUsize, Ordering::SeqCst};

/// Link bit: the version owning this link is being unlinked.
const MARK: usize = 1;
/// Link bit: the link points to a bucket's dummy, not to a version.
const DUMMY: usize = 2;
/// Bit of a dummy's own link: it is being linked in.
pub(crate) const PENDING: usize = 4;
/// A dummy's link before any insert claimed it (never a link otherwise:
/// dummies are never marked).
const UNLINKED: usize = PENDING | MARK;
/// Most buckets: `2^MAX_LEVEL`.
pub(crate) const MAX_LEVEL: u32 = 40;

/// One bucket's place in the list: its link.
#[repr(transparent)]
struct Dummy {
    link: AtomicUsize,
}

impl Dummy {
    /// Whether it is in the list, its insert finished.
    #[inline]
    fn ready(&self) -> bool {
        self.link.load(SeqCst) & (PENDING | MARK) == 0
    }

    /// Its link as a successor word (without the pending bit).
    #[inline]
    fn next(&self) -> usize {
        self.link.load(SeqCst) & !PENDING
    }
}

/// The split-order key of a version whose hash is `hash` (odd).
#[inline]
fn node_key(hash: u64) -> u64 {
    (hash | 1 << 63).reverse_bits()
}

/// The split-order key of bucket `b`'s dummy (even).
#[inline]
fn dummy_key(b: usize) -> u64 {
    (b as u64).reverse_bits()
}

/// The bucket `b`'s versions were in before the last doubling that split
/// it off (bucket 0 has none).
#[inline]
fn parent(b: usize) -> usize {
    b & !(1 << (usize::BITS - 1 - b.leading_zeros()))
}

/// A place in a walk of the chains: the key the walk looks for, and what
/// it knew when it began.
#[derive(Clone, Copy)]
pub(crate) struct Walk {
    key: u64,
    level: u32,
    /// Began at its own bucket's dummy, `level` then current.
    exact: bool,
}

/// The buckets of one hash index: a split-ordered list through link `slot`.
pub(crate) struct SplitChains {
    slot: usize,
    /// log2 of the buckets of segment 0.
    base: u32,
    /// log2 of the buckets in use.
    level: AtomicUsize,
    /// Segment 0 holds buckets `0..2^base`; segment `i > 0` holds
    /// `2^(base+i-1)..2^(base+i)`. Each is a leaked `Box<[Dummy]>`.
    segments: Box<[AtomicUsize]>,
}

// SAFETY: the segments are shared through atomics and freed only on drop.
unsafe impl Send for SplitChains {}
unsafe impl Sync for SplitChains {}

/// A leaked segment of `n` fresh dummies.
fn segment(n: usize) -> usize {
    let s: Box<[Dummy]> = (0..n).map(|_| Dummy { link: AtomicUsize::new(UNLINKED) }).collect();
    Box::into_raw(s) as *mut Dummy as usize
}

/// The bytes of the starting buckets of a hash index asked for `buckets`.
pub(crate) fn bucket_bytes(buckets: u64) -> usize {
    usize::try_from(bucket_count(buckets)).unwrap_or(usize::MAX).saturating_mul(std::mem::size_of::<Dummy>())
}

impl SplitChains {
    /// `buckets` (rounded up to a power of two) chains through link `slot`,
    /// every dummy linked.
    pub(crate) fn new(buckets: u64, slot: usize) -> SplitChains {
        let n = bucket_count(buckets) as usize;
        let base = n.trailing_zeros();
        let segments: Box<[AtomicUsize]> = (0..=(MAX_LEVEL - base)).map(|_| AtomicUsize::new(0)).collect();
        segments[0].store(segment(n), SeqCst);
        let c = SplitChains { slot, base, level: AtomicUsize::new(base as usize), segments };
        // In split order, bucket `rev(i)` follows bucket `rev(i - 1)`.
        let rev = |i: usize| if base == 0 { 0 } else { i.reverse_bits() >> (usize::BITS - base) };
        for i in 0..n {
            let d = c.dummy(rev(i));
            let next = if i + 1 < n { c.dummy(rev(i + 1)) as *const Dummy as usize | DUMMY } else { 0 };
            d.link.store(next, SeqCst);
        }
        c
    }

    /// Number of buckets in use.
    pub(crate) fn len(&self) -> usize {
        1 << self.level()
    }

    /// Buckets it started with.
    pub(crate) fn initial_len(&self) -> usize {
        1 << self.base
    }

    #[inline]
    fn level(&self) -> u32 {
        self.level.load(SeqCst) as u32
    }

    /// The link slot the chains run through.
    pub(crate) fn slot(&self) -> usize {
        self.slot
    }

    /// Bucket `b`'s dummy; its segment must be published.
    #[inline]
    fn dummy(&self, b: usize) -> &Dummy {
        let (seg, off) = if b < 1 << self.base {
            (0, b)
        } else {
            let top = usize::BITS - 1 - b.leading_zeros();
            ((top - self.base + 1) as usize, b - (1 << top))
        };
        let p = self.segments[seg].load(SeqCst) as *const Dummy;
        debug_assert!(!p.is_null(), "bucket {b} of an unpublished segment");
        // SAFETY: segments are published before the level that uses them
        // and freed only on drop; `off` is within segment `seg`.
        unsafe { &*p.add(off) }
    }

    /// The dummy a link word points to.
    #[inline]
    fn dummy_at(&self, word: usize) -> &Dummy {
        // SAFETY: a DUMMY-tagged link points into a segment of these
        // chains, which lives as long as they do.
        unsafe { &*((word & !(MARK | DUMMY | PENDING)) as *const Dummy) }
    }

    /// The bucket number of the dummy a link word points to.
    fn bucket_at(&self, word: usize) -> usize {
        let p = word & !(MARK | DUMMY | PENDING);
        let size = std::mem::size_of::<Dummy>();
        for (i, seg) in self.segments.iter().enumerate() {
            let (first, n) = if i == 0 {
                (0, 1 << self.base)
            } else {
                (1 << (self.base + i as u32 - 1), 1 << (self.base + i as u32 - 1))
            };
            let at = seg.load(SeqCst);
            if at != 0 && p >= at && p < at + n * size {
                return first + (p - at) / size;
            }
        }
        unreachable!("a dummy link outside every segment")
    }

    /// The split-order key of the dummy a link word points to.
    #[inline]
    fn key_at(&self, word: usize) -> u64 {
        dummy_key(self.bucket_at(word))
    }

    /// Bucket `b`'s dummy if it is linked, else its nearest linked
    /// ancestor's; and whether it is `b`'s.
    #[inline]
    fn start(&self, b: usize) -> (&Dummy, bool) {
        let mut j = b;
        loop {
            let d = self.dummy(j);
            if j == 0 || d.ready() {
                return (d, j == b);
            }
            j = parent(j);
        }
    }

    /// The bucket (at the current count) a hash is in, as a *region*: the
    /// bucket number with a bit above it for the count, `2^k | b`, which
    /// names the same versions however the count grows later.
    #[inline]
    pub(crate) fn bucket_of(&self, hash: u64) -> usize {
        let level = self.level();
        (1 << level) | (hash as usize & ((1 << level) - 1))
    }

    /// Asks the CPU to start loading the dummy of `hash`'s bucket.
    #[inline]
    pub(crate) fn prefetch(&self, hash: u64) {
        let level = self.level();
        let d = self.dummy(hash as usize & ((1 << level) - 1));
        super::chain::prefetch(d as *const Dummy as *const u8);
    }

    /// The first version of `hash`'s bucket (possibly marked, possibly of
    /// another hash: walk on with [`SplitChains::next`], check with
    /// [`SplitChains::is_live`] and compare keys).
    #[inline]
    pub(crate) fn first(&self, hash: u64) -> (Walk, Option<VersionPtr>) {
        let level = self.level();
        let (d, exact) = self.start(hash as usize & ((1 << level) - 1));
        let w = Walk { key: node_key(hash), level, exact };
        (w, self.follow(&w, d.next()))
    }

    /// A walk for `hash` that begins at a version with that hash.
    pub(crate) fn walk_from(&self, hash: u64) -> Walk {
        Walk { key: node_key(hash), level: 0, exact: false }
    }

    /// The version after `v` in walk `w`.
    #[inline]
    pub(crate) fn next(&self, w: &Walk, v: VersionPtr) -> Option<VersionPtr> {
        self.follow(w, v.link(self.slot).load(SeqCst))
    }

    /// The version a link word leads to in walk `w`: past dummies below
    /// the key looked for, and none at a dummy above it.
    #[inline]
    fn follow(&self, w: &Walk, mut word: usize) -> Option<VersionPtr> {
        loop {
            if word & DUMMY == 0 {
                return VersionPtr::from_word(word);
            }
            // No dummy after the bucket's own can be below the key unless
            // the count grew since the walk began (see the module header).
            if w.exact && self.level() == w.level {
                return None;
            }
            if self.key_at(word) > w.key {
                return None;
            }
            word = self.dummy_at(word).next();
        }
    }

    /// Whether `v` is still in its chain (not marked for removal).
    #[inline]
    pub(crate) fn is_live(&self, v: VersionPtr) -> bool {
        v.link(self.slot).load(SeqCst) & MARK == 0
    }

    /// Links `v`, whose hash is `hash`, in before the versions with its key.
    /// `hash_of` gives the hash of any version in the chains. The caller
    /// holds an epoch pin: the walk reads the versions it passes. Returns
    /// the versions of other hashes the walk passed, and the bucket level
    /// it began at (for [`SplitChains::grow_from`]).
    pub(crate) fn insert(
        &self,
        hash: u64,
        v: VersionPtr,
        hash_of: &dyn Fn(VersionPtr) -> u64,
    ) -> (usize, u32) {
        let level = self.level();
        let b = hash as usize & ((1 << level) - 1);
        let (start, own) = self.ready(b, hash_of);
        let exact = own.then_some(level);
        (self.link_in(start, exact, node_key(hash), v.word(), v.link(self.slot), hash_of), level)
    }

    /// Bucket `b`'s dummy, linked first if no insert has linked it yet, or
    /// an ancestor's while another insert is linking it; and whether it is
    /// `b`'s own.
    fn ready(&self, b: usize, hash_of: &dyn Fn(VersionPtr) -> u64) -> (&Dummy, bool) {
        let d = self.dummy(b);
        if b == 0 || d.ready() {
            return (d, true);
        }
        let (up, _) = self.ready(parent(b), hash_of);
        if d.link.compare_exchange(UNLINKED, PENDING, SeqCst, SeqCst).is_err() {
            return if d.ready() { (d, true) } else { (up, false) };
        }
        let word = d as *const Dummy as usize | DUMMY;
        self.link_in(up, None, dummy_key(b), word, &d.link, hash_of);
        // Inserts after it may have cleared the bit already.
        d.link.fetch_and(!PENDING, SeqCst);
        (d, true)
    }

    /// Links the node `word` (whose own link is `own`, whose key is `key`)
    /// in after `start` before the first node whose key is not below
    /// `key`, helping unlink marked versions on the way. With `exact`,
    /// `start` is the dummy of the node's bucket at that level (see
    /// [`SplitChains::follow`]). A dummy being linked in carries the
    /// pending bit in its own link until then. Returns the versions it
    /// passed (all of keys below `key`) on its last try.
    fn link_in(
        &self,
        start: &Dummy,
        exact: Option<u32>,
        key: u64,
        word: usize,
        own: &AtomicUsize,
        hash_of: &dyn Fn(VersionPtr) -> u64,
    ) -> usize {
        'search: loop {
            let mut prev = &start.link;
            let mut cur = prev.load(SeqCst);
            let mut passed = 0;
            loop {
                if cur & MARK != 0 {
                    continue 'search; // `prev` is being unlinked
                }
                let here = if cur & !PENDING == 0 {
                    true
                } else if cur & DUMMY != 0 {
                    if exact != Some(self.level()) && self.key_at(cur) < key {
                        prev = &self.dummy_at(cur).link;
                        cur = prev.load(SeqCst);
                        continue;
                    }
                    true
                } else {
                    let c = VersionPtr::from_word(cur & !PENDING).expect("non-zero link");
                    let after = c.link(self.slot).load(SeqCst);
                    if after & MARK != 0 {
                        if prev.compare_exchange(cur, after & !MARK, SeqCst, SeqCst).is_err() {
                            continue 'search;
                        }
                        cur = after & !MARK;
                        continue;
                    }
                    if node_key(hash_of(c)) < key {
                        prev = c.link(self.slot);
                        cur = after;
                        passed += 1;
                        continue;
                    }
                    true
                };
                debug_assert!(here);
                let pending = if word & DUMMY != 0 { PENDING } else { 0 };
                own.store(cur & !PENDING | pending, SeqCst);
                if prev.compare_exchange(cur, word, SeqCst, SeqCst).is_ok() {
                    return passed;
                }
                continue 'search;
            }
        }
    }

    /// Doubles the buckets, unless at the limit. Returns whether this
    /// call doubled them (a concurrent call may have).
    pub(crate) fn grow(&self) -> bool {
        self.grow_from(self.level())
    }

    /// [`SplitChains::grow`] if the buckets are still at `level` (`2^level`
    /// of them): of many inserts that saw the same crowding, one doubles.
    pub(crate) fn grow_from(&self, level: u32) -> bool {
        if level >= MAX_LEVEL || level != self.level() {
            return false;
        }
        let seg = &self.segments[(level - self.base + 1) as usize];
        if seg.load(SeqCst) == 0 {
            let fresh = segment(1 << level);
            if seg.compare_exchange(0, fresh, SeqCst, SeqCst).is_err() {
                // SAFETY: `fresh` was never published.
                unsafe { free_segment(fresh, 1 << level) };
            }
        }
        self.level.compare_exchange(level as usize, level as usize + 1, SeqCst, SeqCst).is_ok()
    }

    /// Freezes `v`'s link: the first half of an unlink. Only the one thread
    /// that claimed `v` may call this, and it must then sweep `v`'s bucket.
    pub(crate) fn mark(&self, v: VersionPtr) {
        let link = v.link(self.slot);
        let mut next = link.load(SeqCst);
        while next & MARK == 0 {
            match link.compare_exchange_weak(next, next | MARK, SeqCst, SeqCst) {
                Ok(_) => break,
                Err(now) => next = now,
            }
        }
    }

    /// Removes `v` (hash `hash`). Only the thread that claimed `v` may call
    /// this; when it returns, `v` is unreachable.
    #[cfg(any(test, loom))]
    pub(crate) fn unlink(&self, hash: u64, v: VersionPtr) {
        self.mark(v);
        self.sweep(self.bucket_of(hash), Some(v));
    }

    /// Walks `region` (see [`SplitChains::bucket_of`]) and swings every
    /// link that points at a marked version past it, until it has swung
    /// past `until` or, with `None`, to the region's end. When it returns,
    /// every version of the region marked before the call is unreachable.
    pub(crate) fn sweep(&self, region: usize, until: Option<VersionPtr>) {
        self.sweep_within(region, until, usize::MAX);
    }

    /// [`SplitChains::sweep`] that gives up after `budget` versions
    /// (restarts included). Returns the versions it stepped on, or `None`
    /// if it gave up: then marked versions, `until` among them, may still
    /// be reachable, and whoever owns them must sweep again.
    pub(crate) fn sweep_within(
        &self,
        region: usize,
        until: Option<VersionPtr>,
        budget: usize,
    ) -> Option<usize> {
        let level = usize::BITS - 1 - region.leading_zeros();
        let b = region ^ (1 << level);
        // The keys of the region's versions: its dummy's top `level` bits.
        let last = dummy_key(b) | (u64::MAX >> level);
        let (start, own) = self.start(b);
        super::chain::sweep_links(&start.link, self.slot, until, budget, |cur| {
            if cur & DUMMY == 0 {
                None
            } else if (own && self.level() == level) || self.key_at(cur) > last {
                // The region's own dummy at its own level: the next dummy
                // ends it (see `follow`).
                Some(None)
            } else {
                Some(Some(&self.dummy_at(cur).link))
            }
        })
    }

    /// Sweeps, once each, the regions of the versions `vs` (each marked
    /// before the call), given the region of each by `region`.
    pub(crate) fn sweep_each(
        &self,
        vs: impl Iterator<Item = VersionPtr>,
        region: impl Fn(VersionPtr) -> usize,
    ) {
        let mut regions: Vec<usize> = vs.map(region).collect();
        regions.sort_unstable();
        regions.dedup();
        regions.into_iter().for_each(|r| self.sweep(r, None));
    }

    /// The live versions of bucket `b` (at the current count), each with
    /// its hash, in chain order. The caller holds an epoch pin.
    pub(crate) fn bucket_versions(
        &self,
        b: usize,
        hash_of: &dyn Fn(VersionPtr) -> u64,
    ) -> Vec<(VersionPtr, u64)> {
        let level = self.level();
        let lo = dummy_key(b);
        let last = lo | (u64::MAX >> level);
        let (start, _) = self.start(b);
        let mut out = vec![];
        let mut word = start.next();
        loop {
            if word & DUMMY != 0 {
                if self.key_at(word) > last {
                    return out;
                }
                word = self.dummy_at(word).next();
                continue;
            }
            let Some(v) = VersionPtr::from_word(word) else { return out };
            word = v.link(self.slot).load(SeqCst);
            if word & MARK == 0 {
                let h = hash_of(v);
                if (lo..=last).contains(&node_key(h)) {
                    out.push((v, h));
                }
            }
        }
    }
}

/// Frees a segment of `n` dummies made by [`segment`].
///
/// # Safety
/// `p` came from `segment(n)` and nothing uses it any more.
unsafe fn free_segment(p: usize, n: usize) {
    drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(p as *mut Dummy, n)));
}

impl Drop for SplitChains {
    fn drop(&mut self) {
        for (i, s) in self.segments.iter().enumerate() {
            let p = s.load(SeqCst);
            if p != 0 {
                let n = if i == 0 { 1 << self.base } else { 1 << (self.base + i as u32 - 1) };
                // SAFETY: every segment was made by `segment` with this
                // length, and the chains are gone.
                unsafe { free_segment(p, n) };
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// A one-link version whose data is its hash (8 bytes) and a tag.
    fn version(hash: u64, tag: u32) -> VersionPtr {
        VersionPtr::new(1, 0, 0, 1, 12, |d| {
            d[..8].copy_from_slice(&hash.to_le_bytes());
            d[8..].copy_from_slice(&tag.to_le_bytes());
        })
    }

    fn hash_of(v: VersionPtr) -> u64 {
        u64::from_le_bytes(v.data()[..8].try_into().unwrap())
    }

    fn tag_of(v: VersionPtr) -> u32 {
        u32::from_le_bytes(v.data()[8..].try_into().unwrap())
    }

    /// The tags of the live versions with hash `hash`, as a look-up walks
    /// them. Panics if the walk meets a version twice.
    fn look_up(c: &SplitChains, hash: u64) -> Vec<u32> {
        let (w, mut cur) = c.first(hash);
        let (mut met, mut out) = (vec![], vec![]);
        while let Some(v) = cur {
            assert!(!met.contains(&v), "a walk met a version twice");
            met.push(v);
            if c.is_live(v) && hash_of(v) == hash {
                out.push(tag_of(v));
            }
            cur = c.next(&w, v);
        }
        out
    }

    /// Every version in the list, marked ones included, in list order,
    /// with the keys of the dummies passed checked to rise.
    fn whole_list(c: &SplitChains) -> Vec<VersionPtr> {
        let (mut out, mut last) = (vec![], 0u64);
        let mut word = c.dummy(0).next();
        loop {
            if word & DUMMY != 0 {
                let key = c.key_at(word);
                assert!(key > last || last == 0, "dummies out of order");
                last = key;
                word = c.dummy_at(word).next();
                continue;
            }
            let Some(v) = VersionPtr::from_word(word) else { return out };
            assert!(node_key(hash_of(v)) > last, "a version before its bucket's dummy");
            out.push(v);
            word = v.link(c.slot).load(SeqCst);
        }
    }

    #[test]
    fn versions_stay_found_as_the_buckets_double() {
        let c = SplitChains::new(1, 0);
        let vs: Vec<_> =
            (0..200u32).map(|i| version(u64::from(i % 50).wrapping_mul(0x9e37_79b9_7f4a_7c15), i)).collect();
        for (i, v) in vs.iter().enumerate() {
            c.insert(hash_of(*v), *v, &hash_of);
            if i % 40 == 39 {
                assert!(c.grow());
            }
        }
        assert_eq!(c.len(), 32);
        for k in 0..50u32 {
            let h = u64::from(k).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            // Newest first: a walk from a version meets older ones.
            let want: Vec<u32> = (0..4).rev().map(|j| k + 50 * j).collect();
            assert_eq!(look_up(&c, h), want, "key {k}");
        }
        assert_eq!(whole_list(&c).len(), 200);
        // A region named before more doublings still sweeps its versions.
        let region = c.bucket_of(hash_of(vs[7]));
        c.grow();
        c.grow();
        c.mark(vs[7]);
        c.sweep(region, Some(vs[7]));
        assert!(!whole_list(&c).contains(&vs[7]));
        assert_eq!(look_up(&c, hash_of(vs[7])), [157, 107, 57]);
        for v in vs {
            unsafe { v.free() };
        }
    }

    #[test]
    fn a_bucket_made_by_doubling_is_walked_before_an_insert_links_it() {
        let c = SplitChains::new(2, 0);
        let a = version(0b0110, 1);
        let b = version(0b0010, 2);
        c.insert(hash_of(a), a, &hash_of);
        c.insert(hash_of(b), b, &hash_of);
        c.grow();
        c.grow();
        // Bucket 6 of 8 has no dummy yet: its walk starts at bucket 2's.
        assert!(!c.dummy(6).ready());
        assert_eq!(look_up(&c, 0b0110), [1]);
        assert_eq!(look_up(&c, 0b0010), [2]);
        let d = version(0b1110, 3);
        c.insert(hash_of(d), d, &hash_of);
        assert!(c.dummy(6).ready(), "the insert linked bucket 6");
        assert_eq!(look_up(&c, 0b0110), [1]);
        assert_eq!(look_up(&c, 0b1110), [3]);
        for v in [a, b, d] {
            unsafe { v.free() };
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u8),
        Remove(usize),
        RemoveMany(Vec<usize>),
        Grow,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => any::<u8>().prop_map(Op::Insert),
            3 => any::<usize>().prop_map(Op::Remove),
            1 => proptest::collection::vec(any::<usize>(), 1..8).prop_map(Op::RemoveMany),
            1 => Just(Op::Grow),
        ]
    }

    proptest! {
        /// Against a plain map from key to the tags it holds, newest first:
        /// inserts (few keys, so many duplicates), removals one by one or
        /// marked together and swept once, and doublings, in any order.
        /// Every key's look-up agrees with the model after every step.
        #[test]
        fn split_chains_agree_with_a_map(ops in proptest::collection::vec(op(), 1..120), keys in 1u8..24) {
            let c = SplitChains::new(1, 0);
            let hash = |k: u8| u64::from(k).wrapping_mul(0x2545_f491_4f6c_dd1d).rotate_left(17);
            let mut model: BTreeMap<u8, Vec<u32>> = BTreeMap::new();
            let mut live: Vec<(VersionPtr, u8)> = vec![];
            let mut all = vec![];
            for (i, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Insert(k) => {
                        let k = k % keys;
                        let v = version(hash(k), i as u32);
                        c.insert(hash(k), v, &hash_of);
                        model.entry(k).or_default().insert(0, i as u32);
                        live.push((v, k));
                        all.push(v);
                    }
                    Op::Remove(j) if !live.is_empty() => {
                        let (v, k) = live.swap_remove(j % live.len());
                        c.unlink(hash(k), v);
                        model.get_mut(&k).unwrap().retain(|&t| t != tag_of(v));
                    }
                    Op::RemoveMany(js) if !live.is_empty() => {
                        let mut gone = vec![];
                        for j in js {
                            if live.is_empty() { break; }
                            let (v, k) = live.swap_remove(j % live.len());
                            c.mark(v);
                            model.get_mut(&k).unwrap().retain(|&t| t != tag_of(v));
                            gone.push(v);
                        }
                        c.sweep_each(gone.iter().copied(), |v| c.bucket_of(hash_of(v)));
                        let list = whole_list(&c);
                        prop_assert!(gone.iter().all(|v| !list.contains(v)), "a swept version is still reachable");
                    }
                    Op::Grow => { c.grow(); }
                    _ => {}
                }
                for k in 0..keys {
                    prop_assert_eq!(look_up(&c, hash(k)), model.get(&k).cloned().unwrap_or_default(), "key {}", k);
                }
            }
            prop_assert_eq!(whole_list(&c).len(), live.len());
            for v in all {
                unsafe { v.free() };
            }
        }
    }

    /// Writers insert and remove their own keys (some shared between
    /// them), readers look keys up, and one thread keeps doubling the
    /// buckets meanwhile. A writer always finds every version it inserted
    /// and has not removed, and a walk never meets a version twice.
    #[test]
    fn doubling_under_concurrent_writers_and_readers_loses_nothing() {
        let c = Arc::new(SplitChains::new(1, 0));
        let stop = Arc::new(AtomicBool::new(false));
        let inserted = Arc::new(AtomicUsize::new(0));
        let hash = |k: u64| k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let writers: Vec<_> = (0..3u64)
            .map(|t| {
                let (c, inserted) = (c.clone(), inserted.clone());
                std::thread::spawn(move || {
                    let mut mine: Vec<(VersionPtr, u64)> = vec![];
                    let mut gone = vec![];
                    for i in 0..3000u64 {
                        // Keys 0..50 are shared: duplicates across threads.
                        let k = if i % 3 == 0 { i % 50 } else { 1000 * (t + 1) + i };
                        let v = version(hash(k), i as u32);
                        let _pin = crossbeam_epoch::pin();
                        c.insert(hash(k), v, &hash_of);
                        inserted.fetch_add(1, SeqCst);
                        mine.push((v, k));
                        if i % 4 == 3 {
                            let (v, k) = mine.swap_remove((i as usize * 7) % mine.len());
                            c.unlink(hash(k), v);
                            gone.push(v);
                        }
                        if i % 64 == 0 {
                            for &(v, k) in &mine {
                                let (w, mut cur) = c.first(hash(k));
                                let mut found = false;
                                while let Some(x) = cur {
                                    found |= x == v;
                                    cur = c.next(&w, x);
                                }
                                assert!(found, "thread {t} lost its version of key {k}");
                            }
                        }
                    }
                    (mine, gone)
                })
            })
            .collect();
        // Doubles whenever the inserts pass two per bucket, as an index
        // does, so that the doublings fall among the writers' inserts.
        let grower = {
            let (c, stop, inserted) = (c.clone(), stop.clone(), inserted.clone());
            std::thread::spawn(move || {
                let mut grown = 0;
                while !stop.load(SeqCst) {
                    if inserted.load(SeqCst) > 2 * c.len() {
                        grown += usize::from(c.grow());
                    }
                    std::thread::yield_now();
                }
                grown
            })
        };
        let reader = {
            let (c, stop) = (c.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(SeqCst) {
                    for k in 0..50 {
                        let _pin = crossbeam_epoch::pin();
                        look_up(&c, hash(k));
                    }
                }
            })
        };
        let mut versions = vec![];
        let mut live = 0;
        for w in writers {
            let (mine, gone) = w.join().unwrap();
            live += mine.len();
            versions.extend(mine.into_iter().map(|(v, _)| v));
            versions.extend(gone);
        }
        stop.store(true, SeqCst);
        assert!(grower.join().unwrap() >= 8, "the buckets doubled while the writers ran");
        reader.join().unwrap();
        assert_eq!(whole_list(&c).len(), live);
        for v in versions {
            unsafe { v.free() };
        }
    }
}
