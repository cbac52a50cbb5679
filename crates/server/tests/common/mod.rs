//! Shared by the server's integration tests: a `centum serve` process on a
//! free loopback port over a temporary data directory, stopped (SIGTERM,
//! then SIGKILL) when dropped; and finding the real PostgreSQL clients.
#![allow(dead_code)]

pub mod wire;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A running server.
pub struct Server {
    pub port: u16,
    pub dir: tempfile::TempDir,
    child: Option<Child>,
    pub log: PathBuf,
    /// The port every launch listens on (0: a new one each time).
    fixed: u16,
}

impl Server {
    /// Starts a server on a new data directory with `args` added.
    pub fn start(args: &[&str]) -> Server {
        Server::start_env(args, &[])
    }

    /// Starts a server with `args` and environment `env`.
    pub fn start_env(args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::start_at(0, args, env)
    }

    /// Starts a server that listens on `port` (0: one the kernel picks),
    /// now and whenever it is launched again.
    pub fn start_at(port: u16, args: &[&str], env: &[(&str, &str)]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Server { port, log: dir.path().join("server.log"), dir, child: None, fixed: port };
        s.launch(args, env);
        s
    }

    /// Starts (again) on this data directory, on a new port. The server
    /// binds port 0 and the kernel picks a free one, which the server
    /// writes into its lock file. (Picking a free port here and passing it
    /// on is racy: a process another test forks at that moment inherits
    /// the probing socket and keeps it listening until it execs, taking
    /// the connections meant for the server and then resetting them.)
    pub fn launch(&mut self, args: &[&str], env: &[(&str, &str)]) {
        let data = self.dir.path().join("data");
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_centum"));
        cmd.arg("serve")
            .arg("--data-dir")
            .arg(&data)
            .arg("--listen")
            .arg(format!("127.0.0.1:{}", self.fixed))
            .args(args)
            .env_remove("CENTUM_CONFIG")
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log));
        for (k, v) in env {
            cmd.env(k, v);
        }
        self.child = Some(cmd.spawn().expect("start centum serve"));
        let pid = self.child.as_ref().unwrap().id();
        let deadline = Instant::now() + Duration::from_secs(60);
        self.port = loop {
            if let Some(port) = listen_port(&data, pid) {
                break port;
            }
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("server exited with {status}: {}", self.log_text());
            }
            assert!(Instant::now() < deadline, "server did not start: {}", self.log_text());
            std::thread::sleep(Duration::from_millis(20));
        };
    }

    /// The server's log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A libpq connection string for `user`.
    pub fn url(&self, user: &str) -> String {
        format!("postgresql://{user}@127.0.0.1:{}/postgres", self.port)
    }

    /// `host=... port=... user=... dbname=postgres` for the Rust driver.
    pub fn conninfo(&self, user: &str) -> String {
        format!("host=127.0.0.1 port={} user={user} dbname=postgres", self.port)
    }

    /// Sends SIGTERM and waits for a clean exit; returns whether it exited
    /// with status 0 within the time.
    pub fn stop(&mut self) -> bool {
        let Some(mut child) = self.child.take() else { return true };
        unsafe_kill(child.id(), "TERM");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status.success();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server with SIGKILL, as a crash would, and waits for it.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        self.child.as_mut().is_some_and(|c| c.try_wait().unwrap().is_none())
    }
}

/// The port server `pid` listens on, once it has written it under its
/// process id into the data directory's lock file (`pid`, then the
/// address); `None` before that, or while the file still names an
/// earlier server.
fn listen_port(data: &Path, pid: u32) -> Option<u16> {
    let text = std::fs::read_to_string(data.join("centum.lock")).ok()?;
    let mut lines = text.lines();
    if lines.next()?.trim().parse::<u32>().ok()? != pid {
        return None;
    }
    lines.next()?.trim().parse::<std::net::SocketAddr>().ok().map(|a| a.port())
}

