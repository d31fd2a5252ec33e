//! What the session sends: data to the faces that want it, declarations to the faces that
//! must know them.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};
use weft_proto::core::{encoding_name, Encoding, NetworkQos, Priority, WhatAmI, WireExpr};
use weft_proto::network::{
    Declaration, Declare, DeclareFinal, Interest, InterestMode, InterestOptions, NetworkMessage,
    Push,
};
use weft_proto::zenoh::{Del, PushBody, Put};

use super::aggregate::{Aggregate, AggregateChange};
use super::declared_expr::DeclaredExpr;
use super::entity::{own_declaration, EntityKind};
use super::face::{Face, PUBLISHER_INTEREST};
use super::face_transport::{send_control, FaceTransport};
use super::{Callback, Inner, LocalSubscriber, SessionError};
use crate::api::{PutOptions, Sample, SampleKind, SharedKey};
use crate::transport::Caller;

/// Numeric id and schema of an encoding given as text (`text/plain`, `text/plain;utf-8`,
/// or any media type, sent as id 0xFFFF with the text as schema).
pub(crate) fn parse_encoding(text: &str) -> (u16, Option<&[u8]>) {
    if text.is_empty() {
        return (0, None);
    }
    let (name, schema) = match text.split_once(';') {
        Some((n, s)) => (n, Some(s)),
        None => (text, None),
    };
    match (0..1024u16).find(|id| encoding_name(*id) == Some(name)) {
        Some(id) => (id, schema.map(str::as_bytes)),
        None => (Encoding::CUSTOM_ID, Some(text.as_bytes())),
    }
}

fn declare_final_msg<'a>(interest_id: u32) -> NetworkMessage<'a> {
    NetworkMessage::Declare(Declare::new(
        Some(interest_id),
        Declaration::Final(DeclareFinal::default()),
    ))
}

fn publisher_interest_msg(id: u32, key: &str) -> NetworkMessage<'_> {
    let (mode, options) = PUBLISHER_INTEREST;
    let mut i = Interest::new(id, mode, options, Some(WireExpr::key(key)));
    i.qos = NetworkQos::DECLARE;
    NetworkMessage::Interest(i)
}

/// Whether our declarations go to this face unsolicited (peers and routers), or only
/// when it asked with an interest (clients).
fn declares_unsolicited(face: &Face) -> bool {
    face.transport.peer_whatami() != WhatAmI::Client
}

/// Where data on one key goes, as computed at one route epoch.
struct Routes {
    epoch: u64,
    targets: Arc<[Arc<dyn FaceTransport>]>,
    local: Option<Arc<[Callback]>>,
}

/// The routes a declared publisher keeps between puts, so that a put looks nothing up
/// while no declaration, interest or face changed; and its key expression, declared on
/// the faces it sends to.
pub(crate) struct PublisherRoutes {
    kept: std::sync::Mutex<Kept>,
}

/// What a declared publisher keeps, under its lock.
struct Kept {
    routes: Option<Routes>,
    /// Its key expression's id and the faces that know it (`None`: the session has no id
    /// left; puts carry the key's text).
    expr: Option<DeclaredExpr>,
}

impl PublisherRoutes {
    /// The routes of a publisher whose key expression is declared under `expr_id`.
    pub(crate) fn new(expr_id: Option<u16>) -> Self {
        Self {
            kept: std::sync::Mutex::new(Kept {
                routes: None,
                expr: expr_id.map(DeclaredExpr::new),
            }),
        }
    }

    /// Withdraws the key expression from the faces that know it (at `priority`, after
    /// the puts before it); the id, given back, is returned.
    pub(crate) fn withdraw_expr(&self, priority: Priority, caller: &Caller) -> Option<u16> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let expr = kept.expr.as_mut()?;
        expr.withdraw(priority, caller);
        Some(expr.id())
    }
}

