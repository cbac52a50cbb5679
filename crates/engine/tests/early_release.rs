//! Early lock release: a READ COMMITTED writer that meets a row whose
//! holder has its redo record in the log builds on the holder's version at
//! once, with a commit dependency, instead of waiting for the holder's
//! fsync. On a simulated file system whose syncs are slow or fail:
//!
//! - the dependent's update returns while the holder still waits for its
//!   sync, both commit, and a restart keeps both;
//! - when the log's write of the holder's record fails, every dependent
//!   fails with 40001: one that logs a record, and one that writes only a
//!   SCHEMA_ONLY table and so logs nothing. Nothing either of them wrote is
//!   visible afterwards or survives a restart, and the row is usable again;
//! - every crash image of a run of concurrent increments of one hot row
//!   (each with a history row) holds a counter equal to its history: no
//!   dependent survives without the holder it built on.

use centum_engine::storage::SimFs;
use centum_engine::{Database, Durability, IndexDef, Isolation, Table, TableDef, Transaction};
use centum_types::{DataType, Value};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

mod common;
use common::sim_options;

fn counters_def(name: &str) -> TableDef {
    TableDef::new(name)
        .column_not_null("id", DataType::BigInt)
        .column_not_null("n", DataType::BigInt)
        .index(IndexDef::hash(&format!("{name}_pkey"), &["id"], 64).unique())
}

fn open(fs: &SimFs) -> Database {
    let db = Database::open(sim_options(fs)).unwrap();
    if db.table("counters").is_err() {
        db.create_table(counters_def("counters")).unwrap();
        db.create_table(counters_def("cache").durability(Durability::SchemaOnly)).unwrap();
        db.create_table(
            TableDef::new("history")
                .column_not_null("id", DataType::BigInt)
                .index(IndexDef::hash("history_pkey", &["id"], 1024).unique()),
        )
        .unwrap();
        let (c, cache) = (db.table("counters").unwrap(), db.table("cache").unwrap());
        db.run(Isolation::ReadCommitted, 1, |txn| {
            for id in 1..=2 {
                txn.insert(&c, vec![Value::BigInt(id), Value::BigInt(0)])?;
                txn.insert(&cache, vec![Value::BigInt(id), Value::BigInt(0)])?;
            }
            Ok(())
        })
        .unwrap();
    }
    db
}

/// Adds one to row `id` of `table` as `UPDATE ... SET n = n + 1` does
/// under READ COMMITTED (re-applied to the newest version).
fn increment(txn: &Transaction, table: &Arc<Table>, id: i64) -> centum_engine::Result<()> {
    let pkey = format!("{}_pkey", table.name());
    let row = txn.get(table, &pkey, &[Value::BigInt(id)])?.expect("the row exists");
    let updated = txn.update_with(&row, |cur| {
        let Value::BigInt(n) = cur[1] else { unreachable!() };
        Some(vec![Value::BigInt(id), Value::BigInt(n + 1)])
    })?;
    assert!(updated, "row {id} of {} vanished", table.name());
    Ok(())
}

fn value(db: &Database, table: &str, id: i64) -> i64 {
    let t = db.table(table).unwrap();
    let txn = db.begin(Isolation::Snapshot).unwrap();
    let rows: Vec<i64> =
        txn.scan(&t).unwrap().filter(|r| r.int(0) == Some(id)).map(|r| r.int(1).unwrap()).collect();
    assert_eq!(rows.len(), 1, "row {id} of {table} appears {} times", rows.len());
    rows[0]
}

#[test]
fn a_writer_builds_on_a_logged_holder_without_waiting_for_its_sync() {
    let fs = SimFs::new();
    let db = open(&fs);
    let c = db.table("counters").unwrap();
    fs.set_sync_delay(Duration::from_secs(2));
    let holder_done = Arc::new(AtomicBool::new(false));
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let holder = {
        let (db, c, done) = (db.clone(), c.clone(), holder_done.clone());
        std::thread::spawn(move || {
            let txn = db.begin(Isolation::ReadCommitted).unwrap();
            increment(&txn, &c, 1).unwrap();
            locked_tx.send(()).unwrap();
            txn.commit().unwrap();
            done.store(true, SeqCst);
        })
    };
    locked_rx.recv().unwrap();
    let mut txn = db.begin(Isolation::ReadCommitted).unwrap();
    // Waits while the holder is active, goes on once its record is logged.
    increment(&txn, &c, 1).unwrap();
    assert!(!holder_done.load(SeqCst), "the writer waited for the holder's sync");
    // Its next statement sees its own version once, not the one it replaced.
    txn.begin_statement();
    let rows: Vec<_> = txn.scan(&c).unwrap().filter(|r| r.int(0) == Some(1)).map(|r| r.int(1)).collect();
    assert_eq!(rows, vec![Some(2)]);
    txn.commit().unwrap();
    holder.join().unwrap();
    assert_eq!(value(&db, "counters", 1), 2);
    fs.set_sync_delay(Duration::ZERO);
    let image = fs.crash_now();
    drop(db);
    assert_eq!(value(&open(&image), "counters", 1), 2);
}

