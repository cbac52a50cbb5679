//! `numeric` values: a [`Decimal`] with PostgreSQL's input, rounding and
//! overflow rules.
//!
//! rust_decimal stores a 96-bit integer mantissa and a scale 0..=28, so a
//! value has at most 28-29 significant digits. PostgreSQL's unconstrained
//! `numeric` has no such limit; Centum rounds input with more fractional
//! digits than fit (as rust_decimal does) and rejects integer parts that do
//! not fit (22003). Declared columns are limited to `numeric(28,s)` by
//! [`DataType::numeric`](crate::DataType::numeric), and within that limit the
//! behaviour matches PostgreSQL exactly:
//!
//! ```text
//!   numeric(p,s) column:  round half away from zero to s digits,
//!                         pad to exactly s digits (1.5 -> 1.50),
//!                         require |value| < 10^(p-s)  else 22003
//!                         "numeric field overflow"
//! ```
//!
//! A value keeps its scale (`1.50` prints as `1.50`) but compares and
//! hashes by value (`1.5 = 1.50`). `NaN` and `±Infinity`, which PostgreSQL
//! 14+ accepts for `numeric`, cannot be represented and are refused (0A000).

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};

use crate::error::TypeError;

/// Largest absolute decimal exponent accepted in input (`1e1000`), as in
/// PostgreSQL; bounds the work of shifting the decimal point.
const MAX_EXPONENT: i64 = 1000;

/// Parses `numeric` input text: `[+-]digits[.digits][e[+-]digits]`,
/// surrounded by optional whitespace.
pub(crate) fn parse_numeric(input: &str) -> Result<Decimal, TypeError> {
    let text = input.trim();
    let invalid = || TypeError::invalid_text("numeric", input);
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if matches!(unsigned.to_ascii_lowercase().as_str(), "nan" | "infinity" | "inf") {
        return Err(TypeError::Unsupported(format!("numeric value \"{}\" is not supported", text)));
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => {
            let exp: i64 = unsigned[i + 1..].parse().map_err(|_| invalid())?;
            (&unsigned[..i], exp)
        }
        None => (unsigned, 0),
    };
    if !(-MAX_EXPONENT..=MAX_EXPONENT).contains(&exponent) {
        return Err(invalid());
    }
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let is_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !is_digits(int) || !is_digits(frac) || (int.is_empty() && frac.is_empty()) {
        return Err(invalid());
    }
    // Apply the exponent by moving the decimal point in the digit string:
    // exact, and lets rust_decimal do the rounding of excess fraction digits.
    let digits = format!("{int}{frac}");
    let point = int.len() as i64 + exponent;
    let shifted = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        let (i, f) = digits.split_at(point as usize);
        format!("{i}.{f}")
    };
    // Leading zeros would count against rust_decimal's digit limit.
    let trimmed = shifted.trim_start_matches('0');
    let shifted = if trimmed.is_empty() || trimmed.starts_with('.') {
        format!("0{trimmed}")
    } else {
        trimmed.to_string()
    };
    let value: Decimal = shifted.parse().map_err(|_| overflow())?;
    Ok(positive_zero(if negative { -value } else { value }))
}

/// The error PostgreSQL gives for a value too large for numeric itself.
fn overflow() -> TypeError {
    TypeError::OutOfRange("value overflows numeric format".to_string())
}

/// The error PostgreSQL gives when a value does not fit `numeric(p,s)`.
fn field_overflow() -> TypeError {
    TypeError::OutOfRange("numeric field overflow".to_string())
}

/// Turns `-0.00` (which rust_decimal can produce and decode) into `0.00`;
/// PostgreSQL has no negative zero.
pub(crate) fn positive_zero(mut d: Decimal) -> Decimal {
    if d.is_zero() {
        d.set_sign_positive(true);
    }
    d
}

/// The effective `(precision, scale)` of a numeric type's modifiers: a
/// precision without a scale means scale 0 (as `numeric(p)` does).
pub(crate) fn typmod(precision: Option<u8>, scale: Option<u8>) -> (Option<u32>, Option<u32>) {
    let p = precision.map(u32::from);
    let s = scale.map(u32::from).or(p.map(|_| 0));
    (p, s)
}

