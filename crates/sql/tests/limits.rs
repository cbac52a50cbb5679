//! What no statement may do: overflow its thread's stack, hold unbounded
//! memory, or run past its timeout while it writes.
//!
//! Deep statements run on threads with the server's session stack (32 MiB)
//! and with a small one (2 MiB, as an embedding program's threads often
//! have). On either, every statement must give an answer or 54001; the
//! process surviving to the end of the test is the point.

use centum_sql::{Database, Session};
use centum_types::Value;

fn db() -> Database {
    Database::open(centum_engine::Database::open(Default::default()).unwrap()).unwrap()
}

/// Runs `f` on a thread with `stack` bytes of stack.
fn on_stack<R: Send + 'static>(stack: usize, f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new().stack_size(stack).spawn(f).unwrap().join().unwrap()
}

/// The first value of the first row, or the error's SQLSTATE.
fn answer(s: &mut Session, sql: &str) -> Result<Value, String> {
    match s.execute(sql) {
        Ok(mut r) => Ok(r
            .pop()
            .and_then(|r| r.rows.into_iter().next())
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Value::Null)),
        Err(e) => Err(e.sqlstate().to_string()),
    }
}

fn or_chain(n: usize) -> String {
    let terms: Vec<String> = (0..n).map(|i| format!("a = {i}")).collect();
    format!("SELECT count(*) FROM t WHERE {}", terms.join(" OR "))
}

fn and_chain(n: usize) -> String {
    let terms: Vec<String> = (0..n).map(|i| format!("a <> {}", i + 10)).collect();
    format!("SELECT count(*) FROM t WHERE {}", terms.join(" AND "))
}

fn sum_chain(n: usize) -> String {
    format!("SELECT {}", vec!["1"; n].join("+"))
}

fn parens(n: usize) -> String {
    format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n))
}

fn subqueries(n: usize) -> String {
    let mut q = "SELECT 1".to_string();
    for _ in 0..n {
        q = format!("SELECT ({q})");
    }
    q
}

fn in_list(n: usize) -> String {
    let items: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    format!("SELECT count(*) FROM t WHERE a IN ({})", items.join(", "))
}

fn union_all(n: usize) -> String {
    let branches: Vec<String> = (0..n).map(|i| format!("SELECT {i} AS x")).collect();
    format!("SELECT count(*) FROM ({}) u", branches.join(" UNION ALL "))
}

fn setup(s: &mut Session) {
    s.execute("CREATE TABLE t (a int PRIMARY KEY, b int)").unwrap();
    s.execute("INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)").unwrap();
}

#[test]
fn long_flat_lists_just_work_on_a_session_stack() {
    let d = db();
    on_stack(32 << 20, move || {
        let mut s = d.session();
        setup(&mut s);
        // The statements that aborted the server: a 590-term OR and a
        // 592-term sum.
        assert_eq!(answer(&mut s, &or_chain(590)), Ok(Value::BigInt(3)));
        assert_eq!(answer(&mut s, &sum_chain(592)), Ok(Value::Integer(592)));
        assert_eq!(answer(&mut s, &or_chain(10_000)), Ok(Value::BigInt(3)));
        assert_eq!(answer(&mut s, &and_chain(10_000)), Ok(Value::BigInt(3)));
        assert_eq!(answer(&mut s, &in_list(10_000)), Ok(Value::BigInt(3)));
        assert_eq!(answer(&mut s, &union_all(1_000)), Ok(Value::BigInt(1000)));
        assert_eq!(answer(&mut s, &subqueries(1_000)), Ok(Value::Integer(1)));
        assert_eq!(answer(&mut s, &parens(1_000)), Ok(Value::Integer(1)));
        // Far deeper than any stack: refused, and the session goes on.
        for sql in [parens(10_000), subqueries(10_000), sum_chain(100_000)] {
            assert_eq!(answer(&mut s, &sql), Err("54001".into()));
        }
        // Prefix operators and CASE nest too: 54001, not a syntax error.
        let nots = format!("SELECT {}true", "NOT ".repeat(100_000));
        let cases = format!("SELECT {}1{}", "CASE WHEN true THEN ".repeat(20_000), " END".repeat(20_000));
        let minus = format!("SELECT {}1", "- ".repeat(100_000));
        for sql in [nots, cases, minus] {
            assert_eq!(answer(&mut s, &sql), Err("54001".into()), "{}", &sql[..40]);
        }
        assert_eq!(
            answer(&mut s, &format!("SELECT {}true", "NOT ".repeat(1_001))),
            Ok(Value::Boolean(false))
        );
        assert_eq!(answer(&mut s, "SELECT NOT NOT (true"), Err("42601".into()));
        let huge = answer(&mut s, &or_chain(100_000));
        assert!(huge == Ok(Value::BigInt(3)) || huge == Err("54001".into()), "{huge:?}");
        assert_eq!(answer(&mut s, "SELECT 1"), Ok(Value::Integer(1)));
    });
}

