//! Watching a running weftd as its users do.
//!
//! "Why didn't X get Y": weftd explains how a put on a key would be routed, node by node
//! (`@/<zid>/router/explain/<key>?from=<zid>`, and `weft explain`): a matching subscriber
//! receives it; a node without a matching subscription, the source, a peer behind another
//! peer, and a node access control denies the put to do not, each with its reason.
//!
//! `weft top`: the busiest keys, their rates and the publishers and subscribers weftd
//! knows for them.

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

/// `weft COMMAND` as a client of the weftd on `port`, without multicast scouting.
fn weft_at(port: u16, command: &str) -> Command {
    let mut weft = Command::new(weft_bin());
    weft.args([
        command,
        "-m",
        "client",
        "-e",
        &format!("tcp/127.0.0.1:{port}"),
    ])
    .arg("--no-multicast-scouting");
    weft
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
    let out = weft_at(port, "explain")
        .args(["-k", key, "--from", from, "--json"])
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
    // Built before any deadline runs.
    weft_bin();
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
    let out = weft_at(port, "explain")
        .args(["-k", "demo/secret/x", "--from", "dd01"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("sends to  aa01"), "{text}");
    assert!(text.contains("skips     cc01"), "{text}");
    for s in [a, b, c, publisher] {
        s.close();
    }
}

#[test]
fn weft_top_shows_rates_publishers_and_subscribers_per_key() {
    if zenoh_python().is_none() {
        return;
    }
    let weftd = Weftd::start(free_port(), &[]);
    let port = weftd.port;
    // Built first: the publishers below must publish while weft top counts.
    weft_bin();
    // A Zenoh subscriber; weft top; then two Zenoh publishers, 50 and 20 samples a
    // second for 12 s (the last refreshes are counted: the publishers have started).
    let _sub = zenoh_node_at(
        "client",
        port,
        &["--sub", "top/**", "--count", "100000", "--timeout", "60"],
    );
    let top = weft_at(port, "top")
        .args(["-k", "top/**", "--json", "--count", "7"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let publisher = |key: &str, size: &str, repeat: &str, interval: &str| {
        weft_testkit::ZenohNode::launch(&[
            "--mode",
            "client",
            "--connect",
            &endpoint,
            "--put",
            key,
            "--size",
            size,
            "--repeat",
            repeat,
            "--interval",
            interval,
        ])
        .expect("a Zenoh publisher")
    };
    let _fast = publisher("top/fast", "100", "600", "0.02");
    let _slow = publisher("top/slow", "1000", "240", "0.05");
    let out = top.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let refreshes: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(refreshes.len(), 7);
    // The last refreshes: both keys, the busiest first, at their rates within 10 %
    // (the publishers keep their rates by deadlines).
    let last = &refreshes[6]["keys"];
    assert_eq!(last[0]["key"], "top/fast", "{last}");
    assert_eq!(last[1]["key"], "top/slow", "{last}");
    let rate = |row: &Value| row["msgs_per_s"].as_f64().unwrap();
    let fast: f64 = (4..7).map(|i| rate(&refreshes[i]["keys"][0])).sum::<f64>() / 3.0;
    assert!(
        (45.0..=55.0).contains(&fast),
        "{fast} msg/s where 50 were published"
    );
    let slow: f64 = (4..7).map(|i| rate(&refreshes[i]["keys"][1])).sum::<f64>() / 3.0;
    assert!(
        (18.0..=22.0).contains(&slow),
        "{slow} msg/s where 20 were published"
    );
    assert_eq!(last[0]["mean_bytes"], 100.0);
    assert_eq!(last[1]["mean_bytes"], 1000.0);
    // One publisher each, one subscriber (weft top's own not counted).
    for row in last.as_array().unwrap() {
        assert_eq!(row["publishers"], 1, "{row}");
        assert_eq!(row["subscribers"], 1, "{row}");
        // The Zenoh subscriber keeps up: its subscription lost nothing.
        assert_eq!(row["drops_per_s"], 0.0, "{row}");
    }
}
