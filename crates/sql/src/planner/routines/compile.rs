//! Compiling a routine body: names to slots, SQL to plans.
//!
//! Every variable gets a slot in one value array, and that array is the
//! parameter array of every statement in the body: a variable in slot `k`
//! is written `$k+1` in the SQL text handed to the planner, with the slot's
//! type declared, so planning happens here once. A composite variable is a
//! slot per field (`line.qty` is one slot); an array variable lives outside
//! the slots, with two slots for its length, and `arr[i]` (or
//! `arr[i].field`) becomes a fetch into a scratch slot done just before the
//! statement that reads it.
//!
//! Name resolution follows PL/pgSQL with `#variable_conflict use_variable`:
//! where a column and a variable share a name in an expression, the variable
//! wins; qualify the column (`t.col`) to reach it. Names right after `.`,
//! before `(`, after `AS`/`FROM`/`JOIN`/`INTO`/`UPDATE`/`::`, in an INSERT's
//! column list and on the left of `=` in a SET list are never variables.

use super::Compiled;
use crate::error::{Error, Result};
use crate::planner::Dictionary;
use crate::planner::{Binder, Expr, Planned, Statement};
use crate::routines::parse::{self, Block, Kind, Level, Span, Stmt, Tok};
use crate::routines::{Composite, Elem, Mode, PlType, Returns};
use centum_types::{DataType, Value};
use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::Token;
use std::sync::Arc;

/// A compiled body.
pub(crate) struct Program {
    pub body: Vec<Op>,
    /// The type of each slot.
    pub slots: Vec<DataType>,
    /// Number of array variables.
    pub arrays: usize,
    /// The slot of FOUND.
    pub found: usize,
    /// How each parameter is bound, in declaration order.
    pub binds: Vec<Bind>,
    /// OUT and INOUT slots, in order.
    pub outs: Vec<usize>,
    /// RETURNS TABLE column slots (what `RETURN NEXT;` emits).
    pub table: Vec<usize>,
    /// The privileges its statements and expressions need (checked
    /// against the routine's owner when a statement calls it).
    pub needs: Vec<crate::privileges::Need>,
    /// A trigger's program: where its special variables live.
    pub trigger: Option<TriggerSlots>,
}

/// What a trigger's program is compiled against: its table's columns, its
/// WHEN condition and its transition tables.
pub(crate) struct TriggerEnv {
    /// The table's columns: the fields of NEW and OLD.
    pub columns: Vec<(String, DataType)>,
    /// The WHEN condition's text (over NEW and OLD).
    pub when: Option<String>,
    /// `REFERENCING OLD TABLE AS name`: a relation the body's queries
    /// read, with the work-table id its rows are put under.
    pub old_table: Option<(String, usize)>,
    /// `REFERENCING NEW TABLE AS name`.
    pub new_table: Option<(String, usize)>,
}

/// The slots a trigger call fills before its body runs.
pub(crate) struct TriggerSlots {
    /// NEW's fields, one slot per column.
    pub new: Vec<usize>,
    /// OLD's fields.
    pub old: Vec<usize>,
    /// TG_NAME, TG_WHEN, TG_LEVEL, TG_OP, TG_TABLE_NAME, TG_TABLE_SCHEMA
    /// (text) and TG_NARGS (integer), in that order.
    pub info: [usize; 7],
    /// Which of `info` the body reads.
    pub info_read: [bool; 7],
    /// TG_ARGV.
    pub argv: ArrayVar,
    /// Whether the body reads TG_ARGV.
    pub argv_read: bool,
    /// The WHEN condition, evaluated over the slots before the body.
    pub when: Option<CExpr>,
    /// The work-table ids of the old and new transition tables.
    pub old_table: Option<usize>,
    pub new_table: Option<usize>,
}

/// The special variables of a trigger's body, in [`TriggerSlots::info`]'s
/// order.
const TRIGGER_INFO: [&str; 7] =
    ["tg_name", "tg_when", "tg_level", "tg_op", "tg_table_name", "tg_table_schema", "tg_nargs"];

/// Where a parameter's value goes.
pub(crate) enum Bind {
    Scalar(usize),
    Array(ArrayVar),
    Composite { fields: Vec<usize>, comp: Arc<Composite> },
}

/// An array variable: its index among the arrays and its length slots.
#[derive(Clone, Debug)]
pub(crate) struct ArrayVar {
    pub arr: usize,
    /// `array_length(a, 1)` / `array_upper(a, 1)`: NULL when empty or NULL.
    pub len: usize,
    /// `cardinality(a)`: 0 when empty, NULL when NULL.
    pub card: usize,
    pub elem: Elem,
    /// The subscript of the first element: 1, or 0 for TG_ARGV.
    pub lower: i64,
}

/// A compiled expression: fetches of array elements, then the bound
/// expression over the slots.
pub(crate) struct CExpr {
    pub pre: Vec<Fetch>,
    pub expr: Expr,
}

/// A compiled SQL statement.
pub(crate) struct CStmt {
    pub pre: Vec<Fetch>,
    pub planned: Planned,
}

/// A compiled EXECUTE: the command text's expression, and the USING
/// values with the types the command is planned with at each run.
pub(crate) struct CDynamic {
    pub command: CExpr,
    pub using: Vec<CExpr>,
    pub types: Vec<DataType>,
}

/// `arr[index]` (or `arr[index].field`) into a scratch slot.
pub(crate) struct Fetch {
    pub slot: usize,
    pub arr: usize,
    pub index: CExpr,
    pub field: Option<usize>,
    /// The subscript of the array's first element.
    pub lower: i64,
}

/// One operation, with the line and kind of statement it came from.
pub(crate) struct Op {
    pub line: usize,
    pub what: &'static str,
    pub kind: OpKind,
}

/// Operations.
pub(crate) enum OpKind {
    /// Set a slot from an expression (NULL when `None`), coerced to its type.
    Assign {
        slot: usize,
        value: Option<CExpr>,
        not_null: Option<String>,
    },
    /// Set slots to NULL.
    Clear(Vec<usize>),
    If {
        branches: Vec<(CExpr, Vec<Op>)>,
        otherwise: Vec<Op>,
    },
    /// LOOP and WHILE.
    Loop {
        label: Option<String>,
        cond: Option<CExpr>,
        body: Vec<Op>,
    },
    ForRange {
        label: Option<String>,
        var: usize,
        lo: CExpr,
        hi: CExpr,
        step: Option<CExpr>,
        reverse: bool,
        body: Vec<Op>,
    },
    ForQuery {
        label: Option<String>,
        query: CStmt,
        targets: Vec<usize>,
        body: Vec<Op>,
    },
    ForEach {
        label: Option<String>,
        arr: usize,
        targets: Vec<usize>,
        body: Vec<Op>,
    },
    ForExecute {
        label: Option<String>,
        query: CDynamic,
        targets: Vec<usize>,
        body: Vec<Op>,
    },
    /// EXECUTE, with INTO's slots and whether STRICT.
    Execute {
        query: CDynamic,
        into: Option<(Vec<usize>, bool)>,
    },
    ReturnQueryExecute(CDynamic),
    Exit {
        label: Option<String>,
        when: Option<CExpr>,
        cont: bool,
    },
    Block {
        label: Option<String>,
        body: Vec<Op>,
        /// The EXCEPTION section: with any handler the block runs under a
        /// savepoint, rolled back when a handler takes the error.
        handlers: Vec<Handler>,
    },
    /// RAISE alone in a handler.
    Reraise,
    /// A statement; `into`: the slots its first row goes to, whether
    /// STRICT (exactly one row), and whether more rows are allowed
    /// without STRICT (a query's, or a LANGUAGE sql function's result).
    Sql {
        stmt: CStmt,
        into: Option<(Vec<usize>, bool, bool)>,
    },
    Return(Option<CExpr>),
    /// A trigger's RETURN: the slots of the record returned (NEW, OLD or
    /// another row variable), or NULL.
    ReturnRow(Option<Vec<usize>>),
    ReturnQuery(CStmt),
    ReturnNext(Option<CExpr>),
    Raise {
        level: Level,
        code: &'static str,
        message: Vec<MessagePart>,
        options: Vec<(RaiseOption, CExpr)>,
    },
    RowCount(usize),
    Null,
}

