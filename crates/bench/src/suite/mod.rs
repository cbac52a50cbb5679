//! `centum-bench suite`: the seeds' workloads (W1-W6 in `workloads.md`),
//! a mixed read-write OLTP transaction (W7), and Tarantool and the cost of
//! a bare loopback request beside Centum and PostgreSQL (W8),
//! each run against Centum and against the systems a user would pick
//! instead, in one run on one machine, so that the figure that counts is a
//! ratio.
//!
//! The run sets up its comparators itself: a PostgreSQL cluster
//! initialised in a directory of its own on a free loopback port (durable
//! commits), SQLite through rusqlite (WAL with `synchronous=FULL`, and
//! `:memory:`), and Centum both embedded (W3, W4) and as a `centum serve`
//! process (W1, W2, W5, W6, W7, W8), and for W8 Tarantool and
//! `redis-server` (installed from Debian's packages when missing and
//! possible, else skipped with the reason). It measures the machine too: the fsync rate
//! and sequential write rate of the data directory's disk, so durable
//! figures can be read against the physical limit.
//!
//! Every workload checks its results after it runs (row counts, balances,
//! integrity); a failed check fails the run. Nothing asserts on speed.
//! `--quick` runs everything at a small scale in a few minutes (the CI
//! smoke run); the default full mode runs the scales below. The run
//! writes `results.json`, `results.csv`, a PNG per plot and
//! `BENCHMARKS.md` into `--out`.

mod driver;
mod peers;
mod pgbench;
mod plans;
mod plot;
mod report;
mod servers;
mod w1;
mod w2;
mod w3;
mod w4;
mod w5;
mod w6;
mod w7;
mod w8;
mod w9;

use report::Report;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The suite's error: any failure, as text.
pub type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Options of `centum-bench suite`.
#[derive(clap::Args)]
pub struct Args {
    /// Workloads to run: w1 ... w9, or all.
    #[arg(value_delimiter = ',', default_value = "all")]
    workloads: Vec<String>,
    /// Small scale, a few minutes in all: the CI smoke run.
    #[arg(long)]
    quick: bool,
    /// Where results.json, results.csv, the plots and BENCHMARKS.md go.
    #[arg(long, default_value = "target/bench-results")]
    out: PathBuf,
    /// Where the data directories are made; its disk is the one measured.
    #[arg(long, default_value = "target/bench-data")]
    dir: PathBuf,
    /// The `centum` server binary (default: the one beside this program).
    #[arg(long)]
    centum: Option<PathBuf>,
    /// The directory with PostgreSQL's initdb, pg_ctl and pgbench
    /// (default: the newest /usr/lib/postgresql/*/bin).
    #[arg(long)]
    pg_bin: Option<PathBuf>,
    /// W2: seconds each pgbench run lasts, instead of the mode's.
    #[arg(long)]
    w2_seconds: Option<u64>,
    /// W4: doublings after the first 10,000 rows, instead of the mode's
    /// (12 is the seed's 41 million rows).
    #[arg(long)]
    w4_doublings: Option<u32>,
    /// W5: rounds (the vault ends with rounds x (rounds + 1) / 2 objects),
    /// instead of the mode's.
    #[arg(long)]
    w5_rounds: Option<u64>,
}

/// The scale of each workload in one mode.
pub struct Scale {
    pub quick: bool,
    /// W1: client counts; iterations per client (each 20 orders); warm-up
    /// iterations.
    pub w1_clients: Vec<usize>,
    pub w1_iterations: u64,
    pub w1_warmup: u64,
    /// W2: pgbench scale factor; seconds per run; client counts.
    pub w2_scale: u32,
    pub w2_seconds: u64,
    pub w2a_clients: Vec<usize>,
    pub w2b_clients: Vec<usize>,
    /// W3: loops per operation.
    pub w3_loops: u64,
    /// W4: doublings after the first 10,000 rows.
    pub w4_doublings: u32,
    /// W5: rounds (round m works on m objects).
    pub w5_rounds: u64,
    /// W6: warehouses, items, customers per district, client counts, new
    /// orders per client.
    pub w6_warehouses: i32,
    pub w6_items: i32,
    pub w6_customers: i32,
    pub w6_clients: Vec<usize>,
    pub w6_iterations: u64,
    /// W7: tables, rows per table, client counts, transactions per client
    /// count (split among the clients), and the fewest per client.
    pub w7_tables: usize,
    pub w7_rows: i32,
    pub w7_clients: Vec<usize>,
    pub w7_transactions: u64,
    pub w7_min_per_client: u64,
}

