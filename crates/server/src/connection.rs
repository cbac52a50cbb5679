//! One client connection after start-up: the simple and extended query
//! protocols, COPY, and the rules that keep a misbehaving client from
//! harming anyone else.
//!
//! ```text
//!  Query ─▶ [COPY: CopyIn/OutResponse, CopyData..., CopyDone] or
//!           per statement: RowDescription, DataRow*, CommandComplete
//!        ─▶ ReadyForQuery(status)
//!  Parse ─▶ ParseComplete          (plans the statement once)
//!  Bind  ─▶ BindComplete           (parameters read, text or binary)
//!  Describe S|P ─▶ [ParameterDescription] RowDescription | NoData
//!  Execute ─▶ DataRow* then CommandComplete | PortalSuspended (row limit)
//!  Sync  ─▶ ReadyForQuery(status)  (and the end of error recovery)
//! ```
//!
//! After an error in an extended-protocol message every message up to Sync
//! is discarded, as PostgreSQL does. The statements of a pipeline (several
//! Executes before one Sync) run in one implicit transaction that the Sync
//! commits, or rolls back after an error, as PostgreSQL's implicit
//! transaction block; an Execute followed at once by its Sync is simply its
//! own transaction. ReadyForQuery always carries the
//! session's real transaction status (idle, in a block, failed block).
//! Replies are buffered and written when the client will wait for them
//! (ReadyForQuery, Flush, a full buffer), so a pipelined Bind/Execute/Sync
//! costs one write.
//!
//! Each connection is a task of the server's worker pool (see `server.rs`).
//! A statement runs to completion on the worker that read its message; a
//! commit awaits its group commit's fsync, and a statement that meets a
//! row another transaction holds awaits that transaction and runs again,
//! without holding the worker (`settle`, `row_wait`). A message longer than `max_message_bytes`,
//! or one that cannot be decoded, ends the connection with FATAL (the
//! stream can no longer be trusted); nothing is allocated for it first.

mod replication;

use crate::messages::{self, BindFrame, DescribeFrame, ExecuteFrame, Formats, Malformed, Message};
use crate::server::{Shared, StartupSocket};
use crate::wire;
use bytes::{BufMut, BytesMut};
use centum_sql::copy::CopyStart;
use centum_sql::{OutputColumn, Prepared, QueryResult, Session, TxnStatus};
use centum_types::{DataType, Value};
use futures::{SinkExt, StreamExt};
use pgwire::error::{ErrorInfo, PgWireError};
use pgwire::messages::copy::{CopyData, CopyDone, CopyInResponse, CopyOutResponse};
use pgwire::messages::extendedquery::{Close, Parse};
use pgwire::messages::response::NotificationResponse;
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use pgwire::tokio::server::{MaybeTls, PgWireMessageServerCodec};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::codec::{Decoder, Encoder, Framed, FramedParts};

/// pgwire's codec with a bound on the length a client may announce.
pub(crate) struct Codec {
    inner: PgWireMessageServerCodec<()>,
    max: usize,
    /// The last message decoded carried text that is not UTF-8 (pgwire
    /// decodes it lossily); the connection refuses it with 22021.
    invalid_utf8: bool,
}

/// Whether the strings of a Query or Parse frame (type, length, body) are
/// UTF-8: a Query's text, a Parse's name and text.
fn strings_are_utf8(frame: &[u8]) -> bool {
    let body = &frame[5..];
    let strings = match frame[0] {
        b'Q' => 1,
        b'P' => 2,
        _ => return true,
    };
    body.split(|&b| b == 0).take(strings).all(|s| std::str::from_utf8(s).is_ok())
}

/// A protocol violation found while decoding (FATAL 08P01).
fn violation(message: &str) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new("FATAL".into(), "08P01".into(), message.into())))
}

impl Decoder for Codec {
    type Item = Message;
    type Error = PgWireError;

    /// Frames first, then decodes: a message is taken off the stream by
    /// its own length word, and pgwire decodes that frame alone. A body
    /// whose fields run past its length, or stop short of it, is a
    /// protocol violation, never the start of another message; a decoder
    /// that panics on a malformed body (pgwire slices by counts the client
    /// wrote) ends only this connection.
    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        if src.len() < 5 {
            return Ok(None);
        }
        let len = announced_len(src);
        if len < 4 {
            return Err(violation(&format!("invalid message length {len}")));
        }
        if len as usize > self.max {
            return Err(PgWireError::MessageTooLarge(self.max, len as usize));
        }
        let total = 1 + len as usize;
        if src.len() < total {
            src.reserve(total - src.len());
            return Ok(None);
        }
        let mut frame = src.split_to(total);
        if let Some(read) = messages::read(&mut frame) {
            return match read {
                Ok(m) => Ok(Some(m)),
                Err(Malformed::TooLong) => Err(violation("message body is longer than its fields")),
                Err(Malformed::TooShort) => Err(violation("message body is shorter than its fields")),
            };
        }
        self.invalid_utf8 = !strings_are_utf8(&frame);
        let inner = &mut self.inner;
        let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.decode(&mut frame)));
        match decoded {
            Ok(Ok(Some(m))) if frame.is_empty() => Ok(Some(Message::Other(Box::new(m)))),
            Ok(Ok(Some(_))) => Err(violation("message body is longer than its fields")),
            Ok(Ok(None)) => Err(violation("message body is shorter than its fields")),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(violation("malformed message body")),
        }
    }
}

impl Encoder<PgWireBackendMessage> for Codec {
    type Error = std::io::Error;

