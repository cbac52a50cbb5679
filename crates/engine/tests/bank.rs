//! Concurrent bank transfers: lost updates, torn snapshots, deadlocks and
//! hangs under every isolation level.
//!
//! 100 accounts start with 1,000 each. One writer thread per core (2 to 8)
//! moves random amounts between random accounts: it looks both accounts up,
//! updates both with `update_with` (under READ COMMITTED a concurrent
//! update makes the closure run again on the newest balance) and appends a
//! row to a `history` table without indexes. Accounts are locked in random
//! order, so READ COMMITTED writers deadlock now and then (40P01); every
//! retryable error is retried through `Database::run`. The garbage
//! collector runs in the background all along.
//!
//! A reader thread meanwhile sums all balances in one snapshot: the sum is
//! always exactly 100,000 and the per-account transfer counters always add
//! up to twice the history rows. At the end every account's balance is
//! exactly 1,000 plus what the writers recorded for it, its counter is the
//! number of committed transfers that touched it, and the history holds one
//! row per committed transfer: a lost or doubled update anywhere shows.
//!
//! A watchdog aborts the process if a test runs past two minutes, so a
//! deadlock that is never detected fails the suite instead of hanging it.
//! `million_transfers_mixed_levels` (ignored; run it with
//! `cargo test --release --test bank -- --ignored`) does 1,000,000.

