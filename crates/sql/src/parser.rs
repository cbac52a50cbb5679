//! Parsing: PostgreSQL-dialect SQL text to statements, via `sqlparser`.
//!
//! Every statement is also measured here, before anything else walks it:
//! how deeply it nests decides whether the rest of the pipeline can handle
//! it on this thread's stack (see the `stack` module). A statement too deep
//! fails with 54001 and is freed on a stack segment big enough for it.

use crate::error::{Error, Result};
use crate::stack;
use sqlparser::ast::{Expr, Query, SetExpr, Statement, Visit, Visitor};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser, ParserError};
use std::ops::ControlFlow;

/// Parses `sql` into statements; errors read as PostgreSQL's (42601).
pub fn parse(sql: &str) -> Result<Vec<Statement>> {
    match parse_with(sql, |p| p.parse_statements()) {
        Err(Error::Syntax(e)) => match with_checkpoints(sql) {
            Some(rewritten) => parse_with(&rewritten, |p| p.parse_statements()),
            None => Err(Error::Syntax(e)),
        },
        r => r,
    }
}

/// The name PostgreSQL's `CHECKPOINT` travels under: sqlparser does not
/// know the statement, so it is carried as what sqlparser reads
/// `PRAGMA centum_checkpoint` as, which no PostgreSQL statement is.
pub(crate) const CHECKPOINT: &str = "centum_checkpoint";

/// `sql` with each statement that is just `CHECKPOINT` written as
/// [`CHECKPOINT`]'s PRAGMA; `None` if it has none. Only text that failed
/// to parse is looked at, so other statements pay nothing.
fn with_checkpoints(sql: &str) -> Option<String> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let mut out = String::with_capacity(sql.len() + 32);
    let mut found = false;
    for piece in tokens.split(|t| *t == Token::SemiColon) {
        let words: Vec<&Token> = piece.iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
        match words.as_slice() {
            [Token::Word(w)] if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("checkpoint") => {
                found = true;
                out.push_str("PRAGMA ");
                out.push_str(CHECKPOINT);
            }
            _ => piece.iter().for_each(|t| out.push_str(&t.to_string())),
        }
        out.push(';');
    }
    found.then_some(out)
}

/// Parses `text` as one expression (a stored default or CHECK, a PL/pgSQL
/// expression): nothing may follow it.
pub fn parse_expression(text: &str) -> Result<Expr> {
    parse_with(text, |p| {
        let e = p.parse_expr()?;
        p.expect_token(&sqlparser::tokenizer::Token::EOF)?;
        Ok(e)
    })
}

/// Something a parse can produce, measured for depth.
trait Shaped: Sized {
    fn visit_depth(&self, v: &mut Depth) -> ControlFlow<()>;
}

impl Shaped for Vec<Statement> {
    fn visit_depth(&self, v: &mut Depth) -> ControlFlow<()> {
        self.iter().try_for_each(|s| s.visit(v))
    }
}

impl Shaped for Expr {
    fn visit_depth(&self, v: &mut Depth) -> ControlFlow<()> {
        self.visit(v)
    }
}

/// Parses with sqlparser's recursion limit set from the stack left, then
/// measures what came back.
fn parse_with<T: Shaped>(
    sql: &str,
    f: impl FnOnce(&mut Parser) -> std::result::Result<T, ParserError>,
) -> Result<T> {
    let room = stack::remaining();
    let limit = stack::parser_limit();
    // The text bounds the depth of anything built from it (each level
    // takes at least two characters, as in `1+1+...`), and freeing a
    // parse, whole or abandoned half-way, recurses that deep: do it where
    // there is room.
    stack::with_room(sql.len() / 2, stack::DROP_FRAME, || {
        let dialect = PostgreSqlDialect {};
        let parsed =
            Parser::new(&dialect).with_recursion_limit(limit).try_with_sql(sql).and_then(|mut p| f(&mut p));
        let parsed = match parsed {
            Ok(p) => p,
            Err(ParserError::RecursionLimitExceeded) => {
                return Err(Error::StackDepth("statement nested too deeply"))
            }
            // Some of sqlparser's rules try an alternative when a nested
            // rule fails, and so report a syntax error for what was the
            // recursion limit (a level of nesting may take several of its
            // recursion steps, hence the margin).
            Err(_) if nesting(sql) >= limit / 4 => {
                return Err(Error::StackDepth("statement nested too deeply"))
            }
            Err(e) => return Err(Error::Syntax(syntax_message(&e.to_string()))),
        };
        let mut depth = Depth { now: 0, max: 0, queries: vec![] };
        let fits = parsed.visit_depth(&mut depth).is_continue()
            && depth.max.saturating_mul(stack::RAW_FRAME).saturating_add(2 * stack::RESERVE) <= room;
        if !fits {
            drop(parsed);
            return Err(Error::StackDepth("expression nested too deeply"));
        }
        Ok(parsed)
    })
}

