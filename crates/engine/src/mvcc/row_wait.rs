//! Waiting for a row's holder without a thread: [`RowWait`].
//!
//! A statement whose wait limits defer waits (see
//! [`WaitLimits::defer`](super::WaitLimits::defer)) fails with
//! [`Error::WouldWait`] where it would have slept on a row or key that
//! another transaction holds. Its caller rolls the statement back, awaits
//! the `RowWait` built from that error, and runs the statement again. The
//! wait is a future: the holder's end (its outcome published, or its commit
//! record logged where that is enough) wakes it through the transaction
//! table's stripe of wakers. It ends as a sleeping wait does: with a
//! deadlock (40P01) if the holder waits for the waiter, at the lock
//! timeout (55P03), at the statement's deadline or a cancel (57014).
//! Deadlocks that form later and the limits are only seen when it is
//! polled, so its owner polls it now and then (every few milliseconds)
//! besides when it is woken.

use super::transaction::WaitLimits;
use super::word::TxnId;
use crate::db::Shared;
use crate::error::{Error, Result};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// An asynchronous wait for the transaction that a statement met holding
/// a row; see the module header.
pub struct RowWait {
    db: Arc<Shared>,
    me: Option<TxnId>,
    holder: TxnId,
    or_logged: bool,
    limits: WaitLimits,
    lock_deadline: Option<Instant>,
    /// The waker last registered with the holder's stripe.
    waker: Option<Waker>,
}

impl RowWait {
    /// The wait that `e` (an [`Error::WouldWait`]) asks for, on behalf of
    /// transaction `me` if it goes on meanwhile (its rows stay held, so it
    /// joins deadlock detection), bounded by `limits`.
    pub(crate) fn new(
        db: Arc<Shared>,
        me: Option<TxnId>,
        e: &Error,
        mut limits: WaitLimits,
    ) -> Option<RowWait> {
        let Error::WouldWait { holder, or_logged } = *e else { return None };
        limits.defer = false;
        let lock_deadline = limits.lock_timeout.map(|t| Instant::now() + t);
        db.txns.begin_wait(me, holder);
        Some(RowWait { db, me, holder, or_logged, limits, lock_deadline, waker: None })
    }
}

impl Future for RowWait {
    type Output = Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let w = &*self;
        match w.db.txns.poll_wait(w.me, w.holder, w.or_logged, &w.limits, w.lock_deadline, cx.waker()) {
            Some(r) => Poll::Ready(r),
            None => {
                if !self.waker.as_ref().is_some_and(|k| k.will_wake(cx.waker())) {
                    self.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}

impl Drop for RowWait {
    fn drop(&mut self) {
        if let Some(w) = &self.waker {
            self.db.txns.forget_waker(self.holder, w);
        }
        self.db.txns.end_wait(self.me, self.holder);
    }
}
