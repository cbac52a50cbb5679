//! `centum-bench durability`: what durability costs, read against the disk
//! it runs on, which each run measures too.
//!
//! - `commits`: durable single-row insert transactions through the embedded
//!   API with 1, 2, 8 and 32 committers, each run next to the disk's raw
//!   fsync rate probed just before it. Group commit is what lets many
//!   committers share one sync.
//! - `w4`: the checkpoint workload (W4 in `workloads.md`): 10,000 rows
//!   inserted one by one, then the table doubled by INSERT ... SELECT until
//!   it holds the target, five ranges of about 1,000 ids deleted, then a
//!   CHECKPOINT; once with checkpointing running and once with it paused
//!   during the load, then a restart (recovery) timed.

use crate::engine::Rng;
use centum_engine::storage::{
    disk, CheckpointOptions, CheckpointStats, LoadStats, LogStats, Options as StorageOptions,
};
use centum_engine::{Database, Error, IndexDef, Isolation, Options, Table, TableDef};
use centum_types::{DataType, Timestamp, Uuid, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `centum-bench durability`.
#[derive(clap::Args)]
pub struct Args {
    /// `commits`, `w4`, or `all`.
    #[arg(default_value = "all")]
    which: String,
    /// Where the data directories are made (on the disk to measure; each
    /// run's directory is removed afterwards).
    #[arg(long, default_value = "target/bench-data")]
    dir: PathBuf,
    /// Seconds each commit-rate run lasts.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Committer counts for `commits`.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 2, 8, 32])]
    committers: Vec<usize>,
    /// W4: doublings after the first 10,000 rows (10 gives 10,240,000 rows).
    #[arg(long, default_value_t = 10)]
    doublings: u32,
    /// W4: rows per INSERT ... SELECT transaction.
    #[arg(long, default_value_t = 100_000)]
    batch: usize,
}

/// Runs the chosen benchmarks and prints their figures.
pub fn run(args: Args) -> Result<(), Error> {
    std::fs::create_dir_all(&args.dir).map_err(io)?;
    let all = args.which == "all";
    if all || args.which == "commits" {
        commits(&args)?;
    }
    if all || args.which == "w4" {
        w4(&args)?;
    }
    Ok(())
}

fn io(e: std::io::Error) -> Error {
    Error::Storage { code: "58030", message: e.to_string() }
}

/// A fresh, empty directory under `base`.
fn fresh_dir(base: &Path, name: &str) -> Result<PathBuf, Error> {
    let dir = base.join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io)?;
    }
    Ok(dir)
}

fn commits(args: &Args) -> Result<(), Error> {
    println!("durable commits: single-row insert transactions, fdatasync before each acknowledgement");
    println!("data directory under {}", args.dir.display());
    let raw = disk::fsync_rate(&args.dir, Duration::from_secs(1)).map_err(io)?;
    println!("raw 4 KiB write + fdatasync: {raw:.0} /s\n");
    println!(
        "{:>10} {:>10} {:>12} {:>9} {:>10} {:>13} {:>9} {:>9}",
        "committers", "commits/s", "fsync/s", "vs fsync", "vs one", "commits/sync", "p50", "p99"
    );
    let mut single = None;
    for &n in &args.committers {
        let probe = disk::fsync_rate(&args.dir, Duration::from_millis(700)).map_err(io)?;
        let dir = fresh_dir(&args.dir, "commits")?;
        let db = Database::open(Options::durable(&dir))?;
        let t = db.create_table(
            TableDef::new("t")
                .column_not_null("id", DataType::BigInt)
                .column_not_null("v", DataType::BigInt)
                .index(IndexDef::hash("t_pkey", &["id"], 1 << 20).unique()),
        )?;
        let before = db.log_stats().unwrap_or_default();
        let stop = AtomicBool::new(false);
        let count = AtomicU64::new(0);
        let started = Instant::now();
        let mut latencies: Vec<u32> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..n)
                .map(|w| {
                    let (db, t, stop, count) = (&db, &t, &stop, &count);
                    s.spawn(move || {
                        let mut lat = Vec::new();
                        let mut i = 0i64;
                        while !stop.load(Relaxed) {
                            let id = ((w as i64) << 40) | i;
                            let at = Instant::now();
                            db.run(Isolation::Snapshot, 1, |txn| {
                                txn.insert(t, vec![Value::BigInt(id), Value::BigInt(i)])
                            })
                            .expect("commit");
                            lat.push(at.elapsed().as_micros().min(u32::MAX as u128) as u32);
                            count.fetch_add(1, Relaxed);
                            i += 1;
                        }
                        lat
                    })
                })
                .collect();
            std::thread::sleep(Duration::from_secs_f64(args.seconds));
            stop.store(true, Relaxed);
            workers.into_iter().flat_map(|w| w.join().expect("committer")).collect()
        });
        let elapsed = started.elapsed().as_secs_f64();
        let after = db.log_stats().unwrap_or_default();
        drop(db);
        std::fs::remove_dir_all(&dir).map_err(io)?;
        let rate = count.load(Relaxed) as f64 / elapsed;
        let one = *single.get_or_insert(rate);
        let LogStats { commits, flushes, .. } = after;
        let per_sync = (commits - before.commits) as f64 / (flushes - before.flushes).max(1) as f64;
        latencies.sort_unstable();
        let pct = |p: f64| latencies.get(((latencies.len() as f64 * p) as usize).min(latencies.len() - 1));
        println!(
            "{:>10} {:>10.0} {:>12.0} {:>8.2}x {:>9.2}x {:>13.1} {:>7}us {:>7}us",
            n,
            rate,
            probe,
            rate / probe,
            rate / one,
            per_sync,
            pct(0.5).copied().unwrap_or(0),
            pct(0.99).copied().unwrap_or(0)
        );
    }
    println!();
    Ok(())
}

