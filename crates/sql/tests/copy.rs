//! COPY FROM STDIN through the SQL layer: rows arrive in chunks that cut
//! lines anywhere and are inserted in batches, with defaults, constraints
//! and unique keys holding as for INSERT; an error names the line it comes
//! from (the first bad line, whichever batch it is in) and leaves the
//! table as it was.

mod common;

use centum_sql::copy::CopyStart;
use centum_sql::{Error, Session};
use common::{db, exec, scalar};

/// Feeds `data` to `COPY ... FROM STDIN` in chunks of `chunk` bytes.
fn copy_in(s: &mut Session, sql: &str, data: &str, chunk: usize) -> Result<String, Error> {
    let Some(CopyStart::In(mut copy)) = s.copy(sql)? else {
        panic!("not a COPY FROM");
    };
    for part in data.as_bytes().chunks(chunk) {
        if let Err(e) = copy.data(s, part) {
            return Err(copy.abort(s, e));
        }
    }
    copy.finish(s).map(|r| r.tag)
}

fn setup(s: &mut Session) {
    exec(s, "CREATE TABLE c (id int PRIMARY KEY, n int NOT NULL CHECK (n >= 0), note text DEFAULT 'none')");
}

fn lines(rows: impl Iterator<Item = i64>) -> String {
    rows.map(|i| format!("{i}\t{}\n", i % 7)).collect()
}

#[test]
fn rows_in_many_batches_arrive_whole() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    let data = lines(1..=5_000);
    let tag = copy_in(&mut s, "COPY c (id, n) FROM STDIN", &data, 777).expect("copy");
    assert_eq!(tag, "COPY 5000");
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM c"), 5_000);
    assert_eq!(scalar(&mut s, "SELECT sum(id) FROM c"), 5_000 * 5_001 / 2);
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM c WHERE note = 'none'"), 5_000);
    // A last line without its line end counts too.
    let tag = copy_in(&mut s, "COPY c (id, n) FROM STDIN", "5001\t1\n5002\t2", 4).expect("copy");
    assert_eq!(tag, "COPY 2");
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM c"), 5_002);
}

#[test]
fn an_error_names_its_line_and_leaves_the_table_as_it_was() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    exec(&mut s, "INSERT INTO c VALUES (0, 0)");
    let message = |e: &Error| e.to_string();
    // A value that does not parse, in the third batch.
    let mut data = lines(1..=2_999);
    data.push_str("3000\tnot a number\n");
    data.push_str(&lines(3_001..=4_000));
    let e = copy_in(&mut s, "COPY c (id, n) FROM STDIN", &data, 4096).expect_err("bad integer");
    assert_eq!(e.sqlstate(), "22P02", "{e}");
    assert!(message(&e).contains("COPY line 3000"), "{e}");
    // A CHECK violation at line 1500 and a bad value at line 1800, in one
    // batch: the first bad line is the one reported.
    let mut data = lines(1..=1_499);
    data.push_str("1500\t-1\n");
    data.push_str(&lines(1_501..=1_799));
    data.push_str("1800\tx\n");
    let e = copy_in(&mut s, "COPY c (id, n) FROM STDIN", &data, 100_000).expect_err("check");
    assert_eq!(e.sqlstate(), "23514", "{e}");
    assert!(message(&e).contains("COPY line 1500"), "{e}");
    // A duplicate key late in the stream.
    let mut data = lines(1..=2_500);
    data.push_str("17\t1\n");
    let e = copy_in(&mut s, "COPY c (id, n) FROM STDIN", &data, 1_000).expect_err("duplicate");
    assert_eq!(e.sqlstate(), "23505", "{e}");
    assert!(message(&e).contains("COPY line 2501"), "{e}");
    // Too few columns.
    let e = copy_in(&mut s, "COPY c (id, n) FROM STDIN", "1\t1\n2\n", 3).expect_err("short line");
    assert_eq!(e.sqlstate(), "22P04", "{e}");
    assert!(message(&e).contains("COPY line 2"), "{e}");
    // None of it stayed.
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM c"), 1);
}

#[test]
fn inside_a_block_a_failed_copy_fails_the_block() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    exec(&mut s, "BEGIN");
    copy_in(&mut s, "COPY c (id, n) FROM STDIN", &lines(1..=2_000), 512).expect("copy");
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM c"), 2_000);
    copy_in(&mut s, "COPY c (id, n) FROM STDIN", "3000\t1\n1\t1\n", 512).expect_err("duplicate");
    assert_eq!(s.execute("SELECT 1").unwrap_err().sqlstate(), "25P02");
    exec(&mut s, "ROLLBACK");
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM c"), 0);
}

/// COPY into a view goes through its INSTEAD OF INSERT trigger, row by
/// row, in batches like a table's; a row the trigger refuses names its
/// line, and nothing of the COPY stays.
#[test]
fn copy_into_a_view_goes_through_its_instead_of_trigger() {
    let db = db();
    let mut s = db.session();
    setup(&mut s);
    exec(
        &mut s,
        "CREATE VIEW doubled AS SELECT id, n * 2 AS twice FROM c; \
         CREATE FUNCTION doubled_insert() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN INSERT INTO c (id, n) VALUES (NEW.id, NEW.twice / 2); RETURN NEW; END; $$; \
         CREATE TRIGGER doubled_insert INSTEAD OF INSERT ON doubled FOR EACH ROW EXECUTE FUNCTION doubled_insert()",
    );
    let data: String = (1..=3_000).map(|i| format!("{i}\t{}\n", 2 * (i % 7))).collect();
    let tag = copy_in(&mut s, "COPY doubled FROM STDIN", &data, 1_000).expect("copy");
    assert_eq!(tag, "COPY 3000");
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM c"), 3_000);
    assert_eq!(scalar(&mut s, "SELECT sum(n) FROM c"), (1..=3_000).map(|i| i % 7).sum::<i64>());
    // A negative value breaks the table's CHECK inside the trigger.
    let mut data: String = (3_001..=4_000).map(|i| format!("{i}\t2\n")).collect();
    data.push_str("4001\t-2\n");
    let e = copy_in(&mut s, "COPY doubled FROM STDIN", &data, 700).expect_err("check");
    assert_eq!(e.sqlstate(), "23514", "{e}");
    assert!(e.to_string().contains("COPY line 1001"), "{e}");
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM c"), 3_000);
}
