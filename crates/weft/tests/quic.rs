//! QUIC links: between weft sessions, and with Eclipse Zenoh 1.10.2 both ways (a Zenoh
//! client on a weft router or peer, a weft client on a Zenoh router), with and without
//! mutual TLS, with certificates made by each test.

use std::net::UdpSocket;
use std::time::{Duration, Instant, SystemTime};

use weft::config::{PemSource, TlsSettings};
use weft::{Config, FifoReceiver, GetOptions, PutOptions, Sample, WhatAmI};
use weft_testkit::certs::{pem_file, Pki};
use weft_testkit::ZenohNode;

mod common;

/// A weft session on loopback without multicast scouting.
fn open(
    mode: WhatAmI,
    listen: &[&str],
    connect: &[&str],
    tls: TlsSettings,
) -> Result<weft::Session, weft::OpenError> {
    let mut config = Config {
        mode,
        multicast_scouting: false,
        listen: listen.iter().map(|e| e.parse().unwrap()).collect(),
        connect: connect.iter().map(|e| e.parse().unwrap()).collect(),
        tls,
        ..Config::default()
    };
    // Only the endpoints given (a gossiping peer given nowhere to listen listens on
    // every interface).
    config.scouting.gossip.enabled = false;
    weft::open(config)
}

/// A weft node listening on `quic/127.0.0.1:<ephemeral>`, and that endpoint.
fn quic_listener(mode: WhatAmI, tls: TlsSettings) -> (weft::Session, String) {
    let node = open(mode, &["quic/127.0.0.1:0"], &[], tls).expect("a QUIC listener");
    let bound = node.listen_endpoints()[0].clone();
    assert!(bound.starts_with("quic/127.0.0.1:"), "{bound}");
    assert!(!bound.ends_with(":0"), "{bound}");
    (node, bound)
}

/// A UDP port free on loopback right now.
fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Puts on `key` from `from` until `rx` has a sample (the subscriber's declaration has to
/// reach the publisher first), within 10 s.
fn put_until_received(from: &weft::Session, key: &str, rx: &FifoReceiver<Sample>) -> Sample {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        from.put(key, b"over quic", &PutOptions::default()).unwrap();
        if let Ok(s) = rx.recv_timeout(Duration::from_millis(100)) {
            return s;
        }
        assert!(Instant::now() < deadline, "nothing received on {key}");
    }
}

/// Both sessions publish to each other (a 1 MiB message too), and `b` queries `a`.
fn exchange(a: &weft::Session, b: &weft::Session) {
    let (_sa, at_a) = a.declare_subscriber_channel("quic/to-a/**", 16).unwrap();
    let (_sb, at_b) = b.declare_subscriber_channel("quic/to-b/**", 16).unwrap();
    assert_eq!(
        put_until_received(b, "quic/to-a/x", &at_a).payload,
        b"over quic"
    );
    assert_eq!(
        put_until_received(a, "quic/to-b/y", &at_b).payload,
        b"over quic"
    );
    let big = weft_testkit::pattern(1 << 20);
    let options = PutOptions {
        congestion_control: weft::CongestionControl::Block,
        ..PutOptions::default()
    };
    for (from, to, key) in [(b, &at_a, "quic/to-a/big"), (a, &at_b, "quic/to-b/big")] {
        from.put(key, &big, &options).unwrap();
        // Skipping what is left of put_until_received's repeated small puts.
        let s = loop {
            let s = to
                .recv_timeout(Duration::from_secs(10))
                .expect("the large sample");
            if &*s.key_expr == key {
                break s;
            }
            assert_eq!(
                s.payload, b"over quic",
                "an unexpected sample on {}",
                s.key_expr
            );
        };
        assert!(s.payload == big, "the large sample differs");
    }
    let _q = a
        .declare_queryable("quic/q", true, |q| {
            q.reply("quic/q", b"answer", &PutOptions::default())
                .unwrap();
        })
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let replies: Vec<_> = b
            .get("quic/q", &GetOptions::default())
            .unwrap()
            .iter()
            .collect();
        if let Some(r) = replies.first() {
            assert_eq!(r.result.as_ref().unwrap().payload, b"answer");
            break;
        }
        assert!(Instant::now() < deadline, "no reply over QUIC");
    }
}

