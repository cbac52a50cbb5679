//! One-dimensional arrays: `integer[]`, `text[]`, ... of any scalar type.
//!
//! An array value is [`Value::Array`]: its elements in order, each of the
//! element type or Null, with lower bound 1 as PostgreSQL numbers them.
//! Arrays of arrays (multidimensional arrays) are not supported; their
//! input is refused with 0A000.
//!
//! Text form, as PostgreSQL reads and writes it:
//!
//! ```text
//!   {1,2,NULL}       {a,"b c","",NULL,"NULL","x\"y"}       {}
//! ```
//!
//! An element is quoted when it is empty, spells NULL, or holds a brace,
//! comma, quote, backslash or white space; inside quotes `"` and `\` are
//! escaped with a backslash. Unquoted elements are trimmed.
//!
//! Stored form (the variable-length bytes a row holds):
//!
//! ```text
//!   u32 count, then per element: u32 length (0xFFFF_FFFF: NULL), bytes
//! ```
//!
//! where an element's bytes are its fixed-width encoding or its own
//! variable-length bytes. All integers are little-endian.

use std::borrow::Cow;

use crate::datatype::DataType;
use crate::error::TypeError;
use crate::value::Value;

/// Length mark of a NULL element in the stored form.
const NULL_ELEMENT: u32 = u32::MAX;

fn malformed(s: &str) -> TypeError {
    TypeError::MalformedArray(s.to_string())
}

/// Parses a one-dimensional array literal into its elements' texts
/// (`None`: NULL). A nested `{` is 0A000, anything else malformed 22P02.
pub fn parse_literal(s: &str) -> Result<Vec<Option<String>>, TypeError> {
    let t = s.trim();
    let Some(inner) = t.strip_prefix('{').and_then(|r| r.strip_suffix('}')) else {
        return Err(malformed(s));
    };
    let mut out = Vec::new();
    if inner.trim().is_empty() {
        return Ok(out);
    }
    let mut chars = inner.chars().peekable();
    let skip_space = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
    };
    loop {
        skip_space(&mut chars);
        let mut item = String::new();
        let mut quoted = false;
        if chars.peek() == Some(&'{') {
            return Err(TypeError::Unsupported("multidimensional arrays are not supported".into()));
        }
        if chars.peek() == Some(&'"') {
            quoted = true;
            chars.next();
            loop {
                match chars.next() {
                    Some('\\') => item.push(chars.next().ok_or_else(|| malformed(s))?),
                    Some('"') => break,
                    Some(c) => item.push(c),
                    None => return Err(malformed(s)),
                }
            }
            skip_space(&mut chars);
        } else {
            while let Some(&c) = chars.peek() {
                match c {
                    ',' => break,
                    '{' | '}' | '"' => return Err(malformed(s)),
                    '\\' => {
                        chars.next();
                        item.push(chars.next().ok_or_else(|| malformed(s))?);
                        continue;
                    }
                    _ => item.push(c),
                }
                chars.next();
            }
            item = item.trim().to_string();
            if item.is_empty() {
                return Err(malformed(s));
            }
        }
        out.push(if !quoted && item.eq_ignore_ascii_case("null") { None } else { Some(item) });
        match chars.next() {
            Some(',') => continue,
            None => break,
            Some(_) => return Err(malformed(s)),
        }
    }
    Ok(out)
}

/// Writes elements (`None`: NULL) as an array literal, quoting where
/// PostgreSQL does.
pub fn render_literal<'a>(items: impl IntoIterator<Item = Option<&'a str>>) -> String {
    let mut out = String::from("{");
    for (i, it) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match it {
            None => out.push_str("NULL"),
            Some(s) => push_element(&mut out, s),
        }
    }
    out.push('}');
    out
}

