//! Prepared statements: re-planning across schema changes, failure and
//! recovery when the table goes away and comes back, parameter type
//! inference and coercion, parameter count checks, EXPLAIN through
//! prepare, and prepared statements inside transaction blocks.

mod common;

use centum_sql::{Prepared, QueryResult, Session, TxnStatus};
use centum_types::{DataType, Value};
use common::{db, exec, int, int_column, run, run_err};

fn plan_text(r: &QueryResult) -> String {
    r.rows.iter().map(|row| row[0].to_string()).collect::<Vec<_>>().join("\n")
}

/// t(k, v, w) with k in 1..=100, v = k % 10, w = 'w' || k.
fn setup(s: &mut Session) {
    exec(s, "CREATE TABLE t (k int PRIMARY KEY, v int, w text)");
    exec(s, "INSERT INTO t SELECT g, g % 10, 'w' || g FROM generate_series(1, 100) g");
}

#[test]
fn replans_across_create_and_drop_index() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    let mut by_v = s.prepare("SELECT k FROM t WHERE v = $1 ORDER BY k", &[]).unwrap();
    let mut by_range = s.prepare("SELECT k FROM t WHERE v BETWEEN $1 AND $2 ORDER BY k", &[]).unwrap();
    let mut by_w = s.prepare("SELECT k FROM t WHERE w = $1", &[]).unwrap();
    let mut explain = s.prepare("EXPLAIN SELECT k FROM t WHERE v = 3", &[]).unwrap();
    let mut explain_w = s.prepare("EXPLAIN SELECT k FROM t WHERE w = 'w7'", &[]).unwrap();

    let want_v3: Vec<i64> = (1..=100).filter(|k| k % 10 == 3).collect();
    let want_range: Vec<i64> = (1..=100).filter(|k| (2..=4).contains(&(k % 10))).collect();
    let check = |s: &mut Session, by_v: &mut Prepared, by_range: &mut Prepared, by_w: &mut Prepared| {
        assert_eq!(int_column(&run(s, by_v, &[Value::Integer(3)])), want_v3);
        assert_eq!(int_column(&run(s, by_range, &[Value::Integer(2), Value::Integer(4)])), want_range);
        assert_eq!(int_column(&run(s, by_w, &[Value::Text("w7".into())])), vec![7]);
    };

    check(&mut s, &mut by_v, &mut by_range, &mut by_w);
    let before = plan_text(&run(&mut s, &mut explain, &[]));
    assert!(before.contains("Seq Scan"), "{before}");

    exec(&mut s, "CREATE INDEX t_v ON t (v)");
    exec(&mut s, "CREATE INDEX t_w ON t USING hash (w)");
    check(&mut s, &mut by_v, &mut by_range, &mut by_w);
    let with_index = plan_text(&run(&mut s, &mut explain, &[]));
    assert!(with_index.contains("t_v"), "the prepared EXPLAIN was not planned again:\n{with_index}");
    let with_hash = plan_text(&run(&mut s, &mut explain_w, &[]));
    assert!(with_hash.contains("t_w"), "{with_hash}");

    // Writes between executions are seen, through the index.
    exec(&mut s, "INSERT INTO t VALUES (1003, 3, 'w1003')");
    exec(&mut s, "DELETE FROM t WHERE k = 3");
    let mut want = want_v3.clone();
    want.retain(|&k| k != 3);
    want.push(1003);
    assert_eq!(int_column(&run(&mut s, &mut by_v, &[Value::Integer(3)])), want);
    exec(&mut s, "DELETE FROM t WHERE k = 1003");
    exec(&mut s, "INSERT INTO t VALUES (3, 3, 'w3')");

    exec(&mut s, "DROP INDEX t_v");
    exec(&mut s, "DROP INDEX t_w");
    check(&mut s, &mut by_v, &mut by_range, &mut by_w);
    let after = plan_text(&run(&mut s, &mut explain, &[]));
    assert!(after.contains("Seq Scan") && !after.contains("t_v"), "{after}");

    // Another session's DDL makes this session's statements plan again too.
    let mut other = db.session();
    exec(&mut other, "CREATE INDEX t_v2 ON t (v)");
    check(&mut s, &mut by_v, &mut by_range, &mut by_w);
    assert!(plan_text(&run(&mut s, &mut explain, &[])).contains("t_v2"));
}

