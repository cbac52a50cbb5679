//! SQL column types: what a column declares, how wide its stored form is,
//! and how PostgreSQL names and numbers it.
//!
//! A [`DataType`] is the declared type of a column including its modifier
//! (`varchar(20)`, `numeric(10,2)`). The engine uses [`DataType::fixed_width`]
//! to lay out rows: fixed-width types live inline in the row, the rest
//! (strings and byte arrays) are stored out of line as byte slices:
//!
//! ```text
//!   fixed width (inline)                    variable width (out of line)
//!   boolean 1   smallint 2   integer 4      varchar(n)  char(n)
//!   bigint 8    double 8     numeric 16     text        bytea
//!   date 4      timestamp 8  timestamptz 8
//!   uuid 16     interval 16  time 8         json        jsonb
//! ```
//!
//! The wire protocol needs [`DataType::pg_oid`] for RowDescription messages
//! and the SQL layer needs [`DataType::sql_name`] for error messages and
//! `\d`-style output; both use PostgreSQL's spellings so clients and test
//! scripts see what PostgreSQL would show.

use std::fmt;

use crate::error::TypeError;

/// Largest numeric precision Centum supports: rust_decimal's 96-bit mantissa
/// holds every 28-digit number (and some 29-digit ones, which is why the
/// limit is 28 and not 29).
pub const MAX_NUMERIC_PRECISION: u32 = 28;

/// Largest declared length of `varchar(n)` / `char(n)`, as in PostgreSQL.
pub const MAX_CHAR_LENGTH: u32 = 10_485_760;

/// SQL column types.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `boolean`.
    Boolean,
    /// `smallint`, a 16-bit integer.
    SmallInt,
    /// `integer`, a 32-bit integer.
    Integer,
    /// `bigint`, a 64-bit integer.
    BigInt,
    /// `oid`, an object identifier: what the system catalogs number their
    /// rows with. Its values are [`crate::Value::Integer`]s from 0 to
    /// 2^31 - 1 (Centum hands out no larger OID), stored as `integer` is.
    Oid,
    /// `double precision`, an IEEE 754 binary64 float.
    Double,
    /// `numeric(p,s)`; precision `None` is unconstrained `numeric`.
    /// Build it with [`DataType::numeric`], which checks the modifiers.
    Numeric {
        /// Total significant digits, 1 to [`MAX_NUMERIC_PRECISION`].
        precision: Option<u8>,
        /// Digits after the decimal point, 0 to precision.
        scale: Option<u8>,
    },
    /// `character varying(n)`; `None` means no length limit.
    Varchar(Option<u32>),
    /// `character(n)`, blank-padded to exactly n characters.
    Char(u32),
    /// `text`.
    Text,
    /// `int2vector` and `oidvector`: the system catalogs' vectors of column
    /// numbers and OIDs (`pg_index.indkey`, `pg_proc.proargtypes`). Their
    /// values are [`crate::Value::Text`] in PostgreSQL's text form, the
    /// numbers separated by single spaces (`1 3`), so they are strings
    /// here; on the wire in binary they go as arrays.
    Int2Vector,
    /// See [`DataType::Int2Vector`].
    OidVector,
    /// `bytea`, a byte string.
    Bytea,
    /// `date`.
    Date,
    /// `timestamp without time zone`.
    Timestamp,
    /// `timestamp with time zone`.
    TimestampTz,
    /// `uuid`.
    Uuid,
    /// `interval`: months, days and microseconds.
    Interval,
    /// `time without time zone`.
    Time,
    /// `json`: JSON text as written.
    Json,
    /// `jsonb`: JSON in binary form.
    Jsonb,
    /// `tsvector`: a full-text search document (see `crate::tsearch`).
    TsVector,
    /// `tsquery`: a full-text search query (see `crate::tsearch`).
    TsQuery,
    /// A one-dimensional array of the element type (`integer[]`), never
    /// itself an array. Build it with [`DataType::array_of`].
    Array(Box<DataType>),
    /// An enum type made by CREATE TYPE ... AS ENUM (see `enums`). Stored
    /// out of line as its label's sort position and the label.
    Enum(crate::enums::EnumType),
    /// A composite type made by CREATE TYPE ... AS (...), or the anonymous
    /// `record` of a row constructor (see `composite`). Stored out of line
    /// in the form of an array's elements, one per field.
    Composite(crate::composite::CompositeType),
}

