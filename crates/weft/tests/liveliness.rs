//! Liveliness tokens, subscribers and gets: between weft peers, and with Eclipse Zenoh.

use std::sync::mpsc::Receiver;
use std::time::Duration;

use weft::{Sample, SampleKind, WhatAmI};
mod common;
use common::session;
use weft_testkit::{free_port, ZenohNode};

fn channel_subscriber(
    s: &weft::Session,
    key: &str,
    history: bool,
) -> (weft::LivelinessSubscriber, Receiver<Sample>) {
    let (tx, rx) = std::sync::mpsc::sync_channel(64);
    let sub = s
        .declare_liveliness_subscriber(key, history, move |sample| {
            let _ = tx.try_send(sample.clone());
        })
        .unwrap();
    (sub, rx)
}

fn event(rx: &Receiver<Sample>) -> (SampleKind, String) {
    let s = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a liveliness event");
    (s.kind, s.key_expr.into())
}

fn keys(rx: Receiver<weft::Reply>) -> Vec<String> {
    let mut k: Vec<String> = rx
        .iter()
        .map(|r| r.result.unwrap().key_expr.into())
        .collect();
    k.sort();
    k
}

#[test]
fn tokens_between_weft_peers() {
    let a = session(WhatAmI::Peer, true, None);
    let token = a.declare_token("alive/a").unwrap();
    let _other = a.declare_token("alive/b").unwrap();
    let b = session(WhatAmI::Peer, false, Some(&a.listen_endpoints()[0]));
    let (_sub, rx) = channel_subscriber(&b, "alive/**", true);
    let mut first = vec![event(&rx), event(&rx)];
    first.sort_by(|x, y| x.1.cmp(&y.1));
    assert_eq!(
        first,
        [
            (SampleKind::Put, "alive/a".to_string()),
            (SampleKind::Put, "alive/b".to_string())
        ]
    );
    assert_eq!(
        keys(b.liveliness_get("alive/*", Duration::from_secs(1)).unwrap()),
        ["alive/a", "alive/b"]
    );
    drop(token);
    assert_eq!(event(&rx), (SampleKind::Delete, "alive/a".into()));
    // The session holding the other token dies: its token disappears.
    a.close();
    assert_eq!(event(&rx), (SampleKind::Delete, "alive/b".into()));
}

#[test]
fn tokens_with_zenoh_through_a_router() {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let Some(_router) =
        ZenohNode::start(&["--mode", "router", "--listen", &endpoint, "--timeout", "60"])
    else {
        return;
    };
    let weft = session(WhatAmI::Client, false, Some(&endpoint));
    let (_sub, rx) = channel_subscriber(&weft, "live/**", false);
    std::thread::sleep(Duration::from_millis(200));
    // A Zenoh client's token appears, and disappears when its process is killed.
    let holder = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--token",
        "live/zenoh",
        "--timeout",
        "30",
    ])
    .unwrap();
    assert_eq!(event(&rx), (SampleKind::Put, "live/zenoh".into()));
    assert_eq!(
        keys(
            weft.liveliness_get("live/**", Duration::from_secs(3))
                .unwrap()
        ),
        ["live/zenoh"]
    );
    drop(holder);
    assert_eq!(event(&rx), (SampleKind::Delete, "live/zenoh".into()));

    // weft's token seen by a Zenoh liveliness subscriber and a Zenoh liveliness get.
    let watcher = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--liveliness-sub",
        "live/**",
        "--count",
        "2",
        "--timeout",
        "20",
    ])
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let token = weft.declare_token("live/weft").unwrap();
    let s = watcher.sample(10);
    assert_eq!(
        (s["kind"].as_str(), s["key"].as_str()),
        (Some("put"), Some("live/weft"))
    );
    let getter = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--liveliness-get",
        "live/**",
        "--timeout",
        "3",
    ])
    .unwrap();
    let r: serde_json::Value = serde_json::from_str(&getter.line(10)).unwrap();
    assert_eq!(r["key"], "live/weft");
    drop(token);
    let s = watcher.sample(10);
    assert_eq!(
        (s["kind"].as_str(), s["key"].as_str()),
        (Some("delete"), Some("live/weft"))
    );
}

#[test]
fn tokens_with_a_zenoh_peer() {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let Some(zenoh) = ZenohNode::start(&[
        "--mode",
        "peer",
        "--listen",
        &endpoint,
        "--token",
        "peer/zenoh",
        "--liveliness-sub",
        "peer/**",
        "--count",
        "1",
        "--timeout",
        "30",
    ]) else {
        return;
    };
    let weft = session(WhatAmI::Peer, false, Some(&endpoint));
    assert_eq!(
        keys(
            weft.liveliness_get("peer/**", Duration::from_secs(1))
                .unwrap()
        ),
        ["peer/zenoh"]
    );
    let _token = weft.declare_token("peer/weft").unwrap();
    let s = zenoh.sample(10);
    assert_eq!(s["key"], "peer/weft");
}

#[test]
fn a_liveliness_get_returns_every_one_of_5000_tokens() {
    let a = session(WhatAmI::Peer, true, None);
    let _tokens: Vec<_> = (0..5000)
        .map(|i| a.declare_token(&format!("many/{i}")).unwrap())
        .collect();
    let replies = a.liveliness_get("many/*", Duration::from_secs(1)).unwrap();
    assert_eq!(keys(replies).len(), 5000);
}

#[test]
fn a_token_on_a_key_expression_with_wildcards_is_seen_where_it_intersects() {
    // As in Zenoh (an advanced subscriber on `demo/**` declares its detection token on
    // `demo/**/@adv/sub/...`).
    let a = session(WhatAmI::Peer, true, None);
    let _wild = a.declare_token("wild/*/w").unwrap();
    let b = session(WhatAmI::Peer, false, Some(&a.listen_endpoints()[0]));
    let (_sub, rx) = channel_subscriber(&b, "wild/x/**", true);
    assert_eq!(event(&rx), (SampleKind::Put, "wild/*/w".into()));
    assert_eq!(
        keys(
            b.liveliness_get("wild/y/w", Duration::from_secs(1))
                .unwrap()
        ),
        ["wild/*/w"]
    );
    assert!(keys(
        b.liveliness_get("other/**", Duration::from_secs(1))
            .unwrap()
    )
    .is_empty());
    // And with Zenoh: its liveliness subscriber sees the token too.
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let Some(zenoh) = ZenohNode::start(&[
        "--mode",
        "peer",
        "--listen",
        &endpoint,
        "--liveliness-sub",
        "wild/**",
        "--count",
        "1",
        "--timeout",
        "30",
    ]) else {
        return;
    };
    let c = session(WhatAmI::Peer, false, Some(&endpoint));
    let _seen = c.declare_token("wild/**/z").unwrap();
    assert_eq!(zenoh.sample(10)["key"], "wild/**/z");
}
