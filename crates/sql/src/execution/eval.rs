//! Expression evaluation over a row, with SQL's three-valued logic.

use super::query;
use super::ExecCtx;
use crate::error::{Error, Result};
use crate::functions::operators::text_of;
use crate::functions::operators::BinOp;
use crate::functions::operators::{binary, cast, like, negate};
use crate::functions::FnContext;
use crate::planner::expr::{Expr, SeqOp, SubqueryKind};
use centum_types::{DataType, TimestampTz, Value};
use std::cmp::Ordering;

/// Evaluates `e` over `row` (the current row) and `outer`.
pub(crate) fn eval(e: &Expr, row: &[Value], outer: &[Value], cx: &ExecCtx) -> Result<Value> {
    // Only a node with operands recurses; leaves skip the stack check.
    if !matches!(e, Expr::Column(_) | Expr::Outer(_) | Expr::Literal(_) | Expr::Param(_)) {
        crate::stack::check("expression nested too deeply")?;
    }
    Ok(match e {
        Expr::Column(i) => row.get(*i).cloned().unwrap_or(Value::Null),
        Expr::Outer(i) => outer.get(*i).cloned().unwrap_or(Value::Null),
        Expr::Literal(v) => v.clone(),
        Expr::Param(i) => cx
            .params
            .get(*i)
            .cloned()
            .ok_or_else(|| Error::other("08P01", format!("no value given for parameter ${}", i + 1)))?,
        Expr::Binary(BinOp::And, a, b) => {
            let l = truth(&eval(a, row, outer, cx)?);
            if l == Some(false) {
                return Ok(Value::Boolean(false));
            }
            match (l, truth(&eval(b, row, outer, cx)?)) {
                (_, Some(false)) => Value::Boolean(false),
                (Some(true), Some(true)) => Value::Boolean(true),
                _ => Value::Null,
            }
        }
        Expr::Binary(BinOp::Or, a, b) => {
            let l = truth(&eval(a, row, outer, cx)?);
            if l == Some(true) {
                return Ok(Value::Boolean(true));
            }
            match (l, truth(&eval(b, row, outer, cx)?)) {
                (_, Some(true)) => Value::Boolean(true),
                (Some(false), Some(false)) => Value::Boolean(false),
                _ => Value::Null,
            }
        }
        Expr::Binary(op, a, b) => {
            let v = binary(*op, eval(a, row, outer, cx)?, eval(b, row, outer, cx)?)?;
            cx.tick_bytes(heap_bytes(&v))?; // `||` of long strings
            v
        }
        Expr::Not(a) => match truth(&eval(a, row, outer, cx)?) {
            Some(b) => Value::Boolean(!b),
            None => Value::Null,
        },
        Expr::Neg(a) => negate(eval(a, row, outer, cx)?)?,
        // A row value IS NULL when every field is, and IS NOT NULL when
        // none is, as the SQL standard defines them for rows.
        Expr::IsNull(a, negated) => Value::Boolean(match (eval(a, row, outer, cx)?, negated) {
            (Value::Composite(c), false) => c.all_null(),
            (Value::Composite(c), true) => c.none_null(),
            (v, n) => v.is_null() != *n,
        }),
        Expr::IsBool(a, want, negated) => {
            let v = truth(&eval(a, row, outer, cx)?);
            Value::Boolean((v == Some(*want)) != *negated)
        }
        Expr::IsDistinct(a, b, negated) => {
            let (l, r) = (eval(a, row, outer, cx)?, eval(b, row, outer, cx)?);
            let same = match (l.is_null(), r.is_null()) {
                (true, true) => true,
                (false, false) => l.sql_cmp(&r) == Some(Ordering::Equal),
                _ => false,
            };
            Value::Boolean(same == *negated)
        }
        Expr::InList(a, list, negated) => {
            let v = eval(a, row, outer, cx)?;
            if v.is_null() {
                return Ok(Value::Null);
            }
            if list.len() >= InSet::MIN_MEMBERS {
                let set = in_set(e, cx, || {
                    if !list.iter().all(statement_constant) {
                        return Ok(None);
                    }
                    let members = list.iter().map(|x| eval(x, &[], outer, cx)).collect::<Result<Vec<_>>>()?;
                    Ok(InSet::of(members.into_iter().map(Some)))
                })?;
                if let Some(found) = set.and_then(|s| s.verdict(&v)) {
                    return Ok(found.map_or(Value::Null, |f| Value::Boolean(f != *negated)));
                }
            }
            let mut saw_null = false;
            for item in list {
                let x = eval(item, row, outer, cx)?;
                match v.sql_cmp(&x) {
                    Some(Ordering::Equal) => return Ok(Value::Boolean(!*negated)),
                    None if x.is_null() => saw_null = true,
                    _ => {}
                }
            }
            if saw_null {
                Value::Null
            } else {
                Value::Boolean(*negated)
            }
        }
        Expr::Like(a, p, negated, ci) => {
            let (v, p) = (eval(a, row, outer, cx)?, eval(p, row, outer, cx)?);
            match (v, p) {
                (Value::Null, _) | (_, Value::Null) => Value::Null,
                (v, p) => {
                    let (s, pat) = (text_of(&v), text_of(&p));
                    cx.tick_bytes(s.len() + pat.len())?;
                    let work = || cx.tick(1);
                    let m = if *ci {
                        like(&s.to_lowercase(), &pat.to_lowercase(), work)?
                    } else {
                        like(&s, &pat, work)?
                    };
                    Value::Boolean(m != *negated)
                }
            }
        }
        Expr::Case(operand, whens, els) => {
            let op = operand.as_ref().map(|o| eval(o, row, outer, cx)).transpose()?;
            for (w, t) in whens {
                let c = eval(w, row, outer, cx)?;
                let hit = match &op {
                    Some(o) => o.sql_cmp(&c) == Some(Ordering::Equal),
                    None => truth(&c) == Some(true),
                };
                if hit {
                    return eval(t, row, outer, cx);
                }
            }
            match els {
                Some(e) => eval(e, row, outer, cx)?,
                None => Value::Null,
            }
        }
        Expr::Coalesce(list) => {
            for item in list {
                let v = eval(item, row, outer, cx)?;
                if !v.is_null() {
                    return Ok(v);
                }
            }
            Value::Null
        }
        Expr::NullIf(a, b) => {
            let l = eval(a, row, outer, cx)?;
            let r = eval(b, row, outer, cx)?;
            if l.sql_cmp(&r) == Some(Ordering::Equal) {
                Value::Null
            } else {
                l
            }
        }
        Expr::Cast(a, ty) => cast(eval(a, row, outer, cx)?, ty)?,
        Expr::Func(f, args)
            if f.name == crate::planner::arrays::QUANTIFIED_ANY && statement_constant(&args[1]) =>
        {
            let l = eval(&args[0], row, outer, cx)?;
            let set = in_set(e, cx, || match eval(&args[1], &[], outer, cx)? {
                Value::Array(items) if items.len() >= InSet::MIN_MEMBERS => {
                    Ok(InSet::of(items.into_iter().map(Some)))
                }
                _ => Ok(None),
            })?;
            if let (false, Some(found)) = (l.is_null(), set.and_then(|s| s.verdict(&l))) {
                return Ok(found.map_or(Value::Null, Value::Boolean));
            }
            let a = eval(&args[1], row, outer, cx)?;
            crate::functions::arrays::quantified(&l, BinOp::Eq, false, &a)?
        }
        Expr::Func(f, args) => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                let v = eval(a, row, outer, cx)?;
                if f.strict && v.is_null() {
                    return Ok(Value::Null);
                }
                vals.push(v);
            }
            let out = (f.eval)(&vals, &cx.fn_ctx())?;
            // Functions over long strings take time in proportion to them.
            cx.tick_bytes(vals.iter().chain([&out]).map(heap_bytes).sum())?;
            out
        }
        Expr::Catalog(crate::system::CatalogFn::AnyEq, args) if statement_constant(&args[1]) => {
            let set = in_set(e, cx, || {
                let a = eval(&args[1], &[], outer, cx)?;
                if a.is_null() {
                    return Ok(None);
                }
                let items = crate::functions::array_text::parse(&text_of(&a))?;
                Ok(InSet::of(items.into_iter().map(|x| x.map(Value::Text))))
            })?;
            let l = eval(&args[0], row, outer, cx)?;
            match set {
                Some(set) if l.is_null() => {
                    if set.members == 0 {
                        Value::Boolean(false)
                    } else {
                        Value::Null
                    }
                }
                Some(set) => set.text_verdict(&text_of(&l)).map_or(Value::Null, Value::Boolean),
                // A NULL array.
                None => Value::Null,
            }
        }
        Expr::Catalog(f, args) => {
            let vals: Vec<Value> = args.iter().map(|a| eval(a, row, outer, cx)).collect::<Result<_>>()?;
            crate::system::functions::eval(*f, &vals, &|| cx.system_snapshot(), &cx.identity, &|| {
                cx.check_deadline()
            })?
        }
        Expr::Routine(r, args) => {
            let args: Vec<Value> = args.iter().map(|a| eval(a, row, outer, cx)).collect::<Result<_>>()?;
            crate::execution::routine::call(r, args, cx)?.value
        }
        Expr::Sequence(op, name, args) => {
            let args: Vec<Value> = args.iter().map(|a| eval(a, row, outer, cx)).collect::<Result<_>>()?;
            sequence(*op, name, &args, cx)?
        }
        Expr::Subquery(plan, kind) => {
            let mut sub_outer = Vec::with_capacity(outer.len() + row.len());
            sub_outer.extend_from_slice(outer);
            sub_outer.extend_from_slice(row);
            subquery(plan, kind, row, outer, sub_outer, cx)?
        }
    })
}

