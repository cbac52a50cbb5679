//! A database that is a hot standby (`Database::set_standby`):
//!
//! - every transaction is READ ONLY, as on PostgreSQL's hot standby: each
//!   kind of write fails with 25006, reads work, and the settings and
//!   functions that tell a standby say so. A golden transcript shows it
//!   (`tests/standby/*.sql`, where a `\standby on` or `\standby off` line
//!   between statements turns the database; `UPDATE_GOLDEN=1` rewrites the
//!   expected `.out` files);
//! - every session sees the switch at its next statement, prepared
//!   statements included, and the same session writes again once the
//!   database is a primary;
//! - nothing a standby's session does reaches the engine: no redo record,
//!   no change of the catalog's bytes;
//! - the SQL catalog is read again (`Database::reload_catalog`) after the
//!   engine applied a primary's redo records: tables with their defaults
//!   and CHECK constraints, views, sequences, functions, schemas and roles
//!   created on the primary are there, with the primary's rows.

mod common;

use centum_engine::storage::{LogReader, SimFs};
use centum_sql::copy::CopyStart;
use centum_sql::{Database, Session, TxnStatus};
use centum_types::Value;
use common::{answer, compare_golden, db, exec, fails, scalar, statements};
use std::fmt::Write;
use std::path::PathBuf;
use std::sync::Arc;

// ---------------------------------------------------------------------------
// The golden transcript

/// Runs `script` in one session of `db`, turning `db` into a standby and
/// back at its `\standby on` and `\standby off` lines.
fn transcript(db: &Database, script: &str) -> String {
    let mut session = db.session();
    let mut out = String::new();
    let mut chunk = String::new();
    let mut run = |chunk: &mut String, out: &mut String| {
        for stmt in statements(chunk) {
            answer(out, &stmt, session.execute(&stmt));
        }
        chunk.clear();
    };
    for line in script.lines() {
        match line.trim().strip_prefix("\\standby ") {
            Some(turn) => {
                run(&mut chunk, &mut out);
                writeln!(out, "{}", line.trim()).unwrap();
                db.set_standby(match turn.trim() {
                    "on" => true,
                    "off" => false,
                    other => panic!("\\standby {other}: on or off"),
                });
            }
            None => {
                chunk.push_str(line);
                chunk.push('\n');
            }
        }
    }
    run(&mut chunk, &mut out);
    out
}

fn golden(name: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/standby");
    let script = std::fs::read_to_string(dir.join(format!("{name}.sql"))).unwrap();
    let got = transcript(&db(), &script);
    compare_golden(name, &dir.join(format!("{name}.out")), &got);
}

#[test]
fn hot_standby() {
    golden("hot_standby");
}

// ---------------------------------------------------------------------------
// Sessions and the switch

fn text(s: &mut Session, sql: &str) -> String {
    let r = exec(s, sql);
    r.last().unwrap().rows[0][0].to_string()
}

