//! Measuring the disk a directory is on, the way the database writes, so
//! that durable figures can be read against the physical limit they run
//! into.
//!
//! - The *fsync rate*: one thread appending 4 KiB to a file and calling
//!   `fdatasync`, again and again. Every cycle grows the file, as the log
//!   does, so each sync also carries the new length. This is the ceiling
//!   of a log that syncs every commit alone; group commit beats it by
//!   sharing one sync among committers.
//! - The *sequential write rate*: a file written in 1 MiB chunks, then one
//!   `fdatasync`, the sync included in the time (without it, the figure
//!   would be the page cache's). This is the ceiling of checkpoint writing.
//!
//! ```text
//!  fsync rate:       [4K][4K][4K]...   each append followed by fdatasync
//!  sequential rate:  [1M][1M]...[1M]   one fdatasync at the end
//! ```
//!
//! Rates are in MiB (2^20 bytes) per second. The probe files are removed
//! afterwards, also when a step fails.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes appended before each `fdatasync` of the fsync rate.
const FSYNC_WRITE: usize = 4 << 10;
/// The fsync rate stops after this many cycles even if time is left (a
/// 256 MiB file): only a disk that does not really sync gets there.
const MAX_FSYNC_CYCLES: u64 = 65_536;
/// Chunk of the sequential write rate.
const CHUNK: usize = 1 << 20;
const MIB: f64 = (1 << 20) as f64;

/// What [`measure`] does.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long the fsync rate is measured (it also stops after 65,536
    /// cycles).
    pub fsync_time: Duration,
    /// Bytes written for the sequential write rate.
    pub seq_write_bytes: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options { fsync_time: Duration::from_secs(1), seq_write_bytes: 256 << 20 }
    }
}

/// The rates of one disk, with what they were measured over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskRates {
    /// `write 4 KiB at the end + fdatasync` cycles per second, one thread.
    pub fsyncs_per_sec: f64,
    /// About how long the fsync rate was measured.
    pub fsync_time: Duration,
    /// MiB per second written in 1 MiB chunks, the closing `fdatasync`
    /// included.
    pub seq_write_mb_per_sec: f64,
    /// Bytes the sequential write rate wrote.
    pub seq_write_bytes: u64,
}

/// Measures both rates of the disk under `dir`, the fsync rate first.
pub fn measure(dir: &Path, opts: &Options) -> io::Result<DiskRates> {
    Ok(DiskRates {
        fsyncs_per_sec: fsync_rate(dir, opts.fsync_time)?,
        fsync_time: opts.fsync_time,
        seq_write_mb_per_sec: seq_write_rate(dir, opts.seq_write_bytes)?,
        seq_write_bytes: opts.seq_write_bytes,
    })
}

/// `write 4 KiB at the end + fdatasync` cycles per second one thread gets
/// on a file in `dir`, over about `duration` (at least one cycle, at most
/// 65,536).
pub fn fsync_rate(dir: &Path, duration: Duration) -> io::Result<f64> {
    let mut probe = Probe::create(dir, "fsync")?;
    let buf = pattern(FSYNC_WRITE);
    let start = Instant::now();
    let mut cycles = 0u64;
    while cycles == 0 || (cycles < MAX_FSYNC_CYCLES && start.elapsed() < duration) {
        probe.file.write_all(&buf)?;
        probe.file.sync_data()?;
        cycles += 1;
    }
    Ok(cycles as f64 / start.elapsed().as_secs_f64())
}

/// MiB per second writing a file of `bytes` in `dir` in 1 MiB chunks,
/// followed by one `fdatasync` that the time includes.
pub fn seq_write_rate(dir: &Path, bytes: u64) -> io::Result<f64> {
    let mut probe = Probe::create(dir, "write")?;
    let buf = pattern(CHUNK);
    let start = Instant::now();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(CHUNK as u64) as usize;
        probe.file.write_all(&buf[..n])?;
        left -= n as u64;
    }
    probe.file.sync_data()?;
    Ok(bytes as f64 / MIB / start.elapsed().as_secs_f64())
}

/// Bytes that no file system compresses away (zeros might be).
fn pattern(len: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A probe file, removed when dropped.
struct Probe {
    file: File,
    path: PathBuf,
}

impl Probe {
    fn create(dir: &Path, what: &str) -> io::Result<Probe> {
        let path = dir.join(format!(".centum-disk-{what}-probe-{}", std::process::id()));
        let file = OpenOptions::new().write(true).create(true).truncate(true).open(&path)?;
        Ok(Probe { file, path })
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
