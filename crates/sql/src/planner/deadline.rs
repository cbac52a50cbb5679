//! The statement's deadline while it is planned.
//!
//! `statement_timeout` covers a statement from its start, planning
//! included, as in PostgreSQL. Planning is short for ordinary statements,
//! but some literals cost time in proportion to a column's declared size
//! (a literal compared with a `char(10485760)` column is padded to ten
//! million characters), and a generated statement may be large. The
//! session sets the deadline for the thread while it plans; the binder
//! reads it every [`EVERY`] expressions and before each costly literal.

use std::cell::Cell;
use std::time::Instant;

use crate::error::{Error, Result};

/// Expressions bound between two reads of the clock.
const EVERY: u32 = 64;

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    static COUNT: Cell<u32> = const { Cell::new(0) };
}

/// The deadline set for the planning on this thread; the one before it
/// comes back when this is dropped.
pub(crate) struct Planning(Option<Instant>);

impl Planning {
    /// Plans on this thread stop at `deadline` until the guard is dropped.
    pub(crate) fn until(deadline: Option<Instant>) -> Planning {
        Planning(DEADLINE.replace(deadline))
    }
}

impl Drop for Planning {
    fn drop(&mut self) {
        DEADLINE.set(self.0);
    }
}

/// Fails with 57014 once the deadline has passed.
pub(crate) fn check() -> Result<()> {
    match DEADLINE.get() {
        Some(d) if Instant::now() >= d => Err(Error::Canceled("statement timeout")),
        _ => Ok(()),
    }
}

/// [`check`], reading the clock once every [`EVERY`] calls.
#[inline]
pub(crate) fn tick() -> Result<()> {
    let n = COUNT.get() + 1;
    if n < EVERY {
        COUNT.set(n);
        return Ok(());
    }
    COUNT.set(0);
    check()
}
