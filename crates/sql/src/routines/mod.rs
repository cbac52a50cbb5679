//! Functions and procedures written in PL/pgSQL: what their definitions
//! declare, before anything is compiled.
//!
//! A routine is stored as its CREATE text (in the catalog's globals, so it
//! survives restarts). This module reads that text: the header (name,
//! parameters with their modes, types and defaults, the result, the
//! options) resolved against the catalog's types into a [`Declaration`],
//! the body's tokens into a statement tree, and the text forms by which
//! array and composite values reach a routine. It also keeps the composite
//! types made with CREATE TYPE.
//!
//! The rest of a routine's life is in the layers above:
//!
//! ```text
//!   CREATE FUNCTION ─▶ routines: declaration, body tree
//!                        ─▶ planner::routines: names ▶ slots, SQL ▶ plans
//!   SELECT f(..) / CALL p(..) ─▶ execution::routine: args into slots,
//!                                  run ops, each SQL op runs its plan
//! ```
//!
//! * `parse`: the body's tokens to a statement tree.
//! * `text`: the text forms of arrays and composite values.
//!
//! The virtual catalog (`pg_proc`, `\df`) describes routines from here,
//! without compiling them. Routine names live in one namespace per
//! database; a name may be overloaded by input types, each overload
//! stored under its signature (see `catalog::routine_name`).

pub(crate) mod parse;
pub(crate) mod text;

use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::names::{data_type, ident, object_parts};
use centum_types::DataType;
use sqlparser::ast;
use std::sync::Arc;

/// The set-parameter that marks a routine created with CREATE PROCEDURE
/// (the text is stored in CREATE FUNCTION form).
pub(crate) const PROCEDURE_MARK: &str = "centum.routine_kind";
/// The set-parameter that makes the server retry a routine's call on a
/// serialization failure or deadlock.
pub(crate) const RETRY_SETTING: &str = "centum.retry_on_conflict";

/// A composite type made with CREATE TYPE ... AS (...).
#[derive(Debug, PartialEq)]
pub(crate) struct Composite {
    pub name: String,
    pub fields: Vec<(String, DataType)>,
}

/// The element of an array.
#[derive(Clone, Debug)]
pub(crate) enum Elem {
    Scalar(DataType),
    Composite(Arc<Composite>),
}

impl Elem {
    fn name(&self) -> String {
        match self {
            Elem::Scalar(t) => t.sql_name(),
            Elem::Composite(c) => c.name.clone(),
        }
    }
}

/// The type of a parameter or variable.
#[derive(Clone, Debug)]
pub(crate) enum PlType {
    Scalar(DataType),
    Array(Elem),
    Composite(Arc<Composite>),
    /// `record`: its fields are set by the first query that fills it.
    Record,
}

impl PlType {
    pub(crate) fn name(&self) -> String {
        match self {
            PlType::Scalar(t) => t.sql_name(),
            PlType::Array(e) => format!("{}[]", e.name()),
            PlType::Composite(c) => c.name.clone(),
            PlType::Record => "record".into(),
        }
    }
}

/// Parameter modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    In,
    Out,
    InOut,
}

/// One parameter.
#[derive(Clone, Debug)]
pub(crate) struct Param {
    pub name: Option<String>,
    pub mode: Mode,
    pub ty: PlType,
    pub default: Option<ast::Expr>,
}

/// What a function returns.
#[derive(Clone, Debug)]
pub(crate) enum Returns {
    /// Procedures, and `RETURNS void`.
    Void,
    Scalar(DataType),
    /// `RETURNS SETOF type`.
    SetOf(DataType),
    /// `RETURNS TABLE (...)`: its columns are also variables.
    Table(Vec<(String, DataType)>),
    /// `RETURNS trigger`: called only by triggers, compiled once per
    /// trigger against its table's row (see `planner::triggers`).
    Trigger,
}

/// What a routine's CREATE statement declares: its name, kind,
/// parameters, result and options, resolved against the catalog's types.
#[derive(Debug)]
pub struct Declaration {
    pub name: String,
    pub procedure: bool,
    pub params: Vec<Param>,
    pub returns: Returns,
    /// Calls retried on 40001/40P01 when the routine is the whole
    /// statement of its own transaction.
    pub retry: u32,
    /// `name(type,type)`, for error context lines.
    pub signature: String,
    /// SECURITY DEFINER: its statements run with its owner's privileges
    /// (otherwise with the caller's).
    pub security_definer: bool,
    /// LANGUAGE sql: the body is SQL statements, and the last one's rows
    /// are the result.
    pub sql: bool,
}

