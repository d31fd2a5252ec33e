//! Routing scenarios in memory: a session with faces whose transports are
//! [`MemoryTransport`]s, fed messages as if their nodes had sent them, and asked what
//! they were sent. No socket, no I/O thread: each test is a script of messages in and
//! messages out.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use weft_proto::core::{
    CongestionControl, NetworkQos, Priority, Reliability, WhatAmI, WireExpr, ZenohId,
};
use weft_proto::network::{
    Declaration, Interest, InterestMode, InterestOptions, NetworkMessage, Push, Request, Response,
    ResponseFinal,
};
use weft_proto::transport::CloseReason;
use weft_proto::zenoh::{PushBody, Put, Query, Reply};
use weft_transport::rx::Incoming;

use super::entity::{own_declaration, EntityKind};
use super::face_transport::FaceTransport;
use super::{Inner, Session};
use crate::config::Config;
use crate::transport::{Caller, ReceivedBatch, SendError, Transport, TransportStats, Turn};

/// A transport kept in memory: what the session sends it is recorded, encoded.
pub(crate) struct MemoryTransport {
    me: Weak<Self>,
    zid: ZenohId,
    whatami: WhatAmI,
    describe: String,
    sent: Mutex<Vec<Vec<u8>>>,
    /// Refuses every `drop` message, as a destination whose queue stays full.
    congested: AtomicBool,
    closed: Mutex<Option<CloseReason>>,
    stats: TransportStats,
}

impl MemoryTransport {
    pub(crate) fn new(zid: u128, whatami: WhatAmI) -> Arc<Self> {
        let zid = ZenohId::new(zid).expect("a non-zero id");
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            zid,
            whatami,
            describe: format!("memory/{zid}"),
            sent: Mutex::new(Vec::new()),
            congested: AtomicBool::new(false),
            closed: Mutex::new(None),
            stats: TransportStats::default(),
        })
    }

    /// Makes every `drop` message find no room from now on (`true`), or room again.
    pub(crate) fn set_congested(&self, on: bool) {
        self.congested.store(on, Ordering::Relaxed);
    }

    /// What was sent to this node so far (taken: the next call gives what follows).
    pub(crate) fn take_sent(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.sent.lock().unwrap())
    }

    /// Why the session closed it, if it did.
    pub(crate) fn closed_for(&self) -> Option<CloseReason> {
        *self.closed.lock().unwrap()
    }

    fn record(
        &self,
        msg: &NetworkMessage<'_>,
        congestion: CongestionControl,
    ) -> Result<(), SendError> {
        if self.is_closed() {
            return Err(SendError::Closed);
        }
        if congestion == CongestionControl::Drop && self.congested.load(Ordering::Relaxed) {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            self.stats
                .drops
                .add(crate::transport::DropReason::Congestion, 1);
            return Err(SendError::Dropped);
        }
        let mut bytes = Vec::new();
        msg.encode(&mut bytes)
            .expect("a message the session built encodes");
        self.sent.lock().unwrap().push(bytes);
        Ok(())
    }
}

impl FaceTransport for MemoryTransport {
    fn peer_zid(&self) -> ZenohId {
        self.zid
    }

    fn peer_whatami(&self) -> WhatAmI {
        self.whatami
    }

    fn describe(&self) -> &str {
        &self.describe
    }

    fn send(
        &self,
        msg: &NetworkMessage<'_>,
        _priority: Priority,
        _reliability: Reliability,
        congestion: CongestionControl,
        _caller: &Caller,
    ) -> Result<(), SendError> {
        self.record(msg, congestion)
    }

    fn send_forwarded(
        &self,
        msg: &NetworkMessage<'_>,
        _priority: Priority,
        _reliability: Reliability,
        congestion: CongestionControl,
        _caller: &Caller,
    ) -> Result<(), SendError> {
        self.record(msg, congestion)
    }

    fn close(&self, reason: CloseReason, _caller: &Caller) {
        self.closed.lock().unwrap().get_or_insert(reason);
    }

    fn start_close_by(&self, reason: CloseReason, _flush_by: Option<Instant>, caller: &Caller) {
        self.close(reason, caller);
    }

    fn wait_closed(&self, _deadline: Instant, _caller: &Caller) {}

    fn is_closed(&self) -> bool {
        self.closed.lock().unwrap().is_some()
    }

    fn keeps_order(&self) -> bool {
        true
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn access_control(&self) -> Option<&Arc<crate::acl::Enforcer>> {
        None
    }

    fn set_manual_batching(&self, _on: bool) {}

    fn flush_pending(&self) {}

    fn handle(&self) -> Option<Arc<dyn FaceTransport>> {
        self.me.upgrade().map(|t| t as Arc<dyn FaceTransport>)
    }

    fn transport(&self) -> Option<Arc<Transport>> {
        None
    }
}

/// A session without links, and the nodes attached to it in memory.
pub(crate) struct Scenario {
    pub(crate) session: Session,
}

impl Scenario {
    /// A session of `mode` that listens nowhere and scouts nothing.
    pub(crate) fn new(mode: WhatAmI) -> Self {
        let config = Config {
            mode,
            multicast_scouting: false,
            ..Config::default()
        };
        Self {
            session: Session::open(config).expect("a session without links opens"),
        }
    }

    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.session.inner
    }

    /// Attaches a node of `whatami` with id `zid`, as if it had connected.
    pub(crate) fn attach(&self, zid: u128, whatami: WhatAmI) -> Arc<MemoryTransport> {
        let t = MemoryTransport::new(zid, whatami);
        assert!(self
            .inner()
            .attach_face(t.clone(), false, false, &serving_links()));
        t
    }

