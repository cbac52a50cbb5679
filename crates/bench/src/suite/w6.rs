//! W6, new order: TPC-C's new-order transaction as one PL/pgSQL function
//! (the same text on both servers), called by N clients, each bound to a
//! home warehouse, with TPC-C's 1% of orders naming an unused item, which
//! the function rejects and the transaction rolls back. Afterwards every
//! district's order counter, its orders, new orders, order lines and stock
//! must agree with each other and with what the clients committed.

use super::driver::{self, Load};
use super::plans;
use super::report::Figure;
use super::servers::{scalar, Endpoint};
use super::{Ctx, Res};
use crate::engine::Rng;

pub const DESCRIPTION: &str = "TPC-C's warehouse, district, customer, item, stock, orders, new_order and order_line \
tables (their key columns and the ones new-order reads or writes), W warehouses with 10 districts each, loaded with \
INSERT ... SELECT from generate_series. One new order = one call of the function `new_order` (the same PL/pgSQL on \
both servers): read the warehouse tax, take the district's next order id, read the customer's discount, insert the \
order and new-order rows, then for each of 5-15 items (TPC-C's NURand over the items, 1% from another warehouse) \
read the price, update the stock and insert the order line. 1% of orders name an unused item: the function raises \
an error and the transaction rolls back, as TPC-C specifies. Each client has a home warehouse and picks districts \
and customers at random; a write conflict (Centum's optimistic concurrency) is retried by the client and counted. \
Durable commits on both servers. Figures are committed new orders per minute.";

/// The schema; `WITH (bucket_count = N)` only on Centum.
fn schema(centum: bool, warehouses: i32, items: i32, customers: i32) -> String {
    let with = |n: i64| {
        if centum {
            format!(" WITH (bucket_count = {})", (n.max(1024) as u64).next_power_of_two())
        } else {
            String::new()
        }
    };
    let (w, i, c) = (warehouses as i64, items as i64, customers as i64);
    format!(
        "CREATE TABLE warehouse (w_id int PRIMARY KEY, w_name text, w_tax numeric(4,4) NOT NULL, w_ytd numeric(12,2)){};
         CREATE TABLE district (d_w_id int, d_id int, d_name text, d_tax numeric(4,4) NOT NULL, d_ytd numeric(12,2), \
           d_next_o_id int NOT NULL, PRIMARY KEY (d_w_id, d_id)){};
         CREATE TABLE customer (c_w_id int, c_d_id int, c_id int, c_last text, c_credit text, \
           c_discount numeric(4,4) NOT NULL, c_balance numeric(12,2), PRIMARY KEY (c_w_id, c_d_id, c_id)){};
         CREATE TABLE item (i_id int PRIMARY KEY, i_name text, i_price numeric(5,2) NOT NULL, i_data text){};
         CREATE TABLE stock (s_w_id int, s_i_id int, s_quantity int NOT NULL, s_ytd int NOT NULL, \
           s_order_cnt int NOT NULL, s_remote_cnt int NOT NULL, s_dist_info text, s_data text, \
           PRIMARY KEY (s_w_id, s_i_id)){};
         CREATE TABLE orders (o_w_id int, o_d_id int, o_id int, o_c_id int NOT NULL, o_entry_d timestamp NOT NULL, \
           o_carrier_id int, o_ol_cnt int NOT NULL, o_all_local int NOT NULL, PRIMARY KEY (o_w_id, o_d_id, o_id));
         CREATE TABLE new_order (no_w_id int, no_d_id int, no_o_id int, PRIMARY KEY (no_w_id, no_d_id, no_o_id));
         CREATE TABLE order_line (ol_w_id int, ol_d_id int, ol_o_id int, ol_number int, ol_i_id int NOT NULL, \
           ol_supply_w_id int NOT NULL, ol_delivery_d timestamp, ol_quantity int NOT NULL, ol_amount numeric(6,2) NOT NULL, \
           ol_dist_info text, PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number));
         INSERT INTO item SELECT g, 'item ' || g::text, ((g % 9900) + 100)::numeric / 100, 'data' FROM generate_series(1, {items}) g;
         INSERT INTO warehouse SELECT g, 'warehouse ' || g::text, (g % 20)::numeric / 100, 300000 FROM generate_series(1, {warehouses}) g;
         INSERT INTO district SELECT w, d, 'district ' || d::text, (d % 20)::numeric / 100, 30000, 1
           FROM generate_series(1, {warehouses}) w, generate_series(1, 10) d;
         INSERT INTO customer SELECT w, d, c, 'customer ' || c::text, CASE WHEN c % 10 = 0 THEN 'BC' ELSE 'GC' END,
             (c % 50)::numeric / 100, -10
           FROM generate_series(1, {warehouses}) w, generate_series(1, 10) d, generate_series(1, {customers}) c;
         INSERT INTO stock SELECT w, g, 10 + g % 91, 0, 0, 0, 'district info ' || g::text, 'data'
           FROM generate_series(1, {warehouses}) w, generate_series(1, {items}) g;",
        with(w),
        with(10 * w),
        with(10 * w * c),
        with(i),
        with(w * i),
    )
}

