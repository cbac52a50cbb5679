//! The binder: names to positions, literals to typed values, `$n` to typed
//! parameters.
//!
//! Scopes: a query's FROM clause makes a [`Scope`], one column per column
//! of each table in FROM order. A subquery is bound with the scopes around
//! it pushed on the outer stack; a name it cannot find in its own scope is
//! looked up there, innermost first, and becomes an [`Expr::Outer`] column.
//!
//! Untyped literals take their type from the other side of an operator
//! (`d > '2024-01-01'` parses the text as a date, at bind time), and so do
//! parameters (`id = $1` makes `$1` the type of `id`).

use super::expr::{Expr, SeqOp, SubqueryKind};
use super::plan::{AggCall, AggFunc, Plan, SortKey};
use crate::catalog::OutputColumn;
use crate::error::{Error, Result};
use crate::functions;
use crate::functions::operators::BinOp;
use crate::names::{function_name, ident, object_parts, qualify, sqlparser_object_name};
use crate::planner::Dictionary;
use crate::privileges::{Need, ObjectKind};
use centum_types::{DataType, Decimal, Value};
use sqlparser::ast;
use std::cell::RefCell;

/// One column a name can resolve to.
#[derive(Clone, Debug)]
pub(crate) struct ScopeCol {
    /// The table alias it belongs to.
    pub rel: Option<String>,
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: Option<DataType>,
    /// A system column (`tableoid`): found by name, left out of `*`.
    pub hidden: bool,
    /// The second of a pair joined by USING or NATURAL: found only by its
    /// qualified name, left out of `*` (the first stands for both).
    pub merged: bool,
    /// For the column that stands for a USING or NATURAL pair: which join
    /// (later ones higher) and where in its column list. `*` lists these
    /// first, as PostgreSQL does.
    pub lead: Option<(u32, u32)>,
    /// The only column of a function returning a scalar type: the
    /// function item's alias alone names it too (`SELECT t FROM
    /// jsonb_array_elements_text(x) t`), as the row of such a function is
    /// its value in PostgreSQL.
    pub scalar_row: bool,
}

/// The columns visible at one level of a query.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scope {
    pub cols: Vec<ScopeCol>,
}

impl Scope {
    /// A scope of `columns` belonging to relation `rel`.
    pub fn of(rel: &str, columns: &[OutputColumn]) -> Scope {
        Scope {
            cols: columns
                .iter()
                .map(|c| ScopeCol {
                    rel: Some(rel.to_string()),
                    name: c.name.clone(),
                    ty: c.ty.clone(),
                    // An index's hidden key column (no name can reach it).
                    hidden: crate::catalog::is_hidden_column(&c.name),
                    merged: false,
                    lead: None,
                    scalar_row: false,
                })
                .collect(),
        }
    }

    /// This scope followed by `other`.
    pub fn concat(&self, other: &Scope) -> Scope {
        let mut cols = self.cols.clone();
        cols.extend(other.cols.iter().cloned());
        Scope { cols }
    }

    pub(super) fn find(&self, rel: Option<&str>, name: &str) -> Result<Option<usize>> {
        let mut found = None;
        for (i, c) in self.cols.iter().enumerate() {
            if c.name == name && (rel.is_none() && !c.merged || rel.is_some() && c.rel.as_deref() == rel) {
                if found.is_some() {
                    return Err(Error::AmbiguousColumn(name.to_string()));
                }
                found = Some(i);
            }
        }
        Ok(found)
    }

    /// The column a scalar function item's alias `name` stands for.
    fn scalar_row(&self, name: &str) -> Option<usize> {
        self.cols.iter().position(|c| c.scalar_row && c.rel.as_deref() == Some(name))
    }

    fn has_rel(&self, rel: &str) -> bool {
        self.cols.iter().any(|c| c.rel.as_deref() == Some(rel))
    }
}

/// Aggregation in progress: group expressions and the aggregate calls met
/// so far. Bound expressions are compared by their debug text.
#[derive(Default)]
pub(crate) struct Grouping {
    pub group: Vec<Expr>,
    /// GROUPING SETS (see [`Plan::Aggregate`]).
    pub sets: Option<super::plan::GroupingSets>,
    group_keys: Vec<String>,
    pub aggs: Vec<AggCall>,
    agg_keys: Vec<String>,
    /// No expression of more syntax nodes than this can be a GROUP BY key
    /// (see [`Binder::grouped`]).
    widest_key: usize,
    /// The primary key columns of each base table in FROM, by the alias
    /// the query knows it by: grouped by all of them, every other column
    /// of that table is one value per group (see [`Binder::dependent`]).
    pub keys: Vec<(String, Vec<String>)>,
}

impl Grouping {
    pub fn new(group: Vec<Expr>) -> Grouping {
        let group_keys = group.iter().map(|e| format!("{e:?}")).collect();
        let nodes = |e: &Expr| {
            let mut n = 0;
            e.walk(&mut |_| n += 1);
            n
        };
        // Parentheses and spellings a bound key lost (casts it gained)
        // leave the written form a little larger or smaller than it.
        let widest_key = group.iter().map(nodes).max().unwrap_or(0) * 2 + 16;
        Grouping { group, sets: None, group_keys, aggs: vec![], agg_keys: vec![], widest_key, keys: vec![] }
    }
}

/// The position of `item` among `items`, each known by its key (bound
/// expressions and calls are compared by their debug text): an equal one
/// already there, or `item` added.
pub(crate) fn intern<T>(keys: &mut Vec<String>, items: &mut Vec<T>, key: String, item: T) -> usize {
    match keys.iter().position(|k| *k == key) {
        Some(i) => i,
        None => {
            keys.push(key);
            items.push(item);
            items.len() - 1
        }
    }
}

/// Whether `e` has at most `limit` expression nodes; stops counting past
/// `limit`, so the cost is bounded by it, not by `e`.
fn at_most_nodes(e: &ast::Expr, limit: usize) -> bool {
    let mut n = 0usize;
    let over = ast::visit_expressions(e, |_| {
        n += 1;
        if n > limit {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    });
    over.is_continue()
}

/// How expressions are bound at this point of a query.
pub(crate) struct Ctx<'s> {
    /// Columns of the current row.
    pub scope: &'s Scope,
    /// Set after GROUP BY / aggregates: expressions must be grouped.
    pub grouping: Option<&'s RefCell<Grouping>>,
    /// Set where window functions may be called (a select list, ORDER
    /// BY): where the calls are collected.
    pub windows: Option<&'s RefCell<super::window::Windowing>>,
}

impl<'s> Ctx<'s> {
    pub fn plain(scope: &'s Scope) -> Ctx<'s> {
        Ctx { scope, grouping: None, windows: None }
    }
}

/// A typed bound expression.
pub(crate) type Typed = (Expr, Option<DataType>);

/// Binds statements against a catalog.
pub struct Binder<'a> {
    pub(crate) catalog: &'a Dictionary,
    pub(crate) search_path: &'a [String],
    /// Parameter types inferred so far.
    pub(crate) params: Vec<Option<DataType>>,
    /// Enclosing scopes, outermost first.
    pub(crate) outer: Vec<Scope>,
    /// CTEs in scope: name, plan, columns.
    pub(crate) ctes: Vec<(String, Plan, Vec<OutputColumn>)>,
    /// Engine names of the tables and views the statement reads (what a
    /// view made of it depends on).
    pub(crate) read: Vec<String>,
    /// USING and NATURAL joins bound so far (see [`ScopeCol::lead`]).
    pub(crate) using_joins: u32,
    /// Data-modifying statements of the top-level WITH, each with the work
    /// id its RETURNING rows are kept under (see `Plan::Writes`).
    pub(crate) writes: Vec<(usize, super::Statement)>,
    /// How many queries the binder is inside: a data-modifying WITH is
    /// allowed only at the top level.
    pub(crate) query_depth: u32,
    /// Binding a select list whose JSON set-returning calls become the
    /// arrays of their rows (see `select_unnest`).
    pub(crate) json_sets_as_arrays: bool,
    /// What the statement does with which objects, for the privilege
    /// check (see `privileges.rs`).
    pub(crate) needs: RefCell<Vec<Need>>,
    /// While binding what a view stands for: the view's owner, whose
    /// privileges the objects under it are checked against.
    pub(crate) acting_as: Option<String>,
    /// Who runs the statement, for the checks of schema changes; `None`:
    /// someone who passes them all.
    pub(crate) actor: Option<crate::privileges::Actor>,
    /// The open transaction block the statement runs in, if any: a schema
    /// change that reads or copies a table's rows reads them through it,
    /// so that the block's own uncommitted rows are checked and carried
    /// along.
    pub(crate) block: Option<&'a centum_engine::Transaction>,
}

