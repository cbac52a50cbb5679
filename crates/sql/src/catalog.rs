//! The SQL catalog: what SQL knows about tables beyond what the engine
//! stores, plus sequences and schemas.
//!
//! The engine keeps columns, types, NOT NULL and indexes. Everything else a
//! schema says (column defaults, generated and identity columns, CHECK and
//! FOREIGN KEY constraints, which index is the primary key) is encoded by
//! this module into the table definition's `extra` bytes, which the engine
//! writes durably with the definition on every DDL. Sequences and schemas
//! live in the database-wide `extra` bytes the same way.
//!
//! Table names: a table in schema `public` has its bare name in the
//! engine; a table in any other schema is named `schema.table`.
//!
//! Every change bumps [`Catalog::version`], which prepared statements
//! compare to decide whether to plan again.
//!
//! On a standby ([`Catalog::set_standby`]) the engine's catalog changes
//! underneath: it applies a primary's redo records, schema changes and
//! sequence reservations included. [`Catalog::reload`] reads the SQL facts
//! again from the engine's bytes; a standby's catalog also does so by
//! itself on its next use once the engine's schema epoch has moved.

use crate::error::{Error, Result};
use crate::privileges::{AclItem, ObjectKind, ObjectPrivs};
use centum_engine::{Database, Table, TxnId};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, RwLock};

/// What ON DELETE does to referencing rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefAction {
    /// Refuse the delete (NO ACTION / RESTRICT).
    Restrict,
    /// Delete the referencing rows.
    Cascade,
    /// Set the referencing columns to NULL.
    SetNull,
    /// Set the referencing columns to their defaults.
    SetDefault,
}

/// A FOREIGN KEY constraint on the referencing table.
#[derive(Clone, Debug, PartialEq)]
pub struct ForeignKey {
    /// Constraint name.
    pub name: String,
    /// Referencing columns (positions in this table).
    pub columns: Vec<usize>,
    /// Referenced table (engine name).
    pub ref_table: String,
    /// Referenced columns (names; a unique index covers them).
    pub ref_columns: Vec<String>,
    /// ON DELETE.
    pub on_delete: RefAction,
    /// ON UPDATE.
    pub on_update: RefAction,
}

/// A CHECK constraint.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// Constraint name.
    pub name: String,
    /// The condition as SQL text over the table's columns.
    pub expr: String,
}

/// SQL-level facts about one column.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ColumnMeta {
    /// DEFAULT expression as SQL text.
    pub default: Option<String>,
    /// GENERATED ALWAYS AS (expr) STORED, as SQL text.
    pub generated: Option<String>,
    /// Identity (GENERATED ... AS IDENTITY): whether ALWAYS (refuses
    /// explicit values without OVERRIDING SYSTEM VALUE).
    pub identity_always: Option<bool>,
    /// COMMENT ON COLUMN.
    pub comment: Option<String>,
}

/// An output column: its name and type (`None`: unknown, e.g. NULL).
#[derive(Clone, Debug, PartialEq)]
pub struct OutputColumn {
    /// The name a client sees.
    pub name: String,
    /// Its type.
    pub ty: Option<centum_types::DataType>,
}

impl OutputColumn {
    /// The columns of a table, as a query sees them.
    pub fn of_table(columns: &[centum_engine::Column]) -> Vec<OutputColumn> {
        columns.iter().map(|c| OutputColumn { name: c.name.clone(), ty: Some(c.ty.clone()) }).collect()
    }
}

/// SQL-level facts about a table, kept in its `extra` bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableMeta {
    /// One entry per column.
    pub columns: Vec<ColumnMeta>,
    /// CHECK constraints.
    pub checks: Vec<Check>,
    /// FOREIGN KEY constraints of this table.
    pub foreign_keys: Vec<ForeignKey>,
    /// The primary key's index name.
    pub primary_key: Option<String>,
    /// Names of UNIQUE constraints (their index names).
    pub unique: Vec<String>,
    /// Columns declared NOT NULL after creation (by ALTER TABLE ... ADD
    /// PRIMARY KEY), which the engine's definition cannot change in place.
    pub not_null: Vec<usize>,
    /// COMMENT ON TABLE (or MATERIALIZED VIEW).
    pub comment: Option<String>,
    /// COMMENT ON INDEX, by the index's engine name.
    pub index_comments: BTreeMap<String, String>,
    /// The table's owner and ACL (see `privileges.rs`).
    pub privs: ObjectPrivs,
    /// `WITH (memory_limit = ...)`: bytes the table's versions and indexes
    /// may hold (see `Table::set_memory_limit`).
    pub memory_limit: Option<u64>,
    /// Triggers on the table, in creation order.
    pub triggers: Vec<TriggerMeta>,
    /// Indexes on expressions or with a predicate, by engine index name
    /// (see [`IndexShape`]).
    pub index_shapes: BTreeMap<String, IndexShape>,
}

/// What an index on expressions, or a partial index, was created over.
///
/// The engine indexes stored columns only, so each such key is kept in a
/// *hidden column*: a stored generated column whose name begins with a
/// NUL character (which no SQL identifier can hold, so no statement can
/// name it) and which `*`, the catalogs, COPY, INSERT's default column
/// list and the change feed leave out. Its expression is the key; for a
/// partial index every key is `CASE WHEN predicate THEN key END`, NULL
/// outside the predicate, so that rows outside never conflict in a
/// unique index. The planner reads a query's use of a key expression as
/// the hidden column (see `planner::access`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IndexShape {
    /// Per key, its SQL text as written: a column's name or an expression.
    pub keys: Vec<String>,
    /// The WHERE predicate's SQL text.
    pub predicate: Option<String>,
}

/// Whether a column is a hidden index-key column (see [`IndexShape`]).
pub fn is_hidden_column(name: &str) -> bool {
    name.starts_with('\0')
}

/// A trigger as the table's facts keep it: its definition as canonical
/// CREATE TRIGGER text (read by the `triggers` module), and whether it
/// fires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriggerMeta {
    /// The trigger's name, unique per table.
    pub name: String,
    /// `false` after ALTER TABLE ... DISABLE TRIGGER.
    pub enabled: bool,
    /// The CREATE TRIGGER text.
    pub source: String,
}

/// A table as the planner sees it.
#[derive(Debug)]
pub struct TableInfo {
    /// The engine table.
    pub table: Arc<Table>,
    /// SQL-level facts.
    pub meta: TableMeta,
    /// Foreign keys of other tables that reference this one:
    /// (referencing table, constraint).
    pub referenced_by: Vec<(String, ForeignKey)>,
}

/// A sequence's definition and durable high-water mark.
#[derive(Clone, Debug, PartialEq)]
pub struct SequenceDef {
    /// Increment (non-zero).
    pub increment: i64,
    /// Smallest value.
    pub min: i64,
    /// Largest value.
    pub max: i64,
    /// First value.
    pub start: i64,
    /// Wrap around at the end.
    pub cycle: bool,
    /// Values up to here may have been handed out before a crash: after a
    /// restart the sequence continues past it.
    pub reserved: Option<i64>,
}

#[derive(Clone)]
struct SeqState {
    def: SequenceDef,
    /// The last value handed out (`None`: never called).
    last: Option<i64>,
}

/// Values a sequence reserves durably at a time.
const SEQ_RESERVE: i64 = 1024;

/// Database-wide SQL objects, kept in the database's `extra` bytes.
#[derive(Clone, Default)]
struct Globals {
    schemas: Vec<String>,
    sequences: BTreeMap<String, SeqState>,
    roles: Vec<Role>,
    /// Composite types.
    types: Vec<TypeEntry>,
    /// Functions and procedures: name and CREATE text.
    routines: Vec<(String, String)>,
    /// Views and materialized views.
    views: Vec<ViewDef>,
    /// Owners and ACLs of views, sequences, schemas and routines that are
    /// not all defaults (a table's are in its meta).
    privs: BTreeMap<(ObjectKind, String), ObjectPrivs>,
    /// COMMENT ON VIEW, SEQUENCE, SCHEMA, FUNCTION and PROCEDURE (a
    /// table's comments are in its meta).
    comments: BTreeMap<(ObjectKind, String), String>,
    /// Enum types.
    enums: Vec<EnumEntry>,
    /// The next OID an enum type or label takes (0: none taken yet, the
    /// first is [`FIRST_ENUM_OID`]).
    next_type_oid: u32,
    /// Publications.
    publications: Vec<PublicationDef>,
}

/// A publication: the tables whose changes a `pgoutput` stream that names
/// it carries, and which kinds of change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicationDef {
    pub name: String,
    /// FOR ALL TABLES: every SCHEMA_AND_DATA table, now and later.
    pub all_tables: bool,
    /// Engine names of the tables it was given (FOR TABLE, ADD TABLE), in
    /// the order they were added; a dropped table leaves the list.
    pub tables: Vec<String>,
    /// [`PUBLISH_INSERT`], [`PUBLISH_UPDATE`], [`PUBLISH_DELETE`] and
    /// [`PUBLISH_TRUNCATE`] bits.
    pub publish: u8,
    /// The owning role.
    pub owner: String,
}

/// The kinds of change a publication carries (`WITH (publish = ...)`).
pub const PUBLISH_INSERT: u8 = 1;
pub const PUBLISH_UPDATE: u8 = 2;
pub const PUBLISH_DELETE: u8 = 4;
pub const PUBLISH_TRUNCATE: u8 = 8;

impl PublicationDef {
    /// Whether it carries changes of table `name` (engine name).
    pub fn includes(&self, name: &str) -> bool {
        self.all_tables || self.tables.iter().any(|t| t == name)
    }
}

/// The first OID of an enum or composite type or an enum label: above
/// every derived OID (see `system::snapshot`), below 2^31.
pub const FIRST_ENUM_OID: u32 = (1 << 30) + (1 << 29);

/// Takes `n` consecutive type OIDs from the counter; the first of them.
fn take_type_oids(next: &mut u32, n: u32) -> Result<u32> {
    let oid = (*next).max(FIRST_ENUM_OID);
    let end = oid.checked_add(n).filter(|&e| e <= i32::MAX as u32).ok_or_else(oids_exhausted)?;
    *next = end;
    Ok(oid)
}

