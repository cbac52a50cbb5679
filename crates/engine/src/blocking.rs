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

use std::cell::Cell;

/// What a thread's owner does around a blocking wait: runs the closure it
/// is given, exactly once.
pub type Hook = fn(&mut dyn FnMut());

thread_local! {
    static HOOK: Cell<Option<Hook>> = const { Cell::new(None) };
}

/// Installs `hook` for the calling thread's blocking waits.
pub fn set_hook(hook: Hook) {
    HOOK.with(|h| h.set(Some(hook)));
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