#[test]
fn dropped_table_gives_42p01_until_it_is_created_again() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    let mut get = s.prepare("SELECT w FROM t WHERE k = $1", &[]).unwrap();
    let mut put = s.prepare("INSERT INTO t (k, v, w) VALUES ($1, $2, $3)", &[]).unwrap();
    let mut bump = s.prepare("UPDATE t SET v = v + 1 WHERE k = $1", &[]).unwrap();
    let mut del = s.prepare("DELETE FROM t WHERE k = $1", &[]).unwrap();
    assert_eq!(run(&mut s, &mut get, &[Value::Integer(5)]).rows, vec![vec![Value::Text("w5".into())]]);

    exec(&mut s, "DROP TABLE t");
    for _ in 0..2 {
        assert_eq!(run_err(&mut s, &mut get, &[Value::Integer(5)]).sqlstate(), "42P01");
        let e = run_err(&mut s, &mut put, &[Value::Integer(1), Value::Integer(1), Value::Text("x".into())]);
        assert_eq!(e.sqlstate(), "42P01");
        assert_eq!(run_err(&mut s, &mut bump, &[Value::Integer(5)]).sqlstate(), "42P01");
        assert_eq!(run_err(&mut s, &mut del, &[Value::Integer(5)]).sqlstate(), "42P01");
        assert_eq!(s.status(), TxnStatus::Idle);
    }

    // Re-created with compatible columns (another order, extra column).
    exec(&mut s, "CREATE TABLE t (w text, extra int DEFAULT 0, k bigint PRIMARY KEY, v int)");
    assert_eq!(run(&mut s, &mut get, &[Value::Integer(5)]).rows, Vec::<Vec<Value>>::new());
    assert_eq!(
        run(&mut s, &mut put, &[Value::Integer(5), Value::Integer(1), Value::Text("new".into())]).tag,
        "INSERT 0 1"
    );
    assert_eq!(run(&mut s, &mut get, &[Value::Integer(5)]).rows, vec![vec![Value::Text("new".into())]]);
    assert_eq!(run(&mut s, &mut bump, &[Value::Integer(5)]).tag, "UPDATE 1");
    let r = exec(&mut s, "SELECT k, v, w, extra FROM t");
    assert_eq!(
        r[0].rows,
        vec![vec![Value::BigInt(5), Value::Integer(2), Value::Text("new".into()), Value::Integer(0)]]
    );
    assert_eq!(run(&mut s, &mut del, &[Value::Integer(5)]).tag, "DELETE 1");
    assert_eq!(run(&mut s, &mut get, &[Value::Integer(5)]).rows.len(), 0);
}

#[test]
fn sql_level_prepare_survives_schema_changes() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    exec(&mut s, "PREPARE byv (int) AS SELECT count(*) FROM t WHERE v = $1");
    let count = |s: &mut Session| int(&exec(s, "EXECUTE byv(4)")[0].rows[0][0]);
    assert_eq!(count(&mut s), 10);
    exec(&mut s, "CREATE INDEX t_v ON t (v)");
    assert_eq!(count(&mut s), 10);
    exec(&mut s, "DROP TABLE t");
    assert_eq!(s.execute("EXECUTE byv(4)").unwrap_err().sqlstate(), "42P01");
    setup(&mut s);
    assert_eq!(count(&mut s), 10);
    assert_eq!(exec(&mut s, "DEALLOCATE byv")[0].tag, "DEALLOCATE");
}

