//! weft over a serial line: two pseudo-terminals linked by socat (`weft_testkit::pty`),
//! one weft session listening on one end, another connecting on the other.

use std::time::{Duration, Instant};

use weft::{Config, FifoReceiver, PutOptions, Sample, WhatAmI};
use weft_testkit::pty::PtyPair;

/// A peer listening on `listen` and connecting to `connect` (serial endpoints), nothing
/// else.
fn peer(listen: Option<&str>, connect: Option<&str>) -> weft::Session {
    let mut config = Config {
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        listen: listen.map(|e| e.parse().unwrap()).into_iter().collect(),
        connect: connect.map(|e| e.parse().unwrap()).into_iter().collect(),
        ..Config::default()
    };
    config.scouting.gossip.enabled = false;
    weft::open(config).expect("open a weft session")
}

/// Puts `payload` on `key` from `from` until `rx` has it (the subscriber's declaration
/// may still be on its way), within 10 s.
fn put_until_received(from: &weft::Session, key: &str, payload: &[u8], rx: &FifoReceiver<Sample>) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        from.put(key, payload, &PutOptions::default()).unwrap();
        let wait_until = Instant::now() + Duration::from_millis(200);
        while let Some(left) = wait_until.checked_duration_since(Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(s) if s.key_expr == key && s.payload == payload => return,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        assert!(
            Instant::now() < deadline,
            "{key} never arrived over the serial line"
        );
    }
}

/// Waits until `session` has `n` nodes connected, within 10 s.
fn wait_peers(session: &weft::Session, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while session.peers().len() != n {
        assert!(
            Instant::now() < deadline,
            "{} peers, not {n}",
            session.peers().len()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Puts both ways between `a` and `b`, with `tag` in the keys.
fn exchange(a: &weft::Session, b: &weft::Session, tag: &str) {
    let (_sa, at_a) = a
        .declare_subscriber_channel(&format!("serial/{tag}/to-a"), 64)
        .unwrap();
    let (_sb, at_b) = b
        .declare_subscriber_channel(&format!("serial/{tag}/to-b"), 64)
        .unwrap();
    put_until_received(b, &format!("serial/{tag}/to-a"), b"from b", &at_a);
    put_until_received(a, &format!("serial/{tag}/to-b"), b"from a", &at_b);
    // A batch as large as the serial MTU allows, and a message fragmented over several.
    let big: Vec<u8> = (0..1200u32).map(|i| (i % 251) as u8).collect();
    put_until_received(b, &format!("serial/{tag}/to-a"), &big, &at_a);
    let huge: Vec<u8> = (0..20_000u32).map(|i| (i % 239) as u8).collect();
    put_until_received(a, &format!("serial/{tag}/to-b"), &huge, &at_b);
}

#[test]
fn peers_over_a_serial_line_exchange_puts_both_ways() {
    let Some(line) = PtyPair::new() else { return };
    let a = peer(Some(&line.endpoint(&line.a, "")), None);
    let b = peer(None, Some(&line.endpoint(&line.b, "")));
    wait_peers(&a, 1);
    assert_eq!(
        a.listen_endpoints(),
        [format!("serial/{}", line.a.display())]
    );
    exchange(&a, &b, "first");
}

#[test]
fn a_listener_takes_a_new_session_after_the_first_closes() {
    let Some(line) = PtyPair::new() else { return };
    let a = peer(Some(&line.endpoint(&line.a, "")), None);
    for round in 0..3 {
        let b = peer(None, Some(&line.endpoint(&line.b, "")));
        wait_peers(&a, 1);
        exchange(&a, &b, &format!("round{round}"));
        b.close();
        wait_peers(&a, 0);
    }
}

/// A connecting side that starts again while its session is on sends `I`: the
/// listener ends that session and answers `R`, the old session's link ends on the `R`,
/// and its connector opens a new session, which the listener takes.
#[test]
fn a_connecting_side_that_starts_again_gets_a_new_session() {
    let Some(line) = PtyPair::new() else { return };
    let a = peer(Some(&line.endpoint(&line.a, "")), None);
    let b = peer(
        None,
        Some(&line.endpoint(&line.b, ";exclusive=false;tout=20000")),
    );
    wait_peers(&a, 1);
    exchange(&a, &b, "before");
    let (tx, events) = std::sync::mpsc::channel();
    let _events = a
        .declare_transport_events_listener(false, move |e| {
            let _ = tx.send(e.kind);
        })
        .unwrap();
    let mut init = Vec::new();
    weft_proto::batch::serial::encode(weft_proto::batch::serial::Flags::INIT, &[], &mut init)
        .unwrap();
    // Written into b's end: it reaches a, as a restarted b would send it.
    line.inject(&line.b, &init);
    // a's session ends, then b's connector opens a new one.
    let wait = Duration::from_secs(10);
    assert_eq!(
        events.recv_timeout(wait).expect("the session ends"),
        weft::SampleKind::Delete
    );
    assert_eq!(
        events.recv_timeout(wait).expect("a new session"),
        weft::SampleKind::Put
    );
    wait_peers(&a, 1);
    exchange(&a, &b, "after");
}

#[test]
fn line_noise_between_frames_does_not_end_the_session() {
    let Some(line) = PtyPair::new() else { return };
    let a = peer(Some(&line.endpoint(&line.a, ";exclusive=false")), None);
    let b = peer(None, Some(&line.endpoint(&line.b, ";exclusive=false")));
    wait_peers(&a, 1);
    exchange(&a, &b, "quiet");
    let dropped = weft::metrics::serial_dropped_frames();
    // Noise toward both sides, each burst ended by a delimiter (noise without one costs
    // the frame it runs into, as on Zenoh's line).
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for round in 0..20 {
        let mut noise: Vec<u8> = (0..64 + round * 13)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 24) as u8
            })
            .collect();
        noise.push(0);
        line.inject(if round % 2 == 0 { &line.a } else { &line.b }, &noise);
    }
    exchange(&a, &b, "noisy");
    assert!(
        weft::metrics::serial_dropped_frames() > dropped,
        "no frame was dropped"
    );
    assert_eq!(a.peers().len(), 1);
}