impl<'a> Binder<'a> {
    /// A binder; `params` are types the client declared (`None`: infer).
    pub fn new(
        catalog: &'a Dictionary,
        search_path: &'a [String],
        params: Vec<Option<DataType>>,
    ) -> Binder<'a> {
        Binder {
            catalog,
            search_path,
            params,
            outer: vec![],
            ctes: vec![],
            read: vec![],
            using_joins: 0,
            writes: vec![],
            query_depth: 0,
            json_sets_as_arrays: false,
            needs: RefCell::new(Vec::new()),
            acting_as: None,
            actor: None,
            block: None,
        }
    }

    /// Who runs the statement (see [`Binder::actor`]'s field).
    pub(crate) fn actor(&self) -> crate::privileges::Actor {
        self.actor.clone().unwrap_or(crate::privileges::Actor { role: String::new(), bypass: true })
    }

    /// Notes that the statement needs `privs` on `kind` `name` (all of
    /// them, or one of them with `any`).
    pub(crate) fn need(&self, kind: ObjectKind, name: &str, privs: u16, any: bool) {
        let n = Need { kind, name: name.to_string(), privs, any, role: self.acting_as.clone() };
        let mut needs = self.needs.borrow_mut();
        if !needs.contains(&n) {
            needs.push(n);
        }
    }

    /// Takes over `needs` noted for an object owned by `owner` (a view's
    /// query, a routine's statements): those checked against the session's
    /// role are checked against `owner`'s instead.
    pub(crate) fn need_as(&self, owner: &str, needs: impl IntoIterator<Item = Need>) {
        let mut mine = self.needs.borrow_mut();
        for mut n in needs {
            if n.role.is_none() {
                n.role = Some(owner.to_string());
            }
            if !mine.contains(&n) {
                mine.push(n);
            }
        }
    }

    /// The owner of `kind` `name` (the database owner where none is
    /// stored).
    pub(crate) fn owner_of(&self, kind: ObjectKind, name: &str) -> String {
        self.catalog.owner(kind, name)
    }

    /// Notes a call of routine `r`: EXECUTE on it, and what its statements
    /// need: as the caller (SECURITY INVOKER, the default), or as its owner
    /// (SECURITY DEFINER).
    pub(crate) fn need_routine(&self, r: &crate::planner::routines::Compiled) {
        self.need(ObjectKind::Routine, &r.name, crate::privileges::EXECUTE, false);
        self.need_body(r);
    }

    /// Notes what the body of the triggers that fire for `events` on a
    /// table need: checked against the acting role, as PostgreSQL checks a
    /// trigger's statements (or the function's owner, SECURITY DEFINER).
    /// Firing needs no EXECUTE: CREATE TRIGGER checked that.
    pub(crate) fn need_triggers(
        &self,
        triggers: Option<&crate::planner::triggers::TableTriggers>,
        events: u8,
    ) {
        for t in triggers.into_iter().flat_map(|t| &t.list) {
            if t.def.events & events != 0 {
                self.need_body(&t.program);
            }
        }
    }

    /// Notes what routine `r`'s body needs.
    pub(crate) fn need_body(&self, r: &crate::planner::routines::Compiled) {
        let needs = r.needs();
        if needs.is_empty() {
            return;
        }
        if r.security_definer {
            self.need_as(&self.owner_of(ObjectKind::Routine, &r.name), needs.iter().cloned());
        } else {
            for n in needs {
                let role = n.role.clone().or_else(|| self.acting_as.clone());
                let n = Need { role, ..n.clone() };
                let mut mine = self.needs.borrow_mut();
                if !mine.contains(&n) {
                    mine.push(n);
                }
            }
        }
    }

    /// Runs `f` with the objects it binds checked against the owner of
    /// view `view` (a write through a simple view).
    pub(crate) fn as_view_owner<T>(
        &mut self,
        view: &str,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let owner = self.owner_of(ObjectKind::Relation, view);
        let before = self.acting_as.replace(owner);
        let r = f(self);
        self.acting_as = before;
        r
    }

    /// Parameter types, `text` where nothing said.
    pub fn param_types(&self) -> Vec<DataType> {
        self.params.iter().map(|t| t.clone().unwrap_or(DataType::Text)).collect()
    }

    /// Total width of the outer row.
    pub(crate) fn outer_width(&self) -> usize {
        self.outer.iter().map(|s| s.cols.len()).sum()
    }

    /// The engine name of table `name` as written, looked up through the
    /// search path.
    pub fn table_name(&self, name: &ast::ObjectName) -> Result<String> {
        let parts = object_parts(name)?;
        match parts.as_slice() {
            [t] => {
                let db = self.catalog.db();
                for s in self.search_path {
                    let n = qualify(s, t);
                    // A name another open transaction has changed (a table
                    // it dropped, or one it created) is decided when that
                    // transaction ends.
                    if db.table(&n).is_ok() || db.claimed(&n, centum_engine::ddl_txn()).is_some() {
                        return Ok(n);
                    }
                }
                Err(Error::UndefinedTable(t.clone()))
            }
            [s, t] | [_, s, t] => Ok(qualify(s, t)),
            _ => Err(Error::Syntax(format!("improper qualified name (too many dotted names): {name}"))),
        }
    }

    /// The engine name of the sequence `parts` name (`[name]`, found on
    /// the search path, or `[schema, name]`, with an optional catalog
    /// before), if there is one.
    pub(crate) fn sequence_named(&self, parts: &[String]) -> Option<String> {
        match parts {
            [t] => self.search_path.iter().map(|s| qualify(s, t)).find(|n| self.catalog.has_sequence(n)),
            [s, t] | [_, s, t] => Some(qualify(s, t)).filter(|n| self.catalog.has_sequence(n)),
            _ => None,
        }
    }

    /// The engine name for a new object `name` (first schema of the path).
    pub fn new_object_name(&self, name: &ast::ObjectName) -> Result<String> {
        let parts = object_parts(name)?;
        match parts.as_slice() {
            [t] => {
                let schema = self.search_path.iter().find(|s| self.catalog.has_schema(s));
                Ok(qualify(schema.map_or("public", |s| s.as_str()), t))
            }
            [s, t] | [_, s, t] => {
                if !self.catalog.has_schema(s) {
                    return Err(Error::other("3F000", format!("schema \"{s}\" does not exist")));
                }
                Ok(qualify(s, t))
            }
            _ => Err(Error::Syntax(format!("improper qualified name (too many dotted names): {name}"))),
        }
    }

    /// A SQL type name as a type, enum types included.
    pub(crate) fn data_type(&self, t: &ast::DataType) -> Result<DataType> {
        crate::enums::data_type(self.catalog, self.search_path, t)
    }

    /// Sets parameter `i`'s type if it is not known yet.
    fn infer_param(&mut self, i: usize, ty: &Option<DataType>) {
        if let (Some(slot), Some(t)) = (self.params.get_mut(i), ty) {
            if slot.is_none() {
                *slot = Some(t.clone());
            }
        }
    }

    /// Gives an untyped operand (a string literal or a parameter) the type
    /// `ty`: parameters are inferred, literals parsed now.
    pub(crate) fn coerce_untyped(&mut self, e: Typed, ty: &Option<DataType>) -> Result<Typed> {
        let Some(target) = ty else { return Ok(e) };
        // An enum type from a table definition carries no labels.
        let fresh;
        let (target, ty) = match target {
            DataType::Enum(_) | DataType::Array(_) => {
                fresh = Some(crate::enums::fresh(self.catalog, target));
                (fresh.as_ref().unwrap_or(target), &fresh)
            }
            _ => (target, ty),
        };
        match e {
            (Expr::Param(i), None) => {
                self.infer_param(i, ty);
                Ok((Expr::Param(i), ty.clone()))
            }
            (Expr::Literal(Value::Text(s)), None) => {
                let v = match (target, Value::parse(&s, &widen(target))?) {
                    // char(n) values are stored blank-padded and, as
                    // PostgreSQL's bpchar, equal whatever their trailing
                    // blanks: a literal meeting one is padded the same way
                    // (one longer than n can equal nothing and stays).
                    (DataType::Char(n), Value::Text(t)) => {
                        super::deadline::check()?;
                        Value::Text(blank_padded(&t, *n as usize))
                    }
                    (_, v) => v,
                };
                Ok((Expr::Literal(v), ty.clone()))
            }
            (Expr::Literal(Value::Null), None) => Ok((Expr::Literal(Value::Null), ty.clone())),
            e => Ok(e),
        }
    }

    /// Binds an expression.
    pub(crate) fn expr(&mut self, e: &ast::Expr, ctx: &Ctx) -> Result<Typed> {
        crate::stack::check("expression nested too deeply")?;
        super::deadline::tick()?;
        if let Some(g) = ctx.grouping {
            if let Some(t) = self.grouped(e, ctx, g)? {
                return Ok(t);
            }
        }
        use ast::Expr as A;
        Ok(match e {
            A::Identifier(id) => self.column(None, &ident(id), ctx)?,
            A::CompoundIdentifier(ids) => match ids.as_slice() {
                [t, c] => self.column(Some(&ident(t)), &ident(c), ctx)?,
                [_, t, c] | [_, _, t, c] => self.column(Some(&ident(t)), &ident(c), ctx)?,
                _ => return Err(Error::Syntax(format!("improper qualified name: {e}"))),
            },
            A::Value(v) => self.value(&v.value)?,
            A::TypedString(ts) => {
                let ty = self.data_type(&ts.data_type)?;
                let text = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    v => v.to_string(),
                };
                (Expr::Literal(Value::parse(&text, &ty)?), Some(ty))
            }
            A::Interval(iv) => {
                let x = self.expr(&iv.value, ctx)?;
                let fields = (iv.leading_field.as_ref(), iv.last_field.as_ref());
                match x {
                    (Expr::Literal(Value::Text(text)), _) => (
                        Expr::Literal(Value::Interval(interval_literal(&text, fields)?)),
                        Some(DataType::Interval),
                    ),
                    x => {
                        let x = self.coerce_untyped(x, &Some(DataType::Text))?;
                        (Expr::Cast(Box::new(x.0), DataType::Interval), Some(DataType::Interval))
                    }
                }
            }
            A::Nested(e) => self.expr(e, ctx)?,
            A::Tuple(items) => self.tuple(items, ctx)?,
            A::BinaryOp { op: op @ (ast::BinaryOperator::And | ast::BinaryOperator::Or), .. } => {
                self.chain(e, op, ctx)?
            }
            A::BinaryOp { left, op, right }
                if super::rows::row_items(left).is_some() && super::rows::row_items(right).is_some() =>
            {
                let (l, r) = (super::rows::row_items(left), super::rows::row_items(right));
                let (l, r) = (l.unwrap_or_default(), r.unwrap_or_default());
                match self.row_comparison(op, &l, &r, ctx)? {
                    Some(done) => done,
                    None => {
                        let l = self.expr(left, ctx)?;
                        let r = self.expr(right, ctx)?;
                        self.binary(op, l, r)?
                    }
                }
            }
            A::BinaryOp { left, op, right } => {
                let l = self.expr(left, ctx)?;
                let r = self.expr(right, ctx)?;
                self.binary(op, l, r)?
            }
            A::UnaryOp { op, expr } => {
                let (x, t) = self.expr(expr, ctx)?;
                match op {
                    ast::UnaryOperator::Not => {
                        (Expr::Not(Box::new(self.expect_bool((x, t), "NOT")?)), Some(DataType::Boolean))
                    }
                    ast::UnaryOperator::Minus => match x {
                        Expr::Literal(v) => (Expr::Literal(negate_literal(v)?), t),
                        x => (Expr::Neg(Box::new(x)), t),
                    },
                    ast::UnaryOperator::Plus => (x, t),
                    // `!! tsquery`.
                    ast::UnaryOperator::PGPrefixFactorial if matches!(t, None | Some(DataType::TsQuery)) => {
                        self.ts_not((x, t))?
                    }
                    op => return Err(Error::unsupported(format!("operator {op}"))),
                }
            }
            A::IsNull(e) => (Expr::IsNull(Box::new(self.expr(e, ctx)?.0), false), Some(DataType::Boolean)),
            A::IsNotNull(e) => (Expr::IsNull(Box::new(self.expr(e, ctx)?.0), true), Some(DataType::Boolean)),
            A::IsTrue(e) => {
                (Expr::IsBool(Box::new(self.expr(e, ctx)?.0), true, false), Some(DataType::Boolean))
            }
            A::IsNotTrue(e) => {
                (Expr::IsBool(Box::new(self.expr(e, ctx)?.0), true, true), Some(DataType::Boolean))
            }
            A::IsFalse(e) => {
                (Expr::IsBool(Box::new(self.expr(e, ctx)?.0), false, false), Some(DataType::Boolean))
            }
            A::IsNotFalse(e) => {
                (Expr::IsBool(Box::new(self.expr(e, ctx)?.0), false, true), Some(DataType::Boolean))
            }
            A::IsDistinctFrom(a, b) | A::IsNotDistinctFrom(a, b) => {
                let (l, r) = self.comparable(a, b, ctx)?;
                (
                    Expr::IsDistinct(Box::new(l), Box::new(r), matches!(e, A::IsNotDistinctFrom(..))),
                    Some(DataType::Boolean),
                )
            }
            A::InList { expr, list, negated }
                if !list.is_empty() && super::rows::row_items(expr).is_some() =>
            {
                // A row constructor in a list of row constructors: each
                // item compared pair by pair, so that NULL fields give
                // NULL as they do in `=`.
                self.row_in_list(expr, list, *negated, ctx)?
            }
            A::InList { expr, list, negated } => {
                let x = self.expr(expr, ctx)?;
                let mut items = Vec::with_capacity(list.len());
                let mut x = x;
                for item in list {
                    let i = self.expr(item, ctx)?;
                    let (l, r) = self.unify(x, i)?;
                    x = l;
                    items.push(r.0);
                }
                (Expr::InList(Box::new(x.0), items, *negated), Some(DataType::Boolean))
            }
            A::InSubquery { expr, subquery, negated } => {
                let (plan, cols) = self.subquery(subquery, ctx)?;
                let x = match super::rows::row_items(expr) {
                    // `(a, b) IN (SELECT x, y ...)`: a row of the left's
                    // fields, each typed as its column, compared pair by
                    // pair with each row (see `rows_equal`).
                    Some(items) if cols.len() > 1 && items.len() == cols.len() => {
                        let fields = items
                            .iter()
                            .zip(&cols)
                            .map(|(e, c)| {
                                let f = self.expr(e, ctx)?;
                                self.coerce_untyped(f, &c.ty)
                            })
                            .collect::<Result<Vec<_>>>()?;
                        self.row_value(fields)?
                    }
                    Some(items) if cols.len() > 1 || items.len() > 1 => {
                        return Err(Error::Syntax(
                            if items.len() > cols.len() {
                                "subquery has too few columns"
                            } else {
                                "subquery has too many columns"
                            }
                            .into(),
                        ));
                    }
                    _ if cols.len() != 1 => {
                        return Err(Error::Syntax("subquery has too many columns".into()));
                    }
                    _ => {
                        let x = self.expr(expr, ctx)?;
                        self.coerce_untyped(x, &cols[0].ty)?
                    }
                };
                let sub = Expr::Subquery(Box::new(plan), SubqueryKind::Any(Box::new(x.0), BinOp::Eq));
                (if *negated { Expr::Not(Box::new(sub)) } else { sub }, Some(DataType::Boolean))
            }
            A::AnyOp { left, compare_op, right, .. } | A::AllOp { left, compare_op, right }
                if !matches!(right.as_ref(), A::Subquery(_)) =>
            {
                self.any_array(left, compare_op, right, matches!(e, A::AllOp { .. }), ctx)?
            }
            A::AnyOp { left, compare_op, right, .. } | A::AllOp { left, compare_op, right } => {
                let op = comparison(compare_op)?;
                let x = self.expr(left, ctx)?;
                let A::Subquery(q) = right.as_ref() else {
                    return Err(Error::unsupported("ANY/ALL over an array"));
                };
                let (plan, cols) = self.subquery(q, ctx)?;
                if cols.len() != 1 {
                    return Err(Error::Syntax("subquery has too many columns".into()));
                }
                let x = self.coerce_untyped(x, &cols[0].ty)?;
                let kind = if matches!(e, A::AllOp { .. }) {
                    SubqueryKind::All(Box::new(x.0), op)
                } else {
                    SubqueryKind::Any(Box::new(x.0), op)
                };
                (Expr::Subquery(Box::new(plan), kind), Some(DataType::Boolean))
            }
            A::Between { expr, negated, low, high } => {
                let x = self.expr(expr, ctx)?;
                let lo = self.expr(low, ctx)?;
                let hi = self.expr(high, ctx)?;
                let (x1, lo) = self.unify(x.clone(), lo)?;
                let (x2, hi) = self.unify(x, hi)?;
                let both = Expr::Binary(
                    BinOp::And,
                    Box::new(Expr::Binary(BinOp::GtEq, Box::new(x1.0), Box::new(lo.0))),
                    Box::new(Expr::Binary(BinOp::LtEq, Box::new(x2.0), Box::new(hi.0))),
                );
                (if *negated { Expr::Not(Box::new(both)) } else { both }, Some(DataType::Boolean))
            }
            A::Like { negated, expr, pattern, escape_char: None, any: false }
            | A::ILike { negated, expr, pattern, escape_char: None, any: false } => {
                let x = self.expr(expr, ctx)?;
                let p = self.expr(pattern, ctx)?;
                let x = self.coerce_untyped(x, &Some(DataType::Text))?;
                let p = self.coerce_untyped(p, &Some(DataType::Text))?;
                (
                    Expr::Like(Box::new(x.0), Box::new(p.0), *negated, matches!(e, A::ILike { .. })),
                    Some(DataType::Boolean),
                )
            }
            A::Case { operand, conditions, else_result, .. } => {
                self.case(operand.as_deref(), conditions, else_result.as_deref(), ctx)?
            }
            A::Cast { expr, data_type: dt, .. } if self.catalog_cast_target(dt) => self
                .catalog_cast(expr, dt, ctx)?
                .ok_or_else(|| Error::unsupported(format!("cast to {dt}")))?,
            A::Collate { expr, .. } => self.expr(expr, ctx)?,
            A::CompoundFieldAccess { root, access_chain } => self.subscript(root, access_chain, ctx)?,
            A::Cast { expr, data_type: dt, .. } => {
                let ty = self.data_type(dt)?;
                let (x, _) = self.expr(expr, ctx)?;
                match x {
                    Expr::Literal(v) => (Expr::Literal(cast_value(v, &ty)?), Some(ty)),
                    Expr::Param(i) => {
                        self.infer_param(i, &Some(ty.clone()));
                        (Expr::Cast(Box::new(Expr::Param(i)), ty.clone()), Some(ty))
                    }
                    x => (Expr::Cast(Box::new(x), ty.clone()), Some(ty)),
                }
            }
            A::Function(f) => self.function(f, ctx)?,
            A::Array(arr) => {
                let items = arr.elem.iter().map(|e| self.expr(e, ctx)).collect::<Result<Vec<_>>>()?;
                self.array_constructor(items)?
            }
            A::Exists { subquery, negated } => {
                let (plan, _) = self.subquery(subquery, ctx)?;
                let sub = Expr::Subquery(Box::new(plan), SubqueryKind::Exists);
                (if *negated { Expr::Not(Box::new(sub)) } else { sub }, Some(DataType::Boolean))
            }
            A::Subquery(q) => {
                let (plan, cols) = self.subquery(q, ctx)?;
                if cols.len() != 1 {
                    return Err(Error::Syntax("subquery must return only one column".into()));
                }
                (Expr::Subquery(Box::new(plan), SubqueryKind::Scalar), cols[0].ty.clone())
            }
            A::Extract { field, expr, .. } => {
                let x = self.expr(expr, ctx)?;
                let field = Expr::Literal(Value::Text(field.to_string().to_lowercase()));
                self.call("extract", vec![(field, Some(DataType::Text)), x])?
            }
            A::Substring { expr, substring_from, substring_for, .. } => {
                let mut args = vec![self.expr(expr, ctx)?];
                args.push(match substring_from {
                    Some(f) => self.expr(f, ctx)?,
                    None => (Expr::Literal(Value::Integer(1)), Some(DataType::Integer)),
                });
                if let Some(n) = substring_for {
                    args.push(self.expr(n, ctx)?);
                }
                self.call("substring", args)?
            }
            A::Position { expr, r#in } => {
                let needle = self.expr(expr, ctx)?;
                let hay = self.expr(r#in, ctx)?;
                self.call("strpos", vec![hay, needle])?
            }
            A::Trim { trim_where, trim_what, expr, .. } => {
                let name = match trim_where {
                    Some(ast::TrimWhereField::Leading) => "ltrim",
                    Some(ast::TrimWhereField::Trailing) => "rtrim",
                    _ => "btrim",
                };
                let mut args = vec![self.expr(expr, ctx)?];
                if let Some(w) = trim_what {
                    args.push(self.expr(w, ctx)?);
                }
                self.call(name, args)?
            }
            A::Ceil { expr, .. } => {
                let x = self.expr(expr, ctx)?;
                self.call("ceil", vec![x])?
            }
            A::Floor { expr, .. } => {
                let x = self.expr(expr, ctx)?;
                self.call("floor", vec![x])?
            }
            other => return Err(Error::unsupported(format!("expression {other}"))),
        })
    }

    /// In a grouped query: an aggregate call, or an expression equal to a
    /// GROUP BY expression, becomes a column of the aggregate's output.
    fn grouped(&mut self, e: &ast::Expr, ctx: &Ctx, g: &RefCell<Grouping>) -> Result<Option<Typed>> {
        if let ast::Expr::Function(f) = e {
            if f.over.is_none() && function_name(f)? == "grouping" {
                return self.grouping_call(f, ctx, g).map(Some);
            }
            if let Some(func) = agg_func(f) {
                let plain = Ctx::plain(ctx.scope);
                let call = self.aggregate(func, f, &plain)?;
                return Ok(Some(add_aggregate(g, call)));
            }
        }
        if matches!(e, ast::Expr::Value(_)) {
            return Ok(None);
        }
        // Binding a subtree whole at every level of a long chain is
        // quadratic; one wider than every GROUP BY key cannot be one, and
        // binding it part by part gives the same result.
        if !at_most_nodes(e, g.borrow().widest_key) {
            return Ok(None);
        }
        let saved = self.params.clone();
        match self.expr(e, &Ctx::plain(ctx.scope)) {
            Ok((x, ty)) => {
                let key = format!("{x:?}");
                if let Some(i) = g.borrow().group_keys.iter().position(|k| *k == key) {
                    return Ok(Some((Expr::Column(i), ty)));
                }
                if x.is_row_independent() {
                    return Ok(Some((x, ty)));
                }
            }
            Err(_) => self.params = saved,
        }
        if let ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) = e {
            // Resolves in the outer scopes if not here at all.
            if let Some(i) = self.find_column(e, ctx.scope)? {
                if let Some(x) = dependent(i, ctx.scope, g) {
                    return Ok(Some(x));
                }
                return Err(Error::Grouping(format!(
                    "column \"{}\" must appear in the GROUP BY clause or be used in an aggregate function",
                    e.to_string().trim_matches('"')
                )));
            }
        }
        Ok(None)
    }

    /// `GROUPING(a, b, ...)`: a bit per argument, the first the most
    /// significant, set when the row's grouping set leaves that key out
    /// (the row totals over it). Each argument must be a GROUP BY key.
    fn grouping_call(&mut self, f: &ast::Function, ctx: &Ctx, g: &RefCell<Grouping>) -> Result<Typed> {
        let args = self.function_args(f, &Ctx::plain(ctx.scope))?;
        if args.is_empty() || args.len() > 31 {
            return Err(Error::UndefinedFunction(format!("grouping() with {} arguments", args.len())));
        }
        let g = g.borrow();
        let mut positions = Vec::with_capacity(args.len());
        for (x, _) in &args {
            let key = format!("{x:?}");
            let Some(at) = g.group_keys.iter().position(|k| *k == key) else {
                return Err(Error::Grouping(
                    "arguments to GROUPING must be grouping expressions of the associated query level".into(),
                ));
            };
            positions.push(at);
        }
        let mask = |set: &[usize]| positions.iter().fold(0i32, |m, p| (m << 1) | i32::from(!set.contains(p)));
        let e = match &g.sets {
            None => Expr::Literal(Value::Integer(0)),
            Some(sets) => Expr::Case(
                Some(Box::new(Expr::Column(g.group.len() - 1))),
                sets.iter()
                    .enumerate()
                    .map(|(i, set)| {
                        (Expr::Literal(Value::Integer(i as i32)), Expr::Literal(Value::Integer(mask(set))))
                    })
                    .collect(),
                None,
            ),
        };
        Ok((e, Some(DataType::Integer)))
    }

    fn find_column(&self, e: &ast::Expr, scope: &Scope) -> Result<Option<usize>> {
        match e {
            ast::Expr::Identifier(id) => scope.find(None, &ident(id)),
            ast::Expr::CompoundIdentifier(ids) if ids.len() >= 2 => {
                scope.find(Some(&ident(&ids[ids.len() - 2])), &ident(&ids[ids.len() - 1]))
            }
            _ => Ok(None),
        }
    }

    fn column(&mut self, rel: Option<&str>, name: &str, ctx: &Ctx) -> Result<Typed> {
        if let Some(i) = ctx.scope.find(rel, name)? {
            return Ok((Expr::Column(i), ctx.scope.cols[i].ty.clone()));
        }
        let mut offset = self.outer_width();
        for s in self.outer.iter().rev() {
            offset -= s.cols.len();
            if let Some(i) = s.find(rel, name)? {
                return Ok((Expr::Outer(offset + i), s.cols[i].ty.clone()));
            }
        }
        if rel.is_none() {
            if let Some(i) = ctx.scope.scalar_row(name) {
                return Ok((Expr::Column(i), ctx.scope.cols[i].ty.clone()));
            }
            let mut offset = self.outer_width();
            for s in self.outer.iter().rev() {
                offset -= s.cols.len();
                if let Some(i) = s.scalar_row(name) {
                    return Ok((Expr::Outer(offset + i), s.cols[i].ty.clone()));
                }
            }
            // Niladic functions written without parentheses.
            match name {
                "current_timestamp" | "current_date" | "localtimestamp" | "localtime" | "current_user"
                | "session_user" | "user" | "current_schema" | "current_catalog" => {
                    let n = if name == "current_catalog" { "current_database" } else { name };
                    if let Some(t) = self.catalog_call(n, vec![])? {
                        return Ok(t);
                    }
                    return self.call(n, vec![]);
                }
                _ => {}
            }
        }
        Err(match rel {
            Some(r) if !ctx.scope.has_rel(r) && !self.outer.iter().any(|s| s.has_rel(r)) => {
                Error::other("42P01", format!("missing FROM-clause entry for table \"{r}\""))
            }
            Some(r) => Error::UndefinedColumn(format!("{r}.{name}")),
            None => Error::UndefinedColumn(format!("\"{name}\"")),
        })
    }

    fn value(&mut self, v: &ast::Value) -> Result<Typed> {
        use ast::Value as V;
        Ok(match v {
            V::Number(s, _) => number_literal(s)?,
            V::SingleQuotedString(s)
            | V::EscapedStringLiteral(s)
            | V::UnicodeStringLiteral(s)
            | V::NationalStringLiteral(s) => (Expr::Literal(Value::Text(s.clone())), None),
            V::DollarQuotedString(d) => (Expr::Literal(Value::Text(d.value.clone())), None),
            V::Boolean(b) => (Expr::Literal(Value::Boolean(*b)), Some(DataType::Boolean)),
            V::Null => (Expr::Literal(Value::Null), None),
            V::Placeholder(p) => {
                let n: usize = p
                    .strip_prefix('$')
                    .and_then(|n| n.parse().ok())
                    .filter(|n| (1..=65535).contains(n))
                    .ok_or_else(|| Error::Syntax(format!("syntax error at or near \"{p}\"")))?;
                if self.params.len() < n {
                    self.params.resize(n, None);
                }
                (Expr::Param(n - 1), self.params[n - 1].clone())
            }
            V::HexStringLiteral(h) => {
                (Expr::Literal(Value::parse(&format!("\\x{h}"), &DataType::Bytea)?), Some(DataType::Bytea))
            }
            other => return Err(Error::unsupported(format!("literal {other}"))),
        })
    }

    /// Makes two operands comparable: untyped ones take the other's type,
    /// and a `character(n)` beside another string type is compared as the
    /// text it casts to, without its trailing blanks (so `'a'::char(3)`
    /// equals `'a'::text`, as in PostgreSQL).
    pub(crate) fn unify(&mut self, l: Typed, r: Typed) -> Result<(Typed, Typed)> {
        let l = if l.1.is_none() { self.coerce_untyped(l, &r.1.clone())? } else { l };
        let r = if r.1.is_none() { self.coerce_untyped(r, &l.1.clone())? } else { r };
        let padded = |t: &Option<DataType>| matches!(t, Some(DataType::Char(_)));
        let unpadded =
            |t: &Option<DataType>| matches!(t, Some(t) if t.is_string() && !matches!(t, DataType::Char(_)));
        let l = if padded(&l.1) && unpadded(&r.1) { self.call("rtrim", vec![l])? } else { l };
        let r = if padded(&r.1) && unpadded(&l.1) { self.call("rtrim", vec![r])? } else { r };
        // A row value against a composite type's: converted to the type.
        let anonymous = |t: &Option<DataType>| matches!(t, Some(DataType::Composite(c)) if c.is_anonymous());
        let named = |t: &Option<DataType>| matches!(t, Some(DataType::Composite(c)) if !c.is_anonymous());
        let to = |(e, _): Typed, t: &Option<DataType>| -> Typed {
            let t = t.clone().expect("a named composite type");
            (Expr::Cast(Box::new(e), t.clone()), Some(t))
        };
        let l = if anonymous(&l.1) && named(&r.1) { to(l, &r.1) } else { l };
        let r = if anonymous(&r.1) && named(&l.1) { to(r, &l.1) } else { r };
        Ok((l, r))
    }

    fn comparable(&mut self, a: &ast::Expr, b: &ast::Expr, ctx: &Ctx) -> Result<(Expr, Expr)> {
        let l = self.expr(a, ctx)?;
        let r = self.expr(b, ctx)?;
        let (l, r) = self.unify(l, r)?;
        Ok((l.0, r.0))
    }

    /// Binds a chain of ANDs or of ORs (`a OR b OR c ...`, however
    /// parenthesised) without recursing along it, as a balanced tree: the
    /// parser nests such a chain once per term, and a chain of ten
    /// thousand terms is ordinary in generated SQL. Both operators are
    /// associative in three-valued logic, so the grouping changes nothing
    /// but the depth.
    fn chain(&mut self, e: &ast::Expr, op: &ast::BinaryOperator, ctx: &Ctx) -> Result<Typed> {
        let (which, bop) =
            if matches!(op, ast::BinaryOperator::And) { ("AND", BinOp::And) } else { ("OR", BinOp::Or) };
        let mut terms = Vec::new();
        let mut todo = vec![e];
        while let Some(x) = todo.pop() {
            match x {
                ast::Expr::BinaryOp { left, op: o, right } if o == op => {
                    todo.push(right);
                    todo.push(left);
                }
                ast::Expr::Nested(inner) if matches!(&**inner, ast::Expr::BinaryOp { op: o, .. } if o == op) => {
                    todo.push(inner)
                }
                t => terms.push(t),
            }
        }
        let mut level = Vec::with_capacity(terms.len());
        for t in terms {
            let t = self.expr(t, ctx)?;
            level.push(self.expect_bool(t, which)?);
        }
        // Pairs neighbours level by level, so the terms keep their order.
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            let mut it = level.into_iter();
            while let Some(a) = it.next() {
                next.push(match it.next() {
                    Some(b) => Expr::Binary(bop, Box::new(a), Box::new(b)),
                    None => a,
                });
            }
            level = next;
        }
        Ok((level.pop().unwrap_or(Expr::bool(bop == BinOp::And)), Some(DataType::Boolean)))
    }

    fn expect_bool(&mut self, e: Typed, what: &str) -> Result<Expr> {
        let e = self.coerce_untyped(e, &Some(DataType::Boolean))?;
        match &e.1 {
            None | Some(DataType::Boolean) => Ok(e.0),
            Some(t) => Err(Error::mismatch(format!(
                "argument of {what} must be type boolean, not type {}",
                t.sql_name()
            ))),
        }
    }

    /// Binds a binary operator over bound operands.
    pub(crate) fn binary(&mut self, op: &ast::BinaryOperator, l: Typed, r: Typed) -> Result<Typed> {
        use ast::BinaryOperator as B;
        let json = |t: &Option<DataType>| matches!(t, Some(DataType::Json | DataType::Jsonb));
        let ts = |t: &Option<DataType>| matches!(t, Some(DataType::TsVector | DataType::TsQuery));
        let (l, r) = if ts(&l.1) || ts(&r.1) || matches!(op, B::AtAt) {
            match self.ts_operator(op, l, r)? {
                Ok(done) => return Ok(done),
                Err(operands) => operands,
            }
        } else {
            (l, r)
        };
        let (l, r) = if json(&l.1) || json(&r.1) {
            match self.json_operator(op, l, r)? {
                Ok(done) => return Ok(done),
                Err(operands) => operands,
            }
        } else {
            (l, r)
        };
        let op = match op {
            B::Plus => BinOp::Add,
            B::Minus => BinOp::Sub,
            B::Multiply => BinOp::Mul,
            B::Divide => BinOp::Div,
            B::Modulo => BinOp::Mod,
            B::BitwiseAnd => BinOp::BitAnd,
            B::BitwiseOr => BinOp::BitOr,
            B::PGBitwiseXor => BinOp::BitXor,
            B::PGBitwiseShiftLeft => BinOp::ShiftLeft,
            B::PGBitwiseShiftRight => BinOp::ShiftRight,
            B::StringConcat => BinOp::Concat,
            B::And | B::Or => {
                let which = if matches!(op, B::And) { "AND" } else { "OR" };
                let l = self.expect_bool(l, which)?;
                let r = self.expect_bool(r, which)?;
                let op = if which == "AND" { BinOp::And } else { BinOp::Or };
                return Ok((Expr::Binary(op, Box::new(l), Box::new(r)), Some(DataType::Boolean)));
            }
            B::PGLikeMatch | B::PGILikeMatch | B::PGNotLikeMatch | B::PGNotILikeMatch => {
                let (l, r) = (
                    self.coerce_untyped(l, &Some(DataType::Text))?,
                    self.coerce_untyped(r, &Some(DataType::Text))?,
                );
                let neg = matches!(op, B::PGNotLikeMatch | B::PGNotILikeMatch);
                let ci = matches!(op, B::PGILikeMatch | B::PGNotILikeMatch);
                return Ok((Expr::Like(Box::new(l.0), Box::new(r.0), neg, ci), Some(DataType::Boolean)));
            }
            B::PGExp => return self.call("power", vec![l, r]),
            B::PGRegexMatch | B::PGRegexIMatch | B::PGRegexNotMatch | B::PGRegexNotIMatch => {
                let ci = matches!(op, B::PGRegexIMatch | B::PGRegexNotIMatch);
                let neg = matches!(op, B::PGRegexNotMatch | B::PGRegexNotIMatch);
                return self.regex(l, r, ci, neg);
            }
            B::AtArrow => return self.array_operator(super::arrays::ArrayOp::Contains, l, r),
            B::ArrowAt => return self.array_operator(super::arrays::ArrayOp::ContainedBy, l, r),
            B::PGOverlap => return self.array_operator(super::arrays::ArrayOp::Overlaps, l, r),
            B::PGCustomBinaryOperator(parts) => {
                let parts: Vec<String> = parts.iter().map(|p| p.to_lowercase()).collect();
                let op = super::system::custom_operator(&parts)?;
                return self.binary(&op, l, r);
            }
            other => comparison(other)?,
        };
        self.bound_binary(op, l, r)
    }

    /// Types a binary operator.
    pub(crate) fn bound_binary(&mut self, op: BinOp, l: Typed, r: Typed) -> Result<Typed> {
        let (l, r) = if op == BinOp::Concat {
            let (l, r) = match self.array_concat(l, r)? {
                Ok(done) => return Ok(done),
                Err(operands) => operands,
            };
            let l = if l.1.is_none() { self.coerce_untyped(l, &Some(DataType::Text))? } else { l };
            let r = if r.1.is_none() { self.coerce_untyped(r, &Some(DataType::Text))? } else { r };
            (l, r)
        } else if matches!(op, BinOp::Add | BinOp::Sub) && is_date_like(&l.1) && r.1.is_none() {
            // date + untyped: PostgreSQL resolves it to integer days.
            let r = self.coerce_untyped(r, &Some(DataType::Integer))?;
            (l, r)
        } else if op == BinOp::Add
            && matches!(l.1, Some(DataType::Timestamp | DataType::TimestampTz | DataType::Time))
            && r.1.is_none()
        {
            // timestamp + untyped: the only `+` with a timestamp on the
            // left takes an interval.
            let r = self.coerce_untyped(r, &Some(DataType::Interval))?;
            (l, r)
        } else if matches!(op, BinOp::Mul | BinOp::Div)
            && (l.1 == Some(DataType::Interval)) != (r.1 == Some(DataType::Interval))
        {
            // interval * untyped: a factor, as double precision.
            let l = self.coerce_untyped(l, &Some(DataType::Double))?;
            let r = self.coerce_untyped(r, &Some(DataType::Double))?;
            (l, r)
        } else {
            self.unify(l, r)?
        };
        let ty = result_type(op, &l.1, &r.1)?;
        Ok((Expr::Binary(op, Box::new(l.0), Box::new(r.0)), ty))
    }

    fn case(
        &mut self,
        operand: Option<&ast::Expr>,
        conditions: &[ast::CaseWhen],
        else_result: Option<&ast::Expr>,
        ctx: &Ctx,
    ) -> Result<Typed> {
        let op = operand.map(|o| self.expr(o, ctx)).transpose()?;
        let mut whens = Vec::new();
        let mut results = Vec::new();
        for w in conditions {
            let cond = self.expr(&w.condition, ctx)?;
            let cond = match &op {
                Some(o) => self.unify(o.clone(), cond)?.1 .0,
                None => self.expect_bool(cond, "CASE/WHEN")?,
            };
            whens.push(cond);
            results.push(self.expr(&w.result, ctx)?);
        }
        let els = else_result.map(|e| self.expr(e, ctx)).transpose()?;
        let mut all: Vec<Typed> = results;
        if let Some(e) = els {
            all.push(e);
        }
        let (all, ty) = self.common_type(all, "CASE")?;
        let mut all = all.into_iter();
        let whens = whens.into_iter().zip(all.by_ref()).collect::<Vec<_>>();
        let els = if else_result.is_some() { all.next().map(Box::new) } else { None };
        Ok((Expr::Case(op.map(|o| Box::new(o.0)), whens, els), ty))
    }

    /// Resolves the common type of branch results (CASE, COALESCE, UNION),
    /// coercing untyped ones.
    pub(crate) fn common_type(
        &mut self,
        items: Vec<Typed>,
        what: &str,
    ) -> Result<(Vec<Expr>, Option<DataType>)> {
        let mut ty: Option<DataType> = None;
        for (_, t) in &items {
            if let Some(t) = t {
                ty = Some(match &ty {
                    None => t.clone(),
                    Some(cur) => wider(cur, t).ok_or_else(|| {
                        Error::mismatch(format!(
                            "{what} types {} and {} cannot be matched",
                            cur.sql_name(),
                            t.sql_name()
                        ))
                    })?,
                });
            }
        }
        let ty = ty
            .or(Some(DataType::Text))
            .filter(|_| items.iter().any(|(_, t)| t.is_some()) || !items.is_empty());
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let (e, t) = self.coerce_untyped(item, &ty)?;
            out.push(match (&t, &ty) {
                (Some(a), Some(b)) if a != b && !same_family_int(a, b) => Expr::Cast(Box::new(e), b.clone()),
                _ => e,
            });
        }
        Ok((out, ty))
    }

    /// Binds a subquery with the current scope as its outer scope.
    pub(crate) fn subquery(&mut self, q: &ast::Query, ctx: &Ctx) -> Result<(Plan, Vec<OutputColumn>)> {
        // In a grouped context the row is the aggregate's output, which a
        // correlated reference cannot address: such a subquery sees no
        // columns of this level.
        let pushed = if ctx.grouping.is_some() { Scope::default() } else { ctx.scope.clone() };
        self.outer.push(pushed);
        let out = self.query(q);
        self.outer.pop();
        out
    }

    fn function(&mut self, f: &ast::Function, ctx: &Ctx) -> Result<Typed> {
        let name = function_name(f)?;
        if agg_func(f).is_some() {
            return Err(Error::Grouping(format!("aggregate functions are not allowed here: {name}")));
        }
        if f.over.is_some() {
            return self.window_call(f, ctx);
        }
        if let (true, ast::FunctionArguments::Subquery(q)) = (name == "array", &f.args) {
            return self.array_subquery(q, ctx);
        }
        if let ast::FunctionArguments::List(list) = &f.args {
            let named = |a: &ast::FunctionArg| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::BinaryOp { op, .. })) => {
                    *op == ast::BinaryOperator::Assignment
                }
                ast::FunctionArg::Unnamed(_) => false,
                _ => true,
            };
            if list.args.iter().any(named) {
                // Named arguments: only routines have parameter names.
                let (args, names) = self.named_args(&list.args, ctx)?;
                return match self.find_routine(&name, &args, &names, false)? {
                    Some((r, place)) => self.routine_call(r, &place, args),
                    None => {
                        let types: Vec<_> = args.iter().map(|a| a.1.clone()).collect();
                        Err(Error::UndefinedFunction(crate::planner::routines::call_text(
                            &name, &types, &names,
                        )))
                    }
                };
            }
        }
        let args = self.function_args(f, ctx)?;
        match name.as_str() {
            "coalesce" => {
                let (exprs, ty) = self.common_type(args, "COALESCE")?;
                Ok((Expr::Coalesce(exprs), ty))
            }
            "nullif" => {
                let [a, b]: [Typed; 2] =
                    args.try_into().map_err(|_| Error::UndefinedFunction("nullif".into()))?;
                let (a, b) = self.unify(a, b)?;
                let ty = a.1.clone();
                Ok((Expr::NullIf(Box::new(a.0), Box::new(b.0)), ty))
            }
            "nextval" | "currval" | "setval" => self.sequence_call(&name, args),
            "enum_first" | "enum_last" | "enum_range" if args.len() == 1 => {
                let (v, ty) = crate::enums::type_function(self.catalog, &name, &args[0].1)?;
                Ok((Expr::Literal(v), Some(ty)))
            }
            "enum_range" if args.len() == 2 => {
                let (all, ty) = crate::enums::range_labels(self.catalog, &args[0].1, &args[1].1)?;
                let elem = ty.element().cloned();
                let mut bounds = Vec::new();
                for a in args {
                    match self.coerce_untyped(a, &elem)? {
                        (Expr::Literal(v), _) => bounds.push(v),
                        _ => return Err(Error::unsupported("enum_range with bounds that are not constants")),
                    }
                }
                Ok((Expr::Literal(crate::enums::range_between(&all, &bounds[0], &bounds[1])), Some(ty)))
            }
            "current_time" => Err(Error::unsupported("type time with time zone")),
            // The argument's type, known when binding: `unknown` for an
            // untyped literal, as PostgreSQL says.
            "pg_typeof" if args.len() == 1 => {
                let name = functions::type_label(args[0].1.as_ref());
                Ok((Expr::Literal(Value::Text(name)), Some(DataType::Text)))
            }
            "row" => self.row_value(args),
            _ if super::tsearch::is_ts_function(&name) => match self.ts_function(&name, args)? {
                Ok(done) => Ok(done),
                Err(args) => self.plain_call(&name, args),
            },
            _ if name.starts_with("array_") || matches!(name.as_str(), "cardinality" | "string_to_array") => {
                match self.array_function(&name, args)? {
                    Ok(done) => Ok(done),
                    Err(args) => self.plain_call(&name, args),
                }
            }
            _ if name.starts_with("json") || name.starts_with("to_json") => {
                match self.json_function(&name, args)? {
                    Ok(done) => Ok(done),
                    Err(args) => self.plain_call(&name, args),
                }
            }
            _ => self.plain_call(&name, args),
        }
    }

    /// A call of a catalog function, a built-in scalar function or a
    /// routine, in that order.
    fn plain_call(&mut self, name: &str, args: Vec<Typed>) -> Result<Typed> {
        if crate::system::functions::resolve(name, args.len()).is_some() {
            return Ok(self.catalog_call(name, args)?.unwrap_or((Expr::Literal(Value::Null), None)));
        }
        let types: Vec<Option<DataType>> = args.iter().map(|a| a.1.clone()).collect();
        if functions::resolve(name, &types).is_none() {
            if let Some((r, place)) = self.find_routine(name, &args, &[], false)? {
                return self.routine_call(r, &place, args);
            }
        }
        self.call(name, args)
    }

    pub(crate) fn function_args(&mut self, f: &ast::Function, ctx: &Ctx) -> Result<Vec<Typed>> {
        match &f.args {
            ast::FunctionArguments::None => Ok(vec![]),
            ast::FunctionArguments::Subquery(_) => {
                Err(Error::unsupported("a subquery as function arguments"))
            }
            ast::FunctionArguments::List(list) => list
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => self.expr(e, ctx),
                    other => Err(Error::unsupported(format!("function argument {other}"))),
                })
                .collect(),
        }
    }

    /// Calls a scalar built-in.
    pub(crate) fn call(&mut self, name: &str, args: Vec<Typed>) -> Result<Typed> {
        let types: Vec<Option<DataType>> = args.iter().map(|a| a.1.clone()).collect();
        let Some(f) = functions::resolve(name, &types) else {
            if name == "generate_series" {
                // It exists, as a set-returning function: in FROM, or as the
                // one set-returning call of a select list without aggregates.
                return Err(Error::unsupported(
                    "generate_series with an aggregate or another set-returning call in the same select list",
                ));
            }
            let list = types
                .iter()
                .map(|t| t.as_ref().map_or("unknown".to_string(), |t| t.sql_name()))
                .collect::<Vec<_>>();
            return Err(Error::UndefinedFunction(format!("{name}({})", list.join(", "))));
        };
        let f = f?;
        let mut exprs = Vec::with_capacity(args.len());
        for (e, t) in args {
            // Untyped parameters of functions read as text.
            let (e, _) =
                if t.is_none() { self.coerce_untyped((e, t), &Some(DataType::Text))? } else { (e, t) };
            exprs.push(e);
        }
        let ret = f.ret.clone();
        Ok((Expr::Func(f, exprs), ret))
    }

    fn sequence_call(&mut self, name: &str, args: Vec<Typed>) -> Result<Typed> {
        let mut args = args.into_iter();
        let seq = match args.next() {
            Some((Expr::Literal(Value::Text(seq)), _)) => seq,
            // `'name'::regclass`, already an OID.
            Some((Expr::Literal(Value::Integer(oid)), _)) => {
                let snap = self.catalog.snapshot()?;
                match snap.rel(oid) {
                    Some(crate::system::snapshot::RelRef::Sequence(q)) => {
                        format!(
                            "{}.{}",
                            crate::names::quote_ident(&q.schema),
                            crate::names::quote_ident(&q.name)
                        )
                    }
                    _ => {
                        return Err(Error::other(
                            "42809",
                            format!("relation with OID {oid} is not a sequence"),
                        ))
                    }
                }
            }
            _ => return Err(Error::unsupported(format!("{name} with a non-constant sequence name"))),
        };
        let obj = sqlparser_object_name(&seq)?;
        let parts = object_parts(&obj)?;
        let seq = match parts.as_slice() {
            [t] => {
                // A stored default names a sequence by its engine name,
                // whatever the search path of the session using it.
                let found = self
                    .search_path
                    .iter()
                    .map(|s| qualify(s, t))
                    .find(|n| self.catalog.has_sequence(n))
                    .or_else(|| self.catalog.has_sequence(t).then(|| t.clone()));
                found.ok_or_else(|| Error::UndefinedTable(t.clone()))?
            }
            [s, t] => qualify(s, t),
            _ => return Err(Error::Syntax(format!("improper relation name: {seq}"))),
        };
        if !self.catalog.has_sequence(&seq) {
            return Err(Error::UndefinedTable(seq));
        }
        let op = match name {
            "nextval" => SeqOp::Next,
            "currval" => SeqOp::Current,
            _ => SeqOp::Set,
        };
        use crate::privileges::{SELECT, UPDATE, USAGE};
        match op {
            SeqOp::Next => self.need(ObjectKind::Sequence, &seq, USAGE | UPDATE, true),
            SeqOp::Current => self.need(ObjectKind::Sequence, &seq, SELECT | USAGE, true),
            _ => self.need(ObjectKind::Sequence, &seq, UPDATE, false),
        }
        let mut rest = Vec::new();
        for (i, a) in args.enumerate() {
            let want = if i == 0 { DataType::BigInt } else { DataType::Boolean };
            rest.push(self.coerce_untyped(a, &Some(want))?.0);
        }
        Ok((Expr::Sequence(op, seq, rest), Some(DataType::BigInt)))
    }

    pub(crate) fn aggregate(&mut self, func: AggFunc, f: &ast::Function, ctx: &Ctx) -> Result<AggCall> {
        let mut order = Vec::new();
        let (args, distinct) = match &f.args {
            ast::FunctionArguments::List(list) => {
                let distinct = matches!(list.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct));
                for c in &list.clauses {
                    match c {
                        ast::FunctionArgumentClause::OrderBy(keys) => {
                            for o in keys {
                                let e = self.expr(&o.expr, ctx)?.0;
                                let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
                                order.push(SortKey {
                                    expr: e,
                                    desc,
                                    nulls_first: o.options.nulls_first.unwrap_or(desc),
                                });
                            }
                        }
                        other => return Err(Error::unsupported(format!("aggregate clause {other}"))),
                    }
                }
                let mut args = Vec::new();
                for a in &list.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => {}
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                            args.push(self.expr(e, ctx)?)
                        }
                        other => return Err(Error::unsupported(format!("aggregate argument {other}"))),
                    }
                }
                (args, distinct)
            }
            _ => (vec![], false),
        };
        let func = if func == AggFunc::Count && args.is_empty() { AggFunc::CountStar } else { func };
        let want = match func {
            AggFunc::CountStar => 0,
            AggFunc::StringAgg | AggFunc::JsonbObjectAgg | AggFunc::JsonObjectAgg => 2,
            _ => 1,
        };
        if args.len() != want {
            return Err(Error::UndefinedFunction(format!(
                "{}() with {} arguments",
                function_name(f)?,
                args.len()
            )));
        }
        let arg_ty = args.first().and_then(|a| a.1.clone());
        let ty = match func {
            AggFunc::CountStar | AggFunc::Count => Some(DataType::BigInt),
            AggFunc::Sum => match &arg_ty {
                Some(DataType::SmallInt | DataType::Integer) => Some(DataType::BigInt),
                Some(DataType::BigInt | DataType::Numeric { .. }) | None => Some(unconstrained_numeric()),
                Some(DataType::Double) => Some(DataType::Double),
                Some(DataType::Interval) => Some(DataType::Interval),
                Some(t) => return Err(Error::UndefinedFunction(format!("sum({})", t.sql_name()))),
            },
            AggFunc::Avg => match &arg_ty {
                Some(DataType::Double) => Some(DataType::Double),
                Some(DataType::Interval) => Some(DataType::Interval),
                Some(
                    DataType::SmallInt | DataType::Integer | DataType::BigInt | DataType::Numeric { .. },
                )
                | None => Some(unconstrained_numeric()),
                Some(t) => return Err(Error::UndefinedFunction(format!("avg({})", t.sql_name()))),
            },
            AggFunc::Min | AggFunc::Max | AggFunc::AnyValue => arg_ty.clone().or(Some(DataType::Text)),
            AggFunc::BoolAnd | AggFunc::BoolOr => Some(DataType::Boolean),
            AggFunc::StringAgg => Some(DataType::Text),
            AggFunc::ArrayAgg => Some(DataType::array_of(arg_ty.clone().unwrap_or(DataType::Text))?),
            AggFunc::JsonbAgg | AggFunc::JsonbObjectAgg => Some(DataType::Jsonb),
            AggFunc::JsonAgg | AggFunc::JsonObjectAgg => Some(DataType::Json),
        };
        let mut bound = Vec::new();
        for (i, a) in args.into_iter().enumerate() {
            let want = match func {
                AggFunc::StringAgg => Some(DataType::Text),
                AggFunc::BoolAnd | AggFunc::BoolOr => Some(DataType::Boolean),
                AggFunc::JsonbObjectAgg | AggFunc::JsonObjectAgg if a.1.is_none() => Some(DataType::Text),
                _ if i == 0 && a.1.is_none() => Some(DataType::Text),
                _ => None,
            };
            bound.push(self.coerce_untyped(a, &want)?.0);
        }
        let filter = f.filter.as_ref().map(|e| self.expr(e, ctx).map(|t| t.0)).transpose()?;
        Ok(AggCall { func, args: bound, distinct, filter, order, ty })
    }
}

