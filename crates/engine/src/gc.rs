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
use crate::index::hash::HashIndex;
use crate::index::Index;
use crate::mvcc::clock::Clock;
use crate::mvcc::transaction::WriteKind;
use crate::mvcc::txn_table::TxnTable;
use crate::mvcc::word::{Word, INFINITY};
use crate::row::version::VersionPtr;
use crate::table::Table;
use crossbeam_queue::SegQueue;
use foldhash::HashMap;
use std::collections::VecDeque;
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
    /// Steps the collector's sweeps of hash chains took: per version
    /// freed, a bounded number however long the chains (see
    /// `LongChains`).
    pub sweep_steps: u64,
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
    /// The hash chains the collector found long, and the garbage waiting
    /// to be swept out of them.
    long: LongChains,
    /// When a round last took on garbage.
    busy_at: Option<std::time::Instant>,
    /// Items in commit timestamp order. Commits queue their garbage
    /// nearly in that order, so an item almost always goes at the back:
    /// cheaper than a heap, which moves its large items on every push and
    /// pop.
    waiting: VecDeque<GcItem>,
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
    sweep_steps: AtomicU64,
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
/// Steps of a sweep from which its chain counts as long.
const LONG_CHAIN: usize = 256;
/// A long chain is swept once a version waits in it for every this many
/// steps its last sweep took.
pub(crate) const DEFER_RATIO: usize = 16;
/// How long the collector must have found no new garbage before it
/// sweeps the long chains that versions still wait in.
const IDLE_FLUSH: std::time::Duration = std::time::Duration::from_millis(50);
/// Bytes of versions that may wait for long chains: past them every chain
/// is swept at once, so a table of large rows does not hold its garbage.
const MAX_WAITING_BYTES: usize = 64 << 20;
/// Long chains remembered at most (a heuristic: forgetting costs one
/// sweep each).
const MAX_LONG: usize = 1 << 16;
/// Steps a reader that meets garbage may walk along each of its chains to
/// unlink it; past that, it leaves the version marked for its collector.
pub(crate) const READER_STEPS: usize = 64;

/// The hash chains the collector found long, and the garbage versions
/// that wait to be swept out of them.
///
/// Sweeping a chain costs its length. When many keys repeat (a
/// low-cardinality column, NULLs) a chain holds thousands of versions, and
/// sweeping it for the few of them that one round frees made collection
/// quadratic in the table: writers then waited on the collector for
/// minutes after a mass delete. A chain whose last sweep took
/// [`LONG_CHAIN`] steps or more is therefore swept only once a version
/// waits in it for every [`DEFER_RATIO`] steps of that sweep, which bounds
/// the steps per version freed. Until then its garbage versions stay
/// marked there (readers skip them), are unlinked from every other chain,
/// and still count as their table's; each counts the long chains it waits
/// for (`VersionPtr::wait_for_sweep`), and the sweep of the last one frees
/// it. The collector sweeps every waiting chain as soon as it has found
/// no new garbage for [`IDLE_FLUSH`], when the waiting versions take
/// [`MAX_WAITING_BYTES`], and when asked to collect everything.
#[derive(Default)]
pub(crate) struct LongChains {
    /// Steps of the last sweep, by (index, bucket).
    len: HashMap<(usize, usize), usize>,
    /// The versions waiting in each chain.
    waiting: HashMap<(usize, usize), Waiting>,
    /// Steps swept since the collector last counted them.
    steps: u64,
    /// Bytes of the versions waiting.
    bytes: usize,
}

/// Garbage versions waiting in one long chain, with what they need.
struct Waiting {
    table: Arc<Table>,
    index: Arc<Index>,
    versions: Vec<VersionPtr>,
}

