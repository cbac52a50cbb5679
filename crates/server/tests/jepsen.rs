//! A replicated group under faults, checked afterwards from the history
//! the clients saw. Three members on loopback (five with
//! `CENTUM_CLUSTER_NODES=5`) for 20 s (`CENTUM_JEPSEN_SECS` for longer).
//! Clients connect with a multi-host connection string and
//! `target_session_attrs=read-write`, and run SERIALIZABLE transactions of
//! two kinds: bank transfers between five accounts, and list-append
//! transactions (reads of a list and appends of unique values to it). A
//! nemesis meanwhile kills the primary with SIGKILL and restarts it, and
//! pauses a standby with SIGSTOP and lets it go on with SIGCONT. Standbys
//! checkpoint every 100 entries (`CENTUM_JEPSEN_SNAPSHOT_EVERY`, 0 for
//! never), so restarted members start from a checkpoint. A consumer of a
//! logical replication slot reads the change feed from whichever member
//! is the primary, and advances the slot past what it has recorded.
//!
//! Afterwards, with every member back: the balances still add up; every
//! value whose append was acknowledged is in its list (no acknowledged
//! commit lost); every read list is a prefix of the final one and holds
//! only values of appends that did not fail; and the dependency graph of
//! the committed list-append transactions (write-write from each list's
//! order, write-read from what each read saw last, read-write to the
//! append after it) has no cycle: no G0, G1 or G2 anomaly. The feed the
//! consumer recorded has, per list, one update per append in the order of
//! the final list: no committed change missing or delivered twice across
//! the failovers.

mod common;
use common::{connect, free_ports, is_primary, member_args, Server};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ACCOUNTS: i32 = 5;
const BALANCE: i64 = 100;
const KEYS: i32 = 4;

/// The end of each member's log, for a failure's message.
fn tails(servers: &[Server]) -> String {
    let mut out = String::new();
    for (i, s) in servers.iter().enumerate() {
        let text = s.log_text();
        let lines: Vec<&str> = text.lines().collect();
        let errors: Vec<&str> = lines.iter().copied().filter(|l| l.contains("ERROR")).take(20).collect();
        out += &format!(
            "--- member {} ---\n{}\n...\n{}\n",
            i + 1,
            errors.join("\n"),
            lines[lines.len().saturating_sub(12)..].join("\n")
        );
    }
    out
}

/// What a client learnt of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Ok,
    /// Certainly not committed.
    Failed,
    /// Maybe committed: the commit was sent and no answer came.
    Unknown,
}

/// A list-append transaction as its client saw it.
#[derive(Clone, Debug)]
struct Txn {
    /// Reads: key and the list seen; appends: key and the value.
    reads: Vec<(i32, Vec<String>)>,
    appends: Vec<(i32, String)>,
    outcome: Outcome,
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// The outcome an error means, given whether COMMIT had been sent.
fn outcome_of(e: &postgres::Error, committing: bool) -> Outcome {
    match e.code().map(|c| c.code()) {
        Some("08007") => Outcome::Unknown,
        Some(_) => Outcome::Failed,
        None if committing => Outcome::Unknown,
        None => Outcome::Failed,
    }
}

/// An LSN as text (`16/B374D848`) as a number.
fn lsn(text: &str) -> u64 {
    let (hi, lo) = text.split_once('/').expect("an LSN");
    u64::from_str_radix(hi, 16).unwrap() << 32 | u64::from_str_radix(lo, 16).unwrap()
}

/// What the slot's consumer recorded: per list, the value each
/// transaction that changed it left, in the feed's order.
#[derive(Default)]
struct Feed {
    /// The end (COMMIT's LSN) of the last transaction recorded.
    through: u64,
    lists: BTreeMap<i32, Vec<Vec<String>>>,
    txns: usize,
}

impl Feed {
    /// Records what the slot has past what was recorded, then advances the
    /// slot over it. A failure on the way records nothing twice: the slot
    /// is advanced only to what was recorded, and what comes again is
    /// known by its LSN.
    fn consume(&mut self, c: &mut postgres::Client) -> Result<(), postgres::Error> {
        let rows =
            c.query("SELECT lsn::text, data FROM pg_logical_slot_peek_changes('jepsen', NULL, NULL)", &[])?;
        // The list each update of the transaction left, the last per key.
        let mut txn: BTreeMap<i32, Vec<String>> = BTreeMap::new();
        for r in rows {
            let (at, data): (String, String) = (r.get(0), r.get(1));
            if let Some(rest) = data.strip_prefix("table public.lists: UPDATE: k[integer]:") {
                let (k, v) = rest.split_once(" v[text]:'").expect("an update of lists");
                let v = v.trim_end_matches('\'').split(',').filter(|s| !s.is_empty()).map(str::to_string);
                txn.insert(k.parse().unwrap(), v.collect());
            } else if data.starts_with("COMMIT") {
                let end = lsn(&at);
                if end > self.through {
                    for (k, v) in std::mem::take(&mut txn) {
                        self.lists.entry(k).or_default().push(v);
                    }
                    self.through = end;
                    self.txns += 1;
                }
                txn.clear();
            }
        }
        if self.through > 0 {
            let upto = format!("{:X}/{:X}", self.through >> 32, self.through as u32);
            c.query("SELECT count(*) FROM pg_logical_slot_get_changes('jepsen', $1::text, NULL)", &[&upto])?;
        }
        Ok(())
    }

