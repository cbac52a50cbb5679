//! Reading JSON text (RFC 8259, as PostgreSQL's `json` input accepts it)
//! into a [`Node`] tree, keeping object members in their written order and
//! duplicates as they are; `jsonb` sorts and de-duplicates them later.
//!
//! Numbers become PostgreSQL's `numeric` text form: exponents are
//! expanded (`1e2` is `100`, `1.5e-2` is `0.015`), the scale written is
//! kept (`1.50` stays `1.50`), and negative zero loses its sign.
//!
//! The parser recurses once per level of nesting; input nested deeper
//! than [`MAX_DEPTH`] is refused (54001, as PostgreSQL's stack check
//! refuses very deep input) instead of overflowing a thread's stack.

use super::Node;
use crate::error::TypeError;

/// Deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 1000;

/// Most digits before a number's decimal point (PostgreSQL's numeric
/// limit).
const MAX_INT_DIGITS: i64 = 131_072;
/// Most digits after a number's decimal point.
const MAX_SCALE: i64 = 16_383;

/// Parses JSON text into a tree.
pub fn parse(text: &str) -> Result<Node, TypeError> {
    let mut p = Parser { s: text.as_bytes(), pos: 0, depth: 0 };
    let v = p.value()?;
    p.space();
    if p.pos != p.s.len() {
        return Err(TypeError::InvalidJson);
    }
    Ok(v)
}

/// The top-level members of a JSON object text as (key, value text)
/// pairs in written order, duplicates kept; `None` when the text is not an
/// object. The value texts are the exact slices of the input, as `json`'s
/// operators return them.
pub fn object_members(text: &str) -> Result<Option<Vec<(String, &str)>>, TypeError> {
    top_level(text, b'{', |p, out| {
        let key = p.string()?;
        p.space();
        p.expect(b':')?;
        p.space();
        let start = p.pos;
        p.value()?;
        out.push((key, &text[start..p.pos]));
        Ok(())
    })
}

/// The top-level elements of a JSON array text as exact slices of the
/// input; `None` when the text is not an array.
pub fn array_elements(text: &str) -> Result<Option<Vec<&str>>, TypeError> {
    top_level(text, b'[', |p, out| {
        let start = p.pos;
        p.value()?;
        out.push(&text[start..p.pos]);
        Ok(())
    })
}

