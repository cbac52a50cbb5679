//! Sessions: the state one client connection carries between statements.
//!
//! ```text
//!            BEGIN                 error
//!   Idle ───────────▶ InBlock ───────────▶ Failed
//!    ▲  ◀── COMMIT/ROLLBACK ──┘              │
//!    └──────────── COMMIT/ROLLBACK ──────────┘  (COMMIT of a failed block
//!                                                 rolls back)
//! ```
//!
//! Outside a block every statement runs in its own transaction
//! (autocommit). Inside, each statement starts a new READ COMMITTED
//! snapshot; after an error every statement fails with 25P02 until the
//! block ends. A prepared statement keeps its plan and the catalog version
//! it was planned at, and plans again when the schema has changed since.
//!
//! A READ ONLY transaction (`BEGIN READ ONLY`, `SET TRANSACTION READ
//! ONLY`, or any begun while `default_transaction_read_only` is on) refuses
//! every statement that would change the database, with PostgreSQL's 25006
//! errors. On a standby ([`Database::set_standby`]) every transaction is
//! read only, as on PostgreSQL's hot standby: the state is looked at as
//! each statement runs, so a session sees the change at its next
//! statement, and a few statements a read-only transaction may run (LISTEN,
//! NOTIFY, VACUUM, ANALYZE, the strong LOCK TABLE modes) are refused "during
//! recovery" there too.

use crate::catalog::OutputColumn;
use crate::catalog::{Catalog, ViewDef};
use crate::error::{Error, Result};
use crate::execution::DdlOutcome;
use crate::execution::{ddl, grant, views, Bulk, ExecCtx};
use crate::names::ident;
use crate::planner::Dictionary;
use crate::planner::{explain_with, first_words, plan_statement, Binder, Planned, Statement};
use crate::settings::{BlockSettings, ConfigChange, Settings};
use centum_engine::{Isolation, Transaction};
use centum_types::{DataType, TimestampTz, Value};
use sqlparser::ast;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A SQL database: the engine plus the SQL catalog. Cheap to clone.
#[derive(Clone)]
pub struct Database {
    catalog: Arc<Dictionary>,
}

impl Database {
    /// Opens the SQL layer over an engine database: finishes the column
    /// rewrites a crash interrupted, then loads the SQL catalog.
    pub fn open(engine: centum_engine::Database) -> Result<Database> {
        crate::execution::ddl::recover_rewrites(&engine)?;
        Ok(Database { catalog: Arc::new(Dictionary::new(Catalog::open(engine)?)) })
    }

    /// Finishes column rewrites another server left half done, then
    /// reloads the catalog: what a new primary of a replicated group does
    /// (the one that started them may have died between their steps, and
    /// a standby cannot write; [`Database::open`] does it for a server's
    /// own crash).
    pub fn finish_rewrites(&self) -> Result<()> {
        crate::execution::ddl::recover_rewrites(self.catalog.db())?;
        self.catalog.reload()
    }

    /// A new session.
    pub fn session(&self) -> Session {
        let mut vars = Settings::default();
        vars.wal_level_logical = self.catalog.db().is_logical();
        Session {
            holder: crate::advisory::next_holder(),
            catalog: self.catalog.clone(),
            txn: None,
            savepoints: Vec::new(),
            state: TxnStatus::Idle,
            block_used: false,
            implicit: false,
            asynchronous: false,
            pending: None,
            defer_waits: false,
            started: None,
            waiting: None,
            waited_txn: None,
            read_only: false,
            next_isolation: None,
            // Built-in defaults, which RESET returns to until the server
            // makes the start-up settings the defaults.
            defaults: vars.clone(),
            vars,
            block_settings: None,
            config_changes: RefCell::new(Vec::new()),
            notes: RefCell::new(Vec::new()),
            listen_ops: Vec::new(),
            committed_notes: Vec::new(),
            inbox: None,
            currval: RefCell::new(HashMap::new()),
            txn_time: TimestampTz::now(),
            named: HashMap::new(),
            user: "centum".into(),
            role: None,
            trusted: true,
            role_epoch: 0,
            database: "postgres".into(),
            cancel: Arc::new(AtomicBool::new(false)),
            backend: None,
            ran: Vec::new(),
        }
    }

    /// The SQL catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Makes the database a standby (`on`) or a primary again (off by
    /// default). Every session sees the change at its next statement: on a
    /// standby every transaction is READ ONLY (a write fails with 25006),
    /// `pg_is_in_recovery()` is true and `transaction_read_only` is on. A
    /// transaction open when it turns is refused at its next write.
    pub fn set_standby(&self, on: bool) {
        self.catalog.set_standby(on);
    }

    /// Makes the database a member of replicated group `cluster`: the
    /// `centum.cluster` view and the `centum_*` group functions act on it
    /// (see [`crate::cluster`]). Set once; a later call changes nothing.
    pub fn set_cluster(&self, cluster: std::sync::Arc<dyn crate::Cluster>) {
        let _ = self.catalog.activity.cluster.set(cluster);
    }

    /// Whether the database is a standby (see [`Database::set_standby`]).
    pub fn is_standby(&self) -> bool {
        self.catalog.is_standby()
    }

    /// Reads the SQL catalog again after the engine's catalog changed
    /// underneath it (a standby applied a primary's schema changes, see
    /// `centum_engine::Database::apply_frames`): the tables, views,
    /// sequences, routines, types and roles the primary made are there for
    /// every session's next statement, and plans and compiled routines made
    /// before are made again.
    pub fn reload_catalog(&self) -> Result<()> {
        self.catalog.reload()
    }
}

/// Where a session is with respect to transactions (ReadyForQuery's
/// status).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnStatus {
    /// No transaction block.
    Idle,
    /// In a block.
    InBlock,
    /// In a failed block: only ROLLBACK (or COMMIT) is accepted.
    Failed,
}

/// The result of one statement.
#[derive(Clone, Debug)]
pub struct QueryResult {
    /// Result columns (empty for statements that return no rows).
    pub columns: Arc<[OutputColumn]>,
    /// The rows.
    pub rows: Vec<Vec<Value>>,
    /// The command tag (`SELECT 3`, `INSERT 0 1`, `CREATE TABLE`).
    pub tag: String,
    /// Notices raised.
    pub notices: Vec<String>,
}

impl QueryResult {
    /// No columns, no rows, an empty tag.
    pub fn empty() -> QueryResult {
        tag("")
    }
}

/// A prepared statement.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The text, as `pg_stat_activity` shows it while it runs.
    text: Arc<str>,
    statement: ast::Statement,
    declared: Vec<Option<DataType>>,
    planned: Arc<Planned>,
    version: u64,
    /// The session's role epoch it was checked for.
    role_epoch: u64,
}

impl Prepared {
    /// The statement's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The parameter types (inferred where not declared).
    pub fn params(&self) -> &[DataType] {
        &self.planned.params
    }

    /// The result columns.
    pub fn columns(&self) -> &[OutputColumn] {
        &self.planned.columns
    }

    /// The result columns as shared: the same allocation for as long as
    /// the statement is not planned again (a schema change replans it).
    pub fn shared_columns(&self) -> &Arc<[OutputColumn]> {
        &self.planned.columns
    }

    /// Whether the statement begins, ends or marks a transaction (BEGIN,
    /// COMMIT, ROLLBACK, SAVEPOINT, RELEASE): such a statement never opens
    /// an implicit transaction.
    pub fn controls_transaction(&self) -> bool {
        matches!(
            self.statement,
            ast::Statement::StartTransaction { .. }
                | ast::Statement::Commit { .. }
                | ast::Statement::Rollback { .. }
                | ast::Statement::Savepoint { .. }
                | ast::Statement::ReleaseSavepoint { .. }
        )
    }
}

/// Who session `s` is, for the statements it runs (a macro, so that it
/// borrows only the fields it reads while the transaction is borrowed).
macro_rules! identity {
    ($s:expr) => {
        crate::system::Identity {
            user: $s.role.as_deref().unwrap_or(&$s.user),
            database: &$s.database,
            backend: $s.backend.as_deref(),
            activity: Some(&$s.catalog.activity),
            settings: Some(&$s.vars),
            config_changes: Some(&$s.config_changes),
            notes: Some(&$s.notes),
            txn: crate::settings::TxnView::NONE,
            holder: $s.holder,
        }
    };
}

/// One client's session.
pub struct Session {
    /// Its number among the holders of advisory locks.
    holder: u64,
    pub(crate) catalog: Arc<Dictionary>,
    txn: Option<Transaction>,
    state: TxnStatus,
    /// The block's savepoints, oldest first.
    savepoints: Vec<SavepointMark>,
    /// Whether the block ran a statement yet (SET TRANSACTION must come first).
    block_used: bool,
    /// The open block was begun implicitly for an extended-protocol
    /// pipeline and ends at its Sync (see [`Session::begin_implicit`]).
    implicit: bool,
    /// Whether the block is READ ONLY (outside a block, see
    /// [`Session::read_only_now`]).
    read_only: bool,
    next_isolation: Option<Isolation>,
    /// The session's settings.
    vars: Settings,
    /// The settings RESET goes back to: the session's own after start-up
    /// (built-in defaults, then the server's and the client's start-up
    /// settings).
    defaults: Settings,
    /// The open block's settings changes, which its end keeps or takes
    /// back.
    block_settings: Option<BlockSettings>,
    /// The `set_config()` calls of the statement running.
    config_changes: RefCell<Vec<ConfigChange>>,
    /// The transaction's NOTIFYs (channel, payload), sent when it commits.
    notes: RefCell<Vec<(String, String)>>,
    /// The transaction's LISTEN (`true`) and UNLISTEN of a channel (`None`:
    /// every channel), applied when it commits.
    listen_ops: Vec<(bool, Option<String>)>,
    /// A committed transaction's NOTIFYs, sent once its commit is published.
    committed_notes: Vec<(String, String)>,
    /// Where notifications for this session arrive, once it listens or the
    /// server gave it a waker.
    inbox: Option<Arc<crate::notify::Inbox>>,
    currval: RefCell<HashMap<String, i64>>,
    txn_time: TimestampTz,
    named: HashMap<String, Prepared>,
    /// The role this session logged in as.
    user: String,
    /// The role SET ROLE made current, if any.
    role: Option<String>,
    /// An embedded session: a user that is not a role passes every
    /// privilege check (the program opened the database itself). Server
    /// sessions are not.
    trusted: bool,
    /// Changes with each SET ROLE: plans are checked for one role.
    role_epoch: u64,
    /// The database name the client asked for.
    database: String,
    /// Raised by a cancel request; checked where statement_timeout is.
    cancel: Arc<AtomicBool>,
    /// The session's entry among the server's sessions, if registered.
    backend: Option<Arc<crate::activity::Backend>>,
    /// The plans of the statements the current request ran, kept only
    /// while `log_min_duration_statement` is on (see
    /// [`Session::plans_ran`]).
    ran: Vec<Arc<Planned>>,
    /// The caller awaits commits and row waits (see
    /// [`Session::set_asynchronous`]).
    asynchronous: bool,
    /// The last request's commit, logged but not yet published.
    pending: Option<centum_engine::Committing>,
    /// The statement running now may defer a row wait: it runs alone in
    /// its request, so it can be rolled back to its start and run again.
    defer_waits: bool,
    /// The wait the last request's statement deferred (see
    /// [`Session::take_row_wait`]).
    waiting: Option<centum_engine::RowWait>,
    /// The transaction of a statement outside a block that deferred a row
    /// wait, rolled back to its start: open while the caller waits, so the
    /// wait shows whom it waits for; the next request ends it.
    waited_txn: Option<Transaction>,
    /// When the statement now running began, for its statement_timeout
    /// (planning counts); `None` between statements.
    started: Option<Instant>,
}

fn modes_isolation(modes: &[ast::TransactionMode]) -> Option<Isolation> {
    modes.iter().find_map(|m| match m {
        ast::TransactionMode::IsolationLevel(l) => Some(match l {
            ast::TransactionIsolationLevel::Serializable => Isolation::Serializable,
            ast::TransactionIsolationLevel::RepeatableRead | ast::TransactionIsolationLevel::Snapshot => {
                Isolation::Snapshot
            }
            _ => Isolation::ReadCommitted,
        }),
        _ => None,
    })
}

/// The access mode `modes` ask for: `Some(true)` for READ ONLY,
/// `Some(false)` for READ WRITE (the last one given counts).
fn modes_read_only(modes: &[ast::TransactionMode]) -> Option<bool> {
    modes.iter().rev().find_map(|m| match m {
        ast::TransactionMode::AccessMode(a) => Some(*a == ast::TransactionAccessMode::ReadOnly),
        _ => None,
    })
}

/// PostgreSQL's refusal to make a standby's transaction READ WRITE.
fn read_write_during_recovery() -> Error {
    Error::other("0A000", "cannot set transaction read-write mode during recovery")
}

fn tag(t: &str) -> QueryResult {
    QueryResult { columns: Arc::from(Vec::new()), rows: vec![], tag: t.into(), notices: vec![] }
}

impl Session {
    /// The transaction status.
    pub fn status(&self) -> TxnStatus {
        self.state
    }

    /// Sets who this session is: the role it logged in as and the database
    /// name its client asked for.
    pub fn set_identity(&mut self, user: &str, database: &str) {
        self.user = user.to_string();
        self.database = database.to_string();
        self.trusted = false;
        self.role = None;
        self.role_epoch += 1;
    }

