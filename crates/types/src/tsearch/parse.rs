//! Text input of `tsvector` and `tsquery`, as PostgreSQL's `tsvectorin`
//! and `tsqueryin` read it. The `tsquery` grammar is shared with
//! `to_tsquery`, which normalizes each operand through a configuration
//! (see [`parse_query`]'s `operand`).
//!
//! ```text
//!   tsvector  word[:pos[weight][,pos...]] ...      word: 'quoted' or bare,
//!                                                  \ escapes a character
//!   tsquery   or   := and ( '|' and )*
//!             and  := phr ( '&' phr )*
//!             phr  := un ( '<->' | '<N>' un )*
//!             un   := '!' un | '(' or ')' | word [':' [*ABCD]+]
//! ```
//!
//! Errors are 42601 `syntax error in tsvector/tsquery: "..."`, as in
//! PostgreSQL.

use super::{make_pos, Lexeme, QueryNode, TsQuery, TsVector, MAX_DISTANCE, MAX_POS};
use crate::error::TypeError;

/// 42601 for `input` of type `what`.
fn syntax(what: &str, input: &str) -> TypeError {
    TypeError::TextSearchSyntax(format!("syntax error in {what}: \"{input}\""))
}

/// Reads a word at `chars[*i..]`: quoted with `'` (a doubled `'` is one)
/// or bare up to white space or a character `stop` accepts; `\` escapes
/// the next character either way. `None` when there is no bare word or the
/// quotes do not close; `''` is the empty word.
fn word(chars: &[char], i: &mut usize, stop: impl Fn(char) -> bool) -> Option<String> {
    let mut out = String::new();
    if chars.get(*i) == Some(&'\'') {
        *i += 1;
        loop {
            match chars.get(*i) {
                None => return None,
                Some('\\') => {
                    out.push(*chars.get(*i + 1)?);
                    *i += 2;
                }
                Some('\'') if chars.get(*i + 1) == Some(&'\'') => {
                    out.push('\'');
                    *i += 2;
                }
                Some('\'') => {
                    *i += 1;
                    return Some(out);
                }
                Some(c) => {
                    out.push(*c);
                    *i += 1;
                }
            }
        }
    }
    while let Some(&c) = chars.get(*i) {
        if c.is_whitespace() || stop(c) {
            break;
        }
        if c == '\\' {
            out.push(*chars.get(*i + 1)?);
            *i += 2;
            continue;
        }
        out.push(c);
        *i += 1;
    }
    (!out.is_empty()).then_some(out)
}

/// `tsvectorin`.
pub fn parse_vector(input: &str) -> Result<TsVector, TypeError> {
    let chars: Vec<char> = input.chars().collect();
    let err = || syntax("tsvector", input);
    let mut i = 0;
    let mut lexemes = Vec::new();
    loop {
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        let w = word(&chars, &mut i, |c| c == ':').ok_or_else(err)?;
        let mut positions = Vec::new();
        if chars.get(i) == Some(&':') && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
            loop {
                let start = i;
                while chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
                    i += 1;
                }
                let digits: String = chars[start..i].iter().collect();
                let n: u64 = digits.parse().map_err(|_| err())?;
                if n == 0 {
                    return Err(TypeError::TextSearchSyntax(format!(
                        "wrong position info in tsvector: \"{input}\""
                    )));
                }
                let pos = n.min(u64::from(MAX_POS)) as u16;
                let weight = match chars.get(i).map(|c| c.to_ascii_uppercase()) {
                    Some('A') => 3,
                    Some('B') => 2,
                    Some('C') => 1,
                    Some('D') => 0,
                    _ => {
                        positions.push(make_pos(pos, 0));
                        if chars.get(i) == Some(&',') && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit())
                        {
                            i += 1;
                            continue;
                        }
                        break;
                    }
                };
                i += 1;
                positions.push(make_pos(pos, weight));
                if chars.get(i) == Some(&',') && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
                    i += 1;
                    continue;
                }
                break;
            }
        }
        if chars.get(i).is_some_and(|c| !c.is_whitespace()) {
            return Err(err());
        }
        lexemes.push(Lexeme { word: w, positions });
    }
    Ok(TsVector::from_lexemes(lexemes))
}

