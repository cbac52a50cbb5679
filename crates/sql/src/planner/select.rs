//! Queries: SELECT, VALUES, set operations, CTEs, joins, grouping, order
//! and limits.
//!
//! FROM items are joined left-deep in the order written. WHERE is split
//! into conjuncts; each is applied at the first join where every table it
//! names is present: as the table's own filter (where it can pick an
//! index), as a join condition (where it can pick an index nested-loop or
//! hash join), or as a filter after an outer join.

use super::access::{self, Order};
use super::bind::{has_aggregate, intern, Binder, Ctx, Grouping, Scope, Typed};
use super::expr::Expr;
use super::join_order;
use super::min_max;
use super::plan::{Access, AccessPath, GroupingSets, JoinKind, Plan, SetOpKind, SortKey};
use super::window::{has_window, Windowing};
use crate::catalog::OutputColumn;
use crate::error::{Error, Result};
use crate::functions::operators::BinOp;
use crate::names::ident;
use crate::privileges::{ObjectKind, SELECT};
use crate::system::SystemTable;
use centum_types::DataType;
use sqlparser::ast;
use std::cell::RefCell;

/// Conditions with their SQL text (for EXPLAIN).
type Conds = Vec<(Expr, String)>;
/// ORDER BY keys over the FROM row: (column, descending, explicit NULLS
/// FIRST).
type OrderKeys = Vec<(usize, bool, Option<bool>)>;

/// One FROM item before joining.
struct Item {
    plan: Plan,
    scope: Scope,
    /// For a base table: what `access::choose` needs to pick a path.
    base: Option<Access>,
    /// A LATERAL subquery: it reads the row of the items before it, so it
    /// joins by nested loop.
    lateral: bool,
}

/// A join step: the item and how it joins what came before.
struct Step {
    item: Item,
    kind: JoinKind,
    on: Option<ast::Expr>,
}

impl<'a> Binder<'a> {
    /// Binds a query.
    pub fn query(&mut self, q: &ast::Query) -> Result<(Plan, Vec<OutputColumn>)> {
        crate::stack::check("queries nested too deeply")?;
        let depth = self.ctes.len();
        self.query_depth += 1;
        let out = self.with_clause(q).and_then(|()| self.query_body(q));
        self.query_depth -= 1;
        self.ctes.truncate(depth);
        let (mut plan, cols) = out?;
        plan.prune_columns(None);
        Ok((plan, cols))
    }

    /// Binds `WITH ... INSERT/UPDATE/DELETE` (a query whose body is a
    /// data-modifying statement): the CTEs are in scope for the statement.
    pub(crate) fn with_dml(&mut self, q: &ast::Query) -> Result<(super::Statement, Vec<OutputColumn>)> {
        let depth = self.ctes.len();
        self.query_depth += 1;
        let out = self.with_clause(q).and_then(|()| match q.body.as_ref() {
            ast::SetExpr::Insert(ast::Statement::Insert(i)) => self.insert(i),
            ast::SetExpr::Update(ast::Statement::Update(u)) => self.update(u),
            ast::SetExpr::Delete(ast::Statement::Delete(d)) => self.delete(d),
            other => Err(Error::unsupported(format!("query {other}"))),
        });
        self.query_depth -= 1;
        self.ctes.truncate(depth);
        out
    }

    /// Puts the CTEs of `q`'s WITH in scope, in order.
    fn with_clause(&mut self, q: &ast::Query) -> Result<()> {
        let Some(with) = &q.with else { return Ok(()) };
        for cte in &with.cte_tables {
            let name = ident(&cte.alias.name);
            let (plan, mut cols) = match recursive_parts(cte, &name).filter(|_| with.recursive) {
                Some((anchor, step, all)) => self.recursive_cte(cte, &name, anchor, step, all)?,
                None if is_dml(&cte.query) => self.writable_cte(&cte.query)?,
                None => self.query(&cte.query)?,
            };
            for (c, a) in cols.iter_mut().zip(&cte.alias.columns) {
                c.name = ident(&a.name);
            }
            self.ctes.push((name, plan, cols));
        }
        Ok(())
    }

    /// A data-modifying statement in WITH: planned to run once before the
    /// statement (`Plan::Writes`), its RETURNING rows read through a work
    /// table. Only the top-level statement's WITH may hold one, as in
    /// PostgreSQL.
    fn writable_cte(&mut self, q: &ast::Query) -> Result<(Plan, Vec<OutputColumn>)> {
        if self.query_depth > 1 {
            return Err(Error::other(
                "0A000",
                "WITH clause containing a data-modifying statement must be at the top level",
            ));
        }
        let (statement, cols) = self.with_dml(q)?;
        let work = next_work_id();
        self.writes.push((work, statement));
        Ok((Plan::WorkTable { work }, cols))
    }

    /// `plan` sorted by `order`, which names its output columns.
    fn sorted(
        &mut self,
        (plan, cols): (Plan, Vec<OutputColumn>),
        order: &[&ast::OrderByExpr],
    ) -> Result<(Plan, Vec<OutputColumn>)> {
        if order.is_empty() {
            return Ok((plan, cols));
        }
        let scope = Scope::of("", &cols);
        let keys = self.sort_keys(order, &cols, &Ctx::plain(&scope))?;
        Ok((Plan::Sort { input: Box::new(plan), keys }, cols))
    }

