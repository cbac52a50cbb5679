//! Reads: key look-ups through hash and range indexes, range scans in
//! either direction, and full scans.
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
use crate::db::Shared;
use crate::error::{Error, Result};
use crate::index::btree::{Cursor, Direction};
use crate::index::hash::HashIndex;
use crate::index::Index;
use crate::row::layout::Probe;
use crate::row::sortkey::{prefix_successor, KeyBytes, KeyRange};
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

    /// The columns marked in `wanted`, the others NULL (not decoded).
    pub fn values_of(&self, wanted: &[bool]) -> Vec<Value> {
        self.table.layout.values_of(self.v.data(), wanted)
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
        self.reader().sees(table, v, op, horizon)
    }

    /// What visibility reads of the transaction: shared state only, so a
    /// scan may check versions on several threads at once.
    pub(crate) fn reader(&self) -> Reader<'_> {
        Reader { db: &self.db, id: self.id, read_ts: self.read_ts }
    }
}

/// A transaction's snapshot as visibility checks read it (see
/// [`Transaction::reader`]).
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    db: &'a Shared,
    id: super::word::TxnId,
    read_ts: u64,
}

impl Reader<'_> {
    /// [`Transaction::sees`].
    #[inline]
    pub(crate) fn sees(&self, table: &Table, v: VersionPtr, op: u32, horizon: u64) -> bool {
        if visibility::is_garbage(v, horizon) {
            self.db.gc.reader_unlink(table, v);
            return false;
        }
        visibility::visible(&self.db.txns, v, self.id, self.read_ts, op)
    }
}

impl Transaction {
    /// The index named `index`, checked to serve this transaction.
    fn usable_index(&self, table: &Table, index: &str) -> Result<Arc<Index>> {
        self.check_usable()?;
        table.check_not_dropped()?;
        let ix = table.index(index)?;
        if !ix.ready_for(self.read_ts) {
            return Err(Error::IndexNotReady(ix.name().to_string()));
        }
        Ok(ix)
    }

    fn check_arity(ix: &Index, key: &[Value]) -> Result<()> {
        if key.len() != ix.key_columns().len() {
            return Err(Error::KeyArity {
                index: ix.name().to_string(),
                expected: ix.key_columns().len(),
                found: key.len(),
            });
        }
        Ok(())
    }

