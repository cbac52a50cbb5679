//! Scalar built-in functions: string, numeric and date/time.
//!
//! The binder resolves a call by name and argument types once, at plan
//! time, into a [`Builtin`]; execution then calls its `eval` pointer with
//! the evaluated arguments, so a call costs no name look-up.
//!
//! ```text
//!   strings   length char_length character_length octet_length lower upper
//!             initcap substr substring position strpos replace trim btrim
//!             ltrim rtrim lpad rpad left right repeat reverse concat
//!             concat_ws format split_part starts_with md5 chr ascii to_hex
//!   numbers   abs sign ceil ceiling floor round trunc mod power pow sqrt
//!             cbrt exp ln log log10 pi greatest least random div gcd lcm
//!   date/time now current_timestamp transaction_timestamp statement_timestamp
//!             clock_timestamp current_date localtimestamp date_trunc
//!             date_part extract make_date make_timestamp to_timestamp
//!   intervals age justify_days justify_hours justify_interval make_interval
//!             localtime, and extract/date_part/date_trunc of intervals and
//!             times (in `intervals`, with the interval operators)
//!   session   version current_database current_catalog current_schema
//!             current_user session_user user gen_random_uuid
//! ```
//!
//! Resolution follows PostgreSQL's overloads, so results, result types and
//! SQLSTATEs match:
//!
//! * An argument of type `None` (an untyped literal) goes wherever
//!   PostgreSQL would coerce an unknown literal; its text is parsed as the
//!   parameter's type when the call runs (22P02 if it does not parse). A
//!   typed argument of the wrong type is 42883, `function f(text) does not
//!   exist`.
//! * Integer types stay integer where PostgreSQL has an integer overload
//!   (`abs`, `mod`, `gcd`, `lcm`); otherwise integers go to `double
//!   precision` (`sqrt(2)`), and `numeric` stays `numeric` with PostgreSQL's
//!   result scale (`sqrt(2.0)` is `1.414213562373095`). Implementations whose
//!   behaviour depends on the operand type take its code as a const
//!   parameter, so the resolved fn pointer carries the type.
//! * `position(string, substring)` takes pg_proc's order, as PostgreSQL
//!   rewrites `POSITION(sub IN s)`; `extract(field, source)` is EXTRACT and
//!   returns numeric, `date_part` returns double precision.
//! * The session time zone is UTC, so timestamptz values truncate and break
//!   down like timestamps.
//!
//! Known differences: numeric results hold at most 28 decimal places
//! (rust_decimal), so PostgreSQL's scale is capped there; `lower`/`upper`
//! use Unicode case mapping whatever the collation; a `char(n)` argument
//! keeps its padding except in `length`.

use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::ops::Range;
use std::sync::atomic::{self, AtomicU64};

use centum_types::{
    days_from_ymd, ymd_from_days, DataType, Date, Decimal, Timestamp, TimestampTz, TypeError, Uuid, Value,
};

pub(crate) mod array_text;
pub(crate) mod arrays;
pub(crate) mod intervals;
pub(crate) mod json;
pub(crate) mod operators;
pub(crate) mod tsearch;

use centum_types::DateUnit as Unit;

use self::P::{Big, Bpchar, Bytes, Dt, Dtz, Flt, Int, Ivl, Tm, Ts, Txt};
use crate::error::{Error, Result};
use DataType as T;

/// What a function call may need besides its arguments.
pub(crate) struct FnContext {
    /// The start of the current statement (`statement_timestamp()`,
    /// `clock_timestamp()` is read anew).
    pub statement_time: TimestampTz,
    /// The start of the current transaction (`now()`, `CURRENT_TIMESTAMP`).
    pub transaction_time: TimestampTz,
}

/// A function's implementation.
pub(crate) type ScalarImpl = fn(&[Value], &FnContext) -> Result<Value>;

/// A resolved scalar function.
#[derive(Clone)]
pub(crate) struct Builtin {
    /// Its name, for EXPLAIN and messages.
    pub name: &'static str,
    /// Its result type; `None` when it is the type of NULL.
    pub ret: Option<DataType>,
    /// Whether any NULL argument makes the result NULL without calling
    /// `eval` (PostgreSQL's STRICT).
    pub strict: bool,
    /// The implementation.
    pub eval: ScalarImpl,
}

impl std::fmt::Debug for Builtin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Resolves scalar function `name` (lower case) for arguments of types
/// `args` (`None`: an untyped NULL or string literal). `None` if no
/// function of that name exists; an error if it exists but not for these
/// arguments.
pub(crate) fn resolve(name: &str, args: &[Option<DataType>]) -> Option<Result<Builtin>> {
    if let Some(found) = resolve_variadic(name, args).or_else(|| resolve_math(name, args)) {
        return Some(found);
    }
    let mut known = false;
    for sig in SIGS {
        let Some(&sig_name) = sig.names.iter().find(|n| **n == name) else { continue };
        known = true;
        let arity = (sig.min..=sig.params.len()).contains(&args.len());
        if arity && sig.params.iter().zip(args).all(|(p, t)| p.accepts(t.as_ref())) {
            let ret = Some(sig.ret.clone());
            return Some(Ok(Builtin { name: sig_name, ret, strict: true, eval: sig.eval }));
        }
    }
    known.then(|| Err(undefined(name, args)))
}

// ---- Types and resolution ------------------------------------------------

/// Operand type codes, the const parameter of type-dependent implementations.
const I2: u8 = 0;
const I4: u8 = 1;
const I8: u8 = 2;
const NUM: u8 = 3;
const FLT: u8 = 4;
const TXT: u8 = 5;
const DATE: u8 = 6;
const TS: u8 = 7;
const TSTZ: u8 = 8;
const BOOL: u8 = 9;
const UUID: u8 = 10;
const BYTEA: u8 = 11;
/// Arrays: no scalar function here takes one.
const ARR: u8 = 12;
const IVL: u8 = 13;
const TIM: u8 = 14;

/// Unconstrained `numeric`.
const NUMERIC: DataType = DataType::Numeric { precision: None, scale: None };

/// The code of a type; the string types are all `TXT`.
fn code(t: &DataType) -> u8 {
    match t {
        DataType::SmallInt => I2,
        DataType::Integer | DataType::Oid => I4,
        DataType::BigInt => I8,
        DataType::Numeric { .. } => NUM,
        DataType::Double => FLT,
        DataType::Varchar(_) | DataType::Char(_) | DataType::Text => TXT,
        DataType::Int2Vector | DataType::OidVector => TXT,
        DataType::Date => DATE,
        DataType::Timestamp => TS,
        DataType::TimestampTz => TSTZ,
        DataType::Boolean => BOOL,
        DataType::Uuid => UUID,
        DataType::Bytea => BYTEA,
        DataType::Array(_) | DataType::Json | DataType::Jsonb | DataType::Enum(_) => ARR,
        DataType::Composite(_) => ARR,
        DataType::TsVector | DataType::TsQuery => ARR,
        DataType::Interval => IVL,
        DataType::Time => TIM,
    }
}

/// The type of a code.
fn code_type(k: u8) -> DataType {
    match k {
        I2 => DataType::SmallInt,
        I4 => DataType::Integer,
        I8 => DataType::BigInt,
        NUM => NUMERIC,
        FLT => DataType::Double,
        TXT => DataType::Text,
        DATE => DataType::Date,
        TS => DataType::Timestamp,
        TSTZ => DataType::TimestampTz,
        BOOL => DataType::Boolean,
        UUID => DataType::Uuid,
        IVL => DataType::Interval,
        TIM => DataType::Time,
        _ => DataType::Bytea,
    }
}

/// The common type of two codes (numbers widen, date < timestamp <
/// timestamptz), or `None` if they cannot be matched.
fn unify(a: u8, b: u8) -> Option<u8> {
    let number = |k: u8| k <= FLT;
    let datetime = |k: u8| (DATE..=TSTZ).contains(&k);
    (a == b || (number(a) && number(b)) || (datetime(a) && datetime(b))).then_some(a.max(b))
}

/// PostgreSQL's name of an argument type in "function f(...) does not exist".
pub(crate) fn type_label(t: Option<&DataType>) -> String {
    match t {
        None => "unknown".to_string(),
        Some(DataType::Varchar(_)) => "character varying".to_string(),
        Some(DataType::Char(_)) => "character".to_string(),
        Some(DataType::Numeric { .. }) => "numeric".to_string(),
        Some(t) => t.to_string(),
    }
}

/// 42883 for `name` with these argument types.
fn undefined(name: &str, args: &[Option<DataType>]) -> Error {
    let labels: Vec<String> = args.iter().map(|t| type_label(t.as_ref())).collect();
    Error::UndefinedFunction(format!("{name}({})", labels.join(", ")))
}

/// A parameter of a fixed-signature function: which argument types it takes.
#[derive(Clone, Copy)]
enum P {
    /// A string type or unknown.
    Txt,
    /// `character(n)` only.
    Bpchar,
    /// smallint, integer or unknown.
    Int,
    /// Any integer type or unknown.
    Big,
    /// Any number type or unknown.
    Flt,
    /// bytea or unknown.
    Bytes,
    /// timestamp only.
    Ts,
    /// date, timestamptz or unknown.
    Dtz,
    /// date, timestamp, timestamptz or unknown.
    Dt,
    /// interval or unknown.
    Ivl,
    /// time or unknown.
    Tm,
}

