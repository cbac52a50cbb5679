use super::*;

/// The context every test call runs in: the transaction started at
/// 2024-03-05 14:07:09.5 UTC, the statement one second later.
fn ctx() -> FnContext {
    let transaction_time = TimestampTz::parse("2024-03-05 14:07:09.5").unwrap();
    FnContext { statement_time: TimestampTz(transaction_time.0 + 1_000_000), transaction_time }
}

/// Calls `name` as the evaluator would: resolve for `types`, skip a strict
/// function with a NULL argument, then check the value has the declared type.
fn call_typed(name: &str, types: &[Option<DataType>], args: &[Value]) -> Result<Value> {
    let builtin = resolve(name, types).unwrap_or_else(|| panic!("{name} does not exist"))?;
    if builtin.strict && args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let value = (builtin.eval)(args, &ctx())?;
    if let Some(t) = value.data_type() {
        assert_eq!(builtin.ret.as_ref().map(code), Some(code(&t)), "{name}: {value:?}");
    }
    Ok(value)
}

/// Calls with each argument typed as its value (Text is `text`).
fn call(name: &str, args: &[Value]) -> Result<Value> {
    let types: Vec<_> = args.iter().map(Value::data_type).collect();
    call_typed(name, &types, args)
}

/// Calls with Text and NULL arguments as untyped literals.
fn call_lit(name: &str, args: &[Value]) -> Result<Value> {
    let types: Vec<_> = args.iter().map(|v| v.data_type().filter(|t| *t != DataType::Text)).collect();
    call_typed(name, &types, args)
}

/// `type:text` of a successful call with typed arguments.
fn ok(name: &str, args: &[Value]) -> String {
    shown(call(name, args), name)
}

/// `type:text` of a successful call with untyped literals.
fn ok_lit(name: &str, args: &[Value]) -> String {
    shown(call_lit(name, args), name)
}

fn shown(result: Result<Value>, name: &str) -> String {
    let value = result.unwrap_or_else(|e| panic!("{name}: {e}"));
    format!("{}:{value}", type_label(value.data_type().as_ref()))
}

/// `SQLSTATE: message` of a failed call with typed arguments.
fn err(name: &str, args: &[Value]) -> String {
    shown_err(call(name, args))
}

/// `SQLSTATE: message` of a failed call with untyped literals.
fn err_lit(name: &str, args: &[Value]) -> String {
    shown_err(call_lit(name, args))
}

fn shown_err(result: Result<Value>) -> String {
    match result {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => format!("{}: {e}", e.sqlstate()),
    }
}

fn t(s: &str) -> Value {
    Value::from(s)
}

fn i(x: i32) -> Value {
    Value::Integer(x)
}

fn n(s: &str) -> Value {
    Value::parse(s, &NUMERIC).unwrap()
}

fn f(x: f64) -> Value {
    Value::Double(x)
}

fn ts(s: &str) -> Value {
    Value::Timestamp(Timestamp::parse(s).unwrap())
}

fn date(s: &str) -> Value {
    Value::Date(Date::parse(s).unwrap())
}

#[test]
fn resolution() {
    assert!(resolve("no_such_function", &[]).is_none());
    assert!(resolve("coalesce", &[None, None]).is_none());
    assert!(resolve("lower", &[Some(DataType::Varchar(Some(5)))]).is_some_and(|b| b.is_ok()));
    assert!(resolve("lower", &[Some(DataType::Text)]).is_some_and(|b| b.is_ok_and(|b| b.strict)));
    assert!(resolve("concat", &[None]).is_some_and(|b| b.is_ok_and(|b| !b.strict)));
    assert_eq!(err("length", &[i(1)]), "42883: function length(integer) does not exist");
    assert_eq!(err("abs", &[t("x")]), "42883: function abs(text) does not exist");
    assert_eq!(
        err("round", &[f(1.5), i(1)]),
        "42883: function round(double precision, integer) does not exist"
    );
    assert_eq!(err_lit("substr", &[t("x")]), "42883: function substr(unknown) does not exist");
    let char5 = [Some(DataType::Char(5)), Some(DataType::BigInt)];
    let e = resolve("left", &char5).and_then(|r| r.err()).map(|e| e.to_string());
    assert_eq!(e.as_deref(), Some("function left(character, bigint) does not exist"));
    assert_eq!(format!("{:?}", resolve("strpos", &[None, None]).and_then(|r| r.ok())), "Some(strpos)");
}

