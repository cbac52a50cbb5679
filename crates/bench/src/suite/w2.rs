//! W2, TPC-B, driven by PostgreSQL's own pgbench client against both
//! servers: W2b is pgbench's default script (five statements in one
//! transaction) in each query mode; W2a sends the same five statements
//! as single-statement transactions, the seed's way; W2c is pgbench's
//! select-only script. Afterwards the
//! balances must agree (accounts, tellers, branches and history each sum
//! to the same total) and history must hold one row per transaction.

use super::driver::Outcome;
use super::report::Figure;
use super::servers::Endpoint;
use super::{pgbench, Ctx, Res};

pub const DESCRIPTION: &str = "pgbench's schema at the run's scale factor, loaded by `pgbench -i`: the load's \
times as pgbench reports them (the whole load, the client-side generate that COPYs the rows, the primary keys added \
afterwards) and the server's CPU during the load are figures too (less is better). W2b: pgbench's \
default TPC-B script (UPDATE accounts, SELECT the balance, UPDATE tellers, UPDATE branches, INSERT history, in one \
transaction) run by the real `pgbench` client against both servers in each query mode. W2a: the same five statements \
as five single-statement transactions (the seed's test 2), reported as statements per second. W2c: pgbench's \
select-only script (`-S`: one SELECT of an account's balance by key per transaction), `-M prepared`: the cost of a \
round trip and a key look-up. Durable commits on both servers; failed transactions must be zero. The plans of \
the TPC-B statements are recorded after the load, and a sequential scan of 1,000 rows or more where an index fits \
fails the run.";

/// W2a's script: pgbench's TPC-B statements without BEGIN and END, so
/// each is its own transaction.
const SINGLE_STATEMENTS: &str = "\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
";

/// pgbench's TPC-B statements, with values, for their plans.
const TPCB_STATEMENTS: [&str; 4] = [
    "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 7",
    "SELECT abalance FROM pgbench_accounts WHERE aid = 7",
    "UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 7",
    "UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1",
];

/// Records a pgbench run of `case` on `ep`: its tps, the server's CPU per
/// transaction since `cpu`, and the check that no transaction failed.
fn record_tps(
    ctx: &mut Ctx,
    case: &str,
    ep: &Endpoint,
    cpu: std::time::Duration,
    o: &Outcome,
    what: &str,
) -> Res<()> {
    ctx.report.figure(Figure::new("W2", case, ep.system, "tps", o.per_second()).with_load(o));
    ctx.cpu_per_transaction("W2", case, ep, cpu, o.committed)?;
    ctx.report.check(
        "W2",
        ep.system,
        format!("no failed transactions: {what}"),
        o.rolled_back == 0,
        format!("{} failed", o.rolled_back),
    );
    Ok(())
}

