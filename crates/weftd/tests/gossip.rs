//! Gossip scouting through weftd: peers connected to weftd learn of each other from it
//! and connect to each other directly, as Eclipse Zenoh 1.10.2's peers do through
//! zenohd; weftd, like zenohd, passes nothing from one peer to another, so that what the
//! peers exchange directly arrives once.

use std::time::{Duration, Instant};

use weft::{Config, WhatAmI};
use weft_testkit::zenohd::Zenohd;
use weft_testkit::{free_port, zenoh_python, ZenohNode};

mod common;
use common::{zenoh_client_at, zenoh_node_at, Weftd};

/// A gossiping Zenoh peer of the router on `port`, listening on a port of its own, with
/// `extra` arguments.
fn gossiping_peer(port: u16, extra: &[&str]) -> ZenohNode {
    let listen = format!("tcp/127.0.0.1:{}", free_port());
    let mut args = vec!["--gossip", "--listen", listen.as_str()];
    args.extend_from_slice(extra);
    zenoh_node_at("peer", port, &args)
}

/// The `{"zid", "peers"}` line an `--await-peers` node prints.
fn zid_and_peers(node: &ZenohNode) -> (String, Vec<String>) {
    let v = node.sample(30);
    let peers = v["peers"]
        .as_array()
        .expect("a list of peers")
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    (v["zid"].as_str().unwrap().to_string(), peers)
}

/// The keys a `--liveliness-get` node printed, sorted.
fn keys(node: &ZenohNode) -> Vec<String> {
    let mut keys: Vec<String> = node
        .replies(10)
        .iter()
        .map(|r| r["key"].as_str().unwrap().to_string())
        .collect();
    keys.sort();
    keys
}

#[test]
fn zenoh_peers_of_weftd_connect_to_each_other_and_list_each_token_once() {
    if zenoh_python().is_none() {
        return;
    }
    let weftd = Weftd::start(free_port(), &[]);
    zenoh_peers_mesh_through(weftd.port);
}

