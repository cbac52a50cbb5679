//! Server configuration: command-line flags over environment variables
//! over an optional TOML file over defaults.
//!
//! Every setting has a flag (`--max-connections`), an environment variable
//! (`CENTUM_MAX_CONNECTIONS`, read by clap) and a key in the file named by
//! `--config` (`max_connections = 100`); the first of those that is given
//! wins.

use clap::Args;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How clients prove who they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum AuthMethod {
    /// Any existing role logs in without a password.
    Trust,
    /// SCRAM-SHA-256 against the role's password verifier.
    #[value(name = "scram-sha-256")]
    #[serde(rename = "scram-sha-256")]
    ScramSha256,
}

/// `centum serve`'s settings as given (flags and environment).
#[derive(Args, Debug, Default, Clone)]
pub struct ServeArgs {
    /// A TOML file with any of the settings below (flags win over it).
    #[arg(long, env = "CENTUM_CONFIG")]
    pub config: Option<PathBuf>,
    /// The data directory (created if missing) [default: ./centum-data].
    #[arg(long, env = "CENTUM_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:5433]; port 0 lets the
    /// kernel pick one, written to centum.lock in the data directory.
    #[arg(long, env = "CENTUM_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// The superuser role a new data directory starts with [default: centum].
    #[arg(long, env = "CENTUM_SUPERUSER")]
    pub superuser: Option<String>,
    /// The superuser's password, set when the data directory is created.
    /// Read from the environment variable rather than the command line
    /// where others can see it.
    #[arg(long, env = "CENTUM_SUPERUSER_PASSWORD", hide_env_values = true)]
    pub superuser_password: Option<String>,
    /// Authentication [default: trust on a loopback address, else
    /// scram-sha-256; a non-loopback address refuses trust].
    #[arg(long, value_enum, env = "CENTUM_AUTH")]
    pub auth: Option<AuthMethod>,
    /// Most client connections at once; more get SQLSTATE 53300 [default: 100].
    #[arg(long, env = "CENTUM_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Closes a session idle inside a transaction block for this many
    /// milliseconds (0: never) [default: 0].
    #[arg(long, env = "CENTUM_IDLE_IN_TRANSACTION_TIMEOUT_MS")]
    pub idle_in_transaction_timeout_ms: Option<u64>,
    /// Default statement_timeout of new sessions, milliseconds (0: none) [default: 0].
    #[arg(long, env = "CENTUM_STATEMENT_TIMEOUT_MS")]
    pub statement_timeout_ms: Option<u64>,
    /// Largest message a client may send, bytes [default: 67108864].
    #[arg(long, env = "CENTUM_MAX_MESSAGE_BYTES")]
    pub max_message_bytes: Option<usize>,
    /// PEM certificate chain: enables TLS (with --tls-key).
    #[arg(long, env = "CENTUM_TLS_CERT")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of the certificate.
    #[arg(long, env = "CENTUM_TLS_KEY")]
    pub tls_key: Option<PathBuf>,
    /// Log level: error, warn, info, debug or trace [default: info].
    #[arg(long, env = "CENTUM_LOG")]
    pub log: Option<String>,
    /// Acknowledge commits before their log record is on disk (a crash
    /// may lose the last few milliseconds of commits) [default: false].
    #[arg(long, env = "CENTUM_DELAYED_DURABILITY")]
    pub delayed_durability: Option<bool>,
    /// What the log records: `replica`, or `logical` to also log the old
    /// row of every update and delete, which logical decoding (replication
    /// slots, pg_recvlogical) needs [default: replica].
    #[arg(long, env = "CENTUM_WAL_LEVEL")]
    pub wal_level: Option<String>,
    /// Memory the server may hold, as a size (4GB) or a share of physical
    /// memory (75%); `none` for no limit. Past it, inserts and updates fail
    /// with 53200 while reads and deletes go on; a warning is logged at
    /// 80% [default: 80% of physical memory].
    #[arg(long, alias = "max-memory", env = "CENTUM_MEMORY_LIMIT")]
    pub memory_limit: Option<String>,
    /// Worker threads that run every session's statements [default: one
    /// per CPU core].
    #[arg(long, env = "CENTUM_WORKERS")]
    pub workers: Option<usize>,
    /// Address to serve Prometheus metrics on, at GET /metrics over HTTP
    /// (e.g. 127.0.0.1:9187) [default: none, no endpoint].
    #[arg(long, env = "CENTUM_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Default log_min_duration_statement of new sessions, milliseconds:
    /// statements that run at least this long are logged with their plan
    /// (0: every statement, -1: none) [default: -1].
    #[arg(long, env = "CENTUM_LOG_MIN_DURATION_STATEMENT", allow_negative_numbers = true)]
    pub log_min_duration_statement: Option<i64>,
    /// This server's id in a replicated group (with --peers): commits are
    /// replicated through Raft, acknowledged once a majority holds them,
    /// and every member but the primary serves read-only transactions.
    #[arg(long, env = "CENTUM_NODE_ID")]
    pub node_id: Option<u64>,
    /// Every member of the group, this one included, as id=host:port of
    /// its replication address, comma-separated (1=10.0.0.1:7001,...).
    #[arg(long, env = "CENTUM_PEERS")]
    pub peers: Option<String>,
    /// In a replicated group: entries of the log a standby applies between
    /// its checkpoints (an image of its tables on disk, below which the
    /// log is cut) [default: 20000].
    #[arg(long, env = "CENTUM_SNAPSHOT_EVERY")]
    pub snapshot_every: Option<u64>,
}

