//! weftd routing for Eclipse Zenoh 1.10.2 clients (and weft clients): pub/sub, get /
//! queryable, liveliness, and a malformed link that must not disturb anyone else.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use weft_testkit::{free_port, pattern, sha256_hex, zenoh_python};

mod common;
use common::{sorted_reply_payloads, Weftd};

#[test]
fn zenoh_clients_publish_and_subscribe_through_weftd() {
    if zenoh_python().is_none() {
        return;
    }
    let weftd = Weftd::start(free_port(), &[]);
    let sub = weftd.zenoh_client(&["--sub", "demo/**", "--count", "100", "--timeout", "30"]);
    std::thread::sleep(Duration::from_millis(300));
    // The publisher's interest is answered with the subscriber: it publishes.
    let publisher = weftd.zenoh_client(&[
        "--put",
        "demo/a",
        "--payload",
        "hello",
        "--encoding",
        "text/plain",
        "--attachment",
        "att",
        "--repeat",
        "3",
        "--delete",
    ]);
    for _ in 0..3 {
        let s = sub.sample(10);
        assert_eq!(s["key"], "demo/a");
        assert_eq!(s["payload"], "hello");
        assert_eq!(s["encoding"], "text/plain");
        assert_eq!(s["attachment"], "att");
    }
    assert_eq!(sub.sample(10)["kind"], "delete");
    assert!(publisher.wait());
    let big = weftd.zenoh_client(&["--put", "demo/big", "--size", "1048576", "--block"]);
    let s = sub.sample(10);
    assert_eq!(s["len"], 1 << 20);
    assert_eq!(s["sha256"], sha256_hex(&pattern(1 << 20)));
    assert!(big.wait());
}

#[test]
fn zenoh_get_and_queryable_through_weftd() {
    if zenoh_python().is_none() {
        return;
    }
    let weftd = Weftd::start(free_port(), &[]);
    let _q1 = weftd.zenoh_client(&["--queryable", "q/**", "--reply", "one", "--timeout", "30"]);
    let _q2 = weftd.zenoh_client(&["--queryable", "q/x", "--reply", "two", "--timeout", "30"]);
    std::thread::sleep(Duration::from_millis(300));
    let getter = weftd.zenoh_client(&[
        "--get",
        "q/x",
        "--target",
        "all",
        "--consolidation",
        "none",
        "--timeout",
        "5",
    ]);
    assert_eq!(sorted_reply_payloads(&getter), ["one", "two"]);
    // No queryable: the query ends at once (ResponseFinal from the router), not at timeout.
    let started = Instant::now();
    let getter = weftd.zenoh_client(&["--get", "none/here", "--timeout", "8"]);
    assert_eq!(getter.line(10), "DONE");
    assert!(started.elapsed() < Duration::from_secs(6));
}

#[test]
fn liveliness_through_weftd() {
    if zenoh_python().is_none() {
        return;
    }
    let weftd = Weftd::start(free_port(), &[]);
    let watcher = weftd.zenoh_client(&[
        "--liveliness-sub",
        "alive/**",
        "--count",
        "2",
        "--timeout",
        "30",
    ]);
    std::thread::sleep(Duration::from_millis(300));
    let holder = weftd.zenoh_client(&["--token", "alive/one", "--timeout", "30"]);
    let s = watcher.sample(10);
    assert_eq!(
        (s["kind"].as_str(), s["key"].as_str()),
        (Some("put"), Some("alive/one"))
    );
    let getter = weftd.zenoh_client(&["--liveliness-get", "alive/**", "--timeout", "3"]);
    let r: serde_json::Value = serde_json::from_str(&getter.line(10)).unwrap();
    assert_eq!(r["key"], "alive/one");
    // The holder dies without undeclaring: weftd withdraws its token.
    drop(holder);
    let s = watcher.sample(15);
    assert_eq!(
        (s["kind"].as_str(), s["key"].as_str()),
        (Some("delete"), Some("alive/one"))
    );
}

#[test]
fn a_malformed_link_is_closed_and_others_keep_working() {
    if zenoh_python().is_none() {
        return;
    }
    let weftd = Weftd::start(free_port(), &[]);
    let sub = weftd.zenoh_client(&["--sub", "ok/**", "--count", "100", "--timeout", "30"]);
    std::thread::sleep(Duration::from_millis(300));
    // Garbage after a valid length prefix: weftd must close this link.
    let port = weftd.port;
    let mut raw = TcpStream::connect(("127.0.0.1", port)).unwrap();
    raw.write_all(&[0x05, 0x00, 0xff, 0xee, 0xdd, 0xcc, 0xbb])
        .unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 64];
    let mut closed = false;
    for _ in 0..10 {
        match raw.read(&mut buf) {
            Ok(0) | Err(_) => {
                closed = true;
                break;
            }
            Ok(_) => {}
        }
    }
    assert!(closed, "weftd kept a link that sent garbage");
    let publisher =
        weftd.zenoh_client(&["--put", "ok/still", "--payload", "fine", "--repeat", "3"]);
    assert_eq!(sub.sample(10)["payload"], "fine");
    assert!(publisher.wait());
}
