//! Building a range index over the rows a table already holds.
//!
//! A hash index threads its chains through a link slot in every version, so
//! a version made before the index existed has no slot for it and must be
//! replaced by an identical version that does (`Database::create_index`
//! rewrites such rows, and logs the rewrite). A range index keeps its
//! entries in its own tree and never uses the slot: an existing version
//! can be entered as it is. Nothing is rewritten and nothing is logged;
//! the index is rebuilt from the rows at every restart anyway.
//!
//! The fill runs once every transaction that might still add a version
//! the index does not cover has ended, so the versions to enter are fixed:
//! the live versions of the scan list that the index does not cover. The
//! machine's cores collect them, batch by batch of scan chains, then
//! enter them in key order, each core one range of keys (see [`fill`]).
//!
//! The collector may unlink one of these versions while the fill is at it.
//! An uncovered version's entry is removed by the collector as any other
//! (`Table::unlink` tries every range index), but the fill may enter it
//! just after that removal found nothing. So the fill, after entering its
//! entries, looks again at each version's claim flag and removes the entry
//! of any that was claimed. A SeqCst fence on each side (after the inserts
//! here, after the claim in `Table::unlink`) makes sure that at least one
//! of the two sees the other: either the collector's removal finds the
//! entry, or the fill sees the claim. The fill's pins keep every version
//! it holds from being freed until then, so a removal never meets a
//! version whose memory was reused.
//!
//! A unique index is checked after the fill: a key with more than one
//! entry whose versions may both be live is a violation. A writer that
//! inserted the key while the fill ran either found the entered version
//! when it checked its own insert (the entry was in the tree first), or its
//! own entry was in the tree before the fill entered the other one, and
//! the check after the fill finds both. Versions of unfinished writers are
//! waited for only when they could make the second live version.

use crate::error::{Error, Result};
use crate::index::btree::Direction;
use crate::index::range::RangeIndex;
use crate::index::Index;
use crate::mvcc::txn_table::{ddl_past_limits, TxnState, TxnTable};
use crate::mvcc::visibility::{self, Begin, End};
use crate::mvcc::TxnId;
use crate::row::sortkey::{prefix_successor, KeyBytes};
use crate::row::version::VersionPtr;
use crate::table::Table;
use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Barrier, Mutex, RwLock};
use std::time::Instant;

/// Batches the scan list is cut into for collecting, at least: enough
/// for the cores to share the work evenly and for a limit
/// (statement_timeout, cancel) to be noticed soon.
const BATCHES: usize = 256;

/// Entries inserted between two looks at the statement's limits.
const LIMIT_EVERY: usize = 4096;

/// An entry to enter: the version's key and the version.
type Entry = (KeyBytes, VersionPtr);

