//! Access-path selection: which index reads a table.
//!
//! From the conditions on one table, the planner collects equalities and
//! bounds of the form `column op expr`, where `expr` is constant for one
//! execution (literals, parameters, columns of an outer row). Then:
//!
//! * a hash index serves only when every key column has an equality;
//! * an index of one column serves `column IN (constants)` and `column =
//!   ANY(array)` of a constant array, one look-up per member;
//! * a range index serves an equality on every key column, an equality
//!   prefix, a prefix plus bounds on the next column, or (with no
//!   condition) an ORDER BY that follows its key, forward or backward;
//! * otherwise the table is scanned.
//!
//! A key of an index on expressions, or of a partial index, is a hidden
//! column (see `catalog::IndexShape`). Before anything else the
//! conditions are rewritten to read it: each use of an expression index's
//! key expression becomes the hidden column, and so does each use of a
//! partial index's key in a condition other than the predicate's own
//! conjuncts, when every conjunct of the predicate is among the
//! conditions (the match is by the bound expressions, so `deleted_at IS
//! NULL` implies only itself, not a weaker predicate). Where the
//! predicate holds, the hidden column equals the key; where it does not,
//! the row fails the query's conditions anyway.
//!
//! Unique full-key look-ups win, then full-key look-ups, then the longest
//! prefix with bounds, then an index that delivers the wanted order. The
//! conditions an index answers exactly (key equalities) are dropped from
//! the filter. The bounds of a range move to the access's bound check,
//! which the executor skips when the index answers them exactly too (see
//! `Access::bound_check`).

use super::bind::{Binder, Ctx, Scope};
use super::dml::parse_expr;
use super::expr::{Expr, SubqueryKind};
use super::plan::{Access, AccessPath};
use crate::catalog::{is_hidden_column, OutputColumn, TableInfo};
use crate::error::Result;
use crate::functions::operators::BinOp;
use centum_engine::{Direction, IndexKind};
use std::ops::Bound;

/// One hidden key column, as conditions are matched against it.
#[derive(Clone, Debug)]
pub struct HiddenKey {
    /// The key expression bound over the table's row, as debug text.
    key: String,
    /// The hidden column that holds it.
    column: usize,
    /// The predicate's conjuncts, bound, as debug text (none: not a
    /// partial index).
    predicate: Vec<String>,
}

impl Binder<'_> {
    /// The hidden key columns of `info`'s indexes on expressions and
    /// partial indexes (empty for most tables).
    pub(crate) fn hidden_keys(&mut self, info: &TableInfo) -> Result<Vec<HiddenKey>> {
        if info.meta.index_shapes.is_empty() {
            return Ok(vec![]);
        }
        let columns = info.table.columns();
        let cols = OutputColumn::of_table(columns);
        let scope = Scope::of(&info.table.name(), &cols);
        let mut keys = Vec::new();
        // By name: when two indexes have the same key expression, the
        // condition goes to the one whose name sorts first, whatever slots
        // the table's indexes happen to occupy (a slot freed by a dropped
        // or failed index is reused by the next one made).
        let mut defs = info.table.def().indexes;
        defs.sort_by(|a, b| a.name.cmp(&b.name));
        for def in defs {
            let Some(shape) = info.meta.index_shapes.get(&def.name) else { continue };
            // A shape that no longer binds (it was checked when the index
            // was made) only leaves its index unused.
            let mut bind = |text: &str| parse_expr(text).and_then(|e| self.expr(&e, &Ctx::plain(&scope)));
            let predicate = match &shape.predicate {
                Some(p) => {
                    let Ok((bound, _)) = bind(p) else { continue };
                    bound.conjuncts().iter().map(|c| format!("{c:?}")).collect()
                }
                None => vec![],
            };
            for (text, column) in shape.keys.iter().zip(&def.columns) {
                let Some(at) = columns.iter().position(|c| &c.name == column) else { continue };
                if !is_hidden_column(column) {
                    continue;
                }
                let Ok((key, _)) = bind(text) else { continue };
                keys.push(HiddenKey { key: format!("{key:?}"), column: at, predicate: predicate.clone() });
            }
        }
        Ok(keys)
    }
}

/// `conds` with the uses of hidden keys rewritten to read their columns
/// (see the module's notes).
fn with_hidden_keys(keys: &[HiddenKey], mut conds: Vec<(Expr, String)>) -> Vec<(Expr, String)> {
    let texts: Vec<String> = conds.iter().map(|(e, _)| format!("{e:?}")).collect();
    for k in keys {
        if !k.predicate.iter().all(|p| texts.contains(p)) {
            continue;
        }
        for (i, (e, _)) in conds.iter_mut().enumerate() {
            if k.predicate.contains(&texts[i]) {
                continue;
            }
            let taken = std::mem::replace(e, Expr::bool(true));
            *e = taken.map(&mut |x| if format!("{x:?}") == k.key { Expr::Column(k.column) } else { x });
        }
    }
    conds
}

