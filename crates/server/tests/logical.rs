//! Logical decoding with PostgreSQL's own client, `pg_recvlogical`:
//!
//! - it follows 8 pgbench clients running TPC-B, and every committed
//!   transaction appears exactly once, in commit order: each branch,
//!   teller and account balance in the feed moves by exactly the delta of
//!   the history row its transaction inserted, and the feed's last values
//!   are the tables' contents;
//! - the server is killed (SIGKILL) while it streams; after a restart the
//!   client resumes from the slot: every acknowledged commit is there, and
//!   the only transactions delivered twice are the unconfirmed tail before
//!   the crash, delivered again, in order, at the start of the resumed
//!   stream;
//! - a PostgreSQL 15 server subscribes to a Centum publication (pgoutput)
//!   while 8 clients run the sales-order workload (W1): its table sync
//!   copies each table in a snapshot that meets the stream exactly, and
//!   once the workload stops its tables hold what Centum's hold, row for
//!   row (a checksum of every column of every table on both sides);
//! - the same subscriber, with Centum killed (SIGKILL) mid-stream and
//!   restarted, resumes from its slot and ends in step, nothing lost and
//!   nothing applied twice.

mod common;
#[path = "../../sql/tests/pg/mod.rs"]
mod pg;

use common::{pgbench, psql, require, run_ok, Server};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One decoded transaction: its xid and its change lines.
#[derive(Debug, Clone, PartialEq)]
struct Txn {
    xid: u64,
    lines: Vec<String>,
}

/// The whole transactions in pg_recvlogical's output (a trailing one cut
/// by a crash is left out).
fn transactions(text: &str) -> Vec<Txn> {
    let mut out = Vec::new();
    let mut open: Option<Txn> = None;
    for line in text.lines() {
        if let Some(x) = line.strip_prefix("BEGIN ") {
            assert!(open.is_none(), "BEGIN inside a transaction: {line}");
            open = Some(Txn { xid: x.parse().unwrap(), lines: Vec::new() });
        } else if let Some(x) = line.strip_prefix("COMMIT ") {
            let t = open.take().expect("COMMIT without BEGIN");
            assert_eq!(t.xid.to_string(), x, "COMMIT names its BEGIN's xid");
            out.push(t);
        } else if !line.is_empty() {
            open.as_mut().expect("a change outside a transaction").lines.push(line.to_string());
        }
    }
    out
}

/// The integer after `name[type]:` in a change line.
fn int(line: &str, field: &str) -> i64 {
    let at = line.find(field).unwrap_or_else(|| panic!("{field} in {line}")) + field.len();
    let rest = &line[at..];
    let end = rest.find(' ').unwrap_or(rest.len());
    rest[..end].parse().unwrap_or_else(|_| panic!("{field} in {line}"))
}

fn recvlogical(bin: &Path, server: &Server, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(["-h", "127.0.0.1", "-p", &server.port.to_string(), "-U", "centum", "-d", "postgres"]).args(args);
    c
}

/// Starts streaming slot `slot` into `out`, confirming every second.
fn stream(bin: &Path, server: &Server, slot: &str, out: &Path, once: bool) -> Child {
    let mut c = recvlogical(bin, server, &["--slot", slot, "--start", "-F", "1", "-s", "1", "-f"]);
    c.arg(out);
    if once {
        c.arg("--no-loop");
    }
    c.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("start pg_recvlogical")
}

