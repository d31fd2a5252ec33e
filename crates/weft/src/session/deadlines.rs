//! Sessions' deadlines (a `get` or a liveliness `get` that times out), kept in one queue
//! and served by one thread for the whole process, instead of a sleeping thread per
//! request or per session.
//!
//! [`DeadlineQueue`] is the pure part (time passed in); [`schedule`] adds to the
//! process's queue, whose thread starts on first use and sleeps while nothing is
//! pending. A deadline holds its session weakly: what comes due after the session closed
//! (or went) does not fire.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::Instant;

use super::Inner;
use crate::transport::Caller;

/// What happens at a deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Timeout {
    /// A `get` is finished, whatever is still missing.
    Get(u32),
    /// A liveliness `get` is finished.
    LivelinessGet(u32),
}

/// One deadline: when, in what order among those at the same time, and what.
#[derive(Debug)]
struct Deadline<T> {
    at: Instant,
    seq: u64,
    what: T,
}

impl<T> PartialEq for Deadline<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl<T> Eq for Deadline<T> {}

impl<T> PartialOrd for Deadline<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Deadline<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// Deadlines in time order (those at the same time in the order they were added).
#[derive(Debug)]
pub(crate) struct DeadlineQueue<T> {
    heap: BinaryHeap<Reverse<Deadline<T>>>,
    seq: u64,
}

impl<T> Default for DeadlineQueue<T> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<T> DeadlineQueue<T> {
    /// Adds `what` for `at`.
    pub(crate) fn push(&mut self, at: Instant, what: T) {
        self.seq += 1;
        let seq = self.seq;
        self.heap.push(Reverse(Deadline { at, seq, what }));
    }

    /// The earliest deadline, if any.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse(d)| d.at)
    }

    /// Removes and returns what is due at `now`, earliest first.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Vec<T> {
        let mut due = Vec::new();
        while self.heap.peek().is_some_and(|Reverse(d)| d.at <= now) {
            if let Some(Reverse(d)) = self.heap.pop() {
                due.push(d.what);
            }
        }
        due
    }
}

/// The process's deadlines, shared with their thread.
#[derive(Default)]
struct Shared {
    state: Mutex<TimersState>,
    changed: Condvar,
}

#[derive(Default)]
struct TimersState {
    deadlines: DeadlineQueue<(Weak<Inner>, Timeout)>,
    /// The thread was started.
    started: bool,
}

/// The process's deadlines.
fn shared() -> &'static Arc<Shared> {
    static SHARED: OnceLock<Arc<Shared>> = OnceLock::new();
    SHARED.get_or_init(Arc::default)
}

/// Schedules `what` for `inner` at `at`, starting the timer thread on first use.
pub(crate) fn schedule(inner: &Arc<Inner>, at: Instant, what: Timeout) {
    let shared = shared();
    let mut st = shared.lock();
    st.deadlines.push(at, (Arc::downgrade(inner), what));
    if !st.started {
        let thread = shared.clone();
        let started = std::thread::Builder::new()
            .name("weft-timers".into())
            .spawn(move || run(&thread));
        st.started = started.is_ok();
        if let Err(e) = started {
            tracing::warn!("cannot start the timer thread ({e}): timeouts wait for the next get");
        }
    }
    drop(st);
    shared.changed.notify_one();
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, TimersState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The timer thread: sleeps until the next deadline (or until one is added), fires what
/// is due for the sessions still open. It holds a session only while firing.
fn run(shared: &Shared) {
    let mut st = shared.lock();
    loop {
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
        for (session, what) in due {
            let Some(inner) = session.upgrade().filter(|i| !i.is_closing()) else {
                continue;
            };
            match what {
                Timeout::Get(qid) => inner.finish_get(qid, &Caller::App),
                Timeout::LivelinessGet(id) => {
                    inner.finish_liveliness_get(id);
                }
            }
        }
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
