//! Checkpoints, merge, log truncation, file states, parallel loading,
//! corrupt checkpoint files, and pausing the checkpoint worker.

mod common;

use std::path::Path;
use std::sync::Arc;

use centum_storage::{
    checkpoint::manifest::manifest_name,
    checkpoint::pair::{data_name, delta_name},
    FileKind, FileState, Fs, Manifest, Record, SimFs, StdFs, Storage,
};
use common::{names, recover, small_opts, Workload, DIR};

/// Inserts `n` rows of ~100 bytes in transactions of 10, checkpointing every
/// 100 rows; returns the workload (its model is the expected state).
fn fill(storage: &Storage, n: u64) -> Workload {
    let mut w = Workload::new(1);
    let mut ts = 0;
    for chunk in 0..n / 10 {
        ts += 1;
        let mut rec = Record::new(ts);
        for seq in 0..10u32 {
            let data = vec![seq as u8; 100];
            rec.insert(1, seq, &data);
            w.model.insert(centum_storage::RowId { table: 1, ts, seq }, data);
        }
        storage.commit(rec).unwrap();
        if chunk % 10 == 9 {
            storage.checkpoint().unwrap();
        }
    }
    w.max_ts = ts;
    w
}

/// Deletes every row of the model whose `seq % keep != 0`.
fn delete_most(storage: &Storage, w: &mut Workload, keep: u32) {
    let doomed: Vec<_> = w.model.keys().copied().filter(|id| id.seq % keep != 0).collect();
    for chunk in doomed.chunks(25) {
        w.max_ts += 1;
        let mut rec = Record::new(w.max_ts);
        for id in chunk {
            rec.delete(id.table, id.ts, id.seq);
            w.model.remove(id);
        }
        storage.commit(rec).unwrap();
    }
}

fn totals(storage: &Storage) -> (usize, u64) {
    let files = storage.files();
    let live: Vec<_> = files.iter().filter(|f| f.state == FileState::Active).collect();
    (live.len(), live.iter().map(|f| f.bytes).sum())
}

#[test]
fn merge_shrinks_files_and_recovery_gives_the_same_rows() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    let mut w = fill(&storage, 2000);
    storage.checkpoint().unwrap();
    let (files_before, bytes_before) = totals(&storage);
    assert!(files_before >= 20, "{files_before} active files");
    // Checkpoints have removed the log before the replay position.
    let segs = names(&fs).iter().filter(|n| n.starts_with("log-")).count();
    assert!(segs <= 2, "{segs} log segments left: {:?}", names(&fs));

    delete_most(&storage, &mut w, 5);
    let report = storage.merge().unwrap();
    assert!(report.merged_sources > 0);
    let (files_after, bytes_after) = totals(&storage);
    assert!(files_after < files_before / 2, "{files_before} -> {files_after} files");
    assert!(bytes_after < bytes_before / 2, "{bytes_before} -> {bytes_after} bytes");
    // Sources are gone from disk and from the list; nothing is left waiting.
    assert!(storage.files().iter().all(|f| f.state != FileState::MergedSource));
    let pairs_on_disk = names(&fs).iter().filter(|n| n.starts_with("data-")).count();
    assert_eq!(pairs_on_disk, storage.files().len() / 2);
    storage.close().unwrap();

    let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
    assert_eq!(got.rows, w.model);
    assert_eq!(got.max_ts, w.max_ts);
}

#[test]
fn file_states_are_visible() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    let mut rec = Record::new(1);
    rec.insert(1, 0, b"a");
    storage.commit(rec).unwrap();
    storage.log().flush().unwrap();
    // The worker runs on its own; wait for it to take the batch.
    let mut states = Vec::new();
    for _ in 0..1000 {
        states = storage.files().iter().map(|f| f.state).collect();
        if states.contains(&FileState::UnderConstruction) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(states.contains(&FileState::UnderConstruction), "{states:?}");
    assert!(states.contains(&FileState::PreCreated), "{states:?}");
    storage.checkpoint().unwrap();
    let files = storage.files();
    let active: Vec<_> = files.iter().filter(|f| f.state == FileState::Active).collect();
    assert_eq!(active.len(), 2);
    let data = active.iter().find(|f| f.kind == FileKind::Data).unwrap();
    assert_eq!((data.rows, data.min_ts, data.max_ts), (1, 1, 1));
}

