//! The session's deadlines (a `get` or a liveliness `get` that times out), kept in one
//! queue and served by one thread per session, instead of a sleeping thread per request.
//!
//! [`DeadlineQueue`] is the pure part (time passed in); [`Timers`] adds the lock, the
//! condition variable and the thread, which sleeps while nothing is pending and ends
//! when the session closes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Instant;

use super::Inner;

/// What happens at a deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Timeout {
    /// A `get` is finished, whatever is still missing.
    Get(u32),
    /// A liveliness `get` is finished.
    LivelinessGet(u32),
}

/// Deadlines in time order.
#[derive(Debug, Default)]
pub(crate) struct DeadlineQueue {
    heap: BinaryHeap<Reverse<(Instant, Timeout)>>,
}

impl DeadlineQueue {
    /// Adds `what` for `at`.
    pub(crate) fn push(&mut self, at: Instant, what: Timeout) {
        self.heap.push(Reverse((at, what)));
    }

    /// The earliest deadline, if any.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    /// Removes and returns what is due at `now`, earliest first.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Vec<Timeout> {
        let mut due = Vec::new();
        while let Some(Reverse((at, what))) = self.heap.peek() {
            if *at > now {
                break;
            }
            due.push(*what);
            self.heap.pop();
        }
        due
    }
}

/// The session's deadlines and their thread. Dropped (or closed) with the session: the
/// thread ends at once.
#[derive(Default)]
pub(crate) struct Timers {
    shared: Arc<Shared>,
}

/// What the session and its timer thread share.
#[derive(Default)]
struct Shared {
    state: Mutex<TimersState>,
    changed: Condvar,
}

#[derive(Default)]
struct TimersState {
    deadlines: DeadlineQueue,
    /// The thread was started.
    started: bool,
    /// The session closed: the thread ends.
    closed: bool,
}

impl Timers {
    /// Schedules `what` at `at`, starting the session's timer thread on first use.
    pub(crate) fn schedule(&self, inner: &Arc<Inner>, at: Instant, what: Timeout) {
        let mut st = self.shared.lock();
        st.deadlines.push(at, what);
        if !st.started {
            let (shared, weak) = (self.shared.clone(), Arc::downgrade(inner));
            let started = std::thread::Builder::new()
                .name("weft-timers".into())
                .spawn(move || run(&shared, &weak));
            st.started = started.is_ok();
            if let Err(e) = started {
                tracing::warn!(
                    "cannot start the timer thread ({e}): timeouts wait for the next get"
                );
            }
        }
        drop(st);
        self.shared.changed.notify_one();
    }

    /// Ends the timer thread (the session closes): what has not come due never fires.
    pub(crate) fn close(&self) {
        self.shared.lock().closed = true;
        self.shared.changed.notify_one();
    }
}

impl Drop for Timers {
    fn drop(&mut self) {
        self.close();
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, TimersState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The timer thread: sleeps until the next deadline (or until one is added), fires what
/// is due; ends when its session closes or goes. It holds the session only while firing.
fn run(shared: &Shared, weak: &Weak<Inner>) {
    let mut st = shared.lock();
    loop {
        if st.closed {
            return;
        }
        let now = Instant::now();
        let due = st.deadlines.pop_due(now);
        if due.is_empty() {
            st = match st.deadlines.next() {
                None => shared.changed.wait(st).unwrap_or_else(|e| e.into_inner()),
                Some(at) => {
                    shared
                        .changed
                        .wait_timeout(st, at.saturating_duration_since(now))
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
            continue;
        }
        drop(st);
        let Some(inner) = weak.upgrade() else { return };
        for what in due {
            match what {
                Timeout::Get(qid) => inner.finish_get(qid),
                Timeout::LivelinessGet(id) => {
                    inner.finish_liveliness_get(id);
                }
            }
        }
        drop(inner);
        st = shared.lock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn deadlines_come_due_in_time_order() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut q = DeadlineQueue::default();
        assert_eq!(q.next(), None);
        q.push(t0 + ms(30), Timeout::Get(3));
        q.push(t0 + ms(10), Timeout::Get(1));
        q.push(t0 + ms(20), Timeout::LivelinessGet(2));
        assert_eq!(q.next(), Some(t0 + ms(10)));
        assert!(q.pop_due(t0 + ms(5)).is_empty());
        assert_eq!(
            q.pop_due(t0 + ms(20)),
            [Timeout::Get(1), Timeout::LivelinessGet(2)]
        );
        assert_eq!(q.next(), Some(t0 + ms(30)));
        assert_eq!(q.pop_due(t0 + ms(100)), [Timeout::Get(3)]);
        assert_eq!(q.next(), None);
    }
}
