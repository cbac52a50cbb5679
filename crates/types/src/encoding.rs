//! How values are laid out in a stored row.
//!
//! Fixed-width types are written inline into a slot of exactly
//! [`DataType::fixed_width`] bytes; variable-width types (strings, bytea)
//! are handed to the engine as byte slices that it stores out of line:
//!
//! ```text
//!   type         bytes  encoding
//!   boolean        1    0 or 1 (any non-zero byte decodes as true)
//!   smallint       2    i16 little-endian
//!   integer        4    i32 little-endian
//!   bigint         8    i64 little-endian
//!   double         8    f64 bits, little-endian
//!   numeric       16    rust_decimal's Decimal::serialize (flags, lo, mid, hi)
//!   date           4    i32 days since 2000-01-01, little-endian
//!   timestamp[tz]  8    i64 microseconds since 2000-01-01, little-endian
//!   uuid          16    the 16 bytes in RFC 4122 order
//!   time           8    i64 microseconds since midnight, little-endian
//!   interval      16    i64 microseconds, i32 days, i32 months, each
//!                       little-endian, in that order
//!   text / varchar / char   UTF-8 bytes        (variable)
//!   bytea                   the bytes as they are (variable)
//!   arrays                  count, then each element's length and bytes
//!                           (variable; see the `array` module)
//!   json                    the text as written (variable)
//!   jsonb                   tagged binary form (variable; see `json`)
//!   enum                    the label's sort position (f64 bits,
//!                           little-endian, 8 bytes), then the label's
//!                           UTF-8 bytes (variable; see `enums`)
//! ```
//!
//! NULLs are not encoded here; the row format tracks them separately.
//! Decoding never panics, whatever the bytes: the engine must survive a
//! caller bug or a corrupt slot by returning a wrong value, not by taking
//! every session down.

use std::borrow::Cow;

use rust_decimal::Decimal;
use uuid::Uuid;

use crate::datatype::DataType;
use crate::datetime::{Date, Time, Timestamp, TimestampTz};
use crate::error::TypeError;
use crate::interval::Interval;
use crate::value::Value;

/// Widest fixed encoding (numeric, uuid).
const MAX_FIXED_WIDTH: usize = 16;

impl Value {
    /// Writes the fixed-width encoding of the value into `buf`, which must be
    /// exactly `ty.fixed_width()` bytes. The value must have the type's
    /// variant (check with [`Value::fits`] first); a wrong variant, Null, a
    /// variable-width type or a wrong buffer length is a 42804 error.
    pub fn encode_fixed(&self, ty: &DataType, buf: &mut [u8]) -> Result<(), TypeError> {
        let Some(width) = ty.fixed_width() else {
            return Err(TypeError::mismatch("a fixed-width type", ty));
        };
        if buf.len() != width {
            return Err(TypeError::mismatch(
                format!("{width}-byte slot for {ty}"),
                format!("{}-byte slot", buf.len()),
            ));
        }
        match (self, ty) {
            (Value::Boolean(b), DataType::Boolean) => buf.copy_from_slice(&[u8::from(*b)]),
            (Value::SmallInt(v), DataType::SmallInt) => buf.copy_from_slice(&v.to_le_bytes()),
            (Value::Integer(v), DataType::Integer | DataType::Oid) => buf.copy_from_slice(&v.to_le_bytes()),
            (Value::BigInt(v), DataType::BigInt) => buf.copy_from_slice(&v.to_le_bytes()),
            (Value::Double(v), DataType::Double) => buf.copy_from_slice(&v.to_bits().to_le_bytes()),
            (Value::Numeric(d), DataType::Numeric { .. }) => buf.copy_from_slice(&d.serialize()),
            (Value::Date(d), DataType::Date) => buf.copy_from_slice(&d.0.to_le_bytes()),
            (Value::Timestamp(t), DataType::Timestamp) => buf.copy_from_slice(&t.0.to_le_bytes()),
            (Value::TimestampTz(t), DataType::TimestampTz) => buf.copy_from_slice(&t.0.to_le_bytes()),
            (Value::Uuid(u), DataType::Uuid) => buf.copy_from_slice(u.as_bytes()),
            (Value::Time(t), DataType::Time) => buf.copy_from_slice(&t.0.to_le_bytes()),
            (Value::Interval(i), DataType::Interval) => {
                buf[..8].copy_from_slice(&i.micros.to_le_bytes());
                buf[8..12].copy_from_slice(&i.days.to_le_bytes());
                buf[12..].copy_from_slice(&i.months.to_le_bytes());
            }
            _ => return Err(TypeError::mismatch(ty, self.type_name())),
        }
        Ok(())
    }

