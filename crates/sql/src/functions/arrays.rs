//! Array operators and functions over array values ([`Value::Array`],
//! one dimension, lower bound 1).
//!
//! ```text
//!   access     a[i]  a[i:j]  a[:j]  a[i:]
//!   compare    x op ANY (a)   x op ALL (a)
//!   operators  a || b   a || x   x || a   a @> b   a <@ b   a && b
//!   functions  array_length array_upper array_lower cardinality array_ndims
//!              array_dims array_position array_positions array_remove
//!              array_replace array_append array_prepend array_cat
//!              array_to_string string_to_array
//! ```
//!
//! Each is a [`Builtin`] whose result type the binder works out
//! (`planner::arrays`), so a call is one function pointer at run time.
//! An argument that is array text (the catalog's array columns) is read
//! as an array of text.
//!
//! NULL rules follow PostgreSQL: `ANY` is true if some element compares
//! true, else NULL if some comparison was unknown, else false; `@>`,
//! `<@` and `&&` never match a NULL element; `array_position` and
//! `array_remove` find NULL elements (IS NOT DISTINCT FROM).

use std::borrow::Cow;
use std::cmp::Ordering;

use centum_types::{DataType, Value};

use super::{Builtin, FnContext, ScalarImpl};
use crate::error::{Error, Result};
use crate::functions::operators::BinOp;

/// The elements of an array argument: a real array's, borrowed (an
/// operator testing every row reads them without copying), or those of
/// array text.
pub(crate) fn elements(v: &Value) -> Result<Cow<'_, [Value]>> {
    Ok(match v {
        Value::Array(items) => Cow::Borrowed(items),
        Value::Null => Cow::Owned(Vec::new()),
        other => Cow::Owned(
            crate::functions::array_text::parse(&other.to_string())?
                .into_iter()
                .map(|x| x.map_or(Value::Null, Value::Text))
                .collect(),
        ),
    })
}

/// A built-in with a result type worked out by the binder.
pub(crate) fn builtin(name: &'static str, ret: Option<DataType>, strict: bool, eval: ScalarImpl) -> Builtin {
    Builtin { name, ret, strict, eval }
}

/// `a[i]`: NULL when out of range.
pub(crate) fn element(args: &[Value], _: &FnContext) -> Result<Value> {
    let items = elements(&args[0])?;
    let i = index(&args[1]);
    let at = i.and_then(|i| i.checked_sub(1)).and_then(|i| usize::try_from(i).ok());
    Ok(at.and_then(|i| items.get(i).cloned()).unwrap_or(Value::Null))
}

/// `a[lo:hi]`, either bound NULL meaning the array's own; clipped to the
/// array, empty when nothing is left.
pub(crate) fn slice(args: &[Value], _: &FnContext) -> Result<Value> {
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    let items = elements(&args[0])?;
    let lo = if args[1].is_null() { 1 } else { index(&args[1]).unwrap_or(1) }.max(1);
    let hi = if args[2].is_null() { items.len() as i64 } else { index(&args[2]).unwrap_or(0) }
        .min(items.len() as i64);
    if lo > hi {
        return Ok(Value::Array(Vec::new()));
    }
    Ok(Value::Array(items[(lo - 1) as usize..hi as usize].to_vec()))
}

use super::integer as index;

/// Whether `ord` satisfies `op`.
pub(crate) fn holds(op: BinOp, ord: Ordering) -> bool {
    match op {
        BinOp::Eq => ord == Ordering::Equal,
        BinOp::NotEq => ord != Ordering::Equal,
        BinOp::Lt => ord == Ordering::Less,
        BinOp::LtEq => ord != Ordering::Greater,
        BinOp::Gt => ord == Ordering::Greater,
        BinOp::GtEq => ord != Ordering::Less,
        _ => false,
    }
}

/// `x op ANY (a)` (ALL = false) or `x op ALL (a)`, with SQL's NULL rules.
pub(crate) fn quantified(x: &Value, op: BinOp, all: bool, a: &Value) -> Result<Value> {
    if a.is_null() {
        return Ok(Value::Null);
    }
    let items = elements(a)?;
    let mut unknown = false;
    for item in items.iter() {
        match x.sql_cmp(item) {
            None => unknown = true,
            Some(ord) if holds(op, ord) != all => return Ok(Value::Boolean(!all)),
            Some(_) => {}
        }
    }
    Ok(if unknown { Value::Null } else { Value::Boolean(all) })
}

