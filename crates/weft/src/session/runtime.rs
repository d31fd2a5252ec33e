//! The session's transports come and go: established ones are adopted (as faces, or as
//! links reserved for priorities beside one), ended ones are forgotten; listeners and
//! connectors are handed to the session's links loop (`links`), which makes the links.
//! The transports themselves are served by the I/O threads.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use weft_proto::core::{WhatAmI, ZenohId};
use weft_transport::establish::{LocalParams, PriorityRange};

use super::dispatch::Glue;
use super::face::{AttachedLink, Face};
use super::face_transport::FaceTransport;
use super::network_events::{LinkEvent, TransportEvent};
use super::{Inner, OpenError};
use crate::api::SampleKind;
use crate::endpoint::Endpoint;
use crate::link::{Link, Listener};
use crate::transport::Caller;
use crate::transport::{self, Transport};

impl Inner {
    pub(crate) fn local_params(
        &self,
        link: &Link,
        priorities: Option<PriorityRange>,
    ) -> LocalParams {
        let mut p = LocalParams::new(self.zid, self.config.mode);
        p.link_priorities = priorities;
        p.batch_size = self.config.batch_size.min(link.mtu());
        p.lease_ms = self.config.lease.as_millis() as u64;
        p.qos = self.config.qos;
        p
    }

    /// What this node announces in a handshake on a link not made yet (the handshake
    /// caps the batch size by the link's once it is).
    pub(crate) fn local_params_for(&self, priorities: Option<PriorityRange>) -> LocalParams {
        let mut p = LocalParams::new(self.zid, self.config.mode);
        p.link_priorities = priorities;
        p.batch_size = self.config.batch_size;
        p.lease_ms = self.config.lease.as_millis() as u64;
        p.qos = self.config.qos;
        p
    }

    pub(crate) fn handler(self: &Arc<Self>) -> Arc<dyn transport::Handler> {
        Arc::new(Glue(Arc::downgrade(self)))
    }

    /// Takes an established transport (`opened` by this node, or accepted) and starts
    /// it: as a link reserved for its priorities beside the live main transport with the
    /// same node, if it has a priority range and there is one; else as a face
    /// ([`Inner::add_face`]). Returns whether it was kept.
    pub(crate) fn adopt(
        self: &Arc<Self>,
        pending: transport::Pending,
        opened: bool,
        caller: &Caller,
    ) -> bool {
        let t = pending.transport().clone();
        if let Some(range) = t.negotiated().link_priorities {
            if let Some(main) = self.main_transport(t.peer_zid()) {
                if self.is_closing() {
                    t.close(weft_proto::transport::CloseReason::GENERIC, caller);
                    return false;
                }
                // Recorded before it starts (it may end at once), told once it is kept.
                let id = link_id(&t);
                self.record_priority_link(&main, id, LinkEvent::of(SampleKind::Put, &*t));
                let kept = pending.start_beside(&main, caller);
                self.confirm_priority_link(&main, id, kept);
                tracing::debug!(
                    "link {} for priorities {range:?} of {}: {}",
                    t.describe(),
                    t.peer_zid(),
                    if kept { "attached" } else { "refused" }
                );
                return kept;
            }
        }
        let kept = self.add_face(t.clone(), opened, caller);
        if kept {
            // Who the peer said it is (its user name, its certificate's name): escaped,
            // as the peer chose them.
            let user = t.authenticated_user().map(crate::printable);
            let cert = t.peer_cert_common_name().map(crate::printable);
            tracing::info!(
                peer = %t.peer_zid(),
                whatami = t.peer_whatami().as_str(),
                link = t.describe(),
                user = user.map(tracing::field::display),
                cert_common_name = cert.map(tracing::field::display),
                "session open"
            );
        }
        pending.start(caller);
        kept
    }

    /// The open transport of the face of `zid` that is not reserved for priorities.
    pub(crate) fn main_transport(&self, zid: ZenohId) -> Option<Arc<Transport>> {
        self.lock()
            .faces
            .get(&zid)
            .and_then(|f| f.transport.transport())
            .filter(|t| !t.is_closed() && t.negotiated().link_priorities.is_none())
    }

