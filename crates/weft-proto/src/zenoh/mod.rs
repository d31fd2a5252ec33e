//! Zenoh data messages: Put, Del (in Push and Reply), Query (in Request), Reply and Err
//! (in Response).

mod del;
mod err;
mod put;
mod query;
mod reply;

pub use del::Del;
pub use err::Err;
pub use put::Put;
pub use query::{Consolidation, Query, QueryBody};
pub use reply::Reply;

use crate::core::ZenohId;
use crate::error::{DecodeError, DecodeErrorKind, EncodeError, Layer};
use crate::reader::Reader;
use crate::writer::{zint_len, Writer};

/// Message ids of the data layer.
pub mod mid {
    /// Put.
    pub const PUT: u8 = 0x01;
    /// Del.
    pub const DEL: u8 = 0x02;
    /// Query.
    pub const QUERY: u8 = 0x03;
    /// Reply.
    pub const REPLY: u8 = 0x04;
    /// Err.
    pub const ERR: u8 = 0x05;
}

/// Who produced a message: the source entity and its sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceInfo {
    /// The source session's id.
    pub zid: ZenohId,
    /// The source entity id within that session.
    pub eid: u32,
    /// The source's sequence number.
    pub sn: u32,
}

impl SourceInfo {
    pub(crate) fn read(mut r: Reader<'_>) -> Result<Self, DecodeError> {
        let flags = r.u8()?;
        let zid = ZenohId::read(&mut r, usize::from(flags >> 4) + 1)?;
        let eid = r.z32("source entity id")?;
        let sn = r.z32("source sn")?;
        expect_end(&r, "SourceInfo extension")?;
        Ok(Self { zid, eid, sn })
    }

    pub(crate) fn encoded_len(&self) -> usize {
        1 + self.zid.size() + zint_len(u64::from(self.eid)) + zint_len(u64::from(self.sn))
    }

    pub(crate) fn write<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        w.u8(self.zid.len_nibble())?;
        self.zid.write(w)?;
        w.zint(u64::from(self.eid))?;
        w.zint(u64::from(self.sn))
    }
}

/// Fails if `r` has bytes left: a structured extension value must be consumed exactly.
pub(crate) fn expect_end(r: &Reader<'_>, message: &'static str) -> Result<(), DecodeError> {
    if r.is_empty() {
        Ok(())
    } else {
        Err(r.error(DecodeErrorKind::TrailingBytes {
            message,
            count: r.remaining(),
        }))
    }
}

/// The body of a Push or a Reply: a Put or a Del.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushBody<'a> {
    /// A value.
    Put(Put<'a>),
    /// A deletion.
    Del(Del<'a>),
}

impl<'a> PushBody<'a> {
    /// Decodes a Put or a Del.
    pub fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let at = r.position();
        let header = r.u8()?;
        match header & 0x1F {
            mid::PUT => Ok(Self::Put(Put::read(r, header)?)),
            mid::DEL => Ok(Self::Del(Del::read(r, header)?)),
            id => Err(r.error_at(
                at,
                DecodeErrorKind::UnknownMessage {
                    layer: Layer::Data,
                    id,
                },
            )),
        }
    }

    /// Encodes the Put or Del.
    #[inline(always)]
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        match self {
            Self::Put(p) => p.encode(w),
            Self::Del(d) => d.encode(w),
        }
    }
}
