//! Noticing a client that has gone while its statement runs.
//!
//! A session runs a statement without reading its socket, so a client that
//! disconnects mid-statement (killed, timed out by a pool, its machine
//! gone) would leave the statement running to its end: a long scan keeps a
//! core busy, and a statement waiting for a row keeps waiting, with its
//! transaction holding what it wrote. PostgreSQL checks for this with
//! `client_connection_check_interval`; Centum always does.
//!
//! Every connection past start-up registers its socket and its session's
//! cancel flag, and marks itself *busy* from the moment a message arrives
//! until it waits for the next one (two atomic stores per message). One
//! watcher thread wakes every [`EVERY`], and asks the kernel, in one
//! `poll` with no timeout, whether any busy connection's peer has hung up
//! (`POLLRDHUP`, `POLLHUP` or `POLLERR`). For each one that has, it raises
//! the cancel flag, which every statement reads as it works and every row
//! wait reads as it waits: the statement fails with 57014 within moments,
//! its transaction's writes and claims are released at the error (the
//! block's rollback), and the connection then ends on the closed socket,
//! which rolls the rest back. An idle connection is not polled: its read
//! sees the end of the stream by itself. With no connection busy the
//! watcher sleeps until one is (a connection turning busy wakes it).
//!
//! The registry is a mutex held while polling, so a connection that
//! deregisters (before its socket closes) cannot have its descriptor
//! reused under the watcher.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How often busy connections are checked: a vanished client's statement
/// stops within this plus the time it takes to read its cancel flag.
pub(crate) const EVERY: Duration = Duration::from_millis(20);

/// One registered connection.
struct Entry {
    fd: RawFd,
    busy: Arc<AtomicBool>,
    cancel: Arc<AtomicBool>,
}

/// The connections the watcher looks after.
#[derive(Default)]
pub(crate) struct Hangups {
    entries: Mutex<HashMap<u64, Entry>>,
    next: std::sync::atomic::AtomicU64,
    watcher: OnceLock<std::thread::Thread>,
    /// The watcher found no busy connection and sleeps until one is.
    dozing: AtomicBool,
}

/// A connection's place in the registry; leaving it deregisters. It must
/// go before the socket closes.
pub(crate) struct Watched {
    hangups: Arc<Hangups>,
    id: u64,
    busy: Arc<AtomicBool>,
}

impl Watched {
    /// Marks the connection as running a message (true) or waiting for one.
    #[inline]
    pub(crate) fn set_busy(&self, busy: bool) {
        self.busy.store(busy, SeqCst);
        // The watcher sleeps while no connection is busy.
        if busy && self.hangups.dozing.load(SeqCst) && self.hangups.dozing.swap(false, SeqCst) {
            if let Some(w) = self.hangups.watcher.get() {
                w.unpark();
            }
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.hangups.lock().remove(&self.id);
    }
}

impl Hangups {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a connection's socket `fd` with its session's `cancel`
    /// flag, starting the watcher on first use.
    pub(crate) fn watch(self: &Arc<Self>, fd: RawFd, cancel: Arc<AtomicBool>) -> Watched {
        let id = self.next.fetch_add(1, SeqCst);
        let busy = Arc::new(AtomicBool::new(false));
        self.lock().insert(id, Entry { fd, busy: busy.clone(), cancel });
        self.watcher.get_or_init(|| {
            let me = Arc::downgrade(self);
            std::thread::Builder::new()
                .name("centum-hangups".into())
                .spawn(move || watch_loop(me))
                .expect("start the hang-up watcher")
                .thread()
                .clone()
        });
        Watched { hangups: self.clone(), id, busy }
    }

    /// Polls the busy connections once; returns how many are busy.
    fn check(&self) -> usize {
        let entries = self.lock();
        let busy: Vec<&Entry> = entries.values().filter(|e| e.busy.load(SeqCst)).collect();
        if !busy.is_empty() {
            let mut fds: Vec<libc::pollfd> =
                busy.iter().map(|e| libc::pollfd { fd: e.fd, events: libc::POLLRDHUP, revents: 0 }).collect();
            // SAFETY: `fds` is a valid array of its length; every
            // descriptor in it stays open while the registry is locked.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
            if n > 0 {
                for (p, e) in fds.iter().zip(&busy) {
                    if p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0 {
                        e.cancel.store(true, SeqCst);
                    }
                }
            }
        }
        busy.len()
    }

    /// Whether any connection is busy, once the watcher has said it dozes
    /// (a connection that turns busy after this sees the doze and wakes
    /// it).
    fn doze(&self) -> bool {
        self.dozing.store(true, SeqCst);
        let busy = self.lock().values().any(|e| e.busy.load(SeqCst));
        if busy {
            self.dozing.store(false, SeqCst);
        }
        !busy
    }
}

fn watch_loop(hangups: std::sync::Weak<Hangups>) {
    loop {
        let Some(h) = hangups.upgrade() else { return };
        let doze = h.check() == 0 && h.doze();
        drop(h);
        if doze {
            // Woken when a connection turns busy (or after a while, to
            // notice that the server is gone).
            std::thread::park_timeout(Duration::from_secs(1));
        } else {
            std::thread::sleep(EVERY);
        }
    }
}
