//! Isolation anomalies, two sessions on one database.
//!
//! Each test interleaves its sessions deterministically from one thread
//! (A begins and reads; B begins, writes, commits; A writes, commits...),
//! except where a READ COMMITTED writer must wait for an uncommitted one:
//! there the waiting session runs on a second thread, and the outcome is
//! the same whichever order the two threads reach the row in.

mod common;

use centum_sql::{Database, Error, Session, TxnStatus};
use centum_types::Value;
use common::{db, exec, fails, int, scalar};

fn tag(s: &mut Session, sql: &str) -> String {
    exec(s, sql).pop().unwrap().tag
}

fn expect_serialization(e: &Error, what: &str) {
    assert_eq!(e.sqlstate(), "40001", "{what}: {e}");
    assert!(e.is_retryable(), "{what}: 40001 must be retryable");
}

const LEVELS: [(&str, &str); 3] = [
    ("READ COMMITTED", "read committed"),
    ("REPEATABLE READ", "repeatable read"),
    ("SERIALIZABLE", "serializable"),
];

fn counter(db: &Database) {
    let mut s = db.session();
    exec(&mut s, "CREATE TABLE c (id int PRIMARY KEY, n int NOT NULL)");
    exec(&mut s, "INSERT INTO c VALUES (1, 0)");
}

// ---------------------------------------------------------------- lost update

/// Two overlapping `n = n + 1` transactions under REPEATABLE READ or
/// SERIALIZABLE: the second writer of the row fails with 40001, the first
/// one's increment stays, and a retry of the loser makes the counter 2.
fn lost_update_prevented(level: &str) {
    let db = db();
    counter(&db);
    let (mut a, mut b) = (db.session(), db.session());

    exec(&mut a, &format!("BEGIN ISOLATION LEVEL {level}"));
    assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 0);

    exec(&mut b, &format!("BEGIN ISOLATION LEVEL {level}"));
    assert_eq!(scalar(&mut b, "SELECT n FROM c WHERE id = 1"), 0);
    assert_eq!(tag(&mut b, "UPDATE c SET n = n + 1 WHERE id = 1"), "UPDATE 1");
    assert_eq!(tag(&mut b, "COMMIT"), "COMMIT");

    let e = fails(&mut a, "UPDATE c SET n = n + 1 WHERE id = 1");
    expect_serialization(&e, &format!("{level}: second writer"));
    assert_eq!(a.status(), TxnStatus::Failed);
    let e = fails(&mut a, "SELECT 1");
    assert_eq!(e.sqlstate(), "25P02");
    assert_eq!(tag(&mut a, "COMMIT"), "ROLLBACK");
    assert_eq!(a.status(), TxnStatus::Idle);
    assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 1);

    // The retry sees B's increment.
    exec(&mut a, &format!("BEGIN ISOLATION LEVEL {level}"));
    assert_eq!(tag(&mut a, "UPDATE c SET n = n + 1 WHERE id = 1"), "UPDATE 1");
    assert_eq!(tag(&mut a, "COMMIT"), "COMMIT");
    assert_eq!(scalar(&mut b, "SELECT n FROM c WHERE id = 1"), 2);
}

#[test]
fn lost_update_fails_the_second_writer_under_repeatable_read() {
    lost_update_prevented("REPEATABLE READ");
}

#[test]
fn lost_update_fails_the_second_writer_under_serializable() {
    lost_update_prevented("SERIALIZABLE");
}

/// Same under the other spelling: BEGIN, then SET TRANSACTION.
#[test]
fn lost_update_with_set_transaction() {
    for level in ["REPEATABLE READ", "SERIALIZABLE"] {
        let db = db();
        counter(&db);
        let (mut a, mut b) = (db.session(), db.session());
        exec(&mut a, "BEGIN");
        exec(&mut a, &format!("SET TRANSACTION ISOLATION LEVEL {level}"));
        assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 0);
        assert_eq!(tag(&mut b, "UPDATE c SET n = n + 1 WHERE id = 1"), "UPDATE 1");
        let e = fails(&mut a, "UPDATE c SET n = n + 1 WHERE id = 1");
        expect_serialization(&e, level);
        assert_eq!(tag(&mut a, "ROLLBACK"), "ROLLBACK");
        assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 1);
    }
}

