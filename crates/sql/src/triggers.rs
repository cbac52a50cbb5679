//! Triggers: what a CREATE TRIGGER declares, and the statements that make,
//! drop, enable and disable them.
//!
//! A trigger belongs to its table: its definition is kept in the table's
//! SQL facts (`TableMeta::triggers`) as canonical CREATE TRIGGER text, so
//! it is durable with the table, renamed with it and dropped with it. The
//! rest of a trigger's life is in the layers above:
//!
//! ```text
//!   CREATE TRIGGER ─▶ triggers: definition checked, kept with the table
//!                       ─▶ planner::triggers: the function's body compiled
//!                          against the table's row (NEW, OLD, TG_*, WHEN)
//!   INSERT/UPDATE/DELETE/TRUNCATE ─▶ execution::triggers: BEFORE and
//!                          AFTER, per row and per statement, in name order
//! ```
//!
//! Trigger functions are PL/pgSQL functions declared `RETURNS trigger`;
//! they take their arguments from the trigger (`TG_ARGV`), never from a
//! call.

use crate::catalog::TriggerMeta;
use crate::error::{Error, Result};
use crate::execution::DdlOutcome;
use crate::names::{ident, object_parts, quote_ident, quote_literal};
use crate::planner::Binder;
use crate::routines::{parse_create, resolve_header, Returns};
use sqlparser::ast;

/// The event bits of [`TriggerDef::events`].
pub(crate) const INSERT: u8 = 1;
pub(crate) const DELETE: u8 = 2;
pub(crate) const UPDATE: u8 = 4;
pub(crate) const TRUNCATE: u8 = 8;

/// When a trigger fires relative to its event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Timing {
    Before,
    After,
    InsteadOf,
}

impl Timing {
    /// As TG_WHEN and CREATE TRIGGER spell it.
    pub fn sql(self) -> &'static str {
        match self {
            Timing::Before => "BEFORE",
            Timing::After => "AFTER",
            Timing::InsteadOf => "INSTEAD OF",
        }
    }
}

/// A trigger's definition.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TriggerDef {
    pub name: String,
    pub timing: Timing,
    /// [`INSERT`], [`DELETE`], [`UPDATE`] and [`TRUNCATE`] bits.
    pub events: u8,
    /// `UPDATE OF` columns: it fires for an UPDATE only when one of them is
    /// a target of the SET list (empty: any UPDATE).
    pub columns: Vec<String>,
    /// FOR EACH ROW (else FOR EACH STATEMENT).
    pub row: bool,
    /// The WHEN condition's text, over NEW and OLD.
    pub when: Option<String>,
    /// The trigger function.
    pub function: String,
    /// Its arguments (`TG_ARGV`), as text.
    pub args: Vec<String>,
    /// `REFERENCING OLD TABLE AS name`.
    pub old_table: Option<String>,
    /// `REFERENCING NEW TABLE AS name`.
    pub new_table: Option<String>,
}

/// The events in the order PostgreSQL writes them.
const EVENTS: [(u8, &str); 4] =
    [(INSERT, "INSERT"), (DELETE, "DELETE"), (UPDATE, "UPDATE"), (TRUNCATE, "TRUNCATE")];

impl TriggerDef {
    /// The definition a CREATE TRIGGER statement gives, with the rules
    /// that need no catalog checked.
    pub fn from_ast(ct: &ast::CreateTrigger) -> Result<TriggerDef> {
        if ct.is_constraint {
            return Err(Error::unsupported("CREATE CONSTRAINT TRIGGER"));
        }
        let timing = match ct.period {
            Some(ast::TriggerPeriod::Before) => Timing::Before,
            Some(ast::TriggerPeriod::After) => Timing::After,
            Some(ast::TriggerPeriod::InsteadOf) => Timing::InsteadOf,
            _ => return Err(Error::Syntax("a trigger fires BEFORE, AFTER or INSTEAD OF its event".into())),
        };
        let mut events = 0;
        let mut columns = Vec::new();
        for e in &ct.events {
            events |= match e {
                ast::TriggerEvent::Insert => INSERT,
                ast::TriggerEvent::Delete => DELETE,
                ast::TriggerEvent::Truncate => TRUNCATE,
                ast::TriggerEvent::Update(cols) => {
                    columns.extend(cols.iter().map(ident));
                    UPDATE
                }
            };
        }
        let row = matches!(
            ct.trigger_object,
            Some(ast::TriggerObjectKind::ForEach(ast::TriggerObject::Row))
                | Some(ast::TriggerObjectKind::For(ast::TriggerObject::Row))
        );
        let Some(body) = &ct.exec_body else {
            return Err(Error::Syntax("CREATE TRIGGER needs EXECUTE FUNCTION".into()));
        };
        let parts = object_parts(&body.func_desc.name)?;
        let function = parts.last().cloned().unwrap_or_default();
        // Arguments travel as quoted identifiers (see the parser).
        let args = body
            .func_desc
            .args
            .iter()
            .flatten()
            .map(|a| match &a.data_type {
                ast::DataType::Custom(n, _) => Ok(object_parts(n)?.join(".")),
                other => Ok(other.to_string()),
            })
            .collect::<Result<Vec<_>>>()?;
        let mut def = TriggerDef {
            name: object_parts(&ct.name)?.last().cloned().unwrap_or_default(),
            timing,
            events,
            columns,
            row,
            when: ct.condition.as_ref().map(|c| {
                let mut c = c;
                while let ast::Expr::Nested(inner) = c {
                    c = inner;
                }
                c.to_string()
            }),
            function,
            args,
            old_table: None,
            new_table: None,
        };
        for r in &ct.referencing {
            let name = object_parts(&r.transition_relation_name)?.join(".");
            match r.refer_type {
                ast::TriggerReferencingType::OldTable => def.old_table = Some(name),
                ast::TriggerReferencingType::NewTable => def.new_table = Some(name),
            }
        }
        def.check()?;
        Ok(def)
    }