impl LongChains {
    /// Sweeps those of `buckets` of hash index `ix` of `table` (a bucket
    /// once for each version to unlink from it, in any order) that are
    /// worth it, freeing the versions that waited there and need no other
    /// sweep. Returns the others, sorted: the caller puts the versions in
    /// them off with [`LongChains::wait`].
    pub(crate) fn sweep(
        &mut self,
        guard: &crossbeam_epoch::Guard,
        ix: &Arc<Index>,
        mut buckets: Vec<usize>,
    ) -> Vec<usize> {
        let Some(h) = ix.as_hash() else { return vec![] };
        buckets.sort_unstable();
        let id = Arc::as_ptr(ix) as usize;
        let mut off = vec![];
        for run in buckets.chunk_by(|a, b| a == b) {
            let key = (id, run[0]);
            // Nothing to look up while no chain is long (the usual case).
            if let Some(&len) = self.len.get(&key) {
                let waiting = self.waiting.get(&key).map_or(0, |w| w.versions.len());
                if (waiting + run.len()) * DEFER_RATIO < len && self.bytes < MAX_WAITING_BYTES {
                    off.push(run[0]);
                    continue;
                }
            }
            self.sweep_chain(guard, Some(h), key);
        }
        if self.len.len() > MAX_LONG {
            self.len.retain(|k, _| self.waiting.contains_key(k));
        }
        off
    }

    /// Sweeps chain `key` of `h` (nothing to sweep for an index dropped
    /// since: `None`), remembers whether it is long, and frees the
    /// versions that waited in it and in no other chain.
    fn sweep_chain(&mut self, guard: &crossbeam_epoch::Guard, h: Option<&HashIndex>, key: (usize, usize)) {
        let steps = h.map_or(0, |h| h.chains.sweep_within(key.1, None, usize::MAX).unwrap_or(usize::MAX));
        self.steps += steps as u64;
        if steps >= LONG_CHAIN {
            self.len.insert(key, steps);
        } else if !self.len.is_empty() {
            self.len.remove(&key);
        }
        let waited = if self.waiting.is_empty() { None } else { self.waiting.remove(&key) };
        if let Some(w) = waited {
            let gone: Vec<VersionPtr> = w.versions.into_iter().filter(|v| v.swept()).collect();
            self.bytes -= gone.iter().map(|v| v.size()).sum::<usize>();
            w.table.forget_all(&gone);
            for v in &gone {
                v.set_unlinked();
            }
            // SAFETY: each of `gone` is now unreachable from every chain
            // (this sweep was the last it waited for); readers that reached
            // one before hold epoch pins the deferral waits for.
            unsafe { guard.defer_unchecked(move || gone.into_iter().for_each(|v| v.free())) };
        }
    }

    /// Puts garbage version `v` of `table`, marked in bucket `b` of hash
    /// index `ix` and counted there (`VersionPtr::wait_for_sweep`), off
    /// until that chain is swept.
    pub(crate) fn wait(&mut self, table: &Arc<Table>, ix: &Arc<Index>, b: usize, v: VersionPtr) {
        if v.wait_for_sweep() {
            self.bytes += v.size();
        }
        let w = self.waiting.entry((Arc::as_ptr(ix) as usize, b)).or_insert_with(|| Waiting {
            table: table.clone(),
            index: ix.clone(),
            versions: vec![],
        });
        w.versions.push(v);
    }