/// The first writer has not committed yet when the second one writes: under
/// REPEATABLE READ and SERIALIZABLE the second fails at once (no waiting),
/// and once the first commits its value stands.
#[test]
fn second_writer_of_an_uncommitted_row_fails_under_snapshot_levels() {
    for level in ["REPEATABLE READ", "SERIALIZABLE"] {
        let db = db();
        counter(&db);
        let (mut a, mut b) = (db.session(), db.session());
        exec(&mut a, &format!("BEGIN ISOLATION LEVEL {level}"));
        exec(&mut b, &format!("BEGIN ISOLATION LEVEL {level}"));
        assert_eq!(tag(&mut a, "UPDATE c SET n = n + 1 WHERE id = 1"), "UPDATE 1");
        let e = fails(&mut b, "UPDATE c SET n = n + 10 WHERE id = 1");
        expect_serialization(&e, level);
        assert_eq!(tag(&mut b, "ROLLBACK"), "ROLLBACK");
        assert_eq!(tag(&mut a, "COMMIT"), "COMMIT");
        assert_eq!(scalar(&mut b, "SELECT n FROM c WHERE id = 1"), 1);
    }
}

/// READ COMMITTED: A read 0, B incremented and committed, then A's
/// `n = n + 1` starts a new statement snapshot and works on the newest
/// version: the counter ends at 2 and nobody fails.
#[test]
fn read_committed_update_rereads_the_newest_version() {
    let db = db();
    counter(&db);
    let (mut a, mut b) = (db.session(), db.session());

    exec(&mut a, "BEGIN ISOLATION LEVEL READ COMMITTED");
    assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 0);

    exec(&mut b, "BEGIN");
    assert_eq!(tag(&mut b, "UPDATE c SET n = n + 1 WHERE id = 1"), "UPDATE 1");
    assert_eq!(tag(&mut b, "COMMIT"), "COMMIT");

    let r = exec(&mut a, "UPDATE c SET n = n + 1 WHERE id = 1 RETURNING n");
    assert_eq!(r[0].rows, vec![vec![Value::Integer(2)]]);
    assert_eq!(tag(&mut a, "COMMIT"), "COMMIT");
    assert_eq!(scalar(&mut b, "SELECT n FROM c WHERE id = 1"), 2);
}

/// READ COMMITTED with the first writer still open: the second writer
/// waits (on its own thread) for the first to commit, then increments the
/// committed value. Whichever thread gets to the row first, the counter
/// ends at 2.
#[test]
fn read_committed_writer_waits_for_an_uncommitted_writer() {
    let db = db();
    counter(&db);
    let mut a = db.session();
    exec(&mut a, "BEGIN");
    assert_eq!(tag(&mut a, "UPDATE c SET n = n + 1 WHERE id = 1"), "UPDATE 1");

    let db2 = db.clone();
    let t = std::thread::spawn(move || {
        let mut b = db2.session();
        exec(&mut b, "BEGIN");
        let r = exec(&mut b, "UPDATE c SET n = n + 1 WHERE id = 1 RETURNING n");
        exec(&mut b, "COMMIT");
        int(&r[0].rows[0][0])
    });
    assert_eq!(tag(&mut a, "COMMIT"), "COMMIT");
    let seen_by_b = t.join().unwrap();
    assert_eq!(seen_by_b, 2, "B must increment A's committed value");
    assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 2);
}

/// The waiting READ COMMITTED writer goes on with the old version when the
/// first writer rolls back.
#[test]
fn read_committed_writer_after_an_aborted_writer() {
    let db = db();
    counter(&db);
    let mut a = db.session();
    exec(&mut a, "BEGIN");
    assert_eq!(tag(&mut a, "UPDATE c SET n = n + 100 WHERE id = 1"), "UPDATE 1");
    let db2 = db.clone();
    let t = std::thread::spawn(move || {
        let mut b = db2.session();
        let r = exec(&mut b, "UPDATE c SET n = n + 1 WHERE id = 1 RETURNING n");
        int(&r[0].rows[0][0])
    });
    assert_eq!(tag(&mut a, "ROLLBACK"), "ROLLBACK");
    assert_eq!(t.join().unwrap(), 1);
    assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 1);
}

// ----------------------------------------------------------------- write skew

fn doctors(db: &Database) {
    let mut s = db.session();
    exec(&mut s, "CREATE TABLE doctors (name text PRIMARY KEY, on_call boolean NOT NULL)");
    exec(&mut s, "INSERT INTO doctors VALUES ('alice', true), ('bob', true), ('carol', false)");
}

