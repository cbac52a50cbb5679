//! Binding calls of PL/pgSQL routines: `SELECT f(...)`, `FROM f(...)` and
//! `CALL p(...)`.
//!
//! The binder looks the routine up compiled at the current catalog version
//! and keeps its compiled form in the plan, so executing the plan calls it
//! without a look-up. Arguments take the parameter types (an untyped
//! literal or `$n` is read as that type); array and composite parameters
//! take their text form (`'{1,2}'`, `ARRAY[...]`, `ROW(...)`), parsed when
//! the call binds them. Arguments go by position, then by name (`name =>
//! value` or `name := value`); parameters left out take their defaults.
//! Which overload of a name a call means is decided in `resolve`.

use super::{Compiled, Placement};
use crate::catalog::OutputColumn;
use crate::error::{Error, Result};
use crate::planner::bind::{Binder, Ctx, Scope, Typed};
use crate::planner::plan::Plan;
use crate::planner::{Call, Expr};
use crate::routines::{Elem, PlType, Returns};
use centum_types::DataType;
use sqlparser::ast;
use std::sync::Arc;

impl Binder<'_> {
    /// Binds a call's argument list: the values, and the names of those
    /// written `name => value`. Named arguments come after positional ones.
    pub(crate) fn named_args(
        &mut self,
        list: &[ast::FunctionArg],
        ctx: &Ctx,
    ) -> Result<(Vec<Typed>, Vec<Option<String>>)> {
        let (mut args, mut names) = (Vec::new(), Vec::new());
        for a in list {
            let (name, e) = match a {
                // `name := value`, which the parser reads as an assignment.
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::BinaryOp {
                    left,
                    op: ast::BinaryOperator::Assignment,
                    right,
                })) => match &**left {
                    ast::Expr::Identifier(name) => (Some(crate::names::ident(name)), &**right),
                    _ => return Err(Error::Syntax(format!("syntax error at or near \":=\" in {a}"))),
                },
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => (None, e),
                ast::FunctionArg::Named { name, arg: ast::FunctionArgExpr::Expr(e), .. } => {
                    (Some(crate::names::ident(name)), e)
                }
                ast::FunctionArg::ExprNamed {
                    name: ast::Expr::Identifier(name),
                    arg: ast::FunctionArgExpr::Expr(e),
                    ..
                } => (Some(crate::names::ident(name)), e),
                other => return Err(Error::unsupported(format!("function argument {other}"))),
            };
            if name.is_none() && names.iter().any(Option::is_some) {
                return Err(Error::Syntax("positional argument cannot follow named argument".into()));
            }
            if let Some(n) = &name {
                if names.contains(&name) {
                    return Err(Error::Syntax(format!("argument name \"{n}\" used more than once")));
                }
            }
            args.push(self.expr(e, ctx)?);
            names.push(name);
        }
        Ok((args, names))
    }

    /// The routine named `name` that a call with these arguments means
    /// (see `resolve`), its use noted for privilege checks; `None` when no
    /// routine has that name.
    pub(crate) fn find_routine(
        &mut self,
        name: &str,
        args: &[Typed],
        names: &[Option<String>],
        call: bool,
    ) -> Result<Option<(Arc<Compiled>, Placement)>> {
        let types: Vec<Option<DataType>> = args.iter().map(|a| a.1.clone()).collect();
        let names: Vec<Option<String>> =
            if names.is_empty() { vec![None; args.len()] } else { names.to_vec() };
        let found = super::resolve(self.catalog, name, &types, &names, call)?;
        if let Some((r, _)) = &found {
            self.need_routine(r);
        }
        Ok(found)
    }

    /// The argument expressions of a call of `r`, one per IN/INOUT
    /// parameter, placed by `place`.
    fn routine_args(&mut self, r: &Compiled, place: &Placement, args: Vec<Typed>) -> Result<Vec<Expr>> {
        let inputs: Vec<_> = r.inputs().cloned().collect();
        let mut args: Vec<Option<Typed>> = args.into_iter().map(Some).collect();
        let mut out = Vec::with_capacity(inputs.len());
        for (p, at) in inputs.iter().zip(place) {
            let arg = match at.and_then(|i| args[i].take()) {
                Some(a) => a,
                None => {
                    let d = p.default.as_ref().ok_or_else(|| {
                        Error::UndefinedFunction(format!("{} without a value for a parameter", r.signature))
                    })?;
                    let empty = Scope::default();
                    self.expr(d, &crate::planner::bind_ctx(&empty))?
                }
            };
            let target = match &p.ty {
                PlType::Scalar(t) => t.clone(),
                PlType::Array(Elem::Scalar(t)) => DataType::array_of(t.clone())?,
                // Arrays of composites and composites travel as their text.
                _ => DataType::Text,
            };
            let (e, ty) = self.coerce_untyped(arg, &Some(target.clone()))?;
            let composite = |t: &DataType| matches!(t, DataType::Composite(_));
            let e = match ty {
                Some(t) if t == target => e,
                // A row value (or an array of them) goes as its text.
                Some(t) if composite(&t) || t.element().is_some_and(composite) => {
                    Expr::Cast(Box::new(e), DataType::Text)
                }
                Some(DataType::Array(_)) if matches!(p.ty, PlType::Array(_)) => {
                    Expr::Cast(Box::new(e), target)
                }
                Some(t) if !matches!(p.ty, PlType::Scalar(_)) => {
                    return Err(Error::mismatch(format!(
                        "argument of type {} where {} expects {} (pass array or record text)",
                        t.sql_name(),
                        r.signature,
                        match &p.ty {
                            PlType::Array(_) => "an array",
                            _ => "a composite value",
                        }
                    )))
                }
                _ => Expr::Cast(Box::new(e), target),
            };
            out.push(e);
        }
        Ok(out)
    }

    /// `f(args)` in an expression.
    pub(crate) fn routine_call(
        &mut self,
        r: Arc<Compiled>,
        place: &Placement,
        args: Vec<Typed>,
    ) -> Result<Typed> {
        if r.procedure {
            return Err(Error::other(
                "42809",
                format!("{} is a procedure; to call a procedure, use CALL", r.signature),
            ));
        }
        let ty = match &r.returns {
            Returns::Scalar(t) => Some(t.clone()),
            Returns::Void => Some(DataType::Text),
            Returns::Trigger => {
                return Err(Error::other("0A000", "trigger functions can only be called as triggers"))
            }
            Returns::SetOf(_) | Returns::Table(_) => {
                return Err(Error::Unsupported(format!(
                    "set-returning function {} must be called in FROM",
                    r.name
                )))
            }
        };
        let args = self.routine_args(&r, place, args)?;
        Ok((Expr::Routine(r, args), ty))
    }

    /// `FROM f(args)`: the function's rows and columns.
    pub(crate) fn routine_scan(
        &mut self,
        r: Arc<Compiled>,
        place: &Placement,
        args: Vec<Typed>,
    ) -> Result<(Plan, Vec<OutputColumn>)> {
        if r.procedure {
            return Err(Error::other("42809", format!("{} is a procedure", r.signature)));
        }
        let cols = match (&r.returns, r.set_columns()) {
            (_, Some(cols)) => cols,
            (Returns::Scalar(t), None) => vec![(r.name.clone(), t.clone())],
            _ => vec![(r.name.clone(), DataType::Text)],
        };
        let args = self.routine_args(&r, place, args)?;
        let columns = cols.into_iter().map(|(name, t)| OutputColumn { name, ty: Some(t) }).collect();
        Ok((Plan::Routine { routine: r, args }, columns))
    }

    /// `CALL p(args)`: the plan and the OUT/INOUT columns it returns.
    pub(crate) fn call_statement(&mut self, f: &ast::Function) -> Result<(Call, Vec<OutputColumn>)> {
        let name = crate::names::function_name(f)?;
        let empty = Scope::default();
        let (args, names) = match &f.args {
            ast::FunctionArguments::List(list) => {
                self.named_args(&list.args, &crate::planner::bind_ctx(&empty))?
            }
            _ => (vec![], vec![]),
        };
        let Some((r, place)) = self.find_routine(&name, &args, &names, true)? else {
            return Err(Error::other("42883", format!("procedure {name} does not exist")));
        };
        if !r.procedure {
            return Err(Error::other(
                "42809",
                format!("{} is not a procedure; to call a function, use SELECT", r.signature),
            ));
        }
        let args = self.routine_args(&r, &place, args)?;
        let columns = r
            .outputs()
            .map(|p| OutputColumn {
                name: p.name.clone().unwrap_or_else(|| "column".into()),
                ty: match &p.ty {
                    PlType::Scalar(t) => Some(t.clone()),
                    _ => Some(DataType::Text),
                },
            })
            .collect();
        Ok((Call { routine: r, args }, columns))
    }
}
