//! Declared entities (subscribers, queryables, liveliness tokens): their declarations on
//! the wire, and one path to announce a declaration or its withdrawal to the faces that
//! must know it — for this session's own entities and for those a router declares on
//! behalf of its faces alike.

use std::sync::Arc;

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};
use weft_proto::core::{Mapping, WhatAmI, WireExpr, ZenohId};
use weft_proto::network::{
    Declaration, Declare, DeclareQueryable, DeclareSubscriber, DeclareToken, NetworkMessage,
    QueryableInfo, UndeclareQueryable, UndeclareSubscriber, UndeclareToken,
};

use super::aggregate::AggregateChange;
pub(crate) use super::declared::EntityKind;
use super::face_transport::send_control;
use super::face_transport::FaceTransport;
use super::{Inner, State};
use crate::transport::Caller;
use crate::SessionError;

/// The declaration of entity `id` of `kind` on `key`: answering interest `interest` if
/// any; a queryable with `complete` and `distance` (0: this node's own, 1: a router's on
/// behalf of a face).
pub(crate) fn declare_msg(
    kind: EntityKind,
    id: u32,
    key: &str,
    queryable: QueryableInfo,
    interest: Option<u32>,
) -> NetworkMessage<'_> {
    let wire_expr = WireExpr::key(key);
    let body = match kind {
        EntityKind::Subscriber => Declaration::Subscriber(DeclareSubscriber {
            id,
            wire_expr,
            unknown: Vec::new(),
        }),
        EntityKind::Queryable => Declaration::Queryable(DeclareQueryable {
            id,
            wire_expr,
            info: queryable,
            unknown: Vec::new(),
        }),
        EntityKind::Token => Declaration::Token(DeclareToken {
            id,
            wire_expr,
            unknown: Vec::new(),
        }),
    };
    NetworkMessage::Declare(Declare::new(interest, body))
}

/// The declaration of this node's own entity (a queryable at distance 0).
pub(crate) fn own_declaration(
    kind: EntityKind,
    id: u32,
    key: &str,
    complete: bool,
    interest: Option<u32>,
) -> NetworkMessage<'_> {
    let queryable = QueryableInfo {
        complete,
        distance: 0,
    };
    declare_msg(kind, id, key, queryable, interest)
}

/// The withdrawal of entity `id` of `kind` (by id; the empty wire expression Zenoh sends).
pub(crate) fn undeclare_msg(kind: EntityKind, id: u32) -> NetworkMessage<'static> {
    let wire_expr = Some(WireExpr {
        scope: 0,
        suffix: "",
        mapping: Mapping::Receiver,
    });
    let body = match kind {
        EntityKind::Subscriber => Declaration::UndeclareSubscriber(UndeclareSubscriber {
            id,
            wire_expr,
            unknown: Vec::new(),
        }),
        EntityKind::Queryable => Declaration::UndeclareQueryable(UndeclareQueryable {
            id,
            wire_expr,
            unknown: Vec::new(),
        }),
        EntityKind::Token => Declaration::UndeclareToken(UndeclareToken {
            id,
            wire_expr,
            unknown: Vec::new(),
        }),
    };
    NetworkMessage::Declare(Declare::new(None, body))
}

/// `msg` (a declaration or an undeclaration) as a router forwards it to another router:
/// with the NodeId extension `node_id`, the router it comes from as this router's
/// link-state lists name it (0, this router, is not written), and for an undeclaration
/// the key `key` too (a Zenoh router finds a router's entity by its key, not its id).
pub(crate) fn to_router<'a>(
    msg: &NetworkMessage<'a>,
    node_id: u16,
    key: &'a str,
) -> NetworkMessage<'a> {
    let mut msg = msg.clone();
    if let NetworkMessage::Declare(d) = &mut msg {
        d.node_id = node_id;
        let we = match &mut d.body {
            Declaration::UndeclareSubscriber(u) => Some(&mut u.wire_expr),
            Declaration::UndeclareQueryable(u) => Some(&mut u.wire_expr),
            Declaration::UndeclareToken(u) => Some(&mut u.wire_expr),
            _ => None,
        };
        if let Some(we) = we {
            *we = Some(WireExpr::key(key));
        }
    }
    msg
}

/// Who must hear of a declaration or its withdrawal: the faces to send it to, and the
/// aggregated declarations it changes. Found under the session lock, sent after it.
pub(crate) struct Announcement {
    targets: Vec<Arc<dyn FaceTransport>>,
    aggregates: Vec<AggregateChange>,
}

impl Announcement {
    /// Keeps the targets whose role `keep` accepts.
    pub(crate) fn only_to(mut self, keep: impl Fn(WhatAmI) -> bool) -> Self {
        self.targets.retain(|t| keep(t.peer_whatami()));
        self
    }

