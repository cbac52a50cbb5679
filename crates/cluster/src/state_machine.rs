//! The bridge between Raft's state machine and the database.
//!
//! Raft decides *which* entries are committed and in what order; what they
//! mean is the database's business. The database plugs in through the
//! [`Apply`] trait: it receives each committed payload exactly once per
//! process lifetime, in log order, and reports how far its durable state
//! reaches. [`StateMachine`] adapts that to openraft's `RaftStateMachine`:
//!
//! * **Applying.** Blank entries (a new leader's first entry) and membership
//!   entries carry no payload and are not passed to [`Apply::apply`]; they
//!   only advance the applied position. A failing `apply` is fatal for the
//!   node: a committed entry cannot be skipped, so Raft stops rather than let
//!   the database diverge from its peers.
//! * **Restart.** [`Apply::applied`] is the last index whose effects the
//!   database holds durably. At start the adapter reports that position (with
//!   its term, looked up in the log) as Raft's last applied log id, so Raft
//!   replays exactly the committed entries after it. The log store is told
//!   never to purge past that index, so those entries are still there.
//! * **Membership.** The last applied membership is kept in a small JSON file
//!   (`state_machine.json`, replaced atomically) so it can be reported at
//!   start. The same file records the log id of the last installed snapshot,
//!   the one position `applied()` may name that is no longer in the log.
//! * **Snapshots.** A snapshot is the opaque byte image from
//!   [`Apply::snapshot`], taken while no entry is being applied so that it
//!   matches the last applied log id exactly. A follower too far behind
//!   receives one and hands it to [`Apply::install`]. The latest snapshot,
//!   built here or received, is written to `snapshot.bin` (replaced
//!   atomically) before Raft may purge the log below it: it is the
//!   member's checkpoint. At start, a database that holds less than it is
//!   given it through [`Apply::install`], and Raft replays the entries
//!   after it; it is also what this member sends to one too far behind.
//!
//! ```text
//!  snapshot.bin := u32 meta_len, meta (JSON: last log id, membership, id),
//!                  u32 crc32c(meta ++ image), image
//! ```

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use openraft::storage::RaftStateMachine;
use openraft::{
    AnyError, BasicNode, EntryPayload, OptionalSend, RaftSnapshotBuilder, Snapshot, SnapshotMeta,
    StorageError, StorageIOError, StoredMembership,
};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::log_store::{write_file_atomic, LogStore};
use crate::{Entry, LogId, TypeConfig};

/// Name of the state machine's metadata file inside the Raft directory.
pub const STATE_FILE: &str = "state_machine.json";
const STATE_TMP: &str = "state_machine.json.tmp";
/// Name of the latest snapshot's file inside the Raft directory.
pub const SNAPSHOT_FILE: &str = "snapshot.bin";
const SNAPSHOT_TMP: &str = "snapshot.bin.tmp";

/// The database side of the replicated log.
///
/// Implementations must be cheap to call from Raft's state machine task;
/// the calls are made from a blocking section, one at a time, never
/// concurrently with each other.
pub trait Apply: Send + Sync + 'static {
    /// Applies the committed entry at `index`. Called in log order, exactly
    /// once per committed entry with a payload per process lifetime, starting
    /// after [`Apply::applied`]. An error stops the node.
    fn apply(&self, index: u64, payload: &[u8]) -> std::result::Result<(), String>;

    /// The last index whose effects this side holds durably (0 when it holds
    /// nothing). Read at start to decide where replay begins, and whenever
    /// the log is about to be purged.
    fn applied(&self) -> u64;

    /// A byte image of the whole state as of the last applied entry.
    fn snapshot(&self) -> std::result::Result<Vec<u8>, String>;

    /// Replaces the whole state by the image `bytes`, taken at `index`. On
    /// success the state must be durable and [`Apply::applied`] must return
    /// at least `index`.
    fn install(&self, index: u64, bytes: &[u8]) -> std::result::Result<(), String>;
    /// The first index a reader of the log still needs (a change feed's
    /// slot): the log keeps it and what follows, snapshots or not.
    /// `u64::MAX` when nothing is needed.
    fn needed_from(&self) -> u64 {
        u64::MAX
    }
}

/// What the adapter keeps on disk besides the database's own state.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Persisted {
    /// The last applied (or installed) membership.
    membership: StoredMembership<u64, BasicNode>,
    /// Log id of the last installed snapshot.
    installed: Option<LogId>,
}

/// A snapshot's description and its image.
type Kept = (SnapshotMeta<u64, BasicNode>, Vec<u8>);

