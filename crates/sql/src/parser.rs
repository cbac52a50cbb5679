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
        Err(Error::Syntax(e)) => match rewritten(sql) {
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

/// `INSERT INTO t (...) OVERRIDING SYSTEM VALUE ...` (pg_dump's and
/// COPY's form for identity columns GENERATED ALWAYS) travels as
/// `INSERT INTO t AS centum_overriding_system_value (...) ...`: sqlparser
/// does not know the clause, and the alias is otherwise unused.
pub(crate) const OVERRIDING_SYSTEM_VALUE: &str = "centum_overriding_system_value";

/// The name `ALTER SEQUENCE`, which sqlparser does not know either,
/// travels under: `PRAGMA centum_alter_sequence = '<its text>'`; the
/// session reads the text itself (`execution::ddl::alter_sequence`).
pub(crate) const ALTER_SEQUENCE: &str = "centum_alter_sequence";

/// `REFRESH MATERIALIZED VIEW ...`, which sqlparser does not know,
/// travels as `PRAGMA centum_refresh = '<its text>'`; the session reads
/// the text itself.
pub(crate) const REFRESH: &str = "centum_refresh";

/// `CREATE`, `ALTER` and `DROP PUBLICATION`, which sqlparser does not
/// know, travel as `PRAGMA centum_publication = '<its text>'`; the session
/// reads the text itself (`publications`).
pub(crate) const PUBLICATION: &str = "centum_publication";

/// `CREATE MATERIALIZED VIEW ... WITH NO DATA` travels with this option in
/// its `WITH (...)` list instead of the trailing clause.
pub(crate) const NO_DATA: &str = "centum_no_data";

/// `sql` with the PostgreSQL that sqlparser does not read written in a
/// form it does, or `None` if there is none. Only text that failed to
/// parse is looked at, so other statements pay nothing.
///
/// - A statement that is just `CHECKPOINT` becomes [`CHECKPOINT`]'s PRAGMA,
///   and `ALTER SEQUENCE ...` [`ALTER_SEQUENCE`]'s. `ALTER PROCEDURE` is
///   read as `ALTER FUNCTION`; `OVERRIDING SYSTEM VALUE` travels as
///   [`OVERRIDING_SYSTEM_VALUE`].
/// - Sequence options (`CREATE SEQUENCE`, and an identity column's
///   `AS IDENTITY (...)`) come in any order in PostgreSQL: pg_dump writes
///   `START WITH` before `INCREMENT BY`. sqlparser wants the order of its
///   grammar, so they are put in that order. An identity's `SEQUENCE NAME`
///   is dropped: Centum names an identity's sequence `table_column_seq`,
///   the name pg_dump read from it.
fn rewritten(sql: &str) -> Option<String> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let mut out = String::with_capacity(sql.len() + 32);
    let mut changed = false;
    let tokens = without_operator_syntax(tokens, &mut changed);
    let tokens = plain_lock_strengths(tokens, &mut changed);
    for piece in tokens.split(|t| *t == Token::SemiColon) {
        let words: Vec<&Token> = piece.iter().filter(|t| !is_space(t)).collect();
        if let [only] = words.as_slice() {
            if is_word(only, "checkpoint") {
                changed = true;
                out.push_str("PRAGMA ");
                out.push_str(CHECKPOINT);
                out.push(';');
                continue;
            }
        }
        // `COMMENT ON FUNCTION f(args) IS ...` (pg_dump's form): a comment
        // belongs to the routine's name, shared by its overloads.
        if words.len() > 4
            && is_word(words[0], "comment")
            && is_word(words[1], "on")
            && (is_word(words[2], "function") || is_word(words[2], "procedure"))
        {
            if let Some(open) = piece.iter().position(|t| *t == Token::LParen) {
                let mut depth = 0;
                let close = (open..piece.len()).find(|&i| {
                    match piece[i] {
                        Token::LParen => depth += 1,
                        Token::RParen => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                });
                if let Some(close) = close {
                    changed = true;
                    push_tokens(&mut out, &piece[..open]);
                    push_tokens(&mut out, &piece[close + 1..]);
                    out.push(';');
                    continue;
                }
            }
        }
        // `ALTER PROCEDURE` does what `ALTER FUNCTION` does (procedures are
        // functions to the catalog).
        if words.len() > 2 && is_word(words[0], "alter") && is_word(words[1], "procedure") {
            changed = true;
            let at = piece.iter().position(|t| is_word(t, "procedure")).unwrap_or(0);
            push_tokens(&mut out, &piece[..at]);
            out.push_str("FUNCTION");
            push_tokens(&mut out, &piece[at + 1..]);
            out.push(';');
            continue;
        }
        // Statements the session reads itself travel as a PRAGMA's text.
        let carried = if words.len() > 3 && is_word(words[0], "refresh") && is_word(words[1], "materialized")
        {
            Some(REFRESH)
        } else if words.len() > 2 && is_word(words[0], "alter") && is_word(words[1], "sequence") {
            Some(ALTER_SEQUENCE)
        } else if words.len() > 2
            && (is_word(words[0], "create") || is_word(words[0], "alter") || is_word(words[0], "drop"))
            && is_word(words[1], "publication")
        {
            Some(PUBLICATION)
        } else {
            None
        };
        if let Some(pragma) = carried {
            changed = true;
            let mut text = String::new();
            push_tokens(&mut text, piece);
            out.push_str(&format!("PRAGMA {pragma} = '{}';", text.trim().replace('\'', "''")));
            continue;
        }
        // `ALTER TABLE t RESET (p, ...)` travels as `SET (p = 'none', ...)`:
        // sqlparser reads only the SET form, and `none` lifts a limit.
        if words.len() > 4 && is_word(words[0], "alter") && is_word(words[1], "table") {
            if let Some(r) = (0..piece.len()).find(|&i| is_word(&piece[i], "reset")) {
                let open = next_word(piece, r).filter(|&k| piece[k] == Token::LParen);
                let close = open.and_then(|o| (o..piece.len()).find(|&k| piece[k] == Token::RParen));
                if let (Some(open), Some(close)) = (open, close) {
                    changed = true;
                    let names: Vec<String> = piece[open + 1..close]
                        .iter()
                        .filter(|t| !is_space(t) && **t != Token::Comma)
                        .map(|t| format!("{t} = 'none'"))
                        .collect();
                    push_tokens(&mut out, &piece[..r]);
                    out.push_str(&format!("SET ({})", names.join(", ")));
                    push_tokens(&mut out, &piece[close + 1..]);
                    out.push(';');
                    continue;
                }
            }
        }
        // `ALTER [MATERIALIZED] VIEW v RENAME TO w | OWNER TO r` is ALTER
        // TABLE's, which takes views.
        if words.len() > 2 && is_word(words[0], "alter") {
            let view = if is_word(words[1], "view") {
                Some(1)
            } else if is_word(words[1], "materialized") && is_word(words[2], "view") {
                Some(2)
            } else {
                None
            };
            if let Some(last) = view {
                changed = true;
                let at = piece.iter().position(|t| std::ptr::eq(t, words[last])).unwrap_or(0);
                out.push_str("ALTER TABLE");
                push_tokens(&mut out, &piece[at + 1..]);
                out.push(';');
                continue;
            }
        }
        if let Some(text) = view_trailer(piece, &words) {
            changed = true;
            out.push_str(&text);
            out.push(';');
            continue;
        }
        // `INSERT INTO name [(cols)] OVERRIDING SYSTEM VALUE`, no alias.
        if let Some(o) = (0..piece.len()).find(|&i| {
            is_word(&piece[i], "overriding")
                && next_word(piece, i).is_some_and(|k| is_word(&piece[k], "system"))
                && is_word(words[0], "insert")
        }) {
            let into = piece.iter().position(|t| is_word(t, "into")).unwrap_or(0);
            // The table name: the words and dots after INTO.
            let mut end = next_word(piece, into).unwrap_or(piece.len());
            while let Some(k) = next_word(piece, end).filter(|&k| piece[k] == Token::Period) {
                end = next_word(piece, k).unwrap_or(piece.len());
            }
            let value =
                next_word(piece, next_word(piece, o).unwrap_or(o)).filter(|&k| is_word(&piece[k], "value"));
            if let Some(value) = value {
                changed = true;
                push_tokens(&mut out, &piece[..=end]);
                out.push_str(&format!(" AS {OVERRIDING_SYSTEM_VALUE}"));
                push_tokens(&mut out, &piece[end + 1..o]);
                push_tokens(&mut out, &piece[value + 1..]);
                out.push(';');
                continue;
            }
        }
        // `CREATE TRIGGER ... EXECUTE FUNCTION f('a', 1)`: sqlparser reads
        // a function's arguments there as types, so each travels as a
        // quoted name holding its text.
        if let Some(text) = trigger_arguments(piece, &words) {
            changed = true;
            out.push_str(&text);
            out.push(';');
            continue;
        }
        // `PRIMARY KEY (cols) WITH (bucket_count = n)` (pg_dump's form of
        // a hash key, and `UNIQUE`'s alike).
        if let Some(text) = keys_with_buckets(piece) {
            changed = true;
            out.push_str(&text);
            out.push(';');
            continue;
        }
        let create_sequence = words.first().is_some_and(|t| is_word(t, "create"))
            && words.iter().take(3).any(|t| is_word(t, "sequence"));
        let mut rest = piece;
        if create_sequence {
            // The options follow the name: from the first option keyword on.
            let name = piece.iter().position(|t| is_word(t, "sequence")).unwrap_or(0);
            if let Some(first) = (name + 1..piece.len()).find(|&i| option_rank(piece, i).is_some()) {
                changed = true;
                push_tokens(&mut out, &piece[..first]);
                push_options(&mut out, &piece[first..]);
                rest = &[];
            }
        }
        // `... AS IDENTITY ( options )`.
        while let Some(at) = (0..rest.len()).find(|&i| is_word(&rest[i], "identity")) {
            let Some(open) = next_word(rest, at).filter(|&k| rest[k] == Token::LParen) else {
                push_tokens(&mut out, &rest[..=at]);
                rest = &rest[at + 1..];
                continue;
            };
            let Some(close) = (open..rest.len()).find(|&k| rest[k] == Token::RParen) else { break };
            changed = true;
            push_tokens(&mut out, &rest[..=open]);
            let inner = &rest[open + 1..close];
            // Without `SEQUENCE NAME name`.
            let named = (0..inner.len()).find(|&i| is_word(&inner[i], "sequence"));
            let kept: Vec<Token> = match named {
                Some(s) => {
                    let end = (s + 1..inner.len())
                        .find(|&i| option_rank(inner, i).is_some())
                        .unwrap_or(inner.len());
                    inner[..s].iter().chain(&inner[end..]).cloned().collect()
                }
                None => inner.to_vec(),
            };
            push_options(&mut out, &kept);
            push_tokens(&mut out, &rest[close..=close]);
            rest = &rest[close + 1..];
        }
        push_tokens(&mut out, rest);
        out.push(';');
    }
    changed.then_some(out)
}

use sqlparser::tokenizer::{Token, Tokenizer};

/// A CREATE TRIGGER whose function has arguments, with each argument
/// written as a quoted identifier holding its text (`'a'` and `a` as
/// `"a"`, `1` as `"1"`); `None` for any other statement.
fn trigger_arguments(piece: &[Token], words: &[&Token]) -> Option<String> {
    let create = words.first().is_some_and(|t| is_word(t, "create"));
    if !create || !words.iter().take(5).any(|t| is_word(t, "trigger")) {
        return None;
    }
    let exec = (0..piece.len()).find(|&i| {
        is_word(&piece[i], "execute")
            && next_word(piece, i)
                .is_some_and(|k| is_word(&piece[k], "function") || is_word(&piece[k], "procedure"))
    })?;
    let open = (exec..piece.len()).find(|&i| piece[i] == Token::LParen)?;
    let close = (open..piece.len()).find(|&i| piece[i] == Token::RParen)?;
    let mut args = Vec::new();
    for t in piece[open + 1..close].iter().filter(|t| !is_space(t) && **t != Token::Comma) {
        let text = match t {
            Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) => s.clone(),
            Token::Number(n, _) => n.clone(),
            Token::Word(w) if w.quote_style.is_some() => w.value.clone(),
            Token::Word(w) => w.value.to_lowercase(),
            _ => return None,
        };
        args.push(format!("\"{}\"", text.replace('"', "\"\"")));
    }
    if args.is_empty() {
        return None;
    }
    let mut out = String::new();
    push_tokens(&mut out, &piece[..=open]);
    out.push_str(&args.join(", "));
    push_tokens(&mut out, &piece[close..]);
    Some(out)
}

