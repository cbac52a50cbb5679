//! Logical decoding as PostgreSQL clients see it: replication slots with
//! PostgreSQL's rules and errors, and the engine's change feed (see
//! `centum_engine::feed`) written in the text format of PostgreSQL's
//! `test_decoding` plugin.
//!
//! ```text
//!  CREATE_REPLICATION_SLOT / pg_create_logical_replication_slot
//!      ── wal_level, name and plugin checked ── Slots (durable file)
//!  START_REPLICATION / pg_logical_slot_{get,peek}_changes
//!      ── ChangeFeed from the slot's confirmed position
//!      ── TestDecoding: one message per BEGIN, row change, COMMIT
//! ```
//!
//! A message carries a log position as its LSN: BEGIN and the row changes
//! that of the transaction's start, COMMIT that of its end, so a consumer
//! that confirms a COMMIT's LSN resumes with the next transaction, and one
//! that confirms less gets the whole transaction again.
//!
//! Rows are shown as `test_decoding` shows them under the default replica
//! identity: an insert's new row; an update's new row, with ` old-key:`
//! first when the primary key changed; a delete's primary key; and
//! `(no-tuple-data)` for a table without a primary key.

use crate::catalog::decode_table_meta;
use crate::error::{Error, Result};
use centum_engine::storage::{lsn, LogPos, Slot};
use centum_engine::{ChangeKind, ChangeTxn, Table};
use centum_types::{DataType, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The output plugins a slot may name.
pub const PLUGINS: [&str; 1] = ["test_decoding"];

/// An LSN as PostgreSQL prints one (`16/B374D848`).
pub fn lsn_text(pos: LogPos) -> String {
    let l = lsn(pos);
    format!("{:X}/{:X}", l >> 32, l as u32)
}

/// Reads an LSN (`16/B374D848`).
pub fn parse_lsn(text: &str) -> Result<u64> {
    let bad = || Error::Other {
        code: "22P02",
        message: format!("invalid input syntax for type pg_lsn: \"{text}\""),
    };
    let (hi, lo) = text.trim().split_once('/').ok_or_else(bad)?;
    let hi = u32::from_str_radix(hi, 16).map_err(|_| bad())?;
    let lo = u32::from_str_radix(lo, 16).map_err(|_| bad())?;
    Ok(u64::from(hi) << 32 | u64::from(lo))
}

fn slots(db: &centum_engine::Database) -> Result<&Arc<centum_engine::storage::Slots>> {
    db.slots().ok_or_else(|| Error::Other {
        code: "55000",
        message: "replication slots need a data directory (the database is in memory only)".into(),
    })
}

/// Creates a logical slot whose feed starts at the log's end; returns it.
pub fn create_slot(
    db: &centum_engine::Database,
    name: &str,
    plugin: &str,
    database: &str,
    temporary: bool,
    pid: Option<u32>,
) -> Result<Slot> {
    if !db.is_logical() {
        return Err(Error::Other {
            code: "55000",
            message:
                "logical decoding requires wal_level >= logical (start the server with --wal-level logical)"
                    .into(),
        });
    }
    check_slot_name(name)?;
    if !PLUGINS.contains(&plugin) {
        return Err(Error::Other {
            code: "58P01",
            message: format!("could not access file \"{plugin}\": No such file or directory"),
        });
    }
    let slots = slots(db)?;
    let confirmed = db.log_end().expect("a database with slots has a log");
    let slot = Slot {
        name: name.into(),
        plugin: plugin.into(),
        database: database.into(),
        confirmed,
        temporary,
        active_pid: if temporary { pid } else { None },
    };
    if !slots.create(slot.clone()).map_err(centum_engine::Error::from)? {
        return Err(Error::Duplicate {
            code: "42710",
            message: format!("replication slot \"{name}\" already exists"),
        });
    }
    Ok(slot)
}

/// PostgreSQL's rule for slot names: 1 to 63 lower-case letters, digits
/// and underscores.
fn check_slot_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::Other {
            code: "42602",
            message: format!("replication slot name \"{name}\" is too short"),
        });
    }
    if name.len() > 63 {
        return Err(Error::Other {
            code: "42602",
            message: format!("replication slot name \"{name}\" is too long"),
        });
    }
    if !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
        return Err(Error::Other {
            code: "42602",
            message: format!("replication slot name \"{name}\" contains invalid character"),
        });
    }
    Ok(())
}

