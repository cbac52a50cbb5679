//! Group commit and delayed durability.

mod common;

use std::sync::Arc;
use std::time::Duration;

use centum_storage::{Durability, LogOptions, Options, Record, SimFs};
use common::{recover, small_opts};

fn opts(flush_interval: Duration) -> Options {
    Options { log: LogOptions { segment_size: 1 << 30, flush_interval, delayed: false }, ..small_opts() }
}

fn record(ts: u64) -> Record {
    let mut r = Record::new(ts);
    r.insert(1, 0, &[7u8; 100]);
    r
}

#[test]
fn concurrent_commits_share_syncs() {
    let fs = SimFs::new();
    // A disk whose fdatasync takes 1 ms: while one flush syncs, the other
    // committers gather behind it.
    fs.set_sync_delay(Duration::from_millis(1));
    let storage = common::start(&fs, opts(Duration::from_secs(3600)));
    let before = fs.syncs_of("log-");
    let (threads, per) = (8u64, 100u64);
    std::thread::scope(|s| {
        for t in 0..threads {
            let storage = &storage;
            s.spawn(move || {
                for i in 0..per {
                    storage.commit(record(1 + t * per + i)).unwrap();
                }
            });
        }
    });
    let syncs = fs.syncs_of("log-") - before;
    let commits = threads * per;
    let stats = storage.log().stats();
    assert_eq!(stats.commits, commits);
    assert_eq!(stats.flushes, syncs, "one sync per flush");
    assert!(syncs * 3 <= commits, "{syncs} syncs for {commits} commits");
    storage.close().unwrap();
    let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
    assert_eq!(got.rows.len() as u64, commits);
}

#[test]
fn a_lone_committer_never_waits_for_the_timer() {
    // With a one-hour flush interval, any wait on the timer would hang the
    // test; each commit must lead its own flush at once.
    let fs = SimFs::new();
    let storage = common::start(&fs, opts(Duration::from_secs(3600)));
    let before = fs.syncs_of("log-");
    for i in 0..50 {
        storage.commit(record(i + 1)).unwrap();
        assert_eq!(fs.syncs_of("log-") - before, i + 1, "commit {i} returned before its sync");
    }
    let stats = storage.log().stats();
    assert_eq!((stats.flushes, stats.timer_flushes), (50, 0));
}

#[test]
fn delayed_commits_are_flushed_within_the_interval() {
    let fs = SimFs::new();
    let storage = common::start(&fs, opts(Duration::from_millis(5)));
    let before = fs.syncs_of("log-");
    for i in 0..20 {
        storage.commit_with(record(i + 1), Durability::Delayed).unwrap();
    }
    // Buffered, not yet synced (the flusher waits 5 ms).
    assert!(fs.syncs_of("log-") - before <= 1);
    // The flusher syncs them without any further commit.
    let mut waited = 0;
    while storage.log().stats().timer_flushes == 0 || fs.syncs_of("log-") == before {
        std::thread::sleep(Duration::from_millis(5));
        waited += 1;
        assert!(waited < 2000, "the flusher never flushed");
    }
    let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
    assert_eq!(got.rows.len(), 20);
    drop(storage);
}

#[test]
fn a_sync_commit_flushes_earlier_delayed_ones() {
    let fs = SimFs::new();
    let storage = common::start(&fs, opts(Duration::from_secs(3600)));
    storage.commit_with(record(1), Durability::Delayed).unwrap();
    assert_eq!(recover(Arc::new(fs.crash_now()), small_opts()).unwrap().1.rows.len(), 0);
    storage.commit_with(record(2), Durability::Sync).unwrap();
    assert_eq!(recover(Arc::new(fs.crash_now()), small_opts()).unwrap().1.rows.len(), 2);
}

#[test]
fn stamped_commits_take_timestamps_in_log_order() {
    let fs = SimFs::new();
    fs.set_sync_delay(Duration::from_micros(300));
    let storage = common::start(&fs, opts(Duration::from_secs(3600)));
    let clock = std::sync::Mutex::new(0u64);
    let stamped = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50 {
                    // The record is built before its timestamp exists.
                    let rec = record(0);
                    let ts = storage
                        .commit_stamped(rec, Durability::Sync, None, &mut || {
                            let mut c = clock.lock().unwrap();
                            *c += 1;
                            stamped.lock().unwrap().push(*c);
                            *c
                        })
                        .unwrap();
                    assert!(stamped.lock().unwrap().contains(&ts));
                }
            });
        }
    });
    // Stamps were taken one at a time, in append order.
    let order = stamped.into_inner().unwrap();
    assert!(order.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(order.len(), 200);
    storage.close().unwrap();
    let (_, got) = recover(Arc::new(fs.crash_now()), opts(Duration::from_secs(3600))).unwrap();
    let mut ts: Vec<u64> = got.rows.keys().map(|id| id.ts).collect();
    ts.sort_unstable();
    assert_eq!(ts, (1..=200).collect::<Vec<_>>(), "each record carries the timestamp its stamp took");
}