/// An enum type as the catalog keeps it. Its OIDs are stored, not derived:
/// table definitions and stored values name the type by its OID.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumEntry {
    /// Engine name (`schema.name` outside `public`).
    pub name: String,
    /// The type's OID; its array type's is the next one.
    pub oid: u32,
    /// The labels in sort order, each with its pg_enum OID.
    pub labels: Vec<(u32, centum_types::EnumLabel)>,
}

impl EnumEntry {
    /// The type as columns and expressions carry it, with its labels.
    pub fn data_type(&self) -> centum_types::EnumType {
        centum_types::EnumType::new(centum_types::enums::EnumDef {
            oid: self.oid,
            name: display_name(&self.name),
            labels: self.labels.iter().map(|(_, l)| l.clone()).collect(),
        })
    }
}

/// A composite type (CREATE TYPE name AS (...)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeEntry {
    /// Engine name (`schema.name` outside `public`).
    pub name: String,
    /// Its CREATE TYPE text.
    pub source: String,
    /// The type's OID; its array type's is the next one, and the OID of
    /// the relation PostgreSQL pairs with it (pg_class, relkind `c`) the
    /// one after.
    pub oid: u32,
}

/// A view or materialized view. A view's rows are its query's, bound
/// afresh by every statement that reads it (so it sees the tables as they
/// are now); a materialized view is also an engine table of the same name
/// that holds the query's rows as of its last refresh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewDef {
    /// Engine name (`schema.name` outside `public`).
    pub name: String,
    /// The query, as SQL text.
    pub query: String,
    /// Column names given in CREATE VIEW (the first ones; the rest keep
    /// the query's names).
    pub columns: Vec<String>,
    /// The search path the query's names are looked up through: the
    /// creating session's.
    pub search_path: Vec<String>,
    /// Engine names of the tables and views the query reads; they cannot
    /// be dropped while the view exists (or are dropped with CASCADE).
    pub depends_on: Vec<String>,
    /// A materialized view (its rows are in the table of its name).
    pub materialized: bool,
    /// A materialized view that holds rows (created without WITH NO
    /// DATA, or refreshed since); reading one that does not fails.
    pub populated: bool,
    /// WITH CHECK OPTION: `local` or `cascaded`, or empty.
    pub check_option: String,
    /// Triggers on the view (INSTEAD OF per row, BEFORE and AFTER per
    /// statement), in creation order; always enabled, as a view's
    /// triggers cannot be disabled.
    pub triggers: Vec<TriggerMeta>,
}

/// The globals as the catalog holds them: live, and while an open
/// transaction has changed them without committing, also as committed
/// (what other sessions see and what the log gets meanwhile). The engine's
/// schema claim says when that transaction has ended; the next access
/// then settles them from the engine's bytes (see [`Catalog::settle`]).
#[derive(Default)]
struct GlobalsCell {
    live: Globals,
    pending: Option<(TxnId, Globals)>,
}

impl std::ops::Deref for GlobalsCell {
    type Target = Globals;
    fn deref(&self) -> &Globals {
        &self.live
    }
}

impl std::ops::DerefMut for GlobalsCell {
    fn deref_mut(&mut self) -> &mut Globals {
        &mut self.live
    }
}

impl GlobalsCell {
    /// What the calling thread sees: the live globals for the transaction
    /// that changed them, the committed ones for everyone else.
    fn view(&self) -> &Globals {
        match &self.pending {
            Some((owner, committed)) if centum_engine::ddl_txn() != Some(*owner) => committed,
            _ => &self.live,
        }
    }

    /// The sequence `name` as the calling thread sees it.
    fn sequence_mut(&mut self, name: &str) -> Option<&mut SeqState> {
        match &mut self.pending {
            Some((owner, committed)) if centum_engine::ddl_txn() != Some(*owner) => {
                committed.sequences.get_mut(name)
            }
            _ => self.live.sequences.get_mut(name),
        }
    }

    /// Copies sequence `name`'s position to the other copy of the globals
    /// (sequences are not transactional: nextval is never undone).
    fn mirror_sequence(&mut self, name: &str) {
        let Some((owner, committed)) = &mut self.pending else { return };
        let (from, to) = if centum_engine::ddl_txn() != Some(*owner) {
            (&*committed, &mut self.live)
        } else {
            (&self.live, committed)
        };
        if let (Some(f), Some(t)) = (from.sequences.get(name), to.sequences.get_mut(name)) {
            *t = f.clone();
        }
    }
}

/// The globals at a savepoint ([`Catalog::globals_mark`]).
pub(crate) struct GlobalsMark(Option<Globals>);

/// A role: who may log in, and how its password is checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Role {
    /// The role's name.
    pub name: String,
    /// Bypasses every check (the only privilege Centum distinguishes).
    pub superuser: bool,
    /// May log in.
    pub login: bool,
    /// The SCRAM-SHA-256 verifier (`SCRAM-SHA-256$iter:salt$stored:server`,
    /// PostgreSQL's format); `None`: no password, password log-ins fail.
    pub verifier: Option<String>,
}

/// The SQL catalog of one database.
pub struct Catalog {
    db: Database,
    tables: RwLock<HashMap<String, Arc<TableInfo>>>,
    globals: Mutex<GlobalsCell>,
    version: AtomicU64,
    /// The schema epoch the table cache belongs to.
    cached_epoch: AtomicU64,
    /// Compiled functions and procedures, by name.
    /// The server's sessions (`pg_stat_activity`).
    pub(crate) activity: Arc<crate::activity::Activity>,
    /// Set once any view exists (never cleared): statements planned while
    /// it is clear skip looking for views without taking the globals' lock.
    views_seen: AtomicBool,
    /// The database is a standby: every transaction is read only, and the
    /// globals follow the engine's bytes (see [`Catalog::reload`]).
    standby: AtomicBool,
    /// The engine's schema epoch when the globals were last read from its
    /// bytes.
    globals_epoch: AtomicU64,
}

impl Catalog {
    /// Loads the SQL catalog of `db`.
    pub fn open(db: Database) -> Result<Catalog> {
        let epoch = db.schema_epoch();
        let globals = decode_globals(&db.catalog_extra())?;
        let activity = Arc::new(crate::activity::Activity::new(db.clone()));
        let views_seen = AtomicBool::new(!globals.views.is_empty());
        Ok(Catalog {
            db,
            tables: RwLock::new(HashMap::new()),
            globals: Mutex::new(GlobalsCell { live: globals, pending: None }),
            version: AtomicU64::new(1),
            cached_epoch: AtomicU64::new(0),
            activity,
            views_seen,
            standby: AtomicBool::new(false),
            globals_epoch: AtomicU64::new(epoch),
        })
    }

    /// Whether the database is a standby.
    pub fn is_standby(&self) -> bool {
        self.standby.load(SeqCst)
    }

    /// Makes the database a standby (`on`) or a primary. Every session sees
    /// it at once: on a standby each statement runs read only.
    pub fn set_standby(&self, on: bool) {
        self.standby.store(on, SeqCst);
    }

    /// Reads the SQL catalog again from the engine, whose catalog changed
    /// underneath (a standby applied a primary's schema changes): the
    /// globals decoded afresh, cached table facts dropped, and the version
    /// bumped, so that plans and compiled routines are made again.
    /// Sequences take the positions the engine's bytes hold (the writer's
    /// reservation marks), so that one promoted later never hands out a
    /// value its old primary may have.
    pub fn reload(&self) -> Result<()> {
        {
            let mut g = self.globals.lock().unwrap_or_else(|e| e.into_inner());
            self.load_globals(&mut g)?;
        }
        self.invalidate();
        Ok(())
    }

    /// Replaces the globals with what the engine's bytes hold now,
    /// forgetting an uncommitted change of them.
    fn load_globals(&self, g: &mut GlobalsCell) -> Result<()> {
        // Read before the bytes: a change after them moves it again.
        let epoch = self.db.schema_epoch();
        let now = decode_globals(&self.db.catalog_extra())?;
        if !now.views.is_empty() {
            self.views_seen.store(true, SeqCst);
        }
        g.live = now;
        g.pending = None;
        self.globals_epoch.store(epoch, SeqCst);
        Ok(())
    }

    /// The engine database.
    pub fn db(&self) -> &Database {
        &self.db
    }

    /// Changes with every DDL, and when a transaction that changed the
    /// schema ends; plans made at another version are stale. The
    /// transaction holding uncommitted schema changes sees versions of its
    /// own (odd ones), so that no plan or compiled routine made on its
    /// changes is used by anyone else (the compiled routines are shared).
    pub fn version(&self) -> u64 {
        let v = self.version.load(SeqCst) + self.db.schema_epoch();
        let mine = self.db.claim_owner().is_some_and(|o| Some(o) == centum_engine::ddl_txn());
        v * 2 + u64::from(mine)
    }

    /// Forgets cached table facts after a DDL.
    pub fn invalidate(&self) {
        self.tables.write().unwrap_or_else(|e| e.into_inner()).clear();
        self.version.fetch_add(1, SeqCst);
    }

    /// Whether a schema exists (`public`, `pg_catalog` and `centum` always
    /// do).
    pub fn has_schema(&self, name: &str) -> bool {
        name == "public"
            || name == "pg_catalog"
            || name == "centum"
            || self.lock_globals().view().schemas.iter().any(|s| s == name)
    }

    /// Creates a schema.
    pub fn create_schema(&self, name: &str, if_not_exists: bool) -> Result<()> {
        self.changing(|| {
            let mut g = self.lock_globals();
            if name == "public"
                || name == "pg_catalog"
                || name == "centum"
                || g.schemas.iter().any(|s| s == name)
            {
                if if_not_exists {
                    return Ok(());
                }
                return Err(Error::Duplicate {
                    code: "42P06",
                    message: format!("schema \"{name}\" already exists"),
                });
            }
            g.schemas.push(name.to_string());
            self.save_globals(&mut g, |g| {
                g.schemas.pop();
            })
        })
    }

