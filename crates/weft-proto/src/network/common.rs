//! Extensions shared by every network message: QoS, Timestamp, NodeId, TsStack.

use crate::core::{NetworkQos, Timestamp};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::ext::{self, id, ExtWriter, Extension};
use crate::reader::Reader;
use crate::writer::Writer;

/// The timestamp-stack instrumentation extension (0x47), validated and kept as bytes.
///
/// Body: `|conf_flags|` (bit 0 send, bit 1 route, bit 2 receive; 0 is invalid),
/// `%count%` (at most 255), then `count` × (`|flags|`, `<u8;z32>` timestamp).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TsStack<'a> {
    raw: &'a [u8],
}

impl<'a> TsStack<'a> {
    /// Validates an extension body.
    pub fn parse(raw: &'a [u8]) -> Result<Self, DecodeError> {
        Self::check(Reader::new(raw))?;
        Ok(Self { raw })
    }

    fn check(mut r: Reader<'a>) -> Result<(), DecodeError> {
        let conf = r.u8()?;
        if conf == 0 {
            return Err(r.error_at(
                0,
                DecodeErrorKind::InvalidValue {
                    field: "TsStack configuration flags",
                    value: u64::from(conf),
                },
            ));
        }
        let count = r.zint_max(255, "TsStack entry count")?;
        for _ in 0..count {
            r.u8()?;
            r.zbytes(u64::from(u32::MAX), "TsStack timestamp length")?;
        }
        crate::zenoh::expect_end(&r, "TsStack extension")
    }

    /// The body bytes.
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.raw
    }

    /// Which interception points are configured (bit 0 send, 1 route, 2 receive).
    pub fn conf_flags(&self) -> u8 {
        self.raw[0]
    }

    /// The recorded entries: (flags, timestamp bytes).
    pub fn entries(&self) -> impl Iterator<Item = (u8, &'a [u8])> {
        let mut r = Reader::new(&self.raw[1..]);
        let count = r.zint().unwrap_or(0);
        (0..count).map_while(move |_| {
            let flags = r.u8().ok()?;
            let ts = r.zbytes(u64::from(u32::MAX), "").ok()?;
            Some((flags, ts))
        })
    }
}

/// Accumulates the common extensions while a message's extension chain is read.
#[derive(Debug, Default)]
pub(crate) struct CommonExts<'a> {
    pub(crate) qos: NetworkQos,
    pub(crate) timestamp: Option<Timestamp>,
    pub(crate) node_id: u16,
    pub(crate) ts_stack: Option<TsStack<'a>>,
}

impl<'a> CommonExts<'a> {
    /// Takes `e` if it is a common extension; returns whether it was.
    pub(crate) fn take(
        &mut self,
        r: &Reader<'a>,
        e: &Extension<'a>,
        at: usize,
    ) -> Result<bool, DecodeError> {
        match e.id {
            id::NET_QOS => {
                let v = ext::z64(e);
                if v > 0xFF {
                    return Err(ext::malformed(r, at, "QoS", "value exceeds one byte"));
                }
                self.qos = NetworkQos::from_byte(v as u8);
            }
            id::NET_TIMESTAMP => {
                let mut tr = ext::zbuf_reader(r, e);
                self.timestamp = Some(Timestamp::read(&mut tr)?);
                crate::zenoh::expect_end(&tr, "Timestamp extension")?;
            }
            id::NET_NODE_ID => {
                let v = ext::z64(e);
                if v > u64::from(u16::MAX) {
                    return Err(ext::malformed(r, at, "NodeId", "value exceeds 16 bits"));
                }
                self.node_id = v as u16;
            }
            id::NET_TS_STACK => {
                let body = ext::zbuf(e);
                let base = r.offset() - body.len();
                Self::check_ts_stack(body).map_err(|err| err.shifted(base))?;
                self.ts_stack = Some(TsStack { raw: body });
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn check_ts_stack(body: &'a [u8]) -> Result<(), DecodeError> {
        TsStack::check(Reader::new(body))
    }
}

/// Number of common extensions a message with these values writes.
pub(crate) fn count(
    qos: NetworkQos,
    timestamp: &Option<Timestamp>,
    node_id: u16,
    ts_stack: &Option<TsStack<'_>>,
) -> usize {
    usize::from(qos != NetworkQos::DEFAULT)
        + usize::from(timestamp.is_some())
        + usize::from(node_id != 0)
        + usize::from(ts_stack.is_some())
}

/// Writes QoS and Timestamp (the extensions that come first).
pub(crate) fn write_head<W: Writer>(
    w: &mut W,
    ew: &mut ExtWriter,
    qos: NetworkQos,
    timestamp: &Option<Timestamp>,
) -> Result<(), EncodeError> {
    if qos != NetworkQos::DEFAULT {
        ew.z64(w, id::NET_QOS, u64::from(qos.to_byte()))?;
    }
    if let Some(ts) = timestamp {
        ew.zbuf_with(w, id::NET_TIMESTAMP, ts.encoded_len(), |w| ts.write(w))?;
    }
    Ok(())
}

/// Writes NodeId and TsStack (the extensions that come last).
pub(crate) fn write_tail<W: Writer>(
    w: &mut W,
    ew: &mut ExtWriter,
    node_id: u16,
    ts_stack: &Option<TsStack<'_>>,
) -> Result<(), EncodeError> {
    if node_id != 0 {
        ew.z64(w, id::NET_NODE_ID, u64::from(node_id))?;
    }
    if let Some(ts) = ts_stack {
        ew.zbuf(w, id::NET_TS_STACK, ts.as_bytes())?;
    }
    Ok(())
}