    /// Sends `msg` to every target, then the aggregate changes.
    pub(crate) fn send(self, msg: &NetworkMessage<'_>, caller: &Caller) {
        for t in &self.targets {
            send_control(&**t, msg, caller);
        }
        self.aggregates.iter().for_each(|a| a.send(caller));
    }

    /// As [`Announcement::send`], for what a router forwards: `to_routers` to the
    /// routers among the targets, `msg` to the others.
    pub(crate) fn send_split(
        self,
        msg: &NetworkMessage<'_>,
        to_routers: &NetworkMessage<'_>,
        caller: &Caller,
    ) {
        for t in &self.targets {
            let to_router = t.peer_whatami() == WhatAmI::Router;
            send_control(&**t, if to_router { to_routers } else { msg }, caller);
        }
        self.aggregates.iter().for_each(|a| a.send(caller));
    }

    /// Sends the aggregate changes, then `msg` to every target (a withdrawal of this
    /// node's own entity: the aggregate stops covering it first).
    fn send_aggregates_first(self, msg: &NetworkMessage<'_>, caller: &Caller) {
        self.aggregates.iter().for_each(|a| a.send(caller));
        for t in &self.targets {
            send_control(&**t, msg, caller);
        }
    }
}

impl Inner {
    /// Who must hear that an entity of `kind` on `key` came or went (the faces whose
    /// interests cover it, or that hear of everything; `from`, the face it came from,
    /// excepted), with the aggregates it changes.
    pub(crate) fn announcement(
        &self,
        st: &mut State,
        kind: EntityKind,
        key: KeyExpr<'_>,
        from: Option<ZenohId>,
    ) -> Announcement {
        let mut targets = self.declaration_targets(st, kind.interest(), key);
        if let Some(from) = from {
            targets.retain(|t| t.peer_zid() != from);
        }
        Announcement {
            targets,
            aggregates: self.aggregate_updates(st, kind, key),
        }
    }
}

impl Inner {
    /// Declares one of this session's own entities: `store` keeps it under a new id, and
    /// the faces that must know are told (with the aggregates it changes). Subscribers
    /// change routes.
    pub(crate) fn declare_own(
        &self,
        kind: EntityKind,
        key: &OwnedKeyExpr,
        complete: bool,
        store: impl FnOnce(&mut State, u32),
        caller: &Caller,
    ) -> Result<u32, SessionError> {
        if self.is_closing() {
            return Err(SessionError::Closed);
        }
        let (id, announcement) = {
            let mut st = self.lock();
            if kind == EntityKind::Subscriber {
                self.routes_changed();
            }
            let id = Self::next_id(&mut st);
            store(&mut st, id);
            (
                id,
                self.announcement(&mut st, kind, key.as_key_expr(), None),
            )
        };
        announcement.send(
            &own_declaration(kind, id, key.as_str(), complete, None),
            caller,
        );
        Ok(id)
    }

    /// Declares one of this session's own entities that other nodes are not told of
    /// (origin `SessionLocal`): `store` keeps it under a new id. Routes change.
    pub(crate) fn declare_local_only(
        &self,
        store: impl FnOnce(&mut State, u32),
    ) -> Result<u32, SessionError> {
        if self.is_closing() {
            return Err(SessionError::Closed);
        }
        let mut st = self.lock();
        self.routes_changed();
        let id = Self::next_id(&mut st);
        store(&mut st, id);
        Ok(id)
    }

    /// Withdraws an entity declared by [`Inner::declare_local_only`]: `take` removes it
    /// and says whether it was one. Routes change if it was.
    pub(crate) fn undeclare_local_only(&self, take: impl FnOnce(&mut State) -> bool) -> bool {
        let mut st = self.lock();
        let taken = take(&mut st);
        if taken {
            self.routes_changed();
        }
        taken
    }

    /// Withdraws this session's own entity `id`: `take` removes it and gives its key
    /// (`None`: there was none, nothing is sent), and the faces that knew it are told.
    pub(crate) fn undeclare_own(
        &self,
        kind: EntityKind,
        id: u32,
        take: impl FnOnce(&mut State) -> Option<OwnedKeyExpr>,
        caller: &Caller,
    ) -> Option<OwnedKeyExpr> {
        let (key, announcement) = {
            let mut st = self.lock();
            let key = take(&mut st)?;
            if kind == EntityKind::Subscriber {
                self.routes_changed();
            }
            let announcement = self.announcement(&mut st, kind, key.as_key_expr(), None);
            (key, announcement)
        };
        announcement.send_aggregates_first(&undeclare_msg(kind, id), caller);
        Some(key)
    }
}
