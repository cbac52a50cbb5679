//! Window functions over a materialized input.
//!
//! [`Plan::Window`] reads every input row, then computes its calls one
//! after another. For each call the rows are sorted by the call's
//! partition keys and then its window order; a partition is a run of equal
//! partition keys, and within it *peers* are rows whose order keys are
//! equal (all of a partition's rows without ORDER BY). Each row gets the
//! call's value:
//!
//! - ranking functions from its position and its peer group;
//! - `lag`/`lead` from the row an offset before or after it in the
//!   partition;
//! - aggregates and `first_value`/`last_value`/`nth_value` from its
//!   *frame*, a run of the partition given by the frame clause in rows,
//!   peer groups, or (RANGE) peers. A frame that starts at the partition's
//!   first row grows with the row, so its aggregate is kept running and
//!   read at each row; any other frame is aggregated afresh per row, the
//!   value reused while the frame stays the same (peers).
//!
//! Rows come out in the last call's order, each with one value per call
//! appended. The rows, their sort keys and the results are charged to the
//! statement's memory budget.
//!
//! [`Plan::Window`]: crate::planner::plan::Plan::Window

use super::aggregate::{Acc, Args};
use super::eval::eval;
use super::query::{compare_keys, Rows};
use super::sort::{KeyRows, PackedOrder};
use super::{row_bytes, ExecCtx};
use crate::error::{Error, Result};
use crate::functions::operators::BinOp;
use crate::planner::expr::Expr;
use crate::planner::plan::{
    AggCall, AggFunc, Frame, FrameBound, FrameUnits, SortKey, WindowCall, WindowFunc,
};
use centum_types::{DataType, Value};
use std::cmp::Ordering;

/// Runs `calls` over every row of `input`; the rows come out as the
/// returned iterator is read.
pub(crate) fn run(
    input: Rows,
    calls: &[WindowCall],
    outer: &[Value],
    cx: &ExecCtx,
) -> Result<impl Iterator<Item = Vec<Value>>> {
    // The rows' values in one block, not a vector per row: a million rows
    // would otherwise allocate and fault in a million blocks, and each
    // read in window order would miss the cache twice.
    let mut rows = KeyRows::with_capacity(0, 0);
    for (n, r) in input.enumerate() {
        let row = r?;
        cx.tick(1)?;
        if n == 0 {
            rows = KeyRows::with_capacity(row.len(), 0);
        }
        cx.budget.charge(row_bytes(&row) + 2 * row.len() * std::mem::size_of::<Value>())?;
        rows.push_row(row);
    }
    let mut order: Vec<usize> = (0..rows.len()).collect();
    // The values of every call but the last, by input position; the last
    // call's, by position in its order, which is the output's.
    let mut earlier = Vec::with_capacity(calls.len().saturating_sub(1));
    let mut last = Vec::new();
    for (k, call) in calls.iter().enumerate() {
        let (sorted, values) = one_call(&rows, call, outer, cx)?;
        if k + 1 < calls.len() {
            let mut by_input = vec![Value::Null; rows.len()];
            for (&i, v) in sorted.iter().zip(values) {
                by_input[i] = v;
            }
            earlier.push(by_input);
        } else {
            last = values;
        }
        order = sorted;
    }
    // Each row is finished as it is read, so that it is still in the cache
    // when the consumer reads it; rows are read out of input order, so the
    // ones a little ahead are asked for early.
    let mut last = last.into_iter();
    let (mut next, width) = (0, rows.width() + calls.len());
    Ok(std::iter::from_fn(move || {
        let i = *order.get(next)?;
        prefetch_row(&rows, &order, next);
        next += 1;
        let mut row = Vec::with_capacity(width);
        row.extend(rows.take_row(i));
        row.extend(earlier.iter_mut().map(|c| std::mem::replace(&mut c[i], Value::Null)));
        row.extend(last.next());
        Some(row)
    }))
}

/// Rows ahead of the current one whose values are prefetched.
const AHEAD: usize = 8;