#[test]
fn parameter_types_are_inferred_and_values_coerced() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    exec(&mut s, "CREATE TABLE b (id bigint PRIMARY KEY, amount numeric(10,2), at date, flag boolean)");

    let mut get = s.prepare("SELECT w FROM t WHERE k = $1", &[]).unwrap();
    assert_eq!(get.params(), &[DataType::Integer]);
    let w42 = vec![vec![Value::Text("w42".into())]];
    for v in [
        Value::Integer(42),
        Value::Text("42".into()),
        Value::Text(" 42 ".into()),
        Value::BigInt(42),
        Value::SmallInt(42),
    ] {
        assert_eq!(run(&mut s, &mut get, std::slice::from_ref(&v)).rows, w42, "{v:?}");
    }
    // NULL matches nothing.
    assert_eq!(run(&mut s, &mut get, &[Value::Null]).rows.len(), 0);
    assert_eq!(run_err(&mut s, &mut get, &[Value::Text("abc".into())]).sqlstate(), "22P02");
    assert_eq!(run_err(&mut s, &mut get, &[Value::BigInt(1 << 40)]).sqlstate(), "22003");
    assert_eq!(run_err(&mut s, &mut get, &[Value::Text("99999999999".into())]).sqlstate(), "22003");

    let mut put = s.prepare("INSERT INTO t VALUES ($1, $2, $3)", &[]).unwrap();
    assert_eq!(put.params(), &[DataType::Integer, DataType::Integer, DataType::Text]);
    run(&mut s, &mut put, &[Value::Text("500".into()), Value::BigInt(7), Value::Text("five hundred".into())]);
    let r = exec(&mut s, "SELECT k, v, w FROM t WHERE k = 500");
    assert_eq!(
        r[0].rows,
        vec![vec![Value::Integer(500), Value::Integer(7), Value::Text("five hundred".into())]]
    );

    // Parameters in expressions and in SET take the column's type.
    let mut upd = s.prepare("UPDATE t SET v = $1 WHERE k > $2 AND w LIKE $3", &[]).unwrap();
    assert_eq!(upd.params(), &[DataType::Integer, DataType::Integer, DataType::Text]);
    assert_eq!(
        run(&mut s, &mut upd, &[Value::Text("-1".into()), Value::Integer(90), Value::Text("w9%".into())]).tag,
        "UPDATE 9"
    );

    let mut ins_b = s.prepare("INSERT INTO b VALUES ($1, $2, $3, $4)", &[]).unwrap();
    assert_eq!(ins_b.params()[0], DataType::BigInt);
    run(
        &mut s,
        &mut ins_b,
        &[
            Value::Integer(1),
            Value::Text("12.5".into()),
            Value::Text("2024-02-29".into()),
            Value::Text("true".into()),
        ],
    );
    let r = exec(&mut s, "SELECT id, amount, at, flag FROM b");
    let shown: Vec<String> = r[0].rows[0].iter().map(|v| v.to_string()).collect();
    assert_eq!(shown, ["1", "12.50", "2024-02-29", "t"]);
    assert_eq!(
        run_err(&mut s, &mut ins_b, &[Value::Integer(2), Value::Text("x".into()), Value::Null, Value::Null])
            .sqlstate(),
        "22P02"
    );

    // A declared type wins over inference.
    let mut declared = s.prepare("SELECT $1 || 'x'", &[Some(DataType::Text)]).unwrap();
    assert_eq!(declared.params(), &[DataType::Text]);
    assert_eq!(
        run(&mut s, &mut declared, &[Value::Text("a".into())]).rows,
        vec![vec![Value::Text("ax".into())]]
    );
    let mut declared_int = s.prepare("SELECT w FROM t WHERE k = $1", &[Some(DataType::BigInt)]).unwrap();
    assert_eq!(declared_int.params(), &[DataType::BigInt]);
    assert_eq!(run(&mut s, &mut declared_int, &[Value::BigInt(42)]).rows, w42);
}

