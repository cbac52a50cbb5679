//! Running INSERT, UPDATE and DELETE, with constraints and foreign-key
//! actions.
//!
//! Foreign keys are checked by looking the key up in the referenced
//! table's unique index inside the writing transaction. Under
//! SERIALIZABLE the look-up joins the read set, so a concurrent delete of
//! the referenced row makes one of the two fail; under SNAPSHOT and READ
//! COMMITTED the two can both commit (no row locks exist to prevent it).

use super::eval::{eval, test};
use super::query::{access_rows, open};
use super::triggers::Firing;
use super::ExecCtx;
use crate::catalog::{RefAction, TableInfo};
use crate::error::{Error, Result};
use crate::planner::dml::{index_leading, Delete, Insert, Merge, MergeAction, OnConflict, RowRules, Update};
use crate::planner::expr::Expr;
use crate::planner::instead::ViewWrite;
use crate::triggers::{DELETE, INSERT, UPDATE};
use centum_engine::Row;
use centum_types::{DataType, Value};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::sync::Arc;

/// What a DML statement did.
pub(crate) struct DmlOutcome {
    /// Rows inserted, updated or deleted.
    pub count: u64,
    /// RETURNING rows.
    pub rows: Vec<Vec<Value>>,
}

/// Converts every value to its column's type.
fn coerce_row(rules: &RowRules, row: &mut [Value], cx: &ExecCtx) -> Result<()> {
    coerce_to_types(row, rules.info.table.columns().iter().map(|c| &c.ty), cx)
}

/// Converts each value of `row` to its type in `types`.
fn coerce_to_types<'a>(
    row: &mut [Value],
    types: impl Iterator<Item = &'a DataType>,
    cx: &ExecCtx,
) -> Result<()> {
    for (v, ty) in row.iter_mut().zip(types) {
        if !v.fits(ty) {
            *v = std::mem::replace(v, Value::Null).coerce_to(ty)?;
            // Padding a char(n) of ten million characters, or parsing a
            // long array, takes time in proportion to the value.
            cx.tick_bytes(super::row_bytes(std::slice::from_ref(v)))?;
        }
    }
    Ok(())
}

/// Runs the BEFORE ROW triggers of `fire` on `new` (as written over `old`
/// for UPDATE), its values first converted to the columns' types, as
/// NEW has them. `None`: a trigger skipped the row.
fn before_row(
    fire: &Option<Firing>,
    rules: &RowRules,
    old: Option<&[Value]>,
    mut new: Vec<Value>,
    cx: &ExecCtx,
) -> Result<Option<Vec<Value>>> {
    match fire {
        Some(f) if f.has_before_row() => {
            coerce_row(rules, &mut new, cx)?;
            let Some(mut row) = f.before(old, new, cx)? else { return Ok(None) };
            if row.len() != rules.info.table.columns().len() {
                return Err(Error::mismatch(
                    "returned row structure does not match the structure of the triggering table",
                ));
            }
            coerce_row(rules, &mut row, cx)?;
            Ok(Some(row))
        }
        _ => Ok(Some(new)),
    }
}

/// Runs the BEFORE ROW triggers of `fire` for a row about to be deleted;
/// false when one skips it.
fn before_delete(fire: &Option<Firing>, old: &[Value], cx: &ExecCtx) -> Result<bool> {
    match fire {
        Some(f) if f.has_before_row() => f.before_delete(old, cx),
        _ => Ok(true),
    }
}

/// The statement's firing, where its AFTER triggers need the rows written.
fn keeping<'a, 't>(fire: &'a mut Option<Firing<'t>>) -> Option<&'a mut Firing<'t>> {
    fire.as_mut().filter(|f| f.keeps_rows())
}

