//! Schema changes inside a transaction, as PostgreSQL has them: CREATE,
//! DROP and ALTER of tables, indexes, sequences and routines in a block
//! (or a multi-statement query, one implicit transaction) take effect at
//! COMMIT and are undone by ROLLBACK, together with the rows written under
//! them. A block never waits for itself; another session that needs what
//! the block changed waits for it to end, as long as its lock_timeout or
//! statement_timeout allows, and a cycle of such waits is a deadlock.

mod common;

use centum_sql::Database;
use common::{db, exec, fails, ints, open_durable, scalar};
use std::sync::mpsc;
use std::time::{Duration, Instant};

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

/// Runs `sql` in a new session on a thread of its own and gives it 100 ms
/// to start waiting; its first column as integers comes on the channel.
fn in_another_session(db: &Database, sql: &'static str) -> mpsc::Receiver<centum_sql::Result<Vec<i64>>> {
    let db = db.clone();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(db.session().execute(sql).map(|r| common::int_column(&r[0])));
    });
    std::thread::sleep(Duration::from_millis(100));
    rx
}

fn tables(d: &Database) -> Vec<String> {
    d.catalog().db().table_names()
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
        // A failure after the index rolls the whole query back, the index
        // with it.
        let e = fails(
            &mut s,
            "CREATE INDEX t_k ON t (k); INSERT INTO t VALUES (4, 40); INSERT INTO t VALUES (4, 41)",
        );
        assert_eq!(e.sqlstate(), "23505");
        assert_eq!(scalar(&mut s, "SELECT count(*) FROM t"), 3);
        exec(&mut s, "CREATE INDEX t_k ON t (k)");
    });
}

#[test]
fn an_index_built_in_a_block_holds_the_blocks_own_rows() {
    bounded(|| {
        let db = db();
        let mut s = db.session();
        exec(&mut s, "CREATE TABLE t (k int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 10)");
        exec(&mut s, "BEGIN");
        exec(&mut s, "INSERT INTO t VALUES (2, 20); UPDATE t SET v = 11 WHERE k = 1");
        exec(&mut s, "CREATE INDEX t_v ON t (v)");
        exec(&mut s, "CREATE INDEX t_v_hash ON t USING hash (v)");
        assert_eq!(ints(&mut s, "SELECT k FROM t WHERE v = 11"), vec![1]);
        assert_eq!(ints(&mut s, "SELECT k FROM t WHERE v >= 11 ORDER BY v"), vec![1, 2]);
        exec(&mut s, "ROLLBACK");
        assert!(db.catalog().db().table("t").unwrap().index("t_v").is_err(), "the index outlived ROLLBACK");
        assert_eq!(ints(&mut s, "SELECT v FROM t"), vec![10]);
        // A unique index over the block's own rows checks them too.
        exec(&mut s, "BEGIN; INSERT INTO t VALUES (3, 10)");
        assert_eq!(fails(&mut s, "CREATE UNIQUE INDEX t_v_u ON t (v)").sqlstate(), "23505");
        exec(&mut s, "ROLLBACK");
        exec(&mut s, "BEGIN; INSERT INTO t VALUES (3, 30); CREATE UNIQUE INDEX t_v_u ON t (v); COMMIT");
        assert_eq!(fails(&mut s, "INSERT INTO t VALUES (4, 30)").sqlstate(), "23505");
    });
}