    /// PostgreSQL's rules on which combinations exist.
    fn check(&self) -> Result<()> {
        let unsupported = |m: &str| Err(Error::other("0A000", m.to_string()));
        let invalid = |m: String| Err(Error::other("42P17", m));
        if self.events & TRUNCATE != 0 && self.row {
            return unsupported("TRUNCATE FOR EACH ROW triggers are not supported");
        }
        if self.timing == Timing::InsteadOf {
            if !self.row {
                return unsupported("INSTEAD OF triggers must be FOR EACH ROW");
            }
            if self.when.is_some() {
                return unsupported("INSTEAD OF triggers cannot have WHEN conditions");
            }
            if !self.columns.is_empty() {
                return unsupported("INSTEAD OF triggers cannot have column lists");
            }
        }
        if self.old_table.is_some() || self.new_table.is_some() {
            if self.timing != Timing::After {
                return invalid("transition table name can only be specified for an AFTER trigger".into());
            }
            if self.events & TRUNCATE != 0 {
                return unsupported("TRUNCATE triggers with transition tables are not supported");
            }
            if self.events.count_ones() > 1 {
                return unsupported(
                    "transition tables cannot be specified for triggers with more than one event",
                );
            }
            if !self.columns.is_empty() {
                return unsupported("transition tables cannot be specified for triggers with column lists");
            }
            if self.old_table.is_some() && self.events & (DELETE | UPDATE) == 0 {
                return invalid("OLD TABLE can only be specified for a DELETE or UPDATE trigger".into());
            }
            if self.new_table.is_some() && self.events & (INSERT | UPDATE) == 0 {
                return invalid("NEW TABLE can only be specified for an INSERT or UPDATE trigger".into());
            }
            if self.old_table.is_some() && self.old_table == self.new_table {
                return invalid("OLD TABLE name and NEW TABLE name cannot be the same".into());
            }
        }
        if let Some(when) = &self.when {
            let words = crate::parser::words(when)?;
            let has = |w: &str| words.iter().any(|x| x.eq_ignore_ascii_case(w));
            let (new, old) = (has("new"), has("old"));
            if !self.row && (new || old) {
                return invalid("statement trigger's WHEN condition cannot reference column values".into());
            }
            if self.events & INSERT != 0 && old {
                return invalid("INSERT trigger's WHEN condition cannot reference OLD values".into());
            }
            if self.events & DELETE != 0 && new {
                return invalid("DELETE trigger's WHEN condition cannot reference NEW values".into());
            }
        }
        Ok(())
    }

    /// Reads a definition back from its stored text.
    pub fn parse(source: &str) -> Result<TriggerDef> {
        match crate::parser::parse(source)?.pop() {
            Some(ast::Statement::CreateTrigger(ct)) => TriggerDef::from_ast(&ct),
            _ => Err(Error::other("XX001", "stored trigger definition is damaged")),
        }
    }

    /// Whether it fires for `event` (one bit).
    pub fn fires_on(&self, event: u8) -> bool {
        self.events & event != 0
    }

