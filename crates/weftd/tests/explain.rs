//! "Why didn't X get Y": weftd explains how a put on a key would be routed, node by node
//! (`@/<zid>/router/explain/<key>?from=<zid>`, and `weft explain`): a matching subscriber
//! receives it; a node without a matching subscription, the source, a peer behind another
//! peer, and a node access control denies the put to do not, each with its reason.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;
use weft_testkit::{free_port, zenoh_python};

mod common;
use common::{zenoh_node_at, Weftd};

/// The `weft` tool, built (once per run) beside the weftd under test, so that it is never
/// stale: cargo builds only this package's binaries for its tests.
fn weft_bin() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let weftd = PathBuf::from(env!("CARGO_BIN_EXE_weftd"));
        let mut cargo = Command::new(env!("CARGO"));
        cargo
            .args(["build", "--quiet", "-p", "weft-cli"])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if weftd.parent().and_then(|d| d.file_name()) == Some("release".as_ref()) {
            cargo.arg("--release");
        }
        let out = cargo.output().expect("run cargo");
        assert!(
            out.status.success(),
            "cannot build weft: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = weftd.with_file_name("weft");
        assert!(path.exists(), "{} is missing", path.display());
        path
    })
}

/// A weft client of `port` with the id `zid`.
fn client(port: u16, zid: &str) -> weft::Session {
    weft::open(weft::Config {
        mode: weft::WhatAmI::Client,
        id: Some(zid.parse().unwrap()),
        multicast_scouting: false,
        connect: vec![format!("tcp/127.0.0.1:{port}").parse().unwrap()],
        ..weft::Config::default()
    })
    .unwrap()
}