#[test]
fn too_few_parameters_is_08p01() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    let mut get = s.prepare("SELECT w FROM t WHERE k = $1 AND v = $2", &[]).unwrap();
    assert_eq!(get.params().len(), 2);
    assert_eq!(run_err(&mut s, &mut get, &[]).sqlstate(), "08P01");
    assert_eq!(run_err(&mut s, &mut get, &[Value::Integer(1)]).sqlstate(), "08P01");
    assert_eq!(run(&mut s, &mut get, &[Value::Integer(11), Value::Integer(1)]).rows.len(), 1);
    let mut none = s.prepare("SELECT count(*) FROM t", &[]).unwrap();
    assert_eq!(int(&run(&mut s, &mut none, &[]).rows[0][0]), 100);
}

/// PostgreSQL refuses a Bind with more parameters than the statement has:
/// "bind message supplies 2 parameters, but prepared statement requires 1".
#[test]
fn too_many_parameters_is_08p01() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    let mut get = s.prepare("SELECT w FROM t WHERE k = $1", &[]).unwrap();
    assert_eq!(run_err(&mut s, &mut get, &[Value::Integer(1), Value::Integer(2)]).sqlstate(), "08P01");
    let mut none = s.prepare("SELECT count(*) FROM t", &[]).unwrap();
    assert_eq!(run_err(&mut s, &mut none, &[Value::Integer(1)]).sqlstate(), "08P01");
}

#[test]
fn explain_through_prepare() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    let mut e = s.prepare("EXPLAIN SELECT * FROM t WHERE k = 5", &[]).unwrap();
    assert_eq!(e.columns().len(), 1);
    assert_eq!(e.columns()[0].name, "QUERY PLAN");
    let r = run(&mut s, &mut e, &[]);
    assert_eq!(r.tag, "EXPLAIN");
    let text = plan_text(&r);
    assert!(text.contains("using t_pkey on t") && text.contains("k = 5"), "{text}");
    // The same through the simple protocol.
    let simple = exec(&mut s, "EXPLAIN SELECT * FROM t WHERE k = 5");
    assert_eq!(plan_text(&simple[0]), text);

    let mut eu = s.prepare("EXPLAIN UPDATE t SET v = 0 WHERE k = 5", &[]).unwrap();
    assert!(plan_text(&run(&mut s, &mut eu, &[])).starts_with("Update on t"));
    // EXPLAIN does not run the statement.
    assert_eq!(int(&exec(&mut s, "SELECT v FROM t WHERE k = 5")[0].rows[0][0]), 5);

    // EXPLAIN of a parameterized statement shows the parameter.
    let mut ep = s.prepare("EXPLAIN SELECT * FROM t WHERE k = $1", &[]).unwrap();
    let text = plan_text(&run(&mut s, &mut ep, &[Value::Integer(5)]));
    assert!(text.contains("$1"), "{text}");
}

/// A parameterized EXPLAIN describes its parameters like the statement it
/// explains (PostgreSQL's ParameterDescription for `EXPLAIN ... $1`).
#[test]
fn explain_with_parameters_describes_them() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    let mut ep = s.prepare("EXPLAIN SELECT * FROM t WHERE k = $1", &[]).unwrap();
    assert_eq!(ep.params(), &[DataType::Integer]);
    // A parameter is as good as a constant for choosing the key look-up.
    let plan = s.execute_prepared(&mut ep, &[Value::Integer(5)]).unwrap();
    let first = plan.rows[0][0].to_string();
    assert!(first.contains("using t_pkey"), "{first}");
    assert!(plan.rows.iter().any(|r| r[0].to_string().contains("Index Cond: (k = $1)")));
}

