//! Bound expressions: names resolved to row positions, functions to
//! implementations, types known.
//!
//! A row seen by an expression is the current operator's row; `Outer`
//! columns come from the rows of enclosing operators (the left side of an
//! index nested-loop join, or the query around a correlated subquery),
//! concatenated outermost first:
//!
//! ```text
//!   outer = [ enclosing query's row ... | left row of the join ]
//!   row   = [ this operator's input row ]
//! ```

use super::plan::Plan;
use crate::functions::operators::BinOp;
use crate::functions::Builtin;
use centum_types::{DataType, Value};

/// What a subquery expression asks of its rows.
#[derive(Clone, Debug)]
pub enum SubqueryKind {
    /// The single value of the single row (NULL when empty).
    Scalar,
    /// Whether any row exists.
    Exists,
    /// Whether the left value equals (`op`) any row's value: `IN`, `= ANY`.
    Any(Box<Expr>, BinOp),
    /// Whether the left value compares (`op`) true with every row: `ALL`.
    All(Box<Expr>, BinOp),
    /// `ARRAY(subquery)`: the first column of every row, as an array.
    Array,
}

/// A bound expression.
#[derive(Clone, Debug)]
pub enum Expr {
    /// Column of the current row.
    Column(usize),
    /// Column of the outer row.
    Outer(usize),
    /// A constant.
    Literal(Value),
    /// Parameter `$n+1`.
    Param(usize),
    /// A binary operator.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `NOT`.
    Not(Box<Expr>),
    /// Unary minus.
    Neg(Box<Expr>),
    /// `IS [NOT] NULL` (negated = NOT).
    IsNull(Box<Expr>, bool),
    /// `IS [NOT] TRUE/FALSE`: (expr, value tested, negated).
    IsBool(Box<Expr>, bool, bool),
    /// `IS [NOT] DISTINCT FROM` (negated = NOT).
    IsDistinct(Box<Expr>, Box<Expr>, bool),
    /// `[NOT] IN (list)`.
    InList(Box<Expr>, Vec<Expr>, bool),
    /// `[NOT] [I]LIKE`: (expr, pattern, negated, case-insensitive).
    Like(Box<Expr>, Box<Expr>, bool, bool),
    /// `CASE [operand] WHEN .. THEN .. ELSE .. END`.
    Case(Option<Box<Expr>>, Vec<(Expr, Expr)>, Option<Box<Expr>>),
    /// `COALESCE(...)`.
    Coalesce(Vec<Expr>),
    /// `NULLIF(a, b)`.
    NullIf(Box<Expr>, Box<Expr>),
    /// Explicit cast.
    Cast(Box<Expr>, DataType),
    /// A scalar built-in function.
    Func(Builtin, Vec<Expr>),
    /// A function of the virtual catalog (or an array or regex function).
    Catalog(crate::system::CatalogFn, Vec<Expr>),
    /// `nextval` / `currval` / `setval` of a sequence, by name.
    Sequence(SeqOp, String, Vec<Expr>),
    /// A subquery; its plan sees `outer ++ row` as its outer row.
    Subquery(Box<Plan>, SubqueryKind),
    /// A call of a PL/pgSQL function returning one value.
    Routine(std::sync::Arc<crate::planner::routines::Compiled>, Vec<Expr>),
}

/// Sequence functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeqOp {
    /// `nextval`.
    Next,
    /// `currval`.
    Current,
    /// `setval`.
    Set,
    /// The sequence read as a relation: its `last_value` column.
    LastValue,
    /// The sequence read as a relation: its `is_called` column.
    IsCalled,
}

impl Expr {
    /// A boolean literal.
    pub fn bool(b: bool) -> Expr {
        Expr::Literal(Value::Boolean(b))
    }

    /// Whether the expression reads no column of the current row (it may
    /// read parameters and outer columns), so it is constant for one
    /// execution of the operator.
    pub fn is_row_independent(&self) -> bool {
        let mut independent = true;
        self.walk(&mut |e| {
            if matches!(e, Expr::Column(_) | Expr::Subquery(..)) {
                independent = false;
            }
        });
        independent
    }

    /// Whether the expression calls no volatile function.
    pub fn is_stable(&self) -> bool {
        let mut stable = true;
        self.walk(&mut |e| match e {
            Expr::Func(f, _) if matches!(f.name, "random" | "clock_timestamp" | "gen_random_uuid") => {
                stable = false
            }
            Expr::Sequence(..)
            | Expr::Routine(..)
            | Expr::Catalog(
                crate::system::CatalogFn::Sleep(_)
                | crate::system::CatalogFn::StatReset
                | crate::system::CatalogFn::Advisory(_)
                | crate::system::CatalogFn::Notify
                | crate::system::CatalogFn::Cluster(_),
                _,
            ) => stable = false,
            _ => {}
        });
        stable
    }

