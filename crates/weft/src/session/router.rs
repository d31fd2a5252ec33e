//! Router mode: forwarding between faces.
//!
//! Data goes to every other face with a matching subscriber, once, never back to its
//! source. Declarations (subscribers, queryables, tokens) of one face are declared to the
//! others that must know them (peers and routers always, clients when their interests ask)
//! under an id the router allocates per (face, entity). Queries go to the faces with a
//! matching queryable under a fresh request id per face; their answers go back under the
//! querier's id, and the querier gets one ResponseFinal once every forwarded request is
//! finished (also when a queryable's face dies).
//!
//! Nothing passes between two peers: the peers of a router connect to each other
//! directly (gossip tells them where), as with Eclipse Zenoh's routers, so a router that
//! also carried their traffic would deliver it twice. Peers reach clients and routers
//! through the router, and clients and routers reach peers.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};
use weft_proto::core::{CongestionControl, NetworkQos, Reliability, WhatAmI, WireExpr, ZenohId};
use weft_proto::ext::ExtBody;
use weft_proto::network::linkstate::{decode_list, encode_list};
use weft_proto::network::{
    InterestOptions, NetworkMessage, NetworkOam, Push, QueryableInfo, Request, Response,
    ResponseFinal,
};
use weft_proto::zenoh::PushBody;

use super::entity::EntityKind;
use super::entity::{declare_msg, to_router, undeclare_msg};
use super::face_transport::send_control;
use super::face_transport::FaceTransport;
use super::gossiping::CONNECT_JITTER;
use super::mesh::SharedLocators;
use super::routes::{ForwardRoute, ForwardTarget};
use super::Inner;
use crate::api::SharedKey;
use crate::endpoint::Endpoint;
use crate::transport::Caller;

/// A request forwarded by the router: where its answers go back.
pub(crate) struct ForwardedQuery {
    requester: Arc<dyn FaceTransport>,
    request_id: u32,
    qos: NetworkQos,
}

/// How a router re-declares one entity of a face: under its own id, naming the router
/// the entity comes from by node id (see [`Inner::propagate_declaration`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Routed {
    /// The id the router declares it under.
    pub(crate) id: u32,
    /// The node id of the router it comes from, in this router's link-state lists.
    pub(crate) node_id: u16,
}

/// Whether a router passes on to a node of role `to` what a node of role `from` sends
/// (declarations, data, queries): not from one peer to another.
pub(crate) fn routes_between(from: WhatAmI, to: WhatAmI) -> bool {
    !(from == WhatAmI::Peer && to == WhatAmI::Peer)
}

impl Inner {
    /// Tells every neighbouring router what this router knows of the mesh (network OAM 1,
    /// the link-state list Zenoh routers exchange): itself and its links first, then every
    /// other router it heard of.
    pub(crate) fn send_link_state(&self, caller: &Caller) {
        if !self.is_router() {
            return;
        }
        let shared = self.shared_locators();
        let own_locators = if shared == SharedLocators::Nobody {
            Vec::new()
        } else {
            self.own_locators()
        };
        let mut body = Vec::new();
        let routers = {
            let st = self.lock();
            let routers: Vec<Arc<dyn FaceTransport>> = st
                .faces
                .values()
                .filter(|f| f.transport.peer_whatami() == WhatAmI::Router)
                .map(|f| f.transport.clone())
                .collect();
            if routers.is_empty() {
                return;
            }
            let mesh = self.mesh();
            let list = mesh.announcement_sharing(&own_locators, shared);
            if encode_list(&list, &mut body).is_err() {
                return;
            }
            routers
        };
        let mut oam = NetworkOam {
            id: NetworkOam::LINK_STATE,
            qos: NetworkQos::DECLARE,
            timestamp: None,
            unknown: Vec::new(),
            body: ExtBody::ZBuf(&body),
        };
        oam.qos = NetworkQos::DECLARE;
        let msg = NetworkMessage::Oam(oam);
        for t in routers {
            send_control(&*t, &msg, caller);
        }
    }

