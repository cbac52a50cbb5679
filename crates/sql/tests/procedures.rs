//! Routines beyond the golden script (`scripts/procedures.sql`): they,
//! their overloads and their composite types survive restarts; `centum.retry_on_conflict` runs a
//! conflicting call again, and only as often as it says; concurrent calls
//! of a retrying procedure keep a conserved total exact; record and array
//! text round-trips through a call for any values (property test).

mod common;

use centum_sql::Session;
use common::{db, exec, fails, open_durable, scalar};
use proptest::prelude::*;

#[test]
fn routines_and_their_types_survive_restarts() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open_durable(dir.path());
        let mut s = db.session();
        exec(&mut s, "CREATE TYPE pair AS (a int, b text)");
        exec(&mut s, "CREATE TABLE t (id int PRIMARY KEY, b text)");
        exec(
            &mut s,
            "CREATE FUNCTION load(ps pair[]) RETURNS int LANGUAGE plpgsql AS $$
             DECLARE p pair; n int := 0;
             BEGIN
               FOREACH p IN ARRAY ps LOOP
                 INSERT INTO t VALUES (p.a, p.b);
                 n := n + 1;
               END LOOP;
               RETURN n;
             END $$",
        );
        exec(&mut s, "CREATE PROCEDURE wipe(p_keep int) LANGUAGE plpgsql AS $$ BEGIN DELETE FROM t WHERE id <> p_keep; END $$");
        assert_eq!(scalar(&mut s, r#"SELECT load('{"(1,x)","(2,y)"}')"#), 2);
        // Overloads of one name, one in SQL.
        exec(&mut s, "CREATE FUNCTION twice(x int) RETURNS int LANGUAGE sql AS $$ SELECT x * 2 $$");
        exec(&mut s, "CREATE FUNCTION twice(x bigint, y int DEFAULT 1) RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN x * 2 + y; END $$");
    }
    for round in 0..2 {
        let db = open_durable(dir.path());
        let mut s = db.session();
        assert_eq!(scalar(&mut s, &format!("SELECT load(ARRAY[ROW({}, 'z')]::pair[])", 10 + round)), 1);
        // Rows 1 and 2 from the first run (then only row 1), and this one.
        assert_eq!(scalar(&mut s, "SELECT count(*) FROM t"), if round == 0 { 3 } else { 2 });
        exec(&mut s, "CALL wipe(1)");
        assert_eq!(scalar(&mut s, "SELECT count(*) FROM t"), 1);
        // The type is still in use, so it stays.
        assert_eq!(fails(&mut s, "DROP TYPE pair").sqlstate(), "2BP01");
        assert_eq!(scalar(&mut s, "SELECT twice(21)"), 42);
        assert_eq!(scalar(&mut s, "SELECT twice(20::bigint)"), 41);
        assert_eq!(scalar(&mut s, "SELECT twice(y => 3, x => 20::bigint)"), 43);
        assert_eq!(fails(&mut s, "DROP FUNCTION twice").sqlstate(), "42725");
    }
}

/// Sets up a counter and two functions bumping it, with and without
/// retries; every attempt takes a number from `attempts`, which no
/// rollback returns.
fn counter(s: &mut Session) {
    exec(s, "CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)");
    exec(s, "INSERT INTO counter VALUES (1, 0)");
    exec(s, "CREATE SEQUENCE attempts");
    for (name, retry) in [("bump_retry", "SET centum.retry_on_conflict = 3"), ("bump_once", "")] {
        exec(
            s,
            &format!(
                "CREATE FUNCTION {name}() RETURNS int LANGUAGE plpgsql {retry} AS $$
                 BEGIN
                   PERFORM nextval('attempts');
                   UPDATE counter SET n = n + 1 WHERE id = 1;
                   RETURN (SELECT n FROM counter WHERE id = 1);
                 END $$"
            ),
        );
    }
}

#[test]
fn a_conflicting_call_runs_again_as_often_as_the_routine_says() {
    let db = db();
    let mut holder = db.session();
    let mut caller = db.session();
    counter(&mut holder);
    exec(&mut caller, "SET default_transaction_isolation = 'repeatable read'");
    // The holder keeps a write on the row open: every attempt conflicts.
    exec(&mut holder, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    exec(&mut holder, "UPDATE counter SET n = n + 100 WHERE id = 1");
    let e = fails(&mut caller, "SELECT bump_once()");
    assert_eq!(e.sqlstate(), "40001", "{e}");
    assert_eq!(scalar(&mut caller, "SELECT currval('attempts')"), 1);
    let e = fails(&mut caller, "SELECT bump_retry()");
    assert_eq!(e.sqlstate(), "40001", "{e}");
    // One attempt and three retries.
    assert_eq!(scalar(&mut caller, "SELECT currval('attempts')"), 5);
    // Inside a block the caller's transaction is not the routine's to run
    // again: one attempt.
    exec(&mut caller, "BEGIN");
    assert_eq!(fails(&mut caller, "SELECT bump_retry()").sqlstate(), "40001");
    exec(&mut caller, "ROLLBACK");
    assert_eq!(scalar(&mut caller, "SELECT currval('attempts')"), 6);
    exec(&mut holder, "COMMIT");
    assert_eq!(scalar(&mut caller, "SELECT bump_retry()"), 101);
    assert_eq!(scalar(&mut caller, "SELECT currval('attempts')"), 7);
}

#[test]
fn concurrent_retrying_transfers_conserve_the_total() {
    let db = db();
    let mut s = db.session();
    exec(&mut s, "CREATE TABLE account (id int PRIMARY KEY, balance bigint NOT NULL)");
    exec(&mut s, "INSERT INTO account SELECT i, 1000 FROM generate_series(1, 4) AS g(i)");
    exec(
        &mut s,
        "CREATE PROCEDURE transfer(p_from int, p_to int, p_amount bigint)
         LANGUAGE plpgsql SET centum.retry_on_conflict = 1000 AS $$
         DECLARE have bigint;
         BEGIN
           SELECT balance INTO STRICT have FROM account WHERE id = p_from;
           IF have < p_amount THEN
             RETURN;
           END IF;
           UPDATE account SET balance = balance - p_amount WHERE id = p_from;
           UPDATE account SET balance = balance + p_amount WHERE id = p_to;
         END $$",
    );
    const THREADS: usize = 4;
    const CALLS: usize = 150;
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let db = &db;
            scope.spawn(move || {
                let mut s = db.session();
                exec(&mut s, "SET default_transaction_isolation = 'serializable'");
                for i in 0..CALLS {
                    let from = (t + i) % 4 + 1;
                    let to = (t + 2 * i + 1) % 4 + 1;
                    if from != to {
                        exec(&mut s, &format!("CALL transfer({from}, {to}, {})", i % 7 + 1));
                    }
                }
            });
        }
    });
    assert_eq!(scalar(&mut s, "SELECT sum(balance) FROM account"), 4000);
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM account WHERE balance < 0"), 0);
}