/// The slot named `name`, for use by session `pid`: 42704 if missing,
/// 55006 if another session streams from it.
pub fn acquire_slot(db: &centum_engine::Database, name: &str, pid: u32) -> Result<Slot> {
    let slots = slots(db)?;
    let slot = slots.get(name).ok_or_else(|| missing(name))?;
    if !slots.set_active(name, Some(pid)) {
        let other = slots.get(name).and_then(|s| s.active_pid).unwrap_or(0);
        return Err(active(name, other));
    }
    Ok(slot)
}

/// Lets go of a slot [`acquire_slot`] took. A temporary slot stays its
/// session's until the session ends, as in PostgreSQL.
pub fn release_slot(db: &centum_engine::Database, name: &str) {
    if let Some(slots) = db.slots() {
        if slots.get(name).is_some_and(|s| !s.temporary) {
            slots.set_active(name, None);
        }
    }
}

/// Drops the slot named `name`: 42704 if missing, 55006 while a session
/// streams from it.
pub fn drop_slot(db: &centum_engine::Database, name: &str) -> Result<()> {
    let slots = slots(db)?;
    match slots.get(name) {
        None => Err(missing(name)),
        Some(Slot { active_pid: Some(pid), .. }) => Err(active(name, pid)),
        Some(_) => {
            slots.drop_slot(name).map_err(centum_engine::Error::from)?;
            Ok(())
        }
    }
}

fn missing(name: &str) -> Error {
    Error::UndefinedObject(format!("replication slot \"{name}\" does not exist"))
}

fn active(name: &str, pid: u32) -> Error {
    Error::Other { code: "55006", message: format!("replication slot \"{name}\" is active for PID {pid}") }
}

/// The options of `test_decoding`.
#[derive(Debug, Clone)]
pub struct TestDecoding {
    include_xids: bool,
    include_timestamp: bool,
    skip_empty_xacts: bool,
    /// Per table: its name as printed, and what its columns print as.
    tables: HashMap<u64, Arc<Shape>>,
}

/// How one table's rows print.
#[derive(Debug)]
struct Shape {
    /// The table definition this was made from (a changed table is read
    /// again).
    version: usize,
    name: String,
    /// `name[type]:` per column.
    labels: Vec<String>,
    types: Vec<DataType>,
    /// The primary key's columns (empty: none).
    key: Vec<usize>,
}

impl TestDecoding {
    /// The plugin with `options` (name, value) as START_REPLICATION or
    /// pg_logical_slot_get_changes give them.
    pub fn new(options: &[(String, Option<String>)]) -> Result<TestDecoding> {
        let mut d = TestDecoding {
            include_xids: true,
            include_timestamp: false,
            skip_empty_xacts: false,
            tables: HashMap::new(),
        };
        for (name, value) in options {
            let flag = match value.as_deref().map(str::to_ascii_lowercase).as_deref() {
                None | Some("1" | "on" | "true" | "t" | "yes" | "y") => true,
                Some("0" | "off" | "false" | "f" | "no" | "n") => false,
                Some(_) => {
                    return Err(Error::Other {
                        code: "22023",
                        message: format!(
                            "could not parse value \"{}\" for parameter \"{name}\"",
                            value.as_deref().unwrap_or_default()
                        ),
                    })
                }
            };
            match name.as_str() {
                "include-xids" => d.include_xids = flag,
                "include-timestamp" => d.include_timestamp = flag,
                "skip-empty-xacts" => d.skip_empty_xacts = flag,
                // Accepted and without effect here: every change is
                // decoded, none is streamed before its commit.
                "include-rewrites" | "only-local" | "stream-changes" | "force-binary" => {}
                _ => {
                    return Err(Error::Other {
                        code: "22023",
                        message: format!(
                            "option \"{name}\" = \"{}\" is unknown",
                            value.as_deref().unwrap_or("(null)")
                        ),
                    })
                }
            }
        }
        Ok(d)
    }