    /// A SELECT with `unnest(x)` items in its list: the list with each such
    /// item's array in its place, then each row once per element
    /// (`Plan::ProjectSet`). Elements keep an array's element type; those of
    /// array text are text.
    fn select_unnest(&mut self, s: &ast::Select) -> Result<(Plan, Vec<OutputColumn>)> {
        let mut plain = s.clone();
        let mut sets = Vec::new();
        for (i, item) in plain.projection.iter_mut().enumerate() {
            let (ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }) = item
            else {
                continue;
            };
            if let Some(name) = json_set_name(e) {
                let expr = e.clone();
                if let ast::SelectItem::UnnamedExpr(_) = item {
                    *item = ast::SelectItem::ExprWithAlias { expr, alias: ast::Ident::new(name) };
                }
                sets.push(i);
            } else if calls(e, SUBSCRIPTS) {
                // Bound as the array of its subscripts, then set out
                // like `unnest`'s elements.
                let expr = e.clone();
                if let ast::SelectItem::UnnamedExpr(_) = item {
                    *item = ast::SelectItem::ExprWithAlias { expr, alias: ast::Ident::new(SUBSCRIPTS) };
                }
                sets.push(i);
            } else if let Some(arg) = unnest_arg(e) {
                let arg = typed_vector(arg);
                let named = matches!(item, ast::SelectItem::ExprWithAlias { .. });
                if named {
                    if let ast::SelectItem::ExprWithAlias { expr, .. } = item {
                        *expr = arg;
                    }
                } else {
                    *item = ast::SelectItem::ExprWithAlias { expr: arg, alias: ast::Ident::new("unnest") };
                }
                sets.push(i);
            }
        }
        let before = std::mem::replace(&mut self.json_sets_as_arrays, true);
        let bound = self.select(&plain, &[], false);
        self.json_sets_as_arrays = before;
        let (plan, mut cols) = bound?;
        for &i in &sets {
            let elem = cols[i].ty.as_ref().and_then(DataType::element).cloned();
            cols[i].ty = Some(elem.unwrap_or(DataType::Text));
        }
        Ok((Plan::ProjectSet { input: Box::new(plan), sets }, cols))
    }

    /// A recursive CTE `name`: the anchor bound first, which gives the
    /// columns and their types; then the step, in which `name` reads the
    /// rows of the round before (see `Plan::Recursive`).
    fn recursive_cte(
        &mut self,
        cte: &ast::Cte,
        name: &str,
        anchor: &ast::SetExpr,
        step: &ast::SetExpr,
        all: bool,
    ) -> Result<(Plan, Vec<OutputColumn>)> {
        let (anchor, mut cols) = self.set_expr(anchor)?;
        for (c, a) in cols.iter_mut().zip(&cte.alias.columns) {
            c.name = ident(&a.name);
        }
        for c in cols.iter_mut().filter(|c| c.ty.is_none()) {
            c.ty = Some(DataType::Text);
        }
        let work = next_work_id();
        self.ctes.push((name.to_string(), Plan::WorkTable { work }, cols.clone()));
        let stepped = self.set_expr(step);
        self.ctes.pop();
        let (step, step_cols) = stepped?;
        if step_cols.len() != cols.len() {
            return Err(Error::Syntax("each UNION query must have the same number of columns".into()));
        }
        // The step's rows take the anchor's column types.
        let casts: Vec<Expr> = step_cols
            .iter()
            .zip(&cols)
            .enumerate()
            .map(|(i, (s, a))| match (&s.ty, &a.ty) {
                (Some(st), Some(at)) if st != at => Expr::Cast(Box::new(Expr::Column(i)), at.clone()),
                (None, Some(at)) => Expr::Cast(Box::new(Expr::Column(i)), at.clone()),
                _ => Expr::Column(i),
            })
            .collect();
        let step = if casts.iter().all(|e| matches!(e, Expr::Column(_))) {
            step
        } else {
            Plan::Project { input: Box::new(step), exprs: casts }
        };
        let plan = Plan::Recursive { anchor: Box::new(anchor), step: Box::new(step), distinct: !all, work };
        Ok((plan, cols))
    }

    fn query_body(&mut self, q: &ast::Query) -> Result<(Plan, Vec<OutputColumn>)> {
        let order: Vec<&ast::OrderByExpr> = match &q.order_by {
            Some(ast::OrderBy { kind: ast::OrderByKind::Expressions(v), .. }) => v.iter().collect(),
            Some(_) => return Err(Error::unsupported("ORDER BY ALL")),
            None => vec![],
        };
        let (limit, offset) = match &q.limit_clause {
            Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
                (limit.as_ref(), offset.as_ref().map(|o| &o.value))
            }
            Some(ast::LimitClause::OffsetCommaLimit { .. }) => {
                return Err(Error::unsupported("LIMIT offset, count"))
            }
            None => (None, None),
        };
        let limit = limit.filter(|l| !matches!(l, ast::Expr::Value(v) if v.value == ast::Value::Null));
        let bind_count = |b: &mut Binder, e: Option<&ast::Expr>| -> Result<Option<Expr>> {
            e.map(|e| {
                let t = b.expr(e, &Ctx::plain(&Scope::default()))?;
                Ok(b.coerce_untyped(t, &Some(DataType::BigInt))?.0)
            })
            .transpose()
        };
        let limit_e = bind_count(self, limit)?;
        let offset_e = bind_count(self, offset)?;
        if !q.locks.is_empty() {
            return self.locking(q, limit_e, offset_e);
        }
        let (plan, cols) = match q.body.as_ref() {
            ast::SetExpr::Select(s) => match lift_json_set(s) {
                Some(lifted) => self.select(&lifted, &order, limit_e.is_some())?,
                None if has_unnest(s) => {
                    let out = self.select_unnest(s)?;
                    self.sorted(out, &order)?
                }
                None => self.select(s, &order, limit_e.is_some())?,
            },
            other => {
                let out = self.set_expr(other)?;
                self.sorted(out, &order)?
            }
        };
        let plan = if limit_e.is_some() || offset_e.is_some() {
            Plan::Limit { input: Box::new(plan), limit: limit_e, offset: offset_e }
        } else {
            plan
        };
        Ok((plan, cols))
    }

    fn set_expr(&mut self, e: &ast::SetExpr) -> Result<(Plan, Vec<OutputColumn>)> {
        crate::stack::check("set operations nested too deeply")?;
        match e {
            ast::SetExpr::Select(s) => self.select(s, &[], false),
            ast::SetExpr::Query(q) => self.query(q),
            ast::SetExpr::Values(v) => self.values(v),
            ast::SetExpr::SetOperation { left, op, set_quantifier, right } => {
                let (lp, lc) = self.set_expr(left)?;
                let (rp, rc) = self.set_expr(right)?;
                let name = match op {
                    ast::SetOperator::Union => "UNION",
                    ast::SetOperator::Intersect => "INTERSECT",
                    _ => "EXCEPT",
                };
                if lc.len() != rc.len() {
                    return Err(Error::Syntax(format!(
                        "each {name} query must have the same number of columns"
                    )));
                }
                let mut cols = lc.clone();
                for (i, (c, r)) in cols.iter_mut().zip(&rc).enumerate() {
                    c.ty = match (&c.ty, &r.ty) {
                        // A column that is a bare NULL or quoted literal
                        // in every row of one side takes the other side's
                        // type, as an unknown-typed literal does in
                        // PostgreSQL.
                        (Some(a), Some(b)) if a != b && untyped_column(left, i) => Some(b.clone()),
                        (Some(a), Some(b)) if a != b && untyped_column(right, i) => Some(a.clone()),
                        (Some(a), Some(b)) => Some(super::bind::wider(a, b).ok_or_else(|| {
                            Error::mismatch(format!(
                                "{name} types {} and {} cannot be matched",
                                a.sql_name(),
                                b.sql_name()
                            ))
                        })?),
                        (a, b) => a.clone().or(b.clone()).or(Some(DataType::Text)),
                    };
                }
                let op = match op {
                    ast::SetOperator::Union => SetOpKind::Union,
                    ast::SetOperator::Intersect => SetOpKind::Intersect,
                    _ => SetOpKind::Except,
                };
                let all = matches!(set_quantifier, ast::SetQuantifier::All);
                let lp = cast_to(lp, &lc, &cols);
                let rp = cast_to(rp, &rc, &cols);
                Ok((Plan::SetOp { op, all, left: Box::new(lp), right: Box::new(rp) }, cols))
            }
            other => Err(Error::unsupported(format!("query {other}"))),
        }
    }

    /// Binds `VALUES (...), (...)`.
    pub(crate) fn values(&mut self, v: &ast::Values) -> Result<(Plan, Vec<OutputColumn>)> {
        let empty = Scope::default();
        let ctx = Ctx::plain(&empty);
        let width = v.rows.first().map_or(0, |r| r.len());
        let mut rows: Vec<Vec<Typed>> = Vec::with_capacity(v.rows.len());
        for r in &v.rows {
            if r.len() != width {
                return Err(Error::Syntax("VALUES lists must all be the same length".into()));
            }
            rows.push(r.iter().map(|e| self.expr(e, &ctx)).collect::<Result<_>>()?);
        }
        let mut cols = Vec::with_capacity(width);
        let mut out: Vec<Vec<Expr>> = vec![Vec::with_capacity(width); rows.len()];
        for c in 0..width {
            let column: Vec<Typed> = rows.iter().map(|r| r[c].clone()).collect();
            let (exprs, ty) = self.common_type(column, "VALUES")?;
            for (row, e) in out.iter_mut().zip(exprs) {
                row.push(e);
            }
            cols.push(OutputColumn { name: format!("column{}", c + 1), ty });
        }
        Ok((Plan::Values { rows: out }, cols))
    }

    fn select(
        &mut self,
        s: &ast::Select,
        order: &[&ast::OrderByExpr],
        has_limit: bool,
    ) -> Result<(Plan, Vec<OutputColumn>)> {
        if s.into.is_some() {
            return Err(Error::unsupported("SELECT INTO"));
        }
        if let ([ast::SelectItem::UnnamedExpr(ast::Expr::Function(f))], true) =
            (s.projection.as_slice(), s.from.is_empty())
        {
            if crate::names::function_name(f)? == "pg_partition_ancestors" {
                // A set-returning function; no relation is a partition, so
                // it returns no rows.
                let col = OutputColumn { name: "pg_partition_ancestors".into(), ty: Some(DataType::Integer) };
                return Ok((Plan::Values { rows: vec![] }, vec![col]));
            }
        }
        let steps = self.from(&s.from)?;
        let has_group_by = !matches!(&s.group_by, ast::GroupByExpr::Expressions(v, _) if v.is_empty());
        let keys = match has_group_by {
            true => steps.iter().filter_map(|st| self.primary_key(st.item.base.as_ref()?)).collect(),
            false => vec![],
        };
        let grouped = has_group_by
            || s.having.is_some()
            || s.projection.iter().any(|p| match p {
                ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                    has_aggregate(e)
                }
                _ => false,
            })
            || order.iter().any(|o| has_aggregate(&o.expr));
        let windowed = s.projection.iter().any(|p| match p {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => has_window(e),
            _ => false,
        }) || order.iter().any(|o| has_window(&o.expr));
        // The wanted order, for a single table without grouping or
        // windows (which reorder rows): a range index can deliver it and
        // save the sort. An index chosen for the WHERE's conditions
        // delivers it when it can; a whole index is walked for the order
        // alone (`access::Order::walk`) under a LIMIT, which stops it
        // early, or when every row is read anyway (walking the leaves in
        // order costs about half of a scan and a sort of the same rows),
        // not under a filter that may keep few rows for a cheap sort.
        let want_order =
            if !grouped && !windowed && s.distinct.is_none() && steps.len() == 1 && !order.is_empty() {
                Some((order, has_limit || s.selection.is_none()))
            } else {
                None
            };
        // `min` or `max` of a column a range index leads with: the first
        // row in the index's order is the answer (`min_max`).
        let min_max = if grouped
            && !has_group_by
            && s.having.is_none()
            && !windowed
            && s.distinct.is_none()
            && order.is_empty()
            && steps.len() == 1
        {
            steps[0].item.base.as_ref().and_then(|b| min_max::rewrite(s, &b.table))
        } else {
            None
        };
        let first_order: Vec<&ast::OrderByExpr> = min_max.iter().map(|r| &r.order).collect();
        let (want_order, selection) = match &min_max {
            Some(r) => (Some((first_order.as_slice(), true)), Some(&r.selection)),
            None => (want_order, s.selection.as_ref()),
        };
        let (mut plan, scope, mut sorted) = self.join_all(steps, selection, want_order)?;
        // The order was asked for the aggregate, not for the output.
        if min_max.is_some() && sorted.take().is_some() {
            let one = Some(Expr::Literal(centum_types::Value::BigInt(1)));
            plan = Plan::Limit { input: Box::new(plan), limit: one, offset: None };
        }
        let grouping = if grouped {
            let ctx = Ctx::plain(&scope);
            let ast::GroupByExpr::Expressions(list, modifiers) = &s.group_by else {
                return Err(Error::unsupported("GROUP BY ALL"));
            };
            if !modifiers.is_empty() {
                return Err(Error::unsupported("GROUP BY ... WITH"));
            }
            let (group, sets) = self.grouping_sets(list, &s.projection, &ctx)?;
            let mut g = Grouping::new(group);
            g.sets = sets;
            g.keys = keys;
            Some(RefCell::new(g))
        } else {
            None
        };
        let windowing = RefCell::new(Windowing::new(&s.named_window)?);
        let ctx = Ctx { scope: &scope, grouping: grouping.as_ref(), windows: Some(&windowing) };
        // Output columns.
        let mut exprs = Vec::new();
        let mut cols = Vec::new();
        for item in &s.projection {
            match item {
                ast::SelectItem::Wildcard(_) => {
                    if scope.cols.is_empty() {
                        return Err(Error::Syntax("SELECT * with no tables specified is not valid".into()));
                    }
                    // The columns that stand for USING pairs first, the
                    // latest join's first.
                    let mut shown: Vec<(usize, &super::bind::ScopeCol)> =
                        scope.cols.iter().enumerate().filter(|(_, c)| !c.hidden && !c.merged).collect();
                    shown.sort_by_key(|(_, c)| match c.lead {
                        Some((join, at)) => (0, std::cmp::Reverse(join), at),
                        None => (1, std::cmp::Reverse(0), 0),
                    });
                    for (i, c) in shown {
                        let e = match &grouping {
                            Some(_) => self.expr(&ast::Expr::Identifier(ast::Ident::new(&c.name)), &ctx)?.0,
                            None => Expr::Column(i),
                        };
                        exprs.push(e);
                        cols.push(OutputColumn { name: c.name.clone(), ty: c.ty.clone() });
                    }
                }
                ast::SelectItem::QualifiedWildcard(kind, _) => {
                    let rel = match kind {
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n) => {
                            crate::names::object_parts(n)?.last().cloned().unwrap_or_default()
                        }
                        _ => return Err(Error::unsupported("this wildcard")),
                    };
                    let mut any = false;
                    for (i, c) in scope.cols.iter().enumerate().filter(|(_, c)| !c.hidden) {
                        if c.rel.as_deref() == Some(rel.as_str()) {
                            any = true;
                            // Grouped, the column is read as a GROUP BY key
                            // or a value of its group, as a named one is.
                            let e = match &grouping {
                                Some(_) => {
                                    let name = vec![
                                        ast::Ident::with_quote('"', &rel),
                                        ast::Ident::with_quote('"', &c.name),
                                    ];
                                    self.expr(&ast::Expr::CompoundIdentifier(name), &ctx)?.0
                                }
                                None => Expr::Column(i),
                            };
                            exprs.push(e);
                            cols.push(OutputColumn { name: c.name.clone(), ty: c.ty.clone() });
                        }
                    }
                    if !any {
                        return Err(Error::other(
                            "42P01",
                            format!("missing FROM-clause entry for table \"{rel}\""),
                        ));
                    }
                }
                ast::SelectItem::UnnamedExpr(e) => {
                    let (x, ty) = self.expr(e, &ctx)?;
                    exprs.push(x);
                    cols.push(OutputColumn { name: column_name(e), ty: ty.or(Some(DataType::Text)) });
                }
                ast::SelectItem::ExprWithAlias { expr, alias } => {
                    let (x, ty) = self.expr(expr, &ctx)?;
                    exprs.push(x);
                    cols.push(OutputColumn { name: ident(alias), ty: ty.or(Some(DataType::Text)) });
                }
                ast::SelectItem::ExprWithAliases { .. } => {
                    return Err(Error::unsupported("multiple aliases"))
                }
            }
        }
        let having_ctx = Ctx { scope: &scope, grouping: grouping.as_ref(), windows: None };
        let having = s
            .having
            .as_ref()
            .map(|h| {
                let t = self.expr(h, &having_ctx)?;
                Ok::<_, Error>(self.coerce_untyped(t, &Some(DataType::Boolean))?.0)
            })
            .transpose()?;
        // ORDER BY keys not in the output are computed as hidden columns.
        let visible = exprs.len();
        let mut keys = Vec::new();
        if sorted.is_none() {
            for o in order {
                let idx = match self.output_ref(&o.expr, &cols, Some(&exprs), "ORDER BY")? {
                    Some(i) => i,
                    None => {
                        let (x, _) = self.expr(&o.expr, &ctx)?;
                        if let Some(i) = exprs.iter().position(|e| format!("{e:?}") == format!("{x:?}")) {
                            i
                        } else {
                            if s.distinct.is_some() {
                                return Err(Error::other(
                                    "42P10",
                                    "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                                ));
                            }
                            exprs.push(x);
                            exprs.len() - 1
                        }
                    }
                };
                keys.push(sort_key(Expr::Column(idx), o));
            }
        }
        let mut width = scope.cols.len();
        if let Some(g) = grouping {
            let g = g.into_inner();
            width = g.group.len() + g.aggs.len();
            plan = Plan::Aggregate { input: Box::new(plan), group: g.group, aggs: g.aggs, sets: g.sets };
            if let Some(h) = having {
                plan = Plan::Filter { input: Box::new(plan), pred: h };
            }
        }
        let calls = windowing.into_inner().calls;
        if !calls.is_empty() {
            exprs = exprs.into_iter().map(|e| Windowing::place(e, width)).collect();
            plan = Plan::Window { input: Box::new(plan), calls };
        }
        plan = Plan::Project { input: Box::new(plan), exprs };
        match &s.distinct {
            None | Some(ast::Distinct::All) => {}
            Some(ast::Distinct::Distinct) => plan = Plan::Distinct { input: Box::new(plan), on: None },
            Some(ast::Distinct::On(on)) => {
                // DISTINCT ON keys first in the sort, then the ORDER BY.
                let mut on_keys = Vec::new();
                for e in on {
                    let idx = match self.output_ref(e, &cols, None, "DISTINCT ON")? {
                        Some(i) => i,
                        None => {
                            return Err(Error::unsupported(
                                "DISTINCT ON an expression not in the select list",
                            ))
                        }
                    };
                    on_keys.push(idx);
                }
                let mut ordered: Vec<Expr> = on_keys.iter().map(|&i| Expr::Column(i)).collect();
                ordered.extend((0..visible).map(Expr::Column));
                let width = on_keys.len();
                let mut sort: Vec<SortKey> = keys
                    .iter()
                    .map(|k| SortKey { expr: k.expr.clone().shift_columns(width as isize), ..k.clone() })
                    .collect();
                for (i, _) in on_keys.iter().enumerate() {
                    if i >= sort.len() {
                        sort.push(SortKey { expr: Expr::Column(i), desc: false, nulls_first: false });
                    }
                }
                let with_keys = Plan::Project { input: Box::new(plan), exprs: ordered };
                let sorted = Plan::Sort { input: Box::new(with_keys), keys: sort };
                let dedup = Plan::Distinct { input: Box::new(sorted), on: Some(width) };
                let exprs = (width..width + visible).map(Expr::Column).collect();
                return Ok((Plan::Project { input: Box::new(dedup), exprs }, cols));
            }
        }
        if !keys.is_empty() {
            plan = Plan::Sort { input: Box::new(plan), keys };
        }
        if plan_width_exceeds(visible, &plan) {
            plan = Plan::Project { input: Box::new(plan), exprs: (0..visible).map(Expr::Column).collect() };
        }
        Ok((plan, cols))
    }

    /// The GROUP BY list: its distinct key expressions and, when it has
    /// GROUPING SETS, ROLLUP or CUBE, the grouping sets as positions among
    /// them (the items' sets multiplied out, as in PostgreSQL: `a,
    /// ROLLUP(b, c)` groups by (a, b, c), (a, b) and (a)). With sets, a
    /// placeholder key is added last, the column of each row's set number
    /// (see [`Plan::Aggregate`]).
    fn grouping_sets(
        &mut self,
        list: &[ast::Expr],
        projection: &[ast::SelectItem],
        ctx: &Ctx,
    ) -> Result<(Vec<Expr>, Option<GroupingSets>)> {
        use ast::Expr as A;
        let mut group: Vec<Expr> = Vec::new();
        let mut keys: Vec<String> = Vec::new();
        let mut sets: Vec<Vec<usize>> = vec![vec![]];
        let mut any_sets = false;
        for item in list {
            let item_sets: Vec<Vec<&ast::Expr>> = match item {
                A::Rollup(lists) => {
                    (0..=lists.len()).rev().map(|n| lists[..n].iter().flatten().collect()).collect()
                }
                A::Cube(lists) => {
                    if lists.len() > 12 {
                        return Err(Error::other("54011", "CUBE is limited to 12 elements"));
                    }
                    // Every subset, the largest first, as PostgreSQL
                    // orders them.
                    let mut subsets: Vec<u32> = (0..1u32 << lists.len()).collect();
                    subsets.sort_by_key(|m| std::cmp::Reverse(m.count_ones()));
                    subsets
                        .into_iter()
                        .map(|m| {
                            lists
                                .iter()
                                .enumerate()
                                .filter(|(i, _)| m & (1 << i) != 0)
                                .flat_map(|(_, l)| l)
                                .collect()
                        })
                        .collect()
                }
                A::GroupingSets(lists) => lists.iter().map(|l| l.iter().collect()).collect(),
                e => vec![vec![e]],
            };
            any_sets |= matches!(item, A::Rollup(_) | A::Cube(_) | A::GroupingSets(_));
            let mut bound = Vec::with_capacity(item_sets.len());
            for set in item_sets {
                let mut positions = Vec::new();
                for e in set {
                    let x = self.group_expr(e, projection, ctx)?;
                    let at = intern(&mut keys, &mut group, format!("{x:?}"), x);
                    if !positions.contains(&at) {
                        positions.push(at);
                    }
                }
                bound.push(positions);
            }
            if sets.len().saturating_mul(bound.len()) > 4096 {
                return Err(Error::other("54001", "too many grouping sets present"));
            }
            sets = sets
                .iter()
                .flat_map(|a| {
                    bound.iter().map(move |b| {
                        let mut s = a.clone();
                        s.extend(b.iter().filter(|i| !a.contains(i)));
                        s
                    })
                })
                .collect();
        }
        if !any_sets {
            return Ok((group, None));
        }
        // The set-number column: a placeholder no expression binds to.
        group.push(Expr::Param(usize::MAX));
        Ok((group, Some(sets)))
    }

    /// A GROUP BY item: an output column number, an output alias, or an
    /// expression over the FROM scope.
    fn group_expr(&mut self, g: &ast::Expr, projection: &[ast::SelectItem], ctx: &Ctx) -> Result<Expr> {
        if let ast::Expr::Value(v) = g {
            if let ast::Value::Number(n, _) = &v.value {
                let i: usize =
                    n.parse().map_err(|_| Error::Syntax("non-integer constant in GROUP BY".to_string()))?;
                return match projection.get(i.wrapping_sub(1)) {
                    Some(
                        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. },
                    ) => Ok(self.expr(e, ctx)?.0),
                    _ => Err(Error::other("42P10", format!("GROUP BY position {i} is not in select list"))),
                };
            }
        }
        match self.expr(g, ctx) {
            Ok((e, _)) => Ok(e),
            Err(err) => {
                if let ast::Expr::Identifier(id) = g {
                    let name = ident(id);
                    for p in projection {
                        if let ast::SelectItem::ExprWithAlias { expr, alias } = p {
                            if ident(alias) == name {
                                return Ok(self.expr(expr, ctx)?.0);
                            }
                        }
                    }
                }
                Err(err)
            }
        }
    }

    /// An ORDER BY (or DISTINCT ON: `clause`) item naming an output column
    /// (by number or alias). A name that several output columns carry is
    /// ambiguous (42702), as in PostgreSQL, unless they all compute the same
    /// expression (`exprs`, the select list, where known).
    fn output_ref(
        &mut self,
        e: &ast::Expr,
        cols: &[OutputColumn],
        exprs: Option<&[Expr]>,
        clause: &str,
    ) -> Result<Option<usize>> {
        match e {
            ast::Expr::Value(v) => {
                if let ast::Value::Number(n, _) = &v.value {
                    let i: usize = n.parse().unwrap_or(0);
                    if i == 0 || i > cols.len() {
                        return Err(Error::other(
                            "42P10",
                            format!("ORDER BY position {n} is not in select list"),
                        ));
                    }
                    return Ok(Some(i - 1));
                }
                Ok(None)
            }
            ast::Expr::Identifier(id) => {
                let name = ident(id);
                let hits: Vec<usize> =
                    cols.iter().enumerate().filter(|(_, c)| c.name == name).map(|(i, _)| i).collect();
                if let [first, rest @ ..] = hits.as_slice() {
                    let same = |i: usize| {
                        exprs.is_some_and(|x| {
                            x.get(i).map(|e| format!("{e:?}")) == x.get(*first).map(|e| format!("{e:?}"))
                        })
                    };
                    if rest.iter().any(|&i| !same(i)) {
                        return Err(Error::other("42702", format!("{clause} \"{name}\" is ambiguous")));
                    }
                }
                Ok(hits.first().copied())
            }
            _ => Ok(None),
        }
    }

    fn sort_keys(
        &mut self,
        order: &[&ast::OrderByExpr],
        cols: &[OutputColumn],
        ctx: &Ctx,
    ) -> Result<Vec<SortKey>> {
        let mut keys = Vec::new();
        for o in order {
            let e = match self.output_ref(&o.expr, cols, None, "ORDER BY")? {
                Some(i) => Expr::Column(i),
                None => self.expr(&o.expr, ctx)?.0,
            };
            keys.push(sort_key(e, o));
        }
        Ok(keys)
    }

    /// FROM `items` joined and filtered by `selection`: the plan and its
    /// scope (UPDATE ... FROM and DELETE ... USING).
    pub(super) fn joined(
        &mut self,
        items: &[ast::TableWithJoins],
        selection: Option<&ast::Expr>,
    ) -> Result<(Plan, Scope)> {
        let steps = self.from(items)?;
        let (plan, scope, _) = self.join_all(steps, selection, None)?;
        Ok((plan, scope))
    }

    fn from(&mut self, from: &[ast::TableWithJoins]) -> Result<Vec<Step>> {
        let mut steps = Vec::new();
        let left =
            |steps: &[Step]| steps.iter().fold(Scope::default(), |s, st: &Step| s.concat(&st.item.scope));
        for twj in from {
            let item = match &twj.relation {
                // unnest() in FROM reads the items before it, as every
                // function call in FROM may (an implicit LATERAL).
                ast::TableFactor::UNNEST { .. } if !steps.is_empty() => {
                    self.lateral_factor(&twj.relation, left(&steps))?
                }
                r if !steps.is_empty() && calls_json_set(r) => self.lateral_factor(r, left(&steps))?,
                relation => self.factor(relation)?,
            };
            steps.push(Step { item, kind: JoinKind::Inner, on: None });
            for j in &twj.joins {
                let item = match &j.relation {
                    ast::TableFactor::Derived { lateral: true, subquery, alias, .. } => {
                        self.lateral(subquery, alias.as_ref(), left(&steps))?
                    }
                    ast::TableFactor::UNNEST { .. } => self.lateral_factor(&j.relation, left(&steps))?,
                    r if calls_json_set(r) => self.lateral_factor(r, left(&steps))?,
                    relation => self.factor(relation)?,
                };
                let (kind, c, _) = match &j.join_operator {
                    ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => (JoinKind::Inner, c, false),
                    ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => {
                        (JoinKind::Left, c, false)
                    }
                    ast::JoinOperator::Right(c) | ast::JoinOperator::RightOuter(c) => {
                        (JoinKind::Right, c, true)
                    }
                    ast::JoinOperator::FullOuter(c) => (JoinKind::Full, c, false),
                    ast::JoinOperator::CrossJoin(c) => (JoinKind::Inner, c, false),
                    other => return Err(Error::unsupported(format!("join {other:?}"))),
                };
                let mut item = item;
                let using: Vec<String> = match c {
                    ast::JoinConstraint::Using(cols) => cols
                        .iter()
                        .map(|c| crate::names::object_parts(c).map(|p| p.join(".")))
                        .collect::<Result<_>>()?,
                    // NATURAL: the names both sides have.
                    ast::JoinConstraint::Natural => {
                        let mut names = Vec::new();
                        for st in &steps {
                            for x in st.item.scope.cols.iter().filter(|x| !x.hidden && !x.merged) {
                                if item.scope.cols.iter().any(|y| !y.hidden && y.name == x.name)
                                    && !names.contains(&x.name)
                                {
                                    names.push(x.name.clone());
                                }
                            }
                        }
                        names
                    }
                    _ => vec![],
                };
                let on = match c {
                    ast::JoinConstraint::On(e) => Some(e.clone()),
                    ast::JoinConstraint::None => None,
                    ast::JoinConstraint::Using(_) | ast::JoinConstraint::Natural => {
                        // USING (a, b): left.a = right.a AND ...; the
                        // pair then reads as one column (the right's for a
                        // RIGHT JOIN, the left's otherwise) unqualified and
                        // in `*`.
                        let mut parts = Vec::new();
                        self.using_joins += 1;
                        let join = self.using_joins;
                        for (at, name) in using.iter().enumerate() {
                            let left_col = steps
                                .iter_mut()
                                .flat_map(|st| st.item.scope.cols.iter_mut())
                                .find(|x| &x.name == name && !x.merged)
                                .ok_or_else(|| Error::UndefinedColumn(format!("\"{name}\"")))?;
                            let lrel = left_col.rel.clone().unwrap_or_default();
                            if kind == JoinKind::Right {
                                left_col.merged = true;
                            } else {
                                left_col.lead = Some((join, at as u32));
                            }
                            let right_col = item
                                .scope
                                .cols
                                .iter_mut()
                                .find(|x| &x.name == name)
                                .ok_or_else(|| Error::UndefinedColumn(format!("\"{name}\"")))?;
                            let rrel = right_col.rel.clone().unwrap_or_default();
                            // A FULL JOIN's pair would need COALESCE: both
                            // stay visible.
                            match kind {
                                JoinKind::Inner | JoinKind::Left => right_col.merged = true,
                                JoinKind::Right => right_col.lead = Some((join, at as u32)),
                                _ => {}
                            }
                            let quoted = |s: &str| ast::Ident::with_quote('"', s);
                            parts.push(ast::Expr::BinaryOp {
                                left: Box::new(ast::Expr::CompoundIdentifier(vec![
                                    quoted(&lrel),
                                    quoted(name),
                                ])),
                                op: ast::BinaryOperator::Eq,
                                right: Box::new(ast::Expr::CompoundIdentifier(vec![
                                    quoted(&rrel),
                                    quoted(name),
                                ])),
                            });
                        }
                        parts.into_iter().reduce(|a, b| ast::Expr::BinaryOp {
                            left: Box::new(a),
                            op: ast::BinaryOperator::And,
                            right: Box::new(b),
                        })
                    }
                };
                steps.push(Step { item, kind, on });
            }
        }
        Ok(steps)
    }

    fn factor(&mut self, f: &ast::TableFactor) -> Result<Item> {
        match f {
            ast::TableFactor::Table { name, alias, args: None, .. } => {
                let parts = crate::names::object_parts(name)?;
                let alias_name = alias
                    .as_ref()
                    .map(|a| ident(&a.name))
                    .unwrap_or_else(|| parts.last().cloned().unwrap_or_default());
                if parts.len() == 1 {
                    if let Some((_, plan, cols)) = self.ctes.iter().rev().find(|(n, _, _)| *n == parts[0]) {
                        if cols.is_empty() && matches!(plan, Plan::WorkTable { .. }) {
                            return Err(Error::other(
                                "0A000",
                                format!("WITH query \"{}\" does not have a RETURNING clause", parts[0]),
                            ));
                        }
                        let mut cols = cols.clone();
                        rename_columns(&mut cols, alias.as_ref());
                        return Ok(Item {
                            plan: plan.clone(),
                            scope: Scope::of(&alias_name, &cols),
                            base: None,
                            lateral: false,
                        });
                    }
                }
                if let Some(t) = self.system_table(&parts)? {
                    let mut cols = t.columns();
                    rename_columns(&mut cols, alias.as_ref());
                    // Each row ends with the system column `tableoid`, as
                    // pg_dump reads it from every catalog.
                    let mut scope = Scope::of(&alias_name, &cols);
                    scope.cols.push(super::bind::ScopeCol {
                        rel: Some(alias_name.clone()),
                        name: "tableoid".into(),
                        ty: Some(DataType::Integer),
                        hidden: true,
                        merged: false,
                        lead: None,
                        scalar_row: false,
                    });
                    return Ok(Item { plan: Plan::System(t), scope, base: None, lateral: false });
                }
                let info = match self.table_name(name).and_then(|n| self.catalog.table(&n)) {
                    Err(Error::UndefinedTable(t)) => {
                        if let Some(def) = self.view_named(&parts) {
                            self.read.push(def.name.clone());
                            self.need(ObjectKind::Relation, &def.name, SELECT, false);
                            let (plan, mut cols) = self.view_query(&def)?;
                            rename_columns(&mut cols, alias.as_ref());
                            let scope = Scope::of(&alias_name, &cols);
                            return Ok(Item { plan, scope, base: None, lateral: false });
                        }
                        match self.sequence_relation(&parts, &alias_name, alias.as_ref())? {
                            Some(item) => return Ok(item),
                            None => return Err(Error::UndefinedTable(t)),
                        }
                    }
                    r => r?,
                };
                let engine = info.table.name().to_string();
                if let Some(v) = self.catalog.view_if_any(&engine).filter(|v| !v.populated) {
                    return Err(Error::Raised {
                        code: "55000",
                        message: format!(
                            "materialized view \"{}\" has not been populated",
                            parts.last().cloned().unwrap_or(v.name)
                        ),
                        detail: None,
                        hint: Some("Use the REFRESH MATERIALIZED VIEW command.".into()),
                    });
                }
                self.need(ObjectKind::Relation, &engine, SELECT, false);
                self.read.push(engine);
                let mut cols = OutputColumn::of_table(info.table.columns());
                rename_columns(&mut cols, alias.as_ref());
                let keys = self.hidden_keys(&info)?;
                let access = Access {
                    keys,
                    table: info.table.clone(),
                    alias: alias_name.clone(),
                    path: AccessPath::Scan,
                    filter: None,
                    bound_check: None,
                    cond_text: String::new(),
                    filter_text: String::new(),
                    columns: None,
                    consumer_columns: None,
                };
                Ok(Item {
                    plan: Plan::Access(access.clone()),
                    scope: Scope::of(&alias_name, &cols),
                    base: Some(access),
                    lateral: false,
                })
            }
            ast::TableFactor::Table { name, alias, args: Some(args), .. } => {
                self.table_function(name, &args.args, alias.as_ref())
            }
            ast::TableFactor::Function { name, args, alias, .. } => {
                self.table_function(name, args, alias.as_ref())
            }
            ast::TableFactor::Derived { lateral: false, subquery, alias, .. } => {
                let (plan, mut cols) = self.query(subquery)?;
                let Some(a) = alias else {
                    return Err(Error::Syntax("subquery in FROM must have an alias".into()));
                };
                rename_columns(&mut cols, Some(a));
                Ok(Item { plan, scope: Scope::of(&ident(&a.name), &cols), base: None, lateral: false })
            }
            ast::TableFactor::NestedJoin { table_with_joins, alias: None } => {
                let steps = self.from(std::slice::from_ref(table_with_joins))?;
                let (plan, scope, _) = self.join_all(steps, None, None)?;
                Ok(Item { plan, scope, base: None, lateral: false })
            }
            ast::TableFactor::UNNEST { alias, array_exprs, with_offset: false, with_ordinality, .. } => {
                self.unnest(array_exprs, *with_ordinality, alias.as_ref())
            }
            other => Err(Error::unsupported(format!("FROM item {other}"))),
        }
    }

    /// `unnest(a, b, ...) [WITH ORDINALITY]` in FROM. An array gives its
    /// element type; array text (the catalog's array columns, see
    /// `functions::array_text`) gives text elements.
    fn unnest(
        &mut self,
        arrays: &[ast::Expr],
        ordinality: bool,
        alias: Option<&ast::TableAlias>,
    ) -> Result<Item> {
        let empty = Scope::default();
        let (mut args, mut types) = (Vec::new(), Vec::new());
        for a in arrays {
            let (e, t) = self.expr(a, &Ctx::plain(&empty))?;
            let ty = match t.as_ref().and_then(DataType::element) {
                Some(elem) => elem.clone(),
                None => super::system::element_type(a)?.unwrap_or(DataType::Text),
            };
            args.push(e);
            types.push(ty);
        }
        let mut cols: Vec<OutputColumn> =
            types.iter().map(|t| OutputColumn { name: "unnest".into(), ty: Some(t.clone()) }).collect();
        if ordinality {
            cols.push(OutputColumn { name: "ordinality".into(), ty: Some(DataType::BigInt) });
        }
        // One array with a bare alias: its column takes the alias's name.
        if let (Some(a), [only, ..]) =
            (alias.filter(|a| a.columns.is_empty() && arrays.len() == 1), &mut cols[..])
        {
            only.name = ident(&a.name);
        }
        rename_columns(&mut cols, alias);
        let alias_name = alias.map(|a| ident(&a.name)).unwrap_or_else(|| "unnest".into());
        let plan = Plan::Unnest { args, types, ordinality };
        Ok(Item { plan, scope: Scope::of(&alias_name, &cols), base: None, lateral: false })
    }

    /// A JSON set-returning function in FROM (`jsonb_each(doc)`): the rows
    /// of the arrays its columns' functions return, side by side.
    fn json_set_factor(
        &mut self,
        name: &str,
        args: &[ast::FunctionArg],
        alias: Option<&ast::TableAlias>,
    ) -> Result<Item> {
        let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))] = args else {
            return Err(Error::UndefinedFunction(format!("{name} with {} arguments", args.len())));
        };
        let empty = Scope::default();
        let arg = self.expr(e, &Ctx::plain(&empty))?;
        let Some((calls, set_cols)) = self.json_set_call(name, arg)? else {
            return Err(Error::UndefinedFunction(name.to_string()));
        };
        let mut cols: Vec<OutputColumn> =
            set_cols.iter().map(|c| OutputColumn { name: c.name.into(), ty: Some(c.ty.clone()) }).collect();
        // `*_object_keys` has no named output column: a bare alias names it
        // (the others name theirs `key` and `value`, as PostgreSQL does).
        if let (Some(a), [only]) = (alias.filter(|a| a.columns.is_empty()), &mut cols[..]) {
            if name.ends_with("object_keys") {
                only.name = ident(&a.name);
            }
        }
        rename_columns(&mut cols, alias);
        let alias_name = alias.map(|a| ident(&a.name)).unwrap_or_else(|| name.to_string());
        let types = set_cols.into_iter().map(|c| c.ty).collect();
        let plan = Plan::Unnest { args: calls, types, ordinality: false };
        let mut scope = Scope::of(&alias_name, &cols);
        if let [only] = &mut scope.cols[..] {
            only.scalar_row = true;
        }
        Ok(Item { plan, scope, base: None, lateral: false })
    }

    /// `pg_options_to_table(options)`: each `name=value` of an options
    /// array (`reloptions`, `attfdwoptions`) as a row of `option_name`,
    /// `option_value`. Bound as the query it is the same as.
    fn options_to_table(
        &mut self,
        args: &[ast::FunctionArg],
        alias: Option<&ast::TableAlias>,
    ) -> Result<Item> {
        let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(options))] = args else {
            return Err(Error::UndefinedFunction(format!(
                "pg_options_to_table with {} arguments",
                args.len()
            )));
        };
        const SAME: &str =
            "SELECT split_part(o, '=', 1) AS option_name, substr(o, strpos(o, '=') + 1) AS option_value \
                            FROM unnest(NULL::text[]) AS options(o)";
        let mut stmts = crate::parser::parse(SAME)?;
        let Some(ast::Statement::Query(mut q)) = stmts.pop() else {
            return Err(Error::other("XX000", "pg_options_to_table: bad template"));
        };
        if let ast::SetExpr::Select(s) = q.body.as_mut() {
            if let Some(ast::TableFactor::UNNEST { array_exprs, .. }) =
                s.from.first_mut().map(|f| &mut f.relation)
            {
                if let Some(ast::Expr::Cast { expr, .. }) = array_exprs.first_mut() {
                    **expr = options.clone();
                }
            }
        }
        let (plan, mut cols) = self.query(&q)?;
        rename_columns(&mut cols, alias);
        let alias_name = alias.map(|a| ident(&a.name)).unwrap_or_else(|| "pg_options_to_table".into());
        Ok(Item { plan, scope: Scope::of(&alias_name, &cols), base: None, lateral: false })
    }

    /// A sequence named by `parts`, read as a relation: one row of
    /// `last_value`, `log_cnt` (always 0: values are reserved 1,024 at a
    /// time instead of logged) and `is_called`, as of when the statement
    /// runs.
    fn sequence_relation(
        &self,
        parts: &[String],
        alias_name: &str,
        alias: Option<&ast::TableAlias>,
    ) -> Result<Option<Item>> {
        let Some(name) = self.sequence_named(parts) else { return Ok(None) };
        self.need(ObjectKind::Sequence, &name, SELECT, false);
        let mut cols = vec![
            OutputColumn { name: "last_value".into(), ty: Some(DataType::BigInt) },
            OutputColumn { name: "log_cnt".into(), ty: Some(DataType::BigInt) },
            OutputColumn { name: "is_called".into(), ty: Some(DataType::Boolean) },
        ];
        rename_columns(&mut cols, alias);
        let row = vec![
            Expr::Sequence(super::expr::SeqOp::LastValue, name.clone(), vec![]),
            Expr::Literal(centum_types::Value::BigInt(0)),
            Expr::Sequence(super::expr::SeqOp::IsCalled, name, vec![]),
        ];
        Ok(Some(Item {
            plan: Plan::Values { rows: vec![row] },
            scope: Scope::of(alias_name, &cols),
            base: None,
            lateral: false,
        }))
    }

    /// A virtual catalog table named by `parts`: qualified with
    /// `pg_catalog`, `information_schema` or `centum`, or unqualified when no user
    /// table of that name is on the search path.
    fn system_table(&self, parts: &[String]) -> Result<Option<SystemTable>> {
        match parts {
            [s, t] | [_, s, t] if s == "pg_catalog" || s == "information_schema" || s == "centum" => {
                match SystemTable::lookup(Some(s), t) {
                    Some(found) => Ok(Some(found)),
                    None if s == "information_schema" => Err(Error::UndefinedTable(format!("{s}.{t}"))),
                    None => Ok(None),
                }
            }
            [t] => {
                let user = self
                    .search_path
                    .iter()
                    .any(|s| self.catalog.db().table(&crate::names::qualify(s, t)).is_ok());
                Ok(if user { None } else { SystemTable::lookup(None, t) })
            }
            _ => Ok(None),
        }
    }

    /// A FROM item bound with the items before it (`left`) as its
    /// innermost outer scope, so it may read their row.
    fn lateral_factor(&mut self, relation: &ast::TableFactor, left: Scope) -> Result<Item> {
        self.outer.push(left);
        let bound = self.factor(relation);
        self.outer.pop();
        Ok(Item { lateral: true, ..bound? })
    }

    /// `LATERAL (subquery)`: bound with the items before it as its
    /// innermost outer scope, so it reads their row.
    fn lateral(&mut self, q: &ast::Query, alias: Option<&ast::TableAlias>, left: Scope) -> Result<Item> {
        self.outer.push(left);
        let bound = self.query(q);
        self.outer.pop();
        let (plan, mut cols) = bound?;
        let Some(a) = alias else {
            return Err(Error::Syntax("subquery in FROM must have an alias".into()));
        };
        rename_columns(&mut cols, Some(a));
        Ok(Item { plan, scope: Scope::of(&ident(&a.name), &cols), base: None, lateral: true })
    }

    /// A base table's alias and its primary key's columns.
    fn primary_key(&self, base: &Access) -> Option<(String, Vec<String>)> {
        let info = self.catalog.table(&base.table.name()).ok()?;
        let pk = info.meta.primary_key.as_ref()?;
        let columns = info.table.def().indexes.iter().find(|i| &i.name == pk)?.columns.clone();
        Some((base.alias.clone(), columns))
    }

    /// A logical decoding function in FROM: its arguments as text (the
    /// change count as an integer, a creation's flags as booleans), the
    /// options after them as VARIADIC text pairs.
    fn decoding_function(
        &mut self,
        call: crate::replication::SqlCall,
        args: &[ast::FunctionArg],
        alias: Option<&ast::TableAlias>,
    ) -> Result<Item> {
        let empty = Scope::default();
        let mut exprs = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) = a else {
                return Err(Error::unsupported(format!("argument {a} of {}", call.name())));
            };
            let ty = match (call, i) {
                (crate::replication::SqlCall::Changes { .. }, 2) => DataType::Integer,
                (crate::replication::SqlCall::CreateSlot, 2 | 3) => DataType::Boolean,
                _ => DataType::Text,
            };
            let t = self.expr(e, &Ctx::plain(&empty))?;
            exprs.push(self.coerce_untyped(t, &Some(ty))?.0);
        }
        let needed = match call {
            crate::replication::SqlCall::CreateSlot => 2,
            crate::replication::SqlCall::Changes { .. } => 3,
        };
        if exprs.len() < needed {
            return Err(Error::UndefinedFunction(format!("{} with {} arguments", call.name(), exprs.len())));
        }
        let mut cols: Vec<OutputColumn> = call
            .columns()
            .into_iter()
            .map(|(n, ty)| OutputColumn { name: n.to_string(), ty: Some(ty) })
            .collect();
        rename_columns(&mut cols, alias);
        let alias_name = alias.map(|a| ident(&a.name)).unwrap_or_else(|| call.name().to_string());
        Ok(Item {
            plan: Plan::Decoding { call, args: exprs },
            scope: Scope::of(&alias_name, &cols),
            base: None,
            lateral: false,
        })
    }

    fn table_function(
        &mut self,
        name: &ast::ObjectName,
        args: &[ast::FunctionArg],
        alias: Option<&ast::TableAlias>,
    ) -> Result<Item> {
        let name = crate::names::object_parts(name)?.last().cloned().unwrap_or_default();
        if name == "pg_partition_ancestors" {
            // No relation is a partition: no rows.
            let mut cols = vec![
                OutputColumn { name: name.clone(), ty: Some(DataType::Integer) },
                OutputColumn { name: "ordinality".into(), ty: Some(DataType::BigInt) },
            ];
            cols.truncate(if alias.is_some_and(|a| a.columns.len() == 2) { 2 } else { 1 });
            rename_columns(&mut cols, alias);
            let alias_name = alias.map(|a| ident(&a.name)).unwrap_or(name);
            return Ok(Item {
                plan: Plan::Values { rows: vec![] },
                scope: Scope::of(&alias_name, &cols),
                base: None,
                lateral: false,
            });
        }
        if name == "pg_get_publication_tables" {
            let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(arg))] = args else {
                return Err(Error::UndefinedFunction(name));
            };
            let calls = crate::system::functions::PUBLICATION_TABLES
                .iter()
                .map(|(_, f)| crate::parser::parse_expression(&format!("pg_catalog.{f}({arg})")))
                .collect::<Result<Vec<_>>>()?;
            let named = ast::TableAlias {
                name: ast::Ident::new(&name),
                columns: crate::system::functions::PUBLICATION_TABLES
                    .iter()
                    .map(|(c, _)| ast::TableAliasColumnDef::from_name(*c))
                    .collect(),
                explicit: true,
                at: None,
            };
            let alias = match alias {
                Some(a) if a.columns.is_empty() => {
                    ast::TableAlias { name: a.name.clone(), columns: named.columns.clone(), ..named.clone() }
                }
                Some(a) => a.clone(),
                None => named,
            };
            return self.unnest(&calls, false, Some(&alias));
        }
        if name == "pg_options_to_table" {
            return self.options_to_table(args, alias);
        }
        if let Some(call) = crate::replication::SqlCall::named(&name) {
            return self.decoding_function(call, args, alias);
        }
        // A set of text: the elements of the array its scalar form returns.
        if name == LISTENING_CHANNELS {
            if !args.is_empty() {
                return Err(Error::UndefinedFunction(name));
            }
            let call = crate::parser::parse_expression("pg_catalog.pg_listening_channels()")?;
            let named = ast::TableAlias {
                name: ast::Ident::new(LISTENING_CHANNELS),
                columns: vec![],
                explicit: true,
                at: None,
            };
            return self.unnest(&[call], false, Some(alias.unwrap_or(&named)));
        }
        // `pg_catalog.unnest(a)`: sqlparser reads only a bare UNNEST as such.
        if name == "unnest" {
            let mut arrays = Vec::new();
            for a in args {
                match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => arrays.push(e.clone()),
                    other => return Err(Error::unsupported(format!("unnest argument {other}"))),
                }
            }
            return self.unnest(&arrays, false, alias);
        }
        if super::json::set_function(&name).is_some() {
            return self.json_set_factor(&name, args, alias);
        }
        if name != "generate_series" {
            let empty = Scope::default();
            let (typed, names) = self.named_args(args, &Ctx::plain(&empty))?;
            let Some((r, place)) = self.find_routine(&name, &typed, &names, false)? else {
                return Err(Error::UndefinedFunction(name));
            };
            let (plan, mut cols) = self.routine_scan(r, &place, typed)?;
            rename_columns(&mut cols, alias);
            let alias_name = alias.map(|a| ident(&a.name)).unwrap_or(name);
            return Ok(Item { plan, scope: Scope::of(&alias_name, &cols), base: None, lateral: false });
        }
        let args: Vec<&ast::Expr> = args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(e),
                _ => Err(Error::unsupported("named function arguments")),
            })
            .collect::<Result<_>>()?;
        if !(2..=3).contains(&args.len()) {
            return Err(Error::UndefinedFunction("generate_series with this many arguments".into()));
        }
        let empty = Scope::default();
        let ctx = Ctx::plain(&empty);
        let mut bound = Vec::new();
        // The series' type comes from start and stop (a step may be an
        // interval): integers widen, a date or timestamp sets the kind.
        let mut ty: Option<DataType> = None;
        for (i, a) in args.into_iter().enumerate() {
            let t = self.expr(a, &ctx)?;
            if let (Some(t), true) = (&t.1, i < 2) {
                ty = Some(match ty {
                    None => t.clone(),
                    Some(prev) => super::bind::wider(&prev, t).unwrap_or(DataType::BigInt),
                });
            }
            bound.push(t);
        }
        let mut ty = match ty {
            Some(t) if super::bind::is_int(&t) => super::bind::wider(&t, &DataType::Integer).unwrap_or(t),
            Some(t) => t,
            None => DataType::Integer,
        };
        let mut exprs = Vec::new();
        if matches!(ty, DataType::Date | DataType::Timestamp | DataType::TimestampTz) {
            // Timestamps step by an interval; dates count as timestamptz,
            // as PostgreSQL resolves them.
            if ty == DataType::Date {
                ty = DataType::TimestampTz;
            }
            if bound.len() != 3 {
                return Err(Error::UndefinedFunction(format!("generate_series({ty}, {ty})")));
            }
            let step = bound.pop().map(|s| self.coerce_untyped(s, &Some(DataType::Interval))).transpose()?;
            for t in bound {
                let (e, from) = self.coerce_untyped(t, &Some(ty.clone()))?;
                exprs.push(if from.as_ref() == Some(&ty) { e } else { Expr::Cast(Box::new(e), ty.clone()) });
            }
            match step {
                Some((e, Some(DataType::Interval))) => exprs.push(e),
                other => {
                    let t = other.and_then(|s| s.1).map_or("unknown".into(), |t| t.sql_name());
                    return Err(Error::UndefinedFunction(format!("generate_series({ty}, {ty}, {t})")));
                }
            }
        } else if !matches!(ty, DataType::SmallInt | DataType::Integer | DataType::BigInt) {
            return Err(Error::unsupported(format!("generate_series over {}", ty.sql_name())));
        } else {
            for t in bound {
                exprs.push(self.coerce_untyped(t, &Some(DataType::BigInt))?.0);
            }
        }
        let alias_name = alias.map(|a| ident(&a.name)).unwrap_or_else(|| "generate_series".into());
        let col_name = alias
            .and_then(|a| a.columns.first().map(|c| ident(&c.name)))
            .unwrap_or_else(|| alias.map(|a| ident(&a.name)).unwrap_or_else(|| "generate_series".into()));
        let cols = vec![OutputColumn { name: col_name, ty: Some(ty.clone()) }];
        let plan = Plan::Project {
            input: Box::new(Plan::Series { args: exprs }),
            exprs: vec![Expr::Cast(Box::new(Expr::Column(0)), ty)],
        };
        Ok(Item { plan, scope: Scope::of(&alias_name, &cols), base: None, lateral: false })
    }

    /// Joins the FROM items, in the order [`join_order`] picks when they
    /// are a plain inner join list tied together by WHERE, else as written.
    /// Returns the plan, its scope, and the order it delivers, if one was
    /// asked for and met. The plan's columns are in the order written
    /// whatever the join order.
    fn join_all(
        &mut self,
        steps: Vec<Step>,
        selection: Option<&ast::Expr>,
        want_order: Option<(&[&ast::OrderByExpr], bool)>,
    ) -> Result<(Plan, Scope, Option<()>)> {
        let plain =
            steps.iter().all(|s| matches!(s.kind, JoinKind::Inner) && s.on.is_none() && !s.item.lateral);
        let order = match selection {
            Some(w) if plain => {
                let infos: Vec<join_order::ItemInfo> = steps
                    .iter()
                    .map(|s| join_order::ItemInfo {
                        scope: &s.item.scope,
                        table: s.item.base.as_ref().map(|b| &b.table),
                    })
                    .collect();
                join_order::choose(&infos, w)
            }
            _ => None,
        };
        let Some(order) = order else {
            return self.join_steps(steps, selection, want_order);
        };
        let written = steps.iter().fold(Scope::default(), |s, st| s.concat(&st.item.scope));
        // Where each item's columns start in the reordered row.
        let mut starts = vec![0; steps.len()];
        let mut at = 0;
        for &i in &order {
            starts[i] = at;
            at += steps[i].item.scope.cols.len();
        }
        let exprs = steps
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                let start = starts[i];
                (0..s.item.scope.cols.len()).map(move |c| Expr::Column(start + c))
            })
            .collect();
        let mut slots: Vec<Option<Step>> = steps.into_iter().map(Some).collect();
        let reordered = order.iter().filter_map(|&i| slots[i].take()).collect();
        let (plan, _, delivered) = self.join_steps(reordered, selection, want_order)?;
        Ok((Plan::Project { input: Box::new(plan), exprs }, written, delivered))
    }

    /// Joins the FROM items left-deep in the order given, placing each
    /// WHERE conjunct at the first step where it can be evaluated.
    fn join_steps(
        &mut self,
        steps: Vec<Step>,
        selection: Option<&ast::Expr>,
        want_order: Option<(&[&ast::OrderByExpr], bool)>,
    ) -> Result<(Plan, Scope, Option<()>)> {
        if steps.is_empty() {
            let empty = Scope::default();
            let mut plan = Plan::Values { rows: vec![vec![]] };
            if let Some(w) = selection {
                let t = self.expr(w, &Ctx::plain(&empty))?;
                let pred = self.coerce_untyped(t, &Some(DataType::Boolean))?.0;
                plan = Plan::Filter { input: Box::new(plan), pred };
            }
            return Ok((plan, empty, None));
        }
        // The full scope, and each step's column range in it.
        let mut full = Scope::default();
        let mut ranges = Vec::new();
        for s in &steps {
            let start = full.cols.len();
            full = full.concat(&s.item.scope);
            ranges.push(start..full.cols.len());
        }
        let outer_joins = steps.iter().any(|s| matches!(s.kind, JoinKind::Right | JoinKind::Full));
        let mut pending: Vec<(Expr, String)> = Vec::new();
        if let Some(w) = selection {
            if has_aggregate(w) {
                return Err(Error::Grouping("aggregate functions are not allowed in WHERE".into()));
            }
            let t = self.expr(w, &Ctx::plain(&full))?;
            if !matches!(t.1, None | Some(DataType::Boolean)) {
                return Err(Error::mismatch(format!(
                    "argument of WHERE must be type boolean, not type {}",
                    t.1.as_ref().map_or("unknown".into(), |t| t.sql_name())
                )));
            }
            let pred = self.coerce_untyped(t, &Some(DataType::Boolean))?.0;
            let texts = conjunct_texts(w);
            let parts = pred.conjuncts();
            let same = texts.len() == parts.len();
            for (i, p) in parts.into_iter().enumerate() {
                let text = if same { texts[i].clone() } else { String::new() };
                pending.push((p, text));
            }
        }
        // Step of a conjunct: the last step whose columns it reads.
        let step_of = |e: &Expr| -> usize {
            e.columns_used()
                .iter()
                .map(|c| ranges.iter().position(|r| r.contains(c)).unwrap_or(0))
                .max()
                .unwrap_or(0)
        };
        let walk = want_order.is_some_and(|(_, walk)| walk);
        let (order_keys, sorted) = match want_order {
            Some((order, _)) => {
                let mut keys = Vec::new();
                for o in order {
                    match self.expr(&o.expr, &Ctx::plain(&full)) {
                        Ok((Expr::Column(c), _)) => keys.push((
                            c,
                            matches!(o.options.sort, Some(ast::OrderBySort::Desc)),
                            o.options.nulls_first,
                        )),
                        _ => {
                            keys.clear();
                            break;
                        }
                    }
                }
                (keys, true)
            }
            None => (vec![], false),
        };
        let mut delivered = None;
        let mut plan: Option<Plan> = None;
        let mut scope = Scope::default();
        let outer_w = self.outer_width();
        for (i, step) in steps.into_iter().enumerate() {
            let range = ranges[i].clone();
            let here: Vec<(Expr, String)> = if outer_joins {
                if i == ranges.len() - 1 {
                    std::mem::take(&mut pending)
                } else {
                    vec![]
                }
            } else {
                let (mine, rest): (Vec<_>, Vec<_>) = pending.into_iter().partition(|(e, _)| step_of(e) == i);
                pending = rest;
                mine
            };
            let mut on: Vec<(Expr, String)> = Vec::new();
            if let Some(o) = &step.on {
                let joined = scope.concat(&step.item.scope);
                let t = self.expr(o, &Ctx::plain(&joined))?;
                let pred = self.coerce_untyped(t, &Some(DataType::Boolean))?.0;
                let texts = conjunct_texts(o);
                let parts = pred.conjuncts();
                let same = texts.len() == parts.len();
                for (k, p) in parts.into_iter().enumerate() {
                    on.push((p, if same { texts[k].clone() } else { String::new() }));
                }
            }
            let (join_conds, post): (Conds, Conds) = match step.kind {
                JoinKind::Inner if !outer_joins => (on.into_iter().chain(here).collect(), vec![]),
                _ => (on, here),
            };
            let Some(left) = plan.take() else {
                // The first item: its conditions are its own filter.
                let local: Vec<(Expr, String)> = join_conds.into_iter().chain(post).collect();
                let p = self.leaf(
                    step.item,
                    local,
                    range.start,
                    if sorted { Some((&order_keys, walk)) } else { None },
                    &mut delivered,
                )?;
                scope = full_slice(&full, range);
                plan = Some(p);
                continue;
            };
            let left_w = scope.cols.len();
            let right_w = range.len();
            // Conditions on the right side alone go into its access (not for
            // outer joins' WHERE conditions, which are in `post`).
            let (right_only, cross): (Vec<_>, Vec<_>) = join_conds
                .into_iter()
                .partition(|(e, _)| e.columns_used().iter().all(|c| range.contains(c)) && !has_subquery(e));
            let (cross, right_only) = if matches!(step.kind, JoinKind::Full | JoinKind::Right) {
                // These joins keep unmatched right rows: nothing moves into
                // the right side's access.
                let mut all = cross;
                all.extend(right_only);
                (all, vec![])
            } else {
                let shifted = right_only
                    .into_iter()
                    .map(|(e, t)| (e.shift_columns(-(range.start as isize)), t))
                    .collect();
                (cross, shifted)
            };
            let joined = self.join(
                left,
                step.item,
                cross,
                right_only,
                step.kind,
                left_w,
                right_w,
                range.start,
                outer_w,
            )?;
            scope = scope.concat(&full_slice(&full, range));
            plan = Some(apply_post(joined, post));
        }
        let plan = plan.ok_or_else(|| Error::other("XX000", "empty FROM"))?;
        Ok((plan, scope, delivered))
    }

    /// A leaf with its conditions: a base table picks its access path,
    /// anything else gets a filter.
    fn leaf(
        &mut self,
        item: Item,
        conds: Vec<(Expr, String)>,
        start: usize,
        order: Option<(&OrderKeys, bool)>,
        delivered: &mut Option<()>,
    ) -> Result<Plan> {
        let conds: Vec<(Expr, String)> =
            conds.into_iter().map(|(e, t)| (e.shift_columns(-(start as isize)), t)).collect();
        match item.base {
            Some(base) => {
                let order: Option<Order> = order.filter(|(o, _)| !o.is_empty()).map(|(o, walk)| Order {
                    columns: o.iter().map(|(c, d, n)| (c - start, *d, *n)).collect(),
                    walk,
                });
                let (access, met) = access::choose(base, conds, order.as_ref())?;
                if met {
                    *delivered = Some(());
                }
                Ok(Plan::Access(access))
            }
            None => Ok(apply_post(item.plan, conds)),
        }
    }

    /// Joins `left` with `item`, choosing index nested-loop, hash or plain
    /// nested-loop join.
    #[allow(clippy::too_many_arguments)]
    fn join(
        &mut self,
        left: Plan,
        item: Item,
        cross: Vec<(Expr, String)>,
        right_only: Vec<(Expr, String)>,
        kind: JoinKind,
        left_w: usize,
        right_w: usize,
        start: usize,
        outer_w: usize,
    ) -> Result<Plan> {
        // Equalities between a right column and an expression of the left row.
        let mut params: Vec<(Expr, String)> = Vec::new();
        let mut equi: Vec<(Expr, Expr)> = Vec::new();
        let mut rest: Vec<(Expr, String)> = Vec::new();
        for (e, text) in cross {
            if let Some((l, r)) = split_equi(&e, left_w, start) {
                equi.push((l.clone(), r.clone()));
                if let Expr::Column(rc) = r {
                    // As an index key: left columns become outer columns.
                    let key = l.clone().map(&mut |x| match x {
                        Expr::Column(c) => Expr::Outer(outer_w + c),
                        x => x,
                    });
                    params.push((
                        Expr::Binary(BinOp::Eq, Box::new(Expr::Column(rc - start)), Box::new(key)),
                        text.clone(),
                    ));
                }
                rest.push((e, text));
            } else {
                rest.push((e, text));
            }
        }
        if item.lateral {
            if matches!(kind, JoinKind::Full | JoinKind::Right) {
                return Err(Error::Syntax(
                    "invalid reference to FROM-clause entry: RIGHT or FULL JOIN with LATERAL".into(),
                ));
            }
            let on = Expr::and_all(rest.into_iter().map(|(e, _)| e).collect());
            return Ok(Plan::NestedLoop {
                left: Box::new(left),
                right: Box::new(apply_post(item.plan, right_only)),
                lateral: true,
                kind,
                on,
                right_width: right_w,
            });
        }
        if let (Some(base), true) = (&item.base, !matches!(kind, JoinKind::Full | JoinKind::Right)) {
            let mut conds = right_only.clone();
            conds.extend(params.iter().cloned());
            let (access, _) = access::choose(base.clone(), conds, None)?;
            if !matches!(access.path, AccessPath::Scan) || equi.is_empty() {
                // Index nested loop (or no equality at all: plain nested loop).
                let on = Expr::and_all(rest.into_iter().map(|(e, _)| e).collect());
                return Ok(Plan::NestedLoop {
                    left: Box::new(left),
                    right: Box::new(Plan::Access(access)),
                    lateral: true,
                    kind,
                    on,
                    right_width: right_w,
                });
            }
        }
        // A table's conditions are bound over the whole FROM row, which
        // the left row begins; a derived table was bound on its own.
        let lateral = item.base.is_some();
        let right = match item.base {
            Some(base) => Plan::Access(access::choose(base, right_only, None)?.0),
            None => apply_post(item.plan, right_only),
        };
        if equi.is_empty() {
            if matches!(kind, JoinKind::Full | JoinKind::Right) {
                return Err(Error::Unsupported(
                    "FULL JOIN is only supported with merge-joinable or hash-joinable join conditions".into(),
                ));
            }
            let on = Expr::and_all(rest.into_iter().map(|(e, _)| e).collect());
            return Ok(Plan::NestedLoop {
                left: Box::new(left),
                right: Box::new(right),
                lateral,
                kind,
                on,
                right_width: right_w,
            });
        }
        let (left_keys, right_keys): (Vec<Expr>, Vec<Expr>) =
            equi.into_iter().map(|(l, r)| (l, r.shift_columns(-(start as isize)))).unzip();
        let on = Expr::and_all(rest.into_iter().map(|(e, _)| e).collect());
        Ok(Plan::HashJoin {
            left: Box::new(left),
            right: Box::new(right),
            kind,
            left_keys,
            right_keys,
            on,
            left_width: left_w,
            right_width: right_w,
        })
    }
}

