//! Byte-level building blocks shared by every file this crate writes: the
//! 32-byte file header, the CRC32C-checked frame, and little-endian
//! encoding helpers.
//!
//! ```text
//! file header (32 bytes)
//!   0  magic     [u8; 8]   "CNTMLOG\0" | "CNTMDATA" | "CNTMDLTA" | "CNTMMANI"
//!   8  version   u32       FORMAT_VERSION
//!  12  flags     u32       0
//!  16  id        u64       segment id | pair id | manifest sequence
//!  24  reserved  u32       0
//!  28  crc       u32       CRC32C of bytes 0..28
//!
//! frame
//!   0  len       u32       payload length
//!   4  crc       u32       CRC32C of the 4 length bytes, then the payload
//!   8  payload   [u8; len]
//! ```
//!
//! All integers are little-endian. A frame's CRC covers its length, so a
//! damaged length is caught as surely as damaged payload.

use std::path::Path;

use crate::error::{Error, Result};

/// The on-disk format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Length of every file header.
pub const HEADER_LEN: u64 = 32;
/// Length of a frame's length + CRC prefix.
pub const FRAME_OVERHEAD: usize = 8;
/// Frames longer than this are refused as corrupt (no record is this big).
pub const MAX_FRAME: usize = 1 << 30;

/// The kinds of file, by their magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Magic {
    /// A redo log segment.
    Log,
    /// A checkpoint data file.
    Data,
    /// A checkpoint delta file.
    Delta,
    /// A manifest.
    Manifest,
}

impl Magic {
    fn bytes(self) -> &'static [u8; 8] {
        match self {
            Magic::Log => b"CNTMLOG\0",
            Magic::Data => b"CNTMDATA",
            Magic::Delta => b"CNTMDLTA",
            Magic::Manifest => b"CNTMMANI",
        }
    }
}

/// Encodes a file header.
pub fn header(magic: Magic, id: u64) -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[0..8].copy_from_slice(magic.bytes());
    h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h[16..24].copy_from_slice(&id.to_le_bytes());
    let crc = crc32c::crc32c(&h[0..28]);
    h[28..32].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Checks a file header and returns its id.
pub fn check_header(file: &Path, bytes: &[u8], magic: Magic) -> Result<u64> {
    if bytes.len() < HEADER_LEN as usize {
        return Err(Error::corrupt(file, bytes.len() as u64, "file shorter than its header"));
    }
    let h = &bytes[..HEADER_LEN as usize];
    if crc32c::crc32c(&h[0..28]) != u32_at(h, 28) {
        return Err(Error::corrupt(file, 0, "header CRC mismatch"));
    }
    if &h[0..8] != magic.bytes() {
        return Err(Error::corrupt(file, 0, format!("not a {magic:?} file")));
    }
    let version = u32_at(h, 8);
    if version != FORMAT_VERSION {
        return Err(Error::corrupt(
            file,
            8,
            format!("format version {version}, this build reads {FORMAT_VERSION}"),
        ));
    }
    Ok(u64_at(h, 16))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Starts a frame in `buf`: reserves the prefix and returns where it is, for
/// [`end_frame`].
pub fn begin_frame(buf: &mut Vec<u8>) -> usize {
    let at = buf.len();
    buf.extend_from_slice(&[0u8; FRAME_OVERHEAD]);
    at
}

/// Finishes the frame begun at `at`: fills in its length and CRC.
pub fn end_frame(buf: &mut [u8], at: usize) {
    let end = buf.len();
    seal_frame(&mut buf[..end], at, end);
}

/// Finishes the frame that occupies `buf[at..end]`, with frames after it.
pub fn seal_frame(buf: &mut [u8], at: usize, end: usize) {
    let len = (end - at - FRAME_OVERHEAD) as u32;
    buf[at..at + 4].copy_from_slice(&len.to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&len.to_le_bytes()), &buf[at + FRAME_OVERHEAD..end]);
    buf[at + 4..at + 8].copy_from_slice(&crc.to_le_bytes());
}

/// Appends a whole frame holding `payload`.
pub fn push_frame(buf: &mut Vec<u8>, payload: &[u8]) {
    let at = begin_frame(buf);
    buf.extend_from_slice(payload);
    end_frame(buf, at);
}

/// Why no frame could be read at an offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The bytes end inside the frame.
    Short,
    /// The length is impossible or the CRC does not match.
    Bad(&'static str),
}

impl FrameError {
    /// Describes the problem for an error message.
    pub fn what(&self) -> &'static str {
        match self {
            FrameError::Short => "frame runs past the end of the file",
            FrameError::Bad(w) => w,
        }
    }
}

