//! The queues behind channel handlers: FIFO (the pusher waits for room) or ring (the
//! oldest item is dropped for the newest). Pure Rust: pushing never needs the GIL.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::ThreadId;
use std::time::Duration;

/// What a handler receives.
pub(crate) enum Item {
    /// A subscriber's sample.
    Sample(weft::Sample),
    /// A queryable's query.
    Query(weft::Query),
    /// A reply to a `get`.
    Reply(weft::Reply),
    /// A publisher's or querier's new matching status.
    Matching(bool),
    /// A node that answered a scout.
    Hello(weft::Hello),
}

/// What waiting for an item gave.
pub(crate) enum Recv {
    /// An item.
    Item(Item),
    /// Nothing yet.
    Empty,
    /// Nothing, and nothing more will come.
    Closed,
}

/// A bounded queue of items.
pub(crate) struct Queue {
    state: Mutex<State>,
    readable: Condvar,
    writable: Condvar,
    capacity: usize,
    ring: bool,
    /// The thread reading the queue, when one thread does (a callback's dispatcher):
    /// its own pushes never wait, as nobody else would make room.
    reader: OnceLock<ThreadId>,
}

struct State {
    items: VecDeque<Item>,
    closed: bool,
    /// Readers waiting on `readable`, writers on `writable`: a condition variable is
    /// notified only when somebody waits on it (a notification is a system call).
    readers_waiting: usize,
    writers_waiting: usize,
}

impl Queue {
    /// A FIFO queue of `capacity` items: a push waits while it is full.
    pub(crate) fn fifo(capacity: usize) -> Self {
        Self::new(capacity, false)
    }

    /// A ring of `capacity` items: a push onto a full ring drops the oldest item.
    pub(crate) fn ring(capacity: usize) -> Self {
        Self::new(capacity, true)
    }

    fn new(capacity: usize, ring: bool) -> Self {
        Self {
            state: Mutex::new(State {
                items: VecDeque::with_capacity(capacity.clamp(1, 1024)),
                closed: false,
                readers_waiting: 0,
                writers_waiting: 0,
            }),
            readable: Condvar::new(),
            writable: Condvar::new(),
            capacity: capacity.max(1),
            ring,
            reader: OnceLock::new(),
        }
    }

    /// Records the calling thread as the queue's only reader.
    pub(crate) fn set_reader(&self) {
        let _ = self.reader.set(std::thread::current().id());
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `item` (dropped if the queue is closed). A full ring drops its oldest item;
    /// a full FIFO queue waits for the reader.
    pub(crate) fn push(&self, item: Item) {
        let mut st = self.lock();
        if !st.closed && st.items.len() >= self.capacity {
            if self.ring {
                st.items.pop_front();
            } else if self.reader.get() != Some(&std::thread::current().id()) {
                // The reader may need the GIL, which this thread may hold.
                drop(st);
                return crate::gil::blocking(move || self.push_when_room(item));
            }
        }
        if st.closed {
            return;
        }
        st.items.push_back(item);
        self.wake_reader(st);
    }

    fn push_when_room(&self, item: Item) {
        let mut st = self.lock();
        while !st.closed && st.items.len() >= self.capacity {
            st.writers_waiting += 1;
            st = self.writable.wait(st).unwrap_or_else(|e| e.into_inner());
            st.writers_waiting -= 1;
        }
        if st.closed {
            return;
        }
        st.items.push_back(item);
        self.wake_reader(st);
    }

    /// The next item, waiting at most `timeout` for one.
    pub(crate) fn recv_timeout(&self, timeout: Duration) -> Recv {
        let mut st = self.lock();
        if st.items.is_empty() && !st.closed {
            st.readers_waiting += 1;
            st = self
                .readable
                .wait_timeout(st, timeout)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            st.readers_waiting -= 1;
        }
        self.take(st)
    }

    /// The next item, without waiting.
    pub(crate) fn try_recv(&self) -> Recv {
        let st = self.lock();
        self.take(st)
    }

    /// Moves up to `max` of the items queued to the end of `out`, without waiting;
    /// returns how many.
    pub(crate) fn drain_into(&self, out: &mut Vec<Item>, max: usize) -> usize {
        let mut st = self.lock();
        let n = st.items.len().min(max);
        out.extend(st.items.drain(..n));
        if n > 0 {
            self.wake_writers(st);
        }
        n
    }

    fn take(&self, mut st: MutexGuard<'_, State>) -> Recv {
        match st.items.pop_front() {
            Some(item) => {
                self.wake_writers(st);
                Recv::Item(item)
            }
            None if st.closed => Recv::Closed,
            None => Recv::Empty,
        }
    }

    /// Releases `st`, then wakes a reader if one waits.
    fn wake_reader(&self, st: MutexGuard<'_, State>) {
        let waiting = st.readers_waiting > 0;
        drop(st);
        if waiting {
            self.readable.notify_one();
        }
    }

    /// Releases `st`, then wakes the writers waiting for room, if any (all of them:
    /// room may have been made for several).
    fn wake_writers(&self, st: MutexGuard<'_, State>) {
        let waiting = st.writers_waiting > 0;
        drop(st);
        if waiting {
            self.writable.notify_all();
        }
    }

    /// Closes the queue: pushes are dropped (and waiting pushers released); the items
    /// already queued can still be received.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.readable.notify_all();
        self.writable.notify_all();
    }
}