    /// Calls `f` on this expression and every expression inside it (not
    /// inside subquery plans).
    pub fn walk(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Column(_) | Expr::Outer(_) | Expr::Literal(_) | Expr::Param(_) => {}
            Expr::Binary(_, a, b)
            | Expr::IsDistinct(a, b, _)
            | Expr::Like(a, b, _, _)
            | Expr::NullIf(a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::Not(a) | Expr::Neg(a) | Expr::IsNull(a, _) | Expr::IsBool(a, _, _) | Expr::Cast(a, _) => {
                a.walk(f)
            }
            Expr::InList(a, list, _) => {
                a.walk(f);
                list.iter().for_each(|e| e.walk(f));
            }
            Expr::Case(op, whens, els) => {
                if let Some(op) = op {
                    op.walk(f);
                }
                for (w, t) in whens {
                    w.walk(f);
                    t.walk(f);
                }
                if let Some(e) = els {
                    e.walk(f);
                }
            }
            Expr::Coalesce(list)
            | Expr::Func(_, list)
            | Expr::Catalog(_, list)
            | Expr::Sequence(_, _, list)
            | Expr::Routine(_, list) => list.iter().for_each(|e| e.walk(f)),
            Expr::Subquery(_, kind) => match kind {
                SubqueryKind::Any(e, _) | SubqueryKind::All(e, _) => e.walk(f),
                SubqueryKind::Scalar | SubqueryKind::Exists | SubqueryKind::Array => {}
            },
        }
    }

    /// Rewrites every node bottom-up with `f`.
    pub fn map(self, f: &mut impl FnMut(Expr) -> Expr) -> Expr {
        let b = |e: Box<Expr>, f: &mut dyn FnMut(Expr) -> Expr| -> Box<Expr> { Box::new(map_dyn(*e, f)) };
        let e = match self {
            Expr::Binary(op, l, r) => Expr::Binary(op, b(l, f), b(r, f)),
            Expr::IsDistinct(l, r, n) => Expr::IsDistinct(b(l, f), b(r, f), n),
            Expr::Like(l, r, n, i) => Expr::Like(b(l, f), b(r, f), n, i),
            Expr::NullIf(l, r) => Expr::NullIf(b(l, f), b(r, f)),
            Expr::Not(a) => Expr::Not(b(a, f)),
            Expr::Neg(a) => Expr::Neg(b(a, f)),
            Expr::IsNull(a, n) => Expr::IsNull(b(a, f), n),
            Expr::IsBool(a, v, n) => Expr::IsBool(b(a, f), v, n),
            Expr::Cast(a, t) => Expr::Cast(b(a, f), t),
            Expr::InList(a, list, n) => {
                Expr::InList(b(a, f), list.into_iter().map(|e| map_dyn(e, f)).collect(), n)
            }
            Expr::Case(op, whens, els) => Expr::Case(
                op.map(|o| b(o, f)),
                whens.into_iter().map(|(w, t)| (map_dyn(w, f), map_dyn(t, f))).collect(),
                els.map(|e| b(e, f)),
            ),
            Expr::Coalesce(list) => Expr::Coalesce(list.into_iter().map(|e| map_dyn(e, f)).collect()),
            Expr::Func(func, list) => Expr::Func(func, list.into_iter().map(|e| map_dyn(e, f)).collect()),
            Expr::Catalog(func, list) => {
                Expr::Catalog(func, list.into_iter().map(|e| map_dyn(e, f)).collect())
            }
            Expr::Routine(r, list) => Expr::Routine(r, list.into_iter().map(|e| map_dyn(e, f)).collect()),
            Expr::Sequence(op, name, list) => {
                Expr::Sequence(op, name, list.into_iter().map(|e| map_dyn(e, f)).collect())
            }
            Expr::Subquery(plan, kind) => Expr::Subquery(
                plan,
                match kind {
                    SubqueryKind::Any(e, op) => SubqueryKind::Any(b(e, f), op),
                    SubqueryKind::All(e, op) => SubqueryKind::All(b(e, f), op),
                    k => k,
                },
            ),
            leaf => leaf,
        };
        f(e)
    }

    /// Splits a conjunction into its parts.
    pub fn conjuncts(self) -> Vec<Expr> {
        match self {
            Expr::Binary(BinOp::And, a, b) => {
                let mut v = a.conjuncts();
                v.extend(b.conjuncts());
                v
            }
            e => vec![e],
        }
    }

    /// Joins expressions with AND (`None` for none).
    pub fn and_all(parts: Vec<Expr>) -> Option<Expr> {
        parts.into_iter().reduce(|a, b| Expr::Binary(BinOp::And, Box::new(a), Box::new(b)))
    }

