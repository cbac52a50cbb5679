//! The servers a run measures: a throw-away PostgreSQL cluster and a
//! Centum server, each on a free loopback port over a directory of its
//! own, stopped when dropped. Both are reached through an [`Endpoint`],
//! which the load driver and pgbench use alike.

use super::Res;
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to start or to recover.
const START_TIMEOUT: Duration = Duration::from_secs(600);

/// Where a client reaches a server.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// The system's name in reports: `PostgreSQL` or `Centum`.
    pub system: &'static str,
    pub port: u16,
    pub user: &'static str,
    /// The server's process (PostgreSQL's postmaster), whose process tree
    /// [`Endpoint::cpu`] reads; 0 until it has started.
    pub pid: u32,
}

impl Endpoint {
    /// A new connection.
    pub fn connect(&self) -> Res<postgres::Client> {
        Ok(postgres::Config::new()
            .host("127.0.0.1")
            .port(self.port)
            .user(self.user)
            .dbname("postgres")
            .connect_timeout(Duration::from_secs(30))
            .connect(postgres::NoTls)?)
    }

    /// CPU time (user + system) the server has used so far: its process
    /// and every descendant alive now, plus what descendants that have
    /// exited and been waited for left in its children's account
    /// (PostgreSQL's backends end with their connections). The difference
    /// of two readings is what the server spent in between.
    pub fn cpu(&self) -> Res<Duration> {
        let ticks: u64 =
            self.tree()?.iter().map(|p| p.own + if p.pid == self.pid { p.children } else { 0 }).sum();
        Ok(Duration::from_secs_f64(ticks as f64 / clock_ticks()))
    }

    /// The memory the server holds now, in bytes: the proportional set
    /// size (`Pss` of `/proc/PID/smaps_rollup`) of its process and every
    /// descendant, so pages several of them share (PostgreSQL's shared
    /// buffers) count once.
    pub fn memory(&self) -> Res<u64> {
        let mut kib = 0u64;
        for p in self.tree()? {
            let Ok(text) = std::fs::read_to_string(format!("/proc/{}/smaps_rollup", p.pid)) else { continue };
            let pss = text.lines().find_map(|l| l.strip_prefix("Pss:"));
            kib += pss.and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok()).unwrap_or(0);
        }
        Ok(kib << 10)
    }

    /// The server's process and its descendants alive now, with their CPU
    /// ticks.
    fn tree(&self) -> Res<Vec<Proc>> {
        let mut all: Vec<(u32, Proc)> = Vec::new(); // parent, process
        for entry in std::fs::read_dir("/proc")? {
            let Ok(pid) = entry?.file_name().to_string_lossy().parse::<u32>() else { continue };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
            // Fields after the command (which may hold spaces) in brackets.
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else { continue };
            let f: Vec<&str> = rest.split(' ').collect();
            let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            // state=0 ppid=1 ... utime=11 stime=12 cutime=13 cstime=14
            all.push((num(1) as u32, Proc { pid, own: num(11) + num(12), children: num(13) + num(14) }));
        }
        let mut tree = Vec::new();
        let mut todo = vec![self.pid];
        while let Some(p) = todo.pop() {
            for (parent, proc) in &all {
                if proc.pid == p {
                    tree.push(*proc);
                }
                if *parent == p {
                    todo.push(proc.pid);
                }
            }
        }
        Ok(tree)
    }

    /// Waits, bounded, until the server answers a query.
    fn wait_ready(&self, mut child: Option<&mut Child>, log: &Path) -> Res<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let answered = self.connect().map(|mut c| c.simple_query("SELECT 1").is_ok());
            match answered {
                Ok(true) => return Ok(()),
                _ if Instant::now() > deadline => {
                    return Err(format!(
                        "{} did not answer on port {}:\n{}",
                        self.system,
                        self.port,
                        tail(log)
                    )
                    .into())
                }
                _ => {}
            }
            if let Some(c) = child.as_deref_mut() {
                if let Some(status) = c.try_wait()? {
                    return Err(format!("{} exited with {status}:\n{}", self.system, tail(log)).into());
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A process of a server's tree and its CPU ticks: its own, and what its
/// exited, waited-for children left in its account.
#[derive(Clone, Copy)]
struct Proc {
    pid: u32,
    own: u64,
    children: u64,
}

/// The one value of a query that returns one bigint (a count, a sum, a
/// size).
pub fn scalar(c: &mut postgres::Client, sql: &str) -> Res<i64> {
    Ok(c.query_one(sql, &[])?.get(0))
}

/// The kernel's clock ticks per second, the unit of /proc's CPU times.
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// The last lines of a log file, for an error message.
fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// A free loopback port: bound, then released for the server to take.
pub fn free_port() -> Res<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn output_text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `id ARGS` as a number.
fn id(args: &[&str]) -> Option<u32> {
    let out = Command::new("id").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().parse().ok())?
}

/// The directory with PostgreSQL's server programs: `dir` if given, else
/// the newest `/usr/lib/postgresql/<major>/bin` (Debian's layout), else
/// `PATH`.
pub fn postgres_bin(dir: Option<&Path>) -> Res<PathBuf> {
    let has_tools = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    if let Some(dir) = dir {
        return if has_tools(dir) {
            Ok(dir.to_path_buf())
        } else {
            Err(format!("{} holds no initdb and pg_ctl", dir.display()).into())
        };
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin)| has_tools(bin))
        .collect();
    found.sort();
    found
        .pop()
        .map(|(_, bin)| bin)
        .or_else(|| {
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).find(|d| has_tools(d))
        })
        .ok_or_else(|| {
            "PostgreSQL's server programs were not found (apt-get install postgresql, or --pg-bin)".into()
        })
}