/// Asks the CPU to start loading the row `AHEAD` sorted positions after
/// `p`. Without it every row read in window order is a cache miss that the
/// next one waits behind.
#[inline]
fn prefetch_row(rows: &KeyRows, order: &[usize], p: usize) {
    if let Some(&i) = order.get(p + AHEAD) {
        rows.prefetch(i);
    }
}

/// A partition's peer groups, as runs of sorted positions.
struct Groups {
    /// `[start, end)` of each group, in order.
    runs: Vec<(usize, usize)>,
}

/// One call: the rows' order (partition, then window order) and the value
/// of each row, in that order.
///
/// Keys of one or two integer or boolean columns are packed and sorted as
/// words ([`PackedOrder`]), and partitions and peers found on the words,
/// so no key value is kept per row. Other keys, and frames with RANGE
/// distances (which measure between key values), keep the keys' values
/// ([`KeyRows`]).
fn one_call(
    rows: &KeyRows,
    call: &WindowCall,
    outer: &[Value],
    cx: &ExecCtx,
) -> Result<(Vec<usize>, Vec<Value>)> {
    let np = call.partition.len();
    let spec: Vec<SortKey> = call
        .partition
        .iter()
        .map(|e| SortKey { expr: e.clone(), desc: false, nulls_first: false })
        .chain(call.order.iter().cloned())
        .collect();
    let frame = Offsets::of(&call.frame, outer, cx)?;
    let distances =
        [&frame.start, &frame.end].iter().any(|b| matches!(b, Bound::Before(_) | Bound::After(_)));
    let nk = spec.len();
    if !distances {
        let packed = match nk {
            1 => packed_call::<1>(rows, call, &frame, &spec, outer, cx)?,
            2 => packed_call::<2>(rows, call, &frame, &spec, outer, cx)?,
            _ => None,
        };
        if let Some(done) = packed {
            return Ok(done);
        }
    }
    let mut keys = KeyRows::with_capacity(spec.len(), rows.len());
    for i in 0..rows.len() {
        let row = rows.row(i);
        cx.tick(1)?;
        keys.push(spec.iter().map(|k| eval(&k.expr, row, outer, cx)))?;
        let key = keys.row(keys.len() - 1);
        cx.budget.charge(row_bytes(key) + std::mem::size_of::<usize>() + 3 * super::sort::ENTRY_BYTES)?;
    }
    let order = super::sort::sort_order(&keys, &spec, cx)?;
    // The keys in sorted order, so that partitions and peers are found by
    // reading them in turn.
    let keys = keys.permuted(&order);
    let same = |a: usize, b: usize, at: std::ops::Range<usize>| {
        compare_keys(&keys.row(a)[at.clone()], &keys.row(b)[at.clone()], &spec[at]) == Ordering::Equal
    };
    let parts = Walk { same_partition: &|a, b| same(a, b, 0..np), same_peers: &|a, b| same(a, b, np..nk) };
    let order_key = |ps: usize, pe: usize| {
        call.order.first().map(|sort| {
            // The non-NULL keys are one run at one end of the partition.
            let prefix = partition_point(ps..pe, |p| keys.row(p)[np].is_null() == sort.nulls_first);
            let non_null = if sort.nulls_first { (ps + prefix, pe) } else { (ps, ps + prefix) };
            OrderKey { keys: &keys, at: np, sort, non_null }
        })
    };
    let values = parts.run(rows, call, &frame, &order, order_key, outer, cx)?;
    Ok((order, values))
}

/// [`one_call`] on `N` packed keys; `None` when the keys do not pack.
fn packed_call<const N: usize>(
    rows: &KeyRows,
    call: &WindowCall,
    frame: &Offsets,
    spec: &[SortKey],
    outer: &[Value],
    cx: &ExecCtx,
) -> Result<Option<(Vec<usize>, Vec<Value>)>> {
    let Some(keys) = PackedOrder::<N>::of(rows, spec, outer, cx)? else { return Ok(None) };
    let (np, nk) = (call.partition.len(), spec.len());
    let order = keys.order();
    let parts =
        Walk { same_partition: &|a, b| keys.same(a, b, 0..np), same_peers: &|a, b| keys.same(a, b, np..nk) };
    let values = parts.run(rows, call, frame, &order, |_, _| None, outer, cx)?;
    Ok(Some((order, values)))
}

