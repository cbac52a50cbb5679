//! No statement takes the server down: the deep statements that used to
//! overflow a session's stack, a bulk insert past the memory limit, and a
//! timeout inside a bulk insert, each through the real server, with other
//! sessions going on.

mod common;

use common::Server;
use postgres::{Client, NoTls};

fn connect(s: &Server) -> Client {
    Client::connect(&s.conninfo("centum"), NoTls).unwrap()
}

/// The SQLSTATE of a failed statement ("ok" when it succeeded).
fn outcome(c: &mut Client, sql: &str) -> String {
    match c.batch_execute(sql) {
        Ok(()) => "ok".into(),
        Err(e) => e.code().map(|c| c.code().to_string()).unwrap_or_else(|| format!("no SQLSTATE: {e}")),
    }
}

#[test]
fn deep_statements_answer_or_fail_with_54001_and_the_server_stays_up() {
    let mut s = Server::start(&[]);
    let mut bystander = connect(&s);
    bystander
        .batch_execute("BEGIN; CREATE TABLE kept (id int PRIMARY KEY); INSERT INTO kept VALUES (1)")
        .unwrap();
    let mut c = connect(&s);
    let ors: Vec<String> = (0..590).map(|i| format!("oid = {i}")).collect();
    let q = format!("SELECT count(*) FROM pg_class WHERE {}", ors.join(" OR "));
    assert_eq!(c.query_one(q.as_str(), &[]).unwrap().get::<_, i64>(0), 0);
    let q = format!("SELECT {}", vec!["1"; 592].join("+"));
    assert_eq!(c.query_one(q.as_str(), &[]).unwrap().get::<_, i32>(0), 592);
    let ors: Vec<String> = (0..10_000).map(|i| format!("oid = {i}")).collect();
    let q = format!("SELECT count(*) FROM pg_class WHERE {}", ors.join(" OR "));
    assert_eq!(c.query_one(q.as_str(), &[]).unwrap().get::<_, i64>(0), 0);
    let mut sub = "SELECT 1".to_string();
    for _ in 0..1_000 {
        sub = format!("SELECT ({sub})");
    }
    assert_eq!(c.query_one(sub.as_str(), &[]).unwrap().get::<_, i32>(0), 1);
    // Deeper than any stack: 54001 through both protocols.
    let deep = format!("SELECT {}1{}", "(".repeat(10_000), ")".repeat(10_000));
    assert_eq!(outcome(&mut c, &deep), "54001");
    assert_eq!(c.prepare(deep.as_str()).unwrap_err().code().unwrap().code(), "54001");
    let huge = format!("SELECT {}", vec!["1"; 100_000].join("+"));
    assert_eq!(outcome(&mut c, &huge), "54001");
    let ors: Vec<String> = (0..100_000).map(|i| format!("oid = {i}")).collect();
    let q = format!("SELECT count(*) FROM pg_class WHERE {}", ors.join(" OR "));
    assert!(["ok", "54001"].contains(&outcome(&mut c, &q).as_str()));
    // The same session, another session and its open block all go on.
    assert_eq!(c.query_one("SELECT 1", &[]).unwrap().get::<_, i32>(0), 1);
    bystander.batch_execute("COMMIT").unwrap();
    assert_eq!(connect(&s).query_one("SELECT count(*) FROM kept", &[]).unwrap().get::<_, i64>(0), 1);
    assert!(s.alive());
}

#[test]
fn a_bulk_insert_past_the_memory_limit_fails_with_53200_and_the_server_stays_up() {
    let mut s = Server::start(&["--max-memory", "400MB"]);
    let mut c = connect(&s);
    // Small rows and no key: the write set and the undo of the failed
    // load grow with the row count, and must stay within the margin too.
    c.batch_execute("CREATE UNLOGGED TABLE small (id int, v text)").unwrap();
    let e =
        c.batch_execute("INSERT INTO small SELECT g, 'x' FROM generate_series(1, 100000000) g").unwrap_err();
    assert_eq!(e.code().unwrap().code(), "53200", "{e}");
    c.batch_execute("CREATE UNLOGGED TABLE mem (id int PRIMARY KEY, v text)").unwrap();
    let e = c
        .batch_execute("INSERT INTO mem SELECT g, repeat('x', 1000) FROM generate_series(1, 20000000) g")
        .unwrap_err();
    assert_eq!(e.code().unwrap().code(), "53200", "{e}");
    assert!(s.alive());
    let pid = s.pid().unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
        let peak_kib: u64 = line[6..].trim().trim_end_matches("kB").trim().parse().unwrap();
        // The limit plus a tenth, as the operator was promised.
        assert!(peak_kib < 440 << 10, "peak resident {peak_kib} kB under a 400MB limit");
    }
    // Nothing of the failed statement is visible, and reads go on.
    assert_eq!(c.query_one("SELECT count(*) FROM mem", &[]).unwrap().get::<_, i64>(0), 0);
    // statement_mem bounds one statement's buffers on its own.
    c.batch_execute("SET statement_mem = '4MB'").unwrap();
    assert_eq!(outcome(&mut c, "SELECT g FROM generate_series(1, 1000000) g ORDER BY g DESC"), "53200");
    c.batch_execute("RESET statement_mem").unwrap();
    assert_eq!(c.query_one("SELECT 1", &[]).unwrap().get::<_, i32>(0), 1);
}

#[test]
fn statement_timeout_and_cancel_stop_a_bulk_insert_while_it_writes() {
    let s = Server::start(&[]);
    let mut c = connect(&s);
    c.batch_execute("CREATE UNLOGGED TABLE big (id int PRIMARY KEY, v text); SET statement_timeout = 300")
        .unwrap();
    let started = std::time::Instant::now();
    let sql = "INSERT INTO big SELECT g, 'y' FROM generate_series(1, 20000000) g";
    assert_eq!(outcome(&mut c, sql), "57014");
    // Far from the seconds the whole insert takes (a generous bound, not
    // a measurement: design section 16.3 has the figure).
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    c.batch_execute("SET statement_timeout = 0").unwrap();
    // A cancel request stops it the same way.
    let cancel = c.cancel_token();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        cancel.cancel_query(NoTls).unwrap();
    });
    assert_eq!(outcome(&mut c, sql), "57014");
    canceller.join().unwrap();
    assert_eq!(c.query_one("SELECT count(*) FROM big", &[]).unwrap().get::<_, i64>(0), 0);
}
