//! `ZBytes`: the bytes of a payload or an attachment.

use std::borrow::Cow;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

/// Raw bytes: a payload or an attachment. `bytes(z)` and `z.to_bytes()` give them as
/// `bytes`, `z.to_string()` and `str(z)` decode them as UTF-8.
#[pyclass(frozen, module = "weft")]
#[derive(Clone)]
pub(crate) struct ZBytes(pub(crate) Arc<weft::Payload>);

impl ZBytes {
    /// Bytes received from weft.
    pub(crate) fn from_payload(p: weft::Payload) -> Self {
        Self(Arc::new(p))
    }

    fn as_slice(&self) -> &[u8] {
        self.0.as_slice()
    }
}

#[pymethods]
impl ZBytes {
    /// Bytes from `bytes`, `bytearray`, `str` (UTF-8) or another `ZBytes`.
    #[new]
    fn new(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self::from_payload(to_vec(obj)?.into()))
    }

    /// The bytes, as `bytes`.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.as_slice())
    }

    /// The bytes decoded as UTF-8; raises `ValueError` if they are not UTF-8.
    fn to_string(&self) -> PyResult<String> {
        std::str::from_utf8(self.as_slice())
            .map(str::to_owned)
            .map_err(|e| PyValueError::new_err(format!("the bytes are not UTF-8: {e}")))
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        self.to_bytes(py)
    }

    fn __str__(&self) -> PyResult<String> {
        self.to_string()
    }

    fn __repr__(&self) -> String {
        format!("ZBytes({:?})", self.as_slice())
    }

    fn __len__(&self) -> usize {
        self.as_slice().len()
    }

    fn __bool__(&self) -> bool {
        !self.as_slice().is_empty()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        to_vec(other).is_ok_and(|v| v == self.as_slice())
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.as_slice().hash(&mut h);
        h.finish()
    }
}

/// The bytes of a value given as payload or attachment: `bytes`, `bytearray`, `str`
/// (UTF-8) or `ZBytes`.
pub(crate) fn to_vec(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(s.to_cow()?.as_bytes().to_vec());
    }
    if let Ok(z) = obj.downcast::<ZBytes>() {
        return Ok(z.get().as_slice().to_vec());
    }
    if let Ok(b) = obj.downcast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    Err(PyTypeError::new_err(format!(
        "expected bytes, bytearray, str or ZBytes, found '{}'",
        obj.get_type().name()?
    )))
}

/// The bytes of a value to publish, as [`to_vec`] takes them, borrowed where they cannot
/// change: those of a `bytes` object or of a `ZBytes` are read in place (their object
/// lives as long as the borrow, and may be read with the GIL released), the others
/// copied.
pub(crate) fn bytes_of<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(z) = obj.downcast::<ZBytes>() {
        return Ok(Cow::Borrowed(z.get().as_slice()));
    }
    to_vec(obj).map(Cow::Owned)
}

/// As [`to_vec`], for an optional value (`None` gives `None`).
pub(crate) fn to_opt_vec(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<u8>>> {
    match obj {
        Some(o) if !o.is_none() => to_vec(o).map(Some),
        _ => Ok(None),
    }
}
