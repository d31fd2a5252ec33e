//! The queues behind channel handlers: FIFO (the pusher waits for room) or ring (the
//! oldest item is dropped for the newest). Pure Rust: pushing never needs the GIL.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use weft::Look;

/// What a handler receives: a sample (the most frequent) in a recycled allocation, the
/// rarer items in allocations of their own, so that queueing moves a pointer.
pub(crate) enum Item {
    /// A subscriber's sample.
    Sample(SampleBox),
    /// A queryable's query.
    Query(Box<weft::Query>),
    /// A reply to a `get`.
    Reply(Box<weft::Reply>),
    /// A publisher's or querier's new matching status.
    Matching(bool),
    /// A node that answered a scout.
    Hello(Box<weft::Hello>),
    /// A transport that opened or closed.
    Transport(Box<weft::TransportEvent>),
    /// A link that was added or removed.
    Link(Box<weft::LinkEvent>),
}

/// The empty sample boxes a thread keeps for the samples it queues next.
const SPARE_BOXES: usize = 1024;

/// Empty sample boxes kept for reuse.
#[allow(
    clippy::vec_box,
    reason = "the boxes are what is kept, for their allocations"
)]
type SpareBoxes = Vec<Box<Option<weft::Sample>>>;

thread_local! {
    /// This thread's empty sample boxes: the samples an I/O thread queues for a callback
    /// it then runs itself take no allocation at steady state. `None` until the thread
    /// boxes a sample (a thread that only takes samples out keeps no boxes).
    static SPARE: RefCell<Option<SpareBoxes>> = const { RefCell::new(None) };
}

/// A sample on the heap, in an allocation taken from (and given back to) the spare boxes
/// of the thread at hand: a sample is written once on the way in and once on the way out,
/// and queued as a pointer.
pub(crate) struct SampleBox(Box<Option<weft::Sample>>);

impl SampleBox {
    /// `sample` in a box.
    pub(crate) fn new(sample: weft::Sample) -> Self {
        let spare = SPARE.try_with(|s| s.borrow_mut().get_or_insert_with(Vec::new).pop());
        match spare.ok().flatten() {
            Some(mut spare) => {
                *spare = Some(sample);
                Self(spare)
            }
            None => Self(Box::new(Some(sample))),
        }
    }

    /// The sample; the box goes to this thread's spare boxes if the thread boxes samples
    /// and they are not full (not once they are gone, at the thread's end).
    pub(crate) fn into_inner(mut self) -> Option<weft::Sample> {
        let sample = self.0.take();
        let _ = SPARE.try_with(|s| {
            if let Some(spare) = s.borrow_mut().as_mut() {
                if spare.len() < SPARE_BOXES {
                    spare.push(self.0);
                }
            }
        });
        sample
    }

    /// The payload's length.
    fn payload_len(&self) -> usize {
        self.0.as_ref().as_ref().map_or(0, |s| s.payload.len())
    }
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

/// What waiting for an item, without taking it, gave.
pub(crate) enum Waited {
    /// Items are queued.
    Ready,
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
    /// The most payload bytes queued at once (FIFO queues of callbacks only): a
    /// subscriber receiving large values keeps a few of them waiting, not `capacity`,
    /// and the memory they are in stays warm.
    max_bytes: usize,
    ring: bool,
    /// How many items are queued, read without the lock by a reader looking for one.
    queued: AtomicUsize,
    /// How long, in nanoseconds, a reader looks for an item before sleeping: doubled
    /// when looking found one, halved when it did not, set from how long a sleep lasted
    /// when it was short, at most 100 µs (`weft::Look`, the rule weft's subscriber
    /// channels follow). Items that come far apart bring it to 0 (no looking).
    spin_ns: AtomicU64,
}

struct State {
    items: VecDeque<Item>,
    /// The payload bytes of the samples queued.
    bytes: usize,
    closed: bool,
    /// Readers waiting on `readable`, writers on `writable`: a condition variable is
    /// notified only when somebody waits on it (a notification is a system call).
    readers_waiting: usize,
    writers_waiting: usize,
    /// A reader was notified and has not come back from waiting yet: the pushes
    /// meanwhile do not notify again (it takes all it finds, or hands on to another
    /// reader what it leaves).
    reader_woken: bool,
}

impl Queue {
    /// A FIFO queue of `capacity` items: a push waits while it is full.
    pub(crate) fn fifo(capacity: usize) -> Self {
        Self::new(capacity, false)
    }

