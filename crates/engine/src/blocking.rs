//! Telling the thread's scheduler that a wait is about to block it.
//!
//! The engine blocks its calling thread in a few places: a row another
//! writer holds (READ COMMITTED waits for it to finish), a schema change
//! waiting for the transactions before it, a synchronous commit's fsync.
//! Embedded, that thread is the application's and blocking it is what the
//! caller asked for. A server that runs many sessions on a few worker
//! threads cannot let one of them sleep that way: the others' sessions,
//! the very ones the wait may be waiting for, would starve with it.
//!
//! So every such wait runs inside [`section`], which hands it to a hook
//! the thread's owner installed with [`set_hook`] (a server's worker hands
//! its other sessions to another thread for the duration); without a hook
//! the wait simply runs. Short waits (a spin of a few hundred nanoseconds
//! for a holder about to publish) stay outside.
//!
//! A long statement (a big scan, sort or join) is the same problem spread
//! over its run: it keeps its worker busy, and enough of them at once would
//! leave nobody to serve short ones. The SQL layer marks where a statement
//! begins ([`statement_begins`]) and calls [`checkpoint`] as it works (every
//! few dozen rows); once the statement has done [`LONG_CHECKPOINTS`] of
//! them and run for [`LONG_STATEMENT`], the
//! thread's detach hook ([`set_detach`]) moves the worker's other sessions
//! to another thread, and the statement finishes where it is. A hand-over
//! that did not happen (on a loaded machine the thread meant to take the
//! worker over may not get a core in time) is tried again after the same
//! amount of work, until it happens or the statement ends.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// How long a statement runs before it gives up its worker...
pub const LONG_STATEMENT: Duration = Duration::from_millis(2);

/// ...once it has also done this much work: checkpoints (each about 64
/// rows, or a routine's loop iteration). Time alone would also count the
/// moments the thread was not running at all, which on a busy machine
/// turns short statements long.
pub const LONG_CHECKPOINTS: u32 = 128;

/// What a thread's owner does around a blocking wait: runs the closure it
/// is given, exactly once.
pub type Hook = fn(&mut dyn FnMut());

thread_local! {
    static HOOK: Cell<Option<Hook>> = const { Cell::new(None) };
    static DETACH: Cell<Option<Detach>> = const { Cell::new(None) };
    /// The statement running on this thread has detached.
    static DETACHED: Cell<bool> = const { Cell::new(false) };
    /// When the statement running on this thread began, until it has
    /// detached (only with a detach hook installed).
    static STARTED: Cell<Option<Instant>> = const { Cell::new(None) };
    /// Its checkpoints so far.
    static CHECKPOINTS: Cell<u32> = const { Cell::new(0) };
}

/// Installs `hook` for the calling thread's blocking waits.
pub fn set_hook(hook: Hook) {
    HOOK.with(|h| h.set(Some(hook)));
}

/// What a thread's owner does for long statements: `detach` hands the
/// thread's other work elsewhere for the rest of one (see the module
/// header), true once it has gone; `after` runs when such a statement
/// that held at least [`BIG_STATEMENT`] bytes of buffers ends, on its
/// thread (a server returns that memory to the system there: the thread
/// may sit idle for a while after).
#[derive(Clone, Copy)]
pub struct Detach {
    pub detach: fn() -> bool,
    pub after: fn(),
}

/// Installs `detach` for the calling thread's long statements.
pub fn set_detach(detach: Detach) {
    DETACH.with(|d| d.set(Some(detach)));
}

/// Bytes of buffers from which a long statement's end calls
/// [`Detach::after`]: returning memory to the system costs page faults
/// later, which only buffers this big are worth.
pub const BIG_STATEMENT: usize = 64 << 20;

/// The statement running on this thread has ended, having held `held`
/// bytes of buffers.
pub fn statement_ends(held: usize) {
    STARTED.with(|s| s.set(None));
    if DETACHED.with(|d| d.replace(false)) && held >= BIG_STATEMENT {
        if let Some(d) = DETACH.with(|d| d.get()) {
            (d.after)();
        }
    }
}

/// A statement begins on this thread.
pub fn statement_begins() {
    if DETACH.with(|d| d.get()).is_some() {
        STARTED.with(|s| s.set(Some(Instant::now())));
        CHECKPOINTS.with(|c| c.set(0));
    }
}