/// A PostgreSQL cluster in a directory of its own, with the settings
/// The memory, WAL and checkpoint settings a tuning guide (PGTune's OLTP
/// profile, SSD storage) gives PostgreSQL on this machine: a quarter of
/// the memory for shared buffers (at least workloads.md's 2 GB), three
/// quarters as the cache estimate, WAL room for 15-minute checkpoints.
/// The report lists them.
pub fn tuned_settings() -> Vec<String> {
    let kib: u64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(8 << 20);
    let mib = kib / 1024;
    vec![
        format!("shared_buffers = {}MB", (mib / 4).max(2048)),
        format!("effective_cache_size = {}MB", mib * 3 / 4),
        format!("maintenance_work_mem = {}MB", (mib / 16).min(2048)),
        "work_mem = 16MB".into(),
        "wal_buffers = 16MB".into(),
        "min_wal_size = 2GB".into(),
        "max_wal_size = 8GB".into(),
        "checkpoint_timeout = 15min".into(),
        "checkpoint_completion_target = 0.9".into(),
        "random_page_cost = 1.1".into(),
        "effective_io_concurrency = 200".into(),
    ]
}

/// Connections each server accepts unless a workload needs more: the
/// `max_connections` that `workloads.md` names.
pub const CONNECTIONS: usize = 300;

/// `workloads.md` names: shared_buffers 2GB, max_connections 300, and
/// durable commits (fsync and synchronous_commit on, the defaults).
pub struct Postgres {
    bin: PathBuf,
    /// The account the programs run as when we are root (PostgreSQL
    /// refuses to run as root).
    user: Option<&'static str>,
    dir: PathBuf,
    pub endpoint: Endpoint,
    running: bool,
}

