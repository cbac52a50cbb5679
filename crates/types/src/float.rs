//! `double precision` text input and output, as PostgreSQL 12+ does it.
//!
//! Output is the shortest decimal string that reads back as the same `f64`
//! (PostgreSQL's `extra_float_digits = 1` default, via Ryu), laid out like C's
//! `%g`: fixed notation when the decimal exponent is in `-4..15`, otherwise
//! scientific with a signed exponent of at least two digits:
//!
//! ```text
//!   1.5 -> 1.5      100 -> 100       1e15 -> 1e+15     0.0001 -> 0.0001
//!   0.00001 -> 1e-05    -0.0 -> -0    NaN -> NaN    inf -> Infinity
//! ```
//!
//! Rust's `{:e}` already produces the shortest round-trip digits, so only the
//! layout is done here.
//!
//! Input accepts what PostgreSQL's `float8in` does for decimal text:
//! surrounding whitespace, `NaN`, `Infinity`/`inf` with optional sign (any
//! case), and decimal numbers with optional exponent. Values that overflow
//! to infinity or underflow to zero are errors (22003), not silently changed.

use std::cmp::Ordering;

use crate::error::TypeError;

/// Formats a double the way PostgreSQL prints `float8`.
pub(crate) fn format_f64(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    // `{:e}` gives e.g. "-1.2345e-7": shortest digits, one before the point.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..15).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        if point <= 0 {
            let zeros = "0".repeat(point.unsigned_abs() as usize);
            format!("{sign}0.{zeros}{digits}")
        } else {
            let point = point as usize;
            if digits.len() <= point {
                format!("{sign}{digits}{}", "0".repeat(point - digits.len()))
            } else {
                format!("{sign}{}.{}", &digits[..point], &digits[point..])
            }
        }
    } else {
        let exp_sign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{exp_sign}{:02}", exp.unsigned_abs())
    }
}

/// Parses `double precision` input text.
pub(crate) fn parse_f64(input: &str) -> Result<f64, TypeError> {
    let text = input.trim();
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let negative = text.starts_with('-');
    let lower = unsigned.to_ascii_lowercase();
    match lower.as_str() {
        "nan" if unsigned.len() == text.len() => return Ok(f64::NAN),
        "infinity" | "inf" => return Ok(if negative { f64::NEG_INFINITY } else { f64::INFINITY }),
        _ => {}
    }
    if !is_decimal_syntax(unsigned) {
        return Err(TypeError::invalid_text("double precision", input));
    }
    let value: f64 = text.parse().map_err(|_| TypeError::invalid_text("double precision", input))?;
    let mantissa = unsigned.split(['e', 'E']).next().unwrap_or("");
    let nonzero_digits = mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b));
    if value.is_infinite() || (value == 0.0 && nonzero_digits) {
        return Err(TypeError::OutOfRange(format!("\"{input}\" is out of range for type double precision")));
    }
    Ok(value)
}

/// True for `digits[.digits][e[+-]digits]` with at least one mantissa digit
/// (the sign is already stripped). Checked by hand so that Rust's parser
/// cannot accept spellings PostgreSQL rejects.
fn is_decimal_syntax(text: &str) -> bool {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = all_digits(int) && all_digits(frac) && !(int.is_empty() && frac.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    mantissa_ok && exponent_ok
}

/// Maps a double to a key whose `total_cmp` order is PostgreSQL's float
/// order: `-0.0` equals `0.0`, all NaNs are equal and greater than infinity.
pub(crate) fn canonical(x: f64) -> f64 {
    if x.is_nan() {
        f64::NAN
    } else if x == 0.0 {
        0.0
    } else {
        x
    }
}

/// PostgreSQL's ordering of doubles (`float8_cmp_internal`).
pub(crate) fn cmp_f64(a: f64, b: f64) -> Ordering {
    canonical(a).total_cmp(&canonical(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_postgres() {
        for (x, text) in [
            (1.5, "1.5"),
            (100.0, "100"),
            (0.0, "0"),
            (-0.0, "-0"),
            (1e20, "1e+20"),
            (1e15, "1e+15"),
            (1e14, "100000000000000"),
            (123456789012345.6, "123456789012345.6"),
            (1234567890123456.7, "1.2345678901234568e+15"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.000123, "0.000123"),
            (-1.5e-7, "-1.5e-07"),
            (1e300, "1e+300"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(format_f64(x), text);
        }
    }

    #[test]
    fn parses_like_postgres() {
        for (text, x) in [
            ("1.5", 1.5),
            (" -2 ", -2.0),
            ("+.5", 0.5),
            ("5.", 5.0),
            ("1e+20", 1e20),
            ("1E-5", 1e-5),
            ("Infinity", f64::INFINITY),
            ("-inf", f64::NEG_INFINITY),
            ("+INFINITY", f64::INFINITY),
            ("0e999", 0.0),
        ] {
            assert_eq!(parse_f64(text), Ok(x), "{text}");
        }
        assert!(parse_f64("nan").is_ok_and(f64::is_nan));
        assert!(parse_f64("NaN").is_ok_and(f64::is_nan));
        for text in ["", "abc", "1.2.3", "1e", "e5", ".", "1_0", "0x10", "- 1", "+nan", "1,5"] {
            let err = parse_f64(text).unwrap_err();
            assert_eq!(err.sqlstate(), "22P02", "{text}");
            assert_eq!(
                err.to_string(),
                format!("invalid input syntax for type double precision: \"{text}\"")
            );
        }
        for text in ["1e400", "-1e400", "1e-400"] {
            let err = parse_f64(text).unwrap_err();
            assert_eq!(err.sqlstate(), "22003", "{text}");
            assert_eq!(err.to_string(), format!("\"{text}\" is out of range for type double precision"));
        }
    }

    #[test]
    fn postgres_float_order() {
        assert_eq!(cmp_f64(-0.0, 0.0), Ordering::Equal);
        assert_eq!(cmp_f64(f64::NAN, -f64::NAN), Ordering::Equal);
        assert_eq!(cmp_f64(f64::NAN, f64::INFINITY), Ordering::Greater);
        assert_eq!(cmp_f64(f64::NEG_INFINITY, -1e308), Ordering::Less);
        assert_eq!(cmp_f64(1.0, 2.0), Ordering::Less);
    }
}
