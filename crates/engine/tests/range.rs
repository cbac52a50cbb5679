//! Range indexes through the engine's API: scans against a `BTreeMap`
//! model, phantoms under SERIALIZABLE and SNAPSHOT, unique keys, NULL and
//! descending order, index builds under load, garbage collection, and a
//! concurrent stress with invariant checks.

use centum_engine::{
    Database, Direction, Error, IndexDef, Isolation, KeyRange, Options, Row, Table, TableDef,
};
use centum_types::{DataType, Value};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;

fn manual_gc() -> Database {
    Database::open(Options { gc_interval: None, ..Options::default() }).expect("open")
}

/// `t(a int not null, b bigint, v text)` with a unique range index on
/// (a, b) and a non-unique one on v.
fn table(db: &Database) -> Arc<Table> {
    db.create_table(
        TableDef::new("t")
            .column_not_null("a", DataType::Integer)
            .column("b", DataType::BigInt)
            .column("v", DataType::Text)
            .index(IndexDef::range("t_ab", &["a", "b"]).unique())
            .index(IndexDef::range("t_v", &["v"])),
    )
    .expect("create")
}

fn ab(r: &Row<'_>) -> (i64, Option<i64>) {
    (r.int(0).expect("a"), r.int(1))
}

fn scan(db: &Database, t: &Arc<Table>, index: &str, r: &KeyRange, dir: Direction) -> Vec<Vec<Value>> {
    db.run(Isolation::Snapshot, 1, |txn| Ok(txn.range(t, index, r, dir)?.map(|r| r.values()).collect()))
        .expect("scan")
}

#[derive(Debug, Clone)]
enum Op {
    Insert(i64, i64),
    Delete(usize),
    Update(usize, i64),
    Scan(Option<i64>, Bound<i64>, Bound<i64>, bool, Option<usize>),
}