/// The same settings in the TOML file.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    data_dir: Option<PathBuf>,
    listen: Option<SocketAddr>,
    superuser: Option<String>,
    superuser_password: Option<String>,
    auth: Option<AuthMethod>,
    max_connections: Option<usize>,
    idle_in_transaction_timeout_ms: Option<u64>,
    statement_timeout_ms: Option<u64>,
    max_message_bytes: Option<usize>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    log: Option<String>,
    delayed_durability: Option<bool>,
    wal_level: Option<String>,
    #[serde(alias = "max_memory")]
    memory_limit: Option<String>,
    workers: Option<usize>,
    metrics_listen: Option<SocketAddr>,
    log_min_duration_statement: Option<i64>,
    node_id: Option<u64>,
    peers: Option<String>,
    snapshot_every: Option<u64>,
}

/// The settings in effect.
#[derive(Debug, Clone)]
pub struct Config {
    /// Data directory.
    pub data_dir: PathBuf,
    /// Listen address.
    pub listen: SocketAddr,
    /// Superuser of a new data directory.
    pub superuser: String,
    /// Its password, if any.
    pub superuser_password: Option<String>,
    /// Authentication method.
    pub auth: AuthMethod,
    /// Connection limit.
    pub max_connections: usize,
    /// Idle-in-transaction limit.
    pub idle_in_transaction_timeout: Option<Duration>,
    /// Default statement timeout.
    pub statement_timeout: Option<Duration>,
    /// Message size limit.
    pub max_message_bytes: usize,
    /// TLS certificate and key.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Log level.
    pub log: String,
    /// Delayed durability for every commit.
    pub delayed_durability: bool,
    /// `wal_level = logical`: the log carries what logical decoding needs.
    pub logical: bool,
    /// The memory limit, bytes.
    pub memory_limit: Option<usize>,
    /// Worker threads serving the sessions.
    pub workers: usize,
    /// Where the metrics endpoint listens, if anywhere.
    pub metrics_listen: Option<SocketAddr>,
    /// Statements at least this long are logged (`None`: none).
    pub log_min_duration_statement: Option<Duration>,
    /// Membership of a replicated group, if this server is in one.
    pub cluster: Option<ClusterConfig>,
}

/// A server's place in a replicated group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterConfig {
    /// This server's id.
    pub node_id: u64,
    /// Every member's replication address, this one's included.
    pub peers: BTreeMap<u64, SocketAddr>,
    /// Entries a standby applies between its checkpoints.
    pub snapshot_every: u64,
}

/// The role a new database starts with.
#[derive(Debug, Clone)]
pub(crate) struct Superuser {
    pub(crate) name: String,
    pub(crate) password: Option<String>,
}