impl DataType {
    /// Builds `numeric`, `numeric(p)` or `numeric(p,s)` from the modifiers
    /// written in SQL, checking them as PostgreSQL does (22023). `numeric(p)`
    /// means scale 0, as in PostgreSQL.
    pub fn numeric(precision: Option<u32>, scale: Option<u32>) -> Result<DataType, TypeError> {
        let Some(p) = precision else {
            return match scale {
                None => Ok(DataType::Numeric { precision: None, scale: None }),
                // The grammar cannot produce this; refuse rather than invent a meaning.
                Some(_) => Err(TypeError::InvalidParameter("NUMERIC scale requires a precision".to_string())),
            };
        };
        if !(1..=MAX_NUMERIC_PRECISION).contains(&p) {
            return Err(TypeError::InvalidParameter(format!(
                "NUMERIC precision {p} must be between 1 and {MAX_NUMERIC_PRECISION}"
            )));
        }
        let s = scale.unwrap_or(0);
        if s > p {
            return Err(TypeError::InvalidParameter(format!(
                "NUMERIC scale {s} must be between 0 and precision {p}"
            )));
        }
        // Both fit in u8: p <= 28 and s <= p.
        Ok(DataType::Numeric { precision: Some(p as u8), scale: Some(s as u8) })
    }

    /// Builds `character varying(n)` (or unbounded `character varying` for
    /// `None`), checking the length as PostgreSQL does (22023).
    pub fn varchar(length: Option<u32>) -> Result<DataType, TypeError> {
        match length {
            None => Ok(DataType::Varchar(None)),
            Some(n) => check_char_length("varchar", n).map(|n| DataType::Varchar(Some(n))),
        }
    }

    /// Builds `character(n)`; SQL's bare `character` means `character(1)`.
    /// Checks the length as PostgreSQL does (22023).
    pub fn bpchar(length: Option<u32>) -> Result<DataType, TypeError> {
        check_char_length("char", length.unwrap_or(1)).map(DataType::Char)
    }

    /// The array type of `elem`; arrays of arrays are 0A000.
    pub fn array_of(elem: DataType) -> Result<DataType, TypeError> {
        match elem {
            DataType::Array(_) => {
                Err(TypeError::Unsupported("multidimensional arrays are not supported".into()))
            }
            e => Ok(DataType::Array(Box::new(e))),
        }
    }

    /// The element type of an array type, `None` for other types.
    pub fn element(&self) -> Option<&DataType> {
        match self {
            DataType::Array(e) => Some(e),
            _ => None,
        }
    }

    /// Width in bytes of the fixed in-row encoding, `None` for
    /// variable-length types (Varchar, Char, Text, Bytea, arrays).
    pub fn fixed_width(&self) -> Option<usize> {
        match self {
            DataType::Boolean => Some(1),
            DataType::SmallInt => Some(2),
            DataType::Integer | DataType::Oid | DataType::Date => Some(4),
            DataType::BigInt | DataType::Double => Some(8),
            DataType::Timestamp | DataType::TimestampTz | DataType::Time => Some(8),
            DataType::Numeric { .. } | DataType::Uuid | DataType::Interval => Some(16),
            DataType::Varchar(_) | DataType::Char(_) | DataType::Text | DataType::Bytea => None,
            DataType::Int2Vector | DataType::OidVector => None,
            DataType::Array(_) | DataType::Json | DataType::Jsonb => None,
            DataType::Enum(_) | DataType::Composite(_) => None,
            DataType::TsVector | DataType::TsQuery => None,
        }
    }

    /// PostgreSQL's name for display, e.g. `integer`, `character varying(20)`,
    /// `numeric(10,2)`, `timestamp with time zone`.
    pub fn sql_name(&self) -> String {
        self.to_string()
    }

    /// PostgreSQL's type modifier (`atttypmod`, and RowDescription's
    /// type modifier): the length plus 4 of `varchar(n)` and `char(n)`,
    /// `(precision << 16 | scale) + 4` of `numeric(p,s)`, an array's
    /// element's; -1 for none.
    pub fn pg_typmod(&self) -> i32 {
        match self {
            DataType::Array(elem) => elem.pg_typmod(),
            DataType::Varchar(Some(n)) | DataType::Char(n) => (*n as i32).saturating_add(4),
            DataType::Numeric { precision: Some(p), scale } => {
                ((i32::from(*p) << 16) | i32::from(scale.unwrap_or(0))) + 4
            }
            _ => -1,
        }
    }

