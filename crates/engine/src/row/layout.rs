//! How a row's columns are laid out inside a version.
//!
//! Fixed-width columns sit at fixed offsets so that reading an integer
//! column is one unaligned load at a known place; variable-length columns
//! keep an (offset, length) pair at their fixed place and their bytes in a
//! tail area. Values of any size stay with their row: there is no
//! separate store for large values.
//!
//! ```text
//!  +-------------+----------------------------------+-------------------+
//!  | null bitmap |  fixed area: one slot per column |  variable area    |
//!  | ceil(n/8) B |  fixed-width value, or           |  bytes of text /  |
//!  |             |  u32 offset + u32 length (LE)    |  bytea columns    |
//!  +-------------+----------------------------------+-------------------+
//! ```
//!
//! Bit `i % 8` of bitmap byte `i / 8` is set when column `i` is NULL; the
//! slot of a NULL column is zero. Offsets of variable values count from the
//! start of the row data.

use crate::error::{Error, Result};
use centum_types::{DataType, Decimal, Value};
use smallvec::SmallVec;

/// Largest encoded row: lengths are stored as `u32`.
const MAX_ROW: usize = u32::MAX as usize / 2;

/// The layout of one table's rows.
#[derive(Clone, Debug)]
pub struct RowLayout {
    types: Vec<DataType>,
    /// Offset of each column's slot in the fixed area.
    offsets: Vec<u32>,
    /// Whether each column is variable-length.
    var: Vec<bool>,
    fixed_end: usize,
}

impl RowLayout {
    /// The layout for columns of these types, in order.
    pub fn new(types: &[DataType]) -> RowLayout {
        let null_bytes = types.len().div_ceil(8);
        let mut at = null_bytes;
        let mut offsets = Vec::with_capacity(types.len());
        let mut var = Vec::with_capacity(types.len());
        for t in types {
            offsets.push(at as u32);
            match t.fixed_width() {
                Some(w) => {
                    at += w;
                    var.push(false);
                }
                None => {
                    at += 8;
                    var.push(true);
                }
            }
        }
        RowLayout { types: types.to_vec(), offsets, var, fixed_end: at }
    }

    /// Number of columns.
    pub fn columns(&self) -> usize {
        self.types.len()
    }

    /// The type of column `col`.
    pub fn column_type(&self, col: usize) -> &DataType {
        &self.types[col]
    }

    /// Bytes needed to encode `values` (which must already have passed
    /// [`RowLayout::check`]).
    pub(crate) fn encoded_len(&self, values: &[Value]) -> usize {
        let var: usize = values
            .iter()
            .zip(&self.var)
            .filter(|(_, v)| **v)
            .map(|(val, _)| val.var_bytes().map_or(0, |b| b.len()))
            .sum();
        self.fixed_end + var
    }

    /// Checks that `values` can be stored: right count, each value of its
    /// column's type, and the row not absurdly large. NOT NULL is the
    /// table's business.
    pub(crate) fn check(&self, values: &[Value]) -> Result<()> {
        for (v, t) in values.iter().zip(&self.types) {
            if !v.fits(t) {
                return Err(Error::Type(centum_types::TypeError::Mismatch {
                    expected: t.sql_name(),
                    found: v.data_type().map_or_else(|| "unknown".into(), |d| d.sql_name()),
                }));
            }
        }
        if self.encoded_len(values) > MAX_ROW {
            return Err(Error::InvalidDefinition(format!("row of more than {MAX_ROW} bytes")));
        }
        Ok(())
    }

    /// Writes `values` into `buf`, which is exactly `encoded_len` long and
    /// zeroed or freshly allocated.
    pub(crate) fn encode(&self, values: &[Value], buf: &mut [u8]) {
        buf[..self.fixed_end].fill(0);
        let mut tail = self.fixed_end;
        for (i, v) in values.iter().enumerate() {
            let at = self.offsets[i] as usize;
            if v.is_null() {
                buf[i / 8] |= 1 << (i % 8);
                continue;
            }
            if self.var[i] {
                let bytes = v.var_bytes().unwrap_or_default();
                buf[at..at + 4].copy_from_slice(&(tail as u32).to_le_bytes());
                buf[at + 4..at + 8].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
                buf[tail..tail + bytes.len()].copy_from_slice(&bytes);
                tail += bytes.len();
            } else {
                let w = self.types[i].fixed_width().unwrap_or(0);
                // `check` made sure the value fits; a mismatch leaves zeros.
                let _ = v.encode_fixed(&self.types[i], &mut buf[at..at + w]);
            }
        }
    }