/// New-order, TPC-C 2.4.2, as one function; an unknown item raises
/// P0001 and so rolls the whole order back.
/// One valid `new_order` call, for PostgreSQL's plans (rolled back).
const PROBE_CALL: &str = "SELECT new_order(1, 1, 1, '{1,2,3}', '{1,1,1}', '{1,2,3}')";

/// The statements `new_order` runs, as EXPLAIN takes them (Centum plans a
/// routine's statements when it is created).
const HOT_STATEMENTS: [&str; 5] = [
    "SELECT w_tax FROM warehouse WHERE w_id = 1",
    "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 1",
    "SELECT c_discount FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 1",
    "SELECT i_price FROM item WHERE i_id = 1",
    "UPDATE stock SET s_ytd = s_ytd + 1 WHERE s_w_id = 1 AND s_i_id = 1",
];

const NEW_ORDER: &str = "CREATE FUNCTION new_order(p_w_id int, p_d_id int, p_c_id int, p_items int[], p_supply int[], p_qty int[])
RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
  v_w_tax numeric;
  v_d_tax numeric;
  v_o_id int;
  v_discount numeric;
  v_price numeric;
  v_dist text;
  v_total numeric := 0;
  v_n int;
  v_all_local int := 1;
  i int;
BEGIN
  v_n := array_length(p_items, 1);
  SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id
    RETURNING d_next_o_id - 1, d_tax INTO v_o_id, v_d_tax;
  SELECT c_discount INTO v_discount FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  FOR i IN 1..v_n LOOP
    IF p_supply[i] <> p_w_id THEN
      v_all_local := 0;
    END IF;
  END LOOP;
  INSERT INTO orders VALUES (p_w_id, p_d_id, v_o_id, p_c_id, localtimestamp, NULL, v_n, v_all_local);
  INSERT INTO new_order VALUES (p_w_id, p_d_id, v_o_id);
  FOR i IN 1..v_n LOOP
    SELECT i_price INTO v_price FROM item WHERE i_id = p_items[i];
    IF NOT FOUND THEN
      RAISE EXCEPTION 'item % not found', p_items[i] USING ERRCODE = 'P0001';
    END IF;
    UPDATE stock SET s_quantity = CASE WHEN s_quantity >= p_qty[i] + 10 THEN s_quantity - p_qty[i] ELSE s_quantity - p_qty[i] + 91 END,
        s_ytd = s_ytd + p_qty[i], s_order_cnt = s_order_cnt + 1,
        s_remote_cnt = s_remote_cnt + CASE WHEN p_supply[i] = p_w_id THEN 0 ELSE 1 END
      WHERE s_w_id = p_supply[i] AND s_i_id = p_items[i]
      RETURNING s_dist_info INTO v_dist;
    INSERT INTO order_line VALUES (p_w_id, p_d_id, v_o_id, i, p_items[i], p_supply[i], NULL, p_qty[i], p_qty[i] * v_price, v_dist);
    v_total := v_total + p_qty[i] * v_price;
  END LOOP;
  RETURN v_total * (1 - v_discount) * (1 + v_w_tax + v_d_tax);
END;
$$";

/// TPC-C's non-uniform random number over x..=y.
fn nurand(rng: &mut Rng, a: i64, x: i64, y: i64, c: i64) -> i64 {
    (((rng.between(0, a) | rng.between(x, y)) + c) % (y - x + 1)) + x
}

