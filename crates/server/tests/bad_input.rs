//! Hostile and careless clients against the real `centum serve` binary.
//!
//! The server is one process for every session: a client that sends
//! garbage, lies about a message's length, floods it with connections,
//! guesses passwords, runs a statement forever or walks away inside a
//! transaction must lose at most its own connection. So every test here
//! keeps a second, healthy session open next to the attack and checks
//! afterwards that it still answers, that the data it committed is intact,
//! that a new connection works and that the server process is alive.
//!
//! ```text
//!  raw TcpStream ─ startup by hand ─▶ negative length, unknown type,
//!                                     Bind counts that lie, truncation,
//!                                     garbage before start-up, 100 MB
//!                                     length, invalid UTF-8
//!  postgres crate ─▶ passwords (SCRAM), 1,000 connects, max_connections,
//!                    cancel, idle-in-transaction timeout, clean shutdown
//! ```
//!
//! Every wait is bounded: sockets have read timeouts and each test runs
//! under a watchdog.

mod common;

use common::Server;
use postgres::error::SqlState;
use postgres::{Client, NoTls};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

/// How long one test may run before the watchdog fails it.
const TEST_LIMIT: Duration = Duration::from_secs(120);
/// How long a raw socket waits for the server's answer.
const READ_LIMIT: Duration = Duration::from_secs(10);

/// Runs `f` on a thread of its own and fails if it has not finished within
/// `limit` (a hung server must fail the test, not hang the suite).
fn within<F: FnOnce() + Send + 'static>(limit: Duration, f: F) {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(limit) {
        Ok(()) => handle.join().unwrap(),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(panic) = handle.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("test ran past {limit:?}"),
    }
}

// --- the healthy session ---------------------------------------------

fn config(server: &Server, user: &str) -> postgres::Config {
    let mut c: postgres::Config = server.conninfo(user).parse().unwrap();
    c.connect_timeout(Duration::from_secs(10));
    c
}

fn connect(server: &Server) -> Client {
    config(server, "centum").connect(NoTls).expect("connect")
}

/// A session that commits a few rows before the attack and checks them
/// after it.
struct Healthy {
    client: Client,
}

impl Healthy {
    fn open(server: &Server) -> Healthy {
        Healthy::with(connect(server))
    }

    fn with(mut client: Client) -> Healthy {
        client
            .batch_execute(
                "CREATE TABLE canary (id int4 PRIMARY KEY, v text); \
                 INSERT INTO canary VALUES (1, 'one'), (2, 'two'), (3, 'three')",
            )
            .unwrap();
        Healthy { client }
    }

    /// The session still answers, its data is intact, a new session can
    /// read it too, and the process is alive.
    fn check(&mut self, server: &mut Server) {
        assert!(server.alive(), "server died: {}", server.log_text());
        self.check_data();
        let mut fresh = connect(server);
        assert_eq!(fresh.query_one("SELECT count(*) FROM canary", &[]).unwrap().get::<_, i64>(0), 3);
        assert!(server.alive(), "server died: {}", server.log_text());
    }

    fn check_data(&mut self) {
        let rows =
            self.client.query("SELECT id, v FROM canary ORDER BY id", &[]).expect("healthy session answers");
        let got: Vec<(i32, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        assert_eq!(got, [(1, "one".into()), (2, "two".into()), (3, "three".into())]);
        let n = self.client.execute("UPDATE canary SET v = v WHERE id = 1", &[]).unwrap();
        assert_eq!(n, 1);
    }
}

/// The error of a connection attempt that must fail.
fn refused(r: Result<Client, postgres::Error>, what: &str) -> postgres::Error {
    match r {
        Ok(_) => panic!("{what}: the connection was accepted"),
        Err(e) => e,
    }
}

/// The SQLSTATE of a driver error, as text.
fn code(e: &postgres::Error) -> Option<&str> {
    e.code().map(SqlState::code)
}

// --- the raw protocol ------------------------------------------------

/// A backend message: its type byte and body.
type Msg = (u8, Vec<u8>);

/// A frontend message: type, length (of itself and the body), body.
fn frame(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![tag];
    m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    m.extend_from_slice(body);
    m
}

fn cstr(s: &[u8]) -> Vec<u8> {
    let mut v = s.to_vec();
    v.push(0);
    v
}

fn query(sql: &[u8]) -> Vec<u8> {
    frame(b'Q', &cstr(sql))
}

fn parse(name: &str, sql: &str, oids: &[u32]) -> Vec<u8> {
    let mut body = cstr(name.as_bytes());
    body.extend(cstr(sql.as_bytes()));
    body.extend((oids.len() as i16).to_be_bytes());
    for o in oids {
        body.extend(o.to_be_bytes());
    }
    frame(b'P', &body)
}

/// A Bind of text parameters to statement `name` (unnamed portal).
fn bind(name: &str, params: &[Option<&[u8]>]) -> Vec<u8> {
    let mut body = cstr(b"");
    body.extend(cstr(name.as_bytes()));
    body.extend(0i16.to_be_bytes());
    body.extend((params.len() as i16).to_be_bytes());
    for p in params {
        match p {
            None => body.extend((-1i32).to_be_bytes()),
            Some(b) => {
                body.extend((b.len() as i32).to_be_bytes());
                body.extend_from_slice(b);
            }
        }
    }
    body.extend(0i16.to_be_bytes());
    frame(b'B', &body)
}

fn execute() -> Vec<u8> {
    let mut body = cstr(b"");
    body.extend(0i32.to_be_bytes());
    frame(b'E', &body)
}

fn sync() -> Vec<u8> {
    frame(b'S', &[])
}

fn startup_packet(user: &str) -> Vec<u8> {
    let mut body = 196608i32.to_be_bytes().to_vec();
    for (k, v) in [("user", user), ("database", "postgres")] {
        body.extend(cstr(k.as_bytes()));
        body.extend(cstr(v.as_bytes()));
    }
    body.push(0);
    let mut m = (body.len() as i32 + 4).to_be_bytes().to_vec();
    m.extend(body);
    m
}

/// The fields of an ErrorResponse or NoticeResponse by their code byte.
fn fields(body: &[u8]) -> HashMap<u8, String> {
    body.split(|&b| b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| (f[0], String::from_utf8_lossy(&f[1..]).into_owned()))
        .collect()
}

/// A client speaking the protocol by hand.
struct Raw {
    s: TcpStream,
}

impl Raw {
    fn connect(server: &Server) -> Raw {
        let s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        s.set_read_timeout(Some(READ_LIMIT)).unwrap();
        s.set_write_timeout(Some(READ_LIMIT)).unwrap();
        s.set_nodelay(true).unwrap();
        Raw { s }
    }

    /// Connected and past start-up (ReadyForQuery read).
    fn ready(server: &Server) -> Raw {
        let mut r = Raw::connect(server);
        r.send(&startup_packet("centum")).unwrap();
        let msgs = r.until(b'Z');
        assert!(msgs.iter().any(|m| m.0 == b'R'), "no AuthenticationOk: {msgs:?}");
        r
    }

    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.s.write_all(bytes)?;
        self.s.flush()
    }

