//! Centum's durability: a redo log with group commit, continuous
//! checkpoints into data/delta file pairs, merging, and parallel recovery,
//! after SQL Server's In-Memory OLTP ("Hekaton").
//!
//! ```text
//!  commit ─▶ log (one record per transaction, group commit, fdatasync)
//!              │ each synced batch, in log order
//!              ▼
//!            checkpoint worker ─▶ data files (inserted row images)
//!                                 delta files (deleted row identities)
//!                                 manifest (valid pairs, catalog, replay position)
//!  restart ─▶ recovery: manifest ─▶ log tail ─▶ data files in parallel ─▶ engine
//! ```
//!
//! Only what is needed to redo is written: row images and row identities,
//! no undo, no index entries (the engine rebuilds its indexes from the rows),
//! and all writes are sequential appends. The on-disk formats, the protocols
//! and why a crash at any instant leaves a recoverable state are in
//! `docs/design.md`, section 9.
//!
//! ```
//! use std::sync::Arc;
//! use centum_storage::{Options, Record, SimFs, Storage};
//!
//! let fs = Arc::new(SimFs::new());
//! let storage = Storage::open(fs.clone(), "/db", Options::default())?.start()?;
//! let mut rec = Record::new(1);
//! rec.insert(7, 0, b"row");
//! storage.commit(rec)?; // durable when it returns
//! storage.close()?;
//!
//! let recovery = Storage::open(fs, "/db", Options::default())?;
//! let rows = std::sync::Mutex::new(Vec::new());
//! recovery.load(&|row| rows.lock().unwrap().push(row.data.to_vec()))?;
//! assert_eq!(rows.into_inner().unwrap(), vec![b"row".to_vec()]);
//! # Ok::<(), centum_storage::Error>(())
//! ```

pub mod checkpoint;
pub mod disk;
mod error;
pub mod format;
pub mod fs;
pub mod log;
mod recovery;
mod storage;

pub use checkpoint::{
    CheckpointOptions, CheckpointReport, CheckpointStats, FileInfo, FileKind, FileState, Manifest, PairMeta,
};
pub use error::{Error, Result};
pub use fs::{File, Fs, SimFs, StdFs};
pub use log::{
    lsn, pos_of_lsn, Durability, Durable, FeedTxn, Log, LogOptions, LogPos, LogReader, LogStats, Op, Record,
    Resolver, RowId, Slot, SlotChange, SlotGroup, Slots,
};
pub use recovery::{LoadStats, LoadedRow, Recovery};
pub use storage::{Options, Storage};
