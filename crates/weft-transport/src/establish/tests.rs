use weft_proto::core::{Bits, Resolution, WhatAmI, ZenohId};
use weft_proto::transport::{CloseReason, Init, TransportMessage};

use super::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn zid(v: u128) -> ZenohId {
    ZenohId::new(v).unwrap()
}

fn established(p: Progress) -> Negotiated {
    match p {
        Progress::Established(n) => n,
        Progress::Reply => panic!("not established"),
    }
}

#[test]
fn initiator_and_acceptor_agree() {
    let mut client = LocalParams::new(zid(0xC1), WhatAmI::Client);
    client.batch_size = 65480;
    let mut router = LocalParams::new(zid(0xA0A0), WhatAmI::Router);
    router.batch_size = 49152;
    router.lease_ms = 3_500;
    let mut i = Initiator::new(client);
    let mut a = Acceptor::new(router, [7; 16]);
    let (mut to_a, mut to_i) = (Vec::new(), Vec::new());
    i.start(&mut to_a).unwrap();
    assert_eq!(a.on_batch(&to_a, &mut to_i).unwrap(), Progress::Reply);
    assert_eq!(i.on_batch(&to_i, &mut to_a).unwrap(), Progress::Reply);
    let at_a = established(a.on_batch(&to_a, &mut to_i).unwrap());
    let at_i = established(i.on_batch(&to_i, &mut to_a).unwrap());
    assert!(to_a.is_empty());
    assert_eq!(at_i.batch_size, 49152);
    assert_eq!(at_a.batch_size, 49152);
    assert!(at_i.qos && at_a.qos);
    assert_eq!((at_i.patch, at_a.patch), (1, 1));
    assert_eq!(at_i.peer_zid, zid(0xA0A0));
    assert_eq!(at_a.peer_zid, zid(0xC1));
    assert_eq!(at_a.peer_whatami, WhatAmI::Client);
    assert_eq!(at_i.own_initial_sn, at_a.peer_initial_sn);
    assert_eq!(at_a.own_initial_sn, at_i.peer_initial_sn);
    assert_eq!(at_i.peer_lease_ms, 3_500);
    assert_eq!(at_a.peer_lease_ms, 10_000);
    // A handshake message after the end is refused.
    assert_eq!(
        a.on_batch(&to_a, &mut to_i),
        Err(EstablishError::Unexpected {
            expected: "a handshake message",
            got: "an empty batch"
        })
    );
}

#[test]
fn acceptor_answers_a_real_zenoh_client() {
    // InitSyn of an Eclipse Zenoh 1.10.2 client (vector 01): QoS, Shm, Patch 1, batch 65480.
    let syn = hex("c109f20e5848a5d9d3a0c56db98d0f4e1b8e820ac8ff81c2059caab3f40b2701");
    let mut a = Acceptor::new(LocalParams::new(zid(0x77), WhatAmI::Router), [9; 16]);
    let mut out = Vec::new();
    assert_eq!(a.on_batch(&syn, &mut out).unwrap(), Progress::Reply);
    let batch = weft_proto::batch::decode_batch(&out, false).unwrap();
    let weft_proto::batch::BatchMessage::Transport(TransportMessage::Init(ack)) = &batch[0] else {
        panic!("expected InitAck, got {batch:?}");
    };
    assert!(ack.is_ack());
    assert_eq!(ack.batch_size, 65480);
    assert!(ack.qos);
    assert_eq!(ack.patch, Some(1));
    assert!(ack.shm.is_none(), "only extensions we implement are echoed");
    assert_eq!(ack.cookie, Some(&[9u8; 16][..]));
    // The captured OpenSyn echoes the real router's cookie, not ours.
    let open = hex("c20ac2ddae3c3130afd1dc5e09b85994c020eb5cc3e71ab0ce25bbde354ee11485c1fc2badd7932b31c0a34ba9e58e7026d92b5eb95e04364212ebf09ca084a895ff42010001020304050607");
    let err = a.on_batch(&open, &mut out).unwrap_err();
    assert_eq!(err, EstablishError::Cookie);
    assert_eq!(err.close_reason(), Some(CloseReason::INVALID));
}

