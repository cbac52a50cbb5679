//! Replicated, consensus-ordered commit entries for Centum.
//!
//! A Centum cluster is a small group of database processes (typically three)
//! that agree, through Raft, on one ordered history of commit entries. Each
//! entry is an opaque byte vector — the database's redo record for a
//! committed transaction. The leader proposes entries; an entry counts as
//! committed once a majority of members have it durably on disk; every member
//! then hands committed entries, in log order, to its local state machine
//! (the database engine) through the [`Apply`] trait.
//!
//! ```text
//!   writer task(s)                      leader                          followers
//!   ──────────────                      ──────                          ─────────
//!   Node::propose(bytes) ──► Raft core assigns index i
//!   (many tasks at once;       │
//!    proposals queue in        ├─► log store: append frame, fdatasync
//!    the core meanwhile)       │
//!                              └─► AppendEntries over TCP ─────────────►┐ log store: append the whole
//!                                  (entries i..j queued since the last  │ batch, one fdatasync
//!                                   round travel together)              │ reply "stored up to j"
//!                              majority stored i  ◄─────────────────────┘
//!                              │
//!                              ▼ committed index ≥ i
//!                        state machine: Apply::apply(i, bytes)     followers learn the commit index
//!                              │                                   with the next AppendEntries and
//!                              ▼                                   apply i on their side
//!   Ok(i) ◄──────────── propose returns once i is applied locally
//! ```
//!
//! Modules:
//!
//! * [`log_store`] — the durable Raft log and vote, one file each, framed with
//!   CRC-32C; torn tails are cut at open.
//! * [`state_machine`] — the adapter between Raft's state machine interface and
//!   the database's [`Apply`] implementation, plus snapshots.
//! * [`network`] — Raft RPCs over TCP with length-prefixed frames.
//! * [`node`] — [`Node`]: starts the pieces, forms the cluster, proposes
//!   entries, reports [`Metrics`].
//! * [`error`] — [`Error`] and [`ProposeError`].

use std::io::Cursor;

pub mod error;
pub mod log_store;
pub mod network;
pub mod node;
pub mod state_machine;

pub use error::{Error, ProposeError, Result};
pub use node::{Metrics, Node, NodeConfig, Role};
pub use state_machine::Apply;

/// The openraft version this crate is built on, re-exported so that callers
/// (and tests) that need Raft's own types name the same crate.
pub use openraft;

openraft::declare_raft_types!(
    /// Raft type configuration of a Centum cluster: node ids are `u64`, a
    /// member is described by its Raft RPC address ([`openraft::BasicNode`]),
    /// and the application payload of a log entry is an opaque byte vector.
    pub TypeConfig:
        D = Vec<u8>,
        R = (),
        NodeId = u64,
        Node = openraft::BasicNode,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = Cursor<Vec<u8>>,
        AsyncRuntime = openraft::TokioRuntime,
);

/// A Raft log entry of a Centum cluster.
pub type Entry = openraft::Entry<TypeConfig>;
/// Position of an entry in the log: the leader that created it and its index.
pub type LogId = openraft::LogId<u64>;
/// A persisted vote (term, candidate, whether a quorum granted it).
pub type Vote = openraft::Vote<u64>;
/// The openraft handle specialised to this crate's types.
pub type Raft = openraft::Raft<TypeConfig>;