    fn probe(&self, ix: &HashIndex, key: &[Value]) -> Result<Probe> {
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
        let (walk, mut cur) = ix.first(probe);
        while let Some(v) = cur {
            cur = ix.chains.next(&walk, v);
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
    fn record_key(&self, table: &Arc<Table>, ix: &Arc<Index>, probe: Probe, rows: &[VersionPtr]) {
        let mut inner = self.inner.borrow_mut();
        let t = inner.table_no(table);
        inner.reads.extend_from_slice(rows);
        inner.scans.push(ScanRecord::Key(t, ix.clone(), probe));
    }

    /// Records a range scan for SERIALIZABLE validation.
    fn record_range(&self, ix: &Arc<Index>, lo: Option<KeyBytes>, hi: Option<KeyBytes>) {
        self.inner.borrow_mut().scans.push(ScanRecord::Range(ix.clone(), lo, hi));
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
        Self::check_arity(&ix, key)?;
        let op = self.next_op();
        let mut out = SmallVec::new();
        let more = !first && !ix.is_unique();
        match &*ix {
            Index::Hash(h) => {
                let probe = self.probe(h, key)?;
                {
                    let _pin = crossbeam_epoch::pin();
                    self.walk_key(table, h, &probe, op, self.db.gc.horizon(), |v| {
                        out.push(v);
                        more
                    });
                }
                if self.serializable() {
                    self.record_key(table, &ix, probe, &out);
                }
            }
            Index::Range(r) => {
                if key.iter().any(Value::is_null) {
                    return Ok(out); // NULL equals nothing
                }
                let lo = r.key.encode_values(key)?;
                let hi = prefix_successor(&lo);
                {
                    let _pin = crossbeam_epoch::pin();
                    let horizon = self.db.gc.horizon();
                    r.for_each_short(&lo, hi.as_deref(), |v| {
                        if self.sees(table, v, op, horizon) {
                            out.push(v);
                            return more;
                        }
                        true
                    });
                }
                if self.serializable() {
                    self.inner.borrow_mut().reads.extend_from_slice(&out);
                    self.record_range(&ix, Some(lo), hi);
                }
            }
        }
        ix.count_scans(1, out.len() as u64);
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
        let Some(h) = ix.as_hash() else {
            return keys.iter().map(|k| self.get(table, index, k.as_ref())).collect();
        };
        let op = self.next_op();
        let mut out = Vec::with_capacity(keys.len());
        for group in keys.chunks(BATCH) {
            let probes = group
                .iter()
                .map(|k| Self::check_arity(&ix, k.as_ref()).and_then(|()| self.probe(h, k.as_ref())))
                .collect::<Result<Vec<_>>>()?;
            let mut hits: [Option<VersionPtr>; BATCH] = [None; BATCH];
            {
                let _pin = crossbeam_epoch::pin();
                for p in &probes {
                    h.chains.prefetch(p.hash);
                }
                for p in &probes {
                    if let (_, Some(v)) = h.first(p) {
                        v.prefetch();
                    }
                }
                let horizon = self.db.gc.horizon();
                for (i, p) in probes.iter().enumerate() {
                    self.walk_key(table, h, p, op, horizon, |v| {
                        hits[i] = Some(v);
                        false
                    });
                }
            }
            ix.count_scans(group.len() as u64, hits.iter().flatten().count() as u64);
            if self.serializable() {
                for (i, p) in probes.into_iter().enumerate() {
                    self.record_key(table, &ix, p, hits[i].as_slice());
                }
            }
            out.extend(hits[..group.len()].iter().map(|h| h.map(|v| Row::new(table, v))));
        }
        Ok(out)
    }

    /// The rows of range index `index` whose key lies in `range`, in key
    /// order (`Forward`) or reverse key order (`Backward`). The scan sees
    /// the transaction's snapshot as of the call. Under SERIALIZABLE the
    /// whole range is recorded: a row committed into it (or out of it) by
    /// another transaction before this one commits makes the commit fail
    /// with a serialization failure.
    ///
    /// Taking only the first row gives MIN (forward) or MAX (backward) of
    /// the column after `range.eq`.
    pub fn range<'a>(
        &'a self,
        table: &'a Arc<Table>,
        index: &str,
        range: &KeyRange,
        dir: Direction,
    ) -> Result<RangeScan<'a>> {
        let ix = self.usable_index(table, index)?;
        let Some(r) = ix.as_range() else {
            return Err(Error::NotRangeIndex(ix.name().to_string()));
        };
        let bounds = r.key.byte_range(range).map_err(|e| match e {
            Error::KeyArity { expected, found, .. } => {
                Error::KeyArity { index: ix.name().to_string(), expected, found }
            }
            e => e,
        })?;
        let op = self.next_op();
        let cursor = match &bounds {
            Some((lo, hi)) => Cursor::new(lo.as_deref(), hi.as_deref(), dir),
            // Selects nothing: an empty range.
            None => Cursor::new(Some(&[0]), Some(&[0]), dir),
        };
        if self.serializable() {
            if let Some((lo, hi)) = bounds {
                self.record_range(&ix, lo, hi);
            }
        }
        ix.count_scans(1, 0);
        Ok(RangeScan { txn: self, table, ix, cursor, op, rows: Batches::default() })
    }

    /// Every row of the table, in no particular order. The scan sees the
    /// transaction's snapshot as of the call, not rows it writes while
    /// iterating.
    pub fn scan<'a>(&'a self, table: &'a Arc<Table>) -> Result<Scan<'a>> {
        let mut s = self.open_scan(table)?;
        table.count_scan();
        s.counted = true;
        Ok(s)
    }

    /// A scan that `pg_stat_user_tables` does not count (an index build's).
    pub(crate) fn open_scan<'a>(&'a self, table: &'a Arc<Table>) -> Result<Scan<'a>> {
        self.check_usable()?;
        table.check_not_dropped()?;
        let op = self.next_op();
        if self.serializable() {
            let mut inner = self.inner.borrow_mut();
            let t = inner.table_no(table);
            inner.scans.push(ScanRecord::Table(t));
        }
        Ok(Scan {
            txn: self,
            table,
            op,
            bucket: 0,
            end: table.scan.len(),
            rows: Batches::default(),
            counted: false,
        })
    }

    /// Like [`Transaction::scan`] over part of the table's scan chains (for
    /// work that proceeds in batches, such as an index build).
    pub(crate) fn scan_buckets<'a>(
        &'a self,
        table: &'a Arc<Table>,
        buckets: std::ops::Range<usize>,
    ) -> Result<Scan<'a>> {
        let mut s = self.open_scan(table)?;
        s.bucket = buckets.start;
        s.end = buckets.end.min(table.scan.len());
        Ok(s)
    }
}

