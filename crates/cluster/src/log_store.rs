//! The durable Raft log and vote of one cluster member.
//!
//! Raft's safety rests on two pieces of state surviving a crash: the vote
//! (so a member never votes twice in a term) and the log entries it has
//! acknowledged (so a committed entry is never lost by a majority). Both live
//! in the member's Raft directory:
//!
//! ```text
//! <dir>/LOCK        empty; locked (flock) while a log store has the directory open
//! <dir>/vote        the last vote, replaced atomically (tmp + fsync + rename + fsync dir)
//! <dir>/raft.log    8-byte magic, optional purge marker, then one frame per entry
//! ```
//!
//! # Frames
//!
//! Every record of `raft.log` (and the body of `vote`) is a frame; integers
//! are little-endian:
//!
//! ```text
//! offset  size  field
//! 0       4     len    u32, byte length of the body (25 ..= 1 GiB)
//! 4       4     crc    u32, CRC-32C (Castagnoli) of the body
//! 8       len   body
//! ```
//!
//! A log record body is:
//!
//! ```text
//! 0       1     kind   1 = blank entry, 2 = normal entry, 3 = membership entry,
//!                      4 = purge marker
//! 1       8     term   term of the leader that created the entry
//! 9       8     node   id of that leader
//! 17      8     index  log index
//! 25      ..    data   normal: the opaque payload (the database's redo bytes);
//!                      membership: the membership as JSON; blank / marker: empty
//! ```
//!
//! `raft.log` starts with the magic `CNTMLOG1`. If the log has been purged,
//! the first frame is a purge marker whose (term, node, index) is the last
//! purged log id; entries follow with consecutive indexes. The vote body is
//! 17 bytes: term u64, voted-for node u64, committed u8 (0 or 1).
//!
//! # Writing
//!
//! Raft hands entries to [`LogStore`] (the [`RaftLogStorage`] implementation)
//! and goes on; the store encodes the frames, records them in its in-memory
//! index, and queues them to a writer thread. The writer takes every append
//! queued at that moment, writes them with positional writes and issues one
//! `fdatasync` for all of them before acknowledging each to Raft. On a
//! follower one append is a whole replicated batch, so the batch costs one
//! sync. Votes, truncations and purges
//! go through the same queue, so all writes reach the disk in the order Raft
//! issued them, and those three are awaited before the call returns.
//!
//! Truncation (dropping a conflicting suffix) shortens the file and syncs it.
//! Purging (dropping a prefix after a snapshot) rewrites the kept suffix into a
//! new file behind a fresh purge marker and renames it over the old one; it is
//! rare (once per snapshot) and the kept suffix is short.
//!
//! # Opening
//!
//! At open the file is scanned frame by frame. A frame that is cut short, has
//! an implausible length or a wrong checksum ends the log: if no valid entry
//! frame can be found anywhere after it, it is a torn tail left by a crash in
//! the middle of an unacknowledged write, and the file is truncated to the
//! last good frame. If a valid entry does follow, data that was acknowledged
//! has been damaged and opening fails with [`Error::Corrupt`]. (A power
//! failure can leave a hole inside the last unsynced batch with intact frames
//! after it; that too is reported rather than guessed at.)
//!
//! # Reading
//!
//! The in-memory index holds, per entry, its log id and the position of its
//! frame; the decoded entry itself is kept only for the most recent entries
//! (and for any not yet on disk). Older entries — needed when a lagging
//! follower catches up or at restart — are read back from the file and
//! checked against their checksum.

use std::collections::VecDeque;
use std::fmt::Debug;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Write};
use std::ops::{Bound, RangeBounds};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use openraft::storage::{LogFlushed, RaftLogStorage};
use openraft::{
    AnyError, BasicNode, CommittedLeaderId, EntryPayload, LeaderId, LogState, Membership, OptionalSend,
    RaftLogReader, StorageError, StorageIOError,
};
use tokio::sync::oneshot;

use crate::error::{Error, Result};
use crate::{Entry, LogId, TypeConfig, Vote};

/// Name of the log file inside the Raft directory.
pub const LOG_FILE: &str = "raft.log";
/// Name of the vote file inside the Raft directory.
pub const VOTE_FILE: &str = "vote";
/// Name of the lock file inside the Raft directory.
pub const LOCK_FILE: &str = "LOCK";
/// First eight bytes of the log file (format version 1).
pub const LOG_MAGIC: [u8; 8] = *b"CNTMLOG1";
/// Bytes before a frame's body: length and checksum.
pub const FRAME_HEADER_LEN: usize = 8;
/// Bytes of a log record body before its data: kind, term, node, index.
pub const RECORD_HEADER_LEN: usize = 25;
/// Largest accepted record body.
pub const MAX_RECORD_LEN: usize = 1 << 30;
/// How many of the most recent entries are kept decoded in memory by default.
pub const DEFAULT_CACHE_ENTRIES: u64 = 4096;