/// Converts every value to its column's type and completes generated
/// columns; then checks CHECK constraints and foreign keys.
fn finish_row(rules: &RowRules, row: &mut [Value], cx: &ExecCtx) -> Result<()> {
    let cols = rules.info.table.columns();
    coerce_row(rules, row, cx)?;
    for (c, e) in &rules.generated {
        row[*c] = eval(e, row, &[], cx)?.coerce_to(&cols[*c].ty)?;
    }
    for &c in &rules.info.meta.not_null {
        if row.get(c).is_some_and(Value::is_null) {
            return Err(centum_engine::Error::NotNullViolation {
                table: rules.info.table.name(),
                column: cols[c].name.clone(),
            }
            .into());
        }
    }
    for (name, e) in &rules.checks {
        if let Value::Boolean(false) = eval(e, row, &[], cx)? {
            return Err(Error::CheckViolation { table: rules.info.table.name(), constraint: name.clone() });
        }
    }
    for fk in &rules.fks {
        let key: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
        if key.iter().any(Value::is_null) {
            continue;
        }
        if cx.txn.get(&fk.ref_table, &fk.ref_index, &key)?.is_none() {
            let names: Vec<&str> = fk.columns.iter().map(|&c| cols[c].name.as_str()).collect();
            let vals: Vec<String> = key.iter().map(|v| v.to_string()).collect();
            return Err(Error::ForeignKeyViolation {
                message: format!(
                    "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
                    rules.info.table.name(),
                    fk.name
                ),
                detail: Some(format!(
                    "Key ({})=({}) is not present in table \"{}\".",
                    names.join(", "),
                    vals.join(", "),
                    fk.ref_table.name()
                )),
                table: rules.info.table.name(),
                constraint: fk.name.clone(),
            });
        }
    }
    Ok(())
}

fn returning(
    exprs: &Option<Vec<Expr>>,
    row: &[Value],
    out: &mut Vec<Vec<Value>>,
    cx: &ExecCtx,
) -> Result<()> {
    if let Some(list) = exprs {
        // Held until the statement ends: charged like any buffered result.
        let r = list.iter().map(|e| eval(e, row, &[], cx)).collect::<Result<_>>()?;
        cx.budget.keep(out, r)?;
    }
    Ok(())
}

/// Runs an INSERT.
pub(crate) fn insert(ins: &Insert, cx: &ExecCtx) -> Result<DmlOutcome> {
    let table = &ins.rules.info.table;
    let ncols = table.columns().len();
    let mut out = DmlOutcome { count: 0, rows: vec![] };
    // A source that cannot see the table's rows streams into it; one that
    // could (INSERT INTO t SELECT ... FROM t) is read whole first, so it
    // never meets the rows this statement adds.
    let source: Box<dyn Iterator<Item = Result<Vec<Value>>>> = match cx.bulk {
        Some(b) => Box::new(std::mem::take(&mut *b.rows.borrow_mut()).into_iter().map(Ok)),
        None => {
            let source = open(&ins.source, cx, vec![])?;
            if ins.source.may_read(table) {
                Box::new(gather(source, cx)?.into_iter().map(Ok))
            } else {
                source
            }
        }
    };
    // Every column given in order: the source row is the table row.
    let in_order = ins.targets.len() == ncols && ins.targets.iter().enumerate().all(|(j, &c)| j == c);
    let defaulted: Vec<usize> =
        (0..ncols).filter(|c| !ins.targets.contains(c) && ins.defaults[*c].is_some()).collect();
    let triggers = ins.rules.triggers.as_deref();
    let mut fire = Firing::start(triggers, INSERT, vec![], cx)?;
    // ON CONFLICT DO UPDATE fires the UPDATE triggers for the rows it
    // updates.
    let mut fire_update = match &ins.on_conflict {
        Some(OnConflict::Update { assignments, .. }) => {
            Firing::start(triggers, UPDATE, assigned(&ins.rules, assignments), cx)?
        }
        _ => None,
    };
    for (i, src) in source.enumerate() {
        let mut src = src?;
        if let Some(b) = cx.bulk {
            b.done.set(i);
        }
        cx.tick(1)?;
        let mut row = if in_order && src.len() == ncols {
            src
        } else {
            let mut row = vec![Value::Null; ncols];
            for (j, &c) in ins.targets.iter().enumerate() {
                if let Some(v) = src.get_mut(j) {
                    row[c] = std::mem::replace(v, Value::Null);
                }
            }
            row
        };
        for &c in &defaulted {
            if let Some(d) = &ins.defaults[c] {
                row[c] = eval(d, &[], &[], cx)?;
            }
        }
        let Some(mut row) = before_row(&fire, &ins.rules, None, row, cx)? else { continue };
        finish_row(&ins.rules, &mut row, cx)?;
        if let Some(oc) = &ins.on_conflict {
            if let Some(existing) = conflict(table, oc, &row, cx)? {
                if let OnConflict::Update { assignments, filter, .. } = oc {
                    let old = existing.values();
                    let mut both = old.clone();
                    both.extend(row.iter().cloned());
                    if let Some(f) = filter {
                        if !test(f, &both, &[], cx)? {
                            continue;
                        }
                    }
                    let mut new = old.clone();
                    for (c, e) in assignments {
                        new[*c] = eval(e, &both, &[], cx)?;
                    }
                    let Some(mut new) = before_row(&fire_update, &ins.rules, Some(&old), new, cx)? else {
                        continue;
                    };
                    finish_row(&ins.rules, &mut new, cx)?;
                    on_key_change(&ins.rules.info, &old, &new, cx)?;
                    if cx.txn.update(&existing, new.clone())? {
                        out.count += 1;
                        returning(&ins.returning, &new, &mut out.rows, cx)?;
                        if let Some(f) = keeping(&mut fire_update) {
                            f.after(Some(old), Some(new));
                        }
                    }
                }
                continue;
            }
        }
        // The row is kept after the insert only when RETURNING or a trigger
        // needs it.
        let keep = fire.as_ref().is_some_and(|f| f.keeps_rows());
        if ins.returning.is_some() || keep {
            cx.txn.insert_values(table, &mut row)?;
            returning(&ins.returning, &row, &mut out.rows, cx)?;
            if let Some(f) = keeping(&mut fire) {
                f.after(None, Some(row));
            }
        } else {
            cx.txn.insert(table, row)?;
        }
        out.count += 1;
    }
    if let Some(f) = fire_update {
        f.finish(cx)?;
    }
    if let Some(f) = fire {
        f.finish(cx)?;
    }
    Ok(out)
}

