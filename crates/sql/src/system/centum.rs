//! The `centum` schema: the engine's own figures as views any SQL client
//! can read, the way SQL Server's users watch memory-optimized tables
//! through its `sys.dm_db_xtp_*` views.
//!
//! | view | one row per | figures from |
//! |------|-------------|--------------|
//! | `table_memory` | table | counters kept as versions come and go |
//! | `hash_index_stats` | hash index | a sample of buckets (below) |
//! | `range_index_stats` | range index | node counters, one descent |
//! | `checkpoint_files` | data or delta file | the checkpoint's file list |
//! | `log` | (one row; none in memory only) | the log writer's counters |
//! | `gc` | (one row) | the collector and the transaction table |
//! | `transactions` | open transaction | the transaction table |
//! | `cluster` | member of the replicated group | Raft, as this member knows it |
//!
//! Nothing here stops a writer. Counters are striped atomics read without
//! a lock. Hash chain figures come from at most `SAMPLE` (4,096) buckets
//! spread evenly over the array, walked lock-free as a reader would: exact
//! for an index with that many buckets or fewer, an estimate (scaled to
//! the whole array) above, so reading the view costs the same for a
//! thousand buckets or a billion. `duplicate_keys` counts, in the sample,
//! current rows whose key equals an earlier one in the same chain, scaled
//! likewise: rows sharing a key make a chain long whatever the bucket
//! count, so a high figure says a range index (or a longer key) fits
//! better than more buckets. `garbage_bytes` is estimated from the
//! average size of the table's versions. Transactions publish their read
//! and write set sizes when each statement starts, so a statement's own
//! reads and writes show from the next one on.

use super::snapshot::Snapshot;
use super::stats::{i8, txt};
use super::tables::index_name;
use super::Identity;
use crate::activity::xid_number;
use centum_engine::{Isolation, TxnInfo};
use centum_types::{TimestampTz, Value};
use std::collections::HashMap;

/// `centum.table_memory`.
pub(super) fn table_memory(s: &Snapshot) -> Vec<Vec<Value>> {
    s.tables
        .iter()
        .map(|t| {
            // Counters only: the index statistics' chain sample is not
            // needed for bytes.
            let table = &t.info.table;
            let u = table.usage();
            let versions = u.live_rows + u.dead_rows;
            let row_bytes = table.row_bytes() as u64;
            let index_bytes = (table.memory_bytes() as u64).saturating_sub(row_bytes);
            let garbage = (row_bytes * u.dead_rows).checked_div(versions).unwrap_or(0);
            vec![
                txt(&t.schema),
                txt(&t.name),
                txt(match table.durability() {
                    centum_engine::Durability::SchemaAndData => "SCHEMA_AND_DATA",
                    centum_engine::Durability::SchemaOnly => "SCHEMA_ONLY",
                }),
                i8(u.live_rows),
                i8(versions),
                i8(u.dead_rows),
                i8(row_bytes),
                i8(index_bytes),
                i8(garbage),
                i8(row_bytes + index_bytes),
                table.memory_limit().map_or(Value::Null, |l| i8(l as u64)),
                per(row_bytes, versions),
                per(index_bytes, u.live_rows),
            ]
        })
        .collect()
}

/// `bytes` over `count` rows, rounded to a tenth; NULL for no rows.
fn per(bytes: u64, count: u64) -> Value {
    if count == 0 {
        return Value::Null;
    }
    Value::Double((bytes as f64 / count as f64 * 10.0).round() / 10.0)
}

/// Every index of every table with its statistics: (table, index name,
/// whether it is a hash index, statistics).
fn index_stats(s: &Snapshot) -> Vec<(&super::snapshot::TableRel, String, centum_engine::IndexStats)> {
    let mut out = Vec::new();
    for t in &s.tables {
        for ix in t.info.table.stats().indexes {
            out.push((t, index_name(&ix.name), ix));
        }
    }
    out
}