const KIND_BLANK: u8 = 1;
const KIND_NORMAL: u8 = 2;
const KIND_MEMBERSHIP: u8 = 3;
const KIND_PURGED: u8 = 4;

const VOTE_BODY_LEN: usize = 17;
const LOG_TMP: &str = "raft.log.tmp";
const VOTE_TMP: &str = "vote.tmp";

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

/// Appends one frame (header and body) to `out`; the body is the record
/// header followed by `data`.
fn encode_record(kind: u8, log_id: &LogId, data: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
    let len = RECORD_HEADER_LEN + data.len();
    if len > MAX_RECORD_LEN {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("record of {len} bytes exceeds the limit of {MAX_RECORD_LEN}"),
        ));
    }
    let start = out.len();
    out.reserve(FRAME_HEADER_LEN + len);
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.push(kind);
    out.extend_from_slice(&log_id.leader_id.term.to_le_bytes());
    out.extend_from_slice(&log_id.leader_id.node_id.to_le_bytes());
    out.extend_from_slice(&log_id.index.to_le_bytes());
    out.extend_from_slice(data);
    let crc = crc32c::crc32c(&out[start + FRAME_HEADER_LEN..]);
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// Appends the frame of `entry` to `out`. Also the wire encoding of entries
/// in AppendEntries requests.
pub(crate) fn encode_entry(entry: &Entry, out: &mut Vec<u8>) -> io::Result<()> {
    match &entry.payload {
        EntryPayload::Blank => encode_record(KIND_BLANK, &entry.log_id, &[], out),
        EntryPayload::Normal(data) => encode_record(KIND_NORMAL, &entry.log_id, data, out),
        EntryPayload::Membership(m) => {
            let json = serde_json::to_vec(m).map_err(io::Error::other)?;
            encode_record(KIND_MEMBERSHIP, &entry.log_id, &json, out)
        }
    }
}

enum Record {
    Entry(Entry),
    Purged(LogId),
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

fn decode_record(body: &[u8]) -> std::result::Result<Record, String> {
    if body.len() < RECORD_HEADER_LEN {
        return Err(format!("record of {} bytes is too short", body.len()));
    }
    let log_id = LogId::new(CommittedLeaderId::new(u64_at(body, 1), u64_at(body, 9)), u64_at(body, 17));
    let data = &body[RECORD_HEADER_LEN..];
    let payload = match body[0] {
        KIND_BLANK if data.is_empty() => EntryPayload::Blank,
        KIND_NORMAL => EntryPayload::Normal(data.to_vec()),
        KIND_MEMBERSHIP => {
            let m: Membership<u64, BasicNode> = serde_json::from_slice(data)
                .map_err(|e| format!("membership record at index {}: {e}", log_id.index))?;
            EntryPayload::Membership(m)
        }
        KIND_PURGED if data.is_empty() => return Ok(Record::Purged(log_id)),
        kind => return Err(format!("unknown record kind {kind} with {} data bytes", data.len())),
    };
    Ok(Record::Entry(Entry { log_id, payload }))
}

/// Checks the frame at the start of `buf`; returns its body and total length.
fn frame_at(buf: &[u8]) -> std::result::Result<(&[u8], usize), String> {
    if buf.len() < FRAME_HEADER_LEN {
        return Err("partial frame header".into());
    }
    let len = u32_at(buf, 0) as usize;
    let crc = u32_at(buf, 4);
    if !(RECORD_HEADER_LEN..=MAX_RECORD_LEN).contains(&len) {
        return Err(format!("implausible frame length {len}"));
    }
    if buf.len() - FRAME_HEADER_LEN < len {
        return Err("frame runs past the end of the data".into());
    }
    let body = &buf[FRAME_HEADER_LEN..FRAME_HEADER_LEN + len];
    if crc32c::crc32c(body) != crc {
        return Err("checksum mismatch".into());
    }
    Ok((body, FRAME_HEADER_LEN + len))
}

/// Decodes a buffer made only of entry frames (the wire form of a batch).
pub(crate) fn decode_entries(mut buf: &[u8]) -> std::result::Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        let (body, n) = frame_at(buf)?;
        match decode_record(body)? {
            Record::Entry(e) => out.push(e),
            Record::Purged(_) => return Err("purge marker among entries".into()),
        }
        buf = &buf[n..];
    }
    Ok(out)
}

