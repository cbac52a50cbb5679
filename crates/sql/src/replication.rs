//! Logical decoding as PostgreSQL clients see it: replication slots with
//! PostgreSQL's rules and errors, and the engine's change feed (see
//! `centum_engine::feed`) written by one of two output plugins:
//! `test_decoding`'s text (what pg_recvlogical prints) or `pgoutput`'s
//! binary messages (what a PostgreSQL subscriber applies), filtered by
//! publications.
//!
//! ```text
//!  CREATE_REPLICATION_SLOT / pg_create_logical_replication_slot
//!      ── wal_level, name and plugin checked ── Slots (durable file)
//!  START_REPLICATION / pg_logical_slot_{get,peek}_changes
//!      ── ChangeFeed from the slot's confirmed position
//!      ── TestDecoding: one message per BEGIN, row change, COMMIT
//!      ── PgOutput: Begin, Relation (first use), Insert/Update/Delete of
//!         published tables, Commit; a transaction with none is skipped
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
pub const PLUGINS: [&str; 2] = ["test_decoding", "pgoutput"];

/// An output plugin with its options and what it remembers between
/// transactions.
pub enum Plugin {
    TestDecoding(TestDecoding),
    PgOutput(PgOutput),
}

impl Plugin {
    /// Plugin `name` with START_REPLICATION's `options`.
    pub fn new(name: &str, options: &[(String, Option<String>)], db: &crate::Database) -> Result<Plugin> {
        match name {
            "pgoutput" => PgOutput::new(options, db).map(Plugin::PgOutput),
            _ => TestDecoding::new(options).map(Plugin::TestDecoding),
        }
    }

    /// The messages of one transaction, each with its log position.
    pub fn messages(&mut self, txn: &ChangeTxn, out: &mut Vec<(LogPos, Vec<u8>)>) {
        match self {
            Plugin::TestDecoding(p) => p.messages(txn, out),
            Plugin::PgOutput(p) => p.messages(txn, out),
        }
    }
}

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
    let why = if db.is_replicated() {
        "replication has not started on this member of the group yet"
    } else {
        "replication slots need a data directory (the database is in memory only)"
    };
    db.slots().ok_or_else(|| Error::Other { code: "55000", message: why.into() })
}

