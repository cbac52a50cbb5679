//! Query operators as iterators over rows.

use super::aggregate::Acc;
use super::eval::{eval, test};
use super::ExecCtx;
use crate::error::{Error, Result};
use crate::planner::expr::Expr;
use crate::planner::plan::{Access, AccessPath, JoinKind, Plan, SetOpKind, SortKey};
use centum_engine::{KeyRange, Row, Scanned};
use centum_types::{DataType, Value};
use std::cmp::Ordering;
// The executor's own hash tables (groups, DISTINCT, hash joins, set
// operations) hash whole rows of values: a fast non-cryptographic hash.
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::ops::Bound;

/// A stream of rows.
pub(crate) type Rows<'a> = Box<dyn Iterator<Item = Result<Vec<Value>>> + 'a>;

/// Opens `plan` with outer row `outer`.
pub(crate) fn open<'a>(plan: &'a Plan, cx: &'a ExecCtx<'a>, outer: Vec<Value>) -> Result<Rows<'a>> {
    crate::stack::check("plan nested too deeply")?;
    match (&cx.profile, plan) {
        // A table access measures itself (DML opens accesses directly).
        (None, _) | (_, Plan::Access(_)) => open_node(plan, cx, outer),
        (Some(p), _) => super::profile::open(Some(p), node_key(plan), || open_node(plan, cx, outer)),
    }
}