pub fn run(ctx: &mut Ctx) -> Res<()> {
    let pg = ctx.postgres()?;
    let centum = ctx.centum()?;
    let endpoints = [&centum.endpoint, &pg.endpoint];
    let bin = pg.program("pgbench");
    let scale = ctx.scale.w2_scale;
    for ep in endpoints {
        let cpu = ep.cpu()?;
        let t = pgbench::init(&bin, ep, scale)?;
        let cpu = ep.cpu()?.saturating_sub(cpu).as_secs_f64();
        let load = format!("W2 load: pgbench -i -s {scale} (durable)");
        for (what, s) in
            [("whole load", t.total), ("client-side generate (COPY)", t.generate), ("primary keys", t.keys)]
        {
            ctx.report
                .figure(Figure::new("W2", format!("{load}, {what}"), ep.system, "s", s).lower_is_better());
        }
        ctx.report
            .figure(Figure::new("W2", format!("{load}, server CPU"), ep.system, "s", cpu).lower_is_better());
        let plans = super::plans::explained(ep, &TPCB_STATEMENTS)?;
        super::plans::judge(ctx, "W2", "TPC-B statements after pgbench -i", ep, &plans)?;
    }
    let scratch = ctx.scratch("scratch")?;
    let script = scratch.join("single-statements.pgbench");
    std::fs::write(&script, SINGLE_STATEMENTS)?;
    let secs = ctx.scale.w2_seconds;
    let mut transactions = [0u64; 2];
    for mode in ["simple", "extended", "prepared"] {
        for &clients in &ctx.scale.w2b_clients.clone() {
            let who = super::clients(clients);
            for (i, ep) in endpoints.iter().enumerate() {
                let label = format!("W2b {}: -M {mode}, {who}", ep.system);
                let cpu = ep.cpu()?;
                let o = pgbench::run(
                    &bin,
                    ep,
                    clients,
                    secs,
                    &["-M", mode, "-s", &scale.to_string()],
                    &scratch,
                    &label,
                )?;
                transactions[i] += o.committed;
                let case = format!("W2b TPC-B, -M {mode}, {who} (durable)");
                record_tps(ctx, &case, ep, cpu, &o, &format!("-M {mode}, {who}"))?;
                ctx.point(
                    "w2b-throughput",
                    "W2b: TPC-B transactions/s by clients (durable, real pgbench)",
                    &format!("{} -M {mode}", ep.system),
                    clients,
                    o.per_second(),
                );
                if mode == "prepared" && Some(&clients) == ctx.scale.w2b_clients.last() {
                    let title = format!("W2b: latency of a TPC-B transaction, -M prepared, {who}");
                    ctx.latency("w2b-latency", &title, ep.system, &o);
                }
            }
        }
    }
    for &clients in &ctx.scale.w2a_clients.clone() {
        let who = super::clients(clients);
        for (i, ep) in endpoints.iter().enumerate() {
            let label = format!("W2a {}: single statements, {who}", ep.system);
            let args = ["-M", "prepared", "-s", &scale.to_string(), "-f", script.to_str().ok_or("path")?];
            let cpu = ep.cpu()?;
            let o = pgbench::run(&bin, ep, clients, secs, &args, &scratch, &label)?;
            transactions[i] += o.committed;
            let case = format!("W2a single-statement transactions, {who} (durable)");
            ctx.report.figure(
                Figure::new("W2", &case, ep.system, "statements/s", 5.0 * o.per_second()).with_load(&o),
            );
            ctx.cpu_per_transaction("W2", &case, ep, cpu, 5 * o.committed)?;
            ctx.report.check(
                "W2",
                ep.system,
                format!("no failed statements: W2a, {who}"),
                o.rolled_back == 0,
                format!("{} failed", o.rolled_back),
            );
            ctx.point(
                "w2a-throughput",
                "W2a: single-statement transactions/s by clients (durable, real pgbench)",
                ep.system,
                clients,
                5.0 * o.per_second(),
            );
        }
    }
    for &clients in &ctx.scale.w2b_clients.clone() {
        let who = super::clients(clients);
        for ep in endpoints {
            let label = format!("W2c {}: select-only, {who}", ep.system);
            let cpu = ep.cpu()?;
            let args = ["-S", "-M", "prepared", "-s", &scale.to_string()];
            let o = pgbench::run(&bin, ep, clients, secs, &args, &scratch, &label)?;
            let case = format!("W2c select-only, -M prepared, {who}");
            record_tps(ctx, &case, ep, cpu, &o, &format!("select-only, {who}"))?;
        }
    }
    for (i, ep) in endpoints.iter().enumerate() {
        let totals = pgbench::balances(ep)?;
        let (sums, history, accounts) = (&totals[..4], totals[4], totals[5]);
        ctx.report.check(
            "W2",
            ep.system,
            "accounts, tellers, branches and history sum to the same balance",
            sums.iter().all(|s| *s == sums[0]),
            format!("{sums:?}"),
        );
        ctx.report.check(
            "W2",
            ep.system,
            "one history row per transaction pgbench counted",
            history as u64 == transactions[i],
            format!("{history} rows, {} transactions", transactions[i]),
        );
        ctx.report.check(
            "W2",
            ep.system,
            "100,000 accounts per scale unit",
            accounts == 100_000 * scale as i64,
            format!("{accounts}"),
        );
    }
    Ok(())
}
