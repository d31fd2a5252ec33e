//! The receive side of an established unicast transport.
//!
//! [`Receiver::on_batch`] takes one batch (stream prefix removed) and hands every network
//! message to a callback, with its priority and reliability, in order. On the way it
//! applies the sequence-number rule per (reliability, priority) channel (stale Frames and
//! Fragments are dropped), refuses priorities other than Data when QoS was not
//! negotiated, and reassembles fragments under a size bound. Nothing is allocated per
//! message: messages borrow from the batch. A reassembled message borrows from its
//! reassembly buffer, which is handed over in an `Arc` (one small allocation per
//! reassembled message) so that the receiver may keep a large payload without copying it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use thiserror::Error;
use weft_proto::batch::defrag::{DefragError, Defragmented, Defragmenter};
use weft_proto::batch::{BatchItem, BatchReader};
use weft_proto::core::{Priority, Reliability};
use weft_proto::network::NetworkMessage;
use weft_proto::transport::{CloseReason, TransportMessage};
use weft_proto::DecodeError;

use crate::establish::Negotiated;
use crate::sn::{SnVerdict, SnWindow};

/// A network message received on a channel (borrowed where it was decoded: messages are
/// a few hundred bytes, and the hot path moves none of them).
#[derive(Debug)]
pub struct Incoming<'m, 'a> {
    /// The channel's priority.
    pub priority: Priority,
    /// The channel's reliability.
    pub reliability: Reliability,
    /// The message.
    pub message: &'m NetworkMessage<'a>,
    /// For a message reassembled from fragments: the buffer it was decoded from, which
    /// its payloads borrow. A receiver may keep a payload by sharing this buffer instead
    /// of copying the bytes out.
    pub reassembled: Option<&'m Arc<Vec<u8>>>,
}

/// What a batch said about the transport itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Nothing special (data, keep-alive).
    Alive,
    /// The peer closed the link (and the session if `session`).
    Closed {
        /// Why.
        reason: CloseReason,
        /// Whether the whole session is closed.
        session: bool,
    },
}

/// A batch that breaks the protocol: the link must be closed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RxError {
    /// Bytes that do not decode.
    #[error("malformed batch: {0}")]
    Decode(#[from] DecodeError),
    /// A priority other than Data on a transport without QoS.
    #[error("priority {0} used but QoS was not negotiated")]
    PriorityWithoutQos(Priority),
    /// A sequence number outside the negotiated range.
    #[error("sequence number {0} outside the negotiated range")]
    SnOutOfRange(u32),
    /// A handshake message on an established transport.
    #[error("unexpected {0} on an established transport")]
    Unexpected(&'static str),
}

/// Losses the receiver noticed; none of them closes the link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxStats {
    /// Frames and fragments dropped as duplicates or old.
    pub stale: u64,
    /// Sequence numbers skipped (lost best-effort traffic).
    pub gaps: u64,
    /// Partially reassembled messages discarded (gap, bound, missing start, Drop marker,
    /// budget).
    pub fragments_discarded: u64,
    /// Of those, messages over the size bound (`transport.link.rx.max_message_size`).
    pub too_large: u64,
    /// Of those, messages discarded because reassembly across the transports sharing a
    /// [`ReassemblyBudget`] would have held more than it allows.
    pub over_budget: u64,
    /// Of those, messages discarded because this receiver's partial messages together
    /// would have held more than its share ([`Receiver::with_limits`]).
    pub over_share: u64,
    /// Reassembled messages that did not decode.
    pub undecodable: u64,
}

struct Channel {
    window: SnWindow,
    defrag: Defragmenter,
}

/// Memory that partially reassembled messages may hold in all the receivers sharing it
/// (a router's transports), whatever their own bound: many peers each sending one large
/// message that never ends cannot add up to more.
#[derive(Debug)]
pub struct ReassemblyBudget {
    used: AtomicUsize,
    max: usize,
}

impl ReassemblyBudget {
    /// A budget of `max` bytes.
    pub const fn new(max: usize) -> Self {
        Self {
            used: AtomicUsize::new(0),
            max,
        }
    }