    /// The messages of one transaction, each with its log position.
    pub fn messages(&mut self, txn: &ChangeTxn, out: &mut Vec<(LogPos, String)>) {
        if self.skip_empty_xacts && txn.changes.is_empty() {
            return;
        }
        let xid = txn.commit_ts as u32;
        out.push((txn.start, if self.include_xids { format!("BEGIN {xid}") } else { "BEGIN".into() }));
        for c in &txn.changes {
            let shape = self.shape(&c.table);
            let mut s = format!("table {}:", shape.name);
            match c.kind {
                ChangeKind::Insert => {
                    s.push_str(" INSERT:");
                    tuple(&mut s, &shape, c.new.as_deref(), None);
                }
                ChangeKind::Update => {
                    s.push_str(" UPDATE:");
                    let key_changed = match (&c.old, &c.new) {
                        (Some(o), Some(n)) => shape.key.iter().any(|&k| o[k] != n[k]),
                        _ => false,
                    };
                    if key_changed {
                        s.push_str(" old-key:");
                        tuple(&mut s, &shape, c.old.as_deref(), Some(&shape.key));
                        s.push_str(" new-tuple:");
                    }
                    tuple(&mut s, &shape, c.new.as_deref(), None);
                }
                ChangeKind::Delete => {
                    s.push_str(" DELETE:");
                    let old = c.old.as_deref().filter(|_| !shape.key.is_empty());
                    tuple(&mut s, &shape, old, Some(&shape.key));
                }
            }
            out.push((txn.start, s));
        }
        let mut commit = if self.include_xids { format!("COMMIT {xid}") } else { "COMMIT".into() };
        if self.include_timestamp {
            commit.push_str(&format!(
                " (at {})",
                Value::TimestampTz(centum_types::TimestampTz(commit_time(txn)))
            ));
        }
        out.push((txn.end, commit));
    }

    fn shape(&mut self, table: &Arc<Table>) -> Arc<Shape> {
        let version = Arc::as_ptr(table) as usize;
        if let Some(s) = self.tables.get(&table.id()).filter(|s| s.version == version) {
            return s.clone();
        }
        let name = table.name();
        let (schema, rel) = crate::triggers::schema_and_name(&name);
        let columns = table.columns();
        let labels = columns
            .iter()
            .map(|c| {
                let ty = crate::system::types::format_type(crate::system::types::oid_of(&c.ty), None);
                format!("{}[{ty}]:", crate::names::quote_ident(&c.name))
            })
            .collect();
        let def = table.def();
        let key = decode_table_meta(&def.extra, columns.len())
            .ok()
            .and_then(|m| m.primary_key)
            .and_then(|pk| def.indexes.iter().find(|i| i.name == pk).cloned())
            .map(|i| i.columns.iter().filter_map(|n| columns.iter().position(|c| &c.name == n)).collect())
            .unwrap_or_default();
        let shape = Arc::new(Shape {
            version,
            name: format!("{}.{}", crate::names::quote_ident(schema), crate::names::quote_ident(rel)),
            labels,
            types: columns.iter().map(|c| c.ty.clone()).collect(),
            key,
        });
        self.tables.insert(table.id(), shape.clone());
        shape
    }
}

/// The commit time PostgreSQL would print: Centum's commit timestamps are
/// a logical clock, not a time of day, so this is the time of decoding.
fn commit_time(_txn: &ChangeTxn) -> i64 {
    centum_types::TimestampTz::now().0
}

/// Appends ` name[type]:value` for the row's columns (only `only`'s, if
/// given), or ` (no-tuple-data)`.
fn tuple(s: &mut String, shape: &Shape, row: Option<&[Value]>, only: Option<&[usize]>) {
    let Some(row) = row else {
        s.push_str(" (no-tuple-data)");
        return;
    };
    for (i, v) in row.iter().enumerate() {
        if only.is_some_and(|o| !o.contains(&i)) {
            continue;
        }
        s.push(' ');
        s.push_str(&shape.labels[i]);
        literal(s, &shape.types[i], v);
    }
}

/// A value as `test_decoding` prints it: numbers as they are, booleans as
/// true/false, everything else quoted.
fn literal(s: &mut String, ty: &DataType, v: &Value) {
    use std::fmt::Write as _;
    match (ty, v) {
        (_, Value::Null) => s.push_str("null"),
        (_, Value::Boolean(b)) => s.push_str(if *b { "true" } else { "false" }),
        (DataType::SmallInt | DataType::Integer | DataType::BigInt | DataType::Oid | DataType::Double, _)
        | (DataType::Numeric { .. }, _) => {
            let _ = write!(s, "{v}");
        }
        _ => {
            s.push('\'');
            let from = s.len();
            let _ = write!(s, "{v}");
            if s[from..].contains('\'') {
                let doubled = s[from..].replace('\'', "''");
                s.truncate(from);
                s.push_str(&doubled);
            }
            s.push('\'');
        }
    }
}
