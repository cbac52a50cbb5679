//! The checkpoint worker: one thread that turns durable log batches into
//! data/delta files, writes manifests, merges, and removes what is no
//! longer needed.
//!
//! Commits never wait for it: the log queues each batch after
//! its fdatasync and goes on. The worker processes batches strictly in log
//! order, so "every record before position P is in the pair files" holds
//! at every batch boundary P, whatever the records' commit timestamps; that
//! P is the replay position a manifest records.
//!
//! All of its I/O is sequential appends, plus one small manifest per
//! checkpoint. Merges run on the same thread, so no delete can slip past a
//! merge in progress; batches queue meanwhile (memory, not commit latency).
//! Checkpointing can also be paused, to measure what it costs the
//! commits: batches then stay queued until resumed or until a checkpoint
//! (or stop) is asked for, which first processes all of them.
//!
//! Commits never depend on it either: whatever fails here, the log keeps
//! every segment from the last manifest's replay position, and recovery
//! starts from there. After a failed *write* (a full disk) the worker
//! falls behind: it stops writing, only notes how far the log has gone,
//! and at the next checkpoint (asked for, or due by the log's growth)
//! catches up by starting again from the last manifest and reading the
//! log after it back from disk. After a failed *sync*, or damaged data, it
//! stops until restart: later checkpoints report
//! [`Error::CheckpointFailed`].

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::mpsc::{channel, Sender};
use std::sync::Condvar;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::checkpoint::manifest::{parse_manifest_name, Manifest};
use crate::checkpoint::merge;
use crate::checkpoint::pair::{
    data_name, delta_name, put_deleted, put_row, read_data, read_delta, AppendFile, FileInfo, FileKind,
    FileState, PairMeta,
};
use crate::error::{Error, Result};
use crate::format::Magic;
use crate::fs::Fs;
use crate::log::segment::{parse_segment_name, read_batches, Batch};
use crate::log::writer::BatchSink;
use crate::log::{decode_record, LogPos, Op, RowId};

/// Merged data is written in blocks of about this size.
const MERGE_BLOCK: usize = 64 << 10;
/// A batch's data or delta block is cut at about this size, far below the
/// largest frame recovery accepts.
const BLOCK_LIMIT: usize = 1 << 20;

/// Log bytes that must have come since the last checkpoint for the
/// interval to take another: an idle database is not checkpointed over
/// and over.
pub const AUTO_CHECKPOINT_MIN_BYTES: u64 = 1 << 20;

/// Settings of checkpointing and merging.
#[derive(Debug, Clone)]
pub struct CheckpointOptions {
    /// The current data file is closed once it grows past this.
    pub data_file_size: u64,
    /// Take a checkpoint by itself after this many log bytes (0: only when
    /// asked).
    pub auto_checkpoint_bytes: u64,
    /// Take a checkpoint by itself once this long has passed since the
    /// last one, if at least `AUTO_CHECKPOINT_MIN_BYTES` of log have come
    /// since (`None`: by log size only). Bounds the log a restart replays
    /// by time: a steady load of small transactions can take minutes to
    /// write `auto_checkpoint_bytes`.
    pub auto_checkpoint_interval: Option<Duration>,
    /// Merge pairs whose live share is below this (0.0 turns merging off).
    pub merge_threshold: f64,
    /// Merge as part of every checkpoint, not only on request.
    pub auto_merge: bool,
}

impl Default for CheckpointOptions {
    fn default() -> Self {
        CheckpointOptions {
            data_file_size: 64 << 20,
            auto_checkpoint_bytes: 256 << 20,
            auto_checkpoint_interval: Some(Duration::from_secs(30)),
            merge_threshold: 0.5,
            auto_merge: true,
        }
    }
}

/// What a checkpoint did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckpointReport {
    /// Sequence number of the manifest written.
    pub manifest_seq: u64,
    /// The log position recovery will replay from.
    pub replay: LogPos,
    /// Pairs the manifest names.
    pub pairs: usize,
    /// Pairs merged away by this checkpoint.
    pub merged_sources: usize,
    /// Pair files removed.
    pub removed_files: usize,
    /// Log segments removed.
    pub removed_segments: usize,
}

