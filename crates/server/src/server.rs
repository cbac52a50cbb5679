//! The listener: accepting connections, start-up and authentication,
//! cancel requests, the connection limit and shutdown.
//!
//! ```text
//!  accept ─▶ SSLRequest? (TLS with rustls when configured) ─▶ first message
//!     CancelRequest ─▶ raise that session's cancel flag, close
//!     over max_connections ─▶ FATAL 53300, close
//!     StartupMessage ─▶ role must exist and may log in
//!        trust:          AuthenticationOk
//!        scram-sha-256:  SASL exchange against the role's verifier
//!     ─▶ ParameterStatus..., BackendKeyData, ReadyForQuery ─▶ connection.rs
//! ```
//!
//! Start-up and the SCRAM exchange are pgwire's; the query protocol after
//! it is Centum's own loop (`connection.rs`). One data directory holds one
//! database: any database name a client asks for is accepted and names
//! that database (`current_database()` answers with the name asked).
//!
//! Shutdown (SIGINT or SIGTERM): the listener stops, every connection
//! finishes the statement it is running, then is told FATAL 57P01 at its
//! next read, and its session's open transaction is rolled back. Once the
//! connections are gone (or after a grace period) the database is closed:
//! the log is flushed, so every acknowledged commit is on disk.

use crate::config::{AuthMethod, Config};
use crate::connection::Connection;
use async_trait::async_trait;
use futures::{SinkExt, StreamExt};
use pgwire::api::auth::sasl::scram::{ScramAuth, ScramSecret};
use pgwire::api::auth::sasl::SASLAuthStartupHandler;
use pgwire::api::auth::{self, AuthSource, LoginInfo, Password, ServerParameterProvider, StartupHandler};
use pgwire::api::{ClientInfo, PgWireConnectionState};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::startup::SecretKey;
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use pgwire::tokio::server::{negotiate_tls, MaybeTls, PgWireMessageServerCodec};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::codec::Framed;

/// The socket during start-up: pgwire's codec, over TCP or TLS.
pub(crate) type StartupSocket = Framed<MaybeTls, PgWireMessageServerCodec<()>>;

/// How long a client may take to start up and authenticate.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Connections that may be starting up beyond `max_connections`.
const STARTING_MARGIN: usize = 64;
/// How long shutdown waits for connections to finish their statements.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// What every connection shares.
pub(crate) struct Shared {
    pub db: centum_sql::Database,
    pub config: Config,
    /// Connections past start-up.
    pub connections: AtomicUsize,
    /// Cancel flags by backend pid, with the secret a cancel must present.
    pub cancels: Mutex<HashMap<i32, (SecretKey, Arc<AtomicBool>)>>,
    next_pid: AtomicI32,
    /// Becomes true when the server is shutting down.
    pub shutdown: watch::Receiver<bool>,
}

impl Shared {
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
}