/// `tokens` with each `OPERATOR(pg_catalog.op)` written as `op` (the same
/// operator: there are no others), where sqlparser does not read it, as
/// before `ANY`.
fn without_operator_syntax(tokens: Vec<Token>, changed: &mut bool) -> Vec<Token> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        let close = (is_word(t, "operator") && tokens.get(i + 1) == Some(&Token::LParen))
            .then(|| (i + 2..tokens.len()).find(|&k| tokens[k] == Token::RParen))
            .flatten();
        if let Some(close) = close {
            // The operator is what follows the last period (or all of it).
            let inner = &tokens[i + 2..close];
            let op = inner.iter().rposition(|t| *t == Token::Period).map_or(inner, |p| &inner[p + 1..]);
            if !op.is_empty() && !op.iter().any(|t| matches!(t, Token::Word(_))) {
                *changed = true;
                out.extend(op.iter().cloned());
                i = close + 1;
                continue;
            }
        }
        out.push(t.clone());
        i += 1;
    }
    out
}

/// What a key constraint's `WITH (bucket_count = n)` travels as: the
/// index option `COMMENT 'bucket_count=n'`, which sqlparser reads after a
/// key's columns and PostgreSQL has no use for.
pub(crate) const KEY_BUCKETS: &str = "bucket_count=";

