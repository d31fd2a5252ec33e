//! `scouting.gossip.*`: what gossip scouting does, with Zenoh's keys and defaults.

use serde_json::Value;
use weft_proto::core::{WhatAmI, WhatAmIMatcher};

/// Whom a node connects to when it learns of several candidates
/// (`scouting.gossip.autoconnect_strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AutoconnectStrategy {
    /// Connect whatever the other node's id (both may connect; one session is kept).
    #[default]
    Always,
    /// Connect only to nodes with a smaller ZenohID: of two nodes using it, only one
    /// connects.
    GreaterZid,
}

/// Gossip scouting settings (`scouting.gossip.*`), Eclipse Zenoh 1.10.2's defaults when
/// absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GossipConfig {
    /// `scouting.gossip.enabled` (default true).
    pub enabled: bool,
    /// `scouting.gossip.multihop`: relay what is learnt of every node, not only of the
    /// nodes connected to this one (default false).
    pub multihop: bool,
    /// `scouting.gossip.target`: the roles this node gossips to; `None` for the mode's
    /// default (routers and peers; clients never gossip).
    pub target: Option<WhatAmIMatcher>,
    /// `scouting.gossip.autoconnect`: the roles to connect to when learnt of; `None` for
    /// the mode's default (routers connect to nothing, peers and clients to every role).
    pub autoconnect: Option<WhatAmIMatcher>,
    /// `scouting.gossip.autoconnect_strategy`, per role of the node learnt of (router,
    /// peer, client).
    pub strategy: [AutoconnectStrategy; 3],
}

impl Default for GossipConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            multihop: false,
            target: None,
            autoconnect: None,
            strategy: [AutoconnectStrategy::Always; 3],
        }
    }
}

impl GossipConfig {
    /// The roles a node of `mode` gossips to.
    pub fn target_for(&self, mode: WhatAmI) -> WhatAmIMatcher {
        match mode {
            WhatAmI::Client => WhatAmIMatcher(0),
            _ => self
                .target
                .unwrap_or(WhatAmIMatcher(WhatAmI::Router.bit() | WhatAmI::Peer.bit())),
        }
    }

    /// The roles a node of `mode` connects to when it learns of them.
    pub fn autoconnect_for(&self, mode: WhatAmI) -> WhatAmIMatcher {
        self.autoconnect.unwrap_or(match mode {
            WhatAmI::Router => WhatAmIMatcher(0),
            _ => {
                WhatAmIMatcher(WhatAmI::Router.bit() | WhatAmI::Peer.bit() | WhatAmI::Client.bit())
            }
        })
    }

    /// The strategy towards a node of role `to`.
    pub fn strategy_to(&self, to: WhatAmI) -> AutoconnectStrategy {
        self.strategy[role_index(to)]
    }
}

fn role_index(w: WhatAmI) -> usize {
    match w {
        WhatAmI::Router => 0,
        WhatAmI::Peer => 1,
        WhatAmI::Client => 2,
    }
}

/// Parses `scouting.gossip.autoconnect_strategy` (already resolved for the mode): one
/// strategy for every role, or `{ to_router, to_peer, to_client }`.
pub(super) fn parse_strategy(v: &Value) -> Option<[AutoconnectStrategy; 3]> {
    let one = |v: &Value| match v.as_str()? {
        "always" => Some(AutoconnectStrategy::Always),
        "greater-zid" => Some(AutoconnectStrategy::GreaterZid),
        _ => None,
    };
    match v {
        Value::String(_) => one(v).map(|s| [s; 3]),
        Value::Object(m) => {
            let mut out = [AutoconnectStrategy::Always; 3];
            for (k, v) in m {
                let role = match k.as_str() {
                    "to_router" => WhatAmI::Router,
                    "to_peer" => WhatAmI::Peer,
                    "to_client" => WhatAmI::Client,
                    _ => return None,
                };
                out[role_index(role)] = one(v)?;
            }
            Some(out)
        }
        _ => None,
    }
}
