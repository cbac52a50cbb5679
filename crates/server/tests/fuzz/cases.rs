//! Running a case on both targets, reducing a failing one, and the
//! regression file every failure ends up in.
//!
//! `regressions.sql` holds one block per case:
//!
//! ```text
//! -- case: what went wrong (where it was found)
//! -- protocol: extended          (optional: run over the extended protocol)
//! CREATE TABLE t0 (c0 int PRIMARY KEY);
//! SELECT ...;                    (a statement ends with a line ending in ;)
//! ```
//!
//! Each block runs on a fresh embedded database and on the server after
//! its tables are dropped, and must get through without a panic, a crash,
//! XX000, a timeout overrun or the memory budget.

use super::targets::{Bug, Embedded, Outcome, Remote};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A case to run: statements in order, and the protocol to use.
pub struct Case {
    /// Where it comes from: a seed or a regression block's title.
    pub label: String,
    /// The statements, schema first.
    pub statements: Vec<String>,
    /// Whether the server gets them over the extended protocol.
    pub extended: bool,
}

/// A bug and the smallest statement list found that still shows it.
pub struct Failure {
    /// The case's label.
    pub label: String,
    /// The bug.
    pub bug: Bug,
    /// The statement that showed it.
    pub statement: String,
    /// The reduced case, schema and failing statement included.
    pub reduced: Vec<String>,
    /// The protocol the case used.
    pub extended: bool,
}

impl Failure {
    /// The failure as a block for `regressions.sql`.
    pub fn block(&self) -> String {
        let first = self.bug.detail.lines().next().unwrap_or("");
        let first: String = first.chars().take(120).collect();
        let mut s = format!(
            "-- case: {} {} on the {}: {first} ({})\n",
            self.bug.kind, "bug", self.bug.side, self.label
        );
        if self.extended {
            s.push_str("-- protocol: extended\n");
        }
        for st in &self.reduced {
            s.push_str(st);
            s.push_str(";\n");
        }
        s
    }

    /// The full report printed when the run fails.
    pub fn report(&self) -> String {
        format!(
            "{} on the {} ({}): {}\n  statement: {}\n  reduced case (a block for tests/fuzz/regressions.sql):\n{}",
            self.bug.kind,
            self.bug.side,
            self.label,
            self.bug.detail,
            shorten(&self.statement),
            self.block()
        )
    }
}

/// `s`, cut in the middle if very long.
fn shorten(s: &str) -> String {
    if s.len() <= 4000 {
        return s.to_string();
    }
    let mut head = 2000;
    while !s.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = s.len() - 2000;
    while !s.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{} ... ({} bytes) ... {}", &s[..head], s.len(), &s[tail..])
}

/// Parses `regressions.sql` into cases.
pub fn parse(text: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(title) = trimmed.strip_prefix("-- case:") {
            cases.push(Case { label: title.trim().to_string(), statements: vec![], extended: false });
            continue;
        }
        if trimmed == "-- protocol: extended" {
            if let Some(c) = cases.last_mut() {
                c.extended = true;
            }
            continue;
        }
        if pending.is_empty() && (trimmed.is_empty() || trimmed.starts_with("--")) {
            continue;
        }
        if !pending.is_empty() {
            pending.push('\n');
        }
        pending.push_str(line);
        if trimmed.ends_with(';') {
            let stmt = pending.trim_end().trim_end_matches(';').to_string();
            pending.clear();
            match cases.last_mut() {
                Some(c) => c.statements.push(stmt),
                None => panic!("regressions.sql: a statement before the first -- case: line"),
            }
        }
    }
    assert!(pending.trim().is_empty(), "regressions.sql: the last statement has no ';'");
    cases
}

/// Statements whose answers may differ between two runs (time, chance,
/// process ids, sizes, settings, and the catalog, whose OIDs grow on the
/// server from case to case): not compared between the two targets.
const NONDETERMINISTIC: &[&str] = &[
    "random(",
    "now()",
    "'now'",
    "'today'",
    "clock_timestamp",
    "statement_timestamp",
    "transaction_timestamp",
    "current_timestamp",
    "current_date",
    "localtimestamp",
    "gen_random_uuid",
    "pg_backend_pid",
    "_size",
    "pg_",
    "regclass",
    "information_schema",
    "current_setting",
    "version()",
    "EXECUTE",
];

/// Runs cases on both targets and keeps the counts.
pub struct Runner {
    /// The server.
    pub remote: Remote,
    /// The server's memory budget, in bytes of growth.
    budget: u64,
    /// Statements run so far.
    pub statements: u64,
    /// Ordinary errors by SQLSTATE (server side).
    pub errors: BTreeMap<String, u64>,
    /// Statements the two targets answered differently (first per case).
    pub differences: Vec<String>,
    /// Where the statement being run is written, for a run the process
    /// itself does not survive (a stack overflow aborts).
    pub running_file: std::path::PathBuf,
    /// Print every statement and both answers.
    pub verbose: bool,
}

