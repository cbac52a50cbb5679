//! Order-preserving key encoding for range indexes.
//!
//! A range index compares keys as byte strings, so each key column is
//! encoded such that comparing the bytes (`memcmp`, shorter first on a tie)
//! gives the column's SQL order, and every column's encoding is
//! *prefix-free* (no encoding is a proper prefix of another): then
//! concatenated columns compare column by column, and a prefix of the key
//! columns is a byte prefix of the key.
//!
//! ```text
//!   NULL marker   nullable columns only: 0x01 value follows, 0x02 NULL
//!                 (NULLs sort last ascending, first descending, as in
//!                 PostgreSQL)
//!   boolean       1 byte, 0 or 1
//!   smallint/integer/bigint, date, timestamp[tz], time
//!                 big-endian two's complement with the sign bit flipped
//!                 (2, 4 or 8 bytes)
//!   interval      its span in microseconds (a month as 30 days) as a
//!                 16-byte big-endian i128, sign bit flipped
//!   double        IEEE bits big-endian; sign bit flipped for positives, all
//!                 bits flipped for negatives; -0 as +0, every NaN as one
//!                 NaN above +Infinity
//!   numeric       0x01 negative, 0x02 zero, 0x03 positive; then for
//!                 non-zero values |x| = 0.d1d2...dn x 10^e (no trailing
//!                 zero digits) as e (i16 big-endian, sign flipped) and each
//!                 digit + 1 as a byte, ended by 0x00; all of it after the
//!                 sign byte inverted for negatives
//!   text, varchar, char, bytea
//!                 the bytes with 0x00 escaped as 0x00 0xFF, ended by
//!                 0x00 0x01 ("C" collation: byte order)
//!   uuid          the 16 bytes
//!   enum          the label's sort position, encoded as a double (the
//!                 label itself is not part of the key)
//!   array         per element 0x01 and the element's encoding, or 0x02
//!                 for a NULL element; ended by 0x00 (so element by
//!                 element, NULL elements last, a shorter array first)
//!   DESC column   every byte of the column's encoding, marker included,
//!                 inverted
//! ```
//!
//! Numerics equal in value (`1.0`, `1.00`) encode identically, as do `-0.0`
//! and `0.0`, so equal SQL values are equal keys.

use super::layout::RowLayout;
use crate::error::Result;
use crate::schema::Column;
use centum_types::{DataType, Decimal, Value};
use smallvec::SmallVec;
use std::ops::Bound;

/// Encoded key bytes; most keys fit without allocating.
pub(crate) type KeyBytes = SmallVec<[u8; 32]>;

const NOT_NULL: u8 = 0x01;
const NULL: u8 = 0x02;

/// The key columns of a range index and how each is encoded.
#[derive(Clone, Debug)]
pub struct SortKeyDef {
    /// Column numbers of the key, in key order.
    pub columns: Vec<usize>,
    types: Vec<DataType>,
    nullable: Vec<bool>,
    desc: Vec<bool>,
}

/// A range over a range index's keys: equality on the first key columns,
/// then optional bounds on the next one.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyRange {
    /// Values of the leading key columns, which must all match.
    pub eq: Vec<Value>,
    /// Lower bound on the column after them (in the column's SQL order,
    /// whatever the index's direction).
    pub lower: Bound<Value>,
    /// Upper bound on that column.
    pub upper: Bound<Value>,
}

impl KeyRange {
    /// Every key that starts with `eq` (all of them for an empty `eq`).
    pub fn prefix(eq: Vec<Value>) -> KeyRange {
        KeyRange { eq, lower: Bound::Unbounded, upper: Bound::Unbounded }
    }

    /// Keys whose first column lies between `lower` and `upper`.
    pub fn between(lower: Bound<Value>, upper: Bound<Value>) -> KeyRange {
        KeyRange { eq: vec![], lower, upper }
    }
}

/// The smallest byte string greater than every string that starts with
/// `b`: `b` with its last non-0xFF byte incremented and the rest cut;
/// `None` if there is none (all 0xFF).
pub(crate) fn prefix_successor(b: &[u8]) -> Option<KeyBytes> {
    let i = b.iter().rposition(|&x| x != 0xFF)?;
    let mut out = KeyBytes::from_slice(&b[..=i]);
    out[i] += 1;
    Some(out)
}