type StoredSnapshot = Arc<Mutex<Option<Kept>>>;

/// The index of the latest snapshot on disk (0: none): the log may be
/// purged up to it.
pub(crate) type SnapshotFloor = Arc<std::sync::atomic::AtomicU64>;

/// Writes `snapshot.bin` for `meta` and `image`, durably.
fn write_snapshot(dir: &Path, meta: &SnapshotMeta<u64, BasicNode>, image: &[u8]) -> std::io::Result<()> {
    let meta = serde_json::to_vec(meta).map_err(std::io::Error::other)?;
    let mut bytes = Vec::with_capacity(8 + meta.len() + image.len());
    bytes.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&meta);
    bytes.extend_from_slice(&crc32c::crc32c_append(crc32c::crc32c(&meta), image).to_le_bytes());
    bytes.extend_from_slice(image);
    write_file_atomic(dir, SNAPSHOT_FILE, SNAPSHOT_TMP, &bytes)
}

/// Reads `snapshot.bin`, if there is one.
fn read_snapshot(dir: &Path) -> Result<Option<Kept>> {
    let path = dir.join(SNAPSHOT_FILE);
    let mut bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let corrupt = |reason: &str| Error::Corrupt { path: path.clone(), reason: reason.to_string() };
    let len = bytes.get(..4).ok_or_else(|| corrupt("too short"))?;
    let len = u32::from_le_bytes(len.try_into().map_err(|_| corrupt("too short"))?) as usize;
    let meta = bytes.get(4..4 + len).ok_or_else(|| corrupt("too short"))?;
    let crc = bytes.get(4 + len..8 + len).ok_or_else(|| corrupt("too short"))?;
    let image = &bytes[8 + len..];
    if u32::from_le_bytes(crc.try_into().map_err(|_| corrupt("too short"))?)
        != crc32c::crc32c_append(crc32c::crc32c(meta), image)
    {
        return Err(corrupt("checksum mismatch"));
    }
    let meta = serde_json::from_slice(meta).map_err(|e| corrupt(&e.to_string()))?;
    // The image stays in the buffer it was read into.
    bytes.drain(..8 + len);
    Ok(Some((meta, bytes)))
}

/// Separates a stopped node from its database: once the gate is closed no
/// further call reaches [`Apply`], and closing waits for a call in progress.
/// Raft's state machine task may outlive the node's shutdown by a moment;
/// the gate makes "shutdown returned" mean "the database is left alone".
#[derive(Clone, Default)]
pub struct ApplyGate(Arc<Mutex<bool>>);

impl ApplyGate {
    fn enter(&self) -> Option<MutexGuard<'_, bool>> {
        let open = self.0.lock().unwrap_or_else(|e| e.into_inner());
        (!*open).then_some(open)
    }

    /// Closes the gate, waiting for a call in progress to return.
    pub fn close(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
    }
}

const STOPPED: &str = "the node has stopped";

/// openraft's state machine over an [`Apply`] implementation.
pub struct StateMachine {
    dir: PathBuf,
    apply: Arc<dyn Apply>,
    last_applied: Option<LogId>,
    persisted: Persisted,
    current: StoredSnapshot,
    floor: SnapshotFloor,
    gate: ApplyGate,
}

/// Runs blocking database work without stalling the other tasks of a
/// multi-threaded runtime.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

