//! A server as one member of a replicated group (`--node-id`, `--peers`):
//! the primary's commits are ordered and made durable by Raft
//! (`centum-cluster`), and every other member applies them to its own
//! tables and serves read-only transactions at the position it has applied.
//!
//! ```text
//!  primary: commit ── Replicate::submit (stamp under the queue's lock)
//!      ── queue ── proposer: the records waiting, one Raft entry
//!         (group commit: one entry in flight; the next fills meanwhile)
//!      ── a majority has the entry on disk ── Apply on the primary:
//!         its own records resolve their commits (the transactions publish
//!         themselves); ones it does not own are applied to its tables
//!  standby: Apply ── Database::apply_frames ── the SQL catalog reloaded
//!         after a schema change
//!  roles: the watcher follows Raft; a new leader applies every entry of
//!         earlier terms, raises its clock to term << 40, then takes writes
//! ```
//!
//! An entry's payload holds the records of several transactions:
//!
//! ```text
//!  payload := u32 count, then per transaction:
//!             u64 commit_ts, u32 len, frames [u8; len]   (little-endian)
//! ```
//!
//! A transaction whose `commit_ts` is 0 is no transaction but a change of
//! the group's replication slots ([`centum_engine::storage::SlotChange`]),
//! applied to every member's `slots` file: slots and their confirmed
//! positions survive a change of primary. The change feed of a member
//! reads the entries it has applied; a feed position is the entry's index
//! and the number of the entry's transactions before it. A member keeps
//! its log from the oldest slot's entry on, snapshots or not. A member's
//! image is its slots, then its tables:
//!
//! ```text
//!  image := u32 slots_len, slots [u8; slots_len], tables (Database::image)
//! ```
//!
//! A commit whose entry was handed to Raft but not confirmed (leadership
//! lost while it was on its way, or the wait ran out) fails with 08007: it
//! may still commit, and then this server gets it back through Apply like
//! any other member's record and applies it. After such a failure the
//! member takes writes again only once every entry of its log is applied,
//! so no later transaction can conflict with one that commits late.
//!
//! The Raft log is the redo log. A standby checkpoints on its own: every
//! `snapshot_every` entries it asks Raft for a snapshot, an image of its
//! tables ([`centum_engine::Database::image`]) that Raft writes to disk
//! before it purges the log below it. A member that starts installs its
//! latest image and replays the entries after it; one too far behind is
//! sent the image. The primary takes none: its image would have to wait
//! for the schema lock, which a schema change holds until its entry is
//! applied, by the very task that builds the image.

use crate::config::ClusterConfig;
use centum_cluster::{Apply, Node, NodeConfig, ProposeError};
use centum_engine::storage::{
    Durable, Error as StorageError, FeedTxn, LogPos, Record, Resolver, SlotChange, SlotGroup, Slots,
};
use centum_engine::FeedSource;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

/// Bits of a commit timestamp below the term: each term's primary stamps
/// from `term << TERM_SHIFT` on, above anything an earlier one handed out.
const TERM_SHIFT: u32 = 40;

/// Payload bytes gathered into one entry, at most (a single larger record
/// goes alone, up to the node's limit).
const ENTRY_BYTES: usize = 4 << 20;

/// The commit timestamp of an entry's slot change (no transaction has 0).
const SLOT_CHANGE: u64 = 0;

/// Most entries a feed reader takes from the log at once.
const FEED_ENTRIES: u64 = 256;

/// How often the watcher looks at the member's role.
const WATCH_EVERY: Duration = Duration::from_millis(20);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A record waiting for its entry.
struct Submitted {
    ts: u64,
    frames: Vec<u8>,
    resolver: Resolver,
    /// Acknowledged already (delayed durability).
    delayed: bool,
}