/// Locks the row of `table` with `key` in unique index `index` (FOR
/// UPDATE): its values as locked, or `None` if it is gone, no longer
/// satisfies `recheck`, or was skipped.
fn lock_one(
    table: &std::sync::Arc<centum_engine::Table>,
    index: &str,
    key: &[Value],
    recheck: Option<&Expr>,
    on_held: centum_engine::OnHeld,
    outer: &[Value],
    cx: &ExecCtx,
) -> Result<Option<Vec<Value>>> {
    let Some(row) = cx.txn.get(table, index, key)? else { return Ok(None) };
    let current = row.values();
    let mut failed = None;
    let locked = cx.txn.lock_row(&row, &current, on_held, |cur| {
        match recheck.map_or(Ok(true), |f| test(f, cur, outer, cx)) {
            Ok(ok) => ok,
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    locked.map_err(|e| match e {
        centum_engine::Error::RowLocked => Error::other(
            "55P03",
            format!(
                "could not obtain lock on row in relation \"{}\"",
                crate::planner::views::short(&table.name())
            ),
        ),
        e => e.into(),
    })
}

/// The key of `plan` in an EXPLAIN ANALYZE profile: its address, or for a
/// table access that of its [`Access`], which DML reaches without a plan.
pub fn node_key(plan: &Plan) -> usize {
    match plan {
        Plan::Access(a) => a as *const Access as usize,
        p => p as *const Plan as usize,
    }
}

fn open_node<'a>(plan: &'a Plan, cx: &'a ExecCtx<'a>, outer: Vec<Value>) -> Result<Rows<'a>> {
    Ok(match plan {
        Plan::Values { rows } => {
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                out.push(r.iter().map(|e| eval(e, &[], &outer, cx)).collect::<Result<Vec<_>>>()?);
            }
            Box::new(out.into_iter().map(Ok))
        }
        Plan::System(t) => {
            let mut rows = t.rows(&*cx.system_snapshot()?, &cx.identity);
            // The hidden `tableoid` (see the binder).
            let tableoid = Value::Integer(t.oid());
            rows.iter_mut().for_each(|r| r.push(tableoid.clone()));
            Box::new(rows.into_iter().map(Ok))
        }
        Plan::Access(a) => {
            let rows = access_rows(a, cx, &outer)?;
            Box::new(rows.map(|r| r.map(|(_, v)| v)))
        }
        Plan::Filter { input, pred } => {
            let input = open(input, cx, outer.clone())?;
            Box::new(input.filter_map(move |r| match r.and_then(|row| cx.tick(1).map(|_| row)) {
                Ok(row) => match test(pred, &row, &outer, cx) {
                    Ok(true) => Some(Ok(row)),
                    Ok(false) => None,
                    Err(e) => Some(Err(e)),
                },
                Err(e) => Some(Err(e)),
            }))
        }
        Plan::Project { input, exprs } => {
            let input = open(input, cx, outer.clone())?;
            Box::new(input.map(move |r| {
                let row = r?;
                exprs.iter().map(|e| eval(e, &row, &outer, cx)).collect()
            }))
        }
        Plan::Lock { input, table, index, key_from, recheck, exprs, on_held, command } => {
            // Refused before any row is read, as PostgreSQL refuses the
            // statement.
            if cx.read_only {
                return Err(Error::read_only(command));
            }
            let input = open(input, cx, outer.clone())?;
            // A scan that is still running may meet the version a lock made
            // (locking writes one): each row is locked once.
            let mut seen: HashSet<Vec<Value>> = HashSet::new();
            Box::new(input.filter_map(move |r| {
                let locked = r.and_then(|row| {
                    cx.tick(1)?;
                    let key = &row[*key_from..];
                    if !seen.insert(key.to_vec()) {
                        return Ok(None);
                    }
                    lock_one(table, index, key, recheck.as_ref(), *on_held, &outer, cx)
                });
                match locked {
                    Ok(Some(cur)) => Some(exprs.iter().map(|e| eval(e, &cur, &outer, cx)).collect()),
                    Ok(None) => None,
                    Err(e) => Some(Err(e)),
                }
            }))
        }
        Plan::NestedLoop { left, right, lateral, kind, on, right_width } => {
            Box::new(NestedLoop::new(left, right, *lateral, *kind, on.as_ref(), *right_width, cx, outer)?)
        }
        Plan::HashJoin { left, right, kind, left_keys, right_keys, on, left_width, right_width } => {
            hash_join(
                left,
                right,
                *kind,
                left_keys,
                right_keys,
                on.as_ref(),
                *left_width,
                *right_width,
                cx,
                outer,
            )?
        }
        Plan::Aggregate { input, group, aggs, sets } => Box::new(
            aggregate(open(input, cx, outer.clone())?, group, aggs, sets.as_deref(), &outer, cx)?
                .into_iter()
                .map(Ok),
        ),
        Plan::Window { input, calls } => {
            Box::new(super::window::run(open(input, cx, outer.clone())?, calls, &outer, cx)?.map(Ok))
        }
        Plan::Sort { input, keys } => {
            let (mut key_rows, mut rows) = (super::sort::KeyRows::with_capacity(keys.len(), 0), Vec::new());
            for r in open(input, cx, outer.clone())? {
                let row = r?;
                cx.tick(1)?;
                key_rows.push(keys.iter().map(|s| eval(&s.expr, &row, &outer, cx)))?;
                // A row's vector, its keys and its sort entry, which is
                // counted three times: the vector of entries grows by
                // doubling, and merging needs a second one.
                let k = key_rows.row(key_rows.len() - 1);
                cx.budget.charge(
                    super::row_bytes(k) - std::mem::size_of::<Vec<Value>>()
                        + super::row_bytes(&row)
                        + 3 * super::sort::ENTRY_BYTES,
                )?;
                rows.push(row);
            }
            let order = super::sort::sort_order(&key_rows, keys, cx)?;
            drop(key_rows);
            Box::new(order.into_iter().map(move |i| Ok(std::mem::take(&mut rows[i]))))
        }
        Plan::Limit { input, limit, offset } => {
            let count = |e: &Option<Expr>| -> Result<Option<i64>> {
                match e {
                    None => Ok(None),
                    Some(e) => match eval(e, &[], &outer, cx)? {
                        Value::Null => Ok(None),
                        v => match v.coerce_to(&centum_types::DataType::BigInt)? {
                            Value::BigInt(n) if n < 0 => {
                                Err(Error::other("2201W", "LIMIT must not be negative"))
                            }
                            Value::BigInt(n) => Ok(Some(n)),
                            _ => Ok(None),
                        },
                    },
                }
            };
            let limit = count(limit)?;
            let offset = count(offset)?.unwrap_or(0);
            if limit == Some(0) {
                return Ok(Box::new(std::iter::empty()));
            }
            let input = open(input, cx, outer)?;
            let skipped = input.skip(offset as usize);
            match limit {
                Some(n) => Box::new(skipped.take(n as usize)),
                None => Box::new(skipped),
            }
        }
        Plan::Distinct { input, on } => {
            let mut seen: HashSet<Vec<Value>> = HashSet::new();
            let width = *on;
            let input = open(input, cx, outer)?;
            Box::new(input.filter_map(move |r| match r {
                Ok(row) => {
                    let key = match width {
                        Some(w) => row[..w.min(row.len())].to_vec(),
                        None => row.clone(),
                    };
                    let size = super::row_bytes(&key);
                    if !seen.insert(key) {
                        return None;
                    }
                    Some(cx.budget.charge(size).map(|_| row))
                }
                Err(e) => Some(Err(e)),
            }))
        }
        Plan::SetOp { op, all, left, right } => {
            let l = super::dml::gather(open(left, cx, outer.clone())?, cx)?;
            let r = super::dml::gather(open(right, cx, outer)?, cx)?;
            Box::new(set_op(*op, *all, l, r).into_iter().map(Ok))
        }
        Plan::Recursive { anchor, step, distinct, work } => {
            Box::new(recursive(anchor, step, *distinct, *work, cx, outer)?.into_iter().map(Ok))
        }
        Plan::ProjectSet { input, sets } => {
            let input = open(input, cx, outer)?;
            Box::new(input.flat_map(move |r| match r.and_then(|row| project_set(row, sets)) {
                Ok(rows) => rows.into_iter().map(Ok).collect::<Vec<_>>(),
                Err(e) => vec![Err(e)],
            }))
        }
        Plan::Writes { writes, input } => {
            super::run_writes(writes, cx)?;
            open(input, cx, outer)?
        }
        Plan::WorkTable { work } => {
            let rows = cx.work_tables.borrow().get(work).cloned().unwrap_or_default();
            Box::new((0..rows.len()).map(move |i| Ok(rows[i].clone())))
        }
        Plan::Routine { routine, args } => {
            let vals = args.iter().map(|e| eval(e, &[], &outer, cx)).collect::<Result<Vec<_>>>()?;
            let out = crate::execution::routine::call(routine, vals, cx)?;
            let rows = if routine.returns_set() { out.rows } else { vec![vec![out.value]] };
            Box::new(rows.into_iter().map(Ok))
        }
        Plan::Unnest { args, types, ordinality } => {
            let mut arrays = Vec::with_capacity(args.len());
            for (e, ty) in args.iter().zip(types) {
                let items = crate::functions::arrays::elements(&eval(e, &[], &outer, cx)?)?.into_owned();
                let typed = items
                    .into_iter()
                    .map(|v| if v.fits(ty) { Ok(v) } else { Ok(v.coerce_to(ty)?) })
                    .collect::<Result<Vec<_>>>()?;
                arrays.push(typed);
            }
            let n = arrays.iter().map(Vec::len).max().unwrap_or(0);
            let ordinality = *ordinality;
            Box::new((0..n).map(move |i| {
                let mut row: Vec<Value> =
                    arrays.iter().map(|a| a.get(i).cloned().unwrap_or(Value::Null)).collect();
                if ordinality {
                    row.push(Value::BigInt(i as i64 + 1));
                }
                Ok(row)
            }))
        }
        Plan::Decoding { call, args } => {
            let vals = args.iter().map(|e| eval(e, &[], &outer, cx)).collect::<Result<Vec<_>>>()?;
            let id = &cx.identity;
            let rows = call.run(cx.catalog.db(), &vals, id.pid() as u32, id.database)?;
            Box::new(rows.into_iter().map(Ok))
        }
        Plan::Series { args } => {
            let vals = args.iter().map(|e| eval(e, &[], &outer, cx)).collect::<Result<Vec<_>>>()?;
            if let Some(Value::Timestamp(_) | Value::TimestampTz(_)) = vals.first() {
                return timestamp_series(vals, cx);
            }
            let vals = vals
                .into_iter()
                .map(|v| Ok(v.coerce_to(&centum_types::DataType::BigInt)?))
                .collect::<Result<Vec<_>>>()?;
            let int = |v: &Value| match v {
                Value::BigInt(i) => Some(*i),
                _ => None,
            };
            let (Some(start), Some(stop)) = (vals.first().and_then(int), vals.get(1).and_then(int)) else {
                return Ok(Box::new(std::iter::empty()));
            };
            let step = match vals.get(2) {
                None => 1,
                Some(v) => {
                    int(v).ok_or_else(|| Error::InvalidParameter("step size cannot be NULL".into()))?
                }
            };
            if step == 0 {
                return Err(Error::InvalidParameter("step size cannot equal zero".into()));
            }
            let mut next = Some(start);
            Box::new(std::iter::from_fn(move || {
                let cur = next?;
                if (step > 0 && cur > stop) || (step < 0 && cur < stop) {
                    return None;
                }
                if let Err(e) = cx.tick(1) {
                    next = None;
                    return Some(Err(e));
                }
                next = cur.checked_add(step);
                Some(Ok(vec![Value::BigInt(cur)]))
            }))
        }
    })
}