/// A parsed operand before stop words are taken out: `Stop` stands where
/// an operand had no lexemes (a stop word).
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A subtree.
    Node(QueryNode),
    /// A stop word, which takes a position but matches nothing.
    Stop,
}

/// The tree with stop words still in it.
#[derive(Debug)]
enum Raw {
    Leaf(Operand),
    Not(Box<Raw>),
    And(Box<Raw>, Box<Raw>),
    Or(Box<Raw>, Box<Raw>),
    Phrase(Box<Raw>, Box<Raw>, u16),
}

/// Token of the `tsquery` grammar.
#[derive(Debug, PartialEq)]
enum Tok {
    Word { word: String, weights: u8, prefix: bool },
    Not,
    And,
    Or,
    Phrase(u16),
    Open,
    Close,
}

/// Splits `tsquery` text into tokens.
fn tokens(input: &str) -> Result<Vec<Tok>, TypeError> {
    let chars: Vec<char> = input.chars().collect();
    let err = || syntax("tsquery", input);
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        match c {
            '!' => {
                out.push(Tok::Not);
                i += 1;
            }
            '&' => {
                out.push(Tok::And);
                i += 1;
            }
            '|' => {
                out.push(Tok::Or);
                i += 1;
            }
            '(' => {
                out.push(Tok::Open);
                i += 1;
            }
            ')' => {
                out.push(Tok::Close);
                i += 1;
            }
            '<' => {
                let close = chars[i..].iter().position(|c| *c == '>').ok_or_else(err)? + i;
                let inside: String = chars[i + 1..close].iter().collect();
                let d = if inside == "-" {
                    1
                } else {
                    let n: i64 = inside.trim().parse().map_err(|_| err())?;
                    if !(0..=i64::from(MAX_DISTANCE)).contains(&n) {
                        return Err(TypeError::InvalidParameter(format!(
                            "distance in phrase operator must be an integer value between zero and {MAX_DISTANCE} inclusive"
                        )));
                    }
                    n as u16
                };
                out.push(Tok::Phrase(d));
                i = close + 1;
            }
            _ => {
                let w = word(&chars, &mut i, |c| matches!(c, '!' | '&' | '|' | '(' | ')' | '<' | ':'))
                    .filter(|w| !w.is_empty())
                    .ok_or_else(err)?;
                let (mut weights, mut prefix) = (0u8, false);
                if chars.get(i) == Some(&':') {
                    i += 1;
                    while let Some(c) = chars.get(i) {
                        match c.to_ascii_uppercase() {
                            '*' => prefix = true,
                            'A' => weights |= 8,
                            'B' => weights |= 4,
                            'C' => weights |= 2,
                            'D' => weights |= 1,
                            _ => break,
                        }
                        i += 1;
                    }
                }
                out.push(Tok::Word { word: w, weights, prefix });
            }
        }
    }
    Ok(out)
}

/// Reads `tsquery` text; each operand goes through `operand` (its text,
/// weights and prefix flag), which gives its subtree or [`Operand::Stop`].
/// Stop words are then taken out as PostgreSQL's `cleanup_tsquery_stopwords`
/// does, widening the phrase distances around them. The empty query comes
/// back for text without operands or with only stop words.
pub fn parse_query(
    input: &str,
    operand: &mut dyn FnMut(&str, u8, bool) -> Result<Operand, TypeError>,
) -> Result<TsQuery, TypeError> {
    let toks = tokens(input)?;
    if toks.is_empty() {
        return Ok(TsQuery::default());
    }
    let mut p = Parser { toks: &toks, at: 0, input, operand, depth: 0 };
    let raw = p.or()?;
    if p.at != toks.len() {
        return Err(syntax("tsquery", input));
    }
    Ok(TsQuery::new(clean(raw).0))
}

