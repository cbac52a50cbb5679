//! The change feed's side of the log: reading committed transactions back
//! from a position, in log order, as they become durable; and replication
//! slots, the durable positions that keep the log from being removed
//! before a consumer has confirmed it.
//!
//! ```text
//!  Log ── each synced batch ──▶ synced end (condition variable)
//!                                    │
//!  LogReader(from) ── reads segment files up to the synced end ──▶ FeedTxn*
//!                     (batch headers skipped, a transaction's frames joined)
//!
//!  slots file: the slots and their confirmed positions; the checkpoint
//!  worker and recovery keep every segment from the oldest one on
//! ```
//!
//! A feed position is a [`LogPos`]; as a PostgreSQL LSN it is
//! `segment << 40 | offset` ([`lsn`], [`pos_of_lsn`]). A transaction's
//! `start` is where its first record frame begins and its `end` where its
//! last one ends; a consumer that confirmed `end` resumes with the next
//! transaction. Only synced batches are read, so nothing that a crash could
//! still take back ever reaches a consumer.
//!
//! The slots file holds one frame (CRC-checked), written to `slots.tmp`,
//! synced and renamed over `slots`, so a crash leaves the old or the new
//! list whole:
//!
//! ```text
//!  payload: version u8 (1), count u32, then per slot:
//!    name bytes, plugin bytes, database bytes, confirmed segment u64, offset u64
//! ```

use crate::error::{Error, Result};
use crate::format::{push_frame, read_frame, Put, Reader, HEADER_LEN};
use crate::fs::{read_all, File, Fs};
use crate::log::record::{decode_record, DecodedRecord, KIND_BATCH, KIND_RECORD};
use crate::log::segment::{segment_name, LogPos};
use crate::log::Log;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Bits of an LSN that hold the offset in the segment.
const OFFSET_BITS: u32 = 40;

/// A log position as a PostgreSQL LSN.
pub fn lsn(pos: LogPos) -> u64 {
    pos.segment << OFFSET_BITS | pos.offset
}

/// The log position of an LSN (see [`lsn`]).
pub fn pos_of_lsn(lsn: u64) -> LogPos {
    LogPos { segment: lsn >> OFFSET_BITS, offset: lsn & ((1 << OFFSET_BITS) - 1) }
}

/// One committed transaction read back from the log.
#[derive(Debug, Clone)]
pub struct FeedTxn {
    /// Where its first record frame starts.
    pub start: LogPos,
    /// Where its last record frame ends.
    pub end: LogPos,
    /// Its commit timestamp.
    pub commit_ts: u64,
    /// The payloads of its record frames (one, unless it is very large).
    frames: Vec<Vec<u8>>,
}

impl FeedTxn {
    /// Its records, decoded (one per frame).
    pub fn records(&self) -> impl Iterator<Item = DecodedRecord<'_>> {
        self.frames.iter().filter_map(|f| decode_record(f))
    }
}

/// Most bytes read from a segment at once.
const READ_CHUNK: usize = 4 << 20;

/// Reads committed transactions from a position on, as they are synced.
pub struct LogReader {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    log: Arc<Log>,
    /// The next position to read.
    pos: LogPos,
    /// The open segment, and its id.
    file: Option<(u64, Box<dyn File>)>,
    /// The transaction read last, while its next frame may still be
    /// another of its own.
    pending: Option<FeedTxn>,
}

impl LogReader {
    /// A reader of `log` (in `dir`) from `from`, which must be a frame
    /// boundary: a transaction's `end`, or the log's synced end.
    pub fn new(fs: Arc<dyn Fs>, dir: PathBuf, log: Arc<Log>, from: LogPos) -> LogReader {
        let from = if from.offset < HEADER_LEN {
            LogPos { segment: from.segment, offset: HEADER_LEN }
        } else {
            from
        };
        LogReader { fs, dir, log, pos: from, file: None, pending: None }
    }

    /// The next position to read: after the last transaction returned.
    pub fn position(&self) -> LogPos {
        self.pending.as_ref().map_or(self.pos, |p| p.start)
    }