/// Whether `f` is an aggregate call.
pub(crate) fn agg_func(f: &ast::Function) -> Option<AggFunc> {
    if f.over.is_some() {
        return None;
    }
    agg_name(&function_name(f).ok()?)
}

/// Adds aggregate `call` to a grouped query's aggregates (once, however
/// often it is written): the column of the aggregate's output it is.
fn add_aggregate(g: &RefCell<Grouping>, call: AggCall) -> Typed {
    let key = format!("{:?}/{:?}/{}/{:?}/{:?}", call.func, call.args, call.distinct, call.filter, call.order);
    let mut g = g.borrow_mut();
    let ng = g.group.len();
    let ty = call.ty.clone();
    let g = &mut *g;
    let at = intern(&mut g.agg_keys, &mut g.aggs, key, call);
    (Expr::Column(ng + at), ty)
}

/// Column `i` of `scope` in a query grouped by every primary key column
/// of its table (PostgreSQL's functional dependency): one value per group,
/// read as `any_value` of the column. `None` for any other column, and
/// under GROUPING SETS, whose sets may leave the key out.
fn dependent(i: usize, scope: &Scope, g: &RefCell<Grouping>) -> Option<Typed> {
    let col = scope.cols.get(i)?;
    let rel = col.rel.as_deref()?;
    {
        let gb = g.borrow();
        if gb.sets.is_some() {
            return None;
        }
        let (_, key) = gb.keys.iter().find(|(alias, _)| alias == rel)?;
        let grouped = |c: &String| matches!(scope.find(Some(rel), c), Ok(Some(j)) if gb.group_keys.contains(&format!("{:?}", Expr::Column(j))));
        if key.is_empty() || !key.iter().all(grouped) {
            return None;
        }
    }
    let call = AggCall {
        func: AggFunc::AnyValue,
        args: vec![Expr::Column(i)],
        distinct: false,
        filter: None,
        order: vec![],
        ty: col.ty.clone(),
    };
    Some(add_aggregate(g, call))
}