    /// The role privileges are checked for: SET ROLE's, else the user's.
    pub fn current_role(&self) -> &str {
        self.role.as_deref().unwrap_or(&self.user)
    }

    /// Whether the current role passes every privilege check.
    fn bypasses(&self) -> bool {
        self.catalog.bypasses(self.current_role(), self.trusted)
    }

    /// Fails with 42501 unless the current role holds what `needs` ask
    /// (or, for those noted for a view's or routine's owner, that owner).
    pub(crate) fn check_needs(&self, needs: &[crate::privileges::Need]) -> Result<()> {
        crate::privileges::check_needs(&self.catalog, needs, self.current_role(), self.bypasses())
    }

    /// SET ROLE `name` (`None`: back to the session user). A superuser may
    /// become any role; others only themselves, as Centum has no role
    /// membership.
    fn set_role(&mut self, name: Option<String>) -> Result<()> {
        if let Some(n) = &name {
            if self.catalog.role(n).is_none() {
                return Err(Error::other("22023", format!("role \"{n}\" does not exist")));
            }
            if !self.catalog.bypasses(&self.user, self.trusted) && *n != self.user {
                return Err(Error::other("42501", format!("permission denied to set role \"{n}\"")));
            }
        }
        self.role = name.filter(|n| *n != self.user);
        self.role_epoch += 1;
        Ok(())
    }

    /// A flag that cancels the statement running when it is raised (a
    /// client's cancel request, from another thread). Each statement
    /// lowers it when it starts.
    pub fn cancel_handle(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }

    /// The role this session logged in as.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The database name the client asked for.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// Makes the current settings the ones RESET restores (the server calls
    /// this once it has applied the start-up settings).
    pub fn keep_settings_as_defaults(&mut self) {
        self.defaults = self.vars.clone();
    }

    /// How long the client may stay silent: inside a transaction block
    /// (`idle_in_transaction_session_timeout`, then the session ends with
    /// 25P03) and outside one (`idle_session_timeout`, 57P05). The server
    /// enforces them; `None` is no limit.
    pub fn idle_timeouts(&self) -> (Option<Duration>, Option<Duration>) {
        self.vars.idle_timeouts
    }