    /// Reads a value written by [`Value::encode_fixed`]. Never panics: a
    /// buffer of the wrong length is zero-extended or cut to the type's
    /// width, and a variable-width `ty` decodes as Null.
    pub fn decode_fixed(ty: &DataType, buf: &[u8]) -> Value {
        let Some(width) = ty.fixed_width() else {
            return Value::Null;
        };
        let mut bytes = [0u8; MAX_FIXED_WIDTH];
        let n = buf.len().min(width).min(MAX_FIXED_WIDTH);
        bytes[..n].copy_from_slice(&buf[..n]);
        match ty {
            DataType::Boolean => Value::Boolean(bytes[0] != 0),
            DataType::SmallInt => Value::SmallInt(i16::from_le_bytes(prefix(&bytes))),
            DataType::Integer | DataType::Oid => Value::Integer(i32::from_le_bytes(prefix(&bytes))),
            DataType::BigInt => Value::BigInt(i64::from_le_bytes(prefix(&bytes))),
            DataType::Double => Value::Double(f64::from_bits(u64::from_le_bytes(prefix(&bytes)))),
            // deserialize masks unused flag bits and clamps an oversized
            // scale, so any 16 bytes give a valid Decimal.
            DataType::Numeric { .. } => {
                Value::Numeric(crate::numeric::positive_zero(Decimal::deserialize(bytes)))
            }
            DataType::Date => Value::Date(Date(i32::from_le_bytes(prefix(&bytes)))),
            DataType::Timestamp => Value::Timestamp(Timestamp(i64::from_le_bytes(prefix(&bytes)))),
            DataType::TimestampTz => Value::TimestampTz(TimestampTz(i64::from_le_bytes(prefix(&bytes)))),
            DataType::Uuid => Value::Uuid(Uuid::from_bytes(bytes)),
            DataType::Time => Value::Time(Time(i64::from_le_bytes(prefix(&bytes)))),
            DataType::Interval => Value::Interval(Interval::new(
                i32::from_le_bytes(std::array::from_fn(|i| bytes[12 + i])),
                i32::from_le_bytes(std::array::from_fn(|i| bytes[8 + i])),
                i64::from_le_bytes(prefix(&bytes)),
            )),
            DataType::Varchar(_) | DataType::Char(_) | DataType::Text | DataType::Bytea => Value::Null,
            DataType::Int2Vector | DataType::OidVector => Value::Null,
            DataType::Array(_) | DataType::Json | DataType::Jsonb | DataType::Enum(_) => Value::Null,
            DataType::Composite(_) => Value::Null,
            DataType::TsVector | DataType::TsQuery => Value::Null,
        }
    }

