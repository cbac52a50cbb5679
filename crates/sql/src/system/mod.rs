//! The virtual catalog: `pg_catalog` and `information_schema` tables made
//! from the live SQL catalog when a statement reads them.
//!
//! PostgreSQL clients learn about a database by querying its system
//! catalogs: psql's `\d` reads `pg_class`, `pg_attribute`, `pg_index` and
//! `pg_constraint`; drivers look types up in `pg_type`. Centum keeps its
//! schema in the engine's table definitions and the SQL catalog's extra
//! bytes (design §12.3), so these tables are not stored anywhere. Each is a
//! [`SystemTable`]: a fixed list of columns, and rows computed from a
//! [`snapshot::Snapshot`] of the catalog taken when the statement runs
//! (once per statement), never when it is planned, so a prepared statement
//! sees later DDL.
//!
//! ```text
//!   FROM pg_catalog.pg_class ──binder──▶ Plan::System(SystemTable::Class)
//!                                              │ execution
//!   Catalog (tables, indexes, meta, ──▶ Snapshot (with OIDs) ──▶ rows
//!            sequences, schemas)
//! ```
//!
//! Name resolution: `pg_catalog.x` and `information_schema.x` name virtual
//! tables; an unqualified name is a virtual `pg_catalog` table only when no
//! user table of that name is on the search path (PostgreSQL searches
//! `pg_catalog` first; Centum lets a user table win, so no existing script
//! changes meaning).
//!
//! OIDs are derived from engine ids and names ([`snapshot`]), so they are
//! the same in every session and stay fixed while the object lives.
//!
//! What is not there: Centum has no `oid`, `name`, `"char"` or array types,
//! so OIDs are `integer`, names `text`, and arrays `text` in PostgreSQL's
//! array syntax ([`arrays`]). Catalogs of features Centum lacks
//! (inheritance, partitions, policies, triggers, rules, publications,
//! extended statistics, enums, ranges) exist and are empty.

mod centum;
pub(crate) mod deparse;
pub(crate) mod functions;
pub(crate) mod operators;
pub(crate) mod snapshot;
mod stats;
pub(crate) mod tables;
pub(crate) mod types;

pub use functions::CatalogFn;
pub use tables::SystemTable;

/// Who is asking: the role the session logged in as, the database its
/// client named (`Session::set_identity`), and, for a server session, its
/// process id and the registry of sessions (`crate::activity`).
#[derive(Clone, Copy)]
pub(crate) struct Identity<'a> {
    pub user: &'a str,
    pub database: &'a str,
    /// The session's entry among the server's sessions (none outside the
    /// server).
    pub backend: Option<&'a crate::activity::Backend>,
    pub activity: Option<&'a crate::activity::Activity>,
    /// The session's settings (the built-in ones outside a session).
    pub settings: Option<&'a crate::settings::Settings>,
    /// Where `set_config()` leaves its changes for the session to apply
    /// when the statement succeeds (none: it fails).
    pub config_changes: Option<&'a std::cell::RefCell<Vec<crate::settings::ConfigChange>>>,
    /// The statement's transaction (its isolation level, whether it is
    /// read only) and whether the database is a standby.
    pub txn: crate::settings::TxnView,
    /// The session's number among advisory lock holders (0 outside a
    /// session: it takes none).
    pub holder: u64,
    /// Where `pg_notify` leaves its notifications for the transaction to
    /// send when it commits (none: it fails).
    pub notes: Option<&'a std::cell::RefCell<Vec<(String, String)>>>,
}

impl<'a> Identity<'a> {
    /// The session's settings, or the built-in ones outside a session.
    pub fn vars(&self) -> std::borrow::Cow<'a, crate::settings::Settings> {
        self.settings.map_or_else(|| std::borrow::Cow::Owned(Default::default()), std::borrow::Cow::Borrowed)
    }

    /// The session's process id (`pg_backend_pid()`): the server's number
    /// for it, or the process's own outside a server.
    pub fn pid(&self) -> i32 {
        self.backend.map_or(std::process::id() as i32, |b| b.pid)
    }
}

impl Identity<'static> {
    /// A session that has not said who it is (embedded use, tests).
    pub const DEFAULT: Identity<'static> = Identity {
        user: "centum",
        database: "postgres",
        backend: None,
        activity: None,
        settings: None,
        config_changes: None,
        txn: crate::settings::TxnView::NONE,
        holder: 0,
        notes: None,
    };
}
