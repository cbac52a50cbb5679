//! W3, single operations through the embedded API, one thread: Centum's
//! SQL layer in-process (prepared statements, explicit transactions) over
//! a durable table and a SCHEMA_ONLY one, against SQLite through rusqlite
//! with WAL and `synchronous=FULL`, and `:memory:`. Each operation runs
//! its loops in order (insert, update, search, traversal, delete), so
//! the table fills and empties again; every loop checks what it touched.

use super::report::Figure;
use super::{driver, Ctx, Res};
use centum_types::Value;
use std::time::Instant;

pub const DESCRIPTION: &str = "One thread, in-process, prepared statements, one explicit transaction per loop: insert \
(2 rows), update (2 rows by key), search (8 point look-ups by key), traversal (8 ordered range-index traversals of 10 \
rows), delete (2 rows by key), each run for the run's number of loops on a table `(id bigint primary key, k bigint, v \
text)` with an index on k. Centum through its embedded SQL API (hash primary key, range index on k); SQLite through \
rusqlite (integer primary key, B-tree on k). Durable: Centum's SCHEMA_AND_DATA table with every commit fdatasync'ed \
against SQLite's WAL with synchronous=FULL. In memory: Centum's SCHEMA_ONLY table against SQLite's `:memory:`. \
Figures are loops per millisecond.";

/// The operations, in the order they run.
const OPS: [&str; 5] = ["insert", "update", "search", "traversal", "delete"];

/// What a loop does to the database it is given.
trait Target {
    fn begin(&mut self) -> Res<()>;
    fn commit(&mut self) -> Res<()>;
    /// Inserts a row.
    fn insert(&mut self, id: i64, k: i64, v: &str) -> Res<()>;
    /// Updates a row's v by id; rows changed.
    fn update(&mut self, id: i64, v: &str) -> Res<usize>;
    /// Whether the row with this id exists.
    fn search(&mut self, id: i64) -> Res<bool>;
    /// Rows read in k order from k >= from, at most 10.
    fn traverse(&mut self, from: i64) -> Res<usize>;
    /// Deletes a row by id; rows deleted.
    fn delete(&mut self, id: i64) -> Res<usize>;
    /// Rows in the table.
    fn count(&mut self) -> Res<i64>;
}

struct Centum {
    s: centum_sql::Session,
    stmts: Vec<centum_sql::Prepared>,
}

impl Centum {
    fn new(db: &centum_sql::Database, table: &str) -> Res<Centum> {
        let mut s = db.session();
        let sql = [
            format!("INSERT INTO {table} VALUES ($1, $2, $3)"),
            format!("UPDATE {table} SET v = $2 WHERE id = $1"),
            format!("SELECT v FROM {table} WHERE id = $1"),
            format!("SELECT id, v FROM {table} WHERE k >= $1 ORDER BY k LIMIT 10"),
            format!("DELETE FROM {table} WHERE id = $1"),
            format!("SELECT count(*) FROM {table}"),
            "BEGIN".into(),
            "COMMIT".into(),
        ];
        let stmts = sql.iter().map(|q| s.prepare(q, &[])).collect::<Result<_, _>>()?;
        Ok(Centum { s, stmts })
    }

    fn run(&mut self, i: usize, params: &[Value]) -> Res<centum_sql::QueryResult> {
        Ok(self.s.execute_prepared(&mut self.stmts[i], params)?)
    }

    fn changed(r: &centum_sql::QueryResult) -> usize {
        r.tag.rsplit(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0)
    }
}