#[test]
fn string_functions() {
    assert_eq!(ok("length", &[t("héllo")]), "integer:5");
    assert_eq!(ok("char_length", &[t("")]), "integer:0");
    let padded = call_typed("length", &[Some(DataType::Char(5))], &[t("ab   ")]);
    assert_eq!(shown(padded, "length"), "integer:2");
    assert_eq!(ok("octet_length", &[t("héllo")]), "integer:6");
    assert_eq!(ok("octet_length", &[Value::Bytea(vec![1, 2, 3])]), "integer:3");
    assert_eq!(ok("length", &[Value::Bytea(vec![1, 2, 3])]), "integer:3");
    assert_eq!(ok_lit("length", &[t("abc")]), "integer:3");
    assert_eq!(ok("lower", &[t("HÉllo")]), "text:héllo");
    assert_eq!(ok("upper", &[t("héllo")]), "text:HÉLLO");
    assert_eq!(ok("initcap", &[t("hello wORLD-foo bar2x")]), "text:Hello World-Foo Bar2x");
    assert_eq!(ok("lower", &[Value::Null]), "unknown:NULL");
    assert_eq!(ok("reverse", &[t("abč")]), "text:čba");
    assert_eq!(ok("starts_with", &[t("hello"), t("he")]), "boolean:t");
    assert_eq!(ok("starts_with", &[t("hello"), t("lo")]), "boolean:f");
    assert_eq!(ok("ascii", &[t("A")]), "integer:65");
    assert_eq!(ok("ascii", &[t("")]), "integer:0");
    assert_eq!(ok("chr", &[i(0x20AC)]), "text:€");
    assert_eq!(err("chr", &[i(0)]), "54000: null character not permitted");
    assert_eq!(err("chr", &[i(0x110000)]), "54000: requested character too large for encoding: 1114112");
    assert_eq!(err("chr", &[i(-1)]), "54000: requested character too large for encoding: 4294967295");
    assert_eq!(err("chr", &[i(0xD800)]), "54000: requested character not valid for encoding: 55296");
    assert_eq!(ok("to_hex", &[i(255)]), "text:ff");
    assert_eq!(ok("to_hex", &[i(-1)]), "text:ffffffff");
    assert_eq!(ok("to_hex", &[Value::BigInt(-1)]), "text:ffffffffffffffff");
    assert_eq!(ok("to_hex", &[Value::SmallInt(-1)]), "text:ffffffff");
}

#[test]
fn substrings_and_positions() {
    assert_eq!(ok("substr", &[t("hello"), i(2), i(3)]), "text:ell");
    assert_eq!(ok("substring", &[t("hello"), i(0), i(3)]), "text:he");
    assert_eq!(ok("substr", &[t("hello"), i(-5), i(3)]), "text:");
    assert_eq!(ok("substr", &[t("héllo"), i(2)]), "text:éllo");
    assert_eq!(ok("substr", &[t("hello"), i(i32::MAX), i(i32::MAX)]), "text:");
    assert_eq!(ok("substr", &[t("hello"), i(i32::MIN), i(i32::MAX)]), "text:");
    assert_eq!(ok_lit("substr", &[t("hello"), t("2"), t("2")]), "text:el");
    assert_eq!(err("substr", &[t("hello"), i(2), i(-1)]), "22011: negative substring length not allowed");
    assert_eq!(
        err_lit("substr", &[t("hello"), t("x")]),
        "22P02: invalid input syntax for type bigint: \"x\""
    );
    assert_eq!(ok("position", &[t("hello"), t("ll")]), "integer:3");
    assert_eq!(ok("strpos", &[t("héllo"), t("l")]), "integer:3");
    assert_eq!(ok("strpos", &[t("hello"), t("z")]), "integer:0");
    assert_eq!(ok("strpos", &[t("hello"), t("")]), "integer:1");
    assert_eq!(ok("replace", &[t("abcabc"), t("b"), t("XY")]), "text:aXYcaXYc");
    assert_eq!(ok("replace", &[t("abc"), t(""), t("X")]), "text:abc");
    assert_eq!(ok("split_part", &[t("a,b,c"), t(","), i(2)]), "text:b");
    assert_eq!(ok("split_part", &[t("a,b,c"), t(","), i(-1)]), "text:c");
    assert_eq!(ok("split_part", &[t("a,b,c"), t(","), i(4)]), "text:");
    assert_eq!(ok("split_part", &[t("a,b,c"), t(","), i(i32::MIN)]), "text:");
    assert_eq!(ok("split_part", &[t("abc"), t(""), i(1)]), "text:abc");
    assert_eq!(err("split_part", &[t("a,b"), t(","), i(0)]), "22023: field position must not be zero");
    assert_eq!(ok("left", &[t("hello"), i(2)]), "text:he");
    assert_eq!(ok("left", &[t("hello"), i(-2)]), "text:hel");
    assert_eq!(ok("left", &[t("hello"), i(i32::MIN)]), "text:");
    assert_eq!(ok("right", &[t("hello"), i(2)]), "text:lo");
    assert_eq!(ok("right", &[t("hello"), i(-2)]), "text:llo");
    assert_eq!(ok("right", &[t("hello"), i(i32::MIN)]), "text:");
    assert_eq!(ok("right", &[t("hello"), i(i32::MAX)]), "text:hello");
}

