//! The sending half of a connection: messages into the transmit queue, congestion
//! control's answer when there is no room, who writes the link and when, keep-alives,
//! and the Close that ends it.
//!
//! Who writes is decided here and nowhere else: [`Outbound::poll_transmit`] hands out at
//! most one [`Transmit`] at a time, and whoever holds it writes the link. A sender learns
//! from [`Outbound::send`]'s [`WriteHint`] whether it should write itself (an express
//! message on an idle link: no hand-over on its way), wake the link's driver, or do
//! nothing because a writer is already on its way.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use weft_proto::core::{CongestionControl, Priority, Reliability};
use weft_proto::network::{NetworkMessage, SplitEncoding};
use weft_proto::transport::CloseReason;

use super::direct::{DirectFragment, DirectWrite};
use super::transmit::{Framing, Transmit, GATHER_MAX};
use super::{EndReason, Event, Limits};
use crate::establish::{close_batch, Negotiated};
use crate::queue::{NoRoom, TxQueue};
use crate::tx::{Pushed, TxError};

/// A pending batch this large is written without waiting for more.
pub const HOLD_ENOUGH: usize = 16 << 10;

/// Fragments from which an application's message is written by its sender when nobody
/// writes the link (half the queue's batches, [`crate::queue::READY_MAX`]): such a
/// message leaves too little room for the next to be made while the driver writes it, so
/// a hand-over gains nothing and costs a wake-up per message (peer to peer 1 MiB: 1.25×).
/// A smaller one is left to the driver, which writes it while the sender makes the next
/// (a Python publisher of 64 KiB samples: 0.65× when it wrote them itself), unless its
/// sender streams them ([`Sent::Direct`]).
pub const SENDER_WRITES_FROM: usize = crate::queue::READY_MAX / 2;

/// An application that makes its next message in fragments sooner than this after the
/// last one was written (or queued, when the driver writes it) streams them: it writes
/// each itself from its own bytes ([`Sent::Direct`]). A sender with more work of its own
/// between messages (a Python publisher of 64 KiB samples: about 20 µs) hands them to the
/// driver, which writes one while it makes the next.
pub const DIRECT_GAP: Duration = Duration::from_micros(5);

/// A sender whose messages come closer together than this is streaming: its pending batch
/// may wait for more (see [`Limits::batching_time_limit`]); one slower than this has its
/// messages written as they come.
pub const STREAMING_GAP: Duration = Duration::from_micros(20);

/// How soon a driver that found the pending batch held looks again: it writes the batch
/// once it stopped growing between two looks.
pub const HOLD_LOOK: Duration = Duration::from_micros(5);

/// How a message is to be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendOptions {
    /// Its priority (Data when QoS was not negotiated).
    pub priority: Priority,
    /// Its reliability.
    pub reliability: Reliability,
    /// What happens when the queue has no room.
    pub congestion: CongestionControl,
    /// Sent on behalf of another node (a router forwarding, a callback replying): it
    /// never waits for this destination; a `block` one waits in the overflow instead.
    pub forwarded: bool,
    /// When the sender first found no room for it ([`SendError::NoRoom`]'s `since`), on
    /// a retry: congestion control's deadlines count from there; `None` on a first try.
    pub since: Option<Instant>,
}

/// Whether the sender should write the link, after queuing a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteHint {
    /// Write it now from this thread: call [`Outbound::poll_transmit`] (an express
    /// message, or a large one in fragments, from the application, on an idle link). A
    /// forwarded express message gets it too: its forwarder writes it once the read that
    /// brought it is handed on, not after its other reads.
    WriteNow,
    /// Wake the link's driver: nobody is writing and nobody was asked to.
    Wake,
    /// Nothing: a writer is on its way, the link waits to be writable, a batch is held
    /// for more, or manual batching keeps the message until a flush.
    None,
}

/// Where a sent message went.
#[derive(Debug, PartialEq, Eq)]
pub enum Sent {
    /// In the transmit queue.
    Queued(WriteHint),
    /// To be written by its sender, now, from its own bytes: a message in fragments from
    /// an application that streams them, on a link nobody writes (see
    /// [`Outbound::direct_done`]).
    Direct(DirectWrite),
    /// A forwarded `block` message with no room: it waits in this destination's overflow.
    /// Its source should stop reading until [`Event::OverflowDrained`].
    Overflowed,
}

/// Why a message was not sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The connection is closed or closing.
    #[error("the connection is closed")]
    Closed,
    /// Congestion control `drop`: the message was dropped whole.
    #[error("dropped: the transmit queue is full")]
    Dropped,
    /// No room yet: wait for [`Event::Room`] (or `until`), then send again with
    /// [`SendOptions::since`] set to `since`.
    #[error("no room in the transmit queue yet")]
    NoRoom {
        /// When to ask again at the latest.
        until: Instant,
        /// When the sender first found no room.
        since: Instant,
    },
    /// The message cannot be encoded.
    #[error("{0}")]
    Tx(#[from] TxError),
}

