//! The receiving end of a subscriber's channel ([`Session::declare_subscriber_channel`]):
//! a bounded FIFO whose reader, while items come close together, looks for the next one
//! instead of going to sleep.
//!
//! Why: on a virtual machine, the CPU of a thread that sleeps halts, and waking the thread
//! then costs some 10 µs; a request/response round trip on loopback wakes three sleeping
//! threads, and those wake-ups are most of it. While the gaps between items stay
//! under [`MAX_LOOK`], the reader looks (yielding its core between looks) for up to twice
//! the last gap; items that come further apart bring the look to nothing, so a quiet or
//! slow stream costs no CPU. [`Look`] is that rule, without clocks.
//!
//! [`Session::declare_subscriber_channel`]: crate::Session::declare_subscriber_channel

use std::cell::Cell;
use std::sync::mpsc::{self, RecvError, RecvTimeoutError, SyncSender, TryRecvError};
use std::time::{Duration, Instant};

/// The longest a reader looks for an item before it sleeps: gaps longer than this are
/// slept through. A loopback round trip through weft is 40 to 100 µs when its threads
/// sleep: a shorter limit would never be reached by a ping-pong.
pub const MAX_LOOK: Duration = Duration::from_micros(100);

/// A bounded channel of `capacity` items (at least 1): the sender is std's
/// [`SyncSender`], the receiver a [`FifoReceiver`].
pub(crate) fn fifo_channel<T>(capacity: usize) -> (SyncSender<T>, FifoReceiver<T>) {
    let (tx, rx) = mpsc::sync_channel(capacity.max(1));
    (
        tx,
        FifoReceiver {
            rx,
            look: Cell::new(Look::default()),
        },
    )
}

/// How long a reader looks for the next item before it sleeps, learnt from the gaps
/// between items (nanoseconds; no clock of its own). [`FifoReceiver`] follows it, and so
/// does any other queue whose reader should look the same way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Look {
    budget_ns: u64,
}

impl Look {
    /// A look of `budget_ns` nanoseconds (as kept in an atomic by a queue shared by
    /// several readers), at most [`MAX_LOOK`].
    pub fn from_nanos(budget_ns: u64) -> Self {
        Self {
            budget_ns: budget_ns.min(max_look_ns()),
        }
    }

    /// How long to look before sleeping, in nanoseconds.
    pub fn nanos(self) -> u64 {
        self.budget_ns
    }

    /// How long to look before sleeping.
    pub fn budget(self) -> Duration {
        Duration::from_nanos(self.budget_ns)
    }

    /// Looking found an item: look as long again, twice (up to [`MAX_LOOK`]).
    pub fn found(self) -> Self {
        Self {
            budget_ns: (self.budget_ns * 2).min(max_look_ns()),
        }
    }

    /// Looking for the whole budget found nothing: look half as long next time.
    pub fn missed(self) -> Self {
        Self {
            budget_ns: self.budget_ns / 2,
        }
    }

    /// An item came `gap` after the reader began to wait (looking, then sleeping): a gap
    /// under [`MAX_LOOK`] would have been found by looking, so the budget grows to twice
    /// it (up to [`MAX_LOOK`]).
    pub fn slept(self, gap: Duration) -> Self {
        let gap = u64::try_from(gap.as_nanos()).unwrap_or(u64::MAX);
        if gap >= max_look_ns() {
            return self;
        }
        Self {
            budget_ns: self.budget_ns.max(gap.saturating_mul(2).min(max_look_ns())),
        }
    }
}

/// [`MAX_LOOK`] in nanoseconds.
fn max_look_ns() -> u64 {
    MAX_LOOK.as_nanos() as u64
}

/// The receiving end of a bounded FIFO channel, with the methods of std's
/// [`mpsc::Receiver`]. Waiting (`recv`, `recv_timeout`, `iter`) looks for the next item
/// (yielding its core between looks) before it sleeps, for up to twice the last gap
/// between items while gaps stay under 100 µs, and not at all once they are longer. Like
/// std's receiver, it can move to another thread but not be shared.
pub struct FifoReceiver<T> {
    rx: mpsc::Receiver<T>,
    look: Cell<Look>,
}

