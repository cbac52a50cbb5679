//! Concurrent transfers between accounts with an invariant.
//!
//! Four writer threads, each with its own session, move money between
//! accounts in `BEGIN; UPDATE ... - x; UPDATE ... + x; COMMIT` transactions
//! (through prepared statements and through plain text, alternately),
//! retrying on retryable errors. A reader thread checks, inside
//! REPEATABLE READ (or SERIALIZABLE read-only) transactions, that the total
//! never changes. At the end the total, the row count and every account's
//! balance (recomputed from the transfers whose COMMIT succeeded) are right.

mod common;

use centum_sql::{Database, Error, Prepared, Session, TxnStatus};
use centum_types::Value;
use common::{db, exec, int};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

const ACCOUNTS: i32 = 16;
const START: i64 = 1_000;
const WRITERS: usize = 4;
const TRANSFERS: usize = 2_000;
/// Attempts one transfer may take before the test gives up (livelock).
const MAX_ATTEMPTS: usize = 10_000;
/// Reader checks at most this many snapshots.
const MAX_READS: usize = 100_000;

/// A small deterministic generator (xorshift64*), one per thread.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Clone, Copy, Debug)]
struct Transfer {
    from: i32,
    to: i32,
    amount: i32,
}

struct Stmts {
    debit: Prepared,
    credit: Prepared,
}

/// What happened to one transfer attempt.
enum Outcome {
    Committed,
    /// Retryable: try again.
    Retry,
    /// CHECK (bal >= 0) refused the debit: the transfer is dropped.
    Refused,
}

fn attempt(s: &mut Session, stmts: &mut Stmts, begin: &str, t: Transfer, prepared: bool) -> Outcome {
    let body = |s: &mut Session, stmts: &mut Stmts| -> Result<(), Error> {
        s.execute(begin)?;
        let (x, a, b) = (Value::Integer(t.amount), Value::Integer(t.from), Value::Integer(t.to));
        let (debited, credited) = if prepared {
            let d = s.execute_prepared(&mut stmts.debit, &[x.clone(), a])?;
            let c = s.execute_prepared(&mut stmts.credit, &[x, b])?;
            (d.tag, c.tag)
        } else {
            let d = s.execute(&format!("UPDATE acct SET bal = bal - {} WHERE id = {}", t.amount, t.from))?;
            let c = s.execute(&format!("UPDATE acct SET bal = bal + {} WHERE id = {}", t.amount, t.to))?;
            (d[0].tag.clone(), c[0].tag.clone())
        };
        assert_eq!((debited.as_str(), credited.as_str()), ("UPDATE 1", "UPDATE 1"), "{t:?}");
        let r = s.execute("COMMIT")?;
        assert_eq!(r[0].tag, "COMMIT");
        Ok(())
    };
    match body(s, stmts) {
        Ok(()) => {
            assert_eq!(s.status(), TxnStatus::Idle);
            Outcome::Committed
        }
        Err(e) => {
            // After an error in the block the session is failed; after a
            // failed COMMIT it is idle. ROLLBACK ends either.
            let r = exec(s, "ROLLBACK");
            assert_eq!(r[0].tag, "ROLLBACK");
            assert_eq!(s.status(), TxnStatus::Idle);
            if e.is_retryable() {
                assert!(matches!(e.sqlstate(), "40001" | "40P01"), "{e}");
                Outcome::Retry
            } else if e.sqlstate() == "23514" {
                Outcome::Refused
            } else {
                panic!("{t:?}: unexpected ERROR {}: {e}", e.sqlstate());
            }
        }
    }
}

struct Report {
    committed: Vec<Transfer>,
    retries: u64,
    refused: u64,
}

fn writer(db: Database, begin: &'static str, seed: u64) -> Report {
    let mut s = db.session();
    let mut stmts = Stmts {
        debit: s.prepare("UPDATE acct SET bal = bal - $1 WHERE id = $2", &[]).unwrap(),
        credit: s.prepare("UPDATE acct SET bal = bal + $1 WHERE id = $2", &[]).unwrap(),
    };
    let mut rng = Rng(seed);
    let mut report = Report { committed: Vec::new(), retries: 0, refused: 0 };
    for i in 0..TRANSFERS {
        let from = rng.below(ACCOUNTS as u64) as i32 + 1;
        let to = (from + rng.below(ACCOUNTS as u64 - 1) as i32) % ACCOUNTS + 1;
        assert_ne!(from, to);
        let t = Transfer { from, to, amount: rng.below(300) as i32 + 1 };
        let mut attempts = 0;
        loop {
            attempts += 1;
            assert!(attempts <= MAX_ATTEMPTS, "transfer {t:?} never committed");
            match attempt(&mut s, &mut stmts, begin, t, (i + attempts).is_multiple_of(2)) {
                Outcome::Committed => {
                    report.committed.push(t);
                    break;
                }
                Outcome::Retry => report.retries += 1,
                Outcome::Refused => {
                    report.refused += 1;
                    break;
                }
            }
        }
    }
    assert_eq!(s.status(), TxnStatus::Idle);
    report
}

