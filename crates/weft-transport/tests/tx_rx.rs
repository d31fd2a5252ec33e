//! The transmit side feeding the receive side of the other end, in memory: messages of
//! every size arrive whole and in order, batches respect the size bound, small messages
//! share batches.

use weft_proto::core::{Priority, Reliability, WhatAmI, WireExpr, ZenohId};
use weft_proto::network::{NetworkMessage, Push};
use weft_proto::zenoh::{PushBody, Put};
use weft_transport::establish::{Acceptor, Initiator, LocalParams, Negotiated, Progress};
use weft_transport::rx::Receiver;
use weft_transport::tx::{Pushed, Transmitter, FRAGMENT_HEADER_MAX};

fn pair(qos: bool) -> (Negotiated, Negotiated) {
    let mut a_params = LocalParams::new(ZenohId::new(1).unwrap(), WhatAmI::Peer);
    a_params.qos = qos;
    a_params.batch_size = 2048;
    let mut i = Initiator::new(a_params);
    let mut a = Acceptor::new(
        LocalParams::new(ZenohId::new(2).unwrap(), WhatAmI::Peer),
        [3; 16],
    );
    let (mut x, mut y) = (Vec::new(), Vec::new());
    i.start(&mut x).unwrap();
    a.on_batch(&x, &mut y).unwrap();
    i.on_batch(&y, &mut x).unwrap();
    let Progress::Established(at_a) = a.on_batch(&x, &mut y).unwrap() else {
        panic!()
    };
    let Progress::Established(at_i) = i.on_batch(&y, &mut x).unwrap() else {
        panic!()
    };
    (at_i, at_a)
}