    /// The next message; `None` when the server closed the connection.
    /// Panics when nothing comes within the read timeout.
    fn next(&mut self) -> Option<Msg> {
        let mut head = [0u8; 5];
        match self.s.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if is_timeout(&e) => panic!("no answer from the server within {READ_LIMIT:?}"),
            Err(_) => return None,
        }
        let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]);
        assert!((4..1 << 24).contains(&len), "server sent a message of length {len}");
        let mut body = vec![0u8; len as usize - 4];
        match self.s.read_exact(&mut body) {
            Ok(()) => Some((head[0], body)),
            Err(e) if is_timeout(&e) => panic!("truncated message from the server"),
            Err(_) => None,
        }
    }

    /// Messages up to and including one of type `tag`; panics if the
    /// connection closes first.
    fn until(&mut self, tag: u8) -> Vec<Msg> {
        let mut got = Vec::new();
        loop {
            let m =
                self.next().unwrap_or_else(|| panic!("connection closed before '{}': {got:?}", tag as char));
            let done = m.0 == tag;
            got.push(m);
            if done {
                return got;
            }
        }
    }

    /// Every message until the server closes the connection.
    fn until_closed(&mut self) -> Vec<Msg> {
        let mut got = Vec::new();
        while let Some(m) = self.next() {
            got.push(m);
            assert!(got.len() < 10_000, "the server keeps talking");
        }
        got
    }

    /// `SELECT 1` answers 1 on this connection.
    fn select_one(&mut self) {
        self.send(&query(b"SELECT 1")).unwrap();
        let msgs = self.until(b'Z');
        let row = msgs.iter().find(|m| m.0 == b'D').unwrap_or_else(|| panic!("no row: {msgs:?}"));
        assert_eq!(&row.1[..], &[0, 1, 0, 0, 0, 1, b'1'][..]);
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
}

/// The fields of the first ErrorResponse in `msgs`.
fn first_error(msgs: &[Msg]) -> Option<HashMap<u8, String>> {
    msgs.iter().find(|m| m.0 == b'E').map(|m| fields(&m.1))
}

/// The connection was ended with FATAL `code` (and nothing after it).
fn assert_fatal(msgs: &[Msg], codes: &[&str], what: &str) {
    let e = first_error(msgs).unwrap_or_else(|| panic!("{what}: closed without an ErrorResponse: {msgs:?}"));
    assert_eq!(e.get(&b'S').map(String::as_str), Some("FATAL"), "{what}: {e:?}");
    let c = e.get(&b'C').map(String::as_str).unwrap_or_default();
    assert!(codes.contains(&c), "{what}: SQLSTATE {c}, expected one of {codes:?}: {e:?}");
}

// --- malformed messages ----------------------------------------------

/// Starts a server with a healthy session, lets `attack` loose on a raw
/// connection after start-up, then checks the healthy session, and that
/// the server still shuts down promptly and cleanly (a session thread that
/// died without cleaning up would hold shutdown for its grace period).
fn attack_after_startup(args: &'static [&'static str], attack: fn(Raw)) {
    within(TEST_LIMIT, move || {
        let mut server = Server::start(args);
        let mut healthy = Healthy::open(&server);
        attack(Raw::ready(&server));
        healthy.check(&mut server);
        drop(healthy);
        let started = Instant::now();
        assert!(server.stop(), "unclean exit: {}", server.log_text());
        let took = started.elapsed();
        assert!(took < Duration::from_secs(5), "shutdown took {took:?}: {}", server.log_text());
    });
}

#[test]
fn negative_message_length_is_fatal() {
    attack_after_startup(&[], |mut raw| {
        let mut m = vec![b'Q'];
        m.extend((-5i32).to_be_bytes());
        m.extend(b"SELECT 1\0");
        raw.send(&m).unwrap();
        let msgs = raw.until_closed();
        assert_fatal(&msgs, &["08P01", "54000"], "negative length");
    });
}

#[test]
fn length_below_four_is_fatal() {
    attack_after_startup(&[], |mut raw| {
        let mut m = vec![b'Q'];
        m.extend(2i32.to_be_bytes());
        m.extend(b"SELECT 1\0");
        raw.send(&m).unwrap();
        let msgs = raw.until_closed();
        assert_fatal(&msgs, &["08P01", "54000"], "length 2");
    });
}

/// A length field below 4 is a protocol violation (PostgreSQL: 08P01
/// "invalid message length"), not a message over the size limit.
#[test]
fn invalid_length_is_a_protocol_violation() {
    attack_after_startup(&[], |mut raw| {
        let mut m = vec![b'Q'];
        m.extend((-5i32).to_be_bytes());
        raw.send(&m).unwrap();
        assert_fatal(&raw.until_closed(), &["08P01"], "negative length");
    });
}

#[test]
fn unknown_message_type_is_fatal() {
    attack_after_startup(&[], |mut raw| {
        raw.send(&frame(b'!', b"whatever")).unwrap();
        let msgs = raw.until_closed();
        assert_fatal(&msgs, &["08P01"], "unknown type");
    });
}

/// A Bind that promises three parameters but carries one, the message
/// length matching what is really there: decoding must fail cleanly
/// (PostgreSQL: FATAL 08P01 "insufficient data left in message").
#[test]
fn bind_with_more_parameters_than_bytes() {
    attack_after_startup(&[], |mut raw| {
        raw.send(&[parse("s1", "SELECT $1::int4", &[]), sync()].concat()).unwrap();
        let msgs = raw.until(b'Z');
        assert!(msgs.iter().any(|m| m.0 == b'1'), "ParseComplete: {msgs:?}");
        let mut body = cstr(b"");
        body.extend(cstr(b"s1"));
        body.extend(0i16.to_be_bytes());
        body.extend(3i16.to_be_bytes()); // three parameters...
        body.extend(1i32.to_be_bytes()); // ...but only one follows
        body.push(b'7');
        raw.send(&[frame(b'B', &body), execute(), sync()].concat()).unwrap();
        let msgs = raw.until_closed();
        let e = first_error(&msgs).unwrap_or_else(|| panic!("closed without an ErrorResponse: {msgs:?}"));
        assert_eq!(e.get(&b'C').map(String::as_str), Some("08P01"), "{e:?}");
    });
}

/// A Bind whose one parameter claims more bytes than the message holds,
/// followed in the same write by Execute and Sync (whose bytes a decoder
/// that ignores the message length would read as the parameter).
#[test]
fn bind_parameter_longer_than_its_message() {
    attack_after_startup(&[], |mut raw| {
        raw.send(&[parse("s1", "SELECT $1::text", &[]), sync()].concat()).unwrap();
        raw.until(b'Z');
        let mut body = cstr(b"");
        body.extend(cstr(b"s1"));
        body.extend(0i16.to_be_bytes());
        body.extend(1i16.to_be_bytes());
        body.extend(12i32.to_be_bytes()); // 12 bytes claimed, 2 present
        body.extend(b"hi");
        body.extend(0i16.to_be_bytes());
        raw.send(&[frame(b'B', &body), execute(), sync()].concat()).unwrap();
        let msgs = raw.until_closed();
        let e = first_error(&msgs).unwrap_or_else(|| panic!("closed without an ErrorResponse: {msgs:?}"));
        assert_eq!(e.get(&b'C').map(String::as_str), Some("08P01"), "{e:?}");
        assert!(!msgs.iter().any(|m| m.0 == b'D'), "a row from a malformed Bind: {msgs:?}");
    });
}

