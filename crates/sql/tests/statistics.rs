//! The statistics views count what statements do: `pg_stat_user_tables`,
//! `pg_stat_user_indexes` and `pg_stat_database`, read through SQL after a
//! known series of statements; `pg_stat_reset()` starts them again, and
//! only a superuser may call it.

mod common;

use centum_types::Value;
use common::{db, exec, fails, open_durable, scalar};

/// The row of `view` for relation `name` (`relname`, or `indexrelname` for
/// the index views), as integers in the order of `columns`.
fn counts(s: &mut centum_sql::Session, view: &str, key: &str, name: &str, columns: &str) -> Vec<Option<i64>> {
    let r = exec(s, &format!("SELECT {columns} FROM {view} WHERE {key} = '{name}'"));
    let rows = &r.last().unwrap().rows;
    assert_eq!(rows.len(), 1, "{view} {name}: {rows:?}");
    rows[0]
        .iter()
        .map(|v| match v {
            Value::Null => None,
            Value::BigInt(n) => Some(*n),
            Value::Integer(n) => Some(i64::from(*n)),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn tables_and_indexes_count_scans_lookups_and_committed_writes() {
    let db = db();
    let mut s = db.session();
    exec(
        &mut s,
        "CREATE TABLE t (id int PRIMARY KEY, k int, v text); CREATE INDEX t_k ON t (k); \
         CREATE TABLE h (x int); \
         INSERT INTO t SELECT g, g % 10, 'x' FROM generate_series(1, 100) g; \
         INSERT INTO h VALUES (1), (2); \
         UPDATE t SET v = 'y' WHERE id <= 5; \
         DELETE FROM t WHERE id > 90; \
         BEGIN; INSERT INTO t VALUES (1000, 1, 'gone'); INSERT INTO h VALUES (3); ROLLBACK",
    );
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM t"), 90);
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM t WHERE k = 4"), 9);
    exec(&mut s, "SELECT v FROM t WHERE id = 3");
    let cols = "seq_scan, seq_tup_read, idx_scan, idx_tup_fetch, n_tup_ins, n_tup_upd, n_tup_del, \
                n_tup_hot_upd, n_live_tup, n_mod_since_analyze, vacuum_count";
    // One full scan (count), three key reads (the UPDATE's and DELETE's
    // ranges and the point read: 5 + 10 + 1 rows), one read of t_k (9).
    // The rolled-back insert counts nowhere.
    assert_eq!(
        counts(&mut s, "pg_stat_user_tables", "relname", "t", cols),
        [1, 90, 4, 25, 100, 5, 10, 0, 90, 115, 0].map(Some)
    );
    // No index: PostgreSQL's NULLs.
    assert_eq!(
        counts(&mut s, "pg_stat_all_tables", "relname", "h", cols),
        [Some(0), Some(0), None, None, Some(2), Some(0), Some(0), Some(0), Some(2), Some(2), Some(0)]
    );
    let cols = "idx_scan, idx_tup_read, idx_tup_fetch";
    assert_eq!(counts(&mut s, "pg_stat_user_indexes", "indexrelname", "t_pkey", cols), [3, 16, 16].map(Some));
    assert_eq!(counts(&mut s, "pg_stat_all_indexes", "indexrelname", "t_k", cols), [1, 9, 9].map(Some));
    let r = exec(
        &mut s,
        "SELECT relname, indexrelid = 't_k'::regclass FROM pg_stat_user_indexes WHERE indexrelname = 't_k'",
    );
    assert_eq!(r[0].rows, vec![vec![Value::Text("t".into()), Value::Boolean(true)]]);

    let cols = "xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted, deadlocks, blks_read";
    let before = counts(&mut s, "pg_stat_database", "datname", "postgres", cols);
    assert_eq!(before[1..], [1, 102, 5, 10, 0, 0].map(Some));
    exec(&mut s, "BEGIN; INSERT INTO h VALUES (4); COMMIT; BEGIN; SELECT 1; ROLLBACK");
    let after = counts(&mut s, "pg_stat_database", "datname", "postgres", cols);
    // The first read of the view, the INSERT's transaction: 2 commits; one
    // rollback.
    assert_eq!((after[0].unwrap() - before[0].unwrap(), after[1], after[2]), (2, Some(2), Some(103)));

    exec(&mut s, "SELECT pg_stat_reset()");
    assert_eq!(
        counts(&mut s, "pg_stat_user_tables", "relname", "t", "seq_scan, idx_scan, n_tup_ins, n_live_tup"),
        [0, 0, 0, 90].map(Some)
    );
    assert_eq!(
        counts(&mut s, "pg_stat_database", "datname", "postgres", "xact_rollback, tup_inserted"),
        [0, 0].map(Some)
    );
    let reset = exec(&mut s, "SELECT stats_reset > now() - interval '1 hour' FROM pg_stat_database");
    assert_eq!(reset[0].rows[0][0], Value::Boolean(true));

    // Only a superuser resets.
    exec(&mut s, "CREATE ROLE boss SUPERUSER LOGIN; CREATE ROLE clerk LOGIN");
    let mut clerk = db.session();
    clerk.set_identity("clerk", "postgres");
    assert_eq!(fails(&mut clerk, "SELECT pg_stat_reset()").sqlstate(), "42501");
}

#[test]
fn live_rows_survive_a_restart_and_counters_start_again() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open_durable(dir.path());
        let mut s = db.session();
        exec(
            &mut s,
            "CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT g FROM generate_series(1, 50) g; \
             DELETE FROM t WHERE id <= 8",
        );
    }
    let db = open_durable(dir.path());
    let mut s = db.session();
    assert_eq!(
        counts(&mut s, "pg_stat_user_tables", "relname", "t", "n_live_tup, n_tup_ins, n_tup_del, seq_scan"),
        [42, 0, 0, 0].map(Some)
    );
}
