//! The transaction table: where a transaction id leads to its state.
//!
//! A reader that finds a transaction id in a begin or end field must learn
//! whether that transaction is active, preparing, committed (and when) or
//! aborted. The table is a fixed array of slots; the low bits of a
//! transaction id name its slot, so the look-up is one array index and
//! two loads, with no lock and no hashing.
//!
//! A slot stays with its transaction until the transaction has replaced its
//! id in every begin/end field it owned (post-processing). So a reader that
//! finds the slot taken by someone else knows the transaction it looked for
//! is finished and that the field now holds a timestamp: it reads the field
//! again.
//!
//! Free slots sit on a lock-free stack (tagged against ABA) so the busiest
//! slots are reused and the part of the table scanned for the garbage
//! collection horizon stays as small as the peak concurrency.
//!
//! The table also carries what waiting writers need under READ COMMITTED:
//! who waits for whom (for deadlock detection) and a condition variable to
//! sleep on until a transaction finishes.

use super::word::{TxnId, MAX_SLOTS};
use crate::counter::Tally;
use crate::sync::{AtomicU64, Ordering::SeqCst};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering::Relaxed};
use std::sync::{Condvar, Mutex};
use std::task::Waker;
use std::time::{Duration, Instant};

/// The state of a transaction, as other transactions see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TxnState {
    /// Running; its writes are invisible to everyone else.
    Active,
    /// Has a commit timestamp and is validating or appending its redo
    /// record.
    Preparing(u64),
    /// Its redo record is in the log (appended, maybe not yet durable):
    /// it will commit at this timestamp unless the log's write of the
    /// record fails. Others may build on its changes (early lock release,
    /// see `write.rs`), taking a commit dependency on it.
    Logged(u64),
    /// Committed at this timestamp.
    Committed(u64),
    /// Aborted.
    Aborted,
}

const ACTIVE: u64 = 0;
const PREPARING: u64 = 1;
const COMMITTED: u64 = 2;
const ABORTED: u64 = 3;
const LOGGED: u64 = 4;
/// Bits of a packed state that hold its kind; the timestamp is above them.
const KIND_BITS: u32 = 3;

impl TxnState {
    fn pack(self) -> u64 {
        match self {
            TxnState::Active => ACTIVE,
            TxnState::Preparing(ts) => (ts << KIND_BITS) | PREPARING,
            TxnState::Logged(ts) => (ts << KIND_BITS) | LOGGED,
            TxnState::Committed(ts) => (ts << KIND_BITS) | COMMITTED,
            TxnState::Aborted => ABORTED,
        }
    }

    fn unpack(raw: u64) -> TxnState {
        let ts = raw >> KIND_BITS;
        match raw & ((1 << KIND_BITS) - 1) {
            ACTIVE => TxnState::Active,
            PREPARING => TxnState::Preparing(ts),
            LOGGED => TxnState::Logged(ts),
            COMMITTED => TxnState::Committed(ts),
            _ => TxnState::Aborted,
        }
    }

    /// Whether the transaction has reached its outcome.
    pub(crate) fn is_final(self) -> bool {
        matches!(self, TxnState::Committed(_) | TxnState::Aborted)
    }

    /// Whether a writer waiting for the transaction may go on: it has
    /// reached its outcome, or (`or_logged`) its redo record is in the log.
    pub(crate) fn ends_wait(self, or_logged: bool) -> bool {
        self.is_final() || (or_logged && matches!(self, TxnState::Logged(_)))
    }
}

/// No read timestamp: the slot holds no active transaction.
const NO_READER: u64 = u64::MAX;

