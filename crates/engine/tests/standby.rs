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
    standby.apply_log(reader).unwrap()
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

/// A primary on `fs` with tables "a" and "b", an empty standby, and a
/// reader of the primary's log from before the tables.
fn two_tables(fs: &SimFs) -> (Database, Database, LogReader) {
    let p = primary(fs);
    let reader = p.redo(p.log_end().unwrap()).unwrap();
    p.create_table(accounts("a")).unwrap();
    p.create_table(accounts("b")).unwrap();
    (p, standby(), reader)
}

#[test]
fn a_standby_holds_the_primarys_rows_and_schema_after_each_slice() {
    let fs = SimFs::new();
    let (p, s, mut reader) = two_tables(&fs);
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
                loop {
                    let last = done.load(SeqCst);
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
                    if last {
                        return seen;
                    }
                }
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

/// A record's frames, its timestamp and who resolves its commit.
type Submitted = (Vec<u8>, u64, centum_engine::storage::Resolver);

/// A replicated log in one process: records in stamp order on a channel;
/// a thread applies each to the standby, then resolves its commit (or,
/// for every `fail_every`-th record, resolves it as lost without applying
/// it).
struct Group {
    order: std::sync::Mutex<Option<std::sync::mpsc::Sender<Submitted>>>,
    failed: std::sync::atomic::AtomicU64,
    /// Whether the primary takes writes (a standby's group says no).
    writable: AtomicBool,
    /// Held, the applier waits before each record.
    hold: std::sync::Mutex<()>,
}

impl centum_engine::Replicate for Group {
    fn submit(
        &self,
        mut record: centum_engine::storage::Record,
        _delayed: bool,
        stamp: &mut dyn FnMut() -> Result<u64, centum_engine::storage::Error>,
    ) -> Result<centum_engine::storage::Durable, centum_engine::storage::Error> {
        let order = self.order.lock().unwrap();
        let ts = stamp()?;
        record.set_commit_ts(ts);
        let (durable, resolver) = centum_engine::storage::Durable::remote();
        order.as_ref().unwrap().send((record.into_frames(), ts, resolver)).unwrap();
        Ok(durable)
    }

    fn failed_upto(&self) -> u64 {
        self.failed.load(SeqCst)
    }

    fn accepts_writes(&self) -> bool {
        self.writable.load(SeqCst)
    }
}

/// A database that commits through group `g`.
fn member(g: &Arc<Group>) -> Database {
    Database::open(Options {
        logical: true,
        gc_interval: None,
        replicate: Some(g.clone()),
        ..Options::default()
    })
    .unwrap()
}

/// A standby, a group applying to it, and a member that commits through
/// the group, with table `a` created.
struct GroupWithTable {
    s: Database,
    g: Arc<Group>,
    applier: std::thread::JoinHandle<u64>,
    p: Database,
    t: Arc<centum_engine::Table>,
}

fn group_with_table() -> GroupWithTable {
    let s = standby();
    let (g, applier) = group(s.clone(), 0);
    let p = member(&g);
    p.create_table(accounts("a")).unwrap();
    let t = p.table("a").unwrap();
    GroupWithTable { s, g, applier, p, t }
}

fn group(standby: Database, fail_every: u64) -> (Arc<Group>, std::thread::JoinHandle<u64>) {
    group_of(vec![standby], fail_every)
}

/// [`group`], its records applied to each of `standbys`.
fn group_of(standbys: Vec<Database>, fail_every: u64) -> (Arc<Group>, std::thread::JoinHandle<u64>) {
    let (tx, rx) = std::sync::mpsc::channel::<Submitted>();
    let g = Arc::new(Group {
        order: std::sync::Mutex::new(Some(tx)),
        failed: Default::default(),
        writable: AtomicBool::new(true),
        hold: std::sync::Mutex::new(()),
    });
    let g2 = g.clone();
    let applier = std::thread::spawn(move || {
        let mut n = 0;
        let mut last = 0;
        for (frames, ts, resolver) in rx {
            // A standby applies records in the log's order, which must be
            // their timestamps' order.
            assert!(ts > last, "record {ts} reached the log after record {last}");
            last = ts;
            n += 1;
            drop(g2.hold.lock().unwrap());
            if fail_every > 0 && n % fail_every == 0 {
                g2.failed.fetch_max(ts, SeqCst);
                resolver.resolve(Err(centum_engine::storage::Error::Replication {
                    code: "08007",
                    message: "lost".into(),
                }));
                continue;
            }
            for standby in &standbys {
                standby.apply_frames(&frames).unwrap();
            }
            resolver.resolve(Ok(()));
        }
        n
    });
    (g, applier)
}

#[test]
fn a_primary_commits_through_its_group_and_a_lost_record_aborts_its_transaction() {
    for fail_every in [0, 7] {
        let s = standby();
        let (g, applier) = group(s.clone(), fail_every);
        let p = member(&g);
        // A schema change fails too when its record is lost; try again.
        let create = |def: TableDef| {
            while let Err(e) = p.create_table(def.clone()) {
                assert_eq!(e.sqlstate(), "08007", "{e}");
            }
        };
        create(accounts("a"));
        create(accounts("b"));
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for i in 0..300i64 {
            random_txn_lossy(&p, if i % 2 == 0 { "a" } else { "b" }, &mut rng, i);
        }
        let t = p.table("a").unwrap();
        let e = loop {
            // A lost commit is undone on the primary: its insert is gone.
            let r = p.run(Isolation::Snapshot, 1, |txn| {
                txn.insert(&t, vec![Value::BigInt(1000), Value::BigInt(0), Value::Null])
            });
            match r {
                Ok(()) if fail_every == 0 => break None,
                Ok(()) => {
                    let row = p
                        .run(Isolation::Snapshot, 1, |txn| {
                            Ok(txn.get(&t, "a_pkey", &[Value::BigInt(1000)])?.map(|r| r.values()))
                        })
                        .unwrap();
                    assert!(row.is_some());
                    p.run(Isolation::Snapshot, 1, |txn| {
                        let row = txn.get(&t, "a_pkey", &[Value::BigInt(1000)])?.unwrap();
                        txn.delete(&row).map(drop)
                    })
                    .ok();
                }
                Err(e) => break Some(e),
            }
        };
        if let Some(e) = e {
            assert_eq!(e.sqlstate(), "08007", "{e}");
            let gone = p.run(Isolation::Snapshot, 1, |txn| {
                Ok(txn.get(&t, "a_pkey", &[Value::BigInt(1000)])?.is_none())
            });
            assert!(gone.unwrap());
        }
        check_same(&p, &s);
        g.order.lock().unwrap().take();
        assert!(applier.join().unwrap() > 100);
    }
}

/// [`random_txn`], where a commit may also fail because its record was
/// lost.
fn random_txn_lossy(db: &Database, name: &str, rng: &mut Rng, i: i64) {
    let before = db.watermark();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| random_txn(db, name, rng, i)));
    if let Err(panic) = r {
        let text = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(text.contains("08007") || text.contains("lost"), "{text}");
        assert!(db.watermark() >= before);
    }
}