#[test]
fn a_small_stack_gives_54001_never_an_overflow() {
    let d = db();
    on_stack(2 << 20, move || {
        let mut s = d.session();
        setup(&mut s);
        let statements = [
            or_chain(590),
            sum_chain(592),
            or_chain(10_000),
            sum_chain(10_000),
            parens(1_000),
            parens(10_000),
            subqueries(1_000),
            union_all(1_000),
            in_list(10_000),
            or_chain(100_000),
        ];
        for sql in &statements {
            match answer(&mut s, sql) {
                Ok(_) => {}
                Err(code) => assert_eq!(code, "54001", "{}", &sql[..60.min(sql.len())]),
            }
        }
        assert_eq!(answer(&mut s, "SELECT 1"), Ok(Value::Integer(1)));
    });
}

#[test]
fn deep_expressions_in_prepared_statements_and_routines() {
    let d = db();
    on_stack(32 << 20, move || {
        let mut s = d.session();
        setup(&mut s);
        let mut p = s.prepare(&or_chain(5_000), &[]).unwrap();
        let r = s.execute_prepared(&mut p, &[]).unwrap();
        assert_eq!(r.rows[0][0], Value::BigInt(3));
        // A stored CHECK with a long chain is parsed and bound the same way.
        let check: Vec<String> = (0..2_000).map(|i| format!("v <> {}", -i - 1)).collect();
        s.execute(&format!("CREATE TABLE c (v int CHECK ({}))", check.join(" AND "))).unwrap();
        s.execute("INSERT INTO c VALUES (5)").unwrap();
        assert_eq!(s.execute("INSERT INTO c VALUES (-7)").unwrap_err().sqlstate(), "23514");
        // A routine that recurses 1,000 deep: an answer or 54001.
        s.execute(
            "CREATE FUNCTION down(n int) RETURNS int LANGUAGE plpgsql AS $$
             BEGIN IF n = 0 THEN RETURN 0; END IF; RETURN 1 + down(n - 1); END $$",
        )
        .unwrap();
        match answer(&mut s, "SELECT down(1000)") {
            Ok(v) => assert_eq!(v, Value::Integer(1000)),
            Err(code) => assert_eq!(code, "54001"),
        }
        assert_eq!(answer(&mut s, "SELECT down(100000)"), Err("54001".into()));
    });
}

