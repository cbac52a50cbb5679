//! Composite and array arguments of routines, read from their text.
//!
//! A routine's composite or array-of-composite argument travels as its
//! text: `(707,2,"Mountain Bike")` for a composite, `{"(707,2,x)","(708,1,y)"}`
//! for an array of composites. That is the form a client sends anyway
//! (psql, pgbench and every driver in text mode), and what a row value or
//! an array of them is cast to at the call. A routine parses it once, when
//! the call binds its arguments, into typed elements.

use super::{Composite, Elem};
use crate::error::Result;
use crate::functions::array_text;
use centum_types::Value;

/// A composite value's fields from its text, each parsed as its field's
/// type.
pub(crate) fn record_values(text: &str, c: &Composite) -> Result<Vec<Value>> {
    let fields = centum_types::composite::parse_literal(text)?;
    if fields.len() != c.fields.len() {
        let detail = if fields.len() < c.fields.len() { "Too few columns." } else { "Too many columns." };
        return Err(centum_types::TypeError::MalformedRecord {
            input: text.to_string(),
            detail: detail.into(),
        }
        .into());
    }
    fields
        .into_iter()
        .zip(&c.fields)
        .map(|(f, (_, ty))| match f {
            None => Ok(Value::Null),
            Some(s) => Ok(Value::parse(&s, ty)?),
        })
        .collect()
}

/// An array argument's elements: one value per element for a scalar
/// element type, the fields of each element for a composite one.
pub(crate) fn array_values(text: &str, elem: &Elem) -> Result<Vec<Vec<Value>>> {
    let items = array_text::parse(text)?;
    items
        .into_iter()
        .map(|item| match (item, elem) {
            (None, Elem::Scalar(_)) => Ok(vec![Value::Null]),
            (None, Elem::Composite(c)) => Ok(vec![Value::Null; c.fields.len()]),
            (Some(s), Elem::Scalar(t)) => Ok(vec![Value::parse(&s, t)?]),
            (Some(s), Elem::Composite(c)) => record_values(&s, c),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use centum_types::DataType;

    #[test]
    fn arrays_of_composites_parse_into_typed_fields() {
        let c = Composite {
            name: "line".into(),
            fields: vec![("p".into(), DataType::Integer), ("n".into(), DataType::Text)],
        };
        let elem = Elem::Composite(std::sync::Arc::new(c));
        let v = array_values(r#"{"(1,x)","(2,\"y z\")",NULL}"#, &elem).unwrap();
        assert_eq!(v[0], vec![Value::Integer(1), Value::Text("x".into())]);
        assert_eq!(v[1], vec![Value::Integer(2), Value::Text("y z".into())]);
        assert_eq!(v[2], vec![Value::Null, Value::Null]);
        assert_eq!(array_values(r#"{"(1)"}"#, &elem).unwrap_err().sqlstate(), "22P02");
        assert_eq!(array_values(r#"{"(a,x)"}"#, &elem).unwrap_err().sqlstate(), "22P02");
    }
}
