//! Atomics and threads, swapped for `loom`'s model-checked versions when the
//! crate is built with `--cfg loom`, so the lock-free version install and
//! hash-chain code can be checked under every interleaving.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};