/// The names of the columns an UPDATE's SET list assigns.
fn assigned(rules: &RowRules, assignments: &[(usize, Expr)]) -> Vec<String> {
    let cols = rules.info.table.columns();
    assignments.iter().map(|(c, _)| cols[*c].name.clone()).collect()
}

/// Reads `rows` whole, charging the statement's budget and stopping at its
/// deadline on the way.
pub(crate) fn gather<T: Buffered>(rows: impl Iterator<Item = Result<T>>, cx: &ExecCtx) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for r in rows {
        let r = r?;
        cx.budget.hold(r.values())?;
        out.push(r);
        if out.len() % 1024 == 0 {
            cx.tick(1)?;
        }
    }
    Ok(out)
}

/// A buffered row: its values, for the budget.
pub(crate) trait Buffered {
    fn values(&self) -> &[Value];
}

impl Buffered for Vec<Value> {
    fn values(&self) -> &[Value] {
        self
    }
}

impl Buffered for (Row<'_>, Vec<Value>) {
    fn values(&self) -> &[Value] {
        &self.1
    }
}

/// The existing row that `row` conflicts with under ON CONFLICT.
fn conflict<'a>(
    table: &'a Arc<centum_engine::Table>,
    oc: &OnConflict,
    row: &[Value],
    cx: &'a ExecCtx,
) -> Result<Option<Row<'a>>> {
    let arbiters: Vec<String> = match oc {
        OnConflict::Nothing(Some(ix)) | OnConflict::Update { index: ix, .. } => vec![ix.clone()],
        OnConflict::Nothing(None) => {
            table.def().indexes.into_iter().filter(|i| i.unique).map(|i| i.name).collect()
        }
    };
    for name in arbiters {
        let ix = table.index(&name)?;
        let key: Vec<Value> = ix.key_columns().iter().map(|&c| row[c].clone()).collect();
        if key.iter().any(Value::is_null) {
            continue;
        }
        if let Some(r) = cx.txn.get(table, &name, &key)? {
            return Ok(Some(r));
        }
    }
    Ok(None)
}

