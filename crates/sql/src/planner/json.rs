//! Binding JSON: the `json`/`jsonb` operators and functions, each a
//! [`Builtin`] over `functions::json` with its result type worked out
//! here.
//!
//! An untyped operand takes the type PostgreSQL resolves for it: the key
//! of `->`, `->>`, `?` and `-` is text, the path of `#>`, `#>>`, `#-`,
//! `?|` and `?&` is `text[]`, the other side of `@>`, `<@` and `||` is
//! `jsonb`. An integer key indexes an array.
//!
//! The set-returning functions (`jsonb_each`, `jsonb_array_elements`,
//! `jsonb_object_keys` and their `_text` and `json_` forms) bind to
//! functions returning arrays, one per output column, which `unnest`
//! turns into rows: in FROM (`planner::select`) and in a select list.

use super::bind::{Binder, Typed};
use super::expr::Expr;
use crate::error::{Error, Result};
use crate::functions::arrays::builtin;
use crate::functions::json as exec;
use crate::functions::ScalarImpl;
use centum_types::DataType;
use sqlparser::ast;

fn is_json(t: &Option<DataType>) -> bool {
    matches!(t, Some(DataType::Json | DataType::Jsonb))
}

fn text_array() -> DataType {
    DataType::Array(Box::new(DataType::Text))
}

fn no_operator(l: &Option<DataType>, symbol: &str, r: &Option<DataType>) -> Error {
    let n = |t: &Option<DataType>| t.as_ref().map_or("unknown".to_string(), |t| t.sql_name());
    Error::TypeMismatch {
        code: "42883",
        message: format!("operator does not exist: {} {symbol} {}", n(l), n(r)),
    }
}

/// One output column of a JSON set-returning function: its name, type and
/// the function returning its values as an array.
pub(crate) struct SetColumn {
    pub name: &'static str,
    pub ty: DataType,
    pub values: ScalarImpl,
}

/// The columns of JSON set-returning function `name`, and the type its
/// argument takes; `None` if `name` is not one.
pub(crate) fn set_function(name: &str) -> Option<(Vec<SetColumn>, DataType)> {
    let col = |name, ty, values: ScalarImpl| SetColumn { name, ty, values };
    let (t, jb, js) = (DataType::Text, DataType::Jsonb, DataType::Json);
    Some(match name {
        "jsonb_each" => {
            (vec![col("key", t.clone(), exec::each_keys), col("value", jb.clone(), exec::each_values)], jb)
        }
        "jsonb_each_text" => {
            (vec![col("key", t.clone(), exec::each_text_keys), col("value", t, exec::each_text_values)], jb)
        }
        "jsonb_object_keys" => (vec![col("jsonb_object_keys", t, exec::object_keys)], jb),
        "jsonb_array_elements" => (vec![col("value", jb.clone(), exec::elements)], jb),
        "jsonb_array_elements_text" => (vec![col("value", t, exec::elements_text)], jb),
        "json_each" => (
            vec![
                col("key", t.clone(), exec::json_each_keys),
                col("value", js.clone(), exec::json_each_values),
            ],
            js,
        ),
        "json_each_text" => (
            vec![
                col("key", t.clone(), exec::json_each_text_keys),
                col("value", t, exec::json_each_text_values),
            ],
            js,
        ),
        "json_object_keys" => (vec![col("json_object_keys", t, exec::json_object_keys)], js),
        "json_array_elements" => (vec![col("value", js.clone(), exec::json_elements)], js),
        "json_array_elements_text" => (vec![col("value", t, exec::json_elements_text)], js),
        _ => return None,
    })
}

