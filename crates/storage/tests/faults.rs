//! Injected I/O errors.
//!
//! * A failed *write* to the log fails only the commits of that flush, with
//!   the write's error (`53100` for a full disk, `58030` otherwise), and
//!   the synchronous commits appended while it was under way (`40001`: they
//!   may have used its transactions' changes); the log cuts the partial
//!   batch off and goes on, so once writes succeed again commits do too,
//!   and recovery returns exactly the acknowledged commits. A record whose
//!   transaction may depend on a failed one is refused (`40001`).
//! * A failed *sync* of the log fails that commit (in doubt: it may or may
//!   not come back) and every later one with "log failed", even though the
//!   file system works again, until a restart.
//! * Checkpoint failures never fail a commit. After a failed write the
//!   checkpoint worker catches up at the next checkpoint; after a failed
//!   sync it stops. Either way a crash recovers every acknowledged commit.

mod common;

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use centum_storage::{CheckpointOptions, Durability, Error, LogOptions, Options, Record, SimFs, Storage};
use common::{names, recover, small_opts, Rows, Workload, DIR};

/// What one run met.
#[derive(Default)]
struct Met {
    failed_commits: usize,
    failed_checkpoints: usize,
    /// The checkpoint worker fell behind (it may have caught up unseen).
    ckpt_behind: bool,
    log_stopped: bool,
}

/// Runs 60 transactions with checkpoints after `arm` has armed a failure;
/// checks the rules above and that a crash afterwards recovers exactly the
/// acknowledged commits (plus, after a failed sync, maybe the one in
/// doubt).
fn run(arm: impl Fn(&SimFs)) -> Met {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    arm(&fs);
    let mut w = Workload::new(5);
    let mut met = Met::default();
    let mut in_doubt: Option<Rows> = None;
    for i in 0..60 {
        let before = w.model.clone();
        let rec = w.next_txn();
        match storage.commit(rec) {
            Ok(()) => assert!(!met.log_stopped, "txn {i}: a commit succeeded after the log failed"),
            Err(e) => {
                met.failed_commits += 1;
                assert_eq!(e.sqlstate(), "58030", "{e}");
                if storage.is_failed() {
                    if !met.log_stopped {
                        in_doubt = Some(w.model.clone());
                    } else {
                        assert!(matches!(e, Error::LogFailed(_)), "txn {i}: {e}");
                    }
                    met.log_stopped = true;
                } else {
                    assert!(matches!(e, Error::Io { .. }), "txn {i}: {e}");
                }
                // Not acknowledged: the model goes back.
                w.model = before;
            }
        }
        if i % 10 == 9 {
            if let Err(e) = storage.checkpoint() {
                assert!(matches!(e, Error::Io { .. } | Error::CheckpointFailed(_)), "{e}");
                met.failed_checkpoints += 1;
            }
        }
    }
    met.ckpt_behind = storage.checkpoint_stats().fell_behind > 0;
    drop(storage);
    let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
    let ok = got.rows == w.model || in_doubt.is_some_and(|d| got.rows == d);
    assert!(ok, "recovered state is not the acknowledged commits");
    met
}

#[test]
fn a_failed_write_fails_only_what_it_carried_and_loses_nothing() {
    let (mut logs, mut ckpts) = (0, 0);
    for n in 1..120 {
        let met = run(|fs| fs.fail_write(n));
        assert!(!met.log_stopped, "write {n}: a failed write stopped the log");
        assert!(met.failed_commits <= 1, "write {n}: {} commits failed", met.failed_commits);
        // A failed checkpoint write is caught up at the next checkpoint.
        assert!(met.failed_checkpoints <= 1, "write {n}: {} checkpoints failed", met.failed_checkpoints);
        logs += usize::from(met.failed_commits > 0);
        ckpts += usize::from(met.ckpt_behind);
    }
    assert!(logs > 10 && ckpts > 10, "log failures {logs}, checkpoint failures {ckpts}");
}

