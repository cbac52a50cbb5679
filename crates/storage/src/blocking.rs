//! Blocking sections: where a committer may wait on the disk or on another
//! transaction.
//!
//! The engine's waits are plain thread blocking (parking until a group
//! commit's `fdatasync` returns, or until a transaction holding a row ends).
//! An embedding that runs sessions as tasks on a small pool of threads (the
//! server runs them on tokio's workers) must be told before such a wait, or
//! every worker could end up blocked on work that only a blocked worker
//! could finish. The embedding installs a hook once; each wait runs inside
//! it. The server's hook is `tokio::task::block_in_place`, which hands the
//! worker's other tasks to another thread for the duration. Without a hook
//! the wait simply runs.

use std::sync::OnceLock;

/// Runs the closure it is given, after whatever the embedding needs.
pub type Hook = fn(&mut dyn FnMut());

static HOOK: OnceLock<Hook> = OnceLock::new();

/// Installs the process-wide hook; `false` if one was installed already.
pub fn set_hook(hook: Hook) -> bool {
    HOOK.set(hook).is_ok()
}

/// Runs `f`, a wait that may block the thread, inside the hook.
pub fn run<R>(f: impl FnOnce() -> R) -> R {
    match HOOK.get() {
        None => f(),
        Some(hook) => {
            let mut f = Some(f);
            let mut out = None;
            hook(&mut || out = f.take().map(|f| f()));
            out.expect("the blocking hook must run its closure")
        }
    }
}