/// How partitions and peer groups are told apart among sorted positions.
struct Walk<'k> {
    same_partition: &'k dyn Fn(usize, usize) -> bool,
    same_peers: &'k dyn Fn(usize, usize) -> bool,
}

impl Walk<'_> {
    /// The call's value for every row, by sorted position: the rows are
    /// cut into partitions, each into peer groups, and each partition
    /// computed in turn. `order_key` gives a partition's window order key
    /// where RANGE distances need it.
    #[allow(clippy::too_many_arguments)]
    fn run<'a>(
        &self,
        rows: &KeyRows,
        call: &'a WindowCall,
        frame: &Offsets,
        order: &[usize],
        order_key: impl Fn(usize, usize) -> Option<OrderKey<'a>>,
        outer: &[Value],
        cx: &ExecCtx,
    ) -> Result<Vec<Value>> {
        let mut values = Vec::with_capacity(rows.len());
        let mut ps = 0;
        while ps < order.len() {
            let mut pe = ps + 1;
            while pe < order.len() && (self.same_partition)(ps, pe) {
                pe += 1;
            }
            let mut runs = Vec::new();
            let mut gs = ps;
            for p in ps + 1..=pe {
                if p == pe || !(self.same_peers)(gs, p) {
                    runs.push((gs, p));
                    gs = p;
                }
            }
            let part = Partition {
                rows,
                order,
                start: ps,
                end: pe,
                groups: Groups { runs },
                order_key: order_key(ps, pe),
            };
            part.compute(call, frame, outer, cx, &mut values)?;
            ps = pe;
        }
        Ok(values)
    }
}

/// A frame's offsets, evaluated once per execution.
struct Offsets {
    units: FrameUnits,
    start: Bound,
    end: Bound,
}

/// A frame bound with its offset: a count of rows or peer groups, or for
/// RANGE a distance in key values.
enum Bound {
    UnboundedPreceding,
    Preceding(usize),
    CurrentRow,
    Following(usize),
    UnboundedFollowing,
    /// RANGE `distance PRECEDING`.
    Before(Value),
    /// RANGE `distance FOLLOWING`.
    After(Value),
}

impl Offsets {
    fn of(frame: &Frame, outer: &[Value], cx: &ExecCtx) -> Result<Offsets> {
        let bound = |b: &FrameBound, side: &str| -> Result<Bound> {
            let offset = |e: &Expr| -> Result<usize> {
                match eval(e, &[], outer, cx)?.coerce_to(&DataType::BigInt)? {
                    Value::BigInt(n) if n >= 0 => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
                    Value::Null => {
                        Err(Error::other("22004", format!("frame {side} offset must not be null")))
                    }
                    _ => Err(Error::other("22013", format!("frame {side} offset must not be negative"))),
                }
            };
            // RANGE: a distance of the key's kind, never negative.
            let distance = |e: &Expr| -> Result<Value> {
                let v = eval(e, &[], outer, cx)?;
                if v.is_null() {
                    return Err(Error::other("22004", format!("frame {side} offset must not be null")));
                }
                let zero = match v {
                    Value::Interval(_) => Value::Interval(centum_types::Interval::ZERO),
                    _ => Value::Integer(0),
                };
                if v.sql_cmp(&zero) == Some(Ordering::Less) {
                    return Err(Error::other(
                        "22013",
                        "invalid preceding or following size in window function",
                    ));
                }
                Ok(v)
            };
            let range = frame.units == FrameUnits::Range;
            Ok(match b {
                FrameBound::UnboundedPreceding => Bound::UnboundedPreceding,
                FrameBound::Preceding(e) if range => Bound::Before(distance(e)?),
                FrameBound::Following(e) if range => Bound::After(distance(e)?),
                FrameBound::Preceding(e) => Bound::Preceding(offset(e)?),
                FrameBound::CurrentRow => Bound::CurrentRow,
                FrameBound::Following(e) => Bound::Following(offset(e)?),
                FrameBound::UnboundedFollowing => Bound::UnboundedFollowing,
            })
        };
        Ok(Offsets {
            units: frame.units,
            start: bound(&frame.start, "starting")?,
            end: bound(&frame.end, "ending")?,
        })
    }
}

