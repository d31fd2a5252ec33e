//! A callback that blocks holds only its own link: the other links of the process,
//! whichever I/O thread serves them, go on being read and written. A hook run after the
//! read (`weft::executor::after_this_read`) holds not even that one.

use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

mod common;
use common::session;
use weft::{PutOptions, Sample, WhatAmI};

/// A listening peer with a channel subscriber on `key`, and a peer connected to it.
fn pair(key: &str) -> (weft::Session, weft::Session, weft::FifoReceiver<Sample>) {
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
    let pairs: Vec<_> = (0..2 * weft::executor::io_thread_count())
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

#[test]
fn a_routers_blocked_callback_holds_no_stream_it_forwards() {
    // A router whose own subscriber blocks on the first sample, while a stream from one
    // client to another goes through it: the router's I/O threads serve the stream's
    // links and the blocked one alike, and a forwarded message may wait for its thread's
    // next reads. Whatever waits so when a callback blocks must still leave.
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let router = session(WhatAmI::Router, true, None);
    let endpoint = router.listen_endpoints()[0].clone();
    let (release, gate) = channel::<()>();
    let gate = std::sync::Mutex::new(gate);
    let (entered_tx, entered) = channel::<()>();
    let entered_tx = std::sync::Mutex::new(entered_tx);
    let _blocking = router
        .declare_subscriber("stuck/**", move |s: &Sample| {
            if s.payload == b"first" {
                let _ = entered_tx.lock().unwrap().send(());
                let _ = gate.lock().unwrap().recv();
            }
        })
        .unwrap();
    let sink = session(WhatAmI::Client, false, Some(&endpoint));
    let (_flow, flow) = sink.declare_subscriber_channel("flow/**", 1 << 20).unwrap();
    let source = session(WhatAmI::Client, false, Some(&endpoint));
    let stop = Arc::new(AtomicBool::new(false));
    let streaming = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            // Bounded: at most 30 s, a put per 100 µs.
            let deadline = Instant::now() + Duration::from_secs(30);
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                source.put("flow/a", b"x", &PutOptions::default()).unwrap();
                std::thread::sleep(Duration::from_micros(100));
            }
        })
    };
    flow.recv_timeout(Duration::from_secs(10))
        .expect("the stream reaches the sink through the router");
    let blocker = session(WhatAmI::Client, false, Some(&endpoint));
    // Five times (whether a forwarded message is waiting for a later read when the
    // callback blocks depends on the order the router's thread reads its links in).
    for round in 0..5 {
        blocker
            .put("stuck/a", b"first", &PutOptions::default())
            .unwrap();
        entered
            .recv_timeout(Duration::from_secs(10))
            .expect("the router's callback is entered");
        // What arrived until now may have left before the callback blocked; 100 more
        // must come while it stays blocked (a blocked worker is replaced within 0.1 s).
        while flow.try_recv().is_ok() {}
        for n in 0..100 {
            flow.recv_timeout(Duration::from_secs(2))
                .unwrap_or_else(|_| {
                    panic!("round {round}: the stream stopped at {n} while a callback blocks")
                });
        }
        release.send(()).unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    streaming.join().unwrap();
}

/// The session the hook below queries from, and where it says what it got.
static HOOK_SESSION: std::sync::OnceLock<weft::Session> = std::sync::OnceLock::new();
static HOOK_RESULTS: std::sync::Mutex<Option<std::sync::mpsc::Sender<Vec<Vec<u8>>>>> =
    std::sync::Mutex::new(None);

/// A hook (run after the read that brought a sample) that waits for the replies of a
/// query: they come over the link that brought the sample.
fn query_from_the_hook() {
    let session = HOOK_SESSION.get().expect("the session is set");
    let options = weft::GetOptions {
        timeout: Some(Duration::from_secs(10)),
        ..weft::GetOptions::default()
    };
    let replies = session.get("hook/q", &options).unwrap();
    let payloads = replies
        .iter()
        .filter_map(|r| r.result.ok().map(|s| s.payload.to_vec()))
        .collect();
    if let Some(tx) = HOOK_RESULTS.lock().unwrap().as_ref() {
        let _ = tx.send(payloads);
    }
}

#[test]
fn a_hook_after_the_read_may_wait_for_what_its_own_link_brings() {
    let listener = session(WhatAmI::Peer, true, None);
    let (tx, results) = channel();
    *HOOK_RESULTS.lock().unwrap() = Some(tx);
    let _sub = listener
        .declare_subscriber("hook/s", |_: &Sample| {
            assert!(
                weft::executor::after_this_read(query_from_the_hook),
                "a sample from the network is handed on by an I/O thread"
            );
        })
        .unwrap();
    let connected = session(
        WhatAmI::Peer,
        false,
        Some(&listener.listen_endpoints()[0].clone()),
    );
    let _q = connected
        .declare_queryable("hook/q", false, |q| {
            q.reply("hook/q", b"answer", &PutOptions::default())
                .unwrap();
        })
        .unwrap();
    assert!(HOOK_SESSION.set(listener).is_ok());
    // Outside a batch being handed on, nothing is deferred.
    assert!(!weft::executor::after_this_read(query_from_the_hook));
    let deadline = Instant::now() + Duration::from_secs(10);
    let first = loop {
        // Until both declarations have crossed the link.
        connected
            .put("hook/s", b"go", &PutOptions::default())
            .unwrap();
        if let Ok(r) = results.recv_timeout(Duration::from_millis(200)) {
            if !r.is_empty() || Instant::now() > deadline {
                break r;
            }
        }
        assert!(Instant::now() < deadline, "the hook never ran");
    };
    assert_eq!(first, vec![b"answer".to_vec()]);
    // Each sample's hook gets its answer (a hook holding the link would see the query
    // time out without one).
    while results.try_recv().is_ok() {}
    for _ in 0..3 {
        connected
            .put("hook/s", b"go", &PutOptions::default())
            .unwrap();
        let got = results.recv_timeout(Duration::from_secs(20)).unwrap();
        assert_eq!(got, vec![b"answer".to_vec()]);
    }
}
