//! One fuzz case: a random schema, rows for it, then random statements.
//!
//! ```text
//!   seed ─▶ Rng ─▶ schema (CREATE TABLE, CREATE INDEX)
//!                  rows   (INSERT ... VALUES)
//!                  statements: SELECT (joins, GROUP BY, set operations,
//!                  subqueries) 45%, INSERT/UPDATE/DELETE/MERGE 35%,
//!                  transaction control, DDL, EXPLAIN, heavy queries
//! ```
//!
//! [`Gen`] carries what the expression and query generators share: the
//! random source, the schema model, the columns in scope and whether
//! aggregates may appear. Its methods live in `expr.rs` (typed
//! expressions), `query.rs` (SELECT) and `statements.rs` (everything else).

use super::rng::Rng;
use super::schema::{self, Schema, Ty};
use super::Knobs;

/// A column an expression may name: how to write it and its type.
#[derive(Clone, Debug)]
pub struct ScopeCol {
    /// The reference as written (`a1.c0`).
    pub sql: String,
    /// Its type.
    pub ty: Ty,
}

/// The generator's state while it writes one case.
pub struct Gen {
    /// The random source.
    pub rng: Rng,
    /// The enabled extras.
    pub knobs: Knobs,
    /// The tables the case created.
    pub schema: Schema,
    /// Columns expressions may name (inner query first, then outer ones).
    pub scope: Vec<ScopeCol>,
    /// Whether aggregate calls may appear (a grouped select list, HAVING).
    pub aggregates: bool,
    /// How many subqueries enclose the expression being written.
    pub nesting: u32,
    /// A counter for fresh aliases.
    pub aliases: usize,
    /// Whether the statements so far opened a transaction block (if they
    /// all succeeded), so that one ends it before long.
    pub in_block: bool,
}

/// A generated case: the schema's DDL and initial rows, then statements.
pub struct Generated {
    /// CREATE TABLE / CREATE INDEX.
    pub schema: Vec<String>,
    /// The statements, initial INSERTs first.
    pub statements: Vec<String>,
}

impl Gen {
    /// A generator for `seed`.
    pub fn new(seed: u64, knobs: Knobs) -> Gen {
        Gen {
            rng: Rng::new(seed),
            knobs,
            schema: Schema::default(),
            scope: vec![],
            aggregates: false,
            nesting: 0,
            aliases: 0,
            in_block: false,
        }
    }

    /// Generates case `seed` with `count` statements after the initial rows.
    pub fn case(seed: u64, knobs: Knobs, count: usize) -> Generated {
        let mut g = Gen::new(seed, knobs);
        let (model, ddl) = schema::generate(&mut g.rng);
        g.schema = model;
        let mut statements = Vec::new();
        for t in 0..g.schema.tables.len() {
            for _ in 0..1 + g.rng.below(3) {
                let rows = 1 + g.rng.size(40);
                statements.push(g.insert_values(t, rows));
            }
        }
        for _ in 0..count {
            statements.push(g.statement());
        }
        Generated { schema: ddl, statements }
    }

    /// A fresh alias `aN`.
    pub fn alias(&mut self) -> String {
        self.aliases += 1;
        format!("a{}", self.aliases)
    }

    /// Runs `f` with `scope` in front of the current scope (a subquery sees
    /// its own columns and the outer ones), restoring it afterwards.
    pub fn nested<T>(&mut self, scope: Vec<ScopeCol>, f: impl FnOnce(&mut Gen) -> T) -> T {
        let outer = std::mem::replace(&mut self.scope, scope);
        self.scope.extend(outer.iter().cloned());
        let aggregates = std::mem::replace(&mut self.aggregates, false);
        self.nesting += 1;
        let r = f(self);
        self.nesting -= 1;
        self.aggregates = aggregates;
        self.scope = outer;
        r
    }

    /// The longest AND/OR or arithmetic chain to write: thousands of terms
    /// with the deep knob, 200 without.
    pub fn chain_limit(&self) -> usize {
        if self.knobs.deep {
            5000
        } else {
            200
        }
    }

    /// The deepest nesting of parentheses, CASE and calls to write.
    pub fn depth_limit(&self) -> usize {
        if self.knobs.deep {
            2000
        } else {
            50
        }
    }
}
