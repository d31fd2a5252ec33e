//! Python callbacks of subscribers and queryables.
//!
//! Each callback has a queue, and whichever thread holds its [`CallLock`] hands what is
//! queued to it, in order: one thread at a time, as zenoh-python's callbacks run, so a
//! callback never needs a lock against itself.
//!
//! What weft receives from the network arrives on one of its I/O threads. There, the
//! items are queued without waking anyone, and once the read that brought them is
//! handed on (`weft::executor::after_this_read`), the I/O thread takes the GIL once and
//! runs the callbacks itself, with the link put back: no other thread is woken, and a
//! callback that blocks (on a `get` whose replies the same link brings, say) holds
//! neither the link nor the thread's other links. A callback whose queue is full while
//! another thread runs it holds the link instead, until there is room (back-pressure,
//! as a full channel does).
//!
//! What arrives elsewhere (a put from the application's own thread to a subscriber of
//! the same session, a link read by a thread of its own) wakes the callback's own
//! thread, which takes the GIL once for all the items waiting (up to a batch).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{JoinHandle, ThreadId};
use std::time::Duration;

use pyo3::prelude::*;

use crate::error::zerr;
use crate::gil::{exiting, log_callback_error, with_python, with_python_kept};
use crate::handlers::into_object;
use crate::queue::{Item, Queue, Waited};

/// How many items wait for a callback's thread before the thread delivering waits for
/// room.
const CAPACITY: usize = 1024;

/// How many payload bytes wait for a callback's thread, at most (but one item, however
/// large).
const MAX_BYTES: usize = 1 << 20;

/// How many items a callback's thread handles per taking of the GIL.
const BATCH: usize = 256;

thread_local! {
    /// The callbacks with items queued by the read an I/O thread is handing on.
    static PENDING: RefCell<Vec<Arc<Dispatcher>>> = const { RefCell::new(Vec::new()) };
    /// Those this I/O thread has yet to run, while it runs one of them.
    static TO_RUN: RefCell<Vec<Arc<Dispatcher>>> = const { RefCell::new(Vec::new()) };
    /// The items an I/O thread takes from a queue at a time (kept between reads).
    static ITEMS: RefCell<VecDeque<Item>> = const { RefCell::new(VecDeque::new()) };
}

/// Says that this thread is about to wait: on an I/O thread running callbacks, another
/// thread serves its links from now on, and the callbacks it was yet to run go to their
/// own threads (so that none waits behind this one).
pub(crate) fn before_blocking() {
    weft::executor::before_blocking();
    let left = TO_RUN.with(|t| std::mem::take(&mut *t.borrow_mut()));
    for dispatcher in left {
        dispatcher.queue.notify_reader();
    }
}

/// A callback, its queue, and its thread.
pub(crate) struct Dispatcher {
    callback: PyObject,
    queue: Arc<Queue>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Held while the callback runs, by whichever thread runs it.
    calls: CallLock,
    /// Set once the entity is undeclared: the callback is not called again.
    stopped: AtomicBool,
}

impl Dispatcher {
    /// Starts the thread calling `callback` for each item queued.
    pub(crate) fn start(py: Python<'_>, callback: PyObject) -> PyResult<Arc<Self>> {
        let dispatcher = Arc::new(Self {
            callback: callback.clone_ref(py),
            queue: Arc::new(Queue::fifo_bytes(CAPACITY, MAX_BYTES)),
            thread: Mutex::new(None),
            calls: CallLock::default(),
            stopped: AtomicBool::new(false),
        });
        let reader = dispatcher.clone();
        let thread = std::thread::Builder::new()
            .name("weft-py-callback".into())
            .spawn(move || run(&reader))
            .map_err(|e| zerr(format!("cannot start a callback thread: {e}")))?;
        if let Ok(mut t) = dispatcher.thread.lock() {
            *t = Some(thread);
        }
        Ok(dispatcher)
    }

    /// The queue of the callback.
    pub(crate) fn queue(&self) -> Arc<Queue> {
        self.queue.clone()
    }

    /// Hands `item` to the callback (called without the GIL): run by this I/O thread
    /// once its read is handed on, or by the callback's thread.
    pub(crate) fn deliver(self: &Arc<Self>, item: Item) {
        if !exiting() && weft::executor::after_this_read(run_pending) {
            if self.queue.push_quiet(item) {
                weft::executor::hold_this_link();
            }
            PENDING.with(|p| {
                let mut p = p.borrow_mut();
                if !p.iter().any(|d| Arc::ptr_eq(d, self)) {
                    p.push(self.clone());
                }
            });
        } else if self.calls.held_here() {
            // From the callback itself: this thread hands it over before it lets go.
            self.queue.push_quiet(item);
        } else {
            self.queue.push(item);
        }
    }

    /// Stops delivering: once this returns, the callback is not called again (what is
    /// queued is dropped). It waits (GIL released) for the callback's thread to end and
    /// for a call running on another thread to return; called from the callback itself
    /// (undeclaring its own entity), it does not wait, and that call is the last.
    pub(crate) fn stop(&self, py: Python<'_>) {
        self.stopped.store(true, Ordering::SeqCst);
        self.queue.close();
        let thread = self.thread.lock().ok().and_then(|mut t| t.take());
        if self.calls.held_here() {
            return;
        }
        crate::gil::released(py, move || {
            if let Some(t) = thread {
                let _ = t.join();
            }
            // A call in progress on an I/O thread returns first.
            self.calls.acquire();
            self.calls.release();
        });
    }

