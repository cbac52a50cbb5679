//! A replicated group as SQL sees it. A server that is a member of one
//! hands its database a [`Cluster`] ([`crate::Database::set_cluster`]);
//! from then on the `centum.cluster` view lists the members as this one
//! knows them, and four functions act on the group:
//!
//! | function | does |
//! |----------|------|
//! | `centum_applied_index()` | the last log index this member has applied (NULL outside a group) |
//! | `centum_wait_applied(index [, timeout_ms])` | waits until this member has applied `index` (10 s by default); false if it has not by then |
//! | `centum_add_member(id, address)` | on the primary, for a superuser: the member at `address` (its replication address) receives the log, then votes |
//! | `centum_remove_member(id)` | on the primary, for a superuser: the member leaves the group |
//!
//! Reading your own writes on a standby: after a commit on the primary,
//! `centum_applied_index()` there names an index at or past the commit's
//! entry (a commit is acknowledged once its entry is applied), and
//! `centum_wait_applied` with that index on the standby returns once the
//! commit is visible there.

/// One member of the group, as this member knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterMember {
    /// Its node id.
    pub id: u64,
    /// Its replication address.
    pub address: String,
    /// Whether it votes (a member being added learns the log first).
    pub voter: bool,
    /// `leader`, `follower`, `candidate` or `learner`; another member's
    /// is what this one can tell (`follower` for a voter that is not the
    /// leader it knows).
    pub role: &'static str,
    /// Whether it is this member.
    pub is_self: bool,
    /// The term this member is in.
    pub term: u64,
    /// The last log index durable on it: this member's own, and every
    /// member's on the leader; unknown (None) otherwise.
    pub durable: Option<u64>,
    /// The last log index it has applied (this member only).
    pub applied: Option<u64>,
    /// The index of its latest checkpoint (this member only).
    pub snapshot: Option<u64>,
    /// Entries the leader holds that the member does not (on the leader).
    pub lag: Option<u64>,
}

/// The group a server belongs to.
pub trait Cluster: Send + Sync {
    /// Every member of the group's configuration.
    fn members(&self) -> Vec<ClusterMember>;

    /// The last log index this member has applied.
    fn applied(&self) -> u64;

    /// Adds member `id` at replication address `address`; returns once it
    /// votes.
    fn add_member(&self, id: u64, address: &str) -> crate::Result<()>;

    /// Removes member `id`; returns once the group no longer counts it.
    fn remove_member(&self, id: u64) -> crate::Result<()>;
}
