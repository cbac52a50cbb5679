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

use centum_sql::TxnStatus;
use postgres::{Client, NoTls, SimpleQueryMessage};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// How long the server may take to start, and a statement to run.
const START_TIMEOUT: Duration = Duration::from_secs(60);
const STATEMENT_TIMEOUT: &str = "30s";

/// The file of accepted differences, in `tests/scripts`.
const DIFFERENCES: &str = "postgres-differences.txt";

// ---------------------------------------------------------------------------
// Finding and running the server

/// The directory holding `initdb` and `pg_ctl`.
fn find_bin() -> Option<PathBuf> {
    let has_tools = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    if let Some(dir) = std::env::var_os("PG_BIN") {
        let dir = PathBuf::from(dir);
        assert!(has_tools(&dir), "PG_BIN={} holds no initdb and pg_ctl", dir.display());
        return Some(dir);
    }
    // Debian and Ubuntu: /usr/lib/postgresql/<major>/bin; take the newest.
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            has_tools(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).find(|d| has_tools(d))
}

fn output_text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `id ARGS`, as a number.
fn id(args: &[&str]) -> Option<u32> {
    let out = Command::new("id").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// The account the server runs as when we are root, made if missing.
const SERVER_USER: &str = "postgres";

/// A running PostgreSQL cluster in a temporary directory; stopped on drop.
struct Server {
    bin: PathBuf,
    /// `Some(user)` when the tools must run as that user (we are root).
    user: Option<&'static str>,
    dir: tempfile::TempDir,
    port: u16,
}

impl Server {
    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A command for one of the server's tools, as the server's user.
    fn tool(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        let mut cmd = match self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(program);
                c
            }
            None => Command::new(program),
        };
        // The server's user may not be allowed into our working directory.
        cmd.current_dir(self.dir.path());
        cmd
    }

    fn run_tool(&self, name: &str, args: &[&str]) -> Result<(), String> {
        let out = self.tool(name).args(args).output().map_err(|e| format!("cannot run {name}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("{name} {} failed ({}):\n{}", args.join(" "), out.status, output_text(&out)))
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// initdb, configure and start a cluster; wait until it answers.
    fn start(bin: PathBuf) -> Server {
        let user = if id(&["-u"]) == Some(0) {
            if id(&["-u", SERVER_USER]).is_none() {
                let out = Command::new("useradd")
                    .args(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVER_USER])
                    .output()
                    .expect("run useradd");
                assert!(out.status.success(), "useradd {SERVER_USER} failed:\n{}", output_text(&out));
            }
            Some(SERVER_USER)
        } else {
            None
        };
        let dir =
            tempfile::Builder::new().prefix("centum-pg-").tempdir().expect("make a temporary directory");
        if let Some(user) = user {
            let uid = id(&["-u", user]).expect("uid of the server's user");
            let gid = id(&["-g", user]).expect("gid of the server's user");
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .expect("chown the temporary directory");
        }
        let mut server = Server { bin, user, dir, port: 0 };
        let data = server.data();
        let data = data.to_str().expect("temporary path is UTF-8");
        server
            .run_tool(
                "initdb",
                &["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "-N"],
            )
            .unwrap_or_else(|e| panic!("{e}"));
        let sock = server.dir.path().display().to_string();
        let mut last_error = String::new();
        for _ in 0..3 {
            // A free port now; should another process take it before the
            // server binds it, start fails and we try another.
            server.port =
                TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port();
            // Later lines win, so a retry just appends its own port.
            let conf = format!(
                "\n# centum-sql tests/postgres.rs\n\
                 listen_addresses = '127.0.0.1'\n\
                 port = {}\n\
                 unix_socket_directories = '{sock}'\n\
                 fsync = off\n\
                 synchronous_commit = off\n\
                 full_page_writes = off\n\
                 shared_buffers = 16MB\n\
                 max_connections = 20\n\
                 timezone = 'UTC'\n\
                 datestyle = 'ISO, MDY'\n\
                 lc_messages = 'C'\n\
                 statement_timeout = '{STATEMENT_TIMEOUT}'\n",
                server.port
            );
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(server.data().join("postgresql.conf"))
                .expect("open postgresql.conf");
            f.write_all(conf.as_bytes()).expect("write postgresql.conf");
            drop(f);
            let log = server.dir.path().join("server.log");
            let timeout = START_TIMEOUT.as_secs().to_string();
            let started = server.run_tool(
                "pg_ctl",
                &["start", "-D", data, "-l", log.to_str().unwrap(), "-w", "-t", &timeout, "-s"],
            );
            match started {
                Ok(()) => {
                    server.wait_ready();
                    return server;
                }
                Err(e) => last_error = format!("{e}\nserver log:\n{}", server.log()),
            }
        }
        panic!("PostgreSQL did not start:\n{last_error}");
    }

    fn connect(&self, dbname: &str) -> Result<Client, postgres::Error> {
        postgres::Config::new()
            .host("127.0.0.1")
            .port(self.port)
            .user("postgres")
            .dbname(dbname)
            .connect_timeout(Duration::from_secs(10))
            .connect(NoTls)
    }

    /// Waits, bounded, until the server takes connections.
    fn wait_ready(&self) {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match self.connect("postgres") {
                Ok(_) => return,
                Err(e) if Instant::now() > deadline => {
                    panic!(
                        "PostgreSQL is not answering on port {}: {e}\nserver log:\n{}",
                        self.port,
                        self.log()
                    )
                }
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.port == 0 {
            return;
        }
        let data = self.data();
        let _ = self.run_tool(
            "pg_ctl",
            &["stop", "-D", data.to_str().unwrap(), "-m", "immediate", "-w", "-t", "30", "-s"],
        );
    }
}

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
/// docs/sql-compatibility.md).
const NOT_COMPARED: &[&str] = &["catalog", "procedure_limits"];

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

/// Interleavings of sessions (`tests/interleavings/NAME.sql`): `SESSION x;`
/// switches to session `x` (a connection to each side, opened at first
/// use). Every statement must get the same outcome on both sides: there
/// is no list of accepted differences here. Waits are kept short by the
/// scripts' `lock_timeout`, since one thread drives every session.
fn compare_interleaving(server: &Server, admin: &mut Client, name: &str, report: &mut String) {
    let path = interleavings_dir().join(format!("{name}.sql"));
    let script = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let dbname = format!("interleave_{name}");
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS \"{dbname}\"")).unwrap();
    admin.batch_execute(&format!("CREATE DATABASE \"{dbname}\"")).unwrap();
    let db = common::db();
    let mut sessions: BTreeMap<String, (Client, centum_sql::Session)> = BTreeMap::new();
    let mut current = "a".to_string();
    for stmt in common::statements(&script) {
        if let Some(next) = stmt.strip_prefix("SESSION ") {
            current = next.trim().to_lowercase();
            continue;
        }
        let (pg, centum) = sessions.entry(current.clone()).or_insert_with(|| {
            let pg = server.connect(&dbname).unwrap_or_else(|e| panic!("connect to {dbname}: {e}"));
            (pg, db.session())
        });
        let want = run_postgres(pg, &stmt);
        let got = run_centum(centum, &stmt);
        if want != got {
            writeln!(
                report,
                "interleaving {name}, session {current}:\n{}\n  PostgreSQL:\n{want}\n  Centum:\n{got}\n",
                normalize(&stmt)
            )
            .unwrap();
        }
    }
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
    let Some(bin) = find_bin() else {
        let msg = "PostgreSQL's server binaries (initdb, pg_ctl) were not found in $PG_BIN, \
                   /usr/lib/postgresql/*/bin or PATH";
        if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
            panic!("{msg}; CI must install them (apt-get install postgresql)");
        }
        // Straight to stderr: the harness would swallow eprintln!'s output.
        let _ = writeln!(std::io::stderr(), "tests/postgres.rs: {msg}: comparison with PostgreSQL SKIPPED");
        return;
    };
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
