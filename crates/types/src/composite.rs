//! Composite types (`CREATE TYPE pair AS (a int, b text)`) and row values
//! (`ROW(1, 'x')`): a value made of named, typed fields.
//!
//! A [`CompositeType`] carries its fields' names and types, so a value
//! stored in a row decodes without the catalog, as an enum's does. A row
//! constructor's value has the anonymous type `record` (OID 2249), whose
//! fields are named `f1`, `f2`, ... and typed by what they hold; assigning
//! it to a column of a named type converts it field by field.
//!
//! Text form, as PostgreSQL reads and writes it:
//!
//! ```text
//!   (1,x)     (1,)      ("a b","",x\"y)      (,)
//! ```
//!
//! An empty field is NULL; a field is quoted when it is empty or holds a
//! parenthesis, comma, quote, backslash or white space, and inside quotes
//! `"` is doubled and `\` doubled.
//!
//! Stored form: the same bytes as an array's elements (`crate::array`),
//! one per field: `u32 count`, then per field `u32 length` (0xFFFF_FFFF:
//! NULL) and the field's own stored bytes.
//!
//! Values compare field by field, a NULL field equal to another NULL and
//! above every value, as PostgreSQL's record comparison (the order a
//! B-tree on a composite column needs).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::datatype::DataType;
use crate::error::TypeError;
use crate::value::Value;

/// PostgreSQL's OID of the anonymous row type `record`.
pub const RECORD_OID: u32 = 2249;
/// PostgreSQL's OID of `record[]`.
pub const RECORD_ARRAY_OID: u32 = 2287;

/// What a composite type is: its OID, its name and its fields.
#[derive(Debug, PartialEq)]
pub struct CompositeDef {
    /// The type's OID (pg_type.oid); [`RECORD_OID`] for an anonymous row.
    pub oid: u32,
    /// The name PostgreSQL prints for the type (`pair`, `record`).
    pub name: String,
    /// The fields in order: name and type.
    pub fields: Vec<(String, DataType)>,
}

/// A composite type as a column or expression has it. Cheap to clone; two
/// named types are equal when they have the same OID, two anonymous ones
/// when their fields' types are equal.
#[derive(Clone, Debug)]
pub struct CompositeType(Arc<CompositeDef>);

impl CompositeType {
    /// The type `def`.
    pub fn new(def: CompositeDef) -> CompositeType {
        CompositeType(Arc::new(def))
    }

    /// The anonymous row type with fields of these types, named `f1`, `f2`...
    pub fn anonymous(types: Vec<DataType>) -> CompositeType {
        let fields = types.into_iter().enumerate().map(|(i, t)| (format!("f{}", i + 1), t)).collect();
        CompositeType::new(CompositeDef { oid: RECORD_OID, name: "record".into(), fields })
    }

    /// The type's OID.
    pub fn oid(&self) -> u32 {
        self.0.oid
    }

    /// The OID of the type's array type: the OID after the type's, as
    /// Centum numbers them (`record[]` for the anonymous type).
    pub fn array_oid(&self) -> u32 {
        if self.is_anonymous() {
            RECORD_ARRAY_OID
        } else {
            self.0.oid + 1
        }
    }

    /// The type's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The fields: name and type.
    pub fn fields(&self) -> &[(String, DataType)] {
        &self.0.fields
    }

    /// Whether this is the anonymous type of a row constructor.
    pub fn is_anonymous(&self) -> bool {
        self.0.oid == RECORD_OID
    }

    /// The position of field `name`.
    pub fn field(&self, name: &str) -> Option<usize> {
        self.0.fields.iter().position(|(n, _)| n == name)
    }

    /// A value of this type from its fields (already of the fields' types).
    pub fn value(&self, fields: Vec<Value>) -> Value {
        Value::Composite(Box::new(CompositeValue { ty: self.clone(), fields }))
    }

