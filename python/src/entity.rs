//! A declared subscriber or queryable, as the session and the Python object both see it:
//! undeclared once, by whichever comes first (`undeclare()`, the Python object going
//! away for a channel handler, or the session closing).

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;

use crate::dispatch::Dispatcher;
use crate::handlers::call_drop;
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
