//! Sending: a message into the connection's sending half
//! ([`weft_transport::connection::Outbound`]), which decides where it goes and who writes
//! it; this file carries out its answer: writing here, waking the link's I/O thread,
//! waiting for room, or pausing the source of a forwarded message that waits in the
//! overflow.

use std::sync::MutexGuard;
use std::time::Instant;

use weft_proto::core::{CongestionControl, Priority, Reliability};
use weft_proto::network::NetworkMessage;
use weft_transport::connection::{EndReason, SendError as OutError, SendOptions, Sent, WriteHint};

use super::drops::DropReason;
use super::{reactor, Caller, SendError, Transport, TxState};

impl Transport {
    /// Sends a network message on the channel (`priority`, `reliability`).
    pub(crate) fn send(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
        caller: &Caller,
    ) -> Result<(), SendError> {
        self.send_with(msg, priority, reliability, congestion, false, caller)
    }

    /// As [`Transport::send`], for a message forwarded on behalf of another node: it never
    /// waits for this destination (see `Transport::hold_source`). Every message sent by a
    /// thread serving links is sent so.
    pub(crate) fn send_forwarded(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
        caller: &Caller,
    ) -> Result<(), SendError> {
        self.send_with(msg, priority, reliability, congestion, true, caller)
    }

    fn send_with(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        congestion: CongestionControl,
        forwarded: bool,
        caller: &Caller,
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
            match link.send_with(msg, priority, reliability, congestion, forwarded, caller) {
                // The link just closed: the message goes on the main transport.
                Err(SendError::Closed) => {}
                result => return result,
            }
        }
        // A thread serving links serves many: it never waits for one.
        let mut opts = SendOptions {
            priority,
            reliability,
            congestion,
            forwarded: forwarded || caller.serves_links(),
            since: None,
        };
        let mut st = self.lock();
        loop {
            if self.is_closed() {
                return Err(SendError::Closed);
            }
            match st.out.send(msg, opts, Instant::now) {
                Ok(Sent::Queued(hint)) => return self.carry_out(st, hint, caller),
                Ok(Sent::Direct(direct)) => return self.write_direct(st, direct, msg),
                Ok(Sent::Overflowed) => {
                    self.hold_source(&mut st, caller);
                    self.after_events(st);
                    return Ok(());
                }
                Err(OutError::NoRoom { until, since }) => {
                    opts.since = Some(since);
                    // The writer makes room: it is on its way, or is asked to come.
                    if let WriteHint::Wake = st.out.kick() {
                        self.wake_writer(caller);
                    }
                    let left = until.saturating_duration_since(Instant::now());
                    st = self.wait_idle(st, Some(left));
                }
                Err(OutError::Dropped) => {
                    self.count_drops(DropReason::Congestion, 1);
                    return Err(SendError::Dropped);
                }
                Err(OutError::Closed) => {
                    self.after_events(st);
                    return Err(SendError::Closed);
                }
                Err(OutError::Tx(e)) => return Err(SendError::Tx(e)),
            }
        }
    }

    /// Does what the sending half said about writing: write here (an express message,
    /// or a large one in fragments, on an idle link, from an application thread), have
    /// it written (after the turn of a thread serving links, or by the link's I/O
    /// thread), or nothing.
    pub(super) fn carry_out(
        &self,
        st: MutexGuard<'_, TxState>,
        hint: WriteHint,
        caller: &Caller,
    ) -> Result<(), SendError> {
        match hint {
            WriteHint::WriteNow if !caller.serves_links() => self.write_here(st),
            WriteHint::WriteNow => {
                drop(st);
                if let (Some(turn), Some(me)) = (caller.turn(), self.me.upgrade()) {
                    turn.schedule_write_now(me);
                }
                Ok(())
            }
            WriteHint::Wake => {
                drop(st);
                self.wake_writer(caller);
                Ok(())
            }
            WriteHint::None => Ok(()),
        }
    }

    /// Handles what the sending half has to say (room, a drained overflow, its end).
    pub(super) fn after_events(&self, mut st: MutexGuard<'_, TxState>) {
        let mut room = false;
        let mut resume = Vec::new();
        let mut ended = None;
        while let Some(event) = st.out.poll_event() {
            match event {
                weft_transport::connection::Event::Room => room = true,
                weft_transport::connection::Event::OverflowDrained => {
                    st.over_since = None;
                    resume.append(&mut st.paused_sources);
                }
                weft_transport::connection::Event::Ended(reason) => ended = Some(reason),
            }
        }
        let (closed, unqueueable) = st.take_drops();
        if room || ended.is_some() {
            self.notify_idle(&st);
        }
        drop(st);
        self.count_drops(DropReason::Closed, closed);
        self.count_drops(DropReason::Unqueueable, unqueueable);
        resume.into_iter().for_each(reactor::resume);
        match ended {
            Some(EndReason::Closed | EndReason::ClosedByPeer) | None => {}
            Some(EndReason::LinkFailed) => self.fail_link(),
            Some(reason) => {
                let why = match &reason {
                    EndReason::Congested { waited } => {
                        format!("`block` messages waited {waited:?} for room")
                    }
                    EndReason::OverflowFull { full, len } => match full {
                        weft_transport::queue::Full::Destination => format!(
                            "{} bytes of forwarded `block` messages wait for room",
                            weft_transport::queue::OVERFLOW_MAX
                        ),
                        weft_transport::queue::Full::Budget => format!(
                            "transport.link.tx.overflow_budget is spent ({len} more bytes of \
                             forwarded `block` messages could not wait)"
                        ),
                    },
                    other => format!("{other:?}"),
                };
                tracing::warn!(
                    "closing {} ({}): it takes too little ({why})",
                    self.describe,
                    self.peer_zid()
                );
                self.abort();
            }
        }
    }
}

impl TxState {
    /// Messages the sending half discarded since last asked: (waiting when it closed,
    /// forwarded and unqueueable).
    pub(super) fn take_drops(&mut self) -> (u64, u64) {
        let now = self.out.stats();
        let closed = now.dropped_closed - self.counted.dropped_closed;
        let unqueueable = now.dropped_overflow - self.counted.dropped_overflow;
        self.counted = now;
        (closed, unqueueable)
    }
}
