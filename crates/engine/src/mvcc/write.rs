//! Writes: insert, update, delete, and the conflicts between writers.
//!
//! To change a version a transaction swaps its own id into the version's
//! end field, which must hold INFINITY (or the id of an aborted
//! transaction). If another transaction holds it, or a committed
//! transaction replaced the version after this transaction's snapshot:
//!
//! - under SNAPSHOT and SERIALIZABLE the second writer fails at once with a
//!   serialization failure (first writer wins, SQLSTATE 40001);
//! - under READ COMMITTED it waits for the holder to finish (with deadlock
//!   detection, 40P01). If the holder aborted it takes the version; if it
//!   committed it follows the `newer` link to the newest version and
//!   re-applies its change there, as PostgreSQL does, so a hot row does not
//!   turn into a stream of aborts. A row deleted meanwhile is skipped.
//!
//! *Early lock release.* The wait ends as soon as the holder's redo record
//! is in the log (state Logged), not when it is durable: the writer then
//! treats the holder as committed, follows the `newer` link to the
//! holder's version and builds on it, with a *commit dependency* on the
//! holder. The holder's record precedes the writer's in the log, so the
//! writer is durable only if the holder is. If the log's write of the
//! holder's record fails, the writer's record is refused or taken out of
//! the log's buffer (the log fails every synchronous record appended while
//! a failed write was under way, and refuses a dependent's record after
//! one), and the writer fails with 40001 (see `transaction.rs`). So a
//! hot row is held for the holder's statements, not for its fsync.
//!
//! Unique indexes are checked after the new version is linked in: a
//! version linked later than ours will see ours in its own check, so
//! between two concurrent inserters of one key at least one sees the other
//! (chains grow at the head, so "after ours in the chain" means "linked
//! before ours").

use super::transaction::{Isolation, OnHeld, Transaction, WriteKind};
use super::txn_table::TxnState;
use super::visibility::{self, Begin, End};
use super::word::{TxnId, Word, INFINITY, RETIRED};
use crate::error::{Error, Result};
use crate::index::btree::Direction;
use crate::index::Index;
use crate::mvcc::read::Row;
use crate::row::sortkey::prefix_successor;
use crate::row::version::VersionPtr;
use crate::sync::Ordering::SeqCst;
use crate::table::{IndexSet, Table};
use centum_types::Value;
use std::sync::Arc;

/// What stands in the way of a write.
enum Blocker {
    /// Another transaction that has not finished.
    Txn(TxnId),
    /// A transaction whose record is logged, to commit at this timestamp.
    Logged(u64),
    /// A committed change after our snapshot (or ever, for READ COMMITTED),
    /// with its commit timestamp.
    Committed(u64),
}

impl Transaction {
    /// Inserts a row. Values are converted to their columns' types as an
    /// SQL assignment would (an `Integer` into a `bigint` column, a text
    /// into a `varchar(n)` with its length checked, ...).
    pub fn insert(&self, table: &Arc<Table>, mut values: Vec<Value>) -> Result<()> {
        self.insert_values(table, &mut values)
    }

    /// [`Transaction::insert`] for a caller that keeps the row afterwards:
    /// `values` are converted in place to the columns' types, as stored.
    pub fn insert_values(&self, table: &Arc<Table>, values: &mut [Value]) -> Result<()> {
        self.check_usable()?;
        table.check_not_dropped()?;
        self.check_row(table, values)?;
        let bytes = table.layout.encoded_len(values);
        self.db.admit(bytes)?;
        table.admit(bytes)?;
        let set = table.indexes.load();
        // Linked but not yet in the write set: nothing may unwind here.
        let _c = crate::critical::Critical::enter("inserting a row version");
        let n = self.new_version(table, &set, values);
        if let Err(e) = self.check_unique(table, &set, n) {
            self.discard(table, n);
            return Err(self.doom(e));
        }
        self.inner.borrow_mut().push_write(table, WriteKind::Insert(n));
        self.db.txns.mark_holder(self.id);
        Ok(())
    }

