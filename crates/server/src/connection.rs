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

use crate::server::{Shared, StartupSocket};
use crate::wire;
use bytes::{BufMut, BytesMut};
use centum_sql::copy::CopyStart;
use centum_sql::{OutputColumn, Prepared, QueryResult, Session, TxnStatus};
use centum_types::{DataType, Value};
use futures::{SinkExt, StreamExt};
use pgwire::error::{ErrorInfo, PgWireError};
use pgwire::messages::copy::{CopyData, CopyDone, CopyInResponse, CopyOutResponse};
use pgwire::messages::extendedquery::{
    Bind, BindComplete, Close, CloseComplete, Describe, Execute, Parse, ParseComplete, PortalSuspended,
};
use pgwire::messages::response::{
    CommandComplete, EmptyQueryResponse, NotificationResponse, ReadyForQuery, TransactionStatus,
};
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use pgwire::tokio::server::{MaybeTls, PgWireMessageServerCodec};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
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
    type Item = PgWireFrontendMessage;
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
        self.invalid_utf8 = !strings_are_utf8(&frame);
        let inner = &mut self.inner;
        let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.decode(&mut frame)));
        match decoded {
            Ok(Ok(Some(m))) if frame.is_empty() => Ok(Some(m)),
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
}

/// A bound portal (Bind).
struct Portal {
    statement: Arc<Mutex<Statement>>,
    params: Vec<Value>,
    /// Result format per column (0 text, 1 binary).
    formats: Vec<i16>,
    /// Rows left to send, once executed.
    pending: Option<Pending>,
}

struct Pending {
    rows: std::vec::IntoIter<Vec<Value>>,
    columns: Arc<[OutputColumn]>,
    tag: String,
}

/// An error to report: SQLSTATE, message, severity.
struct Failure {
    code: String,
    message: String,
    /// DETAIL, HINT and CONTEXT (where inside routines it happened).
    detail: Option<String>,
    hint: Option<String>,
    context: Option<String>,
    /// The schema, table, column and constraint a violation names.
    fields: centum_sql::ErrorFields,
}

impl From<centum_sql::Error> for Failure {
    fn from(e: centum_sql::Error) -> Failure {
        Failure {
            code: e.sqlstate().to_string(),
            message: e.to_string(),
            detail: e.detail().map(String::from),
            hint: e.hint().map(String::from),
            context: e.context().map(String::from),
            fields: e.fields(),
        }
    }
}