/// `generate_series(start, stop, step)` over timestamps or timestamptz:
/// each value is the last plus the interval, by the calendar.
fn timestamp_series<'a>(vals: Vec<Value>, cx: &'a ExecCtx<'a>) -> Result<Rows<'a>> {
    let (wrap, start, stop): (fn(i64) -> Value, _, _) = match (&vals[0], vals.get(1)) {
        (Value::Timestamp(a), Some(Value::Timestamp(b))) => {
            (|t| Value::Timestamp(centum_types::Timestamp(t)), a.0, b.0)
        }
        (Value::TimestampTz(a), Some(Value::TimestampTz(b))) => {
            (|t| Value::TimestampTz(centum_types::TimestampTz(t)), a.0, b.0)
        }
        _ => return Ok(Box::new(std::iter::empty())),
    };
    let step = match vals.get(2) {
        Some(Value::Interval(i)) => *i,
        _ => return Err(Error::InvalidParameter("step size cannot be NULL".into())),
    };
    let forward = match step.span().cmp(&0) {
        std::cmp::Ordering::Equal => {
            return Err(Error::InvalidParameter("step size cannot equal zero".into()))
        }
        o => o == std::cmp::Ordering::Greater,
    };
    let mut next = Some(start);
    Ok(Box::new(std::iter::from_fn(move || {
        let cur = next?;
        if (forward && cur > stop) || (!forward && cur < stop) {
            return None;
        }
        if let Err(e) = cx.tick(1) {
            next = None;
            return Some(Err(e));
        }
        next = centum_types::interval::add_to_timestamp(cur, step).ok().filter(|n| *n != cur);
        Some(Ok(vec![wrap(cur)]))
    })))
}

