//! Recovery: from the files on disk back to the engine's state.
//!
//! ```text
//!  1. manifest   newest manifest-<seq>.ckp that checks (older only if provably safe)
//!  2. log tail   segments from the manifest's replay position, in order;
//!                collect inserts, deletes, the last catalog image; a torn
//!                last batch ends the log (and is cut off before appending)
//!  3. catalog    handed to the engine first (tables before rows)
//!  4. rows       data files loaded in parallel, one worker per core:
//!                  row live  <=>  not in its pair's delta file
//!                            and not deleted by the log tail
//!                then the tail's inserts not deleted by the tail
//!  5. start      orphans removed, log reopened for appends, checkpoint
//!                worker started with the tail queued
//! ```
//!
//! The engine drives it in three calls: [`Recovery::open`] (steps 1–2),
//! [`Recovery::load`] (step 4, the callback may run on several threads at
//! once), [`Recovery::start`] (step 5), reading [`Recovery::catalog`] and
//! [`Recovery::max_commit_ts`] in between.
//!
//! **Falling back to an older manifest.** A newest manifest that does not
//! check is an error, unless an older manifest is still on disk *and* every
//! file it names exists with at least the length it records *and* every log
//! segment from its replay position to the newest is present. Pair files are
//! immutable below the recorded lengths and the log is complete from that
//! position, so loading the older checkpoint and replaying the longer tail
//! gives the same state. Anything else would risk a silently missing
//! transaction, so recovery stops with the corruption error.

use std::collections::{BTreeSet, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::checkpoint::manifest::{manifest_name, parse_manifest_name, Manifest};
use crate::checkpoint::pair::{data_name, delta_name, parse_pair_name, read_data, read_delta};
use crate::checkpoint::worker::{Checkpointer, Worker};
use crate::checkpoint::PairMeta;
use crate::error::{Error, Result};
use crate::format::{check_header, Magic, HEADER_LEN};
use crate::fs::{read_all, Fs};
use crate::log::segment::{parse_segment_name, scan_segment, segment_name, Batch};
use crate::log::writer::{create_segment, Log};
use crate::log::Slots;
use crate::log::{decode_record, LogPos, Op, RowId};
use crate::storage::{Options, Storage};

/// A recovered row version, handed to the engine.
#[derive(Debug, Clone, Copy)]
pub struct LoadedRow<'a> {
    /// Its identity (table, creating commit timestamp, sequence).
    pub id: RowId,
    /// The row image as the engine logged it.
    pub data: &'a [u8],
}

/// What [`Recovery::load`] did.
#[derive(Debug, Clone, Default)]
pub struct LoadStats {
    /// Checkpoint pairs read.
    pub pairs: usize,
    /// Live rows handed over from checkpoint files.
    pub checkpoint_rows: u64,
    /// Live rows handed over from the log tail.
    pub tail_rows: u64,
    /// Bytes of checkpoint files read.
    pub bytes: u64,
    /// Worker threads used.
    pub threads: usize,
    /// Wall time.
    pub elapsed: Duration,
}

/// Recovery in progress; see the module documentation.
pub struct Recovery {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    opts: Options,
    manifest: Manifest,
    tail: Vec<Batch>,
    tail_inserts: Vec<(RowId, usize, Range<usize>)>,
    tail_deletes: HashSet<RowId>,
    catalog: Option<Vec<u8>>,
    max_ts: u64,
    /// Where appends continue; `None` when there is no segment yet.
    log_end: Option<LogPos>,
    /// Files to remove before starting (orphans, torn segment creations,
    /// stale manifests).
    remove: Vec<String>,
    next_id: u64,
}

/// The directory's files, by kind.
struct Listing {
    manifests: Vec<u64>,
    segments: Vec<u64>,
    pairs: BTreeSet<u64>,
    temps: Vec<String>,
}

fn list(fs: &dyn Fs, dir: &Path) -> Result<Listing> {
    let names = fs.list(dir).map_err(|e| Error::io(dir, "list", e))?;
    let mut l =
        Listing { manifests: Vec::new(), segments: Vec::new(), pairs: BTreeSet::new(), temps: Vec::new() };
    for name in names {
        if let Some(s) = parse_manifest_name(&name) {
            l.manifests.push(s);
        } else if let Some(s) = parse_segment_name(&name) {
            l.segments.push(s);
        } else if let Some(id) = parse_pair_name(&name) {
            l.pairs.insert(id);
        } else if name.starts_with("manifest-") && name.ends_with(".tmp") {
            l.temps.push(name);
        }
    }
    l.manifests.sort_unstable_by(|a, b| b.cmp(a));
    l.segments.sort_unstable();
    Ok(l)
}