    /// The CREATE TRIGGER text for table `table`, as it is stored and as
    /// `pg_get_triggerdef` gives it: with `qualified`, the function is
    /// named with its schema (routines all live in `public`), as
    /// PostgreSQL names it for a search path that does not find it
    /// (pg_dump's, which is empty).
    pub fn text(&self, table: &str, qualified: bool) -> String {
        let mut events = Vec::new();
        for (bit, word) in EVENTS {
            if self.events & bit == 0 {
                continue;
            }
            if bit == UPDATE && !self.columns.is_empty() {
                let cols: Vec<String> = self.columns.iter().map(|c| quote_ident(c)).collect();
                events.push(format!("UPDATE OF {}", cols.join(", ")));
            } else {
                events.push(word.to_string());
            }
        }
        let mut s = format!(
            "CREATE TRIGGER {} {} {} ON {}",
            quote_ident(&self.name),
            self.timing.sql(),
            events.join(" OR "),
            table.split('.').map(quote_ident).collect::<Vec<_>>().join(".")
        );
        if self.old_table.is_some() || self.new_table.is_some() {
            s.push_str(" REFERENCING");
            if let Some(o) = &self.old_table {
                s.push_str(&format!(" OLD TABLE AS {}", quote_ident(o)));
            }
            if let Some(n) = &self.new_table {
                s.push_str(&format!(" NEW TABLE AS {}", quote_ident(n)));
            }
        }
        s.push_str(if self.row { " FOR EACH ROW" } else { " FOR EACH STATEMENT" });
        if let Some(w) = &self.when {
            s.push_str(&format!(" WHEN ({w})"));
        }
        let args: Vec<String> = self.args.iter().map(|a| quote_literal(a)).collect();
        let schema = if qualified { "public." } else { "" };
        s.push_str(&format!(
            " EXECUTE FUNCTION {schema}{}({})",
            quote_ident(&self.function),
            args.join(", ")
        ));
        s
    }

    /// `pg_trigger.tgtype`: 1 row, 2 before, 4 insert, 8 delete, 16
    /// update, 32 truncate, 64 instead.
    pub fn tgtype(&self) -> i16 {
        let mut t = 0;
        if self.row {
            t |= 1;
        }
        match self.timing {
            Timing::Before => t |= 2,
            Timing::InsteadOf => t |= 64,
            Timing::After => {}
        }
        for (bit, flag) in [(INSERT, 4), (DELETE, 8), (UPDATE, 16), (TRUNCATE, 32)] {
            if self.events & bit != 0 {
                t |= flag;
            }
        }
        t
    }
}

/// The engine name of table `t`'s schema and its own name.
pub(crate) fn schema_and_name(t: &str) -> (&str, &str) {
    t.rsplit_once('.').unwrap_or(("public", t))
}

/// CREATE [OR REPLACE] TRIGGER.
pub(crate) fn create(b: &Binder, ct: &ast::CreateTrigger) -> Result<DdlOutcome> {
    let def = TriggerDef::from_ast(ct)?;
    let table = match b.table_name(&ct.table_name) {
        Ok(t) => t,
        Err(e) => {
            if let Some(v) = b.view_named(&object_parts(&ct.table_name)?) {
                return Err(on_view(&v.name, &def));
            }
            return Err(e);
        }
    };
    if let Some(v) = b.catalog.view(&table) {
        return Err(on_view(&v.name, &def));
    }
    let info = b.catalog.table(&table)?;
    if def.timing == Timing::InsteadOf {
        return Err(Error::other(
            "42809",
            format!(
                "\"{}\" is a table\nDETAIL:  Tables cannot have INSTEAD OF triggers.",
                schema_and_name(&table).1
            ),
        ));
    }
    for c in &def.columns {
        if info.table.column_index(c).is_err() {
            return Err(Error::UndefinedColumn(format!(
                "column \"{c}\" of relation \"{table}\" does not exist"
            )));
        }
    }
    check_function(b, &def.function)?;
    let mut meta = info.meta.clone();
    let stored = TriggerMeta { name: def.name.clone(), enabled: true, source: def.text(&table, false) };
    match meta.triggers.iter().position(|t| t.name == def.name) {
        Some(_) if !ct.or_replace => {
            return Err(Error::Duplicate {
                code: "42710",
                message: format!("trigger \"{}\" for relation \"{table}\" already exists", def.name),
            })
        }
        Some(i) => meta.triggers[i] = stored,
        None => meta.triggers.push(stored),
    }
    b.catalog.set_meta(&table, &meta)?;
    // Compiled now, against the table as it is, so a body that names a
    // missing column of NEW or a missing table is refused here (and what
    // was there before is put back).
    let compiled = b.catalog.table(&table).and_then(|now| crate::planner::triggers::compile(b.catalog, &now));
    if let Err(e) = compiled {
        b.catalog.set_meta(&table, &info.meta)?;
        return Err(e);
    }
    Ok(DdlOutcome { tag: "CREATE TRIGGER".into(), notices: vec![] })
}

