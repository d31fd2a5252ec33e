//! The receiving side of a transport: what a received batch does, the lease, and the
//! transport's end, driven by the link's I/O thread ([`super::reactor`]).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use weft_proto::transport::CloseReason;
use weft_transport::lease::{LeaseAction, Liveness};
use weft_transport::rx::{Control, Receiver, RxStats};

use super::{Caller, DiscardReason, Handler, ReceivedBatch, Transport};

/// Whether a transport goes on after what was handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// It goes on.
    Open,
    /// It is over (a Close received, a malformed batch, the lease expired).
    Closed,
}

/// A transport's receiver, lease and handler.
pub(crate) struct LinkRx {
    transport: Arc<Transport>,
    handler: Arc<dyn Handler>,
    /// A link reserved for priorities hands what it receives over as this main
    /// transport.
    main: Option<Arc<Transport>>,
    rx: Receiver,
    /// `transport.link.rx.max_message_size`, for the logs.
    max_message: usize,
    liveness: Liveness,
    tick: Duration,
    discards: DiscardLog,
    /// Whether the next batch's kept payloads share one copy of it (the last batch was
    /// dense with them: `received`).
    copy_whole: bool,
}

impl LinkRx {
    /// The receiving side of `transport`, starting `now`.
    pub(crate) fn new(transport: Arc<Transport>, handler: Arc<dyn Handler>, now: Instant) -> Self {
        let n = transport.negotiated;
        let own_lease = Duration::from_millis(n.own_lease_ms);
        let peer_lease = Duration::from_millis(n.peer_lease_ms.max(1));
        let tick = (own_lease / 8)
            .min(peer_lease / 4)
            .max(Duration::from_millis(10));
        let limits = handler.rx_limits();
        let max_message = limits.max_message;
        let rx = Receiver::with_limits(&n, limits.max_message, limits.share, limits.budget);
        let main = transport.main.get().and_then(Weak::upgrade);
        Self {
            transport,
            handler,
            main,
            rx,
            max_message,
            liveness: Liveness::new(own_lease, peer_lease, now),
            tick,
            discards: DiscardLog::default(),
            copy_whole: false,
        }
    }

    /// The transport.
    pub(crate) const fn transport(&self) -> &Arc<Transport> {
        &self.transport
    }

    /// How often the lease is to be checked ([`LinkRx::on_tick`]).
    pub(crate) const fn tick(&self) -> Duration {
        self.tick
    }

    /// Handles one received batch: every network message in it goes to the handler, for
    /// `caller` (the thread serving the link, in its turn).
    pub(crate) fn on_batch(&mut self, batch: &[u8], caller: &Caller) -> Flow {
        let t = &self.transport;
        t.stats.batches_in.fetch_add(1, Ordering::Relaxed);
        t.stats
            .bytes_in
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        let face = self.main.as_ref().unwrap_or(t);
        let handler = &*self.handler;
        let mut messages = 0;
        let received = ReceivedBatch::new(batch, self.copy_whole);
        let result = self.rx.on_batch(batch, |m| {
            messages += 1;
            handler.on_message(face, m, &received, caller);
        });
        self.copy_whole = received.dense();
        t.stats.messages_in.fetch_add(messages, Ordering::Relaxed);
        self.discards.note(t, self.rx.stats(), self.max_message);
        // Time spent handling the batch is not the peer's silence.
        self.liveness.on_receive(Instant::now());
        match result {
            Ok(Control::Alive) => Flow::Open,
            Ok(Control::Closed { reason, .. }) => {
                t.note_end(|| format!("closed by the peer ({reason})"));
                Flow::Closed
            }
            Err(e) => {
                tracing::warn!("closing {} ({}): {e}", t.describe, t.peer_zid());
                t.stats.discarded.add(DiscardReason::Malformed, 1);
                t.note_end(|| format!("malformed data: {e}"));
                t.close(CloseReason::INVALID, caller);
                Flow::Closed
            }
        }
    }

    /// Checks the lease: sends a KeepAlive when one is due, closes the transport when
    /// the peer has been silent too long.
    pub(crate) fn on_tick(&mut self, now: Instant, caller: &Caller) -> Flow {
        let t = &self.transport;
        self.liveness.on_send(t.last_tx());
        match self.liveness.poll(now) {
            LeaseAction::Idle => Flow::Open,
            LeaseAction::SendKeepAlive => {
                t.keep_alive();
                Flow::Open
            }
            LeaseAction::Expired => {
                tracing::warn!("lease of {} ({}) expired", t.describe, t.peer_zid());
                t.note_end(|| "its lease expired".to_owned());
                t.close(CloseReason::EXPIRED, caller);
                Flow::Closed
            }
        }
    }

    /// The link was read to its end: the transport is closed, and its face forgotten (or,
    /// for a link reserved for priorities, detached from its main transport).
    pub(crate) fn finish(self, caller: &Caller) {
        let t = &self.transport;
        t.note_end(|| "its link ended without a Close".to_owned());
        let _ = t.mark_closed();
        t.link.shutdown();
        t.set_ended();
        match &self.main {
            Some(main) => {
                main.priority_links.detach(t);
                self.handler.on_priority_link_closed(main, t);
            }
            None => {
                for link in t.priority_links.take_all() {
                    link.close(CloseReason::GENERIC, caller);
                }
                self.handler.on_closed(t, caller);
            }
        }
    }
}

/// Logs the messages a reader discarded for their size, for the reassembly budget or for
/// the transport's share of it, at most once a second per transport.
#[derive(Default)]
struct DiscardLog {
    logged: (u64, u64, u64),
    last: Option<Instant>,
    /// The totals last published in the transport's counters.
    published: (u64, u64, u64, u64),
}

impl DiscardLog {
    fn note(&mut self, t: &Transport, stats: RxStats, max_message: usize) {
        let totals = (
            stats.too_large,
            stats.over_budget,
            stats.undecodable,
            stats.over_share,
        );
        if totals != self.published {
            let counts = &t.stats.discarded;
            counts.set(DiscardReason::TooLarge, totals.0);
            counts.set(DiscardReason::OverBudget, totals.1);
            counts.set(DiscardReason::OverShare, totals.3);
            // A batch that closed the link counts as malformed too (added, not set).
            counts.add(DiscardReason::Malformed, totals.2 - self.published.2);
            self.published = totals;
        }
        let now = (stats.too_large, stats.over_budget, stats.over_share);
        if now == self.logged
            || self
                .last
                .is_some_and(|l| l.elapsed() < Duration::from_secs(1))
        {
            return;
        }
        tracing::warn!(
            "{} ({}): {} message(s) over transport.link.rx.max_message_size ({max_message} \
             bytes), {} over the reassembly budget and {} over this session's share of it \
             (transport.link.rx.reassembly_share) discarded so far",
            t.describe,
            t.peer_zid(),
            now.0,
            now.1,
            now.2
        );
        self.logged = now;
        self.last = Some(Instant::now());
    }
}
