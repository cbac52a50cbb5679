//! Advisory locks: `pg_advisory_lock` and its family, locks on numbers
//! that mean whatever the application agrees they mean (a job id, "the
//! migration is running"), as PostgreSQL has them.
//!
//! A lock is named by one `bigint` or by two `integer`s (two separate key
//! spaces, as in PostgreSQL) and taken in exclusive or shared mode, at
//! session level (held until unlocked or the session ends, counted: a lock
//! taken twice is unlocked twice) or at transaction level (released when
//! the transaction ends). Locks of one session never conflict with each
//! other; between sessions, exclusive conflicts with everything and shared
//! with exclusive.
//!
//! A session that must wait sleeps on a condition variable in short
//! slices, so a cancel, `statement_timeout` or a vanished client ends the
//! wait (57014), `lock_timeout` ends it with 55P03, and a wait that would
//! close a circle of sessions waiting for each other's advisory locks
//! fails at once with 40P01: the session that closes the circle is the
//! victim, as with row locks (design §7). A waiter looks for a circle under
//! the table's mutex each time it wakes, so the one that closes it always
//! finds it first. `pg_locks` shows held and awaited advisory locks.
//!
//! The table is one mutex over a hash map: advisory locks are taken a few
//! times per transaction at most, never per row.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long one sleep of a wait lasts at most.
const SLICE: Duration = Duration::from_millis(10);

/// A lock's name, as `pg_locks` shows it: `classid` and `objid` are the
/// high and low halves of a `bigint` key (`objsubid` 1), or the two
/// `integer` keys (`objsubid` 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub high: i32,
    pub low: i32,
    pub pair: bool,
}

impl Key {
    /// The lock named by one `bigint`.
    pub fn bigint(k: i64) -> Key {
        Key { high: (k >> 32) as i32, low: k as i32, pair: false }
    }

    /// The lock named by two `integer`s.
    pub fn pair(a: i32, b: i32) -> Key {
        Key { high: a, low: b, pair: true }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "advisory lock [{},{},{}]",
            self.high as u32,
            self.low as u32,
            if self.pair { 2 } else { 1 }
        )
    }
}

/// Exclusive or shared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Mode {
    Exclusive,
    Shared,
}

impl Mode {
    /// PostgreSQL's name for the mode, as `pg_locks` shows it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Exclusive => "ExclusiveLock",
            Mode::Shared => "ShareLock",
        }
    }
}

/// Until when a lock is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Until unlocked, or the session ends.
    Session,
    /// Until the transaction ends.
    Transaction,
}

/// The session taking or holding a lock: its number (see [`next_holder`])
/// and, for a server session, its process id.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Holder {
    pub id: u64,
    pub pid: Option<i32>,
}

/// A number no other session of this process has, for [`Holder::id`].
pub(crate) fn next_holder() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Relaxed)
}

/// One session's hold of a lock in one scope and mode, taken `count` times.
#[derive(Clone, Debug)]
struct Hold {
    holder: Holder,
    scope: Scope,
    mode: Mode,
    count: u32,
}

#[derive(Default)]
struct Table {
    held: HashMap<Key, Vec<Hold>>,
    /// Sessions waiting, by holder number: for which lock, in which mode.
    waiting: HashMap<u64, (Holder, Key, Mode)>,
    /// Holds of transaction scope, of every session.
    transaction_holds: usize,
}

impl Table {
    /// Whether `holder` taking `key` in `mode` must wait for another session.
    fn conflicts(&self, holder: u64, key: Key, mode: Mode) -> bool {
        !self.blockers(holder, key, mode).is_empty()
    }

    /// The other sessions holding `key` in a mode that conflicts with `mode`.
    fn blockers(&self, holder: u64, key: Key, mode: Mode) -> Vec<Holder> {
        let mut out: Vec<Holder> = Vec::new();
        for h in self.held.get(&key).into_iter().flatten() {
            if h.holder.id != holder
                && (mode == Mode::Exclusive || h.mode == Mode::Exclusive)
                && !out.iter().any(|o| o.id == h.holder.id)
            {
                out.push(h.holder);
            }
        }
        out
    }

