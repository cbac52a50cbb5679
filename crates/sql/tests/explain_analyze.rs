//! EXPLAIN ANALYZE runs the statement and shows, per operator, the rows it
//! returned, how often it ran and its time. Times vary from run to run, so
//! the test masks them and checks the rest exactly.

use centum_sql::{Database, Session};
use centum_types::Value;

fn db() -> Database {
    Database::open(centum_engine::Database::open(Default::default()).unwrap()).unwrap()
}

/// The plan's lines with every time replaced by `T`.
fn analyze(s: &mut Session, sql: &str) -> Vec<String> {
    explain(s, &format!("EXPLAIN ANALYZE {sql}"))
}

/// The lines an EXPLAIN statement prints, with every time replaced by `T`.
fn explain(s: &mut Session, sql: &str) -> Vec<String> {
    let r = s.execute(sql).unwrap().pop().unwrap();
    assert_eq!(r.tag, "EXPLAIN");
    r.rows
        .into_iter()
        .map(|row| match &row[0] {
            Value::Text(line) => mask(line),
            other => panic!("{other:?}"),
        })
        .collect()
}

fn mask(line: &str) -> String {
    if let Some(rest) = line.strip_prefix("Execution Time: ") {
        assert!(rest.ends_with(" ms") && rest.trim_end_matches(" ms").parse::<f64>().is_ok(), "{line}");
        return "Execution Time: T ms".into();
    }
    let Some(at) = line.find("(actual time=") else { return line.to_string() };
    let times_end = line[at..].find(" rows=").map(|i| at + i).expect("rows after the times");
    let times = &line[at + "(actual time=".len()..times_end];
    let (first, total) = times.split_once("..").expect("two times");
    let (first, total): (f64, f64) = (first.parse().unwrap(), total.parse().unwrap());
    assert!(first >= 0.0 && first <= total, "{line}");
    format!("{}(actual time=T..T{}", &line[..at], &line[times_end..])
}

fn setup() -> Session {
    let d = db();
    let mut s = d.session();
    s.execute("CREATE TABLE a (id int PRIMARY KEY, k int, v text)").unwrap();
    s.execute("CREATE INDEX a_k ON a (k)").unwrap();
    s.execute("INSERT INTO a SELECT g, g % 100, 'x' FROM generate_series(1, 10000) g").unwrap();
    s
}

#[test]
fn queries_show_actual_rows_and_loops_per_operator() {
    let mut s = setup();
    assert_eq!(
        analyze(&mut s, "SELECT k, count(*) FROM a WHERE k < 10 GROUP BY k ORDER BY k"),
        [
            "Sort (actual time=T..T rows=10 loops=1)",
            "  ->  HashAggregate (actual time=T..T rows=10 loops=1)",
            "        ->  Index Scan using a_k on a (actual time=T..T rows=1000 loops=1)",
            "              Index Cond: (k < 10)",
            "Execution Time: T ms",
        ]
    );
    assert_eq!(
        analyze(&mut s, "SELECT * FROM a WHERE id = 5"),
        [
            "Index Scan using a_pkey on a (actual time=T..T rows=1 loops=1)",
            "  Index Cond: (id = 5)",
            "Execution Time: T ms",
        ]
    );
    // The inner side of a nested loop runs once per outer row; rows are
    // per loop, as in PostgreSQL.
    let lines = analyze(&mut s, "SELECT * FROM a x JOIN a y ON x.id = y.k WHERE x.id <= 3");
    assert_eq!(lines[0], "Nested Loop (actual time=T..T rows=300 loops=1)", "{lines:#?}");
    assert!(lines.iter().any(|l| l.contains("on a y (actual time=T..T rows=100 loops=3)")), "{lines:#?}");
    // An operator that never ran says so.
    assert_eq!(
        analyze(&mut s, "SELECT * FROM a LIMIT 0"),
        [
            "Limit (actual time=T..T rows=0 loops=1)",
            "  ->  Seq Scan on a (never executed)",
            "Execution Time: T ms"
        ]
    );
}

#[test]
fn dml_runs_for_real_and_parameters_bind() {
    let mut s = setup();
    assert_eq!(
        analyze(&mut s, "UPDATE a SET v = 'y' WHERE k = 3"),
        [
            "Update on a",
            "  ->  Index Scan using a_k on a (actual time=T..T rows=100 loops=1)",
            "        Index Cond: k = 3",
            "Execution Time: T ms",
        ]
    );
    let n = s.execute("SELECT count(*) FROM a WHERE v = 'y'").unwrap().pop().unwrap().rows;
    assert_eq!(n, vec![vec![Value::BigInt(100)]]);
    // Inside a block that rolls back, its changes go with the block.
    s.execute("BEGIN").unwrap();
    analyze(&mut s, "DELETE FROM a WHERE k = 4");
    s.execute("ROLLBACK").unwrap();
    let n = s.execute("SELECT count(*) FROM a WHERE k = 4").unwrap().pop().unwrap().rows;
    assert_eq!(n, vec![vec![Value::BigInt(100)]]);
    // Prepared, with a parameter.
    let mut p = s.prepare("EXPLAIN ANALYZE SELECT * FROM a WHERE k = $1", &[]).unwrap();
    let r = s.execute_prepared(&mut p, &[Value::Integer(7)]).unwrap();
    let first = match &r.rows[0][0] {
        Value::Text(l) => mask(l),
        other => panic!("{other:?}"),
    };
    assert_eq!(first, "Index Scan using a_k on a (actual time=T..T rows=100 loops=1)");
    // Statements that are not planned cannot be analyzed.
    assert_eq!(s.execute("EXPLAIN ANALYZE VACUUM").unwrap_err().sqlstate(), "0A000");
}

#[test]
fn the_option_list_form_analyzes_as_postgresql_does() {
    let mut s = setup();
    let analyzed =
        ["Index Scan using a_pkey on a (actual time=T..T rows=1 loops=1)", "  Index Cond: (id = 5)"];
    for sql in [
        "EXPLAIN (ANALYZE) SELECT * FROM a WHERE id = 5",
        "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM a WHERE id = 5",
        "EXPLAIN (analyze true, costs off) SELECT * FROM a WHERE id = 5",
    ] {
        let got = explain(&mut s, sql);
        assert_eq!(got[..2], analyzed, "{sql}");
        assert_eq!(got.last().unwrap(), "Execution Time: T ms", "{sql}");
    }
    // Turned off, it only plans: the DELETE does not run.
    let got = explain(&mut s, "EXPLAIN (ANALYZE false) DELETE FROM a WHERE id = 5");
    assert!(got.iter().all(|l| !l.contains("actual")), "{got:?}");
    let n = s.execute("SELECT count(*) FROM a WHERE id = 5").unwrap().pop().unwrap().rows;
    assert_eq!(n, vec![vec![Value::BigInt(1)]]);
}
