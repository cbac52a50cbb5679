//! Rows in memory: the version header with its begin/end fields and index
//! links (`version`), and the encoding of column values inside it
//! (`layout`).

pub(crate) mod layout;
pub(crate) mod version;

pub use layout::{KeyDef, RowLayout};
