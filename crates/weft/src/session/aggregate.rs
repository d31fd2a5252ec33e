//! Aggregated interests: one declaration per interest instead of one per entity.
//!
//! A client whose interest carries the `aggregate` option (Zenoh-Pico's publishers and
//! queriers send it) is not told of each matching subscriber or queryable. While at least
//! one entity of that kind (other than its own) intersects the interest's key expression,
//! it is told of exactly one, declared on the interest's key expression itself, named as
//! the client named it (its own key-expression id, answered with the receiver's mapping).
//! Zenoh-Pico takes a declaration as an answer to an aggregated interest only when its
//! key equals the interest's key, so anything else leaves it believing nobody listens.
//!
//! The aggregate is declared in the answer to a Current interest (id 0) or, for a Future
//! one, under an id of its own when the first matching entity appears, and undeclared when
//! the last one goes. Tokens are never aggregated, and peers' aggregate options are
//! ignored, as Zenoh does.

use std::sync::Arc;

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};
use weft_proto::core::{Mapping, WhatAmI, WireExpr, ZenohId};
use weft_proto::network::{
    Declaration, Declare, DeclareQueryable, DeclareSubscriber, InterestOptions, NetworkMessage,
    QueryableInfo, UndeclareQueryable, UndeclareSubscriber,
};

use super::declared::EntityKind;
use super::face_transport::FaceTransport;
use super::{Inner, State};
use crate::transport::Caller;

/// The aggregation state of one interest of a client.
#[derive(Debug, Clone)]
pub(crate) struct Aggregate {
    /// The interest's key expression as the client named it: its own id (0 for none)...
    scope: u16,
    /// ...and the text after it.
    suffix: String,
    /// The id of the aggregate subscriber declared to the client, while one is.
    subscriber: Option<u32>,
    /// The id of the aggregate queryable declared to the client and whether it was
    /// declared complete, while one is.
    queryable: Option<(u32, bool)>,
}

impl Aggregate {
    /// The aggregation of an interest a face sent with `wire_expr`, if its options ask for
    /// one and it may have one (a client's, with a key expression, asking for subscribers
    /// or queryables).
    pub(crate) fn for_interest(
        from: WhatAmI,
        options: InterestOptions,
        wire_expr: Option<&WireExpr<'_>>,
    ) -> Option<Self> {
        let we = wire_expr?;
        let aggregated_kinds = options.contains(InterestOptions::SUBSCRIBERS)
            || options.contains(InterestOptions::QUERYABLES);
        (from == WhatAmI::Client
            && options.contains(InterestOptions::AGGREGATE)
            && aggregated_kinds)
            .then(|| Self {
                scope: we.scope,
                suffix: we.suffix.to_string(),
                subscriber: None,
                queryable: None,
            })
    }

    /// Whether declarations of `kind` are aggregated (tokens never are).
    pub(crate) fn covers(kind: InterestOptions) -> bool {
        kind == InterestOptions::SUBSCRIBERS || kind == InterestOptions::QUERYABLES
    }

    /// What the aggregate of `kind` needs now that matching entities are `matched`
    /// (`None`: none; else whether one is a complete queryable covering the key).
    fn step(&self, kind: EntityKind, matched: Option<bool>) -> Step {
        let declared = match kind {
            EntityKind::Subscriber => self.subscriber.map(|id| (id, false)),
            _ => self.queryable,
        };
        match (declared, matched) {
            (None, Some(complete)) => Step::Declare { id: None, complete },
            // A queryable that became complete (or stopped being) is declared again
            // under the same id, as a redeclaration.
            (Some((id, was)), Some(complete)) if was != complete => Step::Declare {
                id: Some(id),
                complete,
            },
            (Some((id, _)), None) => Step::Undeclare(id),
            _ => Step::Nothing,
        }
    }

    /// Records the aggregate of `kind` as declared under an id (and complete or not),
    /// or as not declared.
    pub(crate) fn record(&mut self, kind: EntityKind, declared: Option<(u32, bool)>) {
        match kind {
            EntityKind::Subscriber => self.subscriber = declared.map(|(id, _)| id),
            _ => self.queryable = declared,
        }
    }
}

/// What an aggregate needs after the entities it covers changed.
enum Step {
    Nothing,
    /// Declare it: under a new id, or again under its id.
    Declare {
        id: Option<u32>,
        complete: bool,
    },
    /// Withdraw it.
    Undeclare(u32),
}

/// A declaration or undeclaration of an aggregate, to send once the session lock is
/// released.
pub(crate) struct AggregateChange {
    transport: Arc<dyn FaceTransport>,
    kind: EntityKind,
    id: u32,
    /// `None` for an undeclaration.
    declared: Option<Declared>,
}

struct Declared {
    scope: u16,
    suffix: String,
    complete: bool,
    interest: Option<u32>,
}

impl AggregateChange {
    /// The declaration answering a Current interest: id 0 for a Current-only interest, the
    /// aggregate's own id otherwise.
    pub(crate) fn current(
        transport: Arc<dyn FaceTransport>,
        kind: EntityKind,
        id: u32,
        aggregate: &Aggregate,
        complete: bool,
        interest: u32,
    ) -> Self {
        Self {
            transport,
            kind,
            id,
            declared: Some(Declared {
                scope: aggregate.scope,
                suffix: aggregate.suffix.clone(),
                complete,
                interest: Some(interest),
            }),
        }
    }

    /// Sends it.
    pub(crate) fn send(&self, caller: &Caller) {
        super::face_transport::send_control(&*self.transport, &self.message(), caller);
    }