    /// A FIFO queue of `capacity` items holding at most `max_bytes` of payloads (but
    /// always at least one item): a push waits while it is full.
    pub(crate) fn fifo_bytes(capacity: usize, max_bytes: usize) -> Self {
        Self {
            max_bytes,
            ..Self::new(capacity, false)
        }
    }

    /// A ring of `capacity` items: a push onto a full ring drops the oldest item.
    pub(crate) fn ring(capacity: usize) -> Self {
        Self::new(capacity, true)
    }

    fn new(capacity: usize, ring: bool) -> Self {
        Self {
            state: Mutex::new(State {
                items: VecDeque::with_capacity(capacity.clamp(1, 1024)),
                bytes: 0,
                closed: false,
                readers_waiting: 0,
                writers_waiting: 0,
                reader_woken: false,
            }),
            readable: Condvar::new(),
            writable: Condvar::new(),
            capacity: capacity.max(1),
            max_bytes: usize::MAX,
            ring,
            queued: AtomicUsize::new(0),
            spin_ns: AtomicU64::new(0),
        }
    }

    /// Whether a push must wait (FIFO) or drop the oldest item (ring).
    fn full(&self, st: &State) -> bool {
        st.items.len() >= self.capacity || (st.bytes >= self.max_bytes && !st.items.is_empty())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `item` (dropped if the queue is closed). A full ring drops its oldest item;
    /// a full FIFO queue waits for the reader.
    pub(crate) fn push(&self, item: Item) {
        let mut st = self.lock();
        if !st.closed && self.full(&st) {
            if self.ring {
                if let Some(old) = st.items.pop_front() {
                    st.bytes -= weight(&old);
                }
            } else {
                // The reader may need the GIL, which this thread may hold.
                drop(st);
                return crate::gil::blocking(move || self.push_when_room(item));
            }
        }
        self.append(st, item);
    }

    /// Adds `item` at the end (unless the queue is closed) and wakes a reader.
    fn append(&self, mut st: MutexGuard<'_, State>, item: Item) {
        if st.closed {
            return;
        }
        st.bytes += weight(&item);
        st.items.push_back(item);
        self.queued.store(st.items.len(), Ordering::Relaxed);
        self.wake_reader(st);
    }

    /// Waits, as a writer, until the queue is not full or is closed, or `timeout` (if
    /// any) has passed.
    fn wait_for_room_in<'q>(
        &'q self,
        mut st: MutexGuard<'q, State>,
        timeout: Option<Duration>,
    ) -> MutexGuard<'q, State> {
        while !st.closed && self.full(&st) {
            st.writers_waiting += 1;
            st = match timeout {
                None => self.writable.wait(st).unwrap_or_else(|e| e.into_inner()),
                Some(t) => {
                    self.writable
                        .wait_timeout(st, t)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
            st.writers_waiting -= 1;
            if timeout.is_some() {
                break;
            }
        }
        st
    }

    /// Adds `item` without waiting for room and without waking a reader (dropped if the
    /// queue is closed): for an I/O thread that runs the callback reading the queue
    /// itself, once its read is handed on (the queue may so exceed its capacity by what
    /// one read brings). Returns whether the queue is full.
    pub(crate) fn push_quiet(&self, item: Item) -> bool {
        let mut st = self.lock();
        if st.closed {
            return false;
        }
        st.bytes += weight(&item);
        st.items.push_back(item);
        self.full(&st)
    }

    /// Wakes a reader waiting for an item, if one waits and items are queued (pushed
    /// quietly, say).
    pub(crate) fn notify_reader(&self) {
        let st = self.lock();
        if !st.items.is_empty() {
            self.wake_reader(st);
        }
    }

    /// Whether a push would have to wait for room (or drop the oldest item).
    pub(crate) fn is_full(&self) -> bool {
        let st = self.lock();
        self.full(&st)
    }

    /// Whether nothing is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.lock().items.is_empty()
    }

    /// Waits, at most `timeout`, until the queue has room (or is closed); `true` if it
    /// has.
    pub(crate) fn wait_for_room(&self, timeout: Duration) -> bool {
        let st = self.wait_for_room_in(self.lock(), Some(timeout));
        st.closed || !self.full(&st)
    }

