//! Full-text search functions and operators over `centum_types::tsearch`.
//!
//! ```text
//!   to_tsvector  to_tsquery  plainto_tsquery  phraseto_tsquery
//!   websearch_to_tsquery     ([regconfig,] text)
//!   length strip setweight numnode querytree tsvector_to_array
//!   array_to_tsvector get_current_ts_config ts_rank
//!   @@ (tsvector/text with tsquery, either way round)
//!   || (tsvector, tsquery)  && !! (tsquery)
//! ```
//!
//! A call without a configuration uses the session's
//! `default_text_search_config`, read when the call runs (as PostgreSQL's
//! `getTSCurrentConfig`); the session sets it for the thread before each
//! statement ([`set_session_config`]).

use std::cell::Cell;

use super::FnContext;
use crate::error::{Error, Result};
use centum_types::tsearch::config::Config;
use centum_types::tsearch::{pos_of, weight_of, Lexeme, QueryNode, TsQuery, TsVector};
use centum_types::Value;

thread_local! {
    static SESSION_CONFIG: Cell<Config> = const { Cell::new(Config::English) };
}

/// Sets the configuration calls without one use on this thread: the
/// running session's `default_text_search_config`.
pub(crate) fn set_session_config(config: Config) {
    SESSION_CONFIG.set(config);
}

/// The configuration calls without one use.
pub(crate) fn session_config() -> Config {
    SESSION_CONFIG.get()
}

fn unexpected(v: &Value) -> Error {
    Error::other("XX000", format!("unexpected text search argument {v:?}"))
}

fn text(v: &Value) -> Result<&str> {
    match v {
        Value::Text(s) => Ok(s),
        other => Err(unexpected(other)),
    }
}

fn vector(v: &Value) -> Result<&TsVector> {
    match v {
        Value::TsVector(t) => Ok(t),
        other => Err(unexpected(other)),
    }
}

fn query(v: &Value) -> Result<&TsQuery> {
    match v {
        Value::TsQuery(q) => Ok(q),
        other => Err(unexpected(other)),
    }
}

/// The configuration and the text of a `([config,] text)` call.
fn config_and_text(args: &[Value]) -> Result<(Config, &str)> {
    match args {
        [t] => Ok((session_config(), text(t)?)),
        [c, t] => Ok((Config::from_name(text(c)?)?, text(t)?)),
        _ => Err(Error::other("XX000", "wrong number of text search arguments")),
    }
}

/// `to_tsvector([config,] text)`.
pub(crate) fn to_tsvector(args: &[Value], _: &FnContext) -> Result<Value> {
    let (c, t) = config_and_text(args)?;
    Ok(Value::TsVector(c.to_tsvector(t)))
}

/// `to_tsquery([config,] text)`.
pub(crate) fn to_tsquery(args: &[Value], _: &FnContext) -> Result<Value> {
    let (c, t) = config_and_text(args)?;
    Ok(Value::TsQuery(c.to_tsquery(t)?))
}

/// `plainto_tsquery([config,] text)`.
pub(crate) fn plainto_tsquery(args: &[Value], _: &FnContext) -> Result<Value> {
    let (c, t) = config_and_text(args)?;
    Ok(Value::TsQuery(c.plainto_tsquery(t)))
}

/// `phraseto_tsquery([config,] text)`.
pub(crate) fn phraseto_tsquery(args: &[Value], _: &FnContext) -> Result<Value> {
    let (c, t) = config_and_text(args)?;
    Ok(Value::TsQuery(c.phraseto_tsquery(t)))
}

/// `websearch_to_tsquery([config,] text)`.
pub(crate) fn websearch_to_tsquery(args: &[Value], _: &FnContext) -> Result<Value> {
    let (c, t) = config_and_text(args)?;
    Ok(Value::TsQuery(c.websearch_to_tsquery(t)))
}

/// `get_current_ts_config()`.
pub(crate) fn get_current_ts_config(_: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Text(session_config().name().to_string()))
}

/// `length(tsvector)`.
pub(crate) fn length(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Integer(vector(&args[0])?.len() as i32))
}

/// `strip(tsvector)`.
pub(crate) fn strip(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::TsVector(vector(&args[0])?.strip()))
}