    /// Waits up to `timeout` for the log to be synced past where the
    /// reader stands; true if there is something to read.
    pub fn wait(&self, timeout: Duration) -> bool {
        self.log.wait_synced_past(self.pos, timeout) > self.pos
    }

    /// The transactions synced after the reader's position, up to about
    /// four megabytes of them; empty when it has caught up.
    pub fn read(&mut self) -> Result<Vec<FeedTxn>> {
        let synced = self.log.synced_end();
        let mut out = Vec::new();
        while self.pos < synced && out.is_empty() {
            let limit = if synced.segment == self.pos.segment { synced.offset } else { u64::MAX };
            let file = self.segment()?;
            let len = file.len().map_err(|e| Error::io(self.path(), "stat", e))?.min(limit);
            if self.pos.offset >= len {
                self.next_segment(synced)?;
                continue;
            }
            let want = (len - self.pos.offset).min(READ_CHUNK as u64) as usize;
            let mut buf = self.read_at(self.pos.offset, want)?;
            let mut at = 0;
            loop {
                match read_frame(&buf, at) {
                    Ok((payload, next)) => {
                        let here = LogPos { segment: self.pos.segment, offset: self.pos.offset + at as u64 };
                        let end = LogPos { segment: self.pos.segment, offset: self.pos.offset + next as u64 };
                        match payload.first() {
                            // A batch ends the transaction before it: all
                            // frames of one are in one batch.
                            Some(&KIND_BATCH) => out.extend(self.pending.take()),
                            Some(&KIND_RECORD) => {
                                let ts = decode_record(payload).map(|r| r.commit_ts).ok_or_else(|| {
                                    Error::corrupt(self.path(), here.offset, "undecodable record")
                                })?;
                                match &mut self.pending {
                                    Some(p) if p.commit_ts == ts && p.end == here => {
                                        p.frames.push(payload.to_vec());
                                        p.end = end;
                                    }
                                    pending => {
                                        out.extend(pending.take());
                                        *pending = Some(FeedTxn {
                                            start: here,
                                            end,
                                            commit_ts: ts,
                                            frames: vec![payload.to_vec()],
                                        });
                                    }
                                }
                            }
                            _ => return Err(Error::corrupt(self.path(), here.offset, "unknown frame kind")),
                        }
                        at = next;
                    }
                    // A frame longer than what was read: read it whole.
                    Err(_) if at == 0 && buf.len() >= 4 => {
                        let need = 8 + u32::from_le_bytes(buf[..4].try_into().expect("4 bytes")) as usize;
                        if need as u64 > len - self.pos.offset || need <= buf.len() {
                            if limit == u64::MAX {
                                // Zeros after the last batch of a segment
                                // that is not the last.
                                self.next_segment(synced)?;
                                break;
                            }
                            return Err(Error::corrupt(
                                self.path(),
                                self.pos.offset,
                                "bad frame before the synced end",
                            ));
                        }
                        buf = self.read_at(self.pos.offset, need)?;
                    }
                    Err(_) if at == 0 => {
                        self.next_segment(synced)?;
                        break;
                    }
                    Err(_) => break,
                }
            }
            if at > 0 {
                self.pos.offset += at as u64;
            }
            // The synced end is a batch boundary: the open transaction is
            // whole.
            if self.pos >= synced {
                out.extend(self.pending.take());
            }
        }
        Ok(out)
    }

    fn path(&self) -> PathBuf {
        self.dir.join(segment_name(self.pos.segment))
    }

