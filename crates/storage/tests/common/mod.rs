//! Helpers shared by the integration tests: a deterministic workload with
//! its `BTreeMap` model, small options, and a recovery that collects rows.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use centum_storage::{
    CheckpointOptions, Fs, LoadStats, LogOptions, Options, Record, Recovery, Result, RowId, SimFs, Storage,
};

pub const DIR: &str = "/db";

/// Rows as the model holds them.
pub type Rows = BTreeMap<RowId, Vec<u8>>;

/// Options small enough that a short run rotates segments, fills several
/// pairs and merges.
pub fn small_opts() -> Options {
    Options {
        log: LogOptions { segment_size: 2048, flush_interval: Duration::from_millis(5), delayed: false },
        checkpoint: CheckpointOptions {
            data_file_size: 4096,
            auto_checkpoint_bytes: 0,
            auto_checkpoint_interval: None,
            merge_threshold: 0.5,
            auto_merge: false,
        },
        recovery_threads: 4,
    }
}

/// A deterministic stream of transactions and the state they produce.
pub struct Workload {
    rng: u64,
    n: u64,
    pub model: Rows,
    pub catalog: Option<Vec<u8>>,
    pub max_ts: u64,
}

impl Workload {
    pub fn new(seed: u64) -> Self {
        Workload {
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            n: 0,
            model: Rows::new(),
            catalog: None,
            max_ts: 0,
        }
    }

    pub fn rand(&mut self, below: u64) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % below.max(1)
    }

    /// The next transaction, applied to the model. Commit timestamps run
    /// backwards within blocks of four, so log order differs from
    /// timestamp order.
    pub fn next_txn(&mut self) -> Record {
        let n = self.n;
        self.n += 1;
        let ts = (n / 4) * 4 + (3 - n % 4) + 1;
        self.max_ts = self.max_ts.max(ts);
        // One transaction in three spans several frames, as a bulk load's
        // does (see `log::record`).
        let frame = if self.rand(3) == 0 { 48 } else { usize::MAX };
        let mut rec = Record::new(ts).frame_limit(frame);
        let inserts = self.rand(4);
        for seq in 0..inserts as u32 {
            let table = 1 + self.rand(3);
            let len = 1 + self.rand(60) as usize;
            let data: Vec<u8> = format!("ts{ts}s{seq}")
                .into_bytes()
                .into_iter()
                .chain(std::iter::repeat_n(b'x', len))
                .collect();
            rec.insert(table, seq, &data);
            self.model.insert(RowId { table, ts, seq }, data);
        }
        let deletes = self.rand(3);
        for _ in 0..deletes {
            if self.model.is_empty() {
                break;
            }
            let i = self.rand(self.model.len() as u64) as usize;
            let id = *self.model.keys().nth(i).expect("index in range");
            self.model.remove(&id);
            rec.delete(id.table, id.ts, id.seq);
        }
        if self.rand(10) == 0 {
            let cat = format!("catalog as of {ts}").into_bytes();
            rec.schema(&cat);
            self.catalog = Some(cat);
        }
        rec
    }
}

/// What a recovery handed over.
pub struct Recovered {
    pub rows: Rows,
    pub catalog: Option<Vec<u8>>,
    pub max_ts: u64,
    pub stats: LoadStats,
}

/// Runs recovery's first two steps and collects the rows; panics on a row
/// handed over twice.
pub fn recover(fs: Arc<dyn Fs>, opts: Options) -> Result<(Recovery, Recovered)> {
    let rec = Storage::open(fs, DIR, opts)?;
    let rows = Mutex::new(Rows::new());
    let dup = Mutex::new(None);
    let stats = rec.load(&|row| {
        if rows.lock().unwrap().insert(row.id, row.data.to_vec()).is_some() {
            *dup.lock().unwrap() = Some(row.id);
        }
    })?;
    assert_eq!(*dup.lock().unwrap(), None, "a row was loaded twice");
    let out = Recovered {
        rows: rows.into_inner().unwrap(),
        catalog: rec.catalog().map(<[u8]>::to_vec),
        max_ts: rec.max_commit_ts(),
        stats,
    };
    Ok((rec, out))
}

/// Starts a storage on `fs` in [`DIR`] (recovering whatever is there).
pub fn start(fs: &SimFs, opts: Options) -> Storage {
    Storage::open(Arc::new(fs.clone()), DIR, opts).unwrap().start().unwrap()
}

/// A crash image of `fs` in which `path` holds `file` with bit `bit`
/// flipped.
pub fn flipped(fs: &SimFs, path: &Path, file: &[u8], bit: usize) -> SimFs {
    let mut bad = file.to_vec();
    bad[bit / 8] ^= 1 << (bit % 8);
    let img = fs.crash_now();
    img.overwrite(path, bad);
    img
}

/// Names of the files in the database directory.
pub fn names(fs: &dyn Fs) -> Vec<String> {
    let mut v = fs.list(Path::new(DIR)).unwrap();
    v.sort();
    v
}
