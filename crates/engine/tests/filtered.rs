//! Filtered scans (`Transaction::scan_where`) against the plain scan they
//! must equal: the same rows in the same order, under every isolation
//! level, on a table large enough to be read on several threads, with
//! uncommitted and later-committed changes that the snapshot must not see,
//! and a consumer that stops early.

use centum_engine::{Database, Isolation, Options, Row, Scanned, Table, TableDef, Transaction};
use centum_types::{DataType, Value};
use std::sync::Arc;

/// Rows: above the size the scan reads on one thread alone.
const ROWS: i64 = 100_000;

fn pair(a: i64, b: i64) -> Vec<Value> {
    vec![Value::Integer(a as i32), Value::Integer(b as i32)]
}

/// `t(a int not null, b int)` with `ROWS` rows `(i, i % 100)`, no index.
fn loaded() -> (Database, Arc<Table>) {
    let db = Database::open(Options::default()).expect("open");
    let t = db
        .create_table(
            TableDef::new("t").column_not_null("a", DataType::Integer).column("b", DataType::Integer),
        )
        .expect("create");
    for chunk in 0..10 {
        let from = chunk * ROWS / 10;
        db.run(Isolation::Snapshot, 1, |txn| {
            (from..from + ROWS / 10).try_for_each(|i| txn.insert(&t, pair(i, i % 100)))
        })
        .expect("load");
    }
    (db, t)
}

/// A row as `(a, b)`.
type Key = (i64, Option<i64>);

fn key(r: &Row<'_>) -> Key {
    (r.int(0).expect("a"), r.int(1))
}

/// The rows `scan_where` gives for `pred`, with the rows it skipped, next
/// to the plain scan's rows that pass `pred`.
fn both(txn: &Transaction, t: &Arc<Table>, pred: fn(&Row<'_>) -> bool) -> (Vec<Key>, u64, Vec<Key>) {
    let (mut rows, mut skipped) = (Vec::new(), 0);
    for s in txn.scan_where(t, pred).expect("scan_where") {
        match s {
            Scanned::Row(r) => rows.push(key(&r)),
            Scanned::Skipped(n) => skipped += n,
        }
    }
    let plain = txn.scan(t).expect("scan").filter(|r| pred(r)).map(|r| key(&r)).collect();
    (rows, skipped, plain)
}

fn sevens(r: &Row<'_>) -> bool {
    r.int(0).is_some_and(|a| a % 7 == 3)
}

#[test]
fn equals_the_plain_scan_under_every_isolation_level() {
    let (db, t) = loaded();
    for iso in [Isolation::ReadCommitted, Isolation::Snapshot, Isolation::Serializable] {
        let txn = db.begin(iso).expect("begin");
        let (rows, skipped, plain) = both(&txn, &t, sevens);
        assert_eq!(rows, plain, "{iso:?}: same rows in the same order");
        assert_eq!(rows.len() as i64, (0..ROWS).filter(|a| a % 7 == 3).count() as i64);
        assert_eq!(
            rows.len() as u64 + skipped,
            ROWS as u64,
            "{iso:?}: every visible row is either given or skipped"
        );
        let (none, skipped, _) = both(&txn, &t, |_| false);
        assert!(none.is_empty());
        assert_eq!(skipped, ROWS as u64);
        txn.commit().expect("commit");
    }
}

#[test]
fn sees_its_snapshot_and_its_own_writes_only() {
    let (db, t) = loaded();
    let reader = db.begin(Isolation::Snapshot).expect("reader");
    // A writer changes rows after the reader's snapshot and commits; a
    // second writer's changes stay uncommitted.
    db.run(Isolation::Snapshot, 1, |txn| {
        for r in txn.scan(&t)?.filter(|r| r.int(0).is_some_and(|a| a % 1000 == 3)).collect::<Vec<_>>() {
            txn.delete(&r)?;
        }
        txn.insert(&t, pair(ROWS + 3, 0))
    })
    .expect("committed writer");
    let open = db.begin(Isolation::Snapshot).expect("open writer");
    for r in
        open.scan(&t).expect("scan").filter(|r| r.int(0).is_some_and(|a| a % 1000 == 10)).collect::<Vec<_>>()
    {
        open.update(&r, pair(r.int(0).expect("a") + 7, -1)).expect("update");
    }
    open.insert(&t, pair(ROWS + 5, -1)).expect("insert");

    let (rows, _, plain) = both(&reader, &t, sevens);
    assert_eq!(rows, plain);
    assert_eq!(rows.len(), (0..ROWS).filter(|a| a % 7 == 3).count(), "the reader's snapshot, nothing since");
    assert!(rows.iter().any(|&(a, _)| a == 3), "a row deleted after the snapshot is still seen");

    let (rows, _, plain) = both(&open, &t, sevens);
    assert_eq!(rows, plain, "the writer's own view");
    assert!(rows.contains(&(17, Some(-1))), "its own update is seen");
    assert!(rows.contains(&(ROWS + 5, Some(-1))), "its own insert is seen");
    assert!(!rows.iter().any(|&(a, _)| a == 3), "the committed delete is seen");
    assert!(!rows.contains(&(10, Some(10))), "the row it replaced is not");

    let fresh = db.begin(Isolation::ReadCommitted).expect("fresh");
    let (rows, _, plain) = both(&fresh, &t, |r| r.int(1) == Some(-1));
    assert_eq!(rows, plain);
    assert!(rows.is_empty(), "uncommitted writes are invisible to others");
    open.abort();
}

#[test]
fn a_consumer_may_stop_early() {
    let (db, t) = loaded();
    let txn = db.begin(Isolation::Snapshot).expect("begin");
    let first: Vec<_> = txn
        .scan_where(&t, sevens)
        .expect("scan_where")
        .filter_map(|s| match s {
            Scanned::Row(r) => Some(key(&r)),
            Scanned::Skipped(_) => None,
        })
        .take(5)
        .collect();
    let plain: Vec<_> = txn.scan(&t).expect("scan").filter(sevens).map(|r| key(&r)).take(5).collect();
    assert_eq!(first, plain);
}
