//! Messages a transport drops, counted by reason and told in the logs without flooding
//! them: the first drop after a quiet spell is logged at once, later ones in one summary
//! line per [`SUMMARY_PERIOD`] at most (time passed in: the rule is tested without
//! clocks).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The shortest time between two log lines about one transport's drops.
pub(crate) const SUMMARY_PERIOD: Duration = Duration::from_secs(10);

/// Why a message to a destination was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// Congestion control `drop`: the destination had no room.
    Congestion,
    /// The message waited for room when the destination was closed (it took nothing for
    /// too long, or the session ended).
    Closed,
    /// A forwarded message that could not be queued at all.
    Unqueueable,
}

impl DropReason {
    /// Every reason, in the order the transports count them.
    pub const ALL: [Self; 3] = [Self::Congestion, Self::Closed, Self::Unqueueable];

    /// The reason's name, as metrics label it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Congestion => "congestion",
            Self::Closed => "closed",
            Self::Unqueueable => "unqueueable",
        }
    }

    const fn index(self) -> usize {
        match self {
            Self::Congestion => 0,
            Self::Closed => 1,
            Self::Unqueueable => 2,
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Drops by reason, counted since the transport opened.
#[derive(Debug, Default)]
pub(crate) struct DropCounts([AtomicU64; 3]);

impl DropCounts {
    /// Drops for `reason` so far.
    pub(crate) fn get(&self, reason: DropReason) -> u64 {
        self.0[reason.index()].load(Ordering::Relaxed)
    }

    pub(crate) fn add(&self, reason: DropReason, n: u64) {
        self.0[reason.index()].fetch_add(n, Ordering::Relaxed);
    }
}

/// When a transport's drops were last told, and what has not been told yet.
#[derive(Debug, Default)]
pub(crate) struct DropLog {
    /// When the last line was logged.
    last_told: Option<Instant>,
    /// Drops since then, by reason.
    untold: [u64; 3],
}

/// A line to log about drops.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Tell {
    /// The first drop after a quiet spell.
    First(DropReason, u64),
    /// Drops since the last line, by reason (those with none left out), over `over`.
    Summary(Vec<(DropReason, u64)>, Duration),
}

impl DropLog {
    /// Counts `n` drops for `reason` at `now`; returns what to log now, if anything.
    pub(crate) fn count(&mut self, reason: DropReason, n: u64, now: Instant) -> Option<Tell> {
        if n == 0 {
            return None;
        }
        self.untold[reason.index()] += n;
        match self.last_told {
            Some(at) if now.duration_since(at) < SUMMARY_PERIOD => None,
            // Drops came since the last line: they are summed up with this one.
            Some(at) if self.untold.iter().sum::<u64>() > n => {
                Some(self.summary(now, now.duration_since(at)))
            }
            // The first drop, or the first after a quiet spell.
            _ => {
                self.untold = [0; 3];
                self.last_told = Some(now);
                Some(Tell::First(reason, n))
            }
        }
    }

    fn summary(&mut self, now: Instant, over: Duration) -> Tell {
        let counts = DropReason::ALL
            .iter()
            .map(|r| (*r, self.untold[r.index()]))
            .filter(|(_, n)| *n > 0)
            .collect();
        self.untold = [0; 3];
        self.last_told = Some(now);
        Tell::Summary(counts, over)
    }
}

/// Counts drops of one transport and logs them (rate-limited) naming `destination`
/// (made only when a line is logged: nothing is allocated for a drop that is not told).
pub(crate) fn count(
    counts: &DropCounts,
    log: &std::sync::Mutex<DropLog>,
    destination: impl Fn() -> String,
    reason: DropReason,
    n: u64,
) {
    if n == 0 {
        return;
    }
    counts.add(reason, n);
    let tell = log
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .count(reason, n, Instant::now());
    match tell {
        Some(Tell::First(reason, n)) => {
            tracing::warn!(destination = destination(), %reason, dropped = n, "dropping messages");
        }
        Some(Tell::Summary(counts, over)) => {
            let by_reason: Vec<String> = counts.iter().map(|(r, n)| format!("{r}: {n}")).collect();
            tracing::warn!(
                destination = destination(),
                over_s = over.as_secs(),
                "dropped messages ({})",
                by_reason.join(", ")
            );
        }
        None => {}
    }
}

impl super::Transport {
    /// Counts `n` messages to this transport dropped for `reason`, and logs them
    /// (rate-limited).
    pub(super) fn count_drops(&self, reason: DropReason, n: u64) {
        if n == 0 {
            return;
        }
        self.stats.dropped.fetch_add(n, Ordering::Relaxed);
        let destination = || format!("{} ({})", self.describe, self.peer_zid());
        count(&self.stats.drops, &self.drop_log, destination, reason, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_drop_is_told_at_once_then_one_summary_per_period() {
        let t0 = Instant::now();
        let s = |secs: u64| t0 + Duration::from_secs(secs);
        let mut log = DropLog::default();
        assert_eq!(
            log.count(DropReason::Congestion, 1, s(0)),
            Some(Tell::First(DropReason::Congestion, 1))
        );
        // A burst within the period: nothing logged.
        for i in 1..=9 {
            assert_eq!(log.count(DropReason::Congestion, 100, s(i)), None);
        }
        assert_eq!(log.count(DropReason::Closed, 5, s(9)), None);
        // The period over: one line with everything since, by reason.
        assert_eq!(
            log.count(DropReason::Congestion, 1, s(11)),
            Some(Tell::Summary(
                vec![(DropReason::Congestion, 901), (DropReason::Closed, 5)],
                Duration::from_secs(11)
            ))
        );
        // A drop long after a quiet spell is a first drop again.
        assert_eq!(
            log.count(DropReason::Closed, 2, s(100)),
            Some(Tell::First(DropReason::Closed, 2))
        );
        assert_eq!(log.count(DropReason::Congestion, 0, s(200)), None);
    }

    #[test]
    fn counts_go_by_reason() {
        let counts = DropCounts::default();
        let log = std::sync::Mutex::new(DropLog::default());
        let x = || "x".to_string();
        count(&counts, &log, x, DropReason::Congestion, 3);
        count(&counts, &log, x, DropReason::Closed, 2);
        assert_eq!(counts.get(DropReason::Congestion), 3);
        assert_eq!(counts.get(DropReason::Closed), 2);
        assert_eq!(counts.get(DropReason::Unqueueable), 0);
    }
}
