//! The session's hybrid logical clock.
//!
//! A router timestamps every value it forwards that has none. Reading the system clock
//! for each of the thousands of messages of one batch costs more than routing them; so
//! the physical time is given by the caller: a thread serving links reads it once per
//! received batch (`transport::Caller::physical_now`). The hybrid logical clock still
//! makes every timestamp unique and increasing (it advances its counter when the physical
//! time has not moved); they trail the real time by at most the time spent on the batch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use uhlc::NTP64;

/// The low bits of a time that count the timestamps made within one reading of the
/// physical clock (NTP64: a unit of the low bit is about 0.23 ns, so 16 of them are far
/// below the clock's own resolution).
const COUNTER_MASK: u64 = 0xF;

/// The session's hybrid logical clock: every time it gives is later than the one before,
/// across threads, even when the physical clock stands still or steps back (the counter
/// in the low bits then advances). One compare-and-swap per timestamp, no lock: a router
/// stamps every value it forwards.
#[derive(Debug, Default)]
pub(crate) struct Hlc {
    last: AtomicU64,
}

impl Hlc {
    /// A new time (NTP64), unique and increasing for this clock, at the physical time
    /// `physical` or later.
    pub(crate) fn new_time(&self, physical: NTP64) -> u64 {
        let physical = physical.0 & !COUNTER_MASK;
        let mut last = self.last.load(Ordering::Relaxed);
        loop {
            let next = if physical > last { physical } else { last + 1 };
            match self
                .last
                .compare_exchange_weak(last, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return next,
                Err(seen) => last = seen,
            }
        }
    }
}

/// A handle on a session's hybrid logical clock that does not keep the session open: a
/// service on a session (a storage) stamps what came without a timestamp from the very
/// clock its router stamps with, so that the two kinds of stamps order as the values came.
#[derive(Debug, Clone)]
pub struct Clock {
    hlc: Arc<Hlc>,
    id: weft_proto::core::ZenohId,
}

impl Clock {
    /// The clock `hlc` of the session `id`.
    pub(crate) const fn new(hlc: Arc<Hlc>, id: weft_proto::core::ZenohId) -> Self {
        Self { hlc, id }
    }

    /// A new timestamp, later than every one this clock gave before (the session's
    /// included).
    pub fn new_timestamp(&self) -> weft_proto::core::Timestamp {
        weft_proto::core::Timestamp {
            time: self.hlc.new_time(uhlc::system_time_clock()),
            id: self.id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn physical_now() -> NTP64 {
        uhlc::system_time_clock()
    }

    #[test]
    fn timestamps_of_one_batch_are_unique_and_increasing() {
        let hlc = Hlc::default();
        let batch = physical_now();
        let stamps: Vec<_> = (0..1000).map(|_| hlc.new_time(batch)).collect();
        assert!(stamps.windows(2).all(|w| w[0] < w[1]));
        assert!(stamps[0] & !COUNTER_MASK == batch.0 & !COUNTER_MASK);
    }

    #[test]
    fn times_from_many_threads_are_all_different_and_follow_the_physical_clock() {
        let hlc = std::sync::Arc::new(Hlc::default());
        let before = physical_now().0;
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let hlc = hlc.clone();
                std::thread::spawn(move || {
                    let times: Vec<u64> =
                        (0..10_000).map(|_| hlc.new_time(physical_now())).collect();
                    assert!(
                        times.windows(2).all(|w| w[0] < w[1]),
                        "increasing per thread"
                    );
                    times
                })
            })
            .collect();
        let mut all: Vec<u64> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "no time given twice");
        assert!(all[0] >= before & !COUNTER_MASK);
        assert!(all[n - 1] <= physical_now().0 + n as u64);
    }

    #[test]
    fn a_physical_clock_standing_still_or_stepping_back_still_gives_later_times() {
        let hlc = Hlc::default();
        let ahead = physical_now().0 + (10 << 32); // ten seconds ahead
        hlc.last.store(ahead, Ordering::Relaxed);
        let t = hlc.new_time(physical_now());
        assert_eq!(t, ahead + 1, "the counter advances past the last time");
        assert!(hlc.new_time(physical_now()) > t);
    }
}
