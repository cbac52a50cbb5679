//! Aggregate accumulators.

use super::eval::{eval, test};
use super::ExecCtx;
use crate::error::Result;
use crate::functions::operators::binary;
use crate::functions::operators::BinOp;
use crate::planner::plan::{AggCall, AggFunc};
use centum_types::{Decimal, Value};
use foldhash::{HashSet, HashSetExt};
use smallvec::SmallVec;

/// One input's argument values: inline for the usual one or two, so that
/// adding a row allocates nothing.
pub(crate) type Args = SmallVec<[Value; 2]>;

/// The running state of one aggregate call (cloned to read a running
/// window aggregate without ending it).
#[derive(Clone)]
pub(crate) struct Acc {
    count: i64,
    value: Value,
    seen: Option<HashSet<Vec<Value>>>,
    /// An ordered aggregate's inputs (sort key values, arguments), held
    /// until the group ends.
    pending: Vec<(Vec<Value>, Args)>,
    /// `array_agg`'s and `jsonb_agg`'s elements; `jsonb_object_agg`'s
    /// keys and values, one after the other.
    items: Vec<Value>,
}

impl Acc {
    pub fn new(call: &AggCall) -> Acc {
        Acc {
            count: 0,
            value: Value::Null,
            seen: call.distinct.then(HashSet::new),
            pending: Vec::new(),
            items: Vec::new(),
        }
    }

    /// Adds one input row.
    pub fn add(&mut self, call: &AggCall, row: &[Value], outer: &[Value], cx: &ExecCtx) -> Result<()> {
        match Self::input(call, row, outer, cx)? {
            Some(args) => self.add_input(call, args, row, outer, cx),
            None => Ok(()),
        }
    }

    /// What one row gives the aggregate: its argument values, or `None`
    /// when its FILTER rejects it (`count(*)` has no arguments).
    pub fn input(call: &AggCall, row: &[Value], outer: &[Value], cx: &ExecCtx) -> Result<Option<Args>> {
        if let Some(f) = &call.filter {
            if !test(f, row, outer, cx)? {
                return Ok(None);
            }
        }
        let mut args = Args::new();
        for a in &call.args {
            args.push(eval(a, row, outer, cx)?);
        }
        Ok(Some(args))
    }

    /// Adds one row's [`Acc::input`]; `row` is read again only by an
    /// ordered aggregate, for its sort keys.
    pub fn add_input(
        &mut self,
        call: &AggCall,
        args: Args,
        row: &[Value],
        outer: &[Value],
        cx: &ExecCtx,
    ) -> Result<()> {
        if call.func == AggFunc::CountStar {
            self.count += 1;
            return Ok(());
        }
        if !call.order.is_empty() {
            let keys =
                call.order.iter().map(|k| eval(&k.expr, row, outer, cx)).collect::<Result<Vec<_>>>()?;
            cx.budget.hold(&args)?;
            cx.budget.hold(&keys)?;
            self.pending.push((keys, args));
            return Ok(());
        }
        self.accumulate(call, args, cx)
    }