impl Declaration {
    /// Parameters a caller passes (IN and INOUT).
    pub fn inputs(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.mode != Mode::Out)
    }

    /// Parameters returned by CALL (OUT and INOUT).
    pub fn outputs(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.mode != Mode::In)
    }

    /// Whether it returns a set (SETOF or TABLE).
    pub fn returns_set(&self) -> bool {
        matches!(self.returns, Returns::SetOf(_) | Returns::Table(_))
    }

    /// The result columns of a set-returning function.
    pub fn set_columns(&self) -> Option<Vec<(String, DataType)>> {
        match &self.returns {
            Returns::SetOf(t) => Some(vec![(self.name.clone(), t.clone())]),
            Returns::Table(cols) => Some(cols.clone()),
            _ => None,
        }
    }
}

/// A CREATE FUNCTION statement, not yet resolved against the catalog.
pub(crate) struct Definition {
    pub name: String,
    pub or_replace: bool,
    pub procedure: bool,
    pub params: Vec<ast::OperateFunctionArg>,
    pub returns: Option<ast::FunctionReturnType>,
    pub retry: u32,
    pub body: String,
    pub security_definer: bool,
    /// LANGUAGE sql (otherwise plpgsql).
    pub sql: bool,
}

pub(crate) fn parse_create(source: &str) -> Result<Definition> {
    let mut stmts = crate::parser::parse(source)?;
    match stmts.pop() {
        Some(ast::Statement::CreateFunction(cf)) if stmts.is_empty() => definition(&cf),
        _ => Err(Error::other("XX001", "stored routine definition is damaged")),
    }
}

pub(crate) fn definition(cf: &ast::CreateFunction) -> Result<Definition> {
    let parts = object_parts(&cf.name)?;
    let name = match parts.as_slice() {
        [n] | [_, n] => n.clone(),
        _ => return Err(Error::Syntax(format!("improper function name: {}", cf.name))),
    };
    // A body in SQL-standard form (`RETURN expr`) is SQL.
    let standard = matches!(cf.function_body, Some(ast::CreateFunctionBody::Return(_)));
    let sql = match &cf.language {
        Some(l) if ident(l) == "plpgsql" && !standard => false,
        Some(l) if ident(l) == "sql" => true,
        None if standard => true,
        Some(l) => return Err(Error::unsupported(format!("LANGUAGE {l}"))),
        None => return Err(Error::Syntax("no language specified".into())),
    };
    let body = match &cf.function_body {
        Some(ast::CreateFunctionBody::Return(e)) => format!("SELECT {e}"),
        Some(ast::CreateFunctionBody::AsBeforeOptions { body, .. })
        | Some(ast::CreateFunctionBody::AsAfterOptions(body)) => match body {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::DollarQuotedString(d) => d.value.clone(),
                ast::Value::SingleQuotedString(s) => s.clone(),
                _ => return Err(Error::Syntax("the body of a function is a string".into())),
            },
            _ => return Err(Error::Syntax("the body of a function is a string".into())),
        },
        _ => return Err(Error::Syntax("no function body specified".into())),
    };
    let mut procedure = false;
    let mut retry = 0;
    for sp in &cf.set_params {
        let key = object_parts(&sp.name)?.join(".");
        let value = match &sp.value {
            ast::FunctionSetValue::Values(v) if v.len() == 1 => {
                v[0].to_string().trim_matches('\'').to_string()
            }
            _ => return Err(Error::unsupported(format!("SET {key} in CREATE FUNCTION"))),
        };
        match key.as_str() {
            PROCEDURE_MARK => procedure = value == "procedure",
            RETRY_SETTING => {
                retry = value.parse::<u32>().ok().filter(|n| *n <= 1000).ok_or_else(|| {
                    Error::InvalidParameter(format!(
                        "invalid value for {RETRY_SETTING}: \"{value}\" (0 to 1000)"
                    ))
                })?
            }
            _ => return Err(Error::unsupported(format!("SET {key} in CREATE FUNCTION"))),
        }
    }
    if procedure && cf.return_type.is_some() {
        return Err(Error::Syntax("procedures cannot have a RETURNS clause".into()));
    }
    Ok(Definition {
        security_definer: matches!(cf.security, Some(ast::FunctionSecurity::Definer)),
        name,
        or_replace: cf.or_replace,
        procedure,
        params: cf.args.clone().unwrap_or_default(),
        returns: cf.return_type.clone(),
        retry,
        body,
        sql,
    })
}