/// Counters of the sending half.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutboundStats {
    /// Batches written whole.
    pub batches: u64,
    /// Bytes of batches written whole (without framing).
    pub bytes: u64,
    /// Messages dropped by congestion control `drop`.
    pub dropped_congestion: u64,
    /// Forwarded messages dropped because the overflow was full.
    pub dropped_overflow: u64,
    /// Forwarded messages waiting in the overflow discarded when the connection ended.
    pub dropped_closed: u64,
    /// Keep-alives queued.
    pub keep_alives: u64,
}

/// Who writes the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writer {
    /// Nobody, and nobody was asked.
    Idle,
    /// The driver was asked to write ([`WriteHint::Wake`]) and has not polled yet.
    Scheduled,
    /// A [`Transmit`] is out.
    Writing,
    /// The link took part of a transmit; the rest waits for it to be writable.
    Blocked,
    /// The driver found the pending batch held for more ([`Outbound::held_until`]) and
    /// comes back at the hold's end.
    Held,
}

/// How the connection ends, on the sending side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Open,
    /// Close asked: what is queued is written, then the Close message.
    Flushing(CloseReason),
    /// The Close message is queued or out.
    CloseQueued,
    /// Done: nothing more is written.
    Ended,
}

/// What the application's sender is doing, for holding a pending batch.
#[derive(Debug, Clone, Copy, Default)]
struct Stream {
    /// Messages the application queued, in all.
    pushes: u64,
    /// `pushes` when the driver last looked for something to write.
    seen: u64,
    /// When it last looked.
    seen_at: Option<Instant>,
    /// Since when the driver has held the pending batch.
    held_since: Option<Instant>,
    /// When the application's last message in fragments was queued for the driver, or
    /// written by the application itself.
    fragmented_at: Option<Instant>,
}

/// A message larger than a batch, its head encoded (see [`Outbound::encode_head`]).
struct Encoded<'m> {
    /// The message without its bulk (the connection's kept buffer).
    head: Vec<u8>,
    /// Where the bulk goes in the head, and the bulk.
    split: SplitEncoding<'m>,
    /// Bytes of the whole message.
    len: usize,
    /// Fragments it is cut into.
    count: usize,
}

/// The sending half of a connection.
pub struct Outbound {
    queue: TxQueue,
    framing: Framing,
    qos: bool,
    limits: Limits,
    writer: Writer,
    /// The rest of a transmit the link took part of.
    partial: Option<Transmit>,
    /// When the link last took bytes (or the connection started).
    last_progress: Instant,
    /// When a batch was last written whole (for keep-alives).
    last_tx: Instant,
    keep_alive: Duration,
    manual: bool,
    stream: Stream,
    /// A pending batch is held for more until then.
    hold_until: Option<Instant>,
    /// Senders were told there is no room: tell them when there is.
    room_wanted: bool,
    /// The driver polled while a transmit was out (see [`Outbound::transmitted`]).
    polled_while_writing: bool,
    /// The list of the last transmit's batches, emptied, for the next one.
    spare_list: Vec<Vec<u8>>,
    /// Forwarded messages wait in the overflow: tell when it drains.
    overflowing: bool,
    ending: Ending,
    /// Why the connection ends once its Close is out, when not closed by this side's
    /// choice (a lease expired, malformed input).
    end_reason: Option<EndReason>,
    events: VecDeque<Event>,
    stats: OutboundStats,
}

impl Outbound {
    /// The sending half of a transport established with `n`, starting `now`.
    pub fn new(n: &Negotiated, framing: Framing, limits: Limits, now: Instant) -> Self {
        let max_batch = match framing {
            Framing::Stream(width) => usize::from(n.batch_size).saturating_sub(width.len()),
            Framing::Datagram => usize::from(n.batch_size),
        };
        let own_lease = Duration::from_millis(n.own_lease_ms.max(1));
        Self {
            queue: TxQueue::new(n, max_batch, limits.overflow_budget.clone()),
            framing,
            qos: n.qos,
            limits,
            writer: Writer::Idle,
            partial: None,
            last_progress: now,
            last_tx: now,
            keep_alive: own_lease / crate::lease::KEEP_ALIVES_PER_LEASE,
            manual: false,
            stream: Stream::default(),
            hold_until: None,
            room_wanted: false,
            polled_while_writing: false,
            spare_list: Vec::with_capacity(GATHER_MAX),
            overflowing: false,
            ending: Ending::Open,
            end_reason: None,
            events: VecDeque::new(),
            stats: OutboundStats::default(),
        }
    }

    /// Counters.
    pub const fn stats(&self) -> OutboundStats {
        self.stats
    }

    /// Whether nothing more can be sent.
    pub fn is_closed(&self) -> bool {
        self.ending != Ending::Open
    }

    /// Whether the connection has ended on this side (the Close written, or it failed).
    pub fn is_ended(&self) -> bool {
        self.ending == Ending::Ended
    }

    /// Full batches waiting to be written.
    pub fn queued_batches(&self) -> usize {
        self.queue.ready_count() + usize::from(!self.queue.pending_is_empty())
    }