impl Config {
    pub(crate) fn superuser(&self) -> Superuser {
        Superuser { name: self.superuser.clone(), password: self.superuser_password.clone() }
    }
}

/// Reads `1=host:port,2=host:port,...`.
fn parse_peers(text: &str) -> Result<BTreeMap<u64, SocketAddr>, String> {
    let mut peers = BTreeMap::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (id, addr) =
            item.split_once('=').ok_or_else(|| format!("peers: {item:?} is not id=host:port"))?;
        let id: u64 = id.trim().parse().map_err(|_| format!("peers: {id:?} is not a node id"))?;
        let addr = std::net::ToSocketAddrs::to_socket_addrs(addr.trim())
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| format!("peers: {addr:?} is not host:port"))?;
        if peers.insert(id, addr).is_some() {
            return Err(format!("peers: node {id} is named twice"));
        }
    }
    Ok(peers)
}

impl Config {
    /// Resolves flags and environment over the file over defaults; refuses
    /// trust authentication on a non-loopback address.
    pub fn resolve(args: &ServeArgs) -> Result<Config, String> {
        let file: FileConfig = match &args.config {
            None => FileConfig::default(),
            Some(p) => {
                let text =
                    std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
                toml::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?
            }
        };
        let a = args.clone();
        let listen = a.listen.or(file.listen).unwrap_or_else(|| "127.0.0.1:5433".parse().expect("address"));
        let loopback = listen.ip().is_loopback();
        let auth = a.auth.or(file.auth).unwrap_or(if loopback {
            AuthMethod::Trust
        } else {
            AuthMethod::ScramSha256
        });
        if auth == AuthMethod::Trust && !loopback {
            return Err(format!(
                "refusing to listen on {listen} with trust authentication: use --auth scram-sha-256 (and set passwords) or a loopback address"
            ));
        }
        let tls = match (a.tls_cert.or(file.tls_cert), a.tls_key.or(file.tls_key)) {
            (Some(c), Some(k)) => Some((c, k)),
            (None, None) => None,
            _ => return Err("--tls-cert and --tls-key go together".into()),
        };
        let ms = |v: Option<u64>| v.filter(|&m| m > 0).map(Duration::from_millis);
        let max_connections = a.max_connections.or(file.max_connections).unwrap_or(100);
        if max_connections == 0 {
            return Err("max_connections must be at least 1".into());
        }
        let memory_limit = match a.memory_limit.or(file.memory_limit) {
            Some(t) if t.trim().eq_ignore_ascii_case("none") => None,
            Some(t) => {
                Some(centum_engine::memory::parse_limit(&t).map_err(|e| format!("memory_limit: {e}"))?)
            }
            // Room for the operating system and its page cache.
            None => centum_engine::memory::physical_bytes()
                .map(|b| b / 100 * centum_engine::memory::DEFAULT_SHARE_PERCENT),
        };
        let workers = a
            .workers
            .or(file.workers)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
        if workers == 0 {
            return Err("workers must be at least 1".into());
        }
        let log_min_duration_statement =
            match a.log_min_duration_statement.or(file.log_min_duration_statement).unwrap_or(-1) {
                -1 => None,
                ms if ms >= 0 => Some(Duration::from_millis(ms as u64)),
                ms => return Err(format!("log_min_duration_statement must be -1 or more, not {ms}")),
            };
        let logical = match a.wal_level.or(file.wal_level).as_deref().map(str::trim) {
            None | Some("replica") | Some("minimal") => false,
            Some("logical") => true,
            Some(other) => return Err(format!("wal_level must be replica or logical, not {other:?}")),
        };
        let cluster = match (a.node_id.or(file.node_id), a.peers.or(file.peers)) {
            (None, None) => None,
            (Some(node_id), Some(peers)) => {
                let peers = parse_peers(&peers)?;
                if !peers.contains_key(&node_id) {
                    return Err(format!("peers names no address for this node ({node_id})"));
                }
                let snapshot_every = a.snapshot_every.or(file.snapshot_every).unwrap_or(20_000).max(1);
                Some(ClusterConfig { node_id, peers, snapshot_every })
            }
            _ => return Err("--node-id and --peers go together".into()),
        };
        // A standby finds the versions a delete ends by the old image.
        let logical = logical || cluster.is_some();
        Ok(Config {
            cluster,
            logical,
            memory_limit,
            workers,
            metrics_listen: a.metrics_listen.or(file.metrics_listen),
            log_min_duration_statement,
            data_dir: a.data_dir.or(file.data_dir).unwrap_or_else(|| PathBuf::from("centum-data")),
            listen,
            superuser: a.superuser.or(file.superuser).unwrap_or_else(|| "centum".into()),
            superuser_password: a.superuser_password.or(file.superuser_password),
            auth,
            max_connections,
            idle_in_transaction_timeout: ms(a
                .idle_in_transaction_timeout_ms
                .or(file.idle_in_transaction_timeout_ms)),
            statement_timeout: ms(a.statement_timeout_ms.or(file.statement_timeout_ms)),
            max_message_bytes: a.max_message_bytes.or(file.max_message_bytes).unwrap_or(64 << 20).max(1024),
            tls,
            log: a.log.or(file.log).unwrap_or_else(|| "info".into()),
            delayed_durability: a.delayed_durability.or(file.delayed_durability).unwrap_or(false),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_file_and_trust_needs_loopback() {
        let dir = std::env::temp_dir().join(format!("centum-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(&file, "max_connections = 7\nlisten = \"127.0.0.1:6000\"\n").unwrap();
        let mut args = ServeArgs { config: Some(file.clone()), ..Default::default() };
        let c = Config::resolve(&args).unwrap();
        assert_eq!((c.max_connections, c.listen.port(), c.auth), (7, 6000, AuthMethod::Trust));
        args.max_connections = Some(9);
        assert_eq!(Config::resolve(&args).unwrap().max_connections, 9);
        args.listen = Some("0.0.0.0:6000".parse().unwrap());
        assert_eq!(Config::resolve(&args).unwrap().auth, AuthMethod::ScramSha256);
        args.auth = Some(AuthMethod::Trust);
        assert!(Config::resolve(&args).is_err());
        std::fs::write(&file, "log_min_duration_statement = 250\nmetrics_listen = \"127.0.0.1:9187\"\n")
            .unwrap();
        let c = Config::resolve(&ServeArgs { config: Some(file.clone()), ..Default::default() }).unwrap();
        assert_eq!(c.log_min_duration_statement, Some(Duration::from_millis(250)));
        assert_eq!(c.metrics_listen, Some("127.0.0.1:9187".parse().unwrap()));
        let off = ServeArgs {
            config: Some(file.clone()),
            log_min_duration_statement: Some(-1),
            ..Default::default()
        };
        assert_eq!(Config::resolve(&off).unwrap().log_min_duration_statement, None);
        let bad = ServeArgs { log_min_duration_statement: Some(-2), ..Default::default() };
        assert!(Config::resolve(&bad).is_err());
        let member = ServeArgs {
            node_id: Some(2),
            peers: Some("1=127.0.0.1:7001, 2=127.0.0.1:7002,3=127.0.0.1:7003".into()),
            ..Default::default()
        };
        let c = Config::resolve(&member).unwrap().cluster.unwrap();
        assert_eq!((c.node_id, c.peers.len(), c.peers[&3].port()), (2, 3, 7003));
        assert!(Config::resolve(&member).unwrap().logical, "a group logs old images");
        let alone = ServeArgs { node_id: Some(4), ..member.clone() };
        assert!(Config::resolve(&alone).is_err(), "this node must be among the peers");
        let twice = ServeArgs { peers: Some("1=127.0.0.1:7001,1=127.0.0.1:7002".into()), ..member.clone() };
        assert!(Config::resolve(&twice).is_err());
        assert!(Config::resolve(&ServeArgs { peers: None, ..member }).is_err(), "--node-id needs --peers");
        std::fs::write(&file, "bogus = 1\n").unwrap();
        assert!(Config::resolve(&ServeArgs { config: Some(file), ..Default::default() }).is_err());
        let _ = std::fs::remove_dir_all(dir);
    }
}