/// Every durable transaction `reader` has not handed out yet, in log
/// order.
fn logged(reader: &mut LogReader) -> Vec<centum_engine::storage::FeedTxn> {
    let mut txns = Vec::new();
    loop {
        let got = reader.read().unwrap();
        if got.is_empty() {
            return txns;
        }
        txns.extend(got);
    }
}

/// Inserts one row per id, a transaction each.
fn insert_ids(db: &Database, t: &Arc<centum_engine::Table>, ids: std::ops::Range<i64>) {
    for id in ids {
        db.run(Isolation::Snapshot, 1, |txn| {
            txn.insert(t, vec![Value::BigInt(id), Value::BigInt(id), Value::Null])
        })
        .unwrap();
    }
}

#[test]
fn a_record_applied_after_the_clock_passed_it_gets_a_new_timestamp_that_later_deletes_find() {
    let fs = SimFs::new();
    let p = primary(&fs);
    let s = standby();
    let mut reader = p.redo(p.log_end().unwrap()).unwrap();
    p.create_table(accounts("a")).unwrap();
    let t = p.table("a").unwrap();
    insert_ids(&p, &t, 0..3);
    p.run(Isolation::Snapshot, 1, |txn| {
        let row = txn.get(&t, "a_pkey", &[Value::BigInt(0)])?.unwrap();
        txn.update(&row, vec![Value::BigInt(0), Value::BigInt(10), Value::Null]).map(drop)
    })
    .unwrap();
    p.flush_log().unwrap();
    let txns = logged(&mut reader);
    assert_eq!(txns.len(), 5);
    let apply = |i: usize, late| {
        let records: Vec<_> = txns[i].records().collect();
        s.apply_records_as(&records, late).unwrap()
    };
    apply(0, centum_engine::Late::Skip);
    apply(2, centum_engine::Late::Skip);
    // The standby's clock is past the insert of id 0 now.
    let late = apply(1, centum_engine::Late::Renumber);
    assert!(!late.skipped);
    // From here the records come once each, as a group hands them over.
    apply(3, centum_engine::Late::Renumber);
    // The update ends the version the renumbered record made.
    apply(4, centum_engine::Late::Renumber);
    check_same(&p, &s);
}

