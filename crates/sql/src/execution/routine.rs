//! Running a compiled routine inside the caller's transaction.
//!
//! A call owns a frame: the slot array (which every statement of the body
//! reads as its parameters), the array variables, the last row count and
//! the result. Operations run in order; loops and EXIT/CONTINUE/RETURN
//! travel as a [`Flow`]. Each embedded statement runs its prepared plan in
//! a fresh execution context over the frame's slots, in the caller's
//! transaction, so the whole body is one atomic unit of that transaction.
//! An error names the routine, the line and the kind of statement.

use crate::error::{Error, Result};
use crate::execution::ExecCtx;
use crate::planner::routines::compile::{
    Bind, CDynamic, CExpr, CStmt, MessagePart, Op, OpKind, Program, RaiseOption,
};
use crate::planner::routines::Compiled;
use crate::routines::parse::Level;
use crate::routines::{text, Mode, Returns};
use centum_types::{DataType, Value};
use std::borrow::Cow;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

/// What a call produced.
pub(crate) struct Outcome {
    /// A scalar function's value (`''` for void).
    pub value: Value,
    /// A set-returning function's rows.
    pub rows: Vec<Vec<Value>>,
    /// A procedure's OUT and INOUT values.
    pub outs: Vec<Value>,
}

/// How control leaves a list of operations.
enum Flow {
    Normal,
    Exit(Option<String>),
    Continue(Option<String>),
    Return,
}

struct Frame {
    /// Errors the handlers running now took, innermost last.
    caught: Vec<Error>,
    vals: Vec<Value>,
    arrays: Vec<Option<Rc<Vec<Vec<Value>>>>>,
    row_count: u64,
    result: Option<Value>,
    rows: Vec<Vec<Value>>,
    /// A trigger's RETURN: the row, or `Some(None)` for NULL.
    row: Option<Option<Vec<Value>>>,
    /// A trigger's transition tables, by work-table id.
    transition: Vec<(usize, Rc<Vec<Vec<Value>>>)>,
}

/// Nested calls allowed before a call fails with 54001.
const MAX_DEPTH: u32 = 1000;
/// Stack a call must find left on its thread, or it fails with 54001
/// instead of overflowing (a call nests evaluation, planning-free
/// execution and the operations of its body).
const STACK_RESERVE: usize = 256 * 1024;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

struct DepthGuard;

