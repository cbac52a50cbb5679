//! `jsonb`'s stored form and the operations that read it in place.
//!
//! A [`Jsonb`] is one self-describing byte string. Every value starts with
//! a tag byte; containers carry their element count and body length, so
//! any value can be stepped over without reading it:
//!
//! ```text
//!   null    0
//!   false   1
//!   true    2
//!   number  3, u32 length, numeric text ("-12.50")
//!   string  4, u32 length, UTF-8 bytes
//!   array   5, u32 count, u32 body length, the elements
//!   object  6, u32 count, u32 body length, per member: u32 key length,
//!              key bytes, value
//! ```
//!
//! Integers are little-endian. Object members are sorted by key length,
//! then key bytes (PostgreSQL's storage order, which its output shows),
//! with one member per key: the last one written wins. So two equal
//! documents have equal bytes, except for numbers written with different
//! scales (`1.0` and `1`), which compare equal.
//!
//! Operators read through a [`JRef`], a view of one value inside the
//! bytes: `->` and `@>` over a stored row touch no allocator. Reading
//! never panics, whatever the bytes: a damaged value reads as `null`.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::{cmp_number_bytes, cmp_numbers, write_string, Node};
use crate::error::TypeError;

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const NUMBER: u8 = 3;
const STRING: u8 = 4;
const ARRAY: u8 = 5;
const OBJECT: u8 = 6;

/// A `jsonb` value: its stored bytes, shared (a copy of a row's value
/// passed from operator to operator is a reference count).
#[derive(Clone)]
pub struct Jsonb(Arc<[u8]>);

/// What one value inside a [`Jsonb`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as numeric text.
    Number(&'a str),
    /// A string.
    String(&'a str),
    /// An array.
    Array,
    /// An object.
    Object,
}

/// One value inside a [`Jsonb`]'s bytes.
#[derive(Clone, Copy)]
pub struct JRef<'a> {
    b: &'a [u8],
}

fn u32_at(b: &[u8], at: usize) -> usize {
    b.get(at..at + 4).map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
}

fn bytes_at(b: &[u8], at: usize, len: usize) -> &[u8] {
    b.get(at..at.saturating_add(len)).unwrap_or_default()
}

fn str_at(b: &[u8], at: usize, len: usize) -> &str {
    std::str::from_utf8(bytes_at(b, at, len)).unwrap_or_default()
}

impl Jsonb {
    /// Parses JSON text.
    pub fn parse(text: &str) -> Result<Jsonb, TypeError> {
        Ok(Jsonb::from_node(&super::parse(text)?))
    }

    /// Encodes a tree: members sorted, one per key (the last wins).
    pub fn from_node(n: &Node) -> Jsonb {
        let mut out = Vec::with_capacity(64);
        encode(n, &mut out);
        Jsonb(out.into())
    }

    /// Takes stored bytes as they are.
    pub fn from_bytes(b: &[u8]) -> Jsonb {
        Jsonb(b.into())
    }

    /// The stored bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The whole value.
    pub fn root(&self) -> JRef<'_> {
        JRef { b: &self.0 }
    }

    /// The value as a tree, to be changed and encoded again.
    pub fn to_node(&self) -> Node {
        self.root().to_node()
    }
}