    /// Waits, at most `timeout`, for an item, leaving it queued.
    pub(crate) fn wait_for_item(&self, timeout: Duration) -> Waited {
        let st = self.wait_while_empty(timeout);
        match (st.items.is_empty(), st.closed) {
            (false, _) => Waited::Ready,
            (true, true) => Waited::Closed,
            (true, false) => Waited::Empty,
        }
    }

    fn push_when_room(&self, item: Item) {
        let st = self.wait_for_room_in(self.lock(), None);
        self.append(st, item);
    }

    /// The next item, waiting at most `timeout` for one.
    pub(crate) fn recv_timeout(&self, timeout: Duration) -> Recv {
        let st = self.wait_while_empty(timeout);
        self.take(st)
    }

    /// The queue's state once it has an item, is closed, or `timeout` has passed.
    fn wait_while_empty(&self, timeout: Duration) -> MutexGuard<'_, State> {
        let spun = self.look_for_item();
        let mut st = self.lock();
        if st.items.is_empty() && !st.closed {
            let slept = Instant::now();
            st.readers_waiting += 1;
            st = self
                .readable
                .wait_timeout(st, timeout)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            st.readers_waiting -= 1;
            st.reader_woken = false;
            if !st.items.is_empty() {
                // Looking that long (twice, for good measure) would have found it.
                let gap = Duration::from_nanos(spun) + slept.elapsed();
                let learnt = Look::default().slept(gap).nanos();
                self.spin_ns.fetch_max(learnt, Ordering::Relaxed);
            }
        }
        st
    }

    /// Looks for an item, yielding the core between looks, for at most the current
    /// spin time; returns how long it looked, in nanoseconds.
    fn look_for_item(&self) -> u64 {
        let look = Look::from_nanos(self.spin_ns.load(Ordering::Relaxed));
        let budget = look.nanos();
        if budget == 0 || self.queued.load(Ordering::Relaxed) > 0 {
            return 0;
        }
        let start = Instant::now();
        loop {
            std::thread::yield_now();
            let looked = nanos(start.elapsed());
            if self.queued.load(Ordering::Relaxed) > 0 {
                self.spin_ns.store(look.found().nanos(), Ordering::Relaxed);
                return looked;
            }
            if looked >= budget {
                self.spin_ns.store(look.missed().nanos(), Ordering::Relaxed);
                return looked;
            }
        }
    }

    /// The next item, without waiting.
    pub(crate) fn try_recv(&self) -> Recv {
        let st = self.lock();
        self.take(st)
    }

    /// Moves up to `max` of the items queued to the end of `out`, without waiting;
    /// returns how many. When `out` is empty and all the items queued fit, the two
    /// queues are swapped: no item is moved.
    pub(crate) fn drain_into(&self, out: &mut VecDeque<Item>, max: usize) -> usize {
        let mut st = self.lock();
        let n = st.items.len().min(max);
        if n == 0 {
            return 0;
        }
        if out.is_empty() && n == st.items.len() {
            std::mem::swap(&mut st.items, out);
            st.bytes = 0;
        } else {
            let start = out.len();
            out.extend(st.items.drain(..n));
            st.bytes -= out.range(start..).map(weight).sum::<usize>();
        }
        self.queued.store(st.items.len(), Ordering::Relaxed);
        self.taken(st);
        n
    }

    fn take(&self, mut st: MutexGuard<'_, State>) -> Recv {
        match st.items.pop_front() {
            Some(item) => {
                st.bytes -= weight(&item);
                self.queued.store(st.items.len(), Ordering::Relaxed);
                self.taken(st);
                Recv::Item(item)
            }
            None if st.closed => Recv::Closed,
            None => Recv::Empty,
        }
    }

    /// Releases `st`, then wakes a reader if one waits and none was woken already.
    fn wake_reader(&self, mut st: MutexGuard<'_, State>) {
        let wake = st.readers_waiting > 0 && !st.reader_woken;
        st.reader_woken |= wake;
        drop(st);
        if wake {
            self.readable.notify_one();
        }
    }