    fn message(&self) -> NetworkMessage<'_> {
        let body = match (&self.declared, self.kind) {
            (Some(d), EntityKind::Queryable) => Declaration::Queryable(DeclareQueryable {
                id: self.id,
                wire_expr: d.wire_expr(),
                info: QueryableInfo {
                    complete: d.complete,
                    distance: 1,
                },
                unknown: Vec::new(),
            }),
            (Some(d), _) => Declaration::Subscriber(DeclareSubscriber {
                id: self.id,
                wire_expr: d.wire_expr(),
                unknown: Vec::new(),
            }),
            (None, EntityKind::Queryable) => Declaration::UndeclareQueryable(UndeclareQueryable {
                id: self.id,
                wire_expr: None,
                unknown: Vec::new(),
            }),
            (None, _) => Declaration::UndeclareSubscriber(UndeclareSubscriber {
                id: self.id,
                wire_expr: None,
                unknown: Vec::new(),
            }),
        };
        let interest = self.declared.as_ref().and_then(|d| d.interest);
        NetworkMessage::Declare(Declare::new(interest, body))
    }
}

impl Declared {
    /// The interest's key expression as the client will recognise it: a scope is the
    /// client's own id, so the receiver's table from where we stand.
    fn wire_expr(&self) -> WireExpr<'_> {
        WireExpr {
            scope: self.scope,
            suffix: &self.suffix,
            mapping: if self.scope == 0 {
                Mapping::Sender
            } else {
                Mapping::Receiver
            },
        }
    }
}

impl Inner {
    /// Whether an entity of `kind` that `asker` did not declare intersects `key`: `None`
    /// if none does, else whether one of them is a complete queryable including `key`.
    /// A router counts its faces' entities beside its own.
    pub(crate) fn aggregate_match(
        &self,
        st: &State,
        kind: EntityKind,
        key: KeyExpr<'_>,
        asker: ZenohId,
    ) -> Option<bool> {
        // Stops at the first match for subscribers, at the first complete queryable
        // including `key` for queryables: the answer cannot change after that.
        let mut found = None;
        let mut decided = |entity: KeyExpr<'_>, complete: bool| {
            if entity.intersects(key) {
                let covers = complete && entity.includes(key);
                found = Some(found.unwrap_or(false) || covers);
            }
            found == Some(true) || (kind == EntityKind::Subscriber && found.is_some())
        };
        let local = match kind {
            EntityKind::Subscriber => st
                .own
                .subscribers
                .values()
                .any(|s| decided(s.key.as_key_expr(), false)),
            EntityKind::Queryable => st
                .own
                .queryables
                .values()
                .any(|q| decided(q.key.as_key_expr(), q.complete)),
            EntityKind::Token => return None,
        };
        if local || !self.is_router() {
            return found;
        }
        let faces = st.faces.iter().filter(|(z, f)| **z != asker && f.on_tree);
        for (_, face) in faces {
            let done =
                match kind {
                    EntityKind::Subscriber => face
                        .subscribers
                        .by_id
                        .values()
                        .any(|k| decided(k.as_key_expr(), false)),
                    EntityKind::Queryable => face.queryables.by_id.iter().any(|(e, k)| {
                        decided(k.as_key_expr(), face.complete_queryables.contains(e))
                    }),
                    EntityKind::Token => false,
                };
            if done {
                break;
            }
        }
        found
    }

    /// Brings every aggregated interest that an entity of `kind` on `changed` concerns up
    /// to date: declares the aggregates that now have a match, undeclares those that lost
    /// their last one. Returns what to send once the lock is released.
    pub(crate) fn aggregate_updates(
        &self,
        st: &mut State,
        kind: EntityKind,
        changed: KeyExpr<'_>,
    ) -> Vec<AggregateChange> {
        if kind == EntityKind::Token || !st.routing.maybe_aggregated {
            return Vec::new();
        }
        let wanted = match kind {
            EntityKind::Subscriber => InterestOptions::SUBSCRIBERS,
            _ => InterestOptions::QUERYABLES,
        };
        st.routing.maybe_aggregated = st
            .faces
            .values()
            .any(|f| f.their_interests.values().any(|i| i.aggregate.is_some()));
        // (face, interest id, its key) of every aggregated interest concerned.
        let concerned: Vec<(ZenohId, u32, OwnedKeyExpr)> = st
            .faces
            .iter()
            .flat_map(|(zid, face)| {
                face.their_interests.iter().filter_map(move |(id, i)| {
                    let key = i.key.as_ref()?;
                    (i.aggregate.is_some()
                        && i.options.contains(wanted)
                        && key.as_key_expr().intersects(changed))
                    .then(|| (*zid, *id, key.clone()))
                })
            })
            .collect();
        let mut changes = Vec::new();
        for (zid, interest, key) in concerned {
            let matched = self.aggregate_match(st, kind, key.as_key_expr(), zid);
            let step = st
                .faces
                .get(&zid)
                .and_then(|f| f.their_interests.get(&interest))
                .and_then(|i| i.aggregate.as_ref())
                .map_or(Step::Nothing, |a| a.step(kind, matched));
            let (id, declared) = match step {
                Step::Nothing => continue,
                Step::Declare { id, complete } => {
                    (id.unwrap_or_else(|| Self::next_id(st)), Some(complete))
                }
                Step::Undeclare(id) => (id, None),
            };
            let Some(face) = st.faces.get_mut(&zid) else {
                continue;
            };
            let transport = face.transport.clone();
            let Some(agg) = face
                .their_interests
                .get_mut(&interest)
                .and_then(|i| i.aggregate.as_mut())
            else {
                continue;
            };
            agg.record(kind, declared.map(|complete| (id, complete)));
            changes.push(AggregateChange {
                transport,
                kind,
                id,
                declared: declared.map(|complete| Declared {
                    scope: agg.scope,
                    suffix: agg.suffix.clone(),
                    complete,
                    interest: None,
                }),
            });
        }
        changes
    }
}
