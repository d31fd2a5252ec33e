//! The transmit queue in memory: batches handed out are decoded by the other end's
//! receiver; time is made up.

use std::time::{Duration, Instant};

use weft_proto::core::{CongestionControl, Priority, Reliability, WireExpr};
use weft_proto::network::{NetworkMessage, Push};
use weft_proto::zenoh::{PushBody, Put};

use super::*;
use crate::rx::Receiver;

/// Both ends' view of one handshake: (initiator's, acceptor's).
fn pair() -> (Negotiated, Negotiated) {
    crate::test_support::negotiated(1024, None)
}

/// A queue and the receiver of the other end.
fn queue_and_receiver() -> (TxQueue, Receiver) {
    let (at_i, at_a) = pair();
    let queue = TxQueue::new(&at_i, usize::from(at_i.batch_size) - 2, None);
    (queue, Receiver::new(&at_a, 1 << 20))
}

fn put(key: &str, payload: &[u8]) -> NetworkMessage<'static> {
    let key: &'static str = Box::leak(key.to_owned().into_boxed_str());
    let payload: &'static [u8] = Box::leak(payload.to_vec().into_boxed_slice());
    NetworkMessage::Push(Push::new(
        WireExpr::key(key),
        PushBody::Put(Put::new(payload)),
    ))
}

fn encoded(msg: &NetworkMessage<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    msg.encode(&mut out).unwrap();
    out
}

/// The keys of the messages in `batch`, as the receiver delivers them.
fn keys_in(rx: &mut Receiver, batch: &[u8]) -> Vec<String> {
    let mut keys = Vec::new();
    rx.on_batch(batch, |incoming| {
        if let NetworkMessage::Push(p) = &incoming.message {
            keys.push(p.wire_expr.suffix.to_string());
        }
    })
    .unwrap();
    keys
}

/// Pushes `msg`, sealing the lane when its batch is full, as the driver does.
fn push_sealing(q: &mut TxQueue, msg: &NetworkMessage<'_>, p: Priority) -> bool {
    loop {
        match q.push(msg, p, Reliability::Reliable).unwrap() {
            Pushed::Appended => return true,
            Pushed::Full if q.has_room() => q.seal_lane(p),
            Pushed::Full => return false,
        }
    }
}

/// Pushes 300-byte messages `k/0`, `k/1`... until the queue is full; how many it took.
fn fill(q: &mut TxQueue) -> usize {
    let payload = [7u8; 300];
    let mut pushed = 0;
    while push_sealing(q, &put(&format!("k/{pushed}"), &payload), Priority::Data) {
        pushed += 1;
        assert!(pushed < 1000, "the queue never filled");
    }
    pushed
}

#[test]
fn small_messages_share_a_batch_and_manual_batching_holds_it_until_a_flush() {
    let (mut q, mut rx) = queue_and_receiver();
    for n in 0..3 {
        assert!(push_sealing(
            &mut q,
            &put(&format!("k/{n}"), b"x"),
            Priority::Data
        ));
    }
    assert!(
        !q.has_work(true),
        "manual batching: nothing to write before a flush"
    );
    assert!(q.next_batch(true).is_none());
    q.request_flush();
    assert!(q.has_work(true));
    let batch = q.next_batch(true).unwrap();
    assert_eq!(keys_in(&mut rx, &batch), ["k/0", "k/1", "k/2"]);
    q.batch_written(batch);
    assert!(q.next_batch(true).is_none());
    // The flush is done: what comes next waits again.
    assert!(push_sealing(&mut q, &put("k/3", b"x"), Priority::Data));
    assert!(!q.has_work(true));
    assert!(q.has_work(false));
}

#[test]
fn at_most_ready_max_full_batches_wait_and_they_come_out_in_order() {
    let (mut q, mut rx) = queue_and_receiver();
    let pushed = fill(&mut q);
    assert_eq!(q.ready_count(), READY_MAX);
    assert!(!q.has_room());
    let mut keys = Vec::new();
    while let Some(batch) = q.next_batch(false) {
        keys.extend(keys_in(&mut rx, &batch));
        q.batch_written(batch);
    }
    let expected: Vec<String> = (0..pushed).map(|n| format!("k/{n}")).collect();
    assert_eq!(keys, expected);
}

