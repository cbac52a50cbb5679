//! The order in which a FROM list's items are joined.
//!
//! Items listed with commas (or CROSS JOIN) and tied together by WHERE
//! conditions may be joined in any order; the answer is the same, the
//! cost is not. Joined in the order written, `FROM a, b, c WHERE a.x = c.x
//! AND b.y = c.y` pairs `a` with every row of `b` before `c` connects
//! them, and eight such tables take seconds where a connected order takes
//! a millisecond.
//!
//! The planner orders them greedily by estimated rows:
//! - each item's estimate is its table's row count (a counter the engine
//!   keeps; 1,000 for a subquery or function, as PostgreSQL assumes), cut
//!   by the WHERE conditions on it alone: an equality on a unique key
//!   leaves one row, any other equality a tenth, a range comparison a
//!   third, anything else a half;
//! - the smallest item goes first;
//! - then, again and again, the smallest item that a condition connects
//!   to those already joined; an item nothing connects comes only when no
//!   connected one is left (a cross product that cannot be avoided).
//!
//! Starting small and staying connected keeps every intermediate result
//! small, and lets the later items be reached through their indexes or a
//! hash join on the connecting equality.
//!
//! Conditions are read from the statement's syntax, before binding: a
//! column name found in exactly one item ties the condition to that item;
//! a name found in none (an outer query's column) is a constant here. A
//! condition with a subquery connects nothing, so it cannot make a
//! subquery's columns look like the items'.

use super::bind::Scope;
use crate::names::ident;
use centum_engine::Table;
use sqlparser::ast;
use std::ops::ControlFlow;
use std::sync::Arc;

/// What the ordering needs of one FROM item.
pub(super) struct ItemInfo<'a> {
    /// The item's columns.
    pub scope: &'a Scope,
    /// Its table, for a base table.
    pub table: Option<&'a Arc<Table>>,
}

/// Rows assumed for an item that is not a base table.
const OTHER_ROWS: f64 = 1000.0;

/// The order to join `items` in, given the WHERE clause `selection`:
/// positions into `items`. `None` when the written order is kept (it is
/// the chosen one, or there are too many items to order).
pub(super) fn choose(items: &[ItemInfo], selection: &ast::Expr) -> Option<Vec<usize>> {
    let n = items.len();
    if !(2..=64).contains(&n) {
        return None;
    }
    let mut est: Vec<f64> =
        items.iter().map(|i| i.table.map_or(OTHER_ROWS, |t| t.row_estimate() as f64)).collect();
    // Items each multi-item condition ties together, as bit sets.
    let mut edges: Vec<u64> = Vec::new();
    for c in conjuncts(selection) {
        let Some(refs) = references(c, items) else { continue };
        let set = refs.iter().fold(0u64, |s, i| s | 1 << i);
        match set.count_ones() {
            0 => {}
            1 => {
                let i = refs[0];
                est[i] = (est[i] * selectivity(c, refs.len(), items[i].table)).max(1.0);
            }
            _ => edges.push(set),
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut joined = 0u64;
    while order.len() < n {
        let connected = |j: usize| edges.iter().any(|&e| e & (1 << j) != 0 && e & !(joined | 1 << j) == 0);
        let left: Vec<usize> = (0..n).filter(|&j| joined & (1 << j) == 0).collect();
        let linked: Vec<usize> = left.iter().copied().filter(|&j| connected(j)).collect();
        let pool = if linked.is_empty() { &left } else { &linked };
        // The smallest; the earliest written among equals.
        let mut best = pool[0];
        for &j in &pool[1..] {
            if est[j] < est[best] {
                best = j;
            }
        }
        order.push(best);
        joined |= 1 << best;
    }
    (order.iter().enumerate().any(|(k, &i)| k != i)).then_some(order)
}

/// The AND-ed parts of `e`.
fn conjuncts(e: &ast::Expr) -> Vec<&ast::Expr> {
    match e {
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::And, right } => {
            let mut v = conjuncts(left);
            v.extend(conjuncts(right));
            v
        }
        ast::Expr::Nested(inner) => conjuncts(inner),
        e => vec![e],
    }
}

/// The item each column reference of `c` belongs to; `None` if `c` holds
/// a subquery or a name more than one item has (the binder reports that
/// one).
fn references(c: &ast::Expr, items: &[ItemInfo]) -> Option<Vec<usize>> {
    let mut refs = Vec::new();
    let flow = ast::visit_expressions(c, |e| {
        let (rel, name) = match e {
            ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => {
                return ControlFlow::Break(());
            }
            ast::Expr::Identifier(id) => (None, ident(id)),
            ast::Expr::CompoundIdentifier(ids) if ids.len() >= 2 => {
                (Some(ident(&ids[ids.len() - 2])), ident(&ids[ids.len() - 1]))
            }
            _ => return ControlFlow::Continue(()),
        };
        let mut owner = None;
        for (i, item) in items.iter().enumerate() {
            match item.scope.find(rel.as_deref(), &name) {
                Ok(Some(_)) if owner.is_none() => owner = Some(i),
                Ok(None) => {}
                _ => return ControlFlow::Break(()),
            }
        }
        if let Some(i) = owner {
            refs.push(i);
        }
        ControlFlow::Continue(())
    });
    flow.is_continue().then_some(refs)
}

/// The share of an item's rows that condition `c`, on that item alone,
/// keeps; `columns` is how many column references it makes.
fn selectivity(c: &ast::Expr, columns: usize, table: Option<&Arc<Table>>) -> f64 {
    use ast::BinaryOperator as Op;
    match c {
        ast::Expr::BinaryOp { left, op: Op::Eq, right } => {
            // `column = value`: one row if the column is a unique key.
            let column = [left, right].into_iter().find_map(|side| match side.as_ref() {
                ast::Expr::Identifier(id) => Some(ident(id)),
                ast::Expr::CompoundIdentifier(ids) => ids.last().map(ident),
                _ => None,
            });
            let unique = columns == 1
                && column.is_some_and(|col| {
                    table.is_some_and(|t| {
                        t.def().indexes.iter().any(|ix| ix.unique && ix.columns == [col.as_str()])
                    })
                });
            if unique {
                0.0
            } else {
                0.1
            }
        }
        ast::Expr::BinaryOp { op: Op::Lt | Op::LtEq | Op::Gt | Op::GtEq, .. } | ast::Expr::Between { .. } => {
            0.3
        }
        _ => 0.5,
    }
}
