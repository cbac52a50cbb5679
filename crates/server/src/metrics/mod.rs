//! The metrics endpoint: with `--metrics-listen ADDR` the server answers
//! `GET /metrics` on that address with its figures in Prometheus's text
//! exposition format (version 0.0.4), for Prometheus or any agent that
//! reads it to scrape.
//!
//! ```text
//!  scrape ─▶ http.rs      HTTP/1.1 on the listener's thread, one request per
//!                         connection, never on the workers that run sessions
//!         ─▶ figures.rs   read now: tables, indexes, collector, log,
//!                         checkpoints, memory (the engine's own counters),
//!                         connections, transactions, errors, latencies
//!  session ─▶ Metrics     what only the server sees, recorded as it happens:
//!                         connections accepted, errors by SQLSTATE, and the
//!                         latency histograms (histogram.rs)
//! ```
//!
//! Almost every figure is one the engine keeps anyway and is read when
//! scraped. What the server records itself it records only when the
//! endpoint is on: without `--metrics-listen` there is no [`Metrics`], and
//! a statement costs one test of an `Option` more. With it, a statement
//! reads the clock twice and adds to a histogram shard of its own worker
//! thread (no lock, no contended cache line); an error takes a short lock.
//!
//! Every name starts with `centum_`; sizes end in `_bytes`, durations in
//! `_seconds`, counters in `_total`; per-table figures carry a `table`
//! label and per-index ones `table` and `index`.

mod figures;
mod histogram;
mod http;

pub(crate) use figures::registry;
pub(crate) use http::serve;

use histogram::Histogram;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

/// What the server itself counts for the endpoint.
#[derive(Default)]
pub(crate) struct Metrics {
    /// Connections accepted by the listener, start-ups that failed
    /// included.
    pub accepted: AtomicU64,
    /// How long each request took, from its message to its reply: a
    /// simple-protocol query (all its statements) or an Execute.
    pub statements: Histogram,
    /// How long commits waited for their log record to be durable and
    /// their changes visible.
    pub commit_waits: Histogram,
    /// Errors sent to clients, by SQLSTATE.
    errors: Mutex<BTreeMap<String, u64>>,
}

impl Metrics {
    /// Counts an error sent to a client.
    pub fn error(&self, sqlstate: &str) {
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        match errors.get_mut(sqlstate) {
            Some(n) => *n += 1,
            None => {
                errors.insert(sqlstate.to_string(), 1);
            }
        }
    }

    /// The errors counted so far, by SQLSTATE.
    fn errors(&self) -> BTreeMap<String, u64> {
        self.errors.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