#[test]
fn a_refused_record_takes_no_timestamp() {
    let fs = SimFs::new();
    let storage = common::start(&fs, opts(Duration::from_secs(3600)));
    fs.fail_sync(1);
    assert!(storage.commit(record(1)).is_err());
    let mut called = false;
    let r = storage.commit_stamped(record(0), Durability::Sync, None, &mut || {
        called = true;
        2
    });
    assert!(matches!(r, Err(centum_storage::Error::LogFailed(_))), "{r:?}");
    assert!(!called, "a failed log took a timestamp");
}

#[test]
fn committers_parked_behind_a_failing_sync_all_get_the_failure() {
    let fs = SimFs::new();
    // Slow syncs, so committers park behind the one that fails.
    fs.set_sync_delay(Duration::from_millis(5));
    let storage = common::start(&fs, opts(Duration::from_secs(3600)));
    // Only the log syncs: the checkpoint worker holds its batches.
    storage.pause_checkpoints(true);
    storage.commit(record(1)).unwrap();
    fs.fail_sync(2);
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8u64)
            .map(|i| {
                let storage = &storage;
                s.spawn(move || {
                    (0..20u64).map(|j| storage.commit(record(2 + i * 20 + j)).is_ok()).collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // Every committer returned (none hangs parked); once one failed, every
    // later commit of the same thread failed too.
    for r in &results {
        let first_fail = r.iter().position(|ok| !ok).expect("the failure reached every committer");
        assert!(r[first_fail..].iter().all(|ok| !ok));
    }
    assert!(storage.is_failed());
}

/// A record of `rows` rows of 1 KiB in frames of at most 256 KiB.
fn large(ts: u64, rows: u32) -> Record {
    let mut r = Record::new(ts).frame_limit(256 << 10);
    for seq in 0..rows {
        r.insert(2, seq, &[(seq % 251) as u8; 1024]);
    }
    r
}

/// A record of several megabytes that finds the log's buffer empty becomes
/// the batch as it is, and one that finds delayed records waiting goes in
/// behind them; a crash before the second's sync loses it whole, delayed
/// records with it, and nothing else.
#[test]
fn large_records_land_whole_alone_or_behind_others() {
    let fs = SimFs::new();
    let storage = common::start(&fs, opts(Duration::from_secs(3600)));
    storage.commit(large(1, 3_000)).unwrap();
    let first_batch_end = 32 + storage.log().stats().bytes as usize;
    storage.commit_with(record(2), Durability::Delayed).unwrap();
    storage.commit(large(3, 2_000)).unwrap();
    let synced = fs.crash_now();
    storage.commit_with(record(4), Durability::Delayed).unwrap();
    let unsynced = fs.crash_now();
    storage.close().unwrap();
    let (_, got) = recover(Arc::new(synced), opts(Duration::from_secs(3600))).unwrap();
    assert_eq!(got.rows.len(), 3_000 + 1 + 2_000);
    for (id, data) in &got.rows {
        if id.table == 2 {
            assert_eq!(data, &vec![(id.seq % 251) as u8; 1024], "{id:?}");
        }
    }
    let (_, got) = recover(Arc::new(unsynced), opts(Duration::from_secs(3600))).unwrap();
    assert_eq!(got.rows.len(), 5_001, "a delayed record past the last sync is not there yet");
    let (_, got) = recover(Arc::new(fs.crash_now()), opts(Duration::from_secs(3600))).unwrap();
    assert_eq!(got.rows.len(), 5_002);
    // A crash inside the second large batch, which also holds the first
    // delayed record: cut the segment a megabyte into it.
    let seg = std::path::Path::new(common::DIR).join(centum_storage::log::segment_name(1));
    let full = fs.read(&seg).unwrap();
    let img = fs.crash_now();
    img.overwrite(&seg, full[..first_batch_end + (1 << 20)].to_vec());
    let (_, got) = recover(Arc::new(img), opts(Duration::from_secs(3600))).unwrap();
    assert_eq!(got.rows.len(), 3_000, "the cut batch is dropped whole");
}