/// The first row of `j` (UPDATE ... FROM, DELETE ... USING) for target
/// row `cur`, or `None` if it joins none.
fn first_joined(j: &crate::planner::dml::Joined, cur: &[Value], cx: &ExecCtx) -> Result<Option<Vec<Value>>> {
    super::query::open(&j.plan, cx, cur.to_vec())?.next().transpose()
}

/// Runs an UPDATE.
pub(crate) fn update(up: &Update, cx: &ExecCtx) -> Result<DmlOutcome> {
    super::run_writes(&up.writes, cx)?;
    let mut out = DmlOutcome { count: 0, rows: vec![] };
    let mut fire =
        Firing::start(up.rules.triggers.as_deref(), UPDATE, assigned(&up.rules, &up.assignments), cx)?;
    let failure: RefCell<Option<Error>> = RefCell::new(None);
    let targets: Vec<(Row, Vec<Value>)> = gather(access_rows(&up.access, cx, &[])?, cx)?;
    for (row, old) in targets {
        cx.tick(1)?;
        let joined: RefCell<Vec<Value>> = RefCell::new(Vec::new());
        let compute = |cur: &[Value]| -> Result<Option<Vec<Value>>> {
            if cur != old.as_slice() {
                // Changed by a transaction that committed meanwhile (READ
                // COMMITTED): the row must still qualify.
                if let Some(f) = &up.recheck {
                    if !test(f, cur, &[], cx)? {
                        return Ok(None);
                    }
                }
            }
            let mut new = cur.to_vec();
            match &up.from {
                None => {
                    for (c, e) in &up.assignments {
                        new[*c] = eval(e, cur, &[], cx)?;
                    }
                }
                // The assignments read the target's row and the joined one.
                Some(j) => {
                    let Some(other) = first_joined(j, cur, cx)? else { return Ok(None) };
                    let mut both = cur.to_vec();
                    both.extend(other);
                    for (c, e) in &up.assignments {
                        new[*c] = eval(e, &both, &[], cx)?;
                    }
                    *joined.borrow_mut() = both.split_off(cur.len());
                }
            }
            let Some(mut new) = before_row(&fire, &up.rules, Some(cur), new, cx)? else { return Ok(None) };
            finish_row(&up.rules, &mut new, cx)?;
            Ok(Some(new))
        };
        // The old and new row, kept only when something needs them after.
        let keep = up.returning.is_some()
            || !up.rules.info.referenced_by.is_empty()
            || fire.as_ref().is_some_and(|f| f.keeps_rows());
        let written: RefCell<Option<(Vec<Value>, Vec<Value>)>> = RefCell::new(None);
        let changed = cx.txn.update_with_current(&row, &old, |cur| match compute(cur) {
            Ok(Some(new)) => {
                if keep {
                    *written.borrow_mut() = Some((cur.to_vec(), new.clone()));
                }
                Some(new)
            }
            Ok(None) => None,
            Err(e) => {
                *failure.borrow_mut() = Some(e);
                None
            }
        })?;
        if let Some(e) = failure.borrow_mut().take() {
            return Err(e);
        }
        if changed {
            out.count += 1;
            if let Some((before, mut after)) = written.into_inner() {
                on_key_change(&up.rules.info, &before, &after, cx)?;
                if let Some(f) = keeping(&mut fire) {
                    f.after(Some(before), Some(after.clone()));
                }
                if up.returning.is_some() && up.from.is_some() {
                    after.extend(joined.into_inner());
                }
                returning(&up.returning, &after, &mut out.rows, cx)?;
            }
        }
    }
    if let Some(f) = fire {
        f.finish(cx)?;
    }
    Ok(out)
}

