//! The `plugins.storage_manager` section of the configuration.

use std::path::PathBuf;

use serde_json::Value;
use thiserror::Error;
use weft_keyexpr::OwnedKeyExpr;

/// A storage configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid value {value} for `{key}`: expected {expected}")]
pub struct StorageConfigError {
    /// The key, dotted.
    pub key: String,
    /// The value as written.
    pub value: String,
    /// What is accepted.
    pub expected: &'static str,
}

/// Where a storage keeps its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VolumeKind {
    /// In memory (lost when the process ends).
    Memory,
    /// In an SQLite database file.
    Sqlite(PathBuf),
}

/// One storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageConfig {
    /// Its name (the key under `storages`).
    pub name: String,
    /// The key expression it stores.
    pub key_expr: OwnedKeyExpr,
    /// A prefix removed from keys when stored, added back when answering.
    pub strip_prefix: Option<String>,
    /// Its volume.
    pub volume: VolumeKind,
}

fn invalid(key: String, value: &Value, expected: &'static str) -> StorageConfigError {
    StorageConfigError {
        key,
        value: value.to_string(),
        expected,
    }
}

/// Reads the storages of a `plugins` section (none if it has no `storage_manager`).
pub fn parse(plugins: &Value) -> Result<Vec<StorageConfig>, StorageConfigError> {
    let Some(manager) = plugins.get("storage_manager") else {
        return Ok(Vec::new());
    };
    let base = "plugins.storage_manager";
    let sqlite_dir = match manager.pointer("/volumes/sqlite/dir") {
        None => PathBuf::from("."),
        Some(Value::String(d)) => PathBuf::from(d),
        Some(v) => {
            return Err(invalid(
                format!("{base}.volumes.sqlite.dir"),
                v,
                "a directory path",
            ));
        }
    };
    let storages = match manager.get("storages") {
        None => return Ok(Vec::new()),
        Some(Value::Object(m)) => m,
        Some(v) => {
            return Err(invalid(
                format!("{base}.storages"),
                v,
                "an object of storages",
            ))
        }
    };
    let mut out = Vec::new();
    for (name, s) in storages {
        let at = format!("{base}.storages.{name}");
        let key_expr = s
            .get("key_expr")
            .and_then(Value::as_str)
            .and_then(|k| OwnedKeyExpr::new(k).ok())
            .ok_or_else(|| {
                invalid(
                    format!("{at}.key_expr"),
                    s.get("key_expr").unwrap_or(&Value::Null),
                    "a valid key expression",
                )
            })?;
        let strip_prefix = match s.get("strip_prefix") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) if key_expr.as_str().starts_with(p.as_str()) => Some(p.clone()),
            Some(v) => {
                return Err(invalid(
                    format!("{at}.strip_prefix"),
                    v,
                    "a prefix of the storage's key_expr",
                ))
            }
        };
        let volume = s.get("volume").unwrap_or(&Value::Null);
        let (id, path) = match volume {
            Value::String(id) => (id.as_str(), None),
            Value::Object(m) => (
                m.get("id").and_then(Value::as_str).unwrap_or(""),
                m.get("path").and_then(Value::as_str),
            ),
            _ => ("", None),
        };
        let volume = match id {
            "memory" => VolumeKind::Memory,
            "sqlite" => VolumeKind::Sqlite(
                path.map_or_else(|| sqlite_dir.join(format!("{name}.sqlite3")), PathBuf::from),
            ),
            _ => {
                return Err(invalid(
                    format!("{at}.volume"),
                    volume,
                    "\"memory\", \"sqlite\" or { id: \"memory\" | \"sqlite\", path?: FILE }",
                ))
            }
        };
        out.push(StorageConfig {
            name: name.clone(),
            key_expr,
            strip_prefix,
            volume,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_zenoh_style_storages() {
        let plugins = json!({ "storage_manager": {
            "volumes": { "sqlite": { "dir": "/tmp/w" } },
            "storages": {
                "a": { "key_expr": "demo/**", "volume": "memory" },
                "b": { "key_expr": "kept/**", "strip_prefix": "kept", "volume": { "id": "sqlite" } },
            }
        }});
        let s = parse(&plugins).unwrap();
        assert_eq!(s.len(), 2);
        let b = s.iter().find(|x| x.name == "b").unwrap();
        assert_eq!(b.volume, VolumeKind::Sqlite("/tmp/w/b.sqlite3".into()));
        assert_eq!(b.strip_prefix.as_deref(), Some("kept"));
    }

    #[test]
    fn errors_name_the_key() {
        let e = parse(&json!({ "storage_manager": { "storages": { "x": { "key_expr": "a//b", "volume": "memory" } } } }))
            .unwrap_err();
        assert_eq!(e.key, "plugins.storage_manager.storages.x.key_expr");
        let e = parse(&json!({ "storage_manager": { "storages": { "x": { "key_expr": "a/**", "volume": "rocks" } } } }))
            .unwrap_err();
        assert_eq!(e.key, "plugins.storage_manager.storages.x.volume");
        let e = parse(&json!({ "storage_manager": { "storages": { "x": { "key_expr": "a/**", "strip_prefix": "b", "volume": "memory" } } } }))
            .unwrap_err();
        assert!(e.key.ends_with("strip_prefix"));
    }
}
