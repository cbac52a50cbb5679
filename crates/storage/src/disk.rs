//! Measuring the disk a directory is on, so that durable figures can be
//! read against the physical limit they run into:
//!
//! * the fsync rate: 512-byte appends to one file, each followed by
//!   `fdatasync`, as fast as one thread can (the ceiling of a log that
//!   syncs every commit alone);
//! * the sequential write rate: a file written in 1 MiB chunks and synced
//!   once (the ceiling of checkpoint writing).
//!
//! Both go through [`StdFs`], like the database's own files, and remove
//! their probe file afterwards.

use crate::fs::{Fs, StdFs};
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

/// `fdatasync`s per second of 512-byte appends, over about `duration`.
pub fn fsync_rate(dir: &Path, duration: Duration) -> io::Result<f64> {
    let path = dir.join("fsync-probe");
    let f = StdFs.create(&path)?;
    let buf = [0xA5u8; 512];
    let start = Instant::now();
    let mut n = 0u64;
    while n == 0 || start.elapsed() < duration {
        f.write_at(n * 512, &buf)?;
        f.sync_data()?;
        n += 1;
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    drop(f);
    StdFs.remove(&path)?;
    Ok(rate)
}

/// MiB per second writing `bytes` (rounded up to whole MiB) in 1 MiB
/// writes followed by one `fdatasync`, the sync included in the time.
pub fn seq_write_rate(dir: &Path, bytes: u64) -> io::Result<f64> {
    let path = dir.join("write-probe");
    let f = StdFs.create(&path)?;
    let buf = vec![0x5Au8; 1 << 20];
    let mib = bytes.div_ceil(1 << 20).max(1);
    let start = Instant::now();
    for i in 0..mib {
        f.write_at(i << 20, &buf)?;
    }
    f.sync_data()?;
    let rate = mib as f64 / start.elapsed().as_secs_f64();
    drop(f);
    StdFs.remove(&path)?;
    Ok(rate)
}
