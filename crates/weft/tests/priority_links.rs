//! Links reserved for a range of priorities (`?prio=START-END` endpoints) beside a
//! session's main link.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use weft::{FaceInfo, FifoReceiver, Priority, PutOptions, Sample, WhatAmI};

mod common;
use common::session_to as node;

fn peer(listen: bool, connect: &[String]) -> weft::Session {
    node(WhatAmI::Peer, listen, connect)
}

fn real_time() -> PutOptions {
    PutOptions {
        priority: Priority::RealTime,
        congestion_control: weft::CongestionControl::Block,
        express: true,
        ..PutOptions::default()
    }
}

/// The only face of `s`, once `ready` holds for it (at most 30 s: a connector waits up to
/// 4 s between attempts, and a loaded machine may need several).
fn face_when(s: &weft::Session, ready: impl Fn(&FaceInfo) -> bool) -> FaceInfo {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let faces = s.admin().faces;
        if let [face] = faces.as_slice() {
            if ready(face) {
                return face.clone();
            }
        }
        assert!(
            Instant::now() < deadline,
            "faces never got ready: {faces:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn receive(rx: &FifoReceiver<Sample>, n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            rx.recv_timeout(Duration::from_secs(5))
                .expect("a sample within 5 s")
                .payload
                .to_vec()
        })
        .collect()
}

#[test]
fn real_time_messages_travel_on_their_own_link_and_the_rest_on_the_main_one() {
    let a = peer(true, &[]);
    let (_sub, rx) = a.declare_subscriber_channel("prio/**", 256).unwrap();
    let to_a = a.listen_endpoints()[0].clone();
    let b = peer(false, &[to_a.clone(), format!("{to_a}?prio=1-1")]);
    let at_b = face_when(&b, |f| f.priority_links.len() == 1);
    let at_a = face_when(&a, |f| f.priority_links.len() == 1);
    assert_eq!(at_b.priority_links[0].priorities, (1, 1));
    assert_eq!(at_a.priority_links[0].priorities, (1, 1));
    assert_eq!(b.peers().len(), 1, "one session, two links");

    let sent: Vec<Vec<u8>> = (0..50u32)
        .map(|i| {
            let mut p = vec![0xAB; 512];
            p[..4].copy_from_slice(&i.to_le_bytes());
            p
        })
        .collect();
    for p in &sent {
        b.put("prio/rt", p, &real_time()).unwrap();
    }
    assert_eq!(receive(&rx, sent.len()), sent, "in order, all of them");
    // (The counters follow the writes: wait for them.)
    let rt_link_out =
        |f: &FaceInfo| f.priority_links[0].bytes_out - at_b.priority_links[0].bytes_out;
    let after_rt_b = face_when(&b, |f| rt_link_out(f) >= 50 * 512);
    face_when(&a, |f| {
        f.priority_links[0].bytes_in - at_a.priority_links[0].bytes_in >= 50 * 512
    });
    assert!(
        after_rt_b.bytes_out - at_b.bytes_out < 50 * 512,
        "the main link carried the real-time messages too"
    );

    // Data priority stays on the main link.
    let data = PutOptions {
        congestion_control: weft::CongestionControl::Block,
        ..PutOptions::default()
    };
    for p in &sent {
        b.put("prio/data", p, &data).unwrap();
    }
    assert_eq!(receive(&rx, sent.len()), sent);
    let after_data_b = face_when(&b, |f| f.bytes_out - after_rt_b.bytes_out >= 50 * 512);
    assert!(
        after_data_b.priority_links[0].bytes_out - after_rt_b.priority_links[0].bytes_out < 1024,
        "data went on the real-time link"
    );
}

/// A TCP relay to `upstream` whose connections can be cut, and that can refuse new ones.
struct Relay {
    endpoint: String,
    streams: Arc<Mutex<Vec<TcpStream>>>,
    accepting: Arc<AtomicBool>,
}