    /// Puts the versions this transaction has written into indexes built
    /// since it wrote them. An index built inside the transaction (see
    /// [`crate::ddl`]) indexes every version but the builder's own, which
    /// only the builder can replace: each is replaced by an identical one
    /// made under the new index set. A unique index refuses a duplicate
    /// among them here.
    pub fn relink_own_writes(&self) -> Result<()> {
        let me = self.id.raw();
        let stale: Vec<(Arc<Table>, VersionPtr)> = {
            let inner = self.inner.borrow();
            inner
                .writes
                .iter()
                .filter_map(|&(t, w)| {
                    let n = w.created()?;
                    let table = &inner.tables[t as usize];
                    let current = n.end().load(SeqCst) != me;
                    let uncovered = table.indexes.load().iter().any(|ix| !ix.covers(n));
                    (current && uncovered).then(|| (table.clone(), n))
                })
                .collect()
        };
        for (table, v) in stale {
            let row = Row::new(&table, v);
            self.update(&row, row.values())?;
        }
        Ok(())
    }

    /// Replaces `row` with `values`. Returns false if the row was deleted by
    /// a concurrent transaction (READ COMMITTED only; the other levels fail).
    pub fn update(&self, row: &Row<'_>, values: Vec<Value>) -> Result<bool> {
        let mut values = Some(values);
        self.update_with(row, |_| values.take())
    }

    /// Replaces `row` with what `f` computes from it. Under READ COMMITTED,
    /// if a concurrent transaction changed the row first, `f` runs again on
    /// the newest version (return `None` to leave it alone, e.g. when it no
    /// longer matches a WHERE clause). Returns whether a row was updated.
    pub fn update_with(&self, row: &Row<'_>, f: impl FnMut(&[Value]) -> Option<Vec<Value>>) -> Result<bool> {
        self.update_inner(row, None, f)
    }

