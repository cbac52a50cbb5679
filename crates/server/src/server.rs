//! The listener: accepting connections, start-up and authentication,
//! cancel requests, the connection limit and shutdown.
//!
//! ```text
//!  accept ─▶ room for another start-up? (below) ─▶ a task of the worker pool
//!  SSLRequest? (TLS with rustls when configured) ─▶ first message
//!     CancelRequest ─▶ raise that session's cancel flag, close
//!     over max_connections ─▶ FATAL 53300, close
//!     StartupMessage ─▶ authentication (auth.rs)
//!        trust:          AuthenticationOk; the role must exist and may log in
//!        scram-sha-256:  SASL exchange against the role's verifier (or a
//!                        mock one), then the role may log in
//!     ─▶ ParameterStatus..., BackendKeyData, ReadyForQuery ─▶ connection.rs
//! ```
//!
//! Start-up and the SCRAM exchange are pgwire's; the query protocol after
//! it is Centum's own loop (`connection.rs`). One data directory holds one
//! database: any database name a client asks for is accepted and names
//! that database (`current_database()` answers with the name asked).
//!
//! Start-up slots. A connection is *starting* from accept until it is
//! ready for queries or refused; each is a task. Sockets that connect
//! and say nothing must neither make the server spawn without end nor
//! lock real clients out, so:
//!
//! - At most `max_connections + 64` connections (sessions and start-ups)
//!   are served at once. A connection that arrives when they are all taken
//!   takes the place of a starting one: the oldest start-up of the address
//!   that holds the most start-ups is closed. Sessions are never closed
//!   for it; only when nothing is starting is the new socket closed.
//! - A start-up must finish within 30 s of its accept. Once more than 32
//!   are starting at once, every start-up open then, and every one that
//!   begins while 32 are open, must finish within 5 s of its accept (a
//!   client finishes in milliseconds; a crowd of silent sockets is cleared
//!   within seconds). The listener checks each second.
//! - A closed start-up's task ends within moments; while another 64 of
//!   them have not, the listener stops accepting, and new sockets wait in
//!   the kernel's backlog instead of making the server spawn without end.
//!
//! So a client that connects during a flood of silent sockets is served at
//! once, and a flood from one address displaces its own sockets before
//! anyone else's.
//!
//! Shutdown (SIGINT or SIGTERM): the listener stops and closes the
//! connections still starting up; every session finishes the statement it
//! is running, then is told FATAL 57P01 at its next read, and its session's
//! open transaction is rolled back. Once the connections are gone (or after
//! a grace period) the database is closed: the log is flushed, so every
//! acknowledged commit is on disk.

use crate::auth::{self, Parameters};
use crate::config::{AuthMethod, Config};
use crate::connection::Connection;
use futures::{SinkExt, StreamExt};
use pgwire::api::{ClientInfo, PgWireConnectionState};
use pgwire::error::ErrorInfo;
use pgwire::messages::startup::SecretKey;
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use pgwire::tokio::server::{negotiate_tls, MaybeTls, PgWireMessageServerCodec};
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio_util::codec::Framed;

/// The socket during start-up: pgwire's codec, over TCP or TLS.
pub(crate) type StartupSocket = Framed<MaybeTls, PgWireMessageServerCodec<()>>;

/// How long a client may take to start up and authenticate.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// The same while more than `PRESSURE` connections are starting.
const PRESSED_STARTUP_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections that may be starting up beyond `max_connections`.
const STARTING_MARGIN: usize = 64;
/// Start-ups at once beyond which `PRESSED_STARTUP_TIMEOUT` applies.
const PRESSURE: usize = STARTING_MARGIN / 2;
/// How often the listener looks for start-ups past the short limit.
const PRESSURE_CHECK: Duration = Duration::from_secs(1);
/// How long shutdown waits for connections to finish their statements.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// The stack of each worker thread. Statements nest as deep as the stack
/// left allows (past it they fail with 54001, see centum-sql's `stack`
/// module): 32 MiB holds a 10,000-term OR chain, a 2,000-term sum or
/// 1,000 nested subqueries. Only the pages a statement touches become
/// memory; the rest is address space.
const SESSION_STACK: usize = 32 << 20;

