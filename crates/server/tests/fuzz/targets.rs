//! The two places every statement runs, and what counts as a bug there.
//!
//! ```text
//!   statement ─┬─▶ Embedded: centum_sql::Session over an in-memory engine,
//!              │   in this process, inside catch_unwind
//!              └─▶ Remote:   `centum serve` over the postgres crate,
//!                  simple or extended protocol
//! ```
//!
//! Both sessions run with `statement_timeout` = [`TIMEOUT`] and
//! `statement_mem` = [`STATEMENT_MEM`]. An answer is
//! [`Outcome::Done`] or [`Outcome::Error`] with its SQLSTATE (ordinary: a
//! generated statement is often wrong on purpose), or [`Outcome::Bug`]: a
//! panic, SQLSTATE XX000, a statement that ran more than [`SLACK`] past its
//! timeout, a statement that never returns (a hang), a lost connection or
//! a dead server, or server memory past the budget. A statement still
//! running after [`CANCEL_AFTER`] is cancelled (so the run goes on and
//! reports it); after [`KILL_AFTER`] the server is killed, and an embedded
//! session is left behind on its thread.

use crate::common::Server;
use postgres::{Client, NoTls};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// statement_timeout for both sessions.
pub const TIMEOUT: Duration = Duration::from_secs(2);
/// How far past the timeout a statement may run before that is a bug.
pub const SLACK: Duration = Duration::from_secs(1);
/// When the watchdog cancels a statement (it is then a bug already).
const CANCEL_AFTER: Duration = Duration::from_secs(5);
/// When the watchdog gives up on a cancel and kills the server.
const KILL_AFTER: Duration = Duration::from_secs(20);

/// The stack of the server's session threads (`SESSION_STACK` in
/// `src/server.rs`), given to the embedded session's thread too.
const SESSION_STACK: usize = 32 << 20;

/// `--memory-limit` (and the embedded database's limit) for a memory
/// `budget`: rows may fill half of it; statements' buffers (statement_mem)
/// and what the engine holds besides rows take the rest.
pub fn memory_limit(budget: u64) -> u64 {
    budget / 2
}

/// statement_mem for both sessions: a statement may hold a quarter of the
/// server's memory budget (the default, 1 GB, is the whole budget).
pub const STATEMENT_MEM: &str = "256MB";

/// The settings both sessions start with.
fn settings() -> String {
    format!("SET statement_timeout = '{}s'; SET statement_mem = '{STATEMENT_MEM}'", TIMEOUT.as_secs())
}

/// What a statement did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It succeeded.
    Done,
    /// An ordinary SQL error: its SQLSTATE and message.
    Error(String, String),
    /// A bug: what went wrong.
    Bug(Bug),
}

/// A bug found by one statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bug {
    /// The kind, compared when a reduced case is replayed: "panic",
    /// "XX000", "timeout", "connection", "crash", "memory".
    pub kind: &'static str,
    /// Which side saw it: "embedded" or "server".
    pub side: &'static str,
    /// The details: message, SQLSTATE, log lines.
    pub detail: String,
}

impl Outcome {
    /// The SQLSTATE of an error ("" for success, the kind for a bug).
    pub fn code(&self) -> &str {
        match self {
            Outcome::Done => "",
            Outcome::Error(code, _) => code,
            Outcome::Bug(b) => b.kind,
        }
    }

    /// The bug, if it is one.
    pub fn bug(&self) -> Option<&Bug> {
        match self {
            Outcome::Bug(b) => Some(b),
            _ => None,
        }
    }
}

/// The bug for a statement that ran `elapsed`, if that is past its
/// timeout by more than the slack.
fn overran(side: &'static str, elapsed: Duration) -> Option<Outcome> {
    (elapsed > TIMEOUT + SLACK).then(|| {
        Outcome::Bug(Bug {
            kind: "timeout",
            side,
            detail: format!(
                "ran {:.1}s with statement_timeout {}s",
                elapsed.as_secs_f64(),
                TIMEOUT.as_secs()
            ),
        })
    })
}

/// Where the last panic happened and what it said (the panic hook writes
/// it, the embedded runner reads it).
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Installs a panic hook that records each panic's message and location
/// before the default hook prints it.
fn record_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(info.to_string());
            default(info);
        }));
    });
}

/// A watchdog for the server's running statement: after [`CANCEL_AFTER`]
/// it sends a cancel request, after [`KILL_AFTER`] it kills the server.
struct Watchdog {
    started: Arc<Mutex<Option<Instant>>>,
}

