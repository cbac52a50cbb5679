//! The body of a PL/pgSQL routine: tokens to a statement tree.
//!
//! The body is tokenized once with `sqlparser`'s PostgreSQL tokenizer, so
//! strings, dollar quotes, comments and operators read exactly as they do
//! in SQL. The parser here only recognises the procedural skeleton (blocks,
//! IF, loops, RETURN, RAISE, ...); every expression and embedded SQL
//! statement stays a range of tokens, which the compiler rewrites (variables
//! become `$n` parameters) and hands to the SQL planner.
//!
//! Each token keeps its byte span in the body and its line, so the compiler
//! can cut the original text and every error can name the line.

use crate::error::{Error, Result};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};
use std::ops::Range;

/// One token of the body.
#[derive(Clone, Debug)]
pub(crate) struct Tok {
    pub t: Token,
    /// Byte span in the body.
    pub start: usize,
    pub end: usize,
    /// 1-based line in the body.
    pub line: usize,
}

/// Tokens of `src` without whitespace and comments. `1..10` reads as
/// `1 .. 10` (the SQL tokenizer would see the numbers `1.` and `.10`).
pub(crate) fn lex(src: &str) -> Result<Vec<Tok>> {
    let toks = Tokenizer::new(&PostgreSqlDialect {}, src)
        .tokenize_with_location()
        .map_err(|e| Error::Syntax(e.message.to_string()))?;
    let mut line_starts = vec![0usize];
    for (i, b) in src.bytes().enumerate() {
        if b == b'\n' {
            line_starts.push(i + 1);
        }
    }
    let offset = |line: u64, col: u64| -> usize {
        let Some(&ls) = line_starts.get((line as usize).saturating_sub(1)) else { return src.len() };
        let rest = &src[ls..];
        rest.char_indices().nth((col as usize).saturating_sub(1)).map_or(src.len(), |(i, _)| ls + i)
    };
    let mut out: Vec<Tok> = Vec::with_capacity(toks.len());
    for t in toks {
        if matches!(t.token, Token::Whitespace(_) | Token::EOF) {
            continue;
        }
        let start = offset(t.span.start.line, t.span.start.column);
        let end = offset(t.span.end.line, t.span.end.column).max(start);
        let line = t.span.start.line as usize;
        match &t.token {
            Token::Number(n, _) if n.starts_with('.') && out.last().is_some_and(|p| p.t == Token::Period) => {
                out.push(Tok { t: Token::Period, start, end: start + 1, line });
                out.push(Tok { t: Token::Number(n[1..].to_string(), false), start: start + 1, end, line });
            }
            Token::Number(n, _) if n.len() > 1 && n.ends_with('.') => {
                out.push(Tok {
                    t: Token::Number(n[..n.len() - 1].to_string(), false),
                    start,
                    end: end - 1,
                    line,
                });
                out.push(Tok { t: Token::Period, start: end - 1, end, line });
            }
            _ => out.push(Tok { t: t.token, start, end, line }),
        }
    }
    Ok(out)
}

/// A range of token indices: an expression or SQL text still to compile.
pub(crate) type Span = Range<usize>;

/// A variable declared in a DECLARE section.
#[derive(Debug)]
pub(crate) struct Decl {
    pub name: String,
    pub constant: bool,
    pub not_null: bool,
    /// The type's tokens.
    pub ty: Span,
    /// The default's tokens.
    pub default: Option<Span>,
    pub line: usize,
}

/// `[<<label>>] [DECLARE ...] BEGIN ... [EXCEPTION WHEN ...] END`.
#[derive(Debug)]
pub(crate) struct Block {
    pub label: Option<String>,
    pub decls: Vec<Decl>,
    pub body: Vec<Stmt>,
    pub handlers: Vec<Handler>,
}

/// `WHEN condition [OR condition ...] THEN statements` of an EXCEPTION
/// section. A condition is a name (`unique_violation`, `others`) or
/// `SQLSTATE 'code'`, kept as `sqlstate:code`.
#[derive(Debug)]
pub(crate) struct Handler {
    pub conditions: Vec<String>,
    pub body: Vec<Stmt>,
    pub line: usize,
}