/// Counters of the checkpoint worker's work since the storage started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckpointStats {
    /// Checkpoints taken (asked for and automatic).
    pub checkpoints: u64,
    /// Total time spent in checkpoints (closing pairs, merging, manifests).
    pub checkpoint_time: Duration,
    /// The longest checkpoint.
    pub longest_checkpoint: Duration,
    /// Log batches turned into data and delta blocks.
    pub batches: u64,
    /// Bytes of data and delta blocks appended, merges included.
    pub bytes_written: u64,
    /// Time the worker spent working (batches and checkpoints), not waiting.
    pub busy: Duration,
    /// Times the worker fell behind after a failed write.
    pub fell_behind: u64,
    /// Times it caught up again from the last manifest and the log.
    pub caught_up: u64,
}

pub(crate) enum Msg {
    Batch(Batch),
    Checkpoint { merge: bool, reply: Sender<Result<CheckpointReport>> },
    Stop,
}

struct Pair {
    meta: PairMeta,
    state: FileState,
    data: Option<AppendFile>,
    delta: Option<AppendFile>,
    /// Deleted identities gathered from the batch being processed.
    pending_delta: Vec<u8>,
}

impl Pair {
    fn infos(&self) -> [FileInfo; 2] {
        let info = |kind, bytes| FileInfo {
            id: self.meta.id,
            kind,
            state: self.state,
            min_ts: self.meta.min_ts,
            max_ts: self.meta.max_ts,
            rows: self.meta.rows,
            deleted: self.meta.deleted,
            bytes,
        };
        [
            info(FileKind::Data, self.data.as_ref().map_or(self.meta.data_len, AppendFile::len)),
            info(FileKind::Delta, self.delta.as_ref().map_or(self.meta.delta_len, AppendFile::len)),
        ]
    }

    /// Syncs both files and records their lengths.
    fn sync(&mut self) -> Result<()> {
        if let Some(d) = &mut self.data {
            d.sync()?;
            self.meta.data_len = d.len();
        }
        if let Some(d) = &mut self.delta {
            d.sync()?;
            self.meta.delta_len = d.len();
        }
        Ok(())
    }
}

/// Whether the pair files reflect every batch the worker was handed.
enum Health {
    /// They do, up to the processed position.
    Good,
    /// A write failed part-way, so what was written since the last manifest
    /// is not to be trusted. Batches are only noted (the log keeps them)
    /// until the next checkpoint catches up from that manifest.
    Behind,
    /// A sync failed, or a file or the log is damaged: stopped until
    /// restart. The string is the cause.
    Stopped(String),
}

