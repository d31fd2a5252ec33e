//! Batches: what one link write carries.
//!
//! A batch is a sequence of transport messages; a Frame's network messages follow its
//! header until a byte that is not a network-message header. [`BatchReader`] walks a batch
//! and yields a flat sequence of [`BatchItem`]s without allocating: the hot path of a
//! receiver. Encoding the items of a batch in order gives back the batch's bytes.
//!
//! On stream links each batch is preceded by its length ([`framing`]); when compression is
//! negotiated a batch starts with a header byte and may be an LZ4 block ([`compression`]);
//! on low-latency links a batch holds one bare network message (or KeepAlive/Close).

#[cfg(feature = "compression")]
pub mod compression;
pub mod defrag;
pub mod framing;

use alloc::vec::Vec;

use crate::error::{DecodeError, EncodeError};
use crate::network::{is_network_header, NetworkMessage};
use crate::reader::Reader;
use crate::transport::{self, Frame, FrameHeader, TransportHead, TransportMessage};
use crate::writer::Writer;

/// One element of a decoded batch.
// Items are moved, not boxed: decoding a batch must not allocate.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchItem<'a> {
    /// A transport message other than Frame.
    Transport(TransportMessage<'a>),
    /// The header of a Frame; the Frame's network messages follow as `Network` items.
    Frame(FrameHeader<'a>),
    /// A network message: inside the last Frame, or bare on a low-latency link.
    Network(NetworkMessage<'a>),
}

impl BatchItem<'_> {
    /// Encodes the item; encoding every item of a batch in order rebuilds the batch.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        match self {
            Self::Transport(m) => m.encode(w),
            Self::Frame(h) => h.encode(w),
            Self::Network(m) => m.encode(w),
        }
    }
}

/// Walks a batch, yielding its items; stops after the first error.
#[derive(Debug, Clone)]
pub struct BatchReader<'a> {
    r: Reader<'a>,
    in_frame: bool,
    low_latency: bool,
    failed: bool,
}

impl<'a> BatchReader<'a> {
    /// A reader over one batch (without stream prefix or compression header).
    pub const fn new(batch: &'a [u8]) -> Self {
        Self::with_base(batch, 0)
    }

    /// A reader whose error offsets are shifted by `base` (the batch's offset in a stream).
    pub const fn with_base(batch: &'a [u8], base: usize) -> Self {
        Self {
            r: Reader::with_base(batch, base),
            in_frame: false,
            low_latency: false,
            failed: false,
        }
    }

    /// Accept bare network messages outside Frames (a low-latency link).
    #[must_use]
    pub const fn low_latency(mut self, on: bool) -> Self {
        self.low_latency = on;
        self
    }

    /// Offset (in the enclosing input) of the next byte to decode.
    pub const fn offset(&self) -> usize {
        self.r.offset()
    }

    fn next_item(&mut self) -> Result<BatchItem<'a>, DecodeError> {
        let header = self.r.peek_u8().unwrap_or_default();
        if is_network_header(header) && (self.in_frame || self.low_latency) {
            return NetworkMessage::decode(&mut self.r).map(BatchItem::Network);
        }
        let at = self.r.position();
        let header = self.r.u8()?;
        self.in_frame = false;
        match transport::read_head(&mut self.r, header, at)? {
            TransportHead::Frame(fh) => {
                self.in_frame = true;
                Ok(BatchItem::Frame(fh))
            }
            TransportHead::Message(m) => Ok(BatchItem::Transport(m)),
        }
    }
}

impl<'a> Iterator for BatchReader<'a> {
    type Item = Result<BatchItem<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.r.is_empty() {
            return None;
        }
        let item = self.next_item();
        self.failed = item.is_err();
        Some(item)
    }
}

/// A batch decoded into messages: either a transport message (Frames with their network
/// messages nested) or, on a low-latency link, a bare network message.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchMessage<'a> {
    /// A transport message.
    Transport(TransportMessage<'a>),
    /// A network message outside any Frame (low-latency links only).
    Network(NetworkMessage<'a>),
}

/// Decodes a whole batch, nesting each Frame's network messages inside it.
///
/// Allocates the result; the receive path uses [`BatchReader`] instead.
pub fn decode_batch(batch: &[u8], low_latency: bool) -> Result<Vec<BatchMessage<'_>>, DecodeError> {
    let mut out: Vec<BatchMessage<'_>> = Vec::new();
    let mut frame: Option<Frame<'_>> = None;
    for item in BatchReader::new(batch).low_latency(low_latency) {
        match item? {
            BatchItem::Network(m) => match frame.as_mut() {
                Some(f) => f.messages.push(m),
                None => out.push(BatchMessage::Network(m)),
            },
            other => {
                if let Some(f) = frame.take() {
                    out.push(BatchMessage::Transport(TransportMessage::Frame(f)));
                }
                match other {
                    BatchItem::Frame(header) => {
                        frame = Some(Frame {
                            header,
                            messages: Vec::new(),
                        });
                    }
                    BatchItem::Transport(m) => out.push(BatchMessage::Transport(m)),
                    BatchItem::Network(_) => unreachable!("handled above"),
                }
            }
        }
    }
    if let Some(f) = frame {
        out.push(BatchMessage::Transport(TransportMessage::Frame(f)));
    }
    Ok(out)
}

/// Encodes decoded batch messages back into one batch.
pub fn encode_batch<W: Writer>(
    messages: &[BatchMessage<'_>],
    w: &mut W,
) -> Result<(), EncodeError> {
    for m in messages {
        match m {
            BatchMessage::Transport(t) => t.encode(w)?,
            BatchMessage::Network(n) => n.encode(w)?,
        }
    }
    Ok(())
}