impl Target for Centum {
    fn begin(&mut self) -> Res<()> {
        self.run(6, &[]).map(drop)
    }
    fn commit(&mut self) -> Res<()> {
        self.run(7, &[]).map(drop)
    }
    fn insert(&mut self, id: i64, k: i64, v: &str) -> Res<()> {
        self.run(0, &[Value::BigInt(id), Value::BigInt(k), Value::Text(v.into())]).map(drop)
    }
    fn update(&mut self, id: i64, v: &str) -> Res<usize> {
        Ok(Centum::changed(&self.run(1, &[Value::BigInt(id), Value::Text(v.into())])?))
    }
    fn search(&mut self, id: i64) -> Res<bool> {
        Ok(self.run(2, &[Value::BigInt(id)])?.rows.len() == 1)
    }
    fn traverse(&mut self, from: i64) -> Res<usize> {
        Ok(self.run(3, &[Value::BigInt(from)])?.rows.len())
    }
    fn delete(&mut self, id: i64) -> Res<usize> {
        Ok(Centum::changed(&self.run(4, &[Value::BigInt(id)])?))
    }
    fn count(&mut self) -> Res<i64> {
        match self.run(5, &[])?.rows.first().and_then(|r| r.first()) {
            Some(Value::BigInt(n)) => Ok(*n),
            other => Err(format!("count(*) gave {other:?}").into()),
        }
    }
}

struct Sqlite(rusqlite::Connection);

impl Sqlite {
    fn open(path: Option<&std::path::Path>) -> Res<Sqlite> {
        let c = match path {
            Some(p) => {
                let c = rusqlite::Connection::open(p)?;
                c.pragma_update(None, "journal_mode", "WAL")?;
                c.pragma_update(None, "synchronous", "FULL")?;
                c
            }
            None => rusqlite::Connection::open_in_memory()?,
        };
        c.execute_batch("CREATE TABLE w3 (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v TEXT); CREATE INDEX w3_k ON w3 (k);")?;
        Ok(Sqlite(c))
    }
}

impl Target for Sqlite {
    fn begin(&mut self) -> Res<()> {
        Ok(self.0.prepare_cached("BEGIN")?.execute([]).map(drop)?)
    }
    fn commit(&mut self) -> Res<()> {
        Ok(self.0.prepare_cached("COMMIT")?.execute([]).map(drop)?)
    }
    fn insert(&mut self, id: i64, k: i64, v: &str) -> Res<()> {
        Ok(self
            .0
            .prepare_cached("INSERT INTO w3 VALUES (?1, ?2, ?3)")?
            .execute(rusqlite::params![id, k, v])
            .map(drop)?)
    }
    fn update(&mut self, id: i64, v: &str) -> Res<usize> {
        Ok(self.0.prepare_cached("UPDATE w3 SET v = ?2 WHERE id = ?1")?.execute(rusqlite::params![id, v])?)
    }
    fn search(&mut self, id: i64) -> Res<bool> {
        let mut st = self.0.prepare_cached("SELECT v FROM w3 WHERE id = ?1")?;
        let mut rows = st.query([id])?;
        Ok(rows.next()?.map(|r| r.get::<_, String>(0)).transpose()?.is_some())
    }
    fn traverse(&mut self, from: i64) -> Res<usize> {
        let mut st = self.0.prepare_cached("SELECT id, v FROM w3 WHERE k >= ?1 ORDER BY k LIMIT 10")?;
        let mut rows = st.query([from])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            let _: (i64, String) = (r.get(0)?, r.get(1)?);
            n += 1;
        }
        Ok(n)
    }
    fn delete(&mut self, id: i64) -> Res<usize> {
        Ok(self.0.prepare_cached("DELETE FROM w3 WHERE id = ?1")?.execute([id])?)
    }
    fn count(&mut self) -> Res<i64> {
        Ok(self.0.query_row("SELECT count(*) FROM w3", [], |r| r.get(0))?)
    }
}

/// A number in 0..n that looks random: which row a look-up reads.
fn scatter(i: u64, n: u64) -> i64 {
    (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % n.max(1)) as i64
}

/// Row `id`'s k: a permutation of 0..n (the multiplier is a prime that
/// does not divide n), so k order differs from id order and every k from
/// 0 to n - 1 is taken.
fn permute(id: u64, n: u64) -> i64 {
    const PRIME: u64 = 1_000_003;
    debug_assert!(!n.is_multiple_of(PRIME));
    ((id % n) * PRIME % n) as i64
}

