//! JSON operators and functions over `jsonb` ([`Value::Jsonb`], read in
//! place through [`JRef`]) and `json` ([`Value::Json`], text kept as
//! written).
//!
//! ```text
//!   access     j -> 'k'   j -> 0   j ->> 'k'   j #> '{a,0}'   j #>> '{a,0}'
//!   test       j @> j   j <@ j   j ? 'k'   j ?| '{a,b}'   j ?& '{a,b}'
//!   change     j || j   j - 'k'   j - 0   j - '{a,b}'::text[]   j #- '{a,0}'
//!   functions  jsonb_typeof jsonb_array_length jsonb_build_object
//!              jsonb_build_array to_jsonb jsonb_set jsonb_insert
//!              jsonb_strip_nulls jsonb_pretty jsonb_extract_path[_text]
//!              and the json_ forms
//!   sets       jsonb_each[_text] jsonb_array_elements[_text]
//!              jsonb_object_keys (as arrays that `unnest` turns into rows)
//! ```
//!
//! Each is a [`Builtin`] whose types the binder works out
//! (`planner::json`). The `json` forms of the access operators and the
//! set functions return slices of the text as written, as PostgreSQL
//! does; the other `json` functions work on the `jsonb` form and print
//! it back.

use centum_types::json::{self, JRef, Jsonb, Kind, Node};
use centum_types::Value;

use super::FnContext;
use crate::error::{Error, Result};

fn invalid(message: impl Into<String>) -> Error {
    Error::other("22023", message)
}

/// The document of a `jsonb` argument; a `json` one is parsed.
fn doc(v: &Value) -> Result<std::borrow::Cow<'_, Jsonb>> {
    Ok(match v {
        Value::Jsonb(j) => std::borrow::Cow::Borrowed(j),
        Value::Json(s) => std::borrow::Cow::Owned(Jsonb::parse(s)?),
        other => std::borrow::Cow::Owned(Jsonb::parse(&other.to_string())?),
    })
}

fn text_arg(v: &Value) -> Option<&str> {
    match v {
        Value::Text(s) => Some(s),
        _ => None,
    }
}

/// The text elements of a `text[]` argument (NULL elements as `None`).
fn path(v: &Value) -> Vec<Option<String>> {
    match v {
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::Null => None,
                other => Some(other.to_string()),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// One step into a document: a key of an object, or an index (a
/// number, negative from the end) into an array.
fn step<'a>(j: JRef<'a>, key: &str) -> Option<JRef<'a>> {
    match j.kind() {
        Kind::Object => j.get(key),
        Kind::Array => j.index(key.trim().parse::<i64>().ok()?),
        _ => None,
    }
}

fn jsonb_value(j: JRef<'_>) -> Value {
    Value::Jsonb(j.to_jsonb())
}

/// `->>`'s text: a string's contents, NULL for `null`, else the JSON text.
fn as_text(j: JRef<'_>) -> Value {
    match j.kind() {
        Kind::Null => Value::Null,
        Kind::String(s) => Value::Text(s.to_string()),
        _ => Value::Text(j.text()),
    }
}

// ---- jsonb access ---------------------------------------------------------