impl<T> FifoReceiver<T> {
    /// The next item, without waiting.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.rx.try_recv()
    }

    /// The next item, waiting for it; `Err` once every sender is gone and nothing is left.
    pub fn recv(&self) -> Result<T, RecvError> {
        let started = Instant::now();
        if let Some(item) = self.look_for_item(MAX_LOOK)? {
            return Ok(item);
        }
        let item = self.rx.recv()?;
        self.learn_gap(started);
        Ok(item)
    }

    /// The next item, waiting at most `timeout` for it.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        let started = Instant::now();
        let found = self
            .look_for_item(timeout)
            .map_err(|_| RecvTimeoutError::Disconnected)?;
        if let Some(item) = found {
            return Ok(item);
        }
        let left = timeout.saturating_sub(started.elapsed());
        let item = self.rx.recv_timeout(left)?;
        self.learn_gap(started);
        Ok(item)
    }

    /// The items, waiting for each, until every sender is gone.
    pub fn iter(&self) -> FifoIter<'_, T> {
        FifoIter { rx: self }
    }

    /// The items already queued, without waiting.
    pub fn try_iter(&self) -> mpsc::TryIter<'_, T> {
        self.rx.try_iter()
    }

    /// Looks for an item for the current budget, at most `most` (at once if one is
    /// queued); `Ok(None)` when none came, `Err` when every sender is gone.
    fn look_for_item(&self, most: Duration) -> Result<Option<T>, RecvError> {
        match self.rx.try_recv() {
            Ok(item) => return Ok(Some(item)),
            Err(TryRecvError::Disconnected) => return Err(RecvError),
            Err(TryRecvError::Empty) => {}
        }
        let look = self.look.get();
        let budget = look.budget().min(most);
        if budget.is_zero() {
            return Ok(None);
        }
        let start = Instant::now();
        loop {
            std::thread::yield_now();
            match self.rx.try_recv() {
                Ok(item) => {
                    self.look.set(look.found());
                    return Ok(Some(item));
                }
                Err(TryRecvError::Disconnected) => return Err(RecvError),
                Err(TryRecvError::Empty) if start.elapsed() >= budget => {
                    // A look cut short by the caller's timeout teaches nothing.
                    if budget == look.budget() {
                        self.look.set(look.missed());
                    }
                    return Ok(None);
                }
                Err(TryRecvError::Empty) => {}
            }
        }
    }

    /// An item came after sleeping: how long since the wait began teaches the budget.
    fn learn_gap(&self, started: Instant) {
        self.look.set(self.look.get().slept(started.elapsed()));
    }
}

/// The items of a [`FifoReceiver`], waiting for each, until every sender is gone.
pub struct FifoIter<'a, T> {
    rx: &'a FifoReceiver<T>,
}

impl<T> Iterator for FifoIter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.rx.recv().ok()
    }
}

impl<'a, T> IntoIterator for &'a FifoReceiver<T> {
    type Item = T;
    type IntoIter = FifoIter<'a, T>;

    fn into_iter(self) -> FifoIter<'a, T> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);

    #[test]
    fn a_reader_sleeping_through_short_gaps_learns_to_look_twice_as_long() {
        let look = Look::default().slept(30 * US);
        assert_eq!(look.budget(), 60 * US);
        // A shorter gap later does not shrink it; a longer one grows it, up to the limit.
        assert_eq!(look.slept(10 * US).budget(), 60 * US);
        assert_eq!(look.slept(80 * US).budget(), MAX_LOOK);
    }

    #[test]
    fn gaps_past_the_limit_are_slept_through_and_teach_nothing() {
        assert_eq!(Look::default().slept(MAX_LOOK).budget(), Duration::ZERO);
        assert_eq!(
            Look::default().slept(10 * MAX_LOOK).budget(),
            Duration::ZERO
        );
    }

    #[test]
    fn looking_in_vain_halves_the_budget_down_to_nothing() {
        let mut look = Look::default().slept(MAX_LOOK / 2);
        assert_eq!(look.budget(), MAX_LOOK);
        let mut misses = 0;
        while !look.budget().is_zero() {
            look = look.missed();
            misses += 1;
        }
        // 100 µs halved down to 0 ns: about 17 looks in vain.
        assert!((15..=18).contains(&misses), "{misses}");
    }

    #[test]
    fn a_look_kept_in_nanoseconds_comes_back_the_same_and_never_past_the_limit() {
        let look = Look::default().slept(30 * US);
        assert_eq!(Look::from_nanos(look.nanos()), look);
        assert_eq!(Look::from_nanos(u64::MAX).budget(), MAX_LOOK);
    }

    #[test]
    fn finding_doubles_the_budget_up_to_the_limit() {
        let look = Look::default().slept(20 * US);
        assert_eq!(look.found().budget(), 80 * US);
        assert_eq!(look.found().found().budget(), MAX_LOOK);
    }

    #[test]
    fn items_are_received_in_order_and_the_end_is_reported() {
        let (tx, rx) = fifo_channel(4);
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        assert_eq!(rx.recv(), Ok(1));
        assert_eq!(rx.recv_timeout(Duration::from_secs(1)), Ok(2));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(1)),
            Err(RecvTimeoutError::Timeout)
        );
        tx.send(3).unwrap();
        drop(tx);
        assert_eq!(rx.iter().collect::<Vec<_>>(), vec![3]);
        assert_eq!(rx.recv(), Err(RecvError));
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(1)),
            Err(RecvTimeoutError::Disconnected)
        );
    }

    #[test]
    fn an_item_sent_while_the_reader_looks_is_received() {
        let (tx, rx) = fifo_channel(4);
        rx.look.set(Look::default().slept(MAX_LOOK / 2));
        let sender = std::thread::spawn(move || {
            tx.send(7).unwrap();
            tx
        });
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(7));
        drop(sender.join().unwrap());
    }
}
