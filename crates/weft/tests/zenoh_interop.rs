//! weft sessions against Eclipse Zenoh 1.10.2: a weft client through a Zenoh router with
//! Zenoh clients on the other side, and a weft peer with a Zenoh peer, both directions.

use std::time::Duration;

use weft::{Config, PutOptions, SampleKind, WhatAmI};
use weft_testkit::{free_port, pattern, sha256_hex, ZenohNode};

fn weft_session(mode: WhatAmI, connect: &str) -> weft::Session {
    let config = Config {
        mode,
        multicast_scouting: false,
        connect: vec![connect.parse().unwrap()],
        ..Config::default()
    };
    weft::open(config).expect("open a weft session")
}

fn router() -> Option<(ZenohNode, String)> {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let node = ZenohNode::start(&["--mode", "router", "--listen", &endpoint, "--timeout", "60"])?;
    Some((node, endpoint))
}

/// A Zenoh node started with `node_args` (mode and endpoints), subscribed to
/// `demo/weft/**`; `None` when Zenoh is not available.
fn zenoh_subscriber(node_args: &[&str]) -> Option<ZenohNode> {
    let mut args = node_args.to_vec();
    args.extend([
        "--sub",
        "demo/weft/**",
        "--count",
        "1000",
        "--timeout",
        "60",
    ]);
    ZenohNode::start(&args)
}

/// A Zenoh client of the router at `endpoint`, subscribed to `demo/weft/**`.
fn zenoh_client_subscriber(endpoint: &str) -> ZenohNode {
    zenoh_subscriber(&["--mode", "client", "--connect", endpoint]).unwrap()
}

/// Data published by weft reaches Zenoh subscribers, with encoding and attachment.
fn weft_publishes_to_zenoh(weft: &weft::Session, zenoh_sub: &ZenohNode) {
    let options = PutOptions {
        encoding: "text/plain".into(),
        attachment: Some(b"att".to_vec()),
        congestion_control: weft::CongestionControl::Block,
        ..PutOptions::default()
    };
    let publisher = weft.declare_publisher("demo/weft/a", options).unwrap();
    // The publisher sends once the Zenoh side's subscriber is known.
    let mut first = None;
    for _ in 0..50 {
        publisher.put(b"x").unwrap();
        if let Ok(line) = zenoh_sub.lines.recv_timeout(Duration::from_millis(100)) {
            first = Some(line);
            break;
        }
    }
    let first: serde_json::Value = serde_json::from_str(&first.expect("a first sample")).unwrap();
    assert_eq!(first["key"], "demo/weft/a");
    assert_eq!(first["payload"], "x");
    assert_eq!(first["encoding"], "text/plain");
    assert_eq!(first["attachment"], "att");
    // Drain the retries, then the real test: 1 byte, 8 bytes, 1 MiB, delete.
    std::thread::sleep(Duration::from_millis(300));
    while zenoh_sub.lines.try_recv().is_ok() {}
    publisher.put(b"1").unwrap();
    publisher.put(b"8bytes!!").unwrap();
    let big = pattern(1 << 20);
    publisher.put(&big).unwrap();
    publisher.delete().unwrap();
    let s = zenoh_sub.sample(10);
    assert_eq!(
        (s["payload"].as_str(), s["len"].as_u64()),
        (Some("1"), Some(1))
    );
    assert_eq!(zenoh_sub.sample(10)["payload"], "8bytes!!");
    let s = zenoh_sub.sample(10);
    assert_eq!(s["len"], 1 << 20);
    assert_eq!(s["sha256"], sha256_hex(&big));
    assert_eq!(zenoh_sub.sample(10)["kind"], "delete");
}

