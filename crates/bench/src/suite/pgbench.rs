//! Runs PostgreSQL's own `pgbench` client against either server, the same
//! binary and arguments for both, and reads back its figures: the rate
//! from its summary and every transaction's latency from its per-
//! transaction log (`-l`), so percentiles come from the same histogram as
//! the load driver's.

use super::driver::{self, Outcome};
use super::servers::Endpoint;
use super::Res;
use hdrhistogram::Histogram;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A pgbench command against `ep`.
pub fn command(pgbench: &Path, ep: &Endpoint) -> Command {
    let mut c = Command::new(pgbench);
    c.args(["-h", "127.0.0.1", "-p", &ep.port.to_string(), "-U", ep.user])
        .env("PGDATABASE", "postgres")
        .env_remove("PGOPTIONS");
    c
}

/// The seconds `pgbench -i` reports for the whole load and two of its
/// steps.
#[derive(Clone, Copy, Debug, Default)]
pub struct InitTimes {
    pub total: f64,
    /// `client-side generate`: the COPY of the rows.
    pub generate: f64,
    /// `primary keys`: ALTER TABLE ... ADD PRIMARY KEY on the loaded tables.
    pub keys: f64,
}

impl InitTimes {
    /// Reads pgbench's last line, `done in 1.27 s (drop tables 0.00 s, ...,
    /// client-side generate 0.82 s, ..., primary keys 0.31 s).`
    fn parse(out: &str) -> Option<InitTimes> {
        let line = out.lines().rev().find(|l| l.starts_with("done in "))?;
        let seconds = |after: &str| -> Option<f64> {
            let rest = &line[line.find(after)? + after.len()..];
            rest.trim_start().split(' ').next()?.parse().ok()
        };
        Some(InitTimes {
            total: seconds("done in")?,
            generate: seconds("client-side generate")?,
            keys: seconds("primary keys")?,
        })
    }
}

/// `pgbench -i -s scale`: the TPC-B tables, loaded by pgbench itself.
pub fn init(pgbench: &Path, ep: &Endpoint, scale: u32) -> Res<InitTimes> {
    init_with(pgbench, ep, scale, &[])
}

/// [`init`] with more of `pgbench -i`'s options (`--unlogged-tables`).
pub fn init_with(pgbench: &Path, ep: &Endpoint, scale: u32, options: &[&str]) -> Res<InitTimes> {
    let bar = driver::phase(&format!("{}: pgbench -i -s {scale} {}", ep.system, options.join(" ")));
    let out = command(pgbench, ep).args(["-i", "-q", "-s", &scale.to_string()]).args(options).output()?;
    bar.finish_and_clear();
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("pgbench -i on {}: {err}", ep.system).into());
    }
    InitTimes::parse(&err).ok_or_else(|| format!("pgbench -i on {}: no times in {err:?}", ep.system).into())
}

/// pgbench's tables' totals on `ep`: the sums of the account, teller and
/// branch balances and of history's deltas (equal after any number of
/// TPC-B transactions), then history's rows and the accounts.
pub fn balances(ep: &Endpoint) -> Res<[i64; 6]> {
    let row = ep.connect()?.query_one(
        "SELECT (SELECT sum(abalance) FROM pgbench_accounts)::bigint, (SELECT sum(tbalance) FROM pgbench_tellers)::bigint, \
         (SELECT sum(bbalance) FROM pgbench_branches)::bigint, (SELECT sum(delta) FROM pgbench_history)::bigint, \
         (SELECT count(*) FROM pgbench_history), (SELECT count(*) FROM pgbench_accounts)",
        &[],
    )?;
    Ok(std::array::from_fn(|k| row.get::<_, Option<i64>>(k).unwrap_or(0)))
}

/// Runs `pgbench -n -T seconds -c clients -j threads` plus `args` against
/// `ep`, with a progress bar; its transaction log goes to `scratch` and is
/// removed once read.
pub fn run(
    pgbench: &Path,
    ep: &Endpoint,
    clients: usize,
    seconds: u64,
    args: &[&str],
    scratch: &Path,
    label: &str,
) -> Res<Outcome> {
    std::fs::create_dir_all(scratch)?;
    let prefix = scratch.join("pgbench_log");
    let threads = clients.min(std::thread::available_parallelism().map_or(2, |n| n.get())).to_string();
    let mut child = command(pgbench, ep)
        .args(["-n", "-T", &seconds.to_string(), "-c", &clients.to_string(), "-j", &threads, "-l"])
        .arg(format!("--log-prefix={}", prefix.display()))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let bar = driver::timed(label, seconds);
    let started = Instant::now();
    while child.try_wait()?.is_none() {
        std::thread::sleep(Duration::from_millis(200));
        bar.set_position(started.elapsed().as_secs().min(seconds));
    }
    bar.finish_and_clear();
    let out = child.wait_with_output()?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(format!("pgbench {} on {}: {text}", args.join(" "), ep.system).into());
    }
    let value = |key: &str| -> Option<f64> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        line[key.len()..].split_whitespace().next()?.parse().ok()
    };
    let processed =
        value("number of transactions actually processed:").ok_or_else(|| format!("no count in:\n{text}"))?;
    let tps = value("tps =").ok_or_else(|| format!("no tps in:\n{text}"))?;
    let failed = value("number of failed transactions:").unwrap_or(0.0) as u64;
    let hist = read_logs(scratch, "pgbench_log")?;
    Ok(Outcome {
        // pgbench's tps excludes connection time; keep its rate.
        seconds: processed / tps.max(1e-9),
        hist,
        committed: processed as u64,
        retries: 0,
        rolled_back: failed,
        warmup_committed: 0,
    })
}

/// Every transaction's latency (the third field, microseconds) from the
/// per-transaction logs under `dir` named `prefix.*`, which are removed.
fn read_logs(dir: &Path, prefix: &str) -> Res<Histogram<u64>> {
    let mut hist = Histogram::<u64>::new_with_bounds(1, 600_000_000, 3)?;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !name.starts_with(prefix) {
            continue;
        }
        for line in std::fs::read_to_string(&path)?.lines() {
            if let Some(us) = line.split_whitespace().nth(2).and_then(|t| t.parse::<u64>().ok()) {
                hist.saturating_record(us.max(1));
            }
        }
        std::fs::remove_file(&path)?;
    }
    Ok(hist)
}

#[cfg(test)]
mod tests {
    use super::InitTimes;

    #[test]
    fn reads_the_load_times() {
        let t = InitTimes::parse(
            "creating tables...\ndone in 1.27 s (drop tables 0.00 s, create tables 0.00 s, client-side generate 0.82 s, \
             vacuum 0.14 s, primary keys 0.31 s).\n",
        )
        .expect("times");
        assert_eq!((t.total, t.generate, t.keys), (1.27, 0.82, 0.31));
        assert!(InitTimes::parse("done\n").is_none());
    }
}
