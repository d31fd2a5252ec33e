//! `Selector` and `Parameters`: what a query asks for.

use pyo3::prelude::*;
use weft_keyexpr::OwnedKeyExpr;

use crate::error::zerr;
use crate::keyexpr::KeyExpr;

/// A key expression and parameters, written `key?parameters`.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Selector {
    pub(crate) key_expr: weft::SharedKey,
    pub(crate) parameters: String,
}

impl Selector {
    /// `key` or `key?parameters`.
    pub(crate) fn text(&self) -> String {
        if self.parameters.is_empty() {
            self.key_expr.to_string()
        } else {
            format!("{}?{}", self.key_expr, self.parameters)
        }
    }
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
        self.text()
    }
}

/// A selector's parameters: `key=value` pairs separated by `;`.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Parameters(pub(crate) String);

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
