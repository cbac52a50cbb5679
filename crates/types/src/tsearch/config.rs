//! The text search configurations `simple` and `english`: a tokenizer in
//! the manner of PostgreSQL's default parser, and the dictionaries each
//! configuration sends its tokens to.
//!
//! ```text
//!   token           example            simple       english
//!   word            Rats, café         lower case   stop word? else Snowball stem
//!   hyphenated      fat-cat            the whole word, then each part, each a word
//!   word + digits   abc123, 2nd        lower case   lower case
//!   number          42, -5, 3.14       as written   as written
//!   dotted          e.g, example.com   lower case   lower case
//! ```
//!
//! Words are runs of letters and digits; everything else separates them.
//! Each token takes the next position, a stop word too, so phrases keep
//! their distances. Known differences from PostgreSQL's parser: e-mail
//! addresses, URLs, file paths, XML tags, scientific notation (`1e5`) and
//! some mixed number forms are split into ordinary tokens instead of being
//! recognised as such.

use std::sync::OnceLock;

use super::parse::{parse_query, Operand};
use super::{make_pos, Lexeme, QueryNode, TsQuery, TsVector, MAX_POS};
use crate::error::TypeError;

/// PostgreSQL's `english.stop`, the Snowball English stop words.
const ENGLISH_STOP: &[&str] = &[
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "her",
    "hers",
    "herself",
    "it",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "can",
    "will",
    "just",
    "don",
    "should",
    "now",
];

/// Words longer than this (in bytes) are not indexed, as in PostgreSQL.
const MAX_WORD_BYTES: usize = 2047;

/// A text search configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Config {
    /// `simple`: every token lower-cased, no stop words, no stemming.
    Simple,
    /// `english`: stop words dropped, words stemmed with Snowball English.
    English,
}

impl Config {
    /// The configuration a `regconfig` name names: `english`,
    /// `pg_catalog.simple`, `"English"` after case folding; 42704 for any
    /// other, with PostgreSQL's message.
    pub fn from_name(name: &str) -> Result<Config, TypeError> {
        let folded: String = name
            .trim()
            .split('.')
            .map(|p| if p.starts_with('"') { p.trim_matches('"').to_string() } else { p.to_lowercase() })
            .collect::<Vec<_>>()
            .join(".");
        match folded.as_str() {
            "simple" | "pg_catalog.simple" => Ok(Config::Simple),
            "english" | "pg_catalog.english" => Ok(Config::English),
            _ => Err(TypeError::UndefinedObject(format!(
                "text search configuration \"{}\" does not exist",
                name.trim()
            ))),
        }
    }

