//! Established unicast transports.
//!
//! Senders append messages to the pending batches (one per priority) and ask an I/O
//! thread to write them (`reactor`): it writes them, highest priority first, without
//! ever waiting for the socket. While it writes, senders keep appending: under load, small
//! messages share batches. An express message on an idle link is written by the sending
//! application thread itself, without waking anyone (the lowest latency). A message larger
//! than a batch is written in fragments by the sending application thread, which writes
//! any batch of a higher priority between two fragments itself; sent from an I/O thread
//! (forwarded by a router), it is queued as fragment batches instead. The I/O threads
//! read the links, hand each batch to the link's `reader::LinkRx` and watch the leases.
//!
//! The transmit queue itself (lanes, bounds, overflow, congestion decisions) is
//! `weft_transport::queue::TxQueue`, without I/O; this module drives it: who writes, who
//! waits, and the socket. Files: `establish` (the handshake, and a transport's start),
//! `reactor` (the I/O threads), `reader` (the receiving side), this module (sending).
//!
//! A transport may have links reserved for some priorities attached to it
//! ([`Pending::start_beside`], module `priority_links`).

mod establish;
mod priority_links;
mod reactor;
mod reader;

pub use establish::{accept, accept_with, open, open_with, Pending};
pub use reactor::{io_thread_count, MAX_IO_THREADS};
pub use weft_transport::queue::OverflowBudget;

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use thiserror::Error;
use weft_proto::core::{CongestionControl, Priority, Reliability, WhatAmI, ZenohId};
use weft_proto::network::NetworkMessage;
use weft_proto::transport::CloseReason;
use weft_transport::establish::{close_batch, EstablishError, Negotiated};
use weft_transport::queue::{slice_parts, Full, NoRoom, TxQueue, READY_MAX};
use weft_transport::rx::{Incoming, ReassemblyBudget};
use weft_transport::tx::{Pushed, TxError};

use crate::link::Link;
use priority_links::PriorityLinks;

