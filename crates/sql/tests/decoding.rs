//! Logical decoding through SQL functions, as PostgreSQL's test_decoding
//! examples use it: `pg_create_logical_replication_slot`,
//! `pg_logical_slot_peek_changes` (leaves the slot where it was),
//! `pg_logical_slot_get_changes` (confirms what it returned, durably, up to
//! a position or a number of rows in whole transactions) and
//! `pg_drop_replication_slot`.

mod common;

use centum_sql::{Database, Session};
use common::{exec, fails};

fn open(dir: &std::path::Path, logical: bool) -> Database {
    let options = centum_engine::Options { logical, ..centum_engine::Options::durable(dir) };
    Database::open(centum_engine::Database::open(options).unwrap()).unwrap()
}

/// The `data` column of a decoding call.
fn data(s: &mut Session, sql: &str) -> Vec<String> {
    let r = exec(s, sql);
    r.last().unwrap().rows.iter().map(|row| row[2].to_string()).collect()
}

const PEEK: &str = "SELECT * FROM pg_logical_slot_peek_changes('s', NULL, NULL, 'include-xids', '0')";

#[test]
fn sql_functions_peek_get_and_drop_a_slot() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path(), true);
        let mut s = db.session();
        exec(&mut s, "CREATE TABLE t (id int PRIMARY KEY, v text)");
        let r = exec(&mut s, "SELECT * FROM pg_create_logical_replication_slot('s', 'test_decoding')");
        let row = &r.last().unwrap().rows[0];
        assert_eq!(row[0].to_string(), "s");
        assert!(row[1].to_string().contains('/'), "an LSN: {row:?}");
        assert_eq!(
            fails(&mut s, "SELECT * FROM pg_create_logical_replication_slot('s', 'test_decoding')")
                .sqlstate(),
            "42710"
        );
        exec(&mut s, "INSERT INTO t VALUES (1, 'a')");
        exec(&mut s, "BEGIN; UPDATE t SET v = 'b' WHERE id = 1; INSERT INTO t VALUES (2, 'c'); COMMIT");
        exec(&mut s, "DELETE FROM t WHERE id = 1");
        let all = vec![
            "BEGIN",
            "table public.t: INSERT: id[integer]:1 v[text]:'a'",
            "COMMIT",
            "BEGIN",
            "table public.t: UPDATE: id[integer]:1 v[text]:'b'",
            "table public.t: INSERT: id[integer]:2 v[text]:'c'",
            "COMMIT",
            "BEGIN",
            "table public.t: DELETE: id[integer]:1",
            "COMMIT",
        ];
        // Peeking leaves the slot where it was.
        assert_eq!(data(&mut s, PEEK), all);
        assert_eq!(data(&mut s, PEEK), all);
        // LSNs never go back, and a transaction's rows share its xid.
        let r = exec(&mut s, "SELECT lsn, xid FROM pg_logical_slot_peek_changes('s', NULL, NULL)");
        let rows = &r.last().unwrap().rows;
        let lsns: Vec<u64> = rows
            .iter()
            .map(|r| {
                let t = r[0].to_string();
                let (hi, lo) = t.split_once('/').unwrap();
                u64::from_str_radix(hi, 16).unwrap() << 32 | u64::from_str_radix(lo, 16).unwrap()
            })
            .collect();
        assert!(lsns.windows(2).all(|w| w[0] <= w[1]), "{lsns:?}");
        assert_eq!(rows[0][1], rows[2][1]);
        // Getting at most one row takes the whole first transaction and
        // confirms it.
        let got =
            data(&mut s, "SELECT * FROM pg_logical_slot_get_changes('s', NULL, 1, 'include-xids', '0')");
        assert_eq!(got, all[..3]);
        assert_eq!(data(&mut s, PEEK), all[3..]);
        // Up to the second transaction's COMMIT: that one only.
        let commit = exec(&mut s, "SELECT lsn FROM pg_logical_slot_peek_changes('s', NULL, NULL)");
        let second_commit = commit.last().unwrap().rows[3][0].to_string();
        let got = data(
            &mut s,
            &format!(
                "SELECT * FROM pg_logical_slot_get_changes('s', '{second_commit}', NULL, 'include-xids', '0')"
            ),
        );
        assert_eq!(got, all[3..7]);
        let binary = exec(&mut s, "SELECT data FROM pg_logical_slot_peek_binary_changes('s', NULL, NULL)");
        assert_eq!(binary.last().unwrap().rows.len(), 3);
        assert_eq!(binary.last().unwrap().columns[0].ty, Some(centum_types::DataType::Bytea));
        // Bad calls.
        assert_eq!(
            fails(&mut s, "SELECT * FROM pg_logical_slot_get_changes('nope', NULL, NULL)").sqlstate(),
            "42704"
        );
        assert_eq!(
            fails(&mut s, "SELECT * FROM pg_logical_slot_get_changes('s', NULL, NULL, 'include-xids')")
                .sqlstate(),
            "2202E"
        );
        assert_eq!(
            fails(
                &mut s,
                "SELECT * FROM pg_logical_slot_get_changes('s', NULL, NULL, 'include-xids', 'maybe')"
            )
            .sqlstate(),
            "22023"
        );
        assert_eq!(
            fails(&mut s, "SELECT * FROM pg_logical_slot_get_changes('s', 'x', NULL)").sqlstate(),
            "22P02"
        );
    }
    // What was confirmed stays confirmed after a restart.
    let db = open(dir.path(), true);
    let mut s = db.session();
    assert_eq!(data(&mut s, PEEK), ["BEGIN", "table public.t: DELETE: id[integer]:1", "COMMIT"]);
    exec(&mut s, "INSERT INTO t VALUES (3, 'd')");
    assert_eq!(data(&mut s, "SELECT * FROM pg_logical_slot_get_changes('s', NULL, NULL)").len(), 6);
    assert!(data(&mut s, PEEK).is_empty());
    exec(&mut s, "SELECT pg_drop_replication_slot('s')");
    assert_eq!(fails(&mut s, "SELECT pg_drop_replication_slot('s')").sqlstate(), "42704");
    assert_eq!(fails(&mut s, PEEK).sqlstate(), "42704");
    drop(s);
    drop(db);
    // Without logical decoding there are no logical slots.
    let db = open(dir.path(), false);
    let mut s = db.session();
    let e = fails(&mut s, "SELECT * FROM pg_create_logical_replication_slot('s2', 'test_decoding')");
    assert_eq!(e.sqlstate(), "55000", "{e}");
}

/// The hidden key columns of an index on expressions are not in the feed:
/// a row is decoded with the table's own columns only.
#[test]
fn hidden_index_key_columns_stay_out_of_the_feed() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), true);
    let mut s = db.session();
    exec(&mut s, "CREATE TABLE t (id int PRIMARY KEY, v text)");
    exec(&mut s, "CREATE INDEX t_lower ON t (lower(v)) WHERE id > 0");
    exec(&mut s, "SELECT * FROM pg_create_logical_replication_slot('s', 'test_decoding')");
    exec(&mut s, "INSERT INTO t VALUES (1, 'A')");
    exec(&mut s, "UPDATE t SET v = 'B' WHERE id = 1");
    assert_eq!(
        data(&mut s, PEEK),
        [
            "BEGIN",
            "table public.t: INSERT: id[integer]:1 v[text]:'A'",
            "COMMIT",
            "BEGIN",
            "table public.t: UPDATE: id[integer]:1 v[text]:'B'",
            "COMMIT"
        ]
    );
}
