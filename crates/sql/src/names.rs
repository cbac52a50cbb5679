//! Names as PostgreSQL reads them: identifiers folded to lower case unless
//! quoted, dotted object names split into their parts, the engine's name
//! for a table in a schema, and SQL type names mapped to Centum's types.
//!
//! Every layer that meets a name in a statement uses these, so they sit at
//! the bottom of the crate, next to the parser; they look nothing up.

use crate::error::{Error, Result};
use centum_types::DataType;
use sqlparser::ast;

/// A function's lower-case name (schema `pg_catalog` dropped).
pub(crate) fn function_name(f: &ast::Function) -> Result<String> {
    let parts = object_parts(&f.name)?;
    match parts.as_slice() {
        [n] | [_, n] => Ok(n.clone()),
        _ => Err(Error::Syntax(format!("improper function name: {}", f.name))),
    }
}

/// An identifier as PostgreSQL folds it: lower case unless quoted.
pub(crate) fn ident(id: &ast::Ident) -> String {
    if id.quote_style.is_some() {
        id.value.clone()
    } else {
        id.value.to_lowercase()
    }
}

/// The column `text` names, when the SQL expression `text` is a bare
/// column name (an index key as stored in an `IndexShape`).
pub(crate) fn plain_identifier(text: &str) -> Option<String> {
    match crate::planner::dml::parse_expr(text).ok()? {
        ast::Expr::Identifier(id) => Some(ident(&id)),
        _ => None,
    }
}

/// The folded parts of a dotted name.
pub(crate) fn object_parts(name: &ast::ObjectName) -> Result<Vec<String>> {
    name.0
        .iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(id) => Ok(ident(id)),
            other => Err(Error::Syntax(format!("unexpected name part {other}"))),
        })
        .collect()
}

/// Engine name of table `t` in schema `s`.
pub(crate) fn qualify(s: &str, t: &str) -> String {
    if s == "public" || s == "pg_catalog" {
        t.to_string()
    } else {
        format!("{s}.{t}")
    }
}

pub(crate) fn sqlparser_object_name(text: &str) -> Result<ast::ObjectName> {
    let parts = text
        .split('.')
        .map(|p| {
            let quoted = p.starts_with('"') && p.ends_with('"') && p.len() >= 2;
            let v = if quoted { p[1..p.len() - 1].to_string() } else { p.to_string() };
            ast::ObjectNamePart::Identifier(if quoted {
                ast::Ident::with_quote('"', v)
            } else {
                ast::Ident::new(v)
            })
        })
        .collect();
    Ok(ast::ObjectName(parts))
}

