//! `centum-bench triggers`: what a row trigger costs an INSERT, against
//! what the write it does costs when the application makes it itself.
//!
//! Three ways to insert a row, in-process through prepared statements on
//! SCHEMA_ONLY tables (no logging), 100 rows per transaction:
//!
//! - `plain`: one INSERT into a table without triggers;
//! - `two inserts`: the same INSERT, then an INSERT of an audit row into a
//!   second table, as two statements;
//! - `trigger`: one INSERT into a table whose AFTER INSERT ... FOR EACH ROW
//!   trigger (PL/pgSQL) inserts the same audit row.
//!
//! The trigger's cost is `trigger - plain`; the second insert's is `two
//! inserts - plain`. The three alternate in short rounds and the median
//! round is reported, so that other work on the machine weighs on them
//! alike.

use centum_engine::Options;
use centum_sql::Database;
use centum_types::Value;
use std::time::{Duration, Instant};

/// Options of `centum-bench triggers`.
#[derive(clap::Args)]
pub struct Args {
    /// Seconds per measurement round.
    #[arg(long, default_value_t = 0.5)]
    seconds: f64,
    /// Rounds; each measures the three ways once, in turn. The median
    /// round is reported.
    #[arg(long, default_value_t = 7)]
    rounds: usize,
}

/// Rows per transaction.
const BATCH: i64 = 100;

/// Microseconds per row of `insert` (which inserts row `id`) run in
/// transactions of [`BATCH`] rows for about `seconds`; `next` is the next
/// free id.
fn per_row(
    s: &mut centum_sql::Session,
    seconds: f64,
    next: &mut i64,
    mut insert: impl FnMut(&mut centum_sql::Session, i64) -> Result<(), centum_sql::Error>,
) -> Result<f64, centum_sql::Error> {
    let budget = Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < budget {
        s.execute("BEGIN")?;
        for _ in 0..BATCH {
            insert(s, *next)?;
            *next += 1;
            n += 1;
        }
        s.execute("COMMIT")?;
    }
    Ok(start.elapsed().as_secs_f64() * 1e6 / n as f64)
}

/// Runs the benchmark.
pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let db = Database::open(centum_engine::Database::open(Options::default())?)?;
    let mut s = db.session();
    for t in ["plain", "twice", "watched"] {
        s.execute(&format!(
            "CREATE TABLE {t} (id bigint PRIMARY KEY, amount bigint NOT NULL, note text) \
             WITH (durability = schema_only, bucket_count = 1048576)"
        ))?;
    }
    s.execute(
        "CREATE TABLE audit (id bigint NOT NULL, amount bigint, op text) \
         WITH (durability = schema_only)",
    )?;
    s.execute(
        "CREATE FUNCTION audit_insert() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN INSERT INTO audit VALUES (NEW.id, NEW.amount, TG_OP); RETURN NULL; END; $$",
    )?;
    s.execute(
        "CREATE TRIGGER watched_audit AFTER INSERT ON watched FOR EACH ROW EXECUTE FUNCTION audit_insert()",
    )?;
    let mut plain = s.prepare("INSERT INTO plain VALUES ($1, $2, 'row')", &[])?;
    let mut twice = s.prepare("INSERT INTO twice VALUES ($1, $2, 'row')", &[])?;
    let mut audit = s.prepare("INSERT INTO audit VALUES ($1, $2, 'INSERT')", &[])?;
    let mut watched = s.prepare("INSERT INTO watched VALUES ($1, $2, 'row')", &[])?;
    let args_of = |id: i64| [Value::BigInt(id), Value::BigInt(id % 1000)];
    let mut next = [0i64; 3];
    let mut runs: [Vec<f64>; 3] = Default::default();
    for round in 0..args.rounds {
        eprintln!("round {}/{}", round + 1, args.rounds);
        runs[0].push(per_row(&mut s, args.seconds, &mut next[0], |s, id| {
            s.execute_prepared(&mut plain, &args_of(id)).map(|_| ())
        })?);
        runs[1].push(per_row(&mut s, args.seconds, &mut next[1], |s, id| {
            s.execute_prepared(&mut twice, &args_of(id))?;
            s.execute_prepared(&mut audit, &args_of(id)).map(|_| ())
        })?);
        runs[2].push(per_row(&mut s, args.seconds, &mut next[2], |s, id| {
            s.execute_prepared(&mut watched, &args_of(id)).map(|_| ())
        })?);
    }
    let audited = s.execute("SELECT count(*) FROM audit")?;
    let expected = next[1] + next[2];
    if audited[0].rows[0][0] != Value::BigInt(expected) {
        return Err(format!("audit has {:?} rows, expected {expected}", audited[0].rows[0][0]).into());
    }
    let [base, two, trig] = runs.map(|mut v| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    });
    println!(
        "one thread, SCHEMA_ONLY (no log), prepared statements, {BATCH} rows per transaction, median of {} rounds",
        args.rounds
    );
    println!("{:<48} {:>10}", "way to insert a row", "us/row");
    println!("{:<48} {:>10.3}", "plain: INSERT, no trigger", base);
    println!("{:<48} {:>10.3}", "two inserts: INSERT, then INSERT of audit row", two);
    println!("{:<48} {:>10.3}", "trigger: INSERT, AFTER ROW trigger inserts it", trig);
    println!(
        "the trigger costs {:.3} us per row; the second insert costs {:.3} us ({:.2}x)",
        trig - base,
        two - base,
        (trig - base) / (two - base)
    );
    Ok(())
}