impl SortKeyDef {
    /// The key over `cols` of a table with `columns`; `desc[i]` makes key
    /// column `i` descending (missing entries are ascending).
    pub fn new(columns: &[Column], cols: Vec<usize>, desc: &[bool]) -> SortKeyDef {
        let types = cols.iter().map(|&c| columns[c].ty.clone()).collect();
        let nullable = cols.iter().map(|&c| columns[c].nullable).collect();
        let desc = (0..cols.len()).map(|i| desc.get(i).copied().unwrap_or(false)).collect();
        SortKeyDef { columns: cols, types, nullable, desc }
    }

    /// Whether key column `i` is descending.
    pub fn is_desc(&self, i: usize) -> bool {
        self.desc[i]
    }

    /// Per key column, whether it sorts descending.
    pub fn descending(&self) -> &[bool] {
        &self.desc
    }

    /// The key of a stored row.
    pub(crate) fn encode_row(&self, layout: &RowLayout, data: &[u8], out: &mut KeyBytes) {
        for (i, &c) in self.columns.iter().enumerate() {
            let start = out.len();
            match layout.raw(data, c) {
                None => out.push(NULL),
                Some(b) => {
                    if self.nullable[i] {
                        out.push(NOT_NULL);
                    }
                    encode_raw(&self.types[i], b, out);
                }
            }
            if self.desc[i] {
                out[start..].iter_mut().for_each(|x| *x = !*x);
            }
        }
    }

    /// Encodes one value of key column `i`, converted to the column's type.
    fn encode_value(&self, i: usize, v: &Value, out: &mut KeyBytes) -> Result<()> {
        let t = &self.types[i];
        let converted;
        let v = if v.fits(t) {
            v
        } else {
            converted = v.clone().coerce_to(t)?;
            &converted
        };
        let start = out.len();
        if v.is_null() {
            out.push(NULL);
        } else {
            if self.nullable[i] {
                out.push(NOT_NULL);
            }
            let mut scratch = [0u8; 16];
            match t.fixed_width() {
                Some(w) => {
                    v.encode_fixed(t, &mut scratch[..w])?;
                    encode_raw(t, &scratch[..w], out);
                }
                None => encode_raw(t, &v.var_bytes().unwrap_or_default(), out),
            }
        }
        if self.desc[i] {
            out[start..].iter_mut().for_each(|x| *x = !*x);
        }
        Ok(())
    }

    /// The key bytes of the full key `values` (one per key column).
    pub(crate) fn encode_values(&self, values: &[Value]) -> Result<KeyBytes> {
        let mut out = KeyBytes::new();
        for (i, v) in values.iter().enumerate().take(self.columns.len()) {
            self.encode_value(i, v, &mut out)?;
        }
        Ok(out)
    }

    /// The byte range `[lo, hi)` of the keys `r` selects (`None`:
    /// unbounded), or `None` when it selects nothing (a NULL in `eq`, or a
    /// bound that excludes everything).
    #[allow(clippy::type_complexity)]
    pub(crate) fn byte_range(&self, r: &KeyRange) -> Result<Option<(Option<KeyBytes>, Option<KeyBytes>)>> {
        if r.eq.len() > self.columns.len()
            || (r.eq.len() == self.columns.len()
                && (!matches!(r.lower, Bound::Unbounded) || !matches!(r.upper, Bound::Unbounded)))
        {
            return Err(crate::error::Error::KeyArity {
                index: String::new(),
                expected: self.columns.len(),
                found: r.eq.len() + 1,
            });
        }
        if r.eq.iter().any(Value::is_null) {
            return Ok(None);
        }
        let mut prefix = KeyBytes::new();
        for (i, v) in r.eq.iter().enumerate() {
            self.encode_value(i, v, &mut prefix)?;
        }
        let bounded = !matches!((&r.lower, &r.upper), (Bound::Unbounded, Bound::Unbounded));
        if !bounded {
            let hi = prefix_successor(&prefix);
            let lo = (!prefix.is_empty()).then_some(prefix);
            return Ok(Some((lo, hi)));
        }
        if matches!(&r.lower, Bound::Included(v) | Bound::Excluded(v) if v.is_null())
            || matches!(&r.upper, Bound::Included(v) | Bound::Excluded(v) if v.is_null())
        {
            return Ok(None); // a comparison with NULL is never true
        }
        let i = r.eq.len();
        let desc = self.desc[i];
        // Byte bounds of one value of column i: [start of v, end of v).
        let at = |v: &Value| -> Result<(KeyBytes, Option<KeyBytes>)> {
            let mut b = prefix.clone();
            self.encode_value(i, v, &mut b)?;
            let end = prefix_successor(&b);
            Ok((b, end))
        };
        // Where the column's non-NULL values begin and end in byte order.
        let (values_lo, values_hi) = {
            let nullable = self.nullable[i];
            let mut lo = prefix.clone();
            let mut hi = prefix.clone();
            match (nullable, desc) {
                (false, _) => return self.bounded(&prefix, r, desc, at),
                (true, false) => {
                    lo.push(NOT_NULL);
                    hi.push(NULL);
                    (Some(lo), Some(hi))
                }
                (true, true) => {
                    // Inverted markers: NULL (0xFD) sorts before values (0xFE).
                    lo.push(!NOT_NULL);
                    (Some(lo), prefix_successor(&hi))
                }
            }
        };
        let Some((lo, hi)) = self.bounded(&prefix, r, desc, at)? else {
            return Ok(None);
        };
        let lo = max_lo(lo, values_lo);
        let hi = min_hi(hi, values_hi);
        Ok(Some((lo, hi)))
    }

