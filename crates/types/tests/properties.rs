//! Property tests over the public API: encodings round-trip, text output
//! parses back to the same value, the total order is a total order that
//! agrees with SQL comparison, hashing agrees with equality, and nothing
//! panics on hostile input.

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use centum_types::json::{Jsonb, Node};
use centum_types::tsearch::config::Config;
use centum_types::tsearch::{QueryNode, TsQuery};
use centum_types::{DataType, Date, Decimal, Interval, Time, Timestamp, TimestampTz, Uuid, Value};
use proptest::prelude::*;

/// PostgreSQL's finite date range, in days since 2000-01-01.
const DATE_RANGE: std::ops::Range<i32> = -2_451_545..2_145_031_949;
/// PostgreSQL's finite timestamp range, in microseconds since 2000-01-01.
const TIMESTAMP_RANGE: std::ops::Range<i64> = -211_813_488_000_000_000..9_223_371_331_200_000_000;

/// Any type: a scalar, or sometimes an array of one.
fn data_type() -> impl Strategy<Value = DataType> {
    prop_oneof![
        8 => scalar_type(),
        2 => scalar_type().prop_map(|t| DataType::array_of(t).unwrap()),
        1 => prop::collection::vec(scalar_type(), 1..4).prop_map(composite),
    ]
}

/// A composite type with fields of these types.
fn composite(types: Vec<DataType>) -> DataType {
    let fields = types.into_iter().enumerate().map(|(i, t)| (format!("f {i}"), t)).collect();
    DataType::Composite(centum_types::CompositeType::new(centum_types::composite::CompositeDef {
        oid: 1_610_612_800,
        name: "pair".into(),
        fields,
    }))
}

/// An enum type whose labels' order is not their alphabetical order, with
/// a label added between two others.
fn mood() -> centum_types::EnumType {
    let mut labels = centum_types::enums::initial_positions(&["sad".into(), "ok".into(), "happy".into()]);
    labels.insert(1, centum_types::EnumLabel { position: 1.5, label: "meh, or \"so\"".into() });
    centum_types::EnumType::new(centum_types::enums::EnumDef {
        oid: 1_610_612_736,
        name: "mood".into(),
        labels,
    })
}

fn scalar_type() -> impl Strategy<Value = DataType> {
    prop_oneof![
        Just(DataType::Boolean),
        Just(DataType::SmallInt),
        Just(DataType::Integer),
        Just(DataType::BigInt),
        Just(DataType::Double),
        Just(DataType::Numeric { precision: None, scale: None }),
        (1u32..=28).prop_flat_map(|p| (Just(p), 0..=p)).prop_map(|(p, s)| DataType::numeric(
            Some(p),
            Some(s)
        )
        .unwrap()),
        Just(DataType::Varchar(None)),
        (1u32..12).prop_map(|n| DataType::Varchar(Some(n))),
        (1u32..12).prop_map(DataType::Char),
        Just(DataType::Text),
        Just(DataType::Bytea),
        Just(DataType::Date),
        Just(DataType::Timestamp),
        Just(DataType::TimestampTz),
        Just(DataType::Uuid),
        Just(DataType::Interval),
        Just(DataType::Time),
        Just(DataType::Json),
        Just(DataType::Jsonb),
        Just(DataType::Enum(mood())),
        Just(DataType::TsVector),
        Just(DataType::TsQuery),
        Just(DataType::Oid),
        Just(DataType::Int2Vector),
        Just(DataType::OidVector),
    ]
}

/// A `tsquery` tree of up to three levels, as its text reads back (the
/// output drops parentheses that associativity makes redundant).
fn ts_query() -> impl Strategy<Value = TsQuery> {
    let leaf =
        (prop_oneof![Just("a"), Just("b"), Just("ab"), Just("it's"), Just("x\\y")], 0u8..16, any::<bool>())
            .prop_map(|(w, weights, prefix)| QueryNode::Lexeme { word: w.to_string(), weights, prefix });
    let tree = leaf.prop_recursive(3, 16, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|q| QueryNode::Not(Box::new(q))),
            (inner.clone(), inner.clone()).prop_map(|(l, r)| QueryNode::And(Box::new(l), Box::new(r))),
            (inner.clone(), inner.clone()).prop_map(|(l, r)| QueryNode::Or(Box::new(l), Box::new(r))),
            (inner.clone(), inner, 0u16..4).prop_map(|(l, r, d)| QueryNode::Phrase(
                Box::new(l),
                Box::new(r),
                d
            )),
        ]
    });
    prop::option::of(tree).prop_map(|t| {
        let text = TsQuery::new(t).to_string();
        match Value::parse(&text, &DataType::TsQuery) {
            Ok(Value::TsQuery(q)) => q,
            other => panic!("{text}: {other:?}"),
        }
    })
}

