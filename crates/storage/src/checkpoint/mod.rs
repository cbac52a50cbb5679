//! Continuous checkpoints into data/delta file pairs.
//!
//! The checkpoint worker reads the durable log stream (each batch after
//! its fdatasync) and never scans the engine: inserted row images are
//! appended to the current pair's data file, deleted identities to the
//! delta file of every pair whose timestamp range holds the deleted
//! version's creation timestamp. A checkpoint closes the current pair,
//! syncs what was appended, optionally merges sparse pairs, and writes a
//! manifest naming the valid pairs, the catalog and the log position from
//! which recovery replays; then removes what no manifest needs any more.
//!
//! * [`pair`]: data and delta file formats, file states;
//! * [`manifest`]: the manifest format and its atomic replacement;
//! * `merge`: which pairs to merge;
//! * `worker`: the thread that does all of it.

pub mod manifest;
pub(crate) mod merge;
pub mod pair;
pub(crate) mod worker;

pub use manifest::Manifest;
pub use pair::{FileInfo, FileKind, FileState, PairMeta};
pub use worker::{CheckpointOptions, CheckpointReport, CheckpointStats};
