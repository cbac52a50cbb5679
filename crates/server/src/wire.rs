//! Values on the wire: PostgreSQL's text and binary formats.
//!
//! Text is what `Value`'s `Display` prints and `Value::parse` reads. Binary
//! follows PostgreSQL's send/receive functions: big-endian integers and
//! IEEE floats, `date` as days and timestamps as microseconds since
//! 2000-01-01 (Centum's own representation, so no conversion), `uuid` as 16
//! bytes, and `numeric` as base-10,000 digits with weight, sign and display
//! scale. A result column is encoded by its declared type (an `integer`
//! column is always 4 bytes), whatever integer width the value has.

use bytes::{BufMut, BytesMut};
use centum_types::Decimal;
use centum_types::{DataType, Date, Timestamp, TimestampTz, Value};
use std::fmt::Write as _;

/// PostgreSQL's type OID for a result column (`text` where unknown).
pub fn type_oid(ty: Option<&DataType>) -> u32 {
    ty.map_or(25, DataType::pg_oid)
}

/// `pg_type.typlen` of a type: its width, or -1 for variable length.
pub fn type_size(ty: Option<&DataType>) -> i16 {
    match ty {
        Some(DataType::Boolean) => 1,
        Some(DataType::SmallInt) => 2,
        Some(DataType::Integer) | Some(DataType::Oid) | Some(DataType::Date) => 4,
        Some(DataType::BigInt)
        | Some(DataType::Double)
        | Some(DataType::Timestamp)
        | Some(DataType::TimestampTz)
        | Some(DataType::Time) => 8,
        Some(DataType::Uuid) | Some(DataType::Interval) => 16,
        _ => -1,
    }
}

/// The type a client means by a parameter OID (`None`: infer it).
pub fn oid_type(oid: u32) -> Option<DataType> {
    Some(match oid {
        16 => DataType::Boolean,
        21 => DataType::SmallInt,
        23 => DataType::Integer,
        26 => DataType::Oid,
        22 => DataType::Int2Vector,
        30 => DataType::OidVector,
        20 => DataType::BigInt,
        700 | 701 => DataType::Double,
        1700 => DataType::Numeric { precision: None, scale: None },
        25 | 19 | 1043 | 1042 => DataType::Text,
        17 => DataType::Bytea,
        1082 => DataType::Date,
        1114 => DataType::Timestamp,
        1184 => DataType::TimestampTz,
        2950 => DataType::Uuid,
        1186 => DataType::Interval,
        1083 => DataType::Time,
        114 => DataType::Json,
        3802 => DataType::Jsonb,
        3614 => DataType::TsVector,
        3615 => DataType::TsQuery,
        // regconfig: Centum keeps a configuration as its name.
        3734 => DataType::Text,
        _ => return array_elem_oid(oid).and_then(oid_type).map(|e| DataType::Array(Box::new(e))),
    })
}

/// The element type OID of an array type OID PostgreSQL clients send.
fn array_elem_oid(oid: u32) -> Option<u32> {
    Some(match oid {
        1000 => 16,
        1005 => 21,
        1007 => 23,
        1028 => 26,
        1016 => 20,
        1021 => 700,
        1022 => 701,
        1231 => 1700,
        1009 => 25,
        1003 => 19,
        1015 => 1043,
        1014 => 1042,
        1001 => 17,
        1182 => 1082,
        1115 => 1114,
        1185 => 1184,
        2951 => 2950,
        1187 => 1186,
        1183 => 1083,
        199 => 114,
        3807 => 3802,
        3643 => 3614,
        3645 => 3615,
        _ => return None,
    })
}

/// Why a parameter could not be read.
pub type DecodeError = String;

