//! Log benchmark on the real file system, with its comparators measured in
//! the same run:
//!
//! * the disk's raw fdatasync rate (4 KiB append + fdatasync in a loop);
//! * the raw sequential write rate (256 MiB in 1 MiB writes, one sync);
//! * the log's durable commits/s with 1, 2, 8 and 32 concurrent committers
//!   (records of about 100 bytes), with the flushes they needed.
//!
//! ```sh
//! cargo run --release -p centum-storage --example log_bench -- --dir DIR [--seconds 2]
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use centum_storage::{disk, Options, Record, StdFs, Storage};

struct Args {
    dir: PathBuf,
    seconds: f64,
}

fn parse_args() -> Result<Args, String> {
    let mut dir = None;
    let mut seconds = 2.0;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dir" => dir = it.next().map(PathBuf::from),
            "--seconds" => {
                seconds = it.next().and_then(|s| s.parse().ok()).ok_or("--seconds needs a number")?
            }
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Args { dir: dir.ok_or("--dir DIR is required")?, seconds })
}

struct LogRun {
    commits_s: f64,
    flushes: u64,
    commits: u64,
    p50_us: u64,
}

fn log_rate(dir: &Path, committers: u64, secs: f64) -> centum_storage::Result<LogRun> {
    let db = dir.join(format!("log-bench-{committers}"));
    let _ = std::fs::remove_dir_all(&db);
    let storage = Storage::open(Arc::new(StdFs), &db, Options::default())?.start()?;
    let stop = AtomicBool::new(false);
    let ts = AtomicU64::new(1);
    let payload = [0x42u8; 80];
    let mut lat = Vec::new();
    let before = storage.log().stats();
    let start = Instant::now();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..committers)
            .map(|_| {
                let (storage, stop, ts) = (&storage, &stop, &ts);
                s.spawn(move || {
                    let mut l = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let t = ts.fetch_add(1, Ordering::Relaxed);
                        let mut rec = Record::new(t);
                        rec.insert(1, 0, &payload);
                        let c = Instant::now();
                        if storage.commit(rec).is_err() {
                            break;
                        }
                        l.push(c.elapsed().as_micros() as u64);
                    }
                    l
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            lat.extend(h.join().unwrap_or_default());
        }
    });
    let elapsed = start.elapsed().as_secs_f64();
    let after = storage.log().stats();
    storage.close()?;
    let _ = std::fs::remove_dir_all(&db);
    lat.sort_unstable();
    let commits = after.commits - before.commits;
    Ok(LogRun {
        commits_s: commits as f64 / elapsed,
        flushes: after.flushes - before.flushes,
        commits,
        p50_us: lat.get(lat.len() / 2).copied().unwrap_or(0),
    })
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}\nusage: log_bench --dir DIR [--seconds S]");
            std::process::exit(2);
        }
    };
    if let Err(e) = std::fs::create_dir_all(&args.dir) {
        eprintln!("cannot create {}: {e}", args.dir.display());
        std::process::exit(1);
    }
    let fsync = disk::fsync_rate(&args.dir, Duration::from_secs_f64(args.seconds)).unwrap_or_else(|e| {
        eprintln!("fsync probe failed: {e}");
        std::process::exit(1)
    });
    let seq = disk::seq_write_rate(&args.dir, 256 << 20).unwrap_or_else(|e| {
        eprintln!("write probe failed: {e}");
        std::process::exit(1)
    });
    println!("directory: {}", args.dir.display());
    println!("raw 4 KiB write + fdatasync: {fsync:>10.0} /s");
    println!("raw sequential write:        {seq:>10.0} MiB/s (256 MiB in 1 MiB writes + 1 sync)");
    println!();
    // The disk's sync latency drifts (other load, device caches), so each
    // log run is paired with a raw fsync probe taken just before it.
    println!("committers  commits/s  fsync/s just before  vs fsync  flushes  commits/flush  p50 latency");
    let mut single = 0.0;
    for c in [1u64, 2, 8, 32] {
        let probe = disk::fsync_rate(&args.dir, Duration::from_secs_f64(args.seconds / 2.0)).unwrap_or(fsync);
        match log_rate(&args.dir, c, args.seconds) {
            Ok(r) => {
                if c == 1 {
                    single = r.commits_s;
                }
                println!(
                    "{c:>10}  {:>9.0}  {probe:>19.0}  {:>7.2}x  {:>7}  {:>13.1}  {:>8} us{}",
                    r.commits_s,
                    r.commits_s / probe,
                    r.flushes,
                    r.commits as f64 / r.flushes.max(1) as f64,
                    r.p50_us,
                    if c > 1 && single > 0.0 {
                        format!("  ({:.1}x one committer)", r.commits_s / single)
                    } else {
                        String::new()
                    }
                );
            }
            Err(e) => eprintln!("{c} committers: {e}"),
        }
    }
    match disk::fsync_rate(&args.dir, Duration::from_secs_f64(args.seconds)) {
        Ok(again) => println!("\nraw 4 KiB write + fdatasync, after the log runs: {again:.0} /s"),
        Err(e) => eprintln!("fsync probe failed: {e}"),
    }
}
