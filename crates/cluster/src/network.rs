//! Raft RPCs between cluster members over TCP.
//!
//! Members talk through three request kinds — AppendEntries (replication and
//! heartbeats), Vote (elections) and InstallSnapshot (catching up a member
//! that is too far behind) — each answered by one response on the same
//! connection. Frames are length-prefixed; integers are little-endian:
//!
//! ```text
//! request   u32 len | u8 kind | u32 hlen | header (JSON, hlen bytes) | tail
//!           kind 1 AppendEntries:   header {vote, prev_log_id, leader_commit},
//!                                   tail = the entries, each framed exactly as
//!                                   in the log file (len, CRC-32C, record)
//!           kind 2 Vote:            header = the vote request, empty tail
//!           kind 3 InstallSnapshot: header {vote, meta, offset, done},
//!                                   tail = the raw chunk bytes
//! response  u32 len | u8 status | JSON
//!           status 0: the response, 1: the Raft error the receiver returned
//! ```
//!
//! Payload bytes travel as raw bytes, never as JSON arrays; JSON is kept for
//! the small, rarely-changing control parts.
//!
//! The sending side ([`PeerClient`]) keeps one connection per Raft client,
//! which openraft holds per peer for its replication stream, and opens it
//! lazily. Every call runs under the time-to-live openraft gives it. A
//! failed or timed-out connection is dropped (a response may still be in
//! flight on it) and the next call reconnects; a reused connection that turns
//! out to be dead is retried once on a fresh one. A peer that cannot be
//! connected to yields openraft's `Unreachable`, which makes replication back
//! off instead of hammering a dead member.
//!
//! The receiving side ([`serve`]) accepts connections on the member's Raft
//! address and serves each in its own task, handing requests to the local
//! Raft instance in arrival order.

use std::net::SocketAddr;
use std::time::Duration;

use openraft::error::{
    Infallible, InstallSnapshotError, NetworkError, PayloadTooLarge, RPCError, RaftError, RemoteError,
    Timeout, Unreachable,
};
use openraft::network::{Backoff, RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::{BasicNode, RPCTypes, SnapshotMeta};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use crate::log_store::{decode_entries, encode_entry};
use crate::{LogId, Raft, TypeConfig, Vote};

const KIND_APPEND: u8 = 1;
const KIND_VOTE: u8 = 2;
const KIND_SNAPSHOT: u8 = 3;
const STATUS_OK: u8 = 0;
const STATUS_ERR: u8 = 1;
/// Largest accepted frame (a batch of entries or a snapshot chunk).
const MAX_FRAME: usize = (1 << 30) + (1 << 20);
/// Byte budget of one AppendEntries request. A larger batch is refused with
/// openraft's `PayloadTooLarge` and a hint of how many entries fit, so that
/// every request can complete within its time-to-live (the heartbeat
/// interval). A single entry is always sent, whatever its size.
const APPEND_BUDGET: usize = 4 << 20;

#[derive(Serialize, Deserialize)]
struct AppendHeader {
    vote: Vote,
    prev_log_id: Option<LogId>,
    leader_commit: Option<LogId>,
}

#[derive(Serialize, Deserialize)]
struct SnapshotHeader {
    vote: Vote,
    meta: SnapshotMeta<u64, BasicNode>,
    offset: u64,
    done: bool,
}

async fn read_frame(stream: &mut TcpStream) -> std::io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match stream.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len == 0 || len > MAX_FRAME {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("frame of {len} bytes")));
    }
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body).await?;
    Ok(Some(body))
}

fn json<T: Serialize>(v: &T) -> std::io::Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(std::io::Error::other)
}

/// Starts a request frame of `kind` with its JSON header; the caller appends
/// the tail and then calls [`finish_frame`].
fn start_request(kind: u8, header: &[u8]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(9 + header.len());
    buf.extend_from_slice(&[0; 4]);
    buf.push(kind);
    buf.extend_from_slice(&(header.len() as u32).to_le_bytes());
    buf.extend_from_slice(header);
    buf
}

fn finish_frame(mut buf: Vec<u8>) -> std::io::Result<Vec<u8>> {
    let len = buf.len() - 4;
    if len > MAX_FRAME {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("request of {len} bytes")));
    }
    buf[..4].copy_from_slice(&(len as u32).to_le_bytes());
    Ok(buf)
}

// ---------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------

/// Creates one [`PeerClient`] per peer Raft asks for.
pub struct NetworkFactory {
    id: u64,
    connect_timeout: Duration,
    backoff: Duration,
}

impl NetworkFactory {
    /// A factory for member `id`; connecting gives up after
    /// `connect_timeout`, and a peer found unreachable is retried after
    /// `backoff`.
    pub fn new(id: u64, connect_timeout: Duration, backoff: Duration) -> Self {
        NetworkFactory { id, connect_timeout, backoff }
    }
}

impl RaftNetworkFactory<TypeConfig> for NetworkFactory {
    type Network = PeerClient;

    async fn new_client(&mut self, target: u64, node: &BasicNode) -> PeerClient {
        PeerClient {
            id: self.id,
            target,
            addr: node.addr.clone(),
            conn: None,
            connect_timeout: self.connect_timeout,
            backoff: self.backoff,
        }
    }
}

