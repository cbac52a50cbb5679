//! The redo record: one per committed transaction, built by the engine at
//! commit time and appended to the log as one frame.
//!
//! ```text
//! record frame payload
//!   0  kind       u8    2 (RECORD)
//!   1  commit_ts  u64
//!   9  op_count   u32
//!  13  ops        op_count times one of:
//!        1 Insert  table u64, seq u32, len u32, data [u8; len]
//!        2 Delete  table u64, ts u64, seq u32
//!        3 Schema  len u32, catalog [u8; len]
//!        4 Delete with the old image (logical decoding, `wal_level = logical`)
//!                  table u64, ts u64, seq u32, flags u8, len u32, old [u8; len]
//!                  flags bit 0: an update; the row's new version is the
//!                  next Insert of the same table in the record
//! ```
//!
//! A row version is named by its [`RowId`]: the table, the commit timestamp
//! of the transaction that created it, and a sequence number unique within
//! that transaction. An Insert's identity is `(table, commit_ts, seq)` of its
//! own record; a Delete names the identity of the version it ends. No undo,
//! no index entries: indexes are rebuilt at recovery.
//!
//! [`Record`] writes straight into the buffer that becomes the frame, so
//! the commit path pays one copy of each row image and one CRC pass.
//!
//! A frame holds at most 1 GiB, and a transaction may log more (a COPY of
//! ten million rows). Such a record is written as several record frames,
//! each at most [`FRAME_LIMIT`] bytes, all with the transaction's commit
//! timestamp, one after the other in the buffer. The log appends them
//! together under its lock, so they land in one batch, which recovery keeps
//! or drops whole: the transaction is replayed entirely or not at all.
//! Every consumer handles each frame as a record of its own; the ops of one
//! transaction never depend on their grouping, since each names its row by
//! `(table, commit_ts, seq)`.

use crate::format::{begin_frame, seal_frame, Put, Reader};
use smallvec::SmallVec;

/// Frame kind byte of a batch header.
pub(crate) const KIND_BATCH: u8 = 1;
/// Frame kind byte of a redo record.
pub(crate) const KIND_RECORD: u8 = 2;

const OP_INSERT: u8 = 1;
const OP_DELETE: u8 = 2;
const OP_SCHEMA: u8 = 3;
const OP_DELETE_IMAGE: u8 = 4;

/// Flag bit of an [`OP_DELETE_IMAGE`]: the deleted version was replaced.
const FLAG_REPLACED: u8 = 1;

/// Offset of `commit_ts` in the frame (8-byte frame prefix + kind).
const TS_AT: usize = 8 + 1;
/// Offset of `op_count` in the frame.
const COUNT_AT: usize = TS_AT + 8;

/// Bytes of a record frame's header: the frame prefix, kind, commit
/// timestamp and op count.
const FRAME_HEADER: usize = COUNT_AT + 4;

/// Bytes of one record frame, at most, unless a single op is larger: a
/// record that would grow past it goes on in a new frame.
pub const FRAME_LIMIT: usize = 256 << 20;

/// Room left in front of a record's frames: a batch header fits there, so
/// the log can take a large record's buffer as a batch of its own instead
/// of copying it.
pub(crate) const LEAD: usize = super::segment::BATCH_FRAME_LEN;

/// The identity of a row version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowId {
    /// The table's id (the engine's).
    pub table: u64,
    /// Commit timestamp of the transaction that created the version.
    pub ts: u64,
    /// Sequence number within that transaction.
    pub seq: u32,
}

/// One operation of a redo record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    /// A new row version: its identity is `(table, commit_ts, seq)`.
    Insert {
        /// Table id.
        table: u64,
        /// Sequence number within the transaction.
        seq: u32,
        /// The row image, opaque to this crate.
        data: &'a [u8],
    },
    /// The end of the version `(table, ts, seq)`.
    Delete {
        /// Table id.
        table: u64,
        /// Commit timestamp that created the deleted version.
        ts: u64,
        /// Its sequence number.
        seq: u32,
        /// The deleted version's image, where the log keeps them for
        /// logical decoding, and whether the row lives on as the next
        /// insert of the same table in the record (an update).
        old: Option<(&'a [u8], bool)>,
    },
    /// A full catalog image; the last one in log order wins.
    Schema {
        /// The engine's catalog, opaque to this crate.
        catalog: &'a [u8],
    },
}

