//! Where puts and gets may go (`allowed_destination`), where subscribers' samples and
//! queryables' queries may come from (`allowed_origin`), and which replies a get accepts
//! (`accept_replies`), between two peers.

use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use weft::{
    GetOptions, Locality, PutOptions, ReplyKeyExpr, Sample, Session, SessionError, WhatAmI,
};

mod common;
use common::session;

/// Two peers, `b` connected to `a`, once each sees the other.
fn pair() -> (Session, Session) {
    let a = session(WhatAmI::Peer, true, None);
    let endpoint = a.listen_endpoints()[0].clone();
    let b = session(WhatAmI::Peer, false, Some(&endpoint));
    let deadline = Instant::now() + Duration::from_secs(10);
    while a.admin().faces.is_empty() || b.admin().faces.is_empty() {
        assert!(Instant::now() < deadline, "the peers never met");
        std::thread::sleep(Duration::from_millis(5));
    }
    (a, b)
}

fn channel_subscriber(
    s: &Session,
    key: &str,
    origin: Locality,
) -> (weft::Subscriber, Receiver<Sample>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let sub = s
        .declare_subscriber_from(key, origin, move |sample| {
            let _ = tx.send(sample.clone());
        })
        .unwrap();
    (sub, rx)
}

/// The payloads received, in order, up to and including `last`.
fn until(rx: &Receiver<Sample>, last: &[u8]) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    loop {
        let s = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("a sample within 10 s");
        got.push(s.payload.to_vec());
        if s.payload == last {
            return got;
        }
    }
}

/// Waits until `b` knows the subscribers `a` declared include `key`; returns them all.
fn subscribers_seen(b: &Session, key: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let seen = b.admin().faces[0].subscribers.clone();
        if seen.iter().any(|k| k == key) {
            return seen;
        }
        assert!(Instant::now() < deadline, "{key} never declared: {seen:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn to(destination: Locality) -> PutOptions {
    PutOptions {
        allowed_destination: destination,
        congestion_control: weft::CongestionControl::Block,
        ..PutOptions::default()
    }
}

#[test]
fn a_put_goes_only_where_its_destination_allows() {
    let (a, b) = pair();
    let (_mine, at_a) = channel_subscriber(&a, "loc/**", Locality::Any);
    let (_theirs, at_b) = channel_subscriber(&b, "loc/**", Locality::Any);
    subscribers_seen(&a, "loc/**");
    a.put("loc/x", b"local only", &to(Locality::SessionLocal))
        .unwrap();
    a.put("loc/x", b"remote only", &to(Locality::Remote))
        .unwrap();
    a.put("loc/x", b"both", &to(Locality::Any)).unwrap();
    assert_eq!(
        until(&at_a, b"both"),
        [b"local only".to_vec(), b"both".to_vec()]
    );
    assert_eq!(
        until(&at_b, b"both"),
        [b"remote only".to_vec(), b"both".to_vec()]
    );
}

#[test]
fn a_subscriber_takes_only_what_its_origin_allows_and_a_local_one_is_not_declared() {
    let (a, b) = pair();
    let (_local, local) = channel_subscriber(&a, "org/**", Locality::SessionLocal);
    let (_remote, remote) = channel_subscriber(&a, "org/**", Locality::Remote);
    let (_any, any) = channel_subscriber(&a, "org/any/**", Locality::Any);
    // Declared in that order: once the last is known to b, the others would be.
    let declared = subscribers_seen(&b, "org/any/**");
    assert_eq!(
        declared.iter().filter(|k| k.as_str() == "org/**").count(),
        1,
        "only the Remote subscriber is declared: {declared:?}"
    );
    let block = to(Locality::Any);
    a.put("org/any/x", b"from a", &block).unwrap();
    b.put("org/any/x", b"from b", &block).unwrap();
    a.put("org/any/x", b"a again", &block).unwrap();
    b.put("org/any/x", b"b again", &block).unwrap();
    assert_eq!(
        until(&local, b"a again"),
        [b"from a".to_vec(), b"a again".to_vec()]
    );
    assert_eq!(
        until(&remote, b"b again"),
        [b"from b".to_vec(), b"b again".to_vec()]
    );
    // a's own puts are delivered before they return, so all four come by "b again".
    let mut both = until(&any, b"b again");
    both.sort();
    assert_eq!(
        both,
        [
            b"a again".to_vec(),
            b"b again".to_vec(),
            b"from a".to_vec(),
            b"from b".to_vec()
        ]
    );
}

/// The payloads of a get's replies, sorted.
fn replies(s: &Session, selector: &str, options: &GetOptions) -> Vec<Vec<u8>> {
    let mut got: Vec<Vec<u8>> = s
        .get(selector, options)
        .unwrap()
        .iter()
        .map(|r| r.result.expect("a value").payload.to_vec())
        .collect();
    got.sort();
    got
}

#[test]
fn a_get_goes_only_where_its_destination_allows_and_queryables_take_only_what_their_origin_allows()
{
    let (a, b) = pair();
    let answer = |s: &Session, key: &str, origin: Locality, said: &'static [u8]| {
        let key_owned = key.to_string();
        s.declare_queryable_from(key, false, origin, move |q| {
            q.reply(&key_owned.replace("**", "x"), said, &PutOptions::default())
                .unwrap();
        })
        .unwrap()
    };
    let _a_local = answer(&a, "q/local/**", Locality::SessionLocal, b"a local");
    let _a_remote = answer(&a, "q/remote/**", Locality::Remote, b"a remote");
    let _b_any = answer(&b, "q/b/**", Locality::Any, b"b");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !a.admin().faces[0].queryables.iter().any(|k| k == "q/b/**")
        || !b.admin().faces[0]
            .queryables
            .iter()
            .any(|k| k == "q/remote/**")
    {
        assert!(Instant::now() < deadline, "queryables never declared");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        !b.admin().faces[0]
            .queryables
            .iter()
            .any(|k| k == "q/local/**"),
        "a SessionLocal queryable was declared"
    );
    let with = |d: Locality| GetOptions {
        allowed_destination: d,
        timeout: Some(Duration::from_secs(5)),
        ..GetOptions::default()
    };
    assert_eq!(
        replies(&a, "q/**", &with(Locality::Any)),
        [b"a local".to_vec(), b"b".to_vec()]
    );
    assert_eq!(
        replies(&a, "q/**", &with(Locality::SessionLocal)),
        [b"a local".to_vec()]
    );
    assert_eq!(
        replies(&a, "q/**", &with(Locality::Remote)),
        [b"b".to_vec()]
    );
    assert_eq!(
        replies(&b, "q/**", &with(Locality::Any)),
        [b"a remote".to_vec(), b"b".to_vec()]
    );
}