#[test]
fn serial_endpoints_take_zenohs_keys_and_refuse_others() {
    for good in [
        "serial//dev/ttyUSB0#baudrate=115200",
        "serial//dev/ttyUSB0",
        "serial//dev/ttyS1#baudrate=9600;exclusive=false;tout=1000;release_on_close=true",
    ] {
        good.parse::<weft::endpoint::Endpoint>()
            .unwrap_or_else(|e| panic!("{good}: {e}"));
    }
    for (bad, key) in [
        ("serial//dev/ttyUSB0#baudrate=fast", "baudrate"),
        ("serial//dev/ttyUSB0#baudrate=0", "baudrate"),
        ("serial//dev/ttyUSB0#exclusive=yes", "exclusive"),
        ("serial//dev/ttyUSB0#tout=-1", "tout"),
        ("serial//dev/ttyUSB0#baudrate=9600;parity=even", "parity"),
    ] {
        let e = bad
            .parse::<weft::endpoint::Endpoint>()
            .unwrap_err()
            .to_string();
        assert!(e.contains(key), "{bad}: {e}");
    }
    // A device that is not there is refused when the listener opens it.
    let mut config = Config {
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        listen: vec!["serial//dev/weft-no-such-tty#baudrate=9600"
            .parse()
            .unwrap()],
        ..Config::default()
    };
    config.scouting.gossip.enabled = false;
    let e = match weft::open(config) {
        Ok(_) => panic!("a listener on a device that is not there"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("weft-no-such-tty"), "{e}");
}

/// zenohd 1.10.2 built with its serial link, as `WEFT_ZENOHD_SERIAL` names it; `None`
/// (skipped, or failed where `WEFT_REQUIRE_ZENOHD_SERIAL` is set) otherwise.
fn zenohd_serial() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("WEFT_ZENOHD_SERIAL").map(std::path::PathBuf::from);
    match path {
        Some(p) if p.exists() => Some(p),
        _ => {
            weft_testkit::Prerequisite::ZenohdSerial.missing(
                "WEFT_ZENOHD_SERIAL does not name a zenohd 1.10.2 built with the serial link \
                 (cargo install zenohd --version 1.10.2 --locked --features zenoh/transport_serial)",
            );
            None
        }
    }
}

