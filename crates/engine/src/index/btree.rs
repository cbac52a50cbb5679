//! The ordered structure behind range indexes: a B+tree whose readers take
//! no latch and write nothing (optimistic lock coupling, after Leis et al.,
//! "The ART of Practical Synchronization", DaMoN 2016).
//!
//! Every node carries a *version lock*, one 64-bit word:
//!
//! ```text
//!   bit 0      obsolete: the node was merged away; whoever meets it restarts
//!   bit 1      locked by a writer
//!   bits 2..   version, bumped by every unlock
//! ```
//!
//! A reader notes the version, reads what it needs with plain (relaxed)
//! atomic loads, and checks that the version has not moved; if it has, it
//! starts over from the root. It never writes a shared cache line, so
//! readers on many cores do not slow each other down. A writer descends the
//! same way, then *upgrades* the version it noted into a lock with one
//! compare-and-swap, which fails if anything changed in between. Writers
//! never wait while holding a lock, so there is no deadlock; a writer that
//! cannot take a lock releases what it holds and restarts.
//!
//! Entries are pairs of a byte-string key and a 64-bit value, ordered by
//! key bytes, then by value, so one key may appear with many values (a
//! non-unique index stores each row version as its own entry). Keys of up
//! to 16 bytes live in the node; longer ones keep their first 16 bytes in
//! the node and the whole key in a separate allocation owned by the entry
//! (inner nodes own copies of their separators). Comparisons look at the
//! two 8-byte heads first, so most never leave the node.
//!
//! Inserts split full nodes on the way down (so a split never has to go
//! back up); a leaf splits in half, or, when keys arrive in order (the
//! new key goes after all its entries, or right after the previous insert
//! into it), where the new key goes, so an ascending load fills its
//! leaves; deletes merge a node that fell below a quarter full into its
//! neighbour when the two fit in three quarters of a node, and an inner
//! root left with one child gives its place to that child.
//!
//! Scans carry no pointer from one leaf to the next: a leaf read is
//! validated on its own, and the scan moves on by descending again to the
//! *fence* (the separator in the parent that bounds the leaf), forward or
//! backward alike.
//!
//! Memory: nodes and long keys are freed through epoch-based reclamation
//! once unlinked, so an optimistic reader may still read them. A reader
//! follows a child pointer or dereferences a long key only after validating
//! the version of the node it read it from, so it never touches memory that
//! was already retired when it pinned the epoch.

use crate::counter::Counter;
use crate::sync::{fence, AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};
use smallvec::SmallVec;
use std::alloc::{alloc, dealloc, Layout};
use std::cmp::Ordering;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicI64, Ordering::Relaxed as StdRelaxed};

/// Entries per leaf.
#[cfg(not(loom))]
pub const LEAF_CAP: usize = 64;
/// Children per inner node (one separator fewer).
#[cfg(not(loom))]
pub const INNER_CAP: usize = 64;
#[cfg(loom)]
pub const LEAF_CAP: usize = 4;
#[cfg(loom)]
pub const INNER_CAP: usize = 4;

/// Most entries [`BTree::scan_short`] passes: the versions of one key
/// that an equality look-up meets, old ones not yet collected included.
const SHORT_SCAN: usize = 8;
const OBSOLETE: u64 = 1;
const LOCKED: u64 = 2;
/// Key bytes kept in the node itself.
const INLINE: usize = 16;

/// A failed optimistic step: start over.
#[derive(Debug)]
struct Restart;
type Opt<T> = std::result::Result<T, Restart>;

/// Waits a little before retrying.
#[inline]
fn spin(spins: &mut u32) {
    #[cfg(loom)]
    {
        let _ = spins;
        loom::thread::yield_now();
    }
    #[cfg(not(loom))]
    {
        *spins += 1;
        if *spins < 32 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Holds off reclamation of anything reachable now (no-op under loom, where
/// retired memory is kept until the tree is dropped).
#[cfg(not(loom))]
fn pin() -> crossbeam_epoch::Guard {
    crossbeam_epoch::pin()
}
#[cfg(loom)]
fn pin() {}

// ---------------------------------------------------------------------------
// Keys

/// A key as a node stores it: the first 16 bytes as two big-endian words
/// (zero-padded), and either the length (odd: `len << 1 | 1`, for keys of
/// at most 16 bytes) or a pointer to a [`long`] allocation holding the whole
/// key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    h0: u64,
    h1: u64,
    tail: u64,
}

fn heads(bytes: &[u8]) -> (u64, u64) {
    let mut b = [0u8; INLINE];
    let n = bytes.len().min(INLINE);
    b[..n].copy_from_slice(&bytes[..n]);
    (
        u64::from_be_bytes(b[..8].try_into().unwrap_or([0; 8])),
        u64::from_be_bytes(b[8..].try_into().unwrap_or([0; 8])),
    )
}

/// Long keys: one allocation of an 8-byte length and the bytes.
mod long {
    use super::*;

    fn layout(len: usize) -> Layout {
        // A key is far smaller than isize::MAX; fall back to a minimal
        // layout rather than panic if the arithmetic ever overflowed.
        Layout::from_size_align(8 + len, 8).unwrap_or(Layout::new::<u64>())
    }

    pub(super) fn alloc_key(bytes: &[u8]) -> u64 {
        let l = layout(bytes.len());
        // SAFETY: the layout has non-zero size; both writes stay inside it.
        unsafe {
            let p = alloc(l);
            if p.is_null() {
                std::alloc::handle_alloc_error(l);
            }
            (p as *mut u64).write(bytes.len() as u64);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.add(8), bytes.len());
            p as u64
        }
    }

    /// # Safety
    /// `p` came from `alloc_key` and has not been freed.
    pub(super) unsafe fn bytes<'a>(p: u64) -> &'a [u8] {
        let p = p as *const u8;
        let len = (p as *const u64).read() as usize;
        std::slice::from_raw_parts(p.add(8), len)
    }

    /// # Safety
    /// `p` came from `alloc_key`, is freed once, and nobody reads it after.
    pub(super) unsafe fn free(p: u64) {
        let len = (p as *const u64).read() as usize;
        dealloc(p as *mut u8, layout(len));
    }
}

impl Key {
    /// A key owning a copy of `bytes`.
    pub(crate) fn new(bytes: &[u8]) -> Key {
        let (h0, h1) = heads(bytes);
        let tail =
            if bytes.len() <= INLINE { ((bytes.len() as u64) << 1) | 1 } else { long::alloc_key(bytes) };
        Key { h0, h1, tail }
    }

    #[inline]
    fn is_inline(&self) -> bool {
        self.tail & 1 != 0
    }

    /// Heap bytes this key holds.
    fn heap_bytes(&self) -> usize {
        if self.is_inline() {
            0
        } else {
            // SAFETY: callers only ask for keys they own or validated.
            8 + unsafe { long::bytes(self.tail) }.len()
        }
    }

    /// The bytes past the first 16 (empty for inline keys).
    ///
    /// # Safety
    /// A long key must still be allocated.
    #[inline]
    unsafe fn rest<'a>(&self) -> &'a [u8] {
        if self.is_inline() {
            &[]
        } else {
            &long::bytes(self.tail)[INLINE..]
        }
    }

    /// The whole key, appended to `out`.
    ///
    /// # Safety
    /// A long key must still be allocated.
    unsafe fn write_to(&self, out: &mut SmallVec<[u8; 32]>) {
        if self.is_inline() {
            let len = (self.tail >> 1) as usize;
            let mut b = [0u8; INLINE];
            b[..8].copy_from_slice(&self.h0.to_be_bytes());
            b[8..].copy_from_slice(&self.h1.to_be_bytes());
            out.extend_from_slice(&b[..len.min(INLINE)]);
        } else {
            out.extend_from_slice(long::bytes(self.tail));
        }
    }

    /// A separate copy of the key.
    ///
    /// # Safety
    /// A long key must still be allocated.
    unsafe fn deep_copy(&self) -> Key {
        if self.is_inline() {
            *self
        } else {
            Key { h0: self.h0, h1: self.h1, tail: long::alloc_key(long::bytes(self.tail)) }
        }
    }

    /// Frees a long key's allocation.
    ///
    /// # Safety
    /// The key is owned by the caller and unreachable to every reader.
    pub(crate) unsafe fn free(self) {
        if !self.is_inline() {
            long::free(self.tail);
        }
    }
}

/// What a search compares entries with: key bytes and a value, borrowed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Probe<'a> {
    h0: u64,
    h1: u64,
    bytes: &'a [u8],
    val: u64,
}

