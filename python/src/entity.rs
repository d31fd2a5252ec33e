//! A declared subscriber or queryable, as the session and the Python object both see it:
//! undeclared once, by whichever comes first (`undeclare()`, the Python object going
//! away for a channel handler, or the session closing); and what its handler becomes
//! ([`resolve`]).

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;

use crate::dispatch::Dispatcher;
use crate::handlers::{call_drop, Handler, Sink, Source, Spec};
use crate::queue::Queue;

/// A weft entity (dropping it undeclares it), its channel, and its `drop` callable.
pub(crate) struct Entity {
    declared: Mutex<Option<Box<dyn Send>>>,
    queue: Option<Arc<Queue>>,
    dispatcher: Option<Arc<Dispatcher>>,
    on_drop: Mutex<Option<PyObject>>,
}

impl Entity {
    /// `declared`, read through `queue` (a channel), or by `dispatcher` (a callback)
    /// with `on_drop` called at the end.
    pub(crate) fn new(
        declared: Box<dyn Send>,
        queue: Option<Arc<Queue>>,
        dispatcher: Option<Arc<Dispatcher>>,
        on_drop: Option<PyObject>,
    ) -> Arc<Self> {
        Arc::new(Self {
            declared: Mutex::new(Some(declared)),
            queue,
            dispatcher,
            on_drop: Mutex::new(on_drop),
        })
    }

    /// Whether it is still declared.
    pub(crate) fn is_declared(&self) -> bool {
        self.declared.lock().is_ok_and(|d| d.is_some())
    }

    /// Undeclares it (once): closes its channel (releasing a delivery waiting for room),
    /// drops the weft entity with the GIL released, lets the callback finish what was
    /// queued for it, then calls `drop`.
    pub(crate) fn undeclare(&self, py: Python<'_>) {
        if let Some(q) = &self.queue {
            q.close();
        }
        let declared = self.declared.lock().ok().and_then(|mut d| d.take());
        py.allow_threads(move || drop(declared));
        if let Some(d) = &self.dispatcher {
            d.stop(py);
        }
        let on_drop = self.on_drop.lock().ok().and_then(|mut d| d.take());
        if !crate::gil::exiting() {
            call_drop(py, on_drop);
        }
    }
}

/// What a subscriber's or queryable's handler becomes: where weft delivers, the queue
/// closed at the end, the callback's thread, the `handler` object returned, the `drop`
/// callable, and whether the entity runs in the background (callables).
pub(crate) type Resolved = (
    Sink,
    Option<Arc<Queue>>,
    Option<Arc<Dispatcher>>,
    PyObject,
    Option<PyObject>,
    bool,
);

/// Turns `handler` into what a declaration needs (see [`Resolved`]).
pub(crate) fn resolve(
    py: Python<'_>,
    handler: Option<&Bound<'_, PyAny>>,
    what: &'static str,
) -> PyResult<Resolved> {
    Ok(match Spec::parse(py, handler)? {
        Spec::Channel { capacity, ring } => {
            let queue = Arc::new(if ring {
                Queue::ring(capacity)
            } else {
                Queue::fifo(capacity)
            });
            let handler = Py::new(py, Handler::new(Source::Queue(queue.clone()), what))?;
            (
                Sink::Queue(queue.clone()),
                Some(queue),
                None,
                handler.into_any(),
                None,
                false,
            )
        }
        Spec::Callback {
            callback,
            drop,
            handler,
        } => {
            let dispatcher = Dispatcher::start(callback)?;
            let queue = dispatcher.queue();
            (
                Sink::Queue(queue.clone()),
                Some(queue),
                Some(dispatcher),
                handler,
                drop,
                true,
            )
        }
    })
}
