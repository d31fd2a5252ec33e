//! A configuration is strict: a key that neither Eclipse Zenoh 1.10 nor weft has, an
//! unknown key in a storage's entry, or a required plugin weftd does not provide stops
//! weftd before it listens, with a message naming the key or the plugin (zenohd refuses
//! the same configurations); a plugin weftd does not provide and that is not required is
//! ignored.

mod common;

use common::{run_weftd, Weftd};
use weft_testkit::free_port;

/// Runs weftd on the configuration `text` (written to a file of its own).
fn run_weftd_on(name: &str, text: &str) -> (Option<i32>, String) {
    let dir = std::env::temp_dir().join(format!("weftd-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.json5"));
    std::fs::write(&path, text).unwrap();
    let result = run_weftd(&["-c", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    result
}

#[test]
fn a_misspelled_section_or_key_stops_weftd_naming_its_path() {
    let (code, stderr) = run_weftd_on(
        "acess_control",
        r#"{ acess_control: { enabled: true, default_permission: "deny" } }"#,
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown configuration key `acess_control`"),
        "{stderr}"
    );
    let (code, stderr) = run_weftd(&["--cfg", "transport/unicast/acept_timeout:1000"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown configuration key `transport.unicast.acept_timeout`"),
        "{stderr}"
    );
}

#[test]
fn an_unknown_key_in_a_storage_stops_weftd_naming_its_path() {
    let (code, stderr) = run_weftd_on(
        "storage",
        r#"{ plugins: { storage_manager: { storages: {
              demo: { key_expr: "demo/**", volume: "memory", strip_prefx: "demo" } } } } }"#,
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`plugins.storage_manager.storages.demo.strip_prefx`"),
        "{stderr}"
    );
}

#[test]
fn a_required_plugin_weftd_does_not_provide_stops_it() {
    let (code, stderr) = run_weftd(&["--cfg", "plugins/mqtt:{__required__:true,port:1883}"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("plugin `mqtt` is required"), "{stderr}");
}

#[test]
fn a_plugin_weftd_does_not_provide_and_that_is_not_required_is_ignored() {
    // Returns once weftd listens: it started.
    let weftd = Weftd::with_config(
        free_port(),
        "{ plugins: { mqtt: { port: 1883 }, dds: { __required__: false } } }",
        &[],
    );
    drop(weftd);
}
