//! Critical sections: the places where a panic would leave shared state
//! half-changed, and so must end the process instead of unwinding.
//!
//! A panic elsewhere (in the SQL layer, in a read, in a transaction's own
//! bookkeeping before its commit point) unwinds: the layer above turns it
//! into an error for one session, and dropping the transaction aborts it,
//! which undoes exactly what its write set records. That is only sound
//! while every change to shared structures is either recorded in a write
//! set or finished. A version linked into chains but not yet in its
//! creator's write set, an index split half done, a commit that has
//! stamped some versions but not others, an abort that has undone half its
//! writes: unwinding out of any of these would leave something that no
//! later operation repairs (a row locked for ever, a version nobody
//! frees, a transaction half visible). Those regions hold a [`Critical`];
//! if a panic passes through one, the process prints what it was doing and
//! aborts, and recovery from the log restores a consistent database.

/// Held across a region whose interruption would corrupt shared state.
/// A region entered while the thread is already unwinding (a transaction
/// dropped, and so aborted, on the way out of a panic) is finished whole
/// like any other: only a panic that starts inside it stops the process.
pub(crate) struct Critical(&'static str, bool);

impl Critical {
    /// Enters a region that changes shared state `what`.
    #[inline]
    pub(crate) fn enter(what: &'static str) -> Critical {
        Critical(what, std::thread::panicking())
    }
}

impl Drop for Critical {
    #[inline]
    fn drop(&mut self) {
        if std::thread::panicking() && !self.1 {
            eprintln!(
                "centum: a panic interrupted {}; shared state may be half-changed, so the process stops here (recovery restores every committed transaction)",
                self.0
            );
            std::process::abort();
        }
    }
}