/// The aggregate function called `name`, if it is one.
pub(crate) fn agg_name(name: &str) -> Option<AggFunc> {
    Some(match name {
        "count" => AggFunc::Count,
        "sum" => AggFunc::Sum,
        "avg" => AggFunc::Avg,
        "min" => AggFunc::Min,
        "any_value" => AggFunc::AnyValue,
        "max" => AggFunc::Max,
        "bool_and" | "every" => AggFunc::BoolAnd,
        "bool_or" => AggFunc::BoolOr,
        "string_agg" => AggFunc::StringAgg,
        "array_agg" => AggFunc::ArrayAgg,
        "jsonb_agg" => AggFunc::JsonbAgg,
        "json_agg" => AggFunc::JsonAgg,
        "jsonb_object_agg" => AggFunc::JsonbObjectAgg,
        "json_object_agg" => AggFunc::JsonObjectAgg,
        _ => return None,
    })
}

/// Whether an expression contains an aggregate call (not inside a subquery).
pub(crate) fn has_aggregate(e: &ast::Expr) -> bool {
    use ast::Expr as A;
    let any = |list: &[ast::Expr]| list.iter().any(has_aggregate);
    match e {
        A::Function(f) => {
            let in_window = match &f.over {
                Some(ast::WindowType::WindowSpec(w)) => {
                    any(&w.partition_by) || w.order_by.iter().any(|o| has_aggregate(&o.expr))
                }
                _ => false,
            };
            agg_func(f).is_some()
                || in_window
                || match &f.args {
                    ast::FunctionArguments::List(l) => l.args.iter().any(|a| match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => has_aggregate(x),
                        _ => false,
                    }),
                    _ => false,
                }
        }
        A::BinaryOp { left, right, .. } => has_aggregate(left) || has_aggregate(right),
        A::UnaryOp { expr, .. }
        | A::Nested(expr)
        | A::Cast { expr, .. }
        | A::IsNull(expr)
        | A::IsNotNull(expr)
        | A::IsTrue(expr)
        | A::IsFalse(expr)
        | A::IsNotTrue(expr)
        | A::IsNotFalse(expr)
        | A::Extract { expr, .. }
        | A::Ceil { expr, .. }
        | A::Floor { expr, .. } => has_aggregate(expr),
        A::IsDistinctFrom(a, b) | A::IsNotDistinctFrom(a, b) => has_aggregate(a) || has_aggregate(b),
        A::InList { expr, list, .. } => has_aggregate(expr) || any(list),
        A::Between { expr, low, high, .. } => {
            has_aggregate(expr) || has_aggregate(low) || has_aggregate(high)
        }
        A::Like { expr, pattern, .. } | A::ILike { expr, pattern, .. } => {
            has_aggregate(expr) || has_aggregate(pattern)
        }
        A::Case { operand, conditions, else_result, .. } => {
            operand.as_deref().is_some_and(has_aggregate)
                || conditions.iter().any(|c| has_aggregate(&c.condition) || has_aggregate(&c.result))
                || else_result.as_deref().is_some_and(has_aggregate)
        }
        A::InSubquery { expr, .. } => has_aggregate(expr),
        _ => false,
    }
}