#[test]
fn statement_mem_bounds_what_a_statement_buffers() {
    let d = db();
    let mut s = d.session();
    s.execute("SET statement_mem = '1MB'").unwrap();
    assert_eq!(answer(&mut s, "SHOW statement_mem"), Ok(Value::Text("1MB".into())));
    // A sort, a grouping, a distinct, a set operation, a join's hash table,
    // a result, string_agg's running string and an aggregate's distinct
    // inputs over the budget fail with 53200.
    for sql in [
        "SELECT g FROM generate_series(1, 200000) g ORDER BY g DESC LIMIT 1",
        "SELECT g, count(*) FROM generate_series(1, 200000) g GROUP BY g LIMIT 1",
        "SELECT count(*) FROM (SELECT DISTINCT g FROM generate_series(1, 200000) g) d",
        "SELECT count(*) FROM (SELECT g FROM generate_series(1, 200000) g EXCEPT SELECT 1) e",
        "SELECT g FROM generate_series(1, 200000) g",
        "SELECT length(string_agg(g::text, repeat('-', 100))) FROM generate_series(1, 200000) g",
        "SELECT count(DISTINCT g) FROM generate_series(1, 200000) g",
        "SELECT max(r) FROM (SELECT row_number() OVER (ORDER BY g) AS r FROM generate_series(1, 200000) g) w",
    ] {
        let e = s.execute(sql).unwrap_err();
        assert_eq!(e.sqlstate(), "53200", "{sql}");
        assert!(e.to_string().contains("statement_mem (1MB)"), "{e}");
    }
    // Streaming needs no buffer: an aggregate over many rows, and an
    // INSERT whose source cannot see its target.
    assert_eq!(
        answer(&mut s, "SELECT count(*) FROM generate_series(1, 200000) g"),
        Ok(Value::BigInt(200000))
    );
    // Nor does a nested loop: its joined rows go up one at a time (a
    // million of them, where 1MB holds some 25,000), with a right side that
    // reads the left row too.
    assert_eq!(
        answer(&mut s, "SELECT count(*) FROM generate_series(1, 1000) a, generate_series(1, 1000) b"),
        Ok(Value::BigInt(1_000_000))
    );
    assert_eq!(
        answer(
            &mut s,
            "SELECT count(*) FROM generate_series(1, 2000) a LEFT JOIN LATERAL \
             (SELECT b FROM generate_series(1, a) b WHERE b > 1) l ON true"
        ),
        Ok(Value::BigInt(1_999_001))
    );
    s.execute("CREATE TABLE m (id int PRIMARY KEY, v text)").unwrap();
    s.execute("INSERT INTO m SELECT g, 'x' FROM generate_series(1, 100000) g").unwrap();
    // A source that reads its own target is read whole first, so it is
    // bounded; the failed statement leaves nothing behind.
    let e = s.execute("INSERT INTO m SELECT id + 100000, v FROM m").unwrap_err();
    assert_eq!(e.sqlstate(), "53200");
    assert_eq!(answer(&mut s, "SELECT count(*) FROM m"), Ok(Value::BigInt(100000)));
    // So are the rows RETURNING hands back: the insert streams, its
    // RETURNING rows are held.
    let e = s
        .execute("INSERT INTO m SELECT g, 'x' FROM generate_series(100001, 300000) g RETURNING *")
        .unwrap_err();
    assert_eq!(e.sqlstate(), "53200");
    assert_eq!(answer(&mut s, "SELECT count(*) FROM m"), Ok(Value::BigInt(100000)));
    // So are the rows an UPDATE or DELETE will change.
    assert_eq!(s.execute("UPDATE m SET v = 'y'").unwrap_err().sqlstate(), "53200");
    assert_eq!(s.execute("DELETE FROM m").unwrap_err().sqlstate(), "53200");
    s.execute("RESET statement_mem").unwrap();
    assert_eq!(answer(&mut s, "SHOW statement_mem"), Ok(Value::Text("1GB".into())));
    s.execute("INSERT INTO m SELECT id + 100000, v FROM m").unwrap();
    assert_eq!(answer(&mut s, "SELECT count(*) FROM m"), Ok(Value::BigInt(200000)));
    assert_eq!(s.execute("SET statement_mem = '1kB'").unwrap_err().sqlstate(), "22023");
    assert_eq!(s.execute("SET statement_mem = 'lots'").unwrap_err().sqlstate(), "22023");
}

