//! kill -9: a child process runs a concurrent durable load on a real data
//! directory and prints every commit it saw acknowledged; the parent kills
//! it with SIGKILL at a random moment, opens the directory itself
//! (recovery), and checks:
//!
//! - every acknowledged commit is there (durability);
//! - every order has all its lines and each writer's counter equals the
//!   number of its orders present (atomicity: a transaction is all there or
//!   not at all);
//! - each writer's orders are a gap-free prefix of what it committed, and
//!   its one scratch row is the one its last surviving commit left
//!   (commits of one session survive in order; deletes are replayed);
//! - one row that every order adds to (a READ COMMITTED increment, so the
//!   writers build on each other's logged versions before they are durable:
//!   early lock release) equals the number of orders present: a kill while
//!   dependents wait on a holder's fsync keeps both or neither.
//!
//! Then the next cycle's child recovers the same directory and goes on. The
//! number of cycles is `CENTUM_KILL_CYCLES` (default 6; the long run uses
//! 50). Checkpoints and merges are small, so kills land in them too.

use centum_engine::storage::{CheckpointOptions, Options as StorageOptions};
use centum_engine::{Database, Direction, IndexDef, Isolation, KeyRange, Options, TableDef};
use centum_types::{DataType, Value};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DIR_ENV: &str = "CENTUM_KILL_CHILD_DIR";
const CYCLE_ENV: &str = "CENTUM_KILL_CHILD_CYCLE";
const WRITERS: i64 = 4;
const LINES: i64 = 3;
/// The `counters` row every order adds one to.
const TOTAL: i64 = -1;

fn options(dir: &Path) -> Options {
    Options {
        data_dir: Some(dir.into()),
        storage: StorageOptions {
            checkpoint: CheckpointOptions {
                data_file_size: 256 << 10,
                auto_checkpoint_bytes: 512 << 10,
                ..CheckpointOptions::default()
            },
            ..StorageOptions::default()
        },
        ..Options::default()
    }
}

/// Creates the tables that are missing (a kill may land between two).
fn create_schema(db: &Database) {
    let create = |def: TableDef| {
        if db.table(&def.name).is_err() {
            db.create_table(def).unwrap();
        }
    };
    create(
        TableDef::new("orders")
            .column_not_null("id", DataType::BigInt)
            .column_not_null("writer", DataType::BigInt)
            .column_not_null("seq", DataType::BigInt)
            .column("note", DataType::Text)
            .index(IndexDef::hash("orders_pkey", &["id"], 1 << 14).unique())
            .index(IndexDef::range("orders_writer", &["writer", "seq"])),
    );
    create(
        TableDef::new("lines")
            .column_not_null("order_id", DataType::BigInt)
            .column_not_null("n", DataType::Integer)
            .index(IndexDef::range("lines_pkey", &["order_id", "n"]).unique()),
    );
    create(
        TableDef::new("counters")
            .column_not_null("writer", DataType::BigInt)
            .column_not_null("v", DataType::BigInt)
            .index(IndexDef::hash("counters_pkey", &["writer"], 256).unique()),
    );
    create(
        TableDef::new("scratch")
            .column_not_null("writer", DataType::BigInt)
            .column_not_null("seq", DataType::BigInt)
            .index(IndexDef::hash("scratch_writer", &["writer"], 256)),
    );
    let counters = db.table("counters").unwrap();
    db.run(Isolation::ReadCommitted, 1, |txn| {
        if txn.get(&counters, "counters_pkey", &[Value::BigInt(TOTAL)])?.is_none() {
            txn.insert(&counters, vec![Value::BigInt(TOTAL), Value::BigInt(0)])?;
        }
        Ok(())
    })
    .unwrap();
}

/// The child: writers commit until killed (or, as a bound, for 60 s).
#[test]
#[ignore = "the child process of the kill -9 test, started by it"]
fn child_load() {
    let (Ok(dir), Ok(cycle)) = (std::env::var(DIR_ENV), std::env::var(CYCLE_ENV)) else { return };
    let cycle: i64 = cycle.parse().unwrap();
    let db = Database::open(options(Path::new(&dir))).unwrap();
    create_schema(&db);
    let out = std::sync::Mutex::new(std::io::stdout());
    let deadline = Instant::now() + Duration::from_secs(60);
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let (db, out) = (&db, &out);
            s.spawn(move || {
                let writer = cycle * 100 + w;
                let orders = db.table("orders").unwrap();
                let lines = db.table("lines").unwrap();
                let counters = db.table("counters").unwrap();
                let scratch = db.table("scratch").unwrap();
                let mut seq = 0i64;
                while Instant::now() < deadline {
                    let id = (writer << 32) | seq;
                    db.run(Isolation::ReadCommitted, 20, |txn| {
                        let note = "n".repeat((seq % 50) as usize);
                        txn.insert(
                            &orders,
                            vec![
                                Value::BigInt(id),
                                Value::BigInt(writer),
                                Value::BigInt(seq),
                                Value::Text(note.as_str().into()),
                            ],
                        )?;
                        for n in 0..LINES {
                            txn.insert(&lines, vec![Value::BigInt(id), Value::Integer(n as i32)])?;
                        }
                        match txn.get(&counters, "counters_pkey", &[Value::BigInt(writer)])? {
                            Some(r) => {
                                let v = r.int(1).unwrap();
                                txn.update(&r, vec![Value::BigInt(writer), Value::BigInt(v + 1)])?;
                            }
                            None => txn.insert(&counters, vec![Value::BigInt(writer), Value::BigInt(1)])?,
                        }
                        let total = txn.get(&counters, "counters_pkey", &[Value::BigInt(TOTAL)])?.unwrap();
                        txn.update_with(&total, |cur| {
                            let Value::BigInt(n) = cur[1] else { unreachable!() };
                            Some(vec![Value::BigInt(TOTAL), Value::BigInt(n + 1)])
                        })?;
                        for r in txn.lookup(&scratch, "scratch_writer", &[Value::BigInt(writer)])? {
                            txn.delete(&r)?;
                        }
                        txn.insert(&scratch, vec![Value::BigInt(writer), Value::BigInt(seq)])
                    })
                    .unwrap();
                    let mut o = out.lock().unwrap();
                    writeln!(o, "ack {id}").unwrap();
                    o.flush().unwrap();
                    seq += 1;
                }
            });
        }
    });
}

