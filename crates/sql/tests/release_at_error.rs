//! A statement that fails inside a block rolls the transaction back in the
//! engine at once: what it changed or claimed is free for other sessions
//! before the client says ROLLBACK. The block itself stays failed (25P02)
//! until then, as in PostgreSQL. With savepoints, only what came after
//! the newest one is freed.

use centum_sql::{Database, TxnStatus};
use std::sync::mpsc;
use std::time::Duration;

fn db() -> Database {
    let d = Database::open(centum_engine::Database::open(Default::default()).unwrap()).unwrap();
    d.session()
        .execute("CREATE TABLE acct (id int PRIMARY KEY, v int); INSERT INTO acct VALUES (1, 0), (2, 0)")
        .unwrap();
    d
}

#[test]
fn the_survivor_of_a_deadlock_goes_on_before_the_victim_rolls_back() {
    let d = db();
    let mut a = d.session();
    let mut b = d.session();
    a.execute("BEGIN; UPDATE acct SET v = 1 WHERE id = 1").unwrap();
    b.execute("BEGIN; UPDATE acct SET v = 2 WHERE id = 2").unwrap();
    // a waits for row 2 on a thread of its own; b then asks for row 1.
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let r = a.execute("UPDATE acct SET v = 1 WHERE id = 2").map(|_| ()).map_err(|e| e.sqlstate());
        tx.send(r).unwrap();
        a
    });
    std::thread::sleep(Duration::from_millis(100));
    let mine = b.execute("UPDATE acct SET v = 2 WHERE id = 1").map(|_| ()).map_err(|e| e.sqlstate());
    // One of the two is the deadlock's victim; the other must finish its
    // statement without the victim's ROLLBACK.
    let theirs =
        rx.recv_timeout(Duration::from_secs(20)).expect("the survivor waited on the failed transaction");
    let mut a = waiter.join().unwrap();
    let (survivor, victim) = match (&mine, &theirs) {
        (Err("40P01"), Ok(())) => (&mut a, &mut b),
        (Ok(()), Err("40P01")) => (&mut b, &mut a),
        other => panic!("expected one deadlock victim: {other:?}"),
    };
    assert_eq!(victim.status(), TxnStatus::Failed);
    assert_eq!(victim.execute("SELECT 1").unwrap_err().sqlstate(), "25P02");
    survivor.execute("COMMIT").unwrap();
    victim.execute("ROLLBACK").unwrap();
    assert_eq!(victim.status(), TxnStatus::Idle);
}

#[test]
fn a_failed_statement_frees_the_blocks_rows_and_commit_says_rollback() {
    let d = db();
    let mut a = d.session();
    a.execute("BEGIN; UPDATE acct SET v = 10 WHERE id = 1").unwrap();
    assert_eq!(a.execute("SELECT 1/0").unwrap_err().sqlstate(), "22012");
    // Row 1 is free now: another session updates it without waiting.
    let other = d.clone();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        tx.send(other.session().execute("UPDATE acct SET v = 20 WHERE id = 1").is_ok()).unwrap();
    });
    assert!(rx.recv_timeout(Duration::from_secs(20)).expect("row 1 was still held"));
    // COMMIT of a failed block rolls back, as in PostgreSQL.
    let r = a.execute("COMMIT").unwrap();
    assert_eq!(r[0].tag, "ROLLBACK");
    let v = a.execute("SELECT v FROM acct WHERE id = 1").unwrap();
    assert_eq!(v[0].rows[0][0], centum_types::Value::Integer(20));
}

/// A wait for a row another transaction holds ends at `lock_timeout`
/// (55P03), at `statement_timeout` (57014) or on a cancel request (57014),
/// whichever comes first; the holder goes on unharmed, and with no limit
/// the waiter gets the row once the holder commits.
#[test]
fn row_waits_end_at_lock_timeout_statement_timeout_or_cancel() {
    let d = db();
    let mut holder = d.session();
    holder.execute("BEGIN; UPDATE acct SET v = 1 WHERE id = 1").unwrap();
    let mut waiter = d.session();
    let update = "UPDATE acct SET v = 2 WHERE id = 1";

    waiter.execute("SET lock_timeout = 300").unwrap();
    let started = std::time::Instant::now();
    assert_eq!(waiter.execute(update).unwrap_err().sqlstate(), "55P03");
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(5), "{took:?}");
    // In a block, the timeout fails the block like any error.
    waiter.execute("BEGIN").unwrap();
    assert_eq!(waiter.execute(update).unwrap_err().sqlstate(), "55P03");
    assert_eq!(waiter.execute("SELECT 1").unwrap_err().sqlstate(), "25P02");
    waiter.execute("ROLLBACK").unwrap();

    waiter.execute("SET lock_timeout = 0; SET statement_timeout = 300").unwrap();
    assert_eq!(waiter.execute(update).unwrap_err().sqlstate(), "57014");

    waiter.execute("SET statement_timeout = 0").unwrap();
    let cancel = waiter.cancel_handle();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        cancel.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    assert_eq!(waiter.execute(update).unwrap_err().sqlstate(), "57014");
    canceller.join().unwrap();

    // The holder was not disturbed; once it commits, the row is free.
    holder.execute("COMMIT").unwrap();
    waiter.execute("SET lock_timeout = 300").unwrap();
    waiter.execute(update).unwrap();
    let v = waiter.execute("SELECT v FROM acct WHERE id = 1").unwrap().pop().unwrap().rows;
    assert_eq!(v, vec![vec![centum_types::Value::Integer(2)]]);
}

/// ROLLBACK TO SAVEPOINT frees the rows changed after the savepoint, and
/// keeps the ones changed before it; an error after a savepoint frees only
/// what came after it, and the block goes on from there.
#[test]
fn rolling_back_to_a_savepoint_frees_only_the_rows_after_it() {
    let d = db();
    let mut a = d.session();
    a.execute("BEGIN; UPDATE acct SET v = 1 WHERE id = 1; SAVEPOINT s; UPDATE acct SET v = 2 WHERE id = 2")
        .unwrap();
    a.execute("ROLLBACK TO s").unwrap();
    let mut b = d.session();
    b.execute("SET lock_timeout = 200").unwrap();
    b.execute("UPDATE acct SET v = 3 WHERE id = 2").unwrap();
    assert_eq!(b.execute("UPDATE acct SET v = 3 WHERE id = 1").unwrap_err().sqlstate(), "55P03");
    // An error after a new savepoint: row 1 stays held, the block goes on.
    a.execute("SAVEPOINT t").unwrap();
    assert_eq!(a.execute("SELECT 1/0").unwrap_err().sqlstate(), "22012");
    assert_eq!(a.status(), TxnStatus::Failed);
    assert_eq!(b.execute("UPDATE acct SET v = 3 WHERE id = 1").unwrap_err().sqlstate(), "55P03");
    a.execute("ROLLBACK TO t").unwrap();
    a.execute("COMMIT").unwrap();
    let v = a.execute("SELECT v FROM acct ORDER BY id").unwrap();
    let vals: Vec<_> = v[0].rows.iter().map(|r| r[0].clone()).collect();
    assert_eq!(vals, vec![centum_types::Value::Integer(1), centum_types::Value::Integer(3)]);
}
