//! What the integration tests share, one copy compiled into each test
//! binary (`mod common;`):
//!
//! - an in-memory database to work on ([`db`]), or a durable one in a
//!   directory ([`open_durable`]);
//! - running statements that must succeed ([`exec`], [`run`]) or must fail
//!   ([`fails`], [`run_err`]), panicking with the statement and the error
//!   otherwise;
//! - reading integers out of results ([`int`], [`int_column`], [`ints`],
//!   [`scalar`]);
//! - the golden scripts: where they are, how a script is split into
//!   statements and how a statement's answer is written into a transcript
//!   ([`scripts_dir`], [`script_names`], [`statements`], [`answer`]).

// Each test binary compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use centum_sql::{Database, Error, Prepared, QueryResult, Session};
use centum_types::Value;
use std::fmt::Write;
use std::path::PathBuf;

/// A fresh in-memory database.
pub fn db() -> Database {
    Database::open(centum_engine::Database::open(Default::default()).unwrap()).unwrap()
}

/// The durable database in `dir` (created if empty).
pub fn open_durable(dir: &std::path::Path) -> Database {
    let engine = centum_engine::Database::open(centum_engine::Options::durable(dir)).unwrap();
    Database::open(engine).unwrap()
}

/// Runs `sql`, which must succeed; its results.
pub fn exec(s: &mut Session, sql: &str) -> Vec<QueryResult> {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: ERROR {}: {e}", e.sqlstate()))
}

/// Runs `sql`, which must fail; the error.
pub fn fails(s: &mut Session, sql: &str) -> Error {
    match s.execute(sql) {
        Ok(r) => panic!("{sql}: expected an error, got {:?}", r.last().map(|r| &r.tag)),
        Err(e) => e,
    }
}

/// Executes a prepared statement, which must succeed; its result.
pub fn run(s: &mut Session, p: &mut Prepared, params: &[Value]) -> QueryResult {
    s.execute_prepared(p, params).unwrap_or_else(|e| panic!("{params:?}: ERROR {}: {e}", e.sqlstate()))
}

/// Executes a prepared statement, which must fail; the error.
pub fn run_err(s: &mut Session, p: &mut Prepared, params: &[Value]) -> Error {
    match s.execute_prepared(p, params) {
        Ok(r) => panic!("{params:?}: expected an error, got {} ({:?})", r.tag, r.rows),
        Err(e) => e,
    }
}

/// An integer value of any width (or anything whose text is an integer).
pub fn int(v: &Value) -> i64 {
    match v {
        Value::SmallInt(n) => i64::from(*n),
        Value::Integer(n) => i64::from(*n),
        Value::BigInt(n) => *n,
        other => other.to_string().parse().unwrap_or_else(|_| panic!("not an integer: {other:?}")),
    }
}

/// The first column of a result, as integers.
pub fn int_column(r: &QueryResult) -> Vec<i64> {
    r.rows.iter().map(|row| int(&row[0])).collect()
}

/// Runs `sql`, which must succeed; the first column of its last result, as
/// integers.
pub fn ints(s: &mut Session, sql: &str) -> Vec<i64> {
    int_column(exec(s, sql).last().unwrap())
}

/// The single integer a one-row, one-column query returns.
pub fn scalar(s: &mut Session, sql: &str) -> i64 {
    let r = exec(s, sql);
    let last = r.last().unwrap();
    assert_eq!(last.rows.len(), 1, "{sql}: {:?}", last.rows);
    int(&last.rows[0][0])
}

/// `crates/sql/tests/scripts`.
pub fn scripts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/scripts")
}

/// The names (without `.sql`) of every script in [`scripts_dir`], sorted.
pub fn script_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(scripts_dir())
        .expect("read tests/scripts")
        .filter_map(|e| {
            let path = e.expect("read tests/scripts entry").path();
            if path.extension()? != "sql" {
                return None;
            }
            Some(path.file_stem()?.to_str()?.to_string())
        })
        .collect();
    names.sort();
    names
}

/// Splits a script into statements.
///
/// Lines starting with `--` between statements are comments; a statement
/// ends with `;` at the end of a line (the `;` is dropped); text after the
/// last `;` is a final statement.
pub fn statements(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    // Inside a dollar-quoted routine body, `;` ends body statements only.
    let mut in_body = false;
    for line in script.lines() {
        if line.trim_start().starts_with("--") && cur.trim().is_empty() {
            continue;
        }
        cur.push_str(line);
        cur.push('\n');
        if line.matches("$$").count() % 2 == 1 {
            in_body = !in_body;
        }
        if !in_body && line.trim_end().ends_with(';') {
            out.push(cur.trim().trim_end_matches(';').trim().to_string());
            cur.clear();
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// Writes statement `stmt` and its answer `r` into transcript `out`, in
/// the golden scripts' format: `> statement`, then the notices, then the
/// tag or the columns, rows and row count, or `ERROR sqlstate: message`
/// with the error's DETAIL, HINT and CONTEXT.
pub fn answer(out: &mut String, stmt: &str, r: Result<Vec<QueryResult>, Error>) {
    writeln!(out, "> {}", stmt.replace('\n', "\n  ")).unwrap();
    match r {
        Ok(results) => {
            for r in results {
                for n in &r.notices {
                    writeln!(out, "NOTICE: {n}").unwrap();
                }
                if r.columns.is_empty() {
                    writeln!(out, "{}", r.tag).unwrap();
                    continue;
                }
                let names: Vec<&str> = r.columns.iter().map(|c| c.name.as_str()).collect();
                writeln!(out, "{}", names.join(" | ")).unwrap();
                for row in &r.rows {
                    let vals: Vec<String> =
                        row.iter().map(|v| if v.is_null() { "NULL".into() } else { v.to_string() }).collect();
                    writeln!(out, "{}", vals.join(" | ")).unwrap();
                }
                let n = r.rows.len();
                writeln!(out, "({n} row{})", if n == 1 { "" } else { "s" }).unwrap();
            }
        }
        Err(e) => {
            writeln!(out, "ERROR {}: {}", e.sqlstate(), e).unwrap();
            for (label, text) in [("DETAIL", e.detail()), ("HINT", e.hint()), ("CONTEXT", e.context())] {
                if let Some(t) = text {
                    writeln!(out, "{label}: {}", t.replace('\n', "\n  ")).unwrap();
                }
            }
        }
    }
}

/// Compares transcript `got` of script `name` with its golden file
/// `out`, or rewrites the file when `UPDATE_GOLDEN` is set; a difference
/// fails with the first line that differs.
pub fn compare_golden(name: &str, out: &std::path::Path, got: &str) {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(out, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(out).unwrap_or_default();
    if got != want {
        let line = got.lines().zip(want.lines()).position(|(g, w)| g != w);
        let at = line.map_or_else(String::new, |i| {
            format!(
                "line {}:\n  want: {}\n  got:  {}",
                i + 1,
                want.lines().nth(i).unwrap_or(""),
                got.lines().nth(i).unwrap_or("")
            )
        });
        panic!("{name}: transcript differs from {name}.out (UPDATE_GOLDEN=1 rewrites it)\n{at}\n--- got ---\n{got}");
    }
}