#[derive(Default)]
struct Slot {
    /// Raw id of the transaction in the slot, 0 when free.
    id: AtomicU64,
    /// Packed [`TxnState`].
    state: AtomicU64,
    /// The transaction's read timestamp, for the garbage collection horizon.
    read_ts: AtomicU64,
    /// Whether the transaction may follow `newer` links (READ COMMITTED
    /// writers do): then it can reach versions newer than its snapshot.
    follows: AtomicBool,
    /// Raw id of the transaction this one waits for, 0 when not waiting.
    waiting_for: AtomicU64,
    /// Whether the transaction has written or locked a row (others may
    /// then wait for it): `pg_locks` shows it holding its id.
    holder: AtomicBool,
    /// Transactions sleeping until this one finishes (or is logged).
    sleepers: AtomicU32,
    /// The highest commit timestamp of a logged, not yet committed
    /// transaction whose changes this one has used (0: none).
    depends: AtomicU64,
    /// The transaction's isolation level (`Isolation as u8`), for
    /// `centum.transactions`.
    isolation: AtomicU8,
    /// Sizes of its read set (rows and ranges) and write set, as of the
    /// start of its current statement (see `TxnTable::publish_sizes`).
    reads: AtomicU32,
    writes: AtomicU32,
    /// Next free slot + 1 (free stack link).
    next_free: AtomicU32,
    /// Times the slot was taken: with the slot number it makes a unique
    /// transaction id without a global counter.
    uses: AtomicU64,
}

/// Stripes of condition variables that waiting writers sleep on.
const WAIT_STRIPES: usize = 64;

/// Free stacks: each thread pops from and pushes to its own stripe first,
/// so begin and commit on different cores do not meet on one stack head.
const FREE_STRIPES: usize = 8;

/// The table of open transactions.
pub(crate) struct TxnTable {
    slots: Box<[CachePadded<Slot>]>,
    /// Per stripe: tag (high 32 bits) and top slot + 1 (low 32 bits) of a
    /// free stack.
    free: Box<[CachePadded<AtomicU64>]>,
    /// Slots `0..high_water` have been used at least once.
    high_water: AtomicU32,
    /// Per stripe: the wakers of asynchronous waiters (see `RowWait`),
    /// and the condition variable threads sleep on.
    waits: Box<[(Mutex<Vec<Waker>>, Condvar)]>,
    capacity: usize,
    /// Transactions committed and aborted (positions 0 and 1).
    outcomes: Tally<2>,
    /// Waits refused because they would close a cycle.
    deadlocks: std::sync::atomic::AtomicU64,
}

/// Transaction outcomes and deadlocks since the database opened
/// (`pg_stat_database`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxnCounts {
    /// Transactions committed (read-only ones included).
    pub committed: u64,
    /// Transactions aborted: rolled back, or failed.
    pub aborted: u64,
    /// Deadlocks detected (each aborted one waiter).
    pub deadlocks: u64,
}

/// An open transaction as other sessions see it (`centum.transactions`,
/// `centum.gc`): read from its slot without stopping it, so each field is
/// as fresh as its own load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxnInfo {
    /// Its id.
    pub id: TxnId,
    /// `active`, `preparing`, `logged` (its redo record is appended,
    /// durability pending), `committed` or `aborted` (finishing).
    pub state: &'static str,
    /// Its isolation level.
    pub isolation: super::Isolation,
    /// The snapshot it reads at (the garbage collector keeps every version
    /// it may see).
    pub read_ts: u64,
    /// Its commit timestamp, once it has one.
    pub commit_ts: Option<u64>,
    /// Rows and ranges it has read (validated at commit under
    /// SERIALIZABLE), as of the start of its current statement.
    pub reads: u32,
    /// Rows it has written, as of the start of its current statement.
    pub writes: u32,
    /// The transaction it waits for (a row or key that one holds).
    pub waiting_for: Option<TxnId>,
    /// The highest commit timestamp of a logged transaction whose changes
    /// it used (a commit dependency): it commits only after that one.
    pub depends_on: Option<u64>,
    /// Whether it has written or locked a row.
    pub holder: bool,
}

impl TxnTable {
    /// A table for at most `capacity` concurrent transactions.
    pub(crate) fn new(capacity: usize) -> TxnTable {
        let capacity = capacity.clamp(1, MAX_SLOTS);
        TxnTable {
            slots: (0..capacity).map(|_| CachePadded::new(Slot::default())).collect(),
            free: (0..FREE_STRIPES).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            high_water: AtomicU32::new(0),
            waits: (0..WAIT_STRIPES).map(|_| (Mutex::new(Vec::new()), Condvar::new())).collect(),
            capacity,
            outcomes: Tally::default(),
            deadlocks: Default::default(),
        }
    }

