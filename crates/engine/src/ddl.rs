//! Schema changes inside a transaction (transactional DDL).
//!
//! A schema change made while the calling thread acts for an open
//! transaction (see [`ddl_scope`]) belongs to that transaction, as in
//! PostgreSQL: it takes effect at COMMIT and is undone by ROLLBACK.
//!
//! - **The claim.** The first such change takes the database's schema
//!   claim for the transaction; it is held until the transaction ends.
//!   While it is held every other schema change waits for the holder to
//!   finish, bounded by its statement's limits and with deadlock
//!   detection (a holder that waits for a row of the waiter closes a
//!   cycle: 40P01). One transaction at a time changes the schema; there is
//!   no merge of two catalogs.
//! - **Live changes, undo steps.** A change is applied to the live catalog
//!   at once, so the transaction sees its own tables and indexes, and is
//!   remembered as an undo step (`Undo`). Nothing is logged. Other sessions are
//!   kept away from the changed tables by the layer above, which asks
//!   [`Database::claimed`] before it uses a table by name.
//! - **Commit.** The transaction's redo record carries the catalog image
//!   as its first operation, so the schema change and the rows written
//!   under it are durable together or not at all: a crash before the
//!   record is synced leaves the catalog as it was (recovery keeps the
//!   last image in log order).
//! - **Abort.** The undo steps run newest first: tables created are taken
//!   out, tables dropped or renamed come back, extra bytes are restored,
//!   indexes built are retired. A DROP INDEX waits for commit instead (a
//!   retired index cannot come back): until then the index stays in its
//!   table and takes every write, but is marked dropped by the
//!   transaction, which no longer finds it by name, nor sees it in the
//!   table's definition, nor is held to its unique keys; a new index may
//!   take its name. An abort clears the mark after the undo steps (which
//!   retire such a new index first).
//! - **Images logged meanwhile.** Anything else that logs a catalog image
//!   while the claim is held (a sequence's reservation mark, through
//!   [`Database::write_catalog_extra`]) logs the committed catalog: the
//!   live images with the undo steps applied to them, and the committed
//!   extra bytes the caller gives.

use crate::db::{image_of, Database, Shared};
use crate::durable::catalog::TableImage;
use crate::error::Result;
use crate::index::Index;
use crate::mvcc::txn_table::{ddl_limits, ddl_lock_deadline};
use crate::mvcc::TxnId;
use crate::sync::Ordering::SeqCst;
use crate::table::Table;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, MutexGuard};
use std::time::Duration;

thread_local! {
    static DDL_TXN: Cell<Option<TxnId>> = const { Cell::new(None) };
}

/// Runs `f` with its schema changes belonging to transaction `txn` (if
/// any) and its waits bounded by `limits` (see
/// [`crate::mvcc::ddl_waits`]).
pub fn ddl_scope<R>(limits: crate::WaitLimits, txn: Option<TxnId>, f: impl FnOnce() -> R) -> R {
    let old = DDL_TXN.with(|t| t.replace(txn));
    struct Restore(Option<TxnId>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DDL_TXN.with(|t| t.set(self.0));
        }
    }
    let _restore = Restore(old);
    crate::mvcc::ddl_waits(limits, f)
}

/// Makes the calling thread act for transaction `txn` until the guard is
/// dropped: its schema changes belong to `txn`, and [`Database::claimed`]
/// lets it use what `txn` changed. Cheaper than [`ddl_scope`], for every
/// statement of a transaction block.
pub fn act_for(txn: Option<TxnId>) -> ActFor {
    ActFor(DDL_TXN.with(|t| t.replace(txn)))
}

/// Restores what the thread acted for before [`act_for`].
pub struct ActFor(Option<TxnId>);

impl Drop for ActFor {
    fn drop(&mut self) {
        DDL_TXN.with(|t| t.set(self.0));
    }
}

/// The transaction the calling thread's schema changes belong to.
pub fn ddl_txn() -> Option<TxnId> {
    DDL_TXN.with(|t| t.get())
}

