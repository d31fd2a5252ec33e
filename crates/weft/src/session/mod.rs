//! The session: what an application opens to publish, subscribe, query and declare.

mod aggregate;
mod callback;
mod deadlines;
mod declared;
mod declared_expr;
mod discovery;
mod dispatch;
mod entity;
mod explain;
mod face;
mod face_transport;
mod gossip;
mod gossiping;
mod inbound;
mod link_sn;
mod links;
mod listener_thread;
mod liveliness;
mod matching;
mod mesh;
mod multicast;
mod network_events;
mod outbound;
pub(crate) mod query;
mod reply_pace;
mod router;
mod routes;
mod runtime;
#[cfg(test)]
mod scenario;
mod state;

pub use explain::{FaceVerdict, RouteExplanation};
pub use matching::{MatchingKind, MatchingListener};
pub use network_events::{
    EventsListener, LinkEvent, LinkEventsListener, TransportEvent, TransportEventsListener,
};
pub use reply_pace::PacedReplies;

pub(crate) use outbound::PublisherRoutes;
pub(crate) use query::{Answer, QueryOrigin};

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use thiserror::Error;
use weft_keyexpr::{KeyExprError, OwnedKeyExpr};
use weft_proto::core::{WhatAmI, ZenohId};
use weft_proto::network::InterestOptions;
use weft_proto::transport::CloseReason;

use crate::api::{
    GetOptions, Locality, Publisher, PutOptions, Querier, Query, Queryable, Reply, Sample,
    SampleKind, Subscriber,
};
use crate::config::Config;
use crate::transport::Caller;
use entity::EntityKind;
use face::Face;

pub(crate) use callback::{deliver, Callback};

/// Why a session could not be opened.
#[derive(Debug, Error)]
pub enum OpenError {
    /// A listen endpoint could not be bound.
    #[error("cannot listen on {endpoint}: {reason}")]
    Listen {
        /// The endpoint.
        endpoint: String,
        /// Why.
        reason: String,
    },
    /// Client mode: no router could be reached within the open timeout.
    #[error("no router reachable at {endpoints:?} within {timeout:?}")]
    Unreachable {
        /// The endpoints tried.
        endpoints: Vec<String>,
        /// The time allowed.
        timeout: Duration,
    },
    /// Client mode: every connect endpoint refused or failed its first attempt
    /// (`connect.timeout_ms` 0, Zenoh's default for clients).
    #[error(
        "cannot connect to {endpoints:?}: {reasons} (connect.timeout_ms: 0 tries once; -1 waits)"
    )]
    Refused {
        /// The endpoints tried.
        endpoints: Vec<String>,
        /// Why each attempt failed.
        reasons: String,
    },
    /// Client mode with no `connect` endpoint and multicast scouting disabled.
    #[error("client mode needs at least one connect endpoint (or multicast scouting)")]
    NothingToConnect,
    /// Client mode with no `connect` endpoint: multicast scouting found no router.
    #[error("no router found by multicast scouting within {timeout:?}")]
    NothingFound {
        /// `scouting.timeout`.
        timeout: Duration,
    },
    /// Client mode with no `connect` endpoint: multicast scouting could not run.
    #[error("multicast scouting failed: {0}")]
    Scouting(String),
    /// The system's random source failed.
    #[error("cannot generate a ZenohID: {0}")]
    Random(String),
}

/// Why an operation failed.
#[derive(Debug, Error)]
pub enum SessionError {
    /// The key expression is invalid.
    #[error("invalid key expression: {0}")]
    KeyExpr(#[from] KeyExprError),
    /// A concrete key was needed (no wildcard).
    #[error("`{0}` is not a concrete key (it has wildcards)")]
    Wildcard(String),
    /// The session is closed.
    #[error("the session is closed")]
    Closed,
    /// No connected node has this id.
    #[error("{0}")]
    Unknown(String),
    /// A thread could not be started.
    #[error("cannot start a thread: {0}")]
    Thread(String),
    /// A reply on a key that does not intersect its query's key expression, to a query
    /// that accepts only those that do (no `_anyke` parameter).
    #[error("a reply on `{reply}` does not intersect the query's `{query}` (the query accepts only replies that do)")]
    ReplyKeyMismatch {
        /// The reply's key.
        reply: String,
        /// The query's key expression.
        query: String,
    },
}

/// Traffic counters of a session's links.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Batches written.
    pub batches_out: u64,
    /// Batches read.
    pub batches_in: u64,
    /// Messages dropped by congestion control `drop`.
    pub dropped: u64,
}

/// One connected node, as the admin space shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaceInfo {
    /// Its id.
    pub zid: ZenohId,
    /// Its role.
    pub whatami: WhatAmI,
    /// The link, e.g. `tcp/127.0.0.1:51234`.
    pub link: String,
    /// Batches read from it.
    pub batches_in: u64,
    /// Batches written to it.
    pub batches_out: u64,
    /// Bytes read from it.
    pub bytes_in: u64,
    /// Bytes written to it.
    pub bytes_out: u64,
    /// Network messages received from it.
    pub messages_in: u64,
    /// Messages to it dropped, whatever the reason.
    pub dropped: u64,
    /// Messages to it dropped, by reason (`congestion`, `closed`, `unqueueable`: see
    /// [`DropReason`](crate::metrics::DropReason)), every reason listed.
    pub drops: Vec<(&'static str, u64)>,
    /// Messages from or to it that access control denied.
    pub denied: u64,
    /// Messages received from it and discarded, by reason (`too_large`, `over_budget`, `over_share`,
    /// `malformed`, `no_route`, `expired`: see [`DiscardReason`](crate::metrics::DiscardReason)),
    /// every reason listed.
    pub discarded: Vec<(&'static str, u64)>,
    /// Subscribers it declared.
    pub subscribers: Vec<String>,
    /// Queryables it declared.
    pub queryables: Vec<String>,
    /// Liveliness tokens it declared.
    pub tokens: Vec<String>,
    /// Key expressions it publishes on, as far as its interests in subscribers tell
    /// (Zenoh's publishers and weft's send one; a node that sends none is not known).
    pub publishers: Vec<String>,
    /// Key expressions it queries, as far as its interests in queryables tell.
    pub queriers: Vec<String>,
    /// A router's declarations among `subscribers`, `queryables` and `tokens` made on
    /// behalf of another router, with that router (the others are its own).
    pub relayed: Vec<RelayedDeclaration>,
    /// This end of the main link, e.g. `tcp/127.0.0.1:7447`.
    pub local_link: String,
    /// The links reserved for some priorities beside the main one.
    pub priority_links: Vec<PriorityLinkInfo>,
    /// Router mode: what each of its subscribers' key expressions drew, forwarded to it
    /// by this router, by key expression.
    pub subscriber_traffic: Vec<DeclarationTraffic>,
    /// Router mode: what it published on each key expression of [`FaceInfo::publishers`]
    /// (data received from it on keys the expression matches; `dropped` is always 0).
    pub publisher_traffic: Vec<DeclarationTraffic>,
    /// Whether the link carries the 8 priorities (QoS negotiated).
    pub qos: bool,
    /// The largest batch either side may send on the main link, as negotiated.
    pub batch_size: u16,
}

/// A declaration a neighbouring router made on behalf of another router: the one that
/// the declaration's NodeId extension names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayedDeclaration {
    /// `subscriber`, `queryable` or `token`.
    pub kind: &'static str,
    /// The key expression declared.
    pub key_expr: String,
    /// The router it comes from.
    pub origin: ZenohId,
}