#[test]
fn trimming_and_padding() {
    assert_eq!(ok("trim", &[t("  ab  ")]), "text:ab");
    assert_eq!(ok("btrim", &[t("xyabyx"), t("xy")]), "text:ab");
    assert_eq!(ok("ltrim", &[t("xxab"), t("x")]), "text:ab");
    assert_eq!(ok("rtrim", &[t("  ab  ")]), "text:  ab");
    assert_eq!(ok("lpad", &[t("hi"), i(5)]), "text:   hi");
    assert_eq!(ok("lpad", &[t("hi"), i(5), t("xy")]), "text:xyxhi");
    assert_eq!(ok("rpad", &[t("hi"), i(5), t("xy")]), "text:hixyx");
    assert_eq!(ok("rpad", &[t("hello"), i(2)]), "text:he");
    assert_eq!(ok("lpad", &[t("hello"), i(2)]), "text:he");
    assert_eq!(ok("lpad", &[t("hi"), i(-1)]), "text:");
    assert_eq!(ok("lpad", &[t("hi"), i(5), t("")]), "text:hi");
    assert_eq!(ok("lpad", &[t("hi"), i(5), Value::Null]), "unknown:NULL");
    assert_eq!(err("lpad", &[t("hi"), i(i32::MAX)]), "54000: requested length too large");
    assert_eq!(ok("repeat", &[t("ab"), i(3)]), "text:ababab");
    assert_eq!(ok("repeat", &[t("ab"), i(-1)]), "text:");
    assert_eq!(err("repeat", &[t("ab"), i(i32::MAX)]), "54000: requested length too large");
}

#[test]
fn concatenation() {
    assert_eq!(
        ok_lit("concat", &[t("a"), Value::Null, i(1), Value::Boolean(true), n("1.50")]),
        "text:a1t1.50"
    );
    assert_eq!(ok_lit("concat", &[Value::Null]), "text:");
    assert_eq!(err("concat", &[]), "42883: function concat() does not exist");
    assert_eq!(ok_lit("concat_ws", &[t(","), t("a"), Value::Null, i(2)]), "text:a,2");
    assert_eq!(ok_lit("concat_ws", &[Value::Null, t("a")]), "unknown:NULL");
    assert_eq!(err("concat_ws", &[i(1), t("a")]), "42883: function concat_ws(integer, text) does not exist");
}

#[test]
fn md5_digests() {
    for (input, digest) in [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("The quick brown fox jumps over the lazy dog", "9e107d9d372bb6826bd81d3542a419d6"),
        (&"a".repeat(55), "ef1772b6dff9a122358552954ad0df65"),
        (&"a".repeat(56), "3b0c8ac703f828b04c6c197006d17218"),
        (&"a".repeat(64), "014842d480b571495a4a0363793f7367"),
        ("héllo", "be50e8478cf24ff3595bc7307fb91b50"),
    ] {
        assert_eq!(ok_lit("md5", &[t(input)]), format!("text:{digest}"));
    }
    assert_eq!(ok("md5", &[Value::Bytea(b"abc".to_vec())]), "text:900150983cd24fb0d6963f7d28e17f72");
}

