//! Latency histograms that every worker thread records into without
//! contending with the others.
//!
//! A histogram is a set of shards, each a cache line or two of relaxed
//! atomic counters: one count per bucket and the sum in nanoseconds. A
//! thread always records into the same shard (picked once per thread), so
//! with a shard per worker a recording is two uncontended atomic adds and
//! no lock. A scrape adds the shards up; what it reads is as of a moment
//! during the scrape, which is all Prometheus asks of a histogram.
//!
//! ```text
//!  worker 0 ─▶ shard 0  [≤50µs ≤100µs ... ≤10s +Inf] sum
//!  worker 1 ─▶ shard 1  [ ...                      ] sum
//!  ...                              scrape: Σ shards ─▶ _bucket, _sum, _count
//! ```

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

/// Upper bounds of the buckets, seconds (the last bucket, +Inf, is
/// implied): from 50 µs for a point look-up to 10 s.
const BOUNDS: [f64; 16] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// [`BOUNDS`] in nanoseconds, for the comparison made per recording.
const BOUNDS_NS: [u64; 16] = {
    let mut ns = [0u64; 16];
    let mut i = 0;
    while i < 16 {
        ns[i] = (BOUNDS[i] * 1e9) as u64;
        i += 1;
    }
    ns
};

/// Shards per histogram: at least the worker threads of a common machine;
/// more threads share shards, which stays correct, only less cheap.
const SHARDS: usize = 32;

/// The shard of this thread.
fn shard_of_thread() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Relaxed) % SHARDS;
    }
    SHARD.with(|s| *s)
}

/// One thread's part: aligned so that two shards never share a cache line.
#[repr(align(128))]
#[derive(Default)]
struct Shard {
    buckets: [AtomicU64; BOUNDS.len() + 1],
    sum_ns: AtomicU64,
}

/// A histogram of durations in seconds (see the module header).
pub(crate) struct Histogram {
    shards: Box<[Shard]>,
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram { shards: (0..SHARDS).map(|_| Shard::default()).collect() }
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (sum, count, _) = self.totals();
        f.debug_struct("Histogram").field("count", &count).field("sum", &sum).finish()
    }
}

impl Histogram {
    /// Records one duration.
    #[inline]
    pub fn observe(&self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let bucket = BOUNDS_NS.partition_point(|&b| b < ns);
        let shard = &self.shards[shard_of_thread()];
        shard.buckets[bucket].fetch_add(1, Relaxed);
        shard.sum_ns.fetch_add(ns, Relaxed);
    }

    /// The sum in seconds, the count, and the count of each bucket (not
    /// cumulative), over all shards.
    fn totals(&self) -> (f64, u64, [u64; BOUNDS.len() + 1]) {
        let mut buckets = [0u64; BOUNDS.len() + 1];
        let mut sum_ns = 0u64;
        for s in self.shards.iter() {
            for (total, b) in buckets.iter_mut().zip(&s.buckets) {
                *total += b.load(Relaxed);
            }
            sum_ns = sum_ns.wrapping_add(s.sum_ns.load(Relaxed));
        }
        (sum_ns as f64 / 1e9, buckets.iter().sum(), buckets)
    }
}

impl EncodeMetric for Histogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let (sum, count, buckets) = self.totals();
        let bounds = BOUNDS.iter().copied().chain([f64::INFINITY]);
        let pairs: Vec<(f64, u64)> = bounds.zip(buckets).collect();
        encoder.encode_histogram::<NoLabelSet>(sum, count, &pairs, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_counts_in_the_first_bucket_that_holds_it() {
        let h = Histogram::default();
        h.observe(Duration::from_micros(50));
        h.observe(Duration::from_micros(51));
        h.observe(Duration::from_secs(60));
        let (sum, count, buckets) = h.totals();
        assert_eq!(count, 3);
        assert_eq!((buckets[0], buckets[1], buckets[BOUNDS.len()]), (1, 1, 1));
        assert!((sum - 60.000101).abs() < 1e-9);
    }

    #[test]
    fn threads_recording_at_once_lose_nothing() {
        let shared = std::sync::Arc::new(Histogram::default());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let h = shared.clone();
                std::thread::spawn(move || (0..1000).for_each(|_| h.observe(Duration::from_millis(1))))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let (_, count, buckets) = shared.totals();
        assert_eq!((count, buckets[4]), (4000, 4000));
    }
}
