//! The Zenoh keys a configuration sets that weft does not implement: reported once, in
//! one warning grouping them by section; a key Zenoh itself removed is named with why.

use serde_json::Value;

/// Keys of earlier Zenoh configurations that Zenoh itself no longer has, with why they
/// are not needed (ROS 2's rmw_zenoh still sets some of them).
const REMOVED_FROM_ZENOH: &[(&str, &str)] = &[(
    "routing.router.peers_failover_brokering",
    "removed from Zenoh's configuration in 1.9, where routers route between their peers \
     by region",
)];

/// The warnings for configuration keys weft does not implement: one per key Zenoh
/// itself removed (with why), then one listing the others, grouped by the section they
/// are in (`transport.link.tx.queue.size.{control, data}`).
pub(super) fn warnings(keys: &[String]) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for key in keys {
        if let Some((_, why)) = REMOVED_FROM_ZENOH.iter().find(|(k, _)| k == key) {
            warnings.push(format!("`{key}` ignored: {why}"));
            continue;
        }
        let (section, leaf) = key.rsplit_once('.').unwrap_or(("", key));
        match groups.iter_mut().find(|(s, _)| *s == section) {
            Some((_, leaves)) => leaves.push(leaf),
            None => groups.push((section, vec![leaf])),
        }
    }
    if groups.is_empty() {
        return warnings;
    }
    let count: usize = groups.iter().map(|(_, l)| l.len()).sum();
    let listed: Vec<String> = groups
        .iter()
        .map(|(section, leaves)| {
            let leaves = if leaves.len() == 1 {
                leaves[0].to_string()
            } else {
                format!("{{{}}}", leaves.join(", "))
            };
            if section.is_empty() {
                leaves
            } else {
                format!("{section}.{leaves}")
            }
        })
        .collect();
    let noun = if count == 1 { "key" } else { "keys" };
    warnings.push(format!(
        "{count} configuration {noun} weft does not implement, ignored: {}",
        listed.join(", ")
    ));
    warnings
}

/// The leaves under `prefix` (itself when `v` is not an object), dotted.
pub(super) fn leaves(prefix: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                leaves(&format!("{prefix}.{k}"), child, out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}
