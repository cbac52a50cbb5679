//! Reads: key look-ups through hash indexes and full scans.
//!
//! Reads take no lock and no latch. A chain walk holds an epoch pin (so no
//! version it passes is freed under it) for one chain at a time; the rows it
//! returns are visible to the transaction, and a version visible to an
//! active transaction is never collected, so returned rows need no pin.
//!
//! Under SERIALIZABLE every returned version joins the read set and every
//! look-up or scan joins the scan set, for validation at commit.

use super::transaction::{Isolation, ScanRecord, Transaction};
use super::visibility;
use crate::error::{Error, Result};
use crate::index::hash::HashIndex;
use crate::row::layout::Probe;
use crate::row::version::VersionPtr;
use crate::table::Table;
use centum_types::Value;
use smallvec::SmallVec;
use std::marker::PhantomData;
use std::sync::Arc;

/// A row visible to a transaction. Valid while the transaction is borrowed
/// and its snapshot has not moved (see [`Transaction::begin_statement`]).
#[derive(Clone, Copy)]
pub struct Row<'a> {
    pub(crate) table: &'a Arc<Table>,
    pub(crate) v: VersionPtr,
    _txn: PhantomData<&'a Transaction>,
}

impl<'a> Row<'a> {
    pub(crate) fn new(table: &'a Arc<Table>, v: VersionPtr) -> Row<'a> {
        Row { table, v, _txn: PhantomData }
    }

    /// The table the row belongs to.
    pub fn table(&self) -> &'a Arc<Table> {
        self.table
    }

    /// Column `col` as a value.
    pub fn get(&self, col: usize) -> Value {
        self.table.layout.value(self.v.data(), col)
    }

    /// Every column.
    pub fn values(&self) -> Vec<Value> {
        self.table.layout.values(self.v.data())
    }

    /// An integer column without building a [`Value`]; `None` for NULL.
    pub fn int(&self, col: usize) -> Option<i64> {
        self.table.layout.int(self.v.data(), col)
    }

    /// The raw stored bytes of column `col` (see `RowLayout::raw`).
    pub fn raw(&self, col: usize) -> Option<&'a [u8]> {
        // The version outlives the borrow of the transaction that sees it.
        self.table.layout.raw(self.v.data(), col)
    }
}

impl std::fmt::Debug for Row<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.values()).finish()
    }
}

impl Transaction {
    fn serializable(&self) -> bool {
        self.isolation == Isolation::Serializable
    }

    /// Whether `v` is visible in operation `op`; collects it on the way if
    /// it is garbage.
    #[inline]
    fn sees(&self, table: &Table, v: VersionPtr, op: u32, horizon: u64) -> bool {
        if visibility::is_garbage(v, horizon) {
            self.db.gc.reader_unlink(table, v);
            return false;
        }
        visibility::visible(&self.db.txns, v, self.id, self.read_ts, op)
    }

    /// The index named `index`, checked to serve this transaction.
    fn usable_index(&self, table: &Table, index: &str) -> Result<Arc<HashIndex>> {
        self.check_usable()?;
        table.check_not_dropped()?;
        let ix = table.index(index)?;
        if !ix.ready_for(self.read_ts) {
            return Err(Error::IndexNotReady(ix.name.clone()));
        }
        Ok(ix)
    }

    fn probe(&self, ix: &HashIndex, key: &[Value]) -> Result<Probe> {
        if key.len() != ix.key.columns.len() {
            return Err(Error::KeyArity {
                index: ix.name.clone(),
                expected: ix.key.columns.len(),
                found: key.len(),
            });
        }
        ix.key.probe(key)
    }

    /// Walks the chain of `probe` (under the caller's pin) and passes each
    /// visible version with the key to `found`, which returns false to stop.
    #[inline]
    fn walk_key(
        &self,
        table: &Table,
        ix: &HashIndex,
        probe: &Probe,
        op: u32,
        horizon: u64,
        mut found: impl FnMut(VersionPtr) -> bool,
    ) {
        if probe.has_null() {
            return;
        }
        let mut cur = ix.chains.first(ix.bucket(probe));
        while let Some(v) = cur {
            cur = ix.chains.next(v);
            if ix.chains.is_live(v)
                && ix.key.matches(&table.layout, v.data(), probe)
                && self.sees(table, v, op, horizon)
                && !found(v)
            {
                return;
            }
        }
    }

    /// Records a key look-up for SERIALIZABLE validation.
    fn record_key(&self, table: &Arc<Table>, ix: &Arc<HashIndex>, probe: Probe, rows: &[VersionPtr]) {
        let mut inner = self.inner.borrow_mut();
        let t = inner.table_no(table);
        inner.reads.extend_from_slice(rows);
        inner.scans.push(ScanRecord::Key(t, ix.clone(), probe));
    }

    /// The visible versions with `key` in index `index`: all of them, or
    /// only the first when `first` is set. One match needs no allocation.
    fn find(
        &self,
        table: &Arc<Table>,
        index: &str,
        key: &[Value],
        first: bool,
    ) -> Result<SmallVec<[VersionPtr; 1]>> {
        let ix = self.usable_index(table, index)?;
        let probe = self.probe(&ix, key)?;
        let op = self.next_op();
        let mut out = SmallVec::new();
        {
            let _pin = crossbeam_epoch::pin();
            self.walk_key(table, &ix, &probe, op, self.db.gc.horizon(), |v| {
                out.push(v);
                !first && !ix.unique
            });
        }
        if self.serializable() {
            self.record_key(table, &ix, probe, &out);
        }
        Ok(out)
    }