/// Dynamic SQL: `EXECUTE command [INTO [STRICT] targets] [USING value,
/// ...]`, the command a text expression evaluated at each run.
#[derive(Debug)]
pub(crate) struct Dynamic {
    pub command: Span,
    /// The targets, and whether STRICT.
    pub into: Option<(Span, bool)>,
    /// The values of the command's `$1`, `$2`, ...
    pub using: Vec<Span>,
}

/// A statement and its line.
#[derive(Debug)]
pub(crate) struct Stmt {
    pub line: usize,
    pub kind: Kind,
}

/// RAISE levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    Exception,
    Notice,
    Quiet,
}

/// The procedural statements.
#[derive(Debug)]
pub(crate) enum Kind {
    Block(Block),
    Assign {
        target: Span,
        value: Span,
    },
    If {
        branches: Vec<(Span, Vec<Stmt>)>,
        otherwise: Vec<Stmt>,
    },
    /// `CASE [operand] WHEN ... THEN ... [ELSE ...] END CASE`: with an
    /// operand each WHEN holds a list of values to compare it with,
    /// without one a condition. No ELSE: an unmatched CASE fails (20000).
    Case {
        operand: Option<Span>,
        branches: Vec<(Span, Vec<Stmt>)>,
        otherwise: Option<Vec<Stmt>>,
    },
    Loop {
        label: Option<String>,
        body: Vec<Stmt>,
    },
    While {
        label: Option<String>,
        cond: Span,
        body: Vec<Stmt>,
    },
    ForRange {
        label: Option<String>,
        var: String,
        reverse: bool,
        lo: Span,
        hi: Span,
        step: Option<Span>,
        body: Vec<Stmt>,
    },
    ForQuery {
        label: Option<String>,
        targets: Span,
        query: Span,
        body: Vec<Stmt>,
    },
    ForEach {
        label: Option<String>,
        target: Span,
        array: Span,
        body: Vec<Stmt>,
    },
    /// `FOR targets IN EXECUTE command [USING ...] LOOP`.
    ForExecute {
        label: Option<String>,
        targets: Span,
        query: Dynamic,
        body: Vec<Stmt>,
    },
    /// EXECUTE.
    Execute(Dynamic),
    /// RETURN QUERY EXECUTE.
    ReturnQueryExecute(Dynamic),
    /// EXIT (`cont` false) or CONTINUE.
    Exit {
        label: Option<String>,
        when: Option<Span>,
        cont: bool,
    },
    Return(Option<Span>),
    ReturnQuery(Span),
    ReturnNext(Option<Span>),
    Raise {
        level: Level,
        condition: Option<String>,
        format: Option<String>,
        args: Vec<Span>,
        options: Vec<(String, Span)>,
    },
    /// GET DIAGNOSTICS target = item, ...
    Diagnostics(Vec<(Span, String)>),
    /// An SQL statement (`perform`: PERFORM, its result discarded).
    Sql {
        text: Span,
        perform: bool,
    },
    Null,
    /// RAISE alone in an exception handler: the error it caught again.
    Reraise,
}