/// One new order's arguments, TPC-C 2.4.1.
struct Order {
    d_id: i32,
    c_id: i32,
    items: Vec<i32>,
    supply: Vec<i32>,
    qty: Vec<i32>,
}

fn order(rng: &mut Rng, w_id: i32, warehouses: i32, items: i32, customers: i32) -> Order {
    let n = rng.between(5, 15) as usize;
    let invalid = rng.between(1, 100) == 1;
    let a_item = if items >= 8191 * 4 { 8191 } else { (items as i64 / 4).max(1) };
    let a_cust = if customers >= 1023 * 3 { 1023 } else { (customers as i64 / 3).max(1) };
    let mut o = Order {
        d_id: rng.between(1, 10) as i32,
        c_id: nurand(rng, a_cust, 1, customers as i64, 259) as i32,
        items: Vec::with_capacity(n),
        supply: Vec::with_capacity(n),
        qty: Vec::with_capacity(n),
    };
    let mut lines: Vec<(i32, i32, i32)> = (0..n)
        .map(|k| {
            let item = if invalid && k == n - 1 {
                items + 1
            } else {
                nurand(rng, a_item, 1, items as i64, 7911) as i32
            };
            let remote = warehouses > 1 && rng.between(1, 100) == 1;
            let supply = if remote { (w_id % warehouses) + 1 } else { w_id };
            (supply, item, rng.between(1, 10) as i32)
        })
        .collect();
    // Stock rows are updated in key order, as TPC-C kits do, so that two
    // orders never lock the same rows in opposite orders (deadlocks).
    lines.sort_unstable();
    for (supply, item, qty) in lines {
        o.supply.push(supply);
        o.items.push(item);
        o.qty.push(qty);
    }
    o
}

/// An int[] in PostgreSQL's text form: `{1,2,3}`.
fn array(v: &[i32]) -> String {
    let items: Vec<String> = v.iter().map(i32::to_string).collect();
    format!("{{{}}}", items.join(","))
}

pub fn run(ctx: &mut Ctx) -> Res<()> {
    let (warehouses, items, customers) =
        (ctx.scale.w6_warehouses, ctx.scale.w6_items, ctx.scale.w6_customers);
    let pg = ctx.postgres()?;
    let centum = ctx.centum()?;
    let endpoints = [&centum.endpoint, &pg.endpoint];
    for ep in endpoints {
        let bar = driver::phase(&format!("W6 {}: loading {warehouses} warehouses", ep.system));
        let mut c = ep.connect()?;
        c.batch_execute(&schema(ep.system == "Centum", warehouses, items, customers))?;
        c.batch_execute(NEW_ORDER)?;
        if ep.system == "PostgreSQL" {
            c.batch_execute("VACUUM ANALYZE")?;
        }
        bar.finish_and_clear();
    }
    // The plans the measured clients get, recorded once after the load
    // and analysis (see `plans`); judged after the first run.
    let mut hot = vec![];
    for ep in endpoints {
        hot.push(plans::hot(ep, &[PROBE_CALL], &HOT_STATEMENTS)?);
    }
    let mut committed = [0u64; 2];
    for &clients in &ctx.scale.w6_clients.clone() {
        let who = super::clients(clients);
        let load =
            Load { clients, iterations: ctx.scale.w6_iterations, warmup: ctx.scale.w6_iterations / 10 };
        for (e, ep) in endpoints.iter().enumerate() {
            let label = format!("W6 {}: {who}", ep.system);
            let cpu = ep.cpu()?;
            let o = driver::run(
                &label,
                load,
                |client| {
                    let mut c = ep.connect()?;
                    let st = c.prepare(
                        "SELECT new_order($1, $2, $3, $4::text::int[], $5::text::int[], $6::text::int[])",
                    )?;
                    let w_id = (client as i32 % warehouses) + 1;
                    Ok((c, st, w_id, Rng(0x2545_F491_4F6C_DD1D ^ ((client as u64 + 7) * 0x9E37_79B9))))
                },
                |(c, st, w_id, rng), rec, _| {
                    let o = order(rng, *w_id, warehouses, items, customers);
                    // Arrays travel as their text form, which both servers
                    // read the same way.
                    let (items, supply, qty) = (array(&o.items), array(&o.supply), array(&o.qty));
                    rec.transaction(|| {
                        match c.query_one(&*st, &[&*w_id, &o.d_id, &o.c_id, &items, &supply, &qty]) {
                            Ok(_) => Ok(true),
                            Err(e) if e.code().is_some_and(|c| c.code() == "P0001") => Ok(false),
                            Err(e) => Err(e),
                        }
                    })
                },
            )?;
            committed[e] += o.committed + o.warmup_committed;
            if !hot[e].is_empty() {
                plans::judge(ctx, "W6", "new_order", ep, &std::mem::take(&mut hot[e]))?;
            }
            let nopm = o.per_second() * 60.0;
            let case = format!("new orders per minute, {who} (durable)");
            ctx.report.figure(Figure::new("W6", &case, ep.system, "new orders/min", nopm).with_load(&o));
            let attempted = o.committed + o.warmup_committed + o.rolled_back;
            ctx.cpu_per_transaction("W6", &case, ep, cpu, attempted)?;
            ctx.point(
                "w6-throughput",
                "W6: TPC-C new orders per minute by clients (durable)",
                ep.system,
                clients,
                nopm,
            );
            let all = o.committed + o.rolled_back;
            let share = o.rolled_back as f64 / all.max(1) as f64;
            ctx.report.note(
                "W6",
                format!(
                    "{}, {who}: {} committed, {} rolled back on purpose ({:.1}%), {} retries after write conflicts.",
                    ep.system,
                    o.committed,
                    o.rolled_back,
                    100.0 * share,
                    o.retries
                ),
            );
            if Some(&clients) == ctx.scale.w6_clients.last() {
                ctx.latency("w6-latency", &format!("W6: latency of one new order, {who}"), ep.system, &o);
            }
        }
    }
    for (e, ep) in endpoints.iter().enumerate() {
        consistency(ctx, ep, committed[e])?;
    }
    Ok(())
}