/// Runs a DELETE.
pub(crate) fn delete(del: &Delete, cx: &ExecCtx) -> Result<DmlOutcome> {
    super::run_writes(&del.writes, cx)?;
    let mut out = DmlOutcome { count: 0, rows: vec![] };
    let mut fire = Firing::start(del.triggers.as_deref(), DELETE, vec![], cx)?;
    let targets: Vec<(Row, Vec<Value>)> = gather(access_rows(&del.access, cx, &[])?, cx)?;
    for (row, vals) in targets {
        cx.tick(1)?;
        if !before_delete(&fire, &vals, cx)? {
            continue;
        }
        // Under READ COMMITTED a row changed meanwhile is deleted only if
        // its newest version still qualifies, and that version is the one
        // RETURNING and foreign-key actions see.
        let mut newest: Option<Vec<Value>> = None;
        // DELETE ... USING deletes a row only if it joins (checked again
        // below on a newer version).
        let mut joined: Option<Vec<Value>> = None;
        if let Some(j) = &del.using {
            joined = first_joined(j, &vals, cx)?;
            if joined.is_none() {
                continue;
            }
        }
        let mut failure = None;
        let deleted = cx.txn.delete_with(&row, |cur| {
            let qualifies = del.recheck.as_ref().map_or(Ok(true), |f| test(f, cur, &[], cx)).and_then(|ok| {
                match (&del.using, ok) {
                    (Some(j), true) => first_joined(j, cur, cx).map(|other| {
                        let found = other.is_some();
                        joined = other;
                        found
                    }),
                    (_, ok) => Ok(ok),
                }
            });
            match qualifies {
                Ok(true) => {
                    newest = Some(cur.to_vec());
                    true
                }
                Ok(false) => false,
                Err(e) => {
                    failure = Some(e);
                    false
                }
            }
        })?;
        if let Some(e) = failure {
            return Err(e);
        }
        if deleted {
            let mut vals = newest.unwrap_or(vals);
            on_parent_delete(&del.info, &vals, cx)?;
            if let Some(f) = keeping(&mut fire) {
                f.after(Some(vals.clone()), None);
            }
            out.count += 1;
            if let Some(other) = joined.filter(|_| del.returning.is_some()) {
                vals.extend(other);
            }
            returning(&del.returning, &vals, &mut out.rows, cx)?;
        }
    }
    if let Some(f) = fire {
        f.finish(cx)?;
    }
    Ok(out)
}

/// The referencing rows of `child` whose `columns` equal `key`.
fn referencing<'a>(
    child: &'a TableInfo,
    columns: &[usize],
    key: &[Value],
    cx: &'a ExecCtx,
) -> Result<Vec<(Row<'a>, Vec<Value>)>> {
    let names: Vec<String> = columns.iter().map(|&c| child.table.columns()[c].name.clone()).collect();
    let matches =
        |vals: &[Value]| columns.iter().zip(key).all(|(&c, k)| vals[c].sql_cmp(k) == Some(Ordering::Equal));
    let rows: Vec<Row<'a>> = match index_leading(&child.table, &names) {
        Some(ix) => cx.txn.lookup(&child.table, &ix, key)?,
        None => cx.txn.scan(&child.table)?.collect(),
    };
    Ok(rows.into_iter().map(|r| (r, r.values())).filter(|(_, v)| matches(v)).collect())
}

/// Applies ON DELETE actions of the foreign keys that reference a deleted
/// row of `parent`.
fn on_parent_delete(parent: &TableInfo, vals: &[Value], cx: &ExecCtx) -> Result<()> {
    referencing_actions(parent, vals, None, cx)
}

/// After an update of a row of `parent`: applies ON UPDATE actions when a
/// referenced key changed.
fn on_key_change(parent: &TableInfo, before: &[Value], after: &[Value], cx: &ExecCtx) -> Result<()> {
    referencing_actions(parent, before, Some(after), cx)
}

