//! Durability through the engine: what a restart brings back.
//!
//! - crash images: a workload of inserts, updates, deletes and schema
//!   changes on a simulated file system, with checkpoints and merges; for
//!   every sync N, the state a crash right after it leaves is recovered and
//!   must equal the model after exactly the acknowledged commits (a commit
//!   in flight across sync N may go either way);
//! - SCHEMA_ONLY tables: definition back, rows gone, nothing logged;
//! - a full disk or a failing write under the log: the commits it meets fail
//!   with 53100 or 58030 and are rolled back, SCHEMA_ONLY commits and reads
//!   go on, and once writes succeed again so do commits; a restart keeps
//!   exactly the acknowledged commits;
//! - a failed sync: the commit that meets it fails, every later commit is
//!   refused until restart, reads go on, and a restart keeps every
//!   acknowledged commit;
//! - delayed durability, damaged checkpoint files, and a real directory
//!   reopened several times.

use centum_engine::storage::{CheckpointOptions, Fs, Options as StorageOptions, SimFs};
use centum_engine::{
    Database, Direction, Durability, Error, IndexDef, Isolation, KeyRange, Options, Table, TableDef,
};
use centum_types::{DataType, Value};
use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

mod common;
use common::{sim_options, small_storage, DIR};

fn accounts_def() -> TableDef {
    TableDef::new("accounts")
        .column_not_null("id", DataType::BigInt)
        .column("owner", DataType::Text)
        .column_not_null("balance", DataType::BigInt)
        .index(IndexDef::hash("accounts_pkey", &["id"], 64).unique())
        .index(IndexDef::range("accounts_owner", &["owner", "id"]))
}

fn cache_def() -> TableDef {
    TableDef::new("cache")
        .column_not_null("k", DataType::BigInt)
        .column("v", DataType::Text)
        .index(IndexDef::hash("cache_k", &["k"], 64))
        .durability(Durability::SchemaOnly)
}

type Accounts = BTreeMap<i64, (String, i64)>;

/// What a database holds, read through every access path, with the paths
/// checked against each other.
#[derive(Debug, PartialEq, Clone)]
struct State {
    accounts: Accounts,
    indexes: Vec<String>,
    cache_rows: usize,
}

fn read_state(db: &Database) -> State {
    let t = db.table("accounts").expect("accounts");
    let cache = db.table("cache").expect("cache");
    db.run(Isolation::Snapshot, 1, |txn| {
        let mut accounts = Accounts::new();
        for r in txn.scan(&t)? {
            let owner = match r.get(1) {
                Value::Text(s) => s.to_string(),
                v => panic!("owner {v:?}"),
            };
            let prev = accounts.insert(r.int(0).unwrap(), (owner, r.int(2).unwrap()));
            assert!(prev.is_none(), "two live versions of one row");
        }
        for (&id, (owner, balance)) in &accounts {
            let row = txn.get(&t, "accounts_pkey", &[Value::BigInt(id)])?.expect("hash index lost a row");
            assert_eq!(row.int(2), Some(*balance));
            let by_owner =
                txn.lookup(&t, "accounts_owner", &[Value::Text(owner.as_str().into()), Value::BigInt(id)])?;
            assert_eq!(by_owner.len(), 1, "range index disagrees for {id}");
        }
        let ordered: Vec<(String, i64)> = txn
            .range(&t, "accounts_owner", &KeyRange::prefix(vec![]), Direction::Forward)?
            .map(|r| (format!("{:?}", r.get(1)), r.int(0).unwrap()))
            .collect();
        assert_eq!(ordered.len(), accounts.len(), "range index holds other rows than the table");
        assert!(ordered.windows(2).all(|w| w[0] <= w[1]));
        let cache_rows = txn.scan(&cache)?.count();
        let mut indexes = t.index_names();
        indexes.sort();
        Ok(State { accounts, indexes, cache_rows })
    })
    .expect("read")
}

/// A deterministic stream of transactions and schema changes against the
/// model.
struct Workload {
    rng: u64,
    next_id: i64,
    model: State,
}