    /// The most transactions that can be open at once.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Takes a slot for a new active transaction reading at `read_ts`.
    /// Returns `None` when every slot is in use.
    pub(crate) fn register(&self, read_ts: u64, isolation: super::Isolation) -> Option<TxnId> {
        let slot = self.pop_free()?;
        let s = &self.slots[slot];
        let id = TxnId::new(s.uses.fetch_add(1, SeqCst) + 1, slot);
        s.state.store(TxnState::Active.pack(), SeqCst);
        s.follows.store(isolation == super::Isolation::ReadCommitted, SeqCst);
        s.isolation.store(isolation as u8, Relaxed);
        s.reads.store(0, Relaxed);
        s.writes.store(0, Relaxed);
        s.read_ts.store(read_ts, SeqCst);
        s.waiting_for.store(0, SeqCst);
        s.depends.store(0, SeqCst);
        s.holder.store(false, Relaxed);
        s.id.store(id.raw(), SeqCst);
        Some(id)
    }

    /// The state of transaction `id`, or `None` if it has finished and left
    /// its slot (every field it owned now holds a timestamp: read it again).
    #[inline]
    pub(crate) fn state(&self, id: TxnId) -> Option<TxnState> {
        let s = &self.slots[id.slot()];
        if s.id.load(SeqCst) != id.raw() {
            return None;
        }
        let st = TxnState::unpack(s.state.load(SeqCst));
        // The slot may have been released and reused between the loads.
        (s.id.load(SeqCst) == id.raw()).then_some(st)
    }

    /// Records that running transaction `id` has written or locked a row.
    #[inline]
    pub(crate) fn mark_holder(&self, id: TxnId) {
        let s = &self.slots[id.slot()];
        if !s.holder.load(Relaxed) {
            s.holder.store(true, Relaxed);
        }
    }

    /// Whether `id` is running (not finished) and, if so, whether it
    /// holds rows others may wait for.
    pub(crate) fn running(&self, id: TxnId) -> Option<bool> {
        let s = &self.slots[id.slot()];
        let holder = s.holder.load(Relaxed);
        match self.state(id)? {
            TxnState::Committed(_) | TxnState::Aborted => None,
            _ => Some(holder),
        }
    }

    /// Commits, aborts and deadlocks so far.
    pub(crate) fn counts(&self) -> TxnCounts {
        let [committed, aborted] = self.outcomes.get();
        TxnCounts { committed, aborted, deadlocks: self.deadlocks.load(Relaxed) }
    }

    /// Sets the counts back to zero (`pg_stat_reset`).
    pub(crate) fn reset_counts(&self) {
        self.outcomes.reset();
        self.deadlocks.store(0, Relaxed);
    }

    /// The transaction `id` waits for, if it is running and waiting.
    pub(crate) fn waiting_for_of(&self, id: TxnId) -> Option<TxnId> {
        let s = &self.slots[id.slot()];
        let w = s.waiting_for.load(SeqCst);
        (s.id.load(SeqCst) == id.raw() && w != 0).then_some(TxnId(w))
    }

    /// Publishes a new state of transaction `id` (which must own its slot)
    /// and wakes whoever sleeps on it once the outcome is final or its
    /// record is logged.
    pub(crate) fn set_state(&self, id: TxnId, st: TxnState) {
        match st {
            TxnState::Committed(_) => self.outcomes.add(0, 1),
            TxnState::Aborted => self.outcomes.add(1, 1),
            _ => {}
        }
        let s = &self.slots[id.slot()];
        s.state.store(st.pack(), SeqCst);
        if st.ends_wait(true) && s.sleepers.load(SeqCst) > 0 {
            let (m, cv) = &self.waits[id.slot() % WAIT_STRIPES];
            let mut wakers = m.lock().unwrap_or_else(|p| p.into_inner());
            cv.notify_all();
            // Waiters on other transactions of the stripe are woken too:
            // they look, and register again.
            for w in wakers.drain(..) {
                w.wake();
            }
        }
    }

    /// Records that transaction `me` used changes of a logged transaction
    /// that will commit at `ts`: `me` may commit only after it.
    #[inline]
    pub(crate) fn depend(&self, me: TxnId, ts: u64) {
        let d = &self.slots[me.slot()].depends;
        if d.load(SeqCst) < ts {
            d.fetch_max(ts, SeqCst);
        }
    }