#[test]
fn integer_functions_keep_their_type() {
    assert_eq!(ok("abs", &[i(-5)]), "integer:5");
    assert_eq!(ok("abs", &[Value::SmallInt(-5)]), "smallint:5");
    assert_eq!(ok("abs", &[Value::BigInt(-5)]), "bigint:5");
    assert_eq!(err("abs", &[Value::SmallInt(i16::MIN)]), "22003: smallint out of range");
    assert_eq!(err("abs", &[i(i32::MIN)]), "22003: integer out of range");
    assert_eq!(err("abs", &[Value::BigInt(i64::MIN)]), "22003: bigint out of range");
    assert_eq!(ok("abs", &[n("-17.40")]), "numeric:17.40");
    assert_eq!(ok("abs", &[f(-1.5)]), "double precision:1.5");
    assert_eq!(ok_lit("abs", &[t("-1.5")]), "double precision:1.5");
    assert_eq!(ok("mod", &[i(9), i(4)]), "integer:1");
    assert_eq!(ok("mod", &[i(-9), i(4)]), "integer:-1");
    assert_eq!(ok("mod", &[Value::SmallInt(9), i(4)]), "integer:1");
    assert_eq!(ok("mod", &[Value::BigInt(i64::MIN), Value::BigInt(-1)]), "bigint:0");
    assert_eq!(ok("mod", &[n("10.5"), i(3)]), "numeric:1.5");
    assert_eq!(ok_lit("mod", &[i(9), t("4")]), "integer:1");
    assert_eq!(err("mod", &[i(1), i(0)]), "22012: division by zero");
    assert_eq!(err("mod", &[n("1"), n("0.0")]), "22012: division by zero");
    assert_eq!(err("mod", &[f(1.0), i(1)]), "42883: function mod(double precision, integer) does not exist");
    assert_eq!(ok("div", &[i(9), i(4)]), "numeric:2");
    assert_eq!(ok("div", &[n("-9"), n("4")]), "numeric:-2");
    assert_eq!(err("div", &[i(9), i(0)]), "22012: division by zero");
    assert_eq!(ok("gcd", &[i(1071), i(462)]), "integer:21");
    assert_eq!(ok("gcd", &[i(-12), i(0)]), "integer:12");
    assert_eq!(ok("gcd", &[Value::SmallInt(4), Value::SmallInt(6)]), "integer:2");
    assert_eq!(ok("gcd", &[n("1.5"), n("2.50")]), "numeric:0.50");
    assert_eq!(err("gcd", &[i(i32::MIN), i(0)]), "22003: integer out of range");
    assert_eq!(ok("lcm", &[i(1071), i(462)]), "integer:23562");
    assert_eq!(ok("lcm", &[i(0), i(5)]), "integer:0");
    assert_eq!(ok("lcm", &[Value::BigInt(-4), Value::BigInt(6)]), "bigint:12");
    assert_eq!(ok("lcm", &[n("1.5"), n("2.5")]), "numeric:7.5");
    assert_eq!(err("lcm", &[i(i32::MAX), i(i32::MAX - 1)]), "22003: integer out of range");
}

