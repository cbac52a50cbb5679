//! Pipelines with an error in the middle, sent message by message to the
//! real server and to PostgreSQL, must get the same answers: the same
//! messages in the same order, the same SQLSTATEs, the same transaction
//! status at each Sync, and the same rows left behind.
//!
//! A pipeline here is what libpq's pipeline mode and pgbench's
//! `\startpipeline` send: Parse/Bind/Execute for several statements and
//! one Sync. Until the Sync they run in one implicit transaction (unless
//! the pipeline opens a block itself); after an error every message up to
//! the Sync is skipped, and the Sync ends the failed implicit transaction
//! (rolling back what the pipeline wrote) or leaves an explicit block
//! failed until ROLLBACK.
//!
//! The transcripts leave out what legitimately differs between the two
//! servers (ParameterStatus, notices, error texts) and are compared whole.
//! The same raw connection also checks the binary forms of an enum type
//! (the label's bytes) and of a composite type (PostgreSQL's
//! `record_send`) both ways.

mod common;
#[path = "../../sql/tests/pg/mod.rs"]
mod pg;

use common::wire::{cstr, message, parse_bind_execute, statement, sync, Wire};
use common::Server;
use std::io::{Read, Write};
use std::time::Duration;

/// The pipelines, each sent as one write and answered up to its Sync's
/// ReadyForQuery; the last of each group shows what was left behind.
fn rounds() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let s = statement;
    vec![
        ("setup", vec![s("DROP TABLE IF EXISTS p"), s("CREATE TABLE p (a int PRIMARY KEY)"), sync()]),
        (
            "an error at execution rolls back the implicit transaction and skips the rest",
            vec![
                s("INSERT INTO p VALUES (1)"),
                s("SELECT 1 / (count(*) - count(*)) FROM p"),
                s("INSERT INTO p VALUES (2)"),
                sync(),
            ],
        ),
        ("nothing of it is left", vec![s("SELECT count(*) FROM p"), sync()]),
        (
            "a pipeline without errors commits at its Sync",
            vec![
                s("INSERT INTO p VALUES (3)"),
                s("INSERT INTO p VALUES (4)"),
                s("SELECT a FROM p ORDER BY a"),
                sync(),
            ],
        ),
        (
            "a constraint error in the middle",
            vec![
                s("INSERT INTO p VALUES (5)"),
                s("INSERT INTO p VALUES (3)"),
                s("INSERT INTO p VALUES (6)"),
                sync(),
            ],
        ),
        ("after it, only the earlier pipeline's rows", vec![s("SELECT a FROM p ORDER BY a"), sync()]),
        (
            "a syntax error at Parse skips to the Sync; the next Sync group runs",
            vec![
                s("INSERT INTO p VALUES (7)"),
                s("SELEC 1"),
                s("INSERT INTO p VALUES (8)"),
                sync(),
                s("SELECT count(*) FROM p"),
                sync(),
            ],
        ),
        (
            "an explicit block stays failed after the Sync",
            vec![
                s("BEGIN"),
                s("INSERT INTO p VALUES (9)"),
                s("SELECT 1 / (count(*) - count(*)) FROM p"),
                s("INSERT INTO p VALUES (10)"),
                sync(),
            ],
        ),
        ("in the failed block, statements are refused", vec![s("SELECT 1"), sync()]),
        ("ROLLBACK ends it", vec![s("ROLLBACK"), s("SELECT a FROM p ORDER BY a"), sync()]),
        (
            "an explicit block committed inside a pipeline",
            vec![
                s("BEGIN"),
                s("INSERT INTO p VALUES (11)"),
                s("COMMIT"),
                s("INSERT INTO p VALUES (11)"),
                sync(),
            ],
        ),
        ("the committed block's row stays", vec![s("SELECT a FROM p ORDER BY a"), sync()]),
    ]
}