/// zenohd on `port` (TCP) with `args`, multicast scouting off; killed when dropped.
fn start_zenohd(zenohd: &std::path::Path, port: u16, args: &[&str]) -> impl Drop {
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let router = std::process::Command::new(zenohd)
        .args(["-l", &format!("tcp/127.0.0.1:{port}")])
        .args(args)
        .arg("--no-multicast-scouting")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start zenohd");
    let router = Kill(router);
    weft_testkit::wait_for_port(port);
    router
}

/// A weft client on a serial line to zenohd, and another on TCP: puts both ways through
/// zenohd, one of them fragmented over the serial link's small batches.
#[test]
fn a_weft_client_reaches_zenohd_over_a_serial_line() {
    let Some(zenohd) = zenohd_serial() else {
        return;
    };
    let Some(line) = PtyPair::new() else { return };
    let port = weft_testkit::free_port();
    let _router = start_zenohd(&zenohd, port, &["-l", &line.endpoint(&line.a, "")]);
    let client = |endpoint: &str| {
        weft::open(Config {
            mode: WhatAmI::Client,
            multicast_scouting: false,
            connect: vec![endpoint.parse().unwrap()],
            ..Config::default()
        })
        .unwrap_or_else(|e| panic!("a weft client of zenohd on {endpoint}: {e}"))
    };
    let on_serial = client(&line.endpoint(&line.b, ""));
    let on_tcp = client(&format!("tcp/127.0.0.1:{port}"));
    let (_s1, at_serial) = on_serial
        .declare_subscriber_channel("zs/to-serial", 64)
        .unwrap();
    let (_s2, at_tcp) = on_tcp.declare_subscriber_channel("zs/to-tcp", 64).unwrap();
    put_until_received(
        &on_tcp,
        "zs/to-serial",
        b"over tcp, then serial",
        &at_serial,
    );
    put_until_received(&on_serial, "zs/to-tcp", b"over serial, then tcp", &at_tcp);
    let big: Vec<u8> = (0..10_000u32).map(|i| (i % 241) as u8).collect();
    put_until_received(&on_tcp, "zs/to-serial", &big, &at_serial);
    put_until_received(&on_serial, "zs/to-tcp", &big, &at_tcp);
}

/// zenohd connects over a serial line to a weft peer listening on it (Zenoh's `I`,
/// weft's `I+A`): a weft client on zenohd's TCP side and the peer exchange puts.
#[test]
fn zenohd_connects_to_a_weft_listener_over_a_serial_line() {
    let Some(zenohd) = zenohd_serial() else {
        return;
    };
    let Some(line) = PtyPair::new() else { return };
    let listener = peer(Some(&line.endpoint(&line.a, "")), None);
    let port = weft_testkit::free_port();
    let _router = start_zenohd(&zenohd, port, &["-e", &line.endpoint(&line.b, "")]);
    wait_peers(&listener, 1);
    let on_tcp = weft::open(Config {
        mode: WhatAmI::Client,
        multicast_scouting: false,
        connect: vec![format!("tcp/127.0.0.1:{port}").parse().unwrap()],
        ..Config::default()
    })
    .expect("a weft client of zenohd");
    let (_s1, at_peer) = listener
        .declare_subscriber_channel("zl/to-peer", 64)
        .unwrap();
    let (_s2, at_tcp) = on_tcp.declare_subscriber_channel("zl/to-tcp", 64).unwrap();
    put_until_received(&on_tcp, "zl/to-peer", b"through zenohd", &at_peer);
    put_until_received(&listener, "zl/to-tcp", b"from the serial peer", &at_tcp);
    let big: Vec<u8> = (0..10_000u32).map(|i| (i % 233) as u8).collect();
    put_until_received(&on_tcp, "zl/to-peer", &big, &at_peer);
}