#[test]
fn recovery_loads_pairs_on_several_threads() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    let w = fill(&storage, 3000);
    storage.close().unwrap();
    let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
    assert_eq!(got.rows, w.model);
    assert!(got.stats.pairs > 8);
    assert_eq!(got.stats.threads, 4);

    // Pairs are tiny and the machine may be busy, so a slow callback makes
    // sure one worker cannot finish them all before the others start.
    let rec = Storage::open(Arc::new(fs.crash_now()), DIR, small_opts()).unwrap();
    let threads = std::sync::Mutex::new(std::collections::HashSet::new());
    rec.load(&|_| {
        threads.lock().unwrap().insert(std::thread::current().id());
        std::thread::sleep(std::time::Duration::from_micros(200));
    })
    .unwrap();
    let n = threads.into_inner().unwrap().len();
    assert!(n > 1, "rows came from {n} thread(s)");
}

#[test]
fn corrupt_checkpoint_files_stop_recovery_with_file_and_offset() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    let mut w = fill(&storage, 300);
    delete_most(&storage, &mut w, 2);
    let report = storage.checkpoint().unwrap();
    storage.close().unwrap();
    let dir = Path::new(DIR);
    // The manifest and the files it names (the pre-created pair is not
    // named, and recovery removes it without reading it).
    let manifest = Manifest::read(&fs, &dir.join(manifest_name(report.manifest_seq))).unwrap();
    let mut victims = vec![manifest_name(report.manifest_seq)];
    for p in &manifest.pairs {
        victims.push(data_name(p.id));
        victims.push(delta_name(p.id));
    }
    assert!(victims.len() >= 5);
    let mut w2 = Workload::new(9);
    for name in &victims {
        let path = dir.join(name);
        let good = fs.read(&path).unwrap();
        for _ in 0..40 {
            let bit = w2.rand(good.len() as u64 * 8) as usize;
            let img = common::flipped(&fs, &path, &good, bit);
            let err = recover(Arc::new(img), small_opts()).err();
            let err = err.unwrap_or_else(|| panic!("{name}: bit {bit} flipped and accepted"));
            assert!(err.is_corruption(), "{name}: {err}");
            assert_eq!(err.sqlstate(), "XX001");
            assert!(err.to_string().contains(name.as_str()), "{name}: {err}");
        }
        // A short file too.
        let img = fs.crash_now();
        img.overwrite(&path, good[..good.len() - 1].to_vec());
        let err = recover(Arc::new(img), small_opts()).err().expect("short file accepted");
        assert!(err.to_string().contains(name.as_str()), "{err}");
    }
}

#[test]
fn an_older_complete_manifest_is_used_only_when_safe() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    let w = fill(&storage, 100);
    let first = storage.checkpoint().unwrap();
    storage.close().unwrap();
    let dir = Path::new(DIR);
    let old = fs.read(&dir.join(manifest_name(first.manifest_seq))).unwrap();

    // A newer manifest that is corrupt, beside a complete older one: the
    // older one names files that all exist and the log from its position is
    // whole, so recovery uses it.
    let img = fs.crash_now();
    let newer = dir.join(manifest_name(first.manifest_seq + 1));
    img.create(&newer).unwrap().write_at(0, &old[..old.len() - 3]).unwrap();
    let (_, got) = recover(Arc::new(img.clone()), small_opts()).unwrap();
    assert_eq!(got.rows, w.model);

    // Without the older one's files, it is refused.
    let victim = names(&img).into_iter().find(|n| n.starts_with("data-")).unwrap();
    img.remove(&dir.join(&victim)).unwrap();
    let err = recover(Arc::new(img), small_opts()).err().expect("unsafe fallback taken");
    assert!(err.is_corruption() && err.to_string().contains(&manifest_name(first.manifest_seq + 1)), "{err}");
}