#[test]
fn every_session_sees_the_switch_at_its_next_statement() {
    let db = db();
    let mut a = db.session();
    exec(&mut a, "CREATE TABLE t (id int PRIMARY KEY, v text)");
    exec(&mut a, "INSERT INTO t VALUES (1, 'one')");
    let mut b = db.session();
    // Prepared while a primary, run once the database is a standby: the
    // plan is kept, the refusal comes as it runs.
    let mut insert = a.prepare("INSERT INTO t VALUES ($1, 'x')", &[]).unwrap();
    let mut recovery = a.prepare("SELECT pg_is_in_recovery()", &[]).unwrap();
    let mut ro = a.prepare("SELECT current_setting('transaction_read_only')", &[]).unwrap();
    assert_eq!(a.execute_prepared(&mut recovery, &[]).unwrap().rows[0][0], Value::Boolean(false));
    assert_eq!(a.execute_prepared(&mut ro, &[]).unwrap().rows[0][0], Value::Text("off".into()));
    // A block of b's open when the database turns.
    exec(&mut b, "BEGIN");
    exec(&mut b, "INSERT INTO t VALUES (2, 'two')");

    db.set_standby(true);
    assert!(db.is_standby());
    let e = a.execute_prepared(&mut insert, &[Value::Integer(3)]).unwrap_err();
    assert_eq!(
        (e.sqlstate(), e.to_string().as_str()),
        ("25006", "cannot execute INSERT in a read-only transaction")
    );
    assert_eq!(a.execute_prepared(&mut recovery, &[]).unwrap().rows[0][0], Value::Boolean(true));
    assert_eq!(a.execute_prepared(&mut ro, &[]).unwrap().rows[0][0], Value::Text("on".into()));
    assert_eq!(text(&mut a, "SHOW transaction_read_only"), "on");
    // b's block reads, and is refused at its next write.
    assert_eq!(scalar(&mut b, "SELECT count(*) FROM t"), 2);
    assert_eq!(fails(&mut b, "UPDATE t SET v = 'uno' WHERE id = 1").sqlstate(), "25006");
    assert_eq!(fails(&mut b, "SELECT 1").sqlstate(), "25P02");
    exec(&mut b, "ROLLBACK");
    // A session opened on the standby.
    let mut c = db.session();
    assert_eq!(fails(&mut c, "DELETE FROM t").sqlstate(), "25006");
    assert_eq!(scalar(&mut c, "SELECT count(*) FROM t"), 1);

    db.set_standby(false);
    assert!(!db.is_standby());
    assert_eq!(a.execute_prepared(&mut insert, &[Value::Integer(3)]).unwrap().tag, "INSERT 0 1");
    assert_eq!(a.execute_prepared(&mut recovery, &[]).unwrap().rows[0][0], Value::Boolean(false));
    exec(&mut b, "INSERT INTO t VALUES (4, 'four')");
    exec(&mut c, "UPDATE t SET v = 'uno' WHERE id = 1");
    assert_eq!(scalar(&mut c, "SELECT count(*) FROM t"), 3);
    assert_eq!(text(&mut c, "SHOW transaction_read_only"), "off");
}

#[test]
fn begin_in_a_pipeline_takes_its_access_mode() {
    let db = db();
    let mut s = db.session();
    exec(&mut s, "CREATE TABLE t (id int PRIMARY KEY)");
    // The extended protocol's implicit block becomes the client's own at
    // its BEGIN, READ ONLY as asked.
    s.begin_implicit().unwrap();
    let mut begin = s.prepare("BEGIN READ ONLY", &[]).unwrap();
    s.execute_prepared(&mut begin, &[]).unwrap();
    let mut insert = s.prepare("INSERT INTO t VALUES (1)", &[]).unwrap();
    assert_eq!(s.execute_prepared(&mut insert, &[]).unwrap_err().sqlstate(), "25006");
    s.end_implicit().unwrap();
    assert_eq!(s.status(), TxnStatus::Failed);
    exec(&mut s, "ROLLBACK");
    // On a standby READ WRITE is refused there too, and the implicit
    // block ends rolled back at the Sync.
    db.set_standby(true);
    s.begin_implicit().unwrap();
    let mut begin = s.prepare("BEGIN READ WRITE", &[]).unwrap();
    let e = s.execute_prepared(&mut begin, &[]).unwrap_err();
    assert_eq!(
        (e.sqlstate(), e.to_string().as_str()),
        ("0A000", "cannot set transaction read-write mode during recovery")
    );
    s.end_implicit().unwrap();
    assert_eq!(s.status(), TxnStatus::Idle);
    db.set_standby(false);
    assert_eq!(s.execute_prepared(&mut insert, &[]).unwrap().tag, "INSERT 0 1");
}