#[test]
fn when_the_holders_log_write_fails_its_dependents_fail_with_40001_and_leave_nothing() {
    let fs = SimFs::new();
    let db = open(&fs);
    let (c, cache) = (db.table("counters").unwrap(), db.table("cache").unwrap());
    fs.set_sync_delay(Duration::from_millis(1500));
    // An unrelated commit keeps the log busy with a slow sync, so the
    // holder's record waits in the buffer for the next write.
    let writes = fs.writes();
    let busy = {
        let (db, c) = (db.clone(), c.clone());
        std::thread::spawn(move || {
            db.run(Isolation::ReadCommitted, 1, |txn| increment(txn, &c, 2)).unwrap();
        })
    };
    // Once its batch is written and its 1.5 s sync is under way, the next
    // write fails: the holder's.
    while fs.writes() == writes {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(200));
    fs.fail_write(1);
    let (logged_tx, logged_rx) = std::sync::mpsc::channel();
    let holder = {
        let (db, c, cache) = (db.clone(), c.clone(), cache.clone());
        std::thread::spawn(move || {
            let txn = db.begin(Isolation::ReadCommitted).unwrap();
            increment(&txn, &c, 1).unwrap();
            increment(&txn, &cache, 1).unwrap();
            logged_tx.send(()).unwrap();
            txn.commit()
        })
    };
    logged_rx.recv().unwrap();
    // Both build on the holder while its record waits for the write.
    let durable = db.begin(Isolation::ReadCommitted).unwrap();
    increment(&durable, &c, 1).unwrap();
    let memory_only = db.begin(Isolation::ReadCommitted).unwrap();
    increment(&memory_only, &cache, 1).unwrap();
    let e = holder.join().unwrap().unwrap_err();
    assert_eq!(e.sqlstate(), "58030", "{e}");
    busy.join().unwrap();
    for dependent in [durable, memory_only] {
        let e = dependent.commit().unwrap_err();
        assert_eq!(e.sqlstate(), "40001", "{e}");
    }
    // Nothing of the three is left, and the rows take writes again.
    assert_eq!(value(&db, "counters", 1), 0);
    assert_eq!(value(&db, "cache", 1), 0);
    assert_eq!(value(&db, "counters", 2), 1);
    fs.set_sync_delay(Duration::ZERO);
    db.run(Isolation::ReadCommitted, 1, |txn| increment(txn, &c, 1)).unwrap();
    db.run(Isolation::ReadCommitted, 1, |txn| increment(txn, &cache, 1)).unwrap();
    assert_eq!(value(&db, "cache", 1), 1);
    db.collect_garbage();
    let image = fs.crash_now();
    drop(db);
    let db = open(&image);
    assert_eq!(value(&db, "counters", 1), 1);
    assert_eq!(value(&db, "counters", 2), 1);
}

#[test]
fn no_crash_image_keeps_a_dependent_without_its_holder() {
    const WRITERS: i64 = 4;
    const EACH: i64 = 40;
    let fs = SimFs::new();
    let db = open(&fs);
    fs.set_sync_delay(Duration::from_millis(1));
    fs.record_images();
    let (c, h) = (db.table("counters").unwrap(), db.table("history").unwrap());
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let (db, c, h) = (&db, &c, &h);
            s.spawn(move || {
                for i in 0..EACH {
                    db.run(Isolation::ReadCommitted, 5, |txn| {
                        increment(txn, c, 1)?;
                        txn.insert(h, vec![Value::BigInt(w * EACH + i)])
                    })
                    .unwrap();
                }
            });
        }
    });
    assert_eq!(value(&db, "counters", 1), WRITERS * EACH);
    let images = fs.image_count();
    assert!(images > 10, "only {images} syncs");
    for n in 0..images {
        let db = open(&fs.crash_image(n).unwrap());
        let history = {
            let txn = db.begin(Isolation::Snapshot).unwrap();
            txn.scan(&db.table("history").unwrap()).unwrap().count() as i64
        };
        assert_eq!(value(&db, "counters", 1), history, "crash image {n}");
    }
}