/// The group as the engine sees it ([`centum_engine::Replicate`]) and as
/// Raft sees it ([`Apply`]).
pub(crate) struct Group {
    queue: Mutex<Vec<Submitted>>,
    wake: tokio::sync::Notify,
    writable: AtomicBool,
    failed: AtomicU64,
    /// Records of this server's proposed and not yet applied, by commit
    /// timestamp: who resolves each, and whether its commit was
    /// acknowledged already (delayed durability).
    mine: Mutex<HashMap<u64, (Resolver, bool)>>,
    /// The highest commit timestamp of this server's that Apply resolved.
    resolved_upto: AtomicU64,
    db: OnceLock<centum_sql::Database>,
    /// The index of the latest image installed (0: none).
    installed: AtomicU64,
    /// The largest payload an entry may carry (set when the node starts).
    max_payload: AtomicU64,
    /// Set once the member stops.
    stopping: AtomicBool,
    /// The highest commit timestamp handed out (under the queue's lock).
    last_stamped: AtomicU64,
    /// The index of the entry being applied, and of the last one applied.
    applying: AtomicU64,
    applied: Arc<Applied>,
    /// The member's replication slots (set when it starts).
    slots: OnceLock<Arc<Slots>>,
    /// The node, and the runtime it runs on (set when it starts).
    node: OnceLock<(Arc<Node>, tokio::runtime::Handle)>,
}

/// The last entry applied, for feed readers waiting on it.
#[derive(Default)]
struct Applied {
    index: Mutex<u64>,
    moved: Condvar,
}

impl Applied {
    fn get(&self) -> u64 {
        *lock(&self.index)
    }

    fn set(&self, index: u64) {
        let mut at = lock(&self.index);
        *at = (*at).max(index);
        self.moved.notify_all();
    }

    /// Waits up to `timeout` for an entry at or past `index` to be applied.
    fn wait_for(&self, index: u64, timeout: Duration) -> bool {
        let at = lock(&self.index);
        let (at, _) =
            self.moved.wait_timeout_while(at, timeout, |at| *at < index).unwrap_or_else(|p| p.into_inner());
        *at >= index
    }
}

impl Group {
    fn new() -> Arc<Group> {
        Arc::new(Group {
            queue: Mutex::new(Vec::new()),
            wake: tokio::sync::Notify::new(),
            writable: AtomicBool::new(false),
            failed: AtomicU64::new(0),
            mine: Mutex::new(HashMap::new()),
            resolved_upto: AtomicU64::new(0),
            db: OnceLock::new(),
            installed: AtomicU64::new(0),
            max_payload: AtomicU64::new(u64::MAX),
            stopping: AtomicBool::new(false),
            last_stamped: AtomicU64::new(0),
            applying: AtomicU64::new(0),
            applied: Arc::default(),
            slots: OnceLock::new(),
            node: OnceLock::new(),
        })
    }

    /// Whether this server is the primary and takes writes.
    pub(crate) fn writable(&self) -> bool {
        self.writable.load(SeqCst)
    }

    /// Resolves every record of this server's among `stamps` that nobody
    /// resolved yet as failed with `code`.
    fn fail(&self, stamps: &[u64], code: &'static str, why: &str) {
        let mut mine = lock(&self.mine);
        for ts in stamps {
            if let Some((r, delayed)) = mine.remove(ts) {
                self.failed.fetch_max(*ts, SeqCst);
                if delayed {
                    self.lost_delayed(*ts, why);
                }
                r.resolve(Err(StorageError::Replication { code, message: why.to_string() }));
            }
        }
    }

    /// A record of this server's whose commit was acknowledged already
    /// (delayed durability) and that the group may not hold: this server
    /// holds a change the group may never have, and must not serve on. It
    /// stops; started again, it rebuilds its tables from its checkpoint
    /// and the group's log. (A delayed commit lost this way is the loss
    /// delayed durability accepts, as in a crash.)
    fn lost_delayed(&self, ts: u64, why: &str) {
        if self.stopping.load(SeqCst) {
            return;
        }
        tracing::error!(
            commit_ts = ts,
            reason = why,
            "a delayed-durability commit acknowledged here may not be in the group's log: \
             this server stops, to start again from the group's log"
        );
        std::process::exit(70);
    }
}

