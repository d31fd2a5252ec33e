//! An established transport as one sans-I/O object: bytes and time in, transmits,
//! timeouts and events out.
//!
//! ```text
//!            send(msg, opts, now) ──► Outbound ──poll_transmit──► Transmit ──► link
//!   application / router                 ▲  transmitted(t, n, now) ◄──────────┘
//!                                        │
//!   link bytes ──handle_stream / handle_datagram──► Inbound ──► deliver(message, batch)
//!
//!   handle_timeout(now) at poll_timeout(): keep-alives, the peer's lease, overflow and
//!   batching deadlines;  poll_event(): Room, OverflowDrained, Ended(reason)
//! ```
//!
//! A [`Connection`] decides everything a transport decides — batching and its lanes per
//! priority, congestion control (`drop` deadlines, `block` waits, `wait_before_close`),
//! back-pressure (forwarded messages waiting in an overflow), fragmentation both ways,
//! leases and keep-alives, the Close that ends it — and who writes the link: at most one
//! [`Transmit`] is out at a time. Its driver only moves bytes: it writes what
//! [`Connection::poll_transmit`] gives, reports what the link took, feeds what the link
//! read, and calls [`Connection::handle_timeout`] when [`Connection::poll_timeout`] says.
//!
//! A driver whose reading and sending run on different threads splits it
//! ([`Connection::split`]): the [`Inbound`] half belongs to the thread reading the link
//! (delivery runs there without any lock of the sending half, so a callback may send on
//! the same connection), the [`Outbound`] half is shared by the senders and the writer.

mod direct;
mod inbound;
mod outbound;
mod transmit;

#[cfg(test)]
mod handoffs;
#[cfg(test)]
mod sim;
#[cfg(test)]
mod tests;

pub use direct::{DirectFragment, DirectWrite, FRAGMENT_SLICES};
pub use inbound::{Inbound, Input, InputError};
pub use outbound::{
    Outbound, OutboundStats, SendError, SendOptions, Sent, WriteHint, DIRECT_GAP, HOLD_ENOUGH,
    HOLD_LOOK, SENDER_WRITES_FROM, STREAMING_GAP,
};
pub use transmit::{Framing, Transmit, GATHER_MAX};

use std::sync::Arc;
use std::time::{Duration, Instant};

use weft_proto::network::NetworkMessage;
use weft_proto::transport::CloseReason;

use crate::establish::Negotiated;
use crate::queue::OverflowBudget;
use crate::rx::{Incoming, ReassemblyBudget};

/// The bounds of one connection, with the Zenoh configuration keys they come from.
#[derive(Debug, Clone)]
pub struct Limits {
    /// How long a `drop` message waits for room before it is dropped
    /// (`transport.link.tx.queue.congestion_control.drop.wait_before_drop`).
    pub wait_before_drop: Duration,
    /// How long a `block` message waits for room before this destination is closed
    /// (`transport.link.tx.queue.congestion_control.block.wait_before_close`).
    pub wait_before_close: Duration,
    /// How long a streaming sender's pending batch may wait for more
    /// (`transport.link.tx.batching.time_limit`); `None` turns waiting off
    /// (`transport.link.tx.batching.enabled: false`).
    pub batching_time_limit: Option<Duration>,
    /// The largest message reassembled from fragments
    /// (`transport.link.rx.max_message_size`).
    pub max_message: usize,
    /// Memory partially reassembled messages may hold, shared with other connections.
    pub reassembly_budget: Option<Arc<ReassemblyBudget>>,
    /// Memory forwarded messages waiting for room may hold, shared with other
    /// connections (`transport.link.tx.overflow_budget`).
    pub overflow_budget: Option<Arc<OverflowBudget>>,
    /// Whether an application's message in fragments is written by its sender when
    /// nobody writes ([`WriteHint::WriteNow`]), as an express one is: true where a write
    /// is a copy into the socket; false where the link seals what it writes (TLS), so
    /// that the driver's sealing runs beside the sender's next message.
    pub sender_writes_fragments: bool,
    /// Whether an application's `block` message in fragments, of any number, is written
    /// by its sender from its own bytes ([`Sent::Direct`]), the sender waiting for the
    /// socket as a `block` message waits for room ([`Outbound::direct_wait`]): on a link
    /// that encrypts what it carries (TLS seals as it writes, QUIC's edge runtime
    /// encrypts what its bridge takes), where the message's copy into the queue and its
    /// hand-over to the driver compete for the cores the encryption needs.
    pub sender_writes_any_size: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            wait_before_drop: Duration::from_millis(1),
            wait_before_close: Duration::from_secs(5),
            batching_time_limit: Some(Duration::from_micros(200)),
            max_message: 1 << 30,
            reassembly_budget: None,
            overflow_budget: None,
            sender_writes_fragments: true,
            sender_writes_any_size: false,
        }
    }
}

/// Why a connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndReason {
    /// This side closed it and its Close was written.
    Closed,
    /// The peer closed it.
    ClosedByPeer,
    /// The peer sent nothing for its whole lease.
    LeaseExpired {
        /// How long it was silent.
        silent: Duration,
    },
    /// The peer took nothing for `wait_before_close` while `block` messages waited.
    Congested {
        /// How long they waited.
        waited: Duration,
    },
    /// A forwarded `block` message could not wait: this destination's overflow, or the
    /// budget shared with the other destinations, is full.
    OverflowFull {
        /// Which bound.
        full: crate::queue::Full,
        /// The message's encoded length.
        len: usize,
    },
    /// Bytes that break the protocol; a Close (INVALID) was queued for the peer.
    Malformed(InputError),
    /// The link failed.
    LinkFailed,
}

