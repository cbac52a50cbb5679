//! Durability, the engine's side: what a commit writes to the redo log,
//! what a schema change writes, and how a data directory becomes tables,
//! versions and indexes again. The log, the checkpoint files and recovery's
//! file handling are the `centum-storage` crate's; this module decides
//! *what* goes into them.
//!
//! ```text
//!  commit (Preparing, ts) ── redo record: for each SCHEMA_AND_DATA write
//!      │                        insert  (table id, seq = version's op number, row image)
//!      │                        delete  (table id, creator's commit ts, creator's op number)
//!      ▼                     ── group commit, fdatasync ── then the commit point
//!  DDL ── catalog image (every table, see `catalog`) as a schema record
//!
//!  open(data dir) ── newest manifest + log tail (storage)
//!      ── catalog image ── tables and empty indexes
//!      ── rows from checkpoint files and the tail, several threads at once:
//!         each becomes a version (begin = its commit ts, op = its seq)
//!         linked into the scan list and every index as it arrives
//!      ── clock restarts above the largest commit ts
//! ```
//!
//! A row version's identity on disk is (table id, commit timestamp of its
//! creator, the creator's operation number), which the version itself
//! carries in its begin field and its op number: a delete names the version
//! it ends without any lookup, and recovery rebuilds versions that carry the
//! same identity. Versions a transaction both creates and replaces are
//! never logged at all. SCHEMA_ONLY tables appear in catalog images but
//! never in a redo record.

pub(crate) mod catalog;
pub mod replicate;
pub mod standby;

use crate::error::{Error, Result};
use crate::mvcc::transaction::{TxnInner, WriteKind};
use crate::mvcc::txn_table::{TxnState, TxnTable};
use crate::mvcc::visibility::{self, Begin};
use crate::mvcc::TxnId;
use crate::row::version::VersionPtr;
use crate::schema::Durability;
use crate::sync::Ordering::SeqCst;
use crate::table::Table;
use catalog::{CatalogImage, TableImage};
use centum_storage::{LoadStats, Record, Recovery};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The redo record of a transaction committing at `ts`, or `None` when it
/// changed no SCHEMA_AND_DATA table. With `logical`, every delete carries
/// the image of the version it ends, and a delete that an update made says
/// so, its new version being the next insert of its table in the record.
/// `canonical` gives the log's name for a version's creator timestamp
/// (see `Shared::canonical_ts`).
pub(crate) fn redo_record(
    inner: &TxnInner,
    txns: &TxnTable,
    me: TxnId,
    ts: u64,
    schema: Option<&[u8]>,
    logical: bool,
    canonical: &dyn Fn(u64) -> u64,
) -> Result<Option<Record>> {
    let mut rec: Option<Record> = None;
    // The whole record in one buffer: `admit_record` has already weighed
    // its bytes against the memory limit.
    let reserve = 256 + schema.map_or(0, <[u8]>::len) + inner.redo_bytes;
    // A schema change of the transaction goes first: the rows after it
    // may belong to tables it creates.
    if let Some(image) = schema {
        rec.get_or_insert_with(|| Record::with_capacity(ts, reserve)).schema(image);
    }
    // A version this transaction made and then replaced or deleted has its
    // end field holding our id; it never existed for anyone else.
    let replaced_by_me = |v: VersionPtr| v.end().load(SeqCst) == me.raw();
    // Logical: a committed version this transaction replaced, then
    // replaced again, is logged as deleted where its last replacement is
    // logged, so the update reads as one (keyed by that replacement).
    // Keyed by the replacement's address; empty unless rows are replaced
    // twice.
    let mut carried: HashMap<usize, (u64, u64, u32, VersionPtr)> = HashMap::new();
    for &(t, w) in inner.writes.iter() {
        let table = &inner.tables[t as usize];
        if table.durability != Durability::SchemaAndData {
            continue;
        }
        let (old, new) = match w {
            WriteKind::Insert(n) => (None, Some(n)),
            WriteKind::Update(o, n) => (Some(o), Some(n)),
            WriteKind::Delete(o) => (Some(o), None),
        };
        let rec = rec.get_or_insert_with(|| Record::with_capacity(ts, reserve));
        let new = new.filter(|&n| !replaced_by_me(n));
        let lives_on = matches!(w, WriteKind::Update(..));
        if let Some(o) = old {
            let created = match visibility::begin(txns, o, me) {
                // Named as the log names it: a member that applied its
                // record late knows it by another timestamp.
                Begin::Committed(created) => Some(canonical(created)),
                // Made by a transaction whose record is already in the log,
                // ahead of this one (a commit dependency).
                Begin::Pending(_, TxnState::Logged(created)) => Some(created),
                // Made by this transaction: its insert is not logged either.
                Begin::Mine => None,
                // A logged creator that aborted since: its record's write
                // failed, so this commit must fail too.
                Begin::Aborted => return Err(Error::Serialization(crate::db::DEPENDENCY_FAILED)),
                // A version can only be replaced once its creator committed
                // or logged.
                Begin::Pending(..) => {
                    return Err(Error::Internal("a replaced version has no committed creator".into()));
                }
            };
            match created {
                Some(created) if !logical => rec.delete(table.id, created, o.header().stmt),
                Some(created) if lives_on && new.is_none() => {
                    if let WriteKind::Update(_, n) = w {
                        carried.insert(n.word(), (table.id, created, o.header().stmt, o));
                    }
                }
                Some(created) => rec.delete_image(table.id, created, o.header().stmt, o.data(), lives_on),
                None if logical => {
                    if let Some((id, created, stmt, first)) = carried.remove(&o.word()) {
                        match (w, new) {
                            (WriteKind::Update(_, n), None) => {
                                carried.insert(n.word(), (id, created, stmt, first));
                            }
                            _ => rec.delete_image(table.id, created, stmt, first.data(), new.is_some()),
                        }
                    }
                }
                None => {}
            }
        }
        if let Some(n) = new {
            rec.insert(table.id, n.header().stmt, n.data());
        }
    }
    // Every replacement chain ends in the write set; should one not, the
    // version it started from is still gone, and logged as deleted.
    for (table, created, stmt, first) in carried.into_values() {
        if let Some(rec) = rec.as_mut() {
            rec.delete_image(table, created, stmt, first.data(), false);
        }
    }
    Ok(rec)
}

