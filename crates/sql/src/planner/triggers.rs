//! Compiling a table's triggers.
//!
//! A trigger function's NEW and OLD have its table's columns, so its body
//! is compiled once per trigger, against that table: NEW and OLD become a
//! slot per column, TG_NAME and the other TG_ variables slots of their
//! own, the WHEN condition an expression over those slots, and the
//! transition tables relations that the body's queries read. The programs
//! are cached per table and trigger at the catalog version they were made
//! at, like routines; any DDL makes the next statement compile them again.
//!
//! A view's triggers are compiled the same way, against the view's
//! columns as its query gives them.
//!
//! The plans of INSERT, UPDATE and DELETE hold the table's
//! [`TableTriggers`] (none when the table has no enabled trigger, so a
//! table without triggers pays nothing), and `execution::triggers` fires
//! them.

use super::routines::compile::TriggerEnv;
use super::routines::{cached, compile_cached, Compiled};
use super::Dictionary;
use crate::catalog::{TableInfo, TriggerMeta, ViewDef};
use crate::error::Result;
use crate::routines::{parse_create, resolve_header};
use crate::system::snapshot::ViewShapes;
use crate::triggers::{Timing, TriggerDef};
use centum_types::DataType;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One enabled trigger, compiled.
pub(crate) struct Trigger {
    pub def: TriggerDef,
    pub program: Arc<Compiled>,
}

/// The enabled triggers of a table, in the order they fire (by name).
pub(crate) struct TableTriggers {
    /// The table's engine name.
    pub table: String,
    pub list: Vec<Trigger>,
}

impl std::fmt::Debug for TableTriggers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.list.iter().map(|t| t.def.name.as_str()).collect();
        write!(f, "triggers of {}: {names:?}", self.table)
    }
}

impl TableTriggers {
    /// The triggers that fire at `timing`, per row or per statement, for
    /// `event`.
    pub fn matching(&self, timing: Timing, row: bool, event: u8) -> impl Iterator<Item = &Trigger> {
        self.list.iter().filter(move |t| t.def.timing == timing && t.def.row == row && t.def.fires_on(event))
    }

    /// Whether any trigger fires at `timing`, per row or per statement,
    /// for `event`.
    pub fn any(&self, timing: Timing, row: bool, event: u8) -> bool {
        self.matching(timing, row, event).next().is_some()
    }
}

/// Compiled trigger sets by table, with the catalog version they were
/// compiled at.
#[derive(Default)]
pub(crate) struct Cache(Mutex<HashMap<String, (u64, Arc<TableTriggers>)>>);

impl Cache {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, Arc<TableTriggers>)>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The enabled triggers of `info`'s table, compiled at the catalog's
/// current version; `None` when it has none.
pub(crate) fn compile(catalog: &Dictionary, info: &TableInfo) -> Result<Option<Arc<TableTriggers>>> {
    let columns = || info.table.columns().iter().map(|c| (c.name.clone(), c.ty.clone())).collect();
    compile_list(catalog, info.table.name(), &info.meta.triggers, columns)
}

/// The triggers of view `def`, compiled against its columns as they bind
/// now; `None` when it has none.
pub(crate) fn compile_view(catalog: &Dictionary, def: &ViewDef) -> Result<Option<Arc<TableTriggers>>> {
    let columns = || {
        let (columns, _) = ViewShapes::shape(catalog, def);
        columns.into_iter().map(|c| (c.name, c.ty.unwrap_or(DataType::Text))).collect()
    };
    compile_list(catalog, def.name.clone(), &def.triggers, columns)
}

/// The enabled triggers of `metas` on relation `table` (engine name),
/// whose row has `columns`.
fn compile_list(
    catalog: &Dictionary,
    table: String,
    metas: &[TriggerMeta],
    columns: impl Fn() -> Vec<(String, DataType)>,
) -> Result<Option<Arc<TableTriggers>>> {
    if !metas.iter().any(|t| t.enabled) {
        return Ok(None);
    }
    let version = catalog.version();
    if let Some((v, t)) = catalog.triggers.lock().get(&table) {
        if *v == version {
            return Ok(Some(t.clone()));
        }
    }
    let mut list = Vec::new();
    for meta in metas.iter().filter(|t| t.enabled) {
        let def = TriggerDef::parse(&meta.source)?;
        let key = format!("{table}\0{}", def.name);
        let program = match cached(catalog, &key) {
            Some(p) => p,
            None => {
                let source = crate::routines::without_inputs(catalog, &def.function)?
                    .ok_or_else(|| crate::error::Error::UndefinedFunction(format!("{}()", def.function)))?;
                let routine = parse_create(&source)?;
                let declaration = resolve_header(catalog, &routine)?;
                let env = TriggerEnv {
                    columns: columns(),
                    when: def.when.clone(),
                    old_table: def.old_table.clone().map(|n| (n, super::select::next_work_id())),
                    new_table: def.new_table.clone().map(|n| (n, super::select::next_work_id())),
                };
                compile_cached(catalog, key, declaration, &routine.body, version, Some(&env))
                    .map_err(|e| e.with_context(format!("trigger \"{}\" on table \"{table}\"", def.name)))?
            }
        };
        list.push(Trigger { def, program });
    }
    list.sort_by(|a, b| a.def.name.cmp(&b.def.name));
    let triggers = Arc::new(TableTriggers { table: table.clone(), list });
    // A set met while one of its programs is still being compiled (a body
    // that writes to its own table) is not kept: it is complete only once
    // the outermost compilation ends.
    if triggers.list.iter().all(|t| t.program.program.get().is_some()) {
        catalog.triggers.lock().insert(table, (version, triggers.clone()));
    }
    Ok(Some(triggers))
}
