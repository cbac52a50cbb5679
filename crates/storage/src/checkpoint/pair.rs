//! Checkpoint file pairs: a data file of inserted row images and a delta
//! file of deleted row identities, and the states a pair goes through.
//!
//! ```text
//! data file "data-<pair id, 16 hex>.cdat"
//!   file header (magic "CNTMDATA", id = pair id)
//!   block frame*, payload = row*:
//!      table u64, ts u64, seq u32, len u32, image [u8; len]
//!
//! delta file "delta-<pair id, 16 hex>.cdlt"
//!   file header (magic "CNTMDLTA", id = pair id)
//!   block frame*, payload = deleted identity*:
//!      table u64, ts u64, seq u32                (20 bytes each)
//! ```
//!
//! Both files are only appended to, in blocks of whatever one log batch
//! brought (coalesced into writes of up to 1 MiB). The manifest
//! records each file's length at the checkpoint, and recovery reads exactly
//! that much: bytes appended later, synced or torn, are not looked at.
//!
//! A pair's life (the names follow SQL Server's checkpoint file states):
//!
//! ```text
//!  PreCreated ──first row──▶ UnderConstruction ──manifest──▶ Active
//!   (files made,              (current pair, or closed          │ merge picks it
//!    headers synced)           but not yet in a manifest)       ▼
//!  PreCreated ──merge───▶ MergeTarget ──manifest──▶ Active   MergedSource
//!                                                              │ manifest without it
//!                                                              ▼
//!                                             WaitingForRemoval ──▶ files removed
//! ```

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::{check_header, push_frame, read_frames, Magic, Put, Reader, FRAME_OVERHEAD, HEADER_LEN};
use crate::fs::{read_exact_at, File, Fs};
use crate::log::RowId;

/// Appends are gathered into writes of this size.
pub(crate) const WRITE_CHUNK: usize = 1 << 20;

/// Which file of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// Inserted row images.
    Data,
    /// Deleted row identities.
    Delta,
}

/// The state of a checkpoint file pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileState {
    /// Created ahead of need, headers synced, no rows.
    PreCreated,
    /// Receiving rows, or closed and waiting for the next manifest.
    UnderConstruction,
    /// Named by the durable manifest.
    Active,
    /// Being filled by a merge; becomes Active with the manifest that
    /// installs it.
    MergeTarget,
    /// Merged into a target; still named by the durable manifest until the
    /// next one is written.
    MergedSource,
    /// No manifest names it any more; its files are being removed.
    WaitingForRemoval,
}

impl fmt::Display for FileState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            FileState::PreCreated => "PRECREATED",
            FileState::UnderConstruction => "UNDER CONSTRUCTION",
            FileState::Active => "ACTIVE",
            FileState::MergeTarget => "MERGE TARGET",
            FileState::MergedSource => "MERGED SOURCE",
            FileState::WaitingForRemoval => "WAITING FOR REMOVAL",
        };
        f.write_str(s)
    }
}

/// One checkpoint file, as the API and system views show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// The pair's id (both files of a pair share it).
    pub id: u64,
    /// Data or delta.
    pub kind: FileKind,
    /// The pair's state.
    pub state: FileState,
    /// Smallest commit timestamp of a row in the data file (`u64::MAX` when
    /// empty).
    pub min_ts: u64,
    /// Largest commit timestamp of a row in the data file (0 when empty).
    pub max_ts: u64,
    /// Rows in the data file.
    pub rows: u64,
    /// Deletions recorded against it (an upper bound: a deletion whose
    /// timestamp falls in two overlapping ranges is written to both).
    pub deleted: u64,
    /// Bytes in this file.
    pub bytes: u64,
}

/// What a manifest records about a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairMeta {
    /// Pair id.
    pub id: u64,
    /// Smallest row commit timestamp.
    pub min_ts: u64,
    /// Largest row commit timestamp.
    pub max_ts: u64,
    /// Rows in the data file.
    pub rows: u64,
    /// Identities in the delta file.
    pub deleted: u64,
    /// Valid length of the data file.
    pub data_len: u64,
    /// Valid length of the delta file.
    pub delta_len: u64,
}

