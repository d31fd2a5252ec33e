//! Helpers shared by the session integration tests.

use weft::{Config, WhatAmI};

/// Opens a weft session on loopback without multicast scouting: listening on an
/// ephemeral TCP port when `listen`, and connecting to `connect` when given.
#[allow(dead_code)] // each test file compiles its own copy of this module
pub(crate) fn session(mode: WhatAmI, listen: bool, connect: Option<&str>) -> weft::Session {
    let connect: Vec<String> = connect.map(str::to_string).into_iter().collect();
    session_to(mode, listen, &connect)
}

/// As [`session`], connecting to every endpoint of `connect`.
pub(crate) fn session_to(mode: WhatAmI, listen: bool, connect: &[String]) -> weft::Session {
    let mut config = Config {
        mode,
        multicast_scouting: false,
        listen: if listen {
            vec!["tcp/127.0.0.1:0".parse().unwrap()]
        } else {
            Vec::new()
        },
        connect: connect.iter().map(|e| e.parse().unwrap()).collect(),
        ..Config::default()
    };
    // Only the endpoints given: a gossiping peer without a listen endpoint would listen
    // on every interface, and its neighbour connect to it there (gossip has tests of its
    // own).
    config.scouting.gossip.enabled = false;
    weft::open(config).expect("open a weft session")
}

/// A weft client connects to a Zenoh node in `zenoh_mode` listening on `endpoint` (a
/// `tls/` or `quic/` one) with `pki`'s listener certificate (mTLS with `mtls`): each
/// publishes to the other's subscriber, weft sends 1 MiB (checked whole by its hash),
/// and weft queries the Zenoh node's queryable.
#[allow(dead_code)] // each test file compiles its own copy of this module
pub(crate) fn weft_client_with_zenoh_listener(
    endpoint: &str,
    zenoh_mode: &str,
    pki: &weft_testkit::certs::Pki,
    mtls: bool,
) {
    use std::time::{Duration, Instant};
    use weft::{GetOptions, PutOptions};

    let mut args = vec!["--mode", zenoh_mode, "--listen", endpoint];
    args.extend(pki.zenoh_listening_args(mtls));
    args.extend([
        "--sub",
        "demo/weft/**",
        "--put",
        "demo/zenoh/x",
        "--payload",
        "from zenoh",
        "--repeat",
        "400",
        "--interval",
        "0.05",
        "--queryable",
        "demo/zenoh/q",
        "--reply",
        "zenoh answers",
        "--count",
        "1000",
        "--timeout",
        "60",
    ]);
    let Some(zenoh) = weft_testkit::ZenohNode::start(&args) else {
        return;
    };
    let weft = weft::open(Config {
        mode: WhatAmI::Client,
        multicast_scouting: false,
        connect: vec![endpoint.parse().unwrap()],
        tls: pki.connecting(mtls),
        ..Config::default()
    })
    .unwrap_or_else(|e| panic!("a weft client of a Zenoh {zenoh_mode} on {endpoint}: {e}"));
    let (_sub, rx) = weft
        .declare_subscriber_channel("demo/zenoh/**", 64)
        .unwrap();
    let s = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a sample from Zenoh");
    assert_eq!(s.payload, b"from zenoh");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        weft.put("demo/weft/a", b"from weft", &PutOptions::default())
            .unwrap();
        let line = zenoh.lines.recv_timeout(Duration::from_millis(100));
        if let Ok(line) = line.as_deref() {
            if line.starts_with('{') {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                assert_eq!(v["payload"], "from weft");
                break;
            }
        }
        assert!(Instant::now() < deadline, "nothing reached Zenoh");
    }
    // 1 MiB from weft to Zenoh.
    let big = weft_testkit::pattern(1 << 20);
    let options = PutOptions {
        congestion_control: weft::CongestionControl::Block,
        ..PutOptions::default()
    };
    weft.put("demo/weft/big", &big, &options).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let v = zenoh.sample(10);
        if v["key"] == "demo/weft/big" {
            assert_eq!(v["len"], 1 << 20);
            assert_eq!(v["sha256"], weft_testkit::sha256_hex(&big));
            break;
        }
        assert!(Instant::now() < deadline, "the large sample never came");
    }
    let replies: Vec<_> = weft
        .get("demo/zenoh/q", &GetOptions::default())
        .unwrap()
        .iter()
        .collect();
    assert_eq!(replies.len(), 1);
    assert_eq!(
        replies[0].result.as_ref().unwrap().payload,
        b"zenoh answers"
    );
}

/// A Zenoh client of the weft node listening on `endpoint` (TLS or QUIC, `pki`'s, mTLS
/// with `mtls`) subscribes; `weft` publishes until the client has a sample, which is
/// checked. The first half of a Zenoh client's exchange with a weft node.
#[allow(dead_code)] // each test file compiles its own copy of this module
pub(crate) fn weft_reaches_a_zenoh_client(
    weft: &weft::Session,
    endpoint: &str,
    pki: &weft_testkit::certs::Pki,
    mtls: bool,
) -> Option<weft_testkit::ZenohNode> {
    use std::time::{Duration, Instant};
    let mut args = zenoh_client_args(endpoint, pki, mtls);
    args.extend([
        "--sub",
        "demo/weft/**",
        "--count",
        "1000",
        "--timeout",
        "60",
    ]);
    let zenoh_sub = weft_testkit::ZenohNode::start(&args)?;
    let deadline = Instant::now() + Duration::from_secs(10);
    let sample = loop {
        weft.put("demo/weft/a", b"from weft", &weft::PutOptions::default())
            .unwrap();
        if let Ok(line) = zenoh_sub.lines.recv_timeout(Duration::from_millis(100)) {
            break serde_json::from_str::<serde_json::Value>(&line).unwrap();
        }
        assert!(Instant::now() < deadline, "nothing reached Zenoh");
    };
    assert_eq!(sample["key"], "demo/weft/a");
    assert_eq!(sample["payload"], "from weft");
    Some(zenoh_sub)
}

/// The `zenoh_node.py` arguments of a Zenoh client connecting to `endpoint` with
/// `pki`'s TLS settings (mTLS with `mtls`).
#[allow(dead_code)] // each test file compiles its own copy of this module
pub(crate) fn zenoh_client_args<'a>(
    endpoint: &'a str,
    pki: &'a weft_testkit::certs::Pki,
    mtls: bool,
) -> Vec<&'a str> {
    let mut args = vec!["--mode", "client", "--connect", endpoint];
    args.extend(pki.zenoh_connecting_args(mtls));
    args
}