/// A JSON document of up to three levels.
fn json_node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        Just(Node::Null),
        any::<bool>().prop_map(Node::Bool),
        (-1000i64..1000, 0u32..3).prop_map(|(m, s)| Node::Number(Decimal::new(m, s).to_string())),
        string(6).prop_map(Node::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Node::Array),
            prop::collection::vec((prop_oneof![Just("a"), Just("b"), Just("ab")], inner), 0..4)
                .prop_map(|m| Node::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

fn fixed_type() -> impl Strategy<Value = DataType> {
    data_type().prop_filter("fixed width", |t| t.fixed_width().is_some())
}

/// Any Decimal rust_decimal can hold: a 96-bit mantissa and a scale 0..=28.
fn decimal() -> impl Strategy<Value = Decimal> {
    let max = (1i128 << 96) - 1;
    prop_oneof![(-max..=max, 0u32..=28), (-1_000_000i128..1_000_000, 0u32..=6),]
        .prop_map(|(m, s)| Decimal::from_i128_with_scale(m, s))
}

/// A string of up to `max` characters, mixing ASCII, spaces and non-ASCII.
fn string(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![Just(' '), Just('é'), Just('\u{1F600}'), prop::char::range('!', '~')],
        0..=max,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn date() -> impl Strategy<Value = Date> {
    prop_oneof![8 => DATE_RANGE.prop_map(Date), 1 => Just(Date::INFINITY), 1 => Just(Date::NEG_INFINITY)]
}

fn timestamp_usecs() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => TIMESTAMP_RANGE,
        4 => (-100_000i64..100_000).prop_map(|s| s * 1_000_000),
        1 => Just(i64::MAX),
        1 => Just(i64::MIN),
    ]
}

/// A non-null value that fits `ty` exactly (`fits` holds).
fn value_of(ty: &DataType) -> BoxedStrategy<Value> {
    match ty.clone() {
        DataType::Boolean => any::<bool>().prop_map(Value::Boolean).boxed(),
        DataType::SmallInt => any::<i16>().prop_map(Value::SmallInt).boxed(),
        DataType::Integer => any::<i32>().prop_map(Value::Integer).boxed(),
        DataType::BigInt => any::<i64>().prop_map(Value::BigInt).boxed(),
        DataType::Oid => (0..=i32::MAX).prop_map(Value::Integer).boxed(),
        DataType::Int2Vector => prop::collection::vec(any::<i16>(), 0..5)
            .prop_map(|v| Value::Text(v.iter().map(i16::to_string).collect::<Vec<_>>().join(" ")))
            .boxed(),
        DataType::OidVector => prop::collection::vec(0..=i32::MAX, 0..5)
            .prop_map(|v| Value::Text(v.iter().map(i32::to_string).collect::<Vec<_>>().join(" ")))
            .boxed(),
        DataType::Double => prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(-0.0),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(5e-324),
        ]
        .prop_map(Value::Double)
        .boxed(),
        DataType::Numeric { precision: None, .. } => decimal().prop_map(Value::Numeric).boxed(),
        DataType::Numeric { precision: Some(p), scale } => {
            let limit = 10i128.pow(u32::from(p));
            let s = u32::from(scale.unwrap_or(0));
            (-limit + 1..limit).prop_map(move |m| Value::Numeric(Decimal::from_i128_with_scale(m, s))).boxed()
        }
        DataType::Text | DataType::Varchar(None) => string(20).prop_map(Value::Text).boxed(),
        DataType::Varchar(Some(n)) => string(n as usize).prop_map(Value::Text).boxed(),
        DataType::Char(n) => string(n as usize)
            .prop_map(move |s| {
                let pad = n as usize - s.chars().count();
                Value::Text(s + &" ".repeat(pad))
            })
            .boxed(),
        DataType::Bytea => prop::collection::vec(any::<u8>(), 0..40).prop_map(Value::Bytea).boxed(),
        DataType::Date => date().prop_map(Value::Date).boxed(),
        DataType::Timestamp => timestamp_usecs().prop_map(|t| Value::Timestamp(Timestamp(t))).boxed(),
        DataType::TimestampTz => timestamp_usecs().prop_map(|t| Value::TimestampTz(TimestampTz(t))).boxed(),
        DataType::Uuid => any::<u128>().prop_map(|u| Value::Uuid(Uuid::from_u128(u))).boxed(),
        DataType::Interval => prop_oneof![
            (any::<i32>(), any::<i32>(), any::<i64>()),
            (-50i32..50, -50i32..50, -100_000_000_000i64..100_000_000_000),
        ]
        .prop_map(|(m, d, t)| Value::Interval(Interval::new(m, d, t)))
        .boxed(),
        DataType::Time => (0i64..=86_400_000_000).prop_map(|t| Value::Time(Time(t))).boxed(),
        DataType::Json => json_node()
            .prop_map(|n| {
                let mut s = String::new();
                n.write_json(", ", ": ", &mut s);
                Value::Json(s)
            })
            .boxed(),
        DataType::Jsonb => json_node().prop_map(|n| Value::Jsonb(Jsonb::from_node(&n))).boxed(),
        DataType::Enum(t) => (0..t.labels().len()).prop_map(move |i| t.value(&t.labels()[i])).boxed(),
        DataType::TsVector => (string(30), 0u8..4)
            .prop_map(|(s, w)| Value::TsVector(Config::Simple.to_tsvector(&s).setweight(w)))
            .boxed(),
        DataType::TsQuery => ts_query().prop_map(Value::TsQuery).boxed(),
        DataType::Array(elem) => {
            let item = prop_oneof![1 => Just(Value::Null), 4 => value_of(&elem)];
            prop::collection::vec(item, 0..5).prop_map(Value::Array).boxed()
        }
        DataType::Composite(t) => {
            let fields: Vec<BoxedStrategy<Value>> = t
                .fields()
                .iter()
                .map(|(_, ty)| prop_oneof![1 => Just(Value::Null), 4 => value_of(ty)].boxed())
                .collect();
            fields.prop_map(move |f| t.value(f)).boxed()
        }
    }
}

