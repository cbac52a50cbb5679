//! Binding full-text search: the `tsvector`/`tsquery` functions and the
//! `@@`, `||` and `&&` operators, each a [`Builtin`] over
//! `functions::tsearch`.
//!
//! A configuration argument is a `regconfig`, which Centum keeps as its
//! name (text): a constant one (`'english'`, `'simple'::regconfig`) is
//! checked when the statement is planned, 42704 for an unknown name, as
//! PostgreSQL resolves its OID then; another is checked when the call
//! runs. An untyped operand of `@@` beside a `tsvector` is a `tsquery`,
//! beside a `tsquery` it is text (`text @@ tsquery` parses the text with
//! the default configuration) and beside text it is text (`text @@ text`
//! is `to_tsvector(a) @@ plainto_tsquery(b)`), as PostgreSQL resolves
//! them.

use super::bind::{Binder, Typed};
use super::expr::Expr;
use crate::error::{Error, Result};
use crate::functions::arrays::builtin;
use crate::functions::tsearch as exec;
use crate::functions::ScalarImpl;
use centum_types::tsearch::config::Config;
use centum_types::{DataType, Value};
use sqlparser::ast;

/// The functions bound here.
const NAMES: &[&str] = &[
    "to_tsvector",
    "to_tsquery",
    "plainto_tsquery",
    "phraseto_tsquery",
    "websearch_to_tsquery",
    "get_current_ts_config",
    "strip",
    "setweight",
    "numnode",
    "tsvector_to_array",
    "array_to_tsvector",
    "ts_rank",
    "tsquery_phrase",
    "length",
];

/// Whether `name` may be a text search function (`length` only for a
/// `tsvector` argument).
pub(crate) fn is_ts_function(name: &str) -> bool {
    NAMES.contains(&name)
}

fn is_ts(t: &Option<DataType>) -> bool {
    matches!(t, Some(DataType::TsVector | DataType::TsQuery))
}

fn no_operator(l: &Option<DataType>, symbol: &str, r: &Option<DataType>) -> Error {
    let n = |t: &Option<DataType>| t.as_ref().map_or("unknown".to_string(), |t| t.sql_name());
    Error::TypeMismatch {
        code: "42883",
        message: format!("operator does not exist: {} {symbol} {}", n(l), n(r)),
    }
}

fn text_like(t: &Option<DataType>) -> bool {
    t.as_ref().is_none_or(|t| t.is_string())
}