/// One doctor's "I may go off call if someone else stays": reads how many
/// are on call, and if at least two are, takes `name` off call. Returns the
/// count it saw.
fn go_off_call(s: &mut Session, name: &str) -> Result<i64, Error> {
    let r = s.execute("SELECT count(*) FROM doctors WHERE on_call")?;
    let n = int(&r[0].rows[0][0]);
    if n >= 2 {
        s.execute(&format!("UPDATE doctors SET on_call = false WHERE name = '{name}'"))?;
    }
    Ok(n)
}

#[test]
fn write_skew_is_allowed_under_repeatable_read() {
    let db = db();
    doctors(&db);
    let (mut a, mut b) = (db.session(), db.session());
    exec(&mut a, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    exec(&mut b, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(go_off_call(&mut a, "alice").unwrap(), 2);
    assert_eq!(go_off_call(&mut b, "bob").unwrap(), 2);
    assert_eq!(tag(&mut a, "COMMIT"), "COMMIT");
    assert_eq!(tag(&mut b, "COMMIT"), "COMMIT");
    // The anomaly snapshot isolation permits: nobody is on call.
    assert_eq!(scalar(&mut a, "SELECT count(*) FROM doctors WHERE on_call"), 0);
}

/// Runs one statement or COMMIT of a transaction that may already have
/// failed; records a serialization failure.
fn step(s: &mut Session, failed: &mut bool, f: impl FnOnce(&mut Session) -> Result<(), Error>) {
    if *failed {
        return;
    }
    if let Err(e) = f(s) {
        expect_serialization(&e, "serializable write skew");
        *failed = true;
    }
}

#[test]
fn write_skew_is_prevented_under_serializable() {
    let db = db();
    doctors(&db);
    let (mut a, mut b) = (db.session(), db.session());
    let (mut a_failed, mut b_failed) = (false, false);
    exec(&mut a, "BEGIN ISOLATION LEVEL SERIALIZABLE");
    exec(&mut b, "BEGIN ISOLATION LEVEL SERIALIZABLE");
    step(&mut a, &mut a_failed, |s| go_off_call(s, "alice").map(|n| assert_eq!(n, 2)));
    step(&mut b, &mut b_failed, |s| go_off_call(s, "bob").map(|n| assert_eq!(n, 2)));
    for (s, failed) in [(&mut a, &mut a_failed), (&mut b, &mut b_failed)] {
        if *failed {
            assert_eq!(s.status(), TxnStatus::Failed);
            assert_eq!(tag(s, "COMMIT"), "ROLLBACK");
        } else {
            step(s, failed, |s| s.execute("COMMIT").map(|r| assert_eq!(r[0].tag, "COMMIT")));
        }
        assert_eq!(s.status(), TxnStatus::Idle);
    }
    assert!(a_failed || b_failed, "SERIALIZABLE let both doctors go off call");
    let on_call = scalar(&mut a, "SELECT count(*) FROM doctors WHERE on_call");
    assert!(on_call >= 1);
    assert_eq!(on_call, 2 - i64::from(!a_failed) - i64::from(!b_failed));

    // The loser retries, sees one doctor on call, and stays on.
    let (loser, name) = if a_failed { (&mut a, "alice") } else { (&mut b, "bob") };
    exec(loser, "BEGIN ISOLATION LEVEL SERIALIZABLE");
    let seen = go_off_call(loser, name).unwrap();
    assert_eq!(tag(loser, "COMMIT"), "COMMIT");
    assert!(seen <= 1 || a_failed && b_failed);
    assert!(scalar(&mut a, "SELECT count(*) FROM doctors WHERE on_call") >= 1);
}

/// Write skew where both sides already committed their reads' dependencies
/// one after the other: A commits first, then B (whose read A's write
/// invalidated) must fail at its UPDATE or its COMMIT.
#[test]
fn serializable_second_committer_of_a_skew_fails() {
    let db = db();
    doctors(&db);
    let (mut a, mut b) = (db.session(), db.session());
    exec(&mut a, "BEGIN ISOLATION LEVEL SERIALIZABLE");
    exec(&mut b, "BEGIN ISOLATION LEVEL SERIALIZABLE");
    assert_eq!(go_off_call(&mut a, "alice").unwrap(), 2);
    assert_eq!(scalar(&mut b, "SELECT count(*) FROM doctors WHERE on_call"), 2);
    assert_eq!(tag(&mut a, "COMMIT"), "COMMIT");
    let err = match b.execute("UPDATE doctors SET on_call = false WHERE name = 'bob'") {
        Err(e) => e,
        Ok(_) => fails(&mut b, "COMMIT"),
    };
    expect_serialization(&err, "B read what A changed");
    exec(&mut b, "ROLLBACK");
    assert_eq!(scalar(&mut b, "SELECT count(*) FROM doctors WHERE on_call"), 1);
}

// -------------------------------------------------------------------- phantom

fn ranged(db: &Database, indexed: bool) {
    let mut s = db.session();
    exec(&mut s, "CREATE TABLE r (k int PRIMARY KEY, v int)");
    if indexed {
        exec(&mut s, "CREATE INDEX r_v ON r (v)");
    }
    exec(&mut s, "INSERT INTO r SELECT g, g * 10 FROM generate_series(1, 10) g");
    exec(&mut s, "CREATE TABLE audit (id int PRIMARY KEY, seen bigint)");
}

const RANGE_COUNT: &str = "SELECT count(*) FROM r WHERE v BETWEEN 20 AND 50";

#[test]
fn phantom_fails_a_serializable_writer() {
    for indexed in [false, true] {
        let db = db();
        ranged(&db, indexed);
        let (mut a, mut b) = (db.session(), db.session());
        exec(&mut a, "BEGIN ISOLATION LEVEL SERIALIZABLE");
        assert_eq!(scalar(&mut a, RANGE_COUNT), 4);

        exec(&mut b, "BEGIN ISOLATION LEVEL SERIALIZABLE");
        assert_eq!(tag(&mut b, "INSERT INTO r VALUES (100, 35)"), "INSERT 0 1");
        assert_eq!(tag(&mut b, "COMMIT"), "COMMIT");

        // A writes what it concluded from the range, elsewhere.
        let err = match a.execute("INSERT INTO audit VALUES (1, 4)") {
            Err(e) => e,
            Ok(_) => fails(&mut a, "COMMIT"),
        };
        expect_serialization(&err, &format!("phantom (indexed: {indexed})"));
        exec(&mut a, "ROLLBACK");
        assert_eq!(scalar(&mut a, "SELECT count(*) FROM audit"), 0);
        assert_eq!(scalar(&mut a, RANGE_COUNT), 5);
    }
}

/// A phantom through a prepared statement's range scan.
#[test]
fn phantom_fails_a_serializable_writer_through_prepared_statements() {
    let db = db();
    ranged(&db, true);
    let (mut a, mut b) = (db.session(), db.session());
    let mut count = a.prepare("SELECT count(*) FROM r WHERE v >= $1 AND v <= $2", &[]).unwrap();
    let mut audit = a.prepare("INSERT INTO audit VALUES ($1, $2)", &[]).unwrap();
    exec(&mut a, "BEGIN ISOLATION LEVEL SERIALIZABLE");
    let r = a.execute_prepared(&mut count, &[Value::Integer(20), Value::Integer(50)]).unwrap();
    assert_eq!(int(&r.rows[0][0]), 4);
    exec(&mut b, "INSERT INTO r VALUES (100, 20)");
    let err = match a.execute_prepared(&mut audit, &[Value::Integer(1), Value::BigInt(4)]) {
        Err(e) => e,
        Ok(_) => fails(&mut a, "COMMIT"),
    };
    expect_serialization(&err, "prepared phantom");
    exec(&mut a, "ROLLBACK");
}

/// A row inserted outside the range A scanned (through a range index) is
/// no phantom: A commits.
#[test]
fn insert_outside_a_scanned_index_range_is_no_phantom() {
    let db = db();
    ranged(&db, true);
    let (mut a, mut b) = (db.session(), db.session());
    exec(&mut a, "BEGIN ISOLATION LEVEL SERIALIZABLE");
    assert_eq!(scalar(&mut a, RANGE_COUNT), 4);
    exec(&mut b, "INSERT INTO r VALUES (100, 95)");
    exec(&mut a, "INSERT INTO audit VALUES (1, 4)");
    assert_eq!(tag(&mut a, "COMMIT"), "COMMIT");
}

/// A serializable transaction that only reads commits even when its range
/// gained a row: it serializes before the inserter.
#[test]
fn read_only_serializable_transaction_commits_despite_a_phantom() {
    let db = db();
    ranged(&db, false);
    let (mut a, mut b) = (db.session(), db.session());
    exec(&mut a, "BEGIN ISOLATION LEVEL SERIALIZABLE");
    assert_eq!(scalar(&mut a, RANGE_COUNT), 4);
    exec(&mut b, "INSERT INTO r VALUES (100, 35)");
    assert_eq!(scalar(&mut a, RANGE_COUNT), 4);
    assert_eq!(tag(&mut a, "COMMIT"), "COMMIT");
}

#[test]
fn repeatable_read_sees_no_phantom() {
    for indexed in [false, true] {
        let db = db();
        ranged(&db, indexed);
        let (mut a, mut b) = (db.session(), db.session());
        exec(&mut a, "BEGIN ISOLATION LEVEL REPEATABLE READ");
        assert_eq!(scalar(&mut a, RANGE_COUNT), 4);
        exec(&mut b, "BEGIN ISOLATION LEVEL REPEATABLE READ");
        exec(&mut b, "INSERT INTO r VALUES (100, 35)");
        exec(&mut b, "DELETE FROM r WHERE k = 3");
        exec(&mut b, "COMMIT");
        assert_eq!(scalar(&mut a, RANGE_COUNT), 4, "indexed: {indexed}");
        assert_eq!(scalar(&mut a, "SELECT count(*) FROM r"), 10);
        assert_eq!(scalar(&mut a, "SELECT v FROM r WHERE k = 3"), 30);
        // Writing elsewhere does not fail under REPEATABLE READ.
        exec(&mut a, "INSERT INTO audit VALUES (1, 4)");
        assert_eq!(tag(&mut a, "COMMIT"), "COMMIT");
        assert_eq!(scalar(&mut a, RANGE_COUNT), 4);
        assert_eq!(scalar(&mut a, "SELECT count(*) FROM r"), 10);
        assert_eq!(scalar(&mut a, "SELECT count(*) FROM r WHERE k = 3"), 0);
    }
}

#[test]
fn read_committed_sees_the_phantom_in_its_next_statement() {
    let db = db();
    ranged(&db, true);
    let (mut a, mut b) = (db.session(), db.session());
    exec(&mut a, "BEGIN");
    assert_eq!(scalar(&mut a, RANGE_COUNT), 4);
    exec(&mut b, "INSERT INTO r VALUES (100, 35)");
    assert_eq!(scalar(&mut a, RANGE_COUNT), 5);
    exec(&mut a, "COMMIT");
}

// -------------------------------------------------------- non-repeatable read

#[test]
fn non_repeatable_read_by_level() {
    for (level, shown) in LEVELS {
        let db = db();
        counter(&db);
        let (mut a, mut b) = (db.session(), db.session());
        exec(&mut a, &format!("BEGIN ISOLATION LEVEL {level}"));
        let r = exec(&mut a, "SHOW transaction_isolation");
        assert_eq!(r[0].rows[0][0], Value::Text(shown.into()));
        assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 0);

        exec(&mut b, "BEGIN");
        exec(&mut b, "UPDATE c SET n = 5 WHERE id = 1");
        // Uncommitted: nobody else sees it, at any level.
        assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 0, "{level}: dirty read");
        exec(&mut b, "COMMIT");

        let again = scalar(&mut a, "SELECT n FROM c WHERE id = 1");
        if level == "READ COMMITTED" {
            assert_eq!(again, 5, "READ COMMITTED must see the committed value");
        } else {
            assert_eq!(again, 0, "{level}: non-repeatable read");
        }
        assert_eq!(tag(&mut a, "COMMIT"), "COMMIT");
        assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 5);
    }
}