    /// The highest commit timestamp that transaction `me` depends on (see
    /// [`TxnTable::depend`]), 0 if none.
    pub(crate) fn dependency(&self, me: TxnId) -> u64 {
        self.slots[me.slot()].depends.load(SeqCst)
    }

    /// Moves the read timestamp of an active transaction forward (a new
    /// statement under READ COMMITTED).
    pub(crate) fn set_read_ts(&self, id: TxnId, read_ts: u64) {
        self.slots[id.slot()].read_ts.store(read_ts, SeqCst);
    }

    /// Gives the slot of a finished transaction back. Only after this may
    /// readers stop finding the transaction.
    pub(crate) fn release(&self, id: TxnId) {
        let s = &self.slots[id.slot()];
        s.read_ts.store(NO_READER, SeqCst);
        s.id.store(0, SeqCst);
        self.push_free(id.slot());
    }

    /// The read timestamps of every active transaction, sorted, without
    /// repeats, and the oldest of those that may follow `newer` links
    /// (`u64::MAX` if none).
    pub(crate) fn read_timestamps(&self) -> (Vec<u64>, u64) {
        let n = self.high_water.load(SeqCst) as usize;
        let mut oldest_follower = u64::MAX;
        let mut v = Vec::new();
        for s in &self.slots[..n] {
            let t = s.read_ts.load(SeqCst);
            if t != NO_READER {
                v.push(t);
                if s.follows.load(SeqCst) {
                    oldest_follower = oldest_follower.min(t);
                }
            }
        }
        v.sort_unstable();
        v.dedup();
        (v, oldest_follower)
    }

    /// Publishes the sizes of `id`'s read and write sets, for
    /// [`TxnTable::list`].
    #[inline]
    pub(crate) fn publish_sizes(&self, id: TxnId, reads: usize, writes: usize) {
        let s = &self.slots[id.slot()];
        s.reads.store(reads.min(u32::MAX as usize) as u32, Relaxed);
        s.writes.store(writes.min(u32::MAX as usize) as u32, Relaxed);
    }

    /// Every transaction open now, in slot order. A transaction that ends
    /// while its slot is read is left out.
    pub(crate) fn list(&self) -> Vec<TxnInfo> {
        use super::Isolation;
        let n = self.high_water.load(SeqCst) as usize;
        let mut out = Vec::new();
        for s in &self.slots[..n] {
            let raw = s.id.load(SeqCst);
            if raw == 0 {
                continue;
            }
            let st = TxnState::unpack(s.state.load(SeqCst));
            let read_ts = s.read_ts.load(SeqCst);
            let isolation = match s.isolation.load(Relaxed) {
                x if x == Isolation::Snapshot as u8 => Isolation::Snapshot,
                x if x == Isolation::Serializable as u8 => Isolation::Serializable,
                _ => Isolation::ReadCommitted,
            };
            let waiting = s.waiting_for.load(SeqCst);
            let depends = s.depends.load(SeqCst);
            let info = TxnInfo {
                id: TxnId(raw),
                state: match st {
                    TxnState::Active => "active",
                    TxnState::Preparing(_) => "preparing",
                    TxnState::Logged(_) => "logged",
                    TxnState::Committed(_) => "committed",
                    TxnState::Aborted => "aborted",
                },
                isolation,
                read_ts,
                commit_ts: match st {
                    TxnState::Preparing(t) | TxnState::Logged(t) | TxnState::Committed(t) => Some(t),
                    _ => None,
                },
                reads: s.reads.load(Relaxed),
                writes: s.writes.load(Relaxed),
                waiting_for: (waiting != 0).then_some(TxnId(waiting)),
                depends_on: (depends != 0).then_some(depends),
                holder: s.holder.load(Relaxed),
            };
            // The slot changed hands while it was read: that transaction
            // has ended.
            if s.id.load(SeqCst) == raw && read_ts != NO_READER {
                out.push(info);
            }
        }
        out
    }