    /// Adds one input's argument values.
    fn accumulate(&mut self, call: &AggCall, mut args: Args, cx: &ExecCtx) -> Result<()> {
        let collects = matches!(
            call.func,
            AggFunc::ArrayAgg
                | AggFunc::JsonbAgg
                | AggFunc::JsonAgg
                | AggFunc::JsonbObjectAgg
                | AggFunc::JsonObjectAgg
        );
        if args[0].is_null() && !collects {
            return Ok(());
        }
        if let Some(seen) = &mut self.seen {
            if seen.contains(&args[..]) {
                return Ok(());
            }
            // Every distinct input is kept until the group ends.
            cx.budget.hold(&args)?;
            seen.insert(args.to_vec());
        }
        self.count += 1;
        // The common case, a sum of int or smallint values into its bigint
        // total, without the operator's dispatch (an overflow takes the
        // general path, which reports it).
        if let (AggFunc::Sum, Value::BigInt(total)) = (call.func, &mut self.value) {
            let x = match args[0] {
                Value::SmallInt(x) => Some(i64::from(x)),
                Value::Integer(x) => Some(i64::from(x)),
                _ => None,
            };
            if let Some(sum) = x.and_then(|x| total.checked_add(x)) {
                *total = sum;
                return Ok(());
            }
        }
        // And min or max of integers of one type.
        if matches!(call.func, AggFunc::Min | AggFunc::Max) {
            let better = |x: i64, cur: i64| if call.func == AggFunc::Min { x < cur } else { x > cur };
            match (&mut self.value, &args[0]) {
                (Value::BigInt(cur), &Value::BigInt(x)) => {
                    if better(x, *cur) {
                        *cur = x;
                    }
                    return Ok(());
                }
                (Value::Integer(cur), &Value::Integer(x)) => {
                    if better(x.into(), (*cur).into()) {
                        *cur = x;
                    }
                    return Ok(());
                }
                _ => {}
            }
        }
        if collects {
            // A pair aggregate keeps its key and value; the others their one
            // argument.
            cx.budget.hold(&args)?;
            self.items.extend(args);
            return Ok(());
        }
        let v = args.swap_remove(0);
        self.value = match call.func {
            AggFunc::Count
            | AggFunc::CountStar
            | AggFunc::ArrayAgg
            | AggFunc::JsonbAgg
            | AggFunc::JsonAgg
            | AggFunc::JsonbObjectAgg
            | AggFunc::JsonObjectAgg => Value::Null,
            AggFunc::Sum | AggFunc::Avg => {
                let v = match v {
                    Value::SmallInt(_) | Value::Integer(_) | Value::BigInt(_)
                        if call.func == AggFunc::Avg =>
                    {
                        Value::Numeric(Decimal::from(
                            v.coerce_to(&centum_types::DataType::BigInt)
                                .ok()
                                .and_then(|x| match x {
                                    Value::BigInt(i) => Some(i),
                                    _ => None,
                                })
                                .unwrap_or(0),
                        ))
                    }
                    Value::SmallInt(i) if call.func == AggFunc::Sum => Value::BigInt(i as i64),
                    Value::Integer(i) if call.func == AggFunc::Sum => Value::BigInt(i as i64),
                    Value::BigInt(i) if call.func == AggFunc::Sum => Value::Numeric(Decimal::from(i)),
                    v => v,
                };
                if self.value.is_null() {
                    v
                } else {
                    binary(BinOp::Add, std::mem::replace(&mut self.value, Value::Null), v)?
                }
            }
            AggFunc::AnyValue if !self.value.is_null() => std::mem::replace(&mut self.value, Value::Null),
            AggFunc::AnyValue => v,
            AggFunc::Min | AggFunc::Max => {
                if self.value.is_null() {
                    v
                } else {
                    let less = v.sql_cmp(&self.value) == Some(std::cmp::Ordering::Less);
                    if less == (call.func == AggFunc::Min) {
                        v
                    } else {
                        std::mem::replace(&mut self.value, Value::Null)
                    }
                }
            }
            AggFunc::BoolAnd | AggFunc::BoolOr => {
                let b = matches!(v, Value::Boolean(true));
                match (&self.value, call.func) {
                    (Value::Null, _) => Value::Boolean(b),
                    (Value::Boolean(cur), AggFunc::BoolAnd) => Value::Boolean(*cur && b),
                    (Value::Boolean(cur), _) => Value::Boolean(*cur || b),
                    _ => Value::Null,
                }
            }
            AggFunc::StringAgg => {
                let sep = match args.first() {
                    Some(Value::Text(s)) => s.as_str(),
                    _ => "",
                };
                let s = match v {
                    Value::Text(s) => s,
                    v => v.to_string(),
                };
                // The running string is held until the group ends: its
                // growth is charged to statement_mem like any buffer, and
                // the bytes it copies count towards the timeout checks.
                cx.tick_bytes(sep.len() + s.len())?;
                match std::mem::replace(&mut self.value, Value::Null) {
                    Value::Text(mut cur) => {
                        let before = cur.capacity();
                        cur.push_str(sep);
                        cur.push_str(&s);
                        cx.budget.charge(cur.capacity() - before)?;
                        Value::Text(cur)
                    }
                    _ => {
                        cx.budget.charge(s.capacity())?;
                        Value::Text(s)
                    }
                }
            }
        };
        Ok(())
    }

    /// The aggregate's result.
    pub fn finish(mut self, call: &AggCall, cx: &ExecCtx) -> Result<Value> {
        if !self.pending.is_empty() {
            let mut inputs = std::mem::take(&mut self.pending);
            inputs.sort_by(|a, b| super::query::compare_keys(&a.0, &b.0, &call.order));
            for (_, args) in inputs {
                self.accumulate(call, args, cx)?;
            }
        }
        Ok(match call.func {
            AggFunc::ArrayAgg
            | AggFunc::JsonbAgg
            | AggFunc::JsonAgg
            | AggFunc::JsonbObjectAgg
            | AggFunc::JsonObjectAgg
                if self.count == 0 =>
            {
                Value::Null
            }
            AggFunc::ArrayAgg => Value::Array(self.items),
            AggFunc::JsonbAgg | AggFunc::JsonAgg => {
                crate::functions::json::aggregate_array(&self.items, call.func == AggFunc::JsonAgg)?
            }
            AggFunc::JsonbObjectAgg | AggFunc::JsonObjectAgg => {
                crate::functions::json::aggregate_object(&self.items, call.func == AggFunc::JsonObjectAgg)?
            }
            AggFunc::Count | AggFunc::CountStar => Value::BigInt(self.count),
            AggFunc::Avg => match self.value {
                Value::Null => Value::Null,
                Value::Double(f) => Value::Double(f / self.count as f64),
                v => binary(BinOp::Div, v, Value::Numeric(Decimal::from(self.count)))?,
            },
            _ => self.value,
        })
    }
}