#[test]
fn copy_from_is_refused_and_copy_to_allowed() {
    let db = db();
    let mut s = db.session();
    exec(&mut s, "CREATE TABLE t (id int PRIMARY KEY)");
    exec(&mut s, "INSERT INTO t VALUES (1), (2)");
    db.set_standby(true);
    let e = s.copy("COPY t FROM STDIN").err().expect("COPY FROM is refused");
    assert_eq!(
        (e.sqlstate(), e.to_string().as_str()),
        ("25006", "cannot execute COPY FROM in a read-only transaction")
    );
    // A table that does not exist is reported first, as in PostgreSQL.
    assert_eq!(s.copy("COPY nowhere FROM STDIN").err().unwrap().sqlstate(), "42P01");
    // Inside a block the refusal fails the block.
    exec(&mut s, "BEGIN");
    assert_eq!(s.copy("COPY t FROM STDIN").err().unwrap().sqlstate(), "25006");
    assert_eq!(fails(&mut s, "SELECT 1").sqlstate(), "25P02");
    exec(&mut s, "ROLLBACK");
    let Some(CopyStart::Out(out)) = s.copy("COPY t TO STDOUT").unwrap() else { panic!("not a COPY TO") };
    assert_eq!(out.tag, "COPY 2");
    db.set_standby(false);
    let Some(CopyStart::In(mut copy)) = s.copy("COPY t FROM STDIN").unwrap() else {
        panic!("not a COPY FROM")
    };
    copy.data(&mut s, b"3\n").unwrap();
    assert_eq!(copy.finish(&mut s).unwrap().tag, "COPY 1");
}

// ---------------------------------------------------------------------------
// Primary and standby engines

/// A durable engine on a simulated file system that logs what a standby
/// needs (old images), collecting only on request.
fn primary_engine() -> centum_engine::Database {
    centum_engine::Database::open(centum_engine::Options {
        logical: true,
        data_dir: Some("/db".into()),
        fs: Arc::new(SimFs::new()),
        gc_interval: None,
        ..Default::default()
    })
    .unwrap()
}

/// A standby's engine: in memory, its tables filled by applied records.
fn standby_engine() -> centum_engine::Database {
    centum_engine::Database::open(centum_engine::Options { gc_interval: None, ..Default::default() }).unwrap()
}

/// Applies to `standby` every durable transaction `reader` has not handed
/// out yet; how many.
fn catch_up(
    primary: &centum_engine::Database,
    reader: &mut LogReader,
    standby: &centum_engine::Database,
) -> usize {
    primary.flush_log().unwrap();
    standby.apply_log(reader).unwrap()
}

/// The rows of `sql`, as text.
fn rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    exec(s, sql).pop().unwrap().rows.iter().map(|r| r.iter().map(|v| v.to_string()).collect()).collect()
}

