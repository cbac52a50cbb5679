//! A row version in memory.
//!
//! A version is one heap allocation: a fixed header, one link per index
//! slot of its table, then the encoded column data. There are no pages and
//! no buffer pool; indexes point straight at versions and chain them
//! through the links.
//!
//! ```text
//!  offset  size
//!  0       8     begin    commit timestamp or creating transaction id
//!  8       8     end      INFINITY, commit timestamp or deleting transaction id
//!  16      8     newer    the version that replaced this one (null if none)
//!  24      4     gen      table layout generation the version was made under
//!  28      2     links    number of index links that follow
//!  30      2     flags    bit 0: claimed for unlinking, bit 1: unlinked,
//!                        bit 2: marked in every chain, not yet swept out,
//!                        bits 3-15: long chains it waits to be swept out of
//!  32      4     len      bytes of column data
//!  36      4     stmt     operation number of the creator (hides a statement's own writes from it)
//!  40      8*L   link[i]  next version in index slot i's chain; bit 0 = being unlinked
//!  40+8L   len   data     encoded columns (see row::layout)
//! ```

use crate::sync::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::alloc::{alloc, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU16};

/// The fixed part of a version.
#[repr(C)]
pub(crate) struct Header {
    pub(crate) begin: AtomicU64,
    pub(crate) end: AtomicU64,
    pub(crate) newer: AtomicPtr<Header>,
    pub(crate) gen: u32,
    links: u16,
    flags: AtomicU16,
    len: u32,
    /// Operation number of the creating transaction (see `mvcc::transaction`).
    pub(crate) stmt: u32,
}

const HEADER: usize = std::mem::size_of::<Header>();
const _: () = assert!(HEADER == 40);

const FLAG_CLAIMED: u16 = 1;
const FLAG_UNLINKED: u16 = 2;
const FLAG_MARKED: u16 = 4;
/// One long chain waited for, in the count that flags bits 3-15 keep.
const WAIT_ONE: u16 = 8;

/// A pointer to a version. Copyable; whoever holds one must make sure the
/// version is not reclaimed meanwhile (an epoch pin, or the version being
/// visible to a live transaction, see `docs/design.md`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub(crate) struct VersionPtr(NonNull<Header>);

// Versions are shared between threads by design; all mutable state in them
// is atomic and the data is written once before the version is published.
unsafe impl Send for VersionPtr {}
unsafe impl Sync for VersionPtr {}

impl VersionPtr {
    /// Bytes allocated for a version with `links` links and `len` data bytes.
    pub(crate) fn alloc_size(links: usize, len: usize) -> usize {
        HEADER + 8 * links + len
    }

