//! Connections over the simulated network (`sim`): what arrives, in what order, what
//! waits, what is dropped and counted, and how a connection ends.

use std::time::{Duration, Instant};

use weft_proto::core::{CongestionControl, Priority, Reliability};
use weft_proto::transport::CloseReason;

use super::sim::{negotiated, put, Net};
use super::*;

const US: Duration = Duration::from_micros(1);
const MS: Duration = Duration::from_millis(1);

fn opts(priority: Priority, congestion: CongestionControl, since: Instant) -> SendOptions {
    SendOptions {
        priority,
        reliability: Reliability::Reliable,
        congestion,
        forwarded: false,
        since: Some(since),
    }
}

/// End `a` queues `msg` (Data, `block`) now; it must find room.
fn queue_on_a(net: &mut Net, msg: &weft_proto::network::NetworkMessage<'_>) {
    let o = opts(Priority::Data, CongestionControl::Block, net.now);
    net.a.conn.send(msg, o, net.now).unwrap();
}

/// A connection over a stream link, with `limits`, negotiated as `n` says.
fn stream_connection(n: &Negotiated, limits: Limits, now: Instant) -> Connection {
    let framing = Framing::Stream(weft_proto::batch::framing::PrefixWidth::U16);
    Connection::new(n, framing, limits, now)
}

/// Has the link take whole every transmit `conn` hands out at `now`.
fn write_all(conn: &mut Connection, now: Instant) {
    while let Some(t) = conn.poll_transmit(now) {
        let n = t.remaining();
        conn.transmitted(t, n, now);
    }
}

/// A payload of `len` bytes that says which message it is.
fn payload(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i * 31 + j) as u8).collect()
}

#[test]
fn every_message_arrives_whole_and_in_order_through_partial_writes() {
    // 4 KiB of link buffer for batches of 2 KiB: most writes are taken in part.
    let mut net = Net::stream(2048, 10_000, 4096, Limits::default());
    let sizes = [8, 300, 1500, 5000, 64, 20_000, 1];
    let mut sent = Vec::new();
    for i in 0..300 {
        let len = sizes[i % sizes.len()];
        let p = payload(i, len);
        let msg = put("k", &p, Priority::Data, false);
        let since = net.now;
        loop {
            match net.a.conn.send(
                &msg,
                opts(Priority::Data, CongestionControl::Block, since),
                net.now,
            ) {
                Ok(_) => break,
                Err(SendError::NoRoom { .. }) => net.step(10 * US),
                Err(e) => panic!("send failed: {e}"),
            }
        }
        sent.push(p);
        net.step(10 * US);
    }
    assert!(net.run_until(10 * US, 100_000, |n| n.b.received.len() == sent.len()));
    let got: Vec<Vec<u8>> = net.b.received.iter().map(|r| r.2.clone()).collect();
    assert_eq!(got, sent);
    assert_eq!(net.a.conn.outbound().stats().dropped_congestion, 0);
}

