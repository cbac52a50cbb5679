//! W7, mixed read-write OLTP: the transaction of the standard
//! `oltp_read_write` benchmark (10 primary-key selects, four range queries
//! of 100 rows, two updates, a delete and an insert) over N tables of M
//! rows, through Centum's server, PostgreSQL and SQLite, at 1 to 64
//! clients. Every statement picks its table and key at random; the same
//! transaction, drawn from the same random stream, runs everywhere.
//! Afterwards every table must still hold each of its keys once, and the
//! sum of `k` must equal the load's plus what the committed transactions
//! added.

use super::driver::{self, Load, Recorder};
use super::report::Figure;
use super::servers::Endpoint;
use super::{Ctx, Res};
use crate::engine::Rng;
use std::sync::atomic::{AtomicI64, Ordering};

pub const DESCRIPTION: &str = "The transaction of the `oltp_read_write` benchmark, over N tables `sbtest1..N` of M \
rows (`id` primary key, an indexed integer `k`, `c char(120)`, `pad char(60)`; Centum's primary key is its default \
range index). One transaction, between BEGIN and COMMIT: 10 selects of `c` by a random `id`; over 100 consecutive \
ids, the rows, `SUM(k)`, the rows `ORDER BY c` and `DISTINCT c ORDER BY c`; `k = k + 1` of one row; a new `c` for \
another; a delete of a third and the insert of a row with its `id` again. Each statement picks its table and key \
uniformly; prepared statements. Centum and PostgreSQL through their servers (the same client, one connection per \
client; a write conflict or deadlock is retried and counted); SQLite embedded in the client (one connection per \
client thread to one WAL database with `synchronous=FULL`, each transaction `BEGIN IMMEDIATE`). Durable commits \
everywhere. Afterwards each table must hold every id once and the sum of `k` must match the load plus the committed \
changes.";

/// Rows of 100 consecutive ids the range queries read.
const RANGE: i32 = 100;
/// Point selects per transaction.
const POINTS: usize = 10;

/// One transaction's draws, made before it runs so that a retry repeats
/// the same statements.
struct Txn {
    points: [(usize, i32); POINTS],
    /// Table and first id of the four range queries.
    ranges: [(usize, i32); 4],
    index_update: (usize, i32),
    non_index_update: (usize, i32, String),
    /// Table, id deleted and inserted again, the new row's k, c and pad.
    delete_insert: (usize, i32, i32, String, String),
}

/// A `c` or `pad` value: `len / 6` groups of five digits.
fn digits(rng: &mut Rng, len: usize) -> String {
    format!("{:05}-", rng.between(0, 99_999)).repeat(len / 6)
}

impl Txn {
    fn draw(rng: &mut Rng, tables: usize, rows: i32) -> Txn {
        let pick =
            |rng: &mut Rng| (rng.between(0, tables as i64 - 1) as usize, rng.between(1, rows as i64) as i32);
        let points = std::array::from_fn(|_| pick(rng));
        let ranges = std::array::from_fn(|_| {
            let (t, _) = pick(rng);
            (t, rng.between(1, (rows - RANGE + 1).max(1) as i64) as i32)
        });
        let index_update = pick(rng);
        let (t, id) = pick(rng);
        let non_index_update = (t, id, digits(rng, 120));
        let (t, id) = pick(rng);
        let k = rng.between(1, rows as i64) as i32;
        let delete_insert = (t, id, k, digits(rng, 120), digits(rng, 60));
        Txn { points, ranges, index_update, non_index_update, delete_insert }
    }
}

/// The statements, per table, in the order [`Stmt`] names them. `$n`
/// parameters appear in order, so SQLite numbers them the same way.
fn statements(table: usize) -> [String; 9] {
    let t = format!("sbtest{}", table + 1);
    [
        format!("SELECT c FROM {t} WHERE id = $1"),
        format!("SELECT c FROM {t} WHERE id BETWEEN $1 AND $2"),
        format!("SELECT SUM(k) FROM {t} WHERE id BETWEEN $1 AND $2"),
        format!("SELECT c FROM {t} WHERE id BETWEEN $1 AND $2 ORDER BY c"),
        format!("SELECT DISTINCT c FROM {t} WHERE id BETWEEN $1 AND $2 ORDER BY c"),
        format!("UPDATE {t} SET k = k + 1 WHERE id = $1"),
        format!("UPDATE {t} SET c = $1 WHERE id = $2"),
        format!("DELETE FROM {t} WHERE id = $1 RETURNING k"),
        format!("INSERT INTO {t} (id, k, c, pad) VALUES ($1, $2, $3, $4)"),
    ]
}

