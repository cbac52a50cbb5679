//! Savepoints against a reference model: a transaction inserts, updates
//! and deletes at random, takes savepoints and rolls back to them; after
//! every step what it reads (by scan, by unique key and through a range
//! index) is exactly the model's state, other transactions never see its
//! uncommitted rows, and what commits is the model's final state, under
//! READ COMMITTED and SERIALIZABLE.

use centum_engine::{Database, Direction, IndexDef, Isolation, KeyRange, Options, TableDef};
use centum_types::{DataType, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

mod common;
use common::Rng;

fn rows(txn: &centum_engine::Transaction, t: &Arc<centum_engine::Table>) -> BTreeMap<i64, i64> {
    txn.scan(t).unwrap().map(|r| (r.int(0).unwrap(), r.int(1).unwrap())).collect()
}

#[test]
fn rolling_back_to_savepoints_matches_a_model() {
    let db = Database::open(Options { gc_interval: None, ..Options::default() }).unwrap();
    let t = db
        .create_table(
            TableDef::new("t")
                .column_not_null("k", DataType::BigInt)
                .column_not_null("v", DataType::BigInt)
                .index(IndexDef::hash("t_pkey", &["k"], 256).unique())
                .index(IndexDef::range("t_v", &["v"])),
        )
        .unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..20 {
        let committed = db.run(Isolation::Snapshot, 1, |txn| Ok(rows(txn, &t))).unwrap();
        // SERIALIZABLE records what it reads (its own versions too), and
        // validates that at commit: nothing freed by a rollback may be left
        // in that record.
        let iso = if round % 2 == 0 { Isolation::ReadCommitted } else { Isolation::Serializable };
        let txn = db.begin(iso).unwrap();
        let mut model = committed.clone();
        let mut marks: Vec<(centum_engine::Savepoint, BTreeMap<i64, i64>)> = Vec::new();
        for _ in 0..60 {
            let k = rng.below(24) as i64;
            match rng.below(10) {
                0 | 1 => {
                    marks.push((txn.savepoint(), model.clone()));
                }
                2 if !marks.is_empty() => {
                    let at = rng.below(marks.len() as u64) as usize;
                    marks.truncate(at + 1);
                    let (sp, state) = &marks[at];
                    txn.rollback_to(sp);
                    model = state.clone();
                }
                3 => {
                    if let Some(r) = txn.get(&t, "t_pkey", &[Value::BigInt(k)]).unwrap() {
                        assert!(txn.delete(&r).unwrap());
                        model.remove(&k);
                    }
                }
                _ => {
                    let v = rng.below(1000) as i64;
                    match txn.get(&t, "t_pkey", &[Value::BigInt(k)]).unwrap() {
                        Some(r) => {
                            assert!(txn.update(&r, vec![Value::BigInt(k), Value::BigInt(v)]).unwrap());
                        }
                        None => txn.insert(&t, vec![Value::BigInt(k), Value::BigInt(v)]).unwrap(),
                    }
                    model.insert(k, v);
                }
            }
            assert_eq!(rows(&txn, &t), model, "round {round}");
            for (&k, &v) in &model {
                let r = txn.get(&t, "t_pkey", &[Value::BigInt(k)]).unwrap().expect("key lost");
                assert_eq!(r.int(1), Some(v));
                let by_v =
                    txn.range(&t, "t_v", &KeyRange::prefix(vec![Value::BigInt(v)]), Direction::Forward);
                assert!(by_v.unwrap().any(|r| r.int(0) == Some(k)), "round {round}: {k} not under {v}");
            }
            // No one else sees the open transaction's rows.
            let seen = db.run(Isolation::Snapshot, 1, |o| Ok(rows(o, &t))).unwrap();
            assert_eq!(seen, committed);
        }
        if rng.below(4) == 0 {
            txn.abort();
        } else {
            txn.commit().unwrap();
            let seen = db.run(Isolation::Snapshot, 1, |o| Ok(rows(o, &t))).unwrap();
            assert_eq!(seen, model, "round {round}: committed state");
        }
        db.collect_garbage();
    }
    let stats = db.stats();
    let live = db.run(Isolation::Snapshot, 1, |o| Ok(rows(o, &t).len())).unwrap();
    assert_eq!(stats.tables[0].versions as usize, live, "versions left behind by rollbacks");
}