/// Evaluates a condition: true only for TRUE (NULL and FALSE reject).
pub(crate) fn test(e: &Expr, row: &[Value], outer: &[Value], cx: &ExecCtx) -> Result<bool> {
    Ok(truth(&eval(e, row, outer, cx)?) == Some(true))
}

fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Boolean(b) => Some(*b),
        _ => None,
    }
}

/// The members of an `IN` list or an `= ANY` array that are constant for
/// the statement, hashed, so that a scan tests each row in constant time
/// instead of comparing it with every member (`id IN (10,000 values)`
/// over 100,000 rows is a billion comparisons). Only members of one
/// family whose equality is plain equality are hashed: integers (compared
/// as i64) or text; other lists are compared member by member.
pub(crate) struct InSet {
    ints: foldhash::HashSet<i64>,
    texts: foldhash::HashSet<String>,
    /// Some member is NULL: a value not found is then unknown, not false.
    null: bool,
    /// Members, NULLs included.
    members: usize,
}

impl InSet {
    /// Lists shorter than this are compared member by member.
    const MIN_MEMBERS: usize = 8;

    /// The set of `members` (`None` is NULL), or `None` when they are not
    /// all integers or all text.
    fn of(members: impl Iterator<Item = Option<Value>>) -> Option<InSet> {
        let mut s = InSet { ints: Default::default(), texts: Default::default(), null: false, members: 0 };
        for m in members {
            s.members += 1;
            match m {
                None | Some(Value::Null) => s.null = true,
                Some(Value::SmallInt(i)) => _ = s.ints.insert(i as i64),
                Some(Value::Integer(i)) => _ = s.ints.insert(i as i64),
                Some(Value::BigInt(i)) => _ = s.ints.insert(i),
                Some(Value::Text(t)) => _ = s.texts.insert(t),
                Some(_) => return None,
            }
        }
        (s.ints.is_empty() || s.texts.is_empty()).then_some(s)
    }