#[test]
fn float_and_numeric_functions() {
    assert_eq!(ok("sign", &[n("-8.4")]), "numeric:-1");
    assert_eq!(ok("sign", &[i(3)]), "double precision:1");
    assert_eq!(ok("ceil", &[n("42.2")]), "numeric:43");
    assert_eq!(ok("ceiling", &[n("-42.8")]), "numeric:-42");
    assert_eq!(ok("floor", &[n("-42.8")]), "numeric:-43");
    assert_eq!(ok("floor", &[i(3)]), "double precision:3");
    assert_eq!(ok("round", &[n("2.5")]), "numeric:3");
    assert_eq!(ok("round", &[n("-2.5")]), "numeric:-3");
    assert_eq!(ok("round", &[f(2.5)]), "double precision:2");
    assert_eq!(ok("round", &[n("42.4382"), i(2)]), "numeric:42.44");
    assert_eq!(ok("round", &[n("1.5"), i(3)]), "numeric:1.500");
    assert_eq!(ok("round", &[n("1234.5"), i(-2)]), "numeric:1200");
    assert_eq!(ok("round", &[i(1250), i(-2)]), "numeric:1300");
    assert_eq!(ok("round", &[n("1234.5"), i(-40)]), "numeric:0");
    assert_eq!(ok("trunc", &[n("42.4382"), i(2)]), "numeric:42.43");
    assert_eq!(ok("trunc", &[n("-1.99")]), "numeric:-1");
    assert_eq!(ok("trunc", &[n("1299.5"), i(-2)]), "numeric:1200");
    assert_eq!(ok("trunc", &[f(-1.99)]), "double precision:-1");
    assert_eq!(ok("sqrt", &[i(2)]), "double precision:1.4142135623730951");
    assert_eq!(ok("sqrt", &[n("2.0")]), "numeric:1.414213562373095");
    assert_eq!(ok("sqrt", &[n("100")]), "numeric:10.000000000000000");
    assert_eq!(err("sqrt", &[i(-1)]), "2201F: cannot take square root of a negative number");
    assert_eq!(err("sqrt", &[n("-1")]), "2201F: cannot take square root of a negative number");
    assert_eq!(ok("cbrt", &[i(64)]), "double precision:4");
    assert_eq!(ok("exp", &[f(1.0)]), "double precision:2.718281828459045");
    assert_eq!(ok("exp", &[n("1.0")]), "numeric:2.7182818284590452");
    assert_eq!(err("exp", &[f(1000.0)]), "22003: value out of range: overflow");
    assert_eq!(err("exp", &[f(-1000.0)]), "22003: value out of range: underflow");
    assert_eq!(err("exp", &[n("100")]), "22003: value overflows numeric format");
    assert_eq!(ok("ln", &[n("2.0")]), "numeric:0.6931471805599453");
    assert_eq!(ok("ln", &[i(1)]), "double precision:0");
    assert_eq!(err("ln", &[i(0)]), "2201E: cannot take logarithm of zero");
    assert_eq!(err("ln", &[n("-1")]), "2201E: cannot take logarithm of a negative number");
    assert_eq!(ok("log", &[i(100)]), "double precision:2");
    assert_eq!(ok("log10", &[i(1000)]), "double precision:3");
    assert_eq!(ok("log", &[n("100.0")]), "numeric:2.0000000000000000");
    assert_eq!(ok("log", &[n("2.0"), n("64.0")]), "numeric:6.0000000000000000");
    assert_eq!(ok("log", &[i(2), i(8)]), "numeric:3.0000000000000000");
    assert_eq!(err("log", &[i(1), i(8)]), "22012: division by zero");
    assert_eq!(err("log", &[n("0"), i(8)]), "2201E: cannot take logarithm of zero");
    assert_eq!(ok("power", &[i(9), i(3)]), "double precision:729");
    assert_eq!(ok("pow", &[n("2.0"), i(3)]), "numeric:8.0000000000000000");
    assert_eq!(ok("power", &[i(2), n("0.5")]), "numeric:1.4142135623730950");
    assert_eq!(ok("power", &[n("10"), i(20)]), "numeric:100000000000000000000");
    assert_eq!(ok("power", &[n("2"), i(-2)]), "numeric:0.2500000000000000");
    assert_eq!(err("power", &[i(0), i(-1)]), "2201F: zero raised to a negative power is undefined");
    assert_eq!(err("power", &[n("0"), n("-1")]), "2201F: zero raised to a negative power is undefined");
    let complex = "2201F: a negative number raised to a non-integer power yields a complex result";
    assert_eq!(err("power", &[f(-8.0), f(0.5)]), complex);
    assert_eq!(err("power", &[n("-8"), n("0.5")]), complex);
    assert_eq!(err("power", &[f(10.0), f(400.0)]), "22003: value out of range: overflow");
    assert_eq!(err("power", &[n("10"), i(40)]), "22003: value overflows numeric format");
    assert_eq!(ok("pi", &[]), "double precision:3.141592653589793");
}

#[test]
fn greatest_and_least() {
    assert_eq!(ok("greatest", &[i(1), n("2.5"), Value::Null]), "numeric:2.5");
    assert_eq!(ok("least", &[i(1), Value::SmallInt(2)]), "integer:1");
    assert_eq!(ok("greatest", &[i(1), f(0.5)]), "double precision:1");
    assert_eq!(ok_lit("greatest", &[i(3), t("5")]), "integer:5");
    assert_eq!(ok_lit("least", &[t("b"), t("a")]), "text:a");
    assert_eq!(ok_lit("greatest", &[Value::Null, Value::Null]), "unknown:NULL");
    assert_eq!(
        ok("greatest", &[date("2024-03-05"), ts("2024-03-04 12:00")]),
        "timestamp without time zone:2024-03-05 00:00:00"
    );
    assert_eq!(err("greatest", &[t("a"), i(1)]), "42804: GREATEST types text and integer cannot be matched");
    assert_eq!(err_lit("least", &[i(1), t("x")]), "22P02: invalid input syntax for type integer: \"x\"");
    let nullable = resolve("least", &[Some(DataType::Integer)]).and_then(|r| r.ok());
    assert!(nullable.is_some_and(|b| !b.strict && b.ret == Some(DataType::Integer)));
}