/// A piece of a RAISE message.
pub(crate) enum MessagePart {
    Text(String),
    Arg(CExpr),
}

/// RAISE ... USING options.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum RaiseOption {
    Message,
    Detail,
    Hint,
    Errcode,
}

#[derive(Clone, Debug)]
enum Var {
    Scalar {
        slot: usize,
        constant: bool,
    },
    /// Fields by name; `open`: a `record` whose fields the first query
    /// that fills it decides.
    Record {
        fields: Vec<(String, usize)>,
        open: bool,
    },
    Array(ArrayVar),
}

struct Compiler<'a> {
    catalog: &'a Dictionary,
    routine: &'a Compiled,
    src: &'a str,
    toks: &'a [Tok],
    search_path: Vec<String>,
    slots: Vec<DataType>,
    arrays: usize,
    scopes: Vec<Vec<(String, Var)>>,
    /// Labels of the enclosing loops and blocks (`None`: unlabelled loop).
    labels: Vec<(Option<String>, bool)>,
    /// Slots of variables declared NOT NULL, with their names.
    not_null: std::collections::HashMap<usize, String>,
    /// What the statements and expressions compiled so far need.
    needs: Vec<crate::privileges::Need>,
    /// Slots and arrays that some expression or statement reads.
    read: std::collections::HashSet<usize>,
    arrays_read: std::collections::HashSet<usize>,
    /// A trigger's transition tables: relations its queries read.
    transition: Vec<(String, crate::planner::Plan, Vec<crate::catalog::OutputColumn>)>,
}

/// Compiles `body` for the routine `routine`; a trigger function only for
/// a trigger (`trigger`).
pub(crate) fn compile(
    catalog: &Dictionary,
    routine: &Compiled,
    body: &str,
    trigger: Option<&TriggerEnv>,
) -> Result<Program> {
    if matches!(routine.returns, Returns::Trigger) != trigger.is_some() {
        return Err(Error::other("0A000", "trigger functions can only be called as triggers"));
    }
    let toks = parse::lex(body)?;
    let when_src = trigger.and_then(|t| t.when.clone()).unwrap_or_default();
    let when_toks = parse::lex(&when_src)?;
    let block = if routine.sql {
        None
    } else {
        Some(parse::parse(&toks).map_err(|e| {
            let line = toks.last().map_or(1, |t| t.line);
            e.with_context(format!("compilation of PL/pgSQL function \"{}\" near line {line}", routine.name))
        })?)
    };
    let mut c = Compiler {
        catalog,
        routine,
        src: body,
        toks: &toks,
        search_path: vec!["public".into()],
        slots: Vec::new(),
        arrays: 0,
        scopes: vec![Vec::new()],
        labels: Vec::new(),
        not_null: Default::default(),
        needs: Vec::new(),
        read: Default::default(),
        arrays_read: Default::default(),
        transition: Vec::new(),
    };
    // Parameters first, so `$n` is slot n-1 for scalar parameters.
    let mut binds = Vec::new();
    let mut outs = Vec::new();
    for (i, p) in routine.params.iter().enumerate() {
        let var = c.declare_type(&p.ty);
        let bind = match &var {
            Var::Scalar { slot, .. } => {
                if p.mode != Mode::In {
                    outs.push(*slot);
                }
                Bind::Scalar(*slot)
            }
            Var::Array(a) => Bind::Array(a.clone()),
            Var::Record { fields, .. } => {
                let PlType::Composite(comp) = &p.ty else { unreachable!("composite parameter") };
                Bind::Composite { fields: fields.iter().map(|f| f.1).collect(), comp: comp.clone() }
            }
        };
        binds.push(bind);
        if let Some(n) = &p.name {
            c.scopes[0].push((n.clone(), var.clone()));
        }
        c.scopes[0].push((format!("${}", i + 1), var));
    }
    let mut table = Vec::new();
    // A PL/pgSQL function's TABLE columns are variables; a SQL function's
    // are only the shape of its result.
    if let (Returns::Table(cols), false) = (&routine.returns, routine.sql) {
        for (name, ty) in cols {
            let slot = c.slot(ty.clone());
            table.push(slot);
            c.scopes[0].push((name.clone(), Var::Scalar { slot, constant: false }));
        }
    }
    let found = c.slot(DataType::Boolean);
    c.scopes[0].push(("found".into(), Var::Scalar { slot: found, constant: false }));
    let trigger = match trigger {
        Some(env) => Some(c.trigger_variables(env, &when_src, &when_toks)?),
        None => None,
    };
    let mut ops = vec![Op { line: 0, what: "initialization", kind: OpKind::Clear(table.clone()) }];
    match &block {
        Some(block) => ops.push(c.block(block, 1)?),
        None => ops.extend(c.sql_body()?),
    }
    // A call fills only the TG_ variables the body reads.
    let trigger = trigger.map(|mut t| {
        t.info_read = t.info.map(|slot| c.read.contains(&slot));
        t.argv_read = c.arrays_read.contains(&t.argv.arr);
        t
    });
    Ok(Program {
        body: ops,
        slots: c.slots,
        arrays: c.arrays,
        found,
        binds,
        outs,
        table,
        needs: c.needs,
        trigger,
    })
}

fn word_name(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) if w.quote_style.is_some() => Some(w.value.clone()),
        Token::Word(w) => Some(w.value.to_lowercase()),
        Token::Placeholder(p) => Some(p.clone()),
        _ => None,
    }
}

impl<'a> Compiler<'a> {
    /// Declares a trigger's NEW, OLD and TG_ variables and compiles its
    /// WHEN condition over them (the condition sees nothing else).
    fn trigger_variables(
        &mut self,
        env: &TriggerEnv,
        when_src: &'a str,
        when_toks: &'a [Tok],
    ) -> Result<TriggerSlots> {
        let record = |c: &mut Self| -> Vec<(String, usize)> {
            env.columns.iter().map(|(n, t)| (n.clone(), c.slot(t.clone()))).collect()
        };
        let new = record(self);
        let old = record(self);
        let slots = |f: &[(String, usize)]| f.iter().map(|x| x.1).collect::<Vec<_>>();
        let (new_slots, old_slots) = (slots(&new), slots(&old));
        self.scopes[0].push(("new".into(), Var::Record { fields: new, open: false }));
        self.scopes[0].push(("old".into(), Var::Record { fields: old, open: false }));
        let mut info = [0; 7];
        for (i, name) in TRIGGER_INFO.iter().enumerate() {
            let ty = if *name == "tg_nargs" { DataType::Integer } else { DataType::Text };
            info[i] = self.slot(ty);
            self.scopes[0].push((name.to_string(), Var::Scalar { slot: info[i], constant: false }));
        }
        let Var::Array(mut argv) = self.declare_type(&PlType::Array(Elem::Scalar(DataType::Text))) else {
            unreachable!("an array type declares an array")
        };
        // TG_ARGV counts from 0.
        argv.lower = 0;
        self.scopes[0].push(("tg_argv".into(), Var::Array(argv.clone())));
        let columns: Vec<crate::catalog::OutputColumn> = env
            .columns
            .iter()
            .map(|(name, ty)| crate::catalog::OutputColumn { name: name.clone(), ty: Some(ty.clone()) })
            .collect();
        self.transition = [&env.old_table, &env.new_table]
            .into_iter()
            .flatten()
            .map(|(name, work)| {
                (name.clone(), crate::planner::Plan::WorkTable { work: *work }, columns.clone())
            })
            .collect();
        let when = if when_toks.is_empty() {
            None
        } else {
            let (src, toks) = (self.src, self.toks);
            (self.src, self.toks) = (when_src, when_toks);
            let e = self.expr(&(0..when_toks.len()));
            (self.src, self.toks) = (src, toks);
            Some(e?)
        };
        Ok(TriggerSlots {
            new: new_slots,
            old: old_slots,
            info,
            info_read: [true; 7],
            argv,
            argv_read: true,
            when,
            old_table: env.old_table.as_ref().map(|t| t.1),
            new_table: env.new_table.as_ref().map(|t| t.1),
        })
    }

    fn slot(&mut self, ty: DataType) -> usize {
        self.slots.push(ty);
        self.slots.len() - 1
    }

