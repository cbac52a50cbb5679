//! The change feed against a model: a random workload of inserts, updates
//! (some of one row twice in a transaction), deletes, rollbacks and
//! SCHEMA_ONLY writes, over log segments of 4 KiB with checkpoints taken
//! while a slot holds the log. Replaying the feed onto an empty map must
//! give the table's contents, transactions in commit order, each once;
//! and a feed resumed from any transaction's end, also after a restart,
//! must give exactly the transactions after it.

use centum_engine::storage::{LogPos, SimFs, Slot};
use centum_engine::{ChangeKind, ChangeTxn, Database, Durability, IndexDef, Isolation, Options, TableDef};
use centum_types::{DataType, Value};
use std::collections::BTreeMap;
use std::time::Duration;

mod common;
use common::{sim_options, Rng};

fn options(fs: &SimFs) -> Options {
    Options { logical: true, ..sim_options(fs) }
}

fn setup(db: &Database) {
    db.create_table(
        TableDef::new("accounts")
            .column_not_null("id", DataType::BigInt)
            .column_not_null("balance", DataType::BigInt)
            .column("note", DataType::Text)
            .index(IndexDef::hash("accounts_pkey", &["id"], 64).unique()),
    )
    .unwrap();
    db.create_table(
        TableDef::new("cache")
            .column_not_null("k", DataType::BigInt)
            .index(IndexDef::hash("cache_k", &["k"], 64))
            .durability(Durability::SchemaOnly),
    )
    .unwrap();
}

type Model = BTreeMap<i64, (i64, Option<String>)>;

fn key(row: &[Value]) -> i64 {
    match row[0] {
        Value::BigInt(k) => k,
        ref v => panic!("id {v:?}"),
    }
}

fn parts(row: &[Value]) -> (i64, Option<String>) {
    let b = match row[1] {
        Value::BigInt(b) => b,
        ref v => panic!("balance {v:?}"),
    };
    let note = match &row[2] {
        Value::Text(t) => Some(t.to_string()),
        Value::Null => None,
        v => panic!("note {v:?}"),
    };
    (b, note)
}

/// Applies one transaction's changes, checking each against the model.
fn apply(model: &mut Model, txn: &ChangeTxn) {
    for c in &txn.changes {
        assert_eq!(c.table.name(), "accounts", "SCHEMA_ONLY tables are never in the feed");
        match c.kind {
            ChangeKind::Insert => {
                let new = c.new.as_ref().unwrap();
                assert!(model.insert(key(new), parts(new)).is_none(), "insert of a present row {new:?}");
            }
            ChangeKind::Update => {
                let (old, new) = (c.old.as_ref().unwrap(), c.new.as_ref().unwrap());
                let was = model.remove(&key(old)).expect("update of a missing row");
                assert_eq!(was, parts(old), "the update's old row is the row as it was");
                assert!(model.insert(key(new), parts(new)).is_none());
            }
            ChangeKind::Delete => {
                let old = c.old.as_ref().unwrap();
                assert_eq!(model.remove(&key(old)), Some(parts(old)), "delete of {old:?}");
            }
        }
    }
}

fn contents(db: &Database) -> Model {
    let t = db.table("accounts").unwrap();
    db.run(Isolation::Snapshot, 1, |txn| {
        let mut m = Model::new();
        for r in txn.scan(&t)? {
            let row: Vec<Value> = (0..3).map(|c| r.get(c)).collect();
            m.insert(key(&row), parts(&row));
        }
        Ok(m)
    })
    .unwrap()
}

