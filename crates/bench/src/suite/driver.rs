//! The load driver, after the seeds' ostress: N connections, each running
//! R iterations of a unit of work (a script, a procedure call), after a
//! warm-up that is not measured. Every transaction's latency goes into a
//! histogram (microseconds, 3 significant digits), every retry after a
//! write conflict and every intended rollback is counted, and a progress
//! bar shows the iterations done.

use super::Res;
use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// The shape of one load.
#[derive(Clone, Copy, Debug)]
pub struct Load {
    pub clients: usize,
    /// Measured iterations per client.
    pub iterations: u64,
    /// Unmeasured iterations per client, run before the clock starts.
    pub warmup: u64,
}

/// What a worker's iteration reports through.
pub struct Recorder {
    hist: Histogram<u64>,
    /// Transactions committed.
    pub committed: u64,
    /// Attempts repeated after a serialization failure or deadlock.
    pub retries: u64,
    /// Transactions rolled back on purpose (W6's invalid items).
    pub rolled_back: u64,
}

impl Recorder {
    fn new() -> Recorder {
        Recorder {
            hist: Histogram::new_with_bounds(1, 600_000_000, 3).expect("histogram bounds"),
            committed: 0,
            retries: 0,
            rolled_back: 0,
        }
    }

    /// Records one transaction that took `took`.
    pub fn record(&mut self, took: Duration) {
        self.hist.saturating_record((took.as_micros() as u64).max(1));
    }

    /// Runs `txn`, timed; again after a serialization failure (40001) or
    /// deadlock (40P01), counting each retry. The transaction counts as
    /// committed when `txn` returns `Ok(true)`, as rolled back on purpose
    /// on `Ok(false)`.
    pub fn transaction(&mut self, txn: impl FnMut() -> Result<bool, postgres::Error>) -> Res<()> {
        self.retrying(is_conflict, txn).map_err(|e| describe(e).into())
    }

    /// [`Recorder::transaction`] for any client: `retry` says which errors
    /// a new attempt resolves.
    pub fn retrying<E>(
        &mut self,
        retry: impl Fn(&E) -> bool,
        mut txn: impl FnMut() -> Result<bool, E>,
    ) -> Result<(), E> {
        let started = Instant::now();
        loop {
            match txn() {
                Ok(committed) => {
                    self.record(started.elapsed());
                    if committed {
                        self.committed += 1;
                    } else {
                        self.rolled_back += 1;
                    }
                    return Ok(());
                }
                Err(e) if retry(&e) => self.retries += 1,
                Err(e) => return Err(e),
            }
        }
    }
}

/// Whether an error is a write conflict that a retry resolves.
pub fn is_conflict(e: &postgres::Error) -> bool {
    e.code().is_some_and(|c| matches!(c.code(), "40001" | "40P01"))
}

/// An error with its SQLSTATE and the server's message.
pub fn describe(e: postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} {}", db.code().code(), db.message()),
        None => e.to_string(),
    }
}

/// What a load measured, over all clients.
pub struct Outcome {
    pub seconds: f64,
    /// Latency of every measured transaction, in microseconds.
    pub hist: Histogram<u64>,
    pub committed: u64,
    pub retries: u64,
    pub rolled_back: u64,
    /// Transactions committed during the warm-up (not measured).
    pub warmup_committed: u64,
}

impl Outcome {
    /// The outcome of a load some other client ran: `committed`
    /// transactions in `seconds`, with their latencies in microseconds.
    pub fn measured(seconds: f64, committed: u64, latencies_us: Vec<u64>) -> Outcome {
        let mut rec = Recorder::new();
        for us in latencies_us {
            rec.hist.saturating_record(us.max(1));
        }
        Outcome { seconds, hist: rec.hist, committed, retries: 0, rolled_back: 0, warmup_committed: 0 }
    }

    /// Committed transactions per second.
    pub fn per_second(&self) -> f64 {
        self.committed as f64 / self.seconds.max(1e-9)
    }

    /// A latency percentile in milliseconds.
    pub fn ms(&self, percentile: f64) -> f64 {
        self.hist.value_at_quantile(percentile) as f64 / 1000.0
    }

    /// The latency curve for the plots: (quantile, ms) pairs.
    pub fn curve(&self) -> Vec<(f64, f64)> {
        QUANTILES.iter().map(|&q| (q, self.ms(q))).collect()
    }
}

/// The quantiles a latency curve is drawn at.
pub const QUANTILES: [f64; 12] = [0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999, 0.9999];

/// Runs `load`: one thread per client, each with its own worker made by
/// `connect(client)`, which `iteration(worker, recorder, i)` then drives.
/// All clients connect and warm up first; the clock runs from the moment
/// every one of them is ready until the last finishes.
pub fn run<W: Send>(
    label: &str,
    load: Load,
    connect: impl Fn(usize) -> Res<W> + Sync,
    iteration: impl Fn(&mut W, &mut Recorder, u64) -> Res<()> + Sync,
) -> Res<Outcome> {
    let total = load.clients as u64 * (load.iterations + load.warmup);
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("{prefix:>40} {wide_bar} {pos}/{len} {per_sec} eta {eta}")
            .expect("progress template"),
    );
    bar.set_prefix(label.to_string());
    let ready = Arc::new(Barrier::new(load.clients + 1));
    let (connect, iteration, bar_ref) = (&connect, &iteration, &bar);
    let (results, seconds) = std::thread::scope(|s| {
        let workers: Vec<_> = (0..load.clients)
            .map(|client| {
                let ready = ready.clone();
                s.spawn(move || -> Res<(Recorder, u64)> {
                    let worker = connect(client);
                    let mut warm = Recorder::new();
                    let warmed = worker.and_then(|mut w| {
                        for i in 0..load.warmup {
                            iteration(&mut w, &mut warm, i)?;
                            bar_ref.inc(1);
                        }
                        Ok(w)
                    });
                    // Reach the barrier even after an error, or the others
                    // would wait for ever.
                    ready.wait();
                    let mut w = warmed?;
                    let mut rec = Recorder::new();
                    for i in load.warmup..load.warmup + load.iterations {
                        iteration(&mut w, &mut rec, i)?;
                        bar_ref.inc(1);
                    }
                    Ok((rec, warm.committed))
                })
            })
            .collect();
        ready.wait();
        let started = Instant::now();
        let results: Vec<_> = workers.into_iter().map(|w| w.join().expect("client thread")).collect();
        (results, started.elapsed().as_secs_f64())
    });
    bar.finish_and_clear();
    let mut out = Outcome {
        seconds,
        hist: Recorder::new().hist,
        committed: 0,
        retries: 0,
        rolled_back: 0,
        warmup_committed: 0,
    };
    for r in results {
        let (r, warm) = r.map_err(|e| format!("{label}: {e}"))?;
        out.warmup_committed += warm;
        out.hist.add(&r.hist)?;
        out.committed += r.committed;
        out.retries += r.retries;
        out.rolled_back += r.rolled_back;
    }
    Ok(out)
}

/// A spinner for a phase with no count to show (loading, checking).
pub fn phase(label: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{prefix:>40} {spinner} {elapsed}").expect("progress template"),
    );
    bar.set_prefix(label.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A bar that fills over `seconds` of a timed phase (a pgbench run).
pub fn timed(label: &str, seconds: u64) -> ProgressBar {
    let bar = ProgressBar::new(seconds).with_style(
        ProgressStyle::with_template("{prefix:>40} {wide_bar} {pos}/{len} s").expect("progress template"),
    );
    bar.set_prefix(label.to_string());
    bar
}
