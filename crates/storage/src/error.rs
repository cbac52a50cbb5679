//! The storage layer's error type.
//!
//! These kinds of failure reach a caller, and each maps to one SQLSTATE:
//!
//! * an operating-system call failed ([`Error::Io`]): `53100 disk_full`
//!   when the file system is out of space (ENOSPC, or EDQUOT for a quota),
//!   `58030 io_error` otherwise. A failed *write* to the log or to a
//!   checkpoint file is not final: the log refuses the commits of the
//!   flush that met it and goes on once a write succeeds again, and the
//!   checkpoint worker catches up at its next checkpoint;
//! * bytes on disk are not what this crate wrote ([`Error::Corrupt`],
//!   `XX001 data_corrupted`), always with the file and byte offset;
//! * a redo record frame over the 1 GiB frame limit, which only a single op
//!   that large can make ([`Error::RecordTooLarge`],
//!   `54000 program_limit_exceeded`);
//! * the redo log or the checkpoint worker stopped after a failed
//!   `fdatasync` ([`Error::LogFailed`], [`Error::CheckpointFailed`],
//!   `58030 io_error`: the cause is an I/O error, and the server cannot take
//!   commits until it is restarted, which is what `58030` tells a client).

use std::io;
use std::path::PathBuf;

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every failure of the storage layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file-system call failed.
    #[error("I/O error: {op} {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done ("write", "fdatasync", "rename" ...).
        op: &'static str,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A file holds bytes this crate did not write (bad CRC, bad header,
    /// short file, impossible value).
    #[error("corrupt file {file} at byte {offset}: {what}")]
    Corrupt {
        /// The file.
        file: PathBuf,
        /// Byte offset of the bad header, block or record.
        offset: u64,
        /// What is wrong.
        what: String,
    },
    /// The redo log stopped taking commits after a failed sync (or a failed
    /// write it could not cut off); the string is the first failure.
    /// Restart (recover) to go on.
    #[error("the redo log has failed and takes no more commits: {0}")]
    LogFailed(String),
    /// The checkpoint worker stopped after a failed sync or damaged data;
    /// the log keeps every commit since the last manifest, so nothing is
    /// lost.
    #[error("checkpointing has failed and stopped: {0}")]
    CheckpointFailed(String),
    /// A redo record frame longer than the largest frame (1 GiB): one op
    /// that large (a record spans frames otherwise); nothing was logged and
    /// the log goes on.
    #[error("redo record frame of {bytes} bytes exceeds the 1 GiB limit")]
    RecordTooLarge {
        /// The frame's encoded size.
        bytes: usize,
    },
    /// The storage was shut down.
    #[error("storage is closed")]
    Closed,
    /// The record was refused, or taken out of the buffer before it was
    /// written, because a write failed for a record it may depend on: one
    /// appended before it whose transaction's changes its transaction may
    /// have used before they were durable (see [`crate::Log::commit_stamped`]).
    /// Nothing of it was logged; running the transaction again may succeed.
    #[error("a log write failed for a transaction whose changes this one may have used")]
    DependencyFailed,
    /// A change feed asked for a log position whose segment is gone (no
    /// slot kept it).
    #[error("{0}")]
    LogRemoved(String),
    /// A replicated log did not take the record: this server is not the
    /// primary (`25006`), or it stopped being the primary while the record
    /// was on its way, so whether it commits is not known here (`08007`).
    #[error("{message}")]
    Replication {
        /// The SQLSTATE.
        code: &'static str,
        /// What happened.
        message: String,
    },
}

impl Error {
    /// The PostgreSQL SQLSTATE for this error: `53100` (disk_full) when the
    /// file system is out of space, `58030` (io_error) for other I/O
    /// failures and for a log or checkpointer stopped by one, `XX001`
    /// (data_corrupted) for corruption, `54000` (program_limit_exceeded) for
    /// an oversized record, `57P01` (admin_shutdown) once closed, `40001`
    /// (serialization_failure) for a record refused for a failed write it
    /// may depend on, `58P01` (undefined_file) for a removed log position.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            Error::Io { .. } if self.is_disk_full() => "53100",
            Error::Io { .. } | Error::LogFailed(_) | Error::CheckpointFailed(_) => "58030",
            Error::Corrupt { .. } => "XX001",
            Error::RecordTooLarge { .. } => "54000",
            Error::Closed => "57P01",
            Error::DependencyFailed => "40001",
            Error::LogRemoved(_) => "58P01",
            Error::Replication { code, .. } => code,
        }
    }

    /// True for corruption found on disk.
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corrupt { .. })
    }

    /// True when an OS call failed for want of space (ENOSPC, EDQUOT).
    pub fn is_disk_full(&self) -> bool {
        matches!(self, Error::Io { source, .. }
            if matches!(source.kind(), io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded))
    }

    /// True when an `fdatasync` or a directory `fsync` failed. Such a failure
    /// is final: Linux may have dropped the dirty pages it could not write
    /// and clear the error, so a later sync can succeed without them.
    pub(crate) fn is_failed_sync(&self) -> bool {
        matches!(self, Error::Io { op: "fdatasync" | "sync directory", .. })
    }

    /// The same error again, for a second caller the same failure met
    /// (`io::Error` is not `Clone`; the copy keeps its kind, its OS error
    /// code and its message).
    pub(crate) fn duplicate(&self) -> Error {
        match self {
            Error::Io { path, op, source } => {
                let source = match source.raw_os_error() {
                    Some(code) => io::Error::from_raw_os_error(code),
                    None => io::Error::new(source.kind(), source.to_string()),
                };
                Error::Io { path: path.clone(), op, source }
            }
            Error::Corrupt { file, offset, what } => {
                Error::Corrupt { file: file.clone(), offset: *offset, what: what.clone() }
            }
            Error::LogFailed(why) => Error::LogFailed(why.clone()),
            Error::CheckpointFailed(why) => Error::CheckpointFailed(why.clone()),
            Error::RecordTooLarge { bytes } => Error::RecordTooLarge { bytes: *bytes },
            Error::Closed => Error::Closed,
            Error::DependencyFailed => Error::DependencyFailed,
            Error::LogRemoved(why) => Error::LogRemoved(why.clone()),
            Error::Replication { code, message } => Error::Replication { code, message: message.clone() },
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, op: &'static str, source: io::Error) -> Self {
        Error::Io { path: path.into(), op, source }
    }

    pub(crate) fn corrupt(file: impl Into<PathBuf>, offset: u64, what: impl Into<String>) -> Self {
        Error::Corrupt { file: file.into(), offset, what: what.into() }
    }
}