impl Watchdog {
    /// Starts the watchdog's thread.
    fn new(cancel: impl Fn() + Send + 'static, kill: impl Fn() + Send + 'static) -> Watchdog {
        let started: Arc<Mutex<Option<Instant>>> = Arc::default();
        let watched = Arc::downgrade(&started);
        std::thread::spawn(move || {
            let (mut cancelled, mut killed) = (false, false);
            while let Some(started) = watched.upgrade() {
                let since = *started.lock().unwrap();
                drop(started);
                match since.map(|s| s.elapsed()) {
                    Some(e) if e > KILL_AFTER && !killed => {
                        kill();
                        killed = true;
                    }
                    Some(e) if e > CANCEL_AFTER && !cancelled => {
                        cancel();
                        cancelled = true;
                    }
                    Some(_) => {}
                    None => (cancelled, killed) = (false, false),
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Watchdog { started }
    }

    /// Watches `f` while it runs; returns its result and how long it took.
    fn time<T>(&self, f: impl FnOnce() -> T) -> (T, Duration) {
        let start = Instant::now();
        *self.started.lock().unwrap() = Some(start);
        let r = f();
        *self.started.lock().unwrap() = None;
        (r, start.elapsed())
    }
}

/// The embedded database: a fresh in-memory engine per case, its session
/// on a thread of its own (with the stack of the server's session threads,
/// so that both reach the same nesting limits), so that a statement that
/// never returns is reported and left behind instead of hanging the run.
pub struct Embedded {
    requests: mpsc::Sender<String>,
    answers: mpsc::Receiver<(Outcome, Duration)>,
    cancel: Arc<AtomicBool>,
    /// Set once a statement hung: the session is gone.
    lost: bool,
}

impl Embedded {
    /// A new database and session with the statement timeout set, its
    /// memory limit that of the server for a `budget`.
    pub fn new(budget: u64) -> Embedded {
        record_panics();
        let options = centum_engine::Options {
            memory_limit: Some(memory_limit(budget) as usize),
            ..Default::default()
        };
        let engine = centum_engine::Database::open(options).expect("open engine");
        let db = centum_sql::Database::open(engine).expect("open database");
        let mut session = db.session();
        session.execute(&settings()).expect("set statement_timeout and statement_mem");
        let cancel = session.cancel_handle();
        let (requests, inbox) = mpsc::channel::<String>();
        let (outbox, answers) = mpsc::channel();
        std::thread::Builder::new()
            .name("embedded-session".into())
            .stack_size(SESSION_STACK)
            .spawn(move || {
                let _db = db;
                for sql in inbox {
                    let start = Instant::now();
                    let outcome = run_embedded(&mut session, &sql);
                    if outbox.send((outcome, start.elapsed())).is_err() {
                        break;
                    }
                }
            })
            .expect("start the embedded session's thread");
        Embedded { requests, answers, cancel, lost: false }
    }

    /// Runs `sql`. A statement still running after [`CANCEL_AFTER`] is
    /// cancelled; one still running after [`KILL_AFTER`] is a hang.
    pub fn run(&mut self, sql: &str) -> Outcome {
        let lost = || {
            Outcome::Bug(Bug { kind: "hang", side: "embedded", detail: "the session hung earlier".into() })
        };
        if self.lost || self.requests.send(sql.to_string()).is_err() {
            return lost();
        }
        let answer = self.answers.recv_timeout(CANCEL_AFTER).or_else(|_| {
            self.cancel.store(true, Ordering::SeqCst);
            self.answers.recv_timeout(KILL_AFTER - CANCEL_AFTER)
        });
        match answer {
            Ok((outcome, elapsed)) => overran("embedded", elapsed).unwrap_or(outcome),
            Err(_) => {
                self.lost = true;
                Outcome::Bug(Bug {
                    kind: "hang",
                    side: "embedded",
                    detail: format!("still running after {} s and a cancel", KILL_AFTER.as_secs()),
                })
            }
        }
    }
}

/// Runs `sql` in `session`; a panic is caught and reported as a bug.
fn run_embedded(session: &mut centum_sql::Session, sql: &str) -> Outcome {
    *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = None;
    match catch_unwind(AssertUnwindSafe(|| session.execute(sql))) {
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let at = LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or(message);
            Outcome::Bug(Bug { kind: "panic", side: "embedded", detail: at })
        }
        Ok(Ok(_)) => Outcome::Done,
        Ok(Err(e)) if e.sqlstate() == "XX000" => {
            Outcome::Bug(Bug { kind: "XX000", side: "embedded", detail: e.to_string() })
        }
        Ok(Err(e)) => Outcome::Error(e.sqlstate().to_string(), e.to_string()),
    }
}

/// The server: one process for the whole run, a new connection per case.
pub struct Remote {
    server: Server,
    client: Option<Client>,
    watchdog: Watchdog,
    /// The server's pid, for the watchdog to kill (updated on restarts).
    pid: Arc<Mutex<Option<u32>>>,
    /// The connection the watchdog cancels.
    cancel: Arc<Mutex<Option<postgres::CancelToken>>>,
    /// The server's resident memory when the run began, in bytes.
    baseline: u64,
    /// How far above the baseline it may grow.
    budget: u64,
}

impl Remote {
    /// Starts a server; `budget` is the memory growth allowed, in bytes.
    pub fn start(budget: u64) -> Remote {
        let limit = format!("{}MB", memory_limit(budget) >> 20);
        let server = Server::start(&["--memory-limit", &limit]);
        let pid = Arc::new(Mutex::new(server.pid()));
        let cancel: Arc<Mutex<Option<postgres::CancelToken>>> = Arc::default();
        let to_cancel = cancel.clone();
        let to_kill = pid.clone();
        let watchdog = Watchdog::new(
            move || {
                if let Some(token) = to_cancel.lock().unwrap().as_ref() {
                    let _ = token.cancel_query(NoTls);
                }
            },
            move || {
                if let Some(pid) = *to_kill.lock().unwrap() {
                    let _ = std::process::Command::new("kill").arg("-KILL").arg(pid.to_string()).status();
                }
            },
        );
        let mut remote = Remote { server, client: None, watchdog, pid, cancel, baseline: 0, budget };
        remote.baseline = remote.rss().unwrap_or(0);
        remote
    }

    /// The server's resident set size in bytes (VmRSS).
    pub fn rss(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.server.pid()?)).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    }

    /// The last lines of the server's log.
    pub fn log_tail(&self) -> String {
        let log = self.server.log_text();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// Stops the server and starts it again on the same data directory
    /// (after a memory bug, so that the next case is measured afresh).
    pub fn restart(&mut self) {
        self.client = None;
        self.server.stop();
        self.reset();
    }

    /// A clean slate for the next case: the server running (restarted if
    /// it died), a new connection with the timeout set, and no tables or
    /// sequences left in `public`.
    pub fn reset(&mut self) {
        self.client = None;
        if !self.server.alive() {
            self.server.launch(&[], &[]);
            *self.pid.lock().unwrap() = self.server.pid();
            self.baseline = self.rss().unwrap_or(0);
        }
        let mut config: postgres::Config = self.server.conninfo("centum").parse().expect("conninfo");
        config.connect_timeout(Duration::from_secs(10));
        let mut client = config.connect(NoTls).expect("connect to the server");
        client.batch_execute(&settings()).expect("set statement_timeout and statement_mem");
        let tables: Vec<String> = client
            .simple_query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' \
                 AND table_type = 'BASE TABLE'",
            )
            .expect("list tables")
            .into_iter()
            .filter_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => {
                    r.get(0).map(|n| format!("\"{}\"", n.replace('"', "\"\"")))
                }
                _ => None,
            })
            .collect();
        if !tables.is_empty() {
            client
                .batch_execute(&format!("DROP TABLE IF EXISTS {} CASCADE", tables.join(", ")))
                .expect("drop tables");
        }
        *self.cancel.lock().unwrap() = Some(client.cancel_token());
        self.client = Some(client);
    }

    /// Runs `sql` over the simple protocol, or the extended one (parse,
    /// bind, execute with binary results) when `extended`.
    pub fn run(&mut self, sql: &str, extended: bool) -> Outcome {
        let Some(client) = self.client.as_mut() else {
            return Outcome::Bug(Bug { kind: "connection", side: "server", detail: "no connection".into() });
        };
        let (r, elapsed) = self.watchdog.time(|| {
            if extended {
                client.query(sql, &[]).map(drop)
            } else {
                client.simple_query(sql).map(drop)
            }
        });
        let outcome = match r {
            Ok(()) => Outcome::Done,
            Err(e) => match e.as_db_error() {
                Some(db) if db.code().code() == "XX000" => {
                    Outcome::Bug(Bug { kind: "XX000", side: "server", detail: db.message().to_string() })
                }
                Some(db) => Outcome::Error(db.code().code().to_string(), db.message().to_string()),
                None if !client.is_closed() && !e.is_closed() => {
                    Outcome::Error("client".into(), e.to_string())
                }
                None => {
                    std::thread::sleep(Duration::from_millis(200));
                    let (kind, what) = if elapsed >= KILL_AFTER {
                        ("hang", "still running after a cancel request: the server was killed")
                    } else if self.server.alive() {
                        ("connection", "connection lost")
                    } else {
                        ("crash", "server exited")
                    };
                    self.client = None;
                    let detail = format!("{what}: {e}\nserver log:\n{}", self.log_tail());
                    return Outcome::Bug(Bug { kind, side: "server", detail });
                }
            },
        };
        if let Some(bug) = overran("server", elapsed) {
            return bug;
        }
        match self.rss() {
            Some(rss) if rss > self.baseline + self.budget => Outcome::Bug(Bug {
                kind: "memory",
                side: "server",
                detail: format!(
                    "server resident memory {} MiB, {} MiB at start",
                    rss >> 20,
                    self.baseline >> 20
                ),
            }),
            _ => outcome,
        }
    }
}
