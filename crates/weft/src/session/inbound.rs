//! The routes of the key a reader thread last received data on.
//!
//! The messages of a data stream mostly share one key. Looking its routes up means taking
//! the session lock, finding the face, resolving the key and hashing it into two caches,
//! for every message. Instead, each reader thread keeps what it found for the last wire
//! expression it saw and uses it again while the session's route epoch is unchanged:
//! every change of faces, declarations (key-expression ids included) or the mesh bumps
//! that epoch, so a kept route is never older than the last change.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use weft_keyexpr::KeyExpr;
use weft_proto::core::{Mapping, WireExpr};
use weft_proto::network::InterestOptions;

use super::declared::Traffic;
use super::face_transport::FaceTransport;
use super::{Callback, Inner};
use crate::api::SharedKey;

/// Where data received on one key goes.
#[derive(Clone)]
pub(crate) struct InboundRoutes {
    /// The key, resolved against the sending face's key-expression ids.
    pub(crate) key: SharedKey,
    /// This session's subscribers matching the key (`None` when the session has none).
    pub(crate) local: Option<Arc<[Callback]>>,
    /// Router mode: the faces data on the key is forwarded to (the source included).
    pub(crate) forward: Option<super::routes::ForwardRoute>,
}

/// What a reader thread keeps: the routes, and what they are valid for.
struct Kept {
    session: Weak<Inner>,
    /// Held weakly: the transport is not kept alive, its address is not reused.
    transport: Weak<dyn FaceTransport>,
    epoch: u64,
    scope: u16,
    mapping: Mapping,
    suffix: String,
    routes: InboundRoutes,
    /// Router mode: the counters of the sending node's publisher interests matching the
    /// key (what it published, per declaration).
    published_by: PublishedBy,
}

/// The counters of a node's publisher interests matching a key, one per key expression.
type PublishedBy = Box<[Arc<Traffic>]>;

impl Kept {
    fn is_for(
        &self,
        inner: &Arc<Inner>,
        t: &dyn FaceTransport,
        we: &WireExpr<'_>,
        epoch: u64,
    ) -> bool {
        self.epoch == epoch
            && self.scope == we.scope
            && self.mapping == we.mapping
            && same_text(&self.suffix, we.suffix)
            && std::ptr::addr_eq(self.transport.as_ptr(), t as *const dyn FaceTransport)
            && std::ptr::eq(self.session.as_ptr(), Arc::as_ptr(inner))
    }
}

/// `a == b`, without calling `memcmp` for empty texts: an empty `String` points at a
/// dangling address, and the vector `memcmp` of some CPUs reads it with an all-zero mask,
/// which costs a slow microcode assist on every call (most of the router's time, with
/// Zenoh clients, whose data names a declared key with an empty suffix).
fn same_text(a: &str, b: &str) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}

thread_local! {
    static LAST: RefCell<Option<Kept>> = const { RefCell::new(None) };
}

impl Inner {
    /// The routes of data received from `t` on `we`: those this thread kept for the same
    /// face and wire expression while no route changed, or looked up (and kept). `None`
    /// when the face is gone or the key is unknown or invalid: the data is dropped.
    pub(crate) fn inbound_routes(
        self: &Arc<Self>,
        t: &dyn FaceTransport,
        we: &WireExpr<'_>,
    ) -> Option<InboundRoutes> {
        let epoch = self.route_epoch.load(Ordering::Acquire);
        let hit = LAST.with(|last| {
            let last = last.borrow();
            last.as_ref()
                .filter(|k| k.is_for(self, t, we, epoch))
                .map(|k| k.routes.clone())
        });
        if hit.is_some() {
            return hit;
        }
        let (epoch, routes, published_by) = self.look_up_inbound(t, we)?;
        let kept_in_place = LAST.with(|last| {
            let mut last = last.borrow_mut();
            // Data on ever-changing keys: the kept entry is rewritten in place (its
            // suffix's buffer reused), not made anew for every message.
            let Some(kept) = last.as_mut().filter(|k| {
                std::ptr::addr_eq(k.transport.as_ptr(), t as *const dyn FaceTransport)
                    && std::ptr::eq(k.session.as_ptr(), Arc::as_ptr(self))
            }) else {
                return false;
            };
            kept.epoch = epoch;
            kept.scope = we.scope;
            kept.mapping = we.mapping;
            kept.suffix.clear();
            kept.suffix.push_str(we.suffix);
            kept.routes = routes.clone();
            kept.published_by = published_by.clone();
            true
        });
        if !kept_in_place {
            let kept = Kept {
                session: Arc::downgrade(self),
                transport: Arc::downgrade(&t.handle()?),
                epoch,
                scope: we.scope,
                mapping: we.mapping,
                suffix: we.suffix.to_owned(),
                routes: routes.clone(),
                published_by,
            };
            LAST.with(|last| *last.borrow_mut() = Some(kept));
        }
        Some(routes)
    }

