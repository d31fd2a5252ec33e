//! A callback that blocks holds only its own link: the other links of the process,
//! whichever I/O thread serves them, go on being read and written.

use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

mod common;
use common::session;
use weft::{PutOptions, Sample, WhatAmI};

/// A listening peer with a channel subscriber on `key`, and a peer connected to it.
fn pair(key: &str) -> (weft::Session, weft::Session, Receiver<Sample>) {
    let listener = session(WhatAmI::Peer, true, None);
    let (sub, rx) = listener.declare_subscriber_channel(key, 64).unwrap();
    std::mem::forget(sub);
    let endpoint = listener.listen_endpoints()[0].clone();
    let sender = session(WhatAmI::Peer, false, Some(&endpoint));
    (listener, sender, rx)
}

#[test]
fn a_blocked_callback_holds_no_other_link() {
    // A subscriber whose callback blocks on the first sample until released.
    let blocked = session(WhatAmI::Peer, true, None);
    let (release, gate) = channel::<()>();
    let gate = std::sync::Mutex::new(gate);
    let (entered_tx, entered) = channel::<()>();
    let entered_tx = std::sync::Mutex::new(entered_tx);
    let (after_tx, after) = channel::<Vec<u8>>();
    let after_tx = std::sync::Mutex::new(after_tx);
    let _blocking = blocked
        .declare_subscriber("stuck/**", move |s: &Sample| {
            if s.payload == b"first" {
                let _ = entered_tx.lock().unwrap().send(());
                let _ = gate.lock().unwrap().recv();
            } else {
                let _ = after_tx.lock().unwrap().send(s.payload.to_vec());
            }
        })
        .unwrap();
    let blocker = session(
        WhatAmI::Peer,
        false,
        Some(&blocked.listen_endpoints()[0].clone()),
    );
    blocker
        .put("stuck/a", b"first", &PutOptions::default())
        .unwrap();
    entered
        .recv_timeout(Duration::from_secs(10))
        .expect("the callback is entered");

    // Meanwhile, links opened before and after, spread over every I/O thread, carry
    // their data: each pair below has two links, and the I/O threads are assigned in
    // turn.
    let pairs: Vec<_> = (0..2 * weft::transport::io_thread_count())
        .map(|n| pair(&format!("free/{n}")))
        .collect();
    for (n, (_, sender, rx)) in pairs.iter().enumerate() {
        let key = format!("free/{n}");
        let started = Instant::now();
        sender.put(&key, b"ping", &PutOptions::default()).unwrap();
        let sample = rx
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("pair {n} is held by another link's callback"));
        assert_eq!(sample.payload, b"ping");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }

    // Released, the blocked link goes on where it was: what was sent meanwhile arrives,
    // in order, and so does what is sent after.
    blocker
        .put("stuck/a", b"meanwhile", &PutOptions::default())
        .unwrap();
    release.send(()).unwrap();
    assert_eq!(
        after.recv_timeout(Duration::from_secs(10)).unwrap(),
        b"meanwhile"
    );
    blocker
        .put("stuck/a", b"after", &PutOptions::default())
        .unwrap();
    assert_eq!(
        after.recv_timeout(Duration::from_secs(10)).unwrap(),
        b"after"
    );
    // And the other links still work, served by whichever thread leads their I/O
    // thread now.
    for (n, (_, sender, rx)) in pairs.iter().enumerate() {
        sender
            .put(&format!("free/{n}"), b"again", &PutOptions::default())
            .unwrap();
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(5)).unwrap().payload,
            b"again"
        );
    }
}