macro_rules! quantified_fns {
    ($($name:ident = $op:expr, $all:expr;)*) => {
        $(
            fn $name(args: &[Value], _: &FnContext) -> Result<Value> {
                quantified(&args[0], $op, $all, &args[1])
            }
        )*
        /// The implementation of `op ANY` / `op ALL`.
        pub(crate) fn quantified_impl(op: BinOp, all: bool) -> Option<ScalarImpl> {
            $(
                if (op, all) == ($op, $all) {
                    return Some($name);
                }
            )*
            None
        }
    };
}

quantified_fns! {
    any_eq = BinOp::Eq, false; any_ne = BinOp::NotEq, false; any_lt = BinOp::Lt, false;
    any_le = BinOp::LtEq, false; any_gt = BinOp::Gt, false; any_ge = BinOp::GtEq, false;
    all_eq = BinOp::Eq, true; all_ne = BinOp::NotEq, true; all_lt = BinOp::Lt, true;
    all_le = BinOp::LtEq, true; all_gt = BinOp::Gt, true; all_ge = BinOp::GtEq, true;
}

/// Whether some element of `a` equals `x` (SQL equality; NULLs never).
fn has(a: &[Value], x: &Value) -> bool {
    a.iter().any(|y| x.sql_cmp(y) == Some(Ordering::Equal))
}

/// `a @> b`: every element of `b` is in `a`.
pub(crate) fn contains(args: &[Value], _: &FnContext) -> Result<Value> {
    let (a, b) = (elements(&args[0])?, elements(&args[1])?);
    Ok(Value::Boolean(b.iter().all(|x| has(&a, x))))
}

/// `a <@ b`: every element of `a` is in `b`.
pub(crate) fn contained(args: &[Value], _: &FnContext) -> Result<Value> {
    let (a, b) = (elements(&args[0])?, elements(&args[1])?);
    Ok(Value::Boolean(a.iter().all(|x| has(&b, x))))
}

/// `a && b`: some element in both.
pub(crate) fn overlaps(args: &[Value], _: &FnContext) -> Result<Value> {
    let (a, b) = (elements(&args[0])?, elements(&args[1])?);
    Ok(Value::Boolean(a.iter().any(|x| has(&b, x))))
}

/// `a || b` and `array_cat`: NULL arrays count as empty.
pub(crate) fn cat(args: &[Value], _: &FnContext) -> Result<Value> {
    if args[0].is_null() && args[1].is_null() {
        return Ok(Value::Null);
    }
    let mut out = elements(&args[0])?.into_owned();
    out.extend(elements(&args[1])?.iter().cloned());
    Ok(Value::Array(out))
}

/// `a || x` and `array_append`.
pub(crate) fn append(args: &[Value], _: &FnContext) -> Result<Value> {
    let mut out = elements(&args[0])?.into_owned();
    out.push(args[1].clone());
    Ok(Value::Array(out))
}

/// `x || a` and `array_prepend`.
pub(crate) fn prepend(args: &[Value], _: &FnContext) -> Result<Value> {
    let mut out = vec![args[0].clone()];
    out.extend(elements(&args[1])?.iter().cloned());
    Ok(Value::Array(out))
}

/// `cardinality(a)`: the number of elements.
pub(crate) fn cardinality(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Integer(elements(&args[0])?.len() as i32))
}

/// `array_length`, `array_upper` and `array_lower` (by `name`): NULL for
/// an empty array or a dimension other than 1.
fn bound(args: &[Value], lower: bool) -> Result<Value> {
    let n = elements(&args[0])?.len();
    if n == 0 || index(&args[1]) != Some(1) {
        return Ok(Value::Null);
    }
    Ok(Value::Integer(if lower { 1 } else { n as i32 }))
}

pub(crate) fn length(args: &[Value], _: &FnContext) -> Result<Value> {
    bound(args, false)
}

