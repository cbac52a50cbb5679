//! Triggers: what a CREATE TRIGGER declares, and the statements that make,
//! drop, enable and disable them.
//!
//! A trigger belongs to its table: its definition is kept in the table's
//! SQL facts (`TableMeta::triggers`) as canonical CREATE TRIGGER text, so
//! it is durable with the table, renamed with it and dropped with it. A
//! view's triggers (INSTEAD OF per row, BEFORE and AFTER per statement)
//! are kept the same way in its definition (`ViewDef::triggers`). The
//! rest of a trigger's life is in the layers above:
//!
//! ```text
//!   CREATE TRIGGER ─▶ triggers: definition checked, kept with the table
//!                       ─▶ planner::triggers: the function's body compiled
//!                          against the table's row (NEW, OLD, TG_*, WHEN)
//!   INSERT/UPDATE/DELETE/TRUNCATE ─▶ execution::triggers: BEFORE and
//!                          AFTER, per row and per statement, in name order
//!   INSERT/UPDATE/DELETE on a view ─▶ planner::instead: INSTEAD OF, per
//!                          row, in place of the write
//! ```
//!
//! Trigger functions are PL/pgSQL functions declared `RETURNS trigger`;
//! they take their arguments from the trigger (`TG_ARGV`), never from a
//! call.

use crate::catalog::{TriggerMeta, ViewDef};
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
    /// The definition a CREATE TRIGGER statement gives (its rules are
    /// checked by [`create`], in PostgreSQL's order).
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
        Ok(def)
    }

    /// PostgreSQL's rules on which combinations exist, checked after
    /// those of the relation the trigger is on.
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

/// What a trigger is on: a table (its engine name) or a view.
#[derive(Clone)]
enum Relation {
    Table(String),
    View(ViewDef),
}

/// The table or view `name` names; a materialized view cannot have
/// triggers (42809).
fn relation(b: &Binder, name: &ast::ObjectName) -> Result<Relation> {
    let table = match b.table_name(name) {
        Ok(t) => t,
        Err(e) => {
            return match b.view_named(&object_parts(name)?) {
                Some(v) => Ok(Relation::View(v)),
                None => Err(e),
            }
        }
    };
    if let Some(v) = b.catalog.view(&table) {
        if v.materialized {
            return Err(Error::other(
                "42809",
                format!(
                    "relation \"{}\" cannot have triggers\nDETAIL:  This operation is not supported for materialized views.",
                    schema_and_name(&table).1
                ),
            ));
        }
        return Ok(Relation::View(v));
    }
    Ok(Relation::Table(table))
}

/// Puts `stored` into `list`, replacing the trigger of its name only with
/// OR REPLACE.
fn store(list: &mut Vec<TriggerMeta>, stored: TriggerMeta, or_replace: bool, relation: &str) -> Result<()> {
    match list.iter().position(|t| t.name == stored.name) {
        Some(_) if !or_replace => Err(Error::Duplicate {
            code: "42710",
            message: format!("trigger \"{}\" for relation \"{relation}\" already exists", stored.name),
        }),
        Some(i) => {
            list[i] = stored;
            Ok(())
        }
        None => {
            list.push(stored);
            Ok(())
        }
    }
}

/// CREATE [OR REPLACE] TRIGGER.
pub(crate) fn create(b: &Binder, ct: &ast::CreateTrigger) -> Result<DdlOutcome> {
    let def = TriggerDef::from_ast(ct)?;
    let done = Ok(DdlOutcome { tag: "CREATE TRIGGER".into(), notices: vec![] });
    let table = match relation(b, &ct.table_name)? {
        Relation::View(view) => {
            create_on_view(b, def, view, ct.or_replace)?;
            return done;
        }
        Relation::Table(t) => t,
    };
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
    def.check()?;
    for c in &def.columns {
        if info.table.column_index(c).is_err() {
            return Err(Error::UndefinedColumn(format!("\"{c}\" of relation \"{table}\"")));
        }
    }
    check_function(b, &def.function)?;
    let mut meta = info.meta.clone();
    let stored = TriggerMeta { name: def.name.clone(), enabled: true, source: def.text(&table, false) };
    store(&mut meta.triggers, stored, ct.or_replace, &table)?;
    b.catalog.set_meta(&table, &meta)?;
    // Compiled now, against the table as it is, so a body that names a
    // missing column of NEW or a missing table is refused here (and what
    // was there before is put back).
    let compiled = b.catalog.table(&table).and_then(|now| crate::planner::triggers::compile(b.catalog, &now));
    if let Err(e) = compiled {
        b.catalog.set_meta(&table, &info.meta)?;
        return Err(e);
    }
    done
}

