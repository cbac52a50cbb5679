//! Literals of every type, weighted towards the values that break code:
//! the ends of each integer range, NaN and infinities, the largest
//! numeric, the first and last dates, empty and very long strings, quotes,
//! backslashes, non-ASCII text and malformed input for every type.

use super::rng::Rng;
use super::schema::Ty;

/// Strings that are hard on parsers, collations and pattern matchers.
const TEXTS: &[&str] = &[
    "",
    " ",
    "a",
    "abc",
    "ABC",
    "O''Brien",
    "back\\slash",
    "%",
    "_",
    "a%b_c",
    "\\",
    "[",
    "(a|b)*c",
    ".*",
    "(((((((((((a)))))))))))",
    "x{1000}{1000}",
    "ü",
    "日本語テキスト",
    "🦀🦀",
    "e\u{301}",
    "\u{200b}",
    "\u{10ffff}",
    "NULL",
    "null",
    "-",
    "123",
    "-9223372036854775808",
    "1e400",
    "NaN",
    "Infinity",
    "2024-02-29",
    "0001-01-01 BC",
    "t",
    "f",
    "yes",
    "00000000-0000-0000-0000-000000000000",
    "\\x00ff",
    "{1,2,NULL}",
    "{{1,2},{3}}",
    "{",
    "\t",
];

/// A literal of type `ty` as SQL text: usually well-formed, sometimes an
/// extreme value, sometimes text that does not parse as the type.
pub fn literal(rng: &mut Rng, ty: Ty) -> String {
    if rng.chance(0.08) {
        return "NULL".into();
    }
    match ty {
        Ty::Int2 => int(rng, 32767),
        Ty::Int4 => int(rng, 2147483647),
        Ty::Int8 => int(rng, i64::MAX),
        Ty::Numeric => numeric(rng),
        Ty::Double => double(rng),
        Ty::Text => text(rng),
        Ty::Bool if rng.chance(0.05) => "'maybe'".into(),
        Ty::Bool => rng.pick(&["true", "false", "'t'", "'yes'", "'off'"]).to_string(),
        Ty::Date => quoted(rng, "date", &DATES, &BAD_DATES),
        Ty::Ts => quoted(rng, "timestamp", &TIMESTAMPS, &BAD_TIMESTAMPS),
        Ty::TsTz => quoted(rng, "timestamptz", &TIMESTAMPS, &BAD_TIMESTAMPS),
        Ty::Uuid => uuid(rng),
        Ty::Bytea => quoted(rng, "bytea", &BYTEAS, &BAD_BYTEAS),
        Ty::IntArray | Ty::TextArray => array(rng, ty),
    }
}

/// An array: a literal in array text (quoted elements, NULLs, malformed
/// and nested ones) or `ARRAY[...]` of element literals.
fn array(rng: &mut Rng, ty: Ty) -> String {
    let elem = if ty == Ty::IntArray { Ty::Int4 } else { Ty::Text };
    match rng.below(10) {
        0 => rng
            .pick(&[
                "'{}'",
                "'{1,2,NULL}'",
                "'{{1,2},{3,4}}'",
                "'{'",
                "'{1,}'",
                "'{\"a b\",NULL,\"NULL\"}'",
                "'{ 7 , 8 }'",
            ])
            .to_string(),
        1..=4 => {
            let n = rng.below(6);
            let items: Vec<String> = (0..n).map(|_| literal(rng, elem)).collect();
            format!("ARRAY[{}]::{}", items.join(", "), ty.sql())
        }
        _ => {
            let n = rng.below(6);
            let items: Vec<String> = (0..n)
                .map(|_| match (rng.below(8), elem) {
                    (0, _) => "NULL".to_string(),
                    (_, Ty::Int4) => format!("{}", rng.range(-1000, 1000)),
                    (k, _) => format!(
                        "\"{}\"",
                        rng.pick(&["a", "b c", "", "NULL", "x,y", "q\\\"t", "🦀"]).repeat(k)
                    ),
                })
                .collect();
            format!("'{{{}}}'::{}", items.join(","), ty.sql())
        }
    }
}

/// An integer up to `max` in size, with the ends of each range and just
/// past them.
fn int(rng: &mut Rng, max: i64) -> String {
    match rng.below(20) {
        0 | 1 => rng.pick(&["0", "-1", "1", "32767", "-32768", "2147483647", "-2147483648"]).to_string(),
        2 => rng
            .pick(&[
                "9223372036854775807",
                "-9223372036854775808",
                "9223372036854775808",
                "2147483648",
                "32768",
            ])
            .to_string(),
        3 | 4 => format!("{}", rng.range(-max, max)),
        _ => format!("{}", rng.range(-100, 1000)),
    }
}

/// A numeric literal: decimals of any scale, the ends of its 28 digits and
/// past them, exponents.
fn numeric(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => rng
            .pick(&[
                "79228162514264337593543950335",
                "-79228162514264337593543950335",
                "79228162514264337593543950336",
                "0.0000000000000000000000000001",
                "0.00000000000000000000000000001",
                "1e28",
                "1e-28",
                "1.5e300",
                "'NaN'::numeric",
                "'Infinity'::numeric",
                "-0.0",
                "99999999999999999999999999999999999999",
            ])
            .to_string(),
        1 => format!("{}.{}", rng.range(-1_000_000_000, 1_000_000_000), rng.range(0, 999_999_999)),
        _ => format!("{}.{}", rng.range(-1000, 1000), rng.range(0, 99)),
    }
}

