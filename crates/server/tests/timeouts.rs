//! Session timeouts end a silent session and free what it held:
//! `idle_in_transaction_session_timeout` (25P03) inside a block and
//! `idle_session_timeout` (57P05) outside one, as in PostgreSQL.

mod common;

use common::Server;
use postgres::{Client, NoTls};
use std::time::Duration;

fn connect(s: &Server) -> Client {
    Client::connect(&s.conninfo("centum"), NoTls).unwrap()
}

#[test]
fn a_block_left_idle_ends_its_session_and_frees_its_rows() {
    let s = Server::start(&[]);
    let mut setup = connect(&s);
    setup
        .batch_execute("CREATE TABLE acct (id int PRIMARY KEY, v int); INSERT INTO acct VALUES (1, 0)")
        .unwrap();
    let mut idle = connect(&s);
    idle.batch_execute("SET idle_in_transaction_session_timeout = 300").unwrap();
    assert_eq!(
        idle.query_one("SHOW idle_in_transaction_session_timeout", &[]).unwrap().get::<_, String>(0),
        "300"
    );
    idle.batch_execute("BEGIN; UPDATE acct SET v = 1 WHERE id = 1").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // The session is gone, and with it the block's claim on row 1.
    let e = idle.batch_execute("SELECT 1").unwrap_err();
    let code = e.code().map(|c| c.code().to_string());
    assert!(code.as_deref() == Some("25P03") || idle.is_closed(), "{e}");
    let mut other = connect(&s);
    other.batch_execute("SET statement_timeout = 5000; UPDATE acct SET v = 2 WHERE id = 1").unwrap();
    assert_eq!(other.query_one("SELECT v FROM acct", &[]).unwrap().get::<_, i32>(0), 2);
    // Outside a block the same silence is allowed.
    let mut patient = connect(&s);
    patient.batch_execute("SET idle_in_transaction_session_timeout = 300").unwrap();
    std::thread::sleep(Duration::from_millis(800));
    patient.batch_execute("SELECT 1").unwrap();
}

#[test]
fn idle_session_timeout_ends_a_silent_session() {
    let s = Server::start(&[]);
    let mut c = connect(&s);
    assert_eq!(c.query_one("SHOW idle_session_timeout", &[]).unwrap().get::<_, String>(0), "0");
    c.batch_execute("SET idle_session_timeout = '300ms'").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let e = c.batch_execute("SELECT 1").unwrap_err();
    let code = e.code().map(|c| c.code().to_string());
    assert!(code.as_deref() == Some("57P05") || c.is_closed(), "{e}");
    assert_eq!(
        connect(&s).batch_execute("SET idle_session_timeout = 'soon'").unwrap_err().code().unwrap().code(),
        "22023"
    );
}