    /// Drops an empty schema.
    pub fn drop_schema(&self, name: &str, if_exists: bool) -> Result<()> {
        if matches!(name, "centum" | "pg_catalog" | "information_schema") {
            return Err(Error::other(
                "2BP01",
                format!("cannot drop schema {name} because it is required by the database system"),
            ));
        }
        self.changing(|| {
            let prefix = format!("{name}.");
            if self.db.table_names().iter().any(|t| t.starts_with(&prefix)) {
                return Err(Error::other(
                    "2BP01",
                    format!("cannot drop schema {name} because other objects depend on it"),
                ));
            }
            let mut g = self.lock_globals();
            let Some(pos) = g.schemas.iter().position(|s| s == name) else {
                if if_exists {
                    return Ok(());
                }
                return Err(Error::UndefinedObject(format!("schema \"{name}\" does not exist")));
            };
            let removed = g.schemas.remove(pos);
            let facts = forget(&mut g, ObjectKind::Schema, name);
            self.save_globals(&mut g, |g| {
                g.schemas.insert(pos, removed);
                restore(g, ObjectKind::Schema, name, facts);
            })
        })
    }

    /// The table named `name` (engine name).
    ///
    /// A table that another open transaction has dropped or changed gives
    /// [`Error::Claimed`] until that transaction ends (the caller waits and
    /// asks again, see `centum_engine::Database::wait_claim`); one it
    /// created does not exist yet (42P01).
    pub fn table(&self, name: &str) -> Result<Arc<TableInfo>> {
        let me = centum_engine::ddl_txn();
        if let Some(owner) = self.db.claimed(name, me) {
            // A table another transaction created and has not committed
            // does not exist yet; one it changed is waited for.
            if self.db.created_by_other(name, me) {
                return Err(Error::UndefinedTable(display_name(name)));
            }
            return Err(Error::Claimed { owner, relation: display_name(name) });
        }
        let epoch = self.db.schema_epoch();
        if self.cached_epoch.load(SeqCst) != epoch {
            // What a transaction that has ended cached may be undone.
            self.tables.write().unwrap_or_else(|e| e.into_inner()).clear();
            self.cached_epoch.store(epoch, SeqCst);
        }
        if let Some(t) = self.tables.read().unwrap_or_else(|e| e.into_inner()).get(name) {
            return Ok(t.clone());
        }
        let table = self.db.table(name).map_err(|_| Error::UndefinedTable(display_name(name)))?;
        let meta = decode_table_meta(&table.def().extra, table.columns().len())?;
        // The engine enforces the limit the definition carries; reading the
        // definition (after any change to it, and after a restart) sets it.
        table.set_memory_limit(meta.memory_limit.map(|l| l as usize));
        // In the order the referencing tables were made, as PostgreSQL
        // checks foreign keys in the order they were made: a delete that
        // several refuse names the oldest.
        let mut referencing = Vec::new();
        for other in self.db.table_names() {
            let Ok(t) = self.db.table(&other) else { continue };
            referencing.push((t.id(), other, t));
        }
        referencing.sort_by_key(|(id, _, _)| *id);
        let mut referenced_by = Vec::new();
        for (_, other, t) in referencing {
            let m = decode_table_meta(&t.def().extra, t.columns().len())?;
            for fk in m.foreign_keys {
                if fk.ref_table == name {
                    referenced_by.push((other.clone(), fk));
                }
            }
        }
        let info = Arc::new(TableInfo { table, meta, referenced_by });
        self.tables.write().unwrap_or_else(|e| e.into_inner()).insert(name.to_string(), info.clone());
        Ok(info)
    }

    /// Stores `meta` as table `name`'s SQL facts.
    pub fn set_meta(&self, name: &str, meta: &TableMeta) -> Result<()> {
        self.db.set_table_extra(name, encode_table_meta(meta))?;
        self.invalidate();
        Ok(())
    }

    fn lock_globals(&self) -> std::sync::MutexGuard<'_, GlobalsCell> {
        let mut g = self.globals.lock().unwrap_or_else(|e| e.into_inner());
        // A standby's engine changes its catalog as it applies records: its
        // schema epoch says when.
        if self.is_standby() && self.db.schema_epoch() != self.globals_epoch.load(SeqCst) {
            if let Err(e) = self.load_globals(&mut g) {
                self.globals_epoch.store(self.db.schema_epoch(), SeqCst);
                tracing::error!(error = %e, "the replicated SQL catalog cannot be read; keeping the one before");
            }
            return g;
        }
        if let Some((owner, _)) = &g.pending {
            if self.db.claim_owner() != Some(*owner) {
                self.settle(&mut g);
            }
        }
        g
    }

    /// After the transaction that changed the globals has ended: the
    /// engine's bytes hold its changes if it committed and not if it
    /// aborted. Sequences keep the positions held here.
    fn settle(&self, g: &mut GlobalsCell) {
        g.pending = None;
        let Ok(mut now) = decode_globals(&self.db.catalog_extra()) else { return };
        if !now.views.is_empty() {
            self.views_seen.store(true, SeqCst);
        }
        for (name, st) in now.sequences.iter_mut() {
            if let Some(held) = g.live.sequences.get(name) {
                st.last = held.last;
            }
        }
        g.live = now;
    }

    /// The globals as transaction `me` sees them now: what a savepoint
    /// keeps, to go back to with [`Catalog::globals_rollback`].
    pub(crate) fn globals_mark(&self, me: TxnId) -> GlobalsMark {
        // Only the holder of the schema claim can have changed them (and
        // the globals' lock is shared by every session).
        if self.db.claim_owner() != Some(me) {
            return GlobalsMark(None);
        }
        let g = self.lock_globals();
        GlobalsMark(g.pending.as_ref().filter(|(owner, _)| *owner == me).map(|_| g.live.clone()))
    }

    /// Takes back transaction `me`'s changes of the globals since `mark`
    /// (ROLLBACK TO SAVEPOINT). Sequences keep their positions.
    pub(crate) fn globals_rollback(&self, me: TxnId, mark: &GlobalsMark) -> Result<()> {
        if self.db.claim_owner() != Some(me) {
            return Ok(());
        }
        let mut g = self.lock_globals();
        let Some((owner, committed)) = &g.pending else { return Ok(()) };
        if *owner != me {
            return Ok(());
        }
        let mut back = mark.0.clone().unwrap_or_else(|| committed.clone());
        for (name, st) in back.sequences.iter_mut() {
            if let Some(now) = g.live.sequences.get(name) {
                *st = now.clone();
            }
        }
        g.live = back;
        let _act = centum_engine::act_for(Some(me));
        self.db.set_catalog_extra(encode_globals(&g.live))?;
        self.version.fetch_add(1, SeqCst);
        Ok(())
    }

    /// Runs `change`, a change of definitions in the globals, once no other
    /// transaction holds the schema claim (bounded by the statement's
    /// limits); again if one took it meanwhile. The wait comes before the
    /// globals' lock, which the claim's holder may need (for nextval).
    fn changing<T>(&self, mut change: impl FnMut() -> Result<T>) -> Result<T> {
        loop {
            self.db.enter_schema_change()?;
            match change() {
                Err(e) if e.claimed_by().is_some() => continue,
                r => return r,
            }
        }
    }

    /// Writes the globals durably after a change of definitions, which
    /// makes plans stale; on failure runs `undo` on them. Inside a
    /// transaction the change is that transaction's (see [`GlobalsCell`]).
    /// Fails with [`Error::Claimed`], changing nothing, if another
    /// transaction took the schema claim (see [`Catalog::changing`]).
    fn save_globals(&self, g: &mut GlobalsCell, undo: impl FnOnce(&mut Globals)) -> Result<()> {
        if !g.live.views.is_empty() {
            self.views_seen.store(true, SeqCst);
        }
        let mut before = g.live.clone();
        undo(&mut before);
        match self.db.try_set_catalog_extra(encode_globals(&g.live)) {
            Ok(None) => {}
            Ok(Some(owner)) => {
                g.live = before;
                return Err(Error::Claimed { owner, relation: String::new() });
            }
            Err(e) => {
                g.live = before;
                return Err(e.into());
            }
        }
        if let (Some(me), None) = (centum_engine::ddl_txn(), &g.pending) {
            g.pending = Some((me, before));
        }
        self.version.fetch_add(1, SeqCst);
        Ok(())
    }

    /// Writes the globals durably without touching any definition (sequence
    /// `name`'s reservation mark): plans stay valid, and no schema claim is
    /// waited for. On failure runs `undo` on the copy it changed.
    fn write_globals(&self, g: &mut GlobalsCell, name: &str, undo: impl FnOnce(&mut SeqState)) -> Result<()> {
        g.mirror_sequence(name);
        let live = encode_globals(&g.live);
        let committed = match &g.pending {
            Some((_, c)) => encode_globals(c),
            None => live.clone(),
        };
        self.db.write_catalog_extra(live, committed).map_err(|e| {
            if let Some(st) = g.sequence_mut(name) {
                undo(st);
            }
            g.mirror_sequence(name);
            e.into()
        })
    }

    /// Creates a sequence.
    pub fn create_sequence(&self, name: &str, def: SequenceDef, if_not_exists: bool) -> Result<()> {
        self.changing(|| {
            let mut g = self.lock_globals();
            if g.sequences.contains_key(name) || self.db.table(name).is_ok() {
                if if_not_exists {
                    return Ok(());
                }
                return Err(Error::Duplicate {
                    code: "42P07",
                    message: format!("relation \"{}\" already exists", display_name(name)),
                });
            }
            g.sequences.insert(name.to_string(), SeqState { def: def.clone(), last: None });
            let key = name.to_string();
            self.save_globals(&mut g, |g| {
                g.sequences.remove(&key);
            })
        })
    }

    /// Drops a sequence.
    pub fn drop_sequence(&self, name: &str, if_exists: bool) -> Result<()> {
        self.changing(|| {
            let mut g = self.lock_globals();
            let Some(state) = g.sequences.remove(name) else {
                if if_exists {
                    return Ok(());
                }
                return Err(Error::UndefinedTable(display_name(name)));
            };
            let key = name.to_string();
            let facts = forget(&mut g, ObjectKind::Sequence, &key);
            self.save_globals(&mut g, |g| {
                restore(g, ObjectKind::Sequence, &key, facts);
                g.sequences.insert(key, state);
            })
        })
    }

    /// Whether a sequence exists.
    pub fn has_sequence(&self, name: &str) -> bool {
        self.lock_globals().view().sequences.contains_key(name)
    }

    /// The next value of sequence `name`. Values are reserved durably
    /// 1,024 at a time, so a restart skips at most that many.
    pub fn nextval(&self, name: &str) -> Result<i64> {
        let mut g = self.lock_globals();
        let st = g.sequence_mut(name).ok_or_else(|| Error::UndefinedTable(display_name(name)))?;
        let d = &st.def;
        let next = match st.last {
            None => match d.reserved {
                // After a restart, continue past what may have been used.
                Some(r) => step(r, d, name)?,
                None => d.start,
            },
            Some(v) => step(v, d, name)?,
        };
        let prev_last = st.last;
        st.last = Some(next);
        let needs_reserve = match st.def.reserved {
            None => true,
            Some(r) => {
                if st.def.increment > 0 {
                    next > r || next < prev_last.unwrap_or(next)
                } else {
                    next < r || next > prev_last.unwrap_or(next)
                }
            }
        };
        if needs_reserve {
            let d = &st.def;
            let r = next.saturating_add(d.increment.saturating_mul(SEQ_RESERVE - 1));
            let r = if d.increment > 0 { r.min(d.max) } else { r.max(d.min) };
            let old = st.def.reserved;
            st.def.reserved = Some(r);
            self.write_globals(&mut g, name, |st| {
                st.def.reserved = old;
                st.last = prev_last;
            })?;
        } else {
            g.mirror_sequence(name);
        }
        Ok(next)
    }

    /// Sets a sequence's last value (`setval`): the next `nextval` returns
    /// the value after it when `called`, else `value` itself.
    pub fn setval(&self, name: &str, value: i64, called: bool) -> Result<i64> {
        let mut g = self.lock_globals();
        let st = g.sequence_mut(name).ok_or_else(|| Error::UndefinedTable(display_name(name)))?;
        if value < st.def.min || value > st.def.max {
            return Err(Error::other(
                "22003",
                format!(
                    "setval: value {value} is out of bounds for sequence \"{}\" ({}..{})",
                    display_name(name),
                    st.def.min,
                    st.def.max
                ),
            ));
        }
        let old = (st.last, st.def.reserved, st.def.start);
        st.last = if called { Some(value) } else { None };
        // A durable mark that makes a restart continue after `value`.
        st.def.reserved = Some(if called { value } else { value - st.def.increment });
        if !called {
            st.def.start = value;
        }
        self.write_globals(&mut g, name, |st| (st.last, st.def.reserved, st.def.start) = old)?;
        Ok(value)
    }

    /// A sequence as `SELECT * FROM seq` shows it: its last value and
    /// whether `nextval` has handed it out (after a restart, the last value
    /// that may have been handed out before).
    pub fn sequence_state(&self, name: &str) -> Result<(i64, bool)> {
        let g = self.lock_globals();
        let st = g.view().sequences.get(name).ok_or_else(|| Error::UndefinedTable(display_name(name)))?;
        Ok(match (st.last, st.def.reserved) {
            (Some(v), _) | (None, Some(v)) => (v, true),
            (None, None) => (st.def.start, false),
        })
    }

    /// Names of every sequence.
    pub fn sequence_names(&self) -> Vec<String> {
        self.lock_globals().view().sequences.keys().cloned().collect()
    }

    /// Every role, in the order they were created.
    pub fn roles(&self) -> Vec<Role> {
        self.lock_globals().view().roles.clone()
    }

    /// The role named `name`.
    pub fn role(&self, name: &str) -> Option<Role> {
        self.lock_globals().view().roles.iter().find(|r| r.name == name).cloned()
    }

    /// Creates a role (42710 if it exists).
    pub fn create_role(&self, role: Role) -> Result<()> {
        self.changing(|| {
            let mut g = self.lock_globals();
            if g.roles.iter().any(|r| r.name == role.name) {
                return Err(Error::Duplicate {
                    code: "42710",
                    message: format!("role \"{}\" already exists", role.name),
                });
            }
            g.roles.push(role.clone());
            self.save_globals(&mut g, |g| {
                g.roles.pop();
            })
        })
    }

    /// Changes role `name` with `change` (42704 if there is none).
    pub fn alter_role(&self, name: &str, change: impl Fn(&mut Role) -> Result<()>) -> Result<()> {
        self.changing(|| {
            let mut g = self.lock_globals();
            let Some(pos) = g.roles.iter().position(|r| r.name == name) else {
                return Err(Error::UndefinedObject(format!("role \"{name}\" does not exist")));
            };
            let old = g.roles[pos].clone();
            change(&mut g.roles[pos])?;
            self.save_globals(&mut g, |g| g.roles[pos] = old)
        })
    }

    /// Drops role `name`; `Ok(false)` if there is none.
    pub fn drop_role(&self, name: &str) -> Result<bool> {
        self.changing(|| {
            let mut g = self.lock_globals();
            let Some(pos) = g.roles.iter().position(|r| r.name == name) else { return Ok(false) };
            let removed = g.roles.remove(pos);
            self.save_globals(&mut g, |g| g.roles.insert(pos, removed)).map(|()| true)
        })
    }
}

