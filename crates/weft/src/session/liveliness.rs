//! Liveliness: tokens that exist while their session lives, subscribers told when tokens
//! appear and disappear, and gets listing the tokens alive now.
//!
//! A client asks its router with Interests (Future or CurrentFuture for subscribers,
//! Current for gets); between peers, tokens are declared unsolicited and a get is answered
//! from what the peers declared. When a face closes, its tokens disappear.

use std::collections::HashMap;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Duration;

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};
use weft_proto::core::{CongestionControl, NetworkQos, Priority, WhatAmI, WireExpr, ZenohId};
use weft_proto::network::{Interest, InterestMode, InterestOptions, NetworkMessage};

use super::entity::EntityKind;
use super::face_transport::send_control;
use super::face_transport::FaceTransport;
use super::query::ReplySink;
use super::{Callback, Inner, SessionError};
use crate::api::{Payload, Reply, Sample, SampleKind};
use crate::transport::Caller;

pub(crate) struct LivelinessSubscriber {
    pub(crate) key: OwnedKeyExpr,
    pub(crate) callback: Callback,
}

pub(crate) struct PendingLivelinessGet {
    key: OwnedKeyExpr,
    sink: ReplySink,
}

fn token_sample(key: &str, kind: SampleKind) -> Sample {
    Sample {
        key_expr: key.into(),
        kind,
        payload: Payload::default(),
        encoding: "zenoh/bytes".into(),
        timestamp: None,
        attachment: None,
        priority: Priority::Control,
        congestion_control: CongestionControl::Block,
        express: false,
        source_info: None,
    }
}

fn liveliness_interest(id: u32, mode: InterestMode, key: &str) -> NetworkMessage<'_> {
    let mut i = Interest::new(id, mode, InterestOptions::TOKENS, Some(WireExpr::key(key)));
    i.qos = NetworkQos::DECLARE;
    NetworkMessage::Interest(i)
}

impl Inner {
    /// Tells local liveliness subscribers that a token appeared or disappeared.
    pub(crate) fn notify_token(&self, key: &str, kind: SampleKind) {
        let Ok(k) = KeyExpr::new(key) else { return };
        let callbacks: Vec<Callback> = self
            .lock()
            .own
            .liveliness_subscribers
            .values()
            .filter(|s| s.key.as_key_expr().intersects(k))
            .map(|s| s.callback.clone())
            .collect();
        super::deliver(&callbacks, token_sample(key, kind));
    }

    pub(crate) fn declare_token(
        &self,
        key: OwnedKeyExpr,
        caller: &Caller,
    ) -> Result<u32, SessionError> {
        let stored = key.clone();
        let id = self.declare_own(
            EntityKind::Token,
            &key,
            false,
            |st, id| {
                st.own.tokens.insert(id, stored);
            },
            caller,
        )?;
        self.notify_token(key.as_str(), SampleKind::Put);
        Ok(id)
    }

    pub(crate) fn undeclare_token(&self, id: u32, caller: &Caller) {
        if let Some(key) = self.undeclare_own(
            EntityKind::Token,
            id,
            |st| st.own.tokens.remove(&id),
            caller,
        ) {
            self.notify_token(key.as_str(), SampleKind::Delete);
        }
    }

    /// Our tokens, as declarations to send a new face.
    pub(crate) fn token_declarations(&self) -> Vec<(u32, String)> {
        self.lock()
            .own
            .tokens
            .iter()
            .map(|(id, k)| (*id, k.to_string()))
            .collect()
    }

    pub(crate) fn declare_liveliness_subscriber(
        &self,
        key: OwnedKeyExpr,
        history: bool,
        callback: Callback,
        caller: &Caller,
    ) -> Result<u32, SessionError> {
        if self.is_closing() {
            return Err(SessionError::Closed);
        }
        let (id, targets, known) = {
            let mut st = self.lock();
            let id = Self::next_id(&mut st);
            st.own.liveliness_subscribers.insert(
                id,
                LivelinessSubscriber {
                    key: key.clone(),
                    callback: callback.clone(),
                },
            );
            let client = self.config.mode == WhatAmI::Client;
            let targets: Vec<Arc<dyn FaceTransport>> = if client {
                st.faces.values().map(|f| f.transport.clone()).collect()
            } else {
                Vec::new()
            };
            // Tokens already known (peers' and ours) are the history.
            let known: Vec<String> = if history && !client {
                self.known_tokens(&st, key.as_key_expr())
            } else if history {
                st.own
                    .tokens
                    .values()
                    .filter(|k| k.as_key_expr().intersects(key.as_key_expr()))
                    .map(ToString::to_string)
                    .collect()
            } else {
                Vec::new()
            };
            (id, targets, known)
        };
        let mode = if history {
            InterestMode::CurrentFuture
        } else {
            InterestMode::Future
        };
        let msg = liveliness_interest(id, mode, key.as_str());
        for t in targets {
            send_control(&*t, &msg, caller);
        }
        for k in known {
            callback.call_with(token_sample(&k, SampleKind::Put));
        }
        Ok(id)
    }

    pub(crate) fn undeclare_liveliness_subscriber(&self, id: u32, caller: &Caller) {
        let targets: Vec<Arc<dyn FaceTransport>> = {
            let mut st = self.lock();
            if st.own.liveliness_subscribers.remove(&id).is_none() {
                return;
            }
            if self.config.mode == WhatAmI::Client {
                st.faces.values().map(|f| f.transport.clone()).collect()
            } else {
                Vec::new()
            }
        };
        let mut i = Interest::new(id, InterestMode::Final, InterestOptions::default(), None);
        i.qos = NetworkQos::DECLARE;
        let msg = NetworkMessage::Interest(i);
        for t in targets {
            send_control(&*t, &msg, caller);
        }
    }

