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
    /// Fragments were planned while the lane still had a batch pending.
    #[error("the lane of priority {0} has a pending batch: send it before the fragments")]
    LanePending(Priority),
}

/// Largest encoded Fragment header: header byte, 5-byte SN, QoS (2 bytes) and First (1).
pub const FRAGMENT_HEADER_MAX: usize = 1 + 5 + 2 + 1;

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

    /// The SN the next Frame or Fragment of the channel (`priority`, `reliability`)
    /// takes (what a multicast Join announces).
    pub fn next_sn(&self, priority: Priority, reliability: Reliability) -> u32 {
        self.counters[index(priority, reliability)].peek()
    }

    /// Whether no batch is pending.
    pub fn is_empty(&self) -> bool {
        self.lanes.iter().all(|l| l.len == 0)
    }

    /// Frees the buffers of the lanes with nothing pending and the buffer fragmented
    /// messages are encoded in; returns the bytes freed.
    pub fn release_idle_buffers(&mut self) -> usize {
        let mut freed = std::mem::take(&mut self.scratch).capacity();
        for lane in self.lanes.iter_mut().filter(|l| l.len == 0) {
            freed += std::mem::take(&mut lane.buf).capacity();
        }
        freed
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
        self.push_with(priority, reliability, |w| msg.encode(w))
    }

    /// As [`Transmitter::push`], for a network message already encoded (`encoded` is
    /// the whole message, as [`NetworkMessage::encode`] writes it).
    pub fn push_encoded(
        &mut self,
        encoded: &[u8],
        priority: Priority,
        reliability: Reliability,
    ) -> Result<Pushed, TxError> {
        self.push_with(priority, reliability, |w| w.put(encoded))
    }

    #[inline]
    fn push_with(
        &mut self,
        priority: Priority,
        reliability: Reliability,
        encode: impl FnOnce(&mut SliceWriter<'_>) -> Result<(), EncodeError>,
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
            encode(&mut w)
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
    /// batch in order (each one copied into the lane's buffer; a transport that writes
    /// vectored uses [`Transmitter::plan_fragments`] instead). The lane's pending batch,
    /// if any, is sent first.
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
        let pending = self.take_lane(priority);
        if !pending.is_empty() {
            send(pending);
        }
        let mut encoded = std::mem::take(&mut self.scratch);
        encoded.clear();
        let result = msg.encode(&mut encoded).map_err(TxError::Encode);
        let result = result.and_then(|()| {
            let fragments = self.plan_fragments(encoded.len(), priority, reliability)?;
            let lane = &mut self.lanes[usize::from(priority.to_u8())];
            for f in fragments {
                let head = f.head();
                let data = &encoded[f.range()];
                let n = head.len() + data.len();
                if lane.buf.len() < n {
                    lane.buf.resize(n, 0);
                }
                lane.buf[..head.len()].copy_from_slice(head);
                lane.buf[head.len()..n].copy_from_slice(data);
                send(&lane.buf[..n]);
            }
            Ok(())
        });
        self.scratch = encoded;
        result
    }

    /// How many Fragments a message of `len` encoded bytes is cut into.
    pub fn fragment_count(&self, len: usize) -> usize {
        len.div_ceil(self.max_batch.saturating_sub(FRAGMENT_HEADER_MAX).max(1))
    }

    /// Plans the Fragments of a message of `len` encoded bytes on the channel (`priority`,
    /// `reliability`): reserves their sequence numbers and returns, for each one in order,
    /// its header and the range of the encoded message it carries. Nothing is copied: a
    /// fragment's batch is its header followed by that range (a vectored write).
    ///
    /// The lane of `priority` must have nothing pending (take it first): its Frame would
    /// otherwise be sent after fragments with later sequence numbers.
    pub fn plan_fragments(
        &mut self,
        len: usize,
        priority: Priority,
        reliability: Reliability,
    ) -> Result<Fragments, TxError> {
        self.check_priority(priority)?;
        let room = self.max_batch.saturating_sub(FRAGMENT_HEADER_MAX);
        if room == 0 {
            return Err(TxError::BatchTooSmall(self.max_batch));
        }
        let lane = &mut self.lanes[usize::from(priority.to_u8())];
        if lane.len != 0 {
            return Err(TxError::LanePending(priority));
        }
        lane.open = None;
        let counter = &mut self.counters[index(priority, reliability)];
        let first_sn = *counter;
        for _ in 0..len.div_ceil(room) {
            counter.take();
        }
        Ok(Fragments {
            sn: first_sn,
            priority,
            reliability,
            room,
            len,
            offset: 0,
        })
    }
}

/// The Fragments of one encoded message, in order (see [`Transmitter::plan_fragments`]).
#[derive(Debug, Clone)]
pub struct Fragments {
    sn: SnCounter,
    priority: Priority,
    reliability: Reliability,
    room: usize,
    len: usize,
    offset: usize,
}

impl Fragments {
    /// How many fragments are left.
    pub fn remaining(&self) -> usize {
        (self.len - self.offset).div_ceil(self.room)
    }
}

impl Iterator for Fragments {
    type Item = PlannedFragment;

    fn next(&mut self) -> Option<PlannedFragment> {
        if self.offset >= self.len {
            return None;
        }
        let start = self.offset;
        let end = (start + self.room).min(self.len);
        let mut header = FragmentHeader::new(
            self.reliability,
            self.priority,
            self.sn.take(),
            end < self.len,
        );
        header.first = start == 0;
        let mut head = [0u8; FRAGMENT_HEADER_MAX];
        let mut w = SliceWriter::new(&mut head);
        // The buffer fits the largest header and every field is valid: cannot fail.
        let head_len = match header.encode(&mut w) {
            Ok(()) => w.written(),
            Err(_) => 0,
        };
        debug_assert!(head_len > 0, "a Fragment header always fits");
        self.offset = end;
        Some(PlannedFragment {
            head,
            head_len: head_len as u8,
            start,
            end,
        })
    }
}

/// One planned Fragment: its encoded header and the range of the message it carries.
#[derive(Debug, Clone, Copy)]
pub struct PlannedFragment {
    head: [u8; FRAGMENT_HEADER_MAX],
    head_len: u8,
    start: usize,
    end: usize,
}

impl PlannedFragment {
    /// The encoded Fragment header, the start of the batch.
    pub fn head(&self) -> &[u8] {
        &self.head[..usize::from(self.head_len)]
    }

    /// The range of the encoded message that follows the header in the batch.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start..self.end
    }
}