#[test]
fn initiator_completes_against_a_real_zenoh_router() {
    // Vector 08, connection 3: the router's InitAck (batch 49152, 33-byte cookie, no QoS)
    // and OpenAck (lease 10 s, initial SN 47233038).
    let init_ack = hex("6109f051d78f4f879ab921e13e97187cc9078c0a00c02120bc7e0510a18db032904bb4a56e63d5aefc2eb23c3cd3e41936ed88b81ea27233");
    let cookie = &init_ack[init_ack.len() - 33..];
    let open_ack = hex("620a8ef0c216");
    let mut i = Initiator::new(LocalParams::new(zid(0x0403_0201), WhatAmI::Client));
    let mut out = Vec::new();
    i.start(&mut out).unwrap();
    // No size parameters (defaults), QoS and Patch 1 offered.
    assert_eq!(out, hex("81093201020304812701"));
    assert_eq!(i.on_batch(&init_ack, &mut out).unwrap(), Progress::Reply);
    let syn = weft_proto::batch::decode_batch(&out, false).unwrap();
    let weft_proto::batch::BatchMessage::Transport(TransportMessage::Open(open)) = &syn[0] else {
        panic!("expected OpenSyn");
    };
    assert_eq!(open.cookie, Some(cookie));
    assert_eq!(open.lease_ms, 10_000);
    let n = established(i.on_batch(&open_ack, &mut out).unwrap());
    assert_eq!(n.batch_size, 49152);
    assert!(!n.qos, "the router did not echo QoS");
    assert_eq!(n.patch, 0);
    assert_eq!(n.peer_lease_ms, 10_000);
    assert_eq!(n.peer_initial_sn, 47_233_038);
    assert_eq!(n.peer_zid.to_string(), "8c07c97c18973ee121b99a874f8fd751");
}

#[test]
fn resolution_is_the_smaller_and_larger_answers_are_refused() {
    let mut small = LocalParams::new(zid(1), WhatAmI::Peer);
    small.resolution = Resolution::new(Bits::U16, Bits::U32);
    let mut i = Initiator::new(small);
    let mut a = Acceptor::new(LocalParams::new(zid(2), WhatAmI::Peer), [1; 16]);
    let (mut x, mut y) = (Vec::new(), Vec::new());
    i.start(&mut x).unwrap();
    a.on_batch(&x, &mut y).unwrap();
    i.on_batch(&y, &mut x).unwrap();
    let n = established(a.on_batch(&x, &mut y).unwrap());
    assert_eq!(n.resolution.frame_sn(), Bits::U16);
    assert!(u64::from(n.own_initial_sn) <= Bits::U16.max_sn());

    // An InitAck announcing more than proposed is refused.
    let mut i = Initiator::new(small);
    i.start(&mut x).unwrap();
    let mut ack = Init::syn(WhatAmI::Router, zid(3));
    ack.cookie = Some(&[1, 2]);
    let mut bytes = Vec::new();
    TransportMessage::Init(ack).encode(&mut bytes).unwrap();
    assert_eq!(i.on_batch(&bytes, &mut x), Err(EstablishError::Resolution));
}

#[test]
fn bad_peers_get_the_right_close_reason() {
    let local = LocalParams::new(zid(5), WhatAmI::Router);
    // Wrong version.
    let mut syn = Init::syn(WhatAmI::Client, zid(6));
    syn.version = 0x08;
    let mut bytes = Vec::new();
    TransportMessage::Init(syn).encode(&mut bytes).unwrap();
    let err = Acceptor::new(local, [0; 16])
        .on_batch(&bytes, &mut Vec::new())
        .unwrap_err();
    assert_eq!(err, EstablishError::Version { got: 8 });
    assert_eq!(err.close_reason(), Some(CloseReason::INVALID));
    // Our own id.
    bytes.clear();
    TransportMessage::Init(Init::syn(WhatAmI::Client, zid(5)))
        .encode(&mut bytes)
        .unwrap();
    let err = Acceptor::new(local, [0; 16])
        .on_batch(&bytes, &mut Vec::new())
        .unwrap_err();
    assert_eq!(err.close_reason(), Some(CloseReason::CONNECTION_TO_SELF));
    // A KeepAlive instead of InitSyn, then garbage.
    let err = Acceptor::new(local, [0; 16])
        .on_batch(&[0x04], &mut Vec::new())
        .unwrap_err();
    assert_eq!(
        err,
        EstablishError::Unexpected {
            expected: "InitSyn",
            got: "KeepAlive"
        }
    );
    let err = Acceptor::new(local, [0; 16])
        .on_batch(&[0x01, 0x09], &mut Vec::new())
        .unwrap_err();
    assert!(matches!(err, EstablishError::Decode(_)));
    // The peer refuses us.
    let mut i = Initiator::new(LocalParams::new(zid(8), WhatAmI::Client));
    let mut out = Vec::new();
    i.start(&mut out).unwrap();
    out.clear();
    close_batch(CloseReason::MAX_SESSIONS, &mut out).unwrap();
    let err = i.on_batch(&out.clone(), &mut out).unwrap_err();
    assert_eq!(err, EstablishError::Closed(CloseReason::MAX_SESSIONS));
    assert_eq!(err.close_reason(), None);
}

/// Runs a whole handshake between `initiator` and `acceptor`: (at the initiator, at the
/// acceptor).
fn handshake(
    initiator: LocalParams,
    acceptor: LocalParams,
) -> Result<(Negotiated, Negotiated), EstablishError> {
    let mut i = Initiator::new(initiator);
    let mut a = Acceptor::new(acceptor, [3; 16]);
    let (mut to_a, mut to_i) = (Vec::new(), Vec::new());
    i.start(&mut to_a)?;
    a.on_batch(&to_a, &mut to_i)?;
    i.on_batch(&to_i, &mut to_a)?;
    let at_a = established(a.on_batch(&to_a, &mut to_i)?);
    let at_i = established(i.on_batch(&to_i, &mut to_a)?);
    Ok((at_i, at_a))
}