impl DepthGuard {
    fn enter() -> Result<DepthGuard> {
        DEPTH.with(|d| {
            if d.get() >= MAX_DEPTH || stacker::remaining_stack().is_some_and(|left| left < STACK_RESERVE) {
                return Err(Error::other("54001", "stack depth limit exceeded (routines nested too deeply)"));
            }
            d.set(d.get() + 1);
            Ok(DepthGuard)
        })
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Calls `c` with `args` (one per IN or INOUT parameter).
pub(crate) fn call(c: &Arc<Compiled>, args: Vec<Value>, cx: &ExecCtx) -> Result<Outcome> {
    let Some(p) = c.program.get() else {
        return Err(Error::other("55000", format!("function {} is still being compiled", c.signature)));
    };
    let _depth = DepthGuard::enter()?;
    let mut f = Frame {
        caught: Vec::new(),
        vals: vec![Value::Null; p.slots.len()],
        arrays: vec![None; p.arrays],
        row_count: 0,
        result: None,
        rows: vec![],
        row: None,
        transition: vec![],
    };
    bind(c, p, args, &mut f)?;
    f.vals[p.found] = Value::Boolean(false);
    let r = Runner { c, p, cx };
    r.ops(&p.body, &mut f)?;
    let outs: Vec<Value> = p.outs.iter().map(|s| f.vals[*s].clone()).collect();
    let value = match &c.returns {
        Returns::Scalar(_) if !outs.is_empty() => outs[0].clone(),
        Returns::Scalar(_) => f.result.take().ok_or_else(|| {
            Error::other("2F005", "control reached end of function without RETURN")
                .with_context(format!("PL/pgSQL function {}", c.signature))
        })?,
        Returns::Void => Value::Text(String::new()),
        Returns::SetOf(_) | Returns::Table(_) | Returns::Trigger => Value::Null,
    };
    Ok(Outcome { value, rows: f.rows, outs })
}

/// What fires a trigger: the event, and the rows it concerns.
pub(crate) struct TriggerCall<'a> {
    /// TG_NAME.
    pub name: &'a str,
    /// TG_WHEN: `BEFORE`, `AFTER` or `INSTEAD OF`.
    pub when: &'static str,
    /// TG_LEVEL: `ROW` or `STATEMENT`.
    pub level: &'static str,
    /// TG_OP: `INSERT`, `UPDATE`, `DELETE` or `TRUNCATE`.
    pub op: &'static str,
    /// TG_TABLE_NAME and TG_TABLE_SCHEMA.
    pub table: (&'a str, &'a str),
    /// TG_ARGV.
    pub args: &'a [String],
    /// NEW (INSERT and UPDATE row triggers); moved into the call's
    /// variables when owned.
    pub new: Option<Cow<'a, [Value]>>,
    /// OLD (UPDATE and DELETE row triggers).
    pub old: Option<Cow<'a, [Value]>>,
    /// The statement's old and new rows (an AFTER STATEMENT trigger's
    /// transition tables).
    pub old_table: Option<Rc<Vec<Vec<Value>>>>,
    pub new_table: Option<Rc<Vec<Vec<Value>>>>,
}

/// How a trigger call ended.
pub(crate) enum Fired {
    /// Its WHEN condition did not hold: the function did not run.
    Skipped,
    /// The function returned this row, or NULL.
    Returned(Option<Vec<Value>>),
}

/// Runs trigger program `c` for `t`, in the caller's transaction.
pub(crate) fn call_trigger(c: &Arc<Compiled>, t: TriggerCall, cx: &ExecCtx) -> Result<Fired> {
    let Some(p) = c.program.get() else {
        return Err(Error::other("55000", format!("function {} is still being compiled", c.signature)));
    };
    let Some(slots) = &p.trigger else {
        return Err(Error::other("0A000", "trigger functions can only be called as triggers"));
    };
    let _depth = DepthGuard::enter()?;
    let mut f = Frame {
        caught: Vec::new(),
        vals: (0..p.slots.len()).map(|_| Value::Null).collect(),
        arrays: (0..p.arrays).map(|_| None).collect(),
        row_count: 0,
        result: None,
        rows: vec![],
        row: None,
        transition: [(slots.old_table, t.old_table), (slots.new_table, t.new_table)]
            .into_iter()
            .filter_map(|(id, rows)| Some((id?, rows.unwrap_or_default())))
            .collect(),
    };
    for (record, row) in [(&slots.new, t.new), (&slots.old, t.old)] {
        match row {
            Some(Cow::Owned(row)) => {
                for (slot, v) in record.iter().zip(row) {
                    f.vals[*slot] = v;
                }
            }
            Some(Cow::Borrowed(row)) => {
                for (slot, v) in record.iter().zip(row) {
                    f.vals[*slot] = v.clone();
                }
            }
            None => {}
        }
    }
    let text = |s: &str| Value::Text(s.to_string());
    let info = [t.name, t.when, t.level, t.op, t.table.0, t.table.1];
    for ((slot, read), v) in slots.info.iter().zip(slots.info_read).zip(info) {
        if read {
            f.vals[*slot] = text(v);
        }
    }
    let n = t.args.len() as i32;
    f.vals[slots.info[6]] = Value::Integer(n);
    if slots.argv_read {
        f.vals[slots.argv.len] = if n > 0 { Value::Integer(n) } else { Value::Null };
        f.vals[slots.argv.card] = Value::Integer(n);
        f.arrays[slots.argv.arr] = Some(Rc::new(t.args.iter().map(|a| vec![text(a)]).collect()));
    }
    f.vals[p.found] = Value::Boolean(false);
    let r = Runner { c, p, cx };
    if let Some(when) = &slots.when {
        if !r.test(when, &mut f)? {
            return Ok(Fired::Skipped);
        }
    }
    r.ops(&p.body, &mut f)?;
    match f.row {
        Some(row) => Ok(Fired::Returned(row)),
        None => Err(Error::other("2F005", "control reached end of trigger procedure without RETURN")
            .with_context(format!("PL/pgSQL function {}", c.signature))),
    }
}

fn bind(c: &Compiled, p: &Program, args: Vec<Value>, f: &mut Frame) -> Result<()> {
    let mut args = args.into_iter();
    for (param, b) in c.params.iter().zip(&p.binds) {
        if param.mode == Mode::Out {
            continue;
        }
        let arg = args.next().unwrap_or(Value::Null);
        match b {
            Bind::Scalar(slot) => f.vals[*slot] = arg.coerce_to(&p.slots[*slot])?,
            Bind::Array(a) => {
                let elems = match arg {
                    Value::Null => None,
                    Value::Text(s) => Some(text::array_values(&s, &a.elem)?),
                    Value::Array(items) => match &a.elem {
                        crate::routines::Elem::Scalar(t) => Some(
                            items
                                .into_iter()
                                .map(|v| Ok(vec![v.coerce_to(t)?]))
                                .collect::<Result<Vec<_>>>()?,
                        ),
                        composite => Some(text::array_values(&Value::Array(items).to_string(), composite)?),
                    },
                    other => {
                        return Err(Error::mismatch(format!(
                            "an array argument is written as array text, not {}",
                            other
                        )))
                    }
                };
                let n = elems.as_ref().map(|e| e.len() as i32);
                f.vals[a.len] = n.filter(|n| *n > 0).map_or(Value::Null, Value::Integer);
                f.vals[a.card] = n.map_or(Value::Null, Value::Integer);
                f.arrays[a.arr] = elems.map(Rc::new);
            }
            Bind::Composite { fields, comp } => {
                let values = match arg {
                    Value::Null => vec![Value::Null; fields.len()],
                    Value::Text(s) => text::record_values(&s, comp)?,
                    other => {
                        return Err(Error::mismatch(format!(
                            "a composite argument is written as record text, not {other}"
                        )))
                    }
                };
                for (slot, v) in fields.iter().zip(values) {
                    f.vals[*slot] = v;
                }
            }
        }
    }
    Ok(())
}

struct Runner<'r, 'c> {
    c: &'r Compiled,
    p: &'r Program,
    cx: &'r ExecCtx<'c>,
}

fn label_matches(target: &Option<String>, label: &Option<String>) -> bool {
    target.is_none() || target == label
}

impl Runner<'_, '_> {
    fn context(&self, op: &Op, e: Error) -> Error {
        e.with_context(crate::planner::routines::compile::self_context(self.c, op.line, op.what))
    }