/// The foreign-key actions for the rows that reference `before`, a row of
/// `parent` that was deleted (`after` is `None`) or updated to `after`.
fn referencing_actions(
    parent: &TableInfo,
    before: &[Value],
    after: Option<&[Value]>,
    cx: &ExecCtx,
) -> Result<()> {
    for (child_name, fk) in &parent.referenced_by {
        let idx: Vec<usize> = fk
            .ref_columns
            .iter()
            .map(|n| parent.table.column_index(n))
            .collect::<std::result::Result<_, _>>()?;
        let old: Vec<Value> = idx.iter().map(|&i| before[i].clone()).collect();
        let new: Option<Vec<Value>> = after.map(|a| idx.iter().map(|&i| a[i].clone()).collect());
        if old.iter().any(Value::is_null) || new.as_ref() == Some(&old) {
            continue;
        }
        let child = cx.catalog.table(child_name)?;
        let rows = referencing(&child, &fk.columns, &old, cx)?;
        if rows.is_empty() {
            continue;
        }
        let action = if new.is_some() { fk.on_update } else { fk.on_delete };
        match (action, &new) {
            (RefAction::Restrict, _) => return Err(restrict_error(parent, child_name, &fk.name, fk, &old)),
            (RefAction::Cascade, None) => write_referencing(&child, fk, rows, None, cx)?,
            (RefAction::Cascade, Some(new)) => {
                let set = |v: &mut Vec<Value>| -> Result<()> {
                    for (&c, n) in fk.columns.iter().zip(new) {
                        v[c] = n.clone();
                    }
                    Ok(())
                };
                write_referencing(&child, fk, rows, Some(&set), cx)?
            }
            (a, _) => {
                let set = |v: &mut Vec<Value>| -> Result<()> {
                    for &c in &fk.columns {
                        v[c] = match (a, child.meta.columns.get(c).and_then(|m| m.default.as_ref())) {
                            (RefAction::SetDefault, Some(text)) => {
                                let e = crate::planner::dml::parse_expr(text)?;
                                default_value(&e, cx)?
                            }
                            _ => Value::Null,
                        };
                    }
                    Ok(())
                };
                write_referencing(&child, fk, rows, Some(&set), cx)?
            }
        }
    }
    Ok(())
}

/// How a foreign key's action changes a referencing row.
type RowChange<'a> = &'a dyn Fn(&mut Vec<Value>) -> Result<()>;

/// A foreign key's action on the referencing `rows` of `child`: deletes
/// them (`change` is `None`) or updates each to what `change` makes of it.
/// The child's triggers fire as for a statement of its own, as in
/// PostgreSQL (an UPDATE's assigns the key's columns).
fn write_referencing(
    child: &TableInfo,
    fk: &crate::catalog::ForeignKey,
    rows: Vec<(Row, Vec<Value>)>,
    change: Option<RowChange>,
    cx: &ExecCtx,
) -> Result<()> {
    let triggers = crate::planner::triggers::compile(cx.catalog, child)?;
    let Some(change) = change else {
        let mut fire = Firing::start(triggers.as_deref(), DELETE, vec![], cx)?;
        for (r, v) in rows {
            if !before_delete(&fire, &v, cx)? {
                continue;
            }
            if cx.txn.delete(&r)? {
                on_parent_delete(child, &v, cx)?;
                if let Some(f) = keeping(&mut fire) {
                    f.after(Some(v), None);
                }
            }
        }
        return fire.map_or(Ok(()), |f| f.finish(cx));
    };
    let cols = child.table.columns();
    let assigned = fk.columns.iter().map(|&c| cols[c].name.clone()).collect();
    let mut fire = Firing::start(triggers.as_deref(), UPDATE, assigned, cx)?;
    for (r, old) in rows {
        let mut new = old.clone();
        change(&mut new)?;
        let new = match fire.as_ref().filter(|f| f.has_before_row()) {
            Some(f) => match f.before(Some(&old), new, cx)? {
                Some(row) => row,
                None => continue,
            },
            None => new,
        };
        let kept = keeping(&mut fire).map(|_| new.clone());
        if cx.txn.update(&r, new)? {
            if let Some(f) = keeping(&mut fire) {
                f.after(Some(old), kept);
            }
        }
    }
    fire.map_or(Ok(()), |f| f.finish(cx))
}

fn default_value(e: &sqlparser::ast::Expr, cx: &ExecCtx) -> Result<Value> {
    let path = vec!["public".to_string()];
    let mut b = crate::planner::Binder::new(cx.catalog, &path, vec![]);
    let scope = Default::default();
    let (x, _) = b.expr(e, &crate::planner::bind_ctx(&scope))?;
    eval(&x, &[], &[], cx)
}