/// Splits `l = r` where one side reads only left columns (< left_w) and the
/// other only right columns (>= start): (left expr, right expr).
fn split_equi(e: &Expr, left_w: usize, start: usize) -> Option<(Expr, Expr)> {
    let Expr::Binary(BinOp::Eq, a, b) = e else { return None };
    if has_subquery(a) || has_subquery(b) {
        return None;
    }
    let side = |x: &Expr| -> Option<bool> {
        let cols = x.columns_used();
        if cols.is_empty() {
            None
        } else if cols.iter().all(|&c| c < left_w) {
            Some(true)
        } else if cols.iter().all(|&c| c >= start) {
            Some(false)
        } else {
            None
        }
    };
    match (side(a), side(b)) {
        (Some(true), Some(false)) => Some(((**a).clone(), (**b).clone())),
        (Some(false), Some(true)) => Some(((**b).clone(), (**a).clone())),
        _ => None,
    }
}

fn has_subquery(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        if matches!(x, Expr::Subquery(..)) {
            found = true;
        }
    });
    found
}

fn apply_post(plan: Plan, conds: Vec<(Expr, String)>) -> Plan {
    match Expr::and_all(conds.into_iter().map(|(e, _)| e).collect()) {
        Some(pred) => Plan::Filter { input: Box::new(plan), pred },
        None => plan,
    }
}