    /// Registers an established transport (`opened` by this node, or accepted) and
    /// introduces ourselves to it. Returns false when the transport was refused and
    /// closed: the session is closing, or it duplicates a live transport between two
    /// peers.
    ///
    /// Two peers (or two routers) that discover each other may both connect. Both then
    /// keep the transport opened by the node with the greater ZenohID and close the
    /// other, so that they agree whatever the order in which the two arrive.
    pub(crate) fn add_face(
        self: &Arc<Self>,
        t: Arc<Transport>,
        opened: bool,
        caller: &Caller,
    ) -> bool {
        if let Some(control) = &self.access_control {
            if !self.is_closing() {
                t.set_access_control(Arc::new(crate::acl::Enforcer::new(
                    control.clone(),
                    &access_subject(&t),
                    format!("{} ({})", t.peer_zid(), t.describe()),
                    t.peer_ip(),
                )));
            }
        }
        let link_priorities = t.negotiated().link_priorities;
        self.attach_face(t, link_priorities.is_some(), opened, caller)
    }

    /// Makes `t` a face of this session (see [`Inner::add_face`]); `for_priorities` when
    /// its link is reserved for some priorities (it stands in for the main link until
    /// that one comes).
    pub(crate) fn attach_face(
        self: &Arc<Self>,
        t: Arc<dyn FaceTransport>,
        for_priorities: bool,
        opened: bool,
        caller: &Caller,
    ) -> bool {
        if self.is_closing() {
            t.close(weft_proto::transport::CloseReason::GENERIC, caller);
            return false;
        }
        if self.batching.load(std::sync::atomic::Ordering::Relaxed) {
            t.set_manual_batching(true);
        }
        let meshed = self.is_router() && t.peer_whatami() == WhatAmI::Router;
        let replaced = {
            let mut st = self.lock();
            let peer = t.peer_zid();
            let sessions = st.faces.len();
            if !opened && !st.faces.contains_key(&peer) && sessions >= self.config.max_sessions {
                drop(st);
                self.refused_session(&*t, sessions);
                t.close(weft_proto::transport::CloseReason::MAX_SESSIONS, caller);
                return false;
            }
            let between_peers =
                super::discovery::both_may_connect(self.config.mode, t.peer_whatami());
            // A main link replaces a link reserved for priorities that stood in for it.
            let live = st
                .faces
                .get(&peer)
                .filter(|f| !f.transport.is_closed() && (!f.for_priorities || for_priorities));
            let live_duplicate = live.is_some();
            // Two peers (or routers) that connect to each other at the same time make two
            // sessions, both begun before either was up: they keep one by a rule both
            // apply alike. A session begun once the live one was up is not that: it is a
            // node claiming the live one's ZenohID (or the same node again, before this
            // one saw its link end), refused below as for clients.
            let simultaneous = live.is_some_and(|f| {
                t.handshake_started()
                    .is_none_or(|started| started <= f.attached_at)
            });
            if between_peers
                && simultaneous
                && !crate::scouting::message::opened_by_greater(self.zid, peer, opened)
            {
                drop(st);
                tracing::debug!("a second session with peer {peer}: closed, one is kept");
                t.close(weft_proto::transport::CloseReason::MAX_LINKS, caller);
                return false;
            }
            if live_duplicate && (!between_peers || !simultaneous) {
                // A node claiming the ZenohID of a live session (ZenohIDs are public):
                // refused, as Zenoh refuses it; the live session keeps everything. A
                // node that really restarted gets in once its old session's lease or
                // link ends.
                drop(st);
                self.refused_duplicate(&*t);
                t.close(weft_proto::transport::CloseReason::MAX_LINKS, caller);
                return false;
            }
            self.routes_changed();
            let mut face = Face::new(t.clone());
            face.for_priorities = for_priorities;
            if meshed {
                // Off the tree until the mesh's link states place it.
                face.on_tree = false;
                self.mesh().link_up(t.peer_zid());
            }
            if let Some(old) = st.faces.get_mut(&t.peer_zid()) {
                face.reconnect = old.reconnect.take();
            }
            let replaced = st.faces.insert(t.peer_zid(), face);
            // A new transport, or one replacing a transport already closed (its own end
            // is told here, before the new one): listeners see each close after its open.
            let was_live = replaced
                .as_ref()
                .is_some_and(|old| !old.transport.is_closed());
            if was_live {
                // The node's transport goes on (its transport listeners are told
                // nothing); its links change.
                if let Some(old) = &replaced {
                    self.tell_links_gone(old);
                }
            } else {
                if let Some(old) = &replaced {
                    self.tell_face_gone(old);
                }
                self.transport_listeners
                    .tell(&TransportEvent::of(SampleKind::Put, &*t));
            }
            self.link_listeners
                .tell(&LinkEvent::of(SampleKind::Put, &*t));
            replaced
        };
        if let Some(old) = replaced {
            old.transport
                .close(weft_proto::transport::CloseReason::MAX_LINKS, caller);
        }
        if meshed {
            // The link state first: a Zenoh router resolves the node id of the
            // declarations that follow through the list it was given, and drops those it
            // cannot resolve.
            self.update_tree(caller);
            self.send_link_state(caller);
        }
        if !for_priorities {
            self.gossip_link_up(&*t, caller);
        }
        self.introduce(&*t, caller);
        self.changed.notify_all();
        true
    }