#[test]
fn random_values() {
    let mut seen = Vec::new();
    for _ in 0..100 {
        match call("random", &[]) {
            Ok(Value::Double(x)) => {
                assert!((0.0..1.0).contains(&x));
                seen.push(x.to_bits());
            }
            other => panic!("{other:?}"),
        }
    }
    seen.sort_unstable();
    seen.dedup();
    assert!(seen.len() > 90);
}

#[test]
fn current_time() {
    let c = ctx();
    assert_eq!(ok("now", &[]), "timestamp with time zone:2024-03-05 14:07:09.5+00");
    assert_eq!(ok("transaction_timestamp", &[]), "timestamp with time zone:2024-03-05 14:07:09.5+00");
    assert_eq!(ok("current_timestamp", &[]), "timestamp with time zone:2024-03-05 14:07:09.5+00");
    assert_eq!(ok("current_timestamp", &[i(0)]), "timestamp with time zone:2024-03-05 14:07:10+00");
    assert_eq!(ok("localtimestamp", &[i(9)]), "timestamp without time zone:2024-03-05 14:07:09.5");
    let e = err("localtimestamp", &[i(-1)]);
    assert_eq!(e, "22023: TIMESTAMP(-1) precision must not be negative");
    assert_eq!(ok("statement_timestamp", &[]), "timestamp with time zone:2024-03-05 14:07:10.5+00");
    assert_eq!(ok("current_date", &[]), "date:2024-03-05");
    match call("clock_timestamp", &[]) {
        Ok(Value::TimestampTz(now)) => assert!(now > c.transaction_time),
        other => panic!("{other:?}"),
    }
    assert_eq!(err("now", &[i(1)]), "42883: function now(integer) does not exist");
}

#[test]
fn truncation() {
    let at = ts("2001-02-16 20:38:40.123456");
    let trunc = |unit: &str| ok_lit("date_trunc", &[t(unit), at.clone()]);
    assert_eq!(trunc("hour"), "timestamp without time zone:2001-02-16 20:00:00");
    assert_eq!(trunc("YEAR"), "timestamp without time zone:2001-01-01 00:00:00");
    assert_eq!(trunc("milliseconds"), "timestamp without time zone:2001-02-16 20:38:40.123");
    assert_eq!(trunc("week"), "timestamp without time zone:2001-02-12 00:00:00");
    assert_eq!(trunc("quarter"), "timestamp without time zone:2001-01-01 00:00:00");
    assert_eq!(trunc("decade"), "timestamp without time zone:2000-01-01 00:00:00");
    assert_eq!(trunc("century"), "timestamp without time zone:2001-01-01 00:00:00");
    assert_eq!(trunc("millennium"), "timestamp without time zone:2001-01-01 00:00:00");
    let before = ok_lit("date_trunc", &[t("second"), ts("1999-12-31 23:59:59.5")]);
    assert_eq!(before, "timestamp without time zone:1999-12-31 23:59:59");
    let day = ok_lit("date_trunc", &[t("month"), date("2024-03-05")]);
    assert_eq!(day, "timestamp with time zone:2024-03-01 00:00:00+00");
    let literal = ok_lit("date_trunc", &[t("day"), t("2024-03-05 10:00")]);
    assert_eq!(literal, "timestamp with time zone:2024-03-05 00:00:00+00");
    let infinite = ok_lit("date_trunc", &[t("year"), Value::Timestamp(Timestamp::INFINITY)]);
    assert_eq!(infinite, "timestamp without time zone:infinity");
    let e = err_lit("date_trunc", &[t("fortnight"), at.clone()]);
    assert_eq!(e, "22023: unit \"fortnight\" not recognized for type timestamp without time zone");
    let e = err_lit("date_trunc", &[t("dow"), at]);
    assert_eq!(e, "0A000: unit \"dow\" not supported for type timestamp without time zone");
    assert_eq!(ok_lit("date_trunc", &[Value::Null, date("2024-03-05")]), "unknown:NULL");
}