/// The worker's state; lives on its thread.
pub(crate) struct Worker {
    /// The first log segment a replication slot still needs.
    keep_from: Arc<AtomicU64>,
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    opts: CheckpointOptions,
    pairs: BTreeMap<u64, Pair>,
    current: Option<u64>,
    precreated: Option<u64>,
    next_id: u64,
    catalog: Option<Vec<u8>>,
    max_ts: u64,
    processed: LogPos,
    manifest_seq: u64,
    bytes_since: u64,
    /// When the last checkpoint (or the worker) began.
    last_checkpoint: Instant,
    health: Health,
    /// The last manifest written (or recovered from): where catching up
    /// starts.
    base: Manifest,
    /// The end of the last batch handed over, processed or not.
    received: LogPos,
    /// Log bytes handed over since falling behind or the last attempt to
    /// catch up.
    missed: u64,
    data_block: Vec<u8>,
    files: Arc<Mutex<Vec<FileInfo>>>,
    stats: Arc<Mutex<CheckpointStats>>,
    /// Block bytes appended since the last publication of `stats`.
    written: u64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Worker {
    /// A worker continuing from `manifest` (whose pairs are all Active);
    /// `next_id` is above every pair id found on disk.
    pub fn new(
        fs: Arc<dyn Fs>,
        dir: PathBuf,
        opts: CheckpointOptions,
        manifest: &Manifest,
        next_id: u64,
        keep_from: Arc<AtomicU64>,
    ) -> Worker {
        let w = Worker {
            keep_from,
            fs,
            dir,
            opts,
            pairs: pairs_of(manifest),
            current: None,
            precreated: None,
            next_id: next_id.max(manifest.next_file_id),
            catalog: manifest.catalog.clone(),
            max_ts: manifest.max_commit_ts,
            processed: manifest.replay,
            manifest_seq: manifest.seq,
            bytes_since: 0,
            last_checkpoint: Instant::now(),
            health: Health::Good,
            base: manifest.clone(),
            received: manifest.replay,
            missed: 0,
            data_block: Vec::new(),
            files: Arc::default(),
            stats: Arc::default(),
            written: 0,
        };
        w.publish();
        w
    }

    fn publish(&self) {
        let infos = self.pairs.values().flat_map(Pair::infos).collect();
        *lock(&self.files) = infos;
    }

    fn run(mut self, queue: &Queue) {
        loop {
            for msg in queue.take() {
                let started = Instant::now();
                match msg {
                    Msg::Batch(b) => {
                        self.received = b.end_pos();
                        match self.health {
                            Health::Good => {
                                let r = self.process_batch(&b);
                                let _ = self.note(r);
                            }
                            Health::Behind => self.missed(b.bytes.len()),
                            Health::Stopped(_) => {}
                        }
                        lock(&self.stats).batches += 1;
                    }
                    Msg::Checkpoint { merge, reply } => {
                        let _ = reply.send(self.checkpoint(merge));
                    }
                    Msg::Stop => return,
                }
                let mut st = lock(&self.stats);
                st.busy += started.elapsed();
                st.bytes_written += std::mem::take(&mut self.written);
            }
        }
    }

    /// Classifies a failure: a failed write or read leaves the worker
    /// behind (it catches up at the next checkpoint); a failed sync or
    /// damaged data stops it until restart, since after a failed fsync
    /// nothing says which written pages reached the disk.
    fn note<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            let retry = matches!(e, Error::Io { .. }) && !e.is_failed_sync();
            match self.health {
                Health::Stopped(_) => {}
                _ if !retry => {
                    tracing::error!(error = %e, "checkpointing failed and stops until restart");
                    self.health = Health::Stopped(e.to_string());
                }
                Health::Good => {
                    lock(&self.stats).fell_behind += 1;
                    tracing::error!(error = %e, "a checkpoint write failed; checkpointing resumes at the next checkpoint");
                    self.health = Health::Behind;
                }
                Health::Behind => {
                    tracing::warn!(error = %e, "checkpointing could not catch up; it tries again at the next checkpoint");
                }
            }
        }
        r
    }

    /// Notes a batch that arrived while behind; once a checkpoint's worth
    /// of log has gone by, tries to catch up, as an automatic checkpoint
    /// would have come by then.
    fn missed(&mut self, bytes: usize) {
        self.missed += bytes as u64;
        let auto = self.opts.auto_checkpoint_bytes;
        if auto > 0 && self.missed >= auto {
            let r = self.catch_up();
            let _ = self.note(r);
        }
    }

    /// Rebuilds the worker's state after a failed write: back to the last
    /// manifest, then every batch handed over since, read back from the
    /// log (which keeps every segment from the manifest's replay position).
    /// Pairs created since that manifest are dropped with their files (no
    /// manifest names them); the delta files it names are cut back to the
    /// lengths it records when next appended to. Nothing a manifest on disk
    /// counts is touched, so a crash at any point recovers as before, and
    /// every record lands in the pair files exactly once.
    fn catch_up(&mut self) -> Result<()> {
        self.missed = 0;
        self.reset_to_base();
        let (fs, dir) = (self.fs.clone(), self.dir.clone());
        let (from, to) = (self.base.replay, self.received);
        read_batches(fs.as_ref(), &dir, from, to, |batch| self.process_batch(&batch))?;
        self.health = Health::Good;
        lock(&self.stats).caught_up += 1;
        tracing::info!(
            from_segment = from.segment,
            from_offset = from.offset,
            to_segment = to.segment,
            to_offset = to.offset,
            "checkpointing caught up with the log"
        );
        Ok(())
    }

    /// Forgets everything since the last manifest (see
    /// [`Worker::catch_up`]).
    fn reset_to_base(&mut self) {
        let named: HashSet<u64> = self.base.pairs.iter().map(|p| p.id).collect();
        let mut pairs = pairs_of(&self.base);
        for (id, mut p) in std::mem::take(&mut self.pairs) {
            if named.contains(&id) {
                continue;
            }
            if id < self.base.next_file_id {
                // Named by an earlier manifest only: still waiting for its
                // removal after a checkpoint.
                p.state = FileState::WaitingForRemoval;
                (p.data, p.delta) = (None, None);
                pairs.insert(id, p);
                continue;
            }
            for name in [data_name(id), delta_name(id)] {
                match self.fs.remove(&self.dir.join(&name)) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    // Recovery removes it as an orphan.
                    Err(e) => {
                        tracing::warn!(file = name, error = %e, "could not remove an unnamed pair file")
                    }
                }
            }
        }
        self.pairs = pairs;
        self.current = None;
        self.precreated = None;
        self.catalog = self.base.catalog.clone();
        self.max_ts = self.base.max_commit_ts;
        self.processed = self.base.replay;
        self.manifest_seq = self.base.seq;
        self.bytes_since = 0;
        self.data_block.clear();
        self.publish();
    }

    fn create_pair(&mut self, state: FileState) -> Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let fs = self.fs.as_ref();
        let data = AppendFile::create(fs, self.dir.join(data_name(id)), Magic::Data, id)?;
        let delta = AppendFile::create(fs, self.dir.join(delta_name(id)), Magic::Delta, id)?;
        fs.sync_dir(&self.dir).map_err(|e| Error::io(&self.dir, "sync directory", e))?;
        let pair = Pair {
            meta: PairMeta::empty(id),
            state,
            data: Some(data),
            delta: Some(delta),
            pending_delta: Vec::new(),
        };
        self.pairs.insert(id, pair);
        Ok(id)
    }

    /// The pair receiving inserts; takes the pre-created one and pre-creates
    /// its successor.
    fn current(&mut self) -> Result<u64> {
        if let Some(id) = self.current {
            return Ok(id);
        }
        let id = match self.precreated.take() {
            Some(id) => id,
            None => self.create_pair(FileState::PreCreated)?,
        };
        if let Some(p) = self.pairs.get_mut(&id) {
            p.state = FileState::UnderConstruction;
        }
        self.current = Some(id);
        self.precreated = Some(self.create_pair(FileState::PreCreated)?);
        Ok(id)
    }

    fn process_batch(&mut self, batch: &Batch) -> Result<()> {
        let corrupt = || Error::CheckpointFailed(format!("undecodable record in batch at {:?}", batch.start));
        for payload in batch.records() {
            let rec = decode_record(payload).ok_or_else(corrupt)?;
            self.max_ts = self.max_ts.max(rec.commit_ts);
            for op in rec.ops {
                match op {
                    Op::Insert { table, seq, data } => {
                        let ts = rec.commit_ts;
                        let cur = self.current()?;
                        put_row(&mut self.data_block, RowId { table, ts, seq }, data);
                        if let Some(p) = self.pairs.get_mut(&cur) {
                            p.meta.cover(ts);
                            p.meta.rows += 1;
                        }
                        if self.data_block.len() >= BLOCK_LIMIT {
                            self.append_pending()?;
                            // A bulk load's batch fills several pairs,
                            // which recovery loads side by side.
                            self.close_if_full()?;
                        }
                    }
                    Op::Delete { table, ts, seq, .. } => {
                        let mut full = false;
                        // Every pair whose range holds `ts` gets it; the
                        // identity matches a row in only one of them.
                        for p in self.pairs.values_mut() {
                            let live = matches!(p.state, FileState::Active | FileState::UnderConstruction);
                            if live && p.meta.may_hold(ts) {
                                put_deleted(&mut p.pending_delta, RowId { table, ts, seq });
                                p.meta.deleted += 1;
                                full |= p.pending_delta.len() >= BLOCK_LIMIT;
                            }
                        }
                        if full {
                            self.append_pending()?;
                        }
                    }
                    Op::Schema { catalog } => self.catalog = Some(catalog.to_vec()),
                }
            }
        }
        self.append_pending()?;
        self.processed = batch.end_pos();
        self.bytes_since += batch.bytes.len() as u64;
        self.close_if_full()?;
        self.publish();
        let auto = self.opts.auto_checkpoint_bytes;
        let due_by_time = self.opts.auto_checkpoint_interval.is_some_and(|every| {
            self.bytes_since >= AUTO_CHECKPOINT_MIN_BYTES && self.last_checkpoint.elapsed() >= every
        });
        if (auto > 0 && self.bytes_since >= auto) || due_by_time {
            self.checkpoint_inner(self.opts.auto_merge)?;
        }
        Ok(())
    }

    /// Appends this batch's data block and delta blocks.
    fn append_pending(&mut self) -> Result<()> {
        if !self.data_block.is_empty() {
            let cur = self.current.and_then(|id| self.pairs.get_mut(&id));
            if let Some(d) = cur.and_then(|p| p.data.as_mut()) {
                d.append_block(&self.data_block)?;
                self.written += self.data_block.len() as u64;
            }
            self.data_block.clear();
        }
        let fs = self.fs.clone();
        for p in self.pairs.values_mut() {
            if p.pending_delta.is_empty() {
                continue;
            }
            if p.delta.is_none() {
                let path = self.dir.join(delta_name(p.meta.id));
                p.delta = Some(AppendFile::reopen(fs.as_ref(), path, p.meta.delta_len)?);
            }
            if let Some(d) = &mut p.delta {
                d.append_block(&p.pending_delta)?;
                self.written += p.pending_delta.len() as u64;
            }
            p.pending_delta.clear();
        }
        Ok(())
    }

    /// Closes the current pair once its data file has reached the size
    /// of a pair.
    fn close_if_full(&mut self) -> Result<()> {
        let current = self.current.and_then(|id| self.pairs.get(&id)).and_then(|p| p.data.as_ref());
        if current.is_some_and(|d| d.len() >= self.opts.data_file_size) {
            self.close_current()?;
        }
        Ok(())
    }

    /// Closes the current pair: its data file is synced and takes no more
    /// rows; it stays under construction until a manifest names it.
    fn close_current(&mut self) -> Result<()> {
        if let Some(id) = self.current.take() {
            if let Some(p) = self.pairs.get_mut(&id) {
                p.sync()?;
                p.data = None;
            }
        }
        Ok(())
    }

    fn checkpoint(&mut self, merge: bool) -> Result<CheckpointReport> {
        match &self.health {
            Health::Stopped(why) => return Err(Error::CheckpointFailed(why.clone())),
            Health::Behind => {
                let r = self.catch_up();
                self.note(r)?;
            }
            Health::Good => {}
        }
        let r = self.checkpoint_inner(merge);
        self.note(r)
    }

    fn checkpoint_inner(&mut self, merge: bool) -> Result<CheckpointReport> {
        let started = Instant::now();
        let r = self.checkpoint_body(merge);
        let took = started.elapsed();
        let mut st = lock(&self.stats);
        st.checkpoints += 1;
        st.checkpoint_time += took;
        st.longest_checkpoint = st.longest_checkpoint.max(took);
        r
    }

    fn checkpoint_body(&mut self, merge: bool) -> Result<CheckpointReport> {
        let mut report = CheckpointReport::default();
        let has_rows = self.current.and_then(|id| self.pairs.get(&id)).is_some_and(|p| p.meta.rows > 0);
        if has_rows {
            self.close_current()?;
        }
        for p in self.pairs.values_mut() {
            p.sync()?;
        }
        if merge && self.opts.merge_threshold > 0.0 {
            report.merged_sources = self.merge()?;
        }
        let seq = self.manifest_seq + 1;
        let named = |p: &&Pair| match p.state {
            FileState::Active | FileState::MergeTarget => true,
            FileState::UnderConstruction => Some(p.meta.id) != self.current,
            _ => false,
        };
        let manifest = Manifest {
            seq,
            replay: self.processed,
            max_commit_ts: self.max_ts,
            next_file_id: self.next_id,
            catalog: self.catalog.clone(),
            pairs: self.pairs.values().filter(named).map(|p| p.meta).collect(),
        };
        manifest.write(self.fs.as_ref(), &self.dir)?;
        self.manifest_seq = seq;
        self.bytes_since = 0;
        self.last_checkpoint = Instant::now();
        for p in self.pairs.values_mut() {
            p.state = match p.state {
                FileState::MergeTarget => FileState::Active,
                FileState::UnderConstruction if Some(p.meta.id) != self.current => FileState::Active,
                FileState::MergedSource => FileState::WaitingForRemoval,
                s => s,
            };
        }
        report.manifest_seq = seq;
        report.replay = self.processed;
        report.pairs = manifest.pairs.len();
        self.base = manifest;
        self.remove_unneeded(&mut report);
        self.publish();
        tracing::info!(
            seq,
            pairs = report.pairs,
            merged = report.merged_sources,
            replay_segment = report.replay.segment,
            replay_offset = report.replay.offset,
            "checkpoint written"
        );
        Ok(report)
    }

    /// Removes files no manifest on disk needs: pairs waiting for removal,
    /// older manifests, log segments before the replay position. Failures
    /// are left for the next checkpoint to retry.
    fn remove_unneeded(&mut self, report: &mut CheckpointReport) {
        let fs = self.fs.clone();
        let dir = self.dir.clone();
        let remove = |name: String| match fs.remove(&dir.join(&name)) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
            Err(e) => {
                tracing::warn!(file = name, error = %e, "could not remove file; will retry");
                false
            }
        };
        // Older manifests go first: once they are gone, nothing names the
        // files removed after them.
        if let Ok(names) = fs.list(&dir) {
            for name in names {
                if parse_manifest_name(&name).is_some_and(|s| s < self.manifest_seq) {
                    remove(name);
                }
            }
            for name in fs.list(&dir).unwrap_or_default() {
                // A replication slot may still need older segments.
                let before = self.processed.segment.min(self.keep_from.load(SeqCst));
                if parse_segment_name(&name).is_some_and(|s| s < before) && remove(name) {
                    report.removed_segments += 1;
                }
            }
        }
        let waiting: Vec<u64> = self
            .pairs
            .values()
            .filter(|p| p.state == FileState::WaitingForRemoval)
            .map(|p| p.meta.id)
            .collect();
        for id in waiting {
            if remove(data_name(id)) && remove(delta_name(id)) {
                self.pairs.remove(&id);
                report.removed_files += 2;
            }
        }
        if let Err(e) = fs.sync_dir(&dir) {
            tracing::warn!(error = %e, "could not sync the directory after removals");
        }
    }

    /// Merges the groups the policy picks; returns how many sources went.
    fn merge(&mut self) -> Result<usize> {
        let active: Vec<PairMeta> =
            self.pairs.values().filter(|p| p.state == FileState::Active).map(|p| p.meta).collect();
        let groups = merge::plan(&active, self.opts.merge_threshold, self.opts.data_file_size);
        let mut merged = 0;
        for group in groups {
            merged += group.len();
            self.merge_group(&group)?;
        }
        Ok(merged)
    }

    /// Writes the live rows of `group` into a new pair.
    fn merge_group(&mut self, group: &[u64]) -> Result<()> {
        let target = self.create_pair(FileState::MergeTarget)?;
        let mut meta = PairMeta::empty(target);
        let mut out = self.pairs.get_mut(&target).and_then(|p| p.data.take()).ok_or(Error::Closed)?;
        let mut block = Vec::new();
        let mut written = 0u64;
        let mut failed = None;
        for id in group {
            let Some(src) = self.pairs.get(id).map(|p| p.meta) else {
                continue;
            };
            let deleted = read_delta(self.fs.as_ref(), &self.dir, &src)?;
            read_data(self.fs.as_ref(), &self.dir, &src, |row, data| {
                if deleted.contains(&row) || failed.is_some() {
                    return;
                }
                put_row(&mut block, row, data);
                meta.cover(row.ts);
                meta.rows += 1;
                if block.len() >= MERGE_BLOCK {
                    failed = out.append_block(&block).err();
                    written += block.len() as u64;
                    block.clear();
                }
            })?;
        }
        if let Some(e) = failed {
            return Err(e);
        }
        if !block.is_empty() {
            out.append_block(&block)?;
            written += block.len() as u64;
        }
        self.written += written;
        out.sync()?;
        meta.data_len = out.len();
        for id in group {
            if let Some(p) = self.pairs.get_mut(id) {
                p.state = FileState::MergedSource;
                p.data = None;
                p.delta = None;
            }
        }
        if let Some(p) = self.pairs.get_mut(&target) {
            p.data = Some(out);
            p.meta = meta;
            if meta.rows == 0 {
                // Nothing live: the target is never named.
                p.state = FileState::WaitingForRemoval;
            }
        }
        tracing::info!(sources = ?group, target, rows = meta.rows, "merged checkpoint pairs");
        Ok(())
    }
}