impl Catalog {
    /// The CREATE TYPE text of composite type `name`.
    pub fn type_source(&self, name: &str) -> Option<String> {
        self.composite_entry(name).map(|t| t.source)
    }

    /// Composite type `name` (engine name).
    pub fn composite_entry(&self, name: &str) -> Option<TypeEntry> {
        self.lock_globals().view().types.iter().find(|t| t.name == name).cloned()
    }

    /// Every composite type.
    pub fn composite_entries(&self) -> Vec<TypeEntry> {
        self.lock_globals().view().types.clone()
    }

    /// Creates composite type `name` from its CREATE TYPE text (42710 if it
    /// exists).
    pub fn create_type(&self, name: &str, source: String) -> Result<()> {
        self.changing(|| {
            let mut g = self.lock_globals();
            if self.type_taken(&g, name) {
                return Err(Error::Duplicate {
                    code: "42710",
                    message: format!("type \"{name}\" already exists"),
                });
            }
            let before = g.next_type_oid;
            let oid = take_type_oids(&mut g.next_type_oid, 3)?;
            g.types.push(TypeEntry { name: name.to_string(), source: source.clone(), oid });
            self.save_globals(&mut g, |g| {
                g.types.pop();
                g.next_type_oid = before;
            })
        })
    }

    /// Drops composite type `name`; `Ok(false)` if there is none.
    pub fn drop_type(&self, name: &str) -> Result<bool> {
        self.changing(|| {
            let mut g = self.lock_globals();
            let Some(pos) = g.types.iter().position(|t| t.name == name) else { return Ok(false) };
            let removed = g.types.remove(pos);
            self.save_globals(&mut g, |g| g.types.insert(pos, removed)).map(|()| true)
        })
    }

    /// The CREATE text of a function or procedure named `name` (the
    /// first, if the name is overloaded).
    pub fn routine_source(&self, name: &str) -> Option<String> {
        let g = self.lock_globals();
        g.view().routines.iter().find(|r| routine_name(&r.0) == name).map(|r| r.1.clone())
    }

    /// Every function and procedure named `name`, as (key, CREATE text):
    /// one per argument signature.
    pub fn routine_overloads(&self, name: &str) -> Vec<(String, String)> {
        let g = self.lock_globals();
        g.view().routines.iter().filter(|r| routine_name(&r.0) == name).cloned().collect()
    }

    /// The keys of every function and procedure named `name`.
    pub fn routine_keys(&self, name: &str) -> Vec<String> {
        let g = self.lock_globals();
        g.view().routines.iter().filter(|r| routine_name(&r.0) == name).map(|r| r.0.clone()).collect()
    }

    /// Every function and procedure, as (key, CREATE text).
    pub fn routine_entries(&self) -> Vec<(String, String)> {
        self.lock_globals().view().routines.clone()
    }

    /// The CREATE text of the routine stored under `key`.
    pub fn routine_by_key(&self, key: &str) -> Option<String> {
        self.lock_globals().view().routines.iter().find(|r| r.0 == key).map(|r| r.1.clone())
    }

    /// Names of every function and procedure, each once.
    pub fn routine_names(&self) -> Vec<String> {
        let mut names: Vec<String> =
            self.lock_globals().view().routines.iter().map(|r| routine_name(&r.0).to_string()).collect();
        names.sort();
        names.dedup();
        names
    }

    /// Stores the CREATE text of the routine under `key` (see
    /// [`routine_name`]), replacing an existing one only if `replace`
    /// (42723 otherwise). Returns the text it replaced.
    pub fn put_routine(&self, key: &str, source: String, replace: bool) -> Result<Option<String>> {
        self.changing(|| {
            let mut g = self.lock_globals();
            match g.routines.iter().position(|r| r.0 == key) {
                Some(_) if !replace => Err(Error::Duplicate {
                    code: "42723",
                    message: format!(
                        "function \"{}\" already exists with same argument types",
                        routine_name(key)
                    ),
                }),
                Some(pos) => {
                    let old = std::mem::replace(&mut g.routines[pos].1, source.clone());
                    let keep = old.clone();
                    self.save_globals(&mut g, |g| g.routines[pos].1 = keep).map(|()| Some(old))
                }
                None => {
                    g.routines.push((key.to_string(), source.clone()));
                    self.save_globals(&mut g, |g| {
                        g.routines.pop();
                    })
                    .map(|()| None)
                }
            }
        })
    }

    /// Drops the routine stored under `key`; `Ok(false)` if there is
    /// none. Its name's privileges and comment go with its last overload.
    pub fn drop_routine(&self, key: &str) -> Result<bool> {
        self.changing(|| {
            let mut g = self.lock_globals();
            let Some(pos) = g.routines.iter().position(|r| r.0 == key) else { return Ok(false) };
            let removed = g.routines.remove(pos);
            let name = routine_name(key);
            let last = !g.routines.iter().any(|r| routine_name(&r.0) == name);
            let facts = if last { forget(&mut g, ObjectKind::Routine, name) } else { (None, None) };
            self.save_globals(&mut g, |g| {
                g.routines.insert(pos, removed);
                restore(g, ObjectKind::Routine, name, facts);
            })
            .map(|()| true)
        })
    }
}

impl Catalog {
    /// Enum type `name` (engine name).
    pub fn enum_type(&self, name: &str) -> Option<EnumEntry> {
        self.lock_globals().view().enums.iter().find(|e| e.name == name).cloned()
    }

