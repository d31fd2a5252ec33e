//! Serial links accepted by a listener are served by the I/O threads, as sockets are:
//! however many a process accepts, they add no thread. A test binary of its own, so
//! that no other test's threads come and go while it counts.

use std::time::{Duration, Instant};

use weft::{Config, FifoReceiver, PutOptions, Sample, WhatAmI};
use weft_testkit::pty::PtyPair;

/// Serial links accepted once the process's threads are counted.
const LINKS: usize = 6;

/// A peer listening on `listen` and connecting to `connect` (serial endpoints), nothing
/// else.
fn peer(listen: &[String], connect: Option<&str>) -> weft::Session {
    let mut config = Config {
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        listen: listen.iter().map(|e| e.parse().unwrap()).collect(),
        connect: connect.map(|e| e.parse().unwrap()).into_iter().collect(),
        ..Config::default()
    };
    config.scouting.gossip.enabled = false;
    weft::open(config).expect("open a weft session")
}

/// The names of this process's threads.
fn threads() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim().to_owned())
        .collect();
    names.sort();
    names
}

/// Waits until `session` has `n` nodes connected, within 20 s.
fn wait_peers(session: &weft::Session, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while session.peers().len() != n {
        assert!(
            Instant::now() < deadline,
            "{} peers, not {n}",
            session.peers().len()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Puts on `key` from `from` until `rx` has it, within 10 s.
fn put_until_received(from: &weft::Session, key: &str, rx: &FifoReceiver<Sample>) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        from.put(key, b"x", &PutOptions::default()).unwrap();
        if rx.recv_timeout(Duration::from_millis(200)).is_ok() {
            return;
        }
        assert!(Instant::now() < deadline, "{key} never arrived");
    }
}

/// Puts both ways between the listening `a` and `b`, connected on its line `i`.
fn exchange(a: &weft::Session, b: &weft::Session, i: usize) {
    let (_sa, at_a) = a
        .declare_subscriber_channel(&format!("threads/{i}/to-a"), 16)
        .unwrap();
    let (_sb, at_b) = b
        .declare_subscriber_channel(&format!("threads/{i}/to-b"), 16)
        .unwrap();
    put_until_received(b, &format!("threads/{i}/to-a"), &at_a);
    put_until_received(a, &format!("threads/{i}/to-b"), &at_b);
}

#[test]
fn accepted_serial_links_add_no_thread() {
    // Every line first: each has a thread of the test kit's watching socat.
    let Some(lines) = (0..=LINKS)
        .map(|_| PtyPair::new())
        .collect::<Option<Vec<_>>>()
    else {
        return;
    };
    let listen: Vec<String> = lines.iter().map(|l| l.endpoint(&l.a, "")).collect();
    let a = peer(&listen, None);
    // One link up and used: the process's threads (I/O threads, links loop) are running.
    let first = peer(&[], Some(&lines[0].endpoint(&lines[0].b, "")));
    wait_peers(&a, 1);
    exchange(&a, &first, 0);
    let before = threads();

    let others: Vec<weft::Session> = lines[1..]
        .iter()
        .map(|l| peer(&[], Some(&l.endpoint(&l.b, ""))))
        .collect();
    wait_peers(&a, LINKS + 1);
    for (i, b) in others.iter().enumerate() {
        exchange(&a, b, i + 1);
    }
    let after = threads();
    assert!(
        after.len() <= before.len(),
        "{LINKS} accepted serial links added {} threads: before {before:?}, after {after:?}",
        after.len() - before.len()
    );
}