/// Groups `input` and aggregates each group: rows of group values, then
/// aggregate values. With grouping sets, each row is added to a group of
/// every set, its keys outside the set read as NULL, and the last group
/// column is the set's number; sets keep their groups apart and come out
/// in order. With no input rows, a query without GROUP BY and an empty
/// grouping set (the grand total) still give their one row.
fn aggregate(
    input: Rows,
    group: &[Expr],
    aggs: &[crate::planner::plan::AggCall],
    sets: Option<&[Vec<usize>]>,
    outer: &[Value],
    cx: &ExecCtx,
) -> Result<Vec<Vec<Value>>> {
    if group.is_empty() && sets.is_none() {
        return aggregate_all(input, aggs, outer, cx);
    }
    // The keys evaluated per row (the set number is not one of them),
    // and which of them each set keeps.
    let (nkeys, kept): (usize, Vec<Vec<bool>>) = match sets {
        None => (group.len(), vec![vec![true; group.len()]]),
        Some(sets) => {
            let n = group.len() - 1;
            (n, sets.iter().map(|s| (0..n).map(|k| s.contains(&k)).collect()).collect())
        }
    };
    type Groups = (HashMap<Vec<Value>, usize>, Vec<(Vec<Value>, Vec<Acc>)>);
    let mut per_set: Vec<Groups> = kept.iter().map(|_| (HashMap::new(), Vec::new())).collect();
    for r in input {
        let row = r?;
        cx.tick(1)?;
        let mut values =
            Some(group[..nkeys].iter().map(|e| eval(e, &row, outer, cx)).collect::<Result<Vec<_>>>()?);
        for (set, (keep, (index, groups))) in kept.iter().zip(per_set.iter_mut()).enumerate() {
            let key: Vec<Value> = match (sets, &values) {
                // One set of every key: the values are the key.
                (None, _) => values.take().unwrap_or_default(),
                (Some(_), Some(v)) => v
                    .iter()
                    .zip(keep)
                    .map(|(v, k)| if *k { v.clone() } else { Value::Null })
                    .chain([Value::Integer(set as i32)])
                    .collect(),
                (Some(_), None) => Vec::new(),
            };
            let at = match index.get(&key) {
                Some(&i) => i,
                None => {
                    cx.budget.charge(2 * super::row_bytes(&key) + 64 * aggs.len())?;
                    groups.push((key.clone(), aggs.iter().map(Acc::new).collect()));
                    index.insert(key, groups.len() - 1);
                    groups.len() - 1
                }
            };
            for (acc, call) in groups[at].1.iter_mut().zip(aggs) {
                acc.add(call, &row, outer, cx)?;
            }
        }
    }
    let mut out = Vec::new();
    for (set, (keep, (_, mut groups))) in kept.iter().zip(per_set).enumerate() {
        if groups.is_empty() && keep.iter().all(|k| !k) {
            let mut key = vec![Value::Null; nkeys];
            if sets.is_some() {
                key.push(Value::Integer(set as i32));
            }
            groups.push((key, aggs.iter().map(Acc::new).collect()));
        }
        for (mut key, accs) in groups {
            for (acc, call) in accs.into_iter().zip(aggs) {
                key.push(acc.finish(call, cx)?);
            }
            out.push(key);
        }
    }
    Ok(out)
}

/// An aggregate without GROUP BY: one group of every row, even of none,
/// with no key to hash per row.
fn aggregate_all(
    input: Rows,
    aggs: &[crate::planner::plan::AggCall],
    outer: &[Value],
    cx: &ExecCtx,
) -> Result<Vec<Vec<Value>>> {
    cx.budget.charge(64 * aggs.len())?;
    let mut accs: Vec<Acc> = aggs.iter().map(Acc::new).collect();
    for r in input {
        let row = r?;
        cx.tick(1)?;
        for (acc, call) in accs.iter_mut().zip(aggs) {
            acc.add(call, &row, outer, cx)?;
        }
    }
    let out =
        accs.into_iter().zip(aggs).map(|(acc, call)| acc.finish(call, cx)).collect::<Result<Vec<_>>>()?;
    Ok(vec![out])
}

