//! `Querier`: repeated queries on one key expression.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::error::zerr;
use crate::keyexpr::KeyExpr;
use crate::session::Shared;

/// A declared querier: queries on one key expression with the options it was declared
/// with.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Querier {
    shared: Arc<Shared>,
    key: String,
    options: weft::GetOptions,
    declared: AtomicBool,
}

impl Querier {
    /// A querier of `key` with `options`, on the session `shared`.
    pub(crate) fn new(shared: Arc<Shared>, key: String, options: weft::GetOptions) -> Self {
        Self {
            shared,
            key,
            options,
            declared: AtomicBool::new(true),
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
        if !self.declared.load(Ordering::Acquire) {
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
        crate::reply::run_query(
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
        self.declared.store(false, Ordering::Release);
    }
}