impl centum_engine::Replicate for Group {
    fn submit(
        &self,
        mut record: Record,
        delayed: bool,
        stamp: &mut dyn FnMut() -> Result<u64, StorageError>,
    ) -> Result<Durable, StorageError> {
        let mut queue = lock(&self.queue);
        if !self.writable() {
            return Err(StorageError::Replication {
                code: "25006",
                message: "cannot commit on a standby: writes go to the primary".into(),
            });
        }
        let frames_len = record.encoded_len() as u64;
        if delayed && frames_len + 64 > self.max_payload.load(SeqCst) {
            // Refused now: acknowledged first, it could not be sent.
            return Err(StorageError::Replication {
                code: "54000",
                message: format!(
                    "a delayed commit of about {frames_len} bytes passes the replicated log's limit of {}",
                    self.max_payload.load(SeqCst)
                ),
            });
        }
        let ts = stamp()?;
        self.last_stamped.fetch_max(ts, SeqCst);
        record.set_commit_ts(ts);
        let (durable, resolver) = Durable::remote();
        queue.push(Submitted { ts, frames: record.into_frames(), resolver, delayed });
        drop(queue);
        self.wake.notify_one();
        Ok(durable)
    }

    fn failed_upto(&self) -> u64 {
        self.failed.load(SeqCst)
    }

    fn accepts_writes(&self) -> bool {
        self.writable()
    }

    fn feed(&self) -> Option<&dyn centum_engine::GroupFeed> {
        Some(self)
    }
}

impl centum_engine::GroupFeed for Group {
    fn reader(&self, from: LogPos) -> Box<dyn FeedSource> {
        Box::new(EntryReader {
            node: self.node.get().map(|(n, _)| n.clone()),
            applied: self.applied.clone(),
            pos: from,
        })
    }

    fn end(&self) -> LogPos {
        LogPos { segment: self.applied.get() + 1, offset: 0 }
    }

    fn slots(&self) -> Option<&Arc<Slots>> {
        self.slots.get()
    }

    fn order_point(&self) -> u64 {
        let _queue = lock(&self.queue);
        self.last_stamped.load(SeqCst)
    }

