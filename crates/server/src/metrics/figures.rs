//! The figures a scrape reads, and their names.
//!
//! Everything is read at the moment of the scrape from what the engine
//! and the server already keep: the tables' and indexes' counters and
//! sizes (`Table::stats`, `Table::usage`), the garbage collector's, the
//! log's and the checkpoint writer's counters, the process's resident
//! memory, the transaction counts, and the server's own [`Metrics`]. The
//! collector holds the server's state weakly: a scrape that comes as the
//! server shuts down finds nothing and answers no figures, and never keeps
//! the database open.

use super::Metrics;
use crate::server::Shared;
use centum_storage::{FileKind, FileState};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeCounterValue, EncodeGaugeValue, EncodeLabelSet, EncodeMetric,
};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};
use std::collections::BTreeMap;
use std::fmt::Result;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Weak;

/// The registry every scrape encodes: the figures, under `centum_`.
pub(crate) fn registry(shared: Weak<Shared>) -> Registry {
    let mut r = Registry::with_prefix("centum");
    r.register_collector(Box::new(Figures { shared }));
    r
}

/// Reads the figures of a running server when scraped.
struct Figures {
    shared: Weak<Shared>,
}

impl std::fmt::Debug for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> Result {
        f.write_str("Figures")
    }
}

impl Collector for Figures {
    fn encode(&self, mut e: DescriptorEncoder) -> Result {
        let Some(shared) = self.shared.upgrade() else { return Ok(()) };
        server(&mut e, &shared)?;
        if let Some(m) = &shared.metrics {
            server_metrics(&mut e, m)?;
        }
        let db = shared.db.catalog().db();
        tables(&mut e, db)?;
        memory(&mut e, shared.config.memory_limit)?;
        log(&mut e, db)?;
        transactions(&mut e, db)?;
        checkpoints(&mut e, db)
    }
}

fn gauge(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    v: impl EncodeGaugeValue,
) -> Result {
    let g = ConstGauge::new(v);
    g.encode(e.encode_descriptor(name, help, unit.as_ref(), g.metric_type())?)
}

fn counter(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    v: impl EncodeCounterValue,
) -> Result {
    let c = ConstCounter::new(v);
    c.encode(e.encode_descriptor(name, help, unit.as_ref(), c.metric_type())?)
}

/// A gauge with one value per label set; nothing when there are none.
fn gauges<L: EncodeLabelSet, V: EncodeGaugeValue>(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    rows: impl IntoIterator<Item = (L, V)>,
) -> Result {
    family(e, name, help, unit, MetricType::Gauge, rows, |m, v| ConstGauge::new(v).encode(m))
}

/// A counter with one value per label set; nothing when there are none.
fn counters<L: EncodeLabelSet, V: EncodeCounterValue>(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    rows: impl IntoIterator<Item = (L, V)>,
) -> Result {
    family(e, name, help, unit, MetricType::Counter, rows, |m, v| ConstCounter::new(v).encode(m))
}

fn family<L: EncodeLabelSet, V>(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    kind: MetricType,
    rows: impl IntoIterator<Item = (L, V)>,
    put: impl Fn(prometheus_client::encoding::MetricEncoder, V) -> Result,
) -> Result {
    let mut rows = rows.into_iter().peekable();
    if rows.peek().is_none() {
        return Ok(());
    }
    let mut m = e.encode_descriptor(name, help, unit.as_ref(), kind)?;
    for (labels, v) in rows {
        put(m.encode_family(&labels)?, v)?;
    }
    Ok(())
}

/// Connections and transactions.
fn server(e: &mut DescriptorEncoder, shared: &Shared) -> Result {
    gauge(
        e,
        "connections",
        "Client connections now, sessions and start-ups past the connection limit check.",
        None,
        shared.connections.load(Relaxed) as u64,
    )?;
    let x = shared.db.catalog().db().transaction_counts();
    counter(
        e,
        "transactions_committed",
        "Transactions committed, read-only ones included.",
        None,
        x.committed,
    )?;
    counter(e, "transactions_rolled_back", "Transactions rolled back or failed.", None, x.aborted)?;
    counter(e, "deadlocks", "Deadlocks detected (each aborted one waiting transaction).", None, x.deadlocks)
}