    /// A block with an EXCEPTION section. It runs under a savepoint; an
    /// error a handler takes rolls the transaction back to it (the
    /// block's writes and schema changes are undone; variables keep their
    /// values) and the handler runs instead. Other errors pass on.
    fn guarded(
        &self,
        body: &[Op],
        handlers: &[crate::planner::routines::compile::Handler],
        f: &mut Frame,
    ) -> Result<Flow> {
        let txn = self.cx.txn;
        let sp = txn.savepoint();
        let globals = self.cx.catalog.globals_mark(txn.id());
        let e = match self.ops(body, f) {
            Ok(flow) => return Ok(flow),
            Err(e) => e,
        };
        // A deferred row wait reruns the whole statement: no handler takes it.
        if e.would_wait().is_some() {
            return Err(e);
        }
        let code = e.sqlstate();
        let Some(h) = handlers.iter().find(|h| h.catches.iter().any(|c| c.matches(code))) else {
            return Err(e);
        };
        txn.rollback_to(&sp);
        self.cx.catalog.globals_rollback(txn.id(), &globals)?;
        if self.cx.catalog.db().claim_owner() == Some(txn.id()) {
            self.cx.catalog.invalidate();
        }
        f.vals[h.sqlstate] = Value::Text(code.to_string());
        f.vals[h.sqlerrm] = Value::Text(e.to_string());
        f.caught.push(e);
        let r = self.ops(&h.body, f);
        f.caught.pop();
        r
    }

