//! Arrays as text.
//!
//! Centum has no array type. The catalog columns PostgreSQL declares as
//! arrays (`conkey`, `reloptions`, `datacl`, ...) and the few array
//! functions psql calls work on arrays written in PostgreSQL's text form,
//! `{a,b,"c d",NULL}`: the value a client would receive in text format
//! anyway. `int2vector` columns (`indkey`) use their own form, `1 2`.

use crate::error::{Error, Result};

/// Renders elements as an array literal, quoting where PostgreSQL does.
pub(crate) fn render(items: &[String]) -> String {
    render_opt(&items.iter().map(|s| Some(s.as_str())).collect::<Vec<_>>())
}

/// Renders elements (`None`: NULL) as an array literal.
pub(crate) fn render_opt(items: &[Option<&str>]) -> String {
    let mut out = String::from("{");
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match it {
            None => out.push_str("NULL"),
            Some(s) => {
                let quote = s.is_empty()
                    || s.eq_ignore_ascii_case("null")
                    || s.chars().any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_whitespace());
                if quote {
                    out.push('"');
                    for c in s.chars() {
                        if c == '"' || c == '\\' {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                    out.push('"');
                } else {
                    out.push_str(s);
                }
            }
        }
    }
    out.push('}');
    out
}

fn malformed(s: &str) -> Error {
    Error::other("22P02", format!("malformed array literal: \"{s}\""))
}

/// Parses a one-dimensional array literal (`{a,"b c",NULL}`); an
/// `int2vector`'s `1 2` form is accepted too.
pub(crate) fn parse(s: &str) -> Result<Vec<Option<String>>> {
    let t = s.trim();
    let Some(inner) = t.strip_prefix('{').and_then(|r| r.strip_suffix('}')) else {
        if !t.is_empty() && t.split_whitespace().all(|p| p.parse::<i64>().is_ok()) {
            return Ok(t.split_whitespace().map(|p| Some(p.to_string())).collect());
        }
        return Err(malformed(s));
    };
    let mut out = Vec::new();
    if inner.trim().is_empty() {
        return Ok(out);
    }
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut item = String::new();
        let mut quoted = false;
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
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                if matches!(c, '{' | '}' | '"') {
                    return Err(malformed(s));
                }
                item.push(c);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_malformed() {
        let items = vec!["a".to_string(), "b c".into(), "".into(), "x\"y".into(), "NULL".into()];
        let text = render(&items);
        assert_eq!(text, r#"{a,"b c","","x\"y","NULL"}"#);
        let back: Vec<String> = parse(&text).unwrap().into_iter().map(|x| x.unwrap()).collect();
        assert_eq!(back, items);
        assert_eq!(parse("{1, NULL ,3}").unwrap(), vec![Some("1".into()), None, Some("3".into())]);
        assert_eq!(parse("{}").unwrap(), Vec::<Option<String>>::new());
        assert_eq!(parse("1 2").unwrap(), vec![Some("1".into()), Some("2".into())]);
        for bad in ["", "{", "{a,}", "{\"a}", "{a}b", "x"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