/// The pairs a manifest names, all Active, none open.
fn pairs_of(manifest: &Manifest) -> BTreeMap<u64, Pair> {
    manifest
        .pairs
        .iter()
        .map(|m| {
            let pair = Pair {
                meta: *m,
                state: FileState::Active,
                data: None,
                delta: None,
                pending_delta: Vec::new(),
            };
            (m.id, pair)
        })
        .collect()
}

/// Batches are handed over in bulk: waking the worker for every batch
/// costs the committer a cross-CPU wake-up per flush (measured at a fifth
/// of single-committer throughput on a 2-core VM), so the log only queues,
/// and the worker wakes when this much is queued, when a command arrives,
/// or after [`IDLE_WAKE`].
const WAKE_BYTES: usize = 256 << 10;
/// The longest a queued batch waits for the worker.
const IDLE_WAKE: Duration = Duration::from_millis(20);

/// The worker's inbox. While paused it only collects batches; a command
/// still hands the worker everything queued, since a checkpoint covers
/// every batch before it.
#[derive(Default)]
struct Queue {
    state: Mutex<Inbox>,
    cv: Condvar,
}

#[derive(Default)]
struct Inbox {
    msgs: VecDeque<Msg>,
    /// Batch bytes queued.
    pending: usize,
    /// Commands (checkpoint, stop) queued: the worker takes everything
    /// queued as soon as one arrives, paused or not.
    commands: usize,
    /// The worker has exited; messages are dropped (a checkpoint's reply
    /// channel closes, so its caller sees `Closed`).
    closed: bool,
    /// Batches wait until unpaused or until a command arrives.
    paused: bool,
    /// Unpaused with batches queued: the worker takes them without waiting
    /// for [`WAKE_BYTES`] or [`IDLE_WAKE`].
    catch_up: bool,
    /// The worker sleeps on an empty queue with no timeout (an idle
    /// server wakes it for nothing): the first message wakes it.
    empty_wait: bool,
}

