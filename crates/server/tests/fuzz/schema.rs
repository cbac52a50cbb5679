//! A random schema: tables of every column type Centum has, primary keys
//! that are hash indexes (`WITH (bucket_count = n)`) or range indexes,
//! secondary hash and range indexes, NOT NULL, DEFAULT, CHECK, UNIQUE,
//! identity columns and foreign keys between the tables.
//!
//! The generator keeps this model of what it created and draws columns
//! from it; it never looks at what the database answered, so a case is the
//! same text on every replay (a CREATE that failed leaves a table the
//! statements still name, which is one more error path to exercise).

use super::rng::Rng;
use super::values;

/// The column types the generator knows, one per `centum_types::DataType`
/// family.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ty {
    Int2,
    Int4,
    Int8,
    Numeric,
    Double,
    Text,
    Bool,
    Date,
    Ts,
    TsTz,
    Uuid,
    Bytea,
    IntArray,
    TextArray,
}

impl Ty {
    /// Every type.
    pub const ALL: [Ty; 14] = [
        Ty::Int2,
        Ty::Int4,
        Ty::Int8,
        Ty::Numeric,
        Ty::Double,
        Ty::Text,
        Ty::Bool,
        Ty::Date,
        Ty::Ts,
        Ty::TsTz,
        Ty::Uuid,
        Ty::Bytea,
        Ty::IntArray,
        Ty::TextArray,
    ];

    /// The name written in a cast.
    pub fn sql(self) -> &'static str {
        match self {
            Ty::Int2 => "smallint",
            Ty::Int4 => "integer",
            Ty::Int8 => "bigint",
            Ty::Numeric => "numeric",
            Ty::Double => "double precision",
            Ty::Text => "text",
            Ty::Bool => "boolean",
            Ty::Date => "date",
            Ty::Ts => "timestamp",
            Ty::TsTz => "timestamptz",
            Ty::Uuid => "uuid",
            Ty::Bytea => "bytea",
            Ty::IntArray => "integer[]",
            Ty::TextArray => "text[]",
        }
    }

    /// A spelling of the type in a column definition or a cast, with
    /// modifiers and aliases, up to `char(10485760)`.
    pub fn declared(self, rng: &mut Rng) -> String {
        let options: &[&str] = match self {
            Ty::Int2 => &["smallint", "int2"],
            Ty::Int4 => &["int", "integer", "int4"],
            Ty::Int8 => &["bigint", "int8"],
            Ty::Numeric => {
                &["numeric", "decimal", "numeric(P,S)", "numeric(P)", "numeric(28,28)", "numeric(1,0)"]
            }
            Ty::Double => &["double precision", "float8", "real", "float4", "float"],
            Ty::Text => &["text", "varchar", "varchar(N)", "character varying(N)", "char(N)", "char"],
            Ty::Bool => &["boolean", "bool"],
            Ty::Date => &["date"],
            Ty::Ts => &["timestamp", "timestamp without time zone"],
            Ty::TsTz => &["timestamptz", "timestamp with time zone"],
            Ty::Uuid => &["uuid"],
            Ty::Bytea => &["bytea"],
            Ty::IntArray => &["int[]", "integer[]", "int4[]", "bigint[]", "smallint[]", "numeric(P,S)[]"],
            Ty::TextArray => &["text[]", "varchar(N)[]", "char(N)[]"],
        };
        let p = rng.range(1, 28);
        let s = rng.range(0, p);
        let n = *rng.pick(&[1, 2, 5, 16, 255, 10_485_760]);
        let spelling = *rng.pick(options);
        spelling.replace('P', &p.to_string()).replace('S', &s.to_string()).replace('N', &n.to_string())
    }

    /// Integer types.
    pub fn is_integer(self) -> bool {
        matches!(self, Ty::Int2 | Ty::Int4 | Ty::Int8)
    }

    /// Number types.
    pub fn is_number(self) -> bool {
        self.is_integer() || matches!(self, Ty::Numeric | Ty::Double)
    }
}

/// A column of a generated table.
#[derive(Clone, Debug)]
pub struct Column {
    /// Its name as written in SQL (quoted where it needs to be).
    pub name: String,
    /// Its type family.
    pub ty: Ty,
}

/// A generated table.
#[derive(Clone, Debug)]
pub struct Table {
    /// Its name.
    pub name: String,
    /// Its columns.
    pub columns: Vec<Column>,
    /// The positions of its primary key's columns (empty: none).
    pub key: Vec<usize>,
}

/// The tables of one case.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    /// The tables, in creation order (a foreign key refers to an earlier
    /// one).
    pub tables: Vec<Table>,
    /// How many indexes the statements have created (for fresh names).
    pub indexes: usize,
}

/// Column names beyond `cN`: keywords, mixed case, spaces, quotes and
/// non-ASCII letters, all quoted.
const ODD_NAMES: &[&str] = &["\"select\"", "\"Mixed Case\"", "\"ü名\"", "\"a\"\"b\"", "\"order\"", "\"🦀\""];

/// Generates the tables and their indexes; returns the model and the DDL.
pub fn generate(rng: &mut Rng) -> (Schema, Vec<String>) {
    let mut schema = Schema::default();
    let mut ddl = Vec::new();
    for t in 0..1 + rng.below(4) {
        let table = table(rng, t);
        ddl.push(create_table(rng, &schema, &table));
        schema.tables.push(table);
        for _ in 0..rng.below(3) {
            ddl.push(create_index(rng, &mut schema, t));
        }
    }
    (schema, ddl)
}

