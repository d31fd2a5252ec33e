//! Queries: `Query` (what a queryable receives) and its replies, `Queryable`, `Reply`
//! and `ReplyError` (what `get` receives), `Selector` and `Parameters`, and running a
//! `get` with its handler.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use weft_keyexpr::OwnedKeyExpr;

use crate::bytes::{to_vec, ZBytes};
use crate::encoding::{encoding_text, Encoding};
use crate::entity::Entity;
use crate::error::zerr;
use crate::handlers::{call_drop, Handler, Sink, Source, Spec};
use crate::keyexpr::{key_text, KeyExpr};
use crate::pubsub::on_channel;
use crate::qos::{CongestionControl, Priority};
use crate::queue::{Item, Queue};
use crate::sample::{Sample, Timestamp};
use crate::session::PutArgs;

/// A query received by a queryable. Answer with `reply`, `reply_err` or `reply_del`;
/// the querier learns that this queryable is done when the last reference to the query
/// is dropped (or at `drop()`, or at the end of a `with` block).
#[pyclass(frozen, module = "weft")]
pub(crate) struct Query {
    query: Mutex<Option<weft::Query>>,
    key_expr: weft::SharedKey,
    parameters: String,
    payload: Option<(ZBytes, Encoding)>,
    attachment: Option<ZBytes>,
}

impl From<weft::Query> for Query {
    fn from(q: weft::Query) -> Self {
        Self {
            key_expr: q.key_expr().into(),
            parameters: q.parameters().to_owned(),
            payload: q.payload().map(|(p, e)| {
                (
                    ZBytes::from_payload(p.clone().into()),
                    Encoding(if e.is_empty() {
                        "zenoh/bytes".into()
                    } else {
                        e.clone().into()
                    }),
                )
            }),
            attachment: q
                .attachment()
                .map(|a| ZBytes::from_payload(a.to_vec().into())),
            query: Mutex::new(Some(q)),
        }
    }
}

impl Query {
    fn with_query<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&weft::Query) -> Result<R, weft::SessionError> + Send,
    ) -> PyResult<R> {
        let guard = self
            .query
            .lock()
            .map_err(|_| zerr("the query is unusable"))?;
        let query = guard
            .as_ref()
            .ok_or_else(|| zerr("the query is finalised (dropped)"))?;
        py.allow_threads(|| f(query)).map_err(zerr)
    }

    /// Checks that a reply on `key` answers this query (its key intersects the query's).
    fn check_reply_key(&self, key: &str) -> PyResult<()> {
        let reply = OwnedKeyExpr::new(key)
            .map_err(|e| zerr(format!("invalid key expression `{key}`: {e}")))?;
        let query = OwnedKeyExpr::new(self.key_expr.as_str()).map_err(zerr)?;
        if !query.as_key_expr().intersects(reply.as_key_expr()) {
            return Err(zerr(format!(
                "cannot reply on `{key}`: it does not intersect the query's `{}`",
                self.key_expr
            )));
        }
        Ok(())
    }

    fn finalise(&self, py: Python<'_>) {
        let query = self.query.lock().ok().and_then(|mut q| q.take());
        py.allow_threads(move || drop(query));
    }
}

impl Drop for Query {
    fn drop(&mut self) {
        let query = self.query.get_mut().ok().and_then(Option::take);
        if query.is_some() {
            Python::with_gil(|py| py.allow_threads(move || drop(query)));
        }
    }
}

