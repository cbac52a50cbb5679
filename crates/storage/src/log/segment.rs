//! Log segments: files of batches, and how recovery reads them back.
//!
//! ```text
//! segment file "log-<id as 16 hex digits>.wal"
//!   file header (32 bytes, magic "CNTMLOG\0", id = segment id)
//!   batch*
//!
//! batch = one group-commit flush, written with one write and one fdatasync
//!   batch header frame, payload 29 bytes:
//!      0  kind     u8    1 (BATCH)
//!      1  segment  u64   this segment's id
//!      9  start    u64   byte offset of this frame in the segment
//!     17  body_len u64   bytes of record frames that follow
//!     25  count    u32   number of record frames that follow
//!   record frame * count          (see `record`)
//! ```
//!
//! The batch header is what tells a torn tail from corruption. Flushes are
//! serial, and a flush starts only after the previous one was synced, so:
//!
//! * if a batch fails to check (short, bad CRC, wrong count) and no valid
//!   batch header with a matching `start` follows it in the segment, the
//!   batch is the last flush, cut by the crash before its fdatasync
//!   returned: nobody was told its records committed, and the log ends just
//!   before it (the whole batch goes, never half of it);
//! * if a valid batch header does follow, the damaged batch had been synced
//!   and acknowledged: that is corruption, and recovery stops with an error
//!   naming the segment and offset;
//! * a segment that is not the last must end exactly at a batch boundary
//!   (it was synced before its successor was created), so any damage there
//!   is corruption.

use std::path::Path;

use crate::error::{Error, Result};
use crate::format::{check_header, read_frame, Magic, Put, Reader, FRAME_OVERHEAD, HEADER_LEN};
use crate::fs::{read_all, Fs};
use crate::log::record::{decode_record, KIND_BATCH, KIND_RECORD};

/// Payload length of a batch header.
pub(crate) const BATCH_PAYLOAD_LEN: usize = 29;
/// Framed length of a batch header: the room reserved at a batch's start.
pub(crate) const BATCH_FRAME_LEN: usize = BATCH_PAYLOAD_LEN + FRAME_OVERHEAD;

/// File name of segment `id`.
pub fn segment_name(id: u64) -> String {
    format!("log-{id:016x}.wal")
}

/// The id in a segment's file name.
pub fn parse_segment_name(name: &str) -> Option<u64> {
    let hex = name.strip_prefix("log-")?.strip_suffix(".wal")?;
    (hex.len() == 16).then(|| u64::from_str_radix(hex, 16).ok())?
}

/// A position in the log: a segment and a byte offset in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LogPos {
    /// Segment id.
    pub segment: u64,
    /// Byte offset in the segment.
    pub offset: u64,
}

/// One flushed batch: the unit the log hands to the checkpoint worker.
#[derive(Debug, Clone)]
pub(crate) struct Batch {
    /// Where the batch starts.
    pub start: LogPos,
    /// The offset just after it, in the same segment.
    pub end: u64,
    /// The whole batch, header frame included.
    pub bytes: Vec<u8>,
}

impl Batch {
    /// The record payloads, in log order. Only valid batches exist, so a
    /// frame that does not read ends the iteration.
    pub fn records(&self) -> impl Iterator<Item = &[u8]> {
        let mut pos = BATCH_FRAME_LEN;
        std::iter::from_fn(move || {
            let (payload, next) = read_frame(&self.bytes, pos).ok()?;
            pos = next;
            Some(payload)
        })
    }

    /// The log position just after the batch.
    pub fn end_pos(&self) -> LogPos {
        LogPos { segment: self.start.segment, offset: self.end }
    }
}

/// Fills the batch header reserved at the front of `buf` (whose body is
/// `buf[BATCH_FRAME_LEN..]`).
pub(crate) fn fill_batch_header(buf: &mut [u8], start: LogPos, count: u32) {
    let body_len = (buf.len() - BATCH_FRAME_LEN) as u64;
    let mut payload = Vec::with_capacity(BATCH_PAYLOAD_LEN);
    payload.put_u8(KIND_BATCH);
    payload.put_u64(start.segment);
    payload.put_u64(start.offset);
    payload.put_u64(body_len);
    payload.put_u32(count);
    let mut framed = Vec::with_capacity(BATCH_FRAME_LEN);
    crate::format::push_frame(&mut framed, &payload);
    buf[..BATCH_FRAME_LEN].copy_from_slice(&framed);
}

/// What reading one segment found.
#[derive(Debug)]
pub(crate) struct SegmentScan {
    /// The valid batches from the starting offset, in order.
    pub batches: Vec<Batch>,
    /// The offset after the last valid batch.
    pub valid_end: u64,
    /// Why the bytes after `valid_end` were dropped, if any were.
    pub torn: Option<&'static str>,
}

/// Decodes a batch header payload: (segment, start, body_len, count).
fn batch_header(payload: &[u8]) -> Option<(u64, u64, u64, u32)> {
    let mut r = Reader::new(payload);
    if payload.len() != BATCH_PAYLOAD_LEN || r.u8()? != KIND_BATCH {
        return None;
    }
    Some((r.u64()?, r.u64()?, r.u64()?, r.u32()?))
}