impl Relay {
    fn start(upstream: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("tcp/{}", listener.local_addr().unwrap());
        let upstream = upstream.trim_start_matches("tcp/").to_string();
        let streams = Arc::new(Mutex::new(Vec::new()));
        let accepting = Arc::new(AtomicBool::new(true));
        let kept = streams.clone();
        let open = accepting.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten().take(64) {
                if !open.load(Ordering::SeqCst) {
                    continue;
                }
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                kept.lock().unwrap().push(client.try_clone().unwrap());
                kept.lock().unwrap().push(server.try_clone().unwrap());
                pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                pipe(server, client);
            }
        });
        Self {
            endpoint,
            streams,
            accepting,
        }
    }

    /// Whether new connections are relayed (else they are closed at once).
    fn accept(&self, on: bool) {
        self.accepting.store(on, Ordering::SeqCst);
    }

    /// Closes every relayed connection, both ways.
    fn cut(&self) {
        for s in self.streams.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
    });
}

#[test]
fn when_a_priority_link_dies_its_messages_go_on_the_main_link_until_it_is_back() {
    let a = peer(true, &[]);
    let (_sub, rx) = a.declare_subscriber_channel("prio/**", 256).unwrap();
    let to_a = a.listen_endpoints()[0].clone();
    let relay = Relay::start(&to_a);
    // The main link goes straight to a; the real-time one through the relay, which
    // reaches the same node: the twin rule does not apply, the range does.
    let b = peer(false, &[to_a, format!("{}?prio=1-2", relay.endpoint)]);
    face_when(&b, |f| f.priority_links.len() == 1);

    relay.accept(false);
    relay.cut();
    face_when(&b, |f| f.priority_links.is_empty());
    for i in 0..20u8 {
        b.put("prio/rt", &[i; 16], &real_time()).unwrap();
    }
    let got = receive(&rx, 20);
    assert_eq!(got, (0..20u8).map(|i| vec![i; 16]).collect::<Vec<_>>());
    assert_eq!(b.peers().len(), 1, "the session survived its priority link");

    // The connector brings the link back, and real-time traffic returns to it.
    relay.accept(true);
    let back = face_when(&b, |f| f.priority_links.len() == 1);
    for i in 0..20u8 {
        b.put("prio/rt", &[i; 256], &real_time()).unwrap();
    }
    assert_eq!(receive(&rx, 20).len(), 20);
    let later = face_when(&b, |_| true);
    assert!(later.priority_links[0].bytes_out - back.priority_links[0].bytes_out >= 20 * 256);
}

#[test]
fn a_priority_link_that_came_up_first_goes_beside_the_main_link_once_that_one_comes() {
    let a = peer(true, &[]);
    let (_sub, rx) = a.declare_subscriber_channel("prio/**", 256).unwrap();
    let to_a = a.listen_endpoints()[0].clone();
    // The main link waits behind a relay that refuses connections until told.
    let main_relay = Relay::start(&to_a);
    main_relay.accept(false);
    let prio_relay = Relay::start(&to_a);
    let b = peer(
        false,
        &[
            main_relay.endpoint.clone(),
            format!("{}?prio=1-2", prio_relay.endpoint),
        ],
    );
    // The real-time link stands in for the session meanwhile.
    face_when(&b, |f| f.priority_links.is_empty());
    b.put("prio/rt", b"alone", &real_time()).unwrap();
    assert_eq!(receive(&rx, 1), [b"alone".to_vec()]);

    // The main link takes over, and the real-time link comes back beside it.
    main_relay.accept(true);
    let both = face_when(&b, |f| f.priority_links.len() == 1);
    face_when(&a, |f| f.priority_links.len() == 1);
    assert_eq!(b.peers().len(), 1, "one session, two links");
    for i in 0..20u8 {
        b.put("prio/rt", &[i; 256], &real_time()).unwrap();
    }
    assert_eq!(receive(&rx, 20).len(), 20);
    let later = face_when(&b, |f| {
        f.priority_links[0].bytes_out - both.priority_links[0].bytes_out >= 20 * 256
    });
    assert!(later.bytes_out - both.bytes_out < 20 * 256);
}

