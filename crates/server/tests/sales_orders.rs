//! The sales-order demo (`examples/sales-orders`) as its README runs it,
//! with psql and pgbench alone: `centum.sql` loads, `insert-order.pgbench`
//! runs in every query mode and then with 32 clients, shipping updates run
//! concurrently under snapshot isolation (where the retry setting absorbs
//! write conflicts), and `check.sql` answers `ok` with every order and
//! line accounted for.

mod common;

use common::{assert_all_ran, pgbench, psql, require, Server};
use std::path::{Path, PathBuf};

fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sales-orders").join(file)
}

fn scalar(psql_bin: &Path, server: &Server, sql: &str) -> i64 {
    psql(psql_bin, server, &["-At", "-c", sql]).trim().parse().unwrap()
}

#[test]
fn the_sales_order_demo_runs_and_keeps_its_integrity() {
    let (Some(bench), Some(psql_bin)) = (require("pgbench"), require("psql")) else { return };
    let server = Server::start(&[]);
    psql(&psql_bin, &server, &["-f", example("centum.sql").to_str().unwrap()]);
    assert_eq!(scalar(&psql_bin, &server, "SELECT count(*) FROM product"), 1000);
    assert_eq!(scalar(&psql_bin, &server, "SELECT count(*) FROM demo_sales_order_seed"), 106);

    let script = example("insert-order.pgbench");
    let script = script.to_str().unwrap();
    let mut orders = 0;
    for mode in ["simple", "extended", "prepared"] {
        let out = pgbench(
            &bench,
            &server,
            &[],
            &["-n", "-M", mode, "-c", "4", "-j", "2", "-t", "25", "-f", script],
        );
        assert_all_ran(&out, 100, &format!("insert-order -M {mode}"));
        orders += 100;
    }
    let out = pgbench(
        &bench,
        &server,
        &[],
        &["-n", "-M", "prepared", "-c", "32", "-j", "2", "-t", "40", "-f", script],
    );
    assert_all_ran(&out, 32 * 40, "insert-order -c 32");
    orders += 32 * 40;
    assert_eq!(scalar(&psql_bin, &server, "SELECT count(*) FROM sales_order_header"), orders);
    let check = example("check.sql");
    assert_eq!(psql(&psql_bin, &server, &["-At", "-f", check.to_str().unwrap()]).trim(), "ok");

    // Ship orders from 32 clients at once under snapshot isolation: two
    // calls on one order conflict, and the server runs the loser again.
    let ship = std::env::temp_dir().join(format!("ship-{}.pgbench", std::process::id()));
    std::fs::write(
        &ship,
        "\\set id random(1, 400)\nSELECT update_sales_order_ship_info(:id, localtimestamp, 'TRACK-' || :id);\n",
    )
    .unwrap();
    let env = [("PGOPTIONS", "-c default_transaction_isolation=repeatable\\ read")];
    let out = pgbench(
        &bench,
        &server,
        &env,
        &["-n", "-M", "prepared", "-c", "32", "-j", "2", "-t", "30", "-f", ship.to_str().unwrap()],
    );
    std::fs::remove_file(&ship).ok();
    assert_all_ran(&out, 32 * 30, "update_sales_order_ship_info -c 32");
    let shipped = scalar(&psql_bin, &server, "SELECT count(*) FROM sales_order_header WHERE status = 5");
    assert!(shipped > 0 && shipped <= 400, "{shipped} orders shipped");
    // Every line of a shipped order carries its tracking number, and no
    // other line does.
    assert_eq!(
        scalar(
            &psql_bin,
            &server,
            "SELECT count(*) FROM sales_order_detail d JOIN sales_order_header h ON h.sales_order_id = d.sales_order_id \
             WHERE (h.status = 5) <> (d.carrier_tracking_number IS NOT NULL) \
                OR (h.status = 5 AND d.carrier_tracking_number <> 'TRACK-' || h.sales_order_id::text)"
        ),
        0
    );
    assert_eq!(psql(&psql_bin, &server, &["-At", "-f", check.to_str().unwrap()]).trim(), "ok");

    // The reset procedure empties the orders.
    psql(&psql_bin, &server, &["-c", "CALL reset_sales_orders()"]);
    assert_eq!(scalar(&psql_bin, &server, "SELECT count(*) FROM sales_order_detail"), 0);
}

/// `postgres.sql` is `centum.sql` without the `WITH (bucket_count = n)`
/// options, apart from the comments at its head and the kind of the two
/// indexes on columns with few distinct values (hash on Centum as in the
/// sample, B-tree on PostgreSQL): the two systems run the same schema,
/// routines and data.
#[test]
fn the_postgres_script_is_the_centum_script_without_bucket_counts() {
    let few_values = ["sales_order_header_sales_person", "sales_order_detail_product"];
    let strip = |text: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| l.starts_with("--") || l.is_empty())
            .map(|l| {
                if few_values.iter().any(|i| l.contains(i)) {
                    l.replace(" USING hash", "")
                } else {
                    l.into()
                }
            })
            .map(|l| match l.find(" WITH (bucket_count = ") {
                Some(at) => {
                    let end = l[at..].find(')').map_or(l.len(), |e| at + e + 1);
                    format!("{}{}", &l[..at], &l[end..])
                }
                None => l.to_string(),
            })
            .collect()
    };
    let centum = std::fs::read_to_string(example("centum.sql")).unwrap();
    let postgres = std::fs::read_to_string(example("postgres.sql")).unwrap();
    let (c, p) = (strip(&centum), strip(&postgres));
    assert!(c.len() > 100);
    for (i, (a, b)) in c.iter().zip(&p).enumerate() {
        assert_eq!(a, b, "line {} after the head differs", i + 1);
    }
    assert_eq!(c.len(), p.len());
}