#[test]
fn a_standby_writes_nothing_to_the_engine() {
    let engine = primary_engine();
    let db = Database::open(engine.clone()).unwrap();
    let mut s = db.session();
    for sql in [
        "CREATE TABLE t (id serial PRIMARY KEY, v text DEFAULT 'x' CHECK (v <> ''))",
        "CREATE SEQUENCE s",
        "CREATE VIEW tv AS SELECT id, v FROM t",
        "CREATE FUNCTION add(n int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN INSERT INTO t (v) VALUES (n::text); RETURN n; END; $$",
        "CREATE PROCEDURE put(n int) LANGUAGE plpgsql AS $$ BEGIN INSERT INTO t (v) VALUES (n::text); END; $$",
        "INSERT INTO t (v) VALUES ('a'), ('b')",
        "SELECT nextval('s')",
    ] {
        exec(&mut s, sql);
    }
    engine.flush_log().unwrap();
    let mut reader = engine.redo(engine.log_end().unwrap()).unwrap();
    let extra = engine.catalog_extra();
    let before = rows(&mut s, "SELECT id, v FROM t ORDER BY id");

    db.set_standby(true);
    let mut fresh = db.session();
    for session in [&mut s, &mut fresh] {
        for sql in [
            "INSERT INTO t (v) VALUES ('c')",
            "UPDATE t SET v = 'z'",
            "DELETE FROM t",
            "INSERT INTO tv (v) VALUES ('d')",
            "SELECT add(1)",
            "CALL put(2)",
            "SELECT nextval('s')",
            "SELECT setval('s', 100)",
            "SELECT nextval('t_id_seq')",
            "SELECT * FROM t FOR UPDATE",
            "CREATE TABLE u (id int)",
            "CREATE SEQUENCE s2",
            "ALTER SEQUENCE s RESTART WITH 50",
            "ALTER TABLE t ADD COLUMN w int",
            "CREATE INDEX t_v ON t (v)",
            "DROP VIEW tv",
            "CREATE ROLE someone",
            "GRANT SELECT ON t TO PUBLIC",
            "COMMENT ON TABLE t IS 'x'",
            "TRUNCATE t",
            "CREATE MATERIALIZED VIEW mv AS SELECT 1 AS one",
            "CREATE TABLE u2 AS SELECT 1 AS one",
            "EXECUTE nothing",
            "BEGIN; INSERT INTO t (v) VALUES ('e'); COMMIT",
            "SELECT pg_advisory_lock(1), pg_advisory_unlock(1)",
            "VACUUM",
            "ANALYZE",
            "SELECT count(*) FROM t",
            "SELECT * FROM tv",
            "SELECT last_value FROM s",
        ] {
            let _ = session.execute(sql);
            let _ = session.execute("ROLLBACK");
        }
        let _ = session.execute("PREPARE p AS SELECT nextval('s')");
        let _ = session.execute("EXECUTE p");
        let _ = session.execute("PREPARE q(bigint) AS SELECT $1");
        let _ = session.execute("EXECUTE q(nextval('s'))");
    }
    engine.flush_log().unwrap();
    let logged = reader.read().unwrap();
    assert!(logged.is_empty(), "a standby's sessions logged {} transactions", logged.len());
    assert_eq!(engine.catalog_extra(), extra, "the catalog's bytes changed");
    assert_eq!(rows(&mut s, "SELECT id, v FROM t ORDER BY id"), before);
    assert!(engine.table_names().iter().all(|t| t == "t"), "{:?}", engine.table_names());

    // A primary again: the sequence goes on where it was.
    db.set_standby(false);
    assert_eq!(scalar(&mut s, "SELECT nextval('s')"), 2);
}