impl PairMeta {
    /// An empty pair.
    pub fn empty(id: u64) -> Self {
        PairMeta {
            id,
            min_ts: u64::MAX,
            max_ts: 0,
            rows: 0,
            deleted: 0,
            data_len: HEADER_LEN,
            delta_len: HEADER_LEN,
        }
    }

    /// Widens the timestamp range to cover `ts`.
    pub fn cover(&mut self, ts: u64) {
        self.min_ts = self.min_ts.min(ts);
        self.max_ts = self.max_ts.max(ts);
    }

    /// True if a row created at `ts` may be in the data file.
    pub fn may_hold(&self, ts: u64) -> bool {
        self.rows > 0 && self.min_ts <= ts && ts <= self.max_ts
    }

    /// Fraction of rows still live (an estimate: see [`FileInfo::deleted`]).
    pub fn live_share(&self) -> f64 {
        if self.rows == 0 {
            return 0.0;
        }
        self.rows.saturating_sub(self.deleted) as f64 / self.rows as f64
    }
}

/// File name of a pair's data file.
pub fn data_name(id: u64) -> String {
    format!("data-{id:016x}.cdat")
}

/// File name of a pair's delta file.
pub fn delta_name(id: u64) -> String {
    format!("delta-{id:016x}.cdlt")
}

/// The pair id in a data or delta file name.
pub fn parse_pair_name(name: &str) -> Option<u64> {
    let hex = name
        .strip_prefix("data-")
        .and_then(|n| n.strip_suffix(".cdat"))
        .or_else(|| name.strip_prefix("delta-")?.strip_suffix(".cdlt"))?;
    (hex.len() == 16).then(|| u64::from_str_radix(hex, 16).ok())?
}

/// Encodes one row into a data block.
pub(crate) fn put_row(block: &mut Vec<u8>, id: RowId, data: &[u8]) {
    block.put_u64(id.table);
    block.put_u64(id.ts);
    block.put_u32(id.seq);
    block.put_bytes(data);
}

/// Encodes one deleted identity into a delta block.
pub(crate) fn put_deleted(block: &mut Vec<u8>, id: RowId) {
    block.put_u64(id.table);
    block.put_u64(id.ts);
    block.put_u32(id.seq);
}

/// A file appended to through a write buffer.
pub(crate) struct AppendFile {
    pub path: PathBuf,
    file: Box<dyn File>,
    /// Bytes written to the file.
    written: u64,
    buf: Vec<u8>,
    /// Bytes made durable.
    synced: u64,
}

impl AppendFile {
    /// Creates the file with its header, synced (the caller syncs the
    /// directory).
    pub fn create(fs: &dyn Fs, path: PathBuf, magic: Magic, id: u64) -> Result<Self> {
        let file = fs.create(&path).map_err(|e| Error::io(&path, "create", e))?;
        let mut f =
            AppendFile { path, file, written: 0, buf: crate::format::header(magic, id).to_vec(), synced: 0 };
        f.sync()?;
        Ok(f)
    }

    /// Opens an existing file to append at `len`, cutting off anything after
    /// it (appends made after the last manifest, possibly torn).
    pub fn reopen(fs: &dyn Fs, path: PathBuf, len: u64) -> Result<Self> {
        let file = fs.open(&path).map_err(|e| Error::io(&path, "open", e))?;
        let actual = file.len().map_err(|e| Error::io(&path, "stat", e))?;
        if actual != len {
            file.set_len(len).map_err(|e| Error::io(&path, "truncate", e))?;
            file.sync_data().map_err(|e| Error::io(&path, "fdatasync", e))?;
        }
        Ok(AppendFile { path, file, written: len, buf: Vec::new(), synced: len })
    }