/// Runs `n` random transactions.
fn workload(db: &Database, rng: &mut Rng, n: usize) {
    let t = db.table("accounts").unwrap();
    let cache = db.table("cache").unwrap();
    for i in 0..n {
        let ids: Vec<i64> = (0..1 + rng.below(4)).map(|_| rng.below(40) as i64).collect();
        let roll = rng.below(10) == 0;
        let note = (rng.below(3) > 0).then(|| "x".repeat(rng.below(300) as usize));
        let r = db.run(Isolation::Snapshot, 3, |txn| {
            for &id in &ids {
                match txn.get(&t, "accounts_pkey", &[Value::BigInt(id)])? {
                    None => txn.insert(
                        &t,
                        vec![
                            Value::BigInt(id),
                            Value::BigInt(i as i64),
                            note.as_ref().map_or(Value::Null, |n| Value::Text(n.as_str().into())),
                        ],
                    )?,
                    Some(row) if id % 3 == 0 => {
                        txn.delete(&row)?;
                    }
                    Some(row) => {
                        let b = row.int(1).unwrap();
                        txn.update(&row, vec![Value::BigInt(id), Value::BigInt(b + 1), row.get(2)])?;
                        // Twice in one transaction now and then.
                        if id % 2 == 0 {
                            let again = txn.get(&t, "accounts_pkey", &[Value::BigInt(id)])?.unwrap();
                            txn.update(&again, vec![Value::BigInt(id), Value::BigInt(b + 2), Value::Null])?;
                        }
                    }
                }
            }
            txn.insert(&cache, vec![Value::BigInt(i as i64)])?;
            if roll {
                return Err(centum_engine::Error::Internal("rolled back on purpose".into()));
            }
            Ok(())
        });
        assert!(r.is_ok() || roll, "{r:?}");
        if i % 50 == 49 {
            db.checkpoint().unwrap();
        }
    }
}

/// Every transaction of `feed` that is there now.
fn drain(db: &Database, from: LogPos) -> Vec<ChangeTxn> {
    let mut feed = db.changes(from).unwrap();
    let mut out = Vec::new();
    loop {
        let got = feed.poll().unwrap();
        if got.is_empty() {
            return out;
        }
        out.extend(got);
    }
}

#[test]
fn the_feed_replays_to_the_table_and_resumes_from_any_position_across_a_restart() {
    let fs = SimFs::new();
    let db = Database::open(options(&fs)).unwrap();
    setup(&db);
    // A slot keeps the log from here on, through checkpoints.
    let start = db.log_end().unwrap();
    let slot = Slot {
        name: "s".into(),
        plugin: "test_decoding".into(),
        database: "centum".into(),
        confirmed: start,
        temporary: false,
        active_pid: None,
    };
    assert!(db.slots().unwrap().create(slot).unwrap());
    let mut rng = Rng(0x9e3779b97f4a7c15);
    workload(&db, &mut rng, 300);
    let txns = drain(&db, start);
    assert!(txns.windows(2).all(|w| w[0].commit_ts < w[1].commit_ts && w[0].end <= w[1].start));
    assert!(txns.iter().any(|t| t.changes.iter().any(|c| c.kind == ChangeKind::Update)));
    assert!(txns.iter().any(|t| t.changes.iter().any(|c| c.kind == ChangeKind::Delete)));
    let mut model = Model::new();
    for t in &txns {
        apply(&mut model, t);
    }
    assert_eq!(model, contents(&db));
    // Resuming from a transaction's end gives exactly the ones after it.
    let mid = txns[txns.len() / 2].end;
    let rest = drain(&db, mid);
    assert_eq!(rest.len(), txns.len() - txns.len() / 2 - 1);
    assert_eq!(rest[0].commit_ts, txns[txns.len() / 2 + 1].commit_ts);
    // Confirm half; restart; the slot's position and the log after it
    // are there, and the feed goes on with later commits.
    db.slots().unwrap().confirm("s", mid).unwrap();
    db.checkpoint().unwrap();
    drop(db);
    let db = Database::open(options(&fs)).unwrap();
    let slot = db.slots().unwrap().get("s").unwrap();
    assert_eq!(slot.confirmed, mid);
    workload(&db, &mut rng, 100);
    let after = drain(&db, slot.confirmed);
    assert!(after.len() > rest.len());
    assert_eq!(after[0].commit_ts, rest[0].commit_ts);
    let mut model = Model::new();
    for t in txns.iter().take(txns.len() / 2 + 1).chain(&after) {
        apply(&mut model, t);
    }
    assert_eq!(model, contents(&db));
    // The iterator waits for the next commit.
    let mut feed = db.changes(db.log_end().unwrap()).unwrap();
    assert!(feed.next_timeout(Duration::from_millis(20)).unwrap().is_none());
    let t = db.table("accounts").unwrap();
    db.run(Isolation::Snapshot, 1, |txn| {
        txn.insert(&t, vec![Value::BigInt(1000), Value::BigInt(1), Value::Null])
    })
    .unwrap();
    let next = feed.next().unwrap().unwrap();
    assert_eq!(next.changes.len(), 1);
    assert_eq!(next.changes[0].kind, ChangeKind::Insert);
    // Without the slot, checkpoints remove the log, and a feed from the
    // old position is refused.
    assert!(db.slots().unwrap().drop_slot("s").unwrap());
    workload(&db, &mut rng, 100);
    db.checkpoint().unwrap();
    let e = db.changes(slot.confirmed).unwrap().poll().unwrap_err();
    assert_eq!(e.sqlstate(), "58P01", "{e}");
}

