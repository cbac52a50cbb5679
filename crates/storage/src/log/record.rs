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

use crate::format::{begin_frame, end_frame, Put, Reader};

/// Frame kind byte of a batch header.
pub(crate) const KIND_BATCH: u8 = 1;
/// Frame kind byte of a redo record.
pub(crate) const KIND_RECORD: u8 = 2;

const OP_INSERT: u8 = 1;
const OP_DELETE: u8 = 2;
const OP_SCHEMA: u8 = 3;

/// Offset of `commit_ts` in the frame (8-byte frame prefix + kind).
const TS_AT: usize = 8 + 1;
/// Offset of `op_count` in the frame.
const COUNT_AT: usize = TS_AT + 8;

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
    ops: u32,
    commit_ts: u64,
}

impl Record {
    /// An empty record for a transaction committing at `commit_ts`.
    pub fn new(commit_ts: u64) -> Self {
        Self::with_capacity(commit_ts, 64)
    }

    /// Like [`Record::new`], reserving room for `bytes` of operations.
    pub fn with_capacity(commit_ts: u64, bytes: usize) -> Self {
        let mut buf = Vec::with_capacity(bytes + COUNT_AT + 4);
        begin_frame(&mut buf);
        buf.put_u8(KIND_RECORD);
        buf.put_u64(commit_ts);
        buf.put_u32(0);
        Record { buf, ops: 0, commit_ts }
    }

    /// Bytes [`Record::insert`] adds for an image of `len` bytes.
    pub const fn insert_size(len: usize) -> usize {
        1 + 8 + 4 + 4 + len
    }

    /// Bytes [`Record::delete`] adds.
    pub const DELETE_SIZE: usize = 1 + 8 + 8 + 4;

    /// Logs a new row version `(table, commit_ts, seq)` with image `data`.
    pub fn insert(&mut self, table: u64, seq: u32, data: &[u8]) {
        self.buf.put_u8(OP_INSERT);
        self.buf.put_u64(table);
        self.buf.put_u32(seq);
        self.buf.put_bytes(data);
        self.ops += 1;
    }

    /// Logs the deletion of version `(table, ts, seq)`.
    pub fn delete(&mut self, table: u64, ts: u64, seq: u32) {
        self.buf.put_u8(OP_DELETE);
        self.buf.put_u64(table);
        self.buf.put_u64(ts);
        self.buf.put_u32(seq);
        self.ops += 1;
    }

    /// Logs a full catalog image.
    pub fn schema(&mut self, catalog: &[u8]) {
        self.buf.put_u8(OP_SCHEMA);
        self.buf.put_bytes(catalog);
        self.ops += 1;
    }

    /// Sets the commit timestamp (see [`crate::Log::commit_stamped`]).
    pub fn set_commit_ts(&mut self, ts: u64) {
        self.buf[TS_AT..TS_AT + 8].copy_from_slice(&ts.to_le_bytes());
        self.commit_ts = ts;
    }

    /// The commit timestamp.
    pub fn commit_ts(&self) -> u64 {
        self.commit_ts
    }

    /// Operations so far.
    pub fn op_count(&self) -> u32 {
        self.ops
    }

    /// Size of the framed record in bytes.
    pub fn encoded_len(&self) -> usize {
        self.buf.len()
    }

    /// The framed record, ready to append; the record is left empty.
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        self.buf[COUNT_AT..COUNT_AT + 4].copy_from_slice(&self.ops.to_le_bytes());
        end_frame(&mut self.buf, 0);
        std::mem::take(&mut self.buf)
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
            OP_DELETE => Op::Delete { table: r.u64()?, ts: r.u64()?, seq: r.u32()? },
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
    fn record_round_trips() {
        let mut rec = Record::new(9);
        rec.insert(1, 0, b"abc");
        rec.delete(1, 5, 2);
        rec.schema(b"cat");
        let bytes = { rec }.finish();
        let (payload, end) = read_frame(&bytes, 0).unwrap();
        assert_eq!(end, bytes.len());
        let d = decode_record(payload).unwrap();
        assert_eq!(d.commit_ts, 9);
        assert_eq!(
            d.ops,
            vec![
                Op::Insert { table: 1, seq: 0, data: b"abc" },
                Op::Delete { table: 1, ts: 5, seq: 2 },
                Op::Schema { catalog: b"cat" },
            ]
        );
        for cut in 0..payload.len() {
            assert!(decode_record(&payload[..cut]).is_none());
        }
    }
}