fn bound() -> impl Strategy<Value = Bound<i64>> {
    prop_oneof![
        Just(Bound::Unbounded),
        (-2i64..12).prop_map(Bound::Included),
        (-2i64..12).prop_map(Bound::Excluded),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0i64..4, 0i64..10).prop_map(|(a, b)| Op::Insert(a, b)),
        2 => any::<usize>().prop_map(Op::Delete),
        2 => (any::<usize>(), 0i64..10).prop_map(|(i, b)| Op::Update(i, b)),
        3 => (proptest::option::of(0i64..4), bound(), bound(), any::<bool>(), proptest::option::of(1usize..4))
            .prop_map(|(a, l, u, back, limit)| Op::Scan(a, l, u, back, limit)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Inserts, deletes, key-changing updates and scans (prefix + bounds,
    /// both directions, with and without a limit) agree with a `BTreeMap`;
    /// garbage collection runs between steps and never loses a live entry.
    #[test]
    fn scans_match_a_btreemap(ops in proptest::collection::vec(op(), 1..120)) {
        let db = manual_gc();
        let t = table(&db);
        let mut model: BTreeMap<(i64, i64), String> = BTreeMap::new();
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Insert(a, b) => {
                    let v = format!("v{step}");
                    let r = db.run(Isolation::Snapshot, 1, |txn| {
                        txn.insert(&t, vec![Value::Integer(a as i32), Value::BigInt(b), Value::Text(v.clone())])
                    });
                    match r {
                        Ok(()) => prop_assert!(model.insert((a, b), v).is_none()),
                        Err(Error::UniqueViolation { .. }) => prop_assert!(model.contains_key(&(a, b))),
                        Err(e) => panic!("{e}"),
                    }
                }
                Op::Delete(i) | Op::Update(i, _) if model.is_empty() => { let _ = i; }
                Op::Delete(i) => {
                    let k = *model.keys().nth(i % model.len()).expect("key");
                    db.run(Isolation::Snapshot, 1, |txn| {
                        let row = txn.get(&t, "t_ab", &[Value::Integer(k.0 as i32), Value::BigInt(k.1)])?.expect("row");
                        txn.delete(&row).map(|_| ())
                    }).expect("delete");
                    model.remove(&k);
                }
                Op::Update(i, nb) => {
                    let k = *model.keys().nth(i % model.len()).expect("key");
                    let r = db.run(Isolation::Snapshot, 1, |txn| {
                        let row = txn.get(&t, "t_ab", &[Value::Integer(k.0 as i32), Value::BigInt(k.1)])?.expect("row");
                        let mut vals = row.values();
                        vals[1] = Value::BigInt(nb);
                        txn.update(&row, vals).map(|_| ())
                    });
                    match r {
                        Ok(()) => {
                            let v = model.remove(&k).expect("old");
                            model.insert((k.0, nb), v);
                        }
                        Err(Error::UniqueViolation { .. }) => prop_assert!(nb != k.1 && model.contains_key(&(k.0, nb))),
                        Err(e) => panic!("{e}"),
                    }
                }
                Op::Scan(a, lower, upper, back, limit) => {
                    let dir = if back { Direction::Backward } else { Direction::Forward };
                    let to_val = |b: &Bound<i64>| match b {
                        Bound::Included(x) => Bound::Included(Value::BigInt(*x)),
                        Bound::Excluded(x) => Bound::Excluded(Value::BigInt(*x)),
                        Bound::Unbounded => Bound::Unbounded,
                    };
                    // With a leading `a` the bounds apply to b, otherwise to a.
                    let (range, want): (KeyRange, Vec<(i64, i64)>) = match a {
                        Some(a) => (
                            KeyRange { eq: vec![Value::Integer(a as i32)], lower: to_val(&lower), upper: to_val(&upper) },
                            model.keys().filter(|k| k.0 == a && std::ops::RangeBounds::contains(&(lower, upper), &k.1)).copied().collect(),
                        ),
                        None => (
                            KeyRange::between(to_val(&lower), to_val(&upper)),
                            model.keys().filter(|k| std::ops::RangeBounds::contains(&(lower, upper), &k.0)).copied().collect(),
                        ),
                    };
                    let mut want = want;
                    if back {
                        want.reverse();
                    }
                    if let Some(n) = limit {
                        want.truncate(n);
                    }
                    let got = db.run(Isolation::Snapshot, 1, |txn| {
                        let it = txn.range(&t, "t_ab", &range, dir)?;
                        Ok(it.take(limit.unwrap_or(usize::MAX)).map(|r| { let (a, b) = ab(&r); (a, b.expect("b")) }).collect::<Vec<_>>())
                    }).expect("scan");
                    prop_assert_eq!(got, want);
                }
            }
            if step % 7 == 0 {
                db.collect_garbage();
            }
        }
        // The text index holds exactly the live rows, in text order.
        let mut texts: Vec<String> = model.values().cloned().collect();
        texts.sort();
        let got: Vec<String> = scan(&db, &t, "t_v", &KeyRange::prefix(vec![]), Direction::Forward)
            .into_iter()
            .map(|r| match &r[2] { Value::Text(s) => s.clone(), v => panic!("{v:?}") })
            .collect();
        prop_assert_eq!(got, texts);
        db.collect_garbage();
        let stats = db.stats();
        let ix = &stats.tables[0].indexes;
        prop_assert!(ix.iter().all(|i| i.entries == model.len() as u64), "{:?}", ix);
    }
}

/// A phantom: T1 scans a range and writes elsewhere, T2 inserts into the
/// range and commits first. SERIALIZABLE must fail T1's commit; SNAPSHOT
/// lets it commit (the anomaly SNAPSHOT permits).
#[test]
fn phantoms_are_prevented_under_serializable_only() {
    for (isolation, must_fail) in [(Isolation::Serializable, true), (Isolation::Snapshot, false)] {
        let db = manual_gc();
        let t = table(&db);
        db.run(Isolation::Snapshot, 1, |txn| {
            for b in [1, 5, 9] {
                txn.insert(&t, vec![Value::Integer(1), Value::BigInt(b), Value::Text("x".into())])?;
            }
            Ok(())
        })
        .expect("load");
        let t1 = db.begin(isolation).expect("t1");
        let range = KeyRange {
            eq: vec![Value::Integer(1)],
            lower: Bound::Included(Value::BigInt(2)),
            upper: Bound::Excluded(Value::BigInt(9)),
        };
        let seen: Vec<_> =
            t1.range(&t, "t_ab", &range, Direction::Forward).expect("scan").map(|r| ab(&r)).collect();
        assert_eq!(seen, vec![(1, Some(5))]);
        // T2 puts a row into the range T1 read.
        db.run(Isolation::Snapshot, 1, |txn| {
            txn.insert(&t, vec![Value::Integer(1), Value::BigInt(3), Value::Text("phantom".into())])
        })
        .expect("t2");
        t1.insert(&t, vec![Value::Integer(2), Value::BigInt(0), Value::Text("t1".into())]).expect("t1 write");
        let r = t1.commit();
        if must_fail {
            assert!(matches!(r, Err(Error::Serialization(_))), "{r:?}");
        } else {
            r.expect("snapshot commits");
        }
    }
}