/// A Bind whose parameter count is right but whose message length is
/// longer than its contents (trailing junk inside the message).
#[test]
fn bind_with_trailing_junk_inside_its_length() {
    attack_after_startup(&[], |mut raw| {
        raw.send(&[parse("s1", "SELECT $1::int4", &[]), sync()].concat()).unwrap();
        raw.until(b'Z');
        let mut body = cstr(b"");
        body.extend(cstr(b"s1"));
        body.extend(0i16.to_be_bytes());
        body.extend(1i16.to_be_bytes());
        body.extend(1i32.to_be_bytes());
        body.push(b'5');
        body.extend(0i16.to_be_bytes());
        body.extend(b"JUNKJUNK");
        raw.send(&[frame(b'B', &body), execute(), sync()].concat()).unwrap();
        // Either refused (08P01) or the junk ignored; never a misparse
        // of the following messages, never a silent close.
        let mut msgs = Vec::new();
        while let Some(m) = raw.next() {
            let done = m.0 == b'Z';
            msgs.push(m);
            if done {
                break;
            }
        }
        match first_error(&msgs) {
            Some(e) => assert_eq!(e.get(&b'C').map(String::as_str), Some("08P01"), "{e:?}"),
            None => {
                let row = msgs.iter().find(|m| m.0 == b'D').unwrap_or_else(|| panic!("no row: {msgs:?}"));
                assert_eq!(&row.1[..], &[0, 1, 0, 0, 0, 1, b'5'][..]);
                raw.select_one();
            }
        }
    });
}

/// Messages cut short: the header of a Query and part of its text, then
/// the client half-closes. The server sees end of stream inside a message.
#[test]
fn truncated_message_then_eof() {
    attack_after_startup(&[], |mut raw| {
        let mut m = vec![b'Q'];
        m.extend(100i32.to_be_bytes());
        m.extend(b"SELECT");
        raw.send(&m).unwrap();
        raw.s.shutdown(Shutdown::Write).unwrap();
        raw.until_closed();
    });
}

/// Only part of a message header (the type and two length bytes), then
/// the client disappears.
#[test]
fn truncated_header_then_eof() {
    attack_after_startup(&[], |mut raw| {
        raw.send(&[b'P', 0, 0]).unwrap();
        raw.s.shutdown(Shutdown::Write).unwrap();
        raw.until_closed();
    });
}

/// A Parse whose strings are not terminated inside its length.
#[test]
fn parse_without_terminators() {
    attack_after_startup(&[], |mut raw| {
        let m = frame(b'P', b"stmt-without-nul");
        raw.send(&[m, sync()].concat()).unwrap();
        let mut msgs = Vec::new();
        while let Some(m) = raw.next() {
            let done = m.0 == b'Z';
            msgs.push(m);
            if done {
                break;
            }
        }
        let e = first_error(&msgs).unwrap_or_else(|| panic!("closed without an ErrorResponse: {msgs:?}"));
        assert_eq!(e.get(&b'C').map(String::as_str), Some("08P01"), "{e:?}");
    });
}

/// A message whose length covers a complete second message after its own
/// fields: that second message is data, and must never run. (A proxy or
/// firewall that frames messages by their length sees one Bind; a server
/// that frames by what it decoded sees a Bind and a Query.)
#[test]
fn no_message_smuggled_inside_another() {
    within(TEST_LIMIT, || {
        let mut server = Server::start(&[]);
        let mut healthy = Healthy::open(&server);
        let mut raw = Raw::ready(&server);
        raw.send(&[parse("s1", "SELECT $1::int4", &[]), sync()].concat()).unwrap();
        raw.until(b'Z');
        let mut body = cstr(b"");
        body.extend(cstr(b"s1"));
        body.extend(0i16.to_be_bytes());
        body.extend(1i16.to_be_bytes());
        body.extend(1i32.to_be_bytes());
        body.push(b'5');
        body.extend(0i16.to_be_bytes());
        body.extend(query(b"INSERT INTO canary VALUES (99, 'smuggled')"));
        raw.send(&[frame(b'B', &body), execute(), sync()].concat()).unwrap();
        let mut msgs = Vec::new();
        while let Some(m) = raw.next() {
            let done = m.0 == b'Z';
            msgs.push(m);
            if done {
                break;
            }
        }
        let smuggled: i64 =
            healthy.client.query_one("SELECT count(*) FROM canary WHERE id = 99", &[]).unwrap().get(0);
        assert_eq!(smuggled, 0, "a Query hidden inside a Bind ran: {msgs:?}");
        healthy.check(&mut server);
    });
}

/// Whatever the server makes of malformed extended-protocol messages, it
/// loses at most that connection: each attack below ends its connection
/// (the client half-closes, so nothing waits forever), and the healthy
/// session and the process are fine afterwards.
#[test]
fn malformed_extended_messages_lose_only_their_connection() {
    within(TEST_LIMIT, || {
        let mut server = Server::start(&[]);
        let mut healthy = Healthy::open(&server);
        let short_bind = {
            let mut body = cstr(b"");
            body.extend(cstr(b"s1"));
            body.extend(0i16.to_be_bytes());
            body.extend(3i16.to_be_bytes());
            body.extend(1i32.to_be_bytes());
            body.push(b'7');
            frame(b'B', &body)
        };
        let long_parameter = {
            let mut body = cstr(b"");
            body.extend(cstr(b"s1"));
            body.extend(0i16.to_be_bytes());
            body.extend(1i16.to_be_bytes());
            body.extend(1_000_000i32.to_be_bytes());
            body.extend(b"hi");
            frame(b'B', &body)
        };
        let huge_counts = {
            let mut body = cstr(b"");
            body.extend(cstr(b"s1"));
            body.extend((-1i16).to_be_bytes());
            frame(b'B', &body)
        };
        let attacks: [Vec<u8>; 6] = [
            short_bind,
            long_parameter,
            huge_counts,
            frame(b'P', b"stmt-without-nul"),
            frame(b'D', b"S"),
            frame(b'E', b"\0"),
        ];
        for attack in attacks {
            let mut raw = Raw::ready(&server);
            raw.send(&[parse("s1", "SELECT $1::int4", &[]), sync()].concat()).unwrap();
            raw.until(b'Z');
            raw.send(&[attack, execute(), sync()].concat()).unwrap();
            raw.s.shutdown(Shutdown::Write).unwrap();
            raw.until_closed();
            healthy.check(&mut server);
        }
    });
}