/// What a router forwarded to a node because of one of its subscribers' key
/// expressions (counted while the declaration lives; a message matching two of them
/// counts for both).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeclarationTraffic {
    /// The key expression declared.
    pub key_expr: String,
    /// Messages sent to the node for it.
    pub messages: u64,
    /// Their payload bytes.
    pub bytes: u64,
    /// Messages for it that were dropped (a full queue, a closed link).
    pub dropped: u64,
}

/// The router mesh as one router sees it (router mode).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MeshInfo {
    /// The routers it can reach through the mesh, itself first, then by id.
    pub routers: Vec<ZenohId>,
    /// The links between them that both ends announce, each once (smaller id first).
    pub links: Vec<(ZenohId, ZenohId)>,
    /// For every other router: the neighbour on the spanning tree that leads to it
    /// (destination, next hop), by destination.
    pub next_hops: Vec<(ZenohId, ZenohId)>,
}

/// A link reserved for a range of priorities, beside a node's main link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorityLinkInfo {
    /// The link, e.g. `tcp/127.0.0.1:51236`.
    pub link: String,
    /// This end of it, e.g. `tcp/127.0.0.1:7447`.
    pub local_link: String,
    /// The priorities it carries, highest first (0 Control ... 7 Background).
    pub priorities: (u8, u8),
    /// Batches read from it.
    pub batches_in: u64,
    /// Batches written to it.
    pub batches_out: u64,
    /// Bytes read from it.
    pub bytes_in: u64,
    /// Bytes written to it.
    pub bytes_out: u64,
}

impl PriorityLinkInfo {
    fn of(t: &crate::transport::Transport) -> Self {
        let s = t.stats();
        let (start, end) = t
            .negotiated()
            .link_priorities
            .map_or((0, 7), |(a, b)| (a.to_u8(), b.to_u8()));
        Self {
            link: t.describe().to_string(),
            local_link: t.local_describe(),
            priorities: (start, end),
            batches_in: s.batches_in.load(Ordering::Relaxed),
            batches_out: s.batches_out.load(Ordering::Relaxed),
            bytes_in: s.bytes_in.load(Ordering::Relaxed),
            bytes_out: s.bytes_out.load(Ordering::Relaxed),
        }
    }
}

/// A session as the admin space shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminInfo {
    /// Its id.
    pub zid: ZenohId,
    /// Its mode.
    pub mode: WhatAmI,
    /// Where it listens.
    pub locators: Vec<String>,
    /// The nodes connected to it.
    pub faces: Vec<FaceInfo>,
    /// Its own subscribers.
    pub subscribers: Vec<String>,
    /// Its own queryables.
    pub queryables: Vec<String>,
    /// Its own liveliness tokens.
    pub tokens: Vec<String>,
    /// Its own publishers' key expressions.
    pub publishers: Vec<String>,
    /// The router mesh as it sees it (router mode only).
    pub mesh: Option<MeshInfo>,
    /// Sessions refused since the start, by reason: `max_sessions`
    /// (`transport.unicast.max_sessions` reached) and `duplicate_id` (a node claimed the
    /// ZenohID of a live session), every reason listed.
    pub refused: Vec<(&'static str, u64)>,
}

struct LocalSubscriber {
    key: OwnedKeyExpr,
    callback: Callback,
    /// Where its samples may come from (`SessionLocal` ones are kept apart, undeclared
    /// to other nodes: `Own::local_only_subscribers`).
    origin: crate::api::Locality,
}

/// Mutable state of a session, behind one lock.
pub(crate) struct State {
    next_id: u32,
    /// This session's own entities.
    own: state::Own,
    /// The connected nodes.
    faces: FastMap<ZenohId, Face>,
    /// What the faces declared, by key expression (kept with each face's own tables).
    declared: declared::Declared,
    /// What a router keeps to route for others: its mesh, gossip, re-declared ids.
    routing: state::Routing,
}

/// The first sequence number of this router's link-state announcements: milliseconds of
/// the wall clock, so that a router restarted with the same id is believed over its former
/// self.
fn mesh_first_sn() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_millis() as u64)
}

