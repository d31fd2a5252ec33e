//! A face: what the session knows about one connected node.
//!
//! Per face: the key-expression ids each side declared (the two mapping tables of the
//! protocol), the subscribers it declared to us, the state of the interests we sent it,
//! and the interests it sent us (to keep it informed of our future declarations).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};
use weft_proto::core::{Mapping, WireExpr, ZenohId};
use weft_proto::network::{InterestMode, InterestOptions};

use super::aggregate::Aggregate;
use super::declared::FaceDeclarations;
use super::entity::EntityKind;
use super::face_transport::FaceTransport;

/// An interest a peer sent us, kept while it asks for future declarations.
#[derive(Debug, Clone)]
pub(crate) struct PeerInterest {
    pub(crate) options: InterestOptions,
    pub(crate) key: Option<OwnedKeyExpr>,
    /// Set when the node asked for aggregated declarations (see `aggregate`).
    pub(crate) aggregate: Option<Aggregate>,
    /// Router mode, for an interest in subscribers (a publisher's): the data the node
    /// published on keys it matches.
    pub(crate) published: std::sync::Arc<super::declared::Traffic>,
}

impl PeerInterest {
    /// Whether a declaration of kind `kind` on `key` is to be sent as it is for this
    /// interest (an aggregated one is told of the aggregate instead).
    pub(crate) fn wants(&self, kind: InterestOptions, key: KeyExpr<'_>) -> bool {
        self.options.contains(kind)
            && !(self.aggregate.is_some() && Aggregate::covers(kind))
            && self
                .key
                .as_ref()
                .is_none_or(|k| k.as_key_expr().intersects(key))
    }
}

/// One connected node.
pub(crate) struct Face {
    pub(crate) transport: Arc<dyn FaceTransport>,
    /// Key-expression ids the node declared to us (resolved to full strings).
    pub(crate) remote_exprs: HashMap<u16, String>,
    /// Subscribers the node declared (changed only through the session's index of
    /// them, [`DeclaredIndex`](super::declared::DeclaredIndex)).
    pub(crate) subscribers: FaceDeclarations,
    /// Queryables the node declared (as `subscribers`).
    pub(crate) queryables: FaceDeclarations,
    /// The queryables among `queryables` that declared themselves complete.
    pub(crate) complete_queryables: HashSet<u32>,
    /// Liveliness tokens the node declared (as `subscribers`).
    pub(crate) tokens: FaceDeclarations,
    /// A router's declarations made on behalf of another router (the one the NodeId
    /// extension named): that router, by (kind, entity id). Those not listed are the
    /// node's own.
    pub(crate) origins: HashMap<(EntityKind, u32), ZenohId>,
    /// Whether the node finished its initial declarations (DeclareFinal with interest 0
    /// between peers).
    pub(crate) initial_declarations_done: bool,
    /// Whether the node sent its first gossip list (a router sends one on every new
    /// link to a peer, before its declarations).
    pub(crate) gossip_heard: bool,
    /// Our subscriber interests on this face: id -> (key, finalized).
    pub(crate) our_interests: HashMap<u32, (OwnedKeyExpr, bool)>,
    /// Interests the node sent us, for future declarations.
    pub(crate) their_interests: HashMap<u32, PeerInterest>,
    /// Whether routed traffic (data, queries, the declarations it made) uses this face:
    /// false for a link between routers that is not on the mesh's spanning tree.
    pub(crate) on_tree: bool,
    /// Whether its link is reserved for some priorities: it stands in for the node's main
    /// link, which replaces it when it comes.
    pub(crate) for_priorities: bool,
    /// Where to connect again when the face ends (set for a node this session connects
    /// to, on a `connect` endpoint or one found by scouting).
    pub(crate) reconnect: Option<Arc<[crate::endpoint::Endpoint]>>,
    /// The links reserved for some priorities attached beside the main one, as link
    /// events listeners were (or are about to be) told of them.
    pub(crate) priority_links: Vec<AttachedLink>,
    /// When it became a face of this session.
    pub(crate) attached_at: Instant,
}