impl StateMachine {
    /// Opens the adapter for the Raft directory `dir`, positioning the
    /// applied log id at [`Apply::applied`] as found in `log`.
    pub fn open(dir: impl AsRef<Path>, apply: Arc<dyn Apply>, log: &LogStore) -> Result<StateMachine> {
        let dir = dir.as_ref().to_path_buf();
        let path = dir.join(STATE_FILE);
        let persisted: Persisted = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| Error::Corrupt { path: path.clone(), reason: e.to_string() })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Persisted::default(),
            Err(e) => return Err(e.into()),
        };
        // The latest snapshot on disk: the database starts from it when it
        // holds less.
        let snapshot = read_snapshot(&dir)?;
        let snap_index = snapshot.as_ref().and_then(|(m, _)| m.last_log_id).map_or(0, |id| id.index);
        let mut applied = apply.applied();
        let mut from_snapshot = None;
        if let Some((meta, image)) = &snapshot {
            if applied < snap_index {
                apply.install(snap_index, image).map_err(|e| {
                    Error::Config(format!("cannot start from the snapshot in {}: {e}", dir.display()))
                })?;
                applied = snap_index;
                from_snapshot = meta.last_log_id;
                tracing::info!(index = snap_index, "started from the checkpoint at index {snap_index}");
            }
        }
        let last_applied = if let Some(id) = from_snapshot {
            Some(id)
        } else if applied == 0 {
            None
        } else {
            let found = log
                .log_id_at(applied)
                .or(persisted.installed.filter(|id| id.index == applied))
                .or(snapshot.as_ref().and_then(|(m, _)| m.last_log_id).filter(|id| id.index == applied));
            match found {
                Some(id) => Some(id),
                None => {
                    return Err(Error::Config(format!(
                        "the database reports index {applied} applied, but the raft log in {} \
                         has no entry there (last purged: {:?}, last: {:?}); the database and \
                         the raft directory do not belong together",
                        dir.display(),
                        log.purged().map(|p| p.index),
                        log.last_log_id().map(|l| l.index),
                    )))
                }
            }
        };
        Ok(StateMachine {
            dir,
            apply,
            last_applied,
            persisted,
            current: Arc::new(Mutex::new(snapshot)),
            floor: Arc::new(std::sync::atomic::AtomicU64::new(snap_index)),
            gate: ApplyGate::default(),
        })
    }

    /// The index of the latest snapshot on disk, kept current.
    pub(crate) fn snapshot_floor(&self) -> SnapshotFloor {
        self.floor.clone()
    }

    /// The gate through which every call to the database passes.
    pub fn gate(&self) -> ApplyGate {
        self.gate.clone()
    }

    fn persist(&self) -> std::io::Result<()> {
        let bytes = serde_json::to_vec(&self.persisted).map_err(std::io::Error::other)?;
        write_file_atomic(&self.dir, STATE_FILE, STATE_TMP, &bytes)
    }

    /// Keeps the snapshot `meta`, `bytes`, on disk first.
    fn store_snapshot(&self, meta: SnapshotMeta<u64, BasicNode>, bytes: Vec<u8>) -> std::io::Result<()> {
        keep_snapshot(&self.dir, &self.current, &self.floor, meta, bytes)
    }
}

/// Writes the snapshot to disk, then makes it the one sent to members
/// that need one and lets the log be purged up to it. A snapshot older
/// than the one kept is dropped: a build that finishes after a newer
/// snapshot was installed must not put the file back behind the point the
/// log may already be purged to.
fn keep_snapshot(
    dir: &Path,
    current: &StoredSnapshot,
    floor: &SnapshotFloor,
    meta: SnapshotMeta<u64, BasicNode>,
    bytes: Vec<u8>,
) -> std::io::Result<()> {
    let index = meta.last_log_id.map_or(0, |id| id.index);
    // Held while the file is written: one writer at a time, in order.
    let mut kept = current.lock().unwrap_or_else(|e| e.into_inner());
    if kept.as_ref().is_some_and(|(m, _)| m.last_log_id.map_or(0, |id| id.index) > index) {
        return Ok(());
    }
    blocking(|| write_snapshot(dir, &meta, &bytes))?;
    *kept = Some((meta, bytes));
    floor.fetch_max(index, std::sync::atomic::Ordering::SeqCst);
    Ok(())
}

