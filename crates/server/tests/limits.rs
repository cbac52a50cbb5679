//! No statement takes the server down: the deep statements that used to
//! overflow a session's stack, a bulk insert past the memory limit, tables
//! filled to the limit (then emptied, and the server killed), and a
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
    let mut s = Server::start(&["--memory-limit", "400MB"]);
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

/// Inserts rows `from..from + n` of 1,000 bytes into `table`.
fn try_batch(c: &mut Client, table: &str, from: i32, n: i32) -> Result<(), postgres::Error> {
    c.batch_execute(&format!(
        "INSERT INTO {table} SELECT g, repeat('x', 1000) FROM generate_series({from}, {}) g",
        from + n - 1
    ))
}

/// [`try_batch`]: `Ok` when acknowledged, else the SQLSTATE (anything but
/// 53200 fails the test).
fn insert_batch(c: &mut Client, table: &str, from: i32, n: i32) -> Result<(), String> {
    match try_batch(c, table, from, n) {
        Ok(()) => Ok(()),
        Err(e) if e.code().is_some_and(|c| c.code() == "53200") => Err("53200".into()),
        Err(e) => panic!("insert into {table}: {e}"),
    }
}

/// Rows of `table`, and the sum of their ids.
fn count_and_sum(c: &mut Client, table: &str) -> (i64, i64) {
    let r = c.query_one(&format!("SELECT count(*), coalesce(sum(id), 0)::bigint FROM {table}"), &[]).unwrap();
    (r.get(0), r.get(1))
}

#[test]
fn filled_tables_refuse_rows_with_53200_until_deletes_make_room_and_acknowledged_rows_survive_a_kill() {
    const BATCH: i32 = 2000;
    // `CENTUM_LIMIT_TEST_MB=1024` runs it at the 1 GiB an operator would
    // set; 300 MB keeps `make check` quick.
    let mb: usize = std::env::var("CENTUM_LIMIT_TEST_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let shown = if mb.is_multiple_of(1024) { format!("{}GB", mb / 1024) } else { format!("{mb}MB") };
    let limit = format!("{mb}MB");
    let args = ["--memory-limit", limit.as_str()];
    let mut s = Server::start(&args);
    let mut c = connect(&s);
    c.batch_execute(
        "CREATE UNLOGGED TABLE scratch (id int PRIMARY KEY, v text); \
         CREATE TABLE kept (id int PRIMARY KEY, v text)",
    )
    .unwrap();
    // Fill both, a batch each in turn, until the server refuses: every
    // batch it acknowledged of the durable table is remembered.
    let (mut next_scratch, mut next_kept) = (1, 1);
    let mut kept_acked: Vec<i32> = Vec::new();
    let mut refused = false;
    for _ in 0..mb {
        match insert_batch(&mut c, "scratch", next_scratch, BATCH) {
            Ok(()) => next_scratch += BATCH,
            Err(_) => refused = true,
        }
        match insert_batch(&mut c, "kept", next_kept, BATCH) {
            Ok(()) => {
                kept_acked.push(next_kept);
                next_kept += BATCH;
            }
            Err(_) => refused = true,
        }
        if refused {
            break;
        }
    }
    assert!(refused, "{mb} MB took {} batches of 2 MB", 2 * mb);
    // Both tables are refused now, and the message names the limit. A
    // refused batch that had written most of its rows frees them when it
    // rolls back, which can make room for one more batch: such a batch is
    // acknowledged like any other, and the next one is refused.
    for table in ["scratch", "kept"] {
        let mut refusal = None;
        for _ in 0..8 {
            let next = if table == "kept" { &mut next_kept } else { &mut next_scratch };
            match try_batch(&mut c, table, *next, BATCH) {
                Ok(()) => {
                    if table == "kept" {
                        kept_acked.push(*next);
                    }
                    *next += BATCH;
                }
                Err(e) => {
                    refusal = Some(e);
                    break;
                }
            }
        }
        let e = refusal.unwrap_or_else(|| panic!("{table} took 8 more batches past the limit"));
        assert_eq!(e.code().unwrap().code(), "53200", "{e}");
        let m = e.as_db_error().unwrap().message();
        assert!(m.contains(&format!("memory limit of {shown}")), "{m}");
    }
    // Reads, and a bystander session, go on.
    assert!(s.alive());
    let kept_rows = kept_acked.len() as i64 * i64::from(BATCH);
    assert_eq!(count_and_sum(&mut c, "kept").0, kept_rows);
    assert_eq!(count_and_sum(&mut connect(&s), "scratch").0, i64::from(next_scratch - 1));
    // Deleting the scratch rows makes room again for durable ones.
    c.batch_execute("DELETE FROM scratch").unwrap();
    c.batch_execute("VACUUM").unwrap();
    for _ in 0..3 {
        insert_batch(&mut c, "kept", next_kept, BATCH).expect("room after deleting");
        kept_acked.push(next_kept);
        next_kept += BATCH;
    }
    // A table's own limit: its rows past it are refused, naming it, while
    // the other table takes rows.
    c.batch_execute("ALTER TABLE kept SET (memory_limit = '10MB')").unwrap();
    let e = c.batch_execute(&format!("INSERT INTO kept VALUES ({next_kept}, 'z')")).unwrap_err();
    assert_eq!(e.code().unwrap().code(), "53200", "{e}");
    let m = e.as_db_error().unwrap().message();
    assert!(m.contains("table \"kept\"") && m.contains("memory limit of 10MB"), "{m}");
    insert_batch(&mut c, "scratch", 1, 10).expect("the other table is not limited");
    let kept_ids: i64 = kept_acked.iter().map(|&f| (0..BATCH).map(|i| i64::from(f + i)).sum::<i64>()).sum();
    // Every acknowledged row of the durable table survives a crash; the
    // unlogged table comes back empty, and the table's limit stays.
    s.kill9();
    s.launch(&args, &[]);
    let mut c = connect(&s);
    let kept_rows = kept_acked.len() as i64 * i64::from(BATCH);
    assert_eq!(count_and_sum(&mut c, "kept"), (kept_rows, kept_ids));
    assert_eq!(count_and_sum(&mut c, "scratch").0, 0);
    let limit: Option<i64> = c
        .query_one("SELECT memory_limit FROM centum.table_memory WHERE table_name = 'kept'", &[])
        .unwrap()
        .get(0);
    assert_eq!(limit, Some(10 << 20));
    assert_eq!(outcome(&mut c, &format!("INSERT INTO kept VALUES ({next_kept}, 'z')")), "53200");
    c.batch_execute("ALTER TABLE kept RESET (memory_limit)").unwrap();
    c.batch_execute(&format!("INSERT INTO kept VALUES ({next_kept}, 'z')")).unwrap();
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