/// Compares sort keys, NULLs placed as each key asks.
pub(crate) fn compare_keys(a: &[Value], b: &[Value], keys: &[SortKey]) -> Ordering {
    for (i, k) in keys.iter().enumerate() {
        let (x, y) = (&a[i], &b[i]);
        let ord = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if k.nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if k.nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (false, false) => {
                let o = x.sql_cmp(y).unwrap_or_else(|| x.cmp(y));
                if k.desc {
                    o.reverse()
                } else {
                    o
                }
            }
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

/// One input row of a `ProjectSet`: a row per element of its arrays.
/// An array is an array value, PostgreSQL's text form (`{a,b}`), or the
/// space-separated numbers of an `int2vector`/`oidvector` column.
fn project_set(row: Vec<Value>, sets: &[usize]) -> Result<Vec<Vec<Value>>> {
    let mut arrays = Vec::with_capacity(sets.len());
    for &c in sets {
        let items = match &row[c] {
            Value::Text(t) if !t.trim_start().starts_with('{') => {
                t.split_whitespace().map(|s| Value::Text(s.to_string())).collect()
            }
            v => crate::functions::arrays::elements(v)?.into_owned(),
        };
        arrays.push(items);
    }
    let n = arrays.iter().map(Vec::len).max().unwrap_or(0);
    Ok((0..n)
        .map(|i| {
            let mut out = row.clone();
            for (k, &c) in sets.iter().enumerate() {
                out[c] = arrays[k].get(i).cloned().unwrap_or(Value::Null);
            }
            out
        })
        .collect())
}

/// Runs a `WITH RECURSIVE` to its end (see `Plan::Recursive`). Every
/// round's rows are charged to the statement's memory budget, so a
/// recursion that never ends stops there, or at the statement's deadline.
fn recursive(
    anchor: &Plan,
    step: &Plan,
    distinct: bool,
    work: usize,
    cx: &ExecCtx,
    outer: Vec<Value>,
) -> Result<Vec<Vec<Value>>> {
    let mut seen: HashSet<Vec<Value>> = HashSet::new();
    let mut keep = |rows: Vec<Vec<Value>>| -> Vec<Vec<Value>> {
        if distinct {
            rows.into_iter().filter(|r| seen.insert(r.clone())).collect()
        } else {
            rows
        }
    };
    let mut out = keep(super::dml::gather(open(anchor, cx, outer.clone())?, cx)?);
    let mut last = std::rc::Rc::new(out.clone());
    while !last.is_empty() {
        cx.work_tables.borrow_mut().insert(work, last);
        let added = keep(super::dml::gather(open(step, cx, outer.clone())?, cx)?);
        cx.tick(1)?;
        out.extend(added.iter().cloned());
        last = std::rc::Rc::new(added);
    }
    cx.work_tables.borrow_mut().remove(&work);
    Ok(out)
}

fn set_op(op: SetOpKind, all: bool, l: Vec<Vec<Value>>, r: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    match op {
        SetOpKind::Union => {
            let mut out = l;
            out.extend(r);
            if !all {
                let mut seen = HashSet::new();
                out.retain(|row| seen.insert(row.clone()));
            }
            out
        }
        SetOpKind::Intersect | SetOpKind::Except => {
            let mut counts: HashMap<Vec<Value>, usize> = HashMap::new();
            for row in r {
                *counts.entry(row).or_default() += 1;
            }
            let mut out = Vec::new();
            let mut emitted: HashSet<Vec<Value>> = HashSet::new();
            for row in l {
                let c = counts.get_mut(&row);
                let keep = match (op, c) {
                    (SetOpKind::Intersect, Some(c)) if *c > 0 => {
                        if all {
                            *c -= 1;
                        }
                        true
                    }
                    (SetOpKind::Intersect, _) => false,
                    (_, Some(c)) if *c > 0 => {
                        if all {
                            *c -= 1;
                            false
                        } else {
                            false
                        }
                    }
                    _ => true,
                };
                if keep && (all || emitted.insert(row.clone())) {
                    out.push(row);
                }
            }
            out
        }
    }
}

/// A nested loop join, streamed: each left row runs against the right
/// side (gathered once when it does not read the left row, run again per
/// left row when it does), and the joined rows go up one at a time. So a
/// count over a cross product of any size holds one row at a time, and
/// stops at the first error, after the rows before it.
struct NestedLoop<'a> {
    left: Rows<'a>,
    right: &'a Plan,
    /// The right side's rows when it does not read the left row.
    fixed: Option<std::rc::Rc<Vec<Vec<Value>>>>,
    kind: JoinKind,
    on: Option<&'a Expr>,
    right_width: usize,
    cx: &'a ExecCtx<'a>,
    outer: Vec<Value>,
    /// The left row being joined, its right rows, and whether any matched.
    current: Option<(Vec<Value>, Rows<'a>, bool)>,
    done: bool,
}

impl<'a> NestedLoop<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        left: &'a Plan,
        right: &'a Plan,
        lateral: bool,
        kind: JoinKind,
        on: Option<&'a Expr>,
        right_width: usize,
        cx: &'a ExecCtx<'a>,
        outer: Vec<Value>,
    ) -> Result<NestedLoop<'a>> {
        let left_rows = open(left, cx, outer.clone())?;
        // A right side that does not read the left row runs once.
        let fixed = match lateral {
            true => None,
            false => Some(std::rc::Rc::new(super::dml::gather(open(right, cx, outer.clone())?, cx)?)),
        };
        Ok(NestedLoop {
            left: left_rows,
            right,
            fixed,
            kind,
            on,
            right_width,
            cx,
            outer,
            current: None,
            done: false,
        })
    }

    /// The next joined row, or the end.
    fn step(&mut self) -> Result<Option<Vec<Value>>> {
        loop {
            if self.current.is_none() {
                let Some(l) = self.left.next() else { return Ok(None) };
                let l = l?;
                self.cx.tick(1)?;
                let rights: Rows<'a> = match &self.fixed {
                    Some(rows) => {
                        let rows = rows.clone();
                        Box::new((0..rows.len()).map(move |i| Ok(rows[i].clone())))
                    }
                    None => {
                        let mut inner_outer = self.outer.clone();
                        inner_outer.extend_from_slice(&l);
                        open(self.right, self.cx, inner_outer)?
                    }
                };
                self.current = Some((l, rights, false));
            }
            let Some((l, rights, matched)) = self.current.as_mut() else { continue };
            match rights.next() {
                Some(r) => {
                    let r = r?;
                    self.cx.tick(1)?;
                    let mut row = l.clone();
                    row.extend(r);
                    if self.on.map_or(Ok(true), |p| test(p, &row, &self.outer, self.cx))? {
                        *matched = true;
                        return Ok(Some(row));
                    }
                }
                None => {
                    let Some((l, _, matched)) = self.current.take() else { continue };
                    if self.kind == JoinKind::Left && !matched {
                        let mut row = l;
                        row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                        return Ok(Some(row));
                    }
                }
            }
        }
    }
}