/// One partition of one call: sorted positions `[start, end)`.
struct Partition<'a> {
    rows: &'a KeyRows,
    /// Each sorted position's input row.
    order: &'a [usize],
    start: usize,
    end: usize,
    groups: Groups,
    /// Where the window's first ORDER BY key is among the keys, and how
    /// it sorts (RANGE offsets measure from it).
    order_key: Option<OrderKey<'a>>,
}

/// The window's first ORDER BY key in a partition: the sort keys by
/// sorted position, where it is among them, how it sorts, and the
/// positions `[from, to)` of the rows whose key is not NULL.
#[derive(Clone, Copy)]
struct OrderKey<'a> {
    keys: &'a KeyRows,
    at: usize,
    sort: &'a SortKey,
    non_null: (usize, usize),
}

impl Partition<'_> {
    /// The input row at sorted position `p`.
    fn row(&self, p: usize) -> &[Value] {
        self.rows.row(self.order[p])
    }

    /// The frame of the row at position `p` in peer group `g`: positions
    /// `[from, to)`, empty when `to <= from`.
    fn frame(&self, f: &Offsets, p: usize, g: usize) -> Result<(usize, usize)> {
        let (ps, pe) = (self.start, self.end);
        let runs = &self.groups.runs;
        let (gs, ge) = runs[g];
        let from = match (f.units, &f.start) {
            (_, Bound::UnboundedPreceding) => ps,
            (_, Bound::Before(d)) => self.range_bound(p, d, true, true)?,
            (_, Bound::After(d)) => self.range_bound(p, d, false, true)?,
            (FrameUnits::Rows, Bound::Preceding(k)) => p.saturating_sub(*k).max(ps),
            (FrameUnits::Rows, Bound::CurrentRow) => p,
            (FrameUnits::Rows, Bound::Following(k)) => p.saturating_add(*k).min(pe),
            (FrameUnits::Groups, Bound::Preceding(k)) => runs[g.saturating_sub(*k)].0,
            (FrameUnits::Groups, Bound::Following(k)) => runs.get(g.saturating_add(*k)).map_or(pe, |r| r.0),
            (_, Bound::CurrentRow) => gs,
            // Counts belong to ROWS and GROUPS, distances to RANGE (see
            // `Offsets::of`); UNBOUNDED FOLLOWING cannot start a frame.
            _ => pe,
        };
        let to = match (f.units, &f.end) {
            (_, Bound::UnboundedFollowing) => pe,
            (_, Bound::Before(d)) => self.range_bound(p, d, true, false)?,
            (_, Bound::After(d)) => self.range_bound(p, d, false, false)?,
            (FrameUnits::Rows, Bound::Preceding(k)) => (p + 1).saturating_sub(*k).max(ps),
            (FrameUnits::Rows, Bound::CurrentRow) => p + 1,
            (FrameUnits::Rows, Bound::Following(k)) => p.saturating_add(*k).saturating_add(1).min(pe),
            (FrameUnits::Groups, Bound::Preceding(k)) => g.checked_sub(*k).map_or(ps, |i| runs[i].1),
            (FrameUnits::Groups, Bound::Following(k)) => runs[g.saturating_add(*k).min(runs.len() - 1)].1,
            (_, Bound::CurrentRow) => ge,
            _ => ps,
        };
        Ok((from, to))
    }

    /// A RANGE bound `distance PRECEDING` (`before`) or `FOLLOWING` of the
    /// row at `p`: where the frame starts (`start`) or ends (exclusive).
    /// Rows whose key is within the distance of the current row's key are
    /// in; a NULL key is within any distance of NULL keys only, so a row
    /// with one has its NULL peers as the frame's offset side. The keys
    /// are sorted, so the bound is a binary search among the non-NULL
    /// keys; the distance is added in exact numeric (double precision for
    /// a double key), so no key overflows.
    fn range_bound(&self, p: usize, distance: &Value, before: bool, start: bool) -> Result<usize> {
        let Some(OrderKey { keys, at, sort: order, non_null: (lo, hi) }) = self.order_key else {
            return Ok(if start { self.start } else { self.end });
        };
        let key = |q: usize| &keys.row(q)[at];
        if key(p).is_null() {
            let (ns, ne) = if order.nulls_first { (self.start, lo) } else { (hi, self.end) };
            return Ok(if start { ns } else { ne });
        }
        let wide = |v: &Value| match (v, distance) {
            // A date or time key moves by an interval as it is.
            (_, Value::Interval(_)) => Ok(v.clone()),
            (Value::Double(_), _) | (_, Value::Double(_)) => v.clone().coerce_to(&DataType::Double),
            _ => v.clone().coerce_to(&crate::planner::bind::unconstrained_numeric()),
        };
        let (k, d) = (wide(key(p))?, wide(distance)?);
        // Towards smaller keys when looking back in ascending order or
        // ahead in descending order.
        let op = if before != order.desc { BinOp::Sub } else { BinOp::Add };
        let target = crate::functions::operators::binary(op, k, d)?;
        // How a key stands against the target, in the window's order.
        let cmp = |v: &Value| {
            let o = v.sql_cmp(&target).unwrap_or(Ordering::Equal);
            if order.desc {
                o.reverse()
            } else {
                o
            }
        };
        let n = if start {
            partition_point(lo..hi, |q| cmp(key(q)) == Ordering::Less)
        } else {
            partition_point(lo..hi, |q| cmp(key(q)) != Ordering::Greater)
        };
        Ok(lo + n)
    }

    /// Appends the call's value for each of the partition's rows, in
    /// sorted order, to `values`, which holds the earlier partitions'.
    fn compute(
        &self,
        call: &WindowCall,
        frame: &Offsets,
        outer: &[Value],
        cx: &ExecCtx,
        values: &mut Vec<Value>,
    ) -> Result<()> {
        let n = self.end - self.start;
        let arg = |i: usize, row: &[Value]| eval(&call.args[i], row, outer, cx);
        // An aggregate whose frame starts with the partition runs along;
        // any other reads each row's input, computed once.
        let mut running: Option<(Acc, usize)> = None;
        let mut inputs = FrameInputs::default();
        let mut last: Option<((usize, usize), Value)> = None;
        let mut ntile: Option<Option<i64>> = None;
        for (g, &(gs, ge)) in self.groups.runs.iter().enumerate() {
            for p in gs..ge {
                cx.tick(1)?;
                // The row is read only by the calls that need it: rows are
                // visited in the window's order, so each read is a cache
                // miss.
                let row = || self.row(p);
                let v = match &call.func {
                    WindowFunc::RowNumber => Value::BigInt((p - self.start + 1) as i64),
                    WindowFunc::Rank => Value::BigInt((gs - self.start + 1) as i64),
                    WindowFunc::DenseRank => Value::BigInt(g as i64 + 1),
                    WindowFunc::PercentRank => {
                        Value::Double(if n <= 1 { 0.0 } else { (gs - self.start) as f64 / (n - 1) as f64 })
                    }
                    WindowFunc::CumeDist => Value::Double((ge - self.start) as f64 / n as f64),
                    WindowFunc::Ntile => {
                        // The bucket count is read at the partition's first
                        // row, as PostgreSQL does.
                        let buckets = match ntile {
                            Some(b) => b,
                            None => {
                                let b = match arg(0, row())?.coerce_to(&DataType::BigInt)? {
                                    Value::BigInt(k) if k > 0 => Some(k),
                                    Value::Null => None,
                                    _ => {
                                        return Err(Error::other(
                                            "22014",
                                            "argument of ntile must be greater than zero",
                                        ))
                                    }
                                };
                                ntile = Some(b);
                                b
                            }
                        };
                        match buckets {
                            Some(k) => {
                                Value::Integer(
                                    ntile_bucket((p - self.start) as u64, n as u64, k as u64) as i32
                                )
                            }
                            None => Value::Null,
                        }
                    }
                    WindowFunc::Lag | WindowFunc::Lead => {
                        match arg(1, row())?.coerce_to(&DataType::BigInt)? {
                            Value::BigInt(off) => {
                                let off = if matches!(call.func, WindowFunc::Lag) {
                                    -(off as i128)
                                } else {
                                    off as i128
                                };
                                let target = p as i128 + off;
                                if target >= self.start as i128 && target < self.end as i128 {
                                    arg(0, self.row(target as usize))?
                                } else if call.args.len() > 2 {
                                    arg(2, row())?
                                } else {
                                    Value::Null
                                }
                            }
                            _ => Value::Null,
                        }
                    }
                    WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue => {
                        let (from, to) = self.frame(frame, p, g)?;
                        let at = match call.func {
                            WindowFunc::FirstValue => Some(from),
                            WindowFunc::LastValue => to.checked_sub(1),
                            _ => match arg(1, row())?.coerce_to(&DataType::BigInt)? {
                                Value::BigInt(k) if k > 0 => from.checked_add(k as usize - 1),
                                Value::Null => None,
                                _ => {
                                    return Err(Error::other(
                                        "22016",
                                        "argument of nth_value must be greater than zero",
                                    ))
                                }
                            },
                        };
                        match at {
                            Some(i) if i >= from && i < to => arg(0, self.row(i))?,
                            _ => Value::Null,
                        }
                    }
                    WindowFunc::Aggregate(agg) => {
                        let range = self.frame(frame, p, g)?;
                        match &last {
                            Some((r, v)) if *r == range => v.clone(),
                            _ => {
                                let v = self.aggregate(
                                    agg,
                                    frame,
                                    range,
                                    (&mut running, &mut inputs),
                                    outer,
                                    cx,
                                )?;
                                last = Some((range, v.clone()));
                                v
                            }
                        }
                    }
                };
                cx.budget.charge(row_bytes(std::slice::from_ref(&v)))?;
                values.push(v);
            }
        }
        Ok(())
    }

    /// The aggregate over positions `[from, to)`: read off the running
    /// accumulator when the frame starts with the partition (its end only
    /// moves forward from row to row), else aggregated afresh from the
    /// rows' inputs in `inputs` (see [`FrameInputs`]).
    fn aggregate(
        &self,
        agg: &AggCall,
        frame: &Offsets,
        (from, to): (usize, usize),
        (running, inputs): (&mut Option<(Acc, usize)>, &mut FrameInputs),
        outer: &[Value],
        cx: &ExecCtx,
    ) -> Result<Value> {
        if matches!(frame.start, Bound::UnboundedPreceding) {
            let (acc, upto) = running.get_or_insert_with(|| (Acc::new(agg), self.start));
            while *upto < to {
                acc.add(agg, self.row(*upto), outer, cx)?;
                *upto += 1;
            }
            return acc.clone().finish(agg, cx);
        }
        let mut acc = Acc::new(agg);
        if !agg.order.is_empty() {
            // An ordered aggregate reads its sort keys off the rows.
            for p in from..to.max(from) {
                cx.tick(1)?;
                acc.add(agg, self.row(p), outer, cx)?;
            }
            return acc.finish(agg, cx);
        }
        inputs.slide(
            from,
            to,
            |p| {
                prefetch_row(self.rows, self.order, p);
                Acc::input(agg, self.row(p), outer, cx)
            },
            cx,
        )?;
        cx.tick(1)?;
        if let Some(v) = inputs.tally.value(agg) {
            return Ok(v);
        }
        for input in &inputs.held {
            cx.tick(1)?;
            if let Some(args) = input {
                acc.add_input(agg, args.clone(), &[], outer, cx)?;
            }
        }
        acc.finish(agg, cx)
    }
}

