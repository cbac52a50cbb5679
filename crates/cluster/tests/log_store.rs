//! Durability of the Raft log store: what is appended, truncated, purged or
//! voted survives reopening, and a crash-torn tail is cut off at open while
//! everything before it stays.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use centum_cluster::log_store::{LogStore, LOG_FILE};
use centum_cluster::openraft::storage::{RaftLogStorage, RaftLogStorageExt};
use centum_cluster::openraft::{BasicNode, CommittedLeaderId, EntryPayload, Membership, RaftLogReader};
use centum_cluster::{Entry, Error, LogId, Vote};

fn log_id(term: u64, index: u64) -> LogId {
    LogId::new(CommittedLeaderId::new(term, 1), index)
}

fn normal(term: u64, index: u64) -> Entry {
    Entry {
        log_id: log_id(term, index),
        payload: EntryPayload::Normal(format!("redo record {index} of term {term}").into_bytes()),
    }
}

fn membership(index: u64) -> Entry {
    let nodes = [(1u64, BasicNode::new("127.0.0.1:1")), (2, BasicNode::new("127.0.0.1:2"))]
        .into_iter()
        .collect::<std::collections::BTreeMap<_, _>>();
    let config = vec![nodes.keys().copied().collect()];
    Entry { log_id: log_id(0, index), payload: EntryPayload::Membership(Membership::new(config, nodes)) }
}

async fn read_all(store: &mut LogStore) -> Vec<Entry> {
    store.try_get_log_entries(..).await.unwrap()
}

#[tokio::test]
async fn append_read_truncate_purge_vote_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut expected: Vec<Entry> =
        vec![membership(0), Entry { log_id: log_id(1, 1), payload: EntryPayload::Blank }];
    expected.extend((2..30).map(|i| normal(1, i)));
    {
        let mut store = LogStore::open(dir.path()).unwrap();
        assert!(store.is_pristine());
        store.save_vote(&Vote::new(1, 1)).await.unwrap();
        store.blocking_append(expected[..10].to_vec()).await.unwrap();
        store.blocking_append(expected[10..].to_vec()).await.unwrap();
        assert_eq!(read_all(&mut store).await, expected);
        assert!(!store.is_pristine());
    }
    {
        let mut store = LogStore::open(dir.path()).unwrap();
        assert_eq!(store.vote(), Some(Vote::new(1, 1)));
        assert_eq!(read_all(&mut store).await, expected);
        assert_eq!(store.try_get_log_entries(5..8).await.unwrap(), expected[5..8].to_vec());

        // A new leader overwrites the suffix from 20 on.
        store.truncate(log_id(1, 20)).await.unwrap();
        let replacement: Vec<Entry> = (20..25).map(|i| normal(2, i)).collect();
        store.blocking_append(replacement.clone()).await.unwrap();
        expected.truncate(20);
        expected.extend(replacement);
        store.save_vote(&Vote::new_committed(2, 2)).await.unwrap();

        // A snapshot covers up to 9.
        store.purge(log_id(1, 9)).await.unwrap();
        expected.drain(..10);
        assert_eq!(read_all(&mut store).await, expected);
        let state = store.get_log_state().await.unwrap();
        assert_eq!(state.last_purged_log_id, Some(log_id(1, 9)));
        assert_eq!(state.last_log_id, Some(log_id(2, 24)));
    }
    {
        let mut store = LogStore::open(dir.path()).unwrap();
        assert_eq!(store.vote(), Some(Vote::new_committed(2, 2)));
        assert_eq!(read_all(&mut store).await, expected);
        assert_eq!(store.purged(), Some(log_id(1, 9)));
        assert_eq!(store.log_id_at(9), Some(log_id(1, 9)));
        assert_eq!(store.log_id_at(8), None);
        // Appending goes on after the reopen.
        store.blocking_append(vec![normal(2, 25)]).await.unwrap();
        expected.push(normal(2, 25));
        // Purging everything leaves only the marker.
        store.purge(log_id(2, 25)).await.unwrap();
        assert!(read_all(&mut store).await.is_empty());
    }
    let mut store = LogStore::open(dir.path()).unwrap();
    let state = store.get_log_state().await.unwrap();
    assert_eq!(state.last_purged_log_id, Some(log_id(2, 25)));
    assert_eq!(state.last_log_id, Some(log_id(2, 25)));
    store.blocking_append(vec![normal(3, 26)]).await.unwrap();
    assert_eq!(read_all(&mut store).await, vec![normal(3, 26)]);
}