/// What the server records for the endpoint.
fn server_metrics(e: &mut DescriptorEncoder, m: &Metrics) -> Result {
    counter(
        e,
        "connections_accepted",
        "Connections the listener accepted, refused start-ups included.",
        None,
        m.accepted.load(Relaxed),
    )?;
    let errors = m.errors();
    let serialization = errors.get("40001").copied().unwrap_or(0);
    counter(e, "serialization_failures", "Statements that failed with a serialization failure (SQLSTATE 40001); retrying the transaction may succeed.", None, serialization)?;
    counters(
        e,
        "errors",
        "Errors reported to clients, by SQLSTATE.",
        None,
        errors.into_iter().map(|(code, n)| ([("sqlstate", code)], n)),
    )?;
    let h = e.encode_descriptor("statement_duration", "How long requests took from message to reply: a simple-protocol query with all its statements, or an extended-protocol Execute.", Some(&Unit::Seconds), MetricType::Histogram)?;
    m.statements.encode(h)?;
    let h = e.encode_descriptor("commit_wait", "How long commits waited, once their log record was appended, for it to be durable and for their changes to be visible.", Some(&Unit::Seconds), MetricType::Histogram)?;
    m.commit_waits.encode(h)
}

/// Per table and per index, and the garbage collector.
fn tables(e: &mut DescriptorEncoder, db: &centum_engine::Database) -> Result {
    let stats = db.stats();
    let usage: Vec<_> = stats.tables.iter().map(|t| db.table(&t.name).ok().map(|t| t.usage())).collect();
    let label = |name: &String| [("table", name.clone())];
    let per_table = || stats.tables.iter().zip(&usage).filter_map(|(t, u)| Some((t, u.as_ref()?)));
    gauges(
        e,
        "table_live_rows",
        "Live rows of the table.",
        None,
        per_table().map(|(t, u)| (label(&t.name), u.live_rows)),
    )?;
    gauges(e, "table_dead_row_versions", "Row versions in memory that are not live rows: replaced or deleted ones not yet collected, and uncommitted ones.", None, per_table().map(|(t, u)| (label(&t.name), u.dead_rows)))?;
    gauges(
        e,
        "table_row_versions",
        "Row versions in memory, live and awaiting collection.",
        None,
        stats.tables.iter().map(|t| (label(&t.name), t.versions)),
    )?;
    gauges(
        e,
        "table_row",
        "Memory held by the table's row versions.",
        Some(Unit::Bytes),
        stats.tables.iter().map(|t| (label(&t.name), t.row_bytes)),
    )?;
    counters(
        e,
        "table_rows_inserted",
        "Rows inserted by committed transactions.",
        None,
        per_table().map(|(t, u)| (label(&t.name), u.inserted)),
    )?;
    counters(
        e,
        "table_rows_updated",
        "Rows updated by committed transactions.",
        None,
        per_table().map(|(t, u)| (label(&t.name), u.updated)),
    )?;
    counters(
        e,
        "table_rows_deleted",
        "Rows deleted by committed transactions.",
        None,
        per_table().map(|(t, u)| (label(&t.name), u.deleted)),
    )?;
    counters(
        e,
        "table_sequential_scans",
        "Scans of the whole table.",
        None,
        per_table().map(|(t, u)| (label(&t.name), u.seq_scans)),
    )?;
    counters(
        e,
        "table_index_scans",
        "Look-ups and range scans through the table's indexes.",
        None,
        per_table().map(|(t, u)| (label(&t.name), u.index_scans)),
    )?;
    let indexes = || {
        stats.tables.iter().flat_map(|t| {
            t.indexes.iter().map(move |i| ([("table", t.name.clone()), ("index", i.name.clone())], i))
        })
    };
    let hash = || indexes().filter(|(_, i)| i.buckets > 0);
    gauges(
        e,
        "index_entries",
        "Versions linked into the index (all versions, not only live rows).",
        None,
        indexes().map(|(l, i)| (l, i.entries)),
    )?;
    gauges(e, "index", "Memory held by the index.", Some(Unit::Bytes), indexes().map(|(l, i)| (l, i.bytes)))?;
    gauges(e, "index_buckets", "Buckets of a hash index.", None, hash().map(|(l, i)| (l, i.buckets)))?;
    gauges(
        e,
        "index_empty_bucket_ratio",
        "Estimated share of a hash index's buckets that are empty, from a sample.",
        None,
        hash().map(|(l, i)| (l, i.empty_bucket_ratio)),
    )?;
    gauges(
        e,
        "index_average_chain_length",
        "Estimated average length of a hash index's non-empty chains, from a sample.",
        None,
        hash().map(|(l, i)| (l, i.avg_chain)),
    )?;
    gauges(
        e,
        "index_max_chain_length",
        "Longest chain of a hash index in the sample.",
        None,
        hash().map(|(l, i)| (l, i.max_chain)),
    )?;
    gauges(
        e,
        "index_duplicate_keys",
        "Current rows of a hash index sharing a key with another in their chain, scaled from the sample.",
        None,
        hash().map(|(l, i)| {
            let scale = i.buckets as f64 / i.sampled_buckets.max(1) as f64;
            (l, (i.sampled_duplicates as f64 * scale).round() as u64)
        }),
    )?;
    let gc = stats.gc;
    gauge(
        e,
        "gc_horizon",
        "The oldest snapshot (a commit timestamp) the garbage collector last acted on.",
        None,
        gc.horizon,
    )?;
    counter(e, "gc_freed_versions", "Row versions the garbage collector freed.", None, gc.freed)?;
    counter(
        e,
        "gc_unlinked_versions",
        "Row versions unlinked by readers that met them.",
        None,
        gc.unlinked_by_readers,
    )?;
    gauge(
        e,
        "gc_pending_versions",
        "Versions queued for collection and not yet freed (some held for active snapshots).",
        None,
        gc.pending,
    )?;
    counter(e, "gc_sweep_steps", "Steps of the collector's sweeps of hash chains.", None, gc.sweep_steps)
}