/// Visible versions collected a chunk at a time (one scan chain, one index
/// leaf), each chunk under its own short epoch pin, so an iterator holds no
/// pin between calls. Under SERIALIZABLE every chunk joins the read set.
#[derive(Default)]
struct Batches {
    batch: Vec<VersionPtr>,
    pos: usize,
    /// Versions collected so far, for the table's or index's usage
    /// counters (added once, when the scan is dropped).
    collected: u64,
}

impl Batches {
    /// The next collected version. When the batch is used up, `fill`
    /// pushes the visible versions of the next chunk (given the collector
    /// horizon) and returns whether there was a chunk at all.
    fn next(
        &mut self,
        txn: &Transaction,
        mut fill: impl FnMut(&mut Vec<VersionPtr>, u64) -> bool,
    ) -> Option<VersionPtr> {
        loop {
            if let Some(&v) = self.batch.get(self.pos) {
                self.pos += 1;
                return Some(v);
            }
            self.batch.clear();
            self.pos = 0;
            let horizon = txn.db.gc.horizon();
            let more = {
                let _pin = crossbeam_epoch::pin();
                fill(&mut self.batch, horizon)
            };
            if !more {
                return None;
            }
            self.collected += self.batch.len() as u64;
            if txn.serializable() {
                txn.inner.borrow_mut().reads.extend_from_slice(&self.batch);
            }
        }
    }
}

/// An iterator over the visible rows of a range of a range index, in
/// index order. Like [`Scan`] it holds no epoch pin between calls: it
/// reads one leaf of the index at a time.
pub struct RangeScan<'a> {
    txn: &'a Transaction,
    table: &'a Arc<Table>,
    ix: Arc<Index>,
    cursor: Cursor,
    op: u32,
    rows: Batches,
}

impl Drop for RangeScan<'_> {
    fn drop(&mut self) {
        if self.rows.collected > 0 {
            self.ix.count_rows(self.rows.collected);
        }
    }
}

impl<'a> Iterator for RangeScan<'a> {
    type Item = Row<'a>;

    fn next(&mut self) -> Option<Row<'a>> {
        let RangeScan { txn, table, ix, cursor, op, rows } = self;
        let r = ix.as_range()?;
        let v = rows.next(txn, |batch, horizon| {
            if cursor.is_done() {
                return false;
            }
            r.tree.next_batch(cursor, |w| {
                if let Some(v) = VersionPtr::from_word(w as usize) {
                    if txn.sees(table, v, *op, horizon) {
                        batch.push(v);
                    }
                }
                true
            });
            true
        })?;
        Some(Row::new(self.table, v))
    }
}

/// Chains a table scan walks at most under one epoch pin.
const CHAINS_PER_PIN: usize = 64;

/// Visible rows a table scan collects under one epoch pin.
const ROWS_PER_PIN: usize = 32;

/// An iterator over a table's visible rows. It holds no epoch pin between
/// calls: it collects one chain's visible rows at a time.
pub struct Scan<'a> {
    txn: &'a Transaction,
    table: &'a Arc<Table>,
    op: u32,
    bucket: usize,
    end: usize,
    rows: Batches,
    /// Whether the rows count as a scan's in the table's usage.
    counted: bool,
}

impl Scan<'_> {
    /// The operation the scan reads as of.
    pub(crate) fn op(&self) -> u32 {
        self.op
    }
}

impl Drop for Scan<'_> {
    fn drop(&mut self) {
        if self.counted && self.rows.collected > 0 {
            self.table.count_scan_rows(self.rows.collected);
        }
    }
}

impl<'a> Iterator for Scan<'a> {
    type Item = Row<'a>;

    fn next(&mut self) -> Option<Row<'a>> {
        let Scan { txn, table, op, bucket, end, rows, .. } = self;
        let v = rows.next(txn, |batch, horizon| {
            // Chains until they give a batch of visible rows, a few dozen
            // at most under one pin (pinning per row costs as much as
            // reading it); buckets that never held a version are skipped.
            let chains = &table.scan;
            for _ in 0..CHAINS_PER_PIN {
                let Some(b) = chains.next_bucket(*bucket, *end) else {
                    *bucket = *end;
                    return !batch.is_empty();
                };
                let mut cur = chains.first(b);
                while let Some(v) = cur {
                    cur = chains.next(v);
                    if chains.is_live(v) && txn.sees(table, v, *op, horizon) {
                        batch.push(v);
                    }
                }
                *bucket = b + 1;
                if batch.len() >= ROWS_PER_PIN {
                    break;
                }
            }
            true
        })?;
        Some(Row::new(self.table, v))
    }
}