impl Runner {
    /// A runner over a new server with `budget` bytes of memory growth.
    pub fn new(budget: u64, running_file: std::path::PathBuf) -> Runner {
        Runner {
            remote: Remote::start(budget),
            budget,
            statements: 0,
            errors: BTreeMap::new(),
            differences: vec![],
            running_file,
            verbose: std::env::var("CENTUM_FUZZ_SHOW").is_ok_and(|v| v == "1"),
        }
    }

    /// Runs `case` from a clean slate until its first bug, or its end, or
    /// `deadline`. Returns the bug and the index of its statement.
    pub fn run(&mut self, case: &Case, deadline: Option<Instant>) -> Option<(usize, Bug)> {
        let mut embedded = Embedded::new(self.budget);
        self.remote.reset();
        let mut differed = false;
        for (i, sql) in case.statements.iter().enumerate() {
            if deadline.is_some_and(|d| Instant::now() > d) {
                return None;
            }
            let _ = std::fs::write(
                &self.running_file,
                format!("-- case: {} (statement {i})\n{sql};\n", case.label),
            );
            let local = embedded.run(sql);
            let remote = self.remote.run(sql, case.extended);
            self.statements += 1;
            if self.verbose {
                eprintln!("{}: {local:?} / {remote:?}", shorten(sql));
            }
            if let Some(bug) = local.bug().or(remote.bug()) {
                return Some((i, bug.clone()));
            }
            if let Outcome::Error(code, _) = &remote {
                *self.errors.entry(code.clone()).or_default() += 1;
            }
            if !differed && local.code() != remote.code() {
                // After one difference the two databases may no longer hold
                // the same rows; one in a statement whose answer may vary,
                // a timeout or a statement the client refused is not
                // reported.
                differed = true;
                if reportable(&local)
                    && reportable(&remote)
                    && !NONDETERMINISTIC.iter().any(|w| sql.contains(w))
                {
                    self.differences.push(format!(
                        "embedded {local:?}, server {remote:?} ({}): {}",
                        case.label,
                        shorten(sql)
                    ));
                }
            }
        }
        None
    }

    /// Reduces a failing case: the failing statement alone, then with the
    /// schema, then dropping ever smaller runs of the statements before it
    /// while the same kind of bug on the same side still shows, within
    /// `budget` of time. A memory bug is only tried with the schema and
    /// its statement, on a restarted server.
    pub fn reduce(&mut self, case: &Case, index: usize, bug: Bug, budget: Duration) -> Failure {
        let failing = case.statements[index].clone();
        let mut kept: Vec<String> = case.statements[..index].to_vec();
        let until = Instant::now() + budget;
        if bug.kind == "memory" {
            // Memory is measured on the whole process: each try starts a
            // new one, and only the statement alone (with the schema) is
            // tried.
            let schema: Vec<String> = kept.iter().filter(|s| s.starts_with("CREATE")).cloned().collect();
            if self.shows(&schema, &failing, case.extended, &bug) {
                kept = schema;
            }
            self.remote.restart();
        } else {
            let schema: Vec<String> = kept.iter().filter(|s| s.starts_with("CREATE")).cloned().collect();
            if self.shows(&[], &failing, case.extended, &bug) {
                kept.clear();
            } else if self.shows(&schema, &failing, case.extended, &bug) {
                kept = schema;
            }
            let mut chunk = kept.len().div_ceil(2);
            while chunk >= 1 && Instant::now() < until {
                let mut i = 0;
                while i < kept.len() && Instant::now() < until {
                    let mut candidate = kept.clone();
                    candidate.drain(i..(i + chunk).min(kept.len()));
                    if self.shows(&candidate, &failing, case.extended, &bug) {
                        kept = candidate;
                    } else {
                        i += chunk;
                    }
                }
                if chunk == 1 {
                    break;
                }
                chunk = chunk.div_ceil(2).min(chunk - 1);
            }
        }
        kept.push(failing.clone());
        Failure { label: case.label.clone(), bug, statement: failing, reduced: kept, extended: case.extended }
    }

    /// Whether `before` then `failing` shows a bug of the same kind on the
    /// same side.
    fn shows(&mut self, before: &[String], failing: &str, extended: bool, bug: &Bug) -> bool {
        let mut statements = before.to_vec();
        statements.push(failing.to_string());
        let case = Case { label: "reduction".into(), statements, extended };
        if bug.kind == "memory" {
            self.remote.restart();
        }
        matches!(self.run(&case, None), Some((_, b)) if b.kind == bug.kind && b.side == bug.side)
    }
}

/// Whether a difference in this answer is worth reporting (not a timeout,
/// nor an error the client raised without asking the server).
fn reportable(o: &Outcome) -> bool {
    !matches!(o.code(), "57014" | "client")
}