/// The inputs (FILTER result and argument values) of the rows of the last
/// frame aggregated afresh, positions `first..first + held.len()`. Frames
/// slide forward from row to row, so each row's input is evaluated once
/// while it is in frames (three times over for `ROWS 2 PRECEDING`
/// otherwise), and not at all when it is in none, as in PostgreSQL; the
/// memory held is one frame's. Beside them a [`Tally`] keeps what `count`
/// and an integer `sum` need, moved as rows enter and leave, so that those
/// read the frame's value without visiting its rows.
#[derive(Default)]
struct FrameInputs {
    first: usize,
    held: std::collections::VecDeque<Option<Args>>,
    tally: Tally,
}

impl FrameInputs {
    /// Makes `held` the inputs of frame `[from, to)`, computing those of
    /// the rows that enter with `input`.
    fn slide(
        &mut self,
        from: usize,
        to: usize,
        mut input: impl FnMut(usize) -> Result<Option<Args>>,
        cx: &ExecCtx,
    ) -> Result<()> {
        let to = to.max(from);
        if from < self.first || from > self.first + self.held.len() {
            self.held.clear();
            self.tally = Tally::default();
            self.first = from;
        }
        while self.first < from {
            if let Some(gone) = self.held.pop_front() {
                self.tally.moved(&gone, -1);
            }
            self.first += 1;
        }
        while self.first + self.held.len() > to {
            if let Some(gone) = self.held.pop_back() {
                self.tally.moved(&gone, -1);
            }
        }
        while self.first + self.held.len() < to {
            let room = self.held.capacity();
            let new = input(self.first + self.held.len())?;
            self.tally.moved(&new, 1);
            self.held.push_back(new);
            if self.held.capacity() > room {
                cx.budget.charge((self.held.capacity() - room) * std::mem::size_of::<Option<Args>>())?;
            }
        }
        Ok(())
    }
}

