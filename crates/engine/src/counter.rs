//! Striped counters for statistics on hot paths.
//!
//! Memory and entry counts change on every insert from every thread; one
//! shared atomic would bounce its cache line between cores on each commit.
//! Each thread adds to its own cache-padded stripe instead, and a reader
//! sums the stripes.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering::Relaxed};

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

/// `N` counters bumped together, striped like [`Counter`]: each stripe is
/// one cache line holding all of them, so an operation that bumps two of
/// them touches one line of its own thread's stripe.
pub(crate) struct Tally<const N: usize> {
    stripes: Box<[CachePadded<[AtomicU64; N]>]>,
}

impl<const N: usize> Default for Tally<N> {
    fn default() -> Self {
        Tally {
            stripes: (0..STRIPES)
                .map(|_| CachePadded::new(std::array::from_fn(|_| AtomicU64::new(0))))
                .collect(),
        }
    }
}

impl<const N: usize> Tally<N> {
    /// Adds `n` to counter `i`.
    #[inline]
    pub(crate) fn add(&self, i: usize, n: u64) {
        self.stripes[stripe()][i].fetch_add(n, Relaxed);
    }

    /// Every counter's current total (not a snapshot, as for [`Counter`]).
    pub(crate) fn get(&self) -> [u64; N] {
        let mut out = [0u64; N];
        for s in self.stripes.iter() {
            for (o, c) in out.iter_mut().zip(s.iter()) {
                *o = o.wrapping_add(c.load(Relaxed));
            }
        }
        out
    }

    /// Sets every counter back to zero (adds racing with it may survive).
    pub(crate) fn reset(&self) {
        for s in self.stripes.iter() {
            for c in s.iter() {
                c.store(0, Relaxed);
            }
        }
    }
}