    /// Changes the settings with `change`: for the session, or (`local`)
    /// until the open block ends. Inside a block the change is undone if
    /// the block rolls back (see [`crate::settings`]). A LOCAL change
    /// outside a block does nothing, and says so.
    fn change_settings(
        &mut self,
        local: bool,
        change: impl Fn(&mut Settings) -> Result<()>,
    ) -> Result<Option<&'static str>> {
        if self.state == TxnStatus::Idle {
            if local {
                return Ok(Some("SET LOCAL can only be used in transaction blocks"));
            }
        } else {
            let vars = &self.vars;
            let block =
                self.block_settings.get_or_insert_with(|| BlockSettings { before: vars.clone(), kept: None });
            match &mut block.kept {
                None if local => block.kept = Some(vars.clone()),
                Some(kept) if !local => change(kept)?,
                _ => {}
            }
        }
        change(&mut self.vars)?;
        self.settings_changed();
        Ok(None)
    }

    /// At the end of a block: keeps its settings changes (less the LOCAL
    /// ones) if it committed, takes them all back if not.
    fn end_block_settings(&mut self, committed: bool) {
        if let Some(b) = self.block_settings.take() {
            match (committed, b.kept) {
                (false, _) => self.vars.restore(b.before),
                (true, Some(kept)) => self.vars.restore(kept),
                (true, None) => return,
            }
            self.settings_changed();
        }
    }

    /// Whether the statement about to run may not change the database: the
    /// database is a standby, or the open block is READ ONLY, or (outside a
    /// block, where the statement is its own transaction)
    /// `default_transaction_read_only` is on.
    pub(crate) fn read_only_now(&self) -> bool {
        self.catalog.is_standby()
            || match self.state {
                TxnStatus::Idle => self.vars.default_read_only,
                _ => self.read_only,
            }
    }

    /// The transaction as the settings that describe it see it.
    fn txn_view(&self) -> crate::settings::TxnView {
        crate::settings::TxnView {
            isolation: self.txn_isolation(),
            read_only: self.read_only_now(),
            standby: self.catalog.is_standby(),
        }
    }

    /// PostgreSQL's checks before a transaction turns READ WRITE (`SET
    /// TRANSACTION READ WRITE`, `SET transaction_read_only = off`): not
    /// inside a savepoint of a READ ONLY block nor after its first query
    /// (25001), and never on a standby (0A000). A transaction that is not
    /// read only passes.
    fn may_read_write(&self) -> Result<()> {
        if !self.read_only_now() {
            return Ok(());
        }
        if self.state != TxnStatus::Idle {
            let refuse = |message: &str| Error::TransactionState { code: "25001", message: message.into() };
            if !self.savepoints.is_empty() {
                return Err(refuse("cannot set transaction read-write mode inside a read-only transaction"));
            }
            if self.block_used {
                return Err(refuse("transaction read-write mode must be set before any query"));
            }
        }
        if self.catalog.is_standby() {
            return Err(read_write_during_recovery());
        }
        Ok(())
    }

    /// `SET transaction_read_only`, `SET TRANSACTION READ ONLY | READ
    /// WRITE`: the open block's access mode. Outside a block it is the
    /// mode of the statement's own transaction, which reads nothing: only
    /// its checks count.
    fn set_transaction_read_only(&mut self, on: bool) -> Result<()> {
        if !on {
            self.may_read_write()?;
        }
        if self.state == TxnStatus::InBlock {
            self.read_only = on;
        }
        Ok(())
    }

    /// Fails with 25006 if statement `s` would change the database and the
    /// transaction may not (see [`Session::read_only_now`]), or if it is
    /// one that a standby refuses though a READ ONLY transaction may run
    /// it. Statements that are planned (INSERT, UPDATE, DELETE, MERGE,
    /// SELECT FOR UPDATE, CALL's statements) are refused as they run.
    fn check_read_only(&self, s: &ast::Statement) -> Result<()> {
        if !self.read_only_now() {
            return Ok(());
        }
        if let Some(what) = read_only_refusal(s) {
            return Err(Error::read_only(&what));
        }
        if self.catalog.is_standby() {
            if let Some(what) = recovery_refusal(s) {
                return Err(Error::during_recovery(what));
            }
        }
        Ok(())
    }

    /// Fails with 42501 unless the current role may change setting `name`
    /// (see [`crate::settings::superuser_only`]).
    fn may_set(&self, name: &str) -> Result<()> {
        if crate::settings::superuser_only(name)
            && !self.catalog.role(&self.user).is_some_and(|r| r.superuser)
        {
            return Err(Error::other("42501", format!("permission denied to set parameter \"{name}\"")));
        }
        Ok(())
    }

    /// CHECKPOINT: every commit so far into the checkpoint files, and the
    /// log before it removed, as the checkpoint worker does on its own
    /// every so much log. Only a superuser may, as in PostgreSQL; a
    /// database in memory only has nothing to do.
    fn checkpoint(&mut self) -> Result<QueryResult> {
        if !self.catalog.role(&self.user).is_some_and(|r| r.superuser) {
            return Err(Error::other("42501", "must be superuser to do CHECKPOINT"));
        }
        let db = self.catalog.db();
        if db.is_durable() {
            centum_engine::blocking::section(|| db.checkpoint())?;
        }
        Ok(tag("CHECKPOINT"))
    }

    /// LOCK TABLE, inside a block. The modes that conflict with no read or
    /// row write (ACCESS SHARE, ROW SHARE, ROW EXCLUSIVE: what pg_dump and
    /// ORMs take) are granted at once: Centum's reads and writes never take
    /// table locks, so they have nothing to wait for. They do not hold
    /// back another session's schema change of the table, as PostgreSQL's
    /// would. The modes that block readers or writers need table locks,
    /// which Centum does not have: 0A000.
    fn lock_tables(&mut self, l: &ast::Lock) -> Result<QueryResult> {
        if self.state == TxnStatus::Idle {
            return Err(no_block("LOCK TABLE"));
        }
        use ast::LockTableMode as M;
        let mode = l.lock_mode.clone().unwrap_or(M::AccessExclusive);
        if !matches!(mode, M::AccessShare | M::RowShare | M::RowExclusive) {
            return Err(Error::unsupported(format!(
                "LOCK TABLE IN {mode} MODE (Centum has no table locks; rows are versioned and writes are \
                 checked at commit)"
            )));
        }
        let b = Binder::new(&self.catalog, &self.vars.search_path, vec![]);
        for t in &l.tables {
            let table = b.table_name(&t.name).ok().filter(|n| self.catalog.db().table(n).is_ok());
            if table.is_none() {
                let parts = crate::names::object_parts(&t.name)?;
                if b.sequence_named(&parts).is_some() {
                    return Err(Error::other(
                        "42809",
                        format!("cannot lock relation \"{}\": it is a sequence", t.name),
                    ));
                }
                return Err(Error::UndefinedTable(t.name.to_string()));
            }
        }
        self.block_used = true;
        Ok(tag("LOCK TABLE"))
    }

    /// RESET `name` (every setting when `None`).
    fn reset(&mut self, name: Option<&str>) {
        let defaults = self.defaults.clone();
        let r = self.change_settings(false, |v| {
            v.reset(name, &defaults);
            Ok(())
        });
        debug_assert!(r.is_ok(), "a reset cannot fail");
    }

    /// Hands what the engine keeps of the settings to the open transaction.
    fn settings_changed(&mut self) {
        if let Some(t) = &mut self.txn {
            t.set_delayed_durability(self.vars.delayed_durability);
        }
    }

    /// Applies the `set_config()` calls of the statement that just
    /// succeeded.
    fn apply_config_changes(&mut self) -> Result<()> {
        let changes = std::mem::take(&mut *self.config_changes.borrow_mut());
        for c in changes {
            if c.name == "transaction_read_only" {
                self.set_transaction_read_only(crate::settings::parse_bool(&c.name, &c.value)?)?;
                continue;
            }
            self.may_set(&c.name)?;
            self.change_settings(c.local, |v| v.set(&c.name, std::slice::from_ref(&c.value)))?;
        }
        Ok(())
    }

    /// Runs every statement in `sql` (the simple query protocol): stops at
    /// the first error. A lone statement outside a block is its own
    /// transaction; several statements outside a block form one implicit
    /// transaction, as in PostgreSQL.
    pub fn execute(&mut self, sql: &str) -> Result<Vec<QueryResult>> {
        self.ran.clear();
        self.publish(sql);
        self.defer_waits = self.asynchronous;
        let r = self.guarded(|s| s.execute_unguarded(sql));
        self.defer_waits = false;
        // A statement waiting for a row goes on showing as running.
        if self.waiting.is_none() {
            self.publish_idle();
        }
        r
    }

    /// `log_min_duration_statement`: a request that runs at least this long
    /// is to be logged with [`Session::plans_ran`]; `None` when off.
    pub fn log_min_duration_statement(&self) -> Option<std::time::Duration> {
        self.vars.log_min_duration
    }

    /// The plans of the statements the last request ran (queries, INSERT,
    /// UPDATE, DELETE, MERGE, CALL), as EXPLAIN shows them, each rendered
    /// from the plan that ran: nothing runs again. Kept only while
    /// `log_min_duration_statement` is on; taken by this call.
    pub fn plans_ran(&mut self) -> Vec<Vec<String>> {
        std::mem::take(&mut self.ran).iter().map(|p| explain_with(p, &|_| String::new())).collect()
    }

    /// Registers this session with the server's sessions under `info`'s
    /// process id: it appears in `pg_stat_activity` and can be cancelled
    /// or terminated by pid until it is dropped.
    pub fn register_backend(&mut self, info: crate::activity::BackendInfo) -> Arc<crate::activity::Backend> {
        let b = self.catalog.activity.register(info, &self.user, &self.database, self.cancel.clone());
        self.backend = Some(b.clone());
        b
    }

    /// Whether `pg_terminate_backend` ended this session: its connection
    /// closes before reading another message.
    pub fn terminated(&self) -> bool {
        self.backend.as_ref().is_some_and(|b| b.terminated())
    }

    /// Records how the session's connection is ending, for
    /// `pg_stat_database`'s session counts.
    pub fn ending(&self, how: crate::activity::Ending) {
        if let Some(b) = &self.backend {
            b.ending(how);
        }
    }

    /// Shows `sql` as the statement running.
    pub(crate) fn publish(&self, sql: &str) {
        // A cancel is for the request that runs from here on: one that
        // arrived before is forgotten, one that arrives once the session
        // shows this statement running is not.
        self.cancel.store(false, Relaxed);
        if let Some(b) = &self.backend {
            b.statement(sql, self.state != TxnStatus::Idle);
        }
    }

    /// Shows the session as waiting for its client.
    fn publish_idle(&self) {
        if let Some(b) = &self.backend {
            b.idle(match self.state {
                TxnStatus::Idle => "idle",
                TxnStatus::InBlock => "idle in transaction",
                TxnStatus::Failed => "idle in transaction (aborted)",
            });
        }
    }

    /// Runs `f`, a whole request of this session's client. A panic inside
    /// it (a bug) becomes XX000 for this session alone: its transaction is
    /// rolled back in the engine at once, and a block it was in stays
    /// failed until ROLLBACK. The engine ends the process instead where a
    /// panic would leave shared state half-changed (see its `critical`
    /// module); everywhere else unwinding is safe, because dropping a
    /// transaction aborts it.
    pub(crate) fn guarded<R>(&mut self, f: impl FnOnce(&mut Session) -> Result<R>) -> Result<R> {
        // A caller that deferred a commit publishes it before its next
        // request; should it not have, that happens here. A row wait it
        // did not take is over.
        self.waiting = None;
        self.waited_txn = None;
        self.settle()?;
        // The thread acts for the open block (statements that begin or end
        // one set it again for themselves).
        let _act = centum_engine::act_for(self.block_txn());
        let r = self.guarded_inner(f);
        // Transaction-level advisory locks go when the transaction does
        // (at its end, or when it fails).
        if self.state != TxnStatus::InBlock {
            self.catalog.activity.advisory.end_transaction(self.holder);
        }
        // Outside a block the transaction has ended: LISTEN, UNLISTEN and
        // NOTIFY take effect if it committed.
        if self.state == TxnStatus::Idle {
            self.transaction_ended(r.is_ok());
        }
        r
    }

    /// Applies a transaction's LISTEN and UNLISTEN and queues its NOTIFYs
    /// if it committed (`committed`); forgets them otherwise.
    fn transaction_ended(&mut self, committed: bool) {
        let ops = std::mem::take(&mut self.listen_ops);
        let notes = std::mem::take(self.notes.get_mut());
        if !committed {
            return;
        }
        let hub = &self.catalog.activity.notify;
        for (listen, channel) in ops {
            match (listen, channel) {
                (true, Some(c)) => {
                    let inbox = self
                        .inbox
                        .get_or_insert_with(|| Arc::new(crate::notify::Inbox::new(Box::new(|| {}))));
                    hub.listen(self.holder, &c, inbox);
                }
                (_, c) => hub.unlisten(self.holder, c.as_deref()),
            }
        }
        for (c, p) in notes {
            crate::notify::add(&mut self.committed_notes, c, p);
        }
        self.send_committed_notes();
    }

    /// Sends the committed transaction's NOTIFYs once its commit is
    /// published (a deferred commit is published by `settle`).
    fn send_committed_notes(&mut self) {
        if self.pending.is_none() && !self.committed_notes.is_empty() {
            let pid = self.backend.as_ref().map_or(0, |b| b.pid);
            self.catalog.activity.notify.send(pid, &std::mem::take(&mut self.committed_notes));
        }
    }

    /// The notifications that reached this session (LISTEN) since it last
    /// asked, oldest first. A server sends them to its client whenever the
    /// session is outside a transaction block.
    pub fn notifications(&mut self) -> Vec<crate::notify::Notification> {
        self.send_committed_notes();
        self.inbox.as_ref().map(|i| i.take()).unwrap_or_default()
    }

    /// Gives the session `wake`, called from another thread whenever a
    /// notification reaches it, so that an idle connection sends it at
    /// once.
    pub fn set_notification_waker(&mut self, wake: Box<dyn Fn() + Send + Sync>) {
        self.inbox = Some(Arc::new(crate::notify::Inbox::new(wake)));
    }

    fn guarded_inner<R>(&mut self, f: impl FnOnce(&mut Session) -> Result<R>) -> Result<R> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self))) {
            Ok(r) => r,
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                tracing::error!(user = %self.user, panic = %what, "a statement panicked; its transaction is rolled back");
                if let Some(t) = self.txn.take() {
                    t.abort();
                }
                self.savepoints.clear();
                self.fail();
                Err(Error::other("XX000", format!("internal error: {what}")))
            }
        }
    }

    /// VACUUM: the collector runs continuously, so this only runs a round
    /// of it now, freeing every version no snapshot can see any more
    /// (whichever tables VACUUM names).
    /// As in PostgreSQL, not inside a transaction block, explicit or the
    /// implicit one of several statements sent together (25001): a round
    /// of collection there could free nothing the block itself made dead.
    fn vacuum(&self) -> Result<QueryResult> {
        if self.catalog.is_standby() {
            return Err(Error::during_recovery("VACUUM"));
        }
        if self.state != TxnStatus::Idle {
            return Err(Error::TransactionState {
                code: "25001",
                message: "VACUUM cannot run inside a transaction block".into(),
            });
        }
        self.catalog.db().collect_garbage();
        Ok(tag("VACUUM"))
    }

    fn execute_unguarded(&mut self, sql: &str) -> Result<Vec<QueryResult>> {
        // A lone VACUUM, in whichever spelling: the parser does not know
        // them all.
        if is_vacuum(sql) && !sql.trim_end().trim_end_matches(';').contains(';') {
            return self.vacuum().map(|r| vec![r]);
        }
        let create_user = create_user_as_role(sql).or_else(|| crate::routines::rewrite_create_procedure(sql));
        let sql = create_user.as_deref().unwrap_or(sql);
        let stmts = match crate::parser::parse(sql) {
            Ok(s) => s,
            Err(e) => {
                self.fail();
                return Err(e);
            }
        };
        // Only a statement alone in its request can be run again after a
        // deferred row wait.
        if stmts.len() != 1 {
            self.defer_waits = false;
        }
        // Several statements outside a block run as one implicit
        // transaction, unless they manage transactions themselves.
        let implicit = stmts.len() > 1
            && self.state == TxnStatus::Idle
            && !stmts.iter().any(|s| {
                matches!(
                    s,
                    ast::Statement::StartTransaction { .. }
                        | ast::Statement::Commit { .. }
                        | ast::Statement::Rollback { .. }
                )
            });
        self.in_block(implicit, |s| {
            let mut out = Vec::with_capacity(stmts.len());
            for st in &stmts {
                // A COMMIT among them is published before the next statement.
                s.settle()?;
                out.push(s.run(st)?);
            }
            Ok(out)
        })
    }

    /// Runs `f`, inside a transaction of its own when `own` (committed
    /// when `f` succeeds, rolled back when it fails), else as it stands.
    fn in_block<T>(&mut self, own: bool, f: impl FnOnce(&mut Session) -> Result<T>) -> Result<T> {
        if own {
            self.begin(None, None)?;
        }
        match f(self) {
            Ok(r) => {
                if own {
                    self.commit()?;
                }
                Ok(r)
            }
            Err(e) => {
                if own {
                    self.rollback();
                }
                Err(e)
            }
        }
    }

    /// For a caller that serves many sessions on each of its threads and
    /// so must never let one block it:
    ///
    /// - Commits return as soon as their redo record is appended, before
    ///   it is durable. The caller awaits [`Session::pending_commit`], then
    ///   calls [`Session::settle`] before it answers. The commit's rows
    ///   stay held (others depend on them, as during any commit's fsync)
    ///   until then.
    /// - A statement that runs alone in its request and meets a row that
    ///   another transaction holds does not sleep: it is rolled back to
    ///   where it began and fails with [`centum_engine::Error::WouldWait`];
    ///   the caller awaits [`Session::take_row_wait`] and runs the
    ///   statement again (under READ COMMITTED, with a new snapshot, as the
    ///   statement would have read after the wait anyway).
    pub fn set_asynchronous(&mut self, on: bool) {
        self.asynchronous = on;
    }

    /// The wait that the last request's statement deferred, when it failed
    /// with [`centum_engine::Error::WouldWait`]. Once it resolves `Ok`, the
    /// statement is run again; its error (a deadlock, the lock timeout, a
    /// cancel) is the statement's, and [`Session::wait_failed`] fails the
    /// block as any failed statement does.
    pub fn take_row_wait(&mut self) -> Option<centum_engine::RowWait> {
        self.waiting.take()
    }

    /// A deferred row wait ended with an error: the statement failed.
    pub fn wait_failed(&mut self) {
        self.waiting = None;
        self.waited_txn = None;
        self.fail();
    }

    /// The durability the last request's commit waits for, if it deferred
    /// one that is not yet settled.
    pub fn pending_commit(&mut self) -> Option<&mut centum_engine::Durable> {
        self.pending.as_mut().and_then(|c| c.durable())
    }

    /// Publishes a deferred commit, waiting for its record if that is not
    /// durable yet. Its error (the write or sync failed, or a transaction
    /// it depended on did not commit) is the outcome of the request that
    /// committed, to be reported in place of its success.
    pub fn settle(&mut self) -> Result<()> {
        if let Some(v) = self.settle_unseen()? {
            v.wait();
        }
        Ok(())
    }

    /// Publishes a deferred commit like [`Session::settle`], without
    /// waiting for the snapshots that start from now on to include it:
    /// the transactions stamped before it may still be publishing theirs,
    /// in sessions waiting for the caller's thread. The caller awaits the
    /// returned future before it acknowledges the commit.
    pub fn settle_unseen(&mut self) -> Result<Option<centum_engine::Visible>> {
        match self.pending.take() {
            Some(c) => Ok(c.publish()?),
            None => Ok(None),
        }
    }

    /// Opens the implicit transaction that the statements of an
    /// extended-protocol pipeline run in up to its Sync, as PostgreSQL's
    /// implicit transaction block: they commit together at the Sync, and an
    /// error rolls back all of them. Nothing happens inside a block. A BEGIN
    /// in the pipeline makes the block explicit; COMMIT or ROLLBACK ends it.
    pub fn begin_implicit(&mut self) -> Result<()> {
        if self.state != TxnStatus::Idle {
            return Ok(());
        }
        self.guarded(|s| s.begin(None, None).map(drop))?;
        self.implicit = true;
        Ok(())
    }

    /// At a Sync: commits the implicit transaction, or rolls it back if a
    /// statement in it failed. An error is the commit's.
    pub fn end_implicit(&mut self) -> Result<()> {
        if !std::mem::take(&mut self.implicit) {
            return Ok(());
        }
        self.guarded(|s| match s.state {
            TxnStatus::InBlock => s.commit().map(drop),
            TxnStatus::Failed => {
                s.rollback();
                Ok(())
            }
            TxnStatus::Idle => Ok(()),
        })
    }

    /// A message of the pipeline failed outside any statement (an unknown
    /// portal, a bad Bind): the implicit transaction fails with it.
    pub fn fail_implicit(&mut self) {
        if self.implicit {
            self.fail();
        }
    }

    /// Prepares `sql` (one statement); `declared` gives parameter types the
    /// client named (the rest are inferred).
    pub fn prepare(&mut self, sql: &str, declared: &[Option<DataType>]) -> Result<Prepared> {
        self.guarded(|s| s.prepare_unguarded(sql, declared))
    }

    /// Like a statement that fails when it runs, one that fails to parse or
    /// plan fails the block it is in; and in a failed block only COMMIT and
    /// ROLLBACK can be prepared (25P02), as in PostgreSQL.
    fn prepare_unguarded(&mut self, sql: &str, declared: &[Option<DataType>]) -> Result<Prepared> {
        let r = self.prepare_text(sql, declared);
        if r.is_err() {
            self.fail();
        }
        r
    }

    fn prepare_text(&mut self, sql: &str, declared: &[Option<DataType>]) -> Result<Prepared> {
        // VACUUM in PostgreSQL's spellings (options in parentheses, a table
        // list) has nothing to do here: old versions go as soon as no
        // transaction can see them.
        let sql = if is_vacuum(sql) { "VACUUM" } else { sql };
        let rewritten = crate::routines::rewrite_create_procedure(sql);
        let mut stmts = crate::parser::parse(rewritten.as_deref().unwrap_or(sql))?;
        if stmts.len() != 1 {
            return Err(Error::Syntax("cannot insert multiple commands into a prepared statement".into()));
        }
        let statement = stmts.remove(0);
        let ends_block = matches!(statement, ast::Statement::Commit { .. } | ast::Statement::Rollback { .. });
        if self.state == TxnStatus::Failed && !ends_block {
            return Err(Error::InFailedTransaction);
        }
        let mut p = self.prepare_ast(statement, declared.to_vec())?;
        p.text = Arc::from(sql);
        Ok(p)
    }

    fn prepare_ast(&self, statement: ast::Statement, declared: Vec<Option<DataType>>) -> Result<Prepared> {
        let version = self.catalog.version();
        let mut planned = self.plan(&statement, declared.clone())?;
        if let ast::Statement::Execute { name: Some(name), .. } = &statement {
            // EXECUTE returns the rows of the statement it names.
            let n = crate::names::object_parts(name)?.join(".");
            planned.columns = self.named_statement(&n)?.planned.columns.clone();
        }
        let role_epoch = self.role_epoch;
        Ok(Prepared {
            text: Arc::from(""),
            statement,
            declared,
            planned: Arc::new(planned),
            version,
            role_epoch,
        })
    }

    /// The statement PREPARE named `name`.
    fn named_statement(&self, name: &str) -> Result<&Prepared> {
        self.named
            .get(name)
            .ok_or_else(|| Error::other("26000", format!("prepared statement \"{name}\" does not exist")))
    }

    /// Runs a prepared statement with `params`.
    pub fn execute_prepared(&mut self, p: &mut Prepared, params: &[Value]) -> Result<QueryResult> {
        self.execute_prepared_with(p, params, None)
    }

    /// Runs prepared INSERT `p` (of parameters only) once over all the rows
    /// of `bulk`, as one statement.
    pub(crate) fn execute_bulk(&mut self, p: &mut Prepared, bulk: &Bulk) -> Result<QueryResult> {
        self.execute_prepared_with(p, &[], Some(bulk))
    }

    fn execute_prepared_with(
        &mut self,
        p: &mut Prepared,
        params: &[Value],
        bulk: Option<&Bulk>,
    ) -> Result<QueryResult> {
        self.ran.clear();
        self.publish(&p.text);
        // Rows in bulk cannot be run again after a deferred wait (the
        // statement takes them): a COPY waits where it stands.
        self.defer_waits = self.asynchronous && bulk.is_none();
        let r = self.guarded(|s| s.execute_prepared_unguarded(p, params, bulk));
        self.defer_waits = false;
        if self.waiting.is_none() {
            self.publish_idle();
        }
        r
    }

    fn execute_prepared_unguarded(
        &mut self,
        p: &mut Prepared,
        params: &[Value],
        bulk: Option<&Bulk>,
    ) -> Result<QueryResult> {
        crate::functions::tsearch::set_session_config(self.vars.text_search_config);
        if let Statement::Utility(s) = &p.planned.statement {
            if let ast::Statement::CreateTable(ct) = s.as_ref() {
                if ct.query.is_some() && params.len() == p.planned.params.len() && !params.is_empty() {
                    let bound = with_parameters(s, params, &p.planned.params)?;
                    return self.run(&bound);
                }
            }
            if params.len() != p.planned.params.len() {
                return Err(Error::other(
                    "08P01",
                    format!(
                        "bind message supplies {} parameters, but prepared statement requires {}",
                        params.len(),
                        p.planned.params.len()
                    ),
                ));
            }
            let s = s.clone();
            if self.implicit {
                match s.as_ref() {
                    // The implicit block becomes the client's own, in the
                    // access mode it asks for.
                    ast::Statement::StartTransaction { modes, .. } => {
                        if let Some(ro) = modes_read_only(modes) {
                            if let Err(e) = self.set_transaction_read_only(ro) {
                                self.fail();
                                return Err(e);
                            }
                        }
                        self.implicit = false;
                        return Ok(tag("BEGIN"));
                    }
                    ast::Statement::Commit { .. } | ast::Statement::Rollback { .. } => self.implicit = false,
                    _ => {}
                }
            }
            return self.run(&s);
        }
        if self.state == TxnStatus::Failed {
            return Err(Error::InFailedTransaction);
        }
        let r = (|| {
            if p.version != self.catalog.version() || p.role_epoch != self.role_epoch {
                *p = self.prepare_ast(p.statement.clone(), p.declared.clone())?;
            }
            let planned = p.planned.clone();
            if let Some(b) = bulk.filter(|_| !takes_bulk(&planned.statement)) {
                // Not an INSERT of its parameters: one run per row.
                let rows = std::mem::take(&mut *b.rows.borrow_mut());
                let mut last = QueryResult::empty();
                for (i, row) in rows.iter().enumerate() {
                    b.done.set(i);
                    last = self.run_planned(&planned, row, None)?;
                }
                return Ok(last);
            }
            let r = self.run_planned(&planned, params, bulk);
            if self.vars.log_min_duration.is_some() {
                self.ran.push(planned);
            }
            r
        })();
        if r.is_err() {
            self.fail();
        }
        r
    }

    /// Marks an open block failed (a COPY inside it went wrong).
    pub(crate) fn fail_block(&mut self) {
        self.fail();
    }

    /// An error inside a block: the block stays failed (25P02) until
    /// ROLLBACK, but its engine transaction is rolled back now, so the rows
    /// it changed or claimed are free for others at once, as PostgreSQL
    /// releases a failed transaction's locks at the error. With savepoints
    /// only what came after the newest one is rolled back: ROLLBACK TO can
    /// then take the block up again from there.
    fn fail(&mut self) {
        // A statement that deferred a row wait was already rolled back to
        // its start; it runs again after the wait.
        if self.waiting.is_some() {
            return;
        }
        if self.state == TxnStatus::InBlock {
            self.state = TxnStatus::Failed;
            match self.savepoints.last() {
                Some(sp) => self.undo_to(sp),
                None => {
                    if let Some(t) = self.txn.take() {
                        t.abort();
                    }
                }
            }
        }
    }

    /// Rolls the block's transaction back to a savepoint: its writes and
    /// schema changes since then, and the globals it changed.
    fn undo_to(&self, sp: &SavepointMark) {
        let Some(t) = &self.txn else { return };
        t.rollback_to(&sp.engine);
        if let Err(e) = self.catalog.globals_rollback(t.id(), &sp.globals) {
            tracing::error!(error = %e, "rolling the catalog's globals back to a savepoint failed");
        }
        self.catalog.invalidate();
    }

    /// `r`, failing the block if it is an error.
    fn failing<T>(&mut self, r: Result<T>) -> Result<T> {
        if r.is_err() {
            self.fail();
        }
        r
    }

    /// SAVEPOINT name.
    fn savepoint(&mut self, name: &str) -> Result<QueryResult> {
        let Some(t) = self.txn.as_ref().filter(|_| self.state == TxnStatus::InBlock) else {
            return Err(no_block("SAVEPOINT"));
        };
        let mark = SavepointMark {
            name: name.to_string(),
            engine: t.savepoint(),
            globals: self.catalog.globals_mark(t.id()),
            settings: self.block_settings.as_ref().map(|b| (self.vars.clone(), b.clone())),
        };
        self.savepoints.push(mark);
        self.block_used = true;
        Ok(tag("SAVEPOINT"))
    }

    /// The newest savepoint named `name` (3B001 if there is none).
    fn find_savepoint(&self, name: &str) -> Result<usize> {
        self.savepoints
            .iter()
            .rposition(|s| s.name == name)
            .ok_or_else(|| Error::other("3B001", format!("savepoint \"{name}\" does not exist")))
    }

    /// RELEASE [SAVEPOINT] name: forgets it and every newer one; what was
    /// done since stays part of the block.
    fn release(&mut self, name: &str) -> Result<QueryResult> {
        if self.state == TxnStatus::Idle {
            return Err(no_block("RELEASE SAVEPOINT"));
        }
        let at = self.find_savepoint(name)?;
        self.savepoints.truncate(at);
        Ok(tag("RELEASE"))
    }

    /// ROLLBACK TO [SAVEPOINT] name: takes back everything since it (the
    /// savepoint stays), and takes a failed block up again.
    fn rollback_to(&mut self, name: &str) -> Result<QueryResult> {
        if self.state == TxnStatus::Idle {
            return Err(no_block("ROLLBACK TO SAVEPOINT"));
        }
        let at = self.find_savepoint(name)?;
        self.savepoints.truncate(at + 1);
        self.undo_to(&self.savepoints[at]);
        match self.savepoints[at].settings.clone() {
            Some((vars, block)) => {
                self.vars.restore(vars);
                self.block_settings = Some(block);
            }
            None => {
                if let Some(b) = self.block_settings.take() {
                    self.vars.restore(b.before);
                }
            }
        }
        self.settings_changed();
        self.state = TxnStatus::InBlock;
        Ok(tag("ROLLBACK"))
    }

    /// The transaction of the open block, if there is one: schema changes
    /// belong to it, and it may use what it changed (see
    /// [`centum_engine::ddl`]).
    fn block_txn(&self) -> Option<centum_engine::TxnId> {
        self.txn.as_ref().filter(|_| self.state != TxnStatus::Idle).map(|t| t.id())
    }

    /// The limits of a wait of the statement starting now.
    fn wait_limits(&self) -> centum_engine::WaitLimits {
        centum_engine::WaitLimits {
            lock_timeout: self.vars.lock_timeout,
            deadline: self.vars.statement_timeout.map(|d| Instant::now() + d),
            cancel: Some(self.cancel.clone()),
            defer: false,
        }
    }

    /// Plans `s`. A table that another open transaction has changed
    /// cannot be planned against until that transaction ends: the session
    /// waits for it (lock_timeout, statement_timeout, cancel, deadlock
    /// detection) and plans again.
    fn plan(&self, s: &ast::Statement, declared: Vec<Option<DataType>>) -> Result<Planned> {
        let me = self.block_txn();
        let _act = centum_engine::act_for(me);
        let start = self.started.unwrap_or_else(Instant::now);
        let _deadline =
            crate::planner::deadline::Planning::until(self.vars.statement_timeout.map(|d| start + d));
        loop {
            match plan_statement(&self.catalog, &self.vars.search_path, s, declared.clone()) {
                Err(e) => match e.claimed_by() {
                    Some(owner) => self.catalog.db().wait_claim(me, owner, self.wait_limits())?,
                    None => return Err(e),
                },
                Ok(planned) => {
                    self.check_needs(&planned.needs)?;
                    return Ok(planned);
                }
            }
        }
    }

    /// Runs one parsed statement.
    fn run(&mut self, s: &ast::Statement) -> Result<QueryResult> {
        use ast::Statement as S;
        crate::functions::tsearch::set_session_config(self.vars.text_search_config);
        match s {
            S::StartTransaction { modes, .. } => {
                return self.begin(modes_isolation(modes), modes_read_only(modes))
            }
            S::Commit { .. } => return self.commit(),
            S::Rollback { savepoint: None, .. } => return Ok(self.rollback()),
            S::Rollback { savepoint: Some(name), .. } => {
                let r = self.rollback_to(&crate::names::ident(name));
                return self.failing(r);
            }
            S::Savepoint { name } if self.state != TxnStatus::Failed => {
                let r = self.savepoint(&crate::names::ident(name));
                return self.failing(r);
            }
            S::ReleaseSavepoint { name } if self.state != TxnStatus::Failed => {
                let r = self.release(&crate::names::ident(name));
                return self.failing(r);
            }
            _ => {}
        }
        if self.state == TxnStatus::Failed {
            return Err(Error::InFailedTransaction);
        }
        if let Some(owner) = self.creating_owner(s) {
            // What the statement creates is owned by the role running it:
            // the objects and their owner are written in one transaction.
            if self.state == TxnStatus::Idle {
                return self.in_block(true, |session| session.run(s));
            }
            let me = self.block_txn();
            let objects = |session: &mut Session| {
                let _act = centum_engine::act_for(me);
                session.catalog.objects()
            };
            let before = objects(self);
            let r = self.run_statement(s);
            if r.is_ok() {
                let made: Vec<_> = objects(self).difference(&before).cloned().collect();
                let owned = self.as_schema_change(|session| {
                    for (kind, name) in made {
                        let privs = crate::privileges::ObjectPrivs { owner: Some(owner.clone()), acl: None };
                        session.catalog.set_privs(kind, &name, privs)?;
                    }
                    Ok(())
                });
                if let Err(e) = owned {
                    self.fail();
                    return Err(e);
                }
            }
            return r;
        }
        self.run_statement(s)
    }

    /// The role that will own what statement `s` creates, when that is not
    /// the database owner (whose objects store no owner).
    fn creating_owner(&self, s: &ast::Statement) -> Option<String> {
        use ast::Statement as S;
        let creates = matches!(
            s,
            S::CreateTable(_)
                | S::CreateView(_)
                | S::CreateSequence { .. }
                | S::CreateFunction(_)
                | S::CreateSchema { .. }
        );
        if !creates {
            return None;
        }
        let role = self.current_role();
        (self.catalog.role(role).is_some() && role != self.catalog.db_owner()).then(|| role.to_string())
    }

    /// A binder for schema changes, knowing who makes them.
    fn acting_binder(&self) -> Binder<'_> {
        let mut b = Binder::new(&self.catalog, &self.vars.search_path, vec![]);
        b.actor =
            Some(crate::privileges::Actor { role: self.current_role().to_string(), bypass: self.bypasses() });
        b.block = self.txn.as_ref().filter(|_| self.state != TxnStatus::Idle);
        b
    }

    /// Runs statement `s` (not one that controls the transaction).
    fn run_statement(&mut self, s: &ast::Statement) -> Result<QueryResult> {
        use ast::Statement as S;
        if let Err(e) = self.check_read_only(s) {
            self.fail();
            return Err(e);
        }
        if grant::checks(s) {
            if let Err(e) = grant::check_statement(&self.acting_binder(), s) {
                self.fail();
                return Err(e);
            }
        }
        if let S::CreateTable(ct) = s {
            if ct.query.is_some() {
                // Its own statements fail the block as they go; an error
                // before them (planning the query) fails it here.
                let r = self.create_table_as(ct);
                if r.is_err() {
                    self.fail();
                }
                return r;
            }
        }
        // A change that the views over a table are checked against once it
        // is made, or a drop that cascades to views, runs in a transaction
        // of its own when none is open, so that a failure undoes it whole.
        if self.state == TxnStatus::Idle
            && matches!(s, S::AlterTable(_) | S::Drop { .. })
            && self.catalog.has_views()
        {
            return self.in_block(true, |session| session.run(s));
        }
        // Materialized views fill their tables with statements of their own.
        let r = match s {
            S::CreateView(cv) if cv.materialized => Some(self.create_materialized_view(cv)),
            S::Pragma { name, value: Some(v), .. } if name.to_string() == crate::parser::REFRESH => {
                Some(match &v.value {
                    ast::Value::SingleQuotedString(text) => self.refresh(text),
                    _ => Err(Error::other("XX000", "REFRESH lost its text")),
                })
            }
            _ => None,
        };
        if let Some(r) = r {
            if r.is_err() {
                self.fail();
            }
            return r;
        }
        let me = self.block_txn();
        let _act = centum_engine::act_for(me);
        // A schema change waits for another transaction's uncommitted
        // schema changes to end, and an index build for the transactions
        // open when it started: these waits end like a row wait
        // (lock_timeout, statement_timeout, cancel). Inside a block the
        // change is the block's: its own rows then go into the indexes
        // it built.
        let r =
            if is_ddl(s) { self.as_schema_change(|session| session.run_other(s)) } else { self.run_other(s) };
        if r.is_err() {
            self.fail();
        }
        r
    }

    /// Runs `f` as a schema change of the session's transaction. A schema
    /// change may copy or index a whole table: it runs off the server's
    /// workers.
    fn as_schema_change<T>(&mut self, f: impl FnOnce(&mut Session) -> Result<T>) -> Result<T> {
        let me = self.block_txn();
        let limits = self.wait_limits();
        centum_engine::blocking::section(|| {
            centum_engine::ddl_scope(limits, me, || {
                self.catalog.db().enter_schema_change()?;
                let r = f(self)?;
                if let Some(t) = &self.txn {
                    crate::execution::ddl::relink_own_writes(t)?;
                }
                Ok(r)
            })
        })
    }

    fn run_other(&mut self, s: &ast::Statement) -> Result<QueryResult> {
        use ast::Statement as S;
        let b = self.acting_binder();
        let ddl_result = |r: Result<DdlOutcome>| -> Result<QueryResult> {
            let o = r?;
            Ok(QueryResult { tag: o.tag, notices: o.notices, ..tag("") })
        };
        match s {
            S::Query(_)
            | S::Insert(_)
            | S::Update(_)
            | S::Delete(_)
            | S::Explain { .. }
            | S::Merge(_)
            | S::Call(_) => {
                self.started = Some(Instant::now());
                let planned = self.plan(s, vec![]);
                let r = planned.and_then(|planned| {
                    if !planned.params.is_empty() {
                        return Err(Error::other("42P02", "there is no parameter $1"));
                    }
                    let r = self.run_planned(&planned, &[], None);
                    if self.vars.log_min_duration.is_some() {
                        self.ran.push(Arc::new(planned));
                    }
                    r
                });
                self.started = None;
                r
            }
            S::CreateTable(ct) => ddl_result(ddl::create_table(&b, ct)),
            S::CreateFunction(cf) => Ok(tag(&crate::planner::routines::create(
                &self.catalog,
                cf,
                self.vars.flag("check_function_bodies", true),
            )?)),
            S::DropFunction(df) => {
                let cascade = matches!(df.drop_behavior, Some(ast::DropBehavior::Cascade));
                let mut notices = Vec::new();
                for f in &df.func_desc {
                    let name = crate::names::object_parts(&f.name)?.last().cloned().unwrap_or_default();
                    let users = crate::triggers::using_function(&b, &name)?;
                    if !users.is_empty() && !cascade {
                        let lines: Vec<String> = users
                            .iter()
                            .map(|d| format!("{} depends on function {name}()", d.describe()))
                            .collect();
                        return Err(Error::other(
                            "2BP01",
                            format!(
                                "cannot drop function {name}() because other objects depend on it\nDETAIL:  {}",
                                lines.join("\n")
                            ),
                        ));
                    }
                    notices.extend(crate::triggers::drop_using(&b, &users)?);
                }
                let (t, more) =
                    crate::planner::routines::drop(&self.catalog, &df.func_desc, df.if_exists, false)?;
                notices.extend(more);
                Ok(QueryResult { tag: t, notices, ..tag("") })
            }
            S::DropProcedure { if_exists, proc_desc, .. } => {
                let (t, notices) =
                    crate::planner::routines::drop(&self.catalog, proc_desc, *if_exists, true)?;
                Ok(QueryResult { tag: t, notices, ..tag("") })
            }
            S::CreateType {
                name,
                representation: Some(ast::UserDefinedTypeRepresentation::Enum { labels }),
            } => Ok(tag(&crate::enums::create(b.catalog, b.search_path, name, labels)?)),
            S::CreateType { .. } => Ok(tag(&crate::routines::create_type(&self.catalog, s)?)),
            S::AlterType(at) => {
                let (t, notices) = crate::enums::alter(b.catalog, b.search_path, at)?;
                if let ast::AlterTypeOperation::RenameValue(_) = &at.operation {
                    if let Some(e) = crate::enums::lookup(b.catalog, b.search_path, &at.name)? {
                        ddl::relabel_tables(&b, e.oid)?;
                    }
                }
                Ok(QueryResult { tag: t, notices, ..tag("") })
            }
            S::Drop { object_type: ast::ObjectType::Type, if_exists, names, cascade, .. } => {
                let mut notices = Vec::new();
                for name in names {
                    match crate::enums::lookup(b.catalog, b.search_path, name)? {
                        Some(e) => {
                            let columns = crate::enums::check_drop(b.catalog, e.oid, &e.name, *cascade)?;
                            notices.extend(ddl::drop_type_columns(&b, &columns)?);
                            b.catalog.drop_enum(&e.name)?;
                        }
                        None => {
                            let n = crate::names::object_parts(name)?.last().cloned().unwrap_or_default();
                            if let Some(t) = b.catalog.composite_entry(&n) {
                                let columns = crate::enums::check_drop(b.catalog, t.oid, &t.name, *cascade)?;
                                notices.extend(ddl::drop_type_columns(&b, &columns)?);
                            }
                            let (_, n) = crate::routines::drop_types(
                                &self.catalog,
                                std::slice::from_ref(name),
                                *if_exists,
                            )?;
                            notices.extend(n);
                        }
                    }
                }
                Ok(QueryResult { tag: "DROP TYPE".into(), notices, ..tag("") })
            }
            S::CreateIndex(ci) => ddl_result(ddl::create_index(&b, ci)),
            S::AlterIndex { name, operation: ast::AlterIndexOperation::RenameIndex { index_name } } => {
                let last = |n: &ast::ObjectName| -> Result<String> {
                    Ok(crate::names::object_parts(n)?.last().cloned().unwrap_or_default())
                };
                ddl::rename_index(&b, &last(name)?, &last(index_name)?)?;
                Ok(tag("ALTER INDEX"))
            }
            S::Grant(g) => ddl_result(grant::grant(&b, g)),
            S::Revoke(r) => ddl_result(grant::revoke(&b, r)),
            S::Comment { object_type, object_name, comment, .. } => {
                ddl_result(ddl::comment(&b, object_type, object_name, comment.as_deref()))
            }
            S::CreateView(cv) => ddl_result(views::create(&b, cv)),
            S::Drop {
                object_type: kind @ (ast::ObjectType::View | ast::ObjectType::MaterializedView),
                if_exists,
                names,
                cascade,
                ..
            } => {
                let materialized = *kind == ast::ObjectType::MaterializedView;
                ddl_result(views::drop(&b, names, *if_exists, *cascade, materialized))
            }
            S::Drop { object_type: ast::ObjectType::Role, if_exists, names, .. } => {
                let (t, notices) = crate::auth::drop_roles(&self.catalog, names, *if_exists, &self.user)?;
                Ok(QueryResult { tag: t, notices, ..tag("") })
            }
            S::Drop { object_type, if_exists, names, cascade, .. } => {
                ddl_result(ddl::drop(&b, object_type, names, *if_exists, *cascade))
            }
            S::CreateRole(cr) => Ok(tag(&crate::auth::create_role(&self.catalog, cr)?)),
            S::AlterRole { name, operation } => {
                Ok(tag(&crate::auth::alter_role(&self.catalog, name, operation)?))
            }
            S::AlterTable(at) => ddl_result(ddl::alter_table(&b, at)),
            S::AlterSchema(a)
                if a.operations.iter().all(|o| matches!(o, ast::AlterSchemaOperation::OwnerTo { .. })) =>
            {
                let name = crate::names::object_parts(&a.name)?.join(".");
                if !self.catalog.has_schema(&name) {
                    return Err(Error::other("3F000", format!("schema \"{name}\" does not exist")));
                }
                for o in &a.operations {
                    if let ast::AlterSchemaOperation::OwnerTo { owner } = o {
                        grant::owner_to(&b, crate::privileges::ObjectKind::Schema, &name, owner)?;
                    }
                }
                Ok(tag("ALTER SCHEMA"))
            }
            S::AlterFunction(f) if matches!(f.operation, ast::AlterFunctionOperation::OwnerTo(_)) => {
                let parts = crate::names::object_parts(&f.function.name)?;
                let name = parts.last().cloned().unwrap_or_default();
                if self.catalog.routine_source(&name).is_none() {
                    return Err(Error::UndefinedFunction(name));
                }
                if let ast::AlterFunctionOperation::OwnerTo(owner) = &f.operation {
                    grant::owner_to(&b, crate::privileges::ObjectKind::Routine, &name, owner)?;
                }
                Ok(tag("ALTER FUNCTION"))
            }
            S::Truncate(t) => {
                self.check_needs(&ddl::truncate_needs(&b, &t.table_names)?)?;
                ddl_result(ddl::truncate(&b, &t.table_names, self.txn.as_ref()))
            }
            S::CreateTrigger(ct) => ddl_result(crate::triggers::create(&b, ct)),
            S::DropTrigger(dt) => ddl_result(crate::triggers::drop(&b, dt)),
            S::CreateSequence { name, data_type, sequence_options, if_not_exists, .. } => ddl_result(
                ddl::create_sequence(&b, name, data_type.as_ref(), sequence_options, *if_not_exists),
            ),
            S::CreateSchema { schema_name, if_not_exists, .. } => {
                ddl_result(ddl::create_schema(&b, schema_name, *if_not_exists))
            }
            S::Analyze(_) => Ok(tag("ANALYZE")),
            S::Reset(r) => {
                match &r.reset {
                    ast::Reset::ALL => self.reset(None),
                    ast::Reset::ConfigurationParameter(n) => {
                        let n = crate::names::object_parts(n)?.join("_");
                        if n == "role" {
                            self.set_role(None)?;
                        } else {
                            self.may_set(&n)?;
                            self.reset(Some(&n))
                        }
                    }
                    ast::Reset::SessionAuthorization => self.set_role(None)?,
                }
                Ok(tag("RESET"))
            }
            S::Discard { object_type } => {
                if matches!(object_type, ast::DiscardObject::ALL) {
                    if self.state != TxnStatus::Idle {
                        return Err(Error::TransactionState {
                            code: "25001",
                            message: "DISCARD ALL cannot run inside a transaction block".into(),
                        });
                    }
                    self.reset(None);
                    self.named.clear();
                    // DISCARD ALL includes UNLISTEN * and releases the
                    // session's advisory locks, as in PostgreSQL.
                    self.listen_ops.push((false, None));
                    self.catalog.activity.advisory.unlock_all(self.holder);
                }
                if matches!(object_type, ast::DiscardObject::ALL | ast::DiscardObject::SEQUENCES) {
                    self.currval.borrow_mut().clear();
                }
                Ok(tag(&format!("DISCARD {object_type}")))
            }
            S::Set(set) => self.set(set),
            S::LISTEN { channel } => {
                self.listen_ops.push((true, Some(ident(channel))));
                Ok(tag("LISTEN"))
            }
            S::UNLISTEN { channel } => {
                let all = channel.quote_style.is_none() && channel.value == "*";
                self.listen_ops.push((false, (!all).then(|| ident(channel))));
                Ok(tag("UNLISTEN"))
            }
            S::NOTIFY { channel, payload } => {
                crate::notify::queue(&self.notes, ident(channel), payload.clone().unwrap_or_default())?;
                Ok(tag("NOTIFY"))
            }
            S::ShowVariable { variable }
                if variable.len() == 1 && variable[0].value.eq_ignore_ascii_case("all") =>
            {
                Ok(self.show_all())
            }
            S::ShowVariable { variable } => {
                let words: Vec<String> = variable.iter().map(|i| i.value.to_lowercase()).collect();
                // `SHOW transaction isolation level`, or a custom
                // `SHOW myapp.tenant` (which arrives as two words).
                let mut name = words.join(" ");
                if words.len() == 2 && self.show(&name).is_err() {
                    name = words.join(".");
                }
                let value = self.show(&name)?;
                Ok(QueryResult {
                    columns: Arc::from(vec![OutputColumn {
                        name: name.replace(' ', "_"),
                        ty: Some(DataType::Text),
                    }]),
                    rows: vec![vec![Value::Text(value)]],
                    tag: "SHOW".into(),
                    notices: vec![],
                })
            }
            S::Prepare { name, data_types, statement } => {
                let declared = data_types
                    .iter()
                    .map(|t| crate::enums::data_type(&self.catalog, &self.vars.search_path, t).map(Some))
                    .collect::<Result<Vec<_>>>()?;
                let p = self.prepare_ast((**statement).clone(), declared)?;
                let n = crate::names::ident(name);
                if self.named.contains_key(&n) {
                    return Err(Error::Duplicate {
                        code: "42P05",
                        message: format!("prepared statement \"{n}\" already exists"),
                    });
                }
                self.named.insert(n, p);
                Ok(tag("PREPARE"))
            }
            S::Execute { name: Some(name), parameters, .. } => {
                let n = crate::names::object_parts(name)?.join(".");
                let mut p = self.named_statement(&n)?.clone();
                let mut params = Vec::new();
                let empty = Default::default();
                for e in parameters {
                    let mut binder = Binder::new(&self.catalog, &self.vars.search_path, vec![]);
                    let (x, _) = binder.expr(e, &crate::planner::bind_ctx(&empty))?;
                    params.push(self.const_eval(&x)?);
                }
                let r = self.execute_prepared(&mut p, &params);
                self.named.insert(n, p);
                r
            }
            S::Vacuum(_) => self.vacuum(),
            S::Lock(l) => self.lock_tables(l),
            S::Pragma { name, value: Some(v), .. } if name.to_string() == crate::parser::ALTER_SEQUENCE => {
                let ast::Value::SingleQuotedString(text) = &v.value else {
                    return Err(Error::other("XX000", "ALTER SEQUENCE lost its text"));
                };
                Ok(tag(&ddl::alter_sequence(&b, text)?))
            }
            S::Pragma { name, value: Some(v), .. } if name.to_string() == crate::parser::PUBLICATION => {
                let ast::Value::SingleQuotedString(text) = &v.value else {
                    return Err(Error::other("XX000", "a PUBLICATION statement lost its text"));
                };
                let (t, notices) = crate::publications::run(&b, text)?;
                Ok(QueryResult { tag: t, notices, ..tag("") })
            }
            S::Pragma { name, value: None, .. } if name.to_string() == crate::parser::CHECKPOINT => {
                self.checkpoint()
            }
            S::Deallocate { name, .. } => {
                let n = crate::names::ident(name);
                if n == "all" {
                    self.named.clear();
                } else if self.named.remove(&n).is_none() {
                    return Err(Error::other("26000", format!("prepared statement \"{n}\" does not exist")));
                }
                Ok(tag("DEALLOCATE"))
            }
            other => Err(Error::unsupported(first_words(&other.to_string()))),
        }
    }

    /// Evaluates a constant expression (EXECUTE arguments).
    fn const_eval(&self, e: &crate::planner::Expr) -> Result<Value> {
        let db = self.catalog.db();
        let txn = db.begin(Isolation::ReadCommitted)?;
        let mut cx = ExecCtx::new(&txn, &self.catalog, &[], &self.currval, None, None);
        cx.read_only = self.read_only_now();
        let v = crate::execution::eval::eval(e, &[], &[], &cx);
        txn.abort();
        v
    }

    /// `CREATE TABLE name AS query`: a table with the query's columns and
    /// types (renamed by a column list, should the parser give one; no
    /// constraints), filled with its rows, both in one
    /// transaction: the block's, or one of its own, so a failure leaves
    /// no table behind. The tag is `SELECT n`, as PostgreSQL's.
    fn create_table_as(&mut self, ct: &ast::CreateTable) -> Result<QueryResult> {
        let names: Vec<String> = ct.columns.iter().map(|c| crate::names::ident(&c.name)).collect();
        match self.table_from_query(ct, &names, true, |_| Ok(()))? {
            Some(rows) => Ok(tag(&format!("SELECT {rows}"))),
            None => {
                let name =
                    Binder::new(&self.catalog, &self.vars.search_path, vec![]).new_object_name(&ct.name)?;
                let mut r = tag("CREATE TABLE AS");
                r.notices.push(format!("relation \"{name}\" already exists, skipping"));
                Ok(r)
            }
        }
    }

    /// Creates table `ct.name` with the columns of `ct.query` (the first
    /// ones named `names`), fills it with the query's rows if `with_data`,
    /// and runs `then`, all in one transaction, so that a failure leaves
    /// no table. The rows it filled in, or `None` if IF NOT EXISTS found
    /// the table there.
    fn table_from_query(
        &mut self,
        ct: &ast::CreateTable,
        names: &[String],
        with_data: bool,
        then: impl FnOnce(&mut Session) -> Result<()>,
    ) -> Result<Option<u64>> {
        use ast::Statement as S;
        let Some(query) = ct.query.as_deref() else { return Err(Error::other("XX000", "no query")) };
        let planned = self.plan(&S::Query(Box::new(query.clone())), vec![])?;
        if !planned.params.is_empty() {
            return Err(Error::other("42P02", "there is no parameter $1"));
        }
        if names.len() > planned.columns.len() {
            return Err(Error::Syntax("too many column names were specified".into()));
        }
        let mut all: Vec<String> = planned.columns.iter().map(|c| c.name.clone()).collect();
        for (n, given) in all.iter_mut().zip(names) {
            *n = given.clone();
        }
        let mut defs = Vec::with_capacity(all.len());
        for (i, (n, c)) in all.iter().zip(planned.columns.iter()).enumerate() {
            if all[..i].contains(n) {
                return Err(Error::Duplicate {
                    code: "42701",
                    message: format!("column \"{n}\" specified more than once"),
                });
            }
            let ty = c.ty.as_ref().map_or("text".to_string(), DataType::sql_name);
            defs.push(format!("\"{}\" {ty}", n.replace('"', "\"\"")));
        }
        let columns = match crate::parser::parse(&format!("CREATE TABLE t ({})", defs.join(", ")))?.pop() {
            Some(S::CreateTable(t)) => t.columns,
            _ => return Err(Error::other("XX000", "CREATE TABLE AS made no column list")),
        };
        let name = Binder::new(&self.catalog, &self.vars.search_path, vec![]).new_object_name(&ct.name)?;
        if ct.if_not_exists && self.catalog.db().table(&name).is_ok() {
            return Ok(None);
        }
        let create = S::CreateTable(ast::CreateTable { query: None, columns, ..ct.clone() });
        let insert = match crate::parser::parse(&format!("INSERT INTO {} {query}", ct.name))?.pop() {
            Some(s @ S::Insert(_)) => s,
            _ => return Err(Error::other("XX000", "CREATE TABLE AS made no INSERT")),
        };
        let own = self.state == TxnStatus::Idle;
        let rows = self.in_block(own, |s| {
            s.run(&create)?;
            let filled = if with_data { s.run(&insert)?.tag } else { String::new() };
            then(s)?;
            Ok(filled.rsplit(' ').next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0))
        })?;
        Ok(Some(rows))
    }

    /// CREATE MATERIALIZED VIEW: a table filled with its query's rows (or
    /// left empty and unreadable WITH NO DATA), and the view that says so.
    fn create_materialized_view(&mut self, cv: &ast::CreateView) -> Result<QueryResult> {
        let b = Binder::new(&self.catalog, &self.vars.search_path, vec![]);
        let name = b.new_object_name(&cv.name)?;
        if views::relation_exists(&self.catalog, &name) {
            if cv.if_not_exists {
                let mut r = tag("CREATE MATERIALIZED VIEW");
                r.notices.push(format!(
                    "relation \"{}\" already exists, skipping",
                    crate::planner::views::short(&name)
                ));
                return Ok(r);
            }
            return Err(Error::Duplicate {
                code: "42P07",
                message: format!("relation \"{}\" already exists", crate::planner::views::short(&name)),
            });
        }
        let (mut def, _) = views::define(&b, &name, cv)?;
        let with_data = !views::no_data(cv);
        def.populated = with_data;
        let ct = match crate::parser::parse(&format!("CREATE TABLE {} AS {}", cv.name, cv.query))?.pop() {
            Some(ast::Statement::CreateTable(ct)) => ct,
            _ => return Err(Error::other("XX000", "CREATE MATERIALIZED VIEW made no table")),
        };
        let names = def.columns.clone();
        let rows = self
            .table_from_query(&ct, &names, with_data, |s| s.as_schema_change(|s| s.catalog.put_view(def)))?;
        Ok(tag(&match rows {
            Some(n) if with_data => format!("SELECT {n}"),
            _ => "CREATE MATERIALIZED VIEW".into(),
        }))
    }

    /// REFRESH MATERIALIZED VIEW [CONCURRENTLY] name [WITH [NO] DATA]: the
    /// view's rows replaced by its query's, in one transaction. Readers
    /// see the old rows until it commits, with or without CONCURRENTLY
    /// (which, as in PostgreSQL, needs a unique index and rows).
    fn refresh(&mut self, text: &str) -> Result<QueryResult> {
        let words = crate::parser::words(text)?;
        let mut rest: &[String] = words.get(3..).unwrap_or_default();
        let concurrently = rest.first().is_some_and(|w| w.eq_ignore_ascii_case("concurrently"));
        if concurrently {
            rest = &rest[1..];
        }
        let lower: Vec<String> = rest.iter().map(|w| w.to_lowercase()).collect();
        let (name_end, with_data) = match lower.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            [.., "with", "no", "data"] => (rest.len() - 3, false),
            [.., "with", "data"] => (rest.len() - 2, true),
            _ => (rest.len(), true),
        };
        let name = crate::parser::object_name(&rest[..name_end].concat())?;
        if concurrently && !with_data {
            return Err(Error::Syntax(
                "REFRESH options CONCURRENTLY and WITH NO DATA cannot be used together".into(),
            ));
        }
        let b = Binder::new(&self.catalog, &self.vars.search_path, vec![]);
        let parts = crate::names::object_parts(&name)?;
        let Some(def) = b.view_named(&parts).filter(|v| v.materialized) else {
            let engine = b.table_name(&name).unwrap_or_else(|_| parts.join("."));
            // PostgreSQL gives 0A000 here, where DROP gives 42809.
            let not_one = |name: &str| {
                Error::other(
                    "0A000",
                    format!("\"{}\" is not a materialized view", crate::planner::views::short(name)),
                )
            };
            return Err(match b.view_named(&parts) {
                Some(v) => not_one(&v.name),
                None if self.catalog.db().table(&engine).is_ok() => not_one(&engine),
                None => Error::UndefinedTable(parts.last().cloned().unwrap_or_default()),
            });
        };
        grant::require_owner(&self.acting_binder(), crate::privileges::ObjectKind::Relation, &def.name)?;
        if concurrently {
            if !def.populated {
                return Err(Error::other(
                    "0A000",
                    "CONCURRENTLY cannot be used when the materialized view is not populated",
                ));
            }
            let info = self.catalog.table(&def.name)?;
            if !info.table.def().indexes.iter().any(|ix| ix.unique) {
                return Err(Error::Raised {
                    code: "55000",
                    message: format!("cannot refresh materialized view \"{}\" concurrently", {
                        let (schema, name) = crate::system::snapshot::split_name(&def.name);
                        format!("{schema}.{name}")
                    }),
                    detail: None,
                    hint: Some("Create a unique index with no WHERE clause on one or more columns of the materialized view.".into()),
                });
            }
        }
        let written = crate::planner::views::written_name(&def.name);
        let delete = crate::parser::parse(&format!("DELETE FROM {written}"))?;
        let insert = crate::parser::parse(&format!("INSERT INTO {written} {}", def.query))?;
        let own = self.state == TxnStatus::Idle;
        let path = std::mem::replace(&mut self.vars.search_path, def.search_path.clone());
        let r = self.in_block(own, |s| {
            crate::planner::views::refreshing(|| {
                s.run(&delete[0])?;
                if with_data {
                    s.run(&insert[0])?;
                }
                if def.populated != with_data {
                    s.as_schema_change(|s| s.catalog.put_view(ViewDef { populated: with_data, ..def }))?;
                }
                Ok(())
            })
        });
        self.vars.search_path = path;
        r.map(|()| tag("REFRESH MATERIALIZED VIEW"))
    }

    /// For `CREATE_REPLICATION_SLOT ... (SNAPSHOT 'use')`: gives the open
    /// transaction block, which must be READ ONLY, REPEATABLE READ and
    /// unused, the snapshot of the log up to the position returned (see
    /// `Database::begin_at_log_cut`), where the slot then starts.
    pub fn snapshot_at_log_cut(&mut self) -> Result<centum_engine::storage::LogPos> {
        const WHAT: &str = "CREATE_REPLICATION_SLOT ... (SNAPSHOT 'use')";
        let refuse = |why: &str| Error::other("25000", format!("{WHAT} must {why}"));
        if self.state != TxnStatus::InBlock {
            return Err(refuse("be called inside a transaction"));
        }
        let Some(iso) = self.txn.as_ref().map(|t| t.isolation()) else {
            return Err(refuse("be called inside a transaction"));
        };
        if iso != Isolation::Snapshot {
            return Err(refuse("be called in REPEATABLE READ isolation mode transaction"));
        }
        if !self.read_only_now() {
            return Err(refuse("be called in a read only transaction"));
        }
        if self.block_used {
            return Err(refuse("be called before any query"));
        }
        let db = self.catalog.db().clone();
        let (mut txn, at) = centum_engine::blocking::section(|| db.begin_at_log_cut(iso))?;
        if self.vars.delayed_durability {
            txn.set_delayed_durability(true);
        }
        if let Some(old) = self.txn.replace(txn) {
            old.abort();
        }
        self.block_used = true;
        Ok(at)
    }

    /// BEGIN: opens a block at `isolation` (else the session's default),
    /// READ ONLY or not as `read_only` says (else as
    /// `default_transaction_read_only` does). A standby refuses READ WRITE
    /// and opens nothing, as PostgreSQL does.
    fn begin(&mut self, isolation: Option<Isolation>, read_only: Option<bool>) -> Result<QueryResult> {
        if self.state != TxnStatus::Idle {
            let mut r = tag("BEGIN");
            r.notices.push("there is already a transaction in progress".into());
            return Ok(r);
        }
        if read_only == Some(false) && self.catalog.is_standby() {
            return Err(read_write_during_recovery());
        }
        let iso = isolation.unwrap_or(self.vars.isolation);
        let mut txn = self.catalog.db().begin(iso)?;
        if self.vars.delayed_durability {
            txn.set_delayed_durability(true);
        }
        self.txn = Some(txn);
        self.savepoints.clear();
        self.block_settings = None;
        self.txn_time = TimestampTz::now();
        self.state = TxnStatus::InBlock;
        self.block_used = false;
        self.read_only = read_only.unwrap_or(self.vars.default_read_only);
        Ok(tag("BEGIN"))
    }

    fn commit(&mut self) -> Result<QueryResult> {
        match self.state {
            TxnStatus::Idle => {
                let mut r = tag("COMMIT");
                r.notices.push("there is no transaction in progress".into());
                Ok(r)
            }
            TxnStatus::Failed => Ok(self.rollback()),
            TxnStatus::InBlock => {
                self.state = TxnStatus::Idle;
                self.savepoints.clear();
                self.next_isolation = None;
                self.read_only = false;
                let r = match self.txn.take() {
                    Some(t) => commit_into(t, self.asynchronous, &mut self.pending).map(|()| tag("COMMIT")),
                    None => Ok(tag("COMMIT")),
                };
                self.end_block_settings(r.is_ok());
                r
            }
        }
    }

    fn rollback(&mut self) -> QueryResult {
        self.notes.get_mut().clear();
        self.listen_ops.clear();
        let mut r = tag("ROLLBACK");
        if self.state == TxnStatus::Idle {
            r.notices.push("there is no transaction in progress".into());
        }
        if let Some(t) = self.txn.take() {
            t.abort();
        }
        self.savepoints.clear();
        self.end_block_settings(false);
        self.state = TxnStatus::Idle;
        self.next_isolation = None;
        self.read_only = false;
        r
    }

    fn set(&mut self, set: &ast::Set) -> Result<QueryResult> {
        match set {
            ast::Set::SetTransaction { modes, session, .. } => {
                let access = modes_read_only(modes);
                let iso = modes_isolation(modes);
                if *session {
                    // SET SESSION CHARACTERISTICS AS TRANSACTION: the
                    // defaults of the transactions to come.
                    if let Some(ro) = access {
                        self.change_settings(false, |v| {
                            v.default_read_only = ro;
                            Ok(())
                        })?;
                    }
                    if let Some(i) = iso {
                        self.change_settings(false, |v| {
                            v.isolation = i;
                            Ok(())
                        })?;
                    }
                    return Ok(tag("SET"));
                }
                if let Some(ro) = access {
                    self.set_transaction_read_only(ro)?;
                }
                if let Some(i) = iso {
                    if self.state != TxnStatus::InBlock {
                        let mut r = tag("SET");
                        r.notices.push("SET TRANSACTION can only be used in transaction blocks".into());
                        return Ok(r);
                    }
                    if self.block_used {
                        return Err(Error::TransactionState {
                            code: "25001",
                            message: "SET TRANSACTION ISOLATION LEVEL must be called before any query".into(),
                        });
                    }
                    let mut txn = self.catalog.db().begin(i)?;
                    if self.vars.delayed_durability {
                        txn.set_delayed_durability(true);
                    }
                    if let Some(old) = self.txn.replace(txn) {
                        old.abort();
                    }
                }
                Ok(tag("SET"))
            }
            ast::Set::SingleAssignment { scope, variable, values, .. } => {
                let name = variable.to_string().to_lowercase();
                let text: Vec<String> = values
                    .iter()
                    .map(|v| match v {
                        ast::Expr::Value(v) => match &v.value {
                            ast::Value::SingleQuotedString(s) => s.clone(),
                            other => other.to_string(),
                        },
                        ast::Expr::Identifier(i) => i.value.clone(),
                        other => other.to_string(),
                    })
                    .collect();
                let local = matches!(scope, Some(ast::ContextModifier::Local));
                if name == "transaction_read_only" {
                    let on = crate::settings::parse_bool(&name, &text.join(", "))?;
                    self.set_transaction_read_only(on)?;
                    return Ok(tag("SET"));
                }
                self.may_set(&name)?;
                let mut r = tag("SET");
                if let Some(warning) = self.change_settings(local, |v| v.set(&name, &text))? {
                    r.notices.push(warning.into());
                }
                Ok(r)
            }
            ast::Set::SetTimeZone { .. } => Ok(tag("SET")),
            ast::Set::SetNames { .. } => Ok(tag("SET")),
            ast::Set::SetRole { role_name, .. } => {
                let name = role_name.as_ref().map(crate::names::ident);
                self.set_role(name.filter(|n| n != "none"))?;
                Ok(tag("SET"))
            }
            ast::Set::SetSessionAuthorization(p) => {
                let name = match &p.kind {
                    ast::SetSessionAuthorizationParamKind::Default => None,
                    ast::SetSessionAuthorizationParamKind::User(u) => Some(crate::names::ident(u)),
                };
                self.set_role(name)?;
                Ok(tag("SET"))
            }
            other => Err(Error::unsupported(format!("{other}"))),
        }
    }

    /// Sets a session variable (as `SET name = values`).
    pub fn set_var(&mut self, name: &str, values: &[String]) -> Result<()> {
        self.change_settings(false, |v| v.set(name, values)).map(drop)
    }

    /// `SHOW ALL`: every setting with its value in this session and what
    /// it does, by name, as PostgreSQL lists them.
    fn show_all(&self) -> QueryResult {
        let rows = self
            .vars
            .all(self.txn_view())
            .into_iter()
            .map(|l| vec![Value::Text(l.name), Value::Text(l.value), Value::Text(l.about.to_string())])
            .collect();
        let text = |name: &str| OutputColumn { name: name.into(), ty: Some(DataType::Text) };
        QueryResult {
            columns: Arc::from(vec![text("name"), text("setting"), text("description")]),
            rows,
            tag: "SHOW".into(),
            notices: vec![],
        }
    }

    /// A session variable's value, as SHOW prints it.
    pub fn show(&self, name: &str) -> Result<String> {
        self.vars.show(name, self.txn_view())
    }

    /// The isolation level of the open transaction.
    fn txn_isolation(&self) -> Option<Isolation> {
        self.txn.as_ref().map(|t| t.isolation())
    }

    /// Runs a planned statement: in the open block, or as its own
    /// transaction.
    fn run_planned(
        &mut self,
        planned: &Planned,
        params: &[Value],
        bulk: Option<&Bulk>,
    ) -> Result<QueryResult> {
        let r = self.run_planned_only(planned, params, bulk);
        if self.config_changes.borrow().is_empty() {
            return r;
        }
        match r {
            Ok(r) => self.apply_config_changes().map(|()| r),
            Err(e) => {
                self.config_changes.borrow_mut().clear();
                Err(e)
            }
        }
    }

    /// [`Session::run_planned`], less applying its `set_config()` calls.
    fn run_planned_only(
        &mut self,
        planned: &Planned,
        params: &[Value],
        bulk: Option<&Bulk>,
    ) -> Result<QueryResult> {
        // Rows in bulk come typed, one parameter list each.
        let params = if bulk.is_some() { Cow::Borrowed(params) } else { coerce_params(planned, params)? };
        if let Statement::Explain(lines) = &planned.statement {
            return Ok(QueryResult {
                columns: planned.columns.clone(),
                rows: lines.iter().map(|l| vec![Value::Text(l.clone())]).collect(),
                tag: "EXPLAIN".into(),
                notices: vec![],
            });
        }
        let start = self.started.unwrap_or_else(Instant::now);
        let stop = Stop {
            deadline: self.vars.statement_timeout.map(|d| start + d),
            cancel: &self.cancel,
            lock_timeout: self.vars.lock_timeout,
            read_only: self.read_only_now(),
            mem: self.vars.statement_mem,
            defer_waits: self.defer_waits && !planned.calls_routines,
        };
        if let Some(txn) = &mut self.txn {
            txn.begin_statement();
            self.block_used = true;
            // Where the statement began, for a deferred row wait.
            let start = stop.defer_waits.then(|| txn.savepoint());
            let r = run_in(
                &self.catalog,
                txn,
                planned,
                &params,
                &self.currval,
                Some(self.txn_time),
                stop,
                identity!(self),
                bulk,
            );
            if let (Some(e), Some(start)) = (r.as_ref().err().and_then(Error::would_wait), &start) {
                txn.rollback_to(start);
                self.waiting = self.catalog.db().row_wait(Some(txn.id()), e, self.wait_limits());
            }
            if r.is_err() {
                self.fail();
            }
            return r;
        }
        // A statement that calls a routine created with
        // centum.retry_on_conflict runs again on 40001/40P01, in a new
        // transaction, up to that many times.
        let retries = if bulk.is_some() { 0 } else { planned.retry };
        let mut attempt = 0;
        loop {
            let mut txn = self.catalog.db().begin(self.vars.isolation)?;
            if self.vars.delayed_durability {
                txn.set_delayed_durability(true);
            }
            let start = stop.defer_waits.then(|| txn.savepoint());
            let r = match run_in(
                &self.catalog,
                &txn,
                planned,
                &params,
                &self.currval,
                None,
                stop,
                identity!(self),
                bulk,
            ) {
                // A conflict found by the commit itself (validation) is
                // retried; only a failed write or sync comes later, with
                // the deferred commit's outcome.
                Ok(r) => commit_into(txn, self.asynchronous, &mut self.pending).map(|()| r),
                Err(e) => {
                    match (e.would_wait(), &start) {
                        (Some(we), Some(start)) => {
                            // Rolled back to its start, the transaction
                            // stays open while the caller waits, showing
                            // whom it waits for; the statement then runs
                            // again in a new one.
                            txn.rollback_to(start);
                            self.waiting = self.catalog.db().row_wait(Some(txn.id()), we, self.wait_limits());
                            self.waited_txn = Some(txn);
                        }
                        _ => txn.abort(),
                    }
                    Err(e)
                }
            };
            match r {
                Err(e) if e.is_retryable() && attempt < retries => {
                    attempt += 1;
                    // The conflicting writer is likely still committing
                    // (its log record on its way to disk): back off for
                    // longer each time, with jitter so that callers that
                    // collided do not collide again in step.
                    let ceiling =
                        RETRY_BACKOFF_MIN.saturating_mul(1 << attempt.min(16)).min(RETRY_BACKOFF_MAX);
                    let pause = ceiling / 2 + ceiling.mul_f64(jitter() / 2.0);
                    if stop.deadline.is_some_and(|d| Instant::now() + pause >= d) {
                        return Err(e);
                    }
                    centum_engine::blocking::section(|| std::thread::sleep(pause));
                }
                r => return r,
            }
        }
    }
}

