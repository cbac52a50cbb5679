//! `centum-bench sql`: statements per second through the SQL layer,
//! in-process, on one thread: a point SELECT by primary key and a
//! single-row UPDATE, both through prepared statements on a SCHEMA_ONLY
//! table (no logging), each its own autocommit transaction, against the
//! same operations through the embedded API in the same run. The four
//! measurements alternate in short rounds and the median is reported, so
//! that other work on the machine weighs on all of them alike.

use centum_engine::{Isolation, Options};
use centum_sql::Database;
use centum_types::Value;
use std::time::{Duration, Instant};

/// Options of `centum-bench sql`.
#[derive(clap::Args)]
pub struct Args {
    /// Rows in the table.
    #[arg(long, default_value_t = 1_000_000)]
    rows: i64,
    /// Seconds per measurement round.
    #[arg(long, default_value_t = 0.5)]
    seconds: f64,
    /// Rounds; each round measures every operation once, in turn, so that
    /// a change in the machine's load affects them alike. The median round
    /// is reported.
    #[arg(long, default_value_t = 7)]
    rounds: usize,
    /// Measure only this operation (select or update), e.g. to profile it;
    /// the others report nothing.
    #[arg(long)]
    only: Option<String>,
}

fn rate(seconds: f64, mut op: impl FnMut(i64) -> Result<(), String>) -> Result<f64, String> {
    let budget = Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let mut n: i64 = 0;
    let mut key: u64 = 0x9E37_79B9_7F4A_7C15;
    while start.elapsed() < budget {
        for _ in 0..1024 {
            key ^= key << 13;
            key ^= key >> 7;
            key ^= key << 17;
            op(key as i64)?;
            n += 1;
        }
    }
    Ok(n as f64 / start.elapsed().as_secs_f64())
}

/// Runs the benchmark.
pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let engine = centum_engine::Database::open(Options::default())?;
    let db = Database::open(engine.clone())?;
    let mut s = db.session();
    s.execute(&format!(
        "CREATE TABLE bench (id bigint PRIMARY KEY, balance bigint NOT NULL, name text) \
         WITH (durability = schema_only, bucket_count = {})",
        (args.rows as u64 * 2).next_power_of_two()
    ))?;
    let rows = args.rows;
    eprintln!("loading {rows} rows");
    let mut ins = s.prepare("INSERT INTO bench VALUES ($1, $2, $3)", &[])?;
    s.execute("BEGIN")?;
    for i in 0..rows {
        s.execute_prepared(
            &mut ins,
            &[Value::BigInt(i), Value::BigInt(1000), Value::Text(format!("row{i}"))],
        )?;
        if i % 10_000 == 9_999 {
            s.execute("COMMIT")?;
            s.execute("BEGIN")?;
        }
    }
    s.execute("COMMIT")?;
    let mut select = s.prepare("SELECT balance, name FROM bench WHERE id = $1", &[])?;
    let mut update = s.prepare("UPDATE bench SET balance = balance + 1 WHERE id = $1", &[])?;
    let mut sql_select = |s: &mut centum_sql::Session, seconds: f64| {
        rate(seconds, |k| {
            let r = s
                .execute_prepared(&mut select, &[Value::BigInt(k.rem_euclid(rows))])
                .map_err(|e| e.to_string())?;
            if r.rows.len() != 1 {
                return Err("point select found no row".into());
            }
            Ok(())
        })
    };
    let mut sql_update = |s: &mut centum_sql::Session, seconds: f64| {
        rate(seconds, |k| {
            let r = s
                .execute_prepared(&mut update, &[Value::BigInt(k.rem_euclid(rows))])
                .map_err(|e| e.to_string())?;
            if r.tag != "UPDATE 1" {
                return Err(format!("update said {}", r.tag));
            }
            Ok(())
        })
    };
    // The same work through the embedded API, for the SQL layer's cost.
    let table = engine.table("bench")?;
    let api_select = |seconds: f64| {
        rate(seconds, |k| {
            let txn = engine.begin(Isolation::ReadCommitted).map_err(|e| e.to_string())?;
            let row = txn
                .get(&table, "bench_pkey", &[Value::BigInt(k.rem_euclid(rows))])
                .map_err(|e| e.to_string())?;
            let _ = row.map(|r| (r.get(1), r.get(2)));
            txn.commit().map_err(|e| e.to_string())
        })
    };
    let api_update = |seconds: f64| {
        rate(seconds, |k| {
            let txn = engine.begin(Isolation::ReadCommitted).map_err(|e| e.to_string())?;
            if let Some(r) = txn
                .get(&table, "bench_pkey", &[Value::BigInt(k.rem_euclid(rows))])
                .map_err(|e| e.to_string())?
            {
                let mut v = r.values();
                if let Value::BigInt(b) = v[1] {
                    v[1] = Value::BigInt(b + 1);
                }
                txn.update(&r, v).map_err(|e| e.to_string())?;
            }
            txn.commit().map_err(|e| e.to_string())
        })
    };
    let mut runs: [Vec<f64>; 4] = Default::default();
    for round in 0..args.rounds {
        eprintln!("round {}/{}", round + 1, args.rounds);
        let only = args.only.as_deref();
        let skip = |op: &str| only.is_some_and(|o| o != op);
        runs[0].push(if skip("select") { 0.0 } else { sql_select(&mut s, args.seconds)? });
        runs[1].push(if skip("select") { 0.0 } else { api_select(args.seconds)? });
        runs[2].push(if skip("update") { 0.0 } else { sql_update(&mut s, args.seconds)? });
        runs[3].push(if skip("update") { 0.0 } else { api_update(args.seconds)? });
    }
    let [sel, api_sel, upd, api_upd] = runs.map(|mut v| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    });
    println!("rows: {rows}, one thread, SCHEMA_ONLY (no log), prepared statements, autocommit, median of {} rounds", args.rounds);
    println!("{:<32} {:>14} {:>14} {:>8}", "operation", "SQL stmts/s", "embedded/s", "SQL/API");
    println!("{:<32} {:>14.0} {:>14.0} {:>7.2}x", "point SELECT by primary key", sel, api_sel, sel / api_sel);
    println!("{:<32} {:>14.0} {:>14.0} {:>7.2}x", "single-row UPDATE by key", upd, api_upd, upd / api_upd);
    Ok(())
}