#[test]
fn real_files_round_trip_with_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let fs: Arc<dyn Fs> = Arc::new(StdFs);
    let storage = Storage::open(fs.clone(), &dir, small_opts()).unwrap().start().unwrap();
    let mut w = Workload::new(4);
    for i in 0..300 {
        storage.commit(w.next_txn()).unwrap();
        if i % 50 == 49 {
            storage.merge().unwrap();
        }
    }
    storage.close().unwrap();
    let rec = Storage::open(fs.clone(), &dir, small_opts()).unwrap();
    let rows = std::sync::Mutex::new(common::Rows::new());
    rec.load(&|r| {
        rows.lock().unwrap().insert(r.id, r.data.to_vec());
    })
    .unwrap();
    assert_eq!(rows.into_inner().unwrap(), w.model);
    assert_eq!(rec.catalog().map(<[u8]>::to_vec), w.catalog);
    rec.start().unwrap().close().unwrap();
}

#[test]
fn a_large_transaction_is_split_into_blocks() {
    let fs = SimFs::new();
    let opts = common::small_opts();
    let storage = common::start(&fs, opts.clone());
    let mut rec = Record::new(1);
    for seq in 0..40u32 {
        rec.insert(1, seq, &vec![seq as u8; 64 << 10]);
    }
    storage.commit(rec).unwrap();
    let mut rec = Record::new(2);
    for seq in 0..40u32 {
        rec.delete(1, 1, seq);
    }
    rec.insert(1, 0, b"kept");
    storage.commit(rec).unwrap();
    storage.checkpoint().unwrap();
    storage.close().unwrap();
    let (_, got) = recover(Arc::new(fs.crash_now()), opts).unwrap();
    assert_eq!(got.rows.len(), 1);
}

/// Rows in data files, by the worker's published file list.
fn rows_in_files(storage: &Storage) -> u64 {
    storage.files().iter().filter(|f| f.kind == FileKind::Data).map(|f| f.rows).sum()
}

/// Bytes of every data and delta file on the simulated disk.
fn pair_bytes(fs: &SimFs) -> usize {
    let pair_file = |n: &String| n.starts_with("data-") || n.starts_with("delta-");
    names(fs)
        .iter()
        .filter(|n| pair_file(n))
        .filter_map(|n| fs.read(&Path::new(DIR).join(n)))
        .map(|f| f.len())
        .sum()
}

/// Lets a worker that wrongly took the queue do so: well past its idle
/// wake-up. Only used before asserting that nothing happened.
fn give_the_worker_time() {
    std::thread::sleep(std::time::Duration::from_millis(100));
}

#[test]
fn paused_checkpointing_queues_batches_and_catches_up() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    storage.pause_checkpoints(true);
    assert!(storage.checkpoints_paused());
    let mut w = Workload::new(11);
    for _ in 0..200 {
        storage.commit(w.next_txn()).unwrap();
    }
    give_the_worker_time();
    assert_eq!(rows_in_files(&storage), 0, "the worker took batches while paused");
    assert_eq!(pair_bytes(&fs), 0, "a pair file was written while paused");
    assert_eq!(storage.checkpoint_stats().bytes_written, 0);
    // A checkpoint asked for while paused processes everything queued, and
    // the pause goes on after it.
    storage.checkpoint().unwrap();
    let inserted = rows_in_files(&storage);
    let written = pair_bytes(&fs);
    assert!(inserted > 0 && written > 0, "the checkpoint left the queue unprocessed");
    assert!(storage.checkpoints_paused());
    for _ in 0..200 {
        storage.commit(w.next_txn()).unwrap();
    }
    give_the_worker_time();
    assert_eq!(rows_in_files(&storage), inserted, "paused again after the checkpoint");
    assert_eq!(pair_bytes(&fs), written, "paused again after the checkpoint");
    // Resuming lets the worker catch up by itself.
    storage.pause_checkpoints(false);
    assert!(!storage.checkpoints_paused());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while rows_in_files(&storage) == inserted {
        assert!(std::time::Instant::now() < deadline, "the worker never caught up");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let stats = storage.checkpoint_stats();
    assert_eq!(stats.checkpoints, 1);
    assert!(stats.bytes_written > 0 && stats.batches > 0);
    storage.close().unwrap();
    let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
    assert_eq!(got.rows, w.model);
}