#[test]
fn statement_timeout_stops_insert_select_while_it_writes() {
    let d = db();
    let mut s = d.session();
    s.execute("CREATE UNLOGGED TABLE big (id int PRIMARY KEY, v text)").unwrap();
    s.execute("SET statement_timeout = 200").unwrap();
    let e = s
        .execute("INSERT INTO big SELECT g, repeat('x', 100) FROM generate_series(1, 20000000) g")
        .unwrap_err();
    assert_eq!(e.sqlstate(), "57014");
    let e = s.execute("SELECT count(*) FROM generate_series(1, 200000000) g").unwrap_err();
    assert_eq!(e.sqlstate(), "57014");
    s.execute("SET statement_timeout = 0").unwrap();
    assert_eq!(answer(&mut s, "SELECT count(*) FROM big"), Ok(Value::BigInt(0)));
    // The rows it had written are garbage, and the collector frees them.
    let engine = d.catalog().db();
    engine.collect_garbage();
    let versions: u64 = engine.stats().tables.iter().filter(|t| t.name == "big").map(|t| t.versions).sum();
    assert_eq!(versions, 0);
}

/// statement_timeout counts from the statement's start, planning
/// included: a literal compared with a `char(10485760)` column is padded
/// to ten million characters when the statement is planned, and 500 of
/// them would take seconds (and gigabytes); values padded on INSERT count
/// too.
#[test]
fn statement_timeout_covers_planning_and_padding() {
    let d = db();
    let mut s = d.session();
    s.execute("CREATE UNLOGGED TABLE wide (c char(10485760), n int)").unwrap();
    s.execute("SET statement_timeout = 50").unwrap();
    let literals: Vec<String> = (0..500).map(|i| format!("'v{i}'")).collect();
    let e = s.execute(&format!("SELECT n FROM wide WHERE c IN ({})", literals.join(", "))).unwrap_err();
    assert_eq!(e.sqlstate(), "57014", "{e}");
    let rows: Vec<String> = (0..500).map(|i| format!("('v{i}', {i})")).collect();
    let e = s.execute(&format!("INSERT INTO wide SELECT * FROM (VALUES {}) v", rows.join(", "))).unwrap_err();
    assert_eq!(e.sqlstate(), "57014", "{e}");
    s.execute("SET statement_timeout = 0").unwrap();
    assert_eq!(answer(&mut s, "SELECT count(*) FROM wide"), Ok(Value::BigInt(0)));
}

#[test]
fn absurd_bucket_counts_are_refused_not_allocated() {
    let d = db();
    let mut s = d.session();
    let e = s
        .execute("CREATE TABLE h (id int PRIMARY KEY) WITH (bucket_count = 1000000000000000000)")
        .unwrap_err();
    assert_eq!(e.sqlstate(), "22023", "{e}");
    s.execute("CREATE TABLE h (id int PRIMARY KEY) WITH (bucket_count = 1024)").unwrap();
    let e =
        s.execute("CREATE INDEX h_id ON h USING hash (id) WITH (bucket_count = 1099511627776)").unwrap_err();
    assert_eq!(e.sqlstate(), "22023", "{e}");
    assert_eq!(
        s.execute("CREATE TABLE z (id int PRIMARY KEY) WITH (bucket_count = 0)").unwrap_err().sqlstate(),
        "22023"
    );
}

/// A CREATE TABLE refused after its serial and identity columns' sequences
/// were made (here: a bucket array over the memory limit) takes them back,
/// so the same name can be created afterwards.
#[test]
fn a_refused_create_table_leaves_no_sequence_behind() {
    let engine = centum_engine::Database::open(centum_engine::Options {
        memory_limit: Some(64 << 20),
        ..Default::default()
    })
    .unwrap();
    let d = Database::open(engine).unwrap();
    let mut s = d.session();
    let big = "CREATE TABLE t1 (c0 serial, c1 int GENERATED ALWAYS AS IDENTITY, c2 int PRIMARY KEY) \
               WITH (bucket_count = 1073741824)";
    assert_eq!(s.execute(big).unwrap_err().sqlstate(), "53200");
    s.execute("CREATE TABLE t1 (c0 serial, c1 int GENERATED ALWAYS AS IDENTITY, c2 int PRIMARY KEY)")
        .unwrap();
    s.execute("INSERT INTO t1 (c2) VALUES (7)").unwrap();
    assert_eq!(answer(&mut s, "SELECT c0 + c1 FROM t1"), Ok(Value::Integer(2)));
}