/// The maps looked up for every message (routes by key, faces by id): a fast hasher,
/// seeded per process.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// What sessions share with their handles and threads.
pub(crate) struct Inner {
    zid: ZenohId,
    hlc: Arc<crate::clock::Hlc>,
    config: Config,
    state: Mutex<State>,
    /// The router mesh's graph and spanning tree (router mode; empty otherwise). Its own
    /// lock, held for one question or one update of the graph: taken after `state` where
    /// both are held, never before, and no other lock is taken under it.
    mesh: Mutex<mesh::Mesh>,
    /// Gossip scouting: what this node heard of others and tells its neighbours. Its own
    /// lock, as `mesh`'s: after `state`, never with `mesh`, nothing taken under it.
    gossip: Mutex<gossip::Gossip>,
    /// Queries under way: this session's gets, and the queries a router forwards. Its
    /// own lock: replies and their ends never wait for routing. Taken after `state`
    /// where both are held (a query's targets and its record, set at once).
    queries: Mutex<state::Queries>,
    /// The ids its publishers' key expressions are declared under.
    expr_ids: Mutex<declared_expr::ExprIds>,
    /// This session's own messages dropped by congestion control, by key (a lock of its
    /// own: a publisher dropping under congestion never waits for routing).
    own_drops: Mutex<HashMap<String, u64>>,
    /// Routes already computed, by key (see `routes`): a lock of its own, taken after
    /// `state` (routes are computed from the state and cached while it is held), never
    /// before, and held for a look-up, an insertion or clearing only (no other lock is
    /// taken under it).
    routes: Mutex<routes::RouteCache>,
    /// Bumped whenever cached routes become stale (see [`Inner::routes_changed`]).
    route_epoch: Arc<AtomicU64>,
    /// Wakes the matching listeners at the same changes.
    matching_signal: Arc<matching::ChangeSignal>,
    /// What this session's queries (and, in a router, the queries it routes) did.
    query_stats: crate::metrics::QueryStats,
    changed: Condvar,
    closing: AtomicBool,
    batching: AtomicBool,
    listening: Mutex<Vec<String>>,
    /// Wakes the session's listener threads when it closes.
    wakers: Mutex<Vec<Arc<mio::Waker>>>,
    /// The loop making the session's links (listeners, handshakes, connectors).
    links: std::sync::OnceLock<Arc<links::LinksLoop>>,
    /// Client mode without `connect.endpoints`: the locators of the router found by
    /// scouting (alternatives: one session, to the first that answers).
    scouted: Vec<crate::endpoint::Endpoint>,
    /// Nodes discovered by scouting that a session is being opened to.
    autoconnecting: Mutex<std::collections::HashSet<ZenohId>>,
    /// Accepted links whose handshake is in progress (bounded by
    /// `transport.unicast.accept_pending`).
    pending_accepts: std::sync::atomic::AtomicUsize,
    /// What all of this node's transports may hold in partially reassembled messages
    /// (`transport.link.rx.reassembly_budget`).
    reassembly_budget: Arc<weft_transport::rx::ReassemblyBudget>,
    /// `access_control`, compiled, when enabled: applied to every transport.
    access_control: Option<Arc<crate::acl::AccessControl>>,
    /// What all of this node's transports may hold in forwarded messages waiting for room
    /// (`transport.link.tx.overflow_budget`).
    overflow_budget: Arc<crate::transport::OverflowBudget>,
    /// Keys from other nodes refused as invalid, for [`Inner::refused_key`].
    refused_keys: AtomicU64,
    /// Paces the log lines about them, per node.
    refused_key_log: Mutex<crate::log_limit::LogLimit<ZenohId>>,
    /// Sessions refused beyond `transport.unicast.max_sessions` (for the log's pace).
    refused_sessions: AtomicU64,
    /// Sessions refused because a live session has their ZenohID.
    refused_duplicates: AtomicU64,
    /// Accepted handshakes closed after stalling, to free their place for a new one.
    stalled_handshakes_closed: AtomicU64,
    /// Accepted handshakes that failed: authentication failures by reason, the log's
    /// pace per source address, `transport.auth.throttle`.
    refusals: links::Refusals,
    /// The failures of the connectors' first attempts, one per connector that failed it.
    first_attempts_failed: Mutex<Vec<String>>,
    /// Told when transports open and close.
    transport_listeners: network_events::Listeners<TransportEvent>,
    /// Told when links are added and removed.
    link_listeners: network_events::Listeners<LinkEvent>,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The router mesh (see the field's lock order).
    pub(super) fn mesh(&self) -> MutexGuard<'_, mesh::Mesh> {
        self.mesh.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Gossip scouting's state (see the field's lock order).
    fn gossip(&self) -> MutexGuard<'_, gossip::Gossip> {
        self.gossip.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// This session's own messages dropped by congestion control, by key.
    pub(crate) fn own_drops(&self) -> MutexGuard<'_, HashMap<String, u64>> {
        self.own_drops.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts one of this session's messages on `key` dropped by congestion control.
    pub(crate) fn count_own_drop(&self, key: &str) {
        let mut drops = self.own_drops();
        match drops.get_mut(key) {
            Some(n) => *n += 1,
            None => {
                drops.insert(key.to_owned(), 1);
            }
        }
    }

    /// The ids of its publishers' key expressions.
    pub(crate) fn expr_ids(&self) -> MutexGuard<'_, declared_expr::ExprIds> {
        self.expr_ids.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The route caches (taken after [`Inner::lock`] where both are held).
    pub(crate) fn routes(&self) -> MutexGuard<'_, routes::RouteCache> {
        self.routes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets the cached routes (declarations, interests or faces changed) and wakes
    /// the matching listeners: called with the session's state held, where the change
    /// was made.
    pub(crate) fn routes_changed(&self) {
        self.routes().changed();
        self.matching_signal.notify();
    }

    /// The queries under way (taken after [`Inner::lock`] where both are held).
    pub(crate) fn queries(&self) -> MutexGuard<'_, state::Queries> {
        self.queries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The global id of this session's entity `eid`.
    pub(crate) fn entity_id(&self, eid: u32) -> weft_proto::network::EntityGlobalId {
        weft_proto::network::EntityGlobalId { zid: self.zid, eid }
    }

    /// A new timestamp from the session's clock, at the physical time `caller` reads.
    pub(crate) fn new_timestamp(&self, caller: &Caller) -> weft_proto::core::Timestamp {
        weft_proto::core::Timestamp {
            time: self.hlc.new_time(caller.physical_now()),
            id: self.zid,
        }
    }

    /// Whether this session timestamps what it publishes (`timestamping.enabled`;
    /// by default only routers do).
    pub(crate) fn timestamping(&self) -> bool {
        self.config
            .timestamping
            .unwrap_or(self.config.mode == WhatAmI::Router)
    }

    fn next_id(st: &mut State) -> u32 {
        st.next_id += 1;
        st.next_id
    }

    fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    /// Has `what` happen at `at` (a get's timeout), fired by the process's links loop
    /// (started if it was not: `deadlines`).
    pub(crate) fn schedule_deadline(
        self: &Arc<Self>,
        at: std::time::Instant,
        what: deadlines::Timeout,
    ) {
        match links::LinksLoop::get() {
            Ok(links) => links.schedule(self, at, what),
            Err(e) => tracing::warn!("no links loop ({e}): a get's timeout cannot fire"),
        }
    }
}

