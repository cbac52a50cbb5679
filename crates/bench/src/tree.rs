//! The range index's tree against the ordered maps a Rust program would
//! otherwise use: `crossbeam-skiplist`'s lock-free `SkipMap` and a `std`
//! `BTreeMap` behind an `RwLock`, on the same random 8-byte keys.
//!
//! For each structure: inserts/s into an empty map on one thread and on
//! `threads` threads (the key set split between them), point look-ups/s of
//! present keys on one and on `threads` threads, look-ups/s in batches of
//! 64 keys on one thread (the tree's `get_many` overlaps the descents; the
//! others look keys up one by one), and rows/s of a full scan in key order
//! (one thread).

use centum_engine::index::{BTree, Cursor, Direction};
use crossbeam_skiplist::SkipMap;
use std::collections::BTreeMap;
use std::sync::RwLock;
use std::time::Instant;

/// Arguments of `centum-bench tree`.
#[derive(clap::Args)]
pub struct Args {
    /// Keys inserted and looked up.
    #[arg(long, default_value_t = 10_000_000)]
    keys: usize,
    /// Threads for the multi-threaded figures.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Which structures: all, or a comma-separated list of centum, skiplist, btreemap.
    #[arg(long, default_value = "all")]
    only: String,
}

/// The operations measured, over `u64` keys (the tree stores them as
/// 8 big-endian bytes, as a `bigint` index key is stored).
trait Map: Sync {
    const NAME: &'static str;
    fn new() -> Self;
    fn insert(&self, k: u64, v: u64);
    fn get(&self, k: u64) -> Option<u64>;
    /// Looks up a batch; returns how many were found.
    fn get_batch(&self, ks: &[u64]) -> usize {
        ks.iter().filter(|&&k| self.get(k).is_some()).count()
    }
    /// Visits every entry in order; returns how many.
    fn scan(&self) -> u64;
}

impl Map for BTree {
    const NAME: &'static str = "centum B+tree (OLC)";
    fn new() -> Self {
        BTree::new()
    }
    fn insert(&self, k: u64, v: u64) {
        BTree::insert(self, &k.to_be_bytes(), v);
    }
    fn get(&self, k: u64) -> Option<u64> {
        BTree::get(self, &k.to_be_bytes())
    }
    fn get_batch(&self, ks: &[u64]) -> usize {
        let keys: Vec<[u8; 8]> = ks.iter().map(|k| k.to_be_bytes()).collect();
        let mut out = Vec::with_capacity(ks.len());
        self.get_many(&keys, &mut out);
        out.iter().filter(|v| v.is_some()).count()
    }
    fn scan(&self) -> u64 {
        let mut c = Cursor::new(None, None, Direction::Forward);
        let mut n = 0u64;
        let mut sum = 0u64;
        while self.next_batch(&mut c, |v| {
            n += 1;
            sum = sum.wrapping_add(v);
            true
        }) {}
        std::hint::black_box(sum);
        n
    }
}

impl Map for SkipMap<u64, u64> {
    const NAME: &'static str = "crossbeam SkipMap";
    fn new() -> Self {
        SkipMap::new()
    }
    fn insert(&self, k: u64, v: u64) {
        SkipMap::insert(self, k, v);
    }
    fn get(&self, k: u64) -> Option<u64> {
        SkipMap::get(self, &k).map(|e| *e.value())
    }
    fn scan(&self) -> u64 {
        let mut sum = 0u64;
        let mut n = 0;
        for e in self.iter() {
            sum = sum.wrapping_add(*e.value());
            n += 1;
        }
        std::hint::black_box(sum);
        n
    }
}

impl Map for RwLock<BTreeMap<u64, u64>> {
    const NAME: &'static str = "RwLock<BTreeMap>";
    fn new() -> Self {
        RwLock::new(BTreeMap::new())
    }
    fn insert(&self, k: u64, v: u64) {
        self.write().unwrap_or_else(|p| p.into_inner()).insert(k, v);
    }
    fn get(&self, k: u64) -> Option<u64> {
        self.read().unwrap_or_else(|p| p.into_inner()).get(&k).copied()
    }
    fn scan(&self) -> u64 {
        let m = self.read().unwrap_or_else(|p| p.into_inner());
        let mut sum = 0u64;
        for v in m.values() {
            sum = sum.wrapping_add(*v);
        }
        std::hint::black_box(sum);
        m.len() as u64
    }
}