    /// The byte range of values of the column after `prefix` within the
    /// bounds of `r`, ignoring NULLs.
    #[allow(clippy::type_complexity)]
    fn bounded(
        &self,
        prefix: &KeyBytes,
        r: &KeyRange,
        desc: bool,
        at: impl Fn(&Value) -> Result<(KeyBytes, Option<KeyBytes>)>,
    ) -> Result<Option<(Option<KeyBytes>, Option<KeyBytes>)>> {
        // In byte order, an ascending column's lower value bound is the low
        // end; a descending column's is the high end.
        let (low_bound, high_bound) = if desc { (&r.upper, &r.lower) } else { (&r.lower, &r.upper) };
        let low_inclusive_in_bytes = |b: &Bound<Value>| matches!(b, Bound::Included(_));
        let lo = match low_bound {
            Bound::Unbounded => (!prefix.is_empty()).then(|| prefix.clone()),
            Bound::Included(v) | Bound::Excluded(v) => {
                let (start, end) = at(v)?;
                if low_inclusive_in_bytes(low_bound) {
                    Some(start)
                } else {
                    match end {
                        Some(e) => Some(e),
                        None => return Ok(None),
                    }
                }
            }
        };
        let hi = match high_bound {
            Bound::Unbounded => prefix_successor(prefix),
            Bound::Included(v) => at(v)?.1,
            Bound::Excluded(v) => Some(at(v)?.0),
        };
        Ok(Some((lo, hi)))
    }
}

