//! One slow, dead or hostile peer never hurts the others: a subscriber that never reads
//! its socket beside a normal one, under `drop` and under `block`; clients announcing a
//! batch size too small to carry a message.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{rss, Weftd};
use weft::{CongestionControl, PutOptions};
use weft_proto::core::{Priority, WhatAmI, WireExpr, ZenohId};
use weft_proto::network::{Declaration, NetworkMessage};
use weft_testkit::free_port;
use weft_testkit::raw::{RawClient, RawError};
use weft_transport::establish::LocalParams;

/// Samples the publisher sends, and their size (each one fragmented).
const SAMPLES: usize = 400;
const SAMPLE_SIZE: usize = 64 * 1024;

/// A raw client that subscribes to `key` and then never reads its socket.
fn never_reading_subscriber(port: u16, key: &str) -> RawClient {
    let mut client = RawClient::connect(port, 0x51de).unwrap();
    client.declare_subscriber(1, key).unwrap();
    client
}

/// Waits until `count` reaches `target`, or `within` passes; returns the count.
fn wait_for_count(count: &AtomicUsize, target: usize, within: Duration) -> usize {
    let deadline = Instant::now() + within;
    while count.load(Ordering::SeqCst) < target && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    count.load(Ordering::SeqCst)
}

/// A subscriber that takes (almost) nothing, kept alive by the value returned.
type Stuck = Box<dyn std::any::Any>;