impl Iterator for NestedLoop<'_> {
    type Item = Result<Vec<Value>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(row)) => Some(Ok(row)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn hash_join<'a>(
    left: &'a Plan,
    right: &'a Plan,
    kind: JoinKind,
    left_keys: &'a [Expr],
    right_keys: &'a [Expr],
    on: Option<&'a Expr>,
    left_width: usize,
    right_width: usize,
    cx: &'a ExecCtx<'a>,
    outer: Vec<Value>,
) -> Result<Rows<'a>> {
    let mut build: HashMap<Vec<Value>, Vec<usize>> = HashMap::new();
    let mut right_rows: Vec<Vec<Value>> = Vec::new();
    for r in open(right, cx, outer.clone())? {
        let row = r?;
        let key = right_keys.iter().map(|e| eval(e, &row, &outer, cx)).collect::<Result<Vec<_>>>()?;
        cx.budget.charge(super::row_bytes(&key) + super::row_bytes(&row))?;
        cx.tick(1)?;
        if !key.iter().any(Value::is_null) {
            build.entry(key).or_default().push(right_rows.len());
        }
        right_rows.push(row);
    }
    let mut matched = vec![false; right_rows.len()];
    let mut out: Vec<Vec<Value>> = Vec::new();
    for l in open(left, cx, outer.clone())? {
        let l = l?;
        let key = left_keys.iter().map(|e| eval(e, &l, &outer, cx)).collect::<Result<Vec<_>>>()?;
        let mut any = false;
        if !key.iter().any(Value::is_null) {
            if let Some(hits) = build.get(&key) {
                for &i in hits {
                    cx.tick(1)?;
                    let mut row = l.clone();
                    row.extend_from_slice(&right_rows[i]);
                    if on.map_or(Ok(true), |p| test(p, &row, &outer, cx))? {
                        any = true;
                        matched[i] = true;
                        cx.budget.keep(&mut out, row)?;
                    }
                }
            }
        }
        match kind {
            JoinKind::Left | JoinKind::Full if !any => {
                let mut row = l;
                row.extend(std::iter::repeat_n(Value::Null, right_width));
                cx.budget.keep(&mut out, row)?;
            }
            _ => {}
        }
    }
    if matches!(kind, JoinKind::Full | JoinKind::Right) {
        for (i, r) in right_rows.into_iter().enumerate() {
            if !matched[i] {
                let mut row = vec![Value::Null; left_width];
                row.extend(r);
                cx.budget.keep(&mut out, row)?;
            }
        }
    }
    Ok(Box::new(out.into_iter().map(Ok)))
}

/// Rows of a table access: the engine row and its values, filtered.
pub(crate) type AccessRows<'a> = Box<dyn Iterator<Item = Result<(Row<'a>, Vec<Value>)>> + 'a>;