    fn settle(&self, ts: u64, timeout: Duration) -> centum_engine::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            // Published or undone, each record at or below `ts` was
            // resolved: by the Apply of its entry (which took it out of
            // `mine`) or as failed. Once neither the queue nor `mine` holds
            // one, the entry being applied then is the last to wait for.
            let queued = lock(&self.queue).iter().any(|s| s.ts <= ts);
            if !queued && !lock(&self.mine).keys().any(|&k| k <= ts) {
                let applying = self.applying.load(SeqCst);
                if self.applied.wait_for(applying, deadline.saturating_duration_since(Instant::now())) {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(centum_engine::Error::Canceled(
                    "the group did not settle the commits before a snapshot's cut in time",
                ));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// Reads the transactions of the entries a member has applied.
struct EntryReader {
    node: Option<Arc<Node>>,
    applied: Arc<Applied>,
    pos: LogPos,
}

impl FeedSource for EntryReader {
    fn read(&mut self) -> Result<Vec<FeedTxn>, StorageError> {
        let node = self.node.as_ref().ok_or_else(|| StorageError::Replication {
            code: "55000",
            message: "replication has not started on this member".into(),
        })?;
        let upto = self.applied.get();
        let mut out = Vec::new();
        while self.pos.segment <= upto && out.is_empty() {
            let last = upto.min(self.pos.segment + FEED_ENTRIES - 1);
            let entries = node.entries(self.pos.segment..=last).map_err(|e| StorageError::Replication {
                code: "58030",
                message: format!("cannot read the group's log: {e}"),
            })?;
            if entries.first().map(|e| e.log_id.index) != Some(self.pos.segment) {
                return Err(StorageError::LogRemoved(format!(
                    "entry {} of the group's log is no longer held by this member",
                    self.pos.segment
                )));
            }
            for entry in entries {
                let index = entry.log_id.index;
                if let centum_cluster::openraft::EntryPayload::Normal(payload) = &entry.payload {
                    let skip = if index == self.pos.segment { self.pos.offset as usize } else { 0 };
                    let txns = decode(payload)
                        .map_err(|message| StorageError::Replication { code: "XX001", message })?;
                    for (k, (ts, frames)) in txns.into_iter().enumerate().skip(skip) {
                        if ts == SLOT_CHANGE {
                            continue;
                        }
                        let at = |k: usize| LogPos { segment: index, offset: k as u64 };
                        out.push(FeedTxn::from_frames(at(k), at(k + 1), ts, frames)?);
                    }
                }
                self.pos = LogPos { segment: index + 1, offset: 0 };
            }
        }
        Ok(out)
    }

    fn wait(&self, timeout: Duration) -> bool {
        self.applied.wait_for(self.pos.segment, timeout)
    }

    fn position(&self) -> LogPos {
        self.pos
    }
}

/// The slots' way into the group's log: a change goes in an entry of its
/// own, proposed from the primary, and returns once applied here.
struct SlotChanges(Weak<Group>);

impl SlotGroup for SlotChanges {
    fn replicate(&self, change: &SlotChange) -> Result<(), StorageError> {
        let refused = |code, message: &str| StorageError::Replication { code, message: message.to_string() };
        let group = self.0.upgrade().ok_or_else(|| refused("57P01", "replication has stopped"))?;
        let (node, runtime) =
            group.node.get().ok_or_else(|| refused("55000", "replication has not started on this member"))?;
        if !group.writable() {
            return Err(refused(
                "25006",
                "replication slots are created, dropped and advanced on the primary",
            ));
        }
        let mut payload = 1u32.to_le_bytes().to_vec();
        put_txn(&mut payload, SLOT_CHANGE, &change.encode());
        let node = node.clone();
        match wait_on(runtime, async move { node.propose(payload).await }) {
            Some(Ok(_)) => Ok(()),
            Some(Err(e @ ProposeError::NotLeader { .. })) => Err(refused("25006", &e.to_string())),
            Some(Err(e @ ProposeError::Unknown(_))) => {
                Err(refused("08007", &format!("the slot change's outcome is unknown: {e}")))
            }
            Some(Err(e)) => Err(refused("55000", &format!("the slot change was not replicated: {e}"))),
            None => Err(refused("57P01", "replication has stopped")),
        }
    }
}

/// A member's image: its slots, then its tables (see the module header).
fn split_image(bytes: &[u8]) -> Result<(&[u8], &[u8]), String> {
    let len = bytes.get(..4).ok_or("a member's image is too short")?;
    let len = u32::from_le_bytes(len.try_into().map_err(|_| "a member's image is too short")?) as usize;
    let slots = bytes.get(4..4 + len).ok_or("a member's image is too short")?;
    Ok((slots, &bytes[4 + len..]))
}

/// Runs `work` on the Raft runtime and waits for it from a thread that is
/// not the runtime's; `None` if the runtime went first.
fn wait_on<T: Send + 'static>(
    runtime: &tokio::runtime::Handle,
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    runtime.spawn(async move {
        let _ = tx.send(work.await);
    });
    rx.recv().ok()
}

/// Appends one transaction to an entry's payload (see the module header).
fn put_txn(payload: &mut Vec<u8>, ts: u64, frames: &[u8]) {
    payload.extend_from_slice(&ts.to_le_bytes());
    payload.extend_from_slice(&(frames.len() as u32).to_le_bytes());
    payload.extend_from_slice(frames);
}

/// The transactions of an entry's payload.
fn decode(payload: &[u8]) -> Result<Vec<(u64, &[u8])>, String> {
    let bad = || "a replicated entry is malformed".to_string();
    let count = u32::from_le_bytes(payload.get(..4).ok_or_else(bad)?.try_into().map_err(|_| bad())?);
    let mut at = 4;
    let mut out = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let head = payload.get(at..at + 12).ok_or_else(bad)?;
        let ts = u64::from_le_bytes(head[..8].try_into().map_err(|_| bad())?);
        let len = u32::from_le_bytes(head[8..].try_into().map_err(|_| bad())?) as usize;
        out.push((ts, payload.get(at + 12..at + 12 + len).ok_or_else(bad)?));
        at += 12 + len;
    }
    (at == payload.len()).then_some(out).ok_or_else(bad)
}

impl Apply for Group {
    fn apply(&self, index: u64, payload: &[u8]) -> Result<(), String> {
        let db = self.db.get().ok_or("the database is not open yet")?;
        self.applying.store(index, SeqCst);
        for (ts, frames) in decode(payload)? {
            if ts == SLOT_CHANGE {
                let change = SlotChange::decode(frames).ok_or("a replicated slot change is malformed")?;
                let slots = self.slots.get().ok_or("the replication slots are not open yet")?;
                slots.apply(&change).map_err(|e| e.to_string())?;
                continue;
            }
            if let Some((r, _)) = lock(&self.mine).remove(&ts) {
                // Ours: the committing transaction publishes itself.
                self.resolved_upto.fetch_max(ts, SeqCst);
                r.resolve(Ok(()));
                continue;
            }
            // Another primary's record, or one of ours whose fate was not
            // known. Commits of ours resolved above publish first: no
            // snapshot may pass them while they are still pending.
            let upto = self.resolved_upto.load(SeqCst);
            if upto > 0 {
                db.catalog().db().wait_watermark(upto);
            }
            let applied = db.catalog().db().apply_frames(frames).map_err(|e| e.to_string())?;
            if applied.schema {
                db.reload_catalog().map_err(|e| e.to_string())?;
            }
        }
        self.applied.set(index);
        Ok(())
    }

