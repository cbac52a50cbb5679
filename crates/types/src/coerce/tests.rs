//! Tests of parsing, assignment conversion and `fits`, one per conversion
//! family and error path.

use std::str::FromStr;

use super::*;
use uuid::Uuid;

fn num(p: u32, s: u32) -> DataType {
    DataType::numeric(Some(p), Some(s)).unwrap()
}

fn dec(text: &str) -> Decimal {
    Decimal::from_str(text).unwrap()
}

/// Coerces and shows the result as PostgreSQL would print it.
fn shown(v: Value, ty: &DataType) -> Result<String, TypeError> {
    v.coerce_to(ty).map(|v| v.to_string())
}

#[test]
fn parse_each_type() {
    let cases: Vec<(&str, DataType, Value)> = vec![
        (" yes ", DataType::Boolean, Value::Boolean(true)),
        ("-32768", DataType::SmallInt, Value::SmallInt(i16::MIN)),
        ("12", DataType::Integer, Value::Integer(12)),
        ("-9", DataType::BigInt, Value::BigInt(-9)),
        ("1.25", DataType::Double, Value::Double(1.25)),
        ("1.255", num(5, 2), Value::Numeric(dec("1.26"))),
        ("abc", DataType::Text, Value::Text("abc".into())),
        ("ab  ", DataType::Varchar(Some(2)), Value::Text("ab".into())),
        ("a", DataType::Char(3), Value::Text("a  ".into())),
        ("\\x00ff", DataType::Bytea, Value::Bytea(vec![0, 255])),
        ("2024-03-05", DataType::Date, Value::Date(Date(8830))),
        ("2000-01-01 00:00:01", DataType::Timestamp, Value::Timestamp(Timestamp(1_000_000))),
        ("2000-01-01 01:00:00+01", DataType::TimestampTz, Value::TimestampTz(TimestampTz(0))),
        ("{00000000-0000-0000-0000-000000000001}", DataType::Uuid, Value::Uuid(Uuid::from_u128(1))),
    ];
    for (text, ty, want) in cases {
        assert_eq!(Value::parse(text, &ty), Ok(want), "{text} as {ty}");
    }
}

#[test]
fn parse_errors_carry_sqlstates() {
    let cases: Vec<(&str, DataType, &str, &str)> = vec![
        ("maybe", DataType::Boolean, "22P02", "invalid input syntax for type boolean: \"maybe\""),
        ("40000", DataType::SmallInt, "22003", "value \"40000\" is out of range for type smallint"),
        ("abc", DataType::Integer, "22P02", "invalid input syntax for type integer: \"abc\""),
        ("1.5", DataType::BigInt, "22P02", "invalid input syntax for type bigint: \"1.5\""),
        ("x", DataType::Double, "22P02", "invalid input syntax for type double precision: \"x\""),
        ("1e999", DataType::Double, "22003", "\"1e999\" is out of range for type double precision"),
        ("12x", num(5, 2), "22P02", "invalid input syntax for type numeric: \"12x\""),
        ("1000", num(5, 2), "22003", "numeric field overflow"),
        ("abcd", DataType::Varchar(Some(3)), "22001", "value too long for type character varying(3)"),
        ("abcd", DataType::Char(3), "22001", "value too long for type character(3)"),
        ("\\xzz", DataType::Bytea, "22023", "invalid hexadecimal digit: \"z\""),
        ("2024-02-30", DataType::Date, "22008", "date/time field value out of range: \"2024-02-30\""),
        ("noon", DataType::Timestamp, "22007", "invalid input syntax for type timestamp: \"noon\""),
        ("nope", DataType::Uuid, "22P02", "invalid input syntax for type uuid: \"nope\""),
    ];
    for (text, ty, code, message) in cases {
        let err = Value::parse(text, &ty).unwrap_err();
        assert_eq!((err.sqlstate(), err.to_string().as_str()), (code, message), "{text} as {ty}");
    }
}

#[test]
fn integers_widen_and_narrow() {
    assert_eq!(Value::SmallInt(7).coerce_to(&DataType::BigInt), Ok(Value::BigInt(7)));
    assert_eq!(Value::BigInt(-7).coerce_to(&DataType::SmallInt), Ok(Value::SmallInt(-7)));
    assert_eq!(Value::Integer(3).coerce_to(&DataType::Double), Ok(Value::Double(3.0)));
    let err = Value::Integer(40_000).coerce_to(&DataType::SmallInt).unwrap_err();
    assert_eq!((err.sqlstate(), err.to_string().as_str()), ("22003", "smallint out of range"));
    let err = Value::BigInt(i64::MAX).coerce_to(&DataType::Integer).unwrap_err();
    assert_eq!(err.to_string(), "integer out of range");
}