/// Waits until `session` has no peer, within `limit`.
fn wait_alone(session: &weft::Session, limit: Duration) {
    let start = Instant::now();
    while !session.peers().is_empty() {
        assert!(
            start.elapsed() < limit,
            "the link is still up after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn weft_sessions_publish_and_query_over_quic() {
    let pki = Pki::new("weft-quic");
    let (router, endpoint) = quic_listener(WhatAmI::Router, pki.listening(false));
    // The certificate names localhost and 127.0.0.1: both are verified.
    for host in ["localhost", "127.0.0.1"] {
        let connect = endpoint.replace("127.0.0.1", host);
        let client =
            open(WhatAmI::Client, &[], &[&connect], pki.connecting(false)).expect("a QUIC client");
        assert_eq!(client.peers(), vec![router.zid()]);
        exchange(&router, &client);
        // Closing one side closes the other.
        client.close();
        wait_alone(&router, Duration::from_secs(5));
    }
}

#[test]
fn bulk_flows_both_ways_at_once_arrive_whole_and_in_order() {
    let pki = Pki::new("weft-quic-bulk");
    let (a, endpoint) = quic_listener(WhatAmI::Peer, pki.listening(false));
    let b = open(WhatAmI::Peer, &[], &[&endpoint], pki.connecting(false)).unwrap();
    const COUNT: usize = 64;
    let (_sa, at_a) = a.declare_subscriber_channel("bulk/to-a", COUNT).unwrap();
    let (_sb, at_b) = b.declare_subscriber_channel("bulk/to-b", COUNT).unwrap();
    put_until_received(&b, "bulk/to-a", &at_a);
    put_until_received(&a, "bulk/to-b", &at_b);
    let options = PutOptions {
        congestion_control: weft::CongestionControl::Block,
        ..PutOptions::default()
    };
    let message = |i: usize| {
        let mut m = weft_testkit::pattern(256 * 1024);
        m[..8].copy_from_slice(&(i as u64).to_le_bytes());
        m
    };
    let (options, message) = (&options, &message);
    std::thread::scope(|s| {
        for (from, key) in [(&a, "bulk/to-b"), (&b, "bulk/to-a")] {
            s.spawn(move || {
                for i in 0..COUNT {
                    from.put(key, &message(i), options).unwrap();
                }
            });
        }
        for rx in [&at_a, &at_b] {
            for i in 0..COUNT {
                let s = rx
                    .recv_timeout(Duration::from_secs(20))
                    .expect("every bulk message");
                assert!(s.payload == message(i), "message {i} differs");
            }
        }
    });
}

#[test]
fn weft_peers_connect_over_quic_with_mtls_and_strangers_are_refused() {
    let pki = Pki::new("weft-quic-mtls");
    let (listener, endpoint) = quic_listener(WhatAmI::Peer, pki.listening(true));
    let endpoint = endpoint.replace("127.0.0.1", "localhost");
    let peer = open(WhatAmI::Peer, &[], &[&endpoint], pki.connecting(true)).unwrap();
    exchange(&listener, &peer);
    assert_eq!(listener.peers(), vec![peer.zid()]);

    // No certificate presented (mTLS off on the client's side), or one of another CA:
    // refused.
    let without = open(WhatAmI::Client, &[], &[&endpoint], pki.connecting(false));
    assert!(
        without.is_err(),
        "a client without a certificate was admitted"
    );
    let stranger = Pki::new("weft-quic-stranger");
    let foreign = TlsSettings {
        root_ca_certificate: pem_file(&pki.ca),
        ..stranger.connecting(true)
    };
    let foreign = open(WhatAmI::Client, &[], &[&endpoint], foreign);
    assert!(foreign.is_err(), "a client of another CA was admitted");
    assert_eq!(listener.peers(), vec![peer.zid()]);
}

#[test]
fn a_quic_client_refuses_a_listener_it_cannot_verify() {
    let pki = Pki::new("weft-quic-untrusted");
    let (_router, endpoint) = quic_listener(WhatAmI::Router, pki.listening(false));
    let other = Pki::new("weft-quic-untrusted-other");
    let refused = open(
        WhatAmI::Client,
        &[],
        &[&endpoint.replace("127.0.0.1", "localhost")],
        other.connecting(false),
    );
    assert!(refused.is_err());
}

#[test]
fn a_listener_named_otherwise_is_refused_unless_names_are_not_verified() {
    let pki = Pki::new("weft-quic-names");
    let elsewhere = pki.authority.issue(&["elsewhere.weft.test"], None);
    let tls = TlsSettings {
        listen_certificate: Some(PemSource::Inline(elsewhere.cert_pem.as_bytes().into())),
        listen_private_key: Some(PemSource::Inline(elsewhere.key_pem.as_bytes().into())),
        ..TlsSettings::default()
    };
    let (router, endpoint) = quic_listener(WhatAmI::Router, tls);
    let verified = open(WhatAmI::Client, &[], &[&endpoint], pki.connecting(false));
    assert!(
        verified.is_err(),
        "a certificate for another name was taken"
    );
    let unverified = format!("{endpoint}#verify_name_on_connect=false");
    let client = open(WhatAmI::Client, &[], &[&unverified], pki.connecting(false))
        .expect("the name unchecked, the CA still checked");
    assert_eq!(client.peers(), vec![router.zid()]);
}

#[test]
fn a_link_reserved_for_priorities_is_a_second_quic_connection() {
    let pki = Pki::new("weft-quic-prio");
    let (a, endpoint) = quic_listener(WhatAmI::Peer, pki.listening(false));
    let (_sub, at_a) = a.declare_subscriber_channel("prio/**", 16).unwrap();
    let reserved = format!("{endpoint}?prio=1-1");
    let b = open(
        WhatAmI::Peer,
        &[],
        &[&endpoint, &reserved],
        pki.connecting(false),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !matches!(a.admin().faces.as_slice(), [f] if f.priority_links.len() == 1) {
        assert!(Instant::now() < deadline, "no priority link");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(b.peers(), vec![a.zid()], "one session, two links");
    let real_time = PutOptions {
        priority: weft::Priority::RealTime,
        ..PutOptions::default()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        b.put("prio/rt", b"real time", &real_time).unwrap();
        if let Ok(s) = at_a.recv_timeout(Duration::from_millis(100)) {
            assert_eq!(s.payload, b"real time");
            break;
        }
        assert!(Instant::now() < deadline, "nothing on the priority link");
    }
}

/// A time `n` seconds from now, to the second (as a certificate holds it).
fn seconds_from_now(n: u64) -> SystemTime {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap();
    SystemTime::UNIX_EPOCH + Duration::from_secs(since.as_secs() + n)
}

#[test]
fn a_quic_link_closes_when_the_listeners_certificate_expires() {
    let pki = Pki::new("weft-quic-expiry");
    let expires = seconds_from_now(3);
    let soon = pki.authority.issue(&["localhost"], Some(expires));
    let tls = TlsSettings {
        listen_certificate: Some(PemSource::Inline(soon.cert_pem.as_bytes().into())),
        listen_private_key: Some(PemSource::Inline(soon.key_pem.as_bytes().into())),
        ..TlsSettings::default()
    };
    let (router, endpoint) = quic_listener(WhatAmI::Router, tls);
    let client = open(
        WhatAmI::Client,
        &[],
        &[&endpoint.replace("127.0.0.1", "localhost")],
        TlsSettings {
            close_link_on_expiration: true,
            ..pki.connecting(false)
        },
    )
    .unwrap();
    assert_eq!(client.peers(), vec![router.zid()]);
    wait_alone(&client, Duration::from_secs(15));
    assert!(
        SystemTime::now() >= expires,
        "closed before the certificate expired"
    );
    wait_alone(&router, Duration::from_secs(5));
}

#[test]
fn certificates_named_on_quic_endpoints_alone_serve_as_well() {
    let pki = Pki::new("weft-quic-endpoint-config");
    let listen = format!(
        "quic/127.0.0.1:0#listen_certificate_file={};listen_private_key_file={}",
        pki.server_cert, pki.server_key
    );
    let router = open(WhatAmI::Router, &[&listen], &[], TlsSettings::default()).unwrap();
    let port = router.listen_endpoints()[0]
        .rsplit_once(':')
        .unwrap()
        .1
        .to_string();
    let ca = std::fs::read_to_string(&pki.ca).unwrap();
    let connect = format!(
        "quic/localhost:{port}#root_ca_certificate_base64={}",
        weft_testkit::certs::base64(&ca)
    );
    let client = open(WhatAmI::Client, &[], &[&connect], TlsSettings::default())
        .expect("a client with its CA on the endpoint");
    exchange(&router, &client);
}

/// A Zenoh client connects to a weft node over QUIC (mTLS with `mtls`): data both ways,
/// a 1 MiB message from Zenoh, and a query from Zenoh to weft.
fn zenoh_client_with_weft(mode: WhatAmI, mtls: bool, label: &str) {
    let pki = Pki::new(label);
    let (weft, endpoint) = quic_listener(mode, pki.listening(mtls));
    // weft to Zenoh.
    let Some(_zenoh_sub) = common::weft_reaches_a_zenoh_client(&weft, &endpoint, &pki, mtls) else {
        return;
    };
    // Zenoh to weft, 1 MiB each.
    let (_sub, rx) = weft
        .declare_subscriber_channel("demo/zenoh/**", 64)
        .unwrap();
    let size = (1usize << 20).to_string();
    let mut args = common::zenoh_client_args(&endpoint, &pki, mtls);
    args.extend([
        "--put",
        "demo/zenoh/big",
        "--size",
        &size,
        "--repeat",
        "20",
        "--interval",
        "0.1",
    ]);
    let _publisher = ZenohNode::start(&args).expect("a Zenoh publisher");
    let s = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a sample from Zenoh over QUIC");
    assert_eq!(s.key_expr.as_str(), "demo/zenoh/big");
    assert!(
        s.payload == weft_testkit::pattern(1 << 20),
        "the large sample differs"
    );
    // A query from Zenoh, answered by weft.
    let _q = weft
        .declare_queryable("demo/weft/q", true, |q| {
            q.reply("demo/weft/q", b"weft answers", &PutOptions::default())
                .unwrap();
        })
        .unwrap();
    let mut args = common::zenoh_client_args(&endpoint, &pki, mtls);
    args.extend(["--get", "demo/weft/q", "--timeout", "10"]);
    let getter = ZenohNode::start(&args).expect("a Zenoh querier");
    let replies = getter.replies(15);
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(replies[0]["payload"], "weft answers", "{replies:?}");
}

#[test]
fn a_zenoh_client_and_a_weft_router_talk_over_quic() {
    zenoh_client_with_weft(WhatAmI::Router, false, "zenoh-quic-router");
}

#[test]
fn a_zenoh_client_and_a_weft_peer_talk_over_quic() {
    zenoh_client_with_weft(WhatAmI::Peer, false, "zenoh-quic-peer");
}

#[test]
fn a_zenoh_client_and_a_weft_router_talk_over_quic_with_mtls() {
    zenoh_client_with_weft(WhatAmI::Router, true, "zenoh-quic-mtls-router");
}

/// A weft client connects to a Zenoh router listening on QUIC (mTLS with `mtls`).
fn weft_client_with_zenoh_router(mtls: bool, label: &str) {
    let pki = Pki::new(label);
    let endpoint = format!("quic/127.0.0.1:{}", free_udp_port());
    common::weft_client_with_zenoh_listener(&endpoint, "router", &pki, mtls);
}

#[test]
fn a_weft_client_and_a_zenoh_router_talk_over_quic() {
    weft_client_with_zenoh_router(false, "zenoh-router-quic");
}

#[test]
fn a_weft_client_and_a_zenoh_router_talk_over_quic_with_mtls() {
    weft_client_with_zenoh_router(true, "zenoh-router-quic-mtls");
}

#[test]
fn a_zenoh_client_without_a_certificate_is_refused_by_a_weft_router_under_mtls() {
    let pki = Pki::new("zenoh-quic-mtls-refused");
    let (router, endpoint) = quic_listener(WhatAmI::Router, pki.listening(true));
    // Zenoh opens no session (its open fails) and the router has no peer.
    let Some(zenoh) = ZenohNode::launch(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--tls-root-ca",
        &pki.ca,
        "--timeout",
        "1",
    ]) else {
        return;
    };
    let first = zenoh.line(20);
    assert!(first.starts_with("OPEN_FAILED"), "{first}");
    assert!(router.peers().is_empty());
}

#[test]
fn a_weft_router_sees_a_zenoh_client_leave_at_once() {
    let pki = Pki::new("zenoh-quic-leaves");
    let (router, endpoint) = quic_listener(WhatAmI::Router, pki.listening(false));
    // The client closes its session after a second.
    let Some(zenoh) = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--tls-root-ca",
        &pki.ca,
        "--queryable",
        "demo/leaving",
        "--timeout",
        "1",
    ]) else {
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while router.peers().is_empty() {
        assert!(Instant::now() < deadline, "the Zenoh client never came");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(zenoh.wait(), "the Zenoh client failed");
    // Well within the lease (10 s): the close came through the link.
    wait_alone(&router, Duration::from_secs(3));
}

/// Access control knows a QUIC client by its certificate's common name, as a TLS one:
/// a rule for `cert_common_names: ["client.weft.test"]` (the PKI's client) applies to it.
#[test]
fn access_control_knows_a_quic_client_by_its_certificate_name() {
    let pki = Pki::new("weft-quic-acl");
    let acl = r#"{ access_control: {
        enabled: true,
        default_permission: "allow",
        rules: [ { id: "no", messages: ["put"], flows: ["ingress"], permission: "deny",
                   key_exprs: ["acl/denied/**"] } ],
        subjects: [ { id: "client", cert_common_names: ["client.weft.test"] } ],
        policies: [ { rules: ["no"], subjects: ["client"] } ],
    } }"#;
    let (mut config, _) = Config::from_json5(acl).unwrap();
    config.mode = WhatAmI::Router;
    config.multicast_scouting = false;
    config.listen = vec!["quic/127.0.0.1:0".parse().unwrap()];
    config.tls = pki.listening(true);
    let router = weft::open(config).unwrap();
    let endpoint = router.listen_endpoints()[0].replace("127.0.0.1", "localhost");
    let (_sub, rx) = router.declare_subscriber_channel("acl/**", 64).unwrap();
    let client = open(WhatAmI::Client, &[], &[&endpoint], pki.connecting(true)).unwrap();

    // Denied, then allowed on the same link: had the first passed, it would come first.
    let deadline = Instant::now() + Duration::from_secs(10);
    let first = loop {
        client
            .put("acl/denied/x", b"no", &PutOptions::default())
            .unwrap();
        client
            .put("acl/allowed/x", b"yes", &PutOptions::default())
            .unwrap();
        if let Ok(s) = rx.recv_timeout(Duration::from_millis(100)) {
            break s;
        }
        assert!(Instant::now() < deadline, "nothing reached the router");
    };
    assert_eq!(first.key_expr.as_str(), "acl/allowed/x");
    while let Ok(s) = rx.recv_timeout(Duration::from_millis(300)) {
        assert_eq!(s.key_expr.as_str(), "acl/allowed/x");
    }
}