impl P {
    /// Whether an argument of type `t` (`None`: unknown) may be passed.
    fn accepts(self, t: Option<&DataType>) -> bool {
        let Some(t) = t else { return !matches!(self, P::Bpchar | P::Ts) };
        match self {
            P::Txt => t.is_string(),
            P::Bpchar => matches!(t, DataType::Char(_)),
            P::Int => matches!(t, DataType::SmallInt | DataType::Integer | DataType::Oid),
            P::Big => matches!(t, DataType::SmallInt | DataType::Integer | DataType::Oid | DataType::BigInt),
            P::Flt => code(t) <= FLT,
            P::Bytes => *t == DataType::Bytea,
            P::Ts => *t == DataType::Timestamp,
            P::Dtz => matches!(t, DataType::Date | DataType::TimestampTz),
            P::Dt => matches!(t, DataType::Date | DataType::Timestamp | DataType::TimestampTz),
            P::Ivl => *t == DataType::Interval,
            P::Tm => *t == DataType::Time,
        }
    }
}

/// One signature of a strict function with a fixed result type.
struct Sig {
    /// The names it answers to; the first is the canonical one.
    names: &'static [&'static str],
    /// Its parameters; those from index `min` on may be left out.
    params: &'static [P],
    /// The fewest arguments it takes.
    min: usize,
    /// Its result type.
    ret: DataType,
    /// The implementation.
    eval: ScalarImpl,
}

/// Builds a [`Sig`] (a const fn, so the table is a static).
const fn sig(
    names: &'static [&'static str],
    params: &'static [P],
    min: usize,
    ret: DataType,
    eval: ScalarImpl,
) -> Sig {
    Sig { names, params, min, ret, eval }
}

/// The fixed-signature functions, tried in order for each name.
static SIGS: &[Sig] = &[
    sig(&["length", "char_length", "character_length"], &[Bpchar], 1, T::Integer, length_bpchar),
    sig(&["length", "char_length", "character_length"], &[Txt], 1, T::Integer, length),
    sig(&["octet_length"], &[Txt], 1, T::Integer, octet_length),
    sig(&["length", "octet_length"], &[Bytes], 1, T::Integer, octet_length),
    sig(&["lower"], &[Txt], 1, T::Text, lower),
    sig(&["upper"], &[Txt], 1, T::Text, upper),
    sig(&["initcap"], &[Txt], 1, T::Text, initcap),
    sig(&["substr", "substring"], &[Txt, Int, Int], 2, T::Text, substr),
    sig(&["position", "strpos"], &[Txt, Txt], 2, T::Integer, strpos),
    sig(&["replace"], &[Txt, Txt, Txt], 3, T::Text, replace),
    sig(&["btrim", "trim"], &[Txt, Txt], 1, T::Text, btrim),
    sig(&["ltrim"], &[Txt, Txt], 1, T::Text, ltrim),
    sig(&["rtrim"], &[Txt, Txt], 1, T::Text, rtrim),
    sig(&["lpad"], &[Txt, Int, Txt], 2, T::Text, lpad),
    sig(&["rpad"], &[Txt, Int, Txt], 2, T::Text, rpad),
    sig(&["left"], &[Txt, Int], 2, T::Text, left),
    sig(&["right"], &[Txt, Int], 2, T::Text, right),
    sig(&["repeat"], &[Txt, Int], 2, T::Text, repeat),
    sig(&["reverse"], &[Txt], 1, T::Text, reverse),
    sig(&["split_part"], &[Txt, Txt, Int], 3, T::Text, split_part),
    sig(&["starts_with"], &[Txt, Txt], 2, T::Boolean, starts_with),
    sig(&["md5"], &[Txt], 1, T::Text, md5),
    sig(&["md5"], &[Bytes], 1, T::Text, md5),
    sig(&["chr"], &[Int], 1, T::Text, chr),
    sig(&["ascii"], &[Txt], 1, T::Integer, ascii),
    sig(&["to_hex"], &[Big], 1, T::Text, to_hex),
    sig(&["cbrt"], &[Flt], 1, T::Double, cbrt),
    sig(&["pi"], &[], 0, T::Double, pi),
    sig(&["random"], &[], 0, T::Double, random),
    sig(&["now", "transaction_timestamp"], &[], 0, T::TimestampTz, now),
    sig(&["current_timestamp"], &[Int], 0, T::TimestampTz, now),
    sig(&["statement_timestamp"], &[], 0, T::TimestampTz, statement_timestamp),
    sig(&["clock_timestamp"], &[], 0, T::TimestampTz, clock_timestamp),
    sig(&["current_date"], &[], 0, T::Date, current_date),
    sig(&["localtimestamp"], &[Int], 0, T::Timestamp, localtimestamp),
    sig(&["date_trunc"], &[Txt, Ts], 2, T::Timestamp, date_trunc),
    sig(&["date_trunc"], &[Txt, Dtz], 2, T::TimestampTz, date_trunc),
    sig(&["date_part"], &[Txt, Dt], 2, T::Double, date_part),
    sig(&["extract"], &[Txt, Dt], 2, NUMERIC, extract),
    sig(&["date_trunc"], &[Txt, Ivl], 2, T::Interval, intervals::trunc),
    sig(&["date_part"], &[Txt, Ivl], 2, T::Double, date_part),
    sig(&["date_part"], &[Txt, Tm], 2, T::Double, date_part),
    sig(&["extract"], &[Txt, Ivl], 2, NUMERIC, extract),
    sig(&["extract"], &[Txt, Tm], 2, NUMERIC, extract),
    sig(&["age"], &[Ts, Ts], 1, T::Interval, intervals::age),
    sig(&["age"], &[Dtz, Dtz], 1, T::Interval, intervals::age),
    sig(&["justify_days"], &[Ivl], 1, T::Interval, intervals::justify_days),
    sig(&["justify_hours"], &[Ivl], 1, T::Interval, intervals::justify_hours),
    sig(&["justify_interval"], &[Ivl], 1, T::Interval, intervals::justify_interval),
    sig(&["make_interval"], &[Int, Int, Int, Int, Int, Int, Flt], 0, T::Interval, intervals::make_interval),
    sig(&["localtime"], &[Int], 0, T::Time, intervals::localtime),
    sig(&["make_date"], &[Int, Int, Int], 3, T::Date, make_date),
    sig(&["make_timestamp"], &[Int, Int, Int, Int, Int, Flt], 6, T::Timestamp, make_timestamp),
    sig(&["to_timestamp"], &[Flt], 1, T::TimestampTz, to_timestamp),
    sig(&["version"], &[], 0, T::Text, version),
    sig(&["current_database", "current_catalog"], &[], 0, T::Text, current_database),
    sig(&["current_schema"], &[], 0, T::Text, current_schema),
    sig(&["current_user", "session_user", "user"], &[], 0, T::Text, current_user),
    sig(&["gen_random_uuid"], &[], 0, T::Uuid, gen_random_uuid),
];

/// Instantiates `$f` for a number type code.
macro_rules! by_num {
    ($f:ident, $k:expr) => {
        match $k {
            I2 => $f::<I2> as ScalarImpl,
            I4 => $f::<I4>,
            I8 => $f::<I8>,
            NUM => $f::<NUM>,
            _ => $f::<FLT>,
        }
    };
}

/// Instantiates `$f` for any type code.
macro_rules! by_code {
    ($f:ident, $k:expr) => {
        match $k {
            I2 | I4 | I8 | NUM | FLT => by_num!($f, $k),
            TXT => $f::<TXT>,
            DATE => $f::<DATE>,
            TS => $f::<TS>,
            TSTZ => $f::<TSTZ>,
            BOOL => $f::<BOOL>,
            UUID => $f::<UUID>,
            _ => $f::<BYTEA>,
        }
    };
}

/// The non-strict variadic functions: concat, concat_ws, greatest, least.
fn resolve_variadic(name: &str, args: &[Option<DataType>]) -> Option<Result<Builtin>> {
    let text_first = args.first().is_some_and(|t| Txt.accepts(t.as_ref()));
    let (name, ret, eval): (&'static str, DataType, ScalarImpl) = match name {
        "concat" if !args.is_empty() => ("concat", T::Text, concat),
        "concat_ws" if args.len() >= 2 && text_first => ("concat_ws", T::Text, concat_ws),
        "concat" | "concat_ws" => return Some(Err(undefined(name, args))),
        "format" if text_first => ("format", T::Text, format),
        "format" => return Some(Err(undefined(name, args))),
        "greatest" | "least" => {
            let max = name == "greatest";
            let name = if max { "greatest" } else { "least" };
            if args.is_empty() {
                return Some(Err(undefined(name, args)));
            }
            let mut common: Option<u8> = None;
            for t in args.iter().flatten() {
                let k = code(t);
                if k == ARR {
                    return Some(Err(undefined(name, args)));
                }
                let unified = common.map_or(Some(k), |c| unify(c, k));
                let Some(u) = unified else {
                    let (a, b) = (code_type(common.unwrap_or(k)), type_label(Some(t)));
                    let upper = name.to_uppercase();
                    return Some(Err(Error::mismatch(format!(
                        "{upper} types {a} and {b} cannot be matched"
                    ))));
                };
                common = Some(u);
            }
            let k = common.unwrap_or(TXT);
            let eval = if max { by_code!(greatest, k) } else { by_code!(least, k) };
            (name, code_type(k), eval)
        }
        _ => return None,
    };
    Some(Ok(Builtin { name, ret: Some(ret), strict: false, eval }))
}

