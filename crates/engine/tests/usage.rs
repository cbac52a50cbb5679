//! Usage counters (`pg_stat_user_tables`, `pg_stat_user_indexes`,
//! `pg_stat_database`): scans and look-ups count where they start and the
//! rows they return; writes count when they commit, never when they roll
//! back; live rows come back with a restart; a deadlock is counted.

use centum_engine::{
    Database, Direction, IndexDef, Isolation, KeyRange, Options, Table, TableDef, TableUsage,
};
use centum_types::{DataType, Value};
use std::ops::Bound;
use std::sync::Arc;

fn kv(db: &Database) -> Arc<Table> {
    db.create_table(
        TableDef::new("kv")
            .column_not_null("k", DataType::BigInt)
            .column_not_null("v", DataType::BigInt)
            .index(IndexDef::hash("kv_pkey", &["k"], 64).unique())
            .index(IndexDef::range("kv_v", &["v"])),
    )
    .expect("create table")
}

fn row(k: i64, v: i64) -> Vec<Value> {
    vec![Value::BigInt(k), Value::BigInt(v)]
}

fn key(k: i64) -> [Value; 1] {
    [Value::BigInt(k)]
}

#[test]
fn scans_lookups_and_committed_writes_are_counted() {
    let db = Database::open(Options::default()).unwrap();
    let t = kv(&db);
    let before = db.transaction_counts();
    let tx = db.begin(Isolation::Snapshot).unwrap();
    for k in 0..5 {
        tx.insert(&t, row(k, k * 10)).unwrap();
    }
    tx.commit().unwrap();
    // Rolled back: neither its rows nor its writes count.
    let tx = db.begin(Isolation::Snapshot).unwrap();
    tx.insert(&t, row(100, 1)).unwrap();
    tx.abort();
    let tx = db.begin(Isolation::Snapshot).unwrap();
    let r = tx.get(&t, "kv_pkey", &key(1)).unwrap().unwrap();
    tx.update(&r, row(1, 11)).unwrap();
    let r = tx.get(&t, "kv_pkey", &key(2)).unwrap().unwrap();
    tx.delete(&r).unwrap();
    assert!(tx.get(&t, "kv_pkey", &key(99)).unwrap().is_none());
    tx.commit().unwrap();
    let tx = db.begin(Isolation::Snapshot).unwrap();
    assert_eq!(tx.scan(&t).unwrap().count(), 4);
    let range = KeyRange::between(Bound::Included(Value::BigInt(0)), Bound::Included(Value::BigInt(30)));
    assert_eq!(tx.range(&t, "kv_v", &range, Direction::Forward).unwrap().count(), 3); // 0, 11, 30
    assert_eq!(tx.lookup(&t, "kv_v", &key(40)).unwrap().len(), 1);
    tx.commit().unwrap();

    let u = t.usage();
    assert_eq!(
        u,
        TableUsage {
            seq_scans: 1,
            seq_rows: 4,
            index_scans: 5,
            index_rows: 1 + 1 + 3 + 1,
            inserted: 5,
            updated: 1,
            deleted: 1,
            live_rows: 4,
            dead_rows: u.dead_rows,
        }
    );
    let pkey = t.index("kv_pkey").unwrap().usage();
    assert_eq!((pkey.scans, pkey.rows), (3, 2));
    let v = t.index("kv_v").unwrap().usage();
    assert_eq!((v.scans, v.rows), (2, 4));
    // Versions the collector has not freed: the one replaced, the one
    // deleted, and the aborted insert until it is unlinked.
    db.collect_garbage();
    assert_eq!(t.usage().dead_rows, 0);
    let after = db.transaction_counts();
    assert_eq!(after.committed - before.committed, 3);
    assert_eq!(after.aborted - before.aborted, 1);

    db.reset_usage();
    let u = t.usage();
    assert_eq!((u.seq_scans, u.index_scans, u.inserted, u.live_rows), (0, 0, 0, 4));
    assert_eq!(db.transaction_counts().committed, 0);
}

#[test]
fn live_rows_come_back_with_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(Options::durable(dir.path())).unwrap();
        let t = kv(&db);
        let tx = db.begin(Isolation::Snapshot).unwrap();
        for k in 0..7 {
            tx.insert(&t, row(k, k)).unwrap();
        }
        tx.commit().unwrap();
        let tx = db.begin(Isolation::Snapshot).unwrap();
        let r = tx.get(&t, "kv_pkey", &key(3)).unwrap().unwrap();
        tx.delete(&r).unwrap();
        tx.commit().unwrap();
    }
    let db = Database::open(Options::durable(dir.path())).unwrap();
    let t = db.table("kv").unwrap();
    let u = t.usage();
    assert_eq!((u.live_rows, u.inserted, u.seq_scans), (6, 0, 0));
}

#[test]
fn a_held_row_and_a_deadlock_show() {
    let db = Database::open(Options::default()).unwrap();
    let t = kv(&db);
    let tx = db.begin(Isolation::ReadCommitted).unwrap();
    tx.insert(&t, row(1, 1)).unwrap();
    tx.insert(&t, row(2, 2)).unwrap();
    tx.commit().unwrap();
    let a = db.begin(Isolation::ReadCommitted).unwrap();
    let b = db.begin(Isolation::ReadCommitted).unwrap();
    assert_eq!(db.running(a.id()), Some(false));
    let r = a.get(&t, "kv_pkey", &key(1)).unwrap().unwrap();
    a.update(&r, row(1, 10)).unwrap();
    assert_eq!(db.running(a.id()), Some(true), "a holds a row");
    assert_eq!(db.running(b.id()), Some(false));
    let deadlocks = db.transaction_counts().deadlocks;
    let r = b.get(&t, "kv_pkey", &key(2)).unwrap().unwrap();
    b.update(&r, row(2, 20)).unwrap();
    let id = a.id();
    let (mine, theirs) = std::thread::scope(|s| {
        // b waits for a's row 1, then a asks for b's row 2: the wait that
        // would close the cycle is refused (both may be, in a race).
        let bid = b.id();
        let tb = t.clone();
        let waiter = s.spawn(move || {
            let r = b.get(&tb, "kv_pkey", &key(1)).unwrap().unwrap();
            let res = b.update(&r, row(1, 21)).map(|_| ());
            match res {
                Ok(()) => b.commit().map(|_| ()),
                Err(e) => {
                    b.abort();
                    Err(e)
                }
            }
        });
        while db.waiting_for(bid).is_none() {
            std::thread::yield_now();
        }
        let r = a.get(&t, "kv_pkey", &key(2)).unwrap().unwrap();
        let mine = a.update(&r, row(2, 12)).map(|_| ());
        match &mine {
            Ok(()) => a.commit().unwrap(),
            Err(_) => a.abort(),
        }
        (mine, waiter.join().unwrap())
    });
    let refused =
        [&mine, &theirs].iter().filter(|r| matches!(r, Err(centum_engine::Error::Deadlock))).count();
    assert!(refused >= 1 && mine.is_ok() != theirs.is_ok() || refused == 2, "{mine:?} {theirs:?}");
    assert_eq!(db.transaction_counts().deadlocks, deadlocks + refused as u64);
    assert_eq!(db.running(id), None);
}
