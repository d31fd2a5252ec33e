//! Two weft sessions talking to each other over loopback.

use std::time::{Duration, Instant};

mod common;
use common::session;
use weft::{Config, FifoReceiver, PutOptions, Sample, SampleKind, WhatAmI};

fn peer(listen: bool, connect: Option<&str>) -> weft::Session {
    session(WhatAmI::Peer, listen, connect)
}

fn next(rx: &FifoReceiver<Sample>) -> Sample {
    rx.recv_timeout(Duration::from_secs(5))
        .expect("a sample within 5 s")
}

/// The next sample on `key`, skipping others.
fn next_on(rx: &FifoReceiver<Sample>, key: &str) -> Sample {
    loop {
        let s = next(rx);
        if s.key_expr == key {
            return s;
        }
    }
}

#[test]
fn peers_exchange_puts_and_deletes_with_wildcards() {
    let a = peer(true, None);
    let endpoint = a.listen_endpoints()[0].clone();
    let (_sub_a, from_b) = a.declare_subscriber_channel("demo/**", 16).unwrap();
    let b = peer(false, Some(&endpoint));
    let (_sub_b, from_a) = b.declare_subscriber_channel("demo/*/x", 16).unwrap();
    // b's open waited for a's initial declarations: a's subscriber is known.
    let options = PutOptions {
        encoding: "text/plain".into(),
        attachment: Some(b"meta".to_vec()),
        ..PutOptions::default()
    };
    b.put("demo/hello", b"from b", &options).unwrap();
    let s = next(&from_b);
    assert_eq!(s.key_expr, "demo/hello");
    assert_eq!(s.payload, b"from b");
    assert_eq!(s.encoding, "text/plain");
    assert_eq!(s.attachment.as_deref(), Some(&b"meta"[..]));
    // a learns b's subscriber when b declares it (sent after b's open).
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        a.put("demo/1/x", b"from a", &PutOptions::default())
            .unwrap();
        match from_a.recv_timeout(Duration::from_millis(100)) {
            Ok(s) => {
                assert_eq!(s.key_expr, "demo/1/x");
                break;
            }
            Err(_) => assert!(std::time::Instant::now() < deadline, "no sample from a"),
        }
    }
    b.delete("demo/gone", &PutOptions::default()).unwrap();
    // (a's subscriber also saw a's own puts on demo/1/x: skip them.)
    let d = next_on(&from_b, "demo/gone");
    assert_eq!(d.kind, SampleKind::Delete);
    // Local delivery: a's own put reaches a's own subscriber.
    a.put("demo/self", b"me", &PutOptions::default()).unwrap();
    assert_eq!(next_on(&from_b, "demo/self").payload, b"me");
}

#[test]
fn a_publishers_source_info_reaches_the_subscriber() {
    let a = peer(true, None);
    let endpoint = a.listen_endpoints()[0].clone();
    let (_sub, rx) = a.declare_subscriber_channel("source/**", 16).unwrap();
    let b = peer(false, Some(&endpoint));
    let publisher = b
        .declare_publisher("source/x", PutOptions::default())
        .unwrap();
    let id = publisher.id();
    assert_eq!(id.zid, b.zid());
    let named = PutOptions {
        source_info: Some(weft::SourceInfo {
            zid: id.zid,
            eid: id.eid,
            sn: 41,
        }),
        ..PutOptions::default()
    };
    b.put("source/x", b"named", &named).unwrap();
    b.delete("source/x", &named).unwrap();
    b.put("source/x", b"plain", &PutOptions::default()).unwrap();
    let got: Vec<_> = (0..3).map(|_| next_on(&rx, "source/x")).collect();
    assert_eq!(got[0].payload, b"named");
    assert_eq!(got[0].source_info, named.source_info);
    assert_eq!(got[1].kind, SampleKind::Delete);
    assert_eq!(got[1].source_info, named.source_info);
    assert_eq!(got[2].source_info, None);
}

