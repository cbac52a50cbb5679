//! The log writer: group commit with a leader and followers.
//!
//! ```text
//!  committer A ─┐ append record to the buffer (mutex, memcpy)
//!  committer B ─┤ no flush running?  ── yes ─▶ become leader:
//!  committer C ─┘        │                      take the whole buffer,
//!                        no                     release the mutex,
//!                        ▼                      one write + one fdatasync,
//!                 wait on my ticket             resolve the batch's tickets,
//!                 until the batch holding       wake one newcomer to lead
//!                 my record is resolved         next, hand the batch to the
//!                                               checkpoint worker
//! ```
//!
//! Every synchronous committer holds a *ticket* for the batch its record
//! went into, and the leader that writes that batch resolves every ticket
//! in it: success once the batch is synced, or the error that stopped it.
//! While one leader writes and syncs, newcomers pile up in the buffer, and
//! when it finishes one of them leads the next flush with all of them:
//! under load one sync serves many commits, and a lone commit flushes at
//! once, never waiting for a timer. A leader that follows a flush of
//! several records yields the CPU once before taking the buffer, so the
//! committers that flush just released can append in time to ride along.
//! Records are appended in arrival order, which need not be commit
//! timestamp order; nothing downstream relies on timestamp order.
//!
//! *Delayed durability* appends and returns. A flusher thread, woken by the
//! first delayed record in an empty window, flushes once the window
//! (`flush_interval`) has passed, so a crash loses at most about that much
//! of acknowledged-but-delayed work. Any durable commit in the meantime
//! flushes the delayed records with its own.
//!
//! Failures come in two kinds:
//!
//! * A failed *write* (a full disk, an I/O error) fails that flush only.
//!   Before anyone hears of it, the leader cuts the segment back to the end
//!   of its last synced batch and syncs that, so the partial batch can
//!   neither be replayed nor end up between two good batches. The
//!   synchronous committers of the batch get the error (their transactions
//!   abort); its delayed records, whose commits were acknowledged already,
//!   go back to the front of the buffer for the next flush. The synchronous
//!   records appended while the write was under way are taken out of the
//!   buffer and fail too ([`Error::DependencyFailed`]): under early lock
//!   release their transactions may have used the changes of the batch's
//!   transactions before they were durable. For the same reason a record
//!   whose committer says it may depend on records stamped after some
//!   timestamp is refused once a write has failed for one (see
//!   [`Log::commit_stamped`]). The log goes on, and commits succeed again
//!   as soon as a write does. A truncation
//!   that fails leaves the segment marked, and the next flush cuts it back
//!   before writing anything.
//! * A failed *fdatasync* (of a batch, of that truncation, or of a new
//!   segment or its directory) fails the log for good: what reached the
//!   disk is unknown, and Linux may drop the dirty pages it could not write
//!   and report success at the next sync, so retrying could acknowledge
//!   commits that are not on disk. Every waiting and later commit gets
//!   [`Error::LogFailed`] with the first cause.

use std::mem;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::Waker;
use std::thread::JoinHandle;
use std::thread::Thread;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::format::{header, Magic, HEADER_LEN, MAX_FRAME};
use crate::fs::{File, Fs};
use crate::log::record::{Record, LEAD};
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
    /// the flusher syncs it (also how soon it retries after a failed write).
    pub flush_interval: Duration,
    /// Whether [`Durability::Default`] means delayed.
    pub delayed: bool,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions { segment_size: 64 << 20, flush_interval: Duration::from_millis(10), delayed: false }
    }
}

/// Counters of the log's work, and where it stands.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LogStats {
    /// Records appended.
    pub commits: u64,
    /// Flushes (one write + one fdatasync each).
    pub flushes: u64,
    /// Flushes started by the delayed-durability flusher.
    pub timer_flushes: u64,
    /// Bytes written (batch headers and records).
    pub bytes: u64,
    /// Flushes whose write failed; the log went on.
    pub failed_writes: u64,
    /// Records the flushes carried: `flushed_records / flushes` is the
    /// average group-commit batch.
    pub flushed_records: u64,
    /// The most records one flush carried.
    pub largest_batch: u64,
    /// The commit timestamp of the last record appended.
    pub appended_ts: u64,
    /// The highest commit timestamp on disk: every record appended up to
    /// it is durable.
    pub durable_ts: u64,
    /// Records and bytes appended and not yet written (delayed ones
    /// included).
    pub pending_records: u64,
    pub pending_bytes: u64,
    /// Delayed-durability records acknowledged and not yet on disk, and
    /// how long the oldest of them has waited (microseconds).
    pub delayed_records: u64,
    pub delayed_bytes: u64,
    pub delayed_age_us: u64,
    /// Flushes per second over the last second or so (0 when idle).
    pub syncs_per_second: f64,
}

