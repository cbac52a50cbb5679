//! Model test: random transactions, checkpoints, merges, clean restarts and
//! crashes against a `BTreeMap`, with the disk filling up under the log or
//! the checkpoint files at random and space coming back. Every commit that
//! returns is durable and every one refused for a full disk is gone, so
//! after any restart the recovered rows, catalog and largest timestamp must
//! equal the model's exactly.

mod common;

use std::io::ErrorKind;
use std::sync::Arc;

use centum_storage::SimFs;
use common::{recover, small_opts, Workload};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Step {
    Txn,
    Checkpoint,
    Merge,
    Reopen,
    Crash,
    /// Writes to the log fail with ENOSPC until `Heal`.
    LogFull,
    /// Writes to checkpoint files fail with ENOSPC until `Heal`.
    CheckpointFull,
    Heal,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => Just(Step::Txn),
        1 => Just(Step::Checkpoint),
        1 => Just(Step::Merge),
        1 => Just(Step::Reopen),
        1 => Just(Step::Crash),
        1 => Just(Step::LogFull),
        1 => Just(Step::CheckpointFull),
        2 => Just(Step::Heal),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn storage_matches_the_model(seed in any::<u64>(), steps in prop::collection::vec(step(), 1..160)) {
        let mut fs = SimFs::new();
        let mut w = Workload::new(seed);
        let (_, got) = recover(Arc::new(fs.clone()), small_opts()).unwrap();
        prop_assert!(got.rows.is_empty());
        let mut storage = Some(common::start(&fs, small_opts()));
        let (mut log_full, mut ckpt_full) = (false, false);
        for s in steps {
            let st = storage.as_ref().unwrap();
            match s {
                Step::Txn => {
                    let before = (w.model.clone(), w.catalog.clone(), w.max_ts);
                    if let Err(e) = st.commit(w.next_txn()) {
                        prop_assert!(e.is_disk_full() && log_full, "{}", e);
                        (w.model, w.catalog, w.max_ts) = before;
                    }
                }
                Step::Checkpoint | Step::Merge => {
                    let r = if let Step::Merge = s { st.merge() } else { st.checkpoint() };
                    if let Err(e) = r {
                        prop_assert!(e.is_disk_full() && ckpt_full, "{}", e);
                    }
                }
                Step::LogFull => {
                    fs.fail_writes("log-", ErrorKind::StorageFull);
                    log_full = true;
                }
                Step::CheckpointFull => {
                    for prefix in ["data-", "delta-", "manifest-"] {
                        fs.fail_writes(prefix, ErrorKind::StorageFull);
                    }
                    ckpt_full = true;
                }
                Step::Heal => {
                    fs.heal();
                    (log_full, ckpt_full) = (false, false);
                }
                Step::Reopen | Step::Crash => {
                    // Space is back by the restart.
                    fs.heal();
                    (log_full, ckpt_full) = (false, false);
                    if let Step::Crash = s {
                        // Drop nothing first: the image is what is durable now.
                        fs = fs.crash_now();
                    }
                    storage.take().unwrap().close().unwrap();
                    let (rec, got) = recover(Arc::new(fs.clone()), small_opts()).unwrap();
                    prop_assert_eq!(&got.rows, &w.model);
                    prop_assert_eq!(&got.catalog, &w.catalog);
                    prop_assert_eq!(got.max_ts, w.max_ts);
                    storage = Some(rec.start().unwrap());
                }
            }
        }
        fs.heal();
        storage.take().unwrap().close().unwrap();
        let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
        prop_assert_eq!(&got.rows, &w.model);
    }
}
