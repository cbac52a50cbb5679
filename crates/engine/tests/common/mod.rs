//! What the engine's durability tests share: a database on a simulated
//! file system with small log segments and data files, so that a short
//! workload crosses many segment and checkpoint boundaries.

#![allow(dead_code)] // each test binary uses its own part

use centum_engine::storage::{CheckpointOptions, LogOptions, Options as StorageOptions, SimFs};
use centum_engine::Options;
use std::sync::Arc;
use std::time::Duration;

/// The data directory on the simulated file system.
pub const DIR: &str = "/db";

/// Storage options with 4 KiB log segments, 8 KiB data files and no
/// automatic checkpoints or merges.
pub fn small_storage() -> StorageOptions {
    StorageOptions {
        log: LogOptions { segment_size: 4096, flush_interval: Duration::from_millis(5), delayed: false },
        checkpoint: CheckpointOptions {
            data_file_size: 8192,
            auto_checkpoint_bytes: 0,
            auto_checkpoint_interval: None,
            merge_threshold: 0.5,
            auto_merge: false,
        },
        recovery_threads: 2,
    }
}

/// A durable database in [`DIR`] on `fs`, with [`small_storage`] and no
/// background collector.
pub fn sim_options(fs: &SimFs) -> Options {
    Options {
        gc_interval: None,
        data_dir: Some(DIR.into()),
        storage: small_storage(),
        fs: Arc::new(fs.clone()),
        ..Options::default()
    }
}

/// A xorshift generator: the same sequence from the same seed, so a
/// failing random workload runs again exactly.
pub struct Rng(pub u64);

impl Rng {
    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}