#[test]
fn serializable_commits_reach_the_group_in_timestamp_order() {
    let GroupWithTable { s, g, applier, p, t } = group_with_table();
    p.run(Isolation::Snapshot, 1, |txn| {
        (0..8).try_for_each(|id| txn.insert(&t, vec![Value::BigInt(id), Value::BigInt(100), Value::Null]))
    })
    .unwrap();
    // SERIALIZABLE transfers validate as of their commit timestamps; the
    // ones that pass must still reach the log in timestamp order.
    let workers: Vec<_> = (0..4u64)
        .map(|w| {
            let (p, t) = (p.clone(), t.clone());
            std::thread::spawn(move || {
                let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ w);
                let mut committed = 0;
                for _ in 0..400 {
                    let (from, to) = (rng.below(8) as i64, rng.below(8) as i64);
                    let r = p.run(Isolation::Serializable, 1, |txn| {
                        let a = txn.get(&t, "a_pkey", &[Value::BigInt(from)])?.unwrap();
                        let b = txn.get(&t, "a_pkey", &[Value::BigInt(to)])?.unwrap();
                        if from != to {
                            txn.update(
                                &a,
                                vec![Value::BigInt(from), Value::BigInt(a.int(1).unwrap() - 1), Value::Null],
                            )?;
                            txn.update(
                                &b,
                                vec![Value::BigInt(to), Value::BigInt(b.int(1).unwrap() + 1), Value::Null],
                            )?;
                        }
                        Ok(())
                    });
                    match r {
                        // A transfer to the same account writes nothing.
                        Ok(()) => committed += u64::from(from != to),
                        Err(e) => assert_eq!(e.sqlstate(), "40001", "{e}"),
                    }
                }
                committed
            })
        })
        .collect();
    let committed: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert!(committed > 0);
    check_same(&p, &s);
    g.order.lock().unwrap().take();
    // The table, its rows, then one record per transfer.
    assert_eq!(applier.join().unwrap(), 2 + committed);
}

#[test]
fn a_member_that_renumbered_a_record_names_its_versions_as_the_log_does_once_primary() {
    let fs = SimFs::new();
    let p = primary(&fs);
    let mut reader = p.redo(p.log_end().unwrap()).unwrap();
    p.create_table(accounts("a")).unwrap();
    let t = p.table("a").unwrap();
    insert_ids(&p, &t, 0..3);
    p.flush_log().unwrap();
    let txns = logged(&mut reader);
    // Member `m` gave up on these records while its clock moved on (as a
    // primary whose proposals' fate was unknown does): it applies them
    // under timestamps of its own. Member `q` applies them as logged.
    let q = standby();
    // `x` starts from an image `m` takes before it becomes primary.
    let x = standby();
    let (g, applier) = group_of(vec![q.clone(), x.clone()], 0);
    g.writable.store(false, SeqCst);
    let m = member(&g);
    for (i, txn) in txns.iter().enumerate() {
        let records: Vec<_> = txn.records().collect();
        if i == 1 {
            m.raise_clock(records[0].commit_ts + 100);
        }
        let applied = m.apply_records_as(&records, centum_engine::Late::Renumber).unwrap();
        assert!(!applied.skipped);
        q.apply_records_as(&records, centum_engine::Late::Renumber).unwrap();
    }
    check_same(&p, &q);
    x.install_image(&m.image().unwrap()).unwrap();
    check_same(&p, &x);
    // `m` becomes the primary: its deletes and updates of the renumbered
    // versions reach `q`, which finds them by the log's names.
    g.writable.store(true, SeqCst);
    let t = m.table("a").unwrap();
    m.run(Isolation::Snapshot, 1, |txn| {
        let row = txn.get(&t, "a_pkey", &[Value::BigInt(1)])?.unwrap();
        txn.delete(&row)?;
        let row = txn.get(&t, "a_pkey", &[Value::BigInt(2)])?.unwrap();
        txn.update(&row, vec![Value::BigInt(2), Value::BigInt(20), Value::Null]).map(drop)
    })
    .unwrap();
    check_same(&m, &q);
    check_same(&m, &x);
    assert_eq!(rows(&q, "a").len(), 2);
    g.order.lock().unwrap().take();
    assert_eq!(applier.join().unwrap(), 1);
}