#[test]
fn to_numeric_rounds_and_checks_precision() {
    assert_eq!(shown(Value::Integer(12), &num(5, 2)).as_deref(), Ok("12.00"));
    assert_eq!(shown(Value::Double(0.1), &num(5, 2)).as_deref(), Ok("0.10"));
    assert_eq!(shown(Value::Double(2.675), &num(5, 2)).as_deref(), Ok("2.68"));
    assert_eq!(shown(Value::Numeric(dec("-2.345")), &num(5, 2)).as_deref(), Ok("-2.35"));
    assert_eq!(
        shown(Value::Numeric(dec("2.345")), &DataType::numeric(None, None).unwrap()).as_deref(),
        Ok("2.345")
    );
    let err = Value::BigInt(1000).coerce_to(&num(5, 2)).unwrap_err();
    assert_eq!((err.sqlstate(), err.to_string().as_str()), ("22003", "numeric field overflow"));
    let err = Value::Double(f64::INFINITY).coerce_to(&num(5, 2)).unwrap_err();
    assert_eq!(err.sqlstate(), "0A000");
}

#[test]
fn to_integers_round_like_postgres() {
    // float8 -> int rounds half to even (rint), numeric -> int half away from zero.
    assert_eq!(Value::Double(2.5).coerce_to(&DataType::Integer), Ok(Value::Integer(2)));
    assert_eq!(Value::Double(3.5).coerce_to(&DataType::Integer), Ok(Value::Integer(4)));
    assert_eq!(Value::Double(-2.5).coerce_to(&DataType::SmallInt), Ok(Value::SmallInt(-2)));
    assert_eq!(Value::Numeric(dec("2.5")).coerce_to(&DataType::Integer), Ok(Value::Integer(3)));
    assert_eq!(Value::Numeric(dec("-2.5")).coerce_to(&DataType::BigInt), Ok(Value::BigInt(-3)));
    for v in [Value::Double(f64::NAN), Value::Double(1e19), Value::Double(f64::NEG_INFINITY)] {
        let err = v.coerce_to(&DataType::BigInt).unwrap_err();
        assert_eq!((err.sqlstate(), err.to_string().as_str()), ("22003", "bigint out of range"));
    }
    assert!(Value::Double(-9_223_372_036_854_775_808.0).coerce_to(&DataType::BigInt).is_ok());
    let err = Value::Numeric(dec("32767.5")).coerce_to(&DataType::SmallInt).unwrap_err();
    assert_eq!(err.to_string(), "smallint out of range");
    assert!(Value::Numeric(dec("1e20")).coerce_to(&DataType::BigInt).is_err());
}

#[test]
fn to_double() {
    assert_eq!(Value::Numeric(dec("0.1")).coerce_to(&DataType::Double), Ok(Value::Double(0.1)));
    assert_eq!(Value::BigInt(1 << 60).coerce_to(&DataType::Double), Ok(Value::Double(2f64.powi(60))));
}

#[test]
fn strings_obey_length_rules() {
    let vc = DataType::Varchar(Some(5));
    assert_eq!(shown("hello".into(), &vc).as_deref(), Ok("hello"));
    assert_eq!(shown("hi   ".into(), &vc).as_deref(), Ok("hi   "));
    assert_eq!(shown("hello   ".into(), &vc).as_deref(), Ok("hello"));
    let err = Value::from("hello!").coerce_to(&vc).unwrap_err();
    assert_eq!(
        (err.sqlstate(), err.to_string().as_str()),
        ("22001", "value too long for type character varying(5)")
    );
    assert_eq!(shown("ab".into(), &DataType::Char(4)).as_deref(), Ok("ab  "));
    let err = Value::from("abcde").coerce_to(&DataType::Char(4)).unwrap_err();
    assert_eq!(err.to_string(), "value too long for type character(4)");
    assert_eq!(shown("x".into(), &DataType::Text).as_deref(), Ok("x"));
}

#[test]
fn other_types_assign_to_strings_through_their_text() {
    assert_eq!(shown(Value::Integer(42), &DataType::Text).as_deref(), Ok("42"));
    assert_eq!(shown(Value::Boolean(true), &DataType::Varchar(None)).as_deref(), Ok("true"));
    assert_eq!(shown(Value::Date(Date(0)), &DataType::Char(12)).as_deref(), Ok("2000-01-01  "));
    let err = Value::BigInt(123_456).coerce_to(&DataType::Varchar(Some(3))).unwrap_err();
    assert_eq!(err.sqlstate(), "22001");
}