    /// Whether a transaction holds a commit timestamp at or below `ts`
    /// that its redo record does not carry yet (Preparing), or is taking
    /// one now (Preparing(0)).
    pub(crate) fn any_preparing_upto(&self, ts: u64) -> bool {
        let n = self.high_water.load(SeqCst) as usize;
        self.slots[..n].iter().any(|s| {
            s.id.load(SeqCst) != 0
                && matches!(TxnState::unpack(s.state.load(SeqCst)), TxnState::Preparing(t) if t <= ts)
        })
    }

    /// Ids of every transaction open now.
    pub(crate) fn active_ids(&self) -> Vec<TxnId> {
        let n = self.high_water.load(SeqCst) as usize;
        self.slots[..n].iter().map(|s| s.id.load(SeqCst)).filter(|&id| id != 0).map(TxnId).collect()
    }

    /// Waits until transaction `id` has left its slot (no deadlock
    /// detection: for callers that are not transactions themselves),
    /// ending as the schema change's limits say (see [`ddl_waits`]). It
    /// sleeps on the slot's wait stripe rather than spinning.
    pub(crate) fn wait_gone_within(
        &self,
        id: TxnId,
        lock_deadline: Option<Instant>,
    ) -> Result<(), crate::Error> {
        let mut spins = 0;
        loop {
            ddl_past_limits(lock_deadline)?;
            match self.state(id) {
                None => return Ok(()),
                // Finished: its slot is given back in a moment.
                Some(st) if st.is_final() => super::clock::backoff(&mut spins),
                Some(_) => {
                    // Sleep until its outcome is final (set_state wakes the
                    // stripe), waking now and then to check the limits.
                    let target = &self.slots[id.slot()];
                    target.sleepers.fetch_add(1, SeqCst);
                    let (m, cv) = &self.waits[id.slot() % WAIT_STRIPES];
                    crate::blocking::section(|| {
                        let g = m.lock().unwrap_or_else(|p| p.into_inner());
                        if self.state(id).is_some_and(|st| !st.is_final()) {
                            let _ = cv.wait_timeout(g, Duration::from_millis(5));
                        }
                    });
                    target.sleepers.fetch_sub(1, SeqCst);
                }
            }
        }
    }

    /// Waits until transaction `other` has finished (or, `or_logged`, has
    /// its redo record in the log), on behalf of `me`.
    /// Fails with a deadlock if `other` (transitively) waits for `me`, and
    /// as `limits` say (lock timeout, deadline, cancel).
    pub(crate) fn wait_for(
        &self,
        me: TxnId,
        other: TxnId,
        limits: &super::WaitLimits,
        or_logged: bool,
    ) -> Result<(), crate::Error> {
        let mine = &self.slots[me.slot()];
        mine.waiting_for.store(other.raw(), SeqCst);
        let lock_deadline = limits.lock_timeout.map(|t| std::time::Instant::now() + t);
        let target = &self.slots[other.slot()];
        target.sleepers.fetch_add(1, SeqCst);
        let (m, cv) = &self.waits[other.slot() % WAIT_STRIPES];
        let ended = || self.has_ended(other, or_logged);
        // Ok(true) once the wait is over, Ok(false) while it goes on.
        let check = || {
            if ended() {
                Ok(true)
            } else if self.waits_for(other, me) {
                self.deadlocks.fetch_add(1, Relaxed);
                Err(crate::Error::Deadlock)
            } else {
                past_limits(limits, lock_deadline).map(|()| false)
            }
        };
        // A holder that is about to publish its outcome: a few hundred
        // nanoseconds of spinning saves a sleep and a wake-up. Anything
        // longer (the holder's statements, its fsync) sleeps, in a blocking
        // section: yielding in a loop would burn a core on system calls
        // while the holder waits for the disk.
        let mut result = Ok(false);
        for _ in 0..32 {
            result = check();
            if result != Ok(false) {
                break;
            }
            std::hint::spin_loop();
        }
        if result == Ok(false) {
            result = crate::blocking::section(|| loop {
                match check() {
                    Ok(false) => {}
                    r => return r,
                }
                let g = m.lock().unwrap_or_else(|p| p.into_inner());
                if !ended() {
                    // The timeout re-runs deadlock detection now and then,
                    // for cycles that formed after this wait began.
                    let _ = cv.wait_timeout(g, Duration::from_millis(5));
                }
            });
        }
        let result = result.map(drop);
        target.sleepers.fetch_sub(1, SeqCst);
        mine.waiting_for.store(0, SeqCst);
        result
    }

