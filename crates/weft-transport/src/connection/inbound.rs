//! The receiving half of a connection: batches cut from the link's bytes, handed to the
//! [`Receiver`], and the peer's lease.

use std::time::{Duration, Instant};

use weft_proto::batch::framing::PrefixWidth;

use super::transmit::Framing;
use super::{EndReason, Limits};
use crate::establish::Negotiated;
use crate::rx::{Control, Incoming, Receiver, RxError, RxStats};

/// Why received bytes end the connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// A batch that breaks the protocol.
    #[error("{0}")]
    Rx(#[from] RxError),
    /// A batch longer than the negotiated batch size.
    #[error("a batch of {len} bytes, over the negotiated {max}")]
    BatchTooLarge {
        /// Its length.
        len: usize,
        /// The negotiated batch size.
        max: usize,
    },
    /// Bytes after the connection ended.
    #[error("the connection has ended")]
    Ended,
}

/// What the bytes handed in did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Input {
    /// Bytes taken from the start of what was handed in (whole batches); the rest, the
    /// start of a batch, is to be handed in again with what follows it.
    pub consumed: usize,
    /// Batches handled.
    pub batches: usize,
    /// The peer closed the connection in these bytes.
    pub closed_by_peer: bool,
}

/// The receiving half of a connection.
pub struct Inbound {
    rx: Receiver,
    framing: Framing,
    max_batch: usize,
    peer_lease: Duration,
    last_rx: Instant,
    ended: bool,
}

impl Inbound {
    /// The receiving half of a transport established with `n`, starting `now`.
    pub fn new(n: &Negotiated, framing: Framing, limits: &Limits, now: Instant) -> Self {
        let rx = match &limits.reassembly_budget {
            Some(budget) => Receiver::with_budget(n, limits.max_message, budget.clone()),
            None => Receiver::new(n, limits.max_message),
        };
        let max_batch = match framing {
            // A 2-byte prefix bounds the batch itself, as Zenoh peers rely on; the 4-byte
            // one of low-latency links does not.
            Framing::Stream(PrefixWidth::U16) => usize::from(u16::MAX),
            Framing::Stream(PrefixWidth::U32) => usize::from(n.batch_size),
            Framing::Datagram => usize::from(n.batch_size),
        };
        Self {
            rx,
            framing,
            max_batch,
            peer_lease: Duration::from_millis(n.peer_lease_ms.max(1)),
            last_rx: now,
            ended: false,
        }
    }

    /// Losses the receiver noticed.
    pub const fn stats(&self) -> RxStats {
        self.rx.stats()
    }

    /// Bytes held by partially reassembled messages.
    pub fn reassembly_bytes(&self) -> usize {
        self.rx.reassembly_bytes()
    }

    /// Whether the peer closed or input ended the connection.
    pub const fn is_ended(&self) -> bool {
        self.ended
    }

    /// Bytes read from a stream link at `now`: every whole batch in them is handled, each
    /// network message handed to `deliver` with the batch it came in (for the payloads
    /// kept from it). The bytes of a batch that came in part are not consumed.
    pub fn handle_stream<F>(
        &mut self,
        bytes: &[u8],
        now: Instant,
        mut deliver: F,
    ) -> Result<Input, InputError>
    where
        F: FnMut(&Incoming<'_, '_>, &[u8]),
    {
        let Framing::Stream(width) = self.framing else {
            return self.handle_datagram(bytes, now, deliver).map(|mut input| {
                input.consumed = bytes.len();
                input
            });
        };
        let mut input = Input {
            consumed: 0,
            batches: 0,
            closed_by_peer: false,
        };
        if self.ended {
            return Err(InputError::Ended);
        }
        loop {
            let rest = &bytes[input.consumed..];
            let Some(len) = width.read(rest) else { break };
            if len > self.max_batch {
                self.ended = true;
                return Err(InputError::BatchTooLarge {
                    len,
                    max: self.max_batch,
                });
            }
            let Some((batch, taken)) = width.whole_batch(rest) else {
                break;
            };
            input.consumed += taken;
            input.batches += 1;
            self.last_rx = now;
            if self.batch(batch, &mut deliver)? {
                input.closed_by_peer = true;
                break;
            }
        }
        Ok(input)
    }

    /// One datagram from a datagram link at `now` (one batch).
    pub fn handle_datagram<F>(
        &mut self,
        datagram: &[u8],
        now: Instant,
        mut deliver: F,
    ) -> Result<Input, InputError>
    where
        F: FnMut(&Incoming<'_, '_>, &[u8]),
    {
        if self.ended {
            return Err(InputError::Ended);
        }
        if datagram.len() > self.max_batch {
            // A datagram link does not end over one oversized datagram: it is not ours.
            return Ok(Input {
                consumed: datagram.len(),
                batches: 0,
                closed_by_peer: false,
            });
        }
        self.last_rx = now;
        let closed_by_peer = self.batch(datagram, &mut deliver)?;
        Ok(Input {
            consumed: datagram.len(),
            batches: 1,
            closed_by_peer,
        })
    }

    /// One batch; whether the peer closed the connection in it.
    fn batch<F>(&mut self, batch: &[u8], deliver: &mut F) -> Result<bool, InputError>
    where
        F: FnMut(&Incoming<'_, '_>, &[u8]),
    {
        match self.rx.on_batch(batch, |m| deliver(m, batch)) {
            Ok(Control::Alive) => Ok(false),
            Ok(Control::Closed { .. }) => {
                self.ended = true;
                Ok(true)
            }
            Err(e) => {
                self.ended = true;
                Err(e.into())
            }
        }
    }

    /// Whether the peer's lease has run out at `now`.
    pub fn expired(&self, now: Instant) -> Option<EndReason> {
        let silent = now.saturating_duration_since(self.last_rx);
        (!self.ended && silent >= self.peer_lease).then_some(EndReason::LeaseExpired { silent })
    }

    /// When the peer's lease runs out if nothing comes.
    pub fn poll_timeout(&self) -> Option<Instant> {
        (!self.ended).then(|| self.last_rx + self.peer_lease)
    }

    /// The connection ended: later bytes are refused.
    pub(super) fn end(&mut self) {
        self.ended = true;
    }
}