impl Scale {
    fn new(quick: bool) -> Scale {
        if quick {
            Scale {
                quick,
                w1_clients: vec![1, 4],
                w1_iterations: 5,
                w1_warmup: 1,
                w2_scale: 1,
                w2_seconds: 2,
                w2a_clients: vec![2, 8],
                w2b_clients: vec![1, 8],
                w3_loops: 1_000,
                w4_doublings: 3,
                w5_rounds: 12,
                w6_warehouses: 1,
                w6_items: 2_000,
                w6_customers: 100,
                w6_clients: vec![1, 4],
                w6_iterations: 50,
                w7_tables: 2,
                w7_rows: 2_000,
                w7_clients: vec![1, 4],
                w7_transactions: 200,
                w7_min_per_client: 20,
            }
        } else {
            Scale {
                quick,
                w1_clients: vec![1, 8, 32],
                w1_iterations: 150,
                w1_warmup: 5,
                w2_scale: 10,
                w2_seconds: 10,
                w2a_clients: vec![2, 4, 8, 16, 32],
                w2b_clients: vec![1, 8, 32],
                w3_loops: 50_000,
                w4_doublings: 10,
                w5_rounds: 250,
                w6_warehouses: 4,
                w6_items: 100_000,
                w6_customers: 3_000,
                w6_clients: vec![1, 2, 4, 8, 16],
                w6_iterations: 2_000,
                w7_tables: 4,
                w7_rows: 100_000,
                w7_clients: vec![1, 4, 16, 64],
                w7_transactions: 8_000,
                w7_min_per_client: 100,
            }
        }
    }
}

/// What the workloads share: the scale, where things live, and the report.
pub struct Ctx {
    pub scale: Scale,
    pub dir: PathBuf,
    pub pg_bin: PathBuf,
    pub centum_bin: PathBuf,
    pub report: Report,
}

impl Ctx {
    /// A fresh PostgreSQL cluster.
    pub fn postgres(&self) -> Res<servers::Postgres> {
        self.postgres_with(servers::CONNECTIONS)
    }

    /// A fresh PostgreSQL cluster accepting `connections` clients.
    pub fn postgres_with(&self, connections: usize) -> Res<servers::Postgres> {
        let bar = driver::phase("PostgreSQL: initdb and start");
        let pg = servers::Postgres::start(&self.pg_bin, &self.dir.join("postgres"), connections);
        bar.finish_and_clear();
        pg
    }

    /// A fresh Centum server.
    pub fn centum(&self) -> Res<servers::Centum> {
        self.centum_with(servers::CONNECTIONS)
    }

    /// A fresh Centum server accepting `connections` clients.
    pub fn centum_with(&self, connections: usize) -> Res<servers::Centum> {
        servers::Centum::start(&self.centum_bin, &self.dir.join("centum"), connections)
    }

    /// PostgreSQL's pgbench.
    pub fn pgbench(&self) -> Res<PathBuf> {
        Ok(self.pg_bin.join("pgbench"))
    }

    /// Adds one (clients, value) point to a throughput-by-clients plot.
    pub fn point(&mut self, plot: &str, title: &str, name: &str, clients: usize, value: f64) {
        let series = &mut self.report.series;
        match series.iter_mut().find(|s| s.plot == plot && s.name == name) {
            Some(s) => s.points.push((clients as f64, value)),
            None => series.push(report::Series {
                plot: plot.into(),
                title: title.into(),
                x_label: "clients".into(),
                y_label: "per second".into(),
                name: name.into(),
                points: vec![(clients as f64, value)],
                quantile_x: false,
            }),
        }
    }

    /// Records the server's CPU time (user + system, its whole process
    /// tree; see [`servers::Endpoint::cpu`]) per transaction of a case:
    /// `before` is the reading taken before the case ran. On a shared
    /// machine this holds still when throughput swings.
    pub fn cpu_per_transaction(
        &mut self,
        workload: &'static str,
        case: &str,
        ep: &servers::Endpoint,
        before: std::time::Duration,
        transactions: u64,
    ) -> Res<()> {
        let spent = ep.cpu()?.saturating_sub(before);
        let us = spent.as_secs_f64() * 1e6 / transactions.max(1) as f64;
        let f = report::Figure::new(workload, case, ep.system, "us server CPU/txn", us);
        self.report.figure(f.lower_is_better());
        Ok(())
    }