impl Binder<'_> {
    /// The array-valued calls behind a JSON set-returning function over
    /// bound argument `arg`: one per output column, with the columns.
    pub(crate) fn json_set_call(
        &mut self,
        name: &str,
        arg: Typed,
    ) -> Result<Option<(Vec<Expr>, Vec<SetColumn>)>> {
        let Some((cols, takes)) = set_function(name) else { return Ok(None) };
        if arg.1.is_some() && !is_json(&arg.1) {
            return Err(crate::functions::arrays::no_function(name, &[arg.1]));
        }
        let arg = self.typed_as(arg, &takes)?;
        let calls = cols
            .iter()
            .map(|c| {
                let ty = DataType::Array(Box::new(c.ty.clone()));
                Expr::Func(builtin(c.name, Some(ty), true, c.values), vec![arg.clone()])
            })
            .collect();
        Ok(Some((calls, cols)))
    }

    /// A binary operator with a `json` or `jsonb` operand; `None` when the
    /// operator is not a JSON one for these operands.
    pub(crate) fn json_operator(
        &mut self,
        op: &ast::BinaryOperator,
        l: Typed,
        r: Typed,
    ) -> Result<std::result::Result<Typed, (Typed, Typed)>> {
        use ast::BinaryOperator as B;
        let jsonb = Some(DataType::Jsonb);
        let (lt, rt) = (l.1.clone(), r.1.clone());
        let call = |name: &'static str, ret: DataType, eval: ScalarImpl, l: Expr, r: Expr| {
            (Expr::Func(builtin(name, Some(ret.clone()), true, eval), vec![l, r]), Some(ret))
        };
        let key_type = |t: &Option<DataType>| match t {
            None => Some(DataType::Text),
            Some(DataType::SmallInt | DataType::Integer | DataType::BigInt) => t.clone(),
            Some(t) if t.is_string() => Some(DataType::Text),
            _ => None,
        };
        Ok(Ok(match op {
            B::Arrow | B::LongArrow if is_json(&lt) => {
                let Some(kt) = key_type(&rt) else { return Err(no_operator(&lt, &op.to_string(), &rt)) };
                let r = self.typed_as(r, &kt)?;
                let long = matches!(op, B::LongArrow);
                match (lt == jsonb, long) {
                    (true, false) => call("jsonb_object_field", DataType::Jsonb, exec::get, l.0, r),
                    (true, true) => call("jsonb_object_field_text", DataType::Text, exec::get_text, l.0, r),
                    (false, false) => call("json_object_field", DataType::Json, exec::json_get, l.0, r),
                    (false, true) => {
                        call("json_object_field_text", DataType::Text, exec::json_get_text, l.0, r)
                    }
                }
            }
            B::HashArrow | B::HashLongArrow if is_json(&lt) => {
                let r = self.typed_as(r, &text_array())?;
                let long = matches!(op, B::HashLongArrow);
                match (lt == jsonb, long) {
                    (true, false) => call("jsonb_extract_path", DataType::Jsonb, exec::get_path, l.0, r),
                    (true, true) => {
                        call("jsonb_extract_path_text", DataType::Text, exec::get_path_text, l.0, r)
                    }
                    (false, false) => call("json_extract_path", DataType::Json, exec::json_get_path, l.0, r),
                    (false, true) => {
                        call("json_extract_path_text", DataType::Text, exec::json_get_path_text, l.0, r)
                    }
                }
            }
            B::AtArrow | B::ArrowAt if lt == jsonb || rt == jsonb => {
                if !matches!(lt, None | Some(DataType::Jsonb)) || !matches!(rt, None | Some(DataType::Jsonb))
                {
                    return Err(no_operator(&lt, &op.to_string(), &rt));
                }
                let (l, r) = (self.typed_as(l, &DataType::Jsonb)?, self.typed_as(r, &DataType::Jsonb)?);
                let (name, eval): (&'static str, ScalarImpl) = match op {
                    B::AtArrow => ("jsonb_contains", exec::contains),
                    _ => ("jsonb_contained", exec::contained),
                };
                call(name, DataType::Boolean, eval, l, r)
            }
            B::Question | B::QuestionPipe | B::QuestionAnd if lt == jsonb => {
                let (want, name, eval): (DataType, &'static str, ScalarImpl) = match op {
                    B::Question => (DataType::Text, "jsonb_exists", exec::exists),
                    B::QuestionPipe => (text_array(), "jsonb_exists_any", exec::exists_any),
                    _ => (text_array(), "jsonb_exists_all", exec::exists_all),
                };
                if rt.as_ref().is_some_and(|t| t != &want && !(want == DataType::Text && t.is_string())) {
                    return Err(no_operator(&lt, &op.to_string(), &rt));
                }
                let r = self.typed_as(r, &want)?;
                call(name, DataType::Boolean, eval, l.0, r)
            }
            B::StringConcat
                if (lt == jsonb && matches!(rt, None | Some(DataType::Jsonb)))
                    || (rt == jsonb && lt.is_none()) =>
            {
                let (l, r) = (self.typed_as(l, &DataType::Jsonb)?, self.typed_as(r, &DataType::Jsonb)?);
                call("jsonb_concat", DataType::Jsonb, exec::concat, l, r)
            }
            B::Minus if lt == jsonb => {
                let (want, eval): (DataType, ScalarImpl) = match &rt {
                    None => (DataType::Text, exec::delete_key),
                    Some(DataType::SmallInt | DataType::Integer | DataType::BigInt) => {
                        (DataType::BigInt, exec::delete_index)
                    }
                    Some(t) if t.is_string() => (DataType::Text, exec::delete_key),
                    Some(DataType::Array(e)) if e.is_string() => (text_array(), exec::delete_key),
                    _ => return Err(no_operator(&lt, "-", &rt)),
                };
                let r = self.typed_as(r, &want)?;
                call("jsonb_delete", DataType::Jsonb, eval, l.0, r)
            }
            B::HashMinus if lt == jsonb => {
                let r = self.typed_as(r, &text_array())?;
                call("jsonb_delete_path", DataType::Jsonb, exec::delete_path, l.0, r)
            }
            B::Arrow
            | B::LongArrow
            | B::HashArrow
            | B::HashLongArrow
            | B::HashMinus
            | B::Question
            | B::QuestionPipe
            | B::QuestionAnd => return Err(no_operator(&lt, &op.to_string(), &rt)),
            _ => return Ok(Err((l, r))),
        }))
    }

    /// A JSON function; the arguments back when `name` is not one.
    pub(crate) fn json_function(
        &mut self,
        name: &str,
        args: Vec<Typed>,
    ) -> Result<std::result::Result<Typed, Vec<Typed>>> {
        let (t, jb, js) = (DataType::Text, DataType::Jsonb, DataType::Json);
        let types: Vec<Option<DataType>> = args.iter().map(|a| a.1.clone()).collect();
        let no = || crate::functions::arrays::no_function(name, &types);
        if set_function(name).is_some() {
            let one = <[Typed; 1]>::try_from(args).map_err(|_| no())?;
            let [arg] = one;
            return match self.json_set_call(name, arg)? {
                Some((mut calls, cols)) if self.json_sets_as_arrays && cols.len() == 1 => {
                    let ty = DataType::Array(Box::new(cols[0].ty.clone()));
                    Ok(Ok((calls.remove(0), Some(ty))))
                }
                Some(_) if self.json_sets_as_arrays => {
                    Err(Error::unsupported(format!("{name} in a select list (call it in FROM)")))
                }
                _ => Err(Error::other("0A000", format!("set-returning function {name} is not allowed here"))),
            };
        }
        // Fixed signatures: parameter types, how many may be left out,
        // result type, implementation.
        type Sig = (Vec<DataType>, usize, DataType, ScalarImpl);
        let fixed: Option<Sig> = match name {
            "jsonb_typeof" => Some((vec![jb.clone()], 0, t.clone(), exec::type_of)),
            "json_typeof" => Some((vec![js.clone()], 0, t.clone(), exec::type_of)),
            "jsonb_array_length" => Some((vec![jb.clone()], 0, DataType::Integer, exec::array_length)),
            "json_array_length" => Some((vec![js.clone()], 0, DataType::Integer, exec::array_length)),
            "jsonb_strip_nulls" => Some((vec![jb.clone()], 0, jb.clone(), exec::strip_nulls)),
            "json_strip_nulls" => Some((vec![js.clone()], 0, js.clone(), exec::json_strip_nulls)),
            "jsonb_pretty" => Some((vec![jb.clone()], 0, t.clone(), exec::pretty)),
            "jsonb_set" => Some((
                vec![jb.clone(), text_array(), jb.clone(), DataType::Boolean],
                1,
                jb.clone(),
                exec::set,
            )),
            "jsonb_insert" => Some((
                vec![jb.clone(), text_array(), jb.clone(), DataType::Boolean],
                1,
                jb.clone(),
                exec::insert,
            )),
            _ => None,
        };
        if let Some((params, optional, ret, eval)) = fixed {
            if !(params.len() - optional..=params.len()).contains(&args.len()) {
                return Err(no());
            }
            let mut exprs = Vec::with_capacity(args.len());
            for (a, p) in args.into_iter().zip(&params) {
                let ok = match (&a.1, p) {
                    (None, _) => true,
                    (Some(x), DataType::Json | DataType::Jsonb) => is_json(&Some(x.clone())),
                    (Some(x), p) => x == p || (x.is_string() && p.is_string()),
                };
                if !ok {
                    return Err(no());
                }
                exprs.push(self.typed_as(a, p)?);
            }
            // jsonb_set's target and the new value are not STRICT together:
            // a NULL target gives NULL either way.
            let strict = !matches!(name, "jsonb_set" | "jsonb_insert");
            return Ok(Ok((
                Expr::Func(builtin(static_name(name), Some(ret.clone()), strict, eval), exprs),
                Some(ret),
            )));
        }
        // Variadic "any" arguments: untyped ones are text.
        let (ret, eval, min, strict): (DataType, ScalarImpl, usize, bool) = match name {
            "jsonb_build_object" => (jb, exec::build_object, 0, false),
            "json_build_object" => (js, exec::json_build_object, 0, false),
            "jsonb_build_array" => (jb, exec::build_array, 0, false),
            "json_build_array" => (js, exec::json_build_array, 0, false),
            "to_jsonb" if args.len() == 1 => (jb, exec::to_jsonb, 1, true),
            "to_json" if args.len() == 1 => (js, exec::to_json, 1, true),
            "jsonb_extract_path" => (jb, exec::extract_path, 2, true),
            "jsonb_extract_path_text" => (t, exec::extract_path_text, 2, true),
            "json_extract_path" => (js, exec::json_extract_path, 2, true),
            "json_extract_path_text" => (t, exec::json_extract_path_text, 2, true),
            "to_jsonb" | "to_json" => return Err(no()),
            _ => return Ok(Err(args)),
        };
        if args.len() < min {
            return Err(no());
        }
        let path = name.contains("extract_path");
        let mut exprs = Vec::with_capacity(args.len());
        for (i, a) in args.into_iter().enumerate() {
            let want = match (path, i) {
                (true, 0) if name.starts_with("jsonb") => DataType::Jsonb,
                (true, 0) => DataType::Json,
                (true, _) => DataType::Text,
                _ => match &a.1 {
                    Some(t) => t.clone(),
                    None => DataType::Text,
                },
            };
            exprs.push(self.typed_as(a, &want)?);
        }
        Ok(Ok((Expr::Func(builtin(static_name(name), Some(ret.clone()), strict, eval), exprs), Some(ret))))
    }
}

/// The static spelling of a JSON function's name, for EXPLAIN.
fn static_name(name: &str) -> &'static str {
    const NAMES: &[&str] = &[
        "jsonb_typeof",
        "json_typeof",
        "jsonb_array_length",
        "json_array_length",
        "jsonb_strip_nulls",
        "json_strip_nulls",
        "jsonb_pretty",
        "jsonb_set",
        "jsonb_insert",
        "jsonb_build_object",
        "json_build_object",
        "jsonb_build_array",
        "json_build_array",
        "to_jsonb",
        "to_json",
        "jsonb_extract_path",
        "jsonb_extract_path_text",
        "json_extract_path",
        "json_extract_path_text",
    ];
    NAMES.iter().find(|n| **n == name).copied().unwrap_or("json")
}