fn max_lo(a: Option<KeyBytes>, b: Option<KeyBytes>) -> Option<KeyBytes> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn min_hi(a: Option<KeyBytes>, b: Option<KeyBytes>) -> Option<KeyBytes> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The comparison span of a stored interval (a month as 30 days, a day as
/// 24 hours), so that `1 mon` and `30 days` are one key.
pub(crate) fn interval_span(b: &[u8]) -> i128 {
    match Value::decode_fixed(&DataType::Interval, b) {
        Value::Interval(i) => i.span(),
        _ => 0,
    }
}

/// Appends the order-preserving encoding of a stored (fixed or variable)
/// value of type `t`.
pub(crate) fn encode_raw(t: &DataType, b: &[u8], out: &mut KeyBytes) {
    fn le<const N: usize>(b: &[u8]) -> [u8; N] {
        let mut a = [0u8; N];
        let n = b.len().min(N);
        a[..n].copy_from_slice(&b[..n]);
        a
    }
    match t {
        DataType::Boolean => out.push(u8::from(b.first().is_some_and(|&x| x != 0))),
        DataType::SmallInt => {
            out.extend_from_slice(&(i16::from_le_bytes(le(b)) as u16 ^ 0x8000).to_be_bytes())
        }
        DataType::Integer | DataType::Oid | DataType::Date => {
            out.extend_from_slice(&(i32::from_le_bytes(le(b)) as u32 ^ 0x8000_0000).to_be_bytes())
        }
        DataType::BigInt | DataType::Timestamp | DataType::TimestampTz | DataType::Time => {
            out.extend_from_slice(&(i64::from_le_bytes(le(b)) as u64 ^ (1 << 63)).to_be_bytes())
        }
        DataType::Double | DataType::Enum(_) => {
            let f = f64::from_le_bytes(le(b));
            let f = if f == 0.0 {
                0.0
            } else if f.is_nan() {
                f64::NAN
            } else {
                f
            };
            let bits = f.to_bits();
            let bits = if bits >> 63 == 1 { !bits } else { bits ^ (1 << 63) };
            out.extend_from_slice(&bits.to_be_bytes());
        }
        DataType::Numeric { .. } => encode_numeric(Decimal::deserialize(le(b)), out),
        // tsvector and tsquery order by their stored (send) bytes.
        DataType::Varchar(_)
        | DataType::Char(_)
        | DataType::Text
        | DataType::Int2Vector
        | DataType::OidVector
        | DataType::Bytea
        | DataType::Json
        | DataType::TsVector
        | DataType::TsQuery => {
            for &x in b {
                out.push(x);
                if x == 0 {
                    out.push(0xFF);
                }
            }
            out.extend_from_slice(&[0x00, 0x01]);
        }
        DataType::Uuid => out.extend_from_slice(&le::<16>(b)),
        DataType::Interval => out.extend_from_slice(&(interval_span(b) as u128 ^ (1 << 127)).to_be_bytes()),
        DataType::Jsonb => {
            let mut key = Vec::with_capacity(b.len() + 8);
            centum_types::json::Jsonb::from_bytes(b).root().sort_key(&mut key);
            out.extend_from_slice(&key);
        }
        DataType::Array(elem) => {
            let Value::Array(items) = Value::decode_var(t, b) else { return };
            encode_items(items.iter().map(|v| (v, &**elem)), out);
        }
        // Field by field as an array's elements; the count is the type's.
        DataType::Composite(ty) => {
            let Value::Composite(c) = Value::decode_var(t, b) else { return };
            encode_items(c.fields.iter().zip(ty.fields().iter().map(|(_, t)| t)), out);
        }
    }
}

/// Appends the order-preserving encoding of a sequence of values, each of
/// its type: a NULL as 0x02 (above every value), a value as 0x01 and its
/// own encoding, then 0x00 to end (a prefix sorts first).
fn encode_items<'a>(items: impl Iterator<Item = (&'a Value, &'a DataType)>, out: &mut KeyBytes) {
    let mut scratch = [0u8; 16];
    for (v, ty) in items {
        if v.is_null() {
            out.push(0x02);
            continue;
        }
        out.push(0x01);
        match ty.fixed_width() {
            Some(w) => {
                let _ = v.encode_fixed(ty, &mut scratch[..w]);
                encode_raw(ty, &scratch[..w], out);
            }
            None => encode_raw(ty, &v.var_bytes().unwrap_or_default(), out),
        }
    }
    out.push(0x00);
}