/// About how deeply the text nests, read from its tokens: open
/// parentheses and CASEs, plus the longest run of prefix operators (`NOT`,
/// `-`, `+`, `~`) at that point. Only consulted after a failed parse.
fn nesting(sql: &str) -> usize {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, Tokenizer};
    let Ok(tokens) = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize() else { return 0 };
    let (mut open, mut run, mut deepest) = (0usize, 0usize, 0usize);
    for t in tokens {
        match t {
            Token::Whitespace(_) => continue,
            Token::LParen => open += 1,
            Token::RParen => open = open.saturating_sub(1),
            Token::Word(w) if w.keyword == Keyword::CASE => open += 1,
            Token::Word(w) if w.keyword == Keyword::END => open = open.saturating_sub(1),
            Token::Word(w) if w.keyword == Keyword::NOT => run += 1,
            Token::Minus | Token::Plus | Token::Tilde => run += 1,
            _ => run = 0,
        }
        deepest = deepest.max(open + run);
    }
    deepest
}

/// The longest path through nested set operations of a query body,
/// followed without recursion.
fn set_operations(body: &SetExpr) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(body, 0)];
    while let Some((e, d)) = todo.pop() {
        match e {
            SetExpr::SetOperation { left, right, .. } => {
                todo.push((left, d + 1));
                todo.push((right, d + 1));
            }
            _ => deepest = deepest.max(d),
        }
    }
    deepest
}

/// Walks an AST for its deepest nesting of expressions and queries; stops
/// (as too deep) when the walk itself runs short of stack.
struct Depth {
    now: usize,
    max: usize,
    /// What each query being walked added to `now`: one, plus the length
    /// of its chain of set operations (`a UNION b UNION c ...` nests to the
    /// left without any expression or query between the levels).
    queries: Vec<usize>,
}

impl Depth {
    fn enter(&mut self, levels: usize) -> ControlFlow<()> {
        if stack::remaining() < stack::RESERVE {
            return ControlFlow::Break(());
        }
        self.now += levels;
        self.max = self.max.max(self.now);
        ControlFlow::Continue(())
    }
}

impl Visitor for Depth {
    type Break = ();

    fn pre_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
        self.enter(1)
    }

    fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
        self.now -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        let levels = 1 + set_operations(&q.body);
        self.queries.push(levels);
        self.enter(levels)
    }

    fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
        self.now -= self.queries.pop().unwrap_or(1);
        ControlFlow::Continue(())
    }
}

/// Rewrites sqlparser's message into PostgreSQL's `syntax error at or near
/// "token"`, keeping the parser's expectation as a hint.
fn syntax_message(m: &str) -> String {
    let m = m.strip_prefix("sql parser error: ").unwrap_or(m);
    if let Some(at) = m.find(", found: ") {
        let rest = &m[at + 9..];
        let token = rest.split(" at Line:").next().unwrap_or(rest).trim();
        if token == "EOF" {
            return "syntax error at end of input".into();
        }
        return format!("syntax error at or near \"{token}\"");
    }
    format!("syntax error: {m}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_name_the_token() {
        let e = parse("SELEC 1").unwrap_err();
        assert_eq!(e.sqlstate(), "42601");
        assert_eq!(e.to_string(), "syntax error at or near \"SELEC\"");
        let e = parse("SELECT (1").unwrap_err();
        assert_eq!(e.to_string(), "syntax error at end of input");
    }
}