    /// Spins briefly (a few hundred nanoseconds) for transaction `other`
    /// to end, or to be logged with `or_logged`: a holder about to publish
    /// its outcome. True if it did.
    pub(crate) fn ended_after_spin(&self, other: TxnId, or_logged: bool) -> bool {
        for _ in 0..32 {
            if self.has_ended(other, or_logged) {
                return true;
            }
            std::hint::spin_loop();
        }
        false
    }

    /// Whether a wait for `other` is over: it has left its slot, or its
    /// outcome is final (or, `or_logged`, its record is in the log).
    fn has_ended(&self, other: TxnId, or_logged: bool) -> bool {
        match self.state(other) {
            None => true,
            Some(st) => st.ends_wait(or_logged),
        }
    }

    /// Starts an asynchronous wait of `me` (if a transaction waits) for
    /// `other`: `other`'s end wakes the waiter's wakers, and `me` is shown
    /// waiting for `other` to deadlock detection. [`TxnTable::end_wait`]
    /// undoes both.
    pub(crate) fn begin_wait(&self, me: Option<TxnId>, other: TxnId) {
        if let Some(me) = me {
            self.slots[me.slot()].waiting_for.store(other.raw(), SeqCst);
        }
        self.slots[other.slot()].sleepers.fetch_add(1, SeqCst);
    }

    /// Takes `waker` off `other`'s stripe: a wait that ended otherwise than
    /// by `other`'s end (a deadlock, a timeout, a cancel) leaves no waker
    /// behind to keep its task alive.
    pub(crate) fn forget_waker(&self, other: TxnId, waker: &Waker) {
        let (m, _) = &self.waits[other.slot() % WAIT_STRIPES];
        m.lock().unwrap_or_else(|p| p.into_inner()).retain(|w| !w.will_wake(waker));
    }

    /// Ends a wait that [`TxnTable::begin_wait`] started.
    pub(crate) fn end_wait(&self, me: Option<TxnId>, other: TxnId) {
        self.slots[other.slot()].sleepers.fetch_sub(1, SeqCst);
        if let Some(me) = me {
            // Only while `me` still owns its slot and waits for `other`.
            let s = &self.slots[me.slot()];
            if s.id.load(SeqCst) == me.raw() {
                let _ = s.waiting_for.compare_exchange(other.raw(), 0, SeqCst, SeqCst);
            }
        }
    }

    /// One look at an asynchronous wait of `me` for `other`: `Some` once it
    /// is over (ended, a deadlock, or past `limits`); otherwise `waker` is
    /// registered to be woken when `other` ends.
    pub(crate) fn poll_wait(
        &self,
        me: Option<TxnId>,
        other: TxnId,
        or_logged: bool,
        limits: &super::WaitLimits,
        lock_deadline: Option<std::time::Instant>,
        waker: &Waker,
    ) -> Option<Result<(), crate::Error>> {
        let ended = || self.has_ended(other, or_logged);
        if ended() {
            return Some(Ok(()));
        }
        if me.is_some_and(|me| self.waits_for(other, me)) {
            self.deadlocks.fetch_add(1, Relaxed);
            return Some(Err(crate::Error::Deadlock));
        }
        if let Err(e) = past_limits(limits, lock_deadline) {
            return Some(Err(e));
        }
        let (m, _) = &self.waits[other.slot() % WAIT_STRIPES];
        let mut wakers = m.lock().unwrap_or_else(|p| p.into_inner());
        // Looked at again under the lock that `set_state` takes to wake.
        if ended() {
            return Some(Ok(()));
        }
        if !wakers.iter().any(|w| w.will_wake(waker)) {
            wakers.push(waker.clone());
        }
        None
    }