pub(crate) fn lower(args: &[Value], _: &FnContext) -> Result<Value> {
    bound(args, true)
}

/// `array_ndims(a)`: 1, or NULL for an empty array.
pub(crate) fn ndims(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(if elements(&args[0])?.is_empty() { Value::Null } else { Value::Integer(1) })
}

/// `array_dims(a)`: `[1:n]`, or NULL for an empty array.
pub(crate) fn dims(args: &[Value], _: &FnContext) -> Result<Value> {
    let n = elements(&args[0])?.len();
    Ok(if n == 0 { Value::Null } else { Value::Text(format!("[1:{n}]")) })
}

/// `array_position(a, x)`: the first index holding `x` (NULL finds NULL).
pub(crate) fn position(args: &[Value], _: &FnContext) -> Result<Value> {
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    let items = elements(&args[0])?;
    Ok(items.iter().position(|y| same(y, &args[1])).map_or(Value::Null, |i| Value::Integer(i as i32 + 1)))
}

/// `array_positions(a, x)`: every index holding `x`.
pub(crate) fn positions(args: &[Value], _: &FnContext) -> Result<Value> {
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    let items = elements(&args[0])?;
    let at = items.iter().enumerate().filter(|(_, y)| same(y, &args[1]));
    Ok(Value::Array(at.map(|(i, _)| Value::Integer(i as i32 + 1)).collect()))
}

/// IS NOT DISTINCT FROM.
fn same(a: &Value, b: &Value) -> bool {
    match (a.is_null(), b.is_null()) {
        (true, true) => true,
        (false, false) => a.sql_cmp(b) == Some(Ordering::Equal),
        _ => false,
    }
}

/// `array_remove(a, x)`.
pub(crate) fn remove(args: &[Value], _: &FnContext) -> Result<Value> {
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    Ok(Value::Array(elements(&args[0])?.iter().filter(|y| !same(y, &args[1])).cloned().collect()))
}

/// `array_replace(a, from, to)`.
pub(crate) fn replace(args: &[Value], _: &FnContext) -> Result<Value> {
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    let items = elements(&args[0])?;
    Ok(Value::Array(items.iter().map(|y| if same(y, &args[1]) { &args[2] } else { y }).cloned().collect()))
}

/// `array_to_string(a, sep [, null_text])`: NULL elements are skipped
/// unless `null_text` is given.
pub(crate) fn to_string(args: &[Value], _: &FnContext) -> Result<Value> {
    if args[0].is_null() || args[1].is_null() {
        return Ok(Value::Null);
    }
    let null = args.get(2).filter(|v| !v.is_null()).map(Value::to_string);
    let parts: Vec<String> = elements(&args[0])?
        .iter()
        .filter_map(|v| if v.is_null() { null.clone() } else { Some(v.to_string()) })
        .collect();
    Ok(Value::Text(parts.join(&args[1].to_string())))
}

/// `string_to_array(s, sep [, null_text])`: a NULL separator splits into
/// characters, an empty one gives the whole string.
pub(crate) fn from_string(args: &[Value], _: &FnContext) -> Result<Value> {
    let Value::Text(s) = &args[0] else { return Ok(Value::Null) };
    if s.is_empty() {
        return Ok(Value::Array(Vec::new()));
    }
    let parts: Vec<String> = match &args[1] {
        Value::Null => s.chars().map(String::from).collect(),
        Value::Text(sep) if sep.is_empty() => vec![s.clone()],
        sep => s.split(sep.to_string().as_str()).map(str::to_string).collect(),
    };
    let null = args.get(2).and_then(|v| match v {
        Value::Text(t) => Some(t.as_str()),
        _ => None,
    });
    Ok(Value::Array(
        parts
            .into_iter()
            .map(|p| if Some(p.as_str()) == null { Value::Null } else { Value::Text(p) })
            .collect(),
    ))
}

/// 42883 for an array function or operator given the wrong types.
pub(crate) fn no_function(name: &str, args: &[Option<DataType>]) -> Error {
    let names: Vec<String> =
        args.iter().map(|t| t.as_ref().map_or("unknown".into(), |t| t.sql_name())).collect();
    Error::UndefinedFunction(format!("{name}({})", names.join(", ")))
}
