//! W1, sales orders: the seed's ostress run of the sales-order demo
//! (`examples/sales-orders`), through each server. Every client inserts
//! orders one `insert_sales_order` call (one transaction) at a time, 20
//! per iteration; then every order is shipped with
//! `update_sales_order_ship_info`. The demo's integrity check must say
//! `ok` after each phase, and the row counts must match what the clients
//! committed. Tarantool runs the same two routines as Lua functions
//! (`sales_orders.lua`) beside Centum and PostgreSQL.

use super::driver::{self, Load};
use super::report::Figure;
use super::servers::{du, scalar, Endpoint};
use super::{peers, plans};
use super::{Ctx, Res};
use crate::engine::Rng;

pub const DESCRIPTION: &str = "The sales-order demo (`examples/sales-orders`): `centum.sql` on Centum, `postgres.sql` \
(the same without bucket counts, and with B-trees where the sample has hash indexes on columns with few values) \
on PostgreSQL. N connections x R iterations, each iteration 20 orders, each order \
one call of `insert_sales_order` with the lines of one of the 106 sample orders (one transaction; a prepared \
statement). The order tables are emptied before each client count, then a warm-up inserts at least 1,000 orders and PostgreSQL \
is analysed with them in place (current statistics, as a running application has), and the measured clients \
connect afresh. The plans of the hot statements are recorded as the measured clients connect (on PostgreSQL \
through `auto_explain`, the routine's own statements included), and a sequential scan of a table of 1,000 rows \
or more where an index fits fails the run. Then every order is shipped \
(`update_sales_order_ship_info`: the header and every line), 8 clients. Tarantool 2, the in-memory peer, runs the same \
work as two Lua functions in one box transaction each (`sales_orders.lua` in the suite's source): every table as a \
memtx space with every column, numeric columns as decimals rounded as numeric(19,4), the same seed rows and indexes \
(the key a hash index; the indexes on customer, sales person, order and product trees, as memtx hash indexes must be \
unique), driven by one `tarantool` process per client, each with one net.box connection (its own client; the SQL \
systems get the Rust `postgres` driver's prepared statement, one thread per client) drawing the same kind of random \
arguments. Durable commits everywhere (Tarantool `wal_mode = 'fsync'`).";

const CENTUM_SQL: &str = include_str!("../../../../examples/sales-orders/centum.sql");
pub(crate) const POSTGRES_SQL: &str = include_str!("../../../../examples/sales-orders/postgres.sql");
const CHECK_SQL: &str = include_str!("../../../../examples/sales-orders/check.sql");

/// Orders per iteration, as in the seed's ostress script.
const ORDERS_PER_ITERATION: u64 = 20;

const INSERT: &str = "SELECT insert_sales_order($1, $2, $3, $4, \
    (SELECT lines FROM demo_sales_order_seed WHERE order_no = $5)::sales_order_detail_type[])";

/// The statements `insert_sales_order` runs for each order, as EXPLAIN
/// takes them (Centum plans a routine's statements when it is created).
const HOT_STATEMENTS: [&str; 4] = [
    "SELECT lines FROM demo_sales_order_seed WHERE order_no = 5",
    "SELECT list_price FROM product WHERE product_id = 707",
    "SELECT discount_pct FROM special_offer WHERE special_offer_id = 1",
    "UPDATE sales_order_header SET sub_total = 1, tax_amt = 0, freight = 0, total_due = 1 WHERE sales_order_id = 1",
];

/// One `insert_sales_order` call, for PostgreSQL's plans (rolled back).
pub(crate) const PROBE_CALL: &str = "SELECT insert_sales_order(1, 2, 3, 4, \
    (SELECT lines FROM demo_sales_order_seed WHERE order_no = 5)::sales_order_detail_type[])";

/// The demo's integrity check: `ok`, or the first rule broken.
fn integrity(ep: &Endpoint) -> Res<String> {
    Ok(ep.connect()?.query_one(CHECK_SQL, &[])?.get(0))
}

