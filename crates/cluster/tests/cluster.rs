//! Three-member groups in one process on 127.0.0.1: ordering of concurrent
//! proposals, failover with a restarted member catching up, and proposals
//! refused by followers.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use centum_cluster::{Apply, Node, NodeConfig, ProposeError, Role};
use tokio::net::TcpListener;

/// What a [`Recorder`] holds: the applied position and every (index,
/// payload) applied, in order.
type Recorded = (u64, Vec<(u64, Vec<u8>)>);

/// A database stand-in that records what it is given. Its state is its
/// "durable" state: a restarted member gets a recorder holding the same.
#[derive(Default)]
struct Recorder {
    state: Mutex<Recorded>,
    /// Indexes passed to `apply` in this process lifetime.
    calls: Mutex<Vec<u64>>,
    /// Indexes of snapshots installed in this process lifetime.
    installs: Mutex<Vec<u64>>,
}

impl Recorder {
    fn with(state: Recorded) -> Self {
        Recorder { state: Mutex::new(state), ..Default::default() }
    }

    fn state(&self) -> Recorded {
        self.state.lock().unwrap().clone()
    }

    fn entries(&self) -> Vec<(u64, Vec<u8>)> {
        self.state.lock().unwrap().1.clone()
    }

    fn calls(&self) -> Vec<u64> {
        self.calls.lock().unwrap().clone()
    }

    fn installs(&self) -> Vec<u64> {
        self.installs.lock().unwrap().clone()
    }
}

impl Apply for Recorder {
    fn apply(&self, index: u64, payload: &[u8]) -> Result<(), String> {
        let mut state = self.state.lock().unwrap();
        if index <= state.0 && state.0 != 0 {
            return Err(format!("index {index} applied after {}", state.0));
        }
        state.0 = index;
        state.1.push((index, payload.to_vec()));
        self.calls.lock().unwrap().push(index);
        Ok(())
    }

    fn applied(&self) -> u64 {
        self.state.lock().unwrap().0
    }

    fn snapshot(&self) -> Result<Vec<u8>, String> {
        serde_json::to_vec(&*self.state.lock().unwrap()).map_err(|e| e.to_string())
    }

    fn install(&self, index: u64, bytes: &[u8]) -> Result<(), String> {
        let (at, entries): Recorded = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if at > index {
            return Err(format!("image taken at {at} installed as of {index}"));
        }
        *self.state.lock().unwrap() = (index, entries);
        self.installs.lock().unwrap().push(index);
        Ok(())
    }
}

struct Member {
    node: Option<Arc<Node>>,
    recorder: Arc<Recorder>,
    dir: tempfile::TempDir,
}

struct Cluster {
    peers: BTreeMap<u64, SocketAddr>,
    members: BTreeMap<u64, Member>,
    tweak: fn(&mut NodeConfig),
}

impl Cluster {
    async fn start(n: u64) -> Cluster {
        Self::start_with(n, |_| {}).await
    }

    fn config(&self, id: u64, dir: &std::path::Path) -> NodeConfig {
        let mut c = NodeConfig::new(id, self.peers[&id], self.peers.clone(), dir);
        (self.tweak)(&mut c);
        c
    }

    /// Starts member `id` again on its directory with a database holding `state`.
    async fn restart(&mut self, id: u64, state: Recorded) -> Arc<Recorder> {
        let recorder = Arc::new(Recorder::with(state));
        let listener = TcpListener::bind(self.peers[&id]).await.unwrap();
        let config = self.config(id, self.members[&id].dir.path());
        let node = Node::start_with_listener(config, listener, recorder.clone()).await.unwrap();
        let member = self.members.get_mut(&id).unwrap();
        member.node = Some(Arc::new(node));
        member.recorder = recorder.clone();
        recorder
    }

    async fn start_with(n: u64, tweak: fn(&mut NodeConfig)) -> Cluster {
        let mut listeners = BTreeMap::new();
        for id in 1..=n {
            listeners.insert(id, TcpListener::bind("127.0.0.1:0").await.unwrap());
        }
        let peers: BTreeMap<u64, SocketAddr> =
            listeners.iter().map(|(&id, l)| (id, l.local_addr().unwrap())).collect();
        let mut cluster = Cluster { peers, members: BTreeMap::new(), tweak };
        for (id, listener) in listeners {
            let dir = tempfile::tempdir().unwrap();
            let recorder = Arc::new(Recorder::default());
            let config = cluster.config(id, dir.path());
            let node = Node::start_with_listener(config, listener, recorder.clone()).await.unwrap();
            cluster.members.insert(id, Member { node: Some(Arc::new(node)), recorder, dir });
        }
        cluster
    }

