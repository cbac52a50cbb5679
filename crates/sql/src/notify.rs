//! LISTEN, UNLISTEN and NOTIFY: messages between sessions, sent when a
//! transaction commits.
//!
//! A session that listens has an `Inbox` in the database's `Hub`, with
//! the channels it listens on. NOTIFY (or `pg_notify`) collects the
//! notification in the session's transaction; when the transaction
//! commits, the session hands its notifications to the hub, which puts
//! each into the inbox of every session listening on its channel (the
//! sender's own included) and calls the inbox's waker. A rolled-back or
//! failed transaction sends nothing, and one transaction's duplicates (same
//! channel and payload) go once, in the order first sent, as in
//! PostgreSQL. LISTEN and UNLISTEN also take effect when the transaction
//! commits.
//!
//! The server sends an inbox's notifications to its client as
//! NotificationResponse messages whenever the session is outside a
//! transaction block: after a request, and, when it is idle, as soon as
//! the waker wakes its connection. An embedded session reads them with
//! `Session::notifications`.
//!
//! An inbox holds at most [`INBOX_LIMIT`] notifications; past that, new
//! ones for it are dropped (with a log line), so a session that listens
//! and never reads cannot exhaust the server's memory.

use crate::error::{Error, Result};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};

/// The most notifications one session's inbox holds.
pub const INBOX_LIMIT: usize = 100_000;

/// The longest payload, in bytes, as PostgreSQL's (22023 past it).
pub const PAYLOAD_LIMIT: usize = 7999;

/// One notification, as a listener receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// The process id of the sending session (0 for an embedded one).
    pub pid: i32,
    pub channel: String,
    pub payload: String,
}

/// A listening session's notifications, waiting to be read.
pub(crate) struct Inbox {
    queue: Mutex<VecDeque<Notification>>,
    /// Whether the queue may hold something: the server asks after every
    /// request, and this answers without the lock.
    filled: AtomicBool,
    /// Wakes the session's connection (from another thread).
    wake: Box<dyn Fn() + Send + Sync>,
}

impl Inbox {
    pub fn new(wake: Box<dyn Fn() + Send + Sync>) -> Inbox {
        Inbox { queue: Mutex::default(), filled: AtomicBool::new(false), wake }
    }

    fn queue(&self) -> MutexGuard<'_, VecDeque<Notification>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Everything received so far, oldest first.
    pub fn take(&self) -> Vec<Notification> {
        // A sender sets the flag after it pushes (under the lock), so a
        // push this misses leaves the flag set for the next call.
        if !self.filled.swap(false, SeqCst) {
            return Vec::new();
        }
        self.queue().drain(..).collect()
    }
}

struct Listener {
    channels: BTreeSet<String>,
    inbox: Arc<Inbox>,
}

/// The listening sessions of one database.
#[derive(Default)]
pub(crate) struct Hub {
    listeners: Mutex<HashMap<u64, Listener>>,
}

impl Hub {
    fn listeners(&self) -> MutexGuard<'_, HashMap<u64, Listener>> {
        self.listeners.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Session `holder` listens on `channel`, receiving into `inbox`.
    pub fn listen(&self, holder: u64, channel: &str, inbox: &Arc<Inbox>) {
        self.listeners()
            .entry(holder)
            .or_insert_with(|| Listener { channels: BTreeSet::new(), inbox: inbox.clone() })
            .channels
            .insert(channel.to_string());
    }

    /// The channels session `holder` listens on, in order
    /// (`pg_listening_channels()`).
    pub fn channels(&self, holder: u64) -> Vec<String> {
        self.listeners().get(&holder).map(|l| l.channels.iter().cloned().collect()).unwrap_or_default()
    }

    /// Session `holder` stops listening on `channel` (every channel for
    /// `None`).
    pub fn unlisten(&self, holder: u64, channel: Option<&str>) {
        let mut l = self.listeners();
        if let Some(me) = l.get_mut(&holder) {
            match channel {
                Some(c) => {
                    me.channels.remove(c);
                }
                None => me.channels.clear(),
            }
            if me.channels.is_empty() {
                l.remove(&holder);
            }
        }
    }

    /// Delivers a committed transaction's notifications (channel, payload)
    /// from the session with process id `pid`.
    pub fn send(&self, pid: i32, notes: &[(String, String)]) {
        let l = self.listeners();
        for listener in l.values() {
            let mut any = false;
            {
                let mut q = listener.inbox.queue();
                for (channel, payload) in notes.iter().filter(|(c, _)| listener.channels.contains(c)) {
                    if q.len() >= INBOX_LIMIT {
                        tracing::warn!(channel = %channel, "a listener's inbox is full; a notification is dropped");
                        continue;
                    }
                    q.push_back(Notification { pid, channel: channel.clone(), payload: payload.clone() });
                    any = true;
                }
                if any {
                    listener.inbox.filled.store(true, SeqCst);
                }
            }
            if any {
                (listener.inbox.wake)();
            }
        }
    }
}

/// NOTIFY `channel`, `payload` in the transaction whose notifications
/// `notes` collects (the statement, and `pg_notify`).
pub(crate) fn queue(notes: &RefCell<Vec<(String, String)>>, channel: String, payload: String) -> Result<()> {
    if channel.is_empty() {
        return Err(Error::InvalidParameter("channel name cannot be empty".into()));
    }
    if payload.len() > PAYLOAD_LIMIT {
        return Err(Error::InvalidParameter("payload string too long".into()));
    }
    add(&mut notes.borrow_mut(), channel, payload);
    Ok(())
}

/// A transaction's notifications so far; a duplicate is not added again.
pub(crate) fn add(notes: &mut Vec<(String, String)>, channel: String, payload: String) {
    if !notes.iter().any(|(c, p)| *c == channel && *p == payload) {
        notes.push((channel, payload));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    #[test]
    fn a_notification_reaches_every_listener_of_its_channel_once() {
        let hub = Hub::default();
        let woken = Arc::new(AtomicUsize::new(0));
        let inbox = |w: &Arc<AtomicUsize>| {
            let w = w.clone();
            Arc::new(Inbox::new(Box::new(move || {
                w.fetch_add(1, SeqCst);
            })))
        };
        let (a, b) = (inbox(&woken), inbox(&woken));
        hub.listen(1, "jobs", &a);
        hub.listen(1, "mail", &a);
        hub.listen(2, "jobs", &b);
        let mut notes = Vec::new();
        add(&mut notes, "jobs".into(), "1".into());
        add(&mut notes, "jobs".into(), "1".into());
        add(&mut notes, "mail".into(), "".into());
        add(&mut notes, "other".into(), "x".into());
        hub.send(7, &notes);
        let got: Vec<(String, String)> = a.take().into_iter().map(|n| (n.channel, n.payload)).collect();
        assert_eq!(got, vec![("jobs".to_string(), "1".to_string()), ("mail".to_string(), String::new())]);
        assert_eq!(b.take(), vec![Notification { pid: 7, channel: "jobs".into(), payload: "1".into() }]);
        assert_eq!(woken.load(SeqCst), 2);
        hub.unlisten(1, Some("jobs"));
        hub.unlisten(2, None);
        hub.send(7, &notes);
        assert_eq!(a.take(), vec![Notification { pid: 7, channel: "mail".into(), payload: "".into() }]);
        assert!(b.take().is_empty());
    }
}