    /// The tables live in memory: what survives a restart is the image
    /// Raft keeps on disk, which it installs at start.
    fn applied(&self) -> u64 {
        self.installed.load(SeqCst)
    }

    /// The oldest slot's entry: its feed reads on from there.
    fn needed_from(&self) -> u64 {
        self.slots.get().map_or(u64::MAX, |s| s.first_needed())
    }

    fn snapshot(&self) -> Result<Vec<u8>, String> {
        let db = self.db.get().ok_or("the database is not open yet")?;
        // Commits of ours that Apply resolved are in the image: the
        // watermark passes them first.
        let upto = self.resolved_upto.load(SeqCst);
        if upto > 0 {
            db.catalog().db().wait_watermark(upto);
        }
        let slots = self.slots.get().ok_or("the replication slots are not open yet")?.image();
        let tables = db.catalog().db().image().map_err(|e| e.to_string())?;
        let mut image = Vec::with_capacity(4 + slots.len() + tables.len());
        image.extend_from_slice(&(slots.len() as u32).to_le_bytes());
        image.extend_from_slice(&slots);
        image.extend_from_slice(&tables);
        Ok(image)
    }

    fn install(&self, index: u64, bytes: &[u8]) -> Result<(), String> {
        let db = self.db.get().ok_or("the database is not open yet")?;
        let (slots, tables) = split_image(bytes)?;
        self.slots
            .get()
            .ok_or("the replication slots are not open yet")?
            .install(slots)
            .map_err(|e| e.to_string())?;
        db.catalog().db().install_image(tables).map_err(|e| e.to_string())?;
        db.reload_catalog().map_err(|e| e.to_string())?;
        // Whatever of ours was still on its way is decided by the image.
        let stamps: Vec<u64> = lock(&self.mine).keys().copied().collect();
        self.fail(&stamps, "08007", "replication lost track of the commit: a snapshot replaced the tables");
        self.installed.fetch_max(index, SeqCst);
        self.applied.set(index);
        tracing::info!(index, "installed an image of the group's tables at index {index}");
        Ok(())
    }
}

/// This server's membership: the Raft node, on a runtime of its own.
pub(crate) struct Member {
    pub(crate) group: Arc<Group>,
    node: Arc<Node>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Member {
    /// The group for the engine's options; [`Member::start`] follows once
    /// the database is open.
    pub(crate) fn group() -> Arc<Group> {
        Group::new()
    }

    /// Starts the Raft node over `data_dir/raft` and the tasks that
    /// propose this server's records and follow its role.
    pub(crate) async fn start(
        config: &ClusterConfig,
        data_dir: &Path,
        group: Arc<Group>,
        db: centum_sql::Database,
        superuser: crate::config::Superuser,
    ) -> Result<Member, String> {
        let _ = group.db.set(db.clone());
        db.set_standby(true);
        let fs: Arc<dyn centum_engine::storage::Fs> = Arc::new(centum_engine::storage::StdFs);
        let changes = Arc::new(SlotChanges(Arc::downgrade(&group)));
        let slots = Slots::replicated(fs, data_dir.to_path_buf(), changes)
            .map_err(|e| format!("cannot open the replication slots: {e}"))?;
        let _ = group.slots.set(Arc::new(slots));
        let listen = *config
            .peers
            .get(&config.node_id)
            .ok_or_else(|| format!("--peers names no address for this node ({})", config.node_id))?;
        let mut nc = NodeConfig::new(config.node_id, listen, config.peers.clone(), data_dir.join("raft"));
        // Raft builds no snapshot on its own: the watcher asks for them,
        // on standbys only (see the module's header).
        nc.snapshot_every = u64::MAX;
        nc.keep_after_snapshot = config.snapshot_every.min(1000);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("centum-raft")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the replication runtime: {e}"))?;
        let apply: Arc<dyn Apply> = group.clone();
        let node = runtime
            .spawn(Node::start(nc, apply))
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()))
            .map_err(|e| format!("cannot start replication on {listen}: {e}"))?;
        let node = Arc::new(node);
        let _ = group.node.set((node.clone(), runtime.handle().clone()));
        group.max_payload.store(node.max_payload() as u64, SeqCst);
        db.set_cluster(Arc::new(Control { node: node.clone(), runtime: runtime.handle().clone() }));
        runtime.spawn(propose(group.clone(), node.clone()));
        runtime.spawn(watch(group.clone(), node.clone(), db, superuser, config.snapshot_every));
        tracing::info!(node = config.node_id, %listen, members = config.peers.len(), "replication started");
        Ok(Member { group, node, runtime: Some(runtime) })
    }

