//! Garbage collection of row versions.
//!
//! A version is garbage once it was deleted (or replaced) by a transaction
//! that committed at a timestamp no active or future transaction reads
//! past: its end timestamp is at or below the *horizon*. The horizon is the
//! smallest read timestamp of any active transaction, and never more than
//! the clock's watermark (where new transactions start reading).
//!
//! Work comes from two sides, as in Hekaton:
//! - every committed transaction that replaced or deleted versions queues
//!   them with its commit timestamp; the collector (a background thread,
//!   and committers that find the queue long, a few hundred versions each
//!   so that no commit pays for everyone's garbage) takes the items whose
//!   timestamp the horizon has passed, unlinks their versions from every
//!   chain, and hands them to epoch-based reclamation;
//! - readers that walk past a garbage version unlink it on the spot
//!   (cooperative collection), so hot chains stay short between rounds.
//!
//! Whoever unlinks first *claims* the version; only the queue item that
//! owns a version frees it, after the claimant has finished unlinking, so a
//! version is freed exactly once. Freed memory waits for every epoch pin
//! that might still see the version: readers pin per operation (one chain
//! walk, one scan batch), never per transaction.
//!
//! ## The horizon protocol
//!
//! A starting transaction reads the watermark `W`, stores it as its read
//! timestamp, and then checks that the *proposed* horizon is `<= W`,
//! retrying otherwise. The collector computes `m = min(watermark, all read
//! timestamps)`, stores it as the proposed horizon, scans the read
//! timestamps again, and only then publishes `min(m, rescan)` as the
//! horizon it acts on. With sequentially consistent atomics either the
//! starter sees the proposal (and moves past it) or the rescan sees the
//! starter, so no transaction ever reads below the published horizon.

use crate::mvcc::clock::Clock;
use crate::mvcc::txn_table::TxnTable;
use crate::row::version::VersionPtr;
use crate::table::Table;
use crossbeam_queue::SegQueue;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

/// Versions a committed transaction replaced or deleted.
pub(crate) struct GcItem {
    /// Commit timestamp of the transaction.
    pub(crate) ts: u64,
    /// Tables the versions belong to (kept alive until the versions go).
    pub(crate) tables: Vec<Arc<Table>>,
    /// Each version with the index of its table in `tables`.
    pub(crate) versions: Vec<(u32, VersionPtr)>,
}

impl PartialEq for GcItem {
    fn eq(&self, o: &Self) -> bool {
        self.ts == o.ts
    }
}
impl Eq for GcItem {}
impl PartialOrd for GcItem {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for GcItem {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.ts.cmp(&o.ts)
    }
}

/// Counters of the collector's work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcStats {
    /// The horizon the collector last acted on.
    pub horizon: u64,
    /// Versions freed so far.
    pub freed: u64,
    /// Versions unlinked by readers that met them.
    pub unlinked_by_readers: u64,
    /// Queued items waiting for the horizon.
    pub pending: u64,
}

/// The garbage collector's shared state.
pub(crate) struct Gc {
    queue: SegQueue<GcItem>,
    queued: AtomicUsize,
    /// Items in `waiting` (readable without its lock).
    parked: AtomicUsize,
    /// Items taken from the queue whose timestamp the horizon has not passed.
    waiting: Mutex<BinaryHeap<Reverse<GcItem>>>,
    proposed: AtomicU64,
    horizon: AtomicU64,
    freed: AtomicU64,
    by_readers: AtomicU64,
}

/// Queue length at which committers collect instead of leaving it to the
/// background thread: back-pressure for update storms.
const INLINE_THRESHOLD: usize = 1024;
/// Versions a committer frees per inline round: small, so no single
/// commit pays for everyone's garbage.
pub(crate) const INLINE_BUDGET: usize = 256;

impl Gc {
    pub(crate) fn new(start: u64) -> Gc {
        Gc {
            queue: SegQueue::new(),
            queued: AtomicUsize::new(0),
            parked: AtomicUsize::new(0),
            waiting: Mutex::new(BinaryHeap::new()),
            proposed: AtomicU64::new(start),
            horizon: AtomicU64::new(start),
            freed: AtomicU64::new(0),
            by_readers: AtomicU64::new(0),
        }
    }

    /// The horizon readers may collect below.
    #[inline]
    pub(crate) fn horizon(&self) -> u64 {
        self.horizon.load(SeqCst)
    }