/// Garbage instead of a start-up packet: an HTTP request (its first four
/// bytes read as a 1.2 GB length), a packet with a bogus protocol
/// version, and a length of 2. Each is refused or dropped promptly.
#[test]
fn garbage_before_startup() {
    within(TEST_LIMIT, || {
        let mut server = Server::start(&[]);
        let mut healthy = Healthy::open(&server);
        let cases: [&[u8]; 4] = [
            b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
            &[0, 0, 0, 16, 0xde, 0xad, 0xbe, 0xef, b'u', b's', b'e', b'r', 0, b'x', 0, 0],
            &[0, 0, 0, 2, 1, 2, 3, 4],
            &[0xff; 64],
        ];
        for bytes in cases {
            let mut raw = Raw::connect(&server);
            raw.send(bytes).unwrap();
            raw.s.shutdown(Shutdown::Write).unwrap();
            let msgs = raw.until_closed();
            if let Some(e) = first_error(&msgs) {
                assert_eq!(e.get(&b'S').map(String::as_str), Some("FATAL"), "{bytes:?}: {e:?}");
            }
            assert!(!msgs.iter().any(|m| m.0 == b'R'), "{bytes:?} was authenticated: {msgs:?}");
        }
        // The same without the half-close: the server must not wait for
        // the 1.2 GB it was promised.
        let mut raw = Raw::connect(&server);
        raw.send(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let msgs = raw.until_closed();
        assert_fatal(&msgs, &["08P01"], "HTTP request as start-up");
        healthy.check(&mut server);
    });
}

/// A Query announcing 100 MB against a 1 MiB limit: refused at once
/// with FATAL 54000, without waiting for (or allocating) the body.
#[test]
fn oversized_message_is_refused_at_once() {
    within(TEST_LIMIT, || {
        let mut server = Server::start(&["--max-message-bytes", "1048576"]);
        let mut healthy = Healthy::open(&server);
        let mut raw = Raw::ready(&server);
        let mut m = vec![b'Q'];
        m.extend((100_000_000i32 + 4).to_be_bytes());
        m.extend(vec![b'x'; 1000]);
        let started = Instant::now();
        raw.send(&m).unwrap();
        let msgs = raw.until_closed();
        assert_fatal(&msgs, &["54000"], "100 MB message");
        assert!(started.elapsed() < READ_LIMIT);
        // A message just under the limit is still served.
        let mut raw = Raw::ready(&server);
        let sql = format!("SELECT length('{}')", "y".repeat(1_000_000));
        raw.send(&query(sql.as_bytes())).unwrap();
        let msgs = raw.until(b'Z');
        let row = msgs.iter().find(|m| m.0 == b'D').unwrap_or_else(|| panic!("no row: {msgs:?}"));
        assert_eq!(&row.1[6..], b"1000000");
        healthy.check(&mut server);
    });
}

// --- invalid UTF-8 ---------------------------------------------------

#[test]
fn invalid_utf8_in_query_and_bind() {
    within(TEST_LIMIT, || {
        let mut server = Server::start(&[]);
        let mut healthy = Healthy::open(&server);
        let mut raw = Raw::ready(&server);

        // In a simple Query: ERROR 22021 (not a lossy replacement), then
        // ReadyForQuery, and the session goes on.
        raw.send(&query(b"SELECT 'caf\xc3\x28 \xff\xfe'")).unwrap();
        let msgs = raw.until(b'Z');
        let e = first_error(&msgs).unwrap_or_else(|| panic!("invalid UTF-8 accepted: {msgs:?}"));
        assert_eq!(e.get(&b'S').map(String::as_str), Some("ERROR"), "{e:?}");
        assert_eq!(e.get(&b'C').map(String::as_str), Some("22021"), "{e:?}");
        raw.select_one();
        raw.send(&query(b"CREATE TABLE u (id int4 PRIMARY KEY, t text)")).unwrap();
        raw.until(b'Z');
        // A surrogate encoded in UTF-8 form is not UTF-8 either.
        raw.send(&query(b"INSERT INTO u VALUES (1, '\xed\xa0\x80')")).unwrap();
        let msgs = raw.until(b'Z');
        assert!(first_error(&msgs).is_some(), "{msgs:?}");
        raw.select_one();
        // In a Parse: refused the same way, and the extended protocol
        // recovers at Sync.
        let mut body = cstr(b"");
        body.extend(cstr(b"SELECT '\xff'"));
        body.extend(0i16.to_be_bytes());
        raw.send(&[frame(b'P', &body), sync()].concat()).unwrap();
        let msgs = raw.until(b'Z');
        let e = first_error(&msgs).unwrap_or_else(|| panic!("invalid UTF-8 accepted: {msgs:?}"));
        assert_eq!(e.get(&b'C').map(String::as_str), Some("22021"), "{e:?}");

        // In a text-format Bind parameter: 22021, the session goes on.
        raw.send(&[parse("", "INSERT INTO u VALUES ($1, $2)", &[]), sync()].concat()).unwrap();
        raw.until(b'Z');
        let bad: &[u8] = b"\xff\xfe\x80";
        raw.send(&[bind("", &[Some(b"2"), Some(bad)]), execute(), sync()].concat()).unwrap();
        let msgs = raw.until(b'Z');
        let e = first_error(&msgs).unwrap_or_else(|| panic!("invalid UTF-8 accepted: {msgs:?}"));
        assert_eq!(e.get(&b'C').map(String::as_str), Some("22021"), "{e:?}");
        // The same statement with valid text works.
        raw.send(&[bind("", &[Some(b"3"), Some("ok ✓".as_bytes())]), execute(), sync()].concat()).unwrap();
        let msgs = raw.until(b'Z');
        assert!(first_error(&msgs).is_none(), "{msgs:?}");
        raw.select_one();

        let mut c = connect(&server);
        let n: i64 = c.query_one("SELECT count(*) FROM u WHERE id = 2", &[]).unwrap().get(0);
        assert_eq!(n, 0);
        let t: String = c.query_one("SELECT t FROM u WHERE id = 3", &[]).unwrap().get(0);
        assert_eq!(t, "ok ✓");
        // Every stored text is valid UTF-8 (the driver would fail to read it otherwise).
        for row in c.query("SELECT t FROM u", &[]).unwrap() {
            let _: Option<String> = row.get(0);
        }
        healthy.check(&mut server);
    });
}

// --- authentication --------------------------------------------------

/// The `--auth` value for SCRAM: PostgreSQL's spelling `scram-sha-256`
/// if the binary takes it, else the `scram-sha256` clap derives (see
/// `auth_flag_takes_postgres_spelling`).
fn scram() -> &'static str {
    let probe = std::process::Command::new(env!("CARGO_BIN_EXE_centum"))
        .args(["serve", "--auth", "scram-sha-256", "--help"])
        .env_remove("CENTUM_CONFIG")
        .output()
        .expect("run centum");
    if probe.status.success() {
        "scram-sha-256"
    } else {
        "scram-sha256"
    }
}