pub fn run(ctx: &mut Ctx) -> Res<()> {
    let pg = ctx.postgres()?;
    let centum = ctx.centum()?;
    let systems = [(&centum.endpoint, CENTUM_SQL), (&pg.endpoint, POSTGRES_SQL)];
    for (ep, sql) in systems {
        let bar = driver::phase(&format!("W1 {}: loading the demo", ep.system));
        let mut c = ep.connect()?;
        c.batch_execute(sql)?;
        if ep.system == "PostgreSQL" {
            // Statistics of the loaded products, offers and sample orders.
            c.batch_execute("ANALYZE")?;
        }
        bar.finish_and_clear();
    }
    let tarantool = match peers::program("tarantool", "tarantool") {
        Ok(bin) => {
            let bar = driver::phase("W1 Tarantool: loading the demo");
            let t = peers::Tarantool::sales_orders(&bin, &ctx.scratch("tarantool")?, &samples())?;
            bar.finish_and_clear();
            Some(t)
        }
        Err(why) => {
            println!("W1: Tarantool skipped: {why}");
            ctx.report.note("W1", format!("Tarantool skipped: {why}."));
            None
        }
    };
    let scale = (ctx.scale.w1_iterations, ctx.scale.w1_warmup);
    for &clients in &ctx.scale.w1_clients.clone() {
        let who = super::clients(clients);
        // The warm-up leaves at least as many orders as make a table big
        // to the plan check: analysed with fewer, PostgreSQL plans the
        // header's update by order as a scan of the whole (small) table,
        // and keeps that plan while the table grows past them.
        let per_iteration = ORDERS_PER_ITERATION * clients as u64;
        let warmup = scale.1.max((plans::BIG_TABLE as u64).div_ceil(per_iteration));
        let load = Load { clients, iterations: scale.0, warmup };
        for (ep, _) in systems {
            let mut c = ep.connect()?;
            c.batch_execute("CALL reset_sales_orders()")?;
            let connect = |client: usize| -> Res<_> {
                let mut c = ep.connect()?;
                let st = c.prepare(INSERT)?;
                Ok((c, st, Rng(0x9E37_79B9_7F4A_7C15 ^ ((client as u64 + 1) * 0x2545_F491))))
            };
            let iteration = |(c, st, rng): &mut (postgres::Client, postgres::Statement, Rng),
                             rec: &mut driver::Recorder,
                             _| {
                for _ in 0..ORDERS_PER_ITERATION {
                    let p = [
                        rng.between(1, 8000) as i32,
                        rng.between(1, 10000) as i32,
                        rng.between(1, 10000) as i32,
                        rng.between(1, 5) as i32,
                        rng.between(1, 106) as i32,
                    ];
                    rec.transaction(|| {
                        c.query_one(&*st, &[&p[0], &p[1], &p[2], &p[3], &p[4]]).map(|_| true)
                    })?;
                }
                Ok(())
            };
            // The warm-up runs on its own, so that PostgreSQL is analysed
            // with orders in the tables, as a running application's tables
            // are: statistics of the emptied tables would plan
            // insert_sales_order's statements for empty tables (sequential
            // scans) while they grow. The measured clients connect afresh,
            // so their plans are made on the current statistics.
            let warm = Load { clients, iterations: warmup, warmup: 0 };
            driver::run(&format!("W1 {}: warm-up, {who}", ep.system), warm, connect, iteration)?;
            if ep.system == "PostgreSQL" {
                c.batch_execute("VACUUM ANALYZE")?;
                c.batch_execute("CHECKPOINT")?;
            }
            // The plans the measured clients will get, made as they
            // connect (see `plans`).
            let plans = plans::hot(ep, &[PROBE_CALL], &HOT_STATEMENTS)?;
            let label = format!("W1 {}: {who}", ep.system);
            let cpu = ep.cpu()?;
            let o = driver::run(&label, Load { warmup: 0, ..load }, connect, iteration)?;
            plans::judge(ctx, "W1", &format!("insert_sales_order, {who}"), ep, &plans)?;
            let orders = (scale.0 + warmup) * per_iteration;
            let headers = scalar(&mut c, "SELECT count(*) FROM sales_order_header")?;
            let run = Run { system: ep.system, clients, orders, headers, integrity: integrity(ep)? };
            run.report(ctx, ep, cpu, &o)?;
        }
        if let Some(t) = &tarantool {
            t.call("reset_sales_orders", None)?;
            // The same random arguments as the SQL clients draw, from
            // Lua's generator: per client, one seed for the warm-up and
            // one for the measured run.
            let orders = |iterations: u64, round: u64| {
                move |client: usize| {
                    vec![iterations.to_string(), (round * 1000 + client as u64 + 1).to_string()]
                }
            };
            let bar = driver::phase(&format!("W1 Tarantool: warm-up, {who}"));
            t.drive("orders", clients, orders(warmup, 1))?;
            bar.finish_and_clear();
            let cpu = t.endpoint.cpu()?;
            let bar = driver::phase(&format!("W1 Tarantool: {who}"));
            let o = t.drive("orders", clients, orders(scale.0, 2))?;
            bar.finish_and_clear();
            let headers = tarantool_counts(t)?[0];
            let orders = (scale.0 + warmup) * per_iteration;
            let integrity = serde_json::from_str(&t.call("check", None)?)?;
            Run { system: "Tarantool", clients, orders, headers, integrity }.report(
                ctx,
                &t.endpoint,
                cpu,
                &o,
            )?;
        }
    }
    for (ep, _) in systems {
        ship(ctx, ep)?;
    }
    if let Some(t) = &tarantool {
        ship_tarantool(ctx, t)?;
    }
    for (ep, dir) in [(&centum.endpoint, centum.data_dir()), (&pg.endpoint, pg.dir().to_path_buf())] {
        let mut c = ep.connect()?;
        let mut tables = Vec::new();
        for name in TABLES {
            let rows = scalar(&mut c, &format!("SELECT pg_relation_size('{name}'::regclass)"))?;
            let count = scalar(&mut c, &format!("SELECT count(*) FROM {name}"))?;
            let indexes: Vec<(String, i64)> = c
                .query(
                    "SELECT c.relname::text, pg_relation_size(c.oid)::bigint FROM pg_index i \
                     JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::text::regclass ORDER BY 1",
                    &[&name],
                )?
                .iter()
                .map(|r| (r.get::<_, String>(0), r.get(1)))
                .collect();
            tables.push(TableSize { name, count, rows, indexes });
        }
        let (held, files) = if ep.system == "Centum" {
            ("in memory", "its log and checkpoint files")
        } else {
            ("on disk", "WAL, tables and indexes")
        };
        let tail = format!("Data directory: {} ({files}).", mib(du(&dir) as i64));
        sizes(ctx, ep.system, held, &tables, &tail);
    }
    if let Some(t) = &tarantool {
        let mut tables = Vec::new();
        for name in TABLES {
            // [rows, tuple bytes, [index, bytes]...]
            let v: Vec<serde_json::Value> = serde_json::from_str(&t.call("sizes", Some(name))?)?;
            let int = |v: &serde_json::Value| v.as_i64().ok_or_else(|| format!("tarantool sizes: {v}"));
            let indexes = v[2..]
                .iter()
                .map(|i| Ok((i[0].as_str().unwrap_or("?").to_string(), int(&i[1])?)))
                .collect::<Result<Vec<_>, String>>()?;
            tables.push(TableSize { name, count: int(&v[0])?, rows: int(&v[1])?, indexes });
        }
        let tail =
            "Tuple bytes are `space:bsize()`, the tuples' MessagePack without memtx's per-tuple header; \
                    index bytes are `index:bsize()`.";
        sizes(ctx, "Tarantool", "in memory", &tables, tail);
    }
    Ok(())
}