    /// PostgreSQL type OID, as sent in RowDescription.
    pub fn pg_oid(&self) -> u32 {
        match self {
            DataType::Boolean => 16,
            DataType::SmallInt => 21,
            DataType::Integer => 23,
            DataType::BigInt => 20,
            DataType::Oid => 26,
            DataType::Double => 701,
            DataType::Numeric { .. } => 1700,
            DataType::Varchar(_) => 1043,
            DataType::Char(_) => 1042,
            DataType::Text => 25,
            DataType::Int2Vector => 22,
            DataType::OidVector => 30,
            DataType::Bytea => 17,
            DataType::Date => 1082,
            DataType::Timestamp => 1114,
            DataType::TimestampTz => 1184,
            DataType::Uuid => 2950,
            DataType::Interval => 1186,
            DataType::Time => 1083,
            DataType::Json => 114,
            DataType::Jsonb => 3802,
            DataType::Enum(t) => t.oid(),
            DataType::Composite(t) => t.oid(),
            DataType::TsVector => 3614,
            DataType::TsQuery => 3615,
            DataType::Array(e) => match &**e {
                DataType::Boolean => 1000,
                DataType::SmallInt => 1005,
                DataType::Integer => 1007,
                DataType::BigInt => 1016,
                DataType::Oid => 1028,
                DataType::Double => 1022,
                DataType::Numeric { .. } => 1231,
                DataType::Varchar(_) => 1015,
                DataType::Char(_) => 1014,
                DataType::Text => 1009,
                DataType::Int2Vector => 1006,
                DataType::OidVector => 1013,
                DataType::Bytea => 1001,
                DataType::Date => 1182,
                DataType::Timestamp => 1115,
                DataType::TimestampTz => 1185,
                DataType::Uuid => 2951,
                DataType::Interval => 1187,
                DataType::Time => 1183,
                DataType::Json => 199,
                DataType::Jsonb => 3807,
                // An enum's array type takes the OID after the enum's.
                DataType::Enum(t) => t.oid() + 1,
                DataType::Composite(t) => t.array_oid(),
                DataType::TsVector => 3643,
                DataType::TsQuery => 3645,
                // `array_of` refuses arrays of arrays; anyarray if one slips by.
                DataType::Array(_) => 2277,
            },
        }
    }

    /// True for the types stored as text (Varchar, Char, Text, and the
    /// vectors).
    pub fn is_string(&self) -> bool {
        matches!(
            self,
            DataType::Varchar(_)
                | DataType::Char(_)
                | DataType::Text
                | DataType::Int2Vector
                | DataType::OidVector
        )
    }

    /// The element type of `int2vector` (`smallint`) and `oidvector`
    /// (`oid`).
    pub fn vector_element(&self) -> Option<DataType> {
        match self {
            DataType::Int2Vector => Some(DataType::SmallInt),
            DataType::OidVector => Some(DataType::Oid),
            _ => None,
        }
    }
}

/// Checks a `varchar(n)` / `char(n)` length against PostgreSQL's limits.
fn check_char_length(name: &str, n: u32) -> Result<u32, TypeError> {
    if n < 1 {
        return Err(TypeError::InvalidParameter(format!("length for type {name} must be at least 1")));
    }
    if n > MAX_CHAR_LENGTH {
        return Err(TypeError::InvalidParameter(format!(
            "length for type {name} cannot exceed {MAX_CHAR_LENGTH}"
        )));
    }
    Ok(n)
}

