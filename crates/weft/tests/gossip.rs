//! Gossip scouting with Eclipse Zenoh: weft peers connected to a Zenoh router learn of
//! each other from it and connect to each other directly (a Zenoh router carries nothing
//! between two peers, so what they exchange proves the direct session); routers told of
//! other routers by the mesh's link-state lists connect to them when their `autoconnect`
//! names routers.

use std::time::{Duration, Instant};

use weft::{Config, PutOptions, WhatAmI, WhatAmIMatcher, ZenohId};
use weft_testkit::{free_port, zenoh_python, ZenohNode};

/// A weft peer listening on a port of its own, connected to `router`, gossiping as
/// `gossip` says.
fn peer(router: &str, gossip: bool) -> weft::Session {
    let mut config = Config {
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        listen: vec!["tcp/127.0.0.1:0".parse().unwrap()],
        connect: vec![router.parse().unwrap()],
        ..Config::default()
    };
    config.scouting.gossip.enabled = gossip;
    weft::open(config).expect("a weft peer")
}

/// A gossiping Zenoh router on `endpoint`.
fn zenoh_router(endpoint: &str) -> ZenohNode {
    ZenohNode::start(&[
        "--mode",
        "router",
        "--gossip",
        "--listen",
        endpoint,
        "--timeout",
        "60",
    ])
    .expect("a Zenoh router")
}

/// Waits until `session` has a session with `other`.
fn wait_connected(session: &weft::Session, other: &weft::Session) {
    wait_face(session, other.zid());
}

#[test]
fn weft_peers_of_a_zenoh_router_connect_to_each_other_and_exchange_samples() {
    if zenoh_python().is_none() {
        return;
    }
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let _router = zenoh_router(&endpoint);
    // A Zenoh router sends peers no DeclareFinal: the opening does not wait for one
    // (`transport.unicast.open_timeout`, 10 s), its first gossip list is enough.
    let start = Instant::now();
    let a = peer(&endpoint, true);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let b = peer(&endpoint, true);
    wait_connected(&a, &b);
    wait_connected(&b, &a);
    assert_eq!(a.peers().len(), 2, "the router and b: {:?}", a.peers());
    let (_sub, samples) = b.declare_subscriber_channel("gossip/**", 16).unwrap();
    // a publishes until b has the sample (b's subscriber reaches a directly).
    let deadline = Instant::now() + Duration::from_secs(20);
    let sample = loop {
        a.put("gossip/a", b"direct", &PutOptions::default())
            .unwrap();
        if let Ok(s) = samples.recv_timeout(Duration::from_millis(200)) {
            break s;
        }
        assert!(Instant::now() < deadline, "b never received a's sample");
    };
    assert_eq!(sample.key_expr.to_string(), "gossip/a");
    assert_eq!(sample.payload.to_vec(), b"direct");
}

#[test]
fn a_weft_peer_without_gossip_connects_to_no_one_it_is_told_of() {
    if zenoh_python().is_none() {
        return;
    }
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let _router = zenoh_router(&endpoint);
    let g = peer(&endpoint, true);
    // The router names g to n when n connects; n, not gossiping, ignores it and tells
    // the router nothing of itself.
    let n = peer(&endpoint, false);
    // A gossiping peer connecting after n meets g: by then n had its chance.
    let h = peer(&endpoint, true);
    wait_connected(&h, &g);
    assert_eq!(
        n.peers().len(),
        1,
        "n with the router alone: {:?}",
        n.peers()
    );
    assert!(!g.peers().contains(&n.zid()), "{:?}", g.peers());
    assert!(!h.peers().contains(&n.zid()), "{:?}", h.peers());
}

/// A weft router listening on a port of its own, connected to `to`; with `autoconnect`,
/// it connects to the routers it learns of (`scouting.gossip.autoconnect: { router:
/// ["router"] }`), else to none (the default).
fn router(to: Option<&str>, autoconnect: bool) -> weft::Session {
    let mut config = Config {
        mode: WhatAmI::Router,
        multicast_scouting: false,
        listen: vec!["tcp/127.0.0.1:0".parse().unwrap()],
        connect: to.map(|e| e.parse().unwrap()).into_iter().collect(),
        ..Config::default()
    };
    if autoconnect {
        config.scouting.gossip.autoconnect = Some(WhatAmIMatcher(WhatAmI::Router.bit()));
    }
    weft::open(config).expect("a weft router")
}

