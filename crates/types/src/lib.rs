//! Centum's SQL data types and values, with PostgreSQL's semantics.
//!
//! This crate is the vocabulary shared by the storage engine and the SQL
//! layer. It knows nothing about tables or transactions; it answers
//! questions about single values:
//!
//! ```text
//!   SQL text ──Value::parse──▶ Value ──coerce_to / fits──▶ column value
//!                                │                               │
//!                          Display (psql text)      encode_fixed / var_bytes
//!                                │                               │
//!                       sql_cmp (SQL =, <)          row bytes ──decode_*──▶ Value
//!                       Ord/Hash (sorts, keys)
//! ```
//!
//! * [`DataType`]: a column's declared type, its in-row width, its
//!   PostgreSQL name and OID.
//! * [`Value`]: one datum. Parsing and assignment conversion follow
//!   PostgreSQL's input functions and assignment casts; text output is what
//!   psql prints; `sql_cmp` is SQL comparison and `Ord`/`Eq`/`Hash` a total
//!   order for sorting and keys.
//! * [`Date`], [`Timestamp`], [`TimestampTz`], [`Time`]: PostgreSQL's
//!   representation (days / microseconds since 2000-01-01, microseconds
//!   since midnight), with ISO input and output.
//! * [`Interval`]: months, days and microseconds apart, with PostgreSQL's
//!   input forms, output style and calendar arithmetic.
//! * [`json`]: `json` text and `jsonb`'s binary form, read in place.
//! * [`tsearch`]: `tsvector`, `tsquery` and the `simple` and `english`
//!   text search configurations.
//! * [`TypeError`]: every failure, with its SQLSTATE.
//!
//! Known differences from PostgreSQL: `numeric` holds at most 28-29
//! significant digits (rust_decimal) and no NaN/Infinity; text compares
//! bytewise (the "C" collation); the session time zone is always UTC; and
//! date/time input accepts the ISO forms only.
//!
//! # Example
//!
//! ```
//! use centum_types::{DataType, Value};
//!
//! // A literal arriving from SQL text, assigned to a numeric(6,2) column.
//! let price = DataType::numeric(Some(6), Some(2))?;
//! let v = Value::from("19.999").coerce_to(&price)?;
//! assert_eq!(v.to_string(), "20.00");
//! assert!(v.fits(&price));
//!
//! // Stored inline in a 16-byte slot and read back.
//! let mut slot = vec![0u8; price.fixed_width().unwrap_or(0)];
//! v.encode_fixed(&price, &mut slot)?;
//! assert_eq!(Value::decode_fixed(&price, &slot), v);
//!
//! // Errors carry PostgreSQL's message and SQLSTATE.
//! let err = Value::parse("1e6", &price).unwrap_err();
//! assert_eq!(err.to_string(), "numeric field overflow");
//! assert_eq!(err.sqlstate(), "22003");
//!
//! // Values of different numeric types compare by value.
//! assert_eq!(Value::Integer(20).sql_cmp(&v), Some(std::cmp::Ordering::Equal));
//! # Ok::<(), centum_types::TypeError>(())
//! ```

pub mod array;
mod coerce;
pub mod composite;
mod datatype;
mod datetime;
mod encoding;
pub mod enums;
mod error;
mod float;
pub mod interval;
pub mod json;
mod numeric;
mod ordering;
mod text;
pub mod tsearch;
mod units;
mod value;

pub use composite::{CompositeType, CompositeValue};
pub use datatype::{DataType, MAX_CHAR_LENGTH, MAX_NUMERIC_PRECISION};
/// Proleptic Gregorian day arithmetic on day numbers counted from
/// 2000-01-01, as the date and timestamp types use.
pub use datetime::calendar::{days_from_ymd, ymd_from_days};
pub use datetime::{Date, Time, Timestamp, TimestampTz};
pub use enums::{EnumLabel, EnumType, EnumValue};
pub use error::TypeError;
pub use interval::Interval;
pub use rust_decimal::Decimal;
pub use units::DateUnit;
pub use uuid::Uuid;
pub use value::Value;
