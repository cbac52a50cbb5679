//! The memory limit: past it inserts and updates fail with 53200, while
//! reads, deletes and rollbacks go on and the process stops growing.
//!
//! The limit is on the whole process's resident memory, so these tests
//! have a binary of their own and run one at a time: one test's
//! allocations and frees would move the other's resident set.

use centum_engine::{Database, Error, IndexDef, Isolation, Options, TableDef};
use centum_types::{DataType, Value};
use std::sync::Mutex;

/// Held by each test for its whole run.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn past_the_memory_limit_writes_fail_cleanly_and_the_rest_goes_on() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(start) = centum_engine::memory::resident_bytes() else {
        eprintln!("skipped: this system does not report resident memory");
        return;
    };
    let headroom = 96 << 20;
    let db = Database::open(Options { memory_limit: Some(start + headroom), ..Default::default() }).unwrap();
    let t = db
        .create_table(
            TableDef::new("blobs")
                .column_not_null("id", DataType::BigInt)
                .column_not_null("body", DataType::Text)
                .index(IndexDef::hash("blobs_pkey", &["id"], 1 << 16).unique()),
        )
        .unwrap();
    let body = "x".repeat(4000);
    // One transaction per 1,000 rows until the limit refuses one.
    let mut committed = 0i64;
    let refused = loop {
        let txn = db.begin(Isolation::Snapshot).unwrap();
        let mut failure = None;
        for i in 0..1000 {
            if let Err(e) = txn.insert(&t, vec![Value::BigInt(committed + i), Value::Text(body.clone())]) {
                failure = Some(e);
                break;
            }
        }
        match failure {
            Some(e) => {
                txn.abort();
                break e;
            }
            None => {
                txn.commit().unwrap();
                committed += 1000;
            }
        }
        assert!(committed < 1_000_000, "the limit never refused a row");
    };
    assert!(matches!(refused, Error::OutOfMemory { .. }), "{refused:?}");
    assert_eq!(refused.sqlstate(), "53200");
    assert!(refused.to_string().contains("memory_limit"), "{refused}");
    // It refused near the limit: no more than the headroom and a check
    // interval's worth of rows went in.
    let rows_at_most = (headroom + centum_engine::memory::CHECK_EVERY) as i64 / 4000 + 1000;
    assert!(committed <= rows_at_most, "{committed} rows of 4 kB under {headroom} bytes of headroom");
    let rss = centum_engine::memory::resident_bytes().unwrap();
    assert!(rss < start + headroom + headroom / 2, "resident {rss} grew past the limit {}", start + headroom);
    // Reads and deletes go on.
    let n = db.run(Isolation::Snapshot, 1, |txn| Ok(txn.scan(&t)?.count())).unwrap();
    assert_eq!(n as i64, committed);
    eprintln!(
        "DEBUG committed {committed} resident {} limit {}",
        centum_engine::memory::resident_bytes().unwrap(),
        start + headroom
    );
    // Updates are refused like inserts. The aborted transaction's rows
    // were freed, which is room again (see `memory::in_use`), so the
    // updates may take up to that much before they are refused.
    let e = db
        .run(Isolation::Snapshot, 1, |txn| {
            for _ in 0..5000 {
                let r = txn.get(&t, "blobs_pkey", &[Value::BigInt(committed - 1)])?.expect("row");
                txn.update(&r, vec![Value::BigInt(committed - 1), Value::Text("y".repeat(4000))])?;
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.sqlstate(), "53200");
    // Deletes go on, and what they free is room again (see
    // `memory::in_use`).
    db.run(Isolation::Snapshot, 1, |txn| {
        for i in 0..committed.min(5000) {
            if let Some(r) = txn.get(&t, "blobs_pkey", &[Value::BigInt(i)])? {
                txn.delete(&r)?;
            }
        }
        Ok(())
    })
    .unwrap();
    db.collect_garbage();
    db.run(Isolation::Snapshot, 1, |txn| {
        for i in 0..1000 {
            txn.insert(&t, vec![Value::BigInt(committed + i), Value::Text(body.clone())])?;
        }
        Ok(())
    })
    .expect("the deleted rows' memory takes new ones");
}

/// A hash index's bucket array counts against the limit when the index is
/// made: rows land all over it, so a few thousand rows would make the whole
/// array resident at once, far past the limit before any check could see
/// it. A bucket count that does not fit is refused at CREATE; one that
/// fits is made.
#[test]
fn bucket_arrays_that_do_not_fit_are_refused_when_made() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let Some(start) = centum_engine::memory::resident_bytes() else {
        eprintln!("skipped: this system does not report resident memory");
        return;
    };
    let limit = start + (256 << 20);
    let db = Database::open(Options { memory_limit: Some(limit), ..Default::default() }).unwrap();
    let table = |name: &str, buckets: u64| {
        TableDef::new(name)
            .column_not_null("id", DataType::BigInt)
            .index(IndexDef::hash(&format!("{name}_pkey"), &["id"], buckets).unique())
    };
    // 2^30 buckets are 8 GiB.
    let e = db.create_table(table("huge", 1 << 30)).unwrap_err();
    assert_eq!(e.sqlstate(), "53200", "{e}");
    assert!(e.to_string().contains("hash index \"huge_pkey\" takes 8GB"), "{e}");
    assert!(db.table("huge").is_err(), "a refused table does not exist");
    let t = db.create_table(table("fits", 1 << 20)).unwrap();
    let e = db.create_index("fits", IndexDef::hash("fits_id_huge", &["id"], 1 << 30)).unwrap_err();
    assert_eq!(e.sqlstate(), "53200", "{e}");
    db.create_index("fits", IndexDef::hash("fits_id_small", &["id"], 1 << 10)).unwrap();
    db.run(Isolation::Snapshot, 1, |txn| txn.insert(&t, vec![Value::BigInt(1)]).map(|_| ())).unwrap();
    let rss = centum_engine::memory::resident_bytes().unwrap();
    assert!(rss < limit, "resident {rss} past the limit {limit}");
}