#[test]
fn transport_events_tell_each_open_and_close_in_order() {
    let a = peer(true, None);
    let endpoint = a.listen_endpoints()[0].clone();
    let (tx, events) = std::sync::mpsc::channel();
    let listener = a
        .declare_transport_events_listener(false, move |e| {
            let _ = tx.send(e);
        })
        .unwrap();
    let b = peer(false, Some(&endpoint));
    let opened = events.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(
        (opened.kind, opened.zid, opened.whatami),
        (SampleKind::Put, b.zid(), WhatAmI::Peer)
    );
    // With history, a new listener is told of b at once.
    let (tx2, history) = std::sync::mpsc::channel();
    let _with_history = a
        .declare_transport_events_listener(true, move |e| {
            let _ = tx2.send(e);
        })
        .unwrap();
    let told = history.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!((told.kind, told.zid), (SampleKind::Put, b.zid()));
    let b_zid = b.zid();
    b.close();
    let closed = events.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!((closed.kind, closed.zid), (SampleKind::Delete, b_zid));
    let closed = history.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!((closed.kind, closed.zid), (SampleKind::Delete, b_zid));
    // Dropped: told nothing more.
    drop(listener);
    let c = peer(false, Some(&endpoint));
    let told = history.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!((told.kind, told.zid), (SampleKind::Put, c.zid()));
    assert!(events.recv_timeout(Duration::from_millis(200)).is_err());
}

#[test]
fn a_large_put_is_fragmented_and_arrives_whole() {
    let a = peer(true, None);
    let endpoint = a.listen_endpoints()[0].clone();
    let (_sub, rx) = a.declare_subscriber_channel("big", 4).unwrap();
    let b = peer(false, Some(&endpoint));
    let payload: Vec<u8> = (0..3_000_000u32).map(|i| (i % 253) as u8).collect();
    let options = PutOptions {
        congestion_control: weft::CongestionControl::Block,
        ..PutOptions::default()
    };
    b.put("big", &payload, &options).unwrap();
    let s = next(&rx);
    assert_eq!(s.payload.len(), payload.len());
    assert!(s.payload == payload);
}

#[test]
fn closing_a_peer_is_noticed_by_the_other() {
    let a = peer(true, None);
    let endpoint = a.listen_endpoints()[0].clone();
    let b = peer(false, Some(&endpoint));
    assert_eq!(b.peers(), vec![a.zid()]);
    b.close();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !a.peers().is_empty() {
        assert!(std::time::Instant::now() < deadline, "a still sees b");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn timestamps_from_the_hybrid_logical_clock() {
    let a = peer(true, None);
    let (_sub, rx) = a.declare_subscriber_channel("ts/**", 16).unwrap();
    let mut config = Config {
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        connect: vec![a.listen_endpoints()[0].parse().unwrap()],
        timestamping: Some(true),
        ..Config::default()
    };
    config.scouting.gossip.enabled = false;
    let b = weft::open(config).unwrap();
    b.put("ts/1", b"x", &PutOptions::default()).unwrap();
    b.put("ts/2", b"y", &PutOptions::default()).unwrap();
    let (s1, s2) = (next(&rx), next(&rx));
    let (t1, t2) = (s1.timestamp.unwrap(), s2.timestamp.unwrap());
    assert_eq!(t1.id, b.zid());
    assert!(t2 > t1, "timestamps increase");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        u64::from(t1.seconds()).abs_diff(now) < 60,
        "NTP64 time since the UNIX epoch"
    );
    // An application timestamp is kept as given.
    let given = a.new_timestamp();
    let options = PutOptions {
        timestamp: Some(given),
        ..PutOptions::default()
    };
    b.put("ts/3", b"z", &options).unwrap();
    assert_eq!(next(&rx).timestamp, Some(given));
    // Without timestamping (the peer default), no timestamp.
    a.put("ts/4", b"w", &PutOptions::default()).unwrap();
    assert_eq!(next_on(&rx, "ts/4").timestamp, None);
}

#[test]
fn manual_batching_holds_messages_until_flushed() {
    let a = peer(true, None);
    let (_sub, rx) = a.declare_subscriber_channel("mb/**", 1024).unwrap();
    let b = peer(false, Some(&a.listen_endpoints()[0]));
    // Let the opening declarations go out first: they are not part of the test.
    std::thread::sleep(Duration::from_millis(300));
    b.batch_start();
    let before = b.link_stats().batches_out;
    for i in 0..100 {
        b.put(&format!("mb/{i}"), b"12345678", &PutOptions::default())
            .unwrap();
    }
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "sent before the flush"
    );
    b.batch_flush();
    for i in 0..100 {
        assert_eq!(next(&rx).key_expr, format!("mb/{i}"));
    }
    // The writer counts a batch once written: the receiver may be faster.
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while b.link_stats().batches_out == before && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        b.link_stats().batches_out - before,
        1,
        "one batch for 100 messages"
    );
    b.batch_stop();
    b.put("mb/after", b"x", &PutOptions::default()).unwrap();
    assert_eq!(next(&rx).key_expr, "mb/after");
}