/// The number functions, whose result type follows the argument types.
fn resolve_math(name: &str, args: &[Option<DataType>]) -> Option<Result<Builtin>> {
    const NAMES: &[&str] = &[
        "abs", "sign", "ceil", "ceiling", "floor", "round", "trunc", "sqrt", "exp", "ln", "log", "log10",
        "power", "pow", "mod", "div", "gcd", "lcm",
    ];
    let name: &'static str = NAMES.iter().copied().find(|n| *n == name)?;
    let mut codes = Vec::with_capacity(args.len());
    for t in args {
        match t.as_ref().map(code) {
            Some(k) if k > FLT => return Some(Err(undefined(name, args))),
            k => codes.push(k),
        }
    }
    let has = |k: u8| codes.contains(&Some(k));
    let widest = codes.iter().flatten().max().copied();
    // float8 and numeric overloads: integers and unknowns go to float8.
    let either = if has(FLT) || !has(NUM) { FLT } else { NUM };
    let int_second = matches!(codes.get(1), Some(None | Some(I2 | I4)));
    let (k, eval): (u8, ScalarImpl) = match (name, codes.len()) {
        ("abs", 1) => (widest.unwrap_or(FLT), by_num!(abs, widest.unwrap_or(FLT))),
        ("sign", 1) => (either, by_num!(sign, either)),
        ("ceil" | "ceiling", 1) => (either, by_num!(ceil, either)),
        ("floor", 1) => (either, by_num!(floor, either)),
        ("round", 1) => (either, by_num!(round, either)),
        ("trunc", 1) => (either, by_num!(trunc, either)),
        ("sqrt", 1) => (either, by_num!(sqrt, either)),
        ("exp", 1) => (either, by_num!(exp, either)),
        ("ln", 1) => (either, by_num!(ln, either)),
        ("log" | "log10", 1) => (either, by_num!(log10, either)),
        ("power" | "pow", 2) => (either, by_num!(power, either)),
        ("round", 2) if !has(FLT) && int_second => (NUM, round_to::<false> as ScalarImpl),
        ("trunc", 2) if !has(FLT) && int_second => (NUM, round_to::<true>),
        ("log", 2) if !has(FLT) => (NUM, log_base),
        ("div", 2) if !has(FLT) => (NUM, div),
        ("mod", 2) if !has(FLT) => (widest.unwrap_or(NUM), by_num!(modulo, widest.unwrap_or(NUM))),
        ("gcd" | "lcm", 2) if !has(FLT) => {
            let k = widest.map_or(NUM, |k| k.max(I4));
            (k, if name == "gcd" { by_num!(gcd, k) } else { by_num!(lcm, k) })
        }
        _ => return Some(Err(undefined(name, args))),
    };
    Some(Ok(Builtin { name, ret: Some(code_type(k)), strict: true, eval }))
}

// ---- Arguments and errors ------------------------------------------------

/// Stands in for a missing argument, so a short argument list is an error
/// rather than a panic.
static NULL: Value = Value::Null;

/// Argument `i`, or NULL.
fn arg(a: &[Value], i: usize) -> &Value {
    a.get(i).unwrap_or(&NULL)
}

/// An argument of a type resolution does not allow (an internal error).
fn unexpected(v: &Value) -> Error {
    Error::other("XX000", format!("unexpected function argument {v:?}"))
}

/// A string argument.
fn text(v: &Value) -> Result<&str> {
    match v {
        Value::Text(s) => Ok(s),
        other => Err(unexpected(other)),
    }
}

/// An integer argument; an unknown literal is parsed.
fn int(v: &Value) -> Result<i64> {
    match v {
        Value::SmallInt(x) => Ok(i64::from(*x)),
        Value::Integer(x) => Ok(i64::from(*x)),
        Value::BigInt(x) => Ok(*x),
        Value::Text(s) => int(&Value::parse(s, &T::BigInt)?),
        other => Err(unexpected(other)),
    }
}

/// A numeric argument; integers convert, an unknown literal is parsed.
fn dec(v: &Value) -> Result<Decimal> {
    match v {
        Value::Numeric(d) => Ok(*d),
        Value::Text(s) => dec(&Value::parse(s, &NUMERIC)?),
        other => int(other).map(Decimal::from),
    }
}

/// A double precision argument; other numbers convert, an unknown literal
/// is parsed.
fn flt(v: &Value) -> Result<f64> {
    match v {
        Value::Double(x) => Ok(*x),
        Value::Numeric(d) => Ok(dec_f64(*d)),
        Value::Text(s) => flt(&Value::parse(s, &T::Double)?),
        other => int(other).map(|i| i as f64),
    }
}

/// A numeric as the nearest double.
fn dec_f64(d: Decimal) -> f64 {
    d.to_string().parse().unwrap_or(0.0)
}

/// A character or byte count as an integer result.
fn int4(n: usize) -> Value {
    Value::Integer(i32::try_from(n).unwrap_or(i32::MAX))
}

/// An integer result of type code `k`, or 22003 when it does not fit.
fn int_value(k: u8, v: i128) -> Result<Value> {
    let out = || out_of_range(format!("{} out of range", code_type(k)));
    Ok(match k {
        I2 => Value::SmallInt(i16::try_from(v).map_err(|_| out())?),
        I4 => Value::Integer(i32::try_from(v).map_err(|_| out())?),
        _ => Value::BigInt(i64::try_from(v).map_err(|_| out())?),
    })
}

/// 22003 with `message`.
fn out_of_range(message: impl Into<String>) -> Error {
    Error::Type(TypeError::OutOfRange(message.into()))
}

/// 22003 for a numeric result beyond rust_decimal.
fn numeric_overflow() -> Error {
    out_of_range("value overflows numeric format")
}

/// 22008 with `message`.
fn datetime_overflow(message: impl Into<String>) -> Error {
    Error::Type(TypeError::DatetimeOverflow(message.into()))
}

/// The longest string (in characters or bytes) a function builds.
const MAX_LEN: usize = 10_485_760;

/// 54000 for a result over [`MAX_LEN`].
fn too_large() -> Error {
    Error::other("54000", "requested length too large")
}

// ---- Strings -------------------------------------------------------------

/// `length(text)`: characters.
fn length(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(int4(text(arg(a, 0))?.chars().count()))
}

/// `length(character)`: characters without the trailing blanks.
fn length_bpchar(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(int4(text(arg(a, 0))?.trim_end_matches(' ').chars().count()))
}

/// `octet_length(text | bytea)`, `length(bytea)`: bytes.
fn octet_length(a: &[Value], _: &FnContext) -> Result<Value> {
    match arg(a, 0) {
        Value::Bytea(b) => Ok(int4(b.len())),
        v => Ok(int4(text(v)?.len())),
    }
}

/// `lower(text)`.
fn lower(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Text(text(arg(a, 0))?.to_lowercase()))
}

/// `upper(text)`.
fn upper(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Text(text(arg(a, 0))?.to_uppercase()))
}

/// `initcap(text)`: each run of letters and digits capitalised.
fn initcap(a: &[Value], _: &FnContext) -> Result<Value> {
    let mut out = String::new();
    let mut in_word = false;
    for c in text(arg(a, 0))?.chars() {
        if in_word {
            out.extend(c.to_lowercase());
        } else {
            out.extend(c.to_uppercase());
        }
        in_word = c.is_alphanumeric();
    }
    Ok(Value::Text(out))
}

/// `substr(text, from [, count])`: positions from 1; characters before
/// position 1 count towards `count` but are not there.
fn substr(a: &[Value], _: &FnContext) -> Result<Value> {
    let s = text(arg(a, 0))?;
    let from = int(arg(a, 1))?;
    let first = from.max(1);
    let chars = s.chars().skip(usize::try_from(first - 1).unwrap_or(usize::MAX));
    let out = match a.get(2) {
        None => chars.collect(),
        Some(count) => {
            let count = int(count)?;
            if count < 0 {
                return Err(Error::other("22011", "negative substring length not allowed"));
            }
            let end = from.saturating_add(count);
            chars.take(usize::try_from(end.saturating_sub(first)).unwrap_or(0)).collect()
        }
    };
    Ok(Value::Text(out))
}

/// `strpos(text, sub)` / `position(text, sub)`: 1-based, 0 if absent.
fn strpos(a: &[Value], _: &FnContext) -> Result<Value> {
    let (s, sub) = (text(arg(a, 0))?, text(arg(a, 1))?);
    Ok(int4(s.find(sub).map_or(0, |i| s[..i].chars().count() + 1)))
}