    /// Bytes of forwarded messages waiting in the overflow.
    pub fn overflow_bytes(&self) -> usize {
        self.queue.overflow_bytes()
    }

    /// Queues a message. See [`SendOptions`] for what `forwarded` and `since` change.
    /// `clock` gives the time: it is read only when the answer depends on it (no room),
    /// not for every message.
    pub fn send(
        &mut self,
        msg: &NetworkMessage<'_>,
        opts: SendOptions,
        clock: impl Fn() -> Instant,
    ) -> Result<Sent, SendError> {
        self.send_with(msg, opts, clock, true)
    }

    /// As [`Outbound::send`]; `direct: false` never answers [`Sent::Direct`] (for a driver
    /// that writes only what [`Outbound::poll_transmit`] hands out).
    pub(super) fn send_with(
        &mut self,
        msg: &NetworkMessage<'_>,
        opts: SendOptions,
        clock: impl Fn() -> Instant,
        direct: bool,
    ) -> Result<Sent, SendError> {
        if self.is_closed() {
            return Err(SendError::Closed);
        }
        let priority = if self.qos {
            opts.priority
        } else {
            Priority::Data
        };
        let reliability = opts.reliability;
        // Behind forwarded messages already waiting, to keep their order.
        if opts.forwarded && !self.queue.overflow_is_empty() {
            return self.overflow(msg, priority, reliability, opts.congestion, clock());
        }
        let mut fragments = 0;
        loop {
            match self.queue.push(msg, priority, reliability)? {
                Pushed::Appended => break,
                Pushed::Full if self.queue.lane_is_empty(priority) => {
                    let encoded = self.encode_head(msg)?;
                    if !opts.forwarded
                        && self.streams_fragments(opts.since, clock())
                        && direct
                        && self.may_write_direct(&encoded, opts.congestion)
                    {
                        self.stream.pushes += 1;
                        return self
                            .direct(encoded, priority, reliability, opts.congestion)
                            .map(Sent::Direct);
                    }
                    match self.queue_fragments(msg, encoded, priority, reliability, opts, &clock)? {
                        Some(count) => fragments = count,
                        None => return Ok(Sent::Overflowed),
                    }
                    break;
                }
                Pushed::Full if self.queue.has_room() => self.queue.seal_lane(priority),
                Pushed::Full if opts.forwarded => {
                    return self.overflow(msg, priority, reliability, opts.congestion, clock());
                }
                Pushed::Full => return Err(self.no_room(opts, clock())),
            }
        }
        let express = is_express(msg);
        if express {
            // Under manual batching too: an express message waits for no flush.
            self.queue.request_flush();
        }
        if opts.forwarded {
            // A forwarded express message asks its forwarder to write it as soon as the
            // read that brought it is handed on; other forwarded messages may wait for
            // the forwarder's next reads to join them.
            return Ok(Sent::Queued(self.hint(express)));
        }
        self.stream.pushes += 1;
        // An application's express message, or its large message in fragments (full
        // batches that no later message can join) where writing is a mere copy, is
        // written by its sender when nobody writes: no hand-over on its way. A message of
        // fewer fragments is left to the driver, which writes it while the sender makes
        // its next one.
        let write_now =
            express || (fragments >= SENDER_WRITES_FROM && self.limits.sender_writes_fragments);
        Ok(Sent::Queued(self.hint(write_now)))
    }