fn push_element(out: &mut String, s: &str) {
    let quote = s.is_empty()
        || s.eq_ignore_ascii_case("null")
        || s.chars().any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_whitespace());
    if !quote {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// The text output of an array value's elements.
pub(crate) fn display(items: &[Value]) -> String {
    let texts: Vec<Option<String>> = items.iter().map(|v| (!v.is_null()).then(|| v.to_string())).collect();
    render_literal(texts.iter().map(Option::as_deref))
}

/// Parses array text input for elements of type `elem`.
pub(crate) fn parse(text: &str, elem: &DataType) -> Result<Value, TypeError> {
    let items = parse_literal(text)?;
    let values = items
        .into_iter()
        .map(|it| match it {
            None => Ok(Value::Null),
            Some(s) => Value::parse(&s, elem),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::Array(values))
}

/// The stored form of an array's elements.
pub(crate) fn encode(items: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + items.len() * 8);
    out.extend_from_slice(&(items.len() as u32).to_le_bytes());
    let mut scratch = [0u8; 16];
    for v in items {
        let bytes: Cow<'_, [u8]> = match v.data_type() {
            None => {
                out.extend_from_slice(&NULL_ELEMENT.to_le_bytes());
                continue;
            }
            Some(t) => match t.fixed_width() {
                // An element's natural type has the same fixed encoding as
                // the declared element type it fits.
                Some(w) => match v.encode_fixed(&t, &mut scratch[..w]) {
                    Ok(()) => Cow::Borrowed(&scratch[..w]),
                    Err(_) => Cow::Borrowed(&[]),
                },
                None => v.var_bytes().unwrap_or_default(),
            },
        };
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(&bytes);
    }
    out
}

/// Reads the stored form back. Never panics: damaged bytes give a shorter
/// array or wrong elements, not a crash.
pub(crate) fn decode(elem: &DataType, bytes: &[u8]) -> Value {
    Value::Array(decode_items(bytes, |_| Some(elem)))
}

/// Reads a stored sequence of values (an array's elements, a composite's
/// fields), item `i` as type `type_of(i)`; stops early at damaged bytes or
/// where `type_of` has no type.
pub(crate) fn decode_items<'t>(bytes: &[u8], type_of: impl Fn(usize) -> Option<&'t DataType>) -> Vec<Value> {
    let mut at = 0usize;
    let next_u32 = |at: &mut usize| -> Option<u32> {
        let b = bytes.get(*at..*at + 4)?;
        *at += 4;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let count = next_u32(&mut at).unwrap_or(0) as usize;
    let mut out = Vec::with_capacity(count.min(bytes.len() / 4));
    for i in 0..count {
        let Some(len) = next_u32(&mut at) else { break };
        if len == NULL_ELEMENT {
            out.push(Value::Null);
            continue;
        }
        let Some(b) = at.checked_add(len as usize).and_then(|end| bytes.get(at..end)) else { break };
        let Some(ty) = type_of(i) else { break };
        at += len as usize;
        out.push(Value::decode_var(ty, b));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_round_trip_and_malformed_ones_are_refused() {
        let items = ["a", "b c", "", "x\"y", "NULL", "back\\slash"];
        let text = render_literal(items.iter().map(|s| Some(*s)));
        assert_eq!(text, r#"{a,"b c","","x\"y","NULL","back\\slash"}"#);
        let back: Vec<String> = parse_literal(&text).unwrap().into_iter().map(Option::unwrap).collect();
        assert_eq!(back, items);
        assert_eq!(parse_literal("{1, NULL ,3}").unwrap(), vec![Some("1".into()), None, Some("3".into())]);
        assert_eq!(parse_literal(" {} ").unwrap(), Vec::<Option<String>>::new());
        assert_eq!(parse_literal(r"{a\,b}").unwrap(), vec![Some("a,b".into())]);
        for bad in ["", "{", "{a,}", "{\"a}", "{a}b", "x", "{,}"] {
            assert_eq!(parse_literal(bad).unwrap_err().sqlstate(), "22P02", "{bad}");
        }
        assert_eq!(parse_literal("{{1,2},{3,4}}").unwrap_err().sqlstate(), "0A000");
    }

    #[test]
    fn typed_arrays_parse_print_and_store() {
        let ty = DataType::Integer;
        let v = parse("{1, 2,NULL}", &ty).unwrap();
        assert_eq!(v.to_string(), "{1,2,NULL}");
        assert_eq!(
            decode(
                &ty,
                &encode(match &v {
                    Value::Array(items) => items,
                    _ => unreachable!(),
                })
            ),
            v
        );
        assert_eq!(parse("{1,x}", &ty).unwrap_err().sqlstate(), "22P02");
        let t = parse(r#"{"a b",c}"#, &DataType::Text).unwrap();
        assert_eq!(t.to_string(), r#"{"a b",c}"#);
        // Damaged stored bytes never panic.
        for cut in 0..12 {
            let bytes = encode(&[Value::Integer(7), Value::Null]);
            let _ = decode(&ty, &bytes[..cut.min(bytes.len())]);
        }
        let _ = decode(&ty, &[0xFF; 9]);
    }
}