/// `--auth scram-sha-256`, the name PostgreSQL uses and the one the
/// server's own refusal of trust on a public address tells users to
/// type, must be accepted.
#[test]
fn auth_flag_takes_postgres_spelling() {
    let mut server =
        Server::start_env(&["--auth", "scram-sha-256"], &[("CENTUM_SUPERUSER_PASSWORD", "secret")]);
    assert!(server.alive());
}

#[test]
fn passwords() {
    within(TEST_LIMIT, || {
        let mut server = Server::start_env(&["--auth", scram()], &[("CENTUM_SUPERUSER_PASSWORD", "secret")]);
        let login = |server: &Server, user: &str, password: &str| {
            let mut c = config(server, user);
            c.password(password);
            c.connect(NoTls)
        };
        let wrong = refused(login(&server, "centum", "wrong"), "wrong password");
        assert_eq!(code(&wrong), Some("28P01"), "{wrong:?}");
        let empty = refused(login(&server, "centum", ""), "empty password");
        assert!(empty.code().is_some() || format!("{empty:?}").contains("password"), "{empty:?}");
        let nobody = refused(login(&server, "nobody", "secret"), "unknown user");
        assert_eq!(code(&nobody), Some("28P01"), "{nobody:?}");
        let no_password = refused(config(&server, "centum").connect(NoTls), "no password");
        assert!(format!("{no_password:?}").contains("password"), "{no_password:?}");

        let mut healthy = Healthy::with(login(&server, "centum", "secret").expect("right password"));
        healthy.client.batch_execute("ALTER ROLE centum PASSWORD 'new'").unwrap();
        let old = refused(login(&server, "centum", "secret"), "old password");
        assert_eq!(code(&old), Some("28P01"), "{old:?}");
        login(&server, "centum", "new").expect("new password");

        healthy.client.batch_execute("CREATE ROLE app LOGIN PASSWORD 'p'").unwrap();
        let mut app = login(&server, "app", "p").expect("app logs in");
        let denied = app.query_one("SELECT count(*) FROM canary", &[]).unwrap_err();
        assert_eq!(code(&denied), Some("42501"), "{denied:?}");
        healthy.client.batch_execute("GRANT SELECT ON canary TO app").unwrap();
        assert_eq!(app.query_one("SELECT count(*) FROM canary", &[]).unwrap().get::<_, i64>(0), 3);
        let e = refused(login(&server, "app", "q"), "app, wrong password");
        assert_eq!(code(&e), Some("28P01"), "{e:?}");
        healthy.client.batch_execute("CREATE ROLE nologin PASSWORD 'p'").unwrap();
        let e = refused(login(&server, "nologin", "p"), "a role without LOGIN");
        assert_eq!(code(&e), Some("28000"), "{e:?}");

        // Many wrong guesses in a row change nothing for the right one.
        for i in 0..20 {
            let e = refused(login(&server, "centum", &format!("guess{i}")), "guess");
            assert_eq!(code(&e), Some("28P01"));
        }
        assert!(server.alive());
        healthy.check_data();
        login(&server, "centum", "new").expect("new password after guesses");
        assert!(server.alive(), "server died: {}", server.log_text());
    });
}

/// The answer to a failed SCRAM log-in: severity, SQLSTATE and message.
fn failure(e: &postgres::Error) -> (String, String, String) {
    let db = e.as_db_error().unwrap_or_else(|| panic!("not a server error: {e:?}"));
    (db.severity().to_string(), db.code().code().to_string(), db.message().to_string())
}