/// `setweight(tsvector, "char")`; a letter other than A-D is PostgreSQL's
/// internal error (XX000) naming the character's code.
pub(crate) fn setweight(args: &[Value], _: &FnContext) -> Result<Value> {
    let v = vector(&args[0])?;
    let w = text(&args[1])?;
    let weight = match w.chars().next().map(|c| c.to_ascii_uppercase()) {
        Some('A') => 3,
        Some('B') => 2,
        Some('C') => 1,
        Some('D') => 0,
        _ => {
            let c = w.chars().next().map_or(0, u32::from);
            return Err(Error::other("XX000", format!("unrecognized weight: {c}")));
        }
    };
    Ok(Value::TsVector(v.setweight(weight)))
}

/// `numnode(tsquery)`.
pub(crate) fn numnode(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Integer(query(&args[0])?.root.as_ref().map_or(0, |r| r.count()) as i32))
}

/// `tsvector_to_array(tsvector)`.
pub(crate) fn tsvector_to_array(args: &[Value], _: &FnContext) -> Result<Value> {
    let v = vector(&args[0])?;
    Ok(Value::Array(v.lexemes().iter().map(|l| Value::Text(l.word.clone())).collect()))
}

/// `array_to_tsvector(text[])`: 22004 for a NULL element, as PostgreSQL.
pub(crate) fn array_to_tsvector(args: &[Value], _: &FnContext) -> Result<Value> {
    let Value::Array(items) = &args[0] else { return Err(unexpected(&args[0])) };
    let mut lexemes = Vec::with_capacity(items.len());
    for i in items {
        match i {
            Value::Text(s) => lexemes.push(Lexeme { word: s.clone(), positions: vec![] }),
            Value::Null => return Err(Error::other("22004", "lexeme array may not contain nulls")),
            other => return Err(unexpected(other)),
        }
    }
    Ok(Value::TsVector(TsVector::from_lexemes(lexemes)))
}

/// `tsvector @@ tsquery`.
pub(crate) fn match_vq(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Boolean(query(&args[1])?.matches(vector(&args[0])?)))
}

/// `tsquery @@ tsvector`.
pub(crate) fn match_qv(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Boolean(query(&args[0])?.matches(vector(&args[1])?)))
}

/// `text @@ tsquery`: the text through the session's configuration.
pub(crate) fn match_tq(args: &[Value], _: &FnContext) -> Result<Value> {
    let v = session_config().to_tsvector(text(&args[0])?);
    Ok(Value::Boolean(query(&args[1])?.matches(&v)))
}

/// `text @@ text`: `to_tsvector(a) @@ plainto_tsquery(b)`.
pub(crate) fn match_tt(args: &[Value], _: &FnContext) -> Result<Value> {
    let c = session_config();
    let v = c.to_tsvector(text(&args[0])?);
    Ok(Value::Boolean(c.plainto_tsquery(text(&args[1])?).matches(&v)))
}

/// `tsvector || tsvector`.
pub(crate) fn concat(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::TsVector(vector(&args[0])?.concat(vector(&args[1])?)))
}

/// `tsquery && tsquery`.
pub(crate) fn query_and(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::TsQuery(query(&args[0])?.and(query(&args[1])?)))
}

/// `tsquery || tsquery`.
pub(crate) fn query_or(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::TsQuery(query(&args[0])?.or(query(&args[1])?)))
}

/// `!! tsquery`.
pub(crate) fn query_not(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::TsQuery(query(&args[0])?.not()))
}

/// `tsquery <-> tsquery` (`tsquery_phrase`), and with a distance.
pub(crate) fn query_phrase(args: &[Value], _: &FnContext) -> Result<Value> {
    let (a, b) = (query(&args[0])?, query(&args[1])?);
    let d = match args.get(2) {
        None => 1,
        Some(Value::Integer(d)) if (0..=16384).contains(d) => *d as u16,
        Some(Value::Integer(_)) => {
            return Err(Error::InvalidParameter(
                "distance in phrase operator must be an integer value between zero and 16384 inclusive"
                    .into(),
            ))
        }
        Some(other) => return Err(unexpected(other)),
    };
    Ok(Value::TsQuery(match (&a.root, &b.root) {
        (None, _) => b.clone(),
        (_, None) => a.clone(),
        (Some(l), Some(r)) => {
            TsQuery::new(Some(QueryNode::Phrase(Box::new(l.clone()), Box::new(r.clone()), d)))
        }
    }))
}

/// `ts_rank([weights,] tsvector, tsquery [, normalization])`: PostgreSQL's
/// `ts_rank` with the default weights {0.1, 0.2, 0.4, 1.0}, as a double.
pub(crate) fn ts_rank(args: &[Value], _: &FnContext) -> Result<Value> {
    let (v, q, norm) = match args {
        [v, q] => (vector(v)?, query(q)?, 0),
        [v, q, Value::Integer(n)] => (vector(v)?, query(q)?, *n),
        _ => return Err(Error::other("XX000", "wrong ts_rank arguments")),
    };
    Ok(Value::Double(rank(v, q, norm)))
}

