//! get / queryable: between weft sessions, and against Eclipse Zenoh 1.10.2.

use std::time::{Duration, Instant};

use weft::{GetOptions, PutOptions, QueryTarget, Reply, WhatAmI};
mod common;
use common::session;
use weft_testkit::{free_port, ZenohNode};

fn collect(rx: std::sync::mpsc::Receiver<Reply>) -> Vec<Reply> {
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut out = Vec::new();
    while let Ok(r) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        out.push(r);
    }
    out
}

fn answer_with_key_and_params(q: weft::Query) {
    let text = format!("answer to {} [{}]", q.key_expr(), q.parameters());
    if q.key_expr().ends_with("err") {
        q.reply_err(b"oops", "text/plain").unwrap();
    } else {
        q.reply(q.key_expr(), text.as_bytes(), &PutOptions::default())
            .unwrap();
    }
}

#[test]
fn weft_peers_query_each_other_and_themselves() {
    let a = session(WhatAmI::Peer, true, None);
    let _qa = a
        .declare_queryable("demo/q/**", false, answer_with_key_and_params)
        .unwrap();
    let _qe = a
        .declare_queryable("wild/**", false, |q| {
            q.reply_err(b"not here", "text/plain").unwrap();
        })
        .unwrap();
    let b = session(WhatAmI::Peer, false, Some(&a.listen_endpoints()[0]));
    let started = Instant::now();
    let replies = collect(b.get("demo/q/x?p=1", &GetOptions::default()).unwrap());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the get waited for its timeout"
    );
    assert_eq!(replies.len(), 1);
    let s = replies[0].result.as_ref().unwrap();
    assert_eq!(s.key_expr, "demo/q/x");
    assert_eq!(s.payload, b"answer to demo/q/x [p=1]");
    assert_eq!(replies[0].replier_id.map(|r| r.zid), Some(a.zid()));

    let replies = collect(b.get("demo/q/err", &GetOptions::default()).unwrap());
    let err = replies[0].result.as_ref().unwrap_err();
    assert_eq!(
        (err.payload.as_slice(), err.encoding.as_str()),
        (&b"oops"[..], "text/plain")
    );

    // An error answers a query on a wildcard key expression too (it names no key).
    let replies = collect(b.get("wild/*?x=1", &GetOptions::default()).unwrap());
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].result.as_ref().unwrap_err().payload, b"not here");

    // A local queryable answers its own session's get, and no queryable means no reply.
    let _qb = b
        .declare_queryable("local/**", true, |q| {
            q.reply("local/1", b"one", &PutOptions::default()).unwrap();
            q.reply("local/2", b"two", &PutOptions::default()).unwrap();
        })
        .unwrap();
    let mut got: Vec<String> = collect(b.get("local/*", &GetOptions::default()).unwrap())
        .into_iter()
        .map(|r| r.result.unwrap().key_expr.into())
        .collect();
    got.sort();
    assert_eq!(got, ["local/1", "local/2"]);
    let started = Instant::now();
    assert!(collect(b.get("nothing/here", &GetOptions::default()).unwrap()).is_empty());
    assert!(started.elapsed() < Duration::from_secs(5));

    // A querier: the same key expression queried again with other parameters.
    let querier = b
        .declare_querier("demo/q/z", GetOptions::default())
        .unwrap();
    for p in ["a=1", ""] {
        let replies = collect(querier.get(p).unwrap());
        let s = replies[0].result.as_ref().unwrap();
        assert_eq!(s.payload, format!("answer to demo/q/z [{p}]").as_bytes());
    }
}

