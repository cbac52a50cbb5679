//! Firing triggers around the rows and statements of INSERT, UPDATE,
//! DELETE and TRUNCATE.
//!
//! A statement on a table with triggers opens a [`Firing`]: it runs the
//! BEFORE STATEMENT triggers at once, the BEFORE ROW triggers as each row
//! is about to be written (each sees the NEW the one before returned; NULL
//! skips the row), and queues what the AFTER ROW triggers need. When the
//! statement's rows are all written, [`Firing::finish`] runs the AFTER ROW
//! triggers in the order the rows were written, then the AFTER STATEMENT
//! triggers, with the transition tables the statement's rows make. Every
//! call runs in the statement's transaction, so whatever a trigger writes
//! commits or rolls back with it. Triggers of one kind fire in name order,
//! as in PostgreSQL.
//!
//! A write to a view through its INSTEAD OF triggers opens a firing too:
//! its statement triggers fire around it, and [`Firing::instead`] and
//! [`Firing::instead_delete`] run the INSTEAD OF triggers for each row in
//! place of writing it.

use super::routine::{call_trigger, Fired, TriggerCall};
use super::ExecCtx;
use crate::error::Result;
use crate::planner::triggers::{TableTriggers, Trigger};
use crate::triggers::{schema_and_name, Timing, DELETE, INSERT, TRUNCATE, UPDATE};
use centum_types::Value;
use std::borrow::Cow;
use std::rc::Rc;

/// TG_OP for an event bit.
fn op_name(event: u8) -> &'static str {
    match event {
        INSERT => "INSERT",
        UPDATE => "UPDATE",
        DELETE => "DELETE",
        TRUNCATE => "TRUNCATE",
        _ => unreachable!("one event bit"),
    }
}

/// A row written: (OLD, NEW).
type Written = (Option<Vec<Value>>, Option<Vec<Value>>);

/// A statement's rows as transition tables: (old, new).
type Transition<'a> = (&'a Rc<Vec<Vec<Value>>>, &'a Rc<Vec<Vec<Value>>>);

/// The triggers of one statement on one table, for one event.
pub(crate) struct Firing<'t> {
    triggers: &'t TableTriggers,
    /// TG_TABLE_SCHEMA and TG_TABLE_NAME.
    schema: &'t str,
    name: &'t str,
    event: u8,
    /// UPDATE: the columns its SET list assigns (for UPDATE OF).
    assigned: Vec<String>,
    before_row: bool,
    after_row: bool,
    /// Whether any trigger reads the statement's rows as transition
    /// tables.
    transition: bool,
    /// The rows written, as (OLD, NEW), for the AFTER triggers.
    written: Vec<Written>,
}