/// A row leaving the scanned range (deleted, or its key moved) is caught
/// too, and a write outside the range does not cause a failure.
#[test]
fn serializable_range_reads_detect_removals_but_not_unrelated_writes() {
    let db = manual_gc();
    let t = table(&db);
    db.run(Isolation::Snapshot, 1, |txn| {
        for b in 0..10 {
            txn.insert(&t, vec![Value::Integer(1), Value::BigInt(b), Value::Text("x".into())])?;
        }
        Ok(())
    })
    .expect("load");
    let range = KeyRange {
        eq: vec![Value::Integer(1)],
        lower: Bound::Included(Value::BigInt(0)),
        upper: Bound::Included(Value::BigInt(4)),
    };
    for (what, write_b, must_fail) in [("moved out", 2, true), ("untouched", 8, false)] {
        let t1 = db.begin(Isolation::Serializable).expect("t1");
        let n = t1.range(&t, "t_ab", &range, Direction::Backward).expect("scan").count();
        assert!(n > 0);
        db.run(Isolation::Snapshot, 1, |txn| {
            let row = txn.get(&t, "t_ab", &[Value::Integer(1), Value::BigInt(write_b)])?.expect("row");
            let mut v = row.values();
            v[1] = Value::BigInt(100 + write_b);
            txn.update(&row, v).map(|_| ())
        })
        .expect("t2");
        t1.insert(&t, vec![Value::Integer(3), Value::BigInt(write_b), Value::Text("t1".into())])
            .expect("t1 write");
        let r = t1.commit();
        assert_eq!(r.is_err(), must_fail, "{what}: {r:?}");
    }
}

/// Unique range indexes reject a duplicate; NULLs are distinct.
#[test]
fn unique_range_index_rejects_duplicates_but_not_nulls() {
    let db = manual_gc();
    let t = table(&db);
    let row = |b: Option<i64>| vec![Value::Integer(7), b.map_or(Value::Null, Value::BigInt), Value::Null];
    db.run(Isolation::ReadCommitted, 1, |txn| txn.insert(&t, row(Some(1)))).expect("first");
    let dup = db.run(Isolation::ReadCommitted, 1, |txn| txn.insert(&t, row(Some(1))));
    assert!(matches!(dup, Err(Error::UniqueViolation { .. })), "{dup:?}");
    assert_eq!(dup.unwrap_err().sqlstate(), "23505");
    for _ in 0..3 {
        db.run(Isolation::ReadCommitted, 1, |txn| txn.insert(&t, row(None))).expect("nulls are distinct");
    }
    // A deleted key can be inserted again.
    db.run(Isolation::ReadCommitted, 1, |txn| {
        let r = txn.get(&t, "t_ab", &[Value::Integer(7), Value::BigInt(1)])?.expect("row");
        txn.delete(&r).map(|_| ())
    })
    .expect("delete");
    db.run(Isolation::ReadCommitted, 1, |txn| txn.insert(&t, row(Some(1)))).expect("reinsert");
}

