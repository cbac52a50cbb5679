//! Text input and output for the simple scalar types, and the length rules
//! of `varchar(n)` and `char(n)`.
//!
//! Each parser follows the matching PostgreSQL input function so that a
//! literal accepted (or refused) there is accepted (or refused) here:
//!
//! ```text
//!   boolean   boolin      t/true/y/yes/on/1, f/false/n/no/off/0, any unique
//!                         prefix, any case, surrounding whitespace
//!   integers  int2in ...  [+-]digits with surrounding whitespace; 22003
//!                         when out of range, 22P02 for anything else
//!   bytea     byteain     \x followed by hex pairs (whitespace between
//!                         pairs), or the escape format with \\ and \ooo
//!   uuid      uuid_in     32 hex digits, optional {braces}, a hyphen
//!                         allowed after any group of four digits
//! ```
//!
//! Lengths of `varchar(n)`/`char(n)` count characters, not bytes. An
//! assignment may drop trailing spaces to fit (`'ab   '` into `varchar(3)`
//! becomes `'ab '`), but never anything else (22001); `char(n)` then pads
//! with spaces to exactly n characters.

use crate::error::TypeError;

/// Parses `boolean` input.
pub(crate) fn parse_bool(input: &str) -> Result<bool, TypeError> {
    let text = input.trim().to_ascii_lowercase();
    let is_prefix_of = |word: &str, min: usize| text.len() >= min && word.starts_with(text.as_str());
    let value = match text.as_bytes().first() {
        Some(b't') if is_prefix_of("true", 1) => Some(true),
        Some(b'f') if is_prefix_of("false", 1) => Some(false),
        Some(b'y') if is_prefix_of("yes", 1) => Some(true),
        Some(b'n') if is_prefix_of("no", 1) => Some(false),
        // A lone "o" could be on or off, so two letters are needed.
        Some(b'o') if is_prefix_of("on", 2) => Some(true),
        Some(b'o') if is_prefix_of("off", 2) => Some(false),
        Some(b'1') if text.len() == 1 => Some(true),
        Some(b'0') if text.len() == 1 => Some(false),
        _ => None,
    };
    value.ok_or_else(|| TypeError::invalid_text("boolean", input))
}

/// Parses integer input for a type whose range is `min..=max`; `ty` is the
/// SQL name used in messages.
pub(crate) fn parse_int(input: &str, ty: &str, min: i64, max: i64) -> Result<i64, TypeError> {
    let text = input.trim();
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TypeError::invalid_text(ty, input));
    }
    let out_of_range = || TypeError::OutOfRange(format!("value \"{input}\" is out of range for type {ty}"));
    // Accumulate negatively so i64::MIN, whose magnitude exceeds i64::MAX, parses.
    let mut value: i64 = 0;
    for b in digits.bytes() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_sub(i64::from(b - b'0')))
            .ok_or_else(out_of_range)?;
    }
    let value = if negative { Some(value) } else { value.checked_neg() };
    value.filter(|v| (min..=max).contains(v)).ok_or_else(out_of_range)
}

/// Parses `bytea` input in the hex (`\x0a0b`) or escape format.
pub(crate) fn parse_bytea(input: &str) -> Result<Vec<u8>, TypeError> {
    match input.strip_prefix("\\x").or_else(|| input.strip_prefix("\\X")) {
        Some(hex) => parse_bytea_hex(hex),
        None => parse_bytea_escape(input),
    }
}

/// Decodes hex pairs, allowing whitespace between (not inside) pairs.
fn parse_bytea_hex(hex: &str) -> Result<Vec<u8>, TypeError> {
    let mut out = Vec::with_capacity(hex.len() / 2);
    let mut chars = hex.chars();
    while let Some(c) = chars.next() {
        if c.is_ascii_whitespace() {
            continue;
        }
        let hi = hex_digit(c)?;
        let lo = match chars.next() {
            Some(c) => hex_digit(c)?,
            None => {
                return Err(TypeError::InvalidParameter(
                    "invalid hexadecimal data: odd number of digits".to_string(),
                ))
            }
        };
        out.push(hi << 4 | lo);
    }
    Ok(out)
}

fn hex_digit(c: char) -> Result<u8, TypeError> {
    c.to_digit(16)
        .map(|d| d as u8) // a hex digit is below 16
        .ok_or_else(|| TypeError::InvalidParameter(format!("invalid hexadecimal digit: \"{c}\"")))
}