#[test]
fn every_drop_is_counted_and_nothing_else_is_lost() {
    let a = peer(true, None);
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let gate = std::sync::Mutex::new(gate);
    let received = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = received.clone();
    let _sub = a
        .declare_subscriber("slow/**", move |_| {
            // The first sample blocks the reader until the test releases it.
            if counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                let _ = gate.lock().unwrap().recv();
            }
        })
        .unwrap();
    let b = peer(false, Some(&a.listen_endpoints()[0]));
    let payload = vec![7u8; 16 * 1024];
    let total = 1000u64;
    for _ in 0..total {
        b.put("slow/big", &payload, &PutOptions::default()).unwrap();
    }
    let dropped: u64 = b.drops().iter().map(|(_, n)| n).sum();
    assert!(
        dropped > 0,
        "a blocked reader must make congestion control drop"
    );
    assert_eq!(b.drops()[0].0, "slow/big");
    release.send(()).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while received.load(std::sync::atomic::Ordering::SeqCst) < total - dropped {
        assert!(
            std::time::Instant::now() < deadline,
            "samples lost beyond the counted drops"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        received.load(std::sync::atomic::Ordering::SeqCst),
        total - dropped
    );
}

#[test]
fn a_sender_blocked_by_a_stalled_peer_returns_when_the_peer_goes() {
    let a = peer(true, None);
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let gate = std::sync::Mutex::new(gate);
    let _sub = a
        .declare_subscriber("stall/**", move |_| {
            // The reader stalls on the first sample, until released.
            let _ = gate.lock().unwrap().recv();
        })
        .unwrap();
    let b = peer(false, Some(&a.listen_endpoints()[0]));
    let (done_tx, done) = std::sync::mpsc::channel();
    let publisher = {
        let b = b.clone();
        std::thread::spawn(move || {
            let block = PutOptions {
                congestion_control: weft::CongestionControl::Block,
                ..PutOptions::default()
            };
            let payload = vec![1u8; 32 * 1024];
            // Far more than the queues and socket buffers hold: this blocks.
            for _ in 0..20_000 {
                if b.put("stall/x", &payload, &block).is_err() {
                    break;
                }
            }
            let _ = done_tx.send(());
        })
    };
    assert!(
        done.recv_timeout(Duration::from_secs(2)).is_err(),
        "the sender must block while the peer stalls"
    );
    a.close();
    let returned = done.recv_timeout(Duration::from_secs(3));
    release.send(()).ok();
    assert!(
        returned.is_ok(),
        "the blocked sender must return once the peer is gone"
    );
    publisher.join().unwrap();
}

#[test]
fn a_put_on_a_key_expression_with_wildcards_reaches_every_intersecting_subscriber() {
    // As in Zenoh: the sample keeps its key expression; subscribers whose expressions
    // intersect it get it, here and through a router, and the others do not.
    let router = session(WhatAmI::Router, true, None);
    let endpoint = router.listen_endpoints()[0].clone();
    let a = session(WhatAmI::Client, false, Some(&endpoint));
    let b = session(WhatAmI::Client, false, Some(&endpoint));
    let (_own, at_a) = a.declare_subscriber_channel("w/x/one", 16).unwrap();
    let (_far, at_b) = b.declare_subscriber_channel("w/*/one", 16).unwrap();
    let (_none, elsewhere) = b.declare_subscriber_channel("w/x/two", 16).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let s = loop {
        // Until b's subscribers are known at the router.
        a.put("w/**/one", b"wild", &PutOptions::default()).unwrap();
        if let Ok(s) = at_b.recv_timeout(Duration::from_millis(100)) {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the wildcard put never reached b"
        );
    };
    assert_eq!(
        (s.key_expr.as_str(), s.payload.as_slice()),
        ("w/**/one", &b"wild"[..])
    );
    assert_eq!(
        next(&at_a).key_expr,
        "w/**/one",
        "a's own subscriber gets it too"
    );
    a.delete("w/*/one", &PutOptions::default()).unwrap();
    let d = next_on(&at_b, "w/*/one");
    assert_eq!(d.kind, SampleKind::Delete);
    let publisher = a
        .declare_publisher("w/*/one", PutOptions::default())
        .unwrap();
    publisher.put(b"declared").unwrap();
    assert_eq!(next_on(&at_b, "w/*/one").payload, b"declared");
    assert!(
        elsewhere.try_recv().is_err(),
        "w/x/two intersects none of them"
    );
    // A key expression that is not one is still refused.
    assert!(a.put("w//x", b"", &PutOptions::default()).is_err());
}

