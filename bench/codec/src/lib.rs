//! The message shapes measured by the weft codec benchmarks, built, encoded and walked
//! with `weft-proto`.
//!
//! Every case is one batch: a reliable Frame (priority Data, so no QoS extension) holding
//! `count` Push messages, each carrying a Put of `payload_len` bytes on key-expression id
//! [`SCOPE`] as declared by the sender (no suffix, M flag set). The Zenoh side of the
//! comparison lives in `support/zenoh.rs`, next to the benchmark that uses it.
//!
//! On both sides the measured functions are kept out of line (`#[inline(never)]`): each
//! iteration of a benchmark is one call, as an application makes it.

use core::hint::black_box;

use weft_proto::batch::{BatchItem, BatchReader};
use weft_proto::core::{Mapping, Priority, Reliability, WireExpr};
use weft_proto::network::{NetworkMessage, Push, SplitEncoding};
use weft_proto::transport::FrameHeader;
use weft_proto::zenoh::{PushBody, Put};
use weft_proto::{DecodeError, EncodeError, Writer};

/// Sequence number of the Frame (two zint bytes on the wire).
pub const SN: u32 = 12_345;

/// Key-expression id every Push refers to.
pub const SCOPE: u16 = 7;

/// One benchmarked batch shape.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// Short name used in benchmark ids.
    pub name: &'static str,
    /// Payload bytes of each Put.
    pub payload_len: usize,
    /// Number of Push messages in the Frame.
    pub count: usize,
}

/// The three shapes: one small message, one 64 KiB message, one batch of 100 small ones.
pub const CASES: [Case; 3] = [
    Case {
        name: "push_8B",
        payload_len: 8,
        count: 1,
    },
    Case {
        name: "push_64KiB",
        payload_len: 64 * 1024,
        count: 1,
    },
    Case {
        name: "batch_100x8B",
        payload_len: 8,
        count: 100,
    },
];

/// A payload of `len` bytes with a non-constant pattern.
pub fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + 7) as u8).collect()
}

/// The Frame header of every case.
pub fn weft_header() -> FrameHeader<'static> {
    FrameHeader::new(Reliability::Reliable, Priority::Data, SN)
}

/// One Push/Put of `payload` on the declared key-expression id.
pub fn weft_push(payload: &[u8]) -> Push<'_> {
    let key = WireExpr {
        scope: SCOPE,
        suffix: "",
        mapping: Mapping::Sender,
    };
    Push::new(key, PushBody::Put(Put::new(payload)))
}

/// The send path: the Frame header, then `count` times the Push.
///
/// Each message is passed through [`black_box`], as if every one were a different message:
/// the compiler may not compute the encoding of the Push once for the whole batch.
#[inline(never)]
pub fn weft_encode<W: Writer>(
    w: &mut W,
    header: &FrameHeader<'_>,
    push: &Push<'_>,
    count: usize,
) -> Result<(), EncodeError> {
    header.encode(w)?;
    for _ in 0..count {
        black_box(push).encode(w)?;
    }
    Ok(())
}

/// The send path of a message too large to copy cheaply, as weft's transport takes it
/// before cutting fragments: the Frame header and the message into `head`, all but the
/// payload, which is left where it is (returned with its place in `head`).
#[inline(never)]
pub fn weft_encode_zero_copy<'p>(
    head: &mut Vec<u8>,
    header: &FrameHeader<'_>,
    msg: &NetworkMessage<'p>,
) -> Result<SplitEncoding<'p>, EncodeError> {
    header.encode(head)?;
    black_box(msg).encode_split(head)
}

/// What walking a batch found: Frames, Push/Put messages and payload bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Walked {
    /// Frame headers seen.
    pub frames: usize,
    /// Put messages seen.
    pub puts: usize,
    /// Sum of the Put payload lengths.
    pub payload_bytes: usize,
}

/// The receive path: walks the whole batch with [`BatchReader`], handing every Put payload
/// to an opaque sink so that nothing is optimised away.
#[inline(never)]
pub fn weft_decode(batch: &[u8]) -> Result<Walked, DecodeError> {
    let mut walked = Walked::default();
    for item in BatchReader::new(batch) {
        match item? {
            BatchItem::Frame(header) => {
                black_box(header.sn);
                walked.frames += 1;
            }
            BatchItem::Network(NetworkMessage::Push(push)) => {
                black_box(push.wire_expr.scope);
                if let PushBody::Put(put) = &push.body {
                    walked.payload_bytes += black_box(put.payload).len();
                    walked.puts += 1;
                }
            }
            _ => {}
        }
    }
    Ok(walked)
}
