//! SELECT ... FOR UPDATE [NOWAIT | SKIP LOCKED] between sessions.
//!
//! - A job queue: 8 workers, each in its own session and thread, take
//!   10,000 jobs with `FOR UPDATE SKIP LOCKED`; every job is done exactly
//!   once, by one worker.
//! - A locked row makes writers and other lockers wait (until
//!   `lock_timeout`, 55P03), NOWAIT fail at once (55P03) and SKIP LOCKED
//!   pass it by; readers are not held up; the lock ends with its
//!   transaction.
//! - Under READ COMMITTED a locker that waited re-checks its WHERE on the
//!   row's newest version and goes on to the next row if it no longer
//!   qualifies, as PostgreSQL does.

mod common;

use centum_sql::Session;
use common::{db, exec, fails, ints, scalar};
use std::time::{Duration, Instant};

const JOBS: i64 = 10_000;
const WORKERS: i64 = 8;

#[test]
fn a_job_queue_hands_each_job_to_exactly_one_worker() {
    let db = db();
    let mut s = db.session();
    exec(&mut s, "CREATE TABLE jobs (id int PRIMARY KEY, state text NOT NULL, taken int NOT NULL DEFAULT 0)");
    exec(&mut s, "CREATE INDEX jobs_state ON jobs (state, id)");
    exec(&mut s, "CREATE TABLE done (job int NOT NULL, worker int NOT NULL)");
    exec(&mut s, &format!("INSERT INTO jobs (id, state) SELECT g, 'new' FROM generate_series(1, {JOBS}) g"));
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut s = db.session();
                let deadline = Instant::now() + Duration::from_secs(120);
                let mut mine = 0;
                loop {
                    assert!(Instant::now() < deadline, "worker {w} ran out of time");
                    exec(&mut s, "BEGIN");
                    let got = ints(
                        &mut s,
                        "SELECT id FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
                    );
                    let Some(&id) = got.first() else {
                        exec(&mut s, "COMMIT");
                        if scalar(&mut s, "SELECT count(*) FROM jobs WHERE state = 'new'") == 0 {
                            return mine;
                        }
                        continue;
                    };
                    exec(
                        &mut s,
                        &format!("UPDATE jobs SET state = 'done', taken = taken + 1 WHERE id = {id}"),
                    );
                    exec(&mut s, &format!("INSERT INTO done VALUES ({id}, {w})"));
                    exec(&mut s, "COMMIT");
                    mine += 1;
                }
            })
        })
        .collect();
    let per_worker: Vec<i64> = workers.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(per_worker.iter().sum::<i64>(), JOBS, "{per_worker:?}");
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM jobs WHERE state = 'done' AND taken = 1"), JOBS);
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM done"), JOBS);
    assert_eq!(scalar(&mut s, "SELECT count(DISTINCT job) FROM done"), JOBS);
    // The work was shared, not done by one worker while the others skipped.
    assert!(per_worker.iter().filter(|&&n| n > 0).count() > 1, "{per_worker:?}");
}

fn setup(s: &mut Session) {
    exec(s, "CREATE TABLE q (id int PRIMARY KEY, state text, n int)");
    exec(s, "INSERT INTO q VALUES (1, 'new', 0), (2, 'new', 0), (3, 'new', 0)");
}

#[test]
fn a_locked_row_holds_off_writers_and_lockers_not_readers() {
    let db = db();
    let (mut a, mut b) = (db.session(), db.session());
    setup(&mut a);
    exec(&mut a, "BEGIN");
    assert_eq!(ints(&mut a, "SELECT id FROM q ORDER BY id LIMIT 2 FOR UPDATE"), [1, 2]);
    // Only the rows returned are locked.
    assert_eq!(ints(&mut b, "SELECT id FROM q ORDER BY id FOR UPDATE SKIP LOCKED"), [3]);
    assert_eq!(ints(&mut b, "SELECT id FROM q ORDER BY id LIMIT 1 FOR SHARE SKIP LOCKED"), [3]);
    let e = fails(&mut b, "SELECT id FROM q WHERE id = 1 FOR UPDATE NOWAIT");
    assert_eq!(e.sqlstate(), "55P03");
    assert_eq!(e.to_string(), "could not obtain lock on row in relation \"q\"");
    exec(&mut b, "SET lock_timeout = 100");
    assert_eq!(fails(&mut b, "SELECT id FROM q WHERE id = 2 FOR UPDATE").sqlstate(), "55P03");
    assert_eq!(fails(&mut b, "UPDATE q SET n = 1 WHERE id = 1").sqlstate(), "55P03");
    assert_eq!(fails(&mut b, "DELETE FROM q WHERE id = 2").sqlstate(), "55P03");
    // Readers see the rows, unchanged.
    assert_eq!(ints(&mut b, "SELECT n FROM q ORDER BY id"), [0, 0, 0]);
    // The lock ends with its transaction.
    exec(&mut a, "ROLLBACK");
    assert_eq!(ints(&mut b, "SELECT id FROM q WHERE id <= 2 ORDER BY id FOR UPDATE NOWAIT"), [1, 2]);
    // A block's lock lasts to its end, and its own writes go on.
    exec(&mut a, "BEGIN");
    assert_eq!(ints(&mut a, "SELECT id FROM q WHERE id = 3 FOR UPDATE"), [3]);
    exec(&mut a, "UPDATE q SET n = 5 WHERE id = 3");
    assert_eq!(ints(&mut a, "SELECT n FROM q WHERE id = 3 FOR UPDATE"), [5]);
    assert_eq!(fails(&mut b, "SELECT id FROM q WHERE id = 3 FOR UPDATE NOWAIT").sqlstate(), "55P03");
    exec(&mut a, "COMMIT");
    assert_eq!(ints(&mut b, "SELECT n FROM q WHERE id = 3 FOR UPDATE NOWAIT"), [5]);
}

#[test]
fn a_waiting_locker_rechecks_the_newest_version() {
    let db = db();
    let mut a = db.session();
    setup(&mut a);
    exec(&mut a, "BEGIN");
    exec(&mut a, "UPDATE q SET state = 'done' WHERE id = 1");
    let db2 = db.clone();
    let waiter = std::thread::spawn(move || {
        let mut b = db2.session();
        ints(&mut b, "SELECT id FROM q WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE")
    });
    std::thread::sleep(Duration::from_millis(100));
    exec(&mut a, "COMMIT");
    assert_eq!(waiter.join().unwrap(), [2]);
}

#[test]
fn locking_refuses_what_it_cannot_lock() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    exec(&mut s, "CREATE TABLE nokey (a int)");
    for (sql, code) in [
        ("SELECT count(*) FROM q FOR UPDATE", "0A000"),
        ("SELECT DISTINCT state FROM q FOR UPDATE", "0A000"),
        ("SELECT state FROM q GROUP BY state FOR UPDATE", "0A000"),
        ("SELECT 1 FROM q UNION SELECT 2 FROM q FOR UPDATE", "0A000"),
        ("SELECT a FROM nokey FOR UPDATE", "0A000"),
        ("SELECT * FROM q, nokey FOR UPDATE", "0A000"),
    ] {
        assert_eq!(fails(&mut s, sql).sqlstate(), code, "{sql}");
    }
    exec(&mut s, "BEGIN READ ONLY");
    let e = fails(&mut s, "SELECT id FROM q WHERE id = 1 FOR UPDATE");
    assert_eq!(
        (e.sqlstate(), e.to_string().as_str()),
        ("25006", "cannot execute SELECT FOR UPDATE in a read-only transaction")
    );
    exec(&mut s, "ROLLBACK");
}
