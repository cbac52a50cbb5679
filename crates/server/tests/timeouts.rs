//! Session timeouts end a silent session and free what it held:
//! `idle_in_transaction_session_timeout` (25P03) inside a block and
//! `idle_session_timeout` (57P05) outside one, as in PostgreSQL. A client
//! that vanishes while its statement runs or waits has the statement
//! stopped and its transaction rolled back.

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
        "300ms"
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

/// Runs `sql` on a fresh connection after `setup`, and closes the socket
/// `after` into it, while the statement still runs or waits: what a killed
/// client, or a pool that timed out, leaves behind.
fn vanish(s: &Server, setup: &str, sql: &'static str, after: Duration) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (client, conn) =
            tokio_postgres::connect(&s.conninfo("centum"), tokio_postgres::NoTls).await.unwrap();
        let driver = tokio::spawn(conn);
        client.batch_execute(setup).await.unwrap();
        let running = tokio::spawn(async move { client.batch_execute(sql).await });
        tokio::time::sleep(after).await;
        driver.abort();
        let _ = running.await;
    });
}

/// Server CPU time (user + system) in seconds, from /proc.
fn server_cpu(s: &Server) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", s.pid().unwrap())).unwrap();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap().split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

#[test]
fn a_vanished_clients_waiting_statement_ends_and_frees_its_rows() {
    let s = Server::start(&[]);
    let mut holder = connect(&s);
    holder
        .batch_execute("CREATE TABLE acc (id int PRIMARY KEY, v int); INSERT INTO acc VALUES (1, 0), (2, 0)")
        .unwrap();
    holder.batch_execute("BEGIN; UPDATE acc SET v = 1 WHERE id = 1").unwrap();
    // The vanishing client holds row 2 and waits for row 1.
    vanish(
        &s,
        "BEGIN; UPDATE acc SET v = 2 WHERE id = 2",
        "UPDATE acc SET v = 2 WHERE id = 1",
        Duration::from_millis(300),
    );
    // Its wait ended and its block rolled back while row 1's holder is
    // still open: row 2 is free (a wait for it would end in 55P03).
    let mut other = connect(&s);
    other.batch_execute("SET lock_timeout = 3000; UPDATE acc SET v = 3 WHERE id = 2").unwrap();
    holder.batch_execute("COMMIT").unwrap();
    let rows: Vec<(i32, i32)> = other
        .query("SELECT id, v FROM acc ORDER BY id", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(rows, [(1, 1), (2, 3)]);
}

#[test]
fn a_vanished_clients_long_statement_stops_using_the_cpu() {
    let s = Server::start(&[]);
    vanish(
        &s,
        "SELECT 1",
        "SELECT count(*) FROM generate_series(1, 100000000000)",
        Duration::from_millis(300),
    );
    // Past the watcher's interval and the statement's next look at its
    // cancel flag, the server is idle again: the statement would otherwise
    // count for minutes.
    std::thread::sleep(Duration::from_millis(500));
    let before = server_cpu(&s);
    std::thread::sleep(Duration::from_secs(2));
    let used = server_cpu(&s) - before;
    assert!(used < 0.5, "the server used {used:.2} s of CPU in 2 s after its client vanished");
    assert_eq!(connect(&s).query_one("SELECT 1", &[]).unwrap().get::<_, i32>(0), 1);
}

/// `pg_sleep` and its forms pause the statement, and each interruption
/// ends the pause with 57014: the statement timeout, a cancel from another
/// session, a client that vanishes. The pause does not hold the worker: on
/// a one-worker server another session is answered meanwhile.
#[test]
fn pg_sleep_pauses_and_every_interruption_ends_it() {
    let s = Server::start(&["--workers", "1"]);
    let mut c = connect(&s);
    let started = std::time::Instant::now();
    let row = c
        .query_one(
            "SELECT pg_sleep(0.2), pg_sleep_for('100 milliseconds'), pg_sleep(NULL) IS NULL, \
             pg_sleep(-1), pg_sleep_until(now() - interval '1 hour')",
            &[],
        )
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300), "slept {:?}", started.elapsed());
    // void is printed as an empty string.
    assert_eq!(row.get::<_, String>(0), "");
    assert!(row.get::<_, bool>(2));

    let code = |e: postgres::Error| e.code().map(|c| c.code().to_string());
    c.batch_execute("SET statement_timeout = 200").unwrap();
    assert_eq!(code(c.batch_execute("SELECT pg_sleep(60)").unwrap_err()).as_deref(), Some("57014"));
    c.batch_execute("SET statement_timeout = 0").unwrap();

    let pid: i32 = c.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    let sleeper = std::thread::spawn(move || c.batch_execute("SELECT pg_sleep(60)"));
    std::thread::sleep(Duration::from_millis(300));
    let mut other = connect(&s);
    assert_eq!(other.query_one("SELECT 7", &[]).unwrap().get::<_, i32>(0), 7);
    assert!(other.query_one("SELECT pg_cancel_backend($1)", &[&pid]).unwrap().get::<_, bool>(0));
    let e = sleeper.join().unwrap().unwrap_err();
    assert_eq!(code(e).as_deref(), Some("57014"));

    vanish(&s, "SELECT 1", "SELECT pg_sleep(60)", Duration::from_millis(300));
    // The hang-up watcher cancels it: soon nothing sleeps any more.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let sleeping: i64 = other
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(60)%'",
                &[],
            )
            .unwrap()
            .get(0);
        if sleeping == 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "a vanished client's pg_sleep is still running");
        std::thread::sleep(Duration::from_millis(50));
    }
}