impl Inner {
    /// The faces a declaration of `kind` on `key` goes to: peers and routers always,
    /// clients when one of their interests asks for it.
    pub(crate) fn declaration_targets(
        &self,
        st: &super::State,
        kind: InterestOptions,
        key: KeyExpr<'_>,
    ) -> Vec<Arc<dyn FaceTransport>> {
        st.faces
            .values()
            .filter(|f| {
                declares_unsolicited(f) || f.their_interests.values().any(|i| i.wants(kind, key))
            })
            .map(|f| f.transport.clone())
            .collect()
    }

    /// Whether data flowing on this face follows the peer rules (initial declarations
    /// and DeclareFinal 0) rather than the client-to-router interest rules.
    pub(crate) fn is_peer_link(&self, face: &Face) -> bool {
        self.config.mode != WhatAmI::Client && face.transport.peer_whatami() != WhatAmI::Client
    }

    /// This session's subscribers that take its own publications on `key` (cached per
    /// key): those whose origin includes the session; `None` for an invalid key.
    pub(crate) fn local_route_in(&self, st: &super::State, key: &str) -> Option<Arc<[Callback]>> {
        if let Some((_, r)) = self.routes().own_local.get(key) {
            return Some(r.clone());
        }
        let k = KeyExpr::new(key).ok()?;
        let route: Arc<[Callback]> = st
            .own
            .subscribers_of_session()
            .filter(|s| s.key.as_key_expr().intersects(k))
            .map(|s| s.callback.clone())
            .collect();
        self.routes()
            .own_local
            .insert(SharedKey::from(key), route.clone());
        Some(route)
    }

    /// This session's subscribers that take data from other nodes on `key` (cached per
    /// key), with the cache's shared copy of the key for the samples delivered on that
    /// route.
    pub(crate) fn keyed_local_route_in(
        &self,
        st: &super::State,
        key: &str,
    ) -> Result<(SharedKey, Arc<[Callback]>), weft_keyexpr::KeyExprError> {
        if let Some((k, r)) = self.routes().local.get(key) {
            return Ok((k.clone(), r.clone()));
        }
        let k = KeyExpr::new(key)?;
        let route: Arc<[Callback]> = st
            .own
            .subscribers
            .values()
            .filter(|s| s.origin.includes_remote() && s.key.as_key_expr().intersects(k))
            .map(|s| s.callback.clone())
            .collect();
        let key = SharedKey::from(key);
        self.routes().local.insert(key.clone(), route.clone());
        Ok((key, route))
    }

    /// The transports data on `key` goes to (cached per key).
    fn remote_route_in(
        &self,
        st: &super::State,
        key: &OwnedKeyExpr,
    ) -> Arc<[Arc<dyn FaceTransport>]> {
        if let Some((_, r)) = self.routes().remote.get(key.as_str()) {
            return r.clone();
        }
        let subscribed = st
            .declared
            .subscribers
            .faces_intersecting(key.as_key_expr());
        let has_subscriber = |f: &super::face::Face| {
            f.on_tree && subscribed.binary_search(&f.transport.peer_zid()).is_ok()
        };
        let route: Arc<[Arc<dyn FaceTransport>]> = st
            .faces
            .values()
            .filter(|f| match f.transport.peer_whatami() {
                // A client connected to us declares its subscribers unsolicited, and so
                // does a router to a router.
                WhatAmI::Client => has_subscriber(f),
                WhatAmI::Router if self.is_router() => has_subscriber(f),
                _ => f.wants_data(key.as_key_expr(), has_subscriber(f), self.is_peer_link(f)),
            })
            .map(|f| f.transport.clone())
            .collect();
        self.routes()
            .remote
            .insert(SharedKey::from(key.as_str()), route.clone());
        route
    }

    /// Both routes of `key`, in one lock.
    fn routes_of(&self, key: &OwnedKeyExpr) -> Routes {
        let st = self.lock();
        Routes {
            epoch: self.route_epoch.load(Ordering::Acquire),
            targets: self.remote_route_in(&st, key),
            local: self.local_route_in(&st, key.as_str()),
        }
    }