fn encode_vote(vote: &Vote) -> Vec<u8> {
    let mut body = Vec::with_capacity(VOTE_BODY_LEN);
    body.extend_from_slice(&vote.leader_id.term.to_le_bytes());
    body.extend_from_slice(&vote.leader_id.node_id.to_le_bytes());
    body.push(u8::from(vote.committed));
    let mut out = Vec::with_capacity(FRAME_HEADER_LEN + VOTE_BODY_LEN);
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32c::crc32c(&body).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

fn decode_vote(buf: &[u8]) -> std::result::Result<Vote, String> {
    if buf.len() != FRAME_HEADER_LEN + VOTE_BODY_LEN || u32_at(buf, 0) as usize != VOTE_BODY_LEN {
        return Err(format!("vote file of {} bytes", buf.len()));
    }
    let body = &buf[FRAME_HEADER_LEN..];
    if crc32c::crc32c(body) != u32_at(buf, 4) {
        return Err("vote checksum mismatch".into());
    }
    let committed = match body[16] {
        0 => false,
        1 => true,
        x => return Err(format!("vote committed flag {x}")),
    };
    Ok(Vote { leader_id: LeaderId::new(u64_at(body, 0), u64_at(body, 8)), committed })
}

// ---------------------------------------------------------------------------
// File helpers
// ---------------------------------------------------------------------------

/// Makes a rename or creation inside `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Replaces `dir/name` with `bytes` atomically and durably.
pub(crate) fn write_file_atomic(dir: &Path, name: &str, tmp: &str, bytes: &[u8]) -> io::Result<()> {
    let tmp_path = dir.join(tmp);
    {
        let mut f = OpenOptions::new().create(true).truncate(true).write(true).open(&tmp_path)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp_path, dir.join(name))?;
    sync_dir(dir)
}

fn remove_if_exists(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

// ---------------------------------------------------------------------------
// In-memory index
// ---------------------------------------------------------------------------

/// One entry of the log as the in-memory index knows it.
struct Slot {
    log_id: LogId,
    /// Offset of the entry's frame in the current log file.
    offset: u64,
    /// Length of the whole frame.
    len: u32,
    /// The decoded entry, while it is recent or not yet on disk.
    entry: Option<Entry>,
}

struct State {
    /// Read handle of the current log file (a purge swaps in a new file).
    file: Arc<File>,
    purged: Option<LogId>,
    slots: VecDeque<Slot>,
    /// Offset at which the next frame goes (including queued writes).
    end: u64,
    /// Highest index known to be on disk.
    durable: Option<u64>,
    /// Entries with a lower index hold no decoded copy.
    cached_from: u64,
    cache_entries: u64,
}

impl State {
    fn position(&self, index: u64) -> Option<usize> {
        let first = self.slots.front()?.log_id.index;
        let pos = usize::try_from(index.checked_sub(first)?).ok()?;
        (pos < self.slots.len()).then_some(pos)
    }

    fn last_log_id(&self) -> Option<LogId> {
        self.slots.back().map(|s| s.log_id).or(self.purged)
    }

    /// Drops decoded copies of entries that are on disk and older than the
    /// cached tail.
    fn evict(&mut self) {
        let (Some(durable), Some(first)) = (self.durable, self.slots.front().map(|s| s.log_id.index)) else {
            return;
        };
        let upto = (durable + 1).saturating_sub(self.cache_entries);
        self.cached_from = self.cached_from.max(first);
        while self.cached_from < upto {
            match self.position(self.cached_from) {
                Some(p) => self.slots[p].entry = None,
                None => break,
            }
            self.cached_from += 1;
        }
    }

    fn read_range(&self, start: u64, end: u64) -> io::Result<Vec<Entry>> {
        let (Some(first), Some(last)) =
            (self.slots.front().map(|s| s.log_id.index), self.slots.back().map(|s| s.log_id.index))
        else {
            return Ok(Vec::new());
        };
        let start = start.max(first);
        let end = end.min(last.saturating_add(1));
        if start >= end {
            return Ok(Vec::new());
        }
        let (a, b) = ((start - first) as usize, (end - first) as usize);
        let mut out = Vec::with_capacity(b - a);
        let mut i = a;
        while i < b {
            if let Some(e) = &self.slots[i].entry {
                out.push(e.clone());
                i += 1;
                continue;
            }
            // A run of entries that are only on disk: one read for all of them.
            let mut j = i;
            while j < b && self.slots[j].entry.is_none() {
                j += 1;
            }
            let from = self.slots[i].offset;
            let to = self.slots[j - 1].offset + u64::from(self.slots[j - 1].len);
            let mut buf = vec![0u8; (to - from) as usize];
            self.file.read_exact_at(&mut buf, from)?;
            let entries = decode_entries(&buf).map_err(|e| {
                io::Error::new(io::ErrorKind::InvalidData, format!("log entry at offset {from}: {e}"))
            })?;
            for (k, e) in entries.into_iter().enumerate() {
                if e.log_id != self.slots[i + k].log_id {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("log file holds {} where {} was written", e.log_id, self.slots[i + k].log_id),
                    ));
                }
                out.push(e);
            }
            i = j;
        }
        Ok(out)
    }
}

