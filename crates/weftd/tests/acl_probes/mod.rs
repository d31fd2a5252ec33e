//! Probes of what a router delivers under access control: one message kind, on one flow,
//! of one client (the actor) through the router, observed by another client (the
//! observer), answered yes (delivered) or no.
//!
//! No probe waits a fixed time. Each one declares what it needs, then *settles*: puts
//! through the router on sync keys, each way, until they arrive, so that the router has
//! processed every declaration of both clients and both have processed everything the
//! router sent them in return. Then the probe's message goes, followed by a marker on the
//! same path (same clients, same transports, same order); once the marker is there, the
//! probe's message is there too, or it was dropped.

// Each test file uses its own part of these helpers.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use weft::{FifoReceiver, GetOptions, PutOptions, Reply, Sample, SampleKind, Session};

/// The longest any single step may take.
const WAIT: Duration = Duration::from_secs(10);

/// Which way the probed message crosses the router, as access control sees it on the
/// actor's transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Flow {
    /// From the actor to the router.
    Ingress,
    /// From the router to the actor.
    Egress,
}

impl Flow {
    /// The configuration's name.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Ingress => "ingress",
            Self::Egress => "egress",
        }
    }
}

/// The message kinds access control covers, as the configuration names them.
pub(crate) const MESSAGES: [&str; 9] = [
    "put",
    "delete",
    "declare_subscriber",
    "query",
    "reply",
    "declare_queryable",
    "liveliness_token",
    "declare_liveliness_subscriber",
    "liveliness_query",
];

/// A client of the router, with its sync subscriptions.
pub(crate) struct Client {
    /// Its name in keys (`acl/CASE/NAME/p`).
    pub(crate) name: &'static str,
    /// The session.
    pub(crate) session: Session,
}

/// An actor and the observer, with the sync channels between them.
pub(crate) struct Pair<'a> {
    actor: &'a Client,
    observer: &'a Client,
    /// What the actor receives on `acl/sync/NAME/a`.
    to_actor: FifoReceiver<Sample>,
    /// What the observer receives on `acl/sync/NAME/o`.
    to_observer: FifoReceiver<Sample>,
    _subs: Vec<weft::Subscriber>,
}

static NONCE: AtomicU64 = AtomicU64::new(0);

/// The next value a sync put carries.
fn nonce() -> Vec<u8> {
    NONCE
        .fetch_add(1, Ordering::Relaxed)
        .to_string()
        .into_bytes()
}

impl<'a> Pair<'a> {
    /// The actor `actor` watched by `observer`; returns once puts go through the router
    /// both ways.
    pub(crate) fn new(actor: &'a Client, observer: &'a Client) -> Self {
        let a_key = format!("acl/sync/{}/a", actor.name);
        let o_key = format!("acl/sync/{}/o", actor.name);
        let (sa, to_actor) = actor
            .session
            .declare_subscriber_channel(&a_key, 1024)
            .unwrap();
        let (so, to_observer) = observer
            .session
            .declare_subscriber_channel(&o_key, 1024)
            .unwrap();
        let pair = Self {
            actor,
            observer,
            to_actor,
            to_observer,
            _subs: vec![sa, so],
        };
        pair.settle();
        pair
    }

    /// Puts on `key` from `from` until `rx` sees it: everything `from` sent before has
    /// been processed by the router, and whatever the router sent the receiver before
    /// forwarding this put has been processed by the receiver.
    fn through(from: &Session, key: &str, rx: &FifoReceiver<Sample>) {
        let deadline = Instant::now() + WAIT;
        loop {
            let n = nonce();
            from.put(key, &n, &PutOptions::default()).unwrap();
            let retry = Instant::now() + Duration::from_millis(200);
            while let Some(left) = retry.checked_duration_since(Instant::now()) {
                match rx.recv_timeout(left) {
                    Ok(s) if s.payload == n[..] => return,
                    Ok(_) => {}
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => panic!("sync channel closed"),
                }
            }
            assert!(Instant::now() < deadline, "no sync put through on {key}");
        }
    }

    /// Makes sure the router has processed everything both clients sent, and both
    /// everything the router sent them in return (see the module's documentation).
    fn settle(&self) {
        let a_key = format!("acl/sync/{}/a", self.actor.name);
        let o_key = format!("acl/sync/{}/o", self.actor.name);
        let (a, o) = (&self.actor.session, &self.observer.session);
        Self::through(a, &o_key, &self.to_observer);
        Self::through(o, &a_key, &self.to_actor);
        Self::through(a, &o_key, &self.to_observer);
    }

    /// Whether the router delivers the message `message` of the actor on `flow` (the
    /// keys being `acl/CASE/ACTOR/p`, and markers under `acl/CASE/ACTOR/m`).
    pub(crate) fn delivers(&self, case: &str, message: &str, flow: Flow) -> bool {
        let base = format!("acl/{case}/{}", self.actor.name);
        let (a, o) = (&self.actor.session, &self.observer.session);
        let ingress = flow == Flow::Ingress;
        match (message, ingress) {
            ("put", true) => self.data(&base, a, o, false),
            ("put", false) => self.data(&base, o, a, false),
            ("delete", true) => self.data(&base, a, o, true),
            ("delete", false) => self.data(&base, o, a, true),
            ("declare_subscriber", true) => self.data(&base, o, a, false),
            ("declare_subscriber", false) => self.published(&base, a, o),
            ("query", true) | ("reply", false) | ("declare_queryable", false) => {
                self.query(&base, a, o)
            }
            ("query", false) | ("reply", true) | ("declare_queryable", true) => {
                self.query(&base, o, a)
            }
            ("liveliness_token", true) => self.token_get(&base, a, o),
            ("liveliness_token", false) => self.token_sub(&base, o, a),
            ("declare_liveliness_subscriber", true) => self.token_sub(&base, o, a),
            ("declare_liveliness_subscriber", false) => self.token_sub(&base, a, o),
            ("liveliness_query", true) => self.token_get(&base, o, a),
            ("liveliness_query", false) => self.token_get(&base, a, o),
            _ => panic!("unknown message {message}"),
        }
    }