    /// Whether `v` (not NULL) is a member: `Some(Some(true))` found,
    /// `Some(Some(false))` not, `Some(None)` unknown (not found, but a
    /// member is NULL); `None` when `v` is not of the set's family and must
    /// be compared member by member.
    fn verdict(&self, v: &Value) -> Option<Option<bool>> {
        let found = match v {
            Value::SmallInt(i) if self.texts.is_empty() => self.ints.contains(&(*i as i64)),
            Value::Integer(i) if self.texts.is_empty() => self.ints.contains(&(*i as i64)),
            Value::BigInt(i) if self.texts.is_empty() => self.ints.contains(i),
            Value::Text(t) if self.ints.is_empty() => return Some(self.text_verdict(t)),
            _ => return None,
        };
        Some(self.answer(found))
    }

    /// [`InSet::verdict`] of a text value, for a set of text members (or
    /// none at all).
    fn text_verdict(&self, t: &str) -> Option<bool> {
        self.answer(self.texts.contains(t))
    }

    /// SQL's answer for a value found or not: not found in a set with a
    /// NULL member is unknown.
    fn answer(&self, found: bool) -> Option<bool> {
        (found || !self.null).then_some(found)
    }
}

/// Whether `e` has one value for the whole statement: it reads no row,
/// outer row or subquery, and calls nothing volatile (sequences and
/// routines count as volatile).
fn statement_constant(e: &Expr) -> bool {
    let mut outer = false;
    e.walk(&mut |x| outer |= matches!(x, Expr::Outer(_)));
    !outer && e.is_row_independent() && e.is_stable()
}

/// The statement's set for expression `e`, built by `build` on first use.
fn in_set(
    e: &Expr,
    cx: &ExecCtx,
    build: impl FnOnce() -> Result<Option<InSet>>,
) -> Result<Option<std::rc::Rc<InSet>>> {
    let key = e as *const Expr as usize;
    if let Some(s) = cx.in_sets.borrow().get(&key) {
        return Ok(s.clone());
    }
    let s = build()?.map(std::rc::Rc::new);
    cx.in_sets.borrow_mut().insert(key, s.clone());
    Ok(s)
}