    /// A link-state list from a neighbouring router: the mesh's graph is updated, and if it
    /// changed, the news is relayed and the spanning tree recomputed.
    pub(crate) fn on_link_state(
        self: &Arc<Self>,
        from: &dyn FaceTransport,
        body: &[u8],
        caller: &Caller,
    ) {
        if !self.is_router() || from.peer_whatami() != WhatAmI::Router {
            return;
        }
        let list = match decode_list(body) {
            Ok(list) => list,
            Err(e) => {
                tracing::debug!("ignored a link-state list from {}: {e}", from.peer_zid());
                return;
            }
        };
        let (changed, mut connect, lost) = {
            let mut mesh = self.mesh();
            let before = mesh.routers();
            let applied = mesh.apply_counting(from.peer_zid(), &list);
            if applied.refused > 0 && mesh.note_refusal(from.peer_zid()) {
                tracing::warn!(
                    "router {}: {} link-state entries refused (a sequence number no router \
                     reaches, or beyond the window of the one known); told once per link",
                    from.peer_zid(),
                    applied.refused
                );
            }
            let changed = applied.changed;
            let lost: Vec<ZenohId> = if changed {
                before.into_iter().filter(|z| !mesh.reaches(*z)).collect()
            } else {
                Vec::new()
            };
            (changed, mesh.take_reachable(), lost)
        };
        {
            let gossip = self.gossip();
            connect.retain(|(zid, _)| gossip.wants(*zid, WhatAmI::Router));
        }
        if changed {
            self.forget_origins(&lost, caller);
            self.update_tree(caller);
            self.send_link_state(caller);
        }
        // Gossip's autoconnection (`scouting.gossip.autoconnect` naming routers): the
        // routers the mesh's lists tell where to reach.
        for (zid, locators) in connect {
            let eps: Vec<Endpoint> = locators.iter().filter_map(|l| l.parse().ok()).collect();
            super::discovery::connect_discovered(self, zid, eps, "gossip", CONNECT_JITTER);
        }
    }

    /// Routers left the mesh (`lost`): what neighbouring routers had declared on their
    /// behalf is forgotten and withdrawn from the other faces, as if undeclared (a Zenoh
    /// router in between withdraws nothing for a router it lost).
    pub(crate) fn forget_origins(&self, lost: &[ZenohId], caller: &Caller) {
        if lost.is_empty() {
            return;
        }
        let mut gone = Vec::new();
        {
            let mut st = self.lock();
            let st = &mut *st;
            for (zid, face) in &mut st.faces {
                let entities: Vec<(EntityKind, u32)> = face
                    .origins
                    .iter()
                    .filter(|(_, o)| lost.contains(o))
                    .map(|(e, _)| *e)
                    .collect();
                for (kind, id) in entities {
                    face.origins.remove(&(kind, id));
                    let (index, decls) = match kind {
                        EntityKind::Subscriber => {
                            (&mut st.declared.subscribers, &mut face.subscribers)
                        }
                        EntityKind::Queryable => {
                            (&mut st.declared.queryables, &mut face.queryables)
                        }
                        EntityKind::Token => (&mut st.declared.tokens, &mut face.tokens),
                    };
                    if kind == EntityKind::Queryable {
                        face.complete_queryables.remove(&id);
                    }
                    if let Some(key) = index.undeclare_id(*zid, decls, id) {
                        gone.push((*zid, kind, id, key));
                    }
                }
            }
            if !gone.is_empty() {
                self.routes_changed();
            }
        }
        for (zid, kind, id, key) in gone {
            tracing::debug!("{zid} had declared {kind:?} {id} on {key} for a router now gone");
            if kind == EntityKind::Token {
                self.notify_token(key.as_str(), crate::api::SampleKind::Delete);
            }
            self.propagate_undeclaration(zid, kind, id, &key, caller);
        }
    }