fn encode_numeric(d: Decimal, out: &mut KeyBytes) {
    if d.is_zero() {
        out.push(0x02);
        return;
    }
    let neg = d.is_sign_negative();
    out.push(if neg { 0x01 } else { 0x03 });
    let start = out.len();
    let d = d.normalize();
    let all = d.mantissa().unsigned_abs().to_string();
    // |d| = 0.digits x 10^e, with e = (digits before the point).
    let e = all.len() as i64 - d.scale() as i64;
    let digits = all.trim_end_matches('0');
    out.extend_from_slice(&((e as i16 as u16) ^ 0x8000).to_be_bytes());
    out.extend(digits.bytes().map(|c| c - b'0' + 1));
    out.push(0x00);
    if neg {
        out[start..].iter_mut().for_each(|x| *x = !*x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn col(ty: DataType, nullable: bool) -> Column {
        Column { name: "c".into(), ty, nullable }
    }

    fn enc(def: &SortKeyDef, v: &[Value]) -> KeyBytes {
        def.encode_values(v).expect("encode")
    }

    fn check_order(ty: DataType, vals: Vec<Value>) {
        for nullable in [false, true] {
            for desc in [false, true] {
                let def = SortKeyDef::new(&[col(ty.clone(), nullable)], vec![0], &[desc]);
                for a in &vals {
                    for b in &vals {
                        if !nullable && (a.is_null() || b.is_null()) {
                            continue;
                        }
                        let want = if desc { b.cmp(a) } else { a.cmp(b) };
                        let got = enc(&def, std::slice::from_ref(a)).cmp(&enc(&def, std::slice::from_ref(b)));
                        assert_eq!(got, want, "{ty} {a:?} vs {b:?} desc={desc} nullable={nullable}");
                    }
                }
            }
        }
    }

    proptest! {
        #[test]
        fn integers_keep_their_order(a in any::<i64>(), b in any::<i64>(), c in any::<i32>(), d in any::<i16>()) {
            check_order(DataType::BigInt, vec![Value::BigInt(a), Value::BigInt(b), Value::BigInt(0), Value::BigInt(i64::MIN), Value::Null]);
            check_order(DataType::Integer, vec![Value::Integer(c), Value::Integer(-1), Value::Integer(1), Value::Null]);
            check_order(DataType::SmallInt, vec![Value::SmallInt(d), Value::SmallInt(i16::MAX), Value::Null]);
        }

        #[test]
        fn doubles_keep_their_order(a in any::<f64>(), b in any::<f64>()) {
            check_order(DataType::Double, vec![Value::Double(a), Value::Double(b), Value::Double(-0.0), Value::Double(0.0),
                Value::Double(f64::INFINITY), Value::Double(f64::NEG_INFINITY), Value::Double(f64::NAN), Value::Null]);
        }

        #[test]
        fn numerics_keep_their_order(a in any::<i64>(), sa in 0u32..12, b in any::<i32>(), sb in 0u32..8) {
            let x = Decimal::new(a, sa);
            let y = Decimal::new(b as i64, sb);
            check_order(DataType::numeric(None, None).expect("type"), vec![Value::Numeric(x), Value::Numeric(y),
                Value::Numeric(Decimal::ZERO), Value::Numeric(Decimal::new(100, 2)), Value::Numeric(Decimal::new(1, 0)),
                Value::Numeric(Decimal::new(-5, 1)), Value::Null]);
        }

        #[test]
        fn strings_keep_their_order(a in proptest::collection::vec(0u8..4, 0..6), b in proptest::collection::vec(0u8..4, 0..6)) {
            check_order(DataType::Bytea, vec![Value::Bytea(a.clone()), Value::Bytea(b.clone()), Value::Bytea(vec![]), Value::Null]);
            let s = |v: &[u8]| Value::Text(v.iter().map(|&x| (b'a' + x) as char).collect());
            check_order(DataType::Text, vec![s(&a), s(&b), s(&[]), Value::Null]);
        }

        /// Two-column keys compare column by column: the encoding of each
        /// column is prefix-free.
        #[test]
        fn composite_keys_compare_column_by_column(
            a in proptest::collection::vec(0u8..3, 0..4), x in -3i32..3,
            b in proptest::collection::vec(0u8..3, 0..4), y in -3i32..3,
        ) {
            let def = SortKeyDef::new(&[col(DataType::Bytea, true), col(DataType::Integer, false)], vec![0, 1], &[]);
            let ka = enc(&def, &[Value::Bytea(a.clone()), Value::Integer(x)]);
            let kb = enc(&def, &[Value::Bytea(b.clone()), Value::Integer(y)]);
            prop_assert_eq!(ka.cmp(&kb), (a, x).cmp(&(b, y)));
        }
    }

    /// A byte range selects exactly the keys whose column satisfies the
    /// bounds, NULLs excluded, in both directions.
    #[test]
    fn byte_ranges_select_the_bounded_values() {
        let vals: Vec<Value> = (-3..=3).map(Value::Integer).chain([Value::Null]).collect();
        let bounds = |v: i32| {
            [Bound::Included(Value::Integer(v)), Bound::Excluded(Value::Integer(v)), Bound::Unbounded]
        };
        for nullable in [false, true] {
            for desc in [false, true] {
                let def = SortKeyDef::new(&[col(DataType::Integer, nullable)], vec![0], &[desc]);
                for lower in bounds(-1) {
                    for upper in bounds(2) {
                        let r = KeyRange::between(lower.clone(), upper.clone());
                        let (lo, hi) = def.byte_range(&r).expect("range").expect("non-empty");
                        for v in &vals {
                            if !nullable && v.is_null() {
                                continue;
                            }
                            let k = enc(&def, std::slice::from_ref(v));
                            let inside =
                                lo.as_ref().is_none_or(|l| k >= *l) && hi.as_ref().is_none_or(|h| k < *h);
                            let want = match v {
                                Value::Integer(x) => {
                                    (match &lower {
                                        Bound::Included(Value::Integer(l)) => x >= l,
                                        Bound::Excluded(Value::Integer(l)) => x > l,
                                        _ => true,
                                    }) && (match &upper {
                                        Bound::Included(Value::Integer(u)) => x <= u,
                                        Bound::Excluded(Value::Integer(u)) => x < u,
                                        _ => true,
                                    })
                                }
                                // A full scan includes NULLs; a bounded one never.
                                _ => matches!((&lower, &upper), (Bound::Unbounded, Bound::Unbounded)),
                            };
                            assert_eq!(
                                inside, want,
                                "{v:?} in {lower:?}..{upper:?} desc={desc} nullable={nullable}"
                            );
                        }
                    }
                }
            }
        }
    }
}
