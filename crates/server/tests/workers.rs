//! The worker pool: a server with a single worker thread still serves
//! every session while one of them runs a long statement, waits for a row
//! another holds, or is caught in a deadlock. With a thread blocked per
//! wait, each of these would stall the lone worker and everyone on it.

mod common;

use common::Server;
use postgres::{Client, NoTls};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a step that must happen may take before the test gives up on
/// it (a liveness bound, far beyond what any step needs).
const PATIENCE: Duration = Duration::from_secs(60);

fn connect(s: &Server, app: &str) -> Client {
    Client::connect(&format!("{} application_name={app}", s.conninfo("centum")), NoTls).unwrap()
}

/// A one-worker server with table `acc` holding rows (1, 0) and (2, 0).
fn one_worker() -> (Server, Client) {
    let s = Server::start(&["--workers", "1"]);
    let mut c = connect(&s, "setup");
    c.batch_execute("CREATE TABLE acc (id int PRIMARY KEY, v int); INSERT INTO acc VALUES (1, 0), (2, 0)")
        .unwrap();
    (s, c)
}

/// Waits until the session named `app` shows `state` in
/// pg_stat_activity (and a wait event, with `waiting`); its pid. With the
/// outcome channel of `app`'s statement, a statement that ends first fails
/// the test at once, with its SQLSTATE.
fn shows(
    observer: &mut Client,
    app: &str,
    state: &str,
    waiting: bool,
    outcome: Option<&mpsc::Receiver<Option<String>>>,
) -> i32 {
    let started = Instant::now();
    loop {
        if let Some(ended) = outcome.and_then(|o| o.try_recv().ok()) {
            panic!("{app} ended ({ended:?}) before it showed as {state}");
        }
        let rows = observer
            .query(
                "SELECT pid, wait_event_type FROM pg_stat_activity WHERE application_name = $1 AND state = $2",
                &[&app, &state],
            )
            .unwrap();
        if let Some(r) = rows.first() {
            if !waiting || r.get::<_, Option<String>>(1).is_some() {
                return r.get(0);
            }
        }
        assert!(started.elapsed() < PATIENCE, "{app} never showed as {state}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `sql` on a new connection named `app` in a thread; its outcome
/// (the SQLSTATE of its error, if any) arrives on the returned channel.
fn in_background(s: &Server, app: &str, sql: &'static str) -> mpsc::Receiver<Option<String>> {
    let (tx, rx) = mpsc::channel();
    let mut c = connect(s, app);
    std::thread::spawn(move || {
        let r = c.batch_execute(sql);
        let _ = tx.send(r.err().map(|e| e.code().map_or("none".into(), |c| c.code().to_string())));
    });
    rx
}

#[test]
fn a_long_statement_leaves_the_lone_worker_to_the_others() {
    let (s, mut admin) = one_worker();
    // Ten billion rows: it runs until cancelled.
    let long = in_background(
        &s,
        "long",
        "SELECT count(*) FROM generate_series(1, 100000000) a, generate_series(1, 100) b",
    );
    let pid = shows(&mut admin, "long", "active", false, Some(&long));
    std::thread::sleep(Duration::from_millis(50));
    // Short statements, a write and a commit among them, are answered
    // while it runs.
    let mut short = connect(&s, "short");
    for i in 0..20 {
        short.execute("UPDATE acc SET v = $1 WHERE id = 2", &[&i]).unwrap();
        assert_eq!(short.query_one("SELECT v FROM acc WHERE id = 2", &[]).unwrap().get::<_, i32>(0), i);
    }
    assert!(long.try_recv().is_err(), "the long statement is still running");
    // A cancel still reaches it under the new scheduling.
    assert!(admin.query_one("SELECT pg_cancel_backend($1)", &[&pid]).unwrap().get::<_, bool>(0));
    assert_eq!(long.recv_timeout(PATIENCE).unwrap(), Some("57014".into()));
}

#[test]
fn a_row_wait_does_not_hold_the_lone_worker() {
    let (s, mut admin) = one_worker();
    let mut holder = connect(&s, "holder");
    holder.batch_execute("BEGIN; UPDATE acc SET v = 1 WHERE id = 1").unwrap();
    // Outside a block and inside one: both wait without the worker.
    let alone = in_background(&s, "alone", "UPDATE acc SET v = v + 10 WHERE id = 1");
    let in_block = in_background(&s, "in_block", "BEGIN; UPDATE acc SET v = v + 100 WHERE id = 1; COMMIT");
    shows(&mut admin, "alone", "active", true, Some(&alone));
    shows(&mut admin, "in_block", "active", true, Some(&in_block));
    // The holder's own statements and commit are served meanwhile.
    holder.batch_execute("UPDATE acc SET v = v + 1 WHERE id = 2").unwrap();
    holder.batch_execute("COMMIT").unwrap();
    assert_eq!(alone.recv_timeout(PATIENCE).unwrap(), None);
    assert_eq!(in_block.recv_timeout(PATIENCE).unwrap(), None);
    let v: i32 = admin.query_one("SELECT v FROM acc WHERE id = 1", &[]).unwrap().get(0);
    assert_eq!(v, 111, "both waiters applied their change on top of the holder's");
    // lock_timeout ends a wait that is not holding the worker either.
    holder.batch_execute("BEGIN; UPDATE acc SET v = 0 WHERE id = 1").unwrap();
    let timed = in_background(&s, "timed", "SET lock_timeout = 100; UPDATE acc SET v = 5 WHERE id = 1");
    assert_eq!(timed.recv_timeout(PATIENCE).unwrap(), Some("55P03".into()));
    holder.batch_execute("ROLLBACK").unwrap();
}

#[test]
fn a_deadlock_between_waits_that_hold_no_thread_is_found() {
    let (s, mut admin) = one_worker();
    let mut a = connect(&s, "a");
    a.batch_execute("BEGIN; UPDATE acc SET v = 1 WHERE id = 1").unwrap();
    let mut b = connect(&s, "b");
    b.batch_execute("BEGIN; UPDATE acc SET v = 2 WHERE id = 2").unwrap();
    let b_waits = std::thread::spawn(move || {
        let r = b.batch_execute("UPDATE acc SET v = 2 WHERE id = 1");
        let code = r.err().and_then(|e| e.code().map(|c| c.code().to_string()));
        let _ = b.batch_execute("ROLLBACK");
        code
    });
    shows(&mut admin, "b", "active", true, None);
    // `a` now waits for `b2`, which waits for `a`: one of them is told.
    let a_code = a
        .batch_execute("UPDATE acc SET v = 1 WHERE id = 2")
        .err()
        .and_then(|e| e.code().map(|c| c.code().to_string()));
    let _ = a.batch_execute("ROLLBACK");
    let b_code = b_waits.join().unwrap();
    let codes = [a_code, b_code];
    assert!(codes.contains(&Some("40P01".into())), "a deadlock is reported: {codes:?}");
    // The worker is free for everyone afterwards.
    assert_eq!(admin.query_one("SELECT count(*) FROM acc", &[]).unwrap().get::<_, i64>(0), 2);
}
