//! Forwarded `block` messages that find no room: they wait in the destination's
//! overflow, and a destination with anything in its overflow pauses the link they come
//! from (back-pressure) until it is empty again and half of the destination's queue of
//! ready batches is written. Bounds: `PAUSE_MAX`, the overflow's own
//! limits and `wait_before_close`.
//!
//! Why at once: the destination's queue of ready batches is the buffer. While anything
//! waits in the overflow, every later message must wait behind it (encoded once more,
//! then copied into a batch), so a source kept flowing into an overflow pays that extra
//! copy for every message (routed 1 KiB: 5 % of the rate). The paused source resumes
//! when the overflow is empty and half the queue's batches are written, the other half
//! still to write meanwhile.

use std::sync::MutexGuard;
use std::time::Instant;

use weft_proto::core::{CongestionControl, Priority, Reliability};
use weft_proto::network::NetworkMessage;
use weft_transport::queue::{Full, READY_MAX};
use weft_transport::tx::TxError;

use super::drops::DropReason;
use super::{reactor, SendError, Transport, TxState, PAUSE_MAX};

impl Transport {
    /// Asks that the link whose batch is being handled on this I/O thread stop being read
    /// while this destination's overflow holds anything: its sender then waits for this
    /// destination, as Zenoh's `block` makes it wait, instead of the overflow growing.
    /// Not for longer than [`PAUSE_MAX`] in a row: a destination that stays behind that
    /// long loses the right to hold its sources, and its overflow's bounds apply.
    fn hold_source(&self, st: &mut TxState) {
        if !reactor::on_io_thread() || st.queue.overflow_is_empty() {
            return;
        }
        let now = Instant::now();
        let since = *st.over_since.get_or_insert(now);
        if now.duration_since(since) < PAUSE_MAX {
            reactor::request_pause(self.me.clone());
        }
    }

    /// Registers a link paused on this destination's overflow, to be read again once it
    /// drains; false (do not pause it) when the overflow is already empty again or the
    /// transport closed.
    pub(crate) fn add_paused_source(&self, source: reactor::PausedSource) -> bool {
        let mut st = self.lock();
        if self.is_closed() || st.queue.overflow_is_empty() {
            return false;
        }
        st.paused_sources.push(source);
        true
    }

    /// The overflow drained, and the queue down to half: the links paused on it, to read
    /// again (the caller wakes them once it has released the lock). Half the queue still
    /// to write keeps the destination busy until they bring more, and spaces the pauses
    /// of a source faster than its destination.
    pub(super) fn drained(st: &mut TxState) -> Vec<reactor::PausedSource> {
        if !st.queue.overflow_is_empty() || st.queue.ready_count() > READY_MAX / 2 {
            return Vec::new();
        }
        st.over_since = None;
        std::mem::take(&mut st.paused_sources)
    }

    /// A forwarded message that finds no room: under `drop` it is dropped; under `block`
    /// it waits in this destination's overflow, encoded, while the forwarding thread goes
    /// on with its other destinations — only this destination's traffic waits. The writer
    /// moves it into the queue as room comes. If the oldest waits longer than
    /// `wait_before_close`, or the overflow would hold more than `OVERFLOW_MAX` bytes, or
    /// more than the budget shared with the other destinations has left, this destination
    /// is closed (never the sender).
    pub(super) fn overflow(
        &self,
        mut st: MutexGuard<'_, TxState>,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
    ) -> Result<(), SendError> {
        if congestion == CongestionControl::Drop {
            st.queue.dropped_forwarded();
            self.count_drops(DropReason::Congestion, 1);
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
}
