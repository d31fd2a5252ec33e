//! A Zenoh-Pico publisher behind weftd: the Interest it sends, byte for byte as
//! Zenoh-Pico 1.x sends it (a declared key expression, then an Interest for subscribers
//! with the keyexprs, restricted and aggregate options, Current and Future), is answered
//! as Zenoh's own router answers it, and what the publisher then sends reaches the
//! subscriber.
//!
//! The same scenario runs against weftd and against Eclipse Zenoh 1.10.2's router; the
//! transcripts of what the publisher receives must be equal, and must be the one
//! Zenoh-Pico takes as a match (a subscriber declared on the interest's own key).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{weft_client_at, zenoh_router_at, Weftd};
use weft_proto::core::{Mapping, Priority, WireExpr};
use weft_proto::network::{
    Declaration, Declare, DeclareKeyExpr, Interest, InterestMode, InterestOptions, NetworkMessage,
    Push,
};
use weft_proto::zenoh::{PushBody, Put};
use weft_testkit::free_port;
use weft_testkit::raw::RawClient;

const WAIT: Duration = Duration::from_secs(10);

/// The options of a Zenoh-Pico client publisher's interest.
fn pico_publisher_options() -> InterestOptions {
    InterestOptions::KEYEXPRS
        .with(InterestOptions::SUBSCRIBERS)
        .with(InterestOptions::AGGREGATE)
}

fn declared(id: u16) -> WireExpr<'static> {
    WireExpr {
        scope: id,
        suffix: "",
        mapping: Mapping::Sender,
    }
}

/// Declares `key` as `id`, then sends Zenoh-Pico's publisher interest `interest` on it.
fn pico_publisher_interest(client: &mut RawClient, id: u16, key: &str, interest: u32) {
    let decl = NetworkMessage::Declare(Declare::new(
        None,
        Declaration::KeyExpr(DeclareKeyExpr {
            id,
            wire_expr: WireExpr::key(key),
            unknown: Vec::new(),
        }),
    ));
    client.send(&decl, Priority::Control).unwrap();
    let msg = NetworkMessage::Interest(Interest::new(
        interest,
        InterestMode::CurrentFuture,
        pico_publisher_options(),
        Some(declared(id)),
    ));
    client.send(&msg, Priority::Control).unwrap();
}

/// Names entity ids by order of appearance, so that two routers' transcripts compare.
#[derive(Default)]
struct Ids(Vec<u32>);

impl Ids {
    fn name(&mut self, id: u32) -> String {
        if id == 0 {
            return "0".into();
        }
        let n = match self.0.iter().position(|i| *i == id) {
            Some(n) => n,
            None => {
                self.0.push(id);
                self.0.len() - 1
            }
        };
        format!("e{n}")
    }
}

fn wire(we: &WireExpr<'_>) -> String {
    format!("{}:{:?}/{:?}", we.scope, we.suffix, we.mapping)
}

/// One line per declaration message, in a form that does not depend on the router's
/// choice of ids; `None` for anything else.
fn describe(msg: &NetworkMessage<'_>, ids: &mut Ids) -> Option<String> {
    let NetworkMessage::Declare(d) = msg else {
        return None;
    };
    let interest = d.interest_id.map_or("-".into(), |i| i.to_string());
    let what = match &d.body {
        Declaration::Subscriber(s) => {
            format!(
                "DeclareSubscriber {} {}",
                ids.name(s.id),
                wire(&s.wire_expr)
            )
        }
        Declaration::UndeclareSubscriber(s) => format!("UndeclareSubscriber {}", ids.name(s.id)),
        Declaration::Queryable(q) => format!(
            "DeclareQueryable {} {} complete={}",
            ids.name(q.id),
            wire(&q.wire_expr),
            q.info.complete
        ),
        Declaration::UndeclareQueryable(q) => format!("UndeclareQueryable {}", ids.name(q.id)),
        Declaration::Final(_) => "DeclareFinal".into(),
        // Key-expression declarations are the router's choice of encoding.
        Declaration::KeyExpr(_) | Declaration::UndeclareKeyExpr(_) => return None,
        other => other.name().into(),
    };
    Some(format!("{what} interest={interest}"))
}

/// Reads what `client` receives until a line equal to `last`, recording every line.
fn record_until(client: &mut RawClient, ids: &mut Ids, into: &mut Vec<String>, last: &str) {
    client
        .recv_until(WAIT, |m| match describe(m, ids) {
            Some(line) => {
                let done = line == last;
                into.push(line);
                done
            }
            None => false,
        })
        .unwrap_or_else(|e| panic!("waiting for {last:?}, received {into:?}: {e}"));
}

