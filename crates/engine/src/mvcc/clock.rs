//! The logical clock: commit timestamps and the visibility watermark.
//!
//! Every transaction that changes data takes a commit timestamp from one
//! global counter when it starts to commit. Timestamps are handed out in
//! order but transactions finish (commit or abort) in any order, so the
//! clock also keeps a *watermark*: the largest timestamp `W` such that every
//! transaction with a commit timestamp `<= W` has finished.
//!
//! ```text
//!   commit timestamps:  41  42  43  44  45  46      (next = 47)
//!   finished?            y   y   n   y   y   n
//!                            ^
//!                        watermark = 42
//! ```
//!
//! A transaction reads as of the watermark, never as of the raw counter.
//! So a reader never meets a version whose fate is still open at its read
//! time: every writer with a timestamp at or below the read time has
//! already committed or aborted. Readers therefore never wait and never
//! take commit dependencies on a transaction that is still validating or
//! writing its log record. The price is paid by committers: a commit is
//! acknowledged only once the watermark has reached its timestamp, so that
//! the next transaction of the same session is sure to see it.
//!
//! Finished timestamps are recorded in a ring; whoever finishes advances the
//! watermark over the run of finished entries after it.

use crate::sync::{AtomicU64, Ordering::SeqCst};
use crossbeam_utils::CachePadded;
use std::task::Waker;

/// Slots in the ring of finished timestamps: how far commit timestamps may
/// run ahead of the watermark before a new committer has to wait.
const RING: u64 = 1 << 16;

/// The global logical clock.
pub(crate) struct Clock {
    /// The next commit timestamp to hand out.
    next: CachePadded<AtomicU64>,
    /// Every commit timestamp `<= watermark` has finished. On its own cache
    /// line: every snapshot reads it, every commit advances it.
    watermark: CachePadded<AtomicU64>,
    /// `ring[slot(ts)] == ts` once timestamp `ts` has finished.
    ring: Box<[AtomicU64]>,
    /// Tasks waiting for the watermark to reach a timestamp (see
    /// [`Clock::poll_visible`]), and how many: [`Clock::finish`] looks at
    /// the list only while it is not empty.
    watchers: std::sync::Mutex<Vec<(u64, Waker)>>,
    watching: std::sync::atomic::AtomicUsize,
}

/// The ring entry of `ts`. Consecutive timestamps go to different cache
/// lines (eight entries share a line), so committers on different cores
/// do not write to one line.
#[inline]
fn slot(ts: u64) -> usize {
    let i = ts % RING;
    (((i & 7) << 13) | (i >> 3)) as usize
}