pub(crate) fn comparison(op: &ast::BinaryOperator) -> Result<BinOp> {
    use ast::BinaryOperator as B;
    Ok(match op {
        B::Eq => BinOp::Eq,
        B::NotEq => BinOp::NotEq,
        B::Lt => BinOp::Lt,
        B::LtEq => BinOp::LtEq,
        B::Gt => BinOp::Gt,
        B::GtEq => BinOp::GtEq,
        other => return Err(Error::UndefinedFunction(format!("operator {other}")).into_operator()),
    })
}

impl Error {
    fn into_operator(self) -> Error {
        match self {
            Error::UndefinedFunction(m) => {
                Error::TypeMismatch { code: "42883", message: format!("{m} does not exist") }
            }
            e => e,
        }
    }
}

fn number_literal(s: &str) -> Result<Typed> {
    if !s.contains(['.', 'e', 'E']) {
        if let Ok(v) = s.parse::<i32>() {
            return Ok((Expr::Literal(Value::Integer(v)), Some(DataType::Integer)));
        }
        if let Ok(v) = s.parse::<i64>() {
            return Ok((Expr::Literal(Value::BigInt(v)), Some(DataType::BigInt)));
        }
    }
    let ty = unconstrained_numeric();
    Ok((Expr::Literal(Value::parse(s, &ty)?), Some(ty)))
}

