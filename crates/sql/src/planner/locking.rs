//! `SELECT ... FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE
//! [NOWAIT | SKIP LOCKED]`: the rows a query returns are locked until its
//! transaction ends, so that no other transaction changes or locks them
//! meanwhile (a job queue hands each job to one worker).
//!
//! The query runs first without its LIMIT and with its table's key added
//! to each row: those are the candidates, in the query's order. A
//! [`Plan::Lock`] above them locks each candidate's row in turn (waiting
//! for, failing on, or skipping a row another transaction holds), checks
//! the WHERE again on the version it locked (which may be newer under
//! READ COMMITTED, as in PostgreSQL), and computes the output from it. The
//! LIMIT is applied above the lock, which is pulled lazily, so only the
//! rows returned (and those skipped) are locked.
//!
//! Every strength locks as FOR UPDATE does: a row locked FOR SHARE by one
//! transaction waits for it in another (PostgreSQL lets shared locks
//! coexist). The query must read one table with a primary key or a unique
//! index, with no GROUP BY, DISTINCT, aggregates or window functions
//! (PostgreSQL refuses those too).

use super::bind::{has_aggregate, Binder, Ctx, Scope};
use super::expr::Expr;
use super::plan::Plan;
use super::views::{combining_clause, single_relation};
use crate::catalog::OutputColumn;
use crate::error::{Error, Result};
use crate::names::{ident, object_parts};
use centum_engine::OnHeld;
use centum_types::DataType;
use sqlparser::ast;

impl Binder<'_> {
    /// Binds query `q`, which has locking clauses; `limit` and `offset`
    /// are its LIMIT and OFFSET, bound.
    pub(crate) fn locking(
        &mut self,
        q: &ast::Query,
        limit: Option<Expr>,
        offset: Option<Expr>,
    ) -> Result<(Plan, Vec<OutputColumn>)> {
        let clause = q.locks.first().map(|l| format!("FOR {}", l.lock_type)).unwrap_or_default();
        let refuse = |what: &str| Error::unsupported(format!("{clause} with {what}"));
        let not_allowed = |what: &str| Error::other("0A000", format!("{clause} is not allowed with {what}"));
        let mut on_held = OnHeld::Wait;
        for l in &q.locks {
            if l.of.is_some() {
                return Err(refuse("OF"));
            }
            on_held = match (on_held, &l.nonblock) {
                (OnHeld::Skip, _) | (_, Some(ast::NonBlock::SkipLocked)) => OnHeld::Skip,
                (OnHeld::Fail, _) | (_, Some(ast::NonBlock::Nowait)) => OnHeld::Fail,
                _ => OnHeld::Wait,
            };
        }
        let ast::SetExpr::Select(sel) = q.body.as_ref() else {
            return Err(not_allowed("UNION/INTERSECT/EXCEPT"));
        };
        if let Some(clause) = combining_clause(sel) {
            return Err(not_allowed(&format!("{clause} clause")));
        }
        let items: Vec<&ast::Expr> = sel
            .projection
            .iter()
            .filter_map(|i| match i {
                ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
                _ => None,
            })
            .collect();
        if items.iter().any(|e| has_aggregate(e)) {
            return Err(not_allowed("aggregate functions"));
        }
        let Some((name, alias)) = single_relation(sel) else {
            return Err(refuse("a join, a subquery or no table in FROM"));
        };
        let info = self.catalog.table(&self.table_name(name)?)?;
        let def = info.table.def();
        let index = info
            .meta
            .primary_key
            .as_ref()
            .and_then(|pk| def.indexes.iter().find(|i| &i.name == pk))
            .or_else(|| def.indexes.iter().find(|i| i.unique))
            .ok_or_else(|| refuse("a table that has no primary key or unique index"))?
            .clone();
        let rel = alias
            .as_ref()
            .map(|a| ident(&a.name))
            .unwrap_or_else(|| object_parts(name).ok().and_then(|p| p.last().cloned()).unwrap_or_default());
        // The candidates: the query, its rows' keys last, without LIMIT.
        let mut candidates = q.clone();
        candidates.locks.clear();
        candidates.limit_clause = None;
        candidates.fetch = None;
        let ast::SetExpr::Select(cs) = candidates.body.as_mut() else { unreachable!("checked above") };
        for (i, c) in index.columns.iter().enumerate() {
            cs.projection.push(ast::SelectItem::ExprWithAlias {
                expr: ast::Expr::CompoundIdentifier(vec![quoted(&rel), quoted(c)]),
                alias: ast::Ident::new(format!("centum_lock_key{i}")),
            });
        }
        let (input, mut cols) = self.query(&candidates)?;
        let key_from = cols.len() - index.columns.len();
        cols.truncate(key_from);
        // The output and the WHERE, over the locked row.
        let table_cols = OutputColumn::of_table(info.table.columns());
        let scope = Scope::of(&rel, &table_cols);
        let ctx = Ctx::plain(&scope);
        let mut exprs = Vec::new();
        for item in &sel.projection {
            match item {
                ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                    exprs.push(self.expr(e, &ctx)?.0)
                }
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                    exprs.extend((0..table_cols.len()).map(Expr::Column))
                }
                other => return Err(refuse(&format!("select item {other}"))),
            }
        }
        if exprs.len() != cols.len() {
            return Err(refuse("this select list"));
        }
        // Each output column keeps the candidates' type.
        for (e, c) in exprs.iter_mut().zip(&cols) {
            if let Some(t) = &c.ty {
                *e = Expr::Cast(Box::new(std::mem::replace(e, Expr::Column(0))), t.clone());
            }
        }
        let recheck = match &sel.selection {
            Some(w) => {
                let t = self.expr(w, &ctx)?;
                Some(self.coerce_untyped(t, &Some(DataType::Boolean))?.0)
            }
            None => None,
        };
        let command = match q.locks.first().map(|l| &l.lock_type) {
            Some(ast::LockType::Share) => "SELECT FOR SHARE",
            _ => "SELECT FOR UPDATE",
        };
        let plan = Plan::Lock {
            input: Box::new(input),
            table: info.table.clone(),
            index: index.name.clone(),
            key_from,
            recheck,
            exprs,
            on_held,
            command,
        };
        let plan = if limit.is_some() || offset.is_some() {
            Plan::Limit { input: Box::new(plan), limit, offset }
        } else {
            plan
        };
        Ok((plan, cols))
    }
}

fn quoted(name: &str) -> ast::Ident {
    ast::Ident::with_quote('"', name)
}