    fn ops(&self, ops: &[Op], f: &mut Frame) -> Result<Flow> {
        for op in ops {
            match self.op(op, f)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    /// Runs a loop body once; `Some(flow)` when the loop must stop.
    fn iteration(&self, label: &Option<String>, body: &[Op], f: &mut Frame, op: &Op) -> Result<Option<Flow>> {
        self.cx.check_deadline().map_err(|e| self.context(op, e))?;
        Ok(match self.ops(body, f)? {
            Flow::Normal => None,
            Flow::Continue(l) if label_matches(&l, label) => None,
            Flow::Exit(l) if label_matches(&l, label) => Some(Flow::Normal),
            other => Some(other),
        })
    }

    fn set(&self, f: &mut Frame, slot: usize, v: Value) -> Result<()> {
        let ty = &self.p.slots[slot];
        f.vals[slot] = if v.fits(ty) { v } else { v.coerce_to(ty)? };
        Ok(())
    }

    fn assign_row(&self, f: &mut Frame, targets: &[usize], row: Option<&[Value]>) -> Result<()> {
        for (i, slot) in targets.iter().enumerate() {
            let v = row.and_then(|r| r.get(i)).cloned().unwrap_or(Value::Null);
            self.set(f, *slot, v)?;
        }
        Ok(())
    }

    fn op(&self, op: &Op, f: &mut Frame) -> Result<Flow> {
        let ctx = |e: Error| self.context(op, e);
        match &op.kind {
            OpKind::Assign { slot, value, not_null } => {
                let v = match value {
                    Some(e) => self.eval(e, f).map_err(ctx)?,
                    None => Value::Null,
                };
                if let (Some(name), true) = (not_null, v.is_null()) {
                    return Err(ctx(Error::other(
                        "22004",
                        format!("null value cannot be assigned to variable \"{name}\" declared NOT NULL"),
                    )));
                }
                self.set(f, *slot, v).map_err(ctx)?;
            }
            OpKind::Clear(slots) => slots.iter().for_each(|s| f.vals[*s] = Value::Null),
            OpKind::If { branches, otherwise } => {
                for (cond, body) in branches {
                    if self.test(cond, f).map_err(ctx)? {
                        return self.ops(body, f);
                    }
                }
                return self.ops(otherwise, f);
            }
            OpKind::Loop { label, cond, body } => loop {
                if let Some(c) = cond {
                    if !self.test(c, f).map_err(ctx)? {
                        break;
                    }
                }
                if let Some(flow) = self.iteration(label, body, f, op)? {
                    return Ok(flow);
                }
            },
            OpKind::ForRange { label, var, lo, hi, step, reverse, body } => {
                let bound = |e: &CExpr, f: &mut Frame, what: &str| -> Result<i64> {
                    let v = self.eval(e, f)?.coerce_to(&DataType::BigInt)?;
                    match v {
                        Value::BigInt(i) => Ok(i),
                        _ => Err(Error::other("22004", format!("{what} of FOR loop cannot be null"))),
                    }
                };
                let lo = bound(lo, f, "lower bound").map_err(ctx)?;
                let hi = bound(hi, f, "upper bound").map_err(ctx)?;
                let step = match step {
                    Some(s) => bound(s, f, "BY value").map_err(ctx)?,
                    None => 1,
                };
                if step <= 0 {
                    return Err(ctx(Error::InvalidParameter(
                        "BY value of FOR loop must be greater than zero".into(),
                    )));
                }
                let mut i = lo;
                let mut found = false;
                while if *reverse { i >= hi } else { i <= hi } {
                    found = true;
                    let v =
                        i32::try_from(i).map_err(|_| ctx(Error::other("22003", "integer out of range")))?;
                    f.vals[*var] = Value::Integer(v);
                    if let Some(flow) = self.iteration(label, body, f, op)? {
                        f.vals[self.p.found] = Value::Boolean(true);
                        return Ok(flow);
                    }
                    i = match if *reverse { i.checked_sub(step) } else { i.checked_add(step) } {
                        Some(n) => n,
                        None => break,
                    };
                }
                f.vals[self.p.found] = Value::Boolean(found);
            }
            OpKind::ForQuery { label, query, targets, body } => {
                let (rows, _) = self.run(query, f).map_err(ctx)?;
                return self.each_row(rows, label, targets, body, f, op);
            }
            OpKind::ForExecute { label, query, targets, body } => {
                let (rows, _, _) = self.dynamic(query, f).map_err(ctx)?;
                return self.each_row(rows, label, targets, body, f, op);
            }
            OpKind::Execute { query, into } => {
                let (rows, count, many) = self.dynamic(query, f).map_err(ctx)?;
                f.row_count = count;
                match into {
                    None => f.vals[self.p.found] = Value::Boolean(count > 0),
                    Some((targets, strict)) => self.into(f, targets, *strict, many, &rows).map_err(ctx)?,
                }
            }
            OpKind::ReturnQueryExecute(query) => {
                let (rows, count, _) = self.dynamic(query, f).map_err(ctx)?;
                self.return_rows(f, rows, count).map_err(ctx)?;
            }
            OpKind::ForEach { label, arr, targets, body } => {
                let Some(elems) = f.arrays[*arr].clone() else {
                    return Err(ctx(Error::other("22004", "FOREACH expression must not be null")));
                };
                for e in elems.iter() {
                    self.assign_row(f, targets, Some(e)).map_err(ctx)?;
                    if let Some(flow) = self.iteration(label, body, f, op)? {
                        return Ok(flow);
                    }
                }
            }
            OpKind::Exit { label, when, cont } => {
                let go = match when {
                    Some(w) => self.test(w, f).map_err(ctx)?,
                    None => true,
                };
                if go {
                    return Ok(if *cont { Flow::Continue(label.clone()) } else { Flow::Exit(label.clone()) });
                }
            }
            OpKind::Block { label, body, handlers } => {
                let flow =
                    if handlers.is_empty() { self.ops(body, f)? } else { self.guarded(body, handlers, f)? };
                return Ok(match flow {
                    Flow::Exit(Some(l)) if label.as_deref() == Some(l.as_str()) => Flow::Normal,
                    other => other,
                });
            }
            OpKind::Sql { stmt, into } => {
                let (rows, count) = self.run(stmt, f).map_err(ctx)?;
                f.row_count = count;
                match into {
                    None => f.vals[self.p.found] = Value::Boolean(count > 0),
                    Some((targets, strict, many)) => {
                        self.into(f, targets, *strict, *many, &rows).map_err(ctx)?
                    }
                }
            }
            OpKind::Return(value) => {
                if let Some(e) = value {
                    let v = self.eval(e, f).map_err(ctx)?;
                    let v = match &self.c.returns {
                        Returns::Scalar(t) if !v.fits(t) => v.coerce_to(t).map_err(|e| ctx(e.into()))?,
                        _ => v,
                    };
                    f.result = Some(v);
                } else if matches!(self.c.returns, Returns::Scalar(_)) && self.p.outs.is_empty() {
                    f.result = Some(Value::Null);
                }
                return Ok(Flow::Return);
            }
            OpKind::ReturnRow(slots) => {
                f.row = Some(slots.as_ref().map(|s| s.iter().map(|x| f.vals[*x].clone()).collect()));
                return Ok(Flow::Return);
            }
            OpKind::ReturnQuery(stmt) => {
                let (rows, count) = self.run(stmt, f).map_err(ctx)?;
                self.return_rows(f, rows, count).map_err(ctx)?;
            }
            OpKind::ReturnNext(value) => {
                let row = match value {
                    Some(e) => {
                        let v = self.eval(e, f).map_err(ctx)?;
                        match &self.c.returns {
                            Returns::SetOf(t) if !v.fits(t) => {
                                vec![v.coerce_to(t).map_err(|e| ctx(e.into()))?]
                            }
                            _ => vec![v],
                        }
                    }
                    None => self.p.table.iter().map(|s| f.vals[*s].clone()).collect(),
                };
                f.rows.push(row);
            }
            OpKind::Raise { level, code, message, options } => {
                let mut text = String::new();
                for part in message {
                    match part {
                        MessagePart::Text(t) => text.push_str(t),
                        MessagePart::Arg(e) => {
                            let v = self.eval(e, f).map_err(ctx)?;
                            text.push_str(&if v.is_null() { "<NULL>".to_string() } else { v.to_string() });
                        }
                    }
                }
                let mut code = *code;
                let (mut detail, mut hint) = (None, None);
                for (o, e) in options {
                    let v = self.eval(e, f).map_err(ctx)?;
                    let s = if v.is_null() { String::new() } else { v.to_string() };
                    match o {
                        RaiseOption::Message => text = s,
                        RaiseOption::Detail => detail = Some(s),
                        RaiseOption::Hint => hint = Some(s),
                        RaiseOption::Errcode => {
                            code = crate::planner::routines::compile::runtime_code(&s).map_err(ctx)?
                        }
                    }
                }
                match level {
                    Level::Exception => return Err(ctx(Error::Raised { code, message: text, detail, hint })),
                    Level::Notice => self.cx.notice(text),
                    Level::Quiet => {}
                }
            }
            OpKind::RowCount(slot) => self.set(f, *slot, Value::BigInt(f.row_count as i64)).map_err(ctx)?,
            OpKind::Null => {}
            OpKind::Reraise => {
                let caught = f.caught.last().cloned();
                return Err(
                    caught.unwrap_or_else(|| Error::other("XX000", "RAISE without an error to raise"))
                );
            }
        }
        Ok(Flow::Normal)
    }

    /// A query's rows into a FOR loop's targets, the body run for each.
    fn each_row(
        &self,
        rows: Vec<Vec<Value>>,
        label: &Option<String>,
        targets: &[usize],
        body: &[Op],
        f: &mut Frame,
        op: &Op,
    ) -> Result<Flow> {
        f.vals[self.p.found] = Value::Boolean(!rows.is_empty());
        for row in rows {
            self.assign_row(f, targets, Some(&row)).map_err(|e| self.context(op, e))?;
            if let Some(flow) = self.iteration(label, body, f, op)? {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    /// A statement's first row into INTO's targets. STRICT wants exactly
    /// one row; without it more than one fails unless `many` allows it.
    fn into(
        &self,
        f: &mut Frame,
        targets: &[usize],
        strict: bool,
        many: bool,
        rows: &[Vec<Value>],
    ) -> Result<()> {
        if rows.is_empty() && strict {
            return Err(Error::other("P0002", "query returned no rows"));
        }
        if rows.len() > 1 && (strict || !many) {
            return Err(Error::other("P0003", "query returned more than one row"));
        }
        f.vals[self.p.found] = Value::Boolean(!rows.is_empty());
        self.assign_row(f, targets, rows.first().map(|r| r.as_slice()))
    }

    /// RETURN QUERY: the rows join the result, as its column types.
    fn return_rows(&self, f: &mut Frame, rows: Vec<Vec<Value>>, count: u64) -> Result<()> {
        f.row_count = count;
        f.vals[self.p.found] = Value::Boolean(!rows.is_empty());
        let cols = self.c.set_columns().unwrap_or_default();
        for row in rows {
            if row.len() != cols.len() {
                return Err(Error::mismatch("structure of query does not match function result type"));
            }
            let row = row
                .into_iter()
                .zip(&cols)
                .map(|(v, (_, t))| if v.fits(t) { Ok(v) } else { v.coerce_to(t) })
                .collect::<std::result::Result<Vec<_>, _>>()?;
            f.rows.push(row);
        }
        Ok(())
    }

    /// Runs an EXECUTE: its command evaluated, parsed and planned now with
    /// the USING values as `$1`, `$2`, ..., its privileges checked for the
    /// role the routine's statements run as. Returns the rows, the row
    /// count, and whether the command was a query (whose INTO may take the
    /// first of several rows).
    fn dynamic(&self, d: &CDynamic, f: &mut Frame) -> Result<(Vec<Vec<Value>>, u64, bool)> {
        let text = match self.eval(&d.command, f)? {
            Value::Null => return Err(Error::other("22004", "query string argument of EXECUTE is null")),
            Value::Text(t) => t,
            other => other.to_string(),
        };
        let mut values = Vec::with_capacity(d.using.len());
        for (e, t) in d.using.iter().zip(&d.types) {
            let v = self.eval(e, f)?;
            values.push(if v.fits(t) { v } else { v.coerce_to(t)? });
        }
        let s = crate::planner::routines::compile::one_statement(&text, "EXECUTE")?;
        let catalog = self.cx.catalog;
        let declared = d.types.iter().cloned().map(Some).collect();
        let planned =
            crate::planner::plan_statement_with(catalog, &["public".to_string()], &s, declared, &[])?;
        if planned.params.len() > values.len() {
            return Err(Error::other("42P02", format!("there is no parameter ${}", values.len() + 1)));
        }
        let role = if self.c.security_definer {
            catalog.owner(crate::privileges::ObjectKind::Routine, &self.c.name)
        } else {
            self.cx.identity.user.to_string()
        };
        crate::privileges::check_needs(catalog, &planned.needs, &role, catalog.bypasses(&role, true))?;
        let query = matches!(planned.statement, crate::planner::Statement::Query(_));
        let cx = self.cx.nested(&values);
        let (rows, count) = crate::execution::run_statement(&planned.statement, &cx)?;
        Ok((rows, count, query))
    }

    /// Runs the fetches a statement or expression needs.
    fn fetch(&self, pre: &[crate::planner::routines::compile::Fetch], f: &mut Frame) -> Result<()> {
        for x in pre {
            let i = self.eval(&x.index, f)?.coerce_to(&DataType::BigInt)?;
            let v = match (i, &f.arrays[x.arr]) {
                (Value::BigInt(i), Some(elems)) if i >= x.lower && ((i - x.lower) as usize) < elems.len() => {
                    elems[(i - x.lower) as usize][x.field.unwrap_or(0)].clone()
                }
                _ => Value::Null,
            };
            f.vals[x.slot] = v;
        }
        Ok(())
    }

    fn eval(&self, e: &CExpr, f: &mut Frame) -> Result<Value> {
        self.fetch(&e.pre, f)?;
        let cx = self.cx.nested(&f.vals);
        crate::execution::eval::eval(&e.expr, &[], &[], &cx)
    }

    fn test(&self, e: &CExpr, f: &mut Frame) -> Result<bool> {
        match self.eval(e, f)? {
            Value::Boolean(b) => Ok(b),
            Value::Null => Ok(false),
            other => Err(Error::mismatch(format!("a condition must be boolean, not {other}"))),
        }
    }

    fn run(&self, s: &CStmt, f: &mut Frame) -> Result<(Vec<Vec<Value>>, u64)> {
        self.fetch(&s.pre, f)?;
        let cx = self.cx.nested(&f.vals);
        if !f.transition.is_empty() {
            cx.work_tables.borrow_mut().extend(f.transition.iter().cloned());
        }
        crate::execution::run_statement(&s.planned.statement, &cx)
    }
}
