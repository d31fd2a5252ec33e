//! The routes of the keys a reader thread last received data on.
//!
//! The messages of a data stream mostly share one key. Looking its routes up means taking
//! the session lock, finding the face, resolving the key and hashing it into two caches,
//! for every message. Instead, each reader thread keeps what it found for the last few
//! (face, wire expression) pairs it saw ([`KEPT_MAX`]) and uses them again while their
//! session's route epoch is unchanged: every change of faces, declarations
//! (key-expression ids included) or the mesh bumps that epoch, so a kept route is never
//! older than the last change. A thread serves many links, of many sessions in one
//! process, and a link often carries several streams (a controller's nine sensors, a
//! router's link to it): with one entry, interleaved streams missed on nearly every
//! message and took the session lock each time.

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

/// How many (face, wire expression) pairs a reader thread keeps routes for.
const KEPT_MAX: usize = 32;

/// A reader thread's kept routes: at most [`KEPT_MAX`], the one used last found first.
#[derive(Default)]
struct KeptRoutes {
    entries: Vec<Kept>,
    /// The entry used last (what [`Inner::count_published`] counts for).
    last: usize,
    /// The next entry to overwrite when all are in use and valid.
    next_victim: usize,
}

/// Where a missed look-up's routes go.
enum Slot {
    /// An entry that no longer holds (another epoch) or comes next in turn.
    Overwrite(usize),
    /// A new entry (fewer than [`KEPT_MAX`] are kept).
    Push,
}

impl KeptRoutes {
    /// The entry valid for `t` and `we` in `inner` at `epoch`, or where to keep the
    /// routes once looked up.
    fn find(
        &self,
        inner: &Arc<Inner>,
        t: &dyn FaceTransport,
        we: &WireExpr<'_>,
        epoch: u64,
    ) -> Result<usize, Slot> {
        if self
            .entries
            .get(self.last)
            .is_some_and(|k| k.is_for(inner, t, we, epoch))
        {
            return Ok(self.last);
        }
        let mut stale = None;
        for (i, k) in self.entries.iter().enumerate() {
            if k.is_for(inner, t, we, epoch) {
                return Ok(i);
            }
            if stale.is_none()
                && std::ptr::eq(k.session.as_ptr(), Arc::as_ptr(inner))
                && k.epoch != epoch
            {
                stale = Some(i);
            }
        }
        Err(match stale {
            Some(i) => Slot::Overwrite(i),
            None if self.entries.len() < KEPT_MAX => Slot::Push,
            None => Slot::Overwrite(self.next_victim),
        })
    }
}

thread_local! {
    static KEPT: RefCell<KeptRoutes> = RefCell::new(KeptRoutes::default());
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
        let slot = KEPT.with(|kept| {
            let mut kept = kept.borrow_mut();
            match kept.find(self, t, we, epoch) {
                Ok(i) => {
                    kept.last = i;
                    Ok(kept.entries[i].routes.clone())
                }
                Err(slot) => Err(slot),
            }
        });
        let slot = match slot {
            Ok(routes) => return Some(routes),
            Err(slot) => slot,
        };
        let (epoch, routes, published_by) = self.look_up_inbound(t, we)?;
        // A transport on its way out has no handle: its data is routed, not kept.
        let Some(handle) = t.handle() else {
            return Some(routes);
        };
        KEPT.with(|kept| {
            let mut kept = kept.borrow_mut();
            let i = match slot {
                Slot::Overwrite(i) if i < kept.entries.len() => {
                    // Data on ever-changing keys: the entry is rewritten in place (its
                    // suffix's buffer reused), not made anew for every message.
                    let k = &mut kept.entries[i];
                    k.session = Arc::downgrade(self);
                    k.transport = Arc::downgrade(&handle);
                    k.epoch = epoch;
                    k.scope = we.scope;
                    k.mapping = we.mapping;
                    k.suffix.clear();
                    k.suffix.push_str(we.suffix);
                    k.routes = routes.clone();
                    k.published_by = published_by;
                    i
                }
                _ => {
                    kept.entries.push(Kept {
                        session: Arc::downgrade(self),
                        transport: Arc::downgrade(&handle),
                        epoch,
                        scope: we.scope,
                        mapping: we.mapping,
                        suffix: we.suffix.to_owned(),
                        routes: routes.clone(),
                        published_by,
                    });
                    kept.entries.len() - 1
                }
            };
            if i == kept.next_victim {
                kept.next_victim = (i + 1) % KEPT_MAX;
            }
            kept.last = i;
        });
        Some(routes)
    }

    /// Counts `bytes` of data published by the node whose routes this thread looked up
    /// last ([`Inner::inbound_routes`]) for its publisher interests matching the key.
    pub(crate) fn count_published(&self, bytes: u64) {
        KEPT.with(|kept| {
            let kept = kept.borrow();
            if let Some(k) = kept.entries.get(kept.last) {
                for traffic in k.published_by.iter() {
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