/// Rounds and checks `d` for a `numeric(precision, scale)` column, as an
/// assignment does: round half away from zero to `scale` digits, pad to
/// exactly `scale` digits, and fail with 22003 if the result has more than
/// `precision - scale` integer digits.
pub(crate) fn apply_typmod(
    d: Decimal,
    precision: Option<u8>,
    scale: Option<u8>,
) -> Result<Decimal, TypeError> {
    let (p, s) = typmod(precision, scale);
    let Some(s) = s else {
        return Ok(positive_zero(d));
    };
    let s = s.min(Decimal::MAX_SCALE);
    let mut rounded = d.round_dp_with_strategy(s, RoundingStrategy::MidpointAwayFromZero);
    rounded.rescale(s);
    // rescale keeps a smaller scale when the mantissa would overflow 96
    // bits, which only happens for values far beyond any precision <= 28.
    if rounded.scale() != s || !within_precision(&rounded, p) {
        return Err(field_overflow());
    }
    Ok(positive_zero(rounded))
}

/// True if `d` (already at the column's scale) has at most `precision`
/// significant digits in its mantissa, i.e. `|d| < 10^(p-s)`.
fn within_precision(d: &Decimal, precision: Option<u32>) -> bool {
    match precision.and_then(|p| 10u128.checked_pow(p)) {
        Some(limit) => d.mantissa().unsigned_abs() < limit,
        None => true,
    }
}

/// True if `d` can be stored in a `numeric(precision, scale)` column as it
/// is: exactly the column's scale and within its precision.
pub(crate) fn fits_typmod(d: &Decimal, precision: Option<u8>, scale: Option<u8>) -> bool {
    let (p, s) = typmod(precision, scale);
    s.is_none_or(|s| d.scale() == s) && within_precision(d, p)
}

/// Converts a double to numeric as PostgreSQL does: through its 15
/// significant digit text form, so `0.1::float8` becomes exactly `0.1`.
/// Digits beyond numeric's 28 decimal places are rounded away.
pub(crate) fn from_f64(x: f64) -> Result<Decimal, TypeError> {
    if !x.is_finite() {
        return Err(TypeError::Unsupported(format!(
            "cannot convert {} to numeric",
            crate::float::format_f64(x)
        )));
    }
    // 15 significant digits, like C's "%.15g" in PostgreSQL's float8_numeric.
    let text = format!("{x:.14e}");
    parse_numeric(&text).map(|d| positive_zero(d.normalize()))
}

/// Converts numeric to double, correctly rounded (via the decimal text, as
/// PostgreSQL does).
pub(crate) fn to_f64(d: &Decimal) -> f64 {
    // Decimal's Display is plain decimal digits, which always parse.
    d.to_string().parse().unwrap_or(0.0)
}