    /// Parses the text form of a value of this type, each field as its
    /// field's type (22P02 when malformed or of the wrong field count).
    pub fn parse(&self, text: &str) -> Result<Value, TypeError> {
        let items = parse_literal(text)?;
        if items.len() != self.0.fields.len() {
            let which =
                if items.len() < self.0.fields.len() { "Too few columns." } else { "Too many columns." };
            return Err(malformed(text, which));
        }
        let fields = items
            .into_iter()
            .zip(&self.0.fields)
            .map(|(item, (_, ty))| match item {
                None => Ok(Value::Null),
                Some(s) => Value::parse(&s, ty),
            })
            .collect::<Result<_, _>>()?;
        Ok(self.value(fields))
    }

    /// Converts a row value to this type as an assignment does: the same
    /// number of fields, each converted to its field's type (42846
    /// otherwise, as PostgreSQL's "cannot cast type record to pair").
    pub fn assign(&self, v: CompositeValue) -> Result<Value, TypeError> {
        if v.ty == *self {
            return Ok(Value::Composite(Box::new(v)));
        }
        if v.fields.len() != self.0.fields.len() {
            return Err(TypeError::CannotCoerce(format!(
                "cannot cast type {} to {}",
                v.ty.name(),
                self.name()
            )));
        }
        let fields = v
            .fields
            .into_iter()
            .zip(&self.0.fields)
            .map(|(f, (_, ty))| f.coerce_to(ty))
            .collect::<Result<_, _>>()?;
        Ok(self.value(fields))
    }
}

impl PartialEq for CompositeType {
    fn eq(&self, other: &CompositeType) -> bool {
        self.oid() == other.oid() && (!self.is_anonymous() || self.0.fields == other.0.fields)
    }
}

impl Eq for CompositeType {}

impl Hash for CompositeType {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.oid().hash(state);
    }
}

impl fmt::Display for CompositeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One value of a composite type: its type and one value per field.
#[derive(Clone, Debug)]
pub struct CompositeValue {
    /// Its type.
    pub ty: CompositeType,
    /// Its fields, in the type's order.
    pub fields: Vec<Value>,
}

impl CompositeValue {
    /// `IS NULL` of a row value: every field is NULL (so also a row of no
    /// fields), as the SQL standard defines it for rows.
    pub fn all_null(&self) -> bool {
        self.fields.iter().all(Value::is_null)
    }

    /// `IS NOT NULL` of a row value: no field is NULL.
    pub fn none_null(&self) -> bool {
        !self.fields.iter().any(Value::is_null)
    }
}

impl fmt::Display for CompositeValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let texts: Vec<Option<String>> =
            self.fields.iter().map(|v| (!v.is_null()).then(|| v.to_string())).collect();
        f.write_str(&render_literal(texts.iter().map(Option::as_deref)))
    }
}

fn malformed(s: &str, detail: &str) -> TypeError {
    TypeError::MalformedRecord { input: s.to_string(), detail: detail.to_string() }
}

/// Writes fields (`None`: NULL) as a record literal, quoting where
/// PostgreSQL does.
pub fn render_literal<'a>(fields: impl IntoIterator<Item = Option<&'a str>>) -> String {
    let mut out = String::from("(");
    for (i, f) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let Some(s) = f else { continue };
        let quote =
            s.is_empty() || s.chars().any(|c| matches!(c, '(' | ')' | ',' | '"' | '\\') || c.is_whitespace());
        if !quote {
            out.push_str(s);
            continue;
        }
        out.push('"');
        for c in s.chars() {
            if c == '"' || c == '\\' {
                out.push(c);
            }
            out.push(c);
        }
        out.push('"');
    }
    out.push(')');
    out
}

/// Parses a record literal into its fields' texts (`None`: NULL, an empty
/// unquoted field), as PostgreSQL's `record_in` reads it: quotes may
/// start and end anywhere in a field, `""` inside quotes and `\` anywhere
/// take the next character literally, and white space is kept.
pub fn parse_literal(s: &str) -> Result<Vec<Option<String>>, TypeError> {
    let mut chars = s.trim_start().chars().peekable();
    if chars.next() != Some('(') {
        return Err(malformed(s, "Missing left parenthesis."));
    }
    let mut out = Vec::new();
    loop {
        let mut item = String::new();
        let mut present = false;
        let mut quoted = false;
        let end = loop {
            let Some(c) = chars.next() else { return Err(malformed(s, "Unexpected end of input.")) };
            match c {
                '\\' => {
                    present = true;
                    item.push(chars.next().ok_or_else(|| malformed(s, "Unexpected end of input."))?);
                }
                '"' if !quoted => {
                    present = true;
                    quoted = true;
                }
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    item.push('"');
                }
                '"' => quoted = false,
                ',' | ')' if !quoted => break c,
                c => {
                    present = true;
                    item.push(c);
                }
            }
        };
        out.push(present.then_some(item));
        if end == ')' {
            break;
        }
    }
    if chars.any(|c| !c.is_whitespace()) {
        return Err(malformed(s, "Junk after right parenthesis."));
    }
    Ok(out)
}