/// What the server says, message by message, to a SCRAM client that gets
/// the password wrong: the mechanisms offered, the salt and iterations of
/// server-first, then the error's fields.
fn scram_by_hand(server: &Server, user: &str) -> (Vec<String>, String, String, HashMap<u8, String>) {
    let mut raw = Raw::connect(server);
    raw.send(&startup_packet(user)).unwrap();
    let (tag, body) = raw.next().expect("an authentication request");
    assert_eq!((tag, &body[..4]), (b'R', &10i32.to_be_bytes()[..]), "not SASL: {body:?}");
    let mechanisms: Vec<String> = body[4..]
        .split(|&b| b == 0)
        .filter(|m| !m.is_empty())
        .map(|m| String::from_utf8_lossy(m).into_owned())
        .collect();
    let client_first = b"n,,n=,r=0123456789abcdefghijklmn";
    let mut initial = cstr(b"SCRAM-SHA-256");
    initial.extend((client_first.len() as i32).to_be_bytes());
    initial.extend(client_first);
    raw.send(&frame(b'p', &initial)).unwrap();
    let (tag, body) = raw.next().expect("server-first");
    assert_eq!((tag, &body[..4]), (b'R', &11i32.to_be_bytes()[..]), "not SASLContinue: {body:?}");
    let server_first = String::from_utf8(body[4..].to_vec()).unwrap();
    let attr = |name: &str| {
        server_first
            .split(',')
            .find_map(|a| a.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {server_first}"))
            .to_string()
    };
    let (nonce, salt, iterations) = (attr("r="), attr("s="), attr("i="));
    // A proof of the right length that is wrong for every password.
    let client_final = format!("c=biws,r={nonce},p={}=", "A".repeat(43));
    raw.send(&frame(b'p', client_final.as_bytes())).unwrap();
    let rest = raw.until_closed();
    assert_eq!(rest.len(), 1, "{user}: more than the error: {rest:?}");
    let error = first_error(&rest).unwrap_or_else(|| panic!("{user}: no error: {rest:?}"));
    (mechanisms, salt, iterations, error)
}

/// Under SCRAM, a log-in as a role that does not exist fails exactly as a
/// wrong password does (FATAL 28P01 naming the user as given), so role
/// names cannot be found by trying them; so do roles without a password
/// and, short of the right password, roles without LOGIN. The exchange
/// before the answer has the same shape too: an unknown role is offered a
/// salt of the same length and the same iterations, the same salt on every
/// try, and the same after a restart.
#[test]
fn unknown_roles_fail_as_wrong_passwords_do() {
    within(TEST_LIMIT, || {
        let mut server = Server::start_env(&["--auth", scram()], &[("CENTUM_SUPERUSER_PASSWORD", "secret")]);
        let login = |server: &Server, user: &str, password: &str| {
            let mut c = config(server, user);
            c.password(password);
            c.connect(NoTls)
        };
        let mut healthy = Healthy::with(login(&server, "centum", "secret").expect("right password"));
        healthy.client.batch_execute("CREATE ROLE nopw LOGIN; CREATE ROLE nolog PASSWORD 'p'").unwrap();
        for user in ["centum", "nobody", "Centum", "nopw", "nolog", "no one \"here\""] {
            let mut c = config(&server, "centum");
            c.user(user).password("wrong");
            let e = refused(c.connect(NoTls), user);
            let expected = format!("password authentication failed for user \"{user}\"");
            assert_eq!(failure(&e), ("FATAL".into(), "28P01".into(), expected), "{user}");
        }
        // Only the right password learns that the role may not log in.
        let e = refused(login(&server, "nolog", "p"), "nolog, right password");
        let expected = "role \"nolog\" is not permitted to log in".to_string();
        assert_eq!(failure(&e), ("FATAL".into(), "28000".into(), expected));

        let real = scram_by_hand(&server, "centum");
        let unknown = scram_by_hand(&server, "nobody");
        assert_eq!(real.0, unknown.0, "mechanisms offered");
        assert_eq!(real.1.len(), unknown.1.len(), "salt length: {real:?} {unknown:?}");
        assert_eq!(real.2, unknown.2, "iterations");
        // Every field alike, but for the user the message names.
        let without_name = |e: &HashMap<u8, String>, user: &str| {
            let mut e = e.clone();
            e.entry(b'M').and_modify(|m| *m = m.replace(&format!("\"{user}\""), "\"?\""));
            e
        };
        assert_eq!(without_name(&real.3, "centum"), without_name(&unknown.3, "nobody"));
        assert_eq!(unknown.3.get(&b'C').map(String::as_str), Some("28P01"));
        assert_eq!(scram_by_hand(&server, "nobody").1, unknown.1, "the mock salt changed between tries");
        assert_ne!(scram_by_hand(&server, "somebody").1, unknown.1, "two unknown roles, one salt");
        healthy.check_data();
        drop(healthy);

        assert!(server.stop(), "unclean exit: {}", server.log_text());
        server.launch(&["--auth", scram()], &[]);
        assert_eq!(scram_by_hand(&server, "centum").1, real.1);
        assert_eq!(scram_by_hand(&server, "nobody").1, unknown.1, "the mock salt changed at a restart");
        assert!(server.alive(), "server died: {}", server.log_text());
    });
}

/// Under trust nothing is secret, and the answers are PostgreSQL's: an
/// unknown role does not exist, a NOLOGIN one may not log in (28000).
#[test]
fn trust_names_unknown_and_nologin_roles() {
    within(TEST_LIMIT, || {
        let server = Server::start(&[]);
        connect(&server).batch_execute("CREATE ROLE nolog").unwrap();
        let e = refused(config(&server, "nobody").connect(NoTls), "unknown role");
        assert_eq!(failure(&e), ("FATAL".into(), "28000".into(), "role \"nobody\" does not exist".into()));
        let e = refused(config(&server, "nolog").connect(NoTls), "NOLOGIN role");
        let expected = "role \"nolog\" is not permitted to log in".to_string();
        assert_eq!(failure(&e), ("FATAL".into(), "28000".into(), expected));
    });
}

/// A session reports the role it logged in as.
#[test]
fn current_user_is_the_login_role() {
    within(TEST_LIMIT, || {
        let server = Server::start(&[]);
        connect(&server).batch_execute("CREATE ROLE app LOGIN").unwrap();
        let mut app = config(&server, "app").connect(NoTls).expect("app logs in");
        let row = app.query_one("SELECT current_user, session_user", &[]).unwrap();
        assert_eq!((row.get::<_, String>(0), row.get::<_, String>(1)), ("app".into(), "app".into()));
    });
}

// --- connections -----------------------------------------------------

/// A thousand connections in quick succession, half dropped right after
/// the start-up packet, half closed properly with Terminate. No
/// connection slot may leak: afterwards all of them can be used at once.
#[test]
fn a_thousand_rapid_connections() {
    within(Duration::from_secs(240), || {
        let max = 20;
        let mut server = Server::start(&["--max-connections", &max.to_string()]);
        let mut healthy = Healthy::open(&server);
        let started = Instant::now();
        for i in 0..1000 {
            let mut raw = Raw::connect(&server);
            raw.send(&startup_packet("centum")).unwrap();
            if i % 2 == 1 {
                raw.until(b'Z');
                raw.send(&frame(b'X', &[])).unwrap();
            }
        }
        let took = started.elapsed();
        assert!(took < Duration::from_secs(180), "1000 connections took {took:?}");
        healthy.check(&mut server);
        // Every slot but the healthy one's is free again (closing is
        // asynchronous: retry for a while).
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let opened: Result<Vec<Client>, postgres::Error> =
                (0..max - 1).map(|_| config(&server, "centum").connect(NoTls)).collect();
            match opened {
                Ok(clients) => {
                    assert_eq!(clients.len(), max - 1);
                    break;
                }
                Err(e) if Instant::now() < deadline && code(&e) == Some("53300") => {
                    std::thread::sleep(Duration::from_millis(200))
                }
                Err(e) => panic!("connection slots leaked: {e:?}"),
            }
        }
        healthy.check_data();
    });
}

#[test]
fn max_connections() {
    within(TEST_LIMIT, || {
        let mut server = Server::start(&["--max-connections", "3"]);
        let mut healthy = Healthy::open(&server);
        let second = connect(&server);
        let third = connect(&server);
        let e = refused(config(&server, "centum").connect(NoTls), "a fourth connection");
        assert_eq!(code(&e), Some("53300"), "{e:?}");
        // A raw fourth sees FATAL 53300 then the close.
        let mut raw = Raw::connect(&server);
        raw.send(&startup_packet("centum")).unwrap();
        assert_fatal(&raw.until_closed(), &["53300"], "fourth connection");
        drop(second);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut fourth = loop {
            match config(&server, "centum").connect(NoTls) {
                Ok(c) => break c,
                Err(e) if Instant::now() < deadline && code(&e) == Some("53300") => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Err(e) => panic!("no slot after closing one: {e:?}"),
            }
        };
        assert_eq!(fourth.query_one("SELECT count(*) FROM canary", &[]).unwrap().get::<_, i64>(0), 3);
        healthy.check_data();
        drop(third);
        assert!(server.alive());
    });
}

/// The threads of process `pid` (Linux); `None` where that cannot be read.
fn threads(pid: u32) -> Option<usize> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Threads:")).and_then(|n| n.trim().parse().ok())
}

/// Sockets that connect and never send a start-up packet can neither make
/// the server spawn without end nor lock real clients out: with 200 of
/// them open, more than the start-up slots (max_connections + 64), a
/// client still connects at once, since the oldest silent start-up makes
/// room for it. The threads stay within the bound, and with so many
/// starting at once the silent ones are closed after a few seconds rather
/// than the usual 30. The open session is unharmed throughout.
#[test]
fn silent_sockets_do_not_lock_clients_out() {
    within(TEST_LIMIT, || {
        let max = 10;
        let mut server = Server::start(&["--max-connections", &max.to_string()]);
        let mut healthy = Healthy::open(&server);
        let pid = server.pid().expect("running");
        let before = threads(pid);
        let mut silent: Vec<(Raw, Instant)> =
            (0..200).map(|_| (Raw::connect(&server), Instant::now())).collect();

        let asked = Instant::now();
        let mut client = config(&server, "centum").connect(NoTls).expect("a client during the flood");
        assert_eq!(client.query_one("SELECT count(*) FROM canary", &[]).unwrap().get::<_, i64>(0), 3);
        let took = asked.elapsed();
        assert!(took < Duration::from_secs(10), "the client waited {took:?} for the start-up limit");
        healthy.check_data();

        // Threads: at most the bound, once the threads of the start-ups
        // closed to make room have ended (they end within moments).
        if let Some(before) = before {
            let bound = before + max + 64;
            let deadline = Instant::now() + Duration::from_secs(10);
            while threads(pid).is_some_and(|n| n > bound) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let now = threads(pid).unwrap_or(0);
            assert!(now <= bound, "{now} threads for 200 silent sockets (bound {bound})");
        }

        // The youngest silent socket is still open, and is closed by the
        // short limit, well before the usual 30 s.
        let (youngest, opened) = silent.last_mut().unwrap();
        youngest.s.set_read_timeout(Some(Duration::from_secs(40))).unwrap();
        let mut buf = [0u8; 1];
        let r = youngest.s.read(&mut buf);
        assert!(matches!(r, Ok(0) | Err(_)), "a silent socket was sent something: {r:?}");
        let lived = opened.elapsed();
        assert!(
            lived < Duration::from_secs(20),
            "a silent socket stayed open {lived:?}: {}",
            server.log_text()
        );

        drop((client, silent));
        healthy.check(&mut server);
    });
}