#[test]
fn higher_priorities_are_written_first() {
    let (mut q, mut rx) = queue_and_receiver();
    assert!(push_sealing(
        &mut q,
        &put("low", b"x"),
        Priority::Background
    ));
    assert!(push_sealing(&mut q, &put("data", b"x"), Priority::Data));
    assert!(push_sealing(&mut q, &put("rt", b"x"), Priority::RealTime));
    let mut order = Vec::new();
    while let Some(batch) = q.next_batch(false) {
        order.extend(keys_in(&mut rx, &batch));
        q.batch_written(batch);
    }
    assert_eq!(order, ["rt", "data", "low"]);
}

#[test]
fn a_large_message_is_queued_as_whole_fragments_and_reassembled() {
    let (mut q, mut rx) = queue_and_receiver();
    let big = put("big", &[9u8; 5000]);
    let bytes = encoded(&big);
    let count = q.fragment_count(bytes.len());
    assert!(count > 1);
    assert!(q.room_for_fragments(Priority::Data, count));
    assert_eq!(
        q.place(&bytes, Priority::Data, Reliability::Reliable)
            .unwrap(),
        Placed::Queued
    );
    assert_eq!(q.ready_count(), count);
    let mut keys = Vec::new();
    while let Some(batch) = q.next_batch(false) {
        keys.extend(keys_in(&mut rx, &batch));
        q.batch_written(batch);
    }
    assert_eq!(keys, ["big"]);
}

#[test]
fn the_lane_of_a_message_being_fragmented_is_left_alone_until_its_end() {
    let (mut q, mut rx) = queue_and_receiver();
    assert!(push_sealing(&mut q, &put("before", b"x"), Priority::Data));
    q.seal_lane(Priority::Data);
    let fragments = q
        .start_fragmenting(5000, Priority::Data, Reliability::Reliable)
        .unwrap();
    assert!(fragments.remaining() > 1);
    assert!(q.is_fragmenting());
    assert!(push_sealing(
        &mut q,
        &put("control", b"x"),
        Priority::Control
    ));
    // Only the other priority comes out while the fragments are written.
    let batch = q.next_batch(false).unwrap();
    assert_eq!(keys_in(&mut rx, &batch), ["control"]);
    assert!(q.next_batch(false).is_none());
    q.end_fragmenting();
    assert!(q.next_batch(false).is_some());
}

#[test]
fn forwarded_messages_wait_in_the_overflow_and_move_in_as_room_comes() {
    let (mut q, mut rx) = queue_and_receiver();
    let start = Instant::now();
    let payload = [1u8; 300];
    let mut n = 0;
    while push_sealing(&mut q, &put(&format!("q/{n}"), &payload), Priority::Data) {
        n += 1;
    }
    let waiting = put("waiting", &payload);
    assert_eq!(
        q.place(&encoded(&waiting), Priority::Data, Reliability::Reliable)
            .unwrap(),
        Placed::NoRoom
    );
    q.push_overflow(
        encoded(&waiting),
        Priority::Data,
        Reliability::Reliable,
        start,
    )
    .unwrap();
    assert!(!q.overflow_is_empty());
    // No room yet: it stays.
    assert_eq!(q.refill(start, Duration::from_secs(5)), Ok(0));
    assert!(!q.overflow_is_empty());
    // A batch out makes room.
    let batch = q.next_batch(false).unwrap();
    q.batch_written(batch);
    assert_eq!(
        q.refill(start + Duration::from_secs(1), Duration::from_secs(5)),
        Ok(0)
    );
    assert!(q.overflow_is_empty());
    let mut keys = Vec::new();
    while let Some(batch) = q.next_batch(false) {
        keys.extend(keys_in(&mut rx, &batch));
        q.batch_written(batch);
    }
    assert_eq!(keys.last().map(String::as_str), Some("waiting"));
}