#[test]
fn constraints_and_columns_in_a_migration_block() {
    bounded(|| {
        let db = db();
        let mut s = db.session();
        // What a migration tool sends in one block.
        for add in [
            "ALTER TABLE t ADD CONSTRAINT u UNIQUE (a, b)",
            "ALTER TABLE t ADD PRIMARY KEY (a)",
            "ALTER TABLE t ADD COLUMN c int UNIQUE",
            "ALTER TABLE t ADD COLUMN c int",
            "ALTER TABLE t DROP COLUMN b",
        ] {
            exec(&mut s, "BEGIN");
            exec(&mut s, "CREATE TABLE t (a int, b int)");
            exec(&mut s, add);
            exec(&mut s, "ROLLBACK");
            assert!(tables(&db).is_empty(), "{add}: left {:?}", tables(&db));
            exec(&mut s, &format!("BEGIN; CREATE TABLE t (a int, b int); {add}; COMMIT"));
            exec(&mut s, "INSERT INTO t (a) VALUES (1)");
            assert_eq!(scalar(&mut s, "SELECT count(*) FROM t"), 1);
            exec(&mut s, "DROP TABLE t");
        }
        // A column change of a table with committed rows, undone.
        exec(&mut s, "CREATE TABLE t (a int PRIMARY KEY, b int); INSERT INTO t VALUES (1, 2)");
        exec(&mut s, "BEGIN; ALTER TABLE t ADD COLUMN c int DEFAULT 5");
        assert_eq!(ints(&mut s, "SELECT c FROM t"), vec![5]);
        exec(&mut s, "ROLLBACK");
        assert_eq!(fails(&mut s, "SELECT c FROM t").sqlstate(), "42703");
        assert_eq!(ints(&mut s, "SELECT b FROM t"), vec![2]);
        assert_eq!(tables(&db), vec!["t".to_string()]);
        // The copy behind a column change carries the block's own
        // uncommitted rows, and they go with its rollback.
        exec(&mut s, "BEGIN; INSERT INTO t VALUES (2, 3)");
        exec(&mut s, "ALTER TABLE t ADD COLUMN c int DEFAULT 7");
        assert_eq!(ints(&mut s, "SELECT a * 10 + c FROM t ORDER BY a"), vec![17, 27]);
        exec(&mut s, "ROLLBACK");
        assert_eq!(scalar(&mut s, "SELECT count(*) FROM t"), 1);
        // The check of a new NOT NULL or CHECK sees them too, so a NULL
        // the block wrote never stands in a NOT NULL column.
        exec(&mut s, "BEGIN; UPDATE t SET b = NULL WHERE a = 1");
        assert_eq!(fails(&mut s, "ALTER TABLE t ALTER COLUMN b SET NOT NULL").sqlstate(), "23502");
        exec(&mut s, "ROLLBACK");
        exec(&mut s, "BEGIN; UPDATE t SET b = -1");
        assert_eq!(fails(&mut s, "ALTER TABLE t ADD CONSTRAINT b_pos CHECK (b > 0)").sqlstate(), "23514");
        exec(&mut s, "ROLLBACK");
        exec(
            &mut s,
            "BEGIN; ALTER TABLE t ALTER COLUMN b SET NOT NULL; ALTER TABLE t ADD CHECK (b > 0); COMMIT",
        );
        assert_eq!(fails(&mut s, "UPDATE t SET b = NULL").sqlstate(), "23502");
        // A constraint dropped in a block stays dropped when a column
        // change in the same block rebuilds the table (knex's rollback of
        // one migration, then the next migration adds it again).
        exec(&mut s, "CREATE TABLE tk (id int PRIMARY KEY, p int, t text, e numeric)");
        exec(&mut s, "ALTER TABLE tk ADD CONSTRAINT tk_p_t UNIQUE (p, t)");
        exec(&mut s, "BEGIN; ALTER TABLE tk DROP CONSTRAINT tk_p_t; ALTER TABLE tk DROP COLUMN e; COMMIT");
        assert_eq!(scalar(&mut s, "SELECT count(*) FROM pg_indexes WHERE indexname = 'tk_p_t'"), 0);
        exec(&mut s, "ALTER TABLE tk ADD CONSTRAINT tk_p_t UNIQUE (p, t)");
    });
}

