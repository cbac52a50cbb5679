//! Table and index definitions as the engine's API takes them.

use centum_types::DataType;

/// What survives a restart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// Definition and rows are durable (the default).
    #[default]
    SchemaAndData,
    /// Only the definition survives; rows are never logged, so they are
    /// never in the change feed either (see `crate::feed`).
    SchemaOnly,
}

/// A column.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Its type.
    pub ty: DataType,
    /// Whether NULL is allowed.
    pub nullable: bool,
}

/// The kind of an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    /// A hash index with a fixed number of buckets (rounded up to a power
    /// of two). Serves equality on every key column.
    Hash {
        /// Bucket count; about the number of distinct keys expected.
        buckets: u64,
    },
    /// A range index (a latch-free B+tree). Serves equality on leading key
    /// columns, ranges on the next one, and ordered scans both ways.
    Range,
}

/// An index definition.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexDef {
    /// Index name, unique within the database.
    pub name: String,
    /// Key column names, in key order.
    pub columns: Vec<String>,
    /// Whether two live rows may not share a key.
    pub unique: bool,
    /// Hash or range.
    pub kind: IndexKind,
    /// Per key column, whether it is descending (range indexes; a missing
    /// entry means ascending).
    pub descending: Vec<bool>,
}

impl IndexDef {
    /// A hash index on `columns` with `buckets` buckets.
    pub fn hash(name: &str, columns: &[&str], buckets: u64) -> IndexDef {
        IndexDef {
            name: name.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            unique: false,
            kind: IndexKind::Hash { buckets },
            descending: vec![],
        }
    }

    /// A range index on `columns`, all ascending.
    pub fn range(name: &str, columns: &[&str]) -> IndexDef {
        IndexDef {
            name: name.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            unique: false,
            kind: IndexKind::Range,
            descending: vec![],
        }
    }

    /// The same index with the key columns' directions: `desc[i]` makes
    /// column `i` descending.
    pub fn descending(mut self, desc: &[bool]) -> IndexDef {
        self.descending = desc.to_vec();
        self
    }

    /// The same index, unique.
    pub fn unique(mut self) -> IndexDef {
        self.unique = true;
        self
    }
}

/// A table definition.
#[derive(Clone, Debug, PartialEq)]
pub struct TableDef {
    /// Table name, unique within the database.
    pub name: String,
    /// Columns in order.
    pub columns: Vec<Column>,
    /// Indexes created with the table.
    pub indexes: Vec<IndexDef>,
    /// What survives a restart.
    pub durability: Durability,
    /// Opaque bytes owned by the layer above the engine (for instance a SQL
    /// layer's column defaults and constraints), stored with the definition
    /// and given back unchanged after a restart; the engine never reads
    /// them. Empty by default.
    pub extra: Vec<u8>,
}

impl TableDef {
    /// A table with no columns yet.
    pub fn new(name: &str) -> TableDef {
        TableDef {
            name: name.into(),
            columns: vec![],
            indexes: vec![],
            durability: Durability::default(),
            extra: vec![],
        }
    }

    /// Adds a nullable column.
    pub fn column(mut self, name: &str, ty: DataType) -> TableDef {
        self.columns.push(Column { name: name.into(), ty, nullable: true });
        self
    }

    /// Adds a NOT NULL column.
    pub fn column_not_null(mut self, name: &str, ty: DataType) -> TableDef {
        self.columns.push(Column { name: name.into(), ty, nullable: false });
        self
    }

    /// Adds an index.
    pub fn index(mut self, index: IndexDef) -> TableDef {
        self.indexes.push(index);
        self
    }

    /// Sets the durability.
    pub fn durability(mut self, d: Durability) -> TableDef {
        self.durability = d;
        self
    }

    /// Sets the opaque bytes kept with the definition (the `extra` field).
    pub fn extra(mut self, bytes: Vec<u8>) -> TableDef {
        self.extra = bytes;
        self
    }
}
