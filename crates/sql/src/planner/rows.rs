//! Binding row values: the constructors `ROW(a, b)` and `(a, b)`, field
//! selection `(composite).field`, and the comparison of two row
//! constructors, field by field.
//!
//! A row constructor's value is a [`Value::Composite`] of the anonymous
//! type `record`, its fields typed by what they hold; where a composite
//! type is expected (a column, a cast, the other side of a comparison) it
//! converts field by field. Two row constructors compare as the SQL
//! standard says, pair by pair from the left, so a NULL pair makes the
//! answer NULL unless an earlier pair decided it:
//!
//! ```text
//!   (a, b) = (x, y)    a = x AND b = y
//!   (a, b) <> (x, y)   a <> x OR b <> y
//!   (a, b) < (x, y)    a < x OR (a = x AND b < y)
//!   (a, b) <= (x, y)   a < x OR (a = x AND b <= y)
//! ```
//!
//! Any other composite values (columns, casts) compare as wholes, by
//! PostgreSQL's record order (see `centum_types::composite`).

use super::bind::{Binder, Ctx, Typed};
use super::expr::Expr;
use crate::error::{Error, Result};
use crate::system::CatalogFn;
use centum_types::{CompositeType, DataType, Value};
use sqlparser::ast;

/// The items of a row constructor: `(a, b)` or `ROW(a, ...)`.
pub(crate) fn row_items(e: &ast::Expr) -> Option<Vec<&ast::Expr>> {
    match e {
        ast::Expr::Tuple(items) => Some(items.iter().collect()),
        ast::Expr::Nested(inner) => row_items(inner),
        ast::Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("row") && f.over.is_none() => {
            let ast::FunctionArguments::List(list) = &f.args else {
                return matches!(f.args, ast::FunctionArguments::None).then(Vec::new);
            };
            list.args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect()
        }
        _ => None,
    }
}

impl Binder<'_> {
    /// A row value from bound fields; an untyped literal field is text.
    pub(crate) fn row_value(&mut self, fields: Vec<Typed>) -> Result<Typed> {
        let mut exprs = Vec::with_capacity(fields.len());
        let mut types = Vec::with_capacity(fields.len());
        for f in fields {
            let (e, t) = match f.1 {
                None => self.coerce_untyped(f, &Some(DataType::Text))?,
                Some(_) => f,
            };
            exprs.push(e);
            types.push(t.unwrap_or(DataType::Text));
        }
        let ty = DataType::Composite(CompositeType::anonymous(types));
        Ok((Expr::Catalog(CatalogFn::Row, exprs), Some(ty)))
    }

    /// `(a, b, ...)` in an expression: a row value.
    pub(crate) fn tuple(&mut self, items: &[ast::Expr], ctx: &Ctx<'_>) -> Result<Typed> {
        let fields = items.iter().map(|e| self.expr(e, ctx)).collect::<Result<Vec<_>>>()?;
        self.row_value(fields)
    }

    /// Applies the leading `.field` selections of `chain` to a composite
    /// value; returns what is left of the chain (array subscripts, say).
    pub(crate) fn select_fields<'c>(
        &mut self,
        mut value: Typed,
        mut chain: &'c [ast::AccessExpr],
    ) -> Result<(Typed, &'c [ast::AccessExpr])> {
        while let (
            Some(DataType::Composite(t)),
            [ast::AccessExpr::Dot(ast::Expr::Identifier(f)), rest @ ..],
        ) = (&value.1, chain)
        {
            let name = crate::names::ident(f);
            let Some(i) = t.field(&name) else {
                return Err(Error::other(
                    "42703",
                    format!("column \"{name}\" not found in data type {}", t.name()),
                ));
            };
            let ty = t.fields()[i].1.clone();
            let e = Expr::Catalog(CatalogFn::Field, vec![value.0, Expr::Literal(Value::Integer(i as i32))]);
            value = (e, Some(ty));
            chain = rest;
        }
        Ok((value, chain))
    }

    /// `row IN (row, ...)`: `row = item` for each item (pair by pair, as
    /// [`Binder::row_comparison`] binds it), joined by OR; NOT IN is the
    /// negation. An item that is not a row constructor compares with the
    /// row as a whole value.
    pub(crate) fn row_in_list(
        &mut self,
        row: &ast::Expr,
        list: &[ast::Expr],
        negated: bool,
        ctx: &Ctx<'_>,
    ) -> Result<Typed> {
        let left = row_items(row).unwrap_or_default();
        let mut any: Option<Typed> = None;
        for item in list {
            let eq = match row_items(item) {
                Some(right) => self.row_comparison(&ast::BinaryOperator::Eq, &left, &right, ctx)?,
                None => None,
            };
            let eq = match eq {
                Some(eq) => eq,
                None => {
                    let (l, r) = (self.expr(row, ctx)?, self.expr(item, ctx)?);
                    self.binary(&ast::BinaryOperator::Eq, l, r)?
                }
            };
            any = Some(match any {
                Some(acc) => self.binary(&ast::BinaryOperator::Or, acc, eq)?,
                None => eq,
            });
        }
        let any = any.ok_or_else(|| Error::Syntax("IN needs at least one item".into()))?;
        Ok(if negated { (Expr::Not(Box::new(any.0)), Some(DataType::Boolean)) } else { any })
    }

    /// `l op r` for two row constructors, pair by pair (see the module
    /// header); `None` when `op` is not a comparison.
    pub(crate) fn row_comparison(
        &mut self,
        op: &ast::BinaryOperator,
        l: &[&ast::Expr],
        r: &[&ast::Expr],
        ctx: &Ctx<'_>,
    ) -> Result<Option<Typed>> {
        use ast::BinaryOperator as B;
        let strict = match op {
            B::Eq | B::NotEq => None,
            B::Lt | B::LtEq => Some(B::Lt),
            B::Gt | B::GtEq => Some(B::Gt),
            _ => return Ok(None),
        };
        if l.len() != r.len() {
            return Err(Error::Syntax("unequal number of entries in row expressions".into()));
        }
        if l.is_empty() {
            return Err(Error::unsupported("comparison of empty rows"));
        }
        let pair = |this: &mut Self, i: usize, op: &ast::BinaryOperator| -> Result<Typed> {
            let a = this.expr(l[i], ctx)?;
            let b = this.expr(r[i], ctx)?;
            this.binary(op, a, b)
        };
        let last = l.len() - 1;
        let mut acc = pair(self, last, op)?;
        for i in (0..last).rev() {
            acc = match &strict {
                None => {
                    let joint = if matches!(op, B::Eq) { B::And } else { B::Or };
                    let here = pair(self, i, op)?;
                    self.binary(&joint, here, acc)?
                }
                Some(s) => {
                    let decided = pair(self, i, s)?;
                    let tied = pair(self, i, &B::Eq)?;
                    let rest = self.binary(&B::And, tied, acc)?;
                    self.binary(&B::Or, decided, rest)?
                }
            };
        }
        Ok(Some(acc))
    }
}