fn failure(code: &str, message: impl Into<String>) -> Failure {
    Failure {
        code: code.into(),
        message: message.into(),
        detail: None,
        hint: None,
        context: None,
        fields: Default::default(),
    }
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
    portals: Names<Portal>,
    /// An extended-protocol message failed: discard until Sync.
    skip_to_sync: bool,
    /// Woken by `pg_terminate_backend`.
    terminated: Arc<tokio::sync::Notify>,
    /// Woken when a notification (LISTEN) reaches the session.
    notified: Arc<tokio::sync::Notify>,
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
        Connection {
            watched: shared.hangups.watch(fd, session.cancel_handle()),
            shared,
            socket: Framed::from_parts(new),
            session,
            statements: Names::default(),
            portals: Names::default(),
            skip_to_sync: false,
            terminated,
            notified,
        }
    }

    fn status(&self) -> TransactionStatus {
        match self.session.status() {
            TxnStatus::Idle => TransactionStatus::Idle,
            TxnStatus::InBlock => TransactionStatus::Transaction,
            TxnStatus::Failed => TransactionStatus::Error,
        }
    }

    async fn send(&mut self, m: PgWireBackendMessage) -> std::io::Result<()> {
        self.socket.feed(m).await
    }

    async fn error(&mut self, f: Failure) -> std::io::Result<()> {
        let mut info = ErrorInfo::new("ERROR".into(), f.code, f.message);
        info.detail = f.detail;
        info.hint = f.hint;
        info.where_context = f.context;
        info.schema = f.fields.schema;
        info.table = f.fields.table;
        info.column = f.fields.column;
        info.constraint = f.fields.constraint;
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
        if status == TransactionStatus::Idle {
            self.send_notifications().await?;
        }
        self.send(PgWireBackendMessage::ReadyForQuery(ReadyForQuery::new(status))).await?;
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
        if let Some(durable) = self.session.pending_commit() {
            durable.await;
        }
        // Commits stamped before this one are published by their own
        // sessions, which may be waiting for this very worker: await them
        // rather than block it (the clock wakes this task).
        if let Some(visible) = self.session.settle_unseen().map_err(Failure::from)? {
            visible.await;
        }
        Ok(())
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
    async fn next(&mut self, copying: bool) -> std::io::Result<Option<PgWireFrontendMessage>> {
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
        got: Option<Result<PgWireFrontendMessage, PgWireError>>,
    ) -> std::io::Result<Option<PgWireFrontendMessage>> {
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
        while let Some(m) = self.next(false).await? {
            use PgWireFrontendMessage as F;
            // After an error everything up to Sync is discarded, except
            // that a Flush still sends the error: a client that prepares
            // with Parse, Describe, Flush (asyncpg) waits for it there.
            if self.skip_to_sync && !matches!(m, F::Sync(_) | F::Query(_) | F::Flush(_)) {
                continue;
            }
            if std::mem::take(&mut self.socket.codec_mut().invalid_utf8) {
                self.error(failure("22021", "invalid byte sequence for encoding \"UTF8\"")).await?;
                match m {
                    F::Query(_) => self.ready().await?,
                    _ => self.skip_to_sync = true,
                }
                continue;
            }
            let step = match m {
                F::Terminate(_) => {
                    self.session.ending(centum_sql::activity::Ending::Normal);
                    break;
                }
                F::Query(q) => {
                    self.skip_to_sync = false;
                    self.simple(&q.query).await?;
                    continue;
                }
                F::Sync(_) => {
                    self.skip_to_sync = false;
                    self.ready().await?;
                    continue;
                }
                F::Flush(_) => {
                    self.socket.flush().await?;
                    continue;
                }
                F::Parse(p) => self.parse(p).await?,
                F::Bind(b) => self.bind(b).await?,
                F::Describe(d) => self.describe(d).await?,
                F::Execute(e) => self.execute(e).await?,
                F::Close(c) => self.close(c).await?,
                // Outside COPY these are ignored, as the protocol says.
                F::CopyData(_) | F::CopyDone(_) | F::CopyFail(_) => continue,
                _ => {
                    self.fatal("08P01", "unexpected message during a session").await?;
                    break;
                }
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
        if blank(sql) {
            self.send(PgWireBackendMessage::EmptyQueryResponse(EmptyQueryResponse::new())).await?;
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
            Ok(results) if results.is_empty() => {
                self.send(PgWireBackendMessage::EmptyQueryResponse(EmptyQueryResponse::new())).await?;
            }
            Ok(results) => {
                for r in results {
                    self.notices(&r.notices).await?;
                    if !r.columns.is_empty() {
                        put_description(self.socket.write_buffer_mut(), &r.columns, &[]);
                    }
                    self.rows(r.rows.into_iter(), &r.columns, &[], 0).await?;
                    self.send(PgWireBackendMessage::CommandComplete(CommandComplete::new(r.tag))).await?;
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
                self.send(PgWireBackendMessage::CommandComplete(CommandComplete::new(out.tag))).await?;
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
                    match m {
                        PgWireFrontendMessage::CopyData(d) => {
                            if failed.is_none() {
                                if let Err(e) = copy.data(&mut self.session, &d.data) {
                                    failed = Some(e);
                                }
                            }
                        }
                        PgWireFrontendMessage::CopyDone(_) => break,
                        PgWireFrontendMessage::CopyFail(f) => {
                            let why = centum_sql::Error::other(
                                "57014",
                                format!("COPY from stdin failed: {}", f.message),
                            );
                            return Ok(Err(copy.abort(&mut self.session, failed.unwrap_or(why)).into()));
                        }
                        PgWireFrontendMessage::Flush(_) | PgWireFrontendMessage::Sync(_) => {}
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
                        self.send(PgWireBackendMessage::CommandComplete(CommandComplete::new(r.tag))).await?;
                        Ok(Ok(()))
                    }
                    Err(f) => Ok(Err(f)),
                }
            }
        }
    }

    // --- the extended query protocol ---------------------------------

    async fn parse(&mut self, p: Parse) -> std::io::Result<Step> {
        let name = p.name.unwrap_or_default();
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Ok(Err(failure("42P05", format!("prepared statement \"{name}\" already exists"))));
        }
        let declared: Vec<Option<DataType>> = p.type_oids.iter().map(|&o| wire::oid_type(o)).collect();
        let empty = blank(&p.query);
        let sql = if empty { "SELECT 1 WHERE false" } else { p.query.as_str() };
        let prepared = match self.session.prepare(sql, &declared) {
            Ok(x) => x,
            Err(e) => return Ok(Err(e.into())),
        };
        let copy = centum_sql::copy::is_copy(&p.query).then(|| p.query.clone());
        let st = Statement { prepared, copy, empty, declared: p.type_oids };
        self.statements.insert(name, Arc::new(Mutex::new(st)));
        self.send(PgWireBackendMessage::ParseComplete(ParseComplete::new())).await?;
        Ok(Ok(()))
    }

    async fn bind(&mut self, b: Bind) -> std::io::Result<Step> {
        let sname = b.statement_name.unwrap_or_default();
        let Some(statement) = self.statements.get(&sname).cloned() else {
            return Ok(Err(failure("26000", format!("prepared statement \"{sname}\" does not exist"))));
        };
        let params = {
            let st = lock(&statement);
            let types = st.prepared.params();
            if b.parameters.len() != types.len() {
                return Ok(Err(failure(
                    "08P01",
                    format!(
                        "bind message supplies {} parameters, but prepared statement \"{sname}\" requires {}",
                        b.parameters.len(),
                        types.len()
                    ),
                )));
            }
            let mut params = Vec::with_capacity(types.len());
            for (i, (raw, ty)) in b.parameters.iter().zip(types).enumerate() {
                let binary = format_of(&b.parameter_format_codes, i) == 1;
                let v = match raw {
                    None => Value::Null,
                    Some(bytes) if binary => match wire::decode_binary(bytes, ty) {
                        Ok(v) => v,
                        Err(m) => return Ok(Err(failure("22P03", format!("{m} in parameter ${}", i + 1)))),
                    },
                    Some(bytes) => {
                        let Ok(text) = std::str::from_utf8(bytes) else {
                            return Ok(Err(failure("22021", "invalid byte sequence for encoding \"UTF8\"")));
                        };
                        match Value::parse(text, ty) {
                            Ok(v) => v,
                            Err(e) => return Ok(Err(centum_sql::Error::from(e).into())),
                        }
                    }
                };
                params.push(v);
            }
            params
        };
        let pname = b.portal_name.unwrap_or_default();
        let portal = Portal { statement, params, formats: b.result_column_format_codes, pending: None };
        self.portals.insert(pname, portal);
        self.send(PgWireBackendMessage::BindComplete(BindComplete::new())).await?;
        Ok(Ok(()))
    }

    /// Describe: encoded straight into the reply buffer from the
    /// statement's own column list (drivers such as libpq describe the
    /// portal before every execution, so nothing is copied for it).
    async fn describe(&mut self, d: Describe) -> std::io::Result<Step> {
        let name = d.name.unwrap_or_default();
        let buf = self.socket.write_buffer_mut();
        if d.target_type == b'S' {
            let Some(st) = self.statements.get(&name) else {
                return Ok(Err(failure("26000", format!("prepared statement \"{name}\" does not exist"))));
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
                return Ok(Err(failure("34000", format!("portal \"{name}\" does not exist"))));
            };
            let st = lock(&p.statement);
            put_description(buf, if st.empty { &[] } else { st.prepared.columns() }, &p.formats);
        }
        Ok(Ok(()))
    }

    async fn execute(&mut self, e: Execute) -> std::io::Result<Step> {
        let name = e.name.unwrap_or_default();
        let Some(mut portal) = self.portals.remove(&name) else {
            return Ok(Err(failure("34000", format!("portal \"{name}\" does not exist"))));
        };
        let copy = lock(&portal.statement).copy.clone();
        if let Some(sql) = copy {
            self.portals.insert(name, portal);
            return match self.session.copy(&sql) {
                Ok(Some(start)) => self.copy(start).await,
                Ok(None) => Ok(Err(failure("XX000", "not a COPY statement"))),
                Err(e) => Ok(Err(e.into())),
            };
        }
        // Statements of a pipeline run in one implicit transaction up to
        // its Sync. One followed at once by its Sync is its own transaction
        // either way, and runs as one without a block.
        if portal.pending.is_none()
            && !self.sync_is_next()
            && !lock(&portal.statement).prepared.controls_transaction()
        {
            if let Err(e) = self.session.begin_implicit() {
                self.portals.insert(name, portal);
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
                    self.portals.insert(name, portal);
                    self.send(PgWireBackendMessage::EmptyQueryResponse(EmptyQueryResponse::new())).await?;
                    return Ok(Ok(()));
                }
                Some(Ok(r)) => r,
                Some(Err(e)) => return Ok(Err(e.into())),
            };
            if let Err(f) = self.settle().await {
                return Ok(Err(f));
            }
            self.notices(&r.notices).await?;
            portal.pending = Some(Pending { rows: r.rows.into_iter(), columns: r.columns, tag: r.tag });
        }
        let mut pending = portal.pending.take().expect("executed");
        let limit = e.max_rows.max(0) as usize;
        let columns = pending.columns.clone();
        let more = self.rows(&mut pending.rows, &columns, &portal.formats, limit).await?;
        if more {
            self.send(PgWireBackendMessage::PortalSuspended(PortalSuspended::new())).await?;
            portal.pending = Some(pending);
        } else {
            self.send(PgWireBackendMessage::CommandComplete(CommandComplete::new(pending.tag.clone())))
                .await?;
            // A finished portal answers a further Execute with no rows.
            pending.tag = finished_tag(&pending.tag);
            portal.pending = Some(pending);
        }
        self.portals.insert(name, portal);
        Ok(Ok(()))
    }

    /// Whether the next message, already read from the socket, is a Sync.
    fn sync_is_next(&self) -> bool {
        let buf = self.socket.read_buffer();
        buf.len() >= 5 && buf[0] == b'S'
    }

    async fn close(&mut self, c: Close) -> std::io::Result<Step> {
        let name = c.name.unwrap_or_default();
        if c.target_type == b'S' {
            self.statements.remove(&name);
        } else {
            self.portals.remove(&name);
        }
        self.send(PgWireBackendMessage::CloseComplete(CloseComplete::new())).await?;
        Ok(Ok(()))
    }
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