/// Applies `read` to the value `->` finds (the member or element the key
/// names), or gives NULL: `->` and `->>` read it in place, and `->>` makes
/// no copy of it on the way to its text.
fn with_member(args: &[Value], read: impl FnOnce(JRef<'_>) -> Value) -> Result<Value> {
    let d = doc(&args[0])?;
    let r = d.root();
    let found = match &args[1] {
        Value::Text(k) => r.get(k),
        v => super::integer(v).and_then(|i| r.index(i)),
    };
    Ok(found.map_or(Value::Null, read))
}

/// Applies `read` to the value `#>` finds at the path, or gives NULL.
fn with_path(args: &[Value], read: impl FnOnce(JRef<'_>) -> Value) -> Result<Value> {
    let d = doc(&args[0])?;
    let mut at = d.root();
    for k in path(&args[1]) {
        let Some(k) = k else { return Ok(Value::Null) };
        match step(at, &k) {
            Some(next) => at = next,
            None => return Ok(Value::Null),
        }
    }
    Ok(read(at))
}

/// `jsonb -> text` and `jsonb -> integer`.
pub(crate) fn get(args: &[Value], _: &FnContext) -> Result<Value> {
    with_member(args, jsonb_value)
}

/// `jsonb ->> text` and `jsonb ->> integer`.
pub(crate) fn get_text(args: &[Value], _: &FnContext) -> Result<Value> {
    with_member(args, as_text)
}

/// `jsonb #> text[]`.
pub(crate) fn get_path(args: &[Value], _: &FnContext) -> Result<Value> {
    with_path(args, jsonb_value)
}

/// `jsonb #>> text[]`.
pub(crate) fn get_path_text(args: &[Value], _: &FnContext) -> Result<Value> {
    with_path(args, as_text)
}

/// `jsonb_extract_path(j, VARIADIC path)`: the path as separate arguments.
pub(crate) fn extract_path(args: &[Value], cx: &FnContext) -> Result<Value> {
    get_path(&[args[0].clone(), Value::Array(args[1..].to_vec())], cx)
}

/// `jsonb_extract_path_text(j, VARIADIC path)`.
pub(crate) fn extract_path_text(args: &[Value], cx: &FnContext) -> Result<Value> {
    get_path_text(&[args[0].clone(), Value::Array(args[1..].to_vec())], cx)
}

// ---- json (text) access ---------------------------------------------------

/// The member or element of `json` text `s` that `key` names.
fn json_step<'a>(s: &'a str, key: &Value) -> Result<Option<&'a str>> {
    Ok(match key {
        Value::Text(k) => json::parse::object_members(s)?
            .and_then(|m| m.into_iter().rev().find(|(mk, _)| mk == k).map(|m| m.1)),
        v => {
            let Some(i) = super::integer(v) else { return Ok(None) };
            json::parse::array_elements(s)?.and_then(|e| {
                let i = if i < 0 { e.len() as i64 + i } else { i };
                usize::try_from(i).ok().and_then(|i| e.get(i).copied())
            })
        }
    })
}

fn json_text_value(s: &str) -> Result<Value> {
    Ok(match json::parse(s)? {
        Node::Null => Value::Null,
        Node::String(t) => Value::Text(t),
        _ => Value::Text(s.to_string()),
    })
}

fn json_text(v: &Value) -> String {
    match v {
        Value::Json(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `json -> text` and `json -> integer`: the member's text as written
/// (the last of duplicate keys, as PostgreSQL finds it).
pub(crate) fn json_get(args: &[Value], _: &FnContext) -> Result<Value> {
    let s = json_text(&args[0]);
    Ok(json_step(&s, &args[1])?.map_or(Value::Null, |t| Value::Json(t.to_string())))
}

/// `json ->> text` and `json ->> integer`.
pub(crate) fn json_get_text(args: &[Value], _: &FnContext) -> Result<Value> {
    let s = json_text(&args[0]);
    match json_step(&s, &args[1])? {
        Some(t) => json_text_value(t),
        None => Ok(Value::Null),
    }
}

/// `json #> text[]`.
pub(crate) fn json_get_path(args: &[Value], _: &FnContext) -> Result<Value> {
    let mut s = json_text(&args[0]);
    for k in path(&args[1]) {
        let Some(k) = k else { return Ok(Value::Null) };
        let key = match k.trim().parse::<i64>() {
            Ok(i) if json::parse::array_elements(&s)?.is_some() => Value::BigInt(i),
            _ => Value::Text(k),
        };
        match json_step(&s, &key)? {
            Some(t) => s = t.to_string(),
            None => return Ok(Value::Null),
        }
    }
    Ok(Value::Json(s.trim().to_string()))
}

/// `json #>> text[]`.
pub(crate) fn json_get_path_text(args: &[Value], cx: &FnContext) -> Result<Value> {
    match json_get_path(args, cx)? {
        Value::Json(s) => json_text_value(&s),
        _ => Ok(Value::Null),
    }
}

/// `json_extract_path(j, VARIADIC path)`.
pub(crate) fn json_extract_path(args: &[Value], cx: &FnContext) -> Result<Value> {
    json_get_path(&[args[0].clone(), Value::Array(args[1..].to_vec())], cx)
}

/// `json_extract_path_text(j, VARIADIC path)`.
pub(crate) fn json_extract_path_text(args: &[Value], cx: &FnContext) -> Result<Value> {
    json_get_path_text(&[args[0].clone(), Value::Array(args[1..].to_vec())], cx)
}

// ---- tests ----------------------------------------------------------------

/// `jsonb @> jsonb`.
pub(crate) fn contains(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Boolean(doc(&args[0])?.root().contains(doc(&args[1])?.root())))
}

/// `jsonb <@ jsonb`.
pub(crate) fn contained(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Boolean(doc(&args[1])?.root().contains(doc(&args[0])?.root())))
}

/// `jsonb ? text`.
pub(crate) fn exists(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Boolean(doc(&args[0])?.root().exists(text_arg(&args[1]).unwrap_or_default())))
}

