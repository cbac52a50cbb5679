//! Stack depth: how deeply a statement may nest before it fails with
//! 54001 instead of overflowing its thread's stack.
//!
//! Parsing, binding, planning and evaluation all recurse over the shape of
//! the statement, and a thread that overflows its stack takes the whole
//! process down (Rust cannot unwind out of it). So every recursion is
//! bounded by the stack that is really left on the running thread, read
//! with `stacker`, never by a fixed count:
//!
//! ```text
//!   parse       sqlparser's recursion limit = stack left / LEVEL_FRAME
//!   shape       one walk over the AST, itself checked at every level:
//!               raw depth x RAW_FRAME must fit in the stack left
//!   bind, plan  check() on entering every expression and query
//!   evaluate    check() on entering every non-leaf expression
//!   routines    check() on every call (execution::routine)
//! ```
//!
//! The shape walk covers the recursions that cannot return an error:
//! dropping, cloning and printing the AST, and the small predicates the
//! binder runs over it. Their frames are small (under [`RAW_FRAME`]), so a
//! statement whose raw depth times that fits is safe for all of them. The
//! deep chains that real statements contain, `a OR b OR ...` and
//! `x = 1 AND y = 2 AND ...` with thousands of terms, are bound flat: the
//! binder collects the terms of a chain without recursing and builds a
//! balanced tree of them, whose depth is the logarithm of the length.
//! Long IN lists and UNION ALL branches are lists, not nesting.
//!
//! A statement that fails the shape check is dropped on a stack segment of
//! its own (sized from its text, which bounds its depth), so even a
//! statement far too deep to run is freed without overflowing.

use crate::error::{Error, Result};

/// What must be left on the stack when a recursion enters another level:
/// room for the deepest non-recursive work one level does (a built-in
/// function, an engine call, formatting an error).
pub(crate) const RESERVE: usize = 192 * 1024;

/// An upper bound on the stack one level of the AST takes in the walks
/// that cannot fail: cloning (the largest, about 1.1 KiB a level in a
/// release build), dropping, comparing, the binder's predicates.
pub(crate) const RAW_FRAME: usize = 1280;

/// An upper bound on the stack that dropping one level of the AST takes.
pub(crate) const DROP_FRAME: usize = 96;

/// An upper bound on the stack one level of nesting (a parenthesis, a
/// subquery) takes in binding, planning and evaluation together, about
/// 3.5 KiB in a release build. sqlparser itself grows its stack as it
/// needs, so its recursion limit is set for what comes after it.
pub(crate) const LEVEL_FRAME: usize = 4096;

/// The stack left on this thread (a generous guess when the platform does
/// not say).
pub(crate) fn remaining() -> usize {
    stacker::remaining_stack().unwrap_or(8 << 20)
}

/// Fails with 54001 when entering one more level of `what` would leave
/// less than [`RESERVE`] of stack.
#[inline]
pub(crate) fn check(what: &'static str) -> Result<()> {
    if remaining() < RESERVE {
        return Err(Error::StackDepth(what));
    }
    Ok(())
}

/// The recursion limit to give sqlparser on this thread: as many levels
/// as the stack left can hold, keeping [`RESERVE`] and room for the rest
/// of the pipeline.
pub(crate) fn parser_limit() -> usize {
    (remaining().saturating_sub(4 * RESERVE) / LEVEL_FRAME).max(1)
}

/// Runs `f`, which recurses up to `depth` levels in frames of at most
/// `frame` bytes, on a stack that is sure to hold it: this thread's when
/// it has room, else a segment of its own.
pub(crate) fn with_room<R>(depth: usize, frame: usize, f: impl FnOnce() -> R) -> R {
    let need = depth.saturating_mul(frame).saturating_add(RESERVE);
    if remaining() > need {
        return f();
    }
    stacker::grow(need.saturating_add(RESERVE), f)
}
