//! The layer above's metadata in the catalog: each table's extra bytes,
//! the database-wide blob and table renames, kept across restarts and
//! checkpoints, and changed only once they are durable.

use centum_engine::storage::SimFs;
use centum_engine::{Database, Error, IndexDef, Isolation, Options, TableDef};
use centum_types::{DataType, Value};
use std::path::Path;
use std::sync::Arc;

mod common;
use common::sim_options;

fn opts(dir: &Path) -> Options {
    Options { gc_interval: None, ..Options::durable(dir) }
}

fn accounts() -> TableDef {
    TableDef::new("accounts")
        .column_not_null("id", DataType::BigInt)
        .column_not_null("balance", DataType::BigInt)
        .index(IndexDef::hash("accounts_pkey", &["id"], 64).unique())
        .extra(b"defaults: balance 0".to_vec())
}

fn ids(db: &Database, table: &str) -> Vec<i64> {
    let t = db.table(table).unwrap();
    let mut v: Vec<i64> =
        db.run(Isolation::Snapshot, 1, |txn| Ok(txn.scan(&t)?.map(|r| r.int(0).unwrap()).collect())).unwrap();
    v.sort();
    v
}

fn insert(db: &Database, table: &str, range: std::ops::Range<i64>) {
    let t = db.table(table).unwrap();
    db.run(Isolation::Snapshot, 1, |txn| {
        for id in range.clone() {
            txn.insert(&t, vec![Value::BigInt(id), Value::BigInt(id * 10)])?;
        }
        Ok(())
    })
    .unwrap();
}

#[test]
fn extras_and_renames_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(opts(dir.path())).unwrap();
        assert_eq!(db.catalog_extra(), Vec::<u8>::new());
        db.create_table(accounts()).unwrap();
        db.create_table(TableDef::new("plain").column("id", DataType::BigInt)).unwrap();
        insert(&db, "accounts", 0..10);
        db.set_table_extra("plain", vec![0, 1, 2, 0xFF]).unwrap();
        db.set_catalog_extra(b"sequence s1 = 42".to_vec()).unwrap();
        db.rename_table("accounts", "ledger").unwrap();
        insert(&db, "ledger", 10..15);
        assert_eq!(db.table("ledger").unwrap().def().extra, b"defaults: balance 0");
    }
    let db = Database::open(opts(dir.path())).unwrap();
    assert_eq!(db.table_names(), ["ledger", "plain"]);
    let ledger = db.table("ledger").unwrap();
    assert_eq!(ledger.name(), "ledger");
    let mut want = accounts();
    want.name = "ledger".into();
    assert_eq!(ledger.def(), want);
    assert_eq!(ledger.extra(), b"defaults: balance 0");
    assert_eq!(db.table("plain").unwrap().def().extra, [0, 1, 2, 0xFF]);
    assert_eq!(db.catalog_extra(), b"sequence s1 = 42");
    assert_eq!(ids(&db, "ledger"), (0..15).collect::<Vec<_>>());
    assert!(matches!(db.table("accounts"), Err(Error::NoSuchTable(_))));
    // Emptied again, they stay empty.
    db.set_table_extra("plain", vec![]).unwrap();
    db.set_catalog_extra(vec![]).unwrap();
    drop(db);
    let db = Database::open(opts(dir.path())).unwrap();
    assert!(db.table("plain").unwrap().extra().is_empty());
    assert!(db.catalog_extra().is_empty());
    assert_eq!(db.table("ledger").unwrap().extra(), b"defaults: balance 0");
}