#[tokio::test]
async fn entries_evicted_from_memory_are_read_back_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let entries: Vec<Entry> = (1..=50).map(|i| normal(1, i)).collect();
    let mut store = LogStore::open_with(dir.path(), 4).unwrap();
    for chunk in entries.chunks(7) {
        store.blocking_append(chunk.to_vec()).await.unwrap();
    }
    assert_eq!(read_all(&mut store).await, entries);
    // After a purge the remaining entries live at new offsets in a new file.
    store.purge(log_id(1, 20)).await.unwrap();
    assert_eq!(read_all(&mut store).await, entries[20..].to_vec());
    drop(store);
    let mut store = LogStore::open_with(dir.path(), 2).unwrap();
    assert_eq!(store.try_get_log_entries(21..=30).await.unwrap(), entries[20..30].to_vec());
    assert_eq!(read_all(&mut store).await, entries[20..].to_vec());
}

fn file_len(dir: &Path) -> u64 {
    std::fs::metadata(dir.join(LOG_FILE)).unwrap().len()
}

#[tokio::test]
async fn torn_tail_is_dropped_at_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let entries: Vec<Entry> = (1..=10).map(|i| normal(1, i)).collect();
    let mut store = LogStore::open(dir.path()).unwrap();
    store.blocking_append(entries[..9].to_vec()).await.unwrap();
    drop(store);
    let good_len = file_len(dir.path());
    let mut store = LogStore::open(dir.path()).unwrap();
    store.blocking_append(entries[9..].to_vec()).await.unwrap();
    drop(store);
    let full_len = file_len(dir.path());

    // A crash in the middle of writing the last frame.
    let f = OpenOptions::new().write(true).open(dir.path().join(LOG_FILE)).unwrap();
    f.set_len(full_len - 7).unwrap();
    drop(f);
    let mut store = LogStore::open(dir.path()).unwrap();
    assert_eq!(read_all(&mut store).await, entries[..9].to_vec());
    assert_eq!(file_len(dir.path()), good_len, "the torn frame is cut off");
    store.blocking_append(entries[9..].to_vec()).await.unwrap();
    drop(store);

    // Garbage after the last frame.
    let mut f = OpenOptions::new().append(true).open(dir.path().join(LOG_FILE)).unwrap();
    f.write_all(b"\x13\x00\x00\x00garbage left by a crash").unwrap();
    drop(f);
    let mut store = LogStore::open(dir.path()).unwrap();
    assert_eq!(read_all(&mut store).await, entries);
    assert_eq!(file_len(dir.path()), full_len);
    drop(store);

    // A partial frame header only.
    let mut f = OpenOptions::new().append(true).open(dir.path().join(LOG_FILE)).unwrap();
    f.write_all(&[0x40, 0x00, 0x00]).unwrap();
    drop(f);
    let mut store = LogStore::open(dir.path()).unwrap();
    assert_eq!(read_all(&mut store).await, entries);
    assert_eq!(file_len(dir.path()), full_len);
}

#[tokio::test]
async fn damage_before_the_tail_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let entries: Vec<Entry> = (1..=10).map(|i| normal(1, i)).collect();
    let mut store = LogStore::open(dir.path()).unwrap();
    store.blocking_append(entries).await.unwrap();
    drop(store);
    let path = dir.path().join(LOG_FILE);
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    match LogStore::open(dir.path()) {
        Err(Error::Corrupt { reason, .. }) => assert!(reason.contains("valid entry follows"), "{reason}"),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a damaged log opened"),
    }
}

#[tokio::test]
async fn a_directory_is_opened_by_one_store_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let store = LogStore::open(dir.path()).unwrap();
    assert!(matches!(LogStore::open(dir.path()), Err(Error::Config(_))));
    drop(store);
    LogStore::open(dir.path()).unwrap();
}

#[tokio::test]
async fn purge_stops_at_the_floor_unless_it_passes_the_end_of_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let floor = Arc::new(AtomicU64::new(5));
    let entries: Vec<Entry> = (1..=10).map(|i| normal(1, i)).collect();
    let mut store = LogStore::open(dir.path()).unwrap();
    let f = floor.clone();
    store.set_purge_floor(Arc::new(move || f.load(Ordering::SeqCst)));
    store.blocking_append(entries.clone()).await.unwrap();

    // The database holds only up to 5 durably: 6.. stay for replay.
    store.purge(log_id(1, 8)).await.unwrap();
    assert_eq!(store.purged(), Some(log_id(1, 5)));
    assert_eq!(read_all(&mut store).await, entries[5..].to_vec());
    floor.store(7, Ordering::SeqCst);
    store.purge(log_id(1, 8)).await.unwrap();
    assert_eq!(store.purged(), Some(log_id(1, 7)));

    // A snapshot installed past the end of the log replaces the whole log.
    store.purge(log_id(3, 20)).await.unwrap();
    assert!(read_all(&mut store).await.is_empty());
    drop(store);
    let mut store = LogStore::open(dir.path()).unwrap();
    let state = store.get_log_state().await.unwrap();
    assert_eq!(state.last_purged_log_id, Some(log_id(3, 20)));
    assert_eq!(state.last_log_id, Some(log_id(3, 20)));
}
