//! Enum types in SQL: finding them by name, CREATE TYPE ... AS ENUM,
//! ALTER TYPE ... ADD VALUE / RENAME VALUE, DROP TYPE, and the `enum_*`
//! functions.
//!
//! The catalog keeps each type's labels (see [`crate::catalog::EnumEntry`]);
//! a column's [`DataType::Enum`] names the type by OID. A type named in a
//! statement is looked up with its labels, so text input checks against
//! the labels as they are now; a type read from a table definition carries
//! none, and [`fresh`] fills them in where a value is parsed for it.
//!
//! ```text
//!   CREATE TYPE mood AS ENUM ('sad', 'happy')   catalog: mood, oid, labels
//!   CREATE TABLE t (m mood)                     column type Enum(oid)
//!   INSERT INTO t VALUES ('happy')              'happy' parsed with fresh labels
//!   stored row                                  position 2.0 + "happy"
//! ```
//!
//! RENAME VALUE changes the label stored in rows too, so it rewrites the
//! tables with a column of the type (as ALTER TABLE does).

use crate::catalog::{Catalog, EnumEntry, TypeEntry};
use crate::error::{Error, Result};
use crate::names::{object_parts, qualify};
use centum_types::composite::CompositeDef;
use centum_types::enums::{self, EnumLabel, Placement};
use centum_types::{CompositeType, DataType, Value};
use sqlparser::ast;

/// The enum type `name` names, looked up through `search_path` when it is
/// not qualified.
pub(crate) fn lookup(
    catalog: &Catalog,
    search_path: &[String],
    name: &ast::ObjectName,
) -> Result<Option<EnumEntry>> {
    let parts = object_parts(name)?;
    Ok(match parts.as_slice() {
        [n] => search_path
            .iter()
            .map(String::as_str)
            .chain(["public"])
            .find_map(|s| catalog.enum_type(&qualify(s, n))),
        [s, n] | [_, s, n] => catalog.enum_type(&qualify(s, n)),
        _ => None,
    })
}

/// The engine name of type `name` for CREATE TYPE: in the first schema of
/// the search path that exists, unless qualified.
fn create_name(catalog: &Catalog, search_path: &[String], name: &ast::ObjectName) -> Result<String> {
    let parts = object_parts(name)?;
    match parts.as_slice() {
        [n] => {
            let schema = search_path.iter().find(|s| catalog.has_schema(s));
            Ok(qualify(schema.map_or("public", |s| s.as_str()), n))
        }
        [s, n] | [_, s, n] => {
            if !catalog.has_schema(s) {
                return Err(Error::other("3F000", format!("schema \"{s}\" does not exist")));
            }
            Ok(qualify(s, n))
        }
        _ => Err(Error::Syntax(format!("improper qualified name (too many dotted names): {name}"))),
    }
}

/// A SQL type name as a type: a built-in one, or an enum or composite
/// type (or an array of one).
pub(crate) fn data_type(catalog: &Catalog, search_path: &[String], t: &ast::DataType) -> Result<DataType> {
    match crate::names::data_type(t) {
        Err(Error::UndefinedObject(m)) => {
            let found = match t {
                ast::DataType::Custom(name, _) => user_type(catalog, search_path, name)?,
                ast::DataType::Array(
                    ast::ArrayElemTypeDef::AngleBracket(inner)
                    | ast::ArrayElemTypeDef::SquareBracket(inner, _)
                    | ast::ArrayElemTypeDef::Parenthesis(inner)
                    | ast::ArrayElemTypeDef::Qualified(inner, _),
                ) => match &**inner {
                    ast::DataType::Custom(name, _) => {
                        user_type(catalog, search_path, name)?.map(DataType::array_of).transpose()?
                    }
                    _ => None,
                },
                _ => None,
            };
            found.ok_or(Error::UndefinedObject(m))
        }
        r => r,
    }
}

/// The enum or composite type `name` names.
fn user_type(catalog: &Catalog, search_path: &[String], name: &ast::ObjectName) -> Result<Option<DataType>> {
    if let Some(e) = lookup(catalog, search_path, name)? {
        return Ok(Some(DataType::Enum(e.data_type())));
    }
    let n = object_parts(name)?.last().cloned().unwrap_or_default();
    match catalog.composite_entry(&n) {
        Some(entry) => composite_type(catalog, &entry).map(|t| Some(DataType::Composite(t))),
        None => Ok(None),
    }
}

/// Composite type `entry` as columns and expressions carry it: its OID,
/// name and fields.
pub(crate) fn composite_type(catalog: &Catalog, entry: &TypeEntry) -> Result<CompositeType> {
    let c = crate::routines::composite(catalog, &entry.name)?
        .ok_or_else(|| Error::UndefinedObject(format!("type \"{}\" does not exist", entry.name)))?;
    Ok(CompositeType::new(CompositeDef {
        oid: entry.oid,
        name: crate::catalog::display_name(&entry.name),
        fields: c.fields.clone(),
    }))
}

