//! Compiling PL/pgSQL routines, and the cache of compiled routines.
//!
//! A routine's declaration and body tree (see the `routines` module) are
//! compiled into a [`Compiled`]: every variable is a numbered slot, every
//! expression and SQL statement in the body is bound and planned against
//! the current catalog once, with the variables it reads as `$n`
//! parameters. A call then only binds its arguments into the slots and
//! walks a tree of pre-planned operations (`execution::routine`); nothing
//! is parsed, resolved or planned per call.
//!
//! * `compile`: the body tree to operations, names resolved, statements
//!   planned.
//! * `call`: binding a call of a routine in a statement.
//!
//! Compiled routines are cached per name with the catalog version they were
//! made at, in the [`Cache`] the database opens with its catalog. Any DDL
//! bumps the version, so the next look-up compiles again from the stored
//! text; a body that no longer compiles (a dropped table or column) fails
//! its calls with that error and a context line naming the routine and
//! line, never with a stale plan. Plans that call a routine hold its
//! compiled form and are themselves re-planned on a version change.

mod call;
pub(crate) mod compile;

use super::Dictionary;
use crate::error::{Error, Result};
use crate::names::object_parts;
use crate::routines::{definition, parse_create, resolve_header, Declaration};
use sqlparser::ast;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A routine compiled at one catalog version: its declaration and the
/// operations of its body.
pub struct Compiled {
    /// What the cache knows it by: the routine's name, or for a trigger's
    /// program `table NUL trigger`.
    pub(crate) key: String,
    pub declaration: Declaration,
    /// The catalog version it was compiled at.
    pub version: u64,
    /// The operations, set once compiled (a recursive routine finds itself
    /// in the cache while its body is being compiled).
    pub(crate) program: OnceLock<compile::Program>,
}

impl std::ops::Deref for Compiled {
    type Target = Declaration;

    fn deref(&self) -> &Declaration {
        &self.declaration
    }
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.signature)
    }
}

impl Compiled {
    /// The privileges its body needs (none while it is being compiled).
    pub(crate) fn needs(&self) -> &[crate::privileges::Need] {
        self.program.get().map_or(&[], |p| &p.needs)
    }
}

/// Compiled routines by name.
#[derive(Default)]
pub(crate) struct Cache(Mutex<HashMap<String, Arc<Compiled>>>);