fn payload(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Sends every payload from the initiator to the acceptor; returns what arrived.
fn transfer(payloads: &[Vec<u8>], priority: Priority, qos: bool) -> (Vec<Vec<u8>>, Vec<usize>) {
    let (at_i, at_a) = pair(qos);
    let max_batch = usize::from(at_i.batch_size) - 2;
    let mut tx = Transmitter::new(&at_i, max_batch);
    let mut rx = Receiver::new(&at_a, 1 << 24);
    let mut wire: Vec<Vec<u8>> = Vec::new();
    for (n, p) in payloads.iter().enumerate() {
        let key = format!("demo/{n}");
        let msg = NetworkMessage::Push(Push::new(WireExpr::key(&key), PushBody::Put(Put::new(p))));
        match tx.push(&msg, priority, Reliability::Reliable).unwrap() {
            Pushed::Appended => {}
            Pushed::Full => {
                // Both ways of taking a full batch: copied out, or exchanged for a spare
                // buffer (here one holding stale bytes, which must not leak into batches).
                if n % 2 == 0 {
                    let pending = tx.take_lane(priority);
                    if !pending.is_empty() {
                        wire.push(pending.to_vec());
                    }
                } else {
                    let mut spare = vec![0xEE; 3000];
                    if tx.swap_lane(priority, &mut spare) {
                        wire.push(spare);
                    }
                }
                if tx.push(&msg, priority, Reliability::Reliable).unwrap() == Pushed::Full {
                    tx.fragment(&msg, priority, Reliability::Reliable, |b| {
                        wire.push(b.to_vec())
                    })
                    .unwrap();
                }
            }
        }
    }
    while let Some((p, batch)) = tx.take() {
        assert_eq!(p, priority);
        wire.push(batch.to_vec());
    }
    let sizes = wire.iter().map(Vec::len).collect();
    let mut got = Vec::new();
    for b in &wire {
        assert!(b.len() <= max_batch, "batch of {} > {max_batch}", b.len());
        rx.on_batch(b, |m| {
            if let NetworkMessage::Push(p) = &m.message {
                assert_eq!(m.priority, priority);
                if let PushBody::Put(put) = &p.body {
                    assert_eq!(p.wire_expr.suffix, format!("demo/{}", got.len()));
                    got.push(put.payload.to_vec());
                }
            }
        })
        .unwrap();
    }
    assert_eq!(rx.stats().stale, 0);
    assert_eq!(rx.stats().gaps, 0);
    assert_eq!(rx.stats().fragments_discarded, 0);
    (got, sizes)
}

#[test]
fn small_messages_share_batches() {
    let payloads: Vec<Vec<u8>> = (0..500).map(|i| payload(8, i as u8)).collect();
    let (got, sizes) = transfer(&payloads, Priority::Data, true);
    assert_eq!(got, payloads);
    // Batches are filled: all but the last are nearly full (about 21 bytes per message
    // in 2046-byte batches).
    let total: usize = sizes.iter().sum();
    assert_eq!(sizes.len(), total.div_ceil(2046 - 30), "{sizes:?}");
}

#[test]
fn large_messages_are_fragmented_and_reassembled() {
    let payloads = vec![
        payload(10, 1),
        payload(5_000, 2),
        payload(3, 3),
        payload(1 << 20, 4),
        payload(2030, 5),
    ];
    let (got, _) = transfer(&payloads, Priority::DataLow, true);
    assert_eq!(got.len(), payloads.len());
    assert_eq!(got, payloads);
}

#[test]
fn higher_priorities_are_taken_first() {
    let (at_i, at_a) = pair(true);
    let mut tx = Transmitter::new(&at_i, 2046);
    let mut rx = Receiver::new(&at_a, 1 << 20);
    let bulk = payload(1500, 9);
    for (p, data) in [
        (Priority::Background, bulk.as_slice()),
        (Priority::DataLow, b"low".as_slice()),
        (Priority::RealTime, b"urgent".as_slice()),
    ] {
        let msg =
            NetworkMessage::Push(Push::new(WireExpr::key("k"), PushBody::Put(Put::new(data))));
        assert_eq!(
            tx.push(&msg, p, Reliability::Reliable).unwrap(),
            Pushed::Appended
        );
    }
    let mut order = Vec::new();
    while let Some((p, batch)) = tx.take() {
        order.push(p);
        rx.on_batch(batch, |m| assert_eq!(m.priority, p)).unwrap();
    }
    assert_eq!(
        order,
        [Priority::RealTime, Priority::DataLow, Priority::Background]
    );
}

#[test]
fn without_qos_only_data_priority_is_allowed() {
    let (at_i, _) = pair(false);
    assert!(!at_i.qos);
    let mut tx = Transmitter::new(&at_i, 1000);
    let msg = NetworkMessage::Push(Push::new(WireExpr::key("a"), PushBody::Put(Put::new(b"x"))));
    assert!(tx
        .push(&msg, Priority::RealTime, Reliability::Reliable)
        .is_err());
    let payloads: Vec<Vec<u8>> = (0..20).map(|i| payload(300, i)).collect();
    let (got, _) = transfer(&payloads, Priority::Data, false);
    assert_eq!(got, payloads);
}

#[test]
fn planned_fragments_carry_a_split_message_and_the_channel_continues_after_them() {
    let (at_i, at_a) = pair(true);
    let max_batch = usize::from(at_i.batch_size) - 2;
    let mut tx = Transmitter::new(&at_i, max_batch);
    let mut rx = Receiver::new(&at_a, 1 << 20);
    let big = payload(10_000, 5);
    let msg = NetworkMessage::Push(Push::new(
        WireExpr::key("demo/big"),
        PushBody::Put(Put::new(&big)),
    ));
    let small = NetworkMessage::Push(Push::new(
        WireExpr::key("demo/small"),
        PushBody::Put(Put::new(b"after")),
    ));
    let p = Priority::DataHigh;

    // Planning while the lane holds a batch is refused: its Frame would come out after
    // fragments with later sequence numbers.
    assert_eq!(
        tx.push(&small, p, Reliability::Reliable).unwrap(),
        Pushed::Appended
    );
    assert!(tx.plan_fragments(10_000, p, Reliability::Reliable).is_err());
    let mut wire = vec![tx.take_lane(p).to_vec()];

    // Each fragment is its header then its range of the message, encoded in two parts
    // (the payload left in place), as the transport writes them.
    let mut head = Vec::new();
    let split = msg.encode_split(&mut head).unwrap();
    assert_eq!(
        split.bulk.len(),
        big.len(),
        "the payload is not copied into the head"
    );
    let whole: Vec<u8> = split.parts(&head).concat();
    let fragments = tx
        .plan_fragments(whole.len(), p, Reliability::Reliable)
        .unwrap();
    assert_eq!(
        fragments.remaining(),
        whole.len().div_ceil(max_batch - FRAGMENT_HEADER_MAX)
    );
    for f in fragments {
        let batch = [f.head(), &whole[f.range()]].concat();
        assert!(batch.len() <= max_batch);
        wire.push(batch);
    }
    // The next message on the channel opens a Frame with the SN after the fragments'.
    assert_eq!(
        tx.push(&small, p, Reliability::Reliable).unwrap(),
        Pushed::Appended
    );
    wire.push(tx.take_lane(p).to_vec());

    let mut got = Vec::new();
    for b in &wire {
        rx.on_batch(b, |m| {
            if let NetworkMessage::Push(push) = m.message {
                if let PushBody::Put(put) = &push.body {
                    assert_eq!(m.reassembled.is_some(), put.payload.len() == big.len());
                    got.push(put.payload.to_vec());
                }
            }
        })
        .unwrap();
    }
    assert_eq!(got, vec![b"after".to_vec(), big, b"after".to_vec()]);
    assert_eq!(rx.stats().stale, 0);
    assert_eq!(rx.stats().gaps, 0);
}

/// The fragment batches of one message of `len` bytes, sent on `priority`.
fn fragments_of(tx: &mut Transmitter, len: usize, priority: Priority) -> Vec<Vec<u8>> {
    let data = payload(len, 9);
    let msg = NetworkMessage::Push(Push::new(
        WireExpr::key("demo/big"),
        PushBody::Put(Put::new(&data)),
    ));
    let mut batches = Vec::new();
    tx.fragment(&msg, priority, Reliability::Reliable, |b| {
        batches.push(b.to_vec())
    })
    .unwrap();
    batches
}

#[test]
fn receivers_sharing_a_budget_discard_what_would_exceed_it_and_give_it_back() {
    use std::sync::Arc;
    use weft_transport::rx::ReassemblyBudget;

    let (at_i, at_a) = pair(true);
    let max_batch = usize::from(at_i.batch_size) - 2;
    let budget = Arc::new(ReassemblyBudget::new(100_000));
    let mut first = Receiver::with_budget(&at_a, 1 << 24, budget.clone());
    let mut second = Receiver::with_budget(&at_a, 1 << 24, budget.clone());
    let mut tx_first = Transmitter::new(&at_i, max_batch);
    let mut tx_second = Transmitter::new(&at_i, max_batch);
    let a = fragments_of(&mut tx_first, 60_000, Priority::Data);
    let b = fragments_of(&mut tx_second, 60_000, Priority::Data);
    let mut delivered = 0;
    // All but the last fragment of the first message: 60 KB held.
    for batch in &a[..a.len() - 1] {
        first.on_batch(batch, |_| delivered += 1).unwrap();
    }
    assert!(budget.used() > 55_000, "{}", budget.used());
    // The second message cannot fit beside it: discarded, its memory given back.
    for batch in &b {
        second.on_batch(batch, |_| delivered += 1).unwrap();
    }
    assert_eq!(second.stats().over_budget, 1);
    assert_eq!(second.reassembly_bytes(), 0);
    // The first completes, and the budget is all free again.
    first.on_batch(&a[a.len() - 1], |_| delivered += 1).unwrap();
    assert_eq!(delivered, 1);
    assert_eq!(budget.used(), 0);
    // A receiver dropped with a partial message gives its share back too.
    let c = fragments_of(&mut tx_first, 60_000, Priority::Data);
    first.on_batch(&c[0], |_| {}).unwrap();
    assert!(budget.used() > 0);
    drop(first);
    assert_eq!(budget.used(), 0);
}

#[test]
fn a_receiver_holds_at_most_its_share_and_leaves_the_budget_to_others() {
    use std::sync::Arc;
    use weft_transport::rx::ReassemblyBudget;

    let (at_i, at_a) = pair(true);
    let max_batch = usize::from(at_i.batch_size) - 2;
    let budget = Arc::new(ReassemblyBudget::new(1 << 20));
    let mut greedy = Receiver::with_limits(&at_a, 1 << 24, 100_000, Some(budget.clone()));
    let mut other = Receiver::with_limits(&at_a, 1 << 24, 100_000, Some(budget.clone()));
    let mut tx_greedy = Transmitter::new(&at_i, max_batch);
    let mut tx_other = Transmitter::new(&at_i, max_batch);
    // One message over the share on one priority, and one under it on another: together
    // over the share, alone each under the budget.
    let big = fragments_of(&mut tx_greedy, 300_000, Priority::Data);
    let mut delivered = 0;
    for batch in &big {
        greedy.on_batch(batch, |_| delivered += 1).unwrap();
        assert!(greedy.reassembly_bytes() <= 100_000);
    }
    assert_eq!(delivered, 0);
    assert_eq!(
        greedy.stats().over_share,
        1,
        "discarded once, the rest refused"
    );
    assert_eq!(greedy.stats().over_budget, 0);
    assert_eq!(budget.used(), 0, "its memory given back");
    // Another receiver's message under the share goes through.
    let fits = fragments_of(&mut tx_other, 90_000, Priority::Data);
    for batch in &fits {
        other.on_batch(batch, |_| delivered += 1).unwrap();
    }
    assert_eq!(delivered, 1);
    assert_eq!(other.stats().over_share, 0);
    // And the greedy one's next message under the share too.
    let next = fragments_of(&mut tx_greedy, 90_000, Priority::Data);
    for batch in &next {
        greedy.on_batch(batch, |_| delivered += 1).unwrap();
    }
    assert_eq!(delivered, 2);
}

#[test]
fn a_message_over_the_bound_is_counted_as_too_large() {
    let (at_i, at_a) = pair(true);
    let mut tx = Transmitter::new(&at_i, usize::from(at_i.batch_size) - 2);
    let mut rx = Receiver::new(&at_a, 10_000);
    let mut delivered = 0;
    for batch in fragments_of(&mut tx, 30_000, Priority::Data) {
        rx.on_batch(&batch, |_| delivered += 1).unwrap();
    }
    assert_eq!(delivered, 0);
    assert_eq!(rx.stats().too_large, 1);
    assert_eq!(rx.reassembly_bytes(), 0);
}