impl<'a> Probe<'a> {
    /// The entry (`bytes`, `val`).
    pub(crate) fn new(bytes: &'a [u8], val: u64) -> Probe<'a> {
        let (h0, h1) = heads(bytes);
        Probe { h0, h1, bytes, val }
    }

    fn rest(&self) -> &'a [u8] {
        self.bytes.get(INLINE..).unwrap_or(&[])
    }
}

// ---------------------------------------------------------------------------
// Nodes

/// The first field of every node.
#[repr(C)]
struct Header {
    lock: AtomicU64,
    /// The entry count (low 32 bits) and, in a leaf, one more than the
    /// position of the last insert into it (high 32 bits; 0: unknown), for
    /// choosing where it splits.
    count: AtomicU64,
    leaf: bool,
}

impl Header {
    fn new(leaf: bool) -> Header {
        Header { lock: AtomicU64::new(0), count: AtomicU64::new(0), leaf }
    }

    /// Notes the version; waits while a writer holds the node.
    #[inline]
    fn read_lock(&self) -> Opt<u64> {
        let mut spins = 0;
        loop {
            let v = self.lock.load(Acquire);
            if v & OBSOLETE != 0 {
                return Err(Restart);
            }
            if v & LOCKED == 0 {
                return Ok(v);
            }
            spin(&mut spins);
        }
    }

    /// Succeeds if the node is still at version `v`: everything read from
    /// it since noting `v` was consistent.
    #[inline]
    fn check(&self, v: u64) -> Opt<()> {
        // Orders the caller's relaxed reads before the second look at the
        // version (the reader half of a seqlock).
        fence(Acquire);
        if self.lock.load(Relaxed) == v {
            Ok(())
        } else {
            Err(Restart)
        }
    }

    /// Takes the lock if the node is still at version `v`.
    #[inline]
    fn upgrade(&self, v: u64) -> Opt<()> {
        match self.lock.compare_exchange(v, v + LOCKED, Acquire, Relaxed) {
            Ok(_) => {
                // A reader that sees any of the writes that follow also sees
                // the lock taken (the writer half of a seqlock).
                fence(Release);
                Ok(())
            }
            Err(_) => Err(Restart),
        }
    }

    #[inline]
    fn unlock(&self) {
        self.lock.fetch_add(LOCKED, Release);
    }

    fn unlock_obsolete(&self) {
        self.lock.fetch_add(LOCKED + OBSOLETE, Release);
    }

    #[inline]
    fn count(&self, cap: usize) -> usize {
        // An optimistic read may see a count from a concurrent change;
        // clamp it so indexing stays in bounds until validation.
        ((self.count.load(Relaxed) & COUNT_MASK) as usize).min(cap)
    }

    /// Sets the count, forgetting where the last insert went.
    fn set_count(&self, n: usize) {
        self.count.store(n as u64, Relaxed);
    }

    /// Sets the count after an insert at position `pos`.
    fn set_count_inserted(&self, n: usize, pos: usize) {
        self.count.store(n as u64 | ((pos as u64 + 1) << 32), Relaxed);
    }

    /// Where the last insert went, if the count was last set by one.
    fn last_insert(&self) -> Option<usize> {
        ((self.count.load(Relaxed) >> 32) as usize).checked_sub(1)
    }
}

/// The bits of [`Header::count`] that hold the count.
const COUNT_MASK: u64 = u32::MAX as u64;

/// Keys and values of a node, as parallel arrays so a search scans the
/// first heads contiguously.
#[repr(C)]
struct Slots<const N: usize> {
    h0: [AtomicU64; N],
    h1: [AtomicU64; N],
    tail: [AtomicU64; N],
    val: [AtomicU64; N],
}

fn atomics<const N: usize>() -> [AtomicU64; N] {
    std::array::from_fn(|_| AtomicU64::new(0))
}

impl<const N: usize> Slots<N> {
    fn new() -> Slots<N> {
        Slots { h0: atomics(), h1: atomics(), tail: atomics(), val: atomics() }
    }

    #[inline]
    fn key(&self, i: usize) -> Key {
        Key { h0: self.h0[i].load(Relaxed), h1: self.h1[i].load(Relaxed), tail: self.tail[i].load(Relaxed) }
    }

    #[inline]
    fn load(&self, i: usize) -> (Key, u64) {
        (self.key(i), self.val[i].load(Relaxed))
    }

    #[inline]
    fn store(&self, i: usize, (k, v): (Key, u64)) {
        self.h0[i].store(k.h0, Relaxed);
        self.h1[i].store(k.h1, Relaxed);
        self.tail[i].store(k.tail, Relaxed);
        self.val[i].store(v, Relaxed);
    }

    /// Compares entry `i` with `p`. `valid` is the node and version to
    /// validate before dereferencing a long key (`None` when the caller
    /// holds the node's lock).
    #[inline]
    fn cmp(&self, i: usize, p: &Probe<'_>, valid: Option<(&Header, u64)>) -> Opt<Ordering> {
        let h0 = self.h0[i].load(Relaxed);
        if h0 != p.h0 {
            return Ok(h0.cmp(&p.h0));
        }
        let h1 = self.h1[i].load(Relaxed);
        if h1 != p.h1 {
            return Ok(h1.cmp(&p.h1));
        }
        let tail = self.tail[i].load(Relaxed);
        let key = Key { h0, h1, tail };
        let by_key = if key.is_inline() && p.bytes.len() <= INLINE {
            ((tail >> 1) as usize).cmp(&p.bytes.len())
        } else {
            if let Some((h, v)) = valid {
                h.check(v)?;
            }
            // SAFETY: the pointer was current at a validated version (or the
            // node is locked by us) and the caller holds an epoch pin.
            unsafe { key.rest() }.cmp(p.rest())
        };
        Ok(by_key.then_with(|| self.val[i].load(Relaxed).cmp(&p.val)))
    }

    /// The first position in `0..n` whose entry is greater than `p`
    /// (`strict`) or not less than `p`.
    #[inline]
    fn search(&self, n: usize, p: &Probe<'_>, strict: bool, valid: Option<(&Header, u64)>) -> Opt<usize> {
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let c = self.cmp(mid, p, valid)?;
            if c == Ordering::Less || (strict && c == Ordering::Equal) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// Moves entries `from..to` one place right.
    fn shift_right(&self, from: usize, to: usize) {
        for i in (from..to).rev() {
            self.store(i + 1, self.load(i));
        }
    }

    /// Moves entries `from..to` one place left.
    fn shift_left(&self, from: usize, to: usize) {
        for i in from..to {
            self.store(i - 1, self.load(i));
        }
    }
}

#[repr(C, align(64))]
struct Leaf<const L: usize> {
    hdr: Header,
    slots: Slots<L>,
}

/// An inner node: `count` separators and `count + 1` children; child `i`
/// holds the entries `e` with `sep[i-1] <= e < sep[i]`.
#[repr(C, align(64))]
struct Inner<const I: usize> {
    hdr: Header,
    seps: Slots<I>,
    child: [AtomicU64; I],
}

/// Asks the CPU to load a node's header and its whole array of first
/// heads (which every search reads) at once: the binary search's loads then
/// hit the cache instead of waiting for one miss after another.
#[inline]
fn prefetch_node(p: u64, entries: usize) {
    let lines = (std::mem::size_of::<Header>() + 8 * entries).div_ceil(64);
    for i in 0..lines {
        crate::index::chain::prefetch((p as usize + 64 * i) as *const u8);
    }
}

/// Statistics of one tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TreeStats {
    pub(crate) entries: u64,
    pub(crate) leaves: u64,
    pub(crate) inners: u64,
    pub(crate) bytes: u64,
    /// Levels from the root to the leaves (1: the root is a leaf).
    pub(crate) height: u64,
    /// Entries one leaf holds.
    pub(crate) leaf_capacity: u64,
}