/// `jsonb ?| text[]`.
pub(crate) fn exists_any(args: &[Value], _: &FnContext) -> Result<Value> {
    let d = doc(&args[0])?;
    Ok(Value::Boolean(path(&args[1]).iter().flatten().any(|k| d.root().exists(k))))
}

/// `jsonb ?& text[]`.
pub(crate) fn exists_all(args: &[Value], _: &FnContext) -> Result<Value> {
    let d = doc(&args[0])?;
    Ok(Value::Boolean(path(&args[1]).iter().flatten().all(|k| d.root().exists(k))))
}

// ---- changes ----------------------------------------------------------------

fn out(n: &Node) -> Value {
    Value::Jsonb(Jsonb::from_node(n))
}

/// `jsonb || jsonb`: two objects merge (the right's members win); anything
/// else concatenates as arrays, a scalar or object counting as an array of
/// itself.
pub(crate) fn concat(args: &[Value], _: &FnContext) -> Result<Value> {
    let (a, b) = (doc(&args[0])?.to_node(), doc(&args[1])?.to_node());
    Ok(out(&match (a, b) {
        (Node::Object(mut x), Node::Object(y)) => {
            x.extend(y);
            Node::Object(x)
        }
        (a, b) => {
            let items = |n: Node| match n {
                Node::Array(v) => v,
                other => vec![other],
            };
            let mut v = items(a);
            v.extend(items(b));
            Node::Array(v)
        }
    }))
}

/// `jsonb - text`: the object without the key, or the array without
/// string elements equal to it.
pub(crate) fn delete_key(args: &[Value], _: &FnContext) -> Result<Value> {
    let keys: Vec<String> = match &args[1] {
        Value::Array(_) => path(&args[1]).into_iter().flatten().collect(),
        v => vec![text_arg(v).unwrap_or_default().to_string()],
    };
    Ok(out(&match doc(&args[0])?.to_node() {
        Node::Object(m) => Node::Object(m.into_iter().filter(|(k, _)| !keys.contains(k)).collect()),
        Node::Array(items) => Node::Array(
            items.into_iter().filter(|i| !matches!(i, Node::String(s) if keys.contains(s))).collect(),
        ),
        _ => return Err(invalid("cannot delete from scalar")),
    }))
}

/// `jsonb - integer`: the array without that element (negative from the
/// end).
pub(crate) fn delete_index(args: &[Value], _: &FnContext) -> Result<Value> {
    let i = super::integer(&args[1]).unwrap_or_default();
    match doc(&args[0])?.to_node() {
        Node::Array(mut items) => {
            let n = items.len() as i64;
            let at = if i < 0 { n + i } else { i };
            if (0..n).contains(&at) {
                items.remove(at as usize);
            }
            Ok(out(&Node::Array(items)))
        }
        Node::Object(_) => Err(invalid("cannot delete from object using integer index")),
        _ => Err(invalid("cannot delete from scalar")),
    }
}