/// Reads a parameter sent in binary for a parameter of type `ty`.
pub fn decode_binary(bytes: &[u8], ty: &DataType) -> Result<Value, DecodeError> {
    let int = |b: &[u8]| -> Result<i64, DecodeError> {
        Ok(match b.len() {
            2 => i16::from_be_bytes([b[0], b[1]]).into(),
            4 => i32::from_be_bytes(b.try_into().expect("4 bytes")).into(),
            8 => i64::from_be_bytes(b.try_into().expect("8 bytes")),
            n => return Err(format!("incorrect binary data format: {n} bytes for an integer")),
        })
    };
    let fixed = |n: usize| -> Result<(), DecodeError> {
        if bytes.len() == n {
            Ok(())
        } else {
            Err(format!("incorrect binary data format: {} bytes where {n} were expected", bytes.len()))
        }
    };
    let range = |v: i64, lo: i64, hi: i64, name: &str| -> Result<i64, DecodeError> {
        if v < lo || v > hi {
            Err(format!("{name} out of range"))
        } else {
            Ok(v)
        }
    };
    Ok(match ty {
        DataType::Boolean => {
            fixed(1)?;
            Value::Boolean(bytes[0] != 0)
        }
        DataType::SmallInt => {
            Value::SmallInt(range(int(bytes)?, i16::MIN.into(), i16::MAX.into(), "smallint")? as i16)
        }
        DataType::Integer => {
            Value::Integer(range(int(bytes)?, i32::MIN.into(), i32::MAX.into(), "integer")? as i32)
        }
        // An oid is sent unsigned; Centum's are below 2^31.
        DataType::Oid => {
            fixed(4)?;
            let v = u32::from_be_bytes(bytes.try_into().expect("4 bytes"));
            Value::Integer(i32::try_from(v).map_err(|_| "OID out of range".to_string())?)
        }
        DataType::BigInt => Value::BigInt(int(bytes)?),
        DataType::Double => match bytes.len() {
            4 => Value::Double(f32::from_be_bytes(bytes.try_into().expect("4 bytes")).into()),
            _ => {
                fixed(8)?;
                Value::Double(f64::from_be_bytes(bytes.try_into().expect("8 bytes")))
            }
        },
        DataType::Numeric { .. } => Value::Numeric(decode_numeric(bytes)?),
        DataType::Bytea => Value::Bytea(bytes.to_vec()),
        DataType::Date => {
            fixed(4)?;
            Value::Date(Date(i32::from_be_bytes(bytes.try_into().expect("4 bytes"))))
        }
        DataType::Timestamp => {
            fixed(8)?;
            Value::Timestamp(Timestamp(i64::from_be_bytes(bytes.try_into().expect("8 bytes"))))
        }
        DataType::TimestampTz => {
            fixed(8)?;
            Value::TimestampTz(TimestampTz(i64::from_be_bytes(bytes.try_into().expect("8 bytes"))))
        }
        DataType::Uuid => {
            fixed(16)?;
            Value::Uuid(centum_types::Uuid::from_bytes(bytes.try_into().expect("16 bytes")))
        }
        // PostgreSQL's binary interval: i64 microseconds, i32 days, i32 months.
        DataType::Interval => {
            fixed(16)?;
            let be =
                |at: usize, n: usize| bytes[at..at + n].iter().fold(0i64, |acc, b| acc << 8 | i64::from(*b));
            let micros = i64::from_be_bytes(bytes[..8].try_into().expect("8 bytes"));
            Value::Interval(centum_types::Interval::new(be(12, 4) as i32, be(8, 4) as i32, micros))
        }
        DataType::Time => {
            fixed(8)?;
            let t = i64::from_be_bytes(bytes.try_into().expect("8 bytes"));
            if !(0..=86_400_000_000).contains(&t) {
                return Err("time out of range".to_string());
            }
            Value::Time(centum_types::Time(t))
        }
        DataType::Array(elem) => decode_array(bytes, elem)?,
        DataType::Composite(t) => decode_record(bytes, t)?,
        // A vector arrives as an array of its elements.
        DataType::Int2Vector | DataType::OidVector => {
            let elem = ty.vector_element().unwrap_or(DataType::SmallInt);
            match decode_array(bytes, &elem)? {
                Value::Array(items) if !items.iter().any(Value::is_null) => {
                    Value::Text(items.iter().map(Value::to_string).collect::<Vec<_>>().join(" "))
                }
                _ => return Err(format!("a {ty} has no NULL elements")),
            }
        }
        // PostgreSQL's binary jsonb: a version byte (1), then the text.
        DataType::Jsonb => {
            let Some((1, text)) = bytes.split_first() else {
                return Err("unsupported jsonb version number".to_string());
            };
            let text = std::str::from_utf8(text)
                .map_err(|_| "invalid byte sequence for encoding \"UTF8\"".to_string())?;
            Value::Jsonb(centum_types::json::Jsonb::parse(text).map_err(|e| e.to_string())?)
        }
        // PostgreSQL's tsvectorsend / tsquerysend forms.
        DataType::TsVector => {
            Value::TsVector(centum_types::tsearch::TsVector::recv(bytes).map_err(|e| e.to_string())?)
        }
        DataType::TsQuery => {
            Value::TsQuery(centum_types::tsearch::TsQuery::recv(bytes).map_err(|e| e.to_string())?)
        }
        DataType::Json => {
            let text = std::str::from_utf8(bytes)
                .map_err(|_| "invalid byte sequence for encoding \"UTF8\"".to_string())?;
            centum_types::json::parse(text).map_err(|e| e.to_string())?;
            Value::Json(text.to_string())
        }
        _ => Value::Text(
            std::str::from_utf8(bytes)
                .map_err(|_| "invalid byte sequence for encoding \"UTF8\"".to_string())?
                .to_string(),
        ),
    })
}