/// Reads the frame at `at` in `buf`; returns its payload and the offset just
/// after it.
pub fn read_frame(buf: &[u8], at: usize) -> Result<(&[u8], usize), FrameError> {
    if buf.len() < at + FRAME_OVERHEAD {
        return Err(FrameError::Short);
    }
    let len = u32_at(buf, at) as usize;
    if len > MAX_FRAME {
        return Err(FrameError::Bad("frame length out of range"));
    }
    let end = at + FRAME_OVERHEAD + len;
    if buf.len() < end {
        return Err(FrameError::Short);
    }
    let payload = &buf[at + FRAME_OVERHEAD..end];
    let crc = crc32c::crc32c_append(crc32c::crc32c(&buf[at..at + 4]), payload);
    if crc != u32_at(buf, at + 4) {
        return Err(FrameError::Bad("frame CRC mismatch"));
    }
    Ok((payload, end))
}

/// Frames read from a buffer: each one's offset and payload.
pub type Frames<'a> = Vec<(usize, &'a [u8])>;

/// Reads every frame of `buf` from `at` to its end, each with its offset;
/// a short or bad frame fails with its offset (for buffers whose valid
/// length is known: a record's frames, an image).
pub fn split_frames(buf: &[u8], at: usize) -> std::result::Result<Frames<'_>, (usize, FrameError)> {
    let mut out = Vec::new();
    let mut pos = at;
    while pos < buf.len() {
        let (payload, next) = read_frame(buf, pos).map_err(|e| (pos, e))?;
        out.push((pos, payload));
        pos = next;
    }
    Ok(out)
}

/// [`split_frames`] for a file: a short or bad frame is corruption of
/// `file` (checkpoint files and manifests).
pub fn read_frames<'a>(file: &Path, buf: &'a [u8], at: usize) -> Result<Frames<'a>> {
    split_frames(buf, at).map_err(|(pos, e)| Error::corrupt(file, pos as u64, e.what()))
}

/// Little-endian encoding into a `Vec<u8>`.
pub trait Put {
    /// Appends a `u8`.
    fn put_u8(&mut self, v: u8);
    /// Appends a `u32`.
    fn put_u32(&mut self, v: u32);
    /// Appends a `u64`.
    fn put_u64(&mut self, v: u64);
    /// Appends a `u32` length, then the bytes.
    fn put_bytes(&mut self, v: &[u8]);
}

impl Put for Vec<u8> {
    fn put_u8(&mut self, v: u8) {
        self.push(v);
    }
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_bytes(&mut self, v: &[u8]) {
        self.put_u32(v.len() as u32);
        self.extend_from_slice(v);
    }
}

/// Little-endian decoding from a slice; every read fails cleanly (`None`)
/// past the end instead of panicking.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Reads `buf` from its start.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// True when every byte was consumed.
    pub fn is_empty(&self) -> bool {
        self.pos == self.buf.len()
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    /// A `u8`.
    pub fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    /// A `u32`.
    pub fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|b| u32_at(b, 0))
    }

    /// A `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|b| u64_at(b, 0))
    }

    /// A `u32` length and that many bytes.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_catch_damage() {
        let mut buf = Vec::new();
        push_frame(&mut buf, b"abc");
        push_frame(&mut buf, b"");
        let (p, next) = read_frame(&buf, 0).unwrap();
        assert_eq!(p, b"abc");
        let (p, end) = read_frame(&buf, next).unwrap();
        assert_eq!((p, end), (&b""[..], buf.len()));
        for i in 0..buf.len() * 8 {
            let mut bad = buf.clone();
            bad[i / 8] ^= 1 << (i % 8);
            let first = read_frame(&bad, 0);
            let second = first.clone().and_then(|(_, n)| read_frame(&bad, n));
            assert!(first.is_err() || second.is_err(), "flip {i} undetected");
        }
        assert_eq!(read_frame(&buf[..5], 0), Err(FrameError::Short));
    }

    #[test]
    fn headers_check_magic_version_and_crc() {
        let p = Path::new("f");
        let h = header(Magic::Data, 7);
        assert_eq!(check_header(p, &h, Magic::Data).unwrap(), 7);
        assert!(check_header(p, &h, Magic::Delta).is_err());
        assert!(check_header(p, &h[..31], Magic::Data).is_err());
        let mut v2 = h;
        v2[8] = 2;
        let c = crc32c::crc32c(&v2[0..28]);
        v2[28..32].copy_from_slice(&c.to_le_bytes());
        let e = check_header(p, &v2, Magic::Data).unwrap_err();
        assert!(e.to_string().contains("format version 2"), "{e}");
    }
}
