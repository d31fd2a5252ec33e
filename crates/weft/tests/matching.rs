//! Matching statuses and listeners: a client's publisher learns of subscribers, and its
//! querier of queryables, declared by another client of the same router, and of its own
//! session's.

use std::sync::mpsc;
use std::time::Duration;

use weft::{GetOptions, PutOptions, WhatAmI};
mod common;
use common::session;

const WAIT: Duration = Duration::from_secs(15);

/// A weft router, and two clients of it.
fn router_and_clients() -> (weft::Session, weft::Session, weft::Session) {
    let router = session(WhatAmI::Router, true, None);
    let endpoint = router.listen_endpoints()[0].clone();
    let a = session(WhatAmI::Client, false, Some(&endpoint));
    let b = session(WhatAmI::Client, false, Some(&endpoint));
    (router, a, b)
}

#[test]
fn a_publisher_is_told_when_subscribers_come_and_go() {
    let (_router, a, b) = router_and_clients();
    let publisher = a.declare_publisher("m/k", PutOptions::default()).unwrap();
    let (tx, rx) = mpsc::channel();
    let _listener = publisher
        .matching_listener(move |m| tx.send(m).unwrap())
        .unwrap();
    assert!(!publisher.matching_status());

    let sub = b.declare_subscriber("m/**", |_| {}).unwrap();
    assert_eq!(rx.recv_timeout(WAIT), Ok(true));
    assert!(publisher.matching_status());
    drop(sub);
    assert_eq!(rx.recv_timeout(WAIT), Ok(false));
    assert!(!publisher.matching_status());

    // A subscriber of its own session matches too; one elsewhere does not.
    let _other = b.declare_subscriber("elsewhere/**", |_| {}).unwrap();
    let own = a.declare_subscriber("m/k", |_| {}).unwrap();
    assert_eq!(rx.recv_timeout(WAIT), Ok(true));
    drop(own);
    assert_eq!(rx.recv_timeout(WAIT), Ok(false));
}

#[test]
fn a_querier_is_told_when_queryables_come_and_go() {
    let (_router, a, b) = router_and_clients();
    let querier = a.declare_querier("mq/k", GetOptions::default()).unwrap();
    let (tx, rx) = mpsc::channel();
    let _listener = querier
        .matching_listener(move |m| tx.send(m).unwrap())
        .unwrap();
    assert!(!querier.matching_status());

    let queryable = b.declare_queryable("mq/**", false, drop).unwrap();
    assert_eq!(rx.recv_timeout(WAIT), Ok(true));
    assert!(querier.matching_status());
    drop(queryable);
    assert_eq!(rx.recv_timeout(WAIT), Ok(false));
    assert!(!querier.matching_status());
}

#[test]
fn a_listener_declared_while_matching_is_told_at_once_and_stops_when_dropped() {
    let (_router, a, b) = router_and_clients();
    let _sub = b.declare_subscriber("ms/**", |_| {}).unwrap();
    let publisher = a.declare_publisher("ms/k", PutOptions::default()).unwrap();
    let (tx, rx) = mpsc::channel();
    let listener = publisher
        .matching_listener(move |m| tx.send(m).unwrap())
        .unwrap();
    assert_eq!(rx.recv_timeout(WAIT), Ok(true));
    drop(listener);
    // Its thread ended: the callback (and its sender) are gone.
    assert_eq!(
        rx.recv_timeout(WAIT),
        Err(mpsc::RecvTimeoutError::Disconnected)
    );
}