/// `replace(text, from, to)`; an empty `from` changes nothing.
fn replace(a: &[Value], _: &FnContext) -> Result<Value> {
    let (s, from, to) = (text(arg(a, 0))?, text(arg(a, 1))?, text(arg(a, 2))?);
    Ok(Value::Text(if from.is_empty() { s.to_string() } else { s.replace(from, to) }))
}

/// The trim functions: removes the characters of the second argument
/// (default a space) from the chosen ends.
fn trim_ends(a: &[Value], start: bool, end: bool) -> Result<Value> {
    let s = text(arg(a, 0))?;
    let set = if a.len() > 1 { text(arg(a, 1))? } else { " " };
    // A table (ASCII) or a sorted list, so that trimming a long string by
    // a long set is not quadratic.
    let mut ascii = [false; 128];
    let mut other: Vec<char> = Vec::new();
    for c in set.chars() {
        match ascii.get_mut(c as usize) {
            Some(slot) => *slot = true,
            None => other.push(c),
        }
    }
    other.sort_unstable();
    other.dedup();
    let strip = |c: char| ascii.get(c as usize).copied().unwrap_or_else(|| other.binary_search(&c).is_ok());
    let s = if start { s.trim_start_matches(strip) } else { s };
    Ok(Value::Text(if end { s.trim_end_matches(strip) } else { s }.to_string()))
}

/// `btrim(text [, chars])`, also `trim`.
fn btrim(a: &[Value], _: &FnContext) -> Result<Value> {
    trim_ends(a, true, true)
}

/// `ltrim(text [, chars])`.
fn ltrim(a: &[Value], _: &FnContext) -> Result<Value> {
    trim_ends(a, true, false)
}

/// `rtrim(text [, chars])`.
fn rtrim(a: &[Value], _: &FnContext) -> Result<Value> {
    trim_ends(a, false, true)
}

/// `lpad`/`rpad(text, length [, fill])`: fills to `length` characters, or
/// truncates to it.
fn pad(a: &[Value], left: bool) -> Result<Value> {
    let s = text(arg(a, 0))?;
    let len = int(arg(a, 1))?;
    let fill = if a.len() > 2 { text(arg(a, 2))? } else { " " };
    let len = usize::try_from(len).unwrap_or(0);
    if len > MAX_LEN {
        return Err(too_large());
    }
    let count = s.chars().count();
    if count >= len || fill.is_empty() {
        return Ok(Value::Text(s.chars().take(len).collect()));
    }
    let padding: String = fill.chars().cycle().take(len - count).collect();
    Ok(Value::Text(if left { padding + s } else { format!("{s}{padding}") }))
}

/// `lpad(text, length [, fill])`.
fn lpad(a: &[Value], _: &FnContext) -> Result<Value> {
    pad(a, true)
}

/// `rpad(text, length [, fill])`.
fn rpad(a: &[Value], _: &FnContext) -> Result<Value> {
    pad(a, false)
}

/// The number of characters of a string argument and the count argument.
fn chars_and_count(a: &[Value]) -> Result<(&str, i64, i64)> {
    let s = text(arg(a, 0))?;
    Ok((s, i64::try_from(s.chars().count()).unwrap_or(i64::MAX), int(arg(a, 1))?))
}

/// `left(text, n)`: the first n characters; all but the last -n if negative.
fn left(a: &[Value], _: &FnContext) -> Result<Value> {
    let (s, count, n) = chars_and_count(a)?;
    let keep = if n >= 0 { n } else { count.saturating_add(n).max(0) };
    Ok(Value::Text(s.chars().take(usize::try_from(keep).unwrap_or(usize::MAX)).collect()))
}

/// `right(text, n)`: the last n characters; all but the first -n if negative.
fn right(a: &[Value], _: &FnContext) -> Result<Value> {
    let (s, count, n) = chars_and_count(a)?;
    let skip = if n >= 0 { count.saturating_sub(n).max(0) } else { n.saturating_neg() };
    Ok(Value::Text(s.chars().skip(usize::try_from(skip).unwrap_or(usize::MAX)).collect()))
}

/// `repeat(text, n)`.
fn repeat(a: &[Value], _: &FnContext) -> Result<Value> {
    let s = text(arg(a, 0))?;
    let n = usize::try_from(int(arg(a, 1))?).unwrap_or(0);
    if s.len().checked_mul(n).is_none_or(|bytes| bytes > MAX_LEN) {
        return Err(too_large());
    }
    Ok(Value::Text(s.repeat(n)))
}

/// `reverse(text)`.
fn reverse(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Text(text(arg(a, 0))?.chars().rev().collect()))
}

/// `split_part(text, delimiter, n)`: field n, counted from the end if
/// negative.
fn split_part(a: &[Value], _: &FnContext) -> Result<Value> {
    let (s, delim, n) = (text(arg(a, 0))?, text(arg(a, 1))?, int(arg(a, 2))?);
    if n == 0 {
        return Err(Error::InvalidParameter("field position must not be zero".to_string()));
    }
    if s.is_empty() || delim.is_empty() {
        let whole = !s.is_empty() && (n == 1 || n == -1);
        return Ok(Value::Text(if whole { s.to_string() } else { String::new() }));
    }
    let fields: Vec<&str> = s.split(delim).collect();
    let index =
        if n > 0 { usize::try_from(n - 1).ok() } else { fields.len().checked_sub(n.unsigned_abs() as usize) };
    Ok(Value::Text(index.and_then(|i| fields.get(i)).copied().unwrap_or_default().to_string()))
}

/// `starts_with(text, prefix)`.
fn starts_with(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Boolean(text(arg(a, 0))?.starts_with(text(arg(a, 1))?)))
}

/// `md5(text | bytea)`: the digest in lower-case hex.
fn md5(a: &[Value], _: &FnContext) -> Result<Value> {
    let bytes = match arg(a, 0) {
        Value::Bytea(b) => b.as_slice(),
        v => text(v)?.as_bytes(),
    };
    Ok(Value::Text(md5_digest(bytes).iter().map(|b| format!("{b:02x}")).collect()))
}

/// `chr(code)`: the character with that code point (54000 for 0, a
/// surrogate or beyond Unicode).
fn chr(a: &[Value], _: &FnContext) -> Result<Value> {
    let n = int(arg(a, 0))?;
    if n == 0 {
        return Err(Error::other("54000", "null character not permitted"));
    }
    match u32::try_from(n).ok().and_then(char::from_u32) {
        Some(c) => Ok(Value::Text(c.to_string())),
        None => {
            let what = if (0xD800..=0xDFFF).contains(&n) { "not valid" } else { "too large" };
            Err(Error::other("54000", format!("requested character {what} for encoding: {}", n as u32)))
        }
    }
}

/// `ascii(text)`: the first character's code point, 0 for ''.
fn ascii(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Integer(text(arg(a, 0))?.chars().next().map_or(0, |c| c as i32)))
}

/// `to_hex(integer | bigint)`: two's complement for negative numbers.
fn to_hex(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Text(match arg(a, 0) {
        Value::SmallInt(x) => format!("{:x}", i32::from(*x) as u32),
        Value::Integer(x) => format!("{:x}", *x as u32),
        v => format!("{:x}", int(v)? as u64),
    }))
}

/// `concat(any, ...)`: the text of every non-NULL argument.
fn concat(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Text(a.iter().filter(|v| !v.is_null()).map(Value::to_string).collect()))
}

/// The widest field `format()` pads to, as long as a text value may be.
const MAX_FORMAT_WIDTH: usize = 10_485_760;

/// `format(fmt, any, ...)`: `%s` (the value's text, NULL as nothing),
/// `%I` (an identifier, quoted where needed; NULL is 22004), `%L` (a
/// literal, quoted; NULL as `NULL`) and `%%`. Each may name its argument
/// (`%2$s`) and take a width (`%10s`, right-aligned; `%-10s`, left).
fn format(a: &[Value], _: &FnContext) -> Result<Value> {
    let Some((Value::Text(f), args)) = a.split_first() else { return Ok(Value::Null) };
    let bad = |m: String| Error::other("22023", m);
    let mut out = String::with_capacity(f.len());
    let mut next = 0usize;
    let mut chars = f.chars().peekable();
    let digits = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        let mut d = String::new();
        while let Some(c) = chars.next_if(char::is_ascii_digit) {
            d.push(c);
        }
        d
    };
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.next_if_eq(&'%').is_some() {
            out.push('%');
            continue;
        }
        let mut n = digits(&mut chars);
        let mut at = None;
        if !n.is_empty() && chars.next_if_eq(&'$').is_some() {
            let i: usize = n.parse().map_err(|_| bad("argument number is out of range".into()))?;
            if i == 0 {
                return Err(bad("format specifies argument 0, but arguments are numbered from 1".into()));
            }
            at = Some(i - 1);
            n.clear();
        }
        let left = n.is_empty() && chars.next_if_eq(&'-').is_some();
        if n.is_empty() {
            n = digits(&mut chars);
        }
        let width: usize = match n.parse::<usize>() {
            _ if n.is_empty() => 0,
            Ok(w) if w <= MAX_FORMAT_WIDTH => w,
            _ => return Err(bad("width is out of range".into())),
        };
        let ty = chars.next().ok_or_else(|| bad("unterminated format() type specifier".into()))?;
        let i = at.unwrap_or(next);
        next = i + 1;
        let v = args.get(i).ok_or_else(|| bad("too few arguments for format()".into()))?;
        let s = match (ty, v) {
            ('s', Value::Null) => String::new(),
            ('s', v) => v.to_string(),
            ('I', Value::Null) => {
                return Err(Error::other("22004", "null values cannot be formatted as an SQL identifier"))
            }
            ('I', v) => crate::names::quote_ident(&v.to_string()),
            ('L', Value::Null) => "NULL".to_string(),
            ('L', v) => crate::names::quote_literal(&v.to_string()),
            (other, _) => return Err(bad(format!("unrecognized format() type specifier \"{other}\""))),
        };
        let pad = width.saturating_sub(s.chars().count());
        if !left {
            out.extend(std::iter::repeat_n(' ', pad));
        }
        out.push_str(&s);
        if left {
            out.extend(std::iter::repeat_n(' ', pad));
        }
    }
    Ok(Value::Text(out))
}