#[test]
fn a_slow_reader_makes_block_senders_wait_and_drop_senders_drop_counted() {
    let mut net = Net::stream(2048, 10_000, 4096, Limits::default());
    net.b.read_rate = 512;
    let msg = put("k", &[7; 1000], Priority::Data, false);
    // Fill the queue: the sender is told to wait, never queues without bound.
    let mut no_room = 0;
    for _ in 0..200 {
        match net.a.conn.send(
            &msg,
            opts(Priority::Data, CongestionControl::Block, net.now),
            net.now,
        ) {
            Ok(_) => {}
            Err(SendError::NoRoom { until, .. }) => {
                assert!(until > net.now);
                no_room += 1;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(no_room > 0, "a full queue must refuse more");
    assert!(net.a.conn.outbound().queued_batches() <= crate::queue::READY_MAX + 1);
    // As the reader drains, room comes back and the sender is told.
    assert!(net.run_until(10 * US, 10_000, |n| n.a.events.contains(&Event::Room)));
    // A `drop` sender whose deadline has passed drops at once, counted.
    let start = net.now;
    loop {
        match net.a.conn.send(
            &msg,
            opts(Priority::Data, CongestionControl::Drop, start),
            net.now + 2 * MS,
        ) {
            Ok(_) => {}
            Err(SendError::Dropped) => break,
            Err(SendError::NoRoom { .. }) => {
                panic!("past its deadline a drop message does not wait")
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(net.a.conn.outbound().stats().dropped_congestion, 1);
}

#[test]
fn a_block_sender_to_a_peer_that_takes_nothing_closes_it_after_wait_before_close() {
    let limits = Limits {
        wait_before_close: 50 * MS,
        ..Limits::default()
    };
    let mut net = Net::stream(2048, 10_000, 4096, limits);
    net.b.read_rate = 0;
    let msg = put("k", &[7; 1000], Priority::Data, false);
    let since = net.now;
    let mut result = Ok(Sent::Queued(WriteHint::None));
    for _ in 0..100_000 {
        result = net.a.conn.send(
            &msg,
            opts(Priority::Data, CongestionControl::Block, since),
            net.now,
        );
        match result {
            Err(SendError::NoRoom { .. }) => net.step(MS),
            Err(_) => break,
            Ok(_) => net.step(US),
        }
    }
    assert_eq!(result, Err(SendError::Closed));
    assert!(net.now.duration_since(since) >= 50 * MS);
    net.step(US);
    assert!(net
        .a
        .events
        .iter()
        .any(|e| matches!(e, Event::Ended(EndReason::Congested { .. }))));
}

#[test]
fn a_dead_peer_is_found_by_its_lease_and_keep_alives_keep_a_quiet_one_alive() {
    let mut net = Net::stream(2048, 1000, 1 << 16, Limits::default());
    // Quiet but alive: 3 leases pass, keep-alives flow both ways, nobody ends.
    net.run_until(MS, 3000, |_| false);
    assert!(
        net.a.events.is_empty() && net.b.events.is_empty(),
        "{:?}",
        net.a.events
    );
    assert!(net.a.conn.outbound().stats().keep_alives >= 3 * 4 - 1);
    // b dies: a ends it within one lease (plus a tick), for its lease.
    net.b.dead = true;
    let died = net.now;
    assert!(net.run_until(MS, 2000, |n| !n.a.events.is_empty()));
    let waited = net.now.duration_since(died);
    assert!(
        waited >= 1000 * MS - 300 * MS && waited <= 1000 * MS + 2 * MS,
        "{waited:?}"
    );
    assert!(matches!(
        net.a.events[0],
        Event::Ended(EndReason::LeaseExpired { .. })
    ));
    assert!(net.a.conn.poll_timeout().is_none());
}

#[test]
fn close_writes_what_is_queued_then_the_close_and_the_peer_learns_it() {
    let mut net = Net::stream(2048, 10_000, 1 << 16, Limits::default());
    for i in 0..50 {
        let msg = put("k", &payload(i, 100), Priority::Data, false);
        queue_on_a(&mut net, &msg);
    }
    net.a.conn.close(CloseReason::GENERIC);
    let msg = put("k", &[1], Priority::Data, false);
    assert_eq!(
        net.a.conn.send(
            &msg,
            opts(Priority::Data, CongestionControl::Block, net.now),
            net.now
        ),
        Err(SendError::Closed)
    );
    assert!(net.run_until(US, 1000, |n| !n.b.events.is_empty()
        && !n.a.events.is_empty()));
    assert_eq!(net.b.received.len(), 50);
    assert_eq!(net.a.events, vec![Event::Ended(EndReason::Closed)]);
    assert_eq!(net.b.events, vec![Event::Ended(EndReason::ClosedByPeer)]);
}

#[test]
fn malformed_bytes_end_the_connection_with_a_close_invalid() {
    let (_, na) = negotiated(2048, 10_000);
    let now = Instant::now();
    let mut conn = stream_connection(&na, Limits::default(), now);
    let input = conn.handle_stream(&[3, 0, 0xff, 0xff, 0xff], now, |_, _| {
        panic!("nothing to deliver")
    });
    assert_eq!(input.consumed, 5);
    let t = conn.poll_transmit(now).expect("a Close is written");
    let mut slices = [std::io::IoSlice::new(&[]); 2 * GATHER_MAX];
    let count = t.io_slices(&mut slices);
    let bytes: Vec<u8> = slices[..count].iter().flat_map(|s| s.to_vec()).collect();
    let mut close = Vec::new();
    crate::establish::close_batch(CloseReason::INVALID, &mut close).unwrap();
    assert_eq!(&bytes[2..], &close[..]);
    let n = t.remaining();
    conn.transmitted(t, n, now);
    assert!(matches!(
        conn.poll_event(),
        Some(Event::Ended(EndReason::Malformed(_)))
    ));
    // Later bytes are not read.
    let input = conn.handle_stream(&[1, 0, 0], now, |_, _| panic!("ended"));
    assert_eq!(input.batches, 0);
}

#[test]
fn realtime_goes_before_bulk_queued_earlier() {
    let mut net = Net::stream(u16::MAX, 10_000, 1 << 20, Limits::default());
    for i in 0..40 {
        let msg = put("bulk", &payload(i, 1000), Priority::Data, false);
        queue_on_a(&mut net, &msg);
    }
    let event = put("event", &[1; 64], Priority::RealTime, true);
    let sent = net
        .a
        .conn
        .send(
            &event,
            opts(Priority::RealTime, CongestionControl::Drop, net.now),
            net.now,
        )
        .unwrap();
    // Nobody writes yet: the express sender writes itself.
    assert_eq!(sent, Sent::Queued(WriteHint::WriteNow));
    assert!(net.run_until(US, 1000, |n| n.b.received.len() == 41));
    assert_eq!(net.b.received[0].1, "event");
    assert_eq!(net.b.received[0].0, Priority::RealTime);
}

#[test]
fn one_writer_at_a_time_and_senders_told_whom_to_wake() {
    let (ni, _) = negotiated(2048, 10_000);
    let now = Instant::now();
    let mut conn = stream_connection(&ni, Limits::default(), now);
    let msg = put("k", &[1; 10], Priority::Data, false);
    let o = opts(Priority::Data, CongestionControl::Block, now);
    // The driver is asked, once.
    assert_eq!(conn.send(&msg, o, now), Ok(Sent::Queued(WriteHint::Wake)));
    assert_eq!(
        conn.send(&msg, o, now + US),
        Ok(Sent::Queued(WriteHint::None))
    );
    assert_eq!(
        conn.send(&msg, o, now + 2 * US),
        Ok(Sent::Queued(WriteHint::None))
    );
    // Two messages in 100 µs are no stream to wait for: the driver writes at once.
    let t = conn
        .poll_transmit(now + 100 * US)
        .expect("something to write");
    assert!(
        conn.poll_transmit(now + 100 * US).is_none(),
        "a second writer"
    );
    // While it writes, senders leave their messages to it.
    assert_eq!(
        conn.send(&msg, o, now + 200 * US),
        Ok(Sent::Queued(WriteHint::None))
    );
    // The link takes part: the rest waits for the link, senders still wake nobody.
    let half = t.remaining() / 2;
    // The second poll may have been a writable event that raced with this writer: it
    // tries once more rather than wait for an event that already came.
    assert!(conn.transmitted(t, half, now + 200 * US));
    assert_eq!(
        conn.send(&msg, o, now + 300 * US),
        Ok(Sent::Queued(WriteHint::None))
    );
    let t = conn.poll_transmit(now + 300 * US).expect("the rest");
    // Without such a race, a writer the link takes nothing from stops.
    assert!(!conn.transmitted(t, 0, now + 300 * US));
    let t = conn
        .poll_transmit(now + 300 * US)
        .expect("the rest, once writable");
    let n = t.remaining();
    assert!(conn.transmitted(t, n, now + 300 * US));
    // Written whole: the driver writes what came meanwhile, then nobody writes.
    let t = conn
        .poll_transmit(now + 300 * US)
        .expect("what came meanwhile");
    let n = t.remaining();
    conn.transmitted(t, n, now + 300 * US);
    assert!(conn.poll_transmit(now + 300 * US).is_none());
    // A forwarded message never has its sender write: the driver is asked.
    let forwarded = SendOptions {
        forwarded: true,
        ..o
    };
    assert_eq!(
        conn.send(&msg, forwarded, now + 1000 * US),
        Ok(Sent::Queued(WriteHint::Wake))
    );
    // A forwarded express one asks its forwarder to write it at once (after the read
    // that brought it), though the driver was asked already.
    let express = put("k", b"urgent", Priority::RealTime, true);
    assert_eq!(
        conn.send(&express, forwarded, now + 1000 * US),
        Ok(Sent::Queued(WriteHint::WriteNow))
    );
    write_all(&mut conn, now + 1000 * US);
    assert_eq!(
        conn.send(&express, forwarded, now + 1100 * US),
        Ok(Sent::Queued(WriteHint::WriteNow)),
        "with nobody writing"
    );
}

#[test]
fn a_large_message_in_fragments_is_written_by_its_sender_when_nobody_writes() {
    let (ni, _) = negotiated(2048, 10_000);
    let now = Instant::now();
    let mut conn = stream_connection(&ni, Limits::default(), now);
    // A few fragments: the driver writes them while the sender makes its next message.
    let small = put("small", &[7; 4_000], Priority::Data, false);
    let o = opts(Priority::Data, CongestionControl::Block, now);
    assert_eq!(conn.send(&small, o, now), Ok(Sent::Queued(WriteHint::Wake)));
    write_all(&mut conn, now);
    // SENDER_WRITES_FROM fragments or more: the sender writes them.
    let big = put(
        "big",
        &[7; 2048 * SENDER_WRITES_FROM],
        Priority::Data,
        false,
    );
    // Full batches no later message can join: no hand-over to the driver on their way.
    assert_eq!(
        conn.send(&big, o, now),
        Ok(Sent::Queued(WriteHint::WriteNow))
    );
    let t = conn.poll_transmit(now).expect("the fragments");
    // While its sender writes, the next one leaves its message to it.
    assert_eq!(
        conn.send(&big, o, now + US),
        Ok(Sent::Queued(WriteHint::None))
    );
    let n = t.remaining();
    assert!(conn.transmitted(t, n, now + US));
    // Forwarded, a message in fragments is still the driver's to write.
    write_all(&mut conn, now + 2 * US);
    let forwarded = SendOptions {
        forwarded: true,
        ..o
    };
    assert_eq!(
        conn.send(&big, forwarded, now + 3 * US),
        Ok(Sent::Queued(WriteHint::Wake))
    );
    // Where the link seals what it writes, the driver writes them, beside the sender.
    let sealing = Limits {
        sender_writes_fragments: false,
        ..Limits::default()
    };
    let mut conn = stream_connection(&ni, sealing, now);
    assert_eq!(conn.send(&big, o, now), Ok(Sent::Queued(WriteHint::Wake)));
}

#[test]
fn a_streaming_sender_fills_batches_and_a_lone_message_never_waits() {
    let (ni, _) = negotiated(u16::MAX, 10_000);
    let t0 = Instant::now();
    let mut conn = stream_connection(&ni, Limits::default(), t0);
    let msg = put("k", &[1; 8], Priority::Data, false);
    // A lone message: written at once.
    conn.send(&msg, opts(Priority::Data, CongestionControl::Block, t0), t0)
        .unwrap();
    let t = conn.poll_transmit(t0).expect("a lone message goes at once");
    let n = t.remaining();
    conn.transmitted(t, n, t0);
    // 1,000 messages 1 µs apart, the driver looking every 5 µs: it leaves the batch to
    // grow while they come...
    let mut now = t0 + MS;
    let mut transmits = 0;
    for i in 0..1000 {
        conn.send(
            &msg,
            opts(Priority::Data, CongestionControl::Block, now),
            now,
        )
        .unwrap();
        if i % 5 != 4 {
            now += US;
            continue;
        }
        if let Some(t) = conn.poll_transmit(now) {
            transmits += 1;
            let n = t.remaining();
            conn.transmitted(t, n, now);
        }
        now += US;
    }
    // ...and at most every time limit (200 µs) or 16 KiB.
    assert!(
        transmits <= 1000 / 200 + 2,
        "{transmits} writes for 1,000 messages"
    );
    // Once the sender stops, the driver's next look (HOLD_LOOK later) finds the batch
    // the same, and writes it.
    let until = conn.poll_timeout().unwrap();
    assert!(until <= now + HOLD_LOOK, "{:?}", until.duration_since(now));
    let t = conn
        .poll_transmit(until)
        .expect("the batch stopped growing");
    let n = t.remaining();
    conn.transmitted(t, n, until);
    // A sender 100 µs apart (10 kHz) is not streaming: nothing waits.
    let mut now = now + MS;
    for _ in 0..10 {
        conn.send(
            &msg,
            opts(Priority::Data, CongestionControl::Block, now),
            now,
        )
        .unwrap();
        let t = conn.poll_transmit(now).expect("10 kHz is never held");
        let n = t.remaining();
        conn.transmitted(t, n, now);
        now += 100 * US;
    }
}

#[test]
fn forwarded_block_messages_wait_in_the_overflow_and_the_source_is_told_when_it_drains() {
    let mut net = Net::stream(2048, 10_000, 4096, Limits::default());
    net.b.read_rate = 0;
    let msg = put("k", &[7; 1000], Priority::Data, false);
    let fwd = SendOptions {
        forwarded: true,
        ..opts(Priority::Data, CongestionControl::Block, net.now)
    };
    let mut overflowed = 0;
    for _ in 0..100 {
        match net.a.conn.send(&msg, fwd, net.now).unwrap() {
            Sent::Overflowed => overflowed += 1,
            Sent::Queued(_) => {}
            Sent::Direct(_) => unreachable!("Connection::send hands them to the driver"),
        }
        net.step(US);
    }
    assert!(overflowed > 0);
    assert!(net.a.conn.outbound().overflow_bytes() > 0);
    net.b.read_rate = usize::MAX;
    assert!(net.run_until(US, 10_000, |n| n.a.events.contains(&Event::OverflowDrained)));
    assert!(net.run_until(US, 10_000, |n| n.b.received.len() == 100));
    // A forwarded `drop` message never waits: dropped and counted.
    net.b.read_rate = 0;
    let fwd_drop = SendOptions {
        congestion: CongestionControl::Drop,
        ..fwd
    };
    let mut dropped = false;
    for _ in 0..100 {
        if net.a.conn.send(&msg, fwd_drop, net.now) == Err(SendError::Dropped) {
            dropped = true;
            break;
        }
        net.step(US);
    }
    assert!(dropped);
}

#[test]
fn best_effort_datagrams_lost_and_reordered_are_delivered_in_order_without_duplicates() {
    // Every 7th datagram lost, every 5th swapped with the one before it.
    let mut net = Net::datagrams(1024, 7, 5);
    for i in 0..500u32 {
        let msg = put("k", &i.to_le_bytes(), Priority::Data, false);
        let o = SendOptions {
            reliability: Reliability::BestEffort,
            ..opts(Priority::Data, CongestionControl::Drop, net.now)
        };
        net.a.conn.send(&msg, o, net.now).unwrap();
        // One message per datagram: written before the next comes; read ten at a time.
        net.write_a();
        if i % 10 == 9 {
            net.step(100 * US);
        }
    }
    net.run_until(US, 100, |_| false);
    let seen: Vec<u32> = net
        .b
        .received
        .iter()
        .map(|r| u32::from_le_bytes(r.2[..4].try_into().unwrap()))
        .collect();
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "out of order or repeated"
    );
    assert!(
        seen.len() >= 500 * 6 / 7 - 100 && seen.len() < 500,
        "{}",
        seen.len()
    );
    let stats = net.b.conn.inbound().stats();
    assert!(stats.gaps > 0 && stats.stale > 0, "{stats:?}");
    assert!(net.b.events.is_empty(), "loss does not end a datagram link");
}

#[test]
fn a_large_forwarded_message_without_room_overflows_and_says_so() {
    let mut net = Net::stream(2048, 10_000, 4096, Limits::default());
    net.b.read_rate = 0;
    let big = put("k", &[7; 5000], Priority::Data, false);
    let fwd = SendOptions {
        forwarded: true,
        ..opts(Priority::Data, CongestionControl::Block, net.now)
    };
    let mut overflowed = false;
    for _ in 0..100 {
        let sent = net.a.conn.send(&big, fwd, net.now);
        if net.a.conn.outbound().overflow_bytes() > 0 {
            // The very send that found no room says so.
            assert_eq!(sent, Ok(Sent::Overflowed));
            overflowed = true;
            break;
        }
        net.step(US);
    }
    // Its source is told to pause (and is released when the overflow drains).
    assert!(overflowed);
    assert!(net.a.conn.outbound().overflow_bytes() >= 5000);
    net.b.read_rate = usize::MAX;
    assert!(net.run_until(US, 10_000, |n| n.a.events.contains(&Event::OverflowDrained)));
}

/// Appends to `wire` what `conn` hands out from `now` on, every transmit taken whole and
/// a batch held for more looked at again when its hold ends; returns the time then.
fn drain_to(conn: &mut Connection, mut now: Instant, wire: &mut Vec<u8>) -> Instant {
    loop {
        while let Some(t) = conn.poll_transmit(now) {
            let mut slices = [std::io::IoSlice::new(&[]); 2 * GATHER_MAX];
            let count = t.io_slices(&mut slices);
            for s in &slices[..count] {
                wire.extend_from_slice(s);
            }
            let n = t.remaining();
            conn.transmitted(t, n, now);
        }
        match conn.outbound().held_until() {
            Some(until) => now = until,
            None => return now,
        }
    }
}

/// The framed bytes of one fragment of a direct write.
fn framed(f: &DirectFragment, parts: [&[u8]; 3]) -> Vec<u8> {
    let mut slices = [std::io::IoSlice::new(&[]); FRAGMENT_SLICES];
    let n = f.io_slices(parts, &mut slices);
    slices[..n].iter().flat_map(|s| s.iter().copied()).collect()
}

/// The payloads `conn` delivers from `wire`, in order.
fn delivered(conn: &mut Connection, wire: &[u8], now: Instant) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let input = conn.handle_stream(wire, now, |m, _| {
        if let weft_proto::network::NetworkMessage::Push(p) = m.message {
            if let weft_proto::zenoh::PushBody::Put(put) = &p.body {
                got.push(put.payload.to_vec());
            }
        }
    });
    assert_eq!(input.consumed, wire.len(), "every byte read");
    got
}

#[test]
fn a_sender_streaming_messages_in_fragments_writes_them_from_its_own_bytes() {
    let (ni, nb) = negotiated(2048, 10_000);
    let now = Instant::now();
    let mut a = stream_connection(&ni, Limits::default(), now);
    let mut b = stream_connection(&nb, Limits::default(), now);
    let first = put("k", &payload(1, 3_000), Priority::Data, false);
    let second = put("k", &payload(2, 3_000), Priority::Data, false);
    // Express: written at once, not held for more.
    let third = put("k", &payload(3, 100), Priority::Data, true);
    let fourth = put("k", &payload(4, 5_000), Priority::Data, false);
    let o = |at| SendOptions {
        since: None,
        ..opts(Priority::Data, CongestionControl::Block, at)
    };
    let mut wire = Vec::new();
    // The first message in fragments: nothing says the sender streams yet.
    assert_eq!(
        a.send_direct(&first, o(now), now),
        Ok(Sent::Queued(WriteHint::Wake))
    );
    let now = drain_to(&mut a, now, &mut wire);
    // The next, 1 µs later: its sender writes it, the link taking the first fragment
    // whole and 10 bytes of the second.
    let t1 = now + US;
    let Ok(Sent::Direct(mut direct)) = a.send_direct(&second, o(t1), t1) else {
        panic!("a streaming sender writes its own fragments");
    };
    assert_eq!(direct.count(), 2);
    let bulk = second.bulk().unwrap();
    let f1 = direct.next_fragment().unwrap();
    wire.extend(framed(&f1, direct.parts(bulk)));
    let f2 = direct.next_fragment().unwrap();
    wire.extend(&framed(&f2, direct.parts(bulk))[..10]);
    // Meanwhile the link is the sender's: another message waits in the queue.
    assert_eq!(
        a.send_direct(&third, o(t1), t1),
        Ok(Sent::Queued(WriteHint::None))
    );
    a.outbound_mut().direct_blocked(direct, &[f2], 10, bulk, t1);
    // The rest of the fragment the link did not take goes first, then the queue.
    assert_eq!(drain_to(&mut a, t1, &mut wire), t1, "nothing held");
    // Written whole, with nothing queued meanwhile: the link is free again.
    let t2 = t1 + US;
    let Ok(Sent::Direct(mut direct)) = a.send_direct(&fourth, o(t2), t2) else {
        panic!("a streaming sender writes its own fragments");
    };
    let bulk = fourth.bulk().unwrap();
    while let Some(f) = direct.next_fragment() {
        wire.extend(framed(&f, direct.parts(bulk)));
    }
    let batches = a.outbound().stats().batches;
    assert_eq!(a.outbound_mut().direct_done(direct, t2), WriteHint::None);
    assert_eq!(
        a.outbound().stats().batches,
        batches + 3,
        "its three fragments"
    );
    let got = delivered(&mut b, &wire, t2);
    assert_eq!(
        got,
        vec![
            payload(1, 3_000),
            payload(2, 3_000),
            payload(3, 100),
            payload(4, 5_000)
        ]
    );
    // A sender with time between its messages hands them over as before.
    let t3 = t2 + 100 * US;
    assert_eq!(
        a.send_direct(&fourth, o(t3), t3),
        Ok(Sent::Queued(WriteHint::Wake))
    );
}

#[test]
fn a_connection_without_a_writing_sender_hands_direct_messages_to_its_driver() {
    let (ni, nb) = negotiated(2048, 10_000);
    let now = Instant::now();
    let mut a = stream_connection(&ni, Limits::default(), now);
    let mut b = stream_connection(&nb, Limits::default(), now);
    let mut wire = Vec::new();
    let o = opts(Priority::Data, CongestionControl::Block, now);
    for i in 0..5 {
        let msg = put("k", &payload(i, 4_000), Priority::Data, false);
        assert!(matches!(a.send(&msg, o, now), Ok(Sent::Queued(_))));
        drain_to(&mut a, now, &mut wire);
    }
    let got = delivered(&mut b, &wire, now);
    assert_eq!(got, (0..5).map(|i| payload(i, 4_000)).collect::<Vec<_>>());
}

/// `block` options for a message first tried at `at`.
fn block_at(at: Instant) -> SendOptions {
    SendOptions {
        since: None,
        ..opts(Priority::Data, CongestionControl::Block, at)
    }
}

/// `a`'s sender queues `first` (the driver writes it into `wire`), then sends `second`
/// 1 µs after that write: a streaming sender, whose message is its own to write.
/// Returns that write and its time.
fn streaming_direct(
    a: &mut Connection,
    first: &weft_proto::network::NetworkMessage<'_>,
    second: &weft_proto::network::NetworkMessage<'_>,
    now: Instant,
    wire: &mut Vec<u8>,
) -> (DirectWrite, Instant) {
    assert!(matches!(
        a.send_direct(first, block_at(now), now),
        Ok(Sent::Queued(_))
    ));
    let t1 = drain_to(a, now, wire) + US;
    let Ok(Sent::Direct(direct)) = a.send_direct(second, block_at(t1), t1) else {
        panic!("a streaming sender writes its own message");
    };
    (direct, t1)
}

/// Limits of a link that encrypts what it carries (TLS, QUIC).
fn sealing() -> Limits {
    Limits {
        sender_writes_fragments: false,
        sender_writes_any_size: true,
        ..Limits::default()
    }
}

#[test]
fn a_sealing_sender_writes_its_block_messages_of_any_size_waiting_for_the_socket() {
    let (ni, nb) = negotiated(2048, 10_000);
    let now = Instant::now();
    let mut a = stream_connection(&ni, sealing(), now);
    let mut b = stream_connection(&nb, sealing(), now);
    // Ten fragments: more than a transmit holds.
    let first = put("k", &payload(1, 20_000), Priority::Data, false);
    let second = put("k", &payload(2, 20_000), Priority::Data, false);
    let mut wire = Vec::new();
    // The next, 1 µs later: its sender seals it from its own bytes, every fragment.
    let (mut direct, t1) = streaming_direct(&mut a, &first, &second, now, &mut wire);
    assert!(direct.count() > GATHER_MAX, "{}", direct.count());
    let bulk = second.bulk().unwrap();
    let f1 = direct.next_fragment().unwrap();
    wire.extend(framed(&f1, direct.parts(bulk)));
    // The socket takes no more: the sender waits for it, as long as a `block` message
    // waits for room in all.
    let wait = Limits::default().wait_before_close;
    let until = a.outbound_mut().direct_wait(&mut direct, t1);
    assert_eq!(until, Some(t1 + wait));
    let later = t1 + wait / 2;
    assert_eq!(a.outbound_mut().direct_wait(&mut direct, later), until);
    while let Some(f) = direct.next_fragment() {
        wire.extend(framed(&f, direct.parts(bulk)));
    }
    assert_eq!(a.outbound_mut().direct_done(direct, later), WriteHint::None);
    assert_eq!(
        delivered(&mut b, &wire, later),
        vec![payload(1, 20_000), payload(2, 20_000)]
    );
    // A `drop` message is handed over: its sender does not wait for the socket.
    let t2 = later + US;
    let drop = SendOptions {
        since: None,
        ..opts(Priority::Data, CongestionControl::Drop, t2)
    };
    assert!(matches!(
        a.send_direct(&first, drop, t2),
        Ok(Sent::Queued(_))
    ));
}

#[test]
fn a_sealing_sender_that_waited_its_time_with_more_than_a_transmit_left_ends_the_connection() {
    let (ni, _) = negotiated(2048, 10_000);
    let now = Instant::now();
    let mut a = stream_connection(&ni, sealing(), now);
    let msg = put("k", &payload(1, 20_000), Priority::Data, false);
    let mut wire = Vec::new();
    let (mut direct, t1) = streaming_direct(&mut a, &msg, &msg, now, &mut wire);
    let bulk = msg.bulk().unwrap();
    let f1 = direct.next_fragment().unwrap();
    assert!(a.outbound_mut().direct_wait(&mut direct, t1).is_some());
    let past = t1 + Limits::default().wait_before_close;
    assert_eq!(a.outbound_mut().direct_wait(&mut direct, past), None);
    a.outbound_mut()
        .direct_blocked(direct, &[f1], 100, bulk, past);
    assert!(a.outbound().is_closed());
    let mut ended = None;
    while let Some(e) = a.poll_event() {
        if let Event::Ended(reason) = e {
            ended = Some(reason);
        }
    }
    assert!(
        matches!(ended, Some(EndReason::Congested { waited }) if waited == Limits::default().wait_before_close),
        "{ended:?}"
    );
}

#[test]
fn a_sender_whose_group_of_fragments_was_taken_in_part_hands_over_the_rest_in_order() {
    let (ni, nb) = negotiated(2048, 10_000);
    let now = Instant::now();
    let mut a = stream_connection(&ni, Limits::default(), now);
    let mut b = stream_connection(&nb, Limits::default(), now);
    let first = put("k", &payload(1, 5_000), Priority::Data, false);
    let second = put("k", &payload(2, 5_000), Priority::Data, false);
    let mut wire = Vec::new();
    let (mut direct, t1) = streaming_direct(&mut a, &first, &second, now, &mut wire);
    assert_eq!(direct.count(), 3);
    let bulk = second.bulk().unwrap();
    // All three handed out for one write; the link takes the first and 7 bytes of the
    // second.
    let f: Vec<_> = std::iter::from_fn(|| direct.next_fragment()).collect();
    wire.extend(framed(&f[0], direct.parts(bulk)));
    wire.extend(&framed(&f[1], direct.parts(bulk))[..7]);
    let batches = a.outbound().stats().batches;
    a.outbound_mut()
        .direct_blocked(direct, &f[1..], 7, bulk, t1);
    assert_eq!(
        a.outbound().stats().batches,
        batches + 1,
        "the first, whole"
    );
    drain_to(&mut a, t1, &mut wire);
    assert_eq!(
        delivered(&mut b, &wire, t1),
        vec![payload(1, 5_000), payload(2, 5_000)]
    );
}
