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