/// The type a routine or variable declaration names.
pub(crate) fn pl_type(catalog: &Catalog, t: &ast::DataType) -> Result<PlType> {
    match t {
        ast::DataType::Array(def) => {
            let inner = match def {
                ast::ArrayElemTypeDef::SquareBracket(t, _) | ast::ArrayElemTypeDef::AngleBracket(t) => t,
                _ => return Err(Error::unsupported(format!("type {t}"))),
            };
            match pl_type(catalog, inner)? {
                PlType::Scalar(s) => Ok(PlType::Array(Elem::Scalar(s))),
                PlType::Composite(c) => Ok(PlType::Array(Elem::Composite(c))),
                _ => Err(Error::unsupported(format!("type {t}"))),
            }
        }
        ast::DataType::Custom(name, _) => {
            let parts = object_parts(name)?;
            let n = parts.last().cloned().unwrap_or_default();
            if n == "record" {
                return Ok(PlType::Record);
            }
            match composite(catalog, &n)? {
                Some(c) => Ok(PlType::Composite(c)),
                None => data_type(t).map(PlType::Scalar),
            }
        }
        _ => data_type(t).map(PlType::Scalar),
    }
}

/// Composite type `name`, if there is one.
pub(crate) fn composite(catalog: &Catalog, name: &str) -> Result<Option<Arc<Composite>>> {
    let Some(source) = catalog.type_source(name) else { return Ok(None) };
    let mut stmts = crate::parser::parse(&source)?;
    let Some(ast::Statement::CreateType {
        representation: Some(ast::UserDefinedTypeRepresentation::Composite { attributes }),
        ..
    }) = stmts.pop()
    else {
        return Err(Error::other("XX001", "stored type definition is damaged"));
    };
    let fields =
        attributes.iter().map(|a| Ok((ident(&a.name), data_type(&a.data_type)?))).collect::<Result<_>>()?;
    Ok(Some(Arc::new(Composite { name: name.to_string(), fields })))
}

pub(crate) fn resolve_header(catalog: &Catalog, def: &Definition) -> Result<Declaration> {
    let mut params = Vec::new();
    for a in &def.params {
        let mode = match a.mode {
            None | Some(ast::ArgMode::In) => Mode::In,
            Some(ast::ArgMode::Out) => Mode::Out,
            Some(ast::ArgMode::InOut) => Mode::InOut,
            Some(ast::ArgMode::Variadic) => return Err(Error::unsupported("VARIADIC parameters")),
        };
        let ty = pl_type(catalog, &a.data_type)?;
        if matches!(ty, PlType::Record) {
            return Err(Error::unsupported("record parameters"));
        }
        if mode != Mode::In && !matches!(ty, PlType::Scalar(_)) {
            return Err(Error::unsupported("OUT parameters of array or composite type"));
        }
        params.push(Param { name: a.name.as_ref().map(ident), mode, ty, default: a.default_expr.clone() });
    }
    let scalar = |t: &ast::DataType| -> Result<DataType> {
        match pl_type(catalog, t)? {
            PlType::Scalar(s) => Ok(s),
            other => Err(Error::unsupported(format!("functions returning {}", other.name()))),
        }
    };
    let outs: Vec<&Param> = params.iter().filter(|p| p.mode != Mode::In).collect();
    let returns = match &def.returns {
        None if def.procedure => Returns::Void,
        None if outs.len() == 1 => match &outs[0].ty {
            PlType::Scalar(t) => Returns::Scalar(t.clone()),
            _ => unreachable!("OUT parameters are scalar"),
        },
        None if outs.is_empty() => {
            return Err(Error::other("42P13", "function result type must be specified"))
        }
        None => return Err(Error::unsupported("functions with several OUT parameters (use RETURNS TABLE)")),
        Some(ast::FunctionReturnType::SetOf(t)) => Returns::SetOf(scalar(t)?),
        Some(ast::FunctionReturnType::DataType(ast::DataType::Table(Some(cols)))) => Returns::Table(
            cols.iter().map(|c| Ok((ident(&c.name), scalar(&c.data_type)?))).collect::<Result<_>>()?,
        ),
        Some(ast::FunctionReturnType::DataType(ast::DataType::Custom(n, _)))
            if object_parts(n)?.last().is_some_and(|l| l == "void") =>
        {
            Returns::Void
        }
        Some(ast::FunctionReturnType::DataType(ast::DataType::Trigger)) => {
            if !params.is_empty() {
                return Err(Error::other("42P13", "trigger functions cannot have declared arguments"));
            }
            Returns::Trigger
        }
        Some(ast::FunctionReturnType::DataType(t)) => Returns::Scalar(scalar(t)?),
    };
    if def.sql && matches!(returns, Returns::Trigger) {
        return Err(Error::other("42P13", "SQL functions cannot return type trigger"));
    }
    if !def.procedure && !outs.is_empty() && !matches!((&def.returns, outs.len()), (None, 1)) {
        return Err(Error::unsupported("OUT parameters together with RETURNS"));
    }
    let signature = format!(
        "{}({})",
        def.name,
        params.iter().filter(|p| p.mode != Mode::Out).map(|p| p.ty.name()).collect::<Vec<_>>().join(",")
    );
    Ok(Declaration {
        name: def.name.clone(),
        procedure: def.procedure,
        params,
        returns,
        retry: def.retry,
        signature,
        security_definer: def.security_definer,
        sql: def.sql,
    })
}