    /// Per list, each transaction of the feed adds to what the one before
    /// left exactly the appends of one transaction of the history, and
    /// the last leaves the final list: none missing, none twice.
    fn check(&self, history: &[Txn], last: &BTreeMap<i32, Vec<String>>) {
        let owner: HashMap<&str, usize> = history
            .iter()
            .enumerate()
            .flat_map(|(i, t)| t.appends.iter().map(move |(_, v)| (v.as_str(), i)))
            .collect();
        for (k, values) in last {
            let mut before: &[String] = &[];
            for (step, now) in self.lists.get(k).map(Vec::as_slice).unwrap_or_default().iter().enumerate() {
                let what = format!("list {k}, transaction {step} of the feed: {before:?} then {now:?}");
                assert!(now.len() > before.len() && now.starts_with(before), "{what}");
                let added = &now[before.len()..];
                let by = owner.get(added[0].as_str()).copied();
                let mine = by.map(|t| history[t].appends.iter().filter(|(kk, _)| kk == k).count());
                assert!(added.iter().all(|v| owner.get(v.as_str()).copied() == by), "{what}");
                assert_eq!(mine, Some(added.len()), "{what}");
                before = now;
            }
            assert_eq!(before, values.as_slice(), "list {k}: the feed ends elsewhere than the list");
        }
    }
}

/// One list-append transaction.
fn list_txn(c: &mut postgres::Client, rng: &mut Rng, client: usize, n: &mut u64) -> Txn {
    let mut t = Txn { reads: Vec::new(), appends: Vec::new(), outcome: Outcome::Failed };
    let mut committing = false;
    let r = (|| -> Result<(), postgres::Error> {
        c.batch_execute("BEGIN ISOLATION LEVEL SERIALIZABLE")?;
        for _ in 0..1 + rng.below(3) {
            let k = rng.below(KEYS as u64) as i32;
            if rng.below(2) == 0 {
                let v: String = c.query_one("SELECT v FROM lists WHERE k = $1", &[&k])?.get(0);
                t.reads.push((k, v.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()));
            } else {
                *n += 1;
                let value = format!("{client}.{n}");
                c.execute("UPDATE lists SET v = v || ',' || $2 WHERE k = $1", &[&k, &value])?;
                t.appends.push((k, value));
            }
        }
        committing = true;
        c.batch_execute("COMMIT")
    })();
    t.outcome = match r {
        Ok(()) => Outcome::Ok,
        Err(e) => outcome_of(&e, committing),
    };
    t
}

fn transfer(c: &mut postgres::Client, rng: &mut Rng) -> Result<(), postgres::Error> {
    let (a, b) = (rng.below(ACCOUNTS as u64) as i32, rng.below(ACCOUNTS as u64) as i32);
    let amount = rng.below(10) as i64;
    c.batch_execute("BEGIN ISOLATION LEVEL SERIALIZABLE")?;
    for (id, delta) in [(a, -amount), (b, amount)] {
        let bal: i64 = c.query_one("SELECT balance FROM accounts WHERE id = $1", &[&id])?.get(0);
        c.execute("UPDATE accounts SET balance = $2 WHERE id = $1", &[&id, &(bal + delta)])?;
    }
    c.batch_execute("COMMIT")
}

/// Tarjan's strongly connected components: any with two or more members
/// is a cycle.
fn cycles(n: usize, edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct S<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut S<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on[v] = true;
        for i in 0..s.edges[v].len() {
            let w = s.edges[v][i];
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                s.out.push(comp);
            }
        }
    }
    let mut s = S {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Checks the list-append history against the final lists; returns the
/// number of committed transactions checked.
fn check_lists(history: &[Txn], last: &BTreeMap<i32, Vec<String>>) -> usize {
    // Who appended each value, and how it ended.
    let mut writer: HashMap<&str, usize> = HashMap::new();
    for (i, t) in history.iter().enumerate() {
        for (_, v) in &t.appends {
            assert!(writer.insert(v.as_str(), i).is_none(), "value {v} appended twice");
        }
    }
    for (k, list) in last {
        let mut seen = HashSet::new();
        for v in list {
            assert!(seen.insert(v), "key {k}: {v} twice in the final list");
            let w = *writer.get(v.as_str()).unwrap_or_else(|| panic!("key {k}: {v} was never appended"));
            assert_ne!(
                history[w].outcome,
                Outcome::Failed,
                "key {k}: {v} of a failed transaction is in the list"
            );
        }
    }
    // Acknowledged appends are all there.
    for t in history.iter().filter(|t| t.outcome == Outcome::Ok) {
        for (k, v) in &t.appends {
            assert!(last[k].contains(v), "the acknowledged append of {v} to key {k} is lost");
        }
    }
    // Transactions that took effect: acknowledged ones, and unknown ones
    // whose appends are in the lists (those with none are taken as not).
    let effective: Vec<usize> = (0..history.len())
        .filter(|&i| match history[i].outcome {
            Outcome::Ok => true,
            Outcome::Unknown => history[i].appends.iter().any(|(k, v)| last[k].contains(v)),
            Outcome::Failed => false,
        })
        .collect();
    let node: HashMap<usize, usize> = effective.iter().enumerate().map(|(n, &i)| (i, n)).collect();
    let mut edges = vec![Vec::new(); effective.len()];
    for (k, list) in last {
        // Write-write: each list's order.
        for pair in list.windows(2) {
            let (a, b) = (writer[pair[0].as_str()], writer[pair[1].as_str()]);
            if a != b {
                edges[node[&a]].push(node[&b]);
            }
        }
        for &i in &effective {
            for (rk, seen) in history[i].reads.iter().filter(|(rk, _)| rk == k) {
                // What a committed reader saw is a prefix of the final list.
                let own: Vec<&String> =
                    history[i].appends.iter().filter(|(ak, _)| ak == rk).map(|(_, v)| v).collect();
                let others: Vec<&String> = seen.iter().filter(|v| !own.contains(v)).collect();
                assert!(
                    seen.len() <= list.len() && seen.iter().zip(list).all(|(a, b)| a == b),
                    "key {k}: a read saw {seen:?}, not a prefix of {list:?}"
                );
                // Write-read: from the writer of the last value seen.
                if let Some(v) = others.last() {
                    let w = writer[v.as_str()];
                    if w != i {
                        edges[node[&w]].push(node[&i]);
                    }
                }
                // Read-write: to the writer of the next value.
                if let Some(next) = list.get(seen.len()) {
                    let w = writer[next.as_str()];
                    if w != i {
                        edges[node[&i]].push(node[&w]);
                    }
                }
            }
        }
    }
    let found = cycles(effective.len(), &edges);
    assert!(
        found.is_empty(),
        "dependency cycles among committed transactions: {:?}",
        found
            .iter()
            .map(|c| c.iter().map(|&n| &history[effective[n]]).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    );
    effective.len()
}

#[test]
fn a_group_under_kills_and_pauses_loses_no_commit_and_stays_serializable() {
    let nodes: usize = std::env::var("CENTUM_CLUSTER_NODES").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let secs: u64 = std::env::var("CENTUM_JEPSEN_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    // Replication ports, then the ports clients connect to: fixed, so a
    // member restarted is found where it was.
    let all = free_ports(2 * nodes);
    let (ports, client_ports) = all.split_at(nodes);
    let mut args = member_args(ports);
    // Standbys checkpoint often, so members restart from checkpoints and
    // are sent images.
    let every = std::env::var("CENTUM_JEPSEN_SNAPSHOT_EVERY").unwrap_or_else(|_| "100".into());
    for a in &mut args {
        a.extend(["--wal-level".to_string(), "logical".to_string()]);
        if every != "0" {
            a.extend(["--snapshot-every".to_string(), every.clone()]);
        }
    }
    let strs = |i: usize| args[i].iter().map(String::as_str).collect::<Vec<_>>();
    let servers: Vec<Server> = (0..nodes).map(|i| Server::start_at(client_ports[i], &strs(i), &[])).collect();
    let pg_ports: Vec<u16> = servers.iter().map(|s| s.port).collect();
    let servers = Arc::new(Mutex::new(servers));
    let deadline = Instant::now() + Duration::from_secs(30);
    let first = loop {
        if let Some(i) = pg_ports.iter().position(|&p| is_primary(p)) {
            break i;
        }
        assert!(Instant::now() < deadline, "no primary");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut c = connect(pg_ports[first]).unwrap();
    c.batch_execute(
        "CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL);
         CREATE TABLE lists (k int PRIMARY KEY, v text NOT NULL)",
    )
    .unwrap();
    for id in 0..ACCOUNTS {
        c.execute("INSERT INTO accounts VALUES ($1, $2)", &[&id, &BALANCE]).unwrap();
    }
    for k in 0..KEYS {
        c.execute("INSERT INTO lists VALUES ($1, '')", &[&k]).unwrap();
    }
    c.execute("SELECT * FROM pg_create_logical_replication_slot('jepsen', 'test_decoding')", &[]).unwrap();
    drop(c);
    let hosts = vec!["127.0.0.1"; nodes].join(",");
    let port_list = pg_ports.iter().map(u16::to_string).collect::<Vec<_>>().join(",");
    let multi = format!(
        "host={hosts} port={port_list} user=centum dbname=postgres connect_timeout=1 target_session_attrs=read-write"
    );
    let stop = Arc::new(AtomicBool::new(false));
    let end = Instant::now() + Duration::from_secs(secs);
    let clients: Vec<_> = (0..4)
        .map(|client| {
            let (multi, stop) = (multi.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (client as u64 + 1) << 32);
                let (mut history, mut n, mut transfers) = (Vec::new(), 0u64, 0u64);
                let mut conn: Option<postgres::Client> = None;
                while !stop.load(SeqCst) {
                    let c = match conn.as_mut() {
                        Some(c) => c,
                        None => match postgres::Client::connect(&multi, postgres::NoTls) {
                            Ok(c) => conn.insert(c),
                            Err(_) => {
                                std::thread::sleep(Duration::from_millis(50));
                                continue;
                            }
                        },
                    };
                    if rng.below(2) == 0 {
                        let t = list_txn(c, &mut rng, client, &mut n);
                        let broken = t.outcome != Outcome::Ok;
                        history.push(t);
                        if broken {
                            conn = None;
                        }
                    } else {
                        match transfer(c, &mut rng) {
                            Ok(()) => transfers += 1,
                            Err(_) => conn = None,
                        }
                    }
                }
                (history, transfers)
            })
        })
        .collect();
    let feed = Arc::new(Mutex::new(Feed::default()));
    let consumer = {
        let (multi, stop, feed) = (multi.clone(), stop.clone(), feed.clone());
        std::thread::spawn(move || {
            while !stop.load(SeqCst) {
                if let Ok(mut c) = postgres::Client::connect(&multi, postgres::NoTls) {
                    let _ = feed.lock().unwrap().consume(&mut c);
                }
                std::thread::sleep(Duration::from_millis(700));
            }
        })
    };
    // The nemesis.
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut kills, mut pauses) = (0, 0);
    while Instant::now() < end {
        std::thread::sleep(Duration::from_millis(1500 + rng.below(1000)));
        if rng.below(2) == 0 {
            let Some(p) = pg_ports.iter().position(|&p| is_primary(p)) else { continue };
            servers.lock().unwrap()[p].kill9();
            kills += 1;
            std::thread::sleep(Duration::from_millis(500 + rng.below(1500)));
            let a = strs(p);
            servers.lock().unwrap()[p].launch(&a, &[]);
        } else {
            let standbys: Vec<usize> = (0..nodes).filter(|&i| !is_primary(pg_ports[i])).collect();
            if standbys.is_empty() {
                continue;
            }
            let s = standbys[rng.below(standbys.len() as u64) as usize];
            let pid = servers.lock().unwrap()[s].pid().unwrap();
            let signal = |sig: &str| {
                std::process::Command::new("kill")
                    .arg(format!("-{sig}"))
                    .arg(pid.to_string())
                    .status()
                    .unwrap()
            };
            signal("STOP");
            pauses += 1;
            std::thread::sleep(Duration::from_millis(1000 + rng.below(1500)));
            signal("CONT");
        }
    }
    stop.store(true, SeqCst);
    consumer.join().unwrap();
    let mut history = Vec::new();
    let mut transfers = 0;
    for c in clients {
        let (h, t) = c.join().unwrap();
        history.extend(h);
        transfers += t;
    }
    // Every member back; read the final state on the primary, and check
    // every member reaches it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let p = loop {
        if let Some(i) = pg_ports.iter().position(|&p| is_primary(p)) {
            break i;
        }
        assert!(Instant::now() < deadline, "no primary after the run:\n{}", tails(&servers.lock().unwrap()));
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut c = connect(pg_ports[p]).unwrap();
    let total: i64 = c.query_one("SELECT sum(balance)::bigint FROM accounts", &[]).unwrap().get(0);
    assert_eq!(total, BALANCE * ACCOUNTS as i64, "balances no longer add up");
    let last: BTreeMap<i32, Vec<String>> = c
        .query("SELECT k, v FROM lists", &[])
        .unwrap()
        .iter()
        .map(|r| {
            let v: String = r.get(1);
            (r.get(0), v.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect())
        })
        .collect();
    let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_lists(&history, &last)));
    let committed = match checked {
        Ok(n) => n,
        Err(panic) => {
            eprintln!("{}", tails(&servers.lock().unwrap()));
            std::panic::resume_unwind(panic)
        }
    };
    let mut feed = feed.lock().unwrap();
    feed.consume(&mut c).unwrap();
    feed.check(&history, &last);
    let ok = history.iter().filter(|t| t.outcome == Outcome::Ok).count();
    let unknown = history.iter().filter(|t| t.outcome == Outcome::Unknown).count();
    let final_lists: String =
        c.query_one("SELECT string_agg(v, '|' ORDER BY k) FROM lists", &[]).unwrap().get(0);
    for (i, &port) in pg_ports.iter().enumerate() {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = connect(port)
                .and_then(|mut c| c.query_one("SELECT string_agg(v, '|' ORDER BY k) FROM lists", &[]).ok())
                .map(|r| r.get::<_, String>(0));
            if got.as_deref() == Some(final_lists.as_str()) {
                break;
            }
            if Instant::now() >= deadline {
                panic!("member {i} did not reach the final state:\n{}", tails(&servers.lock().unwrap()));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    println!(
        "{nodes} members, {secs} s: {kills} primaries killed, {pauses} standbys paused; {transfers} transfers, \
         {} list-append transactions ({ok} acknowledged, {unknown} unknown, {committed} took effect); \
         the slot's feed had {} transactions",
        history.len(),
        feed.txns
    );
    assert!(ok > 20, "too few transactions got through: {ok}");
    drop(servers);
}