/// The session default (`SET default_transaction_isolation`) applies to
/// BEGIN without a level.
#[test]
fn session_default_isolation_applies_to_plain_begin() {
    let db = db();
    counter(&db);
    let (mut a, mut b) = (db.session(), db.session());
    exec(&mut a, "SET default_transaction_isolation = 'repeatable read'");
    exec(&mut a, "BEGIN");
    assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 0);
    exec(&mut b, "UPDATE c SET n = 7 WHERE id = 1");
    assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 0);
    exec(&mut a, "COMMIT");
    assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 7);
}

// -------------------------------------------------------------- failed blocks

#[test]
fn failed_statement_poisons_the_block_until_it_ends() {
    for end in ["COMMIT", "ROLLBACK", "END", "ABORT"] {
        let db = db();
        let (mut a, mut b) = (db.session(), db.session());
        exec(&mut a, "CREATE TABLE t (k int PRIMARY KEY, v text)");
        exec(&mut a, "INSERT INTO t VALUES (1, 'base')");
        let mut get = a.prepare("SELECT v FROM t WHERE k = $1", &[]).unwrap();

        exec(&mut a, "BEGIN");
        assert_eq!(a.status(), TxnStatus::InBlock);
        exec(&mut a, "INSERT INTO t VALUES (2, 'a-two')");
        exec(&mut a, "UPDATE t SET v = 'a-changed' WHERE k = 1");
        let e = fails(&mut a, "SELECT 1/0");
        assert_eq!(e.sqlstate(), "22012");
        assert_eq!(a.status(), TxnStatus::Failed);

        // B is unaffected, and sees none of A's writes.
        assert_eq!(b.status(), TxnStatus::Idle);
        assert_eq!(scalar(&mut b, "SELECT count(*) FROM t"), 1);
        exec(&mut b, "INSERT INTO t VALUES (3, 'b-three')");
        assert_eq!(b.status(), TxnStatus::Idle);

        for sql in [
            "SELECT 1",
            "SELECT * FROM t",
            "INSERT INTO t VALUES (4, 'x')",
            "UPDATE t SET v = 'y'",
            "DELETE FROM t",
            "SHOW transaction_isolation",
            "SET search_path TO public",
            "SELECT * FROM no_such_table",
        ] {
            let e = fails(&mut a, sql);
            assert_eq!(e.sqlstate(), "25P02", "{sql}: {e}");
            assert_eq!(a.status(), TxnStatus::Failed, "{sql}");
        }
        let e = a.execute_prepared(&mut get, &[Value::Integer(1)]).unwrap_err();
        assert_eq!(e.sqlstate(), "25P02");
        // A second BEGIN does not revive the block.
        let r = exec(&mut a, "BEGIN");
        assert!(!r[0].notices.is_empty());
        assert_eq!(a.status(), TxnStatus::Failed);

        let r = exec(&mut a, end);
        assert_eq!(r[0].tag, "ROLLBACK", "{end} of a failed block");
        assert_eq!(a.status(), TxnStatus::Idle);

        // The block's writes are gone; B's stays.
        let r = exec(&mut a, "SELECT k, v FROM t ORDER BY k");
        assert_eq!(
            r[0].rows,
            vec![
                vec![Value::Integer(1), Value::Text("base".into())],
                vec![Value::Integer(3), Value::Text("b-three".into())],
            ],
            "after {end}"
        );
        let r = a.execute_prepared(&mut get, &[Value::Integer(1)]).unwrap();
        assert_eq!(r.rows, vec![vec![Value::Text("base".into())]]);
        // The key A had inserted is free again.
        exec(&mut b, "INSERT INTO t VALUES (2, 'b-two')");
        assert_eq!(b.status(), TxnStatus::Idle);
    }
}

