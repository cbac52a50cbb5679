//! PostgreSQL as the reference: every script in `tests/scripts` runs
//! statement by statement both through Centum and through a real PostgreSQL
//! server that this test starts for itself, and the answers must agree.
//!
//! Per statement it compares whether it failed and, if so, the SQLSTATE;
//! otherwise the column names and the rows as text, in order (so scripts
//! must be deterministic: ORDER BY wherever more than one row comes back).
//! Command tags, notices and error messages are not compared.
//!
//! Differences we accept (Centum-only syntax, deliberate choices) are listed
//! in `tests/scripts/postgres-differences.txt`, one `script<TAB>statement`
//! a line, and explained in `docs/sql-compatibility.md`. The test fails on a
//! difference not listed there, and on a listed one that no longer occurs,
//! so the list stays true. Statements starting with EXPLAIN run on both
//! sides (to keep the sessions in step) but are never compared: plans are
//! Centum's own and share nothing with PostgreSQL's.
//!
//! The server: PostgreSQL's binaries are looked for in `$PG_BIN`, then
//! `/usr/lib/postgresql/<newest version>/bin` (Debian), then `PATH`. When
//! there are none the test fails if `CI` is set and otherwise says the
//! comparison was skipped and passes. The cluster lives in a temporary
//! directory, listens on a free loopback port (and a socket inside that
//! directory), runs as the `postgres` user when the test runs as root (the
//! server refuses root), and is stopped when the test ends, panics
//! included. Each script gets a database of its own.
//!
//! Run it with `cargo test --release -p centum-sql --test postgres`.

mod common;
mod pg;

use centum_sql::TxnStatus;
use pg::{required_bin, Server};
use postgres::{Client, SimpleQueryMessage};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// The file of accepted differences, in `tests/scripts`.
const DIFFERENCES: &str = "postgres-differences.txt";

// ---------------------------------------------------------------------------
// Running the statements

/// One statement's answer, as compared.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Failed with this SQLSTATE.
    Error(String),
    /// One entry per result (a statement gives one).
    Ok(Vec<ResultSet>),
}

/// One result: no columns for a command that returns no rows.
#[derive(Debug, PartialEq)]
struct ResultSet {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl std::fmt::Display for Outcome {
    /// Like the golden transcripts, indented.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Error(code) => write!(f, "    ERROR {code}"),
            Outcome::Ok(sets) => {
                let mut lines = Vec::new();
                for set in sets {
                    if set.columns.is_empty() {
                        lines.push("    (command, no rows)".to_string());
                        continue;
                    }
                    lines.push(format!("    {}", set.columns.join(" | ")));
                    lines.extend(set.rows.iter().map(|r| format!("    {}", r.join(" | "))));
                    let n = set.rows.len();
                    lines.push(format!("    ({n} row{})", if n == 1 { "" } else { "s" }));
                }
                f.write_str(&lines.join("\n"))
            }
        }
    }
}

fn run_postgres(client: &mut Client, stmt: &str) -> Outcome {
    let messages = match client.simple_query(stmt) {
        Ok(m) => m,
        Err(e) => match e.code() {
            Some(code) => return Outcome::Error(code.code().to_string()),
            None => panic!("PostgreSQL failed without a SQLSTATE on {stmt:?}: {e}"),
        },
    };
    let mut sets = Vec::new();
    let mut current: Option<ResultSet> = None;
    for m in messages {
        match m {
            SimpleQueryMessage::RowDescription(cols) => {
                current = Some(ResultSet {
                    columns: cols.iter().map(|c| c.name().to_string()).collect(),
                    rows: vec![],
                });
            }
            SimpleQueryMessage::Row(row) => {
                let set = current.get_or_insert_with(|| ResultSet {
                    columns: row.columns().iter().map(|c| c.name().to_string()).collect(),
                    rows: vec![],
                });
                set.rows.push((0..row.len()).map(|i| row.get(i).unwrap_or("NULL").to_string()).collect());
            }
            SimpleQueryMessage::CommandComplete(_) => {
                sets.push(current.take().unwrap_or(ResultSet { columns: vec![], rows: vec![] }));
            }
            _ => {}
        }
    }
    Outcome::Ok(sets)
}

