//! The physical clock of the session's hybrid logical clock, read once per received batch.
//!
//! A router timestamps every value it forwards that has none. Reading the system clock
//! for each of the thousands of messages of one batch costs more than routing them; so
//! while a batch is handled, the first timestamp reads the clock and the others of the
//! batch reuse that reading. The hybrid logical clock still makes every timestamp unique
//! and increasing (it advances its counter when the physical time has not moved); they
//! trail the real time by at most the time spent on the batch.

use std::cell::Cell;

use uhlc::NTP64;

thread_local! {
    /// Whether this thread is handling a received batch.
    static IN_BATCH: Cell<bool> = const { Cell::new(false) };
    /// The clock reading of the current batch (0 until first read).
    static BATCH_NOW: Cell<u64> = const { Cell::new(0) };
}

/// The physical clock given to the session's HLC: the system time, read once per batch
/// on a thread handling a batch.
pub(crate) fn physical_now() -> NTP64 {
    if !IN_BATCH.with(Cell::get) {
        return uhlc::system_time_clock();
    }
    let cached = BATCH_NOW.with(Cell::get);
    if cached != 0 {
        return NTP64(cached);
    }
    let now = uhlc::system_time_clock();
    BATCH_NOW.with(|c| c.set(now.0));
    now
}

/// Marks the handling of one received batch on this thread, until dropped.
pub(crate) struct BatchClock(());

impl BatchClock {
    /// Starts a batch: the next clock reading is fresh and kept for the batch.
    pub(crate) fn begin() -> Self {
        IN_BATCH.with(|b| b.set(true));
        BATCH_NOW.with(|c| c.set(0));
        Self(())
    }
}

impl Drop for BatchClock {
    fn drop(&mut self) {
        IN_BATCH.with(|b| b.set(false));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_reading_per_batch_and_fresh_readings_outside() {
        let before = physical_now();
        let first = {
            let _batch = BatchClock::begin();
            let first = physical_now();
            std::thread::sleep(std::time::Duration::from_millis(2));
            assert_eq!(physical_now(), first, "a batch reuses its reading");
            first
        };
        assert!(first >= before);
        std::thread::sleep(std::time::Duration::from_millis(2));
        let after = physical_now();
        assert!(after > first, "outside a batch, the clock is read again");
        let _batch = BatchClock::begin();
        assert!(physical_now() >= after, "a new batch reads the clock again");
    }

    #[test]
    fn timestamps_of_one_batch_are_unique_and_increasing() {
        let hlc = uhlc::HLCBuilder::new().with_clock(physical_now).build();
        let _batch = BatchClock::begin();
        let stamps: Vec<_> = (0..1000).map(|_| hlc.new_timestamp()).collect();
        assert!(stamps.windows(2).all(|w| w[0] < w[1]));
    }
}
