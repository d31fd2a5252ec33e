//! Handlers: what a subscriber, queryable or `get` does with what it receives. A Python
//! callable (called with the GIL on a thread of the binding's), or a channel read from Python
//! (`handlers.DefaultHandler`, `handlers.FifoChannel(n)`, `handlers.RingChannel(n)`).

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::error::ZError;
use crate::gil::{log_callback_error, with_python};
use crate::queue::{Item, Queue, Recv};

/// The capacity of the default handler's FIFO channel.
const DEFAULT_CAPACITY: usize = 256;

/// How long a blocking receive waits, GIL released, between two checks for signals
/// (Ctrl-C).
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// The default handler: a FIFO channel of 256 items.
#[pyclass(frozen, module = "weft.handlers")]
pub(crate) struct DefaultHandler;

#[pymethods]
impl DefaultHandler {
    /// The default handler.
    #[new]
    fn new() -> Self {
        Self
    }
}

/// A FIFO channel of `capacity` items; when it is full, delivery waits for the reader.
#[pyclass(frozen, module = "weft.handlers")]
pub(crate) struct FifoChannel(usize);

#[pymethods]
impl FifoChannel {
    /// A FIFO channel holding at most `capacity` items.
    #[new]
    fn new(capacity: usize) -> Self {
        Self(capacity)
    }

    /// How many items it holds at most.
    #[getter]
    fn capacity(&self) -> usize {
        self.0
    }
}

/// A ring channel of `capacity` items: when it is full, the oldest item is dropped for
/// the newest, so that a slow reader sees the latest data.
#[pyclass(frozen, module = "weft.handlers")]
pub(crate) struct RingChannel(usize);

#[pymethods]
impl RingChannel {
    /// A ring channel holding at most `capacity` items.
    #[new]
    fn new(capacity: usize) -> Self {
        Self(capacity)
    }

    /// How many items it holds at most.
    #[getter]
    fn capacity(&self) -> usize {
        self.0
    }
}

/// A callable called for every item, and an optional `drop` callable called once when
/// the entity is undeclared (or its session closed, or its query over).
#[pyclass(frozen, module = "weft.handlers")]
pub(crate) struct Callback {
    callback: PyObject,
    drop: Option<PyObject>,
}

#[pymethods]
impl Callback {
    /// Calls `callback(item)` for each item, then `drop()` at the end.
    #[new]
    #[pyo3(signature = (callback, drop = None, *, indirect = true))]
    fn new(callback: PyObject, drop: Option<PyObject>, indirect: bool) -> Self {
        // Callbacks always run on a thread of their entity (or of their `get`).
        let _ = indirect;
        Self { callback, drop }
    }

    /// The callable called for each item.
    #[getter]
    fn callback(&self, py: Python<'_>) -> PyObject {
        self.callback.clone_ref(py)
    }

    /// The callable called at the end, if any.
    #[getter]
    fn drop(&self, py: Python<'_>) -> Option<PyObject> {
        self.drop.as_ref().map(|d| d.clone_ref(py))
    }

    /// Always `False`: the callback runs on a thread of its entity (or of its `get`).
    #[getter]
    fn indirect(&self) -> bool {
        false
    }

    fn __call__(&self, py: Python<'_>, arg: PyObject) -> PyResult<PyObject> {
        self.callback.call1(py, (arg,))
    }
}

/// Where a handler's items come from.
pub(crate) enum Source {
    /// A queue filled by weft.
    Queue(Arc<Queue>),
    /// The replies of a `get`, as weft hands them.
    Replies(Mutex<mpsc::Receiver<weft::Reply>>),
}