/// An open session.
///
/// Cloning gives another handle on the same session; it is closed by [`Session::close`]
/// or when the last handle is dropped.
pub struct Session {
    inner: Arc<Inner>,
    owner: bool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("zid", &self.inner.zid)
            .finish()
    }
}

/// Opens a session with `config`.
pub fn open(config: Config) -> Result<Session, OpenError> {
    Session::open(config)
}

impl Session {
    /// Opens a session: listens and connects as configured. In client mode, waits until a
    /// router is connected (or the open timeout passes); in peer mode, waits (within the
    /// open timeout) for the peers it connects to to finish their initial declarations.
    pub fn open(config: Config) -> Result<Self, OpenError> {
        let refusals = links::Refusals::new(config.auth_throttle);
        let zid = match config.id {
            Some(id) => id,
            None => random_zid()?,
        };
        let scouted = if config.mode == WhatAmI::Client && config.connect.is_empty() {
            discovery::find_router(&config, zid)?
        } else {
            Vec::new()
        };
        let route_epoch = Arc::new(AtomicU64::new(0));
        let matching_signal = Arc::new(matching::ChangeSignal);
        let access_control = config.access_control.enabled.then(|| {
            let control = crate::acl::AccessControl::new(&config.access_control);
            for bypass in control.bypasses() {
                tracing::warn!("{bypass}");
            }
            Arc::new(control)
        });
        let overflow_budget = Arc::new(crate::transport::OverflowBudget::new(
            config.overflow_budget,
        ));
        let reassembly_budget = Arc::new(weft_transport::rx::ReassemblyBudget::new(
            config.reassembly_budget,
        ));
        let gossip = gossip::Gossip::new(zid, config.mode, &config.scouting.gossip);
        let inner = Arc::new(Inner {
            zid,
            hlc: Arc::default(),
            config,
            state: Mutex::new(State {
                next_id: 0,
                own: state::Own::default(),
                faces: FastMap::default(),
                declared: declared::Declared::default(),
                routing: state::Routing {
                    routed_ids: HashMap::new(),
                    maybe_aggregated: false,
                },
            }),
            mesh: Mutex::new(mesh::Mesh::new(zid, mesh_first_sn())),
            gossip: Mutex::new(gossip),
            queries: Mutex::default(),
            expr_ids: Mutex::default(),
            own_drops: Mutex::default(),
            routes: Mutex::new(routes::RouteCache::new(route_epoch.clone())),
            route_epoch,
            matching_signal,
            query_stats: crate::metrics::QueryStats::default(),
            changed: Condvar::new(),
            closing: AtomicBool::new(false),
            batching: AtomicBool::new(false),
            listening: Mutex::new(Vec::new()),
            wakers: Mutex::new(Vec::new()),
            links: std::sync::OnceLock::new(),
            scouted,
            autoconnecting: Mutex::new(std::collections::HashSet::new()),
            pending_accepts: std::sync::atomic::AtomicUsize::new(0),
            reassembly_budget,
            overflow_budget,
            access_control,
            refused_keys: AtomicU64::new(0),
            refused_key_log: Mutex::default(),
            refused_sessions: AtomicU64::new(0),
            refused_duplicates: AtomicU64::new(0),
            stalled_handshakes_closed: AtomicU64::new(0),
            refusals,
            first_attempts_failed: Mutex::new(Vec::new()),
            transport_listeners: network_events::Listeners::default(),
            link_listeners: network_events::Listeners::default(),
        });
        runtime::start(&inner)?;
        let session = Self { inner, owner: true };
        session.wait_for_connections()?;
        Ok(session)
    }

