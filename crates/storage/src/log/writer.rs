//! The log writer: group commit with a leader and followers.
//!
//! ```text
//!  committer A ─┐ append record to the buffer (mutex, memcpy)
//!  committer B ─┤ no flush running?  ── yes ─▶ become leader:
//!  committer C ─┘        │                      take the whole buffer,
//!                        no                     release the mutex,
//!                        ▼                      one write + one fdatasync,
//!                 wait on the condvar           mark it durable, wake all,
//!                 until my bytes are durable    hand the batch to the
//!                 (or the log failed)           checkpoint worker
//! ```
//!
//! Records are counted in bytes appended since start; a commit waits until
//! the durable count reaches the end of its record. While one leader writes
//! and syncs, newcomers pile up in the buffer, and when it finishes one of
//! them leads the next flush with all of them: under load one sync serves
//! many commits, and a lone commit flushes at once, never waiting for a
//! timer. A leader that follows a flush of several records yields the CPU
//! once before taking the buffer, so the committers that flush just
//! released can append in time to ride along. Records are appended in
//! arrival order, which need not be commit
//! timestamp order; nothing downstream relies on timestamp order.
//!
//! *Delayed durability* appends and returns. A flusher thread, woken by the
//! first delayed record in an empty window, flushes once the window
//! (`flush_interval`) has passed, so a crash loses at most about that much
//! of acknowledged-but-delayed work. Any durable commit in the meantime
//! flushes the delayed records with its own.
//!
//! After a failed write, fdatasync or rotation the log is *failed* for good:
//! what reached the disk is unknown (Linux may drop dirty pages after a
//! failed fsync and report success next time), so it never retries; every
//! later commit gets [`Error::LogFailed`] with the first cause.

use std::mem;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::thread::Thread;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::format::{header, Magic, HEADER_LEN, MAX_FRAME};
use crate::fs::{File, Fs};
use crate::log::record::Record;
use crate::log::segment::{fill_batch_header, segment_name, Batch, LogPos, BATCH_FRAME_LEN};

/// When a commit returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// The log's default ([`LogOptions::delayed`]).
    #[default]
    Default,
    /// After the record is on disk (fdatasync returned).
    Sync,
    /// After the record is buffered; the flusher syncs it within the flush
    /// interval.
    Delayed,
}

/// Settings of the log.
#[derive(Debug, Clone)]
pub struct LogOptions {
    /// A segment that has grown past this many bytes is closed and the next
    /// flush starts a new one.
    pub segment_size: u64,
    /// Delayed-durability window: the longest a delayed record waits before
    /// the flusher syncs it.
    pub flush_interval: Duration,
    /// Whether [`Durability::Default`] means delayed.
    pub delayed: bool,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions { segment_size: 64 << 20, flush_interval: Duration::from_millis(10), delayed: false }
    }
}

/// Counters of the log's work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogStats {
    /// Records appended.
    pub commits: u64,
    /// Flushes (one write + one fdatasync each).
    pub flushes: u64,
    /// Flushes started by the delayed-durability flusher.
    pub timer_flushes: u64,
    /// Bytes written (batch headers and records).
    pub bytes: u64,
}

struct State {
    /// Pending batch: `BATCH_FRAME_LEN` reserved bytes, then record frames.
    buf: Vec<u8>,
    records: u32,
    /// Record bytes appended since start, and how many of them are durable.
    appended: u64,
    durable: u64,
    flushing: bool,
    failed: Option<String>,
    closed: bool,
    /// When the oldest unflushed delayed record was appended.
    delayed_since: Option<Instant>,
    /// Records in the last flush: more than one means committers are
    /// arriving together.
    last_count: u32,
    stats: LogStats,
    /// Committers parked until their bytes are durable, with the offset
    /// they wait for.
    waiters: Vec<(u64, Thread)>,
}

/// Receives every batch after its fdatasync, in log order (the checkpoint
/// worker's queue).
pub(crate) type BatchSink = Box<dyn Fn(Batch) + Send>;

/// The segment being appended to; touched only by the flush leader.
struct Tail {
    file: Box<dyn File>,
    pos: LogPos,
    sink: Option<BatchSink>,
}

struct Shared {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    opts: LogOptions,
    state: Mutex<State>,
    /// `State::durable`, readable without the mutex: a woken committer
    /// checks it and returns without queueing on the mutex behind every
    /// other committer the same flush woke.
    durable: AtomicU64,
    /// The flusher waiting for delayed records.
    flusher_cv: Condvar,
    tail: Mutex<Tail>,
}

/// The redo log. Cheap to share behind an `Arc`; `commit` is called from
/// many threads.
pub struct Log {
    shared: Arc<Shared>,
    flusher: Mutex<Option<JoinHandle<()>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks; if something did, the state
    // is still consistent enough to report failures.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn empty_buf() -> Vec<u8> {
    vec![0u8; BATCH_FRAME_LEN]
}