/// `piece` with each `PRIMARY KEY (...) WITH (bucket_count = n)` and
/// `UNIQUE (...) WITH (...)` written with [`KEY_BUCKETS`]; `None` if it
/// has none.
fn keys_with_buckets(piece: &[Token]) -> Option<String> {
    let mut out = String::new();
    let mut rest = piece;
    let mut found = false;
    while let Some(k) = (0..rest.len()).find(|&i| is_word(&rest[i], "key") || is_word(&rest[i], "unique")) {
        let open = next_word(rest, k).filter(|&o| rest[o] == Token::LParen);
        let close = open.and_then(|o| (o..rest.len()).find(|&c| rest[c] == Token::RParen));
        let with = close.and_then(|c| next_word(rest, c)).filter(|&w| is_word(&rest[w], "with"));
        let group = with.and_then(|w| next_word(rest, w)).filter(|&g| rest[g] == Token::LParen);
        let end = group.and_then(|g| (g..rest.len()).find(|&c| rest[c] == Token::RParen));
        let (Some(close), Some(group), Some(end)) = (close, group, end) else {
            push_tokens(&mut out, &rest[..=k]);
            rest = &rest[k + 1..];
            continue;
        };
        let inner: Vec<&Token> = rest[group + 1..end].iter().filter(|t| !is_space(t)).collect();
        let n = match inner.as_slice() {
            [name, Token::Eq, Token::Number(n, _)] if is_word(name, "bucket_count") => n.clone(),
            [name, Token::Eq, Token::SingleQuotedString(n)] if is_word(name, "bucket_count") => n.clone(),
            _ => return None,
        };
        found = true;
        push_tokens(&mut out, &rest[..=close]);
        out.push_str(&format!(" COMMENT '{KEY_BUCKETS}{}'", n.replace('\'', "")));
        rest = &rest[end + 1..];
    }
    push_tokens(&mut out, rest);
    found.then_some(out)
}