struct Shared {
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn read<RB: RangeBounds<u64>>(&self, range: RB) -> io::Result<Vec<Entry>> {
        let start = match range.start_bound() {
            Bound::Included(&x) => x,
            Bound::Excluded(&x) => x.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&x) => x.saturating_add(1),
            Bound::Excluded(&x) => x,
            Bound::Unbounded => u64::MAX,
        };
        self.lock().read_range(start, end)
    }
}

// ---------------------------------------------------------------------------
// Writer thread
// ---------------------------------------------------------------------------

struct AppendOp {
    bytes: Vec<u8>,
    offset: u64,
    last_index: u64,
    done: LogFlushed<TypeConfig>,
}

enum Op {
    Append(AppendOp),
    Vote { bytes: Vec<u8>, done: oneshot::Sender<io::Result<()>> },
    Truncate { offset: u64, done: oneshot::Sender<io::Result<()>> },
    Purge { marker: Vec<u8>, keep_from: u64, done: oneshot::Sender<io::Result<File>> },
}

struct Writer {
    dir: PathBuf,
    file: File,
    shared: Arc<Shared>,
    /// Set after a failed write: the file may no longer match the index, so
    /// nothing else is written.
    failed: Option<String>,
    /// Held for the writer's lifetime; closing it releases the directory.
    _lock: File,
}

fn copy_err(e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), e.to_string())
}

