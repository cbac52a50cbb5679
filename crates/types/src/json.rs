//! `json` and `jsonb`.
//!
//! `json` is text that has been checked to be JSON: [`Value::Json`] keeps
//! it exactly as written (white space, member order, duplicate keys), as
//! PostgreSQL does. `jsonb` is parsed once into a binary form
//! ([`Jsonb`], see the `binary` module) whose objects are sorted with one
//! member per key; operators read it in place.
//!
//! ```text
//!   text ──parse──▶ Node (tree, written order) ──Jsonb::from_node──▶ Jsonb bytes
//!                                                                    │
//!              JRef: kind, get, index, elements, members, contains, cmp, write
//! ```
//!
//! [`Node`] is the tree that functions build (`jsonb_build_object`,
//! `jsonb_set`) before encoding it. Numbers are kept as PostgreSQL's
//! numeric text, so any precision survives and `1.50` prints as written.
//!
//! Known difference from PostgreSQL: nesting deeper than
//! [`parse::MAX_DEPTH`] levels is refused (54001); PostgreSQL's limit
//! depends on its stack size.
//!
//! [`Value::Json`]: crate::Value::Json

mod binary;
pub mod parse;
#[cfg(test)]
mod tests;

use std::cmp::Ordering;

pub use binary::{JRef, Jsonb, Kind};
pub use parse::parse;

/// A JSON value as a tree.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as numeric text (`-12.50`, never an exponent).
    Number(String),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Node>),
    /// An object's members in order; a tree may hold a key twice.
    Object(Vec<(String, Node)>),
}

impl Node {
    /// The name `jsonb_typeof` gives the value.
    pub fn type_name(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "boolean",
            Node::Number(_) => "number",
            Node::String(_) => "string",
            Node::Array(_) => "array",
            Node::Object(_) => "object",
        }
    }

    /// Appends JSON text with `item` between elements and members and
    /// `key` between a key and its value: `to_json` writes `(",", ":")`,
    /// jsonb's output `(", ", ": ")`.
    pub fn write_json(&self, item: &str, key: &str, out: &mut String) {
        match self {
            Node::Null => out.push_str("null"),
            Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Node::Number(n) => out.push_str(n),
            Node::String(s) => write_string(s, out),
            Node::Array(items) => {
                out.push('[');
                for (i, e) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(item);
                    }
                    e.write_json(item, key, out);
                }
                out.push(']');
            }
            Node::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(item);
                    }
                    write_string(k, out);
                    out.push_str(key);
                    v.write_json(item, key, out);
                }
                out.push('}');
            }
        }
    }

    /// The text PostgreSQL's `jsonb_pretty` writes: one member or element
    /// per line, indented four spaces a level.
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        self.write_pretty(0, &mut out);
        out
    }

    fn write_pretty(&self, level: usize, out: &mut String) {
        let pad = |n: usize, out: &mut String| out.push_str(&"    ".repeat(n));
        match self {
            Node::Array(items) => {
                out.push_str("[\n");
                for (i, e) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n");
                    }
                    pad(level + 1, out);
                    e.write_pretty(level + 1, out);
                }
                if !items.is_empty() {
                    out.push('\n');
                }
                pad(level, out);
                out.push(']');
            }
            Node::Object(members) => {
                out.push_str("{\n");
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n");
                    }
                    pad(level + 1, out);
                    write_string(k, out);
                    out.push_str(": ");
                    v.write_pretty(level + 1, out);
                }
                if !members.is_empty() {
                    out.push('\n');
                }
                pad(level, out);
                out.push('}');
            }
            other => other.write_json(", ", ": ", out),
        }
    }
}

/// Appends `s` as a JSON string literal, escaping as PostgreSQL does.
pub fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Compares two numeric texts (as [`parse::canonical_number`] writes them)
/// by value: `1.0` equals `1`.
pub fn cmp_numbers(a: &str, b: &str) -> Ordering {
    cmp_number_bytes(a.as_bytes(), b.as_bytes())
}

/// [`cmp_numbers`] over the texts' bytes, without allocating.
pub(crate) fn cmp_number_bytes(a: &[u8], b: &[u8]) -> Ordering {
    // Sign, integer digits without leading zeros, fraction digits without
    // trailing zeros.
    fn split(n: &[u8]) -> (i8, &[u8], &[u8]) {
        let (neg, mag) = match n.split_first() {
            Some((b'-', m)) => (true, m),
            _ => (false, n),
        };
        let (int, frac) = match mag.iter().position(|&c| c == b'.') {
            Some(i) => (&mag[..i], &mag[i + 1..]),
            None => (mag, &[][..]),
        };
        let int = &int[int.iter().position(|&c| c != b'0').unwrap_or(int.len())..];
        let frac = &frac[..frac.iter().rposition(|&c| c != b'0').map_or(0, |i| i + 1)];
        let sign = if int.is_empty() && frac.is_empty() {
            0
        } else if neg {
            -1
        } else {
            1
        };
        (sign, int, frac)
    }
    if a == b {
        return Ordering::Equal;
    }
    let (sa, ai, af) = split(a);
    let (sb, bi, bf) = split(b);
    if sa != sb {
        return sa.cmp(&sb);
    }
    let mag = ai.len().cmp(&bi.len()).then_with(|| ai.cmp(bi)).then_with(|| af.cmp(bf));
    if sa < 0 {
        mag.reverse()
    } else {
        mag
    }
}

/// The JSON a SQL value becomes in `to_jsonb` and the builders: numbers
/// stay numbers (a double that is not finite becomes a string, as JSON has
/// no NaN), booleans booleans, arrays arrays, `json` and `jsonb` their
/// documents, NULL `null`; dates and timestamps ISO 8601 strings
/// (`2024-01-31T10:00:00`); everything else the string of its text.
pub fn node_of_value(v: &crate::Value) -> Result<Node, crate::TypeError> {
    use crate::Value as V;
    Ok(match v {
        V::Null => Node::Null,
        V::Boolean(b) => Node::Bool(*b),
        V::SmallInt(_) | V::Integer(_) | V::BigInt(_) | V::Numeric(_) => Node::Number(v.to_string()),
        V::Double(f) if f.is_finite() => Node::Number(parse::canonical_number(&v.to_string())?),
        V::Array(items) => Node::Array(items.iter().map(node_of_value).collect::<Result<_, _>>()?),
        V::Json(s) => parse(s)?,
        V::Jsonb(j) => j.to_node(),
        V::Timestamp(_) => Node::String(v.to_string().replacen(' ', "T", 1)),
        V::TimestampTz(_) => {
            let mut s = v.to_string().replacen(' ', "T", 1);
            // `+00` becomes `+00:00`, as PostgreSQL writes an offset in JSON.
            if s.len() > 3 && s.as_bytes()[s.len() - 3] == b'+' {
                s.push_str(":00");
            }
            Node::String(s)
        }
        other => Node::String(other.to_string()),
    })
}