/// What every connection shares.
pub(crate) struct Shared {
    pub db: centum_sql::Database,
    pub config: Config,
    /// Connections past start-up.
    pub connections: AtomicUsize,
    /// Cancel flags by backend pid, with the secret a cancel must present.
    pub cancels: Mutex<HashMap<i32, (SecretKey, Arc<AtomicBool>)>>,
    /// The next backend pid under trust authentication.
    pub next_pid: AtomicI32,
    /// Keys the mock verifiers of unknown roles (see `auth.rs`).
    pub mock_key: ring::hmac::Key,
    /// Becomes true when the server is shutting down.
    pub shutdown: watch::Receiver<bool>,
    /// Sessions whose client may hang up mid-statement.
    pub hangups: Arc<crate::hangup::Hangups>,
    /// What the server records for the metrics endpoint; `None` when it
    /// has none, and then nothing is recorded.
    pub metrics: Option<crate::metrics::Metrics>,
    /// This server's membership of a replicated group, if any.
    pub(crate) member: Option<crate::cluster::Member>,
    /// The data directory's lock, held while the server runs.
    _lock: std::fs::File,
}

impl Shared {
    /// In a replicated group, whether this server is a standby now, as
    /// clients are told (`in_hot_standby`); `None` outside a group.
    pub(crate) fn standby(&self) -> Option<bool> {
        self.member.as_ref().map(|_| self.db.is_standby())
    }

    fn lock_cancels(&self) -> std::sync::MutexGuard<'_, HashMap<i32, (SecretKey, Arc<AtomicBool>)>> {
        self.cancels.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running server.
pub struct Server {
    shared: Arc<Shared>,
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    stop: watch::Sender<bool>,
    starting: Arc<Starting>,
    pool: Pool,
    /// The metrics endpoint's socket (`--metrics-listen`).
    metrics: Option<TcpListener>,
}

/// Opens the data directory (creating the superuser in a new one) and
/// binds the listen address.
pub async fn bind(config: Config) -> Result<Server, String> {
    std::fs::create_dir_all(&config.data_dir)
        .map_err(|e| format!("cannot create data directory {}: {e}", config.data_dir.display()))?;
    let mut lock = lock_data_dir(&config.data_dir)?;
    // In a replicated group the Raft log is the redo log (see `cluster`).
    let group = config.cluster.as_ref().map(|_| crate::cluster::Member::group());
    let mut opts = match &group {
        None => centum_engine::Options::durable(&config.data_dir),
        Some(g) => centum_engine::Options { replicate: Some(g.clone()), ..Default::default() },
    };
    opts.storage.log.delayed = config.delayed_durability;
    opts.memory_limit = config.memory_limit;
    opts.logical = config.logical;
    let engine = centum_engine::Database::open(opts)
        .map_err(|e| format!("cannot open data directory {}: {e}", config.data_dir.display()))?;
    let db = centum_sql::Database::open(engine).map_err(|e| format!("cannot open the SQL catalog: {e}"))?;
    let member = match (&config.cluster, group) {
        (Some(c), Some(g)) => {
            // The primary makes the superuser, once the group has one.
            Some(crate::cluster::Member::start(c, &config.data_dir, g, db.clone(), config.superuser()).await?)
        }
        _ => {
            ensure_superuser(&db, &config.superuser())?;
            None
        }
    };
    if config.auth == AuthMethod::ScramSha256 && db.catalog().roles().iter().all(|r| r.verifier.is_none()) {
        tracing::warn!("password authentication is on but no role has a password: nobody can log in (set CENTUM_SUPERUSER_PASSWORD on a new data directory)");
    }
    let mock_key = auth::mock_key(&config.data_dir)?;
    let tls = match &config.tls {
        None => None,
        Some((cert, key)) => Some(tls_acceptor(cert, key)?),
    };
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    record_address(&mut lock, &config.data_dir, &listener, "")?;
    let metrics = match config.metrics_listen {
        None => None,
        Some(addr) => {
            let l = TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen for metrics on {addr}: {e}"))?;
            record_address(&mut lock, &config.data_dir, &l, "metrics ")?;
            Some(l)
        }
    };
    let pool = Pool::start(config.workers)?;
    let (stop, shutdown) = watch::channel(false);
    let shared = Arc::new(Shared {
        db,
        config,
        connections: AtomicUsize::new(0),
        cancels: Mutex::new(HashMap::new()),
        next_pid: AtomicI32::new(std::process::id() as i32 & 0x3fff_ffff),
        mock_key,
        shutdown,
        hangups: Arc::default(),
        metrics: metrics.is_some().then(crate::metrics::Metrics::default),
        member,
        _lock: lock,
    });
    Ok(Server { shared, listener, tls, stop, starting: Arc::default(), pool, metrics })
}

/// Creates the superuser role of a database that has no role yet.
pub(crate) fn ensure_superuser(
    db: &centum_sql::Database,
    su: &crate::config::Superuser,
) -> Result<(), String> {
    if !db.catalog().roles().is_empty() {
        return Ok(());
    }
    let verifier = match &su.password {
        Some(p) => Some(centum_sql::auth::ScramVerifier::new(p).map_err(|e| e.to_string())?.to_text()),
        None => None,
    };
    db.catalog()
        .create_role(centum_sql::catalog::Role {
            name: su.name.clone(),
            superuser: true,
            login: true,
            verifier,
        })
        .map_err(|e| format!("cannot create the superuser: {e}"))?;
    tracing::info!(role = %su.name, "new database: created the superuser role");
    Ok(())
}

/// Takes the data directory's lock (`centum.lock`, an exclusive `flock`
/// held until the process ends, however it ends) and writes the server's
/// process id into it. A second server on the same directory would write
/// the same log and checkpoint files and corrupt them, so it is refused.
fn lock_data_dir(dir: &std::path::Path) -> Result<std::fs::File, String> {
    use std::io::Write;
    let path = dir.join("centum.lock");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            return Err(format!(
                "data directory {} is in use by another centum server (process {}); its lock {} is held",
                dir.display(),
                holder.trim(),
                path.display()
            ));
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(format!("cannot lock {}: {e}", path.display())),
    }
    file.set_len(0)
        .and_then(|()| writeln!(file, "{}", std::process::id()))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(file)
}

