//! `min(column)` and `max(column)` through a range index: the first row in
//! the index's order instead of every row.
//!
//! A query whose one output is `min` or `max` of a column of one table,
//! without GROUP BY, HAVING, DISTINCT, windows or ORDER BY, where a range
//! index leads with that column, reads the table through that index in
//! the aggregate's direction (ascending for `min`, descending for `max`),
//! passes rows whose column is NULL by, and stops at the first other row:
//! the aggregate of that one row is the aggregate of them all. The query's
//! own WHERE conditions still apply to the rows read; when they choose an
//! index that does not deliver the order (a key look-up, say), every row
//! that qualifies is aggregated as before. PostgreSQL plans the same shape,
//! an InitPlan scanning an index with LIMIT 1.
//!
//! `SELECT max(id) FROM t` over a million rows read them all (about 0.3 s);
//! now it reads one.

use crate::names::{function_name, ident};
use centum_engine::{IndexKind, Table};
use sqlparser::ast;
use std::sync::Arc;

/// The order and WHERE clause that make the first row read the answer.
pub(super) struct Rewrite {
    /// The column, ascending for `min`, descending for `max`.
    pub order: ast::OrderByExpr,
    /// The query's WHERE, with `column IS NOT NULL` added.
    pub selection: ast::Expr,
}

/// The rewrite of `s`, a query of `table` alone, if it has the shape above
/// (the caller checks grouping, windows, DISTINCT and ORDER BY).
pub(super) fn rewrite(s: &ast::Select, table: &Arc<Table>) -> Option<Rewrite> {
    let [item] = s.projection.as_slice() else { return None };
    let (ast::SelectItem::UnnamedExpr(ast::Expr::Function(f))
    | ast::SelectItem::ExprWithAlias { expr: ast::Expr::Function(f), .. }) = item
    else {
        return None;
    };
    let descending = match function_name(f).ok()?.as_str() {
        "min" => false,
        "max" => true,
        _ => return None,
    };
    if f.filter.is_some() || f.over.is_some() || !f.within_group.is_empty() {
        return None;
    }
    let ast::FunctionArguments::List(list) = &f.args else { return None };
    if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
        return None;
    }
    let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(arg))] = list.args.as_slice() else {
        return None;
    };
    let column = match arg {
        ast::Expr::Identifier(id) => ident(id),
        ast::Expr::CompoundIdentifier(ids) => ident(ids.last()?),
        _ => return None,
    };
    let leads = |ix: &centum_engine::IndexDef| {
        matches!(ix.kind, IndexKind::Range) && ix.columns.first().is_some_and(|c| *c == column)
    };
    if !table.def().indexes.iter().any(leads) {
        return None;
    }
    let not_null = ast::Expr::IsNotNull(Box::new(arg.clone()));
    let selection = match &s.selection {
        Some(w) => ast::Expr::BinaryOp {
            left: Box::new(w.clone()),
            op: ast::BinaryOperator::And,
            right: Box::new(not_null),
        },
        None => not_null,
    };
    let sort = if descending { ast::OrderBySort::Desc } else { ast::OrderBySort::Asc };
    let order = ast::OrderByExpr {
        expr: arg.clone(),
        options: ast::OrderByOptions { sort: Some(sort), nulls_first: None },
        with_fill: None,
    };
    Some(Rewrite { order, selection })
}