    /// The highest current-row column read, plus one (0 if none).
    pub fn columns_used(&self) -> Vec<usize> {
        let mut cols = Vec::new();
        self.walk(&mut |e| {
            if let Expr::Column(c) = e {
                cols.push(*c);
            }
        });
        cols
    }

    /// Shifts current-row columns by `by` (negative shifts move left).
    pub fn shift_columns(self, by: isize) -> Expr {
        self.map(&mut |e| match e {
            Expr::Column(c) => Expr::Column((c as isize + by) as usize),
            e => e,
        })
    }
}

fn map_dyn(e: Expr, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
    e.map(&mut |x| f(x))
}

impl std::fmt::Display for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expr::Column(c) => write!(f, "#{c}"),
            Expr::Outer(c) => write!(f, "outer#{c}"),
            Expr::Literal(Value::Null) => f.write_str("NULL"),
            Expr::Literal(
                v @ (Value::Text(_) | Value::Date(_) | Value::Timestamp(_) | Value::TimestampTz(_)),
            ) => {
                write!(f, "'{}'", v.to_string().replace('\'', "''"))
            }
            Expr::Literal(v) => write!(f, "{v}"),
            Expr::Param(i) => write!(f, "${}", i + 1),
            Expr::Binary(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
            Expr::Not(a) => write!(f, "(NOT {a})"),
            Expr::Neg(a) => write!(f, "(- {a})"),
            Expr::IsNull(a, n) => write!(f, "({a} IS {}NULL)", if *n { "NOT " } else { "" }),
            Expr::IsBool(a, v, n) => {
                write!(f, "({a} IS {}{})", if *n { "NOT " } else { "" }, if *v { "TRUE" } else { "FALSE" })
            }
            Expr::IsDistinct(a, b, n) => {
                write!(f, "({a} IS {}DISTINCT FROM {b})", if *n { "NOT " } else { "" })
            }
            Expr::InList(a, list, n) => {
                write!(f, "({a} {}IN (", if *n { "NOT " } else { "" })?;
                comma(f, list)?;
                f.write_str("))")
            }
            Expr::Like(a, p, n, i) => {
                write!(f, "({a} {}{} {p})", if *n { "NOT " } else { "" }, if *i { "ILIKE" } else { "LIKE" })
            }
            Expr::Case(op, whens, els) => {
                f.write_str("CASE")?;
                if let Some(op) = op {
                    write!(f, " {op}")?;
                }
                for (w, t) in whens {
                    write!(f, " WHEN {w} THEN {t}")?;
                }
                if let Some(e) = els {
                    write!(f, " ELSE {e}")?;
                }
                f.write_str(" END")
            }
            Expr::Coalesce(list) => {
                f.write_str("COALESCE(")?;
                comma(f, list)?;
                f.write_str(")")
            }
            Expr::NullIf(a, b) => write!(f, "NULLIF({a}, {b})"),
            Expr::Cast(a, t) => write!(f, "({a})::{}", t.sql_name()),
            Expr::Func(func, args) => {
                write!(f, "{}(", func.name)?;
                comma(f, args)?;
                f.write_str(")")
            }
            Expr::Catalog(func, args) => {
                write!(f, "{}(", func.name())?;
                comma(f, args)?;
                f.write_str(")")
            }
            Expr::Routine(r, args) => {
                write!(f, "{}(", r.name)?;
                comma(f, args)?;
                f.write_str(")")
            }
            Expr::Sequence(op, name, args) => {
                let fname = match op {
                    SeqOp::Next => "nextval",
                    SeqOp::Current => "currval",
                    SeqOp::Set => "setval",
                    SeqOp::LastValue => "last_value",
                    SeqOp::IsCalled => "is_called",
                };
                write!(f, "{fname}('{name}'")?;
                for a in args {
                    write!(f, ", {a}")?;
                }
                f.write_str(")")
            }
            Expr::Subquery(_, kind) => match kind {
                SubqueryKind::Scalar => f.write_str("(SubPlan)"),
                SubqueryKind::Exists => f.write_str("EXISTS(SubPlan)"),
                SubqueryKind::Array => f.write_str("ARRAY(SubPlan)"),
                SubqueryKind::Any(e, op) => write!(f, "({e} {} ANY(SubPlan))", op.symbol()),
                SubqueryKind::All(e, op) => write!(f, "({e} {} ALL(SubPlan))", op.symbol()),
            },
        }
    }
}

fn comma(f: &mut std::fmt::Formatter<'_>, list: &[Expr]) -> std::fmt::Result {
    for (i, e) in list.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{e}")?;
    }
    Ok(())
}
