//! Writes to a view that its INSTEAD OF triggers carry out.
//!
//! An INSERT, UPDATE or DELETE naming a view that has an INSTEAD OF
//! trigger for its event is not rewritten onto the view's table, as one on
//! a simple view is; the view need not be simple at all. The statement
//! reads the rows it acts on (the rows to insert; for UPDATE and DELETE,
//! the view's rows its WHERE picks) and hands each to the view's INSTEAD OF
//! triggers, which write whatever they decide to:
//!
//! ```text
//!   INSERT ─▶ NEW = the row, in the view's columns ─┐
//!   UPDATE ─▶ OLD = a view row, NEW = OLD + SET ────┼─▶ INSTEAD OF ROW
//!   DELETE ─▶ OLD = a view row ─────────────────────┘   triggers, by name
//! ```
//!
//! As in PostgreSQL, a row counts as written when the triggers return a
//! row rather than NULL; RETURNING then reads the row the last one returned
//! (for DELETE, the view's row). The view's BEFORE and AFTER statement
//! triggers fire around the statement. ON CONFLICT DO NOTHING without a
//! target means nothing here (a view has no unique index to conflict on).
//! UPDATE ... FROM and DELETE ... USING join each view row to the first
//! row of the other tables that matches, as they do for a table's row.

use super::bind::{Binder, Ctx, Scope};
use super::dml::{insert_targets, reads_columns, update_from, Joined};
use super::expr::Expr;
use super::plan::Plan;
use super::triggers::{compile_view, TableTriggers};
use super::views::short;
use crate::catalog::{OutputColumn, ViewDef};
use crate::error::{Error, Result};
use crate::names::{ident, object_parts};
use crate::privileges::{ObjectKind, DELETE, INSERT, SELECT, UPDATE};
use crate::system::snapshot::ViewShapes;
use crate::triggers::Timing;
use centum_types::DataType;
use sqlparser::ast;
use std::sync::Arc;

/// A planned INSERT, UPDATE or DELETE on a view, carried out by its
/// INSTEAD OF triggers.
#[derive(Clone, Debug)]
pub struct ViewWrite {
    /// The view's engine name.
    pub view: String,
    /// The event: `triggers::INSERT`, `UPDATE` or `DELETE`.
    pub event: u8,
    /// INSERT: the rows to insert, `targets.len()` columns wide. UPDATE
    /// and DELETE: the view's rows that the WHERE picks.
    pub source: Plan,
    /// UPDATE ... FROM, DELETE ... USING: the other tables' row each
    /// view row joins (the first, as for a table); a view row that joins
    /// none is left alone.
    pub joined: Option<Joined>,
    /// INSERT: the view column of each source column.
    pub targets: Vec<usize>,
    /// The view's column types, which NEW's values are converted to.
    pub types: Vec<DataType>,
    /// UPDATE: (view column, new value over the old row and the joined
    /// one).
    pub assignments: Vec<(usize, Expr)>,
    /// UPDATE: the names of the assigned columns (for UPDATE OF).
    pub assigned: Vec<String>,
    /// The view's triggers, compiled.
    pub triggers: Arc<TableTriggers>,
    /// RETURNING over the row written and the joined one.
    pub returning: Option<Vec<Expr>>,
}

impl ViewWrite {
    /// The verb of its event, as EXPLAIN names it.
    pub fn verb(&self) -> &'static str {
        match self.event {
            crate::triggers::INSERT => "Insert",
            crate::triggers::UPDATE => "Update",
            _ => "Delete",
        }
    }

    /// Its command, as its tag and a read-only transaction's refusal name
    /// it.
    pub fn command(&self) -> &'static str {
        match self.event {
            crate::triggers::INSERT => "INSERT",
            crate::triggers::UPDATE => "UPDATE",
            _ => "DELETE",
        }
    }
}