#[test]
fn text_is_parsed_for_other_columns() {
    assert_eq!(Value::from("42").coerce_to(&DataType::Integer), Ok(Value::Integer(42)));
    assert_eq!(Value::from("on").coerce_to(&DataType::Boolean), Ok(Value::Boolean(true)));
    assert_eq!(shown("1.005".into(), &num(4, 2)).as_deref(), Ok("1.01"));
    let err = Value::from("4x").coerce_to(&DataType::Integer).unwrap_err();
    assert_eq!(err.sqlstate(), "22P02");
}

#[test]
fn datetimes_convert() {
    let day = Value::Date(Date(1));
    assert_eq!(day.clone().coerce_to(&DataType::Timestamp), Ok(Value::Timestamp(Timestamp(86_400_000_000))));
    assert_eq!(day.coerce_to(&DataType::TimestampTz), Ok(Value::TimestampTz(TimestampTz(86_400_000_000))));
    assert_eq!(
        Value::Timestamp(Timestamp(5)).coerce_to(&DataType::TimestampTz),
        Ok(Value::TimestampTz(TimestampTz(5)))
    );
    assert_eq!(
        Value::TimestampTz(TimestampTz(5)).coerce_to(&DataType::Timestamp),
        Ok(Value::Timestamp(Timestamp(5)))
    );
    assert_eq!(Value::Timestamp(Timestamp(-1)).coerce_to(&DataType::Date), Ok(Value::Date(Date(-1))));
    assert_eq!(
        Value::TimestampTz(TimestampTz::INFINITY).coerce_to(&DataType::Date),
        Ok(Value::Date(Date::INFINITY))
    );
    let err = Value::Date(Date(2_000_000_000)).coerce_to(&DataType::Timestamp).unwrap_err();
    assert_eq!(err.sqlstate(), "22008");
}

#[test]
fn mismatches() {
    let cases: Vec<(Value, DataType, &str)> = vec![
        (
            Value::Boolean(true),
            DataType::Integer,
            "column is of type integer but expression is of type boolean",
        ),
        (Value::Integer(1), DataType::Boolean, "column is of type boolean but expression is of type integer"),
        (
            Value::Double(1.0),
            DataType::Date,
            "column is of type date but expression is of type double precision",
        ),
        (Value::Bytea(vec![]), DataType::Uuid, "column is of type uuid but expression is of type bytea"),
        (Value::Uuid(Uuid::nil()), DataType::Bytea, "column is of type bytea but expression is of type uuid"),
        (Value::Date(Date(0)), DataType::BigInt, "column is of type bigint but expression is of type date"),
        (
            Value::Numeric(Decimal::ONE),
            DataType::Timestamp,
            "column is of type timestamp without time zone but expression is of type numeric",
        ),
    ];
    for (v, ty, message) in cases {
        let err = v.coerce_to(&ty).unwrap_err();
        assert_eq!((err.sqlstate(), err.to_string().as_str()), ("42804", message));
    }
}

#[test]
fn null_coerces_to_anything() {
    for ty in [DataType::Boolean, DataType::Char(2), num(3, 1), DataType::Uuid] {
        assert_eq!(Value::Null.clone().coerce_to(&ty), Ok(Value::Null));
        assert!(Value::Null.fits(&ty));
    }
}

#[test]
fn fits_is_exact() {
    assert!(Value::Integer(1).fits(&DataType::Integer));
    assert!(!Value::Integer(1).fits(&DataType::BigInt));
    assert!(Value::from("abc").fits(&DataType::Varchar(Some(3))));
    assert!(!Value::from("abcd").fits(&DataType::Varchar(Some(3))));
    assert!(Value::from("ab ").fits(&DataType::Char(3)));
    assert!(!Value::from("ab").fits(&DataType::Char(3)));
    assert!(Value::from("anything").fits(&DataType::Text));
    assert!(Value::Numeric(dec("1.50")).fits(&num(3, 2)));
    assert!(!Value::Numeric(dec("1.5")).fits(&num(3, 2)));
    assert!(!Value::Numeric(dec("10.00")).fits(&num(3, 2)));
    assert!(!Value::Double(1.0).fits(&num(3, 2)));
    assert!(!Value::Date(Date(0)).fits(&DataType::Timestamp));
    // Whatever coerce_to produces fits.
    for (v, ty) in [
        (Value::from("ab"), DataType::Char(5)),
        (Value::Double(1.234), num(6, 3)),
        (Value::Integer(5), DataType::SmallInt),
        (Value::from("é  "), DataType::Varchar(Some(1))),
    ] {
        assert!(v.coerce_to(&ty).unwrap().fits(&ty));
    }
}