    /// Stops the node: no commit of this server's is proposed after it.
    pub(crate) async fn stop(&self) {
        self.group.stopping.store(true, SeqCst);
        self.group.writable.store(false, SeqCst);
        let node = self.node.clone();
        if let Some(rt) = &self.runtime {
            let _ = rt.spawn(async move { node.shutdown().await }).await;
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// The group as SQL sees it: the `centum.cluster` view and the
/// `centum_*` group functions (see `centum_sql::cluster`).
struct Control {
    node: Arc<Node>,
    runtime: tokio::runtime::Handle,
}

/// How long adding a member may take: it must catch up first.
const ADD_MEMBER_WITHIN: Duration = Duration::from_secs(60);

impl Control {
    /// Runs a membership change on the Raft runtime and waits for it.
    fn change<F>(&self, what: &str, change: F) -> centum_sql::Result<()>
    where
        F: std::future::Future<Output = centum_cluster::Result<()>> + Send + 'static,
    {
        let refused = |code, message: String| Err(centum_sql::Error::other(code, message));
        match wait_on(&self.runtime, tokio::time::timeout(ADD_MEMBER_WITHIN, change)) {
            Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(centum_cluster::Error::NotLeader { leader, .. }))) => refused(
                "25006",
                format!(
                    "cannot {what} on a standby: run it on the primary{}",
                    leader.map_or(String::new(), |l| format!(" (node {l})"))
                ),
            ),
            Some(Ok(Err(centum_cluster::Error::Config(why)))) => {
                refused("22023", format!("cannot {what}: {why}"))
            }
            Some(Ok(Err(e))) => refused("55000", format!("cannot {what}: {e}")),
            Some(Err(_)) => refused(
                "57014",
                format!(
                    "cannot {what}: no outcome within {} s (a new member stays a learner)",
                    ADD_MEMBER_WITHIN.as_secs()
                ),
            ),
            None => refused("55000", format!("cannot {what}: replication has stopped")),
        }
    }
}

impl centum_sql::Cluster for Control {
    fn members(&self) -> Vec<centum_sql::ClusterMember> {
        let m = self.node.metrics();
        let leading = m.role == centum_cluster::Role::Leader;
        self.node
            .members()
            .into_iter()
            .map(|(id, address, voter)| {
                let is_self = id == m.id;
                let role = match (is_self, m.role) {
                    (true, centum_cluster::Role::Leader) => "leader",
                    (true, centum_cluster::Role::Candidate) => "candidate",
                    (true, centum_cluster::Role::Learner) => "learner",
                    (true, centum_cluster::Role::Shutdown) => "shutdown",
                    _ if m.leader == Some(id) => "leader",
                    _ if !voter => "learner",
                    _ => "follower",
                };
                let durable = if is_self { m.last_log_index } else { m.matched.get(&id).copied().flatten() };
                let lag = leading.then(|| m.last_log_index.unwrap_or(0).saturating_sub(durable.unwrap_or(0)));
                centum_sql::ClusterMember {
                    id,
                    address,
                    voter,
                    role,
                    is_self,
                    term: m.term,
                    durable,
                    applied: if is_self { m.applied } else { None },
                    snapshot: if is_self { m.snapshot } else { None },
                    lag,
                }
            })
            .collect()
    }

