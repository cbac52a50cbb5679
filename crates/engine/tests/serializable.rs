//! SERIALIZABLE under concurrency: write skew and phantoms with real
//! threads, where commits overlap with validation.
//!
//! The single-threaded model test checks validation step by step; here
//! transactions race on all cores, so a validating transaction meets
//! others that are preparing, committing, or collecting garbage. Two
//! invariants that SNAPSHOT alone would break must hold in every snapshot
//! and at the end:
//!
//! - write skew: doctors come in pairs and each transaction takes one off
//!   call only if both are on call, or puts one back; every pair always has
//!   someone on call;
//! - phantoms: each transaction looks a group up through a non-unique hash
//!   index and inserts a row if the group is empty, or deletes the row it
//!   found; no group ever holds two rows.
//!
//! A watchdog aborts the process if a test runs past two minutes.

use centum_engine::{Database, Error, IndexDef, Isolation, Options, Table, TableDef};
use centum_types::{DataType, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

const GROUPS: i64 = 4;
const TRIES: u32 = 1000;
const HANG_LIMIT: Duration = Duration::from_secs(120);
/// Transactions per writer thread.
const PER_THREAD: u64 = if cfg!(debug_assertions) { 1_000 } else { 5_000 };

fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8)
}

/// Runs `f`, aborting the process if it takes longer than `HANG_LIMIT`.
fn with_watchdog<T>(what: &'static str, f: impl FnOnce() -> T) -> T {
    let (done, wait) = channel::<()>();
    let dog = std::thread::spawn(move || {
        if let Err(RecvTimeoutError::Timeout) = wait.recv_timeout(HANG_LIMIT) {
            eprintln!("watchdog: {what} still running after {HANG_LIMIT:?}: a deadlock or a hang");
            std::process::abort();
        }
    });
    let out = f();
    drop(done);
    let _ = dog.join();
    out
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn int(v: &Value) -> i64 {
    match v {
        Value::BigInt(i) => *i,
        other => panic!("expected a bigint, found {other:?}"),
    }
}

/// Runs `work(thread, iteration)` on every writer thread and `check` in a
/// loop on one more thread until the writers are done. Returns the number
/// of committed transactions.
fn race(
    db: &Database,
    work: impl Fn(&Database, usize, u64) -> Result<(), Error> + Send + Sync + 'static,
    check: impl Fn(&Database) + Send + 'static,
) -> u64 {
    let stop = Arc::new(AtomicBool::new(false));
    let committed = Arc::new(AtomicU64::new(0));
    let work = Arc::new(work);
    let checker = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            for _ in 0..1_000_000 {
                if stop.load(SeqCst) {
                    break;
                }
                check(&db);
            }
        })
    };
    let writers: Vec<_> = (0..threads())
        .map(|t| {
            let (db, work, committed) = (db.clone(), work.clone(), committed.clone());
            std::thread::spawn(move || {
                for i in 0..PER_THREAD {
                    match work(&db, t, i) {
                        Ok(()) => {
                            committed.fetch_add(1, SeqCst);
                        }
                        Err(e) if e.is_retryable() => {}
                        Err(e) => panic!("writer failed: {e} ({})", e.sqlstate()),
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer panicked");
    }
    stop.store(true, SeqCst);
    checker.join().expect("checker panicked");
    committed.load(SeqCst)
}

fn on_call(db: &Database, doctors: &Arc<Table>) -> BTreeMap<i64, i64> {
    let txn = db.begin(Isolation::Snapshot).expect("begin");
    let mut per_pair = BTreeMap::new();
    for r in txn.scan(doctors).expect("scan") {
        *per_pair.entry(r.int(1).expect("pair")).or_insert(0) += r.int(2).expect("on");
    }
    txn.commit().expect("read-only commit");
    per_pair
}

#[test]
fn serializable_prevents_write_skew_under_concurrency() {
    let db = Database::open(Options::default()).expect("open");
    let doctors = db
        .create_table(
            TableDef::new("doctors")
                .column_not_null("id", DataType::BigInt)
                .column_not_null("pair", DataType::BigInt)
                .column_not_null("on_call", DataType::BigInt)
                .index(IndexDef::hash("doctors_pkey", &["id"], 64).unique()),
        )
        .expect("create table");
    db.run(Isolation::Snapshot, 1, |txn| {
        (0..2 * GROUPS).try_for_each(|id| {
            txn.insert(&doctors, vec![Value::BigInt(id), Value::BigInt(id / 2), Value::BigInt(1)])
        })
    })
    .expect("load");
    let d = doctors.clone();
    let work = move |db: &Database, t: usize, i: u64| {
        let mut x = (t as u64 + 1) * 0x9e37_79b9 + i;
        let id = (xorshift(&mut x) % (2 * GROUPS) as u64) as i64;
        let partner = id ^ 1;
        db.run(Isolation::Serializable, TRIES, |txn| {
            let me = txn.get(&d, "doctors_pkey", &[Value::BigInt(id)])?.expect("doctor");
            let other = txn.get(&d, "doctors_pkey", &[Value::BigInt(partner)])?.expect("partner");
            let (mine, theirs) = (me.int(2).expect("on"), other.int(2).expect("on"));
            assert!(mine + theirs > 0, "pair {} seen with nobody on call: write skew", id / 2);
            // Widen the window between the reads and the write.
            std::thread::yield_now();
            // Off call only if the partner stays on; back on otherwise.
            let next = if mine == 1 && theirs == 1 { 0 } else { 1 };
            txn.update_with(&me, |old| Some(vec![old[0].clone(), old[1].clone(), Value::BigInt(next)]))?;
            Ok(())
        })
    };
    let d = doctors.clone();
    let check = move |db: &Database| {
        for (pair, on) in on_call(db, &d) {
            assert!(on >= 1, "pair {pair} has nobody on call: write skew under SERIALIZABLE");
        }
    };
    let committed = with_watchdog("write skew", || race(&db, work, check));
    assert!(committed > 0);
    for (pair, on) in on_call(&db, &doctors) {
        assert!(on >= 1, "pair {pair} ends with nobody on call");
    }
}

#[test]
fn serializable_prevents_phantoms_under_concurrency() {
    let db = Database::open(Options::default()).expect("open");
    let slots = db
        .create_table(
            TableDef::new("slots")
                .column_not_null("id", DataType::BigInt)
                .column_not_null("grp", DataType::BigInt)
                .index(IndexDef::hash("slots_pkey", &["id"], 1024).unique())
                .index(IndexDef::hash("slots_grp", &["grp"], 4)),
        )
        .expect("create table");
    let s = slots.clone();
    let work = move |db: &Database, t: usize, i: u64| {
        let mut x = (t as u64 + 7) * 0x2545_f491 + i;
        let g = (xorshift(&mut x) % GROUPS as u64) as i64;
        // Ids unique across threads and attempts of one iteration.
        let id = (t as i64) << 40 | i as i64;
        db.run(Isolation::Serializable, TRIES, |txn| {
            let rows = txn.lookup(&s, "slots_grp", &[Value::BigInt(g)])?;
            std::thread::yield_now();
            match rows.first() {
                None => txn.insert(&s, vec![Value::BigInt(id), Value::BigInt(g)]),
                Some(r) => txn.delete(r).map(drop),
            }
        })
    };
    let s = slots.clone();
    let check = move |db: &Database| {
        let txn = db.begin(Isolation::Snapshot).expect("begin");
        let mut per_group = BTreeMap::<i64, u32>::new();
        for r in txn.scan(&s).expect("scan") {
            *per_group.entry(int(&r.get(1))).or_default() += 1;
        }
        for g in 0..GROUPS {
            let found = txn.lookup(&s, "slots_grp", &[Value::BigInt(g)]).expect("lookup").len() as u32;
            assert_eq!(
                found,
                per_group.get(&g).copied().unwrap_or(0),
                "index and scan disagree on group {g}"
            );
        }
        txn.commit().expect("read-only commit");
        for (g, n) in per_group {
            assert!(n <= 1, "group {g} holds {n} rows: a phantom under SERIALIZABLE");
        }
    };
    let committed = with_watchdog("phantoms", || race(&db, work, check));
    assert!(committed > 0);
}