#[test]
fn a_query_to_a_vanished_queryable_still_ends() {
    let a = session(WhatAmI::Peer, true, None);
    let (hold_tx, hold_rx) = std::sync::mpsc::channel();
    let _qa = a
        .declare_queryable("slow", false, move |q| {
            // Keep the query: no answer, no final, until the session dies.
            let _ = hold_tx.send(q);
        })
        .unwrap();
    let b = session(WhatAmI::Peer, false, Some(&a.listen_endpoints()[0]));
    let options = GetOptions {
        timeout: Some(Duration::from_secs(30)),
        ..GetOptions::default()
    };
    let rx = b.get("slow", &options).unwrap();
    let held = hold_rx.recv_timeout(Duration::from_secs(5)).unwrap();
    let started = Instant::now();
    a.close();
    drop(held);
    assert!(rx.recv_timeout(Duration::from_secs(10)).is_err());
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_cancellation_token_ends_its_gets_at_once_and_later_ones_at_their_start() {
    let a = session(WhatAmI::Peer, true, None);
    let (hold_tx, hold_rx) = std::sync::mpsc::channel();
    let _qa = a
        .declare_queryable("held/**", false, move |q| {
            // Answered once, then kept unfinished: the gets wait for the final.
            q.reply(q.key_expr(), b"first", &PutOptions::default())
                .unwrap();
            let _ = hold_tx.send(q);
        })
        .unwrap();
    let b = session(WhatAmI::Peer, false, Some(&a.listen_endpoints()[0]));
    let token = weft::CancellationToken::new();
    let options = GetOptions {
        timeout: Some(Duration::from_secs(60)),
        consolidation: weft::Consolidation::None,
        cancellation: Some(token.clone()),
        ..GetOptions::default()
    };
    let one = b.get("held/1", &options).unwrap();
    let two = b.get("held/2", &options).unwrap();
    let held = [
        hold_rx.recv_timeout(Duration::from_secs(5)).unwrap(),
        hold_rx.recv_timeout(Duration::from_secs(5)).unwrap(),
    ];
    for rx in [&one, &two] {
        let first = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(first.result.unwrap().payload, b"first");
    }
    assert!(!token.is_cancelled());
    let started = Instant::now();
    token.cancel();
    assert!(token.is_cancelled());
    for rx in [&one, &two] {
        assert!(matches!(
            rx.recv_timeout(Duration::from_secs(5)),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
        ));
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    // A get given the token once it is cancelled sends nothing and ends at once.
    let three = b.get("held/3", &options).unwrap();
    assert!(matches!(
        three.recv_timeout(Duration::from_secs(5)),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
    ));
    // Was it sent? The next get goes on the same link, after it: the queryable would see
    // held/3 first.
    let four = GetOptions {
        cancellation: None,
        ..options
    };
    let _four = b.get("held/4", &four).unwrap();
    let next = hold_rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(next.key_expr(), "held/4", "the cancelled get was sent");
    drop((held, next));
}

#[test]
fn a_reply_after_its_get_timed_out_is_counted_as_expired() {
    let a = session(WhatAmI::Peer, true, None);
    let (hold_tx, hold_rx) = std::sync::mpsc::channel();
    let _qa = a
        .declare_queryable("late", false, move |q| {
            let _ = hold_tx.send(q);
        })
        .unwrap();
    let b = session(WhatAmI::Peer, false, Some(&a.listen_endpoints()[0]));
    let options = GetOptions {
        timeout: Some(Duration::from_millis(200)),
        ..GetOptions::default()
    };
    let rx = b.get("late", &options).unwrap();
    let held = hold_rx.recv_timeout(Duration::from_secs(5)).unwrap();
    // The get ends at its timeout, with no reply; then the answer comes.
    assert!(rx.recv_timeout(Duration::from_secs(10)).is_err());
    held.reply("late", b"too late", &PutOptions::default())
        .unwrap();
    drop(held);
    let expired = || {
        let info = b.admin();
        let face = info.faces.iter().find(|f| f.zid == a.zid()).unwrap();
        let count = |reason: &str| face.discarded.iter().find(|(r, _)| *r == reason).unwrap().1;
        (count("expired"), count("no_route"))
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while expired().0 == 0 {
        assert!(
            Instant::now() < deadline,
            "the late reply was never counted"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(expired(), (1, 0));
}

#[test]
fn weft_get_and_queryable_with_zenoh_through_a_router() {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let Some(_router) =
        ZenohNode::start(&["--mode", "router", "--listen", &endpoint, "--timeout", "60"])
    else {
        return;
    };
    let weft = session(WhatAmI::Client, false, Some(&endpoint));
    // Zenoh queryable, weft get.
    let zq = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--queryable",
        "zq/**",
        "--reply",
        "zenoh says hi",
        "--timeout",
        "30",
    ])
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let replies = collect(weft.get("zq/a/b?x=1", &GetOptions::default()).unwrap());
    assert_eq!(replies.len(), 1, "{replies:?}");
    let s = replies[0].result.as_ref().unwrap();
    assert_eq!(
        (s.key_expr.as_str(), s.payload.as_slice()),
        ("zq/a/b", &b"zenoh says hi"[..])
    );
    let seen: serde_json::Value = serde_json::from_str(&zq.line(5)).unwrap();
    assert_eq!(seen["parameters"], "x=1");
    drop(zq);

    // weft queryable, Zenoh get (with an error reply on one key).
    let _q = weft
        .declare_queryable("wq/**", false, answer_with_key_and_params)
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let getter = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--get",
        "wq/k?y=2",
        "--timeout",
        "5",
    ])
    .unwrap();
    let r: serde_json::Value = serde_json::from_str(&getter.line(10)).unwrap();
    assert_eq!(r["ok"], true);
    assert_eq!(r["key"], "wq/k");
    assert_eq!(r["payload"], "answer to wq/k [y=2]");
    assert_eq!(getter.line(10), "DONE");
    let getter = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--get",
        "wq/err",
        "--timeout",
        "5",
    ])
    .unwrap();
    let r: serde_json::Value = serde_json::from_str(&getter.line(10)).unwrap();
    assert_eq!(
        (r["ok"].as_bool(), r["error"].as_str()),
        (Some(false), Some("oops"))
    );
}