fn unsafe_kill(pid: u32, sig: &str) {
    let _ = Command::new("kill").arg(format!("-{sig}")).arg(pid.to_string()).status();
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The directory of PostgreSQL's client programs (psql, pgbench): `$PG_BIN`,
/// the newest `/usr/lib/postgresql/<v>/bin`, or `PATH`. `None` when there
/// are none: the caller skips, or fails under CI.
pub fn pg_bin(program: &str) -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("PG_BIN") {
        let p = Path::new(&d).join(program);
        if p.is_file() {
            return Some(p);
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin").join(program))))
        .filter(|(_, p)| p.is_file())
        .collect();
    versions.sort();
    if let Some((_, p)) = versions.pop() {
        return Some(p);
    }
    let found = Command::new("sh").arg("-c").arg(format!("command -v {program}")).output().ok()?;
    let path = String::from_utf8_lossy(&found.stdout).trim().to_string();
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// `pg_bin`, or: under CI a failure, elsewhere `None` and a message.
pub fn require(program: &str) -> Option<PathBuf> {
    match pg_bin(program) {
        Some(p) => Some(p),
        None if std::env::var_os("CI").is_some() => {
            panic!("{program} is not installed (.ci/run installs it)")
        }
        None => {
            eprintln!("{program} not found: test skipped (set PG_BIN or install PostgreSQL's clients)");
            None
        }
    }
}

/// Runs a command, returning its output; panics with both streams when it
/// fails.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("run command");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `psql` against `server` as role `centum` with `args`; stdout.
pub fn psql(psql: &Path, server: &Server, args: &[&str]) -> String {
    let out = run_ok(
        Command::new(psql)
            .arg(server.url("centum"))
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1"])
            .args(args)
            .env("PGCONNECT_TIMEOUT", "10"),
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `pgbench` against `server` as role `centum` with `args` and extra
/// environment; stdout and stderr together.
pub fn pgbench(bin: &Path, server: &Server, env: &[(&str, &str)], args: &[&str]) -> String {
    let out = run_ok(
        Command::new(bin)
            .args(["-h", "127.0.0.1", "-p", &server.port.to_string(), "-U", "centum"])
            .args(args)
            .arg("postgres")
            .envs(env.iter().copied()),
    );
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Checks pgbench's report: all `expected` transactions ran, none failed,
/// no client aborted.
pub fn assert_all_ran(out: &str, expected: u32, what: &str) {
    let want = format!("number of transactions actually processed: {expected}/{expected}");
    assert!(out.contains(&want), "{what}: not every transaction ran:\n{out}");
    assert!(out.contains("number of failed transactions: 0 (0.000%)"), "{what}: failures:\n{out}");
    assert!(!out.contains("aborted"), "{what}: a client aborted:\n{out}");
}

/// Free loopback ports, found by binding port 0 (for addresses that must
/// be known before the servers start: a replicated group's members).
pub fn free_ports(n: usize) -> Vec<u16> {
    let held: Vec<_> = (0..n).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    held.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

/// A connection as the superuser to the server on `port`, if it answers
/// within a couple of seconds.
pub fn connect(port: u16) -> Option<postgres::Client> {
    let info = format!("host=127.0.0.1 port={port} user=centum dbname=postgres connect_timeout=2");
    postgres::Client::connect(&info, postgres::NoTls).ok()
}

/// Whether the server on `port` answers `pg_is_in_recovery()` with false.
pub fn is_primary(port: u16) -> bool {
    connect(port)
        .and_then(|mut c| c.query_one("SELECT pg_is_in_recovery()", &[]).ok())
        .is_some_and(|r| !r.get::<_, bool>(0))
}

/// The flags of each member of a replicated group whose replication
/// addresses are on `ports` of loopback: `--node-id i --peers 1=...,2=...`.
pub fn member_args(ports: &[u16]) -> Vec<Vec<String>> {
    let peers: Vec<String> =
        ports.iter().enumerate().map(|(i, p)| format!("{}=127.0.0.1:{p}", i + 1)).collect();
    let peers = peers.join(",");
    (1..=ports.len())
        .map(|id| vec!["--node-id".into(), id.to_string(), "--peers".into(), peers.clone()])
        .collect()
}
