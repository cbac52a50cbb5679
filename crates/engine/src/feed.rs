//! The change feed: every committed change to SCHEMA_AND_DATA tables, read
//! back from the redo log in log order (which is commit order), a
//! transaction at a time, from any position the log still holds.
//!
//! ```text
//!  redo log ── LogReader (synced batches only) ── FeedTxn
//!     ── ops decoded against the tables by id ── ChangeTxn { changes }
//!          insert                      ─▶ Insert(new)
//!          delete with old image       ─▶ Delete(old)
//!          delete marked "replaced",
//!            then the table's insert   ─▶ Update(old, new)
//! ```
//!
//! With [`crate::Options::logical`] the log carries the image of every
//! version a transaction deletes or replaces, and the feed can say which
//! row a delete or an update ended; without it a delete has no old row and
//! an update reads as a delete and an insert. SCHEMA_ONLY tables are never
//! logged, so never in the feed. Rows are decoded with the tables as they
//! are when the feed reads them: a change of a table dropped since is
//! skipped, and a row that no longer fits its table's columns (altered
//! since) is skipped with a warning.
//!
//! Positions are [`LogPos`]es: a transaction's `end` is where a consumer
//! that has applied it resumes.
//!
//! A member of a replicated group has no redo log of its own: its feed
//! reads the group's log ([`GroupFeed`]), where a position is an entry's
//! index (`segment`) and the number of transactions of the entry before
//! it (`offset`), the same on every member.

use crate::db::Database;
use crate::error::Result;
use crate::table::Table;
use centum_storage::{FeedTxn, LogPos, LogReader, Op, Slots};
use centum_types::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

/// What a change did to its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// A new row.
    Insert,
    /// A row changed: `old` (where logged) and `new`.
    Update,
    /// A row removed.
    Delete,
}

/// One row change.
#[derive(Clone)]
pub struct Change {
    /// The table, as it is now.
    pub table: Arc<Table>,
    /// What happened.
    pub kind: ChangeKind,
    /// The row before (deletes and updates, where the log has it).
    pub old: Option<Vec<Value>>,
    /// The row after (inserts and updates).
    pub new: Option<Vec<Value>>,
}

impl std::fmt::Debug for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Change")
            .field("table", &self.table.name())
            .field("kind", &self.kind)
            .field("old", &self.old)
            .field("new", &self.new)
            .finish()
    }
}

/// One committed transaction's changes.
#[derive(Debug, Clone)]
pub struct ChangeTxn {
    /// Where its record starts in the log.
    pub start: LogPos,
    /// Where it ends: the position after it.
    pub end: LogPos,
    /// Its commit timestamp.
    pub commit_ts: u64,
    /// Its row changes, in the order it made them (a transaction that
    /// changed only SCHEMA_ONLY tables or the schema has none).
    pub changes: Vec<Change>,
}

/// Reads the committed transactions of a log from a position on: the
/// data directory's redo log, or a replicated group's.
pub trait FeedSource: Send {
    /// The transactions durable past the reader's position, a few
    /// megabytes of them at most; empty when it has caught up.
    fn read(&mut self) -> centum_storage::Result<Vec<FeedTxn>>;

    /// Waits up to `timeout` for something past the reader's position;
    /// true if there is something to read.
    fn wait(&self, timeout: Duration) -> bool;

    /// Where the reader stands: after the last transaction returned.
    fn position(&self) -> LogPos;
}

impl FeedSource for LogReader {
    fn read(&mut self) -> centum_storage::Result<Vec<FeedTxn>> {
        LogReader::read(self)
    }

    fn wait(&self, timeout: Duration) -> bool {
        LogReader::wait(self, timeout)
    }

    fn position(&self) -> LogPos {
        LogReader::position(self)
    }
}

/// A replicated group's log as the change feed and the replication slots
/// of one member see it ([`crate::Replicate::feed`]).
pub trait GroupFeed: Send + Sync {
    /// A reader of the entries this member has applied, from `from`.
    fn reader(&self, from: LogPos) -> Box<dyn FeedSource>;

    /// The position after everything this member has applied.
    fn end(&self) -> LogPos;

    /// The member's replication slots (changes ordered by the group).
    fn slots(&self) -> Option<&Arc<Slots>>;

    /// The highest commit timestamp handed out so far, read under the
    /// lock that orders records: a record is stamped and queued under it,
    /// so every timestamp at or below has its record queued or further.
    fn order_point(&self) -> u64;

    /// Once every commit at or below `ts` is published or undone, waits
    /// until the records among them are readable through
    /// [`GroupFeed::reader`].
    fn settle(&self, ts: u64, timeout: Duration) -> Result<()>;
}