    /// Hands what is queued to the callback, with the GIL, unless another thread runs
    /// it (which hands it over before it lets go) or the entity is undeclared.
    fn run_queued(&self, py: Python<'_>, batch: &mut VecDeque<Item>) {
        while !self.stopped.load(Ordering::SeqCst) && self.calls.try_acquire() {
            while self.queue.drain_into(batch, BATCH) > 0 {
                while let Some(item) = batch.pop_front() {
                    if !self.stopped.load(Ordering::SeqCst) {
                        call(py, &self.callback, item);
                    }
                }
            }
            self.calls.release();
            // Items queued after the last look and before the release, by a thread
            // that found the lock taken, are this thread's to hand over.
            if self.queue.is_empty() || exiting() {
                return;
            }
        }
    }

    /// Waits (GIL released) until the queue has room or is closed: the link whose read
    /// filled it is held meanwhile.
    fn wait_for_room(&self) {
        while !self.queue.wait_for_room(WAIT) && !exiting() {}
    }
}

/// Runs the callbacks with items queued by the read this I/O thread handed on.
fn run_pending() {
    let mut pending = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    if pending.is_empty() {
        return;
    }
    let mut batch = ITEMS.with(|i| std::mem::take(&mut *i.borrow_mut()));
    // Run in order; what a callback that waits leaves goes to the entities' own threads
    // (`before_blocking`).
    pending.reverse();
    TO_RUN.with(|t| std::mem::swap(&mut *t.borrow_mut(), &mut pending));
    with_python_kept(|py| {
        while let Some(dispatcher) = TO_RUN.with(|t| t.borrow_mut().pop()) {
            dispatcher.run_queued(py, &mut batch);
            if dispatcher.queue.is_full() {
                crate::gil::released(py, || dispatcher.wait_for_room());
            }
        }
    });
    // The lists are kept for the next read (what exiting left is dropped).
    TO_RUN.with(|t| std::mem::swap(&mut *t.borrow_mut(), &mut pending));
    pending.clear();
    PENDING.with(|p| *p.borrow_mut() = pending);
    batch.clear();
    ITEMS.with(|i| *i.borrow_mut() = batch);
}

/// How long the callback's thread waits for items, GIL released, before looking whether
/// the interpreter is exiting.
const WAIT: Duration = Duration::from_millis(100);

fn run(dispatcher: &Dispatcher) {
    let queue = &dispatcher.queue;
    let mut batch = VecDeque::with_capacity(BATCH);
    // The GIL is taken once for the thread's life, and released while it waits: the
    // thread keeps one Python thread state, instead of one made (with its frame stack,
    // a mapping of its own) and destroyed at each taking of the GIL.
    with_python(|py| loop {
        // The GIL is taken back only for items, or to end. The lock is taken before the
        // items, so that none is handed over after one queued later.
        let closed = crate::gil::released(py, || loop {
            match queue.wait_for_item(WAIT) {
                Waited::Ready => {
                    dispatcher.calls.acquire();
                    if queue.drain_into(&mut batch, BATCH) > 0 {
                        return false;
                    }
                    dispatcher.calls.release();
                }
                Waited::Empty if exiting() => return true,
                Waited::Empty => {}
                Waited::Closed => return true,
            }
        });
        // At exit, what is left goes without being handed to Python.
        if closed || exiting() {
            if !closed {
                batch.clear();
                dispatcher.calls.release();
            }
            return;
        }
        while let Some(item) = batch.pop_front() {
            if !dispatcher.stopped.load(Ordering::SeqCst) {
                call(py, &dispatcher.callback, item);
            }
        }
        dispatcher.calls.release();
    });
}

/// Calls `callback` with `item`, logging what it raises; not once exit has begun (a
/// callback interrupted at exit does not go on with the items queued behind it).
fn call(py: Python<'_>, callback: &PyObject, item: Item) {
    if crate::gil::exiting() {
        return;
    }
    let called = into_object(py, item).and_then(|obj| callback.call1(py, (obj,)));
    if let Err(e) = called {
        log_callback_error(py, e);
    }
}

/// A lock taken and released by explicit calls (so that it can be waited for with the
/// GIL released, and held across the taking of the GIL), knowing its holder.
#[derive(Default)]
struct CallLock {
    state: Mutex<LockState>,
    released: Condvar,
}

#[derive(Default)]
struct LockState {
    holder: Option<ThreadId>,
    /// Threads waiting in [`CallLock::acquire`] (a release notifies only when some do).
    waiting: usize,
}

impl CallLock {
    fn state(&self) -> std::sync::MutexGuard<'_, LockState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the lock if it is free.
    fn try_acquire(&self) -> bool {
        let mut st = self.state();
        if st.holder.is_some() {
            return false;
        }
        st.holder = Some(std::thread::current().id());
        true
    }

    /// Takes the lock, waiting for it.
    fn acquire(&self) {
        let mut st = self.state();
        while st.holder.is_some() {
            st.waiting += 1;
            st = self.released.wait(st).unwrap_or_else(|e| e.into_inner());
            st.waiting -= 1;
        }
        st.holder = Some(std::thread::current().id());
    }

    /// Releases the lock (taken by this thread).
    fn release(&self) {
        let mut st = self.state();
        st.holder = None;
        let waiting = st.waiting > 0;
        drop(st);
        if waiting {
            self.released.notify_one();
        }
    }

    /// Whether this thread holds the lock.
    fn held_here(&self) -> bool {
        self.state().holder == Some(std::thread::current().id())
    }
}