/// Tells the thread's scheduler that the statement has ended, however it
/// ends (see `centum_engine::blocking`).
struct StatementEnds(std::rc::Rc<crate::execution::Budget>);

impl Drop for StatementEnds {
    fn drop(&mut self) {
        centum_engine::blocking::statement_ends(self.0.used());
    }
}

/// Clears a transaction's deferral of row waits when a statement ends.
struct SleepAfter<'a>(&'a Transaction);

impl Drop for SleepAfter<'_> {
    fn drop(&mut self) {
        self.0.set_defer_waits(false);
    }
}

/// Whether `s` is an INSERT (into a table, or a view through its INSTEAD
/// OF trigger) whose only row is its parameters in order, so that rows in
/// bulk can stand in for it (see [`Bulk`]).
fn takes_bulk(s: &Statement) -> bool {
    let source = match s {
        Statement::Insert(ins) => &ins.source,
        Statement::ViewWrite(w) if w.event == crate::triggers::INSERT => &w.source,
        _ => return false,
    };
    match source {
        crate::planner::plan::Plan::Values { rows } => {
            rows.len() == 1
                && rows[0]
                    .iter()
                    .enumerate()
                    .all(|(i, e)| matches!(e, crate::planner::expr::Expr::Param(p) if *p == i))
        }
        _ => false,
    }
}