#[test]
fn weft_peer_get_and_queryable_with_a_zenoh_peer() {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let Some(zq) = ZenohNode::start(&[
        "--mode",
        "peer",
        "--listen",
        &endpoint,
        "--queryable",
        "zq/**",
        "--reply",
        "peer hi",
        "--timeout",
        "30",
    ]) else {
        return;
    };
    let weft = session(WhatAmI::Peer, true, Some(&endpoint));
    let options = GetOptions {
        target: QueryTarget::All,
        ..GetOptions::default()
    };
    let replies = collect(weft.get("zq/1", &options).unwrap());
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(replies[0].result.as_ref().unwrap().payload, b"peer hi");
    drop(zq);
    let _q = weft
        .declare_queryable("wq/**", false, answer_with_key_and_params)
        .unwrap();
    let getter = ZenohNode::start(&[
        "--mode",
        "peer",
        "--connect",
        &weft.listen_endpoints()[0],
        "--get",
        "wq/z",
        "--timeout",
        "5",
    ])
    .unwrap();
    let r: serde_json::Value = serde_json::from_str(&getter.line(10)).unwrap();
    assert_eq!(r["payload"], "answer to wq/z []");
}

/// Threads of this process.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[test]
fn many_gets_waiting_on_a_silent_queryable_time_out_without_a_thread_each() {
    use std::sync::{Arc, Mutex};
    const GETS: usize = 200;
    let a = session(WhatAmI::Peer, true, None);
    // A queryable that keeps every query and never answers.
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    let _q = a
        .declare_queryable("silent/**", false, move |q| keep.lock().unwrap().push(q))
        .unwrap();
    let b = session(WhatAmI::Peer, false, Some(&a.listen_endpoints()[0]));
    let options = GetOptions {
        timeout: Some(Duration::from_millis(500)),
        ..GetOptions::default()
    };
    let before = threads();
    let pending: Vec<_> = (0..GETS)
        .map(|i| b.get(&format!("silent/{i}"), &options).unwrap())
        .collect();
    let during = threads();
    assert!(
        during < before + 10,
        "{GETS} gets started {} threads",
        during - before
    );
    // Each one ends at its deadline, with no reply.
    for rx in pending {
        assert!(collect(rx).is_empty());
    }
}

/// The names of this process's threads.
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim().to_owned())
        .collect()
}

/// Thousands of gets waiting on a queryable that never answers each end at its own
/// deadline, neither before nor much after, fired by the links loop: no thread of the
/// process waits for deadlines alone.
#[test]
fn thousands_of_pending_gets_each_time_out_on_time_without_a_timer_thread() {
    use std::sync::{Arc, Mutex};
    const GETS: usize = 3000;
    let a = session(WhatAmI::Peer, true, None);
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    let _q = a
        .declare_queryable("late/**", false, move |q| keep.lock().unwrap().push(q))
        .unwrap();
    let b = session(WhatAmI::Peer, false, Some(&a.listen_endpoints()[0]));
    // Deadlines 0.5 s to 1.4 s away, in no particular order.
    let pending: Vec<_> = (0..GETS)
        .map(|i| {
            let timeout = Duration::from_millis(500 + (i as u64 * 7919) % 900);
            let options = GetOptions {
                timeout: Some(timeout),
                ..GetOptions::default()
            };
            // Taken before the get starts: its own deadline is no earlier.
            let due = Instant::now() + timeout;
            (due, b.get(&format!("late/{i}"), &options).unwrap())
        })
        .collect();
    let mut pending = pending;
    pending.sort_by_key(|(due, _)| *due);
    let mut latest = Duration::ZERO;
    for (due, rx) in pending {
        // The channel closes (with no reply) at the get's deadline.
        assert!(
            matches!(
                rx.recv_timeout(Duration::from_secs(10)),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
            ),
            "a get did not end within 10 s of its deadline"
        );
        let now = Instant::now();
        assert!(
            now >= due,
            "a get ended {:?} before its deadline",
            due - now
        );
        latest = latest.max(now.saturating_duration_since(due));
    }
    println!("{GETS} gets: the latest ended {latest:?} after its deadline");
    assert!(
        latest < Duration::from_secs(1),
        "a get ended {latest:?} after its deadline"
    );
    let names = thread_names();
    assert!(
        !names.iter().any(|n| n == "weft-timers"),
        "a thread waits for deadlines: {names:?}"
    );
}