/// `ty` with the labels its enum type (or array element's) has now: what a
/// value is parsed against. Other types are returned as they are.
pub(crate) fn fresh(catalog: &Catalog, ty: &DataType) -> DataType {
    match ty {
        DataType::Enum(t) => {
            catalog.enum_by_oid(t.oid()).map_or_else(|| ty.clone(), |e| DataType::Enum(e.data_type()))
        }
        DataType::Array(elem) if matches!(**elem, DataType::Enum(_)) => {
            DataType::Array(Box::new(fresh(catalog, elem)))
        }
        _ => ty.clone(),
    }
}

/// Whether `ty` is enum or composite type `oid` or an array of it.
fn uses(ty: &DataType, oid: u32) -> bool {
    match ty {
        DataType::Enum(t) => t.oid() == oid,
        DataType::Composite(t) => t.oid() == oid,
        DataType::Array(e) => uses(e, oid),
        _ => false,
    }
}

/// A label as written: a string constant.
fn label(id: &ast::Ident) -> String {
    id.value.clone()
}

/// CREATE TYPE name AS ENUM ('a', 'b', ...).
pub(crate) fn create(
    catalog: &Catalog,
    search_path: &[String],
    name: &ast::ObjectName,
    labels: &[ast::Ident],
) -> Result<String> {
    let n = create_name(catalog, search_path, name)?;
    let labels: Vec<String> = labels.iter().map(label).collect();
    let mut seen = std::collections::HashSet::new();
    for l in &labels {
        enums::check_label(l)?;
        if !seen.insert(l.as_str()) {
            return Err(Error::other("23505", format!("enum label \"{l}\" used more than once")));
        }
    }
    catalog.create_enum(&n, &labels)?;
    Ok("CREATE TYPE".into())
}

/// ALTER TYPE name ADD VALUE / RENAME VALUE.
pub(crate) fn alter(
    catalog: &Catalog,
    search_path: &[String],
    at: &ast::AlterType,
) -> Result<(String, Vec<String>)> {
    let Some(entry) = lookup(catalog, search_path, &at.name)? else {
        let n = object_parts(&at.name)?.last().cloned().unwrap_or_default();
        if catalog.type_source(&n).is_some() {
            return Err(Error::other("42809", format!("{n} is not an enum")));
        }
        return Err(Error::UndefinedObject(format!("type \"{}\" does not exist", at.name)));
    };
    let mut notices = Vec::new();
    match &at.operation {
        ast::AlterTypeOperation::AddValue(add) => {
            let new = label(&add.value);
            let placement = match &add.position {
                None => Placement::Last,
                Some(ast::AlterTypeAddValuePosition::Before(n)) => Placement::Before(label(n)),
                Some(ast::AlterTypeAddValuePosition::After(n)) => Placement::After(label(n)),
            };
            let added = catalog.alter_enum(&entry.name, |e, next_oid| {
                let labels: Vec<EnumLabel> = e.labels.iter().map(|(_, l)| l.clone()).collect();
                let Some(with) = enums::add_label(&labels, &new, &placement)? else {
                    if add.if_not_exists {
                        return Ok(None);
                    }
                    return Err(Error::Duplicate {
                        code: "42710",
                        message: format!("enum label \"{new}\" already exists"),
                    });
                };
                let oid_of = |l: &EnumLabel| {
                    e.labels.iter().find(|(_, x)| x.label == l.label).map_or(next_oid, |(o, _)| *o)
                };
                Ok(Some(with.iter().map(|l| (oid_of(l), l.clone())).collect()))
            })?;
            if !added {
                notices.push(format!("enum label \"{new}\" already exists, skipping"));
            }
        }
        ast::AlterTypeOperation::RenameValue(r) => {
            let (from, to) = (label(&r.from), label(&r.to));
            catalog.alter_enum(&entry.name, |e, _| {
                let labels: Vec<EnumLabel> = e.labels.iter().map(|(_, l)| l.clone()).collect();
                if labels.iter().any(|l| *l.label == *to) {
                    return Err(Error::Duplicate {
                        code: "42710",
                        message: format!("enum label \"{to}\" already exists"),
                    });
                }
                let renamed = enums::rename_label(&labels, &from, &to)?;
                Ok(Some(e.labels.iter().zip(renamed).map(|((o, _), l)| (*o, l)).collect()))
            })?;
        }
        ast::AlterTypeOperation::Rename(_) => return Err(Error::unsupported("ALTER TYPE ... RENAME TO")),
    }
    Ok(("ALTER TYPE".into(), notices))
}

