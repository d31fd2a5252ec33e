//! The `plugins` section: which of the plugins a configuration asks for weftd provides.
//!
//! weftd provides Zenoh's `rest` and `storage_manager`, and weft's own `recorder`, built
//! in. Any other entry names a plugin zenohd would load from a library: weftd has none to
//! load, so an entry with `__required__: true` stops it (as zenohd stops when a required
//! plugin cannot be loaded), and one without is reported and ignored.

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
}