/// Appends `v` in binary as a value of column type `ty` (without the
/// length word).
pub fn encode_binary(v: &Value, ty: Option<&DataType>, out: &mut BytesMut) {
    let as_i64 = |v: &Value| match v {
        Value::SmallInt(x) => Some(i64::from(*x)),
        Value::Integer(x) => Some(i64::from(*x)),
        Value::BigInt(x) => Some(*x),
        _ => None,
    };
    match (ty, v) {
        (Some(DataType::Boolean), Value::Boolean(b)) => out.put_u8(*b as u8),
        (Some(DataType::SmallInt), v) if as_i64(v).is_some() => out.put_i16(as_i64(v).unwrap_or(0) as i16),
        (Some(DataType::Integer | DataType::Oid), v) if as_i64(v).is_some() => {
            out.put_i32(as_i64(v).unwrap_or(0) as i32)
        }
        (Some(DataType::BigInt), v) if as_i64(v).is_some() => out.put_i64(as_i64(v).unwrap_or(0)),
        (Some(DataType::Double), Value::Double(d)) => out.put_f64(*d),
        (Some(DataType::Numeric { .. }), Value::Numeric(d)) => encode_numeric(*d, out),
        (Some(DataType::Numeric { .. }), v) if as_i64(v).is_some() => {
            encode_numeric(Decimal::from(as_i64(v).unwrap_or(0)), out)
        }
        (Some(DataType::Bytea), Value::Bytea(b)) => out.put_slice(b),
        (Some(DataType::Date), Value::Date(d)) => out.put_i32(d.0),
        (Some(DataType::Timestamp), Value::Timestamp(t)) => out.put_i64(t.0),
        (Some(DataType::TimestampTz), Value::TimestampTz(t)) => out.put_i64(t.0),
        (Some(DataType::Uuid), Value::Uuid(u)) => out.put_slice(u.as_bytes()),
        (Some(DataType::Time), Value::Time(t)) => out.put_i64(t.0),
        (Some(DataType::Interval), Value::Interval(i)) => {
            out.put_i64(i.micros);
            out.put_i32(i.days);
            out.put_i32(i.months);
        }
        (Some(DataType::Array(elem)), Value::Array(items)) => encode_array(items, elem, 1, out),
        (_, Value::Composite(c)) => encode_record(c, out),
        // A vector goes as an array counted from 0, as `int2vectorsend`
        // sends it.
        (Some(t @ (DataType::Int2Vector | DataType::OidVector)), Value::Text(s)) => {
            let elem = t.vector_element().unwrap_or(DataType::SmallInt);
            let items: Vec<Value> =
                s.split_ascii_whitespace().filter_map(|n| Value::parse(n, &elem).ok()).collect();
            encode_array(&items, &elem, 0, out)
        }
        (Some(DataType::Jsonb), Value::Jsonb(j)) => {
            out.put_u8(1);
            out.put_slice(j.to_string().as_bytes());
        }
        (Some(DataType::TsVector), Value::TsVector(v)) => out.put_slice(&v.send()),
        (Some(DataType::TsQuery), Value::TsQuery(q)) => out.put_slice(&q.send()),
        (_, Value::Json(s)) => out.put_slice(s.as_bytes()),
        (_, Value::Text(s)) => out.put_slice(s.as_bytes()),
        (_, v) => out.put_slice(v.to_string().as_bytes()),
    }
}