fn encode(n: &Node, out: &mut Vec<u8>) {
    let put_str = |tag: u8, s: &str, out: &mut Vec<u8>| {
        out.push(tag);
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    match n {
        Node::Null => out.push(NULL),
        Node::Bool(false) => out.push(FALSE),
        Node::Bool(true) => out.push(TRUE),
        Node::Number(s) => put_str(NUMBER, s, out),
        Node::String(s) => put_str(STRING, s, out),
        Node::Array(items) => {
            let at = container_head(ARRAY, items.len(), out);
            for i in items {
                encode(i, out);
            }
            patch_body(out, at);
        }
        Node::Object(members) => {
            let mut sorted: Vec<&(String, Node)> = members.iter().collect();
            // Stable, so among equal keys the last written stays last.
            sorted.sort_by(|a, b| key_order(&a.0, &b.0));
            let mut kept: Vec<&(String, Node)> = Vec::with_capacity(sorted.len());
            for m in sorted {
                match kept.last_mut() {
                    Some(last) if last.0 == m.0 => *last = m,
                    _ => kept.push(m),
                }
            }
            let at = container_head(OBJECT, kept.len(), out);
            for (k, v) in kept {
                out.extend_from_slice(&(k.len() as u32).to_le_bytes());
                out.extend_from_slice(k.as_bytes());
                encode(v, out);
            }
            patch_body(out, at);
        }
    }
}

/// Writes a container's tag and count and a body length to patch; returns
/// where the body starts.
fn container_head(tag: u8, count: usize, out: &mut Vec<u8>) -> usize {
    out.push(tag);
    out.extend_from_slice(&(count as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.len()
}

fn patch_body(out: &mut [u8], body: usize) {
    let len = (out.len() - body) as u32;
    out[body - 4..body].copy_from_slice(&len.to_le_bytes());
}

/// Object keys in storage order: shorter first, then bytewise.
pub(crate) fn key_order(a: &str, b: &str) -> Ordering {
    key_bytes_order(a.as_bytes(), b.as_bytes())
}

fn key_bytes_order(a: &[u8], b: &[u8]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

impl<'a> JRef<'a> {
    /// The value stored in `b` (a [`Jsonb`]'s bytes, such as a row's
    /// stored column), read in place without a copy.
    pub fn new(b: &'a [u8]) -> JRef<'a> {
        JRef { b }
    }

    /// What the value is.
    pub fn kind(&self) -> Kind<'a> {
        match self.b.first() {
            Some(&FALSE) => Kind::Bool(false),
            Some(&TRUE) => Kind::Bool(true),
            Some(&NUMBER) => Kind::Number(str_at(self.b, 5, u32_at(self.b, 1))),
            Some(&STRING) => Kind::String(str_at(self.b, 5, u32_at(self.b, 1))),
            Some(&ARRAY) => Kind::Array,
            Some(&OBJECT) => Kind::Object,
            _ => Kind::Null,
        }
    }

    /// Bytes the value takes.
    fn len(&self) -> usize {
        let n = match self.b.first() {
            Some(&NUMBER | &STRING) => 5usize.saturating_add(u32_at(self.b, 1)),
            Some(&ARRAY | &OBJECT) => 9usize.saturating_add(u32_at(self.b, 5)),
            _ => 1,
        };
        n.min(self.b.len())
    }

    /// The value's own bytes.
    pub fn bytes(&self) -> &'a [u8] {
        &self.b[..self.len()]
    }

    /// The value copied out as a [`Jsonb`] of its own.
    pub fn to_jsonb(&self) -> Jsonb {
        Jsonb::from_bytes(self.bytes())
    }

    /// Elements of an array, members of an object: the count.
    pub fn count(&self) -> usize {
        match self.kind() {
            Kind::Array | Kind::Object => u32_at(self.b, 1),
            _ => 0,
        }
    }

    fn body(&self) -> &'a [u8] {
        let end = self.len();
        self.b.get(9..end).unwrap_or_default()
    }

    /// An array's elements (none for other kinds).
    pub fn elements(&self) -> impl Iterator<Item = JRef<'a>> {
        let body = if self.kind() == Kind::Array { self.body() } else { &[] };
        let mut pos = 0;
        std::iter::from_fn(move || {
            let rest = body.get(pos..).filter(|r| !r.is_empty())?;
            let v = JRef { b: rest };
            pos += v.len();
            Some(v)
        })
    }

    /// An object's members in storage order (none for other kinds).
    pub fn members(&self) -> impl Iterator<Item = (&'a str, JRef<'a>)> {
        self.raw_members().map(|(k, v)| (std::str::from_utf8(k).unwrap_or_default(), v))
    }

    /// The members with their keys as bytes: the operators' path, which
    /// compares keys without checking their UTF-8 again.
    fn raw_members(&self) -> impl Iterator<Item = (&'a [u8], JRef<'a>)> {
        let body = if self.tag() == OBJECT { self.body() } else { &[] };
        let mut pos = 0;
        std::iter::from_fn(move || {
            let rest = body.get(pos..).filter(|r| r.len() >= 4)?;
            let klen = u32_at(rest, 0);
            let key = bytes_at(rest, 4, klen);
            let v = JRef { b: rest.get(4usize.saturating_add(klen)..).filter(|r| !r.is_empty())? };
            pos += 4 + klen + v.len();
            Some((key, v))
        })
    }

    fn tag(&self) -> u8 {
        match self.b.first() {
            Some(&t) if t <= OBJECT => t,
            _ => NULL,
        }
    }

    /// A number's or string's bytes.
    fn scalar_bytes(&self) -> &'a [u8] {
        bytes_at(self.b, 5, u32_at(self.b, 1))
    }

    /// An object's member `key`.
    pub fn get(&self, key: &str) -> Option<JRef<'a>> {
        for (k, v) in self.raw_members() {
            match key_bytes_order(k, key.as_bytes()) {
                Ordering::Equal => return Some(v),
                Ordering::Greater => return None,
                Ordering::Less => {}
            }
        }
        None
    }

    /// An array's element `i`, counting from 0; a negative `i` counts
    /// from the end.
    pub fn index(&self, i: i64) -> Option<JRef<'a>> {
        if self.kind() != Kind::Array {
            return None;
        }
        let n = self.count() as i64;
        let i = if i < 0 { n + i } else { i };
        if i < 0 {
            return None;
        }
        self.elements().nth(i as usize)
    }

    /// `?`: an object key, an array's string element, or the string
    /// itself, equal to `key`.
    pub fn exists(&self, key: &str) -> bool {
        match self.kind() {
            Kind::Object => self.get(key).is_some(),
            Kind::Array => self.elements().any(|e| e.tag() == STRING && e.scalar_bytes() == key.as_bytes()),
            Kind::String(s) => s == key,
            _ => false,
        }
    }

    /// `@>`, PostgreSQL's containment: an object contains an object whose
    /// every member it has with a containing value; an array contains an
    /// array each of whose elements some element of it contains; scalars
    /// contain equal scalars; and a top-level array contains a scalar
    /// that is one of its elements.
    pub fn contains(&self, other: JRef<'_>) -> bool {
        if self.tag() == ARRAY && !matches!(other.tag(), ARRAY | OBJECT) {
            return self.elements().any(|e| e.scalar_eq(&other));
        }
        self.contains_nested(other)
    }

    /// Equality of two scalars (numbers by value), without building text.
    fn scalar_eq(&self, other: &JRef<'_>) -> bool {
        match (self.tag(), other.tag()) {
            (NUMBER, NUMBER) => {
                let (a, b) = (self.scalar_bytes(), other.scalar_bytes());
                a == b || cmp_number_bytes(a, b) == Ordering::Equal
            }
            (STRING, STRING) => self.scalar_bytes() == other.scalar_bytes(),
            (ARRAY | OBJECT, _) | (_, ARRAY | OBJECT) => self.cmp_json(other) == Ordering::Equal,
            (a, b) => a == b,
        }
    }

    fn contains_nested(&self, other: JRef<'_>) -> bool {
        match (self.tag(), other.tag()) {
            (OBJECT, OBJECT) => {
                if other.count() > self.count() {
                    return false;
                }
                // Both member lists are in key order: one merge pass.
                let mut mine = self.raw_members().peekable();
                'theirs: for (k, v) in other.raw_members() {
                    while let Some((mk, mv)) = mine.peek() {
                        match key_bytes_order(mk, k) {
                            Ordering::Less => {
                                mine.next();
                            }
                            Ordering::Equal => {
                                if !mv.contains_nested(v) {
                                    return false;
                                }
                                mine.next();
                                continue 'theirs;
                            }
                            Ordering::Greater => return false,
                        }
                    }
                    return false;
                }
                true
            }
            (ARRAY, ARRAY) => other.elements().all(|want| match want.tag() {
                ARRAY | OBJECT => self.elements().any(|e| e.contains_nested(want)),
                _ => self.elements().any(|e| e.scalar_eq(&want)),
            }),
            (ARRAY | OBJECT, _) | (_, ARRAY | OBJECT) => false,
            _ => self.scalar_eq(&other),
        }
    }

    /// PostgreSQL's jsonb order: null < string < number < boolean < array
    /// < object; arrays and objects by size first, then element by
    /// element (objects key, value, key, value in storage order).
    pub fn cmp_json(&self, other: &JRef<'_>) -> Ordering {
        let (a, b) = (self.kind(), other.kind());
        rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
            (Kind::String(x), Kind::String(y)) => x.as_bytes().cmp(y.as_bytes()),
            (Kind::Number(x), Kind::Number(y)) => cmp_numbers(x, y),
            (Kind::Bool(x), Kind::Bool(y)) => x.cmp(&y),
            (Kind::Array, Kind::Array) => self.count().cmp(&other.count()).then_with(|| {
                for (x, y) in self.elements().zip(other.elements()) {
                    let o = x.cmp_json(&y);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                Ordering::Equal
            }),
            (Kind::Object, Kind::Object) => self.count().cmp(&other.count()).then_with(|| {
                for ((xk, xv), (yk, yv)) in self.members().zip(other.members()) {
                    let o = key_order(xk, yk).then_with(|| xv.cmp_json(&yv));
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                Ordering::Equal
            }),
            _ => Ordering::Equal,
        })
    }

    /// Appends a byte string whose bytewise order is [`JRef::cmp_json`]'s
    /// and which is equal for equal values (index keys).
    pub fn sort_key(&self, out: &mut Vec<u8>) {
        let k = self.kind();
        out.push(rank(k));
        match k {
            Kind::Null => {}
            Kind::Bool(b) => out.push(u8::from(b)),
            Kind::String(s) => {
                for &x in s.as_bytes() {
                    out.push(x);
                    if x == 0 {
                        out.push(0xFF);
                    }
                }
                out.extend_from_slice(&[0, 1]);
            }
            Kind::Number(n) => number_key(n, out),
            Kind::Array => {
                out.extend_from_slice(&(self.count() as u32).to_be_bytes());
                for e in self.elements() {
                    e.sort_key(out);
                }
            }
            Kind::Object => {
                out.extend_from_slice(&(self.count() as u32).to_be_bytes());
                for (key, v) in self.members() {
                    out.extend_from_slice(&(key.len() as u32).to_be_bytes());
                    out.extend_from_slice(key.as_bytes());
                    v.sort_key(out);
                }
            }
        }
    }

    /// The value as a tree.
    pub fn to_node(&self) -> Node {
        match self.kind() {
            Kind::Null => Node::Null,
            Kind::Bool(b) => Node::Bool(b),
            Kind::Number(n) => Node::Number(n.to_string()),
            Kind::String(s) => Node::String(s.to_string()),
            Kind::Array => Node::Array(self.elements().map(|e| e.to_node()).collect()),
            Kind::Object => Node::Object(self.members().map(|(k, v)| (k.to_string(), v.to_node())).collect()),
        }
    }

    /// Appends the value's text, as PostgreSQL prints jsonb
    /// (`{"a": 1, "b": [true, null]}`).
    pub fn write(&self, out: &mut String) {
        match self.kind() {
            Kind::Null => out.push_str("null"),
            Kind::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Kind::Number(n) => out.push_str(n),
            Kind::String(s) => write_string(s, out),
            Kind::Array => {
                out.push('[');
                for (i, e) in self.elements().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    e.write(out);
                }
                out.push(']');
            }
            Kind::Object => {
                out.push('{');
                for (i, (k, v)) in self.members().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_string(k, out);
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    /// The value's text, as [`JRef::write`] writes it.
    pub fn text(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }
}

/// Kinds in PostgreSQL's jsonb order.
fn rank(k: Kind<'_>) -> u8 {
    match k {
        Kind::Null => 0,
        Kind::String(_) => 1,
        Kind::Number(_) => 2,
        Kind::Bool(_) => 3,
        Kind::Array => 4,
        Kind::Object => 5,
    }
}

/// An order-preserving key for numeric text: sign class, then for
/// non-zero numbers the count of integer digits and the significant
/// digits, inverted for negatives.
fn number_key(n: &str, out: &mut Vec<u8>) {
    let (neg, mag) = match n.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, n),
    };
    let (int, frac) = mag.split_once('.').unwrap_or((mag, ""));
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    if int.is_empty() && frac.is_empty() {
        out.push(1);
        return;
    }
    // Position of the first significant digit relative to the point.
    let (exp, digits): (i64, String) = if int.is_empty() {
        let lead = frac.len() - frac.trim_start_matches('0').len();
        (-(lead as i64), frac.trim_start_matches('0').to_string())
    } else {
        (int.len() as i64, format!("{int}{frac}").trim_end_matches('0').to_string())
    };
    let flip = |b: u8| if neg { !b } else { b };
    out.push(if neg { 0 } else { 2 });
    for b in ((exp as i32) as u32 ^ 0x8000_0000).to_be_bytes() {
        out.push(flip(b));
    }
    for d in digits.bytes() {
        out.push(flip(d));
    }
    // Shorter digit strings sort first among equal prefixes.
    out.push(flip(0));
}

impl fmt::Display for Jsonb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.root().text())
    }
}

impl fmt::Debug for Jsonb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Jsonb({self})")
    }
}

impl PartialEq for Jsonb {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 || self.root().cmp_json(&other.root()) == Ordering::Equal
    }
}

impl Eq for Jsonb {}

impl PartialOrd for Jsonb {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Jsonb {
    fn cmp(&self, other: &Self) -> Ordering {
        self.root().cmp_json(&other.root())
    }
}

impl Hash for Jsonb {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut key = Vec::with_capacity(self.0.len() + 8);
        self.root().sort_key(&mut key);
        key.hash(state);
    }
}