    /// Whether `data` is shaped like a row of this layout: long enough for
    /// the fixed area, no NULL bits past the last column, and every
    /// variable-length slot inside the variable area. Rows read back from
    /// disk are checked with this before they are installed, so that no
    /// later read can index out of bounds.
    pub fn is_well_formed(&self, data: &[u8]) -> bool {
        if data.len() < self.fixed_end || data.len() > MAX_ROW {
            return false;
        }
        let n = self.types.len();
        if !n.is_multiple_of(8) && data[n / 8] >> (n % 8) != 0 {
            return false;
        }
        (0..n).filter(|&c| self.var[c] && !self.is_null(data, c)).all(|c| {
            let at = self.offsets[c] as usize;
            let word =
                |i: usize| u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]) as usize;
            let (off, len) = (word(at), word(at + 4));
            off >= self.fixed_end && off.checked_add(len).is_some_and(|end| end <= data.len())
        })
    }

    /// Whether column `col` is NULL in `data`.
    #[inline]
    pub fn is_null(&self, data: &[u8], col: usize) -> bool {
        data[col / 8] & (1 << (col % 8)) != 0
    }

    /// The stored bytes of column `col`: the fixed-width encoding or the
    /// variable-length bytes. `None` for NULL.
    #[inline]
    pub fn raw<'d>(&self, data: &'d [u8], col: usize) -> Option<&'d [u8]> {
        if self.is_null(data, col) {
            return None;
        }
        let at = self.offsets[col] as usize;
        if self.var[col] {
            let off = u32::from_le_bytes(data[at..at + 4].try_into().ok()?) as usize;
            let len = u32::from_le_bytes(data[at + 4..at + 8].try_into().ok()?) as usize;
            data.get(off..off + len)
        } else {
            let w = self.types[col].fixed_width().unwrap_or(0);
            data.get(at..at + w)
        }
    }

    /// Column `col` as a value.
    pub fn value(&self, data: &[u8], col: usize) -> Value {
        match self.raw(data, col) {
            None => Value::Null,
            Some(b) if self.var[col] => Value::decode_var(&self.types[col], b),
            Some(b) => Value::decode_fixed(&self.types[col], b),
        }
    }

    /// All columns as values.
    pub fn values(&self, data: &[u8]) -> Vec<Value> {
        (0..self.types.len()).map(|c| self.value(data, c)).collect()
    }

    /// The columns marked in `wanted` as values, the others NULL.
    pub fn values_of(&self, data: &[u8], wanted: &[bool]) -> Vec<Value> {
        (0..self.types.len())
            .map(|c| if wanted.get(c).copied().unwrap_or(true) { self.value(data, c) } else { Value::Null })
            .collect()
    }

    /// Column `col` as an `i64`, for integer columns, without building a
    /// [`Value`]. `None` for NULL or a non-integer column.
    #[inline]
    pub fn int(&self, data: &[u8], col: usize) -> Option<i64> {
        let b = self.raw(data, col)?;
        Some(match self.types[col] {
            DataType::SmallInt => i16::from_le_bytes(b.try_into().ok()?) as i64,
            DataType::Integer | DataType::Oid => i32::from_le_bytes(b.try_into().ok()?) as i64,
            DataType::BigInt => i64::from_le_bytes(b.try_into().ok()?),
            _ => return None,
        })
    }
}

/// The key columns of an index, and how their values are hashed and compared.
///
/// Keys compare by value, not by bytes: `1.0` and `1.00` are one numeric
/// key, `-0.0` and `0.0` one double. Both sides are brought to a canonical
/// byte form first, so equality and hashing are plain byte operations.
#[derive(Clone, Debug)]
pub struct KeyDef {
    /// Column numbers of the key, in key order.
    pub columns: Vec<usize>,
    types: Vec<DataType>,
}