/// The error for a trigger on view `view` that is not INSTEAD OF ... FOR
/// EACH ROW (INSTEAD OF triggers on views are not supported either).
fn on_view(view: &str, def: &TriggerDef) -> Error {
    let (_, name) = schema_and_name(view);
    if def.timing == Timing::InsteadOf {
        return Error::unsupported("INSTEAD OF triggers on views");
    }
    Error::other(
        "42809",
        format!("\"{name}\" is a view\nDETAIL:  Views cannot have row-level BEFORE or AFTER triggers."),
    )
}

/// Checks that `function` exists and returns `trigger`.
fn check_function(b: &Binder, function: &str) -> Result<()> {
    let Some(source) = b.catalog.routine_source(function) else {
        return Err(Error::UndefinedFunction(format!("{function}()")));
    };
    let header = resolve_header(b.catalog, &parse_create(&source)?)?;
    if !matches!(header.returns, Returns::Trigger) {
        return Err(Error::other("42P17", format!("function {function} must return type trigger")));
    }
    Ok(())
}

/// DROP TRIGGER [IF EXISTS] name ON table.
pub(crate) fn drop(b: &Binder, dt: &ast::DropTrigger) -> Result<DdlOutcome> {
    let name = object_parts(&dt.trigger_name)?.last().cloned().unwrap_or_default();
    let Some(table_name) = &dt.table_name else {
        return Err(Error::Syntax("DROP TRIGGER needs ON table".into()));
    };
    let table = match b.table_name(table_name) {
        Ok(t) => t,
        Err(_) if dt.if_exists => {
            return Ok(DdlOutcome {
                tag: "DROP TRIGGER".into(),
                notices: vec![format!("relation \"{table_name}\" does not exist, skipping")],
            })
        }
        Err(e) => return Err(e),
    };
    let info = b.catalog.table(&table)?;
    let mut meta = info.meta.clone();
    let before = meta.triggers.len();
    meta.triggers.retain(|t| t.name != name);
    if meta.triggers.len() == before {
        let (_, short) = schema_and_name(&table);
        if dt.if_exists {
            return Ok(DdlOutcome {
                tag: "DROP TRIGGER".into(),
                notices: vec![format!(
                    "trigger \"{name}\" for relation \"{short}\" does not exist, skipping"
                )],
            });
        }
        return Err(Error::UndefinedObject(format!(
            "trigger \"{name}\" for table \"{short}\" does not exist"
        )));
    }
    b.catalog.set_meta(&table, &meta)?;
    Ok(DdlOutcome { tag: "DROP TRIGGER".into(), notices: vec![] })
}

/// ALTER TABLE ... ENABLE | DISABLE TRIGGER name | ALL | USER.
pub(crate) fn set_enabled(b: &Binder, table: &str, which: &ast::Ident, enabled: bool) -> Result<()> {
    let info = b.catalog.table(table)?;
    let mut meta = info.meta.clone();
    let all = which.quote_style.is_none() && matches!(which.value.to_lowercase().as_str(), "all" | "user");
    let name = ident(which);
    let mut found = false;
    for t in meta.triggers.iter_mut().filter(|t| all || t.name == name) {
        t.enabled = enabled;
        found = true;
    }
    if !found && !all {
        return Err(Error::UndefinedObject(format!(
            "trigger \"{name}\" for table \"{}\" does not exist",
            schema_and_name(table).1
        )));
    }
    b.catalog.set_meta(table, &meta)
}

/// The triggers of every table that call `function`: (table, trigger).
pub(crate) fn using_function(b: &Binder, function: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for table in b.catalog.db().table_names() {
        let Ok(info) = b.catalog.table(&table) else { continue };
        for t in &info.meta.triggers {
            if TriggerDef::parse(&t.source)?.function == function {
                out.push((table.clone(), t.name.clone()));
            }
        }
    }
    Ok(out)
}

/// Drops the triggers `using_function` found (DROP FUNCTION ... CASCADE).
pub(crate) fn drop_using(b: &Binder, users: &[(String, String)]) -> Result<Vec<String>> {
    let mut notices = Vec::new();
    for (table, name) in users {
        let info = b.catalog.table(table)?;
        let mut meta = info.meta.clone();
        meta.triggers.retain(|t| &t.name != name);
        b.catalog.set_meta(table, &meta)?;
        notices.push(format!("drop cascades to trigger {name} on table {table}"));
    }
    Ok(notices)
}