    /// Registers a starting reader: returns the read timestamp to use,
    /// after publishing it with `publish` (see the module docs).
    pub(crate) fn start_reader(&self, clock: &Clock, mut publish: impl FnMut(u64)) -> u64 {
        loop {
            let w = clock.watermark();
            publish(w);
            if self.proposed.load(SeqCst) <= w {
                return w;
            }
        }
    }

    /// Queues versions replaced by a committed transaction. Returns true if
    /// the caller should help collect.
    pub(crate) fn push(&self, item: GcItem) -> bool {
        self.queue.push(item);
        self.queued.fetch_add(1, SeqCst) + self.parked.load(SeqCst) >= INLINE_THRESHOLD
    }

    /// Collects in rounds of `ROUND` versions until a round finds less
    /// than that: each round moves the horizon again, so readers' own
    /// collection never works with a stale one.
    pub(crate) fn collect_all(&self, clock: &Clock, txns: &TxnTable) -> usize {
        const ROUND: usize = 16 * 1024;
        let mut total = 0;
        loop {
            let n = self.collect(clock, txns, ROUND);
            total += n;
            if n < ROUND {
                return total;
            }
        }
    }

    fn advance_horizon(&self, clock: &Clock, txns: &TxnTable) -> u64 {
        let m = clock.watermark().min(txns.min_read_ts());
        self.proposed.fetch_max(m, SeqCst);
        let m = m.min(txns.min_read_ts());
        self.horizon.fetch_max(m, SeqCst);
        self.horizon()
    }

    /// One collection round: moves the horizon and frees what it passed,
    /// up to about `budget` versions (whole items). Returns the number of
    /// versions freed. Only one thread collects at a time; others return at
    /// once.
    pub(crate) fn collect(&self, clock: &Clock, txns: &TxnTable, budget: usize) -> usize {
        let Ok(mut waiting) = self.waiting.try_lock() else {
            return 0;
        };
        let horizon = self.advance_horizon(clock, txns);
        while let Some(item) = self.queue.pop() {
            self.queued.fetch_sub(1, SeqCst);
            waiting.push(Reverse(item));
        }
        let mut freed = 0;
        let guard = crossbeam_epoch::pin();
        while freed < budget && waiting.peek().is_some_and(|Reverse(i)| i.ts <= horizon) {
            let Some(Reverse(item)) = waiting.pop() else { break };
            for &(t, v) in &item.versions {
                let table = &item.tables[t as usize];
                if v.claim() {
                    table.unlink(v);
                } else {
                    // A reader claimed it; wait for its unlink to finish.
                    let mut spins = 0;
                    while !v.is_unlinked() {
                        crate::mvcc::clock::backoff(&mut spins);
                    }
                }
                table.forget(v);
                // SAFETY: `v` is unreachable from every chain; readers that
                // reached it before hold epoch pins the deferral waits for.
                unsafe { guard.defer_unchecked(move || v.free()) };
                freed += 1;
            }
            if freed % 1024 < item.versions.len() {
                guard.flush();
            }
        }
        guard.flush();
        self.parked.store(waiting.len(), SeqCst);
        self.freed.fetch_add(freed as u64, SeqCst);
        freed
    }

    /// Called by a reader that met garbage version `v` of `table`.
    pub(crate) fn reader_unlink(&self, table: &Table, v: VersionPtr) {
        if v.claim() {
            table.unlink(v);
            self.by_readers.fetch_add(1, SeqCst);
        }
    }

    /// Counters.
    pub(crate) fn stats(&self) -> GcStats {
        let waiting = self.parked.load(SeqCst);
        GcStats {
            horizon: self.horizon(),
            freed: self.freed.load(SeqCst),
            unlinked_by_readers: self.by_readers.load(SeqCst),
            pending: (self.queued.load(SeqCst) + waiting) as u64,
        }
    }

    /// Frees everything queued when the database closes: no transaction is
    /// left, so every queued version is garbage.
    pub(crate) fn drain_on_close(&self) {
        let mut items = vec![];
        while let Some(i) = self.queue.pop() {
            items.push(i);
        }
        if let Ok(mut w) = self.waiting.lock() {
            items.extend(w.drain().map(|Reverse(i)| i));
        }
        for item in items {
            for &(t, v) in &item.versions {
                let table = &item.tables[t as usize];
                if v.claim() {
                    table.unlink(v);
                }
                table.forget(v);
                // SAFETY: no transaction is left and the version is unlinked;
                // deferral still covers readers of other databases' pins.
                unsafe { crossbeam_epoch::pin().defer_unchecked(move || v.free()) };
            }
        }
    }
}