/// How to take back one schema change of the claiming transaction.
pub(crate) enum Undo {
    /// The table was created: take it out.
    Created(Arc<Table>),
    /// The table was dropped: put it back under its name.
    Dropped(Arc<Table>),
    /// The table was renamed from this name.
    Renamed(Arc<Table>, String),
    /// The table's extra bytes were these.
    Extra(Arc<Table>, Vec<u8>),
    /// This index was built.
    IndexCreated(Arc<Table>, String),
}

/// The schema claim of one open transaction.
pub(crate) struct Claim {
    pub(crate) owner: TxnId,
    /// Newest last.
    pub(crate) undo: Vec<Undo>,
    /// Indexes to retire at commit, each marked dropped by the owner
    /// ([`crate::index::Index::dropped_by`]) meanwhile.
    pub(crate) drop_indexes: Vec<(Arc<Table>, Arc<Index>)>,
    /// The database-wide extra bytes as committed.
    pub(crate) committed_extra: Arc<Vec<u8>>,
}

impl Claim {
    /// Whether the claim changed table `name` (under that name now or
    /// before).
    fn touches(&self, name: &str) -> bool {
        let is = |t: &Arc<Table>| t.name() == name;
        self.drop_indexes.iter().any(|(t, _)| is(t))
            || self.undo.iter().any(|u| match u {
                Undo::Created(t) | Undo::Dropped(t) | Undo::Extra(t, _) | Undo::IndexCreated(t, _) => is(t),
                Undo::Renamed(t, old) => is(t) || old == name,
            })
    }

    /// Whether the claim created `table`.
    pub(crate) fn created(&self, table: &Arc<Table>) -> bool {
        self.undo.iter().any(|u| matches!(u, Undo::Created(t) if Arc::ptr_eq(t, table)))
    }
}

/// What the database's DDL lock guards.
#[derive(Default)]
pub(crate) struct DdlState {
    pub(crate) claim: Option<Claim>,
}

/// Brings back indexes a transaction dropped and then did not commit.
fn restore_indexes(drops: &[(Arc<Table>, Arc<Index>)]) {
    for (_, ix) in drops {
        ix.set_dropped_by(0);
    }
}

/// The DDL lock, held by one schema change (or a commit or abort that
/// ends a claim); `txn` is the transaction the change belongs to.
pub(crate) struct Entered<'a> {
    pub(crate) state: MutexGuard<'a, DdlState>,
    pub(crate) txn: Option<TxnId>,
}

impl Entered<'_> {
    /// Records an undo step if the change belongs to a transaction;
    /// whether it does (then nothing is to be logged now).
    pub(crate) fn remember(&mut self, undo: Undo) -> bool {
        match self.state.claim.as_mut() {
            Some(c) if Some(c.owner) == self.txn => {
                c.undo.push(undo);
                true
            }
            _ => false,
        }
    }

    pub(crate) fn in_txn(&self) -> bool {
        self.txn.is_some()
    }
}

