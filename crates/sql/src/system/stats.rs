//! The statistics views: `pg_stat_user_tables`, `pg_stat_user_indexes`
//! (which also answer to their `_all_` names: Centum's own catalogs are
//! virtual and never scanned) and `pg_stat_database`.
//!
//! The figures are the engine's usage counters (`Table::usage`,
//! `Index::usage`, `Database::transaction_counts`), kept since the
//! database opened or `pg_stat_reset()`:
//!
//! - a full scan counts once when it starts, with the visible rows it
//!   returned (`seq_scan`, `seq_tup_read`);
//! - an index look-up or range scan counts once for the index, with the
//!   visible rows it returned; a table's `idx_scan` and `idx_tup_fetch`
//!   are the sums over its indexes, and an index's `idx_tup_read` equals
//!   its `idx_tup_fetch` (its entries are the rows themselves);
//! - inserts, updates and deletes count when their transaction commits
//!   (PostgreSQL also counts those of transactions that roll back);
//! - `n_live_tup` is the committed row count (rows recovered at open
//!   included), `n_dead_tup` the versions in memory that are not live
//!   rows: old versions the collector has not freed yet, and uncommitted
//!   ones.
//!
//! What PostgreSQL counts and Centum has no use for reads as it would on a
//! PostgreSQL that never did it: no HOT updates, no blocks read, no
//! temporary files, no VACUUM or ANALYZE runs (the garbage collector runs
//! continuously; ANALYZE is accepted and does nothing), no recovery
//! conflicts. Counters are in memory and start from zero when the server
//! starts.

use super::snapshot::{Snapshot, DATABASE};
use super::tables::index_name;
use super::Identity;
use centum_types::Value;

pub(super) fn i8(n: u64) -> Value {
    Value::BigInt(n.min(i64::MAX as u64) as i64)
}

pub(super) fn txt(s: &str) -> Value {
    Value::Text(s.to_string())
}

/// `pg_stat_user_tables`' rows.
pub(super) fn tables(s: &Snapshot) -> Vec<Vec<Value>> {
    s.tables
        .iter()
        .map(|t| {
            let u = t.info.table.usage();
            let indexed = !t.indexes.is_empty();
            let if_indexed = |n: u64| if indexed { i8(n) } else { Value::Null };
            vec![
                Value::Integer(t.oid),
                txt(&t.schema),
                txt(&t.name),
                i8(u.seq_scans),
                i8(u.seq_rows),
                if_indexed(u.index_scans),
                if_indexed(u.index_rows),
                i8(u.inserted),
                i8(u.updated),
                i8(u.deleted),
                i8(0), // n_tup_hot_upd
                i8(u.live_rows),
                i8(u.dead_rows),
                // Never analysed: every change since the start counts.
                i8(u.inserted + u.updated + u.deleted),
                i8(u.inserted),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                i8(0),
                i8(0),
                i8(0),
                i8(0),
            ]
        })
        .collect()
}

/// `pg_stat_user_indexes`' rows.
pub(super) fn indexes(s: &Snapshot) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in &s.tables {
        for ix in &t.indexes {
            let u = t.info.table.index(&ix.def.name).map(|i| i.usage()).unwrap_or_default();
            out.push(vec![
                Value::Integer(t.oid),
                Value::Integer(ix.oid),
                txt(&t.schema),
                txt(&t.name),
                txt(&index_name(&ix.def.name)),
                i8(u.scans),
                i8(u.rows),
                i8(u.rows),
            ]);
        }
    }
    out
}

/// `pg_stat_database`'s row for the one database.
pub(super) fn database(s: &Snapshot, id: &Identity) -> Vec<Vec<Value>> {
    let x = s.db.transaction_counts();
    let (mut returned, mut fetched, mut ins, mut upd, mut del) = (0, 0, 0, 0, 0);
    for t in &s.tables {
        let u = t.info.table.usage();
        returned += u.seq_rows + u.index_rows;
        fetched += u.index_rows;
        ins += u.inserted;
        upd += u.updated;
        del += u.deleted;
    }
    let sessions = id.activity.map(|a| a.totals()).unwrap_or_default();
    vec![vec![
        Value::Integer(DATABASE),
        txt(id.database),
        Value::Integer(sessions.backends as i32),
        i8(x.committed),
        i8(x.aborted),
        i8(0), // blks_read
        i8(0), // blks_hit
        i8(returned),
        i8(fetched),
        i8(ins),
        i8(upd),
        i8(del),
        i8(0), // conflicts: with recovery on a standby; there is none
        i8(0), // temp_files
        i8(0), // temp_bytes
        i8(x.deadlocks),
        Value::Null, // checksum_failures: NULL where checksums are off
        Value::Null,
        Value::Double(0.0), // blk_read_time
        Value::Double(0.0), // blk_write_time
        Value::Double(sessions.session_ms),
        Value::Double(sessions.active_ms),
        Value::Double(sessions.idle_in_transaction_ms),
        i8(sessions.sessions),
        i8(sessions.abandoned),
        i8(sessions.fatal),
        i8(sessions.killed),
        sessions.reset.map_or(Value::Null, Value::TimestampTz),
    ]]
}