impl Workload {
    fn rand(&mut self, n: u64) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % n
    }

    fn pick(&mut self) -> Option<i64> {
        let n = self.model.accounts.len() as u64;
        if n == 0 {
            return None;
        }
        let i = self.rand(n) as usize;
        self.model.accounts.keys().nth(i).copied()
    }

    /// Runs step `i` on `db`, updating the model once it is acknowledged.
    fn step(&mut self, db: &Database, i: usize) {
        match i {
            40 => {
                db.create_index("accounts", IndexDef::range("accounts_balance", &["balance"])).unwrap();
                self.model.indexes.push("accounts_balance".into());
                self.model.indexes.sort();
                return;
            }
            110 => {
                db.drop_index("accounts_balance").unwrap();
                self.model.indexes.retain(|n| n != "accounts_balance");
                return;
            }
            _ => {}
        }
        let t = db.table("accounts").unwrap();
        let cache = db.table("cache").unwrap();
        let mut next = self.model.accounts.clone();
        let txn = db.begin(Isolation::Snapshot).unwrap();
        for _ in 0..1 + self.rand(4) {
            match self.rand(6) {
                0 | 1 => {
                    let id = self.next_id;
                    self.next_id += 1;
                    let owner = format!("owner{}", self.rand(5));
                    let balance = self.rand(1000) as i64;
                    insert(&txn, &t, id, &owner, balance);
                    next.insert(id, (owner, balance));
                    // Sometimes change the new row again in the same
                    // transaction: only the final image may be logged.
                    if self.rand(3) == 0 {
                        let row = txn.get(&t, "accounts_pkey", &[Value::BigInt(id)]).unwrap().unwrap();
                        let owner = format!("owner{}", self.rand(5));
                        let vals =
                            vec![Value::BigInt(id), Value::Text(owner.as_str().into()), Value::BigInt(7)];
                        txn.update(&row, vals).unwrap();
                        next.insert(id, (owner, 7));
                    }
                }
                2 | 3 => {
                    let Some(id) = self.pick() else { continue };
                    let Some(row) = txn.get(&t, "accounts_pkey", &[Value::BigInt(id)]).unwrap() else {
                        continue;
                    };
                    let delta = self.rand(100) as i64 - 50;
                    let (owner, balance) = next[&id].clone();
                    let vals = vec![row.get(0), row.get(1), Value::BigInt(balance + delta)];
                    txn.update(&row, vals).unwrap();
                    next.insert(id, (owner, balance + delta));
                }
                4 => {
                    let Some(id) = self.pick() else { continue };
                    let Some(row) = txn.get(&t, "accounts_pkey", &[Value::BigInt(id)]).unwrap() else {
                        continue;
                    };
                    txn.delete(&row).unwrap();
                    next.remove(&id);
                }
                _ => {
                    let k = self.rand(1 << 20) as i64;
                    txn.insert(&cache, vec![Value::BigInt(k), Value::Text("x".into())]).unwrap();
                    self.model.cache_rows += 1;
                }
            }
        }
        txn.commit().unwrap();
        self.model.accounts = next;
    }
}

fn insert(txn: &centum_engine::Transaction, t: &Arc<Table>, id: i64, owner: &str, balance: i64) {
    txn.insert(t, vec![Value::BigInt(id), Value::Text(owner.into()), Value::BigInt(balance)]).unwrap();
}

/// A new database on `fs` with the accounts and cache tables.
fn open_with_tables(fs: &SimFs) -> Database {
    let db = Database::open(sim_options(fs)).unwrap();
    db.create_table(accounts_def()).unwrap();
    db.create_table(cache_def()).unwrap();
    db
}

/// The durable part of a state: SCHEMA_ONLY rows do not survive.
fn durable(s: &State) -> State {
    State { cache_rows: 0, ..s.clone() }
}

#[test]
fn every_crash_image_holds_exactly_the_acknowledged_commits() {
    crash_images(false);
}