#[pymethods]
impl Query {
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) {
        self.finalise(py);
    }

    /// The queried key expression.
    #[getter]
    fn key_expr(&self) -> KeyExpr {
        KeyExpr(self.key_expr.clone())
    }

    /// The selector: key expression and parameters.
    #[getter]
    fn selector(&self) -> Selector {
        Selector {
            key_expr: self.key_expr.clone(),
            parameters: self.parameters.clone(),
        }
    }

    /// The selector's parameters (after `?`).
    #[getter]
    fn parameters(&self) -> Parameters {
        Parameters(self.parameters.clone())
    }

    /// The value sent with the query, if any.
    #[getter]
    fn payload(&self) -> Option<ZBytes> {
        self.payload.as_ref().map(|(p, _)| p.clone())
    }

    /// The encoding of the value sent with the query, if any.
    #[getter]
    fn encoding(&self) -> Option<Encoding> {
        self.payload.as_ref().map(|(_, e)| e.clone())
    }

    /// User bytes attached to the query, if any.
    #[getter]
    fn attachment(&self) -> Option<ZBytes> {
        self.attachment.clone()
    }

    /// Answers with `payload` on `key_expr`, which must intersect the query's key
    /// expression.
    #[pyo3(signature = (key_expr, payload, *, encoding = None, congestion_control = None,
        priority = None, express = None, attachment = None, timestamp = None))]
    #[allow(clippy::too_many_arguments)]
    fn reply(
        &self,
        py: Python<'_>,
        key_expr: &Bound<'_, PyAny>,
        payload: &Bound<'_, PyAny>,
        encoding: Option<&Bound<'_, PyAny>>,
        congestion_control: Option<CongestionControl>,
        priority: Option<Priority>,
        express: Option<bool>,
        attachment: Option<&Bound<'_, PyAny>>,
        timestamp: Option<Timestamp>,
    ) -> PyResult<()> {
        let key = key_text(key_expr)?;
        self.check_reply_key(&key)?;
        let payload = to_vec(payload)?;
        let options = PutArgs {
            encoding,
            congestion_control,
            priority,
            express,
            attachment,
            timestamp,
        }
        .apply(weft::PutOptions::default())?;
        self.with_query(py, |q| q.reply(&key, &payload, &options))
    }

    /// Answers with an error value.
    #[pyo3(signature = (payload, *, encoding = None))]
    fn reply_err(
        &self,
        py: Python<'_>,
        payload: &Bound<'_, PyAny>,
        encoding: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let payload = to_vec(payload)?;
        let encoding = encoding_text(encoding)?;
        self.with_query(py, |q| q.reply_err(&payload, &encoding))
    }

    /// Answers that `key_expr` (which must intersect the query's) was deleted.
    #[pyo3(signature = (key_expr, **_options))]
    fn reply_del(
        &self,
        py: Python<'_>,
        key_expr: &Bound<'_, PyAny>,
        _options: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<()> {
        let key = key_text(key_expr)?;
        self.check_reply_key(&key)?;
        self.with_query(py, |q| q.reply_del(&key))
    }

    /// Finalises the query now: no more replies from this queryable.
    fn drop(&self, py: Python<'_>) {
        self.finalise(py);
    }

    fn __str__(&self) -> String {
        self.selector().__str__()
    }

    fn __repr__(&self) -> String {
        format!("Query({:?})", self.selector().__str__())
    }
}

/// A key expression and parameters, written `key?parameters`.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Selector {
    key_expr: weft::SharedKey,
    parameters: String,
}

#[pymethods]
impl Selector {
    /// The selector `text` (`key` or `key?parameters`).
    #[new]
    fn new(text: &str) -> PyResult<Self> {
        let (key, parameters) = text.split_once('?').unwrap_or((text, ""));
        OwnedKeyExpr::new(key).map_err(|e| zerr(format!("invalid key expression `{key}`: {e}")))?;
        Ok(Self {
            key_expr: key.into(),
            parameters: parameters.to_owned(),
        })
    }

    /// The key expression.
    #[getter]
    fn key_expr(&self) -> KeyExpr {
        KeyExpr(self.key_expr.clone())
    }

    /// The parameters.
    #[getter]
    fn parameters(&self) -> Parameters {
        Parameters(self.parameters.clone())
    }

    fn __str__(&self) -> String {
        if self.parameters.is_empty() {
            self.key_expr.to_string()
        } else {
            format!("{}?{}", self.key_expr, self.parameters)
        }
    }
}

