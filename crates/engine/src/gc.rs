//! Garbage collection of row versions.
//!
//! A version lived from its begin timestamp `b` to its end timestamp `e`:
//! exactly the snapshots reading at `b <= RT < e` see it. It is *garbage*
//! once no active snapshot falls in `[b, e)` and no future one can (`e` is
//! at or below the watermark, where new snapshots start). So a long-running
//! SNAPSHOT or SERIALIZABLE reader holds back only the versions it can see,
//! not everything that changed after it began. The common case is cheaper:
//! a version whose `e` is at or below the *horizon* (the oldest active
//! snapshot) is garbage whatever its `b`.
//!
//! One more rule keeps READ COMMITTED writers safe: such a writer may
//! follow `newer` links from a version it sees to every later version of
//! the row (to re-apply its change to the newest one), so a version is
//! freed early only if it ended at or before the oldest READ COMMITTED
//! snapshot. Those snapshots are per statement, so this holds little back.
//!
//! Work comes from two sides, as in Hekaton:
//! - every committed transaction that replaced or deleted versions queues
//!   them with its commit timestamp; the collector (a background thread,
//!   and committers that find a backlog) takes the items, frees the
//!   versions that are garbage and keeps the others for a later round;
//! - readers that walk past a version ended below the horizon unlink it on
//!   the spot (cooperative collection), so hot chains stay short.
//!
//! Committers help in proportion to the backlog: above a thousand
//! queued items each frees a few hundred versions if the collector is
//! free; above a high-water mark each waits for the collector and frees a
//! round itself. Writers therefore cannot outrun collection, however many
//! there are per core.
//!
//! Whoever unlinks first *claims* the version; only the queue item that
//! owns a version frees it, after the claimant has finished unlinking, so a
//! version is freed exactly once. Freed memory waits for every epoch pin
//! that might still see the version: readers pin per operation (one chain
//! walk, one scan batch), never per transaction.
//!
//! ## Knowing every snapshot
//!
//! A starting transaction reads the watermark `W`, stores it as its read
//! timestamp, and then checks that the *proposal* is `<= W`, retrying
//! otherwise. The collector reads the watermark `w`, scans the read
//! timestamps, stores `w` as the proposal, and scans again. With
//! sequentially consistent atomics a starter that reads below `w` either
//! sees the proposal (and retries, now at `>= w`) or stored its timestamp
//! before the proposal was made, and so before the second scan. Every
//! snapshot below `w` is therefore in one of the two scans; every later one
//! reads at `>= w`.

use crate::chunked::Chunked;
use crate::mvcc::clock::Clock;
use crate::mvcc::transaction::WriteKind;
use crate::mvcc::txn_table::TxnTable;
use crate::mvcc::word::{Word, INFINITY};
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
    pub(crate) versions: Chunked<(u32, VersionPtr)>,
    /// The writes of a big transaction that aborted: the versions it
    /// created go at once, since nobody can ever see them (their begin is
    /// infinity). Empty for a commit's garbage.
    pub(crate) undone: Chunked<(u32, WriteKind)>,
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
    /// The horizon (oldest snapshot) the collector last acted on.
    pub horizon: u64,
    /// Versions freed so far.
    pub freed: u64,
    /// Versions unlinked by readers that met them.
    pub unlinked_by_readers: u64,
    /// Queued items not yet freed (some held for active snapshots).
    pub pending: u64,
}

/// What the collector knows of the snapshots at the start of a round.
struct Snapshots {
    /// Read timestamps of active transactions, sorted.
    active: Vec<u64>,
    /// The watermark: future snapshots read at or after it.
    upto: u64,
    /// `min(active, upto)`.
    oldest: u64,
    /// The oldest snapshot of a transaction that may follow `newer` links
    /// from a version it sees to every later one (READ COMMITTED writers).
    oldest_follower: u64,
}

impl Snapshots {
    /// Whether a version that lived over `[b, e)` is visible to no current
    /// or future snapshot.
    fn dead(&self, b: u64, e: u64) -> bool {
        if e <= self.oldest {
            return true;
        }
        // No snapshot may see it, and no READ COMMITTED writer may reach
        // it through `newer` from an older version it sees.
        e <= self.upto
            && e <= self.oldest_follower
            && self.active.get(self.active.partition_point(|&r| r < b)).is_none_or(|&r| r >= e)
    }
}

/// The collector's own state, under its lock.
#[derive(Default)]
struct Backlog {
    /// Items by commit timestamp.
    waiting: BinaryHeap<Reverse<GcItem>>,
    /// Items with versions some active snapshot still sees.
    held: Vec<GcItem>,
    /// The active snapshots `held` was last checked against.
    held_checked: Vec<u64>,
}

/// The garbage collector's shared state.
pub(crate) struct Gc {
    queue: SegQueue<GcItem>,
    queued: AtomicUsize,
    /// Items in the backlog (readable without its lock).
    parked: AtomicUsize,
    backlog: Mutex<Backlog>,
    proposed: AtomicU64,
    horizon: AtomicU64,
    freed: AtomicU64,
    by_readers: AtomicU64,
    /// The background collector's thread, and whether it is dozing: with
    /// nothing queued or held it sleeps until a commit queues garbage
    /// (see [`Gc::doze`]), instead of waking every interval.
    collector: std::sync::OnceLock<std::thread::Thread>,
    dozing: std::sync::atomic::AtomicBool,
}