/// Scan direction in key order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Direction {
    /// Ascending keys.
    #[default]
    Forward,
    /// Descending keys.
    Backward,
}

/// Where a scan goes on: an owned key and value, and whether an entry equal
/// to it is included.
#[derive(Clone, Debug)]
struct Mark {
    bytes: SmallVec<[u8; 32]>,
    val: u64,
    inclusive: bool,
}

/// A position in a scan over the entries whose key lies in `[lo, hi)`
/// (byte bounds; `None` is unbounded). It holds no pointer into the tree,
/// so no epoch pin is needed between batches.
#[derive(Clone, Debug)]
pub struct Cursor {
    dir: Direction,
    lo: Option<SmallVec<[u8; 32]>>,
    hi: Option<SmallVec<[u8; 32]>>,
    at: Option<Mark>,
    done: bool,
}

impl Cursor {
    /// A cursor over keys in `[lo, hi)`, in direction `dir`.
    pub fn new(lo: Option<&[u8]>, hi: Option<&[u8]>, dir: Direction) -> Cursor {
        let lo = lo.map(SmallVec::from_slice);
        let hi = hi.map(SmallVec::from_slice);
        let at = match dir {
            Direction::Forward => lo.clone().map(|bytes| Mark { bytes, val: 0, inclusive: true }),
            Direction::Backward => hi.clone().map(|bytes| Mark { bytes, val: 0, inclusive: false }),
        };
        let done = matches!((&lo, &hi), (Some(l), Some(h)) if l >= h);
        Cursor { dir, lo, hi, at, done }
    }

    /// Whether the scan has passed its last entry.
    pub fn is_done(&self) -> bool {
        self.done
    }
}

/// An ordered index structure; see the module header.
pub struct BTree<const L: usize = LEAF_CAP, const I: usize = INNER_CAP> {
    root: AtomicU64,
    entries: Counter,
    key_bytes: Counter,
    leaves: AtomicI64,
    inners: AtomicI64,
    /// Retired memory, kept until the tree is dropped (loom does not model
    /// epochs).
    #[cfg(loom)]
    graveyard: std::sync::Mutex<Vec<Garbage>>,
}

/// Memory handed to reclamation.
enum Garbage {
    Leaf(u64),
    Inner(u64),
    Key(Key),
}

// SAFETY: the tree's raw pointers are to memory it owns and shares only
// through its own synchronisation.
unsafe impl<const L: usize, const I: usize> Send for BTree<L, I> {}
// SAFETY: as above; all shared state is atomic.
unsafe impl<const L: usize, const I: usize> Sync for BTree<L, I> {}

#[inline]
fn hdr<'a>(p: u64) -> &'a Header {
    // SAFETY: every node starts with a Header (repr(C)); callers pass only
    // pointers validated while pinned.
    unsafe { &*(p as *const Header) }
}

impl<const L: usize, const I: usize> Default for BTree<L, I> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const L: usize, const I: usize> BTree<L, I> {
    /// 8-byte words of the larger node kind, past its header: a descent
    /// prefetches the whole child, so the search and the entry it ends on
    /// (a leaf's value, an inner node's child address) cost one round trip
    /// to memory instead of two.
    const NODE_WORDS: usize = {
        let l = std::mem::size_of::<Leaf<L>>();
        let i = std::mem::size_of::<Inner<I>>();
        (if l > i { l } else { i }) / 8
    };

    /// An empty tree (one empty leaf).
    pub fn new() -> Self {
        const { assert!(L >= 4 && I >= 4) };
        let t = BTree {
            root: AtomicU64::new(0),
            entries: Counter::default(),
            key_bytes: Counter::default(),
            leaves: AtomicI64::new(0),
            inners: AtomicI64::new(0),
            #[cfg(loom)]
            graveyard: std::sync::Mutex::new(Vec::new()),
        };
        t.root.store(t.new_leaf(), Release);
        t
    }

    fn leaf<'a>(p: u64) -> &'a Leaf<L> {
        // SAFETY: `p` is a validated pointer to a leaf (header says so).
        unsafe { &*(p as *const Leaf<L>) }
    }

    fn inner<'a>(p: u64) -> &'a Inner<I> {
        // SAFETY: `p` is a validated pointer to an inner node.
        unsafe { &*(p as *const Inner<I>) }
    }

    fn new_leaf(&self) -> u64 {
        self.leaves.fetch_add(1, StdRelaxed);
        Box::into_raw(Box::new(Leaf::<L> { hdr: Header::new(true), slots: Slots::new() })) as u64
    }

    fn new_inner(&self) -> u64 {
        self.inners.fetch_add(1, StdRelaxed);
        Box::into_raw(Box::new(Inner::<I> { hdr: Header::new(false), seps: Slots::new(), child: atomics() }))
            as u64
    }

    /// Hands memory no reader can newly reach to reclamation.
    fn retire(&self, g: Garbage) {
        #[cfg(loom)]
        {
            self.graveyard.lock().unwrap_or_else(|p| p.into_inner()).push(g);
        }
        #[cfg(not(loom))]
        {
            let guard = crossbeam_epoch::pin();
            // SAFETY: the memory is unlinked; readers that reached it hold
            // pins the deferral waits for.
            unsafe { guard.defer_unchecked(move || free_garbage::<L, I>(g)) };
        }
    }

    /// Statistics.
    pub(crate) fn stats(&self) -> TreeStats {
        let leaves = self.leaves.load(StdRelaxed).max(0) as u64;
        let inners = self.inners.load(StdRelaxed).max(0) as u64;
        TreeStats {
            entries: self.entries.get().max(0) as u64,
            leaves,
            inners,
            height: self.height(),
            leaf_capacity: L as u64,
            bytes: self.bytes(),
        }
    }

    /// Bytes of nodes and of keys stored outside them.
    pub(crate) fn bytes(&self) -> u64 {
        let leaves = self.leaves.load(StdRelaxed).max(0) as u64;
        let inners = self.inners.load(StdRelaxed).max(0) as u64;
        leaves * std::mem::size_of::<Leaf<L>>() as u64
            + inners * std::mem::size_of::<Inner<I>>() as u64
            + self.key_bytes.get().max(0) as u64
    }

    /// Levels from the root down its first children to a leaf. Every leaf
    /// is at the same depth; a split of the root met on the way is seen
    /// by the next call.
    fn height(&self) -> u64 {
        let _g = pin();
        let mut node = self.root.load(Acquire);
        let mut levels = 1;
        while !hdr(node).leaf {
            node = Self::inner(node).child[0].load(Acquire);
            levels += 1;
        }
        levels
    }

    /// Number of entries.
    pub fn len(&self) -> u64 {
        self.entries.get().max(0) as u64
    }

    /// Whether the tree has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The root, read-locked, checked to still be the root.
    #[inline]
    fn root_locked(&self) -> Opt<(u64, u64)> {
        let r = self.root.load(Acquire);
        let v = hdr(r).read_lock()?;
        if self.root.load(Acquire) != r {
            return Err(Restart);
        }
        Ok((r, v))
    }

    /// Child `pos` of `inner` (noted at `v`), read-locked. The parent is
    /// validated again *after* the child's version is noted: splits and
    /// merges of the child change the parent, so an unchanged parent means
    /// the child still covers the key range the parent assigns it.
    #[inline]
    fn child(&self, inner: &Inner<I>, v: u64, pos: usize) -> Opt<(u64, u64)> {
        let child = inner.child[pos].load(Relaxed);
        inner.hdr.check(v)?;
        prefetch_node(child, Self::NODE_WORDS);
        let cv = hdr(child).read_lock()?;
        inner.hdr.check(v)?;
        Ok((child, cv))
    }

