//! Comparing values: SQL comparison, and the total order used for sorting
//! and index keys.
//!
//! Two orders exist because SQL comparison is not a total order:
//!
//! * [`Value::sql_cmp`] is what `=`, `<`, ... mean in SQL. NULL compares to
//!   nothing (`None`), and values of different but comparable types are
//!   compared the way PostgreSQL's cross-type operators do: integers and
//!   numerics exactly, anything involving a double in double precision,
//!   dates as midnight against timestamps, timestamps against timestamptz in
//!   UTC (Centum's session zone). Incomparable types give `None`.
//!
//! * `Ord`/`Eq`/`Hash` on [`Value`] form a total order for ORDER BY, sort
//!   operators and index keys. NULL equals NULL and sorts after everything
//!   (PostgreSQL's ASC default). Within a family it agrees with `sql_cmp`:
//!
//! ```text
//!   integers and numerics  by exact value: Integer(1) = BigInt(1) = Numeric(1.00)
//!   doubles                -0.0 = 0.0; every NaN equal, above +Infinity
//!   text                   by bytes (code points), PostgreSQL's "C" collation
//!   bytea, uuid            by bytes
//!   dates, timestamps      by value; -infinity first, infinity last
//!   arrays                 element by element, then the shorter first
//!   enums                  by type, then the label's sort position
//!                          (declaration order, not the label's text)
//! ```
//!
//!   Across families (and between double and the exact numbers, whose mixed
//!   comparison is not transitive) values are ordered by a fixed rank of their
//!   family, so the order stays total; a column's keys all share one type, so
//!   the rank only matters for mixed collections.
//!
//! `Hash` agrees with `Eq`: a numeric hashes through its normalized form (and
//! as the integer when it is one), a double through a canonical bit pattern.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use rust_decimal::Decimal;

use crate::datetime::calendar::USECS_PER_DAY;
use crate::float::{canonical, cmp_f64};
use crate::value::Value;

/// The exact value of an integer or numeric, for comparing across them.
enum Exact {
    Int(i64),
    Dec(Decimal),
}

impl Exact {
    fn of(v: &Value) -> Option<Exact> {
        match v {
            Value::Numeric(d) => Some(Exact::Dec(*d)),
            _ => v.as_i64().map(Exact::Int),
        }
    }

    fn cmp(&self, other: &Exact) -> Ordering {
        match (self, other) {
            (Exact::Int(a), Exact::Int(b)) => a.cmp(b),
            // Every i64 converts to a Decimal exactly.
            (Exact::Int(a), Exact::Dec(b)) => Decimal::from(*a).cmp(b),
            (Exact::Dec(a), Exact::Int(b)) => a.cmp(&Decimal::from(*b)),
            (Exact::Dec(a), Exact::Dec(b)) => a.cmp(b),
        }
    }
}

/// A date or timestamp as microseconds since 2000-01-01 in `i128`, with the
/// infinities at the extremes, so dates and timestamps compare directly.
fn instant(v: &Value) -> Option<i128> {
    let (finite, usecs) = match v {
        Value::Date(d) => (d.is_finite(), i128::from(d.0) * i128::from(USECS_PER_DAY)),
        Value::Timestamp(t) => (t.is_finite(), i128::from(t.0)),
        Value::TimestampTz(t) => (t.is_finite(), i128::from(t.0)),
        _ => return None,
    };
    Some(match (finite, usecs.signum()) {
        (true, _) => usecs,
        (false, -1) => i128::MIN,
        (false, _) => i128::MAX,
    })
}

/// The value as a double, for comparisons involving a double.
fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Double(x) => Some(*x),
        Value::Numeric(d) => Some(crate::numeric::to_f64(d)),
        // i64 -> f64 rounds above 2^53, as PostgreSQL's int8-to-float8 cast does.
        _ => v.as_i64().map(|i| i as f64),
    }
}

