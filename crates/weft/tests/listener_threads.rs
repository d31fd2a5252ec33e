//! Matching and network-events listeners share one thread per process: hundreds of them
//! start no thread of their own, and every one of them is still told what it listens
//! for. A file of its own: it counts the threads of its process.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use weft::{PutOptions, SampleKind, WhatAmI};
mod common;
use common::session;

const WAIT: Duration = Duration::from_secs(15);

/// Threads of this process.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .count()
}

/// Waits until `n` messages came on `rx`, each passing `check`.
fn expect_n<T: std::fmt::Debug>(rx: &mpsc::Receiver<T>, n: usize, check: impl Fn(&T) -> bool) {
    let deadline = Instant::now() + WAIT;
    for i in 0..n {
        let left = deadline.saturating_duration_since(Instant::now());
        let got = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("only {i} of {n} listeners told"));
        assert!(check(&got), "{got:?}");
    }
}

#[test]
fn hundreds_of_listeners_share_one_thread_and_are_all_told() {
    let router = session(WhatAmI::Router, true, None);
    let endpoint = router.listen_endpoints()[0].clone();
    let a = session(WhatAmI::Client, false, Some(&endpoint));
    let b = session(WhatAmI::Client, false, Some(&endpoint));
    let publisher = a.declare_publisher("lt/k", PutOptions::default()).unwrap();

    // The first listener may start the shared thread.
    let first = publisher.matching_listener(|_| {}).unwrap();
    let before = threads();

    const EACH: usize = 100;
    let (matched, matched_rx) = mpsc::channel();
    let (opened, opened_rx) = mpsc::channel();
    let (linked, linked_rx) = mpsc::channel();
    let mut listeners = Vec::new();
    for _ in 0..2 * EACH {
        let tx = matched.clone();
        listeners.push(publisher.matching_listener(move |m| tx.send(m).unwrap()));
    }
    let mut transport_listeners = Vec::new();
    let mut link_listeners = Vec::new();
    for _ in 0..EACH {
        let tx = opened.clone();
        transport_listeners.push(
            router
                .declare_transport_events_listener(false, move |e| tx.send(e.kind).unwrap())
                .unwrap(),
        );
        let tx = linked.clone();
        link_listeners.push(
            router
                .declare_link_events_listener(false, move |e| tx.send(e.kind).unwrap())
                .unwrap(),
        );
    }
    let during = threads();
    assert!(
        during <= before,
        "{} listeners added {} threads",
        4 * EACH,
        during.saturating_sub(before)
    );

    // Each matching listener is told a subscriber came, each events listener that a
    // client opened a session and its link.
    let _sub = b.declare_subscriber("lt/**", |_| {}).unwrap();
    expect_n(&matched_rx, 2 * EACH, |m| *m);
    let c = session(WhatAmI::Client, false, Some(&endpoint));
    expect_n(&opened_rx, EACH, |k| *k == SampleKind::Put);
    expect_n(&linked_rx, EACH, |k| *k == SampleKind::Put);

    // Dropped listeners are told nothing more.
    drop(listeners);
    drop(transport_listeners);
    drop(link_listeners);
    drop(first);
    drop(c);
    assert!(matched_rx.try_recv().is_err());
    assert!(opened_rx.try_recv().is_err());
}