/// Creates a logical slot whose feed starts at `at`, or at the log's end;
/// returns it.
pub fn create_slot(
    db: &centum_engine::Database,
    name: &str,
    plugin: &str,
    database: &str,
    temporary: bool,
    pid: Option<u32>,
    at: Option<LogPos>,
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
    let confirmed = match at {
        Some(at) => at,
        None => db.log_end().expect("a database with slots has a log"),
    };
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

/// Drops the slot named `name` for session `me`: 42704 if missing, 55006
/// while another session holds it (a session may drop its own temporary
/// slot).
pub fn drop_slot(db: &centum_engine::Database, name: &str, me: u32) -> Result<()> {
    let slots = slots(db)?;
    match slots.get(name) {
        None => Err(missing(name)),
        Some(Slot { active_pid: Some(pid), .. }) if pid != me => Err(active(name, pid)),
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
    /// The columns a consumer sees: all but an index's hidden key columns.
    shown: Vec<usize>,
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
    pub fn messages(&mut self, txn: &ChangeTxn, out: &mut Vec<(LogPos, Vec<u8>)>) {
        if self.skip_empty_xacts && txn.changes.is_empty() {
            return;
        }
        let xid = txn.commit_ts as u32;
        let begin = if self.include_xids { format!("BEGIN {xid}") } else { "BEGIN".into() };
        out.push((txn.start, begin.into_bytes()));
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
            out.push((txn.start, s.into_bytes()));
        }
        let mut commit = if self.include_xids { format!("COMMIT {xid}") } else { "COMMIT".into() };
        if self.include_timestamp {
            commit.push_str(&format!(
                " (at {})",
                Value::TimestampTz(centum_types::TimestampTz(commit_time(txn)))
            ));
        }
        out.push((txn.end, commit.into_bytes()));
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
        let key = key_columns(table);
        let shape = Arc::new(Shape {
            version,
            name: format!("{}.{}", crate::names::quote_ident(schema), crate::names::quote_ident(rel)),
            labels,
            types: columns.iter().map(|c| c.ty.clone()).collect(),
            key,
            shown: shown_columns(table),
        });
        self.tables.insert(table.id(), shape.clone());
        shape
    }
}

/// The positions of `table`'s columns that decoding shows: every column
/// but an index's hidden key columns.
fn shown_columns(table: &Table) -> Vec<usize> {
    let columns = table.columns();
    (0..columns.len()).filter(|&i| !crate::catalog::is_hidden_column(&columns[i].name)).collect()
}

/// The positions of `table`'s primary key columns (empty: it has none),
/// the replica identity both plugins print.
fn key_columns(table: &Table) -> Vec<usize> {
    let columns = table.columns();
    let def = table.def();
    decode_table_meta(&def.extra, columns.len())
        .ok()
        .and_then(|m| m.primary_key)
        .and_then(|pk| def.indexes.iter().find(|i| i.name == pk))
        .map(|i| i.columns.iter().filter_map(|n| columns.iter().position(|c| &c.name == n)).collect())
        .unwrap_or_default()
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
    for &i in &shape.shown {
        let v = &row[i];
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

/// `pgoutput`: PostgreSQL's logical replication messages (protocol
/// versions 1 to 3, without streaming of transactions in progress), for
/// the tables of the publications a subscriber names.
pub struct PgOutput {
    db: crate::Database,
    publications: Vec<String>,
    /// The catalog version `tables` was worked out for.
    version: u64,
    /// Per table id: what a change of it sends, as of `version`.
    tables: HashMap<u64, Arc<Published>>,
    /// Tables whose Relation message this stream has sent, with the
    /// definition it described.
    described: HashMap<u64, usize>,
}

/// What changes of one table send.
struct Published {
    /// [`crate::catalog::PUBLISH_INSERT`] etc. over the publications that
    /// carry it (0: none does).
    publish: u8,
    /// The table definition this was made from.
    version: usize,
    oid: u32,
    /// Its Relation message.
    relation: Vec<u8>,
    /// The primary key's columns.
    key: Vec<usize>,
    /// The columns a subscriber sees (see [`shown_columns`]).
    shown: Vec<usize>,
}

/// Appends a NUL-terminated string.
fn put_cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

impl PgOutput {
    /// The plugin with START_REPLICATION's options: `proto_version` (1 to
    /// 3) and `publication_names` are required; `binary`, `messages`,
    /// `streaming` and `two_phase` are accepted (values go as text, and
    /// transactions are sent once committed).
    pub fn new(options: &[(String, Option<String>)], db: &crate::Database) -> Result<PgOutput> {
        let bad = |m: String| Error::Other { code: "22023", message: m };
        let mut version = None;
        let mut names = None;
        for (name, value) in options {
            let value = value.as_deref().unwrap_or_default();
            match name.as_str() {
                "proto_version" => {
                    let v: u32 = value
                        .trim()
                        .parse()
                        .map_err(|_| bad(format!("invalid proto_version \"{value}\"")))?;
                    if v == 0 || v > 3 {
                        return Err(Error::Other {
                            code: "0A000",
                            message: format!(
                                "client sent proto_version={v} but server only supports protocol 3 or lower"
                            ),
                        });
                    }
                    version = Some(v);
                }
                "publication_names" => names = Some(identifier_list(value)?),
                "binary" | "messages" | "streaming" | "two_phase" | "origin" => {}
                other => return Err(bad(format!("unrecognized pgoutput option: {other}"))),
            }
        }
        if version.is_none() {
            return Err(bad("proto_version option missing".into()));
        }
        let publications = names.ok_or_else(|| bad("publication_names parameter missing".into()))?;
        crate::publications::named(db.catalog(), &publications)?;
        Ok(PgOutput {
            db: db.clone(),
            publications,
            version: u64::MAX,
            tables: HashMap::new(),
            described: HashMap::new(),
        })
    }

    /// The messages of one transaction: none if it changed no published
    /// table, as PostgreSQL 15 skips empty transactions.
    pub fn messages(&mut self, txn: &ChangeTxn, out: &mut Vec<(LogPos, Vec<u8>)>) {
        let now = self.db.catalog().version();
        if now != self.version {
            self.tables.clear();
            self.version = now;
        }
        let (start, end) = (lsn(txn.start), lsn(txn.end));
        let time = commit_time(txn);
        let mut begun = false;
        for c in &txn.changes {
            let p = self.published(&c.table);
            use crate::catalog::{PUBLISH_DELETE, PUBLISH_INSERT, PUBLISH_UPDATE};
            let wanted = match c.kind {
                ChangeKind::Insert => PUBLISH_INSERT,
                ChangeKind::Update => PUBLISH_UPDATE,
                ChangeKind::Delete => PUBLISH_DELETE,
            };
            if p.publish & wanted == 0 {
                continue;
            }
            if !begun {
                let mut m = vec![b'B'];
                m.extend_from_slice(&start.to_be_bytes());
                m.extend_from_slice(&time.to_be_bytes());
                m.extend_from_slice(&(txn.commit_ts as u32).to_be_bytes());
                out.push((txn.start, m));
                begun = true;
            }
            let id = c.table.id();
            if self.described.get(&id) != Some(&p.version) {
                out.push((txn.start, p.relation.clone()));
                self.described.insert(id, p.version);
            }
            let mut m = Vec::with_capacity(64);
            match c.kind {
                ChangeKind::Insert => {
                    m.push(b'I');
                    m.extend_from_slice(&p.oid.to_be_bytes());
                    m.push(b'N');
                    tuple_data(&mut m, c.new.as_deref().unwrap_or_default(), &p.shown, None);
                }
                ChangeKind::Update => {
                    m.push(b'U');
                    m.extend_from_slice(&p.oid.to_be_bytes());
                    if let (Some(o), Some(n)) = (&c.old, &c.new) {
                        if p.key.iter().any(|&k| o[k] != n[k]) {
                            m.push(b'K');
                            tuple_data(&mut m, o, &p.shown, Some(&p.key));
                        }
                    }
                    m.push(b'N');
                    tuple_data(&mut m, c.new.as_deref().unwrap_or_default(), &p.shown, None);
                }
                ChangeKind::Delete => {
                    // Without the old row (or a key) there is nothing to
                    // say which row went.
                    let Some(old) = c.old.as_deref().filter(|_| !p.key.is_empty()) else { continue };
                    m.push(b'D');
                    m.extend_from_slice(&p.oid.to_be_bytes());
                    m.push(b'K');
                    tuple_data(&mut m, old, &p.shown, Some(&p.key));
                }
            }
            out.push((txn.start, m));
        }
        if begun {
            let mut m = vec![b'C', 0];
            m.extend_from_slice(&start.to_be_bytes());
            m.extend_from_slice(&end.to_be_bytes());
            m.extend_from_slice(&time.to_be_bytes());
            out.push((txn.end, m));
        }
    }

    /// What changes of `table` send, worked out once per catalog version
    /// and table definition.
    fn published(&mut self, table: &Arc<Table>) -> Arc<Published> {
        let version = Arc::as_ptr(table) as usize;
        if let Some(p) = self.tables.get(&table.id()).filter(|p| p.version == version) {
            return p.clone();
        }
        let name = table.name();
        let publish = if name.ends_with("$rewrite") {
            0
        } else {
            self.db.catalog().publish_bits(&name, |p| self.publications.contains(&p.name))
        };
        let columns = table.columns();
        let key = key_columns(table);
        let oid = crate::system::snapshot::table_oid(table.id()).unwrap_or(0) as u32;
        let (schema, rel) = crate::triggers::schema_and_name(&name);
        let mut relation = vec![b'R'];
        relation.extend_from_slice(&oid.to_be_bytes());
        put_cstr(&mut relation, schema);
        put_cstr(&mut relation, rel);
        relation.push(if key.is_empty() { b'n' } else { b'd' });
        let shown = shown_columns(table);
        relation.extend_from_slice(&(shown.len() as u16).to_be_bytes());
        for &i in &shown {
            let c = &columns[i];
            relation.push(u8::from(key.contains(&i)));
            put_cstr(&mut relation, &c.name);
            relation.extend_from_slice(&(crate::system::types::oid_of(&c.ty) as u32).to_be_bytes());
            relation.extend_from_slice(&(-1i32).to_be_bytes());
        }
        let p = Arc::new(Published { publish, version, oid, relation, key, shown });
        self.tables.insert(table.id(), p.clone());
        p
    }
}

/// TupleData: the `shown` columns' values as text, or only `only`'s with
/// the others null (an old key).
fn tuple_data(m: &mut Vec<u8>, row: &[Value], shown: &[usize], only: Option<&[usize]>) {
    use std::io::Write as _;
    m.extend_from_slice(&(shown.len() as u16).to_be_bytes());
    for &i in shown {
        let v = &row[i];
        if v.is_null() || only.is_some_and(|o| !o.contains(&i)) {
            m.push(b'n');
            continue;
        }
        m.push(b't');
        let at = m.len();
        m.extend_from_slice(&[0; 4]);
        match v {
            Value::Text(s) => m.extend_from_slice(s.as_bytes()),
            v => {
                let _ = write!(m, "{v}");
            }
        }
        let len = (m.len() - at - 4) as u32;
        m[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }
}

/// A comma-separated list of identifiers, quoted ones as written and bare
/// ones folded to lower case (`publication_names`).
fn identifier_list(text: &str) -> Result<Vec<String>> {
    let bad = || Error::Other { code: "22023", message: "invalid publication_names syntax".into() };
    let mut out = Vec::new();
    let mut chars = text.trim().chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut name = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        name.push('"');
                    }
                    Some('"') => break,
                    Some(c) => name.push(c),
                    None => return Err(bad()),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' || c.is_whitespace() {
                    break;
                }
                name.extend(c.to_lowercase());
                chars.next();
            }
        }
        if name.is_empty() {
            return Err(bad());
        }
        out.push(name);
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => return Ok(out),
            Some(',') => {}
            Some(_) => return Err(bad()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publication_names_read_as_pgoutput_reads_them() {
        assert_eq!(identifier_list("\"pub\"").unwrap(), vec!["pub"]);
        assert_eq!(identifier_list("a, \"B c\",D").unwrap(), vec!["a", "B c", "d"]);
        assert_eq!(identifier_list("\"x\"\"y\"").unwrap(), vec!["x\"y"]);
        assert!(identifier_list("a,,b").is_err());
        assert!(identifier_list("").is_err());
    }

    #[test]
    fn tuple_data_writes_text_nulls_and_key_only_columns() {
        let mut m = Vec::new();
        tuple_data(
            &mut m,
            &[Value::Integer(7), Value::Text("ab".into()), Value::Null],
            &[0, 1, 2],
            Some(&[0, 1]),
        );
        assert_eq!(m, b"\x00\x03t\x00\x00\x00\x017t\x00\x00\x00\x02abn");
        m.clear();
        tuple_data(&mut m, &[Value::Integer(7), Value::Text("ab".into())], &[0, 1], Some(&[0]));
        assert_eq!(m, b"\x00\x02t\x00\x00\x00\x017n");
        // A hidden index key column is not sent.
        m.clear();
        tuple_data(
            &mut m,
            &[Value::Integer(7), Value::Text("x".into()), Value::Text("ab".into())],
            &[0, 2],
            None,
        );
        assert_eq!(m, b"\x00\x02t\x00\x00\x00\x017t\x00\x00\x00\x02ab");
    }
}

/// The logical decoding functions a query calls in FROM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlCall {
    /// `pg_create_logical_replication_slot(name, plugin [, temporary [,
    /// twophase]])`: one row (slot_name, lsn).
    CreateSlot,
    /// `pg_logical_slot_{get,peek}[_binary]_changes(name, upto_lsn,
    /// upto_nchanges, VARIADIC options)`: rows (lsn, xid, data); `get`
    /// confirms what it returned, `peek` leaves the slot where it was.
    Changes { advance: bool, binary: bool },
}