fn full_slice(full: &Scope, r: std::ops::Range<usize>) -> Scope {
    Scope { cols: full.cols[r].to_vec() }
}

fn rename_columns(cols: &mut [OutputColumn], alias: Option<&ast::TableAlias>) {
    if let Some(a) = alias {
        // An index's hidden key columns keep their names.
        let shown = cols.iter_mut().filter(|c| !crate::catalog::is_hidden_column(&c.name));
        for (c, n) in shown.zip(&a.columns) {
            c.name = ident(&n.name);
        }
    }
}

/// The SQL text of each top-level conjunct, for EXPLAIN.
fn conjunct_texts(e: &ast::Expr) -> Vec<String> {
    match e {
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::And, right } => {
            let mut v = conjunct_texts(left);
            v.extend(conjunct_texts(right));
            v
        }
        ast::Expr::Nested(inner)
            if matches!(inner.as_ref(), ast::Expr::BinaryOp { op: ast::BinaryOperator::And, .. }) =>
        {
            conjunct_texts(inner)
        }
        ast::Expr::Between { negated: false, .. } => {
            // Bound as two conjuncts.
            vec![format!("({e})"), String::new()]
        }
        e => vec![format!("({e})")],
    }
}

fn sort_key(expr: Expr, o: &ast::OrderByExpr) -> SortKey {
    let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
    SortKey { expr, desc, nulls_first: o.options.nulls_first.unwrap_or(desc) }
}

