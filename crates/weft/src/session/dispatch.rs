//! What the session does with each network message a face sends it.

use std::sync::Arc;

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};
use weft_proto::network::{Declaration, Declare, Interest, InterestMode, NetworkMessage, Push};
use weft_proto::zenoh::PushBody;
use weft_transport::rx::Incoming;

use super::face::Face;
use super::router::EntityKind;
use super::Inner;
use crate::api::{Sample, SampleKind};
use crate::transport::{Handler, Transport};

/// What a declaration changed, for what must follow it.
enum Event {
    None,
    Changed,
    Declared(EntityKind, u32, OwnedKeyExpr, bool),
    Undeclared(EntityKind, u32, OwnedKeyExpr),
}

/// Connects transports' reader threads to the session.
pub(crate) struct Glue(pub(crate) std::sync::Weak<Inner>);

impl Handler for Glue {
    fn on_message(&self, transport: &Arc<Transport>, incoming: Incoming<'_>) {
        if let Some(inner) = self.0.upgrade() {
            inner.dispatch(transport, incoming);
        }
    }

    fn on_closed(&self, transport: &Arc<Transport>) {
        if let Some(inner) = self.0.upgrade() {
            inner.remove_face(transport);
        }
    }
}

impl Inner {
    fn dispatch(self: &Arc<Self>, t: &Arc<Transport>, incoming: Incoming<'_>) {
        match incoming.message {
            NetworkMessage::Push(push) => self.on_push(t, &push),
            NetworkMessage::Declare(d) => self.on_declare(t, d),
            NetworkMessage::Interest(i) => self.on_interest(t, &i),
            NetworkMessage::Request(r) => self.on_request(t, &r),
            NetworkMessage::Response(r) => self.on_response(t, &r),
            NetworkMessage::ResponseFinal(f) => {
                if !(self.is_router() && self.forwarded_done(t.peer_zid(), f.request_id)) {
                    self.target_done(f.request_id, Some(t.peer_zid()));
                }
            }
            NetworkMessage::Oam(_) => {}
        }
    }

    /// The full key of a wire expression from this transport's face (`None` if the face is
    /// gone; `Some(None)` if the expression does not resolve).
    pub(crate) fn face_resolve(
        &self,
        t: &Transport,
        we: &weft_proto::core::WireExpr<'_>,
    ) -> Option<Option<String>> {
        self.with_face(t, |face| face.resolve(we))
    }

    fn with_face<R>(&self, t: &Transport, f: impl FnOnce(&mut Face) -> R) -> Option<R> {
        let mut st = self.lock();
        st.faces.get_mut(&t.peer_zid()).map(f)
    }

    fn on_push(&self, t: &Arc<Transport>, push: &Push<'_>) {
        let Some(Some(key)) = self.with_face(t, |face| face.resolve(&push.wire_expr)) else {
            return;
        };
        if KeyExpr::new(&key).is_err() {
            return;
        }
        // A router timestamps values that have none, before anyone sees them.
        let added = match &push.body {
            PushBody::Put(p)
                if p.timestamp.is_none() && self.is_router() && self.timestamping() =>
            {
                Some(self.new_timestamp())
            }
            _ => None,
        };
        let sample = match &push.body {
            PushBody::Put(p) => Sample {
                key_expr: key,
                kind: SampleKind::Put,
                payload: p.payload.to_vec(),
                encoding: p.encoding.to_string(),
                timestamp: p.timestamp.or(added),
                attachment: p.attachment.map(<[u8]>::to_vec),
                priority: push.qos.priority(),
                congestion_control: push.qos.congestion_control(),
                express: push.qos.is_express(),
            },
            PushBody::Del(d) => Sample {
                key_expr: key,
                kind: SampleKind::Delete,
                payload: Vec::new(),
                encoding: "zenoh/bytes".into(),
                timestamp: d.timestamp,
                attachment: d.attachment.map(<[u8]>::to_vec),
                priority: push.qos.priority(),
                congestion_control: push.qos.congestion_control(),
                express: push.qos.is_express(),
            },
        };
        self.deliver_local(&sample);
        if self.is_router() {
            self.route_push(t, &sample.key_expr, push, added);
        }
    }