#[test]
fn peers_over_udp_and_unix_sockets() {
    for listen in ["udp/127.0.0.1:0", "unixsock-stream/"] {
        let listen = if listen.starts_with("unixsock") {
            let path = std::env::temp_dir().join(format!("weft-test-{}.sock", std::process::id()));
            // One left by an earlier process of the same id that did not end cleanly.
            let _ = std::fs::remove_file(&path);
            format!("unixsock-stream/{}", path.display())
        } else {
            listen.to_string()
        };
        let a = weft::open(Config {
            mode: WhatAmI::Peer,
            multicast_scouting: false,
            listen: vec![listen.parse().unwrap()],
            ..Config::default()
        })
        .unwrap();
        let endpoint = a.listen_endpoints()[0].clone();
        let (_sub, rx) = a.declare_subscriber_channel("link/**", 16).unwrap();
        let b = peer(false, Some(&endpoint));
        b.put("link/small", b"tiny", &PutOptions::default())
            .unwrap();
        assert_eq!(next(&rx).payload, b"tiny", "{endpoint}");
        // UDP is best effort: a burst larger than the socket's receive buffer may lose
        // fragments, so the UDP case stays within a few datagrams.
        let size = if endpoint.starts_with("udp") {
            150_000
        } else {
            3_000_000
        };
        let big: Vec<u8> = (0..size).map(|i| (i % 241) as u8).collect();
        let options = PutOptions {
            congestion_control: weft::CongestionControl::Block,
            ..PutOptions::default()
        };
        b.put("link/big", &big, &options).unwrap();
        assert!(next(&rx).payload == big, "{endpoint}");
    }
}

#[test]
fn a_real_time_message_overtakes_a_large_low_priority_sample_in_flight() {
    use std::sync::{Arc, Mutex};
    use std::time::Instant;
    use weft::config::TcpBuffers;
    use weft::{CongestionControl, Priority};

    // Small kernel buffers: most of the large sample is still in weft when the real-time
    // message is sent.
    let small = TcpBuffers {
        send: 64 * 1024,
        recv: 64 * 1024,
    };
    let config = |listen: Vec<weft::endpoint::Endpoint>, connect| Config {
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        listen,
        connect,
        tcp_buffers: small,
        ..Config::default()
    };
    let a = weft::open(config(vec!["tcp/127.0.0.1:0".parse().unwrap()], vec![])).unwrap();
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let log = |what: &'static str| {
        let arrivals = arrivals.clone();
        move |_: &Sample| arrivals.lock().unwrap().push(what)
    };
    let _bulk_sub = a.declare_subscriber("prio/bulk", log("bulk")).unwrap();
    let _rt_sub = a.declare_subscriber("prio/rt", log("rt")).unwrap();
    let endpoint = a.listen_endpoints()[0].parse().unwrap();
    let b = weft::open(config(vec![], vec![endpoint])).unwrap();

    let batches_before = b.link_stats().batches_out;
    let bulk = {
        let b = b.clone();
        std::thread::spawn(move || {
            let low = PutOptions {
                priority: Priority::DataLow,
                congestion_control: CongestionControl::Block,
                ..PutOptions::default()
            };
            b.put("prio/bulk", &vec![7u8; 32 << 20], &low).unwrap();
        })
    };
    // Once the large sample's fragments are flowing (about 500 of them in all):
    let deadline = Instant::now() + Duration::from_secs(10);
    while b.link_stats().batches_out < batches_before + 16 {
        assert!(
            Instant::now() < deadline,
            "the large sample is not being sent"
        );
        std::thread::sleep(Duration::from_micros(50));
    }
    let realtime = PutOptions {
        priority: Priority::RealTime,
        express: true,
        ..PutOptions::default()
    };
    b.put("prio/rt", b"now", &realtime).unwrap();
    bulk.join().unwrap();
    while arrivals.lock().unwrap().len() < 2 {
        assert!(Instant::now() < deadline, "both samples within 10 s");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(*arrivals.lock().unwrap(), ["rt", "bulk"]);
}

/// Receives on `rx` until a sample arrives, at most 5 s; `None` if none did.
fn first_within_5s(rx: &FifoReceiver<Sample>) -> Option<Sample> {
    rx.recv_timeout(Duration::from_secs(5)).ok()
}

