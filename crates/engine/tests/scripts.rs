//! Script-driven golden tests for transactions and isolation.
//!
//! Each file in `tests/scripts/` is a sequence of commands; the line(s)
//! starting with `>` after a command are its expected output. Every named
//! transaction (`t1`, `t2`, ...) runs on its own thread, so a command that
//! blocks (a READ COMMITTED writer waiting for another transaction) shows
//! as `> waiting`, and its result appears under the command that released
//! it, as `> t2 done: ...`.
//!
//! Commands (`kv` tables have columns `k bigint`, `v bigint`, unique hash
//! index `<table>_pkey` on `k`):
//!
//! ```text
//! table NAME                  create a kv table
//! tN: begin LEVEL             read_committed | snapshot | serializable
//! tN: insert T K V            insert a row
//! tN: get T K                 look up K: `K=V` or `none`
//! tN: scan T                  all rows, sorted by key
//! tN: set T K V               update row K to V (computed before any wait)
//! tN: add T K D               update row K to V+D (re-applied to the newest version)
//! tN: delete T K              delete row K
//! tN: statement               start a new statement (READ COMMITTED snapshot)
//! tN: commit | abort
//! ```
//!
//! Set `UPDATE_GOLDEN=1` to rewrite the expected output.

use centum_engine::{Database, Error, IndexDef, Isolation, Options, TableDef, Transaction};
use centum_types::{DataType, Value};
use std::collections::BTreeMap;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// How long a command may take before the script calls it blocked.
const BLOCKED_AFTER: Duration = Duration::from_millis(300);
/// How long a released command may take to finish.
const RELEASE_LIMIT: Duration = Duration::from_secs(20);

struct Worker {
    send: Sender<String>,
    recv: Receiver<String>,
    /// The command is blocked: its reply is still to come.
    pending: bool,
}

fn spawn_worker(db: Database) -> Worker {
    let (to_worker, from_runner) = channel::<String>();
    let (to_runner, from_worker) = channel::<String>();
    std::thread::spawn(move || {
        let mut txn: Option<Transaction> = None;
        for cmd in from_runner {
            let out = execute(&db, &mut txn, &cmd);
            if to_runner.send(out).is_err() {
                return;
            }
        }
    });
    Worker { send: to_worker, recv: from_worker, pending: false }
}

fn err(e: Error) -> String {
    format!("error {}: {}", e.sqlstate(), e)
}

fn int(v: &Value) -> String {
    match v {
        Value::BigInt(i) => i.to_string(),
        other => other.to_string(),
    }
}

fn execute(db: &Database, txn: &mut Option<Transaction>, cmd: &str) -> String {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let num = |i: usize| Value::BigInt(words.get(i).and_then(|w| w.parse().ok()).unwrap_or(0));
    match words.as_slice() {
        ["begin", level] => {
            let iso = match *level {
                "read_committed" => Isolation::ReadCommitted,
                "snapshot" => Isolation::Snapshot,
                "serializable" => Isolation::Serializable,
                other => return format!("bad level {other}"),
            };
            match db.begin(iso) {
                Ok(t) => {
                    *txn = Some(t);
                    "ok".into()
                }
                Err(e) => err(e),
            }
        }
        ["commit"] => match txn.take().map(Transaction::commit) {
            Some(Ok(())) => "ok".into(),
            Some(Err(e)) => err(e),
            None => "no transaction".into(),
        },
        ["abort"] => {
            if let Some(t) = txn.take() {
                t.abort();
            }
            "ok".into()
        }
        ["statement"] => {
            if let Some(t) = txn.as_mut() {
                t.begin_statement();
            }
            "ok".into()
        }
        [op, table, ..] => {
            let Some(t) = txn.as_ref() else { return "no transaction".into() };
            let table = match db.table(table) {
                Ok(t) => t,
                Err(e) => return err(e),
            };
            let pk = format!("{}_pkey", table.name());
            let r: Result<String, Error> = (|| match *op {
                "insert" => t.insert(&table, vec![num(2), num(3)]).map(|_| "ok".into()),
                "get" => Ok(match t.get(&table, &pk, &[num(2)])? {
                    Some(r) => format!("{}={}", int(&r.get(0)), int(&r.get(1))),
                    None => "none".into(),
                }),
                "scan" => {
                    let mut rows: Vec<_> = t.scan(&table)?.map(|r| (r.int(0), r.int(1))).collect();
                    rows.sort();
                    let shown: Vec<_> = rows
                        .iter()
                        .map(|(k, v)| format!("{}={}", k.unwrap_or_default(), v.unwrap_or_default()))
                        .collect();
                    Ok(format!("[{}]", shown.join(", ")))
                }
                "set" | "add" => {
                    let Some(row) = t.get(&table, &pk, &[num(2)])? else { return Ok("none".into()) };
                    let d = words.get(3).and_then(|w| w.parse::<i64>().ok()).unwrap_or(0);
                    let add = *op == "add";
                    let done = t.update_with(&row, |old| {
                        let v = match (&old[1], add) {
                            (Value::BigInt(v), true) => v + d,
                            _ => d,
                        };
                        Some(vec![old[0].clone(), Value::BigInt(v)])
                    })?;
                    Ok(if done { "ok".into() } else { "row gone".into() })
                }
                "delete" => {
                    let Some(row) = t.get(&table, &pk, &[num(2)])? else { return Ok("none".into()) };
                    Ok(if t.delete(&row)? { "ok".into() } else { "row gone".into() })
                }
                other => Ok(format!("unknown command {other}")),
            })();
            r.unwrap_or_else(err)
        }
        _ => format!("cannot parse: {cmd}"),
    }
}