/// The connection of this member to one peer.
pub struct PeerClient {
    id: u64,
    target: u64,
    addr: String,
    conn: Option<TcpStream>,
    connect_timeout: Duration,
    backoff: Duration,
}

enum CallError {
    /// No connection could be made.
    Unreachable(std::io::Error),
    /// The connection failed during the exchange.
    Network(std::io::Error),
    /// The time-to-live ran out.
    Timeout,
}

type RpcResult<T, E> = Result<T, RPCError<u64, BasicNode, RaftError<u64, E>>>;

impl PeerClient {
    async fn connect(&self, deadline: Instant) -> Result<TcpStream, CallError> {
        let limit = (Instant::now() + self.connect_timeout).min(deadline);
        let addr: SocketAddr = self.addr.parse().map_err(|e| {
            CallError::Unreachable(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("bad address {:?} of node {}: {e}", self.addr, self.target),
            ))
        })?;
        match tokio::time::timeout_at(limit, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => {
                s.set_nodelay(true).map_err(CallError::Unreachable)?;
                Ok(s)
            }
            Ok(Err(e)) => Err(CallError::Unreachable(e)),
            Err(_) => Err(CallError::Unreachable(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("connecting to node {} at {}", self.target, self.addr),
            ))),
        }
    }

    async fn exchange(stream: &mut TcpStream, request: &[u8]) -> std::io::Result<Vec<u8>> {
        stream.write_all(request).await?;
        read_frame(stream).await?.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed by peer")
        })
    }

    /// Sends one request frame and returns the response body.
    async fn call(&mut self, request: &[u8], ttl: Duration) -> Result<Vec<u8>, CallError> {
        let deadline = Instant::now() + ttl;
        let reused = self.conn.is_some();
        let mut stream = match self.conn.take() {
            Some(s) => s,
            None => self.connect(deadline).await?,
        };
        match tokio::time::timeout_at(deadline, Self::exchange(&mut stream, request)).await {
            Ok(Ok(body)) => {
                self.conn = Some(stream);
                Ok(body)
            }
            Ok(Err(e)) if reused => {
                // The peer may have closed an idle connection (e.g. it
                // restarted); try once more on a fresh one.
                tracing::debug!(target = self.target, error = %e, "raft connection failed; reconnecting");
                let mut stream = self.connect(deadline).await?;
                match tokio::time::timeout_at(deadline, Self::exchange(&mut stream, request)).await {
                    Ok(Ok(body)) => {
                        self.conn = Some(stream);
                        Ok(body)
                    }
                    Ok(Err(e)) => Err(CallError::Network(e)),
                    Err(_) => Err(CallError::Timeout),
                }
            }
            Ok(Err(e)) => Err(CallError::Network(e)),
            Err(_) => Err(CallError::Timeout),
        }
    }

    async fn rpc<Resp, E>(
        &mut self,
        action: RPCTypes,
        request: std::io::Result<Vec<u8>>,
        ttl: Duration,
    ) -> RpcResult<Resp, E>
    where
        Resp: DeserializeOwned,
        E: std::error::Error + DeserializeOwned,
    {
        let request = request.map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        let body = self.call(&request, ttl).await.map_err(|e| match e {
            CallError::Unreachable(e) => RPCError::Unreachable(Unreachable::new(&e)),
            CallError::Network(e) => RPCError::Network(NetworkError::new(&e)),
            CallError::Timeout => {
                RPCError::Timeout(Timeout { action, id: self.id, target: self.target, timeout: ttl })
            }
        })?;
        let bad = |e: serde_json::Error| {
            // The connection may be out of step; start afresh next time.
            RPCError::Network(NetworkError::new(&e))
        };
        match body.split_first() {
            Some((&STATUS_OK, rest)) => serde_json::from_slice(rest).map_err(|e| {
                self.conn = None;
                bad(e)
            }),
            Some((&STATUS_ERR, rest)) => {
                let err: RaftError<u64, E> = serde_json::from_slice(rest).map_err(|e| {
                    self.conn = None;
                    bad(e)
                })?;
                Err(RPCError::RemoteError(RemoteError::new(self.target, err)))
            }
            _ => {
                self.conn = None;
                let e = std::io::Error::new(std::io::ErrorKind::InvalidData, "malformed response");
                Err(RPCError::Network(NetworkError::new(&e)))
            }
        }
    }
}

/// Encodes an AppendEntries request, or says how many of its entries fit
/// in [`APPEND_BUDGET`].
fn encode_append(rpc: &AppendEntriesRequest<TypeConfig>) -> std::io::Result<Result<Vec<u8>, usize>> {
    let header = json(&AppendHeader {
        vote: rpc.vote,
        prev_log_id: rpc.prev_log_id,
        leader_commit: rpc.leader_commit,
    })?;
    let mut buf = start_request(KIND_APPEND, &header);
    for (k, e) in rpc.entries.iter().enumerate() {
        encode_entry(e, &mut buf)?;
        if k > 0 && buf.len() > APPEND_BUDGET {
            return Ok(Err(k));
        }
    }
    finish_frame(buf).map(Ok)
}