    /// Has the face of `zid` connect again to one of `alternatives` when it ends (unless
    /// it does already). False when there is no such face (it ended already).
    pub(super) fn reconnect_when_gone(&self, zid: ZenohId, alternatives: &Arc<[Endpoint]>) -> bool {
        if self.is_closing() {
            return true;
        }
        let mut st = self.lock();
        match st.faces.get_mut(&zid) {
            Some(face) if !face.transport.is_closed() => {
                face.reconnect.get_or_insert_with(|| alternatives.clone());
                true
            }
            _ => false,
        }
    }

    /// Counts and logs a session refused because a live session has its ZenohID: at most
    /// one line per 10 s per source address, so that a flood cannot flood the log.
    fn refused_duplicate(&self, t: &dyn FaceTransport) {
        let n = self.refused_duplicates.fetch_add(1, Ordering::Relaxed) + 1;
        let source = super::links::Source(t.transport().and_then(|t| t.peer_ip()));
        let line = self.refusals.line(source, "duplicate_id", || {
            format!(
                "refused {} ({} {}): a live session has this ZenohID ({n} refused so far)",
                t.describe(),
                t.peer_whatami().as_str(),
                t.peer_zid()
            )
        });
        if let Some(line) = line {
            tracing::warn!("{line}");
        }
    }

    /// Logs a session refused beyond `transport.unicast.max_sessions`: at most one line
    /// per 10 s per source address, so that a flood of connections cannot flood the log.
    fn refused_session(&self, t: &dyn FaceTransport, sessions: usize) {
        let n = self.refused_sessions.fetch_add(1, Ordering::Relaxed) + 1;
        let source = super::links::Source(t.transport().and_then(|t| t.peer_ip()));
        let line = self.refusals.line(source, "max_sessions", || {
            format!(
                "refused {} ({}): {sessions} sessions, the most \
                 transport.unicast.max_sessions allows ({n} refused so far)",
                t.describe(),
                t.peer_zid()
            )
        });
        if let Some(line) = line {
            tracing::warn!("{line}");
        }
    }

    /// Tells the listeners that `face`'s links and transport are gone: its links reserved
    /// for priorities, its main link, then its transport (called with the state locked).
    fn tell_face_gone(&self, face: &Face) {
        self.tell_links_gone(face);
        self.transport_listeners
            .tell(&TransportEvent::of(SampleKind::Delete, &*face.transport));
    }

    /// Tells the link listeners that `face`'s links are gone: its links reserved for
    /// priorities, then its main link (called with the state locked).
    fn tell_links_gone(&self, face: &Face) {
        for link in face.priority_links.iter().filter(|l| l.told) {
            self.link_listeners.tell(&LinkEvent {
                kind: SampleKind::Delete,
                ..link.event.clone()
            });
        }
        self.link_listeners
            .tell(&LinkEvent::of(SampleKind::Delete, &*face.transport));
    }

    /// Records a link reserved for priorities about to start beside `main` (on the face
    /// whose transport `main` is), not yet told.
    fn record_priority_link(&self, main: &Arc<Transport>, id: usize, event: LinkEvent) {
        let mut st = self.lock();
        if let Some(face) = face_of_main(&mut st, main) {
            face.priority_links.push(AttachedLink {
                id,
                event,
                told: false,
            });
        }
    }

    /// Tells the listeners of a link reserved for priorities once it is `kept` (unless it
    /// ended already); forgets it otherwise.
    fn confirm_priority_link(&self, main: &Arc<Transport>, id: usize, kept: bool) {
        let mut st = self.lock();
        let Some((face, i)) = attached_link(&mut st, main, id) else {
            return;
        };
        if kept {
            let link = &mut face.priority_links[i];
            link.told = true;
            self.link_listeners.tell(&link.event);
        } else {
            face.priority_links.swap_remove(i);
        }
    }

