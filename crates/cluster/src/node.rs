//! One member of a Centum Raft group.
//!
//! [`Node`] ties the pieces together: it opens the durable log
//! ([`crate::log_store`]), wraps the database's [`Apply`] in the state
//! machine adapter ([`crate::state_machine`]), starts openraft with timing
//! suited to a local network, and serves Raft RPCs on the member's address
//! ([`crate::network`]).
//!
//! **Cluster formation.** Membership is static and given by
//! [`NodeConfig::peers`]. The first time a cluster starts — no vote and no
//! log in any member's directory — the member with the smallest id writes the
//! initial membership (all peers as voters) and starts the first election;
//! the others join when they hear from it. A member restarted on an existing
//! directory never initializes again: it resumes from its vote and log.
//!
//! **Writes.** [`Node::propose`] is only served by the leader. It returns the
//! entry's log index once a majority has the entry on disk and the local
//! database has applied it. Callers simply run proposals concurrently: they
//! queue in the Raft core while the leader syncs its log, replication ships
//! everything queued since the last round in one AppendEntries (up to 300
//! entries), and each follower stores such a batch with one sync. (The
//! openraft 0.9 core writes and syncs the leader's own log once per
//! proposal, so the leader's sync latency bounds the proposal rate.)
//!
//! **Leadership changes.** A member that has just become leader may not yet
//! have applied everything committed under earlier leaders;
//! [`Node::ready_for_writes`] waits until it has (openraft's linearizable
//! barrier: the leader's first entry of its term is committed and applied),
//! after which its database state is the complete committed history.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use openraft::error::{CheckIsLeaderError, ClientWriteError, InitializeError, RaftError};
use openraft::{BasicNode, RaftMetrics, ServerState, SnapshotPolicy};
use tokio::net::TcpListener;
use tokio::sync::Mutex as AsyncMutex;

use crate::error::{Error, ProposeError, Result};
use crate::log_store::{LogReader, LogStore};
use crate::network::{serve, NetworkFactory, RpcServer};
use crate::state_machine::{Apply, ApplyGate, StateMachine};
use crate::Raft;

/// Configuration of one member.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// This member's id; must be a key of `peers`.
    pub id: u64,
    /// Address the Raft RPC server binds to.
    pub listen: SocketAddr,
    /// Every member (this one included) and the Raft address others reach it at.
    pub peers: BTreeMap<u64, SocketAddr>,
    /// Directory holding the Raft log, vote and state machine metadata.
    pub dir: PathBuf,
    /// Interval of the leader's heartbeats; also the time-to-live of one
    /// AppendEntries RPC.
    pub heartbeat: Duration,
    /// Lower bound of the randomized election timeout.
    pub election_timeout_min: Duration,
    /// Upper bound of the randomized election timeout.
    pub election_timeout_max: Duration,
    /// Build a snapshot after this many entries since the last one.
    pub snapshot_every: u64,
    /// Entries kept in the log below a snapshot, for followers slightly behind.
    pub keep_after_snapshot: u64,
    /// Longest wait for a proposal's outcome before reporting it unknown.
    pub propose_timeout: Duration,
    /// Largest payload accepted by [`Node::propose`]. An entry travels in one
    /// AppendEntries RPC, whose time-to-live is the heartbeat interval, so it
    /// must be transferable and syncable well within that.
    pub max_payload: usize,
    /// Longest wait for a TCP connection to a peer.
    pub connect_timeout: Duration,
    /// Pause before retrying a peer found unreachable.
    pub unreachable_backoff: Duration,
}

impl NodeConfig {
    /// A configuration with defaults suited to members on one host or a
    /// local network: 150 ms heartbeats, elections after 450–900 ms of
    /// silence, a snapshot every 100,000 entries.
    pub fn new(
        id: u64,
        listen: SocketAddr,
        peers: BTreeMap<u64, SocketAddr>,
        dir: impl Into<PathBuf>,
    ) -> Self {
        NodeConfig {
            id,
            listen,
            peers,
            dir: dir.into(),
            heartbeat: Duration::from_millis(150),
            election_timeout_min: Duration::from_millis(450),
            election_timeout_max: Duration::from_millis(900),
            snapshot_every: 100_000,
            keep_after_snapshot: 1_000,
            propose_timeout: Duration::from_secs(10),
            max_payload: 16 << 20,
            connect_timeout: Duration::from_millis(500),
            unreachable_backoff: Duration::from_millis(200),
        }
    }

