//! Errors of the replication layer.
//!
//! Two kinds of failure are kept apart because callers react to them
//! differently:
//!
//! * [`ProposeError`] is what a writer sees when it hands a commit entry to
//!   the group. Its variants say what the caller may assume about the entry:
//!   [`ProposeError::NotLeader`], [`ProposeError::ShuttingDown`] and
//!   [`ProposeError::TooLarge`] mean the entry was not accepted (retry elsewhere or give up), while
//!   [`ProposeError::Unknown`] means the entry may or may not become part of
//!   the replicated history — the caller has to find out (for example by
//!   reading it back after the new leader is ready) before reporting success
//!   or failure to a client.
//! * [`Error`] covers everything else: opening the on-disk log, starting the
//!   node, waiting for a leader, and corruption found while reading files.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Result alias for the node and storage operations of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Failure of a [`crate::Node::propose`] call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProposeError {
    /// This node is not the leader, so the entry was not accepted (or it was
    /// appended locally but a new leader has since replaced that part of the
    /// log, so it will never commit). `leader` is the leader this node knows
    /// of, if any, with the Raft address it was configured with.
    #[error("not the leader (known leader: {leader:?} at {addr:?})")]
    NotLeader { leader: Option<u64>, addr: Option<SocketAddr> },
    /// The node is stopping or stopped; the entry was not accepted.
    #[error("the node is shutting down")]
    ShuttingDown,
    /// The payload exceeds [`crate::NodeConfig::max_payload`]; the entry was
    /// not accepted.
    #[error("payload of {size} bytes exceeds the limit of {max}")]
    TooLarge { size: usize, max: usize },
    /// The entry was handed to Raft but its fate is not known: leadership may
    /// have been lost, the node may have stopped, or the wait timed out. The
    /// entry may still commit.
    #[error("outcome unknown: {0}")]
    Unknown(String),
}

/// Failure of the node lifecycle, the storage or a wait.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An operating-system I/O error.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// A file of the Raft directory holds data that cannot be trusted
    /// (checksum mismatch before the tail, bad header, gap in the indexes).
    #[error("corrupt file {path}: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    /// The configuration is unusable (e.g. the node is not among the peers).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Raft itself failed (fatal storage error, panic in the core task, …).
    #[error("raft: {0}")]
    Raft(String),
    /// The operation needs the leader and this node is not it.
    #[error("not the leader (known leader: {leader:?} at {addr:?})")]
    NotLeader { leader: Option<u64>, addr: Option<SocketAddr> },
    /// The node is stopping or stopped.
    #[error("the node is shutting down")]
    ShuttingDown,
    /// A wait did not finish in the given time.
    #[error("timed out: {0}")]
    Timeout(String),
}
