//! Server sessions as other sessions see them: `pg_stat_activity`,
//! `pg_backend_pid()`, `pg_cancel_backend()` and `pg_terminate_backend()`.
//!
//! Each session of the server registers a [`Backend`] under the process id
//! its client was given at start-up (the one a cancel request names). The
//! session publishes its state as it goes: the statement text and when it
//! started while a statement runs, `idle`, `idle in transaction` or
//! `idle in transaction (aborted)` between statements. Publishing a
//! statement takes one uncontended lock and copies its text into a buffer
//! the backend keeps, so it allocates nothing once the buffer has grown.
//!
//! Cancelling raises the session's cancel flag, which the statement reads
//! as it works and row waits read as they wait (57014). Terminating raises
//! the terminate flag too and calls the waker the server gave, so a
//! session idle on its socket ends at once with FATAL 57P01; a busy one
//! ends after its statement is cancelled. Sessions of the embedded API
//! are not registered.
//!
//! Waits: each backend records the transaction its statement runs in, and
//! the engine's transaction table knows which transaction each running one
//! waits for (a row it holds). A waiting session shows `wait_event_type`
//! `Lock` and `wait_event` `transactionid`, as PostgreSQL does for a row
//! lock, and `pg_blocking_pids` names the session holding the row.
//!
//! `pg_locks` shows what PostgreSQL would show for the same waits: every
//! running transaction holds its virtual transaction id; one that has
//! written or locked a row holds its transaction id (`ExclusiveLock`);
//! a session waiting for a row asks for the holder's transaction id
//! (`ShareLock`, not granted). Centum takes no table locks, so no
//! `relation` locks appear.
//!
//! `pg_stat_database` adds up the sessions: how many started, how long
//! they lasted, were active and idle in a transaction, and how they ended
//! (a lost connection, a FATAL error, `pg_terminate_backend`).

use centum_types::{TimestampTz, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Every registered session, by process id.
pub struct Activity {
    backends: Mutex<BTreeMap<i32, Weak<Backend>>>,
    /// The engine, asked which transaction waits for which.
    db: centum_engine::Database,
    /// Sessions that have ended, added up (`pg_stat_database`).
    ended: Mutex<Totals>,
    /// The database's advisory locks, of every session (embedded ones
    /// too).
    pub(crate) advisory: crate::advisory::AdvisoryLocks,
    /// The database's listening sessions (LISTEN, NOTIFY).
    pub(crate) notify: crate::notify::Hub,
    /// The replicated group the server belongs to, if any.
    pub(crate) cluster: std::sync::OnceLock<std::sync::Arc<dyn crate::Cluster>>,
}

/// Sessions added up, as `pg_stat_database` reports them; times in
/// milliseconds.
#[derive(Clone, Debug, Default)]
pub(crate) struct Totals {
    /// Sessions now (only in [`Activity::totals`]).
    pub backends: u64,
    /// Sessions started.
    pub sessions: u64,
    pub session_ms: f64,
    pub active_ms: f64,
    pub idle_in_transaction_ms: f64,
    /// Ended because the connection was lost.
    pub abandoned: u64,
    /// Ended by a FATAL error.
    pub fatal: u64,
    /// Ended by `pg_terminate_backend`.
    pub killed: u64,
    /// When `pg_stat_reset()` last ran.
    pub reset: Option<TimestampTz>,
}

/// How a session ends, as its server connection tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The connection was lost (the default until told otherwise).
    Lost = 0,
    /// The client said goodbye (Terminate).
    Normal = 1,
    /// The server ended it with a FATAL error.
    Fatal = 2,
}

/// One server session.
pub struct Backend {
    /// The process id its client knows it by.
    pub pid: i32,
    user: String,
    database: String,
    client: Option<(String, u16)>,
    application_name: String,
    started: TimestampTz,
    state: Mutex<State>,
    cancel: Arc<AtomicBool>,
    terminate: AtomicBool,
    wake: Box<dyn Fn() + Send + Sync>,
    registry: Weak<Activity>,
    /// Raw id of the transaction its last statement ran in (0: none yet).
    txn: AtomicU64,
    /// How it ends (an [`Ending`]).
    ending: AtomicU8,
}