/// The keys of the subscribers the router answers a plain interest on `key` with (a
/// CurrentFuture one, cancelled at once: Zenoh ignores Current interests in subscribers).
fn subscribers_known(probe: &mut RawClient, key: &str, interest: u32) -> Vec<String> {
    let msg = NetworkMessage::Interest(Interest::new(
        interest,
        InterestMode::CurrentFuture,
        InterestOptions::SUBSCRIBERS,
        Some(WireExpr::key(key)),
    ));
    probe.send(&msg, Priority::Control).unwrap();
    let mut keys = Vec::new();
    probe
        .recv_until(WAIT, |m| match m {
            NetworkMessage::Declare(d) if d.interest_id == Some(interest) => match &d.body {
                Declaration::Subscriber(s) => {
                    keys.push(s.wire_expr.suffix.to_string());
                    false
                }
                Declaration::Final(_) => true,
                _ => false,
            },
            _ => false,
        })
        .unwrap();
    let end = NetworkMessage::Interest(Interest::new(
        interest,
        InterestMode::Final,
        InterestOptions::default(),
        None,
    ));
    probe.send(&end, Priority::Control).unwrap();
    keys.sort();
    keys
}

/// Waits until the router's subscribers on `key` are exactly `expected`.
fn wait_for_subscribers(probe: &mut RawClient, key: &str, expected: &[&str], next_id: &mut u32) {
    let deadline = Instant::now() + WAIT;
    loop {
        *next_id += 1;
        let known = subscribers_known(probe, key, *next_id);
        if known == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the router's subscribers on {key}: {known:?}, expected {expected:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Plays a Zenoh-Pico publisher against the router on `port`; returns what it received.
fn pico_publisher_scenario(port: u16) -> Vec<String> {
    let mut transcript = Vec::new();
    let mut ids = Ids::default();
    let mut probe = RawClient::connect(port, 0x9001).unwrap();
    let mut probe_id = 1000;

    // A subscriber first: the publisher's interest finds it.
    let subscriber = weft_client_at(port);
    let received = Arc::new(AtomicUsize::new(0));
    let counter = received.clone();
    let _sub = subscriber
        .declare_subscriber("demo/example/**", move |s| {
            if s.key_expr.as_ref() == "demo/example/zenoh-pico-pub" {
                counter.fetch_add(1, Ordering::SeqCst);
            }
        })
        .unwrap();
    wait_for_subscribers(
        &mut probe,
        "demo/example/**",
        &["demo/example/**"],
        &mut probe_id,
    );

    let mut publisher = RawClient::connect(port, 0x9002).unwrap();
    pico_publisher_interest(&mut publisher, 1, "demo/example/zenoh-pico-pub", 1);
    record_until(
        &mut publisher,
        &mut ids,
        &mut transcript,
        "DeclareFinal interest=1",
    );

    // What Zenoh-Pico then sends, on its declared key expression, reaches the subscriber.
    let put = NetworkMessage::Push(Push::new(declared(1), PushBody::Put(Put::new(b"pub"))));
    publisher.send(&put, Priority::Data).unwrap();
    let deadline = Instant::now() + WAIT;
    while received.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the subscriber got nothing");
        std::thread::sleep(Duration::from_millis(10));
    }

    // A second interest on a key nobody subscribes to yet.
    pico_publisher_interest(&mut publisher, 2, "demo/later/pico", 2);
    record_until(
        &mut publisher,
        &mut ids,
        &mut transcript,
        "DeclareFinal interest=2",
    );
    // The first matching subscriber brings one aggregate declaration...
    let first = weft_client_at(port);
    let first_sub = first.declare_subscriber("demo/later/**", |_| {}).unwrap();
    record_until(
        &mut publisher,
        &mut ids,
        &mut transcript,
        "DeclareSubscriber e1 2:\"\"/Receiver interest=-",
    );
    // ...a second one nothing, nor the first one leaving while the second stays...
    let second = weft_client_at(port);
    let second_sub = second.declare_subscriber("demo/**", |_| {}).unwrap();
    wait_for_subscribers(
        &mut probe,
        "demo/later/**",
        &["demo/**", "demo/later/**"],
        &mut probe_id,
    );
    drop(first_sub);
    wait_for_subscribers(&mut probe, "demo/later/**", &["demo/**"], &mut probe_id);
    // ...and the last one leaving withdraws it.
    drop(second_sub);
    record_until(
        &mut publisher,
        &mut ids,
        &mut transcript,
        "UndeclareSubscriber e1 interest=-",
    );
    transcript
}

#[test]
fn a_zenoh_pico_publishers_interest_is_answered_as_zenohs_router_answers_it() {
    let port = free_port();
    let weftd = Weftd::start(port, &[]);
    let ours = pico_publisher_scenario(weftd.port);
    assert_eq!(
        ours,
        [
            "DeclareSubscriber e0 1:\"\"/Receiver interest=1",
            "DeclareFinal interest=1",
            "DeclareFinal interest=2",
            "DeclareSubscriber e1 2:\"\"/Receiver interest=-",
            "UndeclareSubscriber e1 interest=-",
        ],
        "weftd's answers to a Zenoh-Pico publisher"
    );

    if weft_testkit::zenoh_python().is_none() {
        return;
    }
    let zenoh_port = free_port();
    let _router = zenoh_router_at(&format!("tcp/127.0.0.1:{zenoh_port}"));
    let theirs = pico_publisher_scenario(zenoh_port);
    assert_eq!(ours, theirs, "weftd answers as Zenoh's router does");
}