    /// A publisher's routes: those it kept, while no route has changed since; otherwise
    /// computed again and kept. They are used under the publisher's lock: a put takes no
    /// reference count (each is an atomic write to a line the I/O threads share). `None`
    /// when another put of the same publisher holds them (it may be waiting for room
    /// under `block`): this put then looks its routes up on its own rather than wait, so
    /// that a callback on an I/O thread never waits for another thread's congestion.
    fn publisher_routes<'p>(
        &self,
        own: &'p PublisherRoutes,
        key: &OwnedKeyExpr,
    ) -> Option<std::sync::MutexGuard<'p, Kept>> {
        let epoch = self.route_epoch.load(Ordering::Acquire);
        let mut kept = match own.kept.try_lock() {
            Ok(kept) => kept,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        if kept.routes.as_ref().is_none_or(|r| r.epoch != epoch) {
            let routes = self.routes_of(key);
            if let Some(expr) = &mut kept.expr {
                expr.align(&routes.targets);
            }
            kept.routes = Some(routes);
        }
        Some(kept)
    }

    /// Publishes a put or delete: locally, then to every face that wants it. A declared
    /// publisher passes the routes it keeps between puts.
    pub(crate) fn publish(
        &self,
        key: &OwnedKeyExpr,
        kind: SampleKind,
        payload: &[u8],
        options: &PutOptions,
        own_routes: Option<&PublisherRoutes>,
        caller: &Caller,
    ) -> Result<(), SessionError> {
        if self.is_closing() {
            return Err(SessionError::Closed);
        }
        let (enc_id, schema) = parse_encoding(&options.encoding);
        let timestamp = options
            .timestamp
            .or_else(|| self.timestamping().then(|| self.new_timestamp(caller)));
        let body = match kind {
            SampleKind::Put => PushBody::Put(Put {
                timestamp,
                encoding: Encoding { id: enc_id, schema },
                source_info: options.source_info,
                attachment: options.attachment.as_deref(),
                payload,
                ..Put::default()
            }),
            SampleKind::Delete => PushBody::Del(Del {
                timestamp,
                source_info: options.source_info,
                attachment: options.attachment.as_deref(),
                ..Del::default()
            }),
        };
        let mut push = Push::new(WireExpr::key(key.as_str()), body);
        push.qos = NetworkQos::new(
            options.priority,
            options.congestion_control,
            options.express,
        );
        let local = {
            // A declared publisher's kept routes (held under its lock until the message
            // is queued for every face), or this put's own (no allocation for them).
            let mut kept = own_routes.and_then(|own| self.publisher_routes(own, key));
            let computed;
            let (routes, mut expr): (&Routes, Option<&mut DeclaredExpr>) = match &mut kept {
                Some(kept) => {
                    let Kept { routes, expr } = &mut **kept;
                    (
                        routes.as_ref().expect("publisher routes were just kept"),
                        expr.as_mut(),
                    )
                }
                None => {
                    computed = self.routes_of(key);
                    (&computed, None)
                }
            };
            // One message, naming the key by its declared id for the faces that know it,
            // in full for the others (a second message per put cost a clone and a drop:
            // 3 % of a Python publisher's time at 8 B).
            let full = push.wire_expr;
            let by_id = expr.as_ref().map(|e| e.wire_expr());
            let mut msg = NetworkMessage::Push(push);
            let remote = options.allowed_destination.includes_remote();
            for (i, t) in routes.targets.iter().enumerate().filter(|_| remote) {
                let lane = (options.priority, options.congestion_control);
                let declared = expr
                    .as_mut()
                    .is_some_and(|e| e.declare_on((i, t), key.as_str(), lane, caller));
                if let NetworkMessage::Push(p) = &mut msg {
                    p.wire_expr = by_id.filter(|_| declared).unwrap_or(full);
                }
                let sent = t.send(
                    &msg,
                    options.priority,
                    options.reliability,
                    options.congestion_control,
                    caller,
                );
                if sent == Err(crate::transport::SendError::Dropped) {
                    self.count_own_drop(key.as_str());
                }
            }
            // Local subscribers are called without the publisher's lock (one of them may
            // put with the same publisher).
            routes
                .local
                .as_ref()
                .filter(|r| !r.is_empty() && options.allowed_destination.includes_session())
                .cloned()
        };
        if let Some(local) = local {
            let encoding = if options.encoding.is_empty() {
                "zenoh/bytes".into()
            } else {
                options.encoding.clone().into()
            };
            let sample = Sample {
                key_expr: key.as_ref().into(),
                kind,
                payload: payload.into(),
                encoding,
                timestamp,
                attachment: options.attachment.clone(),
                priority: options.priority,
                congestion_control: options.congestion_control,
                express: options.express,
                source_info: options.source_info,
            };
            super::deliver(&local, sample);
        }
        Ok(())
    }

    /// Declares a subscriber taking the samples `origin` allows: other nodes are told of
    /// it unless its origin is `SessionLocal`.
    pub(crate) fn declare_subscriber(
        &self,
        key: OwnedKeyExpr,
        origin: crate::api::Locality,
        callback: Callback,
        caller: &Caller,
    ) -> Result<u32, SessionError> {
        let subscriber = LocalSubscriber {
            key: key.clone(),
            callback,
            origin,
        };
        if origin == crate::api::Locality::SessionLocal {
            return self.declare_local_only(|st, id| {
                st.own.local_only_subscribers.insert(id, subscriber);
            });
        }
        self.declare_own(
            EntityKind::Subscriber,
            &key,
            false,
            |st, id| {
                st.own.subscribers.insert(id, subscriber);
            },
            caller,
        )
    }

    pub(crate) fn undeclare_subscriber(&self, id: u32, caller: &Caller) {
        if self.undeclare_local_only(|st| st.own.local_only_subscribers.remove(&id).is_some()) {
            return;
        }
        self.undeclare_own(
            EntityKind::Subscriber,
            id,
            |st| st.own.subscribers.remove(&id).map(|s| s.key),
            caller,
        );
    }

    pub(crate) fn declare_publisher(
        &self,
        key: OwnedKeyExpr,
        caller: &Caller,
    ) -> Result<u32, SessionError> {
        if self.is_closing() {
            return Err(SessionError::Closed);
        }
        let (id, targets) = {
            let mut st = self.lock();
            self.routes_changed();
            let id = Self::next_id(&mut st);
            st.own.publishers.insert(id, key.clone());
            let mut targets = Vec::new();
            if self.config.mode == WhatAmI::Client {
                for f in st.faces.values_mut() {
                    f.our_interests.insert(id, (key.clone(), false));
                    targets.push(f.transport.clone());
                }
            }
            (id, targets)
        };
        let msg = publisher_interest_msg(id, key.as_str());
        for t in targets {
            send_control(&*t, &msg, caller);
        }
        Ok(id)
    }

    pub(crate) fn undeclare_publisher(&self, id: u32, caller: &Caller) {
        let targets: Vec<Arc<dyn FaceTransport>> = {
            let mut st = self.lock();
            self.routes_changed();
            if st.own.publishers.remove(&id).is_none() {
                return;
            }
            st.faces
                .values_mut()
                .filter_map(|f| f.our_interests.remove(&id).map(|_| f.transport.clone()))
                .collect()
        };
        let mut i = Interest::new(id, InterestMode::Final, InterestOptions::default(), None);
        i.qos = NetworkQos::DECLARE;
        let msg = NetworkMessage::Interest(i);
        for t in targets {
            send_control(&*t, &msg, caller);
        }
    }

    /// Sends a new face what it must know of us: our subscribers (to peers and routers),
    /// our publishers' interests (client mode), and, between peers, the end of our initial
    /// declarations.
    pub(crate) fn introduce(&self, t: &dyn FaceTransport, caller: &Caller) {
        let (subs, pubs, unsolicited, peer_link) = {
            let mut st = self.lock();
            self.routes_changed();
            let subs: Vec<(u32, String)> = st
                .own
                .subscribers
                .iter()
                .map(|(id, s)| (*id, s.key.to_string()))
                .collect();
            let pubs: Vec<(u32, OwnedKeyExpr)> = st
                .own
                .publishers
                .iter()
                .map(|(id, k)| (*id, k.clone()))
                .collect();
            let client = self.config.mode == WhatAmI::Client;
            let Some(face) = st.faces.get_mut(&t.peer_zid()) else {
                return;
            };
            if client {
                for (id, key) in &pubs {
                    face.our_interests.insert(*id, (key.clone(), false));
                }
            }
            (
                subs,
                if client { pubs } else { Vec::new() },
                declares_unsolicited(face),
                self.is_peer_link(face),
            )
        };
        if unsolicited {
            for (id, key) in &subs {
                send_control(
                    t,
                    &own_declaration(EntityKind::Subscriber, *id, key, false, None),
                    caller,
                );
            }
            for (id, key, complete) in self.queryable_declarations() {
                send_control(
                    t,
                    &own_declaration(EntityKind::Queryable, id, &key, complete, None),
                    caller,
                );
            }
            for (id, key) in self.token_declarations() {
                send_control(
                    t,
                    &own_declaration(EntityKind::Token, id, &key, false, None),
                    caller,
                );
            }
        }
        if self.config.mode == WhatAmI::Client {
            let subs: Vec<(u32, String)> = self
                .lock()
                .own
                .liveliness_subscribers
                .iter()
                .map(|(id, s)| (*id, s.key.to_string()))
                .collect();
            for (id, key) in subs {
                let mut i = Interest::new(
                    id,
                    InterestMode::Future,
                    InterestOptions::TOKENS,
                    Some(WireExpr::key(&key)),
                );
                i.qos = NetworkQos::DECLARE;
                send_control(t, &NetworkMessage::Interest(i), caller);
            }
        }
        for (id, key) in &pubs {
            send_control(t, &publisher_interest_msg(*id, key.as_str()), caller);
        }
        if self.config.mode == WhatAmI::Client {
            let queriers: Vec<(u32, OwnedKeyExpr)> = self
                .lock()
                .own
                .queriers
                .iter()
                .map(|(id, k)| (*id, k.clone()))
                .collect();
            for (id, key) in queriers {
                send_control(
                    t,
                    &super::matching::querier_interest_msg(id, key.as_str()),
                    caller,
                );
            }
        }
        if unsolicited && self.is_router() {
            // What the router's other faces declared.
            let all = InterestOptions::SUBSCRIBERS
                .with(InterestOptions::QUERYABLES)
                .with(InterestOptions::TOKENS);
            let to_router = t.peer_whatami() == WhatAmI::Router;
            for (kind, routed, key, complete) in self.routed_declarations(t.peer_zid(), all, None) {
                let msg = own_declaration(kind, routed.id, &key, complete, None);
                if to_router {
                    send_control(
                        t,
                        &super::entity::to_router(&msg, routed.node_id, &key),
                        caller,
                    );
                } else {
                    send_control(t, &msg, caller);
                }
            }
        }
        // A peer ends its initial declarations with a DeclareFinal; a router does not
        // towards another router (Zenoh's routers never do, and a Zenoh router built with
        // debug assertions stops reading a router link that sends one).
        let router_to_router = self.is_router() && t.peer_whatami() == WhatAmI::Router;
        if peer_link && !router_to_router {
            send_control(t, &declare_final_msg(0), caller);
        }
    }

    /// Answers an interest received on a face: for Current and CurrentFuture, the matching
    /// declarations (one aggregate per kind for an aggregated interest), then DeclareFinal;
    /// for Future and CurrentFuture, keeps the interest to declare what comes later.
    pub(crate) fn answer_interest(
        &self,
        t: &dyn FaceTransport,
        i: &Interest<'_>,
        key: Option<OwnedKeyExpr>,
        mut aggregate: Option<Aggregate>,
        caller: &Caller,
    ) {
        let (interest, mode, options) = (i.id, i.mode, i.options);
        let Some(handle) = t.handle() else { return };
        let current = matches!(mode, InterestMode::Current | InterestMode::CurrentFuture);
        let future = matches!(mode, InterestMode::Future | InterestMode::CurrentFuture);
        // Current-only answers carry entity id 0, as Zenoh's do.
        let answer_id = |id: u32| if future { id } else { 0 };
        let aggregated = aggregate.is_some();
        // Peers and routers were told of every token already, unasked (and are told of
        // each new one): a Current answer would make a Zenoh peer's liveliness get list
        // each token twice, once from what it knows and once from the answer.
        let told_unasked = t.peer_whatami() != WhatAmI::Client;
        let individually = |kind: InterestOptions| {
            options.contains(kind)
                && !(aggregated && Aggregate::covers(kind))
                && !(told_unasked && kind == InterestOptions::TOKENS)
        };
        let intersects = |k: &OwnedKeyExpr| {
            key.as_ref()
                .is_none_or(|q| q.as_key_expr().intersects(k.as_key_expr()))
        };
        // (kind, id, key, complete) of every declaration to send, and the aggregates.
        let mut found: Vec<(EntityKind, u32, String, bool)> = Vec::new();
        let mut aggregates = Vec::new();
        {
            let mut st = self.lock();
            self.routes_changed();
            if current {
                if individually(InterestOptions::SUBSCRIBERS) {
                    found.extend(
                        st.own
                            .subscribers
                            .iter()
                            .filter(|(_, s)| intersects(&s.key))
                            .map(|(id, s)| {
                                (
                                    EntityKind::Subscriber,
                                    answer_id(*id),
                                    s.key.to_string(),
                                    false,
                                )
                            }),
                    );
                }
                if individually(InterestOptions::QUERYABLES) {
                    found.extend(
                        st.own
                            .queryables
                            .iter()
                            .filter(|(_, q)| intersects(&q.key))
                            .map(|(id, q)| {
                                let k = q.key.to_string();
                                (EntityKind::Queryable, answer_id(*id), k, q.complete)
                            }),
                    );
                }
                if individually(InterestOptions::TOKENS) {
                    found.extend(
                        st.own
                            .tokens
                            .iter()
                            .filter(|(_, k)| intersects(k))
                            .map(|(id, k)| {
                                (EntityKind::Token, answer_id(*id), k.to_string(), false)
                            }),
                    );
                }
                if let (Some(agg), Some(k)) = (aggregate.as_mut(), key.as_ref()) {
                    for (kind, option) in [
                        (EntityKind::Subscriber, InterestOptions::SUBSCRIBERS),
                        (EntityKind::Queryable, InterestOptions::QUERYABLES),
                    ] {
                        if !options.contains(option) {
                            continue;
                        }
                        let asker = t.peer_zid();
                        if let Some(complete) =
                            self.aggregate_match(&st, kind, k.as_key_expr(), asker)
                        {
                            let id = if future { Self::next_id(&mut st) } else { 0 };
                            if future {
                                agg.record(kind, Some((id, complete)));
                            }
                            aggregates.push(AggregateChange::current(
                                handle.clone(),
                                kind,
                                id,
                                agg,
                                complete,
                                interest,
                            ));
                        }
                    }
                }
            }
            if future {
                st.routing.maybe_aggregated |= aggregate.is_some();
                if let Some(face) = st.faces.get_mut(&t.peer_zid()) {
                    face.their_interests.insert(
                        interest,
                        super::face::PeerInterest {
                            options,
                            key: key.clone(),
                            aggregate,
                            published: Default::default(),
                        },
                    );
                }
            }
        }
        if current && self.is_router() {
            let mut routed = InterestOptions::default();
            for kind in [
                InterestOptions::SUBSCRIBERS,
                InterestOptions::QUERYABLES,
                InterestOptions::TOKENS,
            ] {
                if individually(kind) {
                    routed = routed.with(kind);
                }
            }
            for (kind, id, k, complete) in
                self.routed_declarations(t.peer_zid(), routed, key.as_ref())
            {
                found.push((kind, answer_id(id.id), k, complete));
            }
        }
        // Tokens first, then subscribers, then queryables.
        found.sort_by_key(|(kind, ..)| match kind {
            EntityKind::Token => 0,
            EntityKind::Subscriber => 1,
            EntityKind::Queryable => 2,
        });
        for (kind, id, k, complete) in &found {
            send_control(
                t,
                &own_declaration(*kind, *id, k, *complete, Some(interest)),
                caller,
            );
        }
        for change in &aggregates {
            change.send(caller);
        }
        if current {
            send_control(t, &declare_final_msg(interest), caller);
        }
    }
}
