//! Where forwarded `block` messages wait for room in their destination's queue: one
//! overflow per destination, bounded per destination and, through a shared
//! [`OverflowBudget`], across all of them (a router's transports share one).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use weft_proto::core::{Priority, Reliability};

/// Memory that forwarded messages waiting for their destinations may hold, across every
/// transport sharing it (`transport.link.tx.overflow_budget`): many slow destinations
/// cannot add up to more.
#[derive(Debug)]
pub struct OverflowBudget {
    used: AtomicUsize,
    max: usize,
}

impl OverflowBudget {
    /// A budget of `max` bytes.
    pub const fn new(max: usize) -> Self {
        Self {
            used: AtomicUsize::new(0),
            max,
        }
    }

    /// Bytes held now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Takes `n` bytes if they fit.
    fn take(&self, n: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(n).filter(|total| *total <= self.max)
            })
            .is_ok()
    }

    fn give_back(&self, n: usize) {
        self.used.fetch_sub(n, Ordering::AcqRel);
    }
}

/// A forwarded message waiting for room in its destination's queue, encoded.
pub(super) struct Waiting {
    pub(super) encoded: Vec<u8>,
    pub(super) priority: Priority,
    pub(super) reliability: Reliability,
    /// When it began to wait.
    pub(super) since: Instant,
}

/// Why a forwarded message could not wait for room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// This destination holds its most already.
    Destination,
    /// The budget shared with the other destinations is spent.
    Budget,
}

/// One destination's waiting messages, oldest first, with the bytes they hold counted
/// here and in the shared budget.
pub(super) struct Overflow {
    waiting: VecDeque<Waiting>,
    bytes: usize,
    /// Bytes this destination may hold.
    max: usize,
    budget: Option<Arc<OverflowBudget>>,
}

impl Overflow {
    /// An empty overflow holding at most `max` bytes, and what `budget` has left.
    pub(super) fn new(max: usize, budget: Option<Arc<OverflowBudget>>) -> Self {
        Self {
            waiting: VecDeque::new(),
            bytes: 0,
            max,
            budget,
        }
    }

    /// Whether nothing waits.
    pub(super) fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// How many messages wait.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Bytes waiting.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// When the oldest waiting message came.
    pub(super) fn oldest(&self) -> Option<Instant> {
        self.waiting.front().map(|w| w.since)
    }

    /// Adds a message behind the others, if both bounds allow it.
    pub(super) fn push(&mut self, w: Waiting) -> Result<(), Full> {
        let n = w.encoded.len();
        if self.bytes + n > self.max {
            return Err(Full::Destination);
        }
        if self.budget.as_ref().is_some_and(|b| !b.take(n)) {
            return Err(Full::Budget);
        }
        self.bytes += n;
        self.waiting.push_back(w);
        Ok(())
    }

    /// Takes the oldest message out (its bytes are released).
    pub(super) fn pop(&mut self) -> Option<Waiting> {
        let w = self.waiting.pop_front()?;
        self.release(w.encoded.len());
        Some(w)
    }

    /// Puts back a message just taken out, in front (it found no room after all).
    pub(super) fn unpop(&mut self, w: Waiting) {
        let n = w.encoded.len();
        // Its bytes were released: taken again, even past the budget (they were held a
        // moment ago), so that the accounting stays exact.
        if let Some(b) = &self.budget {
            b.used.fetch_add(n, Ordering::AcqRel);
        }
        self.bytes += n;
        self.waiting.push_front(w);
    }

    /// Drops every waiting message; returns how many there were.
    pub(super) fn clear(&mut self) -> usize {
        let count = self.waiting.len();
        self.waiting.clear();
        self.release(self.bytes);
        count
    }

    fn release(&mut self, n: usize) {
        self.bytes -= n;
        if let Some(b) = &self.budget {
            b.give_back(n);
        }
    }
}

impl Drop for Overflow {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(len: usize) -> Waiting {
        Waiting {
            encoded: vec![0; len],
            priority: Priority::Data,
            reliability: Reliability::Reliable,
            since: Instant::now(),
        }
    }

    #[test]
    fn a_destination_holds_at_most_its_own_bound() {
        let mut o = Overflow::new(100, None);
        assert_eq!(o.push(waiting(60)), Ok(()));
        assert_eq!(o.push(waiting(41)), Err(Full::Destination));
        assert_eq!(o.push(waiting(40)), Ok(()));
        assert_eq!(o.len(), 2);
    }

    #[test]
    fn destinations_together_hold_at_most_the_budget() {
        let budget = Arc::new(OverflowBudget::new(100));
        let mut a = Overflow::new(80, Some(budget.clone()));
        let mut b = Overflow::new(80, Some(budget.clone()));
        assert_eq!(a.push(waiting(70)), Ok(()));
        assert_eq!(b.push(waiting(31)), Err(Full::Budget));
        assert_eq!(b.push(waiting(30)), Ok(()));
        assert_eq!(budget.used(), 100);
        // What one gives back, another can take.
        assert_eq!(a.pop().map(|w| w.encoded.len()), Some(70));
        assert_eq!(budget.used(), 30);
        assert_eq!(b.push(waiting(50)), Ok(()));
        assert_eq!(budget.used(), 80);
    }

    #[test]
    fn clearing_and_dropping_give_everything_back() {
        let budget = Arc::new(OverflowBudget::new(1000));
        let mut a = Overflow::new(1000, Some(budget.clone()));
        for _ in 0..5 {
            a.push(waiting(10)).unwrap();
        }
        let w = a.pop().unwrap();
        a.unpop(w);
        assert_eq!(budget.used(), 50);
        assert_eq!(a.clear(), 5);
        assert_eq!(budget.used(), 0);
        a.push(waiting(10)).unwrap();
        drop(a);
        assert_eq!(budget.used(), 0);
    }
}