/// The bytes a string or byte-string value holds (0 for other values).
fn heap_bytes(v: &Value) -> usize {
    match v {
        Value::Text(s) => s.len(),
        Value::Bytea(b) => b.len(),
        _ => 0,
    }
}

/// The rows of an uncorrelated subquery, with their first column as a
/// set for `IN`.
pub(crate) struct SubqueryRows {
    rows: Vec<Vec<Value>>,
    firsts: std::collections::HashSet<Value>,
    has_null: bool,
    /// A non-NULL first value of every row is set-comparable with this one
    /// (`None`: no non-NULL values, or values of kinds that are not).
    sample: Option<Value>,
}

/// The rows of `plan` if it reads no outer column (computed once per
/// statement), `None` if it must run for each row.
fn cached(plan: &crate::planner::Plan, cx: &ExecCtx) -> Result<Option<std::rc::Rc<SubqueryRows>>> {
    let key = plan as *const _ as usize;
    if let Some(hit) = cx.subqueries.borrow().get(&key) {
        return Ok(hit.clone());
    }
    let entry = if plan.reads_outer() {
        None
    } else {
        let rows = super::dml::gather(query::open(plan, cx, vec![])?, cx)?;
        let has_null = rows.iter().any(|r| r.first().is_none_or(Value::is_null));
        let firsts: std::collections::HashSet<Value> =
            rows.iter().filter_map(|r| r.first().cloned()).filter(|v| !v.is_null()).collect();
        let first = firsts.iter().next().cloned();
        let sample = first.filter(|f| firsts.iter().all(|v| set_comparable(v, f)));
        Some(std::rc::Rc::new(SubqueryRows { rows, firsts, has_null, sample }))
    };
    cx.subqueries.borrow_mut().insert(key, entry.clone());
    Ok(entry)
}

fn subquery(
    plan: &crate::planner::Plan,
    kind: &SubqueryKind,
    row: &[Value],
    outer: &[Value],
    sub_outer: Vec<Value>,
    cx: &ExecCtx,
) -> Result<Value> {
    if let Some(c) = cached(plan, cx)? {
        return match kind {
            SubqueryKind::Scalar => match c.rows.as_slice() {
                [] => Ok(Value::Null),
                [one] => Ok(one.first().cloned().unwrap_or(Value::Null)),
                _ => Err(Error::Cardinality),
            },
            SubqueryKind::Exists => Ok(Value::Boolean(!c.rows.is_empty())),
            SubqueryKind::Array => array_of(c.rows.iter().cloned().map(Ok)),
            SubqueryKind::Any(left, BinOp::Eq) => {
                let l = eval(left, row, outer, cx)?;
                let hashable = match &c.sample {
                    Some(v) => set_comparable(v, &l),
                    None => c.firsts.is_empty(),
                };
                if l.is_null() {
                    Ok(if c.rows.is_empty() { Value::Boolean(false) } else { Value::Null })
                } else if hashable {
                    Ok(if c.firsts.contains(&l) {
                        Value::Boolean(true)
                    } else if c.has_null {
                        Value::Null
                    } else {
                        Value::Boolean(false)
                    })
                } else {
                    compare_rows(kind, row, outer, c.rows.iter().cloned().map(Ok), cx)
                }
            }
            _ => compare_rows(kind, row, outer, c.rows.iter().cloned().map(Ok), cx),
        };
    }
    let rows = query::open(plan, cx, sub_outer)?;
    match kind {
        SubqueryKind::Any(..) | SubqueryKind::All(..) => compare_rows(kind, row, outer, rows, cx),
        SubqueryKind::Array => array_of(rows),
        _ => scalar_or_exists(kind, rows),
    }
}

/// `ARRAY(subquery)`: the first column of every row, as an array.
fn array_of(rows: impl Iterator<Item = Result<Vec<Value>>>) -> Result<Value> {
    let mut items = Vec::new();
    for r in rows {
        items.push(r?.into_iter().next().unwrap_or(Value::Null));
    }
    Ok(Value::Array(items))
}

fn scalar_or_exists(
    kind: &SubqueryKind,
    mut rows: impl Iterator<Item = Result<Vec<Value>>>,
) -> Result<Value> {
    if let SubqueryKind::Exists = kind {
        return Ok(Value::Boolean(rows.next().transpose()?.is_some()));
    }
    let first = match rows.next() {
        None => return Ok(Value::Null),
        Some(r) => r?,
    };
    if rows.next().transpose()?.is_some() {
        return Err(Error::Cardinality);
    }
    Ok(first.into_iter().next().unwrap_or(Value::Null))
}