    fn raft_config(&self) -> Result<openraft::Config> {
        let ms = |d: Duration| d.as_millis() as u64;
        let c = openraft::Config {
            cluster_name: "centum".into(),
            heartbeat_interval: ms(self.heartbeat),
            election_timeout_min: ms(self.election_timeout_min),
            election_timeout_max: ms(self.election_timeout_max),
            install_snapshot_timeout: 10_000,
            snapshot_policy: SnapshotPolicy::LogsSinceLast(self.snapshot_every.max(1)),
            max_in_snapshot_log_to_keep: self.keep_after_snapshot,
            ..Default::default()
        };
        c.validate().map_err(|e| Error::Config(e.to_string()))
    }
}

/// Role of a member in its Raft group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Leader,
    Follower,
    Candidate,
    Learner,
    /// The member has stopped.
    Shutdown,
}

/// A point-in-time view of a member's Raft state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metrics {
    pub id: u64,
    pub role: Role,
    pub term: u64,
    pub leader: Option<u64>,
    /// Index of the last entry in the local log.
    pub last_log_index: Option<u64>,
    /// Highest index known committed by this member.
    pub committed: Option<u64>,
    /// Highest index applied to the local database.
    pub applied: Option<u64>,
    /// Index of the latest snapshot this member holds.
    pub snapshot: Option<u64>,
    /// Per member, the highest index known to be stored there (leader only;
    /// empty otherwise).
    pub matched: BTreeMap<u64, Option<u64>>,
}

/// One running member of a Raft group.
pub struct Node {
    id: u64,
    raft: Raft,
    peers: BTreeMap<u64, SocketAddr>,
    local_addr: SocketAddr,
    committed: Arc<AtomicU64>,
    server: AsyncMutex<Option<RpcServer>>,
    stopping: AtomicBool,
    propose_timeout: Duration,
    max_payload: usize,
    gate: ApplyGate,
    /// Reads the log for the database (its change feed).
    log: LogReader,
}

impl Node {
    /// Starts a member: binds `config.listen`, opens the Raft directory and
    /// joins (or, on first start and with the smallest id, forms) the group.
    pub async fn start(config: NodeConfig, apply: Arc<dyn Apply>) -> Result<Node> {
        let listener = TcpListener::bind(config.listen).await?;
        Self::start_with_listener(config, listener, apply).await
    }

    /// Like [`Node::start`] but serves Raft RPCs on an already bound
    /// listener (`config.listen` is then not used).
    pub async fn start_with_listener(
        config: NodeConfig,
        listener: TcpListener,
        apply: Arc<dyn Apply>,
    ) -> Result<Node> {
        let id = config.id;
        if !config.peers.contains_key(&id) {
            return Err(Error::Config(format!("node {id} is not among the peers {:?}", config.peers)));
        }
        let raft_config = config.raft_config()?;
        let local_addr = listener.local_addr()?;

        let mut log = LogStore::open(&config.dir)?;
        log.forget_leadership(id);
        let floor = apply.clone();
        let pristine = log.is_pristine();
        let reader = log.reader();
        let committed = log.committed_cell();
        let state_machine = StateMachine::open(&config.dir, apply, &log)?;
        // Entries may go once the database holds them durably, or a
        // snapshot on disk does, and no reader of the log needs them.
        let snapshot = state_machine.snapshot_floor();
        log.set_purge_floor(Arc::new(move || {
            let held = floor.applied().max(snapshot.load(Ordering::SeqCst));
            held.min(floor.needed_from().saturating_sub(1))
        }));
        let gate = state_machine.gate();

        let network = NetworkFactory::new(id, config.connect_timeout, config.unreachable_backoff);
        let raft = Raft::new(id, Arc::new(raft_config), network, log, state_machine)
            .await
            .map_err(|e| Error::Raft(e.to_string()))?;
        let server = serve(listener, raft.clone());

        let node = Node {
            id,
            raft,
            peers: config.peers.clone(),
            local_addr,
            committed,
            server: AsyncMutex::new(Some(server)),
            stopping: AtomicBool::new(false),
            propose_timeout: config.propose_timeout,
            max_payload: config
                .max_payload
                .min(crate::log_store::MAX_RECORD_LEN - crate::log_store::RECORD_HEADER_LEN),
            gate,
            log: reader,
        };

        let smallest = config.peers.keys().next().copied();
        if pristine && smallest == Some(id) {
            let members: BTreeMap<u64, BasicNode> =
                config.peers.iter().map(|(&peer, addr)| (peer, BasicNode::new(addr))).collect();
            match node.raft.initialize(members).await {
                Ok(()) => tracing::info!(id, "initialized a new cluster"),
                Err(RaftError::APIError(InitializeError::NotAllowed(_))) => {}
                Err(e) => {
                    let _ = node.shutdown().await;
                    return Err(Error::Raft(format!("initializing the cluster: {e}")));
                }
            }
        }
        Ok(node)
    }

