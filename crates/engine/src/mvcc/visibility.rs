//! Which versions a transaction sees.
//!
//! A transaction reading at time `RT` sees version `V` when `V` was created
//! by a transaction that committed at or before `RT` (or by itself) and was
//! not deleted by a transaction that committed at or before `RT` (nor by
//! itself). Begin and end fields may hold a transaction id instead of a
//! timestamp; the id is resolved through the transaction table:
//!
//! ```text
//!  begin field          creator state      visible?
//!  timestamp b                             b <= RT, then check end
//!  INFINITY                                no (creator aborted)
//!  my id                                   check end
//!  other id             active             no
//!  other id             preparing(ts)      no if ts > RT; else wait for outcome
//!  other id             logged(ts)         no if ts > RT; else as committed(ts),
//!                                          taking a commit dependency
//!  other id             committed(ts)      ts <= RT, then check end
//!  other id             aborted            no
//!
//!  end field            deleter state      visible?
//!  INFINITY                                yes
//!  timestamp e                             RT < e
//!  my id                                   no   (erratum to Larson et al.:
//!                                                 I deleted it, I don't see it)
//!  other id             active             yes
//!  other id             preparing(ts)      yes if ts > RT; else wait for outcome
//!  other id             logged(ts)         yes if ts > RT; else no, taking a
//!                                          commit dependency
//!  other id             committed(ts)      RT < ts
//!  other id             aborted            yes
//! ```
//!
//! Ordinary snapshots read at the clock's watermark, so "preparing or
//! logged with a timestamp at or below RT" cannot happen for them. It
//! happens for SERIALIZABLE validation, which reads at its own commit
//! timestamp, and for a READ COMMITTED writer that built on a logged
//! transaction's version (early lock release, see `write.rs`): its later
//! statements read at that transaction's timestamp. Every transaction
//! stamped at or below RT has stamped already (later ones get larger
//! timestamps), so such a snapshot is complete. A preparing one is waited
//! for (briefly: it is validating or appending its record). A logged one's
//! record is in the log ahead of anything the reader will append, so the
//! reader treats it as committed and records a *commit dependency*
//! ([`TxnTable::depend`]): the reader's own commit then waits for it and
//! fails with 40001 if it failed (see `transaction.rs`).

use super::clock::backoff;
use super::txn_table::{TxnState, TxnTable};
use super::word::{TxnId, Word, INFINITY};
use crate::row::version::VersionPtr;
use crate::sync::Ordering::SeqCst;

/// A begin field, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Begin {
    /// Created by a transaction that committed at this timestamp.
    Committed(u64),
    /// Created by the reading transaction.
    Mine,
    /// Created by a transaction that has not committed.
    Pending(TxnId, TxnState),
    /// Created by a transaction that aborted.
    Aborted,
}

/// An end field, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// Not deleted (or deleted by a transaction that aborted).
    Open,
    /// Deleted by a transaction that committed at this timestamp.
    Committed(u64),
    /// Deleted by the reading transaction.
    Mine,
    /// Deleted by a transaction that has not committed.
    Pending(TxnId, TxnState),
}

/// Resolves the begin field of `v` for transaction `me`.
#[inline]
pub(crate) fn begin(txns: &TxnTable, v: VersionPtr, me: TxnId) -> Begin {
    loop {
        match Word::decode(v.begin().load(SeqCst)) {
            Word::Ts(INFINITY) => return Begin::Aborted,
            Word::Ts(b) => return Begin::Committed(b),
            Word::Txn(id) if id == me => return Begin::Mine,
            Word::Txn(id) => match txns.state(id) {
                // Finished and post-processed: the field holds a timestamp now.
                None => continue,
                Some(TxnState::Committed(ts)) => return Begin::Committed(ts),
                Some(TxnState::Aborted) => return Begin::Aborted,
                Some(st) => return Begin::Pending(id, st),
            },
        }
    }
}

/// Resolves the end field of `v` for transaction `me`.
#[inline]
pub(crate) fn end(txns: &TxnTable, v: VersionPtr, me: TxnId) -> End {
    loop {
        match Word::decode(v.end().load(SeqCst)) {
            Word::Ts(INFINITY) => return End::Open,
            Word::Ts(e) => return End::Committed(e),
            Word::Txn(id) if id == me => return End::Mine,
            Word::Txn(id) => match txns.state(id) {
                None => continue,
                Some(TxnState::Committed(ts)) => return End::Committed(ts),
                Some(TxnState::Aborted) => return End::Open,
                Some(st) => return End::Pending(id, st),
            },
        }
    }
}

/// Whether `v` is visible to transaction `me` reading at `rt`, in an
/// operation numbered `op`: the transaction's own versions count only if an
/// earlier operation made them, so an UPDATE never meets its own new rows.
pub(crate) fn visible(txns: &TxnTable, v: VersionPtr, me: TxnId, rt: u64, op: u32) -> bool {
    let mut spins = 0;
    loop {
        match begin(txns, v, me) {
            Begin::Aborted => return false,
            Begin::Committed(b) if b > rt => return false,
            Begin::Pending(_, TxnState::Preparing(ts)) if ts <= rt => {
                backoff(&mut spins);
                continue;
            }
            Begin::Pending(_, TxnState::Logged(ts)) if ts <= rt => txns.depend(me, ts),
            Begin::Pending(..) => return false,
            Begin::Mine if v.header().stmt >= op => return false,
            Begin::Committed(_) | Begin::Mine => {}
        }
        return match end(txns, v, me) {
            End::Open => true,
            End::Mine => false,
            End::Committed(e) => rt < e,
            End::Pending(_, TxnState::Preparing(ts)) if ts <= rt => {
                backoff(&mut spins);
                continue;
            }
            End::Pending(_, TxnState::Logged(ts)) if ts <= rt => {
                txns.depend(me, ts);
                false
            }
            End::Pending(..) => true,
        };
    }
}

/// Whether `v` can never be seen again by anyone reading at or after
/// `horizon`: it was deleted by a transaction committed at or before it.
#[inline]
pub(crate) fn is_garbage(v: VersionPtr, horizon: u64) -> bool {
    match Word::decode(v.end().load(SeqCst)) {
        Word::Ts(e) => e != INFINITY && e <= horizon,
        Word::Txn(_) => false,
    }
}
