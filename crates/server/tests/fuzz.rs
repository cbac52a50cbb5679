//! A grammar-based SQL fuzzer: random schemas, queries and DML run against
//! the embedded database and the real `centum serve`, looking for what must
//! never happen whatever SQL a client sends.
//!
//! ```text
//!  regressions.sql ─┐
//!                   ├─▶ statements ─┬─▶ centum_sql::Session (in process)
//!  seed ─▶ Gen ─────┘               └─▶ centum serve (postgres crate)
//!
//!  a bug:  a panic (caught around each embedded statement), a server that
//!          exits or drops the connection, SQLSTATE XX000, a statement
//!          running more than 1 s past statement_timeout (2 s) or never
//!          returning, server memory (VmRSS) growing past the budget
//!  fine:   every ordinary error (42xxx, 22xxx, 23xxx, 0A000, 54001, 57014 ...)
//! ```
//!
//! The generator (`fuzz/generator.rs` and the modules beside it) writes a
//! schema of one to four tables over every column type, with hash
//! (`bucket_count`) and range keys and indexes, rows for them, then
//! statements: SELECTs with joins, derived tables, GROUP BY/HAVING, set
//! operations and subqueries; INSERT/UPDATE/DELETE/MERGE; transaction
//! control, DDL and EXPLAIN. Expressions are typed and deep and wide: long
//! AND/OR and arithmetic chains, nesting, CASE, COALESCE, casts (bad ones
//! too), the built-in functions, NULLs and extreme values (i64::MIN, NaN,
//! the calendar's ends, huge, empty and non-ASCII strings). A case uses the
//! extended protocol when its seed is a multiple of four.
//!
//! Every run first replays `fuzz/regressions.sql`, where each bug the
//! fuzzer ever found stays as a case, then generates cases until its time
//! is up. A failure prints its seed and a reduced case as a block to paste
//! into `regressions.sql`. The CI run takes about a minute; a long one:
//!
//! ```text
//! CENTUM_FUZZ_SECONDS=3600 cargo test --release -p centum-server --test fuzz -- --nocapture
//! ```
//!
//! Settings (environment):
//!
//! * `CENTUM_FUZZ_SECONDS` (60): how long to generate cases.
//! * `CENTUM_FUZZ_SEED` (from the clock): the first case's seed; case `n`
//!   uses seed + n. `CENTUM_FUZZ_SEED=s CENTUM_FUZZ_CASES=1` replays the
//!   case a failure names.
//! * `CENTUM_FUZZ_CASES` (unlimited): stop after this many cases.
//! * `CENTUM_FUZZ_STATEMENTS` (50): statements per case after its rows.
//! * `CENTUM_FUZZ_SHOW=1`: print every statement and both answers.
//! * `CENTUM_FUZZ_MEMORY_MB` (1024): how far the server's memory may grow
//!   (each session sets statement_mem to 256MB).
//! * `CENTUM_FUZZ_DEEP=0`: chains of at most 200 terms and nesting at
//!   most 50 deep (by default a rare few reach 5,000 terms and 2,000
//!   levels, which must end in an answer or 54001, never an overflow).
//!
//! A stack overflow or a failed allocation aborts this process before it
//! can report: the case and statement running at that moment are in
//! `fuzz-running.sql` under Cargo's temporary directory for tests
//! (`target/tmp`).

mod common;

mod fuzz {
    pub mod cases;
    pub mod expr;
    pub mod generator;
    pub mod query;
    pub mod rng;
    pub mod schema;
    pub mod statements;
    pub mod targets;
    pub mod values;

    /// Which extra kinds of input to generate.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Knobs {
        /// Very long chains and very deep nesting.
        pub deep: bool,
    }
}

use fuzz::cases::{self, Case, Failure, Runner};
use fuzz::generator::Gen;
use fuzz::Knobs;
use std::time::{Duration, Instant, SystemTime};

/// The run's settings, from the environment.
struct Settings {
    seconds: u64,
    seed: u64,
    cases: u64,
    statements: usize,
    memory: u64,
    knobs: Knobs,
}

