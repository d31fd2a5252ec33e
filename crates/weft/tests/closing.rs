//! Closing a session whose peers take nothing: the close ends in bounded time, whatever
//! the number of such peers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft::{CongestionControl, Priority, PutOptions, WhatAmI, ZenohId};
use weft_testkit::raw::RawClient;
use weft_testkit::{free_port, wait_for_port, weft_client};
use weft_transport::establish::LocalParams;

/// Subscribers that never read their socket.
const STUCK: u128 = 6;

#[test]
fn a_router_closes_in_bounded_time_however_many_subscribers_take_nothing() {
    // A stalled link is closed after `wait_before_close`: far away here, so that only the
    // close itself bounds its wait.
    let port = free_port();
    let router = weft::open(weft::Config {
        mode: WhatAmI::Router,
        multicast_scouting: false,
        listen: vec![format!("tcp/127.0.0.1:{port}").parse().unwrap()],
        wait_before_close: Duration::from_secs(120),
        ..weft::Config::default()
    })
    .unwrap();
    wait_for_port(port);

    // Clients that subscribe to everything, then read nothing (a lease long enough that
    // the router cannot close them for it before the test ends).
    let stuck: Vec<RawClient> = (0..STUCK)
        .map(|n| {
            let zid = ZenohId::new(0x57c0_0000 + n).unwrap();
            let mut params = LocalParams::new(zid, WhatAmI::Client);
            params.lease_ms = 120_000;
            let mut client = RawClient::connect_with(port, params).unwrap();
            client.declare_subscriber(1, "stuck/**").unwrap();
            client
                .sync(Priority::Control, Duration::from_secs(10))
                .unwrap();
            client
        })
        .collect();

    // A subscriber that reads: once the end marker reaches it, the router has forwarded
    // (or, for the stuck ones, queued or dropped) everything before it.
    let watcher = weft_client(port).unwrap();
    let ended = Arc::new(AtomicBool::new(false));
    let seen = ended.clone();
    let _sub = watcher
        .declare_subscriber("stuck/**", move |s| {
            if s.key_expr.as_str() == "stuck/end" {
                seen.store(true, Ordering::SeqCst);
            }
        })
        .unwrap();

    // Enough for every stuck subscriber's socket and queue in the router to fill up:
    // 8 MiB each, dropped for them past that.
    let publisher = weft_client(port).unwrap();
    let dropping = PutOptions {
        congestion_control: CongestionControl::Drop,
        ..PutOptions::default()
    };
    let payload = vec![5u8; 64 << 10];
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ended.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the end marker never came");
        for _ in 0..128 {
            publisher.put("stuck/data", &payload, &dropping).unwrap();
        }
        publisher
            .put("stuck/end", b"end", &PutOptions::default())
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }

    // Each stuck face used to wait its own 5 s for its writer before the next one's turn
    // (30 s here).
    let started = Instant::now();
    router.close();
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(9),
        "closing with {STUCK} subscribers that take nothing took {took:?}"
    );
    drop(stuck);
}