    /// The name as `regconfig` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Config::Simple => "simple",
            Config::English => "english",
        }
    }

    /// The lexeme a token becomes; `None` for a stop word.
    fn lexize(self, token: &Token) -> Option<String> {
        let lower = token.text.to_lowercase();
        match self {
            Config::Simple => Some(lower),
            Config::English if token.stem => {
                if ENGLISH_STOP.contains(&lower.as_str()) {
                    return None;
                }
                Some(stemmer().stem(&lower).into_owned())
            }
            Config::English => Some(lower),
        }
    }

    /// The lexemes of `text` with their positions (from 1); stop words take
    /// a position and give no lexeme.
    fn lexemes(self, text: &str) -> Vec<(u16, String)> {
        let mut out = Vec::new();
        for (i, t) in tokenize(text).iter().enumerate() {
            let pos = (i + 1).min(usize::from(MAX_POS)) as u16;
            if t.text.len() > MAX_WORD_BYTES {
                continue;
            }
            if let Some(l) = self.lexize(t) {
                if !l.is_empty() {
                    out.push((pos, l));
                }
            }
        }
        out
    }

    /// `to_tsvector(config, text)`.
    pub fn to_tsvector(self, text: &str) -> TsVector {
        let lexemes = self
            .lexemes(text)
            .into_iter()
            .map(|(pos, word)| Lexeme { word, positions: vec![make_pos(pos, 0)] })
            .collect();
        TsVector::from_lexemes(lexemes)
    }

    /// An operand of `to_tsquery`: its lexemes, joined by phrase operators
    /// at their distances; [`Operand::Stop`] for none.
    fn operand(self, text: &str, weights: u8, prefix: bool) -> Operand {
        let mut node: Option<QueryNode> = None;
        let mut last = 0u16;
        for (pos, word) in self.lexemes(text) {
            let leaf = QueryNode::Lexeme { word, weights, prefix };
            node = Some(match node {
                None => leaf,
                Some(n) => QueryNode::Phrase(Box::new(n), Box::new(leaf), pos - last),
            });
            last = pos;
        }
        node.map_or(Operand::Stop, Operand::Node)
    }

    /// `to_tsquery(config, text)`: the `tsquery` grammar, each operand
    /// normalized by the configuration.
    pub fn to_tsquery(self, text: &str) -> Result<TsQuery, TypeError> {
        parse_query(text, &mut |w, weights, prefix| Ok(self.operand(w, weights, prefix)))
    }

    /// `plainto_tsquery(config, text)`: the lexemes ANDed.
    pub fn plainto_tsquery(self, text: &str) -> TsQuery {
        let node = self
            .lexemes(text)
            .into_iter()
            .map(|(_, w)| QueryNode::word(w))
            .reduce(|a, b| QueryNode::And(Box::new(a), Box::new(b)));
        TsQuery::new(node)
    }

    /// `phraseto_tsquery(config, text)`: the lexemes as a phrase, at their
    /// distances (stop words widen them).
    pub fn phraseto_tsquery(self, text: &str) -> TsQuery {
        match self.operand(text, 0, false) {
            Operand::Node(n) => TsQuery::new(Some(n)),
            Operand::Stop => TsQuery::default(),
        }
    }

    /// `websearch_to_tsquery(config, text)`: words are ANDed, `"quoted
    /// text"` is a phrase, `or` between two terms is `|`, and `-` before a
    /// term negates it; nothing in the text is a syntax error.
    pub fn websearch_to_tsquery(self, text: &str) -> TsQuery {
        // Terms: (times negated, operand); `None` marks an OR.
        let mut terms: Vec<Option<(u32, QueryNode)>> = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if !(c == '"' || c == '-' || c.is_alphanumeric()) {
                i += 1;
                continue;
            }
            // `-` negates the next term, whatever stands between them
            // (`cat - dog`, `-!dog`); each `-` once more (`- - cat`).
            let mut negs = 0;
            while chars.get(i) == Some(&'-') {
                negs += 1;
                i += 1;
                while chars.get(i).is_some_and(|c| !(*c == '"' || *c == '-' || c.is_alphanumeric())) {
                    i += 1;
                }
            }
            if i >= chars.len() {
                continue;
            }
            let part: String;
            if chars.get(i) == Some(&'"') {
                let end = chars[i + 1..].iter().position(|c| *c == '"').map_or(chars.len(), |p| i + 1 + p);
                part = chars[i + 1..end].iter().collect();
                i = end + 1;
            } else {
                let end = chars[i..]
                    .iter()
                    .position(|c| c.is_whitespace() || *c == '"')
                    .map_or(chars.len(), |p| i + p);
                part = chars[i..end].iter().collect();
                i = end;
                if negs == 0 && part.eq_ignore_ascii_case("or") {
                    terms.push(None);
                    continue;
                }
            }
            if let Operand::Node(n) = self.operand(&part, 0, false) {
                terms.push(Some((negs, n)));
            }
        }
        // The terms are ANDed, and OR splits the chain: `a b or c d` is
        // `a & b | c & d`, as PostgreSQL reads its own rewriting.
        let mut chains: Vec<Vec<QueryNode>> = vec![vec![]];
        for t in terms {
            match t {
                None => {
                    if chains.last().is_some_and(|c| !c.is_empty()) {
                        chains.push(vec![]);
                    }
                }
                Some((negs, mut n)) => {
                    for _ in 0..negs {
                        n = QueryNode::Not(Box::new(n));
                    }
                    chains.last_mut().expect("one chain").push(n);
                }
            }
        }
        let and = |c: Vec<QueryNode>| c.into_iter().reduce(|a, b| QueryNode::And(Box::new(a), Box::new(b)));
        TsQuery::new(
            chains.into_iter().filter_map(and).reduce(|a, b| QueryNode::Or(Box::new(a), Box::new(b))),
        )
    }
}