/// An order a query wants: (column, descending, explicit NULLS FIRST).
pub struct Order {
    /// Columns of the table, most significant first.
    pub columns: Vec<(usize, bool, Option<bool>)>,
    /// Whether an index that answers none of the conditions may be walked
    /// whole for the order alone (under a LIMIT, or with no conditions):
    /// otherwise a scan and a sort of the rows that pass are cheaper.
    pub walk: bool,
}

/// An access path an index offers: (score, path, the conditions it
/// consumes, the conditions that gave its bounds, whether it delivers the
/// order wanted).
type Candidate = (u32, AccessPath, Vec<usize>, Vec<usize>, bool);

struct Cond {
    expr: Expr,
    text: String,
    /// `column op value` when the condition has that shape.
    shape: Option<(usize, BinOp, Expr)>,
}

/// Picks the access path for `access` given its conditions (over the
/// table's columns) and the order wanted. Returns the access and whether
/// it delivers the order.
pub fn choose(
    mut access: Access,
    conds: Vec<(Expr, String)>,
    order: Option<&Order>,
) -> Result<(Access, bool)> {
    let conds = if access.keys.is_empty() { conds } else { with_hidden_keys(&access.keys, conds) };
    let conds: Vec<Cond> =
        conds.into_iter().map(|(expr, text)| Cond { shape: shape(&expr), expr, text }).collect();
    let eq = |col: usize| conds.iter().position(|c| matches!(&c.shape, Some((k, BinOp::Eq, _)) if *k == col));
    let defs = access.table.def().indexes;
    let types: Vec<centum_types::DataType> = access.table.columns().iter().map(|c| c.ty.clone()).collect();
    // `column IN (constants)` and `column = ANY(constant array)`:
    // (condition, column, members, whether the one member is an array).
    let in_lists: Vec<(usize, usize, Vec<Expr>, bool)> = conds
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match &c.expr {
            Expr::InList(a, list, false) => match a.as_ref() {
                Expr::Column(col) if list.iter().all(constant) => Some((i, *col, list.clone(), false)),
                _ => None,
            },
            Expr::Func(f, args) if f.name == super::arrays::QUANTIFIED_ANY => match &args[..] {
                [Expr::Column(col), a] if constant(a) => Some((i, *col, vec![a.clone()], true)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut best: Option<Candidate> = None;
    for ix in &defs {
        let cols: Vec<usize> = ix.columns.iter().filter_map(|n| access.table.column_index(n).ok()).collect();
        if cols.len() != ix.columns.len() {
            continue;
        }
        // An index of the one column of an IN list: a look-up per member,
        // better than any range, worse than one key.
        if let ([col], Some((i, _, list, spread))) = (&cols[..], in_lists.iter().find(|l| l.1 == cols[0])) {
            let path = AccessPath::Keys {
                index: ix.name.clone(),
                hash: matches!(ix.kind, IndexKind::Hash { .. }),
                unique: ix.unique,
                keys: list.clone(),
                spread: *spread,
                key_type: types[*col].clone(),
            };
            let candidate = (if ix.unique { 70 } else { 65 }, path, vec![*i], vec![], false);
            if best.as_ref().is_none_or(|b| candidate.0 > b.0) {
                best = Some(candidate);
            }
        }
        let eqs: Vec<Option<usize>> = cols.iter().map(|&c| eq(c)).collect();
        let prefix = eqs.iter().take_while(|e| e.is_some()).count();
        let key_of = |used: &[Option<usize>]| -> Vec<Expr> {
            used.iter()
                .flatten()
                .map(|&i| conds[i].shape.as_ref().map(|s| s.2.clone()).unwrap_or(Expr::bool(true)))
                .collect()
        };
        let candidate = match ix.kind {
            IndexKind::Hash { .. } => {
                if prefix < cols.len() {
                    continue;
                }
                let path = AccessPath::Key {
                    index: ix.name.clone(),
                    hash: true,
                    unique: ix.unique,
                    key: key_of(&eqs),
                    key_types: cols.iter().map(|&c| types[c].clone()).collect(),
                };
                (
                    if ix.unique { 100 } else { 80 },
                    path,
                    eqs.iter().flatten().copied().collect(),
                    vec![],
                    false,
                )
            }
            IndexKind::Range => {
                if prefix == cols.len() {
                    let path = AccessPath::Key {
                        index: ix.name.clone(),
                        hash: false,
                        unique: ix.unique,
                        key: key_of(&eqs),
                        key_types: cols.iter().map(|&c| types[c].clone()).collect(),
                    };
                    (
                        if ix.unique { 95 } else { 75 },
                        path,
                        eqs.iter().flatten().copied().collect(),
                        vec![],
                        false,
                    )
                } else {
                    let next = cols[prefix];
                    let mut lower = Bound::Unbounded;
                    let mut upper = Bound::Unbounded;
                    let mut bounds = Vec::new();
                    for (i, c) in conds.iter().enumerate() {
                        if let Some((k, op, v)) = &c.shape {
                            if *k != next {
                                continue;
                            }
                            let (side, bound) = match op {
                                BinOp::Gt => (&mut lower, Bound::Excluded(v.clone())),
                                BinOp::GtEq => (&mut lower, Bound::Included(v.clone())),
                                BinOp::Lt => (&mut upper, Bound::Excluded(v.clone())),
                                BinOp::LtEq => (&mut upper, Bound::Included(v.clone())),
                                _ => continue,
                            };
                            if matches!(side, Bound::Unbounded) {
                                *side = bound;
                                bounds.push(i);
                            }
                        }
                    }
                    let bounded = !matches!((&lower, &upper), (Bound::Unbounded, Bound::Unbounded));
                    let dir =
                        order.and_then(|o| order_direction(o, &cols[prefix..], &ix.descending[..], prefix));
                    let score = if bounded {
                        50 + prefix as u32 * 2
                    } else if prefix > 0 {
                        40 + prefix as u32 * 2
                    } else if dir.is_some() && order.is_some_and(|o| o.walk) {
                        30
                    } else {
                        continue;
                    };
                    let consumed: Vec<usize> = eqs[..prefix].iter().flatten().copied().collect();
                    let path = AccessPath::Range {
                        index: ix.name.clone(),
                        eq: key_of(&eqs[..prefix]),
                        lower,
                        upper,
                        dir: dir.unwrap_or(Direction::Forward),
                    };
                    (score + dir.is_some() as u32, path, consumed, bounds, dir.is_some())
                }
            }
        };
        if best.as_ref().is_none_or(|b| candidate.0 > b.0) {
            best = Some(candidate);
        }
    }
    let (path, consumed, bounds, ordered) = match best {
        Some((_, path, consumed, bounds, ordered)) => (path, consumed, bounds, ordered),
        None => (AccessPath::Scan, vec![], vec![], false),
    };
    let mut cond_text = Vec::new();
    let mut filter = Vec::new();
    let mut filter_text = Vec::new();
    let mut bound_check = Vec::new();
    for (i, c) in conds.into_iter().enumerate() {
        if consumed.contains(&i) {
            cond_text.push(c.text);
        } else if bounds.contains(&i) {
            // A BETWEEN gives two bounds with one text.
            if !cond_text.contains(&c.text) {
                cond_text.push(c.text);
            }
            bound_check.push(c.expr);
        } else {
            filter_text.push(c.text);
            filter.push(c.expr);
        }
    }
    access.path = path;
    access.filter = Expr::and_all(filter);
    access.bound_check = Expr::and_all(bound_check).map(Box::new);
    access.cond_text = cond_text.into_iter().filter(|t| !t.is_empty()).collect::<Vec<_>>().join(" AND ");
    access.filter_text = filter_text.into_iter().filter(|t| !t.is_empty()).collect::<Vec<_>>().join(" AND ");
    Ok((access, ordered))
}

/// Whether `x` is one value for a whole execution of the statement: it
/// reads no column of the row and calls nothing volatile, or it is a
/// scalar subquery that reads no outer row, which runs once per execution
/// (its rows are kept; `execution::eval`), as PostgreSQL's InitPlan does.
fn constant(x: &Expr) -> bool {
    match x {
        Expr::Subquery(plan, SubqueryKind::Scalar) => !plan.reads_outer(),
        x => x.is_row_independent() && x.is_stable(),
    }
}

/// `column op value` with `value` constant for one execution.
fn shape(e: &Expr) -> Option<(usize, BinOp, Expr)> {
    let Expr::Binary(op, a, b) = e else { return None };
    if !op.is_comparison() || *op == BinOp::NotEq {
        return None;
    }
    match (a.as_ref(), b.as_ref()) {
        (Expr::Column(c), v) if constant(v) => Some((*c, *op, v.clone())),
        (v, Expr::Column(c)) if constant(v) => Some((*c, op.flip(), v.clone())),
        _ => None,
    }
}

/// The direction in which an index whose key continues with `cols`
/// (descending flags `desc`, offset by `skip` eq columns) delivers `order`.
fn order_direction(order: &Order, cols: &[usize], desc: &[bool], skip: usize) -> Option<Direction> {
    if order.columns.len() > cols.len() {
        return None;
    }
    let mut dir = None;
    for (i, (c, want_desc, nulls_first)) in order.columns.iter().enumerate() {
        if cols[i] != *c {
            return None;
        }
        let ix_desc = desc.get(skip + i).copied().unwrap_or(false);
        let d = if *want_desc == ix_desc { Direction::Forward } else { Direction::Backward };
        // The index puts NULLs last ascending and first descending, as
        // PostgreSQL's default; an explicit contrary NULLS clause breaks it.
        if let Some(nf) = nulls_first {
            if *nf != *want_desc {
                return None;
            }
        }
        match dir {
            None => dir = Some(d),
            Some(prev) if prev != d => return None,
            _ => {}
        }
    }
    dir
}