/// Errors of every kind fail a block: constraint, type, name resolution,
/// and a serialization failure.
#[test]
fn every_kind_of_error_fails_the_block() {
    let db = db();
    let mut a = db.session();
    exec(&mut a, "CREATE TABLE t (k int PRIMARY KEY, v int CHECK (v > 0))");
    exec(&mut a, "INSERT INTO t VALUES (1, 1)");
    for (sql, code) in [
        ("INSERT INTO t VALUES (1, 1)", "23505"),
        ("INSERT INTO t VALUES (2, 0)", "23514"),
        ("INSERT INTO t VALUES ('x', 1)", "22P02"),
        ("SELECT * FROM missing", "42P01"),
        ("SELECT nope FROM t", "42703"),
        ("SELEC 1", "42601"),
    ] {
        exec(&mut a, "BEGIN");
        exec(&mut a, "INSERT INTO t VALUES (10, 10)");
        let e = fails(&mut a, sql);
        assert_eq!(e.sqlstate(), code, "{sql}: {e}");
        assert_eq!(a.status(), TxnStatus::Failed, "{sql}");
        assert_eq!(fails(&mut a, "SELECT 1").sqlstate(), "25P02");
        assert_eq!(tag(&mut a, "COMMIT"), "ROLLBACK");
        assert_eq!(scalar(&mut a, "SELECT count(*) FROM t"), 1, "{sql}");
    }
}

