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
pub mod serial;

use alloc::vec::Vec;

use crate::error::{DecodeError, EncodeError};
use crate::network::{is_network_header, NetworkMessage, PlainPush};
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

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.r.is_empty() {
            return None;
        }
        // The hot paths: a Push without extension carrying a plain Put or Del, and a Frame
        // header without extension, each built directly as the returned item. Anything
        // else, malformed input included, goes the general way.
        if self.in_frame || self.low_latency {
            if let Some(p) = PlainPush::read(&mut self.r) {
                return Some(Ok(BatchItem::Network(NetworkMessage::Push(p.into_push()))));
            }
        }
        if let Some(fh) = FrameHeader::read_plain(&mut self.r) {
            self.in_frame = true;
            return Some(Ok(BatchItem::Frame(fh)));
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

#[cfg(test)]
mod tests {
    use alloc::vec;
    use alloc::vec::Vec;

    use super::*;
    use crate::core::{
        Encoding, Mapping, NetworkQos, Priority, Reliability, Timestamp, WireExpr, ZenohId,
    };
    use crate::network::Push;
    use crate::zenoh::{Del, PushBody, Put};

    /// The items of a batch as the general decoders alone give them (no fast path).
    fn general_walk(bytes: &[u8], low_latency: bool) -> Vec<Result<BatchItem<'_>, DecodeError>> {
        let mut br = BatchReader::new(bytes).low_latency(low_latency);
        let mut out = Vec::new();
        while !br.r.is_empty() {
            let item = br.next_item();
            let failed = item.is_err();
            out.push(item);
            if failed {
                break;
            }
        }
        out
    }

    fn assert_same_walk(bytes: &[u8]) {
        for low_latency in [false, true] {
            let fast: Vec<_> = BatchReader::new(bytes).low_latency(low_latency).collect();
            assert_eq!(
                fast,
                general_walk(bytes, low_latency),
                "batch {bytes:02x?}, low latency {low_latency}"
            );
        }
    }

    fn pushes<'a>(payload: &'a [u8]) -> Vec<Push<'a>> {
        let mut out = Vec::new();
        for scope in [0u16, 7, 127, 128, 300, u16::MAX] {
            for suffix in ["", "a/b/c"] {
                for mapping in [Mapping::Sender, Mapping::Receiver] {
                    let key = WireExpr {
                        scope,
                        suffix,
                        mapping,
                    };
                    out.push(Push::new(key, PushBody::Put(Put::new(payload))));
                    out.push(Push::new(key, PushBody::Del(Del::default())));
                }
            }
        }
        let key = WireExpr {
            scope: 7,
            suffix: "",
            mapping: Mapping::Sender,
        };
        let mut with_qos = Push::new(key, PushBody::Put(Put::new(payload)));
        with_qos.qos = NetworkQos::REQUEST;
        out.push(with_qos);
        let mut put = Put::new(payload);
        put.encoding = Encoding {
            id: 5,
            schema: None,
        };
        out.push(Push::new(key, PushBody::Put(put)));
        let mut put = Put::new(payload);
        put.timestamp = Some(Timestamp {
            time: 0x1234_5678_9abc,
            id: ZenohId::new(0x42).unwrap(),
        });
        out.push(Push::new(key, PushBody::Put(put)));
        let mut put = Put::new(payload);
        put.attachment = Some(b"att");
        out.push(Push::new(key, PushBody::Put(put)));
        // What a block publisher sends through a router: QoS and a timestamp.
        let ts = Timestamp {
            time: 0x7fff_1234_5678_9abc,
            id: ZenohId::new(0xC3C3_C3C3_C3C3_C3C3_C3C3_C3C3_C3C3_C3C3).unwrap(),
        };
        for qos in [NetworkQos::DECLARE, NetworkQos::from_byte(0x19)] {
            for suffix in ["", "a/b"] {
                let key = WireExpr {
                    scope: 0,
                    suffix,
                    mapping: Mapping::Receiver,
                };
                let mut put = Put::new(payload);
                put.timestamp = Some(ts);
                let mut push = Push::new(key, PushBody::Put(put));
                push.qos = qos;
                out.push(push);
                let mut push = Push::new(
                    key,
                    PushBody::Del(Del {
                        timestamp: Some(ts),
                        ..Del::default()
                    }),
                );
                push.qos = qos;
                out.push(push);
            }
        }
        out
    }

    fn frames() -> Vec<FrameHeader<'static>> {
        let mut out = Vec::new();
        for sn in [0u32, 127, 128, 16_383, 16_384, u32::MAX] {
            for reliability in [Reliability::Reliable, Reliability::BestEffort] {
                for priority in [Priority::Data, Priority::Control] {
                    out.push(FrameHeader::new(reliability, priority, sn));
                }
            }
        }
        out
    }

    #[test]
    fn fast_paths_decode_exactly_like_the_general_decoders() {
        let payload: Vec<u8> = (0..200u8).collect();
        for len in [0, 8, 127, 128, 200] {
            for push in pushes(&payload[..len]) {
                for fh in frames().into_iter().step_by(5) {
                    let mut batch = Vec::new();
                    fh.encode(&mut batch).unwrap();
                    push.encode(&mut batch).unwrap();
                    push.encode(&mut batch).unwrap();
                    assert_same_walk(&batch);
                    let items: Vec<_> = BatchReader::new(&batch).collect();
                    assert_eq!(items.len(), 3);
                    assert_eq!(
                        items[2],
                        Ok(BatchItem::Network(NetworkMessage::Push(push.clone())))
                    );
                }
            }
        }
    }

    #[test]
    fn fast_paths_fail_exactly_like_the_general_decoders() {
        let payload = [0xA5u8; 8];
        let mut batches = Vec::new();
        for fh in frames() {
            let mut batch = Vec::new();
            fh.encode(&mut batch).unwrap();
            for push in pushes(&payload).iter().step_by(3) {
                push.encode(&mut batch).unwrap();
            }
            batches.push(batch);
        }
        // Bare messages (outside any Frame) too, as on a low-latency link.
        let mut bare = Vec::new();
        for push in pushes(&payload) {
            push.encode(&mut bare).unwrap();
        }
        batches.push(bare);

        for batch in &batches {
            for end in 0..=batch.len() {
                assert_same_walk(&batch[..end]);
            }
            for at in 0..batch.len() {
                let original = batch[at];
                let values = [
                    0x00,
                    0x01,
                    0x02,
                    0x05,
                    0x1d,
                    0x25,
                    0x5d,
                    0x7f,
                    0x80,
                    0xff,
                    original ^ 0x20,
                    original ^ 0x40,
                    original ^ 0x80,
                ];
                let mut corrupt = batch.clone();
                for v in values {
                    corrupt[at] = v;
                    assert_same_walk(&corrupt);
                }
            }
        }
    }

    #[test]
    fn fast_path_stops_at_a_transport_message() {
        let mut batch = Vec::new();
        FrameHeader::new(Reliability::Reliable, Priority::Data, 1)
            .encode(&mut batch)
            .unwrap();
        let key = WireExpr::key("k");
        Push::new(key, PushBody::Put(Put::new(b"v")))
            .encode(&mut batch)
            .unwrap();
        FrameHeader::new(Reliability::BestEffort, Priority::Data, 2)
            .encode(&mut batch)
            .unwrap();
        Push::new(key, PushBody::Del(Del::default()))
            .encode(&mut batch)
            .unwrap();
        assert_same_walk(&batch);
        let kinds: Vec<_> = BatchReader::new(&batch)
            .map(|i| match i.unwrap() {
                BatchItem::Frame(f) => (0, f.sn),
                BatchItem::Network(_) => (1, 0),
                BatchItem::Transport(_) => (2, 0),
            })
            .collect();
        assert_eq!(kinds, vec![(0, 1), (1, 0), (0, 2), (1, 0)]);
    }
}