impl fmt::Display for DataType {
    /// The same text as [`DataType::sql_name`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Boolean => f.write_str("boolean"),
            DataType::SmallInt => f.write_str("smallint"),
            DataType::Integer => f.write_str("integer"),
            DataType::BigInt => f.write_str("bigint"),
            DataType::Oid => f.write_str("oid"),
            DataType::Double => f.write_str("double precision"),
            DataType::Numeric { precision: Some(p), scale } => {
                write!(f, "numeric({p},{})", scale.unwrap_or(0))
            }
            DataType::Numeric { precision: None, .. } => f.write_str("numeric"),
            DataType::Varchar(Some(n)) => write!(f, "character varying({n})"),
            DataType::Varchar(None) => f.write_str("character varying"),
            DataType::Char(n) => write!(f, "character({n})"),
            DataType::Text => f.write_str("text"),
            DataType::Int2Vector => f.write_str("int2vector"),
            DataType::OidVector => f.write_str("oidvector"),
            DataType::Bytea => f.write_str("bytea"),
            DataType::Date => f.write_str("date"),
            DataType::Timestamp => f.write_str("timestamp without time zone"),
            DataType::TimestampTz => f.write_str("timestamp with time zone"),
            DataType::Uuid => f.write_str("uuid"),
            DataType::Interval => f.write_str("interval"),
            DataType::Time => f.write_str("time without time zone"),
            DataType::Json => f.write_str("json"),
            DataType::Jsonb => f.write_str("jsonb"),
            DataType::TsVector => f.write_str("tsvector"),
            DataType::TsQuery => f.write_str("tsquery"),
            DataType::Array(e) => write!(f, "{e}[]"),
            DataType::Enum(t) => f.write_str(t.name()),
            DataType::Composite(t) => f.write_str(t.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_modifiers_are_checked() {
        assert_eq!(DataType::numeric(None, None), Ok(DataType::Numeric { precision: None, scale: None }));
        assert_eq!(
            DataType::numeric(Some(10), None),
            Ok(DataType::Numeric { precision: Some(10), scale: Some(0) })
        );
        assert_eq!(
            DataType::numeric(Some(28), Some(28)),
            Ok(DataType::Numeric { precision: Some(28), scale: Some(28) })
        );
        for (p, s) in
            [(Some(0), None), (Some(29), None), (Some(1001), Some(2)), (Some(5), Some(6)), (None, Some(2))]
        {
            let err = DataType::numeric(p, s).unwrap_err();
            assert_eq!(err.sqlstate(), "22023", "{p:?} {s:?}");
        }
        assert_eq!(
            DataType::numeric(Some(29), None).unwrap_err().to_string(),
            "NUMERIC precision 29 must be between 1 and 28"
        );
        assert_eq!(
            DataType::numeric(Some(3), Some(5)).unwrap_err().to_string(),
            "NUMERIC scale 5 must be between 0 and precision 3"
        );
    }

    #[test]
    fn string_lengths_are_checked() {
        assert_eq!(DataType::varchar(Some(3)), Ok(DataType::Varchar(Some(3))));
        assert_eq!(DataType::varchar(None), Ok(DataType::Varchar(None)));
        assert_eq!(DataType::bpchar(None), Ok(DataType::Char(1)));
        let err = DataType::varchar(Some(0)).unwrap_err();
        assert_eq!(err.to_string(), "length for type varchar must be at least 1");
        assert_eq!(err.sqlstate(), "22023");
        let err = DataType::bpchar(Some(MAX_CHAR_LENGTH + 1)).unwrap_err();
        assert_eq!(err.to_string(), "length for type char cannot exceed 10485760");
    }

    #[test]
    fn names_widths_and_oids() {
        let cases: [(DataType, &str, Option<usize>, u32); 22] = [
            (DataType::Boolean, "boolean", Some(1), 16),
            (DataType::SmallInt, "smallint", Some(2), 21),
            (DataType::Integer, "integer", Some(4), 23),
            (DataType::Oid, "oid", Some(4), 26),
            (DataType::BigInt, "bigint", Some(8), 20),
            (DataType::Double, "double precision", Some(8), 701),
            (DataType::numeric(None, None).unwrap(), "numeric", Some(16), 1700),
            (DataType::numeric(Some(10), Some(2)).unwrap(), "numeric(10,2)", Some(16), 1700),
            (DataType::Varchar(Some(20)), "character varying(20)", None, 1043),
            (DataType::Varchar(None), "character varying", None, 1043),
            (DataType::Char(3), "character(3)", None, 1042),
            (DataType::Text, "text", None, 25),
            (DataType::Bytea, "bytea", None, 17),
            (DataType::Date, "date", Some(4), 1082),
            (DataType::Timestamp, "timestamp without time zone", Some(8), 1114),
            (DataType::TimestampTz, "timestamp with time zone", Some(8), 1184),
            (DataType::Uuid, "uuid", Some(16), 2950),
            (DataType::Interval, "interval", Some(16), 1186),
            (DataType::Time, "time without time zone", Some(8), 1083),
            (DataType::array_of(DataType::Integer).unwrap(), "integer[]", None, 1007),
            (DataType::array_of(DataType::Oid).unwrap(), "oid[]", None, 1028),
            (DataType::array_of(DataType::Varchar(Some(5))).unwrap(), "character varying(5)[]", None, 1015),
        ];
        for (ty, name, width, oid) in cases {
            assert_eq!(ty.sql_name(), name);
            assert_eq!(ty.to_string(), name);
            assert_eq!(ty.fixed_width(), width, "{name}");
            assert_eq!(ty.pg_oid(), oid, "{name}");
        }
    }
}
