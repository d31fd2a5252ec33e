//! Python callbacks of subscribers and queryables run on a thread of their own (one per
//! entity): weft's threads only queue what arrives, never waiting for the GIL, and the
//! callback's thread takes the GIL once for all the items waiting (up to a batch),
//! instead of once per item.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use pyo3::prelude::*;

use crate::error::zerr;
use crate::gil::{exiting, log_callback_error, with_python};
use crate::handlers::into_object;
use crate::queue::{Item, Queue, Recv};

/// How many items wait for a callback before weft's thread waits for room.
const CAPACITY: usize = 1024;

/// How many payload bytes wait for a callback, at most (but one item, however large).
const MAX_BYTES: usize = 1 << 20;

/// How many items a callback's thread handles per taking of the GIL.
const BATCH: usize = 256;

/// A callback's queue and the thread emptying it into the callback.
pub(crate) struct Dispatcher {
    queue: Arc<Queue>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Dispatcher {
    /// Starts the thread calling `callback` for each item queued.
    pub(crate) fn start(callback: PyObject) -> PyResult<Arc<Self>> {
        let queue = Arc::new(Queue::fifo_bytes(CAPACITY, MAX_BYTES));
        let reader = queue.clone();
        let thread = std::thread::Builder::new()
            .name("weft-py-callback".into())
            .spawn(move || run(&reader, &callback))
            .map_err(|e| zerr(format!("cannot start a callback thread: {e}")))?;
        Ok(Arc::new(Self {
            queue,
            thread: Mutex::new(Some(thread)),
        }))
    }

    /// The queue weft's threads fill.
    pub(crate) fn queue(&self) -> Arc<Queue> {
        self.queue.clone()
    }

    /// Closes the queue and waits (GIL released) for the callback's thread to finish
    /// what is queued; called from that thread itself (a callback undeclaring its own
    /// entity), it does not wait.
    pub(crate) fn stop(&self, py: Python<'_>) {
        self.queue.close();
        let thread = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(t) = thread {
            if t.thread().id() != std::thread::current().id() {
                py.allow_threads(move || {
                    let _ = t.join();
                });
            }
        }
    }
}

/// How long the callback's thread waits for items, GIL released, before looking whether
/// the interpreter is exiting.
const WAIT: Duration = Duration::from_millis(100);

fn run(queue: &Queue, callback: &PyObject) {
    queue.set_reader();
    let mut batch = Vec::with_capacity(BATCH);
    // The GIL is taken once for the thread's life, and released while it waits: the
    // thread keeps one Python thread state, instead of one made (with its frame stack,
    // a mapping of its own) and destroyed at each taking of the GIL.
    with_python(|py| loop {
        // The GIL is taken back only for items, or to end.
        let closed = py.allow_threads(|| loop {
            match queue.recv_timeout(WAIT) {
                Recv::Item(item) => {
                    batch.push(item);
                    // What else is queued already goes in the same taking of the GIL.
                    queue.drain_into(&mut batch, BATCH - 1);
                    return false;
                }
                Recv::Empty if exiting() => return true,
                Recv::Empty => {}
                Recv::Closed => return true,
            }
        });
        // At exit, what is left goes without being handed to Python.
        if closed || exiting() {
            return;
        }
        for item in batch.drain(..) {
            call(py, callback, item);
        }
    });
}

fn call(py: Python<'_>, callback: &PyObject, item: Item) {
    let called = into_object(py, item).and_then(|obj| callback.call1(py, (obj,)));
    if let Err(e) = called {
        log_callback_error(py, e);
    }
}