/// Runs every operation for `loops` loops on `t`; returns loops/ms per
/// operation, and records the checks.
fn measure(ctx: &mut Ctx, system: &'static str, class: &str, t: &mut dyn Target) -> Res<Vec<f64>> {
    let loops = ctx.scale.w3_loops;
    let rows = 2 * loops;
    let text = "x".repeat(32);
    let mut rates = Vec::new();
    let mut problems = [0u64; 5];
    for (o, op) in OPS.iter().enumerate() {
        let bar = driver::timed(&format!("W3 {system} {class}: {op}"), loops);
        let started = Instant::now();
        for i in 0..loops {
            t.begin()?;
            match *op {
                "insert" => {
                    for id in [2 * i, 2 * i + 1] {
                        t.insert(id as i64, permute(id, rows), &text)?;
                    }
                }
                "update" => {
                    for id in [2 * i, 2 * i + 1] {
                        problems[o] += u64::from(t.update(id as i64, "updated")? != 1);
                    }
                }
                "search" => {
                    for j in 0..8 {
                        problems[o] += u64::from(!t.search(scatter(8 * i + j, rows))?);
                    }
                }
                "traversal" => {
                    for j in 0..8 {
                        // Start below the last 10 keys, so every traversal reads 10.
                        let from = scatter(8 * i + j, rows - 10);
                        problems[o] += u64::from(t.traverse(from)? != 10);
                    }
                }
                _ => {
                    for id in [2 * i, 2 * i + 1] {
                        problems[o] += u64::from(t.delete(id as i64)? != 1);
                    }
                }
            }
            t.commit()?;
            if i % 256 == 0 {
                bar.set_position(i);
            }
        }
        let ms = started.elapsed().as_secs_f64() * 1e3;
        bar.finish_and_clear();
        rates.push(loops as f64 / ms);
        if *op == "insert" {
            let n = t.count()?;
            ctx.report.check(
                "W3",
                system,
                format!("{class}: every insert loop added 2 rows"),
                n == rows as i64,
                format!("{n} rows"),
            );
        }
    }
    let n = t.count()?;
    ctx.report.check(
        "W3",
        system,
        format!("{class}: every delete loop removed 2 rows, the table is empty"),
        n == 0,
        format!("{n} rows left"),
    );
    for (o, op) in OPS.iter().enumerate().skip(1).take(3) {
        ctx.report.check(
            "W3",
            system,
            format!("{class}: every {op} found its rows"),
            problems[o] == 0,
            format!("{} misses", problems[o]),
        );
    }
    Ok(rates)
}

pub fn run(ctx: &mut Ctx) -> Res<()> {
    let dir = ctx.scratch("w3")?;
    let loops = ctx.scale.w3_loops;
    let buckets = (4 * loops).next_power_of_two();
    let engine = centum_engine::Database::open(centum_engine::Options::durable(dir.join("centum")))?;
    let db = centum_sql::Database::open(engine)?;
    let mut s = db.session();
    for (name, with) in [("w3", String::new()), ("w3_mem", "durability = schema_only, ".into())] {
        s.execute(&format!(
            "CREATE TABLE {name} (id bigint PRIMARY KEY, k bigint NOT NULL, v text) WITH ({with}bucket_count = {buckets}); \
             CREATE INDEX {name}_k ON {name} (k)"
        ))?;
    }
    let mut results: Vec<(&'static str, &str, Vec<f64>)> = Vec::new();
    let class = "durable";
    results.push(("Centum", class, measure(ctx, "Centum", class, &mut Centum::new(&db, "w3")?)?));
    results.push((
        "SQLite",
        class,
        measure(ctx, "SQLite", class, &mut Sqlite::open(Some(&dir.join("sqlite.db")))?)?,
    ));
    let class = "in memory";
    results.push(("Centum", class, measure(ctx, "Centum", class, &mut Centum::new(&db, "w3_mem")?)?));
    results.push(("SQLite", class, measure(ctx, "SQLite", class, &mut Sqlite::open(None)?)?));
    for (o, op) in OPS.iter().enumerate() {
        for (system, class, rates) in &results {
            let label = if *class == "durable" {
                "durable: Centum table vs SQLite WAL+FULL"
            } else {
                "in memory: Centum SCHEMA_ONLY vs SQLite :memory:"
            };
            ctx.report.figure(Figure::new("W3", format!("{op} ({label})"), system, "loops/ms", rates[o]));
        }
    }
    drop(s);
    drop(db);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
