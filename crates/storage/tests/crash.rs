//! Crash images: run transactions through the log with checkpoints and
//! merges on `SimFs`, then for every sync N recover the state a crash right
//! after the Nth sync leaves.
//!
//! The rule checked: a commit whose call *returned* before sync N was
//! counted must be present; a commit whose call *began* after sync N must be
//! absent; a commit in flight across sync N may be either (its record may
//! have been made durable by that sync before the call returned). Commits
//! run one at a time, so the recovered state must be exactly the model after
//! some prefix of k transactions, with k in that window, and the catalog
//! and largest timestamp must match that prefix.

mod common;

use std::sync::Arc;

use centum_storage::{Record, RowId, SimFs, Storage};
use common::{recover, small_opts, Rows, Workload};

struct Step {
    before: u64,
    after: u64,
}

#[test]
fn every_crash_image_holds_exactly_the_acknowledged_commits() {
    let fs = SimFs::new();
    fs.record_images();
    let storage = common::start(&fs, small_opts());
    let mut w = Workload::new(7);
    let mut states: Vec<(Rows, Option<Vec<u8>>, u64)> = vec![(Rows::new(), None, 0)];
    let mut steps = Vec::new();
    for i in 0..150 {
        let rec = w.next_txn();
        let before = fs.syncs();
        storage.commit(rec).unwrap();
        let after = fs.syncs();
        steps.push(Step { before, after });
        states.push((w.model.clone(), w.catalog.clone(), w.max_ts));
        if i % 20 == 19 {
            storage.checkpoint().unwrap();
        }
        if i % 50 == 49 {
            storage.merge().unwrap();
        }
    }
    storage.close().unwrap();
    let images = fs.image_count();
    assert!(images > 100, "only {images} syncs");

    for n in 0..images {
        let n64 = n as u64;
        let lo = steps.iter().filter(|s| s.after <= n64).count();
        let hi = steps.iter().filter(|s| s.before < n64).count();
        let image = fs.crash_image(n).unwrap();
        let (recovery, got) = recover(Arc::new(image.clone()), small_opts())
            .unwrap_or_else(|e| panic!("image {n}: recovery failed: {e}"));
        let k = (lo..=hi)
            .find(|&k| states[k].0 == got.rows)
            .unwrap_or_else(|| panic!("image {n}: rows match no prefix in {lo}..={hi}"));
        assert_eq!(got.catalog, states[k].1, "image {n}: catalog");
        assert_eq!(got.max_ts, states[k].2, "image {n}: max commit ts");

        // Every few images, go on from the recovered state: the log must
        // take appends after its cut-off tail, and a second recovery must
        // see them.
        if n % 9 == 0 {
            let storage = recovery.start().unwrap();
            let mut rec = Record::new(1_000_000);
            rec.insert(99, 0, b"after crash");
            storage.commit(rec).unwrap();
            storage.checkpoint().unwrap();
            let mut rec = Record::new(1_000_001);
            rec.insert(99, 1, b"after checkpoint");
            storage.commit(rec).unwrap();
            storage.close().unwrap();
            let (_, again) = recover(Arc::new(image.crash_now()), small_opts()).unwrap();
            let mut want = states[k].0.clone();
            for (seq, data) in [(0u32, &b"after crash"[..]), (1, b"after checkpoint")] {
                let id = centum_storage::RowId { table: 99, ts: 1_000_000 + seq as u64, seq };
                want.insert(id, data.to_vec());
            }
            assert_eq!(again.rows, want, "image {n}: state after going on");
        }
    }
}

/// One committer's history: its rows after each of its transactions, and
/// the sync counter around each commit call.
struct History {
    states: Vec<Rows>,
    steps: Vec<Step>,
}

/// Committer `t` of the concurrent run: its own table, its own rows.
fn committer(t: u64, fs: &SimFs, storage: &Storage, ts: &std::sync::atomic::AtomicU64) -> History {
    let mut w = Workload::new(100 + t);
    let mut rows = Rows::new();
    let mut h = History { states: vec![Rows::new()], steps: Vec::new() };
    for _ in 0..40 {
        let commit_ts = ts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut rec = Record::new(commit_ts);
        for seq in 0..1 + w.rand(3) as u32 {
            let id = RowId { table: 10 + t, ts: commit_ts, seq };
            let data = format!("{id:?}").into_bytes();
            rec.insert(id.table, seq, &data);
            rows.insert(id, data);
        }
        if w.rand(2) == 0 && rows.len() > 3 {
            let victim = *rows.keys().nth(w.rand(rows.len() as u64) as usize).unwrap();
            rows.remove(&victim);
            rec.delete(victim.table, victim.ts, victim.seq);
        }
        let before = fs.syncs();
        storage.commit(rec).unwrap();
        h.steps.push(Step { before, after: fs.syncs() });
        h.states.push(rows.clone());
    }
    h
}

#[test]
fn concurrent_committers_crash_images() {
    // Each committer's transactions are sequential, so in any crash image
    // its rows are its state after some prefix of them, within the same
    // window as above; committers are independent of each other.
    let fs = SimFs::new();
    fs.record_images();
    let storage = common::start(&fs, small_opts());
    let ts = std::sync::atomic::AtomicU64::new(1);
    let histories: Vec<History> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                s.spawn({
                    let (fs, storage, ts) = (&fs, &storage, &ts);
                    move || committer(t, fs, storage, ts)
                })
            })
            .collect();
        for _ in 0..5 {
            std::thread::sleep(std::time::Duration::from_millis(2));
            storage.checkpoint().unwrap();
        }
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    storage.merge().unwrap();
    storage.close().unwrap();
    for n in 0..fs.image_count() {
        let n64 = n as u64;
        let (_, got) = recover(Arc::new(fs.crash_image(n).unwrap()), small_opts())
            .unwrap_or_else(|e| panic!("image {n}: {e}"));
        for (t, h) in histories.iter().enumerate() {
            let mine: Rows = got
                .rows
                .iter()
                .filter(|(id, _)| id.table == 10 + t as u64)
                .map(|(k, v)| (*k, v.clone()))
                .collect();
            let lo = h.steps.iter().filter(|s| s.after <= n64).count();
            let hi = h.steps.iter().filter(|s| s.before < n64).count();
            assert!(
                (lo..=hi).any(|k| h.states[k] == mine),
                "image {n}, committer {t}: rows match no prefix in {lo}..={hi}"
            );
        }
    }
}