/// The catalog image of `tables` (by id, in any order) and the
/// database-wide extra bytes.
pub(crate) fn catalog_image(mut tables: Vec<TableImage>, next_table_id: u64, extra: &[u8]) -> Vec<u8> {
    tables.sort_by_key(|t| t.id);
    catalog::encode(&CatalogImage { next_table_id, tables, extra: extra.to_vec() })
}

/// Decodes the catalog image recovery found.
pub(crate) fn read_catalog(bytes: &[u8]) -> Result<CatalogImage> {
    catalog::decode(bytes)
        .map_err(|why| Error::Storage { code: "XX001", message: format!("catalog image: {why}") })
}

/// Hands every recovered row to its table: a committed version linked into
/// the scan list and every index, from the loader's threads at once (the
/// scan list and both kinds of index take concurrent inserts). Rows of
/// tables the catalog no longer has (dropped ones) are skipped; a row that
/// does not fit its table's layout stops recovery.
pub(crate) fn load_rows(recovery: &Recovery, tables: &HashMap<u64, Arc<Table>>) -> Result<LoadStats> {
    let sets: HashMap<u64, _> = tables
        .iter()
        .filter(|(_, t)| t.durability == Durability::SchemaAndData)
        .map(|(&id, t)| (id, (t.clone(), t.indexes.load_full())))
        .collect();
    let bad: Mutex<Option<String>> = Mutex::new(None);
    let stats = recovery.load(&|row| {
        let Some((table, set)) = sets.get(&row.id.table) else { return };
        if !table.layout.is_well_formed(row.data) {
            let mut bad = bad.lock().unwrap_or_else(|p| p.into_inner());
            bad.get_or_insert_with(|| {
                format!(
                    "a recovered row of table \"{}\" (commit ts {}, seq {}) does not fit its columns",
                    table.name(),
                    row.id.ts,
                    row.id.seq
                )
            });
            return;
        }
        let v = VersionPtr::new(row.id.ts, set.gen, row.id.seq, set.links(), row.data.len(), |buf| {
            buf.copy_from_slice(row.data)
        });
        table.link(set, v);
        table.live.add(1);
    })?;
    match bad.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(message) => Err(Error::Storage { code: "XX001", message }),
        None => Ok(stats),
    }
}