/// A double precision literal, with NaN, the infinities, subnormals and
/// signed zero.
fn double(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => rng
            .pick(&[
                "'NaN'::float8",
                "'Infinity'::float8",
                "'-Infinity'::float8",
                "1e308",
                "-1e308",
                "1e309",
                "4.9e-324",
                "2.2250738585072014e-308",
                "'-0'::float8",
                "'1e-400'::float8",
            ])
            .to_string(),
        1 => format!("{}e{}", rng.range(-9, 9), rng.range(-320, 310)),
        _ => format!("{}.{}", rng.range(-1000, 1000), rng.range(0, 999)),
    }
}

/// A string literal: a hard string, a repeated one (long, up to a few
/// megabytes) or a random mix of characters from several scripts.
fn text(rng: &mut Rng) -> String {
    let counts: &[usize] = &[10, 1000, 100_000, 1_000_000];
    match rng.below(10) {
        0 => {
            let s = *rng.pick(TEXTS);
            format!("repeat({}, {})", quote(s), rng.pick(counts))
        }
        1 => format!("E'{}'", rng.pick(&["\\n", "\\t", "\\\\", "\\'", "\\u00e9", "\\x41", "\\101"])),
        2 => {
            let chars =
                ['a', 'Z', ' ', '\'', '%', '_', 'é', 'ß', 'Ω', '中', '🦀', '\u{300}', '|', '*', '(', ')'];
            let s: String = (0..rng.below(20)).map(|_| *rng.pick(&chars)).collect();
            quote(&s)
        }
        _ => {
            let s = *rng.pick(TEXTS);
            quote(s)
        }
    }
}

/// `s` as a standard SQL string literal.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Dates: ordinary ones, the calendar's ends, leap days, BC, infinities.
const DATES: [&str; 14] = [
    "2024-02-29",
    "2024-03-01",
    "1999-12-31",
    "1970-01-01",
    "2000-01-01",
    "0001-01-01",
    "4713-01-01 BC",
    "4714-11-24 BC",
    "5874897-12-31",
    "infinity",
    "-infinity",
    "epoch",
    "today",
    "2038-01-19",
];

/// Dates that do not parse or are out of range.
const BAD_DATES: [&str; 5] = ["2023-02-29", "5874898-01-01", "2000-13-01", "not a date", ""];

/// Timestamps: ordinary ones, the ends, fractions, zones, infinities.
const TIMESTAMPS: [&str; 14] = [
    "2024-02-29 23:59:59.999999",
    "1970-01-01 00:00:00",
    "2000-01-01 00:00:00",
    "2021-06-15 08:30:00.5",
    "294276-12-31 23:59:59.999999",
    "4714-11-24 00:00:00 BC",
    "2000-01-01 12:00:00+05:30",
    "2000-01-01 12:00:00Z",
    "2000-01-01T01:02:03.456-08",
    "2000-01-01 24:00:00",
    "infinity",
    "-infinity",
    "epoch",
    "now",
];

/// Timestamps that do not parse or are out of range.
const BAD_TIMESTAMPS: [&str; 4] =
    ["294277-01-01 00:00:00", "2000-01-01 25:00:00", "2000-01-01 12:00:00+25", "yesterday noon"];

/// Byte strings in hex and escape form.
const BYTEAS: [&str; 7] = ["\\x", "\\xdeadbeef", "\\x0102", "abc", "\\000\\377", "\\\\", "é"];

/// Byte strings that do not parse.
const BAD_BYTEAS: [&str; 3] = ["\\xzz", "\\x0", "\\9"];

/// A quoted literal of `ty` from `values` (or, now and then, from `bad`),
/// as `'v'`, `ty 'v'` or `'v'::ty`.
fn quoted(rng: &mut Rng, ty: &str, values: &[&str], bad: &[&str]) -> String {
    let from = if rng.chance(0.05) { bad } else { values };
    let v = *rng.pick(from);
    let v = quote(v);
    match rng.below(3) {
        0 => v,
        1 => format!("{ty} {v}"),
        _ => format!("{v}::{ty}"),
    }
}

/// A uuid in any of the accepted spellings, or a malformed one.
fn uuid(rng: &mut Rng) -> String {
    let bits = ((rng.next() as u128) << 64) | rng.next() as u128;
    let hex = format!("{bits:032x}");
    let dashed = format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..]);
    let v = match rng.below(8) {
        0 => "00000000-0000-0000-0000-000000000000".to_string(),
        1 => "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF".to_string(),
        2 => format!("{{{dashed}}}"),
        3 => hex,
        4 if rng.chance(0.3) => {
            rng.pick(&["not-a-uuid", "", "0000", "g0000000-0000-0000-0000-000000000000"]).to_string()
        }
        _ => dashed,
    };
    format!("'{v}'::uuid")
}
