//! W4, checkpoint: the seed's load (10,000 rows one by one, the table
//! doubled by INSERT ... SELECT, five ranges deleted, a CHECKPOINT) into
//! embedded Centum (the engine's API, `durability::w4_load`), once with
//! checkpointing running and once paused, then a restart timed; and the
//! same statements into PostgreSQL, whose checkpoints are read from its
//! own `checkpoint complete` log lines, then a crash restart timed.

use super::report::Figure;
use super::servers::{scalar, Postgres};
use super::{driver, Ctx, Res};
use crate::durability::{w4_load, w4_recover};
use std::time::Instant;

pub const DESCRIPTION: &str = "Table `(id int, data uuid primary key (hash in Centum), dt timestamp)`: 10,000 rows \
inserted one per transaction, then the table doubled by INSERT ... SELECT (new uuids) the run's number of times, five \
ranges of 1,000 ids deleted, then a CHECKPOINT. Centum embedded (the engine's API; the copy commits 100,000 rows per \
transaction), once with checkpointing running during the load and once paused; PostgreSQL through SQL (each doubling \
one statement), its checkpoints taken from its `log_checkpoints` lines. Then each is restarted: Centum reopens its \
directory and loads every row back into memory; PostgreSQL is stopped with `-m immediate` (a crash) and replays its \
WAL. Durable commits on both.";

/// PostgreSQL's load; returns (single-row seconds, doubling seconds,
/// delete seconds, CHECKPOINT seconds).
fn postgres_load(c: &mut postgres::Client, doublings: u32) -> Res<[f64; 4]> {
    c.batch_execute("CREATE TABLE w4 (id int NOT NULL, data uuid PRIMARY KEY, dt timestamp)")?;
    let insert = c.prepare("INSERT INTO w4 VALUES ($1, gen_random_uuid(), localtimestamp)")?;
    let bar = driver::timed("W4 PostgreSQL: 10,000 single inserts", 10_000);
    let started = Instant::now();
    for id in 1..=10_000i32 {
        c.execute(&insert, &[&id])?;
        if id % 500 == 0 {
            bar.set_position(id as u64);
        }
    }
    bar.finish_and_clear();
    let single = started.elapsed().as_secs_f64();
    let bar = driver::timed("W4 PostgreSQL: doublings", doublings as u64);
    let started = Instant::now();
    let mut rows = 10_000i32;
    for d in 0..doublings {
        c.execute("INSERT INTO w4 SELECT id + $1, gen_random_uuid(), dt FROM w4", &[&rows])?;
        rows *= 2;
        bar.set_position(d as u64 + 1);
    }
    bar.finish_and_clear();
    let double = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let step = rows / 5;
    let mut txn = c.transaction()?;
    for k in 0..5 {
        txn.execute("DELETE FROM w4 WHERE id >= $1 AND id < $2", &[&(k * step + 1000), &(k * step + 2000)])?;
    }
    txn.commit()?;
    let delete = started.elapsed().as_secs_f64();
    let started = Instant::now();
    c.batch_execute("CHECKPOINT")?;
    Ok([single, double, delete, started.elapsed().as_secs_f64()])
}

/// PostgreSQL's `checkpoint complete` log lines: (count, total seconds,
/// longest, buffers written).
fn postgres_checkpoints(pg: &Postgres) -> (u64, f64, f64, u64) {
    let log = std::fs::read_to_string(pg.log()).unwrap_or_default();
    let mut out = (0, 0.0, 0.0f64, 0);
    for line in log.lines().filter(|l| l.contains("checkpoint complete:")) {
        let after = |key: &str| -> Option<f64> {
            let rest = &line[line.find(key)? + key.len()..];
            rest.trim_start().split(|c: char| !(c.is_ascii_digit() || c == '.')).next()?.parse().ok()
        };
        out.0 += 1;
        let total = after("total=").unwrap_or(0.0);
        out.1 += total;
        out.2 = out.2.max(total);
        out.3 += after("wrote").unwrap_or(0.0) as u64;
    }
    out
}