/// The columns that use enum type `oid` (or arrays of it): (engine
/// table name, column name, column number).
pub(crate) fn dependent_columns(catalog: &Catalog, oid: u32) -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    let mut names = catalog.db().table_names();
    names.sort();
    for t in names {
        let Ok(table) = catalog.db().table(&t) else { continue };
        for (i, c) in table.columns().iter().enumerate() {
            if uses(&c.ty, oid) {
                out.push((t.clone(), c.name.clone(), i));
            }
        }
    }
    out
}

/// The tables to rewrite after renaming a label of enum type `entry`, with
/// the map that relabels a row: the stored label changes, the position
/// stays.
pub(crate) fn relabel(row: &[Value], columns: &[usize], entry: &EnumEntry) -> Vec<Value> {
    let ty = entry.data_type();
    let fix = |v: &Value| -> Value {
        match v {
            Value::Enum(e) if e.ty.oid() == entry.oid => {
                match ty.labels().iter().find(|l| l.position == e.position) {
                    Some(l) => ty.value(l),
                    None => v.clone(),
                }
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|x| match x {
                        Value::Enum(e) if e.ty.oid() == entry.oid => ty
                            .labels()
                            .iter()
                            .find(|l| l.position == e.position)
                            .map_or_else(|| x.clone(), |l| ty.value(l)),
                        _ => x.clone(),
                    })
                    .collect(),
            ),
            _ => v.clone(),
        }
    };
    let mut out = row.to_vec();
    for &c in columns {
        if let Some(v) = out.get_mut(c) {
            *v = fix(v);
        }
    }
    out
}

/// The enum type of a function's argument type, for `enum_first` and
/// the like (42883 for any other type).
fn enum_of(catalog: &Catalog, f: &str, ty: &Option<DataType>) -> Result<centum_types::EnumType> {
    match ty {
        Some(DataType::Enum(t)) => match fresh(catalog, &DataType::Enum(t.clone())) {
            DataType::Enum(t) => Ok(t),
            _ => unreachable!("fresh keeps an enum type an enum type"),
        },
        other => Err(Error::UndefinedFunction(format!(
            "{f}({})",
            other.as_ref().map_or_else(|| "unknown".to_string(), |t| t.sql_name())
        ))),
    }
}

/// `enum_first(x)`, `enum_last(x)`, `enum_range(x)`: answers that depend
/// only on the type of `x`, so they are constants of the plan.
pub(crate) fn type_function(catalog: &Catalog, f: &str, arg: &Option<DataType>) -> Result<(Value, DataType)> {
    let t = enum_of(catalog, f, arg)?;
    let labels = t.labels();
    Ok(match f {
        "enum_first" => (labels.first().map_or(Value::Null, |l| t.value(l)), DataType::Enum(t.clone())),
        "enum_last" => (labels.last().map_or(Value::Null, |l| t.value(l)), DataType::Enum(t.clone())),
        _ => (
            Value::Array(labels.iter().map(|l| t.value(l)).collect()),
            DataType::array_of(DataType::Enum(t.clone()))?,
        ),
    })
}

/// `enum_range(lo, hi)`: the labels from `lo` to `hi` (NULL: from the
/// first, to the last), given every label of the type in order.
pub(crate) fn range_between(all: &Value, lo: &Value, hi: &Value) -> Value {
    let Value::Array(items) = all else { return Value::Null };
    Value::Array(
        items.iter().filter(|v| (lo.is_null() || *v >= lo) && (hi.is_null() || *v <= hi)).cloned().collect(),
    )
}

/// The type of `enum_range(a, b)`'s arguments, with the array of all its
/// labels that the call is evaluated with.
pub(crate) fn range_labels(
    catalog: &Catalog,
    a: &Option<DataType>,
    b: &Option<DataType>,
) -> Result<(Value, DataType)> {
    let ty = match (a, b) {
        (Some(t @ DataType::Enum(_)), _) | (None, Some(t @ DataType::Enum(_))) => Some(t.clone()),
        _ => a.clone(),
    };
    if let (Some(x), Some(y)) = (a, b) {
        if x != y {
            return Err(Error::UndefinedFunction(format!("enum_range({x}, {y})")));
        }
    }
    type_function(catalog, "enum_range", &ty)
}

/// Refuses to drop enum type `entry` while a column uses it (2BP01), or
/// names the columns CASCADE drops with it.
pub(crate) fn check_drop(
    catalog: &Catalog,
    oid: u32,
    name: &str,
    cascade: bool,
) -> Result<Vec<(String, String)>> {
    let deps = dependent_columns(catalog, oid);
    if deps.is_empty() {
        return Ok(vec![]);
    }
    let name = crate::catalog::display_name(name);
    if !cascade {
        return Err(Error::other(
            "2BP01",
            format!("cannot drop type {name} because other objects depend on it"),
        ));
    }
    Ok(deps.into_iter().map(|(t, c, _)| (t, c)).collect())
}
