//! Full-text search: `tsvector`, `tsquery` and the `simple` and `english`
//! text search configurations.
//!
//! ```text
//!   text ──config::to_tsvector──▶ TsVector   sorted lexemes, each with its
//!                                            positions (1..16383) and weights
//!   text ──config::to_tsquery───▶ TsQuery    a tree of lexemes under
//!                                            ! & | <N>, prefix :* and weights
//!
//!   TsQuery::matches(&TsVector)              `@@`, phrases by positions
//! ```
//!
//! Text input and output follow PostgreSQL's `tsvectorin`/`tsvectorout`
//! and `tsqueryin`/`tsqueryout` exactly (`'fat':2 'rat':3`,
//! `'fat' & ( 'rat' | 'cat' )`), and [`TsVector::send`]/[`TsQuery::send`]
//! write PostgreSQL's binary wire format (`tsvectorsend`, `tsquerysend`);
//! the same bytes are the stored form.
//!
//! Matching is PostgreSQL's `TS_execute`: a phrase operator works on the
//! positions where its operands match, a NOT inside a phrase on the
//! positions where its operand does not; a lexeme stored without positions
//! (after `strip`) matches plain operators but never a phrase.

pub mod config;
pub mod parse;
#[cfg(test)]
mod tests;

use std::fmt;

use crate::error::TypeError;

/// The highest position a lexeme can have; later words share it.
pub const MAX_POS: u16 = 16383;
/// The most positions one lexeme keeps; later ones are dropped.
pub const MAX_POSITIONS: usize = 256;
/// The longest distance of a phrase operator (`<16384>`).
pub const MAX_DISTANCE: u16 = 16384;

/// One position of a lexeme: the word number in its low 14 bits and the
/// weight (3 = A, 2 = B, 1 = C, 0 = D) in its top 2, as PostgreSQL packs it.
pub type Pos = u16;

/// The word number of a packed position.
pub fn pos_of(p: Pos) -> u16 {
    p & 0x3fff
}

/// The weight (0 = D .. 3 = A) of a packed position.
pub fn weight_of(p: Pos) -> u8 {
    (p >> 14) as u8
}

/// A packed position.
pub fn make_pos(pos: u16, weight: u8) -> Pos {
    (pos.min(MAX_POS)) | (u16::from(weight & 3) << 14)
}

/// The letter of a weight.
fn weight_letter(w: u8) -> char {
    ['D', 'C', 'B', 'A'][usize::from(w & 3)]
}

/// One lexeme of a `tsvector` and where it occurs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lexeme {
    /// The normalized word.
    pub word: String,
    /// Its positions, ascending and distinct by word number; empty when
    /// the vector has no positions for it.
    pub positions: Vec<Pos>,
}

/// A `tsvector`: lexemes sorted by their bytes, each once.
///
/// Values order by their binary form, the order of their stored keys.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TsVector {
    lexemes: Vec<Lexeme>,
}

impl TsVector {
    /// A vector of `lexemes` in any order, merging the positions of a word
    /// given twice and sorting them.
    pub fn from_lexemes(mut lexemes: Vec<Lexeme>) -> TsVector {
        lexemes.sort_by(|a, b| a.word.as_bytes().cmp(b.word.as_bytes()));
        let mut out: Vec<Lexeme> = Vec::with_capacity(lexemes.len());
        for l in lexemes {
            match out.last_mut() {
                Some(last) if last.word == l.word => last.positions.extend(l.positions),
                _ => out.push(l),
            }
        }
        for l in &mut out {
            normalize_positions(&mut l.positions);
        }
        TsVector { lexemes: out }
    }

    /// The lexemes, sorted.
    pub fn lexemes(&self) -> &[Lexeme] {
        &self.lexemes
    }

    /// How many lexemes (`length(tsvector)`).
    pub fn len(&self) -> usize {
        self.lexemes.len()
    }

    /// True for the empty vector.
    pub fn is_empty(&self) -> bool {
        self.lexemes.is_empty()
    }