/// A key to look up, in canonical form: the canonical bytes of each key
/// column, concatenated. Small keys need no allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Probe {
    bytes: SmallVec<[u8; 32]>,
    /// End offset of each part in `bytes`.
    ends: SmallVec<[u32; 4]>,
    /// Bit `i` set: part `i` is NULL.
    nulls: u64,
    pub(crate) hash: u64,
}

impl Probe {
    fn new() -> Probe {
        Probe { bytes: SmallVec::new(), ends: SmallVec::new(), nulls: 0, hash: 0 }
    }

    fn push(&mut self, part: Option<&[u8]>) {
        match part {
            Some(b) => self.bytes.extend_from_slice(b),
            None => self.nulls |= 1 << self.ends.len().min(63),
        }
        self.ends.push(self.bytes.len() as u32);
    }

    fn finish(mut self) -> Probe {
        let mut h = Hasher::new();
        for i in 0..self.ends.len() {
            h.part(self.part(i));
        }
        self.hash = h.finish();
        self
    }

    /// Part `i`, `None` for NULL.
    #[inline]
    fn part(&self, i: usize) -> Option<&[u8]> {
        if self.nulls & (1 << i.min(63)) != 0 {
            return None;
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Some(&self.bytes[start..self.ends[i] as usize])
    }

    /// Whether any key part is NULL (such a key equals nothing).
    pub(crate) fn has_null(&self) -> bool {
        self.nulls != 0
    }
}

impl KeyDef {
    /// The key over `columns` of `layout`.
    pub fn new(layout: &RowLayout, columns: Vec<usize>) -> KeyDef {
        let types = columns.iter().map(|&c| layout.types[c].clone()).collect();
        KeyDef { columns, types }
    }

    /// Builds a probe from key values given by a caller; each is converted
    /// to its key column's type first.
    pub(crate) fn probe(&self, key: &[Value]) -> Result<Probe> {
        let mut p = Probe::new();
        let mut scratch = [0u8; 16];
        for (v, t) in key.iter().zip(&self.types) {
            let converted;
            let v = if v.fits(t) {
                v
            } else {
                converted = v.clone().coerce_to(t)?;
                &converted
            };
            if v.is_null() {
                p.push(None);
            } else if let Some(w) = t.fixed_width() {
                v.encode_fixed(t, &mut scratch[..w])?;
                p.push(Some(&canonical(t, &scratch[..w])));
            } else {
                let bytes = v.var_bytes();
                p.push(bytes.as_deref().map(|b| canonical(t, b)).as_deref());
            }
        }
        Ok(p.finish())
    }

    /// The probe for the key of a stored row.
    pub(crate) fn probe_row(&self, layout: &RowLayout, data: &[u8]) -> Probe {
        let mut p = Probe::new();
        for (&c, t) in self.columns.iter().zip(&self.types) {
            p.push(layout.raw(data, c).map(|b| canonical(t, b)).as_deref());
        }
        p.finish()
    }

    /// Hash of the key of a stored row (equal to its probe's hash).
    #[inline]
    pub(crate) fn hash_row(&self, layout: &RowLayout, data: &[u8]) -> u64 {
        let mut h = Hasher::new();
        for (&c, t) in self.columns.iter().zip(&self.types) {
            h.part(layout.raw(data, c).map(|b| canonical(t, b)).as_deref());
        }
        h.finish()
    }