/// The words of `text` (its tokens other than white space), as written.
pub(crate) fn words(text: &str) -> Result<Vec<String>> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, text)
        .tokenize()
        .map_err(|e| Error::Syntax(syntax_message(&e.to_string())))?;
    Ok(tokens.iter().filter(|t| !is_space(t)).map(|t| t.to_string()).collect())
}

/// `text` read as a (dotted) object name.
pub(crate) fn object_name(text: &str) -> Result<sqlparser::ast::ObjectName> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| p.parse_object_name(false))
        .map_err(|e| Error::Syntax(syntax_message(&e.to_string())))
}

/// `CREATE ... VIEW ... AS query WITH [NO] DATA` (materialized views) or
/// `... WITH [CASCADED | LOCAL] CHECK OPTION` (views), with the trailing
/// clause written as an option in `WITH (...)` before `AS`, as sqlparser
/// reads it (and as PostgreSQL also takes `check_option`).
fn view_trailer(piece: &[Token], words: &[&Token]) -> Option<String> {
    if !words.first().is_some_and(|t| is_word(t, "create")) {
        return None;
    }
    let view = words.iter().take(5).position(|t| is_word(t, "view"))?;
    let n = words.len();
    let (cut, option) = if n > 3
        && is_word(words[n - 1], "data")
        && is_word(words[n - 2], "no")
        && is_word(words[n - 3], "with")
    {
        (3, Some(format!("{NO_DATA} = true")))
    } else if n > 2 && is_word(words[n - 1], "data") && is_word(words[n - 2], "with") {
        (2, None)
    } else if n > 3 && is_word(words[n - 1], "option") && is_word(words[n - 2], "check") {
        let kind = if is_word(words[n - 3], "with") {
            "cascaded".to_string()
        } else {
            words[n - 3].to_string().to_lowercase()
        };
        let cut = if is_word(words[n - 3], "with") { 3 } else { 4 };
        (cut, Some(format!("check_option = '{kind}'")))
    } else {
        return None;
    };
    // The first AS at depth 0 after the name ends the head.
    let mut depth = 0i32;
    let mut as_at = None;
    for (i, t) in words.iter().enumerate().skip(view + 1) {
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            t if depth == 0 && is_word(t, "as") => {
                as_at = Some(i);
                break;
            }
            _ => {}
        }
    }
    let as_at = as_at?;
    if words[view + 1..as_at].iter().any(|t| is_word(t, "with")) {
        return None;
    }
    let at = |w: &Token| piece.iter().position(|t| std::ptr::eq(t, w)).unwrap_or(0);
    let (head, tail) = (at(words[as_at]), at(words[n - cut]));
    let mut out = String::new();
    push_tokens(&mut out, &piece[..head]);
    if let Some(o) = option {
        out.push_str(&format!(" WITH ({o}) "));
    }
    push_tokens(&mut out, &piece[head..tail]);
    Some(out)
}