/// Creates segment `id` with its header, synced, its directory entry synced.
pub(crate) fn create_segment(fs: &dyn Fs, dir: &Path, id: u64) -> Result<Box<dyn File>> {
    let path = dir.join(segment_name(id));
    let file = fs.create(&path).map_err(|e| Error::io(&path, "create", e))?;
    file.write_at(0, &header(Magic::Log, id)).map_err(|e| Error::io(&path, "write", e))?;
    file.sync_data().map_err(|e| Error::io(&path, "fdatasync", e))?;
    fs.sync_dir(dir).map_err(|e| Error::io(dir, "sync directory", e))?;
    Ok(file)
}

impl Log {
    /// Starts a log appending to `file`, segment `pos.segment`, at
    /// `pos.offset` (recovery has checked and truncated it). Flushed batches
    /// go to `sink`.
    pub(crate) fn start(
        fs: Arc<dyn Fs>,
        dir: PathBuf,
        opts: LogOptions,
        file: Box<dyn File>,
        pos: LogPos,
        sink: Option<BatchSink>,
    ) -> Arc<Log> {
        let shared = Arc::new(Shared {
            fs,
            dir,
            opts,
            state: Mutex::new(State {
                buf: empty_buf(),
                records: 0,
                appended: 0,
                durable: 0,
                flushing: false,
                failed: None,
                closed: false,
                delayed_since: None,
                last_count: 0,
                stats: LogStats::default(),
                waiters: Vec::new(),
            }),
            durable: AtomicU64::new(0),
            flusher_cv: Condvar::new(),
            tail: Mutex::new(Tail { file, pos, sink }),
        });
        let s = shared.clone();
        let flusher =
            std::thread::Builder::new().name("centum-log-flusher".into()).spawn(move || s.run_flusher()).ok();
        Arc::new(Log { shared, flusher: Mutex::new(flusher) })
    }

    /// Appends `record` and, unless delayed, returns once it is durable.
    /// With several committers at once, one write and one sync serve them
    /// all. An error means the record's fate is unknown (it may or may not
    /// be replayed at recovery) and the log takes no more commits.
    pub fn commit(&self, record: Record, durability: Durability) -> Result<()> {
        self.append(record, durability, None).map(drop)
    }

    /// Like [`Log::commit`], but the record's commit timestamp is taken by
    /// `stamp` at the moment of appending, under the lock that orders
    /// appends, and returned. Timestamps taken this way increase in log
    /// order, so a committer whose batch is durable never waits for an
    /// earlier timestamp that is still in a later batch. `stamp` is not
    /// called when the record is refused before appending (too large, log
    /// failed or closed); then no timestamp was taken.
    pub fn commit_stamped(
        &self,
        record: Record,
        durability: Durability,
        stamp: &mut dyn FnMut() -> u64,
    ) -> Result<u64> {
        self.append(record, durability, Some(stamp))
    }

    fn append(
        &self,
        mut record: Record,
        durability: Durability,
        stamp: Option<&mut dyn FnMut() -> u64>,
    ) -> Result<u64> {
        let delayed = match durability {
            Durability::Default => self.shared.opts.delayed,
            Durability::Sync => false,
            Durability::Delayed => true,
        };
        if record.encoded_len() > MAX_FRAME {
            return Err(Error::RecordTooLarge { bytes: record.encoded_len() });
        }
        let mut st = lock(&self.shared.state);
        if let Some(why) = &st.failed {
            return Err(Error::LogFailed(why.clone()));
        }
        if st.closed {
            return Err(Error::Closed);
        }
        // The count and the CRC are computed under the lock, after the
        // stamp; the CRC pass costs about what the copy into the buffer does.
        if let Some(stamp) = stamp {
            record.set_commit_ts(stamp());
        }
        let bytes = record.finish();
        let ts = record.commit_ts();
        st.buf.extend_from_slice(&bytes);
        st.records += 1;
        st.appended += bytes.len() as u64;
        st.stats.commits += 1;
        if delayed {
            if st.delayed_since.is_none() {
                st.delayed_since = Some(Instant::now());
                self.shared.flusher_cv.notify_one();
            }
            return Ok(ts);
        }
        let target = st.appended;
        self.shared.wait_durable(st, target).map(|()| ts)
    }

    /// Makes every record appended so far durable (delayed ones included).
    pub fn flush(&self) -> Result<()> {
        let st = lock(&self.shared.state);
        let target = st.appended;
        self.shared.wait_durable(st, target)
    }

    /// True once a write or sync has failed; no commit succeeds after that.
    pub fn is_failed(&self) -> bool {
        lock(&self.shared.state).failed.is_some()
    }

    /// The first failure, if the log has failed.
    pub fn failure(&self) -> Option<String> {
        lock(&self.shared.state).failed.clone()
    }

    /// Counters so far.
    pub fn stats(&self) -> LogStats {
        lock(&self.shared.state).stats
    }