/// Opens the data directory (creating the superuser in a new one) and
/// binds the listen address.
pub async fn bind(config: Config) -> Result<Server, String> {
    std::fs::create_dir_all(&config.data_dir)
        .map_err(|e| format!("cannot create data directory {}: {e}", config.data_dir.display()))?;
    let mut opts = centum_engine::Options::durable(&config.data_dir);
    opts.storage.log.delayed = config.delayed_durability;
    let engine = centum_engine::Database::open(opts)
        .map_err(|e| format!("cannot open data directory {}: {e}", config.data_dir.display()))?;
    let db = centum_sql::Database::open(engine).map_err(|e| format!("cannot open the SQL catalog: {e}"))?;
    if db.catalog().roles().is_empty() {
        let verifier = match &config.superuser_password {
            Some(p) => Some(centum_sql::auth::ScramVerifier::new(p).map_err(|e| e.to_string())?.to_text()),
            None => None,
        };
        db.catalog()
            .create_role(centum_sql::catalog::Role {
                name: config.superuser.clone(),
                superuser: true,
                login: true,
                verifier,
            })
            .map_err(|e| format!("cannot create the superuser: {e}"))?;
        tracing::info!(role = %config.superuser, "new data directory: created the superuser role");
    }
    if config.auth == AuthMethod::ScramSha256 && db.catalog().roles().iter().all(|r| r.verifier.is_none()) {
        tracing::warn!("password authentication is on but no role has a password: nobody can log in (set CENTUM_SUPERUSER_PASSWORD on a new data directory)");
    }
    let tls = match &config.tls {
        None => None,
        Some((cert, key)) => Some(tls_acceptor(cert, key)?),
    };
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let (stop, shutdown) = watch::channel(false);
    let shared = Arc::new(Shared {
        db,
        config,
        connections: AtomicUsize::new(0),
        cancels: Mutex::new(HashMap::new()),
        next_pid: AtomicI32::new(std::process::id() as i32 & 0x3fff_ffff),
        shutdown,
    });
    Ok(Server { shared, listener, tls, stop })
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

    /// Serves until `stop` resolves, then shuts down cleanly.
    pub async fn run(self, stop: impl std::future::Future<Output = ()>) {
        tokio::pin!(stop);
        let live = Arc::new(AtomicUsize::new(0));
        tracing::info!(listen = %self.local_addr(), auth = ?self.shared.config.auth, tls = self.tls.is_some(), "ready to accept connections");
        loop {
            tokio::select! {
                _ = &mut stop => break,
                accepted = self.listener.accept() => match accepted {
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
        drop(self.shared);
        tracing::info!("server stopped");
    }

    /// Runs a connection on a thread of its own. A session's statements
    /// block their thread (a group commit's fsync, a row another
    /// transaction holds), as a PostgreSQL backend process does; on its own
    /// thread that stalls nobody else, and the kernel wakes exactly the
    /// thread whose client wrote. The thread drives the socket with a
    /// single-threaded tokio runtime.
    fn spawn(&self, tcp: tokio::net::TcpStream, peer: std::net::SocketAddr, live: &Arc<AtomicUsize>) {
        // Threads are bounded too: sessions (at most max_connections) plus
        // a margin of connections still starting up. Past that a new
        // connection is closed at once, so a flood of sockets that never
        // send a start-up packet cannot make the server spawn without end.
        if live.load(SeqCst) >= self.shared.config.max_connections + STARTING_MARGIN {
            tracing::warn!(%peer, "too many connections starting up; closing this one");
            return;
        }
        let std_tcp = match tcp.into_std() {
            Ok(t) => t,
            Err(e) => return tracing::warn!(%peer, error = %e, "cannot take over the socket"),
        };
        let shared = self.shared.clone();
        let tls = self.tls.clone();
        live.fetch_add(1, SeqCst);
        let spawned = std::thread::Builder::new().name("centum-session".into()).spawn({
            let live = Live(live.clone());
            move || {
                // Counted down when the thread ends, panicking included.
                let _live = live;
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
                match rt {
                    Ok(rt) => rt.block_on(async move {
                        match tokio::net::TcpStream::from_std(std_tcp) {
                            Ok(tcp) => {
                                if let Err(e) = serve(shared, tcp, tls).await {
                                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                                }
                            }
                            Err(e) => tracing::warn!(%peer, error = %e, "cannot register the socket"),
                        }
                    }),
                    Err(e) => tracing::warn!(%peer, error = %e, "cannot start a session runtime"),
                }
            }
        });
        if let Err(e) = spawned {
            tracing::warn!(%peer, error = %e, "cannot start a session thread");
        }
    }
}

/// One client from accept to close.
async fn serve(
    shared: Arc<Shared>,
    tcp: tokio::net::TcpStream,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> std::io::Result<()> {
    let started = tokio::time::timeout(STARTUP_TIMEOUT, start(&shared, tcp, tls)).await;
    let Ok(Some((socket, session, pid))) = started.unwrap_or(Ok(None)).map_err(|e| {
        tracing::debug!(error = %e, "start-up failed");
        e
    }) else {
        return Ok(());
    };
    let _slot = Slot(&shared.connections);
    let result = Connection::new(shared.clone(), socket, session).run().await;
    shared.lock_cancels().remove(&pid);
    result
}

/// One session thread, counted while it lives.
struct Live(Arc<AtomicUsize>);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// Decrements the connection count when the connection ends.
struct Slot<'a>(&'a AtomicUsize);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

fn fatal(code: &str, message: impl Into<String>) -> PgWireBackendMessage {
    PgWireBackendMessage::ErrorResponse(ErrorInfo::new("FATAL".into(), code.into(), message.into()).into())
}

/// Start-up: TLS, cancel requests, the limit, authentication. `None` when
/// the connection ended here.
async fn start(
    shared: &Arc<Shared>,
    tcp: tokio::net::TcpStream,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> std::io::Result<Option<(StartupSocket, centum_sql::Session, i32)>> {
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
    // From here the count includes this connection; `serve` takes it over.
    let release = || {
        shared.connections.fetch_sub(1, SeqCst);
    };
    // The session and its start-up settings come first, so a bad setting
    // is refused before authentication, not after ReadyForQuery.
    let mut session = shared.db.session();
    if let PgWireFrontendMessage::Startup(startup) = &first {
        let params: HashMap<String, String> = startup.parameters.clone().into_iter().collect();
        if let Err(e) = apply_settings(shared, &mut session, &params) {
            let _ = socket.send(fatal(e.sqlstate(), e.to_string())).await;
            release();
            return Ok(None);
        }
    }
    let provider = Arc::new(Parameters);
    let outcome = match shared.config.auth {
        AuthMethod::Trust => trust(shared, &mut socket, first, &provider).await,
        AuthMethod::ScramSha256 => scram(shared, &mut socket, first, provider).await,
    };
    if let Err(e) = outcome {
        let info: ErrorInfo = e.into();
        let _ = socket.send(PgWireBackendMessage::ErrorResponse(info.into())).await;
        release();
        return Ok(None);
    }
    if !matches!(socket.state(), PgWireConnectionState::ReadyForQuery) {
        release();
        return Ok(None);
    }
    let meta = socket.metadata();
    let user = meta.get("user").cloned().unwrap_or_default();
    let database = meta.get("database").cloned().unwrap_or_else(|| user.clone());
    session.set_identity(&user, &database);
    let (pid, secret) = socket.pid_and_secret_key();
    shared.lock_cancels().insert(pid, (secret, session.cancel_handle()));
    tracing::debug!(%user, %database, pid, peer = %socket.socket_addr(), "session started");
    Ok(Some((socket, session, pid)))
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

/// The role a start-up message names, if it exists and may log in.
fn login_role(shared: &Shared, user: Option<&str>) -> PgWireResult<centum_sql::catalog::Role> {
    let user = user.ok_or(PgWireError::UserNameRequired)?;
    match shared.db.catalog().role(user) {
        Some(r) if r.login => Ok(r),
        Some(_) => Err(PgWireError::UserError(Box::new(ErrorInfo::new(
            "FATAL".into(),
            "28000".into(),
            format!("role \"{user}\" is not permitted to log in"),
        )))),
        None => Err(PgWireError::UserError(Box::new(ErrorInfo::new(
            "FATAL".into(),
            "28000".into(),
            format!("role \"{user}\" does not exist"),
        )))),
    }
}

async fn trust(
    shared: &Arc<Shared>,
    socket: &mut StartupSocket,
    first: PgWireFrontendMessage,
    provider: &Arc<Parameters>,
) -> PgWireResult<()> {
    let PgWireFrontendMessage::Startup(startup) = first else {
        return Err(PgWireError::InvalidStartupMessage);
    };
    auth::protocol_negotiation(socket, &startup).await?;
    auth::save_startup_parameters_to_metadata(socket, &startup);
    login_role(shared, socket.metadata().get("user").map(String::as_str))?;
    let pid = shared.next_pid.fetch_add(1, SeqCst) & 0x7fff_ffff;
    socket.set_pid_and_secret_key(pid, SecretKey::I32(random_i32()));
    auth::finish_authentication(socket, provider.as_ref()).await
}

async fn scram(
    shared: &Arc<Shared>,
    socket: &mut StartupSocket,
    first: PgWireFrontendMessage,
    provider: Arc<Parameters>,
) -> PgWireResult<()> {
    let source = Arc::new(Verifiers { shared: shared.clone() });
    let handler = SASLAuthStartupHandler::new(provider).with_scram(ScramAuth::new(source));
    handler.on_startup(socket, first).await?;
    while matches!(socket.state(), PgWireConnectionState::AuthenticationInProgress) {
        match socket.next().await {
            Some(Ok(m)) => handler.on_startup(socket, m).await?,
            Some(Err(e)) => return Err(e),
            None => return Ok(()),
        }
    }
    Ok(())
}

fn random_i32() -> i32 {
    use ring::rand::SecureRandom;
    let mut b = [0u8; 4];
    let _ = ring::rand::SystemRandom::new().fill(&mut b);
    i32::from_ne_bytes(b)
}

/// Password verifiers from the catalog, for SCRAM.
struct Verifiers {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Verifiers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Verifiers")
    }
}

#[async_trait]
impl AuthSource for Verifiers {
    async fn get_password(&self, login: &LoginInfo) -> PgWireResult<Password> {
        Err(PgWireError::InvalidPassword(login.user().unwrap_or_default().to_owned()))
    }

    async fn get_scram_secret(&self, login: &LoginInfo) -> PgWireResult<(ScramSecret, Option<()>)> {
        let role = login_role(&self.shared, login.user())?;
        let wrong = || PgWireError::InvalidPassword(login.user().unwrap_or_default().to_owned());
        let v =
            role.verifier.as_deref().and_then(centum_sql::auth::ScramVerifier::parse).ok_or_else(wrong)?;
        Ok((
            ScramSecret::Verifier {
                salt: v.salt,
                iterations: v.iterations as usize,
                stored_key: v.stored_key,
                server_key: v.server_key,
            },
            None,
        ))
    }
}

/// The ParameterStatus messages of a new session.
struct Parameters;

impl ServerParameterProvider for Parameters {
    fn server_parameters<C: ClientInfo>(&self, client: &C) -> Option<HashMap<String, String>> {
        let meta = client.metadata();
        let user = meta.get("user").cloned().unwrap_or_default();
        let mut p = HashMap::new();
        for (k, v) in [
            ("server_version", "15.0"),
            ("server_encoding", "UTF8"),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO, MDY"),
            ("TimeZone", "UTC"),
            ("IntervalStyle", "postgres"),
            ("integer_datetimes", "on"),
            ("standard_conforming_strings", "on"),
            ("is_superuser", "on"),
            ("default_transaction_read_only", "off"),
            ("in_hot_standby", "off"),
        ] {
            p.insert(k.to_string(), v.to_string());
        }
        p.insert("application_name".into(), meta.get("application_name").cloned().unwrap_or_default());
        p.insert("session_authorization".into(), user);
        Some(p)
    }
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
