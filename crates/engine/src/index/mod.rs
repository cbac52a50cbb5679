//! Indexes: the lock-free chains that run through row versions
//! (`chain`) and the hash index built on them (`hash`).

pub(crate) mod chain;
pub(crate) mod hash;

pub use hash::{HashIndex, IndexStats};