impl Source {
    fn recv_timeout(&self, timeout: Duration) -> Recv {
        match self {
            Self::Queue(q) => q.recv_timeout(timeout),
            Self::Replies(rx) => match rx.lock() {
                Ok(rx) => match rx.recv_timeout(timeout) {
                    Ok(r) => Recv::Item(Item::Reply(Box::new(r))),
                    Err(mpsc::RecvTimeoutError::Timeout) => Recv::Empty,
                    Err(mpsc::RecvTimeoutError::Disconnected) => Recv::Closed,
                },
                Err(_) => Recv::Closed,
            },
        }
    }

    fn try_recv(&self) -> Recv {
        match self {
            Self::Queue(q) => q.try_recv(),
            Self::Replies(rx) => match rx.lock() {
                Ok(rx) => match rx.try_recv() {
                    Ok(r) => Recv::Item(Item::Reply(Box::new(r))),
                    Err(mpsc::TryRecvError::Empty) => Recv::Empty,
                    Err(mpsc::TryRecvError::Disconnected) => Recv::Closed,
                },
                Err(_) => Recv::Closed,
            },
        }
    }
}

/// The receiving end of a channel handler: `recv()` waits for the next item,
/// `try_recv()` returns it or `None`, and iterating yields items until the channel is
/// closed (the entity undeclared, or the query over).
#[pyclass(frozen, module = "weft.handlers")]
pub(crate) struct Handler {
    source: Source,
    what: &'static str,
}

impl Handler {
    /// A handler reading `source`, which delivers `what` (`Sample`, `Query`, `Reply`).
    pub(crate) fn new(source: Source, what: &'static str) -> Self {
        Self { source, what }
    }

    /// Waits for an item; `None` once the channel is closed and empty. Interrupted by
    /// signals (Ctrl-C raises `KeyboardInterrupt`).
    fn next_item(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        match self.source.try_recv() {
            Recv::Item(item) => return into_object(py, item).map(Some),
            Recv::Closed => return Ok(None),
            // A callback waiting here on one of weft's I/O threads (for the replies of
            // a `get`, say) lets another thread serve the links first.
            Recv::Empty => crate::dispatch::before_blocking(),
        }
        loop {
            match crate::gil::released(py, || self.source.recv_timeout(SIGNAL_CHECK)) {
                Recv::Item(item) => return into_object(py, item).map(Some),
                Recv::Closed => return Ok(None),
                Recv::Empty => py.check_signals()?,
            }
        }
    }
}

#[pymethods]
impl Handler {
    /// The next item, waiting for it; raises `ZError` once the channel is closed.
    pub(crate) fn recv(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.next_item(py)?
            .ok_or_else(|| ZError::new_err("the channel is closed (its entity is undeclared)"))
    }

    /// The next item if one is there, else `None`.
    pub(crate) fn try_recv(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        match self.source.try_recv() {
            Recv::Item(item) => into_object(py, item).map(Some),
            Recv::Empty | Recv::Closed => Ok(None),
        }
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        self.next_item(py)
    }

    fn __repr__(&self) -> String {
        format!("Handler[{}]", self.what)
    }
}

/// An item as the Python object handed to the application.
pub(crate) fn into_object(py: Python<'_>, item: Item) -> PyResult<PyObject> {
    Ok(match item {
        Item::Sample(s) => {
            let s = s
                .into_inner()
                .ok_or_else(|| ZError::new_err("an empty sample box was queued"))?;
            Py::new(py, crate::sample::Sample::from(s))?.into_any()
        }
        Item::Query(q) => Py::new(py, crate::query::Query::from(*q))?.into_any(),
        Item::Reply(r) => Py::new(py, crate::reply::Reply::new(py, *r)?)?.into_any(),
        Item::Matching(m) => Py::new(py, crate::matching::MatchingStatus(m))?.into_any(),
        Item::Hello(h) => Py::new(py, crate::scout::Hello(*h))?.into_any(),
        Item::Transport(e) => Py::new(py, crate::info::TransportEvent(*e))?.into_any(),
        Item::Link(e) => Py::new(py, crate::info::LinkEvent(*e))?.into_any(),
    })
}

