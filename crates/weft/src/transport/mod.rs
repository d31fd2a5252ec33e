//! Established unicast transports.
//!
//! Senders append messages to the pending batches (one per priority) and ask an I/O
//! thread to write them (`reactor`): it writes them, highest priority first, without
//! ever waiting for the socket. While it writes, senders keep appending: under load, small
//! messages share batches. An express message on an idle link is written by the sending
//! application thread itself, without waking anyone (the lowest latency), and so is a
//! message of 8 fragment batches or more (`SENDER_WRITES_FROM`; a batch of a higher
//! priority queued meanwhile goes between two of its writes); a smaller one is written by
//! the link's I/O thread while its sender makes the next, and so is one sent from an I/O
//! thread (forwarded by a router). The I/O threads
//! read the links, hand each batch to the link's `reader::LinkRx` and watch the leases.
//!
//! The transmit queue itself (lanes, bounds, overflow, congestion decisions) is
//! `weft_transport::queue::TxQueue`, without I/O; this module drives it: who writes, who
//! waits, and the socket. Files, one job each:
//! - `handshake`: the handshake, never waiting;
//! - `establish`: a transport's start, and the handshake run to its end on one thread;
//! - `reactor`: the I/O threads;
//! - `reader`: the receiving side;
//! - `received`: the batch a message came in, for the payloads kept from it;
//! - `send`: a message into the queue, and what a sender does without room;
//! - `backpressure`: forwarded `block` messages waiting for room, and pausing their source;
//! - `writer`: who writes the queue to the socket, and when;
//! - `closing`: flushing, the Close message, and the end of the link;
//! - `turn`: who calls (an application thread, or a thread serving links in its turn) and
//!   what that turn collects: writes to make after the event, a pause asked for the link
//!   being read, work left to after the read, the batch's clock reading;
//! - this module: the transport itself, its limits and its counters.
//!
//! A transport may have links reserved for some priorities attached to it
//! ([`Pending::start_beside`], module `priority_links`).

mod backpressure;
mod closing;
mod discards;
mod drops;
mod establish;
mod handshake;
mod priority_links;
mod reactor;
mod reader;
mod received;
mod send;
mod turn;
mod writer;

pub(crate) use closing::FLUSH_ON_CLOSE;
pub(crate) use discards::DiscardCounts;
pub use discards::DiscardReason;
pub(crate) use drops::DropCounts;
pub use drops::DropReason;
pub(crate) use establish::Pending;
pub(crate) use handshake::{Handshake, Wait};
pub(crate) use reactor::{current_io_thread, hand_over_writes, serve_socket, Readable, Served};
pub use reactor::{io_thread_count, MAX_IO_THREADS};
pub use received::{shared_batch_bytes, SHARED_BATCH_BUDGET};
pub(crate) use received::{ReceivedBatch, SharedBatch};
pub use turn::{after_this_read, before_blocking, hold_this_link};
pub(crate) use turn::{serve_links_in, AfterRead, Caller, Turn};
pub(crate) use weft_transport::queue::OverflowBudget;

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use thiserror::Error;
use weft_proto::core::{WhatAmI, ZenohId};
use weft_transport::connection::Outbound;
use weft_transport::establish::{EstablishError, Negotiated};
use weft_transport::rx::{Incoming, ReassemblyBudget};
use weft_transport::tx::TxError;

use crate::link::Link;
use priority_links::PriorityLinks;

/// Why a message was not sent.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum SendError {
    /// The transport is closed.
    #[error("the transport is closed")]
    Closed,
    /// Congestion control `drop`: the message was dropped whole, nothing of it was sent.
    #[error("dropped: the transmit queue is full")]
    Dropped,
    /// The message cannot be encoded.
    #[error("{0}")]
    Tx(#[from] TxError),
}