/// CREATE TRIGGER on view `view`: INSTEAD OF per row, or BEFORE and AFTER
/// per statement, as PostgreSQL allows.
fn create_on_view(b: &Binder, def: TriggerDef, view: ViewDef, or_replace: bool) -> Result<()> {
    let (_, name) = schema_and_name(&view.name);
    let refuse =
        |detail: &str| Err(Error::other("42809", format!("\"{name}\" is a view\nDETAIL:  {detail}")));
    if def.timing != Timing::InsteadOf && def.row {
        return refuse("Views cannot have row-level BEFORE or AFTER triggers.");
    }
    if def.events & TRUNCATE != 0 {
        return refuse("Views cannot have TRUNCATE triggers.");
    }
    if def.old_table.is_some() || def.new_table.is_some() {
        return refuse("Triggers on views cannot have transition tables.");
    }
    def.check()?;
    if !def.columns.is_empty() {
        let (columns, _) = crate::system::snapshot::ViewShapes::shape(b.catalog, &view);
        if let Some(c) = def.columns.iter().find(|c| !columns.iter().any(|x| &x.name == *c)) {
            return Err(Error::UndefinedColumn(format!("\"{c}\" of relation \"{}\"", view.name)));
        }
    }
    check_function(b, &def.function)?;
    let mut new = view.clone();
    let stored = TriggerMeta { name: def.name.clone(), enabled: true, source: def.text(&view.name, false) };
    store(&mut new.triggers, stored, or_replace, name)?;
    b.catalog.put_view(new.clone())?;
    // Compiled now, against the view's columns, as a table's are.
    if let Err(e) = crate::planner::triggers::compile_view(b.catalog, &new) {
        b.catalog.put_view(view)?;
        return Err(e);
    }
    Ok(())
}

/// Checks that `function` exists and returns `trigger`.
fn check_function(b: &Binder, function: &str) -> Result<()> {
    let Some(source) = crate::routines::without_inputs(b.catalog, function)? else {
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
    let done = |notices| Ok(DdlOutcome { tag: "DROP TRIGGER".into(), notices });
    let relation = match relation(b, table_name) {
        Ok(r) => r,
        Err(e) if dt.if_exists && e.sqlstate() == "42P01" => {
            return done(vec![format!("relation \"{table_name}\" does not exist, skipping")])
        }
        Err(e) => return Err(e),
    };
    let (engine, list) = match &relation {
        Relation::Table(t) => (t.clone(), b.catalog.table(t)?.meta.triggers.clone()),
        Relation::View(v) => (v.name.clone(), v.triggers.clone()),
    };
    let mut kept = list.clone();
    kept.retain(|t| t.name != name);
    if kept.len() == list.len() {
        let (_, short) = schema_and_name(&engine);
        if dt.if_exists {
            return done(vec![format!(
                "trigger \"{name}\" for relation \"{short}\" does not exist, skipping"
            )]);
        }
        return Err(Error::UndefinedObject(format!(
            "trigger \"{name}\" for table \"{short}\" does not exist"
        )));
    }
    set_triggers(b, &relation, kept)?;
    done(vec![])
}

/// Replaces the trigger list of `relation`.
fn set_triggers(b: &Binder, relation: &Relation, list: Vec<TriggerMeta>) -> Result<()> {
    match relation {
        Relation::Table(t) => {
            let mut meta = b.catalog.table(t)?.meta.clone();
            meta.triggers = list;
            b.catalog.set_meta(t, &meta)
        }
        Relation::View(v) => b.catalog.put_view(ViewDef { triggers: list, ..v.clone() }),
    }
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

/// A trigger that calls a function, found for DROP FUNCTION.
pub(crate) struct Dependent {
    relation: Relation,
    trigger: String,
}

impl Dependent {
    /// As PostgreSQL's DETAIL names it: `trigger t on table x`.
    pub fn describe(&self) -> String {
        match &self.relation {
            Relation::Table(t) => format!("trigger {} on table {t}", self.trigger),
            Relation::View(v) => format!("trigger {} on view {}", self.trigger, v.name),
        }
    }
}

/// The triggers of every table and view that call `function`, in name
/// order of their relations.
pub(crate) fn using_function(b: &Binder, function: &str) -> Result<Vec<Dependent>> {
    let mut out = Vec::new();
    let mut lists: Vec<(Relation, Vec<TriggerMeta>)> = Vec::new();
    for table in b.catalog.db().table_names() {
        let Ok(info) = b.catalog.table(&table) else { continue };
        lists.push((Relation::Table(table), info.meta.triggers.clone()));
    }
    for v in b.catalog.views().into_iter().filter(|v| !v.triggers.is_empty()) {
        let list = v.triggers.clone();
        lists.push((Relation::View(v), list));
    }
    for (relation, list) in lists {
        for t in &list {
            if TriggerDef::parse(&t.source)?.function == function {
                out.push(Dependent { relation: relation.clone(), trigger: t.name.clone() });
            }
        }
    }
    Ok(out)
}

/// Drops the triggers `using_function` found (DROP FUNCTION ... CASCADE).
pub(crate) fn drop_using(b: &Binder, users: &[Dependent]) -> Result<Vec<String>> {
    let mut notices = Vec::new();
    for d in users {
        // Read afresh: an earlier drop may have changed the relation.
        let relation = match &d.relation {
            Relation::View(v) => Relation::View(b.catalog.view(&v.name).unwrap_or_else(|| v.clone())),
            table => table.clone(),
        };
        let mut list = match &relation {
            Relation::Table(t) => b.catalog.table(t)?.meta.triggers.clone(),
            Relation::View(v) => v.triggers.clone(),
        };
        list.retain(|t| t.name != d.trigger);
        set_triggers(b, &relation, list)?;
        notices.push(format!("drop cascades to {}", d.describe()));
    }
    Ok(notices)
}