/// Adds an address the server listens on to its lock file, under the
/// process id, as `{prefix}ADDR`: the SQL listener's first (no prefix),
/// then the metrics endpoint's (`metrics `). With port 0 the kernel picks
/// the port, and whoever started the server (a script, a test) reads it
/// from there. Connections made once this line is written wait in the
/// listen backlog until the server accepts them.
fn record_address(
    lock: &mut std::fs::File,
    dir: &std::path::Path,
    listener: &TcpListener,
    prefix: &str,
) -> Result<(), String> {
    use std::io::Write;
    let addr = listener.local_addr().map_err(|e| format!("{prefix}listening socket: {e}"))?;
    writeln!(lock, "{prefix}{addr}").map_err(|e| format!("{}: {e}", dir.join("centum.lock").display()))
}

fn tls_acceptor(cert: &std::path::Path, key: &std::path::Path) -> Result<tokio_rustls::TlsAcceptor, String> {
    use tokio_rustls::rustls;
    let open =
        |p: &std::path::Path| std::fs::File::open(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    let certs = rustls_pemfile::certs(&mut std::io::BufReader::new(open(cert)?))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", cert.display()))?;
    let key = rustls_pemfile::private_key(&mut std::io::BufReader::new(open(key)?))
        .map_err(|e| format!("{}: {e}", key.display()))?
        .ok_or_else(|| format!("{}: no private key", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("TLS certificate: {e}"))?;
    cfg.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(cfg)))
}