/// Why a transport could not be established.
#[derive(Debug, Error)]
pub(crate) enum OpenError {
    /// The link failed.
    #[error("link error: {0}")]
    Io(#[from] io::Error),
    /// The handshake failed.
    #[error("handshake failed: {0}")]
    Handshake(#[from] EstablishError),
}

/// What the session does with a transport's traffic. Called from its reader thread.
pub(crate) trait Handler: Send + Sync + 'static {
    /// A network message arrived, in `batch` (from which its payloads may be kept).
    fn on_message(
        &self,
        transport: &Arc<Transport>,
        incoming: &Incoming<'_, '_>,
        batch: &ReceivedBatch<'_>,
        caller: &Caller,
    );
    /// The transport is closed (by either side, or its lease expired).
    fn on_closed(&self, transport: &Arc<Transport>, caller: &Caller);
    /// A link reserved for some priorities of `main`'s node, started beside it, ended.
    fn on_priority_link_closed(&self, _main: &Arc<Transport>, _link: &Arc<Transport>) {}
    /// The bounds of reassembly: the largest message, and the budget shared with the
    /// other transports, if any.
    fn rx_limits(&self) -> RxLimits {
        RxLimits::default()
    }
    /// How long senders wait for room, and what forwarded messages may hold waiting.
    fn tx_limits(&self) -> TxLimits {
        TxLimits::default()
    }
}

/// How long a transport's senders wait for room in its queue, and what forwarded
/// messages may hold while they wait (see [`Transport::send_forwarded`]).
#[derive(Debug, Clone)]
pub(crate) struct TxLimits {
    /// How long a `drop` message waits for room before it is dropped
    /// (`transport.link.tx.queue.congestion_control.drop.wait_before_drop`).
    pub wait_before_drop: Duration,
    /// How long a `block` message waits for room before this destination is closed
    /// (`transport.link.tx.queue.congestion_control.block.wait_before_close`).
    pub wait_before_close: Duration,
    /// Memory that forwarded `block` messages waiting for room may hold, shared with the
    /// other transports (`transport.link.tx.overflow_budget`), if any.
    pub overflow_budget: Option<Arc<OverflowBudget>>,
}

impl TxLimits {
    /// The sending half's bounds (a streaming sender's batch waits at most 200 µs, a
    /// fifth of Zenoh's `transport.link.tx.batching.time_limit` default).
    fn connection(&self) -> weft_transport::connection::Limits {
        weft_transport::connection::Limits {
            wait_before_drop: self.wait_before_drop,
            wait_before_close: self.wait_before_close,
            overflow_budget: self.overflow_budget.clone(),
            batching_time_limit: Some(BATCH_HOLD),
            ..weft_transport::connection::Limits::default()
        }
    }
}

/// How long at most a streaming sender's pending batch waits for more.
const BATCH_HOLD: Duration = Duration::from_micros(200);

impl Default for TxLimits {
    fn default() -> Self {
        Self {
            wait_before_drop: WAIT_BEFORE_DROP,
            wait_before_close: WAIT_BEFORE_CLOSE,
            overflow_budget: None,
        }
    }
}

/// How much a transport's receiver may reassemble.
#[derive(Debug, Clone)]
pub(crate) struct RxLimits {
    /// The largest message reassembled from fragments
    /// (`transport.link.rx.max_message_size`); a larger one is discarded and counted.
    pub max_message: usize,
    /// Memory all partially reassembled messages may hold, shared between transports.
    pub budget: Option<Arc<ReassemblyBudget>>,
    /// What this transport's partial messages may hold of it, together
    /// (`transport.link.rx.reassembly_share`).
    pub share: usize,
}

impl Default for RxLimits {
    fn default() -> Self {
        Self {
            max_message: MAX_MESSAGE,
            budget: None,
            share: usize::MAX,
        }
    }
}

/// A transport's sending state, behind its lock: the sans-I/O sending half, which decides
/// what is written and who writes it, and what the shell keeps beside it.
struct TxState {
    out: Outbound,
    /// The sending half's counters when its drops were last counted here.
    counted: weft_transport::connection::OutboundStats,
    /// Threads waiting on `idle` (for room in the queue, or for the link).
    idle_waiters: usize,
    /// Since when the overflow has held messages, if it does.
    over_since: Option<Instant>,
    /// Links whose reading is paused until this overflow drains (see
    /// `Transport::hold_source`).
    paused_sources: Vec<reactor::PausedSource>,
}

/// Drops counted by a transport.
#[derive(Debug, Default)]
pub(crate) struct TransportStats {
    /// Messages dropped, whatever the reason (`drops` tells them apart).
    pub dropped: AtomicU64,
    /// Messages dropped, by reason.
    pub drops: DropCounts,
    /// Batches written.
    pub batches_out: AtomicU64,
    /// Batches read.
    pub batches_in: AtomicU64,
    /// Bytes written (batches, without stream prefixes).
    pub bytes_out: AtomicU64,
    /// Bytes read (batches, without stream prefixes).
    pub bytes_in: AtomicU64,
    /// Network messages received.
    pub messages_in: AtomicU64,
    /// Messages received and discarded, by reason.
    pub discarded: DiscardCounts,
}

/// An established unicast transport.
pub(crate) struct Transport {
    /// This transport, for handing it to an I/O thread.
    me: Weak<Self>,
    /// The I/O thread that writes it when asked by another thread.
    io_thread: usize,
    negotiated: Negotiated,
    describe: String,
    /// The user name the peer authenticated as (user/password authentication, on an
    /// accepted link).
    user: Option<String>,
    /// How long senders wait for room.
    limits: TxLimits,
    state: Mutex<TxState>,
    idle: Condvar,
    /// The link's socket: one descriptor, read by an I/O thread (or a UDP link's reader
    /// thread) and written under `write_lock`.
    link: Link,
    /// Held while a batch is written (never while waiting for the state lock).
    write_lock: Mutex<()>,
    closed: AtomicBool,
    manual_batching: AtomicBool,
    epoch: Instant,
    /// When the handshake that made it started.
    handshake_started: Instant,
    last_tx_ms: AtomicU64,
    stats: TransportStats,
    /// When this transport's drops were last logged (see `drops`).
    drop_log: Mutex<drops::DropLog>,
    /// The links reserved for some priorities attached to this transport.
    priority_links: PriorityLinks,
    /// For a link reserved for priorities: the main transport it is attached to.
    main: OnceLock<Weak<Self>>,
    /// Access control for this transport's messages, once its node has set it.
    access: OnceLock<Arc<crate::acl::Enforcer>>,
    /// Set when the link has been read to its end (after draining it on a local close).
    reader_done: Mutex<bool>,
    reader_exit: Condvar,
    /// What to call once it has ended ([`Transport::when_ended`]).
    on_end: Mutex<Vec<Box<dyn FnOnce() + Send>>>,
    /// Why it ended, as first known (see [`Transport::end_reason`]).
    end_reason: OnceLock<String>,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("peer", &self.negotiated.peer_zid)
            .field("link", &self.describe)
            .finish()
    }
}