/// Enters into range index `ix` of `t` every live version it does not
/// cover, on as many threads as the machine has cores, then checks a
/// unique index for duplicates. Versions of transaction `me` (the
/// builder's own, in a transaction block) are left to it.
///
/// Two phases. First the threads collect the entries, batch by batch of
/// scan chains, and each sorts what it collected. Then the key space is
/// cut into one range per thread (at quantiles of a sample of the keys),
/// and each thread enters the entries of its range, from every thread's
/// collection, in key order: the tree's leaves then fill from left to
/// right and split only at their ends (see `BTree::insert`), so a built
/// index is as dense as one loaded in order, and the threads work on
/// different leaves. Every thread stays pinned from its first look at the
/// scan list until the last thread has finished, so a version one thread
/// collected cannot be freed while another enters or re-checks it.
pub(crate) fn fill(
    txns: &TxnTable,
    t: &Table,
    ix: &Index,
    lock_deadline: Option<Instant>,
    me: Option<TxnId>,
) -> Result<()> {
    let Some(r) = ix.as_range() else {
        return Err(Error::Internal("a range fill of a hash index".into()));
    };
    let reader = me.unwrap_or(TxnId(0));
    let chains = t.scan.len();
    let step = (chains / BATCHES).max(1);
    let threads =
        std::thread::available_parallelism().map_or(1, |n| n.get()).min(chains.div_ceil(step)).max(1);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let collected: Vec<RwLock<Vec<Entry>>> = (0..threads).map(|_| RwLock::new(Vec::new())).collect();
    let splitters: RwLock<Vec<KeyBytes>> = RwLock::new(Vec::new());
    let barrier = Barrier::new(threads);
    // Whether to stop: someone did, or (for the calling thread, the only
    // one that knows the statement's limits) a limit has passed.
    let halt = |limits: bool| {
        if limits && !stop.load(SeqCst) {
            if let Err(e) = ddl_past_limits(lock_deadline) {
                *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                stop.store(true, SeqCst);
            }
        }
        stop.load(SeqCst)
    };
    let work = |me: usize, limits: bool| {
        let _pin = crossbeam_epoch::pin();
        let mut mine = Vec::new();
        while !halt(limits) {
            let from = next.fetch_add(step, SeqCst);
            if from >= chains {
                break;
            }
            collect(txns, t, ix, r, from..(from + step).min(chains), reader, &mut mine);
        }
        mine.sort_unstable_by(order);
        *collected[me].write().unwrap_or_else(|p| p.into_inner()) = mine;
        if barrier.wait().is_leader() {
            *splitters.write().unwrap_or_else(|p| p.into_inner()) = split_keys(&collected, threads);
        }
        barrier.wait();
        if !halt(limits) {
            let cut = splitters.read().unwrap_or_else(|p| p.into_inner());
            let all: Vec<_> = collected.iter().map(|c| c.read().unwrap_or_else(|p| p.into_inner())).collect();
            let lo = me.checked_sub(1).and_then(|i| cut.get(i));
            let hi = cut.get(me);
            let mut part: Vec<&Entry> = Vec::new();
            for entries in &all {
                let from = lo.map_or(0, |k| entries.partition_point(|e| e.0 < *k));
                let to = hi.map_or(entries.len(), |k| entries.partition_point(|e| e.0 < *k));
                part.extend(&entries[from..to]);
            }
            // Sorted runs, one per thread: a stable sort merges them.
            part.sort_by(|a, b| order(a, b));
            for (i, (k, v)) in part.iter().enumerate() {
                if i % LIMIT_EVERY == 0 && halt(limits) {
                    break;
                }
                r.tree.insert(k, v.word() as u64);
            }
            // Pairs with the fence after the claim in `Table::unlink` (see
            // the module's header).
            fence(SeqCst);
            for (k, v) in &part {
                if v.is_claimed() {
                    r.tree.remove(k, v.word() as u64);
                }
            }
        }
        // Every thread's pin holds until every thread is done with the
        // versions it did not collect itself.
        barrier.wait();
    };
    std::thread::scope(|s| {
        for i in 1..threads {
            let work = &work;
            s.spawn(move || work(i, false));
        }
        work(0, true);
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if r.unique {
        check_unique(txns, t, r, lock_deadline, reader)?;
    }
    Ok(())
}

/// The tree's order of entries: by key, then by version.
fn order(a: &Entry, b: &Entry) -> std::cmp::Ordering {
    a.0.cmp(&b.0).then(a.1.word().cmp(&b.1.word()))
}

/// `threads - 1` keys that cut the collected entries into ranges of about
/// equal size: quantiles of a sample of every collection.
fn split_keys(collected: &[RwLock<Vec<Entry>>], threads: usize) -> Vec<KeyBytes> {
    const SAMPLES: usize = 64;
    let mut sample: Vec<KeyBytes> = Vec::new();
    for c in collected {
        let entries = c.read().unwrap_or_else(|p| p.into_inner());
        let every = (entries.len() / SAMPLES).max(1);
        sample.extend(entries.iter().step_by(every).map(|e| e.0.clone()));
    }
    sample.sort_unstable();
    (1..threads).filter_map(|i| sample.get(i * sample.len() / threads).cloned()).collect()
}

/// Adds to `out` the uncovered live versions of scan chains `chains`,
/// with their keys. The caller is pinned.
fn collect(
    txns: &TxnTable,
    t: &Table,
    ix: &Index,
    r: &RangeIndex,
    chains: std::ops::Range<usize>,
    reader: TxnId,
    out: &mut Vec<Entry>,
) {
    for b in chains {
        let mut cur = t.scan.first(b);
        while let Some(v) = cur {
            cur = t.scan.next(v);
            if !t.scan.is_live(v) || ix.covers(v) || v.is_claimed() {
                continue;
            }
            // Never committed, the builder's own, or gone for every
            // snapshot the index will serve (it is ready only after the
            // fill).
            let born = !matches!(visibility::begin(txns, v, reader), Begin::Aborted | Begin::Mine);
            let gone = matches!(visibility::end(txns, v, reader), End::Committed(_) | End::Mine);
            if born && !gone {
                out.push((r.key_of(&t.layout, v), v));
            }
        }
    }
}

/// What the versions of one key amount to for a unique index.
enum KeyState {
    /// At most one of them can be live.
    Fine,
    /// Two or more are live.
    Duplicate,
    /// Whether two are live depends on this unfinished transaction.
    WaitFor(TxnId),
}

/// Fails with a unique violation if a key of `r` has two live versions,
/// waiting for unfinished writers that might make it so.
fn check_unique(
    txns: &TxnTable,
    t: &Table,
    r: &RangeIndex,
    lock_deadline: Option<Instant>,
    reader: TxnId,
) -> Result<()> {
    let mut repeated: Vec<KeyBytes> = Vec::new();
    {
        let _pin = crossbeam_epoch::pin();
        let mut prev: Option<KeyBytes> = None;
        let mut noted = false;
        r.for_each(None, None, Direction::Forward, |v| {
            let k = r.key_of(&t.layout, v);
            if prev.as_ref() == Some(&k) {
                if !noted {
                    repeated.push(k);
                    noted = true;
                }
            } else {
                prev = Some(k);
                noted = false;
            }
            true
        });
    }
    for key in repeated {
        loop {
            ddl_past_limits(lock_deadline)?;
            match key_state(txns, t, r, &key, reader) {
                KeyState::Fine => break,
                KeyState::Duplicate => {
                    return Err(Error::UniqueViolation { index: r.name.clone(), table: t.name() })
                }
                KeyState::WaitFor(id) => txns.wait_gone_within(id, lock_deadline)?,
            }
        }
    }
    Ok(())
}

/// The state of the versions with key `key` in `r`.
fn key_state(txns: &TxnTable, t: &Table, r: &RangeIndex, key: &[u8], reader: TxnId) -> KeyState {
    let _pin = crossbeam_epoch::pin();
    let hi = prefix_successor(key);
    let (mut live, mut pending) = (0, None);
    r.for_each(Some(key), hi.as_deref(), Direction::Forward, |v| {
        // NULLs are distinct.
        if r.key.columns.iter().any(|&c| t.layout.is_null(v.data(), c)) {
            return true;
        }
        let begin = match visibility::begin(txns, v, reader) {
            Begin::Aborted | Begin::Mine => return true,
            Begin::Committed(_) | Begin::Pending(_, TxnState::Logged(_)) => None,
            Begin::Pending(id, _) => Some(id),
        };
        let end = match visibility::end(txns, v, reader) {
            End::Committed(_) | End::Mine | End::Pending(_, TxnState::Logged(_)) => return true,
            End::Open => None,
            End::Pending(id, _) => Some(id),
        };
        match begin.or(end) {
            None => live += 1,
            Some(id) => pending = pending.or(Some(id)),
        }
        true
    });
    match pending {
        _ if live > 1 => KeyState::Duplicate,
        Some(id) if live == 1 => KeyState::WaitFor(id),
        _ => KeyState::Fine,
    }
}