#[test]
fn fields() {
    let at = ts("2001-02-16 20:38:40.5");
    let part = |unit: &str, source: &Value| ok_lit("date_part", &[t(unit), source.clone()]);
    let extract = |unit: &str, source: &Value| ok_lit("extract", &[t(unit), source.clone()]);
    assert_eq!(part("year", &at), "double precision:2001");
    assert_eq!(part("second", &at), "double precision:40.5");
    assert_eq!(part("milliseconds", &at), "double precision:40500");
    assert_eq!(part("microsecond", &at), "double precision:40500000");
    assert_eq!(part("minute", &at), "double precision:38");
    assert_eq!(part("hour", &at), "double precision:20");
    assert_eq!(part("dow", &at), "double precision:5");
    assert_eq!(part("isodow", &ts("2001-02-18 20:38:40")), "double precision:7");
    assert_eq!(part("doy", &at), "double precision:47");
    assert_eq!(part("quarter", &at), "double precision:1");
    assert_eq!(part("decade", &at), "double precision:200");
    assert_eq!(part("century", &ts("2000-12-16 12:21:13")), "double precision:20");
    assert_eq!(part("century", &at), "double precision:21");
    assert_eq!(part("millennium", &at), "double precision:3");
    assert_eq!(part("week", &date("2006-01-01")), "double precision:52");
    assert_eq!(part("isoyear", &date("2006-01-01")), "double precision:2005");
    assert_eq!(part("week", &date("2024-01-01")), "double precision:1");
    assert_eq!(part("epoch", &ts("1970-01-01 00:00:01.5")), "double precision:1.5");
    assert_eq!(part("hour", &date("2024-03-05")), "double precision:0");
    assert_eq!(part("year", &date("0044-03-15 BC")), "double precision:-44");
    assert_eq!(part("julian", &date("2006-01-01")), "double precision:2453737");
    let tz = Value::TimestampTz(TimestampTz(0));
    assert_eq!(part("timezone", &tz), "double precision:0");
    let infinite = Value::Timestamp(Timestamp::NEG_INFINITY);
    assert_eq!(part("year", &infinite), "double precision:-Infinity");
    assert_eq!(part("month", &infinite), "unknown:NULL");
    assert_eq!(extract("second", &at), "numeric:40.500000");
    assert_eq!(extract("milliseconds", &at), "numeric:40500.000");
    assert_eq!(extract("year", &at), "numeric:2001");
    let epoch_tz = Value::TimestampTz(TimestampTz::parse("2001-02-16 20:38:40.12-08").unwrap());
    assert_eq!(extract("epoch", &epoch_tz), "numeric:982384720.120000");
    assert_eq!(extract("epoch", &date("1970-01-02")), "numeric:86400");
    assert_eq!(extract("julian", &date("2006-01-01")), "numeric:2453737");
    assert_eq!(extract("day", &date("2006-01-01")), "numeric:1");
    let e = err_lit("extract", &[t("hour"), date("2024-03-05")]);
    assert_eq!(e, "0A000: unit \"hour\" not supported for type date");
    let e = err_lit("date_part", &[t("timezone"), at.clone()]);
    assert_eq!(e, "0A000: unit \"timezone\" not supported for type timestamp without time zone");
    let e = err_lit("date_part", &[t("eon"), at]);
    assert_eq!(e, "22023: unit \"eon\" not recognized for type timestamp without time zone");
    assert_eq!(
        err("date_part", &[t("year"), i(1)]),
        "42883: function date_part(text, integer) does not exist"
    );
}

#[test]
fn construction() {
    assert_eq!(ok("make_date", &[i(2024), i(2), i(29)]), "date:2024-02-29");
    assert_eq!(ok("make_date", &[i(-44), i(3), i(15)]), "date:0044-03-15 BC");
    assert_eq!(err("make_date", &[i(2023), i(2), i(29)]), "22008: date field value out of range: 2023-02-29");
    assert_eq!(err("make_date", &[i(0), i(1), i(1)]), "22008: date field value out of range: 0-01-01");
    assert_eq!(err("make_date", &[i(2024), i(-1), i(1)]), "22008: date field value out of range: 2024--1-01");
    let args = [i(2024), i(3), i(5), i(14), i(7), n("9.5")];
    assert_eq!(ok("make_timestamp", &args), "timestamp without time zone:2024-03-05 14:07:09.5");
    let midnight = [i(2024), i(3), i(5), i(24), i(0), i(0)];
    assert_eq!(ok("make_timestamp", &midnight), "timestamp without time zone:2024-03-06 00:00:00");
    let late = [i(2024), i(3), i(5), i(14), i(7), f(60.5)];
    assert_eq!(err("make_timestamp", &late), "22008: time field value out of range: 14:07:60.5");
    let early = [i(2024), i(3), i(5), i(-1), i(7), f(5.0)];
    assert_eq!(err("make_timestamp", &early), "22008: time field value out of range: -1:07:05");
    let bc = [i(0), i(3), i(5), i(1), i(7), f(5.0)];
    assert_eq!(err("make_timestamp", &bc), "22008: date field value out of range: 0-03-05");
    let far = [i(5_000_000), i(1), i(1), i(0), i(0), i(0)];
    assert_eq!(err("make_timestamp", &far), "22008: timestamp out of range");
    assert_eq!(ok("to_timestamp", &[i(0)]), "timestamp with time zone:1970-01-01 00:00:00+00");
    assert_eq!(ok("to_timestamp", &[f(1.5)]), "timestamp with time zone:1970-01-01 00:00:01.5+00");
    assert_eq!(ok("to_timestamp", &[f(f64::INFINITY)]), "timestamp with time zone:infinity");
    assert_eq!(err("to_timestamp", &[f(f64::NAN)]), "22008: timestamp cannot be NaN");
    assert_eq!(err("to_timestamp", &[f(1e20)]), "22008: timestamp out of range: \"1e+20\"");
}

