//! Binding window functions: `f(...) OVER (PARTITION BY ... ORDER BY ...
//! frame)` and `OVER w` with `WINDOW w AS (...)`.
//!
//! A select list (or ORDER BY) call is bound into a [`WindowCall`] and
//! collected in the query's [`Windowing`]; the expression that held it
//! reads the call's column, which [`Plan::Window`] appends to each of its
//! input rows. That input is the FROM clause's row, or the aggregate's
//! output when the query groups, so window arguments may be aggregates
//! (`sum(sum(x)) OVER ()`). The input's width is only known once every
//! expression is bound (aggregates are collected as binding goes), so a
//! call's column is first a mark past any real column
//! ([`WINDOW_MARK`] + call number) and [`Windowing::place`] moves it
//! behind the input's columns at the end.
//!
//! [`Plan::Window`]: super::plan::Plan::Window

use super::bind::{agg_name, intern, Binder, Ctx, Scope, Typed};
use super::expr::Expr;
use super::plan::{Frame, FrameBound, FrameUnits, SortKey, WindowCall, WindowFunc};
use crate::error::{Error, Result};
use crate::names::{function_name, ident};
use centum_types::DataType;
use sqlparser::ast;

/// Where the columns of window calls are numbered from while binding.
pub(crate) const WINDOW_MARK: usize = usize::MAX / 4;

/// The window calls of one query level, and its named windows.
#[derive(Default)]
pub(crate) struct Windowing {
    /// The calls met so far, each once.
    pub calls: Vec<WindowCall>,
    keys: Vec<String>,
    /// `WINDOW name AS (...)`.
    named: Vec<(String, ast::WindowSpec)>,
}

impl Windowing {
    /// The windows a query level can call, with its `WINDOW` clause.
    pub fn new(defs: &[ast::NamedWindowDefinition]) -> Result<Windowing> {
        let mut named: Vec<(String, ast::WindowSpec)> = Vec::new();
        for ast::NamedWindowDefinition(name, def) in defs {
            let name = ident(name);
            if named.iter().any(|(n, _)| *n == name) {
                return Err(Error::other("42P20", format!("window \"{name}\" is already defined")));
            }
            let spec = match def {
                ast::NamedWindowExpr::WindowSpec(s) => s.clone(),
                ast::NamedWindowExpr::NamedWindow(other) => ast::WindowSpec {
                    window_name: Some(other.clone()),
                    partition_by: vec![],
                    order_by: vec![],
                    window_frame: None,
                },
            };
            named.push((name, spec));
        }
        Ok(Windowing { calls: vec![], keys: vec![], named })
    }

    /// Moves the calls' columns from their marks to just after an input
    /// of `width` columns.
    pub fn place(e: Expr, width: usize) -> Expr {
        e.map(&mut |x| match x {
            Expr::Column(i) if i >= WINDOW_MARK => Expr::Column(width + (i - WINDOW_MARK)),
            x => x,
        })
    }

    /// The window named `name` (`OVER w`), frame included.
    fn named(&self, name: &str, depth: usize) -> Result<ast::WindowSpec> {
        let Some((_, named)) = self.named.iter().find(|(n, _)| n == name) else {
            return Err(Error::other("42704", format!("window \"{name}\" does not exist")));
        };
        if depth > self.named.len() {
            return Err(Error::other("42P20", format!("window \"{name}\" refers to itself")));
        }
        self.resolve(named, depth + 1)
    }

    /// The full specification of a window: a named one with the call's
    /// additions (`OVER (w ORDER BY x)`), as PostgreSQL allows them.
    fn resolve(&self, spec: &ast::WindowSpec, depth: usize) -> Result<ast::WindowSpec> {
        let Some(base) = &spec.window_name else { return Ok(spec.clone()) };
        let name = ident(base);
        let base = self.named(&name, depth)?;
        if !spec.partition_by.is_empty() {
            return Err(Error::other(
                "42P20",
                format!("cannot override PARTITION BY clause of window \"{name}\""),
            ));
        }
        if !spec.order_by.is_empty() && !base.order_by.is_empty() {
            return Err(Error::other(
                "42P20",
                format!("cannot override ORDER BY clause of window \"{name}\""),
            ));
        }
        if base.window_frame.is_some() {
            return Err(Error::other(
                "42P20",
                format!("cannot copy window \"{name}\" because it has a frame clause"),
            ));
        }
        Ok(ast::WindowSpec {
            window_name: None,
            partition_by: base.partition_by,
            order_by: if spec.order_by.is_empty() { base.order_by } else { spec.order_by.clone() },
            window_frame: spec.window_frame.clone(),
        })
    }
}