/// Data published by Zenoh reaches a weft subscriber with a wildcard.
fn zenoh_publishes_to_weft(weft: &weft::Session, connect_args: &[&str]) {
    let (_sub, rx) = weft
        .declare_subscriber_channel("demo/zenoh/**", 64)
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let mut args = connect_args.to_vec();
    args.extend([
        "--put",
        "demo/zenoh/x/y",
        "--payload",
        "from zenoh",
        "--encoding",
        "application/json",
        "--attachment",
        "meta",
        "--repeat",
        "3",
        "--delete",
    ]);
    let publisher = ZenohNode::start(&args).expect("zenoh publisher");
    let s = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a sample from Zenoh");
    assert_eq!(s.key_expr, "demo/zenoh/x/y");
    assert_eq!(s.payload, b"from zenoh");
    assert_eq!(s.encoding, "application/json");
    assert_eq!(s.attachment.as_deref(), Some(&b"meta"[..]));
    let mut kinds = vec![s.kind];
    while let Ok(s) = rx.recv_timeout(Duration::from_secs(5)) {
        kinds.push(s.kind);
        if s.kind == SampleKind::Delete {
            break;
        }
    }
    assert_eq!(kinds.last(), Some(&SampleKind::Delete), "{kinds:?}");
    assert!(publisher.wait());

    // A big one.
    let mut args = connect_args.to_vec();
    args.extend(["--put", "demo/zenoh/big", "--size", "1048576", "--block"]);
    let publisher = ZenohNode::start(&args).expect("zenoh publisher");
    // A Python process starts first: generous on a loaded machine.
    let s = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the 1 MiB sample");
    assert_eq!(s.payload, pattern(1 << 20));
    assert!(publisher.wait());
}

#[test]
fn weft_client_through_a_zenoh_router() {
    let Some((_router, endpoint)) = router() else {
        return;
    };
    let weft = weft_session(WhatAmI::Client, &endpoint);
    let zenoh_sub = zenoh_client_subscriber(&endpoint);
    weft_publishes_to_zenoh(&weft, &zenoh_sub);
    zenoh_publishes_to_weft(&weft, &["--mode", "client", "--connect", &endpoint]);
}

#[test]
fn weft_publisher_sends_nothing_without_subscribers() {
    let Some((_router, endpoint)) = router() else {
        return;
    };
    let weft = weft_session(WhatAmI::Client, &endpoint);
    let publisher = weft
        .declare_publisher("nobody/listens", PutOptions::default())
        .unwrap();
    // Let the router answer the publisher's interest (DeclareFinal, no subscriber).
    std::thread::sleep(Duration::from_millis(500));
    let before = weft.link_stats().batches_out;
    for _ in 0..1000 {
        publisher.put(b"into the void").unwrap();
    }
    let after = weft.link_stats().batches_out;
    assert_eq!(
        after, before,
        "a publisher with no matching subscriber sent data"
    );
    // Once a subscriber appears, data flows.
    let endpoint2 = endpoint.clone();
    let sub = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint2,
        "--sub",
        "nobody/**",
        "--timeout",
        "30",
    ])
    .unwrap();
    let mut got = false;
    for _ in 0..50 {
        publisher.put(b"now someone listens").unwrap();
        if sub.lines.recv_timeout(Duration::from_millis(100)).is_ok() {
            got = true;
            break;
        }
    }
    assert!(
        got,
        "the publisher did not resume when a subscriber appeared"
    );
}

#[test]
fn weft_peer_with_a_zenoh_peer() {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let Some(zenoh_peer) = zenoh_subscriber(&["--mode", "peer", "--listen", &endpoint]) else {
        return;
    };
    // weft connects to the Zenoh peer, and listens for the Zenoh peer that publishes.
    let config = Config {
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        connect: vec![endpoint.parse().unwrap()],
        listen: vec!["tcp/127.0.0.1:0".parse().unwrap()],
        ..Config::default()
    };
    let weft = weft::open(config).unwrap();
    weft_publishes_to_zenoh(&weft, &zenoh_peer);
    let weft_endpoint = weft.listen_endpoints()[0].clone();
    zenoh_publishes_to_weft(&weft, &["--mode", "peer", "--connect", &weft_endpoint]);
}

#[test]
fn weft_client_reconnects_and_redeclares_after_a_router_restart() {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let Some(router) =
        ZenohNode::start(&["--mode", "router", "--listen", &endpoint, "--timeout", "60"])
    else {
        return;
    };
    let weft = weft_session(WhatAmI::Client, &endpoint);
    let (_sub, rx) = weft.declare_subscriber_channel("re/**", 16).unwrap();
    let _token = weft.declare_token("re/token").unwrap();
    drop(router);
    // While disconnected, a put is dropped, not queued.
    std::thread::sleep(Duration::from_millis(300));
    assert!(weft.peers().is_empty());
    weft.put("lost/x", b"nobody", &PutOptions::default())
        .unwrap();
    let _router =
        ZenohNode::start(&["--mode", "router", "--listen", &endpoint, "--timeout", "60"]).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while weft.peers().is_empty() {
        assert!(std::time::Instant::now() < deadline, "no reconnection");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The subscriber was declared again: a Zenoh client's put reaches it.
    let publisher = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--put",
        "re/again",
        "--payload",
        "back",
        "--repeat",
        "20",
    ])
    .unwrap();
    let s = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("data after reconnection");
    assert_eq!(
        (s.key_expr.as_str(), s.payload.as_slice()),
        ("re/again", &b"back"[..])
    );
    drop(publisher);
    // And the token too.
    let getter = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--liveliness-get",
        "re/**",
        "--timeout",
        "3",
    ])
    .unwrap();
    let r: serde_json::Value = serde_json::from_str(&getter.line(10)).unwrap();
    assert_eq!(r["key"], "re/token");
}

