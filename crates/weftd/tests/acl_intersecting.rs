//! A deny rule on a key and the wildcards around it. Under Zenoh's semantics, which weft
//! keeps by default, a put on `a/*`, `a/**`, `**` or `a/b$*` is not denied by a rule
//! denying puts on `a/b`, and reaches the `a/b` subscriber; a subscription on `s/*`
//! receives what is published on `s/b` though subscriptions on `s/b` are denied. weftd
//! warns of both rules at startup, zenohd delivers the same, and with weft's own
//! `access_control.deny_intersecting` every one of those messages is refused.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use weft::{PutOptions, Session};
use weft_testkit::free_port;

mod common;
use common::{weft_client_at, Weftd};

/// Puts on `a/b` denied, subscriptions on `s/b` denied, the rest allowed, for clients on
/// the loopback interface; `extra` goes into the section (weft's own keys).
fn acl(extra: &str) -> String {
    format!(
        r#"{{ access_control: {{ enabled: true, default_permission: "allow", {extra}
            rules: [
              {{ id: "no-put-a-b", messages: ["put"], flows: ["ingress"], permission: "deny",
                 key_exprs: ["a/b"] }},
              {{ id: "no-sub-s-b", messages: ["declare_subscriber"], flows: ["ingress"],
                 permission: "deny", key_exprs: ["s/b"] }},
            ],
            subjects: [ {{ id: "loopback", interfaces: ["lo"] }} ],
            policies: [ {{ rules: ["no-put-a-b", "no-sub-s-b"], subjects: ["loopback"] }} ],
        }} }}"#
    )
}

/// The wildcard puts that a rule denying puts on `a/b` does not include.
const AROUND_A_B: [&str; 4] = ["a/*", "a/**", "**", "a/b$*"];

/// What reaches, through the router on `port`, a subscriber on `a/b` and one on `s/*`
/// of puts on `a/b`, the wildcards around it and `s/b`: `PUT via SUBSCRIPTION`, each put's
/// payload being its key expression. Sorted.
fn delivered_through(port: u16) -> Vec<String> {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let markers = Arc::new(Mutex::new(Vec::<String>::new()));
    let subscriber = weft_client_at(port);
    let mut subs = Vec::new();
    for key in ["a/b", "s/*"] {
        let seen = seen.clone();
        subs.push(
            subscriber
                .declare_subscriber(key, move |s| {
                    let put = String::from_utf8(s.payload.to_vec()).unwrap();
                    seen.lock().unwrap().push(format!("{put} via {key}"));
                })
                .unwrap(),
        );
    }
    let noted = markers.clone();
    subs.push(
        subscriber
            .declare_subscriber("m/*", move |s| {
                noted.lock().unwrap().push(s.key_expr.to_string())
            })
            .unwrap(),
    );
    let publisher = weft_client_at(port);
    let options = PutOptions::default();
    let arrived = |key: &str| markers.lock().unwrap().iter().any(|k| k == key);
    // Settled: the marker subscription, declared last, reached the router, so the
    // others did before it.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !arrived("m/warmup") {
        assert!(Instant::now() < deadline, "nothing reached the subscriber");
        publisher.put("m/warmup", b"w", &options).unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    seen.lock().unwrap().clear();
    for key in std::iter::once("a/b").chain(AROUND_A_B) {
        publisher.put(key, key.as_bytes(), &options).unwrap();
    }
    publisher.put("s/b", b"s/b", &options).unwrap();
    // The same transports, in order: once the end marker is there, every put before it
    // is there too, or was dropped.
    publisher.put("m/end", b"e", &options).unwrap();
    while !arrived("m/end") {
        assert!(Instant::now() < deadline, "the end marker did not arrive");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut got = seen.lock().unwrap().clone();
    got.sort();
    drop(subs);
    close(publisher, subscriber);
    got
}

fn close(a: Session, b: Session) {
    a.close();
    b.close();
}

/// The deliveries by default: every wildcard around `a/b` to the `a/b` subscriber, and
/// `s/b` (and `**`) through `s/*`.
fn zenoh_deliveries() -> Vec<String> {
    let mut expected: Vec<String> = AROUND_A_B.iter().map(|k| format!("{k} via a/b")).collect();
    expected.extend(["** via s/*".into(), "s/b via s/*".into()]);
    expected.sort();
    expected
}

/// A fresh directory for a test's files.
fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("weftd-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Waits (at most 10 s) until the log file `log` holds every text of `wanted`; returns it.
fn log_with(log: &std::path::Path, wanted: &[&str]) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if wanted.iter().all(|w| text.contains(w)) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{wanted:?} not in the log: {text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn by_default_wildcards_get_around_a_deny_rule_as_in_zenoh_and_weftd_warns() {
    let dir = fresh_dir("acl-default");
    let log = dir.join("weftd.log");
    let port = free_port();
    let weftd = Weftd::logging_to(port, &acl(""), &[], &log);
    assert_eq!(delivered_through(port), zenoh_deliveries(), "through weftd");
    let text = log_with(
        &log,
        &[
            r#"deny rule "no-put-a-b" (put ingress on a/b) can be bypassed"#,
            r#"deny rule "no-sub-s-b" (declare_subscriber ingress on s/b) can be bypassed"#,
        ],
    );
    let warnings = text.lines().filter(|l| l.contains("can be bypassed"));
    assert_eq!(warnings.count(), 2, "one line per rule: {text}");
    drop(weftd);

    // zenohd with the same policy delivers the same.
    let path = dir.join("zenohd.json5");
    std::fs::write(&path, acl("")).unwrap();
    let port = free_port();
    let Some(_zenohd) = weft_testkit::zenohd::Zenohd::start(port, &["-c", path.to_str().unwrap()])
    else {
        return;
    };
    assert_eq!(
        delivered_through(port),
        zenoh_deliveries(),
        "through zenohd"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn deny_intersecting_refuses_every_wildcard_around_a_denied_key() {
    let dir = fresh_dir("acl-strict");
    let log = dir.join("weftd.log");
    let port = free_port();
    let weftd = Weftd::logging_to(port, &acl("deny_intersecting: true,"), &[], &log);
    assert_eq!(delivered_through(port), Vec::<String>::new());
    // The denials are logged (the first of each kind from an address, then one line per
    // 10 s); no rule can be bypassed, so none is warned of.
    let text = log_with(&log, &["access control: put ingress on "]);
    assert!(!text.contains("can be bypassed"), "{text}");
    drop(weftd);
    let _ = std::fs::remove_dir_all(&dir);
}
