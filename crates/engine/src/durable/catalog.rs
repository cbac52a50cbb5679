//! The catalog image: every table definition, encoded as bytes for the log
//! and the checkpoint manifest.
//!
//! Besides what the engine needs, each table carries opaque `extra` bytes,
//! and the image one more database-wide blob: the layer above (SQL) keeps
//! its own metadata there (defaults, constraints, sequences), so that it
//! changes atomically with the engine's DDL. The engine never reads them.
//!
//! Each schema change writes the whole catalog, not a difference: catalogs
//! are small, a whole image needs no ordering with earlier ones, and
//! recovery keeps only the newest. Rows in the log and in checkpoint files
//! name their table by id, so the image records each table's id and the
//! next id to hand out (ids are never reused, so rows of a dropped table can
//! never be taken for another table's).
//!
//! ```text
//!  image   := "CCAT" u16 version(=2) u64 next_table_id u32 n table*n
//!             bytes db_extra
//!  table   := u64 id str name u8 durability(0 data, 1 schema only)
//!             u32 n column*n u32 m index*m bytes extra
//!  column  := str name type u8 nullable
//!  type    := u8 tag [modifiers]   (tags and modifiers in `put_type`)
//!  index   := str name u8 unique u8 kind(0 hash, 1 range) [u64 buckets]
//!             u32 k str*k (key columns) u32 d u8*d (descending flags)
//!  str     := u32 length, UTF-8 bytes
//!  bytes   := u32 length, bytes
//! ```
//!
//! Version 1 images (written before the extra bytes existed) have neither
//! `extra` nor `db_extra`; they still decode, with both empty.
//!
//! Integers are little-endian. The image sits inside a CRC-checked log
//! record or manifest, so damage is caught there; decoding still checks
//! every length and tag and refuses anything it did not write.

use crate::schema::{Column, Durability, IndexDef, IndexKind, TableDef};
use centum_types::DataType;

const MAGIC: &[u8; 4] = b"CCAT";
const VERSION: u16 = 2;
/// The oldest version this build still reads.
const OLDEST_VERSION: u16 = 1;

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
    /// The database-wide opaque bytes of the layer above.
    pub(crate) extra: Vec<u8>,
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
        put_bytes(&mut out, &t.def.extra);
    }
    put_bytes(&mut out, &image.extra);
    out
}

/// Decodes an image written by [`encode`]; the error says what is wrong.
pub(crate) fn decode(bytes: &[u8]) -> Result<CatalogImage, String> {
    let mut r = Reader { buf: bytes, at: 0 };
    if r.take(4)? != MAGIC {
        return Err("not a catalog image".into());
    }
    let version = u16::from_le_bytes(r.array()?);
    if !(OLDEST_VERSION..=VERSION).contains(&version) {
        return Err(format!(
            "catalog image version {version}, this build reads versions {OLDEST_VERSION} to {VERSION}"
        ));
    }
    let with_extra = version >= 2;
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
        let extra = if with_extra { r.bytes()? } else { Vec::new() };
        if id >= next_table_id {
            return Err(format!("table \"{name}\" has id {id}, not below the next id {next_table_id}"));
        }
        tables.push(TableImage { id, def: TableDef { name, columns, indexes, durability, extra } });
    }
    let extra = if with_extra { r.bytes()? } else { Vec::new() };
    if r.at != bytes.len() {
        return Err(format!("{} bytes after the end of the image", bytes.len() - r.at));
    }
    Ok(CatalogImage { next_table_id, tables, extra })
}