    /// Whether following the waits-for chain from `from` reaches `to`.
    /// (See [`past_limits`] for the other ways a wait ends.)
    fn waits_for(&self, from: TxnId, to: TxnId) -> bool {
        let mut cur = from;
        for _ in 0..self.capacity {
            let s = &self.slots[cur.slot()];
            let next = s.waiting_for.load(SeqCst);
            if s.id.load(SeqCst) != cur.raw() || next == 0 {
                return false;
            }
            if next == to.raw() {
                return true;
            }
            cur = TxnId(next);
        }
        false
    }

    fn pop_free(&self) -> Option<usize> {
        let home = crate::counter::stripe() % FREE_STRIPES;
        loop {
            for k in 0..FREE_STRIPES {
                if let Some(slot) = self.pop_stripe(&self.free[(home + k) % FREE_STRIPES]) {
                    return Some(slot);
                }
            }
            let n = self.high_water.fetch_add(1, SeqCst) as usize;
            if n < self.capacity {
                return Some(n);
            }
            self.high_water.fetch_sub(1, SeqCst);
            // A slot may have been freed meanwhile.
            if self.free.iter().all(|f| f.load(SeqCst) & 0xffff_ffff == 0) {
                return None;
            }
        }
    }

    fn pop_stripe(&self, head: &AtomicU64) -> Option<usize> {
        loop {
            let h = head.load(SeqCst);
            let top = (h & 0xffff_ffff) as usize;
            if top == 0 {
                return None;
            }
            let next = self.slots[top - 1].next_free.load(SeqCst) as u64;
            let tag = (h >> 32).wrapping_add(1);
            if head.compare_exchange(h, (tag << 32) | next, SeqCst, SeqCst).is_ok() {
                return Some(top - 1);
            }
        }
    }

    fn push_free(&self, slot: usize) {
        let head = &self.free[crate::counter::stripe() % FREE_STRIPES];
        loop {
            let h = head.load(SeqCst);
            self.slots[slot].next_free.store((h & 0xffff_ffff) as u32, SeqCst);
            let tag = (h >> 32).wrapping_add(1);
            let new = (tag << 32) | (slot as u64 + 1);
            if head.compare_exchange(h, new, SeqCst, SeqCst).is_ok() {
                return;
            }
        }
    }
}

