//! Connectors: staying connected to one of a list of endpoints (the first that answers).
//! An attempt tries the alternatives in order, each a handshake of the loop's; when all
//! fail, the next attempt comes after a pause doubling from [`BACKOFF_MIN`] to
//! [`BACKOFF_MAX`]. Once connected, the face reconnects when its transport ends (the
//! connector is then done), except for a link reserved for priorities, whose connector
//! waits for its end and connects it again. A node discovered by scouting or gossip is
//! connected to once ([`Connector::discovered`]): one round over its locators, after a
//! random pause; its connector ends with that round.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use weft_proto::core::WhatAmI;
use weft_proto::transport::CloseReason;

use super::{Command, Outcome, Purpose, Runner};
use crate::endpoint::Endpoint;
use crate::session::Inner;
use crate::transport::Caller;
use crate::transport::{Handshake, OpenError};

/// First and largest pause between two attempts.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(4);

/// One connector.
pub(super) struct Connector {
    /// The session it connects for.
    inner: Weak<Inner>,
    alternatives: Arc<[Endpoint]>,
    /// The alternative tried now.
    next: usize,
    /// The pause after the next failed attempt.
    backoff: Duration,
    /// When the next attempt starts, while it waits.
    retry_at: Option<Instant>,
    /// Its endpoints reserve links for priorities of a node also connected without.
    twin: bool,
    refusal_logged: bool,
    first_attempt: bool,
    /// A discovered node, connected to once: its ZenohID and who discovered it.
    discovered: Option<(weft_proto::core::ZenohId, &'static str)>,
}

impl Connector {
    pub(super) fn new(inner: &Arc<Inner>, alternatives: Arc<[Endpoint]>) -> Self {
        let twin = alternatives.iter().all(|ep| is_priority_twin(inner, ep));
        Self {
            inner: Arc::downgrade(inner),
            alternatives,
            next: 0,
            backoff: BACKOFF_MIN,
            retry_at: None,
            twin,
            refusal_logged: false,
            first_attempt: true,
            discovered: None,
        }
    }

    /// A connector that connects once to `zid`, discovered by `how` at `alternatives`,
    /// starting at `start`.
    pub(super) fn discovered(
        inner: &Arc<Inner>,
        zid: weft_proto::core::ZenohId,
        alternatives: Arc<[Endpoint]>,
        how: &'static str,
        start: Instant,
    ) -> Self {
        let mut c = Self::new(inner, alternatives);
        c.twin = false;
        c.discovered = Some((zid, how));
        c.retry_at = Some(start);
        c
    }

    /// The session it connects for.
    pub(super) const fn inner(&self) -> &Weak<Inner> {
        &self.inner
    }

    /// When the next attempt starts, while the connector waits for it.
    pub(super) const fn retry_at(&self) -> Option<Instant> {
        self.retry_at
    }

    /// Waits before the next attempt, each pause twice the last, up to the largest.
    fn pause(&mut self) {
        self.next = 0;
        self.retry_at = Some(Instant::now() + self.backoff);
        self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
    }
}

impl Runner {
    /// Starts the connector `id`'s next attempt, on its current alternative.
    pub(super) fn attempt(&mut self, id: usize, caller: &Caller) {
        let Some(inner) = self.connectors.get(&id).and_then(|c| c.inner.upgrade()) else {
            self.connectors.remove(&id);
            return;
        };
        let inner = &inner;
        loop {
            let Some(c) = self.connectors.get_mut(&id) else {
                return;
            };
            c.retry_at = None;
            let ep = c.alternatives[c.next].clone();
            let token = self.token();
            let settings = inner.config.link_settings(&ep);
            let started = Handshake::open(
                &ep,
                &settings,
                inner.local_params_for(ep.priorities()),
                inner.config.usrpwd.as_ref(),
                inner.config.open_timeout,
                inner.handler(),
                self.notifier(token),
            );
            match started {
                Ok(h) => {
                    self.add_handshake(
                        inner,
                        token,
                        h,
                        Purpose::Connector(id),
                        ep.to_string(),
                        caller,
                    );
                    return;
                }
                Err(e) => {
                    if !self.alternative_failed(inner, id, e) {
                        return;
                    }
                }
            }
        }
    }

