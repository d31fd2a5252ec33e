//! Matching: `MatchingStatus` and `MatchingListener`, for publishers (are there matching
//! subscribers?) and queriers (are there matching queryables?).

use std::sync::Mutex;

use pyo3::prelude::*;

use crate::entity::{handled_methods, with_held, Handled};
use crate::error::zerr;
use crate::queue::Item;
use crate::session::Shared;

/// Whether entities match: subscribers a publisher's key, or queryables a querier's.
#[pyclass(frozen, module = "weft")]
pub(crate) struct MatchingStatus(pub(crate) bool);

#[pymethods]
impl MatchingStatus {
    /// `True` if something matches.
    #[getter]
    fn matching(&self) -> bool {
        self.0
    }

    fn __repr__(&self) -> String {
        format!("MatchingStatus {{ matching: {} }}", self.0)
    }
}

/// Told whenever the matching status of its publisher or querier changes (a
/// `MatchingStatus` each time; the first at once if something matches already).
#[pyclass(frozen, module = "weft")]
pub(crate) struct MatchingListener {
    handled: Handled,
}

handled_methods!(MatchingListener, undeclare, "matching status", {});

/// What has a matching status: weft's publishers and queriers.
pub(crate) trait Matched: Send {
    /// Whether something matches now.
    fn status(&self) -> bool;
    /// A listener calling `callback` at every change.
    fn listen(
        &self,
        callback: Box<dyn Fn(bool) + Send>,
    ) -> Result<weft::MatchingListener, weft::SessionError>;
}

/// Implements [`Matched`] for weft's entities that have the same methods.
macro_rules! matched {
    ($($entity:ty),*) => {$(
        impl Matched for $entity {
            fn status(&self) -> bool {
                self.matching_status()
            }

            fn listen(
                &self,
                callback: Box<dyn Fn(bool) + Send>,
            ) -> Result<weft::MatchingListener, weft::SessionError> {
                self.matching_listener(callback)
            }
        }
    )*};
}

matched!(weft::Publisher, weft::Querier);

/// The matching status of the `what` (`publisher`, `querier`) in `slot`; `ZError` once
/// it is undeclared.
pub(crate) fn status<T: Matched>(slot: &Mutex<Option<T>>, what: &str) -> PyResult<MatchingStatus> {
    with_held(slot, what, "undeclared", |m| MatchingStatus(m.status()))
}

/// Declares a listener of the matching status of the `what` in `slot`, handing its
/// statuses to `handler`; undeclared when the session `shared` closes.
pub(crate) fn declare_listener<T: Matched>(
    py: Python<'_>,
    shared: &Shared,
    slot: &Mutex<Option<T>>,
    what: &str,
    handler: Option<&Bound<'_, PyAny>>,
) -> PyResult<MatchingListener> {
    shared.weft()?;
    with_held(slot, what, "undeclared", |_| ())?;
    let ((), handled) = Handled::declare(py, Some(shared), handler, "MatchingStatus", |sink| {
        let callback = Box::new(move |m| sink.deliver(Item::Matching(m)));
        let listener = with_held(slot, what, "undeclared", |m| m.listen(callback))?;
        Ok(((), listener.map_err(zerr)?))
    })?;
    Ok(MatchingListener { handled })
}

/// For a pyclass holding a weft publisher or querier in the field `$field`
/// (`Mutex<Option<_>>`), its session in `shared` and its key in `key`: its `Drop` (the
/// entity undeclared with the GIL released) and its `#[pymethods]`: a context manager,
/// `key_expr`, `matching_status`, `declare_matching_listener`, `undeclare`, and what the
/// class adds of its own (pyo3 takes one `#[pymethods]` block per class). `$what` names
/// it, `$matches` what matches it.
macro_rules! matched_methods {
    ($class:ident, $field:ident, $what:literal, $matches:literal, { $($own:tt)* }) => {
        impl Drop for $class {
            fn drop(&mut self) {
                let held = self.$field.get_mut().ok().and_then(Option::take);
                if held.is_some() {
                    Python::with_gil(|py| crate::gil::released(py, move || drop(held)));
                }
            }
        }

        #[pymethods]
        impl $class {
            fn __enter__(slf: Py<Self>) -> Py<Self> {
                slf
            }

            #[pyo3(signature = (*_args))]
            fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) {
                self.undeclare(py);
            }

            /// Its key expression.
            #[getter]
            fn key_expr(&self) -> KeyExpr {
                KeyExpr(self.key.clone())
            }

            #[doc = concat!("Whether any ", $matches, " matches its key, as far as the session knows (as zenoh-python, a `MatchingStatus`).")]
            #[getter]
            fn matching_status(&self) -> PyResult<crate::matching::MatchingStatus> {
                crate::matching::status(&self.$field, $what)
            }

            #[doc = concat!("Declares a listener told whenever ", $matches, "s start or stop matching its key (handlers as for `Session.declare_subscriber`).")]
            #[pyo3(signature = (handler = None))]
            fn declare_matching_listener(
                &self,
                py: Python<'_>,
                handler: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<crate::matching::MatchingListener> {
                crate::matching::declare_listener(py, &self.shared, &self.$field, $what, handler)
            }

            #[doc = concat!("Undeclares the ", $what, "; later operations raise `ZError`.")]
            fn undeclare(&self, py: Python<'_>) {
                let held = self.$field.lock().ok().and_then(|mut h| h.take());
                crate::gil::released(py, move || drop(held));
            }

            $($own)*
        }
    };
}
pub(crate) use matched_methods;