/// The same with `wal_level = logical` (deletes logged with their old
/// images) and a replication slot confirmed now and then: every image also
/// recovers the slot at a position it was confirmed to, with the log from
/// there on readable.
#[test]
fn every_crash_image_keeps_a_slot_at_a_confirmed_position_with_its_log() {
    crash_images(true);
}

fn crash_images(logical: bool) {
    let options = |fs: &SimFs| Options { logical, ..sim_options(fs) };
    let fs = SimFs::new();
    fs.record_images();
    let db = Database::open(options(&fs)).unwrap();
    db.create_table(accounts_def()).unwrap();
    db.create_table(cache_def()).unwrap();
    let mut confirmed = Vec::new();
    if logical {
        let at = db.log_end().unwrap();
        let slot = centum_engine::storage::Slot {
            name: "s".into(),
            plugin: "test_decoding".into(),
            database: "postgres".into(),
            confirmed: at,
            temporary: false,
            active_pid: None,
        };
        assert!(db.slots().unwrap().create(slot).unwrap());
        confirmed.push(at);
    }
    let mut w = Workload {
        rng: 0x9E37_79B9_7F4A_7C15,
        next_id: 1,
        model: State { accounts: Accounts::new(), indexes: vec![], cache_rows: 0 },
    };
    w.model.indexes = vec!["accounts_owner".into(), "accounts_pkey".into()];
    // (syncs before the step began, syncs when it returned, durable state after)
    let start = fs.syncs();
    let mut steps: Vec<(u64, u64, State)> = vec![(0, start, durable(&w.model))];
    for i in 0..160 {
        let before = fs.syncs();
        w.step(&db, i);
        let after = fs.syncs();
        steps.push((before, after, durable(&w.model)));
        if i % 25 == 24 {
            db.checkpoint().unwrap();
        }
        if i % 60 == 59 {
            db.merge().unwrap();
        }
        if logical && i % 20 == 10 {
            let at = db.log_end().unwrap();
            db.slots().unwrap().confirm("s", at).unwrap();
            confirmed.push(at);
        }
    }
    assert_eq!(durable(&read_state(&db)), durable(&w.model));
    drop(db);
    let images = fs.image_count();
    assert!(images > 150, "only {images} syncs");
    let mut matched = vec![0usize; steps.len()];
    for n in 0..images {
        let n = n as u64;
        // The tables exist once their creation returned.
        if n < start {
            continue;
        }
        let lo = steps.iter().filter(|s| s.1 <= n).count() - 1;
        let hi = steps.iter().filter(|s| s.0 < n).count().max(lo);
        let image = fs.crash_image(n as usize).unwrap();
        let db = Database::open(options(&image)).unwrap_or_else(|e| panic!("image {n}: {e}"));
        let got = read_state(&db);
        if logical {
            let slot = db.slots().unwrap().get("s").unwrap_or_else(|| panic!("image {n}: the slot is gone"));
            assert!(confirmed.contains(&slot.confirmed), "image {n}: slot at {:?}", slot.confirmed);
            let mut feed = db.changes(slot.confirmed).unwrap();
            while !feed.poll().unwrap_or_else(|e| panic!("image {n}: the slot's log: {e}")).is_empty() {}
        }
        let k = (lo..=hi)
            .find(|&k| steps[k].2 == got)
            .unwrap_or_else(|| panic!("image {n}: state matches no step in {lo}..={hi}: {got:?}"));
        matched[k] += 1;
        // The recovered database takes commits, and they survive too.
        let t = db.table("accounts").unwrap();
        db.run(Isolation::Snapshot, 1, |txn| {
            insert(txn, &t, -1, "after", 1);
            Ok(())
        })
        .unwrap();
        drop(db);
        let again = Database::open(options(&image.crash_now())).unwrap();
        let mut want = got.clone();
        want.accounts.insert(-1, ("after".into(), 1));
        assert_eq!(read_state(&again), want, "image {n}: a commit after recovery was lost");
    }
    assert!(matched.iter().filter(|&&m| m > 0).count() > 100, "too few distinct states recovered");
}