    /// The leaf whose range holds `p`, read-locked.
    #[inline]
    fn leaf_for(&self, p: &Probe<'_>) -> Opt<(u64, u64)> {
        let (mut node, mut v) = self.root_locked()?;
        while !hdr(node).leaf {
            let inner = Self::inner(node);
            let n = inner.hdr.count(I - 1);
            let pos = inner.seps.search(n, p, true, Some((&inner.hdr, v)))?;
            (node, v) = self.child(inner, v, pos)?;
        }
        Ok((node, v))
    }

    // -----------------------------------------------------------------------
    // Insert

    /// Inserts the entry (`bytes`, `val`). Returns false, changing nothing,
    /// if that exact entry is already present.
    pub fn insert(&self, bytes: &[u8], val: u64) -> bool {
        let _g = pin();
        let key = Key::new(bytes);
        let p = Probe::new(bytes, val);
        let mut spins = 0;
        loop {
            match self.try_insert(key, &p) {
                Ok(added) => {
                    if added {
                        self.entries.add(1);
                        self.key_bytes.add(key.heap_bytes() as i64);
                    } else {
                        // SAFETY: never published.
                        unsafe { key.free() };
                    }
                    return added;
                }
                Err(Restart) => spin(&mut spins),
            }
        }
    }

    fn try_insert(&self, key: Key, p: &Probe<'_>) -> Opt<bool> {
        let (mut node, mut v) = self.root_locked()?;
        // The parent, its version, and the position of `node` in it.
        let mut parent: Option<(u64, u64, usize)> = None;
        while !hdr(node).leaf {
            let inner = Self::inner(node);
            let n = inner.hdr.count(I - 1);
            if n == I - 1 {
                self.split(node, v, parent, p)?;
                return Err(Restart);
            }
            let pos = inner.seps.search(n, p, true, Some((&inner.hdr, v)))?;
            let (child, cv) = self.child(inner, v, pos)?;
            parent = Some((node, v, pos));
            (node, v) = (child, cv);
        }
        let leaf = Self::leaf(node);
        let n = leaf.hdr.count(L);
        if n == L {
            self.split(node, v, parent, p)?;
            return Err(Restart);
        }
        leaf.hdr.upgrade(v)?;
        // Locked at the version we descended through: this is still the
        // leaf for the key (any change to its range changes its version).
        let pos = leaf.slots.search(n, p, false, None)?;
        if pos < n && leaf.slots.cmp(pos, p, None)? == Ordering::Equal {
            leaf.hdr.unlock();
            return Ok(false);
        }
        leaf.slots.shift_right(pos, n);
        leaf.slots.store(pos, (key, p.val));
        leaf.hdr.set_count_inserted(n + 1, pos);
        leaf.hdr.unlock();
        Ok(true)
    }

    /// Splits the full node `node` (noted at version `v`) under `parent`
    /// (or makes a new root above it), on the way to inserting `p`.
    fn split(&self, node: u64, v: u64, parent: Option<(u64, u64, usize)>, p: &Probe<'_>) -> Opt<()> {
        if let Some((pp, pv, _)) = parent {
            hdr(pp).upgrade(pv)?;
        }
        let unlock_parent = || {
            if let Some((pp, _, _)) = parent {
                hdr(pp).unlock();
            }
        };
        if hdr(node).upgrade(v).is_err() {
            unlock_parent();
            return Err(Restart);
        }
        if parent.is_none() && self.root.load(Acquire) != node {
            hdr(node).unlock();
            return Err(Restart);
        }
        let (sep, right) = if hdr(node).leaf { self.split_leaf(node, p) } else { self.split_inner(node) };
        match parent {
            Some((pp, _, pos)) => {
                let p = Self::inner(pp);
                let n = p.hdr.count(I - 1);
                p.seps.shift_right(pos, n);
                for i in (pos + 1..=n).rev() {
                    p.child[i + 1].store(p.child[i].load(Relaxed), Relaxed);
                }
                p.seps.store(pos, sep);
                p.child[pos + 1].store(right, Relaxed);
                p.hdr.set_count(n + 1);
            }
            None => {
                let r = self.new_inner();
                let root = Self::inner(r);
                root.seps.store(0, sep);
                root.child[0].store(node, Relaxed);
                root.child[1].store(right, Relaxed);
                root.hdr.set_count(1);
                self.root.store(r, Release);
            }
        }
        hdr(node).unlock();
        unlock_parent();
        Ok(())
    }

    /// Moves the upper part of a locked full leaf to a new leaf; returns
    /// the separator (a copy of the new leaf's first entry) and the leaf.
    /// Usually the upper half moves. When keys arrive in order, the leaf
    /// splits where `p` goes, so that the leaves left behind stay full:
    /// after every entry (a bulk load, a sequence: only the last entry
    /// moves), or right after the previous insert into this leaf (a run
    /// of ascending keys in the middle of the tree, as when several
    /// writers each load their own range of keys).
    fn split_leaf(&self, node: u64, p: &Probe<'_>) -> ((Key, u64), u64) {
        let left = Self::leaf(node);
        let n = left.hdr.count(L);
        // The leaf is locked: the search cannot be asked to restart.
        let mid = match left.slots.search(n, p, false, None) {
            Ok(pos) if pos == n => n - 1,
            Ok(pos) if pos > 0 && left.hdr.last_insert() == Some(pos - 1) => pos,
            _ => n / 2,
        };
        let r = self.new_leaf();
        let right = Self::leaf(r);
        for i in mid..n {
            right.slots.store(i - mid, left.slots.load(i));
        }
        right.hdr.set_count(n - mid);
        left.hdr.set_count(mid);
        let (k, val) = right.slots.load(0);
        // SAFETY: we own the entry's key (the leaf is locked).
        let sep = unsafe { k.deep_copy() };
        self.key_bytes.add(sep.heap_bytes() as i64);
        ((sep, val), r)
    }

    /// Moves the upper half of a locked full inner node to a new one; the
    /// middle separator moves up.
    fn split_inner(&self, node: u64) -> ((Key, u64), u64) {
        let left = Self::inner(node);
        let n = left.hdr.count(I - 1);
        let mid = n / 2;
        let r = self.new_inner();
        let right = Self::inner(r);
        for i in mid + 1..n {
            right.seps.store(i - mid - 1, left.seps.load(i));
        }
        for i in mid + 1..=n {
            right.child[i - mid - 1].store(left.child[i].load(Relaxed), Relaxed);
        }
        right.hdr.set_count(n - mid - 1);
        left.hdr.set_count(mid);
        (left.seps.load(mid), r)
    }

    // -----------------------------------------------------------------------
    // Remove

    /// Removes the entry (`bytes`, `val`); returns whether it was there.
    pub fn remove(&self, bytes: &[u8], val: u64) -> bool {
        let _g = pin();
        let p = Probe::new(bytes, val);
        let mut spins = 0;
        let (found, underfull) = loop {
            match self.try_remove(&p) {
                Ok(r) => break r,
                Err(Restart) => spin(&mut spins),
            }
        };
        if underfull {
            // Merge what is under-full on the path, a bounded number of
            // times (merging is an optimisation; giving up is safe).
            let (mut merges, mut restarts) = (0, 0);
            while merges < 8 && restarts < 4 {
                match self.try_merge(&p) {
                    Ok(true) => merges += 1,
                    Ok(false) => break,
                    Err(Restart) => restarts += 1,
                }
            }
        }
        found
    }

    fn try_remove(&self, p: &Probe<'_>) -> Opt<(bool, bool)> {
        let (node, v) = self.leaf_for(p)?;
        let leaf = Self::leaf(node);
        leaf.hdr.upgrade(v)?;
        let n = leaf.hdr.count(L);
        let pos = leaf.slots.search(n, p, false, None)?;
        if pos == n || leaf.slots.cmp(pos, p, None)? != Ordering::Equal {
            leaf.hdr.unlock();
            return Ok((false, false));
        }
        let (key, _) = leaf.slots.load(pos);
        leaf.slots.shift_left(pos + 1, n);
        leaf.hdr.set_count(n - 1);
        leaf.hdr.unlock();
        self.entries.add(-1);
        self.key_bytes.add(-(key.heap_bytes() as i64));
        if !key.is_inline() {
            self.retire(Garbage::Key(key));
        }
        Ok((true, n - 1 < L / 4))
    }