    /// Flushes delayed records, stops the flusher and refuses further
    /// commits. Called by drop too.
    pub fn close(&self) -> Result<()> {
        let result = self.flush();
        lock(&self.shared.state).closed = true;
        self.shared.flusher_cv.notify_all();
        if let Some(h) = lock(&self.flusher).take() {
            let _ = h.join();
        }
        // Dropping the sink lets the checkpoint worker see the end.
        lock(&self.shared.tail).sink = None;
        match result {
            Err(Error::LogFailed(_)) | Ok(()) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

impl Shared {
    /// Waits until `target` record bytes are durable, leading flushes when
    /// none is running, parked otherwise.
    fn wait_durable<'a>(&'a self, mut st: MutexGuard<'a, State>, target: u64) -> Result<()> {
        loop {
            if st.durable >= target {
                return Ok(());
            }
            if let Some(why) = &st.failed {
                return Err(Error::LogFailed(why.clone()));
            }
            if !st.flushing {
                st = self.lead_flush(st);
                continue;
            }
            st.waiters.push((target, std::thread::current()));
            drop(st);
            match self.park_until(target) {
                None => return Ok(()),
                Some(g) => st = g,
            }
        }
    }

    /// Parks until the leader wakes this committer: `None` once `target`
    /// is durable (no lock taken), or the locked state when there is more
    /// to decide (the log failed, or this committer is to lead the next
    /// flush). Spurious wake-ups park again.
    fn park_until(&self, target: u64) -> Option<MutexGuard<'_, State>> {
        let me = std::thread::current().id();
        loop {
            std::thread::park();
            if self.durable.load(SeqCst) >= target {
                return None;
            }
            let st = lock(&self.state);
            if st.failed.is_some() || !st.waiters.iter().any(|(_, t)| t.id() == me) {
                return Some(st);
            }
        }
    }

    /// Takes the whole buffer and writes and syncs it as one batch.
    fn lead_flush<'a>(&'a self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        st.flushing = true;
        if st.last_count > 1 {
            // Committers are arriving together: the ones the last flush
            // just acknowledged are about to append again. Give them the
            // CPU once before taking the buffer, so they ride this flush
            // instead of the next one. A lone committer never yields.
            drop(st);
            std::thread::yield_now();
            st = lock(&self.state);
        }
        let buf = mem::replace(&mut st.buf, empty_buf());
        let count = mem::take(&mut st.records);
        st.last_count = count;
        let end = st.appended;
        st.delayed_since = None;
        drop(st);

        let result = self.write_batch(buf, count);

        let mut st = lock(&self.state);
        st.flushing = false;
        match result {
            Ok(written) => {
                st.durable = end;
                self.durable.store(end, SeqCst);
                st.stats.flushes += 1;
                st.stats.bytes += written;
            }
            Err(e) => {
                if st.failed.is_none() {
                    tracing::error!(error = %e, "redo log failed; no more commits");
                    st.failed = Some(e.to_string());
                }
            }
        }
        // Wake the committers this flush made durable (all of them if the
        // log failed), and one of the others to lead the next flush.
        let failed = st.failed.is_some();
        let mut wake = Vec::new();
        let mut next_leader = None;
        st.waiters.retain(|(target, thread)| {
            if failed || *target <= end {
                wake.push(thread.clone());
                false
            } else if next_leader.is_none() {
                next_leader = Some(thread.clone());
                false
            } else {
                true
            }
        });
        wake.extend(next_leader);
        for t in wake {
            t.unpark();
        }
        st
    }

    /// Writes and syncs one batch; returns its length.
    fn write_batch(&self, mut buf: Vec<u8>, count: u32) -> Result<u64> {
        let mut tail = lock(&self.tail);
        if tail.pos.offset >= self.opts.segment_size && tail.pos.offset > HEADER_LEN {
            let next = tail.pos.segment + 1;
            tail.file = create_segment(self.fs.as_ref(), &self.dir, next)?;
            tail.pos = LogPos { segment: next, offset: HEADER_LEN };
        }
        let start = tail.pos;
        fill_batch_header(&mut buf, start, count);
        let path = || self.dir.join(segment_name(start.segment));
        tail.file.write_at(start.offset, &buf).map_err(|e| Error::io(path(), "write", e))?;
        tail.file.sync_data().map_err(|e| Error::io(path(), "fdatasync", e))?;
        let end = start.offset + buf.len() as u64;
        tail.pos.offset = end;
        let written = buf.len() as u64;
        if let Some(sink) = &tail.sink {
            sink(Batch { start, end, bytes: buf });
        }
        Ok(written)
    }

    /// The delayed-durability flusher: sleeps until a delayed record
    /// arrives, then flushes once its window has passed.
    fn run_flusher(&self) {
        let mut st = lock(&self.state);
        loop {
            while !st.closed && st.delayed_since.is_none() {
                st = self.flusher_cv.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            if st.closed {
                return;
            }
            if let Some(since) = st.delayed_since {
                let deadline = since + self.opts.flush_interval;
                let now = Instant::now();
                if now < deadline {
                    st = self
                        .flusher_cv
                        .wait_timeout(st, deadline - now)
                        .map(|(g, _)| g)
                        .unwrap_or_else(|e| e.into_inner().0);
                    continue;
                }
            }
            if st.failed.is_some() {
                st.delayed_since = None;
                continue;
            }
            st.stats.timer_flushes += 1;
            let target = st.appended;
            let _ = self.wait_durable(st, target);
            st = lock(&self.state);
        }
    }
}