/// Reads committed transactions from a position on; an iterator that
/// waits for the next commit (see [`ChangeFeed::poll`] for one that does
/// not).
pub struct ChangeFeed {
    db: Database,
    reader: Box<dyn FeedSource>,
    tables: HashMap<u64, Arc<Table>>,
    /// The catalog `tables` was built from.
    catalog: Arc<HashMap<String, Arc<Table>>>,
    ready: VecDeque<ChangeTxn>,
}

impl Database {
    /// The change feed from `from`: a transaction's `end` from an earlier
    /// feed, or [`Database::log_end`]. Needs a data directory.
    pub fn changes(&self, from: LogPos) -> Result<ChangeFeed> {
        let reader = self.feed_reader(from)?;
        Ok(ChangeFeed {
            db: self.clone(),
            reader,
            tables: HashMap::new(),
            catalog: Arc::default(),
            ready: VecDeque::new(),
        })
    }

    /// The redo records themselves from `from`, a transaction at a time,
    /// as they become durable: what a standby applies
    /// ([`Database::apply_records`]). Needs a data directory.
    pub fn redo(&self, from: LogPos) -> Result<LogReader> {
        Ok(self.storage()?.reader(from))
    }

    /// A reader of the log the feed reads, from `from`.
    fn feed_reader(&self, from: LogPos) -> Result<Box<dyn FeedSource>> {
        if let Some(group) = self.group_feed() {
            return Ok(group.reader(from));
        }
        Ok(Box::new(self.storage()?.reader(from)))
    }

    /// The replicated group's log, where this database is a member of a
    /// group that keeps one for the feed.
    fn group_feed(&self) -> Option<&dyn GroupFeed> {
        self.shared.replicate.as_ref().and_then(|r| r.feed())
    }

    /// The end of the durable log (in a group: of what this member has
    /// applied): a feed from here sees only later commits. `None` in
    /// memory only.
    pub fn log_end(&self) -> Option<LogPos> {
        if let Some(group) = self.group_feed() {
            return Some(group.end());
        }
        self.shared.storage.as_ref().map(|s| s.log().synced_end())
    }

    /// The replication slots of the data directory, or of this member of
    /// a group (`None` in memory only).
    pub fn slots(&self) -> Option<&Arc<centum_storage::Slots>> {
        if let Some(group) = self.group_feed() {
            return group.slots();
        }
        self.shared.storage.as_ref().map(|s| s.slots())
    }

    /// Whether commits go to a replicated group's log
    /// ([`crate::Options::replicate`]) rather than a log file of this
    /// database's own.
    pub fn is_replicated(&self) -> bool {
        self.shared.replicate.is_some()
    }