/// NULLs sort last ascending and first descending; a descending key
/// column reverses the order; bounds never select NULLs; MIN and MAX come
/// from the first row of a forward or backward scan.
#[test]
fn nulls_descending_columns_and_min_max() {
    let db = manual_gc();
    let t = db
        .create_table(
            TableDef::new("d")
                .column("x", DataType::Integer)
                .column_not_null("y", DataType::Text)
                .index(IndexDef::range("d_x", &["x"]))
                .index(IndexDef::range("d_yx", &["y", "x"]).descending(&[false, true])),
        )
        .expect("create");
    db.run(Isolation::Snapshot, 1, |txn| {
        for (x, y) in
            [(Some(3), "b"), (None, "a"), (Some(-1), "a"), (Some(10), "a"), (None, "b"), (Some(0), "b")]
        {
            txn.insert(&t, vec![x.map_or(Value::Null, Value::Integer), Value::Text(y.into())])?;
        }
        Ok(())
    })
    .expect("load");
    let xs = |r: &KeyRange, index: &str, dir| -> Vec<Option<i64>> {
        db.run(Isolation::Snapshot, 1, |txn| Ok(txn.range(&t, index, r, dir)?.map(|r| r.int(0)).collect()))
            .expect("scan")
    };
    let all = KeyRange::prefix(vec![]);
    assert_eq!(xs(&all, "d_x", Direction::Forward), vec![Some(-1), Some(0), Some(3), Some(10), None, None]);
    assert_eq!(xs(&all, "d_x", Direction::Backward), vec![None, None, Some(10), Some(3), Some(0), Some(-1)]);
    let pos = KeyRange::between(Bound::Excluded(Value::Integer(0)), Bound::Unbounded);
    assert_eq!(xs(&pos, "d_x", Direction::Forward), vec![Some(3), Some(10)]);
    assert_eq!(xs(&pos, "d_x", Direction::Backward).first(), Some(&Some(10)), "MAX(x) WHERE x > 0");
    let le3 = KeyRange::between(Bound::Unbounded, Bound::Included(Value::Integer(3)));
    assert_eq!(xs(&le3, "d_x", Direction::Forward), vec![Some(-1), Some(0), Some(3)]);
    // y ascending, x descending with NULLs first.
    let a = KeyRange::prefix(vec![Value::Text("a".into())]);
    assert_eq!(xs(&a, "d_yx", Direction::Forward), vec![None, Some(10), Some(-1)]);
    let b_lt_3 = KeyRange {
        eq: vec![Value::Text("b".into())],
        lower: Bound::Unbounded,
        upper: Bound::Excluded(Value::Integer(3)),
    };
    assert_eq!(xs(&b_lt_3, "d_yx", Direction::Forward), vec![Some(0)]);
    // Equality look-ups work through range indexes too.
    let n = db
        .run(Isolation::Snapshot, 1, |txn| {
            Ok(txn.lookup(&t, "d_yx", &[Value::Text("b".into()), Value::Integer(3)])?.len())
        })
        .expect("lookup");
    assert_eq!(n, 1);
    // A hash index cannot serve a range scan.
    let h = db.create_table(TableDef::new("h").column("k", DataType::Integer).index(IndexDef::hash(
        "h_k",
        &["k"],
        16,
    )));
    let h = h.expect("create");
    let err =
        db.run(Isolation::Snapshot, 1, |txn| txn.range(&h, "h_k", &all, Direction::Forward).map(|_| ()));
    assert_eq!(err.map_err(|e| e.sqlstate()), Err("0A000"));
}

