//! The `plugins.recorder` section of weftd's configuration:
//!
//! ```json5
//! plugins: { recorder: { recordings: {
//!   cam: {
//!     key_expr: "robot/**",            // what is recorded (required)
//!     directory: "/var/lib/weft/rec",  // where its files go, created if missing (required)
//!     rotate: { size_mb: 512, seconds: 3600 }, // a new file past either limit (optional)
//!     compression: "zstd",             // "zstd" (default), "lz4" or "none"
//!     when_full: "drop",               // "drop" (default) or "block": see `WhenFull`
//!   },
//! } } }
//! ```
//!
//! Each object of the section is declared once, as a serde struct that refuses keys it
//! does not declare (`Section`, `Entry`, `Rotate`): an unknown key is an error
//! naming its full path. Their values are checked as they are read.

use std::path::PathBuf;
use std::time::Duration;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Deserialize;
use serde_json::{Map, Value};
use thiserror::Error;
use weft_keyexpr::OwnedKeyExpr;

use crate::mcap_file::Compression;

/// The dotted path of the section.
pub const SECTION: &str = "plugins.recorder";

/// A recorder configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid value {value} for `{key}`: expected {expected}")]
pub struct RecorderConfigError {
    /// The key, dotted.
    pub key: String,
    /// The value as written.
    pub value: String,
    /// What is accepted.
    pub expected: &'static str,
}

/// When a recording closes its file and starts another.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rotation {
    /// Once the file holds this many bytes (`rotate.size_mb`, MiB).
    pub size_bytes: Option<u64>,
    /// Once the file is this old (`rotate.seconds`).
    pub age: Option<Duration>,
}

/// What a recording does with a sample when its queue (samples waiting for the disk) is
/// full.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WhenFull {
    /// Drops it, counted (`dropped`) and logged: the sessions whose samples it records
    /// never wait for the disk (the default).
    #[default]
    Drop,
    /// Waits for room: nothing is lost, but the thread that received the sample waits for
    /// the disk, and with it every session that thread serves.
    Block,
}

/// One configured recording.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordingConfig {
    /// Its name (the key under `recordings`).
    pub name: String,
    /// The key expression it records.
    pub key_expr: OwnedKeyExpr,
    /// The directory its files are written in.
    pub directory: PathBuf,
    /// When it starts a new file.
    pub rotate: Rotation,
    /// How its files' chunks are compressed.
    pub compression: Compression,
    /// What it does when its queue is full (`when_full`).
    pub when_full: WhenFull,
}

fn invalid(key: String, value: &Value, expected: &'static str) -> RecorderConfigError {
    RecorderConfigError {
        key,
        value: value.to_string(),
        expected,
    }
}

/// `plugins.recorder`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    /// The recordings, by name.
    #[serde(default)]
    recordings: Option<Map<String, Value>>,
    /// Zenoh's plugin loader's: whether the plugin must load (weftd checks it).
    #[serde(rename = "__required__", default)]
    _required: IgnoredAny,
    /// Zenoh's plugin loader's: where the plugin's library is (weft's is built in).
    #[serde(rename = "__path__", default)]
    _path: IgnoredAny,
    /// Zenoh's plugin loader's: a file the plugin's configuration is in.
    #[serde(rename = "__config__", default)]
    _config: IgnoredAny,
}

/// One recording, as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    /// What is recorded.
    #[serde(default)]
    key_expr: Value,
    /// Where its files go.
    #[serde(default)]
    directory: Value,
    /// `{ size_mb?, seconds? }`.
    #[serde(default)]
    rotate: Value,
    /// `"zstd"`, `"lz4"` or `"none"`.
    #[serde(default)]
    compression: Value,
    /// `"drop"` or `"block"`.
    #[serde(default)]
    when_full: Value,
}

/// `rotate`, as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Rotate {
    /// MiB.
    #[serde(default)]
    size_mb: Value,
    /// Seconds.
    #[serde(default)]
    seconds: Value,
}

/// Reads `value`, at the dotted path `at`, as a `T`: a key `T` does not declare is an
/// error naming its path; a value of another shape is an error expecting `expected`.
fn read<T: DeserializeOwned>(
    at: &str,
    value: &Value,
    expected: &'static str,
) -> Result<T, RecorderConfigError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if !e.inner().to_string().starts_with("unknown field") {
            return invalid(at.to_string(), value, expected);
        }
        let pointer = format!("/{}", path.replace('.', "/"));
        RecorderConfigError {
            key: format!("{at}.{path}"),
            value: value.pointer(&pointer).unwrap_or(&Value::Null).to_string(),
            expected: "no such key (unknown)",
        }
    })
}

/// A positive, finite number at `key`.
fn positive(key: String, value: &Value) -> Result<f64, RecorderConfigError> {
    value
        .as_f64()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| invalid(key, value, "a number above 0"))
}

/// Reads the recordings of a `plugins` section (none if it has no `recorder`).
pub fn parse(plugins: &Value) -> Result<Vec<RecordingConfig>, RecorderConfigError> {
    let Some(section) = plugins.get("recorder") else {
        return Ok(Vec::new());
    };
    let section: Section = read(SECTION, section, "an object with `recordings`")?;
    let Some(recordings) = section.recordings else {
        return Ok(Vec::new());
    };
    let base = format!("{SECTION}.recordings");
    recordings
        .iter()
        .map(|(name, r)| recording(&format!("{base}.{name}"), name, r))
        .collect()
}

