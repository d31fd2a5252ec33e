//! weft: pub/sub, queries and liveliness over the Zenoh protocol (wire version 0x09),
//! interoperating with Eclipse Zenoh 1.x.
//!
//! ```no_run
//! use weft::{Config, PutOptions};
//!
//! let mut config = Config::default();
//! config.connect = vec!["tcp/127.0.0.1:7447".parse().unwrap()];
//! let session = weft::open(config).unwrap();
//! let _sub = session
//!     .declare_subscriber("demo/**", |s| println!("{} {:?}", s.key_expr, s.payload))
//!     .unwrap();
//! session.put("demo/a", b"hello", &PutOptions::default()).unwrap();
//! ```
//!
//! Layers (see ARCHITECTURE.md): the links (sockets, private), [`scouting`] (finding
//! nodes by multicast), the transports (established links over the sans-I/O machines of
//! `weft-transport`, private), the session (faces, declarations, interests, routing of
//! data), and [`api`] (what applications handle). [`endpoint`] names where to listen and
//! connect, [`config`] the rest; [`executor`] is the contract for bindings that run
//! callbacks elsewhere.

pub mod acl;
pub mod api;
mod clock;
pub mod config;
pub mod endpoint;
pub mod executor;
mod link;
pub mod log_limit;
pub mod metrics;
pub mod scouting;
mod session;
mod transport;

/// weft's TLS record layer opened to its benchmark and its differential fuzz target
/// against rustls (feature `tls-internals`); not part of weft's API.
#[cfg(feature = "tls-internals")]
#[doc(hidden)]
pub use link::tls::internals as tls_internals;

pub use api::{
    CancellationToken, FifoIter, FifoReceiver, GetOptions, Locality, Look, Payload, Publisher,
    PutOptions, Querier, Query, Queryable, Reply, ReplyError, ReplyKeyExpr, Sample, SampleKind,
    SharedKey, Subscriber, MAX_LOOK,
};
pub use clock::Clock;
pub use config::{AutoconnectStrategy, Config, ConfigError, GossipConfig, ScoutingConfig};
pub use scouting::{scout, scout_background, scout_with, Hello, Scout, ScoutError};
pub use session::{
    open, AdminInfo, DeclarationTraffic, EventsListener, FaceInfo, FaceVerdict, LinkEvent,
    LinkEventsListener, LinkStats, LivelinessSubscriber, LivelinessToken, MatchingKind,
    MatchingListener, MeshInfo, OpenError, PacedReplies, PriorityLinkInfo, RelayedDeclaration,
    RouteExplanation, Session, SessionError, TransportEvent, TransportEventsListener,
};
pub use weft_proto::core::{
    CongestionControl, Priority, Reliability, Timestamp, WhatAmI, WhatAmIMatcher, ZenohId,
};
pub use weft_proto::network::{EntityGlobalId, QueryTarget};
pub use weft_proto::printable::{printable, printable_bytes, Printable};
pub use weft_proto::zenoh::{Consolidation, SourceInfo};