/// The W4 table: `(id int, data uuid primary key (hash), dt timestamp)`.
fn w4_table(db: &Database, rows: u64) -> Result<Arc<Table>, Error> {
    db.create_table(
        TableDef::new("w4")
            .column_not_null("id", DataType::Integer)
            .column_not_null("data", DataType::Uuid)
            .column("dt", DataType::Timestamp)
            .index(IndexDef::hash("w4_pkey", &["data"], rows).unique()),
    )
}

/// A random uuid.
fn uuid(rng: &mut Rng) -> Value {
    Value::Uuid(Uuid::from_u64_pair(rng.next(), rng.next()))
}

/// What one W4 load did.
pub struct Load {
    pub rows: u64,
    pub single_secs: f64,
    pub double_secs: f64,
    pub delete_secs: f64,
    pub checkpoint_secs: f64,
    pub files_bytes: u64,
    pub log: LogStats,
    pub ckpt: CheckpointStats,
}

/// The W4 database's options: durable, with 256 MiB data files.
fn w4_options(dir: &Path) -> Options {
    Options {
        storage: StorageOptions {
            checkpoint: CheckpointOptions { data_file_size: 256 << 20, ..CheckpointOptions::default() },
            ..StorageOptions::default()
        },
        ..Options::durable(dir)
    }
}

/// Runs the W4 load on a new database in `dir`: 10,000 single-row
/// commits, `doublings` INSERT ... SELECT rounds committed `batch_size` rows at
/// a time, five ranges of 1,000 ids deleted, then a CHECKPOINT; with
/// checkpointing paused during the load if `paused`.
pub fn w4_load(dir: &Path, doublings: u32, batch_size: usize, paused: bool) -> Result<Load, Error> {
    let target = 10_000u64 << doublings;
    let db = Database::open(w4_options(dir))?;
    let t = w4_table(&db, target)?;
    if paused {
        db.pause_checkpoints(true)?;
    }
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let now = Timestamp(800_000_000_000_000);
    let started = Instant::now();
    for id in 1..=10_000 {
        let data = uuid(&mut rng);
        db.run(Isolation::Snapshot, 1, |txn| {
            txn.insert(&t, vec![Value::Integer(id), data.clone(), Value::Timestamp(now)])
        })?;
    }
    let single_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut rows = 10_000u64;
    for _ in 0..doublings {
        // INSERT INTO w4 (id, data, dt) SELECT id + rows, newid(), dt FROM w4:
        // the SELECT reads one snapshot, the inserts commit in batches.
        let reader = db.begin(Isolation::Snapshot)?;
        let mut batch = Vec::with_capacity(batch_size);
        let mut flush = |batch: &mut Vec<(i32, Value)>| {
            db.run(Isolation::Snapshot, 1, |txn| {
                for (id, dt) in batch.iter() {
                    txn.insert(&t, vec![Value::Integer(*id), uuid(&mut rng), dt.clone()])?;
                }
                Ok(())
            })?;
            batch.clear();
            Ok::<_, Error>(())
        };
        for r in reader.scan(&t)? {
            batch.push((r.int(0).unwrap_or(0) as i32 + rows as i32, r.get(2)));
            if batch.len() == batch_size {
                flush(&mut batch)?;
            }
        }
        flush(&mut batch)?;
        drop(reader);
        rows *= 2;
    }
    let double_secs = started.elapsed().as_secs_f64();
    // Five ranges of about 1,000 ids.
    let started = Instant::now();
    let step = rows as i64 / 5;
    db.run(Isolation::Snapshot, 1, |txn| {
        let doomed: Vec<_> = txn
            .scan(&t)?
            .filter(|r| {
                let id = r.int(0).unwrap_or(0);
                (0..5).any(|k| (k * step + 1000..k * step + 2000).contains(&id))
            })
            .collect();
        for r in doomed {
            txn.delete(&r)?;
        }
        Ok(())
    })?;
    rows -= 5 * 1000;
    let delete_secs = started.elapsed().as_secs_f64();
    if paused {
        db.pause_checkpoints(false)?;
    }
    let started = Instant::now();
    db.checkpoint()?;
    let checkpoint_secs = started.elapsed().as_secs_f64();
    let files_bytes = db.checkpoint_files().iter().map(|f| f.bytes).sum();
    let log = db.log_stats().unwrap_or_default();
    let ckpt = db.checkpoint_stats().unwrap_or_default();
    Ok(Load { rows, single_secs, double_secs, delete_secs, checkpoint_secs, files_bytes, log, ckpt })
}