/// Why a message was not sent.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SendError {
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
pub enum OpenError {
    /// The link failed.
    #[error("link error: {0}")]
    Io(#[from] io::Error),
    /// The handshake failed.
    #[error("handshake failed: {0}")]
    Handshake(#[from] EstablishError),
}

/// What the session does with a transport's traffic. Called from its reader thread.
pub trait Handler: Send + Sync + 'static {
    /// A network message arrived.
    fn on_message(&self, transport: &Arc<Transport>, incoming: &Incoming<'_, '_>);
    /// The transport is closed (by either side, or its lease expired).
    fn on_closed(&self, transport: &Arc<Transport>);
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
pub struct TxLimits {
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
pub struct RxLimits {
    /// The largest message reassembled from fragments
    /// (`transport.link.rx.max_message_size`); a larger one is discarded and counted.
    pub max_message: usize,
    /// Memory all partially reassembled messages may hold, shared between transports.
    pub budget: Option<Arc<ReassemblyBudget>>,
}

impl Default for RxLimits {
    fn default() -> Self {
        Self {
            max_message: MAX_MESSAGE,
            budget: None,
        }
    }
}

/// A transport's sending state, behind its lock: the queue, and who writes.
struct TxState {
    queue: TxQueue,
    /// Someone (an I/O thread, or an application thread sending an express or a
    /// fragmented message) holds the link for writing.
    writing: bool,
    /// An I/O thread was asked to write what is queued and has not started yet.
    write_scheduled: bool,
    /// An I/O thread found the link held by another writer: that writer tries once more
    /// before it stops (so that a writable event it raced with is not lost).
    pump_again: bool,
    /// The batch an I/O thread has begun writing and the socket has not taken whole
    /// yet; the link stays held (`writing`) until it is out.
    partial: Option<Partial>,
    /// Threads waiting on `idle` (for room in the queue, or for the link).
    idle_waiters: usize,
    /// Since when the overflow has held more than [`PAUSE_AT`] bytes, if it does.
    over_since: Option<Instant>,
    /// Links whose reading is paused until this overflow drains (see
    /// [`Transport::overflow`]).
    paused_sources: Vec<reactor::PausedSource>,
}

/// A batch the socket has taken part of.
struct Partial {
    batch: Vec<u8>,
    /// Bytes of the framed batch written so far.
    written: usize,
    /// When the socket last took some of it.
    progress: Instant,
}

/// Drops counted by a transport.
#[derive(Debug, Default)]
pub struct TransportStats {
    /// Messages dropped by congestion control `drop`.
    pub dropped: AtomicU64,
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
}

/// An established unicast transport.
pub struct Transport {
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
    last_tx_ms: AtomicU64,
    stats: TransportStats,
    /// The links reserved for some priorities attached to this transport.
    priority_links: PriorityLinks,
    /// For a link reserved for priorities: the main transport it is attached to.
    main: OnceLock<Weak<Self>>,
    /// The reader thread of a UDP link, once started (stream links are read by the I/O
    /// threads).
    reader_thread: OnceLock<std::thread::ThreadId>,
    /// Access control for this transport's messages, once its node has set it.
    access: OnceLock<Arc<crate::acl::Enforcer>>,
    /// Set when the link has been read to its end (after draining it on a local close).
    reader_done: Mutex<bool>,
    reader_exit: Condvar,
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
    pub fn peer_zid(&self) -> ZenohId {
        self.negotiated.peer_zid
    }

    /// The peer's role.
    pub fn peer_whatami(&self) -> WhatAmI {
        self.negotiated.peer_whatami
    }

    /// What the handshake agreed.
    pub const fn negotiated(&self) -> &Negotiated {
        &self.negotiated
    }

    /// The link, for logs.
    pub fn describe(&self) -> &str {
        &self.describe
    }

    /// This end of the link, as a locator (see [`crate::link::Link::local_describe`]).
    pub fn local_describe(&self) -> String {
        self.link.local_describe()
    }

    /// Counters.
    pub const fn stats(&self) -> &TransportStats {
        &self.stats
    }

    /// A shared handle on this transport (`None` once it is being dropped).
    pub fn shared(&self) -> Option<Arc<Self>> {
        self.me.upgrade()
    }

    /// The links reserved for some priorities attached to this transport.
    pub fn priority_links(&self) -> Vec<Arc<Self>> {
        self.priority_links.all()
    }

    /// Applies access control to what this transport carries from now on (once; a second
    /// call changes nothing).
    pub fn set_access_control(&self, enforcer: Arc<crate::acl::Enforcer>) {
        let _ = self.access.set(enforcer);
    }

    /// The access control applied to this transport, if any.
    pub fn access_control(&self) -> Option<&Arc<crate::acl::Enforcer>> {
        self.access.get()
    }

    /// The user name the peer authenticated as with user/password authentication, on a
    /// link this node accepted; `None` otherwise (the node that opens a link does not
    /// learn its peer's user name, as in Zenoh).
    pub fn authenticated_user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The common name of the peer's TLS certificate (see
    /// [`Link::peer_cert_common_name`](crate::link::Link::peer_cert_common_name)).
    pub fn peer_cert_common_name(&self) -> Option<&str> {
        self.link.peer_cert_common_name()
    }

    /// This link's protocol and local address (what access control knows of it).
    pub fn link_identity(&self) -> (&'static str, Option<std::net::IpAddr>) {
        (self.link.protocol_name(), self.link.local_ip())
    }

    /// Whether the transport is closed.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn lock(&self) -> MutexGuard<'_, TxState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends a network message on the channel (`priority`, `reliability`).
    pub fn send(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
    ) -> Result<(), SendError> {
        self.send_with(msg, priority, reliability, congestion, false)
    }

    /// As [`Transport::send`], for a message forwarded on behalf of another node: it never
    /// waits for this destination (see `Transport::overflow`). Every message sent from
    /// an I/O thread is sent so.
    pub fn send_forwarded(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
    ) -> Result<(), SendError> {
        self.send_with(msg, priority, reliability, congestion, true)
    }

    fn send_with(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
        after_batch: bool,
    ) -> Result<(), SendError> {
        if let Some(acl) = self.access.get() {
            let key = crate::acl::enforcer::full_key(msg);
            if !acl.allows(crate::acl::Flow::Egress, msg, key) {
                // Dropped, as Zenoh drops what its access control denies: counted and
                // logged by the enforcer, not an error of the sender.
                return Ok(());
            }
        }
        if let Some(link) = self.priority_links.for_priority(priority) {
            match link.send_with(msg, priority, reliability, congestion, after_batch) {
                // The link just closed: the message goes on the main transport.
                Err(SendError::Closed) => {}
                result => return result,
            }
        }
        let priority = if self.negotiated.qos {
            priority
        } else {
            Priority::Data
        };
        // An I/O thread serves every link of the process: it never waits for one.
        let on_io_thread = reactor::on_io_thread();
        let after_batch = after_batch || on_io_thread;
        let mut st = self.lock();
        // Behind forwarded messages already waiting, to keep their order.
        if after_batch && !st.queue.overflow_is_empty() {
            return self.overflow(st, msg, priority, reliability, congestion);
        }
        let mut drop_deadline = None;
        loop {
            if self.is_closed() {
                return Err(SendError::Closed);
            }
            match st.queue.push(msg, priority, reliability)? {
                Pushed::Appended => break,
                Pushed::Full if st.queue.lane_is_empty(priority) && after_batch => {
                    return self.queue_fragmented(st, msg, priority, reliability, congestion);
                }
                Pushed::Full if st.queue.lane_is_empty(priority) => {
                    return self.send_fragmented(st, msg, priority, reliability, congestion);
                }
                Pushed::Full if st.queue.has_room() => {
                    // The lane's batch is full: it waits for the writer, the message
                    // starts the next one.
                    st.queue.seal_lane(priority);
                    self.wake_writer(&mut st);
                }
                Pushed::Full if after_batch && congestion == CongestionControl::Block => {
                    return self.overflow(st, msg, priority, reliability, congestion);
                }
                Pushed::Full => {
                    st = self.wait_for_room(st, congestion, &mut drop_deadline)?;
                }
            }
        }
        if msg_is_express(msg) && !st.writing && !on_io_thread {
            return self.write_all(st);
        }
        if msg_is_express(msg) {
            // Under manual batching too: an express message does not wait for a flush.
            st.queue.request_flush();
            self.wake_writer(&mut st);
        } else if !self.manual_batching.load(Ordering::Relaxed) {
            self.wake_writer(&mut st);
        }
        Ok(())
    }

    /// Waits for the writer to make room. Under `drop`, at most `wait_before_drop` (not
    /// at all while the link is congested), then the message is dropped and counted.
    /// Under `block`, at most `wait_before_close`: a destination that takes nothing for
    /// that long is closed (never the sender's own link), and the message with it.
    fn wait_for_room<'s>(
        &'s self,
        mut st: MutexGuard<'s, TxState>,
        congestion: CongestionControl,
        deadline: &mut Option<Instant>,
    ) -> Result<MutexGuard<'s, TxState>, SendError> {
        let wait = if congestion == CongestionControl::Drop {
            self.limits.wait_before_drop
        } else {
            self.limits.wait_before_close
        };
        let now = Instant::now();
        let until = *deadline.get_or_insert(now + wait);
        match st.queue.no_room(congestion, until, now) {
            NoRoom::Wait(left) => Ok(self.wait_idle(st, Some(left))),
            NoRoom::Drop => {
                self.stats.dropped.fetch_add(1, Ordering::Relaxed);
                Err(SendError::Dropped)
            }
            NoRoom::Close => {
                drop(st);
                tracing::warn!(
                    "closing {} ({}): it took nothing for {:?} while a `block` message waited",
                    self.describe,
                    self.peer_zid(),
                    self.limits.wait_before_close
                );
                self.abort();
                Err(SendError::Closed)
            }
        }
    }

    /// Closes this transport at once, without flushing: its peer does not read. What
    /// waits in the overflow is dropped, and counted.
    fn abort(&self) {
        if !self.mark_closed() {
            return;
        }
        let (discarded, paused) = {
            let mut st = self.lock();
            (
                st.queue.discard_overflow(),
                std::mem::take(&mut st.paused_sources),
            )
        };
        self.stats.dropped.fetch_add(discarded, Ordering::Relaxed);
        paused.into_iter().for_each(reactor::resume);
        // A thread waiting for the socket to take a write sees the shutdown at once.
        self.link.shutdown();
    }

    /// Asks that the link whose batch is being handled on this I/O thread stop being read
    /// while this destination's overflow is large: its sender then waits for this
    /// destination, as Zenoh's `block` makes it wait, instead of the overflow growing.
    /// Not for longer than [`PAUSE_MAX`] in a row: a destination that stays behind that
    /// long loses the right to hold its sources, and its overflow's bounds apply.
    fn hold_source(&self, st: &mut TxState) {
        if !reactor::on_io_thread() || st.queue.overflow_bytes() <= PAUSE_AT {
            return;
        }
        let now = Instant::now();
        let since = *st.over_since.get_or_insert(now);
        if now.duration_since(since) < PAUSE_MAX {
            reactor::request_pause(self.me.clone());
        }
    }

    /// Registers a link paused on this destination's overflow, to be read again once it
    /// drains; false (do not pause it) when the overflow is already small again or the
    /// transport closed.
    pub(crate) fn add_paused_source(&self, source: reactor::PausedSource) -> bool {
        let mut st = self.lock();
        if self.is_closed() || st.queue.overflow_bytes() <= RESUME_AT {
            return false;
        }
        st.paused_sources.push(source);
        true
    }

    /// The overflow drained: the links paused on it, to read again (the caller wakes them
    /// once it has released the lock).
    fn drained(st: &mut TxState) -> Vec<reactor::PausedSource> {
        if st.queue.overflow_bytes() > RESUME_AT {
            return Vec::new();
        }
        st.over_since = None;
        std::mem::take(&mut st.paused_sources)
    }

    /// Queues a message larger than a batch, forwarded on behalf of another node, as
    /// fragment batches for this link's writer thread. The forwarding thread never
    /// writes to this link itself, so a destination that reads slowly, or not at all,
    /// cannot hold it (nor the other destinations and the lease handling behind it).
    ///
    /// Room is needed for every fragment: at most `READY_MAX` batches queued, or twice
    /// the message's own fragments for a message larger than that (so that one message
    /// can wait while the previous one is written). Without room, congestion control
    /// applies to the whole message: under `drop` it is dropped whole, before any of its
    /// fragments is queued (no sequence number is used); under `block` it waits.
    /// The payload is copied into the fragment batches (the zero-copy vectored write of
    /// [`Transport::send_fragmented`] needs the sending thread to write).
    fn queue_fragmented<'s>(
        &'s self,
        mut st: MutexGuard<'s, TxState>,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
    ) -> Result<(), SendError> {
        let mut head = st.queue.take_fragment_buf();
        let split = match msg.encode_split(&mut head) {
            Ok(split) => split,
            Err(e) => {
                st.queue.keep_fragment_buf(head);
                return Err(SendError::Tx(TxError::Encode(e)));
            }
        };
        let len = head.len() + split.bulk.len();
        let count = st.queue.fragment_count(len);
        let mut deadline = None;
        loop {
            if self.is_closed() {
                st.queue.keep_fragment_buf(head);
                return Err(SendError::Closed);
            }
            if st.queue.room_for_fragments(priority, count) {
                break;
            }
            if congestion == CongestionControl::Block {
                st.queue.keep_fragment_buf(head);
                return self.overflow(st, msg, priority, reliability, congestion);
            }
            match self.wait_for_room(st, congestion, &mut deadline) {
                Ok(guard) => st = guard,
                Err(e) => {
                    // The guard went with the failed wait: the buffer is not kept.
                    return Err(e);
                }
            }
        }
        let queued = st
            .queue
            .queue_fragments(split.parts(&head), len, priority, reliability);
        st.queue.keep_fragment_buf(head);
        queued?;
        self.wake_writer(&mut st);
        Ok(())
    }