impl Shared {
    /// Takes the DDL lock unless another transaction holds the claim:
    /// then `Err(owner)`, without waiting.
    pub(crate) fn try_enter_ddl(&self) -> std::result::Result<Entered<'_>, TxnId> {
        let me = ddl_txn();
        let mut state = self.lock_ddl();
        match &state.claim {
            Some(c) if Some(c.owner) != me => Err(c.owner),
            _ => {
                if let (Some(me), None) = (me, &state.claim) {
                    state.claim = Some(self.new_claim(me));
                }
                Ok(Entered { state, txn: me })
            }
        }
    }

    fn new_claim(&self, owner: TxnId) -> Claim {
        self.claim_owner.store(owner.raw(), SeqCst);
        Claim {
            owner,
            undo: Vec::new(),
            drop_indexes: Vec::new(),
            committed_extra: self.catalog_extra.load_full(),
        }
    }

    fn lock_ddl(&self) -> MutexGuard<'_, DdlState> {
        self.ddl.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the DDL lock for a schema change of the calling thread: waits
    /// while another transaction holds the claim, and takes it for the
    /// thread's own transaction if there is one.
    pub(crate) fn enter_ddl(&self) -> Result<Entered<'_>> {
        let me = ddl_txn();
        let lock_deadline = ddl_lock_deadline();
        loop {
            match self.try_enter_ddl() {
                Ok(entered) => return Ok(entered),
                Err(owner) => self.wait_claim(me, owner, lock_deadline)?,
            }
        }
    }

    /// Waits for `owner`, the claim's holder, to finish: on behalf of
    /// transaction `me` with deadlock detection, or as a plain bounded
    /// wait.
    fn wait_claim(
        &self,
        me: Option<TxnId>,
        owner: TxnId,
        lock_deadline: Option<std::time::Instant>,
    ) -> Result<()> {
        let gone = match self.txns.state(owner) {
            None => true,
            Some(st) => st.is_final(),
        };
        if gone {
            // Finishing: its commit or abort is about to let the claim go.
            crate::mvcc::txn_table::ddl_past_limits(lock_deadline)?;
            std::thread::sleep(Duration::from_micros(50));
            return Ok(());
        }
        self.wait_txn(me, owner, lock_deadline)
    }

    /// Waits for transaction `other` to finish: on behalf of transaction
    /// `me` in the waits-for graph (a cycle is 40P01), or as a plain
    /// bounded wait; ends as the schema change's limits say.
    fn wait_txn(
        &self,
        me: Option<TxnId>,
        other: TxnId,
        lock_deadline: Option<std::time::Instant>,
    ) -> Result<()> {
        match me {
            Some(me) => {
                let mut limits = ddl_limits();
                if let Some(d) = lock_deadline {
                    limits.lock_timeout = Some(d.saturating_duration_since(std::time::Instant::now()));
                }
                self.txns.wait_for(me, other, &limits, false)
            }
            None => self.txns.wait_gone_within(other, lock_deadline),
        }
    }

    /// The first transaction that `pick` accepts among those with
    /// uncommitted writes (new or ended versions) in `t`.
    fn pending_writer(&self, t: &Table, pick: impl Fn(TxnId) -> bool) -> Option<TxnId> {
        use crate::mvcc::visibility::{begin, end, Begin, End};
        let nobody = TxnId(0);
        let _pin = crossbeam_epoch::pin();
        for b in t.scan.buckets_in_use() {
            let mut cur = t.scan.first(b);
            while let Some(v) = cur {
                cur = t.scan.next(v);
                match (begin(&self.txns, v, nobody), end(&self.txns, v, nobody)) {
                    (Begin::Pending(id, _), _) | (_, End::Pending(id, _)) if pick(id) => return Some(id),
                    _ => {}
                }
            }
        }
        None
    }

    /// The catalog image as committed while a claim is held: the live
    /// images with the claim's undo steps applied.
    pub(crate) fn committed_images(&self, claim: Option<&Claim>) -> Vec<TableImage> {
        let live = self.catalog.load_full();
        let mut images: HashMap<u64, TableImage> = live.values().map(|t| (t.id, image_of(t))).collect();
        let Some(claim) = claim else { return images.into_values().collect() };
        for u in claim.undo.iter().rev() {
            match u {
                Undo::Created(t) => {
                    images.remove(&t.id);
                }
                Undo::Dropped(t) => {
                    images.insert(t.id, image_of(t));
                }
                Undo::Renamed(t, old) => {
                    if let Some(i) = images.get_mut(&t.id) {
                        i.def.name = old.clone();
                    }
                }
                Undo::Extra(t, old) => {
                    if let Some(i) = images.get_mut(&t.id) {
                        i.def.extra = old.clone();
                    }
                }
                Undo::IndexCreated(t, name) => {
                    if let Some(i) = images.get_mut(&t.id) {
                        i.def.indexes.retain(|ix| &ix.name != name);
                    }
                }
            }
        }
        // Indexes it drops are committed still.
        for (t, ix) in &claim.drop_indexes {
            if let Some(i) = images.get_mut(&t.id) {
                i.def.indexes.push(ix.def(&t.columns));
            }
        }
        images.into_values().collect()
    }

    /// The catalog image a claiming transaction commits: the live one (the
    /// indexes it drops at commit are already out of its tables'
    /// definitions).
    pub(crate) fn claim_image(&self) -> Vec<u8> {
        let live = self.catalog.load_full();
        crate::durable::catalog_image(
            live.values().map(|t| image_of(t)).collect(),
            self.next_table_id.load(SeqCst),
            &self.catalog_extra.load(),
        )
    }

    /// Whether transaction `id` holds the claim (a cheap check made by
    /// every commit and abort).
    pub(crate) fn holds_claim(&self, id: TxnId) -> bool {
        self.claim_owner.load(SeqCst) == id.raw()
    }

    /// The DDL lock, for the commit or abort of the claim's holder.
    pub(crate) fn claim_lock(&self) -> MutexGuard<'_, DdlState> {
        self.lock_ddl()
    }

    /// Ends the claim after its holder committed: dropped tables stop
    /// taking writes, indexes dropped in the transaction are retired.
    pub(crate) fn release_committed(self: &Arc<Self>, state: &mut DdlState) {
        let Some(claim) = state.claim.take() else { return };
        for u in &claim.undo {
            if let Undo::Dropped(t) = u {
                t.dropped.store(true, SeqCst);
            }
        }
        for (t, ix) in &claim.drop_indexes {
            crate::db::retire_index(self, t, ix);
        }
        self.claims_ended.fetch_add(1, SeqCst);
        self.claim_owner.store(0, SeqCst);
    }

    /// Ends the claim after its holder aborted: every change is taken
    /// back, newest first.
    pub(crate) fn release_aborted(self: &Arc<Self>, state: &mut DdlState) {
        let Some(claim) = state.claim.take() else { return };
        self.undo_steps(claim.undo);
        restore_indexes(&claim.drop_indexes);
        self.catalog_extra.store(claim.committed_extra);
        self.claims_ended.fetch_add(1, SeqCst);
        self.claim_owner.store(0, SeqCst);
    }

    /// Takes back the claim's changes after a savepoint of its holder
    /// (`steps` and `drops`: how many undo steps and index drops it had
    /// then). The claim stays held.
    pub(crate) fn undo_since(self: &Arc<Self>, state: &mut DdlState, steps: usize, drops: usize) {
        let Some(claim) = state.claim.as_mut() else { return };
        let dropped = claim.drop_indexes.split_off(drops.min(claim.drop_indexes.len()));
        let later = claim.undo.split_off(steps.min(claim.undo.len()));
        // Indexes built since go first: one may carry the name of an index
        // dropped since, which comes back after it.
        self.undo_steps(later);
        restore_indexes(&dropped);
    }

    /// Runs undo steps, newest first, on the live catalog (then the
    /// caller brings back the indexes dropped: see [`restore_indexes`]).
    fn undo_steps(self: &Arc<Self>, steps: Vec<Undo>) {
        let mut cat = (*self.catalog.load_full()).clone();
        for u in steps.into_iter().rev() {
            match u {
                Undo::Created(t) => {
                    cat.retain(|_, o| !Arc::ptr_eq(o, &t));
                    t.dropped.store(true, SeqCst);
                }
                Undo::Dropped(t) => {
                    cat.insert(t.name(), t);
                }
                Undo::Renamed(t, old) => {
                    cat.retain(|_, o| !Arc::ptr_eq(o, &t));
                    t.set_name(old.clone());
                    cat.insert(old, t);
                }
                Undo::Extra(t, old) => t.set_extra(old),
                Undo::IndexCreated(t, name) => crate::db::remove_index(self, &t, &name),
            }
        }
        self.catalog.store(Arc::new(cat));
    }

    /// How many undo steps and index drops the claim of `me` has (zero if
    /// it holds none): a savepoint's mark.
    pub(crate) fn claim_mark(&self, me: TxnId) -> (usize, usize) {
        if !self.holds_claim(me) {
            return (0, 0);
        }
        let state = self.lock_ddl();
        state
            .claim
            .as_ref()
            .filter(|c| c.owner == me)
            .map_or((0, 0), |c| (c.undo.len(), c.drop_indexes.len()))
    }
}

