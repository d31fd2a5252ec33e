//! Storages in weftd: last writer wins, deletions remembered, wildcard queries and
//! updates, several storages answering, and an SQLite volume surviving `kill -9`.

use std::process::Command;
use std::time::{Duration, Instant};

use weft::{GetOptions, PutOptions, Reply};
use weft_testkit::free_port;

mod common;
use common::Weftd;

fn values(rx: std::sync::mpsc::Receiver<Reply>) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = rx
        .iter()
        .filter_map(|r| r.result.ok())
        .map(|s| {
            (
                s.key_expr.to_string(),
                String::from_utf8(s.payload.into_vec()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn get(s: &weft::Session, selector: &str) -> Vec<(String, String)> {
    let options = GetOptions {
        timeout: Some(Duration::from_secs(5)),
        ..GetOptions::default()
    };
    values(s.get(selector, &options).unwrap())
}

fn put_at(s: &weft::Session, key: &str, value: &str, ts: weft::Timestamp) {
    let options = PutOptions {
        timestamp: Some(ts),
        congestion_control: weft::CongestionControl::Block,
        ..PutOptions::default()
    };
    s.put(key, value.as_bytes(), &options).unwrap();
}

/// Waits until the storage answers `expected` (writes travel asynchronously).
fn eventually(s: &weft::Session, selector: &str, expected: &[(&str, &str)]) {
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = get(s, selector);
        if got == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{selector}: got {got:?}, expected {expected:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn memory_storages_keep_the_latest_and_remember_deletions() {
    let weftd = Weftd::with_config(
        free_port(),
        r#"{ plugins: { storage_manager: { storages: {
            all: { key_expr: "demo/**", volume: "memory" },
            stripped: { key_expr: "demo/s/**", strip_prefix: "demo/s", volume: { id: "memory" } },
        } } } }"#,
        &[],
    );
    let c = weftd.weft_client();
    let t1 = c.new_timestamp();
    let t2 = c.new_timestamp();
    let t3 = c.new_timestamp();
    let t4 = c.new_timestamp();
    put_at(&c, "demo/a", "v2", t2);
    put_at(&c, "demo/b", "b", t2);
    c.put("demo/s/x", b"in both", &PutOptions::default())
        .unwrap();
    eventually(&c, "demo/*", &[("demo/a", "v2"), ("demo/b", "b")]);
    // Both storages hold demo/s/x: the querier gets it once (consolidated).
    eventually(&c, "demo/s/**", &[("demo/s/x", "in both")]);
    // An older put loses; a delete is remembered against older puts.
    put_at(&c, "demo/a", "v1", t1);
    c.delete(
        "demo/b",
        &PutOptions {
            timestamp: Some(t3),
            ..PutOptions::default()
        },
    )
    .unwrap();
    put_at(&c, "demo/b", "late", t1);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        get(&c, "demo/a"),
        [("demo/a".to_string(), "v2".to_string())]
    );
    assert!(get(&c, "demo/b").is_empty());
    put_at(&c, "demo/b", "back", t4);
    eventually(&c, "demo/b", &[("demo/b", "back")]);
}

#[test]
fn a_put_or_delete_with_wildcards_updates_every_stored_key_it_includes() {
    // As in Zenoh's storages: the expression itself is not a key; each stored key it
    // includes is updated, last writer wins, in a stripped storage too.
    let weftd = Weftd::with_config(
        free_port(),
        r#"{ plugins: { storage_manager: { storages: {
            all: { key_expr: "wild/**", volume: "memory" },
            stripped: { key_expr: "wild/s/**", strip_prefix: "wild/s", volume: "memory" },
        } } } }"#,
        &[],
    );
    let c = weftd.weft_client();
    let (t1, t2, t3) = (c.new_timestamp(), c.new_timestamp(), c.new_timestamp());
    put_at(&c, "wild/a/x", "ax", t2);
    put_at(&c, "wild/b/x", "bx", t2);
    put_at(&c, "wild/b/y", "by", t2);
    put_at(&c, "wild/s/k", "sk", t2);
    eventually(
        &c,
        "wild/**",
        &[
            ("wild/a/x", "ax"),
            ("wild/b/x", "bx"),
            ("wild/b/y", "by"),
            ("wild/s/k", "sk"),
        ],
    );
    // Older than what is stored: nothing changes.
    put_at(&c, "wild/*/x", "old", t1);
    // Newer: every stored key it includes, and only those.
    put_at(&c, "wild/*/x", "new", t3);
    put_at(&c, "wild/s/*", "s-new", t3);
    eventually(
        &c,
        "wild/**",
        &[
            ("wild/a/x", "new"),
            ("wild/b/x", "new"),
            ("wild/b/y", "by"),
            ("wild/s/k", "s-new"),
        ],
    );
    c.delete("wild/b/**", &PutOptions::default()).unwrap();
    eventually(&c, "wild/**", &[("wild/a/x", "new"), ("wild/s/k", "s-new")]);
}

#[test]
fn sqlite_storage_survives_kill_9() {
    let dir = std::env::temp_dir().join(format!("weftd-sqlite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = format!(
        r#"{{ plugins: {{ storage_manager: {{
            volumes: {{ sqlite: {{ dir: "{}" }} }},
            storages: {{ kept: {{ key_expr: "kept/**", volume: "sqlite" }} }},
        }} }} }}"#,
        dir.display()
    );
    let port = free_port();
    let weftd = Weftd::with_config(port, &config, &[]);
    let c = weftd.weft_client();
    for i in 0..20 {
        c.put(
            &format!("kept/{i}"),
            format!("value {i}").as_bytes(),
            &PutOptions::default(),
        )
        .unwrap();
    }
    eventually(&c, "kept/19", &[("kept/19", "value 19")]);
    drop(c);
    weftd.kill();
    let weftd = Weftd::with_config(port, &config, &[]);
    let c = weftd.weft_client();
    let all = get(&c, "kept/**");
    assert_eq!(all.len(), 20, "{all:?}");
    assert!(all.contains(&("kept/7".to_string(), "value 7".to_string())));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_storage_configuration_is_refused_with_the_key() {
    let dir = std::env::temp_dir().join(format!("weftd-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.json5");
    std::fs::write(
        &path,
        r#"{ plugins: { storage_manager: { storages: { x: { key_expr: "a/**", volume: "tape" } } } } }"#,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_weftd"))
        .args(["-c", path.to_str().unwrap(), "-l", "tcp/127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("plugins.storage_manager.storages.x.volume"),
        "{stderr}"
    );
}