fn negate_literal(v: Value) -> Result<Value> {
    Ok(match v {
        Value::Integer(i) => {
            Value::Integer(i.checked_neg().ok_or_else(|| Error::other("22003", "integer out of range"))?)
        }
        Value::BigInt(i) => {
            Value::BigInt(i.checked_neg().ok_or_else(|| Error::other("22003", "bigint out of range"))?)
        }
        Value::SmallInt(i) => {
            Value::SmallInt(i.checked_neg().ok_or_else(|| Error::other("22003", "smallint out of range"))?)
        }
        Value::Numeric(d) => {
            // -2147483648 arrives as numeric 2147483648 negated.
            let n = -d;
            if n.fract().is_zero() {
                if let Ok(i) = i32::try_from(n.mantissa() / 10i128.pow(n.scale())) {
                    if Decimal::from(i) == n && n.scale() == 0 {
                        return Ok(Value::Integer(i));
                    }
                }
            }
            Value::Numeric(n)
        }
        other => crate::functions::operators::negate(other)?,
    })
}

/// `numeric` without modifiers.
pub(crate) fn unconstrained_numeric() -> DataType {
    DataType::Numeric { precision: None, scale: None }
}

/// `t` without its trailing blanks, padded with blanks to `n` characters.
fn blank_padded(t: &str, n: usize) -> String {
    let t = t.trim_end_matches(' ');
    let len = t.chars().count();
    if len >= n {
        t.to_string()
    } else {
        format!("{t}{}", " ".repeat(n - len))
    }
}