#[test]
fn a_failed_sync_stops_the_log_or_the_checkpointer_and_loses_nothing() {
    let (mut logs, mut ckpts) = (0, 0);
    for n in 1..150 {
        let met = run(|fs| fs.fail_sync(n));
        logs += usize::from(met.log_stopped);
        ckpts += usize::from(met.failed_checkpoints > 0 && !met.log_stopped);
    }
    assert!(logs > 10 && ckpts > 10, "log failures {logs}, checkpoint failures {ckpts}");
}

#[test]
fn failed_log_error_names_the_cause() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    fs.fail_sync(1);
    let mut w = Workload::new(1);
    let first = storage.commit(w.next_txn()).unwrap_err();
    assert!(first.to_string().contains("fdatasync"), "{first}");
    let later = storage.commit(w.next_txn()).unwrap_err();
    assert!(
        later.to_string().contains("log has failed") && later.to_string().contains("injected"),
        "{later}"
    );
    assert!(storage.log().failure().is_some());
}

/// The newest log segment's path and the lengths of its live and durable
/// contents (without the zeros the log writes ahead of its end).
fn log_tail(fs: &SimFs) -> (String, usize, usize) {
    let last = names(fs).into_iter().rfind(|n| n.starts_with("log-")).unwrap();
    let path = Path::new(DIR).join(&last);
    let content = |bytes: Vec<u8>| bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let live = content(fs.read(&path).unwrap());
    let durable = content(fs.crash_now().read(&path).unwrap());
    (last, live, durable)
}

#[test]
fn a_full_disk_fails_commits_until_space_returns_and_keeps_exactly_the_acknowledged() {
    for (kind, code) in [(ErrorKind::StorageFull, "53100"), (ErrorKind::Other, "58030")] {
        let fs = SimFs::new();
        let storage = common::start(&fs, small_opts());
        let mut w = Workload::new(9);
        let mut acked = 0;
        for round in 0..4 {
            for _ in 0..12 {
                storage.commit(w.next_txn()).unwrap();
                acked += 1;
            }
            let tail = log_tail(&fs);
            fs.fail_writes("log-", kind);
            for i in 0..6 {
                let before = w.model.clone();
                let e = storage.commit(w.next_txn()).unwrap_err();
                assert_eq!(e.sqlstate(), code, "round {round}, attempt {i}: {e}");
                assert!(!storage.is_failed(), "a failed write stopped the log");
                w.model = before;
                // The partial batch was cut off, live and on disk.
                assert_eq!(log_tail(&fs), tail, "bytes left after the last synced batch");
            }
            // A crash during the outage recovers exactly what was
            // acknowledged.
            let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
            assert_eq!(got.rows, w.model, "round {round}: during the outage");
            fs.heal();
        }
        for _ in 0..12 {
            storage.commit(w.next_txn()).unwrap();
            acked += 1;
        }
        let stats = storage.log().stats();
        assert_eq!(stats.failed_writes, 24);
        storage.checkpoint().unwrap();
        drop(storage);
        let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
        assert_eq!(got.rows, w.model, "{acked} acknowledged commits");
    }
}

#[test]
fn a_rotation_that_cannot_create_its_segment_fails_the_commit_and_is_retried() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    let mut w = Workload::new(3);
    // Fill the first segment past its 2 KiB (after its 32-byte header).
    while 32 + storage.log().stats().bytes < 2048 {
        storage.commit(w.next_txn()).unwrap();
    }
    let segments = |fs: &SimFs| names(fs).into_iter().filter(|n| n.starts_with("log-")).count();
    assert_eq!(segments(&fs), 1);
    fs.fail_writes("log-", ErrorKind::StorageFull);
    let before = w.model.clone();
    let e = storage.commit(w.next_txn()).unwrap_err();
    assert!(e.is_disk_full(), "{e}");
    assert!(e.to_string().contains("create"), "{e}");
    w.model = before;
    assert_eq!(segments(&fs), 1);
    fs.heal();
    storage.commit(w.next_txn()).unwrap();
    assert_eq!(segments(&fs), 2);
    drop(storage);
    let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
    assert_eq!(got.rows, w.model);
}