pub fn run(ctx: &mut Ctx) -> Res<()> {
    let doublings = ctx.scale.w4_doublings;
    let target = 10_000u64 << doublings;
    let expected = target - 5 * 1000;
    let seq = ctx.report.machine.seq_write_mib_per_sec;
    let case = |what: &str| format!("{what}, {target} rows (durable)");
    let mut loads = Vec::new();
    for paused in [false, true] {
        let dir = ctx.scratch("w4")?;
        let label = if paused { "checkpointing paused" } else { "checkpointing running" };
        let bar = driver::phase(&format!("W4 Centum: load, {label}"));
        let load = w4_load(&dir.join("data"), doublings, 100_000, paused)?;
        bar.finish_and_clear();
        let bar = driver::phase("W4 Centum: restart");
        let (secs, stats) = w4_recover(&dir.join("data"))?;
        bar.finish_and_clear();
        let n = stats.checkpoint_rows + stats.tail_rows;
        ctx.report.check(
            "W4",
            "Centum",
            format!("{label}: the restart brings back every row"),
            n == expected && load.rows == expected,
            format!("{n} recovered, {} loaded, {expected} expected", load.rows),
        );
        let c = &load.ckpt;
        let mib = c.bytes_written as f64 / (1 << 20) as f64;
        let busy = c.busy.as_secs_f64().max(1e-9);
        ctx.report.note(
            "W4",
            format!(
                "Centum, {label}: {} checkpoints, {:.2} s in all, longest {:.2} s; {mib:.0} MiB of data/delta blocks \
                 written at {:.0} MiB/s while busy = {:.0}% of the disk's sequential write rate ({seq:.0} MiB/s); \
                 final CHECKPOINT {:.2} s; restart {secs:.2} s ({} rows/s, {} threads).",
                c.checkpoints,
                c.checkpoint_time.as_secs_f64(),
                c.longest_checkpoint.as_secs_f64(),
                mib / busy,
                100.0 * mib / busy / seq.max(1e-9),
                load.checkpoint_secs,
                super::report::number(n as f64 / secs),
                stats.threads
            ),
        );
        std::fs::remove_dir_all(&dir)?;
        loads.push((load, secs));
    }
    let (running, restart) = &loads[0];
    let copied = (target - 10_000) as f64;
    let on = copied / running.double_secs;
    let off = copied / loads[1].0.double_secs;
    ctx.report.note(
        "W4",
        format!(
            "Centum's copy ran at {:.0}% of its speed with checkpointing paused ({} against {} rows/s).",
            100.0 * on / off,
            super::report::number(on),
            super::report::number(off)
        ),
    );

    let mut pg = ctx.postgres()?;
    let [single, double, delete, checkpoint] = postgres_load(&mut pg.endpoint.connect()?, doublings)?;
    let (n_ckpt, ckpt_secs, longest, buffers) = postgres_checkpoints(&pg);
    pg.crash()?;
    let bar = driver::phase("W4 PostgreSQL: crash restart");
    let pg_restart = pg.start_again()?.as_secs_f64();
    bar.finish_and_clear();
    let rows = scalar(&mut pg.endpoint.connect()?, "SELECT count(*) FROM w4")?;
    ctx.report.check(
        "W4",
        "PostgreSQL",
        "the restart brings back every row",
        rows as u64 == expected,
        format!("{rows} rows"),
    );
    let pg_mib = buffers as f64 * 8192.0 / (1 << 20) as f64;
    ctx.report.note(
        "W4",
        format!(
            "PostgreSQL: {n_ckpt} checkpoints logged, {ckpt_secs:.2} s in all (write, sync), longest {longest:.2} s, \
             {pg_mib:.0} MiB of buffers written; final CHECKPOINT {checkpoint:.2} s; restart after the crash \
             {pg_restart:.2} s (WAL replay; its rows stay on disk, not loaded)."
        ),
    );
    let c = &running.ckpt;
    let rate = |rows: f64, secs: f64| rows / secs.max(1e-9);
    let figures = [
        (
            "10,000 single-row transactions",
            "rows/s",
            rate(10_000.0, running.single_secs),
            rate(10_000.0, single),
            true,
        ),
        ("doublings (INSERT ... SELECT)", "rows/s", on, rate(copied, double), true),
        ("delete 5 x 1,000 ids", "s", running.delete_secs, delete, false),
        ("checkpoints during the load, all together", "s", c.checkpoint_time.as_secs_f64(), ckpt_secs, false),
        ("bytes written by checkpoints", "MiB", c.bytes_written as f64 / (1 << 20) as f64, pg_mib, false),
        ("final CHECKPOINT", "s", running.checkpoint_secs, checkpoint, false),
        ("restart after the load", "s", *restart, pg_restart, false),
    ];
    for (what, unit, centum, postgres, higher) in figures {
        for (system, value) in [("Centum", centum), ("PostgreSQL", postgres)] {
            let f = Figure::new("W4", case(what), system, unit, value);
            ctx.report.figure(if higher { f } else { f.lower_is_better() });
        }
    }
    Ok(())
}