/// Commits `t`; with `defer`, a commit that still waits for its record to
/// be durable is left in `pending` (see [`Session::defer_commits`]).
fn commit_into(t: Transaction, defer: bool, pending: &mut Option<centum_engine::Committing>) -> Result<()> {
    if !defer {
        return Ok(t.commit()?);
    }
    let mut c = t.commit_deferred()?;
    if c.durable().is_some() {
        *pending = Some(c);
    }
    Ok(())
}

/// A savepoint of the block: where its engine transaction and the
/// catalog's globals stood.
struct SavepointMark {
    name: String,
    engine: centum_engine::Savepoint,
    globals: crate::catalog::GlobalsMark,
    /// The settings and the block's settings changes when it was taken,
    /// if the block had changed any.
    settings: Option<(Settings, BlockSettings)>,
}

/// 25P01: `what` outside a transaction block.
fn no_block(what: &str) -> Error {
    Error::TransactionState {
        code: "25P01",
        message: format!("{what} can only be used in transaction blocks"),
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(t) = self.txn.take() {
            t.abort();
        }
        self.catalog.activity.advisory.end_session(self.holder);
        self.catalog.activity.notify.unlisten(self.holder, None);
    }
}

fn coerce_params<'p>(planned: &Planned, params: &'p [Value]) -> Result<Cow<'p, [Value]>> {
    if params.len() != planned.params.len() {
        return Err(Error::other(
            "08P01",
            format!(
                "bind message supplies {} parameters, but prepared statement requires {}",
                params.len(),
                planned.params.len()
            ),
        ));
    }
    if params.iter().zip(&planned.params).all(|(v, t)| v.fits(t)) {
        return Ok(Cow::Borrowed(&params[..planned.params.len()]));
    }
    params
        .iter()
        .zip(&planned.params)
        .map(|(v, t)| if v.fits(t) { Ok(v.clone()) } else { v.clone().coerce_to(t).map_err(Error::from) })
        .collect::<Result<Vec<_>>>()
        .map(Cow::Owned)
}