    /// Whether a stored row's key equals `probe`. NULL equals nothing.
    #[inline]
    pub(crate) fn matches(&self, layout: &RowLayout, data: &[u8], probe: &Probe) -> bool {
        self.columns.iter().zip(&self.types).enumerate().all(|(i, (&c, t))| {
            match (layout.raw(data, c), probe.part(i)) {
                (Some(b), Some(p)) => *canonical(t, b) == *p,
                _ => false,
            }
        })
    }
}

/// The canonical bytes of a fixed or variable encoding: only doubles,
/// numerics, intervals and arrays (of them) have several encodings of one
/// value; an interval's canonical bytes are its span, an array's its
/// range-key encoding.
#[inline]
fn canonical<'a>(t: &DataType, b: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
    use std::borrow::Cow;
    match t {
        DataType::Double => {
            let f = f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
            let f = if f == 0.0 {
                0.0
            } else if f.is_nan() {
                f64::NAN
            } else {
                f
            };
            Cow::Owned(f.to_le_bytes().to_vec())
        }
        DataType::Numeric { .. } => {
            let d = Decimal::deserialize(b.try_into().unwrap_or([0; 16])).normalize();
            Cow::Owned(d.serialize().to_vec())
        }
        DataType::Array(_) | DataType::Jsonb | DataType::Composite(_) => {
            let mut out = super::sortkey::KeyBytes::new();
            super::sortkey::encode_raw(t, b, &mut out);
            Cow::Owned(out.to_vec())
        }
        // An enum value is its label's position; the label rides along.
        DataType::Enum(_) => Cow::Borrowed(&b[..b.len().min(8)]),
        // `1 mon` and `30 days` are one key: compare the span.
        DataType::Interval => Cow::Owned(super::sortkey::interval_span(b).to_le_bytes().to_vec()),
        _ => Cow::Borrowed(b),
    }
}

/// A small, fast, non-cryptographic hash for keys (multiply-rotate per
/// 8-byte word, murmur3's finaliser at the end).
struct Hasher(u64);

const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher {
    fn new() -> Hasher {
        Hasher(0x243f_6a88_85a3_08d3)
    }

    #[inline]
    fn word(&mut self, w: u64) {
        self.0 = (self.0 ^ w).wrapping_mul(K).rotate_left(29);
    }

    #[inline]
    fn part(&mut self, p: Option<&[u8]>) {
        let Some(b) = p else {
            self.word(0x6e75_6c6c);
            return;
        };
        let mut chunks = b.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.word(u64::from_le_bytes(tail) ^ ((b.len() as u64) << 56));
    }

    #[inline]
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn layout() -> RowLayout {
        RowLayout::new(&[
            DataType::BigInt,
            DataType::Text,
            DataType::Double,
            DataType::Numeric { precision: None, scale: None },
            DataType::Bytea,
        ])
    }

    #[test]
    fn rows_round_trip_with_nulls_and_variable_columns() {
        let l = layout();
        let row = vec![
            Value::BigInt(-5),
            Value::Text("héllo".into()),
            Value::Null,
            Value::Numeric(Decimal::new(12345, 2)),
            Value::Bytea(vec![0, 1, 2]),
        ];
        l.check(&row).unwrap();
        let mut buf = vec![0xAA; l.encoded_len(&row)];
        l.encode(&row, &mut buf);
        assert_eq!(l.values(&buf), row);
        assert_eq!(l.int(&buf, 0), Some(-5));
        assert!(l.is_null(&buf, 2));
    }

    #[test]
    fn keys_compare_by_value() {
        let l = layout();
        let k = KeyDef::new(&l, vec![2, 3]);
        let a = k.probe(&[Value::Double(-0.0), Value::Numeric(Decimal::new(10, 1))]).unwrap();
        let b = k.probe(&[Value::Double(0.0), Value::Numeric(Decimal::new(100, 2))]).unwrap();
        assert_eq!(a, b);
        let row = vec![
            Value::BigInt(1),
            Value::Null,
            Value::Double(0.0),
            Value::Numeric(Decimal::new(1, 0)),
            Value::Null,
        ];
        let mut buf = vec![0; l.encoded_len(&row)];
        l.encode(&row, &mut buf);
        assert!(k.matches(&l, &buf, &a));
        assert_eq!(k.hash_row(&l, &buf), a.hash);
        assert_eq!(k.probe_row(&l, &buf), a);
    }

    #[test]
    fn null_keys_match_nothing() {
        let l = layout();
        let k = KeyDef::new(&l, vec![1]);
        let p = k.probe(&[Value::Null]).unwrap();
        assert!(p.has_null());
        let row = vec![Value::BigInt(1), Value::Null, Value::Null, Value::Null, Value::Null];
        let mut buf = vec![0; l.encoded_len(&row)];
        l.encode(&row, &mut buf);
        assert!(!k.matches(&l, &buf, &p));
    }
}
