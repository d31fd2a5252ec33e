//! `Querier`: repeated queries on one key expression, and whether queryables match it.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;

use crate::entity::with_held;
use crate::keyexpr::KeyExpr;
use crate::matching::matched_methods;
use crate::sample::EntityGlobalId;
use crate::session::Shared;

/// A declared querier: queries on one key expression with the options it was declared
/// with.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Querier {
    shared: Arc<Shared>,
    key: weft::SharedKey,
    options: weft::GetOptions,
    querier: Mutex<Option<weft::Querier>>,
}

impl Querier {
    /// The Python face of `querier`, on the session `shared`, querying with `options`.
    pub(crate) fn new(
        shared: Arc<Shared>,
        querier: weft::Querier,
        options: weft::GetOptions,
    ) -> Self {
        Self {
            shared,
            key: querier.key_expr().into(),
            options,
            querier: Mutex::new(Some(querier)),
        }
    }

    /// Runs `f` on the weft querier; `ZError` once it is undeclared.
    fn with_querier<R>(&self, f: impl FnOnce(&weft::Querier) -> R) -> PyResult<R> {
        with_held(&self.querier, "querier", "undeclared", f)
    }
}

matched_methods!(Querier, querier, "querier", "queryable", {
    /// Which replies its queries accept.
    #[getter]
    fn accept_replies(&self) -> crate::qos::ReplyKeyExpr {
        self.options.accept_replies.into()
    }

    /// Its id: its session's and its own within it (the id weft declares it with);
    /// `ZError` once it is undeclared.
    #[getter]
    fn id(&self) -> PyResult<EntityGlobalId> {
        self.with_querier(|q| EntityGlobalId(q.id()))
    }

    /// Queries its key expression, with `parameters` and a value; handlers as for
    /// `Session.get`.
    #[pyo3(signature = (handler = None, *, parameters = None, payload = None,
        encoding = None, attachment = None, source_info = None, cancellation_token = None))]
    #[allow(clippy::too_many_arguments)]
    fn get(
        &self,
        py: Python<'_>,
        handler: Option<&Bound<'_, PyAny>>,
        parameters: Option<&Bound<'_, PyAny>>,
        payload: Option<&Bound<'_, PyAny>>,
        encoding: Option<&Bound<'_, PyAny>>,
        attachment: Option<&Bound<'_, PyAny>>,
        source_info: Option<crate::sample::SourceInfo>,
        cancellation_token: Option<PyRef<'_, crate::cancel::CancellationToken>>,
    ) -> PyResult<PyObject> {
        self.with_querier(|_| ())?;
        let parameters = match parameters.filter(|p| !p.is_none()) {
            Some(p) => p.str()?.to_cow()?.into_owned(),
            None => String::new(),
        };
        let selector = if parameters.is_empty() {
            self.key.to_string()
        } else {
            format!("{}?{parameters}", self.key)
        };
        crate::reply::run_query(
            py,
            &self.shared,
            selector,
            weft::GetOptions {
                source_info: source_info.map(|s| s.0),
                ..self.options.clone()
            },
            handler,
            payload,
            encoding,
            attachment,
            cancellation_token.as_deref(),
        )
    }
});
