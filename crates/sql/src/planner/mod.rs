//! Binding and planning: from a parsed statement to a plan.
//!
//! The binder resolves names against the catalog and the query's scopes,
//! types every expression (inferring parameter types from context), and the
//! planner picks an access path per table and a join method per join:
//!
//! ```text
//!   sqlparser AST ─▶ Binder (scopes, types, $n) ─▶ Plan / Statement
//!                         │
//!                         └─ access: hash key │ range │ scan  (per table)
//! ```
//!
//! [`Planned`] is what a prepared statement keeps: the plan, its result
//! columns, the parameter types, and the catalog version it was made at.

pub mod access;
pub(crate) mod arrays;
pub(crate) mod bind;
pub(crate) mod deadline;
pub mod dml;
pub mod expr;
pub mod instead;
mod join_order;
pub(crate) mod json;
mod locking;
mod min_max;
pub mod plan;
pub(crate) mod routines;
mod rows;
mod select;
mod statement;
mod system;
pub(crate) mod triggers;
mod tsearch;
pub(crate) mod views;
pub(crate) mod window;

pub use bind::Binder;
pub use dml::{Delete, Insert, Update};
pub use expr::Expr;
pub use plan::Plan;
pub(crate) use statement::{explain_with, first_words, plan_statement, plan_statement_with};

use crate::catalog::{Catalog, OutputColumn};
use centum_types::DataType;

/// A statement ready to run.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Statement {
    /// A query returning rows.
    Query(Plan),
    /// INSERT.
    Insert(Box<Insert>),
    /// UPDATE.
    Update(Box<Update>),
    /// DELETE.
    Delete(Box<Delete>),
    /// INSERT, UPDATE or DELETE on a view, by its INSTEAD OF triggers.
    ViewWrite(Box<instead::ViewWrite>),
    /// MERGE.
    Merge(Box<dml::Merge>),
    /// CALL of a procedure.
    Call(Box<Call>),
    /// EXPLAIN of a statement: the lines to print.
    Explain(Vec<String>),
    /// EXPLAIN ANALYZE: the statement to run, measured, then print.
    ExplainAnalyze(Box<Planned>),
    /// Anything else (transaction control, SET, SHOW, DDL): not planned,
    /// run as the simple protocol runs it.
    Utility(Box<sqlparser::ast::Statement>),
}

impl Statement {
    /// What a data-modifying statement does to which table, for EXPLAIN
    /// (`Delete on t`).
    pub(crate) fn describe(&self) -> String {
        match self {
            Statement::Insert(i) => format!("Insert on {}", i.rules.info.table.name()),
            Statement::Update(u) => format!("Update on {}", u.access.table.name()),
            Statement::Delete(d) => format!("Delete on {}", d.access.table.name()),
            Statement::ViewWrite(w) => format!("{} on {}", w.verb(), w.view),
            // Only INSERT, UPDATE and DELETE stand in a WITH.
            _ => "Statement".to_string(),
        }
    }
}

/// A planned CALL: the procedure and its argument expressions.
#[derive(Clone, Debug)]
pub struct Call {
    /// The procedure.
    pub(crate) routine: std::sync::Arc<routines::Compiled>,
    /// One per IN or INOUT parameter.
    pub args: Vec<Expr>,
}

/// A planned statement with its interface.
#[derive(Clone, Debug)]
pub struct Planned {
    /// What to run.
    pub statement: Statement,
    /// Result columns (empty for statements without rows).
    pub columns: std::sync::Arc<[OutputColumn]>,
    /// Parameter types, inferred from context (`text` where nothing said).
    pub params: Vec<DataType>,
    /// How often a lone run of the statement is retried on 40001/40P01:
    /// the largest `centum.retry_on_conflict` of the routines it calls.
    pub retry: u32,
    /// Whether it calls a routine (CALL, or a function in a query): a
    /// routine's statements may be many, so a row wait among them waits in
    /// place rather than running the whole statement again.
    pub calls_routines: bool,
    /// The privileges it needs, checked before it first runs for a role.
    pub needs: Vec<crate::privileges::Need>,
}

/// The SQL catalog and the routines compiled from it: what statements are
/// bound and planned against. The database opens one with its catalog and
/// all its sessions share it; it reads as its catalog.
pub struct Dictionary {
    /// Names, definitions and the catalog version.
    pub catalog: Catalog,
    /// Routines compiled at some catalog version, by name.
    pub(crate) routines: routines::Cache,
    /// Tables' triggers compiled at some catalog version, by table.
    pub(crate) triggers: triggers::Cache,
}

impl Dictionary {
    /// A dictionary over `catalog`, with nothing compiled yet.
    pub fn new(catalog: Catalog) -> Dictionary {
        Dictionary { catalog, routines: routines::Cache::default(), triggers: triggers::Cache::default() }
    }
}

impl std::ops::Deref for Dictionary {
    type Target = Catalog;

    fn deref(&self) -> &Catalog {
        &self.catalog
    }
}

/// A plain binding context over `scope`.
pub(crate) fn bind_ctx(scope: &bind::Scope) -> bind::Ctx<'_> {
    bind::Ctx::plain(scope)
}