/// The CREATE text of the routine `name()` without input parameters: what
/// a trigger's EXECUTE FUNCTION names, whatever overloads the name has.
pub(crate) fn without_inputs(catalog: &Catalog, name: &str) -> Result<Option<String>> {
    for (_, source) in catalog.routine_overloads(name) {
        if resolve_header(catalog, &parse_create(&source)?)?.inputs().next().is_none() {
            return Ok(Some(source));
        }
    }
    Ok(None)
}

/// What the virtual catalog shows of a routine (`pg_proc`, `\\df`).
pub(crate) struct RoutineInfo {
    pub name: String,
    pub procedure: bool,
    /// Returns a set (SETOF or TABLE).
    pub retset: bool,
    /// `pg_get_function_result`: `integer`, `SETOF integer`,
    /// `TABLE(a integer)`, `void`; `None` for a procedure.
    pub result: Option<String>,
    /// The result's type OID (`void` 2278, `record` 2249).
    pub result_oid: i32,
    /// `pg_get_function_arguments`: `a integer, OUT b text DEFAULT 1`.
    pub arguments: String,
    /// Type OIDs of the IN and INOUT parameters (0 for array and
    /// composite ones, which have no OID).
    pub arg_oids: Vec<i32>,
    /// The stored CREATE text (`pg_get_functiondef`).
    pub source: String,
    /// The body (`prosrc`).
    pub body: String,
    /// Its settings as `name=value` (`proconfig`): the retry budget.
    pub config: Vec<String>,
    /// LANGUAGE sql (otherwise plpgsql).
    pub sql: bool,
}

/// Describes the routine stored under `key` from its stored text; `None`
/// if there is no such routine or its text no longer resolves (a dropped
/// type).
pub(crate) fn describe(catalog: &Catalog, key: &str) -> Option<RoutineInfo> {
    let source = catalog.routine_by_key(key)?;
    let def = parse_create(&source).ok()?;
    let c = resolve_header(catalog, &def).ok()?;
    let oid = |t: &PlType| match t {
        PlType::Scalar(t) => t.pg_oid() as i32,
        _ => 0,
    };
    let arguments = c
        .params
        .iter()
        .map(|p| {
            let mode = match p.mode {
                Mode::In => "",
                Mode::Out => "OUT ",
                Mode::InOut => "INOUT ",
            };
            let name = p.name.as_ref().map(|n| format!("{n} ")).unwrap_or_default();
            let default = p.default.as_ref().map(|d| format!(" DEFAULT {d}")).unwrap_or_default();
            format!("{mode}{name}{}{default}", p.ty.name())
        })
        .collect::<Vec<_>>()
        .join(", ");
    let (result, result_oid, retset) = match &c.returns {
        _ if c.procedure => (None, 2278, false),
        Returns::Void => (Some("void".to_string()), 2278, false),
        Returns::Trigger => (Some("trigger".to_string()), 2279, false),
        Returns::Scalar(t) => (Some(t.sql_name()), t.pg_oid() as i32, false),
        Returns::SetOf(t) => (Some(format!("SETOF {}", t.sql_name())), t.pg_oid() as i32, true),
        Returns::Table(cols) => (
            Some(format!(
                "TABLE({})",
                cols.iter().map(|(n, t)| format!("{n} {}", t.sql_name())).collect::<Vec<_>>().join(", ")
            )),
            2249,
            true,
        ),
    };
    Some(RoutineInfo {
        name: c.name.clone(),
        procedure: c.procedure,
        retset,
        result,
        result_oid,
        arguments,
        arg_oids: c.inputs().map(|p| oid(&p.ty)).collect(),
        config: if def.retry > 0 { vec![format!("{RETRY_SETTING}={}", def.retry)] } else { vec![] },
        sql: def.sql,
        body: def.body,
        source,
    })
}