    /// The lexeme `word`, if present.
    pub fn get(&self, word: &str) -> Option<&Lexeme> {
        self.lexemes
            .binary_search_by(|l| l.word.as_bytes().cmp(word.as_bytes()))
            .ok()
            .map(|i| &self.lexemes[i])
    }

    /// `strip`: the lexemes without positions.
    pub fn strip(&self) -> TsVector {
        TsVector {
            lexemes: self
                .lexemes
                .iter()
                .map(|l| Lexeme { word: l.word.clone(), positions: vec![] })
                .collect(),
        }
    }

    /// `setweight(v, w)`: every position gets weight `w` (0 = D .. 3 = A).
    pub fn setweight(&self, w: u8) -> TsVector {
        let mut v = self.clone();
        for l in &mut v.lexemes {
            for p in &mut l.positions {
                *p = make_pos(pos_of(*p), w);
            }
        }
        v
    }

    /// `a || b`: `b`'s positions move past `a`'s highest one, and a word in
    /// both keeps the positions of both, as PostgreSQL's `tsvector_concat`.
    pub fn concat(&self, other: &TsVector) -> TsVector {
        let max = self.lexemes.iter().flat_map(|l| l.positions.iter().map(|p| pos_of(*p))).max().unwrap_or(0);
        let mut all = self.lexemes.clone();
        for l in &other.lexemes {
            let positions = l
                .positions
                .iter()
                .map(|p| {
                    make_pos(
                        (u32::from(pos_of(*p)) + u32::from(max)).min(u32::from(MAX_POS)) as u16,
                        weight_of(*p),
                    )
                })
                .collect();
            all.push(Lexeme { word: l.word.clone(), positions });
        }
        TsVector::from_lexemes(all)
    }

    /// PostgreSQL's binary form (`tsvectorsend`): the lexeme count (i32),
    /// then per lexeme its text with a NUL, the position count (u16) and
    /// the packed positions (u16 each), big-endian. Also the stored form.
    pub fn send(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.lexemes.len() as i32).to_be_bytes());
        for l in &self.lexemes {
            out.extend_from_slice(l.word.as_bytes());
            out.push(0);
            out.extend_from_slice(&(l.positions.len() as u16).to_be_bytes());
            for p in &l.positions {
                out.extend_from_slice(&p.to_be_bytes());
            }
        }
        out
    }

    /// Reads [`TsVector::send`]'s form, checking it (22P03 on bad input).
    pub fn recv(bytes: &[u8]) -> Result<TsVector, TypeError> {
        let bad = || TypeError::InvalidBinary("invalid tsvector binary data".into());
        let mut r = Reader { bytes, at: 0 };
        let n = r.i32().ok_or_else(bad)?;
        if n < 0 {
            return Err(bad());
        }
        let mut lexemes = Vec::new();
        for _ in 0..n {
            let word = r.cstr().ok_or_else(bad)?;
            let np = r.u16().ok_or_else(bad)?;
            let mut positions = Vec::with_capacity(usize::from(np));
            for _ in 0..np {
                let p = r.u16().ok_or_else(bad)?;
                if pos_of(p) == 0 {
                    return Err(bad());
                }
                positions.push(p);
            }
            lexemes.push(Lexeme { word, positions });
        }
        if r.at != bytes.len() {
            return Err(bad());
        }
        Ok(TsVector::from_lexemes(lexemes))
    }

    /// Reads the stored form, which [`TsVector::send`] wrote.
    pub fn from_stored(bytes: &[u8]) -> TsVector {
        TsVector::recv(bytes).unwrap_or_default()
    }
}

impl Ord for TsVector {
    fn cmp(&self, other: &TsVector) -> std::cmp::Ordering {
        self.send().cmp(&other.send())
    }
}