impl Cache {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Compiled>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The routine `name` compiled at the catalog's current version, if there
/// is one by that name.
pub(crate) fn lookup(catalog: &Dictionary, name: &str) -> Result<Option<Arc<Compiled>>> {
    if let Some(c) = cached(catalog, name) {
        return Ok(Some(c));
    }
    let Some(source) = catalog.routine_source(name) else { return Ok(None) };
    compile_source(catalog, name, &source, catalog.version()).map(Some)
}

thread_local! {
    /// Routines this thread is compiling: a body that calls its own routine
    /// finds it here (other threads see a routine only once compiled).
    static COMPILING: std::cell::RefCell<Vec<Arc<Compiled>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Compiles `source` and caches the result. The routine is visible to its
/// own body while that is compiled, so it may call itself.
fn compile_source(catalog: &Dictionary, name: &str, source: &str, version: u64) -> Result<Arc<Compiled>> {
    let def = parse_create(source)?;
    let declaration = resolve_header(catalog, &def)?;
    compile_cached(catalog, name.to_string(), declaration, &def.body, version, None)
}

/// Compiles a body under cache key `key` (for a trigger, with its table's
/// row and WHEN condition) and caches the result. The program is visible
/// under its key while its body is compiled, so a routine may call itself
/// and a trigger's body may write to its own table.
pub(crate) fn compile_cached(
    catalog: &Dictionary,
    key: String,
    declaration: Declaration,
    body: &str,
    version: u64,
    trigger: Option<&compile::TriggerEnv>,
) -> Result<Arc<Compiled>> {
    let c = Arc::new(Compiled { key: key.clone(), declaration, version, program: OnceLock::new() });
    COMPILING.with(|list| list.borrow_mut().push(c.clone()));
    let compiled = compile::compile(catalog, &c, body, trigger);
    COMPILING.with(|list| list.borrow_mut().retain(|x| !Arc::ptr_eq(x, &c)));
    let _ = c.program.set(compiled?);
    catalog.routines.lock().insert(key, c.clone());
    Ok(c)
}

/// The program cached under `key` at the current catalog version: one
/// being compiled on this thread, or one compiled before.
pub(crate) fn cached(catalog: &Dictionary, key: &str) -> Option<Arc<Compiled>> {
    let version = catalog.version();
    if let Some(c) =
        COMPILING.with(|c| c.borrow().iter().find(|r| r.key == key && r.version == version).cloned())
    {
        return Some(c);
    }
    catalog.routines.lock().get(key).filter(|c| c.version == version).cloned()
}

/// CREATE [OR REPLACE] FUNCTION / PROCEDURE: compiled now, against the
/// current catalog, so a body naming a missing table or column is refused
/// here rather than at its first call.
///
/// With `check_bodies` off (`SET check_function_bodies = off`, as pg_dump's
/// output sets, since it creates routines before the tables they use) only
/// the header is checked; the body is compiled at the first call.
pub(crate) fn create(catalog: &Dictionary, cf: &ast::CreateFunction, check_bodies: bool) -> Result<String> {
    let def = definition(cf)?;
    let kind = if def.procedure { "PROCEDURE" } else { "FUNCTION" };
    if let Some(old) = catalog.routine_source(&def.name) {
        let old_def = parse_create(&old)?;
        if def.or_replace && old_def.procedure != def.procedure {
            return Err(Error::other(
                "42809",
                format!(
                    "cannot change routine kind: \"{}\" is a {}",
                    def.name,
                    if old_def.procedure { "procedure" } else { "function" }
                ),
            ));
        }
    }
    let source = cf.to_string();
    let header = resolve_header(catalog, &def)?;
    if !check_bodies {
        catalog.put_routine(&def.name, source, def.or_replace)?;
        return Ok(format!("CREATE {kind}"));
    }
    if matches!(header.returns, crate::routines::Returns::Trigger) {
        // A trigger function's NEW and OLD are its table's rows: the body
        // is compiled for each trigger that uses it (at CREATE TRIGGER);
        // here only its syntax is checked.
        let toks = crate::routines::parse::lex(&def.body)?;
        crate::routines::parse::parse(&toks)
            .map_err(|e| e.with_context(format!("compilation of PL/pgSQL function \"{}\"", def.name)))?;
        catalog.put_routine(&def.name, source, def.or_replace)?;
        return Ok(format!("CREATE {kind}"));
    }
    let old = catalog.put_routine(&def.name, source.clone(), def.or_replace)?;
    if let Err(e) = compile_source(catalog, &def.name, &source, catalog.version()) {
        // Put back what was there, so a failed CREATE OR REPLACE changes
        // nothing.
        let _ = match old {
            Some(old) => catalog.put_routine(&def.name, old, true).map(|_| ()),
            None => catalog.drop_routine(&def.name).map(|_| ()),
        };
        return Err(e.with_context(format!("compilation of PL/pgSQL function \"{}\"", def.name)));
    }
    Ok(format!("CREATE {kind}"))
}

/// DROP FUNCTION / DROP PROCEDURE.
pub(crate) fn drop(
    catalog: &Dictionary,
    descs: &[ast::FunctionDesc],
    if_exists: bool,
    procedure: bool,
) -> Result<(String, Vec<String>)> {
    let kind = if procedure { "procedure" } else { "function" };
    let mut notices = Vec::new();
    for d in descs {
        let parts = object_parts(&d.name)?;
        let name = parts.last().cloned().unwrap_or_default();
        match catalog.routine_source(&name) {
            Some(src) => {
                if parse_create(&src)?.procedure != procedure {
                    return Err(Error::other("42809", format!("{name} is not a {kind}")));
                }
                catalog.drop_routine(&name)?;
                catalog.routines.lock().remove(&name);
            }
            None if if_exists => notices.push(format!("{kind} {name}() does not exist, skipping")),
            None => return Err(Error::UndefinedFunction(name.to_string())),
        }
    }
    Ok((format!("DROP {}", kind.to_uppercase()), notices))
}
