//! `centum-bench disk`: the fsync and sequential write rates of the disk
//! under a directory (see `centum_storage::disk`), to read durable figures
//! against.

use centum_engine::storage::disk::{measure, Options};
use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `centum-bench disk`.
#[derive(clap::Args)]
pub struct Args {
    /// The directory whose disk is measured (created if missing).
    #[arg(long, default_value = "target/bench-data")]
    dir: PathBuf,
    /// Seconds the fsync rate is measured for.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// MiB written for the sequential write rate.
    #[arg(long, default_value_t = 256)]
    mib: u64,
}

/// Measures the disk under `args.dir` and prints both rates.
pub fn run(args: Args) -> Result<(), centum_engine::Error> {
    let err = |message: String| centum_engine::Error::Storage { code: "58030", message };
    let io = |e: io::Error| err(e.to_string());
    let fsync_time = Duration::try_from_secs_f64(args.seconds).map_err(|e| err(format!("--seconds: {e}")))?;
    let seq_write_bytes = args.mib.checked_mul(1 << 20).ok_or_else(|| err("--mib: too large".into()))?;
    std::fs::create_dir_all(&args.dir).map_err(io)?;
    let opts = Options { fsync_time, seq_write_bytes };
    println!("disk under {}", args.dir.display());
    let r = measure(&args.dir, &opts).map_err(io)?;
    println!(
        "fsync rate:            {:>8.0} /s     (write 4 KiB at the end + fdatasync, one thread, {:.1} s; {:.3} ms each)",
        r.fsyncs_per_sec,
        r.fsync_time.as_secs_f64(),
        1e3 / r.fsyncs_per_sec,
    );
    println!(
        "sequential write rate: {:>8.0} MiB/s  (1 MiB writes of {} MiB, then one fdatasync)",
        r.seq_write_mb_per_sec,
        r.seq_write_bytes >> 20,
    );
    Ok(())
}