impl Server {
    /// The address it listens on (the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.listener.local_addr().expect("bound listener")
    }

    /// The address the metrics endpoint listens on, if it has one.
    pub fn metrics_addr(&self) -> Option<std::net::SocketAddr> {
        self.metrics.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Serves until `stop` resolves, then shuts down cleanly.
    pub async fn run(mut self, stop: impl std::future::Future<Output = ()>) {
        tokio::pin!(stop);
        if let Some(listener) = self.metrics.take() {
            if let Ok(addr) = listener.local_addr() {
                tracing::info!(listen = %addr, "serving metrics at /metrics");
            }
            let registry = crate::metrics::registry(Arc::downgrade(&self.shared));
            tokio::spawn(crate::metrics::serve(listener, registry, self.shared.shutdown.clone()));
        }
        let live = Arc::new(AtomicUsize::new(0));
        let mut check = tokio::time::interval(PRESSURE_CHECK);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let memory_limit =
            self.shared.config.memory_limit.map_or_else(|| "none".into(), centum_engine::memory::pretty_size);
        tracing::info!(listen = %self.local_addr(), auth = ?self.shared.config.auth, tls = self.tls.is_some(), memory_limit, "ready to accept connections");
        // Past this many tasks the listener stops accepting for a moment:
        // the tasks of start-ups it closed to make room have not ended
        // yet (they end within moments), and new sockets wait in the
        // kernel's backlog rather than make the server spawn without end.
        let paused = self.shared.config.max_connections + 2 * STARTING_MARGIN;
        loop {
            let accepting = live.load(SeqCst) < paused;
            tokio::select! {
                _ = &mut stop => break,
                _ = check.tick() => self.starting.close_overdue(),
                _ = tokio::time::sleep(Duration::from_millis(1)), if !accepting => {}
                accepted = self.listener.accept(), if accepting => match accepted {
                    Ok((tcp, peer)) => self.spawn(tcp, peer, &live),
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                },
            }
        }
        tracing::info!(connections = live.load(SeqCst), "shutting down");
        let _ = self.stop.send(true);
        self.starting.close_all();
        let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
        while live.load(SeqCst) > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if live.load(SeqCst) > 0 {
            tracing::warn!(
                connections = live.load(SeqCst),
                "connections still busy after the grace period; their transactions are not committed"
            );
        }
        if let Some(m) = &self.shared.member {
            m.stop().await;
        }
        drop(self.shared);
        tracing::info!("server stopped");
    }

    /// Runs a connection as a task of the worker pool. Its statements run
    /// to completion on the worker that read its message; a commit awaits
    /// its group commit's fsync without holding the worker, and a wait for
    /// a row another transaction holds (or any other blocking wait of the
    /// engine) hands the worker's other sessions to another thread first
    /// (see `pool`). So a handful of threads serves every connection, and
    /// under load a worker goes from one ready client to the next without
    /// a context switch.
    fn spawn(&self, tcp: tokio::net::TcpStream, peer: std::net::SocketAddr, live: &Arc<AtomicUsize>) {
        // Tasks are bounded: sessions (at most max_connections) plus a
        // margin of start-ups. At the bound a start-up makes room (see the
        // module header); its task ends within moments, and until it has
        // `run` pauses accepting once a second margin is taken too.
        let bound = self.shared.config.max_connections + STARTING_MARGIN;
        self.starting.close_overdue();
        if live.load(SeqCst) >= bound && !self.starting.close_one() {
            tracing::warn!(%peer, "too many connections and none starting up to make room; closing this one");
            return;
        }
        // The socket is registered with the listener's runtime; the pool
        // registers it again with its own.
        let std_tcp = match tcp.into_std() {
            Ok(t) => t,
            Err(e) => return tracing::warn!(%peer, error = %e, "cannot take over the socket"),
        };
        if let Some(m) = &self.shared.metrics {
            m.accepted.fetch_add(1, Ordering::Relaxed);
        }
        let shared = self.shared.clone();
        let tls = self.tls.clone();
        let (starting, closed) = Starting::enter(&self.starting, peer.ip());
        live.fetch_add(1, SeqCst);
        let live = Live(live.clone());
        self.pool.spawn(async move {
            // Counted down when the task ends, panicking included.
            let _live = live;
            match tokio::net::TcpStream::from_std(std_tcp) {
                Ok(tcp) => {
                    if let Err(e) = serve(shared, tcp, tls, starting, closed).await {
                        tracing::debug!(%peer, error = %e, "connection ended with an error");
                    }
                }
                Err(e) => tracing::warn!(%peer, error = %e, "cannot register the socket"),
            }
        });
    }
}

/// How long a statement that gives up its worker (see `Pool`) waits for
/// another thread to take the worker over before it keeps the worker and
/// tries again later.
const DETACH_PATIENCE: Duration = Duration::from_millis(20);

/// The worker pool every session runs on: a multi-threaded tokio runtime
/// with `workers` threads (one per core by default), each with a stack of
/// [`SESSION_STACK`]. Each worker hands the engine's blocking waits to
/// `block_in_place`, which moves the worker's other sessions to another
/// thread for as long as the wait lasts, and a statement that has run for
/// a while (see `centum_engine::blocking`) hands them over for good: long
/// statements never starve short ones.
struct Pool(Option<tokio::runtime::Runtime>);