impl Kind {
    /// What PostgreSQL calls the statement in an error's context line.
    pub fn describe(&self) -> &'static str {
        match self {
            Kind::Block(_) => "statement block",
            Kind::Assign { .. } => "assignment",
            Kind::If { .. } => "IF",
            Kind::Case { .. } => "CASE",
            Kind::Loop { .. } => "LOOP",
            Kind::While { .. } => "WHILE",
            Kind::ForRange { .. } => "FOR with integer loop variable",
            Kind::ForQuery { .. } => "FOR over SELECT rows",
            Kind::ForEach { .. } => "FOREACH over array",
            Kind::ForExecute { .. } => "FOR over EXECUTE statement",
            Kind::Execute(_) => "EXECUTE",
            Kind::ReturnQueryExecute(_) => "RETURN QUERY",
            Kind::Exit { cont: false, .. } => "EXIT",
            Kind::Exit { cont: true, .. } => "CONTINUE",
            Kind::Return(_) => "RETURN",
            Kind::ReturnQuery(_) => "RETURN QUERY",
            Kind::ReturnNext(_) => "RETURN NEXT",
            Kind::Raise { .. } => "RAISE",
            Kind::Diagnostics(_) => "GET DIAGNOSTICS",
            Kind::Sql { perform: true, .. } => "PERFORM",
            Kind::Sql { .. } => "SQL statement",
            Kind::Null => "NULL",
            Kind::Reraise => "RAISE",
        }
    }
}

/// Parses a whole body: one block, optionally followed by `;`.
pub(crate) fn parse(toks: &[Tok]) -> Result<Block> {
    let mut p = Parser { toks, at: 0, handlers: 0 };
    let block = p.block(None)?;
    p.eat(&Token::SemiColon);
    if p.at < toks.len() {
        return Err(p.syntax());
    }
    Ok(block)
}

struct Parser<'t> {
    toks: &'t [Tok],
    at: usize,
    /// Exception handlers the parser is inside (RAISE alone re-raises).
    handlers: usize,
}

