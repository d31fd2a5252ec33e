//! Gossip scouting with Eclipse Zenoh: weft peers connected to a Zenoh router learn of
//! each other from it and connect to each other directly (a Zenoh router carries nothing
//! between two peers, so what they exchange proves the direct session).

use std::time::{Duration, Instant};

use weft::{Config, PutOptions, WhatAmI};
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
    let deadline = Instant::now() + Duration::from_secs(20);
    while !session.peers().contains(&other.zid()) {
        assert!(
            Instant::now() < deadline,
            "no session with the other peer: {:?}",
            session.peers()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
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