impl Clock {
    /// A clock whose first commit timestamp is `start + 1`.
    pub(crate) fn new(start: u64) -> Clock {
        Clock {
            next: CachePadded::new(AtomicU64::new(start + 1)),
            watermark: CachePadded::new(AtomicU64::new(start)),
            ring: (0..RING).map(|_| AtomicU64::new(u64::MAX)).collect(),
            watchers: std::sync::Mutex::new(Vec::new()),
            watching: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The read timestamp for a new snapshot.
    pub(crate) fn watermark(&self) -> u64 {
        self.watermark.load(SeqCst)
    }

    /// Hands out the next commit timestamp. It must later be passed to
    /// [`Clock::finish`], whether the transaction commits or aborts.
    pub(crate) fn allocate(&self) -> u64 {
        let ts = self.next.fetch_add(1, SeqCst);
        // The ring entry for `ts` is reused from `ts - RING`; wait until that
        // one has finished and been passed by the watermark.
        let mut spins = 0u32;
        while ts >= self.watermark() + RING {
            backoff(&mut spins);
        }
        ts
    }

    /// Records that the transaction with commit timestamp `ts` is finished
    /// and advances the watermark as far as it can go.
    pub(crate) fn finish(&self, ts: u64) {
        self.advance(ts);
        self.wake_watchers();
    }

    /// Moves the clock to `ts` at once, every timestamp below it taken and
    /// finished: a standby's, whose timestamps are its primary's and come
    /// with the records it applies (one at a time, in order), and which
    /// allocates none of its own meanwhile.
    pub(crate) fn jump(&self, ts: u64) {
        self.next.fetch_max(ts + 1, SeqCst);
        self.ring[slot(ts)].store(ts, SeqCst);
        self.watermark.fetch_max(ts, SeqCst);
        self.wake_watchers();
    }

    fn wake_watchers(&self) {
        if self.watching.load(SeqCst) > 0 {
            let w = self.watermark();
            let mut watchers = self.watchers.lock().unwrap_or_else(|p| p.into_inner());
            watchers.retain(|(t, waker)| {
                if *t <= w {
                    waker.wake_by_ref();
                }
                *t > w
            });
            self.watching.store(watchers.len(), SeqCst);
        }
    }

    /// Whether the watermark has reached `ts`; if not, `waker` is woken
    /// once it has (a task that must not block its thread waiting for the
    /// commits before its own to be published).
    pub(crate) fn poll_visible(&self, ts: u64, waker: &Waker) -> bool {
        if self.watermark() >= ts {
            return true;
        }
        let mut watchers = self.watchers.lock().unwrap_or_else(|p| p.into_inner());
        if !watchers.iter().any(|(t, w)| *t == ts && w.will_wake(waker)) {
            watchers.push((ts, waker.clone()));
        }
        self.watching.store(watchers.len(), SeqCst);
        drop(watchers);
        // Looked at again after announcing the wait: a finish that came
        // before it is seen here, one that comes after sees the count.
        self.watermark() >= ts
    }

    /// Records `ts` as finished and moves the watermark as far as it goes.
    fn advance(&self, ts: u64) {
        self.ring[slot(ts)].store(ts, SeqCst);
        loop {
            let w = self.watermark.load(SeqCst);
            let n = w + 1;
            if self.ring[slot(n)].load(SeqCst) != n {
                return;
            }
            // Losing the race means someone else advanced; look again.
            let _ = self.watermark.compare_exchange(w, n, SeqCst, SeqCst);
        }
    }

    /// Waits until the watermark has reached `ts`, so that every snapshot
    /// taken from now on sees the transaction that committed at `ts`.
    ///
    /// The transactions before `ts` are normally publishing their commits
    /// on other threads that very moment. But on a server whose workers
    /// each serve many sessions, one of them may be a session still
    /// waiting for a worker to run on: past the spinning, the rest of the
    /// wait is a blocking section (see [`crate::blocking`]), so that this
    /// worker's sessions move to another thread meanwhile.
    pub(crate) fn wait_visible(&self, ts: u64) {
        let mut spins = 0u32;
        while self.watermark() < ts {
            if spins >= SLEEPS_FROM {
                crate::blocking::section(|| {
                    while self.watermark() < ts {
                        backoff(&mut spins);
                    }
                });
                return;
            }
            backoff(&mut spins);
        }
    }
}

/// The spin count from which [`backoff`] sleeps.
const SLEEPS_FROM: u32 = 256;

/// Spins briefly, then yields, then sleeps: for waits that are normally a
/// few hundred nanoseconds (another committer finishing) but may be longer.
pub(crate) fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else if *spins < SLEEPS_FROM {
        std::thread::yield_now();
    } else {
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn ring_slots_are_a_permutation() {
        let mut seen = vec![false; RING as usize];
        for ts in 0..RING {
            assert!(!std::mem::replace(&mut seen[slot(ts)], true));
        }
        assert_eq!(slot(RING + 5), slot(5));
    }

    #[test]
    fn watermark_waits_for_the_oldest_unfinished_timestamp() {
        let c = Clock::new(0);
        let (a, b, d) = (c.allocate(), c.allocate(), c.allocate());
        assert_eq!((a, b, d), (1, 2, 3));
        c.finish(b);
        c.finish(d);
        assert_eq!(c.watermark(), 0);
        c.finish(a);
        assert_eq!(c.watermark(), 3);
    }

    #[test]
    fn concurrent_finishers_never_lose_the_watermark() {
        let c = std::sync::Arc::new(Clock::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        let ts = c.allocate();
                        c.finish(ts);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(c.watermark(), 80_000);
    }
}