impl Transport {
    /// The peer's id.
    pub(crate) fn peer_zid(&self) -> ZenohId {
        self.negotiated.peer_zid
    }

    /// When the handshake that made this transport started (its link accepted, or its
    /// connection begun).
    pub(crate) const fn handshake_started(&self) -> Instant {
        self.handshake_started
    }

    /// The peer's role.
    pub(crate) fn peer_whatami(&self) -> WhatAmI {
        self.negotiated.peer_whatami
    }

    /// What the handshake agreed.
    pub(crate) const fn negotiated(&self) -> &Negotiated {
        &self.negotiated
    }

    /// The link, for logs.
    pub(crate) fn describe(&self) -> &str {
        &self.describe
    }

    /// This end of the link, as a locator (see [`crate::link::Link::local_describe`]).
    pub(crate) fn local_describe(&self) -> String {
        self.link.local_describe()
    }

    /// Counters.
    pub(crate) const fn stats(&self) -> &TransportStats {
        &self.stats
    }

    /// A shared handle on this transport (`None` once it is being dropped).
    pub(crate) fn shared(&self) -> Option<Arc<Self>> {
        self.me.upgrade()
    }

    /// The links reserved for some priorities attached to this transport.
    pub(crate) fn priority_links(&self) -> Vec<Arc<Self>> {
        self.priority_links.all()
    }

    /// Applies access control to what this transport carries from now on (once; a second
    /// call changes nothing).
    pub(crate) fn set_access_control(&self, enforcer: Arc<crate::acl::Enforcer>) {
        let _ = self.access.set(enforcer);
    }

    /// The access control applied to this transport, if any.
    pub(crate) fn access_control(&self) -> Option<&Arc<crate::acl::Enforcer>> {
        self.access.get()
    }

    /// The user name the peer authenticated as with user/password authentication, on a
    /// link this node accepted; `None` otherwise (the node that opens a link does not
    /// learn its peer's user name, as in Zenoh).
    pub(crate) fn authenticated_user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The common name of the peer's TLS certificate (see
    /// [`Link::peer_cert_common_name`](crate::link::Link::peer_cert_common_name)).
    pub(crate) fn peer_cert_common_name(&self) -> Option<&str> {
        self.link.peer_cert_common_name()
    }

    /// The peer's address, for a link over IP.
    pub(crate) fn peer_ip(&self) -> Option<std::net::IpAddr> {
        self.link.peer_ip()
    }

    /// Whether its link carries one batch per datagram (UDP, serial), which may be lost,
    /// rather than a stream.
    pub(crate) fn is_datagram(&self) -> bool {
        self.link.is_datagram()
    }

    /// This link's protocol and local address (what access control knows of it).
    pub(crate) fn link_identity(&self) -> (&'static str, Option<std::net::IpAddr>) {
        (self.link.protocol_name(), self.link.local_ip())
    }

    /// Whether the transport is closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn lock(&self) -> MutexGuard<'_, TxState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn last_tx(&self) -> Instant {
        self.epoch + Duration::from_millis(self.last_tx_ms.load(Ordering::Relaxed))
    }
}

/// How long a `drop` message waits for room before it is dropped (Zenoh's
/// `transport.link.tx.queue.congestion_control.drop.wait_before_drop` default).
const WAIT_BEFORE_DROP: Duration = Duration::from_millis(1);

/// How long a `block` message waits for room before its destination is closed (Zenoh's
/// `transport.link.tx.queue.congestion_control.block.wait_before_close` default).
const WAIT_BEFORE_CLOSE: Duration = Duration::from_secs(5);

/// The longest a destination holds its sources paused in a row; a paused link is read
/// again after this long whatever its destination's state.
pub(crate) const PAUSE_MAX: Duration = Duration::from_secs(1);

/// How long a closed transport's reader reads on, discarding, for the peer to close its
/// side (so that closing the socket resets nothing the peer has not read yet).
pub(crate) const CLOSE_DRAIN: Duration = Duration::from_secs(1);

/// Largest message reassembled from fragments.
const MAX_MESSAGE: usize = 1 << 30;