/// Stops pg_recvlogical as a user would (SIGINT: it confirms and exits).
fn interrupt(mut child: Child) {
    let _ = Command::new("kill").arg("-INT").arg(child.id().to_string()).status();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "pg_recvlogical did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `done` holds for the transactions in `file`.
fn wait_for(file: &Path, what: &str, done: impl Fn(&[Txn]) -> bool) -> Vec<Txn> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let txns = transactions(&std::fs::read_to_string(file).unwrap_or_default());
        if done(&txns) {
            return txns;
        }
        assert!(
            Instant::now() < deadline,
            "the feed never showed {what}; it has {} transactions",
            txns.len()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn pg_recvlogical_follows_tpcb_at_8_clients_with_every_transaction_once_in_commit_order() {
    let (Some(recv), Some(bench), Some(psql_bin)) =
        (require("pg_recvlogical"), require("pgbench"), require("psql"))
    else {
        return;
    };
    let server = Server::start(&["--wal-level", "logical"]);
    pgbench(&bench, &server, &[], &["-i", "-s", "1", "-q"]);
    run_ok(&mut recvlogical(&recv, &server, &["--slot", "tpcb", "--create-slot", "-P", "test_decoding"]));
    let file = server.dir.path().join("feed.txt");
    let child = stream(&recv, &server, "tpcb", &file, false);
    const CLIENTS: usize = 8;
    const PER_CLIENT: usize = 100;
    let out = pgbench(&bench, &server, &[], &["-n", "-c", "8", "-j", "2", "-t", &PER_CLIENT.to_string()]);
    common::assert_all_ran(&out, (CLIENTS * PER_CLIENT) as u32, "TPC-B");
    let is_tpcb = |t: &Txn| t.lines.iter().any(|l| l.starts_with("table public.pgbench_history: INSERT:"));
    let txns = wait_for(&file, "every TPC-B transaction", |t| t.iter().filter(|t| is_tpcb(t)).count() >= 800);
    interrupt(child);
    // Each transaction once, in commit order.
    assert!(txns.windows(2).all(|w| w[0].xid < w[1].xid), "transactions out of commit order");
    let tpcb: Vec<&Txn> = txns.iter().filter(|t| is_tpcb(t)).collect();
    assert_eq!(tpcb.len(), CLIENTS * PER_CLIENT, "each committed transaction exactly once");
    // Every balance moves by its transaction's delta, from the last value
    // the feed showed for that row.
    let mut last: HashMap<(&str, i64), i64> = HashMap::new();
    for t in &tpcb {
        assert_eq!(t.lines.len(), 4, "3 updates and an insert: {:?}", t.lines);
        let history = t.lines.iter().find(|l| l.contains("pgbench_history")).unwrap();
        let delta = int(history, "delta[integer]:");
        for (table, key, balance) in [
            ("pgbench_accounts", "aid[integer]:", "abalance[integer]:"),
            ("pgbench_tellers", "tid[integer]:", "tbalance[integer]:"),
            ("pgbench_branches", "bid[integer]:", "bbalance[integer]:"),
        ] {
            let prefix = format!("table public.{table}: UPDATE: ");
            let line =
                t.lines.iter().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("{table}: {t:?}"));
            let id = int(line, key);
            assert_eq!(id, int(history, key), "the history row names the updated {table} row");
            let before = last.get(&(table, id)).copied().unwrap_or(0);
            assert_eq!(int(line, balance), before + delta, "{table} {id} in transaction {}", t.xid);
            last.insert((table, id), before + delta);
        }
    }
    // The feed's last values are the tables'.
    let mut from_db: BTreeMap<(String, i64), i64> = BTreeMap::new();
    for (table, key, balance) in [
        ("pgbench_tellers", "tid", "tbalance"),
        ("pgbench_branches", "bid", "bbalance"),
        ("pgbench_accounts", "aid", "abalance"),
    ] {
        let rows = psql(
            &psql_bin,
            &server,
            &["-At", "-F", ",", "-c", &format!("SELECT {key}, {balance} FROM {table} WHERE {balance} <> 0")],
        );
        for r in rows.lines() {
            let (k, v) = r.split_once(',').unwrap();
            from_db.insert((table.to_string(), k.parse().unwrap()), v.parse().unwrap());
        }
    }
    let from_feed: BTreeMap<(String, i64), i64> =
        last.iter().filter(|(_, &v)| v != 0).map(|(&(t, k), &v)| ((t.to_string(), k), v)).collect();
    assert_eq!(from_feed, from_db);
    // The slot is listed, and confirmed up to the end of the feed.
    let slots = psql(
        &psql_bin,
        &server,
        &["-At", "-c", "SELECT slot_name, plugin, active FROM pg_replication_slots"],
    );
    assert_eq!(slots.trim(), "tpcb|test_decoding|f");
}

#[test]
fn a_kill_mid_stream_then_a_resume_from_the_slot_loses_nothing_and_repeats_only_the_unconfirmed_tail() {
    let (Some(recv), Some(psql_bin)) = (require("pg_recvlogical"), require("psql")) else { return };
    let args = ["--wal-level", "logical"];
    let mut server = Server::start(&args);
    psql(&psql_bin, &server, &["-c", "CREATE TABLE t (id int PRIMARY KEY, v text)"]);
    run_ok(&mut recvlogical(&recv, &server, &["--slot", "s", "--create-slot", "-P", "test_decoding"]));
    let before = server.dir.path().join("before.txt");
    let child = stream(&recv, &server, "s", &before, true);
    // One writer, each insert its own transaction, until the kill.
    let conninfo = server.conninfo("centum");
    let writer = std::thread::spawn(move || {
        let mut c = postgres::Client::connect(&conninfo, postgres::NoTls).unwrap();
        let mut acked = Vec::new();
        for id in 1.. {
            match c.execute("INSERT INTO t VALUES ($1, 'before')", &[&id]) {
                Ok(_) => {
                    acked.push(id);
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(_) => return (acked, id),
            }
        }
        unreachable!()
    });
    // Let the client confirm part of the stream, then crash mid-stream.
    let confirmed =
        || psql(&psql_bin, &server, &["-At", "-c", "SELECT confirmed_flush_lsn FROM pg_replication_slots"]);
    let created = confirmed();
    wait_for(&before, "200 transactions", |t| t.len() >= 200);
    let deadline = Instant::now() + Duration::from_secs(30);
    while confirmed() == created {
        assert!(Instant::now() < deadline, "pg_recvlogical never confirmed a position");
        std::thread::sleep(Duration::from_millis(50));
    }
    server.kill9();
    let (acked, attempted) = writer.join().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut child = child;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "pg_recvlogical --no-loop did not notice the crash");
        std::thread::sleep(Duration::from_millis(20));
    }
    server.launch(&args, &[]);
    let after = server.dir.path().join("after.txt");
    let child = stream(&recv, &server, "s", &after, false);
    let mut c = postgres::Client::connect(&server.conninfo("centum"), postgres::NoTls).unwrap();
    let more: Vec<i32> = (attempted + 1..attempted + 51).collect();
    for id in &more {
        c.execute("INSERT INTO t VALUES ($1, 'after')", &[id]).unwrap();
    }
    let last = *more.last().unwrap();
    let resumed = wait_for(&after, "the inserts after the restart", |t| {
        t.iter().any(|t| t.lines.iter().any(|l| l.contains(&format!("id[integer]:{last} "))))
    });
    interrupt(child);
    let first = transactions(&std::fs::read_to_string(&before).unwrap());
    for run in [&first, &resumed] {
        assert!(
            run.windows(2).all(|w| w[0].xid < w[1].xid),
            "each run in commit order, each transaction once"
        );
    }
    // The repeated transactions are the tail of the first run, delivered
    // again whole at the start of the resumed one; the confirmed ones are
    // not.
    let repeated = resumed.iter().take_while(|t| first.iter().any(|f| f.xid == t.xid)).count();
    assert!(resumed[repeated..].iter().all(|t| first.iter().all(|f| f.xid != t.xid)));
    assert_eq!(&first[first.len() - repeated..], &resumed[..repeated], "the unconfirmed tail, again");
    assert!(repeated < first.len(), "the confirmed transactions are not delivered again");
    // Nothing acknowledged is lost, and nothing unknown appears.
    let ids: Vec<i32> = first
        .iter()
        .chain(&resumed[repeated..])
        .flat_map(|t| t.lines.iter().map(|l| int(l, "id[integer]:") as i32))
        .collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len(), "an insert delivered twice past the confirmed position");
    for id in acked.iter().chain(&more) {
        assert!(sorted.binary_search(id).is_ok(), "acknowledged insert {id} missing from the feed");
    }
    assert!(sorted.iter().all(|&id| id <= attempted || more.contains(&id)));
}

