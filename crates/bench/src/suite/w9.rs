//! W9, connections: what a server spends on clients that are connected but
//! quiet, and how it answers a crowd. 1,000 connections open and idle on
//! Centum and on PostgreSQL, one server at a time: the memory they add (the
//! proportional set size of the server's processes, so PostgreSQL's shared
//! buffers count once however many backends map them) and the CPU the
//! server uses while they sit there. Then pgbench's select-only script
//! from 500 clients at once: the rate, the latency percentiles and the
//! server CPU per transaction.

use super::report::Figure;
use super::servers::Endpoint;
use super::{pgbench, Ctx, Res};
use std::time::Duration;

pub const DESCRIPTION: &str = "Each server alone on the machine, started to accept 1,100 connections. Idle: 1,000 \
connections opened one after another, each running `SELECT 1` once and then staying open and quiet; the memory \
they add is the growth of the proportional set size (PSS, `/proc/PID/smaps_rollup`) summed over the server's \
processes (PostgreSQL's postmaster and every backend; shared pages count once), and the CPU is the server's user + \
system time over the following seconds of quiet. Crowd: pgbench's built-in select-only script at the run's scale, \
`-M prepared`, 500 clients at once, with its per-transaction log for the percentiles.";

/// The figures of one run, scaled down in quick mode.
struct Plan {
    idle: usize,
    quiet: Duration,
    crowd: usize,
}

pub fn run(ctx: &mut Ctx) -> Res<()> {
    let plan = if ctx.scale.quick {
        Plan { idle: 100, quiet: Duration::from_secs(1), crowd: 50 }
    } else {
        Plan { idle: 1_000, quiet: Duration::from_secs(5), crowd: 500 }
    };
    raise_open_files(plan.idle + plan.crowd)?;
    let scale = ctx.scale.w2_scale;
    let secs = ctx.scale.w2_seconds;
    let scratch = ctx.scratch("scratch")?;
    for system in ["Centum", "PostgreSQL"] {
        // One server at a time: the other's memory and CPU stay out.
        let (pg, centum);
        let (ep, bin) = if system == "Centum" {
            centum = ctx.centum_with(CONNECTIONS)?;
            pg = None;
            (centum.endpoint.clone(), ctx.pgbench()?)
        } else {
            pg = Some(ctx.postgres_with(CONNECTIONS)?);
            let p = pg.as_ref().ok_or("no PostgreSQL")?;
            (p.endpoint.clone(), p.program("pgbench"))
        };
        // Idle connections first, on a server that has done nothing yet.
        idle(ctx, &ep, &plan)?;
        pgbench::init(&bin, &ep, scale)?;
        if ep.system == "PostgreSQL" {
            ep.connect()?.batch_execute("VACUUM ANALYZE")?;
        }
        let who = super::clients(plan.crowd);
        let case = format!("W9 select-only, {who} at once");
        let cpu = ep.cpu()?;
        let label = format!("W9 {}: select-only, {who}", ep.system);
        let args = ["-S", "-M", "prepared", "-s", &scale.to_string()];
        let o = pgbench::run(&bin, &ep, plan.crowd, secs, &args, &scratch, &label)?;
        ctx.report.figure(Figure::new("W9", &case, ep.system, "tps", o.per_second()).with_load(&o));
        ctx.cpu_per_transaction("W9", &case, &ep, cpu, o.committed)?;
        ctx.report.check(
            "W9",
            ep.system,
            format!("no failed transactions: select-only, {who}"),
            o.rolled_back == 0,
            format!("{} failed", o.rolled_back),
        );
        drop(pg);
    }
    Ok(())
}

/// Connections each server is started to accept.
const CONNECTIONS: usize = 1_100;

/// Opens `plan.idle` connections, measures what they add while quiet, and
/// closes them.
fn idle(ctx: &mut Ctx, ep: &Endpoint, plan: &Plan) -> Res<()> {
    // Settle what start-up left behind first.
    std::thread::sleep(Duration::from_millis(500));
    let before = ep.memory()?;
    let bar = super::driver::phase(&format!("W9 {}: opening {} connections", ep.system, plan.idle));
    let mut open = Vec::with_capacity(plan.idle);
    for _ in 0..plan.idle {
        let mut c = ep.connect()?;
        c.simple_query("SELECT 1")?;
        open.push(c);
    }
    bar.finish_and_clear();
    std::thread::sleep(Duration::from_millis(500));
    let after = ep.memory()?;
    let cpu = ep.cpu()?;
    std::thread::sleep(plan.quiet);
    let quiet_cpu = ep.cpu()?.saturating_sub(cpu);
    let n = plan.idle;
    let case = format!("W9 {n} idle connections");
    let added = after as f64 - before as f64;
    ctx.report.figure(
        Figure::new("W9", &case, ep.system, "MiB added", added / f64::from(1 << 20)).lower_is_better(),
    );
    ctx.report.figure(
        Figure::new("W9", &case, ep.system, "KiB per connection", added / 1024.0 / n as f64)
            .lower_is_better(),
    );
    let per_second = quiet_cpu.as_secs_f64() * 1e3 / plan.quiet.as_secs_f64();
    ctx.report.figure(
        Figure::new("W9", &case, ep.system, "ms server CPU/s while quiet", per_second).lower_is_better(),
    );
    ctx.report.check(
        "W9",
        ep.system,
        format!("{n} idle connections all opened and answered"),
        open.len() == n,
        format!("{} of {n}", open.len()),
    );
    drop(open);
    Ok(())
}

/// Raises this process's open-file limit to what `connections` sockets
/// need (a new machine's soft limit is often 1,024), up to the hard limit.
fn raise_open_files(connections: usize) -> Res<()> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read and write `lim`.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        let want = (connections as libc::rlim_t + 256).min(lim.rlim_max);
        if lim.rlim_cur < want {
            lim.rlim_cur = want;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error().into());
            }
        }
    }
    Ok(())
}
