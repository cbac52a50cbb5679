//! SQL values and their PostgreSQL text output.
//!
//! A [`Value`] is one datum as the engine stores and the executor computes
//! it. Its variant is its type family; the column modifiers (`varchar(5)`,
//! `numeric(10,2)`, `char(3)`) are not carried by the value but enforced when
//! it enters a column ([`Value::coerce_to`], [`Value::fits`]). So `varchar`,
//! `char` and `text` values are all [`Value::Text`], and a `numeric` keeps
//! whatever scale it was given.
//!
//! The behaviour of values lives in neighbouring modules, one concern each:
//!
//! ```text
//!   value.rs     the enum, its natural type, text output (Display)
//!   coerce.rs    parse, coerce_to (assignment), fits
//!   encoding.rs  fixed-width and variable-length row encodings
//!   ordering.rs  sql_cmp (SQL comparison) and Ord/Eq/Hash (sort and key order)
//! ```

use std::fmt;

use rust_decimal::Decimal;
use uuid::Uuid;

use crate::datatype::DataType;
use crate::datetime::{Date, Time, Timestamp, TimestampTz};
use crate::interval::Interval;

/// A SQL value.
///
/// `Display` is PostgreSQL's text output (what psql prints), `NULL` for Null.
///
/// `Ord`, `Eq` and `Hash` form a total order for sorting and index keys,
/// distinct from SQL comparison ([`Value::sql_cmp`]):
///
/// ```text
///   Null                   equals Null, sorts after everything (ASC default)
///   integers and numerics  by exact value: Integer(1) = BigInt(1) = Numeric(1.00)
///   doubles                -0.0 = 0.0; every NaN equal, above +Infinity
///   text                   by bytes, PostgreSQL's "C" collation
///   bytea, uuid            by bytes
///   dates, timestamps      by value; -infinity first, infinity last
///   different families     by a fixed rank of the family (doubles are their
///                          own family, so the order stays transitive)
/// ```
///
/// Within one type the order agrees with `sql_cmp`, and equal values hash
/// equally.
#[derive(Clone, Debug)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// `boolean`.
    Boolean(bool),
    /// `smallint`.
    SmallInt(i16),
    /// `integer`.
    Integer(i32),
    /// `bigint`.
    BigInt(i64),
    /// `double precision`.
    Double(f64),
    /// `numeric`, keeping the scale it was given (`1.50` stays `1.50`).
    Numeric(Decimal),
    /// `text`, `varchar(n)` and `char(n)` (stored blank-padded).
    Text(String),
    /// `bytea`.
    Bytea(Vec<u8>),
    /// `date`.
    Date(Date),
    /// `timestamp without time zone`.
    Timestamp(Timestamp),
    /// `timestamp with time zone`.
    TimestampTz(TimestampTz),
    /// `uuid`.
    Uuid(Uuid),
    /// `interval`.
    Interval(Interval),
    /// `time without time zone`.
    Time(Time),
    /// `json`: text checked to be JSON, kept as written.
    Json(String),
    /// `jsonb`: JSON in its binary form.
    Jsonb(crate::json::Jsonb),
    /// `tsvector`.
    TsVector(crate::tsearch::TsVector),
    /// `tsquery`.
    TsQuery(crate::tsearch::TsQuery),
    /// A one-dimensional array (lower bound 1): its elements, each of the
    /// array's element type or Null.
    Array(Vec<Value>),
    /// A value of an enum type (boxed: most values are not enums, and the
    /// type and label would make every value wider).
    Enum(Box<crate::enums::EnumValue>),
    /// A value of a composite type, or a row constructor's (boxed, as an
    /// enum's).
    Composite(Box<crate::composite::CompositeValue>),
}

impl Value {
    /// True for SQL NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The type this value naturally has: `None` for Null, unconstrained
    /// `numeric` for Numeric, `text` for Text.
    pub fn data_type(&self) -> Option<DataType> {
        Some(match self {
            Value::Null => return None,
            Value::Boolean(_) => DataType::Boolean,
            Value::SmallInt(_) => DataType::SmallInt,
            Value::Integer(_) => DataType::Integer,
            Value::BigInt(_) => DataType::BigInt,
            Value::Double(_) => DataType::Double,
            Value::Numeric(_) => DataType::Numeric { precision: None, scale: None },
            Value::Text(_) => DataType::Text,
            Value::Bytea(_) => DataType::Bytea,
            Value::Date(_) => DataType::Date,
            Value::Timestamp(_) => DataType::Timestamp,
            Value::TimestampTz(_) => DataType::TimestampTz,
            Value::Uuid(_) => DataType::Uuid,
            Value::Interval(_) => DataType::Interval,
            Value::Time(_) => DataType::Time,
            Value::Json(_) => DataType::Json,
            Value::Jsonb(_) => DataType::Jsonb,
            Value::Enum(e) => DataType::Enum(e.ty.clone()),
            Value::Composite(c) => DataType::Composite(c.ty.clone()),
            Value::TsVector(_) => DataType::TsVector,
            Value::TsQuery(_) => DataType::TsQuery,
            // The first element's type names the array; an array of only
            // NULLs (or none) reads as text[].
            Value::Array(items) => {
                DataType::Array(Box::new(items.iter().find_map(Value::data_type).unwrap_or(DataType::Text)))
            }
        })
    }