#[test]
fn prepared_statements_inside_blocks() {
    let db = db();
    let mut s = db.session();
    let mut other = db.session();
    setup(&mut s);
    let mut put = s.prepare("INSERT INTO t VALUES ($1, $2, $3)", &[]).unwrap();
    let mut count = s.prepare("SELECT count(*) FROM t", &[]).unwrap();

    exec(&mut s, "BEGIN");
    run(&mut s, &mut put, &[Value::Integer(200), Value::Integer(0), Value::Text("a".into())]);
    assert_eq!(int(&run(&mut s, &mut count, &[]).rows[0][0]), 101);
    assert_eq!(int(&exec(&mut other, "SELECT count(*) FROM t")[0].rows[0][0]), 100);
    exec(&mut s, "ROLLBACK");
    assert_eq!(int(&run(&mut s, &mut count, &[]).rows[0][0]), 100);

    // An execution error fails the block like any statement.
    exec(&mut s, "BEGIN");
    run(&mut s, &mut put, &[Value::Integer(201), Value::Integer(0), Value::Text("a".into())]);
    let e = run_err(&mut s, &mut put, &[Value::Integer(1), Value::Integer(0), Value::Text("dup".into())]);
    assert_eq!(e.sqlstate(), "23505");
    assert_eq!(s.status(), TxnStatus::Failed);
    assert_eq!(run_err(&mut s, &mut count, &[]).sqlstate(), "25P02");
    assert_eq!(exec(&mut s, "COMMIT")[0].tag, "ROLLBACK");
    assert_eq!(int(&run(&mut s, &mut count, &[]).rows[0][0]), 100);

    exec(&mut s, "BEGIN");
    run(&mut s, &mut put, &[Value::Integer(202), Value::Integer(0), Value::Text("a".into())]);
    exec(&mut s, "COMMIT");
    assert_eq!(int(&exec(&mut other, "SELECT count(*) FROM t")[0].rows[0][0]), 101);
}

/// In PostgreSQL any error inside a transaction block aborts it, including
/// one raised while binding parameters or re-planning a prepared statement.
#[test]
fn bind_errors_fail_the_block() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    let mut get = s.prepare("SELECT w FROM t WHERE k = $1", &[]).unwrap();

    exec(&mut s, "BEGIN");
    exec(&mut s, "INSERT INTO t VALUES (300, 0, 'x')");
    assert_eq!(run_err(&mut s, &mut get, &[]).sqlstate(), "08P01");
    assert_eq!(s.status(), TxnStatus::Failed, "after a parameter count error");
    exec(&mut s, "ROLLBACK");

    exec(&mut s, "BEGIN");
    assert_eq!(run_err(&mut s, &mut get, &[Value::Text("abc".into())]).sqlstate(), "22P02");
    assert_eq!(s.status(), TxnStatus::Failed, "after a parameter conversion error");
    exec(&mut s, "ROLLBACK");

    let mut other = db.session();
    exec(&mut s, "BEGIN");
    exec(&mut other, "DROP TABLE t");
    assert_eq!(run_err(&mut s, &mut get, &[Value::Integer(1)]).sqlstate(), "42P01");
    assert_eq!(s.status(), TxnStatus::Failed, "after a re-planning error");
    exec(&mut s, "ROLLBACK");
}

/// A prepared statement can be run many times with different parameters,
/// and from a session other than the one that prepared it.
#[test]
fn many_executions_and_another_session() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    let mut bump = s.prepare("UPDATE t SET v = v + $1 WHERE k = $2 RETURNING v", &[]).unwrap();
    for i in 0..1_000 {
        let k = i % 100 + 1;
        let r = run(&mut s, &mut bump, &[Value::Integer(1), Value::Integer(k)]);
        assert_eq!(int_column(&r), vec![i64::from(k % 10 + i / 100 + 1)]);
    }
    let mut other = db.session();
    let r = run(&mut other, &mut bump, &[Value::Integer(0), Value::Integer(1)]);
    assert_eq!(int_column(&r), vec![11]);
    let r = exec(&mut s, "SELECT sum(v) FROM t");
    assert_eq!(int(&r[0].rows[0][0]), (1..=100).map(|k| k % 10).sum::<i64>() + 1_000);
}

