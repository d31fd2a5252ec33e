//! TLS and mutual TLS links: between weft sessions, and with Eclipse Zenoh 1.10.2, with
//! certificates made by each test.

use std::time::{Duration, Instant, SystemTime};

use weft::config::{PemSource, TlsSettings};
use weft::{Config, FifoReceiver, GetOptions, PutOptions, Sample, WhatAmI};
use weft_testkit::certs::{pem_file, Pki};
use weft_testkit::{free_port, ZenohNode};

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

/// A router listening on `tls/127.0.0.1:<ephemeral>`; its port.
fn tls_router(tls: TlsSettings) -> (weft::Session, u16) {
    let router = open(WhatAmI::Router, &["tls/127.0.0.1:0"], &[], tls).expect("a TLS router");
    let bound = router.listen_endpoints()[0].clone();
    assert!(bound.starts_with("tls/127.0.0.1:"), "{bound}");
    let port = bound.rsplit_once(':').unwrap().1.parse().unwrap();
    (router, port)
}

/// Puts on `key` from `from` until `rx` has a sample (the subscriber's declaration has to
/// reach the publisher first), within 10 s.
fn put_until_received(from: &weft::Session, key: &str, rx: &FifoReceiver<Sample>) -> Sample {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        from.put(key, b"over tls", &PutOptions::default()).unwrap();
        if let Ok(s) = rx.recv_timeout(Duration::from_millis(100)) {
            return s;
        }
        assert!(Instant::now() < deadline, "nothing received on {key}");
    }
}

/// Both sessions publish to each other, and `b` queries `a`.
fn exchange(a: &weft::Session, b: &weft::Session) {
    let (_sa, at_a) = a.declare_subscriber_channel("tls/to-a/**", 16).unwrap();
    let (_sb, at_b) = b.declare_subscriber_channel("tls/to-b/**", 16).unwrap();
    assert_eq!(
        put_until_received(b, "tls/to-a/x", &at_a).payload,
        b"over tls"
    );
    assert_eq!(
        put_until_received(a, "tls/to-b/y", &at_b).payload,
        b"over tls"
    );
    // A large message, in fragments.
    let big: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    let options = PutOptions {
        congestion_control: weft::CongestionControl::Block,
        ..PutOptions::default()
    };
    b.put("tls/to-a/big", &big, &options).unwrap();
    // Skipping what is left of put_until_received's repeated small puts.
    let s = loop {
        let s = at_a
            .recv_timeout(Duration::from_secs(10))
            .expect("the large sample");
        if &*s.key_expr == "tls/to-a/big" {
            break s;
        }
        assert_eq!(
            s.payload, b"over tls",
            "an unexpected sample on {}",
            s.key_expr
        );
    };
    assert!(s.payload == big, "the large sample differs");
    let _q = a
        .declare_queryable("tls/q", true, |q| {
            q.reply("tls/q", b"answer", &PutOptions::default()).unwrap();
        })
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let replies: Vec<_> = b
            .get("tls/q", &GetOptions::default())
            .unwrap()
            .iter()
            .collect();
        if let Some(r) = replies.first() {
            assert_eq!(r.result.as_ref().unwrap().payload, b"answer");
            break;
        }
        assert!(Instant::now() < deadline, "no reply over TLS");
    }
}

#[test]
fn weft_sessions_publish_and_query_over_tls() {
    let pki = Pki::new("weft-tls");
    let (router, port) = tls_router(pki.listening(false));
    // The certificate names localhost and 127.0.0.1: both are verified.
    for host in ["localhost", "127.0.0.1"] {
        let client = open(
            WhatAmI::Client,
            &[],
            &[&format!("tls/{host}:{port}")],
            pki.connecting(false),
        )
        .expect("a TLS client");
        exchange(&router, &client);
        client.close();
    }
}

