//! The transmit queue of one transport, without I/O: what waits to be written, and in what
//! order.
//!
//! ```text
//!   push ──► pending batch per priority (Transmitter) ──seal──► ready lanes (≤ READY_MAX
//!                                                                batches in all)
//!   large message ──────────────────────────────────────────► fragment batches, whole
//!   forwarded `block` message, no room ──► overflow (bounded) ──refill as room comes──┘
//!
//!   next_batch: ready lanes and pending batches, highest priority first, skipping the
//!   lane a fragmented message is being written on.
//! ```
//!
//! The driver (`weft`'s transport) holds it under its lock, writes the batches it hands
//! out and gives their buffers back ([`TxQueue::batch_written`]); time is passed in
//! (overflow deadlines, congestion-control waits). Buffers are pooled: in the steady state
//! nothing is allocated per message or per batch. A queue left idle gives its buffers
//! back ([`TxQueue::release_idle_buffers`]), so a burst does not leave each destination
//! holding a megabyte.

mod overflow;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft_proto::core::{CongestionControl, Priority, Reliability};
use weft_proto::network::NetworkMessage;

pub use self::overflow::{Full, OverflowBudget};
use self::overflow::{Overflow, Waiting};
use crate::establish::Negotiated;
use crate::tx::{Fragments, Pushed, Transmitter, TxError, KEEP_ALIVE_BATCH};

/// Full batches a transport keeps waiting for the link (all priorities together); beyond,
/// congestion control applies: `drop` drops the message, `block` waits.
pub const READY_MAX: usize = 16;

/// Bytes of forwarded `block` messages one destination may hold beyond its queue.
pub const OVERFLOW_MAX: usize = 64 << 20;

/// Largest encoding buffer kept for the next fragmented message; a larger one is freed
/// once its message is out.
const FRAGMENT_BUF_KEPT: usize = 1 << 20;

/// Where [`TxQueue::place`] put a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// In a pending batch, or queued as fragment batches.
    Queued,
    /// Nowhere: the queue has no room for it.
    NoRoom,
}

/// What a sender that found no room does, by its congestion control and how long it
/// has waited ([`TxQueue::no_room`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRoom {
    /// Wait for the writer, this long at most, then ask again.
    Wait(Duration),
    /// `drop`: the message is dropped (and the link marked congested).
    Drop,
    /// `block`: the destination took nothing for the whole wait; close it.
    Close,
}

/// The transmit queue of one transport: pending batches per priority, full batches ready
/// to write, the overflow of forwarded messages, and the congestion state.
pub struct TxQueue {
    tx: Transmitter,
    /// Full batches waiting for the writer, per priority (at most `READY_MAX` in all).
    ready: [VecDeque<Vec<u8>>; 8],
    ready_count: usize,
    /// Buffers to reuse for ready batches.
    pool: Vec<Vec<u8>>,
    /// The priority whose lane a fragmented message is being written on: the writer
    /// leaves that lane alone until the last fragment is out.
    fragmenting: Option<Priority>,
    /// The encoded head of the message being fragmented (all but its payload), kept
    /// between messages.
    fragment_buf: Vec<u8>,
    /// Forwarded `block` messages that found no room, encoded, oldest first.
    overflow: Overflow,
    /// A `drop` message was dropped and no batch was written since: further `drop`
    /// messages that find no room are dropped at once instead of each waiting.
    congested: bool,
    /// Manual batching asked for what is pending to be written.
    flush_requested: bool,
}

impl TxQueue {
    /// An empty queue for a transport that negotiated `n`, with batches of `max_batch`
    /// bytes; its overflow holds at most [`OVERFLOW_MAX`] bytes and what `budget` has
    /// left.
    pub fn new(n: &Negotiated, max_batch: usize, budget: Option<Arc<OverflowBudget>>) -> Self {
        Self {
            tx: Transmitter::new(n, max_batch),
            ready: Default::default(),
            ready_count: 0,
            pool: Vec::new(),
            fragmenting: None,
            fragment_buf: Vec::new(),
            overflow: Overflow::new(OVERFLOW_MAX, budget),
            congested: false,
            flush_requested: false,
        }
    }

    /// Appends a message to the pending batch of its priority ([`Transmitter::push`]).
    #[inline]
    pub fn push(
        &mut self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
    ) -> Result<Pushed, TxError> {
        self.tx.push(msg, priority, reliability)
    }