    /// After items were taken: releases `st`, then wakes the writers waiting for room,
    /// if any (all of them: room may have been made for several), and another reader
    /// if items are left for one.
    fn taken(&self, mut st: MutexGuard<'_, State>) {
        let writers = st.writers_waiting > 0;
        let reader = !st.items.is_empty() && st.readers_waiting > 0 && !st.reader_woken;
        st.reader_woken |= reader;
        drop(st);
        if writers {
            self.writable.notify_all();
        }
        if reader {
            self.readable.notify_one();
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

/// What `item` counts for against a queue's `max_bytes`: a sample's payload.
fn weight(item: &Item) -> usize {
    match item {
        Item::Sample(s) => s.payload_len(),
        _ => 0,
    }
}

/// `d` in nanoseconds (saturating).
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(payload: &[u8]) -> weft::Sample {
        weft::Sample {
            key_expr: "a/b".into(),
            kind: weft::SampleKind::Put,
            payload: payload.into(),
            encoding: "zenoh/bytes".into(),
            timestamp: None,
            attachment: None,
            priority: weft::Priority::Data,
            congestion_control: weft::CongestionControl::Block,
            express: false,
            source_info: None,
        }
    }

    /// This thread's spare boxes (`None`: it has boxed no sample).
    fn spare_boxes() -> Option<usize> {
        SPARE.with(|s| s.borrow().as_ref().map(Vec::len))
    }

    fn payloads(out: &mut VecDeque<Item>) -> Vec<Vec<u8>> {
        out.drain(..)
            .map(|item| match item {
                Item::Sample(s) => s.into_inner().expect("a sample").payload.to_vec(),
                _ => Vec::new(),
            })
            .collect()
    }

    #[test]
    fn a_sample_taken_out_gives_its_box_to_the_next_sample_of_the_thread() {
        let first = SampleBox::new(sample(b"one"));
        let allocation: *const Option<weft::Sample> = &*first.0;
        assert_eq!(spare_boxes(), Some(0));
        let taken = first.into_inner().expect("the sample put in");
        assert_eq!(taken.payload.to_vec(), b"one");
        assert_eq!(spare_boxes(), Some(1), "the box is kept");
        let second = SampleBox::new(sample(b"two"));
        assert_eq!(spare_boxes(), Some(0), "and taken again");
        assert!(std::ptr::eq(&*second.0, allocation));
        assert_eq!(second.payload_len(), 3);
        assert_eq!(
            second
                .into_inner()
                .expect("the sample put in")
                .payload
                .to_vec(),
            b"two"
        );
    }

    #[test]
    fn a_thread_that_only_takes_samples_out_keeps_no_boxes() {
        let boxed = SampleBox::new(sample(b"x"));
        let kept = std::thread::spawn(move || {
            let _ = boxed.into_inner();
            spare_boxes()
        })
        .join()
        .expect("the thread ends");
        assert_eq!(kept, None);
    }

    #[test]
    fn samples_queued_in_boxes_come_out_in_order_and_weighed() {
        // Full at 6 payload bytes.
        let queue = Queue::fifo_bytes(8, 6);
        for text in [&b"ab"[..], b"cd", b"ef"] {
            queue.push(Item::Sample(SampleBox::new(sample(text))));
        }
        assert!(queue.is_full(), "6 bytes queued");
        let mut out = VecDeque::new();
        assert_eq!(queue.drain_into(&mut out, 8), 3, "all, the queues swapped");
        assert!(!queue.is_full() && queue.is_empty());
        assert_eq!(
            payloads(&mut out),
            [b"ab".to_vec(), b"cd".to_vec(), b"ef".to_vec()]
        );
        for text in [&b"gh"[..], b"ij", b"kl"] {
            queue.push(Item::Sample(SampleBox::new(sample(text))));
        }
        assert_eq!(queue.drain_into(&mut out, 1), 1, "one, moved");
        assert!(!queue.is_full(), "4 bytes left");
        queue.push(Item::Sample(SampleBox::new(sample(b"m"))));
        assert!(!queue.is_full(), "5 bytes");
        queue.push(Item::Sample(SampleBox::new(sample(b"n"))));
        assert!(queue.is_full(), "6 bytes again");
        assert_eq!(
            queue.drain_into(&mut out, 8),
            4,
            "behind the one taken before"
        );
        assert_eq!(
            payloads(&mut out),
            [
                b"gh".to_vec(),
                b"ij".to_vec(),
                b"kl".to_vec(),
                b"m".to_vec(),
                b"n".to_vec()
            ]
        );
    }
}
