//! The Zenoh reference codec (zenoh-codec 1.10.2) driven the way Zenoh's transport drives
//! it: the send path writes a `FrameHeader` then each `Push`; the receive path holds the
//! batch as a `ZSlice`, reads a `FrameReader` through the batch codec and iterates its
//! network messages until the slice is exhausted.

use core::hint::black_box;

use weft_bench_codec::{Walked, SCOPE, SN};
use zenoh_buffers::buffer::Buffer;
use zenoh_buffers::reader::DidntRead;
use zenoh_buffers::writer::HasWriter;
use zenoh_buffers::writer::{DidntWrite, Writer};
use zenoh_buffers::{ZBuf, ZSlice};
use zenoh_codec::transport::batch::Zenoh080Batch;
use zenoh_codec::transport::frame::FrameReader;
use zenoh_codec::{RCodec, WCodec, Zenoh080};
use zenoh_protocol::core::{Reliability, WireExpr};
use zenoh_protocol::network::{push, Mapping, NetworkBody, Push};
use zenoh_protocol::transport::{frame, FrameHeader};
use zenoh_protocol::zenoh::{PushBody, Put};

/// The Frame header of every case.
pub fn header() -> FrameHeader {
    FrameHeader {
        reliability: Reliability::Reliable,
        sn: SN,
        ext_qos: frame::ext::QoSType::DEFAULT,
    }
}

/// One Push/Put of `payload` on the declared key-expression id.
pub fn push_put(payload: &[u8]) -> Push {
    Push {
        wire_expr: WireExpr {
            scope: SCOPE,
            suffix: "".into(),
            mapping: Mapping::Sender,
        },
        ext_qos: push::ext::QoSType::DEFAULT,
        ext_tstamp: None,
        ext_nodeid: push::ext::NodeIdType::DEFAULT,
        ext_ts_stack: None,
        payload: PushBody::Put(Put {
            payload: ZBuf::from(payload.to_vec()),
            ..Put::default()
        }),
    }
}

/// The send path: the Frame header, then `count` times the Push (each message through
/// `black_box`, as on the weft side), appended to `w` (a `Vec<u8>` or a `BBuf`).
#[inline(never)]
pub fn encode<W: Writer>(
    w: &mut W,
    header: &FrameHeader,
    push: &Push,
    count: usize,
) -> Result<(), DidntWrite> {
    let codec = Zenoh080::new();
    codec.write(&mut *w, header)?;
    for _ in 0..count {
        codec.write(&mut *w, black_box(push))?;
    }
    Ok(())
}

/// The send path of a message too large to copy cheaply, as Zenoh's transport takes it
/// before cutting fragments: serialized into a reused `ZBuf` (cleared first), whose writer
/// keeps the payload's slice by reference instead of copying it.
#[inline(never)]
pub fn encode_zero_copy(
    zbuf: &mut ZBuf,
    header: &FrameHeader,
    push: &Push,
) -> Result<(), DidntWrite> {
    zbuf.clear();
    let mut w = zbuf.writer();
    let codec = Zenoh080::new();
    codec.write(&mut w, header)?;
    codec.write(&mut w, black_box(push))
}

/// The receive path over a batch held as a `ZSlice` (as the transport's `RBatch` holds it).
#[inline(never)]
pub fn decode(batch: &ZSlice) -> Result<Walked, DidntRead> {
    let mut walked = Walked::default();
    let mut buffer = batch.clone();
    let mut codec = Zenoh080Batch::new();
    while !buffer.is_empty() {
        let frame: FrameReader<'_, ZSlice> = (&mut codec).read(&mut buffer)?;
        black_box(frame.sn);
        walked.frames += 1;
        for msg in frame {
            if let NetworkBody::Push(push) = &msg.body {
                black_box(push.wire_expr.scope);
                if let PushBody::Put(put) = &push.payload {
                    walked.payload_bytes += black_box(&put.payload).len();
                    walked.puts += 1;
                }
            }
        }
    }
    Ok(walked)
}