/// Decodes the escape format: bytes as written, `\\` for a backslash and
/// `\ooo` (three octal digits, first 0-3) for any byte.
fn parse_bytea_escape(input: &str) -> Result<Vec<u8>, TypeError> {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b != b'\\' {
            out.push(b);
            i += 1;
        } else if bytes.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else {
            match bytes.get(i + 1..i + 4) {
                Some([a @ b'0'..=b'3', b @ b'0'..=b'7', c @ b'0'..=b'7']) => {
                    out.push((a - b'0') << 6 | (b - b'0') << 3 | (c - b'0'));
                    i += 4;
                }
                _ => return Err(TypeError::invalid_text("bytea", input)),
            }
        }
    }
    Ok(out)
}

/// Formats bytea in PostgreSQL's default hex output: `\x` and lowercase hex.
pub(crate) fn format_bytea(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(2 + bytes.len() * 2);
    out.push_str("\\x");
    for b in bytes {
        // Writing to a String cannot fail.
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// Parses `uuid` input the way PostgreSQL's `uuid_in` does.
pub(crate) fn parse_uuid(input: &str) -> Result<uuid::Uuid, TypeError> {
    let invalid = || TypeError::invalid_text("uuid", input);
    let (mut rest, braces) = match input.strip_prefix('{') {
        Some(inner) => (inner.as_bytes(), true),
        None => (input.as_bytes(), false),
    };
    let mut bytes = [0u8; 16];
    for (i, byte) in bytes.iter_mut().enumerate() {
        let [hi, lo, tail @ ..] = rest else {
            return Err(invalid());
        };
        let digit = |c: &u8| char::from(*c).to_digit(16).map(|d| d as u8);
        *byte = digit(hi).ok_or_else(invalid)? << 4 | digit(lo).ok_or_else(invalid)?;
        rest = tail;
        if i % 2 == 1 && i < 15 {
            if let [b'-', tail @ ..] = rest {
                rest = tail;
            }
        }
    }
    if braces {
        rest = rest.strip_prefix(b"}").ok_or_else(invalid)?;
    }
    if !rest.is_empty() {
        return Err(invalid());
    }
    Ok(uuid::Uuid::from_bytes(bytes))
}

/// Applies `varchar(max)` to a string: trailing spaces past the limit are
/// dropped, anything else past it is an error (22001).
pub(crate) fn fit_varchar(s: String, max: u32) -> Result<String, TypeError> {
    truncate_spaces(s, max, false)
}

/// Applies `char(len)`: like [`fit_varchar`], then pads with spaces to
/// exactly `len` characters.
pub(crate) fn fit_char(s: String, len: u32) -> Result<String, TypeError> {
    let s = truncate_spaces(s, len, true)?;
    let count = if s.is_ascii() { s.len() } else { s.chars().count() };
    let pad = (len as usize).saturating_sub(count);
    if pad == 0 {
        return Ok(s);
    }
    // A slice of spaces at a time, into room reserved once (a COPY into a
    // char(n) column pads every row, pgbench's filler columns included).
    const SPACES: &str = "                                                                ";
    let mut s = s;
    s.reserve(pad);
    let mut left = pad;
    while left > 0 {
        let n = left.min(SPACES.len());
        s.push_str(&SPACES[..n]);
        left -= n;
    }
    Ok(s)
}

fn truncate_spaces(mut s: String, max: u32, blank_padded: bool) -> Result<String, TypeError> {
    if s.len() <= max as usize {
        return Ok(s); // fewer bytes than the limit, so fewer characters
    }
    let Some((cut, _)) = s.char_indices().nth(max as usize) else {
        return Ok(s); // at most `max` characters
    };
    if !s[cut..].bytes().all(|b| b == b' ') {
        return Err(TypeError::StringTooLong { max, blank_padded });
    }
    s.truncate(cut);
    Ok(s)
}

/// Number of characters (not bytes) in a string.
pub(crate) fn char_len(s: &str) -> usize {
    s.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans() {
        for t in ["t", "TRUE", " tr ", "y", "yes", "on", "ON", "1"] {
            assert_eq!(parse_bool(t), Ok(true), "{t}");
        }
        for f in ["f", "False", "n", "no", "of", "off", "0", "\tfal\n"] {
            assert_eq!(parse_bool(f), Ok(false), "{f}");
        }
        for bad in ["", "o", "truee", "yess", "10", "2", "onn", "maybe"] {
            let err = parse_bool(bad).unwrap_err();
            assert_eq!(err.to_string(), format!("invalid input syntax for type boolean: \"{bad}\""));
            assert_eq!(err.sqlstate(), "22P02");
        }
    }

    #[test]
    fn integers() {
        let int4 = |s: &str| parse_int(s, "integer", i32::MIN.into(), i32::MAX.into());
        assert_eq!(int4(" 42 "), Ok(42));
        assert_eq!(int4("-2147483648"), Ok(-2_147_483_648));
        assert_eq!(int4("+007"), Ok(7));
        let int8 = |s: &str| parse_int(s, "bigint", i64::MIN, i64::MAX);
        assert_eq!(int8("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(int8("9223372036854775807"), Ok(i64::MAX));
        for bad in ["", "-", "abc", "1.5", "1e3", "1 2", "0x10", "1_000"] {
            let err = int4(bad).unwrap_err();
            assert_eq!(err.to_string(), format!("invalid input syntax for type integer: \"{bad}\""));
            assert_eq!(err.sqlstate(), "22P02");
        }
        let err = int4("2147483648").unwrap_err();
        assert_eq!(err.to_string(), "value \"2147483648\" is out of range for type integer");
        assert_eq!(err.sqlstate(), "22003");
        assert!(int8("9223372036854775808").is_err());
        assert!(int8("-9223372036854775809").is_err());
        assert!(int8("99999999999999999999999999999").is_err());
    }

    #[test]
    fn bytea_formats() {
        assert_eq!(parse_bytea("\\x0a0B"), Ok(vec![0x0a, 0x0b]));
        assert_eq!(parse_bytea("\\x 0a 0b "), Ok(vec![0x0a, 0x0b]));
        assert_eq!(parse_bytea("\\x"), Ok(vec![]));
        assert_eq!(parse_bytea("abc"), Ok(b"abc".to_vec()));
        assert_eq!(parse_bytea("a\\\\b\\001\\377"), Ok(vec![b'a', b'\\', b'b', 1, 255]));
        assert_eq!(format_bytea(&[0xde, 0xad, 0x01]), "\\xdead01");
        assert_eq!(format_bytea(&[]), "\\x");
        let err = parse_bytea("\\x0g").unwrap_err();
        assert_eq!(err.to_string(), "invalid hexadecimal digit: \"g\"");
        assert_eq!(err.sqlstate(), "22023");
        let err = parse_bytea("\\x0a0").unwrap_err();
        assert_eq!(err.to_string(), "invalid hexadecimal data: odd number of digits");
        assert_eq!(parse_bytea("\\x0 a").unwrap_err().sqlstate(), "22023");
        for bad in ["\\", "a\\4", "\\400", "\\01", "\\q"] {
            assert_eq!(parse_bytea(bad).unwrap_err().sqlstate(), "22P02", "{bad}");
        }
    }

    #[test]
    fn uuids() {
        let want = uuid::Uuid::from_u128(0xa0eebc999c0b4ef8bb6d6bb9bd380a11);
        for text in [
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
            "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
        ] {
            assert_eq!(parse_uuid(text), Ok(want), "{text}");
        }
        for bad in [
            "",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
            "-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0e-ebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "é0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
        ] {
            let err = parse_uuid(bad).unwrap_err();
            assert_eq!(err.to_string(), format!("invalid input syntax for type uuid: \"{bad}\""));
        }
    }

    #[test]
    fn string_lengths() {
        assert_eq!(fit_varchar("abc".into(), 3).as_deref(), Ok("abc"));
        assert_eq!(fit_varchar("ab   ".into(), 3).as_deref(), Ok("ab "));
        assert_eq!(fit_varchar("éé".into(), 2).as_deref(), Ok("éé"));
        let err = fit_varchar("abcd".into(), 3).unwrap_err();
        assert_eq!(err.to_string(), "value too long for type character varying(3)");
        assert_eq!(err.sqlstate(), "22001");
        assert_eq!(fit_char("ab".into(), 4).as_deref(), Ok("ab  "));
        assert_eq!(fit_char("abc  ".into(), 3).as_deref(), Ok("abc"));
        assert_eq!(fit_char("é".into(), 2).as_deref(), Ok("é "));
        // Longer than one slice of spaces, and multi-byte characters that
        // make more bytes than the limit within it.
        assert_eq!(fit_char(String::new(), 150).map(|s| (s.len(), s.trim().len())), Ok((150, 0)));
        assert_eq!(fit_char("éé ".into(), 2).as_deref(), Ok("éé"));
        assert_eq!(fit_varchar("ééé".into(), 3).as_deref(), Ok("ééé"));
        let err = fit_char("abcd".into(), 3).unwrap_err();
        assert_eq!(err.to_string(), "value too long for type character(3)");
        assert_eq!(char_len("héllo"), 5);
    }
}