fn run_script(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).expect("script");
    let db = Database::open(Options { gc_interval: Some(Duration::from_millis(1)), ..Default::default() })
        .expect("open");
    let mut workers: BTreeMap<String, Worker> = BTreeMap::new();
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with('>') {
            continue;
        }
        out.push_str(line);
        out.push('\n');
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("table ") {
            let def = TableDef::new(name)
                .column_not_null("k", DataType::BigInt)
                .column("v", DataType::BigInt)
                .index(IndexDef::hash(&format!("{name}_pkey"), &["k"], 4).unique());
            let r = db.create_table(def).map(|_| "ok".to_string()).unwrap_or_else(err);
            out.push_str(&format!("> {r}\n"));
            continue;
        }
        let (who, cmd) = line.split_once(':').expect("tN: command");
        let w = workers.entry(who.to_string()).or_insert_with(|| spawn_worker(db.clone()));
        assert!(!w.pending, "{who} is blocked and cannot take another command");
        w.send.send(cmd.trim().to_string()).expect("worker alive");
        match w.recv.recv_timeout(BLOCKED_AFTER) {
            Ok(r) => out.push_str(&format!("> {r}\n")),
            Err(RecvTimeoutError::Timeout) => {
                w.pending = true;
                out.push_str("> waiting\n");
            }
            Err(e) => panic!("worker died: {e}"),
        }
        // Did this command release someone?
        for (name, other) in workers.iter_mut().filter(|(n, w)| w.pending && n.as_str() != who) {
            if let Ok(r) = other.recv.recv_timeout(BLOCKED_AFTER) {
                other.pending = false;
                out.push_str(&format!("> {name} done: {r}\n"));
            }
        }
    }
    for (name, w) in workers.iter_mut().filter(|(_, w)| w.pending) {
        let r = w.recv.recv_timeout(RELEASE_LIMIT).unwrap_or_else(|_| "still waiting".into());
        out.push_str(&format!("> {name} done at end: {r}\n"));
    }
    out
}

#[test]
fn scripts() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).expect("scripts dir").flatten().map(|e| e.path()).collect();
    files.sort();
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failed = vec![];
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "txt")) {
        let want = std::fs::read_to_string(f).expect("read");
        let got = run_script(f);
        if update {
            std::fs::write(f, &got).expect("write");
        } else if got != want {
            eprintln!("--- {} differs; got:\n{got}", f.display());
            failed.push(f.display().to_string());
        }
    }
    assert!(failed.is_empty(), "scripts differ: {failed:?}");
    assert!(!files.is_empty());
}
