//! What the script tests share: where the scripts are and how a script is
//! split into statements.
//!
//! Lines starting with `--` between statements are comments; a statement
//! ends with `;` at the end of a line (the `;` is dropped); text after the
//! last `;` is a final statement.

use std::path::PathBuf;

/// `crates/sql/tests/scripts`.
#[allow(dead_code)] // used by postgres.rs only
pub fn scripts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/scripts")
}

/// The names (without `.sql`) of every script in [`scripts_dir`], sorted.
#[allow(dead_code)] // used by postgres.rs only
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
pub fn statements(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in script.lines() {
        if line.trim_start().starts_with("--") && cur.trim().is_empty() {
            continue;
        }
        cur.push_str(line);
        cur.push('\n');
        if line.trim_end().ends_with(';') {
            out.push(cur.trim().trim_end_matches(';').trim().to_string());
            cur.clear();
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}