    /// The enum type of OID `oid`.
    pub fn enum_by_oid(&self, oid: u32) -> Option<EnumEntry> {
        self.lock_globals().view().enums.iter().find(|e| e.oid == oid).cloned()
    }

    /// Every enum type.
    pub fn enums(&self) -> Vec<EnumEntry> {
        self.lock_globals().view().enums.clone()
    }

    /// Whether a type of this name exists: an enum or composite type, or
    /// a table (whose row type PostgreSQL names after it).
    fn type_taken(&self, g: &Globals, name: &str) -> bool {
        g.types.iter().any(|t| t.name == name)
            || g.enums.iter().any(|e| e.name == name)
            || self.db.table(name).is_ok()
    }

    /// Creates enum type `name` with `labels` in that order (42710 if a
    /// type of the name exists).
    pub fn create_enum(&self, name: &str, labels: &[String]) -> Result<()> {
        self.changing(|| {
            let mut g = self.lock_globals();
            if self.type_taken(&g, name) {
                return Err(Error::Duplicate {
                    code: "42710",
                    message: format!("type \"{}\" already exists", display_name(name)),
                });
            }
            let before = g.next_type_oid;
            // The type, then its array type, then one per label.
            let oid = take_type_oids(&mut g.next_type_oid, 2 + labels.len() as u32)?;
            let labels = centum_types::enums::initial_positions(labels)
                .into_iter()
                .enumerate()
                .map(|(i, l)| (oid + 2 + i as u32, l))
                .collect::<Vec<_>>();
            g.enums.push(EnumEntry { name: name.to_string(), oid, labels });
            self.save_globals(&mut g, |g| {
                g.enums.pop();
                g.next_type_oid = before;
            })
        })
    }

    /// Replaces the labels of enum type `name` by what `change` makes of
    /// them; `change` gets the next free OID for a new label. Returns
    /// `change`'s answer; nothing is written when it is `Ok(false)`.
    pub fn alter_enum(
        &self,
        name: &str,
        change: impl Fn(&EnumEntry, u32) -> Result<Option<Vec<(u32, centum_types::EnumLabel)>>>,
    ) -> Result<bool> {
        self.changing(|| {
            let mut g = self.lock_globals();
            let Some(pos) = g.enums.iter().position(|e| e.name == name) else {
                return Err(Error::UndefinedObject(format!(
                    "type \"{}\" does not exist",
                    display_name(name)
                )));
            };
            let next = g.next_type_oid.max(FIRST_ENUM_OID);
            let Some(labels) = change(&g.enums[pos], next)? else { return Ok(false) };
            let used = labels.iter().map(|(o, _)| *o + 1).max().unwrap_or(0).max(next);
            if used > i32::MAX as u32 {
                return Err(oids_exhausted());
            }
            let (old_labels, old_next) =
                (std::mem::replace(&mut g.enums[pos].labels, labels), g.next_type_oid);
            g.next_type_oid = used;
            self.save_globals(&mut g, |g| {
                g.enums[pos].labels = old_labels;
                g.next_type_oid = old_next;
            })
            .map(|()| true)
        })
    }

    /// Drops enum type `name`; `Ok(false)` if there is none.
    pub fn drop_enum(&self, name: &str) -> Result<bool> {
        self.changing(|| {
            let mut g = self.lock_globals();
            let Some(pos) = g.enums.iter().position(|e| e.name == name) else { return Ok(false) };
            let removed = g.enums.remove(pos);
            self.save_globals(&mut g, |g| g.enums.insert(pos, removed)).map(|()| true)
        })
    }
}

/// No OID is left for another enum type or label.
fn oids_exhausted() -> Error {
    Error::other("54000", "no more OIDs for enum types and labels")
}

impl Catalog {
    /// Every publication.
    pub fn publications(&self) -> Vec<PublicationDef> {
        self.lock_globals().view().publications.clone()
    }

    /// The kinds of change ([`PUBLISH_INSERT`] etc.) that the
    /// publications `chosen` picks publish for table `table` (engine
    /// name); 0 when none carries it.
    pub fn publish_bits(&self, table: &str, chosen: impl Fn(&PublicationDef) -> bool) -> u8 {
        let g = self.lock_globals();
        g.view()
            .publications
            .iter()
            .filter(|p| chosen(p) && p.includes(table))
            .fold(0, |bits, p| bits | p.publish)
    }

    /// Publication `name`.
    pub fn publication(&self, name: &str) -> Option<PublicationDef> {
        self.lock_globals().view().publications.iter().find(|p| p.name == name).cloned()
    }

    /// Stores publication `def`, replacing the one named `replacing` if
    /// given (a rename names the old one).
    pub fn put_publication(&self, def: PublicationDef, replacing: Option<&str>) -> Result<()> {
        self.changing(|| {
            let mut g = self.lock_globals();
            let pos = replacing.and_then(|n| g.publications.iter().position(|p| p.name == n));
            let old = match pos {
                Some(p) => Some(std::mem::replace(&mut g.publications[p], def.clone())),
                None => {
                    g.publications.push(def.clone());
                    None
                }
            };
            self.save_globals(&mut g, |g| match (pos, old) {
                (Some(p), Some(old)) => g.publications[p] = old,
                _ => {
                    g.publications.pop();
                }
            })
        })
    }

    /// Drops publication `name`; `Ok(false)` if there is none.
    pub fn drop_publication(&self, name: &str) -> Result<bool> {
        self.changing(|| {
            let mut g = self.lock_globals();
            let Some(pos) = g.publications.iter().position(|p| p.name == name) else { return Ok(false) };
            let removed = g.publications.remove(pos);
            self.save_globals(&mut g, |g| g.publications.insert(pos, removed)).map(|()| true)
        })
    }

    /// Follows a table's rename (`to: Some`) or drop (`None`) in the
    /// publications that list it.
    pub fn republish(&self, table: &str, to: Option<&str>) -> Result<()> {
        let listed = |g: &Globals| g.publications.iter().any(|p| p.tables.iter().any(|t| t == table));
        if !listed(self.lock_globals().view()) {
            return Ok(());
        }
        self.changing(|| {
            let mut g = self.lock_globals();
            let before = g.publications.clone();
            for p in &mut g.publications {
                match to {
                    Some(to) => p.tables.iter_mut().filter(|t| *t == table).for_each(|t| *t = to.to_string()),
                    None => p.tables.retain(|t| t != table),
                }
            }
            self.save_globals(&mut g, |g| g.publications = before)
        })
    }
}

impl Catalog {
    /// View or materialized view `name` (engine name).
    pub fn view(&self, name: &str) -> Option<ViewDef> {
        self.lock_globals().view().views.iter().find(|v| v.name == name).cloned()
    }

    /// Whether any view or materialized view exists.
    pub fn has_views(&self) -> bool {
        self.views_seen.load(SeqCst) && !self.lock_globals().view().views.is_empty()
    }

    /// View or materialized view `name`, looked for only if any view has
    /// existed: what planning a statement asks of every table it names.
    pub(crate) fn view_if_any(&self, name: &str) -> Option<ViewDef> {
        if !self.views_seen.load(SeqCst) {
            return None;
        }
        self.view(name)
    }

    /// Every view and materialized view.
    pub fn views(&self) -> Vec<ViewDef> {
        self.lock_globals().view().views.clone()
    }

    /// Stores view `def`, replacing the one of its name if there is one.
    pub fn put_view(&self, def: ViewDef) -> Result<()> {
        self.changing(|| {
            let mut g = self.lock_globals();
            let pos = g.views.iter().position(|v| v.name == def.name);
            let old = match pos {
                Some(p) => Some(std::mem::replace(&mut g.views[p], def.clone())),
                None => {
                    g.views.push(def.clone());
                    None
                }
            };
            self.save_globals(&mut g, |g| match (pos, old) {
                (Some(p), Some(old)) => g.views[p] = old,
                _ => {
                    g.views.pop();
                }
            })
        })
    }

    /// Drops view `name`; `Ok(false)` if there is none.
    pub fn drop_view(&self, name: &str) -> Result<bool> {
        self.changing(|| {
            let mut g = self.lock_globals();
            let Some(pos) = g.views.iter().position(|v| v.name == name) else { return Ok(false) };
            let removed = g.views.remove(pos);
            let facts = forget(&mut g, ObjectKind::Relation, name);
            self.save_globals(&mut g, |g| {
                g.views.insert(pos, removed);
                restore(g, ObjectKind::Relation, name, facts);
            })
            .map(|()| true)
        })
    }
}

/// What the globals keep about an object besides its definition: its
/// owner and ACL, and its comment.
type Facts = (Option<ObjectPrivs>, Option<String>);

/// The name of the routine stored under `key`: routines are stored under
/// `name(type,...)`, their input signature, so a name may be overloaded
/// (routines stored before overloading existed are under their bare name).
pub fn routine_name(key: &str) -> &str {
    key.split_once('(').map_or(key, |(name, _)| name)
}

/// Takes out what the globals keep about `kind` `name`, as its drop does.
fn forget(g: &mut Globals, kind: ObjectKind, name: &str) -> Facts {
    let key = (kind, name.to_string());
    (g.privs.remove(&key), g.comments.remove(&key))
}

/// Puts back what [`forget`] took, when the change fails.
fn restore(g: &mut Globals, kind: ObjectKind, name: &str, (privs, comment): Facts) {
    if let Some(p) = privs {
        g.privs.insert((kind, name.to_string()), p);
    }
    if let Some(c) = comment {
        g.comments.insert((kind, name.to_string()), c);
    }
}

impl Catalog {
    /// Every object that carries privileges: what a DDL statement's
    /// creations are found from (the objects after it, less those before).
    pub(crate) fn objects(&self) -> std::collections::BTreeSet<(ObjectKind, String)> {
        let mut set: std::collections::BTreeSet<_> =
            self.db.table_names().into_iter().map(|t| (ObjectKind::Relation, t)).collect();
        let g = self.lock_globals();
        let g = g.view();
        set.extend(g.views.iter().map(|v| (ObjectKind::Relation, v.name.clone())));
        set.extend(g.sequences.keys().map(|s| (ObjectKind::Sequence, s.clone())));
        set.extend(g.schemas.iter().map(|s| (ObjectKind::Schema, s.clone())));
        set.extend(g.routines.iter().map(|r| (ObjectKind::Routine, routine_name(&r.0).to_string())));
        set
    }