    fn encode(&mut self, item: PgWireBackendMessage, dst: &mut BytesMut) -> Result<(), Self::Error> {
        self.inner.encode(item, dst)
    }
}

type Socket = Framed<MaybeTls, Codec>;

/// Prepared statements or portals by name. Every Bind and Execute looks one
/// up, so the names are hashed with a fast hasher: they are the client's
/// own, and only its own session can be slowed by choosing them badly.
type Names<T> = std::collections::HashMap<String, T, foldhash::fast::RandomState>;

/// A reply buffer past this size is written out before more is added to
/// it, so a large result streams instead of piling up in memory.
const REPLY_FLUSH_BYTES: usize = 64 * 1024;

/// The length word of the message `buf` starts with (at least 5 bytes:
/// type, then the length of everything but the type).
fn announced_len(buf: &[u8]) -> i32 {
    i32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]])
}

/// Whether `buf` starts with a whole message (type, length, body).
fn whole_message(buf: &[u8]) -> bool {
    buf.len() >= 5 && {
        let len = announced_len(buf);
        len >= 4 && buf.len() > len as usize
    }
}

/// Writes into the 4-byte placeholder at `at` the length of `buf` from
/// `from` on: a message's length counts its length word, a column's does
/// not.
fn fill_len(buf: &mut BytesMut, at: usize, from: usize) {
    let len = (buf.len() - from) as i32;
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

/// How often a statement waiting for a row looks at its deadlines and for
/// deadlocks, besides when the holder ends.
const ROW_WAIT_TICK: std::time::Duration = std::time::Duration::from_millis(5);

/// A parsed statement (Parse).
struct Statement {
    prepared: Prepared,
    /// A COPY statement's text: run by Execute as the simple protocol
    /// runs it (its rows travel in CopyData, not in a portal).
    copy: Option<String>,
    /// The query text was empty: executing it answers EmptyQueryResponse.
    empty: bool,
    /// Parameter OIDs the client declared (0: inferred).
    declared: Vec<u32>,
    /// The RowDescription last sent for a portal of this statement.
    description: Option<Description>,
}

/// An encoded RowDescription, and what it describes: a statement's result
/// columns (held, so that a replanned statement's new columns can never
/// take their place in memory) with result formats.
struct Description {
    columns: Arc<[OutputColumn]>,
    formats: Formats,
    bytes: Box<[u8]>,
}

/// A bound portal (Bind).
struct Portal {
    statement: Arc<Mutex<Statement>>,
    params: Vec<Value>,
    /// Result format per column (0 text, 1 binary; see `format_of`).
    formats: Formats,
    /// Rows left to send, once executed.
    pending: Option<Pending>,
}

struct Pending {
    rows: std::vec::IntoIter<Vec<Value>>,
    columns: Arc<[OutputColumn]>,
    tag: String,
    /// CommandComplete went out: a further Execute reports no rows.
    finished: bool,
}

/// An error to report: SQLSTATE, message, and what else it says.
struct Failure {
    code: String,
    message: String,
    /// Boxed: a step's result stays small on the path that succeeds.
    more: Option<Box<More>>,
}

/// DETAIL, HINT and CONTEXT (where inside routines it happened), and the
/// schema, table, column and constraint a violation names.
struct More {
    detail: Option<String>,
    hint: Option<String>,
    context: Option<String>,
    fields: centum_sql::ErrorFields,
}

impl From<centum_sql::Error> for Failure {
    fn from(e: centum_sql::Error) -> Failure {
        let more = More {
            detail: e.detail().map(String::from),
            hint: e.hint().map(String::from),
            context: e.context().map(String::from),
            fields: e.fields(),
        };
        Failure { code: e.sqlstate().to_string(), message: e.to_string(), more: Some(Box::new(more)) }
    }
}

fn failure(code: &str, message: impl Into<String>) -> Failure {
    Failure { code: code.into(), message: message.into(), more: None }
}

type Step = Result<(), Failure>;

/// One session's protocol state.
pub(crate) struct Connection {
    /// Declared first, so dropped before the socket (see `hangup`).
    watched: crate::hangup::Watched,
    shared: Arc<Shared>,
    socket: Socket,
    session: Session,
    statements: Names<Arc<Mutex<Statement>>>,
    portals: Portals,
    /// An extended-protocol message failed: discard until Sync.
    skip_to_sync: bool,
    /// When the simple-protocol query being served began (see `clock`):
    /// its duration is recorded just before ReadyForQuery goes out, so
    /// that a client that has its reply also finds it counted.
    query_began: Option<Instant>,
    /// How long that query took, when it is to go to the slow statement
    /// log (written after the reply).
    query_slow: Option<Duration>,
    /// Woken by `pg_terminate_backend`.
    terminated: Arc<tokio::sync::Notify>,
    /// Woken when a notification (LISTEN) reaches the session.
    notified: Arc<tokio::sync::Notify>,
    /// A replication connection (`replication=database`): replication
    /// commands are taken next to SQL.
    replication: bool,
    /// The client asked for physical replication, which is refused.
    physical: bool,
    /// The backend's process id, as clients see it.
    pid: u32,
    /// Temporary replication slots this session created.
    temporary_slots: Vec<String>,
    /// In a replicated group: whether the client was last told the
    /// server is a standby (`in_hot_standby`).
    reported_standby: Option<bool>,
}

fn lock(s: &Mutex<Statement>) -> std::sync::MutexGuard<'_, Statement> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

impl Connection {
    pub(crate) fn new(
        shared: Arc<Shared>,
        socket: StartupSocket,
        session: Session,
        terminated: Arc<tokio::sync::Notify>,
    ) -> Connection {
        let mut session = session;
        let replication = pgwire::api::ClientInfo::metadata(&socket).get("replication").cloned();
        let pid = pgwire::api::ClientInfo::pid_and_secret_key(&socket).0 as u32;
        let notified = Arc::new(tokio::sync::Notify::new());
        let wake = notified.clone();
        session.set_notification_waker(Box::new(move || wake.notify_one()));
        let parts = socket.into_parts();
        let max = shared.config.max_message_bytes;
        let mut new = FramedParts::new(parts.io, Codec { inner: parts.codec, max, invalid_utf8: false });
        new.read_buf = parts.read_buf;
        new.write_buf = parts.write_buf;
        let fd = {
            use std::os::fd::AsRawFd;
            match &new.io {
                MaybeTls::Plain(t) => t.as_raw_fd(),
                MaybeTls::Unix(u) => u.as_raw_fd(),
                MaybeTls::Tls(t) => t.get_ref().0.as_raw_fd(),
                // poll() skips a negative descriptor: never reported.
                _ => -1,
            }
        };
        // What the startup's ParameterStatus said, just before: a change
        // in between is reported at the first ReadyForQuery.
        let reported_standby = shared.standby();
        Connection {
            watched: shared.hangups.watch(fd, session.cancel_handle()),
            shared,
            socket: Framed::from_parts(new),
            session,
            statements: Names::default(),
            portals: Portals::default(),
            skip_to_sync: false,
            query_began: None,
            query_slow: None,
            terminated,
            notified,
            replication: replication.as_ref().is_some_and(|r| r.eq_ignore_ascii_case("database")),
            physical: replication
                .is_some_and(|r| matches!(r.to_ascii_lowercase().as_str(), "true" | "on" | "yes" | "1")),
            pid,
            temporary_slots: Vec::new(),
            reported_standby,
        }
    }

    /// Tells the client, before ReadyForQuery, that the server's role
    /// changed since it was last told: ParameterStatus of `in_hot_standby`
    /// and `default_transaction_read_only`, as PostgreSQL reports them
    /// after a promotion.
    async fn report_role(&mut self) -> std::io::Result<()> {
        let (Some(told), Some(now)) = (self.reported_standby, self.shared.standby()) else { return Ok(()) };
        if now == told {
            return Ok(());
        }
        self.reported_standby = Some(now);
        let on = if now { "on" } else { "off" };
        for name in ["in_hot_standby", "default_transaction_read_only"] {
            let m = pgwire::messages::startup::ParameterStatus::new(name.into(), on.into());
            self.send(PgWireBackendMessage::ParameterStatus(m)).await?;
        }
        Ok(())
    }

    /// ReadyForQuery's status byte: idle, in a block, in a failed block.
    fn status(&self) -> u8 {
        match self.session.status() {
            TxnStatus::Idle => b'I',
            TxnStatus::InBlock => b'T',
            TxnStatus::Failed => b'E',
        }
    }

    /// The reply buffer, for messages written straight into it.
    fn out(&mut self) -> &mut BytesMut {
        self.socket.write_buffer_mut()
    }

    async fn send(&mut self, m: PgWireBackendMessage) -> std::io::Result<()> {
        self.socket.feed(m).await
    }

    async fn error(&mut self, f: Failure) -> std::io::Result<()> {
        if let Some(m) = &self.shared.metrics {
            m.error(&f.code);
        }
        let mut info = ErrorInfo::new("ERROR".into(), f.code, f.message);
        if let Some(more) = f.more {
            let More { detail, hint, context, fields } = *more;
            info.detail = detail;
            info.hint = hint;
            info.where_context = context;
            info.schema = fields.schema;
            info.table = fields.table;
            info.column = fields.column;
            info.constraint = fields.constraint;
        }
        self.send(PgWireBackendMessage::ErrorResponse(info.into())).await
    }

    async fn fatal(&mut self, code: &str, message: &str) -> std::io::Result<()> {
        self.session.ending(centum_sql::activity::Ending::Fatal);
        let info = ErrorInfo::new("FATAL".into(), code.into(), message.into());
        self.send(PgWireBackendMessage::ErrorResponse(info.into())).await?;
        self.socket.flush().await
    }

    async fn ready(&mut self) -> std::io::Result<()> {
        // A pipeline's implicit transaction ends here (a Query after its
        // messages joins it and ends it too, as in PostgreSQL).
        let ended = match self.session.end_implicit() {
            Ok(()) => self.settle().await,
            Err(e) => Err(e.into()),
        };
        if let Err(f) = ended {
            self.error(f).await?;
        }
        let status = self.status();
        if status == b'I' {
            self.send_notifications().await?;
        }
        self.report_role().await?;
        let began = self.query_began.take();
        self.query_slow = self.timed(began);
        let buf = self.out();
        buf.put_u8(b'Z');
        buf.put_i32(5);
        buf.put_u8(status);
        self.socket.flush().await
    }

    /// Sends the notifications that reached the session (outside a
    /// transaction block only, as PostgreSQL does).
    async fn send_notifications(&mut self) -> std::io::Result<()> {
        for n in self.session.notifications() {
            let m = NotificationResponse::new(n.pid, n.channel, n.payload);
            self.send(PgWireBackendMessage::NotificationResponse(m)).await?;
        }
        Ok(())
    }

    /// Publishes the commit that the last request made, once its redo
    /// record is durable: the worker serves other sessions meanwhile. Its
    /// error, if the write or sync failed, replaces the request's success.
    async fn settle(&mut self) -> Result<(), Failure> {
        let mut began = None;
        if let Some(durable) = self.session.pending_commit() {
            began = self.shared.metrics.as_ref().map(|_| Instant::now());
            durable.await;
        }
        // Commits stamped before this one are published by their own
        // sessions, which may be waiting for this very worker: await them
        // rather than block it (the clock wakes this task).
        if let Some(visible) = self.session.settle_unseen().map_err(Failure::from)? {
            visible.await;
        }
        if let (Some(m), Some(began)) = (&self.shared.metrics, began) {
            m.commit_waits.observe(began.elapsed());
        }
        Ok(())
    }

    /// When a request begins, if its duration is wanted: by the metrics
    /// endpoint, or by the slow statement log. Otherwise the clock is not
    /// read.
    fn clock(&self) -> Option<Instant> {
        (self.shared.metrics.is_some() || self.session.log_min_duration_statement().is_some())
            .then(Instant::now)
    }

    /// A request that began at `began` (see `clock`) is over: records how
    /// long it took, and returns that when it reached
    /// `log_min_duration_statement`, to be logged.
    fn timed(&self, began: Option<Instant>) -> Option<Duration> {
        let took = began?.elapsed();
        if let Some(m) = &self.shared.metrics {
            m.statements.observe(took);
        }
        self.session.log_min_duration_statement().filter(|&min| took >= min).map(|_| took)
    }

    /// Logs a request that reached `log_min_duration_statement`, as
    /// PostgreSQL does (`duration: 1.234 ms  statement: ...`), followed by
    /// the plans its statements ran with, as `auto_explain` adds them.
    fn log_slow(&mut self, took: Duration, what: std::fmt::Arguments) {
        let mut line = format!("duration: {:.3} ms  {what}", took.as_secs_f64() * 1000.0);
        for plan in self.session.plans_ran() {
            line.push_str("\nplan:");
            for l in plan {
                let _ = write!(line, "\n  {l}");
            }
        }
        tracing::info!("{line}");
    }

    /// Awaits a row another transaction holds, for the statement that met
    /// it (rolled back to its start, and run again once this returns
    /// `Ok`). The worker serves other sessions meanwhile. The wait is
    /// looked at every few milliseconds besides when the holder ends, for
    /// deadlocks that formed since, the lock and statement timeouts, and a
    /// cancel (a vanished client's included). Its error is the
    /// statement's, and fails the block.
    async fn row_wait(&mut self, mut wait: centum_engine::RowWait) -> Result<(), Failure> {
        let mut tick = tokio::time::interval(ROW_WAIT_TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let r = loop {
            tokio::select! {
                r = &mut wait => break r,
                _ = tick.tick() => {}
            }
        };
        // Over before the statement fails and its transaction ends.
        drop(wait);
        r.map_err(|e| {
            self.session.wait_failed();
            centum_sql::Error::from(e).into()
        })
    }

    /// Waits for the next message, minding the idle-in-transaction limit
    /// and shutdown. `None`: the connection is over.
    async fn next(&mut self, copying: bool) -> std::io::Result<Option<Message>> {
        // A client streaming COPY data is not idle.
        let (in_block, outside) = self.session.idle_timeouts();
        let (idle_limit, idle_error) = match self.session.status() {
            _ if copying => (None, ("", "")),
            TxnStatus::Idle => (outside, ("57P05", "terminating connection due to idle-session timeout")),
            _ => (in_block, ("25P03", "terminating connection due to idle-in-transaction timeout")),
        };
        if *self.shared.shutdown.borrow() || self.session.terminated() {
            self.fatal("57P01", "terminating connection due to administrator command").await?;
            return Ok(None);
        }
        // The next message of a pipeline is already here: no wait, so no
        // idle limit, shutdown or termination can come first (both were
        // just looked at).
        if whole_message(self.socket.read_buffer()) {
            let got = self.socket.next().await;
            return self.received(got).await;
        }
        let mut shutdown = self.shared.shutdown.clone();
        let terminated = self.terminated.clone();
        let notified = self.notified.clone();
        // Notifications go out while the session waits outside a block.
        let listening = self.session.status() == TxnStatus::Idle && !copying;
        self.watched.set_busy(false);
        let got = loop {
            let read = async {
                match idle_limit {
                    None => Ok(self.socket.next().await),
                    Some(d) => tokio::time::timeout(d, self.socket.next()).await.map_err(|_| ()),
                }
            };
            tokio::select! {
                r = read => break r,
                _ = shutdown.changed() => {
                    self.fatal("57P01", "terminating connection due to administrator command").await?;
                    return Ok(None);
                }
                _ = terminated.notified() => {
                    self.fatal("57P01", "terminating connection due to administrator command").await?;
                    return Ok(None);
                }
                _ = notified.notified(), if listening => {
                    self.send_notifications().await?;
                    self.socket.flush().await?;
                }
            }
        };
        // A message and the termination may be ready at once, and select!
        // picks either: a message that arrived after pg_terminate_backend
        // returned must not run.
        if self.session.terminated() {
            self.fatal("57P01", "terminating connection due to administrator command").await?;
            return Ok(None);
        }
        self.watched.set_busy(true);
        match got {
            Err(()) => {
                self.fatal(idle_error.0, idle_error.1).await?;
                Ok(None)
            }
            Ok(got) => self.received(got).await,
        }
    }

    /// What the socket gave: a message, the end of the stream, or a
    /// message that cannot be read (FATAL).
    async fn received(
        &mut self,
        got: Option<Result<Message, PgWireError>>,
    ) -> std::io::Result<Option<Message>> {
        match got {
            None => Ok(None),
            Some(Ok(m)) => Ok(Some(m)),
            Some(Err(e)) => {
                let (code, message) = match &e {
                    PgWireError::MessageTooLarge(max, len) => (
                        "54000".to_string(),
                        format!("message of {len} bytes is longer than the limit of {max} bytes"),
                    ),
                    PgWireError::IoError(_) => return Ok(None),
                    PgWireError::UserError(info) => (info.code.clone(), info.message.clone()),
                    other => ("08P01".to_string(), format!("invalid message: {other}")),
                };
                tracing::debug!(error = %message, "protocol violation; closing the connection");
                self.fatal(&code, &message).await?;
                Ok(None)
            }
        }
    }

    /// Serves the client until it leaves.
    pub(crate) async fn run(mut self) -> std::io::Result<()> {
        if self.physical {
            self.fatal("0A000", "physical replication is not supported; connect with replication=database")
                .await?;
            return Ok(());
        }
        let r = self.serve().await;
        self.drop_temporary_slots();
        r
    }

    async fn serve(&mut self) -> std::io::Result<()> {
        while let Some(m) = self.next(false).await? {
            use PgWireFrontendMessage as F;
            // After an error everything up to Sync is discarded, except
            // that a Flush still sends the error: a client that prepares
            // with Parse, Describe, Flush (asyncpg) waits for it there.
            if self.skip_to_sync && !(matches!(m, Message::Sync | Message::Flush) || m.is_query()) {
                continue;
            }
            if std::mem::take(&mut self.socket.codec_mut().invalid_utf8) {
                self.error(failure("22021", "invalid byte sequence for encoding \"UTF8\"")).await?;
                match m.is_query() {
                    true => self.ready().await?,
                    false => self.skip_to_sync = true,
                }
                continue;
            }
            let step = match m {
                Message::Sync => {
                    self.skip_to_sync = false;
                    self.ready().await?;
                    continue;
                }
                Message::Flush => {
                    self.socket.flush().await?;
                    continue;
                }
                Message::Bind(b) => self.bind(b),
                Message::Describe(d) => self.describe(d),
                Message::Execute(e) => self.execute(e).await?,
                Message::Other(other) => match *other {
                    F::Terminate(_) => {
                        self.session.ending(centum_sql::activity::Ending::Normal);
                        break;
                    }
                    F::Query(q) => {
                        self.skip_to_sync = false;
                        self.query_began = self.clock();
                        self.simple(&q.query).await?;
                        if let Some(took) = self.query_slow.take() {
                            self.log_slow(took, format_args!("statement: {}", q.query));
                        }
                        continue;
                    }
                    F::Parse(p) => self.parse(p),
                    F::Close(c) => self.close(c),
                    // Outside COPY these are ignored, as the protocol says.
                    F::CopyData(_) | F::CopyDone(_) | F::CopyFail(_) => continue,
                    _ => {
                        self.fatal("08P01", "unexpected message during a session").await?;
                        break;
                    }
                },
            };
            if let Err(f) = step {
                self.error(f).await?;
                self.skip_to_sync = true;
                self.session.fail_implicit();
            }
            // Replies written straight into the buffer (rows, Describe)
            // go out once it is full, even if the client never sends Sync:
            // a client that does not read then holds up its own session
            // only, not the server's memory.
            if self.socket.write_buffer().len() >= REPLY_FLUSH_BYTES {
                self.socket.flush().await?;
            }
        }
        self.socket.flush().await.ok();
        Ok(())
    }

    // --- the simple query protocol -----------------------------------

    async fn simple(&mut self, sql: &str) -> std::io::Result<()> {
        if self.replication {
            match replication::parse(sql) {
                Some(Ok(cmd)) => return self.replication_command(cmd).await,
                Some(Err(why)) => {
                    self.error(failure("42601", why)).await?;
                    return self.ready().await;
                }
                None => {}
            }
        }
        if blank(sql) {
            put_empty(self.out(), EMPTY_QUERY);
            return self.ready().await;
        }
        match self.session.copy(sql) {
            Ok(Some(start)) => {
                if let Err(f) = self.copy(start).await? {
                    self.error(f).await?;
                }
                return self.ready().await;
            }
            Ok(None) => {}
            Err(e) => {
                self.error(e.into()).await?;
                return self.ready().await;
            }
        }
        let executed = loop {
            match self.session.execute(sql) {
                Ok(results) => break self.settle().await.map(|()| results),
                Err(e) => match self.session.take_row_wait() {
                    Some(wait) => {
                        if let Err(e) = self.row_wait(wait).await {
                            break Err(e);
                        }
                    }
                    None => break Err(e.into()),
                },
            }
        };
        match executed {
            // Only comments: as empty as a blank query.
            Ok(results) if results.is_empty() => put_empty(self.out(), EMPTY_QUERY),
            Ok(results) => {
                for r in results {
                    self.notices(&r.notices).await?;
                    if !r.columns.is_empty() {
                        put_description(self.socket.write_buffer_mut(), &r.columns, &[]);
                    }
                    self.rows(r.rows.into_iter(), &r.columns, &[], 0).await?;
                    put_command_complete(self.out(), &r.tag);
                }
            }
            Err(f) => self.error(f).await?,
        }
        self.ready().await
    }

    async fn notices(&mut self, notices: &[String]) -> std::io::Result<()> {
        for n in notices {
            let info = ErrorInfo::new("NOTICE".into(), "00000".into(), n.clone());
            self.send(PgWireBackendMessage::NoticeResponse(info.into())).await?;
        }
        Ok(())
    }

    /// Sends up to `limit` rows (0: all); true if rows are left.
    async fn rows(
        &mut self,
        mut rows: impl Iterator<Item = Vec<Value>>,
        columns: &[OutputColumn],
        formats: &[i16],
        limit: usize,
    ) -> std::io::Result<bool> {
        let mut sent = 0;
        loop {
            if limit > 0 && sent == limit {
                return Ok(true);
            }
            let Some(row) = rows.next() else { return Ok(false) };
            // Straight into the reply buffer, behind the messages already
            // queued there: no message object and no copy per row.
            let buf = self.socket.write_buffer_mut();
            put_data_row(buf, &row, columns, formats);
            if buf.len() >= REPLY_FLUSH_BYTES {
                self.socket.flush().await?;
            }
            sent += 1;
        }
    }

    /// Runs a COPY: the inner result is the statement's outcome.
    async fn copy(&mut self, start: CopyStart) -> std::io::Result<Step> {
        match start {
            CopyStart::Out(out) => {
                // Format 0: textual rows (text or CSV alike).
                let resp = CopyOutResponse::new(0, out.columns as i16, vec![0; out.columns]);
                self.send(PgWireBackendMessage::CopyOutResponse(resp)).await?;
                for line in out.data {
                    self.send(PgWireBackendMessage::CopyData(CopyData::new(line.into()))).await?;
                }
                self.send(PgWireBackendMessage::CopyDone(CopyDone::new())).await?;
                put_command_complete(self.out(), &out.tag);
                Ok(Ok(()))
            }
            CopyStart::In(mut copy) => {
                let n = copy.columns();
                self.send(PgWireBackendMessage::CopyInResponse(CopyInResponse::new(0, n as i16, vec![0; n])))
                    .await?;
                self.socket.flush().await?;
                let mut failed: Option<centum_sql::Error> = None;
                loop {
                    let Some(m) = self.next(true).await? else {
                        let e = centum_sql::Error::other("08006", "connection lost during COPY");
                        copy.abort(&mut self.session, e);
                        return Err(std::io::ErrorKind::ConnectionAborted.into());
                    };
                    let m = match m {
                        Message::Flush | Message::Sync => continue,
                        Message::Other(other) => Some(*other),
                        _ => None,
                    };
                    match m {
                        Some(PgWireFrontendMessage::CopyData(d)) => {
                            if failed.is_none() {
                                if let Err(e) = copy.data(&mut self.session, &d.data) {
                                    failed = Some(e);
                                }
                            }
                        }
                        Some(PgWireFrontendMessage::CopyDone(_)) => break,
                        Some(PgWireFrontendMessage::CopyFail(f)) => {
                            let why = centum_sql::Error::other(
                                "57014",
                                format!("COPY from stdin failed: {}", f.message),
                            );
                            return Ok(Err(copy.abort(&mut self.session, failed.unwrap_or(why)).into()));
                        }
                        _ => {
                            let e = centum_sql::Error::other("08P01", "unexpected message type during COPY");
                            return Ok(Err(copy.abort(&mut self.session, e).into()));
                        }
                    }
                }
                if let Some(e) = failed {
                    return Ok(Err(copy.abort(&mut self.session, e).into()));
                }
                let finished = match copy.finish(&mut self.session) {
                    Ok(r) => self.settle().await.map(|()| r),
                    Err(e) => Err(e.into()),
                };
                match finished {
                    Ok(r) => {
                        put_command_complete(self.out(), &r.tag);
                        Ok(Ok(()))
                    }
                    Err(f) => Ok(Err(f)),
                }
            }
        }
    }

    // --- the extended query protocol ---------------------------------

    fn parse(&mut self, p: Parse) -> Step {
        let name = p.name.unwrap_or_default();
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Err(failure("42P05", format!("prepared statement \"{name}\" already exists")));
        }
        let declared: Vec<Option<DataType>> = p.type_oids.iter().map(|&o| wire::oid_type(o)).collect();
        let empty = blank(&p.query);
        let sql = if empty { "SELECT 1 WHERE false" } else { p.query.as_str() };
        let prepared = self.session.prepare(sql, &declared)?;
        let copy = centum_sql::copy::is_copy(&p.query).then(|| p.query.clone());
        let st = Statement { prepared, copy, empty, declared: p.type_oids, description: None };
        self.statements.insert(name, Arc::new(Mutex::new(st)));
        put_empty(self.out(), PARSE_COMPLETE);
        Ok(())
    }

    fn bind(&mut self, b: BindFrame) -> Step {
        let sname = b.statement();
        let Some(statement) = self.statements.get(sname.as_ref()).cloned() else {
            return Err(failure("26000", format!("prepared statement \"{sname}\" does not exist")));
        };
        let params = {
            let st = lock(&statement);
            let types = st.prepared.params();
            if b.param_count() != types.len() {
                return Err(failure(
                    "08P01",
                    format!(
                        "bind message supplies {} parameters, but prepared statement \"{sname}\" requires {}",
                        b.param_count(),
                        types.len()
                    ),
                ));
            }
            let mut params = Vec::with_capacity(types.len());
            for (i, ty) in types.iter().enumerate() {
                let binary = format_of(b.formats(), i) == 1;
                let v = match b.param(i) {
                    None => Value::Null,
                    Some(bytes) if binary => wire::decode_binary(bytes, ty)
                        .map_err(|m| failure("22P03", format!("{m} in parameter ${}", i + 1)))?,
                    Some(bytes) => {
                        let Ok(text) = std::str::from_utf8(bytes) else {
                            return Err(failure("22021", "invalid byte sequence for encoding \"UTF8\""));
                        };
                        Value::parse(text, ty).map_err(centum_sql::Error::from)?
                    }
                };
                params.push(v);
            }
            params
        };
        let formats = Formats::from_slice(b.results());
        self.portals.put(&b.portal(), Portal { statement, params, formats, pending: None });
        put_empty(self.out(), BIND_COMPLETE);
        Ok(())
    }

    /// Describe: encoded straight into the reply buffer from the
    /// statement's own column list. Drivers such as libpq describe the
    /// portal before every execution: a statement keeps the encoded
    /// RowDescription of its last result formats and copies it out.
    fn describe(&mut self, d: DescribeFrame) -> Step {
        let name = d.name();
        let buf = self.socket.write_buffer_mut();
        if d.target() == b'S' {
            let Some(st) = self.statements.get(name.as_ref()) else {
                return Err(failure("26000", format!("prepared statement \"{name}\" does not exist")));
            };
            let st = lock(st);
            let types = st.prepared.params();
            buf.put_u8(b't');
            buf.put_i32(6 + 4 * types.len() as i32);
            buf.put_i16(types.len() as i16);
            for (i, t) in types.iter().enumerate() {
                buf.put_u32(st.declared.get(i).copied().filter(|&o| o != 0).unwrap_or_else(|| t.pg_oid()));
            }
            put_description(buf, if st.empty { &[] } else { st.prepared.columns() }, &[]);
        } else {
            let Some(p) = self.portals.get(&name) else {
                return Err(failure("34000", format!("portal \"{name}\" does not exist")));
            };
            let mut st = lock(&p.statement);
            let st = &mut *st;
            let columns = st.prepared.shared_columns();
            match &st.description {
                Some(d) if Arc::ptr_eq(&d.columns, columns) && d.formats == p.formats => {
                    buf.put_slice(&d.bytes)
                }
                _ => {
                    let at = buf.len();
                    put_description(buf, if st.empty { &[] } else { columns }, &p.formats);
                    let bytes = buf[at..].into();
                    st.description =
                        Some(Description { columns: columns.clone(), formats: p.formats.clone(), bytes });
                }
            }
        }
        Ok(())
    }

    async fn execute(&mut self, e: ExecuteFrame) -> std::io::Result<Step> {
        let began = self.clock();
        let name = e.portal();
        let Some(mut portal) = self.portals.take(&name) else {
            return Ok(Err(failure("34000", format!("portal \"{name}\" does not exist"))));
        };
        let step = self.run_portal(&mut portal, e.max_rows()).await?;
        if let Some(took) = self.timed(began) {
            let text = lock(&portal.statement).prepared.text().to_string();
            let shown = if name.is_empty() { "<unnamed>" } else { &*name };
            self.log_slow(took, format_args!("execute {shown}: {text}"));
        }
        // A portal whose statement failed goes with its transaction.
        if step.is_ok() {
            self.portals.put(&name, portal);
        }
        Ok(step)
    }

    /// Execute on a portal taken out of its slot.
    async fn run_portal(&mut self, portal: &mut Portal, max_rows: i32) -> std::io::Result<Step> {
        let (copy, controls) = {
            let st = lock(&portal.statement);
            (st.copy.clone(), st.prepared.controls_transaction())
        };
        if let Some(sql) = copy {
            return match self.session.copy(&sql) {
                Ok(Some(start)) => self.copy(start).await,
                Ok(None) => Ok(Err(failure("XX000", "not a COPY statement"))),
                Err(e) => Ok(Err(e.into())),
            };
        }
        // Statements of a pipeline run in one implicit transaction up to
        // its Sync. One followed at once by its Sync is its own transaction
        // either way, and runs as one without a block.
        if portal.pending.is_none() && !self.sync_is_next() && !controls {
            if let Err(e) = self.session.begin_implicit() {
                return Ok(Err(e.into()));
            }
        }
        if portal.pending.is_none() {
            let outcome = loop {
                let outcome = {
                    let mut st = lock(&portal.statement);
                    if st.empty {
                        None
                    } else {
                        Some(self.session.execute_prepared(&mut st.prepared, &portal.params))
                    }
                };
                if let Some(Err(_)) = &outcome {
                    if let Some(wait) = self.session.take_row_wait() {
                        match self.row_wait(wait).await {
                            Ok(()) => continue,
                            Err(f) => return Ok(Err(f)),
                        }
                    }
                }
                break outcome;
            };
            let r: QueryResult = match outcome {
                None => {
                    put_empty(self.out(), EMPTY_QUERY);
                    return Ok(Ok(()));
                }
                Some(Ok(r)) => r,
                Some(Err(e)) => return Ok(Err(e.into())),
            };
            if let Err(f) = self.settle().await {
                return Ok(Err(f));
            }
            self.notices(&r.notices).await?;
            portal.pending =
                Some(Pending { rows: r.rows.into_iter(), columns: r.columns, tag: r.tag, finished: false });
        }
        let mut pending = portal.pending.take().expect("executed");
        let limit = max_rows.max(0) as usize;
        let columns = pending.columns.clone();
        let more = self.rows(&mut pending.rows, &columns, &portal.formats, limit).await?;
        if more {
            put_empty(self.out(), PORTAL_SUSPENDED);
        } else if pending.finished {
            // A finished portal answers a further Execute with no rows.
            put_command_complete(self.out(), &finished_tag(&pending.tag));
        } else {
            put_command_complete(self.out(), &pending.tag);
            pending.finished = true;
        }
        portal.pending = Some(pending);
        Ok(Ok(()))
    }

    /// Whether the next message, already read from the socket, is a Sync.
    fn sync_is_next(&self) -> bool {
        let buf = self.socket.read_buffer();
        buf.len() >= 5 && buf[0] == b'S'
    }

    fn close(&mut self, c: Close) -> Step {
        let name = c.name.unwrap_or_default();
        if c.target_type == b'S' {
            self.statements.remove(&name);
        } else {
            self.portals.take(&name);
        }
        put_empty(self.out(), CLOSE_COMPLETE);
        Ok(())
    }
}

/// Bound portals: the unnamed one, which nearly every driver uses for
/// every execution, in a slot of its own, and named ones by name.
#[derive(Default)]
struct Portals {
    unnamed: Option<Portal>,
    named: Names<Portal>,
}

impl Portals {
    /// Binds `name` to `portal`, replacing what it named.
    fn put(&mut self, name: &str, portal: Portal) {
        if name.is_empty() {
            self.unnamed = Some(portal);
        } else {
            self.named.insert(name.to_string(), portal);
        }
    }

    fn get(&self, name: &str) -> Option<&Portal> {
        if name.is_empty() {
            self.unnamed.as_ref()
        } else {
            self.named.get(name)
        }
    }

    /// Takes the portal `name` out (an Execute puts it back after).
    fn take(&mut self, name: &str) -> Option<Portal> {
        if name.is_empty() {
            self.unnamed.take()
        } else {
            self.named.remove(name)
        }
    }
}

/// Type bytes of the replies that have no body.
const PARSE_COMPLETE: u8 = b'1';
const BIND_COMPLETE: u8 = b'2';
const CLOSE_COMPLETE: u8 = b'3';
const EMPTY_QUERY: u8 = b'I';
const PORTAL_SUSPENDED: u8 = b's';

/// Appends a reply that is its type and length only.
fn put_empty(buf: &mut BytesMut, kind: u8) {
    buf.put_u8(kind);
    buf.put_i32(4);
}

/// Appends CommandComplete with `tag`.
fn put_command_complete(buf: &mut BytesMut, tag: &str) {
    buf.put_u8(b'C');
    buf.put_i32(4 + tag.len() as i32 + 1);
    buf.put_slice(tag.as_bytes());
    buf.put_u8(0);
}

/// A query string with no statement in it (EmptyQueryResponse).
fn blank(sql: &str) -> bool {
    sql.trim().trim_matches(';').trim().is_empty()
}

/// The tag a finished portal reports when executed again (`SELECT 0`).
fn finished_tag(tag: &str) -> String {
    match tag.split_once(' ') {
        Some(("SELECT", _)) => "SELECT 0".into(),
        _ => tag.to_string(),
    }
}

/// The format code of column or parameter `i`: none given means text, one
/// means all, else one each.
fn format_of(codes: &[i16], i: usize) -> i16 {
    match codes.len() {
        0 => 0,
        1 => codes[0],
        _ => codes.get(i).copied().unwrap_or(0),
    }
}

/// Appends the RowDescription of `columns` (with result `formats`) to
/// `buf`, or NoData when there are none.
fn put_description(buf: &mut BytesMut, columns: &[OutputColumn], formats: &[i16]) {
    if columns.is_empty() {
        buf.put_u8(b'n');
        buf.put_i32(4);
        return;
    }
    let start = buf.len();
    buf.put_u8(b'T');
    buf.put_i32(0);
    buf.put_i16(columns.len() as i16);
    for (i, c) in columns.iter().enumerate() {
        buf.put_slice(c.name.as_bytes());
        buf.put_u8(0);
        // Table and column number, unknown.
        buf.put_i32(0);
        buf.put_i16(0);
        buf.put_u32(wire::type_oid(c.ty.as_ref()));
        buf.put_i16(wire::type_size(c.ty.as_ref()));
        // The type modifier: varchar(n)'s length, numeric(p,s)'s precision
        // and scale, which drivers report (Django's introspection reads
        // them from a query's description).
        buf.put_i32(c.ty.as_ref().map_or(-1, |t| t.pg_typmod()));
        buf.put_i16(format_of(formats, i));
    }
    fill_len(buf, start + 1, start + 1);
}

/// Appends the DataRow message of `row` to `buf`: type, length, column
/// count, then each column's length and bytes (-1 for NULL).
fn put_data_row(buf: &mut BytesMut, row: &[Value], columns: &[OutputColumn], formats: &[i16]) {
    let start = buf.len();
    buf.reserve(7 + row.len() * 12);
    buf.put_u8(b'D');
    buf.put_i32(0);
    buf.put_i16(row.len() as i16);
    for (i, v) in row.iter().enumerate() {
        if v.is_null() {
            buf.put_i32(-1);
            continue;
        }
        let at = buf.len();
        buf.put_i32(0);
        if format_of(formats, i) == 1 {
            wire::encode_binary(v, columns.get(i).and_then(|c| c.ty.as_ref()), buf);
        } else {
            let mut digits = itoa::Buffer::new();
            match v {
                Value::Text(s) => buf.put_slice(s.as_bytes()),
                Value::Integer(n) => buf.put_slice(digits.format(*n).as_bytes()),
                Value::BigInt(n) => buf.put_slice(digits.format(*n).as_bytes()),
                Value::SmallInt(n) => buf.put_slice(digits.format(*n).as_bytes()),
                v => {
                    let _ = write!(buf, "{v}");
                }
            }
        }
        fill_len(buf, at, at + 4);
    }
    fill_len(buf, start + 1, start + 1);
}
