//! The manifest: the one small file that says what a checkpoint is.
//!
//! ```text
//! manifest file "manifest-<seq, 16 hex>.ckp"
//!   file header (magic "CNTMMANI", id = seq)
//!   one frame, payload:
//!      seq            u64
//!      replay_segment u64   recovery replays the log from here
//!      replay_offset  u64
//!      max_commit_ts  u64   largest commit timestamp before that position
//!      next_file_id   u64   pair ids below this were handed out
//!      has_catalog    u8    0 | 1
//!      catalog        u32 length + bytes   (only if has_catalog)
//!      pair_count     u32
//!      pair_count times:
//!        id u64, min_ts u64, max_ts u64, rows u64, deleted u64,
//!        data_len u64, delta_len u64
//!   nothing after the frame
//! ```
//!
//! A manifest is written as `manifest-<seq>.tmp`, synced, renamed to its
//! final name, and the directory synced; only then is anything it replaces
//! removed. The rename is atomic, so a crash leaves the old manifest, the
//! new one, or both, never a half-written one under a final name.

use std::path::{Path, PathBuf};

use crate::checkpoint::pair::PairMeta;
use crate::error::{Error, Result};
use crate::format::{check_header, header, push_frame, read_frame, Magic, Put, Reader, HEADER_LEN};
use crate::fs::{read_all, Fs};
use crate::log::LogPos;

/// The content of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Manifest {
    /// Sequence number; the highest valid one is the current manifest.
    pub seq: u64,
    /// Where recovery starts replaying the log.
    pub replay: LogPos,
    /// Largest commit timestamp of any record before `replay`.
    pub max_commit_ts: u64,
    /// Pair ids below this were handed out (never reused).
    pub next_file_id: u64,
    /// The latest catalog image before `replay`.
    pub catalog: Option<Vec<u8>>,
    /// The valid pairs.
    pub pairs: Vec<PairMeta>,
}

/// File name of manifest `seq`.
pub fn manifest_name(seq: u64) -> String {
    format!("manifest-{seq:016x}.ckp")
}

/// The sequence number in a manifest's file name.
pub fn parse_manifest_name(name: &str) -> Option<u64> {
    let hex = name.strip_prefix("manifest-")?.strip_suffix(".ckp")?;
    (hex.len() == 16).then(|| u64::from_str_radix(hex, 16).ok())?
}

impl Manifest {
    /// Encodes the whole file.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Vec::new();
        p.put_u64(self.seq);
        p.put_u64(self.replay.segment);
        p.put_u64(self.replay.offset);
        p.put_u64(self.max_commit_ts);
        p.put_u64(self.next_file_id);
        match &self.catalog {
            Some(c) => {
                p.put_u8(1);
                p.put_bytes(c);
            }
            None => p.put_u8(0),
        }
        p.put_u32(self.pairs.len() as u32);
        for m in &self.pairs {
            for v in [m.id, m.min_ts, m.max_ts, m.rows, m.deleted, m.data_len, m.delta_len] {
                p.put_u64(v);
            }
        }
        let mut file = header(Magic::Manifest, self.seq).to_vec();
        push_frame(&mut file, &p);
        file
    }

    /// Decodes a whole manifest file.
    pub fn decode(path: &Path, buf: &[u8]) -> Result<Manifest> {
        let seq = check_header(path, buf, Magic::Manifest)?;
        let at = HEADER_LEN as usize;
        let (payload, end) = read_frame(buf, at).map_err(|e| Error::corrupt(path, at as u64, e.what()))?;
        if end != buf.len() {
            return Err(Error::corrupt(path, end as u64, "bytes after the manifest"));
        }
        let bad = || Error::corrupt(path, at as u64, "malformed manifest");
        let mut r = Reader::new(payload);
        let mut m = (|| {
            let mut m = Manifest {
                seq: r.u64()?,
                replay: LogPos { segment: r.u64()?, offset: r.u64()? },
                max_commit_ts: r.u64()?,
                next_file_id: r.u64()?,
                catalog: None,
                pairs: Vec::new(),
            };
            m.catalog = match r.u8()? {
                0 => None,
                1 => Some(r.bytes()?.to_vec()),
                _ => return None,
            };
            Some(m)
        })()
        .ok_or_else(bad)?;
        let count = r.u32().ok_or_else(bad)? as usize;
        if count > payload.len() / 56 {
            return Err(bad());
        }
        for _ in 0..count {
            let pair = (|| {
                Some(PairMeta {
                    id: r.u64()?,
                    min_ts: r.u64()?,
                    max_ts: r.u64()?,
                    rows: r.u64()?,
                    deleted: r.u64()?,
                    data_len: r.u64()?,
                    delta_len: r.u64()?,
                })
            })()
            .ok_or_else(bad)?;
            m.pairs.push(pair);
        }
        if !r.is_empty() || m.seq != seq {
            return Err(bad());
        }
        Ok(m)
    }

    /// Writes the manifest durably: temp file, fdatasync, rename, directory
    /// sync. Returns its path.
    pub fn write(&self, fs: &dyn Fs, dir: &Path) -> Result<PathBuf> {
        let tmp = dir.join(format!("manifest-{:016x}.tmp", self.seq));
        let path = dir.join(manifest_name(self.seq));
        let file = fs.create(&tmp).map_err(|e| Error::io(&tmp, "create", e))?;
        file.write_at(0, &self.encode()).map_err(|e| Error::io(&tmp, "write", e))?;
        file.sync_data().map_err(|e| Error::io(&tmp, "fdatasync", e))?;
        fs.rename(&tmp, &path).map_err(|e| Error::io(&tmp, "rename", e))?;
        fs.sync_dir(dir).map_err(|e| Error::io(dir, "sync directory", e))?;
        Ok(path)
    }

    /// Reads and checks a manifest file.
    pub fn read(fs: &dyn Fs, path: &Path) -> Result<Manifest> {
        let file = fs.open(path).map_err(|e| Error::io(path, "open", e))?;
        let buf = read_all(file.as_ref()).map_err(|e| Error::io(path, "read", e))?;
        Manifest::decode(path, &buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_round_trips_and_refuses_damage() {
        let m = Manifest {
            seq: 3,
            replay: LogPos { segment: 2, offset: 99 },
            max_commit_ts: 77,
            next_file_id: 9,
            catalog: Some(b"cat".to_vec()),
            pairs: vec![PairMeta::empty(4), PairMeta::empty(5)],
        };
        let p = Path::new("m");
        let bytes = m.encode();
        assert_eq!(Manifest::decode(p, &bytes).unwrap(), m);
        for i in 0..bytes.len() * 8 {
            let mut bad = bytes.clone();
            bad[i / 8] ^= 1 << (i % 8);
            assert!(Manifest::decode(p, &bad).is_err(), "flip {i} accepted");
        }
        for cut in 0..bytes.len() {
            assert!(Manifest::decode(p, &bytes[..cut]).is_err());
        }
        assert_eq!(parse_manifest_name(&manifest_name(3)), Some(3));
    }
}