/// Two Zenoh peers of the router on `port` connect to each other; a third connects to
/// both and lists each one's token once, as does a client of the router.
fn zenoh_peers_mesh_through(port: u16) {
    let holder = |token: &str| {
        gossiping_peer(
            port,
            &["--token", token, "--await-peers", "1", "--timeout", "60"],
        )
    };
    let a = holder("lv/a");
    let b = holder("lv/b");
    let (a_zid, a_peers) = zid_and_peers(&a);
    let (b_zid, b_peers) = zid_and_peers(&b);
    assert_eq!(
        a_peers,
        std::slice::from_ref(&b_zid),
        "a's sessions with peers"
    );
    assert_eq!(
        b_peers,
        std::slice::from_ref(&a_zid),
        "b's sessions with peers"
    );
    // A third peer connects to both, and lists each token once.
    let getter = gossiping_peer(
        port,
        &[
            "--await-peers",
            "2",
            "--liveliness-get",
            "lv/**",
            "--liveliness-expect",
            "2",
            "--timeout",
            "20",
        ],
    );
    let (_, mut getter_peers) = zid_and_peers(&getter);
    getter_peers.sort();
    let mut both = vec![a_zid, b_zid];
    both.sort();
    assert_eq!(getter_peers, both);
    assert_eq!(keys(&getter), ["lv/a", "lv/b"]);
    // A client of the router sees both peers' tokens, each once.
    let client = zenoh_client_at(
        port,
        &[
            "--liveliness-get",
            "lv/**",
            "--liveliness-expect",
            "2",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(keys(&client), ["lv/a", "lv/b"]);
}

#[test]
fn a_weft_peer_and_a_zenoh_peer_of_weftd_connect_to_each_other() {
    if zenoh_python().is_none() {
        return;
    }
    let weftd = Weftd::start(free_port(), &[]);
    weft_and_zenoh_peers_mesh_through(weftd.port);
}

/// A weft peer and a Zenoh peer of the router on `port` connect to each other and list
/// each other's token once, as does a third peer.
fn weft_and_zenoh_peers_mesh_through(port: u16) {
    let zenoh = gossiping_peer(
        port,
        &[
            "--token",
            "lv/zenoh",
            "--await-peers",
            "1",
            "--timeout",
            "60",
        ],
    );
    let weft = weft::open(Config {
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        listen: vec!["tcp/127.0.0.1:0".parse().unwrap()],
        connect: vec![format!("tcp/127.0.0.1:{port}").parse().unwrap()],
        ..Config::default()
    })
    .expect("a weft peer");
    let _token = weft.declare_token("lv/weft").unwrap();
    let (zenoh_zid, zenoh_peers) = zid_and_peers(&zenoh);
    assert_eq!(zenoh_peers, [weft.zid().to_string()]);
    // The weft peer has a session with the Zenoh peer (and with the router).
    let deadline = Instant::now() + Duration::from_secs(20);
    while !weft.peers().iter().any(|z| z.to_string() == zenoh_zid) {
        assert!(Instant::now() < deadline, "no session with the Zenoh peer");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Each side lists the other's token once.
    let from_weft: Vec<String> = weft
        .liveliness_get("lv/zenoh", Duration::from_secs(5))
        .unwrap()
        .iter()
        .map(|r| r.result.unwrap().key_expr.to_string())
        .collect();
    assert_eq!(from_weft, ["lv/zenoh"]);
    let getter = gossiping_peer(
        port,
        &[
            "--await-peers",
            "2",
            "--liveliness-get",
            "lv/**",
            "--liveliness-expect",
            "2",
            "--timeout",
            "20",
        ],
    );
    let (_, getter_peers) = zid_and_peers(&getter);
    assert_eq!(getter_peers.len(), 2, "{getter_peers:?}");
    assert_eq!(keys(&getter), ["lv/weft", "lv/zenoh"]);
}

#[test]
fn without_gossip_peers_of_weftd_do_not_connect_and_are_not_routed() {
    if zenoh_python().is_none() {
        return;
    }
    let weftd = Weftd::start(free_port(), &["--cfg", "scouting/gossip/enabled:false"]);
    peers_stay_apart_through(weftd.port);
}

/// Two gossiping Zenoh peers of the router on `port`, which does not gossip, do not
/// connect to each other, nor does the router pass one's token to the other; a client
/// of the router sees it.
fn peers_stay_apart_through(port: u16) {
    let _a = gossiping_peer(port, &["--token", "lv/a", "--timeout", "60"]);
    // b waits a bounded time for a session with another peer: none comes.
    let b = gossiping_peer(
        port,
        &[
            "--await-peers",
            "1",
            "--liveliness-get",
            "lv/**",
            "--timeout",
            "2",
        ],
    );
    let (_, b_peers) = zid_and_peers(&b);
    assert!(b_peers.is_empty(), "{b_peers:?}");
    assert!(keys(&b).is_empty());
    let client = zenoh_client_at(port, &["--liveliness-get", "lv/**", "--timeout", "3"]);
    assert_eq!(keys(&client), ["lv/a"]);
}

/// The same peers through the `zenohd` binary (1.10.2) when `WEFT_ZENOHD` names it:
/// weftd and zenohd treat their peers alike.
#[test]
fn zenohd_binary_treats_the_same_peers_alike() {
    if zenoh_python().is_none() {
        return;
    }
    let Some(zenohd) = Zenohd::start(free_port(), &[]) else {
        return;
    };
    zenoh_peers_mesh_through(zenohd.port());
    weft_and_zenoh_peers_mesh_through(zenohd.port());
    let without = Zenohd::start(free_port(), &["--cfg", "scouting/gossip/enabled:false"])
        .expect("zenohd, found above");
    peers_stay_apart_through(without.port());
}
