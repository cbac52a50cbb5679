//! One statement's view of the catalog, with every object's OID.
//!
//! OIDs are derived, never stored, so they survive restarts without a
//! format change and are the same for every session:
//!
//! ```text
//!  table with engine id n   block = 16384 + 4096 * n      (n < 262,140)
//!    block + 0               the table (pg_class)
//!    block + 1 ..  1023      its indexes     (slot = FNV-1a(name) % 1023)
//!    block + 1024 .. 2047    its constraints and triggers (slot =
//!                            FNV-1a(name) % 1024; a trigger's name
//!                            prefixed with NUL "trigger" NUL)
//!    block + 2048 + attnum   the default of column attnum (pg_attrdef,
//!                            attnum < 2047)
//!    block + 4095            a materialized view's rule (pg_rewrite)
//!  sequence                 2^30 + FNV-1a(name) % 2^28
//!  schema                   2^30 + 2^28 + FNV-1a(name) % 2^27
//!  role                     2^30 + 2^28 + 2^27 + FNV-1a(name) % 2^26
//!  function or procedure    2^30 + 2^28 + 2^27 + 2^26 + FNV-1a(name) % 2^25
//!  view                     2^30 + 2^28 + 2^27 + 2^26 + 2^25
//!                            + 2 * (FNV-1a(name) % 2^23); its rewrite
//!                            rule (pg_rewrite) the OID after it
//!  publication              VIEW_BASE + 2^24 + FNV-1a(name) % 2^21
//!  publication's table      VIEW_BASE + 2^24 + 2^21
//!   (pg_publication_rel)     + FNV-1a(publication NUL table) % 2^21
//!  view's trigger           VIEW_BASE + 2^24 + 2^22
//!                            + FNV-1a(view NUL trigger) % 2^22
//!  (a materialized view is a table, with a table's OIDs)
//!  pg_catalog 11, public 2200, information_schema 13000, built-in types
//!  PostgreSQL's own (DataType::pg_oid), the database 5; with no role in
//!  the catalog, the session's user is reported as role 10 (PostgreSQL's
//!  bootstrap superuser)
//! ```
//!
//! Slots that collide go to the next free one, in name order, so an OID
//! depends only on the object's name and its table's id, except in the
//! rare case of a collision. A table keeps its id (and so its OIDs) for its
//! life; `ALTER TABLE ... ADD/DROP COLUMN` rewrites it into a new table
//! with a new id.

use crate::catalog::OutputColumn;
use crate::catalog::{Catalog, Role, SequenceDef, TableInfo, ViewDef};
use crate::error::{Error, Result};
use crate::privileges::{ObjectKind, ObjectPrivs};
use centum_engine::{IndexDef, IndexKind};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// OID of schema `pg_catalog`.
pub(crate) const PG_CATALOG: i32 = 11;
/// OID of schema `public`.
pub(crate) const PUBLIC: i32 = 2200;

/// The comment on schema `public`, as in every PostgreSQL database.
pub(crate) const PUBLIC_COMMENT: &str = "standard public schema";
/// OID of schema `information_schema`.
pub(crate) const INFORMATION_SCHEMA: i32 = 13000;
/// OID of schema `centum`: the engine's views.
pub(crate) const CENTUM: i32 = 13001;
/// OID of the role reported when the catalog has none.
pub(crate) const ROLE: i32 = 10;
/// OID of the one database.
pub(crate) const DATABASE: i32 = 5;
/// Access methods: heap, btree (range indexes), hash.
pub(crate) const AM_HEAP: i32 = 2;
pub(crate) const AM_BTREE: i32 = 403;
pub(crate) const AM_HASH: i32 = 405;

const FIRST_USER_OID: i64 = 16384;
const BLOCK: i64 = 4096;
const SEQ_BASE: i64 = 1 << 30;
const SCHEMA_BASE: i64 = (1 << 30) + (1 << 28);
const ROLE_BASE: i64 = (1 << 30) + (1 << 28) + (1 << 27);
const ROUTINE_BASE: i64 = (1 << 30) + (1 << 28) + (1 << 27) + (1 << 26);
const VIEW_BASE: i64 = ROUTINE_BASE + (1 << 25);
const PUBLICATION_BASE: i64 = VIEW_BASE + (1 << 24);
const PUBLICATION_REL_BASE: i64 = PUBLICATION_BASE + (1 << 21);
const VIEW_TRIGGER_BASE: i64 = PUBLICATION_BASE + (1 << 22);