#[test]
fn an_overflow_waiting_past_wait_before_close_is_reported() {
    let (mut q, _) = queue_and_receiver();
    let start = Instant::now();
    let msg = encoded(&put("w", b"x"));
    q.push_overflow(msg, Priority::Data, Reliability::Reliable, start)
        .unwrap();
    let limit = Duration::from_secs(5);
    assert_eq!(
        q.refill(start + Duration::from_secs(6), limit),
        Err(Duration::from_secs(6))
    );
    assert!(!q.overflow_is_empty(), "nothing moves once it is late");
    assert_eq!(q.discard_overflow(), 1);
    assert!(q.overflow_is_empty());
}

#[test]
fn drop_waits_then_drops_and_a_congested_link_drops_at_once_until_a_batch_is_out() {
    let (mut q, _) = queue_and_receiver();
    let now = Instant::now();
    let deadline = now + Duration::from_millis(1);
    assert_eq!(
        q.no_room(CongestionControl::Drop, deadline, now),
        NoRoom::Wait(Duration::from_millis(1))
    );
    assert_eq!(
        q.no_room(CongestionControl::Drop, deadline, deadline),
        NoRoom::Drop
    );
    // Congested: the next one does not wait.
    let later = deadline + Duration::from_secs(1);
    assert_eq!(
        q.no_room(CongestionControl::Drop, later, deadline),
        NoRoom::Drop
    );
    q.batch_written(Vec::new());
    assert_eq!(
        q.no_room(CongestionControl::Drop, later, deadline),
        NoRoom::Wait(Duration::from_secs(1))
    );
}

#[test]
fn block_waits_until_its_deadline_then_closes_the_destination() {
    let (mut q, _) = queue_and_receiver();
    let now = Instant::now();
    let deadline = now + Duration::from_secs(5);
    assert_eq!(
        q.no_room(CongestionControl::Block, deadline, now),
        NoRoom::Wait(Duration::from_secs(5))
    );
    assert_eq!(
        q.no_room(CongestionControl::Block, deadline, deadline),
        NoRoom::Close
    );
}

#[test]
fn a_keep_alive_is_queued_only_on_an_idle_queue() {
    let (mut q, _) = queue_and_receiver();
    assert!(q.push_keep_alive());
    assert_eq!(q.next_batch(false).as_deref(), Some(&KEEP_ALIVE_BATCH[..]));
    assert!(push_sealing(&mut q, &put("k", b"x"), Priority::Data));
    assert!(!q.push_keep_alive());
}

#[test]
fn a_range_of_three_parts_is_cut_from_each() {
    let parts: [&[u8]; 3] = [b"head", b"PAYLOAD", b"tail"];
    let whole: Vec<u8> = parts.concat();
    for start in 0..=whole.len() {
        for end in start..=whole.len() {
            let cut = slice_parts(parts, start..end);
            assert_eq!(cut.concat(), &whole[start..end], "{start}..{end}");
        }
    }
    assert_eq!(slice_parts(parts, 2..6), [&b"ad"[..], b"PA", b""]);
}

#[test]
fn an_idle_queue_frees_what_a_burst_left_and_works_on() {
    let (mut q, mut rx) = queue_and_receiver();
    let pushed = fill(&mut q);
    // While batches wait, nothing is freed.
    assert_eq!(q.release_idle_buffers(1), 0);
    let mut keys = Vec::new();
    while let Some(batch) = q.next_batch(false) {
        keys.extend(keys_in(&mut rx, &batch));
        q.batch_written(batch);
    }
    assert_eq!(keys.len(), pushed);
    assert!(q.pool.len() > 1, "the burst's buffers are pooled");
    let freed = q.release_idle_buffers(1);
    assert!(freed >= (READY_MAX - 1) * 1000, "freed {freed} bytes");
    assert_eq!(q.pool.len(), 1);
    assert_eq!(q.release_idle_buffers(1), 0, "nothing more to free");
    // The next message finds buffers again.
    assert!(push_sealing(&mut q, &put("k/after", b"x"), Priority::Data));
    let batch = q.next_batch(false).unwrap();
    assert_eq!(keys_in(&mut rx, &batch), ["k/after"]);
}
