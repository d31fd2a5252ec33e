//! Python callbacks of subscribers and queryables run on a thread of their own (one per
//! entity): weft's threads only queue what arrives, never waiting for the GIL, and the
//! callback's thread takes the GIL once for all the items waiting (up to a batch),
//! instead of once per item.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use pyo3::prelude::*;

use crate::error::zerr;
use crate::gil::{log_callback_error, with_python};
use crate::handlers::into_object;
use crate::queue::{Item, Queue, Recv};

/// How many items wait for a callback before weft's thread waits for room.
const CAPACITY: usize = 1024;

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
        let queue = Arc::new(Queue::fifo(CAPACITY));
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

fn run(queue: &Queue, callback: &PyObject) {
    queue.set_reader();
    loop {
        let first = match queue.recv_timeout(Duration::from_secs(1)) {
            Recv::Item(item) => item,
            Recv::Empty => continue,
            Recv::Closed => return,
        };
        with_python(|py| {
            call(py, callback, first);
            for _ in 1..BATCH {
                match queue.try_recv() {
                    Recv::Item(item) => call(py, callback, item),
                    Recv::Empty | Recv::Closed => break,
                }
            }
        });
    }
}

fn call(py: Python<'_>, callback: &PyObject, item: Item) {
    let called = into_object(py, item).and_then(|obj| callback.call1(py, (obj,)));
    if let Err(e) = called {
        log_callback_error(py, e);
    }
}