impl Value {
    /// SQL comparison of two values: what `=`, `<`, ... mean in SQL.
    /// `None` if either is Null or the types are not comparable.
    ///
    /// Different types compare as PostgreSQL's cross-type operators do:
    /// integers and numerics exactly (`1 = 1.00`), anything involving a
    /// double in double precision, a date as its midnight against a
    /// timestamp, timestamp against timestamptz in UTC (Centum's session
    /// zone). Text compares bytewise (the "C" collation); doubles put every
    /// NaN above +Infinity and treat `-0.0 = 0.0`.
    pub fn sql_cmp(&self, other: &Value) -> Option<Ordering> {
        match (self, other) {
            (Value::Null, _) | (_, Value::Null) => None,
            (Value::Boolean(a), Value::Boolean(b)) => Some(a.cmp(b)),
            (Value::Text(a), Value::Text(b)) => Some(a.cmp(b)),
            (Value::Bytea(a), Value::Bytea(b)) => Some(a.cmp(b)),
            (Value::Uuid(a), Value::Uuid(b)) => Some(a.cmp(b)),
            (Value::Interval(a), Value::Interval(b)) => Some(a.cmp(b)),
            (Value::Time(a), Value::Time(b)) => Some(a.cmp(b)),
            (Value::Interval(_) | Value::Time(_), _) | (_, Value::Interval(_) | Value::Time(_)) => None,
            (Value::Jsonb(a), Value::Jsonb(b)) => Some(a.cmp(b)),
            // `json` has no comparison operators in PostgreSQL.
            (Value::Json(_) | Value::Jsonb(_), _) | (_, Value::Json(_) | Value::Jsonb(_)) => None,
            (Value::TsVector(a), Value::TsVector(b)) => Some(a.cmp(b)),
            (Value::TsQuery(a), Value::TsQuery(b)) => Some(a.cmp(b)),
            (Value::TsVector(_) | Value::TsQuery(_), _) | (_, Value::TsVector(_) | Value::TsQuery(_)) => None,
            // Arrays compare element by element, then by length; NULL
            // elements are equal to each other and above any value, as in
            // PostgreSQL's array comparison.
            (Value::Array(a), Value::Array(b)) => Some(a.cmp(b)),
            (Value::Array(_), _) | (_, Value::Array(_)) => None,
            (Value::Enum(a), Value::Enum(b)) if a.ty == b.ty => Some(a.order(b)),
            (Value::Enum(_), _) | (_, Value::Enum(_)) => None,
            // Field by field, NULL fields equal to each other and above any
            // value, as PostgreSQL's record comparison.
            (Value::Composite(a), Value::Composite(b)) => Some(a.fields.cmp(&b.fields)),
            (Value::Composite(_), _) | (_, Value::Composite(_)) => None,
            (Value::Double(_), _) | (_, Value::Double(_)) => Some(cmp_f64(as_f64(self)?, as_f64(other)?)),
            _ => match (Exact::of(self), Exact::of(other)) {
                (Some(a), Some(b)) => Some(a.cmp(&b)),
                _ => Some(instant(self)?.cmp(&instant(other)?)),
            },
        }
    }

    /// Position of the value's family in the cross-family order.
    fn rank(&self) -> u8 {
        match self {
            Value::Boolean(_) => 0,
            Value::SmallInt(_) | Value::Integer(_) | Value::BigInt(_) | Value::Numeric(_) => 1,
            Value::Double(_) => 2,
            Value::Text(_) => 3,
            Value::Bytea(_) => 4,
            Value::Date(_) => 5,
            Value::Timestamp(_) => 6,
            Value::TimestampTz(_) => 7,
            Value::Uuid(_) => 8,
            Value::Interval(_) => 9,
            Value::Time(_) => 10,
            Value::Array(_) => 11,
            Value::Json(_) => 12,
            Value::Jsonb(_) => 13,
            Value::Enum(_) => 14,
            Value::TsVector(_) => 15,
            Value::TsQuery(_) => 16,
            Value::Composite(_) => 17,
            Value::Null => 18,
        }
    }
}

