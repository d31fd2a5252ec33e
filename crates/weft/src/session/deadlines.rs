//! Sessions' deadlines (a `get` or a liveliness `get` that times out, a periodic task such
//! as a multicast group's next Join), kept in one queue
//! for the whole process and fired by the links loop (`session/links`), which waits for
//! the earliest of them in its epoll as for its other timers: no thread of their own,
//! none per request or per session.
//!
//! [`DeadlineQueue`] is the pure part (time passed in), including what the loop serving
//! it waits for; [`Deadlines`] is the process's queue as the links loop serves it (a
//! session adds to it through the loop, `Inner::schedule_deadline`). A deadline holds
//! its session weakly: what comes due after the session closed (or went) does not fire,
//! and a session that closes takes its deadlines out of the queue ([`Deadlines::forget`]).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;

use super::Inner;
use crate::transport::Caller;

/// What happens at a deadline.
#[derive(Debug, Clone)]
pub(crate) enum Timeout {
    /// A `get` is finished, whatever is still missing.
    Get(u32),
    /// A liveliness `get` is finished.
    LivelinessGet(u32),
    /// A periodic task of the session is due (a multicast group's next Join), held
    /// weakly: one that is gone fires no more.
    Periodic(Weak<dyn Periodic>),
}

/// Work done at a time the links loop keeps: a multicast group's Joins. It runs on the
/// links loop, so it never waits and runs no application code.
pub(crate) trait Periodic: Send + Sync {
    /// Does what is due at `now`; returns when it is next due, or `None` once it is over.
    fn run_due(&self, now: Instant) -> Option<Instant>;
}

impl std::fmt::Debug for dyn Periodic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Periodic")
    }
}

impl PartialEq for Timeout {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Get(a), Self::Get(b)) | (Self::LivelinessGet(a), Self::LivelinessGet(b)) => {
                a == b
            }
            (Self::Periodic(a), Self::Periodic(b)) => std::ptr::addr_eq(a.as_ptr(), b.as_ptr()),
            _ => false,
        }
    }
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

/// Deadlines in time order (those at the same time in the order they were added), and
/// the one the loop serving them waits for: it asks for the earliest ([`Self::arm`])
/// before it waits, and a deadline added before that one must wake it ([`Self::push`]
/// says so); any other is found when it next looks, by then at the latest.
#[derive(Debug)]
pub(crate) struct DeadlineQueue<T> {
    heap: BinaryHeap<Reverse<Deadline<T>>>,
    seq: u64,
    /// What the serving loop waits for (the earliest when it last looked); `None` while
    /// it waits for none.
    armed: Option<Instant>,
    /// The length at which the queue is next swept of what no longer needs its deadline.
    sweep_at: usize,
}

/// The shortest queue that is swept of deadlines no longer needed (a get that finished
/// before its timeout): a sweep at every doubling keeps the queue within twice what is
/// still pending, for a constant cost per deadline added.
const SWEEP_MIN: usize = 1024;

impl<T> Default for DeadlineQueue<T> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            seq: 0,
            armed: None,
            sweep_at: SWEEP_MIN,
        }
    }
}

impl<T> DeadlineQueue<T> {
    /// Adds `what` for `at`: whether the serving loop is to be woken (it waits for a
    /// later deadline, or none; it is taken to wait for this one from now on).
    pub(crate) fn push(&mut self, at: Instant, what: T) -> bool {
        self.seq += 1;
        let seq = self.seq;
        self.heap.push(Reverse(Deadline { at, seq, what }));
        if self.armed.is_some_and(|armed| armed <= at) {
            return false;
        }
        self.armed = Some(at);
        true
    }

    /// The earliest deadline, if any.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse(d)| d.at)
    }

    /// The earliest deadline, which the serving loop waits for from now on.
    pub(crate) fn arm(&mut self) -> Option<Instant> {
        self.armed = self.next();
        self.armed
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

    /// Takes out every deadline whose `what` `gone` says is gone.
    pub(crate) fn remove(&mut self, mut gone: impl FnMut(&T) -> bool) {
        self.heap.retain(|Reverse(d)| !gone(&d.what));
    }

    /// Once the queue has grown to its next sweep, takes out what `gone` says no longer
    /// needs its deadline, and sets the next sweep at twice what is left.
    pub(crate) fn sweep_if_grown(&mut self, gone: impl FnMut(&T) -> bool) {
        if self.heap.len() < self.sweep_at {
            return;
        }
        self.remove(gone);
        self.sweep_at = (2 * self.heap.len()).max(SWEEP_MIN);
    }

    /// How many deadlines wait.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// How many of the deadlines `count` counts.
    #[cfg(test)]
    pub(crate) fn count(&self, mut count: impl FnMut(&T) -> bool) -> usize {
        self.heap.iter().filter(|Reverse(d)| count(&d.what)).count()
    }
}

/// Whether `what` of `session` still waits for its deadline (taken under the queue's
/// lock: the session's queries are locked after it, never the other way round).
fn still_pending(session: &Weak<Inner>, what: &Timeout) -> bool {
    let Some(inner) = session.upgrade() else {
        return false;
    };
    match what {
        Timeout::Get(qid) => inner.queries().gets.contains_key(qid),
        Timeout::LivelinessGet(id) => inner.queries().liveliness_gets.contains_key(id),
        Timeout::Periodic(task) => task.strong_count() > 0,
    }
}