/// A type with its length/precision limits dropped, for parsing literals
/// compared against a column (`varchar(3) = 'abcd'` must not fail).
fn widen(t: &DataType) -> DataType {
    match t {
        DataType::Varchar(_) | DataType::Char(_) => DataType::Text,
        DataType::Numeric { .. } => unconstrained_numeric(),
        t => t.clone(),
    }
}

fn is_numeric(t: &DataType) -> bool {
    matches!(
        t,
        DataType::SmallInt
            | DataType::Integer
            | DataType::Oid
            | DataType::BigInt
            | DataType::Double
            | DataType::Numeric { .. }
    )
}

/// An integer type. `oid` counts as one: its values are `integer`s, so it
/// compares with the integers without a cast, as PostgreSQL's implicit
/// casts between them allow.
pub(crate) fn is_int(t: &DataType) -> bool {
    matches!(t, DataType::SmallInt | DataType::Integer | DataType::Oid | DataType::BigInt)
}

fn same_family_int(a: &DataType, b: &DataType) -> bool {
    (is_int(a) && is_int(b)) || (a.is_string() && b.is_string())
}

fn is_date_like(t: &Option<DataType>) -> bool {
    matches!(t, Some(DataType::Date))
}

fn rank(t: &DataType) -> u8 {
    match t {
        DataType::SmallInt => 1,
        DataType::Integer | DataType::Oid => 2,
        DataType::BigInt => 3,
        DataType::Numeric { .. } => 4,
        DataType::Double => 5,
        _ => 0,
    }
}