#[test]
fn schema_only_tables_keep_their_definition_and_lose_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || Options { data_dir: Some(dir.path().into()), ..Options::default() };
    {
        let db = Database::open(opts()).unwrap();
        let cache = db.create_table(cache_def()).unwrap();
        let before = db.log_stats().unwrap();
        for k in 0..1000 {
            db.run(Isolation::Snapshot, 1, |txn| txn.insert(&cache, vec![Value::BigInt(k), Value::Null]))
                .unwrap();
        }
        let after = db.log_stats().unwrap();
        assert_eq!(after.commits, before.commits, "a SCHEMA_ONLY commit reached the log");
        assert_eq!(after.bytes, before.bytes);
        assert_eq!(db.begin(Isolation::Snapshot).unwrap().scan(&cache).unwrap().count(), 1000);
    }
    let db = Database::open(opts()).unwrap();
    let cache = db.table("cache").unwrap();
    assert_eq!(cache.def(), cache_def().durability(Durability::SchemaOnly));
    let txn = db.begin(Isolation::Snapshot).unwrap();
    assert_eq!(txn.scan(&cache).unwrap().count(), 0);
    drop(txn);
    db.run(Isolation::Snapshot, 1, |txn| txn.insert(&cache, vec![Value::BigInt(1), Value::Null])).unwrap();
    let txn = db.begin(Isolation::Snapshot).unwrap();
    assert!(txn.get(&cache, "cache_k", &[Value::BigInt(1)]).unwrap().is_some());
}

/// Commits one account row; the commit's result.
fn commit_one(db: &Database, id: i64) -> Result<(), Error> {
    let t = db.table("accounts")?;
    db.run(Isolation::Snapshot, 1, |txn| {
        insert(txn, &t, id, "o", id);
        Ok(())
    })
}

fn ids(db: &Database) -> Vec<i64> {
    read_state(db).accounts.keys().copied().collect()
}

#[test]
fn a_failed_log_sync_stops_commits_until_restart_and_loses_nothing_acknowledged() {
    // A failed fdatasync is final: the kernel may have dropped the pages it
    // could not write, and a later sync would not say so.
    let fs = SimFs::new();
    let db = open_with_tables(&fs);
    for id in 0..20 {
        commit_one(&db, id).unwrap();
    }
    fs.fail_sync(1);
    let e = commit_one(&db, 20).unwrap_err();
    assert_eq!(e.sqlstate(), "58030", "{e}");
    assert!(db.log_failed());
    // Every later commit is refused, SCHEMA_ONLY ones and DDL included,
    // with a message that says why.
    for attempt in
        [commit_one(&db, 21), db.create_table(TableDef::new("x").column("a", DataType::Integer)).map(drop)]
    {
        let e = attempt.unwrap_err();
        assert_eq!(e.sqlstate(), "58030");
        assert!(e.to_string().contains("no more commits"), "{e}");
    }
    let cache = db.table("cache").unwrap();
    let e = db.run(Isolation::Snapshot, 1, |txn| txn.insert(&cache, vec![Value::BigInt(1), Value::Null]));
    assert_eq!(e.unwrap_err().sqlstate(), "58030");
    // Reads go on, and see exactly the acknowledged commits.
    assert_eq!(ids(&db), (0..20).collect::<Vec<_>>());
    let image = fs.crash_now();
    drop(db);
    let db = Database::open(sim_options(&image)).unwrap();
    let got = ids(&db);
    // The failed commit's fate is decided by what reached the disk.
    assert!(got == (0..20).collect::<Vec<_>>() || got == (0..21).collect::<Vec<_>>(), "{got:?}");
    commit_one(&db, 100).unwrap();
}

/// Rows of the accounts table, counted by a plain scan.
fn scanned_rows(db: &Database) -> usize {
    let t = db.table("accounts").unwrap();
    db.begin(Isolation::Snapshot).unwrap().scan(&t).unwrap().count()
}