impl Database {
    /// The open transaction whose uncommitted schema changes touch table
    /// `name`, if that is not the calling thread's own (see [`ddl_scope`]
    /// and `me`). The layer above keeps its statements away from such a
    /// table until the transaction ends ([`Database::wait_claim`]).
    pub fn claimed(&self, name: &str, me: Option<TxnId>) -> Option<TxnId> {
        let s = &self.shared;
        let owner = s.claim_owner.load(SeqCst);
        if owner == 0 || me.is_some_and(|m| m.raw() == owner) {
            return None;
        }
        let state = s.lock_ddl();
        let c = state.claim.as_ref()?;
        (Some(c.owner) != me && c.touches(name)).then_some(c.owner)
    }

    /// Waits until no other transaction holds the schema claim, and takes
    /// it for the calling thread's transaction if it acts for one: what a
    /// schema change of the layer above does before it takes locks of its
    /// own. Bounded as [`crate::mvcc::ddl_waits`] says.
    pub fn enter_schema_change(&self) -> Result<()> {
        self.shared.enter_ddl().map(drop)
    }

    /// [`Database::set_catalog_extra`] unless another transaction holds the
    /// schema claim: then nothing is done and its id comes back, for a
    /// caller that must not wait while it holds a lock of its own.
    pub fn try_set_catalog_extra(&self, extra: Vec<u8>) -> Result<Option<TxnId>> {
        let entered = match self.shared.try_enter_ddl() {
            Ok(e) => e,
            Err(owner) => return Ok(Some(owner)),
        };
        self.put_catalog_extra(&entered, extra)?;
        Ok(None)
    }