/// How the flush rate is measured: flushes counted since `since`, turned
/// into a rate once at least [`RATE_WINDOW`] has passed.
#[derive(Clone, Copy)]
struct Rate {
    since: Instant,
    flushes_then: u64,
    last: f64,
}

/// The window the flush rate is averaged over.
const RATE_WINDOW: Duration = Duration::from_secs(1);

struct State {
    /// Pending batch: `BATCH_FRAME_LEN` reserved bytes, then record frames.
    buf: Vec<u8>,
    records: u32,
    /// Where in `buf` the delayed records are: already acknowledged, so a
    /// failed write puts them back rather than dropping them.
    delayed: Vec<Range<usize>>,
    /// Tickets of the committers (and flushes) waiting for the pending
    /// batch.
    riders: Vec<Arc<Ticket>>,
    flushing: bool,
    /// Set for good by a failed sync: the first cause.
    failed: Option<String>,
    /// The last flush's write failed (for logging the change only).
    writes_failing: bool,
    closed: bool,
    /// When the oldest unflushed delayed record was appended.
    delayed_since: Option<Instant>,
    /// Riders of the pending batch that await their tickets rather than
    /// wait on a thread: the flusher leads a flush for them.
    unled: usize,
    /// Records in the last flush: more than one means committers are
    /// arriving together.
    last_count: u32,
    /// The commit timestamp of the last record appended.
    last_ts: u64,
    stats: LogStats,
    rate: Rate,
}

/// A committer's (or a flush's) claim on the outcome of the batch its
/// record went into. The leader resolves it and wakes the owner, who reads
/// it without taking the log's mutex. The owner is a thread parked in
/// [`Shared::wait`] (it may be asked to lead the next flush), or an
/// asynchronous task polling a [`Durable`] (it never leads: the flusher
/// thread leads for it, see [`State::unled`]).
struct Ticket {
    waiter: Mutex<Waiter>,
    done: AtomicBool,
    outcome: Mutex<Option<Result<()>>>,
}

/// Who is woken when a ticket is resolved.
enum Waiter {
    /// A thread waiting in [`Shared::wait`].
    Thread(Thread),
    /// A task that polled the ticket (or none has yet).
    Task(Option<Waker>),
}

impl Ticket {
    fn new(waiter: Waiter) -> Arc<Ticket> {
        Arc::new(Ticket {
            waiter: Mutex::new(waiter),
            done: AtomicBool::new(false),
            outcome: Mutex::new(None),
        })
    }

    fn for_thread() -> Arc<Ticket> {
        Ticket::new(Waiter::Thread(std::thread::current()))
    }

    fn resolve(&self, outcome: Result<()>) {
        *lock(&self.outcome) = Some(outcome);
        self.done.store(true, SeqCst);
        match &mut *lock(&self.waiter) {
            Waiter::Thread(t) => t.unpark(),
            Waiter::Task(w) => {
                if let Some(w) = w.take() {
                    w.wake();
                }
            }
        }
    }

    /// Wakes the owner to lead the next flush; false if it is a task,
    /// which cannot.
    fn call_to_lead(&self) -> bool {
        match &*lock(&self.waiter) {
            Waiter::Thread(t) => {
                t.unpark();
                true
            }
            Waiter::Task(_) => false,
        }
    }

    /// The outcome, once resolved (taken: the owner asks until it gets it,
    /// then returns).
    fn outcome(&self) -> Option<Result<()>> {
        if self.done.load(SeqCst) {
            lock(&self.outcome).take()
        } else {
            None
        }
    }
}

/// A record appended without waiting for its batch to be durable, for a
/// committer that must not block its thread meanwhile (a server's worker
/// serving many sessions): a future that resolves when the outcome is
/// known, which [`Durable::wait`] then returns (or, not yet resolved,
/// blocks for). The outcome is the one [`Log::commit`] would have
/// returned.
pub struct Durable {
    /// The log that resolves it; `None` for one a [`Resolver`] resolves.
    shared: Option<Arc<Shared>>,
    ticket: Arc<Ticket>,
    /// The outcome, once taken from the ticket.
    outcome: Option<Result<()>>,
}