#[test]
fn a_standby_started_from_an_image_follows_the_log_from_there() {
    let fs = SimFs::new();
    let (p, s, mut reader) = two_tables(&fs);
    p.create_table(accounts("scratch").durability(centum_engine::Durability::SchemaOnly)).unwrap();
    let mut rng = Rng(0x0bad_cafe_f00d_d00d);
    let mut i = 0;
    let mut work = |n: i64| {
        for _ in 0..n {
            random_txn(&p, if i % 2 == 0 { "a" } else { "b" }, &mut rng, i);
            i += 1;
        }
        p.flush_log().unwrap();
    };
    work(200);
    catch_up(&mut reader, &s);
    let image = s.image().unwrap();
    // A member with tables of its own gets the image's instead.
    let x = standby();
    x.create_table(accounts("other")).unwrap();
    // A damaged image changes nothing.
    for at in [0, image.len() / 2, image.len() - 1] {
        let mut bad = image.clone();
        bad[at] ^= 0x40;
        assert_eq!(x.install_image(&bad).unwrap_err().sqlstate(), "XX001");
        assert_eq!(x.table_names(), vec!["other".to_string()]);
    }
    assert_eq!(x.install_image(&image).unwrap(), s.watermark());
    assert!(x.table("other").is_err());
    check_same(&p, &x);
    // The rows the records after the image update and delete are found.
    work(200);
    let txns = logged(&mut reader);
    for txn in &txns {
        let records: Vec<_> = txn.records().collect();
        assert!(!x.apply_records(&records).unwrap().skipped);
    }
    check_same(&p, &x);
}

#[test]
fn a_delayed_commit_is_acknowledged_before_the_group_holds_it() {
    let GroupWithTable { s, g, applier, p, t } = group_with_table();
    let held = g.hold.lock().unwrap();
    // The group applies nothing now; a delayed commit returns anyway and
    // is visible on the primary.
    let mut txn = p.begin(Isolation::Snapshot).unwrap();
    txn.set_delayed_durability(true);
    txn.insert(&t, vec![Value::BigInt(1), Value::BigInt(1), Value::Null]).unwrap();
    txn.commit().unwrap();
    assert_eq!(rows(&p, "a").len(), 1);
    // A synchronous one waits for the group.
    let p2 = p.clone();
    let sync = std::thread::spawn(move || {
        let t = p2.table("a").unwrap();
        p2.run(Isolation::Snapshot, 1, |txn| {
            txn.insert(&t, vec![Value::BigInt(2), Value::BigInt(2), Value::Null])
        })
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!sync.is_finished());
    drop(held);
    sync.join().unwrap().unwrap();
    check_same(&p, &s);
    g.order.lock().unwrap().take();
    assert_eq!(applier.join().unwrap(), 3);
}

/// A member that was primary may hold transactions whose entries it
/// proposed and nobody applied yet. Its image leaves out what they did:
/// the row one of them inserts is not there, the row it deletes still is.
#[test]
fn an_image_leaves_out_a_transaction_still_waiting_for_the_group() {
    let GroupWithTable { s, g, applier, p, t } = group_with_table();
    insert_ids(&p, &t, 1..3);
    let held = g.hold.lock().unwrap();
    let p2 = p.clone();
    let waiting = std::thread::spawn(move || {
        let t = p2.table("a").unwrap();
        p2.run(Isolation::Snapshot, 1, |txn| {
            let row = txn.get(&t, "a_pkey", &[Value::BigInt(1)])?.unwrap();
            txn.delete(&row)?;
            txn.insert(&t, vec![Value::BigInt(3), Value::BigInt(3), Value::Null])
        })
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!waiting.is_finished());
    // A new primary's records, applied here meanwhile, move the clock
    // past the waiting transaction's timestamp.
    p.raise_clock(1 << 40);
    let image = p.image().unwrap();
    let x = standby();
    x.install_image(&image).unwrap();
    let ids: Vec<String> = rows(&x, "a").into_iter().map(|r| r[0].clone()).collect();
    assert_eq!(ids, vec!["BigInt(1)".to_string(), "BigInt(2)".to_string()]);
    drop(held);
    waiting.join().unwrap().unwrap();
    check_same(&p, &s);
    g.order.lock().unwrap().take();
    applier.join().unwrap();
}
