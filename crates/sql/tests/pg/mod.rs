//! A throw-away PostgreSQL cluster for tests that compare Centum with the
//! real thing: `initdb` into a temporary directory (as the `postgres`
//! account when the test runs as root), started with `pg_ctl` on a free
//! loopback port with durability off (tests compare answers, not speed),
//! stopped on drop. Shared by the SQL crate's comparison test and the
//! server's wire-level comparisons (included there by path).
#![allow(dead_code)]

use postgres::{Client, NoTls};
use std::io::Write as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// How long the server may take to start, and a statement to run.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);
pub const STATEMENT_TIMEOUT: &str = "30s";

/// [`find_bin`] for a test that compares with PostgreSQL. Where its
/// server programs are missing: under CI a failure (CI must install them),
/// elsewhere `None` and a note on stderr that `what` was skipped.
pub fn required_bin(what: &str) -> Option<PathBuf> {
    if let Some(bin) = find_bin() {
        return Some(bin);
    }
    let msg = "PostgreSQL's server programs (initdb, pg_ctl) were not found in $PG_BIN, \
               /usr/lib/postgresql/*/bin or PATH";
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{msg}; CI must install them (.ci/run installs them)");
    }
    // Straight to stderr: the harness would swallow eprintln!'s output.
    let _ = writeln!(std::io::stderr(), "{msg}: {what} SKIPPED");
    None
}

/// The directory holding `initdb` and `pg_ctl`.
pub fn find_bin() -> Option<PathBuf> {
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
pub struct Server {
    bin: PathBuf,
    /// `Some(user)` when the tools must run as that user (we are root).
    user: Option<&'static str>,
    dir: tempfile::TempDir,
    pub port: u16,
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

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// initdb, configure and start a cluster; wait until it answers.
    pub fn start(bin: PathBuf) -> Server {
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

    pub fn connect(&self, dbname: &str) -> Result<Client, postgres::Error> {
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