    /// Appends one CRC-framed block.
    pub fn append_block(&mut self, payload: &[u8]) -> Result<()> {
        push_frame(&mut self.buf, payload);
        if self.buf.len() >= WRITE_CHUNK {
            self.write_out()?;
        }
        Ok(())
    }

    fn write_out(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            self.file.write_at(self.written, &self.buf).map_err(|e| Error::io(&self.path, "write", e))?;
            self.written += self.buf.len() as u64;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes what is buffered and makes the file durable.
    pub fn sync(&mut self) -> Result<()> {
        self.write_out()?;
        if self.synced != self.written {
            self.file.sync_data().map_err(|e| Error::io(&self.path, "fdatasync", e))?;
            self.synced = self.written;
        }
        Ok(())
    }

    /// Length including buffered bytes.
    pub fn len(&self) -> u64 {
        self.written + self.buf.len() as u64
    }
}

/// A checked block: its frame's offset and its payload's range in the file.
type Block = (usize, std::ops::Range<usize>);

/// Reads `len` bytes of a pair file and checks its header and every block.
fn read_blocks(fs: &dyn Fs, path: &Path, len: u64, magic: Magic, id: u64) -> Result<(Vec<u8>, Vec<Block>)> {
    let file = fs.open(path).map_err(|e| Error::io(path, "open", e))?;
    let want = usize::try_from(len).map_err(|_| Error::corrupt(path, 0, "length out of range"))?;
    let buf = read_exact_at(file.as_ref(), 0, want).map_err(|e| Error::io(path, "read", e))?;
    if buf.len() < want {
        return Err(Error::corrupt(
            path,
            buf.len() as u64,
            format!("file is shorter than the {len} bytes the manifest names"),
        ));
    }
    let found = check_header(path, &buf, magic)?;
    if found != id {
        return Err(Error::corrupt(path, 16, format!("header names pair {found}")));
    }
    let blocks = read_frames(path, &buf, HEADER_LEN as usize)?
        .into_iter()
        .map(|(at, p)| (at, at + FRAME_OVERHEAD..at + FRAME_OVERHEAD + p.len()))
        .collect();
    Ok((buf, blocks))
}

/// Reads a delta file's identities (its first `len` bytes).
pub(crate) fn read_delta(fs: &dyn Fs, dir: &Path, meta: &PairMeta) -> Result<HashSet<RowId>> {
    let path = dir.join(delta_name(meta.id));
    let (buf, blocks) = read_blocks(fs, &path, meta.delta_len, Magic::Delta, meta.id)?;
    let mut set = HashSet::new();
    for (at, range) in blocks {
        let mut r = Reader::new(&buf[range]);
        while !r.is_empty() {
            let id = (|| Some(RowId { table: r.u64()?, ts: r.u64()?, seq: r.u32()? }))()
                .ok_or_else(|| Error::corrupt(&path, at as u64, "malformed delta block"))?;
            set.insert(id);
        }
    }
    Ok(set)
}

/// Calls `f` for every row of a data file (its first `len` bytes); returns
/// the number of rows read.
pub(crate) fn read_data(
    fs: &dyn Fs,
    dir: &Path,
    meta: &PairMeta,
    mut f: impl FnMut(RowId, &[u8]),
) -> Result<u64> {
    let path = dir.join(data_name(meta.id));
    let (buf, blocks) = read_blocks(fs, &path, meta.data_len, Magic::Data, meta.id)?;
    let mut rows = 0;
    for (at, range) in blocks {
        let mut r = Reader::new(&buf[range]);
        while !r.is_empty() {
            let (id, data) = (|| {
                let id = RowId { table: r.u64()?, ts: r.u64()?, seq: r.u32()? };
                Some((id, r.bytes()?))
            })()
            .ok_or_else(|| Error::corrupt(&path, at as u64, "malformed data block"))?;
            f(id, data);
            rows += 1;
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(parse_pair_name(&data_name(5)), Some(5));
        assert_eq!(parse_pair_name(&delta_name(6)), Some(6));
        assert_eq!(parse_pair_name("log-0000000000000001.wal"), None);
    }
}
