//! Routers linked to routers: a line, a triangle, a star of five and a ring of weftd that
//! loses routers, and weftd next to a Zenoh router; Zenoh clients at the ends.

use std::time::{Duration, Instant};

use weft_testkit::zenohd::Zenohd;
use weft_testkit::{free_port, zenoh_python, ZenohNode};

mod common;
use common::{sorted_reply_payloads, zenoh_client_at as client, zenoh_router_at, Weftd};

/// Subscribes on `far/**` at every router of `sub_ports`, publishes probes at `pub_port`
/// until every subscriber has seen one (returns how long that took), then checks that each
/// subscriber receives each of a burst of puts exactly once.
fn check_once(sub_ports: &[u16], pub_port: u16) -> Duration {
    let subs: Vec<ZenohNode> = sub_ports
        .iter()
        .map(|p| {
            client(
                *p,
                &["--sub", "far/**", "--count", "1000", "--timeout", "60"],
            )
        })
        .collect();
    let started = Instant::now();
    let deadline = started + Duration::from_secs(20);
    let mut reached = vec![false; subs.len()];
    while reached.contains(&false) {
        let probe = client(pub_port, &["--put", "far/probe", "--payload", "probe"]);
        assert!(probe.wait());
        for (sub, seen) in subs.iter().zip(&mut reached) {
            while sub.lines.recv_timeout(Duration::from_millis(100)).is_ok() {
                *seen = true;
            }
        }
        assert!(
            Instant::now() < deadline,
            "probes from {pub_port} did not reach the subscribers at {sub_ports:?}: {reached:?}"
        );
    }
    let crossed = started.elapsed();
    std::thread::sleep(Duration::from_millis(300));
    for sub in &subs {
        while sub.lines.try_recv().is_ok() {}
    }
    let publisher = client(
        pub_port,
        &[
            "--put",
            "far/burst",
            "--payload",
            "x",
            "--repeat",
            "20",
            "--interval",
            "0.01",
        ],
    );
    assert!(publisher.wait());
    for (sub, port) in subs.iter().zip(sub_ports) {
        let mut n = 0;
        while let Ok(line) = sub.lines.recv_timeout(Duration::from_millis(1500)) {
            if line.starts_with('{') {
                n += 1;
            }
        }
        assert_eq!(
            n, 20,
            "the subscriber at {port} got each of 20 samples from {pub_port} exactly once"
        );
    }
    crossed
}

/// Publishes from one end until the other end's subscriber sees it; then checks that
/// each of a burst of puts arrives exactly once.
fn check_ends(sub_port: u16, pub_port: u16) {
    check_once(&[sub_port], pub_port);
}

/// A get at `getter_at` on `far/q` with target all reaches every queryable: one reply from
/// each of `replies`, none twice, then the end of the query.
fn check_queries(getter_at: u16, replies: &[&str]) {
    let getter = client(
        getter_at,
        &[
            "--get",
            "far/q",
            "--target",
            "all",
            "--consolidation",
            "none",
            "--timeout",
            "5",
        ],
    );
    let got = sorted_reply_payloads(&getter);
    let mut want: Vec<String> = replies.iter().map(|r| r.to_string()).collect();
    want.sort();
    assert_eq!(got, want, "one reply per queryable");
}

#[test]
fn a_line_of_three_routers() {
    if zenoh_python().is_none() {
        return;
    }
    let (a, b, c) = (free_port(), free_port(), free_port());
    let _ra = Weftd::connected(a, &[]);
    let _rb = Weftd::connected(b, &[a]);
    let _rc = Weftd::connected(c, &[b]);
    check_ends(a, c);
    check_ends(c, a);
}

#[test]
fn weftd_next_to_a_zenoh_router() {
    if zenoh_python().is_none() {
        return;
    }
    let z = free_port();
    let z_endpoint = format!("tcp/127.0.0.1:{z}");
    let _zenohd = zenoh_router_at(&z_endpoint);
    check_next_to_zenoh(z);
}

/// The same against the `zenohd` binary (1.10.2, built from crates.io), when `WEFT_ZENOHD`
/// names it (`scripts/test.sh` installs it; by hand: `cargo install zenohd --version
/// 1.10.2 --locked`, then `WEFT_ZENOHD=<root>/bin/zenohd cargo test -p weftd --test mesh`).
#[test]
fn weftd_next_to_the_zenohd_binary() {
    if zenoh_python().is_none() {
        return;
    }
    let Some(zenohd) = Zenohd::start(free_port(), &[]) else {
        return;
    };
    check_next_to_zenoh(zenohd.port());
}

/// A weftd linked to the Zenoh router at `z`, with Zenoh clients on both: pub/sub exactly
/// once and queries, both ways.
fn check_next_to_zenoh(z: u16) {
    let w = free_port();
    let _weftd = Weftd::connected(w, &[z]);
    check_ends(w, z);
    check_ends(z, w);
    // Queries both ways.
    for (queryable_at, getter_at, reply) in
        [(z, w, "from zenoh's side"), (w, z, "from weft's side")]
    {
        let _q = client(
            queryable_at,
            &["--queryable", "far/q", "--reply", reply, "--timeout", "30"],
        );
        std::thread::sleep(Duration::from_millis(700));
        let getter = client(getter_at, &["--get", "far/q", "--timeout", "5"]);
        let r: serde_json::Value = serde_json::from_str(&getter.line(10)).unwrap();
        assert_eq!(r["payload"], reply);
        assert_eq!(getter.line(10), "DONE");
    }
}