fn run_centum(session: &mut centum_sql::Session, stmt: &str) -> Outcome {
    match session.execute(stmt) {
        Ok(results) => Outcome::Ok(
            results
                .into_iter()
                .map(|r| ResultSet {
                    columns: r.columns.iter().map(|c| c.name.clone()).collect(),
                    rows: r.rows.iter().map(|row| row.iter().map(|v| v.to_string()).collect()).collect(),
                })
                .collect(),
        ),
        Err(e) => Outcome::Error(e.sqlstate().to_string()),
    }
}

/// A statement as a key of the differences file: whitespace runs as one space.
fn normalize(stmt: &str) -> String {
    stmt.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// EXPLAIN output is Centum's own (plan shapes, node names, access paths):
/// nothing in it can match PostgreSQL's, so it is never compared.
fn is_explain(stmt: &str) -> bool {
    stmt.trim_start().get(..7).is_some_and(|w| w.eq_ignore_ascii_case("explain"))
}

/// Scripts not compared at all. `catalog` reads the system catalogs, whose
/// contents are each server's own: PostgreSQL's hold hundreds of built-in
/// relations, types and functions, its OIDs are allocated in creation order
/// (Centum's are derived from engine ids), its owner is `postgres` (Centum's
/// role is `centum`), and the script uses Centum-only syntax (`WITH
/// (bucket_count = ...)`). Nearly every statement would differ; the script
/// checks Centum's answers against what psql needs instead (see
/// docs/sql-compatibility.md). `engine_views` reads the `centum` schema,
/// which PostgreSQL does not have.
const NOT_COMPARED: &[&str] = &["catalog", "procedure_limits", "engine_views"];

/// One accepted difference: `Some(statement)` when PostgreSQL is to run
/// that equivalent instead, to stay in step with Centum (see [`accepted`]).
type Listed = BTreeMap<String, Option<String>>;

/// Runs `stmt` on PostgreSQL where its effects can be undone, and undoes
/// them: how PostgreSQL answers a Centum-only statement. `None` in a failed
/// block, where every statement fails.
fn probe_postgres(pg: &mut Client, status: TxnStatus, stmt: &str) -> Option<Outcome> {
    let (before, after) = match status {
        TxnStatus::Idle => ("BEGIN", "ROLLBACK"),
        TxnStatus::InBlock => {
            ("SAVEPOINT centum_probe", "ROLLBACK TO SAVEPOINT centum_probe; RELEASE SAVEPOINT centum_probe")
        }
        TxnStatus::Failed => return None,
    };
    pg.batch_execute(before).unwrap();
    let outcome = run_postgres(pg, stmt);
    pg.batch_execute(after).unwrap();
    Some(outcome)
}

/// Runs one script on both sides; writes what is wrong to `report`.
fn compare_script(server: &Server, admin: &mut Client, name: &str, listed: &Listed, report: &mut String) {
    let script = std::fs::read_to_string(common::scripts_dir().join(format!("{name}.sql"))).unwrap();
    let dbname = format!("script_{name}");
    let quoted = format!("\"{}\"", dbname.replace('"', "\"\""));
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {quoted}")).unwrap();
    admin.batch_execute(&format!("CREATE DATABASE {quoted}")).unwrap();
    let mut pg = server.connect(&dbname).unwrap_or_else(|e| panic!("connect to {dbname}: {e}"));

    let db = common::db();
    let mut centum = db.session();

    // Listed statements that still differ, and differences reported: a
    // statement that occurs more than once in a script is listed once.
    let mut used = BTreeSet::new();
    let mut reported = BTreeSet::new();
    for stmt in common::statements(&script) {
        let key = normalize(&stmt);
        match listed.get(&key) {
            Some(Some(equivalent)) => {
                // PostgreSQL must still answer the statement itself otherwise
                // than Centum does, and Centum must answer as PostgreSQL
                // answers the equivalent.
                let original = probe_postgres(&mut pg, centum.status(), &stmt);
                let want = run_postgres(&mut pg, equivalent);
                let got = run_centum(&mut centum, &stmt);
                if original.as_ref().is_none_or(|o| *o != got) {
                    used.insert(key.clone());
                }
                if want != got && reported.insert(key.clone()) {
                    writeln!(
                        report,
                        "differs from PostgreSQL's answer to its equivalent:\n{name}\t{key}\t{equivalent}\n  \
                         PostgreSQL:\n{want}\n  Centum:\n{got}\n"
                    )
                    .unwrap();
                }
            }
            entry => {
                let want = run_postgres(&mut pg, &stmt);
                let got = run_centum(&mut centum, &stmt);
                if is_explain(&stmt) || want == got {
                    continue;
                }
                if entry.is_some() {
                    used.insert(key);
                } else if reported.insert(key.clone()) {
                    writeln!(
                        report,
                        "not listed in {DIFFERENCES}:\n{name}\t{key}\n  PostgreSQL:\n{want}\n  Centum:\n{got}\n"
                    )
                    .unwrap();
                }
            }
        }
    }
    for key in listed.keys().filter(|k| !used.contains(*k)) {
        writeln!(report, "listed in {DIFFERENCES} but does not differ (or does not occur):\n{name}\t{key}\n")
            .unwrap();
    }
}

/// Interleavings of sessions (`tests/interleavings/NAME.sql`):
///
/// * `SESSION x;` switches to session `x` (a connection to each side,
///   opened at first use);
/// * `DISCONNECT;` closes the current session's connections, as a client
///   that vanishes;
/// * `ASYNC statement;` starts the statement on threads of its own, one
///   per side, so that it can wait while other sessions go on (a deadlock
///   needs two waiters), and `WAIT;` takes its outcome.
///
/// Every statement must get the same outcome on both sides: there is no
/// list of accepted differences here. Other waits are kept short by the
/// scripts' `lock_timeout`.
fn compare_interleaving(server: &Server, admin: &mut Client, name: &str, report: &mut String) {
    let path = interleavings_dir().join(format!("{name}.sql"));
    let script = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let dbname = format!("interleave_{name}");
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS \"{dbname}\"")).unwrap();
    admin.batch_execute(&format!("CREATE DATABASE \"{dbname}\"")).unwrap();
    let db = common::db();
    let open = || {
        let pg = server.connect(&dbname).unwrap_or_else(|e| panic!("connect to {dbname}: {e}"));
        (pg, db.session())
    };
    let mut sessions: BTreeMap<String, (Client, centum_sql::Session)> = BTreeMap::new();
    let mut pending: BTreeMap<String, Pending> = BTreeMap::new();
    let mut current = "a".to_string();
    let mut compare = |current: &str, stmt: &str, want: Outcome, got: Outcome| {
        if want != got {
            writeln!(
                report,
                "interleaving {name}, session {current}:\n{}\n  PostgreSQL:\n{want}\n  Centum:\n{got}\n",
                normalize(stmt)
            )
            .unwrap();
        }
    };
    for stmt in common::statements(&script) {
        if let Some(next) = stmt.strip_prefix("SESSION ") {
            current = next.trim().to_lowercase();
            continue;
        }
        // The client vanishes: both connections close, with whatever
        // block they had open. `SESSION x` later opens new ones.
        if stmt.eq_ignore_ascii_case("DISCONNECT") {
            sessions.remove(&current);
            continue;
        }
        if let Some(waiting) = stmt.strip_prefix("ASYNC ") {
            let (mut pg, mut centum) = sessions.remove(&current).unwrap_or_else(open);
            let (s1, s2) = (waiting.to_string(), waiting.to_string());
            let pg = std::thread::spawn(move || {
                let o = run_postgres(&mut pg, &s1);
                (pg, o)
            });
            let centum = std::thread::spawn(move || {
                let o = run_centum(&mut centum, &s2);
                (centum, o)
            });
            // Both sides are waiting before the next statement runs.
            std::thread::sleep(std::time::Duration::from_millis(300));
            pending.insert(current.clone(), Pending { stmt: waiting.to_string(), pg, centum });
            continue;
        }
        if stmt.eq_ignore_ascii_case("WAIT") {
            let p =
                pending.remove(&current).unwrap_or_else(|| panic!("{name}: WAIT in {current} without ASYNC"));
            let (pg, want) = p.pg.join().expect("the PostgreSQL side of an ASYNC statement");
            let (centum, got) = p.centum.join().expect("the Centum side of an ASYNC statement");
            compare(&current, &p.stmt, want, got);
            sessions.insert(current.clone(), (pg, centum));
            continue;
        }
        assert!(
            !pending.contains_key(&current),
            "{name}: session {current} is still running an ASYNC statement"
        );
        let (pg, centum) = sessions.entry(current.clone()).or_insert_with(open);
        let want = run_postgres(pg, &stmt);
        let got = run_centum(centum, &stmt);
        compare(&current, &stmt, want, got);
    }
    assert!(pending.is_empty(), "{name}: ASYNC statements never waited for: {:?}", pending.keys());
}