    /// The role that owns `kind` `name` (the database owner unless one
    /// is stored).
    pub fn owner(&self, kind: ObjectKind, name: &str) -> String {
        self.privs(kind, name).owner.unwrap_or_else(|| self.db_owner())
    }

    /// The owner and ACL of `kind` `name` as stored (defaults where none
    /// is).
    pub fn privs(&self, kind: ObjectKind, name: &str) -> ObjectPrivs {
        if kind == ObjectKind::Relation {
            if let Ok(t) = self.table(name) {
                return t.meta.privs.clone();
            }
        }
        self.lock_globals().view().privs.get(&(kind, name.to_string())).cloned().unwrap_or_default()
    }

    /// Every stored owner and ACL of an object outside tables (views,
    /// sequences, schemas, routines).
    pub fn global_privs(&self) -> BTreeMap<(ObjectKind, String), ObjectPrivs> {
        self.lock_globals().view().privs.clone()
    }

    /// Sets the owner and ACL of `kind` `name`.
    pub fn set_privs(&self, kind: ObjectKind, name: &str, privs: ObjectPrivs) -> Result<()> {
        if kind == ObjectKind::Relation && self.db.table(name).is_ok() {
            let t = self.table(name)?;
            let mut meta = t.meta.clone();
            meta.privs = privs;
            return self.set_meta(name, &meta);
        }
        self.changing(|| {
            let mut g = self.lock_globals();
            let key = (kind, name.to_string());
            let old = if privs.is_default() {
                g.privs.remove(&key)
            } else {
                g.privs.insert(key.clone(), privs.clone())
            };
            self.save_globals(&mut g, |g| {
                g.privs.remove(&key);
                restore(g, kind, name, (old, None));
            })
        })
    }

    /// COMMENT ON a view, sequence, schema or routine `name` (`None`
    /// removes it).
    pub fn set_comment(&self, kind: ObjectKind, name: &str, comment: Option<String>) -> Result<()> {
        self.changing(|| {
            let mut g = self.lock_globals();
            let key = (kind, name.to_string());
            let old = match &comment {
                Some(c) => g.comments.insert(key.clone(), c.clone()),
                None => g.comments.remove(&key),
            };
            self.save_globals(&mut g, |g| {
                g.comments.remove(&key);
                restore(g, kind, name, (None, old));
            })
        })
    }

    /// Every comment on a view, sequence, schema or routine.
    pub fn global_comments(&self) -> BTreeMap<(ObjectKind, String), String> {
        self.lock_globals().view().comments.clone()
    }

    /// The database owner's name: the role objects without a stored owner
    /// belong to, the first superuser role (a server creates one on a new
    /// data directory). Empty when there is none: then such objects belong
    /// to no role, and only superusers and the embedded program may change
    /// them.
    pub fn db_owner(&self) -> String {
        self.lock_globals()
            .view()
            .roles
            .iter()
            .find(|r| r.superuser)
            .map(|r| r.name.clone())
            .unwrap_or_default()
    }

    /// Whether `user` bypasses every privilege check: a superuser role, or
    /// (when `trusted`, an embedded session) a user that is not a role.
    pub fn bypasses(&self, user: &str, trusted: bool) -> bool {
        let g = self.lock_globals();
        match g.view().roles.iter().find(|r| r.name == user) {
            Some(r) => r.superuser,
            None => trusted,
        }
    }

    /// What owns objects or holds privileges for role `name`: the first
    /// such object, as a message's detail ("owner of table t").
    pub fn role_dependent(&self, name: &str) -> Option<String> {
        let mut all: Vec<((ObjectKind, String), ObjectPrivs)> = self.global_privs().into_iter().collect();
        for t in self.db.table_names() {
            if let Ok(info) = self.table(&t) {
                all.push(((ObjectKind::Relation, t), info.meta.privs.clone()));
            }
        }
        for ((kind, object), p) in all {
            if p.owner.as_deref() == Some(name) {
                return Some(format!("owner of {} {object}", kind.noun()));
            }
            if p.acl.iter().flatten().any(|i| i.grantee == name || i.grantor == name) {
                return Some(format!("privileges for {} {object}", kind.noun()));
            }
        }
        None
    }
}

/// The value after `v`, or an error at the end of a non-cycling sequence.
fn step(v: i64, d: &SequenceDef, name: &str) -> Result<i64> {
    match v.checked_add(d.increment) {
        Some(n) if n >= d.min && n <= d.max => Ok(n),
        _ if d.cycle => Ok(if d.increment > 0 { d.min } else { d.max }),
        _ => Err(Error::other(
            "2200H",
            format!(
                "nextval: reached {} value of sequence \"{}\" ({})",
                if d.increment > 0 { "maximum" } else { "minimum" },
                display_name(name),
                if d.increment > 0 { d.max } else { d.min }
            ),
        )),
    }
}

/// A table's engine name as a user writes it.
pub fn display_name(name: &str) -> String {
    name.to_string()
}

// --- encoding -------------------------------------------------------------
//
// table meta := "CSQ1" u32 ncols (col)* u32 nchecks (str str)*
//               u32 nfks (fk)* opt-str primary u32 nunique str*
//               u32 nnotnull u32*
//               ("CSQ6" adds, after the triggers: u32 n (str index u32
//               nkeys str* opt-str predicate)*, the index shapes;
//               "CSQ2" adds: opt-str comment, opt-str comment per column,
//               u32 n (str index str comment)*; "CSQ3" adds privs)
// privs      := opt-str owner u8 has-acl [u32 n (str grantee u16 privs
//               u16 grantable str grantor)*]   (grantee "": PUBLIC)
// col        := opt-str default opt-str generated u8 identity(0 none, 1 by
//               default, 2 always)
// fk         := str name u32 n u32* str ref_table u32 m str* u8 on_delete
//               u8 on_update
// globals    := "CSG9" u32 nschemas str* u32 nseq (str name i64 inc i64 min
//               i64 max i64 start u8 cycle opt-i64 reserved)*
//               u32 nroles (str name u8 flags opt-str verifier)*
//               u32 ntypes (str name str create-type-text)*
//               u32 nroutines (str name str create-text)*
//               u32 nviews (str name str query u32 n str* columns
//               u32 n str* search-path u32 n str* depends-on
//               u8 flags (1 materialized, 2 populated) str check-option)*
//               u32 nprivs (u8 kind str name privs)*
//               u32 ncomments (u8 kind str name str comment)*
//               u32 nenums (str name u32 oid u32 nlabels (u32 oid
//               i64 position-f64-bits str label)*)* u32 next-type-oid
//               u32 npublications (str name u8 flags (1 all tables)
//               u8 publish-bits str owner u32 n str* tables)*
//               per view, in the order above: u32 ntriggers (str name
//               str create-trigger-text)*
//               u32 ntypes (u32 oid)*, the composite types' OIDs in the
//               order above
//               ("CSG8": without composite type OIDs, which a load
//               assigns from next-type-oid; "CSG7": without view triggers; "CSG6": without publications; "CSG5": without enums; "CSG4": without privs; "CSG3": without views; "CSG2": without types and
//               routines either; "CSG1": without roles either)
// str        := u32 len, UTF-8;  opt-x := u8 present, x

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: usize) {
        self.0.extend_from_slice(&(v as u32).to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn opt_str(&mut self, s: &Option<String>) {
        match s {
            Some(s) => {
                self.0.push(1);
                self.str(s);
            }
            None => self.0.push(0),
        }
    }
    fn privs(&mut self, p: &ObjectPrivs) {
        self.opt_str(&p.owner);
        match &p.acl {
            Some(acl) => {
                self.0.push(1);
                self.u32(acl.len());
                for i in acl {
                    self.str(&i.grantee);
                    self.0.extend_from_slice(&i.privs.to_le_bytes());
                    self.0.extend_from_slice(&i.grantable.to_le_bytes());
                    self.str(&i.grantor);
                }
            }
            None => self.0.push(0),
        }
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or_else(corrupt)?;
        let s = &self.buf[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<usize> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
    fn i64(&mut self) -> Result<i64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_le_bytes(a))
    }
    fn str(&mut self) -> Result<String> {
        let n = self.u32()?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| corrupt())
    }
    fn opt_str(&mut self) -> Result<Option<String>> {
        Ok(if self.u8()? == 1 { Some(self.str()?) } else { None })
    }
    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn privs(&mut self) -> Result<ObjectPrivs> {
        let owner = self.opt_str()?;
        let acl = if self.u8()? == 1 {
            let mut acl = Vec::new();
            for _ in 0..self.u32()? {
                acl.push(AclItem {
                    grantee: self.str()?,
                    privs: self.u16()?,
                    grantable: self.u16()?,
                    grantor: self.str()?,
                });
            }
            Some(acl)
        } else {
            None
        };
        Ok(ObjectPrivs { owner, acl })
    }
}

fn corrupt() -> Error {
    Error::other("XX001", "SQL catalog metadata is damaged")
}

fn action_byte(a: RefAction) -> u8 {
    match a {
        RefAction::Restrict => 0,
        RefAction::Cascade => 1,
        RefAction::SetNull => 2,
        RefAction::SetDefault => 3,
    }
}

fn byte_action(b: u8) -> Result<RefAction> {
    Ok(match b {
        0 => RefAction::Restrict,
        1 => RefAction::Cascade,
        2 => RefAction::SetNull,
        3 => RefAction::SetDefault,
        _ => return Err(corrupt()),
    })
}