#[test]
fn weft_peers_connect_over_mtls_and_strangers_are_refused() {
    let pki = Pki::new("weft-mtls");
    let listener = open(
        WhatAmI::Peer,
        &["tls/127.0.0.1:0"],
        &[],
        pki.listening(true),
    )
    .unwrap();
    let endpoint = listener.listen_endpoints()[0].replace("127.0.0.1", "localhost");
    let peer = open(WhatAmI::Peer, &[], &[&endpoint], pki.connecting(true)).unwrap();
    exchange(&listener, &peer);
    assert_eq!(listener.peers(), vec![peer.zid()]);

    // No certificate presented (mTLS off on the client's side), or one from another CA:
    // refused, with the listener's reason in its log.
    let without = open(WhatAmI::Client, &[], &[&endpoint], pki.connecting(false));
    assert!(
        without.is_err(),
        "a client without a certificate was admitted"
    );
    let stranger = Pki::new("weft-mtls-stranger");
    let foreign = TlsSettings {
        root_ca_certificate: pem_file(&pki.ca),
        ..stranger.connecting(true)
    };
    let foreign = open(WhatAmI::Client, &[], &[&endpoint], foreign);
    assert!(foreign.is_err(), "a client of another CA was admitted");
    assert_eq!(listener.peers(), vec![peer.zid()]);
}

#[test]
fn certificates_named_on_the_endpoints_alone_serve_as_well() {
    let pki = Pki::new("weft-endpoint-config");
    let listen = format!(
        "tls/127.0.0.1:0#listen_certificate_file={};listen_private_key_file={}",
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
        "tls/localhost:{port}#root_ca_certificate_base64={}",
        weft_testkit::certs::base64(&ca)
    );
    let client = open(WhatAmI::Client, &[], &[&connect], TlsSettings::default())
        .expect("a client with its CA on the endpoint");
    exchange(&router, &client);
}

#[test]
fn a_tls_client_refuses_a_listener_it_cannot_verify() {
    let pki = Pki::new("weft-untrusted");
    let (_router, port) = tls_router(pki.listening(false));
    let other = Pki::new("weft-untrusted-other");
    let refused = open(
        WhatAmI::Client,
        &[],
        &[&format!("tls/localhost:{port}")],
        other.connecting(false),
    );
    assert!(refused.is_err());
}

/// A time `n` seconds from now, to the second (as a certificate holds it).
fn seconds_from_now(n: u64) -> SystemTime {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap();
    SystemTime::UNIX_EPOCH + Duration::from_secs(since.as_secs() + n)
}

