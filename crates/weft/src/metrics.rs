//! Counters shared by the parts of weft that time what they do: a histogram of durations
//! in fixed buckets, updated with atomics (no lock on the counted path) and read as a
//! consistent snapshot; and what the transports count (why messages were dropped or
//! discarded, the memory held by received batches whose payloads are kept).

pub use crate::link::serial_dropped_frames;
pub use crate::transport::{shared_batch_bytes, DiscardReason, DropReason, SHARED_BATCH_BUDGET};

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the buckets, in seconds: from 10 µs to 10 s.
pub const DURATION_BUCKETS: [f64; 13] = [
    1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2, 5e-2, 0.1, 0.5, 1.0, 5.0, 10.0,
];

/// Durations counted by bucket of [`DURATION_BUCKETS`] (a duration counts in the first
/// bucket it fits, or beyond the last), with their sum.
#[derive(Debug, Default)]
pub struct DurationHistogram {
    buckets: [AtomicU64; DURATION_BUCKETS.len() + 1],
    nanos: AtomicU64,
}

/// A histogram as read at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HistogramSnapshot {
    /// Counts per bucket of [`DURATION_BUCKETS`], then those beyond the last (not
    /// cumulative).
    pub counts: Vec<u64>,
    /// The sum of the durations, in nanoseconds.
    pub sum_nanos: u64,
}

impl DurationHistogram {
    /// Counts one duration.
    pub fn record(&self, d: Duration) {
        let seconds = d.as_secs_f64();
        let bucket = DURATION_BUCKETS
            .iter()
            .position(|b| seconds <= *b)
            .unwrap_or(DURATION_BUCKETS.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.nanos.fetch_add(
            u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// The counts and sum now.
    pub fn snapshot(&self) -> HistogramSnapshot {
        HistogramSnapshot {
            counts: self
                .buckets
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .collect(),
            sum_nanos: self.nanos.load(Ordering::Relaxed),
        }
    }
}

impl HistogramSnapshot {
    /// How many durations were counted (every bucket's count).
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// What this session's queries did.
#[derive(Debug, Default)]
pub struct QueryStats {
    /// Gets this session made.
    pub gets: AtomicU64,
    /// Of those, the ones that ended by their timeout (some target never finished).
    pub gets_timed_out: AtomicU64,
    /// How long gets took, from sent to ended.
    pub get_durations: DurationHistogram,
    /// Queries a router passed on for others.
    pub routed: AtomicU64,
    /// Of those, the ones no queryable could answer (ended at once).
    pub routed_unanswered: AtomicU64,
    /// How long the routed queries took, from received to their final answer.
    pub routed_durations: DurationHistogram,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_fall_in_the_first_bucket_they_fit() {
        let h = DurationHistogram::default();
        h.record(Duration::from_micros(5));
        h.record(Duration::from_micros(10));
        h.record(Duration::from_millis(3));
        h.record(Duration::from_secs(60));
        let s = h.snapshot();
        assert_eq!(s.counts[0], 2);
        assert_eq!(s.counts[5], 1, "3 ms is in the 5 ms bucket");
        assert_eq!(s.counts[DURATION_BUCKETS.len()], 1, "beyond the last");
        assert_eq!(s.count(), 4);
        assert_eq!(s.sum_nanos, 5_000 + 10_000 + 3_000_000 + 60_000_000_000);
    }
}