/// [`statements`] with a value for each parameter, as EXPLAIN takes them
/// on a server.
fn explainable(table: usize) -> Vec<String> {
    let values: [&[&str]; 9] = [
        &["1"],
        &["1", "100"],
        &["1", "100"],
        &["1", "100"],
        &["1", "100"],
        &["1"],
        &["'x'", "1"],
        &["1"],
        &["0", "1", "'x'", "'y'"],
    ];
    statements(table)
        .into_iter()
        .zip(values)
        .map(|(mut s, v)| {
            for (i, v) in v.iter().enumerate().rev() {
                s = s.replace(&format!("${}", i + 1), v);
            }
            s
        })
        .collect()
}

/// What the plans recorded are of.
const PLANS: &str = "the transaction's statements on sbtest1 after loading";

#[derive(Clone, Copy)]
enum Stmt {
    Point,
    Range,
    Sum,
    Order,
    Distinct,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
}

const RANGE_KINDS: [Stmt; 4] = [Stmt::Range, Stmt::Sum, Stmt::Order, Stmt::Distinct];

/// What one system needs to run the transaction.
trait Session {
    /// The statement that opens a transaction.
    const BEGIN: &'static str;
    /// Runs statements without parameters (BEGIN, COMMIT, ROLLBACK).
    fn batch(&mut self, sql: &str) -> Res<()>;
    /// Runs a query, returning the rows it gave.
    fn rows(&mut self, table: usize, s: Stmt, ids: (i32, i32)) -> Res<usize>;
    /// Runs a statement that changes rows, returning how many it changed.
    fn change(&mut self, table: usize, s: Stmt, id: i32, c: &str) -> Res<u64>;
    /// Deletes a row, returning its `k` if there was one.
    fn delete(&mut self, table: usize, id: i32) -> Res<Option<i32>>;
    fn insert(&mut self, table: usize, id: i32, k: i32, c: &str, pad: &str) -> Res<()>;
    /// Whether an error is a write conflict or deadlock that a retry
    /// resolves.
    fn retry(e: &(dyn std::error::Error + 'static)) -> bool;
}

/// Runs `txn` to its commit; returns how much it added to the sum of `k`.
/// A failed statement rolls the transaction back.
fn run_txn<S: Session>(s: &mut S, txn: &Txn) -> Res<i64> {
    s.batch(S::BEGIN)?;
    let body = |s: &mut S| -> Res<i64> {
        for &(t, id) in &txn.points {
            s.rows(t, Stmt::Point, (id, id))?;
        }
        for (&(t, lo), kind) in txn.ranges.iter().zip(RANGE_KINDS) {
            s.rows(t, kind, (lo, lo + RANGE - 1))?;
        }
        let mut added = s.change(txn.index_update.0, Stmt::IndexUpdate, txn.index_update.1, "")? as i64;
        let (t, id, c) = &txn.non_index_update;
        s.change(*t, Stmt::NonIndexUpdate, *id, c)?;
        let (t, id, k, c, pad) = &txn.delete_insert;
        // A row another client deleted and inserted again in between is
        // gone for this transaction too; inserting its id would then
        // collide with the other's insert, so only a deleted row comes back.
        if let Some(old) = s.delete(*t, *id)? {
            s.insert(*t, *id, *k, c, pad)?;
            added += (*k - old) as i64;
        }
        s.batch("COMMIT")?;
        Ok(added)
    };
    body(s).inspect_err(|_| _ = s.batch("ROLLBACK"))
}

/// Runs one transaction for the driver, retrying conflicts; adds what it
/// changed in `k` to `sum` once it commits.
fn measured<S: Session>(s: &mut S, rec: &mut Recorder, txn: &Txn, sum: &AtomicI64) -> Res<()> {
    let mut added = 0;
    rec.retrying::<Box<dyn std::error::Error + Send + Sync>>(
        |e| S::retry(&**e),
        || {
            added = run_txn(s, txn)?;
            Ok(true)
        },
    )?;
    sum.fetch_add(added, Ordering::Relaxed);
    Ok(())
}

/// A server connection with the statements prepared for every table.
struct Server {
    c: postgres::Client,
    st: Vec<Vec<postgres::Statement>>,
}

impl Server {
    fn open(ep: &Endpoint, tables: usize) -> Res<Server> {
        let mut c = ep.connect()?;
        let mut st = Vec::with_capacity(tables);
        for t in 0..tables {
            st.push(statements(t).iter().map(|q| c.prepare(q)).collect::<Result<Vec<_>, _>>()?);
        }
        Ok(Server { c, st })
    }
}

impl Session for Server {
    const BEGIN: &'static str = "BEGIN";
    fn batch(&mut self, sql: &str) -> Res<()> {
        Ok(self.c.batch_execute(sql)?)
    }
    fn rows(&mut self, table: usize, s: Stmt, (lo, hi): (i32, i32)) -> Res<usize> {
        let st = &self.st[table][s as usize];
        let rows = match s {
            Stmt::Point => self.c.query(st, &[&lo])?,
            _ => self.c.query(st, &[&lo, &hi])?,
        };
        Ok(rows.len())
    }
    fn change(&mut self, table: usize, s: Stmt, id: i32, c: &str) -> Res<u64> {
        let st = &self.st[table][s as usize];
        Ok(match s {
            Stmt::NonIndexUpdate => self.c.execute(st, &[&c, &id])?,
            _ => self.c.execute(st, &[&id])?,
        })
    }
    fn delete(&mut self, table: usize, id: i32) -> Res<Option<i32>> {
        let st = &self.st[table][Stmt::Delete as usize];
        Ok(self.c.query_opt(st, &[&id])?.map(|r| r.get(0)))
    }
    fn insert(&mut self, table: usize, id: i32, k: i32, c: &str, pad: &str) -> Res<()> {
        let st = &self.st[table][Stmt::Insert as usize];
        self.c.execute(st, &[&id, &k, &c, &pad])?;
        Ok(())
    }
    fn retry(e: &(dyn std::error::Error + 'static)) -> bool {
        e.downcast_ref::<postgres::Error>().is_some_and(driver::is_conflict)
    }
}

/// An embedded SQLite connection; statements come from its cache.
struct Sqlite {
    c: rusqlite::Connection,
    text: Vec<[String; 9]>,
}

impl Sqlite {
    fn open(path: &std::path::Path, tables: usize) -> Res<Sqlite> {
        let c = rusqlite::Connection::open(path)?;
        c.pragma_update(None, "journal_mode", "WAL")?;
        c.pragma_update(None, "synchronous", "FULL")?;
        c.busy_timeout(std::time::Duration::from_secs(600))?;
        c.set_prepared_statement_cache_capacity(16 * tables);
        Ok(Sqlite { c, text: (0..tables).map(statements).collect() })
    }
}

impl Session for Sqlite {
    // A deferred transaction that reads first and then writes may find
    // another writer ahead of it and fail with SQLITE_BUSY; taking the
    // write lock at BEGIN makes writers queue instead.
    const BEGIN: &'static str = "BEGIN IMMEDIATE";
    fn batch(&mut self, sql: &str) -> Res<()> {
        Ok(self.c.execute_batch(sql)?)
    }
    fn rows(&mut self, table: usize, s: Stmt, (lo, hi): (i32, i32)) -> Res<usize> {
        let mut st = self.c.prepare_cached(&self.text[table][s as usize])?;
        let mut rows = match s {
            Stmt::Point => st.query([lo])?,
            _ => st.query([lo, hi])?,
        };
        let mut n = 0;
        while rows.next()?.is_some() {
            n += 1;
        }
        Ok(n)
    }
    fn change(&mut self, table: usize, s: Stmt, id: i32, c: &str) -> Res<u64> {
        let mut st = self.c.prepare_cached(&self.text[table][s as usize])?;
        let n = match s {
            Stmt::NonIndexUpdate => st.execute(rusqlite::params![c, id])?,
            _ => st.execute([id])?,
        };
        Ok(n as u64)
    }
    fn delete(&mut self, table: usize, id: i32) -> Res<Option<i32>> {
        let mut st = self.c.prepare_cached(&self.text[table][Stmt::Delete as usize])?;
        let mut rows = st.query([id])?;
        Ok(match rows.next()? {
            Some(r) => Some(r.get(0)?),
            None => None,
        })
    }
    fn insert(&mut self, table: usize, id: i32, k: i32, c: &str, pad: &str) -> Res<()> {
        let mut st = self.c.prepare_cached(&self.text[table][Stmt::Insert as usize])?;
        st.execute(rusqlite::params![id, k, c, pad])?;
        Ok(())
    }
    fn retry(_: &(dyn std::error::Error + 'static)) -> bool {
        // Writers queue on BEGIN IMMEDIATE; nothing is retried.
        false
    }
}

/// The load's rows, the same on every system: k, c and pad of `id`.
fn loaded(id: i64, rows: i64) -> (i64, String, String) {
    let group = |m: i64| format!("{:05}-", id * m % 100_000);
    (1 + id * 7919 % rows, group(7907).repeat(20), group(6007).repeat(10))
}

/// The same rows in SQL, for the servers (`generate_series`).
fn load_sql(table: usize, rows: i32) -> String {
    let t = format!("sbtest{}", table + 1);
    let group = |m: i64| format!("lpad((g * {m} % 100000)::text, 5, '0') || '-'");
    // The primary key's default index, a B-tree in PostgreSQL and a range
    // index in Centum, serves both the point selects and the ranges.
    format!(
        "CREATE TABLE {t} (id int PRIMARY KEY, k int NOT NULL DEFAULT 0, c char(120) NOT NULL DEFAULT '', \
           pad char(60) NOT NULL DEFAULT '');
         INSERT INTO {t} SELECT g, 1 + g * 7919 % {rows}, repeat({}, 20), repeat({}, 10) FROM generate_series(1, {rows}) g;
         CREATE INDEX k_{} ON {t} (k);",
        group(7907),
        group(6007),
        table + 1
    )
}

/// Count, smallest and largest id, and sum of k of one table.
const SUMMARY: &str =
    "SELECT count(*), CAST(min(id) AS bigint), CAST(max(id) AS bigint), CAST(sum(k) AS bigint) FROM ";

pub fn run(ctx: &mut Ctx) -> Res<()> {
    let (tables, rows) = (ctx.scale.w7_tables, ctx.scale.w7_rows);
    let pg = ctx.postgres()?;
    let centum = ctx.centum()?;
    let servers = [&centum.endpoint, &pg.endpoint];
    let mut before = [0i64; 3];
    for (e, ep) in servers.iter().enumerate() {
        let bar = driver::phase(&format!("W7 {}: loading {tables} x {rows} rows", ep.system));
        let mut c = ep.connect()?;
        for t in 0..tables {
            c.batch_execute(&load_sql(t, rows))?;
        }
        if ep.system == "PostgreSQL" {
            c.batch_execute("VACUUM ANALYZE")?;
        }
        before[e] = server_sum(&mut c, tables)?;
        bar.finish_and_clear();
        let hot = explainable(0);
        let plans = super::plans::explained(ep, &hot.iter().map(String::as_str).collect::<Vec<_>>())?;
        super::plans::judge(ctx, "W7", PLANS, ep, &plans)?;
    }
    let sqlite_path = ctx.scratch("w7-sqlite")?.join("sbtest.db");
    {
        let bar = driver::phase(&format!("W7 SQLite: loading {tables} x {rows} rows"));
        let mut s = Sqlite::open(&sqlite_path, tables)?;
        let tx = s.c.transaction()?;
        for t in 1..=tables {
            tx.execute_batch(&format!(
                "CREATE TABLE sbtest{t} (id INTEGER PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0, \
                   c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '');"
            ))?;
            let mut st = tx.prepare(&format!("INSERT INTO sbtest{t} VALUES (?1, ?2, ?3, ?4)"))?;
            for id in 1..=rows as i64 {
                let (k, c, pad) = loaded(id, rows as i64);
                st.execute(rusqlite::params![id, k, c, pad])?;
            }
            drop(st);
            tx.execute_batch(&format!("CREATE INDEX k_{t} ON sbtest{t} (k);"))?;
        }
        tx.commit()?;
        s.c.execute_batch("ANALYZE")?;
        before[2] = sqlite_sum(&s.c, tables)?;
        bar.finish_and_clear();
        let hot = statements(0);
        let plans =
            super::plans::sqlite_explained(&s.c, &hot.iter().map(String::as_str).collect::<Vec<_>>())?;
        super::plans::judge_sqlite(ctx, "W7", PLANS, &s.c, &plans)?;
    }
    let added: [AtomicI64; 3] = Default::default();
    for &clients in &ctx.scale.w7_clients.clone() {
        let who = super::clients(clients);
        let per = (ctx.scale.w7_transactions / clients as u64).max(ctx.scale.w7_min_per_client);
        let load = Load { clients, iterations: per, warmup: per / 10 };
        let case = format!("read-write transaction, {who} (durable)");
        let rng = |client: usize| Rng(0x5851_F42D_4C95_7F2D ^ ((client as u64 + 11) * 0x9E37_79B9));
        for (e, ep) in servers.iter().enumerate() {
            let cpu = ep.cpu()?;
            let o = driver::run(
                &format!("W7 {}: {who}", ep.system),
                load,
                |client| Ok((Server::open(ep, tables)?, rng(client))),
                |(s, rng), rec, _| measured(s, rec, &Txn::draw(rng, tables, rows), &added[e]),
            )?;
            record(ctx, ep.system, &case, clients, &o);
            ctx.cpu_per_transaction("W7", &case, ep, cpu, o.committed + o.warmup_committed)?;
        }
        let o = driver::run(
            &format!("W7 SQLite: {who}"),
            load,
            |client| Ok((Sqlite::open(&sqlite_path, tables)?, rng(client))),
            |(s, rng), rec, _| measured(s, rec, &Txn::draw(rng, tables, rows), &added[2]),
        )?;
        record(ctx, "SQLite", &case, clients, &o);
    }
    for (e, ep) in servers.iter().enumerate() {
        let mut c = ep.connect()?;
        let summaries = (0..tables)
            .map(|t| {
                let r = c.query_one(&format!("{SUMMARY}sbtest{}", t + 1), &[])?;
                Ok([r.get(0), r.get(1), r.get(2), r.get(3)])
            })
            .collect::<Res<Vec<[i64; 4]>>>()?;
        consistency(ctx, ep.system, rows, &summaries, before[e] + added[e].load(Ordering::Relaxed));
    }
    let s = Sqlite::open(&sqlite_path, tables)?;
    let summaries = (0..tables)
        .map(|t| {
            let q = format!("{SUMMARY}sbtest{}", t + 1);
            Ok(s.c.query_row(&q, [], |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?]))?)
        })
        .collect::<Res<Vec<[i64; 4]>>>()?;
    consistency(ctx, "SQLite", rows, &summaries, before[2] + added[2].load(Ordering::Relaxed));
    Ok(())
}

fn server_sum(c: &mut postgres::Client, tables: usize) -> Res<i64> {
    let mut sum = 0;
    for t in 1..=tables {
        sum += c.query_one(&format!("SELECT CAST(sum(k) AS bigint) FROM sbtest{t}"), &[])?.get::<_, i64>(0);
    }
    Ok(sum)
}

fn sqlite_sum(c: &rusqlite::Connection, tables: usize) -> Res<i64> {
    let mut sum = 0;
    for t in 1..=tables {
        sum += c.query_row(&format!("SELECT sum(k) FROM sbtest{t}"), [], |r| r.get::<_, i64>(0))?;
    }
    Ok(sum)
}

/// One system's figure, its retries and its point on the plot.
fn record(ctx: &mut Ctx, system: &'static str, case: &str, clients: usize, o: &driver::Outcome) {
    ctx.report.figure(Figure::new("W7", case, system, "txn/s", o.per_second()).with_load(o));
    ctx.point(
        "w7-throughput",
        "W7: read-write transactions/s by clients (durable)",
        system,
        clients,
        o.per_second(),
    );
    if o.retries > 0 {
        let who = super::clients(clients);
        ctx.report.note(
            "W7",
            format!("{system}, {who}: {} retries after write conflicts or deadlocks.", o.retries),
        );
    }
}

/// Every table holds each id from 1 to M once, and the sum of k is the
/// load's plus what the committed transactions added.
fn consistency(ctx: &mut Ctx, system: &'static str, rows: i32, summaries: &[[i64; 4]], expected: i64) {
    let rows = rows as i64;
    let broken: Vec<String> = summaries
        .iter()
        .enumerate()
        .filter(|(_, s)| s[..3] != [rows, 1, rows])
        .map(|(t, s)| format!("sbtest{}: {} rows, ids {}..{}", t + 1, s[0], s[1], s[2]))
        .collect();
    ctx.report.check(
        "W7",
        system,
        "every table holds each of its ids once",
        broken.is_empty(),
        if broken.is_empty() {
            format!("{} tables of {rows} rows", summaries.len())
        } else {
            broken.join("; ")
        },
    );
    let sum: i64 = summaries.iter().map(|s| s[3]).sum();
    ctx.report.check(
        "W7",
        system,
        "the sum of k is the load's plus the committed changes",
        sum == expected,
        format!("{sum}, expected {expected}"),
    );
}