    /// The bytes of a variable-length value as stored in a row: UTF-8 for
    /// Text, the raw bytes for Bytea, the array form of `crate::array` for
    /// an array (built, so owned); `None` for every other variant.
    pub fn var_bytes(&self) -> Option<Cow<'_, [u8]>> {
        match self {
            Value::Text(s) => Some(Cow::Borrowed(s.as_bytes())),
            Value::Bytea(b) => Some(Cow::Borrowed(b)),
            Value::Array(items) => Some(Cow::Owned(crate::array::encode(items))),
            Value::Json(s) => Some(Cow::Borrowed(s.as_bytes())),
            Value::Jsonb(j) => Some(Cow::Borrowed(j.as_bytes())),
            Value::Enum(e) => {
                let mut out = Vec::with_capacity(8 + e.label.len());
                out.extend_from_slice(&e.position.to_bits().to_le_bytes());
                out.extend_from_slice(e.label.as_bytes());
                Some(Cow::Owned(out))
            }
            Value::Composite(c) => Some(Cow::Owned(crate::composite::encode(&c.fields))),
            Value::TsVector(v) => Some(Cow::Owned(v.send())),
            Value::TsQuery(q) => Some(Cow::Owned(q.send())),
            _ => None,
        }
    }

    /// Inverse of [`Value::var_bytes`] for a column of type `ty`. Text that
    /// is not valid UTF-8 (only possible if the stored bytes were damaged)
    /// is decoded lossily; a fixed-width `ty` is read with
    /// [`Value::decode_fixed`].
    pub fn decode_var(ty: &DataType, bytes: &[u8]) -> Value {
        match ty {
            DataType::Varchar(_)
            | DataType::Char(_)
            | DataType::Text
            | DataType::Json
            | DataType::Int2Vector
            | DataType::OidVector => {
                // Stored text is valid UTF-8 (it was a `String`); the
                // lossy path is only for damaged bytes, and is slower.
                let s = match std::str::from_utf8(bytes) {
                    Ok(s) => s.to_owned(),
                    Err(_) => String::from_utf8_lossy(bytes).into_owned(),
                };
                if *ty == DataType::Json {
                    Value::Json(s)
                } else {
                    Value::Text(s)
                }
            }
            DataType::Bytea => Value::Bytea(bytes.to_vec()),
            DataType::Jsonb => Value::Jsonb(crate::json::Jsonb::from_bytes(bytes)),
            DataType::Array(elem) => crate::array::decode(elem, bytes),
            DataType::Enum(t) => {
                let mut pos = [0u8; 8];
                let n = bytes.len().min(8);
                pos[..n].copy_from_slice(&bytes[..n]);
                let label = String::from_utf8_lossy(bytes.get(8..).unwrap_or_default());
                Value::Enum(Box::new(crate::enums::EnumValue {
                    ty: t.clone(),
                    position: f64::from_bits(u64::from_le_bytes(pos)),
                    label: label.as_ref().into(),
                }))
            }
            DataType::Composite(t) => crate::composite::decode(t, bytes),
            DataType::TsVector => Value::TsVector(crate::tsearch::TsVector::from_stored(bytes)),
            DataType::TsQuery => Value::TsQuery(crate::tsearch::TsQuery::from_stored(bytes)),
            _ => Value::decode_fixed(ty, bytes),
        }
    }
}