/// `concat_ws(separator, any, ...)`: NULL only if the separator is.
fn concat_ws(a: &[Value], _: &FnContext) -> Result<Value> {
    let Some((Value::Text(sep), rest)) = a.split_first() else { return Ok(Value::Null) };
    let parts: Vec<String> = rest.iter().filter(|v| !v.is_null()).map(Value::to_string).collect();
    Ok(Value::Text(parts.join(sep)))
}

/// The MD5 digest (RFC 1321).
fn md5_digest(data: &[u8]) -> [u8; 16] {
    const SHIFTS: [[u32; 4]; 4] = [[7, 12, 17, 22], [5, 9, 14, 20], [4, 11, 16, 23], [6, 10, 15, 21]];
    const K: [u32; 64] = [
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
        0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
        0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
        0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
        0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
        0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
        0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&(data.len() as u64).wrapping_mul(8).to_le_bytes());
    let mut state: [u32; 4] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];
    for block in msg.chunks_exact(64) {
        let word = |g: usize| {
            let b = &block[g * 4..g * 4 + 4];
            u32::from_le_bytes([b[0], b[1], b[2], b[3]])
        };
        let [mut a, mut b, mut c, mut d] = state;
        for (i, k) in K.iter().enumerate() {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(*k).wrapping_add(word(g));
            (a, d, c) = (d, c, b);
            b = b.wrapping_add(f.rotate_left(SHIFTS[i / 16][i % 4]));
        }
        for (s, v) in state.iter_mut().zip([a, b, c, d]) {
            *s = s.wrapping_add(v);
        }
    }
    let mut out = [0u8; 16];
    for (chunk, s) in out.chunks_exact_mut(4).zip(state) {
        chunk.copy_from_slice(&s.to_le_bytes());
    }
    out
}

// ---- Numbers -------------------------------------------------------------

/// A one-argument function with a numeric and a double version.
fn unary<const K: u8>(
    a: &[Value],
    num: fn(Decimal) -> Result<Decimal>,
    float: fn(f64) -> Result<f64>,
) -> Result<Value> {
    if K == NUM {
        Ok(Value::Numeric(num(dec(arg(a, 0))?)?))
    } else {
        Ok(Value::Double(float(flt(arg(a, 0))?)?))
    }
}

/// `abs(x)`, any number type.
fn abs<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    match K {
        NUM | FLT => unary::<K>(a, |d| Ok(d.abs()), |x| Ok(x.abs())),
        _ => int_value(K, i128::from(int(arg(a, 0))?).abs()),
    }
}

/// `sign(x)`: -1, 0 or 1.
fn sign<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    let float = |x: f64| -> Result<f64> {
        Ok(if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            0.0
        })
    };
    unary::<K>(a, |d| Ok(Decimal::from(d.cmp(&Decimal::ZERO) as i8)), float)
}

/// `ceil(x)` / `ceiling(x)`.
fn ceil<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    unary::<K>(a, |d| Ok(d.ceil()), |x| Ok(x.ceil()))
}

/// `floor(x)`.
fn floor<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    unary::<K>(a, |d| Ok(d.floor()), |x| Ok(x.floor()))
}

/// `round(x)`: numeric half away from zero, double half to even.
fn round<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    unary::<K>(a, |d| Ok(with_scale(d, 0)), |x| Ok(x.round_ties_even()))
}

/// `trunc(x)`.
fn trunc<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    unary::<K>(a, |d| Ok(d.trunc()), |x| Ok(x.trunc()))
}

/// `sqrt(x)`.
fn sqrt<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    unary::<K>(a, sqrt_numeric, |x| if x < 0.0 { Err(negative_sqrt()) } else { Ok(x.sqrt()) })
}

/// `cbrt(double precision)`.
fn cbrt(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Double(flt(arg(a, 0))?.cbrt()))
}

/// `exp(x)`.
fn exp<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    let num = |d: Decimal| -> Result<Decimal> {
        Ok(to_rscale(exp_decimal(d)?, (dec_f64(d) * std::f64::consts::LOG10_E) as i64, &[d]))
    };
    unary::<K>(a, num, |x| float_range(x.exp(), x.is_finite(), x.is_finite()))
}

/// `ln(x)`.
fn ln<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    let num = |d: Decimal| -> Result<Decimal> { Ok(to_rscale(ln_decimal(d)?, ln_weight(d), &[d])) };
    unary::<K>(a, num, |x| log_float(x, f64::ln))
}

/// `log(x)` / `log10(x)`: the base-10 logarithm.
fn log10<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    unary::<K>(a, |d| log_numeric(Decimal::TEN, d), |x| log_float(x, f64::log10))
}

/// `log(b numeric, x numeric)`: the base-b logarithm of x.
fn log_base(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Numeric(log_numeric(dec(arg(a, 0))?, dec(arg(a, 1))?)?))
}

/// `power(x, y)` / `pow(x, y)`.
fn power<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    if K == NUM {
        return Ok(Value::Numeric(power_numeric(dec(arg(a, 0))?, dec(arg(a, 1))?)?));
    }
    let (x, y) = (flt(arg(a, 0))?, flt(arg(a, 1))?);
    if x == 0.0 && y < 0.0 {
        return Err(zero_negative_power());
    }
    if x < 0.0 && y.is_finite() && y.fract() != 0.0 {
        return Err(complex_power());
    }
    let finite = x.is_finite() && y.is_finite();
    Ok(Value::Double(float_range(x.powf(y), finite, finite && x != 0.0)?))
}

/// `mod(x, y)`: integers and numeric; the sign of x.
fn modulo<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    if K == NUM {
        let (x, y) = (dec(arg(a, 0))?, dec(arg(a, 1))?);
        if y.is_zero() {
            return Err(Error::DivisionByZero);
        }
        return x.checked_rem(y).map(Value::Numeric).ok_or_else(numeric_overflow);
    }
    let (x, y) = (int(arg(a, 0))?, int(arg(a, 1))?);
    if y == 0 {
        return Err(Error::DivisionByZero);
    }
    int_value(K, i128::from(x) % i128::from(y))
}

/// `div(x numeric, y numeric)`: the quotient truncated towards zero.
fn div(a: &[Value], _: &FnContext) -> Result<Value> {
    let (x, y) = (dec(arg(a, 0))?, dec(arg(a, 1))?);
    if y.is_zero() {
        return Err(Error::DivisionByZero);
    }
    x.checked_div(y).map(|q| Value::Numeric(q.trunc())).ok_or_else(numeric_overflow)
}

/// `gcd(x, y)`: integers and numeric; never negative.
fn gcd<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    if K == NUM {
        let (x, y) = (dec(arg(a, 0))?, dec(arg(a, 1))?);
        return Ok(Value::Numeric(with_scale(gcd_decimal(x, y)?, x.scale().max(y.scale()))));
    }
    int_value(K, gcd_int(i128::from(int(arg(a, 0))?), i128::from(int(arg(a, 1))?)))
}

/// `lcm(x, y)`: integers and numeric; never negative, 0 if either is.
fn lcm<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    if K == NUM {
        let (x, y) = (dec(arg(a, 0))?, dec(arg(a, 1))?);
        let m = if x.is_zero() || y.is_zero() {
            Decimal::ZERO
        } else {
            let g = gcd_decimal(x, y)?;
            x.checked_div(g).and_then(|q| q.checked_mul(y)).ok_or_else(numeric_overflow)?.abs()
        };
        return Ok(Value::Numeric(with_scale(m, x.scale().max(y.scale()))));
    }
    let (x, y) = (i128::from(int(arg(a, 0))?), i128::from(int(arg(a, 1))?));
    int_value(K, if x == 0 || y == 0 { 0 } else { (x / gcd_int(x, y) * y).abs() })
}