#[test]
fn replication_commands_over_psql_follow_postgresql_rules_for_slots() {
    let Some(psql_bin) = require("psql") else { return };
    let plain = Server::start(&[]);
    let url = |s: &Server| format!("{}?replication=database", s.url("centum"));
    // Each `-c` in turn, on one connection.
    let run_all = |s: &Server, sqls: &[&str]| {
        let mut c = Command::new(&psql_bin);
        c.args([url(s).as_str(), "-X", "-At", "-v", "ON_ERROR_STOP=1"]);
        for sql in sqls {
            c.args(["-c", sql]);
        }
        c.output().expect("run psql")
    };
    let run = |s: &Server, sql: &str| run_all(s, &[sql]);
    let text = |o: &std::process::Output| {
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
    };
    // Without wal_level = logical there are no logical slots.
    let o = run(&plain, "CREATE_REPLICATION_SLOT s LOGICAL test_decoding");
    assert!(text(&o).contains("logical decoding requires wal_level >= logical"), "{}", text(&o));
    let server = Server::start(&["--wal-level", "logical"]);
    // IDENTIFY_SYSTEM names the database; SQL works on the same connection.
    let o = run(&server, "IDENTIFY_SYSTEM");
    assert!(text(&o).trim_end().ends_with("|postgres"), "{}", text(&o));
    // A temporary slot is its session's, listed as active, and goes with it.
    let o = run_all(
        &server,
        &[
            "CREATE_REPLICATION_SLOT tmp TEMPORARY LOGICAL test_decoding (SNAPSHOT 'nothing')",
            "SELECT slot_name, temporary, active FROM pg_replication_slots",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("tmp|t|t"), "{}", text(&o));
    // A session drops its own temporary slot, WAIT or not.
    let o = run_all(
        &server,
        &[
            "CREATE_REPLICATION_SLOT mine TEMPORARY LOGICAL test_decoding",
            "DROP_REPLICATION_SLOT mine WAIT",
            "SELECT count(*) FROM pg_replication_slots",
        ],
    );
    assert!(o.status.success() && text(&o).trim_end().ends_with('0'), "{}", text(&o));
    assert_eq!(
        psql(&psql_bin, &server, &["-At", "-c", "SELECT count(*) FROM pg_replication_slots"]).trim(),
        "0"
    );
    // PostgreSQL's errors for names, plugins, duplicates and missing slots.
    for (sql, message) in [
        ("CREATE_REPLICATION_SLOT \"Bad-Name\" LOGICAL test_decoding", "contains invalid character"),
        ("CREATE_REPLICATION_SLOT s LOGICAL no_such_plugin", "could not access file \"no_such_plugin\""),
        ("DROP_REPLICATION_SLOT nothing", "replication slot \"nothing\" does not exist"),
        ("START_REPLICATION SLOT nothing LOGICAL 0/0", "replication slot \"nothing\" does not exist"),
        ("START_REPLICATION SLOT nothing PHYSICAL 0/0", "physical replication is not supported"),
    ] {
        let o = run(&server, sql);
        assert!(!o.status.success() && text(&o).contains(message), "{sql}: {}", text(&o));
    }
    assert!(run(&server, "CREATE_REPLICATION_SLOT keep LOGICAL test_decoding").status.success());
    let o = run(&server, "CREATE_REPLICATION_SLOT keep LOGICAL test_decoding");
    assert!(text(&o).contains("replication slot \"keep\" already exists"), "{}", text(&o));
    assert!(run(&server, "DROP_REPLICATION_SLOT keep").status.success());
    // SNAPSHOT 'use' comes first in a READ ONLY REPEATABLE READ block, and
    // the block then reads the slot's starting state.
    let use_slot = "CREATE_REPLICATION_SLOT sync LOGICAL pgoutput (SNAPSHOT 'use')";
    for (setup, message) in [
        (None, "must be called inside a transaction"),
        (Some("BEGIN READ ONLY"), "must be called in REPEATABLE READ isolation mode transaction"),
        (Some("BEGIN ISOLATION LEVEL REPEATABLE READ"), "must be called in a read only transaction"),
    ] {
        let o = run_all(&server, &setup.into_iter().chain([use_slot]).collect::<Vec<_>>());
        assert!(!o.status.success() && text(&o).contains(message), "{setup:?}: {}", text(&o));
    }
    psql(
        &psql_bin,
        &server,
        &["-c", "CREATE TABLE t (id int PRIMARY KEY)", "-c", "INSERT INTO t VALUES (1)"],
    );
    let o = run_all(&server, &["BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ", "SELECT 1", use_slot]);
    assert!(text(&o).contains("must be called before any query"), "{}", text(&o));
    let o = run_all(
        &server,
        &[
            "BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ",
            use_slot,
            "COPY t TO STDOUT",
            "COMMIT",
            "SELECT slot_name, plugin FROM pg_replication_slots",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("sync|pgoutput"), "{}", text(&o));
    let o = run(
        &server,
        "START_REPLICATION SLOT sync LOGICAL 0/0 (proto_version '1', publication_names '\"none\"')",
    );
    assert!(text(&o).contains("publication \"none\" does not exist"), "{}", text(&o));
    let o =
        run(&server, "START_REPLICATION SLOT sync LOGICAL 0/0 (proto_version '4', publication_names 'p')");
    assert!(text(&o).contains("server only supports protocol 3 or lower"), "{}", text(&o));
    assert!(run(&server, "DROP_REPLICATION_SLOT sync WAIT").status.success());
}

fn example(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sales-orders").join(file)
}

/// Per table of `tables`: its row count and an MD5 of every column of
/// every row, in the order of all its columns; the same text on Centum
/// and PostgreSQL when they hold the same rows.
fn checksums(client: &mut postgres::Client, tables: &[(String, Vec<String>)]) -> Vec<String> {
    tables
        .iter()
        .map(|(t, cols)| {
            let list = cols.join(", ");
            let sql = format!(
                "SELECT count(*)::text || ':' || coalesce(md5(string_agg(concat_ws('|', {list}), ',' ORDER BY {list})), '') FROM {t}"
            );
            let sum: String = client.query_one(sql.as_str(), &[]).unwrap().get(0);
            format!("{t} {sum}")
        })
        .collect()
}

/// Centum with the sales-order schema and a FOR ALL TABLES publication,
/// and a PostgreSQL cluster with the same tables, empty.
struct Subscribed {
    server: Server,
    centum: postgres::Client,
    sub: pg::Server,
    pgc: postgres::Client,
    /// The published tables with their columns.
    tables: Vec<(String, Vec<String>)>,
    bench: std::path::PathBuf,
}

impl Subscribed {
    fn start() -> Option<Subscribed> {
        let (Some(bench), Some(psql_bin)) = (require("pgbench"), require("psql")) else { return None };
        let bin = pg::required_bin("the PostgreSQL subscriber test")?;
        let server = Server::start(&["--wal-level", "logical"]);
        psql(&psql_bin, &server, &["-f", example("centum.sql").to_str().unwrap()]);
        psql(&psql_bin, &server, &["-c", "CREATE PUBLICATION w1 FOR ALL TABLES"]);
        let mut centum = postgres::Client::connect(&server.conninfo("centum"), postgres::NoTls).unwrap();
        let tables: Vec<(String, Vec<String>)> = centum
            .query("SELECT tablename FROM pg_publication_tables WHERE pubname = 'w1' ORDER BY tablename", &[])
            .unwrap()
            .iter()
            .map(|r| {
                let t: String = r.get(0);
                let cols = centum
                    .query(
                        "SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position",
                        &[&t],
                    )
                    .unwrap()
                    .iter()
                    .map(|c| c.get::<_, String>(0))
                    .collect();
                (t, cols)
            })
            .collect();
        assert_eq!(tables.len(), 6, "{tables:?}");
        let sub = pg::Server::start(bin);
        let sub_url = format!("host=127.0.0.1 port={} user=postgres dbname=postgres", sub.port);
        run_ok(
            Command::new(&psql_bin)
                .arg(&sub_url)
                .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-f"])
                .arg(example("postgres.sql")),
        );
        let mut pgc = sub.connect("postgres").unwrap();
        let names: Vec<&str> = tables.iter().map(|(t, _)| t.as_str()).collect();
        pgc.batch_execute(&format!("TRUNCATE {} CASCADE", names.join(", "))).unwrap();
        Some(Subscribed { server, centum, sub, pgc, tables, bench })
    }

    fn connection(&self) -> String {
        format!("host=127.0.0.1 port={} user=centum dbname=postgres", self.server.port)
    }

    /// Starts W1 (8 clients, `secs` seconds) in the background.
    fn w1(&self, secs: u64) -> std::process::Child {
        Command::new(&self.bench)
            .args(["-h", "127.0.0.1", "-p", &self.server.port.to_string(), "-U", "centum"])
            .args(["-n", "-M", "prepared", "-c", "8", "-j", "2", "-T", &secs.to_string(), "-f"])
            .arg(example("insert-order.pgbench"))
            .arg("postgres")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Waits until every table is synced and holds Centum's rows; returns
    /// the checksums.
    fn wait_in_step(&mut self) -> Vec<String> {
        let want = checksums(&mut self.centum, &self.tables);
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            let pending: i64 = self
                .pgc
                .query_one("SELECT count(*) FROM pg_subscription_rel WHERE srsubstate <> 'r'", &[])
                .unwrap()
                .get(0);
            let got = checksums(&mut self.pgc, &self.tables);
            if pending == 0 && got == want {
                // Nothing was applied twice or refused on the way.
                let log = self.sub.log();
                assert!(!log.contains("duplicate key"), "a change was applied twice:\n{log}");
                return want;
            }
            assert!(
                Instant::now() < deadline,
                "the subscriber did not catch up: {pending} tables not ready\ncentum: {want:#?}\npostgres: {got:#?}\nsubscriber log:\n{}",
                self.sub.log()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn orders(&mut self) -> i64 {
        self.centum.query_one("SELECT count(*) FROM sales_order_header", &[]).unwrap().get(0)
    }
}

#[test]
fn a_postgresql_15_subscriber_ends_with_centums_tables_after_w1() {
    let Some(mut s) = Subscribed::start() else { return };
    // The workload's length: 30 s, as the change feed's goal asks.
    let secs: u64 = std::env::var("CENTUM_SUBSCRIBER_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(30);
    // W1 runs; the subscription starts while it does, so each table's
    // copy is taken under load.
    let w1 = s.w1(secs);
    std::thread::sleep(Duration::from_secs(2.min(secs)));
    s.pgc
        .batch_execute(&format!("CREATE SUBSCRIPTION w1 CONNECTION '{}' PUBLICATION w1", s.connection()))
        .unwrap();
    let out = w1.wait_with_output().unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && report.contains("number of failed transactions: 0 (0.000%)"), "{report}");
    let orders = s.orders();
    assert!(orders > 0, "W1 inserted no order:\n{report}");
    let sums = s.wait_in_step();
    eprintln!("{orders} orders in {secs} s; subscriber in step: {sums:?}");
    s.pgc.batch_execute("DROP SUBSCRIPTION w1").unwrap();
    let slots: i64 = s.centum.query_one("SELECT count(*) FROM pg_replication_slots", &[]).unwrap().get(0);
    assert_eq!(slots, 0, "DROP SUBSCRIPTION drops its slot on the publisher");
}

/// Centum is killed (SIGKILL) while W1 runs and the subscriber applies
/// its stream; after a restart the subscriber is pointed at the new port
/// and resumes from its slot: it ends with Centum's rows, none applied
/// twice (an insert applied again would fail on its key and stall the
/// subscription) and none missing.
#[test]
fn a_postgresql_subscriber_resumes_without_loss_or_repeats_after_centum_is_killed() {
    let Some(mut s) = Subscribed::start() else { return };
    s.pgc
        .batch_execute(&format!("CREATE SUBSCRIPTION w1 CONNECTION '{}' PUBLICATION w1", s.connection()))
        .unwrap();
    s.wait_in_step();
    let w1 = s.w1(30);
    std::thread::sleep(Duration::from_secs(4));
    s.server.kill9();
    // The clients fail with the server; what they had acknowledged is
    // durable.
    let _ = w1.wait_with_output();
    s.server.launch(&["--wal-level", "logical"], &[]);
    s.centum = postgres::Client::connect(&s.server.conninfo("centum"), postgres::NoTls).unwrap();
    s.pgc.batch_execute(&format!("ALTER SUBSCRIPTION w1 CONNECTION '{}'", s.connection())).unwrap();
    let more = s.w1(3);
    let out = more.wait_with_output().unwrap();
    assert!(out.status.success(), "W1 after the restart: {}", String::from_utf8_lossy(&out.stderr));
    let orders = s.orders();
    let sums = s.wait_in_step();
    eprintln!("{orders} orders across a kill; subscriber in step: {sums:?}");
}