/// What the application asked for as handler, parsed.
pub(crate) enum Spec {
    /// A FIFO (or ring, `ring`) channel of `capacity` items.
    Channel {
        /// Its capacity.
        capacity: usize,
        /// Ring (drop the oldest) rather than FIFO (wait).
        ring: bool,
    },
    /// A callable.
    Callback {
        /// Called for each item.
        callback: PyObject,
        /// Called once at the end.
        drop: Option<PyObject>,
        /// What the declaration returns as its `handler`.
        handler: PyObject,
    },
}

impl Spec {
    /// Parses `handler` as given to `declare_subscriber`, `declare_queryable` or `get`:
    /// `None` or `DefaultHandler()`, `FifoChannel(n)`, `RingChannel(n)`, a callable,
    /// `Callback(callable, drop)`, or a `(callable, handler)` pair.
    pub(crate) fn parse(py: Python<'_>, handler: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let Some(h) = handler.filter(|h| !h.is_none()) else {
            return Ok(Self::fifo(DEFAULT_CAPACITY));
        };
        if h.is_instance_of::<DefaultHandler>() {
            return Ok(Self::fifo(DEFAULT_CAPACITY));
        }
        if let Ok(f) = h.downcast::<FifoChannel>() {
            return Ok(Self::fifo(f.get().0));
        }
        if let Ok(r) = h.downcast::<RingChannel>() {
            return Ok(Self::Channel {
                capacity: r.get().0,
                ring: true,
            });
        }
        if let Ok(c) = h.downcast::<Callback>() {
            let c = c.get();
            return Ok(Self::Callback {
                callback: c.callback.clone_ref(py),
                drop: c.drop.as_ref().map(|d| d.clone_ref(py)),
                handler: py.None(),
            });
        }
        if let Ok(t) = h.downcast::<PyTuple>() {
            if t.len() == 2 && t.get_item(0)?.is_callable() {
                return Ok(Self::Callback {
                    callback: t.get_item(0)?.unbind(),
                    drop: None,
                    handler: t.get_item(1)?.unbind(),
                });
            }
        }
        if h.is_callable() {
            return Ok(Self::Callback {
                callback: h.clone().unbind(),
                drop: None,
                handler: py.None(),
            });
        }
        Err(PyTypeError::new_err(format!(
            "invalid handler {}: expected a callable, a (callable, handler) pair, \
             handlers.Callback, handlers.DefaultHandler, handlers.FifoChannel or \
             handlers.RingChannel",
            h.repr()?
        )))
    }

    fn fifo(capacity: usize) -> Self {
        Self::Channel {
            capacity,
            ring: false,
        }
    }
}

/// Where what arrives goes: a queue (filled by weft's threads), an entity's callback, or
/// a Python callable (called by a `get`'s reply thread).
pub(crate) enum Sink {
    /// A channel handler's queue.
    Queue(Arc<Queue>),
    /// A subscriber's or queryable's callback.
    Callback(Arc<crate::dispatch::Dispatcher>),
    /// A callable, called with the GIL on the calling thread.
    Python(PyObject),
}

impl Sink {
    /// Hands `item` over (called without the GIL).
    pub(crate) fn deliver(&self, item: Item) {
        match self {
            Self::Queue(q) => q.push(item),
            Self::Callback(d) => d.deliver(item),
            Self::Python(callback) => with_python(|py| {
                // `with_python` runs nothing once exit has begun.
                let called = into_object(py, item).and_then(|obj| callback.call1(py, (obj,)));
                if let Err(e) = called {
                    log_callback_error(py, e);
                }
            }),
        }
    }
}

/// Calls `drop` (the end of a `Callback`), logging what it raises.
pub(crate) fn call_drop(py: Python<'_>, drop: Option<PyObject>) {
    if let Some(d) = drop {
        if let Err(e) = d.call0(py) {
            log_callback_error(py, e);
        }
    }
}