    /// Counts `bytes` of data published by the node whose routes this thread looked up
    /// last ([`Inner::inbound_routes`]) for its publisher interests matching the key.
    pub(crate) fn count_published(&self, bytes: u64) {
        LAST.with(|last| {
            if let Some(kept) = last.borrow().as_ref() {
                for traffic in kept.published_by.iter() {
                    traffic.sent(bytes);
                }
            }
        });
    }

    /// Looks the routes up under the session lock, with the epoch they are valid for, and
    /// (router mode) the counters of the sender's publisher interests matching the key.
    fn look_up_inbound(
        &self,
        t: &dyn FaceTransport,
        we: &WireExpr<'_>,
    ) -> Option<(u64, InboundRoutes, PublishedBy)> {
        let st = self.lock();
        let epoch = self.route_epoch.load(Ordering::Acquire);
        let face = st.faces.get(&t.peer_zid())?;
        let key = face.resolve(we)?;
        let published_by: PublishedBy = if self.is_router() {
            match KeyExpr::new(&key) {
                Ok(k) => {
                    // One counter per key expression (a publisher declared twice on it
                    // counts its data once).
                    let mut matching: Vec<(&str, &Arc<Traffic>)> = face
                        .their_interests
                        .values()
                        .filter(|i| i.options.contains(InterestOptions::SUBSCRIBERS))
                        .filter_map(|i| {
                            let p = i.key.as_ref()?;
                            p.as_key_expr()
                                .intersects(k)
                                .then_some((p.as_str(), &i.published))
                        })
                        .collect();
                    matching.sort_unstable_by(|a, b| {
                        a.0.cmp(b.0).then(Arc::as_ptr(a.1).cmp(&Arc::as_ptr(b.1)))
                    });
                    matching.dedup_by(|a, b| a.0 == b.0);
                    matching.into_iter().map(|(_, t)| t.clone()).collect()
                }
                Err(_) => Box::default(),
            }
        } else {
            Box::default()
        };
        // An invalid key (or one over the size limits) has no route: the message is
        // dropped, and said so. Checked where a route is first computed, not per message.
        let routes = self.inbound_routes_in(&st, &key);
        let routes = match routes {
            Ok(routes) => routes,
            Err(e) => {
                drop(st);
                self.refused_key(t, "data", &e);
                return None;
            }
        };
        Some((epoch, routes, published_by))
    }

    /// The routes of data on `key` (a router's forwarding route, and the session's own
    /// subscribers when it has any).
    fn inbound_routes_in(
        &self,
        st: &super::State,
        key: &str,
    ) -> Result<InboundRoutes, weft_keyexpr::KeyExprError> {
        Ok(if self.is_router() {
            let (forward_key, forward) = self.forward_route_in(st, key)?;
            // A router rarely has subscribers of its own (storages, admin).
            let (key, local) = if st.own.subscribers.is_empty() {
                (forward_key, None)
            } else {
                let (key, local) = self.keyed_local_route_in(st, key)?;
                (key, Some(local))
            };
            InboundRoutes {
                key,
                local,
                forward: Some(forward),
            }
        } else {
            let (key, local) = self.keyed_local_route_in(st, key)?;
            InboundRoutes {
                key,
                local: Some(local),
                forward: None,
            }
        })
    }
}