/// TPC-C's consistency conditions 1-4, as far as new-order touches them,
/// and the order count against what the clients committed (warm-up
/// included).
fn consistency(ctx: &mut Ctx, ep: &Endpoint, committed: u64) -> Res<()> {
    let mut c = ep.connect()?;
    let bad_districts = scalar(&mut c,
        "SELECT count(*) FROM district d WHERE d.d_next_o_id - 1 <> \
           (SELECT count(*) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id) \
         OR d.d_next_o_id - 1 <> coalesce((SELECT max(o_id) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id), 0)",
    )?;
    ctx.report.check(
        "W6",
        ep.system,
        "every district's next order id follows its orders (no gaps: rolled-back orders left none)",
        bad_districts == 0,
        format!("{bad_districts} districts differ"),
    );
    let orders = scalar(&mut c, "SELECT count(*) FROM orders")?;
    let new_orders = scalar(&mut c, "SELECT count(*) FROM new_order")?;
    ctx.report.check(
        "W6",
        ep.system,
        "one new_order row per order",
        orders == new_orders,
        format!("{orders} orders, {new_orders} new_order rows"),
    );
    let lines = scalar(&mut c, "SELECT count(*) FROM order_line")?;
    let ol_cnt = scalar(&mut c, "SELECT coalesce(sum(o_ol_cnt), 0)::bigint FROM orders")?;
    ctx.report.check(
        "W6",
        ep.system,
        "order lines match the orders' line counts",
        lines == ol_cnt,
        format!("{lines} lines, {ol_cnt} counted"),
    );
    let stock = scalar(&mut c, "SELECT sum(s_ytd)::bigint FROM stock")?;
    let qty = scalar(&mut c, "SELECT coalesce(sum(ol_quantity), 0)::bigint FROM order_line")?;
    ctx.report.check(
        "W6",
        ep.system,
        "stock's year-to-date quantity equals the quantities ordered",
        stock == qty,
        format!("{stock} in stock, {qty} ordered"),
    );
    ctx.report.check(
        "W6",
        ep.system,
        "one order per committed call, none for a rolled-back one",
        orders as u64 == committed,
        format!("{orders} orders, {committed} committed"),
    );
    Ok(())
}