/// A range index created on a populated table while writers keep
/// inserting and deleting ends up with exactly the live rows.
#[test]
fn index_build_under_concurrent_writes() {
    let db = Database::open(Options::default()).expect("open");
    let t = db
        .create_table(
            TableDef::new("k")
                .column_not_null("id", DataType::BigInt)
                .column_not_null("g", DataType::Integer)
                .index(IndexDef::hash("k_pkey", &["id"], 1 << 14).unique()),
        )
        .expect("create");
    db.run(Isolation::Snapshot, 1, |txn| {
        for i in 0..5000 {
            txn.insert(&t, vec![Value::BigInt(i), Value::Integer((i % 50) as i32)])?;
        }
        Ok(())
    })
    .expect("load");
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, t, stop) = (db.clone(), t.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 5000i64;
            while !stop.load(SeqCst) {
                db.run(Isolation::ReadCommitted, 100, |txn| {
                    txn.insert(&t, vec![Value::BigInt(i), Value::Integer((i % 50) as i32)])?;
                    if let Some(r) = txn.get(&t, "k_pkey", &[Value::BigInt(i - 4000)])? {
                        txn.delete(&r)?;
                    }
                    Ok(())
                })
                .expect("writer");
                i += 1;
            }
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(20));
    db.create_index("k", IndexDef::range("k_g", &["g", "id"])).expect("build");
    std::thread::sleep(std::time::Duration::from_millis(20));
    stop.store(true, SeqCst);
    writer.join().expect("writer");
    let (by_scan, by_index) = db
        .run(Isolation::Snapshot, 1, |txn| {
            let mut all: Vec<(i64, i64)> =
                txn.scan(&t)?.map(|r| (r.int(1).expect("g"), r.int(0).expect("id"))).collect();
            all.sort();
            let ix: Vec<(i64, i64)> = txn
                .range(&t, "k_g", &KeyRange::prefix(vec![]), Direction::Forward)?
                .map(|r| (r.int(1).expect("g"), r.int(0).expect("id")))
                .collect();
            Ok((all, ix))
        })
        .expect("compare");
    assert_eq!(by_index, by_scan);
}

