//! The catalog image: every table definition, encoded as bytes for the log
//! and the checkpoint manifest.
//!
//! Each schema change writes the whole catalog, not a difference: catalogs
//! are small, a whole image needs no ordering with earlier ones, and
//! recovery keeps only the newest. Rows in the log and in checkpoint files
//! name their table by id, so the image records each table's id and the
//! next id to hand out (ids are never reused, so rows of a dropped table can
//! never be taken for another table's).
//!
//! ```text
//!  image   := "CCAT" u16 version(=1) u64 next_table_id u32 n table*n
//!  table   := u64 id str name u8 durability(0 data, 1 schema only)
//!             u32 n column*n u32 m index*m
//!  column  := str name type u8 nullable
//!  type    := u8 tag [modifiers]   (tags and modifiers in `put_type`)
//!  index   := str name u8 unique u8 kind(0 hash, 1 range) [u64 buckets]
//!             u32 k str*k (key columns) u32 d u8*d (descending flags)
//!  str     := u32 length, UTF-8 bytes
//! ```
//!
//! Integers are little-endian. The image sits inside a CRC-checked log
//! record or manifest, so damage is caught there; decoding still checks
//! every length and tag and refuses anything it did not write.

use crate::schema::{Column, Durability, IndexDef, IndexKind, TableDef};
use centum_types::DataType;

const MAGIC: &[u8; 4] = b"CCAT";
const VERSION: u16 = 1;

/// A table as the catalog image records it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TableImage {
    pub(crate) id: u64,
    pub(crate) def: TableDef,
}

/// The decoded catalog.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CatalogImage {
    pub(crate) next_table_id: u64,
    pub(crate) tables: Vec<TableImage>,
}

/// Encodes `image`.
pub(crate) fn encode(image: &CatalogImage) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&image.next_table_id.to_le_bytes());
    put_u32(&mut out, image.tables.len());
    for t in &image.tables {
        out.extend_from_slice(&t.id.to_le_bytes());
        put_str(&mut out, &t.def.name);
        out.push(match t.def.durability {
            Durability::SchemaAndData => 0,
            Durability::SchemaOnly => 1,
        });
        put_u32(&mut out, t.def.columns.len());
        for c in &t.def.columns {
            put_str(&mut out, &c.name);
            put_type(&mut out, &c.ty);
            out.push(c.nullable as u8);
        }
        put_u32(&mut out, t.def.indexes.len());
        for ix in &t.def.indexes {
            put_str(&mut out, &ix.name);
            out.push(ix.unique as u8);
            match ix.kind {
                IndexKind::Hash { buckets } => {
                    out.push(0);
                    out.extend_from_slice(&buckets.to_le_bytes());
                }
                IndexKind::Range => out.push(1),
            }
            put_u32(&mut out, ix.columns.len());
            for c in &ix.columns {
                put_str(&mut out, c);
            }
            put_u32(&mut out, ix.descending.len());
            out.extend(ix.descending.iter().map(|&d| d as u8));
        }
    }
    out
}

/// Decodes an image written by [`encode`]; the error says what is wrong.
pub(crate) fn decode(bytes: &[u8]) -> Result<CatalogImage, String> {
    let mut r = Reader { buf: bytes, at: 0 };
    if r.take(4)? != MAGIC {
        return Err("not a catalog image".into());
    }
    let version = u16::from_le_bytes(r.array()?);
    if version != VERSION {
        return Err(format!("catalog image version {version}, this build reads {VERSION}"));
    }
    let next_table_id = r.u64()?;
    let mut tables = Vec::new();
    for _ in 0..r.count()? {
        let id = r.u64()?;
        let name = r.str()?;
        let durability = match r.u8()? {
            0 => Durability::SchemaAndData,
            1 => Durability::SchemaOnly,
            d => return Err(format!("table \"{name}\": unknown durability {d}")),
        };
        let mut columns = Vec::new();
        for _ in 0..r.count()? {
            let name = r.str()?;
            let ty = r.data_type()?;
            let nullable = r.bool()?;
            columns.push(Column { name, ty, nullable });
        }
        let mut indexes = Vec::new();
        for _ in 0..r.count()? {
            let name = r.str()?;
            let unique = r.bool()?;
            let kind = match r.u8()? {
                0 => IndexKind::Hash { buckets: r.u64()? },
                1 => IndexKind::Range,
                k => return Err(format!("index \"{name}\": unknown kind {k}")),
            };
            let columns = (0..r.count()?).map(|_| r.str()).collect::<Result<Vec<_>, _>>()?;
            let descending = (0..r.count()?).map(|_| r.bool()).collect::<Result<Vec<_>, _>>()?;
            indexes.push(IndexDef { name, columns, unique, kind, descending });
        }
        if id >= next_table_id {
            return Err(format!("table \"{name}\" has id {id}, not below the next id {next_table_id}"));
        }
        tables.push(TableImage { id, def: TableDef { name, columns, indexes, durability } });
    }
    if r.at != bytes.len() {
        return Err(format!("{} bytes after the last table", bytes.len() - r.at));
    }
    Ok(CatalogImage { next_table_id, tables })
}