impl Queue {
    fn push(&self, msg: Msg) {
        let mut s = lock(&self.state);
        if s.closed {
            return;
        }
        let urgent = match &msg {
            Msg::Batch(b) => {
                s.pending += b.bytes.len();
                // While paused, a wake-up would only put the worker back
                // to sleep, at the committers' cost.
                !s.paused && s.pending >= WAKE_BYTES
            }
            _ => {
                s.commands += 1;
                true
            }
        };
        s.msgs.push_back(msg);
        if urgent || s.empty_wait {
            self.cv.notify_one();
        }
    }

    /// Waits for work and takes all of it.
    fn take(&self) -> VecDeque<Msg> {
        let mut s = lock(&self.state);
        loop {
            if s.commands > 0 || (!s.paused && (s.catch_up || s.pending >= WAKE_BYTES)) {
                break;
            }
            if s.paused {
                // Only a command or resuming ends the wait: no idle
                // wake-ups while the queue grows.
                s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            if s.msgs.is_empty() {
                // Nothing to wait for in time: the first batch wakes it,
                // and it then waits up to IDLE_WAKE for more.
                s.empty_wait = true;
                s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
                s.empty_wait = false;
                continue;
            }
            let (g, r) = self.cv.wait_timeout(s, IDLE_WAKE).unwrap_or_else(|e| e.into_inner());
            s = g;
            if r.timed_out() && !s.paused && !s.msgs.is_empty() {
                break;
            }
        }
        s.pending = 0;
        s.commands = 0;
        s.catch_up = false;
        std::mem::take(&mut s.msgs)
    }

    fn set_paused(&self, paused: bool) {
        let mut s = lock(&self.state);
        if s.paused && !paused {
            s.catch_up = !s.msgs.is_empty();
        }
        s.paused = paused;
        self.cv.notify_one();
    }

    fn is_paused(&self) -> bool {
        lock(&self.state).paused
    }

    fn close(&self) {
        let mut s = lock(&self.state);
        s.closed = true;
        s.msgs.clear();
    }
}

/// Closes the queue when the worker's thread ends, however it ends.
struct CloseOnExit(Arc<Queue>);

impl Drop for CloseOnExit {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The handle to the worker thread.
pub(crate) struct Checkpointer {
    queue: Arc<Queue>,
    thread: Mutex<Option<JoinHandle<()>>>,
    files: Arc<Mutex<Vec<FileInfo>>>,
    stats: Arc<Mutex<CheckpointStats>>,
}

impl Checkpointer {
    /// Starts the worker's thread.
    pub fn spawn(worker: Worker) -> Result<Checkpointer> {
        let queue = Arc::new(Queue::default());
        let files = worker.files.clone();
        let stats = worker.stats.clone();
        let q = queue.clone();
        let thread = std::thread::Builder::new()
            .name("centum-checkpoint".into())
            .spawn(move || {
                let guard = CloseOnExit(q);
                worker.run(&guard.0);
            })
            .map_err(|e| Error::io("", "spawn checkpoint thread", e))?;
        Ok(Checkpointer { queue, thread: Mutex::new(Some(thread)), files, stats })
    }