#[test]
fn runaway_recursion_fails_cleanly_and_the_session_goes_on() {
    let db = db();
    let mut s = db.session();
    exec(&mut s, "CREATE FUNCTION forever(n int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN forever(n + 1); END $$");
    // The depth at which the stack reserve runs out depends on the build;
    // the error does not.
    let e = fails(&mut s, "SELECT forever(1)");
    assert_eq!(e.sqlstate(), "54001", "{e}");
    assert!(e.context().unwrap().starts_with("PL/pgSQL function forever(integer) line 1 at RETURN"));
    assert_eq!(scalar(&mut s, "SELECT 1"), 1);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any text fields and integers, sent as an array of records, arrive in
    /// the routine exactly: it stores them and they read back equal.
    #[test]
    fn record_arrays_arrive_intact(items in prop::collection::vec((any::<i32>(), "[ -~]{0,12}", any::<bool>()), 0..6)) {
        let db = db();
        let mut s = db.session();
        exec(&mut s, "CREATE TYPE item AS (n int, label text)");
        exec(&mut s, "CREATE TABLE got (pos int PRIMARY KEY, n int, label text)");
        exec(&mut s, "CREATE FUNCTION keep(xs item[]) RETURNS int LANGUAGE plpgsql AS $$
            DECLARE x item; i int := 0;
            BEGIN
              FOREACH x IN ARRAY xs LOOP
                i := i + 1;
                INSERT INTO got VALUES (i, x.n, x.label);
              END LOOP;
              RETURN i;
            END $$");
        let rows: Vec<String> = items
            .iter()
            .map(|(n, label, null)| {
                let label = if *null { "NULL".to_string() } else { format!("'{}'", label.replace('\'', "''")) };
                format!("ROW({n}, {label})")
            })
            .collect();
        let call = format!("SELECT keep(ARRAY[{}]::item[])", rows.join(", "));
        let call = if items.is_empty() { "SELECT keep('{}')".to_string() } else { call };
        prop_assert_eq!(scalar(&mut s, &call), items.len() as i64);
        let r = exec(&mut s, "SELECT n, label FROM got ORDER BY pos");
        let got = &r[0].rows;
        prop_assert_eq!(got.len(), items.len());
        for (row, (n, label, null)) in got.iter().zip(&items) {
            prop_assert_eq!(row[0].to_string(), n.to_string());
            if *null {
                prop_assert!(row[1].is_null());
            } else {
                prop_assert_eq!(row[1].to_string(), label.clone());
            }
        }
    }
}

#[test]
fn routines_run_prepared_and_respect_read_only_blocks() {
    let db = db();
    let mut s = db.session();
    exec(&mut s, "CREATE TABLE t (id int PRIMARY KEY)");
    exec(&mut s, "CREATE PROCEDURE put(p int) LANGUAGE plpgsql AS $$ BEGIN INSERT INTO t VALUES (p); END $$");
    exec(&mut s, "CREATE FUNCTION n() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT count(*) FROM t); END $$");
    // CALL with a parameter, prepared once and run twice.
    let mut call = s.prepare("CALL put($1)", &[]).unwrap();
    assert_eq!(call.params(), &[centum_types::DataType::Integer]);
    for i in [1, 2] {
        s.execute_prepared(&mut call, &[centum_types::Value::Integer(i)]).unwrap();
    }
    assert_eq!(scalar(&mut s, "SELECT n()"), 2);
    // A read-only block may call routines that read, not ones that write.
    exec(&mut s, "BEGIN READ ONLY");
    assert_eq!(scalar(&mut s, "SELECT n()"), 2);
    let e = fails(&mut s, "CALL put(3)");
    assert_eq!(e.sqlstate(), "25006", "{e}");
    assert_eq!(e.to_string(), "cannot execute INSERT in a read-only transaction");
    exec(&mut s, "ROLLBACK");
    assert_eq!(scalar(&mut s, "SELECT n()"), 2);
}
