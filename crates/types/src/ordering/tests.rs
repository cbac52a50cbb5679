//! Tests of SQL comparison and the total order.

use std::collections::hash_map::DefaultHasher;
use std::str::FromStr;

use uuid::Uuid;

use super::*;
use crate::datetime::{Date, Timestamp, TimestampTz};

fn dec(text: &str) -> Value {
    Value::Numeric(Decimal::from_str(text).unwrap())
}

fn hash_of(v: &Value) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

fn assert_same_key(a: &Value, b: &Value) {
    assert_eq!(a, b, "{a:?} vs {b:?}");
    assert_eq!(a.cmp(b), Ordering::Equal);
    assert_eq!(hash_of(a), hash_of(b), "{a:?} vs {b:?}");
}

#[test]
fn null_is_unknown_in_sql_and_last_in_sorts() {
    assert_eq!(Value::Null.sql_cmp(&Value::Null), None);
    assert_eq!(Value::Integer(1).sql_cmp(&Value::Null), None);
    assert_eq!(Value::Null.cmp(&Value::Null), Ordering::Equal);
    for v in [Value::Integer(i32::MAX), Value::Double(f64::NAN), Value::from("zzz"), Value::Uuid(Uuid::max())]
    {
        assert!(v < Value::Null);
    }
}

#[test]
fn numeric_families_compare_across_types() {
    use Ordering::*;
    let cases = [
        (Value::SmallInt(1), Value::BigInt(1), Equal),
        (Value::Integer(-1), Value::SmallInt(0), Less),
        (Value::BigInt(2), dec("1.99"), Greater),
        (dec("1.0"), dec("1.00"), Equal),
        (Value::Integer(1), Value::Double(1.0), Equal),
        (Value::Double(0.5), dec("0.25"), Greater),
        (Value::Double(f64::NAN), Value::BigInt(i64::MAX), Greater),
        (Value::Double(-0.0), Value::Integer(0), Equal),
        (Value::BigInt(i64::MAX), dec("9223372036854775808"), Less),
    ];
    for (a, b, want) in cases {
        assert_eq!(a.sql_cmp(&b), Some(want), "{a:?} {b:?}");
        assert_eq!(b.sql_cmp(&a), Some(want.reverse()), "{b:?} {a:?}");
    }
}

#[test]
fn datetimes_compare_across_types() {
    let midnight = Value::Timestamp(Timestamp(86_400_000_000));
    assert_eq!(Value::Date(Date(1)).sql_cmp(&midnight), Some(Ordering::Equal));
    assert_eq!(Value::Date(Date(1)).sql_cmp(&Value::TimestampTz(TimestampTz(1))), Some(Ordering::Greater));
    assert_eq!(midnight.sql_cmp(&Value::TimestampTz(TimestampTz(86_400_000_000))), Some(Ordering::Equal));
    assert_eq!(
        Value::Date(Date::INFINITY).sql_cmp(&Value::Timestamp(Timestamp::INFINITY)),
        Some(Ordering::Equal)
    );
    assert_eq!(
        Value::Date(Date(i32::MAX - 1)).sql_cmp(&Value::Timestamp(Timestamp::INFINITY)),
        Some(Ordering::Less)
    );
    assert_eq!(
        Value::Date(Date::NEG_INFINITY).sql_cmp(&Value::Timestamp(Timestamp(i64::MIN + 1))),
        Some(Ordering::Less)
    );
}

#[test]
fn incomparable_types() {
    for (a, b) in [
        (Value::from("1"), Value::Integer(1)),
        (Value::Boolean(true), Value::Integer(1)),
        (Value::Bytea(vec![]), Value::from("")),
        (Value::Date(Date(0)), Value::Integer(0)),
        (Value::Uuid(Uuid::nil()), Value::from("x")),
    ] {
        assert_eq!(a.sql_cmp(&b), None, "{a:?} {b:?}");
    }
}

#[test]
fn same_type_orders() {
    assert!(Value::Boolean(false) < Value::Boolean(true));
    assert!(Value::from("B") < Value::from("a"));
    assert!(Value::from("ab") < Value::from("abc"));
    assert!(Value::Bytea(vec![1]) < Value::Bytea(vec![1, 0]));
    assert!(Value::Double(f64::INFINITY) < Value::Double(f64::NAN));
    assert!(Value::Double(f64::NEG_INFINITY) < Value::Double(-1e308));
    assert!(Value::Date(Date::NEG_INFINITY) < Value::Date(Date(i32::MIN + 1)));
    assert!(Value::Uuid(Uuid::from_u128(1)) < Value::Uuid(Uuid::from_u128(2)));
}

#[test]
fn keys_that_must_collide() {
    assert_same_key(&dec("1.0"), &dec("1.00"));
    assert_same_key(&dec("1.00"), &Value::Integer(1));
    assert_same_key(&Value::SmallInt(-7), &Value::BigInt(-7));
    assert_same_key(&dec("-0.000"), &Value::Integer(0));
    assert_same_key(&dec("2.50"), &dec("2.5"));
    assert_same_key(&dec("79228162514264337593543950335"), &dec("79228162514264337593543950335.0"));
    assert_same_key(&Value::Double(-0.0), &Value::Double(0.0));
    assert_same_key(&Value::Double(f64::NAN), &Value::Double(-f64::NAN));
    assert_same_key(&Value::Null, &Value::Null);
}

#[test]
fn families_do_not_mix_in_the_total_order() {
    // Double and the exact numbers are ranked, not compared, so that the
    // order stays transitive: 0.1 (numeric) and 0.1 (double) differ.
    assert_ne!(dec("0.1"), Value::Double(0.1));
    assert!(Value::BigInt(i64::MAX) < Value::Double(f64::NEG_INFINITY));
    assert!(Value::Boolean(true) < Value::SmallInt(i16::MIN));
    assert!(Value::from("") > Value::Double(f64::NAN));
    assert!(Value::Date(Date::INFINITY) < Value::Timestamp(Timestamp::NEG_INFINITY));
}

#[test]
fn sorting_a_mixed_column() {
    let mut values =
        [Value::Null, Value::Integer(3), dec("1.5"), Value::SmallInt(-1), Value::Null, Value::BigInt(2)];
    values.sort();
    let shown: Vec<String> = values.iter().map(ToString::to_string).collect();
    assert_eq!(shown, ["-1", "1.5", "2", "3", "NULL", "NULL"]);
}