/// `round(x numeric, n)` and, with `TRUNC`, `trunc(x numeric, n)`: n
/// decimal places (padding with zeros), or to a multiple of 10^-n.
fn round_to<const TRUNC: bool>(a: &[Value], _: &FnContext) -> Result<Value> {
    let (d, n) = (dec(arg(a, 0))?, int(arg(a, 1))?);
    let r = match n {
        0.. => {
            let places = u32::try_from(n.min(28)).unwrap_or(28);
            with_scale(if TRUNC { d.trunc_with_scale(places) } else { d }, places)
        }
        ..-28 => Decimal::ZERO,
        _ => {
            let p = Decimal::from_i128_with_scale(10i128.pow(n.unsigned_abs() as u32), 0);
            let q = d.checked_div(p).ok_or_else(numeric_overflow)?;
            let q = if TRUNC { q.trunc() } else { with_scale(q, 0) };
            q.checked_mul(p).ok_or_else(numeric_overflow)?
        }
    };
    Ok(Value::Numeric(r))
}

/// `d` rounded half away from zero or padded to `scale` decimal places,
/// as many as numeric holds.
fn with_scale(mut d: Decimal, scale: u32) -> Decimal {
    d.rescale(scale.min(28));
    d
}

/// Greatest common divisor of integers, non-negative.
fn gcd_int(x: i128, y: i128) -> i128 {
    let (mut x, mut y) = (x.abs(), y.abs());
    while y != 0 {
        (x, y) = (y, x % y);
    }
    x
}

/// Greatest common divisor of numerics, non-negative.
fn gcd_decimal(x: Decimal, y: Decimal) -> Result<Decimal> {
    let (mut x, mut y) = (x.abs(), y.abs());
    while !y.is_zero() {
        (x, y) = (y, x.checked_rem(y).ok_or_else(numeric_overflow)?);
    }
    Ok(x)
}

/// 2201F for the square root of a negative number.
fn negative_sqrt() -> Error {
    Error::other("2201F", "cannot take square root of a negative number")
}

/// 2201F for 0 to a negative power.
fn zero_negative_power() -> Error {
    Error::other("2201F", "zero raised to a negative power is undefined")
}

/// 2201F for a negative number to a fractional power.
fn complex_power() -> Error {
    Error::other("2201F", "a negative number raised to a non-integer power yields a complex result")
}

/// Checks a double result: infinite from finite input is overflow (when
/// `check_overflow`), zero from non-zero input underflow (`check_underflow`).
fn float_range(r: f64, check_overflow: bool, check_underflow: bool) -> Result<f64> {
    if r.is_infinite() && check_overflow {
        Err(out_of_range("value out of range: overflow"))
    } else if r == 0.0 && check_underflow {
        Err(out_of_range("value out of range: underflow"))
    } else {
        Ok(r)
    }
}

/// 2201E for the logarithm of zero or a negative number, else `f(x)`.
fn log_float(x: f64, f: fn(f64) -> f64) -> Result<f64> {
    match x.partial_cmp(&0.0) {
        Some(Ordering::Equal) => Err(Error::other("2201E", "cannot take logarithm of zero")),
        Some(Ordering::Less) => Err(Error::other("2201E", "cannot take logarithm of a negative number")),
        _ => Ok(f(x)),
    }
}

/// The decimal weight of `d`, floor(log10(|d|)); 0 for zero.
fn dweight(d: Decimal) -> i64 {
    match d.mantissa().unsigned_abs() {
        0 => 0,
        m => i64::from(m.ilog10()) - i64::from(d.scale()),
    }
}

/// Rounds a computed result to PostgreSQL's scale: 16 significant digits
/// for a result of decimal weight `weight`, and no fewer decimals than any
/// input has.
fn to_rscale(d: Decimal, weight: i64, inputs: &[Decimal]) -> Decimal {
    let min = inputs.iter().map(Decimal::scale).max().unwrap_or(0);
    with_scale(d, (16i64.saturating_sub(weight).clamp(0, 28) as u32).max(min))
}

/// PostgreSQL's estimate of the decimal weight of ln(d) (`estimate_ln_dweight`).
fn ln_weight(d: Decimal) -> i64 {
    let x = dec_f64(d);
    if (0.9..=1.1).contains(&x) {
        d.checked_sub(Decimal::ONE).map_or(0, dweight)
    } else {
        x.ln().abs().log10() as i64
    }
}

/// ln(2) to 28 places.
fn ln2() -> Decimal {
    Decimal::from_i128_with_scale(6_931_471_805_599_453_094_172_321_215, 28)
}

/// ln(10) to 28 places.
fn ln10() -> Decimal {
    Decimal::from_i128_with_scale(23_025_850_929_940_456_840_179_914_547, 28)
}

/// Square root of a numeric, to PostgreSQL's scale.
fn sqrt_numeric(d: Decimal) -> Result<Decimal> {
    if d.is_sign_negative() && !d.is_zero() {
        return Err(negative_sqrt());
    }
    let mut x = Decimal::from_f64_retain(dec_f64(d).sqrt()).unwrap_or(Decimal::ONE);
    for _ in 0..4 {
        if x.is_zero() {
            break;
        }
        x = d.checked_div(x).and_then(|q| q.checked_add(x)).ok_or_else(numeric_overflow)? / Decimal::TWO;
    }
    // PostgreSQL's weight counts base-10000 digits.
    let weight = dweight(d).div_euclid(4);
    Ok(to_rscale(x, 2 * (weight + 1) - 1, &[d]))
}

/// e^x to about 27 significant digits.
fn exp_decimal(x: Decimal) -> Result<Decimal> {
    let n = (dec_f64(x) / std::f64::consts::LN_2).round();
    if n > 95.0 {
        return Err(numeric_overflow());
    }
    if n < -95.0 {
        return Ok(Decimal::ZERO);
    }
    let n = n as i32;
    // x = n ln 2 + r with |r| <= ln(2) / 2, and e^x = 2^n e^r.
    let r = x.checked_sub(ln2() * Decimal::from(n)).ok_or_else(numeric_overflow)?;
    let (mut sum, mut term) = (Decimal::ONE, Decimal::ONE);
    for i in 1..40u32 {
        term =
            term.checked_mul(r).and_then(|t| t.checked_div(Decimal::from(i))).ok_or_else(numeric_overflow)?;
        if term.is_zero() {
            break;
        }
        sum = sum.checked_add(term).ok_or_else(numeric_overflow)?;
    }
    let scale = Decimal::from_i128_with_scale(1i128 << n.unsigned_abs(), 0);
    if n >= 0 { sum.checked_mul(scale) } else { sum.checked_div(scale) }.ok_or_else(numeric_overflow)
}

/// ln(x) of a positive numeric to about 27 significant digits.
fn ln_decimal(x: Decimal) -> Result<Decimal> {
    if x.is_zero() {
        return Err(Error::other("2201E", "cannot take logarithm of zero"));
    }
    if x.is_sign_negative() {
        return Err(Error::other("2201E", "cannot take logarithm of a negative number"));
    }
    // x = m 10^e with 1 <= m < 10; Newton's method on e^y = m.
    let digits = x.mantissa().unsigned_abs().ilog10();
    let m = Decimal::try_from_i128_with_scale(x.mantissa(), digits).map_err(|_| numeric_overflow())?;
    let mut y = Decimal::from_f64_retain(dec_f64(m).ln()).unwrap_or(Decimal::ONE);
    for _ in 0..3 {
        let step = m.checked_div(exp_decimal(y)?).and_then(|q| q.checked_sub(Decimal::ONE));
        y = step.and_then(|s| y.checked_add(s)).ok_or_else(numeric_overflow)?;
    }
    y.checked_add(ln10() * Decimal::from(dweight(x))).ok_or_else(numeric_overflow)
}

/// log_b(x) of numerics, to PostgreSQL's scale.
fn log_numeric(b: Decimal, x: Decimal) -> Result<Decimal> {
    let ln_b = ln_decimal(b)?;
    let ln_x = ln_decimal(x)?;
    if ln_b.is_zero() {
        return Err(Error::DivisionByZero);
    }
    let r = ln_x.checked_div(ln_b).ok_or_else(numeric_overflow)?;
    Ok(to_rscale(r, ln_weight(x) - ln_weight(b), &[b, x]))
}

/// b^e of numerics, to PostgreSQL's scale: exact by squaring for an
/// integer exponent, else e^(e ln b).
fn power_numeric(b: Decimal, e: Decimal) -> Result<Decimal> {
    if b.is_zero() && e.is_sign_negative() && !e.is_zero() {
        return Err(zero_negative_power());
    }
    let integral = e.fract().is_zero().then(|| i64::try_from(e).ok()).flatten();
    let (value, weight) = match integral {
        Some(n) => {
            let (mut base, mut k, mut acc) = (b, n.unsigned_abs(), Decimal::ONE);
            while k > 0 {
                if k & 1 == 1 {
                    acc = acc.checked_mul(base).ok_or_else(numeric_overflow)?;
                }
                k >>= 1;
                if k > 0 {
                    base = base.checked_mul(base).ok_or_else(numeric_overflow)?;
                }
            }
            let acc = if n < 0 { Decimal::ONE.checked_div(acc).ok_or_else(numeric_overflow)? } else { acc };
            let weight = if b.is_zero() { 0.0 } else { n as f64 * dec_f64(b.abs()).log10() };
            (acc, weight)
        }
        None if b.is_sign_negative() && !b.is_zero() => return Err(complex_power()),
        None if b.is_zero() => (Decimal::ZERO, 0.0),
        None => {
            let l = ln_decimal(b)?.checked_mul(e).ok_or_else(numeric_overflow)?;
            (exp_decimal(l)?, dec_f64(l) * std::f64::consts::LOG10_E)
        }
    };
    Ok(to_rscale(value, weight as i64, &[b, e]))
}