/// A failing statement outside a block leaves the session idle and takes
/// none of its own changes with it.
#[test]
fn autocommit_statement_is_atomic() {
    let db = db();
    let mut a = db.session();
    exec(&mut a, "CREATE TABLE t (k int PRIMARY KEY, v int CHECK (v > 0))");
    exec(&mut a, "INSERT INTO t VALUES (1, 1)");
    let e = fails(&mut a, "INSERT INTO t VALUES (2, 2), (3, 3), (1, 1)");
    assert_eq!(e.sqlstate(), "23505");
    assert_eq!(a.status(), TxnStatus::Idle);
    let e = fails(&mut a, "UPDATE t SET v = v - 1");
    assert_eq!(e.sqlstate(), "23514");
    exec(&mut a, "INSERT INTO t VALUES (2, 5)");
    let e = fails(&mut a, "UPDATE t SET v = v - 2");
    assert_eq!(e.sqlstate(), "23514");
    let r = exec(&mut a, "SELECT k, v FROM t ORDER BY k");
    assert_eq!(
        r[0].rows,
        vec![vec![Value::Integer(1), Value::Integer(1)], vec![Value::Integer(2), Value::Integer(5)]]
    );
}

/// Several statements in one simple-query string outside a block run as
/// one implicit transaction (PostgreSQL): an error in a later statement
/// undoes the earlier ones. The crate documents this behaviour on
/// `Session::execute`.
#[test]
fn multi_statement_string_is_one_implicit_transaction() {
    let db = db();
    let mut a = db.session();
    exec(&mut a, "CREATE TABLE t (k int PRIMARY KEY)");
    let e = fails(&mut a, "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); INSERT INTO t VALUES (1)");
    assert_eq!(e.sqlstate(), "23505");
    assert_eq!(a.status(), TxnStatus::Idle);
    assert_eq!(scalar(&mut a, "SELECT count(*) FROM t"), 0);
}