/// Coerces a key value to its column's type; `None` when no stored value
/// can equal it (out of range, or not exactly representable).
fn key_value(v: Value, ty: &centum_types::DataType) -> Result<Option<Value>> {
    if v.is_null() {
        return Ok(None);
    }
    if v.fits(ty) {
        return Ok(Some(v));
    }
    match v.clone().coerce_to(ty) {
        Ok(c) if c.sql_cmp(&v) == Some(Ordering::Equal) => Ok(Some(c)),
        Ok(_) => Ok(None),
        Err(centum_types::TypeError::OutOfRange(_)) | Err(centum_types::TypeError::StringTooLong { .. }) => {
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

fn bound_value(
    b: &Bound<Expr>,
    ty: &centum_types::DataType,
    outer: &[Value],
    cx: &ExecCtx,
) -> Result<Option<Bound<Value>>> {
    let conv = |e: &Expr| -> Result<Option<Value>> {
        let v = eval(e, &[], outer, cx)?;
        if v.is_null() {
            return Ok(None);
        }
        Ok(Some(key_value(v, ty)?.unwrap_or(Value::Null)))
    };
    Ok(match b {
        Bound::Unbounded => Some(Bound::Unbounded),
        Bound::Included(e) | Bound::Excluded(e) => match conv(e)? {
            None => None, // compared with NULL: no row qualifies
            // Not exactly representable: leave the side open, the filter re-checks.
            Some(Value::Null) => Some(Bound::Unbounded),
            Some(v) => {
                Some(if matches!(b, Bound::Included(_)) { Bound::Included(v) } else { Bound::Excluded(v) })
            }
        },
    })
}

/// Reads a table through its access path.
pub(crate) fn access_rows<'a>(a: &'a Access, cx: &'a ExecCtx<'a>, outer: &[Value]) -> Result<AccessRows<'a>> {
    match &cx.profile {
        None => access_rows_of(a, cx, outer),
        Some(p) => {
            super::profile::open(Some(p), a as *const Access as usize, || access_rows_of(a, cx, outer))
        }
    }
}

/// The values of a row the access reads: the columns marked in `wanted`
/// (all for `None`), the others NULL.
fn decode(wanted: Option<&[bool]>, row: &Row) -> Vec<Value> {
    match wanted {
        None => row.values(),
        Some(wanted) => row.values_of(wanted),
    }
}

fn access_rows_of<'a>(a: &'a Access, cx: &'a ExecCtx<'a>, outer: &[Value]) -> Result<AccessRows<'a>> {
    let txn = cx.txn;
    let table = &a.table;
    let cols = table.columns();
    let outer_f = outer.to_vec();
    // The row filter, with the range's bounds when the index does not
    // answer them exactly.
    let keep = move |bounds_exact: bool| {
        // No allocation: an index nested loop opens the access per row.
        let checks: [Option<&'a Expr>; 2] =
            [a.filter.as_ref(), a.bound_check.as_deref().filter(|_| !bounds_exact)];
        move |row: Row<'a>| -> Option<Result<(Row<'a>, Vec<Value>)>> {
            // A scan whose filter rejects most rows still stops at the deadline.
            if let Err(e) = cx.tick(1) {
                return Some(Err(e));
            }
            let vals = decode(a.columns.as_deref(), &row);
            for f in checks.iter().flatten() {
                match test(f, &vals, &outer_f, cx) {
                    Ok(true) => {}
                    Ok(false) => return None,
                    Err(e) => return Some(Err(e)),
                }
            }
            Some(Ok((row, vals)))
        }
    };
    Ok(match &a.path {
        AccessPath::Scan => {
            let raw = super::prefilter::RawChecks::of(a.filter.as_ref(), table, outer, cx)?;
            if raw.is_empty() {
                Box::new(txn.scan(table)?.filter_map(keep(false)))
            } else {
                // Rows that fail a byte-level check never leave the engine,
                // which reads a large table on several threads.
                let exact = raw.is_exact();
                let (keep, consumer) = (keep(false), a.consumer_columns.as_deref());
                let keep = move |row: Row<'a>| {
                    if !exact {
                        return keep(row);
                    }
                    match cx.tick(1) {
                        Ok(()) => Some(Ok((row, decode(consumer, &row)))),
                        Err(e) => Some(Err(e)),
                    }
                };
                let mut scan = txn.scan_where(table, move |row| raw.pass(row))?;
                Box::new(std::iter::from_fn(move || loop {
                    match scan.next()? {
                        Scanned::Row(row) => {
                            if let Some(r) = keep(row) {
                                return Some(r);
                            }
                        }
                        Scanned::Skipped(n) => {
                            if let Err(e) = cx.tick(u32::try_from(n).unwrap_or(u32::MAX)) {
                                return Some(Err(e));
                            }
                        }
                    }
                }))
            }
        }
        AccessPath::Key { index, unique, key, key_types, .. } => {
            let mut values = Vec::with_capacity(key.len());
            for (e, ty) in key.iter().zip(key_types) {
                match key_value(eval(e, &[], outer, cx)?, ty)? {
                    Some(v) => values.push(v),
                    None => return Ok(Box::new(std::iter::empty())),
                }
            }
            if *unique {
                Box::new(txn.get(table, index, &values)?.into_iter().filter_map(keep(false)))
            } else {
                Box::new(txn.lookup(table, index, &values)?.into_iter().filter_map(keep(false)))
            }
        }
        AccessPath::Keys { index, unique, keys, spread, key_type, .. } => {
            // Each distinct key once: `id IN (1, 1)` gives the row once.
            let mut values = Vec::with_capacity(keys.len());
            let mut members = Vec::new();
            for e in keys {
                let v = eval(e, &[], outer, cx)?;
                if *spread {
                    members.extend(crate::functions::arrays::elements(&v)?.iter().cloned());
                } else {
                    members.push(v);
                }
            }
            for m in members {
                if let Some(v) = key_value(m, key_type)? {
                    values.push(v);
                }
            }
            distinct_keys(&mut values);
            let mut rows = Vec::new();
            for v in values {
                cx.tick(1)?;
                let key = [v];
                if *unique {
                    rows.extend(txn.get(table, index, &key)?);
                } else {
                    rows.extend(txn.lookup(table, index, &key)?);
                }
            }
            Box::new(rows.into_iter().filter_map(keep(false)))
        }
        AccessPath::Range { index, eq, lower, upper, dir } => {
            let ix = table.index(index)?;
            let kc = ix.key_columns();
            let mut eqv = Vec::with_capacity(eq.len());
            for (e, &c) in eq.iter().zip(kc) {
                match key_value(eval(e, &[], outer, cx)?, &cols[c].ty)? {
                    Some(v) => eqv.push(v),
                    None => return Ok(Box::new(std::iter::empty())),
                }
            }
            let next = kc.get(eq.len()).map(|&c| &cols[c]);
            let (lo, hi) = match next {
                Some(c) => {
                    match (bound_value(lower, &c.ty, outer, cx)?, bound_value(upper, &c.ty, outer, cx)?) {
                        (Some(l), Some(h)) => (l, h),
                        _ => return Ok(Box::new(std::iter::empty())),
                    }
                }
                None => (Bound::Unbounded, Bound::Unbounded),
            };
            // An integer key holding no NULLs compares in the index as in
            // SQL; a bound that was not a key of its type left its side open
            // (`Unbounded`), and then the rows must be checked.
            let side_exact = |given: &Bound<Expr>, got: &Bound<Value>| {
                matches!(given, Bound::Unbounded) || !matches!(got, Bound::Unbounded)
            };
            let exact = next.is_some_and(|c| {
                !c.nullable
                    && matches!(c.ty, DataType::SmallInt | DataType::Integer | DataType::BigInt)
                    && side_exact(lower, &lo)
                    && side_exact(upper, &hi)
            });
            let range = KeyRange { eq: eqv, lower: lo, upper: hi };
            Box::new(txn.range(table, index, &range, *dir)?.filter_map(keep(exact)))
        }
    })
}

