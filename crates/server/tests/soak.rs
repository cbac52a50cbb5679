//! Many clients, conflicting updates, failed statements and clients that
//! leave mid-transaction, for a bounded time: afterwards no session is
//! left waiting, no row is held, and no money was made or lost.
//!
//! Each client moves amounts between random accounts of a small table, so
//! transfers meet on the same rows and wait for each other; some fail on
//! purpose (division by zero) inside their block, some run with a short
//! `lock_timeout`, some hit deadlocks (40P01) or serialization failures,
//! and some close their connection with the block still open. Errors are
//! expected; what must hold is the invariant and that every wait ended.

mod common;

use common::Server;
use postgres::{Client, NoTls};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ACCOUNTS: i32 = 12;
const START: i64 = 1_000;
const CLIENTS: u64 = 32;
const SECONDS: u64 = 6;

/// Draws from a per-client sequence: `below(n)` is the next number in
/// `0..n` (SplitMix64 over a counter).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let z = (self.0 ^ (self.0 >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        (z ^ (z >> 27)) % n
    }
}

fn connect(s: &Server) -> Client {
    Client::connect(&s.conninfo("centum"), NoTls).unwrap()
}

/// One transfer in its own block, ending in COMMIT, ROLLBACK, or the
/// connection closing; `Ok(true)` when it committed.
fn transfer(c: &mut Client, rng: &mut Rng) -> Result<bool, postgres::Error> {
    let (a, b) = (rng.below(ACCOUNTS as u64) as i32, rng.below(ACCOUNTS as u64) as i32);
    let amount = rng.below(50) as i64 + 1;
    c.batch_execute("BEGIN")?;
    c.execute("UPDATE acc SET balance = balance - $1 WHERE id = $2", &[&amount, &a])?;
    if rng.below(10) == 0 {
        c.batch_execute("SELECT 1 / 0")?;
    }
    c.execute("UPDATE acc SET balance = balance + $1 WHERE id = $2", &[&amount, &b])?;
    c.batch_execute("COMMIT")?;
    Ok(true)
}

#[test]
fn conflicting_clients_that_fail_and_vanish_leave_nothing_waiting() {
    let s = Server::start(&[]);
    let mut admin = connect(&s);
    admin
        .batch_execute(&format!(
            "CREATE TABLE acc (id int PRIMARY KEY, balance bigint NOT NULL);
             INSERT INTO acc SELECT g, {START} FROM generate_series(0, {}) g",
            ACCOUNTS - 1
        ))
        .unwrap();
    let committed = Arc::new(AtomicU64::new(0));
    let vanished = Arc::new(AtomicU64::new(0));
    let stop = Instant::now() + Duration::from_secs(SECONDS);
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let (url, committed, vanished) = (s.conninfo("centum"), committed.clone(), vanished.clone());
            std::thread::spawn(move || {
                let mut rng = Rng(i << 32);
                let open = |rng: &mut Rng| {
                    let mut c = Client::connect(&url, NoTls).unwrap();
                    // A third of the sessions give up on a held row quickly.
                    if rng.below(3) == 0 {
                        c.batch_execute("SET lock_timeout = 20").unwrap();
                    }
                    c
                };
                let mut c = open(&mut rng);
                while Instant::now() < stop {
                    if rng.below(20) == 0 {
                        // Leave with the block open, holding a row.
                        let _ = c.batch_execute("BEGIN; UPDATE acc SET balance = balance WHERE id = 0");
                        drop(std::mem::replace(&mut c, open(&mut rng)));
                        vanished.fetch_add(1, Relaxed);
                        continue;
                    }
                    match transfer(&mut c, &mut rng) {
                        Ok(_) => {
                            committed.fetch_add(1, Relaxed);
                        }
                        Err(e) => {
                            let code = e.code().map(|c| c.code().to_string()).unwrap_or_default();
                            assert!(
                                ["22012", "40P01", "40001", "55P03", "25P02"].contains(&code.as_str()),
                                "unexpected failure {code}: {:?}",
                                e.as_db_error().map(|d| d.message())
                            );
                            c.batch_execute("ROLLBACK").unwrap();
                        }
                    }
                }
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    assert!(committed.load(Relaxed) > 0 && vanished.load(Relaxed) > 0);
    // Every session but this one is gone or idle, and none waits.
    let started = Instant::now();
    loop {
        let busy: i64 = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE pid <> pg_backend_pid() AND (state <> 'idle' OR wait_event IS NOT NULL)",
                &[],
            )
            .unwrap()
            .get(0);
        if busy == 0 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{busy} sessions still busy or waiting");
        std::thread::sleep(Duration::from_millis(20));
    }
    // No row is held: every account can be updated at once.
    admin.batch_execute("SET lock_timeout = 1000; UPDATE acc SET balance = balance").unwrap();
    let total: i64 = admin.query_one("SELECT sum(balance)::bigint FROM acc", &[]).unwrap().get(0);
    assert_eq!(total, START * ACCOUNTS as i64, "money was made or lost");
}

/// READ COMMITTED transactions that change the same row twice while others
/// change it too. A transaction whose first UPDATE waited and then wrote
/// on top of another's commit must read its next statement at or after
/// that commit: an older snapshot saw the row's replaced version beside
/// its own new one, and the second UPDATE failed with 55000.
#[test]
fn a_row_updated_twice_in_a_block_under_contention() {
    let s = Server::start(&[]);
    connect(&s)
        .batch_execute(
            "CREATE TABLE acc (id int PRIMARY KEY, balance bigint); INSERT INTO acc VALUES (0, 0), (1, 0)",
        )
        .unwrap();
    let stop = Instant::now() + Duration::from_secs(3);
    let clients: Vec<_> = (0..8)
        .map(|i| {
            let url = s.conninfo("centum");
            std::thread::spawn(move || {
                let mut c = Client::connect(&url, NoTls).unwrap();
                let down = c.prepare("UPDATE acc SET balance = balance - 1 WHERE id = $1").unwrap();
                let up = c.prepare("UPDATE acc SET balance = balance + 1 WHERE id = $1").unwrap();
                let mut n = 0;
                while Instant::now() < stop {
                    let id = (i + n) % 2;
                    let mut t = c.transaction().unwrap();
                    assert_eq!(t.execute(&down, &[&id]).unwrap(), 1);
                    assert_eq!(t.execute(&up, &[&id]).unwrap(), 1);
                    t.commit().unwrap();
                    n += 1;
                }
                n
            })
        })
        .collect();
    let done: i32 = clients.into_iter().map(|c| c.join().unwrap()).sum();
    assert!(done > 0);
    let total: i64 = connect(&s).query_one("SELECT sum(balance)::bigint FROM acc", &[]).unwrap().get(0);
    assert_eq!(total, 0);
}