/// Whether `t` is the unquoted keyword `kw` (any case).
pub(crate) fn is_word(t: &Token, kw: &str) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw))
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.at).map(|t| &t.t)
    }

    fn peek_at(&self, n: usize) -> Option<&Token> {
        self.toks.get(self.at + n).map(|t| &t.t)
    }

    fn line(&self) -> usize {
        self.toks.get(self.at).or(self.toks.last()).map_or(1, |t| t.line)
    }

    fn kw(&self, kw: &str) -> bool {
        self.peek().is_some_and(|t| is_word(t, kw))
    }

    fn kw_at(&self, n: usize, kw: &str) -> bool {
        self.peek_at(n).is_some_and(|t| is_word(t, kw))
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.kw(kw) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn eat(&mut self, t: &Token) -> bool {
        if self.peek() == Some(t) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn syntax(&self) -> Error {
        match self.toks.get(self.at) {
            Some(t) => Error::Syntax(format!("syntax error at or near \"{}\"", t.t)),
            None => Error::Syntax("syntax error at end of input".into()),
        }
    }

    fn expect_kw(&mut self, kw: &str) -> Result<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.syntax())
        }
    }

    fn expect(&mut self, t: &Token) -> Result<()> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(self.syntax())
        }
    }

    fn name(&mut self) -> Result<String> {
        match self.peek() {
            Some(Token::Word(w)) => {
                let n = if w.quote_style.is_some() { w.value.clone() } else { w.value.to_lowercase() };
                self.at += 1;
                Ok(n)
            }
            _ => Err(self.syntax()),
        }
    }

    /// Tokens from here up to (not including) the first token at nesting
    /// depth 0 for which `stop` holds; parentheses, brackets and CASE ... END
    /// nest.
    fn until(&mut self, stop: impl Fn(&Parser, usize) -> bool) -> Result<Span> {
        let start = self.at;
        let (mut depth, mut case) = (0i32, 0i32);
        while self.at < self.toks.len() {
            let t = &self.toks[self.at].t;
            if depth == 0 && case == 0 && stop(self, self.at) {
                if self.at == start {
                    return Err(self.syntax());
                }
                return Ok(start..self.at);
            }
            match t {
                Token::LParen | Token::LBracket => depth += 1,
                Token::RParen | Token::RBracket => depth -= 1,
                Token::SemiColon if depth <= 0 => return Err(self.syntax()),
                _ if is_word(t, "case") => case += 1,
                _ if is_word(t, "end") && case > 0 => case -= 1,
                _ => {}
            }
            self.at += 1;
        }
        Err(self.syntax())
    }

    /// Tokens up to the next `;` at depth 0, which is consumed.
    fn through_semicolon(&mut self) -> Result<Span> {
        let s = self.until(|p, i| p.toks[i].t == Token::SemiColon)?;
        self.at += 1;
        Ok(s)
    }

    fn until_kw(&mut self, kws: &'static [&'static str]) -> Result<Span> {
        self.until(move |p, i| kws.iter().any(|k| is_word(&p.toks[i].t, k)))
    }

    fn label(&mut self) -> Result<Option<String>> {
        if self.eat(&Token::ShiftLeft) {
            let n = self.name()?;
            self.expect(&Token::ShiftRight)?;
            return Ok(Some(n));
        }
        Ok(None)
    }

    fn block(&mut self, label: Option<String>) -> Result<Block> {
        let label = match label {
            Some(l) => Some(l),
            None => self.label()?,
        };
        let mut decls = Vec::new();
        if self.eat_kw("declare") {
            while !self.kw("begin") {
                if self.peek().is_none() {
                    return Err(self.syntax());
                }
                if self.kw("declare") {
                    self.at += 1;
                    continue;
                }
                decls.push(self.decl()?);
            }
        }
        self.expect_kw("begin")?;
        let body = self.stmts(&["end", "exception"])?;
        let mut handlers = Vec::new();
        if self.eat_kw("exception") {
            while self.kw("when") {
                let line = self.line();
                self.at += 1;
                let mut conditions = Vec::new();
                loop {
                    if self.eat_kw("sqlstate") {
                        match self.peek() {
                            Some(Token::SingleQuotedString(s)) => conditions.push(format!("sqlstate:{s}")),
                            _ => return Err(self.syntax()),
                        }
                        self.at += 1;
                    } else {
                        conditions.push(self.name()?);
                    }
                    if !self.eat_kw("or") {
                        break;
                    }
                }
                self.expect_kw("then")?;
                self.handlers += 1;
                let body = self.stmts(&["when", "end"]);
                self.handlers -= 1;
                handlers.push(Handler { conditions, body: body?, line });
            }
            if handlers.is_empty() {
                return Err(self.syntax());
            }
        }
        self.expect_kw("end")?;
        if let (Some(l), Some(Token::Word(_))) = (&label, self.peek()) {
            if self.name()? != *l {
                return Err(Error::Syntax(format!("end label differs from block's label \"{l}\"")));
            }
        }
        Ok(Block { label, decls, body, handlers })
    }

    fn decl(&mut self) -> Result<Decl> {
        let line = self.line();
        let name = self.name()?;
        let constant = self.eat_kw("constant");
        let ty = self.until(|p, i| {
            let t = &p.toks[i].t;
            matches!(t, Token::SemiColon | Token::Assignment | Token::Eq)
                || is_word(t, "default")
                || (is_word(t, "not") && p.toks.get(i + 1).is_some_and(|n| is_word(&n.t, "null")))
                || is_word(t, "collate")
        })?;
        let not_null = if self.eat_kw("not") {
            self.expect_kw("null")?;
            true
        } else {
            false
        };
        let default = if self.eat(&Token::Assignment) || self.eat(&Token::Eq) || self.eat_kw("default") {
            Some(self.through_semicolon()?)
        } else {
            self.expect(&Token::SemiColon)?;
            None
        };
        Ok(Decl { name, constant, not_null, ty, default, line })
    }

    fn stmts(&mut self, ends: &[&str]) -> Result<Vec<Stmt>> {
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.syntax()),
                Some(t) if ends.iter().any(|e| is_word(t, e)) => return Ok(out),
                _ => out.push(self.stmt()?),
            }
        }
    }

    fn stmt(&mut self) -> Result<Stmt> {
        let line = self.line();
        let label = self.label()?;
        let kind = if self.kw("declare") || self.kw("begin") {
            let b = self.block(label)?;
            self.expect(&Token::SemiColon)?;
            Kind::Block(b)
        } else if self.eat_kw("loop") {
            let body = self.loop_body(&label)?;
            Kind::Loop { label, body }
        } else if self.eat_kw("while") {
            let cond = self.until_kw(&["loop"])?;
            self.at += 1;
            let body = self.loop_body(&label)?;
            Kind::While { label, cond, body }
        } else if self.eat_kw("for") {
            self.for_loop(label)?
        } else if self.eat_kw("foreach") {
            let target = self.until_kw(&["in", "slice"])?;
            if self.kw("slice") {
                return Err(Error::unsupported("FOREACH ... SLICE"));
            }
            self.expect_kw("in")?;
            self.expect_kw("array")?;
            let array = self.until_kw(&["loop"])?;
            self.at += 1;
            let body = self.loop_body(&label)?;
            Kind::ForEach { label, target, array, body }
        } else if label.is_some() {
            return Err(self.syntax());
        } else if self.eat_kw("if") {
            self.if_stmt()?
        } else if self.kw("exit") || self.kw("continue") {
            let cont = self.kw("continue");
            self.at += 1;
            let label = match self.peek() {
                Some(Token::Word(_)) if !self.kw("when") => Some(self.name()?),
                _ => None,
            };
            let when = if self.eat_kw("when") { Some(self.through_semicolon()?) } else { None };
            if when.is_none() {
                self.expect(&Token::SemiColon)?;
            }
            Kind::Exit { label, when, cont }
        } else if self.eat_kw("return") {
            if self.eat_kw("query") {
                if self.eat_kw("execute") {
                    let d = self.dynamic(false, false)?;
                    self.expect(&Token::SemiColon)?;
                    Kind::ReturnQueryExecute(d)
                } else {
                    Kind::ReturnQuery(self.through_semicolon()?)
                }
            } else if self.eat_kw("next") {
                if self.eat(&Token::SemiColon) {
                    Kind::ReturnNext(None)
                } else {
                    Kind::ReturnNext(Some(self.through_semicolon()?))
                }
            } else if self.eat(&Token::SemiColon) {
                Kind::Return(None)
            } else {
                Kind::Return(Some(self.through_semicolon()?))
            }
        } else if self.eat_kw("raise") {
            self.raise()?
        } else if self.kw("get") {
            self.at += 1;
            self.eat_kw("current");
            if self.kw("stacked") {
                return Err(Error::unsupported("GET STACKED DIAGNOSTICS"));
            }
            self.expect_kw("diagnostics")?;
            let mut items = Vec::new();
            loop {
                let target = self.until(|p, i| matches!(p.toks[i].t, Token::Eq | Token::Assignment))?;
                self.at += 1;
                let item = self.name()?;
                items.push((target, item));
                if self.eat(&Token::SemiColon) {
                    break;
                }
                self.expect(&Token::Comma)?;
            }
            Kind::Diagnostics(items)
        } else if self.eat_kw("perform") {
            Kind::Sql { text: self.through_semicolon()?, perform: true }
        } else if self.kw("null") && self.peek_at(1) == Some(&Token::SemiColon) {
            self.at += 2;
            Kind::Null
        } else if self.eat_kw("case") {
            self.case_stmt()?
        } else if self.eat_kw("execute") {
            let d = self.dynamic(true, false)?;
            self.expect(&Token::SemiColon)?;
            Kind::Execute(d)
        } else if ["commit", "rollback", "savepoint"].iter().any(|k| self.kw(k)) {
            return Err(Error::Unsupported("transaction control is not supported in PL/pgSQL".into()));
        } else if self.is_assignment() {
            let target = self.until(|p, i| matches!(p.toks[i].t, Token::Assignment | Token::Eq))?;
            self.at += 1;
            Kind::Assign { target, value: self.through_semicolon()? }
        } else {
            Kind::Sql { text: self.through_semicolon()?, perform: false }
        };
        Ok(Stmt { line, kind })
    }

    /// `name :=`, `name.field :=`, `name[i] :=` (or `=`).
    fn is_assignment(&self) -> bool {
        let mut i = 0;
        if !matches!(self.peek(), Some(Token::Word(_))) {
            return false;
        }
        i += 1;
        loop {
            match self.peek_at(i) {
                Some(Token::Assignment | Token::Eq) => return true,
                Some(Token::Period) if matches!(self.peek_at(i + 1), Some(Token::Word(_))) => i += 2,
                Some(Token::LBracket) => {
                    let mut depth = 0;
                    loop {
                        match self.peek_at(i) {
                            Some(Token::LBracket) => depth += 1,
                            Some(Token::RBracket) => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            None | Some(Token::SemiColon) => return false,
                            _ => {}
                        }
                        i += 1;
                    }
                    i += 1;
                }
                _ => return false,
            }
        }
    }

    fn loop_body(&mut self, label: &Option<String>) -> Result<Vec<Stmt>> {
        let body = self.stmts(&["end"])?;
        self.expect_kw("end")?;
        self.expect_kw("loop")?;
        if let Some(Token::Word(_)) = self.peek() {
            let n = self.name()?;
            if label.as_deref() != Some(n.as_str()) {
                return Err(Error::Syntax(format!("end label \"{n}\" differs from loop's label")));
            }
        }
        self.expect(&Token::SemiColon)?;
        Ok(body)
    }

    fn for_loop(&mut self, label: Option<String>) -> Result<Kind> {
        let targets = self.until_kw(&["in"])?;
        self.at += 1;
        if self.eat_kw("execute") {
            let query = self.dynamic(false, true)?;
            self.expect_kw("loop")?;
            let body = self.loop_body(&label)?;
            return Ok(Kind::ForExecute { label, targets, query, body });
        }
        let query_start = ["select", "with", "values", "table"].iter().any(|k| self.kw(k))
            || (self.peek() == Some(&Token::LParen) && self.kw_at(1, "select"));
        if query_start {
            let query = self.until_kw(&["loop"])?;
            self.at += 1;
            let body = self.loop_body(&label)?;
            return Ok(Kind::ForQuery { label, targets, query, body });
        }
        if targets.len() != 1 {
            return Err(Error::Syntax("an integer FOR loop has one loop variable".into()));
        }
        let var = match &self.toks[targets.start].t {
            Token::Word(w) if w.quote_style.is_some() => w.value.clone(),
            Token::Word(w) => w.value.to_lowercase(),
            _ => return Err(self.syntax()),
        };
        let reverse = self.eat_kw("reverse");
        let lo = self.until(|p, i| {
            p.toks[i].t == Token::Period && p.toks.get(i + 1).is_some_and(|n| n.t == Token::Period)
        })?;
        self.at += 2;
        let hi = self.until_kw(&["by", "loop"])?;
        let step = if self.eat_kw("by") { Some(self.until_kw(&["loop"])?) } else { None };
        self.expect_kw("loop")?;
        let body = self.loop_body(&label)?;
        Ok(Kind::ForRange { label, var, reverse, lo, hi, step, body })
    }

    /// The rest of an EXECUTE after its keyword, up to (not including) the
    /// `;`, or `LOOP` when `in_for`. INTO (when `with_into`) and USING come
    /// in either order.
    fn dynamic(&mut self, with_into: bool, in_for: bool) -> Result<Dynamic> {
        let end = move |t: &Token| if in_for { is_word(t, "loop") } else { *t == Token::SemiColon };
        let clause = |t: &Token| is_word(t, "into") || is_word(t, "using");
        let command = self.until(|p, i| end(&p.toks[i].t) || clause(&p.toks[i].t))?;
        let (mut into, mut using) = (None, Vec::new());
        loop {
            if with_into && into.is_none() && self.eat_kw("into") {
                let strict = self.eat_kw("strict");
                let targets = self.until(|p, i| end(&p.toks[i].t) || is_word(&p.toks[i].t, "using"))?;
                into = Some((targets, strict));
            } else if using.is_empty() && self.eat_kw("using") {
                loop {
                    let stop = |p: &Parser, i: usize| {
                        let t = &p.toks[i].t;
                        end(t) || *t == Token::Comma || is_word(t, "into")
                    };
                    using.push(self.until(stop)?);
                    if !self.eat(&Token::Comma) {
                        break;
                    }
                }
            } else {
                return Ok(Dynamic { command, into, using });
            }
        }
    }

    fn if_stmt(&mut self) -> Result<Kind> {
        let mut branches = Vec::new();
        let mut otherwise = Vec::new();
        loop {
            let cond = self.until_kw(&["then"])?;
            self.at += 1;
            let body = self.stmts(&["elsif", "elseif", "else", "end"])?;
            branches.push((cond, body));
            if self.eat_kw("elsif") || self.eat_kw("elseif") {
                continue;
            }
            if self.eat_kw("else") {
                otherwise = self.stmts(&["end"])?;
            }
            self.expect_kw("end")?;
            self.expect_kw("if")?;
            self.expect(&Token::SemiColon)?;
            return Ok(Kind::If { branches, otherwise });
        }
    }

    fn case_stmt(&mut self) -> Result<Kind> {
        let operand = if self.kw("when") { None } else { Some(self.until_kw(&["when"])?) };
        let mut branches = Vec::new();
        while self.eat_kw("when") {
            let cond = self.until_kw(&["then"])?;
            self.at += 1;
            branches.push((cond, self.stmts(&["when", "else", "end"])?));
        }
        if branches.is_empty() {
            return Err(self.syntax());
        }
        let otherwise = if self.eat_kw("else") { Some(self.stmts(&["end"])?) } else { None };
        self.expect_kw("end")?;
        self.expect_kw("case")?;
        self.expect(&Token::SemiColon)?;
        Ok(Kind::Case { operand, branches, otherwise })
    }

    fn raise(&mut self) -> Result<Kind> {
        let level = if self.eat_kw("exception") {
            Level::Exception
        } else if self.eat_kw("notice") || self.eat_kw("warning") || self.eat_kw("info") {
            Level::Notice
        } else if self.eat_kw("log") || self.eat_kw("debug") {
            Level::Quiet
        } else {
            Level::Exception
        };
        let mut condition = None;
        let mut format = None;
        let mut args = Vec::new();
        match self.peek() {
            Some(Token::SingleQuotedString(s)) | Some(Token::EscapedStringLiteral(s)) => {
                format = Some(s.clone());
                self.at += 1;
                while self.eat(&Token::Comma) {
                    args.push(self.until(|p, i| {
                        matches!(p.toks[i].t, Token::Comma | Token::SemiColon)
                            || is_word(&p.toks[i].t, "using")
                    })?);
                }
            }
            Some(Token::Word(_)) if self.kw("sqlstate") => {
                self.at += 1;
                match self.peek() {
                    Some(Token::SingleQuotedString(s)) => {
                        condition = Some(s.clone());
                        self.at += 1;
                    }
                    _ => return Err(self.syntax()),
                }
            }
            Some(Token::Word(_)) if !self.kw("using") => condition = Some(self.name()?),
            Some(Token::SemiColon) if self.handlers > 0 => {
                self.at += 1;
                return Ok(Kind::Reraise);
            }
            Some(Token::SemiColon) => {
                return Err(Error::other(
                    "42601",
                    "RAISE without parameters cannot be used outside an exception handler",
                ))
            }
            _ => {}
        }
        let mut options = Vec::new();
        if self.eat_kw("using") {
            loop {
                let name = self.name()?;
                if !(self.eat(&Token::Eq) || self.eat(&Token::Assignment)) {
                    return Err(self.syntax());
                }
                let v = self.until(|p, i| matches!(p.toks[i].t, Token::Comma | Token::SemiColon))?;
                options.push((name, v));
                if !self.eat(&Token::Comma) {
                    break;
                }
            }
        }
        self.expect(&Token::SemiColon)?;
        Ok(Kind::Raise { level, condition, format, args, options })
    }
}
