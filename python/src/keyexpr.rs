//! `KeyExpr`: validated key expressions, and their relations.

use pyo3::prelude::*;
use pyo3::types::PyString;
use weft_keyexpr::OwnedKeyExpr;

use crate::error::zerr;

/// A key expression (`robot/*/pose`, `demo/**`): validated when made; compares equal to
/// its text.
#[pyclass(frozen, module = "weft")]
#[derive(Clone, Debug)]
pub(crate) struct KeyExpr(pub(crate) weft::SharedKey);

impl KeyExpr {
    fn checked(text: &str) -> PyResult<OwnedKeyExpr> {
        OwnedKeyExpr::new(text).map_err(|e| zerr(format!("invalid key expression `{text}`: {e}")))
    }

    fn owned(&self) -> OwnedKeyExpr {
        // Already validated when made.
        OwnedKeyExpr::new(self.0.as_str()).expect("a KeyExpr holds a valid key expression")
    }
}

#[pymethods]
impl KeyExpr {
    /// Validates `key_expr`; raises `ZError` if it is not a canonical key expression.
    #[new]
    fn new(key_expr: &str) -> PyResult<Self> {
        Self::checked(key_expr)?;
        Ok(Self(key_expr.into()))
    }

    /// `key_expr` put in canonical form (`a/**/**` gives `a/**`), then validated.
    #[staticmethod]
    fn autocanonize(key_expr: &str) -> PyResult<Self> {
        let k = OwnedKeyExpr::autocanonize(key_expr)
            .map_err(|e| zerr(format!("invalid key expression `{key_expr}`: {e}")))?;
        Ok(Self(k.into_string().into()))
    }

    /// Whether some key matches both this expression and `other`.
    fn intersects(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let other = Self::checked(&key_text(other)?)?;
        Ok(self.owned().as_key_expr().intersects(other.as_key_expr()))
    }

    /// Whether every key matching `other` matches this expression.
    fn includes(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let other = Self::checked(&key_text(other)?)?;
        Ok(self.owned().as_key_expr().includes(other.as_key_expr()))
    }

    /// This expression, `/`, then `other`, in canonical form.
    fn join(&self, other: &str) -> PyResult<Self> {
        let other = OwnedKeyExpr::autocanonize(other.trim_matches('/'))
            .map_err(|e| zerr(format!("cannot join `{}` and `{other}`: {e}", self.0)))?;
        let joined = self.owned().as_key_expr().join(other.as_key_expr());
        Ok(Self(joined.into_string().into()))
    }

    /// This expression followed directly by `other` (no `/` added); the result must be a
    /// valid key expression.
    fn concat(&self, other: &str) -> PyResult<Self> {
        let text = format!("{}{other}", self.0);
        let k = OwnedKeyExpr::autocanonize(&text).map_err(|e| {
            zerr(format!(
                "cannot concatenate `{}` and `{other}`: {e}",
                self.0
            ))
        })?;
        Ok(Self(k.into_string().into()))
    }

    fn __str__(&self) -> &str {
        self.0.as_str()
    }

    fn __repr__(&self) -> String {
        format!("KeyExpr({:?})", self.0.as_str())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        key_text(other).is_ok_and(|t| t == self.0.as_str())
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.0.as_str().hash(&mut h);
        h.finish()
    }
}

/// The text of a key expression given as `KeyExpr` or `str` (not validated here).
pub(crate) fn key_text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(k) = obj.downcast::<KeyExpr>() {
        return Ok(k.get().0.as_str().to_owned());
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(s.to_cow()?.into_owned());
    }
    obj.str()?.extract()
}
