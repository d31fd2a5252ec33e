//! "Why didn't X get Y": how a put on a key would be routed by this session, node by
//! node, each with the reason it would or would not receive it. Read from the same state
//! routing uses (declarations, the router's tree, access control, the link), without
//! sending anything.

use weft_keyexpr::KeyExpr;
use weft_proto::core::{WhatAmI, ZenohId};

use super::router::routes_between;
use super::{Inner, SessionError};
use crate::acl::{Flow, Message};
use crate::transport::DropReason;

/// How a put on a key would be routed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteExplanation {
    /// The key.
    pub key: String,
    /// The node the put would come from (`None`: published by this session).
    pub from: Option<ZenohId>,
    /// This session's own subscriptions it would be delivered to.
    pub local: Vec<String>,
    /// Every connected node, and what would happen to the put there.
    pub faces: Vec<FaceVerdict>,
}

/// Whether one connected node would receive the put, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaceVerdict {
    /// The node.
    pub zid: ZenohId,
    /// Its role.
    pub whatami: WhatAmI,
    /// Its link.
    pub link: String,
    /// Whether the put would be sent to it.
    pub receives: bool,
    /// Its subscriptions that match the key.
    pub matching: Vec<String>,
    /// Why it would (or would not) receive it.
    pub why: String,
    /// Messages to it dropped so far because it took too little (congestion).
    pub congestion_drops: u64,
}

impl Inner {
    /// How a put on `key`, coming from the connected node `from` (or published by this
    /// session), would be routed.
    pub(crate) fn explain_put(
        &self,
        key: &str,
        from: Option<ZenohId>,
    ) -> Result<RouteExplanation, SessionError> {
        let k = KeyExpr::new(key)?;
        let st = self.lock();
        let source_role = match from {
            Some(zid) => Some(
                st.faces
                    .get(&zid)
                    .map(|f| f.transport.peer_whatami())
                    .ok_or_else(|| SessionError::Unknown(format!("no connected node {zid}")))?,
            ),
            None => None,
        };
        let mut local: Vec<String> = st
            .own
            .subscribers
            .values()
            .filter(|s| s.key.as_key_expr().intersects(k))
            .map(|s| s.key.to_string())
            .collect();
        local.sort();
        let router = self.is_router();
        let mut faces: Vec<FaceVerdict> = st
            .faces
            .values()
            .map(|face| {
                let t = &face.transport;
                let mut matching: Vec<String> = face
                    .subscribers
                    .by_id
                    .values()
                    .chain(&face.subscribers.current)
                    .filter(|s| s.as_key_expr().intersects(k))
                    .map(ToString::to_string)
                    .collect();
                matching.sort();
                matching.dedup();
                let acl = t
                    .access_control()
                    .map(|a| a.decision(Flow::Egress, Message::Put, k));
                let (receives, why) = if Some(t.peer_zid()) == from {
                    (false, "it is where the put comes from".to_string())
                } else if t.is_closed() {
                    (false, "its link is down".to_string())
                } else if matching.is_empty() && (router || face.initial_declarations_done) {
                    (false, "no subscription of it matches the key".to_string())
                } else if router && !face.on_tree {
                    (
                        false,
                        "not on this router's tree of the mesh: another router forwards to it"
                            .to_string(),
                    )
                } else if source_role.is_some_and(|r| !routes_between(r, t.peer_whatami())) {
                    (
                        false,
                        "a router passes nothing between two peers: they connect to each \
                         other directly (gossip)"
                            .to_string(),
                    )
                } else if let Some(denied) =
                    acl.filter(|d| d.permission == crate::acl::Permission::Deny)
                {
                    (false, format!("access control: {denied}"))
                } else if matching.is_empty() {
                    (
                        true,
                        "its declarations are not all known yet: everything goes to it".to_string(),
                    )
                } else {
                    (true, "a subscription of it matches the key".to_string())
                };
                FaceVerdict {
                    zid: t.peer_zid(),
                    whatami: t.peer_whatami(),
                    link: t.describe().to_string(),
                    receives,
                    matching,
                    why,
                    congestion_drops: t
                        .handle()
                        .map_or(0, |h| h.stats().drops.get(DropReason::Congestion)),
                }
            })
            .collect();
        faces.sort_by_key(|f| (!f.receives, f.zid));
        Ok(RouteExplanation {
            key: key.to_string(),
            from,
            local,
            faces,
        })
    }
}