/// The order tables whose bytes per row are reported.
const TABLES: [&str; 2] = ["sales_order_header", "sales_order_detail"];

/// One table's footprint: rows, bytes of the rows, and each index's bytes.
struct TableSize {
    name: &'static str,
    count: i64,
    rows: i64,
    indexes: Vec<(String, i64)>,
}

fn mib(bytes: i64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// Reports each table's bytes per row with every index (its whole
/// footprint: in memory for Centum and Tarantool, on disk for PostgreSQL)
/// and notes the breakdown.
fn sizes(ctx: &mut Ctx, system: &'static str, held: &str, tables: &[TableSize], tail: &str) {
    let mut notes = Vec::new();
    for t in tables {
        let count = t.count.max(1);
        let per = |bytes: i64| format!("{:.0} B/row", bytes as f64 / count as f64);
        let listed: Vec<String> =
            t.indexes.iter().map(|(name, b)| format!("{name} {} ({})", mib(*b), per(*b))).collect();
        notes.push(format!(
            "{} ({} rows): rows {} ({}), indexes {}",
            t.name,
            t.count,
            mib(t.rows),
            per(t.rows),
            listed.join(", ")
        ));
        let all = t.rows + t.indexes.iter().map(|(_, b)| b).sum::<i64>();
        ctx.report.figure(
            Figure::new(
                "W1",
                format!("{}: bytes per row with its indexes", t.name),
                system,
                "bytes",
                all as f64 / count as f64,
            )
            .lower_is_better(),
        );
    }
    ctx.report.note("W1", format!("{system} after the last run, {held}: {}. {tail}", notes.join("; ")));
}

/// One system's measured run of `insert_sales_order` at a client count,
/// and what it left in the tables.
struct Run {
    system: &'static str,
    clients: usize,
    orders: u64,
    headers: i64,
    integrity: String,
}

impl Run {
    /// Checks the run's rows and reports its rate, its server CPU per
    /// order (`cpu` is the server's CPU before it) and its latency.
    fn report(&self, ctx: &mut Ctx, ep: &Endpoint, cpu: std::time::Duration, o: &driver::Outcome) -> Res<()> {
        let who = super::clients(self.clients);
        ctx.report.check(
            "W1",
            self.system,
            format!("{who}: one header per order committed"),
            self.headers as u64 == self.orders,
            format!("{} headers, {} orders", self.headers, self.orders),
        );
        let ok = &self.integrity;
        ctx.report.check("W1", self.system, format!("{who}: check.sql says ok"), ok == "ok", ok.clone());
        let case = format!("insert_sales_order, {who} (durable)");
        ctx.report.figure(Figure::new("W1", &case, self.system, "orders/s", o.per_second()).with_load(o));
        ctx.cpu_per_transaction("W1", &case, ep, cpu, self.orders)?;
        ctx.point(
            "w1-throughput",
            "W1: sales orders/s by clients (durable)",
            self.system,
            self.clients,
            o.per_second(),
        );
        if Some(&self.clients) == ctx.scale.w1_clients.last() {
            ctx.latency("w1-latency", &format!("W1: latency of one order, {who}"), self.system, o);
        }
        Ok(())
    }
}

/// Ships every order with 8 clients, each its own share of the orders.
fn ship(ctx: &mut Ctx, ep: &Endpoint) -> Res<()> {
    let mut c = ep.connect()?;
    let ids: Vec<i64> = c
        .query("SELECT sales_order_id FROM sales_order_header ORDER BY 1", &[])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let clients = ship_clients(ids.len());
    let per = ids.len() / clients;
    let load = Load { clients, iterations: per as u64, warmup: 0 };
    let ids = &ids;
    let o = driver::run(
        &format!("W1 {}: shipping", ep.system),
        load,
        |client| {
            let mut c = ep.connect()?;
            let st = c.prepare("SELECT update_sales_order_ship_info($1, now()::timestamp, $2)")?;
            Ok((c, st, client))
        },
        |(c, st, client), rec, i| {
            let id = ids[*client * per + i as usize];
            let tracking = format!("TRK-{id}");
            rec.transaction(|| c.query_one(&*st, &[&id, &tracking]).map(|_| true))
        },
    )?;
    let left = scalar(&mut c, "SELECT count(*) FROM sales_order_header WHERE ship_date IS NULL")?;
    let untracked = scalar(
        &mut c,
        "SELECT count(*) FROM sales_order_detail d JOIN sales_order_header h ON h.sales_order_id = d.sales_order_id \
         WHERE h.ship_date IS NOT NULL AND d.carrier_tracking_number IS DISTINCT FROM 'TRK-' || h.sales_order_id::text",
    )?;
    let shipped = Shipped { orders: ids.len() as i64, shipped: (clients * per) as i64, left, untracked };
    shipped.report(ctx, ep.system, clients, integrity(ep)?, &o);
    Ok(())
}

/// Ships every order on Tarantool, as [`ship`] does.
fn ship_tarantool(ctx: &mut Ctx, t: &peers::Tarantool) -> Res<()> {
    let orders = tarantool_counts(t)?[0];
    let clients = ship_clients(orders as usize);
    let bar = driver::phase("W1 Tarantool: shipping");
    let o = t.drive("ship", clients, |_| vec![])?;
    bar.finish_and_clear();
    let counts = tarantool_counts(t)?;
    let per = orders / clients as i64;
    let shipped = Shipped { orders, shipped: clients as i64 * per, left: counts[1], untracked: counts[2] };
    let ok = serde_json::from_str(&t.call("check", None)?)?;
    shipped.report(ctx, "Tarantool", clients, ok, &o);
    Ok(())
}

/// Clients that ship `orders` orders: 8, or fewer when there are fewer
/// orders.
fn ship_clients(orders: usize) -> usize {
    8.min(orders).max(1)
}

/// Tarantool's headers, unshipped headers, and lines of shipped orders
/// whose tracking number is not their order's (the server's `counts`).
fn tarantool_counts(t: &peers::Tarantool) -> Res<Vec<i64>> {
    Ok(serde_json::from_str(&t.call("counts", None)?)?)
}

/// What shipping left: of `orders`, `shipped` were shipped; `left`
/// headers are unshipped and `untracked` lines lack their tracking number.
struct Shipped {
    orders: i64,
    shipped: i64,
    left: i64,
    untracked: i64,
}

impl Shipped {
    fn report(&self, ctx: &mut Ctx, system: &'static str, clients: usize, ok: String, o: &driver::Outcome) {
        ctx.report.check(
            "W1",
            system,
            "every order shipped is marked shipped",
            self.left == self.orders - self.shipped,
            format!("{} unshipped of {}", self.left, self.orders),
        );
        ctx.report.check(
            "W1",
            system,
            "every line of a shipped order carries its tracking number",
            self.untracked == 0,
            format!("{} lines without", self.untracked),
        );
        ctx.report.check("W1", system, "check.sql says ok after shipping", ok == "ok", ok);
        let case = format!("update_sales_order_ship_info, {} (durable)", super::clients(clients));
        ctx.report.figure(Figure::new("W1", case, system, "orders/s", o.per_second()).with_load(o));
    }
}

/// The 106 sample orders of `centum.sql`, one a line as the Tarantool
/// server reads them: `order_no qty,product_id,special_offer_id;...`.
fn samples() -> String {
    let start = CENTUM_SQL.find("INSERT INTO demo_sales_order_seed").unwrap_or(CENTUM_SQL.len());
    let rows = CENTUM_SQL[start..].lines().skip(1).take_while(|l| l.trim_start().starts_with('('));
    rows.filter_map(|row| {
        let (order_no, lines) = row.trim().trim_start_matches('(').split_once(',')?;
        let lines: Vec<&str> = lines.split("\"(").skip(1).filter_map(|l| l.split(')').next()).collect();
        Some(format!("{} {}\n", order_no.trim(), lines.join(";")))
    })
    .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_sample_order_reaches_tarantool() {
        let samples = super::samples();
        assert_eq!(samples.lines().count(), 106);
        assert!(samples.starts_with("1 5,728,10;6,18,1;2,841,1;5,824,1;2,373,1\n"), "{samples}");
        for line in samples.lines() {
            let (_, lines) = line.split_once(' ').unwrap();
            for l in lines.split(';') {
                assert_eq!(l.split(',').filter(|v| v.parse::<u32>().is_ok()).count(), 3, "{line}");
            }
        }
    }
}
