//! Triggers under concurrency and failure: what a trigger writes commits
//! exactly when the statement that fired it does.
//!
//! Four writer threads, each with its own session, insert, update and
//! delete rows of one table in short transactions. AFTER ROW triggers
//! append every change to an audit table; a BEFORE ROW trigger refuses
//! some values (so that a statement fails after its triggers have already
//! written), some statements hit a duplicate key, and some transactions
//! roll back. At the end the audit table must replay into exactly the
//! table's rows: each committed change audited once, nothing of a failed
//! statement or a rolled-back transaction.

mod common;

use centum_sql::Session;
use centum_types::Value;
use common::{db, exec, int};
use std::collections::BTreeMap;

const WRITERS: i64 = 4;
const TRANSACTIONS: usize = 300;

/// A small deterministic generator (xorshift64*), one per thread.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

const SCHEMA: &str = "
CREATE TABLE item (id int PRIMARY KEY, v int NOT NULL);
CREATE TABLE audit (seq bigserial PRIMARY KEY, op text NOT NULL, id int NOT NULL, v int);
CREATE FUNCTION audit_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO audit (op, id, v) VALUES ('D', OLD.id, NULL);
  ELSE
    INSERT INTO audit (op, id, v) VALUES (left(TG_OP, 1), NEW.id, NEW.v);
  END IF;
  RETURN NULL;
END;
$$;
CREATE FUNCTION refuse_negative() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.v < 0 THEN
    RAISE EXCEPTION 'negative value %', NEW.v USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER item_audit AFTER INSERT OR UPDATE OR DELETE ON item FOR EACH ROW EXECUTE FUNCTION audit_change();
CREATE TRIGGER item_check BEFORE INSERT OR UPDATE ON item FOR EACH ROW EXECUTE FUNCTION refuse_negative();
";

/// Runs `sql`; retryable and expected failures roll the transaction back.
fn attempt(s: &mut Session, sql: &str) -> bool {
    match s.execute(sql) {
        Ok(_) => true,
        Err(e) => {
            let code = e.sqlstate();
            assert!(
                matches!(code, "23505" | "23514" | "40001" | "40P01" | "55P03"),
                "{sql}: unexpected {code}: {e}"
            );
            false
        }
    }
}

fn writer(db: &centum_sql::Database, w: i64) {
    let mut s = db.session();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (w as u64 + 1));
    for _ in 0..TRANSACTIONS {
        exec(&mut s, "BEGIN");
        let mut ok = true;
        for _ in 0..1 + rng.below(3) {
            // Keys are shared between writers, so they meet on rows.
            let id = rng.below(40) as i64;
            let v = rng.below(100) as i64 - 10;
            let sql = match rng.below(4) {
                0 | 1 => format!("INSERT INTO item VALUES ({id}, {v})"),
                2 => format!("UPDATE item SET v = {v} WHERE id = {id}"),
                _ => format!("DELETE FROM item WHERE id = {id}"),
            };
            if !attempt(&mut s, &sql) {
                ok = false;
                break;
            }
        }
        if ok && rng.below(4) > 0 {
            if !attempt(&mut s, "COMMIT") {
                let _ = s.execute("ROLLBACK");
            }
        } else {
            exec(&mut s, "ROLLBACK");
        }
    }
}

#[test]
fn trigger_writes_commit_exactly_with_their_statements() {
    let db = db();
    let mut s = db.session();
    exec(&mut s, SCHEMA);
    std::thread::scope(|scope| {
        for w in 0..WRITERS {
            let db = &db;
            scope.spawn(move || writer(db, w));
        }
    });
    // Replay the audit in commit order of its sequence: a row's changes
    // are serialised by the row, so the last change per id wins.
    let audit = exec(&mut s, "SELECT op, id, v FROM audit ORDER BY seq");
    let mut replayed: BTreeMap<i64, i64> = BTreeMap::new();
    let mut last_seen: BTreeMap<i64, String> = BTreeMap::new();
    for row in &audit[0].rows {
        let (op, id) = (row[0].to_string(), int(&row[1]));
        match op.as_str() {
            "I" | "U" => {
                replayed.insert(id, int(&row[2]));
            }
            "D" => {
                replayed.remove(&id);
            }
            other => panic!("audit op {other}"),
        }
        last_seen.insert(id, op);
    }
    let items = exec(&mut s, "SELECT id, v FROM item ORDER BY id");
    let actual: BTreeMap<i64, i64> = items[0].rows.iter().map(|r| (int(&r[0]), int(&r[1]))).collect();
    assert!(!actual.is_empty() && audit[0].rows.len() > actual.len(), "the writers did little");
    assert!(actual.values().all(|v| *v >= 0), "the BEFORE trigger let a negative value in");
    assert_eq!(replayed, actual, "the audit does not replay into the table");
    // A refused value never reached the AFTER trigger, or its audit row
    // went with the failed statement.
    let negative = exec(&mut s, "SELECT count(*) FROM audit WHERE v < 0");
    assert_eq!(negative[0].rows[0][0], Value::BigInt(0));
}

#[test]
fn a_failing_statement_takes_its_triggers_writes_with_it() {
    let db = db();
    let mut s = db.session();
    exec(&mut s, SCHEMA);
    exec(&mut s, "INSERT INTO item VALUES (1, 1), (2, 2)");
    // The AFTER trigger has audited row 3 when row 1 violates the key.
    let e = s.execute("INSERT INTO item VALUES (3, 3), (1, 5)").unwrap_err();
    assert_eq!(e.sqlstate(), "23505");
    // The BEFORE trigger of the second row refuses it after the first
    // row's update was written and audited.
    let e = s.execute("UPDATE item SET v = CASE id WHEN 1 THEN 10 ELSE -1 END").unwrap_err();
    assert_eq!(e.sqlstate(), "23514");
    // Inside a block, a failed statement leaves the block failed, and
    // ROLLBACK TO SAVEPOINT takes back what its triggers wrote.
    exec(&mut s, "BEGIN; INSERT INTO item VALUES (4, 4); SAVEPOINT a; INSERT INTO item VALUES (5, 5); ROLLBACK TO a; COMMIT");
    let audit = exec(&mut s, "SELECT op, id, v FROM audit ORDER BY seq");
    let got: Vec<String> = audit[0].rows.iter().map(|r| format!("{} {} {}", r[0], r[1], r[2])).collect();
    assert_eq!(got, ["I 1 1", "I 2 2", "I 4 4"]);
    let items = exec(&mut s, "SELECT id, v FROM item ORDER BY id");
    assert_eq!(items[0].rows.len(), 3);
}