    /// The reader's segment, opened.
    fn segment(&mut self) -> Result<&dyn File> {
        if self.file.as_ref().is_none_or(|(id, _)| *id != self.pos.segment) {
            let path = self.path();
            let file = self.fs.open(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Error::LogRemoved(format!(
                    "the log segment {} holding position {:X}/{:X} has been removed",
                    segment_name(self.pos.segment),
                    lsn(self.pos) >> 32,
                    lsn(self.pos) as u32
                )),
                _ => Error::io(&path, "open", e),
            })?;
            self.file = Some((self.pos.segment, file));
        }
        Ok(self.file.as_ref().expect("opened").1.as_ref())
    }

    fn next_segment(&mut self, synced: LogPos) -> Result<()> {
        if synced.segment <= self.pos.segment {
            return Err(Error::corrupt(self.path(), self.pos.offset, "the log ends before its synced end"));
        }
        self.pos = LogPos { segment: self.pos.segment + 1, offset: HEADER_LEN };
        Ok(())
    }

    fn read_at(&mut self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let path = self.path();
        let file = self.segment()?;
        let mut buf = vec![0u8; len];
        let mut got = 0;
        while got < len {
            let n = file
                .read_at(offset + got as u64, &mut buf[got..])
                .map_err(|e| Error::io(&path, "read", e))?;
            if n == 0 {
                break;
            }
            got += n;
        }
        buf.truncate(got);
        Ok(buf)
    }
}

/// A replication slot: a consumer's name for its position in the feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// The slot's name.
    pub name: String,
    /// The output plugin it decodes with.
    pub plugin: String,
    /// The database it belongs to.
    pub database: String,
    /// Everything up to here is confirmed: the feed resumes after it.
    pub confirmed: LogPos,
    /// A temporary slot is never written down and goes with its session.
    pub temporary: bool,
    /// The session streaming from it, if any (its process id).
    pub active_pid: Option<u32>,
}

/// The slots of a data directory, kept in its `slots` file.
pub struct Slots {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    slots: Mutex<Vec<Slot>>,
    /// The first segment some slot still needs (`u64::MAX`: none), which
    /// the checkpoint worker does not remove.
    keep_from: Arc<AtomicU64>,
}

/// The slots file's name.
pub const SLOTS_FILE: &str = "slots";

impl Slots {
    /// The slots written in `dir` (none if it has no slots file).
    pub fn open(fs: Arc<dyn Fs>, dir: PathBuf) -> Result<Slots> {
        let slots = read_slots(fs.as_ref(), &dir)?;
        let s = Slots { fs, dir, slots: Mutex::new(slots), keep_from: Arc::new(AtomicU64::new(u64::MAX)) };
        s.publish(&s.lock());
        Ok(s)
    }