#[test]
fn a_standby_reads_the_catalog_a_primary_changed() {
    let engine = primary_engine();
    let mut reader = engine.redo(engine.log_end().unwrap()).unwrap();
    let primary = Database::open(engine.clone()).unwrap();
    let replica = standby_engine();
    let standby = Database::open(replica.clone()).unwrap();
    standby.set_standby(true);
    // Opened before anything exists.
    let mut r = standby.session();
    assert_eq!(fails(&mut r, "SELECT * FROM items").sqlstate(), "42P01");

    let mut p = primary.session();
    for sql in [
        "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL DEFAULT 'unnamed', qty int CHECK (qty >= 0))",
        "INSERT INTO items (id, qty) VALUES (1, 5), (2, 7)",
        "INSERT INTO items VALUES (3, 'bolt', 0)",
        "CREATE SEQUENCE ticket START 100",
        "SELECT nextval('ticket'), nextval('ticket')",
        "CREATE SEQUENCE exact",
        "SELECT setval('exact', 42)",
        "CREATE VIEW stocked AS SELECT id, name FROM items WHERE qty > 0",
        "CREATE FUNCTION doubled(n int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN n * 2; END; $$",
        "CREATE SCHEMA shop",
        "CREATE TABLE shop.orders (id int PRIMARY KEY, item int REFERENCES items (id))",
        "INSERT INTO shop.orders VALUES (10, 1), (11, 3)",
        "CREATE ROLE clerk LOGIN",
        "COMMENT ON TABLE items IS 'what we sell'",
    ] {
        exec(&mut p, sql);
    }
    assert!(catch_up(&engine, &mut reader, &replica) > 0);
    standby.reload_catalog().unwrap();

    // The same answers on both, through the session the standby had open.
    for sql in [
        "SELECT id, name, qty FROM items ORDER BY id",
        "SELECT * FROM stocked ORDER BY id",
        "SELECT id, doubled(id) FROM items ORDER BY id",
        "SELECT o.id, i.name FROM shop.orders o JOIN items i ON i.id = o.item ORDER BY o.id",
        "SELECT last_value, is_called FROM exact",
        "SELECT c.relname, q.seqstart FROM pg_sequence q JOIN pg_class c ON c.oid = q.seqrelid ORDER BY 1",
        "SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname = 'clerk'",
        "SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'items' ORDER BY ordinal_position",
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'items'::regclass ORDER BY conname",
        "SELECT obj_description('items'::regclass, 'pg_class')",
        "SELECT nspname FROM pg_namespace WHERE nspname = 'shop'",
        "SELECT viewname FROM pg_views WHERE schemaname = 'public'",
    ] {
        assert_eq!(rows(&mut r, sql), rows(&mut p, sql), "{sql}");
    }
    // A sequence shows the mark its primary reserved up to (PostgreSQL's
    // standby likewise shows the value the primary logged ahead): at least
    // what the primary handed out.
    assert_eq!(scalar(&mut p, "SELECT last_value FROM ticket"), 101);
    assert!(scalar(&mut r, "SELECT last_value FROM ticket") >= 101);
    // Read, never written.
    for sql in ["SELECT nextval('ticket')", "INSERT INTO items (id, qty) VALUES (4, 1)", "DROP VIEW stocked"]
    {
        assert_eq!(fails(&mut r, sql).sqlstate(), "25006", "{sql}");
    }

    // Plans made on the standby are made again after the next changes,
    // which the standby's catalog reads by itself once its engine has
    // applied them.
    let mut doubled = r.prepare("SELECT doubled(4)", &[]).unwrap();
    let mut stocked = r.prepare("SELECT count(*) FROM stocked", &[]).unwrap();
    assert_eq!(r.execute_prepared(&mut doubled, &[]).unwrap().rows[0][0], Value::Integer(8));
    assert_eq!(r.execute_prepared(&mut stocked, &[]).unwrap().rows[0][0], Value::BigInt(2));
    for sql in [
        "CREATE OR REPLACE FUNCTION doubled(n int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN n * 3; END; $$",
        "DROP VIEW stocked",
        "ALTER TABLE items ADD COLUMN note text DEFAULT 'new'",
        "INSERT INTO items (id, qty) VALUES (5, 9)",
        "DROP ROLE clerk",
    ] {
        exec(&mut p, sql);
    }
    catch_up(&engine, &mut reader, &replica);
    assert_eq!(r.execute_prepared(&mut doubled, &[]).unwrap().rows[0][0], Value::Integer(12));
    assert_eq!(r.execute_prepared(&mut stocked, &[]).unwrap_err().sqlstate(), "42P01");
    let sql = "SELECT id, name, qty, note FROM items ORDER BY id";
    assert_eq!(rows(&mut r, sql), rows(&mut p, sql));
    assert!(rows(&mut r, "SELECT rolname FROM pg_roles WHERE rolname = 'clerk'").is_empty());
    standby.reload_catalog().unwrap();
    assert_eq!(rows(&mut r, sql), rows(&mut p, sql));

    // Promoted, it writes: the default and the CHECK hold, and a sequence
    // never hands out a value its old primary may have.
    standby.set_standby(false);
    exec(&mut r, "INSERT INTO items (id, qty) VALUES (6, 1)");
    assert_eq!(rows(&mut r, "SELECT name, note FROM items WHERE id = 6"), [["unnamed", "new"]]);
    assert_eq!(fails(&mut r, "INSERT INTO items VALUES (7, 'x', -1)").sqlstate(), "23514");
    let p_next = scalar(&mut p, "SELECT nextval('ticket')");
    let r_next = scalar(&mut r, "SELECT nextval('ticket')");
    assert!(r_next > p_next, "the promoted standby handed out {r_next}, its old primary {p_next}");
    assert_eq!(scalar(&mut r, "SELECT nextval('exact')"), 43);
}