/// A statement started with `ASYNC`, running on both sides.
struct Pending {
    stmt: String,
    pg: std::thread::JoinHandle<(Client, Outcome)>,
    centum: std::thread::JoinHandle<(centum_sql::Session, Outcome)>,
}

fn interleavings_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interleavings")
}

/// The accepted differences, per script. Lines of
/// `tests/scripts/postgres-differences.txt`:
///
/// * `script<TAB>statement`: the answers may differ;
/// * `script<TAB>statement<TAB>equivalent`: for Centum-only syntax that
///   PostgreSQL rejects, where the rest of the script needs what the
///   statement does: PostgreSQL runs `equivalent` instead, and Centum's
///   answer must equal PostgreSQL's answer to it.
///
/// Statements are compared with runs of whitespace as one space; `#`
/// starts a comment line.
fn accepted() -> BTreeMap<String, Listed> {
    let path = common::scripts_dir().join(DIFFERENCES);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let mut out: BTreeMap<String, Listed> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split('\t');
        let (Some(script), Some(stmt), equivalent, None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            panic!("{DIFFERENCES}:{}: want `script<TAB>statement[<TAB>equivalent]`, got {line:?}", i + 1)
        };
        out.entry(script.to_string()).or_default().insert(normalize(stmt), equivalent.map(str::to_string));
    }
    out
}