    /// Bytes held now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

/// The receive state of one transport.
pub struct Receiver {
    qos: bool,
    channels: Vec<Channel>,
    stats: RxStats,
    budget: Option<Arc<ReassemblyBudget>>,
    /// What this receiver's partial messages may hold together, at most.
    share: usize,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.used.fetch_sub(self.reassembly_bytes(), Ordering::Relaxed);
        }
    }
}

/// What one fragment did to its channel's reassembly.
enum Step {
    Pending,
    Dropped,
    Complete,
}

const fn index(priority: Priority, reliability: Reliability) -> usize {
    priority.to_u8() as usize * 2 + reliability.is_reliable() as usize
}

impl Receiver {
    /// The receiver of a transport established with `n`; reassembled messages may be at
    /// most `max_message` bytes.
    pub fn new(n: &Negotiated, max_message: usize) -> Self {
        let bits = n.resolution.frame_sn();
        let channels = (0..16)
            .map(|_| Channel {
                window: SnWindow::new(n.peer_initial_sn, bits),
                defrag: Defragmenter::new(max_message, bits, n.patch >= 1),
            })
            .collect();
        Self {
            qos: n.qos,
            channels,
            stats: RxStats::default(),
            budget: None,
            share: usize::MAX,
        }
    }

    /// As [`Receiver::new`], reassembling within `budget`, shared with other receivers.
    pub fn with_budget(n: &Negotiated, max_message: usize, budget: Arc<ReassemblyBudget>) -> Self {
        let mut receiver = Self::new(n, max_message);
        receiver.budget = Some(budget);
        receiver
    }

    /// As [`Receiver::with_budget`], its partial messages holding at most `share` bytes
    /// together (a message that would take more is discarded, counted in
    /// [`RxStats::over_share`]): one peer's endless fragments cannot take the whole
    /// budget.
    pub fn with_limits(
        n: &Negotiated,
        max_message: usize,
        share: usize,
        budget: Option<Arc<ReassemblyBudget>>,
    ) -> Self {
        let mut receiver = Self::new(n, max_message);
        receiver.budget = budget;
        receiver.share = share;
        receiver
    }

    /// Losses noticed so far.
    pub const fn stats(&self) -> RxStats {
        self.stats
    }

    /// Restarts the channel (`priority`, `reliability`) at `next_sn`, the SN its next
    /// Frame or Fragment takes (a multicast member's Join says it); a message being
    /// reassembled there is kept. Ignored for a priority without QoS.
    pub fn sync(&mut self, priority: Priority, reliability: Reliability, next_sn: u32) {
        if !self.qos && priority != Priority::Data {
            return;
        }
        self.channels[index(priority, reliability)]
            .window
            .restart(next_sn);
    }

    /// Bytes held by partially reassembled messages.
    pub fn reassembly_bytes(&self) -> usize {
        self.channels.iter().map(|c| c.defrag.buffered()).sum()
    }

    fn channel(
        &mut self,
        priority: Priority,
        reliability: Reliability,
    ) -> Result<&mut Channel, RxError> {
        if !self.qos && priority != Priority::Data {
            return Err(RxError::PriorityWithoutQos(priority));
        }
        Ok(&mut self.channels[index(priority, reliability)])
    }

    /// Judges a Frame's or Fragment's SN; `Ok(false)` means drop it as stale.
    fn admit(
        &mut self,
        priority: Priority,
        reliability: Reliability,
        sn: u32,
    ) -> Result<bool, RxError> {
        let verdict = self.channel(priority, reliability)?.window.accept(sn);
        match verdict {
            SnVerdict::InOrder => Ok(true),
            SnVerdict::Gap { missing } => {
                self.stats.gaps += u64::from(missing);
                Ok(true)
            }
            SnVerdict::Stale => {
                self.stats.stale += 1;
                Ok(false)
            }
            SnVerdict::OutOfRange => Err(RxError::SnOutOfRange(sn)),
        }
    }