/// PostgreSQL's binary array: i32 dimensions (0 for an empty array, else
/// 1), i32 has-NULLs flag, u32 element type OID, then per dimension i32
/// length and i32 lower bound (`lower`: 1, or 0 for a vector), then per
/// element an i32 length (-1: NULL) and the element's binary form.
fn encode_array(items: &[Value], elem: &DataType, lower: i32, out: &mut BytesMut) {
    out.put_i32(i32::from(!items.is_empty()));
    out.put_i32(i32::from(items.iter().any(Value::is_null)));
    out.put_u32(elem.pg_oid());
    if !items.is_empty() {
        out.put_i32(items.len() as i32);
        out.put_i32(lower);
    }
    for v in items {
        encode_item(v, elem, out);
    }
}

/// Appends an array element or record field: an i32 length (-1: NULL),
/// then its binary form as a value of type `ty`.
fn encode_item(v: &Value, ty: &DataType, out: &mut BytesMut) {
    if v.is_null() {
        out.put_i32(-1);
        return;
    }
    let at = out.len();
    out.put_i32(0);
    encode_binary(v, Some(ty), out);
    let len = (out.len() - at - 4) as i32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

/// PostgreSQL's binary record (`record_send`): i32 field count, then per
/// field its type OID, an i32 length (-1: NULL) and the field's binary
/// form.
fn encode_record(c: &centum_types::CompositeValue, out: &mut BytesMut) {
    out.put_i32(c.fields.len() as i32);
    for (v, (_, ty)) in c.fields.iter().zip(c.ty.fields()) {
        out.put_u32(ty.pg_oid());
        encode_item(v, ty, out);
    }
}

/// Reads a binary record parameter of composite type `t`: as many fields
/// as the type has, each read as its field's type.
fn decode_record(bytes: &[u8], t: &centum_types::CompositeType) -> Result<Value, DecodeError> {
    let mut r = BinReader { bytes, at: 0, bad: "incorrect binary data format" };
    let n = r.word()?;
    if usize::try_from(n).ok() != Some(t.fields().len()) {
        return Err(format!("wrong number of columns: {n}, expected {}", t.fields().len()));
    }
    let mut fields = Vec::with_capacity(t.fields().len());
    for (_, ty) in t.fields() {
        let _oid = r.word()?;
        let len = r.word()?;
        if len < 0 {
            fields.push(Value::Null);
            continue;
        }
        fields.push(decode_binary(r.take(len as usize)?, ty)?);
    }
    r.end()?;
    Ok(t.value(fields))
}

/// Reads big-endian words and byte runs off a binary parameter; every
/// shortfall is the error `bad`.
struct BinReader<'a> {
    bytes: &'a [u8],
    at: usize,
    bad: &'static str,
}