fn put_u32(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

/// Type tags. Numeric: precision and scale bytes, 0xFF for "none".
/// Varchar: a presence byte and a u32 length. Char: a u32 length.
fn put_type(out: &mut Vec<u8>, ty: &DataType) {
    match ty {
        DataType::Boolean => out.push(1),
        DataType::SmallInt => out.push(2),
        DataType::Integer => out.push(3),
        DataType::BigInt => out.push(4),
        DataType::Double => out.push(5),
        DataType::Numeric { precision, scale } => {
            out.push(6);
            out.push(precision.unwrap_or(0xFF));
            out.push(scale.unwrap_or(0xFF));
        }
        DataType::Varchar(n) => {
            out.push(7);
            out.push(n.is_some() as u8);
            out.extend_from_slice(&n.unwrap_or(0).to_le_bytes());
        }
        DataType::Char(n) => {
            out.push(8);
            out.extend_from_slice(&n.to_le_bytes());
        }
        DataType::Text => out.push(9),
        DataType::Bytea => out.push(10),
        DataType::Date => out.push(11),
        DataType::Timestamp => out.push(12),
        DataType::TimestampTz => out.push(13),
        DataType::Uuid => out.push(14),
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or_else(|| format!("catalog image ends early at byte {}", self.at))?;
        let s = &self.buf[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn bool(&mut self) -> Result<bool, String> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(format!("byte {b} at {} is not a boolean", self.at - 1)),
        }
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A count of items that each take at least one byte: never more than
    /// the bytes left, so a damaged count cannot make decoding allocate.
    fn count(&mut self) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n > self.buf.len() - self.at {
            return Err(format!("count {n} at byte {} exceeds the image", self.at - 4));
        }
        Ok(n)
    }

    fn str(&mut self) -> Result<String, String> {
        let n = self.u32()? as usize;
        let at = self.at;
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| format!("name at byte {at} is not UTF-8"))
    }

    fn data_type(&mut self) -> Result<DataType, String> {
        let at = self.at;
        let bad = |e: centum_types::TypeError| format!("type at byte {at}: {e}");
        Ok(match self.u8()? {
            1 => DataType::Boolean,
            2 => DataType::SmallInt,
            3 => DataType::Integer,
            4 => DataType::BigInt,
            5 => DataType::Double,
            6 => {
                let p = self.u8()?;
                let s = self.u8()?;
                let opt = |b: u8| (b != 0xFF).then_some(b as u32);
                DataType::numeric(opt(p), opt(s)).map_err(bad)?
            }
            7 => {
                let has = self.bool()?;
                let n = self.u32()?;
                DataType::varchar(has.then_some(n)).map_err(bad)?
            }
            8 => DataType::bpchar(Some(self.u32()?)).map_err(bad)?,
            9 => DataType::Text,
            10 => DataType::Bytea,
            11 => DataType::Date,
            12 => DataType::Timestamp,
            13 => DataType::TimestampTz,
            14 => DataType::Uuid,
            t => return Err(format!("unknown type tag {t} at byte {at}")),
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn sample() -> CatalogImage {
        let t = TableDef::new("orders")
            .column_not_null("id", DataType::BigInt)
            .column("note", DataType::varchar(Some(40)).unwrap())
            .column("free", DataType::Varchar(None))
            .column("code", DataType::bpchar(Some(3)).unwrap())
            .column("amount", DataType::numeric(Some(12), Some(2)).unwrap())
            .column("any", DataType::numeric(None, None).unwrap())
            .column("at", DataType::TimestampTz)
            .column("u", DataType::Uuid)
            .index(IndexDef::hash("orders_pkey", &["id"], 1 << 20).unique())
            .index(IndexDef::range("orders_at", &["at", "id"]).descending(&[true, false]));
        let s = TableDef::new("cache").column("k", DataType::Text).durability(Durability::SchemaOnly);
        CatalogImage {
            next_table_id: 9,
            tables: vec![TableImage { id: 3, def: t }, TableImage { id: 8, def: s }],
        }
    }

    #[test]
    fn round_trips() {
        let img = sample();
        assert_eq!(decode(&encode(&img)).unwrap(), img);
    }

    #[test]
    fn refuses_every_truncation_and_trailing_bytes() {
        let bytes = encode(&sample());
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n]).is_err(), "a {n}-byte prefix decoded");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(decode(&long).is_err());
    }

    #[test]
    fn damaged_bytes_never_panic() {
        let bytes = encode(&sample());
        for i in 0..bytes.len() {
            for flip in [1u8, 0x80, 0xFF] {
                let mut b = bytes.clone();
                b[i] ^= flip;
                let _ = decode(&b);
            }
        }
    }
}
