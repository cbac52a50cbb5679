//! The redo log.
//!
//! One [`Record`] per committed transaction (row images inserted, row
//! identities deleted, catalog images), appended in arrival order to
//! segment files in batches, one batch per group-commit flush. The log is
//! only ever appended to (a write that fails is cut off again, back to the
//! last synced batch); segments wholly before the newest manifest's
//! replay position are removed by the checkpoint worker.
//!
//! * [`record`]: the record encoder the engine fills at commit, and its
//!   decoder;
//! * [`segment`]: segment files, batch framing, and reading them back with
//!   torn-tail detection;
//! * [`writer`]: group commit, delayed durability, failure handling;
//! * [`feed`]: reading committed transactions back for change feeds;
//! * [`slots`]: the replication slots that keep the log for them.

pub mod feed;
pub mod record;
pub mod segment;
pub mod slots;
pub mod writer;

pub use feed::{lsn, pos_of_lsn, FeedTxn, LogReader};
pub use record::{decode_record, DecodedRecord, Op, Record, RowId};
pub use segment::{parse_segment_name, segment_name, LogPos};
pub use slots::{Slot, SlotChange, SlotGroup, Slots};
pub use writer::{Durability, Durable, Log, LogOptions, LogStats, Resolver};