impl PartialOrd for TsVector {
    fn partial_cmp(&self, other: &TsVector) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TsQuery {
    fn cmp(&self, other: &TsQuery) -> std::cmp::Ordering {
        self.send().cmp(&other.send())
    }
}

impl PartialOrd for TsQuery {
    fn partial_cmp(&self, other: &TsQuery) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Sorts positions by word number, keeping one per number (the highest
/// weight, as PostgreSQL's `uniquePos` keeps the one it meets last after a
/// sort by number), at most [`MAX_POSITIONS`].
fn normalize_positions(ps: &mut Vec<Pos>) {
    ps.sort_by_key(|p| (pos_of(*p), weight_of(*p)));
    let mut out: Vec<Pos> = Vec::with_capacity(ps.len());
    for &p in ps.iter() {
        match out.last_mut() {
            Some(last) if pos_of(*last) == pos_of(p) => *last = p,
            _ => out.push(p),
        }
    }
    out.truncate(MAX_POSITIONS);
    *ps = out;
}

/// Writes a lexeme quoted as PostgreSQL's output functions do: in single
/// quotes, with `'` and `\` doubled.
fn write_quoted(f: &mut impl fmt::Write, word: &str) -> fmt::Result {
    f.write_char('\'')?;
    for c in word.chars() {
        if c == '\'' || c == '\\' {
            f.write_char(c)?;
        }
        f.write_char(c)?;
    }
    f.write_char('\'')
}

impl fmt::Display for TsVector {
    /// `'fat':2 'rat':3,5A`, PostgreSQL's `tsvectorout`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, l) in self.lexemes.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write_quoted(f, &l.word)?;
            for (j, p) in l.positions.iter().enumerate() {
                f.write_str(if j == 0 { ":" } else { "," })?;
                write!(f, "{}", pos_of(*p))?;
                if weight_of(*p) != 0 {
                    write!(f, "{}", weight_letter(weight_of(*p)))?;
                }
            }
        }
        Ok(())
    }
}

/// A node of a `tsquery`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QueryNode {
    /// A lexeme to find.
    Lexeme {
        /// The lexeme.
        word: String,
        /// The weights it must have, a mask of 8 = A, 4 = B, 2 = C, 1 = D;
        /// 0 for any.
        weights: u8,
        /// `:*`: any lexeme starting with `word`.
        prefix: bool,
    },
    /// `!q`.
    Not(Box<QueryNode>),
    /// `a & b`.
    And(Box<QueryNode>, Box<QueryNode>),
    /// `a | b`.
    Or(Box<QueryNode>, Box<QueryNode>),
    /// `a <N> b`: `b` N positions after `a` (`<->` is 1).
    Phrase(Box<QueryNode>, Box<QueryNode>, u16),
}

/// A `tsquery`; `None` is the empty query, which matches nothing.
///
/// Values order by their binary form, the order of their stored keys.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TsQuery {
    /// The query tree.
    pub root: Option<QueryNode>,
}

/// Operator priorities of PostgreSQL's output (`tsearch_op_priority`).
const PRI_OR: u8 = 1;
const PRI_AND: u8 = 2;
const PRI_PHRASE: u8 = 3;
const PRI_NOT: u8 = 4;

impl QueryNode {
    /// A lexeme without weights or prefix.
    pub fn word(word: impl Into<String>) -> QueryNode {
        QueryNode::Lexeme { word: word.into(), weights: 0, prefix: false }
    }