/// What a session is doing, as published.
struct State {
    /// `active`, `idle`, `idle in transaction`, ...
    state: &'static str,
    query: String,
    query_start: Option<TimestampTz>,
    xact_start: Option<TimestampTz>,
    state_change: TimestampTz,
    /// Microseconds spent running statements, and idle inside a
    /// transaction block.
    active_us: i64,
    idle_in_transaction_us: i64,
}

/// How a session appears when it is registered.
pub struct BackendInfo {
    /// The process id given to the client.
    pub pid: i32,
    /// The client's address and port.
    pub client: Option<(String, u16)>,
    /// `application_name` from the start-up packet.
    pub application_name: String,
    /// Called (from another thread) when the session is terminated, to
    /// wake it if it is waiting for its client.
    pub wake: Box<dyn Fn() + Send + Sync>,
}

/// The result of signalling a backend.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Signal {
    Sent,
    NoSuchBackend,
    NotAllowed,
}

impl Activity {
    /// An empty registry over engine `db`.
    pub(crate) fn new(db: centum_engine::Database) -> Activity {
        Activity {
            backends: Mutex::default(),
            db,
            ended: Mutex::default(),
            advisory: Default::default(),
            notify: Default::default(),
            cluster: Default::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<i32, Weak<Backend>>> {
        self.backends.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a session; it leaves when the returned backend is dropped.
    pub(crate) fn register(
        self: &Arc<Self>,
        info: BackendInfo,
        user: &str,
        database: &str,
        cancel: Arc<AtomicBool>,
    ) -> Arc<Backend> {
        let now = TimestampTz::now();
        let b = Arc::new(Backend {
            pid: info.pid,
            user: user.to_string(),
            database: database.to_string(),
            client: info.client,
            application_name: info.application_name,
            started: now,
            state: Mutex::new(State {
                state: "idle",
                query: String::new(),
                query_start: None,
                xact_start: None,
                state_change: now,
                active_us: 0,
                idle_in_transaction_us: 0,
            }),
            cancel,
            terminate: AtomicBool::new(false),
            wake: info.wake,
            registry: Arc::downgrade(self),
            txn: AtomicU64::new(0),
            ending: AtomicU8::new(Ending::Lost as u8),
        });
        self.lock().insert(info.pid, Arc::downgrade(&b));
        self.totals_lock().sessions += 1;
        b
    }

    fn totals_lock(&self) -> MutexGuard<'_, Totals> {
        self.ended.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The sessions added up: those that ended, and those running now up
    /// to now.
    pub(crate) fn totals(&self) -> Totals {
        let now = TimestampTz::now();
        let mut t = self.totals_lock().clone();
        for b in self.all() {
            let st = b.lock();
            t.backends += 1;
            t.session_ms += micros(b.started, now) as f64 / 1e3;
            t.active_ms += st.active_us as f64 / 1e3;
            t.idle_in_transaction_ms += st.idle_in_transaction_us as f64 / 1e3;
            // The interval under way.
            match st.state {
                "active" => t.active_ms += micros(st.state_change, now) as f64 / 1e3,
                "idle" => {}
                _ => t.idle_in_transaction_ms += micros(st.state_change, now) as f64 / 1e3,
            }
        }
        t
    }

    /// Sets the session totals back to zero (`pg_stat_reset()`); sessions
    /// running now still count in full.
    pub(crate) fn reset(&self) {
        *self.totals_lock() = Totals { reset: Some(TimestampTz::now()), ..Totals::default() };
    }

    /// `pg_locks`' rows, in its column order.
    pub(crate) fn locks(&self) -> Vec<Vec<Value>> {
        let txt = |s: String| Value::Text(s);
        let lock =
            |locktype: &str, vxid: Value, xid: Value, vtx: &str, pid: i32, mode: &str, granted: bool| {
                vec![
                    txt(locktype.into()),
                    Value::Null, // database
                    Value::Null, // relation
                    Value::Null,
                    Value::Null,
                    vxid,
                    xid,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    txt(vtx.into()),
                    Value::Integer(pid),
                    txt(mode.into()),
                    Value::Boolean(granted),
                    Value::Boolean(locktype == "virtualxid"),
                    Value::Null, // waitstart
                ]
            };
        let mut out = Vec::new();
        for b in self.all() {
            let raw = b.txn.load(SeqCst);
            if raw == 0 {
                continue;
            }
            let id = centum_engine::TxnId::from_raw(raw);
            let Some(holds) = self.db.running(id) else { continue };
            let vtx = format!("{}/{}", b.pid, xid(raw));
            out.push(lock("virtualxid", txt(vtx.clone()), Value::Null, &vtx, b.pid, "ExclusiveLock", true));
            if holds {
                out.push(lock(
                    "transactionid",
                    Value::Null,
                    txt(xid(raw)),
                    &vtx,
                    b.pid,
                    "ExclusiveLock",
                    true,
                ));
            }
            if let Some(holder) = self.db.waiting_for(id) {
                let held = txt(xid(holder.raw()));
                out.push(lock("transactionid", Value::Null, held, &vtx, b.pid, "ShareLock", false));
            }
        }
        // Advisory locks: the key in classid, objid and objsubid, as
        // PostgreSQL shows them (embedded sessions have no pid); the
        // virtual catalog fills in the database.
        for (key, pid, mode, granted) in self.advisory.rows() {
            let mut row =
                lock("advisory", Value::Null, Value::Null, "", pid.unwrap_or(0), mode.name(), granted);
            row[7] = Value::Integer(key.high);
            row[8] = Value::Integer(key.low);
            row[9] = Value::SmallInt(if key.pair { 2 } else { 1 });
            row[10] = Value::Null;
            if pid.is_none() {
                row[11] = Value::Null;
            }
            out.push(row);
        }
        out
    }

    /// The backend of `pid`, if it is still there.
    fn get(&self, pid: i32) -> Option<Arc<Backend>> {
        self.lock().get(&pid).and_then(Weak::upgrade)
    }

    /// Cancels `pid`'s statement, or ends its session too (`terminate`),
    /// on behalf of `user` (a superuser, or the session's own role).
    pub(crate) fn signal(&self, pid: i32, terminate: bool, user: &str, superuser: bool) -> Signal {
        let Some(b) = self.get(pid) else { return Signal::NoSuchBackend };
        if !superuser && b.user != user {
            return Signal::NotAllowed;
        }
        if terminate {
            b.terminate.store(true, SeqCst);
        }
        b.cancel.store(true, SeqCst);
        if terminate {
            (b.wake)();
        }
        Signal::Sent
    }

    /// Every registered backend.
    fn all(&self) -> Vec<Arc<Backend>> {
        self.lock().values().filter_map(Weak::upgrade).collect()
    }

    /// Each session's last transaction: its raw id, the session's process
    /// id, and when the transaction started (`None` once it has ended).
    pub(crate) fn transactions(&self) -> Vec<(u64, i32, Option<TimestampTz>)> {
        self.all()
            .iter()
            .filter_map(|b| match b.txn.load(SeqCst) {
                0 => None,
                raw => Some((raw, b.pid, b.lock().xact_start)),
            })
            .collect()
    }

    /// The transaction `b`'s transaction waits for, if it is waiting.
    fn blocker(&self, b: &Backend) -> Option<centum_engine::TxnId> {
        match b.txn.load(SeqCst) {
            0 => None,
            raw => self.db.waiting_for(centum_engine::TxnId::from_raw(raw)),
        }
    }

    /// `pg_blocking_pids(pid)`: the sessions whose transaction `pid`'s
    /// transaction waits for (at most one: a wait is for one row's holder).
    pub(crate) fn blocking_pids(&self, pid: i32) -> Vec<i32> {
        let advisory = self.advisory.blocking_pids(pid);
        if !advisory.is_empty() {
            return advisory;
        }
        let Some(waiter) = self.get(pid) else { return vec![] };
        let Some(holder) = self.blocker(&waiter) else { return vec![] };
        self.all().iter().filter(|b| b.txn.load(SeqCst) == holder.raw()).map(|b| b.pid).collect()
    }

    /// `pg_stat_activity`'s rows, in its column order.
    pub(crate) fn rows(&self) -> Vec<Vec<Value>> {
        let backends = self.all();
        let ts = |t: Option<TimestampTz>| t.map_or(Value::Null, Value::TimestampTz);
        let txt = |s: &str| Value::Text(s.to_string());
        backends
            .iter()
            .map(|b| {
                let waiting = self.blocker(b).is_some();
                let st = b.state.lock().unwrap_or_else(|e| e.into_inner());
                let (addr, port) = match &b.client {
                    Some((a, p)) => (txt(a), Value::Integer(i32::from(*p))),
                    None => (Value::Null, Value::Null),
                };
                vec![
                    Value::Integer(1), // datid
                    txt(&b.database),  // datname
                    Value::Integer(b.pid),
                    Value::Null,        // leader_pid
                    Value::Integer(10), // usesysid: the virtual catalog puts the role's OID
                    txt(&b.user),       // usename
                    txt(&b.application_name),
                    addr,        // client_addr
                    Value::Null, // client_hostname
                    port,        // client_port
                    Value::TimestampTz(b.started),
                    ts(st.xact_start),
                    ts(st.query_start),
                    Value::TimestampTz(st.state_change),
                    // A wait for a row another transaction holds, as
                    // PostgreSQL names a wait for a transaction's lock.
                    if waiting { txt("Lock") } else { Value::Null },
                    if waiting { txt("transactionid") } else { Value::Null },
                    txt(st.state),
                    Value::Null, // backend_xid
                    Value::Null, // backend_xmin
                    Value::Null, // query_id
                    txt(&st.query),
                    txt("client backend"),
                ]
            })
            .collect()
    }
}

impl Backend {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A statement starts; `in_block` says whether a transaction block was
    /// already open (else the statement's transaction starts now).
    pub(crate) fn statement(&self, sql: &str, in_block: bool) {
        let now = TimestampTz::now();
        let mut st = self.lock();
        if st.state != "idle" {
            st.idle_in_transaction_us += micros(st.state_change, now);
        }
        st.state = "active";
        st.query.clear();
        st.query.push_str(sql);
        st.query_start = Some(now);
        if !in_block || st.xact_start.is_none() {
            st.xact_start = Some(now);
        }
        st.state_change = now;
    }

    /// The statement ended; the session is now idle in `state`.
    pub(crate) fn idle(&self, state: &'static str) {
        let now = TimestampTz::now();
        let mut st = self.lock();
        if st.state == "active" {
            st.active_us += micros(st.state_change, now);
        }
        st.state = state;
        if state == "idle" {
            st.xact_start = None;
        }
        st.state_change = now;
    }

    /// Records how the session is ending (see [`Ending`]).
    pub fn ending(&self, how: Ending) {
        self.ending.store(how as u8, SeqCst);
    }

    /// Records the transaction the session's statement runs in.
    #[inline]
    pub(crate) fn set_transaction(&self, id: centum_engine::TxnId) {
        self.txn.store(id.raw(), SeqCst);
    }

    /// Whether the session was terminated (`pg_terminate_backend`).
    pub fn terminated(&self) -> bool {
        self.terminate.load(SeqCst)
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Some(r) = self.registry.upgrade() {
            let now = TimestampTz::now();
            let st = self.lock();
            let mut t = r.totals_lock();
            t.session_ms += micros(self.started, now) as f64 / 1e3;
            t.active_ms += st.active_us as f64 / 1e3;
            t.idle_in_transaction_ms += st.idle_in_transaction_us as f64 / 1e3;
            if self.terminated() {
                t.killed += 1;
            } else if self.ending.load(SeqCst) == Ending::Fatal as u8 {
                t.fatal += 1;
            } else if self.ending.load(SeqCst) == Ending::Lost as u8 {
                t.abandoned += 1;
            }
            drop((t, st));
            let mut m = r.lock();
            if m.get(&self.pid).is_some_and(|w| w.strong_count() == 0) {
                m.remove(&self.pid);
            }
        }
    }
}

/// Microseconds from `a` to `b` (0 if the clock went back).
fn micros(a: TimestampTz, b: TimestampTz) -> i64 {
    b.0.saturating_sub(a.0).max(0)
}

/// A transaction's id as `pg_locks` shows it: its raw word without the bit
/// that marks a word as a transaction id (unique among running ones).
fn xid(raw: u64) -> String {
    xid_number(raw).to_string()
}

/// The transaction id clients see for the engine's raw id (as
/// `pg_locks.transactionid` shows it).
pub(crate) fn xid_number(raw: u64) -> i64 {
    (raw & (u64::MAX >> 1)) as i64
}