/// The items of `text` when it is a container opened by `open`, each read
/// by `item`; `None` (after checking the text is JSON) when it is not.
fn top_level<'t, T>(
    text: &'t str,
    open: u8,
    mut item: impl FnMut(&mut Parser<'t>, &mut Vec<T>) -> Result<(), TypeError>,
) -> Result<Option<Vec<T>>, TypeError> {
    let mut p = Parser { s: text.as_bytes(), pos: 0, depth: 0 };
    p.space();
    if p.peek() != Some(open) {
        parse(text)?;
        return Ok(None);
    }
    let mut out = Vec::new();
    p.list(|p| item(p, &mut out))?;
    p.space();
    if p.pos != p.s.len() {
        return Err(TypeError::InvalidJson);
    }
    Ok(Some(out))
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), TypeError> {
        if self.next() == Some(c) {
            Ok(())
        } else {
            Err(TypeError::InvalidJson)
        }
    }

    fn word(&mut self, w: &[u8]) -> Result<(), TypeError> {
        if self.s[self.pos..].starts_with(w) {
            self.pos += w.len();
            // `truex` is one bad token, not `true` then junk.
            if self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
                return Err(TypeError::InvalidJson);
            }
            Ok(())
        } else {
            Err(TypeError::InvalidJson)
        }
    }

    fn value(&mut self) -> Result<Node, TypeError> {
        self.space();
        match self.peek() {
            Some(b'{') => {
                self.nest()?;
                let mut members = Vec::new();
                self.list(|p| {
                    let key = p.string()?;
                    p.space();
                    p.expect(b':')?;
                    members.push((key, p.value()?));
                    Ok(())
                })?;
                self.depth -= 1;
                Ok(Node::Object(members))
            }
            Some(b'[') => {
                self.nest()?;
                let mut items = Vec::new();
                self.list(|p| {
                    items.push(p.value()?);
                    Ok(())
                })?;
                self.depth -= 1;
                Ok(Node::Array(items))
            }
            Some(b'"') => Ok(Node::String(self.string()?)),
            Some(b't') => self.word(b"true").map(|_| Node::Bool(true)),
            Some(b'f') => self.word(b"false").map(|_| Node::Bool(false)),
            Some(b'n') => self.word(b"null").map(|_| Node::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(TypeError::InvalidJson),
        }
    }

    /// Reads a container's items from its opening `[` or `{` through its
    /// closing one: `item` reads each, after the blanks before it.
    fn list(&mut self, mut item: impl FnMut(&mut Self) -> Result<(), TypeError>) -> Result<(), TypeError> {
        let close = if self.next() == Some(b'{') { b'}' } else { b']' };
        self.space();
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.space();
            item(self)?;
            self.space();
            match self.next() {
                Some(b',') => continue,
                Some(c) if c == close => return Ok(()),
                _ => return Err(TypeError::InvalidJson),
            }
        }
    }

    fn nest(&mut self) -> Result<(), TypeError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(TypeError::TooDeep);
        }
        Ok(())
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Node, TypeError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        let n = self.digits();
        // JSON forbids leading zeros (`01`) and a bare `-`.
        if n == 0 || (n > 1 && self.s[int_start] == b'0') {
            return Err(TypeError::InvalidJson);
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(TypeError::InvalidJson);
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(TypeError::InvalidJson);
            }
        }
        if self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'.') {
            return Err(TypeError::InvalidJson);
        }
        // The bytes just scanned are ASCII.
        let lexeme = std::str::from_utf8(&self.s[start..self.pos]).map_err(|_| TypeError::InvalidJson)?;
        Ok(Node::Number(canonical_number(lexeme)?))
    }

    fn hex4(&mut self) -> Result<u32, TypeError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = self.next().and_then(|c| (c as char).to_digit(16)).ok_or(TypeError::InvalidJson)?;
            v = v * 16 + d;
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, TypeError> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            let c = self.next().ok_or(TypeError::InvalidJson)?;
            match c {
                b'"' => break,
                b'\\' => match self.next().ok_or(TypeError::InvalidJson)? {
                    b'"' => out.push(b'"'),
                    b'\\' => out.push(b'\\'),
                    b'/' => out.push(b'/'),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'u' => {
                        let mut cp = self.hex4()?;
                        if (0xD800..0xDC00).contains(&cp) {
                            // A high surrogate must be followed by a low one.
                            if self.next() != Some(b'\\') || self.next() != Some(b'u') {
                                return Err(TypeError::InvalidJson);
                            }
                            let lo = self.hex4()?;
                            if !(0xDC00..0xE000).contains(&lo) {
                                return Err(TypeError::InvalidJson);
                            }
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        } else if (0xDC00..0xE000).contains(&cp) {
                            return Err(TypeError::InvalidJson);
                        }
                        if cp == 0 {
                            // Text cannot hold NUL, as in PostgreSQL.
                            return Err(TypeError::UntranslatableJson);
                        }
                        let ch = char::from_u32(cp).ok_or(TypeError::InvalidJson)?;
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    }
                    _ => return Err(TypeError::InvalidJson),
                },
                // Control characters must be escaped.
                0..=0x1F => return Err(TypeError::InvalidJson),
                c => out.push(c),
            }
        }
        // The input was a &str and escapes add whole characters.
        String::from_utf8(out).map_err(|_| TypeError::InvalidJson)
    }
}

/// PostgreSQL's numeric text of a JSON number lexeme (`-?int[.frac][e±exp]`,
/// already checked): exponent expanded, written scale kept, no negative
/// zero. 22003 beyond numeric's range.
pub fn canonical_number(lexeme: &str) -> Result<String, TypeError> {
    let (neg, rest) = match lexeme.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, lexeme),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => {
            let e = &rest[i + 1..];
            // A huge exponent is out of range either way; clamp to parse.
            let e: i64 = e.parse().unwrap_or(if e.starts_with('-') {
                -10 * MAX_INT_DIGITS
            } else {
                10 * MAX_INT_DIGITS
            });
            (&rest[..i], e)
        }
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = format!("{int}{frac}");
    let point = int.len() as i64 + exp;
    let scale = (frac.len() as i64 - exp).max(0);
    let all_zero = digits.bytes().all(|b| b == b'0');
    if (point > MAX_INT_DIGITS && !all_zero) || scale > MAX_SCALE {
        return Err(TypeError::OutOfRange("value overflows numeric format".into()));
    }
    let mut out = String::with_capacity(digits.len() + 4);
    if neg && !all_zero {
        out.push('-');
    }
    let (ip, fp): (String, String) = if point <= 0 {
        (String::new(), format!("{}{digits}", "0".repeat((-point) as usize)))
    } else if point as usize >= digits.len() {
        (format!("{digits}{}", "0".repeat(point as usize - digits.len())), String::new())
    } else {
        (digits[..point as usize].to_string(), digits[point as usize..].to_string())
    };
    let ip = ip.trim_start_matches('0');
    out.push_str(if ip.is_empty() { "0" } else { ip });
    let scale = scale as usize;
    if scale > 0 {
        out.push('.');
        // The fraction has at least `scale` digits when the exponent is
        // not positive; a positive exponent shortens the scale.
        let mut f: String = fp.chars().take(scale).collect();
        while f.len() < scale {
            f.push('0');
        }
        out.push_str(&f);
    }
    Ok(out)
}