/// CREATE TYPE name AS (field type, ...).
pub(crate) fn create_type(catalog: &Catalog, stmt: &ast::Statement) -> Result<String> {
    let ast::Statement::CreateType { name, representation } = stmt else { unreachable!("CREATE TYPE") };
    let Some(ast::UserDefinedTypeRepresentation::Composite { attributes }) = representation else {
        return Err(Error::unsupported("CREATE TYPE other than a composite type"));
    };
    let parts = object_parts(name)?;
    let n = parts.last().cloned().unwrap_or_default();
    if attributes.is_empty() {
        return Err(Error::unsupported("a composite type without fields"));
    }
    let mut seen = std::collections::HashSet::new();
    for a in attributes {
        if let Err(e) = data_type(&a.data_type) {
            // A type of the catalog's own, which a field cannot have yet.
            if crate::enums::data_type(catalog, &[], &a.data_type).is_ok() {
                return Err(Error::unsupported(format!(
                    "composite type field {} of enum or composite type {}",
                    ident(&a.name),
                    a.data_type
                )));
            }
            return Err(e);
        }
        if !seen.insert(ident(&a.name)) {
            return Err(Error::Duplicate {
                code: "42701",
                message: format!("column \"{}\" specified more than once", ident(&a.name)),
            });
        }
    }
    catalog.create_type(&n, stmt.to_string())?;
    Ok("CREATE TYPE".into())
}

/// DROP TYPE; refused while a routine's parameters use the type.
pub(crate) fn drop_types(
    catalog: &Catalog,
    names: &[ast::ObjectName],
    if_exists: bool,
) -> Result<(String, Vec<String>)> {
    let mut notices = Vec::new();
    for name in names {
        let n = object_parts(name)?.last().cloned().unwrap_or_default();
        if catalog.type_source(&n).is_none() {
            if if_exists {
                notices.push(format!("type \"{n}\" does not exist, skipping"));
                continue;
            }
            return Err(Error::UndefinedObject(format!("type \"{n}\" does not exist")));
        }
        for (key, src) in catalog.routine_entries() {
            let r = crate::catalog::routine_name(&key);
            let def = parse_create(&src)?;
            let uses = def.params.iter().any(|p| {
                let t = p.data_type.to_string().to_lowercase();
                t == n || t == format!("{n}[]")
            });
            if uses {
                return Err(Error::other(
                    "2BP01",
                    format!("cannot drop type {n} because other objects depend on it: function {r} uses it"),
                ));
            }
        }
        catalog.drop_type(&n)?;
    }
    Ok(("DROP TYPE".into(), notices))
}

/// Rewrites `CREATE [OR REPLACE] PROCEDURE name(args) ...` into the
/// CREATE FUNCTION form the SQL parser reads, marked as a procedure.
/// `None` when `sql` has no such statement.
pub(crate) fn rewrite_create_procedure(sql: &str) -> Option<String> {
    if !sql.as_bytes().windows(9).any(|w| w.eq_ignore_ascii_case(b"procedure")) {
        return None;
    }
    let toks = parse::lex(sql).ok()?;
    let mut out = String::with_capacity(sql.len() + 48);
    let mut copied = 0;
    let mut i = 0;
    let mut statement_start = true;
    let mut changed = false;
    while i < toks.len() {
        let w = |k: usize, kw: &str| toks.get(k).is_some_and(|t| parse::is_word(&t.t, kw));
        if statement_start && w(i, "create") {
            let mut k = i + 1;
            if w(k, "or") && w(k + 1, "replace") {
                k += 2;
            }
            if w(k, "procedure") {
                // Find the parameter list's closing parenthesis.
                let mut j = k + 1;
                while j < toks.len() && toks[j].t != sqlparser::tokenizer::Token::LParen {
                    j += 1;
                }
                let mut depth = 0;
                while j < toks.len() {
                    match toks[j].t {
                        sqlparser::tokenizer::Token::LParen => depth += 1,
                        sqlparser::tokenizer::Token::RParen => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                if j < toks.len() {
                    out.push_str(&sql[copied..toks[k].start]);
                    out.push_str("FUNCTION");
                    out.push_str(&sql[toks[k].end..toks[j].end]);
                    out.push_str(&format!(" SET {PROCEDURE_MARK} = 'procedure'"));
                    copied = toks[j].end;
                    changed = true;
                    i = j;
                }
            }
        }
        statement_start = toks[i].t == sqlparser::tokenizer::Token::SemiColon;
        i += 1;
    }
    if !changed {
        return None;
    }
    out.push_str(&sql[copied..]);
    Some(out)
}