// --- cancel and timeouts ---------------------------------------------

#[test]
fn cancel_a_long_statement() {
    within(TEST_LIMIT, || {
        let mut server = Server::start(&[]);
        let mut healthy = Healthy::open(&server);
        let mut client = connect(&server);
        let token = client.cancel_token();
        let started = Instant::now();
        let runner = std::thread::spawn(move || {
            let r = client.query_one("SELECT count(*) FROM generate_series(1, 200000000)", &[]);
            (client, r.map(|row| row.get::<_, i64>(0)))
        });
        std::thread::sleep(Duration::from_millis(500));
        token.cancel_query(NoTls).expect("cancel request sent");
        let (mut client, r) = runner.join().unwrap();
        let e = r.expect_err("the statement was cancelled");
        assert_eq!(code(&e), Some("57014"), "{e:?}");
        assert!(started.elapsed() < Duration::from_secs(30), "cancel took {:?}", started.elapsed());
        assert_eq!(client.query_one("SELECT 1 + 1", &[]).unwrap().get::<_, i32>(0), 2);

        // Cancel inside a block fails the block, which ROLLBACK ends.
        client.batch_execute("BEGIN; INSERT INTO canary VALUES (9, 'nine')").unwrap();
        let token = client.cancel_token();
        let runner = std::thread::spawn(move || {
            let r = client.query_one("SELECT count(*) FROM generate_series(1, 200000000)", &[]);
            (client, r.map(|row| row.get::<_, i64>(0)))
        });
        std::thread::sleep(Duration::from_millis(500));
        token.cancel_query(NoTls).expect("cancel request sent");
        let (mut client, r) = runner.join().unwrap();
        assert_eq!(code(&r.expect_err("cancelled")), Some("57014"));
        let e = client.query_one("SELECT 1", &[]).expect_err("the block has failed");
        assert_eq!(code(&e), Some("25P02"), "{e:?}");
        client.batch_execute("ROLLBACK").unwrap();
        assert_eq!(client.query_one("SELECT count(*) FROM canary", &[]).unwrap().get::<_, i64>(0), 3);

        // A cancel request with a wrong secret, or for an idle session,
        // cancels nothing later on.
        let mut raw = Raw::connect(&server);
        let mut m = 16i32.to_be_bytes().to_vec();
        m.extend(80877102i32.to_be_bytes());
        m.extend(1i32.to_be_bytes());
        m.extend(2i32.to_be_bytes());
        raw.send(&m).unwrap();
        raw.until_closed();
        client.cancel_token().cancel_query(NoTls).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let n: i64 = client.query_one("SELECT count(*) FROM generate_series(1, 1000)", &[]).unwrap().get(0);
        assert_eq!(n, 1000, "a cancel sent while idle must not hit the next statement");
        healthy.check(&mut server);
    });
}

#[test]
fn idle_in_transaction_timeout() {
    within(TEST_LIMIT, || {
        let mut server = Server::start(&["--idle-in-transaction-timeout-ms", "300"]);
        let mut healthy = Healthy::open(&server);
        let mut idler = connect(&server);
        idler.batch_execute("BEGIN; INSERT INTO canary VALUES (7, 'seven')").unwrap();
        std::thread::sleep(Duration::from_millis(1000));
        let e = idler.query_one("SELECT 1", &[]).expect_err("the session was closed");
        if let Some(c) = code(&e) {
            assert_eq!(c, "25P03", "{e:?}");
        }
        assert!(idler.is_closed() || idler.query_one("SELECT 1", &[]).is_err());
        // Its insert was rolled back: the healthy session (idle outside a
        // block for the same second) still works and sees three rows.
        healthy.check(&mut server);
        let mut outside = connect(&server);
        std::thread::sleep(Duration::from_millis(1000));
        assert_eq!(outside.query_one("SELECT count(*) FROM canary", &[]).unwrap().get::<_, i64>(0), 3);
        // The row it held is free for others.
        outside.execute("INSERT INTO canary VALUES (7, 'seven')", &[]).unwrap();
        outside.execute("DELETE FROM canary WHERE id = 7", &[]).unwrap();
        // A block that keeps talking is not idle.
        outside.batch_execute("BEGIN").unwrap();
        for _ in 0..6 {
            std::thread::sleep(Duration::from_millis(100));
            outside.query_one("SELECT 1", &[]).unwrap();
        }
        outside.batch_execute("COMMIT").unwrap();
        healthy.check(&mut server);
    });
}

// --- shutdown --------------------------------------------------------