impl Binder<'_> {
    /// `!! tsquery`.
    pub(crate) fn ts_not(&mut self, q: Typed) -> Result<Typed> {
        let q = self.typed_as(q, &DataType::TsQuery)?;
        let ret = DataType::TsQuery;
        Ok((Expr::Func(builtin("tsquery_not", Some(ret.clone()), true, exec::query_not), vec![q]), Some(ret)))
    }

    /// A configuration argument: a constant name is checked now.
    fn ts_config(&mut self, a: Typed) -> Result<Expr> {
        if let (Expr::Literal(Value::Text(s)), _) = &a {
            let c = Config::from_name(s)?;
            return Ok(Expr::Literal(Value::Text(c.name().to_string())));
        }
        if !text_like(&a.1) {
            return Err(Error::UndefinedFunction("regconfig argument of a text search function".into()));
        }
        self.typed_as(a, &DataType::Text)
    }

    /// A text search function; the arguments back when `name` is not one
    /// for them (`length(text)`).
    pub(crate) fn ts_function(
        &mut self,
        name: &str,
        args: Vec<Typed>,
    ) -> Result<std::result::Result<Typed, Vec<Typed>>> {
        let types: Vec<Option<DataType>> = args.iter().map(|a| a.1.clone()).collect();
        let no = || crate::functions::arrays::no_function(name, &types);
        let (tv, tq) = (DataType::TsVector, DataType::TsQuery);
        let call = |name: &'static str, ret: DataType, eval: ScalarImpl, exprs: Vec<Expr>| {
            Ok(Ok((Expr::Func(builtin(name, Some(ret.clone()), true, eval), exprs), Some(ret))))
        };
        let parsers: Option<(&'static str, DataType, ScalarImpl)> = match name {
            "to_tsvector" => Some(("to_tsvector", tv.clone(), exec::to_tsvector)),
            "to_tsquery" => Some(("to_tsquery", tq.clone(), exec::to_tsquery)),
            "plainto_tsquery" => Some(("plainto_tsquery", tq.clone(), exec::plainto_tsquery)),
            "phraseto_tsquery" => Some(("phraseto_tsquery", tq.clone(), exec::phraseto_tsquery)),
            "websearch_to_tsquery" => Some(("websearch_to_tsquery", tq.clone(), exec::websearch_to_tsquery)),
            _ => None,
        };
        if let Some((fname, ret, eval)) = parsers {
            if !(1..=2).contains(&args.len()) || !args.iter().all(|a| text_like(&a.1)) {
                return Err(no());
            }
            let mut args = args.into_iter();
            let mut exprs = Vec::new();
            if types.len() == 2 {
                let c = args.next().expect("two arguments");
                exprs.push(self.ts_config(c)?);
            }
            let t = args.next().expect("one argument");
            exprs.push(self.typed_as(t, &DataType::Text)?);
            return call(fname, ret, eval, exprs);
        }
        // Fixed signatures: parameter types, result type, implementation.
        let (params, ret, eval, fname): (Vec<DataType>, DataType, ScalarImpl, &'static str) =
            match (name, types.as_slice()) {
                ("length", [Some(DataType::TsVector)]) => {
                    (vec![tv.clone()], DataType::Integer, exec::length, "length")
                }
                ("length", _) => return Ok(Err(args)),
                ("get_current_ts_config", []) => {
                    (vec![], DataType::Text, exec::get_current_ts_config, "get_current_ts_config")
                }
                ("strip", [_]) => (vec![tv.clone()], tv.clone(), exec::strip, "strip"),
                ("setweight", [_, _]) => {
                    (vec![tv.clone(), DataType::Text], tv.clone(), exec::setweight, "setweight")
                }
                ("numnode", [_]) => (vec![tq.clone()], DataType::Integer, exec::numnode, "numnode"),
                ("tsvector_to_array", [_]) => (
                    vec![tv.clone()],
                    DataType::Array(Box::new(DataType::Text)),
                    exec::tsvector_to_array,
                    "tsvector_to_array",
                ),
                ("array_to_tsvector", [_]) => (
                    vec![DataType::Array(Box::new(DataType::Text))],
                    tv.clone(),
                    exec::array_to_tsvector,
                    "array_to_tsvector",
                ),
                ("ts_rank", [_, _]) => {
                    (vec![tv.clone(), tq.clone()], DataType::Double, exec::ts_rank, "ts_rank")
                }
                ("ts_rank", [_, _, _]) => (
                    vec![tv.clone(), tq.clone(), DataType::Integer],
                    DataType::Double,
                    exec::ts_rank,
                    "ts_rank",
                ),
                ("tsquery_phrase", [_, _]) => {
                    (vec![tq.clone(), tq.clone()], tq.clone(), exec::query_phrase, "tsquery_phrase")
                }
                ("tsquery_phrase", [_, _, _]) => (
                    vec![tq.clone(), tq.clone(), DataType::Integer],
                    tq.clone(),
                    exec::query_phrase,
                    "tsquery_phrase",
                ),
                _ => return Err(no()),
            };
        let mut exprs = Vec::with_capacity(args.len());
        for (a, p) in args.into_iter().zip(&params) {
            let ok = match (&a.1, p) {
                (None, _) => true,
                (Some(DataType::SmallInt), DataType::Integer) => true,
                (Some(x), p) => x == p || (x.is_string() && p.is_string()),
            };
            if !ok {
                return Err(no());
            }
            exprs.push(self.typed_as(a, p)?);
        }
        call(fname, ret, eval, exprs)
    }

    /// A binary operator with a `tsvector` or `tsquery` operand, or `@@`;
    /// the operands back when it is not a text search one.
    pub(crate) fn ts_operator(
        &mut self,
        op: &ast::BinaryOperator,
        l: Typed,
        r: Typed,
    ) -> Result<std::result::Result<Typed, (Typed, Typed)>> {
        use ast::BinaryOperator as B;
        let (lt, rt) = (l.1.clone(), r.1.clone());
        let (tv, tq) = (Some(DataType::TsVector), Some(DataType::TsQuery));
        let call = |name: &'static str, ret: DataType, eval: ScalarImpl, l: Expr, r: Expr| {
            (Expr::Func(builtin(name, Some(ret.clone()), true, eval), vec![l, r]), Some(ret))
        };
        let bool_ = DataType::Boolean;
        // Both operands of type `want`, or one of them and an untyped one.
        let both = |want: &Option<DataType>| {
            let fits = |t: &Option<DataType>| t.is_none() || t == want;
            fits(&lt) && fits(&rt) && (lt.is_some() || rt.is_some())
        };
        Ok(Ok(match op {
            B::AtAt => {
                // Which side is the query, which the document.
                let known = |t: &Option<DataType>, want: &Option<DataType>| t.is_none() || t == want;
                if lt == tv && known(&rt, &tq) {
                    let r = self.typed_as(r, &DataType::TsQuery)?;
                    call("ts_match_vq", bool_, exec::match_vq, l.0, r)
                } else if lt == tq && known(&rt, &tv) {
                    let r = self.typed_as(r, &DataType::TsVector)?;
                    call("ts_match_qv", bool_, exec::match_qv, l.0, r)
                } else if rt == tv && lt.is_none() {
                    let l = self.typed_as(l, &DataType::TsQuery)?;
                    call("ts_match_qv", bool_, exec::match_qv, l, r.0)
                } else if text_like(&lt) && rt == tq {
                    let l = self.typed_as(l, &DataType::Text)?;
                    call("ts_match_tq", bool_, exec::match_tq, l, r.0)
                } else if text_like(&lt) && text_like(&rt) {
                    let (l, r) = (self.typed_as(l, &DataType::Text)?, self.typed_as(r, &DataType::Text)?);
                    call("ts_match_tt", bool_, exec::match_tt, l, r)
                } else {
                    return Err(no_operator(&lt, "@@", &rt));
                }
            }
            B::StringConcat if both(&tv) => {
                let (l, r) = (self.typed_as(l, &DataType::TsVector)?, self.typed_as(r, &DataType::TsVector)?);
                call("tsvector_concat", DataType::TsVector, exec::concat, l, r)
            }
            B::StringConcat | B::PGOverlap if both(&tq) => {
                let (l, r) = (self.typed_as(l, &DataType::TsQuery)?, self.typed_as(r, &DataType::TsQuery)?);
                if matches!(op, B::PGOverlap) {
                    call("tsquery_and", DataType::TsQuery, exec::query_and, l, r)
                } else {
                    call("tsquery_or", DataType::TsQuery, exec::query_or, l, r)
                }
            }
            // Comparisons are the types' own; everything else is missing.
            B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq => return Ok(Err((l, r))),
            _ if is_ts(&lt) || is_ts(&rt) => return Err(no_operator(&lt, &op.to_string(), &rt)),
            _ => return Ok(Err((l, r))),
        }))
    }
}