    fn grant(&mut self, holder: Holder, key: Key, mode: Mode, scope: Scope) {
        let holds = self.held.entry(key).or_default();
        match holds.iter_mut().find(|h| h.holder.id == holder.id && h.scope == scope && h.mode == mode) {
            Some(h) => h.count += 1,
            None => {
                holds.push(Hold { holder, scope, mode, count: 1 });
                self.transaction_holds += usize::from(scope == Scope::Transaction);
            }
        }
    }

    /// Whether `holder`'s wait for `key` closes a circle: some session it
    /// waits for waits, directly or through others, for it.
    fn deadlocked(&self, holder: u64, key: Key, mode: Mode) -> bool {
        let mut seen = vec![holder];
        let mut frontier: Vec<u64> = self.blockers(holder, key, mode).iter().map(|h| h.id).collect();
        while let Some(h) = frontier.pop() {
            if h == holder {
                return true;
            }
            if seen.contains(&h) {
                continue;
            }
            seen.push(h);
            if let Some((_, k, m)) = self.waiting.get(&h) {
                frontier.extend(self.blockers(h, *k, *m).iter().map(|b| b.id));
            }
        }
        false
    }

    /// Drops the holds of `holder` that `which` selects.
    fn release(&mut self, holder: u64, which: impl Fn(&Hold) -> bool) -> bool {
        let mut any = false;
        let mut transaction_holds = 0;
        self.held.retain(|_, holds| {
            holds.retain(|h| {
                let drop = h.holder.id == holder && which(h);
                any |= drop;
                transaction_holds += usize::from(drop && h.scope == Scope::Transaction);
                !drop
            });
            !holds.is_empty()
        });
        self.transaction_holds -= transaction_holds;
        any
    }
}

/// What a wait for a lock may last and how it learns it must stop.
pub(crate) struct Wait<'a> {
    /// `lock_timeout`.
    pub timeout: Option<Duration>,
    /// Fails once the statement must stop (cancel, `statement_timeout`, a
    /// vanished client).
    pub interrupted: &'a dyn Fn() -> Result<()>,
}

/// The advisory locks of one database.
#[derive(Default)]
pub(crate) struct AdvisoryLocks {
    table: Mutex<Table>,
    /// Signalled whenever a lock is released.
    released: Condvar,
    /// `Table::transaction_holds`, readable without the mutex: the end of
    /// every transaction asks, and almost always there are none. A
    /// session's own grants come before its own end in program order, so
    /// a relaxed read never misses them.
    transaction_holds: AtomicUsize,
}

impl AdvisoryLocks {
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes `key` if no other session holds it in a conflicting mode;
    /// whether it did (`pg_try_advisory_lock`).
    pub fn try_lock(&self, holder: Holder, key: Key, mode: Mode, scope: Scope) -> bool {
        let mut t = self.table();
        if t.conflicts(holder.id, key, mode) {
            return false;
        }
        t.grant(holder, key, mode, scope);
        self.transaction_holds.store(t.transaction_holds, Relaxed);
        true
    }

    /// Takes `key`, waiting while another session holds it in a
    /// conflicting mode (`pg_advisory_lock`).
    pub fn lock(&self, holder: Holder, key: Key, mode: Mode, scope: Scope, wait: &Wait) -> Result<()> {
        let started = Instant::now();
        let mut t = self.table();
        loop {
            if !t.conflicts(holder.id, key, mode) {
                t.waiting.remove(&holder.id);
                t.grant(holder, key, mode, scope);
                self.transaction_holds.store(t.transaction_holds, Relaxed);
                return Ok(());
            }
            t.waiting.insert(holder.id, (holder, key, mode));
            let waited = started.elapsed();
            let stop = if t.deadlocked(holder.id, key, mode) {
                Some(deadlock(&t, holder, key, mode))
            } else if wait.timeout.is_some_and(|limit| waited >= limit) {
                Some(Error::other("55P03", format!("canceling statement due to lock timeout on {key}")))
            } else {
                drop(t);
                let r = (wait.interrupted)();
                t = self.table();
                r.err()
            };
            if let Some(e) = stop {
                t.waiting.remove(&holder.id);
                return Err(e);
            }
            let left = [Some(SLICE), wait.timeout.map(|l| l.saturating_sub(waited))]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(SLICE)
                .max(Duration::from_millis(1));
            t = centum_engine::blocking::section(|| {
                self.released.wait_timeout(t, left).map(|(g, _)| g).unwrap_or_else(|e| e.into_inner().0)
            });
        }
    }