/// The explanation weftd gives through `weft explain --json`.
fn explain(port: u16, key: &str, from: &str) -> Value {
    let out = Command::new(weft_bin())
        .args([
            "explain",
            "-m",
            "client",
            "-e",
            &format!("tcp/127.0.0.1:{port}"),
        ])
        .args([
            "--no-multicast-scouting",
            "-k",
            key,
            "--from",
            from,
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    serde_json::from_str(text.lines().next().expect("one router's answer")).unwrap()
}

/// The verdict for node `zid`.
fn verdict<'e>(e: &'e Value, zid: &str) -> &'e Value {
    e["faces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["zid"] == zid)
        .unwrap_or_else(|| panic!("{zid} is not in {e:#}"))
}

#[test]
fn weftd_explains_who_gets_a_put_and_why_not() {
    if zenoh_python().is_none() {
        return;
    }
    let config = r#"{ access_control: {
        enabled: true, default_permission: "allow",
        rules: [{ id: "no-secrets", permission: "deny", flows: ["egress"], messages: ["put"],
                  key_exprs: ["demo/secret/**"] }],
        subjects: [{ id: "outsider", zids: ["cc01"] }],
        policies: [{ rules: ["no-secrets"], subjects: ["outsider"] }],
    } }"#;
    let weftd = Weftd::with_config(free_port(), config, &[]);
    let port = weftd.port;
    let (a, b, c, publisher) = (
        client(port, "aa01"),
        client(port, "bb01"),
        client(port, "cc01"),
        client(port, "dd01"),
    );
    let _sa = a.declare_subscriber("demo/**", |_| {}).unwrap();
    let _sb = b.declare_subscriber("other/**", |_| {}).unwrap();
    let _sc = c.declare_subscriber("demo/**", |_| {}).unwrap();
    // Two Zenoh peers of weftd, not gossiping: one subscribes, the other publishes.
    let _p2 = zenoh_node_at(
        "peer",
        port,
        &[
            "--insert",
            "id=\"ee02\"",
            "--sub",
            "demo/**",
            "--timeout",
            "60",
        ],
    );
    let _p1 = zenoh_node_at(
        "peer",
        port,
        &["--insert", "id=\"ee01\"", "--timeout", "60"],
    );

    // Once every subscription has reached weftd.
    let deadline = Instant::now() + Duration::from_secs(20);
    let secret = loop {
        let e = explain(port, "demo/secret/x", "dd01");
        // Every subscription known (bb01's is on other/**: it matches nothing here).
        let known = ["aa01", "cc01", "ee02"].iter().all(|z| {
            e["faces"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["zid"] == *z && !f["matching"].as_array().unwrap().is_empty())
        }) && e["faces"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["zid"] == "bb01");
        if known {
            break e;
        }
        assert!(
            Instant::now() < deadline,
            "subscriptions never all known: {e:#}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(secret["key"], "demo/secret/x");
    assert_eq!(secret["from"], "dd01");
    let a_ = verdict(&secret, "aa01");
    assert_eq!(a_["receives"], true, "{a_}");
    assert_eq!(a_["matching"][0], "demo/**");
    let b_ = verdict(&secret, "bb01");
    assert_eq!(b_["receives"], false);
    assert!(
        b_["why"].as_str().unwrap().contains("no subscription"),
        "{b_}"
    );
    let c_ = verdict(&secret, "cc01");
    assert_eq!(c_["receives"], false);
    let why = c_["why"].as_str().unwrap();
    assert!(
        why.contains("access control") && why.contains("no-secrets"),
        "{why}"
    );
    let source = verdict(&secret, "dd01");
    assert_eq!(source["receives"], false);
    assert!(
        source["why"].as_str().unwrap().contains("comes from"),
        "{source}"
    );
    // The Zenoh peer subscribed: from a client it is routed to.
    assert_eq!(verdict(&secret, "ee02")["receives"], true);

    // From the other Zenoh peer: a router passes nothing between two peers.
    let from_peer = explain(port, "demo/a", "ee01");
    let p2 = verdict(&from_peer, "ee02");
    assert_eq!(p2["receives"], false);
    assert!(
        p2["why"].as_str().unwrap().contains("between two peers"),
        "{p2}"
    );
    assert_eq!(verdict(&from_peer, "aa01")["receives"], true);
    // Access control applies to demo/secret/** only.
    assert_eq!(verdict(&from_peer, "cc01")["receives"], true);

    // The same through the admin space, as other tools ask.
    let replies = publisher
        .get(
            "@/*/router/explain/demo/a?from=ee01",
            &weft::GetOptions::default(),
        )
        .unwrap();
    let answers: Vec<Value> = replies
        .iter()
        .filter_map(|r| r.result.ok())
        .map(|s| serde_json::from_slice(&s.payload).unwrap())
        .collect();
    assert_eq!(answers.len(), 1);
    assert_eq!(verdict(&answers[0], "ee02")["receives"], false);
    // Wildcards are not explained; an unknown source is an error reply.
    let none = publisher
        .get("@/*/router/explain/demo/*", &weft::GetOptions::default())
        .unwrap();
    assert_eq!(none.iter().count(), 0);
    let unknown = publisher
        .get(
            "@/*/router/explain/demo/a?from=ff09",
            &weft::GetOptions::default(),
        )
        .unwrap();
    let errors: Vec<String> = unknown
        .iter()
        .filter_map(|r| r.result.err())
        .map(|e| String::from_utf8_lossy(&e.payload).into_owned())
        .collect();
    assert!(errors.iter().any(|e| e.contains("ff09")), "{errors:?}");

    // As text, for people.
    let out = Command::new(weft_bin())
        .args([
            "explain",
            "-m",
            "client",
            "-e",
            &format!("tcp/127.0.0.1:{port}"),
        ])
        .args([
            "--no-multicast-scouting",
            "-k",
            "demo/secret/x",
            "--from",
            "dd01",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("sends to  aa01"), "{text}");
    assert!(text.contains("skips     cc01"), "{text}");
    for s in [a, b, c, publisher] {
        s.close();
    }
}