/// Random keys (splitmix64 of 0..n: distinct, uniformly spread).
fn keys(n: usize) -> Vec<u64> {
    (0..n as u64)
        .map(|i| {
            let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 30)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect()
}

/// Runs `f` over `keys` split across `threads` threads; returns ops/s.
fn parallel(keys: &[u64], threads: usize, f: impl Fn(&[u64]) + Sync) -> f64 {
    let chunk = keys.len().div_ceil(threads.max(1));
    let start = Instant::now();
    std::thread::scope(|s| {
        for part in keys.chunks(chunk) {
            let f = &f;
            s.spawn(move || f(part));
        }
    });
    keys.len() as f64 / start.elapsed().as_secs_f64()
}

/// Figures of one structure.
struct Figures {
    name: &'static str,
    insert_1: f64,
    insert_n: f64,
    get_1: f64,
    get_n: f64,
    batch_1: f64,
    scan: f64,
}

fn measure<M: Map>(keys: &[u64], lookups: &[u64], threads: usize) -> Figures {
    eprintln!("  {} ...", M::NAME);
    let m = M::new();
    let insert_1 = parallel(keys, 1, |ks| ks.iter().for_each(|&k| m.insert(k, k)));
    let get_1 = parallel(lookups, 1, |ks| {
        let hits = ks.iter().filter(|&&k| m.get(k).is_some()).count();
        assert_eq!(hits, ks.len(), "{} lost keys", M::NAME);
    });
    let get_n = parallel(lookups, threads, |ks| {
        let hits = ks.iter().filter(|&&k| m.get(k).is_some()).count();
        assert_eq!(hits, ks.len(), "{} lost keys", M::NAME);
    });
    // Batches of 64 keys per call (the tree overlaps the descents of a
    // batch; the other maps look them up one by one).
    let batch_1 = parallel(lookups, 1, |ks| {
        let hits: usize = ks.chunks(64).map(|c| m.get_batch(c)).sum();
        assert_eq!(hits, ks.len(), "{} lost keys", M::NAME);
    });
    let start = Instant::now();
    let rows = m.scan();
    let scan = rows as f64 / start.elapsed().as_secs_f64();
    assert_eq!(rows, keys.len() as u64, "{} scan count", M::NAME);
    drop(m);
    let m = M::new();
    let insert_n = parallel(keys, threads, |ks| ks.iter().for_each(|&k| m.insert(k, k)));
    drop(m);
    Figures { name: M::NAME, insert_1, insert_n, get_1, get_n, batch_1, scan }
}

/// Runs the comparison and prints a table.
pub fn run(args: Args) -> Result<(), centum_engine::Error> {
    let ks = keys(args.keys);
    // Look-ups in an order unrelated to insertion.
    let mut lookups = ks.clone();
    lookups.reverse();
    lookups.rotate_left(args.keys / 3);
    let want = |name: &str| args.only == "all" || args.only.split(',').any(|o| o == name);
    let t = args.threads;
    println!("ordered maps, {} random 8-byte keys, {} threads for the parallel columns", args.keys, t);
    let mut rows = Vec::new();
    if want("centum") {
        rows.push(measure::<BTree>(&ks, &lookups, t));
    }
    if want("skiplist") {
        rows.push(measure::<SkipMap<u64, u64>>(&ks, &lookups, t));
    }
    if want("btreemap") {
        rows.push(measure::<RwLock<BTreeMap<u64, u64>>>(&ks, &lookups, t));
    }
    println!(
        "{:<22} {:>12} {:>12} {:>12} {:>12} {:>14} {:>12}",
        "structure",
        "insert/s 1t",
        format!("insert/s {t}t"),
        "get/s 1t",
        format!("get/s {t}t"),
        "batch get/s 1t",
        "scan rows/s"
    );
    let m = |x: f64| format!("{:.2}M", x / 1e6);
    for r in &rows {
        println!(
            "{:<22} {:>12} {:>12} {:>12} {:>12} {:>14} {:>12}",
            r.name,
            m(r.insert_1),
            m(r.insert_n),
            m(r.get_1),
            m(r.get_n),
            m(r.batch_1),
            m(r.scan)
        );
    }
    if let (Some(c), true) = (rows.first(), rows.len() > 1) {
        for o in &rows[1..] {
            println!(
                "centum / {}: insert {:.1}x ({:.1}x on {t}t), get {:.1}x ({:.1}x on {t}t), batch get {:.1}x, scan {:.1}x",
                o.name,
                c.insert_1 / o.insert_1,
                c.insert_n / o.insert_n,
                c.get_1 / o.get_1,
                c.get_n / o.get_n,
                c.batch_1 / o.batch_1,
                c.scan / o.scan
            );
        }
    }
    Ok(())
}