/// Encodes a table's SQL facts.
pub fn encode_table_meta(m: &TableMeta) -> Vec<u8> {
    let mut w = Writer(b"CSQ6".to_vec());
    w.u32(m.columns.len());
    for c in &m.columns {
        w.opt_str(&c.default);
        w.opt_str(&c.generated);
        w.0.push(match c.identity_always {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        });
    }
    w.u32(m.checks.len());
    for c in &m.checks {
        w.str(&c.name);
        w.str(&c.expr);
    }
    w.u32(m.foreign_keys.len());
    for fk in &m.foreign_keys {
        w.str(&fk.name);
        w.u32(fk.columns.len());
        for &c in &fk.columns {
            w.u32(c);
        }
        w.str(&fk.ref_table);
        w.u32(fk.ref_columns.len());
        for c in &fk.ref_columns {
            w.str(c);
        }
        w.0.push(action_byte(fk.on_delete));
        w.0.push(action_byte(fk.on_update));
    }
    w.opt_str(&m.primary_key);
    w.u32(m.unique.len());
    for u in &m.unique {
        w.str(u);
    }
    w.u32(m.not_null.len());
    for &c in &m.not_null {
        w.u32(c);
    }
    w.opt_str(&m.comment);
    for c in &m.columns {
        w.opt_str(&c.comment);
    }
    w.u32(m.index_comments.len());
    for (index, text) in &m.index_comments {
        w.str(index);
        w.str(text);
    }
    w.privs(&m.privs);
    match m.memory_limit {
        Some(l) => {
            w.0.push(1);
            w.0.extend_from_slice(&l.to_le_bytes());
        }
        None => w.0.push(0),
    }
    w.u32(m.triggers.len());
    for t in &m.triggers {
        w.str(&t.name);
        w.0.push(t.enabled as u8);
        w.str(&t.source);
    }
    w.u32(m.index_shapes.len());
    for (index, shape) in &m.index_shapes {
        w.str(index);
        w.u32(shape.keys.len());
        for k in &shape.keys {
            w.str(k);
        }
        w.opt_str(&shape.predicate);
    }
    w.0
}

/// Decodes a table's SQL facts; empty bytes (a table made through the
/// embedded API) give plain columns.
pub fn decode_table_meta(bytes: &[u8], ncols: usize) -> Result<TableMeta> {
    if bytes.is_empty() {
        return Ok(TableMeta { columns: vec![ColumnMeta::default(); ncols], ..Default::default() });
    }
    let mut r = Reader { buf: bytes, at: 0 };
    let version = match r.take(4)? {
        b"CSQ1" => 1,
        b"CSQ2" => 2,
        b"CSQ3" => 3,
        b"CSQ4" => 4,
        b"CSQ5" => 5,
        b"CSQ6" => 6,
        _ => return Err(corrupt()),
    };
    let with_comments = version >= 2;
    let mut m = TableMeta::default();
    for _ in 0..r.u32()? {
        let default = r.opt_str()?;
        let generated = r.opt_str()?;
        let identity_always = match r.u8()? {
            0 => None,
            1 => Some(false),
            2 => Some(true),
            _ => return Err(corrupt()),
        };
        m.columns.push(ColumnMeta { default, generated, identity_always, comment: None });
    }
    for _ in 0..r.u32()? {
        m.checks.push(Check { name: r.str()?, expr: r.str()? });
    }
    for _ in 0..r.u32()? {
        let name = r.str()?;
        let n = r.u32()?;
        let mut columns = Vec::new();
        for _ in 0..n {
            columns.push(r.u32()?);
        }
        let ref_table = r.str()?;
        let mut ref_columns = Vec::new();
        for _ in 0..r.u32()? {
            ref_columns.push(r.str()?);
        }
        let on_delete = byte_action(r.u8()?)?;
        let on_update = byte_action(r.u8()?)?;
        m.foreign_keys.push(ForeignKey { name, columns, ref_table, ref_columns, on_delete, on_update });
    }
    m.primary_key = r.opt_str()?;
    for _ in 0..r.u32()? {
        m.unique.push(r.str()?);
    }
    for _ in 0..r.u32()? {
        m.not_null.push(r.u32()?);
    }
    if with_comments {
        m.comment = r.opt_str()?;
        for c in &mut m.columns {
            c.comment = r.opt_str()?;
        }
        for _ in 0..r.u32()? {
            let index = r.str()?;
            m.index_comments.insert(index, r.str()?);
        }
    }
    if version >= 3 {
        m.privs = r.privs()?;
    }
    if version >= 4 && r.u8()? == 1 {
        m.memory_limit = Some(u64::from_le_bytes(r.take(8)?.try_into().map_err(|_| corrupt())?));
    }
    if version >= 5 {
        for _ in 0..r.u32()? {
            let name = r.str()?;
            let enabled = match r.u8()? {
                0 => false,
                1 => true,
                _ => return Err(corrupt()),
            };
            m.triggers.push(TriggerMeta { name, enabled, source: r.str()? });
        }
    }
    if version >= 6 {
        for _ in 0..r.u32()? {
            let index = r.str()?;
            let mut keys = Vec::new();
            for _ in 0..r.u32()? {
                keys.push(r.str()?);
            }
            let predicate = r.opt_str()?;
            m.index_shapes.insert(index, IndexShape { keys, predicate });
        }
    }
    if m.columns.len() != ncols || r.at != bytes.len() {
        return Err(corrupt());
    }
    Ok(m)
}

fn encode_globals(g: &Globals) -> Vec<u8> {
    let mut w = Writer(b"CSG9".to_vec());
    w.u32(g.schemas.len());
    for s in &g.schemas {
        w.str(s);
    }
    w.u32(g.sequences.len());
    for (name, st) in &g.sequences {
        let d = &st.def;
        w.str(name);
        w.i64(d.increment);
        w.i64(d.min);
        w.i64(d.max);
        w.i64(d.start);
        w.0.push(d.cycle as u8);
        match d.reserved {
            Some(r) => {
                w.0.push(1);
                w.i64(r);
            }
            None => w.0.push(0),
        }
    }
    w.u32(g.roles.len());
    for r in &g.roles {
        w.str(&r.name);
        w.0.push(r.superuser as u8 | (r.login as u8) << 1);
        match &r.verifier {
            Some(v) => {
                w.0.push(1);
                w.str(v);
            }
            None => w.0.push(0),
        }
    }
    w.u32(g.types.len());
    for t in &g.types {
        w.str(&t.name);
        w.str(&t.source);
    }
    w.u32(g.routines.len());
    for (name, text) in &g.routines {
        w.str(name);
        w.str(text);
    }
    w.u32(g.views.len());
    for v in &g.views {
        w.str(&v.name);
        w.str(&v.query);
        for list in [&v.columns, &v.search_path, &v.depends_on] {
            w.u32(list.len());
            for x in list {
                w.str(x);
            }
        }
        w.0.push(v.materialized as u8 | (v.populated as u8) << 1);
        w.str(&v.check_option);
    }
    w.u32(g.privs.len());
    for ((kind, name), p) in &g.privs {
        w.0.push(kind.byte());
        w.str(name);
        w.privs(p);
    }
    w.u32(g.comments.len());
    for ((kind, name), c) in &g.comments {
        w.0.push(kind.byte());
        w.str(name);
        w.str(c);
    }
    w.u32(g.enums.len());
    for e in &g.enums {
        w.str(&e.name);
        w.u32(e.oid as usize);
        w.u32(e.labels.len());
        for (oid, l) in &e.labels {
            w.u32(*oid as usize);
            w.i64(l.position.to_bits() as i64);
            w.str(&l.label);
        }
    }
    w.u32(g.next_type_oid as usize);
    w.u32(g.publications.len());
    for p in &g.publications {
        w.str(&p.name);
        w.0.push(p.all_tables as u8);
        w.0.push(p.publish);
        w.str(&p.owner);
        w.u32(p.tables.len());
        for t in &p.tables {
            w.str(t);
        }
    }
    for v in &g.views {
        w.u32(v.triggers.len());
        for t in &v.triggers {
            w.str(&t.name);
            w.str(&t.source);
        }
    }
    w.u32(g.types.len());
    for t in &g.types {
        w.u32(t.oid as usize);
    }
    w.0
}

fn decode_globals(bytes: &[u8]) -> Result<Globals> {
    let mut g = Globals::default();
    if bytes.is_empty() {
        return Ok(g);
    }
    let mut r = Reader { buf: bytes, at: 0 };
    let version = match r.take(4)? {
        b"CSG1" => 1,
        b"CSG2" => 2,
        b"CSG3" => 3,
        b"CSG4" => 4,
        b"CSG5" => 5,
        b"CSG6" => 6,
        b"CSG7" => 7,
        b"CSG8" => 8,
        b"CSG9" => 9,
        _ => return Err(corrupt()),
    };
    let with_roles = version >= 2;
    for _ in 0..r.u32()? {
        g.schemas.push(r.str()?);
    }
    for _ in 0..r.u32()? {
        let name = r.str()?;
        let def = SequenceDef {
            increment: r.i64()?,
            min: r.i64()?,
            max: r.i64()?,
            start: r.i64()?,
            cycle: r.u8()? == 1,
            reserved: if r.u8()? == 1 { Some(r.i64()?) } else { None },
        };
        g.sequences.insert(name, SeqState { def, last: None });
    }
    if with_roles {
        for _ in 0..r.u32()? {
            let name = r.str()?;
            let flags = r.u8()?;
            let verifier = if r.u8()? == 1 { Some(r.str()?) } else { None };
            g.roles.push(Role { name, superuser: flags & 1 != 0, login: flags & 2 != 0, verifier });
        }
    }
    if version >= 3 {
        for _ in 0..r.u32()? {
            g.types.push(TypeEntry { name: r.str()?, source: r.str()?, oid: 0 });
        }
        for _ in 0..r.u32()? {
            g.routines.push((r.str()?, r.str()?));
        }
    }
    if version >= 4 {
        for _ in 0..r.u32()? {
            let (name, query) = (r.str()?, r.str()?);
            let mut lists: [Vec<String>; 3] = Default::default();
            for list in &mut lists {
                for _ in 0..r.u32()? {
                    list.push(r.str()?);
                }
            }
            let [columns, search_path, depends_on] = lists;
            let flags = r.u8()?;
            g.views.push(ViewDef {
                name,
                query,
                columns,
                search_path,
                depends_on,
                materialized: flags & 1 != 0,
                populated: flags & 2 != 0,
                check_option: r.str()?,
                triggers: vec![],
            });
        }
    }
    if version >= 5 {
        for _ in 0..r.u32()? {
            let kind = ObjectKind::from_byte(r.u8()?).ok_or_else(corrupt)?;
            let name = r.str()?;
            g.privs.insert((kind, name), r.privs()?);
        }
        for _ in 0..r.u32()? {
            let kind = ObjectKind::from_byte(r.u8()?).ok_or_else(corrupt)?;
            let name = r.str()?;
            g.comments.insert((kind, name), r.str()?);
        }
    }
    if version >= 6 {
        let oid = |v: usize| u32::try_from(v).map_err(|_| corrupt());
        for _ in 0..r.u32()? {
            let name = r.str()?;
            let type_oid = oid(r.u32()?)?;
            let mut labels = Vec::new();
            for _ in 0..r.u32()? {
                let label_oid = oid(r.u32()?)?;
                let position = f64::from_bits(r.i64()? as u64);
                labels.push((label_oid, centum_types::EnumLabel { position, label: r.str()?.into() }));
            }
            g.enums.push(EnumEntry { name, oid: type_oid, labels });
        }
        g.next_type_oid = oid(r.u32()?)?;
    }
    if version >= 7 {
        for _ in 0..r.u32()? {
            let name = r.str()?;
            let all_tables = r.u8()? & 1 != 0;
            let publish = r.u8()?;
            let owner = r.str()?;
            let mut tables = Vec::new();
            for _ in 0..r.u32()? {
                tables.push(r.str()?);
            }
            g.publications.push(PublicationDef { name, all_tables, tables, publish, owner });
        }
    }
    if version >= 8 {
        for v in &mut g.views {
            for _ in 0..r.u32()? {
                let name = r.str()?;
                v.triggers.push(TriggerMeta { name, enabled: true, source: r.str()? });
            }
        }
    }
    if version >= 9 {
        if r.u32()? != g.types.len() {
            return Err(corrupt());
        }
        for t in &mut g.types {
            t.oid = u32::try_from(r.u32()?).map_err(|_| corrupt())?;
        }
    } else {
        // Composite types from before they had OIDs take them now, the
        // same ones at every load until the globals are next written.
        for t in &mut g.types {
            t.oid = take_type_oids(&mut g.next_type_oid, 3)?;
        }
    }
    if r.at != bytes.len() {
        return Err(corrupt());
    }
    Ok(g)
}