/// What a connection tells its driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// There is room in the queue again: senders told [`SendError::NoRoom`] may retry.
    Room,
    /// The overflow of forwarded messages drained: the sources paused for it may be read
    /// again.
    OverflowDrained,
    /// The connection ended; once [`Connection::poll_transmit`] has nothing more, the
    /// link can be shut.
    Ended(EndReason),
}

/// An established transport, without I/O (see the module's documentation).
pub struct Connection {
    inbound: Inbound,
    outbound: Outbound,
}

impl Connection {
    /// The connection of a transport established with `n`, on a link with `framing`,
    /// starting `now`.
    pub fn new(n: &Negotiated, framing: Framing, limits: Limits, now: Instant) -> Self {
        Self {
            inbound: Inbound::new(n, framing, &limits, now),
            outbound: Outbound::new(n, framing, limits, now),
        }
    }

    /// The two halves, for a driver that reads on one thread and sends from others.
    pub fn split(self) -> (Inbound, Outbound) {
        (self.inbound, self.outbound)
    }

    /// The receiving half.
    pub const fn inbound(&self) -> &Inbound {
        &self.inbound
    }

    /// The sending half.
    pub const fn outbound(&self) -> &Outbound {
        &self.outbound
    }

    /// Queues a message (see [`Outbound::send`]), never as [`Sent::Direct`]: this
    /// interface writes only what [`Connection::poll_transmit`] hands out. A driver that
    /// writes such messages itself uses [`Connection::send_direct`].
    pub fn send(
        &mut self,
        msg: &NetworkMessage<'_>,
        opts: SendOptions,
        now: Instant,
    ) -> Result<Sent, SendError> {
        self.outbound.send_with(msg, opts, || now, false)
    }

    /// As [`Outbound::send`]: a [`Sent::Direct`] message is the caller's to write.
    pub fn send_direct(
        &mut self,
        msg: &NetworkMessage<'_>,
        opts: SendOptions,
        now: Instant,
    ) -> Result<Sent, SendError> {
        self.outbound.send(msg, opts, || now)
    }

    /// The sending half, to report how a [`Sent::Direct`] message was written.
    pub fn outbound_mut(&mut self) -> &mut Outbound {
        &mut self.outbound
    }

    /// Bytes read from a stream link (see [`Inbound::handle_stream`]). Malformed bytes
    /// end the connection: a Close (INVALID) is queued and [`Event::Ended`] says why.
    pub fn handle_stream<F>(&mut self, bytes: &[u8], now: Instant, deliver: F) -> Input
    where
        F: FnMut(&Incoming<'_, '_>, &[u8]),
    {
        let result = self.inbound.handle_stream(bytes, now, deliver);
        self.after_input(result, bytes.len())
    }

    /// One datagram from a datagram link (see [`Inbound::handle_datagram`]).
    pub fn handle_datagram<F>(&mut self, datagram: &[u8], now: Instant, deliver: F) -> Input
    where
        F: FnMut(&Incoming<'_, '_>, &[u8]),
    {
        let result = self.inbound.handle_datagram(datagram, now, deliver);
        self.after_input(result, datagram.len())
    }

    fn after_input(&mut self, result: Result<Input, InputError>, len: usize) -> Input {
        match result {
            Ok(input) => {
                if input.closed_by_peer {
                    self.outbound.fail(EndReason::ClosedByPeer);
                }
                input
            }
            Err(InputError::Ended) => Input {
                consumed: len,
                batches: 0,
                closed_by_peer: false,
            },
            Err(e) => {
                self.outbound.close(CloseReason::INVALID);
                self.outbound.end_after_close(EndReason::Malformed(e));
                Input {
                    consumed: len,
                    batches: 0,
                    closed_by_peer: false,
                }
            }
        }
    }

    /// The next batches to write (see [`Outbound::poll_transmit`]).
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        self.outbound.poll_transmit(now)
    }

    /// The link took `n` bytes of `transmit`; whether to poll again now (see
    /// [`Outbound::transmitted`]).
    pub fn transmitted(&mut self, transmit: Transmit, n: usize, now: Instant) -> bool {
        self.outbound.transmitted(transmit, n, now)
    }

    /// Closes the connection: what is queued goes out, then the Close message.
    pub fn close(&mut self, reason: CloseReason) -> WriteHint {
        self.outbound.close(reason)
    }

    /// Leases, keep-alives and deadlines at `now`.
    pub fn handle_timeout(&mut self, now: Instant) -> WriteHint {
        if let Some(reason) = self.inbound.expired(now) {
            self.inbound.end();
            self.outbound.close(CloseReason::EXPIRED);
            self.outbound.end_after_close(reason);
        }
        self.outbound.handle_timeout(now)
    }

    /// When [`Connection::handle_timeout`] is due next (`None` once ended).
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.inbound.poll_timeout(), self.outbound.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        let event = self.outbound.poll_event();
        if matches!(event, Some(Event::Ended(_))) {
            self.inbound.end();
        }
        event
    }
}