/// Opens the W4 database in `dir` again (recovery of everything) and
/// closes it; returns the seconds it took to open and what recovery did.
pub fn w4_recover(dir: &Path) -> Result<(f64, LoadStats), Error> {
    let started = Instant::now();
    let db = Database::open(w4_options(dir))?;
    let secs = started.elapsed().as_secs_f64();
    Ok((secs, db.recovery_stats().cloned().unwrap_or_default()))
}

fn w4(args: &Args) -> Result<(), Error> {
    let target = 10_000u64 << args.doublings;
    println!(
        "W4 checkpoint: 10,000 single inserts, {} doublings to {target} rows, 5 x 1,000 deleted",
        args.doublings
    );
    let seq = disk::seq_write_rate(&args.dir, 512 << 20).map_err(io)?;
    let fsync = disk::fsync_rate(&args.dir, Duration::from_secs(1)).map_err(io)?;
    println!("disk: sequential write {seq:.0} MiB/s, fdatasync {fsync:.0} /s\n");
    let mut loads = Vec::new();
    for paused in [false, true] {
        let dir = fresh_dir(&args.dir, "w4")?;
        let load = w4_load(&dir, args.doublings, args.batch, paused)?;
        let label = if paused { "checkpointing paused during the load" } else { "checkpointing running" };
        println!("{label}:");
        println!(
            "  10,000 single-row commits   {:>8.2} s  {:>10.0} rows/s",
            load.single_secs,
            10_000.0 / load.single_secs
        );
        let copied = (target - 10_000) as f64;
        println!(
            "  doublings (INSERT..SELECT)  {:>8.2} s  {:>10.0} rows/s",
            load.double_secs,
            copied / load.double_secs
        );
        println!("  delete 5 ranges             {:>8.2} s", load.delete_secs);
        println!(
            "  final CHECKPOINT            {:>8.2} s  ({} log bytes, {} checkpoint-file bytes now)",
            load.checkpoint_secs, load.log.bytes, load.files_bytes
        );
        let c = &load.ckpt;
        let mib = c.bytes_written as f64 / (1 << 20) as f64;
        println!(
            "  checkpoints: {} taken, {:.2} s in all, longest {:.2} s; {mib:.0} MiB of data/delta blocks written",
            c.checkpoints,
            c.checkpoint_time.as_secs_f64(),
            c.longest_checkpoint.as_secs_f64()
        );
        let busy = c.busy.as_secs_f64().max(1e-9);
        let rate = mib / busy;
        println!(
            "  checkpoint writer: busy {busy:.2} s, {rate:.0} MiB/s while busy = {:.0}% of the disk's sequential rate",
            100.0 * rate / seq
        );
        let (secs, stats) = w4_recover(&dir)?;
        let n = stats.checkpoint_rows + stats.tail_rows;
        assert_eq!(n, load.rows, "recovery brought back another row count");
        println!(
            "  recovery: {n} rows in {secs:.2} s = {:.0} rows/s ({} pairs, {} threads, rows loaded in {:.2} s)\n",
            n as f64 / secs,
            stats.pairs,
            stats.threads,
            stats.elapsed.as_secs_f64()
        );
        std::fs::remove_dir_all(&dir).map_err(io)?;
        loads.push(load);
    }
    let on = (target - 10_000) as f64 / loads[0].double_secs;
    let off = (target - 10_000) as f64 / loads[1].double_secs;
    println!(
        "load throughput with checkpointing running: {:.0}% of paused ({on:.0} vs {off:.0} rows/s)",
        100.0 * on / off
    );
    Ok(())
}