#[test]
fn a_link_reserved_for_priorities_offers_its_range_and_both_sides_learn_it() {
    use weft_proto::core::Priority;
    let mut peer = LocalParams::new(zid(0xB0), WhatAmI::Peer);
    peer.link_priorities = Some((Priority::RealTime, Priority::InteractiveLow));
    let mut i = Initiator::new(peer);
    let mut syn = Vec::new();
    i.start(&mut syn).unwrap();
    let batch = weft_proto::batch::decode_batch(&syn, false).unwrap();
    let weft_proto::batch::BatchMessage::Transport(TransportMessage::Init(init)) = &batch[0] else {
        panic!("expected InitSyn, got {batch:?}");
    };
    // QoSLink replaces QoS: range 1..=3 in bits 3.. and 11.., tag 0b010.
    assert!(!init.qos);
    assert_eq!(init.qos_link.map(|l| l.0), Some(0b010 | 1 << 3 | 3 << 11));

    let (at_i, at_a) = handshake(peer, LocalParams::new(zid(0xA0), WhatAmI::Router)).unwrap();
    assert!(at_i.qos && at_a.qos);
    let range = Some((Priority::RealTime, Priority::InteractiveLow));
    assert_eq!((at_i.link_priorities, at_a.link_priorities), (range, range));

    // Without QoS on either side, there is no range either.
    let mut no_qos = LocalParams::new(zid(0xA0), WhatAmI::Router);
    no_qos.qos = false;
    let (at_i, at_a) = handshake(peer, no_qos).unwrap();
    assert!(!at_i.qos && !at_a.qos);
    assert_eq!((at_i.link_priorities, at_a.link_priorities), (None, None));

    // An ordinary link has none.
    let plain = LocalParams::new(zid(0xB0), WhatAmI::Peer);
    let (at_i, at_a) = handshake(plain, LocalParams::new(zid(0xA0), WhatAmI::Peer)).unwrap();
    assert_eq!((at_i.link_priorities, at_a.link_priorities), (None, None));
}

#[test]
fn an_init_with_both_qos_extensions_is_refused() {
    let mut syn = Init::syn(WhatAmI::Client, zid(0xC1));
    syn.qos = true;
    syn.qos_link = Some(weft_proto::transport::QosLink(1));
    let mut bytes = Vec::new();
    TransportMessage::Init(syn).encode(&mut bytes).unwrap();
    let mut a = Acceptor::new(LocalParams::new(zid(0xA0), WhatAmI::Router), [1; 16]);
    let err = a.on_batch(&bytes, &mut Vec::new()).unwrap_err();
    assert_eq!(err, EstablishError::QosTwice);
    assert_eq!(err.close_reason(), Some(CloseReason::INVALID));
}

#[test]
fn a_batch_size_too_small_to_carry_a_message_is_refused_in_both_roles() {
    for tiny in [0u16, 1, 2, MIN_BATCH_SIZE - 1] {
        // An initiator announcing it: the acceptor refuses its InitSyn.
        let mut client = LocalParams::new(zid(0xC1), WhatAmI::Client);
        client.batch_size = tiny;
        let mut i = Initiator::new(client);
        let mut a = Acceptor::new(LocalParams::new(zid(0xA0), WhatAmI::Router), [7; 16]);
        let (mut to_a, mut to_i) = (Vec::new(), Vec::new());
        i.start(&mut to_a).unwrap();
        let refused = a.on_batch(&to_a, &mut to_i).unwrap_err();
        assert_eq!(refused, EstablishError::BatchSize(tiny));
        assert_eq!(refused.close_reason(), Some(CloseReason::INVALID));

        // An acceptor answering with it: the initiator refuses its InitAck.
        let mut router = LocalParams::new(zid(0xA0), WhatAmI::Router);
        router.batch_size = tiny;
        let mut i = Initiator::new(LocalParams::new(zid(0xC1), WhatAmI::Client));
        let mut a = Acceptor::new(router, [7; 16]);
        i.start(&mut to_a).unwrap();
        // The acceptor's own proposal is not its peer's: it answers.
        assert_eq!(a.on_batch(&to_a, &mut to_i).unwrap(), Progress::Reply);
        assert_eq!(
            i.on_batch(&to_i, &mut to_a).unwrap_err(),
            EstablishError::BatchSize(tiny)
        );
    }
    // The floor itself is accepted.
    let mut client = LocalParams::new(zid(0xC1), WhatAmI::Client);
    client.batch_size = MIN_BATCH_SIZE;
    let mut i = Initiator::new(client);
    let mut a = Acceptor::new(LocalParams::new(zid(0xA0), WhatAmI::Router), [7; 16]);
    let (mut to_a, mut to_i) = (Vec::new(), Vec::new());
    i.start(&mut to_a).unwrap();
    assert_eq!(a.on_batch(&to_a, &mut to_i).unwrap(), Progress::Reply);
}
