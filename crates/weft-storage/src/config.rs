//! The `plugins.storage_manager` section of the configuration.
//!
//! A storage's entry (`plugins.storage_manager.storages.<name>`) is declared once, as
//! `Entry`: a key it does not declare is an error naming its full path, so a misspelled
//! setting never goes unnoticed. Zenoh's keys that weft's storages do not implement are
//! accepted and reported in the log.

use std::path::PathBuf;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;
use thiserror::Error;
use weft_keyexpr::OwnedKeyExpr;

/// A storage configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StorageConfigError {
    /// A known key with a value that cannot be used.
    #[error("invalid value {value} for `{key}`: expected {expected}")]
    InvalidValue {
        /// The key, dotted.
        key: String,
        /// The value as written.
        value: String,
        /// What is accepted.
        expected: &'static str,
    },
    /// A key a storage does not have.
    #[error(
        "unknown key `{key}`: a storage has key_expr, strip_prefix, volume, and Zenoh's \
         complete, garbage_collection and replication"
    )]
    UnknownKey {
        /// The key, dotted (`plugins.storage_manager.storages.demo.volum`).
        key: String,
    },
}

impl StorageConfigError {
    /// The key the error is about, dotted.
    pub fn key(&self) -> &str {
        match self {
            Self::InvalidValue { key, .. } | Self::UnknownKey { key } => key,
        }
    }
}

/// One storage's entry, as written: every key it may have.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object")]
struct Entry {
    /// The key expression stored.
    #[serde(default)]
    key_expr: Value,
    /// A prefix removed from keys when stored.
    #[serde(default)]
    strip_prefix: Value,
    /// The volume: `"memory"`, `"sqlite"` or `{ id, path? }`.
    #[serde(default)]
    volume: Value,
    /// Zenoh's: whether the storage claims to hold every key (not implemented).
    complete: Option<IgnoredAny>,
    /// Zenoh's: when deletions are forgotten (not implemented).
    garbage_collection: Option<IgnoredAny>,
    /// Zenoh's: replication between storages (not implemented).
    replication: Option<IgnoredAny>,
}

impl Entry {
    /// Reads the entry at `at` (its dotted path), naming the key that is not a storage's.
    fn read(at: &str, value: &Value) -> Result<Self, StorageConfigError> {
        serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let message = e.inner().to_string();
            if message.starts_with("unknown field") {
                StorageConfigError::UnknownKey {
                    key: format!("{at}.{path}"),
                }
            } else {
                invalid(at.to_owned(), value, "an object with a key_expr")
            }
        })
    }

    /// The keys of Zenoh's that are set and that weft's storages do not implement.
    fn unimplemented(&self) -> Vec<&'static str> {
        [
            ("complete", self.complete.is_some()),
            ("garbage_collection", self.garbage_collection.is_some()),
            ("replication", self.replication.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, set)| set.then_some(k))
        .collect()
    }
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
    StorageConfigError::InvalidValue {
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
        let entry = Entry::read(&at, s)?;
        let unimplemented = entry.unimplemented();
        if !unimplemented.is_empty() {
            tracing::warn!(
                "storage `{name}`: {} not implemented by weft's storages, ignored",
                unimplemented.join(", ")
            );
        }
        let key_expr = entry
            .key_expr
            .as_str()
            .and_then(|k| OwnedKeyExpr::new(k).ok())
            .ok_or_else(|| {
                invalid(
                    format!("{at}.key_expr"),
                    &entry.key_expr,
                    "a valid key expression",
                )
            })?;
        let strip_prefix = match &entry.strip_prefix {
            Value::Null => None,
            Value::String(p) if key_expr.as_str().starts_with(p.as_str()) => Some(p.clone()),
            v => {
                return Err(invalid(
                    format!("{at}.strip_prefix"),
                    v,
                    "a prefix of the storage's key_expr",
                ))
            }
        };
        let volume = &entry.volume;
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
        assert_eq!(e.key(), "plugins.storage_manager.storages.x.key_expr");
        let e = parse(&json!({ "storage_manager": { "storages": { "x": { "key_expr": "a/**", "volume": "rocks" } } } }))
            .unwrap_err();
        assert_eq!(e.key(), "plugins.storage_manager.storages.x.volume");
        let e = parse(&json!({ "storage_manager": { "storages": { "x": { "key_expr": "a/**", "strip_prefix": "b", "volume": "memory" } } } }))
            .unwrap_err();
        assert!(e.key().ends_with("strip_prefix"));
    }

    #[test]
    fn an_unknown_key_in_a_storage_is_an_error_naming_its_path() {
        let e = parse(&json!({ "storage_manager": { "storages": { "demo": {
            "key_expr": "demo/**", "volume": "memory", "strip_prefx": "demo" } } } }))
        .unwrap_err();
        assert!(matches!(e, StorageConfigError::UnknownKey { .. }), "{e}");
        assert_eq!(e.key(), "plugins.storage_manager.storages.demo.strip_prefx");
        assert!(e
            .to_string()
            .starts_with("unknown key `plugins.storage_manager.storages.demo.strip_prefx`"));
        // Zenoh's keys that weft's storages do not implement are accepted.
        let s = parse(&json!({ "storage_manager": { "storages": { "demo": {
            "key_expr": "demo/**", "volume": "memory", "complete": true,
            "garbage_collection": { "period": 30 } } } } }))
        .unwrap();
        assert_eq!(s.len(), 1);
        let e = parse(&json!({ "storage_manager": { "storages": { "demo": 5 } } })).unwrap_err();
        assert_eq!(e.key(), "plugins.storage_manager.storages.demo");
    }
}
