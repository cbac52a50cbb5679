//! W1, sales orders: the seed's ostress run of the sales-order demo
//! (`examples/sales-orders`), through each server. Every client inserts
//! orders one `insert_sales_order` call (one transaction) at a time, 20
//! per iteration; then every order is shipped with
//! `update_sales_order_ship_info`. The demo's integrity check must say
//! `ok` after each phase, and the row counts must match what the clients
//! committed.

use super::driver::{self, Load};
use super::plans;
use super::report::Figure;
use super::servers::{du, scalar, Endpoint};
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
(`update_sales_order_ship_info`: the header and every line), 8 clients. Durable commits on both servers.";

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
            ctx.report.check(
                "W1",
                ep.system,
                format!("{who}: one header per order committed"),
                headers as u64 == orders,
                format!("{headers} headers, {orders} orders"),
            );
            let ok = integrity(ep)?;
            ctx.report.check("W1", ep.system, format!("{who}: check.sql says ok"), ok == "ok", ok);
            let case = format!("insert_sales_order, {who} (durable)");
            ctx.report.figure(Figure::new("W1", &case, ep.system, "orders/s", o.per_second()).with_load(&o));
            ctx.cpu_per_transaction("W1", &case, ep, cpu, orders)?;
            ctx.point(
                "w1-throughput",
                "W1: sales orders/s by clients (durable)",
                ep.system,
                clients,
                o.per_second(),
            );
            if Some(&clients) == ctx.scale.w1_clients.last() {
                ctx.latency("w1-latency", &format!("W1: latency of one order, {who}"), ep.system, &o);
            }
        }
    }
    for (ep, _) in systems {
        ship(ctx, ep)?;
    }
    for (ep, dir) in [(&centum.endpoint, centum.data_dir()), (&pg.endpoint, pg.dir().to_path_buf())] {
        let mut c = ep.connect()?;
        let mib = |bytes: i64| format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64);
        let mut sizes = Vec::new();
        for t in ["sales_order_header", "sales_order_detail"] {
            let rows = scalar(&mut c, &format!("SELECT pg_relation_size('{t}'::regclass)"))?;
            let count = scalar(&mut c, &format!("SELECT count(*) FROM {t}"))?.max(1);
            let per = |bytes: i64| format!("{:.0} B/row", bytes as f64 / count as f64);
            let indexes: Vec<(String, i64)> = c
                .query(
                    "SELECT c.relname::text, pg_relation_size(c.oid)::bigint FROM pg_index i \
                     JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::text::regclass ORDER BY 1",
                    &[&t],
                )?
                .iter()
                .map(|r| (r.get::<_, String>(0), r.get(1)))
                .collect();
            let listed: Vec<String> =
                indexes.iter().map(|(name, b)| format!("{name} {} ({})", mib(*b), per(*b))).collect();
            sizes.push(format!(
                "{t} ({count} rows): rows {} ({}), indexes {}",
                mib(rows),
                per(rows),
                listed.join(", ")
            ));
            // Bytes per row with every index: the table's whole footprint,
            // in memory for Centum, on disk for PostgreSQL.
            let all = rows + indexes.iter().map(|(_, b)| b).sum::<i64>();
            ctx.report.figure(
                Figure::new(
                    "W1",
                    format!("{t}: bytes per row with its indexes"),
                    ep.system,
                    "bytes",
                    all as f64 / count as f64,
                )
                .lower_is_better(),
            );
        }
        let (held, files) = if ep.system == "Centum" {
            ("in memory", "its log and checkpoint files")
        } else {
            ("on disk", "WAL, tables and indexes")
        };
        let dir_mib = mib(du(&dir) as i64);
        ctx.report.note(
            "W1",
            format!(
                "{} after the last run, {held}: {}. Data directory: {dir_mib} ({files}).",
                ep.system,
                sizes.join("; ")
            ),
        );
    }
    Ok(())
}

/// Ships every order with 8 clients, each its own share of the orders.
fn ship(ctx: &mut Ctx, ep: &Endpoint) -> Res<()> {
    let mut c = ep.connect()?;
    let ids: Vec<i64> = c
        .query("SELECT sales_order_id FROM sales_order_header ORDER BY 1", &[])?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let clients = 8.min(ids.len()).max(1);
    let who = super::clients(clients);
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
    let shipped = (clients * per) as i64;
    let left = scalar(&mut c, "SELECT count(*) FROM sales_order_header WHERE ship_date IS NULL")?;
    ctx.report.check(
        "W1",
        ep.system,
        "every order shipped is marked shipped",
        left == ids.len() as i64 - shipped,
        format!("{left} unshipped of {}", ids.len()),
    );
    let untracked = scalar(
        &mut c,
        "SELECT count(*) FROM sales_order_detail d JOIN sales_order_header h ON h.sales_order_id = d.sales_order_id \
         WHERE h.ship_date IS NOT NULL AND d.carrier_tracking_number IS DISTINCT FROM 'TRK-' || h.sales_order_id::text",
    )?;
    ctx.report.check(
        "W1",
        ep.system,
        "every line of a shipped order carries its tracking number",
        untracked == 0,
        format!("{untracked} lines without"),
    );
    let ok = integrity(ep)?;
    ctx.report.check("W1", ep.system, "check.sql says ok after shipping", ok == "ok", ok);
    let case = format!("update_sales_order_ship_info, {who} (durable)");
    ctx.report.figure(Figure::new("W1", case, ep.system, "orders/s", o.per_second()).with_load(&o));
    Ok(())
}
