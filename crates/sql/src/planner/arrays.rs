//! Binding arrays: `ARRAY[...]`, subscripts and slices, `op ANY/ALL
//! (array)`, the array operators and functions, for operands typed as
//! arrays (`integer[]`, ...). Each becomes a [`Builtin`] call whose result
//! type is worked out here (element type, array type, integer, boolean);
//! the implementations are in `functions::arrays`.
//!
//! Catalog columns that PostgreSQL declares as arrays (`conkey`,
//! `reloptions`) are array text in Centum's virtual catalog; calls on them
//! keep the text paths of `planner::system`, and a cast (`conkey::int2[]`)
//! makes a real array of one.

use super::bind::{wider, Binder, Typed};
use super::expr::Expr;
use crate::error::{Error, Result};
use crate::functions::arrays::{self as exec, builtin};
use crate::functions::operators::BinOp;
use crate::functions::ScalarImpl;
use crate::system::CatalogFn;
use centum_types::DataType;
use sqlparser::ast;

/// The array operators besides `||` and the comparisons.
#[derive(Clone, Copy)]
pub(crate) enum ArrayOp {
    /// `@>`
    Contains,
    /// `<@`
    ContainedBy,
    /// `&&`
    Overlaps,
}

fn is_array(t: &Option<DataType>) -> bool {
    matches!(t, Some(DataType::Array(_)))
}

