//! What a queryable handles: `Query` (with its replies) and `Queryable`.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::bytes::{to_vec, ZBytes};
use crate::encoding::{encoding_text, Encoding};
use crate::entity::{handled_methods, with_held, Handled};
use crate::error::zerr;
use crate::keyexpr::{key_text, KeyExpr};
use crate::qos::{CongestionControl, Priority, Qos};
use crate::sample::{EntityGlobalId, Timestamp};
use crate::selector::{Parameters, Selector};
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
    source_info: Option<weft::SourceInfo>,
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
            source_info: q.source_info(),
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
        with_held(&self.query, "query", "finalised (dropped)", |q| {
            crate::gil::released(py, || f(q)).map_err(zerr)
        })?
    }

    fn finalise(&self, py: Python<'_>) {
        let query = self.query.lock().ok().and_then(|mut q| q.take());
        crate::gil::released(py, move || drop(query));
    }
}

impl Drop for Query {
    fn drop(&mut self) {
        let query = self.query.get_mut().ok().and_then(Option::take);
        if query.is_some() {
            Python::with_gil(|py| crate::gil::released(py, move || drop(query)));
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

    /// The querying entity and its sequence number, when the querier said so (`None`
    /// otherwise).
    #[getter]
    fn source_info(&self) -> Option<crate::sample::SourceInfo> {
        self.source_info.map(crate::sample::SourceInfo)
    }

    /// Which replies the querier accepts: `ReplyKeyExpr.ANY` (its selector has the
    /// `_anyke` parameter) or `ReplyKeyExpr.MATCHING_QUERY`.
    fn accepts_replies(&self) -> crate::qos::ReplyKeyExpr {
        weft::ReplyKeyExpr::of_parameters(&self.parameters).into()
    }

    /// Answers with `payload` on `key_expr`, which must intersect the query's key
    /// expression.
    #[pyo3(signature = (key_expr, payload, *, encoding = None, congestion_control = None,
        priority = None, express = None, attachment = None, timestamp = None,
        source_info = None))]
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
        source_info: Option<crate::sample::SourceInfo>,
    ) -> PyResult<()> {
        let key = key_text(key_expr)?;
        let payload = to_vec(payload)?;
        let args = PutArgs {
            encoding,
            qos: Qos::new(congestion_control, priority, express),
            attachment,
            timestamp,
            source_info,
            allowed_destination: None,
        };
        let options = args.apply(weft::PutOptions::default())?;
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
        self.with_query(py, |q| q.reply_del(&key))
    }

    /// Finalises the query now: no more replies from this queryable.
    fn drop(&self, py: Python<'_>) {
        self.finalise(py);
    }

    fn __str__(&self) -> String {
        self.selector().text()
    }

    fn __repr__(&self) -> String {
        format!("Query({:?})", self.selector().text())
    }
}

/// A declared queryable. With a channel handler, `recv()`, `try_recv()` and iteration
/// read its queries.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Queryable {
    key: weft::SharedKey,
    id: weft::EntityGlobalId,
    handled: Handled,
}

impl Queryable {
    /// The Python face of the queryable `id` on `key`.
    pub(crate) fn new(key: weft::SharedKey, id: weft::EntityGlobalId, handled: Handled) -> Self {
        Self { key, id, handled }
    }
}

handled_methods!(Queryable, undeclare, "query", {
    /// The key expression it answers for.
    #[getter]
    fn key_expr(&self) -> KeyExpr {
        KeyExpr(self.key.clone())
    }

    /// Its id: its session's and its own within it (what its replies name as their
    /// replier); `ZError` once it is undeclared.
    #[getter]
    fn id(&self) -> PyResult<EntityGlobalId> {
        self.handled.declared_id(self.id, "queryable")
    }
});