    /// The SQL name of the value's type for messages; `unknown` for Null,
    /// as PostgreSQL calls an untyped NULL.
    pub(crate) fn type_name(&self) -> String {
        self.data_type().map_or_else(|| "unknown".to_string(), |t| t.sql_name())
    }
}

impl fmt::Display for Value {
    /// PostgreSQL's text output, as psql prints it; `NULL` for Null.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Boolean(b) => f.write_str(if *b { "t" } else { "f" }),
            Value::SmallInt(v) => write!(f, "{v}"),
            Value::Integer(v) => write!(f, "{v}"),
            Value::BigInt(v) => write!(f, "{v}"),
            Value::Double(v) => f.write_str(&crate::float::format_f64(*v)),
            Value::Numeric(d) => write!(f, "{}", crate::numeric::positive_zero(*d)),
            Value::Text(s) => f.write_str(s),
            Value::Bytea(b) => f.write_str(&crate::text::format_bytea(b)),
            Value::Date(d) => write!(f, "{d}"),
            Value::Timestamp(t) => write!(f, "{t}"),
            Value::TimestampTz(t) => write!(f, "{t}"),
            Value::Uuid(u) => write!(f, "{}", u.hyphenated()),
            Value::Interval(i) => write!(f, "{i}"),
            Value::Time(t) => write!(f, "{t}"),
            Value::Json(s) => f.write_str(s),
            Value::Jsonb(j) => write!(f, "{j}"),
            Value::TsVector(v) => write!(f, "{v}"),
            Value::TsQuery(q) => write!(f, "{q}"),
            Value::Array(items) => f.write_str(&crate::array::display(items)),
            Value::Enum(e) => write!(f, "{e}"),
            Value::Composite(c) => write!(f, "{c}"),
        }
    }
}

/// `From` conversions so callers can write `Value::from(42)`; one per
/// variant payload, plus `&str`.
macro_rules! value_from {
    ($($t:ty => $variant:ident),* $(,)?) => {
        $(
            impl From<$t> for Value {
                #[doc = concat!("Wraps the value as [`Value::", stringify!($variant), "`].")]
                fn from(v: $t) -> Value {
                    Value::$variant(v)
                }
            }
        )*
    };
}

value_from! {
    bool => Boolean,
    i16 => SmallInt,
    i32 => Integer,
    i64 => BigInt,
    f64 => Double,
    Decimal => Numeric,
    String => Text,
    Vec<u8> => Bytea,
    Date => Date,
    Timestamp => Timestamp,
    TimestampTz => TimestampTz,
    Uuid => Uuid,
    Interval => Interval,
    Time => Time,
    Vec<Value> => Array,
}

impl From<&str> for Value {
    /// Copies the string into a [`Value::Text`].
    fn from(s: &str) -> Value {
        Value::Text(s.to_string())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    /// `None` becomes [`Value::Null`].
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn text_output_matches_psql() {
        let cases: Vec<(Value, &str)> = vec![
            (Value::Null, "NULL"),
            (Value::Boolean(true), "t"),
            (Value::Boolean(false), "f"),
            (Value::SmallInt(-5), "-5"),
            (Value::Integer(42), "42"),
            (Value::BigInt(i64::MIN), "-9223372036854775808"),
            (Value::Double(1.5), "1.5"),
            (Value::Double(1e20), "1e+20"),
            (Value::Double(f64::NAN), "NaN"),
            (Value::Numeric(Decimal::from_str("1.50").unwrap()), "1.50"),
            (Value::Numeric(Decimal::from_str("-0.00").unwrap().neg_zero()), "0.00"),
            (Value::Text("héllo".into()), "héllo"),
            (Value::Bytea(vec![0xde, 0xad]), "\\xdead"),
            (Value::Date(Date(8830)), "2024-03-05"),
            (Value::Timestamp(Timestamp(1_500_000)), "2000-01-01 00:00:01.5"),
            (Value::TimestampTz(TimestampTz(0)), "2000-01-01 00:00:00+00"),
            (
                Value::Uuid(Uuid::from_u128(0xA0EEBC999C0B4EF8BB6D6BB9BD380A11)),
                "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            ),
        ];
        for (value, text) in cases {
            assert_eq!(value.to_string(), text, "{value:?}");
        }
    }

    /// Makes a negative zero, which rust_decimal's parser never produces.
    trait NegZero {
        fn neg_zero(self) -> Self;
    }
    impl NegZero for Decimal {
        fn neg_zero(mut self) -> Self {
            self.set_sign_negative(true);
            self
        }
    }

    #[test]
    fn natural_types() {
        assert_eq!(Value::Null.data_type(), None);
        assert!(Value::Null.is_null());
        assert!(!Value::Integer(0).is_null());
        assert_eq!(Value::from("x").data_type(), Some(DataType::Text));
        assert_eq!(Value::from(1i16).data_type(), Some(DataType::SmallInt));
        assert_eq!(
            Value::from(Decimal::ONE).data_type(),
            Some(DataType::Numeric { precision: None, scale: None })
        );
        assert_eq!(Value::from(None::<i32>).type_name(), "unknown");
        assert_eq!(Value::from(Some(3i64)).type_name(), "bigint");
        assert_eq!(Value::from(vec![1u8]).type_name(), "bytea");
    }
}