impl Binder<'_> {
    /// The view `name` names and its triggers, when it is a view with an
    /// INSTEAD OF trigger for `event`; `None` otherwise (a table, or a
    /// view the statement is rewritten on or refused for).
    pub(crate) fn instead_of(
        &self,
        name: &ast::ObjectName,
        event: u8,
    ) -> Result<Option<(ViewDef, Arc<TableTriggers>)>> {
        if !self.catalog.has_views() {
            return Ok(None);
        }
        if self.table_name(name).is_ok_and(|t| self.catalog.db().table(&t).is_ok()) {
            return Ok(None);
        }
        let Some(def) = self.view_named(&object_parts(name)?).filter(|v| !v.triggers.is_empty()) else {
            return Ok(None);
        };
        let Some(triggers) = compile_view(self.catalog, &def)? else { return Ok(None) };
        if !triggers.any(Timing::InsteadOf, true, event) {
            return Ok(None);
        }
        Ok(Some((def, triggers)))
    }

    /// Binds INSERT on view `def` through its INSTEAD OF triggers.
    pub(crate) fn insert_instead(
        &mut self,
        ins: &ast::Insert,
        def: &ViewDef,
        triggers: Arc<TableTriggers>,
    ) -> Result<(ViewWrite, Vec<OutputColumn>)> {
        self.need(ObjectKind::Relation, &def.name, INSERT, false);
        if ins.returning.is_some() {
            self.need(ObjectKind::Relation, &def.name, SELECT, false);
        }
        match &ins.on {
            None => {}
            Some(ast::OnInsert::OnConflict(ast::OnConflict {
                conflict_target: None,
                action: ast::OnConflictAction::DoNothing,
            })) => {}
            Some(_) => {
                return Err(Error::other(
                    "42P10",
                    "there is no unique or exclusion constraint matching the ON CONFLICT specification",
                ))
            }
        }
        let (cols, _) = ViewShapes::shape(self.catalog, def);
        let columns: Vec<(String, Option<DataType>)> =
            cols.iter().map(|c| (c.name.clone(), c.ty.clone())).collect();
        let targets = insert_targets(&ins.columns, &columns, &short(&def.name))?;
        let defaults = vec![None; columns.len()];
        let (plan, width) = self.insert_source(ins.source.as_deref(), &targets, &columns, &defaults, &[])?;
        let alias = ins.table_alias.as_ref().map(|a| ident(&a.alias)).unwrap_or_else(|| short(&def.name));
        let rows = ViewRows { plan, joined: None, scope: Scope::of(&alias, &cols), columns };
        self.finish_instead(def, triggers, crate::triggers::INSERT, rows, ins.returning.as_deref(), |w| {
            w.targets = targets[..width].to_vec();
        })
    }

    /// Binds UPDATE on view `def` (read as `alias`) through its INSTEAD OF
    /// triggers.
    pub(crate) fn update_instead(
        &mut self,
        up: &ast::Update,
        alias: &str,
        def: &ViewDef,
        triggers: Arc<TableTriggers>,
    ) -> Result<(ViewWrite, Vec<OutputColumn>)> {
        self.need(ObjectKind::Relation, &def.name, UPDATE, false);
        let reads = up.selection.is_some()
            || up.returning.is_some()
            || up.from.is_some()
            || up.assignments.iter().any(|a| reads_columns(&a.value));
        if reads {
            self.need(ObjectKind::Relation, &def.name, SELECT, false);
        }
        let rows = self.view_rows(def, alias, update_from(up), up.selection.as_ref())?;
        let scope = &rows.scope;
        let assignments =
            self.set_list(&up.assignments, &rows.columns, &short(&def.name), None, &Ctx::plain(scope))?;
        let assigned = assignments.iter().map(|(c, _)| rows.columns[*c].0.clone()).collect();
        let event = crate::triggers::UPDATE;
        self.finish_instead(def, triggers, event, rows, up.returning.as_deref(), |w| {
            w.assignments = assignments;
            w.assigned = assigned;
        })
    }

    /// Binds DELETE on view `def` (read as `alias`) through its INSTEAD OF
    /// triggers.
    pub(crate) fn delete_instead(
        &mut self,
        del: &ast::Delete,
        alias: &str,
        def: &ViewDef,
        triggers: Arc<TableTriggers>,
    ) -> Result<(ViewWrite, Vec<OutputColumn>)> {
        self.need(ObjectKind::Relation, &def.name, DELETE, false);
        if del.selection.is_some() || del.returning.is_some() || del.using.is_some() {
            self.need(ObjectKind::Relation, &def.name, SELECT, false);
        }
        let rows = self.view_rows(def, alias, del.using.as_deref(), del.selection.as_ref())?;
        self.finish_instead(def, triggers, crate::triggers::DELETE, rows, del.returning.as_deref(), |_| {})
    }

    /// The rows of view `def`, read as `alias`, that `selection` picks,
    /// joined to the tables of FROM or USING `items` if there are any.
    fn view_rows(
        &mut self,
        def: &ViewDef,
        alias: &str,
        items: Option<&[ast::TableWithJoins]>,
        selection: Option<&ast::Expr>,
    ) -> Result<ViewRows> {
        let (mut plan, cols) = self.view_query(def)?;
        let target = Scope::of(alias, &cols);
        let columns = cols.iter().map(|c| (c.name.clone(), c.ty.clone())).collect();
        let (own, joined, scope) = match items {
            None => (selection.cloned(), None, target.clone()),
            Some(items) => {
                let (own, joined, other) = self.join_rows(target.clone(), items, selection)?;
                (own, Some(joined), target.concat(&other))
            }
        };
        if let Some(w) = &own {
            let t = self.expr(w, &Ctx::plain(&target))?;
            let pred = self.coerce_untyped(t, &Some(DataType::Boolean))?.0;
            plan = Plan::Filter { input: Box::new(plan), pred };
        }
        Ok(ViewRows { plan, joined, scope, columns })
    }

    /// The write, with RETURNING bound over the rows' scope and the parts
    /// only one event has set by `fill`.
    fn finish_instead(
        &mut self,
        def: &ViewDef,
        triggers: Arc<TableTriggers>,
        event: u8,
        rows: ViewRows,
        returning: Option<&[ast::SelectItem]>,
        fill: impl FnOnce(&mut ViewWrite),
    ) -> Result<(ViewWrite, Vec<OutputColumn>)> {
        self.need_triggers(Some(&triggers), event);
        let (returning, cols) = self.returning(returning, &rows.scope)?;
        let types = rows.columns.iter().map(|(_, ty)| ty.clone().unwrap_or(DataType::Text)).collect();
        let mut w = ViewWrite {
            view: def.name.clone(),
            event,
            source: rows.plan,
            joined: rows.joined,
            targets: vec![],
            types,
            assignments: vec![],
            assigned: vec![],
            triggers,
            returning,
        };
        fill(&mut w);
        Ok((w, cols))
    }
}

/// The rows a write to a view acts on, as bound.
struct ViewRows {
    /// The view's rows (for INSERT, the rows to insert).
    plan: Plan,
    /// UPDATE ... FROM, DELETE ... USING: the other tables' row each joins.
    joined: Option<Joined>,
    /// The view's columns, then the joined tables'.
    scope: Scope,
    /// The view's columns as (name, type).
    columns: Vec<(String, Option<DataType>)>,
}