/// The deadline is read in proportion to the work done, not once per so
/// many rows: rows that each take long (megabyte strings, a LIKE that
/// backtracks), a filter that rejects every row, a sort of millions of
/// rows, and window functions (a ranking over millions of rows, a sliding
/// frame of 200,000 rows) all stop at statement_timeout.
#[test]
fn statement_timeout_stops_expensive_rows_filters_and_sorts() {
    let d = db();
    let mut s = d.session();
    s.execute("SET statement_timeout = 200").unwrap();
    for sql in [
        "SELECT count(*) FROM (SELECT repeat('x', 1000000) || g::text AS s FROM generate_series(1, 100000000) g) t",
        "SELECT count(*) FROM generate_series(1, 100000000) g WHERE repeat('x', 1000000) LIKE '%y%'",
        "SELECT count(*) FROM generate_series(1, 100000000) g WHERE repeat('x', 100000) LIKE '%x%x%x%x%x%x%x%x%y'",
        "SELECT count(*) FROM generate_series(1, 100000000) g WHERE g < 0",
        "SELECT max(g) FROM (SELECT g FROM generate_series(1, 30000000) AS s(g) ORDER BY g DESC) s",
        "SELECT max(r) FROM (SELECT rank() OVER (PARTITION BY g % 7 ORDER BY g DESC) AS r FROM generate_series(1, 30000000) AS s(g)) w",
        "SELECT max(x) FROM (SELECT sum(g) OVER (ROWS BETWEEN 100000 PRECEDING AND 100000 FOLLOWING) AS x FROM generate_series(1, 1000000) AS s(g)) w",
        "SELECT count(*) FROM generate_series(1, 20000) a(x) JOIN generate_series(1, 20000) b(y) ON a.x * 0 = b.y * 0",
    ] {
        times_out(&mut s, sql);
    }
}

/// Runs `sql`, which must end with 57014 (statement_timeout), and soon.
fn times_out(s: &mut Session, sql: &str) {
    let started = std::time::Instant::now();
    assert_eq!(answer(s, sql), Err("57014".into()), "{sql}");
    // Generous: the point is that it stops, not how fast (a sort of 30 M
    // rows would take far longer).
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{sql}: {:?}", started.elapsed());
}

/// Work that multiplies inside one statement stops at statement_timeout
/// too: a correlated EXISTS and a correlated scalar subquery that scan a
/// table once per outer row, a nested loop on a condition no index or
/// hash serves, and an aggregate and a sort over a cross product.
#[test]
fn statement_timeout_stops_correlated_subqueries_and_nested_loops() {
    let d = db();
    let mut s = d.session();
    s.execute("CREATE TABLE big (id int PRIMARY KEY, v int)").unwrap();
    s.execute("INSERT INTO big SELECT g, g % 13 FROM generate_series(1, 20000) g").unwrap();
    s.execute("SET statement_timeout = 200").unwrap();
    for sql in [
        "SELECT count(*) FROM big a WHERE EXISTS (SELECT 1 FROM big b WHERE b.v = a.v + 100)",
        "SELECT sum((SELECT count(*) FROM big b WHERE b.v = a.v)) FROM big a",
        "SELECT count(*) FROM big a, big b WHERE a.v + b.v = -1",
        "SELECT a.v, count(*) FROM big a, big b GROUP BY a.v",
        "SELECT a.id FROM big a, big b ORDER BY a.v + b.v LIMIT 1",
    ] {
        times_out(&mut s, sql);
    }
}

