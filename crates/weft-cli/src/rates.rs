//! Rates of one stream of samples, as `weft hz` and `weft bw` report them (the figures
//! ROS 2's `ros2 topic hz` and `ros2 topic bw` print): arrivals kept over a window of the
//! last N samples, with time passed in.

use std::collections::VecDeque;
use std::time::Instant;

/// The last samples of a stream: when each arrived and its size.
#[derive(Debug)]
pub struct Window {
    samples: VecDeque<(Instant, usize)>,
    capacity: usize,
}

/// What a window says about its stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Rates {
    /// Samples in the window.
    pub count: usize,
    /// Samples per second over the window (from the first arrival to the last).
    pub hz: f64,
    /// Shortest, longest and mean time between two arrivals, and its standard
    /// deviation, in seconds.
    pub min_gap: f64,
    /// See `min_gap`.
    pub max_gap: f64,
    /// See `min_gap`.
    pub mean_gap: f64,
    /// See `min_gap`.
    pub std_dev: f64,
    /// Bytes per second over the window, up to `now`.
    pub bytes_per_s: f64,
    /// Smallest, largest and mean size, in bytes.
    pub min_size: usize,
    /// See `min_size`.
    pub max_size: usize,
    /// See `min_size`.
    pub mean_size: f64,
}

impl Window {
    /// A window of the last `capacity` samples (at least 2).
    pub fn new(capacity: usize) -> Self {
        Self {
            samples: VecDeque::new(),
            capacity: capacity.max(2),
        }
    }

    /// A sample of `size` bytes arrived at `at`.
    pub fn add(&mut self, at: Instant, size: usize) {
        if self.samples.len() == self.capacity {
            self.samples.pop_front();
        }
        self.samples.push_back((at, size));
    }

    /// The figures of the window as of `now`; `None` until two samples arrived.
    pub fn rates(&self, now: Instant) -> Option<Rates> {
        let (first, _) = *self.samples.front()?;
        let (last, _) = *self.samples.back()?;
        let count = self.samples.len();
        if count < 2 {
            return None;
        }
        let gaps: Vec<f64> = self
            .samples
            .iter()
            .zip(self.samples.iter().skip(1))
            .map(|((a, _), (b, _))| b.duration_since(*a).as_secs_f64())
            .collect();
        let span = last.duration_since(first).as_secs_f64();
        let mean_gap = span / gaps.len() as f64;
        let variance = gaps.iter().map(|g| (g - mean_gap).powi(2)).sum::<f64>() / gaps.len() as f64;
        let sizes = self.samples.iter().map(|(_, s)| *s);
        let total: usize = sizes.clone().sum();
        let elapsed = now.duration_since(first).as_secs_f64();
        Some(Rates {
            count,
            hz: if span > 0.0 {
                gaps.len() as f64 / span
            } else {
                0.0
            },
            min_gap: gaps.iter().copied().fold(f64::INFINITY, f64::min),
            max_gap: gaps.iter().copied().fold(0.0, f64::max),
            mean_gap,
            std_dev: variance.sqrt(),
            bytes_per_s: if elapsed > 0.0 {
                total as f64 / elapsed
            } else {
                0.0
            },
            min_size: sizes.clone().min().unwrap_or(0),
            max_size: sizes.max().unwrap_or(0),
            mean_size: total as f64 / count as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_steady_stream_gives_its_rate_and_sizes() {
        let t0 = Instant::now();
        let mut w = Window::new(100);
        assert!(w.rates(t0).is_none());
        for i in 0..11u32 {
            w.add(
                t0 + Duration::from_millis(u64::from(i) * 100),
                100 + (i % 2) as usize * 50,
            );
        }
        let r = w.rates(t0 + Duration::from_millis(1_000)).unwrap();
        assert_eq!(r.count, 11);
        assert!((r.hz - 10.0).abs() < 1e-9, "{r:?}");
        assert!((r.mean_gap - 0.1).abs() < 1e-9 && r.std_dev < 1e-9, "{r:?}");
        assert_eq!((r.min_size, r.max_size), (100, 150));
        // 6 × 100 + 5 × 150 bytes over one second.
        assert!((r.bytes_per_s - 1_350.0).abs() < 1e-6, "{r:?}");
    }

    #[test]
    fn the_window_keeps_only_the_last_samples() {
        let t0 = Instant::now();
        let mut w = Window::new(3);
        for (ms, size) in [(0, 1), (1_000, 1), (1_010, 5), (1_020, 5)] {
            w.add(t0 + Duration::from_millis(ms), size);
        }
        let r = w.rates(t0 + Duration::from_millis(1_020)).unwrap();
        assert_eq!(r.count, 3);
        assert!((r.hz - 100.0).abs() < 1e-6, "{r:?}");
        assert_eq!(r.min_size, 1);
    }
}