impl Postgres {
    /// initdb under `dir` (made empty first), configure, start.
    pub fn start(bin: &Path, dir: &Path, connections: usize) -> Res<Postgres> {
        let user = if id(&["-u"]) == Some(0) {
            if id(&["-u", "postgres"]).is_none() {
                let out = Command::new("useradd")
                    .args(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"])
                    .output()?;
                if !out.status.success() {
                    return Err(format!("useradd postgres: {}", output_text(&out)).into());
                }
            }
            Some("postgres")
        } else {
            None
        };
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::create_dir_all(dir)?;
        if let Some(user) = user {
            let uid = id(&["-u", user]).ok_or("no uid for postgres")?;
            let gid = id(&["-g", user]).ok_or("no gid for postgres")?;
            std::os::unix::fs::chown(dir, Some(uid), Some(gid))?;
        }
        let endpoint = Endpoint { system: "PostgreSQL", port: free_port()?, user: "postgres", pid: 0 };
        let mut pg =
            Postgres { bin: bin.to_path_buf(), user, dir: dir.to_path_buf(), endpoint, running: false };
        let data = pg.data();
        pg.tool("initdb", &["-D", &data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "-N"])?;
        let conf = format!(
            "\n# centum-bench: durable commits, as PostgreSQL's defaults, and the\n\
             # memory and checkpoint settings a tuning guide gives this machine\n\
             listen_addresses = '127.0.0.1'\n\
             port = {}\n\
             unix_socket_directories = '{}'\n\
             max_connections = {}\n\
             fsync = on\n\
             synchronous_commit = on\n\
             {}\n\
             log_checkpoints = on\n\
             timezone = 'UTC'\n\
             lc_messages = 'C'\n",
            pg.endpoint.port,
            dir.display(),
            connections,
            tuned_settings().join("\n")
        );
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join("data/postgresql.conf"))?
            .write_all(conf.as_bytes())?;
        pg.start_again()?;
        Ok(pg)
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    /// The server's log file.
    pub fn log(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// Runs one of PostgreSQL's programs as the server's account.
    fn tool(&self, name: &str, args: &[&str]) -> Res<()> {
        let program = self.bin.join(name);
        let mut cmd = match self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(program);
                c
            }
            None => Command::new(program),
        };
        let out = cmd.args(args).current_dir(&self.dir).output()?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("{name} {}: {}\n{}", args.join(" "), output_text(&out), tail(&self.log())).into())
        }
    }

    /// Starts the (stopped) cluster and waits until it answers; returns how
    /// long that took, which after a crash is its recovery time.
    pub fn start_again(&mut self) -> Res<Duration> {
        let started = Instant::now();
        let (data, log) = (self.data(), self.log().display().to_string());
        self.tool("pg_ctl", &["start", "-D", &data, "-l", &log, "-w", "-t", "600", "-s"])?;
        self.running = true;
        self.endpoint.wait_ready(None, &self.log())?;
        // postmaster.pid's first line is the postmaster's process id.
        let pidfile = std::fs::read_to_string(self.dir.join("data/postmaster.pid"))?;
        self.endpoint.pid = pidfile.lines().next().and_then(|l| l.trim().parse().ok()).unwrap_or(0);
        Ok(started.elapsed())
    }

    /// Stops the server the way a crash would (`-m immediate`: no
    /// shutdown checkpoint; the next start replays the WAL).
    pub fn crash(&mut self) -> Res<()> {
        let data = self.data();
        self.tool("pg_ctl", &["stop", "-D", &data, "-m", "immediate", "-w", "-t", "60", "-s"])?;
        self.running = false;
        Ok(())
    }

    /// The path of one of PostgreSQL's client programs (pgbench).
    pub fn program(&self, name: &str) -> PathBuf {
        let p = self.bin.join(name);
        if p.is_file() {
            p
        } else {
            PathBuf::from(name)
        }
    }

    /// `postgres --version`'s number, for the programs in `bin`.
    pub fn version_of(bin: &Path) -> String {
        Command::new(bin.join("postgres"))
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().nth(2).unwrap_or("").to_string())
            .unwrap_or_default()
    }

    /// The cluster's directory, to measure what it holds on disk.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.running {
            let data = self.data();
            let _ = self.tool("pg_ctl", &["stop", "-D", &data, "-m", "immediate", "-w", "-t", "60", "-s"]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The `centum` server binary: `given`, else the one built beside this
/// program (`cargo build --release` builds both into `target/release`).
pub fn centum_bin(given: Option<&Path>) -> Res<PathBuf> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    let exe = std::env::current_exe()?;
    // Beside us, or one level up when we run from target/*/deps (tests).
    for dir in exe.ancestors().skip(1).take(2) {
        let p = dir.join("centum");
        if p.is_file() {
            return Ok(p);
        }
    }
    Err("the centum server binary was not found beside centum-bench: build it with \
         `cargo build --release -p centum-server`, or pass --centum"
        .into())
}

/// A `centum serve` process over a data directory of its own, with
/// durable commits (its default).
pub struct Centum {
    dir: PathBuf,
    child: Child,
    pub endpoint: Endpoint,
}

impl Centum {
    /// Starts a server on a new, empty data directory `dir` and waits until
    /// it answers.
    pub fn start(bin: &Path, dir: &Path, connections: usize) -> Res<Centum> {
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::create_dir_all(dir)?;
        let mut endpoint = Endpoint { system: "Centum", port: free_port()?, user: "centum", pid: 0 };
        let log_path = dir.join("server.log");
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&log_path)?;
        let child = Command::new(bin)
            .arg("serve")
            .arg("--data-dir")
            .arg(dir.join("data"))
            .arg("--listen")
            .arg(format!("127.0.0.1:{}", endpoint.port))
            .args(["--max-connections", &connections.to_string(), "--log", "warn"])
            .env_remove("CENTUM_CONFIG")
            .stdout(Stdio::from(log.try_clone()?))
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        endpoint.pid = child.id();
        let mut c = Centum { dir: dir.to_path_buf(), child, endpoint };
        c.endpoint.wait_ready(Some(&mut c.child), &log_path)?;
        Ok(c)
    }

    /// The data directory, to measure what it holds on disk.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }
}

impl Drop for Centum {
    /// Kills the server (nothing to flush: the run is over) and removes
    /// its directory.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Bytes in the files under `dir`.
pub fn du(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => du(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