/// The process's deadlines, fired by the links loop (see [`DeadlineQueue`]).
#[derive(Default)]
pub(crate) struct Deadlines {
    queue: Mutex<DeadlineQueue<(Weak<Inner>, Timeout)>>,
}

impl Deadlines {
    fn lock(&self) -> MutexGuard<'_, DeadlineQueue<(Weak<Inner>, Timeout)>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `what` for `inner` at `at`: whether the links loop is to be woken. A queue
    /// grown to its next sweep first loses the deadlines of what ended before them (gets
    /// answered before their timeout, sessions gone, groups closed), so that it holds
    /// what is pending, not every request of the last timeout's length.
    pub(crate) fn add(&self, inner: &Arc<Inner>, at: Instant, what: Timeout) -> bool {
        let mut queue = self.lock();
        queue.sweep_if_grown(|(session, what)| !still_pending(session, what));
        queue.push(at, (Arc::downgrade(inner), what))
    }

    /// The earliest deadline, which the links loop waits for from now on.
    pub(crate) fn arm(&self) -> Option<Instant> {
        self.lock().arm()
    }

    /// Fires what is due at `now`, for the sessions still open, as `caller` (the links
    /// loop's turn: what ending a get sends never waits); holds a session only while
    /// firing, and the queue's lock not at all.
    pub(crate) fn fire_due(&self, now: Instant, caller: &Caller) {
        let due = {
            let mut queue = self.lock();
            if queue.next().is_none_or(|at| at > now) {
                return;
            }
            queue.pop_due(now)
        };
        for (session, what) in due {
            let Some(inner) = session.upgrade().filter(|i| !i.is_closing()) else {
                continue;
            };
            match what {
                Timeout::Get(qid) => inner.finish_get(qid, caller),
                Timeout::LivelinessGet(id) => {
                    inner.finish_liveliness_get(id);
                }
                Timeout::Periodic(task) => {
                    let next = task.upgrade().and_then(|t| t.run_due(now));
                    if let Some(next) = next {
                        inner.schedule_deadline(next, Timeout::Periodic(task));
                    }
                }
            }
        }
    }

    /// Takes out the deadlines of `inner` (which closes), and those of sessions gone.
    pub(crate) fn forget(&self, inner: &Inner) {
        self.lock()
            .remove(|(s, _)| std::ptr::eq(s.as_ptr(), inner) || s.strong_count() == 0);
    }

    /// How many deadlines of `inner` wait.
    #[cfg(test)]
    pub(crate) fn pending_for(&self, inner: &Inner) -> usize {
        self.lock().count(|(s, _)| std::ptr::eq(s.as_ptr(), inner))
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

    #[test]
    fn a_grown_queue_loses_what_ended_before_its_deadline() {
        let far = Instant::now() + Duration::from_secs(3600);
        let mut q = DeadlineQueue::default();
        // Gets answered at once: only the last one added is still pending.
        let mut pending = 0;
        for qid in 0..100_000 {
            q.sweep_if_grown(|t| *t != Timeout::Get(pending));
            q.push(far, Timeout::Get(qid));
            pending = qid;
        }
        // Swept at every doubling of what was left: bounded, not 100,000.
        assert!(q.len() <= SWEEP_MIN, "{}", q.len());
        // Gets all pending: nothing is taken out, and the sweeps grow apart.
        let mut q = DeadlineQueue::default();
        for qid in 0..10_000 {
            q.sweep_if_grown(|_| false);
            q.push(far, Timeout::Get(qid));
        }
        assert_eq!(q.len(), 10_000);
        assert!(q.sweep_at > 10_000 && q.sweep_at <= 2 * 10_000 + 2);
    }

    #[test]
    fn only_a_deadline_before_the_one_waited_for_wakes_the_loop() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut q = DeadlineQueue::default();
        // The loop waits for nothing: the first deadline wakes it.
        assert!(q.push(t0 + ms(100), Timeout::Get(1)));
        // Later ones are found when it wakes for that one.
        assert!(!q.push(t0 + ms(100), Timeout::Get(2)));
        assert!(!q.push(t0 + ms(500), Timeout::Get(3)));
        // An earlier one wakes it.
        assert!(q.push(t0 + ms(50), Timeout::Get(4)));
        assert_eq!(q.arm(), Some(t0 + ms(50)));
        assert_eq!(q.pop_due(t0 + ms(100)).len(), 3);
        // Looking again, it waits for the last one.
        assert_eq!(q.arm(), Some(t0 + ms(500)));
        assert!(!q.push(t0 + ms(600), Timeout::Get(5)));
        assert!(q.push(t0 + ms(400), Timeout::Get(6)));
        assert_eq!(q.pop_due(t0 + ms(600)).len(), 3);
        // Nothing left: the loop waits for none, and the next deadline wakes it.
        assert_eq!(q.arm(), None);
        assert!(q.push(t0 + ms(900), Timeout::Get(7)));
    }
}