fn typed_value() -> impl Strategy<Value = (DataType, Value)> {
    data_type().prop_flat_map(|ty| (Just(ty.clone()), value_of(&ty)))
}

/// Three values of one type, for order properties.
fn same_type_triple() -> impl Strategy<Value = (Value, Value, Value)> {
    data_type().prop_flat_map(|ty| (value_of(&ty), value_of(&ty), value_of(&ty)))
}

/// Any value of any type, or Null.
fn any_value() -> impl Strategy<Value = Value> {
    prop_oneof![1 => Just(Value::Null), 9 => typed_value().prop_map(|(_, v)| v)]
}

/// Identity including representation: equal under `Eq` and printed the same
/// (catches a lost numeric scale or a -0.0 turned into 0.0).
fn assert_identical(a: &Value, b: &Value) {
    assert_eq!(a, b);
    assert_eq!(a.to_string(), b.to_string());
}

fn hash_of(v: &Value) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn generated_values_fit_their_type((ty, v) in typed_value()) {
        prop_assert!(v.fits(&ty), "{v:?} should fit {ty}");
    }

    #[test]
    fn fixed_encoding_round_trips((ty, v) in fixed_type().prop_flat_map(|ty| (Just(ty.clone()), value_of(&ty)))) {
        let width = ty.fixed_width().unwrap_or(0);
        let mut buf = vec![0u8; width];
        prop_assert!(v.encode_fixed(&ty, &mut buf).is_ok());
        let back = Value::decode_fixed(&ty, &buf);
        assert_identical(&back, &v);
        if let (Value::Double(a), Value::Double(b)) = (&v, &back) {
            prop_assert_eq!(a.to_bits(), b.to_bits());
        }
    }

    #[test]
    fn variable_encoding_round_trips((ty, v) in typed_value()) {
        if let Some(bytes) = v.var_bytes() {
            prop_assert!(ty.fixed_width().is_none());
            assert_identical(&Value::decode_var(&ty, &bytes), &v);
        }
    }

    #[test]
    fn text_output_parses_back((ty, v) in typed_value()) {
        let text = v.to_string();
        let back = Value::parse(&text, &ty);
        prop_assert!(back.is_ok(), "{text:?} as {ty}: {back:?}");
        let back = back.unwrap_or(Value::Null);
        assert_identical(&back, &v);
    }

    #[test]
    fn order_agrees_with_sql_cmp((a, b, _) in same_type_triple()) {
        // `json` has no SQL comparison, as in PostgreSQL.
        let want = if matches!(a, Value::Json(_)) { None } else { Some(a.cmp(&b)) };
        prop_assert_eq!(a.sql_cmp(&b), want);
        prop_assert_eq!(a == b, a.cmp(&b) == Ordering::Equal);
        prop_assert_eq!(a.partial_cmp(&b), Some(a.cmp(&b)));
    }

    #[test]
    fn order_is_total_within_a_type((a, b, c) in same_type_triple()) {
        check_total_order(&a, &b, &c)?;
    }

    #[test]
    fn order_is_total_across_types(a in any_value(), b in any_value(), c in any_value()) {
        check_total_order(&a, &b, &c)?;
    }

    #[test]
    fn equal_numerics_hash_equally(d in decimal(), extra in 0u32..=28) {
        let mut wider = d;
        wider.rescale(d.scale() + extra);
        // rescale gives up (keeps a smaller scale) when the mantissa would overflow.
        let (a, b) = (Value::Numeric(d), Value::Numeric(wider));
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(hash_of(&a), hash_of(&b));
        prop_assert_eq!(a.sql_cmp(&b), Some(Ordering::Equal));
    }

    #[test]
    fn integers_equal_their_numeric(i in any::<i64>(), scale in 0u32..=8) {
        let mut d = Decimal::from(i);
        d.rescale(scale);
        let n = Value::Numeric(d);
        for v in [Value::BigInt(i), Value::Integer(i as i32), Value::SmallInt(i as i16)] {
            let same = v.sql_cmp(&n) == Some(Ordering::Equal);
            prop_assert_eq!(v == n, same);
            if same {
                prop_assert_eq!(hash_of(&v), hash_of(&n));
            }
        }
    }

    #[test]
    fn equal_doubles_hash_equally(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        let canonical = if x.is_nan() { f64::NAN } else if x == 0.0 { -x } else { x };
        let (a, b) = (Value::Double(x), Value::Double(canonical));
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(hash_of(&a), hash_of(&b));
    }

    #[test]
    fn hash_agrees_with_eq(a in any_value(), b in any_value()) {
        if a == b {
            prop_assert_eq!(hash_of(&a), hash_of(&b));
        }
    }

    #[test]
    fn coercion_results_fit(v in any_value(), ty in data_type()) {
        if let Ok(out) = v.clone().coerce_to(&ty) {
            prop_assert!(out.fits(&ty), "{v:?} -> {ty} gave {out:?}");
        }
    }

    #[test]
    fn decoding_garbage_never_panics(ty in data_type(), bytes in prop::collection::vec(any::<u8>(), 0..20)) {
        let v = Value::decode_fixed(&ty, &bytes);
        let _ = v.to_string();
        let v = Value::decode_var(&ty, &bytes);
        let _ = v.to_string();
    }

    #[test]
    fn parsing_garbage_never_panics(ty in data_type(), text in "\\PC{0,30}") {
        if let Ok(v) = Value::parse(&text, &ty) {
            prop_assert!(v.fits(&ty), "{text:?} as {ty} gave {v:?}");
        }
    }

    #[test]
    fn parsing_datetime_like_garbage_never_panics(
        ty in prop_oneof![Just(DataType::Date), Just(DataType::Timestamp), Just(DataType::TimestampTz)],
        text in "[0-9]{1,10}-[0-9]{1,3}-[0-9]{1,3}( |T)?[0-9:.]{0,14}[ +-]?[0-9:]{0,9}( BC| Z| UTC)?",
    ) {
        if let Err(e) = Value::parse(&text, &ty) {
            prop_assert!(["22007", "22008", "22023"].contains(&e.sqlstate()), "{text}: {e}");
        }
    }
}

fn check_total_order(a: &Value, b: &Value, c: &Value) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.cmp(b), b.cmp(a).reverse());
    prop_assert_eq!(a.cmp(a), Ordering::Equal);
    if a <= b && b <= c {
        prop_assert!(a <= c, "{a:?} <= {b:?} <= {c:?}");
    }
    if a == b {
        prop_assert_eq!(a.cmp(c), b.cmp(c));
    }
    Ok(())
}