    /// Whose locators this router's link-state lists carry: with gossip on and routers
    /// among its targets, its own and its neighbours' (everyone's with `multihop`).
    fn shared_locators(&self) -> SharedLocators {
        let gossip = &self.config.scouting.gossip;
        if !gossip.enabled || !gossip.target_for(self.config.mode).matches(WhatAmI::Router) {
            SharedLocators::Nobody
        } else if gossip.multihop {
            SharedLocators::Everyone
        } else {
            SharedLocators::Neighbours
        }
    }

    /// Places each link to a router on or off the spanning tree. A link joining the tree
    /// brings what its router declared to the other faces; a link leaving it withdraws it.
    pub(crate) fn update_tree(&self, caller: &Caller) {
        if !self.is_router() {
            return;
        }
        type Entities = Vec<(EntityKind, u32, OwnedKeyExpr, bool)>;
        let (joined, left) = {
            let mut st = self.lock();
            let tree = self.mesh().tree_neighbours();
            let mut joined: Vec<(ZenohId, Entities)> = Vec::new();
            let mut left: Vec<(ZenohId, Entities)> = Vec::new();
            for (zid, face) in &mut st.faces {
                if face.transport.peer_whatami() != WhatAmI::Router {
                    continue;
                }
                let on = tree.contains(zid);
                if on != face.on_tree {
                    face.on_tree = on;
                    let changes = if on { &mut joined } else { &mut left };
                    changes.push((*zid, face.entities()));
                }
            }
            if !(joined.is_empty() && left.is_empty()) {
                self.routes_changed();
                tracing::info!(
                    "mesh tree: links on {:?}, joined {:?}, left {:?}",
                    tree,
                    joined.iter().map(|(z, _)| z).collect::<Vec<_>>(),
                    left.iter().map(|(z, _)| z).collect::<Vec<_>>()
                );
            }
            (joined, left)
        };
        for (zid, entities) in left {
            for (kind, id, key, _) in entities {
                self.propagate_undeclaration(zid, kind, id, &key, caller);
            }
        }
        for (zid, entities) in joined {
            for (kind, id, key, complete) in entities {
                self.propagate_declaration(zid, kind, id, &key, complete, caller);
            }
        }
    }

    /// Whether this session routes for others.
    pub(crate) fn is_router(&self) -> bool {
        self.config.mode == WhatAmI::Router
    }

    /// The faces with a subscriber matching `key`, where a router forwards data on it,
    /// with the key as the cache keeps it (cached per key; an error for an invalid key).
    pub(crate) fn forward_route_in(
        &self,
        st: &super::State,
        key: &str,
    ) -> Result<(SharedKey, ForwardRoute), weft_keyexpr::KeyExprError> {
        if let Some((k, r)) = self.routes().forward.get(key) {
            return Ok((k.clone(), r.clone()));
        }
        let k = KeyExpr::new(key)?;
        let faces = st.declared.subscribers.faces_and_traffic_intersecting(k);
        let route: ForwardRoute = faces
            .into_iter()
            .filter_map(|(zid, traffic)| {
                let face = st.faces.get(&zid).filter(|f| f.on_tree)?;
                Some(ForwardTarget {
                    face: face.transport.clone(),
                    drawn_by: traffic.into(),
                })
            })
            .collect();
        let key = SharedKey::from(key);
        self.routes().forward.insert(key.clone(), route.clone());
        Ok((key, route))
    }