impl Pool {
    fn start(workers: usize) -> Result<Pool, String> {
        fn hand_off(wait: &mut dyn FnMut()) {
            tokio::task::block_in_place(wait)
        }
        // The worker's core goes to a thread of the blocking pool, and the
        // statement goes on here without it. A marker task queued on the
        // worker first (it lands in the slot the worker runs next, which
        // no other worker steals from) tells when that thread has picked
        // the core up. Should the pick-up take longer than
        // DETACH_PATIENCE (the machine is busy), the worker keeps its core
        // and the statement its worker, and tries again later.
        fn detach() -> bool {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else { return false };
            let taken = Arc::new(AtomicBool::new(false));
            let (marker, waiter) = (taken.clone(), std::thread::current());
            runtime.spawn(async move {
                marker.store(true, Ordering::Release);
                waiter.unpark();
            });
            tokio::task::block_in_place(|| {
                let deadline = Instant::now() + DETACH_PATIENCE;
                while !taken.load(Ordering::Acquire) {
                    let Some(left) = deadline.checked_duration_since(Instant::now()) else { break };
                    std::thread::park_timeout(left);
                }
            });
            taken.load(Ordering::Acquire)
        }
        // A long statement's big buffers were freed into this thread's
        // allocator heap, which keeps them until the thread allocates
        // again; the thread may now sit idle in the blocking pool.
        fn after() {
            // SAFETY: mi_collect only walks this thread's own heap.
            unsafe { libmimalloc_sys::mi_collect(true) }
        }
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .thread_name("centum-worker")
            .thread_stack_size(SESSION_STACK)
            .on_thread_start(|| {
                centum_engine::blocking::set_hook(hand_off);
                centum_engine::blocking::set_detach(centum_engine::blocking::Detach { detach, after });
            })
            .enable_all()
            .build()
            .map(|rt| Pool(Some(rt)))
            .map_err(|e| format!("cannot start the worker pool: {e}"))
    }

    fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        if let Some(rt) = &self.0 {
            rt.spawn(task);
        }
    }
}

impl Drop for Pool {
    /// The pool may go inside the listener's runtime, where waiting for
    /// its threads is not allowed: they are left to end by themselves
    /// (sessions still running are dropped, rolling back).
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// One client from accept to close. `starting` is its place among the
/// start-ups; `closed` resolves when the listener takes that place away.
async fn serve(
    shared: Arc<Shared>,
    tcp: tokio::net::TcpStream,
    tls: Option<tokio_rustls::TlsAcceptor>,
    starting: StartingPlace,
    closed: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let started = tokio::select! {
        started = tokio::time::timeout(STARTUP_TIMEOUT, start(&shared, tcp, tls)) => started,
        _ = closed => {
            tracing::debug!("start-up closed to make room, or past its time");
            return Ok(());
        }
    };
    drop(starting);
    let Ok(Some((socket, session, pid, _slot, terminated))) = started.unwrap_or(Ok(None)).map_err(|e| {
        tracing::debug!(error = %e, "start-up failed");
        e
    }) else {
        return Ok(());
    };
    let result = Connection::new(shared.clone(), socket, session, terminated).run().await;
    shared.lock_cancels().remove(&pid);
    result
}

/// One connection's task, counted while it lives.
struct Live(Arc<AtomicUsize>);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// Decrements the connection count when the connection ends, or when its
/// start-up ends without a session (refused, timed out or closed).
struct Slot<'a>(&'a AtomicUsize);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// The connections starting up, oldest first: what the listener may close
/// to make room (see the module header).
#[derive(Default)]
struct Starting(Mutex<StartingList>);

#[derive(Default)]
struct StartingList {
    next: u64,
    open: BTreeMap<u64, StartingEntry>,
}

struct StartingEntry {
    ip: IpAddr,
    since: Instant,
    /// When the listener closes it: 30 s after `since`, or 5 s once the
    /// start-ups were many while it was open.
    deadline: Instant,
    /// Dropping it closes the start-up: its task's receiver resolves.
    _close: oneshot::Sender<()>,
}

/// A connection's place among the start-ups, given up when dropped.
struct StartingPlace {
    list: Arc<Starting>,
    id: u64,
}

impl Drop for StartingPlace {
    fn drop(&mut self) {
        self.list.lock().open.remove(&self.id);
    }
}

