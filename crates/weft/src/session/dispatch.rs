//! What the session does with each network message a face sends it.

use std::sync::Arc;

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};
use weft_proto::network::{Declaration, Declare, Interest, InterestMode, NetworkMessage, Push};
use weft_proto::zenoh::PushBody;
use weft_transport::rx::Incoming;

use super::face::Face;
use super::Inner;
use crate::api::{Sample, SampleKind};
use crate::transport::{Handler, Transport};

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
            NetworkMessage::ResponseFinal(f) => self.target_done(f.request_id, Some(t.peer_zid())),
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
        let sample = match &push.body {
            PushBody::Put(p) => Sample {
                key_expr: key,
                kind: SampleKind::Put,
                payload: p.payload.to_vec(),
                encoding: p.encoding.to_string(),
                timestamp: p.timestamp,
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
        let changed = self.with_face(t, |face| match d.body {
            Declaration::KeyExpr(k) => {
                if let Some(key) = face.resolve(&k.wire_expr) {
                    face.remote_exprs.insert(k.id, key);
                }
                false
            }
            Declaration::UndeclareKeyExpr(k) => {
                face.remote_exprs.remove(&k.id);
                false
            }
            Declaration::Subscriber(s) => {
                let key = face
                    .resolve(&s.wire_expr)
                    .and_then(|k| OwnedKeyExpr::new(k).ok());
                if let Some(key) = key {
                    if s.id == 0 {
                        face.current_subscribers.push(key);
                    } else {
                        face.subscribers.insert(s.id, key);
                    }
                }
                false
            }
            Declaration::UndeclareSubscriber(u) => {
                if u.id != 0 {
                    face.subscribers.remove(&u.id);
                } else if let Some(key) = u.wire_expr.and_then(|we| face.resolve(&we)) {
                    face.current_subscribers.retain(|k| k.as_str() != key);
                    face.subscribers.retain(|_, k| k.as_str() != key);
                }
                false
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
                true
            }
            Declaration::Queryable(q) => {
                let key = face
                    .resolve(&q.wire_expr)
                    .and_then(|k| OwnedKeyExpr::new(k).ok());
                if let Some(key) = key {
                    if q.id == 0 {
                        face.current_queryables.push(key);
                    } else {
                        face.queryables.insert(q.id, key);
                    }
                }
                false
            }
            Declaration::UndeclareQueryable(u) => {
                if u.id != 0 {
                    face.queryables.remove(&u.id);
                } else if let Some(key) = u.wire_expr.and_then(|we| face.resolve(&we)) {
                    face.current_queryables.retain(|k| k.as_str() != key);
                    face.queryables.retain(|_, k| k.as_str() != key);
                }
                false
            }
            Declaration::Token(_) | Declaration::UndeclareToken(_) => false,
        });
        if changed == Some(true) {
            self.changed.notify_all();
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