    /// The node behind `t` closed its session.
    pub(crate) fn detach(&self, t: &Arc<MemoryTransport>) {
        let caller = serving_links();
        t.close(CloseReason::GENERIC, &caller);
        self.inner().remove_face(&**t, &caller);
    }

    /// `msg` arrives from the node behind `from`.
    pub(crate) fn receive(&self, from: &Arc<MemoryTransport>, msg: &NetworkMessage<'_>) {
        let incoming = Incoming {
            priority: Priority::Data,
            reliability: Reliability::Reliable,
            message: msg,
            reassembled: None,
        };
        self.inner().dispatch(
            &**from,
            &incoming,
            &ReceivedBatch::unshared(),
            &serving_links(),
        );
    }
}

/// The caller a node's messages come in with: a thread serving links, in its turn.
fn serving_links() -> Caller {
    Caller::Turn(std::rc::Rc::new(Turn::new()))
}

/// A subscriber declaration from a node.
pub(crate) fn subscriber(id: u32, key: &str) -> NetworkMessage<'_> {
    own_declaration(EntityKind::Subscriber, id, key, false, None)
}

/// A queryable declaration from a node.
pub(crate) fn queryable(id: u32, key: &str) -> NetworkMessage<'_> {
    own_declaration(EntityKind::Queryable, id, key, false, None)
}

/// A put from a node.
pub(crate) fn put<'a>(
    key: &'a str,
    payload: &'a [u8],
    congestion: CongestionControl,
) -> NetworkMessage<'a> {
    let mut push = Push::new(WireExpr::key(key), PushBody::Put(Put::new(payload)));
    push.qos = NetworkQos::new(Priority::Data, congestion, false);
    NetworkMessage::Push(push)
}

/// A query from a node.
pub(crate) fn request(id: u32, key: &str) -> NetworkMessage<'_> {
    NetworkMessage::Request(Request::new(id, WireExpr::key(key), Query::default()))
}

/// A reply from a queryable's node to request `id`.
pub(crate) fn reply<'a>(id: u32, key: &'a str, payload: &'a [u8]) -> NetworkMessage<'a> {
    let body = weft_proto::network::ResponseBody::Reply(Reply {
        consolidation: Default::default(),
        unknown: Default::default(),
        body: PushBody::Put(Put::new(payload)),
    });
    NetworkMessage::Response(Response::new(id, WireExpr::key(key), body))
}

/// The end of a node's replies to request `id`.
pub(crate) fn reply_final(id: u32) -> NetworkMessage<'static> {
    NetworkMessage::ResponseFinal(ResponseFinal::new(id))
}

/// An interest from a node.
pub(crate) fn interest(
    id: u32,
    mode: InterestMode,
    options: InterestOptions,
    key: Option<&str>,
) -> NetworkMessage<'_> {
    NetworkMessage::Interest(Interest::new(id, mode, options, key.map(WireExpr::key)))
}

/// What a node was sent, decoded, for assertions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seen {
    /// A put or delete on a key, with its payload.
    Data(String, Vec<u8>),
    /// A declaration of `kind` on a key (undeclarations and finals are `Other`).
    Declared(EntityKind, String, Option<u32>),
    /// A query: its request id and key.
    Query(u32, String),
    /// A reply to request `id`, on a key, with its payload.
    Reply(u32, String, Vec<u8>),
    /// The end of the replies to request `id`.
    Final(u32),
    /// Anything else, by its debug form.
    Other(String),
}

/// Decodes what a node was sent.
pub(crate) fn seen(sent: &[Vec<u8>]) -> Vec<Seen> {
    sent.iter()
        .map(|bytes| {
            let msg = NetworkMessage::decode_exact(bytes).expect("what was sent decodes");
            match &msg {
                NetworkMessage::Push(p) => {
                    let payload = match &p.body {
                        PushBody::Put(put) => put.payload.to_vec(),
                        PushBody::Del(_) => Vec::new(),
                    };
                    Seen::Data(p.wire_expr.suffix.to_owned(), payload)
                }
                NetworkMessage::Declare(d) => match &d.body {
                    Declaration::Subscriber(s) => Seen::Declared(
                        EntityKind::Subscriber,
                        s.wire_expr.suffix.to_owned(),
                        d.interest_id,
                    ),
                    Declaration::Queryable(q) => Seen::Declared(
                        EntityKind::Queryable,
                        q.wire_expr.suffix.to_owned(),
                        d.interest_id,
                    ),
                    Declaration::Token(t) => Seen::Declared(
                        EntityKind::Token,
                        t.wire_expr.suffix.to_owned(),
                        d.interest_id,
                    ),
                    other => Seen::Other(format!("{other:?}")),
                },
                NetworkMessage::Request(r) => Seen::Query(r.id, r.wire_expr.suffix.to_owned()),
                NetworkMessage::Response(r) => match &r.body {
                    weft_proto::network::ResponseBody::Reply(reply) => {
                        let payload = match &reply.body {
                            PushBody::Put(put) => put.payload.to_vec(),
                            PushBody::Del(_) => Vec::new(),
                        };
                        Seen::Reply(r.request_id, r.wire_expr.suffix.to_owned(), payload)
                    }
                    other => Seen::Other(format!("{other:?}")),
                },
                NetworkMessage::ResponseFinal(f) => Seen::Final(f.request_id),
                other => Seen::Other(format!("{other:?}")),
            }
        })
        .collect()
}

/// The data among what a node was sent.
pub(crate) fn data(sent: &[Vec<u8>]) -> Vec<(String, Vec<u8>)> {
    seen(sent)
        .into_iter()
        .filter_map(|s| match s {
            Seen::Data(k, p) => Some((k, p)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod peers;
#[cfg(test)]
mod tests;