#[test]
fn weft_client_over_udp_to_a_zenoh_router() {
    let endpoint = format!("udp/127.0.0.1:{}", free_port());
    let Some(_router) =
        ZenohNode::start(&["--mode", "router", "--listen", &endpoint, "--timeout", "60"])
    else {
        return;
    };
    let weft = weft_session(WhatAmI::Client, &endpoint);
    let (_sub, rx) = weft.declare_subscriber_channel("udp/**", 16).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let publisher = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--put",
        "udp/x",
        "--size",
        "70000",
    ])
    .unwrap();
    let s = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a 70000-byte put over UDP");
    assert_eq!(s.payload, pattern(70_000));
    assert!(publisher.wait());
}

#[test]
fn a_weft_priority_link_to_a_zenoh_router_is_refused_and_everything_shares_the_main_link() {
    let Some((_router, endpoint)) = router() else {
        return;
    };
    // Zenoh accepts a second link from the same node only with its multilink extension
    // (which weft does not send): the real-time link is refused with MAX_LINKS.
    let weft = weft::open(Config {
        mode: WhatAmI::Client,
        multicast_scouting: false,
        connect: vec![
            endpoint.parse().unwrap(),
            format!("{endpoint}?prio=1-1").parse().unwrap(),
        ],
        ..Config::default()
    })
    .unwrap();
    let zenoh_sub = zenoh_client_subscriber(&endpoint);
    let real_time = PutOptions {
        priority: weft::Priority::RealTime,
        express: true,
        congestion_control: weft::CongestionControl::Block,
        ..PutOptions::default()
    };
    let mut got = None;
    for _ in 0..50 {
        weft.put("demo/weft/rt", b"now", &real_time).unwrap();
        if let Ok(line) = zenoh_sub.lines.recv_timeout(Duration::from_millis(100)) {
            got = Some(line);
            break;
        }
    }
    let s: serde_json::Value = serde_json::from_str(&got.expect("a real-time sample")).unwrap();
    assert_eq!(s["payload"], "now");
    std::thread::sleep(Duration::from_millis(500));
    let faces = weft.admin().faces;
    assert_eq!(faces.len(), 1, "{faces:?}");
    assert!(faces[0].priority_links.is_empty(), "{faces:?}");
    zenoh_publishes_to_weft(&weft, &["--mode", "client", "--connect", &endpoint]);
}

#[test]
fn a_zenoh_client_whose_link_is_reserved_for_priorities_is_a_whole_session_to_weft() {
    if weft_testkit::zenoh_python().is_none() {
        return;
    }
    // Zenoh offers the range in QoSLink; weft answers with the same extension.
    let weft = weft::open(Config {
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        listen: vec!["tcp/127.0.0.1:0".parse().unwrap()],
        ..Config::default()
    })
    .unwrap();
    let ranged = format!("{}?prio=1-7", weft.listen_endpoints()[0]);
    zenoh_publishes_to_weft(&weft, &["--mode", "client", "--connect", &ranged]);
}

#[test]
fn zenoh_refuses_a_second_link_from_the_same_node_with_max_links() {
    use weft_proto::transport::CloseReason;
    use weft_testkit::raw::{RawClient, RawError};
    use weft_transport::establish::LocalParams;
    let Some((_router, endpoint)) = router() else {
        return;
    };
    let port: u16 = endpoint
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("a port in the router's endpoint");
    let zid = weft::ZenohId::new(0x5eed_0001).unwrap();
    let open = |priorities| {
        let mut params = LocalParams::new(zid, WhatAmI::Client);
        params.link_priorities = priorities;
        RawClient::connect_with(port, params)
    };
    let main = open(None).unwrap_or_else(|e| panic!("the first link is refused: {e:?}"));
    let second = open(Some((weft::Priority::RealTime, weft::Priority::RealTime)));
    assert!(
        matches!(second, Err(RawError::Closed(r)) if r == CloseReason::MAX_LINKS),
        "{:?}",
        second.err()
    );
    main.close().unwrap();
}
