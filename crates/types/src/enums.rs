//! Enum types (`CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')`): a type
//! whose values are a list of labels, ordered as declared.
//!
//! Each label has a *sort position*, a float that never changes for the
//! label's life, so a stored value keeps its place in the order whatever
//! labels are added around it later:
//!
//! ```text
//!   CREATE TYPE mood AS ENUM ('sad', 'happy')     sad 1    happy 2
//!   ALTER TYPE mood ADD VALUE 'ok' BEFORE 'happy' sad 1    ok 1.5   happy 2
//!   ALTER TYPE mood ADD VALUE 'ecstatic'          ... happy 2  ecstatic 3
//! ```
//!
//! (PostgreSQL numbers `pg_enum.enumsortorder` the same way.) A value is
//! stored as its position and its label (see `encoding`), so reading a row
//! needs nothing but the bytes; the SQL catalog owns the list of labels,
//! and an [`EnumType`] carries the list it had when the statement was
//! planned, which text input ([`Value::parse`]) checks against. Values
//! compare by position: declaration order, not alphabetical.
//!
//! A position between two neighbours is their midpoint; after about fifty
//! labels inserted into the same gap the midpoint is no longer distinct,
//! and [`position_between`] refuses (PostgreSQL renumbers instead, which a
//! stored position cannot follow).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::error::TypeError;
use crate::value::Value;

/// Longest label PostgreSQL accepts (NAMEDATALEN - 1 bytes).
pub const MAX_LABEL_BYTES: usize = 63;

/// One label of an enum type and its sort position.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumLabel {
    /// The label's position in the type's order (never changes).
    pub position: f64,
    /// The label's text.
    pub label: Arc<str>,
}

/// What an enum type is: its OID, its name, and its labels in order.
#[derive(Debug)]
pub struct EnumDef {
    /// The type's OID (pg_type.oid), fixed at CREATE TYPE.
    pub oid: u32,
    /// The name PostgreSQL prints for the type (`mood`, or `s.mood`
    /// outside the search path's first schema).
    pub name: String,
    /// The labels in sort order (ascending position); empty when the type
    /// came from a stored table definition and was not looked up.
    pub labels: Vec<EnumLabel>,
}

/// An enum type as a column or expression has it. Cheap to clone; two are
/// equal when they are the same type (same OID), whatever labels each
/// carries.
#[derive(Clone, Debug)]
pub struct EnumType(Arc<EnumDef>);

impl EnumType {
    /// The type `def`.
    pub fn new(def: EnumDef) -> EnumType {
        EnumType(Arc::new(def))
    }

    /// The type's OID.
    pub fn oid(&self) -> u32 {
        self.0.oid
    }

    /// The type's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The labels this copy of the type carries, in sort order.
    pub fn labels(&self) -> &[EnumLabel] {
        &self.0.labels
    }

    /// The value of label `text`; 22P02 when the type has no such label.
    pub fn value_of(&self, text: &str) -> Result<Value, TypeError> {
        self.labels().iter().find(|l| &*l.label == text).map(|l| self.value(l)).ok_or_else(|| {
            TypeError::InvalidEnumLabel { ty: self.name().to_string(), input: text.to_string() }
        })
    }

    /// The value of one of the type's labels.
    pub fn value(&self, l: &EnumLabel) -> Value {
        Value::Enum(Box::new(EnumValue { ty: self.clone(), position: l.position, label: l.label.clone() }))
    }
}

impl PartialEq for EnumType {
    fn eq(&self, other: &EnumType) -> bool {
        self.oid() == other.oid()
    }
}

impl Eq for EnumType {}

impl Hash for EnumType {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.oid().hash(state);
    }
}

/// One value of an enum type.
#[derive(Clone, Debug)]
pub struct EnumValue {
    /// Its type.
    pub ty: EnumType,
    /// Its label's sort position.
    pub position: f64,
    /// Its label.
    pub label: Arc<str>,
}

impl EnumValue {
    /// The order of two enum values: by type, then by position.
    pub fn order(&self, other: &EnumValue) -> Ordering {
        self.ty.oid().cmp(&other.ty.oid()).then(self.position.total_cmp(&other.position))
    }
}

impl fmt::Display for EnumValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

/// Checks a label for CREATE TYPE or ALTER TYPE: not empty, at most
/// [`MAX_LABEL_BYTES`] bytes (22023, PostgreSQL's `invalid_parameter_value`).
pub fn check_label(label: &str) -> Result<(), TypeError> {
    if label.is_empty() || label.len() > MAX_LABEL_BYTES {
        return Err(TypeError::InvalidParameter(format!(
            "invalid enum label \"{label}\"\nLabels must be between 1 and {MAX_LABEL_BYTES} bytes long."
        )));
    }
    Ok(())
}

/// The positions of a new type's labels: 1, 2, 3 ...
pub fn initial_positions(labels: &[String]) -> Vec<EnumLabel> {
    labels
        .iter()
        .enumerate()
        .map(|(i, l)| EnumLabel { position: (i + 1) as f64, label: l.as_str().into() })
        .collect()
}

/// The position of a label added between `below` and `above` (`None`: the
/// end of the order on that side). Between two labels it is their
/// midpoint; 22003 when they are too close for a distinct one.
pub fn position_between(below: Option<f64>, above: Option<f64>) -> Result<f64, TypeError> {
    let p = match (below, above) {
        (None, None) => 1.0,
        (Some(b), None) => b.floor() + 1.0,
        (None, Some(a)) => a.ceil() - 1.0,
        (Some(b), Some(a)) => b + (a - b) / 2.0,
    };
    let inside = below.is_none_or(|b| p > b) && above.is_none_or(|a| p < a) && p.is_finite();
    if !inside {
        return Err(TypeError::OutOfRange(
            "too many enum labels were added between the same two labels".to_string(),
        ));
    }
    Ok(p)
}