/// Waits until `session` has a session with `zid`.
fn wait_face(session: &weft::Session, zid: ZenohId) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !session.peers().contains(&zid) {
        assert!(
            Instant::now() < deadline,
            "no session with {zid}: {:?}",
            session.peers()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn weft_routers_told_of_each_other_by_a_third_connect_when_autoconnect_names_routers() {
    let a = router(None, false);
    let to_a = a.listen_endpoints()[0].clone();
    let b = router(Some(&to_a), true);
    let c = router(Some(&to_a), true);
    wait_face(&b, c.zid());
    wait_face(&c, b.zid());
    // One session between them, whoever connected first.
    assert_eq!(b.peers().len(), 2, "{:?}", b.peers());
    assert_eq!(c.peers().len(), 2, "{:?}", c.peers());
    // The mesh now routes b's samples to c directly or through a: they arrive once.
    let (_sub, samples) = c.declare_subscriber_channel("mesh/**", 64).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        b.put("mesh/b", b"first", &PutOptions::default()).unwrap();
        if samples.recv_timeout(Duration::from_millis(200)).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "c never received b's sample");
    }
    while samples.try_recv().is_ok() {}
    for i in 0..10u8 {
        b.put("mesh/b", &[i], &PutOptions::default()).unwrap();
    }
    let got: Vec<u8> = (0..10)
        .map(|_| {
            samples
                .recv_timeout(Duration::from_secs(5))
                .unwrap()
                .payload
                .to_vec()[0]
        })
        .collect();
    assert_eq!(got, (0..10u8).collect::<Vec<_>>());
    assert!(
        samples.recv_timeout(Duration::from_millis(300)).is_err(),
        "a sample arrived twice"
    );
}

#[test]
fn weft_routers_connect_to_no_router_they_learn_of_by_default() {
    let a = router(None, false);
    let to_a = a.listen_endpoints()[0].clone();
    let b = router(Some(&to_a), false);
    let c = router(Some(&to_a), false);
    // A router connecting after b and c, and told to, meets both: by then b and c had
    // their chance to connect to each other.
    let d = router(Some(&to_a), true);
    wait_face(&d, b.zid());
    wait_face(&d, c.zid());
    assert!(!b.peers().contains(&c.zid()), "{:?}", b.peers());
    assert!(!c.peers().contains(&b.zid()), "{:?}", c.peers());
}

#[test]
fn weft_routers_of_a_zenoh_router_connect_to_each_other_as_its_lists_tell() {
    if zenoh_python().is_none() {
        return;
    }
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let _z = zenoh_router(&endpoint);
    let b = router(Some(&endpoint), true);
    let c = router(Some(&endpoint), true);
    wait_face(&b, c.zid());
    wait_face(&c, b.zid());
    assert_eq!(b.peers().len(), 2, "{:?}", b.peers());
}

#[test]
fn zenoh_routers_of_a_weft_router_connect_to_each_other_as_its_lists_tell() {
    if zenoh_python().is_none() {
        return;
    }
    let a = router(None, false);
    let to_a = a.listen_endpoints()[0].clone();
    let zenoh = |await_routers: bool| {
        let port = free_port().to_string();
        let listen = format!("tcp/127.0.0.1:{port}");
        let mut args = vec![
            "--mode",
            "router",
            "--gossip",
            "--insert",
            r#"scouting/gossip/autoconnect={"router":["router"],"peer":["router","peer"]}"#,
            "--listen",
            &listen,
            "--connect",
            &to_a,
            "--timeout",
            "20",
        ];
        if await_routers {
            args.extend(["--await-routers", "2"]);
        }
        ZenohNode::start(&args).expect("a Zenoh router")
    };
    let first = zenoh(false);
    let second = zenoh(true);
    let line: serde_json::Value = serde_json::from_str(&second.line(30)).unwrap();
    let routers = line["routers"].as_array().unwrap();
    assert_eq!(
        routers.len(),
        2,
        "the weft router and the other Zenoh router: {line}"
    );
    assert!(
        routers
            .iter()
            .any(|r| r == &serde_json::json!(a.zid().to_string())),
        "{line}"
    );
    drop(first);
}

/// A weft peer with ZenohID `zid`, listening on a port of its own and connected to `to`,
/// gossiping with `multihop`; with `autoconnect`, connecting to the peers it learns of
/// whose ZenohID is smaller than its own (`greater-zid`), else to none.
fn multihop_peer(zid: u128, to: &str, autoconnect: bool) -> weft::Session {
    let mut config = Config {
        id: Some(ZenohId::new(zid).unwrap()),
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        listen: vec!["tcp/127.0.0.1:0".parse().unwrap()],
        connect: vec![to.parse().unwrap()],
        ..Config::default()
    };
    let gossip = &mut config.scouting.gossip;
    gossip.multihop = true;
    gossip.autoconnect = Some(WhatAmIMatcher(if autoconnect {
        WhatAmI::Peer.bit()
    } else {
        0
    }));
    gossip.strategy = [weft::AutoconnectStrategy::GreaterZid; 3];
    weft::open(config).expect("a weft peer")
}

