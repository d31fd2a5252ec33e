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

use std::time::Instant;

use super::{reactor, Caller, Transport, TxState, PAUSE_MAX};

impl Transport {
    /// Asks that the link whose batch `caller`'s turn is handing on stop being read
    /// while this destination's overflow holds anything: its sender then waits for this
    /// destination, as Zenoh's `block` makes it wait, instead of the overflow growing.
    /// Not for longer than [`PAUSE_MAX`] in a row: a destination that stays behind that
    /// long loses the right to hold its sources, and its overflow's bounds apply.
    pub(super) fn hold_source(&self, st: &mut TxState, caller: &Caller) {
        let Some(turn) = caller.turn() else {
            return;
        };
        if !st.out.is_overflowing() {
            return;
        }
        let now = Instant::now();
        let since = *st.over_since.get_or_insert(now);
        if now.duration_since(since) < PAUSE_MAX {
            turn.request_pause(self.me.clone());
        }
    }

    /// Registers a link paused on this destination's overflow, to be read again once it
    /// drains; false (do not pause it) when the overflow is already empty again or the
    /// transport closed.
    pub(crate) fn add_paused_source(&self, source: reactor::PausedSource) -> bool {
        let mut st = self.lock();
        if self.is_closed() || !st.out.is_overflowing() {
            return false;
        }
        st.paused_sources.push(source);
        true
    }
}