    /// Descends towards `p` and merges the first under-full node on the
    /// way into a neighbour, if the two fit comfortably in one node; an
    /// inner root with a single child is replaced by that child.
    fn try_merge(&self, p: &Probe<'_>) -> Opt<bool> {
        let (mut node, mut v) = self.root_locked()?;
        if hdr(node).leaf {
            return Ok(false);
        }
        if Self::inner(node).hdr.count(I - 1) == 0 {
            let root = Self::inner(node);
            root.hdr.upgrade(v)?;
            if self.root.load(Acquire) != node || root.hdr.count(I - 1) != 0 {
                root.hdr.unlock();
                return Err(Restart);
            }
            self.root.store(root.child[0].load(Relaxed), Release);
            root.hdr.unlock_obsolete();
            self.inners.fetch_sub(1, StdRelaxed);
            self.retire(Garbage::Inner(node));
            return Ok(true);
        }
        loop {
            let inner = Self::inner(node);
            let n = inner.hdr.count(I - 1);
            let pos = inner.seps.search(n, p, true, Some((&inner.hdr, v)))?;
            let (child, cv) = self.child(inner, v, pos)?;
            let (cap, fill) =
                if hdr(child).leaf { (L, hdr(child).count(L)) } else { (I - 1, hdr(child).count(I - 1)) };
            if fill < (cap / 4).max(1) && n >= 1 {
                let li = if pos > 0 { pos - 1 } else { pos };
                return self.merge_children(node, v, li);
            }
            if hdr(child).leaf {
                return Ok(false);
            }
            node = child;
            v = cv;
        }
    }

    /// Merges children `li` and `li + 1` of `node` (noted at `v`) into child
    /// `li`, if they fit in three quarters of a node; returns whether it did.
    fn merge_children(&self, node: u64, v: u64, li: usize) -> Opt<bool> {
        let inner = Self::inner(node);
        let (a, b) = (inner.child[li].load(Relaxed), inner.child[li + 1].load(Relaxed));
        inner.hdr.check(v)?;
        let (av, bv) = (hdr(a).read_lock()?, hdr(b).read_lock()?);
        let leaf = hdr(a).leaf;
        let (ac, bc) = if leaf {
            (hdr(a).count(L), hdr(b).count(L))
        } else {
            (hdr(a).count(I - 1), hdr(b).count(I - 1))
        };
        let fits = if leaf { ac + bc <= L * 3 / 4 } else { ac + bc < (I - 1) * 3 / 4 };
        hdr(b).check(bv)?;
        if !fits {
            return Ok(false);
        }
        inner.hdr.upgrade(v)?;
        if hdr(a).upgrade(av).is_err() {
            inner.hdr.unlock();
            return Err(Restart);
        }
        if hdr(b).upgrade(bv).is_err() {
            hdr(a).unlock();
            inner.hdr.unlock();
            return Err(Restart);
        }
        let n = inner.hdr.count(I - 1);
        let (sep, _) = inner.seps.load(li);
        if leaf {
            let (la, lb) = (Self::leaf(a), Self::leaf(b));
            for i in 0..bc {
                la.slots.store(ac + i, lb.slots.load(i));
            }
            la.hdr.set_count(ac + bc);
        } else {
            let (ia, ib) = (Self::inner(a), Self::inner(b));
            // The separator between them comes down between their entries.
            ia.seps.store(ac, inner.seps.load(li));
            for i in 0..bc {
                ia.seps.store(ac + 1 + i, ib.seps.load(i));
            }
            for i in 0..=bc {
                ia.child[ac + 1 + i].store(ib.child[i].load(Relaxed), Relaxed);
            }
            ia.hdr.set_count(ac + 1 + bc);
        }
        inner.seps.shift_left(li + 1, n);
        for i in li + 2..=n {
            inner.child[i - 1].store(inner.child[i].load(Relaxed), Relaxed);
        }
        inner.hdr.set_count(n - 1);
        hdr(b).unlock_obsolete();
        hdr(a).unlock();
        inner.hdr.unlock();
        if leaf {
            self.leaves.fetch_sub(1, StdRelaxed);
            self.retire(Garbage::Leaf(b));
            if !sep.is_inline() {
                self.key_bytes.add(-(sep.heap_bytes() as i64));
                self.retire(Garbage::Key(sep));
            }
        } else {
            self.inners.fetch_sub(1, StdRelaxed);
            self.retire(Garbage::Inner(b));
        }
        Ok(true)
    }

    // -----------------------------------------------------------------------
    // Reads

    /// The value of the first entry whose key is `bytes`, if any.
    pub fn get(&self, bytes: &[u8]) -> Option<u64> {
        let _g = pin();
        let p = Probe::new(bytes, 0);
        let mut spins = 0;
        loop {
            match self.try_get(&p) {
                Ok(Some(r)) => return r,
                Ok(None) => break,
                Err(Restart) => spin(&mut spins),
            }
        }
        // The first entry with the key is in a later leaf: scan for it.
        let mut hi = SmallVec::<[u8; 32]>::from_slice(bytes);
        hi.push(0);
        let mut c = Cursor::new(Some(bytes), Some(&hi), Direction::Forward);
        let mut out = None;
        while out.is_none() && !c.is_done() {
            self.next_batch(&mut c, |v| {
                out = Some(v);
                false
            });
        }
        out
    }

    /// A scan of `[lo, hi)` expected to be short, as an equality look-up's
    /// is: one descent by `lo` and no cursor. If the leaf reached holds the
    /// whole range (at most `SHORT_SCAN`, 8, entries), their values are
    /// passed to `f` in order, until it returns false, and the answer is
    /// true. Otherwise nothing is passed and the answer is false: the
    /// caller scans with a cursor instead.
    pub fn scan_short(&self, lo: &[u8], hi: &[u8], mut f: impl FnMut(u64) -> bool) -> bool {
        let _g = pin();
        let from = Probe::new(lo, 0);
        let to = Probe::new(hi, 0);
        let mut buf = [0u64; SHORT_SCAN];
        let mut spins = 0;
        let n = loop {
            match self.try_scan_short(&from, &to, &mut buf) {
                Ok(Some(n)) => break n,
                Ok(None) => return false,
                Err(Restart) => spin(&mut spins),
            }
        };
        for &v in &buf[..n] {
            if !f(v) {
                break;
            }
        }
        true
    }

    /// One optimistic attempt at [`BTree::scan_short`]: how many values it
    /// put in `buf`, or `None` when the range may go on past the leaf.
    fn try_scan_short(
        &self,
        from: &Probe<'_>,
        to: &Probe<'_>,
        buf: &mut [u64; SHORT_SCAN],
    ) -> Opt<Option<usize>> {
        let (node, v) = self.leaf_for(from)?;
        let leaf = Self::leaf(node);
        let n = leaf.hdr.count(L);
        let valid = Some((&leaf.hdr, v));
        let start = leaf.slots.search(n, from, false, valid)?;
        let mut out = 0;
        let mut ended = false;
        for i in start..n {
            if leaf.slots.cmp(i, to, valid)? != Ordering::Less {
                ended = true;
                break;
            }
            if out == SHORT_SCAN {
                break;
            }
            buf[out] = leaf.slots.val[i].load(Relaxed);
            out += 1;
        }
        leaf.hdr.check(v)?;
        Ok(ended.then_some(out))
    }

    /// One optimistic look-up: `Some(answer)`, or `None` when the answer
    /// lies past the leaf reached.
    #[inline]
    fn try_get(&self, p: &Probe<'_>) -> Opt<Option<Option<u64>>> {
        let (node, v) = self.leaf_for(p)?;
        Self::leaf_get(node, v, p)
    }