/// PostgreSQL's default weights of D, C, B, A.
const WEIGHTS: [f64; 4] = [0.1, 0.2, 0.4, 1.0];

/// The lexeme operands of a query (`QI_VAL` items), each once.
fn operands(q: &QueryNode, out: &mut Vec<(String, bool)>) {
    match q {
        QueryNode::Lexeme { word, prefix, .. } => {
            if !out.iter().any(|(w, p)| w == word && p == prefix) {
                out.push((word.clone(), *prefix));
            }
        }
        QueryNode::Not(q) => operands(q, out),
        QueryNode::And(l, r) | QueryNode::Or(l, r) | QueryNode::Phrase(l, r, _) => {
            operands(l, out);
            operands(r, out);
        }
    }
}

/// PostgreSQL's `calc_rank`: `calc_rank_and` (operands by their closest
/// pairs) when the top operator is `&` or a phrase over two or more
/// operands, `calc_rank_or` (operands by their occurrences) otherwise.
fn rank(v: &TsVector, q: &TsQuery, norm: i32) -> f64 {
    let Some(root) = &q.root else { return 0.0 };
    let mut ops = Vec::new();
    operands(root, &mut ops);
    let positions = |w: &str, prefix: bool| -> Vec<u16> {
        let mut out: Vec<u16> = v
            .lexemes()
            .iter()
            .filter(|l| if prefix { l.word.starts_with(w) } else { l.word == w })
            .flat_map(|l| {
                if l.positions.is_empty() {
                    vec![centum_types::tsearch::make_pos(16383, 0)]
                } else {
                    l.positions.clone()
                }
            })
            .collect();
        out.sort_by_key(|p| pos_of(*p));
        out
    };
    let wpos = |p: u16| WEIGHTS[usize::from(weight_of(p))];
    let and = matches!(root, QueryNode::And(..) | QueryNode::Phrase(..)) && ops.len() > 1;
    let mut res = if and { -1.0f64 } else { 0.0 };
    if and {
        // calc_rank_and: every pair of operands, by their closest occurrences.
        let lists: Vec<Vec<u16>> = ops.iter().map(|(w, p)| positions(w, *p)).collect();
        for i in 0..lists.len() {
            for k in 0..i {
                for &pi in &lists[i] {
                    for &pk in &lists[k] {
                        let dist = (i32::from(pos_of(pi)) - i32::from(pos_of(pk))).abs();
                        if dist != 0 {
                            let curw = (wpos(pi) * wpos(pk) * word_distance(dist)).sqrt();
                            res = if res < 0.0 { curw } else { 1.0 - (1.0 - res) * (1.0 - curw) };
                        }
                    }
                }
            }
        }
    } else {
        // calc_rank_or.
        for (w, p) in &ops {
            let list = positions(w, *p);
            if list.is_empty() {
                continue;
            }
            let mut resj = 0.0;
            let mut wjm = -1.0f64;
            let mut jm = 0usize;
            for (j, &pos) in list.iter().enumerate() {
                let wj = wpos(pos);
                resj += wj / ((j + 1) * (j + 1)) as f64;
                if wj > wjm {
                    wjm = wj;
                    jm = j;
                }
            }
            let limit = 1.64493406685f64;
            res += (wjm + resj - wjm / ((jm + 1) * (jm + 1)) as f64) / limit;
        }
        if !ops.is_empty() {
            res /= ops.len() as f64;
        }
    }
    if res < 0.0 {
        res = 1e-20;
    }
    let len = v.lexemes().iter().map(|l| l.positions.len().max(1)).sum::<usize>();
    if norm & 1 != 0 && len > 0 {
        res /= ((len + 1) as f64).log2();
    }
    if norm & 2 != 0 && len > 0 {
        res /= len as f64;
    }
    if norm & 8 != 0 && !v.is_empty() {
        res /= v.len() as f64;
    }
    if norm & 16 != 0 && !v.is_empty() {
        res /= ((v.len() + 1) as f64).log2();
    }
    if norm & 32 != 0 {
        res /= res + 1.0;
    }
    // PostgreSQL computes in float4.
    f64::from(res as f32)
}

/// `word_distance` of PostgreSQL's ranking.
fn word_distance(w: i32) -> f64 {
    if w > 100 {
        1e-30
    } else {
        1.0 / (1.005 + 0.05 * (f64::from(w) / 1.5 - 2.0).exp())
    }
}
