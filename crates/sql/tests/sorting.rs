//! Sorts and window orders larger than one sort run (16,384 entries), so
//! that runs are merged: ORDER BY and window partitions give the order a
//! stable sort of the input gives, for packed integer keys and for keys
//! compared value by value (text), with duplicates, NULLs and DESC.

mod common;

use common::{db, ints};

/// Rows: more than two runs, and not a power of two of them.
const N: i64 = 40_000;

/// The sort key of row `g`: 997 distinct values, a NULL every 101st row.
fn key(g: i64) -> Option<i64> {
    (g % 101 != 0).then_some(g * 7919 % 997)
}

/// `1..=N` stably sorted by `key`, NULLs last (or first when `desc`, as
/// SQL's default NULL placement flips with the direction).
fn expected(desc: bool) -> Vec<i64> {
    let mut want: Vec<i64> = (1..=N).collect();
    want.sort_by(|a, b| match (key(*a), key(*b)) {
        (Some(x), Some(y)) if desc => y.cmp(&x),
        (Some(x), Some(y)) => x.cmp(&y),
        (None, None) => std::cmp::Ordering::Equal,
        (None, _) if desc => std::cmp::Ordering::Less,
        (None, _) => std::cmp::Ordering::Greater,
        (_, None) if desc => std::cmp::Ordering::Greater,
        (_, None) => std::cmp::Ordering::Less,
    });
    want
}

const KEY: &str = "CASE WHEN g % 101 = 0 THEN NULL ELSE g * 7919 % 997 END";

#[test]
fn order_by_over_many_runs_is_a_stable_sort() {
    let d = db();
    let mut s = d.session();
    for desc in [false, true] {
        let dir = if desc { "DESC" } else { "" };
        let packed = format!("SELECT g FROM generate_series(1, {N}) g ORDER BY {KEY} {dir}");
        assert_eq!(ints(&mut s, &packed), expected(desc), "{packed}");
        // Text keys of equal length sort as their numbers do.
        let text =
            format!("SELECT g FROM generate_series(1, {N}) g ORDER BY lpad(({KEY})::text, 3, '0') {dir}");
        assert_eq!(ints(&mut s, &text), expected(desc), "{text}");
    }
}

#[test]
fn window_partitions_over_many_runs_are_stable_sorts() {
    let d = db();
    let mut s = d.session();
    for (order, text) in [(KEY.to_string(), false), (format!("lpad(({KEY})::text, 3, '0')"), true)] {
        // Each row's number within its partition (g % 3), in key order.
        let sql = format!(
            "SELECT row_number() OVER (PARTITION BY g % 3 ORDER BY {order}) FROM generate_series(1, {N}) g ORDER BY g"
        );
        let got = ints(&mut s, &sql);
        let mut want = vec![0; N as usize];
        let mut seen = [0i64; 3];
        for g in expected(false) {
            let p = (g % 3) as usize;
            seen[p] += 1;
            want[g as usize - 1] = seen[p];
        }
        assert_eq!(got, want, "text keys: {text}");
    }
}
