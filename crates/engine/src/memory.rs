//! Memory governance: how much memory the process holds, and the limit
//! past which the engine refuses to create row versions.
//!
//! The limit (`Options::memory_limit`) bounds the memory the whole
//! process holds, as the operating system counts it (the resident set):
//! row versions, index nodes, statements' buffers, sessions, and what the
//! allocator keeps after a free, which is what an out-of-memory killer
//! goes by. Where the system does not say, the engine counts what it can
//! see itself, the bytes of row versions. Past the limit, inserts and
//! updates fail with 53200 while reads, deletes, rollbacks and the
//! garbage collector go on, so memory can be freed again, as SQL Server
//! does when a memory-optimized table's resource pool is full.
//!
//! Reading the figure costs a system call, so each thread reads it once
//! per [`CHECK_EVERY`] bytes of versions it creates: the limit can be
//! passed by at most that much per writing thread (and by whatever one
//! statement buffers, which `statement_mem` bounds).

use crate::error::{Error, Result};
use std::cell::Cell;

/// Bytes of new versions a thread creates between two checks.
pub const CHECK_EVERY: usize = 256 << 10;

thread_local! {
    static SINCE_CHECK: Cell<usize> = const { Cell::new(0) };
}

/// The memory the process holds (its resident set), where the operating
/// system tells (Linux: `VmRSS` in `/proc/self/status`).
pub fn resident_bytes() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: usize = line["VmRSS:".len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib << 10)
}

/// A size as PostgreSQL prints one (`1GB`, `512MB`, `1536kB`).
pub fn show_size(bytes: usize) -> String {
    for (unit, size) in [("TB", 1usize << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)] {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{}{unit}", bytes / size);
        }
    }
    format!("{bytes}B")
}

/// Reads a size as PostgreSQL settings write one: bytes, or a number with
/// `kB`, `MB`, `GB` or `TB`.
pub fn parse_size(text: &str) -> std::result::Result<usize, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || format!("invalid size \"{text}\" (a number of bytes, or with kB, MB, GB or TB)");
    let n: usize = num.parse().map_err(|_| bad())?;
    let scale: usize = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1 << 10,
        "mb" => 1 << 20,
        "gb" => 1 << 30,
        "tb" => 1 << 40,
        _ => return Err(bad()),
    };
    n.checked_mul(scale).ok_or_else(bad)
}

/// Decides whether a new version of `bytes` may be created under
/// `limit`; `versions` gives the bytes of all row versions, for a program
/// that does not count its heap.
#[inline]
pub(crate) fn admit(limit: Option<usize>, bytes: usize, versions: impl FnOnce() -> usize) -> Result<()> {
    let Some(limit) = limit else { return Ok(()) };
    let due = SINCE_CHECK.with(|s| {
        let v = s.get() + bytes;
        if v >= CHECK_EVERY {
            s.set(0);
            true
        } else {
            s.set(v);
            false
        }
    });
    if !due {
        return Ok(());
    }
    let used = resident_bytes().unwrap_or_else(versions);
    if used > limit {
        // The next version checks again rather than waiting out a window.
        SINCE_CHECK.with(|s| s.set(CHECK_EVERY));
        return Err(Error::OutOfMemory { limit, used });
    }
    Ok(())
}