/// `greatest(...)`: the largest non-NULL argument as type code `K`.
fn greatest<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    extreme(K, a, Ordering::Greater)
}

/// `least(...)`: the smallest non-NULL argument as type code `K`.
fn least<const K: u8>(a: &[Value], _: &FnContext) -> Result<Value> {
    extreme(K, a, Ordering::Less)
}

/// The argument that compares `wanted` to all others, NULL if all are.
fn extreme(k: u8, a: &[Value], wanted: Ordering) -> Result<Value> {
    let ty = code_type(k);
    let mut best = Value::Null;
    for v in a.iter().filter(|v| !v.is_null()) {
        let v = v.clone().coerce_to(&ty)?;
        if best.is_null() || v.sql_cmp(&best) == Some(wanted) {
            best = v;
        }
    }
    Ok(best)
}

/// `pi()`.
fn pi(_: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Double(std::f64::consts::PI))
}

/// `random()`: uniform in [0, 1), from a per-thread xorshift64* generator.
fn random(_: &[Value], _: &FnContext) -> Result<Value> {
    thread_local!(static STATE: Cell<u64> = Cell::new(entropy() | 1));
    let x = STATE.with(|state| {
        let mut x = state.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    });
    Ok(Value::Double((x >> 11) as f64 / (1u64 << 53) as f64))
}

// ---- Date and time -------------------------------------------------------

/// Microseconds in a day.
const USECS_PER_DAY: i64 = 86_400_000_000;
/// 1970-01-01 in days since 2000-01-01.
const UNIX_EPOCH_DAYS: i64 = -10_957;
/// The Julian day number of 2000-01-01.
const JULIAN_2000: i64 = 2_451_545;
/// PostgreSQL's finite timestamps: 4714-11-24 BC to 294276-12-31.
const TIMESTAMP_RANGE: Range<i64> = -211_813_488_000_000_000..9_223_371_331_200_000_000;

/// `now()`, `transaction_timestamp()`, `current_timestamp([precision])`.
fn now(a: &[Value], ctx: &FnContext) -> Result<Value> {
    Ok(Value::TimestampTz(TimestampTz(with_precision(ctx.transaction_time.0, a.first(), true)?)))
}

/// `statement_timestamp()`.
fn statement_timestamp(_: &[Value], ctx: &FnContext) -> Result<Value> {
    Ok(Value::TimestampTz(ctx.statement_time))
}

/// `clock_timestamp()`: the time now.
fn clock_timestamp(_: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::TimestampTz(TimestampTz::now()))
}

/// `current_date`: the transaction's date in UTC.
fn current_date(_: &[Value], ctx: &FnContext) -> Result<Value> {
    Ok(Value::Date(ctx.transaction_time.to_timestamp().date()))
}

/// `localtimestamp([precision])`.
fn localtimestamp(a: &[Value], ctx: &FnContext) -> Result<Value> {
    Ok(Value::Timestamp(Timestamp(with_precision(ctx.transaction_time.0, a.first(), false)?)))
}

/// Rounds `usecs` to `precision` fractional digits (half away from zero).
fn with_precision(usecs: i64, precision: Option<&Value>, tz: bool) -> Result<i64> {
    let Some(p) = precision else { return Ok(usecs) };
    let p = int(p)?;
    if p < 0 {
        let zone = if tz { " WITH TIME ZONE" } else { "" };
        return Err(Error::InvalidParameter(format!("TIMESTAMP({p}){zone} precision must not be negative")));
    }
    let unit = 10i64.pow(6 - p.min(6) as u32);
    let rounded = |t: i64| t.saturating_add(unit / 2) / unit * unit;
    Ok(if usecs >= 0 { rounded(usecs) } else { -rounded(usecs.saturating_neg()) })
}

/// Where a date/time argument came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Src {
    Date,
    Ts,
    Tstz,
}

/// A date/time argument as microseconds since 2000-01-01 (a date at
/// midnight, an unknown literal parsed as timestamptz).
fn instant(v: &Value) -> Result<(i64, Src)> {
    match v {
        Value::Date(d) => Ok((d.to_timestamp()?.0, Src::Date)),
        Value::Timestamp(t) => Ok((t.0, Src::Ts)),
        Value::TimestampTz(t) => Ok((t.0, Src::Tstz)),
        Value::Text(s) => Ok((TimestampTz::parse(s)?.0, Src::Tstz)),
        other => Err(unexpected(other)),
    }
}

/// Reads a (lower-case) unit name of `date_trunc` and `date_part`, with
/// PostgreSQL's spellings.
fn unit(low: &str) -> Option<Unit> {
    Unit::named(low)
}

/// 22023 for a unit PostgreSQL does not know.
fn unit_unknown(low: &str, ty: &str) -> Error {
    Error::InvalidParameter(format!("unit \"{low}\" not recognized for type {ty}"))
}

/// 0A000 for a unit that does not apply to the type.
fn unit_unsupported(low: &str, ty: &str) -> Error {
    Error::Unsupported(format!("unit \"{low}\" not supported for type {ty}"))
}

/// ISO day of the week, Monday 1 to Sunday 7.
fn iso_dow(days: i64) -> i64 {
    (days + 5).rem_euclid(7) + 1
}

/// ISO year and week number: the week's Thursday decides the year.
fn iso_week(days: i64) -> (i64, i64) {
    let thursday = days - iso_dow(days) + 4;
    let (year, _, _) = ymd_from_days(thursday);
    (year, (thursday - days_from_ymd(year, 1, 1)) / 7 + 1)
}

/// `date_trunc(field, source)`: timestamp for timestamp, else timestamptz.
fn date_trunc(a: &[Value], _: &FnContext) -> Result<Value> {
    let low = text(arg(a, 0))?.to_lowercase();
    let (usecs, src) = instant(arg(a, 1))?;
    let wrap = |t: i64| {
        if src == Src::Ts {
            Value::Timestamp(Timestamp(t))
        } else {
            Value::TimestampTz(TimestampTz(t))
        }
    };
    if !TIMESTAMP_RANGE.contains(&usecs) {
        return Ok(wrap(usecs));
    }
    let ty = if src == Src::Ts { "timestamp without time zone" } else { "timestamp with time zone" };
    let u = unit(&low).ok_or_else(|| unit_unknown(&low, ty))?;
    let (year, month, _) = ymd_from_days(usecs.div_euclid(USECS_PER_DAY));
    let floor = |step: i64| usecs.div_euclid(step) * step;
    let first_day = |y: i64, m: u32| days_from_ymd(y, m, 1) * USECS_PER_DAY;
    let t = match u {
        Unit::Micro => usecs,
        Unit::Milli => floor(1_000),
        Unit::Second => floor(1_000_000),
        Unit::Minute => floor(60_000_000),
        Unit::Hour => floor(3_600_000_000),
        Unit::Day => floor(USECS_PER_DAY),
        Unit::Week => {
            let days = usecs.div_euclid(USECS_PER_DAY);
            (days - iso_dow(days) + 1) * USECS_PER_DAY
        }
        Unit::Month => first_day(year, month),
        Unit::Quarter => first_day(year, (month - 1) / 3 * 3 + 1),
        Unit::Year => first_day(year, 1),
        Unit::Decade if year > 0 => first_day(year / 10 * 10, 1),
        Unit::Decade => first_day(-((8 - (year - 1)) / 10) * 10, 1),
        Unit::Century if year > 0 => first_day((year + 99) / 100 * 100 - 99, 1),
        Unit::Century => first_day(-((99 - (year - 1)) / 100) * 100 + 1, 1),
        Unit::Millennium if year > 0 => first_day((year + 999) / 1000 * 1000 - 999, 1),
        Unit::Millennium => first_day(-((999 - (year - 1)) / 1000) * 1000 + 1, 1),
        _ => return Err(unit_unsupported(&low, ty)),
    };
    if !TIMESTAMP_RANGE.contains(&t) {
        return Err(datetime_overflow("timestamp out of range"));
    }
    Ok(wrap(t))
}

/// A field of a date/time value.
enum Part {
    /// PostgreSQL's NULL for a field of an infinite value.
    Null,
    /// ±Infinity for a field of an infinite value; true for negative.
    Infinite(bool),
    /// The field's value.
    Value(Decimal),
}