/// The child of a container that a path step names, for changing it.
fn child_mut<'a>(n: &'a mut Node, key: &str) -> Result<Option<&'a mut Node>> {
    Ok(match n {
        Node::Object(m) => m.iter_mut().rev().find(|(k, _)| k == key).map(|(_, v)| v),
        Node::Array(items) => {
            let i = array_index(key)?;
            let len = items.len() as i64;
            let at = if i < 0 { len + i } else { i };
            if (0..len).contains(&at) {
                items.get_mut(at as usize)
            } else {
                None
            }
        }
        _ => None,
    })
}

/// The node a path leads to, if every step finds one.
fn walk<'a>(root: &'a mut Node, path: &[String]) -> Result<Option<&'a mut Node>> {
    let mut at = Some(root);
    for k in path {
        at = match at {
            Some(n) => child_mut(n, k)?,
            None => None,
        };
    }
    Ok(at)
}

fn array_index(key: &str) -> Result<i64> {
    key.trim()
        .parse::<i64>()
        .map_err(|_| Error::other("22P02", format!("path element is not an integer: {key}")))
}

/// `jsonb #- text[]`: the document without the member or element at the
/// path.
pub(crate) fn delete_path(args: &[Value], _: &FnContext) -> Result<Value> {
    let mut root = doc(&args[0])?.to_node();
    let keys: Vec<Option<String>> = path(&args[1]);
    if matches!(root, Node::Object(_) | Node::Array(_)) {
        if keys.iter().any(Option::is_none) {
            return Err(invalid("path element at position 1 is null"));
        }
        let keys: Vec<String> = keys.into_iter().flatten().collect();
        if let Some((last, parents)) = keys.split_last() {
            match walk(&mut root, parents)? {
                Some(Node::Object(m)) => m.retain(|(k, _)| k != last),
                Some(Node::Array(items)) => {
                    if let Ok(i) = last.trim().parse::<i64>() {
                        let n = items.len() as i64;
                        let i = if i < 0 { n + i } else { i };
                        if (0..n).contains(&i) {
                            items.remove(i as usize);
                        }
                    } else {
                        return Err(Error::other(
                            "22P02",
                            format!("path element at position {} is not an integer: \"{last}\"", keys.len()),
                        ));
                    }
                }
                _ => {}
            }
        }
        Ok(out(&root))
    } else {
        Err(invalid("cannot delete path in scalar"))
    }
}

/// `jsonb_set(target, path, new [, create_missing])` and
/// `jsonb_insert(target, path, new [, insert_after])`: `insert` puts the
/// value before (or after) the array element at the path instead of
/// replacing it, and refuses to replace an object member.
fn set_or_insert(args: &[Value], insert: bool) -> Result<Value> {
    if args[..3].iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let mut root = doc(&args[0])?.to_node();
    let new = doc(&args[2])?.to_node();
    let flag = !matches!(args.get(3), Some(Value::Boolean(false)));
    let flag = if insert { matches!(args.get(3), Some(Value::Boolean(true))) } else { flag };
    let keys = path(&args[1]);
    if let Some(i) = keys.iter().position(Option::is_none) {
        return Err(invalid(format!("path element at position {} is null", i + 1)));
    }
    let keys: Vec<String> = keys.into_iter().flatten().collect();
    if !matches!(root, Node::Object(_) | Node::Array(_)) {
        return Err(invalid("cannot set path in scalar"));
    }
    let Some((last, parents)) = keys.split_last() else { return Ok(out(&root)) };
    match walk(&mut root, parents)? {
        Some(Node::Object(m)) => match m.iter_mut().rev().find(|(k, _)| k == last) {
            Some(_) if insert => return Err(invalid("cannot replace existing key")),
            Some((_, v)) => *v = new,
            None if flag || insert => m.push((last.clone(), new)),
            None => {}
        },
        Some(Node::Array(items)) => {
            let i = array_index(last)?;
            let n = items.len() as i64;
            if insert {
                let at = if i < 0 { n + i } else { i };
                let at = if flag { at + 1 } else { at };
                items.insert(at.clamp(0, n) as usize, new);
            } else if (-n..n).contains(&i) {
                let at = if i < 0 { n + i } else { i };
                items[at as usize] = new;
            } else if flag {
                // Past either end: prepended or appended.
                if i < 0 {
                    items.insert(0, new);
                } else {
                    items.push(new);
                }
            }
        }
        _ => {}
    }
    Ok(out(&root))
}