use centum_engine::{Database, Error, IndexDef, Isolation, Options, Table, TableDef, Transaction};
use centum_types::{DataType, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const ACCOUNTS: i64 = 100;
const START: i64 = 1000;
const PKEY: &str = "accounts_pkey";
/// Attempts per transfer before it is given up (and counted as such).
const TRIES: u32 = 1000;
/// Longest a test may run before the watchdog calls it hung.
const HANG_LIMIT: Duration = Duration::from_secs(120);
/// Most snapshots one reader checks.
const MAX_READS: u64 = 1_000_000;

/// SplitMix64: a small deterministic generator, one per thread.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Aborts the process if it is not dropped within `limit`.
struct Watchdog {
    done: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    fn start(what: &'static str, limit: Duration) -> Watchdog {
        let (done, wait) = channel::<()>();
        let thread = std::thread::spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = wait.recv_timeout(limit) {
                eprintln!("watchdog: {what} still running after {limit:?}: a deadlock or a hang");
                std::process::abort();
            }
        });
        Watchdog { done: Some(done), thread: Some(thread) }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Bank {
    db: Database,
    accounts: Arc<Table>,
    history: Arc<Table>,
}

fn int(v: &Value) -> i64 {
    match v {
        Value::BigInt(i) => *i,
        other => panic!("expected a bigint, found {other:?}"),
    }
}

fn open_bank() -> Bank {
    let db = Database::open(Options::default()).expect("open");
    let accounts = db
        .create_table(
            TableDef::new("accounts")
                .column_not_null("id", DataType::BigInt)
                .column_not_null("balance", DataType::BigInt)
                .column_not_null("transfers", DataType::BigInt)
                .index(IndexDef::hash(PKEY, &["id"], 128).unique()),
        )
        .expect("create accounts");
    let history = db
        .create_table(
            TableDef::new("history")
                .column_not_null("src", DataType::BigInt)
                .column_not_null("dst", DataType::BigInt)
                .column_not_null("amount", DataType::BigInt),
        )
        .expect("create history");
    db.run(Isolation::Snapshot, 1, |txn| {
        (0..ACCOUNTS).try_for_each(|id| {
            txn.insert(&accounts, vec![Value::BigInt(id), Value::BigInt(START), Value::BigInt(0)])
        })
    })
    .expect("open the accounts");
    Bank { db, accounts, history }
}

/// What one writer did.
#[derive(Default)]
struct Tally {
    committed: u64,
    attempts: u64,
    given_up: u64,
    /// Net change of each account by this writer's committed transfers.
    delta: Vec<i64>,
    /// Committed transfers that touched each account.
    touched: Vec<u64>,
}

/// One transfer attempt: `amount` from `src` to `dst`.
fn transfer(bank: &Bank, txn: &mut Transaction, src: i64, dst: i64, amount: i64) -> Result<(), Error> {
    let a = txn.get(&bank.accounts, PKEY, &[Value::BigInt(src)])?.expect("source account exists");
    let b = txn.get(&bank.accounts, PKEY, &[Value::BigInt(dst)])?.expect("destination account exists");
    let moved = |by: i64| {
        move |old: &[Value]| {
            Some(vec![old[0].clone(), Value::BigInt(int(&old[1]) + by), Value::BigInt(int(&old[2]) + 1)])
        }
    };
    // Accounts are never deleted, so the update always finds its row.
    assert!(txn.update_with(&a, moved(-amount))?, "account {src} vanished");
    assert!(txn.update_with(&b, moved(amount))?, "account {dst} vanished");
    txn.insert(&bank.history, vec![Value::BigInt(src), Value::BigInt(dst), Value::BigInt(amount)])
}

fn writer(bank: &Bank, level: Option<Isolation>, seed: u64, quota: u64) -> Tally {
    let mut rng = Rng(seed);
    let mut t =
        Tally { delta: vec![0; ACCOUNTS as usize], touched: vec![0; ACCOUNTS as usize], ..Tally::default() };
    for _ in 0..quota {
        let src = rng.below(ACCOUNTS as u64) as i64;
        let dst = (src + 1 + rng.below(ACCOUNTS as u64 - 1) as i64) % ACCOUNTS;
        let amount = 1 + rng.below(100) as i64;
        let iso = level.unwrap_or_else(|| LEVELS[rng.below(3) as usize]);
        let mut attempts = 0;
        let r = bank.db.run(iso, TRIES, |txn| {
            attempts += 1;
            transfer(bank, txn, src, dst, amount)
        });
        t.attempts += attempts;
        match r {
            Ok(()) => {
                t.committed += 1;
                t.delta[src as usize] -= amount;
                t.delta[dst as usize] += amount;
                t.touched[src as usize] += 1;
                t.touched[dst as usize] += 1;
            }
            Err(e) if e.is_retryable() => t.given_up += 1,
            Err(e) => panic!("transfer {src} -> {dst} ({iso:?}) failed: {e} ({})", e.sqlstate()),
        }
    }
    t
}

const LEVELS: [Isolation; 3] = [Isolation::ReadCommitted, Isolation::Snapshot, Isolation::Serializable];

/// Balances, counters and history of one snapshot.
struct Audit {
    balances: Vec<i64>,
    counters: Vec<u64>,
    history: u64,
}

/// Reads everything in one snapshot (one statement under READ COMMITTED),
/// by a scan or by a look-up per account.
fn audit(bank: &Bank, iso: Isolation, by_lookup: bool) -> Result<Audit, Error> {
    let mut txn = bank.db.begin(iso)?;
    txn.begin_statement();
    let mut balances = vec![i64::MIN; ACCOUNTS as usize];
    let mut counters = vec![0; ACCOUNTS as usize];
    let mut record = |vals: Vec<Value>| {
        let id = int(&vals[0]) as usize;
        assert_eq!(balances[id], i64::MIN, "account {id} seen twice in one snapshot");
        balances[id] = int(&vals[1]);
        counters[id] = int(&vals[2]) as u64;
    };
    if by_lookup {
        for id in 0..ACCOUNTS {
            let row = txn.get(&bank.accounts, PKEY, &[Value::BigInt(id)])?.expect("account exists");
            record(row.values());
        }
    } else {
        txn.scan(&bank.accounts)?.for_each(|r| record(r.values()));
    }
    let history = txn.scan(&bank.history)?.count() as u64;
    txn.commit()?;
    assert!(!balances.contains(&i64::MIN), "an account is missing from a snapshot");
    Ok(Audit { balances, counters, history })
}

/// Checks that a snapshot is consistent; returns whether it was taken.
fn check_snapshot(bank: &Bank, iso: Isolation, by_lookup: bool) {
    let a = audit(bank, iso, by_lookup).unwrap_or_else(|e| panic!("audit under {iso:?} failed: {e}"));
    let total: i64 = a.balances.iter().sum();
    assert_eq!(total, ACCOUNTS * START, "{iso:?} snapshot sums to {total}: a torn read or a lost update");
    let counted: u64 = a.counters.iter().sum();
    assert_eq!(counted, 2 * a.history, "{iso:?} snapshot: transfer counters disagree with the history");
}

struct Summary {
    committed: u64,
    attempts: u64,
    given_up: u64,
    audits: u64,
}

fn run_bank(level: Option<Isolation>, transfers: u64) -> Summary {
    let name = match level {
        Some(Isolation::ReadCommitted) => "bank (READ COMMITTED)",
        Some(Isolation::Snapshot) => "bank (SNAPSHOT)",
        Some(Isolation::Serializable) => "bank (SERIALIZABLE)",
        None => "bank (mixed levels)",
    };
    let _watchdog = Watchdog::start(name, HANG_LIMIT);
    let bank = Arc::new(open_bank());
    let writers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8);
    let quota = transfers / writers as u64;
    let stop = Arc::new(AtomicBool::new(false));
    let audits = Arc::new(AtomicU64::new(0));
    let reader = {
        let (bank, stop, audits) = (bank.clone(), stop.clone(), audits.clone());
        std::thread::spawn(move || {
            let mut rng = Rng(0xa0d1);
            for _ in 0..MAX_READS {
                if stop.load(SeqCst) {
                    break;
                }
                let iso = level.unwrap_or_else(|| LEVELS[rng.below(3) as usize]);
                check_snapshot(&bank, iso, rng.below(4) == 0);
                audits.fetch_add(1, SeqCst);
            }
        })
    };
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let bank = bank.clone();
            std::thread::spawn(move || writer(&bank, level, 0x5eed + w as u64, quota))
        })
        .collect();
    let tallies: Vec<Tally> = handles.into_iter().map(|h| h.join().expect("writer panicked")).collect();
    stop.store(true, SeqCst);
    reader.join().expect("reader panicked");

    let committed: u64 = tallies.iter().map(|t| t.committed).sum();
    let final_state = audit(&bank, Isolation::Snapshot, false).expect("final audit");
    for id in 0..ACCOUNTS as usize {
        let delta: i64 = tallies.iter().map(|t| t.delta[id]).sum();
        let touched: u64 = tallies.iter().map(|t| t.touched[id]).sum();
        assert_eq!(
            final_state.balances[id],
            START + delta,
            "account {id}: an update was lost or applied twice"
        );
        assert_eq!(final_state.counters[id], touched, "account {id}: committed transfers miscounted");
    }
    assert_eq!(final_state.history, committed, "history rows differ from committed transfers");
    assert_eq!(final_state.balances.iter().sum::<i64>(), ACCOUNTS * START);
    assert!(committed > 0, "no transfer committed");

    // With every transaction gone, collection leaves only live rows.
    let live = ACCOUNTS as u64 + committed;
    let mut versions = u64::MAX;
    for _ in 0..2000 {
        bank.db.collect_garbage();
        versions = bank.db.stats().tables.iter().map(|t| t.versions).sum();
        if versions == live {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(versions, live, "versions left after collecting garbage with no transaction open");

    Summary {
        committed,
        attempts: tallies.iter().map(|t| t.attempts).sum(),
        given_up: tallies.iter().map(|t| t.given_up).sum(),
        audits: audits.load(SeqCst),
    }
}

/// Transfers in the default suite (fewer in unoptimised builds).
const TRANSFERS: u64 = if cfg!(debug_assertions) { 5_000 } else { 50_000 };

fn report(what: &str, s: &Summary, started: Instant) {
    println!(
        "{what}: {} transfers committed, {} attempts ({} retried), {} given up, {} consistent snapshots, {:.1?}",
        s.committed,
        s.attempts,
        s.attempts - s.committed - s.given_up,
        s.given_up,
        s.audits,
        started.elapsed()
    );
}

#[test]
fn transfers_read_committed() {
    let t = Instant::now();
    report("READ COMMITTED", &run_bank(Some(Isolation::ReadCommitted), TRANSFERS), t);
}

#[test]
fn transfers_snapshot() {
    let t = Instant::now();
    report("SNAPSHOT", &run_bank(Some(Isolation::Snapshot), TRANSFERS), t);
}

#[test]
fn transfers_serializable() {
    let t = Instant::now();
    report("SERIALIZABLE", &run_bank(Some(Isolation::Serializable), TRANSFERS), t);
}

#[test]
fn transfers_mixed_levels() {
    let t = Instant::now();
    report("mixed levels", &run_bank(None, TRANSFERS), t);
}

#[test]
#[ignore = "long run: cargo test --release --test bank -- --ignored"]
fn million_transfers_mixed_levels() {
    let t = Instant::now();
    report("1M transfers, mixed levels", &run_bank(None, 1_000_000), t);
}