/// A publication with its OID, and the tables it lists (FOR TABLE) with
/// the OIDs of their pg_publication_rel rows.
pub(crate) struct PublicationRel {
    pub oid: i32,
    pub def: crate::catalog::PublicationDef,
    /// Engine names of the tables it carries now (every table for FOR ALL
    /// TABLES).
    pub tables: Vec<String>,
    /// (row OID, table engine name) of its listed tables.
    pub listed: Vec<(i32, String)>,
}

/// What a relation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RelKind {
    Table,
    Index,
    Sequence,
    View,
    MaterializedView,
    /// A composite type's relation, holding its fields.
    CompositeType,
}

impl RelKind {
    /// pg_class.relkind.
    pub fn code(self) -> &'static str {
        match self {
            RelKind::Table => "r",
            RelKind::Index => "i",
            RelKind::Sequence => "S",
            RelKind::View => "v",
            RelKind::MaterializedView => "m",
            RelKind::CompositeType => "c",
        }
    }
}

/// A constraint of a table.
#[derive(Clone, Debug)]
pub(crate) enum ConKind {
    /// PRIMARY KEY or UNIQUE on an index (the index's position in
    /// `Rel::indexes`), `primary` for the former.
    Key { index: usize, primary: bool },
    /// CHECK (position in the table's checks).
    Check(usize),
    /// FOREIGN KEY (position in the table's foreign keys).
    Foreign(usize),
}

/// A constraint with its OID.
#[derive(Clone, Debug)]
pub(crate) struct Constraint {
    pub oid: i32,
    pub name: String,
    pub kind: ConKind,
}

/// An index of a table with its OID.
#[derive(Clone, Debug)]
pub(crate) struct IndexRel {
    pub oid: i32,
    pub def: IndexDef,
    /// Key columns as attribute numbers (1-based; 0 for an expression).
    pub attnums: Vec<i16>,
    /// The engine column holding each key (a hidden one for an expression
    /// or a partial index's key).
    pub key_cols: Vec<usize>,
    /// The keys and predicate of an index on expressions or a partial
    /// index.
    pub shape: Option<crate::catalog::IndexShape>,
}

/// A table with its indexes and constraints.
pub(crate) struct TableRel {
    pub oid: i32,
    /// Engine name.
    pub engine_name: String,
    pub schema: String,
    pub name: String,
    pub info: Arc<TableInfo>,
    pub indexes: Vec<IndexRel>,
    pub constraints: Vec<Constraint>,
    /// Its triggers, in name order.
    pub triggers: Vec<TriggerRel>,
    /// The materialized view this table holds the rows of, if it does.
    pub materialized: Option<ViewDef>,
}

/// A trigger of a table with its OID.
pub(crate) struct TriggerRel {
    pub oid: i32,
    pub def: crate::triggers::TriggerDef,
    pub enabled: bool,
}

impl TableRel {
    /// What pg_class calls it.
    pub fn kind(&self) -> RelKind {
        if self.materialized.is_some() {
            RelKind::MaterializedView
        } else {
            RelKind::Table
        }
    }
}

/// A view with its OID and columns.
pub(crate) struct ViewRel {
    pub oid: i32,
    pub schema: String,
    pub name: String,
    pub def: ViewDef,
    /// Its columns as it binds now (none if it no longer binds).
    pub columns: Vec<OutputColumn>,
    /// Whether INSERT, UPDATE and DELETE can go through it.
    pub updatable: bool,
    /// Per column: whether it is a plain column of an updatable view's
    /// relation (an expression column cannot be written).
    pub updatable_columns: Vec<bool>,
    /// Its triggers, in name order.
    pub triggers: Vec<TriggerRel>,
}

impl TableRel {
    /// The OID of column `attnum`'s default (pg_attrdef).
    pub fn attrdef_oid(&self, attnum: usize) -> i32 {
        self.oid + 2048 + attnum.min(2046) as i32
    }

    /// The OID of a materialized view's rewrite rule (pg_rewrite): the
    /// last of its table's block.
    pub fn rule_oid(&self) -> i32 {
        self.oid + 4095
    }
}

/// A sequence with its OID.
pub(crate) struct SequenceRel {
    pub oid: i32,
    pub schema: String,
    pub name: String,
    pub engine_name: String,
}