    /// The look-up's answer from the leaf it descended to (noted at `v`),
    /// or `None` when the first entry not below the key is past the leaf.
    #[inline]
    fn leaf_get(node: u64, v: u64, p: &Probe<'_>) -> Opt<Option<Option<u64>>> {
        let leaf = Self::leaf(node);
        let n = leaf.hdr.count(L);
        let pos = leaf.slots.search(n, p, false, Some((&leaf.hdr, v)))?;
        if pos == n {
            leaf.hdr.check(v)?;
            return Ok(None);
        }
        let k = leaf.slots.key(pos);
        let val = leaf.slots.val[pos].load(Relaxed);
        let same = k.h0 == p.h0 && k.h1 == p.h1 && {
            if k.is_inline() {
                (k.tail >> 1) as usize == p.bytes.len()
            } else {
                leaf.hdr.check(v)?;
                // SAFETY: validated above while pinned.
                unsafe { k.rest() == p.rest() }
            }
        };
        leaf.hdr.check(v)?;
        Ok(Some(same.then_some(val)))
    }

    /// Looks up many keys: for each, what [`BTree::get`] returns. The
    /// descents of up to 16 keys advance level by level together, every
    /// child prefetched before any is read, so their cache misses overlap
    /// instead of following one another; on a tree larger than the caches
    /// this is several times the throughput of one `get` after another.
    pub fn get_many<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut Vec<Option<u64>>) {
        const GROUP: usize = 16;
        let _g = pin();
        for group in keys.chunks(GROUP) {
            let probes: SmallVec<[Probe<'_>; GROUP]> =
                group.iter().map(|k| Probe::new(k.as_ref(), 0)).collect();
            let mut res = [None; GROUP];
            if self.try_get_group(&probes, &mut res).is_err() {
                res = [None; GROUP];
            }
            for (k, r) in group.iter().zip(res) {
                // A restart, or an answer past the leaf: the one-key path.
                out.push(r.unwrap_or_else(|| self.get(k.as_ref())));
            }
        }
    }

    fn try_get_group(&self, probes: &[Probe<'_>], res: &mut [Option<Option<u64>>]) -> Opt<()> {
        const GROUP: usize = 16;
        let n = probes.len().min(GROUP);
        let (root, rv) = self.root_locked()?;
        let (mut node, mut ver) = ([root; GROUP], [rv; GROUP]);
        // The tree is balanced: every descent meets inner nodes at the same
        // levels (a concurrent root split shows up as a failed check).
        while !hdr(node[0]).leaf {
            let mut child = [0u64; GROUP];
            for i in 0..n {
                let inner = Self::inner(node[i]);
                if inner.hdr.leaf {
                    return Err(Restart);
                }
                let c = inner.hdr.count(I - 1);
                let pos = inner.seps.search(c, &probes[i], true, Some((&inner.hdr, ver[i])))?;
                child[i] = inner.child[pos].load(Relaxed);
                inner.hdr.check(ver[i])?;
                prefetch_node(child[i], L.max(I));
            }
            for i in 0..n {
                let cv = hdr(child[i]).read_lock()?;
                Self::inner(node[i]).hdr.check(ver[i])?;
                (node[i], ver[i]) = (child[i], cv);
            }
        }
        for i in 0..n {
            if !hdr(node[i]).leaf {
                return Err(Restart);
            }
            res[i] = Self::leaf_get(node[i], ver[i], &probes[i])?;
        }
        Ok(())
    }

    /// Reads the next leaf's worth of the cursor's entries and passes their
    /// values, in scan order, to `f` (which returns false to stop early;
    /// the cursor then resumes after the last value taken). Every value
    /// passed was in the tree at one instant during the call. Returns
    /// false once the scan is done. The caller should hold an epoch pin if
    /// it dereferences the values.
    pub fn next_batch(&self, c: &mut Cursor, mut f: impl FnMut(u64) -> bool) -> bool {
        if c.done {
            return false;
        }
        let _g = pin();
        // Left uninitialised: a point look-up fills one or two of the
        // leaf's worth of places, and clearing them all cost more than that.
        let mut buf = [const { MaybeUninit::<(Key, u64)>::uninit() }; L];
        let mut spins = 0;
        let (n, next) = loop {
            match self.read_leaf(c, &mut buf) {
                Ok(r) => break r,
                Err(Restart) => spin(&mut spins),
            }
        };
        for e in &buf[..n] {
            // SAFETY: `read_leaf` wrote the first `n` places.
            let (k, v) = unsafe { e.assume_init() };
            if !f(v) {
                // Resume just past this entry. Its key was in the leaf at
                // the validated version, during this pin: still allocated.
                let mut bytes = SmallVec::new();
                // SAFETY: as just said.
                unsafe { k.write_to(&mut bytes) };
                c.at = Some(Mark { bytes, val: v, inclusive: false });
                return true;
            }
        }
        match next {
            Some(m) => c.at = Some(m),
            None => c.done = true,
        }
        !c.done
    }

    /// Descends to the leaf holding the cursor's next entries; returns it,
    /// its version, and the tightest fences met (the separators bounding
    /// the leaf below and above), all validated.
    #[allow(clippy::type_complexity)]
    fn descend(&self, c: &Cursor) -> Opt<(u64, u64, Option<(Key, u64)>, Option<(Key, u64)>)> {
        let probe = c.at.as_ref().map(|m| Probe::new(&m.bytes, m.val));
        let (mut node, mut v) = self.root_locked()?;
        let (mut lo_fence, mut hi_fence) = (None, None);
        while !hdr(node).leaf {
            let inner = Self::inner(node);
            let n = inner.hdr.count(I - 1);
            let valid = Some((&inner.hdr, v));
            let pos = match (&probe, c.dir) {
                (None, Direction::Forward) => 0,
                (None, Direction::Backward) => n,
                // First separator above the position (inclusive or not,
                // entries at or after it are in that child or later ones).
                (Some(p), Direction::Forward) => inner.seps.search(n, p, true, valid)?,
                (Some(p), Direction::Backward) => {
                    let inclusive = c.at.as_ref().is_some_and(|m| m.inclusive);
                    inner.seps.search(n, p, inclusive, valid)?
                }
            };
            if pos > 0 {
                lo_fence = Some(inner.seps.load(pos - 1));
            }
            if pos < n {
                hi_fence = Some(inner.seps.load(pos));
            }
            (node, v) = self.child(inner, v, pos)?;
        }
        Ok((node, v, lo_fence, hi_fence))
    }

    /// Reads the cursor's entries from one leaf into `buf`; returns how many
    /// and where the scan goes on (`None`: it ends with this leaf).
    fn read_leaf(&self, c: &Cursor, buf: &mut [MaybeUninit<(Key, u64)>]) -> Opt<(usize, Option<Mark>)> {
        let (leaf, v, lo_fence, hi_fence) = self.descend(c)?;
        let l = Self::leaf(leaf);
        let n = l.hdr.count(L);
        let valid = Some((&l.hdr, v));
        let probe = c.at.as_ref().map(|m| Probe::new(&m.bytes, m.val));
        let mut out = 0;
        let mut ended = false;
        match c.dir {
            Direction::Forward => {
                let start = match (&probe, &c.at) {
                    (Some(p), Some(m)) => l.slots.search(n, p, !m.inclusive, valid)?,
                    _ => 0,
                };
                let hi = c.hi.as_ref().map(|h| Probe::new(h, 0));
                for i in start..n {
                    if let Some(h) = &hi {
                        if l.slots.cmp(i, h, valid)? != Ordering::Less {
                            ended = true;
                            break;
                        }
                    }
                    buf[out].write(l.slots.load(i));
                    out += 1;
                }
            }
            Direction::Backward => {
                let end = match (&probe, &c.at) {
                    (Some(p), Some(m)) => l.slots.search(n, p, m.inclusive, valid)?,
                    _ => n,
                };
                let lo = c.lo.as_ref().map(|b| Probe::new(b, 0));
                for i in (0..end).rev() {
                    if let Some(b) = &lo {
                        if l.slots.cmp(i, b, valid)? == Ordering::Less {
                            ended = true;
                            break;
                        }
                    }
                    buf[out].write(l.slots.load(i));
                    out += 1;
                }
            }
        }
        l.hdr.check(v)?;
        let fence = match c.dir {
            Direction::Forward => hi_fence,
            Direction::Backward => lo_fence,
        };
        let next = match fence {
            Some((k, val)) if !ended => {
                let mut bytes = SmallVec::new();
                // SAFETY: the fence was read from a validated inner node
                // during this pin, so its key is still allocated.
                unsafe { k.write_to(&mut bytes) };
                // Forward: entries from the fence on are in the next leaf.
                // Backward: entries below the fence are in the previous one.
                let inclusive = c.dir == Direction::Forward;
                let m = Mark { bytes, val, inclusive };
                // Past the scan's far bound: nothing more to read.
                let beyond = match c.dir {
                    Direction::Forward => c.hi.as_ref().is_some_and(|h| m.bytes[..] >= h[..]),
                    Direction::Backward => c.lo.as_ref().is_some_and(|b| m.bytes[..] < b[..]),
                };
                (!beyond).then_some(m)
            }
            _ => None,
        };
        Ok((out, next))
    }

    /// Checks the tree's invariants (tests): keys in order within and
    /// across nodes, separators bounding their subtrees, counts matching.
    /// Needs no concurrent writers.
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) -> u64 {
        let _g = pin();
        fn entry_bytes(k: Key) -> Vec<u8> {
            let mut b = SmallVec::<[u8; 32]>::new();
            // SAFETY: tests call this with no concurrent writers.
            unsafe { k.write_to(&mut b) };
            b.to_vec()
        }
        type Bound = Option<(Vec<u8>, u64)>;
        fn walk<const L: usize, const I: usize>(
            p: u64,
            lo: &Bound,
            hi: &Bound,
            depth: usize,
            leaf_depth: &mut Option<usize>,
        ) -> u64 {
            let h = hdr(p);
            assert_eq!(h.lock.load(Relaxed) & (LOCKED | OBSOLETE), 0, "node locked or obsolete");
            let in_range =
                |e: &(Vec<u8>, u64)| lo.as_ref().is_none_or(|l| e >= l) && hi.as_ref().is_none_or(|h| e < h);
            if h.leaf {
                let l = BTree::<L, I>::leaf(p);
                let n = l.hdr.count(L);
                let mut prev: Bound = None;
                for i in 0..n {
                    let (k, v) = l.slots.load(i);
                    let e = (entry_bytes(k), v);
                    assert!(in_range(&e), "leaf entry outside its fences");
                    assert!(prev.as_ref().is_none_or(|p| *p < e), "leaf entries out of order");
                    prev = Some(e);
                }
                match leaf_depth {
                    Some(d) => assert_eq!(*d, depth, "leaves at different depths"),
                    None => *leaf_depth = Some(depth),
                }
                n as u64
            } else {
                let inner = BTree::<L, I>::inner(p);
                let n = inner.hdr.count(I - 1);
                let seps: Vec<_> = (0..n)
                    .map(|i| {
                        let (k, v) = inner.seps.load(i);
                        (entry_bytes(k), v)
                    })
                    .collect();
                for w in seps.windows(2) {
                    assert!(w[0] < w[1], "separators out of order");
                }
                let mut total = 0;
                for i in 0..=n {
                    let clo = if i == 0 { lo.clone() } else { Some(seps[i - 1].clone()) };
                    let chi = if i == n { hi.clone() } else { Some(seps[i].clone()) };
                    total += walk::<L, I>(inner.child[i].load(Relaxed), &clo, &chi, depth + 1, leaf_depth);
                }
                total
            }
        }
        let mut d = None;
        let n = walk::<L, I>(self.root.load(Acquire), &None, &None, 0, &mut d);
        assert_eq!(n, self.len(), "entry count");
        n
    }
}

