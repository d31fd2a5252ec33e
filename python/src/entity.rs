//! A declared subscriber or queryable, as the session and the Python object both see it:
//! undeclared once, by whichever comes first (`undeclare()`, the Python object going
//! away for a channel handler, or the session closing); and what its handler becomes
//! ([`resolve`]).

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;

use crate::dispatch::Dispatcher;
use crate::error::zerr;
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
    /// drops the weft entity with the GIL released, waits for a callback call in
    /// progress (what was queued for it is dropped), then calls `drop`.
    pub(crate) fn undeclare(&self, py: Python<'_>) {
        if let Some(q) = &self.queue {
            q.close();
        }
        let declared = self.declared.lock().ok().and_then(|mut d| d.take());
        crate::gil::released(py, move || drop(declared));
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
type Resolved = (
    Sink,
    Option<Arc<Queue>>,
    Option<Arc<Dispatcher>>,
    PyObject,
    Option<PyObject>,
    bool,
);

/// Turns `handler` into what a declaration needs (see [`Resolved`]).
fn resolve(
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
            let dispatcher = Dispatcher::start(py, callback)?;
            let queue = dispatcher.queue();
            (
                Sink::Callback(dispatcher.clone()),
                Some(queue),
                Some(dispatcher),
                handler,
                drop,
                true,
            )
        }
    })
}

/// What every handler-read entity's Python object holds: its entity, the `handler`
/// object returned to Python, and whether it runs in the background (a callable: it is
/// not undeclared when the object is dropped).
pub(crate) struct Handled {
    entity: Arc<Entity>,
    handler: PyObject,
    background: bool,
}

impl Handled {
    /// Declares with `declare` (GIL released), delivering into what `handler` resolves
    /// to (items described as `what`); `declare` returns what the caller wants to know
    /// of the entity and the entity (undeclared when dropped). With `shared`, the
    /// session keeps the entity, to undeclare it when it closes.
    pub(crate) fn declare<R: Send, D: Send + 'static>(
        py: Python<'_>,
        shared: Option<&crate::session::Shared>,
        handler: Option<&Bound<'_, PyAny>>,
        what: &'static str,
        declare: impl FnOnce(Sink) -> PyResult<(R, D)> + Send,
    ) -> PyResult<(R, Self)> {
        let (sink, queue, dispatcher, handler, on_drop, background) = resolve(py, handler, what)?;
        let (known, declared) = crate::gil::released(py, move || declare(sink))?;
        let entity = Entity::new(Box::new(declared), queue, dispatcher, on_drop);
        if let Some(shared) = shared {
            shared.keep(entity.clone());
        }
        Ok((
            known,
            Self {
                entity,
                handler,
                background,
            },
        ))
    }

    /// Undeclares the entity (once).
    pub(crate) fn undeclare(&self, py: Python<'_>) {
        self.entity.undeclare(py);
    }

    /// `id` while the entity is declared; then `ZError` saying that `what` is
    /// undeclared.
    pub(crate) fn declared_id(
        &self,
        id: weft::EntityGlobalId,
        what: &str,
    ) -> PyResult<crate::sample::EntityGlobalId> {
        if self.entity.is_declared() {
            Ok(crate::sample::EntityGlobalId(id))
        } else {
            Err(zerr(format!("the {what} is undeclared")))
        }
    }

    /// The handler: the channel, or what was given with the callback.
    pub(crate) fn handler(&self, py: Python<'_>) -> PyObject {
        self.handler.clone_ref(py)
    }

    /// Calls `method` on a channel handler, or raises `ZError` for a callback handler.
    pub(crate) fn on_channel<'py>(
        &self,
        py: Python<'py>,
        method: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let handler = self.handler.bind(py);
        if !handler.is_instance_of::<Handler>() {
            return Err(zerr(format!(
                "`{method}` needs a channel handler; this entity has a callback"
            )));
        }
        handler.call_method0(method)
    }
}

impl Drop for Handled {
    fn drop(&mut self) {
        if !self.background {
            Python::with_gil(|py| self.entity.undeclare(py));
        }
    }
}

/// The `#[pymethods]` of a pyclass holding a [`Handled`] in the field `handled`: a
/// context manager, `handler`, the method that ends it (`undeclare`, or `stop` for a
/// scout), and `recv()`, `try_recv()` and iteration for a channel handler, with what
/// the class adds of its own (pyo3 takes one `#[pymethods]` block per class).
macro_rules! handled_methods {
    ($class:ident, $end:ident, $item:literal, { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            fn __enter__(slf: Py<Self>) -> Py<Self> {
                slf
            }

            #[pyo3(signature = (*_args))]
            fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) {
                self.handled.undeclare(py);
            }

            /// The handler: the channel, or what was given with the callback.
            #[getter]
            fn handler(&self, py: Python<'_>) -> PyObject {
                self.handled.handler(py)
            }

            /// Ends it: nothing more is delivered.
            fn $end(&self, py: Python<'_>) {
                self.handled.undeclare(py);
            }

            #[doc = concat!("The next ", $item, ", waiting for it (channel handlers only).")]
            fn recv<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                self.handled.on_channel(py, "recv")
            }

            #[doc = concat!("The next ", $item, " if one is there, else `None` (channel handlers only).")]
            fn try_recv<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                self.handled.on_channel(py, "try_recv")
            }

            fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                self.handled.on_channel(py, "__iter__")
            }

            $($own)*
        }
    };
}
pub(crate) use handled_methods;

/// Runs `f` on what `slot` holds (a publisher, a querier, a query): `ZError` saying that
/// `what` is `gone` once it is no longer there.
pub(crate) fn with_held<T, R>(
    slot: &Mutex<Option<T>>,
    what: &str,
    gone: &str,
    f: impl FnOnce(&T) -> R,
) -> PyResult<R> {
    let guard = slot
        .lock()
        .map_err(|_| zerr(format!("the {what} is unusable")))?;
    let held = guard
        .as_ref()
        .ok_or_else(|| zerr(format!("the {what} is {gone}")))?;
    Ok(f(held))
}