impl<'a> BinReader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end =
            self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| self.bad.to_string())?;
        let b = &self.bytes[self.at..end];
        self.at = end;
        Ok(b)
    }

    fn word(&mut self) -> Result<i32, DecodeError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Checks that every byte was read.
    fn end(&self) -> Result<(), DecodeError> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(self.bad.to_string())
        }
    }
}

/// Reads a binary array parameter (one dimension at most) of elements of
/// type `elem`, whatever element OID the client names.
fn decode_array(bytes: &[u8], elem: &DataType) -> Result<Value, DecodeError> {
    let mut r = BinReader { bytes, at: 0, bad: "incorrect binary data format in array" };
    let ndim = r.word()?;
    let _has_nulls = r.word()?;
    let _elem_oid = r.word()?;
    let count = match ndim {
        0 => 0,
        1 => {
            let n = r.word()?;
            let _lower_bound = r.word()?;
            usize::try_from(n).map_err(|_| r.bad.to_string())?
        }
        n if n > 1 => return Err("multidimensional arrays are not supported".into()),
        _ => return Err(r.bad.to_string()),
    };
    let mut items = Vec::with_capacity(count.min(bytes.len() / 4));
    for _ in 0..count {
        let len = r.word()?;
        if len < 0 {
            items.push(Value::Null);
            continue;
        }
        items.push(decode_binary(r.take(len as usize)?, elem)?);
    }
    r.end()?;
    Ok(Value::Array(items))
}

/// PostgreSQL's binary numeric: i16 ndigits, i16 weight, u16 sign, u16
/// dscale, then ndigits base-10,000 digits, most significant first.
fn encode_numeric(d: Decimal, out: &mut BytesMut) {
    let scale = d.scale() as usize;
    let digits = d.abs().mantissa().to_string();
    let (int, frac) = if digits.len() > scale {
        (digits[..digits.len() - scale].to_string(), digits[digits.len() - scale..].to_string())
    } else {
        (String::new(), format!("{}{digits}", "0".repeat(scale - digits.len())))
    };
    let int = format!("{}{int}", "0".repeat((4 - int.len() % 4) % 4));
    let frac = format!("{frac}{}", "0".repeat((4 - frac.len() % 4) % 4));
    let mut groups: Vec<i16> = int
        .as_bytes()
        .chunks(4)
        .chain(frac.as_bytes().chunks(4))
        .map(|c| std::str::from_utf8(c).unwrap_or("0").parse().unwrap_or(0))
        .collect();
    let mut weight = (int.len() / 4) as i16 - 1;
    while groups.first() == Some(&0) {
        groups.remove(0);
        weight -= 1;
    }
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        weight = 0;
    }
    out.put_i16(groups.len() as i16);
    out.put_i16(weight);
    out.put_u16(if d.is_sign_negative() && !d.is_zero() { 0x4000 } else { 0 });
    out.put_u16(scale as u16);
    for g in groups {
        out.put_i16(g);
    }
}

