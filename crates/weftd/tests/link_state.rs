//! Link state that a liar cannot poison: two weftd routers meshed, and a fake router
//! (a raw session announcing itself a router) telling one of them that the other real
//! router has no links, then that it has none itself, each under the sequence number
//! 2^64 − 1. Samples keep crossing the mesh, every one of a bounded number, while the
//! liar is connected and after it leaves.

use std::time::{Duration, Instant};

use weft::{CongestionControl, FifoReceiver, PutOptions, Sample, Session};
use weft_proto::core::{NetworkQos, Priority, WhatAmI, ZenohId};
use weft_proto::ext::ExtBody;
use weft_proto::network::linkstate::{encode_list, LinkState};
use weft_proto::network::{NetworkMessage, NetworkOam};
use weft_testkit::free_port;
use weft_testkit::raw::RawClient;
use weft_transport::establish::LocalParams;

mod common;
use common::{weft_client_at, Weftd};

/// Samples sent across the mesh in each phase.
const SAMPLES: usize = 200;

const ROUTER_A: &str = "a1a1a1a1";
const ROUTER_B: &str = "b2b2b2b2";
const LIAR: u128 = 0x0c0c_0c0c;

fn zid(hex: &str) -> ZenohId {
    hex.parse().unwrap()
}

/// Puts `SAMPLES` samples tagged `phase` from `publisher`; returns once `rx` received
/// every one of them (at most 20 s), or fails saying how many came.
fn all_cross(publisher: &Session, rx: &FifoReceiver<Sample>, phase: &str) {
    let options = PutOptions {
        congestion_control: CongestionControl::Block,
        ..PutOptions::default()
    };
    for i in 0..SAMPLES {
        publisher
            .put(&format!("mesh/{phase}"), i.to_string().as_bytes(), &options)
            .unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = [false; SAMPLES];
    let mut count = 0;
    while count < SAMPLES {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(sample) = rx.recv_timeout(left) else {
            panic!("{phase}: {count} of {SAMPLES} samples crossed the mesh");
        };
        if sample.key_expr.as_str() != format!("mesh/{phase}") {
            continue;
        }
        let i: usize = std::str::from_utf8(&sample.payload)
            .unwrap()
            .parse()
            .unwrap();
        if !seen[i] {
            seen[i] = true;
            count += 1;
        }
    }
}

/// The liar's list (its `n`th): itself linked to router A, and `victim` without links at
/// the highest sequence number there is (router A named, with nothing said of it, when
/// it is not the victim).
fn lie(liar: ZenohId, n: u64, victim: &str) -> Vec<u8> {
    let entry = |psid, sn, zid, links| LinkState {
        psid,
        sn,
        zid: Some(zid),
        whatami: Some(WhatAmI::Router),
        locators: None,
        links,
        weights: None,
        gateway: false,
    };
    let mut list = vec![entry(0, n, liar, vec![1])];
    if victim == ROUTER_A {
        list.push(entry(1, u64::MAX, zid(ROUTER_A), Vec::new()));
    } else {
        list.push(entry(1, 0, zid(ROUTER_A), Vec::new()));
        list.push(entry(2, u64::MAX, zid(victim), Vec::new()));
    }
    let mut body = Vec::new();
    encode_list(&list, &mut body).unwrap();
    body
}

#[test]
fn a_liar_announcing_the_highest_sequence_number_does_not_break_the_mesh() {
    let (port_a, port_b) = (free_port(), free_port());
    let _a = Weftd::start(port_a, &["-i", ROUTER_A]);
    let endpoint_a = format!("tcp/127.0.0.1:{port_a}");
    let _b = Weftd::start(port_b, &["-i", ROUTER_B, "-e", &endpoint_a]);
    let subscriber = weft_client_at(port_b);
    let (_sub, rx) = subscriber
        .declare_subscriber_channel("mesh/**", 4 * SAMPLES)
        .unwrap();
    let publisher = weft_client_at(port_a);
    // The mesh is up: a probe from A's client reaches B's.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        publisher
            .put("mesh/probe", b"p", &PutOptions::default())
            .unwrap();
        if rx.recv_timeout(Duration::from_millis(100)).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "the mesh never carried a probe");
    }
    all_cross(&publisher, &rx, "before");

    let liar = ZenohId::new(LIAR).unwrap();
    let mut fake = RawClient::connect_with(port_a, LocalParams::new(liar, WhatAmI::Router))
        .expect("the fake router's session");
    for (n, victim) in [(1, ROUTER_B), (2, ROUTER_A)] {
        let body = lie(liar, n, victim);
        let oam = NetworkMessage::Oam(NetworkOam {
            id: NetworkOam::LINK_STATE,
            qos: NetworkQos::DECLARE,
            timestamp: None,
            unknown: Vec::new(),
            body: ExtBody::ZBuf(&body),
        });
        fake.send(&oam, Priority::Control).unwrap();
        // Router A has handled the lie once it answers what the fake sent after it.
        fake.sync(Priority::Control, Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("router A does not answer after lie {n}: {e}"));
        all_cross(&publisher, &rx, &format!("lie-{n}"));
    }

    fake.close().unwrap();
    all_cross(&publisher, &rx, "after");
    publisher.close();
    subscriber.close();
}
