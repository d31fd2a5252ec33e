//! The session's deadlines (a `get` or a liveliness `get` that times out), kept in one
//! queue and served by one thread per session, instead of a sleeping thread per request.
//!
//! [`DeadlineQueue`] is the pure part (time passed in); [`Timers`] adds the lock, the
//! condition variable and the thread.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

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

/// The queue, shared with the thread that serves it.
#[derive(Default)]
pub(crate) struct Timers {
    queue: Mutex<(DeadlineQueue, bool)>,
    changed: Condvar,
}

/// Longest sleep of the timer thread, so that it notices its session has gone.
const IDLE_CHECK: Duration = Duration::from_secs(1);

impl Timers {
    /// Schedules `what` at `at`, starting the session's timer thread on first use.
    pub(crate) fn schedule(&self, inner: &Arc<Inner>, at: Instant, what: Timeout) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.0.push(at, what);
        if !q.1 {
            let weak = Arc::downgrade(inner);
            let started = std::thread::Builder::new()
                .name("weft-timers".into())
                .spawn(move || run(&weak));
            q.1 = started.is_ok();
            if let Err(e) = started {
                tracing::warn!(
                    "cannot start the timer thread ({e}): timeouts wait for the next get"
                );
            }
        }
        drop(q);
        self.changed.notify_one();
    }
}

/// The timer thread: fires what is due, sleeps until the next deadline; ends with its
/// session.
fn run(weak: &Weak<Inner>) {
    loop {
        let Some(inner) = weak.upgrade() else { return };
        let due = {
            let timers = &inner.timers;
            let mut q = timers.queue.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let due = q.0.pop_due(now);
            if due.is_empty() {
                let wait =
                    q.0.next()
                        .map_or(IDLE_CHECK, |at| at.saturating_duration_since(now))
                        .min(IDLE_CHECK);
                let _ = timers
                    .changed
                    .wait_timeout(q, wait)
                    .unwrap_or_else(|e| e.into_inner());
            }
            due
        };
        for what in due {
            match what {
                Timeout::Get(qid) => inner.finish_get(qid),
                Timeout::LivelinessGet(id) => {
                    inner.finish_liveliness_get(id);
                }
            }
        }
        if inner.is_closing() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