/// `centum.hash_index_stats`.
pub(super) fn hash_index_stats(s: &Snapshot) -> Vec<Vec<Value>> {
    index_stats(s)
        .into_iter()
        .filter(|(_, _, ix)| ix.buckets > 0)
        .map(|(t, name, ix)| {
            let scale = ix.buckets as f64 / ix.sampled_buckets.max(1) as f64;
            vec![
                txt(&t.schema),
                txt(&t.name),
                txt(&name),
                i8(ix.buckets),
                i8((ix.empty_bucket_ratio * ix.buckets as f64).round() as u64),
                Value::Double(ix.avg_chain),
                i8(ix.max_chain),
                i8((ix.sampled_duplicates as f64 * scale).round() as u64),
                i8(ix.entries),
                i8(ix.bytes),
                i8(ix.sampled_buckets),
                per(ix.bytes, t.info.table.usage().live_rows),
                i8(ix.initial_buckets),
            ]
        })
        .collect()
}

/// `centum.range_index_stats`.
pub(super) fn range_index_stats(s: &Snapshot) -> Vec<Vec<Value>> {
    index_stats(s)
        .into_iter()
        .filter(|(_, _, ix)| ix.buckets == 0)
        .map(|(t, name, ix)| {
            vec![
                txt(&t.schema),
                txt(&t.name),
                txt(&name),
                i8(ix.height),
                i8(ix.leaves),
                i8(ix.inners),
                Value::Double(ix.fill),
                i8(ix.entries),
                i8(ix.bytes),
                per(ix.bytes, t.info.table.usage().live_rows),
            ]
        })
        .collect()
}

/// `centum.checkpoint_files`: data files first, each pair by id.
pub(super) fn checkpoint_files(s: &Snapshot) -> Vec<Vec<Value>> {
    use centum_engine::storage::checkpoint::{pair, FileKind};
    let mut files = s.db.checkpoint_files();
    files.sort_by_key(|f| (f.id, f.kind == FileKind::Delta));
    files
        .into_iter()
        .map(|f| {
            let (name, kind) = match f.kind {
                FileKind::Data => (pair::data_name(f.id), "DATA"),
                FileKind::Delta => (pair::delta_name(f.id), "DELTA"),
            };
            let empty = f.min_ts > f.max_ts;
            // A data file holds rows, some since deleted; a delta file
            // holds the deletions.
            let (rows, deleted) = match f.kind {
                FileKind::Data => (i8(f.rows), i8(f.deleted)),
                FileKind::Delta => (i8(f.deleted), Value::Null),
            };
            vec![
                i8(f.id),
                Value::Text(name),
                txt(kind),
                Value::Text(f.state.to_string()),
                rows,
                deleted,
                i8(f.bytes),
                if empty { Value::Null } else { i8(f.min_ts) },
                if empty { Value::Null } else { i8(f.max_ts) },
            ]
        })
        .collect()
}

/// `centum.log`: one row, or none for a database in memory only.
pub(super) fn log(s: &Snapshot) -> Vec<Vec<Value>> {
    let Some(l) = s.db.log_stats() else { return vec![] };
    let failure = s.db.log_failed().then(|| s.db.log_failure()).flatten();
    vec![vec![
        i8(l.appended_ts),
        i8(l.durable_ts),
        i8(l.commits),
        i8(l.flushes),
        i8(l.bytes),
        Value::Double(if l.flushes == 0 { 0.0 } else { l.flushed_records as f64 / l.flushes as f64 }),
        i8(l.largest_batch),
        Value::Double(l.syncs_per_second),
        i8(l.pending_records),
        i8(l.pending_bytes),
        i8(l.delayed_records),
        i8(l.delayed_bytes),
        Value::Double(l.delayed_age_us as f64 / 1000.0),
        i8(l.timer_flushes),
        i8(l.failed_writes),
        failure.map_or(Value::Null, Value::Text),
    ]]
}

/// `pg_replication_slots`: every slot, its plugin and confirmed position.
pub(super) fn replication_slots(s: &Snapshot) -> Vec<Vec<Value>> {
    let Some(slots) = s.db.slots() else { return vec![] };
    slots
        .list()
        .into_iter()
        .map(|slot| {
            let at = Value::Text(crate::replication::lsn_text(slot.confirmed));
            vec![
                Value::Text(slot.name),
                Value::Text(slot.plugin),
                Value::Text("logical".into()),
                Value::Integer(super::snapshot::DATABASE),
                Value::Text(slot.database),
                Value::Boolean(slot.temporary),
                Value::Boolean(slot.active_pid.is_some()),
                slot.active_pid.map_or(Value::Null, |p| Value::Integer(p as i32)),
                Value::Null,
                Value::Null,
                at.clone(),
                at,
                Value::Text("reserved".into()),
                Value::Null,
                Value::Boolean(false),
            ]
        })
        .collect()
}