    /// Shared with the checkpoint worker: the first segment to keep.
    pub(crate) fn keep_from(&self) -> Arc<AtomicU64> {
        self.keep_from.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn publish(&self, slots: &[Slot]) {
        let min = slots.iter().map(|s| s.confirmed.segment).min().unwrap_or(u64::MAX);
        self.keep_from.store(min, SeqCst);
    }

    /// Every slot.
    pub fn list(&self) -> Vec<Slot> {
        self.lock().clone()
    }

    /// The slot named `name`.
    pub fn get(&self, name: &str) -> Option<Slot> {
        self.lock().iter().find(|s| s.name == name).cloned()
    }

    /// Adds `slot`; false if one of that name exists.
    pub fn create(&self, slot: Slot) -> Result<bool> {
        let mut slots = self.lock();
        if slots.iter().any(|s| s.name == slot.name) {
            return Ok(false);
        }
        let durable = !slot.temporary;
        slots.push(slot);
        if durable {
            if let Err(e) = self.write(&slots) {
                slots.pop();
                return Err(e);
            }
        }
        self.publish(&slots);
        Ok(true)
    }

    /// Removes the slot named `name`; false if there is none.
    pub fn drop_slot(&self, name: &str) -> Result<bool> {
        let mut slots = self.lock();
        let Some(i) = slots.iter().position(|s| s.name == name) else { return Ok(false) };
        let gone = slots.remove(i);
        if !gone.temporary {
            if let Err(e) = self.write(&slots) {
                slots.insert(i, gone);
                return Err(e);
            }
        }
        self.publish(&slots);
        Ok(true)
    }

    /// Marks the slot in use by `pid` (`None`: released); false if it is
    /// missing, or in use by another session when `pid` is given.
    pub fn set_active(&self, name: &str, pid: Option<u32>) -> bool {
        let mut slots = self.lock();
        match slots.iter_mut().find(|s| s.name == name) {
            Some(s) if pid.is_none() || s.active_pid.is_none() || s.active_pid == pid => {
                s.active_pid = pid;
                true
            }
            _ => false,
        }
    }

    /// Moves the slot's confirmed position forward to `to` (never back),
    /// and writes it down before returning.
    pub fn confirm(&self, name: &str, to: LogPos) -> Result<()> {
        let mut slots = self.lock();
        let Some(i) = slots.iter().position(|s| s.name == name) else { return Ok(()) };
        if to <= slots[i].confirmed {
            return Ok(());
        }
        let was = slots[i].confirmed;
        slots[i].confirmed = to;
        if !slots[i].temporary {
            if let Err(e) = self.write(&slots) {
                slots[i].confirmed = was;
                return Err(e);
            }
        }
        self.publish(&slots);
        Ok(())
    }

    /// Writes the durable slots: a new file, synced, renamed over the old.
    fn write(&self, slots: &[Slot]) -> Result<()> {
        let mut payload = Vec::new();
        payload.put_u8(1);
        let durable: Vec<&Slot> = slots.iter().filter(|s| !s.temporary).collect();
        payload.put_u32(durable.len() as u32);
        for s in durable {
            payload.put_bytes(s.name.as_bytes());
            payload.put_bytes(s.plugin.as_bytes());
            payload.put_bytes(s.database.as_bytes());
            payload.put_u64(s.confirmed.segment);
            payload.put_u64(s.confirmed.offset);
        }
        let mut bytes = Vec::new();
        push_frame(&mut bytes, &payload);
        let tmp = self.dir.join("slots.tmp");
        let path = self.dir.join(SLOTS_FILE);
        let file = self.fs.create(&tmp).map_err(|e| Error::io(&tmp, "create", e))?;
        file.write_at(0, &bytes).map_err(|e| Error::io(&tmp, "write", e))?;
        file.sync_data().map_err(|e| Error::io(&tmp, "fdatasync", e))?;
        drop(file);
        self.fs.rename(&tmp, &path).map_err(|e| Error::io(&path, "rename", e))?;
        self.fs.sync_dir(&self.dir).map_err(|e| Error::io(&self.dir, "sync directory", e))
    }
}

/// The slots in `dir`'s slots file; none if there is no such file.
pub(crate) fn read_slots(fs: &dyn Fs, dir: &Path) -> Result<Vec<Slot>> {
    let path = dir.join(SLOTS_FILE);
    let file = match fs.open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&path, "open", e)),
    };
    let bytes = read_all(file.as_ref()).map_err(|e| Error::io(&path, "read", e))?;
    let (payload, _) = read_frame(&bytes, 0).map_err(|e| Error::corrupt(&path, 0, e.what()))?;
    let bad = || Error::corrupt(&path, 0, "malformed slots file");
    let mut r = Reader::new(payload);
    if r.u8().ok_or_else(bad)? != 1 {
        return Err(bad());
    }
    let count = r.u32().ok_or_else(bad)?;
    let text = |r: &mut Reader<'_>| -> Result<String> {
        String::from_utf8(r.bytes().ok_or_else(bad)?.to_vec()).map_err(|_| bad())
    };
    let mut slots = Vec::new();
    for _ in 0..count {
        let (name, plugin, database) = (text(&mut r)?, text(&mut r)?, text(&mut r)?);
        let confirmed = LogPos { segment: r.u64().ok_or_else(bad)?, offset: r.u64().ok_or_else(bad)? };
        slots.push(Slot { name, plugin, database, confirmed, temporary: false, active_pid: None });
    }
    Ok(slots)
}

/// The first segment the slots in `dir` need (`u64::MAX`: none).
pub(crate) fn first_kept_segment(fs: &dyn Fs, dir: &Path) -> Result<u64> {
    Ok(read_slots(fs, dir)?.iter().map(|s| s.confirmed.segment).min().unwrap_or(u64::MAX))
}