    /// A forwarded message that finds no room: under `drop` it is dropped; under `block`
    /// it waits in this destination's overflow, encoded, while the forwarding thread goes
    /// on with its other destinations — only this destination's traffic waits. The writer
    /// moves it into the queue as room comes. If the oldest waits longer than
    /// `wait_before_close`, or the overflow would hold more than `OVERFLOW_MAX` bytes, or
    /// more than the budget shared with the other destinations has left, this destination
    /// is closed (never the sender).
    fn overflow(
        &self,
        mut st: MutexGuard<'_, TxState>,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
    ) -> Result<(), SendError> {
        if congestion == CongestionControl::Drop {
            st.queue.dropped_forwarded();
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            return Err(SendError::Dropped);
        }
        let mut encoded = Vec::new();
        msg.encode(&mut encoded).map_err(TxError::Encode)?;
        let len = encoded.len();
        let now = Instant::now();
        let waited = st.queue.overflow_oldest().map(|since| now - since);
        let refused = if waited.is_some_and(|w| w > self.limits.wait_before_close) {
            Err(None)
        } else {
            st.queue
                .push_overflow(encoded, priority, reliability, now)
                .map_err(Some)
        };
        if let Err(full) = refused {
            drop(st);
            let why = match full {
                None => format!(
                    "forwarded `block` messages waited {:?} for room",
                    waited.unwrap_or_default()
                ),
                Some(Full::Destination) => {
                    format!(
                        "{} bytes of forwarded `block` messages wait for room",
                        weft_transport::queue::OVERFLOW_MAX
                    )
                }
                Some(Full::Budget) => format!(
                    "transport.link.tx.overflow_budget is spent ({len} more bytes of forwarded \
                     `block` messages could not wait)"
                ),
            };
            tracing::warn!(
                "closing {} ({}): it takes too little ({why})",
                self.describe,
                self.peer_zid()
            );
            self.abort();
            return Err(SendError::Closed);
        }
        self.hold_source(&mut st);
        self.wake_writer(&mut st);
        Ok(())
    }