fn transcript(port: u16, user: &str) -> String {
    let mut w = Wire::connect(port, user);
    let mut out = String::new();
    for (what, parts) in rounds() {
        out.push_str(&format!("-- {what}\n"));
        let syncs = parts.iter().filter(|p| **p == sync()).count();
        for line in w.round(&parts.concat(), syncs) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn pipelines_with_errors_answer_as_postgresql() {
    let server = Server::start(&[]);
    let centum = transcript(server.port, "centum");
    // What PostgreSQL answers must hold for Centum whether or not
    // PostgreSQL is here to ask: the error codes and the statuses.
    for want in [
        "ErrorResponse 22012\nReadyForQuery I",
        "ErrorResponse 23505\nReadyForQuery I",
        "ErrorResponse 42601\nReadyForQuery I",
        "ErrorResponse 22012\nReadyForQuery E",
        "ErrorResponse 25P02\nReadyForQuery E",
    ] {
        assert!(centum.contains(want), "missing {want:?} in:\n{centum}");
    }
    let Some(bin) = pg::required_bin("tests/pipeline.rs: the comparison with PostgreSQL") else { return };
    let postgres = pg::Server::start(bin);
    let expected = transcript(postgres.port, "postgres");
    assert_eq!(centum, expected, "Centum (left) and PostgreSQL (right) differ");
}

/// asyncpg prepares with Parse, Describe and Flush, then waits for the
/// answer before it sends Sync: an error at Parse must come out at the
/// Flush, as PostgreSQL sends it, or the client waits for ever.
#[test]
fn an_error_before_sync_is_sent_at_flush() {
    let server = Server::start(&[]);
    let mut w = Wire::connect(server.port, "centum");
    let mut parse = Vec::new();
    cstr(&mut parse, "");
    cstr(&mut parse, "SELECT no_such_function(1)");
    parse.extend_from_slice(&0i16.to_be_bytes());
    let mut describe = vec![b'S'];
    cstr(&mut describe, "");
    let bytes = [message(b'P', &parse), message(b'D', &describe), message(b'H', &[])].concat();
    w.stream.write_all(&bytes).unwrap();
    w.stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut head = [0u8; 5];
    w.stream.read_exact(&mut head).expect("an answer before Sync");
    assert_eq!(head[0], b'E', "the first answer is the error");
    let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize - 4;
    let mut body = vec![0u8; len];
    w.stream.read_exact(&mut body).unwrap();
    assert!(body.windows(6).any(|x| x == b"C42883"), "{}", String::from_utf8_lossy(&body));
    assert_eq!(w.round(&sync(), 1), vec!["ReadyForQuery I".to_string()]);
}

/// Parse (unnamed, no parameter types), Bind with one parameter and the
/// results both in binary, Execute: the extended protocol's binary path.
fn binary_statement(sql: &str, param: &[u8]) -> Vec<u8> {
    // One parameter format (binary), one parameter, one result format
    // (binary).
    let mut rest = Vec::new();
    for word in [1i16, 1, 1] {
        rest.extend_from_slice(&word.to_be_bytes());
    }
    rest.extend_from_slice(&(param.len() as i32).to_be_bytes());
    rest.extend_from_slice(param);
    rest.extend_from_slice(&1i16.to_be_bytes());
    rest.extend_from_slice(&1i16.to_be_bytes());
    parse_bind_execute(sql, &rest)
}

/// An enum type's binary form is its label's bytes (PostgreSQL's
/// `enum_send`/`enum_recv`): a label bound in binary is read against the
/// type's labels (22P02 for one it lacks), and results in binary come
/// back as labels, in declaration order.
#[test]
fn enum_labels_travel_in_binary() {
    let server = Server::start(&[]);
    let mut w = Wire::connect(server.port, "centum");
    let setup = [
        statement("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')"),
        statement("CREATE TABLE feelings (id int PRIMARY KEY, m mood)"),
        statement("INSERT INTO feelings VALUES (1, 'happy'), (2, 'sad'), (3, 'ok')"),
        sync(),
    ];
    let done = w.round(&setup.concat(), 1);
    assert_eq!(done.last().map(String::as_str), Some("ReadyForQuery I"), "{done:?}");
    let query = "SELECT m, id FROM feelings WHERE m >= $1 ORDER BY m";
    let got = w.round(&[binary_statement(query, b"ok"), sync()].concat(), 1);
    let rows: Vec<&str> = got.iter().filter(|l| l.starts_with("DataRow")).map(String::as_str).collect();
    // id is an int4 in binary: four big-endian bytes.
    assert_eq!(rows, ["DataRow ok|\0\0\0\u{3}", "DataRow happy|\0\0\0\u{1}"], "{got:?}");
    let bad = w.round(&[binary_statement(query, b"angry"), sync()].concat(), 1);
    assert!(bad.contains(&"ErrorResponse 22P02".to_string()), "{bad:?}");
}

/// A composite value's binary form is PostgreSQL's `record_send`: a field
/// count, then per field its type OID, a length (-1: NULL) and its binary
/// form. A value bound so is read field by field (a wrong field count is
/// 22P03), and results come back so.
#[test]
fn composite_values_travel_in_binary() {
    let server = Server::start(&[]);
    let mut w = Wire::connect(server.port, "centum");
    let setup = [
        statement("CREATE TYPE pair AS (a int, b text)"),
        statement("CREATE TABLE pairs (id int PRIMARY KEY, p pair)"),
        statement("INSERT INTO pairs VALUES (1, '(7,seven)'), (2, '(8,)')"),
        sync(),
    ];
    let done = w.round(&setup.concat(), 1);
    assert_eq!(done.last().map(String::as_str), Some("ReadyForQuery I"), "{done:?}");
    let record = |a: i32, b: Option<&str>| {
        let mut r = 2i32.to_be_bytes().to_vec();
        r.extend_from_slice(&23u32.to_be_bytes());
        r.extend_from_slice(&4i32.to_be_bytes());
        r.extend_from_slice(&a.to_be_bytes());
        r.extend_from_slice(&25u32.to_be_bytes());
        match b {
            Some(b) => {
                r.extend_from_slice(&(b.len() as i32).to_be_bytes());
                r.extend_from_slice(b.as_bytes());
            }
            None => r.extend_from_slice(&(-1i32).to_be_bytes()),
        }
        r
    };
    let query = "SELECT p, id FROM pairs WHERE p >= $1 ORDER BY p";
    let got = w.round(&[binary_statement(query, &record(7, Some("seven"))), sync()].concat(), 1);
    let rows: Vec<&str> = got.iter().filter(|l| l.starts_with("DataRow")).map(String::as_str).collect();
    let want = |a: i32, b: Option<&str>, id: u8| {
        format!("DataRow {}|\0\0\0{}", String::from_utf8_lossy(&record(a, b)), id as char)
    };
    assert_eq!(rows, [want(7, Some("seven"), 1), want(8, None, 2)], "{got:?}");
    // One field where the type has two.
    let short = [&1i32.to_be_bytes()[..], &23u32.to_be_bytes(), &(-1i32).to_be_bytes()].concat();
    let bad = w.round(&[binary_statement(query, &short), sync()].concat(), 1);
    assert!(bad.contains(&"ErrorResponse 22P03".to_string()), "{bad:?}");
}
