//! Golden script tests: each `tests/scripts/NAME.sql` runs statement by
//! statement in one session and its transcript must equal
//! `tests/scripts/NAME.out`. Run with `UPDATE_GOLDEN=1` to rewrite the
//! expected files after checking the differences by eye.
//!
//! Transcript format, one block per statement:
//!
//! ```text
//! > SELECT a, b FROM t ORDER BY a
//! a | b
//! 1 | x
//! (1 row)
//! > INSERT INTO t VALUES (1)
//! INSERT 0 1
//! > SELEC 1
//! ERROR 42601: syntax error at or near "SELEC"
//! ```
//!
//! Lines starting with `--` in a script are comments; statements end with
//! `;` at the end of a line. NOTICEs are printed as `NOTICE: ...`.

mod common;

use centum_sql::Session;
use common::{answer, compare_golden, db, scripts_dir, statements};

fn transcript(session: &mut Session, script: &str) -> String {
    let mut out = String::new();
    for stmt in statements(script) {
        answer(&mut out, &stmt, session.execute(&stmt));
    }
    out
}

fn run(name: &str) {
    let dir = scripts_dir();
    let script = std::fs::read_to_string(dir.join(format!("{name}.sql"))).unwrap();
    let db = db();
    let mut session = db.session();
    let got = transcript(&mut session, &script);
    compare_golden(name, &dir.join(format!("{name}.out")), &got);
}

macro_rules! scripts {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { run(stringify!($name)); })*

        /// Every script in the directory has its test above.
        #[test]
        fn every_script_is_listed() {
            let listed = [$(stringify!($name)),*];
            for entry in std::fs::read_dir(scripts_dir()).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "sql") {
                    let stem = path.file_stem().unwrap().to_string_lossy().to_string();
                    assert!(listed.contains(&stem.as_str()), "{stem}.sql has no test in scripts.rs");
                }
            }
        }
    };
}

scripts!(
    ddl,
    join_order,
    publications,
    select,
    joins,
    aggregates,
    dml,
    constraints,
    transactions,
    errors,
    explain,
    sequences,
    functions,
    catalog,
    operators,
    privileges,
    procedures,
    procedure_limits,
    plpgsql,
    merge,
    alter,
    ddl_transactions,
    enums,
    savepoints,
    settings,
    recursive,
    admin,
    columns,
    in_lists,
    arrays,
    windows,
    grouping_sets,
    views,
    locking,
    intervals,
    writable_ctes,
    json,
    full_text,
    comments,
    engine_views,
    triggers,
    view_triggers,
    expression_indexes,
    composite_types,
);