// --- read-only accessors for the virtual catalog (crate::system) ----------

impl Catalog {
    /// Names of the schemas created with CREATE SCHEMA (not `public` or
    /// `pg_catalog`).
    pub fn schema_names(&self) -> Vec<String> {
        self.lock_globals().view().schemas.clone()
    }

    /// Sequence `name`'s definition.
    pub fn sequence_def(&self, name: &str) -> Option<SequenceDef> {
        self.lock_globals().view().sequences.get(name).map(|s| s.def.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_meta_round_trips_and_refuses_damage() {
        let m = TableMeta {
            columns: vec![
                ColumnMeta {
                    default: Some("42".into()),
                    generated: None,
                    identity_always: Some(true),
                    comment: Some("the answer".into()),
                },
                ColumnMeta {
                    default: None,
                    generated: Some("a * 2".into()),
                    identity_always: None,
                    comment: None,
                },
            ],
            checks: vec![Check { name: "c".into(), expr: "a > 0".into() }],
            foreign_keys: vec![ForeignKey {
                name: "fk".into(),
                columns: vec![1],
                ref_table: "p".into(),
                ref_columns: vec!["id".into()],
                on_delete: RefAction::Cascade,
                on_update: RefAction::Restrict,
            }],
            primary_key: Some("t_pkey".into()),
            unique: vec!["t_b_key".into()],
            not_null: vec![1],
            comment: Some("orders, one row each".into()),
            index_comments: [("t_pkey".to_string(), "by id".to_string())].into(),
            privs: ObjectPrivs {
                owner: Some("app".into()),
                acl: Some(vec![AclItem {
                    grantee: String::new(),
                    privs: crate::privileges::SELECT | crate::privileges::INSERT,
                    grantable: 0,
                    grantor: "app".into(),
                }]),
            },
            memory_limit: Some(64 << 20),
            triggers: vec![TriggerMeta {
                name: "audit".into(),
                enabled: false,
                source: "CREATE TRIGGER audit AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()".into(),
            }],
            index_shapes: [(
                "t_lower_b_idx".to_string(),
                IndexShape { keys: vec!["lower(b)".into(), "a".into()], predicate: Some("a > 0".into()) },
            )]
            .into(),
        };
        let bytes = encode_table_meta(&m);
        assert_eq!(decode_table_meta(&bytes, 2).unwrap(), m);
        for cut in 0..bytes.len() {
            assert!(decode_table_meta(&bytes[..cut], 2).is_err() || cut == 0);
        }
        // Written before index shapes existed (CSQ5: no shape list).
        let mut plain = m.clone();
        plain.index_shapes.clear();
        let mut old = encode_table_meta(&plain);
        old[..4].copy_from_slice(b"CSQ5");
        old.truncate(old.len() - 4);
        assert_eq!(decode_table_meta(&old, 2).unwrap(), plain);
        // Written before triggers existed (CSQ4: no trigger list).
        plain.triggers.clear();
        let mut old = encode_table_meta(&plain);
        old[..4].copy_from_slice(b"CSQ4");
        old.truncate(old.len() - 4 - 4);
        assert_eq!(decode_table_meta(&old, 2).unwrap(), plain);
        // Written before memory limits existed (CSQ3: no limit byte).
        plain.memory_limit = None;
        let mut old = encode_table_meta(&plain);
        old[..4].copy_from_slice(b"CSQ3");
        old.truncate(old.len() - 1 - 4 - 4);
        assert_eq!(decode_table_meta(&old, 2).unwrap(), plain);
        // Written before owners existed (CSQ2: no privileges section).
        plain.privs = ObjectPrivs::default();
        let mut old = encode_table_meta(&plain);
        old[..4].copy_from_slice(b"CSQ2");
        old.truncate(old.len() - 3 - 4 - 4);
        assert_eq!(decode_table_meta(&old, 2).unwrap(), plain);
        // Written before comments existed (CSQ1: no comment section).
        plain.comment = None;
        plain.index_comments.clear();
        plain.columns.iter_mut().for_each(|c| c.comment = None);
        let mut old = encode_table_meta(&plain);
        old[..4].copy_from_slice(b"CSQ1");
        old.truncate(old.len() - (1 + 2 + 4 + 2 + 1 + 4 + 4));
        assert_eq!(decode_table_meta(&old, 2).unwrap(), plain);
    }

    #[test]
    fn views_round_trip_in_the_globals_and_damage_is_refused() {
        let mut g = Globals::default();
        g.schemas.push("s".into());
        g.routines.push(("f".into(), "CREATE FUNCTION f() ...".into()));
        g.views.push(ViewDef {
            name: "s.v".into(),
            query: "SELECT a, b FROM t".into(),
            columns: vec!["x".into(), "b".into()],
            search_path: vec!["s".into(), "public".into()],
            depends_on: vec!["t".into()],
            materialized: true,
            populated: false,
            check_option: String::new(),
            triggers: vec![TriggerMeta {
                name: "route".into(),
                enabled: true,
                source: "CREATE TRIGGER route INSTEAD OF INSERT ON s.v FOR EACH ROW EXECUTE FUNCTION f()"
                    .into(),
            }],
        });
        let owned = ObjectPrivs { owner: Some("app".into()), acl: None };
        g.privs.insert((ObjectKind::Routine, "f".into()), owned);
        g.comments.insert((ObjectKind::Schema, "s".into()), "ledgers".into());
        g.publications.push(PublicationDef {
            name: "feed".into(),
            all_tables: false,
            tables: vec!["t".into(), "s.u".into()],
            publish: PUBLISH_INSERT | PUBLISH_DELETE,
            owner: "app".into(),
        });
        let bytes = encode_globals(&g);
        let back = decode_globals(&bytes).unwrap();
        assert_eq!(back.publications, g.publications);
        assert_eq!(back.privs, g.privs);
        assert_eq!(back.comments, g.comments);
        assert_eq!(back.views, g.views);
        assert_eq!(back.schemas, g.schemas);
        assert_eq!(back.routines, g.routines);
        for cut in 1..bytes.len() {
            assert!(decode_globals(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        // Composite types keep their OIDs; written before they had them
        // (CSG8: no OID list, 4 bytes and 4 per type), they take the next
        // free ones, the same at every load.
        g.types.push(TypeEntry { name: "pair".into(), source: "CREATE TYPE pair AS (a INT)".into(), oid: 0 });
        g.types[0].oid = take_type_oids(&mut g.next_type_oid, 3).unwrap();
        let back = decode_globals(&encode_globals(&g)).unwrap();
        assert_eq!((back.types.clone(), back.next_type_oid), (g.types.clone(), g.next_type_oid));
        let mut old = encode_globals(&g);
        old[..4].copy_from_slice(b"CSG8");
        old.truncate(old.len() - 8);
        let was = decode_globals(&old).unwrap();
        assert_eq!(was.types[0].oid, g.next_type_oid);
        assert_eq!(was.next_type_oid, g.next_type_oid + 3);
        assert_eq!(decode_globals(&old).unwrap().types, was.types);
        g.types.clear();
        for v in &mut g.views {
            v.triggers.clear();
        }
        // Written before views had triggers (CSG7: no trigger count per
        // view, 4 bytes each, nor the composite types' OIDs).
        let mut old = encode_globals(&g);
        old[..4].copy_from_slice(b"CSG7");
        old.truncate(old.len() - 8);
        assert_eq!(decode_globals(&old).unwrap().publications, g.publications);
        g.publications.clear();
        // Written before publications existed (CSG6: no publication list,
        // 4 bytes when there are none).
        let mut old = encode_globals(&g);
        old[..4].copy_from_slice(b"CSG6");
        old.truncate(old.len() - 12);
        assert_eq!(decode_globals(&old).unwrap().views, g.views);
        // Written before enum types existed (CSG5: no enum list or next
        // type OID either, 8 more bytes when there are none).
        let mut old = encode_globals(&g);
        old[..4].copy_from_slice(b"CSG5");
        old.truncate(old.len() - 20);
        assert_eq!(decode_globals(&old).unwrap().comments, g.comments);
        // Written before owners existed (CSG4: no privileges or comments
        // either).
        g.privs.clear();
        g.comments.clear();
        let mut old = encode_globals(&g);
        old[..4].copy_from_slice(b"CSG4");
        old.truncate(old.len() - 28);
        assert_eq!(decode_globals(&old).unwrap().views, g.views);
    }
}