/// The first `N` bytes of a decode buffer (`N` is at most 16).
fn prefix<const N: usize>(bytes: &[u8; MAX_FIXED_WIDTH]) -> [u8; N] {
    std::array::from_fn(|i| bytes.get(i).copied().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn round_trip(v: Value, ty: DataType) {
        let width = ty.fixed_width().unwrap();
        let mut buf = vec![0xAA; width];
        v.encode_fixed(&ty, &mut buf).unwrap();
        let back = Value::decode_fixed(&ty, &buf);
        assert_eq!(back, v, "{ty}");
        assert_eq!(back.to_string(), v.to_string(), "{ty}");
    }

    #[test]
    fn fixed_round_trips() {
        round_trip(Value::Boolean(true), DataType::Boolean);
        round_trip(Value::Boolean(false), DataType::Boolean);
        round_trip(Value::SmallInt(-2), DataType::SmallInt);
        round_trip(Value::Integer(i32::MIN), DataType::Integer);
        round_trip(Value::BigInt(i64::MAX), DataType::BigInt);
        round_trip(Value::Double(-1.5e-300), DataType::Double);
        round_trip(
            Value::Numeric(Decimal::from_str("-123.4500").unwrap()),
            DataType::numeric(Some(9), Some(4)).unwrap(),
        );
        round_trip(Value::Date(Date(-5)), DataType::Date);
        round_trip(Value::Timestamp(Timestamp(-1)), DataType::Timestamp);
        round_trip(Value::TimestampTz(TimestampTz::INFINITY), DataType::TimestampTz);
        round_trip(Value::Uuid(Uuid::from_u128(0x0123_4567_89ab_cdef)), DataType::Uuid);
        round_trip(Value::Time(Time(86_400_000_000)), DataType::Time);
        round_trip(Value::Interval(Interval::new(-14, 3, -1)), DataType::Interval);
    }

    #[test]
    fn integers_are_little_endian() {
        let mut buf = [0u8; 4];
        Value::Integer(0x0102_0304).encode_fixed(&DataType::Integer, &mut buf).unwrap();
        assert_eq!(buf, [4, 3, 2, 1]);
    }

    #[test]
    fn encode_errors_instead_of_panicking() {
        let mut buf = [0u8; 4];
        let err = Value::BigInt(1).encode_fixed(&DataType::Integer, &mut buf).unwrap_err();
        assert_eq!(err.sqlstate(), "42804");
        assert_eq!(err.to_string(), "column is of type integer but expression is of type bigint");
        assert!(Value::Null.encode_fixed(&DataType::Integer, &mut buf).is_err());
        assert!(Value::Integer(1).encode_fixed(&DataType::Integer, &mut buf[..3]).is_err());
        assert!(Value::from("x").encode_fixed(&DataType::Text, &mut buf).is_err());
    }

    #[test]
    fn decode_tolerates_bad_input() {
        assert_eq!(Value::decode_fixed(&DataType::Integer, &[1]), Value::Integer(1));
        assert_eq!(Value::decode_fixed(&DataType::SmallInt, &[1, 0, 9, 9]), Value::SmallInt(1));
        assert_eq!(Value::decode_fixed(&DataType::Text, &[1]), Value::Null);
        assert_eq!(Value::decode_fixed(&DataType::Boolean, &[7]), Value::Boolean(true));
        // A numeric with every bit set, including an out-of-range scale.
        let ty = DataType::numeric(None, None).unwrap();
        let v = Value::decode_fixed(&ty, &[0xFF; 16]);
        assert!(matches!(v, Value::Numeric(_)));
        let _ = v.to_string();
        // A negative zero decodes as plain zero.
        let mut neg_zero = [0u8; 16];
        neg_zero[3] = 0x80;
        assert_eq!(Value::decode_fixed(&ty, &neg_zero).to_string(), "0");
    }

    #[test]
    fn variable_length() {
        let v = Value::from("héllo");
        assert_eq!(v.var_bytes().as_deref(), Some("héllo".as_bytes()));
        assert_eq!(Value::decode_var(&DataType::Varchar(Some(9)), "héllo".as_bytes()), v);
        let b = Value::Bytea(vec![0, 159, 146, 150]);
        assert_eq!(b.var_bytes().as_deref(), Some(&[0, 159, 146, 150][..]));
        assert_eq!(Value::decode_var(&DataType::Bytea, &[0, 159, 146, 150]), b);
        assert_eq!(Value::decode_var(&DataType::Text, &[0xFF, b'a']), Value::from("\u{FFFD}a"));
        assert_eq!(Value::Integer(1).var_bytes(), None);
        let a = Value::Array(vec![Value::from("x"), Value::Null]);
        let ty = DataType::array_of(DataType::Text).unwrap();
        assert_eq!(Value::decode_var(&ty, &a.var_bytes().unwrap()), a);
        assert_eq!(Value::decode_var(&DataType::Integer, &[2, 0, 0, 0]), Value::Integer(2));
    }
}
