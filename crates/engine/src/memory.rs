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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

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

/// A size as PostgreSQL prints one (`1GB`, `512MB`, `1536kB`), exact:
/// it reads back as the same size.
pub fn show_size(bytes: usize) -> String {
    for (unit, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{}{unit}", bytes / size);
        }
    }
    format!("{bytes}B")
}

/// A size for people to read: a whole number of the largest unit it
/// reaches where it is one, else rounded to a tenth of it (`901.9kB`).
pub fn pretty_size(bytes: usize) -> String {
    match UNITS.iter().find(|(_, size)| bytes >= *size) {
        Some((unit, size)) if bytes.is_multiple_of(*size) => format!("{}{unit}", bytes / size),
        Some((unit, size)) => format!("{:.1}{unit}", bytes as f64 / *size as f64),
        None => format!("{bytes}B"),
    }
}

const UNITS: [(&str, usize); 4] = [("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)];

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
/// `limit`; `counted` gives the bytes of every table's versions and
/// indexes (see [`in_use`]).
#[inline]
pub(crate) fn admit(
    limit: Option<usize>,
    credit: &Credit,
    bytes: usize,
    counted: impl FnOnce() -> usize,
) -> Result<()> {
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
    let used = in_use(credit, limit, counted);
    warn_near(&PROCESS_WARNED, used, limit, || "the server".to_string());
    if used > limit {
        // The next version checks again rather than waiting out a window.
        SINCE_CHECK.with(|s| s.set(CHECK_EVERY));
        return Err(Error::OutOfMemory { limit, used, table: None });
    }
    Ok(())
}

/// What [`in_use`] remembers between checks: one per database, whose
/// tables it counts.
#[derive(Default)]
pub(crate) struct Credit {
    /// The most bytes of versions and indexes counted while the process
    /// was over its limit, less what the allocator has since given back.
    peak_counted: AtomicUsize,
    /// The resident set at the last check.
    last_resident: AtomicUsize,
}

/// The memory in use as the limit counts it: the resident set, less the
/// memory the engine has freed and the allocator keeps for reuse.
///
/// Deleted rows, once collected, go back to the allocator, which keeps
/// most of that memory for the next allocations rather than returning it
/// to the operating system: the resident set stays where it was, and a
/// limit on it alone would refuse inserts for good once it was reached.
/// So above the limit the engine also counts what it holds itself
/// (`counted`: versions and indexes); the drop of that figure from its
/// peak is memory new rows will reuse, and is taken off. What the
/// allocator does return shows as a smaller resident set, and is taken
/// off the peak, so it is not credited twice. The credit assumes freed
/// memory fits new rows; where it does not (rows of another size, memory
/// freed into another thread's heap), the resident set grows past the
/// limit, but never past a quarter over it: there the credit stops.
pub(crate) fn in_use(credit: &Credit, limit: usize, counted: impl FnOnce() -> usize) -> usize {
    let Some(resident) = resident_bytes() else { return counted() };
    let last = credit.last_resident.swap(resident, Relaxed);
    if resident < last {
        let returned = last - resident;
        let _ = credit.peak_counted.fetch_update(Relaxed, Relaxed, |p| Some(p.saturating_sub(returned)));
    }
    // Past a quarter over the limit, no credit: the resident set is
    // bounded whatever the allocator does with freed memory.
    if resident <= limit || resident > limit + limit / 4 {
        return resident;
    }
    let now = counted();
    let peak = credit.peak_counted.fetch_max(now, Relaxed).max(now);
    resident - (peak - now).min(resident)
}

/// Whether the process-wide 80% warning was logged.
static PROCESS_WARNED: AtomicBool = AtomicBool::new(false);

/// Logs a warning the first time `used` passes 80% of `limit`, naming
/// `what`; once use falls under 70% again, the next pass warns again.
#[inline]
pub(crate) fn warn_near(warned: &AtomicBool, used: usize, limit: usize, what: impl FnOnce() -> String) {
    let high = used as u128 * 10 >= limit as u128 * 8;
    if high && !warned.load(Relaxed) {
        if !warned.swap(true, Relaxed) {
            tracing::warn!(
                "{} uses {} of its memory limit of {} ({}%); past the limit, inserts and updates fail with 53200",
                what(),
                pretty_size(used),
                pretty_size(limit),
                used as u128 * 100 / limit.max(1) as u128
            );
        }
    } else if !high && used as u128 * 10 < limit as u128 * 7 && warned.load(Relaxed) {
        warned.store(false, Relaxed);
    }
}

/// Physical memory, where the system tells: the smaller of the machine's
/// (`MemTotal`) and the cgroup's limit (`memory.max`).
pub fn physical_bytes() -> Option<usize> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line["MemTotal:".len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
    let total = kib << 10;
    let cgroup =
        std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok().and_then(|t| t.trim().parse().ok());
    Some(cgroup.map_or(total, |c: usize| c.min(total)))
}

/// The share of physical memory the server takes by default: the rest is
/// left to the operating system, its page cache and other programs.
pub const DEFAULT_SHARE_PERCENT: usize = 80;

/// Reads a memory limit: a size (see [`parse_size`]) or a percentage of
/// physical memory (`75%`).
pub fn parse_limit(text: &str) -> std::result::Result<usize, String> {
    let t = text.trim();
    match t.strip_suffix('%') {
        Some(p) => {
            let p: f64 = p.trim().parse().map_err(|_| format!("invalid percentage \"{text}\""))?;
            if !(p > 0.0 && p <= 100.0) {
                return Err(format!("a memory limit of \"{text}\" is not between 0% and 100%"));
            }
            let total = physical_bytes().ok_or("physical memory is unknown here; give the limit in bytes")?;
            Ok((total as f64 * p / 100.0) as usize)
        }
        None => parse_size(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_and_print_as_postgresql_writes_them() {
        assert_eq!(parse_size("4GB"), Ok(4 << 30));
        assert_eq!(parse_size("512 mb"), Ok(512 << 20));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("lots").is_err() && parse_size("-5").is_err());
        assert_eq!(show_size(3 << 20), "3MB");
        assert_eq!(show_size(1_500_000), "1500000B", "exact, so it reads back");
        assert_eq!(pretty_size(1 << 30), "1GB");
        assert_eq!(pretty_size(1_048_576 + 307_200), "1.3MB");
        assert_eq!(pretty_size(900), "900B");
    }

    #[test]
    fn a_limit_may_be_a_share_of_physical_memory() {
        assert_eq!(parse_limit("300MB"), Ok(300 << 20));
        assert!(parse_limit("0%").is_err() && parse_limit("101%").is_err() && parse_limit("x%").is_err());
        if let Some(total) = physical_bytes() {
            let half = parse_limit("50%").unwrap();
            assert!(half.abs_diff(total / 2) <= 1, "{half} of {total}");
        }
    }

    #[test]
    fn the_warning_fires_once_past_80_percent_and_again_after_falling_under_70() {
        let warned = AtomicBool::new(false);
        warn_near(&warned, 79, 100, || "t".into());
        assert!(!warned.load(Relaxed));
        warn_near(&warned, 80, 100, || "t".into());
        assert!(warned.load(Relaxed));
        warn_near(&warned, 75, 100, || unreachable!("no second warning while still high"));
        assert!(warned.load(Relaxed));
        warn_near(&warned, 69, 100, || "t".into());
        assert!(!warned.load(Relaxed));
    }
}