#[test]
fn a_reply_off_the_query_key_is_refused_unless_the_get_accepts_any() {
    let (a, b) = pair();
    let (tx, outcomes) = std::sync::mpsc::channel();
    let _q = a
        .declare_queryable("ask/**", false, move |q| {
            let outcome = q.reply("elsewhere/x", b"off key", &PutOptions::default());
            let _ = tx.send((q.accepts_replies(), outcome));
        })
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !b.admin().faces[0].queryables.iter().any(|k| k == "ask/**") {
        assert!(Instant::now() < deadline, "queryable never declared");
        std::thread::sleep(Duration::from_millis(5));
    }
    let options = |accept| GetOptions {
        accept_replies: accept,
        timeout: Some(Duration::from_secs(5)),
        ..GetOptions::default()
    };
    assert!(replies(&b, "ask/x", &options(ReplyKeyExpr::MatchingQuery)).is_empty());
    let (accepts, outcome) = outcomes.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(accepts, ReplyKeyExpr::MatchingQuery);
    assert!(
        matches!(outcome, Err(SessionError::ReplyKeyMismatch { .. })),
        "{outcome:?}"
    );
    assert_eq!(
        replies(&b, "ask/x?n=1", &options(ReplyKeyExpr::Any)),
        [b"off key".to_vec()]
    );
    let (accepts, outcome) = outcomes.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(accepts, ReplyKeyExpr::Any);
    assert!(outcome.is_ok());
    // The parameter alone says it too (as a Zenoh querier sends it).
    assert_eq!(
        replies(&b, "ask/x?_anyke", &options(ReplyKeyExpr::MatchingQuery)),
        [b"off key".to_vec()]
    );
}

#[test]
fn a_gets_source_info_reaches_local_and_remote_queryables() {
    let (a, b) = pair();
    let (tx, seen) = std::sync::mpsc::channel();
    let answer = |s: &Session, tx: std::sync::mpsc::Sender<Option<weft::SourceInfo>>| {
        s.declare_queryable("src/**", false, move |q| {
            let _ = tx.send(q.source_info());
            q.reply("src/x", b"ok", &PutOptions::default()).unwrap();
        })
        .unwrap()
    };
    let _at_a = answer(&a, tx.clone());
    let _at_b = answer(&b, tx);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !a.admin().faces[0].queryables.iter().any(|k| k == "src/**") {
        assert!(Instant::now() < deadline, "queryable never declared");
        std::thread::sleep(Duration::from_millis(5));
    }
    let info = weft::SourceInfo {
        zid: a.zid(),
        eid: 7,
        sn: 42,
    };
    let options = GetOptions {
        source_info: Some(info),
        consolidation: weft::Consolidation::None,
        timeout: Some(Duration::from_secs(5)),
        ..GetOptions::default()
    };
    assert_eq!(
        replies(&a, "src/x", &options).len(),
        2,
        "both queryables answered"
    );
    for _ in 0..2 {
        assert_eq!(
            seen.recv_timeout(Duration::from_secs(5)).unwrap(),
            Some(info)
        );
    }
    assert_eq!(
        replies(
            &a,
            "src/x",
            &GetOptions {
                source_info: None,
                ..options
            }
        )
        .len(),
        2
    );
    for _ in 0..2 {
        assert_eq!(seen.recv_timeout(Duration::from_secs(5)).unwrap(), None);
    }
}