impl SqlCall {
    /// The call function `name` makes, if it is one of them.
    pub fn named(name: &str) -> Option<SqlCall> {
        Some(match name {
            "pg_create_logical_replication_slot" => SqlCall::CreateSlot,
            "pg_logical_slot_get_changes" => SqlCall::Changes { advance: true, binary: false },
            "pg_logical_slot_peek_changes" => SqlCall::Changes { advance: false, binary: false },
            "pg_logical_slot_get_binary_changes" => SqlCall::Changes { advance: true, binary: true },
            "pg_logical_slot_peek_binary_changes" => SqlCall::Changes { advance: false, binary: true },
            _ => return None,
        })
    }

    /// The function's name.
    pub fn name(self) -> &'static str {
        match self {
            SqlCall::CreateSlot => "pg_create_logical_replication_slot",
            SqlCall::Changes { advance: true, binary: false } => "pg_logical_slot_get_changes",
            SqlCall::Changes { advance: false, binary: false } => "pg_logical_slot_peek_changes",
            SqlCall::Changes { advance: true, binary: true } => "pg_logical_slot_get_binary_changes",
            SqlCall::Changes { advance: false, binary: true } => "pg_logical_slot_peek_binary_changes",
        }
    }

    /// Its result columns.
    pub fn columns(self) -> Vec<(&'static str, DataType)> {
        match self {
            SqlCall::CreateSlot => vec![("slot_name", DataType::Text), ("lsn", DataType::Text)],
            SqlCall::Changes { binary, .. } => vec![
                ("lsn", DataType::Text),
                ("xid", DataType::BigInt),
                ("data", if binary { DataType::Bytea } else { DataType::Text }),
            ],
        }
    }

    /// Runs the call with `args` for session `pid` of `database`: its
    /// rows.
    pub fn run(
        self,
        db: &centum_engine::Database,
        args: &[Value],
        pid: u32,
        database: &str,
    ) -> Result<Vec<Vec<Value>>> {
        let text = |i: usize, what: &str| match args.get(i) {
            Some(Value::Null) | None => {
                Err(Error::Other { code: "22004", message: format!("{what} must not be null") })
            }
            Some(v) => Ok(v.to_string()),
        };
        match self {
            SqlCall::CreateSlot => {
                let (name, plugin) = (text(0, "slot name")?, text(1, "plugin name")?);
                if matches!(args.get(2), Some(Value::Boolean(true))) {
                    return Err(Error::unsupported("temporary replication slots created by a function"));
                }
                let slot = create_slot(db, &name, &plugin, database, false, Some(pid), None)?;
                Ok(vec![vec![Value::Text(slot.name), Value::Text(lsn_text(slot.confirmed))]])
            }
            SqlCall::Changes { advance, binary } => {
                let name = text(0, "slot name")?;
                let upto_lsn = match args.get(1) {
                    Some(Value::Null) | None => None,
                    Some(v) => Some(parse_lsn(&v.to_string())?),
                };
                let upto_changes = match args.get(2).map(|v| v.clone().coerce_to(&DataType::BigInt)) {
                    Some(Ok(Value::BigInt(n))) => Some(n),
                    Some(Err(e)) => return Err(e.into()),
                    _ => None,
                };
                let rest = &args[args.len().min(3)..];
                if !rest.len().is_multiple_of(2) {
                    return Err(Error::Other {
                        code: "2202E",
                        message: "array must have even number of elements".into(),
                    });
                }
                let options: Vec<(String, Option<String>)> = rest
                    .chunks(2)
                    .map(|p| (p[0].to_string(), (!p[1].is_null()).then(|| p[1].to_string())))
                    .collect();
                if !db.is_logical() {
                    return Err(Error::Other {
                        code: "55000",
                        message: "logical decoding requires wal_level >= logical (start the server with --wal-level logical)"
                            .into(),
                    });
                }
                let slot = acquire_slot(db, &name, pid)?;
                let rows = changes(db, &slot, upto_lsn, upto_changes, &options, advance, binary);
                release_slot(db, &name);
                rows
            }
        }
    }
}