#[test]
fn rollback_undoes_every_kind_of_schema_change() {
    bounded(|| {
        let db = db();
        let mut s = db.session();
        exec(
            &mut s,
            "CREATE TABLE keep (id serial PRIMARY KEY, v text); INSERT INTO keep (v) VALUES ('a'); \
             CREATE INDEX keep_v ON keep (v); CREATE SEQUENCE seq; CREATE SCHEMA sch; \
             CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$",
        );
        exec(&mut s, "BEGIN");
        exec(&mut s, "CREATE TABLE fresh (id serial PRIMARY KEY, v int); INSERT INTO fresh (v) VALUES (1)");
        exec(&mut s, "DROP INDEX keep_v");
        exec(&mut s, "DROP SEQUENCE seq");
        exec(&mut s, "CREATE SEQUENCE seq2");
        exec(&mut s, "DROP SCHEMA sch");
        exec(&mut s, "DROP FUNCTION f()");
        exec(&mut s, "ALTER TABLE keep ADD CONSTRAINT v_set CHECK (v IS NOT NULL)");
        exec(&mut s, "DROP TABLE keep");
        exec(&mut s, "CREATE TABLE keep (x int)");
        exec(&mut s, "ROLLBACK");
        assert_eq!(tables(&db), vec!["keep".to_string()]);
        assert_eq!(ints(&mut s, "SELECT id FROM keep WHERE v = 'a'"), vec![1]);
        assert!(db.catalog().db().table("keep").unwrap().index("keep_v").is_ok());
        assert_eq!(ints(&mut s, "SELECT nextval('seq')"), vec![1]);
        assert_eq!(fails(&mut s, "SELECT nextval('seq2')").sqlstate(), "42P01");
        assert_eq!(ints(&mut s, "SELECT f()"), vec![1]);
        exec(&mut s, "CREATE TABLE sch.t (a int)");
        exec(&mut s, "INSERT INTO keep (v) VALUES (NULL)");
        // The serial column's sequence went with the table.
        exec(&mut s, "CREATE TABLE fresh (id serial PRIMARY KEY)");
    });
}

#[test]
fn another_session_waits_for_the_block_then_sees_its_outcome() {
    bounded(|| {
        let db = db();
        let mut a = db.session();
        exec(&mut a, "CREATE TABLE t (k int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 10)");
        exec(&mut a, "CREATE TABLE other (k int)");
        exec(&mut a, "BEGIN; ALTER TABLE t ADD COLUMN w int DEFAULT 7");
        // Tables the block did not touch are free.
        let mut b = db.session();
        exec(&mut b, "INSERT INTO other VALUES (1)");
        // With a lock_timeout the wait for the changed table ends in 55P03.
        exec(&mut b, "SET lock_timeout = 200");
        let started = Instant::now();
        assert_eq!(fails(&mut b, "SELECT * FROM t").sqlstate(), "55P03");
        assert!(started.elapsed() < Duration::from_secs(5));
        exec(&mut b, "SET lock_timeout = 0; SET statement_timeout = 200");
        assert_eq!(fails(&mut b, "UPDATE t SET v = 1").sqlstate(), "57014");
        assert_eq!(fails(&mut b, "CREATE INDEX t_v ON t (v)").sqlstate(), "57014");
        exec(&mut b, "SET statement_timeout = 0");
        // Without limits it waits and sees the committed column.
        let rx = in_another_session(&db, "SELECT w FROM t");
        assert!(rx.try_recv().is_err(), "the other session did not wait");
        exec(&mut a, "COMMIT");
        assert_eq!(rx.recv_timeout(Duration::from_secs(20)).unwrap().unwrap(), vec![7]);
        // After a ROLLBACK the waiter finds the table as it was.
        exec(&mut a, "BEGIN; DROP TABLE t");
        let rx = in_another_session(&db, "SELECT v FROM t");
        exec(&mut a, "ROLLBACK");
        assert_eq!(rx.recv_timeout(Duration::from_secs(20)).unwrap().unwrap(), vec![10]);
    });
}

