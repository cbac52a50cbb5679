//! Striped counters for statistics on hot paths.
//!
//! Memory and entry counts change on every insert from every thread; one
//! shared atomic would bounce its cache line between cores on each commit.
//! Each thread adds to its own cache-padded stripe instead, and a reader
//! sums the stripes.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering::Relaxed};

const STRIPES: usize = 32;

/// A counter that many threads can add to without contention.
pub(crate) struct Counter {
    stripes: Box<[CachePadded<AtomicI64>]>,
}

impl Default for Counter {
    fn default() -> Self {
        Counter { stripes: (0..STRIPES).map(|_| CachePadded::new(AtomicI64::new(0))).collect() }
    }
}

impl Counter {
    /// Adds `n` (may be negative).
    #[inline]
    pub(crate) fn add(&self, n: i64) {
        self.stripes[stripe()].fetch_add(n, Relaxed);
    }

    /// The current total (not a snapshot: concurrent adds may or may not be
    /// counted).
    pub(crate) fn get(&self) -> i64 {
        self.stripes.iter().map(|s| s.load(Relaxed)).sum()
    }
}

/// This thread's stripe number, in `0..32`.
pub(crate) fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, Relaxed) % STRIPES;
    }
    STRIPE.with(|s| *s)
}