/// The name PostgreSQL gives an unaliased output column.
fn column_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(id) => ident(id),
        ast::Expr::CompoundIdentifier(ids) => ids.last().map(ident).unwrap_or_default(),
        ast::Expr::Collate { expr, .. } => column_name(expr),
        ast::Expr::Function(f) => crate::names::function_name(f).unwrap_or_else(|_| "?column?".into()),
        ast::Expr::Cast { expr, data_type, .. } => match expr.as_ref() {
            // A cast of a constant, or of another cast, is named by its type.
            ast::Expr::Value(_)
            | ast::Expr::Cast { .. }
            | ast::Expr::TypedString(_)
            | ast::Expr::Interval(_) => data_type_name(data_type),
            ast::Expr::Nested(inner) if matches!(**inner, ast::Expr::Cast { .. }) => {
                data_type_name(data_type)
            }
            // Otherwise by what it casts, unless that has no name.
            e => match column_name(e) {
                n if n == "?column?" => data_type_name(data_type),
                n => n,
            },
        },
        ast::Expr::Nested(e) => column_name(e),
        ast::Expr::Case { .. } => "case".into(),
        ast::Expr::Exists { .. } => "exists".into(),
        ast::Expr::Subquery(q) => match q.body.as_ref() {
            ast::SetExpr::Select(s) => match s.projection.first() {
                Some(ast::SelectItem::UnnamedExpr(e)) => column_name(e),
                Some(ast::SelectItem::ExprWithAlias { alias, .. }) => ident(alias),
                _ => "?column?".into(),
            },
            _ => "?column?".into(),
        },
        ast::Expr::Extract { .. } => "extract".into(),
        ast::Expr::Substring { shorthand: true, .. } => "substr".into(),
        ast::Expr::Substring { .. } => "substring".into(),
        ast::Expr::Position { .. } => "position".into(),
        ast::Expr::Trim { .. } => "btrim".into(),
        ast::Expr::Ceil { .. } => "ceil".into(),
        ast::Expr::Floor { .. } => "floor".into(),
        ast::Expr::TypedString(ts) => data_type_name(&ts.data_type),
        ast::Expr::Interval(_) => "interval".into(),
        ast::Expr::Array(_) => "array".into(),
        // `a[i]` is named by its array; `t.col[i]` arrives as `t`, `.col`, `[i]`.
        ast::Expr::CompoundFieldAccess { root, access_chain } => match access_chain.first() {
            Some(ast::AccessExpr::Dot(ast::Expr::Identifier(c))) => ident(c),
            _ => column_name(root),
        },
        _ => "?column?".into(),
    }
}