/// Writers move keys around (each transfer deletes a key and inserts
/// another, keeping the count fixed) while readers scan ranges in both
/// directions under SNAPSHOT: every scan is strictly ordered, has no key
/// twice, and sees exactly the fixed count.
#[test]
fn concurrent_moves_keep_every_snapshot_consistent() {
    const KEYS: i64 = 2000;
    let db = Database::open(Options::default()).expect("open");
    let t = db
        .create_table(
            TableDef::new("m")
                .column_not_null("k", DataType::BigInt)
                .index(IndexDef::range("m_k", &["k"]).unique()),
        )
        .expect("create");
    db.run(Isolation::Snapshot, 1, |txn| {
        for k in 0..KEYS {
            txn.insert(&t, vec![Value::BigInt(k * 2)])?;
        }
        Ok(())
    })
    .expect("load");
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (db, t) = (db.clone(), t.clone());
            std::thread::spawn(move || {
                let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ w;
                for _ in 0..3000 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let from = (x % (4 * KEYS as u64)) as i64;
                    let to = ((x >> 20) % (4 * KEYS as u64)) as i64;
                    let r = db.run(Isolation::Snapshot, 50, |txn| {
                        let lo = KeyRange::between(Bound::Included(Value::BigInt(from)), Bound::Unbounded);
                        let Some(row) = txn.range(&t, "m_k", &lo, Direction::Forward)?.next() else {
                            return Ok(());
                        };
                        if txn.get(&t, "m_k", &[Value::BigInt(to)])?.is_some() {
                            return Ok(());
                        }
                        txn.delete(&row)?;
                        txn.insert(&t, vec![Value::BigInt(to)])
                    });
                    match r {
                        Ok(()) | Err(Error::Serialization(_)) | Err(Error::UniqueViolation { .. }) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (db, t, stop) = (db.clone(), t.clone(), stop.clone());
            std::thread::spawn(move || {
                let dir = if r == 0 { Direction::Forward } else { Direction::Backward };
                let mut scans = 0;
                while !stop.load(SeqCst) || scans == 0 {
                    let keys: Vec<i64> = db
                        .run(Isolation::Snapshot, 1, |txn| {
                            Ok(txn
                                .range(&t, "m_k", &KeyRange::prefix(vec![]), dir)?
                                .map(|r| r.int(0).expect("k"))
                                .collect())
                        })
                        .expect("scan");
                    assert_eq!(keys.len() as i64, KEYS, "a snapshot lost or gained a row");
                    let ordered = match dir {
                        Direction::Forward => keys.windows(2).all(|w| w[0] < w[1]),
                        Direction::Backward => keys.windows(2).all(|w| w[0] > w[1]),
                    };
                    assert!(ordered, "keys out of order or repeated");
                    scans += 1;
                }
                scans
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    stop.store(true, SeqCst);
    for r in readers {
        assert!(r.join().expect("reader") > 0);
    }
    db.collect_garbage();
    let s = db.stats();
    assert_eq!(s.tables[0].indexes[0].entries, KEYS as u64, "collection left stale entries: {s:?}");
}

/// An index dropped while a SERIALIZABLE transaction that scanned it is
/// still open: rows are deleted and collected meanwhile, and the
/// transaction's commit-time validation walks the dropped index. No
/// version it reaches may have been freed (run under `make asan` to see
/// a use after free); the commit fails because its reads changed.
#[test]
fn dropping_an_index_under_a_serializable_reader_frees_nothing_it_walks() {
    let db = manual_gc();
    let t = table(&db);
    db.run(Isolation::Snapshot, 1, |txn| {
        for b in 0..200 {
            txn.insert(&t, vec![Value::Integer(1), Value::BigInt(b), Value::Text(format!("r{b}"))])?;
        }
        Ok(())
    })
    .expect("load");
    let t1 = db.begin(Isolation::Serializable).expect("t1");
    let n = t1.range(&t, "t_v", &KeyRange::prefix(vec![]), Direction::Forward).expect("scan").count();
    assert_eq!(n, 200);
    db.drop_index("t_v").expect("drop");
    assert!(t.index("t_v").is_err(), "a dropped index is gone at once");
    db.run(Isolation::Snapshot, 1, |txn| {
        let all: Vec<_> = txn.scan(&t)?.collect();
        for r in all {
            txn.delete(&r)?;
        }
        Ok(())
    })
    .expect("delete all");
    db.collect_garbage();
    t1.insert(&t, vec![Value::Integer(9), Value::BigInt(9), Value::Null]).expect("t1 write");
    let r = t1.commit();
    assert!(matches!(r, Err(Error::Serialization(_))), "{r:?}");
    // The name is free at once (the retiring index keeps only its slot).
    db.create_index("t", IndexDef::range("t_v", &["v"])).expect("recreate");
}

/// `u(id bigint, g int, v bigint)` with a hash primary key, loaded with
/// ids 0..n (v = id).
fn loaded(db: &Database, n: i64) -> Arc<Table> {
    let t = db
        .create_table(
            TableDef::new("u")
                .column_not_null("id", DataType::BigInt)
                .column_not_null("g", DataType::Integer)
                .column("v", DataType::BigInt)
                .index(IndexDef::hash("u_pkey", &["id"], 1 << 14).unique()),
        )
        .expect("create");
    db.run(Isolation::Snapshot, 1, |txn| {
        (0..n).try_for_each(|i| {
            txn.insert(&t, vec![Value::BigInt(i), Value::Integer((i % 50) as i32), Value::BigInt(i)])
        })
    })
    .expect("load");
    t
}

/// Versions and range-index entries of `t` once every old version is
/// collected: equal when the index holds no entry of a freed version.
fn settled(db: &Database, t: &Table, index: &str) -> (u64, u64) {
    while db.collect_garbage() > 0 {}
    let s = t.stats();
    let entries = s.indexes.iter().find(|i| i.name == index).expect("index").entries;
    (s.versions, entries)
}

/// A range index built over rows that writers keep replacing, with the
/// collector running, enters the existing rows as they are: it finds
/// exactly the live rows, no row is rewritten or logged for it, and once
/// the old versions are collected it holds no entry of a freed one.
#[test]
fn a_range_index_over_existing_rows_enters_them_as_they_are() {
    let db = Database::open(Options {
        gc_interval: Some(std::time::Duration::from_millis(1)),
        ..Options::default()
    })
    .expect("open");
    let t = loaded(&db, 20_000);
    let versions_before = t.stats().versions;
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (db, t, stop) = (db.clone(), t.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut i = w;
                while !stop.load(SeqCst) {
                    db.run(Isolation::ReadCommitted, 100, |txn| {
                        // Move an old row to another group, and delete and
                        // insert one beside it.
                        let id = (i * 7919) % 20_000;
                        if let Some(r) = txn.get(&t, "u_pkey", &[Value::BigInt(id)])? {
                            txn.update_with(&r, |old| {
                                let mut new = old.to_vec();
                                new[1] = Value::Integer(((i % 50) + 50) as i32);
                                Some(new)
                            })?;
                        }
                        let other = 20_000 + (i % 1_000);
                        match txn.get(&t, "u_pkey", &[Value::BigInt(other)])? {
                            Some(r) => {
                                txn.delete(&r)?;
                            }
                            None => txn.insert(
                                &t,
                                vec![Value::BigInt(other), Value::Integer(7), Value::BigInt(other)],
                            )?,
                        }
                        Ok(())
                    })
                    .expect("writer");
                    i += 2;
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(30));
    db.create_index("u", IndexDef::range("u_g", &["g", "id"])).expect("build");
    db.create_index("u", IndexDef::range("u_v", &["v"]).unique()).expect("unique build");
    std::thread::sleep(std::time::Duration::from_millis(30));
    stop.store(true, SeqCst);
    for w in writers {
        w.join().expect("writer");
    }
    let check = |db: &Database| {
        db.run(Isolation::Snapshot, 1, |txn| {
            let mut all: Vec<(i64, i64)> =
                txn.scan(&t)?.map(|r| (r.int(1).expect("g"), r.int(0).expect("id"))).collect();
            all.sort();
            let by_g: Vec<(i64, i64)> = txn
                .range(&t, "u_g", &KeyRange::prefix(vec![]), Direction::Forward)?
                .map(|r| (r.int(1).expect("g"), r.int(0).expect("id")))
                .collect();
            assert_eq!(by_g, all);
            let by_v = txn.range(&t, "u_v", &KeyRange::prefix(vec![]), Direction::Forward)?.count();
            assert_eq!(by_v, all.len());
            Ok(())
        })
        .expect("compare")
    };
    check(&db);
    let (versions, entries) = settled(&db, &t, "u_g");
    assert_eq!(entries, versions, "entries of freed versions left in the index");
    assert_eq!(settled(&db, &t, "u_v").1, versions);
    // The rows that were there before are still the same versions: with
    // nothing rewritten, the table never held twice its rows at once.
    assert!(versions <= versions_before + 1_000, "{versions} versions");
    check(&db);
}

/// A unique range index over duplicate rows fails with 23505 and leaves
/// nothing behind; a writer inserting duplicates while a unique build
/// runs never gets a duplicate past it: either the build fails or the
/// index holds no key twice.
#[test]
fn a_unique_range_build_never_lets_a_duplicate_through() {
    let db = Database::open(Options::default()).expect("open");
    let t = loaded(&db, 5_000);
    let e = db.create_index("u", IndexDef::range("u_g", &["g"]).unique()).expect_err("duplicates");
    assert_eq!(e.sqlstate(), "23505");
    assert_eq!(t.index_names(), vec!["u_pkey".to_string()]);
    for round in 0..20 {
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (db, t, stop) = (db.clone(), t.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut id = 1_000_000 + round * 100_000;
                while !stop.load(SeqCst) {
                    // v duplicates an existing row's v, then goes away.
                    let r = db.run(Isolation::ReadCommitted, 1, |txn| {
                        txn.insert(&t, vec![Value::BigInt(id), Value::Integer(0), Value::BigInt(id % 5_000)])
                    });
                    if r.is_ok() {
                        db.run(Isolation::ReadCommitted, 10, |txn| {
                            let r = txn.get(&t, "u_pkey", &[Value::BigInt(id)])?.expect("inserted");
                            txn.delete(&r).map(drop)
                        })
                        .expect("delete");
                    }
                    id += 1;
                }
            })
        };
        let built = db.create_index("u", IndexDef::range("u_v", &["v"]).unique());
        stop.store(true, SeqCst);
        writer.join().expect("writer");
        match built {
            Ok(()) => {
                let dups = db
                    .run(Isolation::Snapshot, 1, |txn| {
                        let vs: Vec<i64> = txn
                            .range(&t, "u_v", &KeyRange::prefix(vec![]), Direction::Forward)?
                            .map(|r| r.int(2).expect("v"))
                            .collect();
                        Ok(vs.windows(2).filter(|w| w[0] == w[1]).count())
                    })
                    .expect("read");
                assert_eq!(dups, 0);
                db.drop_index("u_v").expect("drop");
            }
            Err(e) => assert_eq!(e.sqlstate(), "23505", "{e}"),
        }
    }
}