/// A gossiping Zenoh peer with ZenohID `zid` (hex), listening on `listen`, connected to
/// `connect` if given, with `multihop`; with `autoconnect`, connecting to the peers it
/// learns of whose ZenohID is smaller (`greater-zid`), else to none.
fn zenoh_multihop_peer(
    zid: &str,
    listen: &str,
    connect: Option<&str>,
    multihop: bool,
    extra: &[&str],
) -> ZenohNode {
    let id = format!("id=\"{zid}\"");
    let hops = format!("scouting/gossip/multihop={multihop}");
    let mut args = vec![
        "--mode",
        "peer",
        "--gossip",
        "--listen",
        listen,
        "--insert",
        &id,
        "--insert",
        &hops,
        "--insert",
        r#"scouting/gossip/autoconnect_strategy={"peer":{"to_router":"always","to_peer":"greater-zid"}}"#,
        "--timeout",
        "30",
    ];
    if let Some(c) = connect {
        args.extend(["--connect", c]);
    }
    args.extend(extra);
    ZenohNode::start(&args).expect("a Zenoh peer")
}

/// Two weft peers at the ends of a line of two Zenoh peers that connect to no one (w1 —
/// z1 — z2 — w2): w1 hears of w2 only if z1 relays news of a node two hops away, which
/// Zenoh's `multihop: true` does; w1 then connects to w2 (the smaller ZenohID).
#[test]
fn zenoh_peers_with_multihop_tell_weft_peers_of_nodes_two_hops_away() {
    if zenoh_python().is_none() {
        return;
    }
    let (p1, p2) = (
        format!("tcp/127.0.0.1:{}", free_port()),
        format!("tcp/127.0.0.1:{}", free_port()),
    );
    let none = [
        "--insert",
        r#"scouting/gossip/autoconnect={"router":[],"peer":[]}"#,
    ];
    let _z1 = zenoh_multihop_peer("e1", &p1, None, true, &none);
    let _z2 = zenoh_multihop_peer("e2", &p2, Some(&p1), true, &none);
    let w2 = multihop_peer(0x11, &p2, true);
    let w1 = multihop_peer(0x55, &p1, true);
    wait_face(&w1, w2.zid());
    assert_eq!(w1.peers().len(), 2, "z1 and w2: {:?}", w1.peers());
}

/// Two Zenoh peers at the ends of a line of two weft peers that connect to no one (za —
/// w1 — w2 — zb): za hears of zb only if w1 relays news of a node two hops away, which
/// weft's `multihop: true` does; za then connects to zb (the smaller ZenohID).
#[test]
fn weft_peers_with_multihop_tell_zenoh_peers_of_nodes_two_hops_away() {
    if zenoh_python().is_none() {
        return;
    }
    let hub = |zid: u128| {
        let mut config = Config {
            id: Some(ZenohId::new(zid).unwrap()),
            mode: WhatAmI::Peer,
            multicast_scouting: false,
            listen: vec!["tcp/127.0.0.1:0".parse().unwrap()],
            ..Config::default()
        };
        config.scouting.gossip.multihop = true;
        config.scouting.gossip.autoconnect = Some(WhatAmIMatcher(0));
        config
    };
    let w1 = weft::open(hub(0xd1)).unwrap();
    let to_w1 = w1.listen_endpoints()[0].clone();
    let mut second = hub(0xd2);
    second.connect = vec![to_w1.parse().unwrap()];
    let w2 = weft::open(second).unwrap();
    let to_w2 = w2.listen_endpoints()[0].clone();
    wait_face(&w2, w1.zid());
    let (pa, pb) = (
        format!("tcp/127.0.0.1:{}", free_port()),
        format!("tcp/127.0.0.1:{}", free_port()),
    );
    let _zb = zenoh_multihop_peer("20", &pb, Some(&to_w2), true, &[]);
    let za = zenoh_multihop_peer("c0", &pa, Some(&to_w1), true, &["--await-peers", "2"]);
    let line: serde_json::Value = serde_json::from_str(&za.line(40)).unwrap();
    let mut peers: Vec<String> = line["peers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    peers.sort();
    assert_eq!(peers, ["20", w1.zid().to_string().as_str()], "{line}");
}