impl Durable {
    /// Whether the outcome is known (waiting would not block).
    pub fn is_resolved(&self) -> bool {
        self.outcome.is_some() || self.ticket.done.load(SeqCst)
    }

    /// Blocks until the record's batch is durable, leading flushes as a
    /// synchronous committer does.
    pub fn wait(mut self) -> Result<()> {
        if let Some(o) = self.take() {
            return o;
        }
        *lock(&self.ticket.waiter) = Waiter::Thread(std::thread::current());
        match self.shared.clone() {
            Some(shared) => shared.wait(lock(&shared.state), &self.ticket),
            // Looked at again after the waiter is set: a resolution before
            // it found no thread to unpark.
            None => loop {
                if let Some(o) = self.take() {
                    return o;
                }
                std::thread::park();
            },
        }
    }

    /// A commit whose outcome is decided elsewhere (by a replicated log,
    /// once a majority holds the record): the [`Resolver`] resolves it.
    pub fn remote() -> (Durable, Resolver) {
        let ticket = Ticket::new(Waiter::Task(None));
        (Durable { shared: None, ticket: ticket.clone(), outcome: None }, Resolver(Some(ticket)))
    }

    fn take(&mut self) -> Option<Result<()>> {
        if self.outcome.is_none() {
            self.outcome = self.ticket.outcome();
        }
        self.outcome.take()
    }
}

/// The deciding side of [`Durable::remote`]. Dropped unresolved, it
/// resolves its commit with an `08007` error: nobody will say any more.
pub struct Resolver(Option<Arc<Ticket>>);

impl Resolver {
    /// Gives the commit its outcome and wakes whoever waits for it.
    pub fn resolve(mut self, outcome: Result<()>) {
        if let Some(t) = self.0.take() {
            t.resolve(outcome);
        }
    }
}

impl Drop for Resolver {
    fn drop(&mut self) {
        if let Some(t) = self.0.take() {
            t.resolve(Err(Error::Replication {
                code: "08007",
                message: "the commit's outcome is unknown: its replication was abandoned".into(),
            }));
        }
    }
}

/// Resolves once the outcome is known; [`Durable::wait`] then returns it
/// without blocking.
impl std::future::Future for Durable {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.is_resolved() {
            return std::task::Poll::Ready(());
        }
        *lock(&self.ticket.waiter) = Waiter::Task(Some(cx.waker().clone()));
        // Resolved between the first look and the waker's registration:
        // the resolver found no waker to wake.
        if self.is_resolved() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    }
}

/// Why a flush failed.
enum Failure {
    /// A write failed; the segment is (or, before the next write, will be)
    /// cut back to its last synced batch, and the log goes on.
    Write(Error),
    /// A sync failed; the log stops.
    Sync(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        if e.is_failed_sync() {
            Failure::Sync(e)
        } else {
            Failure::Write(e)
        }
    }
}

/// How far ahead of the log's end the segment file is filled with zeros.
/// A batch written into bytes the file already has costs `fdatasync` only
/// the data: appending past the end also makes it write the file's new
/// size, which on this project's test machine took a sync from about 9,500
/// to about 6,300 a second and cost a third more CPU. So the leader that
/// would write past the zeros first writes this many more (their size is
/// synced with its own batch), once per this much log (a sixteenth of a
/// segment where segments are smaller than 16 MiB). Zeros after the
/// last batch read as a torn tail (9.6.2 of the design), which is where the
/// log ends; a segment is cut back to its last batch before the next one
/// is created, and when the log closes.
const ZERO_AHEAD: u64 = 1 << 20;

/// Receives every batch after its fdatasync, in log order (the checkpoint
/// worker's queue).
pub(crate) type BatchSink = Box<dyn Fn(Batch) + Send>;

/// The segment being appended to; touched only by the flush leader.
struct Tail {
    file: Box<dyn File>,
    /// The end of the last synced batch.
    pos: LogPos,
    /// A failed write may have left bytes after `pos` that no truncation
    /// has removed yet.
    dirty: bool,
    /// The file holds zeros from `pos` up to here (see [`ZERO_AHEAD`]).
    zeroed: u64,
    sink: Option<BatchSink>,
}

