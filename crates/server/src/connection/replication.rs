//! Replication connections (`replication=database`): the commands of
//! PostgreSQL's replication protocol that logical decoding clients send
//! (pg_recvlogical, and any driver's replication API), next to plain SQL.
//!
//! ```text
//!  IDENTIFY_SYSTEM                     ─▶ systemid, timeline, xlogpos, dbname
//!  CREATE_REPLICATION_SLOT s [TEMPORARY] LOGICAL plugin [options]
//!                                      ─▶ slot_name, consistent_point, snapshot_name, output_plugin
//!  DROP_REPLICATION_SLOT s [WAIT]
//!  START_REPLICATION SLOT s LOGICAL X/Y [(option 'value', ...)]
//!      ─▶ CopyBothResponse, then CopyData:
//!           server: 'w' XLogData (start LSN, end of log, time, message)
//!                   'k' keepalive (end of log, time, reply requested)
//!           client: 'r' standby status (written, flushed, applied LSN, time)
//!         until the client's CopyDone: CopyDone, CommandComplete (COPY,
//!         then START_REPLICATION)
//! ```
//!
//! The decoder runs on a thread of its own, which waits on the log and
//! hands batches of messages to the connection's task; the task writes
//! them, answers status updates and sends keepalives. A status update
//! confirms, and writes down, the last transaction whose COMMIT the client
//! says it has flushed; after a crash or a reconnect the stream resumes
//! after it, so a transaction is delivered again only if its COMMIT was
//! not confirmed.

use centum_engine::storage::{lsn, LogPos};
use centum_types::{DataType, Value};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// A replication command.
#[derive(Debug, PartialEq)]
pub(crate) enum Command {
    IdentifySystem,
    CreateSlot { name: String, temporary: bool, plugin: Option<String>, snapshot: Snapshot },
    DropSlot { name: String, wait: bool },
    Start { slot: String, logical: bool, lsn: u64, options: Vec<(String, Option<String>)> },
}

/// What CREATE_REPLICATION_SLOT does with a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Snapshot {
    /// `'export'` (the default; no snapshot is exported, so no name is
    /// returned) and `'nothing'`: the slot starts at the durable log's end.
    Nothing,
    /// `'use'`: the session's open transaction takes the snapshot the
    /// slot starts at, for a copy of the tables that meets the stream.
    Use,
}

/// Words of a replication command: bare words (upper-cased), quoted
/// identifiers, string literals, and punctuation.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Ident(String),
    Str(String),
    Punct(char),
}

fn tokens(sql: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '"' | '\'' => {
                let mut s = String::new();
                loop {
                    match chars.next() {
                        Some(q) if q == c && chars.peek() == Some(&c) => {
                            chars.next();
                            s.push(c);
                        }
                        Some(q) if q == c => break,
                        Some(ch) => s.push(ch),
                        None => return Err("unterminated quoted string".into()),
                    }
                }
                out.push(if c == '"' { Tok::Ident(s) } else { Tok::Str(s) });
            }
            '(' | ')' | ',' | ';' => out.push(Tok::Punct(c)),
            c => {
                let mut w = String::from(c);
                while let Some(&n) = chars.peek() {
                    if n.is_whitespace() || "()',;\"".contains(n) {
                        break;
                    }
                    w.push(n);
                    chars.next();
                }
                out.push(Tok::Word(w));
            }
        }
    }
    while out.last() == Some(&Tok::Punct(';')) {
        out.pop();
    }
    Ok(out)
}

/// A name: a quoted identifier as written, a bare one folded.
fn name(t: Option<&Tok>) -> Result<String, String> {
    match t {
        Some(Tok::Ident(s)) => Ok(s.clone()),
        Some(Tok::Word(w)) => Ok(w.to_lowercase()),
        _ => Err("syntax error: a name was expected".into()),
    }
}

fn is_word(t: Option<&Tok>, w: &str) -> bool {
    matches!(t, Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w))
}