#[test]
fn a_full_disk_fails_commits_until_space_returns_and_keeps_exactly_the_acknowledged() {
    let fs = SimFs::new();
    let db = open_with_tables(&fs);
    for id in 0..20 {
        commit_one(&db, id).unwrap();
    }
    let cache = db.table("cache").unwrap();
    for (kind, code) in [(ErrorKind::StorageFull, "53100"), (ErrorKind::Other, "58030")] {
        fs.fail_writes("log-", kind);
        for attempt in 0..3 {
            let e = commit_one(&db, 20).unwrap_err();
            assert_eq!(e.sqlstate(), code, "attempt {attempt}: {e}");
            // DDL too: the table is not created.
            let e = db.create_table(TableDef::new("x").column("a", DataType::Integer)).unwrap_err();
            assert_eq!(e.sqlstate(), code, "{e}");
            assert!(db.table("x").is_err());
        }
        assert!(!db.log_failed(), "a failed write stopped the log");
        // Nothing logged, nothing refused: SCHEMA_ONLY commits go on.
        db.run(Isolation::Snapshot, 1, |txn| txn.insert(&cache, vec![Value::BigInt(1), Value::Null]))
            .unwrap();
        // The refused transactions were rolled back: readers see exactly
        // the acknowledged commits, and their keys are free.
        assert_eq!(ids(&db), (0..20).collect::<Vec<_>>());
        assert_eq!(scanned_rows(&db), 20);
        // A crash during the outage recovers exactly the acknowledged ones.
        let image = fs.crash_now();
        assert_eq!(ids(&Database::open(sim_options(&image)).unwrap()), (0..20).collect::<Vec<_>>());
        fs.heal();
    }
    // Space is back: commits (of the same key, too) and DDL go on by
    // themselves, without a restart.
    for id in 20..40 {
        commit_one(&db, id).unwrap();
    }
    db.create_table(TableDef::new("x").column("a", DataType::Integer)).unwrap();
    db.checkpoint().unwrap();
    for id in 40..45 {
        commit_one(&db, id).unwrap();
    }
    let image = fs.crash_now();
    drop(db);
    let db = Database::open(sim_options(&image)).unwrap();
    assert_eq!(ids(&db), (0..45).collect::<Vec<_>>());
    assert_eq!(scanned_rows(&db), 45, "a row came back twice");
    assert!(db.table("x").is_ok());
}

#[test]
fn checkpoints_on_a_full_disk_fail_and_commits_go_on() {
    let fs = SimFs::new();
    let db = open_with_tables(&fs);
    for id in 0..20 {
        commit_one(&db, id).unwrap();
    }
    for prefix in ["data-", "delta-", "manifest-"] {
        fs.fail_writes(prefix, ErrorKind::StorageFull);
    }
    for id in 20..40 {
        commit_one(&db, id).unwrap();
    }
    let e = db.checkpoint().unwrap_err();
    assert_eq!(e.sqlstate(), "53100", "{e}");
    assert!(!db.log_failed());
    fs.heal();
    db.checkpoint().unwrap();
    for id in 40..50 {
        commit_one(&db, id).unwrap();
    }
    let image = fs.crash_now();
    drop(db);
    let db = Database::open(sim_options(&image)).unwrap();
    assert_eq!(ids(&db), (0..50).collect::<Vec<_>>());
    assert_eq!(scanned_rows(&db), 50);
}

