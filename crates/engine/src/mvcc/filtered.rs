//! Full scans that test each row as they read it, on several threads when
//! the table is large.
//!
//! A query's filter often rejects most of a table, and the test it needs
//! can often be made on a version's stored bytes (the SQL layer's
//! byte-level checks). [`Transaction::scan_where`] takes such a test and
//! applies it while walking the scan chains, so rejected rows never leave
//! the engine. Because the test is `Sync` and the visibility check reads
//! only shared state (the transaction table and the version's stamps), the
//! walk can be split across threads:
//!
//! ```text
//!   round 1       chains [0, 256)             the calling thread alone
//!   round 2       chains [256, 256+4096)      pieces of 256 chains, taken
//!   round 3       ... twice as many            by up to 4 threads in turn
//!   ...
//! ```
//!
//! Rounds grow geometrically, so a consumer that stops early (a LIMIT, an
//! EXISTS) has read at most about twice what it used, and a small table is
//! read by the calling thread alone. Within a round each piece's rows are
//! kept apart and handed out in chain order, so the order of the rows does
//! not depend on how the threads were scheduled. Threads are started per
//! round with scoped threads: a round covers thousands of chains, so the
//! start costs a few microseconds against milliseconds of reading.
//!
//! The scan holds an epoch pin per piece on each thread, as [`Scan`]
//! does per chunk; the rows it returns are visible to the transaction and
//! so are never collected while it lives.
//!
//! Under SERIALIZABLE the scan runs on the calling thread through
//! [`Scan`], so every visible version joins the read set as before, and
//! the test is applied to rows already read.

use super::read::{Row, Scan};
use super::transaction::{Isolation, Transaction};
use crate::error::Result;
use crate::row::version::VersionPtr;
use crate::table::Table;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// Chains read alone by the calling thread before any thread is started.
const FIRST_ROUND: usize = 256;
/// Chains of the first parallel round; each later round doubles.
const PARALLEL_ROUND: usize = 4096;
/// Chains one thread takes at a time within a round.
const PIECE: usize = 256;
/// Live rows below which a table is read by the calling thread alone.
const PARALLEL_ROWS: i64 = 65_536;
/// Most threads reading one scan (the calling thread included).
const MAX_THREADS: usize = 4;

/// What a filtered scan hands out.
pub enum Scanned<'a> {
    /// A visible row that passed the test.
    Row(Row<'a>),
    /// `n` visible rows were read and failed the test since the last item
    /// (so that a caller can count work and check its deadline even when
    /// no row qualifies).
    Skipped(u64),
}

/// A full scan with a row test; see the module header.
pub struct FilteredScan<'a, P> {
    txn: &'a Transaction,
    table: &'a Arc<Table>,
    pred: P,
    how: How<'a>,
    /// Rows of the current round, in chain order, and the next to hand out.
    rows: Vec<VersionPtr>,
    pos: usize,
    /// Visible rows read and rejected since the last [`Scanned::Skipped`].
    skipped: u64,
    /// Visible rows read in all, for the table's usage counters.
    read: u64,
}

enum How<'a> {
    /// Serializable: a plain scan, tested row by row.
    Serial(Scan<'a>),
    /// Rounds over the chains from `next` up to `end`.
    Rounds { op: u32, next: usize, end: usize, span: usize, threads: usize },
}

impl Transaction {
    /// Every visible row of `table` that passes `pred`, in no particular
    /// order (see the module header). `pred` sees a row before it leaves
    /// the engine and may run on other threads.
    pub fn scan_where<'a, P>(&'a self, table: &'a Arc<Table>, pred: P) -> Result<FilteredScan<'a, P>>
    where
        P: Fn(&Row<'_>) -> bool + Sync,
    {
        let how = if self.isolation == Isolation::Serializable {
            How::Serial(self.scan(table)?)
        } else {
            let op = self.open_scan(table)?.op();
            table.count_scan();
            let big = table.live.get() >= PARALLEL_ROWS;
            let threads = if big {
                std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_THREADS)
            } else {
                1
            };
            How::Rounds { op, next: 0, end: table.scan.len(), span: FIRST_ROUND, threads }
        };
        Ok(FilteredScan { txn: self, table, pred, how, rows: Vec::new(), pos: 0, skipped: 0, read: 0 })
    }
}