/// `tsqueryin`: operands are taken as written.
pub fn parse_query_text(input: &str) -> Result<TsQuery, TypeError> {
    parse_query(input, &mut |w, weights, prefix| {
        Ok(Operand::Node(QueryNode::Lexeme { word: w.to_string(), weights, prefix }))
    })
}

struct Parser<'a> {
    toks: &'a [Tok],
    at: usize,
    input: &'a str,
    operand: &'a mut dyn FnMut(&str, u8, bool) -> Result<Operand, TypeError>,
    depth: u32,
}

impl Parser<'_> {
    fn err(&self) -> TypeError {
        syntax("tsquery", self.input)
    }

    fn or(&mut self) -> Result<Raw, TypeError> {
        let mut l = self.and()?;
        while self.toks.get(self.at) == Some(&Tok::Or) {
            self.at += 1;
            let r = self.and()?;
            l = Raw::Or(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn and(&mut self) -> Result<Raw, TypeError> {
        let mut l = self.phrase()?;
        while self.toks.get(self.at) == Some(&Tok::And) {
            self.at += 1;
            let r = self.phrase()?;
            l = Raw::And(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn phrase(&mut self) -> Result<Raw, TypeError> {
        let mut l = self.unary()?;
        while let Some(Tok::Phrase(d)) = self.toks.get(self.at) {
            let d = *d;
            self.at += 1;
            let r = self.unary()?;
            l = Raw::Phrase(Box::new(l), Box::new(r), d);
        }
        Ok(l)
    }

    fn unary(&mut self) -> Result<Raw, TypeError> {
        self.depth += 1;
        if self.depth > 1000 {
            return Err(TypeError::TooDeep);
        }
        let out = match self.toks.get(self.at) {
            Some(Tok::Not) => {
                self.at += 1;
                Raw::Not(Box::new(self.unary()?))
            }
            Some(Tok::Open) => {
                self.at += 1;
                let inner = self.or()?;
                if self.toks.get(self.at) != Some(&Tok::Close) {
                    return Err(self.err());
                }
                self.at += 1;
                inner
            }
            Some(Tok::Word { word, weights, prefix }) => {
                self.at += 1;
                Raw::Leaf((self.operand)(word, *weights, *prefix)?)
            }
            _ => return Err(self.err()),
        };
        self.depth -= 1;
        Ok(out)
    }
}

/// Takes the stop words out: the subtree, or `None` when only stop words
/// were there, with the positions stop words took at its left and right
/// edges (which a phrase operator around it adds to its distance).
fn clean(raw: Raw) -> (Option<QueryNode>, u16, u16) {
    match raw {
        Raw::Leaf(Operand::Node(n)) => (Some(n), 0, 0),
        Raw::Leaf(Operand::Stop) => (None, 0, 0),
        Raw::Not(q) => (clean(*q).0.map(|q| QueryNode::Not(Box::new(q))), 0, 0),
        Raw::And(l, r) => match (clean(*l).0, clean(*r).0) {
            (Some(l), Some(r)) => (Some(QueryNode::And(Box::new(l), Box::new(r))), 0, 0),
            (one, None) | (None, one) => (one, 0, 0),
        },
        Raw::Or(l, r) => match (clean(*l).0, clean(*r).0) {
            (Some(l), Some(r)) => (Some(QueryNode::Or(Box::new(l), Box::new(r))), 0, 0),
            (one, None) | (None, one) => (one, 0, 0),
        },
        Raw::Phrase(l, r, d) => {
            let (l, ll, lr) = clean(*l);
            let (r, rl, rr) = clean(*r);
            match (l, r) {
                (None, None) => (None, ll.saturating_add(d).saturating_add(rr), 0),
                (None, Some(r)) => (Some(r), ll.saturating_add(lr).saturating_add(d).saturating_add(rl), rr),
                (Some(l), None) => (Some(l), ll, lr.saturating_add(d).saturating_add(rl).saturating_add(rr)),
                (Some(l), Some(r)) => {
                    let d = d.saturating_add(lr).saturating_add(rl).min(MAX_DISTANCE);
                    (Some(QueryNode::Phrase(Box::new(l), Box::new(r), d)), ll, rr)
                }
            }
        }
    }
}