/// A table's columns and key.
fn table(rng: &mut Rng, t: usize) -> Table {
    let n = 1 + rng.below(8);
    let columns: Vec<Column> = (0..n)
        .map(|i| {
            let name = if rng.chance(0.05) { rng.pick(ODD_NAMES).to_string() } else { format!("c{i}") };
            let name = if name.starts_with('"') && name.len() > 2 {
                format!("{}{i}\"", &name[..name.len() - 1])
            } else {
                name
            };
            Column { name, ty: *rng.pick(&Ty::ALL) }
        })
        .collect();
    let key = if rng.chance(0.8) {
        let mut key = vec![rng.below(n)];
        if n > 1 && rng.chance(0.3) {
            let second = rng.below(n);
            if second != key[0] {
                key.push(second);
            }
        }
        key
    } else {
        vec![]
    };
    Table { name: format!("t{t}"), columns, key }
}

/// A hash index size: small and ordinary sizes, sizes out of range, and
/// the largest allowed, 2^30 buckets: 8 GiB, which the server's memory
/// limit refuses.
pub fn bucket_count(rng: &mut Rng) -> String {
    if rng.chance(0.05) {
        return rng
            .pick(&["0", "-1", "1073741825", "4294967296", "1099511627776", "99999999999999999999"])
            .to_string();
    }
    if rng.chance(0.05) {
        return "1073741824".to_string();
    }
    rng.pick(&["1", "2", "3", "8", "100", "1024", "65536"]).to_string()
}

/// `CREATE TABLE` for `table`, with constraints, defaults and options.
fn create_table(rng: &mut Rng, schema: &Schema, table: &Table) -> String {
    let mut items = Vec::new();
    let inline_key = table.key.len() == 1 && rng.chance(0.5);
    for (i, c) in table.columns.iter().enumerate() {
        let mut def = format!("{} {}", c.name, c.ty.declared(rng));
        if c.ty.is_integer() && rng.chance(0.08) {
            let identity = *rng.pick(&[" GENERATED ALWAYS AS IDENTITY", " GENERATED BY DEFAULT AS IDENTITY"]);
            def.push_str(identity);
        } else if rng.chance(0.15) {
            def.push_str(&format!(" DEFAULT {}", values::literal(rng, c.ty)));
        }
        if rng.chance(0.2) {
            def.push_str(" NOT NULL");
        }
        if inline_key && table.key[0] == i {
            def.push_str(" PRIMARY KEY");
        } else if rng.chance(0.05) {
            def.push_str(" UNIQUE");
        }
        if rng.chance(0.1) {
            def.push_str(&format!(
                " CHECK ({} IS NULL OR {} <> {})",
                c.name,
                c.name,
                values::literal(rng, c.ty)
            ));
        }
        if rng.chance(0.1) {
            if let Some(parent) = schema
                .tables
                .iter()
                .find(|p| p.key.len() == 1 && p.columns[p.key[0]].ty == c.ty && rng.chance(0.5))
            {
                def.push_str(&format!(" REFERENCES {}", parent.name));
                let action =
                    *rng.pick(&["", " ON DELETE CASCADE", " ON DELETE SET NULL", " ON UPDATE CASCADE"]);
                def.push_str(action);
            }
        }
        items.push(def);
    }
    if !table.key.is_empty() && !inline_key {
        let cols: Vec<&str> = table.key.iter().map(|&i| table.columns[i].name.as_str()).collect();
        items.push(format!("PRIMARY KEY ({})", cols.join(", ")));
    }
    let unlogged = if rng.chance(0.1) { "UNLOGGED " } else { "" };
    let mut options = Vec::new();
    if rng.chance(0.4) {
        options.push(format!("bucket_count = {}", bucket_count(rng)));
    }
    if rng.chance(0.1) {
        options.push("durability = schema_only".to_string());
    }
    if rng.chance(0.05) {
        options.push("memory_optimized = on".to_string());
    }
    let with = if options.is_empty() { String::new() } else { format!(" WITH ({})", options.join(", ")) };
    format!("CREATE {unlogged}TABLE {} ({}){with}", table.name, items.join(", "))
}

/// `CREATE INDEX` on table `t`: hash with a bucket count, or range, over
/// one to three columns.
pub fn create_index(rng: &mut Rng, schema: &mut Schema, t: usize) -> String {
    let table = &schema.tables[t];
    let n = 1 + rng.below(table.columns.len().min(3));
    let cols: Vec<String> = (0..n).map(|_| rng.pick(&table.columns).name.clone()).collect();
    let name = format!("ix{}", schema.indexes);
    schema.indexes += 1;
    let unique = if rng.chance(0.2) { "UNIQUE " } else { "" };
    match rng.below(3) {
        0 => format!(
            "CREATE {unique}INDEX {name} ON {} USING hash ({}) WITH (bucket_count = {})",
            table.name,
            cols.join(", "),
            bucket_count(rng)
        ),
        1 => format!("CREATE {unique}INDEX {name} ON {} USING hash ({})", table.name, cols.join(", ")),
        _ => {
            let cols: Vec<String> = cols
                .into_iter()
                .map(|c| format!("{c}{}", rng.pick(&["", " DESC", " ASC NULLS FIRST"])))
                .collect();
            let using = if rng.chance(0.5) { " USING btree" } else { "" };
            format!("CREATE {unique}INDEX {name} ON {}{using} ({})", table.name, cols.join(", "))
        }
    }
}
