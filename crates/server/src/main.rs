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
    Serve(ServeArgs),
}

fn main() {
    let Cli { command: Command::Serve(args) } = Cli::parse();
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