#[test]
fn a_router_forwards_a_running_stream_to_subscribers_that_come_and_go() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    // A router between clients: one streams on one key the whole time, so that the
    // router's reader keeps the stream's route between messages; subscribers come and
    // go meanwhile, and each change must reach the running stream.
    let router = session(WhatAmI::Router, true, None);
    let endpoint = router.listen_endpoints()[0].clone();
    let publisher = session(WhatAmI::Client, false, Some(&endpoint));
    let stop = Arc::new(AtomicBool::new(false));
    let streaming = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            // Bounded: at most 30 s, one put per 200 µs.
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < deadline {
                publisher
                    .put("flow/a", b"x", &PutOptions::default())
                    .unwrap();
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };
    let first = session(WhatAmI::Client, false, Some(&endpoint));
    let (sub, on_first) = first.declare_subscriber_channel("flow/**", 1024).unwrap();
    let idle = first.link_stats().batches_in;
    for _ in 0..20 {
        assert!(
            first_within_5s(&on_first).is_some(),
            "a subscriber declared while the stream runs receives it"
        );
    }
    assert!(
        first.link_stats().batches_in > idle,
        "the router forwards the stream to the first subscriber's client"
    );
    drop(sub);
    let second = session(WhatAmI::Client, false, Some(&endpoint));
    let (_sub, on_second) = second.declare_subscriber_channel("flow/a", 1024).unwrap();
    assert!(
        first_within_5s(&on_second).is_some(),
        "a second subscriber, on another client, receives the stream too"
    );
    // The first subscriber's undeclaration has reached the router by now: once what
    // was in flight has arrived, the router sends its client nothing more (a keep-alive
    // at most), while the stream goes on to the second.
    std::thread::sleep(Duration::from_millis(300));
    let before = first.link_stats().batches_in;
    std::thread::sleep(Duration::from_millis(400));
    let after = first.link_stats().batches_in;
    assert!(
        after - before <= 1,
        "the router still forwards to an undeclared subscriber ({} batches)",
        after - before
    );
    assert!(
        first_within_5s(&on_second).is_some(),
        "the second still receives"
    );
    stop.store(true, Ordering::Relaxed);
    streaming.join().unwrap();
}

#[test]
fn interleaved_streams_on_more_keys_than_a_reader_keeps_routes_for_reach_their_subscribers() {
    // A reader thread keeps the routes of the last few keys it received data on (32 per
    // thread): here one client interleaves 48 keys through a router, so kept routes are
    // used, overwritten and made stale by a new subscriber while the streams run. Each
    // sample's payload names its key: a route kept for the wrong key would show.
    const KEYS: usize = 48;
    let router = session(WhatAmI::Router, true, None);
    let endpoint = router.listen_endpoints()[0].clone();
    let publisher = session(WhatAmI::Client, false, Some(&endpoint));
    let all = session(WhatAmI::Client, false, Some(&endpoint));
    let (_sub_all, on_all) = all.declare_subscriber_channel("mix/**", 4096).unwrap();
    let key = |i: usize| format!("mix/{i}/{}", if i % 2 == 1 { "odd" } else { "even" });
    let round = |tag: &str| {
        for i in 0..KEYS {
            let k = key(i);
            let payload = format!("{k} {tag}");
            publisher
                .put(&k, payload.as_bytes(), &PutOptions::default())
                .unwrap();
        }
    };
    // The subscriber's declaration reaches the router before the first round arrives
    // whole: wait for one full round, then check three more in order.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        round("warm");
        if let Ok(s) = on_all.recv_timeout(Duration::from_millis(100)) {
            assert_eq!(
                s.payload.to_vec(),
                format!("{} warm", s.key_expr.as_str()).into_bytes()
            );
            break;
        }
        assert!(Instant::now() < deadline, "the router forwards nothing");
    }
    for tag in ["a", "b", "c"] {
        round(tag);
    }
    let mut seen = std::collections::HashMap::new();
    while seen.len() < KEYS || seen.values().any(|n: &usize| *n < 3) {
        let s = next(&on_all);
        let text = String::from_utf8(s.payload.to_vec()).unwrap();
        let (k, tag) = text.split_once(' ').unwrap();
        assert_eq!(
            k,
            s.key_expr.as_str(),
            "a sample delivered under another key"
        );
        if tag != "warm" {
            let n = seen.entry(k.to_string()).or_insert(0);
            assert_eq!(tag, ["a", "b", "c"][*n], "rounds out of order on {k}");
            *n += 1;
        }
    }
    // A new subscriber on the odd keys changes the routes while they are kept.
    let odd = session(WhatAmI::Client, false, Some(&endpoint));
    let (_sub_odd, on_odd) = odd.declare_subscriber_channel("mix/*/odd", 4096).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut rounds = 0;
    let first = loop {
        round(&format!("r{rounds}"));
        rounds += 1;
        if let Ok(s) = on_odd.recv_timeout(Duration::from_millis(100)) {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the new subscriber receives nothing"
        );
    };
    round("last");
    let mut odd_last = 0;
    let mut s = first;
    loop {
        let text = String::from_utf8(s.payload.to_vec()).unwrap();
        let (k, tag) = text.split_once(' ').unwrap();
        assert_eq!(
            k,
            s.key_expr.as_str(),
            "a sample delivered under another key"
        );
        assert!(
            k.ends_with("/odd"),
            "an even key reached the odd subscriber: {k}"
        );
        if tag == "last" {
            odd_last += 1;
            if odd_last == KEYS / 2 {
                break;
            }
        }
        s = next(&on_odd);
    }
    // The first subscriber still has every key of the last round.
    let mut all_last = 0;
    while all_last < KEYS {
        let s = next(&on_all);
        let text = String::from_utf8(s.payload.to_vec()).unwrap();
        let (k, tag) = text.split_once(' ').unwrap();
        assert_eq!(
            k,
            s.key_expr.as_str(),
            "a sample delivered under another key"
        );
        if tag == "last" {
            all_last += 1;
        }
    }
}