/// Rounds a numeric half away from zero to an integer and narrows it to
/// `i64`, or `None` when it does not fit.
pub(crate) fn to_i64(d: &Decimal) -> Option<i64> {
    d.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero).to_i64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(text: &str) -> Decimal {
        parse_numeric(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn parses_plain_and_scientific() {
        for (text, shown) in [
            ("1", "1"),
            (" -1.50 ", "-1.50"),
            ("+.5", "0.5"),
            ("5.", "5"),
            ("-0.00", "0.00"),
            ("0001.2", "1.2"),
            ("1e3", "1000"),
            ("1.5E-3", "0.0015"),
            ("12.5e1", "125"),
            ("1e-30", "0.0000000000000000000000000000"),
            ("0.12345678901234567890123456789012", "0.1234567890123456789012345679"),
            ("79228162514264337593543950335", "79228162514264337593543950335"),
            ("0e1000", "0"),
        ] {
            assert_eq!(dec(text).to_string(), shown, "{text}");
        }
    }

    #[test]
    fn parse_errors() {
        for text in ["", "abc", "1.2.3", "1e", "e1", ".", "1_000", "1e1001", "- 1", "1 2"] {
            let err = parse_numeric(text).unwrap_err();
            assert_eq!(err.sqlstate(), "22P02", "{text}");
            assert_eq!(err.to_string(), format!("invalid input syntax for type numeric: \"{text}\""));
        }
        for text in ["79228162514264337593543950336", "1e29"] {
            let err = parse_numeric(text).unwrap_err();
            assert_eq!(err.sqlstate(), "22003", "{text}");
            assert_eq!(err.to_string(), "value overflows numeric format");
        }
        for text in ["NaN", "-Infinity", "inf"] {
            assert_eq!(parse_numeric(text).unwrap_err().sqlstate(), "0A000", "{text}");
        }
    }

    #[test]
    fn typmod_rounds_pads_and_checks() {
        let t = |text: &str, p: u8, s: u8| apply_typmod(dec(text), Some(p), Some(s)).map(|d| d.to_string());
        assert_eq!(t("1.5", 10, 2).as_deref(), Ok("1.50"));
        assert_eq!(t("1.005", 10, 2).as_deref(), Ok("1.01"));
        assert_eq!(t("-1.005", 10, 2).as_deref(), Ok("-1.01"));
        assert_eq!(t("2.5", 3, 0).as_deref(), Ok("3"));
        assert_eq!(t("-0.004", 3, 2).as_deref(), Ok("0.00"));
        assert_eq!(t("999.994", 5, 2).as_deref(), Ok("999.99"));
        assert_eq!(t("0.5", 1, 1).as_deref(), Ok("0.5"));
        let err = t("999.995", 5, 2).unwrap_err();
        assert_eq!(err.to_string(), "numeric field overflow");
        assert_eq!(err.sqlstate(), "22003");
        assert!(t("1", 1, 1).is_err());
        assert!(t("79228162514264337593543950335", 28, 2).is_err());
        assert_eq!(apply_typmod(dec("12.345"), Some(4), None).map(|d| d.to_string()).as_deref(), Ok("12"));
        assert_eq!(apply_typmod(dec("12.345"), None, None), Ok(dec("12.345")));
    }

    #[test]
    fn fits_requires_exact_scale() {
        assert!(fits_typmod(&dec("1.50"), Some(10), Some(2)));
        assert!(!fits_typmod(&dec("1.5"), Some(10), Some(2)));
        assert!(!fits_typmod(&dec("1000.00"), Some(5), Some(2)));
        assert!(fits_typmod(&dec("1.5"), None, None));
        assert!(fits_typmod(&dec("12"), Some(2), None));
    }

    #[test]
    fn float_conversions() {
        let f = |x: f64| from_f64(x).map(|d| d.to_string());
        assert_eq!(f(0.1).as_deref(), Ok("0.1"));
        assert_eq!(f(1.5).as_deref(), Ok("1.5"));
        assert_eq!(f(100.0).as_deref(), Ok("100"));
        assert_eq!(f(-0.0).as_deref(), Ok("0"));
        assert_eq!(f(1e20).as_deref(), Ok("100000000000000000000"));
        assert_eq!(f(1.0 / 3.0).as_deref(), Ok("0.333333333333333"));
        assert_eq!(f(1e-40).as_deref(), Ok("0"));
        assert_eq!(f(1e30).unwrap_err().sqlstate(), "22003");
        assert_eq!(f(f64::NAN).unwrap_err().sqlstate(), "0A000");
        assert_eq!(to_f64(&dec("0.1")), 0.1);
        assert_eq!(to_f64(&dec("-12345.678")), -12345.678);
    }

    #[test]
    fn integer_conversion() {
        assert_eq!(to_i64(&dec("2.5")), Some(3));
        assert_eq!(to_i64(&dec("-2.5")), Some(-3));
        assert_eq!(to_i64(&dec("2.49")), Some(2));
        assert_eq!(to_i64(&dec("9223372036854775807")), Some(i64::MAX));
        assert_eq!(to_i64(&dec("9223372036854775808")), None);
        assert_eq!(to_i64(&dec("-9223372036854775808.4")), Some(i64::MIN));
    }
}