#[test]
fn extras_survive_checkpoints_and_reopening() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(opts(dir.path())).unwrap();
        db.create_table(accounts()).unwrap();
        insert(&db, "accounts", 0..100);
        db.set_table_extra("accounts", b"v1".to_vec()).unwrap();
        db.set_catalog_extra(b"db v1".to_vec()).unwrap();
        db.rename_table("accounts", "a2").unwrap();
        // The checkpoint's manifest carries the catalog; the log before it
        // is gone.
        db.checkpoint().unwrap();
    }
    {
        let db = Database::open(opts(dir.path())).unwrap();
        assert_eq!(db.table("a2").unwrap().extra(), b"v1");
        assert_eq!(db.catalog_extra(), b"db v1");
        assert_eq!(ids(&db, "a2"), (0..100).collect::<Vec<_>>());
        // Changed after a checkpoint: the log tail's image wins.
        db.set_table_extra("a2", b"v2".to_vec()).unwrap();
        db.checkpoint().unwrap();
        db.set_catalog_extra(b"db v2".to_vec()).unwrap();
        insert(&db, "a2", 100..110);
    }
    for _ in 0..2 {
        let db = Database::open(opts(dir.path())).unwrap();
        assert_eq!(db.table("a2").unwrap().extra(), b"v2");
        assert_eq!(db.catalog_extra(), b"db v2");
        assert_eq!(ids(&db, "a2"), (0..110).collect::<Vec<_>>());
        db.checkpoint().unwrap();
    }
}

#[test]
fn in_memory_databases_keep_extras_in_memory() {
    let db = Database::open(Options::default()).unwrap();
    db.create_table(accounts()).unwrap();
    db.create_table(TableDef::new("other").column("id", DataType::BigInt)).unwrap();
    assert_eq!(db.table("accounts").unwrap().extra(), b"defaults: balance 0");
    db.set_table_extra("accounts", b"x".to_vec()).unwrap();
    assert_eq!(db.table("accounts").unwrap().def().extra, b"x");
    db.set_catalog_extra(b"y".to_vec()).unwrap();
    assert_eq!(db.catalog_extra(), b"y");
    assert!(matches!(db.set_table_extra("missing", vec![]), Err(Error::NoSuchTable(n)) if n == "missing"));
    // Renaming: the same table, rows and all, under the new name only.
    insert(&db, "accounts", 0..3);
    let before = db.table("accounts").unwrap();
    assert!(matches!(db.rename_table("accounts", "other"), Err(Error::TableExists(n)) if n == "other"));
    assert!(matches!(db.rename_table("accounts", "accounts"), Err(Error::TableExists(_))));
    assert!(matches!(db.rename_table("missing", "new"), Err(Error::NoSuchTable(n)) if n == "missing"));
    db.rename_table("accounts", "renamed").unwrap();
    let after = db.table("renamed").unwrap();
    assert!(Arc::ptr_eq(&before, &after));
    assert_eq!(before.name(), "renamed");
    assert_eq!(ids(&db, "renamed"), [0, 1, 2]);
    assert_eq!(db.table_names(), ["other", "renamed"]);
    // The old name is free again.
    db.create_table(TableDef::new("accounts").column("id", DataType::BigInt)).unwrap();
    db.drop_table("renamed").unwrap();
    assert_eq!(db.table_names(), ["accounts", "other"]);
}

#[test]
fn a_change_that_could_not_be_logged_is_not_made() {
    let fs = SimFs::new();
    let db = Database::open(sim_options(&fs)).unwrap();
    db.create_table(accounts()).unwrap();
    db.set_catalog_extra(b"kept".to_vec()).unwrap();
    fs.fail_sync(1);
    assert!(db.set_table_extra("accounts", b"lost".to_vec()).is_err());
    assert!(db.set_catalog_extra(b"lost".to_vec()).is_err());
    assert!(db.rename_table("accounts", "lost").is_err());
    assert_eq!(db.table("accounts").unwrap().extra(), b"defaults: balance 0");
    assert_eq!(db.catalog_extra(), b"kept");
    assert_eq!(db.table_names(), ["accounts"]);
    let image = fs.crash_now();
    drop(db);
    let db = Database::open(sim_options(&image)).unwrap();
    // The failed sync's image may or may not have reached the disk.
    let extra = db.table("accounts").unwrap().extra();
    assert!(extra == b"defaults: balance 0" || extra == b"lost", "{extra:?}");
    assert_eq!(db.table_names(), ["accounts"]);
}