/// `jsonb_set`.
pub(crate) fn set(args: &[Value], _: &FnContext) -> Result<Value> {
    set_or_insert(args, false)
}

/// `jsonb_insert`.
pub(crate) fn insert(args: &[Value], _: &FnContext) -> Result<Value> {
    set_or_insert(args, true)
}

fn strip(n: Node) -> Node {
    match n {
        Node::Object(m) => Node::Object(
            m.into_iter().filter(|(_, v)| *v != Node::Null).map(|(k, v)| (k, strip(v))).collect(),
        ),
        Node::Array(items) => Node::Array(items.into_iter().map(strip).collect()),
        other => other,
    }
}

/// `jsonb_strip_nulls`: object members whose value is null removed, at
/// every level.
pub(crate) fn strip_nulls(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(out(&strip(doc(&args[0])?.to_node())))
}

/// `json_strip_nulls`.
pub(crate) fn json_strip_nulls(args: &[Value], _: &FnContext) -> Result<Value> {
    let mut s = String::new();
    strip(json::parse(&json_text(&args[0]))?).write_json(",", ":", &mut s);
    Ok(Value::Json(s))
}

// ---- inspection ---------------------------------------------------------------

/// `jsonb_typeof`.
pub(crate) fn type_of(args: &[Value], _: &FnContext) -> Result<Value> {
    let name = match doc(&args[0])?.root().kind() {
        Kind::Null => "null",
        Kind::Bool(_) => "boolean",
        Kind::Number(_) => "number",
        Kind::String(_) => "string",
        Kind::Array => "array",
        Kind::Object => "object",
    };
    Ok(Value::Text(name.into()))
}

/// `jsonb_array_length`.
pub(crate) fn array_length(args: &[Value], _: &FnContext) -> Result<Value> {
    let d = doc(&args[0])?;
    match d.root().kind() {
        Kind::Array => Ok(Value::Integer(d.root().count() as i32)),
        Kind::Object => Err(invalid("cannot get array length of a non-array")),
        _ => Err(invalid("cannot get array length of a scalar")),
    }
}

/// `jsonb_pretty`.
pub(crate) fn pretty(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Text(doc(&args[0])?.to_node().pretty()))
}

// ---- construction -------------------------------------------------------------

fn node(v: &Value) -> Result<Node> {
    Ok(json::node_of_value(v)?)
}

/// The `json` text of a value inside `json`'s builders: `json` as written,
/// `jsonb` as it prints, anything else as `to_json` writes it (compact).
fn json_text_of(v: &Value) -> Result<String> {
    Ok(match v {
        Value::Json(s) => s.clone(),
        Value::Jsonb(j) => j.to_string(),
        other => {
            let mut s = String::new();
            node(other)?.write_json(",", ":", &mut s);
            s
        }
    })
}

/// The key of a builder's or an object aggregate's member.
fn key_text(v: &Value, null_message: impl FnOnce() -> String) -> Result<String> {
    match v {
        Value::Null => Err(invalid(null_message())),
        Value::Text(s) => Ok(s.clone()),
        other => Ok(other.to_string()),
    }
}

fn even_arguments(args: &[Value]) -> Result<()> {
    if !args.len().is_multiple_of(2) {
        return Err(invalid("argument list must have even number of elements"));
    }
    Ok(())
}

/// `jsonb_build_object`.
pub(crate) fn build_object(args: &[Value], _: &FnContext) -> Result<Value> {
    even_arguments(args)?;
    let mut members = Vec::with_capacity(args.len() / 2);
    for (i, pair) in args.chunks(2).enumerate() {
        let key = key_text(&pair[0], || format!("argument {}: key must not be null", 2 * i + 1))?;
        members.push((key, node(&pair[1])?));
    }
    Ok(out(&Node::Object(members)))
}