/// Any relation found by OID.
pub(crate) enum RelRef<'a> {
    Table(&'a TableRel),
    Index(&'a TableRel, &'a IndexRel),
    Sequence(&'a SequenceRel),
    View(&'a ViewRel),
}

/// The catalog as one statement sees it.
pub(crate) struct Snapshot {
    /// Schemas: (oid, name), in OID order.
    pub schemas: Vec<(i32, String)>,
    /// Tables, in OID order.
    pub tables: Vec<TableRel>,
    /// Sequences, in OID order.
    pub sequences: Vec<SequenceRel>,
    /// Sequence definitions by engine name.
    pub sequence_defs: BTreeMap<String, SequenceDef>,
    /// Roles with their OIDs, in creation order (empty: none created).
    pub roles: Vec<(i32, Role)>,
    /// The OID of the owner of built-in objects and of those that store
    /// no owner: the first superuser role, else the first role, else
    /// [`ROLE`].
    pub owner: i32,
    /// Functions and procedures with their OIDs, in OID order.
    pub routines: Vec<(i32, crate::routines::RoutineInfo)>,
    /// Views (not materialized ones: those are tables), in OID order.
    pub views: Vec<ViewRel>,
    /// The engine, for its transaction counts (`pg_stat_database`) and
    /// which transactions run (`pg_locks`).
    pub db: centum_engine::Database,
    /// Stored owners and ACLs of views, sequences, schemas and routines
    /// (a table's are in its meta).
    pub privs: BTreeMap<(ObjectKind, String), ObjectPrivs>,
    /// Comments on views, sequences, schemas and routines.
    pub comments: BTreeMap<(ObjectKind, String), String>,
    /// Enum types, in OID order.
    pub enums: Vec<crate::catalog::EnumEntry>,
    /// Composite types with their fields, in OID order.
    pub composites: Vec<(crate::catalog::TypeEntry, centum_types::CompositeType)>,
    /// Publications, in OID order.
    pub publications: Vec<PublicationRel>,
    /// [`Snapshot::descriptions`], made on first use: `col_description`
    /// is called once per row of a catalog query.
    descriptions: std::cell::OnceCell<Vec<(i32, i32, i32, String)>>,
}

/// FNV-1a of a name.
fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Gives each name a slot in `0..size`, probing past collisions in name
/// order. `names` must be sorted.
fn slots<'a>(names: impl Iterator<Item = &'a str>, size: u64) -> Result<BTreeMap<String, u64>> {
    let mut taken = BTreeSet::new();
    let mut out = BTreeMap::new();
    for n in names {
        if taken.len() as u64 >= size {
            return Err(Error::other("54000", format!("more than {size} objects to derive OIDs for")));
        }
        let mut s = fnv(n) % size;
        while taken.contains(&s) {
            s = (s + 1) % size;
        }
        taken.insert(s);
        out.insert(n.to_string(), s);
    }
    Ok(out)
}

/// Splits an engine name into (schema, name).
pub(crate) fn split_name(engine: &str) -> (String, String) {
    match engine.split_once('.') {
        Some((s, t)) => (s.to_string(), t.to_string()),
        None => ("public".to_string(), engine.to_string()),
    }
}

/// The OID of a table with engine id `id`.
pub(crate) fn table_oid(id: u64) -> Result<i32> {
    let oid =
        i64::try_from(id).ok().and_then(|v| v.checked_mul(BLOCK)).and_then(|v| v.checked_add(FIRST_USER_OID));
    match oid {
        Some(o) if o < SEQ_BASE => Ok(o as i32),
        _ => Err(Error::other("54000", "table id too large to derive an OID from")),
    }
}

/// What only binding a view's query tells: the columns it has now (none
/// if it no longer binds), and which of them INSERT and UPDATE can write
/// (`None`: the view takes no INSERT, UPDATE or DELETE at all). The
/// planner answers this for a snapshot.
pub(crate) trait ViewShapes {
    fn shape(&self, def: &ViewDef) -> (Vec<OutputColumn>, Option<Vec<bool>>);
}

impl Snapshot {
    /// Reads the catalog now; `views` binds the views' queries.
    pub fn take(catalog: &Catalog, views: &dyn ViewShapes) -> Result<Snapshot> {
        let db = catalog.db();
        let mut names = db.table_names();
        names.sort();
        let all_views = catalog.views();
        let mut tables = Vec::new();
        for engine_name in names {
            if engine_name.ends_with("$rewrite") {
                continue;
            }
            let Ok(info) = catalog.table(&engine_name) else { continue };
            let mut t = Self::table(engine_name, info)?;
            t.materialized = all_views.iter().find(|v| v.materialized && v.name == t.engine_name).cloned();
            tables.push(t);
        }
        let mut plain: Vec<&ViewDef> = all_views.iter().filter(|v| !v.materialized).collect();
        plain.sort_by(|a, b| a.name.cmp(&b.name));
        let view_slots = slots(plain.iter().map(|v| v.name.as_str()), 1 << 23)?;
        let trigger_key = |view: &ViewDef, t: &str| format!("{}\0{t}", view.name);
        let mut trigger_keys: Vec<String> =
            plain.iter().flat_map(|v| v.triggers.iter().map(|t| trigger_key(v, &t.name))).collect();
        trigger_keys.sort();
        let trigger_slots = slots(trigger_keys.iter().map(|k| k.as_str()), 1 << 22)?;
        let mut views: Vec<ViewRel> = plain
            .into_iter()
            .map(|def| {
                let (schema, name) = split_name(&def.name);
                let (columns, writable) = views.shape(def);
                let updatable = writable.is_some();
                let updatable_columns = writable.unwrap_or_else(|| vec![false; columns.len()]);
                let oid = (VIEW_BASE + 2 * view_slots[&def.name] as i64) as i32;
                let mut triggers: Vec<TriggerRel> = def
                    .triggers
                    .iter()
                    .filter_map(|t| {
                        let parsed = crate::triggers::TriggerDef::parse(&t.source).ok()?;
                        let slot = trigger_slots[&trigger_key(def, &t.name)];
                        Some(TriggerRel {
                            oid: (VIEW_TRIGGER_BASE + slot as i64) as i32,
                            def: parsed,
                            enabled: true,
                        })
                    })
                    .collect();
                triggers.sort_by(|a, b| a.def.name.cmp(&b.def.name));
                ViewRel {
                    oid,
                    schema,
                    name,
                    def: def.clone(),
                    columns,
                    updatable,
                    updatable_columns,
                    triggers,
                }
            })
            .collect();
        views.sort_by_key(|v| v.oid);
        tables.sort_by_key(|t| t.oid);
        let mut schema_names: Vec<String> = catalog.schema_names();
        schema_names.sort();
        let schema_slots = slots(schema_names.iter().map(|s| s.as_str()), 1 << 27)?;
        let mut schemas = vec![
            (PG_CATALOG, "pg_catalog".to_string()),
            (PUBLIC, "public".to_string()),
            (INFORMATION_SCHEMA, "information_schema".to_string()),
            (CENTUM, "centum".to_string()),
        ];
        for (n, slot) in schema_slots {
            schemas.push(((SCHEMA_BASE + slot as i64) as i32, n));
        }
        schemas.sort();
        let mut seq_names = catalog.sequence_names();
        seq_names.sort();
        let seq_slots = slots(seq_names.iter().map(|s| s.as_str()), 1 << 28)?;
        let mut sequences: Vec<SequenceRel> = seq_slots
            .into_iter()
            .map(|(engine_name, slot)| {
                let (schema, name) = split_name(&engine_name);
                SequenceRel { oid: (SEQ_BASE + slot as i64) as i32, schema, name, engine_name }
            })
            .collect();
        sequences.sort_by_key(|s| s.oid);
        let sequence_defs =
            seq_names.iter().filter_map(|n| Some((n.clone(), catalog.sequence_def(n)?))).collect();
        let all_roles = catalog.roles();
        let mut role_names: Vec<&str> = all_roles.iter().map(|r| r.name.as_str()).collect();
        role_names.sort();
        let role_slots = slots(role_names.into_iter(), 1 << 26)?;
        let roles: Vec<(i32, Role)> =
            all_roles.iter().map(|r| ((ROLE_BASE + role_slots[&r.name] as i64) as i32, r.clone())).collect();
        let owner = roles.iter().find(|(_, r)| r.superuser).or(roles.first()).map_or(ROLE, |(o, _)| *o);
        // Keyed by overload (`name(types)`), so each has its own OID.
        let mut routine_names: Vec<String> = catalog.routine_entries().into_iter().map(|e| e.0).collect();
        routine_names.sort();
        let routine_slots = slots(routine_names.iter().map(|s| s.as_str()), 1 << 25)?;
        let mut routines: Vec<(i32, crate::routines::RoutineInfo)> = routine_slots
            .into_iter()
            .filter_map(|(n, slot)| {
                Some(((ROUTINE_BASE + slot as i64) as i32, crate::routines::describe(catalog, &n)?))
            })
            .collect();
        routines.sort_by_key(|r| r.0);
        let mut defs = catalog.publications();
        defs.sort_by(|a, b| a.name.cmp(&b.name));
        let pub_slots = slots(defs.iter().map(|p| p.name.as_str()), 1 << 21)?;
        let mut rel_keys: Vec<String> =
            defs.iter().flat_map(|p| p.tables.iter().map(move |t| format!("{}\0{t}", p.name))).collect();
        rel_keys.sort();
        let rel_slots = slots(rel_keys.iter().map(|s| s.as_str()), 1 << 21)?;
        let mut publications: Vec<PublicationRel> = defs
            .into_iter()
            .map(|def| PublicationRel {
                oid: (PUBLICATION_BASE + pub_slots[&def.name] as i64) as i32,
                tables: crate::publications::tables_of(catalog, &def),
                listed: def
                    .tables
                    .iter()
                    .filter(|t| db.table(t).is_ok())
                    .map(|t| {
                        let slot = rel_slots[&format!("{}\0{t}", def.name)];
                        ((PUBLICATION_REL_BASE + slot as i64) as i32, t.clone())
                    })
                    .collect(),
                def,
            })
            .collect();
        publications.sort_by_key(|p| p.oid);
        Ok(Snapshot {
            publications,
            schemas,
            tables,
            sequences,
            sequence_defs,
            roles,
            owner,
            routines,
            views,
            db: db.clone(),
            privs: catalog.global_privs(),
            comments: catalog.global_comments(),
            enums: {
                let mut e = catalog.enums();
                e.sort_by_key(|e| e.oid);
                e
            },
            composites: {
                let mut c: Vec<_> = catalog
                    .composite_entries()
                    .into_iter()
                    .filter_map(|e| crate::enums::composite_type(catalog, &e).ok().map(|t| (e, t)))
                    .collect();
                c.sort_by_key(|(e, _)| e.oid);
                c
            },
            descriptions: Default::default(),
        })
    }

    fn table(engine_name: String, info: Arc<TableInfo>) -> Result<TableRel> {
        let oid = table_oid(info.table.id())?;
        let (schema, name) = split_name(&engine_name);
        let mut defs = info.table.def().indexes;
        defs.sort_by(|a, b| a.name.cmp(&b.name));
        let index_slots = slots(defs.iter().map(|d| d.name.as_str()), 1023)?;
        let columns = info.table.columns();
        let indexes: Vec<IndexRel> = defs
            .into_iter()
            .map(|def| {
                let position = |n: &str| columns.iter().position(|x| x.name == n);
                let key_cols: Vec<usize> = def.columns.iter().map(|c| position(c).unwrap_or(0)).collect();
                let shape = info.meta.index_shapes.get(&def.name).cloned();
                // A key that is a column (hidden only for a partial index)
                // has its number; an expression, 0.
                let attnums = match &shape {
                    Some(sh) => sh
                        .keys
                        .iter()
                        .map(|k| {
                            crate::names::plain_identifier(k)
                                .and_then(|n| position(&n))
                                .map_or(0, |p| p as i16 + 1)
                        })
                        .collect(),
                    None => key_cols.iter().map(|&p| p as i16 + 1).collect(),
                };
                IndexRel { oid: oid + 1 + index_slots[&def.name] as i32, def, attnums, key_cols, shape }
            })
            .collect();
        let meta = &info.meta;
        let mut cons: Vec<(String, ConKind)> = Vec::new();
        for (i, ix) in indexes.iter().enumerate() {
            let primary = meta.primary_key.as_deref() == Some(ix.def.name.as_str());
            if primary || meta.unique.contains(&ix.def.name) {
                cons.push((ix.def.name.clone(), ConKind::Key { index: i, primary }));
            }
        }
        for (i, c) in meta.checks.iter().enumerate() {
            cons.push((c.name.clone(), ConKind::Check(i)));
        }
        for (i, fk) in meta.foreign_keys.iter().enumerate() {
            cons.push((fk.name.clone(), ConKind::Foreign(i)));
        }
        let trigger_key = |name: &str| format!("\0trigger\0{name}");
        let trigger_keys: Vec<String> = meta.triggers.iter().map(|t| trigger_key(&t.name)).collect();
        let mut sorted: Vec<&str> =
            cons.iter().map(|(n, _)| n.as_str()).chain(trigger_keys.iter().map(|k| k.as_str())).collect();
        sorted.sort();
        sorted.dedup();
        let con_slots = slots(sorted.into_iter(), 1024)?;
        let constraints = cons
            .into_iter()
            .map(|(name, kind)| Constraint { oid: oid + 1024 + con_slots[&name] as i32, name, kind })
            .collect();
        let mut triggers = Vec::new();
        for t in &meta.triggers {
            // A definition that no longer reads is left out of the catalog.
            let Ok(def) = crate::triggers::TriggerDef::parse(&t.source) else { continue };
            let oid = oid + 1024 + con_slots[&trigger_key(&t.name)] as i32;
            triggers.push(TriggerRel { oid, def, enabled: t.enabled });
        }
        triggers.sort_by(|a, b| a.def.name.cmp(&b.def.name));
        Ok(TableRel {
            oid,
            engine_name,
            schema,
            name,
            info,
            indexes,
            constraints,
            triggers,
            materialized: None,
        })
    }

    /// Every role as (oid, name, superuser, login); with none in the
    /// catalog, the session's `user` as superuser [`ROLE`].
    pub fn role_rows(&self, user: &str) -> Vec<(i32, String, bool, bool)> {
        if self.roles.is_empty() {
            return vec![(ROLE, user.to_string(), true, true)];
        }
        self.roles.iter().map(|(o, r)| (*o, r.name.clone(), r.superuser, r.login)).collect()
    }

    /// The routine with OID `oid`.
    pub fn routine(&self, oid: i32) -> Option<&crate::routines::RoutineInfo> {
        self.routines.iter().find(|r| r.0 == oid).map(|r| &r.1)
    }

    /// The stored owner and ACL of `kind` `name` (engine name).
    pub fn privs_of(&self, kind: ObjectKind, name: &str) -> ObjectPrivs {
        if kind == ObjectKind::Relation {
            if let Some(t) = self.tables.iter().find(|t| t.engine_name == name) {
                return t.info.meta.privs.clone();
            }
        }
        self.privs.get(&(kind, name.to_string())).cloned().unwrap_or_default()
    }

    /// The OID of the owner of `kind` `name`.
    pub fn owner_of(&self, kind: ObjectKind, name: &str) -> i32 {
        match self.privs_of(kind, name).owner {
            Some(o) => self.roles.iter().find(|(_, r)| r.name == o).map_or(self.owner, |(oid, _)| *oid),
            None => self.owner,
        }
    }

    /// The ACL of `kind` `name` as `aclitem[]` text; NULL while it has the
    /// default one.
    pub fn acl_of(&self, kind: ObjectKind, name: &str) -> centum_types::Value {
        match self.privs_of(kind, name).acl {
            Some(acl) => centum_types::Value::Text(crate::privileges::acl_text(&acl)),
            None => centum_types::Value::Null,
        }
    }

    /// The name of role `oid`.
    pub fn role_name(&self, oid: i32, user: &str) -> Option<String> {
        self.role_rows(user).into_iter().find(|r| r.0 == oid).map(|r| r.1)
    }

    /// Every comment: (objoid, classoid, objsubid, text), as
    /// `pg_description` holds them, in that order.
    pub fn descriptions(&self) -> &[(i32, i32, i32, String)] {
        self.descriptions.get_or_init(|| self.collect_descriptions())
    }

    fn collect_descriptions(&self) -> Vec<(i32, i32, i32, String)> {
        const PG_CLASS: i32 = 1259;
        const PG_NAMESPACE: i32 = 2615;
        const PG_PROC: i32 = 1255;
        let mut out = Vec::new();
        if !self.comments.contains_key(&(ObjectKind::Schema, "public".to_string())) {
            out.push((PUBLIC, PG_NAMESPACE, 0, PUBLIC_COMMENT.to_string()));
        }
        let comment = |kind, name: &str| self.comments.get(&(kind, name.to_string())).cloned();
        for (oid, name) in &self.schemas {
            if let Some(c) = comment(ObjectKind::Schema, name) {
                out.push((*oid, PG_NAMESPACE, 0, c));
            }
        }
        for v in &self.views {
            if let Some(c) = comment(ObjectKind::Relation, &v.def.name) {
                out.push((v.oid, PG_CLASS, 0, c));
            }
        }
        for q in &self.sequences {
            if let Some(c) = comment(ObjectKind::Sequence, &q.engine_name) {
                out.push((q.oid, PG_CLASS, 0, c));
            }
        }
        for (oid, r) in &self.routines {
            if let Some(c) = comment(ObjectKind::Routine, &r.name) {
                out.push((*oid, PG_PROC, 0, c));
            }
        }
        for t in &self.tables {
            let meta = &t.info.meta;
            if let Some(c) = &meta.comment {
                out.push((t.oid, PG_CLASS, 0, c.clone()));
            }
            for (i, c) in meta.columns.iter().enumerate() {
                if let Some(c) = &c.comment {
                    out.push((t.oid, PG_CLASS, i as i32 + 1, c.clone()));
                }
            }
            for ix in &t.indexes {
                if let Some(c) = meta.index_comments.get(&ix.def.name) {
                    out.push((ix.oid, PG_CLASS, 0, c.clone()));
                }
            }
        }
        out.sort();
        out
    }

    /// The engine name of enum or composite type `oid` (or, with `true`,
    /// of the type whose array type it is).
    pub fn user_type(&self, oid: i32) -> Option<(&str, bool)> {
        let oid = u32::try_from(oid).ok()?;
        let enums = self.enums.iter().map(|e| (e.oid, e.name.as_str()));
        let composites = self.composites.iter().map(|(e, _)| (e.oid, e.name.as_str()));
        enums.chain(composites).find_map(|(o, name)| {
            if o == oid {
                Some((name, false))
            } else if o + 1 == oid {
                Some((name, true))
            } else {
                None
            }
        })
    }

    /// The composite type whose relation (pg_class, relkind `c`) has OID
    /// `oid`.
    pub fn composite_rel(
        &self,
        oid: i32,
    ) -> Option<&(crate::catalog::TypeEntry, centum_types::CompositeType)> {
        self.composites.iter().find(|(e, _)| i64::from(e.oid) + 2 == i64::from(oid))
    }

    /// The OID of schema `name`.
    pub fn schema_oid(&self, name: &str) -> i32 {
        self.schemas.iter().find(|(_, n)| n == name).map_or(0, |(o, _)| *o)
    }

    /// The name of schema `oid`.
    pub fn schema_name(&self, oid: i32) -> Option<&str> {
        self.schemas.iter().find(|(o, _)| *o == oid).map(|(_, n)| n.as_str())
    }

    /// The relation with OID `oid`.
    pub fn rel(&self, oid: i32) -> Option<RelRef<'_>> {
        if i64::from(oid) >= VIEW_BASE {
            return self.views.iter().find(|v| v.oid == oid).map(RelRef::View);
        }
        if i64::from(oid) >= SEQ_BASE {
            return self.sequences.iter().find(|s| s.oid == oid).map(RelRef::Sequence);
        }
        let block = i64::from(oid) - FIRST_USER_OID;
        if block < 0 {
            return None;
        }
        let table_oid = oid - (block % BLOCK) as i32;
        let t = self.tables.iter().find(|t| t.oid == table_oid)?;
        if t.oid == oid {
            return Some(RelRef::Table(t));
        }
        t.indexes.iter().find(|i| i.oid == oid).map(|i| RelRef::Index(t, i))
    }

    /// The table with engine name `name`.
    pub fn table_by_name(&self, engine_name: &str) -> Option<&TableRel> {
        self.tables.iter().find(|t| t.engine_name == engine_name)
    }

    /// The constraint with OID `oid` and its table.
    pub fn constraint(&self, oid: i32) -> Option<(&TableRel, &Constraint)> {
        let t = self.block_owner(oid)?;
        t.constraints.iter().find(|c| c.oid == oid).map(|c| (t, c))
    }

    /// The table whose block of OIDs holds `oid`.
    fn block_owner(&self, oid: i32) -> Option<&TableRel> {
        let block = i64::from(oid) - FIRST_USER_OID;
        if !(0..SEQ_BASE).contains(&block) {
            return None;
        }
        let table_oid = oid - (block % BLOCK) as i32;
        self.tables.iter().find(|t| t.oid == table_oid)
    }

    /// The trigger with OID `oid`, with the schema and name of its table
    /// or view.
    pub fn trigger(&self, oid: i32) -> Option<(&str, &str, &TriggerRel)> {
        if i64::from(oid) >= VIEW_TRIGGER_BASE {
            return self.views.iter().find_map(|v| {
                v.triggers.iter().find(|x| x.oid == oid).map(|x| (v.schema.as_str(), v.name.as_str(), x))
            });
        }
        let t = self.block_owner(oid)?;
        t.triggers.iter().find(|x| x.oid == oid).map(|x| (t.schema.as_str(), t.name.as_str(), x))
    }

    /// Every trigger: the OID, schema and name of its table or view, the
    /// columns of the row it fires for, and the trigger, tables first.
    pub fn all_triggers(&self) -> Vec<(i32, &str, &str, Vec<&str>, &TriggerRel)> {
        let mut out = Vec::new();
        for t in &self.tables {
            let cols: Vec<&str> = t.info.table.columns().iter().map(|c| c.name.as_str()).collect();
            for x in &t.triggers {
                out.push((t.oid, t.schema.as_str(), t.name.as_str(), cols.clone(), x));
            }
        }
        for v in &self.views {
            let cols: Vec<&str> = v.columns.iter().map(|c| c.name.as_str()).collect();
            for x in &v.triggers {
                out.push((v.oid, v.schema.as_str(), v.name.as_str(), cols.clone(), x));
            }
        }
        out
    }

    /// The OID of routine `name`, if there is one.
    pub fn routine_oid(&self, name: &str) -> Option<i32> {
        self.routines.iter().find(|r| r.1.name == name).map(|r| r.0)
    }

    /// Every relation (tables, their indexes, sequences) as (oid, schema,
    /// name), to resolve names.
    pub fn rel_oid(&self, schema: Option<&str>, name: &str, search_path: &[String]) -> Option<i32> {
        let schemas: Vec<&str> = match schema {
            Some(s) => vec![s],
            None => search_path.iter().map(|s| s.as_str()).collect(),
        };
        for s in schemas {
            for t in &self.tables {
                if t.schema == s && t.name == name {
                    return Some(t.oid);
                }
                for ix in &t.indexes {
                    if t.schema == s && ix.def.name == name {
                        return Some(ix.oid);
                    }
                }
            }
            if let Some(q) = self.sequences.iter().find(|q| q.schema == s && q.name == name) {
                return Some(q.oid);
            }
            if let Some(v) = self.views.iter().find(|v| v.schema == s && v.name == name) {
                return Some(v.oid);
            }
        }
        None
    }
}