    fn wait_for_connections(&self) -> Result<(), OpenError> {
        let config = &self.inner.config;
        // A router does not wait: routers do not end their initial declarations with a
        // DeclareFinal towards each other, and clients must be able to connect at once.
        // A peer that autoconnects waits `scouting.delay` for the nodes it discovers.
        let scouting = config.mode == WhatAmI::Peer && discovery::autoconnects(config);
        let nothing_configured = config.connect.is_empty() && self.inner.scouted.is_empty();
        if (nothing_configured && !scouting) || config.mode == WhatAmI::Router {
            return Ok(());
        }
        let start = Instant::now();
        let scouting_until = start + config.scouting.delay;
        let mut deadline = start + config.open_timeout.max(config.scouting.delay);
        // A client with connect endpoints follows Zenoh's connect.timeout_ms (0 by
        // default: each endpoint is tried once) and connect.exit_on_failure (true).
        let client_endpoints = config.mode == WhatAmI::Client && !config.connect.is_empty();
        let try_once = client_endpoints && config.connect_timeout_ms.unwrap_or(0) == 0;
        let exit_on_failure = config.connect_exit_on_failure.unwrap_or(true);
        if client_endpoints {
            match config.connect_timeout_ms.unwrap_or(0) {
                // Tried once: bounded by the attempt itself, at most open_timeout.
                0 => {}
                -1 => deadline = start + Duration::from_secs(u64::from(u32::MAX)),
                ms => deadline = start + Duration::from_millis(ms.unsigned_abs()),
            }
        }
        let mut st = self.inner.lock();
        loop {
            let ready = match config.mode {
                WhatAmI::Client => !st.faces.is_empty(),
                _ => {
                    // Nodes discovered (by scouting, or named by gossip) are waited
                    // for too, within the same deadline.
                    let scouted = (!scouting || Instant::now() >= scouting_until)
                        && self
                            .inner
                            .autoconnecting
                            .lock()
                            .map_or(true, |c| c.is_empty());
                    scouted
                        && st.faces.len() >= config.connect.len()
                        // The initial declarations of peers are waited for (Zenoh's
                        // `open.return_conditions.declares`); of a router, its
                        // DeclareFinal or its first gossip list (a Zenoh router sends
                        // its peers no DeclareFinal; until one comes, data and queries
                        // go to the router anyway), whose peers are then connected to.
                        && st.faces.values().all(|f| {
                            f.initial_declarations_done
                                || match f.transport.peer_whatami() {
                                    WhatAmI::Client => true,
                                    WhatAmI::Router => f.gossip_heard,
                                    WhatAmI::Peer => false,
                                }
                        })
                }
            };
            if ready {
                return Ok(());
            }
            if try_once {
                // Every endpoint tried once and refused: the reasons, joined (copied only
                // then, not on every wake-up).
                let refused = self
                    .inner
                    .first_attempts_failed
                    .lock()
                    .ok()
                    .and_then(|f| (f.len() >= config.connect.len()).then(|| f.join("; ")));
                if let Some(reasons) = refused {
                    drop(st);
                    if !exit_on_failure {
                        return Ok(());
                    }
                    self.close();
                    return Err(OpenError::Refused {
                        endpoints: config.connect.iter().map(ToString::to_string).collect(),
                        reasons,
                    });
                }
            }
            let now = Instant::now();
            if now >= deadline {
                drop(st);
                if config.mode == WhatAmI::Client && (exit_on_failure || !client_endpoints) {
                    self.close();
                    let tried = if config.connect.is_empty() {
                        &self.inner.scouted
                    } else {
                        &config.connect
                    };
                    return Err(OpenError::Unreachable {
                        endpoints: tried.iter().map(ToString::to_string).collect(),
                        timeout: deadline - start,
                    });
                }
                return Ok(());
            }
            // Woken by connections; also by the end of the scouting delay.
            let wake = if scouting && now < scouting_until {
                scouting_until - now
            } else {
                deadline - now
            };
            st = self
                .inner
                .changed
                .wait_timeout(st, wake.min(Duration::from_millis(100)))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// This session's ZenohID.
    pub fn zid(&self) -> ZenohId {
        self.inner.zid
    }

    /// The endpoints this session listens on (with the real ports).
    pub fn listen_endpoints(&self) -> Vec<String> {
        self.inner
            .listening
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    /// A new timestamp from this session's hybrid logical clock.
    pub fn new_timestamp(&self) -> weft_proto::core::Timestamp {
        let caller = &Caller::here();
        self.inner.new_timestamp(caller)
    }

    /// This session's hybrid logical clock, as a handle that does not keep the session
    /// open.
    pub fn clock(&self) -> crate::clock::Clock {
        crate::clock::Clock::new(self.inner.hlc.clone(), self.inner.zid)
    }

    /// Starts listening on one more endpoint; returns the endpoint actually bound (with
    /// the real port when 0 was asked for).
    pub fn listen(&self, endpoint: &crate::endpoint::Endpoint) -> Result<String, OpenError> {
        runtime::listen(&self.inner, endpoint)
    }

    /// ZenohIDs of the nodes currently connected.
    pub fn peers(&self) -> Vec<ZenohId> {
        self.inner.lock().faces.keys().copied().collect()
    }

    /// Traffic counters summed over the currently connected nodes.
    pub fn link_stats(&self) -> LinkStats {
        let st = self.inner.lock();
        let mut total = LinkStats::default();
        for f in st.faces.values() {
            let s = f.transport.stats();
            total.batches_out += s.batches_out.load(Ordering::Relaxed);
            total.batches_in += s.batches_in.load(Ordering::Relaxed);
            total.dropped += s.dropped.load(Ordering::Relaxed);
        }
        total
    }

    /// How a put on the concrete key `key` would be routed by this session, coming from
    /// the connected node `from` (or published here): every connected node, whether it
    /// would receive it and why (not). Nothing is sent.
    pub fn explain_put(
        &self,
        key: &str,
        from: Option<ZenohId>,
    ) -> Result<RouteExplanation, SessionError> {
        let key = concrete(key)?;
        self.inner.explain_put(key.as_str(), from)
    }

    /// What this session's gets did, and in a router the queries it routed: counts and
    /// durations, read with atomics.
    pub fn query_stats(&self) -> &crate::metrics::QueryStats {
        &self.inner.query_stats
    }

    /// What this session is and knows: for the admin space and monitoring.
    pub fn admin(&self) -> AdminInfo {
        let st = self.inner.lock();
        let keys = |m: &HashMap<u32, OwnedKeyExpr>| {
            let mut v: Vec<String> = m.values().map(ToString::to_string).collect();
            v.sort();
            v
        };
        let interests = |f: &Face, kind: InterestOptions| {
            let mut v: Vec<String> = f
                .their_interests
                .values()
                .filter(|i| i.options.contains(kind))
                .filter_map(|i| i.key.as_ref().map(ToString::to_string))
                .collect();
            v.sort();
            v.dedup();
            v
        };
        let relayed = |f: &Face| {
            let mut v: Vec<RelayedDeclaration> = f
                .origins
                .iter()
                .filter_map(|((kind, id), origin)| {
                    let (name, table) = match kind {
                        EntityKind::Subscriber => ("subscriber", &f.subscribers),
                        EntityKind::Queryable => ("queryable", &f.queryables),
                        EntityKind::Token => ("token", &f.tokens),
                    };
                    Some(RelayedDeclaration {
                        kind: name,
                        key_expr: table.by_id.get(id)?.to_string(),
                        origin: *origin,
                    })
                })
                .collect();
            v.sort_by(|a, b| (a.kind, &a.key_expr, a.origin).cmp(&(b.kind, &b.key_expr, b.origin)));
            v
        };
        // Per key expression of its publisher interests, their counters summed.
        let published = |f: &Face| {
            let mut by_key: std::collections::BTreeMap<String, (u64, u64)> =
                std::collections::BTreeMap::new();
            for i in f.their_interests.values() {
                if let (true, Some(key)) =
                    (i.options.contains(InterestOptions::SUBSCRIBERS), &i.key)
                {
                    let (messages, bytes, _) = i.published.read();
                    let entry = by_key.entry(key.to_string()).or_default();
                    entry.0 += messages;
                    entry.1 += bytes;
                }
            }
            by_key
                .into_iter()
                .map(|(key_expr, (messages, bytes))| DeclarationTraffic {
                    key_expr,
                    messages,
                    bytes,
                    dropped: 0,
                })
                .collect()
        };
        let mut faces: Vec<FaceInfo> = st
            .faces
            .values()
            .map(|f| {
                let s = f.transport.stats();
                let negotiated = f.transport.transport().map(|t| *t.negotiated());
                FaceInfo {
                    zid: f.transport.peer_zid(),
                    whatami: f.transport.peer_whatami(),
                    link: f.transport.describe().to_string(),
                    batches_in: s.batches_in.load(Ordering::Relaxed),
                    batches_out: s.batches_out.load(Ordering::Relaxed),
                    bytes_in: s.bytes_in.load(Ordering::Relaxed),
                    bytes_out: s.bytes_out.load(Ordering::Relaxed),
                    messages_in: s.messages_in.load(Ordering::Relaxed),
                    dropped: s.dropped.load(Ordering::Relaxed),
                    drops: crate::transport::DropReason::ALL
                        .iter()
                        .map(|r| (r.as_str(), s.drops.get(*r)))
                        .collect(),
                    denied: f.transport.access_control().map_or(0, |a| a.denied()),
                    discarded: crate::transport::DiscardReason::ALL
                        .iter()
                        .map(|r| (r.as_str(), s.discarded.get(*r)))
                        .collect(),
                    subscribers: keys(&f.subscribers.by_id),
                    queryables: keys(&f.queryables.by_id),
                    tokens: keys(&f.tokens.by_id),
                    publishers: interests(f, InterestOptions::SUBSCRIBERS),
                    queriers: interests(f, InterestOptions::QUERYABLES),
                    relayed: relayed(f),
                    local_link: f
                        .transport
                        .transport()
                        .map(|t| t.local_describe())
                        .unwrap_or_default(),
                    priority_links: f
                        .transport
                        .transport()
                        .map(|t| t.priority_links())
                        .unwrap_or_default()
                        .iter()
                        .map(|t| PriorityLinkInfo::of(t))
                        .collect(),
                    subscriber_traffic: st
                        .declared
                        .subscribers
                        .traffic_of(f.transport.peer_zid(), &f.subscribers)
                        .into_iter()
                        .map(|(key_expr, messages, bytes, dropped)| DeclarationTraffic {
                            key_expr,
                            messages,
                            bytes,
                            dropped,
                        })
                        .collect(),
                    publisher_traffic: published(f),
                    qos: negotiated.as_ref().is_some_and(|n| n.qos),
                    batch_size: negotiated.map_or(0, |n| n.batch_size),
                }
            })
            .collect();
        faces.sort_by_key(|f| f.zid);
        let mut subscribers: Vec<String> = st
            .own
            .subscribers
            .values()
            .map(|s| s.key.to_string())
            .collect();
        subscribers.sort();
        let mut queryables: Vec<String> = st
            .own
            .queryables
            .values()
            .map(|q| q.key.to_string())
            .collect();
        queryables.sort();
        AdminInfo {
            zid: self.inner.zid,
            mode: self.inner.config.mode,
            locators: self.listen_endpoints(),
            faces,
            subscribers,
            queryables,
            tokens: keys(&st.own.tokens),
            publishers: keys(&st.own.publishers),
            mesh: (self.inner.config.mode == WhatAmI::Router).then(|| {
                let mesh = self.inner.mesh();
                MeshInfo {
                    routers: mesh.routers(),
                    links: mesh.confirmed_links(),
                    next_hops: mesh.next_hops().into_iter().collect(),
                }
            }),
            refused: [
                (
                    "max_sessions",
                    self.inner.refused_sessions.load(Ordering::Relaxed),
                ),
                (
                    "duplicate_id",
                    self.inner.refused_duplicates.load(Ordering::Relaxed),
                ),
            ]
            .into_iter()
            .chain(self.inner.refusals.counts())
            .collect(),
        }
    }

    /// Starts manual batching: until [`Session::batch_flush`] or
    /// [`Session::batch_stop`], messages wait in the pending batches (a full batch is
    /// still sent; express messages are not held).
    pub fn batch_start(&self) {
        self.for_each_transport(|t| t.set_manual_batching(true));
        self.inner.batching.store(true, Ordering::Relaxed);
    }

    /// Sends what manual batching holds.
    pub fn batch_flush(&self) {
        self.for_each_transport(|t| t.flush_pending());
    }

    /// Stops manual batching, sending what it held.
    pub fn batch_stop(&self) {
        self.inner.batching.store(false, Ordering::Relaxed);
        self.for_each_transport(|t| t.set_manual_batching(false));
    }

    fn for_each_transport(&self, f: impl Fn(&dyn face_transport::FaceTransport)) {
        let transports: Vec<_> = self
            .inner
            .lock()
            .faces
            .values()
            .map(|f| f.transport.clone())
            .collect();
        for t in transports {
            f(&*t);
        }
    }

    /// Messages dropped by congestion control `drop`, per key, since the session opened.
    pub fn drops(&self) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = self
            .inner
            .own_drops()
            .iter()
            .map(|(k, n)| (k.clone(), *n))
            .collect();
        v.sort();
        v
    }

    /// Publishes `payload` on `key`: a key expression, which may hold wildcards (every
    /// subscriber whose expression intersects it receives the sample, as in Zenoh).
    pub fn put(&self, key: &str, payload: &[u8], options: &PutOptions) -> Result<(), SessionError> {
        let caller = &Caller::here();
        let key = OwnedKeyExpr::new(key)?;
        self.inner
            .publish(&key, SampleKind::Put, payload, options, None, caller)
    }

    /// Deletes `key` (a key expression, which may hold wildcards, as for
    /// [`Session::put`]).
    pub fn delete(&self, key: &str, options: &PutOptions) -> Result<(), SessionError> {
        let caller = &Caller::here();
        let key = OwnedKeyExpr::new(key)?;
        self.inner
            .publish(&key, SampleKind::Delete, &[], options, None, caller)
    }

    /// Declares a subscriber calling `callback` for every sample on keys intersecting
    /// `key_expr` (from this session too). Undeclared when the returned handle is dropped.
    pub fn declare_subscriber<F>(
        &self,
        key_expr: &str,
        callback: F,
    ) -> Result<Subscriber, SessionError>
    where
        F: Fn(&Sample) + Send + Sync + 'static,
    {
        self.declare_subscriber_from(key_expr, Locality::Any, callback)
    }

    /// As [`Session::declare_subscriber`], for the samples `origin` allows: this
    /// session's own publications, other nodes', or both. Other nodes are not told of a
    /// subscriber whose origin is `SessionLocal`.
    pub fn declare_subscriber_from<F>(
        &self,
        key_expr: &str,
        origin: Locality,
        callback: F,
    ) -> Result<Subscriber, SessionError>
    where
        F: Fn(&Sample) + Send + Sync + 'static,
    {
        let caller = &Caller::here();
        self.subscribe(
            key_expr,
            origin,
            Callback::Borrowing(Arc::new(callback)),
            caller,
        )
    }

    /// As [`Session::declare_subscriber_from`], with a callback that takes each sample
    /// rather than borrowing it: one that keeps its samples (queues them for another
    /// thread, say) gets them without a clone when it is the sample's last callback in
    /// this session, as it is when it is the only one.
    pub fn declare_subscriber_owned<F>(
        &self,
        key_expr: &str,
        origin: Locality,
        callback: F,
    ) -> Result<Subscriber, SessionError>
    where
        F: Fn(Sample) + Send + Sync + 'static,
    {
        let caller = &Caller::here();
        self.subscribe(
            key_expr,
            origin,
            Callback::Taking(Arc::new(callback)),
            caller,
        )
    }

    /// Declares a subscriber on `key_expr` calling `callback`.
    fn subscribe(
        &self,
        key_expr: &str,
        origin: Locality,
        callback: Callback,
        caller: &Caller,
    ) -> Result<Subscriber, SessionError> {
        let key = OwnedKeyExpr::new(key_expr)?;
        let id = self
            .inner
            .declare_subscriber(key.clone(), origin, callback, caller)?;
        Ok(Subscriber::new(self.inner.clone(), id, key))
    }

    /// Declares a subscriber whose samples are queued in a bounded channel of `capacity`
    /// samples. When the channel is full, new samples are dropped (counted by
    /// [`Subscriber::dropped`]): a slow reader never blocks the session. A reader waiting
    /// for samples that come close together looks for the next one before it sleeps
    /// ([`FifoReceiver`](crate::FifoReceiver)).
    pub fn declare_subscriber_channel(
        &self,
        key_expr: &str,
        capacity: usize,
    ) -> Result<(Subscriber, crate::FifoReceiver<Sample>), SessionError> {
        let caller = &Caller::here();
        let (tx, rx) = crate::api::fifo_channel(capacity);
        let dropped = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = dropped.clone();
        let key = OwnedKeyExpr::new(key_expr)?;
        let id = self.inner.declare_subscriber(
            key.clone(),
            Locality::Any,
            Callback::Taking(Arc::new(move |s: Sample| {
                if tx.try_send(s).is_err() {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            })),
            caller,
        )?;
        Ok((
            Subscriber::with_drops(self.inner.clone(), id, key, dropped),
            rx,
        ))
    }

    /// Declares a publisher on `key` (a key expression, which may hold wildcards, as for
    /// [`Session::put`]): in client mode, it asks the router which subscribers match, and
    /// sends nothing while none does.
    pub fn declare_publisher(
        &self,
        key: &str,
        options: PutOptions,
    ) -> Result<Publisher, SessionError> {
        let caller = &Caller::here();
        let key = OwnedKeyExpr::new(key)?;
        let id = self.inner.declare_publisher(key.clone(), caller)?;
        let expr_id = self.inner.expr_ids().take();
        Ok(Publisher::new(
            self.inner.clone(),
            id,
            key,
            options,
            expr_id,
        ))
    }

    /// Queries `selector` (a key expression, optionally followed by `?parameters`).
    /// Replies arrive on the returned channel, which closes once every queried node has
    /// finished or the timeout passed.
    pub fn get(
        &self,
        selector: &str,
        options: &GetOptions,
    ) -> Result<std::sync::mpsc::Receiver<Reply>, SessionError> {
        let caller = &Caller::here();
        self.inner.get(selector, options, caller)
    }

    /// As [`Session::get`], the replies waiting in the channel holding about `max_bytes`
    /// (payloads and keys) at most: beyond, the link that brings more is not read until
    /// some are taken, so that the repliers wait rather than this node holding what they
    /// send (a batch's worth may come beyond; replies from this node's own queryables are
    /// queued without waiting). For a reader that hands replies on as they come, such as
    /// a streamed HTTP answer.
    pub fn get_paced(
        &self,
        selector: &str,
        options: &GetOptions,
        max_bytes: usize,
    ) -> Result<PacedReplies, SessionError> {
        let caller = &Caller::here();
        let pace = reply_pace::Pace::new(max_bytes);
        let replies = self
            .inner
            .get_paced(selector, options, Some(pace.clone()), caller)?;
        Ok(PacedReplies::new(replies, pace))
    }

    /// Calls `callback` for every transport with another node that opens (a
    /// [`TransportEvent`] of kind `Put`) or closes (`Delete`) from now on; with
    /// `history`, first for each transport open already. The calls come from the
    /// process's listener thread, which serves every matching and events listener one
    /// callback at a time, in order; they stop when the returned listener is dropped.
    pub fn declare_transport_events_listener(
        &self,
        history: bool,
        callback: impl Fn(TransportEvent) + Send + 'static,
    ) -> Result<TransportEventsListener, SessionError> {
        self.inner
            .declare_events_listener(history, Box::new(callback))
    }

    /// Calls `callback` for every link with another node that is added (a [`LinkEvent`]
    /// of kind `Put`) or removed (`Delete`) from now on: a transport's main link when
    /// the transport opens or closes, and each link reserved for some priorities when
    /// it is attached beside it or ends. With `history`, first for each link open
    /// already. The calls come from the process's listener thread (as for
    /// [`Session::declare_transport_events_listener`]), in order; they stop when the
    /// returned listener is dropped.
    pub fn declare_link_events_listener(
        &self,
        history: bool,
        callback: impl Fn(LinkEvent) + Send + 'static,
    ) -> Result<LinkEventsListener, SessionError> {
        self.inner
            .declare_events_listener(history, Box::new(callback))
    }

    /// Declares a querier: repeated `get`s on `key_expr` with `options`.
    pub fn declare_querier(
        &self,
        key_expr: &str,
        options: GetOptions,
    ) -> Result<Querier, SessionError> {
        let caller = &Caller::here();
        let key = OwnedKeyExpr::new(key_expr)?;
        Ok(Querier {
            inner: self.inner.clone(),
            id: self.inner.declare_querier(key.clone(), caller)?,
            key,
            options,
        })
    }

    /// Declares a queryable answering queries on keys intersecting `key_expr`; `complete`
    /// says it answers for every key of it. Undeclared when the returned handle is dropped.
    pub fn declare_queryable<F>(
        &self,
        key_expr: &str,
        complete: bool,
        callback: F,
    ) -> Result<Queryable, SessionError>
    where
        F: Fn(Query) + Send + Sync + 'static,
    {
        self.declare_queryable_from(key_expr, complete, Locality::Any, callback)
    }

    /// As [`Session::declare_queryable`], for the queries `origin` allows: this
    /// session's own, other nodes', or both. Other nodes are not told of a queryable
    /// whose origin is `SessionLocal`.
    pub fn declare_queryable_from<F>(
        &self,
        key_expr: &str,
        complete: bool,
        origin: Locality,
        callback: F,
    ) -> Result<Queryable, SessionError>
    where
        F: Fn(Query) + Send + Sync + 'static,
    {
        let caller = &Caller::here();
        let key = OwnedKeyExpr::new(key_expr)?;
        let id = self.inner.declare_queryable(
            key.clone(),
            complete,
            origin,
            Arc::new(callback),
            caller,
        )?;
        Ok(Queryable {
            inner: self.inner.clone(),
            id,
            key: key.to_string(),
        })
    }

    /// Declares a liveliness token on the key expression `key` (wildcards allowed, as in
    /// Zenoh: it is alive for the liveliness subscribers and gets whose key expressions
    /// intersect it) until the handle is dropped or this session dies.
    pub fn declare_token(&self, key: &str) -> Result<LivelinessToken, SessionError> {
        let caller = &Caller::here();
        let key = OwnedKeyExpr::new(key)?;
        let id = self.inner.declare_token(key, caller)?;
        Ok(LivelinessToken {
            inner: self.inner.clone(),
            id,
        })
    }

    /// Declares a liveliness subscriber: `callback` gets a `Put` sample when a token on a
    /// key intersecting `key_expr` appears, a `Delete` when it disappears. With `history`,
    /// the tokens already alive are reported first.
    pub fn declare_liveliness_subscriber<F>(
        &self,
        key_expr: &str,
        history: bool,
        callback: F,
    ) -> Result<LivelinessSubscriber, SessionError>
    where
        F: Fn(&Sample) + Send + Sync + 'static,
    {
        let caller = &Caller::here();
        let key = OwnedKeyExpr::new(key_expr)?;
        let id = self.inner.declare_liveliness_subscriber(
            key,
            history,
            Callback::Borrowing(Arc::new(callback)),
            caller,
        )?;
        Ok(LivelinessSubscriber {
            inner: self.inner.clone(),
            id,
        })
    }

    /// Lists the liveliness tokens alive on keys intersecting `key_expr`; the channel
    /// closes when the answer is complete or after `timeout`.
    pub fn liveliness_get(
        &self,
        key_expr: &str,
        timeout: Duration,
    ) -> Result<std::sync::mpsc::Receiver<Reply>, SessionError> {
        let caller = &Caller::here();
        self.inner.liveliness_get(key_expr, timeout, caller)
    }

    /// Closes the session: tells every connected node and stops every thread.
    pub fn close(&self) {
        let caller = &Caller::here();
        self.inner.close(caller);
    }
}

impl Clone for Session {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            owner: false,
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Dropped where the application (or a callback) lets go of it.
        let caller = &Caller::here();
        if self.owner {
            self.inner.close(caller);
        }
    }
}

impl Inner {
    pub(crate) fn close(&self, caller: &Caller) {
        if self.closing.swap(true, Ordering::AcqRel) {
            return;
        }
        // Its gets' deadlines leave the process's queue (nothing there holds it).
        if let Some(links) = links::LinksLoop::running() {
            links.deadlines().forget(self);
        }
        if let Ok(wakers) = self.wakers.lock() {
            for w in wakers.iter() {
                let _ = w.wake();
            }
        }
        if let Some(links) = self.links.get() {
            links.wake();
        }
        let faces: Vec<_> = self
            .lock()
            .faces
            .drain()
            .map(|(_, f)| f.transport)
            .collect();
        // All at once, then one wait for every peer to close its side. Writing what is
        // pending ends for all of them at one deadline: faces that take nothing do not
        // each add their own wait.
        let flush_by = (!caller.serves_links())
            .then(|| std::time::Instant::now() + crate::transport::FLUSH_ON_CLOSE);
        for t in &faces {
            t.start_close_by(CloseReason::GENERIC, flush_by, caller);
        }
        let deadline = std::time::Instant::now() + crate::transport::CLOSE_DRAIN;
        for t in &faces {
            t.wait_closed(deadline, caller);
        }
        self.changed.notify_all();
        self.matching_signal.notify();
    }
}

/// A liveliness token; withdrawn when dropped.
pub struct LivelinessToken {
    inner: Arc<Inner>,
    id: u32,
}

impl Drop for LivelinessToken {
    fn drop(&mut self) {
        // Dropped where the application (or a callback) lets go of it.
        let caller = &Caller::here();
        self.inner.undeclare_token(self.id, caller);
    }
}

/// A liveliness subscriber; undeclared when dropped.
pub struct LivelinessSubscriber {
    inner: Arc<Inner>,
    id: u32,
}

impl LivelinessSubscriber {
    /// The liveliness subscriber's id: its session's and its own within it.
    pub fn id(&self) -> weft_proto::network::EntityGlobalId {
        self.inner.entity_id(self.id)
    }
}

impl Drop for LivelinessSubscriber {
    fn drop(&mut self) {
        // Dropped where the application (or a callback) lets go of it.
        let caller = &Caller::here();
        self.inner.undeclare_liveliness_subscriber(self.id, caller);
    }
}

fn concrete(key: &str) -> Result<OwnedKeyExpr, SessionError> {
    let k = OwnedKeyExpr::new(key)?;
    if k.as_key_expr().is_wild() {
        return Err(SessionError::Wildcard(key.into()));
    }
    Ok(k)
}

fn random_zid() -> Result<ZenohId, OpenError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| OpenError::Random(e.to_string()))?;
    // Never zero; keep the top byte non-zero so the id is always 16 bytes long.
    bytes[15] |= 0x01;
    Ok(ZenohId::new(u128::from_le_bytes(bytes)).expect("non-zero"))
}