/// The process's memory and its limit.
fn memory(e: &mut DescriptorEncoder, limit: Option<usize>) -> Result {
    if let Some(rss) = centum_engine::memory::resident_bytes() {
        gauge(
            e,
            "memory_resident",
            "Memory the process holds (its resident set).",
            Some(Unit::Bytes),
            rss as u64,
        )?;
    }
    if let Some(limit) = limit {
        gauge(
            e,
            "memory_limit",
            "The memory limit (--memory-limit): past it, inserts and updates fail with 53200.",
            Some(Unit::Bytes),
            limit as u64,
        )?;
    }
    Ok(())
}

/// The log's counters (none in memory only).
fn log(e: &mut DescriptorEncoder, db: &centum_engine::Database) -> Result {
    let Some(l) = db.log_stats() else { return Ok(()) };
    counter(e, "log_records", "Commit records appended to the log.", None, l.commits)?;
    counter(e, "log_flushes", "Log flushes (one write and one fdatasync each).", None, l.flushes)?;
    counter(
        e,
        "log_timer_flushes",
        "Log flushes started by the delayed-durability timer.",
        None,
        l.timer_flushes,
    )?;
    counter(e, "log_written", "Bytes written to the log.", Some(Unit::Bytes), l.bytes)?;
    counter(
        e,
        "log_failed_writes",
        "Log flushes whose write failed (the log went on).",
        None,
        l.failed_writes,
    )?;
    counter(
        e,
        "log_flushed_records",
        "Records the flushes carried (per flush: the group-commit batch).",
        None,
        l.flushed_records,
    )?;
    gauge(e, "log_largest_batch_records", "The most records one flush carried.", None, l.largest_batch)?;
    gauge(e, "log_appended_ts", "Commit timestamp of the last record appended.", None, l.appended_ts)?;
    gauge(e, "log_durable_ts", "Highest commit timestamp on disk.", None, l.durable_ts)?;
    gauge(
        e,
        "log_syncs_per_second",
        "Log flushes per second over the last second or so.",
        None,
        l.syncs_per_second,
    )?;
    gauge(e, "log_pending_records", "Records appended and not yet written.", None, l.pending_records)?;
    gauge(e, "log_pending", "Bytes appended and not yet written.", Some(Unit::Bytes), l.pending_bytes)?;
    gauge(
        e,
        "log_delayed_records",
        "Delayed-durability records acknowledged and not yet on disk.",
        None,
        l.delayed_records,
    )?;
    gauge(
        e,
        "log_delayed",
        "Bytes of delayed-durability records not yet on disk.",
        Some(Unit::Bytes),
        l.delayed_bytes,
    )?;
    gauge(
        e,
        "log_delayed_age",
        "How long the oldest delayed-durability record not yet on disk has waited.",
        Some(Unit::Seconds),
        l.delayed_age_us as f64 / 1e6,
    )?;
    gauge(
        e,
        "log_failed",
        "1 once a failed sync stopped the log: no commits are taken until restart.",
        None,
        u64::from(db.log_failed()),
    )
}