/// Frees retired memory.
///
/// # Safety
/// Nobody can reach `g` any more.
unsafe fn free_garbage<const L: usize, const I: usize>(g: Garbage) {
    match g {
        Garbage::Leaf(p) => drop(Box::from_raw(p as *mut Leaf<L>)),
        Garbage::Inner(p) => drop(Box::from_raw(p as *mut Inner<I>)),
        Garbage::Key(k) => k.free(),
    }
}

impl<const L: usize, const I: usize> Drop for BTree<L, I> {
    fn drop(&mut self) {
        // No reader or writer is left: free every node and every key the
        // live nodes own.
        fn free_node<const L: usize, const I: usize>(p: u64) {
            let h = hdr(p);
            // SAFETY: the tree is being dropped; nodes and keys are ours.
            unsafe {
                if h.leaf {
                    let l = BTree::<L, I>::leaf(p);
                    for i in 0..l.hdr.count(L) {
                        l.slots.key(i).free();
                    }
                    free_garbage::<L, I>(Garbage::Leaf(p));
                } else {
                    let inner = BTree::<L, I>::inner(p);
                    let n = inner.hdr.count(I - 1);
                    for i in 0..n {
                        inner.seps.key(i).free();
                    }
                    for i in 0..=n {
                        free_node::<L, I>(inner.child[i].load(Relaxed));
                    }
                    free_garbage::<L, I>(Garbage::Inner(p));
                }
            }
        }
        free_node::<L, I>(self.root.load(Acquire));
        #[cfg(loom)]
        for g in self.graveyard.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
            // SAFETY: as above.
            unsafe { free_garbage::<L, I>(g) };
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// Everything in `[lo, hi)` in direction `dir`, one value at a time
    /// (`step` values per batch at most, to exercise resuming mid-leaf).
    fn scan<const L: usize, const I: usize>(
        t: &BTree<L, I>,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
        dir: Direction,
        step: usize,
    ) -> Vec<u64> {
        let mut c = Cursor::new(lo, hi, dir);
        let mut out = Vec::new();
        loop {
            let mut taken = 0;
            let more = t.next_batch(&mut c, |v| {
                out.push(v);
                taken += 1;
                taken < step
            });
            if !more {
                return out;
            }
        }
    }

    fn model_scan(
        m: &BTreeSet<(Vec<u8>, u64)>,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
        dir: Direction,
    ) -> Vec<u64> {
        let it = m
            .iter()
            .filter(|(k, _)| lo.is_none_or(|l| &k[..] >= l) && hi.is_none_or(|h| &k[..] < h))
            .map(|(_, v)| *v);
        match dir {
            Direction::Forward => it.collect(),
            Direction::Backward => {
                let mut v: Vec<_> = it.collect();
                v.reverse();
                v
            }
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(Vec<u8>, u64),
        Remove(usize),
        Scan(Option<Vec<u8>>, Option<Vec<u8>>, bool, usize),
        Get(Vec<u8>),
    }

    /// Keys from a small alphabet with shared prefixes and lengths around
    /// the 16-byte inline limit, so duplicates, prefixes and long keys all
    /// occur.
    fn key() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            proptest::collection::vec(0u8..3, 0..4),
            proptest::collection::vec(0u8..2, 14..20),
            any::<u64>().prop_map(|k| k.to_be_bytes().to_vec()),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (key(), 0u64..4).prop_map(|(k, v)| Op::Insert(k, v)),
            3 => any::<usize>().prop_map(Op::Remove),
            1 => (proptest::option::of(key()), proptest::option::of(key()), any::<bool>(), 1usize..5)
                .prop_map(|(l, h, b, s)| Op::Scan(l, h, b, s)),
            1 => key().prop_map(Op::Get),
        ]
    }