fn file_len(fs: &dyn Fs, path: &Path) -> Option<u64> {
    fs.open(path).ok()?.len().ok()
}

/// True if recovering from `m` cannot miss a transaction (see the module
/// documentation).
fn fallback_is_safe(fs: &dyn Fs, dir: &Path, m: &Manifest, segments: &[u64]) -> bool {
    let files_ok = m.pairs.iter().all(|p| {
        file_len(fs, &dir.join(data_name(p.id))).is_some_and(|l| l >= p.data_len)
            && file_len(fs, &dir.join(delta_name(p.id))).is_some_and(|l| l >= p.delta_len)
    });
    let from: Vec<u64> = segments.iter().copied().filter(|&s| s >= m.replay.segment).collect();
    let log_ok = from.first() == Some(&m.replay.segment) && from.windows(2).all(|w| w[1] == w[0] + 1);
    files_ok && log_ok
}

/// Picks the manifest to recover from; returns it and the stale manifests
/// to set aside.
fn choose_manifest(fs: &dyn Fs, dir: &Path, l: &Listing) -> Result<(Manifest, Vec<String>)> {
    let mut newest_err = None;
    for (i, &seq) in l.manifests.iter().enumerate() {
        let path = dir.join(manifest_name(seq));
        match Manifest::read(fs, &path) {
            Ok(m) if i == 0 => {
                let stale = l.manifests[1..].iter().map(|&s| manifest_name(s)).collect();
                return Ok((m, stale));
            }
            Ok(m) => {
                if !fallback_is_safe(fs, dir, &m, &l.segments) {
                    break;
                }
                tracing::warn!(
                    manifest = %path.display(),
                    error = ?newest_err,
                    "newest manifest is corrupt; an older one is complete and is used"
                );
                let stale = l.manifests.iter().filter(|&&s| s != seq).map(|&s| manifest_name(s)).collect();
                return Ok((m, stale));
            }
            Err(e) if e.is_corruption() => {
                if newest_err.is_none() {
                    newest_err = Some(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
    if let Some(e) = newest_err {
        return Err(e);
    }
    if let Some(&first) = l.segments.first() {
        if first != 1 {
            return Err(Error::corrupt(
                dir.join(segment_name(first)),
                0,
                "no manifest, and the log does not start at segment 1",
            ));
        }
    }
    let fresh = Manifest {
        replay: LogPos { segment: 1, offset: HEADER_LEN },
        next_file_id: 1,
        ..Manifest::default()
    };
    Ok((fresh, Vec::new()))
}

impl Recovery {
    /// Reads the newest valid manifest and the log tail after it. Creates
    /// `dir` if missing (an empty directory is a new database).
    pub fn open(fs: Arc<dyn Fs>, dir: impl Into<PathBuf>, opts: Options) -> Result<Recovery> {
        let dir = dir.into();
        fs.create_dir_all(&dir).map_err(|e| Error::io(&dir, "create directory", e))?;
        let listing = list(fs.as_ref(), &dir)?;
        let (manifest, mut remove) = choose_manifest(fs.as_ref(), &dir, &listing)?;
        remove.extend(listing.temps.iter().cloned());
        let named: HashSet<u64> = manifest.pairs.iter().map(|p| p.id).collect();
        for &id in listing.pairs.iter().filter(|id| !named.contains(id)) {
            remove.push(data_name(id));
            remove.push(delta_name(id));
        }
        // Segments a replication slot still needs stay (see `log::feed`).
        let kept = crate::log::slots::first_kept_segment(fs.as_ref(), &dir)?;
        for &s in listing.segments.iter().filter(|&&s| s < manifest.replay.segment.min(kept)) {
            remove.push(segment_name(s));
        }
        let next_id = listing.pairs.last().map_or(1, |m| m + 1);
        let max_ts = manifest.max_commit_ts;
        let catalog = manifest.catalog.clone();
        let mut r = Recovery {
            fs,
            dir,
            opts,
            manifest,
            tail: Vec::new(),
            tail_inserts: Vec::new(),
            tail_deletes: HashSet::new(),
            catalog,
            max_ts,
            log_end: None,
            remove,
            next_id,
        };
        r.read_tail(&listing.segments)?;
        r.index_tail()?;
        tracing::info!(
            manifest = r.manifest.seq,
            pairs = r.manifest.pairs.len(),
            tail_batches = r.tail.len(),
            tail_inserts = r.tail_inserts.len(),
            tail_deletes = r.tail_deletes.len(),
            "recovery: manifest and log tail read"
        );
        Ok(r)
    }

    /// Reads the segments from the replay position.
    fn read_tail(&mut self, segments: &[u64]) -> Result<()> {
        let start = self.manifest.replay;
        let ids: Vec<u64> = segments.iter().copied().filter(|&s| s >= start.segment).collect();
        if ids.is_empty() {
            if self.manifest.seq > 0 {
                return Err(Error::corrupt(
                    self.dir.join(segment_name(start.segment)),
                    0,
                    "the log segment the manifest replays from is missing",
                ));
            }
            return Ok(());
        }
        for (i, &id) in ids.iter().enumerate() {
            let expected = start.segment + i as u64;
            if id != expected {
                return Err(Error::corrupt(self.dir.join(segment_name(expected)), 0, "log segment missing"));
            }
            let last = i + 1 == ids.len();
            let path = self.dir.join(segment_name(id));
            let file = self.fs.open(&path).map_err(|e| Error::io(&path, "open", e))?;
            let buf = read_all(file.as_ref()).map_err(|e| Error::io(&path, "read", e))?;
            if let Err(e) = check_header(&path, &buf, Magic::Log).and_then(|found| {
                if found == id {
                    Ok(())
                } else {
                    Err(Error::corrupt(&path, 16, format!("header names segment {found}")))
                }
            }) {
                // A segment created by a rotation the crash interrupted: its
                // header was never synced, so no batch in it was either.
                // The manifest's own segment was synced before the manifest
                // named it, so this applies to it only with no manifest.
                let named = id == start.segment && self.manifest.seq > 0;
                let fresh = last && !named && buf.len() <= HEADER_LEN as usize;
                if !fresh {
                    return Err(e);
                }
                tracing::warn!(segment = %path.display(), "dropping a half-created log segment");
                self.remove.push(segment_name(id));
                return Ok(());
            }
            let from = if id == start.segment { start.offset } else { HEADER_LEN };
            let scan = scan_segment(&path, id, &buf, from, last)?;
            let rest = buf.get(scan.valid_end as usize..).unwrap_or_default();
            if scan.torn.is_some() && rest.iter().all(|&b| b == 0) {
                // The space the writer zero-fills ahead of its batches
                // (left when the server stopped without closing the log):
                // nothing was written there, so nothing is cut off.
                tracing::info!(
                    segment = %path.display(),
                    offset = scan.valid_end,
                    zeroed = rest.len(),
                    "log ends where its preallocated space begins"
                );
            } else if let Some(why) = scan.torn {
                tracing::warn!(
                    segment = %path.display(),
                    offset = scan.valid_end,
                    dropped = buf.len() as u64 - scan.valid_end,
                    why,
                    "log ends in a torn batch; it is cut off"
                );
            }
            self.log_end = Some(LogPos { segment: id, offset: scan.valid_end });
            self.tail.extend(scan.batches);
        }
        Ok(())
    }

    /// First pass over the tail: what it inserts, deletes, and the catalog.
    fn index_tail(&mut self) -> Result<()> {
        for (bi, batch) in self.tail.iter().enumerate() {
            for payload in batch.records() {
                let rec = decode_record(payload).ok_or_else(|| {
                    Error::corrupt(
                        self.dir.join(segment_name(batch.start.segment)),
                        batch.start.offset,
                        "undecodable record",
                    )
                })?;
                self.max_ts = self.max_ts.max(rec.commit_ts);
                for op in rec.ops {
                    match op {
                        Op::Insert { table, seq, data } => {
                            let id = RowId { table, ts: rec.commit_ts, seq };
                            // `data` borrows the batch's bytes: keep its range.
                            let at = data.as_ptr() as usize - batch.bytes.as_ptr() as usize;
                            self.tail_inserts.push((id, bi, at..at + data.len()));
                        }
                        Op::Delete { table, ts, seq, .. } => {
                            self.tail_deletes.insert(RowId { table, ts, seq });
                        }
                        Op::Schema { catalog } => self.catalog = Some(catalog.to_vec()),
                    }
                }
            }
        }
        Ok(())
    }

    /// The latest catalog image: the log tail's last Schema operation, or
    /// the manifest's.
    pub fn catalog(&self) -> Option<&[u8]> {
        self.catalog.as_deref()
    }

    /// The largest commit timestamp in the recovered state; the engine's
    /// clock must start above it.
    pub fn max_commit_ts(&self) -> u64 {
        self.max_ts
    }

    /// The manifest recovery started from.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Hands every live row to `sink`, from several threads at once (one
    /// per core, or [`Options::recovery_threads`]). A corrupt or missing
    /// checkpoint file stops the load with an error naming it.
    pub fn load(&self, sink: &(dyn Fn(LoadedRow<'_>) + Sync)) -> Result<LoadStats> {
        let started = Instant::now();
        let mut pairs: Vec<PairMeta> = self.manifest.pairs.clone();
        pairs.sort_by_key(|p| std::cmp::Reverse(p.data_len));
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let wanted = match self.opts.recovery_threads {
            0 => cores,
            n => n,
        };
        let threads = wanted.min(pairs.len()).max(1);
        let next = AtomicUsize::new(0);
        let rows = AtomicU64::new(0);
        let bytes = AtomicU64::new(0);
        let first_err: Mutex<Option<Error>> = Mutex::new(None);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(meta) = pairs.get(i) else { break };
                    if first_err.lock().map_or(true, |e| e.is_some()) {
                        break;
                    }
                    match self.load_pair(meta, sink) {
                        Ok(n) => {
                            rows.fetch_add(n, Ordering::Relaxed);
                            bytes.fetch_add(meta.data_len + meta.delta_len, Ordering::Relaxed);
                        }
                        Err(e) => {
                            if let Ok(mut slot) = first_err.lock() {
                                slot.get_or_insert(e);
                            }
                            break;
                        }
                    }
                });
            }
        });
        if let Some(e) = first_err.into_inner().ok().flatten() {
            return Err(e);
        }
        let mut tail_rows = 0;
        for (id, bi, range) in &self.tail_inserts {
            if self.tail_deletes.contains(id) {
                continue;
            }
            if let Some(data) = self.tail.get(*bi).and_then(|b| b.bytes.get(range.clone())) {
                sink(LoadedRow { id: *id, data });
                tail_rows += 1;
            }
        }
        let stats = LoadStats {
            pairs: pairs.len(),
            checkpoint_rows: rows.into_inner(),
            tail_rows,
            bytes: bytes.into_inner(),
            threads,
            elapsed: started.elapsed(),
        };
        tracing::info!(
            files = stats.pairs * 2,
            rows = stats.checkpoint_rows + stats.tail_rows,
            tail_rows = stats.tail_rows,
            bytes = stats.bytes,
            threads = stats.threads,
            elapsed_ms = stats.elapsed.as_millis() as u64,
            "recovery: rows loaded"
        );
        Ok(stats)
    }

    fn load_pair(&self, meta: &PairMeta, sink: &(dyn Fn(LoadedRow<'_>) + Sync)) -> Result<u64> {
        let started = Instant::now();
        let deleted = read_delta(self.fs.as_ref(), &self.dir, meta)?;
        let mut live = 0;
        let total = read_data(self.fs.as_ref(), &self.dir, meta, |id, data| {
            if !deleted.contains(&id) && !self.tail_deletes.contains(&id) {
                sink(LoadedRow { id, data });
                live += 1;
            }
        })?;
        if total != meta.rows {
            return Err(Error::corrupt(
                self.dir.join(data_name(meta.id)),
                meta.data_len,
                format!("{total} rows, the manifest says {}", meta.rows),
            ));
        }
        tracing::info!(
            pair = meta.id,
            rows = total,
            live,
            bytes = meta.data_len,
            elapsed_us = started.elapsed().as_micros() as u64,
            "recovery: checkpoint pair loaded"
        );
        Ok(live)
    }

    /// Removes leftovers, reopens the log for appends (after cutting off a
    /// torn tail) and starts the checkpoint worker with the tail queued.
    pub fn start(self) -> Result<Storage> {
        let fs = self.fs.clone();
        let dir = self.dir.clone();
        for name in &self.remove {
            let path = dir.join(name);
            match fs.remove(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(&path, "remove", e)),
            }
        }
        fs.sync_dir(&dir).map_err(|e| Error::io(&dir, "sync directory", e))?;
        let (file, pos) = match self.log_end {
            Some(pos) => {
                let path = dir.join(segment_name(pos.segment));
                let file = fs.open(&path).map_err(|e| Error::io(&path, "open", e))?;
                let len = file.len().map_err(|e| Error::io(&path, "stat", e))?;
                if len != pos.offset {
                    file.set_len(pos.offset).map_err(|e| Error::io(&path, "truncate", e))?;
                    file.sync_data().map_err(|e| Error::io(&path, "fdatasync", e))?;
                }
                (file, pos)
            }
            None => {
                let pos = self.manifest.replay;
                (create_segment(fs.as_ref(), &dir, pos.segment)?, pos)
            }
        };
        let slots = Arc::new(Slots::open(fs.clone(), dir.clone())?);
        let worker = Worker::new(
            fs.clone(),
            dir.clone(),
            self.opts.checkpoint.clone(),
            &self.manifest,
            self.next_id,
            slots.keep_from(),
        );
        let ckpt = Checkpointer::spawn(worker)?;
        for batch in self.tail {
            ckpt.send(batch);
        }
        let log = Log::start(fs.clone(), dir.clone(), self.opts.log.clone(), file, pos, Some(ckpt.sink()));
        Ok(Storage::new(fs, dir, self.opts, log, ckpt, slots))
    }
}