/// Whether an index is a hash index, and its bucket count.
pub(crate) fn hash_buckets(def: &IndexDef) -> Option<u64> {
    match def.kind {
        IndexKind::Hash { buckets } => Some(buckets),
        IndexKind::Range => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_probe_past_collisions_and_refuse_when_full() {
        let names = ["a", "b", "c"];
        let got = slots(names.iter().copied(), 3).unwrap();
        let mut used: Vec<u64> = got.values().copied().collect();
        used.sort();
        assert_eq!(used, [0, 1, 2]);
        // A name's slot does not depend on names after it in order.
        let alone = slots(["a"].into_iter(), 1 << 20).unwrap();
        let with_more = slots(["a", "zz", "zzz"].into_iter(), 1 << 20).unwrap();
        assert_eq!(alone["a"], with_more["a"]);
        assert_eq!(slots(names.iter().copied(), 2).unwrap_err().sqlstate(), "54000");
    }

    #[test]
    fn table_oids_stay_below_the_sequence_range() {
        assert_eq!(table_oid(0).unwrap(), 16384);
        assert_eq!(table_oid(1).unwrap(), 20480);
        assert!(table_oid(262_139).unwrap() < (1 << 30));
        assert_eq!(table_oid(262_140).unwrap_err().sqlstate(), "54000");
        assert_eq!(table_oid(u64::MAX).unwrap_err().sqlstate(), "54000");
    }
}