/// Checks the total in consistent snapshots until the writers finish.
fn reader(db: Database, done: Arc<AtomicBool>, checks: Arc<AtomicU64>) {
    let mut s = db.session();
    let mut by_id = s.prepare("SELECT bal FROM acct WHERE id = $1", &[]).unwrap();
    let total = START * i64::from(ACCOUNTS);
    for i in 0..MAX_READS {
        if done.load(SeqCst) {
            break;
        }
        let level = if i.is_multiple_of(2) { "REPEATABLE READ" } else { "SERIALIZABLE" };
        exec(&mut s, &format!("BEGIN ISOLATION LEVEL {level} READ ONLY"));
        let r = exec(&mut s, "SELECT sum(bal), count(*) FROM acct");
        assert_eq!(int(&r[0].rows[0][0]), total, "{level}: sum(bal) in one snapshot");
        assert_eq!(int(&r[0].rows[0][1]), i64::from(ACCOUNTS));
        // The same snapshot read row by row adds up too.
        let mut sum = 0;
        for id in 1..=ACCOUNTS {
            let r = s.execute_prepared(&mut by_id, &[Value::Integer(id)]).unwrap();
            let bal = int(&r.rows[0][0]);
            assert!(bal >= 0, "CHECK (bal >= 0) let account {id} reach {bal}");
            sum += bal;
        }
        assert_eq!(sum, total, "{level}: balances read one by one in one snapshot");
        let r = exec(&mut s, "COMMIT");
        assert_eq!(r[0].tag, "COMMIT", "a read-only transaction commits");
        checks.fetch_add(1, SeqCst);
    }
    assert_eq!(s.status(), TxnStatus::Idle);
}

fn run(level: &'static str) {
    let db = db();
    let mut s = db.session();
    exec(&mut s, "CREATE TABLE acct (id int PRIMARY KEY, bal int NOT NULL CHECK (bal >= 0))");
    exec(&mut s, &format!("INSERT INTO acct SELECT g, {START} FROM generate_series(1, {ACCOUNTS}) g"));

    let begin: &'static str = match level {
        "REPEATABLE READ" => "BEGIN ISOLATION LEVEL REPEATABLE READ",
        _ => "BEGIN ISOLATION LEVEL SERIALIZABLE",
    };
    let done = Arc::new(AtomicBool::new(false));
    let checks = Arc::new(AtomicU64::new(0));
    let reader = {
        let (db, done, checks) = (db.clone(), done.clone(), checks.clone());
        std::thread::spawn(move || reader(db, done, checks))
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || writer(db, begin, 0x9e37_79b9_7f4a_7c15 ^ ((w as u64 + 1) * 7919)))
        })
        .collect();
    let reports: Vec<Report> = writers.into_iter().map(|h| h.join().unwrap()).collect();
    done.store(true, SeqCst);
    reader.join().unwrap();

    // Every committed transfer, and only those, shows in the balances.
    let mut want = vec![START; ACCOUNTS as usize + 1];
    for t in reports.iter().flat_map(|r| &r.committed) {
        want[t.from as usize] -= i64::from(t.amount);
        want[t.to as usize] += i64::from(t.amount);
    }
    let r = exec(&mut s, "SELECT id, bal FROM acct ORDER BY id");
    let got: Vec<(i64, i64)> = r[0].rows.iter().map(|row| (int(&row[0]), int(&row[1]))).collect();
    let want: Vec<(i64, i64)> = (1..=ACCOUNTS).map(|id| (i64::from(id), want[id as usize])).collect();
    assert_eq!(got, want, "{level}: balances differ from the committed transfers");

    let r = exec(&mut s, "SELECT sum(bal), count(*), min(bal) FROM acct");
    assert_eq!(int(&r[0].rows[0][0]), START * i64::from(ACCOUNTS));
    assert_eq!(int(&r[0].rows[0][1]), i64::from(ACCOUNTS));
    assert!(int(&r[0].rows[0][2]) >= 0);
    assert_eq!(s.status(), TxnStatus::Idle);

    let committed: usize = reports.iter().map(|r| r.committed.len()).sum();
    let refused: u64 = reports.iter().map(|r| r.refused).sum();
    let retries: u64 = reports.iter().map(|r| r.retries).sum();
    assert_eq!(committed as u64 + refused, (WRITERS * TRANSFERS) as u64);
    assert!(committed > 0);
    eprintln!(
        "{level}: {committed} committed, {refused} refused by CHECK, {retries} retries, {} reader snapshots",
        checks.load(SeqCst)
    );
}

#[test]
fn transfers_keep_the_total_under_repeatable_read() {
    run("REPEATABLE READ");
}

#[test]
fn transfers_keep_the_total_under_serializable() {
    run("SERIALIZABLE");
}