/// Running counts over a frame's inputs: the inputs FILTER let through,
/// those whose first argument is not NULL, the sum of those that are
/// smallint or int, and how many are anything else.
#[derive(Default)]
struct Tally {
    rows: i64,
    non_null: i64,
    sum: i128,
    other: i64,
}

impl Tally {
    /// Adds (`sign` 1) or removes (-1) one row's input.
    fn moved(&mut self, input: &Option<Args>, sign: i64) {
        let Some(args) = input else { return };
        self.rows += sign;
        match args.first() {
            None | Some(Value::Null) => {}
            Some(v) => {
                self.non_null += sign;
                match v {
                    Value::SmallInt(x) => self.sum += i128::from(*x) * i128::from(sign),
                    Value::Integer(x) => self.sum += i128::from(*x) * i128::from(sign),
                    _ => self.other += sign,
                }
            }
        }
    }

    /// The frame's value of `agg` when the tally answers it: `count(*)`,
    /// `count(x)`, and `sum` of smallint or int values whose total fits
    /// its bigint result (an overflow is left to the accumulator, which
    /// reports it).
    fn value(&self, agg: &AggCall) -> Option<Value> {
        if agg.distinct {
            return None;
        }
        match agg.func {
            AggFunc::CountStar => Some(Value::BigInt(self.rows)),
            AggFunc::Count => Some(Value::BigInt(self.non_null)),
            AggFunc::Sum if self.other == 0 && self.non_null == 0 => Some(Value::Null),
            AggFunc::Sum if self.other == 0 => i64::try_from(self.sum).ok().map(Value::BigInt),
            _ => None,
        }
    }
}

/// How many positions at the start of `range` satisfy `pred`, which holds
/// for a prefix of them and not after (a binary search, as
/// `slice::partition_point`).
fn partition_point(range: std::ops::Range<usize>, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (range.start, range.end);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo - range.start
}

/// The 1-based bucket of the row at 0-based position `i` of `n` rows in
/// `k` buckets: as even as can be, the first `n % k` buckets one row
/// larger.
fn ntile_bucket(i: u64, n: u64, k: u64) -> u64 {
    let size = n / k;
    let larger = n % k;
    if i < larger * (size + 1) {
        i / (size + 1) + 1
    } else {
        larger + (i - larger * (size + 1)) / size.max(1) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::ntile_bucket;

    #[test]
    fn ntile_spreads_rows_as_evenly_as_postgresql() {
        let buckets = |n, k| (0..n).map(|i| ntile_bucket(i, n, k)).collect::<Vec<_>>();
        assert_eq!(buckets(10, 3), [1, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
        assert_eq!(buckets(6, 3), [1, 1, 2, 2, 3, 3]);
        assert_eq!(buckets(2, 5), [1, 2]);
        assert_eq!(buckets(7, 1), [1; 7]);
    }
}
