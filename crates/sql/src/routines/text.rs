//! Text forms of composite values and of arrays, as PostgreSQL writes them.
//!
//! SQL values in Centum are scalars, so an array or composite argument
//! travels as its text: `{1,2,3}` for an `int[]`, `(707,2,"Mountain Bike")`
//! for a composite, `{"(707,2,x)","(708,1,y)"}` for an array of composites.
//! That is the form a client sends anyway (psql, pgbench and every driver in
//! text mode), and what `ARRAY[...]` and `ROW(...)` produce. A routine parses
//! it once, when the call binds its arguments, into typed elements.

use super::{Composite, Elem};
use crate::error::{Error, Result};
use crate::functions::array_text;
use centum_types::Value;

fn malformed(s: &str, detail: &str) -> Error {
    Error::other("22P02", format!("malformed record literal: \"{s}\" ({detail})"))
}

/// Renders fields (`None`: NULL) as a record literal, quoting as PostgreSQL
/// does.
pub(crate) fn render_record(fields: &[Option<String>]) -> String {
    let mut out = String::from("(");
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if let Some(s) = f {
            let quote = s.is_empty()
                || s.chars().any(|c| matches!(c, '(' | ')' | ',' | '"' | '\\') || c.is_whitespace());
            if quote {
                out.push('"');
                for c in s.chars() {
                    if c == '"' || c == '\\' {
                        out.push(c);
                    }
                    out.push(c);
                }
                out.push('"');
            } else {
                out.push_str(s);
            }
        }
    }
    out.push(')');
    out
}

/// Parses a record literal into its fields (`None`: NULL, an empty
/// unquoted field).
pub(crate) fn parse_record(s: &str) -> Result<Vec<Option<String>>> {
    let t = s.trim();
    let Some(inner) = t.strip_prefix('(').and_then(|r| r.strip_suffix(')')) else {
        return Err(malformed(s, "missing parentheses"));
    };
    let mut out = Vec::new();
    let mut chars = inner.chars().peekable();
    loop {
        let mut item = String::new();
        let mut present = false;
        while let Some(&c) = chars.peek() {
            match c {
                ',' => break,
                '"' => {
                    present = true;
                    chars.next();
                    loop {
                        match chars.next() {
                            Some('"') if chars.peek() == Some(&'"') => {
                                chars.next();
                                item.push('"');
                            }
                            Some('"') => break,
                            Some('\\') => {
                                item.push(chars.next().ok_or_else(|| malformed(s, "unfinished escape"))?)
                            }
                            Some(c) => item.push(c),
                            None => return Err(malformed(s, "unterminated quoted string")),
                        }
                    }
                }
                '\\' => {
                    chars.next();
                    present = true;
                    item.push(chars.next().ok_or_else(|| malformed(s, "unfinished escape"))?);
                }
                '(' | ')' => return Err(malformed(s, "unexpected parenthesis")),
                c => {
                    present = true;
                    item.push(c);
                    chars.next();
                }
            }
        }
        out.push(present.then_some(item));
        if chars.next().is_none() {
            break;
        }
    }
    Ok(out)
}

/// A composite value's fields from its text, each parsed as its field's
/// type.
pub(crate) fn record_values(text: &str, c: &Composite) -> Result<Vec<Value>> {
    let fields = parse_record(text)?;
    if fields.len() != c.fields.len() {
        return Err(malformed(
            text,
            if fields.len() < c.fields.len() { "too few columns" } else { "too many columns" },
        ));
    }
    fields
        .into_iter()
        .zip(&c.fields)
        .map(|(f, (_, ty))| match f {
            None => Ok(Value::Null),
            Some(s) => Ok(Value::parse(&s, ty)?),
        })
        .collect()
}

/// An array argument's elements: one value per element for a scalar
/// element type, the fields of each element for a composite one.
pub(crate) fn array_values(text: &str, elem: &Elem) -> Result<Vec<Vec<Value>>> {
    let items = array_text::parse(text)?;
    items
        .into_iter()
        .map(|item| match (item, elem) {
            (None, Elem::Scalar(_)) => Ok(vec![Value::Null]),
            (None, Elem::Composite(c)) => Ok(vec![Value::Null; c.fields.len()]),
            (Some(s), Elem::Scalar(t)) => Ok(vec![Value::parse(&s, t)?]),
            (Some(s), Elem::Composite(c)) => record_values(&s, c),
        })
        .collect()
}

/// A value's text for an array or record literal (`None`: NULL).
pub(crate) fn element_text(v: &Value) -> Option<String> {
    (!v.is_null()).then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use centum_types::DataType;

    #[test]
    fn records_round_trip() {
        let fields =
            vec![Some("1".to_string()), None, Some("a b".into()), Some("".into()), Some("q\"(".into())];
        let text = render_record(&fields);
        assert_eq!(text, r#"(1,,"a b","","q""(")"#);
        assert_eq!(parse_record(&text).unwrap(), fields);
        assert!(parse_record("1,2").is_err());
        assert!(parse_record("(\"1,2)").is_err());
    }

    #[test]
    fn arrays_of_composites_parse_into_typed_fields() {
        let c = Composite {
            name: "line".into(),
            fields: vec![("p".into(), DataType::Integer), ("n".into(), DataType::Text)],
        };
        let elem = Elem::Composite(std::sync::Arc::new(c));
        let v = array_values(r#"{"(1,x)","(2,\"y z\")",NULL}"#, &elem).unwrap();
        assert_eq!(v[0], vec![Value::Integer(1), Value::Text("x".into())]);
        assert_eq!(v[1], vec![Value::Integer(2), Value::Text("y z".into())]);
        assert_eq!(v[2], vec![Value::Null, Value::Null]);
        assert_eq!(array_values(r#"{"(1)"}"#, &elem).unwrap_err().sqlstate(), "22P02");
        assert_eq!(array_values(r#"{"(a,x)"}"#, &elem).unwrap_err().sqlstate(), "22P02");
    }
}