impl Ord for Value {
    /// The total sort/key order documented on [`Value`].
    fn cmp(&self, other: &Value) -> Ordering {
        match (self, other) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Boolean(a), Value::Boolean(b)) => a.cmp(b),
            (Value::Double(a), Value::Double(b)) => cmp_f64(*a, *b),
            (Value::Text(a), Value::Text(b)) => a.cmp(b),
            (Value::Bytea(a), Value::Bytea(b)) => a.cmp(b),
            (Value::Date(a), Value::Date(b)) => a.cmp(b),
            (Value::Timestamp(a), Value::Timestamp(b)) => a.cmp(b),
            (Value::TimestampTz(a), Value::TimestampTz(b)) => a.cmp(b),
            (Value::Uuid(a), Value::Uuid(b)) => a.cmp(b),
            (Value::Interval(a), Value::Interval(b)) => a.cmp(b),
            (Value::Time(a), Value::Time(b)) => a.cmp(b),
            (Value::Array(a), Value::Array(b)) => a.cmp(b),
            (Value::Json(a), Value::Json(b)) => a.cmp(b),
            (Value::Jsonb(a), Value::Jsonb(b)) => a.cmp(b),
            (Value::Enum(a), Value::Enum(b)) => a.order(b),
            (Value::Composite(a), Value::Composite(b)) => a.fields.cmp(&b.fields),
            (Value::TsVector(a), Value::TsVector(b)) => a.cmp(b),
            (Value::TsQuery(a), Value::TsQuery(b)) => a.cmp(b),
            _ => match (Exact::of(self), Exact::of(other)) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => self.rank().cmp(&other.rank()),
            },
        }
    }
}

impl PartialOrd for Value {
    /// Always `Some`: the same total order as [`Ord`].
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Value {
    /// Equality under the total order: NULL = NULL, 1 = 1.00, -0.0 = 0.0,
    /// NaN = NaN. Use [`Value::sql_cmp`] for SQL's `=`.
    fn eq(&self, other: &Value) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Value {}

impl Hash for Value {
    /// Consistent with `Eq`: equal values hash equally.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            Value::Null => {}
            Value::Boolean(b) => b.hash(state),
            Value::Double(x) => canonical(*x).to_bits().hash(state),
            Value::Text(s) => s.hash(state),
            Value::Bytea(b) => b.hash(state),
            Value::Date(d) => d.hash(state),
            Value::Timestamp(t) => t.hash(state),
            Value::TimestampTz(t) => t.hash(state),
            Value::Uuid(u) => u.hash(state),
            Value::Interval(i) => i.hash(state),
            Value::Time(t) => t.hash(state),
            Value::Array(items) => items.hash(state),
            Value::Json(s) => s.hash(state),
            Value::Jsonb(j) => j.hash(state),
            Value::Enum(e) => (e.ty.oid(), e.position.to_bits()).hash(state),
            Value::Composite(c) => c.fields.hash(state),
            Value::TsVector(v) => v.hash(state),
            Value::TsQuery(q) => q.hash(state),
            Value::Numeric(d) => {
                // normalize() strips trailing zeros (and the sign of zero), so
                // equal values share one (mantissa, scale); an integral value
                // hashes like the integer variants.
                let n = d.normalize();
                match i64::try_from(n.mantissa()) {
                    Ok(i) if n.scale() == 0 => hash_int(i, state),
                    _ => {
                        1u8.hash(state);
                        (n.mantissa(), n.scale()).hash(state);
                    }
                }
            }
            Value::SmallInt(_) | Value::Integer(_) | Value::BigInt(_) => {
                hash_int(self.as_i64().unwrap_or_default(), state)
            }
        }
    }
}

/// Hashes an integral exact number, whichever variant holds it.
fn hash_int<H: Hasher>(i: i64, state: &mut H) {
    0u8.hash(state);
    i.hash(state);
}

#[cfg(test)]
mod tests;