    /// Whether the pending batch of `priority` is empty.
    #[inline]
    pub fn lane_is_empty(&self, priority: Priority) -> bool {
        self.tx.lane_is_empty(priority)
    }

    /// Whether every pending batch is empty.
    #[inline]
    pub fn pending_is_empty(&self) -> bool {
        self.tx.is_empty()
    }

    /// Bytes in the pending (not yet full) batches of every priority.
    #[inline]
    pub fn pending_bytes(&self) -> usize {
        self.tx.pending()
    }

    /// Full batches waiting for the writer.
    #[inline]
    pub fn ready_count(&self) -> usize {
        self.ready_count
    }

    /// Whether another full batch may wait for the writer.
    #[inline]
    pub fn has_room(&self) -> bool {
        self.ready_count < READY_MAX
    }

    /// Whether `priority` is idle: no fragmented message in progress, nothing ready or
    /// pending on its lane (a fragmented message may start).
    #[inline]
    pub fn lane_idle(&self, priority: Priority) -> bool {
        self.fragmenting.is_none()
            && self.ready[usize::from(priority.to_u8())].is_empty()
            && self.tx.lane_is_empty(priority)
    }

    /// Moves the pending batch of `priority` to the ready batches.
    pub fn seal_lane(&mut self, priority: Priority) {
        let mut buf = self.pool.pop().unwrap_or_default();
        if !self.tx.swap_lane(priority, &mut buf) {
            self.pool.push(buf);
            return;
        }
        self.ready[usize::from(priority.to_u8())].push_back(buf);
        self.ready_count += 1;
    }

    /// How many fragments a message of `len` encoded bytes takes.
    pub fn fragment_count(&self, len: usize) -> usize {
        self.tx.fragment_count(len)
    }

    /// Whether `count` fragment batches fit on `priority`'s lane: at most `READY_MAX`
    /// batches queued, or twice the message's own fragments for a larger message (so
    /// that one can wait while the previous one is written).
    pub fn room_for_fragments(&self, priority: Priority, count: usize) -> bool {
        let queued = self.ready_count + usize::from(!self.tx.lane_is_empty(priority));
        queued == 0 || queued + count <= READY_MAX.max(2 * count)
    }

    /// Queues a message of `len` encoded bytes, given as `parts` laid end to end, as
    /// fragment batches behind what is queued on its lane (copying it).
    pub fn queue_fragments(
        &mut self,
        parts: [&[u8]; 3],
        len: usize,
        priority: Priority,
        reliability: Reliability,
    ) -> Result<(), TxError> {
        self.seal_lane(priority);
        let lane = usize::from(priority.to_u8());
        for fragment in self.tx.plan_fragments(len, priority, reliability)? {
            let mut buf = self.pool.pop().unwrap_or_default();
            buf.clear();
            buf.extend_from_slice(fragment.head());
            for part in slice_parts(parts, fragment.range()) {
                buf.extend_from_slice(part);
            }
            self.ready[lane].push_back(buf);
            self.ready_count += 1;
        }
        Ok(())
    }

    /// Plans a fragmented message of `len` bytes that the sender writes itself, and
    /// marks `priority`'s lane as taken by it until [`TxQueue::end_fragmenting`]: the
    /// writer leaves that lane alone meanwhile.
    pub fn start_fragmenting(
        &mut self,
        len: usize,
        priority: Priority,
        reliability: Reliability,
    ) -> Result<Fragments, TxError> {
        let fragments = self.tx.plan_fragments(len, priority, reliability)?;
        self.fragmenting = Some(priority);
        Ok(fragments)
    }

    /// The fragmented message's last fragment is out (or it was given up).
    pub fn end_fragmenting(&mut self) {
        self.fragmenting = None;
    }

    /// Whether a fragmented message is being written by its sender.
    #[inline]
    pub fn is_fragmenting(&self) -> bool {
        self.fragmenting.is_some()
    }

    /// A buffer to encode a fragmented message's head in (empty; kept between messages).
    pub fn take_fragment_buf(&mut self) -> Vec<u8> {
        let mut buf = std::mem::take(&mut self.fragment_buf);
        buf.clear();
        buf
    }

    /// Gives back the buffer of [`TxQueue::take_fragment_buf`]; a huge one is freed, so
    /// that memory stays bounded by the batch sizes.
    pub fn keep_fragment_buf(&mut self, buf: Vec<u8>) {
        if buf.capacity() <= FRAGMENT_BUF_KEPT {
            self.fragment_buf = buf;
        }
    }

