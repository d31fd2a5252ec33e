//! Matching: whether any subscriber (for a publisher) or queryable (for a querier) matches
//! a key expression, as far as this session knows (its own entities and what the connected
//! nodes declared to it), and listeners told when that changes.
//!
//! A client learns of other nodes' subscribers through its publishers' interests, and of
//! their queryables through its queriers' interests (see [`Inner::declare_querier`]); a
//! peer or a router is told of them unsolicited.

use std::sync::{Arc, Weak};

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};
use weft_proto::core::{NetworkQos, WhatAmI, WireExpr};
use weft_proto::network::{Interest, InterestMode, InterestOptions, NetworkMessage, QueryTarget};

use super::face_transport::send_control;
use super::listener_thread::{self, Registration, Watch};
use super::{Inner, SessionError, State};
use crate::transport::Caller;

/// What a matching status is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchingKind {
    /// Subscribers on keys intersecting the key expression (a publisher's).
    Subscribers,
    /// Queryables a query on the key expression with this target would reach (a
    /// querier's).
    Queryables(QueryTarget),
}

/// Wakes the matching listeners whenever declarations, interests or faces change (the
/// route caches' epoch): they are served by the process's listener thread.
#[derive(Default)]
pub(crate) struct ChangeSignal;

impl ChangeSignal {
    /// Something changed: every matching listener looks again.
    pub(crate) fn notify(&self) {
        listener_thread::wake();
    }
}

/// Whether anything of `kind` matches `key` in `st`.
pub(crate) fn matches(st: &State, key: KeyExpr<'_>, kind: MatchingKind) -> bool {
    match kind {
        MatchingKind::Subscribers => {
            st.own
                .subscribers_of_session()
                .any(|s| s.key.as_key_expr().intersects(key))
                || !st.declared.subscribers.faces_intersecting(key).is_empty()
        }
        MatchingKind::Queryables(QueryTarget::AllComplete) => {
            st.own
                .queryables_of_session()
                .any(|(_, q)| q.complete && q.key.as_key_expr().includes(key))
                || st.faces.values().any(|f| {
                    f.queryables.by_id.iter().any(|(id, k)| {
                        f.complete_queryables.contains(id) && k.as_key_expr().includes(key)
                    })
                })
        }
        MatchingKind::Queryables(_) => {
            st.own
                .queryables_of_session()
                .any(|(_, q)| q.key.as_key_expr().intersects(key))
                || !st.declared.queryables.faces_intersecting(key).is_empty()
        }
    }
}

/// The interest a client's querier sends its router: the queryables on its key, now and
/// later.
pub(crate) fn querier_interest_msg(id: u32, key: &str) -> NetworkMessage<'_> {
    let mut i = Interest::new(
        id,
        InterestMode::CurrentFuture,
        InterestOptions::QUERYABLES,
        Some(WireExpr::key(key)),
    );
    i.qos = NetworkQos::DECLARE;
    NetworkMessage::Interest(i)
}

impl Inner {
    /// Whether anything of `kind` matches `key` now.
    pub(crate) fn matching(&self, key: &OwnedKeyExpr, kind: MatchingKind) -> bool {
        matches(&self.lock(), key.as_key_expr(), kind)
    }

    /// Keeps a querier of `key`; in client mode, asks the connected nodes which
    /// queryables match it. Returns its id.
    pub(crate) fn declare_querier(
        &self,
        key: OwnedKeyExpr,
        caller: &Caller,
    ) -> Result<u32, SessionError> {
        if self.is_closing() {
            return Err(SessionError::Closed);
        }
        let (id, targets) = {
            let mut st = self.lock();
            let id = Self::next_id(&mut st);
            st.own.queriers.insert(id, key.clone());
            let targets: Vec<_> = if self.config.mode == WhatAmI::Client {
                st.faces.values().map(|f| f.transport.clone()).collect()
            } else {
                Vec::new()
            };
            (id, targets)
        };
        let msg = querier_interest_msg(id, key.as_str());
        for t in targets {
            send_control(&*t, &msg, caller);
        }
        Ok(id)
    }

    /// Forgets the querier `id`, and withdraws its interest.
    pub(crate) fn undeclare_querier(&self, id: u32, caller: &Caller) {
        let targets: Vec<_> = {
            let mut st = self.lock();
            if st.own.queriers.remove(&id).is_none() || self.config.mode != WhatAmI::Client {
                return;
            }
            st.faces.values().map(|f| f.transport.clone()).collect()
        };
        let mut i = Interest::new(id, InterestMode::Final, InterestOptions::default(), None);
        i.qos = NetworkQos::DECLARE;
        let msg = NetworkMessage::Interest(i);
        for t in targets {
            send_control(&*t, &msg, caller);
        }
    }
}

/// Calls its callback with `true` when something of its kind starts matching its key
/// expression (at once if something does when it is declared), and `false` when nothing
/// does any more; stops when dropped or when its session closes. The callback runs on the
/// process's listener thread (see [`listener_thread`](super::listener_thread)), one
/// callback at a time.
pub struct MatchingListener {
    _registration: Registration,
}

impl MatchingListener {
    /// Starts watching `key` for `kind` on `inner`.
    pub(crate) fn start(
        inner: &Arc<Inner>,
        key: OwnedKeyExpr,
        kind: MatchingKind,
        callback: impl Fn(bool) + Send + 'static,
    ) -> Result<Self, SessionError> {
        if inner.is_closing() {
            return Err(SessionError::Closed);
        }
        let watch = MatchingWatch {
            inner: Arc::downgrade(inner),
            key,
            kind,
            told: false,
            callback: Box::new(callback),
        };
        Ok(Self {
            _registration: listener_thread::register(Box::new(watch))?,
        })
    }
}

/// A matching listener as the listener thread runs it: looks at the status after every
/// change, and calls its callback when it differs from the last one told (`false` at
/// first).
struct MatchingWatch {
    inner: Weak<Inner>,
    key: OwnedKeyExpr,
    kind: MatchingKind,
    told: bool,
    callback: Box<dyn Fn(bool) + Send>,
}

impl Watch for MatchingWatch {
    fn run(&mut self) -> bool {
        let Some(status) = self
            .inner
            .upgrade()
            .filter(|i| !i.is_closing())
            .map(|i| i.matching(&self.key, self.kind))
        else {
            return false;
        };
        if status != self.told {
            self.told = status;
            (self.callback)(status);
        }
        true
    }
}