    fn declare_type(&mut self, ty: &PlType) -> Var {
        match ty {
            PlType::Scalar(t) => Var::Scalar { slot: self.slot(t.clone()), constant: false },
            PlType::Composite(c) => Var::Record {
                fields: c.fields.iter().map(|(n, t)| (n.clone(), self.slot(t.clone()))).collect(),
                open: false,
            },
            PlType::Record => Var::Record { fields: vec![], open: true },
            PlType::Array(elem) => {
                let arr = self.arrays;
                self.arrays += 1;
                let len = self.slot(DataType::Integer);
                let card = self.slot(DataType::Integer);
                Var::Array(ArrayVar { arr, len, card, elem: elem.clone(), lower: 1 })
            }
        }
    }

    fn lookup(&self, name: &str) -> Option<&Var> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|(n, _)| n == name).map(|(_, v)| v)
    }

    fn lookup_mut(&mut self, name: &str) -> Option<&mut Var> {
        self.scopes.iter_mut().rev().flat_map(|s| s.iter_mut().rev()).find(|(n, _)| n == name).map(|(_, v)| v)
    }

    fn text(&self, span: &Span) -> &str {
        &self.src[self.toks[span.start].start..self.toks[span.end - 1].end]
    }

    fn line_of(&self, span: &Span) -> usize {
        self.toks.get(span.start).map_or(0, |t| t.line)
    }

    fn block(&mut self, b: &Block, line: usize) -> Result<Op> {
        self.scopes.push(Vec::new());
        self.labels.push((b.label.clone(), false));
        let mut body = Vec::new();
        for d in &b.decls {
            let ctx = |e: Error| e.with_context(self_context(self.routine, d.line, "declaration"));
            let ty = self.decl_type(&d.ty).map_err(ctx)?;
            let default = match &d.default {
                Some(span) => Some(self.expr(span).map_err(ctx)?),
                None => None,
            };
            let var = self.declare_type(&ty);
            match (&var, default) {
                (Var::Scalar { slot, .. }, value) => {
                    if d.not_null && value.is_none() {
                        return Err(Error::Syntax(format!(
                            "variable \"{}\" must have a default value, since it's declared NOT NULL",
                            d.name
                        ))
                        .with_context(self_context(
                            self.routine,
                            d.line,
                            "declaration",
                        )));
                    }
                    if d.not_null {
                        self.not_null.insert(*slot, d.name.clone());
                    }
                    body.push(Op {
                        line: d.line,
                        what: "assignment",
                        kind: OpKind::Assign {
                            slot: *slot,
                            value,
                            not_null: d.not_null.then(|| d.name.clone()),
                        },
                    });
                }
                (Var::Record { fields, .. }, None) => body.push(Op {
                    line: d.line,
                    what: "declaration",
                    kind: OpKind::Clear(fields.iter().map(|f| f.1).collect()),
                }),
                (Var::Array(_), None) => {}
                (_, Some(_)) => {
                    return Err(Error::unsupported("a default for an array or composite variable")
                        .with_context(self_context(self.routine, d.line, "declaration")))
                }
            }
            let var = match var {
                Var::Scalar { slot, .. } => Var::Scalar { slot, constant: d.constant },
                v => v,
            };
            self.scopes.last_mut().expect("scope").push((d.name.clone(), var));
        }
        body.extend(self.stmts(&b.body)?);
        let mut handlers = Vec::new();
        for h in &b.handlers {
            let ctx = |e: Error| e.with_context(self_context(self.routine, h.line, "exception handler"));
            let mut catches = Vec::new();
            for c in &h.conditions {
                catches.push(Catch::of(c).map_err(ctx)?);
            }
            // SQLSTATE and SQLERRM name the caught error inside the handler.
            let (sqlstate, sqlerrm) = (self.slot(DataType::Text), self.slot(DataType::Text));
            self.scopes.push(vec![
                ("sqlstate".into(), Var::Scalar { slot: sqlstate, constant: true }),
                ("sqlerrm".into(), Var::Scalar { slot: sqlerrm, constant: true }),
            ]);
            let hbody = self.stmts(&h.body);
            self.scopes.pop();
            handlers.push(Handler { catches, body: hbody?, sqlstate, sqlerrm });
        }
        self.labels.pop();
        self.scopes.pop();
        let kind = OpKind::Block { label: b.label.clone(), body, handlers };
        Ok(Op { line, what: "statement block", kind })
    }

    fn decl_type(&mut self, span: &Span) -> Result<PlType> {
        let toks: Vec<&Token> = self.toks[span.clone()].iter().map(|t| &t.t).collect();
        let pct = |t: &Token, kw: &str| parse::is_word(t, kw);
        match toks.as_slice() {
            [t, Token::Mod, k] if pct(k, "rowtype") => {
                let name = word_name(t).unwrap_or_default();
                let info = self.catalog.table(&name)?;
                let fields = info
                    .table
                    .columns()
                    .iter()
                    .filter(|c| !crate::catalog::is_hidden_column(&c.name))
                    .map(|c| (c.name.clone(), c.ty.clone()))
                    .collect();
                Ok(PlType::Composite(Arc::new(Composite { name, fields })))
            }
            [t, Token::Period, c, Token::Mod, k] if pct(k, "type") => {
                let (t, c) = (word_name(t).unwrap_or_default(), word_name(c).unwrap_or_default());
                let info = self.catalog.table(&t)?;
                let col = info
                    .table
                    .columns()
                    .iter()
                    .find(|x| x.name == c)
                    .ok_or_else(|| Error::UndefinedColumn(format!("\"{c}\" of relation \"{t}\"")))?;
                Ok(PlType::Scalar(col.ty.clone()))
            }
            [v, Token::Mod, k] if pct(k, "type") => {
                let name = word_name(v).unwrap_or_default();
                match self.lookup(&name) {
                    Some(Var::Scalar { slot, .. }) => Ok(PlType::Scalar(self.slots[*slot].clone())),
                    _ => Err(Error::UndefinedObject(format!("variable \"{name}\" does not exist"))),
                }
            }
            _ => {
                let text = self.text(span).to_string();
                let dt = sqlparser::parser::Parser::new(&PostgreSqlDialect {})
                    .try_with_sql(&text)
                    .and_then(|mut p| p.parse_data_type())
                    .map_err(|_| Error::UndefinedObject(format!("type \"{text}\" does not exist")))?;
                crate::routines::pl_type(self.catalog, &dt)
            }
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) -> Result<Vec<Op>> {
        stmts.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &Stmt) -> Result<Op> {
        let what = s.kind.describe();
        let kind = match &s.kind {
            Kind::Block(b) => return self.block(b, s.line),
            Kind::If { branches, otherwise } => {
                let mut out = Vec::new();
                for (cond, body) in branches {
                    let c = self.expr(cond).map_err(|e| self.at(e, cond, "IF"))?;
                    out.push((c, self.stmts(body)?));
                }
                OpKind::If { branches: out, otherwise: self.stmts(otherwise)? }
            }
            Kind::Case { operand, branches, otherwise } => {
                return self.case_stmt(operand, branches, otherwise, s.line)
            }
            Kind::Loop { label, body } => {
                OpKind::Loop { label: label.clone(), cond: None, body: self.loop_body(label, body)? }
            }
            Kind::While { label, cond, body } => {
                let c = self.expr(cond).map_err(|e| self.at(e, cond, what))?;
                OpKind::Loop { label: label.clone(), cond: Some(c), body: self.loop_body(label, body)? }
            }
            Kind::ForRange { label, var, reverse, lo, hi, step, body } => {
                let err = |c: &Self, e: Error| e.with_context(self_context(c.routine, s.line, what));
                let lo = self.expr(lo).map_err(|e| err(self, e))?;
                let hi = self.expr(hi).map_err(|e| err(self, e))?;
                let step = match step {
                    Some(st) => Some(self.expr(st).map_err(|e| err(self, e))?),
                    None => None,
                };
                self.scopes.push(Vec::new());
                let slot = self.slot(DataType::Integer);
                self.scopes
                    .last_mut()
                    .expect("scope")
                    .push((var.clone(), Var::Scalar { slot, constant: false }));
                let body = self.loop_body(label, body);
                self.scopes.pop();
                OpKind::ForRange {
                    label: label.clone(),
                    var: slot,
                    lo,
                    hi,
                    step,
                    reverse: *reverse,
                    body: body?,
                }
            }
            Kind::ForQuery { label, targets, query, body } => {
                let q = self.sql(query, None).map_err(|e| self.at(e, query, what))?;
                if !matches!(q.planned.statement, Statement::Query(_)) {
                    return Err(Error::Syntax("FOR over a query needs a SELECT".into())
                        .with_context(self_context(self.routine, s.line, what)));
                }
                self.scopes.push(Vec::new());
                // A single undeclared name is a record local to the loop.
                if targets.len() == 1 {
                    if let Some(n) = word_name(&self.toks[targets.start].t) {
                        if self.lookup(&n).is_none() {
                            self.scopes
                                .last_mut()
                                .expect("scope")
                                .push((n, Var::Record { fields: vec![], open: true }));
                        }
                    }
                }
                let t = self.targets(targets, Some(&q.planned)).map_err(|e| self.at(e, targets, what));
                let body = t.and_then(|t| Ok((t, self.loop_body(label, body)?)));
                self.scopes.pop();
                let (targets, body) = body?;
                OpKind::ForQuery { label: label.clone(), query: q, targets, body }
            }
            Kind::ForExecute { label, targets, query, body } => {
                let query = self.dynamic(query).map_err(|e| self.at(e, &query.command, what))?;
                let t = self.targets(targets, None).map_err(|e| self.at(e, targets, what))?;
                OpKind::ForExecute {
                    label: label.clone(),
                    query,
                    targets: t,
                    body: self.loop_body(label, body)?,
                }
            }
            Kind::Execute(d) => {
                let query = self.dynamic(d).map_err(|e| self.at(e, &d.command, what))?;
                let into = match &d.into {
                    Some((t, strict)) => {
                        Some((self.targets(t, None).map_err(|e| self.at(e, t, what))?, *strict))
                    }
                    None => None,
                };
                OpKind::Execute { query, into }
            }
            Kind::ReturnQueryExecute(d) => {
                if self.routine.set_columns().is_none() {
                    return Err(Error::Syntax("cannot use RETURN QUERY in a non-SETOF function".into())
                        .with_context(self_context(self.routine, s.line, what)));
                }
                OpKind::ReturnQueryExecute(self.dynamic(d).map_err(|e| self.at(e, &d.command, what))?)
            }
            Kind::ForEach { label, target, array, body } => {
                let (arr, targets) = self.foreach(target, array).map_err(|e| self.at(e, target, what))?;
                OpKind::ForEach { label: label.clone(), arr, targets, body: self.loop_body(label, body)? }
            }
            Kind::Exit { label, when, cont } => {
                let ok = match label {
                    None => self.labels.iter().any(|l| l.1),
                    Some(l) => {
                        self.labels.iter().any(|(n, is_loop)| n.as_deref() == Some(l) && (*is_loop || !cont))
                    }
                };
                if !ok {
                    let m = match label {
                        Some(l) => format!("there is no label \"{l}\" attached to any block or loop enclosing this statement"),
                        None => format!("{} cannot be used outside a loop", if *cont { "CONTINUE" } else { "EXIT" }),
                    };
                    return Err(Error::Syntax(m).with_context(self_context(self.routine, s.line, what)));
                }
                let when = match when {
                    Some(w) => Some(self.expr(w).map_err(|e| self.at(e, w, what))?),
                    None => None,
                };
                OpKind::Exit { label: label.clone(), when, cont: *cont }
            }
            Kind::Assign { target, value } => {
                let slot = self.assign_target(target).map_err(|e| self.at(e, target, what))?;
                let v = self.expr(value).map_err(|e| self.at(e, value, what))?;
                OpKind::Assign { slot, value: Some(v), not_null: self.not_null.get(&slot).cloned() }
            }
            Kind::Sql { text, perform } => {
                self.sql_stmt(text, *perform).map_err(|e| self.at(e, text, what))?
            }
            Kind::Return(value) => {
                let err = |m: &str| {
                    Error::mismatch(m.to_string()).with_context(self_context(self.routine, s.line, what))
                };
                let has_outs = self.routine.params.iter().any(|p| p.mode != Mode::In);
                match (&self.routine.returns, value) {
                    (Returns::Scalar(_), Some(v)) if !has_outs => {
                        OpKind::Return(Some(self.expr(v).map_err(|e| self.at(e, v, what))?))
                    }
                    (Returns::Scalar(_), Some(_)) => {
                        return Err(err("RETURN cannot have a parameter in function with OUT parameters"))
                    }
                    (Returns::Scalar(_), None) if has_outs => OpKind::Return(None),
                    (Returns::Scalar(_), None) => return Err(err("missing expression at or near \";\"")),
                    (Returns::Trigger, Some(v)) => self.return_row(v).map_err(|e| self.at(e, v, what))?,
                    (Returns::Trigger, None) => return Err(err("missing expression at or near \";\"")),
                    (Returns::Void, Some(_)) if self.routine.procedure => {
                        return Err(err("RETURN cannot have a parameter in a procedure"))
                    }
                    (Returns::Void, Some(_)) => {
                        return Err(err("RETURN cannot have a parameter in function returning void"))
                    }
                    (Returns::SetOf(_) | Returns::Table(_), Some(_)) => {
                        return Err(err(
                            "RETURN cannot have a parameter in function returning set (use RETURN NEXT)",
                        ))
                    }
                    (_, None) => OpKind::Return(None),
                }
            }
            Kind::ReturnQuery(q) => {
                let Some(cols) = self.routine.set_columns() else {
                    return Err(Error::Syntax("cannot use RETURN QUERY in a non-SETOF function".into())
                        .with_context(self_context(self.routine, s.line, what)));
                };
                let stmt = self.sql(q, None).map_err(|e| self.at(e, q, what))?;
                if stmt.planned.columns.len() != cols.len() {
                    return Err(Error::mismatch("structure of query does not match function result type")
                        .with_context(self_context(self.routine, s.line, what)));
                }
                OpKind::ReturnQuery(stmt)
            }
            Kind::ReturnNext(v) => {
                match (&self.routine.returns, v) {
                    (Returns::SetOf(_), Some(v)) => {
                        OpKind::ReturnNext(Some(self.expr(v).map_err(|e| self.at(e, v, what))?))
                    }
                    (Returns::Table(_), None) => OpKind::ReturnNext(None),
                    _ => return Err(Error::Syntax(
                        "RETURN NEXT needs an expression in a SETOF function and none in a TABLE function"
                            .into(),
                    )
                    .with_context(self_context(self.routine, s.line, what))),
                }
            }
            Kind::Raise { level, condition, format, args, options } => self
                .raise(*level, condition, format, args, options)
                .map_err(|e| e.with_context(self_context(self.routine, s.line, what)))?,
            Kind::Diagnostics(items) => {
                let mut ops = Vec::new();
                for (target, item) in items {
                    if item != "row_count" {
                        return Err(Error::unsupported(format!(
                            "GET DIAGNOSTICS item {}",
                            item.to_uppercase()
                        ))
                        .with_context(self_context(self.routine, s.line, what)));
                    }
                    let slot = self.assign_target(target).map_err(|e| self.at(e, target, what))?;
                    ops.push(Op { line: s.line, what, kind: OpKind::RowCount(slot) });
                }
                OpKind::Block { label: None, body: ops, handlers: vec![] }
            }
            Kind::Null => OpKind::Null,
            Kind::Reraise => OpKind::Reraise,
        };
        Ok(Op { line: s.line, what, kind })
    }

    /// A trigger's `RETURN NEW`, `RETURN OLD`, `RETURN NULL` or `RETURN
    /// rec` (a row variable of the table's row type).
    fn return_row(&self, span: &Span) -> Result<OpKind> {
        let toks = &self.toks[span.clone()];
        let [t] = toks else {
            return Err(Error::unsupported(
                "RETURN of an expression in a trigger function (return NEW, OLD, NULL or a row variable)",
            ));
        };
        if parse::is_word(&t.t, "null") {
            return Ok(OpKind::ReturnRow(None));
        }
        let name = word_name(&t.t).unwrap_or_default();
        let width = self.lookup("new").and_then(|v| match v {
            Var::Record { fields, .. } => Some(fields.len()),
            _ => None,
        });
        match self.lookup(&name) {
            Some(Var::Record { fields, open: false }) if Some(fields.len()) == width => {
                Ok(OpKind::ReturnRow(Some(fields.iter().map(|f| f.1).collect())))
            }
            _ => Err(Error::mismatch(format!(
                "returned row structure does not match the structure of the triggering table (\"{name}\")"
            ))),
        }
    }

    fn at(&self, e: Error, span: &Span, what: &str) -> Error {
        if e.context().is_some() {
            return e;
        }
        e.with_context(self_context(self.routine, self.line_of(span), what))
    }

    fn loop_body(&mut self, label: &Option<String>, body: &[Stmt]) -> Result<Vec<Op>> {
        self.labels.push((label.clone(), true));
        let r = self.stmts(body);
        self.labels.pop();
        r
    }

    /// The slot a `name`, `name.field` or `$n` assignment writes.
    fn assign_target(&mut self, span: &Span) -> Result<usize> {
        let toks: Vec<&Token> = self.toks[span.clone()].iter().map(|t| &t.t).collect();
        let (name, field) = match toks.as_slice() {
            [n] => (word_name(n), None),
            [n, Token::Period, f] => (word_name(n), word_name(f)),
            _ => return Err(Error::unsupported(format!("assignment to \"{}\"", self.text(span)))),
        };
        let name = name.unwrap_or_default();
        match (self.lookup(&name), field) {
            (Some(Var::Scalar { slot, constant: false }), None) => Ok(*slot),
            (Some(Var::Scalar { constant: true, .. }), None) => {
                Err(Error::Syntax(format!("variable \"{name}\" is declared CONSTANT")))
            }
            (Some(Var::Record { fields, .. }), Some(f)) => fields
                .iter()
                .find(|x| x.0 == f)
                .map(|x| x.1)
                .ok_or_else(|| Error::UndefinedColumn(format!("\"{f}\" of record \"{name}\""))),
            (Some(Var::Array(_)), _) => Err(Error::unsupported("assignment to an array variable")),
            (Some(_), _) => Err(Error::unsupported(format!("assignment to \"{}\"", self.text(span)))),
            (None, _) => Err(Error::Syntax(format!("\"{name}\" is not a known variable"))),
        }
    }

    /// INTO / FOR targets for the columns of `planned`.
    /// The slots of an INTO list or loop targets: scalar variables, or one
    /// record variable. A `record` takes the shape of `planned`'s rows,
    /// which must then be known (not for dynamic SQL).
    fn targets(&mut self, span: &Span, planned: Option<&Planned>) -> Result<Vec<usize>> {
        let toks: Vec<Token> = self.toks[span.clone()].iter().map(|t| t.t.clone()).collect();
        let parts: Vec<&[Token]> = toks.split(|t| *t == Token::Comma).collect();
        if let [[one]] = parts.as_slice() {
            let name = word_name(one).unwrap_or_default();
            if let (Some(Var::Record { open: true, .. }), None) = (self.lookup(&name), planned) {
                return Err(Error::Unsupported(format!(
                    "dynamic SQL cannot fill variable \"{name}\" of type record, whose fields would be known only when it runs: declare it with a table's %ROWTYPE or a composite type, or use scalar variables"
                )));
            }
            if let (Some(Var::Record { open: true, .. }), Some(planned)) = (self.lookup(&name), planned) {
                let fields: Vec<(String, usize)> = planned
                    .columns
                    .iter()
                    .map(|c| (c.name.clone(), self.slot(c.ty.clone().unwrap_or(DataType::Text))))
                    .collect();
                let slots = fields.iter().map(|f| f.1).collect();
                if let Some(v) = self.lookup_mut(&name) {
                    *v = Var::Record { fields, open: false };
                }
                return Ok(slots);
            }
            if let Some(Var::Record { fields, .. }) = self.lookup(&name) {
                return Ok(fields.iter().map(|f| f.1).collect());
            }
        }
        let mut out = Vec::new();
        let mut at = span.start;
        for p in parts {
            let s = at..at + p.len();
            at += p.len() + 1;
            if p.is_empty() {
                return Err(Error::Syntax("syntax error in INTO list".into()));
            }
            out.push(self.assign_target(&s)?);
        }
        Ok(out)
    }

    fn foreach(&mut self, target: &Span, array: &Span) -> Result<(usize, Vec<usize>)> {
        let name = match &self.toks[array.clone()] {
            [t] => word_name(&t.t).unwrap_or_default(),
            _ => return Err(Error::unsupported("FOREACH over an expression (name an array variable)")),
        };
        let Some(Var::Array(a)) = self.lookup(&name).cloned() else {
            return Err(Error::mismatch(format!("FOREACH expression must yield an array, not \"{name}\"")));
        };
        self.arrays_read.insert(a.arr);
        let targets = match &a.elem {
            Elem::Scalar(_) => vec![self.assign_target(target)?],
            Elem::Composite(c) => {
                let tname = match &self.toks[target.clone()] {
                    [t] => word_name(&t.t).unwrap_or_default(),
                    _ => String::new(),
                };
                match self.lookup(&tname).cloned() {
                    Some(Var::Record { fields, open: false }) if fields.len() == c.fields.len() => {
                        fields.iter().map(|f| f.1).collect()
                    }
                    Some(Var::Record { open: true, .. }) => {
                        let fields: Vec<(String, usize)> =
                            c.fields.iter().map(|(n, t)| (n.clone(), self.slot(t.clone()))).collect();
                        let slots = fields.iter().map(|f| f.1).collect();
                        if let Some(v) = self.lookup_mut(&tname) {
                            *v = Var::Record { fields, open: false };
                        }
                        slots
                    }
                    _ => {
                        return Err(Error::mismatch(format!(
                            "FOREACH over {}[] needs a variable of type {} or record",
                            c.name, c.name
                        )))
                    }
                }
            }
        };
        Ok((a.arr, targets))
    }

    fn raise(
        &mut self,
        level: Level,
        condition: &Option<String>,
        format: &Option<String>,
        args: &[Span],
        options: &[(String, Span)],
    ) -> Result<OpKind> {
        let mut code = "P0001";
        let mut message = Vec::new();
        if let Some(c) = condition {
            code = condition_code(c)
                .ok_or_else(|| Error::UndefinedObject(format!("unrecognized exception condition \"{c}\"")))?;
            if format.is_none() {
                message.push(MessagePart::Text(c.clone()));
            }
        }
        if let Some(f) = format {
            let mut args = args.iter();
            let mut text = String::new();
            let mut chars = f.chars().peekable();
            while let Some(ch) = chars.next() {
                if ch == '%' {
                    if chars.peek() == Some(&'%') {
                        chars.next();
                        text.push('%');
                        continue;
                    }
                    let Some(a) = args.next() else {
                        return Err(Error::Syntax("too few parameters specified for RAISE".into()));
                    };
                    message.push(MessagePart::Text(std::mem::take(&mut text)));
                    message.push(MessagePart::Arg(self.expr(a)?));
                } else {
                    text.push(ch);
                }
            }
            if args.next().is_some() {
                return Err(Error::Syntax("too many parameters specified for RAISE".into()));
            }
            message.push(MessagePart::Text(text));
        }
        let mut opts = Vec::new();
        for (name, span) in options {
            let o = match name.as_str() {
                "message" => RaiseOption::Message,
                "detail" => RaiseOption::Detail,
                "hint" => RaiseOption::Hint,
                "errcode" => RaiseOption::Errcode,
                other => return Err(Error::unsupported(format!("RAISE option {}", other.to_uppercase()))),
            };
            if o == RaiseOption::Errcode {
                if let [t] = &self.toks[span.clone()] {
                    if let Token::SingleQuotedString(s) = &t.t {
                        code = condition_code(s)
                            .ok_or_else(|| Error::Syntax(format!("invalid SQLSTATE code \"{s}\"")))?;
                        continue;
                    }
                }
            }
            if o == RaiseOption::Message && format.is_some() {
                return Err(Error::Syntax("RAISE option already specified: MESSAGE".into()));
            }
            opts.push((o, self.expr(span)?));
        }
        Ok(OpKind::Raise { level, code, message, options: opts })
    }

    fn sql_stmt(&mut self, span: &Span, perform: bool) -> Result<OpKind> {
        if perform {
            let (text, pre) = self.rewrite(span.clone(), None)?;
            let stmt = self.sql_text(&format!("SELECT {text}"), pre)?;
            return Ok(OpKind::Sql { stmt, into: None });
        }
        let into = self.find_into(span);
        let stmt = self.sql(span, into.as_ref().map(|i| i.0.clone()))?;
        if let Statement::Utility(_) = stmt.planned.statement {
            return Err(Error::unsupported(format!(
                "\"{}\" in a PL/pgSQL function",
                crate::planner::first_words(self.text(span)).to_uppercase()
            )));
        }
        match into {
            None => {
                if matches!(stmt.planned.statement, Statement::Query(_)) {
                    return Err(Error::other(
                        "42601",
                        "query has no destination for result data (use PERFORM to discard the result)",
                    ));
                }
                Ok(OpKind::Sql { stmt, into: None })
            }
            Some((_, targets, strict)) => {
                if stmt.planned.columns.is_empty() {
                    return Err(Error::Syntax("INTO used with a command that cannot return data".into()));
                }
                let slots = self.targets(&targets, Some(&stmt.planned))?;
                let many = matches!(stmt.planned.statement, Statement::Query(_));
                Ok(OpKind::Sql { stmt, into: Some((slots, strict, many)) })
            }
        }
    }

    /// An EXECUTE's command and USING values; an untyped USING value is
    /// text.
    fn dynamic(&mut self, d: &parse::Dynamic) -> Result<CDynamic> {
        let command = self.expr(&d.command)?;
        let (mut using, mut types) = (Vec::new(), Vec::new());
        for u in &d.using {
            let (e, ty) = self.typed_expr(u)?;
            using.push(e);
            types.push(ty.unwrap_or(DataType::Text));
        }
        Ok(CDynamic { command, using, types })
    }

    /// The body of a LANGUAGE sql function: its statements in order, the
    /// last one's rows the result. A scalar function returns the first
    /// column of its first row (NULL without rows); a set-returning one
    /// all its rows; a void function or a procedure nothing.
    fn sql_body(&mut self) -> Result<Vec<Op>> {
        let what = "SQL statement";
        let mut spans = Vec::new();
        let mut start = 0;
        let mut depth = 0i32;
        for (i, t) in self.toks.iter().enumerate() {
            match t.t {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                Token::SemiColon if depth == 0 => {
                    if i > start {
                        spans.push(start..i);
                    }
                    start = i + 1;
                }
                _ => {}
            }
        }
        if start < self.toks.len() {
            spans.push(start..self.toks.len());
        }
        let mismatch = |c: &Self| {
            Error::other(
                "42P13",
                format!(
                    "return type mismatch in function declared to return {}: the final statement must be a SELECT or INSERT/UPDATE/DELETE RETURNING with {}",
                    c.result_name(),
                    match c.routine.set_columns() { Some(cols) => format!("{} columns", cols.len()), None => "one column".into() }
                ),
            )
        };
        let returns_void = matches!(self.routine.returns, Returns::Void);
        if spans.is_empty() && !returns_void {
            return Err(mismatch(self));
        }
        let mut ops = Vec::new();
        let last = spans.len().saturating_sub(1);
        for (k, span) in spans.iter().enumerate() {
            // A SQL function's errors name the statement by its number.
            let line = k + 1;
            let stmt = self.sql(span, None).map_err(|e| match e.context() {
                Some(_) => e,
                None => e.with_context(self_context(self.routine, line, what)),
            })?;
            let width = stmt.planned.columns.len();
            let kind = match (&self.routine.returns, self.routine.set_columns()) {
                _ if k < last || returns_void => OpKind::Sql { stmt, into: None },
                (_, Some(cols)) if width == cols.len() => OpKind::ReturnQuery(stmt),
                (Returns::Scalar(t), None) if width == 1 => {
                    // The OUT parameter, when the result is one, or a slot
                    // of its own.
                    let out = self.routine.params.iter().position(|p| p.mode != Mode::In);
                    let out = out.and_then(|i| match self.lookup(&format!("${}", i + 1)) {
                        Some(Var::Scalar { slot, .. }) => Some(*slot),
                        _ => None,
                    });
                    let slot = out.unwrap_or_else(|| self.slot(t.clone()));
                    let into = Some((vec![slot], false, true));
                    ops.push(Op { line, what, kind: OpKind::Sql { stmt, into } });
                    self.read.insert(slot);
                    let value = CExpr { pre: vec![], expr: Expr::Param(slot) };
                    OpKind::Return(out.is_none().then_some(value))
                }
                _ => return Err(mismatch(self)),
            };
            ops.push(Op { line, what, kind });
        }
        Ok(ops)
    }

    /// The result type as errors name it.
    fn result_name(&self) -> String {
        match &self.routine.returns {
            Returns::Scalar(t) => t.sql_name(),
            Returns::SetOf(t) => format!("SETOF {}", t.sql_name()),
            Returns::Table(_) => "TABLE".into(),
            Returns::Void => "void".into(),
            Returns::Trigger => "trigger".into(),
        }
    }

    /// `INTO [STRICT] targets` inside a statement: (the tokens to cut, the
    /// targets, strict).
    fn find_into(&self, span: &Span) -> Option<(Span, Span, bool)> {
        let toks = &self.toks[span.clone()];
        let first = toks.first()?;
        let dml = ["insert", "update", "delete", "merge"].iter().any(|k| parse::is_word(&first.t, k));
        let mut depth = 0;
        let mut after_returning = !dml;
        for (i, t) in toks.iter().enumerate() {
            match &t.t {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                _ if depth == 0 && parse::is_word(&t.t, "returning") => after_returning = true,
                _ if depth == 0
                    && after_returning
                    && parse::is_word(&t.t, "into")
                    && !(i > 0 && parse::is_word(&toks[i - 1].t, "insert")) =>
                {
                    let mut j = i + 1;
                    let strict = toks.get(j).is_some_and(|t| parse::is_word(&t.t, "strict"));
                    if strict {
                        j += 1;
                    }
                    let tstart = j;
                    loop {
                        if !matches!(toks.get(j).map(|t| &t.t), Some(Token::Word(_) | Token::Placeholder(_)))
                        {
                            return None;
                        }
                        j += 1;
                        if toks.get(j).map(|t| &t.t) == Some(&Token::Period) {
                            j += 2;
                        }
                        if toks.get(j).map(|t| &t.t) == Some(&Token::Comma) {
                            j += 1;
                            continue;
                        }
                        break;
                    }
                    let base = span.start;
                    return Some((base + i..base + j, base + tstart..base + j, strict));
                }
                _ => {}
            }
        }
        None
    }

    fn sql(&mut self, span: &Span, skip: Option<Span>) -> Result<CStmt> {
        let (text, pre) = self.rewrite(span.clone(), skip)?;
        self.sql_text(&text, pre)
    }

    fn sql_text(&mut self, text: &str, pre: Vec<Fetch>) -> Result<CStmt> {
        let place = if self.routine.sql { "a SQL function" } else { "a PL/pgSQL function" };
        let s = one_statement(text, place)?;
        let declared = self.slots.iter().cloned().map(Some).collect();
        let planned = crate::planner::statement::plan_statement_with(
            self.catalog,
            &self.search_path,
            &s,
            declared,
            &self.transition,
        )?;
        self.needs.extend(planned.needs.iter().cloned());
        Ok(CStmt { pre, planned })
    }

    fn expr(&mut self, span: &Span) -> Result<CExpr> {
        Ok(self.typed_expr(span)?.0)
    }

    /// An expression and its type.
    fn typed_expr(&mut self, span: &Span) -> Result<(CExpr, Option<DataType>)> {
        let (text, pre) = self.rewrite(span.clone(), None)?;
        self.expr_text(&text, pre)
    }

    /// An expression already rewritten (variables as `$n`), and its type.
    fn expr_text(&mut self, text: &str, pre: Vec<Fetch>) -> Result<(CExpr, Option<DataType>)> {
        let e = crate::parser::parse_expression(text)?;
        let mut b =
            Binder::new(self.catalog, &self.search_path, self.slots.iter().cloned().map(Some).collect());
        let scope = crate::planner::bind::Scope::default();
        let (expr, ty) = b.expr(&e, &crate::planner::bind_ctx(&scope))?;
        self.needs.extend(b.needs.into_inner());
        Ok((CExpr { pre, expr }, ty))
    }

    /// The CASE statement, as an IF over its branches. A simple CASE
    /// evaluates its operand once, into a slot of its own, and each WHEN
    /// list becomes `slot IN (list)`: equal to one of the values (a NULL
    /// operand matches none). Without ELSE, a CASE no branch takes fails
    /// with CASE_NOT_FOUND, as in PostgreSQL.
    fn case_stmt(
        &mut self,
        operand: &Option<Span>,
        branches: &[(Span, Vec<Stmt>)],
        otherwise: &Option<Vec<Stmt>>,
        line: usize,
    ) -> Result<Op> {
        let what = "CASE";
        let mut ops = Vec::new();
        let probe = match operand {
            Some(span) => {
                let (value, ty) = self.typed_expr(span).map_err(|e| self.at(e, span, what))?;
                let slot = self.slot(ty.unwrap_or(DataType::Text));
                self.read.insert(slot);
                ops.push(Op {
                    line,
                    what,
                    kind: OpKind::Assign { slot, value: Some(value), not_null: None },
                });
                Some(slot)
            }
            None => None,
        };
        let mut out = Vec::new();
        for (cond, body) in branches {
            let c = match probe {
                None => self.expr(cond),
                Some(slot) => self
                    .rewrite(cond.clone(), None)
                    .and_then(|(text, pre)| self.expr_text(&format!("${} IN ({text})", slot + 1), pre))
                    .map(|c| c.0),
            };
            let c = c.map_err(|e| self.at(e, cond, what))?;
            out.push((c, self.stmts(body)?));
        }
        let otherwise = match otherwise {
            Some(o) => self.stmts(o)?,
            None => {
                let hint = CExpr {
                    pre: vec![],
                    expr: Expr::Literal(Value::Text("CASE statement is missing ELSE part.".into())),
                };
                let kind = OpKind::Raise {
                    level: Level::Exception,
                    code: "20000",
                    message: vec![MessagePart::Text("case not found".into())],
                    options: vec![(RaiseOption::Hint, hint)],
                };
                vec![Op { line, what, kind }]
            }
        };
        ops.push(Op { line, what, kind: OpKind::If { branches: out, otherwise } });
        Ok(Op { line, what, kind: OpKind::Block { label: None, body: ops, handlers: vec![] } })
    }

    /// The text of `span` with variables replaced by `$n` (and `skip`
    /// left out), plus the array fetches it needs.
    fn rewrite(&mut self, span: Span, skip: Option<Span>) -> Result<(String, Vec<Fetch>)> {
        let toks = self.toks;
        let mut out = String::new();
        let mut pre = Vec::new();
        let mut copied = toks[span.start].start;
        let mut i = span.start;
        // INSERT column lists and SET lists name columns.
        let mut insert_state = 0u8;
        let mut collist_depth: Option<i32> = None;
        let mut depth = 0i32;
        let mut in_set = false;
        let kw = |k: usize, w: &str| k < span.end && parse::is_word(&toks[k].t, w);
        while i < span.end {
            if let Some(s) = &skip {
                if i == s.start {
                    out.push_str(&self.src[copied..toks[i].start]);
                    copied = toks[s.end - 1].end;
                    i = s.end;
                    continue;
                }
            }
            let t = &toks[i].t;
            match t {
                Token::LParen => {
                    depth += 1;
                    if matches!(insert_state, 3 | 6) && collist_depth.is_none() {
                        collist_depth = Some(depth);
                    }
                    insert_state = 0;
                }
                Token::RParen => {
                    if collist_depth == Some(depth) {
                        collist_depth = None;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            // INSERT INTO name[.name] [AS alias] ( columns )
            insert_state = match (insert_state, t) {
                _ if kw(i, "insert") => 1,
                (1, _) if kw(i, "into") => 2,
                (2 | 4, Token::Word(_)) => 3,
                (3, Token::Period) => 4,
                (3, _) if kw(i, "as") => 5,
                (5, Token::Word(_)) => 6,
                _ => 0,
            };
            if kw(i, "set") {
                in_set = true;
            } else if ["where", "from", "returning"].iter().any(|w| kw(i, w)) {
                in_set = false;
            }
            let prev = (i > span.start).then(|| &toks[i - 1].t);
            let next = toks.get(i + 1).filter(|_| i + 1 < span.end).map(|t| &t.t);
            let name = word_name(t);
            let column_position = collist_depth.is_some()
                || matches!(prev, Some(Token::Period | Token::DoubleColon))
                || prev.is_some_and(|p| {
                    ["as", "from", "join", "into", "update", "table"].iter().any(|w| parse::is_word(p, w))
                        // `IS DISTINCT FROM x` compares with a value.
                        && !(parse::is_word(p, "from")
                            && i >= span.start + 2
                            && parse::is_word(&toks[i - 2].t, "distinct"))
                })
                || (in_set
                    && next == Some(&Token::Eq)
                    && prev.is_some_and(|p| *p == Token::Comma || parse::is_word(p, "set")));
            let var = match (&name, column_position) {
                (Some(n), false) => self.lookup(n).cloned(),
                _ => None,
            };
            // array_length(arr, 1), array_upper(arr, 1), array_lower(arr, 1), cardinality(arr)
            if let (Some(n), Some(Token::LParen)) = (&name, next) {
                if let Some((replacement, len, arr)) = self.array_function(n, i, span.end) {
                    self.arrays_read.insert(arr);
                    out.push_str(&self.src[copied..toks[i].start]);
                    out.push_str(&replacement);
                    copied = toks[i + len - 1].end;
                    i += len;
                    continue;
                }
            }
            let Some(var) = var else {
                i += 1;
                continue;
            };
            // `(arr[i]).field`, PostgreSQL's spelling, starts one token early.
            let mut back = 0;
            let (replacement, used) = match var {
                Var::Scalar { slot, .. } if !matches!(next, Some(Token::Period | Token::LParen)) => {
                    self.read.insert(slot);
                    (format!("${}", slot + 1), 1)
                }
                Var::Record { fields, .. } if next == Some(&Token::Period) => {
                    let f = toks.get(i + 2).and_then(|t| word_name(&t.t)).unwrap_or_default();
                    let slot = fields.iter().find(|x| x.0 == f).map(|x| x.1).ok_or_else(|| {
                        Error::other("42703", format!("record \"{}\" has no field \"{f}\"", name.clone().unwrap_or_default()))
                    })?;
                    (format!("${}", slot + 1), 3)
                }
                Var::Array(a) if next == Some(&Token::LBracket) => {
                    let mut j = i + 1;
                    let mut d = 0;
                    while j < span.end {
                        match toks[j].t {
                            Token::LBracket => d += 1,
                            Token::RBracket => {
                                d -= 1;
                                if d == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                    if j >= span.end || j == i + 2 {
                        return Err(Error::Syntax(format!("bad subscript of \"{}\"", name.unwrap_or_default())));
                    }
                    let index = self.expr(&(i + 2..j))?;
                    let mut used = j + 1 - i;
                    let tok = |k: usize| toks.get(k).filter(|_| k < span.end).map(|t| &t.t);
                    if matches!(&a.elem, Elem::Composite(_))
                        && prev == Some(&Token::LParen)
                        && tok(j + 1) == Some(&Token::RParen)
                        && tok(j + 2) == Some(&Token::Period)
                    {
                        back = 1;
                        used += 1;
                        j += 1;
                        depth -= 1;
                    }
                    let (field, ty) = match &a.elem {
                        Elem::Scalar(t) => (None, t.clone()),
                        Elem::Composite(c) => {
                            let f = (toks.get(j + 1).map(|t| &t.t) == Some(&Token::Period))
                                .then(|| toks.get(j + 2).and_then(|t| word_name(&t.t)))
                                .flatten()
                                .ok_or_else(|| {
                                    Error::Unsupported(format!(
                                        "a whole element of composite array \"{0}\" cannot be used here; name a field: ({0}[i]).field",
                                        name.clone().unwrap_or_default()
                                    ))
                                })?;
                            let pos = c.fields.iter().position(|x| x.0 == f).ok_or_else(|| {
                                Error::UndefinedColumn(format!("\"{f}\" of type {}", c.name))
                            })?;
                            used += 2;
                            (Some(pos), c.fields[pos].1.clone())
                        }
                    };
                    let slot = self.slot(ty);
                    self.arrays_read.insert(a.arr);
                    pre.push(Fetch { slot, arr: a.arr, index, field, lower: a.lower });
                    (format!("${}", slot + 1), used)
                }
                Var::Array(_) => {
                    return Err(Error::Unsupported(format!(
                        "array variable \"{}\" cannot be used here: read arrays with FOREACH, subscripts, array_length, array_upper, array_lower or cardinality",
                        name.unwrap_or_default()
                    )))
                }
                Var::Record { .. } => {
                    return Err(Error::Unsupported(format!(
                        "record \"{0}\" cannot be used as a whole here; name its fields ({0}.field)",
                        name.unwrap_or_default()
                    )))
                }
                Var::Scalar { .. } => {
                    i += 1;
                    continue;
                }
            };
            out.push_str(&self.src[copied..toks[i - back].start]);
            out.push_str(&replacement);
            copied = toks[i + used - 1].end;
            i += used;
        }
        if copied < toks[span.end - 1].end {
            out.push_str(&self.src[copied..toks[span.end - 1].end]);
        }
        Ok((out, pre))
    }

    /// `f(arr [, 1])` over an array variable at token `i`: the text to put
    /// in its place and how many tokens it covers.
    fn array_function(&self, f: &str, i: usize, end: usize) -> Option<(String, usize, usize)> {
        let toks = self.toks;
        if !matches!(f, "array_length" | "array_upper" | "array_lower" | "cardinality") {
            return None;
        }
        let arg = toks.get(i + 2).filter(|_| i + 2 < end).and_then(|t| word_name(&t.t))?;
        let Some(Var::Array(a)) = self.lookup(&arg) else { return None };
        let tail: Vec<&Token> = toks[i + 3..end.min(i + 6)].iter().map(|t| &t.t).collect();
        let dim1 =
            matches!(tail.as_slice(), [Token::Comma, Token::Number(n, _), Token::RParen, ..] if n == "1");
        match f {
            "cardinality" if tail.first() == Some(&&Token::RParen) => {
                Some((format!("${}", a.card + 1), 4, a.arr))
            }
            "array_length" | "array_upper" if dim1 => Some((format!("${}", a.len + 1), 6, a.arr)),
            "array_lower" if dim1 => {
                Some((format!("(CASE WHEN ${} IS NULL THEN NULL ELSE 1 END)", a.len + 1), 6, a.arr))
            }
            _ => None,
        }
    }
}

/// The one statement of `text`, if it is one a routine may run: a query,
/// DML or CALL (`place` names where, for the error).
pub(crate) fn one_statement(text: &str, place: &str) -> Result<ast::Statement> {
    let mut stmts = crate::parser::parse(text)?;
    if stmts.len() != 1 {
        return Err(Error::Syntax(format!("one SQL statement expected in {place}")));
    }
    let s = stmts.remove(0);
    let allowed = matches!(
        s,
        ast::Statement::Query(_)
            | ast::Statement::Insert(_)
            | ast::Statement::Update(_)
            | ast::Statement::Delete(_)
            | ast::Statement::Merge(_)
            | ast::Statement::Call(_)
    );
    if !allowed {
        return Err(Error::unsupported(format!(
            "\"{}\" in {place}",
            crate::planner::first_words(text).to_uppercase()
        )));
    }
    Ok(s)
}

/// The context line of an error at `line` of `routine`.
/// (For a LANGUAGE sql function, `line` is the statement's number, as
/// PostgreSQL counts them.)
pub(crate) fn self_context(routine: &Compiled, line: usize, what: &str) -> String {
    if routine.sql {
        return format!("SQL function \"{}\" statement {line}", routine.name);
    }
    format!("PL/pgSQL function {} line {line} at {what}", routine.signature)
}

/// One exception handler: the errors it takes, its statements, and the
/// slots of SQLSTATE and SQLERRM.
pub(crate) struct Handler {
    pub catches: Vec<Catch>,
    pub body: Vec<Op>,
    pub sqlstate: usize,
    pub sqlerrm: usize,
}

/// What a handler's condition matches.
#[derive(Debug)]
pub(crate) enum Catch {
    /// OTHERS: every error but a cancel (57014) and a failed ASSERT.
    Others,
    /// One SQLSTATE.
    Code(&'static str),
    /// A whole class (a code ending in `000`, such as
    /// `integrity_constraint_violation`).
    Class(&'static str),
}

impl Catch {
    fn of(condition: &str) -> Result<Catch> {
        if condition == "others" {
            return Ok(Catch::Others);
        }
        let code = match condition.strip_prefix("sqlstate:") {
            Some(text) => runtime_code(text)?,
            None => condition_code(condition).ok_or_else(|| {
                Error::UndefinedObject(format!("unrecognized exception condition \"{condition}\""))
            })?,
        };
        Ok(if code.ends_with("000") { Catch::Class(&code[..2]) } else { Catch::Code(code) })
    }

    /// Whether an error with SQLSTATE `code` is caught.
    pub fn matches(&self, code: &str) -> bool {
        match self {
            Catch::Others => code != "57014" && code != "P0004",
            Catch::Code(c) => *c == code,
            Catch::Class(c) => code.starts_with(c),
        }
    }
}

/// The SQLSTATE of a condition name or a five-character code.
pub(crate) fn condition_code(c: &str) -> Option<&'static str> {
    let named = match c.to_lowercase().as_str() {
        "raise_exception" => "P0001",
        "no_data_found" => "P0002",
        "too_many_rows" => "P0003",
        "assert_failure" => "P0004",
        "case_not_found" => "20000",
        "undefined_object" => "42704",
        "wrong_object_type" => "42809",
        "invalid_sql_statement_name" => "26000",
        "ambiguous_function" => "42725",
        "unique_violation" => "23505",
        "foreign_key_violation" => "23503",
        "check_violation" => "23514",
        "not_null_violation" => "23502",
        "division_by_zero" => "22012",
        "numeric_value_out_of_range" => "22003",
        "invalid_parameter_value" => "22023",
        "invalid_text_representation" => "22P02",
        "data_exception" => "22000",
        "integrity_constraint_violation" => "23000",
        "string_data_right_truncation" => "22001",
        "invalid_datetime_format" => "22007",
        "lock_not_available" => "55P03",
        "query_canceled" => "57014",
        "undefined_column" => "42703",
        "undefined_function" => "42883",
        "duplicate_table" => "42P07",
        "duplicate_object" => "42710",
        "syntax_error" => "42601",
        "out_of_memory" => "53200",
        "program_limit_exceeded" => "54000",
        "transaction_rollback" => "40000",
        "serialization_failure" => "40001",
        "deadlock_detected" => "40P01",
        "insufficient_privilege" => "42501",
        "undefined_table" => "42P01",
        "feature_not_supported" => "0A000",
        _ => "",
    };
    if !named.is_empty() {
        return Some(named);
    }
    if c.len() == 5 && c.chars().all(|ch| ch.is_ascii_digit() || ch.is_ascii_uppercase()) && c != "00000" {
        return Some(intern(c));
    }
    None
}

/// A SQLSTATE with a static lifetime; each distinct code is leaked once.
fn intern(code: &str) -> &'static str {
    static CODES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut codes = CODES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = codes.iter().find(|c| **c == code) {
        return c;
    }
    let c: &'static str = Box::leak(code.to_string().into_boxed_str());
    codes.push(c);
    c
}

/// Whether an SQLSTATE given to RAISE at run time is well formed.
pub(crate) fn runtime_code(text: &str) -> Result<&'static str> {
    condition_code(text).ok_or_else(|| Error::Syntax(format!("invalid SQLSTATE code \"{text}\"")))
}
