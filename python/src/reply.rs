//! What a `get` receives: `Reply` and `ReplyError`; and running a `get` with its
//! handler.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use pyo3::prelude::*;

use crate::bytes::{to_opt_vec, ZBytes};
use crate::cancel::CancellationToken;
use crate::encoding::{encoding_text, Encoding};
use crate::error::zerr;
use crate::handlers::{call_drop, Handler, Sink, Source, Spec};
use crate::qos::{ConsolidationMode, Qos, QueryTarget};
use crate::queue::{Item, Queue};
use crate::sample::{EntityGlobalId, Sample};
use crate::session::Shared;

/// One answer to a `get`: a sample (`ok`) or an error (`err`), and who answered.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Reply {
    result: Result<Py<Sample>, Py<ReplyError>>,
    replier_id: Option<weft::EntityGlobalId>,
}

impl Reply {
    /// The Python face of `reply`.
    pub(crate) fn new(py: Python<'_>, reply: weft::Reply) -> PyResult<Self> {
        let result = match reply.result {
            Ok(s) => Ok(Py::new(py, Sample::from(s))?),
            Err(e) => Err(Py::new(
                py,
                ReplyError {
                    payload: ZBytes::from_payload(e.payload.into()),
                    encoding: Encoding(if e.encoding.is_empty() {
                        "zenoh/bytes".into()
                    } else {
                        e.encoding.into()
                    }),
                },
            )?),
        };
        Ok(Self {
            result,
            replier_id: reply.replier_id,
        })
    }
}

#[pymethods]
impl Reply {
    /// The sample, or `None` for an error reply.
    #[getter]
    fn ok(&self, py: Python<'_>) -> Option<Py<Sample>> {
        self.result.as_ref().ok().map(|s| s.clone_ref(py))
    }

    /// The error, or `None` for a sample.
    #[getter]
    fn err(&self, py: Python<'_>) -> Option<Py<ReplyError>> {
        self.result.as_ref().err().map(|e| e.clone_ref(py))
    }

    /// The sample or the error.
    #[getter]
    fn result(&self, py: Python<'_>) -> PyObject {
        match &self.result {
            Ok(s) => s.clone_ref(py).into_any(),
            Err(e) => e.clone_ref(py).into_any(),
        }
    }

    /// The id of the entity that answered (its session's id and its own), when it
    /// said.
    #[getter]
    fn replier_id(&self) -> Option<EntityGlobalId> {
        self.replier_id.map(EntityGlobalId)
    }
}

/// An error answer to a query.
#[pyclass(frozen, module = "weft")]
pub(crate) struct ReplyError {
    payload: ZBytes,
    encoding: Encoding,
}

#[pymethods]
impl ReplyError {
    /// The error value.
    #[getter]
    fn payload(&self) -> ZBytes {
        self.payload.clone()
    }

    /// Its encoding.
    #[getter]
    fn encoding(&self) -> Encoding {
        self.encoding.clone()
    }
}

/// The options of a `get` (or a querier's).
pub(crate) fn get_options(
    target: Option<QueryTarget>,
    consolidation: Option<&Bound<'_, PyAny>>,
    timeout: Option<f64>,
    qos: Qos,
    reach: Reach,
) -> PyResult<weft::GetOptions> {
    let mut options = weft::GetOptions::default();
    if let Some(d) = reach.allowed_destination {
        options.allowed_destination = d.into();
    }
    if let Some(a) = reach.accept_replies {
        options.accept_replies = a.into();
    }
    qos.apply(
        &mut options.congestion_control,
        &mut options.priority,
        &mut options.express,
    );
    if let Some(t) = target {
        options.target = t.into();
    }
    if let Some(c) = consolidation.filter(|c| !c.is_none()) {
        options.consolidation = c.extract::<ConsolidationMode>()?.into();
    }
    if let Some(t) = timeout {
        options.timeout = Some(
            Duration::try_from_secs_f64(t)
                .map_err(|e| zerr(format!("invalid timeout {t}: {e}")))?,
        );
    }
    Ok(options)
}

/// Where a query goes and which replies it accepts (`None`: the defaults).
#[derive(Clone, Copy, Default)]
pub(crate) struct Reach {
    /// `allowed_destination`.
    pub(crate) allowed_destination: Option<crate::qos::Locality>,
    /// `accept_replies`.
    pub(crate) accept_replies: Option<crate::qos::ReplyKeyExpr>,
}

/// Queries `selector` with `options` and the value to send; hands the replies to
/// `handler` (see [`run_get`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_query(
    py: Python<'_>,
    shared: &Shared,
    selector: String,
    mut options: weft::GetOptions,
    handler: Option<&Bound<'_, PyAny>>,
    payload: Option<&Bound<'_, PyAny>>,
    encoding: Option<&Bound<'_, PyAny>>,
    attachment: Option<&Bound<'_, PyAny>>,
    cancellation: Option<&CancellationToken>,
) -> PyResult<PyObject> {
    if let Some(p) = to_opt_vec(payload)? {
        options.payload = Some((p, encoding_text(encoding)?));
    }
    options.attachment = to_opt_vec(attachment)?;
    if let Some(token) = cancellation {
        if token.token().is_cancelled() {
            // As zenoh-python: a get given a cancelled token is refused.
            return Err(zerr("the query was cancelled"));
        }
    }
    options.cancellation = cancellation.map(CancellationToken::token);
    let session = shared.weft()?;
    let spec = Spec::parse(py, handler)?;
    let replies =
        crate::gil::released(py, move || session.get(&selector, &options)).map_err(zerr)?;
    let (handler, pump) = run_get(py, replies, spec)?;
    if let (Some(token), Some(pump)) = (cancellation, pump) {
        token.watch(pump);
    }
    Ok(handler)
}

/// Hands the replies of a `get` to its handler; returns what `get` returns, and the
/// thread feeding the handler if it has one.
pub(crate) fn run_get(
    py: Python<'_>,
    replies: mpsc::Receiver<weft::Reply>,
    spec: Spec,
) -> PyResult<(PyObject, Option<JoinHandle<()>>)> {
    Ok(match spec {
        Spec::Channel { ring: false, .. } => (
            Py::new(
                py,
                Handler::new(Source::Replies(Mutex::new(replies)), "Reply"),
            )?
            .into_any(),
            None,
        ),
        Spec::Channel {
            ring: true,
            capacity,
        } => {
            let queue = Arc::new(Queue::ring(capacity));
            let handler = Py::new(py, Handler::new(Source::Queue(queue.clone()), "Reply"))?;
            let pump = pump(replies, Sink::Queue(queue.clone()), move || queue.close())?;
            (handler.into_any(), Some(pump))
        }
        Spec::Callback {
            callback,
            drop,
            handler,
        } => {
            let pump = pump(replies, Sink::Python(callback), move || {
                crate::gil::with_python(|py| call_drop(py, drop));
            })?;
            (handler, Some(pump))
        }
    })
}

/// Moves the replies into `sink` on a thread of their own, then calls `end`.
fn pump(
    replies: mpsc::Receiver<weft::Reply>,
    sink: Sink,
    end: impl FnOnce() + Send + 'static,
) -> PyResult<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("weft-py-get".into())
        .spawn(move || {
            for r in replies {
                sink.deliver(Item::Reply(Box::new(r)));
            }
            drop(sink);
            end();
        })
        .map_err(|e| zerr(format!("cannot start the reply thread: {e}")))
}