    /// Changes whenever a transaction's schema changes end (commit or
    /// abort): what the layer above cached about the schema may be stale.
    pub fn schema_epoch(&self) -> u64 {
        self.shared.claims_ended.load(SeqCst)
    }

    /// Whether table `name` exists only as an uncommitted creation of
    /// another transaction than `me` (for that transaction's neighbours it
    /// does not exist yet, as in PostgreSQL).
    pub fn created_by_other(&self, name: &str, me: Option<TxnId>) -> bool {
        let s = &self.shared;
        let owner = s.claim_owner.load(SeqCst);
        if owner == 0 || me.is_some_and(|m| m.raw() == owner) {
            return false;
        }
        let state = s.lock_ddl();
        let Some(claim) = state.claim.as_ref().filter(|c| Some(c.owner) != me) else { return false };
        // The name is the claim's new one if the committed catalog has no
        // table of that name (a column change drops the table and renames
        // a new one to its name: that table was there before).
        s.catalog.load().contains_key(name)
            && !s.committed_images(Some(claim)).iter().any(|i| i.def.name == name)
    }

    /// The transaction holding the schema claim, if any.
    pub fn claim_owner(&self) -> Option<TxnId> {
        match self.shared.claim_owner.load(SeqCst) {
            0 => None,
            raw => Some(TxnId::from_raw(raw)),
        }
    }

    /// Waits until transaction `owner` (found by [`Database::claimed`]) has
    /// ended, on behalf of transaction `me` if the caller has one (then a
    /// cycle of waits fails with 40P01), bounded as `limits` say.
    pub fn wait_claim(&self, me: Option<TxnId>, owner: TxnId, limits: crate::WaitLimits) -> Result<()> {
        let lock_deadline = limits.lock_timeout.map(|t| std::time::Instant::now() + t);
        crate::mvcc::ddl_waits(limits, || {
            while self.shared.claim_owner.load(SeqCst) == owner.raw() {
                self.shared.wait_claim(me, owner, lock_deadline)?;
            }
            Ok(())
        })
    }

    /// Waits until no transaction but the calling thread's own (see
    /// [`ddl_scope`]) has uncommitted writes in table `name`: what a schema
    /// change that copies the table does first, so that no such write is
    /// left behind in the old table. Bounded as [`crate::mvcc::ddl_waits`]
    /// says; with the caller's transaction, a cycle of waits is a deadlock.
    pub fn wait_for_writers(&self, name: &str) -> Result<()> {
        let t = self.table(name)?;
        let me = ddl_txn();
        let lock_deadline = ddl_lock_deadline();
        while let Some(id) = self.shared.pending_writer(&t, |id| Some(id) != me) {
            self.shared.wait_txn(me, id, lock_deadline)?;
        }
        Ok(())
    }
}