    /// Puts an encoded message in the queue if there is room, without waiting.
    pub fn place(
        &mut self,
        encoded: &[u8],
        priority: Priority,
        reliability: Reliability,
    ) -> Result<Placed, TxError> {
        loop {
            match self.tx.push_encoded(encoded, priority, reliability)? {
                Pushed::Appended => return Ok(Placed::Queued),
                Pushed::Full if self.tx.lane_is_empty(priority) => {
                    let len = encoded.len();
                    if !self.room_for_fragments(priority, self.tx.fragment_count(len)) {
                        return Ok(Placed::NoRoom);
                    }
                    self.queue_fragments([encoded, &[], &[]], len, priority, reliability)?;
                    return Ok(Placed::Queued);
                }
                Pushed::Full if self.ready_count < READY_MAX => self.seal_lane(priority),
                Pushed::Full => return Ok(Placed::NoRoom),
            }
        }
    }

    /// Whether forwarded messages wait in the overflow.
    #[inline]
    pub fn overflow_is_empty(&self) -> bool {
        self.overflow.is_empty()
    }

    /// Bytes of the messages waiting in the overflow.
    #[inline]
    pub fn overflow_bytes(&self) -> usize {
        self.overflow.bytes()
    }

    /// When the oldest message waiting in the overflow began to wait.
    #[inline]
    pub fn overflow_oldest(&self) -> Option<Instant> {
        self.overflow.oldest()
    }

    /// Adds a forwarded message (encoded) behind those in the overflow, at `now`, if the
    /// overflow's bounds allow it.
    pub fn push_overflow(
        &mut self,
        encoded: Vec<u8>,
        priority: Priority,
        reliability: Reliability,
        now: Instant,
    ) -> Result<(), Full> {
        self.overflow.push(Waiting {
            encoded,
            priority,
            reliability,
            since: now,
        })
    }

    /// Moves waiting forwarded messages into the queue while it has room. `Ok` with how
    /// many could not be queued at all (dropped: cannot happen for messages this queue's
    /// sender encoded, but counted); `Err` with how long the oldest has waited when that
    /// is over `wait_before_close` at `now` (nothing moved).
    pub fn refill(&mut self, now: Instant, wait_before_close: Duration) -> Result<u64, Duration> {
        if let Some(waited) = self
            .overflow
            .oldest()
            .map(|since| now.duration_since(since))
        {
            if waited > wait_before_close {
                return Err(waited);
            }
        }
        let mut dropped = 0;
        while let Some(w) = self.overflow.pop() {
            match self.place(&w.encoded, w.priority, w.reliability) {
                Ok(Placed::Queued) => {}
                Err(_) => dropped += 1,
                Ok(Placed::NoRoom) => {
                    self.overflow.unpop(w);
                    break;
                }
            }
        }
        Ok(dropped)
    }

    /// Discards what waits in the overflow (the link is closing); returns how many.
    pub fn discard_overflow(&mut self) -> u64 {
        self.overflow.clear() as u64
    }

    /// What a sender with no room does: under `drop`, drop the message at once if the
    /// link is congested or `deadline` has passed (the link becomes congested), else wait;
    /// under `block`, close the destination once `deadline` has passed, else wait.
    pub fn no_room(
        &mut self,
        congestion: CongestionControl,
        deadline: Instant,
        now: Instant,
    ) -> NoRoom {
        let dropping = congestion == CongestionControl::Drop;
        if dropping && (self.congested || now >= deadline) {
            self.congested = true;
            return NoRoom::Drop;
        }
        if now >= deadline {
            return NoRoom::Close;
        }
        NoRoom::Wait(deadline - now)
    }

    /// A forwarded `drop` message found no room: it is dropped, and the link is
    /// congested until a batch is written.
    #[inline]
    pub fn dropped_forwarded(&mut self) {
        self.congested = true;
    }

    /// A batch was written whole: its buffer goes back to the pool (which keeps at most
    /// `READY_MAX`), and the link is no longer congested.
    #[inline]
    pub fn batch_written(&mut self, batch: Vec<u8>) {
        self.recycle(batch);
        self.congested = false;
    }