/// When a statement must stop early (its deadline, its cancel flag, how
/// long a row wait may last) and what it may do.
#[derive(Clone, Copy)]
struct Stop<'a> {
    deadline: Option<Instant>,
    cancel: &'a Arc<AtomicBool>,
    /// `lock_timeout`: how long one wait for a row may last.
    lock_timeout: Option<Duration>,
    /// The block is READ ONLY: statements a routine runs may not write.
    read_only: bool,
    /// The statement's memory budget, bytes.
    mem: usize,
    /// Row waits are deferred (see [`Session::set_asynchronous`]).
    defer_waits: bool,
}

#[allow(clippy::too_many_arguments)]
fn run_in(
    catalog: &Dictionary,
    txn: &Transaction,
    planned: &Planned,
    params: &[Value],
    currval: &RefCell<HashMap<String, i64>>,
    txn_time: Option<TimestampTz>,
    stop: Stop,
    id: crate::system::Identity<'_>,
    bulk: Option<&Bulk>,
) -> Result<QueryResult> {
    if let Some(b) = id.backend {
        b.set_transaction(txn.id());
    }
    let view = crate::settings::TxnView {
        isolation: Some(txn.isolation()),
        read_only: stop.read_only,
        standby: catalog.is_standby(),
    };
    let id = crate::system::Identity { txn: view, ..id };
    centum_engine::blocking::statement_begins();
    let mut cx = ExecCtx::new(txn, catalog, params, currval, txn_time, stop.deadline).identified(id);
    cx.cancel = Some(&**stop.cancel);
    cx.bulk = bulk;
    // Waits for rows other transactions hold end at the lock timeout, the
    // deadline or a cancel, like the statement's own work.
    txn.set_wait_limits(centum_engine::WaitLimits {
        lock_timeout: stop.lock_timeout,
        deadline: stop.deadline,
        cancel: Some(stop.cancel.clone()),
        defer: stop.defer_waits,
    });
    // Writes a later schema change makes in this transaction wait as
    // always.
    let _sleep_after = SleepAfter(txn);
    cx.read_only = stop.read_only;
    cx.budget = std::rc::Rc::new(crate::execution::Budget::new(stop.mem));
    let _ends = StatementEnds(cx.budget.clone());
    if let Statement::ExplainAnalyze(inner) = &planned.statement {
        // The statement runs for real (an UPDATE changes rows, as in
        // PostgreSQL); its rows are counted and dropped.
        let profile = crate::execution::profile::Profile::default();
        cx.profile = Some(profile.clone());
        let started = Instant::now();
        crate::execution::run_statement(&inner.statement, &cx)?;
        let took = started.elapsed();
        let stats = profile.borrow();
        let annotate = |node: usize| stats.get(&node).map_or(" (never executed)".into(), |s| s.annotation());
        let mut lines = explain_with(inner, &annotate);
        lines.push(format!("Execution Time: {:.3} ms", took.as_secs_f64() * 1000.0));
        let rows = lines.into_iter().map(|l| vec![Value::Text(l)]).collect();
        return Ok(QueryResult {
            columns: planned.columns.clone(),
            rows,
            tag: "EXPLAIN".into(),
            notices: vec![],
        });
    }
    let (rows, count) = crate::execution::run_statement(&planned.statement, &cx)?;
    let tag = match &planned.statement {
        Statement::Query(_) => format!("SELECT {count}"),
        Statement::Insert(_) => format!("INSERT 0 {count}"),
        Statement::Update(_) => format!("UPDATE {count}"),
        Statement::Delete(_) => format!("DELETE {count}"),
        Statement::Merge(_) => format!("MERGE {count}"),
        Statement::ViewWrite(w) if w.event == crate::triggers::INSERT => format!("INSERT 0 {count}"),
        Statement::ViewWrite(w) => format!("{} {count}", w.command()),
        Statement::Call(_) => "CALL".into(),
        Statement::Explain(_) | Statement::ExplainAnalyze(_) => "EXPLAIN".into(),
        Statement::Utility(_) => String::new(),
    };
    let notices = std::mem::take(&mut *cx.notices.borrow_mut());
    Ok(QueryResult { columns: planned.columns.clone(), rows, tag, notices })
}