fn data_type_name(t: &ast::DataType) -> String {
    match t {
        ast::DataType::Regclass => return "regclass".into(),
        // An array cast is named by its element type, as PostgreSQL does.
        ast::DataType::Array(
            ast::ArrayElemTypeDef::AngleBracket(e)
            | ast::ArrayElemTypeDef::SquareBracket(e, _)
            | ast::ArrayElemTypeDef::Parenthesis(e),
        ) => return data_type_name(e),
        ast::DataType::Custom(name, _) => {
            if let Some(n) = crate::names::object_parts(name).ok().and_then(|p| p.last().cloned()) {
                if matches!(
                    n.as_str(),
                    "oid" | "regclass" | "regtype" | "regnamespace" | "regproc" | "regconfig" | "char"
                ) {
                    return n;
                }
            }
        }
        _ => {}
    }
    match crate::names::data_type(t) {
        Ok(DataType::Integer) => "int4".into(),
        Ok(DataType::BigInt) => "int8".into(),
        Ok(DataType::SmallInt) => "int2".into(),
        Ok(DataType::Double) => "float8".into(),
        Ok(DataType::Boolean) => "bool".into(),
        Ok(DataType::Varchar(_)) => "varchar".into(),
        Ok(DataType::Char(_)) => "bpchar".into(),
        Ok(DataType::Timestamp) => "timestamp".into(),
        Ok(DataType::TimestampTz) => "timestamptz".into(),
        Ok(DataType::Time) => "time".into(),
        Ok(DataType::Numeric { .. }) => "numeric".into(),
        Ok(t) => t.sql_name(),
        // A type of the catalog (an enum type): its name, as PostgreSQL's.
        Err(_) => match t {
            ast::DataType::Custom(name, _) => crate::names::object_parts(name)
                .ok()
                .and_then(|p| p.last().cloned())
                .unwrap_or_else(|| "?column?".into()),
            _ => "?column?".into(),
        },
    }
}

