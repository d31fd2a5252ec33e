//! `Config`: a session's configuration, kept as the JSON5 document Zenoh's configuration
//! files use, and checked by weft's configuration parser at every change.

use std::sync::Mutex;

use pyo3::prelude::*;
use serde_json::Value;

use crate::error::zerr;

/// A session's configuration, in Zenoh's format (`mode`, `connect/endpoints`,
/// `listen/endpoints`, `scouting/multicast/enabled`, ...). Empty (weft's defaults: peer
/// mode, multicast scouting on) when made with `Config()`.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Config(Mutex<Value>);

impl Config {
    /// A configuration holding `doc`, once weft accepts it.
    fn checked(doc: Value) -> PyResult<Self> {
        weft::Config::from_value(&doc).map_err(zerr)?;
        Ok(Self(Mutex::new(doc)))
    }

    fn doc(&self) -> Value {
        self.0.lock().map(|d| d.clone()).unwrap_or(Value::Null)
    }

    /// The weft configuration, with its warnings (keys weft does not implement).
    pub(crate) fn to_weft(&self) -> PyResult<(weft::Config, Vec<String>)> {
        weft::Config::from_value(&self.doc()).map_err(zerr)
    }
}

#[pymethods]
impl Config {
    /// An empty configuration: weft's defaults.
    #[new]
    fn new() -> Self {
        Self(Mutex::new(Value::Object(serde_json::Map::new())))
    }

    /// The configuration in the JSON5 file at `path` (a `str` or `pathlib.Path`).
    #[staticmethod]
    fn from_file(path: std::path::PathBuf) -> PyResult<Self> {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| zerr(format!("cannot read {}: {e}", path.display())))?;
        Self::from_json5(&text)
    }

    /// The configuration in the file named by the `ZENOH_CONFIG` environment variable.
    #[staticmethod]
    fn from_env() -> PyResult<Self> {
        let path = std::env::var_os("ZENOH_CONFIG")
            .ok_or_else(|| zerr("the ZENOH_CONFIG environment variable is not set"))?;
        Self::from_file(path.into())
    }

    /// The configuration written as JSON5 text.
    #[staticmethod]
    fn from_json5(json: &str) -> PyResult<Self> {
        let doc: Value = json5::from_str(json)
            .map_err(|e| zerr(format!("configuration is not valid JSON5: {e}")))?;
        Self::checked(doc)
    }

    /// Sets the value at `key` (a `/`-separated path, e.g. `connect/endpoints`) to
    /// `value`, JSON5 text (e.g. `'["tcp/127.0.0.1:7447"]'`); raises `ZError` if weft
    /// does not accept the result (the configuration is then unchanged).
    fn insert_json5(&self, key: &str, value: &str) -> PyResult<()> {
        let mut doc = self.doc();
        weft::Config::apply_setting(&mut doc, &format!("{key}:{value}")).map_err(zerr)?;
        weft::Config::from_value(&doc).map_err(zerr)?;
        if let Ok(mut d) = self.0.lock() {
            *d = doc;
        }
        Ok(())
    }

    /// The value at `key` (a `/`-separated path) as JSON text (`null` when unset).
    fn get_json(&self, key: &str) -> String {
        let doc = self.doc();
        let mut node = &doc;
        for k in key.split('/').filter(|k| !k.is_empty()) {
            node = node.get(k).unwrap_or(&Value::Null);
        }
        node.to_string()
    }

    fn __str__(&self) -> String {
        self.doc().to_string()
    }
}
