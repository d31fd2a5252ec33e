//! `ZBytes`: the bytes of a payload or an attachment.
//!
//! The Rust value [`ZBytes`] becomes, when handed to Python, an instance of the class
//! `weft.ZBytes`, made by the module `buffer` as a subclass of [`ZBytesBase`] (which
//! has the methods) adding the buffer protocol: `memoryview(z)` reads the bytes in
//! place.

use std::borrow::Cow;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};

use crate::buffer;

/// Bytes received from weft or given by Python, shared (never copied) by every Python
/// `ZBytes` made of them.
#[derive(Clone)]
pub(crate) struct ZBytes(pub(crate) Arc<weft::Payload>);

impl ZBytes {
    /// Bytes received from weft.
    pub(crate) fn from_payload(p: weft::Payload) -> Self {
        Self(Arc::new(p))
    }

    /// The bytes. They stay at the same address as long as this value (or a clone) lives:
    /// the payload is behind an `Arc` and never changed.
    pub(crate) fn as_slice(&self) -> &[u8] {
        self.0.as_slice()
    }
}

impl<'py> IntoPyObject<'py> for ZBytes {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    /// A new Python `ZBytes` (of the class with the buffer protocol) sharing these bytes.
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        buffer::new_zbytes(py, ZBytesBase(self))
    }
}

/// The methods of `weft.ZBytes`. Python sees this class only as the base of
/// `weft.ZBytes` (see the module `buffer`), whose instances are the only ones made.
#[pyclass(frozen, subclass, weakref, module = "weft", name = "_ZBytesBase")]
pub(crate) struct ZBytesBase(pub(crate) ZBytes);

#[pymethods]
impl ZBytesBase {
    /// Bytes from `bytes`, `bytearray`, `str` (UTF-8), another `ZBytes`, any object with
    /// the buffer protocol (`memoryview`, `array.array`, …), or none (`None`, the
    /// default).
    #[new]
    #[pyo3(signature = (bytes = None))]
    fn new(bytes: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let v = to_opt_vec(bytes)?.unwrap_or_default();
        Ok(Self(ZBytes::from_payload(v.into())))
    }

    /// The bytes, as `bytes` (a copy; `memoryview(z)` reads them in place).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.0.as_slice())
    }

    /// The bytes decoded as UTF-8; raises `ValueError` if they are not UTF-8.
    fn to_string(&self) -> PyResult<String> {
        std::str::from_utf8(self.0.as_slice())
            .map(str::to_owned)
            .map_err(|e| PyValueError::new_err(format!("the bytes are not UTF-8: {e}")))
    }

    /// The bytes, as `bytes` (a copy).
    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        self.to_bytes(py)
    }

    /// The bytes decoded as UTF-8.
    fn __str__(&self) -> PyResult<String> {
        self.to_string()
    }

    fn __repr__(&self) -> String {
        format!("ZBytes({:?})", self.0.as_slice())
    }

    /// How many bytes.
    fn __len__(&self) -> usize {
        self.0.as_slice().len()
    }

    /// Whether there is any byte.
    fn __bool__(&self) -> bool {
        !self.0.as_slice().is_empty()
    }

    /// Equal to bytes that are the same (of any type [`to_vec`] takes).
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        to_vec(other).is_ok_and(|v| v == self.0.as_slice())
    }

    /// A hash of the bytes.
    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.0.as_slice().hash(&mut h);
        h.finish()
    }
}

/// The bytes of a value given as payload or attachment: `bytes`, `bytearray`, `str`
/// (UTF-8), `ZBytes`, or any other object with the buffer protocol (copied through a
/// `memoryview`).
pub(crate) fn to_vec(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(s.to_cow()?.as_bytes().to_vec());
    }
    if let Ok(z) = obj.downcast::<ZBytesBase>() {
        return Ok(z.get().0.as_slice().to_vec());
    }
    if let Ok(b) = obj.downcast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    match PyMemoryView::from(obj) {
        Ok(view) => Ok(view
            .call_method0("tobytes")?
            .downcast_into::<PyBytes>()?
            .as_bytes()
            .to_vec()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "expected bytes, bytearray, str, ZBytes or an object with the buffer \
             protocol, found '{}'",
            obj.get_type().name()?
        ))),
    }
}

/// The bytes of a value to publish, as [`to_vec`] takes them, borrowed where they cannot
/// change: those of a `bytes` object or of a `ZBytes` are read in place (their object
/// lives as long as the borrow, and may be read with the GIL released), the others
/// copied.
pub(crate) fn bytes_of<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(z) = obj.downcast::<ZBytesBase>() {
        return Ok(Cow::Borrowed(z.get().0.as_slice()));
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
