//! Model test: random transactions, checkpoints, merges, clean restarts and
//! crashes against a `BTreeMap`. Every commit is durable, so after any
//! restart the recovered rows, catalog and largest timestamp must equal the
//! model's exactly.

mod common;

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
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => Just(Step::Txn),
        1 => Just(Step::Checkpoint),
        1 => Just(Step::Merge),
        1 => Just(Step::Reopen),
        1 => Just(Step::Crash),
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
        for s in steps {
            let st = storage.as_ref().unwrap();
            match s {
                Step::Txn => st.commit(w.next_txn()).unwrap(),
                Step::Checkpoint => { st.checkpoint().unwrap(); }
                Step::Merge => { st.merge().unwrap(); }
                Step::Reopen | Step::Crash => {
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
        storage.take().unwrap().close().unwrap();
        let (_, got) = recover(Arc::new(fs.crash_now()), small_opts()).unwrap();
        prop_assert_eq!(&got.rows, &w.model);
    }
}