#[test]
fn clean_shutdown_keeps_committed_and_drops_uncommitted() {
    within(TEST_LIMIT, || {
        let mut server = Server::start(&[]);
        let mut healthy = Healthy::open(&server);
        healthy.client.batch_execute("INSERT INTO canary VALUES (4, 'four'), (5, 'five')").unwrap();
        let mut open = connect(&server);
        open.batch_execute(
            "BEGIN; INSERT INTO canary VALUES (6, 'six'); UPDATE canary SET v = 'changed' WHERE id = 1",
        )
        .unwrap();
        let started = Instant::now();
        assert!(server.stop(), "unclean exit: {}", server.log_text());
        assert!(started.elapsed() < Duration::from_secs(15), "shutdown took {:?}", started.elapsed());
        // Both sessions were told, or at least disconnected.
        let e = healthy.client.query_one("SELECT 1", &[]).expect_err("server is gone");
        if let Some(c) = code(&e) {
            assert_eq!(c, "57P01", "{e:?}");
        }
        assert!(open.query_one("SELECT 1", &[]).is_err());

        server.launch(&[], &[]);
        let mut c = connect(&server);
        let rows = c.query("SELECT id, v FROM canary ORDER BY id", &[]).unwrap();
        let got: Vec<(i32, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        assert_eq!(
            got,
            [
                (1, "one".into()),
                (2, "two".into()),
                (3, "three".into()),
                (4, "four".into()),
                (5, "five".into())
            ]
        );
        assert!(server.stop(), "unclean exit: {}", server.log_text());
    });
}

/// Over the extended protocol, a statement that fails at Parse (an unknown
/// table, bad syntax) fails its block like one that fails at Execute: the
/// statements after it get 25P02 and COMMIT rolls back, so a block is never
/// committed without one of its statements. Utility statements prepare
/// like any other: PREPARE, EXECUTE (with the named statement's columns)
/// and VACUUM in PostgreSQL's spellings.
#[test]
fn a_statement_that_fails_to_prepare_fails_its_block() {
    within(TEST_LIMIT, || {
        let server = Server::start(&[]);
        let mut c = connect(&server);
        c.batch_execute("CREATE TABLE atom (id int PRIMARY KEY)").unwrap();
        for bad in ["SELECT * FROM no_such_table", "SELEC 1", "INSERT INTO atom VALUES ('x')"] {
            c.batch_execute("BEGIN").unwrap();
            c.execute("INSERT INTO atom VALUES ($1)", &[&1i32]).unwrap();
            assert!(c.prepare(bad).is_err(), "{bad} prepared");
            let e = c.execute("INSERT INTO atom VALUES ($1)", &[&2i32]).expect_err("the block has failed");
            assert_eq!(code(&e), Some("25P02"), "after {bad}: {e:?}");
            let e = c.prepare("SELECT 1").expect_err("nothing prepares in a failed block");
            assert_eq!(code(&e), Some("25P02"), "{e:?}");
            c.execute("COMMIT", &[]).unwrap();
            let n: i64 = c.query_one("SELECT count(*) FROM atom", &[]).unwrap().get(0);
            assert_eq!(n, 0, "COMMIT of a block failed by {bad} kept its rows");
        }

        c.execute("PREPARE twice AS SELECT $1::int * 2 AS doubled", &[]).unwrap();
        let rows = c.query("EXECUTE twice(21)", &[]).unwrap();
        assert_eq!(rows[0].columns()[0].name(), "doubled");
        assert_eq!(rows[0].get::<_, i32>(0), 42);
        let e = c.query("EXECUTE nothing_prepared(1)", &[]).expect_err("no such statement");
        assert_eq!(code(&e), Some("26000"), "{e:?}");
        c.execute("DEALLOCATE twice", &[]).unwrap();
        for vacuum in ["VACUUM", "VACUUM atom", "VACUUM (ANALYZE, VERBOSE) atom", "vacuum full"] {
            c.execute(vacuum, &[]).unwrap_or_else(|e| panic!("{vacuum}: {e:?}"));
        }
        let e = c.execute("VACUUMED", &[]).expect_err("not VACUUM");
        assert_eq!(code(&e), Some("42601"), "{e:?}");
        // As in PostgreSQL, VACUUM runs alone: not in a block, and not
        // with other statements in one request, whose implicit block it
        // fails whole (it once ran alone and dropped the others unseen).
        let before: i64 = c.query_one("SELECT count(*) FROM atom", &[]).unwrap().get(0);
        for together in
            ["VACUUM atom; INSERT INTO atom VALUES (1001)", "INSERT INTO atom VALUES (1001); VACUUM"]
        {
            let e = c.batch_execute(together).expect_err("VACUUM with another statement");
            assert_eq!(code(&e), Some("25001"), "{together}: {e:?}");
        }
        let after: i64 = c.query_one("SELECT count(*) FROM atom", &[]).unwrap().get(0);
        assert_eq!(after, before, "a request that failed kept a row");
        c.batch_execute("BEGIN").unwrap();
        let e = c.batch_execute("VACUUM").expect_err("VACUUM in a block");
        assert_eq!(code(&e), Some("25001"), "{e:?}");
        c.batch_execute("ROLLBACK").unwrap();
    });
}

/// A second server on a data directory in use is refused before it touches
/// a file (two servers would write the same log and checkpoints), and the
/// first goes on; once the first is gone, the directory opens again.
#[test]
fn a_second_server_on_the_same_data_directory_is_refused() {
    let mut server = Server::start(&[]);
    let mut c = connect(&server);
    c.batch_execute("CREATE TABLE kept (id int PRIMARY KEY); INSERT INTO kept VALUES (1)").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_centum"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(server.dir.path().join("data"))
        .output()
        .unwrap();
    assert!(!out.status.success(), "a second server started on the same directory");
    let err = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(err.contains("in use by another centum server"), "{err}");
    c.batch_execute("INSERT INTO kept VALUES (2)").unwrap();
    assert!(server.stop(), "unclean exit: {}", server.log_text());
    server.launch(&[], &[]);
    let n: i64 = connect(&server).query_one("SELECT count(*) FROM kept", &[]).unwrap().get(0);
    assert_eq!(n, 2);
}

/// A constraint violation names its schema, table, column and constraint
/// in the error's fields, with the key in DETAIL, as PostgreSQL's do:
/// drivers and ORMs read them (psycopg's `diag.constraint_name`).
#[test]
fn constraint_errors_name_their_table_and_constraint() {
    let s = Server::start(&[]);
    let mut c = Client::connect(&s.conninfo("centum"), NoTls).unwrap();
    c.batch_execute(
        "CREATE SCHEMA shop; \
         CREATE TABLE shop.p (id int PRIMARY KEY, sku text UNIQUE, qty int CONSTRAINT qty_pos CHECK (qty > 0)); \
         CREATE TABLE shop.c (id int PRIMARY KEY, p_id int NOT NULL REFERENCES shop.p (id)); \
         INSERT INTO shop.p VALUES (1, 'a', 1); INSERT INTO shop.c VALUES (1, 1)",
    )
    .unwrap();
    let mut fields = |sql: &str| {
        let e = c.batch_execute(sql).unwrap_err();
        let d = e.as_db_error().expect("a server error");
        (
            d.code().code().to_string(),
            d.schema().map(String::from),
            d.table().map(String::from),
            d.column().map(String::from),
            d.constraint().map(String::from),
            d.detail().map(String::from),
        )
    };
    let s = |x: &str| Some(x.to_string());
    assert_eq!(
        fields("INSERT INTO shop.p VALUES (2, 'a', 1)"),
        ("23505".into(), s("shop"), s("p"), None, s("p_sku_key"), None)
    );
    assert_eq!(
        fields("INSERT INTO shop.p VALUES (2, 'b', 0)"),
        ("23514".into(), s("shop"), s("p"), None, s("qty_pos"), None)
    );
    assert_eq!(
        fields("INSERT INTO shop.c VALUES (2, NULL)"),
        ("23502".into(), s("shop"), s("c"), s("p_id"), None, None)
    );
    assert_eq!(
        fields("INSERT INTO shop.c VALUES (2, 9)"),
        (
            "23503".into(),
            s("shop"),
            s("c"),
            None,
            s("c_p_id_fkey"),
            s("Key (p_id)=(9) is not present in table \"shop.p\".")
        )
    );
    assert_eq!(
        fields("DELETE FROM shop.p"),
        (
            "23503".into(),
            s("shop"),
            s("c"),
            None,
            s("c_p_id_fkey"),
            s("Key (id)=(1) is still referenced from table \"shop.c\".")
        )
    );
}