/// The wider of two types of one family (for CASE, UNION, arithmetic).
pub(crate) fn wider(a: &DataType, b: &DataType) -> Option<DataType> {
    if a == b {
        return Some(a.clone());
    }
    if is_numeric(a) && is_numeric(b) {
        let w = if rank(a) >= rank(b) { a } else { b };
        return Some(match w {
            DataType::Numeric { .. } => unconstrained_numeric(),
            w => w.clone(),
        });
    }
    if a.is_string() && b.is_string() {
        return Some(DataType::Text);
    }
    match (a, b) {
        (DataType::Array(x), DataType::Array(y)) => wider(x, y).map(|e| DataType::Array(Box::new(e))),
        // Rows of as many fields compare; a named type is the common one.
        (DataType::Composite(x), DataType::Composite(y)) if x.fields().len() == y.fields().len() => {
            Some(if x.is_anonymous() { b.clone() } else { a.clone() })
        }
        (DataType::Date, DataType::Timestamp) | (DataType::Timestamp, DataType::Date) => {
            Some(DataType::Timestamp)
        }
        (DataType::TimestampTz, DataType::Date | DataType::Timestamp)
        | (DataType::Date | DataType::Timestamp, DataType::TimestampTz) => Some(DataType::TimestampTz),
        _ => None,
    }
}

fn comparable_types(a: &DataType, b: &DataType) -> bool {
    wider(a, b).is_some()
}

/// The result type of `l op r`, or PostgreSQL's "operator does not exist".
fn result_type(op: BinOp, l: &Option<DataType>, r: &Option<DataType>) -> Result<Option<DataType>> {
    let no_op = || {
        let n = |t: &Option<DataType>| t.as_ref().map_or("unknown".to_string(), |t| t.sql_name());
        Error::TypeMismatch {
            code: "42883",
            message: format!("operator does not exist: {} {} {}", n(l), op.symbol(), n(r)),
        }
    };
    if op.is_comparison() {
        return match (l, r) {
            (Some(a), Some(b)) if !comparable_types(a, b) => Err(no_op()),
            _ => Ok(Some(DataType::Boolean)),
        };
    }
    match op {
        BinOp::Concat => Ok(Some(DataType::Text)),
        BinOp::And | BinOp::Or => Ok(Some(DataType::Boolean)),
        BinOp::ShiftLeft | BinOp::ShiftRight => match (l, r) {
            (Some(a), Some(b)) if is_int(a) && is_int(b) => Ok(Some(a.clone())),
            (Some(a), None) if is_int(a) => Ok(Some(a.clone())),
            _ => Err(no_op()),
        },
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => match (l, r) {
            (Some(a), Some(b)) if is_int(a) && is_int(b) => Ok(wider(a, b)),
            (None, Some(t)) | (Some(t), None) if is_int(t) => Ok(Some(t.clone())),
            _ => Err(no_op()),
        },
        _ => match (l, r) {
            (Some(a), Some(b)) if is_numeric(a) && is_numeric(b) => Ok(wider(a, b)),
            (Some(DataType::Date), Some(b)) if is_int(b) && matches!(op, BinOp::Add | BinOp::Sub) => {
                Ok(Some(DataType::Date))
            }
            (Some(a), Some(DataType::Date)) if is_int(a) && op == BinOp::Add => Ok(Some(DataType::Date)),
            (Some(DataType::Date), Some(DataType::Date)) if op == BinOp::Sub => Ok(Some(DataType::Integer)),
            (Some(a), Some(b)) => datetime_result(op, a, b).map(Some).ok_or_else(no_op),
            (None, Some(t)) | (Some(t), None) if is_numeric(t) => Ok(Some(t.clone())),
            (None, None) => Ok(None),
            _ => Err(no_op()),
        },
    }
}

/// The result type of date/time arithmetic with intervals and times, as
/// PostgreSQL's operators give it; `None` where no operator exists.
fn datetime_result(op: BinOp, l: &DataType, r: &DataType) -> Option<DataType> {
    use BinOp::{Add, Div, Mul, Sub};
    use DataType::{Date, Interval, Time, Timestamp as Ts, TimestampTz as Tstz};
    Some(match (l, r, op) {
        (Ts | Tstz, Interval, Add | Sub) => l.clone(),
        (Interval, Ts | Tstz, Add) => r.clone(),
        (Date, Interval, Add | Sub) | (Interval, Date, Add) => Ts,
        (Date | Ts | Tstz, Date | Ts | Tstz, Sub) => Interval,
        (Interval, Interval, Add | Sub) => Interval,
        (Interval, n, Mul | Div) if is_numeric(n) => Interval,
        (n, Interval, Mul) if is_numeric(n) => Interval,
        (Time, Interval, Add | Sub) | (Interval, Time, Add) => Time,
        (Time, Time, Sub) => Interval,
        (Date, Time, Add) | (Time, Date, Add) => Ts,
        _ => return None,
    })
}

/// An `INTERVAL '...' [field [TO field]]` literal: a bare number counts in
/// the (last) field's unit; otherwise the text is read as interval input
/// and cut to the last field's precision, as PostgreSQL does
/// (`interval '1 day 2 hours' day` is `1 day`).
fn interval_literal(
    text: &str,
    (leading, last): (Option<&ast::DateTimeField>, Option<&ast::DateTimeField>),
) -> Result<centum_types::Interval> {
    use ast::DateTimeField as F;
    let Some(field) = last.or(leading) else { return Ok(centum_types::Interval::parse(text)?) };
    let unit = match field {
        F::Year | F::Years => "year",
        F::Month | F::Months => "month",
        F::Day | F::Days => "day",
        F::Hour | F::Hours => "hour",
        F::Minute | F::Minutes => "minute",
        F::Second | F::Seconds => "second",
        other => return Err(Error::Syntax(format!("interval field {other} is not supported"))),
    };
    let bare = text.trim().parse::<f64>().is_ok();
    let mut iv = if bare {
        centum_types::Interval::parse(&format!("{} {unit}", text.trim()))?
    } else {
        centum_types::Interval::parse(text)?
    };
    let cut = |micros: i64, step: i64| micros - micros % step;
    match unit {
        "year" => (iv.months, iv.days, iv.micros) = (iv.months - iv.months % 12, 0, 0),
        "month" => (iv.days, iv.micros) = (0, 0),
        "day" => iv.micros = 0,
        "hour" => iv.micros = cut(iv.micros, 3_600_000_000),
        "minute" => iv.micros = cut(iv.micros, 60_000_000),
        _ => {}
    }
    Ok(iv)
}

/// An explicit cast of a constant.
pub(crate) fn cast_value(v: Value, ty: &DataType) -> Result<Value> {
    crate::functions::operators::cast(v, ty)
}