    fn applied(&self) -> u64 {
        self.node.metrics().applied.unwrap_or(0)
    }

    fn add_member(&self, id: u64, address: &str) -> centum_sql::Result<()> {
        use std::net::ToSocketAddrs;
        let addr = address.to_socket_addrs().ok().and_then(|mut a| a.next()).ok_or_else(|| {
            centum_sql::Error::other("22023", format!("{address:?} is not a host:port address"))
        })?;
        let node = self.node.clone();
        self.change("add a member", async move { node.add_member(id, addr).await })
    }

    fn remove_member(&self, id: u64) -> centum_sql::Result<()> {
        let node = self.node.clone();
        self.change("remove a member", async move { node.remove_member(id).await })
    }
}

/// Proposes the records waiting, one entry at a time.
async fn propose(group: Arc<Group>, node: Arc<Node>) {
    loop {
        group.wake.notified().await;
        loop {
            let mut waiting = std::mem::take(&mut *lock(&group.queue));
            if waiting.is_empty() {
                break;
            }
            while !waiting.is_empty() {
                let mut size = 4;
                let take = waiting
                    .iter()
                    .position(|s| {
                        size += 12 + s.frames.len();
                        size > ENTRY_BYTES
                    })
                    .unwrap_or(waiting.len())
                    .max(1);
                let rest = waiting.split_off(take);
                let batch = std::mem::replace(&mut waiting, rest);
                let mut payload = Vec::with_capacity(size.min(ENTRY_BYTES + 64));
                payload.extend_from_slice(&(batch.len() as u32).to_le_bytes());
                let mut stamps = Vec::with_capacity(batch.len());
                {
                    let mut mine = lock(&group.mine);
                    for s in batch {
                        put_txn(&mut payload, s.ts, &s.frames);
                        stamps.push(s.ts);
                        mine.insert(s.ts, (s.resolver, s.delayed));
                    }
                }
                let outcome = node.propose(payload).await;
                if outcome.is_err() {
                    // Records stamped after a failed one may have used its
                    // changes: none of them is proposed.
                    let later: Vec<Submitted> =
                        waiting.drain(..).chain(lock(&group.queue).drain(..)).collect();
                    for s in later {
                        group.failed.fetch_max(s.ts, SeqCst);
                        if s.delayed {
                            group.lost_delayed(s.ts, "a commit before it failed to replicate");
                        }
                        s.resolver.resolve(Err(StorageError::Replication {
                            code: "40001",
                            message: "a commit before this one failed to replicate; this one was not sent"
                                .into(),
                        }));
                    }
                }
                match outcome {
                    // Apply resolved every record of the entry.
                    Ok(_) => {}
                    // Sent, then leadership moved or the wait ended: the
                    // entry may still commit under this or a new leader.
                    Err(e @ (ProposeError::Unknown(_) | ProposeError::NotLeader { .. })) => {
                        group.writable.store(false, SeqCst);
                        let why = format!("the commit's outcome is unknown: {e}");
                        group.fail(&stamps, "08007", &why);
                    }
                    Err(ProposeError::TooLarge { size, max }) => {
                        let why =
                            format!("a commit of {size} bytes passes the replicated log's limit of {max}");
                        group.fail(&stamps, "54000", &why);
                    }
                    Err(e) => {
                        group.writable.store(false, SeqCst);
                        group.fail(&stamps, "25006", &format!("the commit was not replicated: {e}"));
                    }
                }
            }
        }
    }
}

/// Follows the member's role: a leader takes writes once it has applied
/// every earlier entry and raised its clock past the term's floor; a
/// member that stops leading becomes a standby.
async fn watch(
    group: Arc<Group>,
    node: Arc<Node>,
    db: centum_sql::Database,
    superuser: crate::config::Superuser,
    snapshot_every: u64,
) {
    let mut tick = tokio::time::interval(WATCH_EVERY);
    // The applied index at which a snapshot was last asked for.
    let mut asked = 0;
    loop {
        tick.tick().await;
        if !group.writable() {
            let m = node.metrics();
            let applied = m.applied.unwrap_or(0);
            let since = applied.saturating_sub(m.snapshot.unwrap_or(0).max(asked));
            if since >= snapshot_every && !node.is_leader() {
                asked = applied;
                if let Err(e) = node.snapshot().await {
                    tracing::warn!(error = %e, "cannot start a checkpoint");
                }
            }
        }
        let leading = node.is_leader();
        if leading && !group.writable() {
            let term = node.term();
            if node.ready_for_writes(Duration::from_secs(5)).await.is_err() || node.term() != term {
                continue;
            }
            // Every entry in the log applied, its own of this term too: one
            // whose commit failed here may still commit, and it must be in
            // the tables before any transaction that could conflict with it
            // starts.
            let m = node.metrics();
            if m.applied < m.last_log_index {
                continue;
            }
            db.catalog().db().raise_clock(term << TERM_SHIFT);
            group.writable.store(true, SeqCst);
            db.set_standby(false);
            tracing::info!(term, "this server is the primary");
            let (db2, su) = (db.clone(), superuser.clone());
            let made = tokio::task::spawn_blocking(move || {
                if let Err(e) = db2.finish_rewrites() {
                    tracing::warn!(error = %e, "cannot finish an interrupted column change yet");
                }
                crate::server::ensure_superuser(&db2, &su)
            })
            .await;
            if let Ok(Err(e)) = made {
                tracing::warn!(error = %e, "cannot create the superuser role yet");
            }
        } else if !leading && group.writable() {
            group.writable.store(false, SeqCst);
        }
        if !group.writable() && !db.is_standby() {
            db.set_standby(true);
            tracing::info!(leader = ?node.leader(), "this server is a standby");
        }
    }
}