fn restrict_error(
    parent: &TableInfo,
    child: &str,
    name: &str,
    fk: &crate::catalog::ForeignKey,
    key: &[Value],
) -> Error {
    let vals: Vec<String> = key.iter().map(|v| v.to_string()).collect();
    Error::ForeignKeyViolation {
        message: format!(
            "update or delete on table \"{}\" violates foreign key constraint \"{name}\" on table \"{child}\"",
            parent.table.name()
        ),
        detail: Some(format!(
            "Key ({})=({}) is still referenced from table \"{child}\".",
            fk.ref_columns.join(", "),
            vals.join(", ")
        )),
        table: child.to_string(),
        constraint: name.to_string(),
    }
}

/// Runs a MERGE: for each source row, the target rows it matches get the
/// first WHEN MATCHED clause that applies; a source row matching none gets
/// the first WHEN NOT MATCHED clause that applies.
pub(crate) fn merge(m: &Merge, cx: &ExecCtx) -> Result<DmlOutcome> {
    let table = &m.rules.info.table;
    let ncols = table.columns().len();
    let mut out = DmlOutcome { count: 0, rows: vec![] };
    // The triggers of each action the clauses can take, as PostgreSQL
    // fires them: statement triggers for every such action, row triggers
    // for the rows each action writes.
    let triggers = m.rules.triggers.as_deref();
    let takes = |f: fn(&MergeAction) -> bool| m.clauses.iter().any(|c| f(&c.action));
    let mut fire_insert = match takes(|a| matches!(a, MergeAction::Insert(_))) {
        true => Firing::start(triggers, INSERT, vec![], cx)?,
        false => None,
    };
    let set: Vec<(usize, Expr)> = m
        .clauses
        .iter()
        .filter_map(|c| match &c.action {
            MergeAction::Update(a) => Some(a.iter().cloned()),
            _ => None,
        })
        .flatten()
        .collect();
    let mut fire_update = match takes(|a| matches!(a, MergeAction::Update(_))) {
        true => Firing::start(triggers, UPDATE, assigned(&m.rules, &set), cx)?,
        false => None,
    };
    let mut fire_delete = match takes(|a| matches!(a, MergeAction::Delete)) {
        true => Firing::start(triggers, DELETE, vec![], cx)?,
        false => None,
    };
    let source = gather(open(&m.source, cx, vec![])?, cx)?;
    for src in source {
        cx.tick(1)?;
        let targets: Vec<(Row, Vec<Value>)> = access_rows(&m.target, cx, &src)?.collect::<Result<_>>()?;
        if targets.is_empty() {
            let mut both = vec![Value::Null; ncols];
            both.extend(src.iter().cloned());
            for c in m.clauses.iter().filter(|c| !c.matched) {
                if let Some(p) = &c.predicate {
                    if !test(p, &both, &[], cx)? {
                        continue;
                    }
                }
                if let MergeAction::Insert(values) = &c.action {
                    let mut row = vec![Value::Null; ncols];
                    let mut given = vec![false; ncols];
                    for (col, e) in values {
                        row[*col] = eval(e, &both, &[], cx)?;
                        given[*col] = true;
                    }
                    for (col, d) in m.defaults.iter().enumerate() {
                        if let (false, Some(d)) = (given[col], d) {
                            row[col] = eval(d, &[], &[], cx)?;
                        }
                    }
                    let Some(mut row) = before_row(&fire_insert, &m.rules, None, row, cx)? else { break };
                    finish_row(&m.rules, &mut row, cx)?;
                    cx.txn.insert_values(table, &mut row)?;
                    if let Some(f) = keeping(&mut fire_insert) {
                        f.after(None, Some(row));
                    }
                    out.count += 1;
                }
                break;
            }
            continue;
        }
        for (row, old) in targets {
            let mut both = old.clone();
            both.extend(src.iter().cloned());
            for c in m.clauses.iter().filter(|c| c.matched) {
                if let Some(p) = &c.predicate {
                    if !test(p, &both, &[], cx)? {
                        continue;
                    }
                }
                match &c.action {
                    MergeAction::Update(assignments) => {
                        let mut new = old.clone();
                        for (col, e) in assignments {
                            new[*col] = eval(e, &both, &[], cx)?;
                        }
                        let Some(mut new) = before_row(&fire_update, &m.rules, Some(&old), new, cx)? else {
                            break;
                        };
                        finish_row(&m.rules, &mut new, cx)?;
                        on_key_change(&m.rules.info, &old, &new, cx)?;
                        if cx.txn.update_with_current(&row, &old, |_| Some(new.clone()))? {
                            out.count += 1;
                            if let Some(f) = keeping(&mut fire_update) {
                                f.after(Some(old.clone()), Some(new));
                            }
                        }
                    }
                    MergeAction::Delete => {
                        if !before_delete(&fire_delete, &old, cx)? {
                            break;
                        }
                        if cx.txn.delete(&row)? {
                            on_parent_delete(&m.rules.info, &old, cx)?;
                            out.count += 1;
                            if let Some(f) = keeping(&mut fire_delete) {
                                f.after(Some(old.clone()), None);
                            }
                        }
                    }
                    MergeAction::Insert(_) | MergeAction::Nothing => {}
                }
                break;
            }
        }
    }
    for f in [fire_insert, fire_update, fire_delete].into_iter().flatten() {
        f.finish(cx)?;
    }
    Ok(out)
}

