//! A replicated group of three servers on loopback, driven by real clients:
//! commits on the primary reach both standbys, which serve reads and refuse
//! writes (25006); after the primary is killed with SIGKILL a new one takes
//! writes, found by a multi-host connection string with
//! `target_session_attrs=read-write`, and no acknowledged commit is lost;
//! the old primary, restarted, catches up as a standby.

mod common;
#[path = "../../sql/tests/pg/mod.rs"]
mod pg;
use common::wire::{message, Wire};
use common::{connect, free_ports, is_primary, member_args, Server};
use std::time::{Duration, Instant};

fn as_strs(a: &[String]) -> Vec<&str> {
    a.iter().map(String::as_str).collect()
}

fn in_recovery(port: u16) -> Option<bool> {
    let mut c = connect(port)?;
    c.query_one("SELECT pg_is_in_recovery()", &[]).ok().map(|r| r.get(0))
}

/// The member that is the primary, once one is (and has its superuser).
fn primary(servers: &[Server], within: Duration) -> usize {
    let deadline = Instant::now() + within;
    loop {
        for (i, s) in servers.iter().enumerate() {
            if s.port != 0 && is_primary(s.port) {
                return i;
            }
        }
        assert!(Instant::now() < deadline, "no primary within {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn count(port: u16) -> Option<i64> {
    connect(port)?.query_one("SELECT count(*) FROM items", &[]).ok().map(|r| r.get(0))
}

fn wait_count(port: u16, want: i64, within: Duration) {
    let deadline = Instant::now() + within;
    while count(port) != Some(want) {
        assert!(Instant::now() < deadline, "port {port} has {:?} rows, not {want}", count(port));
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts a member for each set of flags and, once one is the primary,
/// creates table `items` there with `rows` rows; returns the members, the
/// primary's place among them and a connection to it.
fn group_with_items(args: &[Vec<String>], rows: i32) -> (Vec<Server>, usize, postgres::Client) {
    let servers: Vec<Server> = args.iter().map(|a| Server::start(&as_strs(a))).collect();
    let first = primary(&servers, Duration::from_secs(30));
    let mut p = connect(servers[first].port).unwrap();
    p.batch_execute("CREATE TABLE items (id int PRIMARY KEY, note text NOT NULL)").unwrap();
    for i in 0..rows {
        p.execute("INSERT INTO items VALUES ($1, $2)", &[&i, &format!("row {i}")]).unwrap();
    }
    (servers, first, p)
}

#[test]
fn a_three_member_group_replicates_fails_over_and_catches_up() {
    let ports = free_ports(3);
    let args = member_args(&ports);
    let (mut servers, first, mut p) = group_with_items(&args, 100);
    p.batch_execute(
        "UPDATE items SET note = note || '!' WHERE id % 10 = 0; DELETE FROM items WHERE id >= 95",
    )
    .unwrap();
    // What a primary that died in the middle of changing a column's type
    // leaves: the rewritten copy beside the table. The next primary
    // finishes the change (here: the copy goes, the table stays).
    p.batch_execute("CREATE TABLE \"items$rewrite\" (id int PRIMARY KEY, note text NOT NULL)").unwrap();
    for (i, s) in servers.iter().enumerate().filter(|(i, _)| *i != first) {
        wait_count(s.port, 95, Duration::from_secs(20));
        let mut c = connect(s.port).unwrap();
        let note: String = c.query_one("SELECT note FROM items WHERE id = 10", &[]).unwrap().get(0);
        assert_eq!(note, "row 10!", "member {i}");
        let e = c.execute("INSERT INTO items VALUES (1000, 'x')", &[]).unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("25006"), "{e}");
        let ro: String = c.query_one("SHOW transaction_read_only", &[]).unwrap().get(0);
        assert_eq!(ro, "on");
    }
    drop(p);
    // A session open on each standby was told it is on a standby.
    let mut wires: Vec<(usize, Wire)> = (0..3)
        .filter(|&i| i != first)
        .map(|i| {
            let w = Wire::connect(servers[i].port, "centum");
            let told = w.parameters.iter().find(|(k, _)| k == "in_hot_standby").map(|(_, v)| v.clone());
            assert_eq!(told.as_deref(), Some("on"), "member {i}");
            (i, w)
        })
        .collect();
    // The primary dies; a client that asks for a read-write server finds
    // the new primary among the three addresses.
    servers[first].kill9();
    let killed = Instant::now();
    let multi = format!(
        "host=127.0.0.1,127.0.0.1,127.0.0.1 port={},{},{} user=centum dbname=postgres connect_timeout=2 target_session_attrs=read-write",
        servers[0].port, servers[1].port, servers[2].port
    );
    let took = loop {
        let done = postgres::Client::connect(&multi, postgres::NoTls)
            .and_then(|mut c| c.execute("INSERT INTO items VALUES (1000, 'after failover')", &[]));
        if done.is_ok() {
            break killed.elapsed();
        }
        assert!(killed.elapsed() < Duration::from_secs(30), "no write after failover: {done:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    println!("first commit on the new primary {:.2} s after the kill", took.as_secs_f64());
    let second = primary(&servers, Duration::from_secs(5));
    assert_ne!(second, first);
    wait_count(servers[second].port, 96, Duration::from_secs(5));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let copies: i64 = connect(servers[second].port)
            .unwrap()
            .query_one("SELECT count(*) FROM pg_tables WHERE tablename LIKE '%$rewrite'", &[])
            .unwrap()
            .get(0);
        if copies == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the new primary left the half-done column change");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The session on the new primary hears of it before its next
    // ReadyForQuery, as a PostgreSQL client does after a promotion; the
    // other one hears nothing.
    for (i, w) in &mut wires {
        w.parameters.clear();
        w.round(&message(b'Q', b"SELECT 1\0"), 1);
        let told: Vec<_> = w.parameters.iter().filter(|(k, _)| k == "in_hot_standby").collect();
        if *i == second {
            assert_eq!(told, vec![&("in_hot_standby".to_string(), "off".to_string())]);
        } else {
            assert!(told.is_empty(), "{told:?}");
        }
    }
    // The old primary comes back as a standby and catches up.
    let a = as_strs(&args[first]);
    servers[first].launch(&a, &[]);
    wait_count(servers[first].port, 96, Duration::from_secs(30));
    assert_eq!(in_recovery(servers[first].port), Some(true));
    let mut c = connect(servers[first].port).unwrap();
    let note: String = c.query_one("SELECT note FROM items WHERE id = 1000", &[]).unwrap().get(0);
    assert_eq!(note, "after failover");
}

/// The rows a slot's feed inserted into `items`, in order, read with
/// `how` (`get`: confirmed as read; `peek`: not).
fn decoded_ids(c: &mut postgres::Client, how: &str) -> Vec<i32> {
    let sql = format!("SELECT data FROM pg_logical_slot_{how}_changes('feed', NULL, NULL)");
    c.query(&sql, &[])
        .unwrap()
        .iter()
        .filter_map(|r| {
            let line: String = r.get(0);
            let rest = line.strip_prefix("table public.items: INSERT: id[integer]:")?;
            rest.split(' ').next()?.parse().ok()
        })
        .collect()
}

#[test]
fn logical_decoding_runs_on_the_primary_and_its_slot_survives_a_failover() {
    let ports = free_ports(3);
    let mut args = member_args(&ports);
    // Standbys checkpoint (and purge their log) every 20 entries: the
    // slot must keep what it has not confirmed.
    for a in &mut args {
        a.extend(["--wal-level", "logical", "--snapshot-every", "20"].map(String::from));
    }
    let (mut servers, first, mut p) = group_with_items(&args, 0);
    p.execute("SELECT * FROM pg_create_logical_replication_slot('feed', 'test_decoding')", &[]).unwrap();
    let insert = |c: &mut postgres::Client, ids: std::ops::RangeInclusive<i32>| {
        for i in ids {
            c.execute("INSERT INTO items VALUES ($1, 'x')", &[&i]).unwrap();
        }
    };
    insert(&mut p, 1..=30);
    assert_eq!(decoded_ids(&mut p, "get"), (1..=30).collect::<Vec<_>>());
    // Not confirmed: these must survive the failover.
    insert(&mut p, 31..=100);
    assert_eq!(decoded_ids(&mut p, "peek"), (31..=100).collect::<Vec<_>>());
    let confirmed: String = p
        .query_one("SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'feed'", &[])
        .unwrap()
        .get(0);
    // Every member holds the slot at the same position; a standby changes
    // no slot.
    for (i, s) in servers.iter().enumerate().filter(|(i, _)| *i != first) {
        wait_count(s.port, 100, Duration::from_secs(20));
        let mut c = connect(s.port).unwrap();
        let there: String = c
            .query_one(
                "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'feed'",
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(there, confirmed, "member {i}");
        let e = c
            .execute("SELECT * FROM pg_create_logical_replication_slot('other', 'test_decoding')", &[])
            .unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("25006"), "{e}");
    }
    drop(p);
    servers[first].kill9();
    let second = primary(&servers, Duration::from_secs(30));
    let mut q = connect(servers[second].port).unwrap();
    insert(&mut q, 101..=110);
    // The new primary's feed resumes where the slot was confirmed: nothing
    // confirmed comes again, nothing after it is missing.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let ids = decoded_ids(&mut q, "peek");
        if ids.len() >= 80 || Instant::now() > deadline {
            assert_eq!(ids, (31..=110).collect::<Vec<_>>());
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(decoded_ids(&mut q, "get").len(), 80);
    assert!(decoded_ids(&mut q, "get").is_empty());
    q.execute("SELECT pg_drop_replication_slot('feed')", &[]).unwrap();
    let left: i64 = q.query_one("SELECT count(*) FROM pg_replication_slots", &[]).unwrap().get(0);
    assert_eq!(left, 0);
}

/// A PostgreSQL 15 subscriber follows the group through a multi-host
/// connection string: it copies the table, applies the stream, and after
/// the primary is killed resumes from the slot on the new primary with
/// every row once.
#[test]
fn a_postgresql_subscriber_follows_the_group_across_a_failover() {
    let Some(bin) = pg::required_bin("the group subscriber test") else { return };
    let ports = free_ports(3);
    let mut args = member_args(&ports);
    for a in &mut args {
        a.extend(["--wal-level", "logical", "--snapshot-every", "50"].map(String::from));
    }
    let (mut servers, first, mut p) = group_with_items(&args, 200);
    p.batch_execute("CREATE PUBLICATION items_pub FOR TABLE items").unwrap();
    let sub = pg::Server::start(bin);
    let mut pgc = sub.connect("postgres").unwrap();
    pgc.batch_execute("CREATE TABLE items (id int PRIMARY KEY, note text NOT NULL)").unwrap();
    let multi = format!(
        "host=127.0.0.1,127.0.0.1,127.0.0.1 port={},{},{} user=centum dbname=postgres target_session_attrs=read-write",
        servers[0].port, servers[1].port, servers[2].port
    );
    pgc.batch_execute(&format!("CREATE SUBSCRIPTION items_sub CONNECTION '{multi}' PUBLICATION items_pub"))
        .unwrap();
    let insert = |c: &mut postgres::Client, ids: std::ops::Range<i32>| {
        for i in ids {
            c.execute("INSERT INTO items VALUES ($1, 'streamed')", &[&i]).unwrap();
        }
    };
    let in_step = |pgc: &mut postgres::Client, want: i64| {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let (n, sum): (i64, i64) = pgc
                .query_one("SELECT count(*), coalesce(sum(id), 0) FROM items", &[])
                .map(|r| (r.get(0), r.get(1)))
                .unwrap();
            if n == want && sum == want * (want - 1) / 2 {
                return;
            }
            assert!(Instant::now() < deadline, "the subscriber has {n} rows, not {want}:\n{}", sub.log());
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    insert(&mut p, 200..400);
    in_step(&mut pgc, 400);
    drop(p);
    servers[first].kill9();
    let second = primary(&servers, Duration::from_secs(30));
    let mut q = connect(servers[second].port).unwrap();
    insert(&mut q, 400..600);
    in_step(&mut pgc, 600);
    let log = sub.log();
    assert!(!log.contains("duplicate key"), "a change was applied twice:\n{log}");
    pgc.batch_execute("DROP SUBSCRIPTION items_sub").unwrap();
    let slots: i64 = q.query_one("SELECT count(*) FROM pg_replication_slots", &[]).unwrap().get(0);
    assert_eq!(slots, 0, "DROP SUBSCRIPTION drops its slot on the new primary");
}

/// Whether the member's data directory holds a checkpoint.
fn checkpointed(s: &Server) -> bool {
    s.dir.path().join("data/raft/snapshot.bin").exists()
}

#[test]
fn standbys_checkpoint_and_a_member_that_lost_its_disk_is_sent_an_image() {
    let ports = free_ports(3);
    let mut args = member_args(&ports);
    for a in &mut args {
        a.extend(["--snapshot-every".to_string(), "20".to_string()]);
    }
    let (mut servers, first, mut p) = group_with_items(&args, 150);
    p.batch_execute("DELETE FROM items WHERE id < 10; UPDATE items SET note = 'changed' WHERE id = 10")
        .unwrap();
    let standbys: Vec<usize> = (0..3).filter(|&i| i != first).collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    for &i in &standbys {
        wait_count(servers[i].port, 140, Duration::from_secs(30));
        while !checkpointed(&servers[i]) {
            assert!(Instant::now() < deadline, "member {i} took no checkpoint");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    assert!(!checkpointed(&servers[first]), "the primary takes no checkpoint");
    // A standby restarted starts from its checkpoint and replays the rest.
    let s = standbys[0];
    servers[s].kill9();
    servers[s].launch(&as_strs(&args[s]), &[]);
    wait_count(servers[s].port, 140, Duration::from_secs(30));
    assert!(servers[s].log_text().contains("started from the checkpoint"), "{}", servers[s].log_text());
    // The primary dies and loses its disk; a standby, its log cut below
    // its checkpoint, takes over and sends the returning member an image.
    drop(p);
    servers[first].kill9();
    std::fs::remove_dir_all(servers[first].dir.path().join("data")).unwrap();
    let second = primary(&servers, Duration::from_secs(30));
    assert_ne!(second, first);
    let mut p = connect(servers[second].port).unwrap();
    p.execute("INSERT INTO items VALUES (1000, 'after failover')", &[]).unwrap();
    servers[first].launch(&as_strs(&args[first]), &[]);
    wait_count(servers[first].port, 141, Duration::from_secs(30));
    let log = servers[first].log_text();
    assert!(log.contains("installed an image of the group's tables"), "{log}");
    let mut c = connect(servers[first].port).unwrap();
    let note: String = c.query_one("SELECT note FROM items WHERE id = 10", &[]).unwrap().get(0);
    assert_eq!(note, "changed");
    // The rows the image brought are found by later deletes.
    p.execute("DELETE FROM items WHERE id < 50", &[]).unwrap();
    for s in &servers {
        wait_count(s.port, 101, Duration::from_secs(30));
    }
}

/// Runs the `centum` command with `args`.
fn centum(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_centum")).args(args).output().unwrap()
}

fn one<T: for<'a> postgres::types::FromSql<'a>>(port: u16, sql: &str) -> T {
    connect(port).unwrap().query_one(sql, &[]).unwrap().get(0)
}

#[test]
fn members_join_and_leave_by_sql_and_a_standby_waits_for_a_commit() {
    let ports = free_ports(4);
    // The group starts with three members; the fourth knows them all.
    let args = member_args(&ports[..3]);
    let mut fourth = member_args(&ports).pop().unwrap();
    fourth.extend(["--snapshot-every".to_string(), "10".to_string()]);
    let (mut servers, first, mut p) = group_with_items(&args, 50);
    let pport = servers[first].port;
    // Reading one's own write on a standby: wait for the primary's index.
    let standby = servers[(first + 1) % 3].port;
    p.execute("INSERT INTO items VALUES (1000, 'mine')", &[]).unwrap();
    let index: i64 = one(pport, "SELECT centum_applied_index()");
    let mut s = connect(standby).unwrap();
    let waited: bool = s.query_one("SELECT centum_wait_applied($1, 10000)", &[&index]).unwrap().get(0);
    assert!(waited);
    let n: i64 = s.query_one("SELECT count(*) FROM items WHERE id = 1000", &[]).unwrap().get(0);
    assert_eq!(n, 1);
    let late: bool =
        s.query_one("SELECT centum_wait_applied($1, 50)", &[&(index + 1_000_000)]).unwrap().get(0);
    assert!(!late);
    // The view, on the primary: three voters, itself the leader.
    let rows = p
        .query("SELECT member_id, role, is_self, voter, lag FROM centum.cluster ORDER BY member_id", &[])
        .unwrap();
    assert_eq!(rows.len(), 3);
    let me: Vec<_> = rows.iter().filter(|r| r.get::<_, bool>(2)).collect();
    assert_eq!(me.len(), 1);
    assert_eq!(me[0].get::<_, String>(1), "leader");
    assert!(rows.iter().all(|r| r.get::<_, bool>(3) && r.get::<_, Option<i64>>(4).is_some()));
    // Only the primary changes the group.
    let e = s.execute("SELECT centum_add_member(5, '127.0.0.1:1')", &[]).unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("25006"), "{:?}", e.as_db_error());
    // A fourth member joins and catches up, added with `centum cluster`
    // through the three members' addresses (it finds the primary).
    let mut new = Server::start(&as_strs(&fourth));
    let all = format!(
        "host=127.0.0.1,127.0.0.1,127.0.0.1 port={},{},{} user=centum dbname=postgres",
        servers[0].port, servers[1].port, servers[2].port
    );
    let address = format!("127.0.0.1:{}", ports[3]);
    let out = centum(&["cluster", "--connect", &all, "add", "4", &address]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    wait_count(new.port, 51, Duration::from_secs(30));
    assert_eq!(in_recovery(new.port), Some(true));
    let voters: i64 = one(pport, "SELECT count(*) FROM centum.cluster WHERE voter");
    assert_eq!(voters, 4);
    let here = format!("host=127.0.0.1 port={} user=centum dbname=postgres", new.port);
    let out = centum(&["cluster", "--connect", &here, "status"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && table.lines().count() == 5, "{table}");
    assert!(table.contains("leader") && table.contains(&address), "{table}");
    // It leaves: it gets no more commits, the others do.
    p.execute("SELECT centum_remove_member(4)", &[]).unwrap();
    let members: i64 = one(pport, "SELECT count(*) FROM centum.cluster");
    assert_eq!(members, 3);
    p.execute("INSERT INTO items VALUES (2000, 'after')", &[]).unwrap();
    for s in &servers {
        wait_count(s.port, 52, Duration::from_secs(30));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(count(new.port), Some(51));
    // Delayed durability keeps its meaning: acknowledged once the group
    // has the commit, before a majority holds it; the members get it.
    p.batch_execute("SET synchronous_commit = off").unwrap();
    for i in 3000..3010 {
        p.execute("INSERT INTO items VALUES ($1, 'delayed')", &[&i]).unwrap();
    }
    for s in &servers {
        wait_count(s.port, 62, Duration::from_secs(30));
    }
    new.stop();
    servers.clear();
}