/// The contents of `accounts` as transaction `txn` sees them.
fn seen_by(db: &Database, txn: &centum_engine::Transaction) -> Model {
    let t = db.table("accounts").unwrap();
    let mut m = Model::new();
    for r in txn.scan(&t).unwrap() {
        let row: Vec<Value> = (0..3).map(|c| r.get(c)).collect();
        m.insert(key(&row), parts(&row));
    }
    m
}

/// `begin_at_log_cut` under concurrent commits, SERIALIZABLE ones among
/// them (which take their timestamps before their records are appended):
/// each snapshot, with the feed from its cut applied, must give the final
/// table; a transaction on both sides of the cut would be applied twice
/// (an insert of a present row, an update's old row that differs), one on
/// neither would be missing.
#[test]
fn a_snapshot_at_a_log_cut_plus_the_feed_from_the_cut_is_the_table() {
    let fs = SimFs::new();
    let db = Database::open(options(&fs)).unwrap();
    setup(&db);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..4u64)
        .map(|w| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let t = db.table("accounts").unwrap();
                let mut rng = Rng(0x9e37_79b9 + w);
                let iso = if w % 2 == 0 { Isolation::Serializable } else { Isolation::Snapshot };
                let mut n = 0u64;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) && n < 20_000 {
                    n += 1;
                    let ids: Vec<i64> = (0..1 + rng.below(3)).map(|_| rng.below(30) as i64).collect();
                    let _ = db.run(iso, 20, |txn| {
                        for &id in &ids {
                            match txn.get(&t, "accounts_pkey", &[Value::BigInt(id)])? {
                                None => {
                                    txn.insert(&t, vec![Value::BigInt(id), Value::BigInt(0), Value::Null])?
                                }
                                Some(row) if id % 5 == 0 => {
                                    txn.delete(&row)?;
                                }
                                Some(row) => {
                                    let b = row.int(1).unwrap();
                                    txn.update(
                                        &row,
                                        vec![Value::BigInt(id), Value::BigInt(b + 1), Value::Null],
                                    )?;
                                }
                            }
                        }
                        Ok(())
                    });
                }
            })
        })
        .collect();
    let mut cuts = Vec::new();
    for _ in 0..300 {
        std::thread::sleep(Duration::from_micros(500));
        let (txn, cut) = db.begin_at_log_cut(Isolation::Snapshot).unwrap();
        cuts.push((cut, seen_by(&db, &txn)));
        txn.abort();
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for w in writers {
        w.join().unwrap();
    }
    let last = contents(&db);
    assert!(!last.is_empty());
    for (cut, mut model) in cuts {
        for txn in drain(&db, cut) {
            apply(&mut model, &txn);
        }
        assert_eq!(model, last, "snapshot at {cut:?} plus the feed from there");
    }
}