impl<'t> Firing<'t> {
    /// Opens the firing of `event` on a table with `triggers` (nothing to
    /// do when `None`), running its BEFORE STATEMENT triggers.
    pub fn start(
        triggers: Option<&'t TableTriggers>,
        event: u8,
        assigned: Vec<String>,
        cx: &ExecCtx,
    ) -> Result<Option<Firing<'t>>> {
        let Some(triggers) = triggers else { return Ok(None) };
        let (schema, name) = schema_and_name(&triggers.table);
        let f = Firing {
            triggers,
            schema,
            name,
            event,
            before_row: triggers.any(Timing::Before, true, event),
            after_row: triggers.any(Timing::After, true, event),
            transition: triggers
                .list
                .iter()
                .any(|t| t.def.fires_on(event) && (t.def.old_table.is_some() || t.def.new_table.is_some())),
            assigned,
            written: Vec::new(),
        };
        for t in triggers.matching(Timing::Before, false, event) {
            if f.applies(t) {
                f.call(t, false, None, None, None, cx)?;
            }
        }
        Ok(Some(f))
    }

    /// Whether the statement's rows must be kept for the AFTER triggers.
    pub fn keeps_rows(&self) -> bool {
        self.after_row || self.transition
    }

    /// Whether BEFORE ROW triggers fire.
    pub fn has_before_row(&self) -> bool {
        self.before_row
    }

    /// UPDATE OF: whether `t` fires for this statement's SET list.
    fn applies(&self, t: &Trigger) -> bool {
        self.event != UPDATE
            || t.def.columns.is_empty()
            || t.def.columns.iter().any(|c| self.assigned.contains(c))
    }

    fn call(
        &self,
        t: &Trigger,
        row: bool,
        old: Option<Cow<[Value]>>,
        new: Option<Cow<[Value]>>,
        tables: Option<Transition>,
        cx: &ExecCtx,
    ) -> Result<Fired> {
        call_trigger(
            &t.program,
            TriggerCall {
                name: &t.def.name,
                when: t.def.timing.sql(),
                level: if row { "ROW" } else { "STATEMENT" },
                op: op_name(self.event),
                table: (self.name, self.schema),
                args: &t.def.args,
                new,
                old,
                old_table: tables.map(|(o, _)| o.clone()),
                new_table: tables.map(|(_, n)| n.clone()),
            },
            cx,
        )
    }

    /// Runs the BEFORE ROW triggers of an INSERT or UPDATE for row `new`
    /// about to be written (over `old` for UPDATE). Returns the row to
    /// write, or `None` when a trigger returned NULL and the row is
    /// skipped.
    pub fn before(&self, old: Option<&[Value]>, new: Vec<Value>, cx: &ExecCtx) -> Result<Option<Vec<Value>>> {
        self.row_triggers(Timing::Before, old, new, cx)
    }

    /// Runs the INSTEAD OF ROW triggers of an INSERT or UPDATE on a view
    /// for row `new` (over `old` for UPDATE): the row the last one
    /// returned, or `None` when one returned NULL (the row is not
    /// counted).
    pub fn instead(
        &self,
        old: Option<&[Value]>,
        new: Vec<Value>,
        cx: &ExecCtx,
    ) -> Result<Option<Vec<Value>>> {
        self.row_triggers(Timing::InsteadOf, old, new, cx)
    }

    /// The row triggers at `timing` for `new`, each seeing the NEW the one
    /// before returned.
    fn row_triggers(
        &self,
        timing: Timing,
        old: Option<&[Value]>,
        new: Vec<Value>,
        cx: &ExecCtx,
    ) -> Result<Option<Vec<Value>>> {
        let mut new = new;
        for t in self.triggers.matching(timing, true, self.event) {
            if !self.applies(t) {
                continue;
            }
            match self.call(t, true, old.map(Cow::Borrowed), Some(Cow::Borrowed(&new)), None, cx)? {
                Fired::Skipped => {}
                Fired::Returned(None) => return Ok(None),
                Fired::Returned(Some(row)) => new = row,
            }
        }
        Ok(Some(new))
    }

    /// Runs the BEFORE ROW triggers of a DELETE for row `old`; false when
    /// one returned NULL and the row is kept.
    pub fn before_delete(&self, old: &[Value], cx: &ExecCtx) -> Result<bool> {
        self.delete_triggers(Timing::Before, old, cx)
    }

    /// Runs the INSTEAD OF ROW triggers of a DELETE on a view for row
    /// `old`; false when one returned NULL (the row is not counted).
    pub fn instead_delete(&self, old: &[Value], cx: &ExecCtx) -> Result<bool> {
        self.delete_triggers(Timing::InsteadOf, old, cx)
    }

    fn delete_triggers(&self, timing: Timing, old: &[Value], cx: &ExecCtx) -> Result<bool> {
        for t in self.triggers.matching(timing, true, self.event) {
            // Any row a trigger returns only says "go on".
            if let Fired::Returned(None) = self.call(t, true, Some(Cow::Borrowed(old)), None, None, cx)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Notes a row written, for the AFTER triggers; call it only where
    /// [`Firing::keeps_rows`] says they need the rows.
    pub fn after(&mut self, old: Option<Vec<Value>>, new: Option<Vec<Value>>) {
        debug_assert!(self.keeps_rows(), "rows kept that no trigger reads");
        self.written.push((old, new));
    }

    /// Runs the AFTER ROW triggers for the rows written, in order, then
    /// the AFTER STATEMENT triggers.
    pub fn finish(mut self, cx: &ExecCtx) -> Result<()> {
        // The transition tables take the rows themselves unless the AFTER
        // ROW triggers need them too.
        let tables = match (self.transition, self.after_row) {
            (false, _) => None,
            (true, true) => {
                let old: Vec<Vec<Value>> = self.written.iter().filter_map(|w| w.0.clone()).collect();
                let new: Vec<Vec<Value>> = self.written.iter().filter_map(|w| w.1.clone()).collect();
                Some((Rc::new(old), Rc::new(new)))
            }
            (true, false) => {
                let (old, new): (Vec<_>, Vec<_>) = std::mem::take(&mut self.written).into_iter().unzip();
                Some((
                    Rc::new(old.into_iter().flatten().collect()),
                    Rc::new(new.into_iter().flatten().collect()),
                ))
            }
        };
        let tables = tables.as_ref().map(|(o, n)| (o, n));
        if self.after_row {
            let fire: Vec<&Trigger> =
                self.triggers.matching(Timing::After, true, self.event).filter(|t| self.applies(t)).collect();
            for (old, new) in std::mem::take(&mut self.written) {
                cx.tick(1)?;
                // The last trigger gets the rows themselves; the others copies.
                if let Some((last, others)) = fire.split_last() {
                    for t in others {
                        let (o, n) = (old.as_deref().map(Cow::Borrowed), new.as_deref().map(Cow::Borrowed));
                        self.call(t, true, o, n, tables, cx)?;
                    }
                    self.call(last, true, old.map(Cow::Owned), new.map(Cow::Owned), tables, cx)?;
                }
            }
        }
        for t in self.triggers.matching(Timing::After, false, self.event) {
            if self.applies(t) {
                self.call(t, false, None, None, tables, cx)?;
            }
        }
        Ok(())
    }
}
