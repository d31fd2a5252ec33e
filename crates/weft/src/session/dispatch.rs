//! What the session does with each network message a face sends it.

use std::borrow::Cow;
use std::sync::Arc;

use weft_keyexpr::OwnedKeyExpr;
use weft_proto::core::{WhatAmI, ZenohId};
use weft_proto::ext::ExtBody;
use weft_proto::network::{Declaration, Declare, Interest, InterestMode, NetworkMessage, Push};
use weft_proto::zenoh::PushBody;
use weft_transport::rx::Incoming;

use crate::api::Payload;

use super::aggregate::Aggregate;
use super::declared::Declared;
use super::entity::EntityKind;
use super::face::Face;
use super::face_transport::FaceTransport;
use super::Inner;
use crate::api::{Sample, SampleKind};
use crate::transport::{Caller, Handler, ReceivedBatch, Transport};

/// The id under which a face's declaration is kept: its own, or, for a router that
/// declares with id 0 (entities identified by their key and the router they come from,
/// `origin` when not the face itself), one derived from both.
/// `None` for id 0 from others: an answer to one of our Current interests.
fn entity_id(face: &Face, id: u32, key: &OwnedKeyExpr, origin: Option<ZenohId>) -> Option<u32> {
    if id != 0 {
        Some(id)
    } else if face.transport.peer_whatami() == weft_proto::core::WhatAmI::Router {
        Some(origin_entity_id(key.as_str(), origin))
    } else {
        None
    }
}

/// The id of an undeclared entity (see [`entity_id`]).
fn undeclared_id(
    face: &Face,
    id: u32,
    we: Option<&weft_proto::core::WireExpr<'_>>,
    origin: Option<ZenohId>,
) -> u32 {
    if id != 0 || face.transport.peer_whatami() != weft_proto::core::WhatAmI::Router {
        return id;
    }
    we.and_then(|we| face.resolve(we))
        .map_or(0, |k| origin_entity_id(&k, origin))
}

/// A stable id for an entity known by its key: FNV-1a, with the top bit set so that it
/// never collides with ids the face chose itself in practice.
pub(crate) fn key_entity_id(key: &str) -> u32 {
    fnv1a(0x811c_9dc5, key.as_bytes()) | 0x8000_0000
}

/// As [`key_entity_id`], for an entity a router declared on behalf of the router
/// `origin` (`None`: its own), so that two routers' entities on one key stay apart.
pub(crate) fn origin_entity_id(key: &str, origin: Option<ZenohId>) -> u32 {
    match origin {
        None => key_entity_id(key),
        Some(o) => {
            let h = fnv1a(0x811c_9dc5, key.as_bytes());
            fnv1a(h, &o.to_u128().to_le_bytes()) | 0x8000_0000
        }
    }
}