fn row(ts: u64) -> Record {
    let mut r = Record::new(ts);
    r.insert(1, 0, format!("row {ts}").as_bytes());
    r
}

fn recovered_ts(fs: &SimFs, opts: Options) -> BTreeSet<u64> {
    let (_, got) = recover(Arc::new(fs.crash_now()), opts).unwrap();
    got.rows.keys().map(|id| id.ts).collect()
}

/// A flush interval no test waits for.
fn no_timer() -> Options {
    let log = LogOptions { flush_interval: Duration::from_secs(3600), ..small_opts().log };
    Options { log, ..small_opts() }
}

#[test]
fn delayed_commits_in_a_failed_write_are_written_by_the_next_flush() {
    let fs = SimFs::new();
    let storage = common::start(&fs, no_timer());
    storage.commit_with(row(1), Durability::Delayed).unwrap();
    storage.commit_with(row(2), Durability::Delayed).unwrap();
    fs.fail_writes("log-", ErrorKind::StorageFull);
    // The flush this commit leads carries the delayed records too.
    assert!(storage.commit_with(row(3), Durability::Sync).unwrap_err().is_disk_full());
    storage.commit_with(row(4), Durability::Delayed).unwrap();
    assert!(storage.log().flush().unwrap_err().is_disk_full());
    assert_eq!(recovered_ts(&fs, no_timer()), BTreeSet::new());
    fs.heal();
    storage.commit_with(row(5), Durability::Sync).unwrap();
    // The acknowledged delayed commits are there once each; the refused
    // one is not.
    assert_eq!(recovered_ts(&fs, no_timer()), BTreeSet::from([1, 2, 4, 5]));
    assert_eq!(storage.log().stats().failed_writes, 2);
}

#[test]
fn the_flusher_retries_delayed_commits_until_the_disk_takes_them() {
    let fs = SimFs::new();
    let opts = small_opts(); // 5 ms flush interval
    let storage = common::start(&fs, opts.clone());
    fs.fail_writes("log-", ErrorKind::StorageFull);
    storage.commit_with(row(1), Durability::Delayed).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while storage.log().stats().failed_writes < 3 {
        assert!(Instant::now() < deadline, "the flusher did not retry");
        std::thread::sleep(Duration::from_millis(1));
    }
    fs.heal();
    while storage.log().stats().flushes == 0 {
        assert!(Instant::now() < deadline, "the flusher did not write after the disk healed");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(recovered_ts(&fs, opts), BTreeSet::from([1]));
}

#[test]
fn after_a_failed_sync_commits_are_refused_until_restart() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    storage.commit(row(1)).unwrap();
    fs.fail_sync(1);
    let e = storage.commit(row(2)).unwrap_err();
    assert_eq!(e.sqlstate(), "58030");
    // The disk works again, but the log does not retry: the failed sync
    // may have dropped pages a later sync would not write.
    for ts in 3..6 {
        let e = storage.commit(row(ts)).unwrap_err();
        assert!(matches!(e, Error::LogFailed(_)), "{e}");
        assert_eq!(e.sqlstate(), "58030");
    }
    assert!(storage.log().flush().is_ok(), "nothing pending to flush");
    assert!(storage.is_failed());
    drop(storage);
    // A restart recovers what is on disk (row 2 is in doubt) and goes on.
    let image = fs.crash_now();
    let got = recovered_ts(&image, small_opts());
    assert!(got == BTreeSet::from([1]) || got == BTreeSet::from([1, 2]), "{got:?}");
    let storage = common::start(&image, small_opts());
    storage.commit(row(6)).unwrap();
    drop(storage);
    assert!(recovered_ts(&image, small_opts()).contains(&6));
}

