//! CREATE INDEX (and an ALTER TABLE that adds a column, drops one, or adds
//! a UNIQUE or PRIMARY KEY constraint) waits for every transaction open
//! when it starts, so it
//! must never run inside one of its own session's: in a multi-statement
//! query (one implicit transaction) the transaction is committed before
//! it and begun again after; in an explicit block it is refused with
//! 25001. Either way the session goes on, and nothing hangs.

mod common;

use common::{db, exec, fails, ints, scalar};
use std::sync::mpsc;
use std::time::Duration;

/// Runs `f` on a thread and fails the test if it does not finish in a
/// minute, instead of hanging the suite.
fn bounded(f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => worker.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => worker.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the statements did not finish in a minute"),
    }
}

#[test]
fn create_index_in_a_multi_statement_query() {
    bounded(|| {
        let db = db();
        let mut s = db.session();
        exec(
            &mut s,
            "CREATE TABLE t (k int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 10), (2, 20); \
             CREATE INDEX t_v ON t (v); INSERT INTO t VALUES (3, 30); CREATE INDEX t_v_hash ON t USING hash (v)",
        );
        assert_eq!(ints(&mut s, "SELECT k FROM t WHERE v >= 20 ORDER BY v"), vec![2, 3]);
        assert_eq!(ints(&mut s, "SELECT k FROM t WHERE v = 10"), vec![1]);
        // A failure after the index still rolls back what follows it.
        let e = fails(
            &mut s,
            "CREATE INDEX t_k ON t (k); INSERT INTO t VALUES (4, 40); INSERT INTO t VALUES (4, 41)",
        );
        assert_eq!(e.sqlstate(), "23505");
        assert_eq!(scalar(&mut s, "SELECT count(*) FROM t"), 3);
    });
}

#[test]
fn create_index_in_a_block_is_refused() {
    bounded(|| {
        let db = db();
        let mut s = db.session();
        exec(&mut s, "CREATE TABLE t (k int PRIMARY KEY, v int)");
        exec(&mut s, "BEGIN");
        exec(&mut s, "INSERT INTO t VALUES (1, 10)");
        assert_eq!(fails(&mut s, "CREATE INDEX t_v ON t (v)").sqlstate(), "25001");
        exec(&mut s, "ROLLBACK");
        exec(&mut s, "CREATE INDEX t_v ON t (v)");
        exec(&mut s, "INSERT INTO t VALUES (1, 10)");
        assert_eq!(ints(&mut s, "SELECT k FROM t WHERE v = 10"), vec![1]);
    });
}

#[test]
fn constraints_that_build_an_index_never_wait_for_their_own_block() {
    bounded(|| {
        let db = db();
        let mut s = db.session();
        // The statements a migration tool sends in one block: refused with
        // 25001 (they used to wait for their own transaction for ever).
        for add in [
            "ALTER TABLE t ADD CONSTRAINT u UNIQUE (a, b)",
            "ALTER TABLE t ADD PRIMARY KEY (a)",
            "ALTER TABLE t ADD COLUMN c int UNIQUE",
            "ALTER TABLE t ADD COLUMN c int",
            "ALTER TABLE t DROP COLUMN b",
        ] {
            exec(&mut s, "BEGIN");
            exec(&mut s, "CREATE TABLE t (a int PRIMARY KEY, b int)");
            assert_eq!(fails(&mut s, add).sqlstate(), "25001", "{add}");
            exec(&mut s, "ROLLBACK");
            exec(&mut s, "DROP TABLE IF EXISTS t");
            // In one multi-statement query they run between the implicit
            // transactions, as CREATE INDEX does.
            exec(&mut s, &format!("CREATE TABLE t (a int, b int); {add}; INSERT INTO t (a) VALUES (1)"));
            assert_eq!(scalar(&mut s, "SELECT count(*) FROM t"), 1);
            exec(&mut s, "DROP TABLE t");
        }
        // Constraints that build nothing still run inside a block.
        exec(
            &mut s,
            "BEGIN; CREATE TABLE t (a int, b int); ALTER TABLE t ADD CONSTRAINT pos CHECK (a > 0); COMMIT",
        );
        assert_eq!(fails(&mut s, "INSERT INTO t VALUES (0, 0)").sqlstate(), "23514");
    });
}
