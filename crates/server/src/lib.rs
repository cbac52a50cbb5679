//! Centum's PostgreSQL wire-protocol server: `centum serve`.
//!
//! Any PostgreSQL client (psql, pgbench, libpq and the drivers) talks to a
//! Centum data directory through it. The path of a connection:
//!
//! ```text
//!  server.rs      accept, TLS, cancel requests, connection limit,
//!                 authentication (trust or SCRAM-SHA-256), shutdown
//!  connection.rs  the simple and extended query protocols and COPY,
//!                 over one centum_sql::Session per connection
//!  wire.rs        values in PostgreSQL's text and binary formats
//!  config.rs      flags, environment, TOML file
//! ```

pub mod config;
mod connection;
pub mod server;
pub mod wire;

pub use config::{AuthMethod, Config, ServeArgs};
pub use server::{bind, Server};
