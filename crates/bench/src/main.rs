//! `centum-bench`: Centum's benchmark command.
//!
//! Benchmarks are programs that print figures, never assertions in the
//! test suite. `centum-bench engine` measures the storage engine through
//! its embedded API, with no SQL, no network and no log:
//!
//! - `lookup`: hash index point look-ups in read-only transactions;
//! - `insert`: single-row insert transactions, on one thread and on two;
//! - `soak`: an update-heavy run that samples memory every second, to show
//!   that garbage collection keeps up.
//!
//! `centum-bench tree` measures the range index's tree against the
//! ordered maps a Rust program would otherwise use.
//!
//! `centum-bench durability` measures durable commits (1 to 32
//! committers, group commit) and the W4 checkpoint workload, each next to
//! the disk's fsync and sequential write rates measured in the same run.
//!
//! `centum-bench sql` measures prepared point SELECTs and single-row
//! UPDATEs through the SQL layer, in-process, next to the same operations
//! through the embedded API.
//!
//! `centum-bench triggers` measures what a row trigger that inserts an
//! audit row costs an INSERT, against the application inserting that row
//! itself.
//!
//! `centum-bench suite` runs the seeds' workloads (W1-W6 in
//! `workloads.md`) and a mixed read-write OLTP transaction (W7) against PostgreSQL and SQLite in the same run, checks
//! every workload's results, and writes CSV, JSON, PNG plots and
//! `BENCHMARKS.md`; `--quick` is the small-scale smoke run CI makes.
//!
//! `centum-bench disk` measures only the disk under a directory: its fsync
//! rate (4 KiB appends, each followed by `fdatasync`) and its sequential
//! write rate (1 MiB writes, then one `fdatasync`).

mod disk;
mod durability;
mod engine;
mod sql;
mod suite;
mod tree;
mod triggers;

/// Row versions are small, numerous and allocated from every core at once;
/// mimalloc's per-thread heaps keep that from serialising on the system
/// allocator and the kernel's page faults, as a production server would.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "centum-bench", about = "Centum's benchmarks", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Storage engine micro-benchmarks through the embedded API.
    Engine(engine::Args),
    /// The range index's tree against crossbeam's skiplist and a locked
    /// `BTreeMap`.
    Tree(tree::Args),
    /// Durable commits and the W4 checkpoint workload, against the disk.
    Durability(durability::Args),
    /// The disk's fsync and sequential write rates.
    Disk(disk::Args),
    /// Prepared point SELECT and UPDATE through the SQL layer, in-process.
    Sql(sql::Args),
    /// A row trigger's cost on INSERT, against a second INSERT.
    Triggers(triggers::Args),
    /// The seeds' workloads W1-W6 and mixed OLTP (W7) against PostgreSQL and SQLite, with
    /// plots and BENCHMARKS.md.
    Suite(suite::Args),
}

fn main() {
    let cli = Cli::parse();
    // Recovery and checkpoint progress (the database's log output) goes to
    // stderr, the figures to stdout.
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_target(false).init();
    let result = match cli.command {
        Command::Engine(args) => engine::run(args),
        Command::Tree(args) => tree::run(args),
        Command::Durability(args) => durability::run(args),
        Command::Disk(args) => disk::run(args),
        Command::Sql(args) => sql::run(args).map_err(|e| centum_engine::Error::Internal(e.to_string())),
        Command::Triggers(args) => {
            triggers::run(args).map_err(|e| centum_engine::Error::Internal(e.to_string()))
        }
        Command::Suite(args) => suite::run(args).map_err(|e| centum_engine::Error::Internal(e.to_string())),
    };
    if let Err(e) = result {
        eprintln!("centum-bench: {e}");
        std::process::exit(1);
    }
}
