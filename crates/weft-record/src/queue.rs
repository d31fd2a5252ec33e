//! The queue between a recording's subscriber and its writing thread, bounded in items and
//! in bytes: a full queue makes the subscriber wait (nothing is dropped), so that the link
//! is read no faster than the disk takes the data, and memory stays bounded whatever the
//! samples' sizes.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A bounded queue of items with their sizes, for one producer side and one consumer.
#[derive(Debug)]
pub struct Queue<T> {
    state: Mutex<State<T>>,
    /// Signalled when an item is added or the queue is closed.
    filled: Condvar,
    /// Signalled when room is made or the queue is closed.
    emptied: Condvar,
    max_items: usize,
    max_bytes: usize,
}

#[derive(Debug)]
struct State<T> {
    items: VecDeque<(T, usize)>,
    bytes: usize,
    closed: bool,
    /// Whether the consumer waits for an item (a push wakes it only then: waking costs a
    /// system call, too much for every sample at a million a second).
    consumer_waiting: bool,
    /// Producers waiting for room.
    producers_waiting: usize,
}

/// What `push` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Queued at once.
    Queued,
    /// Queued after waiting for room.
    Waited,
    /// The queue is closed: the item was dropped.
    Closed,
    /// The queue was full (a push that does not wait): the item was dropped.
    Full,
}

impl<T> Queue<T> {
    /// A queue holding at most `max_items`, and at most `max_bytes` unless it holds a
    /// single item (one item larger than the bound still passes).
    pub fn new(max_items: usize, max_bytes: usize) -> Self {
        Self {
            state: Mutex::new(State {
                items: VecDeque::new(),
                bytes: 0,
                closed: false,
                consumer_waiting: false,
                producers_waiting: 0,
            }),
            filled: Condvar::new(),
            emptied: Condvar::new(),
            max_items: max_items.max(1),
            max_bytes,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `item` (of `bytes`), waiting for room while the queue is full and open.
    pub fn push(&self, item: T, bytes: usize) -> Pushed {
        self.push_or(item, bytes, true)
    }

    /// Adds `item` (of `bytes`) if there is room; drops it otherwise (`Full`): never waits.
    pub fn try_push(&self, item: T, bytes: usize) -> Pushed {
        self.push_or(item, bytes, false)
    }

    fn push_or(&self, item: T, bytes: usize, wait: bool) -> Pushed {
        let mut state = self.lock();
        let mut waited = false;
        while !state.closed
            && !state.items.is_empty()
            && (state.items.len() >= self.max_items || state.bytes + bytes > self.max_bytes)
        {
            if !wait {
                return Pushed::Full;
            }
            waited = true;
            state.producers_waiting += 1;
            state = self.emptied.wait(state).unwrap_or_else(|e| e.into_inner());
            state.producers_waiting -= 1;
        }
        if state.closed {
            return Pushed::Closed;
        }
        state.items.push_back((item, bytes));
        state.bytes += bytes;
        let wake = state.consumer_waiting;
        drop(state);
        if wake {
            self.filled.notify_one();
        }
        if waited {
            Pushed::Waited
        } else {
            Pushed::Queued
        }
    }

    /// Moves every queued item into `out` (in order), waiting until `deadline` for one if
    /// there is none; returns `false` once the queue is closed and empty.
    pub fn pop_all(&self, out: &mut Vec<T>, deadline: Instant) -> bool {
        let mut state = self.lock();
        while state.items.is_empty() && !state.closed {
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            let wait = deadline - now;
            state.consumer_waiting = true;
            state = self
                .filled
                .wait_timeout(state, wait.min(Duration::from_secs(1)))
                .unwrap_or_else(|e| e.into_inner())
                .0;
            state.consumer_waiting = false;
        }
        let open = !(state.closed && state.items.is_empty());
        out.extend(state.items.drain(..).map(|(item, _)| item));
        state.bytes = 0;
        let wake = state.producers_waiting > 0;
        drop(state);
        if wake {
            self.emptied.notify_all();
        }
        open
    }

    /// Closes the queue: pushes return at once (dropping their item), what is queued stays
    /// for `pop_all`.
    pub fn close(&self) {
        self.lock().closed = true;
        self.filled.notify_all();
        self.emptied.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_full_queue_holds_the_producer_until_the_consumer_takes_its_items() {
        let q = Arc::new(Queue::new(2, 1_000));
        assert_eq!(q.push(1, 10), Pushed::Queued);
        assert_eq!(q.push(2, 10), Pushed::Queued);
        let producer = {
            let q = q.clone();
            std::thread::spawn(move || q.push(3, 10))
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while q.lock().producers_waiting == 0 {
            assert!(Instant::now() < deadline, "the producer never waited");
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut out = Vec::new();
        while out.len() < 3 {
            assert!(q.pop_all(&mut out, deadline));
            assert!(Instant::now() < deadline, "the third item never came");
        }
        assert_eq!(out, vec![1, 2, 3]);
        assert_eq!(producer.join().unwrap(), Pushed::Waited);
    }

    #[test]
    fn bytes_bound_the_queue_but_one_large_item_passes() {
        let q = Queue::new(100, 100);
        assert_eq!(q.push("big", 1_000), Pushed::Queued);
        q.close();
        assert_eq!(q.push("late", 1), Pushed::Closed);
        let full = Queue::new(1, 100);
        assert_eq!(full.try_push(1, 10), Pushed::Queued);
        assert_eq!(
            full.try_push(2, 10),
            Pushed::Full,
            "no room: dropped, not waited for"
        );
        let mut out = Vec::new();
        assert!(q.pop_all(&mut out, Instant::now()));
        assert_eq!(out, vec!["big"]);
        assert!(!q.pop_all(&mut out, Instant::now()));
    }
}