/// Backlog at which committers help collect when the collector is free.
const HELP_THRESHOLD: usize = 1024;
/// Backlog at which committers wait for the collector and collect a round
/// themselves: back-pressure, so writers cannot outrun collection.
const WAIT_THRESHOLD: usize = 16 * 1024;
/// Versions a committer frees when it helps: small, so no single commit
/// pays for everyone's garbage.
const HELP_BUDGET: usize = 256;
/// Versions in one round of the background collector.
const ROUND: usize = 4 * 1024;

/// How a committer should help after queueing its garbage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Help {
    /// Not at all.
    None,
    /// A small round if the collector is free.
    IfFree,
    /// A round, waiting for the collector if need be.
    Wait,
}

impl Gc {
    pub(crate) fn new(start: u64) -> Gc {
        Gc {
            queue: SegQueue::new(),
            queued: AtomicUsize::new(0),
            parked: AtomicUsize::new(0),
            backlog: Mutex::new(Backlog::default()),
            proposed: AtomicU64::new(start),
            horizon: AtomicU64::new(start),
            freed: AtomicU64::new(0),
            by_readers: AtomicU64::new(0),
            collector: std::sync::OnceLock::new(),
            dozing: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Called by the background collector between rounds: true if there
    /// is nothing to collect, nor anything held by a snapshot, so it may
    /// sleep until [`Gc::push`] wakes it (an idle server then uses no CPU
    /// for collection). The calling thread is the one woken.
    pub(crate) fn doze(&self) -> bool {
        let _ = self.collector.set(std::thread::current());
        self.dozing.store(true, SeqCst);
        // Looked at after announcing the doze: a push that came before
        // is seen here, one that comes after sees the doze.
        if self.queued.load(SeqCst) == 0 && self.parked.load(SeqCst) == 0 {
            return true;
        }
        self.dozing.store(false, SeqCst);
        false
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

    /// Queues versions replaced by a committed transaction and says how the
    /// committer should help.
    pub(crate) fn push(&self, item: GcItem) -> Help {
        self.queue.push(item);
        let backlog = self.queued.fetch_add(1, SeqCst) + 1 + self.parked.load(SeqCst);
        if self.dozing.load(SeqCst) && self.dozing.swap(false, SeqCst) {
            if let Some(t) = self.collector.get() {
                t.unpark();
            }
        }
        if backlog >= WAIT_THRESHOLD {
            Help::Wait
        } else if backlog >= HELP_THRESHOLD {
            Help::IfFree
        } else {
            Help::None
        }
    }

    /// Helps as `push` asked.
    pub(crate) fn help(&self, clock: &Clock, txns: &TxnTable, how: Help) {
        match how {
            Help::None => {}
            Help::IfFree => {
                if let Ok(b) = self.backlog.try_lock() {
                    self.round(b, clock, txns, HELP_BUDGET);
                }
            }
            Help::Wait => {
                let b = self.backlog.lock().unwrap_or_else(|p| p.into_inner());
                self.round(b, clock, txns, ROUND);
            }
        }
    }

    /// Collects in rounds until a round frees less than a full one or
    /// `go_on` says stop. Returns the number of versions freed.
    pub(crate) fn collect_all(&self, clock: &Clock, txns: &TxnTable, go_on: impl Fn() -> bool) -> usize {
        let mut total = 0;
        while go_on() {
            let b = self.backlog.lock().unwrap_or_else(|p| p.into_inner());
            let n = self.round(b, clock, txns, ROUND);
            total += n;
            if n < ROUND {
                break;
            }
        }
        total
    }

    fn snapshots(&self, clock: &Clock, txns: &TxnTable) -> Snapshots {
        let upto = clock.watermark();
        let (mut active, f1) = txns.read_timestamps();
        self.proposed.fetch_max(upto, SeqCst);
        let (again, f2) = txns.read_timestamps();
        active.extend(again);
        active.sort_unstable();
        active.dedup();
        let oldest = active.first().map_or(upto, |&r| r.min(upto));
        self.horizon.fetch_max(oldest, SeqCst);
        Snapshots { active, upto, oldest, oldest_follower: f1.min(f2) }
    }

    /// One round: frees up to about `budget` garbage versions (whole items).
    fn round(
        &self,
        mut b: std::sync::MutexGuard<'_, Backlog>,
        clock: &Clock,
        txns: &TxnTable,
        budget: usize,
    ) -> usize {
        let snaps = self.snapshots(clock, txns);
        while let Some(item) = self.queue.pop() {
            self.queued.fetch_sub(1, SeqCst);
            b.waiting.push(Reverse(item));
        }
        let guard = crossbeam_epoch::pin();
        let mut dead = Retiring::default();
        let mut freed = 0;
        // Held items first, when the snapshots that held them changed.
        if !b.held.is_empty() && b.held_checked != snaps.active {
            let held = std::mem::take(&mut b.held);
            for mut item in held {
                freed += Self::take_dead(&mut item, &snaps, &mut dead);
                if !item.versions.is_empty() {
                    b.held.push(item);
                }
            }
        }
        while freed < budget && b.waiting.peek().is_some_and(|Reverse(i)| i.ts <= snaps.upto) {
            let Some(Reverse(mut item)) = b.waiting.pop() else { break };
            freed += retire_undone(&guard, &item.tables, std::mem::take(&mut item.undone));
            freed += Self::take_dead(&mut item, &snaps, &mut dead);
            if !item.versions.is_empty() {
                b.held.push(item);
            }
        }
        dead.retire(&guard);
        guard.flush();
        // Everything held now was checked against these snapshots.
        b.held_checked = snaps.active;
        self.parked.store(b.waiting.len() + b.held.len(), SeqCst);
        self.freed.fetch_add(freed as u64, SeqCst);
        freed
    }

    /// Moves the versions of `item` that no snapshot can see into `dead`;
    /// the others stay in it. Returns how many were moved.
    fn take_dead(item: &mut GcItem, snaps: &Snapshots, dead: &mut Retiring) -> usize {
        let e = item.ts;
        let before = item.versions.len();
        let tables = &item.tables;
        item.versions.retain(|&(t, v)| {
            // Only once its creator has written its commit timestamp into the
            // begin field: until then the creator, although committed, is
            // still post-processing and will store into this version, whose
            // lifetime may not contain the creator's own snapshot.
            let b = match Word::decode(v.begin().load(SeqCst)) {
                Word::Ts(b) if b != INFINITY => b,
                _ => return true,
            };
            if !snaps.dead(b, e) {
                return true;
            }
            dead.add(&tables[t as usize], v);
            false
        });
        before - item.versions.len()
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
        GcStats {
            horizon: self.horizon(),
            freed: self.freed.load(SeqCst),
            unlinked_by_readers: self.by_readers.load(SeqCst),
            pending: (self.queued.load(SeqCst) + self.parked.load(SeqCst)) as u64,
        }
    }

    /// Frees everything queued when the database closes: no transaction is
    /// left, so every queued version is garbage.
    pub(crate) fn drain_on_close(&self) {
        let mut items = vec![];
        while let Some(i) = self.queue.pop() {
            items.push(i);
        }
        if let Ok(mut b) = self.backlog.lock() {
            items.extend(b.waiting.drain().map(|Reverse(i)| i));
            items.append(&mut b.held);
        }
        let guard = crossbeam_epoch::pin();
        let mut dead = Retiring::default();
        for item in items {
            retire_undone(&guard, &item.tables, item.undone);
            for &(t, v) in item.versions.iter() {
                dead.add(&item.tables[t as usize], v);
            }
        }
        dead.retire(&guard);
    }
}

/// Unlinks the versions an aborted transaction created, per table, and
/// frees them through the epoch with one deferred call that owns `writes`:
/// undoing a bulk load needs no memory that grows with it but the bitsets
/// of [`Table::unlink_many`]. Returns how many versions go.
pub(crate) fn retire_undone(
    guard: &crossbeam_epoch::Guard,
    tables: &[Arc<Table>],
    writes: Chunked<(u32, WriteKind)>,
) -> usize {
    if writes.is_empty() {
        return 0;
    }
    let _c = crate::critical::Critical::enter("retiring an aborted transaction's versions");
    let mut n = 0;
    for (t, table) in tables.iter().enumerate() {
        n += table
            .unlink_many(|| writes.iter().filter(move |w| w.0 == t as u32).filter_map(|w| w.1.created()));
    }
    // SAFETY: every created version is unreachable from every chain;
    // readers that reached one before hold epoch pins the deferral waits
    // for. Only this call frees them: the transaction handed them over.
    unsafe {
        guard.defer_unchecked(move || writes.iter().filter_map(|w| w.1.created()).for_each(|v| v.free()))
    };
    n
}

/// Garbage versions gathered by table, to be retired together: one sweep
/// of each chain they are in, however many they are (see
/// [`Table::retire_all`]).
#[derive(Default)]
pub(crate) struct Retiring {
    tables: Vec<(Arc<Table>, Vec<VersionPtr>)>,
}

impl Retiring {
    /// Adds version `v` of `table`.
    pub(crate) fn add(&mut self, table: &Arc<Table>, v: VersionPtr) {
        // Versions come in runs of one table: look at the last one first.
        let i = match self.tables.iter().rposition(|(t, _)| Arc::ptr_eq(t, table)) {
            Some(i) => i,
            None => {
                self.tables.push((table.clone(), vec![]));
                self.tables.len() - 1
            }
        };
        self.tables[i].1.push(v);
    }

    /// Retires everything gathered.
    pub(crate) fn retire(self, guard: &crossbeam_epoch::Guard) {
        for (table, vs) in self.tables {
            table.retire_all(guard, vs);
        }
    }
}