#[test]
fn a_priority_endpoint_alone_is_a_whole_session() {
    let a = peer(true, &[]);
    let (_sub, rx) = a.declare_subscriber_channel("prio/**", 16).unwrap();
    let to_a = a.listen_endpoints()[0].clone();
    let b = peer(false, &[format!("{to_a}?prio=1-1")]);
    let face = face_when(&b, |_| true);
    assert!(face.priority_links.is_empty());
    b.put("prio/data", b"data", &PutOptions::default()).unwrap();
    b.put("prio/rt", b"rt", &real_time()).unwrap();
    let mut got = receive(&rx, 2);
    got.sort();
    assert_eq!(got, [b"data".to_vec(), b"rt".to_vec()]);
}

#[test]
fn a_router_forwards_real_time_messages_on_the_priority_links_of_its_clients() {
    let router = node(WhatAmI::Router, true, &[]);
    let to_router = router.listen_endpoints()[0].clone();
    let twin = [to_router.clone(), format!("{to_router}?prio=1-1")];
    let subscriber = node(WhatAmI::Client, false, &twin);
    let (_sub, rx) = subscriber
        .declare_subscriber_channel("prio/**", 256)
        .unwrap();
    let publisher = node(WhatAmI::Client, false, &twin);
    face_when(&subscriber, |f| f.priority_links.len() == 1);
    let before = face_when(&publisher, |f| f.priority_links.len() == 1);
    // The router has a face per client, each with its real-time link.
    let deadline = Instant::now() + Duration::from_secs(10);
    let at_router = loop {
        let faces = router.admin().faces;
        if faces.len() == 2 && faces.iter().all(|f| f.priority_links.len() == 1) {
            break faces;
        }
        assert!(Instant::now() < deadline, "router faces: {faces:?}");
        std::thread::sleep(Duration::from_millis(10));
    };

    let payload = vec![7u8; 1000];
    let mut got = 0;
    // The publisher learns of the subscriber through the router: retry until it does.
    while got == 0 && Instant::now() < deadline {
        publisher.put("prio/rt", &payload, &real_time()).unwrap();
        got += rx.recv_timeout(Duration::from_millis(100)).iter().count();
    }
    for _ in 0..30 {
        publisher.put("prio/rt", &payload, &real_time()).unwrap();
    }
    assert_eq!(receive(&rx, 30).len(), 30);
    // In on one client's real-time link, out on the other's.
    let after = face_when(&publisher, |f| {
        f.priority_links[0].bytes_out - before.priority_links[0].bytes_out >= 30 * 1000
    });
    assert!(after.bytes_out - before.bytes_out < 30 * 1000);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let faces = router.admin().faces;
        let out_on_links: u64 = faces
            .iter()
            .zip(&at_router)
            .map(|(now, then)| now.priority_links[0].bytes_out - then.priority_links[0].bytes_out)
            .sum();
        if out_on_links >= 30 * 1000 {
            break;
        }
        assert!(Instant::now() < deadline, "router faces: {faces:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The next link event, within 30 s (a connector waits up to 4 s between attempts).
fn next_event(events: &Receiver<weft::LinkEvent>) -> weft::LinkEvent {
    events
        .recv_timeout(Duration::from_secs(30))
        .expect("a link event within 30 s")
}

#[test]
fn link_events_tell_the_main_link_and_each_priority_link_added_and_removed() {
    let a = peer(true, &[]);
    let to_a = a.listen_endpoints()[0].clone();
    let relay = Relay::start(&to_a);
    let (tx, events) = std::sync::mpsc::channel();
    let _listener = a
        .declare_link_events_listener(false, move |e| {
            let _ = tx.send(e);
        })
        .unwrap();
    // The priority link only once the main one is up (else it would stand in for it).
    relay.accept(false);
    let b = peer(false, &[to_a, format!("{}?prio=1-2", relay.endpoint)]);
    let main = next_event(&events);
    relay.accept(true);
    assert_eq!(
        (main.kind, main.zid, main.priorities),
        (weft::SampleKind::Put, b.zid(), Some((0, 7)))
    );
    assert!(main.src.starts_with("tcp/127.0.0.1:") && main.dst.starts_with("tcp/127.0.0.1:"));
    let prio = next_event(&events);
    assert_eq!(
        (prio.kind, prio.zid, prio.priorities),
        (weft::SampleKind::Put, b.zid(), Some((1, 2)))
    );
    assert_ne!(prio.dst, main.dst);

    // With history, a new listener is told of both links at once.
    let (tx2, history) = std::sync::mpsc::channel();
    let _with_history = a
        .declare_link_events_listener(true, move |e| {
            let _ = tx2.send(e);
        })
        .unwrap();
    let mut told = vec![next_event(&history), next_event(&history)];
    told.sort_by_key(|e| e.priorities);
    assert_eq!(told, vec![main.clone(), prio.clone()]);

    // The priority link dies: only it is removed.
    relay.accept(false);
    relay.cut();
    let gone = next_event(&events);
    assert_eq!(
        (gone.kind, gone.dst.as_str()),
        (weft::SampleKind::Delete, prio.dst.as_str())
    );
    // It comes back, then the whole session ends: the priority link, then the main one.
    relay.accept(true);
    let back = next_event(&events);
    assert_eq!(
        (back.kind, back.priorities),
        (weft::SampleKind::Put, Some((1, 2)))
    );
    b.close();
    let first = next_event(&events);
    let second = next_event(&events);
    assert_eq!(
        (first.kind, first.dst.as_str()),
        (weft::SampleKind::Delete, back.dst.as_str())
    );
    assert_eq!(
        (second.kind, second.dst.as_str()),
        (weft::SampleKind::Delete, main.dst.as_str())
    );
    for e in [&first, &second] {
        assert_eq!(e.zid, main.zid);
    }
}

#[test]
fn link_events_stay_paired_when_the_main_link_takes_over_from_a_priority_link() {
    let a = peer(true, &[]);
    let to_a = a.listen_endpoints()[0].clone();
    let (tx, events) = std::sync::mpsc::channel();
    let _listener = a
        .declare_link_events_listener(false, move |e| {
            let _ = tx.send(e);
        })
        .unwrap();
    let main_relay = Relay::start(&to_a);
    main_relay.accept(false);
    let prio_relay = Relay::start(&to_a);
    let _b = peer(
        false,
        &[
            main_relay.endpoint.clone(),
            format!("{}?prio=1-2", prio_relay.endpoint),
        ],
    );
    // The priority link stands in for the session first.
    let stand_in = next_event(&events);
    assert_eq!(
        (stand_in.kind, stand_in.priorities),
        (weft::SampleKind::Put, Some((1, 2)))
    );
    main_relay.accept(true);
    // Every link told added is told removed before the same link could come again.
    // Until the main link and then a priority link beside it are told added, every link
    // told added is told removed at most once, and the stand-in is told removed.
    let mut live: Vec<String> = vec![stand_in.dst.clone()];
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut main_seen, mut beside_seen) = (false, false);
    while !beside_seen {
        assert!(Instant::now() < deadline, "links never settled: {live:?}");
        let e = next_event(&events);
        match e.kind {
            weft::SampleKind::Put => {
                assert!(!live.contains(&e.dst), "added twice: {e:?}");
                beside_seen = main_seen && e.priorities == Some((1, 2));
                main_seen |= e.priorities == Some((0, 7));
                live.push(e.dst);
            }
            weft::SampleKind::Delete => {
                let at = live.iter().position(|d| *d == e.dst);
                assert!(at.is_some(), "removed but never added: {e:?}");
                live.remove(at.unwrap());
            }
        }
    }
    assert!(
        !live.contains(&stand_in.dst),
        "the stand-in was never told removed"
    );
    assert_eq!(live.len(), 2, "{live:?}");
}
