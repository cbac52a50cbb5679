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
    // The listener needs one thread; each session runs on its own.
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

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
