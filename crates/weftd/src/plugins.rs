//! The `plugins` section: which of the plugins a configuration asks for weftd provides.
//!
//! weftd provides Zenoh's `rest` and `storage_manager`, and weft's own `recorder`, built
//! in. Any other entry names a plugin zenohd would load from a library: weftd has none to
//! load, so an entry with `__required__: true` stops it (as zenohd stops when a required
//! plugin cannot be loaded), and one without is reported and ignored.
//!
//! The REST plugin's section is declared here, with Zenoh's REST plugin's keys (`Rest`):
//! another key in it is an error naming its path, as Zenoh's plugin refuses it.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

/// The plugins weftd provides, by their configuration names.
pub(crate) const PROVIDED: [&str; 3] = ["rest", "storage_manager", "recorder"];

/// Checks the `plugins` section: an error naming the first required plugin weftd does not
/// provide, else one warning per plugin it does not provide.
pub(crate) fn check(plugins: Option<&Value>) -> Result<Vec<String>, String> {
    let Some(plugins) = plugins else {
        return Ok(Vec::new());
    };
    let Some(entries) = plugins.as_object() else {
        return Err(format!(
            "invalid value {plugins} for `plugins`: expected an object of plugins"
        ));
    };
    let mut warnings = Vec::new();
    for (name, entry) in entries {
        let required = match entry.get("__required__") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                return Err(format!(
                    "invalid value {v} for `plugins.{name}.__required__`: expected true or false"
                ))
            }
        };
        if PROVIDED.contains(&name.as_str()) {
            continue;
        }
        let provided = PROVIDED.join(", ");
        if required {
            return Err(format!(
                "plugin `{name}` is required (`plugins.{name}.__required__: true`) but weftd \
                 does not provide it (it provides {provided})"
            ));
        }
        warnings.push(format!(
            "plugin `{name}` ignored: weftd does not provide it (it provides {provided})"
        ));
    }
    Ok(warnings)
}

/// `plugins.rest`, as Zenoh's REST plugin takes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Rest {
    /// `PORT` or `"ADDRESS:PORT"`: read by weftd's `rest_address`.
    #[serde(default)]
    http_port: Value,
    /// Zenoh's REST plugin's worker threads; weft's REST serves with its own.
    #[serde(rename = "work_thread_num", default)]
    _work_thread_num: IgnoredAny,
    /// Zenoh's REST plugin's blocking threads; weft's REST serves with its own.
    #[serde(rename = "max_block_thread_num", default)]
    _max_block_thread_num: IgnoredAny,
    /// Zenoh's plugin loader's: where the plugin's library is (weft's is built in).
    #[serde(rename = "__path__", default)]
    _path: IgnoredAny,
    /// Zenoh's plugin loader's: whether the plugin must load (`check` reads it).
    #[serde(rename = "__required__", default)]
    _required: IgnoredAny,
    /// Zenoh's plugin loader's: a file the plugin's configuration is in.
    #[serde(rename = "__config__", default)]
    _config: IgnoredAny,
    /// Zenoh's plugin loader's: the plugin's library name.
    #[serde(rename = "__plugin__", default)]
    _plugin: IgnoredAny,
}

/// `plugins.rest.http_port`, if the REST plugin is configured; a key Zenoh's REST plugin
/// does not have is an error naming its path.
pub(crate) fn rest_http_port(plugins: Option<&Value>) -> Result<Option<Value>, String> {
    let Some(section) = plugins.and_then(|p| p.get("rest")) else {
        return Ok(None);
    };
    let rest: Rest = serde_path_to_error::deserialize(section).map_err(|e| {
        let message = e.inner().to_string();
        if message.starts_with("unknown field") {
            format!(
                "unknown key `plugins.rest.{}`: Zenoh's REST plugin has no such key ({message})",
                e.path()
            )
        } else {
            format!("invalid `plugins.rest`: {message}")
        }
    })?;
    Ok(Some(rest.http_port).filter(|p| !p.is_null()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_required_plugin_weftd_does_not_provide_stops_it() {
        let e = check(Some(&json!({ "mqtt": { "__required__": true } }))).unwrap_err();
        assert!(e.starts_with("plugin `mqtt` is required"), "{e}");
        let w = check(Some(
            &json!({ "mqtt": { "port": 1883 }, "dds": { "__required__": false } }),
        ))
        .unwrap();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("plugin `mqtt` ignored"), "{w:?}");
        let e = check(Some(&json!({ "mqtt": { "__required__": "yes" } }))).unwrap_err();
        assert!(e.contains("plugins.mqtt.__required__"), "{e}");
    }

    #[test]
    fn the_plugins_weftd_provides_pass_even_when_required() {
        let plugins = json!({
            "rest": { "__required__": true, "http_port": 8000 },
            "storage_manager": { "__required__": true },
            "recorder": {},
        });
        assert_eq!(check(Some(&plugins)), Ok(Vec::new()));
        assert_eq!(check(None), Ok(Vec::new()));
    }

    #[test]
    fn the_rest_section_takes_zenohs_rest_plugin_keys_only() {
        let plugins = json!({ "rest": { "http_port": 8000, "__required__": true,
                                        "work_thread_num": 2 } });
        assert_eq!(rest_http_port(Some(&plugins)), Ok(Some(json!(8000))));
        assert_eq!(rest_http_port(Some(&json!({ "rest": {} }))), Ok(None));
        assert_eq!(rest_http_port(None), Ok(None));
        let e = rest_http_port(Some(&json!({ "rest": { "http_prt": 8000 } }))).unwrap_err();
        assert!(e.starts_with("unknown key `plugins.rest.http_prt`"), "{e}");
    }
}
