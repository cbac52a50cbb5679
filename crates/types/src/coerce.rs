//! Getting a value into a column: parsing text input, assignment
//! conversion, and the check that a value already fits.
//!
//! [`Value::coerce_to`] implements PostgreSQL's *assignment* casts, the ones
//! INSERT and UPDATE apply to make an expression fit its column; its doc
//! carries the table of conversions, since callers need it more than
//! readers of this file. The rule of thumb: what PostgreSQL accepts in an
//! INSERT without an explicit cast is accepted here, with the same result
//! and the same error. Text is parsed with the column type's input function
//! because SQL string literals reach the engine as [`Value::Text`].
//!
//! [`Value::fits`] is the cheap check the engine makes before storing: true
//! when the value already has the column's representation, so a coercion
//! would change nothing.

use rust_decimal::Decimal;

use crate::datatype::DataType;
use crate::datetime::{Date, Time, Timestamp, TimestampTz};
use crate::error::TypeError;
use crate::interval::Interval;
use crate::numeric::{apply_typmod, fits_typmod, parse_numeric};
use crate::text::{char_len, fit_char, fit_varchar, parse_bool, parse_bytea, parse_int, parse_uuid};
use crate::value::Value;

impl Value {
    /// Parses PostgreSQL text input for a column of type `ty`, applying the
    /// column's modifiers as an assignment would (`numeric(p,s)` rounding and
    /// overflow, `varchar(n)`/`char(n)` length).
    pub fn parse(text: &str, ty: &DataType) -> Result<Value, TypeError> {
        Ok(match ty {
            DataType::Boolean => Value::Boolean(parse_bool(text)?),
            // The range bounds make the narrowing casts below lossless.
            DataType::SmallInt => {
                Value::SmallInt(parse_int(text, "smallint", i16::MIN.into(), i16::MAX.into())? as i16)
            }
            DataType::Integer => {
                Value::Integer(parse_int(text, "integer", i32::MIN.into(), i32::MAX.into())? as i32)
            }
            DataType::BigInt => Value::BigInt(parse_int(text, "bigint", i64::MIN, i64::MAX)?),
            DataType::Oid => Value::Integer(parse_int(text, "oid", 0, i32::MAX.into())? as i32),
            DataType::Double => Value::Double(crate::float::parse_f64(text)?),
            DataType::Numeric { precision, scale } => {
                Value::Numeric(apply_typmod(parse_numeric(text)?, *precision, *scale)?)
            }
            DataType::Text | DataType::Varchar(None) => Value::Text(text.to_string()),
            // Numbers separated by blanks, kept as single spaces.
            DataType::Int2Vector | DataType::OidVector => {
                let elem = ty.vector_element().unwrap_or(DataType::SmallInt);
                let items: Vec<String> = text
                    .split_ascii_whitespace()
                    .map(|n| Value::parse(n, &elem).map(|v| v.to_string()))
                    .collect::<Result<_, _>>()?;
                Value::Text(items.join(" "))
            }
            DataType::Varchar(Some(n)) => Value::Text(fit_varchar(text.to_string(), *n)?),
            DataType::Char(n) => Value::Text(fit_char(text.to_string(), *n)?),
            DataType::Bytea => Value::Bytea(parse_bytea(text)?),
            DataType::Date => Value::Date(Date::parse(text)?),
            DataType::Timestamp => Value::Timestamp(Timestamp::parse(text)?),
            DataType::TimestampTz => Value::TimestampTz(TimestampTz::parse(text)?),
            DataType::Uuid => Value::Uuid(parse_uuid(text)?),
            DataType::Interval => Value::Interval(Interval::parse(text)?),
            DataType::Time => Value::Time(Time::parse(text)?),
            DataType::Json => {
                crate::json::parse(text)?;
                Value::Json(text.to_string())
            }
            DataType::Jsonb => Value::Jsonb(crate::json::Jsonb::parse(text)?),
            DataType::TsVector => Value::TsVector(crate::tsearch::parse::parse_vector(text)?),
            DataType::TsQuery => Value::TsQuery(crate::tsearch::parse::parse_query_text(text)?),
            DataType::Array(elem) => crate::array::parse(text, elem)?,
            DataType::Enum(t) => t.value_of(text)?,
            DataType::Composite(t) => t.parse(text)?,
        })
    }