/// The server's sessions by their transactions' raw ids: (pid, when the
/// transaction started).
fn sessions(id: &Identity) -> HashMap<u64, (i32, Option<TimestampTz>)> {
    id.activity
        .map(|a| a.transactions().into_iter().map(|(raw, pid, start)| (raw, (pid, start))).collect())
        .unwrap_or_default()
}

/// Seconds from `start` to `now`.
fn age(start: Option<TimestampTz>, now: TimestampTz) -> Value {
    start.map_or(Value::Null, |s| Value::Double((now.0 - s.0) as f64 / 1e6))
}

/// `centum.gc`: one row.
pub(super) fn gc(s: &Snapshot, id: &Identity) -> Vec<Vec<Value>> {
    let g = s.db.stats().gc;
    let txns = s.db.transactions();
    let oldest = txns.iter().min_by_key(|t| t.read_ts);
    let sessions = sessions(id);
    let session = oldest.and_then(|t| sessions.get(&t.id.raw()));
    vec![vec![
        i8(g.pending),
        i8(g.freed),
        i8(g.unlinked_by_readers),
        i8(g.horizon),
        oldest.map_or(Value::Null, |t| i8(t.read_ts)),
        oldest.map_or(Value::Null, |t| Value::BigInt(xid_number(t.id.raw()))),
        session.map_or(Value::Null, |(pid, _)| Value::Integer(*pid)),
        session.map_or(Value::Null, |(_, start)| age(*start, TimestampTz::now())),
        i8(g.sweep_steps),
    ]]
}

/// `centum.cluster`: the members of the server's replicated group, as this
/// member knows them (no rows outside a group).
pub(super) fn cluster(id: &Identity) -> Vec<Vec<Value>> {
    let Some(c) = id.activity.and_then(|a| a.cluster.get()) else { return Vec::new() };
    let opt = |v: Option<u64>| v.map_or(Value::Null, i8);
    let mut members = c.members();
    members.sort_by_key(|m| m.id);
    members
        .into_iter()
        .map(|m| {
            vec![
                i8(m.id),
                txt(&m.address),
                Value::Boolean(m.voter),
                txt(m.role),
                Value::Boolean(m.is_self),
                i8(m.term),
                opt(m.durable),
                opt(m.applied),
                opt(m.snapshot),
                opt(m.lag),
            ]
        })
        .collect()
}

/// `centum.transactions`: every open transaction, oldest snapshot first.
pub(super) fn transactions(s: &Snapshot, id: &Identity) -> Vec<Vec<Value>> {
    let mut txns: Vec<TxnInfo> = s.db.transactions();
    txns.sort_by_key(|t| (t.read_ts, t.id.raw()));
    let sessions = sessions(id);
    let now = TimestampTz::now();
    let opt = |v: Option<u64>| v.map_or(Value::Null, i8);
    txns.iter()
        .map(|t| {
            let session = sessions.get(&t.id.raw());
            let start = session.and_then(|(_, s)| *s);
            let holder = t.waiting_for.and_then(|w| sessions.get(&w.raw()));
            vec![
                Value::BigInt(xid_number(t.id.raw())),
                session.map_or(Value::Null, |(pid, _)| Value::Integer(*pid)),
                txt(t.state),
                txt(match t.isolation {
                    Isolation::ReadCommitted => "read committed",
                    Isolation::Snapshot => "repeatable read",
                    Isolation::Serializable => "serializable",
                }),
                start.map_or(Value::Null, Value::TimestampTz),
                age(start, now),
                i8(t.read_ts),
                opt(t.commit_ts),
                i8(u64::from(t.reads)),
                i8(u64::from(t.writes)),
                Value::Boolean(t.holder),
                t.waiting_for.map_or(Value::Null, |w| Value::BigInt(xid_number(w.raw()))),
                holder.map_or(Value::Null, |(pid, _)| Value::Integer(*pid)),
                opt(t.depends_on),
            ]
        })
        .collect()
}