    /// The head of a message larger than a batch, encoded in the connection's kept
    /// buffer, its bulk left where it is.
    fn encode_head<'m>(&mut self, msg: &NetworkMessage<'m>) -> Result<Encoded<'m>, SendError> {
        let mut head = self.queue.take_fragment_buf();
        match msg.encode_split(&mut head) {
            Ok(split) => {
                let len = head.len() + split.bulk.len();
                let count = self.queue.fragment_count(len);
                Ok(Encoded {
                    head,
                    split,
                    len,
                    count,
                })
            }
            Err(e) => {
                self.queue.keep_fragment_buf(head);
                Err(SendError::Tx(TxError::Encode(e)))
            }
        }
    }

    /// Whether the application's message `encoded`, from a sender that streams such
    /// messages, is written by that sender from its own bytes ([`Sent::Direct`]): nothing
    /// waits to be written and nobody writes, on a stream link, and either the link's
    /// writes are mere copies and the message is at most [`GATHER_MAX`] fragments (what
    /// is left of it if the link takes part goes back as one transmit), or the link
    /// encrypts what it carries and the message is `block` (its sender waits for the
    /// socket as it would for room). Such a sender would only wait while the driver
    /// wrote the message, after a copy and a wake-up, on the cores it needs; a sender
    /// with work of its own between messages (a Python publisher) hands them over
    /// instead.
    fn may_write_direct(&self, encoded: &Encoded<'_>, congestion: CongestionControl) -> bool {
        let copies = self.limits.sender_writes_fragments && encoded.count <= GATHER_MAX;
        matches!(self.framing, Framing::Stream(_))
            && (copies || self.writes_any_size(congestion))
            && self.writer == Writer::Idle
            && self.partial.is_none()
            && self.ending == Ending::Open
            && !self.queue.is_fragmenting()
            && self.queue.ready_count() == 0
            && self.queue.pending_is_empty()
            && self.queue.overflow_is_empty()
    }

    /// Plans the fragments of `encoded` for its sender to write, the link its sender's
    /// until it says how the write went.
    fn direct(
        &mut self,
        encoded: Encoded<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
    ) -> Result<DirectWrite, SendError> {
        let Framing::Stream(width) = self.framing else {
            unreachable!("may_write_direct checked the link is a stream");
        };
        let Encoded {
            head,
            split,
            len,
            count,
        } = encoded;
        let fragments = match self.queue.start_fragmenting(len, priority, reliability) {
            Ok(fragments) => fragments,
            Err(e) => {
                self.queue.keep_fragment_buf(head);
                return Err(e.into());
            }
        };
        self.writer = Writer::Writing;
        Ok(DirectWrite {
            head,
            at: split.at,
            bulk_len: split.bulk.len(),
            fragments,
            width,
            count,
            handed: (0, 0),
            waits: self.writes_any_size(congestion),
            blocked_at: None,
        })
    }

    /// Whether the sender writes its message of `congestion` whatever its size, waiting
    /// for the socket ([`Limits::sender_writes_any_size`]: `block` messages).
    fn writes_any_size(&self, congestion: CongestionControl) -> bool {
        self.limits.sender_writes_any_size && congestion == CongestionControl::Block
    }

    /// The socket took no more of the sender's [`Sent::Direct`] message: until when its
    /// sender waits for the socket to take more, or `None` to hand the rest over
    /// ([`Outbound::direct_blocked`]). A sender writing its `block` message of any size
    /// ([`Limits::sender_writes_any_size`]) waits as such a message waits for room,
    /// `wait_before_close` in all, unless the connection is closing; any other hands
    /// over at once.
    pub fn direct_wait(&mut self, direct: &mut DirectWrite, now: Instant) -> Option<Instant> {
        if !direct.waits || self.ending != Ending::Open {
            return None;
        }
        let until = *direct.blocked_at.get_or_insert(now) + self.limits.wait_before_close;
        (now < until).then_some(until)
    }

    /// Whether the application streams messages in fragments: this one came (`asked`,
    /// its first try when it had to wait for room, else `now`) less than [`DIRECT_GAP`]
    /// after the one before was written by its sender, or queued for the driver.
    fn streams_fragments(&mut self, asked: Option<Instant>, now: Instant) -> bool {
        let asked = asked.unwrap_or(now);
        let before = self.stream.fragmented_at.replace(now);
        before.is_some_and(|at| asked.saturating_duration_since(at) < DIRECT_GAP)
    }

    /// The sender wrote the whole of its [`Sent::Direct`] message: the link is nobody's
    /// again. Then write what was queued meanwhile ([`WriteHint::WriteNow`]: the sender
    /// goes on with [`Outbound::poll_transmit`]), if anything.
    pub fn direct_done(&mut self, direct: DirectWrite, now: Instant) -> WriteHint {
        let (batches, bytes) = direct.handed;
        self.stats.batches += batches;
        self.stats.bytes += bytes;
        self.direct_end(direct, now);
        self.writer = Writer::Idle;
        self.polled_while_writing = false;
        if self.queue.has_work(self.manual) || self.ending != Ending::Open {
            WriteHint::WriteNow
        } else {
            WriteHint::None
        }
    }

    /// The link took `written` bytes of `unwritten[0]`, a fragment of the sender's
    /// [`Sent::Direct`] message, and no more now: the rest of it, the fragments handed
    /// out after it (the rest of `unwritten`, in order) and those not handed out yet
    /// are copied and wait for the link to be writable, as any transmit the link took
    /// part of (the driver writes them on its writable event, before anything queued
    /// since). A message of any size ([`Limits::sender_writes_any_size`]) with more
    /// fragments left than a transmit holds has waited its time for the socket
    /// ([`Outbound::direct_wait`]): the connection ends, congested.
    pub fn direct_blocked(
        &mut self,
        mut direct: DirectWrite,
        unwritten: &[DirectFragment],
        written: usize,
        bulk: &[u8],
        now: Instant,
    ) {
        // The fragments handed out before these went whole.
        let (batches, bytes) = direct.handed;
        let unwritten_bytes: usize = unwritten.iter().map(DirectFragment::batch_len).sum();
        self.stats.batches += batches - unwritten.len() as u64;
        self.stats.bytes += bytes - unwritten_bytes as u64;
        if direct.left() + unwritten.len() > GATHER_MAX {
            // More than a transmit holds: a `block` message of any size that waited
            // its time for the socket, which ends the connection as such a message's wait
            // for room does.
            let waited = direct
                .blocked_at
                .map_or(Duration::ZERO, |at| now.saturating_duration_since(at));
            self.direct_end(direct, now);
            self.writer = Writer::Idle;
            self.fail(EndReason::Congested { waited });
            return;
        }
        // At most GATHER_MAX fragments in all, checked above.
        let mut rest = [unwritten[0]; GATHER_MAX];
        rest[..unwritten.len()].copy_from_slice(unwritten);
        let mut len = unwritten.len();
        while let Some(f) = direct.next_fragment() {
            rest[len] = f;
            len += 1;
        }
        let parts = direct.parts(bulk);
        let mut batches = std::mem::take(&mut self.spare_list);
        for f in &rest[..len] {
            batches.push(f.to_batch(parts, self.queue.take_buf()));
        }
        let mut transmit = Transmit::new(batches, self.framing);
        transmit.advance(written);
        self.direct_end(direct, now);
        if written > 0 {
            self.last_progress = now;
        }
        self.partial = Some(transmit);
        self.writer = Writer::Blocked;
    }

    /// Writing the sender's [`Sent::Direct`] message failed: the connection ends.
    pub fn direct_failed(&mut self, direct: DirectWrite, now: Instant) {
        self.direct_end(direct, now);
        self.writer = Writer::Idle;
        self.fail(EndReason::LinkFailed);
    }

    /// The lane is free again and the head's buffer kept; the fragments written whole are
    /// counted.
    fn direct_end(&mut self, direct: DirectWrite, now: Instant) {
        // The sender's next message is judged from here: its own time between messages,
        // not the write's.
        self.stream.fragmented_at = Some(now);
        self.queue.end_fragmenting();
        self.queue.keep_fragment_buf(direct.head);
        self.last_tx = now;
        self.last_progress = now;
    }

    /// A message larger than a batch, as fragment batches behind what its lane holds
    /// (copied): room for all of them or none (a message goes whole or not at all).
    /// How many fragments were queued, or `None` when it went to the overflow instead (a
    /// forwarded one without room).
    fn queue_fragments(
        &mut self,
        msg: &NetworkMessage<'_>,
        encoded: Encoded<'_>,
        priority: Priority,
        reliability: Reliability,
        opts: SendOptions,
        clock: &impl Fn() -> Instant,
    ) -> Result<Option<usize>, SendError> {
        let Encoded {
            head,
            split,
            len,
            count,
        } = encoded;
        if !self.queue.room_for_fragments(priority, count) {
            self.queue.keep_fragment_buf(head);
            if opts.forwarded {
                self.overflow(msg, priority, reliability, opts.congestion, clock())?;
                return Ok(None);
            }
            return Err(self.no_room(opts, clock()));
        }
        let queued = self
            .queue
            .queue_fragments(split.parts(&head), len, priority, reliability);
        self.queue.keep_fragment_buf(head);
        queued.map(|()| Some(count)).map_err(SendError::from)
    }

    /// Congestion control's answer to a sender that found no room.
    fn no_room(&mut self, opts: SendOptions, now: Instant) -> SendError {
        let wait = match opts.congestion {
            CongestionControl::Drop => self.limits.wait_before_drop,
            _ => self.limits.wait_before_close,
        };
        let since = opts.since.unwrap_or(now);
        match self.queue.no_room(opts.congestion, since + wait, now) {
            NoRoom::Wait(left) => {
                self.room_wanted = true;
                SendError::NoRoom {
                    until: now + left,
                    since,
                }
            }
            NoRoom::Drop => {
                self.stats.dropped_congestion += 1;
                SendError::Dropped
            }
            NoRoom::Close => {
                self.fail(EndReason::Congested {
                    waited: self.limits.wait_before_close,
                });
                SendError::Closed
            }
        }
    }

    /// A forwarded message with no room never waits: under `block` it waits in the
    /// overflow (encoded); under `drop`, or past the overflow's bounds, it is dropped.
    fn overflow(
        &mut self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
        now: Instant,
    ) -> Result<Sent, SendError> {
        if congestion == CongestionControl::Drop {
            self.queue.dropped_forwarded();
            self.stats.dropped_congestion += 1;
            return Err(SendError::Dropped);
        }
        let mut encoded = Vec::new();
        msg.encode(&mut encoded)
            .map_err(|e| SendError::Tx(TxError::Encode(e)))?;
        if let Some(oldest) = self.queue.overflow_oldest() {
            let waited = now.saturating_duration_since(oldest);
            if waited > self.limits.wait_before_close {
                self.fail(EndReason::Congested { waited });
                return Err(SendError::Closed);
            }
        }
        let len = encoded.len();
        match self
            .queue
            .push_overflow(encoded, priority, reliability, now)
        {
            Ok(()) => {
                self.overflowing = true;
                Ok(Sent::Overflowed)
            }
            // A destination that takes too little is closed, never the sender.
            Err(full) => {
                self.stats.dropped_overflow += 1;
                self.fail(EndReason::OverflowFull { full, len });
                Err(SendError::Closed)
            }
        }
    }

    /// What the sender of a message just queued should do about writing it.
    fn hint(&mut self, write_now: bool) -> WriteHint {
        match self.writer {
            Writer::Writing | Writer::Blocked => return WriteHint::None,
            // The driver was asked and has not begun: an express sender does not wait
            // for it (the driver then finds less to write, or nothing).
            Writer::Scheduled if write_now => return WriteHint::WriteNow,
            Writer::Scheduled => return WriteHint::None,
            Writer::Held if write_now => return WriteHint::WriteNow,
            // The driver looks again soon, unless there is no point holding any more
            // (the batch is big enough, a lane is full).
            Writer::Held if self.may_hold() => return WriteHint::None,
            Writer::Held | Writer::Idle => {}
        }
        // A message was just queued: there is work, unless manual batching keeps it.
        if self.manual && !self.queue.flush_requested() {
            return WriteHint::None;
        }
        if write_now {
            return WriteHint::WriteNow;
        }
        self.writer = Writer::Scheduled;
        WriteHint::Wake
    }

    /// Whether the pending batches may wait for more: a batching time limit is set,
    /// only pending batches wait (small, nothing full), and nothing asked for a flush or
    /// waits for room.
    fn may_hold(&self) -> bool {
        self.limits.batching_time_limit.is_some()
            && !self.manual
            && self.queue.ready_count() == 0
            && !self.queue.pending_is_empty()
            && !self.queue.flush_requested()
            && self.queue.pending_bytes() < HOLD_ENOUGH
            && !self.room_wanted
            && self.ending == Ending::Open
    }

    /// Until when the driver, looking at `now`, leaves the pending batches to grow: while
    /// they may be held ([`Outbound::may_hold`]) and the application streams into them
    /// (since the driver's last look, more than one message and at least one per
    /// [`STREAMING_GAP`]), for
    /// [`HOLD_LOOK`] more, at most [`Limits::batching_time_limit`] in all. A message that
    /// comes alone never waits, nor does a batch that stopped growing, nor one fed by a
    /// slower sender (a 10 kHz stream).
    fn hold(&mut self, now: Instant) -> Option<Instant> {
        let s = &mut self.stream;
        let grew = s.pushes - s.seen;
        let since_look = s.seen_at.map(|at| now.saturating_duration_since(at));
        s.seen = s.pushes;
        s.seen_at = Some(now);
        // More than one message since the last look (a message that comes alone, such
        // as a ping-pong's, never waits; once holding, any), at least one per
        // STREAMING_GAP.
        let holding = self.stream.held_since.is_some();
        let streaming = (grew > 1 || (holding && grew > 0))
            && since_look
                .is_some_and(|d| u128::from(grew) * STREAMING_GAP.as_nanos() >= d.as_nanos());
        let limit = self.limits.batching_time_limit.unwrap_or_default();
        if !streaming || !self.may_hold() {
            self.stream.held_since = None;
            return None;
        }
        let since = *self.stream.held_since.get_or_insert(now);
        if now.saturating_duration_since(since) >= limit {
            self.stream.held_since = None;
            return None;
        }
        Some(now + HOLD_LOOK)
    }

    /// The next batches to write, and the right to write them: `None` while another
    /// [`Transmit`] is out, when nothing is to be written, or while the pending batch is
    /// held for more (then [`Outbound::poll_timeout`] says until when).
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        self.hold_until = None;
        match self.writer {
            Writer::Writing => {
                // Whoever holds the transmit tries once more before it stops, if the
                // link turns out full: this poll may come from a writable event it
                // raced with.
                self.polled_while_writing = true;
                return None;
            }
            Writer::Blocked => {
                self.writer = Writer::Writing;
                return self.partial.take();
            }
            Writer::Idle | Writer::Scheduled | Writer::Held => {}
        }
        if self.ending == Ending::Ended {
            self.writer = Writer::Idle;
            return None;
        }
        if let Some(until) = self.hold(now) {
            self.hold_until = Some(until);
            self.writer = Writer::Held;
            return None;
        }
        let Some(first) = self.next_batch(now) else {
            self.writer = Writer::Idle;
            return self.close_if_flushed();
        };
        let mut batches = std::mem::take(&mut self.spare_list);
        batches.push(first);
        // Full batches waiting behind it go in the same write on a stream link.
        while batches.len() < GATHER_MAX && matches!(self.framing, Framing::Stream(_)) {
            match self.queue.next_batch_above(None, false) {
                Some(b) => batches.push(b),
                None => break,
            }
        }
        self.writer = Writer::Writing;
        Some(Transmit::new(batches, self.framing))
    }

    /// Keeps an emptied transmit's list of batches for the next transmit (no allocation
    /// per write).
    fn keep_list(&mut self, transmit: Transmit) {
        let list = transmit.into_list();
        if list.capacity() >= GATHER_MAX {
            self.spare_list = list;
        }
    }

    /// The next batch to write; while closing, forwarded messages still in the overflow
    /// follow what was queued (those that waited past `wait_before_close` are discarded,
    /// counted).
    fn next_batch(&mut self, now: Instant) -> Option<Vec<u8>> {
        if let Some(batch) = self.queue.next_batch(self.manual) {
            return Some(batch);
        }
        if !matches!(self.ending, Ending::Flushing(_)) || self.queue.overflow_is_empty() {
            return None;
        }
        match self.queue.refill(now, self.limits.wait_before_close) {
            Ok(dropped) => self.stats.dropped_overflow += dropped,
            Err(_) => self.stats.dropped_closed += self.queue.discard_overflow(),
        }
        self.queue.request_flush();
        self.queue.next_batch(self.manual)
    }

    /// Once everything queued is out while closing: the Close message, last.
    fn close_if_flushed(&mut self) -> Option<Transmit> {
        let Ending::Flushing(reason) = self.ending else {
            return None;
        };
        if self.overflowing {
            self.overflowing = false;
            self.events.push_back(Event::OverflowDrained);
        }
        self.ending = Ending::CloseQueued;
        let mut batch = Vec::new();
        if close_batch(reason, &mut batch).is_err() {
            self.ending = Ending::Ended;
            return None;
        }
        self.writer = Writer::Writing;
        Some(Transmit::new(vec![batch], self.framing))
    }

    /// The link took `n` bytes of `transmit` (a stream link may take part of it; a
    /// datagram link reports whole datagrams). A transmit written whole gives its buffers
    /// back; the rest of one written in part waits for the link to be writable (the
    /// driver polls again then; senders are not told to wake it meanwhile).
    ///
    /// Returns whether the driver should poll again now: after a transmit written whole,
    /// or when a writable event came while it wrote (the link may have room again).
    pub fn transmitted(&mut self, mut transmit: Transmit, n: usize, now: Instant) -> bool {
        if n > 0 {
            self.last_progress = now;
        }
        let missed = std::mem::take(&mut self.polled_while_writing);
        if !transmit.advance(n) {
            self.partial = Some(transmit);
            self.writer = Writer::Blocked;
            return missed;
        }
        self.finish_transmit(transmit, now);
        true
    }

    /// A transmit written whole: its buffers back, and what that changes.
    fn finish_transmit(&mut self, mut transmit: Transmit, now: Instant) {
        self.writer = Writer::Idle;
        self.last_tx = now;
        for batch in transmit.take_batches() {
            self.stats.batches += 1;
            self.stats.bytes += batch.len() as u64;
            self.queue.batch_written(batch);
        }
        self.keep_list(transmit);
        if self.ending == Ending::CloseQueued {
            self.ending = Ending::Ended;
            let reason = self.end_reason.take().unwrap_or(EndReason::Closed);
            self.events.push_back(Event::Ended(reason));
            return;
        }
        match self.queue.refill(now, self.limits.wait_before_close) {
            Ok(dropped) => self.stats.dropped_overflow += dropped,
            Err(waited) => {
                self.fail(EndReason::Congested { waited });
                return;
            }
        }
        // Half the queue still to write keeps the destination busy until the sources
        // paused on it bring more, and spaces the pauses of a source faster than it.
        if self.overflowing
            && self.queue.overflow_is_empty()
            && self.queue.ready_count() <= crate::queue::READY_MAX / 2
        {
            self.overflowing = false;
            self.events.push_back(Event::OverflowDrained);
        }
        // Senders waiting for room are told once the queue is down to half: each then
        // fills several batches per wake-up instead of one.
        if self.room_wanted && self.queue.ready_count() <= crate::queue::READY_MAX / 2 {
            self.room_wanted = false;
            self.events.push_back(Event::Room);
        }
    }

    /// The link failed while writing `transmit`: the connection ends.
    pub fn link_failed(&mut self, mut transmit: Transmit) {
        for batch in transmit.take_batches() {
            self.queue.recycle(batch);
        }
        self.keep_list(transmit);
        self.writer = Writer::Idle;
        self.fail(EndReason::LinkFailed);
    }

    /// Since when the link has taken nothing of a transmit it took part of, if it has
    /// one waiting.
    pub fn stalled_since(&self) -> Option<Instant> {
        (self.writer == Writer::Blocked).then_some(self.last_progress)
    }

    /// Until when the pending batch is held for more, if the driver found it held (it
    /// polls again then: [`Outbound::poll_timeout`] includes it).
    pub fn held_until(&self) -> Option<Instant> {
        if self.writer == Writer::Held {
            self.hold_until
        } else {
            None
        }
    }

    /// Asks for a writer if something is to be written and nobody writes or was asked
    /// (a sender about to wait for room).
    pub fn kick(&mut self) -> WriteHint {
        match self.writer {
            Writer::Idle | Writer::Held if self.queue.has_work(self.manual) => {
                self.writer = Writer::Scheduled;
                WriteHint::Wake
            }
            _ => WriteHint::None,
        }
    }

    /// Whether full batches wait to be written (bulk traffic).
    pub fn has_full_batches(&self) -> bool {
        self.queue.ready_count() > 0
    }

    /// When a batch was last written whole (or the connection started).
    pub const fn last_tx(&self) -> Instant {
        self.last_tx
    }

    /// Whether forwarded messages wait in the overflow.
    pub fn is_overflowing(&self) -> bool {
        !self.queue.overflow_is_empty()
    }

    /// Queues a KeepAlive if nothing is being written or waits to be; returns what the
    /// caller should do about writing it.
    pub fn keep_alive(&mut self) -> WriteHint {
        if self.ending != Ending::Open || !matches!(self.writer, Writer::Idle | Writer::Held) {
            return WriteHint::None;
        }
        if !self.queue.push_keep_alive() {
            return WriteHint::None;
        }
        self.stats.keep_alives += 1;
        self.writer = Writer::Scheduled;
        WriteHint::Wake
    }

    /// Ends the connection at once, without a Close (the link is gone or useless);
    /// forwarded messages in the overflow are discarded (counted).
    pub fn abort(&mut self, reason: EndReason) {
        self.fail(reason);
    }

    /// Ends the connection at once, without a Close (the link is gone or useless).
    pub(super) fn fail(&mut self, reason: EndReason) {
        if self.ending == Ending::Ended {
            return;
        }
        self.ending = Ending::Ended;
        self.stats.dropped_closed += self.queue.discard_overflow();
        self.partial = None;
        if self.overflowing {
            self.overflowing = false;
            self.events.push_back(Event::OverflowDrained);
        }
        if self.room_wanted {
            self.room_wanted = false;
            self.events.push_back(Event::Room);
        }
        self.events.push_back(Event::Ended(reason));
    }

    /// Closes the connection: what is queued is written, and the forwarded messages in
    /// the overflow, then the Close message goes out with `reason`.
    /// Returns what the caller should do about writing.
    pub fn close(&mut self, reason: CloseReason) -> WriteHint {
        if self.ending != Ending::Open {
            return WriteHint::None;
        }
        self.ending = Ending::Flushing(reason);
        self.queue.request_flush();
        match self.writer {
            Writer::Idle | Writer::Held => {
                self.writer = Writer::Scheduled;
                WriteHint::Wake
            }
            _ => WriteHint::None,
        }
    }

    /// The Close queued by [`Outbound::close`] ends the connection for `reason` rather
    /// than as this side's own choice.
    pub(super) fn end_after_close(&mut self, reason: EndReason) {
        if self.ending != Ending::Ended {
            self.end_reason.get_or_insert(reason);
        }
    }

    /// Manual batching: while on, messages (but express ones) wait in the pending batches
    /// until [`Outbound::flush`] or until a batch is full.
    pub fn set_manual_batching(&mut self, on: bool) -> WriteHint {
        self.manual = on;
        if on {
            WriteHint::None
        } else {
            self.flush()
        }
    }

    /// Asks for the pending batches to be written.
    pub fn flush(&mut self) -> WriteHint {
        self.queue.request_flush();
        if !self.queue.has_work(self.manual) {
            return WriteHint::None;
        }
        self.hint(false)
    }

    /// Keep-alives and overflow deadlines at `now`. Returns what the driver should do
    /// about writing.
    pub fn handle_timeout(&mut self, now: Instant) -> WriteHint {
        if self.ending == Ending::Ended {
            return WriteHint::None;
        }
        if let Some(oldest) = self.queue.overflow_oldest() {
            let waited = now.saturating_duration_since(oldest);
            if waited > self.limits.wait_before_close {
                self.fail(EndReason::Congested { waited });
                return WriteHint::None;
            }
        }
        if self.writer == Writer::Blocked {
            let stalled = now.saturating_duration_since(self.last_progress);
            if self.room_wanted && stalled > self.limits.wait_before_close {
                self.fail(EndReason::Congested { waited: stalled });
            }
            return WriteHint::None;
        }
        if self.ending == Ending::Open
            && now.saturating_duration_since(self.last_tx) >= self.keep_alive
            && matches!(self.writer, Writer::Idle | Writer::Held)
            && self.queue.push_keep_alive()
        {
            self.stats.keep_alives += 1;
        }
        let hold_over = self.writer == Writer::Held && self.hold_until.is_none_or(|t| now >= t);
        if hold_over || (self.writer == Writer::Idle && self.queue.has_work(self.manual)) {
            self.writer = Writer::Scheduled;
            return WriteHint::Wake;
        }
        WriteHint::None
    }

    /// When [`Outbound::handle_timeout`] is due next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.ending == Ending::Ended {
            return None;
        }
        let mut next = self.last_tx + self.keep_alive;
        if let Some(hold) = self.hold_until {
            next = next.min(hold);
        }
        if let Some(oldest) = self.queue.overflow_oldest() {
            next = next.min(oldest + self.limits.wait_before_close);
        }
        if self.writer == Writer::Blocked && self.room_wanted {
            next = next.min(self.last_progress + self.limits.wait_before_close);
        }
        Some(next)
    }

    /// The next event of the sending half.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Frees what an idle queue keeps beyond one pooled batch; returns the bytes freed.
    pub fn release_idle_buffers(&mut self) -> usize {
        if self.writer != Writer::Idle || self.partial.is_some() {
            return 0;
        }
        self.queue.release_idle_buffers(1)
    }
}

/// Whether a message asks to be sent at once (the express bit of its QoS).
fn is_express(msg: &NetworkMessage<'_>) -> bool {
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
