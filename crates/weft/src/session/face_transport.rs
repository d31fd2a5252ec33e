//! What the session needs of the transport behind a face.
//!
//! The session's routing (faces, declarations, queries, route caches) reaches the nodes
//! it is connected to only through [`FaceTransport`]. A real node is behind a
//! [`Transport`]; unit tests put an in-memory one there (`session::scenario`) and run
//! routing scenarios without sockets or threads.

use std::sync::Arc;
use std::time::Instant;

use weft_proto::core::{CongestionControl, Priority, Reliability, WhatAmI, ZenohId};
use weft_proto::network::NetworkMessage;
use weft_proto::transport::CloseReason;

use crate::transport::{Caller, SendError, Transport, TransportStats};

/// Control-plane messages are sent reliably at Control priority, blocking.
pub(crate) fn send_control(t: &dyn FaceTransport, msg: &NetworkMessage<'_>, caller: &Caller) {
    let _ = t.send(
        msg,
        Priority::Control,
        Reliability::Reliable,
        CongestionControl::Block,
        caller,
    );
}

/// The transport behind a face, as the session uses it.
pub(crate) trait FaceTransport: Send + Sync + 'static {
    /// The node's id.
    fn peer_zid(&self) -> ZenohId;
    /// The node's role.
    fn peer_whatami(&self) -> WhatAmI;
    /// The link, for logs.
    fn describe(&self) -> &str;
    /// When the handshake that made it started, if it had one.
    fn handshake_started(&self) -> Option<Instant> {
        None
    }
    /// Sends a message the session itself sends (see [`Transport::send`]).
    fn send(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
        caller: &Caller,
    ) -> Result<(), SendError>;
    /// Sends a message on behalf of another node: it never waits for this destination
    /// (see [`Transport::send_forwarded`]).
    fn send_forwarded(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
        caller: &Caller,
    ) -> Result<(), SendError>;
    /// Closes it, telling the node why.
    fn close(&self, reason: CloseReason, caller: &Caller);
    /// Starts closing it, writing what is pending until `flush_by` at most (see
    /// [`Transport::start_close_by`]).
    fn start_close_by(&self, reason: CloseReason, flush_by: Option<Instant>, caller: &Caller);
    /// Waits until the node has closed its side, or `deadline` (not at all for a thread
    /// serving links).
    fn wait_closed(&self, deadline: Instant, caller: &Caller);
    /// Whether it is closed.
    fn is_closed(&self) -> bool;
    /// Whether what is sent on one priority arrives, all of it, in order (a stream link;
    /// not a datagram link, which may lose some).
    fn keeps_order(&self) -> bool;
    /// Its counters.
    fn stats(&self) -> &TransportStats;
    /// The access control applied to it, if any.
    fn access_control(&self) -> Option<&Arc<crate::acl::Enforcer>>;
    /// Holds small messages until [`FaceTransport::flush_pending`] (`on`), or not.
    fn set_manual_batching(&self, on: bool);
    /// Sends what manual batching holds.
    fn flush_pending(&self);
    /// A shared handle on it, to keep (`None` once it is being dropped).
    fn handle(&self) -> Option<Arc<dyn FaceTransport>>;
    /// The socket transport behind it, for what only a link's life needs (links
    /// reserved for priorities, waiting for its end); `None` in memory.
    fn transport(&self) -> Option<Arc<Transport>>;
}

/// Whether `a` and `b` are the same transport.
pub(crate) fn same(a: &dyn FaceTransport, b: &dyn FaceTransport) -> bool {
    std::ptr::addr_eq(a as *const dyn FaceTransport, b as *const dyn FaceTransport)
}

impl FaceTransport for Transport {
    fn peer_zid(&self) -> ZenohId {
        Self::peer_zid(self)
    }

    fn peer_whatami(&self) -> WhatAmI {
        Self::peer_whatami(self)
    }

    fn describe(&self) -> &str {
        Self::describe(self)
    }

    fn handshake_started(&self) -> Option<Instant> {
        Some(Self::handshake_started(self))
    }

    fn send(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
        caller: &Caller,
    ) -> Result<(), SendError> {
        Self::send(self, msg, priority, reliability, congestion, caller)
    }

    fn send_forwarded(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
        caller: &Caller,
    ) -> Result<(), SendError> {
        Self::send_forwarded(self, msg, priority, reliability, congestion, caller)
    }

    fn close(&self, reason: CloseReason, caller: &Caller) {
        Self::close(self, reason, caller);
    }

    fn start_close_by(&self, reason: CloseReason, flush_by: Option<Instant>, caller: &Caller) {
        Self::start_close_by(self, reason, flush_by, caller);
    }

    fn wait_closed(&self, deadline: Instant, caller: &Caller) {
        Self::wait_closed(self, deadline, caller);
    }

    fn is_closed(&self) -> bool {
        Self::is_closed(self)
    }

    fn keeps_order(&self) -> bool {
        !self.is_datagram()
    }

    fn stats(&self) -> &TransportStats {
        Self::stats(self)
    }

    fn access_control(&self) -> Option<&Arc<crate::acl::Enforcer>> {
        Self::access_control(self)
    }

    fn set_manual_batching(&self, on: bool) {
        Self::set_manual_batching(self, on);
    }

    fn flush_pending(&self) {
        Self::flush_pending(self);
    }

    fn handle(&self) -> Option<Arc<dyn FaceTransport>> {
        self.shared().map(|t| t as Arc<dyn FaceTransport>)
    }

    fn transport(&self) -> Option<Arc<Transport>> {
        self.shared()
    }
}