impl Starting {
    fn lock(&self) -> std::sync::MutexGuard<'_, StartingList> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a start-up from `ip`: its place, and what resolves when the
    /// listener closes it.
    fn enter(list: &Arc<Starting>, ip: IpAddr) -> (StartingPlace, oneshot::Receiver<()>) {
        let (close, closed) = oneshot::channel();
        let mut l = list.lock();
        let id = l.next;
        l.next += 1;
        let since = Instant::now();
        let limit = if l.open.len() >= PRESSURE { PRESSED_STARTUP_TIMEOUT } else { STARTUP_TIMEOUT };
        l.open.insert(id, StartingEntry { ip, since, deadline: since + limit, _close: close });
        (StartingPlace { list: list.clone(), id }, closed)
    }

    /// Closes the oldest start-up of the address holding the most; false
    /// when none is starting.
    fn close_one(&self) -> bool {
        let mut l = self.lock();
        let mut per_ip: HashMap<IpAddr, usize> = HashMap::new();
        for e in l.open.values() {
            *per_ip.entry(e.ip).or_default() += 1;
        }
        let Some(busiest) = per_ip.into_iter().max_by_key(|&(_, n)| n).map(|(ip, _)| ip) else {
            return false;
        };
        let oldest = l.open.iter().find(|(_, e)| e.ip == busiest).map(|(&id, _)| id);
        oldest.is_some_and(|id| l.open.remove(&id).is_some())
    }

    /// Closes the start-ups past their deadline, after cutting every
    /// deadline to the short limit when the start-ups are many.
    fn close_overdue(&self) {
        let mut l = self.lock();
        if l.open.len() > PRESSURE {
            for e in l.open.values_mut() {
                e.deadline = e.deadline.min(e.since + PRESSED_STARTUP_TIMEOUT);
            }
        }
        let before = l.open.len();
        let now = Instant::now();
        l.open.retain(|_, e| e.deadline > now);
        let closed = before - l.open.len();
        if closed > 0 {
            tracing::warn!(
                closed,
                starting = l.open.len(),
                "closed connections that did not finish start-up in time"
            );
        }
    }

    /// Closes every start-up (at shutdown).
    fn close_all(&self) {
        self.lock().open.clear();
    }
}

fn fatal(code: &str, message: impl Into<String>) -> PgWireBackendMessage {
    PgWireBackendMessage::ErrorResponse(ErrorInfo::new("FATAL".into(), code.into(), message.into()).into())
}

/// A connection past start-up: its socket, session and backend pid, and
/// its place in the connection count.
/// A session ready for queries: its socket, session, process id, place
/// under the connection limit, and what wakes it when it is terminated.
type Started<'a> = (StartupSocket, centum_sql::Session, i32, Slot<'a>, Arc<tokio::sync::Notify>);

/// Start-up: TLS, cancel requests, the limit, authentication. `None` when
/// the connection ended here.
async fn start(
    shared: &Arc<Shared>,
    tcp: tokio::net::TcpStream,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> std::io::Result<Option<Started<'_>>> {
    let Some(mut socket) = negotiate_tls::<()>(tcp, tls).await? else { return Ok(None) };
    let first = match socket.next().await {
        Some(Ok(m)) => m,
        Some(Err(e)) => {
            let _ = socket.send(fatal("08P01", format!("invalid start-up packet: {e}"))).await;
            return Ok(None);
        }
        None => return Ok(None),
    };
    if let PgWireFrontendMessage::CancelRequest(c) = &first {
        if let Some((secret, flag)) = shared.lock_cancels().get(&c.pid) {
            if secret.eq_value(&c.secret_key) {
                flag.store(true, SeqCst);
            }
        }
        return Ok(None);
    }
    if shared.connections.fetch_add(1, SeqCst) >= shared.config.max_connections {
        shared.connections.fetch_sub(1, SeqCst);
        let _ = socket.send(fatal("53300", "sorry, too many clients already")).await;
        return Ok(None);
    }
    // From here the count includes this connection, until `slot` is
    // dropped: by the session at its end, or here, however start-up ends
    // (a start-up closed or timed out mid-way included).
    let slot = Slot(&shared.connections);
    // The session and its start-up settings come first, so a bad setting
    // is refused before authentication, not after ReadyForQuery.
    let mut session = shared.db.session();
    session.set_asynchronous(true);
    let mut application_name = String::new();
    if let PgWireFrontendMessage::Startup(startup) = &first {
        let params: HashMap<String, String> = startup.parameters.clone().into_iter().collect();
        application_name = params.get("application_name").cloned().unwrap_or_default();
        if let Err(e) = apply_settings(shared, &mut session, &params) {
            let _ = socket.send(fatal(e.sqlstate(), e.to_string())).await;
            return Ok(None);
        }
    }
    let provider = Arc::new(Parameters { standby: shared.standby() == Some(true) });
    let outcome = match shared.config.auth {
        AuthMethod::Trust => auth::trust(shared, &mut socket, first, &provider).await,
        AuthMethod::ScramSha256 => auth::scram(shared, &mut socket, first, provider).await,
    };
    if let Err(e) = outcome {
        let info: ErrorInfo = e.into();
        let _ = socket.send(PgWireBackendMessage::ErrorResponse(info.into())).await;
        return Ok(None);
    }
    if !matches!(socket.state(), PgWireConnectionState::ReadyForQuery) {
        return Ok(None);
    }
    let meta = socket.metadata();
    let user = meta.get("user").cloned().unwrap_or_default();
    let database = meta.get("database").cloned().unwrap_or_else(|| user.clone());
    session.set_identity(&user, &database);
    let (pid, secret) = socket.pid_and_secret_key();
    shared.lock_cancels().insert(pid, (secret, session.cancel_handle()));
    let peer = socket.socket_addr();
    let terminated = Arc::new(tokio::sync::Notify::new());
    let wake = terminated.clone();
    session.register_backend(centum_sql::activity::BackendInfo {
        pid,
        client: Some((peer.ip().to_string(), peer.port())),
        application_name,
        wake: Box::new(move || wake.notify_one()),
    });
    tracing::debug!(%user, %database, pid, peer = %socket.socket_addr(), "session started");
    Ok(Some((socket, session, pid, slot, terminated)))
}