/// Waits until `session` has no peer, within `limit`; returns how long it took.
fn wait_alone(session: &weft::Session, limit: Duration) -> Duration {
    let start = Instant::now();
    while !session.peers().is_empty() {
        assert!(
            start.elapsed() < limit,
            "the link is still up after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    start.elapsed()
}

#[test]
fn a_link_closes_when_the_listeners_certificate_expires() {
    let pki = Pki::new("weft-expiry-server");
    let expires = seconds_from_now(4);
    let soon = pki.authority.issue(&["localhost"], Some(expires));
    let tls = TlsSettings {
        listen_certificate: Some(PemSource::Inline(soon.cert_pem.as_bytes().into())),
        listen_private_key: Some(PemSource::Inline(soon.key_pem.as_bytes().into())),
        ..TlsSettings::default()
    };
    let (router, port) = tls_router(tls);
    let client = open(
        WhatAmI::Client,
        &[],
        &[&format!("tls/localhost:{port}")],
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
fn a_listener_closes_the_link_of_a_client_whose_certificate_expires() {
    let pki = Pki::new("weft-expiry-client");
    let expires = seconds_from_now(4);
    let soon = pki.authority.issue(&["client.weft.test"], Some(expires));
    let (router, port) = tls_router(TlsSettings {
        close_link_on_expiration: true,
        ..pki.listening(true)
    });
    let client = open(
        WhatAmI::Client,
        &[],
        &[&format!("tls/127.0.0.1:{port}")],
        TlsSettings {
            connect_certificate: Some(PemSource::Inline(soon.cert_pem.as_bytes().into())),
            connect_private_key: Some(PemSource::Inline(soon.key_pem.as_bytes().into())),
            ..pki.connecting(true)
        },
    )
    .unwrap();
    // The router adds the client's face right after the client's open returns.
    let deadline = Instant::now() + Duration::from_secs(5);
    while router.peers() != vec![client.zid()] {
        assert!(Instant::now() < deadline, "the router never saw the client");
        std::thread::sleep(Duration::from_millis(10));
    }
    wait_alone(&router, Duration::from_secs(15));
    assert!(
        SystemTime::now() >= expires,
        "closed before the certificate expired"
    );
}

/// A Zenoh client connects to a weft node over TLS (mTLS with `mtls`): data both ways.
fn zenoh_client_with_weft(mode: WhatAmI, mtls: bool, label: &str) {
    let pki = Pki::new(label);
    let weft = open(mode, &["tls/127.0.0.1:0"], &[], pki.listening(mtls)).unwrap();
    let endpoint = weft.listen_endpoints()[0].clone();
    // weft to Zenoh.
    let Some(_zenoh_sub) = common::weft_reaches_a_zenoh_client(&weft, &endpoint, &pki, mtls) else {
        return;
    };
    // Zenoh to weft.
    let (_sub, rx) = weft
        .declare_subscriber_channel("demo/zenoh/**", 64)
        .unwrap();
    let mut args = common::zenoh_client_args(&endpoint, &pki, mtls);
    args.extend([
        "--put",
        "demo/zenoh/x",
        "--payload",
        "from zenoh",
        "--repeat",
        "100",
        "--interval",
        "0.05",
    ]);
    let _publisher = ZenohNode::start(&args).expect("a Zenoh publisher");
    let s = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a sample from Zenoh over TLS");
    assert_eq!(
        (s.key_expr.as_str(), s.payload.as_slice()),
        ("demo/zenoh/x", &b"from zenoh"[..])
    );
}

#[test]
fn a_zenoh_client_and_a_weft_router_talk_over_tls() {
    zenoh_client_with_weft(WhatAmI::Router, false, "zenoh-tls-router");
}

#[test]
fn a_zenoh_client_and_a_weft_peer_talk_over_tls() {
    zenoh_client_with_weft(WhatAmI::Peer, false, "zenoh-tls-peer");
}

#[test]
fn a_zenoh_client_and_a_weft_router_talk_over_mtls() {
    zenoh_client_with_weft(WhatAmI::Router, true, "zenoh-mtls-router");
}

#[test]
fn a_zenoh_client_and_a_weft_peer_talk_over_mtls() {
    zenoh_client_with_weft(WhatAmI::Peer, true, "zenoh-mtls-peer");
}

/// A weft client connects to a Zenoh peer listening on TLS (mTLS with `mtls`).
fn weft_client_with_zenoh_peer(mtls: bool, label: &str) {
    let pki = Pki::new(label);
    let endpoint = format!("tls/127.0.0.1:{}", free_port());
    common::weft_client_with_zenoh_listener(&endpoint, "peer", &pki, mtls);
}

#[test]
fn a_weft_client_and_a_zenoh_peer_talk_over_tls() {
    weft_client_with_zenoh_peer(false, "zenoh-peer-tls");
}

#[test]
fn a_weft_client_and_a_zenoh_peer_talk_over_mtls() {
    weft_client_with_zenoh_peer(true, "zenoh-peer-mtls");
}

#[test]
fn a_zenoh_client_without_a_certificate_is_refused_by_a_weft_router_under_mtls() {
    let pki = Pki::new("zenoh-mtls-refused");
    let (router, port) = tls_router(pki.listening(true));
    let endpoint = format!("tls/127.0.0.1:{port}");
    // Zenoh opens no session (its open fails): no READY, and the router has no peer.
    let Some(python) = weft_testkit::zenoh_python() else {
        return;
    };
    let out = std::process::Command::new(python)
        .arg(weft_testkit::repo_root().join("tests/interop/zenoh_node.py"))
        .args([
            "--mode",
            "client",
            "--connect",
            &endpoint,
            "--tls-root-ca",
            &pki.ca,
        ])
        .args(["--timeout", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("READY"), "{stdout}");
    assert!(router.peers().is_empty());
}

/// Two peers over TLS on small sockets, the lease a minute (no keep-alive is written
/// within a test's seconds), and a reader whose callback holds its link's reading on
/// the sample "hold" until released: the writer's link then fills its socket.
struct HeldReader {
    writer: weft::Session,
    _reader: weft::Session,
    _sub: weft::Subscriber,
    got: std::sync::mpsc::Receiver<Vec<u8>>,
    release: std::sync::mpsc::Sender<()>,
}

impl HeldReader {
    fn new(label: &str) -> Self {
        use std::sync::mpsc;
        use std::sync::Mutex;

        let pki = Pki::new(label);
        let small = weft::config::TcpBuffers {
            send: 64 * 1024,
            recv: 64 * 1024,
        };
        let session = |listen: &[&str], connect: &[&str], tls: TlsSettings| {
            let mut config = Config {
                mode: WhatAmI::Peer,
                multicast_scouting: false,
                listen: listen.iter().map(|e| e.parse().unwrap()).collect(),
                connect: connect.iter().map(|e| e.parse().unwrap()).collect(),
                lease: Duration::from_secs(60),
                tls: TlsSettings {
                    buffers: small,
                    ..tls
                },
                ..Config::default()
            };
            config.scouting.gossip.enabled = false;
            weft::open(config).unwrap()
        };
        let reader = session(&["tls/127.0.0.1:0"], &[], pki.listening(false));
        let endpoint = reader.listen_endpoints()[0].replace("127.0.0.1", "localhost");
        let writer = session(&[], &[&endpoint], pki.connecting(false));
        let (got_tx, got) = mpsc::channel::<Vec<u8>>();
        let (release, released) = mpsc::channel::<()>();
        let released = Mutex::new(released);
        let got_tx = Mutex::new(got_tx);
        let sub = reader
            .declare_subscriber("tls/tail/**", move |s| {
                let _ = got_tx.lock().unwrap().send(s.payload.to_vec());
                if s.payload == b"hold" {
                    let _ = released.lock().unwrap().recv();
                }
            })
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            writer
                .put("tls/tail/x", b"hold", &PutOptions::default())
                .unwrap();
            if let Ok(p) = got.recv_timeout(Duration::from_millis(100)) {
                assert_eq!(p, b"hold");
                break;
            }
            assert!(Instant::now() < deadline, "the reader never subscribed");
        }
        Self {
            writer,
            _reader: reader,
            _sub: sub,
            got,
            release,
        }
    }

    /// Puts a message of five fragments (more than the sockets hold, less than that and
    /// what the link seals ahead of them) while the reader is held, and waits until the
    /// writer's link has taken it whole.
    fn put_big(&self) -> Vec<u8> {
        let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let before = self.writer.link_stats().batches_out;
        let options = PutOptions {
            congestion_control: weft::CongestionControl::Block,
            ..PutOptions::default()
        };
        self.writer.put("tls/tail/big", &big, &options).unwrap();
        wait_batches_out(&self.writer, before + 5);
        big
    }

    /// The large sample, within 5 s (skipping what came after "hold" from the repeated
    /// puts).
    fn expect(&self, big: &[u8]) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let p = self
                .got
                .recv_timeout(left)
                .expect("the large sample never came whole");
            if p != b"hold" {
                assert!(p == big, "the large sample differs");
                return;
            }
        }
    }
}

/// Waits until `writer`'s links have taken `n` batches whole.
fn wait_batches_out(writer: &weft::Session, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while writer.link_stats().batches_out < n {
        assert!(Instant::now() < deadline, "the link never took the message");
        std::thread::yield_now();
    }
}

/// A TLS link seals more than its socket takes at once: once a message is sealed whole,
/// the records the socket has not taken yet still leave as soon as the peer reads again,
/// without waiting for the next message or keep-alive.
#[test]
fn records_sealed_beyond_a_full_socket_leave_when_the_peer_reads_again() {
    let held = HeldReader::new("weft-tls-tail");
    let big = held.put_big();
    held.release.send(()).unwrap();
    held.expect(&big);
}

/// Closing a session whose TLS link holds records its socket has not taken yet: they go
/// before the link's end (within the close's time to flush), not lost with it.
#[test]
fn closing_writes_the_records_sealed_beyond_a_full_socket_first() {
    let held = HeldReader::new("weft-tls-tail-close");
    let big = held.put_big();
    let release = held.release.clone();
    let writer = &held.writer;
    let closing = std::thread::scope(|scope| {
        // The reader reads again once the close has begun (its faces are gone).
        let watcher = scope.spawn(|| {
            let deadline = Instant::now() + Duration::from_secs(10);
            while !writer.peers().is_empty() {
                assert!(Instant::now() < deadline, "the close never began");
                std::thread::yield_now();
            }
            release.send(()).unwrap();
        });
        writer.close();
        watcher.join()
    });
    closing.unwrap();
    held.expect(&big);
}