    /// Releases one session-level hold of `key` in `mode`; whether there
    /// was one (`pg_advisory_unlock`).
    pub fn unlock(&self, holder: u64, key: Key, mode: Mode) -> bool {
        let mut t = self.table();
        let Some(holds) = t.held.get_mut(&key) else { return false };
        let Some(i) =
            holds.iter().position(|h| h.holder.id == holder && h.scope == Scope::Session && h.mode == mode)
        else {
            return false;
        };
        holds[i].count -= 1;
        if holds[i].count == 0 {
            holds.remove(i);
        }
        if holds.is_empty() {
            t.held.remove(&key);
        }
        drop(t);
        self.released.notify_all();
        true
    }

    /// Releases every session-level lock of `holder`
    /// (`pg_advisory_unlock_all`).
    pub fn unlock_all(&self, holder: u64) {
        if self.table().release(holder, |h| h.scope == Scope::Session) {
            self.released.notify_all();
        }
    }

    /// Releases the transaction-level locks of `holder`: its transaction
    /// has ended.
    pub fn end_transaction(&self, holder: u64) {
        if self.transaction_holds.load(Relaxed) == 0 {
            return;
        }
        let mut t = self.table();
        let released = t.release(holder, |h| h.scope == Scope::Transaction);
        self.transaction_holds.store(t.transaction_holds, Relaxed);
        drop(t);
        if released {
            self.released.notify_all();
        }
    }

    /// Releases everything `holder` holds: its session has ended.
    pub fn end_session(&self, holder: u64) {
        let mut t = self.table();
        t.waiting.remove(&holder);
        let released = t.release(holder, |_| true);
        self.transaction_holds.store(t.transaction_holds, Relaxed);
        drop(t);
        if released {
            self.released.notify_all();
        }
    }

    /// Every hold and wait, for `pg_locks`: the lock, the session's
    /// process id, the mode and whether it is granted.
    pub fn rows(&self) -> Vec<(Key, Option<i32>, Mode, bool)> {
        let t = self.table();
        let mut out: Vec<(Key, Option<i32>, Mode, bool)> = Vec::new();
        for (key, holds) in &t.held {
            for h in holds {
                let row = (*key, h.holder.pid, h.mode, true);
                if !out.contains(&row) {
                    out.push(row);
                }
            }
        }
        for (holder, key, mode) in t.waiting.values() {
            out.push((*key, holder.pid, *mode, false));
        }
        out
    }

    /// The process ids of the sessions holding the advisory lock `pid`'s
    /// session waits for (`pg_blocking_pids`).
    pub fn blocking_pids(&self, pid: i32) -> Vec<i32> {
        let t = self.table();
        let Some((holder, key, mode)) = t.waiting.values().find(|(h, _, _)| h.pid == Some(pid)) else {
            return vec![];
        };
        t.blockers(holder.id, *key, *mode).iter().filter_map(|h| h.pid).collect()
    }
}

