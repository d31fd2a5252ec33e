//! The session's side of gossip scouting (`scouting.gossip.*`): the link-state list a
//! new neighbour is sent, received lists relayed, and sessions opened to the nodes they
//! name. The decisions are [`super::gossip::Gossip`]'s.
//!
//! Routers gossip with their peers (between routers, the mesh's lists carry the graph);
//! peers gossip with routers and peers; clients do not gossip.

use std::sync::Arc;
use std::time::Duration;

use weft_proto::core::{NetworkQos, WhatAmI, ZenohId};
use weft_proto::ext::ExtBody;
use weft_proto::network::linkstate::decode_list;
use weft_proto::network::{NetworkMessage, NetworkOam};

use super::face_transport::send_control;
use super::face_transport::FaceTransport;
use super::gossip::{Entry, Gossip};
use super::Inner;
use crate::endpoint::Endpoint;
use crate::transport::Caller;

/// The longest pause before connecting to a node named by gossip (as Eclipse Zenoh's
/// routers pause): when two peers are told of each other at once, one connection
/// usually comes before the other tries.
pub(super) const CONNECT_JITTER: Duration = Duration::from_millis(100);

impl Inner {
    /// Whether this session gossips with a node of role `whatami`.
    pub(crate) fn gossips_with(&self, whatami: WhatAmI) -> bool {
        !matches!(
            (self.config.mode, whatami),
            (WhatAmI::Client, _) | (_, WhatAmI::Client) | (WhatAmI::Router, WhatAmI::Router)
        )
    }

    /// Where this node can be reached: its listeners, unspecified addresses replaced by
    /// the addresses of the machine's interfaces.
    pub(super) fn own_locators(&self) -> Vec<String> {
        let listening = self.listening.lock().map(|l| l.clone()).unwrap_or_default();
        let unspecified = listening
            .iter()
            .any(|l| l.contains("/0.0.0.0:") || l.contains("/[::]:"));
        let interfaces = if unspecified {
            crate::scouting::socket::interface_addresses()
        } else {
            Vec::new()
        };
        crate::scouting::locators::expand(&listening, None, &interfaces)
    }

    /// A face of a role this session gossips with came up: it is told where this node
    /// and the neighbours heard from can be reached.
    pub(crate) fn gossip_link_up(&self, t: &dyn FaceTransport, caller: &Caller) {
        if !self.gossips_with(t.peer_whatami()) {
            return;
        }
        let locators = self.own_locators();
        let (body, news) = {
            let mut gossip = self.gossip();
            let list = gossip.link_up(t.peer_zid(), t.peer_whatami(), &locators);
            let news = gossip.own_news(Some(t.peer_zid()), &locators);
            (
                list.map(|list| gossip.encode(&list)),
                encode_news(&mut gossip, news),
            )
        };
        let news = self.to_faces(news);
        if let Some(body) = body {
            send_gossip(t, body, caller);
        }
        for (to, body) in news {
            send_gossip(&*to, Ok(body), caller);
        }
    }

    /// The face of `zid` went away: with `multihop`, the other neighbours are told.
    pub(crate) fn gossip_link_down(&self, zid: ZenohId, whatami: WhatAmI, caller: &Caller) {
        if !self.gossips_with(whatami) {
            return;
        }
        if !self.config.scouting.gossip.multihop {
            // Single-hop lists do not carry the graph: nobody is told.
            self.gossip().link_down(zid);
            return;
        }
        let locators = self.own_locators();
        let news = {
            let mut gossip = self.gossip();
            gossip.link_down(zid);
            let news = gossip.own_news(None, &locators);
            encode_news(&mut gossip, news)
        };
        for (to, body) in self.to_faces(news) {
            send_gossip(&*to, Ok(body), caller);
        }
    }

    /// The encoded lists `news`, each with the face of the neighbour it is for (lists
    /// for nodes no longer connected are left out).
    fn to_faces(&self, news: Vec<(ZenohId, Vec<u8>)>) -> Vec<(Arc<dyn FaceTransport>, Vec<u8>)> {
        let st = self.lock();
        news.into_iter()
            .filter_map(|(zid, body)| Some((st.faces.get(&zid)?.transport.clone(), body)))
            .collect()
    }

    /// A link-state list from a node this session gossips with: news relayed, nodes
    /// connected to (their connections started before the face counts as heard from,
    /// which an opening session waits for).
    pub(crate) fn on_gossip(
        self: &Arc<Self>,
        from: &dyn FaceTransport,
        body: &[u8],
        caller: &Caller,
    ) {
        self.apply_gossip(from, body, caller);
        let mut st = self.lock();
        if let Some(face) = st.faces.get_mut(&from.peer_zid()) {
            face.gossip_heard = true;
        }
        drop(st);
        self.changed.notify_all();
    }

    fn apply_gossip(self: &Arc<Self>, from: &dyn FaceTransport, body: &[u8], caller: &Caller) {
        if !self.config.scouting.gossip.enabled || !self.gossips_with(from.peer_whatami()) {
            return;
        }
        let list = match decode_list(body) {
            Ok(list) => list,
            Err(e) => {
                tracing::debug!("ignored a gossip list from {}: {e}", from.peer_zid());
                return;
            }
        };
        tracing::debug!(
            "gossip from {}: {:?}",
            from.peer_zid(),
            list.iter()
                .map(|l| (l.zid, l.whatami, l.sn, l.locators.clone()))
                .collect::<Vec<_>>()
        );
        let (sends, connect) = {
            let mut gossip = self.gossip();
            let outcome = gossip.apply(from.peer_zid(), &list);
            (encode_news(&mut gossip, outcome.sends), outcome.connect)
        };
        for (t, body) in self.to_faces(sends) {
            send_gossip(&*t, Ok(body), caller);
        }
        for (zid, locators) in connect {
            let eps: Vec<Endpoint> = locators.iter().filter_map(|l| l.parse().ok()).collect();
            super::discovery::connect_discovered(self, zid, eps, "gossip", CONNECT_JITTER);
        }
    }
}

/// Each neighbour's list in `news`, encoded (a list that cannot be is left out, and
/// logged).
fn encode_news(gossip: &mut Gossip, news: Vec<(ZenohId, Vec<Entry>)>) -> Vec<(ZenohId, Vec<u8>)> {
    news.into_iter()
        .filter_map(|(zid, entries)| match gossip.encode(&entries) {
            Ok(body) => Some((zid, body)),
            Err(e) => {
                tracing::debug!("gossip list not sent to {zid}: {e}");
                None
            }
        })
        .collect()
}

/// Sends one link-state list (network OAM 1) to `t`.
fn send_gossip(
    t: &dyn FaceTransport,
    body: Result<Vec<u8>, weft_proto::error::EncodeError>,
    caller: &Caller,
) {
    let body = match body {
        Ok(body) => body,
        Err(e) => {
            tracing::debug!("gossip list not sent to {}: {e}", t.peer_zid());
            return;
        }
    };
    let msg = NetworkMessage::Oam(NetworkOam {
        id: NetworkOam::LINK_STATE,
        qos: NetworkQos::DECLARE,
        timestamp: None,
        unknown: Vec::new(),
        body: ExtBody::ZBuf(&body),
    });
    send_control(t, &msg, caller);
}
