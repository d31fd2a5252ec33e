//! The parts of the session's state, one job each: this session's own entities and what
//! a router keeps to route for others, behind the session's lock (`State` in `mod.rs`,
//! with the faces and what they declared, modules `face` and `declared`), and the queries
//! under way, behind a lock of their own. The route caches (`routes`) have their own lock
//! too.

use std::collections::HashMap;

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};
use weft_proto::core::ZenohId;
use weft_proto::network::QueryTarget;

use super::{entity, liveliness, query, router, LocalSubscriber};

/// This session's own entities, by id.
#[derive(Default)]
pub(crate) struct Own {
    /// Its subscribers, declared to other nodes.
    pub(crate) subscribers: HashMap<u32, LocalSubscriber>,
    /// Its subscribers to its own publications only (origin `SessionLocal`), which other
    /// nodes are not told of.
    pub(crate) local_only_subscribers: HashMap<u32, LocalSubscriber>,
    /// Its publishers' keys.
    pub(crate) publishers: HashMap<u32, OwnedKeyExpr>,
    /// Its queriers' keys (a client asks its router which queryables match them).
    pub(crate) queriers: HashMap<u32, OwnedKeyExpr>,
    /// Its queryables, declared to other nodes.
    pub(crate) queryables: HashMap<u32, query::LocalQueryable>,
    /// Its queryables for its own queries only (origin `SessionLocal`), which other nodes
    /// are not told of.
    pub(crate) local_only_queryables: HashMap<u32, query::LocalQueryable>,
    /// Its liveliness tokens' keys.
    pub(crate) tokens: HashMap<u32, OwnedKeyExpr>,
    /// Its liveliness subscribers.
    pub(crate) liveliness_subscribers: HashMap<u32, liveliness::LivelinessSubscriber>,
}

impl Own {
    /// Its queryables that answer a query on `key` with `target` from this session
    /// (`from_session`) or from another node.
    pub(crate) fn queryables_answering(
        &self,
        from_session: bool,
        key: KeyExpr<'_>,
        target: QueryTarget,
    ) -> Vec<(u32, query::QueryCallback)> {
        let of_session = from_session.then(|| self.queryables_of_session());
        let of_remote = (!from_session).then(|| {
            self.queryables
                .iter()
                .filter(|(_, q)| q.origin.includes_remote())
        });
        of_session
            .into_iter()
            .flatten()
            .chain(of_remote.into_iter().flatten())
            .filter(|(_, q)| q.key.as_key_expr().intersects(key))
            .filter(|(_, q)| target != QueryTarget::AllComplete || q.complete)
            .map(|(id, q)| (*id, q.callback.clone()))
            .collect()
    }

    /// Its subscribers that take its own publications (their origin includes the
    /// session).
    pub(crate) fn subscribers_of_session(&self) -> impl Iterator<Item = &LocalSubscriber> {
        self.subscribers
            .values()
            .filter(|s| s.origin.includes_session())
            .chain(self.local_only_subscribers.values())
    }

    /// Its queryables that answer its own queries (their origin includes the session),
    /// by id.
    pub(crate) fn queryables_of_session(
        &self,
    ) -> impl Iterator<Item = (&u32, &query::LocalQueryable)> {
        self.queryables
            .iter()
            .filter(|(_, q)| q.origin.includes_session())
            .chain(self.local_only_queryables.iter())
    }
}

/// Queries under way.
#[derive(Default)]
pub(crate) struct Queries {
    /// This session's gets, by request id.
    pub(crate) gets: HashMap<u32, query::PendingGet>,
    /// This session's liveliness gets, by interest id.
    pub(crate) liveliness_gets: HashMap<u32, liveliness::PendingLivelinessGet>,
    /// Router mode: the queries it forwarded, by (requester, request id).
    pub(crate) forwarded: HashMap<(ZenohId, u32), router::ForwardedQuery>,
    /// Router mode: how many faces a forwarded query still waits for, and since when it
    /// was received.
    pub(crate) fanout: HashMap<(ZenohId, u32), (usize, std::time::Instant)>,
}

/// What a router keeps to re-declare its faces' entities to others (the mesh's graph and
/// gossip have locks of their own: `Inner::mesh`, `Inner::gossip`).
pub(crate) struct Routing {
    /// The ids (and origin node ids) under which it re-declares its faces' entities, by
    /// (face, kind, face's id).
    pub(crate) routed_ids: HashMap<(ZenohId, entity::EntityKind, u32), router::Routed>,
    /// Some face may hold an interest with the `aggregate` option (set when one is
    /// recorded; cleared when none is found): while false, declarations skip the walk over
    /// every face's interests.
    pub(crate) maybe_aggregated: bool,
}