    /// The rows whose key in index `index` equals `key` (every key column
    /// given).
    pub fn lookup<'a>(&'a self, table: &'a Arc<Table>, index: &str, key: &[Value]) -> Result<Vec<Row<'a>>> {
        Ok(self.find(table, index, key, false)?.into_iter().map(|v| Row::new(table, v)).collect())
    }

    /// The row whose key in index `index` equals `key`, if any (the first
    /// one for a non-unique index).
    pub fn get<'a>(&'a self, table: &'a Arc<Table>, index: &str, key: &[Value]) -> Result<Option<Row<'a>>> {
        Ok(self.find(table, index, key, true)?.first().map(|&v| Row::new(table, v)))
    }

    /// Looks up many keys at once: `get` for each, in order. The look-ups
    /// of a batch overlap their memory accesses (every bucket is
    /// prefetched, then every chain's first version), which is several
    /// times faster than one `get` after another on a table larger than
    /// the CPU caches.
    pub fn get_many<'a, K: AsRef<[Value]>>(
        &'a self,
        table: &'a Arc<Table>,
        index: &str,
        keys: &[K],
    ) -> Result<Vec<Option<Row<'a>>>> {
        const BATCH: usize = 16;
        let ix = self.usable_index(table, index)?;
        let op = self.next_op();
        let mut out = Vec::with_capacity(keys.len());
        for group in keys.chunks(BATCH) {
            let probes = group.iter().map(|k| self.probe(&ix, k.as_ref())).collect::<Result<Vec<_>>>()?;
            let mut hits: [Option<VersionPtr>; BATCH] = [None; BATCH];
            {
                let _pin = crossbeam_epoch::pin();
                for p in &probes {
                    ix.chains.prefetch_bucket(ix.bucket(p));
                }
                for p in &probes {
                    if let Some(v) = ix.chains.first(ix.bucket(p)) {
                        v.prefetch();
                    }
                }
                let horizon = self.db.gc.horizon();
                for (i, p) in probes.iter().enumerate() {
                    self.walk_key(table, &ix, p, op, horizon, |v| {
                        hits[i] = Some(v);
                        false
                    });
                }
            }
            if self.serializable() {
                for (i, p) in probes.into_iter().enumerate() {
                    self.record_key(table, &ix, p, hits[i].as_slice());
                }
            }
            out.extend(hits[..group.len()].iter().map(|h| h.map(|v| Row::new(table, v))));
        }
        Ok(out)
    }

    /// Every row of the table, in no particular order. The scan sees the
    /// transaction's snapshot as of the call, not rows it writes while
    /// iterating.
    pub fn scan<'a>(&'a self, table: &'a Arc<Table>) -> Result<Scan<'a>> {
        self.check_usable()?;
        table.check_not_dropped()?;
        let op = self.next_op();
        if self.serializable() {
            let mut inner = self.inner.borrow_mut();
            let t = inner.table_no(table);
            inner.scans.push(ScanRecord::Table(t));
        }
        Ok(Scan { txn: self, table, op, bucket: 0, end: table.scan.len(), batch: Vec::new(), pos: 0 })
    }

    /// Like [`Transaction::scan`] over part of the table's scan chains (for
    /// work that proceeds in batches, such as an index build).
    pub(crate) fn scan_buckets<'a>(
        &'a self,
        table: &'a Arc<Table>,
        buckets: std::ops::Range<usize>,
    ) -> Result<Scan<'a>> {
        let mut s = self.scan(table)?;
        s.bucket = buckets.start;
        s.end = buckets.end.min(table.scan.len());
        Ok(s)
    }
}

/// An iterator over a table's visible rows. It holds no epoch pin between
/// calls: it collects one chain's visible rows at a time.
pub struct Scan<'a> {
    txn: &'a Transaction,
    table: &'a Arc<Table>,
    op: u32,
    bucket: usize,
    end: usize,
    batch: Vec<VersionPtr>,
    pos: usize,
}

impl<'a> Iterator for Scan<'a> {
    type Item = Row<'a>;

    fn next(&mut self) -> Option<Row<'a>> {
        loop {
            if let Some(&v) = self.batch.get(self.pos) {
                self.pos += 1;
                return Some(Row::new(self.table, v));
            }
            if self.bucket >= self.end {
                return None;
            }
            self.batch.clear();
            self.pos = 0;
            let horizon = self.txn.db.gc.horizon();
            let _pin = crossbeam_epoch::pin();
            let chains = &self.table.scan;
            let mut cur = chains.first(self.bucket);
            while let Some(v) = cur {
                cur = chains.next(v);
                if chains.is_live(v) && self.txn.sees(self.table, v, self.op, horizon) {
                    self.batch.push(v);
                }
            }
            self.bucket += 1;
            if self.txn.serializable() {
                self.txn.inner.borrow_mut().reads.extend_from_slice(&self.batch);
            }
        }
    }
}