fn put_u32(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_bytes(out, s.as_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u32(out, b.len());
    out.extend_from_slice(b);
}

/// Type tags. Numeric: precision and scale bytes, 0xFF for "none".
/// Varchar: a presence byte and a u32 length. Char: a u32 length.
/// Array: the element's type after the tag. Enum (20): the type's OID
/// (u32) and name (u32 length and UTF-8). Composite (26): the type's OID,
/// name, a u32 field count and per field its name and type (a field is
/// never itself composite).
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
        DataType::Interval => out.push(16),
        DataType::Time => out.push(17),
        DataType::Json => out.push(18),
        DataType::Jsonb => out.push(19),
        DataType::TsVector => out.push(21),
        DataType::TsQuery => out.push(22),
        DataType::Oid => out.push(23),
        DataType::Int2Vector => out.push(24),
        DataType::OidVector => out.push(25),
        DataType::Array(elem) => {
            out.push(15);
            put_type(out, elem);
        }
        // The labels are the SQL catalog's; a stored value carries its own.
        DataType::Enum(t) => {
            out.push(20);
            out.extend_from_slice(&t.oid().to_le_bytes());
            put_str(out, t.name());
        }
        DataType::Composite(t) => {
            out.push(26);
            out.extend_from_slice(&t.oid().to_le_bytes());
            put_str(out, t.name());
            put_u32(out, t.fields().len());
            for (name, ty) in t.fields() {
                put_str(out, name);
                put_type(out, ty);
            }
        }
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

    fn bytes(&mut self) -> Result<Vec<u8>, String> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
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
            16 => DataType::Interval,
            17 => DataType::Time,
            18 => DataType::Json,
            19 => DataType::Jsonb,
            20 => {
                let oid = self.u32()?;
                let name = self.str()?;
                DataType::Enum(centum_types::EnumType::new(centum_types::enums::EnumDef {
                    oid,
                    name,
                    labels: Vec::new(),
                }))
            }
            26 => {
                let oid = self.u32()?;
                let name = self.str()?;
                let n = self.u32()? as usize;
                let mut fields = Vec::with_capacity(n.min(1600));
                for _ in 0..n {
                    let field = self.str()?;
                    // Fields are never composite: damaged bytes must not
                    // recurse deeply.
                    if self.buf.get(self.at) == Some(&26) {
                        return Err(format!("composite field of composite type at byte {}", self.at));
                    }
                    fields.push((field, self.data_type()?));
                }
                DataType::Composite(centum_types::CompositeType::new(centum_types::composite::CompositeDef {
                    oid,
                    name,
                    fields,
                }))
            }
            21 => DataType::TsVector,
            22 => DataType::TsQuery,
            23 => DataType::Oid,
            24 => DataType::Int2Vector,
            25 => DataType::OidVector,
            // One level only: damaged bytes must not recurse deeply.
            15 if self.buf.get(self.at) == Some(&15) => return Err(format!("array of arrays at byte {at}")),
            15 => DataType::array_of(self.data_type()?).map_err(bad)?,
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
            .column("span", DataType::Interval)
            .column("opens", DataType::array_of(DataType::Time).unwrap())
            .index(IndexDef::hash("orders_pkey", &["id"], 1 << 20).unique())
            .index(IndexDef::range("orders_at", &["at", "id"]).descending(&[true, false]))
            .extra(vec![1, 0, 0xFF, 7]);
        let s = TableDef::new("cache").column("k", DataType::Text).durability(Durability::SchemaOnly);
        CatalogImage {
            next_table_id: 9,
            tables: vec![TableImage { id: 3, def: t }, TableImage { id: 8, def: s }],
            extra: b"sequences and schemas".to_vec(),
        }
    }

    #[test]
    fn round_trips() {
        let img = sample();
        assert_eq!(decode(&encode(&img)).unwrap(), img);
        let empty = CatalogImage { next_table_id: 1, tables: vec![], extra: vec![] };
        assert_eq!(decode(&encode(&empty)).unwrap(), empty);
    }

    #[test]
    fn extras_sit_where_the_format_says() {
        let img = CatalogImage {
            next_table_id: 2,
            tables: vec![TableImage { id: 1, def: TableDef::new("t").extra(vec![0xAB, 0xCD]) }],
            extra: vec![0xEF],
        };
        let mut want = b"CCAT".to_vec();
        want.extend_from_slice(&2u16.to_le_bytes());
        want.extend_from_slice(&2u64.to_le_bytes());
        want.extend_from_slice(&1u32.to_le_bytes());
        want.extend_from_slice(&1u64.to_le_bytes());
        want.extend_from_slice(&1u32.to_le_bytes());
        want.extend_from_slice(b"t");
        want.push(0);
        want.extend_from_slice(&0u32.to_le_bytes()); // columns
        want.extend_from_slice(&0u32.to_le_bytes()); // indexes
        want.extend_from_slice(&2u32.to_le_bytes());
        want.extend_from_slice(&[0xAB, 0xCD]);
        want.extend_from_slice(&1u32.to_le_bytes());
        want.push(0xEF);
        assert_eq!(encode(&img), want);
    }

    /// A version 1 image, built by hand: no extra bytes anywhere.
    fn v1_image() -> Vec<u8> {
        let mut b = b"CCAT".to_vec();
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&5u64.to_le_bytes()); // next table id
        b.extend_from_slice(&1u32.to_le_bytes()); // one table
        b.extend_from_slice(&4u64.to_le_bytes()); // id
        b.extend_from_slice(&8u32.to_le_bytes());
        b.extend_from_slice(b"accounts");
        b.push(0); // SCHEMA_AND_DATA
        b.extend_from_slice(&2u32.to_le_bytes()); // two columns
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(b"id");
        b.push(4); // bigint
        b.push(0); // NOT NULL
        b.extend_from_slice(&4u32.to_le_bytes());
        b.extend_from_slice(b"name");
        b.extend_from_slice(&[7, 1]); // varchar(20)
        b.extend_from_slice(&20u32.to_le_bytes());
        b.push(1); // nullable
        b.extend_from_slice(&1u32.to_le_bytes()); // one index
        b.extend_from_slice(&13u32.to_le_bytes());
        b.extend_from_slice(b"accounts_pkey");
        b.push(1); // unique
        b.push(0); // hash
        b.extend_from_slice(&1024u64.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(b"id");
        b.extend_from_slice(&0u32.to_le_bytes()); // no descending flags
        b
    }

    #[test]
    fn reads_version_1_images_with_empty_extras() {
        let img = decode(&v1_image()).unwrap();
        let want = CatalogImage {
            next_table_id: 5,
            tables: vec![TableImage {
                id: 4,
                def: TableDef::new("accounts")
                    .column_not_null("id", DataType::BigInt)
                    .column("name", DataType::varchar(Some(20)).unwrap())
                    .index(IndexDef::hash("accounts_pkey", &["id"], 1024).unique()),
            }],
            extra: vec![],
        };
        assert_eq!(img, want);
        // Written again, it is a version 2 image with the same content.
        let again = encode(&img);
        assert_eq!(&again[4..6], &2u16.to_le_bytes());
        assert_eq!(decode(&again).unwrap(), want);
    }

    #[test]
    fn version_1_images_refuse_truncation_and_trailing_bytes() {
        let bytes = v1_image();
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n]).is_err(), "a {n}-byte prefix decoded");
        }
        let mut long = bytes.clone();
        long.extend_from_slice(&0u32.to_le_bytes()); // a v2 db_extra in a v1 image
        assert!(decode(&long).is_err());
    }

    #[test]
    fn refuses_unknown_versions() {
        for v in [0u16, 3, 0xFFFF] {
            let mut bytes = encode(&sample());
            bytes[4..6].copy_from_slice(&v.to_le_bytes());
            let err = decode(&bytes).unwrap_err();
            assert_eq!(err, format!("catalog image version {v}, this build reads versions 1 to 2"));
        }
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
