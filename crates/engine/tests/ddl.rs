//! Tables and indexes created and dropped while other transactions run.
//!
//! An index built on a populated table while writers insert, update and
//! delete must end up with exactly the live rows; a dropped table refuses
//! further use with 42P01 without harming the transactions that hold it, and
//! its name is free at once; a unique index build
//! over duplicates fails cleanly; snapshots older than an index don't use it.
//! Schema changes inside a transaction are durable whole or not at all at
//! every crash point, leave nothing behind an abort, make other schema
//! changes wait (within their limits) and never wait for themselves.

use centum_engine::{Database, Error, IndexDef, Isolation, Options, TableDef};
use centum_types::{DataType, Value};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;

fn table(db: &Database, name: &str) -> Arc<centum_engine::Table> {
    db.create_table(
        TableDef::new(name)
            .column_not_null("k", DataType::BigInt)
            .column_not_null("grp", DataType::BigInt)
            .column("note", DataType::Text)
            .index(IndexDef::hash(&format!("{name}_pkey"), &["k"], 1 << 16).unique()),
    )
    .unwrap()
}

fn row(k: i64) -> Vec<Value> {
    vec![Value::BigInt(k), Value::BigInt(k % 997), Value::Text(format!("row {k}"))]
}

#[test]
fn index_built_while_writers_run_covers_exactly_the_live_rows() {
    let db = Database::open(Options::default()).unwrap();
    let t = table(&db, "t");
    db.run(Isolation::Snapshot, 1, |txn| (0..5_000).try_for_each(|k| txn.insert(&t, row(k)))).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (db, t, stop) = (db.clone(), t.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut k = 5_000 + w;
                let mut n = 0u32;
                while !stop.load(SeqCst) && n < 100_000 {
                    n += 1;
                    let r = db.run(Isolation::ReadCommitted, 10, |txn| {
                        txn.insert(&t, row(k))?;
                        // Move an old row to another group, delete another.
                        if let Some(r) = txn.get(&t, "t_pkey", &[Value::BigInt((k * 7919) % 5_000)])? {
                            txn.update_with(&r, |old| {
                                let mut new = old.to_vec();
                                new[1] = Value::BigInt(1_000 + k % 500);
                                Some(new)
                            })?;
                        }
                        if let Some(r) = txn.get(&t, "t_pkey", &[Value::BigInt(k - 1_000)])? {
                            txn.delete(&r)?;
                        }
                        Ok(())
                    });
                    r.unwrap();
                    k += 2;
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(50));
    db.create_index("t", IndexDef::hash("t_grp", &["grp"], 2048)).unwrap();
    db.create_index("t", IndexDef::hash("t_note", &["note"], 1 << 16).unique()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    stop.store(true, SeqCst);
    for w in writers {
        w.join().unwrap();
    }
    let txn = db.begin(Isolation::Snapshot).unwrap();
    let rows: Vec<_> = txn.scan(&t).unwrap().map(|r| r.values()).collect();
    assert!(rows.len() > 1_000);
    let mut by_group = std::collections::BTreeMap::<i64, usize>::new();
    for r in &rows {
        let Value::BigInt(g) = r[1] else { panic!() };
        *by_group.entry(g).or_default() += 1;
        // Every live row is found through the new unique index.
        let found = txn.get(&t, "t_note", &[r[2].clone()]).unwrap().expect("row in t_note");
        assert_eq!(found.values(), *r);
    }
    // Every group's rows, and only those, are found through the new index.
    for (g, n) in by_group {
        let hits = txn.lookup(&t, "t_grp", &[Value::BigInt(g)]).unwrap();
        assert_eq!(hits.len(), n, "group {g}");
    }
    txn.commit().unwrap();
    let stats = t.stats();
    assert_eq!(stats.indexes.len(), 3);
}

#[test]
fn snapshot_older_than_an_index_does_not_use_it() {
    let db = Database::open(Options::default()).unwrap();
    let t = table(&db, "t");
    db.run(Isolation::Snapshot, 1, |txn| txn.insert(&t, row(1))).unwrap();
    let old = db.begin(Isolation::Snapshot).unwrap();
    // The build waits for `old` to finish; run it beside.
    let db2 = db.clone();
    let build = std::thread::spawn(move || db2.create_index("t", IndexDef::hash("t_grp", &["grp"], 8)));
    std::thread::sleep(std::time::Duration::from_millis(50));
    let e = old.lookup(&t, "t_grp", &[Value::BigInt(1)]).unwrap_err();
    assert!(matches!(e, Error::IndexNotReady(_)), "{e:?}");
    old.commit().unwrap();
    build.join().unwrap().unwrap();
    let new = db.begin(Isolation::Snapshot).unwrap();
    assert_eq!(new.lookup(&t, "t_grp", &[Value::BigInt(1)]).unwrap().len(), 1);
}

#[test]
fn unique_index_over_duplicates_fails_and_leaves_no_index() {
    let db = Database::open(Options::default()).unwrap();
    let t = table(&db, "t");
    db.run(Isolation::Snapshot, 1, |txn| (0..2_000).try_for_each(|k| txn.insert(&t, row(k)))).unwrap();
    let e = db.create_index("t", IndexDef::hash("t_grp", &["grp"], 8).unique()).unwrap_err();
    assert_eq!(e.sqlstate(), "23505");
    assert_eq!(t.index_names(), vec!["t_pkey".to_string()]);
    // The rows are all still there, once each.
    let txn = db.begin(Isolation::Snapshot).unwrap();
    assert_eq!(txn.scan(&t).unwrap().count(), 2_000);
}

#[test]
fn dropped_table_fails_cleanly_for_transactions_holding_it() {
    let db = Database::open(Options::default()).unwrap();
    let t = table(&db, "t");
    db.run(Isolation::Snapshot, 1, |txn| txn.insert(&t, row(1))).unwrap();
    let reader = db.begin(Isolation::Snapshot).unwrap();
    db.drop_table("t").unwrap();
    assert!(matches!(db.table("t"), Err(Error::NoSuchTable(_))));
    // The reader's next use of the dropped table fails cleanly ...
    assert_eq!(reader.get(&t, "t_pkey", &[Value::BigInt(1)]).unwrap_err().sqlstate(), "42P01");
    reader.commit().unwrap();
    // ... and a table of the same name can be created again at once.
    let t2 = table(&db, "t");
    let txn = db.begin(Isolation::Snapshot).unwrap();
    assert_eq!(txn.scan(&t2).unwrap().count(), 0);
    assert_eq!(txn.insert(&t, row(2)).unwrap_err().sqlstate(), "42P01");
}

#[test]
fn dropping_an_index_while_readers_use_it() {
    let db = Database::open(Options::default()).unwrap();
    let t = table(&db, "t");
    db.create_index("t", IndexDef::hash("t_grp", &["grp"], 8)).unwrap();
    db.run(Isolation::Snapshot, 1, |txn| (0..1_000).try_for_each(|k| txn.insert(&t, row(k)))).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (db, t, stop) = (db.clone(), t.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut ok = 0;
            while !stop.load(SeqCst) {
                let txn = db.begin(Isolation::Snapshot).unwrap();
                match txn.lookup(&t, "t_grp", &[Value::BigInt(3)]) {
                    Ok(rows) => {
                        assert_eq!(rows.len(), 1);
                        ok += 1;
                    }
                    Err(Error::NoSuchIndex(_)) => {}
                    Err(e) => panic!("{e}"),
                }
            }
            ok
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(20));
    db.drop_index("t_grp").unwrap();
    // Reuse the freed slot with a different key while writers change rows.
    db.create_index("t", IndexDef::hash("t_note", &["note"], 64)).unwrap();
    db.run(Isolation::Snapshot, 1, |txn| {
        for r in txn.scan(&t)?.filter(|r| r.int(0).unwrap_or(0) % 2 == 0).collect::<Vec<_>>() {
            txn.delete(&r)?;
        }
        Ok(())
    })
    .unwrap();
    db.collect_garbage();
    stop.store(true, SeqCst);
    assert!(reader.join().unwrap() > 0);
    let txn = db.begin(Isolation::Snapshot).unwrap();
    assert_eq!(txn.get(&t, "t_note", &[Value::Text("row 5".into())]).unwrap().unwrap().int(0), Some(5));
    assert!(txn.get(&t, "t_note", &[Value::Text("row 4".into())]).unwrap().is_none());
}

#[test]
fn an_index_build_that_times_out_is_gone_now_and_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || Options { gc_interval: None, ..Options::durable(dir.path()) };
    {
        let db = Database::open(opts()).unwrap();
        let t = table(&db, "t");
        db.run(Isolation::Snapshot, 1, |txn| (0..100).try_for_each(|k| txn.insert(&t, row(k)))).unwrap();
        let open = db.begin(Isolation::Snapshot).unwrap();
        open.insert(&t, row(1_000)).unwrap();
        let limits = || centum_engine::WaitLimits {
            lock_timeout: Some(std::time::Duration::from_millis(100)),
            ..Default::default()
        };
        // Twice under the same name: the first one's retiring slot must
        // not be mistaken for the second.
        for _ in 0..2 {
            let e = centum_engine::mvcc::ddl_waits(limits(), || {
                db.create_index("t", IndexDef::range("t_grp", &["grp"]))
            })
            .unwrap_err();
            assert_eq!(e.sqlstate(), "55P03");
            assert_eq!(t.index_names(), vec!["t_pkey".to_string()]);
        }
        open.commit().unwrap();
    }
    let db = Database::open(opts()).unwrap();
    let t = db.table("t").unwrap();
    assert_eq!(t.index_names(), vec!["t_pkey".to_string()], "a failed build came back after the restart");
    db.create_index("t", IndexDef::range("t_grp", &["grp"])).unwrap();
    let txn = db.begin(Isolation::Snapshot).unwrap();
    assert_eq!(txn.scan(&t).unwrap().count(), 101);
}

mod common;

/// What a crash image holds of the schema-changing transaction below:
/// table names, the rows of `fresh`, and the database-wide extra bytes.
fn schema_state(db: &Database) -> (Vec<String>, usize, Vec<u8>) {
    let fresh = db
        .table("fresh")
        .ok()
        .map_or(0, |t| db.run(Isolation::Snapshot, 1, |txn| Ok(txn.scan(&t)?.count())).unwrap());
    (db.table_names(), fresh, db.catalog_extra())
}

/// A transaction that creates a table, fills it, drops another and sets
/// the database-wide extra bytes, while another thread logs catalog images
/// of its own (as a sequence's reservation does): every crash image holds
/// all of the transaction or none of it, and an abort leaves nothing.
#[test]
fn a_schema_change_in_a_transaction_is_durable_whole_or_not_at_all() {
    use centum_engine::storage::SimFs;
    let fs = SimFs::new();
    fs.record_images();
    let db = Database::open(common::sim_options(&fs)).unwrap();
    let base = table(&db, "base");
    db.run(Isolation::Snapshot, 1, |txn| (0..10).try_for_each(|k| txn.insert(&base, row(k)))).unwrap();
    db.set_catalog_extra(b"before".to_vec()).unwrap();
    let before = schema_state(&db);
    for commit in [false, true] {
        let first_image = fs.image_count();
        let txn = db.begin(Isolation::ReadCommitted).unwrap();
        let marks = std::thread::scope(|s| {
            let _act = centum_engine::act_for(Some(txn.id()));
            db.set_catalog_extra(b"after".to_vec()).unwrap();
            let marker = s.spawn(|| {
                // Not a schema change: never waits for the claim, and logs
                // the committed catalog. (The layer above passes both
                // values, and serialises these writes with its own.)
                for i in 0..20 {
                    db.write_catalog_extra(b"after".to_vec(), b"before".to_vec()).unwrap();
                    std::thread::sleep(std::time::Duration::from_millis(i % 3));
                }
            });
            let fresh = table(&db, "fresh");
            for k in 0..50 {
                txn.insert(&fresh, row(k)).unwrap();
            }
            db.create_index("fresh", IndexDef::range("fresh_grp", &["grp"])).unwrap();
            db.drop_table("base").unwrap();
            // The transaction sees its own schema.
            assert_eq!(db.table_names(), vec!["fresh".to_string()]);
            marker.join().unwrap();
            // A checkpoint meanwhile writes the committed catalog into
            // its manifest, not the open transaction's.
            db.checkpoint().unwrap();
            fs.image_count()
        });
        assert!(marks > first_image, "the marks logged nothing");
        if commit {
            txn.commit().unwrap();
            assert_eq!(schema_state(&db), (vec!["fresh".into()], 50, b"after".to_vec()));
        } else {
            txn.abort();
            assert_eq!(schema_state(&db), before, "an abort left schema changes behind");
        }
        for n in first_image..fs.image_count() {
            let image = fs.crash_image(n).unwrap();
            let got = schema_state(&Database::open(common::sim_options(&image)).unwrap());
            let after = (vec!["fresh".to_string()], 50, b"after".to_vec());
            assert!(got == before || (commit && got == after), "image {n}: {got:?}");
        }
    }
    // A checkpoint after the commit keeps its catalog and rows.
    db.checkpoint().unwrap();
    let db = Database::open(common::sim_options(&fs.crash_now())).unwrap();
    assert_eq!(schema_state(&db), (vec!["fresh".into()], 50, b"after".to_vec()));
    assert!(db.table("fresh").unwrap().index("fresh_grp").is_ok());
}

/// The definition of index `name` of table `base`, if it has one.
fn grp_index(db: &Database) -> Option<(Vec<String>, bool, centum_engine::IndexKind)> {
    let def = db.table("base").ok()?.def();
    def.indexes.into_iter().find(|i| i.name == "base_grp").map(|i| (i.columns, i.unique, i.kind))
}

/// A transaction that drops a unique index and builds another of the same
/// name: the dropped one no longer holds the transaction to its keys and
/// its name is free, yet it stays whole for an abort, and every crash
/// image (while another thread logs catalog images of its own) has the
/// old index or, once committed, the new one, never neither.
#[test]
fn an_index_dropped_in_a_transaction_is_gone_to_it_and_whole_for_everyone_else() {
    use centum_engine::storage::SimFs;
    let fs = SimFs::new();
    fs.record_images();
    let db = Database::open(common::sim_options(&fs)).unwrap();
    let base = table(&db, "base");
    db.run(Isolation::Snapshot, 1, |txn| (0..10).try_for_each(|k| txn.insert(&base, row(k)))).unwrap();
    db.create_index("base", IndexDef::hash("base_grp", &["grp"], 64).unique()).unwrap();
    let old = grp_index(&db);
    let new = Some((vec!["grp".to_string(), "k".to_string()], true, centum_engine::IndexKind::Range));
    for commit in [false, true] {
        let first_image = fs.image_count();
        let txn = db.begin(Isolation::ReadCommitted).unwrap();
        std::thread::scope(|s| {
            let _act = centum_engine::act_for(Some(txn.id()));
            let marker = s.spawn(|| {
                for i in 0..20 {
                    db.write_catalog_extra(b"x".to_vec(), b"x".to_vec()).unwrap();
                    std::thread::sleep(std::time::Duration::from_millis(i % 3));
                }
            });
            db.drop_index("base_grp").unwrap();
            assert_eq!(grp_index(&db), None, "the dropping transaction still sees the index");
            assert!(matches!(db.drop_index("base_grp"), Err(Error::NoSuchIndex(_))));
            // k = 1000 has grp 3, as k = 3 has.
            txn.insert(&base, row(1000)).unwrap();
            db.create_index("base", IndexDef::range("base_grp", &["grp", "k"]).unique()).unwrap();
            txn.relink_own_writes().unwrap();
            assert_eq!(grp_index(&db), new);
            marker.join().unwrap();
            db.checkpoint().unwrap();
        });
        if commit {
            txn.commit().unwrap();
            assert_eq!(grp_index(&db), new);
        } else {
            txn.abort();
            assert_eq!(grp_index(&db), old, "an abort did not bring the index back");
            let e = db.run(Isolation::Snapshot, 1, |txn| txn.insert(&base, row(1000))).unwrap_err();
            assert!(matches!(e, Error::UniqueViolation { ref index, .. } if index == "base_grp"), "{e:?}");
        }
        for n in first_image..fs.image_count() {
            let image = fs.crash_image(n).unwrap();
            let got = grp_index(&Database::open(common::sim_options(&image)).unwrap());
            assert!(got == old || (commit && got == new), "image {n}: {got:?}");
        }
    }
    let db = Database::open(common::sim_options(&fs.crash_now())).unwrap();
    assert_eq!(grp_index(&db), new);
}

/// A schema change outside the claiming transaction waits for it, within
/// its limits; a transaction's own build on a table it wrote does not
/// wait for itself, and indexes its own rows once asked to.
#[test]
fn schema_changes_wait_for_the_claim_but_never_for_themselves() {
    let db = Database::open(Options { gc_interval: None, ..Options::default() }).unwrap();
    let t = table(&db, "t");
    let mut txn = db.begin(Isolation::ReadCommitted).unwrap();
    txn.insert(&t, row(1)).unwrap();
    {
        let _act = centum_engine::act_for(Some(txn.id()));
        db.create_index("t", IndexDef::hash("t_grp", &["grp"], 64)).unwrap();
        txn.relink_own_writes().unwrap();
        // A READ COMMITTED statement after the build reads through it.
        txn.begin_statement();
        assert_eq!(txn.lookup(&t, "t_grp", &[Value::BigInt(1)]).unwrap().len(), 1);
    }
    assert_eq!(db.claim_owner(), Some(txn.id()));
    assert_eq!(db.claimed("t", None), Some(txn.id()));
    assert_eq!(db.claimed("other", None), None);
    let limits = centum_engine::WaitLimits {
        lock_timeout: Some(std::time::Duration::from_millis(50)),
        ..Default::default()
    };
    let e = centum_engine::ddl_scope(limits, None, || {
        db.create_table(TableDef::new("u").column("a", DataType::BigInt))
    });
    assert_eq!(e.unwrap_err(), Error::LockTimeout);
    txn.commit().unwrap();
    assert_eq!(db.claim_owner(), None);
    db.create_table(TableDef::new("u").column("a", DataType::BigInt)).unwrap();
    assert!(db.table("t").unwrap().index("t_grp").is_ok());
}
