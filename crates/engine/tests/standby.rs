//! A standby applying a primary's redo records, against the primary
//! itself: a random workload of inserts, updates (some of one row twice in
//! a transaction), deletes and rollbacks, with schema changes between
//! (indexes of both kinds created on tables with rows, an index dropped,
//! tables created, renamed and dropped), applied in slices while the
//! primary goes on. After each slice the standby's tables hold exactly the
//! primary's rows, and every index finds each of them. A second test
//! applies bank transfers while readers on the standby check that no
//! snapshot ever sees half a transfer.

use centum_engine::storage::{LogReader, SimFs};
use centum_engine::{Database, Direction, IndexDef, Isolation, KeyRange, Options, TableDef};
use centum_types::{DataType, Value};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;

mod common;
use common::{sim_options, Rng};

fn primary(fs: &SimFs) -> Database {
    Database::open(Options { logical: true, ..sim_options(fs) }).unwrap()
}

fn standby() -> Database {
    Database::open(Options { gc_interval: None, ..Options::default() }).unwrap()
}

/// Applies every durable transaction `reader` has not handed out yet.
fn catch_up(reader: &mut LogReader, standby: &Database) -> usize {
    let mut n = 0;
    loop {
        let txns = reader.read().unwrap();
        if txns.is_empty() {
            return n;
        }
        for t in &txns {
            let records: Vec<_> = t.records().collect();
            let applied = standby.apply_records(&records).unwrap();
            assert_eq!(applied.commit_ts, t.commit_ts);
            assert!(!applied.skipped);
            n += 1;
        }
    }
}

fn rows(db: &Database, table: &str) -> BTreeSet<Vec<String>> {
    let t = db.table(table).unwrap();
    db.run(Isolation::Snapshot, 1, |txn| {
        Ok(txn.scan(&t)?.map(|r| r.values().iter().map(|v| format!("{v:?}")).collect()).collect())
    })
    .unwrap()
}

/// Every table of the primary has the same rows on the standby, and each
/// of the standby's indexes finds every row of its table.
fn check_same(p: &Database, s: &Database) {
    let mut names = p.table_names();
    names.sort();
    let mut theirs = s.table_names();
    theirs.sort();
    assert_eq!(names, theirs);
    for name in &names {
        let want = rows(p, name);
        assert_eq!(rows(s, name), want, "table {name}");
        let t = s.table(name).unwrap();
        assert_eq!(t.index_names(), p.table(name).unwrap().index_names(), "indexes of {name}");
        s.run(Isolation::Snapshot, 1, |txn| {
            for ix in t.index_names() {
                let index = t.index(&ix)?;
                let found = if index.is_range() {
                    txn.range(&t, &ix, &KeyRange::prefix(vec![]), Direction::Forward)?.count()
                } else {
                    let keys: Vec<Vec<Value>> = txn
                        .scan(&t)?
                        .map(|r| index.key_columns().iter().map(|&c| r.get(c)).collect())
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect();
                    keys.iter().map(|k| txn.lookup(&t, &ix, k).map(|v| v.len())).sum::<Result<usize, _>>()?
                };
                assert_eq!(found, want.len(), "index {ix} of {name}");
            }
            Ok(())
        })
        .unwrap();
    }
}

fn accounts(name: &str) -> TableDef {
    TableDef::new(name)
        .column_not_null("id", DataType::BigInt)
        .column_not_null("balance", DataType::BigInt)
        .column("note", DataType::Text)
        .index(IndexDef::hash(&format!("{name}_pkey"), &["id"], 16).unique())
}

/// One random transaction on table `name`: rows looked up by key and
/// inserted, updated (sometimes twice) or deleted; now and then rolled back.
fn random_txn(db: &Database, name: &str, rng: &mut Rng, i: i64) {
    let t = db.table(name).unwrap();
    let ids: Vec<i64> = (0..1 + rng.below(4)).map(|_| rng.below(60) as i64).collect();
    let roll = rng.below(10) == 0;
    let note = (rng.below(3) > 0).then(|| "n".repeat(rng.below(200) as usize));
    // Table "c" is "a" renamed, its key index still "a_pkey".
    let pkey = if name == "c" { "a_pkey".to_string() } else { format!("{name}_pkey") };
    let r = db.run(Isolation::Snapshot, 3, |txn| {
        for &id in &ids {
            match txn.get(&t, &pkey, &[Value::BigInt(id)])? {
                None => txn.insert(
                    &t,
                    vec![
                        Value::BigInt(id),
                        Value::BigInt(i),
                        note.as_ref().map_or(Value::Null, |n| Value::Text(n.as_str().into())),
                    ],
                )?,
                Some(row) if id % 3 == 0 => {
                    txn.delete(&row)?;
                }
                Some(row) => {
                    let b = row.int(1).unwrap();
                    txn.update(&row, vec![Value::BigInt(id), Value::BigInt(b + 1), row.get(2)])?;
                    if id % 2 == 0 {
                        let again = txn.get(&t, &pkey, &[Value::BigInt(id)])?.unwrap();
                        txn.update(&again, vec![Value::BigInt(id), Value::BigInt(b + 2), Value::Null])?;
                    }
                }
            }
        }
        if roll {
            return Err(centum_engine::Error::Internal("rolled back on purpose".into()));
        }
        Ok(())
    });
    assert!(r.is_ok() || roll, "{r:?}");
}