impl<'a, P> FilteredScan<'a, P>
where
    P: Fn(&Row<'_>) -> bool + Sync,
{
    /// Reads the next round into `rows`; false when the table is done.
    fn round(&mut self) -> bool {
        let How::Rounds { op, next, end, span, threads } = &mut self.how else { return false };
        let chains = &self.table.scan;
        let Some(from) = chains.next_bucket(*next, *end) else {
            *next = *end;
            return false;
        };
        let to = (from + *span).min(*end);
        *next = to;
        let parallel = *span > FIRST_ROUND && *threads > 1;
        *span = if *span == FIRST_ROUND { PARALLEL_ROUND } else { *span * 2 };
        let (op, table, pred, reader) = (*op, &**self.table, &self.pred, self.txn.reader());
        let horizon = self.txn.db.gc.horizon();
        // One piece of chains: its visible rows that pass, and how many
        // visible rows it read.
        let piece = |range: std::ops::Range<usize>| -> (Vec<VersionPtr>, u64) {
            let _pin = crossbeam_epoch::pin();
            let (mut out, mut seen) = (Vec::new(), 0u64);
            let mut b = range.start;
            while let Some(c) = chains.next_bucket(b, range.end) {
                let mut cur = chains.first(c);
                while let Some(v) = cur {
                    cur = chains.next(v);
                    if chains.is_live(v) && reader.sees(table, v, op, horizon) {
                        seen += 1;
                        if pred(&Row::new(self.table, v)) {
                            out.push(v);
                        }
                    }
                }
                b = c + 1;
            }
            (out, seen)
        };
        self.rows.clear();
        self.pos = 0;
        let seen = if !parallel {
            let (out, seen) = piece(from..to);
            self.rows = out;
            seen
        } else {
            let pieces = (to - from).div_ceil(PIECE);
            let taken = AtomicUsize::new(0);
            let results: Mutex<Vec<(usize, Vec<VersionPtr>, u64)>> = Mutex::new(Vec::with_capacity(pieces));
            let work = || loop {
                let i = taken.fetch_add(1, Relaxed);
                if i >= pieces {
                    return;
                }
                let start = from + i * PIECE;
                let (out, seen) = piece(start..(start + PIECE).min(to));
                results.lock().unwrap_or_else(|p| p.into_inner()).push((i, out, seen));
            };
            std::thread::scope(|s| {
                for _ in 1..(*threads).min(pieces) {
                    s.spawn(work);
                }
                work();
            });
            let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
            results.sort_unstable_by_key(|r| r.0);
            let mut seen = 0;
            for (_, out, n) in results {
                self.rows.extend_from_slice(&out);
                seen += n;
            }
            seen
        };
        self.read += seen;
        self.skipped += seen - self.rows.len() as u64;
        true
    }
}

impl<'a, P> Iterator for FilteredScan<'a, P>
where
    P: Fn(&Row<'_>) -> bool + Sync,
{
    type Item = Scanned<'a>;

    fn next(&mut self) -> Option<Scanned<'a>> {
        if let How::Serial(scan) = &mut self.how {
            for row in scan.by_ref() {
                if (self.pred)(&row) {
                    return Some(Scanned::Row(row));
                }
                self.skipped += 1;
                if self.skipped >= PIECE as u64 {
                    return Some(Scanned::Skipped(std::mem::take(&mut self.skipped)));
                }
            }
            return (self.skipped > 0).then(|| Scanned::Skipped(std::mem::take(&mut self.skipped)));
        }
        loop {
            if self.skipped > 0 {
                return Some(Scanned::Skipped(std::mem::take(&mut self.skipped)));
            }
            if let Some(&v) = self.rows.get(self.pos) {
                self.pos += 1;
                return Some(Scanned::Row(Row::new(self.table, v)));
            }
            if !self.round() {
                return None;
            }
        }
    }
}

impl<P> Drop for FilteredScan<'_, P> {
    fn drop(&mut self) {
        if self.read > 0 {
            self.table.count_scan_rows(self.read);
        }
    }
}