#[test]
fn a_record_that_may_depend_on_a_failed_write_is_refused() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    let commit =
        |ts: u64, after: Option<u64>| storage.commit_stamped(row(0), Durability::Sync, after, &mut || ts);
    commit(1, None).unwrap();
    fs.fail_write(1);
    assert!(matches!(commit(2, None), Err(Error::Io { .. })));
    assert_eq!(storage.failed_upto(), 2);
    // A transaction that read ts 2's changes before they were durable (it
    // began before ts 2) may not commit; nothing of it is logged.
    let e = commit(3, Some(1)).unwrap_err();
    assert!(matches!(e, Error::DependencyFailed), "{e}");
    assert_eq!(e.sqlstate(), "40001");
    // One that began after ts 2, or depends on nothing, commits.
    commit(4, Some(2)).unwrap();
    commit(5, None).unwrap();
    drop(storage);
    assert_eq!(recovered_ts(&fs, small_opts()), BTreeSet::from([1, 4, 5]));
}

#[test]
fn many_committers_through_flapping_writes_get_exactly_their_outcomes() {
    let fs = SimFs::new();
    fs.set_sync_delay(Duration::from_micros(200));
    let storage = common::start(&fs, small_opts());
    let acked = Mutex::new(BTreeSet::new());
    let refused = Mutex::new(BTreeSet::new());
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            // Alternate full and healthy periods while the committers run,
            // each lasting at least 2 ms and until a flush has met it.
            let stats = || storage.log().stats();
            let mut full = false;
            while !done.load(Ordering::SeqCst) {
                full = !full;
                let (failed, flushes) = (stats().failed_writes, stats().flushes);
                if full {
                    fs.fail_writes("log-", ErrorKind::StorageFull);
                } else {
                    fs.heal();
                }
                let since = Instant::now();
                while !done.load(Ordering::SeqCst) {
                    let met = if full { stats().failed_writes > failed } else { stats().flushes > flushes };
                    if met && since.elapsed() >= Duration::from_millis(2) {
                        break;
                    }
                    std::thread::sleep(Duration::from_micros(100));
                }
            }
            fs.heal();
        });
        let committers: Vec<_> = (0..8u64)
            .map(|t| {
                let (storage, acked, refused) = (&storage, &acked, &refused);
                s.spawn(move || {
                    // Two of the eight commit with delayed durability: they
                    // are acknowledged at once and must all end up logged.
                    let durability = if t < 6 { Durability::Sync } else { Durability::Delayed };
                    for i in 0..150 {
                        let ts = 1 + t * 1000 + i;
                        match storage.commit_with(row(ts), durability) {
                            Ok(()) => acked.lock().unwrap().insert(ts),
                            Err(e) => {
                                // A synchronous record appended while a
                                // failed write was under way goes with it.
                                let later =
                                    matches!(e, Error::DependencyFailed) && durability == Durability::Sync;
                                assert!(e.is_disk_full() || later, "{e}");
                                refused.lock().unwrap().insert(ts)
                            }
                        };
                    }
                })
            })
            .collect();
        for c in committers {
            c.join().unwrap();
        }
        done.store(true, Ordering::SeqCst);
    });
    storage.log().flush().unwrap();
    let (acked, refused) = (acked.into_inner().unwrap(), refused.into_inner().unwrap());
    let stats = storage.log().stats();
    assert!(stats.failed_writes > 0 && stats.flushes > 0, "{stats:?}");
    assert_eq!(acked.len() + refused.len(), 8 * 150);
    assert!(!storage.is_failed());
    drop(storage);
    assert_eq!(recovered_ts(&fs, small_opts()), acked);
}

/// Options with automatic checkpoints every `auto` bytes of log.
fn auto_checkpoints(auto: u64) -> Options {
    let checkpoint = CheckpointOptions { auto_checkpoint_bytes: auto, ..small_opts().checkpoint };
    Options { checkpoint, ..small_opts() }
}

fn fill_checkpoint_files(fs: &SimFs, kind: ErrorKind) {
    for prefix in ["data-", "delta-", "manifest-"] {
        fs.fail_writes(prefix, kind);
    }
}