#[test]
fn a_standby_holds_the_primarys_rows_and_schema_after_each_slice() {
    let fs = SimFs::new();
    let p = primary(&fs);
    let s = standby();
    let mut reader = p.redo(p.log_end().unwrap()).unwrap();
    p.create_table(accounts("a")).unwrap();
    p.create_table(accounts("b")).unwrap();
    let mut rng = Rng(0x2545f4914f6cdd1d);
    let mut applied = 0;
    for i in 0..600i64 {
        let table = if i % 3 == 0 {
            "b"
        } else if p.table("a").is_ok() {
            "a"
        } else {
            "c"
        };
        random_txn(&p, table, &mut rng, i);
        match i {
            100 => p.create_index("a", IndexDef::range("a_balance", &["balance"])).unwrap(),
            200 => p.create_index("b", IndexDef::hash("b_balance", &["balance"], 8)).unwrap(),
            300 => p.drop_index("a_balance").unwrap(),
            350 => p.rename_table("a", "c").unwrap(),
            400 => drop(p.create_table(accounts("d")).unwrap()),
            450 => p.drop_table("d").unwrap(),
            _ => {}
        }
        if i % 40 == 39 {
            p.flush_log().unwrap();
            applied += catch_up(&mut reader, &s);
            check_same(&p, &s);
        }
    }
    assert!(applied > 400, "{applied} transactions applied");
    // Applying a transaction again changes nothing.
    let mut again = p.redo(p.log_end().unwrap()).unwrap();
    random_txn(&p, "b", &mut rng, 1000);
    p.flush_log().unwrap();
    let txns = again.read().unwrap();
    for t in &txns {
        let records: Vec<_> = t.records().collect();
        assert!(!s.apply_records(&records).unwrap().skipped);
        assert!(s.apply_records(&records).unwrap().skipped);
    }
    check_same(&p, &s);
    // The collector frees what the standby's deletes ended.
    assert!(s.collect_garbage() > 0);
    check_same(&p, &s);
}

#[test]
fn standby_snapshots_never_see_half_a_transfer() {
    const ACCOUNTS: i64 = 50;
    let fs = SimFs::new();
    let p = primary(&fs);
    let s = standby();
    let from = p.log_end().unwrap();
    p.create_table(accounts("bank")).unwrap();
    let t = p.table("bank").unwrap();
    p.run(Isolation::Snapshot, 1, |txn| {
        for id in 0..ACCOUNTS {
            txn.insert(&t, vec![Value::BigInt(id), Value::BigInt(100), Value::Null])?;
        }
        Ok(())
    })
    .unwrap();
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for _ in 0..2000 {
        let (a, b) = (rng.below(ACCOUNTS as u64) as i64, rng.below(ACCOUNTS as u64) as i64);
        let amount = rng.below(20) as i64;
        p.run(Isolation::Snapshot, 5, |txn| {
            for (id, delta) in [(a, -amount), (b, amount)] {
                let row = txn.get(&t, "bank_pkey", &[Value::BigInt(id)])?.unwrap();
                let bal = row.int(1).unwrap();
                txn.update(&row, vec![Value::BigInt(id), Value::BigInt(bal + delta), Value::Null])?;
            }
            Ok(())
        })
        .unwrap();
    }
    p.flush_log().unwrap();
    // The first transaction creates the table; the readers start after it.
    let mut reader: LogReader = p.redo(from).unwrap();
    let mut txns = reader.read().unwrap();
    let first: Vec<_> = txns[0].records().collect();
    s.apply_records(&first).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (s, done) = (s.clone(), done.clone());
            std::thread::spawn(move || {
                let mut seen = 0u64;
                while !done.load(SeqCst) {
                    let t = s.table("bank").unwrap();
                    let (sum, n) = s
                        .run(Isolation::Snapshot, 1, |txn| {
                            let mut sum = 0;
                            let mut n = 0;
                            for r in txn.scan(&t)? {
                                sum += r.int(1).unwrap();
                                n += 1;
                            }
                            Ok((sum, n))
                        })
                        .unwrap();
                    assert!(n == 0 || (n == ACCOUNTS && sum == 100 * ACCOUNTS), "{n} rows summing to {sum}");
                    seen += 1;
                }
                seen
            })
        })
        .collect();
    let mut applied = 1;
    txns.remove(0);
    loop {
        for txn in &txns {
            let records: Vec<_> = txn.records().collect();
            s.apply_records(&records).unwrap();
            applied += 1;
            if applied % 100 == 0 {
                s.collect_garbage();
            }
        }
        txns = reader.read().unwrap();
        if txns.is_empty() {
            break;
        }
    }
    done.store(true, SeqCst);
    let snapshots: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(applied > 2000, "{applied} transactions applied");
    assert!(snapshots > 0);
    assert_eq!(rows(&s, "bank"), rows(&p, "bank"));
}