impl Writer {
    fn run(mut self, rx: mpsc::Receiver<Op>) {
        let mut next = rx.recv().ok();
        while let Some(op) = next.take() {
            match op {
                Op::Append(first) => {
                    let mut batch = vec![first];
                    loop {
                        match rx.try_recv() {
                            Ok(Op::Append(a)) => batch.push(a),
                            Ok(other) => {
                                next = Some(other);
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    self.append(batch);
                }
                Op::Vote { bytes, done } => {
                    let r = self.guarded(|w| write_file_atomic(&w.dir, VOTE_FILE, VOTE_TMP, &bytes));
                    let _ = done.send(r);
                }
                Op::Truncate { offset, done } => {
                    let r = self.guarded(|w| {
                        w.file.set_len(offset)?;
                        w.file.sync_all()
                    });
                    let _ = done.send(r);
                }
                Op::Purge { marker, keep_from, done } => {
                    let r = self.guarded(|w| w.rewrite(&marker, keep_from));
                    let _ = done.send(r);
                }
            }
            if next.is_none() {
                next = rx.recv().ok();
            }
        }
    }

    fn guarded<T>(&mut self, f: impl FnOnce(&mut Self) -> io::Result<T>) -> io::Result<T> {
        if let Some(why) = &self.failed {
            return Err(io::Error::other(format!("log writer stopped after an earlier failure: {why}")));
        }
        let r = f(self);
        if let Err(e) = &r {
            tracing::error!(dir = %self.dir.display(), error = %e, "raft log write failed");
            self.failed = Some(e.to_string());
        }
        r
    }

    /// Writes a batch of appends and syncs once for all of them.
    fn append(&mut self, batch: Vec<AppendOp>) {
        let r = self.guarded(|w| {
            for a in &batch {
                w.file.write_all_at(&a.bytes, a.offset)?;
            }
            w.file.sync_data()
        });
        if r.is_ok() {
            let last = batch.iter().map(|a| a.last_index).max();
            let mut st = self.shared.lock();
            st.durable = st.durable.max(last);
            st.evict();
        }
        for a in batch {
            a.done.log_io_completed(r.as_ref().map(|_| ()).map_err(copy_err));
        }
    }

    /// Replaces the log file by the purge marker followed by the frames from
    /// `keep_from` on.
    fn rewrite(&mut self, marker: &[u8], keep_from: u64) -> io::Result<File> {
        let tmp = self.dir.join(LOG_TMP);
        let mut out = OpenOptions::new().create(true).truncate(true).read(true).write(true).open(&tmp)?;
        out.write_all(&LOG_MAGIC)?;
        out.write_all(marker)?;
        let len = self.file.metadata()?.len();
        let mut buf = vec![0u8; 1 << 20];
        let mut pos = keep_from;
        while pos < len {
            let n = buf.len().min((len - pos) as usize);
            self.file.read_exact_at(&mut buf[..n], pos)?;
            out.write_all(&buf[..n])?;
            pos += n as u64;
        }
        out.sync_all()?;
        fs::rename(&tmp, self.dir.join(LOG_FILE))?;
        sync_dir(&self.dir)?;
        self.file = out;
        self.file.try_clone()
    }
}

// ---------------------------------------------------------------------------
// Opening
// ---------------------------------------------------------------------------

struct Scan {
    purged: Option<LogId>,
    slots: VecDeque<Slot>,
    end: u64,
}

/// Searches `buf` for a frame holding a valid entry with an index above
/// `after`; returns its offset.
fn find_valid_entry(buf: &[u8], after: Option<u64>) -> Option<usize> {
    let min = FRAME_HEADER_LEN + RECORD_HEADER_LEN;
    let mut off = 0;
    while off + min <= buf.len() {
        let b = &buf[off..];
        let len = u32_at(b, 0) as usize;
        let kind = b[FRAME_HEADER_LEN];
        let plausible = (RECORD_HEADER_LEN..=MAX_RECORD_LEN).contains(&len)
            && len <= b.len() - FRAME_HEADER_LEN
            && (KIND_BLANK..=KIND_MEMBERSHIP).contains(&kind)
            && after.is_none_or(|a| u64_at(b, FRAME_HEADER_LEN + 17) > a);
        if plausible {
            if let Ok((body, _)) = frame_at(b) {
                if matches!(decode_record(body), Ok(Record::Entry(_))) {
                    return Some(off);
                }
            }
        }
        off += 1;
    }
    None
}

fn scan_log(path: &Path, file: &File, cache_entries: u64) -> Result<Scan> {
    let corrupt = |reason: String| Error::Corrupt { path: path.to_path_buf(), reason };
    let file_len = file.metadata()?.len();
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut magic = [0u8; 8];
    if read_full(&mut r, &mut magic)? < magic.len() || magic != LOG_MAGIC {
        return Err(corrupt("missing log file magic".into()));
    }
    let cache = usize::try_from(cache_entries).unwrap_or(usize::MAX);
    let mut pos = LOG_MAGIC.len() as u64;
    let mut purged = None;
    let mut slots: VecDeque<Slot> = VecDeque::new();
    let mut header = [0u8; FRAME_HEADER_LEN];
    let mut body = Vec::new();
    let bad = loop {
        let n = read_full(&mut r, &mut header)?;
        if n == 0 {
            break None;
        }
        if n < FRAME_HEADER_LEN {
            break Some("partial frame header".to_string());
        }
        let len = u32_at(&header, 0) as usize;
        if !(RECORD_HEADER_LEN..=MAX_RECORD_LEN).contains(&len) {
            break Some(format!("implausible frame length {len}"));
        }
        if pos + (FRAME_HEADER_LEN + len) as u64 > file_len {
            break Some("frame runs past the end of the file".into());
        }
        body.resize(len, 0);
        r.read_exact(&mut body)?;
        if crc32c::crc32c(&body) != u32_at(&header, 4) {
            break Some("checksum mismatch".into());
        }
        // A frame whose checksum holds was written whole: if it cannot be
        // decoded the file is not ours to repair.
        let record = decode_record(&body).map_err(|e| corrupt(format!("record at offset {pos}: {e}")))?;
        match record {
            Record::Purged(id) => {
                if pos != LOG_MAGIC.len() as u64 {
                    return Err(corrupt(format!("purge marker at offset {pos}")));
                }
                purged = Some(id);
            }
            Record::Entry(e) => {
                let expect = slots.back().map(|s| s.log_id.index + 1).or(purged.map(|p| p.index + 1));
                if let Some(x) = expect.filter(|&x| x != e.log_id.index) {
                    return Err(corrupt(format!(
                        "entry {} at offset {pos} where index {x} was expected",
                        e.log_id
                    )));
                }
                slots.push_back(Slot {
                    log_id: e.log_id,
                    offset: pos,
                    len: (FRAME_HEADER_LEN + len) as u32,
                    entry: Some(e),
                });
                if slots.len() > cache {
                    let i = slots.len() - 1 - cache;
                    slots[i].entry = None;
                }
            }
        }
        pos += (FRAME_HEADER_LEN + len) as u64;
    };
    if let Some(reason) = bad {
        let mut rest = vec![0u8; (file_len - pos) as usize];
        file.read_exact_at(&mut rest, pos)?;
        let last = slots.back().map(|s| s.log_id.index).or(purged.map(|p| p.index));
        if let Some(off) = find_valid_entry(&rest[1..], last) {
            return Err(corrupt(format!(
                "{reason} at offset {pos}, yet a valid entry follows at offset {}",
                pos + 1 + off as u64
            )));
        }
        tracing::warn!(
            path = %path.display(),
            offset = pos,
            dropped_bytes = file_len - pos,
            %reason,
            "dropping torn tail of the raft log"
        );
    }
    Ok(Scan { purged, slots, end: pos })
}

fn read_vote_file(dir: &Path) -> Result<Option<Vote>> {
    let path = dir.join(VOTE_FILE);
    match fs::read(&path) {
        Ok(buf) => decode_vote(&buf).map(Some).map_err(|reason| Error::Corrupt { path, reason }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

// ---------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------

/// A function giving the highest log index that may be purged (in Centum: the
/// last index whose effects the database holds durably).
pub type PurgeFloor = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The durable Raft log and vote of one member; see the module documentation
/// for the file format.
pub struct LogStore {
    dir: PathBuf,
    shared: Arc<Shared>,
    vote: Option<Vote>,
    tx: Option<mpsc::Sender<Op>>,
    writer: Option<JoinHandle<()>>,
    /// Last committed index + 1 (0: nothing committed), as Raft reports it.
    committed: Arc<AtomicU64>,
    purge_floor: Option<PurgeFloor>,
}

/// Reader of the log for Raft's replication tasks; shares the store's index.
#[derive(Clone)]
pub struct LogReader {
    shared: Arc<Shared>,
}

impl LogReader {
    /// Reads the entries with indexes in `range` (those present).
    pub fn entries(&self, range: impl RangeBounds<u64>) -> Result<Vec<Entry>> {
        Ok(self.shared.read(range)?)
    }
}

impl LogStore {
    /// Opens (creating if needed) the log in `dir`, keeping the default
    /// number of recent entries decoded in memory.
    pub fn open(dir: impl AsRef<Path>) -> Result<LogStore> {
        Self::open_with(dir, DEFAULT_CACHE_ENTRIES)
    }

    /// Opens (creating if needed) the log in `dir`, keeping the
    /// `cache_entries` most recent entries decoded in memory (older ones are
    /// read back from the file when asked for).
    pub fn open_with(dir: impl AsRef<Path>, cache_entries: u64) -> Result<LogStore> {
        let dir = dir.as_ref().to_path_buf();
        if !dir.exists() {
            fs::create_dir_all(&dir)?;
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                sync_dir(parent)?;
            }
        }
        let lock = OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(LOCK_FILE))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::Config(format!(
                    "raft directory {} is in use by another log store",
                    dir.display()
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
        }
        remove_if_exists(&dir.join(VOTE_TMP))?;
        remove_if_exists(&dir.join(LOG_TMP))?;
        let vote = read_vote_file(&dir)?;

        let path = dir.join(LOG_FILE);
        if !path.exists() {
            write_file_atomic(&dir, LOG_FILE, LOG_TMP, &LOG_MAGIC)?;
        }
        let file = OpenOptions::new().read(true).write(true).open(&path)?;
        let scan = scan_log(&path, &file, cache_entries)?;
        if file.metadata()?.len() > scan.end {
            file.set_len(scan.end)?;
            file.sync_all()?;
        }
        let last = scan.slots.back().map(|s| s.log_id.index);
        let cached_from = scan
            .slots
            .iter()
            .find(|s| s.entry.is_some())
            .map(|s| s.log_id.index)
            .or(last.map(|l| l + 1))
            .unwrap_or(0);
        let state = State {
            file: Arc::new(file.try_clone()?),
            purged: scan.purged,
            slots: scan.slots,
            end: scan.end,
            durable: last,
            cached_from,
            cache_entries,
        };
        let shared = Arc::new(Shared { state: Mutex::new(state) });
        let (tx, rx) = mpsc::channel();
        let writer = Writer { dir: dir.clone(), file, shared: shared.clone(), failed: None, _lock: lock };
        let writer =
            std::thread::Builder::new().name("raft-log-writer".into()).spawn(move || writer.run(rx))?;
        Ok(LogStore {
            dir,
            shared,
            vote,
            tx: Some(tx),
            writer: Some(writer),
            committed: Arc::new(AtomicU64::new(0)),
            purge_floor: None,
        })
    }

    /// Limits purges to indexes at or below what `floor` returns, so that
    /// entries the state machine does not yet hold durably stay in the log
    /// for replay after a restart. A purge past the end of the log (after a
    /// snapshot was installed) is not limited.
    pub fn set_purge_floor(&mut self, floor: PurgeFloor) {
        self.purge_floor = Some(floor);
    }

    /// The directory of this log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// True when neither a vote nor any log entry (present or purged) exists:
    /// the member has never been part of a cluster.
    pub fn is_pristine(&self) -> bool {
        let st = self.shared.lock();
        self.vote.is_none() && st.slots.is_empty() && st.purged.is_none()
    }

    /// The saved vote.
    pub fn vote(&self) -> Option<Vote> {
        self.vote
    }

    /// The last purged log id, if any.
    pub fn purged(&self) -> Option<LogId> {
        self.shared.lock().purged
    }

    /// The id of the last entry, or the last purged one when the log is empty.
    pub fn last_log_id(&self) -> Option<LogId> {
        self.shared.lock().last_log_id()
    }

    /// The log id at `index`, if the entry is present or is the last purged.
    pub fn log_id_at(&self, index: u64) -> Option<LogId> {
        let st = self.shared.lock();
        if let Some(p) = st.position(index) {
            return Some(st.slots[p].log_id);
        }
        st.purged.filter(|p| p.index == index)
    }

    /// Makes a committed vote for member `me` read as a plain vote for
    /// itself, so that a member that was leader when it stopped starts as a
    /// follower and the group elects a leader of a new term. A leader sends
    /// entries to the others while its own append is still being synced;
    /// one that stopped before the sync lost entries the others may hold,
    /// and resuming its old term would write different entries under the
    /// same term and indexes (which Raft's log matching forbids).
    pub fn forget_leadership(&mut self, me: u64) {
        if let Some(v) = self.vote.as_mut().filter(|v| v.committed && v.leader_id.node_id == me) {
            v.committed = false;
        }
    }

    /// Shared cell holding the last committed index + 1 (0: none), updated as
    /// Raft reports commits.
    pub fn committed_cell(&self) -> Arc<AtomicU64> {
        self.committed.clone()
    }

    /// Reads the entries with indexes in `range` (those present).
    pub fn entries(&self, range: impl RangeBounds<u64>) -> Result<Vec<Entry>> {
        self.reader().entries(range)
    }

    /// A reader of this log that stays valid once the store is handed to
    /// Raft.
    pub fn reader(&self) -> LogReader {
        LogReader { shared: self.shared.clone() }
    }

    fn send(&self, op: Op) -> io::Result<()> {
        self.tx
            .as_ref()
            .and_then(|tx| tx.send(op).ok())
            .ok_or_else(|| io::Error::other("raft log writer has stopped"))
    }

    async fn call<T>(&self, op: Op, rx: oneshot::Receiver<io::Result<T>>) -> io::Result<T> {
        self.send(op)?;
        rx.await.map_err(|_| io::Error::other("raft log writer has stopped"))?
    }
}

impl Drop for LogStore {
    fn drop(&mut self) {
        // Closing the queue lets the writer finish what is queued and exit;
        // waiting for it releases the directory lock before drop returns.
        self.tx.take();
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
    }
}

impl RaftLogReader<TypeConfig> for LogReader {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> std::result::Result<Vec<Entry>, StorageError<u64>> {
        self.shared.read(range).map_err(|e| StorageIOError::read_logs(AnyError::new(&e)).into())
    }
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> std::result::Result<Vec<Entry>, StorageError<u64>> {
        self.shared.read(range).map_err(|e| StorageIOError::read_logs(AnyError::new(&e)).into())
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogReader;

    async fn get_log_state(&mut self) -> std::result::Result<LogState<TypeConfig>, StorageError<u64>> {
        let st = self.shared.lock();
        Ok(LogState { last_purged_log_id: st.purged, last_log_id: st.last_log_id() })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        LogReader { shared: self.shared.clone() }
    }

    async fn save_vote(&mut self, vote: &Vote) -> std::result::Result<(), StorageError<u64>> {
        let (done, rx) = oneshot::channel();
        self.call(Op::Vote { bytes: encode_vote(vote), done }, rx)
            .await
            .map_err(|e| StorageIOError::write_vote(AnyError::new(&e)))?;
        self.vote = Some(*vote);
        Ok(())
    }

    async fn read_vote(&mut self) -> std::result::Result<Option<Vote>, StorageError<u64>> {
        Ok(self.vote)
    }

    async fn save_committed(
        &mut self,
        committed: Option<LogId>,
    ) -> std::result::Result<(), StorageError<u64>> {
        // Kept in memory only, for metrics: after a restart Raft learns the
        // commit index from the leader again.
        self.committed.store(committed.map_or(0, |c| c.index + 1), Ordering::Release);
        Ok(())
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> std::result::Result<(), StorageError<u64>>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut bytes = Vec::new();
        let mut framed = Vec::new();
        for e in entries {
            let at = bytes.len();
            encode_entry(&e, &mut bytes)
                .map_err(|err| StorageIOError::write_log_entry(e.log_id, AnyError::new(&err)))?;
            framed.push((at as u64, (bytes.len() - at) as u32, e));
        }
        let Some(last_index) = framed.last().map(|(_, _, e)| e.log_id.index) else {
            callback.log_io_completed(Ok(()));
            return Ok(());
        };
        let offset = {
            let mut st = self.shared.lock();
            let mut expect = st.last_log_id().map(|l| l.index + 1);
            for (_, _, e) in &framed {
                if let Some(x) = expect.filter(|&x| x != e.log_id.index) {
                    let msg = format!("append of {} where index {x} comes next", e.log_id);
                    return Err(StorageIOError::write_log_entry(e.log_id, AnyError::error(msg)).into());
                }
                expect = Some(e.log_id.index + 1);
            }
            let offset = st.end;
            for (at, len, e) in framed {
                st.slots.push_back(Slot { log_id: e.log_id, offset: offset + at, len, entry: Some(e) });
            }
            st.end += bytes.len() as u64;
            offset
        };
        self.send(Op::Append(AppendOp { bytes, offset, last_index, done: callback }))
            .map_err(|e| StorageIOError::write_logs(AnyError::new(&e)).into())
    }

    async fn truncate(&mut self, log_id: LogId) -> std::result::Result<(), StorageError<u64>> {
        let index = log_id.index;
        let offset = {
            let mut st = self.shared.lock();
            let Some(p) = st.position(index) else {
                return Ok(());
            };
            let offset = st.slots[p].offset;
            st.slots.truncate(p);
            st.end = offset;
            st.durable = st.durable.filter(|&d| d < index);
            st.cached_from = st.cached_from.min(index);
            offset
        };
        let (done, rx) = oneshot::channel();
        self.call(Op::Truncate { offset, done }, rx)
            .await
            .map_err(|e| StorageIOError::write_logs(AnyError::new(&e)))?;
        // Appends queued before the truncation may have reported themselves
        // durable meanwhile; indexes from `index` on are no longer on disk.
        let mut st = self.shared.lock();
        st.durable = st.durable.map(|d| d.min(index.saturating_sub(1))).filter(|_| index > 0);
        Ok(())
    }

    async fn purge(&mut self, log_id: LogId) -> std::result::Result<(), StorageError<u64>> {
        let (target, keep_from) = {
            let mut st = self.shared.lock();
            let last = st.slots.back().map(|s| s.log_id.index);
            let beyond_log = last.is_none_or(|l| log_id.index > l);
            let target = match &self.purge_floor {
                Some(floor) if !beyond_log && floor() < log_id.index => {
                    let allowed = floor();
                    match st.position(allowed) {
                        Some(p) => st.slots[p].log_id,
                        None => return Ok(()),
                    }
                }
                _ => log_id,
            };
            if st.purged.is_some_and(|p| p.index >= target.index) {
                return Ok(());
            }
            while st.slots.front().is_some_and(|s| s.log_id.index <= target.index) {
                st.slots.pop_front();
            }
            let keep_from = st.slots.front().map_or(st.end, |s| s.offset);
            (target, keep_from)
        };
        let mut marker = Vec::new();
        encode_record(KIND_PURGED, &target, &[], &mut marker)
            .map_err(|e| StorageIOError::write_logs(AnyError::new(&e)))?;
        let (done, rx) = oneshot::channel();
        let file = self
            .call(Op::Purge { marker: marker.clone(), keep_from, done }, rx)
            .await
            .map_err(|e| StorageIOError::write_logs(AnyError::new(&e)))?;
        let base = (LOG_MAGIC.len() + marker.len()) as u64;
        let mut st = self.shared.lock();
        for s in st.slots.iter_mut() {
            s.offset = s.offset - keep_from + base;
        }
        st.end = st.end - keep_from + base;
        st.file = Arc::new(file);
        st.purged = Some(target);
        st.cached_from = st.cached_from.max(target.index + 1);
        Ok(())
    }
}