    /// Chains with versions waiting.
    pub(crate) fn chains_waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Sweeps every chain that versions wait in, freeing them.
    ///
    /// The chains of an index dropped since are not walked: other
    /// versions in them may have been freed already, as their owners
    /// sweep only the indexes their table has. Readers that may still
    /// walk a dropped index pinned before it was dropped, so the versions
    /// released here, freed through `guard`, outlive their walks.
    pub(crate) fn flush(&mut self, guard: &crossbeam_epoch::Guard) {
        let keys: Vec<_> = self.waiting.keys().copied().collect();
        for key in keys {
            let w = &self.waiting[&key];
            let index = w.index.clone();
            let live = w.table.indexes.load().iter_all().any(|i| Arc::ptr_eq(i, &index));
            self.sweep_chain(guard, index.as_hash().filter(|_| live), key);
        }
    }
}

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
            sweep_steps: AtomicU64::new(0),
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
                    self.round(b, clock, txns, HELP_BUDGET, false);
                }
            }
            Help::Wait => {
                let b = self.backlog.lock().unwrap_or_else(|p| p.into_inner());
                self.round(b, clock, txns, ROUND, false);
            }
        }
    }

    /// Collects in rounds until a round frees less than a full one or
    /// `go_on` says stop. Returns the number of versions freed. With
    /// `flush`, every long chain is swept at once (see [`LongChains`]).
    pub(crate) fn collect_all(
        &self,
        clock: &Clock,
        txns: &TxnTable,
        flush: bool,
        go_on: impl Fn() -> bool,
    ) -> usize {
        let mut total = 0;
        while go_on() {
            let b = self.backlog.lock().unwrap_or_else(|p| p.into_inner());
            let n = self.round(b, clock, txns, ROUND, flush);
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
    /// Those in long hash chains may wait for a later sweep (see
    /// [`LongChains`]); with `flush`, or once the collector has found no
    /// new garbage for [`IDLE_FLUSH`], every such chain is swept.
    fn round(
        &self,
        mut b: std::sync::MutexGuard<'_, Backlog>,
        clock: &Clock,
        txns: &TxnTable,
        budget: usize,
        flush: bool,
    ) -> usize {
        let snaps = self.snapshots(clock, txns);
        while let Some(item) = self.queue.pop() {
            self.queued.fetch_sub(1, SeqCst);
            let at = if b.waiting.back().is_none_or(|last| last.ts <= item.ts) {
                b.waiting.len()
            } else {
                b.waiting.partition_point(|w| w.ts <= item.ts)
            };
            b.waiting.insert(at, item);
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
        while freed < budget && b.waiting.front().is_some_and(|i| i.ts <= snaps.upto) {
            let Some(mut item) = b.waiting.pop_front() else { break };
            freed += retire_undone(&guard, &item.tables, std::mem::take(&mut item.undone));
            freed += Self::take_dead(&mut item, &snaps, &mut dead);
            if !item.versions.is_empty() {
                b.held.push(item);
            }
        }
        let b = &mut *b;
        // Versions put off go once the collector has been idle a while.
        let now = std::time::Instant::now();
        if freed > 0 {
            b.busy_at = Some(now);
        }
        let idle = b.busy_at.is_none_or(|t| now.duration_since(t) >= IDLE_FLUSH);
        dead.retire(&guard, Some(&mut b.long));
        if flush || idle || b.long.bytes >= MAX_WAITING_BYTES {
            b.long.flush(&guard);
        }
        guard.flush();
        // Everything held now was checked against these snapshots.
        b.held_checked = snaps.active;
        // Chains with versions waiting keep the collector from dozing.
        self.parked.store(b.waiting.len() + b.held.len() + b.long.chains_waiting(), SeqCst);
        // Versions put off count as freed: they are gone for every reader.
        self.freed.fetch_add(freed as u64, SeqCst);
        self.sweep_steps.fetch_add(std::mem::take(&mut b.long.steps), SeqCst);
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

    /// Called by a reader that met garbage version `v` of `table`: it
    /// unlinks `v` if that takes a few steps along each chain, and leaves
    /// it marked for the collector otherwise.
    pub(crate) fn reader_unlink(&self, table: &Table, v: VersionPtr) {
        if v.claim() && table.unlink(v, READER_STEPS) {
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
            sweep_steps: self.sweep_steps.load(SeqCst),
        }
    }

    /// Frees everything queued when the database closes: no transaction is
    /// left, so every queued version is garbage.
    pub(crate) fn drain_on_close(&self) {
        let mut items = vec![];
        while let Some(i) = self.queue.pop() {
            items.push(i);
        }
        let mut dead = Retiring::default();
        if let Ok(mut b) = self.backlog.lock() {
            items.extend(b.waiting.drain(..));
            items.append(&mut b.held);
            b.long.flush(&crossbeam_epoch::pin());
        }
        let guard = crossbeam_epoch::pin();
        for item in items {
            retire_undone(&guard, &item.tables, item.undone);
            for &(t, v) in item.versions.iter() {
                dead.add(&item.tables[t as usize], v);
            }
        }
        dead.retire(&guard, None);
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
        let created = || writes.iter().filter(move |w| w.0 == t as u32).filter_map(|w| w.1.created());
        n += table.unlink_many(created, None).0;
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

    /// Retires everything gathered, putting off the sweeps of long chains
    /// that `long` says are not worth one yet.
    pub(crate) fn retire(self, guard: &crossbeam_epoch::Guard, mut long: Option<&mut LongChains>) {
        for (table, vs) in self.tables {
            table.retire_all(guard, vs, long.as_deref_mut());
        }
    }
}