struct Shared {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    opts: LogOptions,
    state: Mutex<State>,
    /// The flusher waiting for delayed records.
    flusher_cv: Condvar,
    tail: Mutex<Tail>,
    /// The highest commit timestamp among the records a failed write took
    /// down (written under `state`'s lock, read without it).
    failed_upto: AtomicU64,
    /// The end of the last synced batch, for change feeds, and the
    /// readers waiting for it to move.
    synced: Mutex<LogPos>,
    synced_cv: Condvar,
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

/// Records at least this large become the batch buffer when it is empty
/// instead of being copied into it.
const ADOPT_RECORD: usize = 1 << 20;

fn empty_buf() -> Vec<u8> {
    vec![0u8; BATCH_FRAME_LEN]
}

/// Writes zeros into `file` from `from` up to `to`.
fn zero_fill(file: &dyn File, from: u64, to: u64) -> std::io::Result<()> {
    static ZEROS: [u8; 64 << 10] = [0; 64 << 10];
    let mut at = from;
    while at < to {
        let n = (to - at).min(ZEROS.len() as u64);
        file.write_at(at, &ZEROS[..n as usize])?;
        at += n;
    }
    Ok(())
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
                delayed: Vec::new(),
                riders: Vec::new(),
                flushing: false,
                failed: None,
                writes_failing: false,
                closed: false,
                delayed_since: None,
                unled: 0,
                last_count: 0,
                last_ts: 0,
                stats: LogStats::default(),
                rate: Rate { since: Instant::now(), flushes_then: 0, last: 0.0 },
            }),
            flusher_cv: Condvar::new(),
            tail: Mutex::new(Tail { file, pos, dirty: false, zeroed: pos.offset, sink }),
            failed_upto: AtomicU64::new(0),
            synced: Mutex::new(pos),
            synced_cv: Condvar::new(),
        });
        let s = shared.clone();
        let flusher =
            std::thread::Builder::new().name("centum-log-flusher".into()).spawn(move || s.run_flusher()).ok();
        Arc::new(Log { shared, flusher: Mutex::new(flusher) })
    }

    /// The end of the last synced batch: everything before it is durable.
    pub fn synced_end(&self) -> LogPos {
        *lock(&self.shared.synced)
    }

    /// Waits up to `timeout` for the synced end to pass `pos`; returns
    /// the synced end.
    pub fn wait_synced_past(&self, pos: LogPos, timeout: Duration) -> LogPos {
        let synced = lock(&self.shared.synced);
        let (synced, _) = self
            .shared
            .synced_cv
            .wait_timeout_while(synced, timeout, |s| *s <= pos)
            .unwrap_or_else(|p| p.into_inner());
        *synced
    }

    /// Runs `f` with the commit timestamp of the last record appended,
    /// under the lock that orders appends: no record is appended while it
    /// runs, so every record appended later lands after every record
    /// appended before (how logical decoding finds the log position that
    /// matches a snapshot).
    pub fn at_append_point<R>(&self, f: impl FnOnce(u64) -> R) -> R {
        let st = lock(&self.shared.state);
        f(st.last_ts)
    }

    /// Appends `record` and, unless delayed, returns once it is durable.
    /// With several committers at once, one write and one sync serve them
    /// all. An error from a failed write means the record was not logged
    /// and never will be (the log goes on); after a failed sync the record's
    /// fate is unknown (it may or may not be replayed at recovery) and the
    /// log takes no more commits.
    pub fn commit(&self, record: Record, durability: Durability) -> Result<()> {
        match self.append(record, durability, None, None, false)?.1 {
            Some(t) => self.shared.wait(lock(&self.shared.state), &t),
            None => Ok(()),
        }
    }

    /// Like [`Log::commit`], but the record's commit timestamp is taken by
    /// `stamp` at the moment of appending, under the lock that orders
    /// appends, and returned. Timestamps taken this way increase in log
    /// order, so a committer whose batch is durable never waits for an
    /// earlier timestamp that is still in a later batch. `stamp` is not
    /// called when the record is refused before appending (too large, log
    /// failed or closed); then no timestamp was taken.
    ///
    /// `after` is for a transaction that may have used changes of others
    /// whose records were appended but not yet durable (early lock release:
    /// every such transaction was stamped after `after`). Such a record is
    /// refused with [`Error::DependencyFailed`] if a write has failed for a
    /// record stamped after `after`: the changes it used may be lost.
    pub fn commit_stamped(
        &self,
        record: Record,
        durability: Durability,
        after: Option<u64>,
        stamp: &mut dyn FnMut() -> u64,
    ) -> Result<u64> {
        let (ts, ticket) = self.append(record, durability, after, Some(stamp), false)?;
        match ticket {
            Some(t) => self.shared.wait(lock(&self.shared.state), &t).map(|()| ts),
            None => Ok(ts),
        }
    }

    /// Like [`Log::commit_stamped`], but returns once the record is
    /// appended: with a [`Durable`] to wait for, or to await, unless the
    /// record is delayed (then there is nothing to wait for). The flusher
    /// thread leads the flush for such records, so the caller's thread is
    /// free meanwhile.
    pub fn commit_deferred(
        &self,
        record: Record,
        durability: Durability,
        after: Option<u64>,
        stamp: &mut dyn FnMut() -> u64,
    ) -> Result<(u64, Option<Durable>)> {
        let (ts, ticket) = self.append(record, durability, after, Some(stamp), true)?;
        Ok((ts, ticket.map(|ticket| Durable { shared: Some(self.shared.clone()), ticket, outcome: None })))
    }

    /// Whether a commit asking for `durability` returns before its record
    /// is durable.
    pub fn delays(&self, durability: Durability) -> bool {
        match durability {
            Durability::Default => self.shared.opts.delayed,
            Durability::Sync => false,
            Durability::Delayed => true,
        }
    }

    /// The highest commit timestamp among the records that a failed write
    /// took down (those of its batch, and the synchronous ones appended
    /// while it was being written), 0 if no write has failed. A transaction
    /// that used changes of transactions stamped after `t` before they were
    /// durable must not commit while this is above `t`.
    pub fn failed_upto(&self) -> u64 {
        self.shared.failed_upto.load(SeqCst)
    }

    fn append(
        &self,
        mut record: Record,
        durability: Durability,
        after: Option<u64>,
        stamp: Option<&mut dyn FnMut() -> u64>,
        deferred: bool,
    ) -> Result<(u64, Option<Arc<Ticket>>)> {
        let delayed = self.delays(durability);
        if record.largest_frame() > MAX_FRAME {
            return Err(Error::RecordTooLarge { bytes: record.largest_frame() });
        }
        let mut st = lock(&self.shared.state);
        if let Some(why) = &st.failed {
            return Err(Error::LogFailed(why.clone()));
        }
        if st.closed {
            return Err(Error::Closed);
        }
        if after.is_some_and(|t| self.shared.failed_upto.load(SeqCst) > t) {
            return Err(Error::DependencyFailed);
        }
        // The count and the CRC are computed under the lock, after the
        // stamp; the CRC pass costs about what the copy into the buffer does.
        if let Some(stamp) = stamp {
            record.set_commit_ts(stamp());
        }
        let bytes = record.finish();
        let ts = record.commit_ts();
        st.last_ts = st.last_ts.max(ts);
        let at = st.buf.len();
        // A record of several frames is appended whole, so it lands in one
        // batch (see `record`). A large record arriving at an empty buffer
        // becomes the buffer, its lead the room for the batch header: a
        // bulk load's gigabyte is not copied into fresh memory again.
        if at == BATCH_FRAME_LEN && bytes.len() >= ADOPT_RECORD {
            st.buf = bytes;
        } else {
            st.buf.extend_from_slice(&bytes[LEAD..]);
        }
        st.records += record.frame_count() as u32;
        st.stats.commits += 1;
        if delayed {
            let end = st.buf.len();
            st.delayed.push(at..end);
            if st.delayed_since.is_none() {
                st.delayed_since = Some(Instant::now());
                self.shared.flusher_cv.notify_one();
            }
            return Ok((ts, None));
        }
        // A lone committer (the last batch carried one record, no flush is
        // running, nobody else waits) leads its own flush even when it
        // would rather not wait: handing the flush to the flusher thread
        // and back costs two wake-ups that nothing shares.
        let lone = deferred && !st.flushing && st.unled == 0 && st.riders.is_empty() && st.last_count <= 1;
        let ticket = if deferred && !lone {
            // No thread of the committer's leads: the flusher does, now if
            // no flush is running, else after it (see `lead_flush`).
            st.unled += 1;
            if !st.flushing {
                self.shared.flusher_cv.notify_one();
            }
            Ticket::new(Waiter::Task(None))
        } else {
            Ticket::for_thread()
        };
        st.riders.push(ticket.clone());
        if lone {
            // Resolved when this returns; its outcome goes back into the
            // ticket for the `Durable` to report.
            let outcome = self.shared.wait(st, &ticket);
            *lock(&ticket.outcome) = Some(outcome);
            ticket.done.store(true, SeqCst);
        }
        Ok((ts, Some(ticket)))
    }

    /// Makes every record appended so far durable (delayed ones included).
    /// Fails if the flush that was to carry them failed.
    pub fn flush(&self) -> Result<()> {
        let mut st = lock(&self.shared.state);
        if st.records == 0 && !st.flushing {
            return Ok(());
        }
        if let Some(why) = &st.failed {
            return Err(Error::LogFailed(why.clone()));
        }
        let ticket = Ticket::for_thread();
        st.riders.push(ticket.clone());
        self.shared.wait(st, &ticket)
    }

    /// True once a sync has failed; no commit succeeds after that.
    pub fn is_failed(&self) -> bool {
        lock(&self.shared.state).failed.is_some()
    }

    /// The first failure, if the log has failed.
    pub fn failure(&self) -> Option<String> {
        lock(&self.shared.state).failed.clone()
    }

    /// Counters so far, and where the log stands now.
    pub fn stats(&self) -> LogStats {
        let st = lock(&self.shared.state);
        let mut s = st.stats;
        s.appended_ts = st.last_ts;
        s.pending_records = u64::from(st.records);
        s.pending_bytes = (st.buf.len() - BATCH_FRAME_LEN) as u64;
        s.delayed_records = st.delayed.len() as u64;
        s.delayed_bytes = st.delayed.iter().map(|r| r.len() as u64).sum();
        s.delayed_age_us = st.delayed_since.map_or(0, |t| t.elapsed().as_micros() as u64);
        let elapsed = st.rate.since.elapsed();
        // Past two windows with no flush to close the last one, the rate
        // is what the open window shows.
        s.syncs_per_second = if elapsed >= 2 * RATE_WINDOW {
            (s.flushes - st.rate.flushes_then) as f64 / elapsed.as_secs_f64()
        } else {
            st.rate.last
        };
        s
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
        let mut tail = lock(&self.shared.tail);
        tail.sink = None;
        // A clean end: the last segment stops at its last batch.
        if result.is_ok() && tail.zeroed > tail.pos.offset {
            let _ = self.shared.cut_back(&mut tail);
        }
        drop(tail);
        match result {
            Err(Error::LogFailed(_)) | Ok(()) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// Frames in `bytes`, a run of whole frames this log framed itself (a
/// record may take several, see `record`).
fn frames_in(bytes: &[u8]) -> u32 {
    let (mut at, mut n) = (0, 0);
    while at + crate::format::FRAME_OVERHEAD <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes")) as usize;
        at += crate::format::FRAME_OVERHEAD + len;
        n += 1;
    }
    n
}

impl Drop for Log {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

impl Shared {
    /// Waits until `ticket` is resolved, leading flushes when none is
    /// running, parked otherwise.
    fn wait<'a>(&'a self, mut st: MutexGuard<'a, State>, ticket: &Ticket) -> Result<()> {
        loop {
            if let Some(outcome) = ticket.outcome() {
                return outcome;
            }
            if let Some(why) = &st.failed {
                return Err(Error::LogFailed(why.clone()));
            }
            if !st.flushing {
                st = self.lead_flush(st);
                continue;
            }
            drop(st);
            // Woken with the ticket resolved (no lock taken), or to lead
            // the next flush; spurious wake-ups park again.
            st = loop {
                std::thread::park();
                if let Some(outcome) = ticket.outcome() {
                    return outcome;
                }
                let st = lock(&self.state);
                if !st.flushing || st.failed.is_some() {
                    break st;
                }
            };
        }
    }

    /// Takes the whole buffer, writes and syncs it as one batch, and
    /// resolves the tickets of the batch.
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
        let mut buf = mem::replace(&mut st.buf, empty_buf());
        let count = mem::take(&mut st.records);
        let delayed = mem::take(&mut st.delayed);
        let riders = mem::take(&mut st.riders);
        let batch_ts = st.last_ts;
        st.unled = 0;
        st.last_count = count;
        st.delayed_since = None;
        drop(st);

        // A batch of no records (a flush that found everything written)
        // writes nothing.
        let result = if count == 0 { Ok(0) } else { self.write_batch(&mut buf, count) };

        let mut st = lock(&self.state);
        st.flushing = false;
        match result {
            Ok(written) => {
                if count > 0 {
                    st.stats.flushes += 1;
                    st.stats.bytes += written;
                    st.stats.flushed_records += u64::from(count);
                    st.stats.largest_batch = st.stats.largest_batch.max(u64::from(count));
                    st.stats.durable_ts = st.stats.durable_ts.max(batch_ts);
                    let elapsed = st.rate.since.elapsed();
                    if elapsed >= RATE_WINDOW {
                        let flushes = st.stats.flushes;
                        st.rate.last = (flushes - st.rate.flushes_then) as f64 / elapsed.as_secs_f64();
                        st.rate = Rate { since: Instant::now(), flushes_then: flushes, last: st.rate.last };
                    }
                }
                if mem::take(&mut st.writes_failing) {
                    tracing::info!("the redo log takes writes again; commits go on");
                }
                for t in &riders {
                    t.resolve(Ok(()));
                }
            }
            Err(Failure::Write(e)) => {
                st.stats.failed_writes += 1;
                if !mem::replace(&mut st.writes_failing, true) {
                    tracing::error!(error = %e, "redo log write failed; commits fail until a write succeeds");
                }
                // The synchronous records appended while this batch was
                // being written go too: their transactions may have used
                // changes of this batch's transactions before they were
                // durable (early lock release), and must not outlive them.
                // Delayed records never depend on an unwritten one (their
                // committers wait for that first), and were acknowledged.
                self.mark_failed_upto(&st);
                let later = mem::take(&mut st.riders);
                st.unled = 0;
                self.keep_delayed(&mut st);
                self.requeue(&mut st, &buf, &delayed);
                for t in &riders {
                    t.resolve(Err(e.duplicate()));
                }
                for t in &later {
                    t.resolve(Err(Error::DependencyFailed));
                }
            }
            Err(Failure::Sync(e)) => {
                let why = match &st.failed {
                    Some(why) => why.clone(),
                    None => {
                        tracing::error!(error = %e, "redo log sync failed; no more commits until restart");
                        e.to_string()
                    }
                };
                st.failed = Some(why.clone());
                // Nothing will be written again: the committers already
                // waiting for the next batch are told too.
                let waiting = mem::take(&mut st.riders);
                st.unled = 0;
                for t in riders.iter().chain(&waiting) {
                    t.resolve(Err(Error::LogFailed(why.clone())));
                }
            }
        }
        // One of the committers that arrived during this flush leads the
        // next one, unless a returning committer gets there first.
        // Committers that only await their tickets call the flusher
        // instead.
        if let Some(next) = st.riders.first() {
            if !next.call_to_lead() || st.unled > 0 {
                self.flusher_cv.notify_one();
            }
        }
        st
    }

    /// Records that every record appended so far may be lost.
    fn mark_failed_upto(&self, st: &State) {
        self.failed_upto.fetch_max(st.last_ts, SeqCst);
    }

    /// Takes every synchronous record out of the pending batch, keeping the
    /// delayed ones in order.
    fn keep_delayed(&self, st: &mut State) {
        let mut buf = empty_buf();
        let mut ranges = Vec::with_capacity(st.delayed.len());
        let mut frames = 0;
        for r in &st.delayed {
            let at = buf.len();
            buf.extend_from_slice(&st.buf[r.clone()]);
            ranges.push(at..buf.len());
            frames += frames_in(&st.buf[r.clone()]);
        }
        st.records = frames;
        st.buf = buf;
        st.delayed = ranges;
    }

    /// Puts the delayed records of a batch whose write failed back in front
    /// of the records appended since: their commits were acknowledged, so
    /// they must reach the log, and before anything that may depend on
    /// them. The flusher retries them after its interval if no commit does
    /// sooner.
    fn requeue(&self, st: &mut State, failed: &[u8], delayed: &[Range<usize>]) {
        if delayed.is_empty() {
            return;
        }
        let mut buf = empty_buf();
        let mut ranges = Vec::with_capacity(delayed.len() + st.delayed.len());
        let mut frames = 0;
        for r in delayed {
            let at = buf.len();
            buf.extend_from_slice(&failed[r.clone()]);
            ranges.push(at..buf.len());
            frames += frames_in(&failed[r.clone()]);
        }
        let shift = buf.len() - BATCH_FRAME_LEN;
        buf.extend_from_slice(&st.buf[BATCH_FRAME_LEN..]);
        ranges.extend(st.delayed.iter().map(|r| r.start + shift..r.end + shift));
        st.buf = buf;
        st.delayed = ranges;
        st.records += frames;
        if st.delayed_since.is_none() {
            st.delayed_since = Some(Instant::now());
            self.flusher_cv.notify_one();
        }
    }

    /// Writes and syncs one batch; returns its length. On success the
    /// bytes go to the checkpoint worker and `buf` is left empty.
    fn write_batch(&self, buf: &mut Vec<u8>, count: u32) -> Result<u64, Failure> {
        let mut tail = lock(&self.tail);
        if tail.dirty {
            self.cut_back(&mut tail)?;
        }
        if tail.pos.offset >= self.opts.segment_size && tail.pos.offset > HEADER_LEN {
            // The full segment ends at its last batch, not in zeros.
            if tail.zeroed > tail.pos.offset {
                self.cut_back(&mut tail)?;
            }
            let next = tail.pos.segment + 1;
            tail.file = create_segment(self.fs.as_ref(), &self.dir, next)?;
            tail.pos = LogPos { segment: next, offset: HEADER_LEN };
            tail.zeroed = HEADER_LEN;
        }
        let start = tail.pos;
        fill_batch_header(buf, start, count);
        let path = || self.dir.join(segment_name(start.segment));
        let end = start.offset + buf.len() as u64;
        let ahead = ZERO_AHEAD.min(self.opts.segment_size / 16);
        let room =
            if end > tail.zeroed { zero_fill(tail.file.as_ref(), tail.zeroed, end + ahead) } else { Ok(()) };
        if let Err(e) = room.and_then(|()| tail.file.write_at(start.offset, buf)) {
            let e = Error::io(path(), "write", e);
            tail.dirty = true;
            match self.cut_back(&mut tail) {
                Ok(()) => {}
                Err(Failure::Write(t)) => {
                    tracing::warn!(error = %t, "could not cut the log back after a failed write; the next flush will");
                }
                Err(sync) => return Err(sync),
            }
            return Err(Failure::Write(e));
        }
        tail.zeroed = tail.zeroed.max(end + ahead);
        tail.file.sync_data().map_err(|e| Failure::Sync(Error::io(path(), "fdatasync", e)))?;
        tail.pos.offset = end;
        let written = buf.len() as u64;
        let bytes = mem::take(buf);
        if let Some(sink) = &tail.sink {
            sink(Batch { start, end, bytes });
        }
        *lock(&self.synced) = tail.pos;
        self.synced_cv.notify_all();
        Ok(written)
    }

    /// Cuts the segment back to the end of its last synced batch and syncs
    /// that, after a failed write: the bytes the write left could otherwise
    /// be replayed (if they happened to form the whole batch) or sit
    /// between two batches, and recovery would call that corruption.
    fn cut_back(&self, tail: &mut Tail) -> Result<(), Failure> {
        let path = self.dir.join(segment_name(tail.pos.segment));
        tail.file.set_len(tail.pos.offset).map_err(|e| Failure::Write(Error::io(&path, "truncate", e)))?;
        tail.zeroed = tail.pos.offset;
        tail.file.sync_data().map_err(|e| Failure::Sync(Error::io(&path, "fdatasync", e)))?;
        tail.dirty = false;
        Ok(())
    }

    /// The flusher: leads a flush for records whose committers await
    /// their tickets rather than wait on a thread, at once; and for delayed
    /// records, once their window has passed. Sleeps otherwise.
    fn run_flusher(&self) {
        let mut st = lock(&self.state);
        loop {
            while !st.closed && st.delayed_since.is_none() && (st.unled == 0 || st.flushing) {
                st = self.flusher_cv.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            if st.closed {
                return;
            }
            if st.unled > 0 && !st.flushing {
                let ticket = Ticket::for_thread();
                st.riders.push(ticket.clone());
                let _ = self.wait(st, &ticket);
                st = lock(&self.state);
                continue;
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
            let ticket = Ticket::for_thread();
            st.riders.push(ticket.clone());
            let _ = self.wait(st, &ticket);
            st = lock(&self.state);
        }
    }
}
