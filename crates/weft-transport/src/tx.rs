//! The transmit side of an established unicast transport: packing network messages into
//! batches.
//!
//! [`Transmitter::push`] appends a message to the batch being built, inside a Frame of the
//! message's channel (opening a new Frame, with the channel's next SN, when the channel
//! changes). When the message does not fit, the caller sends the pending batch
//! ([`Transmitter::take`]) and pushes again; a message too large for any batch is cut into
//! Fragments, each alone in its batch, with consecutive SNs and the First marker on the
//! first one. Encoding writes directly into the batch buffer: no allocation per message.

use thiserror::Error;
use weft_proto::core::{Priority, Reliability};
use weft_proto::network::NetworkMessage;
use weft_proto::transport::{FragmentHeader, FrameHeader, KeepAlive, TransportMessage};
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

/// Builds the batches of one transport.
pub struct Transmitter {
    qos: bool,
    counters: [SnCounter; 16],
    buf: Vec<u8>,
    len: usize,
    open: Option<(Priority, Reliability)>,
    scratch: Vec<u8>,
}

const fn index(priority: Priority, reliability: Reliability) -> usize {
    priority.to_u8() as usize * 2 + reliability.is_reliable() as usize
}

impl Transmitter {
    /// A transmitter for a transport established with `n`, building batches of at most
    /// `max_batch` bytes (on stream links: the negotiated batch size minus the 2-byte
    /// length prefix).
    pub fn new(n: &Negotiated, max_batch: usize) -> Self {
        let bits = n.resolution.frame_sn();
        Self {
            qos: n.qos,
            counters: [SnCounter::new(n.own_initial_sn, bits); 16],
            buf: vec![0; max_batch],
            len: 0,
            open: None,
            scratch: Vec::new(),
        }
    }

    /// Whether a batch is pending.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes in the pending batch.
    pub const fn pending(&self) -> usize {
        self.len
    }

    /// Takes the pending batch (empty if none); the next push starts a new one.
    pub fn take(&mut self) -> &[u8] {
        let len = std::mem::take(&mut self.len);
        self.open = None;
        &self.buf[..len]
    }

    /// Appends a KeepAlive to the pending batch (which should then be sent).
    pub fn keep_alive(&mut self) -> Result<Pushed, TxError> {
        let mut w = SliceWriter::new(&mut self.buf[self.len..]);
        match TransportMessage::KeepAlive(KeepAlive::default()).encode(&mut w) {
            Ok(()) => {
                self.len += w.written();
                self.open = None;
                Ok(Pushed::Appended)
            }
            Err(EncodeError::BufferFull { .. }) => Ok(Pushed::Full),
            Err(e) => Err(TxError::Encode(e)),
        }
    }

    fn check_priority(&self, priority: Priority) -> Result<(), TxError> {
        if !self.qos && priority != Priority::Data {
            return Err(TxError::PriorityWithoutQos(priority));
        }
        Ok(())
    }

    /// Appends `msg` to the pending batch on the channel (`priority`, `reliability`).
    ///
    /// Returns [`Pushed::Full`] when it does not fit in what is left of the batch but would
    /// fit in an empty one. Use [`Transmitter::fragment`] for messages larger than a batch
    /// (a push into an empty batch that still does not fit tells it: `Full` with nothing
    /// pending).
    pub fn push(
        &mut self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
    ) -> Result<Pushed, TxError> {
        self.check_priority(priority)?;
        let channel = (priority, reliability);
        let start = self.len;
        let mut w = SliceWriter::new(&mut self.buf[start..]);
        let new_frame = self.open != Some(channel);
        let counter = &mut self.counters[index(priority, reliability)];
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
                    self.open = Some(channel);
                }
                self.len += w.written();
                Ok(Pushed::Appended)
            }
            Err(EncodeError::BufferFull { .. }) => Ok(Pushed::Full),
            Err(e) => Err(TxError::Encode(e)),
        }
    }

    /// Sends a message too large for one batch as Fragments, calling `send` with each
    /// batch in order. The pending batch, if any, is sent first.
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
        let room = self.buf.len().saturating_sub(FRAGMENT_HEADER_MAX);
        if room == 0 {
            return Err(TxError::BatchTooSmall(self.buf.len()));
        }
        if !self.is_empty() {
            send(self.take());
        }
        self.scratch.clear();
        msg.encode(&mut self.scratch).map_err(TxError::Encode)?;
        let counter = &mut self.counters[index(priority, reliability)];
        let total = self.scratch.len();
        let mut offset = 0;
        while offset < total {
            let end = (offset + room).min(total);
            let mut header =
                FragmentHeader::new(reliability, priority, counter.take(), end < total);
            header.first = offset == 0;
            let mut w = SliceWriter::new(&mut self.buf);
            header.encode(&mut w).map_err(TxError::Encode)?;
            w.put(&self.scratch[offset..end]).map_err(TxError::Encode)?;
            let n = w.written();
            send(&self.buf[..n]);
            offset = end;
        }
        self.open = None;
        Ok(())
    }
}