/// An explicit block inside one simple-query string behaves like separate
/// statements.
#[test]
fn block_inside_one_query_string() {
    let db = db();
    let mut a = db.session();
    exec(&mut a, "CREATE TABLE t (k int PRIMARY KEY)");
    let r = exec(&mut a, "BEGIN; INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); COMMIT");
    assert_eq!(
        r.iter().map(|r| r.tag.as_str()).collect::<Vec<_>>(),
        ["BEGIN", "INSERT 0 1", "INSERT 0 1", "COMMIT"]
    );
    assert_eq!(a.status(), TxnStatus::Idle);
    let e = fails(&mut a, "BEGIN; INSERT INTO t VALUES (3); INSERT INTO t VALUES (1); COMMIT");
    assert_eq!(e.sqlstate(), "23505");
    // Execution stopped at the error: the block is open and failed.
    assert_eq!(a.status(), TxnStatus::Failed);
    assert_eq!(tag(&mut a, "ROLLBACK"), "ROLLBACK");
    assert_eq!(scalar(&mut a, "SELECT count(*) FROM t"), 2);
}

/// A serialization failure at COMMIT leaves the session idle (not failed),
/// ready for the retry.
#[test]
fn serialization_failure_at_commit_leaves_the_session_idle() {
    let db = db();
    ranged(&db, false);
    let (mut a, mut b) = (db.session(), db.session());
    exec(&mut a, "BEGIN ISOLATION LEVEL SERIALIZABLE");
    assert_eq!(scalar(&mut a, "SELECT v FROM r WHERE k = 2"), 20);
    exec(&mut a, "INSERT INTO audit VALUES (1, 20)");
    exec(&mut b, "UPDATE r SET v = 21 WHERE k = 2");
    let e = fails(&mut a, "COMMIT");
    expect_serialization(&e, "read row changed before commit");
    assert_eq!(a.status(), TxnStatus::Idle);
    assert_eq!(scalar(&mut a, "SELECT count(*) FROM audit"), 0);
    let r = exec(&mut a, "ROLLBACK");
    assert!(!r[0].notices.is_empty(), "no transaction should be in progress");
}