/// The virtual catalog is made when a statement runs: a prepared catalog
/// query sees tables created after it was prepared, and `oid = $1` makes
/// `$1` an `oid`.
#[test]
fn catalog_queries_see_later_ddl() {
    let db = db();
    let mut s = db.session();
    let mut tables = s
        .prepare("SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relkind = 'r' ORDER BY 1", &[])
        .unwrap();
    let mut by_oid = s
        .prepare(
            "SELECT t.typname, n.nspname FROM pg_catalog.pg_type t \
             INNER JOIN pg_catalog.pg_namespace n ON t.typnamespace = n.oid WHERE t.oid = $1",
            &[],
        )
        .unwrap();
    assert_eq!(by_oid.params(), &[DataType::Oid]);
    assert!(run(&mut s, &mut tables, &[]).rows.is_empty());
    exec(&mut s, "CREATE TABLE a (x int)");
    exec(&mut s, "CREATE TABLE b (y int)");
    let names: Vec<String> = run(&mut s, &mut tables, &[]).rows.iter().map(|r| r[0].to_string()).collect();
    assert_eq!(names, ["a", "b"]);
    let r = run(&mut s, &mut by_oid, &[Value::Integer(23)]);
    assert_eq!(r.rows[0][0].to_string(), "int4");
    assert_eq!(r.rows[0][1].to_string(), "pg_catalog");
    // The OID psql reads first is the one it then looks the table up by.
    let oid = exec(&mut s, "SELECT oid FROM pg_class WHERE relname = 'b'")[0].rows[0][0].clone();
    let again = exec(&mut s, &format!("SELECT relname FROM pg_class WHERE oid = '{oid}'"));
    assert_eq!(again[0].rows[0][0].to_string(), "b");
}

/// The catalog and `current_user` report who the session says it is.
#[test]
fn catalog_reports_the_session_identity() {
    let db = db();
    let mut s = db.session();
    s.set_identity("alice", "shop");
    let r = exec(
        &mut s,
        "SELECT current_user, session_user, current_database(), current_catalog, \
         (SELECT datname FROM pg_database), (SELECT rolname FROM pg_roles), \
         pg_get_userbyid((SELECT datdba FROM pg_database))",
    );
    let got: Vec<String> = r[0].rows[0].iter().map(|v| v.to_string()).collect();
    assert_eq!(got, ["alice", "alice", "shop", "shop", "shop", "alice", "alice"]);
}

/// `CREATE TABLE ... AS` prepared with parameters: they are typed by the
/// query and their values are constants in the table's rows, quotes and
/// NULLs included; a count mismatch is 08P01 as for any statement.
#[test]
fn create_table_as_takes_parameters() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    let sql = "CREATE TABLE picked AS SELECT k, w || $1 AS tagged, $2::int AS extra, \
               sum(v) OVER (ORDER BY k ROWS BETWEEN $3 PRECEDING AND CURRENT ROW) AS s FROM t WHERE k <= $4";
    let mut cta = s.prepare(sql, &[]).unwrap();
    assert_eq!(cta.params().len(), 4);
    assert_eq!(run_err(&mut s, &mut cta, &[Value::Integer(1)]).sqlstate(), "08P01");
    let r =
        run(&mut s, &mut cta, &[Value::Text("'s".into()), Value::Null, Value::Integer(1), Value::Integer(3)]);
    assert_eq!(r.tag, "SELECT 3");
    let rows = exec(&mut s, "SELECT k, tagged, extra, s FROM picked ORDER BY k")[0].rows.clone();
    assert_eq!(
        rows,
        vec![
            vec![Value::Integer(1), Value::Text("w1's".into()), Value::Null, Value::BigInt(1)],
            vec![Value::Integer(2), Value::Text("w2's".into()), Value::Null, Value::BigInt(3)],
            vec![Value::Integer(3), Value::Text("w3's".into()), Value::Null, Value::BigInt(5)],
        ]
    );
}