fn decode_numeric(b: &[u8]) -> Result<Decimal, DecodeError> {
    let bad = || "invalid binary numeric".to_string();
    if b.len() < 8 {
        return Err(bad());
    }
    let word = |i: usize| i16::from_be_bytes([b[i], b[i + 1]]);
    let (n, weight, sign, dscale) = (word(0) as usize, word(2) as i32, word(4) as u16, word(6) as u16);
    if b.len() != 8 + 2 * n || dscale > 28 {
        return Err(bad());
    }
    if sign == 0xC000 {
        return Err("NaN is not a Centum numeric".into());
    }
    // Digits as text: group i is worth 10000^(weight - i).
    let mut groups = Vec::with_capacity(n);
    for i in 0..n {
        let g = word(8 + 2 * i);
        if !(0..10_000).contains(&g) {
            return Err(bad());
        }
        groups.push(g);
    }
    if !(-40..=40).contains(&weight) {
        return Err("numeric out of Centum's range".into());
    }
    let (mut int, mut frac) = (String::new(), String::new());
    for k in 0..=weight.max(-1) {
        let g = groups.get(k as usize).copied().unwrap_or(0);
        let _ = write!(int, "{g:04}");
    }
    // A negative weight: whole zero groups between the point and the first.
    for _ in (weight + 1).min(0)..0 {
        frac.push_str("0000");
    }
    for g in groups.iter().skip((weight + 1).max(0) as usize) {
        let _ = write!(frac, "{g:04}");
    }
    let text =
        format!("{}.{}", if int.is_empty() { "0" } else { &int }, if frac.is_empty() { "0" } else { &frac });
    let mut v: Decimal = text.parse().map_err(|_| "numeric out of Centum's range".to_string())?;
    v.rescale(dscale.into());
    if sign == 0x4000 {
        v.set_sign_negative(true);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn numerics_round_trip_through_binary() {
        for s in [
            "0",
            "1",
            "-1",
            "10000",
            "123456.789",
            "0.0001",
            "-0.5",
            "99999999.00",
            "1e-10",
            "12345678901234567890",
        ] {
            let d = Decimal::from_str(s).or_else(|_| Decimal::from_scientific(s)).unwrap();
            let mut out = BytesMut::new();
            encode_numeric(d, &mut out);
            let back = decode_numeric(&out).unwrap();
            assert_eq!(back, d, "{s}");
            assert_eq!(back.scale(), d.scale(), "{s}");
        }
    }

    #[test]
    fn arrays_round_trip_through_binary() {
        let ty = DataType::array_of(DataType::Integer).unwrap();
        for items in [vec![], vec![Value::Integer(1), Value::Null, Value::Integer(-7)]] {
            let v = Value::Array(items);
            let mut out = BytesMut::new();
            encode_binary(&v, Some(&ty), &mut out);
            assert_eq!(decode_binary(&out, &ty).unwrap(), v);
            // Every truncation is an error, never a panic.
            for cut in 0..out.len() {
                assert!(decode_binary(&out[..cut], &ty).is_err(), "{cut}");
            }
        }
        // PostgreSQL's own bytes for '{1,NULL}'::int4[].
        let pg = [
            0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 23, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1, 255, 255,
            255, 255,
        ];
        let mut out = BytesMut::new();
        encode_binary(&Value::Array(vec![Value::Integer(1), Value::Null]), Some(&ty), &mut out);
        assert_eq!(&out[..], &pg[..]);
        assert_eq!(oid_type(1009), Some(DataType::array_of(DataType::Text).unwrap()));
        assert!(decode_binary(&[0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 23], &ty).is_err());
    }

    #[test]
    fn known_numeric_encoding() {
        // 123456.789: digits 12 3456 7890, weight 1, dscale 3.
        let mut out = BytesMut::new();
        encode_numeric(Decimal::from_str("123456.789").unwrap(), &mut out);
        assert_eq!(&out[..], &[0, 3, 0, 1, 0, 0, 0, 3, 0, 12, 0x0d, 0x80, 0x1e, 0xd2]);
    }

    #[test]
    fn integers_take_the_column_width() {
        let mut out = BytesMut::new();
        encode_binary(&Value::Integer(7), Some(&DataType::BigInt), &mut out);
        assert_eq!(&out[..], &7i64.to_be_bytes());
        assert_eq!(decode_binary(&7i32.to_be_bytes(), &DataType::BigInt).unwrap().to_string(), "7");
        assert!(decode_binary(&[1, 2, 3], &DataType::Integer).is_err());
        assert!(decode_binary(&(1i64 << 40).to_be_bytes(), &DataType::Integer).is_err());
    }
}