    /// Handles one batch, calling `deliver` for every network message in order.
    pub fn on_batch<F>(&mut self, batch: &[u8], mut deliver: F) -> Result<Control, RxError>
    where
        F: FnMut(&Incoming<'_, '_>),
    {
        // The channel of the Frame being read; `None` while a stale Frame is skipped.
        let mut current: Option<(Priority, Reliability)> = None;
        let mut control = Control::Alive;
        let mut items = BatchReader::new(batch);
        loop {
            // Matched where the reader built it, so that no message is moved.
            let next = items.next();
            let item = match &next {
                None => break,
                Some(Err(e)) => return Err((*e).into()),
                Some(Ok(item)) => item,
            };
            match item {
                BatchItem::Frame(h) => {
                    current = self
                        .admit(h.priority, h.reliability, h.sn)?
                        .then_some((h.priority, h.reliability));
                }
                BatchItem::Network(message) => {
                    if let Some((priority, reliability)) = current {
                        deliver(&Incoming {
                            priority,
                            reliability,
                            message,
                            reassembled: None,
                        });
                    }
                }
                BatchItem::Transport(t) => {
                    current = None;
                    match t {
                        TransportMessage::KeepAlive(_) => {}
                        TransportMessage::Close(c) => {
                            control = Control::Closed {
                                reason: c.reason,
                                session: c.session,
                            };
                        }
                        TransportMessage::Fragment(f) => {
                            let (p, r) = (f.header.priority, f.header.reliability);
                            if self.admit(p, r, f.header.sn)? {
                                self.reassemble(f, &mut deliver)?;
                            }
                        }
                        TransportMessage::Oam(_) => {}
                        other => return Err(RxError::Unexpected(other.name())),
                    }
                }
            }
        }
        Ok(control)
    }

    fn reassemble<F>(
        &mut self,
        f: &weft_proto::transport::Fragment<'_>,
        deliver: &mut F,
    ) -> Result<(), RxError>
    where
        F: FnMut(&Incoming<'_, '_>),
    {
        let (priority, reliability) = (f.header.priority, f.header.reliability);
        let held = self.reassembly_bytes();
        let channel = &mut self.channels[index(priority, reliability)];
        let before = channel.defrag.buffered();
        if held.saturating_add(f.payload.len()) > self.share {
            // Checked before the bytes are taken: the buffers never grow past the share.
            // The rest of this message is then refused as having no start.
            channel.defrag.clear();
            if let Some(budget) = &self.budget {
                budget.used.fetch_sub(before, Ordering::Relaxed);
            }
            self.stats.fragments_discarded += 1;
            self.stats.over_share += 1;
            return Ok(());
        }
        // What the fragment did; the borrow of the reassembled bytes ends here.
        let pushed = channel.defrag.push(&f.header, f.payload).map(|d| match d {
            Defragmented::Pending => Step::Pending,
            Defragmented::Dropped => Step::Dropped,
            Defragmented::Complete(_) => Step::Complete,
        });
        let after = channel.defrag.buffered();
        if let Some(budget) = &self.budget {
            if after >= before {
                let used = budget.used.fetch_add(after - before, Ordering::Relaxed);
                if used + after - before > budget.max {
                    channel.defrag.clear();
                    budget.used.fetch_sub(after, Ordering::Relaxed);
                    self.stats.fragments_discarded += 1;
                    self.stats.over_budget += 1;
                    return Ok(());
                }
            } else {
                budget.used.fetch_sub(before - after, Ordering::Relaxed);
            }
        }
        match pushed {
            Ok(Step::Pending) => {}
            Ok(Step::Dropped) => self.stats.fragments_discarded += 1,
            Ok(Step::Complete) => {
                // The buffer leaves the reassembler, so that the receiver may keep the
                // payload without a copy; it comes back unless someone kept it.
                let buf = Arc::new(channel.defrag.take_complete());
                match NetworkMessage::decode_exact(&buf) {
                    Ok(message) => deliver(&Incoming {
                        priority,
                        reliability,
                        message: &message,
                        reassembled: Some(&buf),
                    }),
                    Err(_) => self.stats.undecodable += 1,
                }
                if let Ok(buf) = Arc::try_unwrap(buf) {
                    channel.defrag.recycle(buf);
                }
            }
            Err(DefragError::TooLarge { .. }) => {
                self.stats.fragments_discarded += 1;
                self.stats.too_large += 1;
            }
            Err(DefragError::Gap { .. } | DefragError::NoStart { .. }) => {
                self.stats.fragments_discarded += 1;
            }
        }
        Ok(())
    }
}