#[test]
fn scripts_agree_with_postgres() {
    let Some(bin) = required_bin("tests/postgres.rs: the comparison with PostgreSQL") else { return };
    let started = Instant::now();
    let server = Server::start(bin);
    let mut admin = server.connect("postgres").expect("connect to the postgres database");
    let mut accepted = accepted();

    let names: Vec<String> =
        common::script_names().into_iter().filter(|n| !NOT_COMPARED.contains(&n.as_str())).collect();
    let mut report = String::new();
    for name in &names {
        let listed = accepted.remove(name).unwrap_or_default();
        compare_script(&server, &mut admin, name, &listed, &mut report);
    }
    let mut interleavings: Vec<String> = std::fs::read_dir(interleavings_dir())
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "sql" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().to_string())
        })
        .collect();
    interleavings.sort();
    for name in &interleavings {
        compare_interleaving(&server, &mut admin, name, &mut report);
    }
    for (name, listed) in accepted {
        for key in listed.keys() {
            writeln!(report, "listed in {DIFFERENCES} for a script that does not exist:\n{name}\t{key}\n")
                .unwrap();
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "tests/postgres.rs: {} scripts and {} interleavings compared with PostgreSQL in {:.1?}",
        names.len(),
        interleavings.len(),
        started.elapsed()
    );
    assert!(report.is_empty(), "Centum and PostgreSQL disagree (see docs/sql-compatibility.md):\n\n{report}");
}