/// Checks the batch at `pos`; returns its end.
fn check_batch(buf: &[u8], segment: u64, pos: usize) -> Result<usize, &'static str> {
    let (payload, body_start) = read_frame(buf, pos).map_err(|e| e.what())?;
    let (seg, start, body_len, count) = batch_header(payload).ok_or("bad batch header")?;
    if seg != segment || start != pos as u64 {
        return Err("batch header names another position");
    }
    let end = usize::try_from(body_len)
        .ok()
        .and_then(|l| body_start.checked_add(l))
        .ok_or("batch length out of range")?;
    if end > buf.len() {
        return Err("batch runs past the end of the segment");
    }
    let body = &buf[..end];
    let (mut at, mut seen) = (body_start, 0u32);
    while at < end {
        let (rec, next) = read_frame(body, at).map_err(|e| e.what())?;
        if rec.first() != Some(&KIND_RECORD) || decode_record(rec).is_none() {
            return Err("malformed record");
        }
        at = next;
        seen += 1;
    }
    if seen != count {
        return Err("batch record count mismatch");
    }
    Ok(end)
}

/// True if a valid batch header for `segment` starts anywhere after `from`.
fn later_batch_exists(buf: &[u8], segment: u64, from: usize) -> bool {
    (from..buf.len().saturating_sub(BATCH_FRAME_LEN - 1)).any(|q| {
        buf[q..q + 4] == (BATCH_PAYLOAD_LEN as u32).to_le_bytes()
            && buf[q + FRAME_OVERHEAD] == KIND_BATCH
            && read_frame(buf, q)
                .ok()
                .and_then(|(p, _)| batch_header(p))
                .is_some_and(|(s, start, _, _)| s == segment && start == q as u64)
    })
}

/// Reads the batches of segment `segment` (whole file in `buf`, header
/// already checked) from offset `from`. `last` says whether this is the
/// newest segment, the only one that may end in a torn batch.
pub(crate) fn scan_segment(
    path: &Path,
    segment: u64,
    buf: &[u8],
    from: u64,
    last: bool,
) -> Result<SegmentScan> {
    let mut pos = usize::try_from(from).unwrap_or(usize::MAX);
    if pos > buf.len() {
        return Err(Error::corrupt(
            path,
            buf.len() as u64,
            format!("segment ends before the checkpoint's log position {from}"),
        ));
    }
    let mut batches = Vec::new();
    while pos < buf.len() {
        match check_batch(buf, segment, pos) {
            Ok(end) => {
                batches.push(Batch {
                    start: LogPos { segment, offset: pos as u64 },
                    end: end as u64,
                    bytes: buf[pos..end].to_vec(),
                });
                pos = end;
            }
            Err(what) => {
                if !last {
                    return Err(Error::corrupt(
                        path,
                        pos as u64,
                        format!("{what} in a segment that is not the last"),
                    ));
                }
                if later_batch_exists(buf, segment, pos + 1) {
                    return Err(Error::corrupt(
                        path,
                        pos as u64,
                        format!("{what}, and a later batch follows: synced data is damaged"),
                    ));
                }
                return Ok(SegmentScan { batches, valid_end: pos as u64, torn: Some(what) });
            }
        }
    }
    Ok(SegmentScan { batches, valid_end: pos as u64, torn: None })
}

/// Reads the log back from `from` to `to`, both batch boundaries in
/// segments on disk, handing each batch to `each` in order; one segment is
/// in memory at a time. The segment holding `to` may go on past it (the
/// log may be appending); anything before `to` that does not check is
/// corruption, since every byte there was synced.
pub(crate) fn read_batches(
    fs: &dyn Fs,
    dir: &Path,
    from: LogPos,
    to: LogPos,
    mut each: impl FnMut(Batch) -> Result<()>,
) -> Result<()> {
    if to <= from {
        return Ok(());
    }
    for id in from.segment..=to.segment {
        let path = dir.join(segment_name(id));
        let file = fs.open(&path).map_err(|e| Error::io(&path, "open", e))?;
        let mut buf = read_all(file.as_ref()).map_err(|e| Error::io(&path, "read", e))?;
        let found = check_header(&path, &buf, Magic::Log)?;
        if found != id {
            return Err(Error::corrupt(&path, 16, format!("header names segment {found}")));
        }
        if id == to.segment {
            let end = usize::try_from(to.offset).unwrap_or(usize::MAX);
            if buf.len() < end {
                return Err(Error::corrupt(
                    &path,
                    buf.len() as u64,
                    format!("segment ends before log position {}", to.offset),
                ));
            }
            buf.truncate(end);
        }
        let start = if id == from.segment { from.offset } else { HEADER_LEN };
        for batch in scan_segment(&path, id, &buf, start, false)?.batches {
            each(batch)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(parse_segment_name(&segment_name(0xab)), Some(0xab));
        assert_eq!(parse_segment_name("log-12.wal"), None);
        assert_eq!(parse_segment_name("data-0000000000000001.cdat"), None);
    }
}
