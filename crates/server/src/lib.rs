//! Centum's PostgreSQL wire-protocol server: `centum serve`.
//!
//! Any PostgreSQL client (psql, pgbench, libpq and the drivers) talks to a
//! Centum data directory through it. The path of a connection:
//!
//! ```text
//!  server.rs      accept, start-up slots, TLS, cancel requests,
//!                 connection limit, shutdown
//!  auth.rs        authentication (trust or SCRAM-SHA-256), failing
//!                 alike for unknown roles and wrong passwords
//!  connection.rs  the simple and extended query protocols and COPY,
//!                 over one centum_sql::Session per connection
//!  hangup.rs      cancelling the statement of a client that has gone
//!  wire.rs        values in PostgreSQL's text and binary formats
//!  config.rs      flags, environment, TOML file
//!  cluster.rs     membership of a replicated group (--node-id, --peers):
//!                 commits through Raft, standbys applying them
//!  metrics/       the Prometheus endpoint (--metrics-listen) and the
//!                 figures it serves
//! ```

mod auth;
mod cluster;
pub mod config;
mod connection;
mod hangup;
mod messages;
mod metrics;
pub mod server;
pub mod wire;

pub use config::{AuthMethod, Config, ServeArgs};
pub use server::{bind, Server};