    /// Begins a transaction whose snapshot is exactly the log before the
    /// position returned: it sees every transaction logged before that
    /// position and none logged after it, so a copy made in it followed by
    /// the feed from that position has every commit once (how a
    /// subscriber's table copy meets its stream). The transaction must
    /// read nothing before this returns.
    ///
    /// The cut is taken under the lock that orders appends, at a moment
    /// when no transaction holds a commit timestamp at or below the last
    /// appended one without its record in the log (a SERIALIZABLE
    /// committer takes its timestamp before it validates): records before
    /// it carry timestamps at or below that one, records after it above.
    /// Then the records before it are made durable and read back to find
    /// where the last of them ends. In a replicated group the lock is the
    /// group's ordering lock, and the wait is for this member to have
    /// applied every record stamped before the cut.
    pub fn begin_at_log_cut(&self, isolation: crate::Isolation) -> Result<(crate::Transaction, LogPos)> {
        // Pins the collector below the snapshot taken further down.
        let mut txn = self.begin(isolation)?;
        let from = match self.log_end() {
            Some(end) => end,
            None => return Err(self.storage().err().unwrap_or(crate::Error::Canceled("no log"))),
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let last = loop {
            let cut = match self.group_feed() {
                Some(group) => Some(group.order_point()),
                None => self
                    .storage()?
                    .log()
                    .at_append_point(|last| (!self.shared.txns.any_preparing_upto(last)).then_some(last)),
            };
            if let Some(last) = cut {
                break last;
            }
            if std::time::Instant::now() > deadline {
                return Err(crate::Error::Canceled("no consistent point for a snapshot was found in 30 s"));
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        // Transactions stamped between the snapshot's start and `last`
        // that finished without a record (aborted) change nothing seen.
        let ts = last.max(txn.read_timestamp());
        self.shared.clock.wait_visible(ts);
        match self.group_feed() {
            Some(group) => {
                group.settle(last, deadline.saturating_duration_since(std::time::Instant::now()))?
            }
            None => self.storage()?.log().flush()?,
        }
        let mut reader = self.feed_reader(from)?;
        let mut cut = from;
        'read: loop {
            let txns = reader.read()?;
            if txns.is_empty() {
                break;
            }
            for t in txns {
                if t.commit_ts > ts {
                    break 'read;
                }
                cut = t.end;
            }
        }
        txn.raise_snapshot(ts);
        Ok((txn, cut))
    }

    /// Whether the log carries what logical decoding needs (see
    /// [`crate::Options::logical`]).
    pub fn is_logical(&self) -> bool {
        self.shared.logical
    }
}

impl ChangeFeed {
    /// The position after the last transaction returned.
    pub fn position(&self) -> LogPos {
        self.ready.front().map_or_else(|| self.reader.position(), |t| t.start)
    }

    /// The transactions committed (and durable) since the last call, up
    /// to a few megabytes of them; empty when there are none yet.
    pub fn poll(&mut self) -> Result<Vec<ChangeTxn>> {
        if !self.ready.is_empty() {
            return Ok(self.ready.drain(..).collect());
        }
        let txns = self.reader.read()?;
        Ok(txns.iter().map(|t| self.decode(t)).collect())
    }

    /// Waits up to `timeout` for a commit past the feed's position; true
    /// if [`ChangeFeed::poll`] has something now.
    pub fn wait(&self, timeout: Duration) -> bool {
        !self.ready.is_empty() || self.reader.wait(timeout)
    }

    /// The next transaction, waiting up to `timeout` for it.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<ChangeTxn>> {
        if self.ready.is_empty() {
            let txns = self.poll()?;
            self.ready.extend(txns);
            if self.ready.is_empty() && self.reader.wait(timeout) {
                let txns = self.poll()?;
                self.ready.extend(txns);
            }
        }
        Ok(self.ready.pop_front())
    }

    /// The table of id `id`, from the catalog as it is now; the map is
    /// built again only when the catalog has changed since (a dropped
    /// table's id misses without a rebuild per change).
    fn table(&mut self, id: u64) -> Option<Arc<Table>> {
        if !self.tables.contains_key(&id) {
            let catalog = self.db.shared.catalog.load_full();
            if !Arc::ptr_eq(&catalog, &self.catalog) {
                self.tables = catalog.values().map(|t| (t.id, t.clone())).collect();
                self.catalog = catalog;
            }
        }
        self.tables.get(&id).cloned()
    }

    fn decode(&mut self, txn: &centum_storage::FeedTxn) -> ChangeTxn {
        let mut changes = Vec::new();
        // The old row of an update, waiting for its new version.
        let mut replaced: Option<(u64, Option<Vec<Value>>)> = None;
        for rec in txn.records() {
            for op in rec.ops {
                match op {
                    Op::Schema { .. } => {}
                    Op::Insert { table, data, .. } => {
                        let Some(t) = self.table(table) else { continue };
                        let new = self.row(&t, data);
                        let old = match replaced.take() {
                            Some((id, old)) if id == table => Some(old),
                            _ => None,
                        };
                        let Some(new) = new else { continue };
                        let (kind, old) = match old {
                            Some(old) => (ChangeKind::Update, old),
                            None => (ChangeKind::Insert, None),
                        };
                        changes.push(Change { table: t, kind, old, new: Some(new) });
                    }
                    Op::Delete { table, old, .. } => {
                        let Some(t) = self.table(table) else { continue };
                        let (image, lives_on) = match old {
                            Some((image, lives_on)) => (self.row(&t, image), lives_on),
                            None => (None, false),
                        };
                        if lives_on {
                            replaced = Some((table, image));
                        } else {
                            changes.push(Change {
                                table: t,
                                kind: ChangeKind::Delete,
                                old: image,
                                new: None,
                            });
                        }
                    }
                }
            }
        }
        ChangeTxn { start: txn.start, end: txn.end, commit_ts: txn.commit_ts, changes }
    }

    fn row(&self, table: &Table, data: &[u8]) -> Option<Vec<Value>> {
        if !table.layout.is_well_formed(data) {
            tracing::warn!(table = %table.name(), "a logged row no longer fits its table's columns; the change feed skips it");
            return None;
        }
        Some(table.layout.values(data))
    }
}

impl Iterator for ChangeFeed {
    type Item = Result<ChangeTxn>;

    /// The next committed transaction, waiting for it as long as it takes.
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.next_timeout(Duration::from_secs(1)) {
                Ok(Some(t)) => return Some(Ok(t)),
                Ok(None) => {}
                Err(e) => return Some(Err(e)),
            }
        }
    }
}
