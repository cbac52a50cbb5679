//! Injected I/O errors: fail the Nth write or the Nth sync of a run with
//! checkpoints, for every N in turn.
//!
//! A failure in the log makes that commit fail and every later one fail
//! too, with "log failed", even though the file system works again (the log
//! never retries). A failure in the checkpoint worker makes checkpoints
//! fail while commits go on. Either way, a crash afterwards recovers every
//! acknowledged commit; the commit that got the error is in doubt and may
//! or may not be there.

mod common;

use std::sync::Arc;

use centum_storage::{Error, SimFs};
use common::{recover, small_opts, Rows, Workload};

/// Runs 60 transactions with checkpoints after `arm` has armed a failure;
/// checks the rules above.
fn run(arm: impl Fn(&SimFs)) -> (bool, bool) {
    let fs = SimFs::new();
    let storage = common::start(&fs, small_opts());
    arm(&fs);
    let mut w = Workload::new(5);
    let mut states = vec![Rows::new()];
    let mut acked = 0;
    let mut log_failed = false;
    let mut ckpt_failed = false;
    for i in 0..60 {
        let rec = w.next_txn();
        match storage.commit(rec) {
            Ok(()) => {
                assert!(!log_failed, "txn {i}: a commit succeeded after the log failed");
                acked = i + 1;
            }
            Err(e) => {
                assert!(storage.is_failed(), "txn {i}: error {e} but log not failed");
                assert_eq!(e.sqlstate(), "58030");
                if log_failed {
                    assert!(matches!(e, Error::LogFailed(_)), "txn {i}: {e}");
                }
                log_failed = true;
            }
        }
        states.push(w.model.clone());
        if i % 10 == 9 {
            if let Err(e) = storage.checkpoint() {
                assert!(matches!(e, Error::Io { .. } | Error::CheckpointFailed(_)), "{e}");
                ckpt_failed = true;
            }
        }
    }
    drop(storage);
    let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
    let ok = got.rows == states[acked] || (log_failed && got.rows == states[acked + 1]);
    assert!(ok, "recovered state is not the {acked} acknowledged commits");
    (log_failed, ckpt_failed)
}

/// Runs with the `n`th operation failing for each `n` below `upto`; both
/// the log and the checkpointer must have been hit many times.
fn each_failure(upto: u64, arm: impl Fn(&SimFs, u64)) {
    let (mut logs, mut ckpts) = (0, 0);
    for n in 1..upto {
        let (l, c) = run(|fs| arm(fs, n));
        logs += l as u32;
        ckpts += c as u32;
    }
    assert!(logs > 10 && ckpts > 10, "log failures {logs}, checkpoint failures {ckpts}");
}

#[test]
fn a_failed_write_stops_the_log_or_the_checkpointer_and_loses_nothing() {
    each_failure(120, SimFs::fail_write);
}

#[test]
fn a_failed_sync_stops_the_log_or_the_checkpointer_and_loses_nothing() {
    each_failure(150, SimFs::fail_sync);
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