/// A redo record under construction.
///
/// ```
/// use centum_storage::Record;
/// let mut rec = Record::new(42);
/// rec.insert(7, 0, b"row image");
/// rec.delete(7, 40, 3);
/// assert_eq!(rec.op_count(), 2);
/// ```
#[derive(Debug, Clone)]
pub struct Record {
    buf: Vec<u8>,
    /// Where each frame starts in `buf`, and its ops; the last is open.
    /// Almost every record has one frame, kept inline.
    frames: SmallVec<[(usize, u32); 1]>,
    commit_ts: u64,
    /// A frame grows past this only with its first op.
    limit: usize,
}

impl Record {
    /// An empty record for a transaction committing at `commit_ts`.
    pub fn new(commit_ts: u64) -> Self {
        Self::with_capacity(commit_ts, 64)
    }

    /// Like [`Record::new`], reserving room for `bytes` of operations and
    /// the header of every frame they will fill, so that a record of at
    /// most that many bytes of operations never moves its buffer (for a
    /// bulk load, a copy of hundreds of megabytes into fresh pages).
    pub fn with_capacity(commit_ts: u64, bytes: usize) -> Self {
        Record::reserved(commit_ts, bytes, FRAME_LIMIT)
    }

    /// [`Record::with_capacity`] with frames of at most `limit` bytes. A
    /// frame is closed only when the next op would not fit, so two frames
    /// in a row hold more than `limit` bytes together: `bytes` of ops
    /// fill at most `2 * bytes / limit + 1` frames.
    fn reserved(commit_ts: u64, bytes: usize, limit: usize) -> Self {
        let frames = 2 * bytes / limit + 2;
        let mut buf = Vec::with_capacity(LEAD + bytes + frames * FRAME_HEADER);
        buf.resize(LEAD, 0);
        let mut rec = Record { buf, frames: SmallVec::new(), commit_ts, limit };
        rec.open_frame();
        rec
    }

    /// The same record with frames of at most `bytes` (see the module's
    /// header); for tests of records that span frames.
    pub fn frame_limit(mut self, bytes: usize) -> Self {
        self.limit = bytes;
        self
    }

    fn open_frame(&mut self) {
        let at = begin_frame(&mut self.buf);
        self.buf.put_u8(KIND_RECORD);
        self.buf.put_u64(self.commit_ts);
        self.buf.put_u32(0);
        self.frames.push((at, 0));
    }

    /// Makes room for an op of `len` bytes: a new frame if the open one
    /// would pass the limit.
    fn add_op(&mut self, len: usize) {
        let &(at, ops) = self.frames.last().expect("a record has a frame");
        if ops > 0 && self.buf.len() - at + len > self.limit {
            self.open_frame();
        }
        self.frames.last_mut().expect("a record has a frame").1 += 1;
    }

    /// Bytes [`Record::insert`] adds for an image of `len` bytes.
    pub const fn insert_size(len: usize) -> usize {
        1 + 8 + 4 + 4 + len
    }

    /// Bytes [`Record::delete`] adds.
    pub const DELETE_SIZE: usize = 1 + 8 + 8 + 4;

    /// Logs a new row version `(table, commit_ts, seq)` with image `data`.
    pub fn insert(&mut self, table: u64, seq: u32, data: &[u8]) {
        self.add_op(Self::insert_size(data.len()));
        self.buf.put_u8(OP_INSERT);
        self.buf.put_u64(table);
        self.buf.put_u32(seq);
        self.buf.put_bytes(data);
    }

    /// Logs the deletion of version `(table, ts, seq)`.
    pub fn delete(&mut self, table: u64, ts: u64, seq: u32) {
        self.add_op(Self::DELETE_SIZE);
        self.buf.put_u8(OP_DELETE);
        self.buf.put_u64(table);
        self.buf.put_u64(ts);
        self.buf.put_u32(seq);
    }

    /// Bytes [`Record::delete_image`] adds for an image of `len` bytes.
    pub const fn delete_image_size(len: usize) -> usize {
        Self::DELETE_SIZE + 1 + 4 + len
    }