/// Adds casts so a set operation's side produces the unified column types.
fn cast_to(plan: Plan, have: &[OutputColumn], want: &[OutputColumn]) -> Plan {
    if have.iter().zip(want).all(|(h, w)| h.ty == w.ty) {
        return plan;
    }
    let exprs = have
        .iter()
        .zip(want)
        .enumerate()
        .map(|(i, (h, w))| match (&h.ty, &w.ty) {
            (a, Some(b)) if a.as_ref() != Some(b) => Expr::Cast(Box::new(Expr::Column(i)), b.clone()),
            _ => Expr::Column(i),
        })
        .collect();
    Plan::Project { input: Box::new(plan), exprs }
}

fn plan_width_exceeds(visible: usize, plan: &Plan) -> bool {
    fn width(p: &Plan) -> Option<usize> {
        match p {
            Plan::Project { exprs, .. } => Some(exprs.len()),
            Plan::Sort { input, .. } | Plan::Distinct { input, .. } | Plan::Filter { input, .. } => {
                width(input)
            }
            _ => None,
        }
    }
    width(plan).is_some_and(|w| w > visible)
}

/// A CTE of `WITH RECURSIVE` that reads itself: `anchor UNION [ALL]
/// step`, the step naming `name` in a FROM clause (`all` for UNION ALL).
/// A fresh id for a work table (a recursive CTE's rounds, a
/// data-modifying CTE's RETURNING rows).
pub(crate) fn next_work_id() -> usize {
    static WORK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    WORK.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Whether a CTE's body is INSERT, UPDATE or DELETE.
fn is_dml(q: &ast::Query) -> bool {
    matches!(q.body.as_ref(), ast::SetExpr::Insert(_) | ast::SetExpr::Update(_) | ast::SetExpr::Delete(_))
}

fn recursive_parts<'q>(cte: &'q ast::Cte, name: &str) -> Option<(&'q ast::SetExpr, &'q ast::SetExpr, bool)> {
    if cte.query.order_by.is_some() || cte.query.limit_clause.is_some() {
        return None;
    }
    let ast::SetExpr::SetOperation { left, op: ast::SetOperator::Union, set_quantifier, right } =
        cte.query.body.as_ref()
    else {
        return None;
    };
    let mut reads_itself = false;
    let _ = ast::visit_relations(right.as_ref(), |r| {
        if r.0.len() == 1 && r.0[0].as_ident().is_some_and(|i| ident(i) == name) {
            reads_itself = true;
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    let all = matches!(set_quantifier, ast::SetQuantifier::All);
    reads_itself.then_some((left.as_ref(), right.as_ref(), all))
}

/// A catalog column that PostgreSQL declares as a vector or array of
/// numbers (`indkey`, `proargtypes`), read as an array of them, so that
/// `unnest` of it gives numbers that compare with `attnum` or `oid`;
/// anything else as it is.
fn typed_vector(e: ast::Expr) -> ast::Expr {
    let is_column = matches!(e, ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_));
    let elem = match super::system::element_type(&e) {
        Ok(Some(DataType::SmallInt)) if is_column => ast::DataType::SmallInt(None),
        Ok(Some(DataType::Oid)) if is_column => {
            ast::DataType::Custom(ast::ObjectName::from(vec![ast::Ident::new("oid")]), vec![])
        }
        _ => return e,
    };
    // `string_to_array(v, ' ')`: the vector's `1 2` form as an array.
    let split = ast::Expr::Function(ast::Function {
        name: ast::ObjectName::from(vec![ast::Ident::new("string_to_array")]),
        uses_odbc_syntax: false,
        parameters: ast::FunctionArguments::None,
        args: ast::FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: vec![
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)),
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::value(
                    ast::Value::SingleQuotedString(" ".into()),
                ))),
            ],
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    });
    ast::Expr::Cast {
        kind: ast::CastKind::DoubleColon,
        expr: Box::new(split),
        data_type: ast::DataType::Array(ast::ArrayElemTypeDef::SquareBracket(Box::new(elem), None)),
        format: None,
    }
}