/// Writes `{` open, the members, `close`: the text of `json`'s object
/// builders.
fn json_object_text(
    pairs: &[Value],
    open: &str,
    close: &str,
    null_key: &dyn Fn(usize) -> String,
) -> Result<Value> {
    let mut s = String::from(open);
    for (i, pair) in pairs.chunks(2).enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        json::write_string(&key_text(&pair[0], || null_key(i))?, &mut s);
        s.push_str(" : ");
        s.push_str(&json_text_of(pair.get(1).unwrap_or(&Value::Null))?);
    }
    s.push_str(close);
    Ok(Value::Json(s))
}

/// `json_build_object`: `{"a" : 1, "b" : 2}`, PostgreSQL's spacing.
pub(crate) fn json_build_object(args: &[Value], _: &FnContext) -> Result<Value> {
    even_arguments(args)?;
    json_object_text(args, "{", "}", &|i| format!("argument {}: key must not be null", 2 * i + 1))
}

/// `jsonb_build_array`.
pub(crate) fn build_array(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(out(&Node::Array(args.iter().map(node).collect::<Result<_>>()?)))
}

/// `[a, b]` from the values' `json` texts.
fn json_array_text(items: &[Value]) -> Result<Value> {
    let texts = items.iter().map(json_text_of).collect::<Result<Vec<_>>>()?;
    Ok(Value::Json(format!("[{}]", texts.join(", "))))
}

/// `json_build_array`.
pub(crate) fn json_build_array(args: &[Value], _: &FnContext) -> Result<Value> {
    json_array_text(args)
}

/// `to_jsonb`.
pub(crate) fn to_jsonb(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(out(&node(&args[0])?))
}

/// `to_json`.
pub(crate) fn to_json(args: &[Value], _: &FnContext) -> Result<Value> {
    Ok(Value::Json(json_text_of(&args[0])?))
}

/// The result of `jsonb_agg` / `json_agg` over `items` (NULLs are
/// `null`).
pub(crate) fn aggregate_array(items: &[Value], as_json: bool) -> Result<Value> {
    if as_json {
        return json_array_text(items);
    }
    Ok(out(&Node::Array(items.iter().map(node).collect::<Result<_>>()?)))
}

/// The result of `jsonb_object_agg` / `json_object_agg` over key, value
/// pairs laid out one after the other.
pub(crate) fn aggregate_object(pairs: &[Value], as_json: bool) -> Result<Value> {
    let null_key = |_| "field name must not be null".to_string();
    if as_json {
        // `{ "a" : 1, "b" : 2 }`, PostgreSQL's spacing for this aggregate.
        return json_object_text(pairs, "{ ", " }", &null_key);
    }
    let mut members = Vec::with_capacity(pairs.len() / 2);
    for p in pairs.chunks(2) {
        members.push((key_text(&p[0], || null_key(0))?, node(p.get(1).unwrap_or(&Value::Null))?));
    }
    Ok(out(&Node::Object(members)))
}

// ---- set-returning functions, as arrays for unnest -----------------------------

/// The error for a set function `f` called on a document that is not an
/// object (`array`: it is an array), in PostgreSQL's words for `f`.
fn not_object(f: &str, array: bool) -> Error {
    let kind = if array { "an array" } else { "a scalar" };
    invalid(match f {
        "jsonb_each" | "jsonb_each_text" => format!("cannot call {f} on a non-object"),
        "json_each" | "json_each_text" if array => "cannot deconstruct an array as an object".to_string(),
        "json_each" | "json_each_text" => "cannot deconstruct a scalar".to_string(),
        _ => format!("cannot call {f} on {kind}"),
    })
}

