//! The memory limit: past it inserts and updates fail with 53200, while
//! reads, deletes and rollbacks go on and the process stops growing.
//!
//! The limit is on the whole process's resident memory, so this test has a
//! binary of its own (nothing else runs beside it).

use centum_engine::{Database, Error, IndexDef, Isolation, Options, TableDef};
use centum_types::{DataType, Value};

#[test]
fn past_the_memory_limit_writes_fail_cleanly_and_the_rest_goes_on() {
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
    assert!(refused.to_string().contains("max_memory"), "{refused}");
    // It refused near the limit: no more than the headroom and a check
    // interval's worth of rows went in.
    let rows_at_most = (headroom + centum_engine::memory::CHECK_EVERY) as i64 / 4000 + 1000;
    assert!(committed <= rows_at_most, "{committed} rows of 4 kB under {headroom} bytes of headroom");
    let rss = centum_engine::memory::resident_bytes().unwrap();
    assert!(rss < start + headroom + headroom / 2, "resident {rss} grew past the limit {}", start + headroom);
    // Reads and deletes go on.
    let n = db.run(Isolation::Snapshot, 1, |txn| Ok(txn.scan(&t)?.count())).unwrap();
    assert_eq!(n as i64, committed);
    db.run(Isolation::Snapshot, 1, |txn| {
        for i in 0..committed.min(5000) {
            if let Some(r) = txn.get(&t, "blobs_pkey", &[Value::BigInt(i)])? {
                txn.delete(&r)?;
            }
        }
        Ok(())
    })
    .unwrap();
    // Updates are refused like inserts.
    let e = db
        .run(Isolation::Snapshot, 1, |txn| {
            for _ in 0..200 {
                let r = txn.get(&t, "blobs_pkey", &[Value::BigInt(committed - 1)])?.expect("row");
                txn.update(&r, vec![Value::BigInt(committed - 1), Value::Text("y".repeat(4000))])?;
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.sqlstate(), "53200");
}