/// Converts a SQL type name.
pub(crate) fn data_type(t: &ast::DataType) -> Result<DataType> {
    use ast::DataType as T;
    let len = |l: &Option<ast::CharacterLength>| -> Option<u32> {
        match l {
            Some(ast::CharacterLength::IntegerLength { length, .. }) => {
                Some((*length).min(u32::MAX as u64) as u32)
            }
            _ => None,
        }
    };
    let numeric = |info: &ast::ExactNumberInfo| -> Result<DataType> {
        Ok(match info {
            ast::ExactNumberInfo::None => DataType::numeric(None, None)?,
            ast::ExactNumberInfo::Precision(p) => DataType::numeric(Some(*p as u32), None)?,
            ast::ExactNumberInfo::PrecisionAndScale(p, s) => {
                if *s < 0 {
                    return Err(Error::InvalidParameter(format!(
                        "NUMERIC scale {s} must be between 0 and precision {p}"
                    )));
                }
                DataType::numeric(Some(*p as u32), Some(*s as u32))?
            }
        })
    };
    Ok(match t {
        T::SmallInt(_) | T::Int2(_) => DataType::SmallInt,
        T::Int(_) | T::Integer(_) | T::Int4(_) => DataType::Integer,
        T::BigInt(_) | T::Int8(_) => DataType::BigInt,
        T::Real | T::Float4 | T::Double(_) | T::DoublePrecision | T::Float8 | T::Float(_) | T::Float64 => {
            DataType::Double
        }
        T::Numeric(i) | T::Decimal(i) | T::Dec(i) => numeric(i)?,
        T::Varchar(l) | T::CharacterVarying(l) | T::CharVarying(l) => DataType::varchar(len(l))?,
        T::Char(l) | T::Character(l) => DataType::bpchar(len(l))?,
        T::Text | T::String(_) => DataType::Text,
        T::Bytea => DataType::Bytea,
        T::Bool | T::Boolean => DataType::Boolean,
        T::Date => DataType::Date,
        T::Timestamp(_, tz) => match tz {
            ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz => DataType::TimestampTz,
            _ => DataType::Timestamp,
        },
        T::Uuid => DataType::Uuid,
        T::JSON => DataType::Json,
        T::JSONB => DataType::Jsonb,
        T::TsVector => DataType::TsVector,
        T::TsQuery => DataType::TsQuery,
        T::Interval { .. } => DataType::Interval,
        T::Time(_, ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz) => {
            return Err(Error::unsupported("type time with time zone"))
        }
        T::Time(..) => DataType::Time,
        T::Regclass => DataType::Text,
        T::Array(def) => match def {
            ast::ArrayElemTypeDef::AngleBracket(t)
            | ast::ArrayElemTypeDef::SquareBracket(t, _)
            | ast::ArrayElemTypeDef::Parenthesis(t)
            | ast::ArrayElemTypeDef::Qualified(t, _) => DataType::array_of(data_type(t)?)?,
            ast::ArrayElemTypeDef::None => {
                return Err(Error::Syntax("array type without an element type".into()))
            }
        },
        T::Custom(name, mods) => {
            let n = object_parts(name)?.last().cloned().unwrap_or_default();
            match n.as_str() {
                "int2" => DataType::SmallInt,
                "int4" => DataType::Integer,
                "oid" => DataType::Oid,
                "int8" => DataType::BigInt,
                "float4" | "float8" => DataType::Double,
                "timestamptz" => DataType::TimestampTz,
                "bpchar" => DataType::bpchar(mods.first().and_then(|m| m.parse().ok()))?,
                "name" | "citext" | "text" => DataType::Text,
                "bool" | "boolean" => DataType::Boolean,
                "varchar" => DataType::varchar(mods.first().and_then(|m| m.parse().ok()))?,
                "numeric" | "decimal" => DataType::numeric(None, None)?,
                "date" => DataType::Date,
                "timestamp" => DataType::Timestamp,
                "bytea" => DataType::Bytea,
                "uuid" => DataType::Uuid,
                "interval" => DataType::Interval,
                "time" => DataType::Time,
                "json" => DataType::Json,
                "jsonb" => DataType::Jsonb,
                "tsvector" => DataType::TsVector,
                "tsquery" => DataType::TsQuery,
                "timetz" => return Err(Error::unsupported("type time with time zone")),
                "serial" | "serial4" | "bigserial" | "serial8" | "smallserial" | "serial2" => {
                    return Err(Error::UndefinedObject(format!("type \"{n}\" does not exist")))
                }
                _ => return Err(Error::UndefinedObject(format!("type \"{n}\" does not exist"))),
            }
        }
        other => {
            return Err(Error::UndefinedObject(format!(
                "type \"{}\" does not exist",
                other.to_string().to_lowercase()
            )))
        }
    })
}

/// Quotes an identifier where PostgreSQL would.
pub(crate) fn quote_ident(s: &str) -> String {
    let plain = s.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

/// Quotes a string constant as PostgreSQL's `quote_literal` does.
pub(crate) fn quote_literal(s: &str) -> String {
    let body = s.replace('\'', "''");
    if s.contains('\\') {
        format!("E'{}'", body.replace('\\', "\\\\"))
    } else {
        format!("'{body}'")
    }
}