    fn on_declare(&self, t: &Arc<Transport>, d: Declare<'_>) {
        let interest_id = d.interest_id;
        match &d.body {
            Declaration::Token(tok) => {
                let key = self
                    .face_resolve(t, &tok.wire_expr)
                    .flatten()
                    .and_then(|k| OwnedKeyExpr::new(k).ok());
                if let Some(key) = key {
                    self.on_remote_token(t.peer_zid(), tok.id, key, interest_id);
                }
                return;
            }
            Declaration::UndeclareToken(u) => {
                let key = u
                    .wire_expr
                    .as_ref()
                    .and_then(|we| self.face_resolve(t, we).flatten());
                self.on_remote_token_gone(t.peer_zid(), u.id, key);
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
        let event = self.with_face(t, |face| match d.body {
            Declaration::KeyExpr(k) => {
                if let Some(key) = face.resolve(&k.wire_expr) {
                    face.remote_exprs.insert(k.id, key);
                }
                Event::None
            }
            Declaration::UndeclareKeyExpr(k) => {
                face.remote_exprs.remove(&k.id);
                Event::None
            }
            Declaration::Subscriber(s) => {
                let Some(key) = face
                    .resolve(&s.wire_expr)
                    .and_then(|k| OwnedKeyExpr::new(k).ok())
                else {
                    return Event::None;
                };
                if s.id == 0 {
                    face.current_subscribers.push(key);
                    Event::None
                } else {
                    face.subscribers.insert(s.id, key.clone());
                    Event::Declared(EntityKind::Subscriber, s.id, key, false)
                }
            }
            Declaration::UndeclareSubscriber(u) => {
                if u.id != 0 {
                    match face.subscribers.remove(&u.id) {
                        Some(key) => Event::Undeclared(EntityKind::Subscriber, u.id, key),
                        None => Event::None,
                    }
                } else {
                    if let Some(key) = u.wire_expr.and_then(|we| face.resolve(&we)) {
                        face.current_subscribers.retain(|k| k.as_str() != key);
                        face.subscribers.retain(|_, k| k.as_str() != key);
                    }
                    Event::None
                }
            }
            Declaration::Queryable(q) => {
                let Some(key) = face
                    .resolve(&q.wire_expr)
                    .and_then(|k| OwnedKeyExpr::new(k).ok())
                else {
                    return Event::None;
                };
                if q.id == 0 {
                    face.current_queryables.push(key);
                    Event::None
                } else {
                    face.queryables.insert(q.id, key.clone());
                    Event::Declared(EntityKind::Queryable, q.id, key, q.info.complete)
                }
            }
            Declaration::UndeclareQueryable(u) => {
                if u.id != 0 {
                    match face.queryables.remove(&u.id) {
                        Some(key) => Event::Undeclared(EntityKind::Queryable, u.id, key),
                        None => Event::None,
                    }
                } else {
                    if let Some(key) = u.wire_expr.and_then(|we| face.resolve(&we)) {
                        face.current_queryables.retain(|k| k.as_str() != key);
                        face.queryables.retain(|_, k| k.as_str() != key);
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
        match event {
            Some(Event::Changed) => self.changed.notify_all(),
            Some(Event::Declared(kind, id, key, complete)) if self.is_router() => {
                self.propagate_declaration(t.peer_zid(), kind, id, &key, complete);
            }
            Some(Event::Undeclared(kind, id, key)) if self.is_router() => {
                self.propagate_undeclaration(t.peer_zid(), kind, id, &key);
            }
            _ => {}
        }
    }

    fn on_interest(&self, t: &Arc<Transport>, i: &Interest<'_>) {
        if i.mode == InterestMode::Final {
            self.with_face(t, |face| face.their_interests.remove(&i.id));
            return;
        }
        let key = match &i.wire_expr {
            Some(we) => match self.with_face(t, |face| face.resolve(we)).flatten() {
                Some(k) => match OwnedKeyExpr::new(k) {
                    Ok(k) => Some(k),
                    Err(_) => return,
                },
                None => return,
            },
            None => None,
        };
        self.answer_interest(t, i.id, i.mode, i.options, key);
    }
}