/// The error for a set function `f` called on a document that is not an
/// array.
fn not_array(f: &str, object: bool) -> Error {
    invalid(match (f.starts_with("jsonb"), object) {
        (true, true) => "cannot extract elements from an object".to_string(),
        (true, false) => "cannot extract elements from a scalar".to_string(),
        (false, true) => format!("cannot call {f} on a non-array"),
        (false, false) => format!("cannot call {f} on a scalar"),
    })
}

/// What one column of a set function holds.
#[derive(Clone, Copy)]
enum Part {
    Keys,
    Values,
    ValuesText,
    Elements,
    ElementsText,
}

/// One column of `jsonb` set function `f` as an array.
fn jsonb_part(v: &Value, f: &str, part: Part) -> Result<Value> {
    let d = doc(v)?;
    let r = d.root();
    let items: Vec<Value> = match part {
        Part::Keys | Part::Values | Part::ValuesText => {
            if r.kind() != Kind::Object {
                return Err(not_object(f, r.kind() == Kind::Array));
            }
            r.members()
                .map(|(k, v)| match part {
                    Part::Keys => Value::Text(k.to_string()),
                    Part::Values => jsonb_value(v),
                    _ => as_text(v),
                })
                .collect()
        }
        Part::Elements | Part::ElementsText => {
            if r.kind() != Kind::Array {
                return Err(not_array(f, r.kind() == Kind::Object));
            }
            r.elements()
                .map(|e| if matches!(part, Part::Elements) { jsonb_value(e) } else { as_text(e) })
                .collect()
        }
    };
    Ok(Value::Array(items))
}

/// One column of `json` set function `f` as an array: texts as written,
/// members in written order with duplicates.
fn json_part(v: &Value, f: &str, part: Part) -> Result<Value> {
    let s = json_text(v);
    let items: Vec<Value> = match part {
        Part::Keys | Part::Values | Part::ValuesText => {
            let Some(members) = json::parse::object_members(&s)? else {
                return Err(not_object(f, json::parse::array_elements(&s)?.is_some()));
            };
            members
                .into_iter()
                .map(|(k, v)| match part {
                    Part::Keys => Ok(Value::Text(k)),
                    Part::Values => Ok(Value::Json(v.to_string())),
                    _ => json_text_value(v),
                })
                .collect::<Result<_>>()?
        }
        Part::Elements | Part::ElementsText => {
            let Some(elements) = json::parse::array_elements(&s)? else {
                return Err(not_array(f, json::parse::object_members(&s)?.is_some()));
            };
            elements
                .into_iter()
                .map(|e| {
                    if matches!(part, Part::Elements) {
                        Ok(Value::Json(e.to_string()))
                    } else {
                        json_text_value(e)
                    }
                })
                .collect::<Result<_>>()?
        }
    };
    Ok(Value::Array(items))
}

/// Defines the array function of one column of a set function.
macro_rules! set_columns {
    ($($fn_name:ident: $reader:ident, $f:literal, $part:ident;)*) => {
        $(
            #[doc = concat!("`", $f, "`: one column's values, as an array.")]
            pub(crate) fn $fn_name(args: &[Value], _: &FnContext) -> Result<Value> {
                $reader(&args[0], $f, Part::$part)
            }
        )*
    };
}

set_columns! {
    each_keys: jsonb_part, "jsonb_each", Keys;
    each_values: jsonb_part, "jsonb_each", Values;
    each_text_keys: jsonb_part, "jsonb_each_text", Keys;
    each_text_values: jsonb_part, "jsonb_each_text", ValuesText;
    object_keys: jsonb_part, "jsonb_object_keys", Keys;
    elements: jsonb_part, "jsonb_array_elements", Elements;
    elements_text: jsonb_part, "jsonb_array_elements_text", ElementsText;
    json_each_keys: json_part, "json_each", Keys;
    json_each_values: json_part, "json_each", Values;
    json_each_text_keys: json_part, "json_each_text", Keys;
    json_each_text_values: json_part, "json_each_text", ValuesText;
    json_object_keys: json_part, "json_object_keys", Keys;
    json_elements: json_part, "json_array_elements", Elements;
    json_elements_text: json_part, "json_array_elements_text", ElementsText;
}
