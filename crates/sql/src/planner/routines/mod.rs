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
//! Compiled routines are cached per overload (its catalog key, see
//! `resolve`) with the catalog version they were
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
use crate::routines::{definition, parse_create, resolve_header, Declaration, Elem, Mode, Param, PlType};
use centum_types::DataType;
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

/// Compiled routines by catalog key.
#[derive(Default)]
pub(crate) struct Cache(Mutex<HashMap<String, Arc<Compiled>>>);

impl Cache {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Compiled>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Where each IN or INOUT parameter of a call's routine takes its value
/// from: argument `i`, or (`None`) its default.
pub(crate) type Placement = Vec<Option<usize>>;

/// The routine named `name` that a call with arguments of `types` (`None`:
/// an untyped literal or parameter) and `names` (`Some` for `name =>
/// value`) calls, compiled at the catalog's current version, and where its
/// parameters take their values. `None` when no routine has that name.
///
/// A name may be overloaded. Candidates are those whose parameters the
/// arguments can fill (by position, then by name, the rest by defaults).
/// When one remains it is called, its arguments cast to its parameter
/// types; among several, those whose parameters every typed argument
/// matches exactly or converts to within its kind (numbers, strings, times)
/// compete, the one with the most exact matches wins, and a tie is an
/// error (42725), as PostgreSQL reports one.
///
/// `call`: the arguments are those of CALL, which also pass a placeholder
/// (NULL) for each OUT parameter.
pub(crate) fn resolve(
    catalog: &Dictionary,
    name: &str,
    types: &[Option<DataType>],
    names: &[Option<String>],
    call: bool,
) -> Result<Option<(Arc<Compiled>, Placement)>> {
    // Keys first: a compiled overload needs no look at its text.
    let keys = catalog.routine_keys(name);
    if keys.is_empty() {
        return Ok(None);
    }
    let mut candidates = Vec::new();
    for key in keys {
        let candidate = match cached(catalog, &key) {
            Some(c) => Candidate::Compiled(c),
            None => {
                let Some(source) = catalog.routine_by_key(&key) else { continue };
                let declaration = resolve_header(catalog, &parse_create(&source)?)?;
                Candidate::Stored { key, source, declaration }
            }
        };
        if let Some(place) = place(candidate.declaration(), names, call) {
            candidates.push((candidate, place));
        }
    }
    let shown = || call_text(name, types, names);
    let (chosen, place) = if candidates.len() == 1 {
        candidates.pop().expect("one candidate")
    } else {
        let mut scored: Vec<_> = candidates
            .into_iter()
            .filter_map(|(c, p)| Some((fit(c.declaration(), &p, types)?, c, p)))
            .collect();
        let Some(best) = scored.iter().map(|s| s.0).max() else {
            return Err(Error::UndefinedFunction(shown()));
        };
        scored.retain(|s| s.0 == best);
        if scored.len() > 1 {
            return Err(Error::Raised {
                code: "42725",
                message: format!("function {} is not unique", shown()),
                detail: None,
                hint: Some(
                    "Could not choose a best candidate function. You might need to add explicit type casts."
                        .into(),
                ),
            });
        }
        let (_, c, p) = scored.pop().expect("one best candidate");
        (c, p)
    };
    let compiled = match chosen {
        Candidate::Compiled(c) => c,
        Candidate::Stored { key, source, .. } => compile_source(catalog, &key, &source, catalog.version())?,
    };
    Ok(Some((compiled, place)))
}

/// A call as errors show it: `f(integer, unit => unknown)`.
pub(crate) fn call_text(name: &str, types: &[Option<DataType>], names: &[Option<String>]) -> String {
    let args = types.iter().zip(names).map(|(t, n)| {
        let t = t.as_ref().map_or("unknown".to_string(), |t| t.sql_name());
        n.as_ref().map_or(t.clone(), |n| format!("{n} => {t}"))
    });
    format!("{name}({})", args.collect::<Vec<_>>().join(", "))
}

/// An overload that a call may mean: compiled already, or only its
/// header read.
enum Candidate {
    Compiled(Arc<Compiled>),
    Stored { key: String, source: String, declaration: Declaration },
}

impl Candidate {
    fn declaration(&self) -> &Declaration {
        match self {
            Candidate::Compiled(c) => &c.declaration,
            Candidate::Stored { declaration, .. } => declaration,
        }
    }
}

/// Where `d`'s inputs take their values from a call whose arguments have
/// `names`: positional ones in order, named ones by parameter name, the
/// rest from defaults. `None` when the arguments cannot fill them: too
/// many, a name no parameter has or that a positional argument already
/// filled, or a parameter without default left out. With `call` (CALL)
/// OUT parameters take arguments too, which are then left out.
fn place(d: &Declaration, names: &[Option<String>], call: bool) -> Option<Placement> {
    let params: Vec<_> = d.params.iter().filter(|p| call || p.mode != Mode::Out).collect();
    let mut place = vec![None; params.len()];
    for (i, n) in names.iter().enumerate() {
        let at = match n {
            None => i,
            Some(n) => params.iter().position(|p| p.name.as_deref() == Some(n.as_str()))?,
        };
        if place.get(at)?.is_some() {
            return None;
        }
        place[at] = Some(i);
    }
    let filled =
        |(p, a): (&&Param, &Option<usize>)| a.is_some() || p.default.is_some() || p.mode == Mode::Out;
    if !params.iter().zip(&place).all(filled) {
        return None;
    }
    Some(params.iter().zip(place).filter(|(p, _)| p.mode != Mode::Out).map(|(_, a)| a).collect())
}

/// How well a call's arguments fit `d`: how many typed arguments match
/// their parameter's type exactly, then how many untyped ones go to a
/// `text` parameter (PostgreSQL's preferred type for an unknown literal).
/// `None` when a typed argument does not convert to its parameter
/// implicitly (see `converts`).
fn fit(d: &Declaration, place: &Placement, types: &[Option<DataType>]) -> Option<(usize, usize)> {
    let (mut exact, mut text) = (0, 0);
    for (p, at) in d.inputs().zip(place) {
        let Some(i) = *at else { continue };
        let want = match &p.ty {
            PlType::Scalar(w) => Some(w.clone()),
            PlType::Array(Elem::Scalar(e)) => DataType::array_of(e.clone()).ok(),
            _ => None,
        };
        match (&types[i], want) {
            (None, Some(DataType::Text)) => text += 1,
            (None, _) => {}
            (Some(t), Some(w)) if w == *t => exact += 1,
            (Some(t), Some(w)) if converts(t, &w) => {}
            // Composite and composite-array parameters take row values or
            // their text.
            (Some(DataType::Composite(_) | DataType::Text | DataType::Array(_)), None) => {}
            _ => return None,
        }
    }
    Some((exact, text))
}

/// Whether a value of type `from` converts implicitly to `to`, as an
/// overloaded call converts arguments: numbers to wider numbers, strings
/// to strings, dates and times to timestamps.
fn converts(from: &DataType, to: &DataType) -> bool {
    use DataType as T;
    let rank = |t: &DataType| match t {
        T::SmallInt => Some(0),
        T::Integer | T::Oid => Some(1),
        T::BigInt => Some(2),
        T::Numeric { .. } => Some(3),
        T::Double => Some(4),
        _ => None,
    };
    let string = |t: &DataType| matches!(t, T::Text | T::Varchar(_) | T::Char(_));
    match (rank(from), rank(to)) {
        (Some(a), Some(b)) => a <= b,
        _ => {
            (string(from) && string(to))
                || matches!(
                    (from, to),
                    (T::Date, T::Timestamp | T::TimestampTz) | (T::Timestamp, T::TimestampTz)
                )
        }
    }
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
/// A routine is one name and one list of input types: OR REPLACE replaces
/// the routine with the same input types, and a different list makes an
/// overload of the name, stored under its signature.
///
/// With `check_bodies` off (`SET check_function_bodies = off`, as pg_dump's
/// output sets, since it creates routines before the tables they use) only
/// the header is checked; the body is compiled at the first call.
pub(crate) fn create(catalog: &Dictionary, cf: &ast::CreateFunction, check_bodies: bool) -> Result<String> {
    let def = definition(cf)?;
    let kind = if def.procedure { "PROCEDURE" } else { "FUNCTION" };
    let header = resolve_header(catalog, &def)?;
    let existing = same_inputs(catalog, &def.name, &header.signature)?;
    if let Some((_, old)) = &existing {
        let old_def = parse_create(old)?;
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
    let key = existing.map_or_else(|| header.signature.clone(), |e| e.0);
    let source = cf.to_string();
    if !check_bodies {
        catalog.put_routine(&key, source, def.or_replace)?;
        return Ok(format!("CREATE {kind}"));
    }
    if matches!(header.returns, crate::routines::Returns::Trigger) {
        // A trigger function's NEW and OLD are its table's rows: the body
        // is compiled for each trigger that uses it (at CREATE TRIGGER);
        // here only its syntax is checked.
        let toks = crate::routines::parse::lex(&def.body)?;
        crate::routines::parse::parse(&toks)
            .map_err(|e| e.with_context(format!("compilation of PL/pgSQL function \"{}\"", def.name)))?;
        catalog.put_routine(&key, source, def.or_replace)?;
        return Ok(format!("CREATE {kind}"));
    }
    let old = catalog.put_routine(&key, source.clone(), def.or_replace)?;
    if let Err(e) = compile_source(catalog, &key, &source, catalog.version()) {
        // Put back what was there, so a failed CREATE OR REPLACE changes
        // nothing.
        let _ = match old {
            Some(old) => catalog.put_routine(&key, old, true).map(|_| ()),
            None => catalog.drop_routine(&key).map(|_| ()),
        };
        let language = if def.sql { "SQL" } else { "PL/pgSQL" };
        return Err(e.with_context(format!("compilation of {language} function \"{}\"", def.name)));
    }
    Ok(format!("CREATE {kind}"))
}

/// The stored routine named `name` whose input signature is `signature`
/// (`name(type,...)`), as (key, CREATE text).
fn same_inputs(catalog: &Dictionary, name: &str, signature: &str) -> Result<Option<(String, String)>> {
    for (key, source) in catalog.routine_overloads(name) {
        if resolve_header(catalog, &parse_create(&source)?)?.signature == signature {
            return Ok(Some((key, source)));
        }
    }
    Ok(None)
}

/// DROP FUNCTION / DROP PROCEDURE: `name(types)` drops the overload with
/// those input types; a bare name, the only routine of that name.
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
        let (found, shown) = match &d.args {
            Some(args) => {
                let types = args
                    .iter()
                    .filter(|a| a.mode != Some(ast::ArgMode::Out))
                    .map(|a| crate::routines::pl_type(catalog, &a.data_type).map(|t| t.name()))
                    .collect::<Result<Vec<_>>>()?;
                let signature = format!("{name}({})", types.join(","));
                (same_inputs(catalog, &name, &signature)?, format!("{name}({})", types.join(", ")))
            }
            None => {
                let mut all = catalog.routine_overloads(&name);
                if all.len() > 1 {
                    return Err(Error::Raised {
                        code: "42725",
                        message: format!("{kind} name \"{name}\" is not unique"),
                        detail: None,
                        hint: Some(format!("Specify the argument list to select the {kind} unambiguously.")),
                    });
                }
                (all.pop(), name.clone())
            }
        };
        match found {
            Some((key, src)) => {
                if parse_create(&src)?.procedure != procedure {
                    return Err(Error::other("42809", format!("{name} is not a {kind}")));
                }
                catalog.drop_routine(&key)?;
                catalog.routines.lock().remove(&key);
            }
            None if if_exists && d.args.is_none() => {
                notices.push(format!("{kind} {shown}() does not exist, skipping"))
            }
            None if if_exists => notices.push(format!("{kind} {shown} does not exist, skipping")),
            None if d.args.is_none() => {
                return Err(Error::other("42883", format!("could not find a {kind} named \"{shown}\"")))
            }
            None => return Err(Error::other("42883", format!("{kind} {shown} does not exist"))),
        }
    }
    Ok((format!("DROP {}", kind.to_uppercase()), notices))
}