    /// Logs the deletion of version `(table, ts, seq)` with its image, for
    /// logical decoding; `replaced` says the row's new version is the next
    /// insert of `table` in this record.
    pub fn delete_image(&mut self, table: u64, ts: u64, seq: u32, old: &[u8], replaced: bool) {
        self.add_op(Self::delete_image_size(old.len()));
        self.buf.put_u8(OP_DELETE_IMAGE);
        self.buf.put_u64(table);
        self.buf.put_u64(ts);
        self.buf.put_u32(seq);
        self.buf.put_u8(if replaced { FLAG_REPLACED } else { 0 });
        self.buf.put_bytes(old);
    }

    /// Logs a full catalog image.
    pub fn schema(&mut self, catalog: &[u8]) {
        self.add_op(1 + 4 + catalog.len());
        self.buf.put_u8(OP_SCHEMA);
        self.buf.put_bytes(catalog);
    }

    /// Sets the commit timestamp (see [`crate::Log::commit_stamped`]).
    pub fn set_commit_ts(&mut self, ts: u64) {
        for &(at, _) in &self.frames {
            self.buf[at + TS_AT..at + TS_AT + 8].copy_from_slice(&ts.to_le_bytes());
        }
        self.commit_ts = ts;
    }

    /// The commit timestamp.
    pub fn commit_ts(&self) -> u64 {
        self.commit_ts
    }

    /// Operations so far.
    pub fn op_count(&self) -> u32 {
        self.frames.iter().map(|&(_, ops)| ops).sum()
    }

    /// Size of the framed record in bytes.
    pub fn encoded_len(&self) -> usize {
        self.buf.len() - LEAD
    }

    /// Frames the record takes (see the module's header).
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    /// Bytes of its largest frame.
    pub fn largest_frame(&self) -> usize {
        (0..self.frames.len()).map(|i| self.frame_end(i) - self.frames[i].0).max().unwrap_or(0)
    }

    /// The record's frames, sealed, as the log holds them: what a standby
    /// applies, each frame's payload read back by [`decode_record`].
    pub fn into_frames(mut self) -> Vec<u8> {
        let mut buf = self.finish();
        buf.drain(..LEAD);
        buf
    }

    /// The framed record, ready to append, after [`LEAD`] spare bytes;
    /// the record is left empty.
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        for i in 0..self.frames.len() {
            let (at, ops) = self.frames[i];
            let end = self.frame_end(i);
            self.buf[at + COUNT_AT..at + COUNT_AT + 4].copy_from_slice(&ops.to_le_bytes());
            seal_frame(&mut self.buf, at, end);
        }
        std::mem::take(&mut self.buf)
    }

    /// Where frame `i` ends: where the next begins, or the buffer's end.
    fn frame_end(&self, i: usize) -> usize {
        self.frames.get(i + 1).map_or(self.buf.len(), |&(at, _)| at)
    }
}

/// A decoded record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedRecord<'a> {
    /// Commit timestamp.
    pub commit_ts: u64,
    /// Operations in the order they were added.
    pub ops: Vec<Op<'a>>,
}