/// Packages a snapshot image taken by the state machine task.
pub struct SnapshotBuilder {
    image: std::result::Result<Vec<u8>, String>,
    last_applied: Option<LogId>,
    membership: StoredMembership<u64, BasicNode>,
    current: StoredSnapshot,
    floor: SnapshotFloor,
    dir: PathBuf,
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    async fn build_snapshot(&mut self) -> std::result::Result<Snapshot<TypeConfig>, StorageError<u64>> {
        // A builder builds once: the image moves out of it.
        let bytes = match std::mem::replace(&mut self.image, Err("the image was built already".into())) {
            Ok(b) => b,
            Err(e) => {
                return Err(StorageIOError::read_state_machine(AnyError::error(format!(
                    "database snapshot failed: {e}"
                )))
                .into())
            }
        };
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let snapshot_id = match self.last_applied {
            Some(id) => format!("{}-{}-{}-{nanos}", id.leader_id.term, id.leader_id.node_id, id.index),
            None => format!("empty-{nanos}"),
        };
        let meta = SnapshotMeta {
            last_log_id: self.last_applied,
            last_membership: self.membership.clone(),
            snapshot_id,
        };
        keep_snapshot(&self.dir, &self.current, &self.floor, meta.clone(), bytes.clone())
            .map_err(|e| StorageIOError::write_snapshot(Some(meta.signature()), AnyError::new(&e)))?;
        Ok(Snapshot { meta, snapshot: Box::new(Cursor::new(bytes)) })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(
        &mut self,
    ) -> std::result::Result<(Option<LogId>, StoredMembership<u64, BasicNode>), StorageError<u64>> {
        Ok((self.last_applied, self.persisted.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> std::result::Result<Vec<()>, StorageError<u64>>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let entries: Vec<Entry> = entries.into_iter().collect();
        let n = entries.len();
        let gate = self.gate.clone();
        let failed = blocking(|| {
            let Some(_open) = gate.enter() else {
                return Some(StorageIOError::write_state_machine(AnyError::error(STOPPED)));
            };
            for e in entries {
                match e.payload {
                    EntryPayload::Blank => {}
                    EntryPayload::Normal(payload) => {
                        if let Err(msg) = self.apply.apply(e.log_id.index, &payload) {
                            tracing::error!(index = e.log_id.index, error = %msg, "database failed to apply a committed entry");
                            return Some(StorageIOError::apply(e.log_id, AnyError::error(msg)));
                        }
                    }
                    EntryPayload::Membership(m) => {
                        self.persisted.membership = StoredMembership::new(Some(e.log_id), m);
                        if let Err(err) = self.persist() {
                            return Some(StorageIOError::write_state_machine(AnyError::new(&err)));
                        }
                    }
                }
                self.last_applied = Some(e.log_id);
            }
            None
        });
        match failed {
            Some(e) => Err(e.into()),
            None => Ok(vec![(); n]),
        }
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        // The image is taken here, in the state machine task, so no entry is
        // applied between it and `last_applied`.
        let image = blocking(|| match self.gate.enter() {
            Some(_open) => self.apply.snapshot(),
            None => Err(STOPPED.to_string()),
        });
        SnapshotBuilder {
            image,
            last_applied: self.last_applied,
            membership: self.persisted.membership.clone(),
            current: self.current.clone(),
            floor: self.floor.clone(),
            dir: self.dir.clone(),
        }
    }

    async fn begin_receiving_snapshot(
        &mut self,
    ) -> std::result::Result<Box<Cursor<Vec<u8>>>, StorageError<u64>> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta<u64, BasicNode>,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> std::result::Result<(), StorageError<u64>> {
        let bytes = snapshot.into_inner();
        // Record the snapshot's log id before the database switches, so that
        // `applied()` naming it after a crash can be resolved.
        self.persisted.installed = meta.last_log_id;
        self.persisted.membership = meta.last_membership.clone();
        self.persist()
            .map_err(|e| StorageIOError::write_snapshot(Some(meta.signature()), AnyError::new(&e)))?;
        let index = meta.last_log_id.map_or(0, |id| id.index);
        blocking(|| match self.gate.enter() {
            Some(_open) => self.apply.install(index, &bytes),
            None => Err(STOPPED.to_string()),
        })
        .map_err(|msg| StorageIOError::write_snapshot(Some(meta.signature()), AnyError::error(msg)))?;
        self.last_applied = meta.last_log_id;
        self.store_snapshot(meta.clone(), bytes)
            .map_err(|e| StorageIOError::write_snapshot(Some(meta.signature()), AnyError::new(&e)))?;
        Ok(())
    }

    async fn get_current_snapshot(
        &mut self,
    ) -> std::result::Result<Option<Snapshot<TypeConfig>>, StorageError<u64>> {
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Ok(current.map(|(meta, bytes)| Snapshot { meta, snapshot: Box::new(Cursor::new(bytes)) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_file_reads_back_and_a_damaged_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_snapshot(dir.path()).unwrap().is_none());
        let meta = SnapshotMeta {
            last_log_id: Some(LogId::new(openraft::CommittedLeaderId::new(3, 1), 42)),
            last_membership: StoredMembership::default(),
            snapshot_id: "3-1-42".into(),
        };
        let image = (0..5000u32).flat_map(u32::to_le_bytes).collect::<Vec<u8>>();
        write_snapshot(dir.path(), &meta, &image).unwrap();
        let (got, bytes) = read_snapshot(dir.path()).unwrap().unwrap();
        assert_eq!(got, meta);
        assert_eq!(bytes, image);
        let path = dir.path().join(SNAPSHOT_FILE);
        let whole = std::fs::read(&path).unwrap();
        for at in [2, 20, whole.len() - 1] {
            let mut bad = whole.clone();
            bad[at] ^= 1;
            std::fs::write(&path, &bad).unwrap();
            assert!(matches!(read_snapshot(dir.path()), Err(Error::Corrupt { .. })), "byte {at}");
        }
        std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
        assert!(matches!(read_snapshot(dir.path()), Err(Error::Corrupt { .. })));
    }
}
