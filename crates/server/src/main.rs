//! The `centum` command.

use centum_server::{Config, ServeArgs};
use clap::{Parser, Subcommand};

// Statements allocate many small, short-lived values across session
// threads; mimalloc's per-thread free lists serve them with less work than
// the system allocator (measured on the sales-order workload; see
// design.md, section 14).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Centum: an in-memory OLTP database that speaks PostgreSQL's protocol.
#[derive(Parser)]
#[command(name = "centum", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs the server on a data directory (created if missing) until
    /// SIGINT or SIGTERM.
    Serve(Box<ServeArgs>),
    /// Shows or changes a replicated group through one of its members.
    Cluster(ClusterArgs),
}

#[derive(clap::Args)]
struct ClusterArgs {
    /// A libpq connection string naming the group's members; changes go
    /// to the primary among them (target_session_attrs=read-write is
    /// added unless given).
    #[arg(
        long,
        env = "CENTUM_CONNECT",
        default_value = "host=127.0.0.1 port=5432 user=centum dbname=postgres"
    )]
    connect: String,
    #[command(subcommand)]
    action: ClusterAction,
}

#[derive(Subcommand)]
enum ClusterAction {
    /// Lists the members as the member connected to knows them
    /// (centum.cluster).
    Status,
    /// Adds member ID, whose replication address is ADDRESS (host:port);
    /// start its server first, with every member in --peers.
    Add { id: i64, address: String },
    /// Removes member ID from the group.
    Remove { id: i64 },
}

/// `centum cluster ...`: the SQL functions of the group, over a client
/// connection.
fn cluster(args: ClusterArgs) -> Result<(), String> {
    let change = !matches!(args.action, ClusterAction::Status);
    let mut conninfo = args.connect;
    if change && !conninfo.contains("target_session_attrs") {
        conninfo.push_str(" target_session_attrs=read-write");
    }
    let mut client = postgres::Client::connect(&conninfo, postgres::NoTls).map_err(|e| e.to_string())?;
    let shown = |e: postgres::Error| match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    };
    match args.action {
        ClusterAction::Status => {
            let rows = client
                .query(
                    "SELECT member_id, address, role, voter, term, durable_index, applied_index, lag \
                     FROM centum.cluster ORDER BY member_id",
                    &[],
                )
                .map_err(shown)?;
            if rows.is_empty() {
                return Err("the server is not a member of a replicated group".into());
            }
            println!(
                "{:>6}  {:<22} {:<9} {:<5} {:>5} {:>10} {:>10} {:>6}",
                "member", "address", "role", "voter", "term", "durable", "applied", "lag"
            );
            let n = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
            for r in rows {
                println!(
                    "{:>6}  {:<22} {:<9} {:<5} {:>5} {:>10} {:>10} {:>6}",
                    r.get::<_, i64>(0),
                    r.get::<_, String>(1),
                    r.get::<_, String>(2),
                    if r.get::<_, bool>(3) { "yes" } else { "no" },
                    r.get::<_, i64>(4),
                    n(r.get(5)),
                    n(r.get(6)),
                    n(r.get(7)),
                );
            }
        }
        ClusterAction::Add { id, address } => {
            client.execute("SELECT centum_add_member($1, $2)", &[&id, &address]).map_err(shown)?;
            println!("member {id} added");
        }
        ClusterAction::Remove { id } => {
            client.execute("SELECT centum_remove_member($1)", &[&id]).map_err(shown)?;
            println!("member {id} removed");
        }
    }
    Ok(())
}

fn main() {
    let args = match Cli::parse().command {
        Command::Serve(args) => args,
        Command::Cluster(args) => {
            if let Err(e) = cluster(args) {
                eprintln!("centum cluster: {e}");
                std::process::exit(1);
            }
            return;
        }
    };
    let config = match Config::resolve(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("centum: {e}");
            std::process::exit(2);
        }
    };
    let level = config.log.parse::<tracing::Level>().unwrap_or(tracing::Level::INFO);
    tracing_subscriber::fmt().with_max_level(level).with_target(false).init();
    raise_open_files();
    // The listener needs one thread; sessions run on the server's worker
    // pool.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let code = rt.block_on(async {
        let server = match centum_server::bind(config).await {
            Ok(s) => s,
            Err(e) => {
                tracing::error!("{e}");
                return 1;
            }
        };
        server.run(shutdown_signal()).await;
        0
    });
    std::process::exit(code);
}

/// Every connection is a socket of this process: the soft limit on open
/// files (often 1,024) goes up to the hard limit, so that max_connections
/// above it can be reached.
fn raise_open_files() {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read and write `lim`.
    let raised = unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0
        }
    };
    if !raised {
        tracing::warn!(error = %std::io::Error::last_os_error(), "cannot raise the open-file limit");
    }
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