    /// The entries of this member's log with indexes in `range`, those it
    /// still holds (entries below a snapshot may have been purged; see
    /// [`Apply::needed_from`]). Whether they are committed is for the
    /// caller to know: it reads what it has applied.
    pub fn entries(&self, range: impl std::ops::RangeBounds<u64>) -> Result<Vec<crate::Entry>> {
        self.log.entries(range)
    }

    /// This member's id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The largest payload [`Node::propose`] takes.
    pub fn max_payload(&self) -> usize {
        self.max_payload
    }

    /// The address the Raft RPC server is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The underlying openraft handle, for operations this type does not
    /// wrap (membership changes, triggering snapshots).
    pub fn raft(&self) -> &Raft {
        &self.raft
    }

    fn peer_addr(&self, leader: Option<u64>, node: Option<&BasicNode>) -> Option<SocketAddr> {
        leader.and_then(|l| self.peers.get(&l).copied()).or_else(|| node.and_then(|n| n.addr.parse().ok()))
    }

    /// Replicates `payload` as a new log entry. Returns its index once a
    /// majority stores it durably and the local [`Apply`] has applied it.
    pub async fn propose(&self, payload: Vec<u8>) -> std::result::Result<u64, ProposeError> {
        if self.stopping.load(Ordering::Acquire) {
            return Err(ProposeError::ShuttingDown);
        }
        if payload.len() > self.max_payload {
            return Err(ProposeError::TooLarge { size: payload.len(), max: self.max_payload });
        }
        let rx = self.raft.client_write_ff(payload).await.map_err(|_| ProposeError::ShuttingDown)?;
        match tokio::time::timeout(self.propose_timeout, rx).await {
            Err(_) => Err(ProposeError::Unknown(format!("no outcome within {:?}", self.propose_timeout))),
            Ok(Err(_)) => Err(ProposeError::Unknown("raft stopped while the entry was in flight".into())),
            Ok(Ok(Ok(resp))) => Ok(resp.log_id.index),
            Ok(Ok(Err(ClientWriteError::ForwardToLeader(f)))) => Err(ProposeError::NotLeader {
                leader: f.leader_id,
                addr: self.peer_addr(f.leader_id, f.leader_node.as_ref()),
            }),
            Ok(Ok(Err(e @ ClientWriteError::ChangeMembershipError(_)))) => {
                Err(ProposeError::Unknown(e.to_string()))
            }
        }
    }

    fn raft_metrics(&self) -> RaftMetrics<u64, BasicNode> {
        self.raft.metrics().borrow().clone()
    }

    /// True while this member is the leader.
    pub fn is_leader(&self) -> bool {
        self.raft.metrics().borrow().state == ServerState::Leader
    }

    /// The leader this member knows of.
    pub fn leader(&self) -> Option<u64> {
        self.raft.metrics().borrow().current_leader
    }

    /// The current term.
    pub fn term(&self) -> u64 {
        self.raft.metrics().borrow().current_term
    }

    /// A snapshot of this member's Raft state.
    pub fn metrics(&self) -> Metrics {
        let m = self.raft_metrics();
        let role = match m.state {
            ServerState::Leader => Role::Leader,
            ServerState::Follower => Role::Follower,
            ServerState::Candidate => Role::Candidate,
            ServerState::Learner => Role::Learner,
            ServerState::Shutdown => Role::Shutdown,
        };
        let committed = self.committed.load(Ordering::Acquire).checked_sub(1);
        let matched = m
            .replication
            .as_ref()
            .map(|r| r.iter().map(|(&id, log_id)| (id, log_id.map(|l| l.index))).collect())
            .unwrap_or_default();
        Metrics {
            id: m.id,
            role,
            term: m.current_term,
            leader: m.current_leader,
            last_log_index: m.last_log_index,
            committed,
            applied: m.last_applied.map(|l| l.index),
            snapshot: m.snapshot.map(|l| l.index),
            matched,
        }
    }

    /// Asks Raft to build a snapshot of this member's database now (it is
    /// written to disk, and the log below it may then be purged); returns
    /// at once. A call while one is being built is ignored.
    pub async fn snapshot(&self) -> Result<()> {
        self.raft.trigger().snapshot().await.map_err(|e| Error::Raft(e.to_string()))
    }

    /// The members of the group as this member last applied them: id,
    /// replication address, and whether it votes (a member being added
    /// learns the log first, without a vote).
    pub fn members(&self) -> Vec<(u64, String, bool)> {
        let m = self.raft.metrics().borrow().membership_config.clone();
        let voters: std::collections::BTreeSet<u64> = m.membership().voter_ids().collect();
        m.membership().nodes().map(|(&id, n)| (id, n.addr.clone(), voters.contains(&id))).collect()
    }