/// `date_part(field, source)` as double precision.
fn date_part(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(match part(arg(a, 0), arg(a, 1), false)? {
        Part::Null => Value::Null,
        Part::Infinite(negative) => Value::Double(if negative { f64::NEG_INFINITY } else { f64::INFINITY }),
        Part::Value(d) => Value::Double(dec_f64(d)),
    })
}

/// `extract(field, source)`: EXTRACT, as numeric.
fn extract(a: &[Value], _: &FnContext) -> Result<Value> {
    match part(arg(a, 0), arg(a, 1), true)? {
        Part::Null => Ok(Value::Null),
        Part::Infinite(_) => Err(Error::unsupported("numeric value \"Infinity\"")),
        Part::Value(d) => Ok(Value::Numeric(d)),
    }
}

/// A field of a date/time value. EXTRACT (`numeric`) has its own rules for
/// a date; `date_part` reads a date as a timestamp, as PostgreSQL does.
fn part(field: &Value, source: &Value, numeric: bool) -> Result<Part> {
    use Unit::*;
    if let Some(d) = intervals::part(field, source)? {
        return Ok(Part::Value(d));
    }
    let low = text(field)?.to_lowercase();
    let (usecs, src) = instant(source)?;
    let date = numeric && src == Src::Date;
    let ty = match src {
        Src::Date if numeric => "date",
        Src::Date | Src::Ts => "timestamp without time zone",
        Src::Tstz => "timestamp with time zone",
    };
    let u = unit(&low).ok_or_else(|| unit_unknown(&low, ty))?;
    let timeless = date && matches!(u, Micro | Milli | Second | Minute | Hour);
    if timeless || (u == Zone && src != Src::Tstz) {
        return Err(unit_unsupported(&low, ty));
    }
    if !TIMESTAMP_RANGE.contains(&usecs) {
        let unbounded = matches!(u, Year | Decade | Century | Millennium | Julian | IsoYear | Epoch);
        return Ok(if unbounded { Part::Infinite(usecs < 0) } else { Part::Null });
    }
    let (days, time) = (usecs.div_euclid(USECS_PER_DAY), usecs.rem_euclid(USECS_PER_DAY));
    let (year, month, day) = ymd_from_days(days);
    let in_minute = time % 60_000_000;
    let bc_shift = |y: i64| if y > 0 { y } else { y - 1 };
    let v = match u {
        Micro => Decimal::from(in_minute),
        Milli => Decimal::new(in_minute, 3),
        Second => Decimal::new(in_minute, 6),
        Minute => Decimal::from(time / 60_000_000 % 60),
        Hour => Decimal::from(time / 3_600_000_000),
        Day => Decimal::from(day),
        Month => Decimal::from(month),
        Quarter => Decimal::from((month - 1) / 3 + 1),
        Year => Decimal::from(bc_shift(year)),
        Decade if year >= 0 => Decimal::from(year / 10),
        Decade => Decimal::from(-((8 - (year - 1)) / 10)),
        Century if year > 0 => Decimal::from((year + 99) / 100),
        Century => Decimal::from(-((99 - (year - 1)) / 100)),
        Millennium if year > 0 => Decimal::from((year + 999) / 1000),
        Millennium => Decimal::from(-((999 - (year - 1)) / 1000)),
        Dow => Decimal::from(iso_dow(days) % 7),
        IsoDow => Decimal::from(iso_dow(days)),
        Doy => Decimal::from(days - days_from_ymd(year, 1, 1) + 1),
        Week => Decimal::from(iso_week(days).1),
        IsoYear => Decimal::from(bc_shift(iso_week(days).0)),
        Epoch if date => Decimal::from((days - UNIX_EPOCH_DAYS) * 86_400),
        Epoch => Decimal::from_i128_with_scale(
            i128::from(usecs) - i128::from(UNIX_EPOCH_DAYS) * i128::from(USECS_PER_DAY),
            6,
        ),
        Julian if date || time == 0 => Decimal::from(days + JULIAN_2000),
        Julian => {
            let fraction = Decimal::from(time).checked_div(Decimal::from(USECS_PER_DAY)).unwrap_or_default();
            with_scale(Decimal::from(days + JULIAN_2000) + fraction, 20)
        }
        Zone => Decimal::ZERO,
    };
    Ok(Part::Value(v))
}

/// The date of `(year, month, day)` where a negative year is BC (22008 for
/// year 0 or a day that does not exist).
fn date_of(year: i64, month: i64, day: i64) -> Result<Date> {
    let bad = || datetime_overflow(format!("date field value out of range: {year}-{month:02}-{day:02}"));
    let astronomical = if year < 0 { year + 1 } else { year };
    let (y, m, d) = (i32::try_from(astronomical), u32::try_from(month), u32::try_from(day));
    match (y, m, d) {
        (Ok(y), Ok(m), Ok(d)) if year != 0 => Date::from_ymd(y, m, d).map_err(|_| bad()),
        _ => Err(bad()),
    }
}

/// `make_date(year, month, day)`; negative years are BC.
fn make_date(a: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Date(date_of(int(arg(a, 0))?, int(arg(a, 1))?, int(arg(a, 2))?)?))
}

/// `make_timestamp(year, month, day, hour, min, sec)`; the year must be AD.
fn make_timestamp(a: &[Value], _: &FnContext) -> Result<Value> {
    let f = [int(arg(a, 0))?, int(arg(a, 1))?, int(arg(a, 2))?, int(arg(a, 3))?, int(arg(a, 4))?];
    let [year, month, day, hour, min] = f;
    let sec = flt(arg(a, 5))?;
    if year <= 0 {
        return Err(datetime_overflow(format!("date field value out of range: {year}-{month:02}-{day:02}")));
    }
    let days = i64::from(date_of(year, month, day)?.0);
    let usec = (sec * 1e6).round_ties_even();
    let valid = (0..=24).contains(&hour)
        && (0..60).contains(&min)
        && (0.0..=60e6).contains(&usec)
        && (hour * 60 + min) * 60_000_000 + usec as i64 <= USECS_PER_DAY;
    if !valid {
        let sec = format!("{:0>2}", Value::Double(sec).to_string());
        return Err(datetime_overflow(format!("time field value out of range: {hour}:{min:02}:{sec}")));
    }
    let t = days.checked_mul(USECS_PER_DAY).map(|d| d + (hour * 60 + min) * 60_000_000 + usec as i64);
    match t.filter(|t| TIMESTAMP_RANGE.contains(t)) {
        Some(t) => Ok(Value::Timestamp(Timestamp(t))),
        None => Err(datetime_overflow("timestamp out of range")),
    }
}

/// `to_timestamp(seconds since 1970)`.
fn to_timestamp(a: &[Value], _: &FnContext) -> Result<Value> {
    let x = flt(arg(a, 0))?;
    if x.is_nan() {
        return Err(datetime_overflow("timestamp cannot be NaN"));
    }
    if x.is_infinite() {
        return Ok(Value::TimestampTz(if x > 0.0 {
            TimestampTz::INFINITY
        } else {
            TimestampTz::NEG_INFINITY
        }));
    }
    let usecs = ((x + (UNIX_EPOCH_DAYS * 86_400) as f64) * 1e6).round_ties_even();
    let range = TIMESTAMP_RANGE.start as f64..TIMESTAMP_RANGE.end as f64;
    if !range.contains(&usecs) {
        return Err(datetime_overflow(format!("timestamp out of range: \"{}\"", Value::Double(x))));
    }
    Ok(Value::TimestampTz(TimestampTz(usecs as i64)))
}

// ---- Session -------------------------------------------------------------

/// `version()`.
fn version(_: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Text(format!("PostgreSQL 15.0 on Centum {}", env!("CARGO_PKG_VERSION"))))
}

/// `current_database()` / `current_catalog`.
fn current_database(_: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::from("postgres"))
}

/// `current_schema()`.
fn current_schema(_: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::from("public"))
}

/// `current_user`, `session_user`, `user`.
fn current_user(_: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::from("centum"))
}

/// `gen_random_uuid()`: a version 4 UUID.
fn gen_random_uuid(_: &[Value], _: &FnContext) -> Result<Value> {
    let hi = entropy();
    let lo = splitmix64(hi ^ entropy().rotate_left(32));
    let mut bytes = ((u128::from(hi) << 64) | u128::from(lo)).to_be_bytes();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    Ok(Value::Uuid(Uuid::from_bytes(bytes)))
}

/// 64 unpredictable bits: the clock, a global counter, the thread and the
/// process's random hash keys, mixed by splitmix64.
fn entropy() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, atomic::Ordering::Relaxed);
    let thread = RandomState::new().hash_one(std::thread::current().id());
    let clock = TimestampTz::now().0 as u64;
    splitmix64(splitmix64(clock ^ count.wrapping_mul(0x9E37_79B9_7F4A_7C15)) ^ thread)
}

/// The splitmix64 finaliser.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The integer of an integer-family value.
pub(crate) fn integer(v: &Value) -> Option<i64> {
    match v {
        Value::SmallInt(i) => Some(i64::from(*i)),
        Value::Integer(i) => Some(i64::from(*i)),
        Value::BigInt(i) => Some(*i),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