    /// Allocates a version, lets `fill` write its data, and returns it with
    /// `begin` set and `end` at infinity. Not yet linked anywhere.
    pub(crate) fn new(
        begin: u64,
        gen: u32,
        stmt: u32,
        links: usize,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> VersionPtr {
        let size = Self::alloc_size(links, len);
        let layout = Layout::from_size_align(size, 8).expect("version layout");
        // SAFETY: size is non-zero (the header alone is 40 bytes).
        let raw = unsafe { alloc(layout) } as *mut Header;
        let Some(ptr) = NonNull::new(raw) else { std::alloc::handle_alloc_error(layout) };
        // SAFETY: `raw` is a fresh allocation of `size` bytes, aligned to 8;
        // header, links and data are written before anyone else sees it.
        unsafe {
            raw.write(Header {
                begin: AtomicU64::new(begin),
                end: AtomicU64::new(crate::mvcc::word::INFINITY),
                newer: AtomicPtr::new(std::ptr::null_mut()),
                gen,
                links: links as u16,
                flags: AtomicU16::new(0),
                len: len as u32,
                stmt,
            });
            let link0 = (raw as *mut u8).add(HEADER) as *mut AtomicUsize;
            for i in 0..links {
                link0.add(i).write(AtomicUsize::new(0));
            }
            let data = std::slice::from_raw_parts_mut((raw as *mut u8).add(HEADER + 8 * links), len);
            fill(data);
        }
        VersionPtr(ptr)
    }

    /// Starts loading the version's first two cache lines (header, links
    /// and the start of the data).
    #[inline]
    pub(crate) fn prefetch(self) {
        let p = self.0.as_ptr() as *const u8;
        crate::index::chain::prefetch(p);
        crate::index::chain::prefetch(p.wrapping_add(64));
    }

    /// Frees the version.
    ///
    /// # Safety
    /// No thread may hold or later obtain a pointer to it: it is unlinked
    /// from every index and every epoch pin that could have seen it is gone.
    pub(crate) unsafe fn free(self) {
        let size = self.size();
        // SAFETY: the caller guarantees exclusive ownership; the layout is the
        // one `new` used.
        unsafe {
            dealloc(self.0.as_ptr() as *mut u8, Layout::from_size_align_unchecked(size, 8));
        }
    }

    /// The version a raw link or bucket word points to (mark bit ignored).
    #[inline]
    pub(crate) fn from_word(word: usize) -> Option<VersionPtr> {
        NonNull::new((word & !1) as *mut Header).map(VersionPtr)
    }

    /// This version as a link word.
    #[inline]
    pub(crate) fn word(self) -> usize {
        self.0.as_ptr() as usize
    }

    /// The version a raw `newer` pointer points to.
    pub(crate) fn from_raw(p: *mut Header) -> Option<VersionPtr> {
        NonNull::new(p).map(VersionPtr)
    }

    /// The raw pointer.
    pub(crate) fn as_raw(self) -> *mut Header {
        self.0.as_ptr()
    }

    #[inline]
    pub(crate) fn header<'a>(self) -> &'a Header {
        // SAFETY: a VersionPtr always points to a live version (see type docs).
        unsafe { self.0.as_ref() }
    }

    /// Begin field.
    #[inline]
    pub(crate) fn begin<'a>(self) -> &'a AtomicU64 {
        &self.header().begin
    }

    /// End field.
    #[inline]
    pub(crate) fn end<'a>(self) -> &'a AtomicU64 {
        &self.header().end
    }

    /// Number of index links.
    #[inline]
    pub(crate) fn links(self) -> usize {
        self.header().links as usize
    }

    /// Index link `i`.
    #[inline]
    pub(crate) fn link<'a>(self, i: usize) -> &'a AtomicUsize {
        debug_assert!(i < self.links());
        // SAFETY: links follow the header; `i` is in range.
        unsafe { &*((self.0.as_ptr() as *const u8).add(HEADER + 8 * i) as *const AtomicUsize) }
    }

    /// The encoded column data.
    #[inline]
    pub(crate) fn data<'a>(self) -> &'a [u8] {
        let h = self.header();
        // SAFETY: the data follows the links and was written before publication.
        unsafe {
            std::slice::from_raw_parts(
                (self.0.as_ptr() as *const u8).add(HEADER + 8 * h.links as usize),
                h.len as usize,
            )
        }
    }

    /// Bytes this version occupies.
    pub(crate) fn size(self) -> usize {
        let h = self.header();
        Self::alloc_size(h.links as usize, h.len as usize)
    }

    /// Claims the version for unlinking by the garbage collector; true for
    /// exactly one caller.
    pub(crate) fn claim(self) -> bool {
        self.header().flags.fetch_or(FLAG_CLAIMED, SeqCst) & FLAG_CLAIMED == 0
    }

    /// Whether someone has claimed the version's unlinking.
    pub(crate) fn is_claimed(self) -> bool {
        self.header().flags.load(SeqCst) & FLAG_CLAIMED != 0
    }

    /// Records that the version is unlinked from every chain.
    pub(crate) fn set_unlinked(self) {
        self.header().flags.fetch_or(FLAG_UNLINKED, SeqCst);
    }

    /// Whether the version is unlinked from every chain.
    pub(crate) fn is_unlinked(self) -> bool {
        self.header().flags.load(SeqCst) & FLAG_UNLINKED != 0
    }

    /// Records that whoever claimed the version marked it in every chain
    /// but left sweeping it out to the owner of its reclamation.
    pub(crate) fn set_marked(self) {
        self.header().flags.fetch_or(FLAG_MARKED, SeqCst);
    }

    /// Counts one more long chain the version waits to be swept out of;
    /// true if it is the first.
    pub(crate) fn wait_for_sweep(self) -> bool {
        let before = self.header().flags.fetch_add(WAIT_ONE, SeqCst);
        debug_assert!(before < u16::MAX - WAIT_ONE, "too many sweeps waited for");
        before >> 3 == 0
    }

    /// Counts one long chain less; true when it was the last one.
    pub(crate) fn swept(self) -> bool {
        self.header().flags.fetch_sub(WAIT_ONE, SeqCst) >> 3 == 1
    }

    /// Waits until whoever claimed the version is done with it: true if
    /// it is left marked for the caller to sweep out, false if it is
    /// unlinked already.
    pub(crate) fn wait_settled(self) -> bool {
        let mut spins = 0;
        loop {
            let f = self.header().flags.load(SeqCst);
            if f & FLAG_UNLINKED != 0 {
                return false;
            }
            if f & FLAG_MARKED != 0 {
                return true;
            }
            crate::mvcc::clock::backoff(&mut spins);
        }
    }

    /// The version that replaced this one, if any.
    pub(crate) fn newer(self) -> Option<VersionPtr> {
        Self::from_raw(self.header().newer.load(SeqCst))
    }

    /// Records the version that replaces this one.
    pub(crate) fn set_newer(self, n: Option<VersionPtr>) {
        let p = n.map_or(std::ptr::null_mut(), |v| v.as_raw());
        self.header().newer.store(p, SeqCst);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn layout_keeps_links_and_data_apart() {
        let v = VersionPtr::new(7, 3, 0, 2, 5, |d| d.copy_from_slice(b"hello"));
        assert_eq!(v.begin().load(SeqCst), 7);
        assert_eq!(v.header().gen, 3);
        assert_eq!(v.links(), 2);
        v.link(1).store(0xdead_bee8, SeqCst);
        assert_eq!(v.link(0).load(SeqCst), 0);
        assert_eq!(v.data(), b"hello");
        assert_eq!(v.size(), 40 + 16 + 5);
        assert!(v.claim());
        assert!(!v.claim());
        unsafe { v.free() };
    }
}