    /// Tokens alive on every face and in this session, intersecting `key` (the faces'
    /// found in their index, not face by face).
    fn known_tokens(&self, st: &super::State, key: KeyExpr<'_>) -> Vec<String> {
        let mut known = st.declared.tokens.declarations_intersecting(key);
        known.extend(
            st.own
                .tokens
                .values()
                .filter(|k| k.as_key_expr().intersects(key))
                .map(ToString::to_string),
        );
        known
    }

    /// Lists the tokens alive now on keys intersecting `key`.
    pub(crate) fn liveliness_get(
        self: &Arc<Self>,
        key: &str,
        timeout: Duration,
        caller: &Caller,
    ) -> Result<Receiver<Reply>, SessionError> {
        let key = OwnedKeyExpr::new(key)?;
        let (mut sink, rx) = ReplySink::new(None);
        let reply = |k: &str| Reply {
            result: Ok(token_sample(k, SampleKind::Put)),
            replier_id: None,
        };
        if self.config.mode != WhatAmI::Client {
            // Peers answer from what they know: no traffic.
            let known = self.known_tokens(&self.lock(), key.as_key_expr());
            for k in known {
                sink.deliver(reply(&k), caller);
            }
            return Ok(rx);
        }
        let (id, targets) = {
            let mut st = self.lock();
            let id = Self::next_id(&mut st);
            for k in st
                .own
                .tokens
                .values()
                .filter(|k| k.as_key_expr().intersects(key.as_key_expr()))
            {
                sink.deliver(reply(k.as_str()), caller);
            }
            self.queries().liveliness_gets.insert(
                id,
                PendingLivelinessGet {
                    key: key.clone(),
                    sink,
                },
            );
            let targets: Vec<Arc<dyn FaceTransport>> =
                st.faces.values().map(|f| f.transport.clone()).collect();
            (id, targets)
        };
        let msg = liveliness_interest(id, InterestMode::Current, key.as_str());
        for t in targets {
            send_control(&*t, &msg, caller);
        }
        self.schedule_deadline(
            std::time::Instant::now() + timeout,
            super::deadlines::Timeout::LivelinessGet(id),
        );
        Ok(rx)
    }

    /// A token declared by a face (on behalf of the router `origin`, if not its own).
    pub(crate) fn on_remote_token(
        &self,
        face_zid: ZenohId,
        id: u32,
        key: OwnedKeyExpr,
        interest: Option<u32>,
        origin: Option<ZenohId>,
        caller: &Caller,
    ) {
        let answered_get = {
            let mut queries = self.queries();
            match interest.and_then(|i| queries.liveliness_gets.get_mut(&i)) {
                Some(g) => {
                    if g.key.as_key_expr().intersects(key.as_key_expr()) {
                        g.sink.deliver(
                            Reply {
                                result: Ok(token_sample(key.as_str(), SampleKind::Put)),
                                replier_id: Some(weft_proto::network::EntityGlobalId {
                                    zid: face_zid,
                                    eid: 0,
                                }),
                            },
                            caller,
                        );
                    }
                    true
                }
                None => false,
            }
        };
        if !answered_get {
            let mut st = self.lock();
            let st = &mut *st;
            if let Some(face) = st.faces.get_mut(&face_zid) {
                st.declared
                    .tokens
                    .declare(face_zid, &mut face.tokens, Some(id), key.clone());
                face.set_origin(EntityKind::Token, id, origin);
            }
        }
        if !answered_get {
            self.notify_token(key.as_str(), SampleKind::Put);
            if self.is_router() {
                self.propagate_declaration(
                    face_zid,
                    super::entity::EntityKind::Token,
                    id,
                    &key,
                    false,
                    caller,
                );
            }
        }
    }

    /// A token withdrawn by a face.
    pub(crate) fn on_remote_token_gone(
        &self,
        face_zid: ZenohId,
        id: u32,
        key: Option<String>,
        caller: &Caller,
    ) {
        let key = {
            let mut st = self.lock();
            let st = &mut *st;
            let Some(face) = st.faces.get_mut(&face_zid) else {
                return;
            };
            match st
                .declared
                .tokens
                .undeclare_id(face_zid, &mut face.tokens, id)
            {
                Some(k) => {
                    face.set_origin(EntityKind::Token, id, None);
                    Some(k.to_string())
                }
                None => key.filter(|k| !k.is_empty()),
            }
        };
        if let Some(k) = key {
            self.notify_token(&k, SampleKind::Delete);
            if self.is_router() {
                if let Ok(k) = OwnedKeyExpr::new(k) {
                    self.propagate_undeclaration(
                        face_zid,
                        super::entity::EntityKind::Token,
                        id,
                        &k,
                        caller,
                    );
                }
            }
        }
    }

    /// A DeclareFinal for one of our liveliness gets ends it.
    pub(crate) fn finish_liveliness_get(&self, interest: u32) -> bool {
        self.queries().liveliness_gets.remove(&interest).is_some()
    }

    /// A face closed: its tokens disappear.
    pub(crate) fn forget_face_tokens(&self, tokens: HashMap<u32, OwnedKeyExpr>) {
        for key in tokens.values() {
            self.notify_token(key.as_str(), SampleKind::Delete);
        }
    }
}