    /// Converts the value to a column of type `ty`, as an assignment
    /// (INSERT/UPDATE) would in PostgreSQL. Null stays Null.
    ///
    /// ```text
    ///   from \ to   bool  int2/4/8  float8  numeric  strings  bytea  date  ts/tstz  uuid
    ///   boolean      =                                words
    ///   int2/4/8           range     yes     typmod   out
    ///   float8             round     =       typmod   out
    ///   numeric            round     yes     typmod   out
    ///   text        parse  parse     parse   parse    length   parse  parse parse    parse
    ///   bytea                                         out      =
    ///   date                                          out             =     midnight
    ///   ts / tstz                                     out             date  = (UTC)
    ///   uuid                                          out                            =
    ///   array                                         out
    /// ```
    ///
    /// An array assigns to an array type element by element, each with the
    /// table above; text parses as an array literal of the element type.
    ///
    /// * `range`: checked narrowing (22003 `smallint out of range`).
    /// * `round`: rounded to an integer first, float8 half to even and
    ///   numeric half away from zero (as PostgreSQL), then `range`.
    /// * `typmod`: rounded half away from zero to the column's scale, then
    ///   checked against its precision (22003 `numeric field overflow`).
    /// * `out`: the value's text output then `length` (PostgreSQL's I/O
    ///   conversion cast to string types); `words`: `true` / `false`.
    /// * `length`: `varchar(n)` drops trailing spaces past n and otherwise
    ///   fails with 22001; `char(n)` does the same, then pads to n.
    /// * `parse`: [`Value::parse`] with the column's type.
    ///
    /// Any other pair is 42804 ([`TypeError::Mismatch`]).
    pub fn coerce_to(self, ty: &DataType) -> Result<Value, TypeError> {
        let mismatch = |v: &Value| TypeError::mismatch(ty, v.type_name());
        Ok(match (self, ty) {
            (Value::Null, _) => Value::Null,
            (Value::Text(s), DataType::Text | DataType::Varchar(None)) => Value::Text(s),
            (Value::Text(s), DataType::Varchar(Some(n))) => Value::Text(fit_varchar(s, *n)?),
            (Value::Text(s), DataType::Char(n)) => Value::Text(fit_char(s, *n)?),
            (Value::Text(s), _) => Value::parse(&s, ty)?,
            // PostgreSQL's bool-to-text cast spells the words out.
            (Value::Boolean(b), DataType::Text | DataType::Varchar(_) | DataType::Char(_)) => {
                Value::Text(if b { "true" } else { "false" }.to_string()).coerce_to(ty)?
            }
            // PostgreSQL's I/O conversion: any type assigns to a string column.
            (v, DataType::Text | DataType::Varchar(_) | DataType::Char(_)) => {
                Value::Text(v.to_string()).coerce_to(ty)?
            }
            (v @ Value::Boolean(_), DataType::Boolean) => v,
            (v @ (Value::SmallInt(_) | Value::Integer(_) | Value::BigInt(_)), _) => {
                let i = v.as_i64().unwrap_or_default();
                match ty {
                    DataType::SmallInt | DataType::Integer | DataType::BigInt | DataType::Oid => {
                        int_to(i, ty)?
                    }
                    DataType::Double => Value::Double(i as f64),
                    DataType::Numeric { precision, scale } => {
                        Value::Numeric(apply_typmod(Decimal::from(i), *precision, *scale)?)
                    }
                    _ => return Err(mismatch(&v)),
                }
            }
            (Value::Double(x), DataType::Double) => Value::Double(x),
            (Value::Double(x), DataType::SmallInt | DataType::Integer | DataType::BigInt) => {
                let r = x.round_ties_even();
                // -2^63..2^63 is exactly i64's range (both bounds are exact
                // in f64); NaN is in no range.
                if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r) {
                    return Err(int_out_of_range(ty));
                }
                int_to(r as i64, ty)?
            }
            (Value::Double(x), DataType::Numeric { precision, scale }) => {
                Value::Numeric(apply_typmod(crate::numeric::from_f64(x)?, *precision, *scale)?)
            }
            (Value::Numeric(d), DataType::Numeric { precision, scale }) => {
                Value::Numeric(apply_typmod(d, *precision, *scale)?)
            }
            (Value::Numeric(d), DataType::Double) => Value::Double(crate::numeric::to_f64(&d)),
            (Value::Numeric(d), DataType::SmallInt | DataType::Integer | DataType::BigInt) => {
                let i = crate::numeric::to_i64(&d).ok_or_else(|| int_out_of_range(ty))?;
                int_to(i, ty)?
            }
            (v @ Value::Bytea(_), DataType::Bytea) => v,
            (v @ Value::Uuid(_), DataType::Uuid) => v,
            (Value::Date(d), DataType::Date) => Value::Date(d),
            (Value::Date(d), DataType::Timestamp) => Value::Timestamp(d.to_timestamp()?),
            (Value::Date(d), DataType::TimestampTz) => Value::TimestampTz(d.to_timestamp()?.to_timestamptz()),
            (Value::Timestamp(t), DataType::Timestamp) => Value::Timestamp(t),
            (Value::Timestamp(t), DataType::TimestampTz) => Value::TimestampTz(t.to_timestamptz()),
            (Value::Timestamp(t), DataType::Date) => Value::Date(t.date()),
            (Value::TimestampTz(t), DataType::TimestampTz) => Value::TimestampTz(t),
            (Value::TimestampTz(t), DataType::Timestamp) => Value::Timestamp(t.to_timestamp()),
            (Value::TimestampTz(t), DataType::Date) => Value::Date(t.to_timestamp().date()),
            (v @ Value::Interval(_), DataType::Interval) => v,
            (v @ Value::Time(_), DataType::Time) => v,
            // PostgreSQL's assignment casts into time: the time of day.
            (Value::Timestamp(t), DataType::Time) => Value::Time(Time::of(t)),
            (Value::TimestampTz(t), DataType::Time) => Value::Time(Time::of(t.to_timestamp())),
            (Value::Interval(i), DataType::Time) => Value::Time(Time(0).add_micros(i.micros)),
            (Value::Time(t), DataType::Interval) => Value::Interval(Interval::from_micros(t.0)),
            (v @ Value::Json(_), DataType::Json) => v,
            (v @ Value::Jsonb(_), DataType::Jsonb) => v,
            (Value::Enum(e), DataType::Enum(t)) if e.ty == *t => Value::Enum(e),
            (Value::Composite(c), DataType::Composite(t)) => t.assign(*c)?,
            (Value::Json(s), DataType::Jsonb) => Value::Jsonb(crate::json::Jsonb::parse(&s)?),
            (Value::Jsonb(j), DataType::Json) => Value::Json(j.to_string()),
            (v @ Value::TsVector(_), DataType::TsVector) => v,
            (v @ Value::TsQuery(_), DataType::TsQuery) => v,
            // Element by element, with the elements' own assignment casts.
            (Value::Array(items), DataType::Array(elem)) => {
                Value::Array(items.into_iter().map(|v| v.coerce_to(elem)).collect::<Result<_, _>>()?)
            }
            (v, _) => return Err(mismatch(&v)),
        })
    }

    /// True if the value can be stored in a column of type `ty` without
    /// conversion: Null fits anything; otherwise the variant must be the
    /// column's, a Numeric must have exactly the column's scale and be within
    /// its precision, and Text must satisfy `varchar(n)` (at most n
    /// characters) or `char(n)` (exactly n characters, already padded).
    pub fn fits(&self, ty: &DataType) -> bool {
        match (self, ty) {
            (Value::Null, _) => true,
            (Value::Boolean(_), DataType::Boolean)
            | (Value::SmallInt(_), DataType::SmallInt)
            | (Value::Integer(_), DataType::Integer)
            | (Value::BigInt(_), DataType::BigInt)
            | (Value::Double(_), DataType::Double)
            | (Value::Text(_), DataType::Text | DataType::Varchar(None))
            | (Value::Bytea(_), DataType::Bytea)
            | (Value::Date(_), DataType::Date)
            | (Value::Timestamp(_), DataType::Timestamp)
            | (Value::TimestampTz(_), DataType::TimestampTz)
            | (Value::Uuid(_), DataType::Uuid)
            | (Value::Interval(_), DataType::Interval)
            | (Value::Time(_), DataType::Time)
            | (Value::Json(_), DataType::Json)
            | (Value::Jsonb(_), DataType::Jsonb)
            | (Value::TsVector(_), DataType::TsVector)
            | (Value::TsQuery(_), DataType::TsQuery) => true,
            (Value::Numeric(d), DataType::Numeric { precision, scale }) => fits_typmod(d, *precision, *scale),
            (Value::Integer(i), DataType::Oid) => *i >= 0,
            (Value::Text(_), DataType::Int2Vector | DataType::OidVector) => true,
            (Value::Text(s), DataType::Varchar(Some(n))) => char_len(s) <= *n as usize,
            (Value::Text(s), DataType::Char(n)) => char_len(s) == *n as usize,
            (Value::Array(items), DataType::Array(elem)) => items.iter().all(|v| v.fits(elem)),
            (Value::Enum(e), DataType::Enum(t)) => e.ty == *t,
            (Value::Composite(c), DataType::Composite(t)) => c.ty == *t,
            _ => false,
        }
    }

    /// The integer of an integer-family value.
    pub(crate) fn as_i64(&self) -> Option<i64> {
        match self {
            Value::SmallInt(v) => Some(i64::from(*v)),
            Value::Integer(v) => Some(i64::from(*v)),
            Value::BigInt(v) => Some(*v),
            _ => None,
        }
    }
}

/// Narrows an integer to the integer type `ty` (22003 if it does not fit).
fn int_to(i: i64, ty: &DataType) -> Result<Value, TypeError> {
    let out = || int_out_of_range(ty);
    Ok(match ty {
        DataType::SmallInt => Value::SmallInt(i16::try_from(i).map_err(|_| out())?),
        DataType::Integer => Value::Integer(i32::try_from(i).map_err(|_| out())?),
        // Centum's OIDs are below 2^31 (see `DataType::Oid`).
        DataType::Oid => match i32::try_from(i) {
            Ok(v) if v >= 0 => Value::Integer(v),
            _ => return Err(TypeError::OutOfRange("OID out of range".into())),
        },
        _ => Value::BigInt(i),
    })
}

/// PostgreSQL's message for a failed integer narrowing: `smallint out of range`.
fn int_out_of_range(ty: &DataType) -> TypeError {
    TypeError::OutOfRange(format!("{ty} out of range"))
}

#[cfg(test)]
mod tests;
