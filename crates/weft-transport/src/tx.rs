//! The transmit side of an established unicast transport: packing network messages into
//! batches.
//!
//! [`Transmitter::push`] appends a message to the batch being built for its priority,
//! inside a Frame of the message's channel (opening a new Frame, with the channel's next
//! SN, when the reliability changes). When the message does not fit, the caller sends
//! that lane's pending batch ([`Transmitter::take_lane`]) and pushes again; a message too large for any batch is cut into
//! Fragments, each alone in its batch, with consecutive SNs and the First marker on the
//! first one. Encoding writes directly into the batch buffer: no allocation per message.

use thiserror::Error;
use weft_proto::core::{Priority, Reliability};
use weft_proto::network::NetworkMessage;
use weft_proto::transport::{FragmentHeader, FrameHeader};
use weft_proto::writer::SliceWriter;
use weft_proto::{EncodeError, Writer};

use crate::establish::Negotiated;
use crate::sn::SnCounter;

/// What happened to a pushed message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// It is in the pending batch.
    Appended,
    /// The pending batch has no room: send it ([`Transmitter::take`]), then push again.
    Full,
}

/// A message that cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TxError {
    /// Encoding failed for another reason than lack of room.
    #[error("cannot encode the message: {0}")]
    Encode(EncodeError),
    /// A priority other than Data on a transport without QoS.
    #[error("priority {0} needs QoS, which was not negotiated")]
    PriorityWithoutQos(Priority),
    /// The batch size leaves no room for even one byte of fragment.
    #[error("batch size {0} is too small")]
    BatchTooSmall(usize),
}

/// Largest encoded Fragment header: header byte, 5-byte SN, QoS (2 bytes) and First (1).
const FRAGMENT_HEADER_MAX: usize = 1 + 5 + 2 + 1;

/// The batch being built for one priority.
#[derive(Default)]
struct Lane {
    buf: Vec<u8>,
    len: usize,
    open: Option<Reliability>,
}

/// Builds the batches of one transport: one pending batch per priority, so that a batch of
/// high-priority messages never waits behind low-priority ones.
pub struct Transmitter {
    qos: bool,
    max_batch: usize,
    counters: [SnCounter; 16],
    lanes: [Lane; 8],
    scratch: Vec<u8>,
}

const fn index(priority: Priority, reliability: Reliability) -> usize {
    priority.to_u8() as usize * 2 + reliability.is_reliable() as usize
}

/// A KeepAlive batch.
pub const KEEP_ALIVE_BATCH: [u8; 1] = [weft_proto::transport::mid::KEEP_ALIVE];

impl Transmitter {
    /// A transmitter for a transport established with `n`, building batches of at most
    /// `max_batch` bytes (on stream links: the negotiated batch size minus the 2-byte
    /// length prefix). Lane buffers are allocated on first use.
    pub fn new(n: &Negotiated, max_batch: usize) -> Self {
        let bits = n.resolution.frame_sn();
        Self {
            qos: n.qos,
            max_batch,
            counters: [SnCounter::new(n.own_initial_sn, bits); 16],
            lanes: Default::default(),
            scratch: Vec::new(),
        }
    }

    /// Whether no batch is pending.
    pub fn is_empty(&self) -> bool {
        self.lanes.iter().all(|l| l.len == 0)
    }

    /// Bytes pending in every lane.
    pub fn pending(&self) -> usize {
        self.lanes.iter().map(|l| l.len).sum()
    }

    /// Takes the pending batch of the highest priority that has one.
    pub fn take(&mut self) -> Option<(Priority, &[u8])> {
        let p = self.lanes.iter().position(|l| l.len > 0)?;
        let lane = &mut self.lanes[p];
        let len = std::mem::take(&mut lane.len);
        lane.open = None;
        Some((Priority::ALL[p], &lane.buf[..len]))
    }

    /// Whether nothing is pending at `priority`.
    pub fn lane_is_empty(&self, priority: Priority) -> bool {
        self.lanes[usize::from(priority.to_u8())].len == 0
    }