/// The stored form of a composite value's fields.
pub(crate) fn encode(fields: &[Value]) -> Vec<u8> {
    crate::array::encode(fields)
}

/// Reads the stored form back for type `ty`. Never panics: damaged bytes
/// give NULL fields or wrong ones, not a crash.
pub(crate) fn decode(ty: &CompositeType, bytes: &[u8]) -> Value {
    let mut fields = crate::array::decode_items(bytes, |i| ty.fields().get(i).map(|(_, t)| t));
    fields.resize(ty.fields().len(), Value::Null);
    ty.value(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> CompositeType {
        CompositeType::new(CompositeDef {
            oid: 90_100,
            name: "pair".into(),
            fields: vec![("a".into(), DataType::Integer), ("b".into(), DataType::Text)],
        })
    }

    #[test]
    fn literals_round_trip_with_quoting() {
        let fields = [Some("1"), None, Some("a b"), Some(""), Some("q\"(\\")];
        let text = render_literal(fields);
        assert_eq!(text, r#"(1,,"a b","","q""(\\")"#);
        let back = parse_literal(&text).unwrap();
        assert_eq!(back, fields.map(|f| f.map(String::from)));
        assert_eq!(parse_literal("()").unwrap(), vec![None]);
        assert_eq!(parse_literal("(,)").unwrap(), vec![None, None]);
        assert_eq!(parse_literal(" (a(b, c) ").unwrap(), vec![Some("a(b".into()), Some(" c".into())]);
        assert_eq!(parse_literal("(a\"b,c\"d)").unwrap(), vec![Some("ab,cd".into())]);
        for bad in ["", "1,2", "(1,2", "(1,(2))", "(\"a)", "(a)b", "(a\\"] {
            assert_eq!(parse_literal(bad).unwrap_err().sqlstate(), "22P02", "{bad}");
        }
    }

    #[test]
    fn typed_values_parse_print_store_and_order() {
        let t = pair();
        let v = t.parse("(1,\"x y\")").unwrap();
        assert_eq!(v.to_string(), "(1,\"x y\")");
        assert_eq!(Value::decode_var(&DataType::Composite(t.clone()), &v.var_bytes().unwrap()), v);
        assert_eq!(t.parse("(x,y)").unwrap_err().sqlstate(), "22P02");
        assert_eq!(t.parse("(1)").unwrap_err().sqlstate(), "22P02");
        assert_eq!(t.parse("(1,2,3)").unwrap_err().sqlstate(), "22P02");
        let null_b = t.parse("(1,)").unwrap();
        // A NULL field sorts above every value and equals another NULL.
        assert!(v < null_b);
        assert_eq!(null_b.sql_cmp(&t.parse("(1,)").unwrap()), Some(std::cmp::Ordering::Equal));
        // Damaged stored bytes never panic.
        let bytes = v.var_bytes().unwrap();
        for cut in 0..bytes.len() {
            let _ = Value::decode_var(&DataType::Composite(t.clone()), &bytes[..cut]);
        }
    }

    #[test]
    fn anonymous_rows_assign_field_by_field() {
        let t = pair();
        let Value::Composite(row) = CompositeType::anonymous(vec![DataType::BigInt, DataType::Text])
            .value(vec![Value::BigInt(7), Value::from("z")])
        else {
            unreachable!()
        };
        assert_eq!(t.assign((*row).clone()).unwrap().to_string(), "(7,z)");
        let short =
            CompositeValue { ty: CompositeType::anonymous(vec![DataType::Integer]), fields: vec![7.into()] };
        assert_eq!(t.assign(short).unwrap_err().sqlstate(), "42846");
    }
}