#[test]
fn checkpoints_on_a_full_disk_fail_without_failing_commits_and_catch_up_after() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    let mut w = Workload::new(11);
    for _ in 0..30 {
        storage.commit(w.next_txn()).unwrap();
    }
    storage.checkpoint().unwrap();
    for _ in 0..20 {
        storage.commit(w.next_txn()).unwrap();
    }
    fill_checkpoint_files(&fs, ErrorKind::StorageFull);
    for _ in 0..40 {
        storage.commit(w.next_txn()).unwrap();
    }
    for _ in 0..2 {
        let e = storage.checkpoint().unwrap_err();
        assert_eq!(e.sqlstate(), "53100", "{e}");
    }
    for _ in 0..20 {
        storage.commit(w.next_txn()).unwrap();
    }
    let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
    assert_eq!(got.rows, w.model, "during the outage");
    fs.heal();
    let report = storage.checkpoint().unwrap();
    let stats = storage.checkpoint_stats();
    assert!(stats.fell_behind >= 1 && stats.caught_up >= 1, "{stats:?}");
    // The checkpoint covers everything, so the log before it is gone.
    let segments: Vec<u64> =
        names(&fs).iter().filter_map(|n| centum_storage::log::parse_segment_name(n)).collect();
    assert!(report.removed_segments > 0 && segments.iter().all(|&s| s >= report.replay.segment));
    // No pair file is left over from before the outage ended.
    let named = report.pairs * 2;
    let pair_files = names(&fs).iter().filter(|n| n.starts_with("data-") || n.starts_with("delta-")).count();
    assert!(pair_files <= named + 4, "{pair_files} pair files for {named} named ones");
    for _ in 0..10 {
        storage.commit(w.next_txn()).unwrap();
    }
    storage.checkpoint().unwrap();
    drop(storage);
    let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
    assert_eq!(got.rows, w.model);
    assert_eq!(got.stats.tail_rows, 0, "the last checkpoint covers every commit");
}

#[test]
fn automatic_checkpoints_catch_up_by_themselves_after_a_full_disk() {
    let opts = auto_checkpoints(4096);
    let fs = SimFs::new();
    let storage = common::start(&fs, opts.clone());
    let mut w = Workload::new(13);
    fill_checkpoint_files(&fs, ErrorKind::StorageFull);
    let deadline = Instant::now() + Duration::from_secs(30);
    while storage.checkpoint_stats().fell_behind == 0 {
        assert!(Instant::now() < deadline, "no checkpoint write was tried");
        storage.commit(w.next_txn()).unwrap();
    }
    fs.heal();
    while storage.checkpoint_stats().caught_up == 0 {
        assert!(Instant::now() < deadline, "the worker did not catch up");
        storage.commit(w.next_txn()).unwrap();
    }
    drop(storage);
    let (rec, got) = recover(Arc::new(fs.crash_now()), opts).unwrap();
    assert_eq!(got.rows, w.model);
    assert!(rec.manifest().seq > 0);
}

#[test]
fn a_failed_checkpoint_sync_stops_checkpoints_but_not_commits() {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    let mut w = Workload::new(17);
    for _ in 0..20 {
        storage.commit(w.next_txn()).unwrap();
    }
    // Only the checkpoint worker syncs from here (its batches were held
    // back): the next sync it makes fails.
    storage.pause_checkpoints(true);
    fs.fail_sync(1);
    let e = storage.checkpoint().unwrap_err();
    assert!(matches!(e, Error::Io { .. } | Error::CheckpointFailed(_)), "{e}");
    assert!(e.to_string().contains("fdatasync"), "{e}");
    storage.pause_checkpoints(false);
    for _ in 0..20 {
        storage.commit(w.next_txn()).unwrap();
    }
    assert!(matches!(storage.checkpoint().unwrap_err(), Error::CheckpointFailed(_)));
    drop(storage);
    let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
    assert_eq!(got.rows, w.model);
}

#[test]
fn a_write_refused_with_a_full_disk_is_53100() {
    let fs = SimFs::new();
    let storage = Storage::open(Arc::new(fs.clone()), DIR, small_opts()).unwrap().start().unwrap();
    fs.fail_writes("log-", ErrorKind::StorageFull);
    let e = storage.commit(row(1)).unwrap_err();
    assert!(e.is_disk_full());
    assert_eq!(e.sqlstate(), "53100");
    assert!(e.to_string().contains("write"), "{e}");
}
