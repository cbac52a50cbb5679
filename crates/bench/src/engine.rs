//! Engine micro-benchmarks: look-ups, inserts, and the update soak.

use centum_engine::{Database, Error, IndexDef, Isolation, Options, TableDef};
use centum_types::{DataType, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `centum-bench engine`.
#[derive(clap::Args)]
pub struct Args {
    /// Which benchmarks: lookup, insert, scan, soak, or all (soak is left
    /// out of all because it runs for a minute).
    #[arg(default_value = "all")]
    which: String,
    /// Rows in the look-up table.
    #[arg(long, default_value_t = 1_000_000)]
    rows: u64,
    /// Seconds each throughput measurement runs.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Seconds of the update soak.
    #[arg(long, default_value_t = 60)]
    soak_seconds: u64,
    /// Threads for the multi-threaded insert figure and the soak.
    #[arg(long, default_value_t = 2)]
    threads: usize,
}

/// Runs the chosen engine benchmarks and prints their figures.
pub fn run(args: Args) -> Result<(), Error> {
    let all = args.which == "all";
    if all || args.which == "lookup" {
        lookup(&args)?;
    }
    if all || args.which == "insert" {
        insert(&args)?;
    }
    if all || args.which == "scan" {
        scan(&args)?;
    }
    if args.which == "soak" {
        soak(&args)?;
    }
    Ok(())
}

/// Full scans of small tables, each in its own read-only transaction:
/// empty and 10-row tables with a range primary key (a scan list sized for
/// a million rows) and without any index. A scan costs what the table
/// holds, not what its scan list was sized for.
fn scan(args: &Args) -> Result<(), Error> {
    let db = Database::open(Options::default())?;
    for rows in [0i64, 10] {
        for indexed in [true, false] {
            let name = format!("scan_{rows}_{indexed}");
            let mut def =
                TableDef::new(&name).column_not_null("id", DataType::BigInt).column("v", DataType::Text);
            if indexed {
                def = def.index(IndexDef::range(&format!("{name}_pkey"), &["id"]).unique());
            }
            let t = db.create_table(def)?;
            db.run(Isolation::Snapshot, 1, |txn| {
                for i in 0..rows {
                    txn.insert(&t, vec![Value::BigInt(i), Value::Text(format!("row {i}"))])?;
                }
                Ok(())
            })?;
            let (mut n, mut seen) = (0u64, 0usize);
            let start = Instant::now();
            while start.elapsed().as_secs_f64() < args.seconds {
                for _ in 0..100 {
                    let txn = db.begin(Isolation::Snapshot)?;
                    seen += txn.scan(&t)?.count();
                    txn.commit()?;
                    n += 1;
                }
            }
            assert_eq!(seen as u64, n * rows as u64, "every row is seen once");
            let us = start.elapsed().as_secs_f64() * 1e6 / n as f64;
            let how = if indexed { "range primary key" } else { "no index" };
            println!("scan: {us:>8.2} us per full scan of a {rows}-row table ({how}), transaction included");
        }
    }
    Ok(())
}

/// A two-column table keyed by `id`: a hash index of `buckets`, or a
/// range index when none are given.
fn kv_table(db: &Database, name: &str, buckets: Option<u64>) -> Result<Arc<centum_engine::Table>, Error> {
    let key = format!("{name}_pkey");
    let index = match buckets {
        Some(b) => IndexDef::hash(&key, &["id"], b),
        None => IndexDef::range(&key, &["id"]),
    };
    db.create_table(
        TableDef::new(name)
            .column_not_null("id", DataType::BigInt)
            .column_not_null("v", DataType::BigInt)
            .index(index.unique()),
    )
}

/// A cheap pseudo-random sequence (xorshift), so key choice costs nothing.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in lo..=hi.
    pub(crate) fn between(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

fn lookup(args: &Args) -> Result<(), Error> {
    let db = Database::open(Options::default())?;
    // The hash key an in-memory schema declares, and the range key that a
    // plain PRIMARY KEY gets through SQL.
    let hash = kv_table(&db, "lookup", Some(args.rows))?;
    let range = kv_table(&db, "lookup_range", None)?;
    let load = Instant::now();
    for t in [&hash, &range] {
        for chunk in (0..args.rows).collect::<Vec<_>>().chunks(10_000) {
            db.run(Isolation::Snapshot, 1, |txn| {
                for &i in chunk {
                    txn.insert(t, vec![Value::BigInt(i as i64), Value::BigInt(i as i64 * 2)])?;
                }
                Ok(())
            })?;
        }
    }
    println!("loaded {} rows into each of two tables in {:.2}s", args.rows, load.elapsed().as_secs_f64());
    let cases = [
        (&hash, "hash", 1usize, false),
        (&hash, "hash", 100, false),
        (&hash, "hash", 8, true),
        (&hash, "hash", 100, true),
        (&range, "range", 1, false),
        (&range, "range", 100, false),
    ];
    for (t, kind, per_txn, batched) in cases {
        let index = format!("{}_pkey", t.name());
        let mut rng = Rng(0x9e3779b97f4a7c15);
        let mut found = 0u64;
        let mut n = 0u64;
        let mut keys: Vec<[Value; 1]> = Vec::with_capacity(per_txn);
        let start = Instant::now();
        while start.elapsed().as_secs_f64() < args.seconds {
            for _ in 0..(800 / per_txn).max(1) {
                let txn = db.begin(Isolation::Snapshot)?;
                if batched {
                    keys.clear();
                    keys.extend((0..per_txn).map(|_| [Value::BigInt((rng.next() % args.rows) as i64)]));
                    found += txn.get_many(t, &index, &keys)?.iter().flatten().count() as u64;
                } else {
                    for _ in 0..per_txn {
                        let k = (rng.next() % args.rows) as i64;
                        found += txn.get(t, &index, &[Value::BigInt(k)])?.is_some() as u64;
                    }
                }
                txn.commit()?;
                n += per_txn as u64;
            }
        }
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(found, n, "every key is present");
        let how = if batched { "get_many" } else { "get" };
        println!(
            "lookup: {:>10.0} point look-ups/s on 1 thread, {} rows, {kind} key ({per_txn} per read-only transaction, {how})",
            n as f64 / secs,
            args.rows
        );
    }
    Ok(())
}

fn insert_rate(threads: usize, seconds: f64) -> Result<f64, Error> {
    let db = Database::open(Options::default())?;
    let t = kv_table(&db, "ins", Some(1 << 22))?;
    let stop = Arc::new(AtomicBool::new(false));
    let total = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|th| {
            let (db, t, stop, total) = (db.clone(), t.clone(), stop.clone(), total.clone());
            std::thread::spawn(move || -> Result<(), Error> {
                let mut k = th as i64;
                let mut n = 0;
                while !stop.load(Relaxed) {
                    for _ in 0..256 {
                        let txn = db.begin(Isolation::Snapshot)?;
                        txn.insert(&t, vec![Value::BigInt(k), Value::BigInt(k)])?;
                        txn.commit()?;
                        k += threads as i64;
                    }
                    n += 256;
                }
                total.fetch_add(n, Relaxed);
                Ok(())
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Relaxed);
    for h in handles {
        h.join().map_err(|_| Error::Serialization("benchmark thread panicked"))??;
    }
    Ok(total.load(Relaxed) as f64 / start.elapsed().as_secs_f64())
}

fn insert(args: &Args) -> Result<(), Error> {
    let one = insert_rate(1, args.seconds)?;
    println!("insert: {one:>10.0} single-row insert transactions/s on 1 thread");
    let many = insert_rate(args.threads, args.seconds)?;
    println!(
        "insert: {many:>10.0} single-row insert transactions/s on {} threads ({:.2}x one thread)",
        args.threads,
        many / one
    );
    Ok(())
}

fn memory(db: &Database) -> u64 {
    db.stats().tables.iter().map(|t| t.row_bytes + t.indexes.iter().map(|i| i.bytes).sum::<u64>()).sum()
}

fn soak(args: &Args) -> Result<(), Error> {
    let db = Database::open(Options::default())?;
    let rows = 100_000u64;
    let t = kv_table(&db, "soak", Some(rows))?;
    for chunk in (0..rows).collect::<Vec<_>>().chunks(10_000) {
        db.run(Isolation::Snapshot, 1, |txn| {
            for &i in chunk {
                txn.insert(&t, vec![Value::BigInt(i as i64), Value::BigInt(0)])?;
            }
            Ok(())
        })?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let updates = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..args.threads)
        .map(|th| {
            let (db, t, stop, updates) = (db.clone(), t.clone(), stop.clone(), updates.clone());
            std::thread::spawn(move || -> Result<(), Error> {
                let mut rng = Rng(0x2545f4914f6cdd1d + th as u64);
                while !stop.load(Relaxed) {
                    let k = (rng.next() % rows) as i64;
                    db.run(Isolation::ReadCommitted, 10, |txn| {
                        if let Some(r) = txn.get(&t, "soak_pkey", &[Value::BigInt(k)])? {
                            txn.update_with(&r, |old| {
                                let v = if let Value::BigInt(v) = old[1] { v + 1 } else { 0 };
                                Some(vec![old[0].clone(), Value::BigInt(v)])
                            })?;
                        }
                        Ok(())
                    })?;
                    updates.fetch_add(1, Relaxed);
                }
                Ok(())
            })
        })
        .collect();
    let mut at_10s = 0;
    let mut max_after = 0;
    for s in 1..=args.soak_seconds {
        std::thread::sleep(Duration::from_secs(1));
        let m = memory(&db);
        if s == 10.min(args.soak_seconds) {
            at_10s = m;
        } else if s > 10 {
            max_after = max_after.max(m);
        }
        println!(
            "soak: t={s:>3}s memory={:>8.1} MiB updates={}",
            m as f64 / 1048576.0,
            updates.load(Relaxed)
        );
    }
    stop.store(true, Relaxed);
    for h in handles {
        h.join().map_err(|_| Error::Serialization("benchmark thread panicked"))??;
    }
    println!(
        "soak: memory at 10 s {:.1} MiB, max after {:.1} MiB ({:+.1}%), {} updates",
        at_10s as f64 / 1048576.0,
        max_after as f64 / 1048576.0,
        (max_after as f64 / at_10s.max(1) as f64 - 1.0) * 100.0,
        updates.load(Relaxed)
    );
    Ok(())
}
