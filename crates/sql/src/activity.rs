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

use centum_types::{TimestampTz, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Every registered session, by process id.
pub struct Activity {
    backends: Mutex<BTreeMap<i32, Weak<Backend>>>,
    /// The engine, asked which transaction waits for which.
    db: centum_engine::Database,
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
}

/// What a session is doing, as published.
struct State {
    /// `active`, `idle`, `idle in transaction`, ...
    state: &'static str,
    query: String,
    query_start: Option<TimestampTz>,
    xact_start: Option<TimestampTz>,
    state_change: TimestampTz,
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
        Activity { backends: Mutex::default(), db }
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
            }),
            cancel,
            terminate: AtomicBool::new(false),
            wake: info.wake,
            registry: Arc::downgrade(self),
            txn: AtomicU64::new(0),
        });
        self.lock().insert(info.pid, Arc::downgrade(&b));
        b
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
                    Value::Integer(10), // usesysid
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
        let mut st = self.lock();
        st.state = state;
        if state == "idle" {
            st.xact_start = None;
        }
        st.state_change = TimestampTz::now();
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
            let mut m = r.lock();
            if m.get(&self.pid).is_some_and(|w| w.strong_count() == 0) {
                m.remove(&self.pid);
            }
        }
    }
}