/// A statement at work: detaches it from its worker once it has passed
/// [`LONG_CHECKPOINTS`] and run for [`LONG_STATEMENT`], or since its last
/// hand-over that did not happen.
#[inline]
pub fn checkpoint() {
    let Some(started) = STARTED.with(|s| s.get()) else { return };
    let n = CHECKPOINTS.with(|c| {
        let n = c.get().saturating_add(1);
        c.set(n);
        n
    });
    if n < LONG_CHECKPOINTS || started.elapsed() < LONG_STATEMENT {
        return;
    }
    STARTED.with(|s| s.set(None));
    if let Some(d) = DETACH.with(|d| d.get()) {
        DETACHED.with(|x| x.set(true));
        if !(d.detach)() {
            STARTED.with(|s| s.set(Some(Instant::now())));
            CHECKPOINTS.with(|c| c.set(0));
        }
    }
}

/// Runs `wait`, which may block the thread for long, through the thread's
/// hook if it has one.
pub fn section<R>(wait: impl FnOnce() -> R) -> R {
    let Some(hook) = HOOK.with(|h| h.get()) else { return wait() };
    let mut wait = Some(wait);
    let mut out = None;
    hook(&mut || {
        if let Some(w) = wait.take() {
            out = Some(w());
        }
    });
    match out {
        Some(r) => r,
        // A hook that did not run the wait breaks its contract; run it
        // here rather than lose it.
        None => (wait.take().expect("a wait runs once"))(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    fn counting(f: &mut dyn FnMut()) {
        CALLS.fetch_add(1, SeqCst);
        f();
    }

    static DETACHES: AtomicUsize = AtomicUsize::new(0);
    static AFTERS: AtomicUsize = AtomicUsize::new(0);

    fn detach() -> bool {
        DETACHES.fetch_add(1, SeqCst);
        true
    }

    static TRIES: AtomicUsize = AtomicUsize::new(0);

    /// A hand-over that happens only on its third try.
    fn reluctant() -> bool {
        TRIES.fetch_add(1, SeqCst) == 2
    }

    fn long_work() {
        std::thread::sleep(LONG_STATEMENT);
        for _ in 0..=LONG_CHECKPOINTS {
            checkpoint();
        }
    }

    fn after() {
        AFTERS.fetch_add(1, SeqCst);
    }

    #[test]
    fn a_long_statement_detaches_once() {
        std::thread::spawn(|| {
            checkpoint();
            set_detach(Detach { detach, after });
            statement_begins();
            checkpoint();
            statement_ends(BIG_STATEMENT);
            assert_eq!(DETACHES.load(SeqCst) + AFTERS.load(SeqCst), 0, "a short statement stays");
            statement_begins();
            std::thread::sleep(LONG_STATEMENT);
            checkpoint();
            statement_ends(BIG_STATEMENT);
            assert_eq!(DETACHES.load(SeqCst), 0, "a slow statement that did little work stays");
            for held in [0, BIG_STATEMENT] {
                statement_begins();
                long_work();
                long_work();
                statement_ends(held);
                statement_ends(held);
            }
        })
        .join()
        .unwrap();
        assert_eq!((DETACHES.load(SeqCst), AFTERS.load(SeqCst)), (2, 1), "only a big one gives memory back");
    }

    #[test]
    fn a_hand_over_that_did_not_happen_is_tried_again() {
        std::thread::spawn(|| {
            set_detach(Detach { detach: reluctant, after });
            statement_begins();
            long_work();
            assert_eq!(TRIES.load(SeqCst), 1);
            for _ in 0..LONG_CHECKPOINTS {
                checkpoint();
            }
            assert_eq!(TRIES.load(SeqCst), 1, "not before another stretch of work");
            for _ in 0..4 {
                long_work();
            }
            assert_eq!(TRIES.load(SeqCst), 3, "tried until it happened, then no more");
            statement_ends(0);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_section_runs_through_the_hook_once() {
        assert_eq!(section(|| 1), 1, "no hook: the wait runs as it is");
        std::thread::spawn(|| {
            set_hook(counting);
            assert_eq!(section(|| 2), 2);
        })
        .join()
        .unwrap();
        assert_eq!(CALLS.load(SeqCst), 1);
    }
}