/// The Snowball English stemmer, built once.
fn stemmer() -> &'static rust_stemmers::Stemmer {
    static STEMMER: OnceLock<rust_stemmers::Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English))
}

/// One token of text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// The token as written.
    pub text: String,
    /// Whether a stemming dictionary takes it: letters only (a hyphenated
    /// word of letter-only parts too).
    pub stem: bool,
}

/// Splits text into tokens as PostgreSQL's default parser does for
/// ordinary text: words of letters and digits, numbers (signed, decimal,
/// dotted versions), hyphenated words (the whole word, then its parts) and
/// dotted names; all else separates them.
pub fn tokenize(text: &str) -> Vec<Token> {
    let c: Vec<char> = text.chars().collect();
    let alnum = |i: usize| c.get(i).is_some_and(|ch| ch.is_alphanumeric());
    let digit = |i: usize| c.get(i).is_some_and(|ch| ch.is_ascii_digit());
    let letter = |i: usize| c.get(i).is_some_and(|ch| ch.is_alphabetic());
    let run = |mut i: usize, f: &dyn Fn(usize) -> bool| {
        while f(i) {
            i += 1;
        }
        i
    };
    let text_of = |a: usize, b: usize| c[a..b].iter().collect::<String>();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        // A signed number.
        if matches!(c[i], '-' | '+') && digit(i + 1) && !letter(run(i + 1, &digit)) {
            let start = i;
            i = number_end(&c, i + 1);
            out.push(Token { text: text_of(start, i), stem: false });
            continue;
        }
        if !alnum(i) {
            i += 1;
            continue;
        }
        let start = i;
        let end = run(i, &alnum);
        let all_digits = c[start..end].iter().all(|ch| ch.is_ascii_digit());
        if all_digits {
            i = number_end(&c, start);
            out.push(Token { text: text_of(start, i), stem: false });
            continue;
        }
        // Hyphenated: parts that each start with a letter.
        let mut parts = vec![(start, end)];
        let mut j = end;
        while c.get(j) == Some(&'-') && letter(j + 1) {
            let e = run(j + 1, &alnum);
            parts.push((j + 1, e));
            j = e;
        }
        let has_digit = |a: usize, b: usize| c[a..b].iter().any(|ch| !ch.is_alphabetic());
        if parts.len() > 1 {
            out.push(Token { text: text_of(start, j), stem: only_hyphens(&c[start..j]) });
            for (a, b) in parts {
                out.push(Token { text: text_of(a, b), stem: !has_digit(a, b) });
            }
            i = j;
            continue;
        }
        // Dotted: a host name, a file name, an abbreviation (e.g).
        let mut j = end;
        while c.get(j) == Some(&'.') && alnum(j + 1) {
            j = run(j + 1, &alnum);
        }
        if j > end {
            out.push(Token { text: text_of(start, j), stem: false });
            i = j;
            continue;
        }
        out.push(Token { text: text_of(start, end), stem: !has_digit(start, end) });
        i = end;
    }
    out
}

/// Whether the non-letters of a hyphenated word are all hyphens.
fn only_hyphens(chars: &[char]) -> bool {
    chars.iter().all(|c| c.is_alphabetic() || *c == '-')
}

/// The end of a number starting with digits at `i`: digits, then any
/// `.digits` groups (a decimal, or a version such as 3.14.15).
fn number_end(c: &[char], mut i: usize) -> usize {
    while c.get(i).is_some_and(|ch| ch.is_ascii_digit()) {
        i += 1;
    }
    while c.get(i) == Some(&'.') && c.get(i + 1).is_some_and(|ch| ch.is_ascii_digit()) {
        i += 1;
        while c.get(i).is_some_and(|ch| ch.is_ascii_digit()) {
            i += 1;
        }
    }
    i
}