    /// A link reserved for priorities beside `main` ended: forgotten, and its listeners
    /// told if they were told it was added.
    pub(crate) fn priority_link_closed(&self, main: &Arc<Transport>, link: &Arc<Transport>) {
        let mut st = self.lock();
        let Some((face, i)) = attached_link(&mut st, main, link_id(link)) else {
            return;
        };
        let gone = face.priority_links.remove(i);
        if gone.told {
            self.link_listeners.tell(&LinkEvent {
                kind: SampleKind::Delete,
                ..gone.event
            });
        }
    }

    /// Forgets a closed transport and what its node declared.
    pub(crate) fn remove_face(self: &Arc<Self>, t: &dyn FaceTransport, caller: &Caller) {
        let mut st = self.lock();
        let was_open = st
            .faces
            .get(&t.peer_zid())
            .is_some_and(|f| super::face_transport::same(&*f.transport, t));
        self.routes_changed();
        let mut tokens = std::collections::HashMap::new();
        let mut entities = Vec::new();
        let mut reconnect = None;
        let mut lost = Vec::new();
        if was_open {
            if let Some(mut face) = st.faces.remove(&t.peer_zid()) {
                self.tell_face_gone(&face);
                entities = face.entities();
                reconnect = face.reconnect.take();
                let zid = t.peer_zid();
                let declared = &mut st.declared;
                declared.subscribers.forget_face(zid, &mut face.subscribers);
                declared.queryables.forget_face(zid, &mut face.queryables);
                tokens = face.tokens.by_id.clone();
                declared.tokens.forget_face(zid, &mut face.tokens);
            }
            if self.is_router() && t.peer_whatami() == WhatAmI::Router {
                let mut mesh = self.mesh();
                let before = mesh.routers();
                mesh.link_down(t.peer_zid());
                lost = before.into_iter().filter(|z| !mesh.reaches(*z)).collect();
            }
        }
        drop(st);
        if was_open {
            self.gossip_link_down(t.peer_zid(), t.peer_whatami(), caller);
        }
        // Logged for the sessions that were open (the session's own close took them out
        // of the faces already), not for those refused or replaced.
        if was_open || self.is_closing() {
            let reason = t
                .transport()
                .and_then(|t| t.end_reason().map(str::to_owned))
                .unwrap_or_else(|| "unknown".to_owned());
            tracing::info!(
                peer = %t.peer_zid(),
                whatami = t.peer_whatami().as_str(),
                link = t.describe(),
                reason = reason.as_str(),
                "session closed"
            );
        }
        if let Some(alternatives) = reconnect.filter(|_| !self.is_closing()) {
            spawn_connector(self, alternatives);
        }
        self.forget_face_in_gets(t.peer_zid(), caller);
        self.forget_face_tokens(tokens);
        if self.is_router() {
            self.router_forget_face(t.peer_zid(), t.peer_whatami(), entities, caller);
            if t.peer_whatami() == WhatAmI::Router {
                self.forget_origins(&lost, caller);
                self.update_tree(caller);
                self.send_link_state(caller);
            }
        }
        self.changed.notify_all();
    }
}

/// Which transport `t` is, while it lives.
fn link_id(t: &Arc<Transport>) -> usize {
    Arc::as_ptr(t) as usize
}

/// The face whose transport is `main`, and where its attached link `id` is in
/// `priority_links`.
fn attached_link<'s>(
    st: &'s mut super::State,
    main: &Arc<Transport>,
    id: usize,
) -> Option<(&'s mut Face, usize)> {
    let face = face_of_main(st, main)?;
    let i = face.priority_links.iter().position(|l| l.id == id)?;
    Some((face, i))
}

/// The face whose transport is `main`.
fn face_of_main<'s>(st: &'s mut super::State, main: &Arc<Transport>) -> Option<&'s mut Face> {
    st.faces.get_mut(&main.peer_zid()).filter(|f| {
        f.transport
            .transport()
            .is_some_and(|t| Arc::ptr_eq(&t, main))
    })
}

