//! Centum's SQL layer: PostgreSQL-dialect SQL over memory-optimized tables.
//!
//! A statement travels through four stages:
//!
//! ```text
//!   text ─parser─▶ AST ─planner (bind, plan)─▶ Planned ─execution─▶ rows
//!                               │                              │
//!                           catalog (SQL facts,           engine Transaction
//!                           sequences, schemas)           (MVCC, indexes)
//! ```
//!
//! * [`parser`]: `sqlparser` with the PostgreSQL dialect.
//! * `planner`: names resolved, types checked, `$n` types inferred, an
//!   access path chosen per table (hash key, range, scan), joins planned.
//! * `execution`: iterator operators inside an engine transaction; DML
//!   with CHECK, FOREIGN KEY, defaults, identity and generated columns.
//! * [`session`]: transaction blocks, autocommit, settings, prepared
//!   statements that keep their plans until the schema changes.
//! * `settings`: SET, SHOW and `set_config()`, transactional inside a
//!   block.
//! * [`catalog`]: what SQL knows beyond the engine, stored durably with the
//!   engine's catalog.
//! * `functions`: the built-in functions and operators, used by both the
//!   binder (constant folding) and execution.
//! * `routines`: PL/pgSQL functions and procedures as declared; the
//!   planner compiles them into pre-planned operations when created
//!   (`planner::routines`), execution runs them (`execution::routine`).
//! * `triggers`: CREATE TRIGGER's definitions, kept with their tables
//!   and views; compiled per relation (`planner::triggers`) and fired
//!   around each row and statement (`execution::triggers`), or, on a
//!   view, in place of each row written (`planner::instead`).
//! * `system`: the virtual `pg_catalog` and `information_schema` tables
//!   and catalog functions clients such as psql query, made from the live
//!   catalog when a statement runs.
//!
//! # Example
//!
//! ```
//! use centum_sql::Database;
//!
//! let db = Database::open(centum_engine::Database::open(Default::default())?)?;
//! let mut s = db.session();
//! s.execute("CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL)")?;
//! s.execute("INSERT INTO t VALUES (1, 'one'), (2, 'two')")?;
//! let r = s.execute("SELECT name FROM t WHERE id = 2")?;
//! assert_eq!(r[0].rows[0][0].to_string(), "two");
//! # Ok::<(), centum_sql::Error>(())
//! ```

pub mod activity;
pub(crate) mod advisory;
pub mod auth;
pub mod catalog;
pub mod cluster;
pub mod copy;
pub(crate) mod enums;
pub mod error;
pub(crate) mod execution;
pub(crate) mod functions;
pub(crate) mod names;
pub mod notify;
pub mod parser;
pub(crate) mod planner;
pub mod privileges;
pub mod publications;
pub mod replication;
pub(crate) mod routines;
pub mod session;
pub(crate) mod settings;
pub(crate) mod stack;
pub(crate) mod system;
pub(crate) mod triggers;

pub use catalog::OutputColumn;
pub use cluster::{Cluster, ClusterMember};
pub use error::{Error, ErrorFields, Result};
pub use session::{Database, Prepared, QueryResult, Session, TxnStatus};