    /// `tsqueryout`'s infix form, with PostgreSQL's parentheses.
    fn write(&self, out: &mut String, parent: u8, right_of_phrase: bool) {
        use std::fmt::Write;
        match self {
            QueryNode::Lexeme { word, weights, prefix } => {
                let _ = write_quoted(out, word);
                if *weights != 0 || *prefix {
                    out.push(':');
                    if *prefix {
                        out.push('*');
                    }
                    for (bit, c) in [(8, 'A'), (4, 'B'), (2, 'C'), (1, 'D')] {
                        if weights & bit != 0 {
                            out.push(c);
                        }
                    }
                }
            }
            QueryNode::Not(q) => {
                let paren = PRI_NOT < parent;
                if paren {
                    out.push_str("( ");
                }
                out.push('!');
                q.write(out, PRI_NOT, false);
                if paren {
                    out.push_str(" )");
                }
            }
            QueryNode::And(l, r) | QueryNode::Or(l, r) | QueryNode::Phrase(l, r, _) => {
                let (pri, phrase) = match self {
                    QueryNode::And(..) => (PRI_AND, false),
                    QueryNode::Or(..) => (PRI_OR, false),
                    _ => (PRI_PHRASE, true),
                };
                let paren = pri < parent || (phrase && right_of_phrase);
                if paren {
                    out.push_str("( ");
                }
                l.write(out, pri, false);
                match self {
                    QueryNode::And(..) => out.push_str(" & "),
                    QueryNode::Or(..) => out.push_str(" | "),
                    QueryNode::Phrase(_, _, 1) => out.push_str(" <-> "),
                    QueryNode::Phrase(_, _, d) => {
                        let _ = write!(out, " <{d}> ");
                    }
                    _ => {}
                }
                r.write(out, pri, phrase);
                if paren {
                    out.push_str(" )");
                }
            }
        }
    }

    /// Appends the node in PostgreSQL's binary (polish) order: an operator,
    /// then its right operand, then its left.
    fn send(&self, out: &mut Vec<u8>, count: &mut i32) {
        *count += 1;
        match self {
            QueryNode::Lexeme { word, weights, prefix } => {
                out.extend_from_slice(&[1, *weights, u8::from(*prefix)]);
                out.extend_from_slice(word.as_bytes());
                out.push(0);
            }
            QueryNode::Not(q) => {
                out.extend_from_slice(&[2, 1]);
                q.send(out, count);
            }
            QueryNode::And(l, r) | QueryNode::Or(l, r) | QueryNode::Phrase(l, r, _) => {
                match self {
                    QueryNode::And(..) => out.extend_from_slice(&[2, 2]),
                    QueryNode::Or(..) => out.extend_from_slice(&[2, 3]),
                    QueryNode::Phrase(_, _, d) => {
                        out.extend_from_slice(&[2, 4]);
                        out.extend_from_slice(&d.to_be_bytes());
                    }
                    _ => {}
                }
                r.send(out, count);
                l.send(out, count);
            }
        }
    }