/// Runs an INSERT, UPDATE or DELETE on a view through its INSTEAD OF
/// triggers (see `planner::instead`). The rows it acts on (and the rows
/// they join) are read whole first: the triggers write to the tables the
/// view reads, and the statement acts on the rows as they were when it
/// began.
pub(crate) fn view_write(w: &ViewWrite, cx: &ExecCtx) -> Result<DmlOutcome> {
    let mut out = DmlOutcome { count: 0, rows: vec![] };
    let source = match cx.bulk {
        // COPY's rows, in place of the statement's one row of parameters.
        Some(b) => std::mem::take(&mut *b.rows.borrow_mut()),
        None => gather(open(&w.source, cx, vec![])?, cx)?,
    };
    let mut rows = Vec::new();
    for src in source {
        // The other tables' row it joins, if the statement joins any.
        match &w.joined {
            None => rows.push((src, Vec::new())),
            Some(j) => {
                if let Some(other) = first_joined(j, &src, cx)? {
                    cx.budget.hold(&other)?;
                    rows.push((src, other));
                }
            }
        }
    }
    let Some(fire) = Firing::start(Some(&w.triggers), w.event, w.assigned.clone(), cx)? else {
        return Ok(out);
    };
    let width = w.types.len();
    for (i, (mut src, other)) in rows.into_iter().enumerate() {
        if let Some(b) = cx.bulk {
            b.done.set(i);
        }
        cx.tick(1)?;
        let written = match w.event {
            INSERT | UPDATE => {
                let (old, mut new) = if w.event == INSERT {
                    let mut new = vec![Value::Null; width];
                    for (j, &c) in w.targets.iter().enumerate() {
                        if let Some(v) = src.get_mut(j) {
                            new[c] = std::mem::replace(v, Value::Null);
                        }
                    }
                    (None, new)
                } else {
                    // The SET list reads the old row, and the joined one after
                    // it if there is one.
                    let joined_row;
                    let read: &[Value] = if other.is_empty() {
                        &src
                    } else {
                        joined_row = [src.as_slice(), other.as_slice()].concat();
                        &joined_row
                    };
                    let mut new = src.clone();
                    for (c, e) in &w.assignments {
                        new[*c] = eval(e, read, &[], cx)?;
                    }
                    (Some(src), new)
                };
                coerce_to_types(&mut new, w.types.iter(), cx)?;
                match fire.instead(old.as_deref(), new, cx)? {
                    Some(mut row) => {
                        if row.len() != width {
                            return Err(Error::mismatch(
                                "returned row structure does not match the structure of the triggering table",
                            ));
                        }
                        coerce_to_types(&mut row, w.types.iter(), cx)?;
                        Some(row)
                    }
                    None => None,
                }
            }
            // RETURNING of a DELETE reads the view's row, whatever the
            // triggers returned.
            _ => fire.instead_delete(&src, cx)?.then_some(src),
        };
        if let Some(mut row) = written {
            out.count += 1;
            if w.returning.is_some() {
                row.extend(other);
                returning(&w.returning, &row, &mut out.rows, cx)?;
            }
        }
    }
    fire.finish(cx)?;
    Ok(out)
}