/// A link reserved for some priorities, attached to a face's main transport.
pub(crate) struct AttachedLink {
    /// Which transport it is (its address; it lives while attached).
    pub(crate) id: usize,
    /// Its event of kind `Put`.
    pub(crate) event: super::network_events::LinkEvent,
    /// Whether listeners were told it was added (it is being attached until then).
    pub(crate) told: bool,
}

impl Face {
    pub(crate) fn new(transport: Arc<dyn FaceTransport>) -> Self {
        Self {
            transport,
            remote_exprs: HashMap::new(),
            subscribers: FaceDeclarations::default(),
            queryables: FaceDeclarations::default(),
            complete_queryables: HashSet::new(),
            tokens: FaceDeclarations::default(),
            origins: HashMap::new(),
            initial_declarations_done: false,
            gossip_heard: false,
            our_interests: HashMap::new(),
            their_interests: HashMap::new(),
            on_tree: true,
            for_priorities: false,
            reconnect: None,
            priority_links: Vec::new(),
            attached_at: Instant::now(),
        }
    }

    /// The entities the node declared with an id: (kind, id, key, complete).
    pub(crate) fn entities(&self) -> Vec<(EntityKind, u32, OwnedKeyExpr, bool)> {
        let subscribers = self
            .subscribers
            .by_id
            .iter()
            .map(|(i, k)| (EntityKind::Subscriber, *i, k.clone(), false));
        let queryables = self.queryables.by_id.iter().map(|(i, k)| {
            let complete = self.complete_queryables.contains(i);
            (EntityKind::Queryable, *i, k.clone(), complete)
        });
        let tokens = self
            .tokens
            .by_id
            .iter()
            .map(|(i, k)| (EntityKind::Token, *i, k.clone(), false));
        subscribers.chain(queryables).chain(tokens).collect()
    }

    /// Records which router the entity `(kind, id)` comes from (`None`: the node itself).
    pub(crate) fn set_origin(&mut self, kind: EntityKind, id: u32, origin: Option<ZenohId>) {
        match origin {
            Some(o) => self.origins.insert((kind, id), o),
            None => self.origins.remove(&(kind, id)),
        };
    }

    /// The router the entity `(kind, id)` comes from: the one it was declared for, else
    /// the node itself.
    pub(crate) fn origin_of(&self, kind: EntityKind, id: u32) -> ZenohId {
        self.origins
            .get(&(kind, id))
            .copied()
            .unwrap_or_else(|| self.transport.peer_zid())
    }

    /// The full key of a wire expression received from this node, if it resolves.
    pub(crate) fn resolve<'a>(&self, we: &WireExpr<'a>) -> Option<Cow<'a, str>> {
        if we.scope == 0 {
            return Some(Cow::Borrowed(we.suffix));
        }
        match we.mapping {
            Mapping::Sender => self
                .remote_exprs
                .get(&we.scope)
                .map(|prefix| Cow::Owned(format!("{prefix}{}", we.suffix))),
            // weft declares no key-expression ids: it always sends full keys.
            Mapping::Receiver => None,
        }
    }

    /// Whether data on `key` must be sent to this node.
    ///
    /// Yes if it declared a matching subscriber; otherwise only while we cannot know:
    /// before a peer's initial declarations are complete, or, towards a router, while no
    /// finalized subscriber interest of ours covers the key.
    /// `has_subscriber` tells whether it declared a subscriber intersecting the key.
    pub(crate) fn wants_data(
        &self,
        key: KeyExpr<'_>,
        has_subscriber: bool,
        is_peer_link: bool,
    ) -> bool {
        if !self.on_tree {
            return false;
        }
        if has_subscriber {
            return true;
        }
        if is_peer_link {
            !self.initial_declarations_done
        } else {
            !self
                .our_interests
                .values()
                .any(|(k, finalized)| *finalized && k.as_key_expr().includes(key))
        }
    }
}

/// The interest options and mode weft's publishers send.
pub(crate) const PUBLISHER_INTEREST: (InterestMode, InterestOptions) =
    (InterestMode::CurrentFuture, InterestOptions::SUBSCRIBERS);
