//! Binding calls of PL/pgSQL routines: `SELECT f(...)`, `FROM f(...)` and
//! `CALL p(...)`.
//!
//! The binder looks the routine up compiled at the current catalog version
//! and keeps its compiled form in the plan, so executing the plan calls it
//! without a look-up. Arguments take the parameter types (an untyped
//! literal or `$n` is read as that type); array and composite parameters
//! take their text form (`'{1,2}'`, `ARRAY[...]`, `ROW(...)`), parsed when
//! the call binds them. Missing trailing arguments take the parameters'
//! defaults.

use super::Compiled;
use crate::catalog::OutputColumn;
use crate::error::{Error, Result};
use crate::planner::bind::{Binder, Scope, Typed};
use crate::planner::plan::Plan;
use crate::planner::{Call, Expr};
use crate::routines::{Elem, Mode, PlType, Returns};
use centum_types::DataType;
use sqlparser::ast;
use std::sync::Arc;

impl Binder<'_> {
    /// The argument expressions of a call of `r`, one per IN/INOUT
    /// parameter.
    fn routine_args(&mut self, r: &Compiled, args: Vec<Typed>) -> Result<Vec<Expr>> {
        let inputs: Vec<_> = r.inputs().cloned().collect();
        let required = inputs.iter().rposition(|p| p.default.is_none()).map_or(0, |i| i + 1);
        if args.len() < required || args.len() > inputs.len() {
            let types: Vec<String> =
                args.iter().map(|a| a.1.as_ref().map_or("unknown".to_string(), |t| t.sql_name())).collect();
            return Err(Error::UndefinedFunction(format!("{}({})", r.name, types.join(", "))));
        }
        let mut out = Vec::with_capacity(inputs.len());
        let mut args = args.into_iter();
        for p in &inputs {
            let arg = match args.next() {
                Some(a) => a,
                None => {
                    let d = p.default.as_ref().expect("checked above");
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
    pub(crate) fn routine_call(&mut self, r: Arc<Compiled>, args: Vec<Typed>) -> Result<Typed> {
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
        let args = self.routine_args(&r, args)?;
        Ok((Expr::Routine(r, args), ty))
    }

    /// `FROM f(args)`: the function's rows and columns.
    pub(crate) fn routine_scan(
        &mut self,
        r: Arc<Compiled>,
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
        let args = self.routine_args(&r, args)?;
        let columns = cols.into_iter().map(|(name, t)| OutputColumn { name, ty: Some(t) }).collect();
        Ok((Plan::Routine { routine: r, args }, columns))
    }

    /// `CALL p(args)`: the plan and the OUT/INOUT columns it returns.
    pub(crate) fn call_statement(&mut self, f: &ast::Function) -> Result<(Call, Vec<OutputColumn>)> {
        let name = crate::names::function_name(f)?;
        let Some(r) = crate::planner::routines::lookup(self.catalog, &name)? else {
            return Err(Error::other("42883", format!("procedure {name} does not exist")));
        };
        self.need_routine(&r);
        if !r.procedure {
            return Err(Error::other(
                "42809",
                format!("{} is not a procedure; to call a function, use SELECT", r.signature),
            ));
        }
        let empty = Scope::default();
        let mut args = Vec::new();
        if let ast::FunctionArguments::List(list) = &f.args {
            // OUT parameters take a placeholder argument (NULL) in CALL.
            let mut params = r.params.iter();
            for a in &list.args {
                let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) = a else {
                    return Err(Error::unsupported(format!("function argument {a}")));
                };
                let typed = self.expr(e, &crate::planner::bind_ctx(&empty))?;
                if params.next().is_some_and(|p| p.mode == Mode::Out) {
                    continue;
                }
                args.push(typed);
            }
        }
        let args = self.routine_args(&r, args)?;
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