impl Binder<'_> {
    /// `ARRAY[a, b, ...]`: elements of their common type.
    pub(crate) fn array_constructor(&mut self, items: Vec<Typed>) -> Result<Typed> {
        let (exprs, ty) = self.common_type(items, "ARRAY")?;
        let ty = DataType::array_of(ty.unwrap_or(DataType::Text))?;
        Ok((Expr::Catalog(CatalogFn::ArrayOf, exprs), Some(ty)))
    }

    /// Makes `e` of type `ty`: untyped operands take it, others are cast
    /// where their type differs.
    pub(crate) fn typed_as(&mut self, e: Typed, ty: &DataType) -> Result<Expr> {
        let (e, t) = self.coerce_untyped(e, &Some(ty.clone()))?;
        Ok(match t {
            Some(t) if t != *ty => Expr::Cast(Box::new(e), ty.clone()),
            _ => e,
        })
    }

    /// `a[i]` and `a[lo:hi]` on a bound array; `None` when `a` is not
    /// typed as an array (the text paths of `planner::system` handle it).
    pub(crate) fn array_subscript(
        &mut self,
        a: &Typed,
        chain: &[ast::AccessExpr],
        ctx: &super::bind::Ctx,
    ) -> Result<Option<Typed>> {
        let Some(DataType::Array(elem)) = &a.1 else { return Ok(None) };
        let elem = (**elem).clone();
        let int = DataType::Integer;
        let sub = match chain {
            [ast::AccessExpr::Subscript(s)] => s,
            [ast::AccessExpr::Subscript(_), ..] => {
                return Err(Error::other("0A000", "multidimensional arrays are not supported"));
            }
            _ => return Err(Error::unsupported("this kind of field access")),
        };
        Ok(Some(match sub {
            ast::Subscript::Index { index } => {
                let i = self.expr(index, ctx)?;
                let i = self.typed_as(i, &int)?;
                let f = builtin("array_element", Some(elem.clone()), true, exec::element);
                (Expr::Func(f, vec![a.0.clone(), i]), Some(elem))
            }
            ast::Subscript::Slice { lower_bound, upper_bound, stride: None } => {
                let mut bound = |b: &Option<ast::Expr>| -> Result<Expr> {
                    match b {
                        None => Ok(Expr::Literal(centum_types::Value::Null)),
                        Some(e) => {
                            let t = self.expr(e, ctx)?;
                            self.typed_as(t, &int)
                        }
                    }
                };
                let (lo, hi) = (bound(lower_bound)?, bound(upper_bound)?);
                let ty = a.1.clone();
                let f = builtin("array_slice", ty.clone(), false, exec::slice);
                (Expr::Func(f, vec![a.0.clone(), lo, hi]), ty)
            }
            ast::Subscript::Slice { .. } => return Err(Error::unsupported("array slices with a stride")),
        }))
    }

    /// `x op ANY (a)` / `x op ALL (a)` over an array typed as one (or a
    /// parameter or literal, which becomes an array of x's type); `None`
    /// when `a` is array text.
    pub(crate) fn quantified_array(
        &mut self,
        x: Typed,
        op: BinOp,
        all: bool,
        a: Typed,
    ) -> Result<Option<Typed>> {
        let elem = match (&a.1, &x.1) {
            (Some(DataType::Array(e)), _) => (**e).clone(),
            (None, t) => t.clone().unwrap_or(DataType::Text),
            _ => return Ok(None),
        };
        let Some(eval) = exec::quantified_impl(op, all) else {
            return Err(Error::unsupported(format!(
                "{} {} over an array",
                op.symbol(),
                if all { "ALL" } else { "ANY" }
            )));
        };
        let x = self.coerce_untyped(x, &Some(elem.clone()))?;
        if let Some(t) = &x.1 {
            if wider(t, &elem).is_none() {
                return Err(Error::TypeMismatch {
                    code: "42883",
                    message: format!(
                        "operator does not exist: {} {} {}",
                        t.sql_name(),
                        op.symbol(),
                        elem.sql_name()
                    ),
                });
            }
        }
        let array = DataType::array_of(elem)?;
        let (a, _) = self.coerce_untyped(a, &Some(array))?;
        let name = match (op, all) {
            (BinOp::Eq, false) => QUANTIFIED_ANY,
            (BinOp::NotEq, false) => "any_ne",
            (BinOp::Lt, false) => "any_lt",
            (BinOp::LtEq, false) => "any_le",
            (BinOp::Gt, false) => "any_gt",
            (BinOp::GtEq, false) => "any_ge",
            (BinOp::Eq, true) => "all_eq",
            (BinOp::NotEq, true) => "all_ne",
            (BinOp::Lt, true) => "all_lt",
            (BinOp::LtEq, true) => "all_le",
            (BinOp::Gt, true) => "all_gt",
            _ => "all_ge",
        };
        let f = builtin(name, Some(DataType::Boolean), false, eval);
        Ok(Some((Expr::Func(f, vec![x.0, a]), Some(DataType::Boolean))))
    }

    /// `a || b` where either side is an array; the operands back when
    /// neither is.
    pub(crate) fn array_concat(
        &mut self,
        l: Typed,
        r: Typed,
    ) -> Result<std::result::Result<Typed, (Typed, Typed)>> {
        // An untyped operand next to an array is an array of its type, as
        // PostgreSQL resolves `anyarray || unknown`.
        let (l, r) = match (&l.1, &r.1) {
            (Some(t @ DataType::Array(_)), None) => {
                let t = Some(t.clone());
                (l, self.coerce_untyped(r, &t)?)
            }
            (None, Some(t @ DataType::Array(_))) => {
                let t = Some(t.clone());
                (self.coerce_untyped(l, &t)?, r)
            }
            (a, b) if !is_array(a) && !is_array(b) => return Ok(Err((l, r))),
            _ => (l, r),
        };
        let types = [l.1.clone(), r.1.clone()];
        Ok(Ok(match (&l.1, &r.1) {
            (Some(a @ DataType::Array(_)), Some(b @ DataType::Array(_))) => {
                let ty = wider(a, b).ok_or_else(|| exec::no_function("array_cat", &types))?;
                let (l, r) = (self.typed_as(l, &ty)?, self.typed_as(r, &ty)?);
                (Expr::Func(builtin("array_cat", Some(ty.clone()), false, exec::cat), vec![l, r]), Some(ty))
            }
            (Some(DataType::Array(e)), _) => {
                let (ty, e) = (l.1.clone(), (**e).clone());
                let r = self.typed_as(r, &e)?;
                (Expr::Func(builtin("array_append", ty.clone(), false, exec::append), vec![l.0, r]), ty)
            }
            (_, Some(DataType::Array(e))) => {
                let (ty, e) = (r.1.clone(), (**e).clone());
                let l = self.typed_as(l, &e)?;
                (Expr::Func(builtin("array_prepend", ty.clone(), false, exec::prepend), vec![l, r.0]), ty)
            }
            _ => return Err(exec::no_function("array_cat", &types)),
        }))
    }

    /// `@>`, `<@`, `&&`.
    pub(crate) fn array_operator(&mut self, op: ArrayOp, l: Typed, r: Typed) -> Result<Typed> {
        let (symbol, name, eval): (&str, &'static str, ScalarImpl) = match op {
            ArrayOp::Contains => ("@>", "arraycontains", exec::contains),
            ArrayOp::ContainedBy => ("<@", "arraycontained", exec::contained),
            ArrayOp::Overlaps => ("&&", "arrayoverlap", exec::overlaps),
        };
        let ty = match (&l.1, &r.1) {
            (Some(a @ DataType::Array(_)), Some(b @ DataType::Array(_))) => wider(a, b),
            (Some(a @ DataType::Array(_)), None) | (None, Some(a @ DataType::Array(_))) => Some(a.clone()),
            _ => None,
        };
        let Some(ty) = ty else {
            let n = |t: &Option<DataType>| t.as_ref().map_or("unknown".to_string(), |t| t.sql_name());
            return Err(Error::TypeMismatch {
                code: "42883",
                message: format!("operator does not exist: {} {symbol} {}", n(&l.1), n(&r.1)),
            });
        };
        let (l, r) = (self.typed_as(l, &ty)?, self.typed_as(r, &ty)?);
        Ok((
            Expr::Func(builtin(name, Some(DataType::Boolean), true, eval), vec![l, r]),
            Some(DataType::Boolean),
        ))
    }

    /// An array function called with a typed array (or, for
    /// `string_to_array`, with anything); the arguments back when `name`
    /// is not one or its array argument is not typed as an array (array
    /// text goes to the catalog's functions).
    pub(crate) fn array_function(
        &mut self,
        name: &str,
        mut args: Vec<Typed>,
    ) -> Result<std::result::Result<Typed, Vec<Typed>>> {
        let text = DataType::Text;
        let int = DataType::Integer;
        if name == "string_to_array" && (2..=3).contains(&args.len()) {
            let exprs = args.into_iter().map(|a| self.typed_as(a, &text)).collect::<Result<Vec<_>>>()?;
            let ty = Some(DataType::array_of(text)?);
            return Ok(Ok((
                Expr::Func(builtin("string_to_array", ty.clone(), false, exec::from_string), exprs),
                ty,
            )));
        }
        // Which argument is the array.
        let at = match name {
            "array_prepend" => 1,
            _ => 0,
        };
        let Some(Some(array)) = args.get(at).map(|a| a.1.clone()) else { return Ok(Err(args)) };
        let Some(elem) = array.element().cloned() else { return Ok(Err(args)) };
        let types: Vec<Option<DataType>> = args.iter().map(|a| a.1.clone()).collect();
        let arity = |n: std::ops::RangeInclusive<usize>| {
            if n.contains(&types.len()) {
                Ok(())
            } else {
                Err(exec::no_function(name, &types))
            }
        };
        // The parameter types of each function, after the array.
        let (fname, params, ret, strict, eval): (&'static str, Vec<DataType>, DataType, bool, ScalarImpl) =
            match name {
                "cardinality" => ("cardinality", vec![], int.clone(), true, exec::cardinality),
                "array_length" => ("array_length", vec![int.clone()], int.clone(), true, exec::length),
                "array_upper" => ("array_upper", vec![int.clone()], int.clone(), true, exec::length),
                "array_lower" => ("array_lower", vec![int.clone()], int.clone(), true, exec::lower),
                "array_ndims" => ("array_ndims", vec![], int.clone(), true, exec::ndims),
                "array_dims" => ("array_dims", vec![], text.clone(), true, exec::dims),
                "array_position" => {
                    ("array_position", vec![elem.clone()], int.clone(), false, exec::position)
                }
                "array_positions" => (
                    "array_positions",
                    vec![elem.clone()],
                    DataType::array_of(int.clone())?,
                    false,
                    exec::positions,
                ),
                "array_remove" => ("array_remove", vec![elem.clone()], array.clone(), false, exec::remove),
                "array_replace" => {
                    ("array_replace", vec![elem.clone(), elem.clone()], array.clone(), false, exec::replace)
                }
                "array_append" => ("array_append", vec![elem.clone()], array.clone(), false, exec::append),
                "array_prepend" => ("array_prepend", vec![elem.clone()], array.clone(), false, exec::prepend),
                "array_cat" => ("array_cat", vec![array.clone()], array.clone(), false, exec::cat),
                "array_to_string" => (
                    "array_to_string",
                    vec![text.clone(), text.clone()],
                    text.clone(),
                    false,
                    exec::to_string,
                ),
                _ => return Ok(Err(args)),
            };
        let min = 1 + params.len() - usize::from(fname == "array_to_string");
        arity(min..=1 + params.len())?;
        // array_prepend's element comes first.
        if fname == "array_prepend" {
            args.swap(0, 1);
        }
        let mut exprs = Vec::with_capacity(args.len());
        for (i, a) in args.into_iter().enumerate() {
            let want = if i == 0 { array.clone() } else { params[i - 1].clone() };
            if let (Some(t), true) = (&a.1, i > 0) {
                if wider(t, &want).is_none() && !(want.is_string()) {
                    return Err(exec::no_function(name, &types));
                }
            }
            exprs.push(self.typed_as(a, &want)?);
        }
        if fname == "array_prepend" {
            exprs.swap(0, 1);
        }
        Ok(Ok((Expr::Func(builtin(fname, Some(ret.clone()), strict, eval), exprs), Some(ret))))
    }
}

/// The name `x = ANY(array)` calls carry; execution hashes a constant
/// array's members for it.
pub(crate) const QUANTIFIED_ANY: &str = "any_eq";