/// The changes of `slot` from its confirmed position, up to `upto_lsn`
/// and about `upto_changes` rows (whole transactions), as rows; with
/// `advance`, the slot is confirmed past them.
fn changes(
    db: &centum_engine::Database,
    slot: &Slot,
    upto_lsn: Option<u64>,
    upto_changes: Option<i64>,
    options: &[(String, Option<String>)],
    advance: bool,
    binary: bool,
) -> Result<Vec<Vec<Value>>> {
    if slot.plugin != "test_decoding" {
        return Err(Error::unsupported(format!(
            "decoding a slot of plugin \"{}\" through SQL functions (stream it with START_REPLICATION)",
            slot.plugin
        )));
    }
    let mut plugin = TestDecoding::new(options)?;
    let mut rows = Vec::new();
    let mut last = slot.confirmed;
    centum_engine::blocking::section(|| -> Result<()> {
        let mut feed = db.changes(slot.confirmed)?;
        'read: loop {
            let txns = feed.poll()?;
            if txns.is_empty() {
                break;
            }
            for t in txns.iter().filter(|t| t.end > slot.confirmed) {
                let full = upto_changes.is_some_and(|n| n > 0 && rows.len() as i64 >= n);
                if full || upto_lsn.is_some_and(|u| lsn(t.end) > u) {
                    break 'read;
                }
                let mut messages = Vec::new();
                plugin.messages(t, &mut messages);
                let xid = Value::BigInt(i64::from(t.commit_ts as u32));
                for (pos, bytes) in messages {
                    let data = if binary {
                        Value::Bytea(bytes)
                    } else {
                        Value::Text(String::from_utf8_lossy(&bytes).into_owned())
                    };
                    rows.push(vec![Value::Text(lsn_text(pos)), xid.clone(), data]);
                }
                last = t.end;
            }
        }
        if advance && last > slot.confirmed {
            slots(db)?.confirm(&slot.name, last).map_err(centum_engine::Error::from)?;
        }
        Ok(())
    })?;
    Ok(rows)
}