/// FNV-1a of `bytes`, from `h`.
fn fnv1a(mut h: u32, bytes: &[u8]) -> u32 {
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// What a declaration changed, for what must follow it.
enum Event {
    None,
    Changed,
    Declared(EntityKind, u32, OwnedKeyExpr, bool),
    Undeclared(EntityKind, u32, OwnedKeyExpr),
}

/// Hands what transports receive (on the I/O threads, or a UDP link's reader thread) to
/// the session.
pub(crate) struct Glue(pub(crate) std::sync::Weak<Inner>);

impl Handler for Glue {
    fn on_message(
        &self,
        transport: &Arc<Transport>,
        incoming: &Incoming<'_, '_>,
        batch: &ReceivedBatch<'_>,
        caller: &Caller,
    ) {
        if let Some(inner) = self.0.upgrade() {
            inner.dispatch(&**transport, incoming, batch, caller);
        }
    }

    fn on_closed(&self, transport: &Arc<Transport>, caller: &Caller) {
        if let Some(inner) = self.0.upgrade() {
            inner.remove_face(&**transport, caller);
        }
    }

    fn on_priority_link_closed(&self, main: &Arc<Transport>, link: &Arc<Transport>) {
        if let Some(inner) = self.0.upgrade() {
            inner.priority_link_closed(main, link);
        }
    }

    fn rx_limits(&self) -> crate::transport::RxLimits {
        match self.0.upgrade() {
            Some(inner) => crate::transport::RxLimits {
                max_message: inner.config.max_message_size,
                budget: Some(inner.reassembly_budget.clone()),
                share: inner.config.reassembly_share,
            },
            None => crate::transport::RxLimits::default(),
        }
    }

    fn tx_limits(&self) -> crate::transport::TxLimits {
        match self.0.upgrade() {
            Some(inner) => crate::transport::TxLimits {
                wait_before_drop: inner.config.wait_before_drop,
                wait_before_close: inner.config.wait_before_close,
                overflow_budget: Some(inner.overflow_budget.clone()),
            },
            None => crate::transport::TxLimits::default(),
        }
    }
}

impl Inner {
    /// Logs a key a face sent that is not a valid key expression (or is over the size
    /// limits): what it came with is ignored, and counted. Logged at most once per
    /// period per node ([`crate::log_limit`]), saying how many were left untold, so that
    /// one node's flood neither floods the log nor hides another node's first one.
    pub(crate) fn refused_key(
        &self,
        t: &dyn FaceTransport,
        what: &str,
        e: &weft_keyexpr::KeyExprError,
    ) {
        self.refused_keys
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let zid = t.peer_zid();
        let tell = self
            .refused_key_log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .count(&zid, std::time::Instant::now());
        if let Some(tell) = tell {
            tracing::warn!(
                "ignored {what} from {} ({zid}) on an invalid key: {e}{}",
                t.describe(),
                tell.and_more(&zid)
            );
        }
    }

    /// The key expression of a wire expression from `t`, if it resolves and is valid;
    /// an invalid one is logged (see [`Inner::refused_key`]).
    fn checked_key(
        &self,
        t: &dyn FaceTransport,
        we: &weft_proto::core::WireExpr<'_>,
        what: &str,
    ) -> Option<OwnedKeyExpr> {
        self.valid_key(t, self.face_resolve(t, we).flatten(), what)
    }

    /// `key` (resolved from what `t` sent) if it is a valid key expression; an invalid
    /// one is logged (see [`Inner::refused_key`]).
    fn valid_key(
        &self,
        t: &dyn FaceTransport,
        key: Option<impl Into<String>>,
        what: &str,
    ) -> Option<OwnedKeyExpr> {
        OwnedKeyExpr::new(key?)
            .map_err(|e| self.refused_key(t, what, &e))
            .ok()
    }

    pub(crate) fn dispatch(
        self: &Arc<Self>,
        t: &dyn FaceTransport,
        incoming: &Incoming<'_, '_>,
        batch: &ReceivedBatch<'_>,
        caller: &Caller,
    ) {
        if let Some(acl) = t.access_control() {
            if !self.ingress_allowed(t, acl, incoming.message) {
                return;
            }
        }
        match &incoming.message {
            NetworkMessage::Push(push) => {
                self.on_push(t, push, incoming.reassembled, batch, caller)
            }
            NetworkMessage::Declare(d) => self.on_declare(t, d.clone(), caller),
            NetworkMessage::Interest(i) => self.on_interest(t, i, caller),
            NetworkMessage::Request(r) => self.on_request(t, r, caller),
            NetworkMessage::Response(r) => self.on_response(t, r, caller),
            NetworkMessage::ResponseFinal(f) => {
                if !(self.is_router() && self.forwarded_done(t.peer_zid(), f.request_id, caller)) {
                    self.target_done(f.request_id, Some(t.peer_zid()), caller);
                }
            }
            NetworkMessage::Oam(oam) => {
                if let (weft_proto::network::NetworkOam::LINK_STATE, ExtBody::ZBuf(body)) =
                    (oam.id, &oam.body)
                {
                    if self.is_router() && t.peer_whatami() == WhatAmI::Router {
                        self.on_link_state(t, body, caller);
                    } else {
                        self.on_gossip(t, body, caller);
                    }
                }
            }
        }
    }

    /// The full key of a wire expression from this transport's face (`None` if the face is
    /// gone; `Some(None)` if the expression does not resolve).
    pub(crate) fn face_resolve(
        &self,
        t: &dyn FaceTransport,
        we: &weft_proto::core::WireExpr<'_>,
    ) -> Option<Option<String>> {
        self.with_face(t, |face| face.resolve(we).map(Cow::into_owned))
    }

    fn with_face<R>(&self, t: &dyn FaceTransport, f: impl FnOnce(&mut Face) -> R) -> Option<R> {
        let mut st = self.lock();
        st.faces.get_mut(&t.peer_zid()).map(f)
    }

    /// As `with_face`, for changes that routes depend on.
    /// The face is given with the index of what every face declared, to change both.
    fn with_face_mut<R>(
        &self,
        t: &dyn FaceTransport,
        f: impl FnOnce(&mut Face, &mut Declared) -> R,
    ) -> Option<R> {
        let mut st = self.lock();
        let st = &mut *st;
        let r = st
            .faces
            .get_mut(&t.peer_zid())
            .map(|face| f(face, &mut st.declared));
        self.routes_changed();
        r
    }

    fn on_push(
        self: &Arc<Self>,
        t: &dyn FaceTransport,
        push: &Push<'_>,
        reassembled: Option<&Arc<Vec<u8>>>,
        batch: &ReceivedBatch<'_>,
        caller: &Caller,
    ) {
        let router = self.is_router();
        let Some(routes) = self.inbound_routes(t, &push.wire_expr) else {
            return;
        };
        if router {
            self.count_published(match &push.body {
                PushBody::Put(p) => p.payload.len() as u64,
                PushBody::Del(_) => 0,
            });
        }
        let key = routes.key;
        let from = t.peer_zid();
        let route = routes.local.filter(|r| !r.is_empty());
        let forward = routes
            .forward
            .filter(|f| f.iter().any(|target| target.face.peer_zid() != from));
        if route.is_none() && forward.is_none() {
            t.stats()
                .discarded
                .add(crate::transport::DiscardReason::NoRoute, 1);
            return;
        }
        // A router timestamps puts and deletes that have none, before anyone sees them:
        // both from the one clock, in the order they came, so that a delete followed by
        // a put of the same key is ordered as it was sent wherever last writer wins.
        let unstamped = match &push.body {
            PushBody::Put(p) => p.timestamp.is_none(),
            PushBody::Del(d) => d.timestamp.is_none(),
        };
        let added =
            (unstamped && router && self.timestamping()).then(|| self.new_timestamp(caller));
        if let Some(route) = route {
            let sample = match &push.body {
                PushBody::Put(p) => Sample {
                    key_expr: key.clone(),
                    kind: SampleKind::Put,
                    payload: Payload::received(reassembled, batch, p.payload),
                    encoding: p.encoding.text(),
                    timestamp: p.timestamp.or(added),
                    attachment: p.attachment.map(<[u8]>::to_vec),
                    priority: push.qos.priority(),
                    congestion_control: push.qos.congestion_control(),
                    express: push.qos.is_express(),
                    source_info: p.source_info,
                },
                PushBody::Del(d) => Sample {
                    key_expr: key.clone(),
                    kind: SampleKind::Delete,
                    payload: Payload::default(),
                    encoding: "zenoh/bytes".into(),
                    timestamp: d.timestamp.or(added),
                    attachment: d.attachment.map(<[u8]>::to_vec),
                    priority: push.qos.priority(),
                    congestion_control: push.qos.congestion_control(),
                    express: push.qos.is_express(),
                    source_info: d.source_info,
                },
            };
            super::deliver(&route, sample);
        }
        if let Some(targets) = forward {
            self.route_push(t, &key, push, added, &targets, caller);
        }
    }

    /// Whether access control lets `msg`, received from `t`, in (its key resolved as the
    /// face declared it).
    fn ingress_allowed(
        &self,
        t: &dyn FaceTransport,
        acl: &crate::acl::Enforcer,
        msg: &NetworkMessage<'_>,
    ) -> bool {
        if crate::acl::enforcer::classify(msg).is_none() {
            return true;
        }
        let resolved;
        let key = match crate::acl::enforcer::full_key(msg) {
            Some(k) => Some(k),
            None => {
                resolved = crate::acl::enforcer::wire_expr(msg)
                    .and_then(|we| self.face_resolve(t, we).flatten());
                resolved.as_deref()
            }
        };
        acl.allows(crate::acl::Flow::Ingress, msg, key)
    }

    /// The router a declaration received from `t` comes from, when a router forwarded it
    /// for another (its NodeId extension names that router in the lists `t` sent);
    /// `None` for the node's own declarations, and for a node id this router cannot
    /// resolve (the neighbour then stands for its origin).
    fn declaration_origin(&self, t: &dyn FaceTransport, node_id: u16) -> Option<ZenohId> {
        if node_id == 0 || !self.is_router() || t.peer_whatami() != WhatAmI::Router {
            return None;
        }
        let from = t.peer_zid();
        let origin = self.mesh().origin(from, node_id);
        match origin {
            Some(origin) if origin != from && origin != self.zid => Some(origin),
            Some(_) => None,
            None => {
                tracing::debug!("{from} forwarded a declaration for node {node_id}, unknown");
                None
            }
        }
    }

    fn on_declare(&self, t: &dyn FaceTransport, d: Declare<'_>, caller: &Caller) {
        let interest_id = d.interest_id;
        let origin = self.declaration_origin(t, d.node_id);
        match &d.body {
            Declaration::Token(tok) => {
                let key = self.checked_key(t, &tok.wire_expr, "a token");
                if let Some(key) = key {
                    let from_router = t.peer_whatami() == weft_proto::core::WhatAmI::Router;
                    let id = if tok.id == 0 && from_router && interest_id.is_none() {
                        origin_entity_id(key.as_str(), origin)
                    } else {
                        tok.id
                    };
                    self.on_remote_token(t.peer_zid(), id, key, interest_id, origin, caller);
                }
                return;
            }
            Declaration::UndeclareToken(u) => {
                let key = u
                    .wire_expr
                    .as_ref()
                    .and_then(|we| self.face_resolve(t, we).flatten());
                let from_router = t.peer_whatami() == weft_proto::core::WhatAmI::Router;
                let id = match (&key, u.id, from_router) {
                    (Some(k), 0, true) => origin_entity_id(k, origin),
                    _ => u.id,
                };
                self.on_remote_token_gone(t.peer_zid(), id, key, caller);
                return;
            }
            Declaration::Final(_) => {
                if let Some(i) = interest_id {
                    if self.finish_liveliness_get(i) {
                        return;
                    }
                }
            }
            _ => {}
        }
        let zid = t.peer_zid();
        let event = self.with_face_mut(t, |face, declared| match d.body {
            Declaration::KeyExpr(k) => {
                if let Some(key) = face.resolve(&k.wire_expr) {
                    face.remote_exprs.insert(k.id, key.into_owned());
                }
                Event::None
            }
            Declaration::UndeclareKeyExpr(k) => {
                face.remote_exprs.remove(&k.id);
                Event::None
            }
            Declaration::Subscriber(s) => {
                let Some(key) = self.valid_key(t, face.resolve(&s.wire_expr), "a subscriber")
                else {
                    return Event::None;
                };
                let id = entity_id(face, s.id, &key, origin);
                declared
                    .subscribers
                    .declare(zid, &mut face.subscribers, id, key.clone());
                match id {
                    None => Event::None,
                    Some(id) => {
                        face.set_origin(EntityKind::Subscriber, id, origin);
                        Event::Declared(EntityKind::Subscriber, id, key, false)
                    }
                }
            }
            Declaration::UndeclareSubscriber(u) => {
                let id = undeclared_id(face, u.id, u.wire_expr.as_ref(), origin);
                if id != 0 {
                    match declared
                        .subscribers
                        .undeclare_id(zid, &mut face.subscribers, id)
                    {
                        Some(key) => {
                            face.set_origin(EntityKind::Subscriber, id, None);
                            Event::Undeclared(EntityKind::Subscriber, id, key)
                        }
                        None => Event::None,
                    }
                } else {
                    if let Some(key) = u.wire_expr.and_then(|we| face.resolve(&we)) {
                        declared
                            .subscribers
                            .undeclare_key(zid, &mut face.subscribers, &key);
                    }
                    Event::None
                }
            }
            Declaration::Queryable(q) => {
                let Some(key) = self.valid_key(t, face.resolve(&q.wire_expr), "a queryable") else {
                    return Event::None;
                };
                let id = entity_id(face, q.id, &key, origin);
                declared
                    .queryables
                    .declare(zid, &mut face.queryables, id, key.clone());
                match id {
                    None => Event::None,
                    Some(id) => {
                        face.set_origin(EntityKind::Queryable, id, origin);
                        if q.info.complete {
                            face.complete_queryables.insert(id);
                        } else {
                            face.complete_queryables.remove(&id);
                        }
                        Event::Declared(EntityKind::Queryable, id, key, q.info.complete)
                    }
                }
            }
            Declaration::UndeclareQueryable(u) => {
                let id = undeclared_id(face, u.id, u.wire_expr.as_ref(), origin);
                if id != 0 {
                    face.complete_queryables.remove(&id);
                    match declared
                        .queryables
                        .undeclare_id(zid, &mut face.queryables, id)
                    {
                        Some(key) => {
                            face.set_origin(EntityKind::Queryable, id, None);
                            Event::Undeclared(EntityKind::Queryable, id, key)
                        }
                        None => Event::None,
                    }
                } else {
                    if let Some(key) = u.wire_expr.and_then(|we| face.resolve(&we)) {
                        declared
                            .queryables
                            .undeclare_key(zid, &mut face.queryables, &key);
                    }
                    Event::None
                }
            }
            Declaration::Final(_) => {
                match interest_id {
                    Some(0) => face.initial_declarations_done = true,
                    Some(i) => {
                        if let Some(entry) = face.our_interests.get_mut(&i) {
                            entry.1 = true;
                        }
                    }
                    None => {}
                }
                Event::Changed
            }
            Declaration::Token(_) | Declaration::UndeclareToken(_) => Event::None,
        });
        match &event {
            Some(Event::Declared(kind, id, key, _)) => {
                tracing::debug!("{} declared {kind:?} {id} on {key}", t.peer_zid());
            }
            Some(Event::Undeclared(kind, id, key)) => {
                tracing::debug!("{} undeclared {kind:?} {id} on {key}", t.peer_zid());
            }
            _ => {}
        }
        match event {
            Some(Event::Changed) => self.changed.notify_all(),
            Some(Event::Declared(kind, id, key, complete)) if self.is_router() => {
                self.propagate_declaration(t.peer_zid(), kind, id, &key, complete, caller);
            }
            Some(Event::Undeclared(kind, id, key)) if self.is_router() => {
                self.propagate_undeclaration(t.peer_zid(), kind, id, &key, caller);
            }
            _ => {}
        }
    }

    fn on_interest(&self, t: &dyn FaceTransport, i: &Interest<'_>, caller: &Caller) {
        if i.mode == InterestMode::Final {
            self.with_face_mut(t, |face, _| face.their_interests.remove(&i.id));
            return;
        }
        let key = match &i.wire_expr {
            Some(we) => match self.checked_key(t, we, "an interest") {
                Some(k) => Some(k),
                None => return,
            },
            None => None,
        };
        let aggregate = Aggregate::for_interest(t.peer_whatami(), i.options, i.wire_expr.as_ref());
        self.answer_interest(t, i, key, aggregate, caller);
    }
}
