//! The systems measured beside Centum and PostgreSQL: Tarantool, the
//! in-memory peer (memtx engine, write-ahead log; W1 and W8), and `redis-server`
//! answering GET, the floor: what one request over loopback costs a
//! server on this machine when it does next to nothing.
//!
//! Each runs as a process of its own on a free loopback port in a
//! directory of its own, killed and removed when dropped, and is reached
//! through an [`Endpoint`] whose `pid` the CPU accounting reads. Their
//! programs come from the Debian packages `tarantool` and `redis-server`
//! (with `redis-tools` for `redis-benchmark`); [`program`] installs a
//! missing package when it can, and otherwise says why not, so the
//! workload is skipped with that reason.

use super::driver;
use super::servers::{free_port, Endpoint};
use super::Res;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The path of `name`, installing Debian's `package` first if it is
/// missing and this process may (root, with apt-get); `Err` says why the
/// program cannot be had.
pub fn program(name: &str, package: &str) -> Result<PathBuf, String> {
    let find = || {
        std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    };
    if let Some(p) = find() {
        return Ok(p);
    }
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if !root || find_in("/usr/bin/apt-get").is_none() {
        return Err(format!(
            "{name} is not installed (Debian package {package}) and cannot be installed here"
        ));
    }
    let out = Command::new("apt-get")
        .args(["install", "-y", "-qq", package])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .map_err(|e| format!("apt-get install {package}: {e}"))?;
    find().ok_or_else(|| {
        format!(
            "{name} is missing and apt-get install {package} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })
}

fn find_in(path: &str) -> Option<PathBuf> {
    Path::new(path).is_file().then(|| PathBuf::from(path))
}

/// A server process of ours, killed and its directory removed on drop.
struct Process {
    dir: PathBuf,
    child: Child,
}

impl Process {
    fn spawn(cmd: &mut Command, dir: &Path) -> Res<Process> {
        let log = std::fs::File::create(dir.join("server.log"))?;
        let child =
            cmd.current_dir(dir).stdout(Stdio::from(log.try_clone()?)).stderr(Stdio::from(log)).spawn()?;
        Ok(Process { dir: dir.to_path_buf(), child })
    }

    /// Waits until `ready` holds, failing if the process exits first or
    /// `timeout` passes.
    fn wait(&mut self, what: &str, timeout: Duration, ready: impl Fn() -> bool) -> Res<()> {
        let deadline = Instant::now() + timeout;
        while !ready() {
            if let Some(status) = self.child.try_wait()? {
                let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
                return Err(format!("{what} exited with {status}:\n{log}").into());
            }
            if Instant::now() > deadline {
                return Err(format!("{what} was not ready within {timeout:?}").into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn fresh(dir: &Path) -> Res<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    Ok(())
}

/// The server: pgbench's four tables as memtx spaces with a primary key
/// each (history's from a sequence, as Tarantool needs one), loaded at the
/// scale factor with pgbench's values, and the TPC-B transaction as one
/// Lua function in one box transaction: the five statements of pgbench's
/// script. `wal_mode` 'fsync' makes every commit durable before it is
/// acknowledged (the write-ahead log thread groups commits), 'none' logs
/// nothing. It writes `ready` when loaded.
const TARANTOOL_SERVER: &str = r#"
local port, wal, scale = arg[1], arg[2], tonumber(arg[3])
box.cfg{listen = '127.0.0.1:' .. port, wal_mode = wal, log_level = 2,
        memtx_memory = 2 * 1024 * 1024 * 1024, checkpoint_interval = 0}
box.schema.user.grant('guest', 'read,write,execute', 'universe', nil, {if_not_exists = true})
local function space(name, fields)
    local s = box.schema.space.create(name, {format = fields})
    return s
end
local a = space('pgbench_accounts', {{'aid', 'unsigned'}, {'bid', 'unsigned'}, {'abalance', 'integer'}, {'filler', 'string'}})
a:create_index('pk', {parts = {'aid'}})
local t = space('pgbench_tellers', {{'tid', 'unsigned'}, {'bid', 'unsigned'}, {'tbalance', 'integer'}, {'filler', 'string'}})
t:create_index('pk', {parts = {'tid'}})
local b = space('pgbench_branches', {{'bid', 'unsigned'}, {'bbalance', 'integer'}, {'filler', 'string'}})
b:create_index('pk', {parts = {'bid'}})
local h = space('pgbench_history', {{'id', 'unsigned'}, {'tid', 'unsigned'}, {'bid', 'unsigned'},
    {'aid', 'unsigned'}, {'delta', 'integer'}, {'mtime', 'number'}, {'filler', 'string'}})
box.schema.sequence.create('history_id')
h:create_index('pk', {parts = {'id'}, sequence = 'history_id'})
local filler = string.rep(' ', 84)
for i = 1, scale do
    box.begin()
    b:insert{i, 0, ''}
    for k = 1, 10 do t:insert{(i - 1) * 10 + k, i, 0, ''} end
    box.commit()
    for chunk = 0, 9 do
        box.begin()
        for k = 1, 10000 do
            local aid = (i - 1) * 100000 + chunk * 10000 + k
            a:insert{aid, i, 0, filler}
        end
        box.commit()
    end
end
local clock = require('clock')
function tpcb(aid, tid, bid, delta)
    box.begin()
    box.space.pgbench_accounts:update(aid, {{'+', 'abalance', delta}})
    local balance = box.space.pgbench_accounts:get(aid).abalance
    box.space.pgbench_tellers:update(tid, {{'+', 'tbalance', delta}})
    box.space.pgbench_branches:update(bid, {{'+', 'bbalance', delta}})
    box.space.pgbench_history:insert{box.NULL, tid, bid, aid, delta, clock.time(), ''}
    box.commit()
    return balance
end
function sums()
    local function sum(space, field)
        local s = 0
        for _, tuple in box.space[space]:pairs() do s = s + tuple[field] end
        return s
    end
    return {sum('pgbench_accounts', 3), sum('pgbench_tellers', 3), sum('pgbench_branches', 2),
            sum('pgbench_history', 5), box.space.pgbench_history:len(), box.space.pgbench_accounts:len()}
end
local f = io.open('ready', 'w') f:write('ready') f:close()
"#;

/// A client: one net.box connection (Tarantool's own client), running
/// `mode` for `seconds`, then printing how many it did. `select` reads an
/// account by key with a plain select request (no Lua on the server);
/// `pipeline` sends 16 such reads at once and waits for all (one count
/// per 16); `tpcb` calls the function; `sums` prints the balances.
const TARANTOOL_CLIENT: &str = r#"
local nb = require('net.box')
local clock = require('clock')
local json = require('json')
local port, mode, seconds, scale, seed = arg[1], arg[2], tonumber(arg[3]), tonumber(arg[4]), tonumber(arg[5])
math.randomseed(seed)
local c = nb.connect('127.0.0.1:' .. port)
if mode == 'sums' then print(json.encode(c:call('sums'))) os.exit(0) end
local accounts = c.space.pgbench_accounts
local n = 0
local deadline = clock.monotonic() + seconds
if mode == 'select' then
    while clock.monotonic() < deadline do
        accounts:get(math.random(1, 100000 * scale))
        n = n + 1
    end
elseif mode == 'pipeline' then
    local futures = {}
    while clock.monotonic() < deadline do
        for i = 1, 16 do futures[i] = accounts:get(math.random(1, 100000 * scale), {is_async = true}) end
        for i = 1, 16 do assert(futures[i]:wait_result(60)) end
        n = n + 1
    end
elseif mode == 'tpcb' then
    while clock.monotonic() < deadline do
        c:call('tpcb', {math.random(1, 100000 * scale), math.random(1, 10 * scale), math.random(1, scale),
                        math.random(-5000, 5000)})
        n = n + 1
    end
end
print(n)
os.exit(0)
"#;

/// W1's sales orders as a Tarantool server script, and its client.
const SALES_ORDERS_SERVER: &str = include_str!("sales_orders.lua");
const SALES_ORDERS_CLIENT: &str = include_str!("sales_orders_client.lua");

/// A Tarantool server running one of the scripts above: pgbench's tables
/// at a scale factor (W8), or the sales orders (W1).
pub struct Tarantool {
    process: Process,
    bin: PathBuf,
    pub endpoint: Endpoint,
}

impl Tarantool {
    /// Starts it in `dir` (made empty) with `wal_mode` ('fsync' or
    /// 'none') and waits until its tables are loaded.
    pub fn start(bin: &Path, dir: &Path, wal_mode: &str, scale: u32) -> Res<Tarantool> {
        let files = [("server.lua", TARANTOOL_SERVER), ("client.lua", TARANTOOL_CLIENT)];
        Tarantool::launch(bin, dir, &files, &[wal_mode, &scale.to_string()])
    }

    /// Starts W1's sales orders (`sales_orders.lua`, durable commits) in
    /// `dir` with the sample orders `samples` (one a line: `order_no
    /// qty,product_id,special_offer_id;...`), and waits until loaded.
    pub fn sales_orders(bin: &Path, dir: &Path, samples: &str) -> Res<Tarantool> {
        let files = [
            ("server.lua", SALES_ORDERS_SERVER),
            ("client.lua", SALES_ORDERS_CLIENT),
            ("samples.txt", samples),
        ];
        Tarantool::launch(bin, dir, &files, &["samples.txt"])
    }

    /// Writes `files` into `dir` (made empty), runs `server.lua` with a
    /// free port and `args`, and waits until it writes `ready`.
    fn launch(bin: &Path, dir: &Path, files: &[(&str, &str)], args: &[&str]) -> Res<Tarantool> {
        fresh(dir)?;
        for (name, text) in files {
            std::fs::write(dir.join(name), text)?;
        }
        let port = free_port()?;
        let mut process =
            Process::spawn(Command::new(bin).arg("server.lua").arg(port.to_string()).args(args), dir)?;
        let ready = dir.join("ready");
        process.wait("tarantool", Duration::from_secs(600), || ready.exists())?;
        let endpoint = Endpoint { system: "Tarantool", port, user: "guest", pid: process.child.id() };
        Ok(Tarantool { process, bin: bin.to_path_buf(), endpoint })
    }

    /// Calls a server function through one client with at most one
    /// argument; returns its result as JSON text.
    pub fn call(&self, function: &str, arg: Option<&str>) -> Res<String> {
        let out = self.command().args(["call", function]).args(arg).output()?;
        if !out.status.success() {
            return Err(format!("tarantool {function}: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Runs `clients` client processes in a timed `mode` of
    /// `sales_orders_client.lua`, each with `extra(client)` after its
    /// number and the count. As [`driver::run`] does, the clock runs from
    /// the moment every client has connected and made its calls ready
    /// until the last finishes; every call's latency is recorded.
    pub fn drive(
        &self,
        mode: &str,
        clients: usize,
        extra: impl Fn(usize) -> Vec<String>,
    ) -> Res<driver::Outcome> {
        let dir = &self.process.dir;
        for name in (0..clients).map(|c| format!("ready-{c}")).chain(["go".to_string()]) {
            let _ = std::fs::remove_file(dir.join(name));
        }
        let mut children = (0..clients)
            .map(|c| {
                self.command()
                    .args([mode, &c.to_string(), &clients.to_string()])
                    .args(extra(c))
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let deadline = Instant::now() + Duration::from_secs(600);
        while !(0..clients).all(|c| dir.join(format!("ready-{c}")).exists()) {
            let exited = children.iter_mut().position(|c| matches!(c.try_wait(), Ok(Some(_))));
            if exited.is_some() || Instant::now() > deadline {
                // The others would wait for `go` for ever.
                let mut why = String::new();
                for mut child in children {
                    let _ = child.kill();
                    why.push_str(&String::from_utf8_lossy(&child.wait_with_output()?.stderr));
                }
                return Err(format!("tarantool's clients did not all start: {why}").into());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        std::fs::write(dir.join("go"), "")?;
        let started = Instant::now();
        let outputs = children.into_iter().map(|c| c.wait_with_output()).collect::<Result<Vec<_>, _>>()?;
        let seconds = started.elapsed().as_secs_f64();
        let mut calls = 0;
        let mut latencies = Vec::new();
        for out in outputs {
            let text = String::from_utf8_lossy(&out.stdout);
            let mut lines = text.lines();
            let count =
                lines.next().and_then(|l| l.trim().parse::<u64>().ok()).filter(|_| out.status.success());
            let count = count.ok_or_else(|| {
                format!("a tarantool client said: {text}{}", String::from_utf8_lossy(&out.stderr))
            })?;
            calls += count;
            latencies.extend(lines.filter_map(|l| l.trim().parse::<u64>().ok()));
        }
        Ok(driver::Outcome::measured(seconds, calls, latencies))
    }

    /// Runs `clients` client processes in `mode` for `seconds`; returns
    /// the total they counted and the seconds the slowest took.
    pub fn run(&self, mode: &str, clients: usize, seconds: u64, scale: u32) -> Res<(u64, f64)> {
        let started = Instant::now();
        let children = (0..clients)
            .map(|i| {
                self.client(mode, seconds, scale, i as u64 + 1)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut total = 0;
        for child in children {
            let out = child.wait_with_output()?;
            let text = String::from_utf8_lossy(&out.stdout);
            total += text.trim().parse::<u64>().map_err(|_| {
                format!("a tarantool client said: {text}{}", String::from_utf8_lossy(&out.stderr))
            })?;
        }
        Ok((total, started.elapsed().as_secs_f64().max(seconds as f64)))
    }

    /// The sums of the balances and deltas, then the history and account
    /// counts.
    pub fn sums(&self, scale: u32) -> Res<Vec<i64>> {
        let out = self.client("sums", 0, scale, 0).output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
        inner.split(',').map(|v| Ok(v.trim().parse::<i64>()?)).collect()
    }

    fn client(&self, mode: &str, seconds: u64, scale: u32, seed: u64) -> Command {
        let mut c = self.command();
        c.args([mode, &seconds.to_string(), &scale.to_string(), &seed.to_string()]);
        c
    }

    /// `client.lua` with the server's port.
    fn command(&self) -> Command {
        let mut c = Command::new(&self.bin);
        c.current_dir(&self.process.dir).arg("client.lua").arg(self.endpoint.port.to_string());
        c
    }
}

/// A `redis-server` keeping nothing on disk.
pub struct Redis {
    _process: Process,
    pub endpoint: Endpoint,
}

impl Redis {
    pub fn start(bin: &Path, dir: &Path) -> Res<Redis> {
        fresh(dir)?;
        let port = free_port()?;
        let mut process = Process::spawn(
            Command::new(bin).args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ]),
            dir,
        )?;
        process.wait("redis-server", Duration::from_secs(60), || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        })?;
        let endpoint = Endpoint { system: "redis", port, user: "", pid: process.child.id() };
        Ok(Redis { _process: process, endpoint })
    }

    /// `redis-benchmark` of GET: `clients` connections, `requests` in all,
    /// `pipeline` requests in flight per connection. Returns requests per
    /// second.
    pub fn bench(&self, tool: &Path, clients: usize, requests: u64, pipeline: usize) -> Res<f64> {
        let out = Command::new(tool)
            .args(["-h", "127.0.0.1", "-p", &self.endpoint.port.to_string(), "-t", "get", "-q"])
            .args(["-c", &clients.to_string(), "-n", &requests.to_string(), "-P", &pipeline.to_string()])
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        // "GET: 123456.79 requests per second, p50=0.063 msec"
        let rate = text
            .rsplit("GET: ")
            .next()
            .and_then(|t| t.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok());
        rate.ok_or_else(|| {
            format!("redis-benchmark said: {text}{}", String::from_utf8_lossy(&out.stderr)).into()
        })
    }
}
