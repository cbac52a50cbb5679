//! W8, the in-memory peer and the floor: pgbench's tables at the run's
//! scale on Centum, PostgreSQL and Tarantool, each driven by its own
//! fastest client, with `redis-server` answering GET beside them as the
//! floor (what a loopback request costs a server that does next to
//! nothing). Four cases, 8 clients each: a point select by key, 16 point
//! selects in one pipeline, and the TPC-B transaction as one server-side
//! routine, durable and not logged. Every figure comes with the server's CPU per request
//! or transaction, and the notes give each as a multiple of the floor.
//! Afterwards each system's balances must agree and its history must hold
//! one row per routine call.

use super::report::Figure;
use super::servers::Endpoint;
use super::{peers, pgbench, Ctx, Res};
use std::time::Duration;

pub const DESCRIPTION: &str = "pgbench's schema at the run's scale factor on Centum and PostgreSQL (loaded by \
`pgbench -i`) and on Tarantool 2 (memtx spaces with the same rows and a primary key each, loaded by its server \
script), and `redis-server` with `redis-benchmark` GET as the floor: the server CPU of one loopback request that \
does next to nothing. 8 clients, each system's own client: pgbench `-M prepared` (C, libpq) for Centum and \
PostgreSQL, 8 `tarantool` processes each with one net.box connection for Tarantool, `redis-benchmark` for redis. \
Point select: one account's balance by key per request (Tarantool: a select request, no Lua on the server). \
Pipelined: 16 such selects in one pipeline (pgbench `\\startpipeline`, net.box async requests, `redis-benchmark -P \
16`), counted per request. TPC-B routine: pgbench's five statements as one server-side routine in one transaction \
(PL/pgSQL `tpcb()` on Centum and PostgreSQL, a Lua function in one box transaction on Tarantool), durable commits \
everywhere (Tarantool `wal_mode = 'fsync'`). TPC-B routine, not logged: the same on tables that are not logged \
(`pgbench -i --unlogged-tables`: SCHEMA_ONLY tables on Centum, UNLOGGED tables on PostgreSQL, whose commits still \
flush their commit record; Tarantool `wal_mode = 'none'`). CPU per request is user + system time of each server's \
processes over the case.";

/// The TPC-B transaction as one PL/pgSQL function, for Centum and
/// PostgreSQL alike.
const TPCB_FUNCTION: &str = "CREATE FUNCTION tpcb(p_aid int, p_tid int, p_bid int, p_delta int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  balance int;
BEGIN
  UPDATE pgbench_accounts SET abalance = abalance + p_delta WHERE aid = p_aid;
  SELECT abalance INTO balance FROM pgbench_accounts WHERE aid = p_aid;
  UPDATE pgbench_tellers SET tbalance = tbalance + p_delta WHERE tid = p_tid;
  UPDATE pgbench_branches SET bbalance = bbalance + p_delta WHERE bid = p_bid;
  INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (p_tid, p_bid, p_aid, p_delta, CURRENT_TIMESTAMP);
  RETURN balance;
END;
$$";

/// The point select and the routine's statements, with values, whose plans
/// are recorded; on PostgreSQL, the calls that run them.
const HOT: [&str; 6] = [
    "SELECT abalance FROM pgbench_accounts WHERE aid = 7",
    "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 7",
    "SELECT abalance FROM pgbench_accounts WHERE aid = 7",
    "UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 7",
    "UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1",
    "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (7, 1, 7, 1, CURRENT_TIMESTAMP)",
];
const HOT_CALLS: [&str; 2] =
    ["SELECT abalance FROM pgbench_accounts WHERE aid = 7", "SELECT tpcb(7, 7, 1, 1)"];

const TPCB_SCRIPT: &str = "\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
SELECT tpcb(:aid, :tid, :bid, :delta);
";

/// Clients in every case.
const CLIENTS: usize = 8;
/// Requests in one pipeline.
const PIPELINE: usize = 16;

/// 16 point selects in one pipeline.
fn pipeline_script() -> String {
    let mut s = String::new();
    for i in 0..PIPELINE {
        s.push_str(&format!("\\set aid{i} random(1, 100000 * :scale)\n"));
    }
    s.push_str("\\startpipeline\n");
    for i in 0..PIPELINE {
        s.push_str(&format!("SELECT abalance FROM pgbench_accounts WHERE aid = :aid{i};\n"));
    }
    s.push_str("\\endpipeline\n");
    s
}