/// Decodes a record frame's payload; `None` if it is not a well-formed
/// record.
pub fn decode_record(payload: &[u8]) -> Option<DecodedRecord<'_>> {
    let mut r = Reader::new(payload);
    if r.u8()? != KIND_RECORD {
        return None;
    }
    let commit_ts = r.u64()?;
    let count = r.u32()?;
    // Each op takes at least 5 bytes: refuse counts the payload cannot hold
    // before reserving memory for them.
    if count as usize > payload.len() / 5 {
        return None;
    }
    let mut ops = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let op = match r.u8()? {
            OP_INSERT => Op::Insert { table: r.u64()?, seq: r.u32()?, data: r.bytes()? },
            OP_DELETE => Op::Delete { table: r.u64()?, ts: r.u64()?, seq: r.u32()?, old: None },
            OP_DELETE_IMAGE => {
                let (table, ts, seq, flags) = (r.u64()?, r.u64()?, r.u32()?, r.u8()?);
                Op::Delete { table, ts, seq, old: Some((r.bytes()?, flags & FLAG_REPLACED != 0)) }
            }
            OP_SCHEMA => Op::Schema { catalog: r.bytes()? },
            _ => return None,
        };
        ops.push(op);
    }
    r.is_empty().then_some(DecodedRecord { commit_ts, ops })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::read_frame;

    #[test]
    fn a_record_past_its_frame_limit_spans_frames_with_one_timestamp() {
        let mut rec = Record::new(5).frame_limit(64);
        rec.schema(b"catalog");
        for seq in 0..20u32 {
            rec.insert(3, seq, &[seq as u8; 10]);
            if seq % 3 == 0 {
                rec.delete(3, 1, seq);
            }
        }
        assert_eq!(rec.op_count(), 1 + 20 + 7);
        assert!(rec.frame_count() > 5, "{} frames", rec.frame_count());
        assert!(rec.largest_frame() <= 64);
        rec.set_commit_ts(9);
        let frames = rec.frame_count();
        let bytes = rec.finish();
        let (mut at, mut ops) = (LEAD, Vec::new());
        for _ in 0..frames {
            let (payload, next) = read_frame(&bytes, at).expect("frame");
            let d = decode_record(payload).expect("record");
            assert_eq!(d.commit_ts, 9);
            assert!(!d.ops.is_empty());
            ops.extend(d.ops);
            at = next;
        }
        assert_eq!(at, bytes.len());
        assert_eq!(ops.len(), 28);
        assert_eq!(ops[0], Op::Schema { catalog: b"catalog" });
        assert_eq!(ops[1], Op::Insert { table: 3, seq: 0, data: &[0; 10] });
        assert_eq!(ops[2], Op::Delete { table: 3, ts: 1, seq: 0, old: None });
        // One op larger than the limit gets a frame of its own.
        let mut big = Record::new(1).frame_limit(64);
        big.insert(1, 0, &[7; 10]);
        big.insert(1, 1, &[7; 200]);
        assert_eq!(big.frame_count(), 2);
        assert!(big.largest_frame() > 200);
    }

    #[test]
    fn a_reserved_record_never_moves_its_buffer() {
        // Ops of mixed sizes over many frames, one of them larger than a
        // frame, in exactly the bytes reserved for them.
        let sizes: Vec<usize> =
            (0..500).map(|i| [3, 40, 17, 90, 1][i % 5] + if i == 250 { 300 } else { 0 }).collect();
        let bytes: usize =
            sizes.iter().map(|&n| Record::insert_size(n)).sum::<usize>() + 10 * Record::DELETE_SIZE;
        let mut rec = Record::reserved(4, bytes, 256);
        let (at, capacity) = (rec.buf.as_ptr(), rec.buf.capacity());
        for (seq, &n) in sizes.iter().enumerate() {
            rec.insert(2, seq as u32, &vec![seq as u8; n]);
            if seq % 50 == 0 {
                rec.delete(2, 1, seq as u32);
            }
        }
        assert!(rec.frame_count() > 100, "{} frames", rec.frame_count());
        assert_eq!((rec.buf.as_ptr(), rec.buf.capacity()), (at, capacity));
    }

    #[test]
    fn record_round_trips() {
        let mut rec = Record::new(9);
        rec.insert(1, 0, b"abc");
        rec.delete(1, 5, 2);
        rec.schema(b"cat");
        rec.delete_image(1, 6, 3, b"old", true);
        let bytes = { rec }.finish();
        let (payload, end) = read_frame(&bytes, LEAD).unwrap();
        assert_eq!(end, bytes.len());
        let d = decode_record(payload).unwrap();
        assert_eq!(d.commit_ts, 9);
        assert_eq!(
            d.ops,
            vec![
                Op::Insert { table: 1, seq: 0, data: b"abc" },
                Op::Delete { table: 1, ts: 5, seq: 2, old: None },
                Op::Schema { catalog: b"cat" },
                Op::Delete { table: 1, ts: 6, seq: 3, old: Some((b"old", true)) },
            ]
        );
        for cut in 0..payload.len() {
            assert!(decode_record(&payload[..cut]).is_none());
        }
    }
}
