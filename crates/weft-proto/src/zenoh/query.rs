//! Query: the body of a Request.
//!
//! ```text
//!  7 6 5 4 3 2 1 0
//! +-+-+-+-+-+-+-+-+
//! |Z|P|C|  QUERY  |   C: consolidation present; P: parameters present
//! +-+-+-+---------+
//! % consolidation %   if C
//! ~ parameters    ~   if P: <utf8;z16>
//! ~ [qry_exts]    ~   if Z: SourceInfo 0x41, QueryBody 0x43, Attachment 0x45
//! ```

use super::{mid, SourceInfo};
use crate::core::Encoding;
use crate::error::{DecodeError, EncodeError};
use crate::ext::{self, id, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const FLAG_C: u8 = 0x20;
const FLAG_P: u8 = 0x40;

/// How replies to a query are consolidated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Consolidation {
    /// Let the implementation decide (the value omitted from the wire).
    #[default]
    Auto,
    /// Every reply is delivered.
    None,
    /// Replies for a key are delivered only if newer than the last delivered one.
    Monotonic,
    /// Only the latest reply per key is delivered, once all replies arrived.
    Latest,
}

impl Consolidation {
    /// From its wire value; unknown values mean `Auto`.
    pub const fn from_u64(v: u64) -> Self {
        match v {
            1 => Self::None,
            2 => Self::Monotonic,
            3 => Self::Latest,
            _ => Self::Auto,
        }
    }

    /// The wire value.
    pub const fn to_u64(self) -> u64 {
        match self {
            Self::Auto => 0,
            Self::None => 1,
            Self::Monotonic => 2,
            Self::Latest => 3,
        }
    }

    /// The name used in Zenoh's API.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::None => "none",
            Self::Monotonic => "monotonic",
            Self::Latest => "latest",
        }
    }
}

/// A value sent along with a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueryBody<'a> {
    /// The value's encoding.
    pub encoding: Encoding<'a>,
    /// The value.
    pub payload: &'a [u8],
}

/// A query.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Query<'a> {
    /// How the querier wants replies consolidated.
    pub consolidation: Consolidation,
    /// The selector's parameters (the text after `?`).
    pub parameters: &'a str,
    /// The querying entity.
    pub source_info: Option<SourceInfo>,
    /// A value sent with the query.
    pub body: Option<QueryBody<'a>>,
    /// User bytes attached to the query.
    pub attachment: Option<&'a [u8]>,
    /// Extensions not understood, kept for forwarding.
    pub unknown: Unknown<'a>,
}

impl<'a> Query<'a> {
    /// Decodes a Query (header included).
    pub fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let at = r.position();
        let header = r.u8()?;
        if header & 0x1F != mid::QUERY {
            return Err(r.error_at(
                at,
                crate::error::DecodeErrorKind::UnknownMessage {
                    layer: crate::error::Layer::Data,
                    id: header & 0x1F,
                },
            ));
        }
        Self::read(r, header)
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let mut q = Query::default();
        if header & FLAG_C != 0 {
            q.consolidation = Consolidation::from_u64(r.zint()?);
        }
        if header & FLAG_P != 0 {
            q.parameters = r.zstr(u64::from(u16::MAX), "parameters")?;
        }
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            match e.id {
                id::SOURCE_INFO => q.source_info = Some(SourceInfo::read(ext::zbuf_reader(r, &e))?),
                id::QUERY_BODY => {
                    let mut br = ext::zbuf_reader(r, &e);
                    let encoding = Encoding::read(&mut br)?;
                    q.body = Some(QueryBody {
                        encoding,
                        payload: br.take_rest(),
                    });
                }
                id::QUERY_ATTACHMENT => q.attachment = Some(ext::zbuf(&e)),
                _ => ext::keep_unknown(r, "Query", e, at, &mut q.unknown)?,
            }
        }
        Ok(q)
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = usize::from(self.source_info.is_some())
            + usize::from(self.body.is_some())
            + usize::from(self.attachment.is_some())
            + self.unknown.len();
        let mut header = mid::QUERY;
        if self.consolidation != Consolidation::Auto {
            header |= FLAG_C;
        }
        if !self.parameters.is_empty() {
            header |= FLAG_P;
        }
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        if self.consolidation != Consolidation::Auto {
            w.zint(self.consolidation.to_u64())?;
        }
        if !self.parameters.is_empty() {
            if self.parameters.len() > usize::from(u16::MAX) {
                return Err(EncodeError::OutOfBounds {
                    field: "parameters length",
                    value: self.parameters.len() as u64,
                    bound: u64::from(u16::MAX),
                });
            }
            w.zbytes(self.parameters.as_bytes())?;
        }
        let mut ew = ExtWriter::new(n);
        if let Some(si) = &self.source_info {
            ew.zbuf_with(w, id::SOURCE_INFO, si.encoded_len(), |w| si.write(w))?;
        }
        if let Some(body) = &self.body {
            let len = body.encoding.encoded_len() + body.payload.len();
            ew.zbuf_with(w, id::QUERY_BODY, len, |w| {
                body.encoding.write(w)?;
                w.put(body.payload)
            })?;
        }
        if let Some(att) = self.attachment {
            ew.zbuf(w, id::QUERY_ATTACHMENT, att)?;
        }
        ew.unknown(w, &self.unknown)
    }
}