    /// `sender` puts (or deletes) `BASE/p`, then puts the marker; whether `receiver`,
    /// subscribed to both, got the first.
    fn data(&self, base: &str, sender: &Session, receiver: &Session, delete: bool) -> bool {
        let (p, m) = (format!("{base}/p"), format!("{base}/m"));
        let (_sp, rx) = receiver.declare_subscriber_channel(&p, 16).unwrap();
        let (_sm, marker) = receiver.declare_subscriber_channel(&m, 16).unwrap();
        self.settle();
        let options = PutOptions::default();
        if delete {
            sender.delete(&p, &options).unwrap();
        } else {
            sender.put(&p, b"probe", &options).unwrap();
        }
        sender.put(&m, b"end", &options).unwrap();
        marker.recv_timeout(WAIT).expect("the marker arrives");
        let wanted = if delete {
            SampleKind::Delete
        } else {
            SampleKind::Put
        };
        rx.try_iter().any(|s| s.kind == wanted)
    }

    /// `sender` puts `BASE/p` through a declared publisher (which sends nothing while it
    /// knows no subscriber), then puts the marker; whether `receiver`, subscribed to
    /// both, got the first.
    fn published(&self, base: &str, sender: &Session, receiver: &Session) -> bool {
        let (p, m) = (format!("{base}/p"), format!("{base}/m"));
        let (_sp, rx) = receiver.declare_subscriber_channel(&p, 16).unwrap();
        let (_sm, marker) = receiver.declare_subscriber_channel(&m, 16).unwrap();
        let publisher = sender.declare_publisher(&p, PutOptions::default()).unwrap();
        self.settle();
        publisher.put(b"probe").unwrap();
        sender.put(&m, b"end", &PutOptions::default()).unwrap();
        marker.recv_timeout(WAIT).expect("the marker arrives");
        rx.try_iter().count() > 0
    }

    /// `querier` gets `BASE/p`, then the marker, both answered by queryables of
    /// `answerer`; whether the first got its reply.
    fn query(&self, base: &str, querier: &Session, answerer: &Session) -> bool {
        let (p, m) = (format!("{base}/p"), format!("{base}/m"));
        let mut queryables = Vec::new();
        for key in [p.clone(), m.clone()] {
            let reply_key = key.clone();
            queryables.push(
                answerer
                    .declare_queryable(&key, true, move |q| {
                        let _ = q.reply(&reply_key, b"answer", &PutOptions::default());
                    })
                    .unwrap(),
            );
        }
        self.settle();
        let options = GetOptions {
            consolidation: weft::Consolidation::None,
            timeout: Some(WAIT),
            ..GetOptions::default()
        };
        let probe = querier.get(&p, &options).unwrap();
        let marker = querier.get(&m, &options).unwrap();
        first_answer(&marker, "the marker's reply");
        answered(&probe)
    }

    /// `holder` declares tokens `BASE/p` and the marker; `getter` lists both, in turn;
    /// whether the first list had the token.
    fn token_get(&self, base: &str, holder: &Session, getter: &Session) -> bool {
        let (p, m) = (format!("{base}/p"), format!("{base}/m"));
        let _tokens = [
            holder.declare_token(&p).unwrap(),
            holder.declare_token(&m).unwrap(),
        ];
        self.settle();
        let probe = getter.liveliness_get(&p, WAIT).unwrap();
        let marker = getter.liveliness_get(&m, WAIT).unwrap();
        first_answer(&marker, "the marker token");
        answered(&probe)
    }

    /// `holder` declares the token `BASE/p`, `watcher` a liveliness subscriber (with
    /// history) on it; whether, once settled, the watcher saw the token.
    fn token_sub(&self, base: &str, holder: &Session, watcher: &Session) -> bool {
        let p = format!("{base}/p");
        let (tx, rx) = std::sync::mpsc::channel();
        let tx = std::sync::Mutex::new(tx);
        let _token = holder.declare_token(&p).unwrap();
        let _sub = watcher
            .declare_liveliness_subscriber(&p, true, move |s| {
                let _ = tx.lock().unwrap().send(s.kind);
            })
            .unwrap();
        self.settle();
        rx.try_iter().any(|k| k == SampleKind::Put)
    }
}

/// Waits for a reply with a value on `replies`.
fn first_answer(replies: &Receiver<Reply>, what: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match replies.recv_timeout(left) {
            Ok(r) if r.result.is_ok() => return,
            Ok(_) => {}
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

/// Whether `replies` already holds a reply with a value.
fn answered(replies: &Receiver<Reply>) -> bool {
    replies.try_iter().any(|r| r.result.is_ok())
}