#[test]
fn a_cycle_through_a_schema_change_is_a_deadlock() {
    bounded(|| {
        let db = db();
        let mut a = db.session();
        exec(&mut a, "CREATE TABLE t (k int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0)");
        exec(&mut a, "CREATE TABLE u (k int PRIMARY KEY, v int); INSERT INTO u VALUES (1, 0)");
        let mut b = db.session();
        // b holds a row of u; a changes t and then waits for b's row.
        exec(&mut b, "BEGIN; UPDATE u SET v = 2 WHERE k = 1");
        exec(&mut a, "BEGIN; ALTER TABLE t ADD COLUMN w int");
        let (tx, rx) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let r = a.execute("UPDATE u SET v = 1 WHERE k = 1").map(|_| ()).map_err(|e| e.sqlstate());
            tx.send(r).unwrap();
            a
        });
        std::thread::sleep(Duration::from_millis(100));
        // b now needs t, which a changed: one of the two is the victim.
        let mine = b.execute("SELECT * FROM t").map(|_| ()).map_err(|e| e.sqlstate());
        let theirs = rx.recv_timeout(Duration::from_secs(20)).expect("the cycle was not broken");
        let mut a = waiter.join().unwrap();
        match (&mine, &theirs) {
            (Err("40P01"), Ok(())) | (Ok(()), Err("40P01")) => {}
            other => panic!("expected one deadlock victim: {other:?}"),
        }
        exec(&mut a, "ROLLBACK");
        exec(&mut b, "ROLLBACK");
    });
}

/// Copies the files of the data directory `from` into `to`: what a crash
/// would leave, since every commit syncs the log before it returns.
fn crash_image(from: &std::path::Path, to: &std::path::Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn a_block_that_never_commits_leaves_no_schema_behind_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let image = tempfile::tempdir().unwrap();
    {
        let db = open_durable(dir.path());
        let mut a = db.session();
        exec(&mut a, "CREATE TABLE t (k int PRIMARY KEY); INSERT INTO t VALUES (7); CREATE SEQUENCE s");
        exec(&mut a, "BEGIN; CREATE TABLE fresh (k int PRIMARY KEY); INSERT INTO fresh VALUES (1)");
        exec(&mut a, "DROP TABLE t; CREATE SEQUENCE s2; CREATE INDEX fresh_k ON fresh (k)");
        // Another session's durable write of the database-wide catalog (a
        // sequence's reservation) must not carry the open block's changes
        // into the log.
        let mut b = db.session();
        exec(&mut b, "SELECT nextval('s')");
        crash_image(dir.path(), image.path());
        exec(&mut a, "COMMIT");
    }
    let db = open_durable(image.path());
    assert_eq!(tables(&db), vec!["t".to_string()]);
    let mut s = db.session();
    assert_eq!(ints(&mut s, "SELECT k FROM t"), vec![7]);
    assert_eq!(fails(&mut s, "SELECT nextval('s2')").sqlstate(), "42P01");
    assert!(scalar(&mut s, "SELECT nextval('s')") > 1);
    drop(s);
    drop(db);
    // The committed block is durable with its rows.
    let db = open_durable(dir.path());
    assert_eq!(tables(&db), vec!["fresh".to_string()]);
    let mut s = db.session();
    assert_eq!(ints(&mut s, "SELECT k FROM fresh WHERE k = 1"), vec![1]);
    assert_eq!(scalar(&mut s, "SELECT nextval('s2')"), 1);
    assert!(db.catalog().db().table("fresh").unwrap().index("fresh_k").is_ok());
}

/// Compiled routines are shared between sessions: one compiled on a
/// block's uncommitted table must not write into that table for another
/// session, whose rows would go with the block's ROLLBACK.
#[test]
fn a_routine_compiled_on_a_blocks_changes_serves_no_one_else() {
    bounded(|| {
        let db = db();
        let mut a = db.session();
        exec(
            &mut a,
            "CREATE TABLE t (k int); \
             CREATE PROCEDURE ins(v int) LANGUAGE plpgsql AS $$ BEGIN INSERT INTO t VALUES (v); END $$",
        );
        exec(&mut a, "BEGIN; ALTER TABLE t ADD COLUMN w int DEFAULT 1; CALL ins(1)");
        let other = db.clone();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(other.session().execute("CALL ins(2)").map(|_| ()).map_err(|e| e.sqlstate()));
        });
        std::thread::sleep(Duration::from_millis(100));
        exec(&mut a, "ROLLBACK");
        // The other session waited for the block, then ran on the table as
        // committed.
        assert_eq!(rx.recv_timeout(Duration::from_secs(20)).unwrap(), Ok(()));
        assert_eq!(ints(&mut a, "SELECT k FROM t"), vec![2]);
    });
}