fn deadlock(t: &Table, holder: Holder, key: Key, mode: Mode) -> Error {
    let pid = |h: Holder| h.pid.map_or_else(|| "an embedded session".to_string(), |p| format!("process {p}"));
    let blockers: Vec<String> = t.blockers(holder.id, key, mode).into_iter().map(pid).collect();
    Error::Raised {
        code: "40P01",
        message: "deadlock detected".into(),
        detail: Some(format!(
            "{} waits for {} on {key}; blocked by {}.",
            pid(holder),
            mode.name(),
            blockers.join(", ")
        )),
        hint: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(id: u64) -> Holder {
        Holder { id, pid: Some(id as i32) }
    }

    fn no_wait() -> Wait<'static> {
        Wait { timeout: Some(Duration::from_millis(30)), interrupted: &|| Ok(()) }
    }

    #[test]
    fn exclusive_and_shared_conflict_between_sessions_only() {
        let l = AdvisoryLocks::default();
        let k = Key::bigint(7);
        assert!(l.try_lock(h(1), k, Mode::Exclusive, Scope::Session));
        assert!(
            l.try_lock(h(1), k, Mode::Shared, Scope::Transaction),
            "a session never conflicts with itself"
        );
        assert!(!l.try_lock(h(2), k, Mode::Shared, Scope::Session));
        assert!(l.try_lock(h(2), Key::pair(0, 7), Mode::Exclusive, Scope::Session), "two key spaces");
        l.end_transaction(1);
        assert!(l.unlock(1, k, Mode::Exclusive));
        assert!(!l.unlock(1, k, Mode::Exclusive), "unlocked once, taken once");
        assert!(l.try_lock(h(2), k, Mode::Shared, Scope::Session));
        assert!(l.try_lock(h(3), k, Mode::Shared, Scope::Session), "shared with shared");
        assert!(!l.try_lock(h(4), k, Mode::Exclusive, Scope::Session));
    }

    #[test]
    fn session_locks_are_counted_and_end_with_the_session() {
        let l = AdvisoryLocks::default();
        let k = Key::bigint(-1);
        assert_eq!(k, Key { high: -1, low: -1, pair: false });
        assert!(l.try_lock(h(1), k, Mode::Exclusive, Scope::Session));
        assert!(l.try_lock(h(1), k, Mode::Exclusive, Scope::Session));
        assert!(l.unlock(1, k, Mode::Exclusive));
        assert!(!l.try_lock(h(2), k, Mode::Exclusive, Scope::Session), "still held once");
        l.end_session(1);
        assert!(l.try_lock(h(2), k, Mode::Exclusive, Scope::Session));
        l.unlock_all(2);
        assert!(l.rows().is_empty());
    }

    #[test]
    fn a_wait_ends_by_lock_timeout_or_interruption() {
        let l = AdvisoryLocks::default();
        let k = Key::bigint(1);
        l.lock(h(1), k, Mode::Exclusive, Scope::Session, &no_wait()).unwrap();
        let e = l.lock(h(2), k, Mode::Shared, Scope::Session, &no_wait()).unwrap_err();
        assert_eq!(e.sqlstate(), "55P03");
        let stop = Wait { timeout: None, interrupted: &|| Err(Error::other("57014", "canceling statement")) };
        assert_eq!(l.lock(h(2), k, Mode::Shared, Scope::Session, &stop).unwrap_err().sqlstate(), "57014");
        assert_eq!(l.rows().len(), 1, "a wait that ended is not shown");
    }

    #[test]
    fn a_released_lock_wakes_its_waiter() {
        let l = std::sync::Arc::new(AdvisoryLocks::default());
        let k = Key::pair(1, 2);
        assert!(l.try_lock(h(1), k, Mode::Exclusive, Scope::Transaction));
        let waiter = {
            let l = l.clone();
            std::thread::spawn(move || {
                let wait = Wait { timeout: Some(Duration::from_secs(20)), interrupted: &|| Ok(()) };
                l.lock(h(2), k, Mode::Exclusive, Scope::Session, &wait)
            })
        };
        while l.blocking_pids(2) != vec![1] {
            std::thread::yield_now();
        }
        assert!(l.rows().contains(&(k, Some(2), Mode::Exclusive, false)));
        l.end_transaction(1);
        waiter.join().unwrap().unwrap();
        assert_eq!(l.rows(), vec![(k, Some(2), Mode::Exclusive, true)]);
    }

    #[test]
    fn two_sessions_waiting_for_each_other_are_a_deadlock_for_one() {
        let l = std::sync::Arc::new(AdvisoryLocks::default());
        let (a, b) = (Key::bigint(10), Key::bigint(20));
        assert!(l.try_lock(h(1), a, Mode::Exclusive, Scope::Session));
        assert!(l.try_lock(h(2), b, Mode::Exclusive, Scope::Session));
        let run = |me: u64, want: Key| {
            let l = l.clone();
            std::thread::spawn(move || {
                let wait = Wait { timeout: Some(Duration::from_secs(20)), interrupted: &|| Ok(()) };
                let r = l.lock(h(me), want, Mode::Exclusive, Scope::Session, &wait);
                if r.is_err() {
                    l.end_session(me);
                }
                r
            })
        };
        let (one, two) = (run(1, b), run(2, a));
        let results = [one.join().unwrap(), two.join().unwrap()];
        let failed: Vec<&Error> = results.iter().filter_map(|r| r.as_ref().err()).collect();
        assert_eq!(failed.len(), 1, "{results:?}");
        assert_eq!(failed[0].sqlstate(), "40P01");
    }
}