    /// Forwards a Push received from `from` to the faces of `targets` (its forwarding
    /// route) other than `from`, with the timestamp the router `added` if the value had
    /// none; counts what each face's declarations drew, sent or dropped.
    pub(crate) fn route_push(
        &self,
        from: &dyn FaceTransport,
        key: &str,
        push: &Push<'_>,
        added: Option<weft_proto::core::Timestamp>,
        targets: &[ForwardTarget],
        caller: &Caller,
    ) {
        let bytes = match &push.body {
            PushBody::Put(p) => p.payload.len() as u64,
            PushBody::Del(_) => 0,
        };
        let mut out = Push::new(WireExpr::key(key), push.body.clone());
        out.qos = push.qos;
        out.unknown = push.unknown.clone();
        match &mut out.body {
            PushBody::Put(p) if p.timestamp.is_none() => p.timestamp = added,
            PushBody::Del(d) if d.timestamp.is_none() => d.timestamp = added,
            _ => {}
        }
        let msg = NetworkMessage::Push(out);
        let priority = push.qos.priority();
        let source = from.peer_zid();
        let role = from.peer_whatami();
        for target in targets
            .iter()
            .filter(|t| t.face.peer_zid() != source && routes_between(role, t.face.peer_whatami()))
        {
            let sent = target
                .face
                .send_forwarded(
                    &msg,
                    priority,
                    Reliability::Reliable,
                    push.qos.congestion_control(),
                    caller,
                )
                .is_ok();
            for traffic in target.drawn_by.iter() {
                if sent {
                    traffic.sent(bytes);
                } else {
                    traffic.dropped();
                }
            }
        }
    }

    /// The id under which the router declares `(face, kind, entity)` to others, and the
    /// node id that names, in this router's link-state lists, the router it comes from
    /// (0: this router, for what its clients and peers declared).
    fn routed_id(
        &self,
        st: &mut super::State,
        face: ZenohId,
        kind: EntityKind,
        entity: u32,
    ) -> Routed {
        if let Some(routed) = st.routing.routed_ids.get(&(face, kind, entity)) {
            return *routed;
        }
        let origin = st
            .faces
            .get(&face)
            .filter(|f| f.transport.peer_whatami() == WhatAmI::Router)
            .map_or(self.zid, |f| f.origin_of(kind, entity));
        let routed = Routed {
            id: Self::next_id(st),
            node_id: self.mesh().node_id(origin).unwrap_or(0),
        };
        st.routing.routed_ids.insert((face, kind, entity), routed);
        routed
    }

    /// Declares to the other faces an entity a face declared.
    pub(crate) fn propagate_declaration(
        &self,
        from: ZenohId,
        kind: EntityKind,
        entity: u32,
        key: &OwnedKeyExpr,
        complete: bool,
        caller: &Caller,
    ) {
        let (id, announcement) = {
            let mut st = self.lock();
            // What a router off the tree declares stays with us (the tree brings it).
            if st.faces.get(&from).is_some_and(|f| !f.on_tree) {
                return;
            }
            let role = st.faces.get(&from).map(|f| f.transport.peer_whatami());
            let routed = self.routed_id(&mut st, from, kind, entity);
            let announcement = self
                .announcement(&mut st, kind, key.as_key_expr(), Some(from))
                .only_to(|to| role.is_none_or(|r| routes_between(r, to)));
            (routed, announcement)
        };
        let info = QueryableInfo {
            complete,
            distance: 1,
        };
        let msg = declare_msg(kind, id.id, key.as_str(), info, None);
        announcement.send_split(&msg, &to_router(&msg, id.node_id, key.as_str()), caller);
    }

    /// Withdraws from the other faces an entity a face undeclared (or lost with the face).
    pub(crate) fn propagate_undeclaration(
        &self,
        from: ZenohId,
        kind: EntityKind,
        entity: u32,
        key: &OwnedKeyExpr,
        caller: &Caller,
    ) {
        let role = self
            .lock()
            .faces
            .get(&from)
            .map(|f| f.transport.peer_whatami());
        self.withdraw(from, role, kind, entity, key, caller);
    }

    /// Withdraws an entity of the node `from`, of role `role` when known, from the other
    /// faces.
    fn withdraw(
        &self,
        from: ZenohId,
        role: Option<WhatAmI>,
        kind: EntityKind,
        entity: u32,
        key: &OwnedKeyExpr,
        caller: &Caller,
    ) {
        let (id, announcement) = {
            let mut st = self.lock();
            let Some(routed) = st.routing.routed_ids.remove(&(from, kind, entity)) else {
                return;
            };
            let announcement = self
                .announcement(&mut st, kind, key.as_key_expr(), Some(from))
                .only_to(|to| role.is_none_or(|r| routes_between(r, to)));
            (routed, announcement)
        };
        let msg = undeclare_msg(kind, id.id);
        announcement.send_split(&msg, &to_router(&msg, id.node_id, key.as_str()), caller);
    }

