//! A node cannot take the place of a live session by claiming its ZenohID (ZenohIDs are
//! public: the admin space, scouting and handshakes show them): weftd refuses the
//! newcomer with Close(MAX_LINKS), as Zenoh's router does, counts it, and the live session
//! keeps everything.

mod common;

use std::time::{Duration, Instant};

use common::Weftd;
use weft_proto::core::WhatAmI;
use weft_proto::network::NetworkMessage;
use weft_proto::transport::CloseReason;
use weft_proto::zenoh::PushBody;
use weft_testkit::free_port;
use weft_testkit::raw::{RawClient, RawError};
use weft_transport::establish::LocalParams;

/// The ZenohID of the live session, and of the node claiming it.
const VICTIM: u128 = 0x1d_e471_7001;

/// Opens a raw session with the id `zid` and role `whatami`.
fn claim(port: u16, zid: u128, whatami: WhatAmI) -> Result<RawClient, RawError> {
    let zid = weft::ZenohId::new(zid).unwrap();
    RawClient::connect_with(port, LocalParams::new(zid, whatami))
}

/// Whether `client` receives a put of `payload` within `timeout`.
fn receives(client: &mut RawClient, payload: &[u8], timeout: Duration) -> bool {
    client
        .recv_until(timeout, |m| {
            matches!(m, NetworkMessage::Push(p)
                if matches!(&p.body, PushBody::Put(put) if put.payload == payload))
        })
        .is_ok()
}

#[test]
fn a_node_claiming_the_zenoh_id_of_a_live_session_is_refused_and_the_session_keeps_its_data() {
    let weftd = Weftd::start(free_port(), &[]);
    let mut victim = claim(weftd.port, VICTIM, WhatAmI::Client).unwrap();
    victim.declare_subscriber(1, "identity/**").unwrap();
    let publisher = weftd.weft_client();
    // The victim's subscription has reached weftd once a put reaches it.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        publisher
            .put("identity/probe", b"probe", &weft::PutOptions::default())
            .unwrap();
        if receives(&mut victim, b"probe", Duration::from_millis(200)) {
            break;
        }
        assert!(Instant::now() < deadline, "the victim never got a put");
    }

    // Refused in the handshake (as zenohd does), or closed as soon as it ends: either way
    // with MAX_LINKS, and the claim never gets a session.
    for whatami in [WhatAmI::Client, WhatAmI::Peer] {
        let reason = match claim(weftd.port, VICTIM, whatami) {
            Err(RawError::Closed(reason)) => reason,
            Err(e) => panic!("a {whatami:?} claiming the id: {e:?}, not a Close"),
            Ok(mut claimed) => claimed
                .wait_close(Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("a {whatami:?} claiming the id was kept: {e}")),
        };
        assert_eq!(reason, CloseReason::MAX_LINKS, "{whatami:?}");
    }

    publisher
        .put(
            "identity/after",
            b"still mine",
            &weft::PutOptions::default(),
        )
        .unwrap();
    assert!(
        receives(&mut victim, b"still mine", Duration::from_secs(10)),
        "the live session lost its data to the claims"
    );

    // Counted, for the operator.
    let info = publisher
        .get(
            "@/*/router/metrics?compression=false",
            &weft::GetOptions::default(),
        )
        .unwrap();
    let text: String = info
        .iter()
        .filter_map(|r| r.result.ok())
        .map(|s| String::from_utf8_lossy(s.payload.as_slice()).into_owned())
        .collect();
    assert!(
        text.lines()
            .any(|l| l.starts_with("weft_sessions_refused_total")
                && l.contains("reason=\"duplicate_id\"")
                && l.trim_end().ends_with(" 2")),
        "no count of the two refusals in the metrics: {}",
        text.lines()
            .filter(|l| l.contains("refused"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Puts `count` samples tagged `phase` on `mesh/<phase>` from `publisher`, blocking for
/// room; fails unless `rx` receives every one of them within 20 s.
fn all_cross(
    publisher: &weft::Session,
    rx: &weft::FifoReceiver<weft::Sample>,
    phase: &str,
    count: usize,
) {
    let options = weft::PutOptions {
        congestion_control: weft::CongestionControl::Block,
        ..weft::PutOptions::default()
    };
    let key = format!("mesh/{phase}");
    for i in 0..count {
        publisher
            .put(&key, i.to_string().as_bytes(), &options)
            .unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = std::collections::HashSet::new();
    while seen.len() < count {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(sample) = rx.recv_timeout(left) else {
            panic!(
                "{phase}: {} of {count} samples crossed the mesh",
                seen.len()
            );
        };
        if sample.key_expr.as_str() == key {
            seen.insert(sample.payload.to_vec());
        }
    }
}

#[test]
fn a_node_claiming_a_meshed_routers_id_is_refused_and_the_mesh_carries_everything() {
    const ROUTER_A: u128 = 0xa1a1_a1a1;
    const ROUTER_B: u128 = 0xb2b2_b2b2;
    let (port_a, port_b) = (free_port(), free_port());
    let _a = Weftd::start(port_a, &["-i", &format!("{ROUTER_A:x}")]);
    let endpoint_a = format!("tcp/127.0.0.1:{port_a}");
    let _b = Weftd::start(port_b, &["-i", &format!("{ROUTER_B:x}"), "-e", &endpoint_a]);
    let subscriber = common::weft_client_at(port_b);
    let (_sub, rx) = subscriber
        .declare_subscriber_channel("mesh/**", 1024)
        .unwrap();
    let publisher = common::weft_client_at(port_a);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        publisher
            .put("mesh/probe", b"p", &weft::PutOptions::default())
            .unwrap();
        if rx.recv_timeout(Duration::from_millis(100)).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "the mesh never carried a probe");
    }
    all_cross(&publisher, &rx, "before", 400);

    // Router B's id, claimed at router A by a client, a peer and a router: refused, as
    // zenohd refuses it; the link between the routers stays. (Two routers connecting to
    // each other at once keep one of their two sessions by a rule both apply; a session
    // begun once the first was up is no such case.)
    // Both ways round: which of two routers keeps a simultaneous pair depends on which
    // id is the greater.
    for (n, (port, claimed, whatami)) in [
        (port_a, ROUTER_B, WhatAmI::Client),
        (port_a, ROUTER_B, WhatAmI::Peer),
        (port_a, ROUTER_B, WhatAmI::Router),
        (port_b, ROUTER_A, WhatAmI::Router),
    ]
    .into_iter()
    .enumerate()
    {
        let claim = claim(port, claimed, whatami);
        // While the claim stands (or once it was refused), the mesh carries everything.
        all_cross(&publisher, &rx, &format!("claim-{n}"), 200);
        let reason = match claim {
            Err(RawError::Closed(reason)) => reason,
            Err(e) => panic!("a {whatami:?} claiming a router's id: {e:?}, not a Close"),
            Ok(mut claimed) => claimed
                .wait_close(Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("a {whatami:?} claiming a router's id was kept: {e}")),
        };
        assert_eq!(reason, CloseReason::MAX_LINKS, "{whatami:?}");
    }
    all_cross(&publisher, &rx, "claimed", 400);
}