/// The first back-off before a retried call, and the longest.
const RETRY_BACKOFF_MIN: Duration = Duration::from_micros(50);
const RETRY_BACKOFF_MAX: Duration = Duration::from_millis(10);

/// A number in [0, 1) that differs between calls and threads.
fn jitter() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// `CREATE USER name ...` is `CREATE ROLE name ... LOGIN` (sqlparser reads
/// CREATE USER in another dialect's form). Only a lone statement is
/// rewritten.
/// A VACUUM statement, in any of PostgreSQL's spellings.
fn is_vacuum(sql: &str) -> bool {
    let sql = sql.trim_start();
    sql.get(..6).is_some_and(|w| w.eq_ignore_ascii_case("vacuum"))
        && !sql[6..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
}

fn create_user_as_role(sql: &str) -> Option<String> {
    let t = sql.trim().trim_end_matches(';').trim_end();
    let mut words = t.split_whitespace();
    let (a, b) = (words.next()?, words.next()?);
    if !a.eq_ignore_ascii_case("create") || !b.eq_ignore_ascii_case("user") || t.contains(';') {
        return None;
    }
    let rest = t[t.find(b)? + b.len()..].trim_start();
    Some(format!("CREATE ROLE {rest} LOGIN"))
}

/// Whether `s` changes the schema: it then waits for another
/// transaction's uncommitted schema changes, and inside a block belongs to
/// the block.
fn is_ddl(s: &ast::Statement) -> bool {
    use ast::Statement as S;
    matches!(
        s,
        S::CreateTable(_)
            | S::CreateIndex(_)
            | S::AlterIndex { .. }
            | S::Drop { .. }
            | S::AlterTable(_)
            | S::Truncate(_)
            | S::CreateSequence { .. }
            | S::CreateSchema { .. }
            | S::CreateRole(_)
            | S::AlterRole { .. }
            | S::CreateFunction(_)
            | S::DropFunction(_)
            | S::DropProcedure { .. }
            | S::CreateType { .. }
            | S::AlterType(_)
            | S::CreateView(_)
            | S::Comment { .. }
            | S::Grant(_)
            | S::Revoke(_)
            | S::CreateTrigger(_)
            | S::DropTrigger(_)
    ) || matches!(s, S::Pragma { name, .. } if name.to_string() == crate::parser::PUBLICATION)
}

/// The command that statement `s` is, as PostgreSQL names it when a READ
/// ONLY transaction refuses it ("cannot execute CREATE TABLE in a
/// read-only transaction"), if it changes the database's schema, roles,
/// privileges, sequences or rows. `None` for the rest, and for the
/// statements that are planned, which are refused as they run.
fn read_only_refusal(s: &ast::Statement) -> Option<String> {
    use ast::Statement as S;
    let named = |what: &str| Some(what.to_string());
    match s {
        S::CreateTable(ct) if ct.query.is_some() => named("CREATE TABLE AS"),
        S::CreateTable(_) => named("CREATE TABLE"),
        S::CreateIndex(_) => named("CREATE INDEX"),
        S::AlterIndex { .. } => named("ALTER INDEX"),
        S::Drop { object_type, .. } => Some(format!("DROP {object_type}")),
        S::AlterTable(_) => named("ALTER TABLE"),
        S::Truncate(_) => named("TRUNCATE TABLE"),
        S::CreateSequence { .. } => named("CREATE SEQUENCE"),
        S::CreateSchema { .. } => named("CREATE SCHEMA"),
        S::AlterSchema(_) => named("ALTER SCHEMA"),
        S::CreateRole(_) => named("CREATE ROLE"),
        S::AlterRole { .. } => named("ALTER ROLE"),
        S::CreateFunction(cf) if cf.to_string().contains(crate::routines::PROCEDURE_MARK) => {
            named("CREATE PROCEDURE")
        }
        S::CreateFunction(_) => named("CREATE FUNCTION"),
        S::AlterFunction(_) => named("ALTER FUNCTION"),
        S::DropFunction(_) => named("DROP FUNCTION"),
        S::DropProcedure { .. } => named("DROP PROCEDURE"),
        S::CreateType { .. } => named("CREATE TYPE"),
        S::AlterType(_) => named("ALTER TYPE"),
        S::CreateView(cv) if cv.materialized => named("CREATE MATERIALIZED VIEW"),
        S::CreateView(_) => named("CREATE VIEW"),
        S::Comment { .. } => named("COMMENT"),
        S::Grant(_) => named("GRANT"),
        S::Revoke(_) => named("REVOKE"),
        S::CreateTrigger(_) => named("CREATE TRIGGER"),
        S::DropTrigger(_) => named("DROP TRIGGER"),
        S::Pragma { name, value, .. } => match name.to_string().as_str() {
            crate::parser::ALTER_SEQUENCE => named("ALTER SEQUENCE"),
            crate::parser::REFRESH => named("REFRESH MATERIALIZED VIEW"),
            crate::parser::PUBLICATION => {
                // CREATE, ALTER or DROP PUBLICATION, as its text says.
                let text = match value.as_ref().map(|v| &v.value) {
                    Some(ast::Value::SingleQuotedString(t)) => t.as_str(),
                    _ => "",
                };
                let verb = text.split_whitespace().next().unwrap_or("CREATE");
                Some(format!("{} PUBLICATION", verb.to_uppercase()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The command that statement `s` is, if a READ ONLY transaction may run it
/// but a standby may not, as PostgreSQL refuses it "during recovery": LISTEN
/// and NOTIFY (a standby's commits publish nothing), ANALYZE and VACUUM
/// (its versions are the primary's to collect), and LOCK TABLE in the
/// modes stronger than ROW EXCLUSIVE.
fn recovery_refusal(s: &ast::Statement) -> Option<&'static str> {
    use ast::Statement as S;
    match s {
        S::LISTEN { .. } => Some("LISTEN"),
        S::NOTIFY { .. } => Some("NOTIFY"),
        S::Analyze(_) => Some("ANALYZE"),
        S::Vacuum(_) => Some("VACUUM"),
        S::Lock(l) => {
            use ast::LockTableMode as M;
            let weak = matches!(l.lock_mode, Some(M::AccessShare | M::RowShare | M::RowExclusive));
            (!weak).then_some("LOCK TABLE")
        }
        _ => None,
    }
}

/// `s` with each parameter `$n` replaced by its value, as a constant of
/// the parameter's type: how a utility statement that holds a query
/// (`CREATE TABLE ... AS`) runs with the values a client bound.
fn with_parameters(s: &ast::Statement, params: &[Value], types: &[DataType]) -> Result<ast::Statement> {
    let mut s = s.clone();
    let mut failed = None;
    let _ = ast::visit_expressions_mut(&mut s, |e| {
        if let ast::Expr::Value(v) = e {
            if let ast::Value::Placeholder(p) = &v.value {
                let n = p.trim_start_matches('$').parse::<usize>().ok().and_then(|n| n.checked_sub(1));
                let (Some(value), Some(ty)) = (n.and_then(|n| params.get(n)), n.and_then(|n| types.get(n)))
                else {
                    failed = Some(Error::other("42P02", format!("there is no parameter {p}")));
                    return std::ops::ControlFlow::Break(());
                };
                let text = match value {
                    Value::Null => "NULL".to_string(),
                    v => crate::names::quote_literal(&v.to_string()),
                };
                match crate::planner::dml::parse_expr(&format!("CAST({text} AS {})", ty.sql_name())) {
                    Ok(x) => *e = x,
                    Err(err) => {
                        failed = Some(err);
                        return std::ops::ControlFlow::Break(());
                    }
                }
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_fails_only_its_statement_and_rolls_back_at_once() {
        let db = Database::open(centum_engine::Database::open(Default::default()).unwrap()).unwrap();
        let mut a = db.session();
        a.execute("CREATE TABLE t (id int PRIMARY KEY, v int)").unwrap();
        a.execute("INSERT INTO t VALUES (1, 0)").unwrap();
        a.execute("BEGIN").unwrap();
        a.execute("UPDATE t SET v = 1 WHERE id = 1").unwrap();
        let e = a
            .guarded(|s| -> Result<()> {
                s.execute_unguarded("UPDATE t SET v = 2 WHERE id = 1")?;
                panic!("a bug in the middle of a statement")
            })
            .unwrap_err();
        assert_eq!(e.sqlstate(), "XX000");
        assert!(e.to_string().contains("a bug in the middle"), "{e}");
        // The block stays failed until ROLLBACK, as after any error...
        assert_eq!(a.status(), TxnStatus::Failed);
        assert_eq!(a.execute("SELECT 1").unwrap_err().sqlstate(), "25P02");
        // ...but the engine transaction is gone already: another session
        // takes the row without waiting for this one's ROLLBACK.
        let other = db.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut b = other.session();
            tx.send(b.execute("UPDATE t SET v = 5 WHERE id = 1").map(|_| ()).map_err(|e| e.to_string()))
                .unwrap();
        });
        let done = rx.recv_timeout(Duration::from_secs(20)).expect("the row was left held");
        assert_eq!(done, Ok(()));
        a.execute("ROLLBACK").unwrap();
        let r = a.execute("SELECT v FROM t").unwrap();
        assert_eq!(r[0].rows, vec![vec![Value::Integer(5)]]);
    }
}