#[test]
fn a_crash_while_paused_loses_no_commit() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    let mut w = Workload::new(12);
    for _ in 0..100 {
        storage.commit(w.next_txn()).unwrap();
    }
    storage.checkpoint().unwrap();
    storage.pause_checkpoints(true);
    for _ in 0..300 {
        storage.commit(w.next_txn()).unwrap();
    }
    // The crash image holds what was synced: the log, not the queue.
    let img = fs.crash_now();
    drop(storage);
    let (_, got) = recover(Arc::new(img), small_opts()).unwrap();
    assert_eq!(got.rows, w.model);
    assert_eq!(got.catalog, w.catalog);
}

/// With no size trigger, a checkpoint still comes once the interval has
/// passed and enough log has come since the last one; an idle log takes
/// none.
#[test]
fn checkpoints_come_by_time_once_enough_log_has_come() {
    let mut opts = small_opts();
    opts.log.segment_size = 4 << 20;
    opts.checkpoint.auto_checkpoint_interval = Some(std::time::Duration::from_millis(300));
    let fs = SimFs::new();
    let storage = common::start(&fs, opts);
    let mut ts = 0;
    // 1.5 MiB of log in records of 20 rows of 4 KiB.
    for _ in 0..20 {
        ts += 1;
        let mut rec = Record::new(ts);
        for seq in 0..20u32 {
            rec.insert(1, seq, &vec![seq as u8; 4096]);
        }
        storage.commit(rec).unwrap();
    }
    // Past the interval, one more batch makes the worker look again (a
    // slow machine may have taken one during the fill already).
    std::thread::sleep(std::time::Duration::from_millis(400));
    ts += 1;
    let mut rec = Record::new(ts);
    rec.insert(1, 0, &[1; 100]);
    storage.commit(rec).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while storage.checkpoint_stats().checkpoints == 0 {
        assert!(std::time::Instant::now() < deadline, "no checkpoint by time");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Now little log comes: however long it waits, no further checkpoint.
    storage.checkpoint().unwrap();
    let after = storage.checkpoint_stats().checkpoints;
    for _ in 0..3 {
        std::thread::sleep(std::time::Duration::from_millis(350));
        ts += 1;
        let mut rec = Record::new(ts);
        rec.insert(1, 1, &[2; 100]);
        storage.commit(rec).unwrap();
    }
    give_the_worker_time();
    assert_eq!(storage.checkpoint_stats().checkpoints, after, "a checkpoint for a few hundred bytes of log");
}

/// One transaction of 4 MB (a bulk load) fills several pairs, cut at the
/// pair size inside its batch; a later transaction deletes rows from all
/// of them; a restart loads every pair, each on its own thread, with the
/// deletions applied.
#[test]
fn a_bulk_load_fills_several_pairs_that_load_side_by_side() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    let mut load = Record::new(1);
    let rows = 4_000u32;
    for seq in 0..rows {
        load.insert(1, seq, &[(seq % 253) as u8; 1000]);
    }
    storage.commit(load).unwrap();
    let mut deletes = Record::new(2);
    for seq in (0..rows).step_by(7) {
        deletes.delete(1, 1, seq);
    }
    storage.commit(deletes).unwrap();
    storage.checkpoint().unwrap();
    storage.close().unwrap();
    let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
    let deleted = (0..rows).step_by(7).count();
    assert_eq!(got.rows.len(), rows as usize - deleted);
    assert!(got.rows.keys().all(|id| id.seq % 7 != 0 && id.ts == 1));
    assert!(got.stats.pairs >= 3, "{} pairs", got.stats.pairs);
    assert_eq!(got.stats.tail_rows, 0);
    assert_eq!(got.stats.checkpoint_rows, (rows as usize - deleted) as u64);
    // Workers started: one per pair up to the limit. Which of them gets to
    // load a pair depends on the scheduler (a busy machine can let the
    // first finish them all), so rows coming from several threads is
    // checked with a slow callback in
    // `recovery_loads_pairs_on_several_threads`.
    assert!(got.stats.threads > 1, "{} threads", got.stats.threads);
}