/// Where ALTER TYPE ... ADD VALUE puts a label: at the end, or next to an
/// existing one.
#[derive(Clone, Debug, PartialEq)]
pub enum Placement {
    /// After every label.
    Last,
    /// Just before this label.
    Before(String),
    /// Just after this label.
    After(String),
}

/// The labels of `labels` with `label` added at `placement`: `Ok(None)`
/// when the label exists already (the caller decides between an error and
/// IF NOT EXISTS), 22023 when the neighbour does not exist.
pub fn add_label(
    labels: &[EnumLabel],
    label: &str,
    placement: &Placement,
) -> Result<Option<Vec<EnumLabel>>, TypeError> {
    check_label(label)?;
    if labels.iter().any(|l| &*l.label == label) {
        return Ok(None);
    }
    let find = |n: &str| {
        labels
            .iter()
            .position(|l| &*l.label == n)
            .ok_or_else(|| TypeError::InvalidParameter(format!("\"{n}\" is not an existing enum label")))
    };
    let at = match placement {
        Placement::Last => labels.len(),
        Placement::Before(n) => find(n)?,
        Placement::After(n) => find(n)? + 1,
    };
    let below = at.checked_sub(1).map(|i| labels[i].position);
    let above = labels.get(at).map(|l| l.position);
    let position = position_between(below, above)?;
    let mut out = labels.to_vec();
    out.insert(at, EnumLabel { position, label: label.into() });
    Ok(Some(out))
}

/// The labels of `labels` with `from` renamed to `to` (22023 when `from`
/// does not exist; 42710 is the caller's when `to` does).
pub fn rename_label(labels: &[EnumLabel], from: &str, to: &str) -> Result<Vec<EnumLabel>, TypeError> {
    check_label(to)?;
    let mut out = labels.to_vec();
    let l = out
        .iter_mut()
        .find(|l| &*l.label == from)
        .ok_or_else(|| TypeError::InvalidParameter(format!("\"{from}\" is not an existing enum label")))?;
    l.label = to.into();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mood(labels: &[&str]) -> EnumType {
        let owned: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
        EnumType::new(EnumDef { oid: 90000, name: "mood".into(), labels: initial_positions(&owned) })
    }

    fn names(labels: &[EnumLabel]) -> Vec<String> {
        labels.iter().map(|l| format!("{}={}", l.label, l.position)).collect()
    }

    #[test]
    fn labels_parse_and_order_by_declaration() {
        let t = mood(&["sad", "ok", "happy"]);
        let happy = t.value_of("happy").unwrap();
        let sad = t.value_of("sad").unwrap();
        assert!(sad < happy);
        assert_eq!(happy.to_string(), "happy");
        assert_eq!(sad.sql_cmp(&happy), Some(Ordering::Less));
        let err = t.value_of("angry").unwrap_err();
        assert_eq!(err.sqlstate(), "22P02");
        assert_eq!(err.to_string(), "invalid input value for enum mood: \"angry\"");
        // Labels are case sensitive.
        assert!(t.value_of("Happy").is_err());
    }

    #[test]
    fn added_labels_go_between_their_neighbours() {
        let t = mood(&["sad", "happy"]);
        let l = add_label(t.labels(), "ok", &Placement::Before("happy".into())).unwrap().unwrap();
        assert_eq!(names(&l), ["sad=1", "ok=1.5", "happy=2"]);
        let l = add_label(&l, "meh", &Placement::After("sad".into())).unwrap().unwrap();
        assert_eq!(names(&l), ["sad=1", "meh=1.25", "ok=1.5", "happy=2"]);
        let l = add_label(&l, "great", &Placement::Last).unwrap().unwrap();
        assert_eq!(names(&l)[4], "great=3");
        let l = add_label(&l, "awful", &Placement::Before("sad".into())).unwrap().unwrap();
        assert_eq!(names(&l)[0], "awful=0");
        assert_eq!(add_label(&l, "ok", &Placement::Last).unwrap(), None);
        assert_eq!(add_label(&l, "x", &Placement::After("nope".into())).unwrap_err().sqlstate(), "22023");
        assert_eq!(add_label(&l, "", &Placement::Last).unwrap_err().sqlstate(), "22023");
        assert_eq!(add_label(&l, &"x".repeat(64), &Placement::Last).unwrap_err().sqlstate(), "22023");
    }

    #[test]
    fn a_gap_runs_out_with_an_error() {
        let mut labels = mood(&["a", "b"]).labels().to_vec();
        let mut n = 0;
        loop {
            match add_label(&labels, &format!("x{n}"), &Placement::Before("b".into())) {
                Ok(Some(l)) => labels = l,
                Ok(None) => unreachable!(),
                Err(e) => {
                    assert_eq!(e.sqlstate(), "22003");
                    break;
                }
            }
            n += 1;
        }
        assert!(n > 40, "{n}");
        let positions: Vec<f64> = labels.iter().map(|l| l.position).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn renaming_keeps_the_position() {
        let t = mood(&["sad", "happy"]);
        let l = rename_label(t.labels(), "sad", "blue").unwrap();
        assert_eq!(names(&l), ["blue=1", "happy=2"]);
        assert!(rename_label(t.labels(), "nope", "x").is_err());
    }
}
