//! [`Storage`]: the log and the checkpoint worker of one database
//! directory, as the engine sees them.
//!
//! ```text
//!  engine commit ──Record──▶ Log (group commit, fdatasync) ──batch──▶ checkpoint worker
//!                                  │                                    │ data/delta appends
//!                                  ▼                                    ▼ manifest, merge
//!                            log-*.wal segments              data-*.cdat, delta-*.cdlt,
//!                                                            manifest-*.ckp
//! ```
//!
//! A `Storage` comes from recovery ([`Storage::open`], then
//! [`Recovery::load`] and [`Recovery::start`]), even for a new, empty
//! directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::checkpoint::worker::Checkpointer;
use crate::checkpoint::{CheckpointOptions, CheckpointReport, CheckpointStats, FileInfo};
use crate::error::{Error, Result};
use crate::fs::Fs;
use crate::log::{Durability, Log, LogOptions, LogReader, Record, Slots};
use crate::recovery::Recovery;

/// Settings of a database directory's durability.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Log segments, delayed durability.
    pub log: LogOptions,
    /// Checkpoint files, automatic checkpoints, merging.
    pub checkpoint: CheckpointOptions,
    /// Threads that load checkpoint files at recovery (0: one per core).
    pub recovery_threads: usize,
}

/// The durable side of a database: append commits, take checkpoints.
pub struct Storage {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    opts: Options,
    log: Arc<Log>,
    ckpt: Checkpointer,
    slots: Arc<Slots>,
}

impl Storage {
    /// Starts recovery of `dir` (created if missing): see [`Recovery`].
    pub fn open(fs: Arc<dyn Fs>, dir: impl Into<PathBuf>, opts: Options) -> Result<Recovery> {
        Recovery::open(fs, dir, opts)
    }

    pub(crate) fn new(
        fs: Arc<dyn Fs>,
        dir: PathBuf,
        opts: Options,
        log: Arc<Log>,
        ckpt: Checkpointer,
        slots: Arc<Slots>,
    ) -> Storage {
        Storage { fs, dir, opts, log, ckpt, slots }
    }

    /// The replication slots of the directory.
    pub fn slots(&self) -> &Arc<Slots> {
        &self.slots
    }

    /// A reader of committed transactions from `from` on (see
    /// [`crate::log::feed`]).
    pub fn reader(&self, from: crate::log::LogPos) -> LogReader {
        LogReader::new(self.fs.clone(), self.dir.clone(), self.log.clone(), from)
    }

    /// Appends a redo record with the log's default durability; see
    /// [`Log::commit`].
    pub fn commit(&self, record: Record) -> Result<()> {
        self.log.commit(record, Durability::Default)
    }

    /// Appends a redo record, choosing durability for this call.
    pub fn commit_with(&self, record: Record, durability: Durability) -> Result<()> {
        self.log.commit(record, durability)
    }

    /// Appends a redo record whose commit timestamp `stamp` takes at the
    /// moment of appending; see [`Log::commit_stamped`].
    pub fn commit_stamped(
        &self,
        record: Record,
        durability: Durability,
        after: Option<u64>,
        stamp: &mut dyn FnMut() -> u64,
    ) -> Result<u64> {
        self.log.commit_stamped(record, durability, after, stamp)
    }

    /// Whether a commit asking for `durability` returns before its record
    /// is durable.
    pub fn delays(&self, durability: Durability) -> bool {
        self.log.delays(durability)
    }

    /// The highest commit timestamp among records that a failed write took
    /// down, 0 if none; see [`Log::failed_upto`].
    pub fn failed_upto(&self) -> u64 {
        self.log.failed_upto()
    }

    /// The log, for callers that keep their own handle.
    pub fn log(&self) -> &Arc<Log> {
        &self.log
    }

    /// True once the log has failed (a sync failed): no commit succeeds
    /// until restart. A failed write does not fail the log.
    pub fn is_failed(&self) -> bool {
        self.log.is_failed()
    }

    /// Makes every commit so far durable, then checkpoints them: closes the
    /// current pair, merges if [`CheckpointOptions::auto_merge`], writes a
    /// manifest and removes log segments before its replay position.
    pub fn checkpoint(&self) -> Result<CheckpointReport> {
        self.flush_for_checkpoint()?;
        self.ckpt.checkpoint(self.opts.checkpoint.auto_merge)
    }

    /// A checkpoint that merges sparse pairs whatever `auto_merge` says.
    pub fn merge(&self) -> Result<CheckpointReport> {
        self.flush_for_checkpoint()?;
        self.ckpt.checkpoint(true)
    }

    fn flush_for_checkpoint(&self) -> Result<()> {
        match self.log.flush() {
            // A failed log still handed over everything it synced; that
            // much can be checkpointed.
            Ok(()) | Err(Error::LogFailed(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The checkpoint pair files and their states.
    pub fn files(&self) -> Vec<FileInfo> {
        self.ckpt.files()
    }

    /// The checkpoint worker's counters: checkpoints and their times,
    /// bytes written, time busy.
    pub fn checkpoint_stats(&self) -> CheckpointStats {
        self.ckpt.stats()
    }

    /// Pauses (`true`) or resumes the continuous writing of durable
    /// batches into data and delta files, e.g. to measure what
    /// checkpointing costs the commits. Commits go on while paused: the log
    /// has them. The cost is memory and disk: batches queue in memory
    /// (about the size of the log written while paused), no automatic
    /// checkpoint is taken, and the log segments stay until a checkpoint
    /// covers them, so a restart meanwhile replays all of them. A
    /// checkpoint (or [`close`](Storage::close)) asked for while paused
    /// still processes every queued batch first, and the pause goes on
    /// after it; resuming wakes the worker to catch up at once.
    pub fn pause_checkpoints(&self, paused: bool) {
        self.ckpt.pause(paused);
    }

    /// True while checkpointing is paused; see
    /// [`pause_checkpoints`](Storage::pause_checkpoints).
    pub fn checkpoints_paused(&self) -> bool {
        self.ckpt.is_paused()
    }

    /// The database directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file system in use.
    pub fn fs(&self) -> &Arc<dyn Fs> {
        &self.fs
    }

    /// Flushes delayed commits and stops the log and the checkpoint worker.
    /// Dropping does the same.
    pub fn close(self) -> Result<()> {
        let r = self.log.close();
        self.ckpt.stop();
        r
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        let _ = self.log.close();
        self.ckpt.stop();
    }
}