    /// An alternative of connector `id` failed: true when the next is to be tried now.
    fn alternative_failed(&mut self, inner: &Arc<Inner>, id: usize, e: OpenError) -> bool {
        let Some(c) = self.connectors.get_mut(&id) else {
            return false;
        };
        // A discovered endpoint is what a peer advertised: escaped.
        let ep = c.alternatives[c.next].to_string();
        let ep = crate::printable(&ep);
        tracing::debug!("cannot open a session to {ep}: {e}");
        if c.next + 1 < c.alternatives.len() {
            c.next += 1;
            return true;
        }
        if let Some((zid, how)) = c.discovered {
            tracing::debug!("{how}: cannot connect to {zid}: {e}");
            self.connectors.remove(&id);
            super::super::discovery::no_longer_connecting(inner, zid);
            return false;
        }
        if c.first_attempt {
            let reason = format!("{}: {e}", c.alternatives[0]);
            if let Ok(mut failed) = inner.first_attempts_failed.lock() {
                failed.push(reason);
            }
            inner.changed.notify_all();
            c.first_attempt = false;
        }
        if c.twin && is_max_links(&e) {
            // Zenoh accepts a second link only with its multilink extension.
            if !c.refusal_logged {
                tracing::info!(
                    "{}: the node refuses a second link; all priorities share the main one",
                    c.alternatives[0]
                );
                c.refusal_logged = true;
            }
            c.backoff = BACKOFF_MAX;
        }
        c.pause();
        false
    }

    /// A handshake of connector `id` ended.
    pub(super) fn attempt_done(
        &mut self,
        inner: &Arc<Inner>,
        id: usize,
        outcome: Outcome,
        caller: &Caller,
    ) {
        let pending = match outcome {
            Ok(p) => p,
            Err(e) => {
                if self.alternative_failed(inner, id, e) {
                    self.attempt(id, caller);
                }
                return;
            }
        };
        let Some(c) = self.connectors.get_mut(&id) else {
            pending.transport().close(CloseReason::GENERIC, caller);
            return;
        };
        c.first_attempt = false;
        if let Some((zid, how)) = c.discovered {
            self.connectors.remove(&id);
            super::super::discovery::connected(inner, zid, how, pending, caller);
            return;
        }
        let t = pending.transport().clone();
        if c.twin && inner.main_transport(t.peer_zid()).is_none() {
            // The session this link goes beside is not up (yet, or any more).
            t.close(CloseReason::GENERIC, caller);
            c.pause();
            return;
        }
        c.backoff = BACKOFF_MIN;
        c.next = 0;
        let peer_is_client = t.peer_whatami() == WhatAmI::Client;
        let reserved = t.negotiated().link_priorities.is_some();
        let (twin, alternatives) = (c.twin, c.alternatives.clone());
        let kept = inner.adopt(pending, true, caller);
        if twin || reserved {
            // A link reserved for priorities is either beside the main one (no face), or
            // a face standing in for it that the main link replaces when it comes. Either
            // way the connector waits for its end, then opens it again (or tries again
            // later if it was refused): the face's own reconnection would not bring it
            // back beside the main link.
            if kept {
                let shared = self.shared.clone();
                t.when_ended(Box::new(move || {
                    if let Some(shared) = shared.upgrade() {
                        shared.send(Command::Ended(id));
                    }
                }));
            } else if let Some(c) = self.connectors.get_mut(&id) {
                c.pause();
            }
            return;
        }
        if (peer_is_client && kept) || inner.reconnect_when_gone(t.peer_zid(), &alternatives) {
            // The face of this node (this transport, or the one the node opened to us
            // first) reconnects when it ends; this connector is not needed until then.
            self.connectors.remove(&id);
            return;
        }
        // Gone already: connect again.
        self.attempt(id, caller);
    }
}

/// Whether the peer refused the link because it has one with this node already.
fn is_max_links(e: &OpenError) -> bool {
    matches!(
        e,
        OpenError::Handshake(weft_transport::establish::EstablishError::Closed(r))
            if *r == CloseReason::MAX_LINKS
    )
}

/// Whether `ep` reserves its link for priorities while the same address is also
/// configured without: its link is then only ever attached beside that session.
fn is_priority_twin(inner: &super::super::Inner, ep: &Endpoint) -> bool {
    ep.priorities().is_some() && {
        let plain = ep.without_priorities();
        inner.config.connect.contains(&plain)
    }
}
