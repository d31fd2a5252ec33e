//! The hand-offs between threads around a shared [`Outbound`], checked with a model
//! checker (shuttle explores the threads' interleavings): senders on several threads, the
//! link's driver on another, each doing what [`WriteHint`] says. Whatever the
//! interleaving, no message is left queued with nobody told to write it, and one writer
//! at a time writes the link.

use std::time::Instant;

use shuttle::sync::{mpsc, Arc, Mutex};
use shuttle::thread;
use weft_proto::batch::framing::PrefixWidth;
use weft_proto::core::{CongestionControl, Priority, Reliability};

use super::sim::{negotiated, put};
use super::*;

/// What the link carries, and whether a transmit is out (the one-writer rule).
#[derive(Default)]
struct Wire {
    bytes: Vec<u8>,
    writing: bool,
}

/// Writes what the sending half hands out, as the shell's write loop does.
fn write_loop(out: &Mutex<Outbound>, wire: &Mutex<Wire>) {
    loop {
        let t = out.lock().unwrap().poll_transmit(Instant::now());
        let Some(t) = t else { return };
        {
            let mut w = wire.lock().unwrap();
            assert!(!w.writing, "two writers at once");
            w.writing = true;
        }
        let mut slices = [std::io::IoSlice::new(&[]); 2 * GATHER_MAX];
        let count = t.io_slices(&mut slices);
        let n = t.remaining();
        thread::yield_now();
        {
            let mut w = wire.lock().unwrap();
            for s in &slices[..count] {
                w.bytes.extend_from_slice(s);
            }
            w.writing = false;
        }
        out.lock().unwrap().transmitted(t, n, Instant::now());
    }
}

/// Messages (by their one-byte payload) in what the wire carried.
fn delivered(bytes: &[u8]) -> Vec<u8> {
    let (_, at_peer) = negotiated(2048, 10_000);
    let framing = Framing::Stream(PrefixWidth::U16);
    let mut inbound = Inbound::new(&at_peer, framing, &Limits::default(), Instant::now());
    let mut got = Vec::new();
    let input = inbound
        .handle_stream(bytes, Instant::now(), |m, _| {
            if let weft_proto::network::NetworkMessage::Push(p) = m.message {
                if let weft_proto::zenoh::PushBody::Put(put) = &p.body {
                    got.push(put.payload[0]);
                }
            }
        })
        .unwrap();
    assert_eq!(input.consumed, bytes.len(), "a batch cut short");
    got
}

fn senders_and_a_driver() {
    let (at_me, _) = negotiated(2048, 10_000);
    let limits = Limits {
        // The hold for a streaming sender is time-based: tested on its own.
        batching_time_limit: None,
        ..Limits::default()
    };
    let framing = Framing::Stream(PrefixWidth::U16);
    let out = Arc::new(Mutex::new(Outbound::new(
        &at_me,
        framing,
        limits,
        Instant::now(),
    )));
    let wire = Arc::new(Mutex::new(Wire::default()));
    let (wake, woken) = mpsc::channel::<bool>();
    let driver = {
        let (out, wire) = (out.clone(), wire.clone());
        thread::spawn(move || {
            // `false` stops it: after every wake the senders sent.
            while woken.recv().unwrap() {
                write_loop(&out, &wire);
            }
        })
    };
    let senders: Vec<_> = (0..2u8)
        .map(|s| {
            let (out, wire, wake) = (out.clone(), wire.clone(), wake.clone());
            thread::spawn(move || {
                for i in 0..3u8 {
                    // Every other message express: the sender may write it itself.
                    let express = i % 2 == 1;
                    let priority = if express {
                        Priority::RealTime
                    } else {
                        Priority::Data
                    };
                    let msg = put("k", &[s * 10 + i], priority, express);
                    let opts = SendOptions {
                        priority,
                        reliability: Reliability::Reliable,
                        congestion: CongestionControl::Block,
                        forwarded: false,
                        since: None,
                    };
                    let sent = out.lock().unwrap().send(&msg, opts, Instant::now);
                    match sent.unwrap() {
                        Sent::Queued(WriteHint::WriteNow) => write_loop(&out, &wire),
                        Sent::Queued(WriteHint::Wake) => wake.send(true).unwrap(),
                        Sent::Queued(WriteHint::None) | Sent::Overflowed => {}
                        Sent::Direct(_) => unreachable!("one-batch messages"),
                    }
                }
            })
        })
        .collect();
    for s in senders {
        s.join().unwrap();
    }
    wake.send(false).unwrap();
    driver.join().unwrap();
    // Nothing is left for anyone to write: every message was written.
    assert!(out.lock().unwrap().poll_transmit(Instant::now()).is_none());
    let mut got = delivered(&wire.lock().unwrap().bytes);
    got.sort_unstable();
    assert_eq!(got, vec![0, 1, 2, 10, 11, 12]);
}

#[test]
fn no_message_waits_unwritten_and_one_writer_writes_whatever_the_interleaving() {
    shuttle::check_random(senders_and_a_driver, 2000);
}

#[test]
fn likely_bugs_of_depth_three_are_found_by_pct() {
    shuttle::check_pct(senders_and_a_driver, 2000, 3);
}
