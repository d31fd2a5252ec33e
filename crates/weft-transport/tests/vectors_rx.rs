//! The receive side fed with what a real Zenoh router sent to its clients in the captured
//! vectors: the handshake completes, every Frame's SN is in order, fragments reassemble.

use std::path::PathBuf;

use weft_proto::batch::framing::{next_batch, PrefixWidth};
use weft_proto::core::{WhatAmI, ZenohId};
use weft_proto::network::NetworkMessage;
use weft_proto::zenoh::PushBody;
use weft_transport::establish::{Initiator, LocalParams, Negotiated, Progress};
use weft_transport::rx::{Control, Receiver};

fn spec_dir() -> PathBuf {
    match std::env::var_os("WEFT_SPEC_DIR") {
        Some(d) => PathBuf::from(d),
        // The repository's copy of the specification's vectors: `tests/vectors`.
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests"),
    }
}

/// The listener-to-initiator byte stream of connection `conn` (1-based) of a vector.
fn inbound_stream(vector: &str, conn: usize) -> Vec<u8> {
    let path = spec_dir().join("vectors").join(format!("{vector}.hex"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut current = 0;
    let mut stream = Vec::new();
    for line in text.lines() {
        if line.starts_with("# conn") {
            current += 1;
        } else if let Some(hex) = line.strip_prefix("< ") {
            if current.max(1) == conn {
                stream.extend(
                    (0..hex.len())
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()),
                );
            }
        }
    }
    stream
}

fn batches(stream: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some((start, b)) = next_batch(stream, pos, PrefixWidth::U16).unwrap() {
        out.push(b.to_vec());
        pos = start + b.len();
    }
    out
}

/// Runs our initiator against the captured InitAck/OpenAck; returns the negotiated
/// parameters and the remaining batches.
fn establish(stream: &[u8]) -> (Negotiated, Vec<Vec<u8>>) {
    let all = batches(stream);
    let zid = ZenohId::new(0x1234_5678).unwrap();
    let mut i = Initiator::new(LocalParams::new(zid, WhatAmI::Client));
    let mut out = Vec::new();
    i.start(&mut out).unwrap();
    assert_eq!(i.on_batch(&all[0], &mut out).unwrap(), Progress::Reply);
    let Progress::Established(n) = i.on_batch(&all[1], &mut out).unwrap() else {
        panic!("not established");
    };
    (n, all[2..].to_vec())
}

#[test]
fn the_router_s_fragmented_put_is_delivered_whole() {
    let (n, rest) = establish(&inbound_stream("05-fragmentation", 1));
    assert!(n.qos);
    assert_eq!(n.patch, 1);
    let mut rx = Receiver::new(&n, 1 << 20);
    let mut payloads = Vec::new();
    for b in &rest {
        let control = rx
            .on_batch(b, |m| {
                if let NetworkMessage::Push(p) = &m.message {
                    if let PushBody::Put(put) = &p.body {
                        payloads.push(put.payload.to_vec());
                    }
                }
            })
            .unwrap();
        assert_eq!(control, Control::Alive);
    }
    assert_eq!(payloads.len(), 1);
    assert_eq!(payloads[0].len(), 100_000);
    assert!(payloads[0].iter().enumerate().all(|(i, b)| *b == i as u8));
    assert_eq!(rx.stats().stale, 0);
    assert_eq!(rx.stats().gaps, 0);
    assert_eq!(rx.reassembly_bytes(), 0);
}

#[test]
fn pub_sub_frames_are_in_order_and_replays_are_dropped() {
    let (n, rest) = establish(&inbound_stream("02-pub-sub", 1));
    let mut rx = Receiver::new(&n, 1 << 20);
    let mut count = 0;
    for b in &rest {
        rx.on_batch(b, |_| count += 1).unwrap();
    }
    assert_eq!(
        count, 6,
        "3 + 1 + 1 puts and 1 delete routed to the subscriber"
    );
    assert_eq!(rx.stats().stale, 0);
    // Replaying the same batches delivers nothing: their SNs are old.
    let mut again = 0;
    for b in &rest {
        rx.on_batch(b, |_| again += 1).unwrap();
    }
    assert_eq!(again, 0);
    assert!(rx.stats().stale >= 4);
}

#[test]
fn a_priority_without_qos_breaks_the_link() {
    let (mut n, _) = establish(&inbound_stream("02-pub-sub", 1));
    n.qos = false;
    let mut rx = Receiver::new(&n, 1024);
    // Frame, reliable, priority Control (QoS extension 0x31 0x00), SN = peer's initial.
    let mut batch = Vec::new();
    weft_proto::transport::FrameHeader::new(
        weft_proto::core::Reliability::Reliable,
        weft_proto::core::Priority::Control,
        n.peer_initial_sn,
    )
    .encode(&mut batch)
    .unwrap();
    let err = rx.on_batch(&batch, |_| {}).unwrap_err();
    assert!(matches!(
        err,
        weft_transport::rx::RxError::PriorityWithoutQos(_)
    ));
}