/// `tokens` with `FOR NO KEY UPDATE` written `FOR UPDATE` and `FOR KEY
/// SHARE` written `FOR SHARE`, which sqlparser does not read otherwise.
/// Centum locks a row the same way at every strength (see
/// `planner::locking`), so nothing is lost.
fn plain_lock_strengths(tokens: Vec<Token>, changed: &mut bool) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        out.push(tokens[i].clone());
        if is_word(&tokens[i], "for") {
            let next: Vec<usize> = (i + 1..tokens.len()).filter(|&k| !is_space(&tokens[k])).take(3).collect();
            let word = |n: usize, w: &str| next.get(n).is_some_and(|&k| is_word(&tokens[k], w));
            if word(0, "no") && word(1, "key") && word(2, "update") {
                *changed = true;
                out.push(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space));
                i = next[2];
                continue;
            }
            if word(0, "key") && word(1, "share") {
                *changed = true;
                out.push(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space));
                i = next[1];
                continue;
            }
        }
        i += 1;
    }
    out
}

fn is_space(t: &Token) -> bool {
    matches!(t, Token::Whitespace(_))
}

fn is_word(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

fn push_tokens(out: &mut String, tokens: &[Token]) {
    tokens.iter().for_each(|t| out.push_str(&t.to_string()));
}

/// The place in sqlparser's grammar of the sequence option that starts at
/// `tokens[i]`, if one does (`NO MINVALUE` ranks as `MINVALUE`).
fn option_rank(tokens: &[Token], i: usize) -> Option<usize> {
    const ORDER: [&str; 8] = ["as", "increment", "minvalue", "maxvalue", "start", "cache", "cycle", "owned"];
    let at = if is_word(&tokens[i], "no") { next_word(tokens, i)? } else { i };
    ORDER.iter().position(|w| is_word(&tokens[at], w))
}

/// Sequence options, each clause from its keyword to the next one's, in
/// sqlparser's order.
fn push_options(out: &mut String, tokens: &[Token]) {
    let mut starts: Vec<usize> = (0..tokens.len()).filter(|&i| option_rank(tokens, i).is_some()).collect();
    // `NO` starts a clause; the keyword after it does not.
    let after_no: Vec<usize> =
        starts.iter().filter(|&&p| is_word(&tokens[p], "no")).filter_map(|&p| next_word(tokens, p)).collect();
    starts.retain(|i| !after_no.contains(i));
    let Some(&first) = starts.first() else {
        push_tokens(out, tokens);
        return;
    };
    push_tokens(out, &tokens[..first]);
    let mut clauses: Vec<(usize, &[Token])> = starts
        .iter()
        .enumerate()
        .map(|(k, &a)| {
            (
                option_rank(tokens, a).unwrap_or(0),
                &tokens[a..starts.get(k + 1).copied().unwrap_or(tokens.len())],
            )
        })
        .collect();
    clauses.sort_by_key(|c| c.0);
    for (_, c) in clauses {
        out.push(' ');
        push_tokens(out, c);
    }
}

/// The position of the next token after `i` that is not whitespace.
fn next_word(tokens: &[Token], i: usize) -> Option<usize> {
    (i + 1..tokens.len()).find(|&k| !is_space(&tokens[k]))
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