    /// Locks `row` for this transaction, as `SELECT ... FOR UPDATE` does:
    /// other writers of the row, and other lockers, wait for this
    /// transaction to end; readers do not. The lock is an update that
    /// writes the row's values unchanged, so it is held, logged and
    /// released exactly as an update is (and a crash forgets it with the
    /// transaction).
    ///
    /// `current` must be `row.values()`. Under READ COMMITTED, a row that a
    /// committed transaction changed meanwhile is locked in its newest
    /// version if `qualifies` still holds for it. `on_held` says what
    /// happens when another open transaction holds the row. Returns the
    /// values locked, or `None` where the row is gone, no longer
    /// qualifies, or was skipped.
    pub fn lock_row(
        &self,
        row: &Row<'_>,
        current: &[Value],
        on_held: OnHeld,
        mut qualifies: impl FnMut(&[Value]) -> bool,
    ) -> Result<Option<Vec<Value>>> {
        struct Reset<'a>(&'a std::cell::Cell<OnHeld>);
        impl Drop for Reset<'_> {
            fn drop(&mut self) {
                self.0.set(OnHeld::Wait);
            }
        }
        self.on_held.set(on_held);
        let _reset = Reset(&self.on_held);
        let mut locked = None;
        self.update_inner(row, Some(current), |cur| {
            if !qualifies(cur) {
                return None;
            }
            locked = Some(cur.to_vec());
            locked.clone()
        })
        .map(|done| if done { locked } else { None })
    }

    /// [`Transaction::update_with`] for a caller that has already read the
    /// row: `current` must be `row.values()`, and saves decoding it again.
    pub fn update_with_current(
        &self,
        row: &Row<'_>,
        current: &[Value],
        f: impl FnMut(&[Value]) -> Option<Vec<Value>>,
    ) -> Result<bool> {
        self.update_inner(row, Some(current), f)
    }

    fn update_inner(
        &self,
        row: &Row<'_>,
        current: Option<&[Value]>,
        mut f: impl FnMut(&[Value]) -> Option<Vec<Value>>,
    ) -> Result<bool> {
        self.check_usable()?;
        let table = row.table;
        table.check_not_dropped()?;
        let target = row.v;
        let first = match current {
            Some(c) => f(c),
            None => f(&table.layout.values(target.data())),
        };
        let mut values = match first {
            Some(v) => v,
            None => return Ok(false),
        };
        {
            self.check_row(table, &mut values)?;
            let bytes = table.layout.encoded_len(&values);
            self.db.admit(bytes)?;
            table.admit(bytes)?;
            let Some(old) = self.lock(target).map_err(|e| self.doom(e))? else {
                return Ok(false);
            };
            if old != target {
                // Moved on to a newer version: recompute from it.
                match self.while_held(old, || f(&table.layout.values(old.data()))) {
                    Some(v) => values = v,
                    None => {
                        self.unlock(old);
                        return Ok(false);
                    }
                }
                if let Err(e) = self.check_row(table, &mut values) {
                    self.unlock(old);
                    return Err(e);
                }
            }
            let set = table.indexes.load();
            let _c = crate::critical::Critical::enter("replacing a row version");
            let n = self.new_version(table, &set, &values);
            old.set_newer(Some(n));
            if let Err(e) = self.check_unique(table, &set, n) {
                old.set_newer(None);
                self.unlock(old);
                self.discard(table, n);
                return Err(self.doom(e));
            }
            let mut inner = self.inner.borrow_mut();
            inner.push_write(table, WriteKind::Update(old, n));
            if self.isolation == Isolation::Serializable {
                inner.reads.push(old);
            }
            Ok(true)
        }
    }

    /// Deletes `row`. Returns false if a concurrent transaction deleted it
    /// first (READ COMMITTED only).
    pub fn delete(&self, row: &Row<'_>) -> Result<bool> {
        self.delete_with(row, |_| true)
    }

    /// Deletes `row` if `keep_going` accepts the row's values. Under READ
    /// COMMITTED, when a concurrent transaction changed the row first,
    /// `keep_going` sees the newest version (return false to leave it, e.g.
    /// when it no longer matches a WHERE clause); otherwise it is not
    /// called. Returns whether a row was deleted.
    pub fn delete_with(&self, row: &Row<'_>, mut keep_going: impl FnMut(&[Value]) -> bool) -> Result<bool> {
        self.check_usable()?;
        let table = row.table;
        table.check_not_dropped()?;
        let Some(old) = self.lock(row.v).map_err(|e| self.doom(e))? else {
            return Ok(false);
        };
        if old != row.v && !self.while_held(old, || keep_going(&table.layout.values(old.data()))) {
            self.unlock(old);
            return Ok(false);
        }
        let mut inner = self.inner.borrow_mut();
        inner.push_write(table, WriteKind::Delete(old));
        if self.isolation == Isolation::Serializable {
            inner.reads.push(old);
        }
        Ok(true)
    }

    /// Makes `values` a storable row of `table`: converts each value that is
    /// not already of its column's type as an assignment would (integer
    /// widening, numeric rounding to the column's scale, text length
    /// checks...), then checks NOT NULL and the row's size.
    fn check_row(&self, table: &Table, values: &mut [Value]) -> Result<()> {
        if values.len() != table.columns.len() {
            return Err(Error::ColumnCount {
                table: table.name(),
                expected: table.columns.len(),
                found: values.len(),
            });
        }
        for (c, v) in table.columns.iter().zip(values.iter_mut()) {
            if !c.nullable && v.is_null() {
                return Err(Error::NotNullViolation { table: table.name(), column: c.name.clone() });
            }
            if !v.fits(&c.ty) {
                *v = std::mem::replace(v, Value::Null).coerce_to(&c.ty)?;
            }
        }
        table.layout.check(values)
    }

    /// Builds a version of `values` owned by this transaction and links it
    /// into the table.
    fn new_version(&self, table: &Table, set: &IndexSet, values: &[Value]) -> VersionPtr {
        let len = table.layout.encoded_len(values);
        let op = self.next_op();
        let v = VersionPtr::new(self.id.raw(), set.gen, op, set.links(), len, |buf| {
            table.layout.encode(values, buf)
        });
        table.link(set, v);
        v
    }

    /// Takes back a version this transaction just made and nobody saw.
    fn discard(&self, table: &Table, v: VersionPtr) {
        v.begin().store(INFINITY, SeqCst);
        let guard = crossbeam_epoch::pin();
        table.retire(&guard, v);
    }

    /// Gives back the end field of a version this transaction took.
    /// Runs `f` (the caller's code) while this transaction holds `held`
    /// without having recorded it in its write set yet: a panic in `f`
    /// releases the row before unwinding on, so nobody waits on it for
    /// ever.
    fn while_held<R>(&self, held: VersionPtr, f: impl FnOnce() -> R) -> R {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            Ok(r) => r,
            Err(panic) => {
                self.unlock(held);
                std::panic::resume_unwind(panic)
            }
        }
    }

    fn unlock(&self, v: VersionPtr) {
        let _ = v.end().compare_exchange(self.id.raw(), INFINITY, SeqCst, SeqCst);
    }

    /// Takes the end field of `v` (or, under READ COMMITTED, of the newest
    /// version of its row). Returns the version taken, or `None` if the row
    /// is gone.
    fn lock(&self, mut v: VersionPtr) -> Result<Option<VersionPtr>> {
        let txns = &self.db.txns;
        // A version reached through a logged holder's `newer` link may be
        // freed if the holder aborts, until this transaction holds its end
        // field: look at it only under a pin (dropped for waits).
        let mut pin = None;
        loop {
            let raw = v.end().load(SeqCst);
            let blocker = match Word::decode(raw) {
                Word::Ts(INFINITY) => None,
                // Its creator aborted after this transaction built on it:
                // the row is gone, and the commit will fail (it depends on
                // the creator).
                Word::Ts(RETIRED) => return Ok(None),
                Word::Ts(ts) => Some(Blocker::Committed(ts)),
                Word::Txn(id) if id == self.id => return Err(Error::RowAlreadyChanged),
                Word::Txn(id) => match txns.state(id) {
                    None => continue,
                    Some(TxnState::Aborted) => None,
                    Some(TxnState::Committed(ts)) => Some(Blocker::Committed(ts)),
                    Some(TxnState::Logged(ts)) => Some(Blocker::Logged(ts)),
                    Some(_) => Some(Blocker::Txn(id)),
                },
            };
            match blocker {
                None => {
                    if v.end().compare_exchange(raw, self.id.raw(), SeqCst, SeqCst).is_ok() {
                        txns.mark_holder(self.id);
                        return Ok(Some(v));
                    }
                }
                Some(_) if self.isolation != Isolation::ReadCommitted => {
                    return Err(Error::Serialization("concurrent update"));
                }
                Some(Blocker::Txn(_)) if self.on_held.get() == OnHeld::Skip => return Ok(None),
                Some(Blocker::Txn(_)) if self.on_held.get() == OnHeld::Fail => return Err(Error::RowLocked),
                Some(Blocker::Txn(id)) => {
                    pin = None;
                    self.wait_or_defer(id, true)?
                }
                Some(Blocker::Committed(ts)) | Some(Blocker::Logged(ts)) => {
                    // Committed replacements are never undone, and logged
                    // ones only by a failed log write, which fails this
                    // transaction too (the dependency): follow them, and
                    // read later statements at or after this commit.
                    if matches!(blocker, Some(Blocker::Logged(_))) {
                        txns.depend(self.id, ts);
                    }
                    self.followed.set(self.followed.get().max(ts));
                    // Pinned before reading the link: a holder that aborts
                    // clears it before it retires its version.
                    pin.get_or_insert_with(crossbeam_epoch::pin);
                    match v.newer() {
                        Some(n) => v = n,
                        None => return Ok(None),
                    }
                }
            }
        }
    }

    /// Checks every unique index for another live version with the key of
    /// `n` (which is already linked).
    fn check_unique(&self, table: &Table, set: &IndexSet, n: VersionPtr) -> Result<()> {
        // An index this transaction dropped holds it to nothing.
        for ix in set.iter().filter(|ix| ix.is_unique() && ix.dropped_by() != self.id.raw()) {
            self.check_unique_in(table, ix, n)?;
        }
        Ok(())
    }

    fn check_unique_in(&self, table: &Table, ix: &Index, n: VersionPtr) -> Result<()> {
        if ix.key_columns().iter().any(|&c| table.layout.is_null(n.data(), c)) {
            return Ok(()); // NULLs are distinct
        }
        // Look under a pin; to wait for another transaction, drop the pin
        // (a wait may be long) and look again afterwards.
        while let Some(id) = self.unique_conflict(table, ix, n)? {
            if self.isolation != Isolation::ReadCommitted {
                return Err(Error::Serialization("a concurrent change of the same key"));
            }
            self.wait_or_defer(id, false)?;
        }
        Ok(())
    }

    /// Waits for transaction `id` (see [`TxnTable::wait_for`]), or, when
    /// the wait limits defer waits, fails with [`Error::WouldWait`] unless
    /// a brief spin already saw it end.
    fn wait_or_defer(&self, id: TxnId, or_logged: bool) -> Result<()> {
        let limits = self.waits.borrow();
        if !limits.defer {
            return self.db.txns.wait_for(self.id, id, &limits, or_logged);
        }
        if self.db.txns.ended_after_spin(id, or_logged) {
            return Ok(());
        }
        Err(Error::WouldWait { holder: id, or_logged })
    }

    /// The first version with `n`'s key that makes `n` a duplicate (an
    /// error) or may make it one (the transaction to wait for).
    ///
    /// In a hash index only versions linked before `n` are looked at (they
    /// follow it in the chain): of two concurrent inserters of one key, the
    /// later one finds the earlier. A range index has no such order, so
    /// every other version with the key is looked at; two inserters that
    /// find each other pending may then both wait, which deadlock detection
    /// breaks (40P01) for one of them.
    fn unique_conflict(&self, table: &Table, ix: &Index, n: VersionPtr) -> Result<Option<TxnId>> {
        let _pin = crossbeam_epoch::pin();
        match ix {
            Index::Hash(h) => {
                let probe = h.key.probe_row(&table.layout, n.data());
                let walk = h.chains.walk_from(probe.hash);
                let mut cur = h.chains.next(&walk, n);
                while let Some(w) = cur {
                    cur = h.chains.next(&walk, w);
                    if !h.chains.is_live(w) || !h.key.matches(&table.layout, w.data(), &probe) {
                        continue;
                    }
                    if let Some(id) = self.unique_verdict(table, ix, w)? {
                        return Ok(Some(id));
                    }
                }
                Ok(None)
            }
            Index::Range(r) => {
                let lo = r.key_of(&table.layout, n);
                let hi = prefix_successor(&lo);
                let mut out = Ok(None);
                r.for_each(Some(&lo), hi.as_deref(), Direction::Forward, |w| {
                    if w == n {
                        return true;
                    }
                    out = self.unique_verdict(table, ix, w);
                    matches!(out, Ok(None))
                });
                out
            }
        }
    }

    /// What another version `w` with the same key means for a unique
    /// insert: nothing (`None`), a transaction to wait for, or an error.
    fn unique_verdict(&self, table: &Table, ix: &Index, w: VersionPtr) -> Result<Option<TxnId>> {
        let txns = &self.db.txns;
        let snapshot = self.isolation != Isolation::ReadCommitted;
        // A logged transaction's change counts as committed, with a
        // commit dependency on it (early lock release).
        let begin = match visibility::begin(txns, w, self.id) {
            Begin::Pending(_, TxnState::Logged(ts)) => {
                txns.depend(self.id, ts);
                Begin::Committed(ts)
            }
            b => b,
        };
        let end = || match visibility::end(txns, w, self.id) {
            End::Pending(_, TxnState::Logged(ts)) => {
                txns.depend(self.id, ts);
                End::Committed(ts)
            }
            e => e,
        };
        match begin {
            Begin::Aborted => Ok(None),
            Begin::Pending(id, _) => Ok(Some(id)),
            Begin::Mine | Begin::Committed(_) => match end() {
                End::Mine => Ok(None),
                // A row our snapshot sees, deleted by a transaction that
                // committed since: a write to the same key that came first.
                End::Committed(_)
                    if snapshot && visibility::visible(txns, w, self.id, self.read_ts, u32::MAX) =>
                {
                    Err(Error::Serialization("a concurrent delete of the same key"))
                }
                End::Committed(_) => Ok(None),
                End::Pending(id, _) => Ok(Some(id)),
                End::Open => {
                    let seen = visibility::visible(txns, w, self.id, self.read_ts, u32::MAX);
                    if !seen && snapshot {
                        return Err(Error::Serialization("a concurrent insert of the same key"));
                    }
                    if self.isolation == Isolation::Serializable {
                        // The violation tells the transaction the key
                        // exists: that is a read, to be validated.
                        self.inner.borrow_mut().reads.push(w);
                    }
                    Err(Error::UniqueViolation { index: ix.name().to_string(), table: table.name() })
                }
            },
        }
    }
}