    fn node(&self, id: u64) -> Arc<Node> {
        self.members[&id].node.clone().expect("member is running")
    }

    fn running(&self) -> Vec<Arc<Node>> {
        self.members.values().filter_map(|m| m.node.clone()).collect()
    }

    /// Waits for a running member to be leader and ready for writes.
    async fn leader(&self, within: Duration) -> Arc<Node> {
        let start = Instant::now();
        loop {
            if let Some(n) = self.running().into_iter().find(|n| n.is_leader()) {
                let left = within.saturating_sub(start.elapsed()).max(Duration::from_millis(100));
                if n.ready_for_writes(left).await.is_ok() {
                    return n;
                }
            }
            assert!(start.elapsed() < within, "no leader within {within:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits until every running member has applied `count` entries.
    async fn all_applied(&self, count: usize, within: Duration) {
        let start = Instant::now();
        while self.members.values().filter(|m| m.node.is_some()).any(|m| m.recorder.entries().len() < count) {
            assert!(start.elapsed() < within, "members did not apply {count} entries in time");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn stop(&mut self, id: u64) {
        let node = self.members.get_mut(&id).unwrap().node.take().unwrap();
        node.shutdown().await.unwrap();
    }

    async fn shutdown(mut self) {
        let ids: Vec<u64> = self.members.keys().copied().collect();
        for id in ids {
            if self.members[&id].node.is_some() {
                self.stop(id).await;
            }
        }
    }
}

/// Proposes `count` distinct payloads from `tasks` concurrent tasks and
/// returns (index, payload) as reported by `propose`.
async fn propose_many(leader: &Arc<Node>, tag: &str, tasks: usize, count: usize) -> Vec<(u64, Vec<u8>)> {
    let mut handles = Vec::new();
    for t in 0..tasks {
        let leader = leader.clone();
        let tag = tag.to_string();
        handles.push(tokio::spawn(async move {
            let mut out = Vec::new();
            for k in (t..count).step_by(tasks) {
                let payload = format!("{tag}-{k}").into_bytes();
                let index = leader.propose(payload.clone()).await.expect("proposal commits");
                out.push((index, payload));
            }
            out
        }));
    }
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.await.unwrap());
    }
    all.sort();
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_proposals_are_applied_in_one_order_everywhere() {
    let cluster = Cluster::start(3).await;
    let leader = cluster.leader(Duration::from_secs(10)).await;
    let proposed = propose_many(&leader, "txn", 8, 200).await;
    assert_eq!(proposed.len(), 200);

    cluster.all_applied(200, Duration::from_secs(10)).await;
    let reference = cluster.members[&leader.id()].recorder.entries();
    assert_eq!(reference, proposed, "the leader applied what propose reported, in index order");
    for (id, m) in &cluster.members {
        assert_eq!(m.recorder.entries(), reference, "member {id} applied a different sequence");
    }
    let m = leader.metrics();
    assert_eq!(m.role, Role::Leader);
    let last = reference.last().unwrap().0;
    assert!(m.committed >= Some(last) && m.applied >= Some(last), "{m:?}");
    assert_eq!(m.matched.len(), 3, "{m:?}");
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn follower_refuses_proposals_and_names_the_leader() {
    let cluster = Cluster::start(3).await;
    let leader = cluster.leader(Duration::from_secs(10)).await;
    leader.propose(b"first".to_vec()).await.unwrap();
    let follower = cluster.running().into_iter().find(|n| n.id() != leader.id()).unwrap();
    follower.wait_leader(Duration::from_secs(5)).await.unwrap();
    assert_eq!(follower.leader(), Some(leader.id()));
    match follower.propose(b"misdirected".to_vec()).await {
        Err(ProposeError::NotLeader { leader: l, addr }) => {
            assert_eq!(l, Some(leader.id()));
            assert_eq!(addr, Some(cluster.peers[&leader.id()]));
        }
        other => panic!("expected NotLeader, got {other:?}"),
    }
    match leader.propose(vec![7; (16 << 20) + 1]).await {
        Err(ProposeError::TooLarge { size, max }) => assert_eq!((size, max), ((16 << 20) + 1, 16 << 20)),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert!(matches!(
        follower.ready_for_writes(Duration::from_secs(2)).await,
        Err(centum_cluster::Error::NotLeader { .. })
    ));
    assert_eq!(follower.metrics().role, Role::Follower);
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn failover_elects_a_new_leader_and_the_old_one_catches_up() {
    let mut cluster = Cluster::start(3).await;
    let old = cluster.leader(Duration::from_secs(10)).await;
    let old_id = old.id();
    drop(old);
    let first = propose_many(&cluster.node(old_id), "before", 4, 40).await;
    cluster.all_applied(40, Duration::from_secs(10)).await;

    let old_term = cluster.node(old_id).term();
    let stopped_at = Instant::now();
    cluster.stop(old_id).await;
    let held = cluster.members[&old_id].recorder.state();
    assert_eq!(held.1, first);

    let new = cluster.leader(Duration::from_secs(10)).await;
    let elected_after = stopped_at.elapsed();
    println!("new leader {} elected {elected_after:?} after leader {old_id} stopped", new.id());
    assert!(elected_after < Duration::from_secs(10), "election took {elected_after:?}");
    assert_ne!(new.id(), old_id);
    assert!(new.term() > old_term);

    let second = propose_many(&new, "after", 4, 40).await;
    assert!(second.first().unwrap().0 > first.last().unwrap().0);

    // The old leader comes back on its directory; its database still holds
    // what it had applied.
    let recorder = cluster.restart(old_id, held).await;

    cluster.all_applied(80, Duration::from_secs(10)).await;
    let reference = cluster.members[&new.id()].recorder.entries();
    let mut expected = first.clone();
    expected.extend(second.clone());
    assert_eq!(reference, expected);
    for (id, m) in &cluster.members {
        assert_eq!(m.recorder.entries(), reference, "member {id}");
    }
    // The restarted member applied exactly what it had not applied before.
    assert_eq!(recorder.calls(), second.iter().map(|(i, _)| *i).collect::<Vec<_>>());
    assert!(recorder.installs().is_empty());
    assert_eq!(cluster.node(old_id).leader(), Some(new.id()));
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn member_behind_the_purged_log_catches_up_from_a_snapshot() {
    let mut cluster = Cluster::start_with(3, |c| {
        c.snapshot_every = 25;
        c.keep_after_snapshot = 5;
    })
    .await;
    let leader = cluster.leader(Duration::from_secs(10)).await;
    let first = propose_many(&leader, "early", 2, 10).await;
    cluster.all_applied(10, Duration::from_secs(10)).await;

    let lagging = cluster.running().into_iter().find(|n| n.id() != leader.id()).unwrap().id();
    cluster.stop(lagging).await;
    let held = cluster.members[&lagging].recorder.state();
    assert_eq!(held.1, first);

    // Enough entries for several snapshots; the leader purges its log.
    let second = propose_many(&leader, "late", 4, 120).await;
    let start = Instant::now();
    while leader.raft().metrics().borrow().purged.is_none_or(|p| p.index <= held.0) {
        assert!(start.elapsed() < Duration::from_secs(10), "the leader did not purge its log");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let recorder = cluster.restart(lagging, held).await;
    cluster.all_applied(130, Duration::from_secs(10)).await;
    let installs = recorder.installs();
    assert!(!installs.is_empty(), "the lagging member was sent a snapshot");
    let mut expected = first;
    expected.extend(second);
    for (id, m) in &cluster.members {
        assert_eq!(m.recorder.entries(), expected, "member {id}");
    }
    // After the snapshot, only later entries went through `apply`.
    assert!(recorder.calls().iter().all(|&i| i > installs[0]));
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_large_backlog_is_sent_in_batches_within_the_byte_budget() {
    let mut cluster = Cluster::start(3).await;
    let leader = cluster.leader(Duration::from_secs(10)).await;
    let lagging = cluster.running().into_iter().find(|n| n.id() != leader.id()).unwrap().id();
    cluster.stop(lagging).await;
    let held = cluster.members[&lagging].recorder.state();

    // 24 entries of 512 KiB: 12 MiB of backlog for the lagging member, more
    // than one AppendEntries may carry.
    let mut proposed = Vec::new();
    for round in 0..3 {
        let mut handles = Vec::new();
        for k in 0..8u8 {
            let leader = leader.clone();
            handles.push(tokio::spawn(async move {
                let payload = vec![round * 8 + k; 512 << 10];
                (leader.propose(payload.clone()).await.unwrap(), payload)
            }));
        }
        for h in handles {
            proposed.push(h.await.unwrap());
        }
    }
    proposed.sort();

    cluster.restart(lagging, held).await;
    cluster.all_applied(24, Duration::from_secs(10)).await;
    for (id, m) in &cluster.members {
        assert_eq!(m.recorder.entries(), proposed, "member {id}");
    }
    cluster.shutdown().await;
}