/// An environment variable parsed, or `default`.
fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => parse_number(&v).unwrap_or_else(|| panic!("{name}: cannot parse {v:?}")),
        Err(_) => default,
    }
}

/// A decimal or 0x-prefixed hexadecimal number.
fn parse_number<T: std::str::FromStr>(v: &str) -> Option<T> {
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok()?.to_string().parse().ok(),
        None => v.parse().ok(),
    }
}

impl Settings {
    fn from_env() -> Settings {
        let clock = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        Settings {
            seconds: env("CENTUM_FUZZ_SECONDS", 60),
            seed: env("CENTUM_FUZZ_SEED", clock % 1_000_000_000_000),
            cases: env("CENTUM_FUZZ_CASES", u64::MAX),
            statements: env("CENTUM_FUZZ_STATEMENTS", 50),
            memory: env("CENTUM_FUZZ_MEMORY_MB", 1024) << 20,
            knobs: Knobs { deep: std::env::var("CENTUM_FUZZ_DEEP").map_or(true, |v| v != "0") },
        }
    }
}

/// How many failures end a run early.
const MAX_FAILURES: usize = 10;
/// How long reducing one failing case may take.
const REDUCE_FOR: Duration = Duration::from_secs(60);

#[test]
fn fuzz() {
    let settings = Settings::from_env();
    let started = Instant::now();
    let running_file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-running.sql");
    eprintln!(
        "fuzz: seed {} for {} s, {:?}; the statement running is kept in {}",
        settings.seed,
        settings.seconds,
        settings.knobs,
        running_file.display()
    );
    let mut runner = Runner::new(settings.memory, running_file);
    let mut failures: Vec<Failure> = Vec::new();

    let regressions = cases::parse(include_str!("fuzz/regressions.sql"));
    for case in &regressions {
        if let Some((i, bug)) = runner.run(case, None) {
            failures.push(runner.reduce(case, i, bug, Duration::ZERO));
        }
    }
    let replayed = started.elapsed();

    let deadline = started + Duration::from_secs(settings.seconds);
    let mut generated = 0u64;
    while generated < settings.cases && Instant::now() < deadline && failures.len() < MAX_FAILURES {
        let seed = settings.seed.wrapping_add(generated);
        generated += 1;
        let g = Gen::case(seed, settings.knobs, settings.statements);
        let mut statements = g.schema;
        statements.extend(g.statements);
        let case = Case {
            label: format!("seed {seed}: CENTUM_FUZZ_SEED={seed} CENTUM_FUZZ_CASES=1"),
            statements,
            extended: seed.is_multiple_of(4),
        };
        // A replayed seed runs to its end; otherwise the clock decides.
        let limit = (settings.cases != 1).then_some(deadline);
        if let Some((i, bug)) = runner.run(&case, limit) {
            let failure = runner.reduce(&case, i, bug, REDUCE_FOR);
            eprintln!("\nFUZZ FAILURE {}", failure.report());
            failures.push(failure);
        }
    }

    let mut errors: Vec<(&String, &u64)> = runner.errors.iter().collect();
    errors.sort_by(|a, b| b.1.cmp(a.1));
    let top: Vec<String> = errors.iter().take(12).map(|(c, n)| format!("{c}:{n}")).collect();
    eprintln!(
        "fuzz: {} regression cases in {:.1} s, then {generated} generated cases; {} statements in {:.1} s; \
         ordinary errors {}",
        regressions.len(),
        replayed.as_secs_f64(),
        runner.statements,
        started.elapsed().as_secs_f64(),
        top.join(" ")
    );
    if !runner.differences.is_empty() {
        let all = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-differences.txt");
        let _ = std::fs::write(&all, runner.differences.join("\n") + "\n");
        eprintln!(
            "fuzz: {} cases where the embedded and server answers differ (all in {}):",
            runner.differences.len(),
            all.display()
        );
        for d in runner.differences.iter().take(10) {
            eprintln!("  {d}");
        }
    }
    if !failures.is_empty() {
        let reports: Vec<String> = failures.iter().map(Failure::report).collect();
        panic!(
            "{} fuzz failures (first seed {}):\n\n{}",
            failures.len(),
            settings.seed,
            reports.join("\n\n")
        );
    }
}