impl RaftNetwork<TypeConfig> for PeerClient {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> RpcResult<AppendEntriesResponse<u64>, Infallible> {
        let request = match encode_append(&rpc) {
            Ok(Err(fit)) => {
                let hint = PayloadTooLarge::new_entries_hint(fit as u64);
                return Err(RPCError::PayloadTooLarge(hint));
            }
            Ok(Ok(frame)) => Ok(frame),
            Err(e) => Err(e),
        };
        self.rpc(RPCTypes::AppendEntries, request, option.hard_ttl()).await
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> RpcResult<InstallSnapshotResponse<u64>, InstallSnapshotError> {
        let request =
            json(&SnapshotHeader { vote: rpc.vote, meta: rpc.meta, offset: rpc.offset, done: rpc.done })
                .and_then(|header| {
                    let mut buf = start_request(KIND_SNAPSHOT, &header);
                    buf.extend_from_slice(&rpc.data);
                    finish_frame(buf)
                });
        self.rpc(RPCTypes::InstallSnapshot, request, option.hard_ttl()).await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<u64>,
        option: RPCOption,
    ) -> RpcResult<VoteResponse<u64>, Infallible> {
        let request = json(&rpc).and_then(|h| finish_frame(start_request(KIND_VOTE, &h)));
        self.rpc(RPCTypes::Vote, request, option.hard_ttl()).await
    }

    fn backoff(&self) -> Backoff {
        Backoff::new(std::iter::repeat(self.backoff))
    }
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

/// A running RPC server; [`RpcServer::stop`] closes the listener and every
/// open connection.
pub struct RpcServer {
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl RpcServer {
    /// Stops accepting, drops all connections and waits for the server task.
    pub async fn stop(&mut self) {
        self.stop.take();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for RpcServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Serves Raft RPCs arriving on `listener` with `raft`.
pub fn serve(listener: TcpListener, raft: Raft) -> RpcServer {
    let (stop, mut stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        let _ = stream.set_nodelay(true);
                        connections.spawn(serve_connection(stream, peer, raft.clone()));
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "accepting a raft connection failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
            }
            while connections.try_join_next().is_some() {}
        }
        connections.shutdown().await;
    });
    RpcServer { stop: Some(stop), task: Some(task) }
}

fn response<T: Serialize, E: Serialize>(r: &Result<T, E>) -> std::io::Result<Vec<u8>> {
    let (status, body) = match r {
        Ok(v) => (STATUS_OK, json(v)?),
        Err(e) => (STATUS_ERR, json(e)?),
    };
    let mut buf = Vec::with_capacity(5 + body.len());
    buf.extend_from_slice(&((body.len() + 1) as u32).to_le_bytes());
    buf.push(status);
    buf.extend_from_slice(&body);
    Ok(buf)
}

fn invalid(msg: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg.into())
}

async fn handle(raft: &Raft, frame: &[u8]) -> std::io::Result<Vec<u8>> {
    if frame.len() < 5 {
        return Err(invalid("short request"));
    }
    let kind = frame[0];
    let hlen = u32::from_le_bytes([frame[1], frame[2], frame[3], frame[4]]) as usize;
    if frame.len() - 5 < hlen {
        return Err(invalid("request header runs past the frame"));
    }
    let (header, tail) = frame[5..].split_at(hlen);
    let bad_json = |e: serde_json::Error| invalid(e.to_string());
    match kind {
        KIND_APPEND => {
            let h: AppendHeader = serde_json::from_slice(header).map_err(bad_json)?;
            let entries = decode_entries(tail).map_err(invalid)?;
            let rpc = AppendEntriesRequest {
                vote: h.vote,
                prev_log_id: h.prev_log_id,
                leader_commit: h.leader_commit,
                entries,
            };
            response(&raft.append_entries(rpc).await)
        }
        KIND_VOTE => {
            let rpc: VoteRequest<u64> = serde_json::from_slice(header).map_err(bad_json)?;
            response(&raft.vote(rpc).await)
        }
        KIND_SNAPSHOT => {
            let h: SnapshotHeader = serde_json::from_slice(header).map_err(bad_json)?;
            let rpc = InstallSnapshotRequest {
                vote: h.vote,
                meta: h.meta,
                offset: h.offset,
                data: tail.to_vec(),
                done: h.done,
            };
            response(&raft.install_snapshot(rpc).await)
        }
        other => Err(invalid(format!("unknown request kind {other}"))),
    }
}

async fn serve_connection(mut stream: TcpStream, peer: SocketAddr, raft: Raft) {
    loop {
        let frame = match read_frame(&mut stream).await {
            Ok(Some(f)) => f,
            Ok(None) => return,
            Err(e) => {
                tracing::debug!(%peer, error = %e, "raft connection read failed");
                return;
            }
        };
        let reply = match handle(&raft, &frame).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(%peer, error = %e, "malformed raft request; closing the connection");
                return;
            }
        };
        if let Err(e) = stream.write_all(&reply).await {
            tracing::debug!(%peer, error = %e, "raft connection write failed");
            return;
        }
    }
}