    /// Adds a load's latency curve (ms at each percentile) to a plot.
    pub fn latency(&mut self, plot: &str, title: &str, name: &str, o: &driver::Outcome) {
        self.report.series.push(report::Series {
            plot: plot.into(),
            title: title.into(),
            x_label: "percentile".into(),
            y_label: "ms".into(),
            name: name.into(),
            points: o.curve(),
            quantile_x: true,
        });
    }

    /// A scratch directory for one workload's own files, made empty.
    pub fn scratch(&self, name: &str) -> Res<PathBuf> {
        let d = self.dir.join(name);
        if d.exists() {
            std::fs::remove_dir_all(&d)?;
        }
        std::fs::create_dir_all(&d)?;
        Ok(d)
    }
}

/// The workloads, in order, with their titles.
pub const WORKLOADS: [(&str, &str); 9] = [
    ("W1", "Sales orders (seed 001)"),
    ("W2", "TPC-B (seed 002, test 2)"),
    ("W3", "Single operations through the embedded API (seed 002, test 1)"),
    ("W4", "Checkpoint (seed 003)"),
    ("W5", "Document vault (seed 000)"),
    ("W6", "New order (seed 004)"),
    ("W7", "Mixed read-write OLTP"),
    ("W8", "The in-memory peer and the floor"),
    ("W9", "Connections"),
];

/// What a workload does, for `BENCHMARKS.md`.
pub fn describe(w: &str) -> &'static str {
    match w {
        "W1" => w1::DESCRIPTION,
        "W2" => w2::DESCRIPTION,
        "W3" => w3::DESCRIPTION,
        "W4" => w4::DESCRIPTION,
        "W5" => w5::DESCRIPTION,
        "W6" => w6::DESCRIPTION,
        "W7" => w7::DESCRIPTION,
        "W8" => w8::DESCRIPTION,
        _ => w9::DESCRIPTION,
    }
}

/// The seed's own figure for a workload (`workloads.md`), for context:
/// other hardware, other software, not a comparator. W7 and W8 come from
/// no seed.
pub fn seed_figure(w: &str) -> Option<&'static str> {
    Some(match w {
        "W1" => "10 M orders in 2 min 05 s on 16 logical cores in memory (about 80,000 orders/s), against 41 min 25 s with disk-based tables.",
        "W2" => "48.4 loops/ms (about 242,000 single-statement transactions/s) at 36 processes on 16 cores, through SQL/ODBC.",
        "W3" => "29.2 insert, 34.6 update, 32.3 delete loops/ms (in-memory database with its log on PCIe flash).",
        "W4" => "all checkpoints of the in-memory table together took under 2 s; disk-based tables 54 s.",
        "W5" => "memory-optimized tables were faster on every operation except range search, because the primary key was a hash index; a range index fixes that.",
        "W6" => "SAP ASE reached 771 K new orders/min on 64 engines with its in-memory row store and hash-cached B-tree (18x its baseline).",
        _ => return None,
    })
}