/// The argument of `unnest(x)` (one argument), if `e` is such a call.
fn unnest_arg(e: &ast::Expr) -> Option<ast::Expr> {
    let ast::Expr::Function(f) = e else { return None };
    if f.name.0.last().and_then(|p| p.as_ident()).is_none_or(|i| !i.value.eq_ignore_ascii_case("unnest")) {
        return None;
    }
    let ast::FunctionArguments::List(l) = &f.args else { return None };
    match l.args.as_slice() {
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(a))] => Some(a.clone()),
        _ => None,
    }
}

/// Whether a FROM item calls a JSON set-returning function, which reads
/// the items before it (an implicit LATERAL, as for `unnest`).
fn calls_json_set(r: &ast::TableFactor) -> bool {
    let name = match r {
        ast::TableFactor::Function { name, .. } | ast::TableFactor::Table { name, args: Some(_), .. } => name,
        _ => return false,
    };
    let last = name.0.last().and_then(|p| p.as_ident()).map(|i| i.value.to_lowercase());
    last.is_some_and(|n| {
        n == "generate_series" || n == "pg_get_publication_tables" || super::json::set_function(&n).is_some()
    })
}

/// The name of the JSON set-returning function `e` calls, if it does.
/// Every select list's calls pass here: a name not starting `json` is
/// dismissed without building its lower-case copy.
fn json_set_name(e: &ast::Expr) -> Option<String> {
    let ast::Expr::Function(f) = e else { return None };
    let ident = &f.name.0.last().and_then(|p| p.as_ident())?.value;
    if !ident.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("json")) {
        return None;
    }
    let name = ident.to_lowercase();
    super::json::set_function(&name).map(|_| name)
}

/// The set-returning function that lists an array's subscripts, in a
/// select list (`Plan::ProjectSet` sets out the array of them that
/// `CatalogFn::Subscripts` gives).
const SUBSCRIPTS: &str = "generate_subscripts";

/// The set-returning function that lists a session's LISTEN channels.
const LISTENING_CHANNELS: &str = "pg_listening_channels";

/// Whether `e` calls the function `name`.
fn calls(e: &ast::Expr, name: &str) -> bool {
    let ast::Expr::Function(f) = e else { return false };
    f.name.0.last().and_then(|p| p.as_ident()).is_some_and(|i| i.value.eq_ignore_ascii_case(name))
}

/// Whether `e` is a set-returning call that [`lift_json_set`] moves into
/// FROM: a JSON one, `generate_series` or `pg_listening_channels`.
fn lifted_set(e: &ast::Expr) -> bool {
    calls(e, "generate_series") || calls(e, LISTENING_CHANNELS) || json_set_name(e).is_some()
}

/// A select list with one JSON set-returning call inside an item's
/// expression (`jsonb_array_elements(doc) ->> 'name'`), or one
/// `generate_series` call anywhere in it (`SELECT generate_series(1, n)`),
/// as the same query with the call moved into FROM as a LATERAL item and
/// the expression reading its value: one output row per element, as
/// PostgreSQL's projection gives. `None` for any other select (a JSON call
/// that is a whole item goes to `select_unnest`; several calls,
/// aggregates or GROUP BY keep their 0A000).
fn lift_json_set(s: &ast::Select) -> Option<ast::Select> {
    use std::ops::ControlFlow;
    /// Replaces the first JSON set call outside subqueries; counts them all.
    struct Lift {
        depth: usize,
        found: usize,
        call: Option<ast::Expr>,
    }
    impl ast::VisitorMut for Lift {
        type Break = ();
        fn pre_visit_expr(&mut self, _: &mut ast::Expr) -> ControlFlow<()> {
            // An expression nested too deeply for this walk is left to the
            // binder, which refuses it with 54001.
            match crate::stack::check("expression nested too deeply") {
                Ok(()) => ControlFlow::Continue(()),
                Err(_) => ControlFlow::Break(()),
            }
        }
        fn pre_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
            if self.depth == 0 && lifted_set(e) {
                self.found += 1;
                if self.call.is_none() {
                    self.call = Some(std::mem::replace(e, ast::Expr::Identifier(ast::Ident::new(LIFTED))));
                }
            }
            ControlFlow::Continue(())
        }
    }
    if s.group_by != ast::GroupByExpr::Expressions(vec![], vec![])
        || s.having.is_some()
        || s.distinct.is_some()
    {
        return None;
    }
    // A look without copying first: most selects have no such call. One
    // nested too deeply for this walk is left to the binder (54001).
    let mut nested = false;
    for item in &s.projection {
        let (ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }) = item else {
            continue;
        };
        if json_set_name(e).is_some() {
            continue;
        }
        let found = ast::visit_expressions(e, |x| {
            if crate::stack::check("expression nested too deeply").is_err() {
                ControlFlow::Break(false)
            } else if lifted_set(x) {
                ControlFlow::Break(true)
            } else {
                ControlFlow::Continue(())
            }
        });
        match found {
            ControlFlow::Break(false) => return None,
            ControlFlow::Break(true) => nested = true,
            ControlFlow::Continue(()) => {}
        }
    }
    if !nested {
        return None;
    }
    let mut out = s.clone();
    let mut lift = Lift { depth: 0, found: 0, call: None };
    for item in out.projection.iter_mut() {
        let (ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }) = item else {
            continue;
        };
        if json_set_name(e).is_some() || super::bind::has_aggregate(e) {
            return None;
        }
        let name = column_name(e);
        if ast::VisitMut::visit(e, &mut lift).is_break() {
            return None;
        }
        if lift.call.is_some() && lift.found == 1 {
            if let ast::SelectItem::UnnamedExpr(e) = item {
                // The output column keeps the name the call gave it.
                *item = ast::SelectItem::ExprWithAlias { expr: e.clone(), alias: ast::Ident::new(name) };
            }
        }
    }
    let ast::Expr::Function(f) = lift.call? else { return None };
    if lift.found != 1 {
        return None;
    }
    let relation = ast::TableFactor::Function {
        lateral: true,
        name: f.name.clone(),
        args: match f.args {
            ast::FunctionArguments::List(l) => l.args,
            _ => return None,
        },
        alias: Some(ast::TableAlias {
            name: ast::Ident::new(LIFTED),
            columns: vec![],
            explicit: true,
            at: None,
        }),
        with_ordinality: false,
    };
    out.from.push(ast::TableWithJoins { relation, joins: vec![] });
    Some(out)
}

/// The FROM alias of a lifted JSON set-returning call (see
/// [`lift_json_set`]): a name a query can spell only quoted.
const LIFTED: &str = "json set value";

/// Whether a select list has an `unnest(x)` item (see `select_unnest`).
fn has_unnest(s: &ast::Select) -> bool {
    s.group_by == ast::GroupByExpr::Expressions(vec![], vec![])
        && s.projection.iter().any(|i| match i {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                unnest_arg(e).is_some() || json_set_name(e).is_some() || calls(e, SUBSCRIPTS)
            }
            _ => false,
        })
}

/// Whether output column `i` of a set operation's branch is an untyped
/// literal (NULL or a quoted string): a plain SELECT's item. A nested set
/// operation has already resolved its columns (to text, if nothing else),
/// as PostgreSQL resolves them.
fn untyped_column(e: &ast::SetExpr, i: usize) -> bool {
    let literal = |x: &ast::Expr| matches!(x, ast::Expr::Value(v) if matches!(v.value, ast::Value::Null | ast::Value::SingleQuotedString(_)));
    match e {
        // After a `*` the items no longer line up with the columns.
        ast::SetExpr::Select(s)
            if s.projection.iter().take(i + 1).any(|p| {
                matches!(p, ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..))
            }) =>
        {
            false
        }
        ast::SetExpr::Select(s) => match s.projection.get(i) {
            Some(ast::SelectItem::UnnamedExpr(x) | ast::SelectItem::ExprWithAlias { expr: x, .. }) => {
                literal(x)
            }
            _ => false,
        },
        ast::SetExpr::Query(q) => q.order_by.is_none() && untyped_column(&q.body, i),
        _ => false,
    }
}
