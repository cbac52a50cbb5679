//! Rows in memory: the version header with its begin/end fields and index
//! links (`version`), the encoding of column values inside it
//! (`layout`), and the order-preserving key encoding of range indexes
//! (`sortkey`).

pub(crate) mod layout;
pub(crate) mod sortkey;
pub(crate) mod version;

pub use layout::{KeyDef, RowLayout};
pub use sortkey::{KeyRange, SortKeyDef};