/// A selector's parameters: `key=value` pairs separated by `;`.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Parameters(String);

impl Parameters {
    fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0
            .split(';')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")))
    }
}

#[pymethods]
impl Parameters {
    /// Parameters written as `text`.
    #[new]
    #[pyo3(signature = (text = String::new()))]
    fn new(text: String) -> Self {
        Self(text)
    }

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.pairs().next().is_none()
    }

    /// The value of `key`, else `default`.
    #[pyo3(signature = (key, default = None))]
    fn get(&self, key: &str, default: Option<String>) -> Option<String> {
        self.pairs()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.to_owned())
            .or(default)
    }

    /// The values of `key` (`a=1|2` gives `["1", "2"]`).
    fn values(&self, key: &str) -> Vec<String> {
        self.get(key, None)
            .map(|v| v.split('|').map(str::to_owned).collect())
            .unwrap_or_default()
    }

    fn __contains__(&self, key: &str) -> bool {
        self.pairs().any(|(k, _)| k == key)
    }

    fn __getitem__(&self, key: &str) -> Option<String> {
        self.get(key, None)
    }

    fn __bool__(&self) -> bool {
        !self.is_empty()
    }

    fn __str__(&self) -> &str {
        &self.0
    }
}

/// A declared queryable. With a channel handler, `recv()`, `try_recv()` and iteration
/// read its queries.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Queryable {
    key: weft::SharedKey,
    entity: Arc<Entity>,
    handler: PyObject,
    background: bool,
}

impl Queryable {
    /// The Python face of `entity`.
    pub(crate) fn new(
        key: weft::SharedKey,
        entity: Arc<Entity>,
        handler: PyObject,
        background: bool,
    ) -> Self {
        Self {
            key,
            entity,
            handler,
            background,
        }
    }
}

impl Drop for Queryable {
    fn drop(&mut self) {
        if !self.background {
            Python::with_gil(|py| self.entity.undeclare(py));
        }
    }
}

#[pymethods]
impl Queryable {
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) {
        self.entity.undeclare(py);
    }

    /// The key expression it answers for.
    #[getter]
    fn key_expr(&self) -> KeyExpr {
        KeyExpr(self.key.clone())
    }

    /// The handler: the channel, or what was given with the callback.
    #[getter]
    fn handler(&self, py: Python<'_>) -> PyObject {
        self.handler.clone_ref(py)
    }

    /// Stops the queryable.
    fn undeclare(&self, py: Python<'_>) {
        self.entity.undeclare(py);
    }

    /// The next query, waiting for it (channel handlers only).
    fn recv<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        on_channel(py, &self.handler, "recv")
    }

    /// The next query if one is there, else `None` (channel handlers only).
    fn try_recv<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        on_channel(py, &self.handler, "try_recv")
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        on_channel(py, &self.handler, "__iter__")
    }
}

/// One answer to a `get`: a sample (`ok`) or an error (`err`).
#[pyclass(frozen, module = "weft")]
pub(crate) struct Reply(Result<Py<Sample>, Py<ReplyError>>);

impl Reply {
    /// The Python face of `reply`.
    pub(crate) fn new(py: Python<'_>, reply: weft::Reply) -> PyResult<Self> {
        Ok(Self(match reply.result {
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
        }))
    }
}

#[pymethods]
impl Reply {
    /// The sample, or `None` for an error reply.
    #[getter]
    fn ok(&self, py: Python<'_>) -> Option<Py<Sample>> {
        self.0.as_ref().ok().map(|s| s.clone_ref(py))
    }

    /// The error, or `None` for a sample.
    #[getter]
    fn err(&self, py: Python<'_>) -> Option<Py<ReplyError>> {
        self.0.as_ref().err().map(|e| e.clone_ref(py))
    }