/// The floor's and each system's CPU per request of one case, for the
/// multiples in the notes.
struct Case {
    name: &'static str,
    floor_us: Option<f64>,
    costs: Vec<(&'static str, f64)>,
}

pub fn run(ctx: &mut Ctx) -> Res<()> {
    let scale = ctx.scale.w2_scale;
    let secs = ctx.scale.w2_seconds;
    let pg = ctx.postgres()?;
    let centum = ctx.centum()?;
    let bin = pg.program("pgbench");
    let servers = [&centum.endpoint, &pg.endpoint];
    for ep in servers {
        pgbench::init(&bin, ep, scale)?;
        ep.connect()?.batch_execute(TPCB_FUNCTION)?;
        if ep.system == "PostgreSQL" {
            ep.connect()?.batch_execute("VACUUM ANALYZE")?;
        }
        let plans = super::plans::hot(ep, &HOT_CALLS, &HOT)?;
        super::plans::judge(ctx, "W8", "point select and the TPC-B routine", ep, &plans)?;
    }
    let scratch = ctx.scratch("scratch")?;
    let pipeline = scratch.join("pipeline.pgbench");
    std::fs::write(&pipeline, pipeline_script())?;
    let tpcb = scratch.join("tpcb.pgbench");
    std::fs::write(&tpcb, TPCB_SCRIPT)?;
    let path = |p: &std::path::Path| p.to_str().map(str::to_string).ok_or("path is not UTF-8");
    let (pipeline, tpcb) = (path(&pipeline)?, path(&tpcb)?);
    let s = scale.to_string();
    let who = super::clients(CLIENTS);
    let mut cases = vec![
        Case { name: "point select", floor_us: None, costs: vec![] },
        Case { name: "point select, pipelined", floor_us: None, costs: vec![] },
        Case { name: "TPC-B routine", floor_us: None, costs: vec![] },
        Case { name: "TPC-B routine, not logged", floor_us: None, costs: vec![] },
    ];

    // The floor.
    match (peers::program("redis-server", "redis-server"), peers::program("redis-benchmark", "redis-tools")) {
        (Ok(server), Ok(tool)) => {
            let redis = peers::Redis::start(&server, &ctx.scratch("redis")?)?;
            for (c, depth) in [(0, 1), (1, PIPELINE)] {
                let requests = if ctx.scale.quick { 20_000 } else { 400_000 } * depth as u64;
                let cpu = redis.endpoint.cpu()?;
                let rate = redis.bench(&tool, CLIENTS, requests, depth)?;
                let us = used_us(&redis.endpoint, cpu, requests)?;
                let case = case_name(c, &who);
                ctx.report.figure(Figure::new("W8", &case, "redis GET (floor)", "requests/s", rate));
                ctx.report.figure(
                    Figure::new("W8", &case, "redis GET (floor)", "us server CPU/request", us)
                        .lower_is_better(),
                );
                cases[c].floor_us = Some(us);
            }
        }
        (Err(why), _) | (_, Err(why)) => skipped(ctx, "the floor (redis)", &why),
    }

    // Centum and PostgreSQL through pgbench.
    for ep in servers {
        let runs: [(usize, Vec<&str>, u64); 3] = [
            (0, vec!["-S", "-M", "prepared", "-s", &s], 1),
            (1, vec!["-M", "prepared", "-s", &s, "-f", &pipeline], PIPELINE as u64),
            (2, vec!["-M", "prepared", "-s", &s, "-f", &tpcb], 1),
        ];
        for (c, args, per) in runs {
            let label = format!("W8 {}: {}", ep.system, cases[c].name);
            let cpu = ep.cpu()?;
            let o = pgbench::run(&bin, ep, CLIENTS, secs, &args, &scratch, &label)?;
            let requests = o.committed * per;
            record(ctx, &mut cases[c], c, &who, ep, cpu, requests, requests as f64 / o.seconds.max(1e-9))?;
            ctx.report.check(
                "W8",
                ep.system,
                format!("no failed transactions: {}", cases[c].name),
                o.rolled_back == 0,
                format!("{} failed", o.rolled_back),
            );
            if c == 2 {
                balances(ctx, ep.system, &pgbench::balances(ep)?, o.committed);
            }
        }
    }
    // The same routine on tables that are not logged.
    for ep in servers {
        pgbench::init_with(&bin, ep, scale, &["--unlogged-tables"])?;
        let mut c = ep.connect()?;
        c.batch_execute("DROP FUNCTION tpcb")?;
        c.batch_execute(TPCB_FUNCTION)?;
        if ep.system == "PostgreSQL" {
            c.batch_execute("VACUUM ANALYZE")?;
        }
        let label = format!("W8 {}: {}", ep.system, cases[3].name);
        let cpu = ep.cpu()?;
        let args = ["-M", "prepared", "-s", &s, "-f", &tpcb];
        let o = pgbench::run(&bin, ep, CLIENTS, secs, &args, &scratch, &label)?;
        record(ctx, &mut cases[3], 3, &who, ep, cpu, o.committed, o.per_second())?;
        balances(ctx, ep.system, &pgbench::balances(ep)?, o.committed);
    }

    // Tarantool through its own client.
    match peers::program("tarantool", "tarantool") {
        Ok(program) => {
            let bar = super::driver::phase(&format!("W8 Tarantool: loading scale {scale}"));
            let t = peers::Tarantool::start(&program, &ctx.scratch("tarantool")?, "fsync", scale)?;
            bar.finish_and_clear();
            for (c, mode, per) in [(0, "select", 1), (1, "pipeline", PIPELINE as u64), (2, "tpcb", 1)] {
                tarantool_case(ctx, &t, &mut cases[c], c, mode, per, &who)?;
            }
            drop(t);
            let bar = super::driver::phase(&format!("W8 Tarantool, wal_mode none: loading scale {scale}"));
            let t = peers::Tarantool::start(&program, &ctx.scratch("tarantool")?, "none", scale)?;
            bar.finish_and_clear();
            tarantool_case(ctx, &t, &mut cases[3], 3, "tpcb", 1, &who)?;
        }
        Err(why) => skipped(ctx, "Tarantool", &why),
    }

    for case in &cases {
        let Some(floor) = case.floor_us else { continue };
        let multiples: Vec<String> =
            case.costs.iter().map(|(system, us)| format!("{system} {:.1}x", us / floor.max(1e-9))).collect();
        ctx.report.note(
            "W8",
            format!(
                "{}: server CPU per request as a multiple of the floor ({:.2} us): {}.",
                case.name,
                floor,
                multiples.join(", ")
            ),
        );
    }
    Ok(())
}

/// Runs case `c` (Tarantool's client in `mode`, `per` requests a count)
/// on Tarantool and records it; after a TPC-B case, checks the balances.
fn tarantool_case(
    ctx: &mut Ctx,
    t: &peers::Tarantool,
    case: &mut Case,
    c: usize,
    mode: &str,
    per: u64,
    who: &str,
) -> Res<()> {
    let secs = ctx.scale.w2_seconds;
    let bar = super::driver::timed(&format!("W8 Tarantool: {}", case.name), secs);
    let cpu = t.endpoint.cpu()?;
    let (count, seconds) = t.run(mode, CLIENTS, secs, ctx.scale.w2_scale)?;
    bar.finish_and_clear();
    let requests = count * per;
    record(ctx, case, c, who, &t.endpoint, cpu, requests, requests as f64 / seconds)?;
    if c >= 2 {
        let sums = t.sums(ctx.scale.w2_scale)?;
        balances(ctx, "Tarantool", &sums[..5], count);
    }
    Ok(())
}

/// The case's name in the report's table.
fn case_name(c: usize, who: &str) -> String {
    match c {
        0 => format!("point select by key, {who}"),
        1 => format!("point select by key, {PIPELINE} per pipeline, {who}: per request"),
        2 => format!("TPC-B as one routine, {who} (durable)"),
        _ => format!("TPC-B as one routine, {who} (not logged)"),
    }
}

/// Server CPU per request, in microseconds, since `before`.
fn used_us(ep: &Endpoint, before: Duration, requests: u64) -> Res<f64> {
    Ok(ep.cpu()?.saturating_sub(before).as_secs_f64() * 1e6 / requests.max(1) as f64)
}

/// A system's rate and CPU per request in case `c`.
#[allow(clippy::too_many_arguments)]
fn record(
    ctx: &mut Ctx,
    case: &mut Case,
    c: usize,
    who: &str,
    ep: &Endpoint,
    before: Duration,
    requests: u64,
    rate: f64,
) -> Res<()> {
    let name = case_name(c, who);
    let unit = if c >= 2 { "txn/s" } else { "requests/s" };
    ctx.report.figure(Figure::new("W8", &name, ep.system, unit, rate));
    let us = used_us(ep, before, requests)?;
    let metric = if c >= 2 { "us server CPU/txn" } else { "us server CPU/request" };
    ctx.report.figure(Figure::new("W8", &name, ep.system, metric, us).lower_is_better());
    case.costs.push((ep.system, us));
    Ok(())
}

/// Accounts, tellers, branches and history (the first four of `sums`)
/// hold the same total, and history (the fifth) one row per call.
fn balances(ctx: &mut Ctx, system: &'static str, sums: &[i64], calls: u64) {
    ctx.report.check(
        "W8",
        system,
        "after the TPC-B routine, accounts, tellers, branches and history sum to the same balance",
        sums[..4].iter().all(|s| *s == sums[0]),
        format!("{:?}", &sums[..4]),
    );
    ctx.report.check(
        "W8",
        system,
        "one history row per routine call",
        sums[4] as u64 == calls,
        format!("{} rows, {calls} calls", sums[4]),
    );
}

/// Notes and prints why a system was left out.
fn skipped(ctx: &mut Ctx, what: &str, why: &str) {
    println!("W8: {what} skipped: {why}");
    ctx.report.note("W8", format!("{what} skipped: {why}."));
}
