//! The real pgbench against the real server: `pgbench -i -s 10` with the
//! default steps (client-side generation through COPY) and with
//! server-side generation (`-I dtGvp`), then the built-in TPC-B script in
//! all three query modes (`-M simple`, `extended`, `prepared`) at 1, 8 and
//! 32 clients. Every run must finish with zero failed transactions, and
//! afterwards the money must add up: what the accounts, tellers and
//! branches gained equals the sum of the deltas in pgbench_history.
//! Then 200 clients at scale 1, where every transaction updates the one
//! branch row and one of ten teller rows: writers queue on those rows and
//! build on each other's logged versions (early lock release), and still
//! none fails and the money adds up.
//!
//! Runs are bounded by transaction count (`-t`), not time, so the test
//! does the same work on any machine.

mod common;

use common::{assert_all_ran, psql, require, Server};
use std::path::Path;

/// Transactions per client in each run.
const TXNS: &str = "60";

fn pgbench(bin: &Path, server: &Server, args: &[&str]) -> String {
    common::pgbench(bin, server, &[], args)
}

/// One TPC-B run; checks pgbench's own report.
fn tpcb(bin: &Path, server: &Server, mode: &str, clients: u32) {
    let c = clients.to_string();
    let j = clients.min(2).to_string();
    let out = pgbench(bin, server, &["-n", "-M", mode, "-c", &c, "-j", &j, "-t", TXNS]);
    assert_all_ran(&out, clients * 60, &format!("-M {mode} -c {clients}"));
}

/// Sum of balances of each table, and of history's deltas.
fn balances(psql_bin: &Path, server: &Server) -> (i64, i64, i64, i64) {
    let q = "SELECT (SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts), \
             (SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers), \
             (SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches), \
             (SELECT coalesce(sum(delta), 0) FROM pgbench_history)";
    let out = psql(psql_bin, server, &["-At", "-F", ",", "-c", q]);
    let v: Vec<i64> = out.trim().split(',').map(|x| x.parse().unwrap()).collect();
    (v[0], v[1], v[2], v[3])
}

fn count(psql_bin: &Path, server: &Server, table: &str) -> i64 {
    psql(psql_bin, server, &["-At", "-c", &format!("SELECT count(*) FROM {table}")]).trim().parse().unwrap()
}

fn check_scale_10(psql_bin: &Path, server: &Server) {
    assert_eq!(count(psql_bin, server, "pgbench_accounts"), 1_000_000);
    assert_eq!(count(psql_bin, server, "pgbench_tellers"), 100);
    assert_eq!(count(psql_bin, server, "pgbench_branches"), 10);
    assert_eq!(count(psql_bin, server, "pgbench_history"), 0);
}

fn check_balances(psql_bin: &Path, server: &Server, runs: i64) {
    let (a, t, b, h) = balances(psql_bin, server);
    assert_eq!((a, t, b), (h, h, h), "accounts, tellers and branches must each gain the history's deltas");
    assert_eq!(count(psql_bin, server, "pgbench_history"), runs * 60);
}

#[test]
fn two_hundred_clients_on_one_branch_row_all_commit_and_the_money_adds_up() {
    let (Some(bin), Some(psql_bin)) = (require("pgbench"), require("psql")) else { return };
    let server = Server::start(&["--max-connections", "250"]);
    pgbench(&bin, &server, &["-i", "-s", "1", "-q"]);
    tpcb(&bin, &server, "prepared", 200);
    check_balances(&psql_bin, &server, 200);
}

#[test]
fn pgbench_initialises_and_runs_tpcb_in_every_mode() {
    let (Some(bin), Some(psql_bin)) = (require("pgbench"), require("psql")) else { return };
    let server = Server::start(&[]);

    // Default steps: drop, create, client-side generation (COPY), vacuum,
    // primary keys.
    pgbench(&bin, &server, &["-i", "-s", "10", "-q"]);
    check_scale_10(&psql_bin, &server);
    let mut clients_total = 0;
    for mode in ["simple", "extended", "prepared"] {
        for clients in [1, 8, 32] {
            tpcb(&bin, &server, mode, clients);
            clients_total += clients as i64;
        }
    }
    check_balances(&psql_bin, &server, clients_total);

    // Server-side generation: INSERT ... SELECT FROM generate_series.
    pgbench(&bin, &server, &["-i", "-s", "10", "-I", "dtGvp"]);
    check_scale_10(&psql_bin, &server);
    tpcb(&bin, &server, "prepared", 8);
    check_balances(&psql_bin, &server, 8);
}
