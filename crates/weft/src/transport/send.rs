//! Sending: a message into its lane's batch, and what a sender does when there is no
//! room (waits, drops, or hands the message to the overflow); messages larger than a
//! batch go out as fragments.

use std::sync::atomic::Ordering;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use weft_proto::core::{CongestionControl, Priority, Reliability};
use weft_proto::network::NetworkMessage;
use weft_transport::queue::{slice_parts, NoRoom};
use weft_transport::tx::{PlannedFragment, Pushed, TxError};

use super::drops::DropReason;
use super::{reactor, SendError, Transport, TxState};
use crate::link::{MAX_BATCH_PARTS, MAX_GROUP_BATCHES};

impl Transport {
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
                Pushed::Appended => {
                    st.app_sent |= !on_io_thread;
                    break;
                }
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
                self.count_drops(DropReason::Congestion, 1);
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
        loop {
            // What is already queued on this lane goes first, and one fragmented message
            // at a time: fragments of a channel must have consecutive sequence numbers.
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
            // Under `drop`, a link that takes nothing for `wait_before_drop` drops the
            // message before its first fragment (after it, the others must follow: a
            // message goes whole or not at all), instead of holding the sender.
            if congestion != CongestionControl::Drop || self.link.writable_within(Duration::ZERO) {
                break;
            }
            let until = *drop_deadline.get_or_insert(Instant::now() + self.limits.wait_before_drop);
            drop(st);
            let writable = self
                .link
                .writable_within(until.saturating_duration_since(Instant::now()));
            st = self.lock();
            if !writable {
                self.count_drops(DropReason::Congestion, 1);
                return Err(SendError::Dropped);
            }
            // Writable again: the lane is looked at anew (another message may have
            // started meanwhile).
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
        let mut fragments = fragments.peekable();
        loop {
            // Up to four fragments in one vectored write (see `write_batch_group`); a
            // short last fragment goes in a write of its own (measured faster on
            // loopback than joined to the one before).
            let group: [Option<PlannedFragment>; MAX_GROUP_BATCHES] = std::array::from_fn(|i| {
                fragments.next_if(|f| i == 0 || f.range().len() >= SHORT_FRAGMENT)
            });
            let count = group.iter().take_while(|f| f.is_some()).count();
            if count == 0 {
                break;
            }
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
            let mut batches = [[&[][..]; MAX_BATCH_PARTS]; MAX_GROUP_BATCHES];
            for (batch, fragment) in batches.iter_mut().zip(group.iter().flatten()) {
                let [a, b, c] = slice_parts(parts, fragment.range());
                *batch = [fragment.head(), a, b, c];
            }
            result = self.write_batch_group(&batches[..count]);
            st = self.lock();
            self.release_link(&mut st);
            if result.is_err() {
                break;
            }
        }
        st.queue.keep_fragment_buf(head);
        st.queue.end_fragmenting();
        // What waited behind the fragments on their lane (or came meanwhile) goes now;
        // with nothing waiting, no I/O thread is woken for nothing.
        let manual = self.manual_batching.load(Ordering::Relaxed);
        if st.queue.has_work(manual) || !st.queue.overflow_is_empty() {
            self.wake_writer(&mut st);
        }
        self.notify_idle(&st, false);
        result
    }
}

/// A fragment shorter than this (bytes) is not joined to a write of fragments before it.
const SHORT_FRAGMENT: usize = 16 * 1024;

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