thread_local! {
    static DDL_LIMITS: std::cell::RefCell<Option<super::WaitLimits>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f`, a schema change, with its waits bounded by `limits`: the
/// waits of `Database::create_index` (for the table's other schema
/// changes, for the transactions open when it started, for versions they
/// still see) end with 55P03 at the lock timeout and 57014 at the
/// statement's deadline or a cancel, as row waits do. Schema changes have
/// no transaction to carry the limits, so they are the calling thread's
/// for the duration of `f`.
pub fn ddl_waits<R>(limits: super::WaitLimits, f: impl FnOnce() -> R) -> R {
    let old = DDL_LIMITS.with(|l| l.replace(Some(limits)));
    struct Restore(Option<super::WaitLimits>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let old = self.0.take();
            DDL_LIMITS.with(|l| *l.borrow_mut() = old);
        }
    }
    let _restore = Restore(old);
    f()
}

/// The calling thread's schema-change limits (none if unset).
pub(crate) fn ddl_limits() -> super::WaitLimits {
    DDL_LIMITS.with(|l| l.borrow().clone().unwrap_or_default())
}

/// When a schema change's lock wait must end, counted from now.
pub(crate) fn ddl_lock_deadline() -> Option<Instant> {
    DDL_LIMITS.with(|l| l.borrow().as_ref().and_then(|l| l.lock_timeout).map(|t| Instant::now() + t))
}

/// Whether a schema change waiting now must stop (see [`ddl_waits`]).
pub(crate) fn ddl_past_limits(lock_deadline: Option<Instant>) -> Result<(), crate::Error> {
    DDL_LIMITS.with(|l| match l.borrow().as_ref() {
        Some(limits) => past_limits(limits, lock_deadline),
        None => Ok(()),
    })
}

/// Whether a wait must end now: a cancel request, the statement's
/// deadline (57014) or the lock timeout (55P03), in that order.
fn past_limits(
    limits: &super::WaitLimits,
    lock_deadline: Option<std::time::Instant>,
) -> Result<(), crate::Error> {
    if limits.cancel.as_ref().is_some_and(|c| c.load(SeqCst)) {
        return Err(crate::Error::Canceled("user request"));
    }
    let now = std::time::Instant::now();
    if limits.deadline.is_some_and(|d| now >= d) {
        return Err(crate::Error::Canceled("statement timeout"));
    }
    if lock_deadline.is_some_and(|d| now >= d) {
        return Err(crate::Error::LockTimeout);
    }
    Ok(())
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::mvcc::Isolation;
    use std::sync::Arc;

    #[test]
    fn finished_transactions_disappear_from_their_slot() {
        let t = TxnTable::new(4);
        let a = t.register(5, Isolation::Snapshot).unwrap();
        assert_eq!(t.state(a), Some(TxnState::Active));
        assert_eq!(t.read_timestamps(), (vec![5], u64::MAX));
        t.set_state(a, TxnState::Committed(9));
        assert_eq!(t.state(a), Some(TxnState::Committed(9)));
        t.release(a);
        assert_eq!(t.state(a), None);
        let b = t.register(7, Isolation::Snapshot).unwrap();
        assert_eq!(b.slot(), a.slot(), "the hot slot is reused");
        assert_ne!(a, b);
        assert_eq!(t.state(a), None);
    }

    #[test]
    fn the_listing_shows_open_transactions_with_what_they_published() {
        let t = TxnTable::new(4);
        let a = t.register(3, Isolation::Serializable).unwrap();
        let b = t.register(5, Isolation::ReadCommitted).unwrap();
        t.publish_sizes(a, 7, 2);
        t.mark_holder(a);
        t.set_state(b, TxnState::Logged(11));
        t.depend(a, 11);
        let list = t.list();
        assert_eq!(list.len(), 2);
        let la = list.iter().find(|i| i.id == a).unwrap();
        assert_eq!((la.state, la.isolation, la.read_ts), ("active", Isolation::Serializable, 3));
        assert_eq!((la.reads, la.writes, la.holder, la.depends_on), (7, 2, true, Some(11)));
        let lb = list.iter().find(|i| i.id == b).unwrap();
        assert_eq!((lb.state, lb.commit_ts, lb.isolation), ("logged", Some(11), Isolation::ReadCommitted));
        t.release(b);
        assert_eq!(t.list().iter().map(|i| i.id).collect::<Vec<_>>(), vec![a]);
        // A new transaction in a used slot starts with nothing published.
        t.release(a);
        let c = t.register(9, Isolation::Snapshot).unwrap();
        let lc = t.list();
        assert_eq!((lc[0].id, lc[0].reads, lc[0].writes, lc[0].holder), (c, 0, 0, false));
    }

    #[test]
    fn full_table_refuses_new_transactions() {
        let t = TxnTable::new(2);
        let a = t.register(1, Isolation::Snapshot).unwrap();
        let _b = t.register(1, Isolation::Snapshot).unwrap();
        assert!(t.register(1, Isolation::Snapshot).is_none());
        t.release(a);
        assert!(t.register(1, Isolation::Snapshot).is_some());
    }

    #[test]
    fn waiting_ends_when_the_other_finishes() {
        let t = Arc::new(TxnTable::new(8));
        let a = t.register(1, Isolation::Snapshot).unwrap();
        let b = t.register(1, Isolation::Snapshot).unwrap();
        let t2 = t.clone();
        let h = std::thread::spawn(move || t2.wait_for(b, a, &Default::default(), false));
        std::thread::sleep(Duration::from_millis(20));
        t.set_state(a, TxnState::Aborted);
        assert_eq!(h.join().unwrap(), Ok(()));
    }

    #[test]
    fn a_cycle_of_waits_is_a_deadlock() {
        let t = Arc::new(TxnTable::new(8));
        let a = t.register(1, Isolation::Snapshot).unwrap();
        let b = t.register(1, Isolation::Snapshot).unwrap();
        let t2 = t.clone();
        let h = std::thread::spawn(move || t2.wait_for(a, b, &Default::default(), false));
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(t.wait_for(b, a, &Default::default(), false), Err(crate::Error::Deadlock));
        t.set_state(b, TxnState::Aborted);
        assert_eq!(h.join().unwrap(), Ok(()));
    }
}