    /// Frees what an idle queue keeps beyond `spare` pooled buffers: the rest of the
    /// pool (a burst's batches) and the buffers of the empty pending batches, which the
    /// next message allocates again. Does nothing while anything is queued. Returns the
    /// bytes freed.
    pub fn release_idle_buffers(&mut self, spare: usize) -> usize {
        if self.ready_count > 0
            || !self.tx.is_empty()
            || self.fragmenting.is_some()
            || !self.overflow.is_empty()
        {
            return 0;
        }
        let pooled: usize = self.pool.iter().skip(spare).map(Vec::capacity).sum();
        self.pool.truncate(spare);
        pooled + self.tx.release_idle_buffers()
    }

    /// A batch buffer from the pool (or a new one), for a batch made outside the queue.
    pub fn take_buf(&mut self) -> Vec<u8> {
        self.pool.pop().unwrap_or_default()
    }

    /// Gives a batch's buffer back to the pool without counting it written (the write
    /// failed).
    #[inline]
    pub fn recycle(&mut self, batch: Vec<u8>) {
        if self.pool.len() < READY_MAX {
            self.pool.push(batch);
        }
    }

    /// Asks for the pending batches to be written under manual batching.
    #[inline]
    pub fn request_flush(&mut self) {
        self.flush_requested = true;
    }

    /// Whether a flush of the pending batches was asked for (an express message, or manual
    /// batching's flush) and not done yet.
    #[inline]
    pub fn flush_requested(&self) -> bool {
        self.flush_requested
    }

    /// Whether pending batches are to be written: always without manual batching, and
    /// under it once a flush was asked for.
    #[inline]
    pub fn pending_wanted(&self, manual: bool) -> bool {
        !manual || self.flush_requested
    }

    /// The next batch to write of a priority higher than `above` (of any priority when
    /// `None`), highest first; pending (not full) batches only when `pending_too`.
    pub fn next_batch_above(
        &mut self,
        above: Option<Priority>,
        pending_too: bool,
    ) -> Option<Vec<u8>> {
        for p in Priority::ALL {
            if above.is_some_and(|a| p >= a) {
                return None;
            }
            if self.fragmenting == Some(p) {
                continue;
            }
            let i = usize::from(p.to_u8());
            if let Some(b) = self.ready[i].pop_front() {
                self.ready_count -= 1;
                return Some(b);
            }
            if pending_too {
                let batch = self.tx.take_lane(p);
                if !batch.is_empty() {
                    let mut buf = self.pool.pop().unwrap_or_default();
                    buf.clear();
                    buf.extend_from_slice(batch);
                    return Some(buf);
                }
            }
        }
        None
    }

    /// The next batch to write, of any priority: pending ones too when
    /// [`TxQueue::pending_wanted`]. When nothing is left, a flush asked for is done.
    pub fn next_batch(&mut self, manual: bool) -> Option<Vec<u8>> {
        let next = self.next_batch_above(None, self.pending_wanted(manual));
        if next.is_none() && self.tx.is_empty() {
            self.flush_requested = false;
        }
        next
    }

    /// Whether there is something the writer may write now (`manual`: manual batching is
    /// on, pending batches wait for a flush).
    pub fn has_work(&self, manual: bool) -> bool {
        let ready = self.ready.iter().enumerate().any(|(i, q)| {
            !q.is_empty() && self.fragmenting.map(|p| usize::from(p.to_u8())) != Some(i)
        });
        ready
            || Priority::ALL.iter().any(|p| {
                self.fragmenting != Some(*p)
                    && !self.tx.lane_is_empty(*p)
                    && self.pending_wanted(manual)
            })
    }

    /// Queues a KeepAlive batch if nothing else waits to be written; returns whether it
    /// did.
    pub fn push_keep_alive(&mut self) -> bool {
        if !self.tx.is_empty() || self.ready_count > 0 {
            return false;
        }
        let mut buf = self.pool.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(&KEEP_ALIVE_BATCH);
        self.ready[usize::from(Priority::Control.to_u8())].push_back(buf);
        self.ready_count += 1;
        true
    }
}

/// The parts of `range` of the bytes that `parts` make laid end to end.
pub fn slice_parts(parts: [&[u8]; 3], range: std::ops::Range<usize>) -> [&[u8]; 3] {
    let mut start = 0;
    parts.map(|part| {
        let end = start + part.len();
        let from = range.start.clamp(start, end) - start;
        let to = range.end.clamp(start, end) - start;
        start = end;
        &part[from..to]
    })
}