    fn run_model<const L: usize, const I: usize>(ops: Vec<Op>) {
        let t = BTree::<L, I>::new();
        let mut m = BTreeSet::new();
        for op in ops {
            match op {
                Op::Insert(k, v) => assert_eq!(t.insert(&k, v), m.insert((k, v))),
                Op::Remove(i) => {
                    if m.is_empty() {
                        continue;
                    }
                    let e = m.iter().nth(i % m.len()).cloned().expect("entry");
                    assert!(t.remove(&e.0, e.1));
                    m.remove(&e);
                    assert!(!t.remove(&e.0, e.1));
                }
                Op::Scan(lo, hi, back, step) => {
                    let dir = if back { Direction::Backward } else { Direction::Forward };
                    let got = scan(&t, lo.as_deref(), hi.as_deref(), dir, step);
                    let expected = model_scan(&m, lo.as_deref(), hi.as_deref(), dir);
                    assert_eq!(got, expected);
                    // The short scan gives the same values (the first
                    // `step` of them when its callback stops there), or
                    // declines without passing any.
                    if let (Some(lo), Some(hi), false) = (&lo, &hi, back) {
                        let mut short = Vec::new();
                        let whole = t.scan_short(lo, hi, |v| {
                            short.push(v);
                            short.len() < step
                        });
                        if whole {
                            assert_eq!(short, expected[..expected.len().min(step)]);
                        } else {
                            assert!(short.is_empty());
                        }
                    }
                }
                Op::Get(k) => {
                    let first = |k: &Vec<u8>| {
                        m.range((k.clone(), 0)..).next().filter(|(mk, _)| mk == k).map(|(_, v)| *v)
                    };
                    assert_eq!(t.get(&k), first(&k));
                    // A batch: the key, its neighbours in the model, and misses.
                    let mut batch: Vec<Vec<u8>> = m.iter().take(20).map(|(k, _)| k.clone()).collect();
                    batch.push(k.clone());
                    batch.push(vec![9; 30]);
                    let mut got = Vec::new();
                    t.get_many(&batch, &mut got);
                    assert_eq!(got, batch.iter().map(first).collect::<Vec<_>>());
                }
            }
        }
        t.check_invariants();
        assert_eq!(
            scan(&t, None, None, Direction::Forward, usize::MAX),
            model_scan(&m, None, None, Direction::Forward)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn small_nodes_match_a_btreeset(ops in proptest::collection::vec(op(), 1..600)) {
            run_model::<4, 4>(ops);
        }

        #[test]
        fn default_nodes_match_a_btreeset(ops in proptest::collection::vec(op(), 1..1500)) {
            run_model::<LEAF_CAP, INNER_CAP>(ops);
        }
    }

    #[test]
    fn grows_and_shrinks_back_to_one_leaf() {
        let t = BTree::<4, 4>::new();
        for i in 0u64..2000 {
            assert!(t.insert(&i.to_be_bytes(), i));
        }
        t.check_invariants();
        assert!(t.stats().inners > 10);
        for i in (0u64..2000).rev() {
            assert!(t.remove(&i.to_be_bytes(), i));
        }
        t.check_invariants();
        let s = t.stats();
        assert_eq!((s.entries, s.leaves, s.inners), (0, 1, 0), "{s:?}");
    }

    /// Keys arriving in order leave full leaves behind them (a half-and-
    /// half split would leave them half empty); keys in random order still
    /// split leaves in half.
    #[test]
    fn keys_in_order_fill_their_leaves() {
        // The share of leaf slots in use after inserting `keys`.
        let fill = |keys: &mut dyn Iterator<Item = u64>| {
            let t = BTree::<64, 64>::new();
            keys.for_each(|i| assert!(t.insert(&i.to_be_bytes(), i)));
            t.check_invariants();
            let s = t.stats();
            s.entries as f64 / (s.leaves * s.leaf_capacity) as f64
        };
        let ascending = fill(&mut (0u64..100_000));
        assert!(ascending > 0.95, "{ascending}");
        // Two ascending runs at once, each in its own range (as an index
        // build's threads enter theirs): where they meet, a leaf splits
        // after the previous insert, not in half.
        let two = fill(&mut (0u64..50_000).flat_map(|i| [i, 1_000_000 + i]));
        assert!(two > 0.95, "{two}");
        // Descending keys go before every entry of their leaf.
        let descending = fill(&mut (0u64..100_000).rev());
        assert!(descending > 0.45 && descending < 0.6, "{descending}");
    }

    /// Writers insert and delete disjoint key sets while readers scan in
    /// both directions: every scan is in order with no entry twice, and
    /// sees every entry that was present for its whole duration.
    #[test]
    fn concurrent_inserts_deletes_and_scans() {
        const PER: u64 = 20_000;
        let t = std::sync::Arc::new(BTree::<8, 8>::new());
        // Permanent entries every scan must see.
        for i in 0..PER / 4 {
            t.insert(&(i * 16 + 15).to_be_bytes(), 7);
        }
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writers: Vec<_> = (0..2u64)
            .map(|w| {
                let t = t.clone();
                std::thread::spawn(move || {
                    for round in 0..3u64 {
                        for i in 0..PER / 4 {
                            let k = (i * 16 + w * 4 + round).to_be_bytes();
                            assert!(t.insert(&k, w));
                        }
                        for i in 0..PER / 4 {
                            let k = (i * 16 + w * 4 + round).to_be_bytes();
                            assert!(t.remove(&k, w));
                        }
                    }
                })
            })
            .collect();
        let readers: Vec<_> = (0..2)
            .map(|r| {
                let (t, stop) = (t.clone(), stop.clone());
                std::thread::spawn(move || {
                    let dir = if r == 0 { Direction::Forward } else { Direction::Backward };
                    let mut scans = 0;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) || scans == 0 {
                        let mut c = Cursor::new(None, None, dir);
                        let mut vals = Vec::new();
                        while t.next_batch(&mut c, |v| {
                            vals.push(v);
                            true
                        }) {}
                        // Values are the writer number or 7 (permanent).
                        let permanent = vals.iter().filter(|&&v| v == 7).count() as u64;
                        assert_eq!(permanent, PER / 4, "a permanent entry was missed or repeated");
                        scans += 1;
                    }
                    scans
                })
            })
            .collect();
        // Equality look-ups of permanent keys through the short scan, while
        // leaves split and merge around them: each that the short scan
        // answers finds its key exactly once.
        let looker = {
            let (t, stop) = (t.clone(), stop.clone());
            std::thread::spawn(move || {
                let (mut answered, mut i) = (0u64, 0u64);
                while !stop.load(std::sync::atomic::Ordering::Relaxed) || answered == 0 {
                    let k = ((i * 7919) % (PER / 4) * 16 + 15).to_be_bytes();
                    let mut hi = k.to_vec();
                    hi.push(0);
                    let mut found = Vec::new();
                    if t.scan_short(&k, &hi, |v| {
                        found.push(v);
                        true
                    }) {
                        assert_eq!(found, [7], "key {i} seen {found:?}");
                        answered += 1;
                    }
                    i += 1;
                }
                answered
            })
        };
        for w in writers {
            w.join().expect("writer");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for r in readers {
            assert!(r.join().expect("reader") > 0);
        }
        assert!(looker.join().expect("looker") > 0);
        t.check_invariants();
        assert_eq!(t.len(), PER / 4);
    }

    /// Scans with byte-ordered keys check order and uniqueness directly:
    /// each value is the key itself.
    #[test]
    fn concurrent_scans_see_keys_in_order_once() {
        let t = std::sync::Arc::new(BTree::<6, 6>::new());
        for i in 0u64..5000 {
            t.insert(&(i * 2).to_be_bytes(), i * 2);
        }
        let writer = {
            let t = t.clone();
            std::thread::spawn(move || {
                for round in 0..4 {
                    for i in 0u64..5000 {
                        let k = i * 2 + 1;
                        if round % 2 == 0 {
                            t.insert(&k.to_be_bytes(), k);
                        } else {
                            t.remove(&k.to_be_bytes(), k);
                        }
                    }
                }
            })
        };
        for back in [false, true, false, true] {
            for _ in 0..20 {
                let dir = if back { Direction::Backward } else { Direction::Forward };
                let got = scan(&t, None, None, dir, 3);
                let mut sorted = got.clone();
                sorted.sort_unstable();
                sorted.dedup();
                if back {
                    sorted.reverse();
                }
                assert_eq!(got, sorted, "out of order or repeated");
                let evens = got.iter().filter(|&&k| k % 2 == 0).count();
                assert_eq!(evens, 5000, "a committed key went missing");
            }
        }
        writer.join().expect("writer");
        t.check_invariants();
    }
}