#[test]
fn a_client_to_a_refused_endpoint_fails_at_once_unless_told_to_wait() {
    // Nothing listens on this port.
    let port = weft_testkit::free_port();
    let endpoint: weft::endpoint::Endpoint = format!("tcp/127.0.0.1:{port}").parse().unwrap();
    let started = std::time::Instant::now();
    let refused = weft::open(weft::Config {
        mode: WhatAmI::Client,
        multicast_scouting: false,
        connect: vec![endpoint.clone()],
        ..weft::Config::default()
    });
    let Err(e) = refused else {
        panic!("no router: the session does not open");
    };
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "the refusal took {:?}",
        started.elapsed()
    );
    let text = e.to_string();
    assert!(
        text.contains(&port.to_string()) && text.contains("refused"),
        "{text}"
    );
    // With connect.timeout_ms, the client waits for the router to come.
    let (config, _) = weft::Config::from_json5(&format!(
        r#"{{ mode: "client", connect: {{ endpoints: ["{endpoint}"], timeout_ms: 20000 }},
             scouting: {{ multicast: {{ enabled: false }} }} }}"#
    ))
    .unwrap();
    let opener = std::thread::spawn(move || weft::open(config).map(|s| s.zid()));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let router = weft::open(weft::Config {
        mode: WhatAmI::Router,
        multicast_scouting: false,
        listen: vec![endpoint],
        ..weft::Config::default()
    })
    .unwrap();
    assert!(
        opener.join().unwrap().is_ok(),
        "the waiting client did not open"
    );
    drop(router);
}

#[test]
fn a_large_drop_put_to_a_peer_that_reads_nothing_is_dropped_without_holding_the_publisher() {
    let publisher = peer(true, None);
    let port: u16 = publisher.listen_endpoints()[0]
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // A client that subscribes to everything, then never reads its socket.
    let mut stuck = weft_testkit::raw::RawClient::connect(port, 0x5eed).unwrap();
    stuck.declare_subscriber(1, "big/**").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while publisher
        .admin()
        .faces
        .first()
        .is_none_or(|f| f.subscribers.is_empty())
    {
        assert!(Instant::now() < deadline, "the subscriber never came");
        std::thread::sleep(Duration::from_millis(5));
    }
    let payload = vec![7u8; 64 * 1024];
    let options = PutOptions {
        congestion_control: weft::CongestionControl::Drop,
        ..PutOptions::default()
    };
    // Its socket buffers fill within a few dozen puts; from then on each put waits at
    // most wait_before_drop (1 ms) for room, then drops the message whole.
    let started = Instant::now();
    for _ in 0..200 {
        publisher.put("big/x", &payload, &options).unwrap();
    }
    let took = started.elapsed();
    let face = &publisher.admin().faces[0];
    assert!(face.dropped > 0, "nothing was dropped: {face:?}");
    assert!(
        took < Duration::from_secs(4),
        "200 puts held the publisher {took:?}"
    );
    drop(stuck);
}
