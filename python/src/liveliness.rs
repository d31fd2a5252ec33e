//! Liveliness: tokens that exist as long as their session (or until undeclared), and
//! the subscribers and queries that watch them; `Session.liveliness()`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::entity::Handled;
use crate::error::zerr;
use crate::keyexpr::key_text;
use crate::pubsub::Subscriber;
use crate::queue::{Item, SampleBox};
use crate::reply::run_get;
use crate::session::Shared;

/// How long a liveliness `get` waits for its answer when no timeout is given.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The liveliness of a session: `declare_token`, `declare_subscriber`, `get`.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Liveliness(pub(crate) Arc<Shared>);

#[pymethods]
impl Liveliness {
    /// Declares a token on the key `key_expr`: it is alive for every liveliness
    /// subscriber and query until undeclared, dropped, or its session closes.
    fn declare_token(&self, py: Python<'_>, key_expr: &Bound<'_, PyAny>) -> PyResult<Token> {
        let key = key_text(key_expr)?;
        let session = self.0.weft()?;
        let token = crate::gil::released(py, move || session.declare_token(&key)).map_err(zerr)?;
        Ok(Token(Mutex::new(Some(token))))
    }

    /// Declares a subscriber to the tokens on keys matching `key_expr`: a `PUT` sample
    /// when one appears, a `DELETE` when it goes; with `history`, the tokens alive now
    /// come first. Handlers as for `Session.declare_subscriber`.
    #[pyo3(signature = (key_expr, handler = None, *, history = false))]
    fn declare_subscriber(
        &self,
        py: Python<'_>,
        key_expr: &Bound<'_, PyAny>,
        handler: Option<&Bound<'_, PyAny>>,
        history: bool,
    ) -> PyResult<Subscriber> {
        let key = key_text(key_expr)?;
        let session = self.0.weft()?;
        let ((key, id), handled) =
            Handled::declare(py, Some(&self.0), handler, "Sample", |sink| {
                let s = session
                    .declare_liveliness_subscriber(&key, history, move |s| {
                        sink.deliver(Item::Sample(SampleBox::new(s.clone())));
                    })
                    .map_err(zerr)?;
                Ok(((weft::SharedKey::from(key.as_str()), s.id()), s))
            })?;
        Ok(Subscriber::new(key, id, handled))
    }

    /// The tokens alive on keys matching `key_expr`, as replies (a channel by default,
    /// closed once the answer is complete or after `timeout` seconds, 10 by default).
    #[pyo3(signature = (key_expr, handler = None, *, timeout = None))]
    fn get(
        &self,
        py: Python<'_>,
        key_expr: &Bound<'_, PyAny>,
        handler: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<PyObject> {
        let key = key_text(key_expr)?;
        let timeout = match timeout {
            Some(t) => Duration::try_from_secs_f64(t)
                .map_err(|e| zerr(format!("invalid timeout {t}: {e}")))?,
            None => DEFAULT_TIMEOUT,
        };
        let session = self.0.weft()?;
        let spec = crate::handlers::Spec::parse(py, handler)?;
        let replies = crate::gil::released(py, move || session.liveliness_get(&key, timeout))
            .map_err(zerr)?;
        run_get(py, replies, spec).map(|(handler, _)| handler)
    }
}

/// A liveliness token; withdrawn by `undeclare()`, at the end of a `with` block, when
/// dropped, or when its session closes.
#[pyclass(frozen, name = "LivelinessToken", module = "weft")]
pub(crate) struct Token(Mutex<Option<weft::LivelinessToken>>);

impl Token {
    fn withdraw(&self, py: Python<'_>) {
        let token = self.0.lock().ok().and_then(|mut t| t.take());
        crate::gil::released(py, move || drop(token));
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        let token = self.0.get_mut().ok().and_then(Option::take);
        if token.is_some() {
            Python::with_gil(|py| crate::gil::released(py, move || drop(token)));
        }
    }
}

#[pymethods]
impl Token {
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) {
        self.withdraw(py);
    }

    /// Withdraws the token.
    fn undeclare(&self, py: Python<'_>) {
        self.withdraw(py);
    }
}