    /// The sample or the error.
    #[getter]
    fn result(&self, py: Python<'_>) -> PyObject {
        match &self.0 {
            Ok(s) => s.clone_ref(py).into_any(),
            Err(e) => e.clone_ref(py).into_any(),
        }
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

/// A declared querier: queries on one key expression with the options it was declared
/// with.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Querier {
    shared: Arc<crate::session::Shared>,
    key: String,
    options: weft::GetOptions,
    declared: std::sync::atomic::AtomicBool,
}

impl Querier {
    /// A querier of `key` with `options`, on the session `shared`.
    pub(crate) fn new(
        shared: Arc<crate::session::Shared>,
        key: String,
        options: weft::GetOptions,
    ) -> Self {
        Self {
            shared,
            key,
            options,
            declared: std::sync::atomic::AtomicBool::new(true),
        }
    }
}

#[pymethods]
impl Querier {
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, PyTuple>) {
        self.undeclare();
    }

    /// The key expression it queries.
    #[getter]
    fn key_expr(&self) -> KeyExpr {
        KeyExpr(self.key.as_str().into())
    }

    /// Queries its key expression, with `parameters` and a value; handlers as for
    /// `Session.get`.
    #[pyo3(signature = (handler = None, *, parameters = None, payload = None,
        encoding = None, attachment = None))]
    fn get(
        &self,
        py: Python<'_>,
        handler: Option<&Bound<'_, PyAny>>,
        parameters: Option<&Bound<'_, PyAny>>,
        payload: Option<&Bound<'_, PyAny>>,
        encoding: Option<&Bound<'_, PyAny>>,
        attachment: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        if !self.declared.load(std::sync::atomic::Ordering::Acquire) {
            return Err(zerr("the querier is undeclared"));
        }
        let parameters = match parameters.filter(|p| !p.is_none()) {
            Some(p) => p.str()?.to_cow()?.into_owned(),
            None => String::new(),
        };
        let selector = if parameters.is_empty() {
            self.key.clone()
        } else {
            format!("{}?{parameters}", self.key)
        };
        crate::session::run_query(
            py,
            &self.shared,
            selector,
            self.options.clone(),
            handler,
            payload,
            encoding,
            attachment,
        )
    }

    /// Undeclares the querier; later queries raise `ZError`.
    fn undeclare(&self) {
        self.declared
            .store(false, std::sync::atomic::Ordering::Release);
    }
}

/// Hands the replies of a `get` to its handler; returns what `get` returns.
pub(crate) fn run_get(
    py: Python<'_>,
    replies: mpsc::Receiver<weft::Reply>,
    spec: Spec,
) -> PyResult<PyObject> {
    match spec {
        Spec::Channel { ring: false, .. } => Ok(Py::new(
            py,
            Handler::new(Source::Replies(Mutex::new(replies)), "Reply"),
        )?
        .into_any()),
        Spec::Channel {
            ring: true,
            capacity,
        } => {
            let queue = Arc::new(Queue::ring(capacity));
            let handler = Py::new(py, Handler::new(Source::Queue(queue.clone()), "Reply"))?;
            pump(replies, Sink::Queue(queue.clone()), move || queue.close())?;
            Ok(handler.into_any())
        }
        Spec::Callback {
            callback,
            drop,
            handler,
        } => {
            pump(replies, Sink::Python(callback), move || {
                crate::gil::with_python(|py| call_drop(py, drop));
            })?;
            Ok(handler)
        }
    }
}

/// Moves the replies into `sink` on a thread of their own, then calls `end`.
fn pump(
    replies: mpsc::Receiver<weft::Reply>,
    sink: Sink,
    end: impl FnOnce() + Send + 'static,
) -> PyResult<()> {
    std::thread::Builder::new()
        .name("weft-py-get".into())
        .spawn(move || {
            for r in replies {
                sink.deliver(Item::Reply(r));
            }
            drop(sink);
            end();
        })
        .map(drop)
        .map_err(|e| zerr(format!("cannot start the reply thread: {e}")))
}