/// Checks the recovered database against the acknowledged order ids.
fn check(db: &Database, acked: &HashSet<i64>) -> usize {
    if db.table_names().len() < 4 {
        assert!(acked.is_empty(), "acknowledged commits, but the schema is not all there");
        return 0;
    }
    let orders = db.table("orders").unwrap();
    let lines = db.table("lines").unwrap();
    let counters = db.table("counters").unwrap();
    let scratch = db.table("scratch").unwrap();
    let txn = db.begin(Isolation::Snapshot).unwrap();
    let present: HashSet<i64> = txn.scan(&orders).unwrap().map(|r| r.int(0).unwrap()).collect();
    let lost: Vec<_> = acked.iter().filter(|id| !present.contains(id)).collect();
    assert!(lost.is_empty(), "{} acknowledged orders lost, e.g. {:?}", lost.len(), lost.first());
    let mut per_writer: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for &id in &present {
        per_writer.entry(id >> 32).or_default().push(id & 0xFFFF_FFFF);
        let n = txn
            .range(&lines, "lines_pkey", &KeyRange::prefix(vec![Value::BigInt(id)]), Direction::Forward)
            .unwrap()
            .count();
        assert_eq!(n as i64, LINES, "order {id} has {n} lines");
    }
    assert_eq!(txn.scan(&lines).unwrap().count(), present.len() * LINES as usize);
    let total = txn.get(&counters, "counters_pkey", &[Value::BigInt(TOTAL)]).unwrap();
    let total = total.map_or(0, |r| r.int(1).unwrap());
    assert_eq!(total, present.len() as i64, "the shared counter disagrees with the orders present");
    for (writer, mut seqs) in per_writer {
        seqs.sort_unstable();
        let v =
            txn.get(&counters, "counters_pkey", &[Value::BigInt(writer)]).unwrap().unwrap().int(1).unwrap();
        assert_eq!(seqs.len() as i64, v, "writer {writer}: counter {v}, {} orders", seqs.len());
        assert_eq!(seqs, (0..v).collect::<Vec<_>>(), "writer {writer}: orders with a gap");
        let s: Vec<_> = txn
            .lookup(&scratch, "scratch_writer", &[Value::BigInt(writer)])
            .unwrap()
            .iter()
            .map(|r| r.int(1))
            .collect();
        assert_eq!(s, vec![Some(v - 1)], "writer {writer}: scratch rows");
    }
    present.len()
}

#[test]
fn killed_at_random_moments_loses_no_acknowledged_commit() {
    let cycles: u64 = std::env::var("CENTUM_KILL_CYCLES").ok().and_then(|c| c.parse().ok()).unwrap_or(6);
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    let mut acked = HashSet::new();
    for cycle in 0..cycles {
        let mut child = Command::new(&exe)
            .args(["--exact", "child_load", "--ignored", "--nocapture", "--test-threads=1"])
            .env(DIR_ENV, dir.path())
            .env(CYCLE_ENV, cycle.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut ids = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(id) = line.strip_prefix("ack ") {
                    ids.push(id.parse::<i64>().unwrap());
                }
            }
            ids
        });
        // Let the child recover and get going, then kill it somewhere in
        // the next stretch of load.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        std::thread::sleep(Duration::from_millis(150 + rng % 600));
        let exited = child.try_wait().unwrap();
        child.kill().unwrap();
        let status = child.wait().unwrap();
        let ids = reader.join().unwrap();
        if exited.is_some() || status.code().is_some() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            panic!("cycle {cycle}: the child exited by itself ({status}): {err}");
        }
        acked.extend(ids);
        let db = Database::open(options(dir.path())).unwrap();
        let present = check(&db, &acked);
        eprintln!("cycle {cycle}: {} acknowledged so far, {present} orders recovered", acked.len());
    }
    assert!(!acked.is_empty(), "no commit was ever acknowledged");
}