/// The replication command `sql` is, `None` if it is not one (it is SQL),
/// or why it cannot be read.
pub(crate) fn parse(sql: &str) -> Option<Result<Command, String>> {
    let toks = tokens(sql).ok()?;
    let Some(Tok::Word(first)) = toks.first() else { return None };
    let first = first.to_ascii_uppercase();
    let t = |i: usize| toks.get(i);
    Some(match first.as_str() {
        "IDENTIFY_SYSTEM" if toks.len() == 1 => Ok(Command::IdentifySystem),
        "CREATE_REPLICATION_SLOT" => (|| {
            let name = name(t(1))?;
            let mut i = 2;
            let temporary = is_word(t(i), "TEMPORARY");
            if temporary {
                i += 1;
            }
            let plugin = if is_word(t(i), "PHYSICAL") {
                None
            } else if is_word(t(i), "LOGICAL") {
                i += 1;
                Some(name_or_str(t(i))?)
            } else {
                return Err("syntax error: PHYSICAL or LOGICAL was expected".to_string());
            };
            // Snapshot and two-phase options, as old keywords or a list:
            // there is no two-phase commit to decode.
            i += 1;
            let mut snapshot = Snapshot::Nothing;
            while let Some(tok) = t(i) {
                match tok {
                    Tok::Word(w) if w.eq_ignore_ascii_case("USE_SNAPSHOT") => snapshot = Snapshot::Use,
                    Tok::Word(w) if w.eq_ignore_ascii_case("SNAPSHOT") => {
                        if matches!(t(i + 1), Some(Tok::Str(v)) if v.eq_ignore_ascii_case("use")) {
                            snapshot = Snapshot::Use;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            Ok(Command::CreateSlot { name, temporary, plugin, snapshot })
        })(),
        "DROP_REPLICATION_SLOT" => {
            name(t(1)).map(|name| Command::DropSlot { name, wait: is_word(t(2), "WAIT") })
        }
        "START_REPLICATION" => (|| {
            let mut i = 1;
            if !is_word(t(i), "SLOT") {
                return Err(
                    "physical replication is not supported: START_REPLICATION SLOT name LOGICAL X/Y".into()
                );
            }
            i += 1;
            let slot = name(t(i))?;
            i += 1;
            let logical = is_word(t(i), "LOGICAL");
            if logical || is_word(t(i), "PHYSICAL") {
                i += 1;
            }
            let lsn = match t(i) {
                Some(Tok::Word(w)) => centum_sql::replication::parse_lsn(w).map_err(|e| e.to_string())?,
                _ => return Err("syntax error: a position X/Y was expected".into()),
            };
            i += 1;
            let mut options = Vec::new();
            if t(i) == Some(&Tok::Punct('(')) {
                i += 1;
                while t(i) != Some(&Tok::Punct(')')) {
                    let key = match t(i) {
                        Some(Tok::Ident(s)) | Some(Tok::Word(s)) => s.clone(),
                        _ => return Err("syntax error in the option list".into()),
                    };
                    i += 1;
                    let value = match t(i) {
                        Some(Tok::Str(s)) => {
                            i += 1;
                            Some(s.clone())
                        }
                        _ => None,
                    };
                    options.push((key, value));
                    match t(i) {
                        Some(Tok::Punct(',')) => i += 1,
                        Some(Tok::Punct(')')) => {}
                        _ => return Err("syntax error in the option list".into()),
                    }
                }
            }
            Ok(Command::Start { slot, logical, lsn, options })
        })(),
        _ => return None,
    })
}

fn name_or_str(t: Option<&Tok>) -> Result<String, String> {
    match t {
        Some(Tok::Str(s)) => Ok(s.clone()),
        other => name(other),
    }
}

/// Microseconds since 2000-01-01, PostgreSQL's clock for protocol times.
pub(crate) fn pg_now() -> i64 {
    const PG_EPOCH_UNIX_SECS: i64 = 946_684_800;
    let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    unix.as_micros() as i64 - PG_EPOCH_UNIX_SECS * 1_000_000
}

/// What the decoder thread hands the connection.
pub(crate) struct Decoded {
    /// Messages with their positions.
    pub messages: Vec<(LogPos, Vec<u8>)>,
    /// The end of each transaction decoded, in order (empty ones too).
    pub ends: Vec<LogPos>,
    /// Where the feed stands after them: everything before was sent.
    pub through: LogPos,
}

/// Starts the decoder thread: transactions from `from`, skipping those
/// that end at or before `skip_to`, until `stop` is set or the receiver
/// goes. The thread holds the database open: the connection joins it
/// before it ends, so that a shutdown closes the log only after it.
pub(crate) fn spawn_decoder(
    db: centum_engine::Database,
    from: LogPos,
    skip_to: LogPos,
    mut plugin: centum_sql::replication::Plugin,
    stop: Arc<AtomicBool>,
) -> (tokio::sync::mpsc::Receiver<Result<Decoded, centum_sql::Error>>, Option<std::thread::JoinHandle<()>>) {
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    let run = move || {
        let mut feed = match db.changes(from) {
            Ok(f) => f,
            Err(e) => {
                let _ = tx.blocking_send(Err(e.into()));
                return;
            }
        };
        // The connection's task may be dropped without setting `stop`
        // (the runtime shutting down): a closed channel ends the thread too.
        while !stop.load(SeqCst) && !tx.is_closed() {
            let was = feed.position();
            match feed.poll() {
                Ok(txns) if txns.is_empty() && feed.position() == was => {
                    feed.wait(Duration::from_millis(200));
                }
                Ok(txns) => {
                    let mut d = Decoded { messages: Vec::new(), ends: Vec::new(), through: feed.position() };
                    for t in txns.iter().filter(|t| t.end > skip_to) {
                        plugin.messages(t, &mut d.messages);
                        d.ends.push(t.end);
                    }
                    if tx.blocking_send(Ok(d)).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.blocking_send(Err(e.into()));
                    return;
                }
            }
        }
    };
    let thread = match std::thread::Builder::new().name("centum-walsender".into()).spawn(run) {
        Ok(t) => Some(t),
        Err(e) => {
            tracing::error!(error = %e, "cannot start a decoder thread");
            None
        }
    };
    (rx, thread)
}

/// Appends a CopyData message holding `payload`'s parts.
pub(crate) fn put_copy_data(buf: &mut bytes::BytesMut, parts: &[&[u8]]) {
    use bytes::BufMut;
    let len: usize = parts.iter().map(|p| p.len()).sum();
    buf.put_u8(b'd');
    buf.put_i32(4 + len as i32);
    for p in parts {
        buf.put_slice(p);
    }
}

/// An XLogData message. Its WAL end is the message's own position, as
/// PostgreSQL's walsender sends a logical message: a subscriber takes it
/// as received, so it must claim nothing not yet sent.
pub(crate) fn put_xlog_data(buf: &mut bytes::BytesMut, at: LogPos, message: &[u8]) {
    let mut head = [0u8; 25];
    head[0] = b'w';
    head[1..9].copy_from_slice(&lsn(at).to_be_bytes());
    head[9..17].copy_from_slice(&lsn(at).to_be_bytes());
    head[17..25].copy_from_slice(&pg_now().to_be_bytes());
    put_copy_data(buf, &[&head, message]);
}

/// A primary keepalive message.
pub(crate) fn put_keepalive(buf: &mut bytes::BytesMut, end: LogPos, reply: bool) {
    let mut m = [0u8; 18];
    m[0] = b'k';
    m[1..9].copy_from_slice(&lsn(end).to_be_bytes());
    m[9..17].copy_from_slice(&pg_now().to_be_bytes());
    m[17] = u8::from(reply);
    put_copy_data(buf, &[&m]);
}

/// A standby status update's flushed position, and whether it asks for a
/// reply; `None` for other messages (hot standby feedback).
pub(crate) fn status_update(data: &[u8]) -> Option<(u64, bool)> {
    if data.first() != Some(&b'r') || data.len() < 34 {
        return None;
    }
    let flush = u64::from_be_bytes(data[9..17].try_into().ok()?);
    Some((flush, data[33] != 0))
}

/// How often a streaming connection sends a keepalive when idle.
const KEEPALIVE: Duration = Duration::from_secs(10);

/// The data directory's system identifier, as IDENTIFY_SYSTEM gives it:
/// stable for a directory, from its path.
fn system_id(dir: &std::path::Path) -> String {
    let path = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut h: u64 = 0xcbf29ce484222325;
    for b in path.to_string_lossy().bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
    }
    (h >> 1).to_string()
}

impl super::Connection {
    fn engine(&self) -> centum_engine::Database {
        self.shared.db.catalog().db().clone()
    }

    /// Runs a replication command and ends with ReadyForQuery.
    pub(super) async fn replication_command(&mut self, cmd: Command) -> std::io::Result<()> {
        let outcome = match cmd {
            Command::IdentifySystem => self.identify_system(),
            Command::CreateSlot { name, temporary, plugin, snapshot } => {
                self.create_slot(&name, temporary, plugin, snapshot)
            }
            Command::DropSlot { name, wait } => self.drop_slot(&name, wait).await,
            Command::Start { slot, logical, lsn, options } => {
                if !logical {
                    Err(super::failure(
                        "0A000",
                        "physical replication is not supported; stream a LOGICAL slot",
                    ))
                } else {
                    match self.stream(&slot, lsn, &options).await? {
                        // The connection is over (the client went, or the
                        // server is shutting down).
                        None => return Ok(()),
                        Some(r) => r,
                    }
                }
            }
        };
        if let Err(f) = outcome {
            self.error(f).await?;
        }
        self.ready().await
    }

    /// DROP_REPLICATION_SLOT; with WAIT, a slot in use is dropped once the
    /// session streaming from it lets it go (a subscriber dropping its
    /// subscription asks while its apply worker's connection is closing).
    async fn drop_slot(&mut self, name: &str, wait: bool) -> super::Step {
        let db = self.engine();
        let mut shutdown = self.shared.shutdown.clone();
        loop {
            match centum_sql::replication::drop_slot(&db, name, self.pid) {
                Err(e) if wait && e.sqlstate() == "55006" => {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(10)) => {}
                        _ = shutdown.changed() => return Err(e.into()),
                    }
                }
                r => {
                    r?;
                    self.temporary_slots.retain(|s| s != name);
                    super::put_command_complete(self.out(), "DROP_REPLICATION_SLOT");
                    return Ok(());
                }
            }
        }
    }

    fn identify_system(&mut self) -> super::Step {
        let end = self.engine().log_end().unwrap_or_default();
        let row = [
            Value::Text(system_id(&self.shared.config.data_dir)),
            Value::Integer(1),
            Value::Text(centum_sql::replication::lsn_text(end)),
            Value::Text(self.session.database().into()),
        ];
        let columns = [
            ("systemid", DataType::Text),
            ("timeline", DataType::Integer),
            ("xlogpos", DataType::Text),
            ("dbname", DataType::Text),
        ];
        self.put_one_row(&columns, &row, "IDENTIFY_SYSTEM");
        Ok(())
    }

    /// A command's reply of one row: description, the row, completion.
    fn put_one_row(&mut self, columns: &[(&str, DataType)], row: &[Value], tag: &str) {
        let columns: Vec<centum_sql::OutputColumn> = columns
            .iter()
            .map(|(name, ty)| centum_sql::OutputColumn { name: (*name).into(), ty: Some(ty.clone()) })
            .collect();
        let buf = self.out();
        super::put_description(buf, &columns, &[]);
        super::put_data_row(buf, row, &columns, &[]);
        super::put_command_complete(buf, tag);
    }

    fn create_slot(
        &mut self,
        name: &str,
        temporary: bool,
        plugin: Option<String>,
        snapshot: Snapshot,
    ) -> super::Step {
        let Some(plugin) = plugin else {
            return Err(super::failure(
                "0A000",
                "physical replication slots are not supported; create a LOGICAL one",
            ));
        };
        let at = match snapshot {
            Snapshot::Use if self.engine().is_logical() => Some(self.session.snapshot_at_log_cut()?),
            _ => None,
        };
        let database = self.session.database().to_string();
        let slot = centum_sql::replication::create_slot(
            &self.engine(),
            name,
            &plugin,
            &database,
            temporary,
            Some(self.pid),
            at,
        )?;
        if temporary {
            self.temporary_slots.push(name.to_string());
        }
        let row = [
            Value::Text(name.into()),
            Value::Text(centum_sql::replication::lsn_text(slot.confirmed)),
            Value::Null,
            Value::Text(plugin),
        ];
        let columns =
            ["slot_name", "consistent_point", "snapshot_name", "output_plugin"].map(|n| (n, DataType::Text));
        self.put_one_row(&columns, &row, "CREATE_REPLICATION_SLOT");
        Ok(())
    }

    /// Streams the slot's changes until the client's CopyDone (`Some`: the
    /// command's outcome) or the end of the connection (`None`).
    async fn stream(
        &mut self,
        name: &str,
        from_lsn: u64,
        options: &[(String, Option<String>)],
    ) -> std::io::Result<Option<super::Step>> {
        let db = self.engine();
        let slot = match centum_sql::replication::acquire_slot(&db, name, self.pid) {
            Ok(s) => s,
            Err(e) => return Ok(Some(Err(e.into()))),
        };
        let plugin = match centum_sql::replication::Plugin::new(&slot.plugin, options, &self.shared.db) {
            Ok(p) => p,
            Err(e) => {
                centum_sql::replication::release_slot(&db, name);
                return Ok(Some(Err(e.into())));
            }
        };
        let slots = db.slots().expect("a slot was acquired").clone();
        let stop = Arc::new(AtomicBool::new(false));
        let skip_to = centum_engine::storage::pos_of_lsn(from_lsn).max(slot.confirmed);
        let (mut rx, decoder) = spawn_decoder(db.clone(), slot.confirmed, skip_to, plugin, stop.clone());
        // CopyBothResponse: text format, no columns.
        {
            use bytes::BufMut;
            let buf = self.out();
            buf.put_u8(b'W');
            buf.put_i32(7);
            buf.put_i8(0);
            buf.put_i16(0);
        }
        use futures::{SinkExt, StreamExt};
        self.socket.flush().await?;
        let mut sent_ends: std::collections::VecDeque<LogPos> = std::collections::VecDeque::new();
        // What the stream has sent everything before: a keepalive claims
        // no more, since a subscriber takes the position it reports as
        // received (a table's copy hands over to the stream there), as
        // PostgreSQL's walsender reports what it has sent.
        let mut sent_through = skip_to;
        let mut keepalive = tokio::time::interval(KEEPALIVE);
        keepalive.tick().await;
        let mut shutdown = self.shared.shutdown.clone();
        let terminated = self.terminated.clone();
        let outcome = loop {
            tokio::select! {
                got = rx.recv() => match got {
                    Some(Ok(d)) => {
                        let buf = self.out();
                        for (at, message) in &d.messages {
                            put_xlog_data(buf, *at, message);
                        }
                        sent_through = sent_through.max(d.through);
                        sent_ends.extend(d.ends);
                        self.socket.flush().await?;
                    }
                    Some(Err(e)) => break Some(Err(e.into())),
                    None => break Some(Err(super::failure("XX000", "the decoder stopped"))),
                },
                m = self.socket.next() => match m {
                    Some(Ok(super::Message::Other(other))) => match *other {
                        pgwire::messages::PgWireFrontendMessage::CopyData(d) => {
                            if let Some((flush, reply)) = status_update(&d.data) {
                                let mut confirmed = None;
                                while sent_ends.front().is_some_and(|&e| lsn(e) <= flush) {
                                    confirmed = sent_ends.pop_front();
                                }
                                if let Some(pos) = confirmed {
                                    // The slots file's fsync: off the worker.
                                    let written = centum_engine::blocking::section(|| slots.confirm(name, pos));
                                    if let Err(e) = written {
                                        break Some(Err(centum_sql::Error::from(centum_engine::Error::from(e)).into()));
                                    }
                                }
                                if reply {
                                    put_keepalive(self.out(), sent_through, false);
                                    self.socket.flush().await?;
                                }
                            }
                        }
                        pgwire::messages::PgWireFrontendMessage::CopyDone(_) => {
                            // The copy's completion, then the command's, as
                            // PostgreSQL sends them: libpq's end of streaming
                            // reads one for the copy and one after it.
                            super::put_empty(self.out(), b'c');
                            super::put_command_complete(self.out(), "COPY 0");
                            super::put_command_complete(self.out(), "START_REPLICATION");
                            break Some(Ok(()));
                        }
                        pgwire::messages::PgWireFrontendMessage::Terminate(_) => break None,
                        _ => {
                            self.fatal("08P01", "unexpected message type during replication").await?;
                            break None;
                        }
                    },
                    Some(Ok(_)) => {
                        self.fatal("08P01", "unexpected message type during replication").await?;
                        break None;
                    }
                    Some(Err(_)) | None => break None,
                },
                _ = keepalive.tick() => {
                    put_keepalive(self.out(), sent_through, false);
                    self.socket.flush().await?;
                }
                _ = shutdown.changed() => {
                    self.fatal("57P01", "terminating connection due to administrator command").await?;
                    break None;
                }
                _ = terminated.notified() => {
                    self.fatal("57P01", "terminating connection due to administrator command").await?;
                    break None;
                }
            }
        };
        stop.store(true, SeqCst);
        centum_sql::replication::release_slot(&db, name);
        // A decoder blocked on a full channel wakes when it closes.
        drop(rx);
        if let Some(thread) = decoder {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
        Ok(outcome)
    }

    /// Drops the session's temporary slots (at its end).
    pub(super) fn drop_temporary_slots(&mut self) {
        let db = self.engine();
        for name in std::mem::take(&mut self.temporary_slots) {
            if let Some(slots) = db.slots() {
                let _ = slots.drop_slot(&name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_as_clients_send_them() {
        assert_eq!(parse("IDENTIFY_SYSTEM"), Some(Ok(Command::IdentifySystem)));
        assert_eq!(
            parse("CREATE_REPLICATION_SLOT \"s1\" LOGICAL \"test_decoding\" (SNAPSHOT 'nothing')"),
            Some(Ok(Command::CreateSlot {
                name: "s1".into(),
                temporary: false,
                plugin: Some("test_decoding".into()),
                snapshot: Snapshot::Nothing,
            }))
        );
        assert_eq!(
            parse("create_replication_slot S2 TEMPORARY LOGICAL test_decoding NOEXPORT_SNAPSHOT;"),
            Some(Ok(Command::CreateSlot {
                name: "s2".into(),
                temporary: true,
                plugin: Some("test_decoding".into()),
                snapshot: Snapshot::Nothing,
            }))
        );
        assert_eq!(
            parse("CREATE_REPLICATION_SLOT \"pg_16_sync_1\" LOGICAL pgoutput (SNAPSHOT 'use')"),
            Some(Ok(Command::CreateSlot {
                name: "pg_16_sync_1".into(),
                temporary: false,
                plugin: Some("pgoutput".into()),
                snapshot: Snapshot::Use,
            }))
        );
        assert_eq!(
            parse("DROP_REPLICATION_SLOT \"s1\" WAIT"),
            Some(Ok(Command::DropSlot { name: "s1".into(), wait: true }))
        );
        assert_eq!(
            parse("START_REPLICATION SLOT \"s1\" LOGICAL 0/0 (\"include-xids\" '0', \"skip-empty-xacts\")"),
            Some(Ok(Command::Start {
                slot: "s1".into(),
                logical: true,
                lsn: 0,
                options: vec![("include-xids".into(), Some("0".into())), ("skip-empty-xacts".into(), None)],
            }))
        );
        assert!(matches!(
            parse("START_REPLICATION SLOT s LOGICAL 1/A0"),
            Some(Ok(Command::Start { lsn: 0x1_0000_00A0, .. }))
        ));
        assert!(matches!(parse("START_REPLICATION 0/0"), Some(Err(_))));
        assert_eq!(parse("SELECT 1"), None);
        assert_eq!(parse("identify_system_table"), None);
    }

    #[test]
    fn status_updates_read_the_flushed_position() {
        let mut m = vec![b'r'];
        for v in [5u64, 7, 3, 9] {
            m.extend_from_slice(&v.to_be_bytes());
        }
        m.push(1);
        assert_eq!(status_update(&m), Some((7, true)));
        assert_eq!(status_update(b"h"), None);
    }
}