    /// Waits on `idle` (at most `timeout`), counted so that the writer wakes no one when
    /// no one waits.
    fn wait_idle<'s>(
        &'s self,
        mut st: MutexGuard<'s, TxState>,
        timeout: Option<Duration>,
    ) -> MutexGuard<'s, TxState> {
        st.idle_waiters += 1;
        let mut st = match timeout {
            None => self.idle.wait(st).unwrap_or_else(|e| e.into_inner()),
            Some(t) => {
                self.idle
                    .wait_timeout(st, t)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
        };
        st.idle_waiters -= 1;
        st
    }

    /// Wakes the threads waiting on `idle`, if any. After a batch is written, only once
    /// the queue is down to half (or while a fragmented message waits for its turn): a
    /// blocked sender then refills several batches per wake-up instead of one.
    fn notify_idle(&self, st: &TxState, batch_written: bool) {
        if st.idle_waiters == 0 {
            return;
        }
        if batch_written && st.queue.ready_count() > READY_MAX / 2 && !st.queue.is_fragmenting() {
            return;
        }
        self.idle.notify_all();
    }

    /// Asks an I/O thread to write what is queued (once until it starts): the one that
    /// serves this link, or this thread after the event it is handling if it is one.
    fn wake_writer(&self, st: &mut TxState) {
        if st.write_scheduled {
            return;
        }
        if let Some(me) = self.me.upgrade() {
            st.write_scheduled = true;
            reactor::schedule_write(me);
        }
    }

    /// Releases the link after an application thread's write: if anything came in the
    /// meantime, or an I/O thread found the link held, an I/O thread takes over.
    fn release_link(&self, st: &mut TxState) {
        st.writing = false;
        let manual = self.manual_batching.load(Ordering::Relaxed);
        if std::mem::take(&mut st.pump_again)
            || st.queue.has_work(manual)
            || !st.queue.overflow_is_empty()
        {
            self.wake_writer(st);
        }
        self.notify_idle(st, false);
    }

    /// Sends a message larger than a batch as fragments, written by this thread after
    /// everything already queued on the channel. Under `drop`, the message is dropped
    /// whole, before its first fragment, if the link is busy.
    fn send_fragmented<'s>(
        &'s self,
        mut st: MutexGuard<'s, TxState>,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
    ) -> Result<(), SendError> {
        let mut drop_deadline = None;
        // What is already queued on this lane goes first, and one fragmented message at
        // a time: fragments of a channel must have consecutive sequence numbers.
        loop {
            if !st.queue.lane_is_empty(priority) && st.queue.has_room() {
                st.queue.seal_lane(priority);
                self.wake_writer(&mut st);
            }
            if st.queue.lane_idle(priority) {
                break;
            }
            st = self.wait_for_room(st, congestion, &mut drop_deadline)?;
        }
        // The message is encoded but for its payload, which stays where it is; each
        // fragment is written straight from those parts, its header in front (a vectored
        // write: no copy of the payload on the way).
        let mut head = st.queue.take_fragment_buf();
        let planned = msg
            .encode_split(&mut head)
            .map_err(TxError::Encode)
            .and_then(|split| {
                let len = head.len() + split.bulk.len();
                let fragments = st.queue.start_fragmenting(len, priority, reliability)?;
                Ok((split, fragments))
            });
        let (split, fragments) = match planned {
            Ok(p) => p,
            Err(e) => {
                st.queue.keep_fragment_buf(head);
                return Err(e.into());
            }
        };
        let parts = split.parts(&head);
        let mut result = Ok(());
        for fragment in fragments {
            while st.writing {
                st = self.wait_idle(st, Some(Duration::from_millis(10)));
            }
            // Between fragments, higher priorities go first, written by this thread: no
            // hand-over to the writer thread on their way.
            let manual = self.manual_batching.load(Ordering::Relaxed);
            let pending_too = st.queue.pending_wanted(manual);
            (st, result) = self.drain(st, Some(priority), pending_too);
            if result.is_err() {
                break;
            }
            st.writing = true;
            drop(st);
            let [a, b, c] = slice_parts(parts, fragment.range());
            result = self.write_parts(&[fragment.head(), a, b, c]);
            st = self.lock();
            self.release_link(&mut st);
            if result.is_err() {
                break;
            }
        }
        st.queue.keep_fragment_buf(head);
        st.queue.end_fragmenting();
        self.wake_writer(&mut st);
        self.notify_idle(&st, false);
        result
    }

    /// Writes what is queued, highest priority first, without ever waiting: on an I/O
    /// thread. A batch the socket takes only part of is kept, and the rest written when
    /// the socket is writable again ([`Transport::pump`] on its writable event).
    pub(crate) fn pump(&self) {
        let mut st = self.lock();
        st.write_scheduled = false;
        if st.writing && st.partial.is_none() {
            // An application thread (or another I/O thread) writes: it tries again.
            st.pump_again = true;
            return;
        }
        if self.is_closed() && st.partial.is_none() {
            return;
        }
        st.writing = true;
        let mut wrote = false;
        loop {
            let (batch, mut written, progress) = match st.partial.take() {
                Some(p) => (p.batch, p.written, p.progress),
                None => {
                    let manual = self.manual_batching.load(Ordering::Relaxed);
                    match st.queue.next_batch(manual) {
                        Some(b) => (b, 0, Instant::now()),
                        None => break,
                    }
                }
            };
            drop(st);
            let before = written;
            let result = {
                let _writing = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
                self.link.write_batch_from(&batch, &mut written)
            };
            st = self.lock();
            match result {
                Ok(true) => {
                    self.count_written(batch.len());
                    st.queue.batch_written(batch);
                    wrote = true;
                    if let Err(waited) = self.refill(&mut st) {
                        st.writing = false;
                        drop(st);
                        tracing::warn!(
                            "closing {} ({}): forwarded `block` messages waited {waited:?} for room",
                            self.describe,
                            self.peer_zid()
                        );
                        self.abort();
                        return;
                    }
                    self.notify_idle(&st, true);
                }
                Ok(false) => {
                    let progress = if written > before {
                        Instant::now()
                    } else {
                        progress
                    };
                    st.partial = Some(Partial {
                        batch,
                        written,
                        progress,
                    });
                    // Unless it raced with a writable event another thread gave up on
                    // (then it tries again), the socket's next writable event goes on.
                    if !std::mem::take(&mut st.pump_again) {
                        self.notify_idle(&st, wrote);
                        return;
                    }
                }
                Err(_) => {
                    st.queue.recycle(batch);
                    st.writing = false;
                    drop(st);
                    self.fail_link();
                    return;
                }
            }
        }
        st.writing = false;
        st.pump_again = false;
        self.notify_idle(&st, wrote);
    }

    /// Whether full batches wait in the queue (bulk traffic).
    pub(crate) fn has_full_batches(&self) -> bool {
        self.lock().queue.ready_count() > 0
    }

    /// Moves forwarded messages waiting in the overflow into the queue as room allows
    /// (see [`TxQueue::refill`]); `Err` with how long the oldest has waited when that is
    /// past `wait_before_close`. Once the overflow is small again, the links paused on it
    /// are read again (waking them takes an I/O thread's command queue, never another
    /// transport's lock).
    fn refill(&self, st: &mut TxState) -> Result<(), Duration> {
        let dropped = st
            .queue
            .refill(Instant::now(), self.limits.wait_before_close)?;
        self.stats.dropped.fetch_add(dropped, Ordering::Relaxed);
        Self::drained(st).into_iter().for_each(reactor::resume);
        Ok(())
    }

    /// Since when a batch begun by an I/O thread has waited for the socket to take more
    /// of it, if one has.
    pub(crate) fn write_stalled_since(&self) -> Option<Instant> {
        self.lock().partial.as_ref().map(|p| p.progress)
    }

    /// Counts a batch written.
    fn count_written(&self, len: usize) {
        self.stats.batches_out.fetch_add(1, Ordering::Relaxed);
        self.stats
            .bytes_out
            .fetch_add(len as u64, Ordering::Relaxed);
        self.last_tx_ms
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// A write failed: the link is shut and the transport closed.
    fn fail_link(&self) {
        self.link.shutdown();
        let _ = self.mark_closed();
    }

    /// Writes everything queued and pending from this thread (express messages).
    fn write_all<'s>(&'s self, st: MutexGuard<'s, TxState>) -> Result<(), SendError> {
        self.drain(st, None, true).1
    }

    /// Writes, from this thread, the batches of priorities higher than `above` (all when
    /// `None`), highest first.
    fn drain<'s>(
        &'s self,
        mut st: MutexGuard<'s, TxState>,
        above: Option<Priority>,
        pending_too: bool,
    ) -> (MutexGuard<'s, TxState>, Result<(), SendError>) {
        st.writing = true;
        let mut result = Ok(());
        while let Some(batch) = st.queue.next_batch_above(above, pending_too) {
            drop(st);
            result = self.write(&batch);
            st = self.lock();
            if result.is_err() {
                st.queue.recycle(batch);
                break;
            }
            st.queue.batch_written(batch);
        }
        self.release_link(&mut st);
        (st, result)
    }

    fn write(&self, batch: &[u8]) -> Result<(), SendError> {
        self.write_parts(&[batch])
    }

    /// Writes one batch made of `parts` laid end to end.
    fn write_parts(&self, parts: &[&[u8]]) -> Result<(), SendError> {
        let writing = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        let written = self.link.write_batch_parts(parts);
        drop(writing);
        match written {
            Ok(()) => {
                self.count_written(parts.iter().map(|p| p.len()).sum());
                Ok(())
            }
            Err(_) => {
                self.fail_link();
                Err(SendError::Closed)
            }
        }
    }

    /// Marks the transport closed and wakes every thread waiting on it (the writer, and
    /// senders blocked for room, which then give up with `Closed`); returns whether it was
    /// open until now. Must not be called with the state lock held.
    fn mark_closed(&self) -> bool {
        let was_open = !self.closed.swap(true, Ordering::AcqRel);
        let _st = self.lock();
        self.idle.notify_all();
        was_open
    }

    /// Manual batching: while on, messages (but express ones) wait in the pending
    /// batches until [`Transport::flush_pending`] or until a batch is full.
    pub fn set_manual_batching(&self, on: bool) {
        for link in self.priority_links.all() {
            link.set_manual_batching(on);
        }
        self.manual_batching.store(on, Ordering::Relaxed);
        if !on {
            self.flush_pending();
        }
    }

    /// Hands every pending batch to the writer thread.
    pub fn flush_pending(&self) {
        for link in self.priority_links.all() {
            link.flush_pending();
        }
        let mut st = self.lock();
        st.queue.request_flush();
        self.wake_writer(&mut st);
    }

    /// Sends a KeepAlive if nothing else is being written or waits to be.
    fn keep_alive(&self) {
        let mut st = self.lock();
        if st.writing || !st.queue.push_keep_alive() {
            return;
        }
        self.wake_writer(&mut st);
    }

    /// Closes the transport, telling the peer why, after writing what is pending (so that
    /// a put followed by a close is not lost).
    pub fn close(&self, reason: CloseReason) {
        self.start_close(reason);
        self.wait_closed(Instant::now() + CLOSE_DRAIN);
    }

    /// The first half of [`Transport::close`]: writes what is pending and the Close,
    /// and ends the sending side, without waiting for the peer to end its own. Closing
    /// many transports, start them all, then wait for them all
    /// ([`Transport::wait_closed`]).
    pub fn start_close(&self, reason: CloseReason) {
        for link in self.priority_links.take_all() {
            link.close(reason);
        }
        if self.is_closed() {
            return;
        }
        // An I/O thread writes only what the socket takes at once.
        let on_io_thread = reactor::on_io_thread();
        let torn = {
            let mut st = self.lock();
            let deadline = Instant::now() + FLUSH_ON_CLOSE;
            while st.writing && !on_io_thread && Instant::now() < deadline {
                st = self.wait_idle(st, Some(Duration::from_millis(10)));
            }
            if !st.writing {
                // Forwarded messages waiting in the overflow go out too, as room comes.
                loop {
                    let result;
                    (st, result) = self.drain(st, None, true);
                    if result.is_err()
                        || st.queue.overflow_is_empty()
                        || self.refill(&mut st).is_err()
                    {
                        break;
                    }
                }
            }
            let discarded = st.queue.discard_overflow();
            self.stats.dropped.fetch_add(discarded, Ordering::Relaxed);
            // A batch begun and not finished: nothing more can follow it.
            st.partial.is_some()
        };
        if !self.mark_closed() {
            return;
        }
        let mut batch = Vec::new();
        let _ = close_batch(reason, &mut batch);
        let _writing = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        if !torn {
            let _ = self.link.write_batch(&batch);
        }
        // Only the sending side: closing a socket whose peer's bytes are still unread
        // makes the kernel reset the connection, and the peer's kernel then discards
        // what it had received but not yet read — the last messages sent. The reader
        // thread reads to the end of stream (the peer closes on our Close) first.
        self.link.shutdown_write();
    }

    /// Waits until `deadline` at most for the peer to have closed its side after
    /// [`Transport::start_close`] (its link was read to the end). Returns at once on an
    /// I/O thread or the link's reader thread (they are the ones reading it).
    pub fn wait_closed(&self, deadline: Instant) {
        if reactor::on_io_thread() || self.reader_thread.get() == Some(&std::thread::current().id())
        {
            return;
        }
        let mut done = self.reader_done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            done = self
                .reader_exit
                .wait_timeout(done, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Waits until the transport has ended: closed, and its link read to its end (or
    /// never served).
    pub fn wait_ended(&self) {
        let mut done = self.reader_done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            done = self
                .reader_exit
                .wait(done)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Marks the transport's link as read to its end, waking who waits for it.
    fn set_ended(&self) {
        *self.reader_done.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.reader_exit.notify_all();
    }

    fn last_tx(&self) -> Instant {
        self.epoch + Duration::from_millis(self.last_tx_ms.load(Ordering::Relaxed))
    }
}

/// Whether a message asks to be sent at once (the express bit of its QoS).
fn msg_is_express(msg: &NetworkMessage<'_>) -> bool {
    let qos = match msg {
        NetworkMessage::Push(m) => m.qos,
        NetworkMessage::Request(m) => m.qos,
        NetworkMessage::Response(m) => m.qos,
        NetworkMessage::ResponseFinal(m) => m.qos,
        NetworkMessage::Interest(m) => m.qos,
        NetworkMessage::Declare(m) => m.qos,
        NetworkMessage::Oam(m) => m.qos,
    };
    qos.is_express()
}

/// How long a `drop` message waits for room before it is dropped (Zenoh's
/// `transport.link.tx.queue.congestion_control.drop.wait_before_drop` default).
const WAIT_BEFORE_DROP: Duration = Duration::from_millis(1);

/// How long a `block` message waits for room before its destination is closed (Zenoh's
/// `transport.link.tx.queue.congestion_control.block.wait_before_close` default).
const WAIT_BEFORE_CLOSE: Duration = Duration::from_secs(5);

/// Overflow bytes beyond which a destination pauses the link whose forwarded messages
/// fill it (back-pressure, see [`Transport::hold_source`]).
const PAUSE_AT: usize = 2 << 20;

/// Overflow bytes under which the links paused on a destination are read again.
const RESUME_AT: usize = 512 << 10;

/// The longest a destination holds its sources paused in a row; a paused link is read
/// again after this long whatever its destination's state.
pub(crate) const PAUSE_MAX: Duration = Duration::from_secs(1);

/// How long a close waits for a write in progress before giving up on pending data.
const FLUSH_ON_CLOSE: Duration = Duration::from_secs(5);

/// How long a closed transport's reader reads on, discarding, for the peer to close its
/// side (so that closing the socket resets nothing the peer has not read yet).
pub(crate) const CLOSE_DRAIN: Duration = Duration::from_secs(1);

/// Largest message reassembled from fragments.
const MAX_MESSAGE: usize = 1 << 30;