#[test]
fn a_triangle_of_routers_delivers_once() {
    if zenoh_python().is_none() {
        return;
    }
    let (a, b, c) = (free_port(), free_port(), free_port());
    let _ra = Weftd::connected(a, &[]);
    let _rb = Weftd::connected(b, &[a]);
    let _rc = Weftd::connected(c, &[a, b]);
    check_once(&[a, b, c], c);
    check_once(&[a, b, c], a);
    check_once(&[b, c], b);
    // Queries reach the queryables at two corners once each, from the third.
    let _qa = client(
        a,
        &["--queryable", "far/q", "--reply", "at a", "--timeout", "30"],
    );
    let _qb = client(
        b,
        &["--queryable", "far/q", "--reply", "at b", "--timeout", "30"],
    );
    std::thread::sleep(Duration::from_millis(700));
    check_queries(c, &["at a", "at b"]);
    check_queries(a, &["at a", "at b"]);
    // A liveliness token held at b is seen at c once, and withdrawn when its holder dies.
    let watcher = client(
        c,
        &[
            "--liveliness-sub",
            "far/**",
            "--count",
            "2",
            "--timeout",
            "30",
        ],
    );
    std::thread::sleep(Duration::from_millis(500));
    let holder = client(b, &["--token", "far/alive", "--timeout", "30"]);
    let s = watcher.sample(10);
    assert_eq!(
        (s["kind"].as_str(), s["key"].as_str()),
        (Some("put"), Some("far/alive"))
    );
    let getter = client(a, &["--liveliness-get", "far/**", "--timeout", "3"]);
    let r: serde_json::Value = serde_json::from_str(&getter.line(10)).unwrap();
    assert_eq!(r["key"], "far/alive");
    assert_eq!(getter.line(10), "DONE", "the token is listed once");
    drop(holder);
    let s = watcher.sample(15);
    assert_eq!(
        (s["kind"].as_str(), s["key"].as_str()),
        (Some("delete"), Some("far/alive"))
    );
}

#[test]
fn a_star_of_five_routers() {
    if zenoh_python().is_none() {
        return;
    }
    let hub = free_port();
    let _hub = Weftd::connected(hub, &[]);
    let leaves: Vec<u16> = (0..4).map(|_| free_port()).collect();
    let _leaves: Vec<Weftd> = leaves
        .iter()
        .map(|l| Weftd::connected(*l, &[hub]))
        .collect();
    check_once(&[leaves[0], leaves[2], hub], leaves[1]);
    let _q1 = client(
        leaves[0],
        &[
            "--queryable",
            "far/q",
            "--reply",
            "leaf 0",
            "--timeout",
            "30",
        ],
    );
    let _q3 = client(
        leaves[3],
        &[
            "--queryable",
            "far/q",
            "--reply",
            "leaf 3",
            "--timeout",
            "30",
        ],
    );
    std::thread::sleep(Duration::from_millis(700));
    check_queries(leaves[1], &["leaf 0", "leaf 3"]);
}

/// A ring of four routers: traffic between two opposite corners survives the death of
/// either router between them, each time within the lease (10 s), still exactly once.
#[test]
fn a_ring_of_routers_heals_when_a_router_dies() {
    if zenoh_python().is_none() {
        return;
    }
    let (a, b, c, d) = (free_port(), free_port(), free_port(), free_port());
    let _ra = Weftd::connected(a, &[]);
    let rb = Weftd::connected(b, &[a]);
    let _rc = Weftd::connected(c, &[b]);
    let rd = Weftd::connected(d, &[c, a]);
    check_once(&[a], c);
    rb.kill();
    let healed = check_once(&[a], c);
    assert!(
        healed < Duration::from_secs(10),
        "rerouted around b in {healed:?}"
    );
    // b comes back (a new node, same place); then d dies: the way is through b again.
    let _rb = Weftd::connected(b, &[a]);
    check_once(&[a], c);
    rd.kill();
    let healed = check_once(&[a], c);
    assert!(
        healed < Duration::from_secs(10),
        "rerouted around d in {healed:?}"
    );
    check_once(&[c], a);
}

/// A Zenoh router between two weftd: it learns the weft routers through their link-state
/// lists and routes between them, both ways, exactly once.
#[test]
fn a_zenoh_router_between_two_weftd() {
    if zenoh_python().is_none() {
        return;
    }
    let (w1, z, w2) = (free_port(), free_port(), free_port());
    let z_endpoint = format!("tcp/127.0.0.1:{z}");
    let _zenohd = zenoh_router_at(&z_endpoint);
    let _r1 = Weftd::connected(w1, &[z]);
    let _r2 = Weftd::connected(w2, &[z]);
    check_once(&[w2, z], w1);
    check_once(&[w1], w2);
}

/// A Zenoh router that connects to weftd learns what weftd declared before it came (here
/// a storage): weftd sends its link state before its declarations, whose node ids Zenoh
/// resolves through that list (it drops a declaration it cannot resolve).
#[test]
fn a_zenoh_router_connecting_to_weftd_reaches_its_storage() {
    if zenoh_python().is_none() {
        return;
    }
    let w = free_port();
    let weftd = Weftd::with_config(
        w,
        r#"{ plugins: { storage_manager: { storages: {
            far: { key_expr: "far/**", volume: "memory" },
        } } } }"#,
        &[],
    );
    let endpoint = format!("tcp/127.0.0.1:{w}");
    let publisher = ZenohNode::start(&[
        "--mode",
        "router",
        "--connect",
        &endpoint,
        "--put",
        "far/from-zenoh",
        "--payload",
        "stored",
        "--repeat",
        "20",
        "--interval",
        "0.05",
    ])
    .expect("a Zenoh router");
    assert!(publisher.wait());
    let getter = weftd.zenoh_client(&["--get", "far/**", "--timeout", "5"]);
    assert_eq!(sorted_reply_payloads(&getter), ["stored"]);
}