/// Runs the chosen workloads and writes the results; fails if any check
/// failed.
pub fn run(args: Args) -> Res<()> {
    let mut chosen: Vec<&str> = Vec::new();
    for w in &args.workloads {
        match w.to_ascii_uppercase().as_str() {
            "ALL" => chosen = WORKLOADS.iter().map(|(w, _)| *w).collect(),
            name => match WORKLOADS.iter().find(|(w, _)| *w == name) {
                Some((w, _)) if !chosen.contains(w) => chosen.push(w),
                Some(_) => {}
                None => return Err(format!("unknown workload {w:?}: expected w1 ... w8 or all").into()),
            },
        }
    }
    std::fs::create_dir_all(&args.dir)?;
    std::fs::create_dir_all(&args.out)?;
    let dir = std::fs::canonicalize(&args.dir)?;
    // PostgreSQL runs as its own account when we are root: it must be able
    // to reach its directory under ours.
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    let mut scale = Scale::new(args.quick);
    scale.w2_seconds = args.w2_seconds.unwrap_or(scale.w2_seconds);
    scale.w4_doublings = args.w4_doublings.unwrap_or(scale.w4_doublings);
    scale.w5_rounds = args.w5_rounds.unwrap_or(scale.w5_rounds);
    let mut report = Report {
        mode: if scale.quick { "quick" } else { "full" }.into(),
        command: command_line(),
        date: chrono::Utc::now().format("%Y-%m-%d").to_string(),
        ..Report::default()
    };
    report.machine = machine(&dir, scale.quick)?;
    let m = &report.machine;
    println!(
        "machine: {} cores, {:.0} GiB; disk under {}: {:.0} fsyncs/s, {:.0} MiB/s sequential",
        m.cores, m.memory_gib, m.data_dir, m.fsyncs_per_sec, m.seq_write_mib_per_sec
    );
    let pg_bin = servers::postgres_bin(args.pg_bin.as_deref())?;
    let centum_bin = servers::centum_bin(args.centum.as_deref())?;
    let mut ctx = Ctx { scale, dir: dir.clone(), pg_bin, centum_bin, report };
    ctx.report.machine.postgres = servers::Postgres::version_of(&ctx.pg_bin);
    ctx.report.machine.postgres_settings = servers::tuned_settings();
    for w in chosen {
        // The disk's fsync rate moves with what else the machine does; the
        // rate just before each workload is the limit its durable figures
        // met.
        let probe = Duration::from_millis(if ctx.scale.quick { 200 } else { 1000 });
        let fsyncs = centum_engine::storage::disk::fsync_rate(&dir, probe)?;
        ctx.report.note(w, format!("The disk just before {w}: {} fsyncs/s.", report::number(fsyncs)));
        let started = Instant::now();
        let result = match w {
            "W1" => w1::run(&mut ctx),
            "W2" => w2::run(&mut ctx),
            "W3" => w3::run(&mut ctx),
            "W4" => w4::run(&mut ctx),
            "W5" => w5::run(&mut ctx),
            "W6" => w6::run(&mut ctx),
            "W7" => w7::run(&mut ctx),
            "W8" => w8::run(&mut ctx),
            _ => w9::run(&mut ctx),
        };
        if let Err(e) = result {
            ctx.report.check(
                WORKLOADS.iter().find(|(x, _)| *x == w).map_or("W?", |(w, _)| w),
                "all",
                "the workload ran to the end",
                false,
                chain(&*e),
            );
        }
        ctx.report.seconds.insert(w.to_string(), started.elapsed().as_secs_f64());
    }
    let _ = std::fs::remove_dir_all(dir.join("scratch"));
    let report = ctx.report;
    report.write_raw(&args.out)?;
    let plots = plot::draw_all(&report.series, &args.out)?;
    report.write_markdown(&args.out, &plots)?;
    let failed = report.checks.iter().filter(|c| !c.ok).count();
    println!(
        "{} checks, {failed} failed; results in {}",
        report.checks.len(),
        args.out.join("BENCHMARKS.md").display()
    );
    if failed > 0 {
        return Err(format!("{failed} checks failed").into());
    }
    Ok(())
}

/// "1 client", "8 clients".
pub fn clients(n: usize) -> String {
    if n == 1 {
        "1 client".into()
    } else {
        format!("{n} clients")
    }
}

/// An error with every error under it: a database error's own message
/// is in its source.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}

/// The command line, as a user would type it again.
fn command_line() -> String {
    let mut words: Vec<String> = std::env::args().collect();
    if let Some(first) = words.first_mut() {
        *first = "centum-bench".into();
    }
    words.join(" ")
}

/// The machine, its disk under `dir` and the systems' versions.
fn machine(dir: &Path, quick: bool) -> Res<report::Machine> {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let meminfo = read("/proc/meminfo");
    let kib: f64 = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0.0);
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .unwrap_or("unknown CPU")
        .trim()
        .to_string();
    let bar = driver::phase("measuring the disk");
    let opts = centum_engine::storage::disk::Options {
        fsync_time: std::time::Duration::from_millis(if quick { 500 } else { 2000 }),
        seq_write_bytes: if quick { 64 << 20 } else { 1 << 30 },
    };
    let rates = centum_engine::storage::disk::measure(dir, &opts)?;
    bar.finish_and_clear();
    Ok(report::Machine {
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_gib: kib / (1 << 20) as f64,
        cpu,
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        data_dir: dir.display().to_string(),
        fsyncs_per_sec: rates.fsyncs_per_sec,
        seq_write_mib_per_sec: rates.seq_write_mb_per_sec,
        postgres: String::new(),
        postgres_settings: Vec::new(),
        sqlite: rusqlite::version().to_string(),
        centum: env!("CARGO_PKG_VERSION").to_string(),
    })
}