    /// Adds member `id`, reachable at `addr`, on the leader: it first
    /// receives the log (a snapshot and the entries after it, or the
    /// entries) as a learner, then becomes a voter once it has caught up.
    /// Returns once the new configuration is committed.
    pub async fn add_member(&self, id: u64, addr: SocketAddr) -> Result<()> {
        let node = BasicNode::new(addr);
        self.raft.add_learner(id, node, true).await.map_err(|e| self.change_error(e))?;
        let mut voters: std::collections::BTreeSet<u64> =
            self.raft.metrics().borrow().membership_config.membership().voter_ids().collect();
        voters.insert(id);
        self.raft.change_membership(voters, false).await.map_err(|e| self.change_error(e))?;
        Ok(())
    }

    /// Removes member `id` from the group, on the leader. Returns once the
    /// new configuration is committed; the member removed stops getting
    /// entries (a leader that removes itself steps down).
    pub async fn remove_member(&self, id: u64) -> Result<()> {
        let mut voters: std::collections::BTreeSet<u64> =
            self.raft.metrics().borrow().membership_config.membership().voter_ids().collect();
        if !voters.remove(&id) {
            return Err(Error::Config(format!("node {id} is not a voting member of the group")));
        }
        if voters.is_empty() {
            return Err(Error::Config("the group's last member cannot be removed".into()));
        }
        self.raft.change_membership(voters, false).await.map_err(|e| self.change_error(e))?;
        Ok(())
    }

    fn change_error(&self, e: RaftError<u64, ClientWriteError<u64, BasicNode>>) -> Error {
        match e {
            RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => Error::NotLeader {
                leader: f.leader_id,
                addr: self.peer_addr(f.leader_id, f.leader_node.as_ref()),
            },
            RaftError::APIError(ClientWriteError::ChangeMembershipError(c)) => Error::Config(c.to_string()),
            RaftError::Fatal(_) => Error::ShuttingDown,
        }
    }

    /// Waits until this member knows a leader; returns its id.
    pub async fn wait_leader(&self, timeout: Duration) -> Result<u64> {
        let mut rx = self.raft.metrics();
        let wait = async {
            loop {
                let (leader, state) = {
                    let m = rx.borrow_and_update();
                    (m.current_leader, m.state)
                };
                if state == ServerState::Shutdown {
                    return Err(Error::ShuttingDown);
                }
                if let Some(l) = leader {
                    return Ok(l);
                }
                if rx.changed().await.is_err() {
                    return Err(Error::ShuttingDown);
                }
            }
        };
        tokio::time::timeout(timeout, wait)
            .await
            .map_err(|_| Error::Timeout(format!("no leader known to node {} within {timeout:?}", self.id)))?
    }

    /// Waits until this member, as leader, has confirmed its leadership with
    /// a majority and applied every entry committed before its term. Returns
    /// the index applied at that point.
    pub async fn ready_for_writes(&self, timeout: Duration) -> Result<u64> {
        if self.stopping.load(Ordering::Acquire) {
            return Err(Error::ShuttingDown);
        }
        match tokio::time::timeout(timeout, self.raft.ensure_linearizable()).await {
            Err(_) => {
                Err(Error::Timeout(format!("node {} not ready for writes within {timeout:?}", self.id)))
            }
            Ok(Ok(read_log_id)) => Ok(read_log_id.map_or(0, |l| l.index)),
            Ok(Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(f)))) => Err(Error::NotLeader {
                leader: f.leader_id,
                addr: self.peer_addr(f.leader_id, f.leader_node.as_ref()),
            }),
            Ok(Err(RaftError::APIError(e @ CheckIsLeaderError::QuorumNotEnough(_)))) => {
                Err(Error::Raft(format!("leadership not confirmed: {e}")))
            }
            Ok(Err(RaftError::Fatal(_))) => Err(Error::ShuttingDown),
        }
    }

    /// Stops the RPC server and Raft. Proposals made afterwards fail with
    /// [`ProposeError::ShuttingDown`]. Once this returns, the Raft directory
    /// is released and the [`Apply`] is not called again.
    pub async fn shutdown(&self) -> Result<()> {
        self.stopping.store(true, Ordering::Release);
        if let Some(mut server) = self.server.lock().await.take() {
            server.stop().await;
        }
        let stopped =
            self.raft.shutdown().await.map_err(|e| Error::Raft(format!("raft core task failed: {e}")));
        let gate = self.gate.clone();
        let _ = tokio::task::spawn_blocking(move || gate.close()).await;
        stopped
    }
}