    /// Takes the pending batch of `priority` (empty if none).
    pub fn take_lane(&mut self, priority: Priority) -> &[u8] {
        let lane = &mut self.lanes[usize::from(priority.to_u8())];
        let len = std::mem::take(&mut lane.len);
        lane.open = None;
        &lane.buf[..len]
    }

    /// Takes the pending batch of `priority` without copying it: the lane's buffer and
    /// `out` are exchanged, and `out` is cut to the batch's length. The lane keeps `out`'s
    /// former buffer for its next batch. Returns `false` (and leaves `out` alone) if
    /// nothing is pending.
    pub fn swap_lane(&mut self, priority: Priority, out: &mut Vec<u8>) -> bool {
        let lane = &mut self.lanes[usize::from(priority.to_u8())];
        if lane.len == 0 {
            return false;
        }
        std::mem::swap(&mut lane.buf, out);
        out.truncate(std::mem::take(&mut lane.len));
        lane.open = None;
        true
    }

    fn check_priority(&self, priority: Priority) -> Result<(), TxError> {
        if !self.qos && priority != Priority::Data {
            return Err(TxError::PriorityWithoutQos(priority));
        }
        Ok(())
    }

    /// Appends `msg` to the pending batch of `priority`, on the channel (`priority`,
    /// `reliability`).
    ///
    /// Returns [`Pushed::Full`] when it does not fit in what is left of that batch. Then
    /// send the lane's batch ([`Transmitter::take_lane`]) and push again; if it still does
    /// not fit in the empty batch, use [`Transmitter::fragment`].
    pub fn push(
        &mut self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
    ) -> Result<Pushed, TxError> {
        self.check_priority(priority)?;
        let lane = &mut self.lanes[usize::from(priority.to_u8())];
        if lane.buf.len() < self.max_batch {
            lane.buf.resize(self.max_batch, 0);
        }
        let new_frame = lane.open != Some(reliability);
        let counter = &mut self.counters[index(priority, reliability)];
        // A buffer received by `swap_lane` may be longer than a batch.
        let mut w = SliceWriter::new(&mut lane.buf[lane.len..self.max_batch]);
        let attempt = (|| {
            if new_frame {
                FrameHeader::new(reliability, priority, counter.peek()).encode(&mut w)?;
            }
            msg.encode(&mut w)
        })();
        match attempt {
            Ok(()) => {
                if new_frame {
                    counter.take();
                    lane.open = Some(reliability);
                }
                lane.len += w.written();
                Ok(Pushed::Appended)
            }
            Err(EncodeError::BufferFull { .. }) => Ok(Pushed::Full),
            Err(e) => Err(TxError::Encode(e)),
        }
    }

    /// Sends a message too large for one batch as Fragments, calling `send` with each
    /// batch in order. The lane's pending batch, if any, is sent first.
    pub fn fragment<F>(
        &mut self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        mut send: F,
    ) -> Result<(), TxError>
    where
        F: FnMut(&[u8]),
    {
        self.check_priority(priority)?;
        let room = self.max_batch.saturating_sub(FRAGMENT_HEADER_MAX);
        if room == 0 {
            return Err(TxError::BatchTooSmall(self.max_batch));
        }
        let pending = self.take_lane(priority);
        if !pending.is_empty() {
            send(pending);
        }
        self.scratch.clear();
        msg.encode(&mut self.scratch).map_err(TxError::Encode)?;
        let lane = &mut self.lanes[usize::from(priority.to_u8())];
        if lane.buf.len() < self.max_batch {
            lane.buf.resize(self.max_batch, 0);
        }
        let counter = &mut self.counters[index(priority, reliability)];
        let total = self.scratch.len();
        let mut offset = 0;
        while offset < total {
            let end = (offset + room).min(total);
            let mut header =
                FragmentHeader::new(reliability, priority, counter.take(), end < total);
            header.first = offset == 0;
            let mut w = SliceWriter::new(&mut lane.buf[..self.max_batch]);
            header.encode(&mut w).map_err(TxError::Encode)?;
            w.put(&self.scratch[offset..end]).map_err(TxError::Encode)?;
            let n = w.written();
            send(&lane.buf[..n]);
            offset = end;
        }
        Ok(())
    }
}