/// Sorts look-up keys (all of the key column's type) and drops repeats.
/// Integer keys, the common case of a long IN list, sort as integers: the
/// general comparison costs more than the look-ups it orders.
fn distinct_keys(values: &mut Vec<Value>) {
    let int = |v: &Value| match v {
        Value::SmallInt(i) => Some(*i as i64),
        Value::Integer(i) => Some(*i as i64),
        Value::BigInt(i) => Some(*i),
        _ => None,
    };
    if values.iter().all(|v| int(v).is_some()) {
        values.sort_unstable_by_key(|v| int(v));
        values.dedup_by_key(|v| int(v));
    } else {
        values.sort_by(|a, b| a.sql_cmp(b).unwrap_or(Ordering::Equal));
        values.dedup_by(|a, b| a.sql_cmp(b) == Some(Ordering::Equal));
    }
}

/// A look-up of one row by a unique key, projected: the prepared point
/// SELECT, without building an operator tree. `None` when `plan` has
/// another shape.
pub(crate) fn point(plan: &Plan, cx: &ExecCtx, outer: &[Value]) -> Result<Option<Vec<Vec<Value>>>> {
    let (a, exprs) = match plan {
        Plan::Project { input, exprs } => match input.as_ref() {
            Plan::Access(a) => (a, Some(exprs)),
            _ => return Ok(None),
        },
        Plan::Access(a) => (a, None),
        _ => return Ok(None),
    };
    let AccessPath::Key { index, unique: true, key, key_types, .. } = &a.path else { return Ok(None) };
    let mut values = Vec::with_capacity(key.len());
    for (e, ty) in key.iter().zip(key_types) {
        match key_value(eval(e, &[], outer, cx)?, ty)? {
            Some(v) => values.push(v),
            None => return Ok(Some(vec![])),
        }
    }
    let Some(row) = cx.txn.get(&a.table, index, &values)? else { return Ok(Some(vec![])) };
    let out = match exprs {
        // Only the columns asked for are decoded.
        Some(list) if a.filter.is_none() && list.iter().all(|e| matches!(e, Expr::Column(_))) => list
            .iter()
            .map(|e| match e {
                Expr::Column(c) => row.get(*c),
                _ => Value::Null,
            })
            .collect(),
        _ => {
            let vals = decode(a.columns.as_deref(), &row);
            if let Some(f) = &a.filter {
                if !test(f, &vals, outer, cx)? {
                    return Ok(Some(vec![]));
                }
            }
            match exprs {
                Some(list) => list.iter().map(|e| eval(e, &vals, outer, cx)).collect::<Result<_>>()?,
                None => vals,
            }
        }
    };
    Ok(Some(vec![out]))
}