impl Binder<'_> {
    /// Binds `f(...) OVER ...`: registers the call and returns the column
    /// that will hold its value.
    pub(crate) fn window_call(&mut self, f: &ast::Function, ctx: &Ctx) -> Result<Typed> {
        let name = function_name(f)?;
        let Some(windows) = ctx.windows else {
            return Err(Error::other("42P20", "window functions are not allowed here"));
        };
        let spec = match f.over.as_ref() {
            Some(ast::WindowType::WindowSpec(s)) => windows.borrow().resolve(s, 0)?,
            Some(ast::WindowType::NamedWindow(w)) => windows.borrow().named(&ident(w), 0)?,
            None => return Err(Error::other("XX000", "a window call without OVER")),
        };
        // Arguments, partition and order see the window's input row (the
        // aggregate's output when grouped); a window call inside them is
        // refused.
        let inner = Ctx { scope: ctx.scope, grouping: ctx.grouping, windows: None };
        let nested = |e: Error| match e {
            Error::Other { code: "42P20", .. } => {
                Error::other("42P20", "window function calls cannot be nested")
            }
            e => e,
        };
        let mut partition = Vec::new();
        for e in &spec.partition_by {
            partition.push(self.expr(e, &inner).map_err(nested)?.0);
        }
        let mut order = Vec::new();
        let mut order_types = Vec::new();
        for o in &spec.order_by {
            let (e, ty) = self.expr(&o.expr, &inner).map_err(nested)?;
            let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            order.push(SortKey { expr: e, desc, nulls_first: o.options.nulls_first.unwrap_or(desc) });
            order_types.push(ty);
        }
        let frame = self.frame(spec.window_frame.as_ref(), &order_types)?;
        let (func, args, ty) = if let Some(agg) = agg_name(&name) {
            if matches!(&f.args, ast::FunctionArguments::List(l)
                if matches!(l.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct)))
            {
                return Err(Error::Unsupported("DISTINCT is not implemented for window functions".into()));
            }
            let call = self.aggregate(agg, f, &inner).map_err(nested)?;
            let ty = call.ty.clone();
            (WindowFunc::Aggregate(Box::new(call)), vec![], ty)
        } else {
            if f.filter.is_some() {
                return Err(Error::unsupported(format!("FILTER for the window function {name}")));
            }
            let mut args = self.window_args(f, &inner).map_err(nested)?;
            self.window_function(&name, &mut args)?
        };
        let call = WindowCall { func, args, partition, order, frame };
        let key =
            format!("{:?}/{:?}/{:?}/{:?}/{:?}", call.func, call.args, call.partition, call.order, call.frame);
        let mut w = windows.borrow_mut();
        let w = &mut *w;
        let at = intern(&mut w.keys, &mut w.calls, key, call);
        Ok((Expr::Column(WINDOW_MARK + at), ty))
    }

    fn window_args(&mut self, f: &ast::Function, ctx: &Ctx) -> Result<Vec<Typed>> {
        if matches!(&f.args, ast::FunctionArguments::List(l) if !l.clauses.is_empty()) {
            return Err(Error::unsupported(format!("these arguments of {}", function_name(f)?)));
        }
        self.function_args(f, ctx)
    }

    /// A window function other than an aggregate: its arguments, checked
    /// and coerced, and its result type.
    fn window_function(
        &mut self,
        name: &str,
        args: &mut Vec<Typed>,
    ) -> Result<(WindowFunc, Vec<Expr>, Option<DataType>)> {
        let wrong = |args: &[Typed]| {
            let list: Vec<String> =
                args.iter().map(|a| a.1.as_ref().map_or("unknown".to_string(), |t| t.sql_name())).collect();
            Error::UndefinedFunction(format!("{name}({})", list.join(", ")))
        };
        let ranking = |func: WindowFunc, ty: DataType| (func, vec![], Some(ty));
        let n = args.len();
        Ok(match (name, n) {
            ("row_number", 0) => ranking(WindowFunc::RowNumber, DataType::BigInt),
            ("rank", 0) => ranking(WindowFunc::Rank, DataType::BigInt),
            ("dense_rank", 0) => ranking(WindowFunc::DenseRank, DataType::BigInt),
            ("percent_rank", 0) => ranking(WindowFunc::PercentRank, DataType::Double),
            ("cume_dist", 0) => ranking(WindowFunc::CumeDist, DataType::Double),
            ("ntile", 1) => {
                let a = self.integer_arg(args.remove(0), name)?;
                (WindowFunc::Ntile, vec![a], Some(DataType::Integer))
            }
            ("lag" | "lead", 1..=3) => {
                let func = if name == "lag" { WindowFunc::Lag } else { WindowFunc::Lead };
                let mut items = std::mem::take(args);
                let offset =
                    if items.len() >= 2 { Some(self.integer_arg(items.remove(1), name)?) } else { None };
                // The value and its default share one type.
                let (mut exprs, ty) = self.common_type(items, name)?;
                let value = exprs.remove(0);
                let offset = offset.unwrap_or(Expr::Literal(centum_types::Value::BigInt(1)));
                let mut out = vec![value, offset];
                out.extend(exprs.pop());
                (func, out, ty)
            }
            ("first_value" | "last_value", 1) => {
                let (e, ty) = self.coerce_untyped(args.remove(0), &Some(DataType::Text))?;
                let func = if name == "first_value" { WindowFunc::FirstValue } else { WindowFunc::LastValue };
                (func, vec![e], ty)
            }
            ("nth_value", 2) => {
                let nth = self.integer_arg(args.remove(1), name)?;
                let (e, ty) = self.coerce_untyped(args.remove(0), &Some(DataType::Text))?;
                (WindowFunc::NthValue, vec![e, nth], ty)
            }
            // With arguments these name PostgreSQL's hypothetical-set
            // aggregates, which take WITHIN GROUP.
            ("rank" | "dense_rank" | "percent_rank" | "cume_dist", _) => {
                return Err(Error::other(
                    "42809",
                    format!("WITHIN GROUP is required for ordered-set aggregate {name}"),
                ))
            }
            ("row_number" | "ntile" | "lag" | "lead" | "first_value" | "last_value" | "nth_value", _) => {
                return Err(wrong(args))
            }
            _ => {
                return Err(Error::other(
                    "42809",
                    format!("OVER specified, but {name} is not a window function nor an aggregate function"),
                ))
            }
        })
    }

    /// An integer argument (a bucket count, an offset, a position).
    fn integer_arg(&mut self, a: Typed, name: &str) -> Result<Expr> {
        let (e, ty) = self.coerce_untyped(a, &Some(DataType::BigInt))?;
        match ty {
            Some(DataType::SmallInt | DataType::Integer | DataType::BigInt) | None => Ok(e),
            Some(t) => Err(Error::UndefinedFunction(format!("{name}(..., {}, ...)", t.sql_name()))),
        }
    }

    /// A RANGE frame's offset: a number of the ORDER BY column's kind, the
    /// distance in key values from the current row's key.
    fn range_offset(&mut self, offset: Typed, key: Option<&DataType>) -> Result<Expr> {
        let integer = |t: &DataType| matches!(t, DataType::SmallInt | DataType::Integer | DataType::BigInt);
        let datetime = |t: &DataType| {
            matches!(
                t,
                DataType::Date
                    | DataType::Timestamp
                    | DataType::TimestampTz
                    | DataType::Time
                    | DataType::Interval
            )
        };
        if let Some(key) = key.filter(|k| datetime(k)) {
            // Date and time keys take an interval distance.
            let (e, ty) = self.coerce_untyped(offset, &Some(DataType::Interval))?;
            if ty.as_ref().is_some_and(|t| *t != DataType::Interval) {
                return Err(Error::Unsupported(format!(
                    "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {} and offset type {}",
                    key.sql_name(),
                    ty.map_or("unknown".to_string(), |t| t.sql_name())
                )));
            }
            return Ok(e);
        }
        let Some(key) =
            key.filter(|k| integer(k) || matches!(k, DataType::Numeric { .. } | DataType::Double))
        else {
            // Other types have no distance at all.
            let name = key.map_or("unknown".to_string(), |k| k.sql_name());
            return Err(Error::Unsupported(format!(
                "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {name}"
            )));
        };
        let (e, ty) = self.coerce_untyped(offset, &Some(key.clone()))?;
        let fits = match &ty {
            Some(t) if integer(key) => integer(t),
            Some(t) => integer(t) || matches!(t, DataType::Numeric { .. } | DataType::Double),
            None => true,
        };
        if !fits {
            return Err(Error::Unsupported(format!(
                "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {} and offset type {}",
                key.sql_name(),
                ty.map_or("unknown".to_string(), |t| t.sql_name())
            )));
        }
        Ok(e)
    }

    /// The frame clause, or the default: from the partition's start to the
    /// current row's last peer (the whole partition without ORDER BY, all
    /// its rows being peers).
    fn frame(&mut self, frame: Option<&ast::WindowFrame>, order_types: &[Option<DataType>]) -> Result<Frame> {
        let Some(f) = frame else {
            return Ok(Frame {
                units: FrameUnits::Range,
                start: FrameBound::UnboundedPreceding,
                end: FrameBound::CurrentRow,
            });
        };
        let units = match f.units {
            ast::WindowFrameUnits::Rows => FrameUnits::Rows,
            ast::WindowFrameUnits::Range => FrameUnits::Range,
            ast::WindowFrameUnits::Groups => FrameUnits::Groups,
        };
        if units == FrameUnits::Groups && order_types.is_empty() {
            return Err(Error::other("42P20", "GROUPS mode requires an ORDER BY clause"));
        }
        let start = self.frame_bound(&f.start_bound, units, order_types)?;
        let end = match &f.end_bound {
            Some(b) => self.frame_bound(b, units, order_types)?,
            None => FrameBound::CurrentRow,
        };
        let rank = |b: &FrameBound| match b {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::Preceding(_) => 1,
            FrameBound::CurrentRow => 2,
            FrameBound::Following(_) => 3,
            FrameBound::UnboundedFollowing => 4,
        };
        let message = match (rank(&start), rank(&end)) {
            (4, _) => Some("frame start cannot be UNBOUNDED FOLLOWING"),
            (_, 0) => Some("frame end cannot be UNBOUNDED PRECEDING"),
            (2, 1) => Some("frame starting from current row cannot have preceding rows"),
            (3, 1) => Some("frame starting from following row cannot have preceding rows"),
            (3, 2) => Some("frame starting from following row cannot have preceding rows"),
            _ => None,
        };
        if let Some(m) = message {
            return Err(Error::other("42P20", m));
        }
        Ok(Frame { units, start, end })
    }

    fn frame_bound(
        &mut self,
        b: &ast::WindowFrameBound,
        units: FrameUnits,
        order_types: &[Option<DataType>],
    ) -> Result<FrameBound> {
        let offset = |this: &mut Self, e: &ast::Expr| -> Result<Expr> {
            if units == FrameUnits::Range && order_types.len() != 1 {
                return Err(Error::other(
                    "42P20",
                    "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column",
                ));
            }
            // An offset sees no columns: a constant or a parameter.
            let variable = ast::visit_expressions(e, |x| match x {
                ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) => {
                    std::ops::ControlFlow::Break(())
                }
                _ => std::ops::ControlFlow::Continue(()),
            });
            if variable.is_break() {
                let units = match units {
                    FrameUnits::Rows => "ROWS",
                    FrameUnits::Range => "RANGE",
                    FrameUnits::Groups => "GROUPS",
                };
                return Err(Error::other("42P10", format!("argument of {units} must not contain variables")));
            }
            let empty = Scope::default();
            let typed = this.expr(e, &Ctx { scope: &empty, grouping: None, windows: None })?;
            if units == FrameUnits::Range {
                return this.range_offset(typed, order_types[0].as_ref());
            }
            this.integer_arg(typed, "frame offset")
        };
        Ok(match b {
            ast::WindowFrameBound::CurrentRow => FrameBound::CurrentRow,
            ast::WindowFrameBound::Preceding(None) => FrameBound::UnboundedPreceding,
            ast::WindowFrameBound::Following(None) => FrameBound::UnboundedFollowing,
            ast::WindowFrameBound::Preceding(Some(e)) => FrameBound::Preceding(offset(self, e)?),
            ast::WindowFrameBound::Following(Some(e)) => FrameBound::Following(offset(self, e)?),
        })
    }
}

/// Whether `e` calls a window function (one in a subquery counts too: the
/// caller only keeps an index's order from standing in for a sort).
pub(crate) fn has_window(e: &ast::Expr) -> bool {
    let mut found = false;
    let _ = ast::visit_expressions(e, |x| {
        if let ast::Expr::Function(f) = x {
            if f.over.is_some() {
                found = true;
                return std::ops::ControlFlow::Break(());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    found
}