#[test]
fn delayed_commits_reach_the_disk_in_log_order() {
    let fs = SimFs::new();
    fs.set_sync_delay(Duration::from_millis(2));
    let db = open_with_tables(&fs);
    let t = db.table("accounts").unwrap();
    for id in 0..50 {
        let mut txn = db.begin(Isolation::Snapshot).unwrap();
        txn.set_delayed_durability(true);
        insert(&txn, &t, id, "d", 0);
        txn.commit().unwrap();
    }
    // A crash now may lose a suffix of the delayed commits, never a gap.
    let early = ids(&Database::open(sim_options(&fs.crash_now())).unwrap());
    assert_eq!(early, (0..early.len() as i64).collect::<Vec<_>>());
    // A synchronous commit makes everything before it durable too.
    commit_one(&db, 50).unwrap();
    let got = ids(&Database::open(sim_options(&fs.crash_now())).unwrap());
    assert_eq!(got, (0..51).collect::<Vec<_>>());
    // And the flusher bounds the window by itself.
    for id in 51..60 {
        let mut txn = db.begin(Isolation::Snapshot).unwrap();
        txn.set_delayed_durability(true);
        insert(&txn, &t, id, "d", 0);
        txn.commit().unwrap();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let got = ids(&Database::open(sim_options(&fs.crash_now())).unwrap());
        if got.len() == 60 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "delayed commits never flushed");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_damaged_checkpoint_file_stops_recovery_with_its_name() {
    let fs = SimFs::new();
    let db = open_with_tables(&fs);
    for id in 0..200 {
        commit_one(&db, id).unwrap();
    }
    db.checkpoint().unwrap();
    drop(db);
    let data = fs
        .list(Path::new(DIR))
        .unwrap()
        .into_iter()
        .map(|name| Path::new(DIR).join(name))
        .find(|p| p.extension().is_some_and(|e| e == "cdat") && fs.read(p).is_some_and(|b| b.len() > 200))
        .expect("a data file");
    let mut bytes = fs.read(&data).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x10;
    fs.overwrite(&data, bytes);
    let e = Database::open(sim_options(&fs)).err().expect("recovery must refuse");
    assert_eq!(e.sqlstate(), "XX001", "{e}");
    let name = data.file_name().unwrap().to_string_lossy().to_string();
    assert!(e.to_string().contains(&name), "{e} does not name {name}");
}

#[test]
fn a_real_directory_survives_reopening_with_checkpoints_between() {
    let dir = tempfile::tempdir().unwrap();
    let opts = |p: &Path| Options {
        data_dir: Some(p.into()),
        storage: StorageOptions {
            checkpoint: CheckpointOptions { data_file_size: 64 << 10, ..small_storage().checkpoint },
            ..StorageOptions::default()
        },
        ..Options::default()
    };
    let mut want = Accounts::new();
    for round in 0..4i64 {
        let db = Database::open(opts(dir.path())).unwrap();
        if round == 0 {
            db.create_table(accounts_def()).unwrap();
            db.create_table(cache_def()).unwrap();
        } else {
            let stats = db.recovery_stats().unwrap();
            assert_eq!(stats.checkpoint_rows + stats.tail_rows, want.len() as u64);
        }
        assert_eq!(read_state(&db).accounts, want, "round {round}");
        let t = db.table("accounts").unwrap();
        for chunk in 0..20i64 {
            db.run(Isolation::Snapshot, 1, |txn| {
                for i in 0..100 {
                    let id = round * 10_000 + chunk * 100 + i;
                    insert(txn, &t, id, &format!("o{}", id % 7), id);
                }
                Ok(())
            })
            .unwrap();
            for i in 0..100 {
                let id = round * 10_000 + chunk * 100 + i;
                want.insert(id, (format!("o{}", id % 7), id));
            }
        }
        // Delete most of an earlier round so merging has work.
        db.run(Isolation::Snapshot, 1, |txn| {
            let doomed: Vec<_> = txn.scan(&t)?.filter(|r| r.int(0).unwrap() % 10 != 0).collect();
            for r in doomed {
                let id = r.int(0).unwrap();
                if id < round * 10_000 {
                    txn.delete(&r)?;
                    want.remove(&id);
                }
            }
            Ok(())
        })
        .unwrap();
        if round % 2 == 1 {
            db.checkpoint().unwrap();
            db.merge().unwrap();
            assert!(!db.checkpoint_files().is_empty());
        }
    }
    let db = Database::open(opts(dir.path())).unwrap();
    assert_eq!(read_state(&db).accounts, want);
}