/// Open transactions, as `centum.transactions` lists them.
fn transactions(e: &mut DescriptorEncoder, db: &centum_engine::Database) -> Result {
    let txns = db.transactions();
    gauge(e, "transactions_open", "Transactions open now.", None, txns.len() as u64)?;
    gauge(
        e,
        "transactions_waiting",
        "Open transactions waiting for a row or key another one holds.",
        None,
        txns.iter().filter(|t| t.waiting_for.is_some()).count() as u64,
    )?;
    gauge(
        e,
        "transactions_with_commit_dependency",
        "Open transactions that used rows of a logged, not yet durable transaction.",
        None,
        txns.iter().filter(|t| t.depends_on.is_some()).count() as u64,
    )?;
    let oldest = txns.iter().map(|t| t.read_ts).min();
    gauge(
        e,
        "oldest_snapshot_ts",
        "Read timestamp of the oldest open snapshot (the garbage collector keeps what it may see); 0 with none open.",
        None,
        oldest.unwrap_or(0),
    )
}

/// The checkpoint writer's counters and files (none in memory only).
fn checkpoints(e: &mut DescriptorEncoder, db: &centum_engine::Database) -> Result {
    let Some(c) = db.checkpoint_stats() else { return Ok(()) };
    counter(e, "checkpoints", "Checkpoints taken, asked for and automatic.", None, c.checkpoints)?;
    counter(
        e,
        "checkpoint_duration",
        "Time spent in checkpoints.",
        Some(Unit::Seconds),
        c.checkpoint_time.as_secs_f64(),
    )?;
    gauge(
        e,
        "checkpoint_longest",
        "The longest checkpoint.",
        Some(Unit::Seconds),
        c.longest_checkpoint.as_secs_f64(),
    )?;
    counter(
        e,
        "checkpoint_batches",
        "Log batches turned into checkpoint data and delta blocks.",
        None,
        c.batches,
    )?;
    counter(
        e,
        "checkpoint_written",
        "Bytes of checkpoint data and delta blocks written, merges included.",
        Some(Unit::Bytes),
        c.bytes_written,
    )?;
    counter(
        e,
        "checkpoint_busy",
        "Time the checkpoint writer spent working rather than waiting.",
        Some(Unit::Seconds),
        c.busy.as_secs_f64(),
    )?;
    counter(
        e,
        "checkpoint_fell_behind",
        "Times the checkpoint writer fell behind after a failed write.",
        None,
        c.fell_behind,
    )?;
    counter(e, "checkpoint_caught_up", "Times the checkpoint writer caught up again.", None, c.caught_up)?;
    // Every kind and state, zero included: a series that comes and goes
    // with the files reads as missing data.
    let mut files: BTreeMap<(&'static str, &'static str), (u64, u64)> = BTreeMap::new();
    for kind in [FileKind::Data, FileKind::Delta] {
        for state in STATES {
            files.insert((kind_name(kind), state_name(state)), (0, 0));
        }
    }
    for f in db.checkpoint_files() {
        let n = files.entry((kind_name(f.kind), state_name(f.state))).or_default();
        n.0 += 1;
        n.1 += f.bytes;
    }
    let labels = |&(kind, state): &(&'static str, &'static str)| [("kind", kind), ("state", state)];
    gauges(
        e,
        "checkpoint_files",
        "Checkpoint files, by kind and state.",
        None,
        files.iter().map(|(k, n)| (labels(k), n.0)),
    )?;
    gauges(
        e,
        "checkpoint_file",
        "Bytes in checkpoint files, by kind and state.",
        Some(Unit::Bytes),
        files.iter().map(|(k, n)| (labels(k), n.1)),
    )
}

const STATES: [FileState; 6] = [
    FileState::PreCreated,
    FileState::UnderConstruction,
    FileState::Active,
    FileState::MergeTarget,
    FileState::MergedSource,
    FileState::WaitingForRemoval,
];

fn kind_name(k: FileKind) -> &'static str {
    match k {
        FileKind::Data => "data",
        FileKind::Delta => "delta",
    }
}

fn state_name(s: FileState) -> &'static str {
    match s {
        FileState::PreCreated => "pre_created",
        FileState::UnderConstruction => "under_construction",
        FileState::Active => "active",
        FileState::MergeTarget => "merge_target",
        FileState::MergedSource => "merged_source",
        FileState::WaitingForRemoval => "waiting_for_removal",
    }
}