/// `left op ANY/ALL (rows)`, with SQL's NULL rules.
fn compare_rows(
    kind: &SubqueryKind,
    row: &[Value],
    outer: &[Value],
    rows: impl Iterator<Item = Result<Vec<Value>>>,
    cx: &ExecCtx,
) -> Result<Value> {
    let (SubqueryKind::Any(left, op) | SubqueryKind::All(left, op)) = kind else {
        return Err(Error::other("XX000", "not a comparison subquery"));
    };
    let all = matches!(kind, SubqueryKind::All(..));
    let l = eval(left, row, outer, cx)?;
    let mut saw_null = false;
    for r in rows {
        let r = r?;
        let verdict = if r.len() > 1 {
            rows_equal(&l, r)?
        } else {
            truth(&binary(*op, l.clone(), r.into_iter().next().unwrap_or(Value::Null))?)
        };
        match verdict {
            Some(true) if !all => return Ok(Value::Boolean(true)),
            Some(false) if all => return Ok(Value::Boolean(false)),
            None => saw_null = true,
            _ => {}
        }
    }
    Ok(if saw_null { Value::Null } else { Value::Boolean(all) })
}

/// `(a, b, ...) = ` a subquery's row, as the SQL standard compares a row
/// constructor with a subquery's output: false when a pair differs,
/// unknown when none differs but a pair holds NULL, else true. The binder
/// makes `left` a row of as many fields as the subquery has columns.
fn rows_equal(left: &Value, right: Vec<Value>) -> Result<Option<bool>> {
    let Value::Composite(l) = left else {
        return Err(Error::Syntax("subquery has too many columns".into()));
    };
    let mut unknown = false;
    for (a, b) in l.fields.iter().zip(right) {
        match truth(&binary(BinOp::Eq, a.clone(), b)?) {
            Some(false) => return Ok(Some(false)),
            None => unknown = true,
            Some(true) => {}
        }
    }
    Ok(if unknown { None } else { Some(true) })
}

/// Whether hashing (the total order's equality) agrees with SQL's `=` for
/// these two values: exact numbers with each other, or two values of one
/// variant other than double precision.
fn set_comparable(a: &Value, b: &Value) -> bool {
    let exact = |v: &Value| {
        matches!(v, Value::SmallInt(_) | Value::Integer(_) | Value::BigInt(_) | Value::Numeric(_))
    };
    (exact(a) && exact(b))
        || (std::mem::discriminant(a) == std::mem::discriminant(b) && !matches!(a, Value::Double(_)))
}

fn sequence(op: SeqOp, name: &str, args: &[Value], cx: &ExecCtx) -> Result<Value> {
    match op {
        SeqOp::Next => {
            if cx.read_only {
                return Err(Error::read_only("nextval()"));
            }
            let v = cx.catalog.nextval(name)?;
            cx.currval.borrow_mut().insert(name.to_string(), v);
            Ok(Value::BigInt(v))
        }
        SeqOp::LastValue | SeqOp::IsCalled => {
            let (last, called) = cx.catalog.sequence_state(name)?;
            Ok(if op == SeqOp::LastValue { Value::BigInt(last) } else { Value::Boolean(called) })
        }
        SeqOp::Current => cx.currval.borrow().get(name).map(|v| Value::BigInt(*v)).ok_or_else(|| {
            Error::other(
                "55000",
                format!("currval of sequence \"{name}\" is not yet defined in this session"),
            )
        }),
        SeqOp::Set => {
            if cx.read_only {
                return Err(Error::read_only("setval()"));
            }
            let Some(Value::BigInt(v)) =
                args.first().cloned().map(|v| v.coerce_to(&DataType::BigInt)).transpose()?
            else {
                return Ok(Value::Null);
            };
            let called = !matches!(args.get(1), Some(Value::Boolean(false)));
            cx.catalog.setval(name, v, called)?;
            if called {
                cx.currval.borrow_mut().insert(name.to_string(), v);
            }
            Ok(Value::BigInt(v))
        }
    }
}

impl ExecCtx<'_> {
    pub(crate) fn fn_ctx(&self) -> FnContext {
        let cell = self.outer_time.unwrap_or(&self.statement_time);
        let statement_time = *cell.get_or_init(TimestampTz::now);
        FnContext { statement_time, transaction_time: self.transaction_time.unwrap_or(statement_time) }
    }
}