    /// Declarations of the other faces that answer an interest of `to`: (kind, routed
    /// id and node id, key, complete).
    pub(crate) fn routed_declarations(
        &self,
        to: ZenohId,
        options: InterestOptions,
        key: Option<&OwnedKeyExpr>,
    ) -> Vec<(EntityKind, Routed, String, bool)> {
        let mut st = self.lock();
        let mut found = Vec::new();
        let matches =
            |k: &OwnedKeyExpr| key.is_none_or(|q| q.as_key_expr().intersects(k.as_key_expr()));
        let asker = st.faces.get(&to).map(|f| f.transport.peer_whatami());
        let passes = |f: &super::face::Face| {
            f.on_tree && asker.is_none_or(|a| routes_between(f.transport.peer_whatami(), a))
        };
        for (zid, face) in st.faces.iter().filter(|(_, f)| passes(f)) {
            // A requester is told of its own tokens (a liveliness get lists them), not of its
            // own subscribers and queryables.
            let own = *zid == to;
            if options.contains(InterestOptions::SUBSCRIBERS) && !own {
                for (e, k) in face.subscribers.by_id.iter().filter(|(_, k)| matches(k)) {
                    found.push((*zid, EntityKind::Subscriber, *e, k.to_string(), false));
                }
            }
            if options.contains(InterestOptions::QUERYABLES) && !own {
                for (e, k) in face.queryables.by_id.iter().filter(|(_, k)| matches(k)) {
                    let complete = face.complete_queryables.contains(e);
                    found.push((*zid, EntityKind::Queryable, *e, k.to_string(), complete));
                }
            }
            if options.contains(InterestOptions::TOKENS) {
                for (e, k) in face.tokens.by_id.iter().filter(|(_, k)| matches(k)) {
                    found.push((*zid, EntityKind::Token, *e, k.to_string(), false));
                }
            }
        }
        found
            .into_iter()
            .map(|(zid, kind, e, k, c)| (kind, self.routed_id(&mut st, zid, kind, e), k, c))
            .collect()
    }

    /// Forwards a request to the other faces with a matching queryable. When
    /// `with_local`, the router's own queryables answer too, as one more target whose id
    /// is returned. `None` means nobody answers: the caller sends ResponseFinal at once.
    pub(crate) fn route_request(
        &self,
        from: &dyn FaceTransport,
        key: &OwnedKeyExpr,
        r: &Request<'_>,
        with_local: bool,
        caller: &Caller,
    ) -> Option<Option<u32>> {
        let requester = from.handle()?;
        let forwarded = |requester: &Arc<dyn FaceTransport>| ForwardedQuery {
            requester: requester.clone(),
            request_id: r.id,
            qos: r.qos,
        };
        let (sends, local_rid) = {
            let mut st = self.lock();
            let faces = st.declared.queryables.faces_intersecting(key.as_key_expr());
            let role = from.peer_whatami();
            let targets: Vec<Arc<dyn FaceTransport>> = faces
                .iter()
                .filter(|zid| **zid != from.peer_zid())
                .filter_map(|zid| st.faces.get(zid))
                .filter(|f| f.on_tree && routes_between(role, f.transport.peer_whatami()))
                .map(|f| f.transport.clone())
                .collect();
            let total = targets.len() + usize::from(with_local);
            self.query_stats.routed.fetch_add(1, Ordering::Relaxed);
            if total == 0 {
                self.query_stats
                    .routed_unanswered
                    .fetch_add(1, Ordering::Relaxed);
                return None;
            }
            // Every target is registered before any is sent to, so that an early answer
            // cannot end the query while others are still to come; and while the faces
            // are held, so that a face closing now finds its part to end.
            let mut queries = self.queries();
            queries
                .fanout
                .insert((from.peer_zid(), r.id), (total, std::time::Instant::now()));
            let mut sends = Vec::with_capacity(targets.len());
            for t in targets {
                let rid = Self::next_id(&mut st);
                queries
                    .forwarded
                    .insert((t.peer_zid(), rid), forwarded(&requester));
                sends.push((t, rid));
            }
            let local_rid = with_local.then(|| {
                let rid = Self::next_id(&mut st);
                queries
                    .forwarded
                    .insert((self.zid, rid), forwarded(&requester));
                rid
            });
            (sends, local_rid)
        };
        for (t, rid) in sends {
            let mut out = Request::new(rid, WireExpr::key(key.as_str()), r.query.clone());
            out.qos = r.qos;
            out.target = r.target;
            out.budget = r.budget;
            out.timeout_ms = r.timeout_ms;
            let msg = NetworkMessage::Request(out);
            if t.send(
                &msg,
                r.qos.priority(),
                Reliability::Reliable,
                CongestionControl::Block,
                caller,
            )
            .is_err()
            {
                self.forwarded_done(t.peer_zid(), rid, caller);
            }
        }
        Some(local_rid)
    }