/// Sorting in runs and merging them keeps ORDER BY's order and its
/// stability for inputs of many runs.
#[test]
fn large_sorts_are_ordered_and_stable() {
    let d = db();
    let mut s = d.session();
    s.execute("CREATE TABLE r (id int PRIMARY KEY, k int)").unwrap();
    s.execute("INSERT INTO r SELECT g, (g * 7919) % 1000 FROM generate_series(1, 100000) g").unwrap();
    let rows = s.execute("SELECT k, id FROM r ORDER BY k DESC, id").unwrap().pop().unwrap().rows;
    assert_eq!(rows.len(), 100_000);
    let pairs: Vec<(i32, i32)> = rows
        .iter()
        .map(|r| match (&r[0], &r[1]) {
            (Value::Integer(k), Value::Integer(id)) => (*k, *id),
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(pairs.windows(2).all(|w| w[0].0 > w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1)));
    // Stable: rows with equal keys keep the order they were read in (the
    // subquery's ORDER BY id).
    let rows = s
        .execute("SELECT id FROM (SELECT id, k FROM r ORDER BY id) q ORDER BY k LIMIT 100")
        .unwrap()
        .pop()
        .unwrap()
        .rows;
    let ids: Vec<Value> = rows.into_iter().map(|mut r| r.remove(0)).collect();
    let want: Vec<Value> =
        (1..=100_000).filter(|g| (g * 7919) % 1000 == 0).take(100).map(Value::Integer).collect();
    assert_eq!(ids, want);
}

/// A grouped select list or HAVING with a long chain binds in time linear
/// in its length, and GROUP BY expressions still match when written with
/// other parentheses.
#[test]
fn grouped_long_chains_bind() {
    let d = db();
    on_stack(32 << 20, move || grouped_long_chains(d.session()));
}

fn grouped_long_chains(mut s: Session) {
    s.execute("CREATE TABLE g (a int, b int)").unwrap();
    s.execute("INSERT INTO g SELECT g % 10, g FROM generate_series(1, 100) g").unwrap();
    s.execute("SET statement_timeout = 5000").unwrap();
    let chain = vec!["b"; 5_000].join(" + ");
    let sql = format!("SELECT sum(x) FROM (SELECT {chain} AS x FROM g GROUP BY a, b) q");
    assert_eq!(answer(&mut s, &sql), Ok(Value::BigInt(5_000 * 5050)));
    let sums = vec!["sum(b)"; 5_000].join(" + ");
    let sql = format!("SELECT max(x) FROM (SELECT {sums} AS x FROM g GROUP BY a) q");
    assert_eq!(answer(&mut s, &sql), Ok(Value::BigInt(5_000 * 550)));
    assert_eq!(
        answer(&mut s, "SELECT ((a + b)) * 2 FROM g GROUP BY a + b ORDER BY 1 LIMIT 1"),
        Ok(Value::Integer(4))
    );
    assert_eq!(answer(&mut s, "SELECT b FROM g GROUP BY a + b"), Err("42803".into()));
}

#[test]
fn create_index_behind_an_open_transaction_ends_at_its_limits() {
    let d = db();
    let mut holder = d.session();
    holder.execute("CREATE TABLE t (a int, b int); INSERT INTO t VALUES (1, 2)").unwrap();
    holder.execute("BEGIN; INSERT INTO t VALUES (3, 4)").unwrap();
    let mut ddl = d.session();
    // The index waits for the open transaction: lock_timeout ends it
    // (55P03), statement_timeout too (57014), and either way the index is
    // gone again.
    ddl.execute("SET lock_timeout = 200").unwrap();
    assert_eq!(answer(&mut ddl, "CREATE INDEX t_a ON t (a)"), Err("55P03".into()));
    ddl.execute("SET lock_timeout = 0; SET statement_timeout = 200").unwrap();
    // Twice: a failed build leaves nothing that a second one trips over.
    assert_eq!(answer(&mut ddl, "CREATE INDEX t_a ON t (a)"), Err("57014".into()));
    assert_eq!(answer(&mut ddl, "CREATE INDEX t_a ON t (a)"), Err("57014".into()));
    // A cancel request ends the wait too.
    ddl.execute("SET statement_timeout = 0").unwrap();
    let cancel = ddl.cancel_handle();
    let raise = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        cancel.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    assert_eq!(answer(&mut ddl, "CREATE INDEX t_a ON t (a)"), Err("57014".into()));
    raise.join().unwrap();
    holder.execute("COMMIT").unwrap();
    ddl.execute("CREATE INDEX t_a ON t (a)").unwrap();
    assert_eq!(answer(&mut ddl, "SELECT count(*) FROM t WHERE a = 3"), Ok(Value::BigInt(1)));
}