/// Sessions that change the schema in blocks (committing some, rolling
/// back others, some failing half-way) while others write rows and draw
/// sequence values: nothing hangs, every wait ends, no claim is left
/// behind, and what committed is exactly what each session saw commit.
#[test]
fn schema_changes_and_writes_interleave_without_hanging() {
    bounded(|| {
        let db = db();
        exec(&mut db.session(), "CREATE TABLE shared (id serial PRIMARY KEY, who int)");
        let committed = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for w in 0..4i64 {
                let (db, committed) = (&db, &committed);
                s.spawn(move || {
                    let mut x = db.session();
                    exec(&mut x, "SET statement_timeout = 2000");
                    let mut rng = 0x2545_F491_4F6C_DD1Du64.wrapping_mul(w as u64 + 1);
                    for i in 0..40 {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        let name = format!("w{w}_{i}");
                        let block = format!(
                            "BEGIN; CREATE TABLE {name} (k int PRIMARY KEY, v int); \
                             INSERT INTO {name} VALUES (1, 1); CREATE INDEX {name}_v ON {name} (v); \
                             INSERT INTO shared (who) VALUES ({w})"
                        );
                        if x.execute(&block).is_err() {
                            x.execute("ROLLBACK").unwrap();
                            continue;
                        }
                        let end = match rng % 3 {
                            0 => "ROLLBACK",
                            1 => "SELECT 1/0",
                            _ => "COMMIT",
                        };
                        let ok = x.execute(end).is_ok() && end == "COMMIT";
                        let _ = x.execute("ROLLBACK");
                        if ok {
                            committed.lock().unwrap().push(name);
                        }
                    }
                });
            }
            for w in 10..12i64 {
                let db = &db;
                s.spawn(move || {
                    let mut x = db.session();
                    exec(&mut x, "SET statement_timeout = 2000");
                    for _ in 0..200 {
                        let _ = x.execute(&format!("INSERT INTO shared (who) VALUES ({w})"));
                    }
                });
            }
        });
        assert_eq!(db.catalog().db().claim_owner(), None);
        let mut want = committed.into_inner().unwrap();
        want.push("shared".into());
        want.sort();
        let mut got = tables(&db);
        got.sort();
        assert_eq!(got, want);
        let mut s = db.session();
        for t in got.iter().filter(|t| *t != "shared") {
            assert_eq!(ints(&mut s, &format!("SELECT k FROM {t} WHERE v = 1")), vec![1], "{t}");
        }
        let ids = ints(&mut s, "SELECT count(DISTINCT id) - count(*) FROM shared");
        assert_eq!(ids, vec![0]);
    });
}

/// A panic on a thread whose session holds an open block with rows and a
/// column change: the session's transaction is aborted as the thread
/// unwinds (the process goes on), and neither the rows nor the change
/// outlive it.
#[test]
fn a_block_dropped_while_its_thread_unwinds_rolls_back() {
    let db = db();
    let mut s = db.session();
    exec(&mut s, "CREATE TABLE t (a int PRIMARY KEY, b int); INSERT INTO t VALUES (1, 2)");
    let mut doomed = db.session();
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        exec(&mut doomed, "BEGIN; INSERT INTO t VALUES (2, 3)");
        exec(&mut doomed, "ALTER TABLE t ADD COLUMN c int DEFAULT 7");
        panic!("a bug in the middle of a block");
    }));
    assert!(unwound.is_err());
    assert_eq!(ints(&mut s, "SELECT a FROM t ORDER BY a"), vec![1]);
    assert_eq!(fails(&mut s, "SELECT c FROM t").sqlstate(), "42703");
    exec(&mut s, "INSERT INTO t VALUES (2, 4)");
    assert_eq!(scalar(&mut s, "SELECT sum(b) FROM t"), 6);
}