    /// Reads one node of [`QueryNode::send`]'s form.
    fn recv(r: &mut Reader<'_>, depth: u32) -> Option<QueryNode> {
        if depth > 10_000 {
            return None;
        }
        match r.u8()? {
            1 => {
                let weights = r.u8()?;
                let prefix = r.u8()?;
                if weights > 15 || prefix > 1 {
                    return None;
                }
                let word = r.cstr()?;
                Some(QueryNode::Lexeme { word, weights, prefix: prefix == 1 })
            }
            2 => {
                let op = r.u8()?;
                if op == 1 {
                    return Some(QueryNode::Not(Box::new(QueryNode::recv(r, depth + 1)?)));
                }
                let d = if op == 4 { Some(r.u16()?) } else { None };
                let right = Box::new(QueryNode::recv(r, depth + 1)?);
                let left = Box::new(QueryNode::recv(r, depth + 1)?);
                match (op, d) {
                    (2, _) => Some(QueryNode::And(left, right)),
                    (3, _) => Some(QueryNode::Or(left, right)),
                    (4, Some(d)) if d <= MAX_DISTANCE => Some(QueryNode::Phrase(left, right, d)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// How many nodes (`numnode`).
    pub fn count(&self) -> usize {
        match self {
            QueryNode::Lexeme { .. } => 1,
            QueryNode::Not(q) => 1 + q.count(),
            QueryNode::And(l, r) | QueryNode::Or(l, r) | QueryNode::Phrase(l, r, _) => {
                1 + l.count() + r.count()
            }
        }
    }
}

impl TsQuery {
    /// A query of `root`.
    pub fn new(root: Option<QueryNode>) -> TsQuery {
        TsQuery { root }
    }

    /// PostgreSQL's binary form (`tsquerysend`): the node count (i32), then
    /// the nodes in polish order; a lexeme is `1`, its weight mask, its
    /// prefix flag and its text with a NUL, an operator `2` and its code
    /// (1 NOT, 2 AND, 3 OR, 4 phrase, then the distance as i16). Also the
    /// stored form.
    pub fn send(&self) -> Vec<u8> {
        let mut body = Vec::new();
        let mut count = 0;
        if let Some(root) = &self.root {
            root.send(&mut body, &mut count);
        }
        let mut out = count.to_be_bytes().to_vec();
        out.extend_from_slice(&body);
        out
    }

    /// Reads [`TsQuery::send`]'s form, checking it (22P03 on bad input).
    pub fn recv(bytes: &[u8]) -> Result<TsQuery, TypeError> {
        let bad = || TypeError::InvalidBinary("invalid tsquery binary data".into());
        let mut r = Reader { bytes, at: 0 };
        let n = r.i32().ok_or_else(bad)?;
        if n == 0 && bytes.len() == 4 {
            return Ok(TsQuery::default());
        }
        let root = QueryNode::recv(&mut r, 0).ok_or_else(bad)?;
        if r.at != bytes.len() || root.count() != usize::try_from(n).unwrap_or(0) {
            return Err(bad());
        }
        Ok(TsQuery { root: Some(root) })
    }

    /// Reads the stored form, which [`TsQuery::send`] wrote.
    pub fn from_stored(bytes: &[u8]) -> TsQuery {
        TsQuery::recv(bytes).unwrap_or_default()
    }

    /// `vector @@ query`.
    pub fn matches(&self, v: &TsVector) -> bool {
        match &self.root {
            None => false,
            Some(root) => execute(root, v) != Tri::No,
        }
    }

    /// `a && b`.
    pub fn and(&self, other: &TsQuery) -> TsQuery {
        self.combine(other, |l, r| QueryNode::And(Box::new(l), Box::new(r)))
    }

    /// `a || b`.
    pub fn or(&self, other: &TsQuery) -> TsQuery {
        self.combine(other, |l, r| QueryNode::Or(Box::new(l), Box::new(r)))
    }

    /// `!!q`.
    pub fn not(&self) -> TsQuery {
        TsQuery { root: self.root.clone().map(|q| QueryNode::Not(Box::new(q))) }
    }

    fn combine(&self, other: &TsQuery, f: impl FnOnce(QueryNode, QueryNode) -> QueryNode) -> TsQuery {
        match (&self.root, &other.root) {
            (None, _) => other.clone(),
            (_, None) => self.clone(),
            (Some(l), Some(r)) => TsQuery { root: Some(f(l.clone(), r.clone())) },
        }
    }
}

impl fmt::Display for TsQuery {
    /// `'fat' & ( 'rat' | 'cat' )`, PostgreSQL's `tsqueryout`; the empty
    /// query is the empty string.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        if let Some(root) = &self.root {
            root.write(&mut out, 0, false);
        }
        f.write_str(&out)
    }
}

/// A cursor over binary input.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
    fn i32(&mut self) -> Option<i32> {
        self.take(4).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn cstr(&mut self) -> Option<String> {
        let rest = self.bytes.get(self.at..)?;
        let end = rest.iter().position(|b| *b == 0)?;
        let s = std::str::from_utf8(&rest[..end]).ok()?.to_string();
        self.at += end + 1;
        Some(s)
    }
}

// ---- Matching ----------------------------------------------------------------

/// PostgreSQL's three-valued match result: `Maybe` when a lexeme is there
/// but without the positions a phrase needs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tri {
    No,
    Yes,
    Maybe,
}

/// Where a phrase operand matches (`ExecPhraseData`): the positions
/// (ascending), or with `negate` the positions where it does not; `width`
/// is how many positions a match spans past its first.
#[derive(Default, Debug)]
struct Phrase {
    pos: Vec<u16>,
    negate: bool,
    width: u16,
}

/// Positions of the lexeme operand in `v` (all lexemes it prefixes with
/// `:*`) of the weights asked for; `Maybe` when a matching lexeme has no
/// positions (a phrase cannot use it; elsewhere it matches).
fn lexeme_positions(word: &str, weights: u8, prefix: bool, v: &TsVector) -> (Tri, Vec<u16>) {
    let lexemes: &[Lexeme] = if prefix {
        let start = v.lexemes.partition_point(|l| l.word.as_bytes() < word.as_bytes());
        let end = start + v.lexemes[start..].iter().take_while(|l| l.word.starts_with(word)).count();
        &v.lexemes[start..end]
    } else {
        match v.get(word) {
            Some(l) => std::slice::from_ref(l),
            None => &[],
        }
    };
    let mut out = Vec::new();
    let mut maybe = false;
    for l in lexemes {
        if l.positions.is_empty() {
            // Without positions a weight cannot be checked either.
            maybe = true;
            continue;
        }
        for p in &l.positions {
            if weights == 0 || weights & (1 << weight_of(*p)) != 0 {
                out.push(pos_of(*p));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    if !out.is_empty() {
        (Tri::Yes, out)
    } else if maybe {
        (Tri::Maybe, out)
    } else {
        (Tri::No, out)
    }
}

/// `TS_execute_recurse`.
fn execute(q: &QueryNode, v: &TsVector) -> Tri {
    match q {
        // Outside a phrase a lexeme stored without positions matches,
        // whatever weights the operand asks for.
        QueryNode::Lexeme { word, weights, prefix } => match lexeme_positions(word, *weights, *prefix, v).0 {
            Tri::Maybe => Tri::Yes,
            t => t,
        },
        QueryNode::Not(q) => match execute(q, v) {
            Tri::Yes => Tri::No,
            Tri::No => Tri::Yes,
            Tri::Maybe => Tri::Maybe,
        },
        QueryNode::And(l, r) => match execute(l, v) {
            Tri::No => Tri::No,
            Tri::Yes => execute(r, v),
            Tri::Maybe => match execute(r, v) {
                Tri::No => Tri::No,
                _ => Tri::Maybe,
            },
        },
        QueryNode::Or(l, r) => match execute(l, v) {
            Tri::Yes => Tri::Yes,
            Tri::No => execute(r, v),
            Tri::Maybe => match execute(r, v) {
                Tri::Yes => Tri::Yes,
                _ => Tri::Maybe,
            },
        },
        QueryNode::Phrase(..) => {
            let mut data = Phrase::default();
            match phrase(q, v, &mut data) {
                Tri::Yes if !data.pos.is_empty() || data.negate => Tri::Yes,
                // Uncertain positions are no phrase match.
                _ => Tri::No,
            }
        }
    }
}

/// Which positions `phrase_output` emits.
const EMIT_BOTH: u8 = 1;
const EMIT_L: u8 = 2;
const EMIT_R: u8 = 4;

/// `TS_phrase_output`: merges the two position lists, offset, emitting
/// those `emit` asks for.
fn phrase_output(data: &mut Phrase, l: &Phrase, r: &Phrase, emit: u8, loff: i32, roff: i32) -> Tri {
    let (mut li, mut ri) = (0, 0);
    data.pos.clear();
    while li < l.pos.len() || ri < r.pos.len() {
        let lpos = if li < l.pos.len() {
            i32::from(l.pos[li]) + loff
        } else {
            if emit & EMIT_R == 0 {
                break;
            }
            i32::MAX
        };
        let rpos = if ri < r.pos.len() {
            i32::from(r.pos[ri]) + roff
        } else {
            if emit & EMIT_L == 0 {
                break;
            }
            i32::MAX
        };
        let mut out = None;
        match lpos.cmp(&rpos) {
            std::cmp::Ordering::Less => {
                if emit & EMIT_L != 0 {
                    out = Some(lpos);
                }
                li += 1;
            }
            std::cmp::Ordering::Equal => {
                if emit & EMIT_BOTH != 0 {
                    out = Some(rpos);
                }
                li += 1;
                ri += 1;
            }
            std::cmp::Ordering::Greater => {
                if emit & EMIT_R != 0 {
                    out = Some(rpos);
                }
                ri += 1;
            }
        }
        if let Some(p) = out {
            let p = p.clamp(0, i32::from(u16::MAX)) as u16;
            if data.pos.last() != Some(&p) {
                data.pos.push(p);
            }
        }
    }
    if data.pos.is_empty() {
        Tri::No
    } else {
        Tri::Yes
    }
}

/// `TS_phrase_execute`: where `q` matches, into `data`.
fn phrase(q: &QueryNode, v: &TsVector, data: &mut Phrase) -> Tri {
    match q {
        QueryNode::Lexeme { word, weights, prefix } => {
            let (t, pos) = lexeme_positions(word, *weights, *prefix, v);
            data.pos = pos;
            data.negate = false;
            data.width = 0;
            t
        }
        QueryNode::Not(q) => match phrase(q, v, data) {
            Tri::No => {
                data.pos.clear();
                data.negate = true;
                Tri::Yes
            }
            Tri::Yes if !data.pos.is_empty() => {
                data.negate = !data.negate;
                Tri::Yes
            }
            Tri::Yes if data.negate => {
                data.negate = false;
                Tri::No
            }
            Tri::Yes => Tri::No,
            Tri::Maybe => Tri::Maybe,
        },
        QueryNode::Phrase(l, r, _) | QueryNode::And(l, r) => {
            let (mut ld, mut rd) = (Phrase::default(), Phrase::default());
            let lm = phrase(l, v, &mut ld);
            if lm == Tri::No {
                return Tri::No;
            }
            let rm = phrase(r, v, &mut rd);
            if rm == Tri::No {
                return Tri::No;
            }
            if lm == Tri::Maybe || rm == Tri::Maybe {
                return Tri::Maybe;
            }
            let (loff, roff) = if let QueryNode::Phrase(_, _, d) = q {
                data.width = d.saturating_add(ld.width).saturating_add(rd.width);
                (i32::from(*d) + i32::from(rd.width), 0)
            } else {
                let w = ld.width.max(rd.width);
                data.width = w;
                (i32::from(w - ld.width), i32::from(w - rd.width))
            };
            data.negate = false;
            match (ld.negate, rd.negate) {
                (true, true) => {
                    phrase_output(data, &ld, &rd, EMIT_BOTH | EMIT_L | EMIT_R, loff, roff);
                    data.negate = true;
                    Tri::Yes
                }
                (true, false) => phrase_output(data, &ld, &rd, EMIT_R, loff, roff),
                (false, true) => phrase_output(data, &ld, &rd, EMIT_L, loff, roff),
                (false, false) => phrase_output(data, &ld, &rd, EMIT_BOTH, loff, roff),
            }
        }
        QueryNode::Or(l, r) => {
            let (mut ld, mut rd) = (Phrase::default(), Phrase::default());
            let lm = phrase(l, v, &mut ld);
            let rm = phrase(r, v, &mut rd);
            if lm == Tri::No && rm == Tri::No {
                return Tri::No;
            }
            if lm == Tri::Maybe || rm == Tri::Maybe {
                return Tri::Maybe;
            }
            if lm == Tri::No {
                ld = Phrase::default();
            }
            if rm == Tri::No {
                rd = Phrase::default();
            }
            let w = ld.width.max(rd.width);
            let (loff, roff) = (i32::from(w - ld.width), i32::from(w - rd.width));
            data.width = w;
            data.negate = false;
            match (ld.negate, rd.negate) {
                (true, true) => {
                    phrase_output(data, &ld, &rd, EMIT_BOTH, loff, roff);
                    data.negate = true;
                    Tri::Yes
                }
                (true, false) => {
                    phrase_output(data, &ld, &rd, EMIT_L, loff, roff);
                    data.negate = true;
                    Tri::Yes
                }
                (false, true) => {
                    phrase_output(data, &ld, &rd, EMIT_R, loff, roff);
                    data.negate = true;
                    Tri::Yes
                }
                (false, false) => phrase_output(data, &ld, &rd, EMIT_BOTH | EMIT_L | EMIT_R, loff, roff),
            }
        }
    }
}
