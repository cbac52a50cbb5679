//! Conditions tested on a row's stored bytes before it is decoded.
//!
//! A scan whose filter rejects most rows spends most of its time turning
//! stored columns into [`Value`]s that the filter then throws away: a
//! `jsonb` column is copied out of the row, an integer boxed into a value.
//! Some conditions can be answered on the stored bytes in place:
//!
//! ```text
//!   doc @> <constant>      walks the stored jsonb (JRef::contains)
//!   doc <@ <constant>      the same, the other way round
//!   doc ? <constant>       looks the key up in the stored object
//!   n <op> <integer>       reads the stored integer (=, <>, <, <=, >, >=)
//! ```
//!
//! When a full scan opens, [`RawChecks::of`] picks such conjuncts out of
//! its filter, with their constants evaluated once (a parameter or an outer
//! column counts as a constant for one opening). A row that fails one is
//! skipped undecoded. The checks are *necessary* conditions: a row that
//! passes them is still tested against the whole filter, so they change
//! which rows are decoded, never which rows qualify; only when every
//! conjunct became a check ([`RawChecks::is_exact`]) is the filter known to
//! hold, and then a row is decoded for the columns its consumer reads
//! alone. A NULL column fails every check, as it makes each of these
//! conditions NULL.
//!
//! The checks hold plain shared data and are `Sync`, so the engine runs
//! them on several threads at once in a parallel scan
//! ([`centum_engine::Transaction::scan_where`]).

use super::eval::eval;
use super::ExecCtx;
use crate::error::Result;
use crate::functions::operators::BinOp;
use crate::planner::expr::Expr;
use centum_engine::{Row, Table};
use centum_types::json::{JRef, Jsonb};
use centum_types::{DataType, Value};
use std::cmp::Ordering;

/// One condition on one stored column.
#[derive(Clone, Debug)]
enum RawCheck {
    /// `col @> needle`.
    Contains(usize, Jsonb),
    /// `col <@ outer`.
    ContainedIn(usize, Jsonb),
    /// `col ? key`.
    HasKey(usize, String),
    /// `col <op> n` on an integer column: the orderings the comparison
    /// accepts (`[less, equal, greater]`).
    Int(usize, [bool; 3], i64),
    /// A condition compared with NULL: no row qualifies.
    Never,
}

/// The byte-level checks of one opening of a scan (see the module header).
#[derive(Clone, Debug, Default)]
pub(crate) struct RawChecks {
    checks: Vec<RawCheck>,
    /// Whether every conjunct of the filter became a check, so that a row
    /// that passes them meets the filter and need not be tested again.
    exact: bool,
}

impl RawChecks {
    /// The checks found among the conjuncts of `filter` on `table`.
    pub(crate) fn of(
        filter: Option<&Expr>,
        table: &Table,
        outer: &[Value],
        cx: &ExecCtx,
    ) -> Result<RawChecks> {
        let mut checks = Vec::new();
        let exact = match filter {
            Some(f) => collect(f, table, outer, cx, &mut checks)?,
            None => true,
        };
        Ok(RawChecks { checks, exact })
    }

    /// Whether there is nothing to check.
    pub(crate) fn is_empty(&self) -> bool {
        self.checks.is_empty()
    }

    /// Whether a row that passes the checks meets the whole filter.
    pub(crate) fn is_exact(&self) -> bool {
        self.exact
    }

    /// Whether the row may meet the filter.
    #[inline]
    pub(crate) fn pass(&self, row: &Row) -> bool {
        self.checks.iter().all(|c| match c {
            RawCheck::Contains(col, needle) => {
                row.raw(*col).is_some_and(|b| JRef::new(b).contains(needle.root()))
            }
            RawCheck::ContainedIn(col, outer) => {
                row.raw(*col).is_some_and(|b| outer.root().contains(JRef::new(b)))
            }
            RawCheck::HasKey(col, key) => row.raw(*col).is_some_and(|b| JRef::new(b).exists(key)),
            RawCheck::Int(col, accept, n) => {
                row.int(*col).is_some_and(|v| accept[v.cmp(n) as i8 as usize + 1])
            }
            RawCheck::Never => false,
        })
    }
}

/// Adds the checks of `e`'s conjuncts to `out`; whether every conjunct
/// became one.
fn collect(e: &Expr, table: &Table, outer: &[Value], cx: &ExecCtx, out: &mut Vec<RawCheck>) -> Result<bool> {
    let constant = |e: &Expr| -> Result<Option<Value>> {
        if !e.is_row_independent() || !e.is_stable() {
            return Ok(None);
        }
        eval(e, &[], outer, cx).map(Some)
    };
    let column_of = |e: &Expr, want: fn(&DataType) -> bool| match e {
        Expr::Column(c) if table.columns().get(*c).is_some_and(|col| want(&col.ty)) => Some(*c),
        _ => None,
    };
    let is_jsonb = |t: &DataType| *t == DataType::Jsonb;
    let is_int = |t: &DataType| matches!(t, DataType::SmallInt | DataType::Integer | DataType::BigInt);
    match e {
        Expr::Binary(BinOp::And, a, b) => {
            let left = collect(a, table, outer, cx, out)?;
            Ok(collect(b, table, outer, cx, out)? && left)
        }
        Expr::Func(f, args) if args.len() == 2 => {
            let Some(col) = column_of(&args[0], is_jsonb) else { return Ok(false) };
            let check = match (f.name, constant(&args[1])?) {
                (_, None) => return Ok(false),
                ("jsonb_contains" | "jsonb_contained" | "jsonb_exists", Some(Value::Null)) => RawCheck::Never,
                ("jsonb_contains", Some(Value::Jsonb(j))) => RawCheck::Contains(col, j),
                ("jsonb_contained", Some(Value::Jsonb(j))) => RawCheck::ContainedIn(col, j),
                ("jsonb_exists", Some(Value::Text(k))) => RawCheck::HasKey(col, k),
                _ => return Ok(false),
            };
            out.push(check);
            Ok(true)
        }
        Expr::Binary(
            op @ (BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq),
            l,
            r,
        ) => {
            // `n < 5` or `5 > n`: the column's side decides the orientation.
            let (col, k, op) = match (column_of(l, is_int), column_of(r, is_int)) {
                (Some(c), None) => (c, r, *op),
                (None, Some(c)) => (c, l, flip(*op)),
                _ => return Ok(false),
            };
            let n = match constant(k)? {
                Some(Value::SmallInt(n)) => n as i64,
                Some(Value::Integer(n)) => n as i64,
                Some(Value::BigInt(n)) => n,
                Some(Value::Null) => {
                    out.push(RawCheck::Never);
                    return Ok(true);
                }
                _ => return Ok(false),
            };
            let accept = |o: Ordering| match op {
                BinOp::Eq => o.is_eq(),
                BinOp::NotEq => o.is_ne(),
                BinOp::Lt => o.is_lt(),
                BinOp::LtEq => o.is_le(),
                BinOp::Gt => o.is_gt(),
                _ => o.is_ge(),
            };
            out.push(RawCheck::Int(col, [Ordering::Less, Ordering::Equal, Ordering::Greater].map(accept), n));
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The operator with its sides swapped: `5 > n` is `n < 5`.
fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::LtEq => BinOp::GtEq,
        BinOp::Gt => BinOp::Lt,
        BinOp::GtEq => BinOp::LtEq,
        op => op,
    }
}
