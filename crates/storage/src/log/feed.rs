//! The change feed's side of the log: reading committed transactions back
//! from a position, in log order, as they become durable. Replication
//! slots, the durable positions that keep the log for a consumer, are in
//! `slots`.
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

use crate::error::{Error, Result};
use crate::format::{read_frame, split_frames, HEADER_LEN};
use crate::fs::{File, Fs};
use crate::log::record::{decode_record, DecodedRecord, KIND_BATCH, KIND_RECORD};
use crate::log::segment::{segment_name, LogPos};
use crate::log::Log;
use std::path::PathBuf;
use std::sync::Arc;
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
    /// A transaction whose record frames are `frames`, sealed as the log
    /// holds them (a replicated group's entry carries them so).
    pub fn from_frames(start: LogPos, end: LogPos, commit_ts: u64, frames: &[u8]) -> Result<FeedTxn> {
        let payloads = split_frames(frames, 0).map_err(|(at, e)| Error::Replication {
            code: "XX001",
            message: format!("a replicated record is damaged at byte {at}: {e:?}"),
        })?;
        let frames = payloads.into_iter().map(|(_, p)| p.to_vec()).collect();
        Ok(FeedTxn { start, end, commit_ts, frames })
    }

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