#[test]
fn session_functions() {
    let version = format!("text:PostgreSQL 15.0 on Centum {}", env!("CARGO_PKG_VERSION"));
    assert_eq!(ok("version", &[]), version);
    assert_eq!(ok("current_database", &[]), "text:postgres");
    assert_eq!(ok("current_catalog", &[]), "text:postgres");
    assert_eq!(ok("current_schema", &[]), "text:public");
    assert_eq!(ok("current_user", &[]), "text:centum");
    assert_eq!(ok("session_user", &[]), "text:centum");
    let (Ok(Value::Uuid(a)), Ok(Value::Uuid(b))) =
        (call("gen_random_uuid", &[]), call("gen_random_uuid", &[]))
    else {
        panic!("gen_random_uuid did not return uuids");
    };
    assert_ne!(a, b);
    assert_eq!(a.get_version_num(), 4);
    assert_eq!(a.as_bytes()[8] & 0xc0, 0x80);
}

/// Every function with awkward arguments, typed and untyped, in every
/// position: errors are fine, panics (overflow included) are not.
#[test]
fn no_panics_on_extreme_arguments() {
    let mut names: Vec<&str> = SIGS.iter().flat_map(|s| s.names.iter().copied()).collect();
    names.extend([
        "abs",
        "sign",
        "ceil",
        "floor",
        "round",
        "trunc",
        "sqrt",
        "exp",
        "ln",
        "log",
        "log10",
        "power",
        "mod",
        "div",
        "gcd",
        "lcm",
        "concat",
        "concat_ws",
        "greatest",
        "least",
    ]);
    let pool = vec![
        Value::Null,
        Value::SmallInt(i16::MIN),
        i(i32::MIN),
        i(i32::MAX),
        i(-1),
        i(0),
        Value::BigInt(i64::MIN),
        Value::BigInt(i64::MAX),
        Value::Numeric(Decimal::MAX),
        Value::Numeric(Decimal::MIN),
        n("0.0000000000000000000000000001"),
        n("-2.5"),
        f(f64::NAN),
        f(f64::NEG_INFINITY),
        f(1e308),
        f(-0.0),
        t(""),
        t("-5"),
        t("year"),
        t("millennium"),
        t("epoch"),
        t("julian"),
        t("1e400"),
        Value::Date(Date::INFINITY),
        Value::Date(Date(2_000_000_000)),
        Value::Timestamp(Timestamp(-211_813_488_000_000_000)),
        Value::TimestampTz(TimestampTz(9_223_371_331_199_999_999)),
        Value::Bytea(vec![0xff; 70]),
        Value::Boolean(true),
    ];
    let mut seed = 0x1234_5678_u64;
    let mut pick = |len: usize| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize % len
    };
    let mut calls = 0;
    for name in names {
        for arity in 0..=6usize {
            let combos = match arity {
                0 => 1,
                1 => pool.len(),
                2 => pool.len() * pool.len(),
                _ => 800,
            };
            for c in 0..combos {
                let args: Vec<Value> = (0..arity)
                    .map(|p| match arity {
                        1 => pool[c].clone(),
                        2 => pool[if p == 0 { c / pool.len() } else { c % pool.len() }].clone(),
                        _ => pool[pick(pool.len())].clone(),
                    })
                    .collect();
                let _ = call(name, &args);
                let _ = call_lit(name, &args);
                calls += 2;
            }
        }
    }
    assert!(calls > 50_000);
}