/// One recording, at the dotted path `at`.
fn recording(at: &str, name: &str, value: &Value) -> Result<RecordingConfig, RecorderConfigError> {
    let r: Entry = read(
        at,
        value,
        "an object: { key_expr, directory, rotate?, compression?, when_full? }",
    )?;
    let key_expr = r
        .key_expr
        .as_str()
        .and_then(|k| OwnedKeyExpr::new(k).ok())
        .ok_or_else(|| {
            invalid(
                format!("{at}.key_expr"),
                &r.key_expr,
                "a valid key expression",
            )
        })?;
    let directory = match &r.directory {
        Value::String(d) if !d.is_empty() => PathBuf::from(d),
        other => {
            return Err(invalid(
                format!("{at}.directory"),
                other,
                "a directory path",
            ))
        }
    };
    let rotate = match &r.rotate {
        Value::Null => Rotation::default(),
        v => rotation(&format!("{at}.rotate"), v)?,
    };
    let compression = match &r.compression {
        Value::Null => Compression::Zstd,
        v => v.as_str().and_then(|c| c.parse().ok()).ok_or_else(|| {
            invalid(
                format!("{at}.compression"),
                v,
                "\"zstd\", \"lz4\" or \"none\"",
            )
        })?,
    };
    let when_full = match &r.when_full {
        Value::Null => WhenFull::Drop,
        v => match v.as_str() {
            Some("drop") => WhenFull::Drop,
            Some("block") => WhenFull::Block,
            _ => {
                return Err(invalid(
                    format!("{at}.when_full"),
                    v,
                    "\"drop\" or \"block\"",
                ))
            }
        },
    };
    Ok(RecordingConfig {
        name: name.to_string(),
        key_expr,
        directory,
        rotate,
        compression,
        when_full,
    })
}

/// `rotate: { size_mb?, seconds? }`.
fn rotation(at: &str, value: &Value) -> Result<Rotation, RecorderConfigError> {
    let r: Rotate = read(at, value, "an object: { size_mb?, seconds? }")?;
    let mut rotate = Rotation::default();
    if let Some(v) = Some(&r.size_mb).filter(|v| !v.is_null()) {
        let mb = positive(format!("{at}.size_mb"), v)?;
        // At least one byte: a fraction of a MiB is allowed (small files for tests).
        rotate.size_bytes = Some(((mb * 1024.0 * 1024.0) as u64).max(1));
    }
    if let Some(v) = Some(&r.seconds).filter(|v| !v.is_null()) {
        let seconds = positive(format!("{at}.seconds"), v)?;
        rotate.age = Duration::try_from_secs_f64(seconds).ok();
        if rotate.age.is_none() {
            return Err(invalid(
                format!("{at}.seconds"),
                v,
                "a number of seconds above 0",
            ));
        }
    }
    Ok(rotate)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_recordings_with_their_defaults() {
        let plugins = json!({ "recorder": { "recordings": {
            "cam": {
                "key_expr": "robot/**",
                "directory": "/var/lib/weft/rec",
                "rotate": { "size_mb": 512, "seconds": 3600 },
                "compression": "lz4",
            },
            "all": { "key_expr": "**", "directory": "rec" },
        } } });
        let r = parse(&plugins).unwrap();
        assert_eq!(r.len(), 2);
        let cam = r.iter().find(|c| c.name == "cam").unwrap();
        assert_eq!(cam.key_expr.as_str(), "robot/**");
        assert_eq!(cam.directory, PathBuf::from("/var/lib/weft/rec"));
        assert_eq!(cam.rotate.size_bytes, Some(512 << 20));
        assert_eq!(cam.rotate.age, Some(Duration::from_secs(3600)));
        assert_eq!(cam.compression, Compression::Lz4);
        let all = r.iter().find(|c| c.name == "all").unwrap();
        assert_eq!(all.rotate, Rotation::default());
        assert_eq!(all.compression, Compression::Zstd);
        assert_eq!(all.when_full, WhenFull::Drop);
        assert!(parse(&json!({ "rest": {} })).unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_key() {
        let at = |r: Value| {
            parse(&json!({ "recorder": { "recordings": { "x": r } } }))
                .unwrap_err()
                .key
        };
        let base = "plugins.recorder.recordings.x";
        assert_eq!(
            at(json!({ "key_expr": "a//b", "directory": "d" })),
            format!("{base}.key_expr")
        );
        assert_eq!(
            at(json!({ "key_expr": "a/**" })),
            format!("{base}.directory")
        );
        assert_eq!(
            at(json!({ "key_expr": "a/**", "directory": "d", "rotate": { "size_mb": -1 } })),
            format!("{base}.rotate.size_mb")
        );
        assert_eq!(
            at(json!({ "key_expr": "a/**", "directory": "d", "rotate": { "seconds": 0 } })),
            format!("{base}.rotate.seconds")
        );
        assert_eq!(
            at(json!({ "key_expr": "a/**", "directory": "d", "rotate": { "bytes": 1 } })),
            format!("{base}.rotate.bytes")
        );
        assert_eq!(
            at(json!({ "key_expr": "a/**", "directory": "d", "compression": "gzip" })),
            format!("{base}.compression")
        );
        assert_eq!(
            at(json!({ "key_expr": "a/**", "directory": "d", "when_full": "wait" })),
            format!("{base}.when_full")
        );
        assert_eq!(
            at(json!({ "key_expr": "a/**", "directory": "d", "dir": "d" })),
            format!("{base}.dir")
        );
        let e = parse(&json!({ "recorder": { "storages": {} } })).unwrap_err();
        assert_eq!(e.key, "plugins.recorder.storages");
        // Zenoh's plugin loader's keys are the section's too.
        let plugins = json!({ "recorder": { "__required__": true, "recordings": {} } });
        assert!(parse(&plugins).unwrap().is_empty());
    }
}
