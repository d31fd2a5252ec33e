//! Sessions' deadlines (a `get` or a liveliness `get` that times out, a multicast group's
//! next Join), kept in one queue
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
    /// This node's next Join to a multicast group is due (held weakly: a group closed
    /// sends none, and schedules no other).
    MulticastJoin(Weak<super::multicast::Group>),
}

impl PartialEq for Timeout {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Get(a), Self::Get(b)) | (Self::LivelinessGet(a), Self::LivelinessGet(b)) => {
                a == b
            }
            (Self::MulticastJoin(a), Self::MulticastJoin(b)) => a.ptr_eq(b),
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
}

impl<T> Default for DeadlineQueue<T> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            seq: 0,
            armed: None,
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

    /// How many of the deadlines `count` counts.
    #[cfg(test)]
    pub(crate) fn count(&self, mut count: impl FnMut(&T) -> bool) -> usize {
        self.heap.iter().filter(|Reverse(d)| count(&d.what)).count()
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

    /// Adds `what` for `inner` at `at`: whether the links loop is to be woken.
    pub(crate) fn add(&self, inner: &Arc<Inner>, at: Instant, what: Timeout) -> bool {
        self.lock().push(at, (Arc::downgrade(inner), what))
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
                Timeout::MulticastJoin(group) => {
                    let next = group.upgrade().and_then(|g| g.join_if_due(now));
                    if let Some(next) = next {
                        inner.schedule_deadline(next, Timeout::MulticastJoin(group));
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
