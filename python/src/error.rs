//! `ZError`, the exception weft raises, and the conversion of weft's errors into it.

use pyo3::exceptions::PyException;
use pyo3::PyErr;

pyo3::create_exception!(
    weft,
    ZError,
    PyException,
    "Raised when a weft operation fails: an invalid key expression or configuration, a \
     closed session or entity, a router that cannot be reached."
);

/// A `ZError` carrying `e`'s message.
pub(crate) fn zerr(e: impl std::fmt::Display) -> PyErr {
    ZError::new_err(e.to_string())
}
