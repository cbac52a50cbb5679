//! Torn and damaged logs: cut the log at every byte (the whole log, about
//! 16 KiB: smaller than 64 KiB, so every offset is covered), and flip random
//! bits in it. Recovery must keep exactly the batches wholly
//! before a cut, and for a flipped bit either keep a clean prefix (only the
//! last batch may be lost: a damaged last batch cannot be told from a torn
//! one) or refuse with a corruption error. It must never panic.

mod common;

use std::path::Path;
use std::sync::Arc;

use centum_storage::{log::segment_name, LogOptions, Options, SimFs};
use common::{recover, small_opts, Rows, Workload, DIR};

fn opts() -> Options {
    Options { log: LogOptions { segment_size: 1 << 30, ..LogOptions::default() }, ..small_opts() }
}

/// Commits `txns` transactions (no checkpoint) and returns the file system,
/// the model state after each transaction, and where the log ended after
/// each.
fn build(txns: usize) -> (SimFs, Vec<Rows>, Vec<usize>) {
    let fs = SimFs::new();
    let storage = common::start(&fs, opts());
    let mut w = Workload::new(3);
    let mut states = vec![Rows::new()];
    // Where the log ends: the file runs on in zeros until it is closed.
    let end = || 32 + storage.log().stats().bytes as usize;
    let mut ends = vec![end()];
    for _ in 0..txns {
        storage.commit(w.next_txn()).unwrap();
        states.push(w.model.clone());
        ends.push(end());
    }
    storage.close().unwrap();
    (fs, states, ends)
}

/// The only segment's path and bytes.
fn log_file(fs: &SimFs) -> (std::path::PathBuf, Vec<u8>) {
    let seg = Path::new(DIR).join(segment_name(1));
    let full = fs.read(&seg).unwrap();
    (seg, full)
}

#[test]
fn every_cut_keeps_exactly_the_whole_batches_before_it() {
    // Debug builds use a shorter log, to stay quick.
    let txns = if cfg!(debug_assertions) { 40 } else { 110 };
    let (fs, states, ends) = build(txns);
    let (seg, full) = log_file(&fs);
    assert_eq!(*ends.last().unwrap(), full.len());
    let from = full.len().saturating_sub(64 << 10);
    for cut in from..=full.len() {
        let img = fs.crash_now();
        img.overwrite(&seg, full[..cut].to_vec());
        let result = recover(Arc::new(img.clone()), opts());
        if cut < 32 {
            // The first segment's header is torn: with no manifest that is a
            // database that never committed anything.
            let (_, got) = result.unwrap_or_else(|e| panic!("cut {cut}: {e}"));
            assert!(got.rows.is_empty());
            continue;
        }
        let (rec, got) = result.unwrap_or_else(|e| panic!("cut {cut}: {e}"));
        let k = ends.iter().filter(|&&e| e <= cut).count() - 1;
        assert_eq!(got.rows, states[k], "cut {cut}: expected the first {k} commits");
        if cut % 997 == 0 || cut == full.len() {
            // The torn tail is cut off and appends go on after it.
            let storage = rec.start().unwrap();
            let mut r = centum_storage::Record::new(u64::MAX - 1);
            r.insert(42, 0, b"z");
            storage.commit(r).unwrap();
            storage.close().unwrap();
            let (_, again) = recover(Arc::new(img.crash_now()), opts()).unwrap();
            assert_eq!(again.rows.len(), states[k].len() + 1, "cut {cut}: append after recovery");
        }
    }
}

#[test]
fn flipped_bits_give_a_clean_prefix_or_a_corruption_error() {
    let txns = if cfg!(debug_assertions) { 60 } else { 300 };
    let (fs, states, ends) = build(txns);
    let (seg, full) = log_file(&fs);
    let last_batch_start = ends[ends.len() - 2];
    let mut w = Workload::new(11);
    let (mut refused, mut kept) = (0, 0);
    for _ in 0..2000 {
        let bit = w.rand(full.len() as u64 * 8) as usize;
        let img = common::flipped(&fs, &seg, &full, bit);
        match recover(Arc::new(img), opts()) {
            Ok((_, got)) => {
                // Only damage inside the last batch may be taken for a torn
                // write, losing that batch and nothing else.
                assert!(bit / 8 >= last_batch_start, "bit {bit}: damage before the last batch accepted");
                assert_eq!(got.rows, states[txns - 1], "bit {bit}");
                kept += 1;
            }
            Err(e) => {
                assert!(e.is_corruption(), "bit {bit}: {e}");
                assert!(e.to_string().contains("log-0000000000000001.wal"), "{e}");
                refused += 1;
            }
        }
    }
    assert!(refused > 0);
    let _ = kept;
}