    /// The log's hand-off: queues each durable batch for the worker.
    pub fn sink(&self) -> BatchSink {
        let queue = self.queue.clone();
        Box::new(move |b| queue.push(Msg::Batch(b)))
    }

    /// Queues a batch directly (the recovered log tail).
    pub fn send(&self, b: Batch) {
        self.queue.push(Msg::Batch(b));
    }

    /// Takes a checkpoint after every batch queued so far.
    pub fn checkpoint(&self, merge: bool) -> Result<CheckpointReport> {
        let (reply, rx) = channel();
        self.queue.push(Msg::Checkpoint { merge, reply });
        rx.recv().map_err(|_| Error::Closed)?
    }

    /// The pair files and their states.
    pub fn files(&self) -> Vec<FileInfo> {
        lock(&self.files).clone()
    }

    /// The worker's counters.
    pub fn stats(&self) -> CheckpointStats {
        *lock(&self.stats)
    }

    /// Holds batches in the queue (`true`) or lets the worker take them;
    /// see [`Storage::pause_checkpoints`](crate::Storage::pause_checkpoints).
    pub fn pause(&self, paused: bool) {
        self.queue.set_paused(paused);
    }

    /// True while batches are held in the queue.
    pub fn is_paused(&self) -> bool {
        self.queue.is_paused()
    }

    /// Stops the worker after the batches queued so far.
    pub fn stop(&self) {
        self.queue.push(Msg::Stop);
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop();
    }
}