/// Dropping a session with an open block aborts it; other sessions then
/// write the same rows freely.
#[test]
fn dropping_a_session_aborts_its_block() {
    let db = db();
    counter(&db);
    let mut a = db.session();
    exec(&mut a, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    exec(&mut a, "UPDATE c SET n = 100 WHERE id = 1");
    drop(a);
    let mut b = db.session();
    exec(&mut b, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    exec(&mut b, "UPDATE c SET n = n + 1 WHERE id = 1");
    exec(&mut b, "COMMIT");
    assert_eq!(scalar(&mut b, "SELECT n FROM c WHERE id = 1"), 1);
}

/// `BEGIN READ ONLY` refuses writes with 25006, as in PostgreSQL.
#[test]
fn read_only_block_refuses_writes() {
    let db = db();
    counter(&db);
    let mut a = db.session();
    exec(&mut a, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    let e = fails(&mut a, "UPDATE c SET n = 1 WHERE id = 1");
    assert_eq!(e.sqlstate(), "25006");
    exec(&mut a, "ROLLBACK");
    assert_eq!(scalar(&mut a, "SELECT n FROM c WHERE id = 1"), 0);
}

/// Runs A's change in an open block, B's statement on another thread
/// (READ COMMITTED, autocommit), commits A, and compares B's result (tag
/// and RETURNING rows) and the final `n` of row 1 (None: deleted) with
/// what PostgreSQL gives. The sleep only makes it likely that B reaches
/// the row while A still holds it; the expected outcome is the same either
/// way. Returns a description of any difference.
fn after_waiting(
    a_sql: &str,
    b_sql: &'static str,
    b_want: (&str, Vec<i64>),
    want: Option<i64>,
) -> Option<String> {
    let db = db();
    counter(&db);
    let mut a = db.session();
    exec(&mut a, "BEGIN");
    exec(&mut a, a_sql);
    let db2 = db.clone();
    let t = std::thread::spawn(move || {
        let mut b = db2.session();
        let r = exec(&mut b, b_sql).pop().unwrap();
        (r.tag, r.rows.iter().map(|row| int(&row[0])).collect::<Vec<_>>())
    });
    std::thread::sleep(std::time::Duration::from_millis(20));
    exec(&mut a, "COMMIT");
    let (tag, returned) = t.join().unwrap();
    let r = exec(&mut a, "SELECT n FROM c WHERE id = 1");
    let got = r[0].rows.first().map(|row| int(&row[0]));
    let (want_tag, want_rows) = b_want;
    if (tag.as_str(), &returned, got) != (want_tag, &want_rows, want) {
        return Some(format!(
            "{a_sql}; then {b_sql}: got {tag} {returned:?} and n = {got:?}, want {want_tag} {want_rows:?} and n = {want:?}"
        ));
    }
    None
}

/// (A's change, B's statement, B's tag and RETURNING values, final `n`).
type WaitCase = (&'static str, &'static str, (&'static str, Vec<i64>), Option<i64>);

fn check_after_waiting(cases: Vec<WaitCase>) {
    let mut wrong = Vec::new();
    for (a_sql, b_sql, b_want, want) in cases {
        for _ in 0..3 {
            wrong.extend(after_waiting(a_sql, b_sql, b_want.clone(), want));
        }
    }
    wrong.dedup();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// READ COMMITTED: an UPDATE that waited for another writer re-evaluates
/// its WHERE clause on the newest version (PostgreSQL's EvalPlanQual), and
/// a row deleted meanwhile is skipped.
#[test]
fn read_committed_update_rechecks_the_predicate_after_waiting() {
    check_after_waiting(vec![
        (
            "UPDATE c SET n = n + 1 WHERE id = 1",
            "UPDATE c SET n = 100 WHERE id = 1 AND n = 0",
            ("UPDATE 0", vec![]),
            Some(1),
        ),
        (
            "UPDATE c SET n = n + 1 WHERE id = 1",
            "UPDATE c SET n = n * 10 WHERE id = 1 AND n >= 0 RETURNING n",
            ("UPDATE 1", vec![10]),
            Some(10),
        ),
        ("DELETE FROM c WHERE id = 1", "UPDATE c SET n = n + 1 WHERE id = 1", ("UPDATE 0", vec![]), None),
        ("DELETE FROM c WHERE id = 1", "DELETE FROM c WHERE id = 1", ("DELETE 0", vec![]), None),
    ]);
}

/// The same for DELETE: a row changed by a writer B waited for must still
/// match B's WHERE clause, and RETURNING shows the version deleted.
#[test]
fn read_committed_delete_rechecks_the_predicate_after_waiting() {
    check_after_waiting(vec![
        (
            "UPDATE c SET n = n + 1 WHERE id = 1",
            "DELETE FROM c WHERE id = 1 AND n = 0",
            ("DELETE 0", vec![]),
            Some(1),
        ),
        (
            "UPDATE c SET n = 5 WHERE id = 1",
            "DELETE FROM c WHERE id = 1 RETURNING n",
            ("DELETE 1", vec![5]),
            None,
        ),
    ]);
}