/// Applies the server's session defaults and the start-up packet's
/// settings to a new session.
fn apply_settings(
    shared: &Shared,
    session: &mut centum_sql::Session,
    params: &HashMap<String, String>,
) -> centum_sql::Result<()> {
    if let Some(t) = shared.config.statement_timeout {
        session.set_var("statement_timeout", &[format!("{}ms", t.as_millis())])?;
    }
    if let Some(t) = shared.config.idle_in_transaction_timeout {
        session.set_var("idle_in_transaction_session_timeout", &[format!("{}ms", t.as_millis())])?;
    }
    if let Some(t) = shared.config.log_min_duration_statement {
        session.set_var("log_min_duration_statement", &[format!("{}ms", t.as_millis())])?;
    }
    if let Some(app) = params.get("application_name") {
        session.set_var("application_name", std::slice::from_ref(app))?;
    }
    // `options=-c name=value` (PGOPTIONS) and any other parameter a client
    // sends (DateStyle, search_path, extra_float_digits, ...).
    for (name, value) in startup_settings(params) {
        session.set_var(&name, &[value])?;
    }
    session.keep_settings_as_defaults();
    Ok(())
}

/// Session settings a start-up packet carries: the `-c name=value` (or
/// `--name=value`) items of `options`, and every parameter that is not
/// about the connection itself.
/// The words of a start-up `options` string: split at whitespace, where a
/// backslash makes the next character part of the word (`-c
/// default_transaction_isolation=repeatable\ read`), as PostgreSQL reads it.
fn option_words(opts: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut chars = opts.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => cur.extend(chars.next()),
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

fn startup_settings(meta: &HashMap<String, String>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, v) in meta {
        match k.as_str() {
            "user" | "database" | "application_name" | "client_encoding" | "replication" | "options" => {}
            _ => out.push((k.to_lowercase(), v.clone())),
        }
    }
    if let Some(opts) = meta.get("options") {
        let words = option_words(opts);
        let mut words = words.iter().map(String::as_str);
        while let Some(w) = words.next() {
            let item = match w {
                "-c" => words.next(),
                w => w.strip_prefix("--").or_else(|| w.strip_prefix("-c")),
            };
            if let Some((name, value)) = item.and_then(|i| i.split_once('=')) {
                out.push((name.replace('-', "_").to_lowercase(), value.to_string()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::option_words;

    #[test]
    fn option_words_keep_escaped_spaces() {
        assert_eq!(
            option_words(r"-c default_transaction_isolation=repeatable\ read  -c x=\\y"),
            vec!["-c", "default_transaction_isolation=repeatable read", "-c", r"x=\y"]
        );
    }
}