/// A subscriber of `session` on `key` counting what it receives; keep the handle.
fn counting_subscriber(session: &weft::Session, key: &str) -> (weft::Subscriber, Arc<AtomicUsize>) {
    let received = Arc::new(AtomicUsize::new(0));
    let counter = received.clone();
    let sub = session
        .declare_subscriber(key, move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    (sub, received)
}

/// Puts on `key` from `publisher` until `received` counts something (the router knows
/// the subscriber then), at most until `within` has passed since `since`.
fn put_until_received(
    publisher: &weft::Session,
    key: &str,
    received: &AtomicUsize,
    since: Instant,
    within: Duration,
    what: &str,
) {
    while received.load(Ordering::SeqCst) == 0 {
        assert!(since.elapsed() < within, "{what}");
        publisher.put(key, b"x", &PutOptions::default()).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A publisher of 64 KiB samples, a normal subscriber and a `stuck` one, through weftd:
/// the normal subscriber gets (nearly) everything, and the publisher's session stays
/// open.
fn slow_subscriber_scenario(congestion: CongestionControl, stuck: fn(u16) -> Option<Stuck>) {
    slow_subscriber_scenario_with(congestion, stuck, false);
}

/// The sessions' `dropped` counters in weftd's admin space, summed; and the drops their
/// subscriptions' counters tell, summed (never more).
fn dropped_in_admin_space(session: &weft::Session) -> (u64, u64) {
    let replies = session
        .get("@/*/router", &weft::GetOptions::default())
        .unwrap();
    let (mut total, mut by_subscriptions) = (0, 0);
    for reply in replies.iter() {
        let sample = reply.result.unwrap();
        let router: serde_json::Value = serde_json::from_slice(&sample.payload).unwrap();
        for s in router["sessions"].as_array().unwrap() {
            let dropped = s["counters"]["dropped"].as_u64().unwrap();
            // Told apart by reason: the reasons add up to the total.
            let by_reason: u64 = s["counters"]["drops"]
                .as_object()
                .unwrap()
                .values()
                .map(|n| n.as_u64().unwrap())
                .sum();
            assert_eq!(by_reason, dropped, "{s}");
            total += dropped;
            let subscriptions: u64 = s["counters"]["subscriptions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["dropped"].as_u64().unwrap())
                .sum();
            assert!(subscriptions <= dropped, "{s}");
            by_subscriptions += subscriptions;
        }
    }
    (total, by_subscriptions)
}

/// As [`slow_subscriber_scenario`]; with `drops_listed`, the stuck subscriber stays
/// connected and the admin space must show what was dropped for it.
fn slow_subscriber_scenario_with(
    congestion: CongestionControl,
    stuck: fn(u16) -> Option<Stuck>,
    drops_listed: bool,
) {
    let weftd = Weftd::start(free_port(), &[]);
    stream_beside_stuck(&weftd, congestion, stuck, drops_listed);
}

/// The scenario of [`slow_subscriber_scenario_with`] through `weftd`; `stuck` makes the
/// subscribers that take (almost) nothing, after the normal one.
fn stream_beside_stuck(
    weftd: &Weftd,
    congestion: CongestionControl,
    stuck: impl FnOnce(u16) -> Option<Stuck>,
    drops_listed: bool,
) {
    let normal = weftd.weft_client();
    let received = Arc::new(AtomicUsize::new(0));
    let ends = Arc::new(AtomicUsize::new(0));
    let (counter, end_counter) = (received.clone(), ends.clone());
    let _sub = normal
        .declare_subscriber("iso/**", move |s| {
            if s.payload.len() == SAMPLE_SIZE {
                counter.fetch_add(1, Ordering::SeqCst);
            } else {
                end_counter.fetch_add(1, Ordering::SeqCst);
            }
        })
        .unwrap();
    let Some(_stuck) = stuck(weftd.port) else {
        return;
    };

    let publisher = weftd.weft_client();
    let options = PutOptions {
        congestion_control: congestion,
        ..PutOptions::default()
    };
    // The router knows both subscribers before the stream starts: the first sample
    // reaches the normal one.
    let payload = vec![7u8; SAMPLE_SIZE];
    let deadline = Instant::now() + Duration::from_secs(10);
    while received.load(Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "the normal subscriber got nothing"
        );
        publisher.put("iso/warmup", &payload, &options).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    received.store(0, Ordering::SeqCst);

    let started = Instant::now();
    for _ in 0..SAMPLES {
        publisher.put("iso/data", &payload, &options).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    // A small marker after the stream, on the same path: once it is there, so is every
    // sample of the stream that will ever arrive. It also shows the publisher's session
    // is still open.
    let blocking = PutOptions {
        congestion_control: CongestionControl::Block,
        ..PutOptions::default()
    };
    publisher.put("iso/end", b"end", &blocking).unwrap();
    assert_eq!(
        wait_for_count(&ends, 1, Duration::from_secs(30)),
        1,
        "the publisher's session was closed"
    );
    let got = received.load(Ordering::SeqCst);
    assert!(
        got * 100 >= SAMPLES * 95,
        "the normal subscriber got {got} of {SAMPLES} samples ({:?} {congestion:?})",
        started.elapsed()
    );
    if drops_listed {
        let (dropped, by_subscriptions) = dropped_in_admin_space(&publisher);
        assert!(dropped > 0, "the admin space shows no drop");
        // Every sample the stuck subscriber lost was for its one subscription.
        assert!(
            by_subscriptions > 0,
            "no subscription shows its drops ({dropped} dropped)"
        );
    }
}

fn never_reading(port: u16) -> Option<Stuck> {
    Some(Box::new(never_reading_subscriber(port, "iso/**")))
}

/// An Eclipse Zenoh client subscriber whose callback sleeps 1 s per sample.
fn sleeping_zenoh_subscriber(port: u16) -> Option<Stuck> {
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let node = weft_testkit::ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--sub",
        "iso/**",
        "--sleep-in-callback",
        "1",
        "--count",
        "1000",
        "--timeout",
        "60",
    ])?;
    Some(Box::new(node))
}

#[test]
fn a_subscriber_that_never_reads_does_not_starve_its_neighbour_under_drop() {
    slow_subscriber_scenario(CongestionControl::Drop, never_reading);
}

#[test]
fn a_subscriber_that_never_reads_does_not_starve_its_neighbour_under_block() {
    slow_subscriber_scenario(CongestionControl::Block, never_reading);
}

#[test]
fn a_zenoh_subscriber_sleeping_in_its_callback_does_not_starve_its_neighbour_under_drop() {
    slow_subscriber_scenario_with(CongestionControl::Drop, sleeping_zenoh_subscriber, true);
}

#[test]
fn a_zenoh_subscriber_sleeping_in_its_callback_does_not_starve_its_neighbour_under_block() {
    slow_subscriber_scenario(CongestionControl::Block, sleeping_zenoh_subscriber);
}

/// Reads what `client` was sent until the router ends its side; false if it has not
/// within `within`.
fn closed_by_router(client: &mut RawClient, within: Duration) -> bool {
    use std::io::Read;
    let deadline = Instant::now() + within;
    let stream = client.stream();
    let mut buf = vec![0u8; 1 << 16];
    while Instant::now() < deadline {
        let left = deadline.saturating_duration_since(Instant::now());
        stream
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .unwrap();
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) => panic!("reading a stuck subscriber's socket: {e}"),
        }
    }
    false
}

#[test]
fn slow_subscribers_together_hold_no_more_than_the_overflow_budget() {
    // 2 MiB for every destination's waiting `block` messages; the time limit far away, so
    // that only the budget can close the stuck subscribers.
    let weftd = Weftd::with_config(
        free_port(),
        "{ transport: { link: { tx: { overflow_budget: 2097152, queue: { congestion_control: \
         { block: { wait_before_close: 120000000 } } } } } } }",
        &[],
    );
    let stuck = std::cell::RefCell::new(Vec::new());
    stream_beside_stuck(
        &weftd,
        CongestionControl::Block,
        |port| {
            for n in 0..2 {
                let mut client = RawClient::connect(port, 0x51de_0000 + n).unwrap();
                client.declare_subscriber(1, "iso/**").unwrap();
                stuck.borrow_mut().push(client);
            }
            Some(Box::new(()))
        },
        false,
    );
    // 25 MiB went to each: beyond the budget, both were closed (and nothing else was),
    // long before their lease (10 s: they send no KeepAlive) would have ended them.
    for (n, client) in stuck.borrow_mut().iter_mut().enumerate() {
        assert!(
            closed_by_router(client, Duration::from_secs(4)),
            "stuck subscriber {n} is still connected"
        );
    }
}

#[test]
fn a_client_announcing_a_tiny_batch_size_is_refused_and_others_keep_flowing() {
    let weftd = Weftd::start(free_port(), &[]);
    let subscriber = weftd.weft_client();
    let (_sub, received) = counting_subscriber(&subscriber, "tiny/**");
    for (n, size) in [0u16, 1, 2, 63].into_iter().enumerate() {
        let mut params =
            LocalParams::new(ZenohId::new(0x7100 + n as u128).unwrap(), WhatAmI::Client);
        params.batch_size = size;
        match RawClient::connect_with(weftd.port, params) {
            Err(RawError::Io(_) | RawError::Handshake(_) | RawError::Closed(_)) => {}
            Ok(_) => panic!("a client announcing batch size {size} was accepted"),
        }
    }
    let publisher = weftd.weft_client();
    let (since, within) = (Instant::now(), Duration::from_secs(10));
    let what = "nothing flows after the refusals";
    put_until_received(&publisher, "tiny/after", &received, since, within, what);
}

#[test]
fn a_get_through_weftd_returns_every_one_of_5000_replies_read_late() {
    const REPLIES: usize = 5000;
    let weftd = Weftd::start(free_port(), &[]);
    let answering = weftd.weft_client();
    let notifier = answering.clone();
    let _queryable = answering
        .declare_queryable("many/**", true, move |q| {
            for i in 0..REPLIES {
                q.reply(&format!("many/{i}"), b"v", &PutOptions::default())
                    .unwrap();
            }
            // Sent after the replies, on the same links, so it arrives after them.
            notifier
                .put("many-done", b"", &PutOptions::default())
                .unwrap();
        })
        .unwrap();
    let asking = weftd.weft_client();
    let done = Arc::new(AtomicUsize::new(0));
    let seen = done.clone();
    let _sub = asking
        .declare_subscriber("many-done", move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    let options = weft::GetOptions {
        consolidation: weft::Consolidation::None,
        timeout: Some(Duration::from_secs(20)),
        ..weft::GetOptions::default()
    };
    // Until the router knows the queryable (and the subscriber), a get finds nobody.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let before = done.load(Ordering::SeqCst);
        let replies = asking.get("many/**", &options).unwrap();
        // The application reads nothing until every reply has arrived.
        if wait_for_count(&done, before + 1, Duration::from_secs(2)) > before {
            let replies: Vec<_> = replies.iter().collect();
            let errors: Vec<_> = replies.iter().filter(|r| r.result.is_err()).collect();
            assert!(errors.is_empty(), "error replies: {errors:?}");
            assert_eq!(replies.len(), REPLIES, "replies received");
            return;
        }
        assert!(Instant::now() < deadline, "the queryable never answered");
    }
}

#[test]
fn handshakes_trickling_one_byte_at_a_time_are_cut_off_and_do_not_lock_real_clients_out() {
    use std::io::Write;
    use std::net::TcpStream;
    use std::sync::atomic::AtomicBool;

    const TRICKLERS: usize = 600;
    // 256 descriptors: room for about 100 links, far fewer than the tricklers.
    let weftd = Weftd::with_fd_limit(
        free_port(),
        256,
        "{ transport: { unicast: { accept_timeout: 1000, accept_pending: 50 } } }",
    );
    // Each trickler announces a 200-byte InitSyn and sends it one byte every 300 ms: never
    // silent for a whole accept_timeout, never done.
    let mut tricklers = Vec::new();
    for _ in 0..TRICKLERS {
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", weftd.port)) {
            let _ = s.write_all(&[200, 0]);
            tricklers.push(Some(s));
        }
    }
    // Those the router's backlog took (all of them, in practice).
    let connected = tricklers.len();
    assert!(connected > 0, "no trickler could connect");
    let cut_off = Arc::new(AtomicUsize::new(0));
    let counted = cut_off.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let trickle = std::thread::spawn(move || {
        let end = Instant::now() + Duration::from_secs(30);
        while !stopped.load(Ordering::SeqCst) && Instant::now() < end {
            for slot in &mut tricklers {
                if let Some(s) = slot {
                    // Writing fails once the router has closed the connection.
                    if s.write_all(&[0]).is_err() {
                        *slot = None;
                        counted.fetch_add(1, Ordering::SeqCst);
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    });

    // Every trickler is cut off: at once beyond accept_pending, after accept_timeout
    // for the whole handshake otherwise.
    let cut = wait_for_count(&cut_off, connected, Duration::from_secs(15));
    assert_eq!(cut, connected, "trickling handshakes still held by weftd");

    // A real client gets its session, and its data flows.
    let deadline = Instant::now() + Duration::from_secs(15);
    let session = loop {
        let config = weft::Config {
            mode: WhatAmI::Client,
            multicast_scouting: false,
            connect: vec![weftd.endpoint.parse().unwrap()],
            open_timeout: Duration::from_secs(2),
            ..weft::Config::default()
        };
        match weft::open(config) {
            Ok(s) => break s,
            Err(e) => assert!(Instant::now() < deadline, "no session: {e}"),
        }
    };
    let (_sub, received) = counting_subscriber(&session, "trickle/**");
    let publisher = weftd.weft_client();
    let (since, within) = (Instant::now(), Duration::from_secs(15));
    put_until_received(
        &publisher,
        "trickle/a",
        &received,
        since,
        within,
        "nothing flows",
    );
    stop.store(true, Ordering::SeqCst);
    trickle.join().unwrap();
}

#[test]
fn sessions_beyond_max_sessions_are_closed_and_the_others_stay() {
    let weftd = Weftd::with_config(
        free_port(),
        "{ transport: { unicast: { max_sessions: 2 } } }",
        &[],
    );
    let mut first = RawClient::connect(weftd.port, 0x5e1).unwrap();
    let mut second = RawClient::connect(weftd.port, 0x5e2).unwrap();
    // A handshake completes before the router counts the session: once both are
    // answered, both are counted, whatever the order their handshake threads ran in.
    for client in [&mut first, &mut second] {
        client
            .sync(Priority::Control, Duration::from_secs(10))
            .unwrap();
    }
    // The third handshake completes, then the router closes it.
    let refused = RawClient::connect(weftd.port, 0x5e3);
    if let Ok(mut third) = refused {
        let closed = third.recv_until(Duration::from_secs(10), |_| false);
        assert!(
            closed.is_err_and(|e| e.kind() != std::io::ErrorKind::TimedOut),
            "the third session stayed open"
        );
    }
    // The first one is still served: its interest is answered.
    first
        .sync(Priority::Control, Duration::from_secs(10))
        .unwrap();
}

#[test]
fn a_fragment_stream_that_never_ends_is_discarded_past_max_message_size() {
    let weftd = Weftd::with_config(
        free_port(),
        "{ transport: { link: { rx: { max_message_size: 4194304 } } } }",
        &[],
    );
    let subscriber = weftd.weft_client();
    let (_sub, received) = counting_subscriber(&subscriber, "endless/**");
    let before = rss(weftd.pid());
    // 4,000 fragments of about 64 KiB: 256 MiB of one message, on three priorities.
    let mut hostile = RawClient::connect(weftd.port, 0xe4d1e55).unwrap();
    for priority in [Priority::Data, Priority::DataHigh, Priority::Background] {
        hostile.send_endless_fragments(priority, 1350).unwrap();
    }
    // The router read all of it: a message sent after it on the same link is handled
    // (answered by a DeclareFinal).
    hostile
        .sync(Priority::Data, Duration::from_secs(30))
        .unwrap();
    let grown = rss(weftd.pid()).saturating_sub(before);
    assert!(
        grown < 48 << 20,
        "weftd grew by {} MiB reading an endless message",
        grown >> 20
    );
    // Everyone else is still served.
    let publisher = weftd.weft_client();
    let (since, within) = (Instant::now(), Duration::from_secs(10));
    let what = "nothing flows after the endless message";
    put_until_received(&publisher, "endless/after", &received, since, within, what);
    // The admin space tells the hostile session's messages discarded for their size (one
    // per priority's stream, at least).
    let replies = publisher
        .get("@/*/router", &weft::GetOptions::default())
        .unwrap();
    let router: serde_json::Value =
        serde_json::from_slice(&replies.recv().unwrap().result.unwrap().payload).unwrap();
    let hostile_zid = weft::ZenohId::new(0xe4d1e55).unwrap().to_string();
    let session = router["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["peer"] == hostile_zid.as_str())
        .expect("the hostile session");
    let too_large = session["counters"]["discarded"]["too_large"]
        .as_u64()
        .unwrap();
    assert!(too_large >= 3, "{session}");
}

#[test]
fn one_shot_sessions_that_put_and_close_at_once_all_deliver() {
    const PUTS: usize = 100;
    let weftd = Weftd::start(free_port(), &[]);
    let subscriber = weftd.weft_client();
    let (_sub, received) = counting_subscriber(&subscriber, "oneshot/**");
    // The router knows the subscriber before the one-shot sessions start.
    let warm = weftd.weft_client();
    let (since, within) = (Instant::now(), Duration::from_secs(10));
    put_until_received(
        &warm,
        "oneshot/warm",
        &received,
        since,
        within,
        "the subscriber got nothing",
    );
    drop(warm);
    received.store(0, Ordering::SeqCst);
    for n in 0..PUTS {
        let session = weftd.weft_client();
        let options = PutOptions {
            congestion_control: CongestionControl::Block,
            ..PutOptions::default()
        };
        session
            .declare_publisher(&format!("oneshot/{n}"), options)
            .unwrap()
            .put(b"once")
            .unwrap();
        session.close();
    }
    let got = wait_for_count(&received, PUTS, Duration::from_secs(10));
    assert_eq!(got, PUTS, "one-shot puts delivered");
}

#[test]
fn huge_key_expressions_are_refused_and_cost_nobody_else_anything() {
    let weftd = Weftd::start(free_port(), &[]);
    let mut hostile = RawClient::connect(weftd.port, 0x10a6).unwrap();
    // A subscription `**/a/a/...` of 13,001 chunks, and puts on a key of 30,000 chunks:
    // matching them is quadratic in their chunks.
    let deep = format!("**/{}", ["a"; 13_000].join("/"));
    hostile.declare_subscriber(1, &deep).unwrap();
    let long_key = ["a"; 30_000].join("/");
    for _ in 0..5 {
        let put = NetworkMessage::Push(weft_proto::network::Push::new(
            WireExpr::key(&long_key),
            weft_proto::zenoh::PushBody::Put(weft_proto::zenoh::Put::new(b"x")),
        ));
        hostile.send(&put, Priority::Data).unwrap();
    }
    // The router has handled all of it once it answers an interest sent after it.
    hostile
        .sync(Priority::Data, Duration::from_secs(60))
        .unwrap();
    // Nobody is told of the huge subscription.
    let mut probe = RawClient::connect(weftd.port, 0x10a7).unwrap();
    let interest = NetworkMessage::Interest(weft_proto::network::Interest::new(
        1,
        weft_proto::network::InterestMode::CurrentFuture,
        weft_proto::network::InterestOptions::SUBSCRIBERS,
        None,
    ));
    probe.send(&interest, Priority::Data).unwrap();
    let mut declared = Vec::new();
    probe
        .recv_until(Duration::from_secs(10), |m| match m {
            NetworkMessage::Declare(d) => match &d.body {
                Declaration::Subscriber(s) => {
                    declared.push(s.wire_expr.suffix.len());
                    false
                }
                Declaration::Final(_) => true,
                _ => false,
            },
            _ => false,
        })
        .unwrap();
    assert!(
        declared.is_empty(),
        "subscribers declared: {declared:?} bytes"
    );
    // A new client's round trip through the router is not held up.
    let started = Instant::now();
    let subscriber = weftd.weft_client();
    let (_sub, received) = counting_subscriber(&subscriber, "a/**");
    let publisher = weftd.weft_client();
    let what = "a new client's round trip is held up by the huge keys";
    put_until_received(
        &publisher,
        "a/b",
        &received,
        started,
        Duration::from_secs(5),
        what,
    );
}

#[test]
fn a_block_publisher_faster_than_its_subscriber_is_slowed_down_not_buffered() {
    const COUNT: usize = 1000;
    let weftd = Weftd::start(free_port(), &[]);
    let subscriber = weftd.weft_client();
    let received = Arc::new(AtomicUsize::new(0));
    let counter = received.clone();
    // About 32 MiB/s at most: slower than the publisher.
    let _sub = subscriber
        .declare_subscriber("fast/**", move |_| {
            std::thread::sleep(Duration::from_millis(2));
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    let publisher = weftd.weft_client();
    let (since, within) = (Instant::now(), Duration::from_secs(10));
    let what = "the subscriber got nothing";
    put_until_received(&publisher, "fast/warmup", &received, since, within, what);
    let start_count = received.load(Ordering::SeqCst);
    let before = rss(weftd.pid());
    let options = PutOptions {
        congestion_control: CongestionControl::Block,
        ..PutOptions::default()
    };
    // 64 MiB, as fast as the publisher can.
    let payload = vec![3u8; SAMPLE_SIZE];
    let mut peak = 0;
    for n in 0..COUNT {
        publisher.put("fast/data", &payload, &options).unwrap();
        if n % 50 == 0 {
            peak = peak.max(rss(weftd.pid()).saturating_sub(before));
        }
    }
    let target = start_count + COUNT;
    assert_eq!(
        wait_for_count(&received, target, Duration::from_secs(60)),
        target,
        "the subscriber did not get every sample"
    );
    // The router held back the publisher instead of queueing what the subscriber could
    // not take yet (up to 64 MiB per destination before back-pressure).
    assert!(
        peak < 32 << 20,
        "weftd grew by {} MiB buffering for a slow subscriber",
        peak >> 20
    );
}

/// A client whose last put and end of stream reach weftd together (sent back to back, on
/// loopback they are both queued before weftd reads) is released at once and its put
/// delivered. The end of the stream raises no event of its own then: weftd must read on
/// past the put to see it, else it would keep the session until the client's lease (an
/// hour here) ended it.
#[test]
fn a_session_ending_together_with_its_last_put_is_released_at_once() {
    let weftd = Weftd::start(free_port(), &[]);
    let subscriber = weftd.weft_client();
    let (_sub, received) = counting_subscriber(&subscriber, "last/**");
    // Declared after the subscriber above, by the same session: once weftd routes to it,
    // it knows the subscriber above too.
    let (_probe, probed) = counting_subscriber(&subscriber, "probe/**");
    let publisher = weftd.weft_client();
    let what = "the subscriber is not known to weftd";
    put_until_received(
        &publisher,
        "probe/x",
        &probed,
        Instant::now(),
        Duration::from_secs(10),
        what,
    );
    for n in 0..5u128 {
        let mut params = LocalParams::new(ZenohId::new(0x1a57_0000 + n).unwrap(), WhatAmI::Client);
        params.lease_ms = 3_600_000;
        let mut client = RawClient::connect_with(weftd.port, params).unwrap();
        client
            .sync(Priority::Data, Duration::from_secs(10))
            .unwrap();
        let put = NetworkMessage::Push(weft_proto::network::Push::new(
            WireExpr::key("last/word"),
            weft_proto::zenoh::PushBody::Put(weft_proto::zenoh::Put::new(b"bye")),
        ));
        client.send(&put, Priority::Data).unwrap();
        client.stream().shutdown(std::net::Shutdown::Write).unwrap();
        assert!(
            closed_by_router(&mut client, Duration::from_secs(20)),
            "session {n} is still held by weftd"
        );
        let n = n as usize + 1;
        assert_eq!(wait_for_count(&received, n, Duration::from_secs(10)), n);
    }
}
