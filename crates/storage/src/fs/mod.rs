//! File access behind a small trait.
//!
//! Everything this crate reads or writes goes through [`Fs`] and [`File`],
//! so tests can swap the real file system ([`StdFs`]) for [`SimFs`], which
//! keeps files in memory, remembers which bytes a sync made durable, can
//! hand out the *crash image* as it stood after any sync, and can fail the
//! Nth write or sync.
//!
//! The contract is POSIX's, stated pessimistically:
//!
//! * bytes written to a file are durable only after [`File::sync_data`]
//!   returns (the size of the file too);
//! * a created, renamed or removed directory entry is durable only after
//!   [`Fs::sync_dir`] of its directory returns;
//! * anything else may or may not survive a crash.

mod sim;
mod std_fs;

pub use sim::SimFs;
pub use std_fs::StdFs;

use std::io;
use std::path::Path;

/// An open file. Offsets are explicit, so one handle can be shared; this
/// crate still has one writer per file.
pub trait File: Send + Sync {
    /// Writes all of `buf` at `offset`, growing the file as needed.
    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()>;
    /// Reads up to `buf.len()` bytes at `offset`; returns how many were read
    /// (fewer only at the end of the file).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
    /// The file's current length.
    fn len(&self) -> io::Result<u64>;
    /// True when the file is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Truncates or extends the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Makes the file's data and size durable (fdatasync).
    fn sync_data(&self) -> io::Result<()>;
}

/// A file system: the directory operations this crate needs.
pub trait Fs: Send + Sync {
    /// Creates `path` empty (truncating any file of that name) for reading
    /// and writing.
    fn create(&self, path: &Path) -> io::Result<Box<dyn File>>;
    /// Opens an existing file for reading and writing.
    fn open(&self, path: &Path) -> io::Result<Box<dyn File>>;
    /// Renames `from` to `to`, replacing `to` atomically.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Names of the files in `dir` (not paths), in no particular order.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Creates `dir` and its parents if missing.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Makes the creations, renames and removals in `dir` durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
}

/// Reads exactly `len` bytes at `offset`, or reports how many there were.
pub(crate) fn read_exact_at(file: &dyn File, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    let mut done = 0;
    while done < len {
        let n = file.read_at(offset + done as u64, &mut buf[done..])?;
        if n == 0 {
            buf.truncate(done);
            break;
        }
        done += n;
    }
    Ok(buf)
}

/// Reads a whole file.
pub(crate) fn read_all(file: &dyn File) -> io::Result<Vec<u8>> {
    let len = usize::try_from(file.len()?).map_err(|_| io::Error::other("file too large"))?;
    read_exact_at(file, 0, len)
}