    /// An answer from a face to a forwarded request: relayed to the requester.
    /// Returns false if the response was not for a forwarded request.
    pub(crate) fn route_response(
        &self,
        from: &dyn FaceTransport,
        key: &str,
        r: &Response<'_>,
        caller: &Caller,
    ) -> bool {
        let target = {
            self.queries()
                .forwarded
                .get(&(from.peer_zid(), r.request_id))
                .map(|f| (f.requester.clone(), f.request_id))
        };
        let Some((requester, rid)) = target else {
            return false;
        };
        let mut out = Response::new(rid, WireExpr::key(key), r.body.clone());
        out.qos = r.qos;
        out.timestamp = r.timestamp;
        out.responder = r.responder;
        let _ = requester.send(
            &NetworkMessage::Response(out),
            r.qos.priority(),
            Reliability::Reliable,
            CongestionControl::Block,
            caller,
        );
        true
    }

    /// A face finished a forwarded request (ResponseFinal, or the face died). Returns false
    /// if it was not a forwarded request.
    pub(crate) fn forwarded_done(&self, face: ZenohId, rid: u32, caller: &Caller) -> bool {
        let finished = {
            let mut queries = self.queries();
            let Some(f) = queries.forwarded.remove(&(face, rid)) else {
                return false;
            };
            let key = (f.requester.peer_zid(), f.request_id);
            let left = queries.fanout.get_mut(&key).map(|(n, since)| {
                *n -= 1;
                (*n, *since)
            });
            if let Some((0, since)) = left {
                queries.fanout.remove(&key);
                self.query_stats.routed_durations.record(since.elapsed());
                Some(f)
            } else {
                None
            }
        };
        if let Some(f) = finished {
            let mut fin = ResponseFinal::new(f.request_id);
            fin.qos = f.qos;
            let _ = f.requester.send(
                &NetworkMessage::ResponseFinal(fin),
                f.qos.priority(),
                Reliability::Reliable,
                CongestionControl::Block,
                caller,
            );
        }
        true
    }

    /// A face closed: its forwarded requests end, its entities are withdrawn from others.
    pub(crate) fn router_forget_face(
        &self,
        zid: ZenohId,
        role: WhatAmI,
        entities: Vec<(EntityKind, u32, OwnedKeyExpr, bool)>,
        caller: &Caller,
    ) {
        let pending: Vec<u32> = self
            .queries()
            .forwarded
            .keys()
            .filter(|(f, _)| *f == zid)
            .map(|(_, r)| *r)
            .collect();
        for rid in pending {
            self.forwarded_done(zid, rid, caller);
        }
        // Requests that face had sent are abandoned.
        {
            let mut queries = self.queries();
            queries
                .forwarded
                .retain(|_, f| f.requester.peer_zid() != zid);
            queries.fanout.retain(|(r, _), _| *r != zid);
        }
        for (kind, entity, key, _) in entities {
            self.withdraw(zid, Some(role), kind, entity, &key, caller);
        }
    }
}