/// Binds the listeners and starts the listener and connector threads.
pub(crate) fn start(inner: &Arc<Inner>) -> Result<(), OpenError> {
    let links = super::links::LinksLoop::get().map_err(|e| OpenError::Listen {
        endpoint: "(any)".into(),
        reason: format!("cannot start the links loop: {e}"),
    })?;
    let _ = inner.links.set(links);
    for ep in &inner.config.listen {
        listen(inner, ep)?;
    }
    let scouting = inner.config.multicast_scouting || inner.config.scouting.gossip.enabled;
    if inner.config.listen.is_empty() && inner.config.mode == WhatAmI::Peer && scouting {
        listen_anywhere(inner);
    }
    for ep in inner.config.connect.clone() {
        if crate::link::multicast::is_multicast(&ep) {
            // Joining a group is the same from `listen` and `connect`.
            super::multicast::open(inner, &ep)?;
            continue;
        }
        spawn_connector(inner, Arc::new([ep]));
    }
    if !inner.scouted.is_empty() {
        spawn_connector(inner, inner.scouted.clone().into());
    }
    super::discovery::start(inner);
    Ok(())
}

/// Has the links loop stay connected to one of `alternatives` (the first that answers),
/// reconnecting when the link is lost.
fn spawn_connector(inner: &Arc<Inner>, alternatives: Arc<[Endpoint]>) {
    match inner.links.get() {
        Some(links) => links.connect(inner, alternatives),
        None => tracing::error!("no links loop to connect to {:?}", alternatives.first()),
    }
}

/// A peer that scouts (multicast or gossip) and was given nowhere to listen listens on an
/// ephemeral TCP port of every interface (as Zenoh peers do), so that the peers
/// discovering it can connect: IPv6 and IPv4 if the host has it, else IPv4 alone.
fn listen_anywhere(inner: &Arc<Inner>) {
    for candidate in ["tcp/[::]:0", "tcp/0.0.0.0:0"] {
        let ep: Endpoint = candidate.parse().expect("a valid endpoint");
        match listen(inner, &ep) {
            Ok(bound) => {
                tracing::debug!("peer listening on {bound} for the peers that discover it");
                return;
            }
            Err(e) => tracing::debug!("cannot listen on {candidate}: {e}"),
        }
    }
    tracing::warn!("a peer with no listen endpoint could not listen anywhere: discovered peers cannot connect to it");
}

/// Binds one listener and starts its thread; returns the endpoint actually bound.
pub(crate) fn listen(inner: &Arc<Inner>, ep: &Endpoint) -> Result<String, OpenError> {
    if crate::link::multicast::is_multicast(ep) {
        // A group is not a locator to give others (scouting's Hellos list `listening`).
        return super::multicast::open(inner, ep);
    }
    let listener =
        Listener::bind(ep, &inner.config.link_settings(ep)).map_err(|e| OpenError::Listen {
            endpoint: ep.to_string(),
            reason: e.to_string(),
        })?;
    let bound = listener.local_endpoint().unwrap_or_else(|_| ep.to_string());
    if let Ok(mut l) = inner.listening.lock() {
        l.push(bound.clone());
    }
    match inner.links.get() {
        Some(links) => links.listen(inner, listener),
        None => {
            return Err(OpenError::Listen {
                endpoint: ep.to_string(),
                reason: "no links loop".into(),
            })
        }
    }
    Ok(bound)
}

/// What access control knows of a transport: its link's protocol and interface, the
/// common name of the peer's TLS certificate, the user name the peer authenticated as
/// (on accepted links), and its peer's ZenohID.
fn access_subject(t: &Transport) -> crate::acl::SubjectQuery {
    let (protocol, local_ip) = t.link_identity();
    crate::acl::SubjectQuery {
        interface: local_ip.map(|ip| ip.to_canonical()).and_then(interface_of),
        cert_common_name: t.peer_cert_common_name().map(str::to_owned),
        username: t.authenticated_user().map(str::to_owned),
        link_protocol: Some(protocol.to_owned()),
        zid: Some(t.peer_zid()),
    }
}

/// The name of the network interface holding `ip`.
fn interface_of(ip: std::net::IpAddr) -> Option<String> {
    let list = nix::ifaddrs::getifaddrs().ok()?;
    for i in list {
        let Some(a) = i.address else { continue };
        let has = match ip {
            std::net::IpAddr::V4(v4) => a.as_sockaddr_in().is_some_and(|s| s.ip() == v4),
            std::net::IpAddr::V6(v6) => a.as_sockaddr_in6().is_some_and(|s| s.ip() == v6),
        };
        if has {
            return Some(i.interface_name);
        }
    }
    None
}
