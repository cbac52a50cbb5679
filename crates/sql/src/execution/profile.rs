//! EXPLAIN ANALYZE: what each plan node of a statement actually did.
//!
//! When a statement runs under EXPLAIN ANALYZE its context carries a
//! [`Profile`], and every plan node the executor opens (and every table
//! access DML makes) is wrapped in [`Profiled`]: the time spent opening it
//! and inside each call for its next row, inclusive of its inputs as in
//! PostgreSQL, the time to its first row, the rows it returned and how
//! many times it was opened. Nodes are keyed by their address in the plan,
//! which is stable while the statement runs. Without a profile nothing is
//! wrapped and the executor pays nothing.

use crate::error::Result;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// What one plan node did, summed over the times it was opened.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeStats {
    /// Times the node was opened (a nested loop's inner side: once per
    /// outer row).
    pub loops: u64,
    /// Rows it returned.
    pub rows: u64,
    /// Time from opening to its first row (or its end).
    pub first: Duration,
    /// Time spent opening it and producing its rows.
    pub total: Duration,
}

impl NodeStats {
    /// PostgreSQL's annotation: times in milliseconds, averaged per loop,
    /// and rows per loop.
    pub fn annotation(&self) -> String {
        let loops = self.loops.max(1);
        let ms = |d: Duration| d.as_secs_f64() * 1000.0 / loops as f64;
        // The first row's time is read on another clock than the total's
        // parts; a node whose first row was its only work shows one time.
        format!(
            " (actual time={:.3}..{:.3} rows={} loops={})",
            ms(self.first.min(self.total)),
            ms(self.total),
            self.rows / loops,
            self.loops
        )
    }
}

/// The statistics of a statement's plan nodes, by node address.
pub type Profile = Rc<RefCell<HashMap<usize, NodeStats>>>;

/// A node's rows, measured.
pub(crate) struct Profiled<I> {
    inner: I,
    key: usize,
    opened: Instant,
    seen_first: bool,
    profile: Profile,
}

impl<T, I: Iterator<Item = Result<T>>> Iterator for Profiled<I> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        let start = Instant::now();
        let r = self.inner.next();
        let now = Instant::now();
        let mut p = self.profile.borrow_mut();
        let s = p.entry(self.key).or_default();
        s.total += now - start;
        if !self.seen_first {
            self.seen_first = true;
            s.first += now - self.opened;
        }
        if matches!(r, Some(Ok(_))) {
            s.rows += 1;
        }
        r
    }
}

/// Opens node `key` with `open`, measured when there is a `profile`.
pub(crate) fn open<'a, T: 'a, I: Iterator<Item = Result<T>> + 'a>(
    profile: Option<&Profile>,
    key: usize,
    open: impl FnOnce() -> Result<I>,
) -> Result<Box<dyn Iterator<Item = Result<T>> + 'a>> {
    let Some(profile) = profile else { return Ok(Box::new(open()?)) };
    let opened = Instant::now();
    let inner = open()?;
    {
        let mut p = profile.borrow_mut();
        let s = p.entry(key).or_default();
        s.loops += 1;
        s.total += opened.elapsed();
    }
    Ok(Box::new(Profiled { inner, key, opened, seen_first: false, profile: profile.clone() }))
}
