//! Network messages: what travels inside Frames (or alone, on low-latency links).
//!
//! Push carries data, Request/Response/ResponseFinal carry queries and their answers,
//! Interest asks for declarations, Declare carries one declaration, OAM carries
//! link-state between routers.

mod common;
mod declare;
mod interest;
pub mod linkstate;
mod oam;
mod push;
mod request;
mod response;

pub use common::TsStack;
pub use declare::{
    did, Declaration, Declare, DeclareFinal, DeclareKeyExpr, DeclareQueryable, DeclareSubscriber,
    DeclareToken, QueryableInfo, UndeclareKeyExpr, UndeclareQueryable, UndeclareSubscriber,
    UndeclareToken,
};
pub use interest::{Interest, InterestMode, InterestOptions};
pub use oam::NetworkOam;
pub(crate) use push::PlainPush;
pub use push::Push;
pub use request::{QueryTarget, Request};
pub use response::{EntityGlobalId, Response, ResponseBody, ResponseFinal};

use alloc::vec::Vec;

use crate::error::{DecodeError, DecodeErrorKind, EncodeError, Layer};
use crate::reader::Reader;
use crate::writer::{SkippingWriter, Writer};
use crate::zenoh::PushBody;

/// Where the bulk of a message goes in its head ([`NetworkMessage::encode_split`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitEncoding<'a> {
    /// The offset in the head where the bulk belongs.
    pub at: usize,
    /// The bulk (empty if the message has none, or it was written in the head).
    pub bulk: &'a [u8],
}

impl<'a> SplitEncoding<'a> {
    /// The whole encoding as three consecutive parts: head before, bulk, head after.
    pub fn parts<'h>(&self, head: &'h [u8]) -> [&'h [u8]; 3]
    where
        'a: 'h,
    {
        let (before, after) = head.split_at(self.at.min(head.len()));
        [before, self.bulk, after]
    }
}

/// Message ids of the network layer.
pub mod mid {
    /// Interest.
    pub const INTEREST: u8 = 0x19;
    /// ResponseFinal.
    pub const RESPONSE_FINAL: u8 = 0x1A;
    /// Response.
    pub const RESPONSE: u8 = 0x1B;
    /// Request.
    pub const REQUEST: u8 = 0x1C;
    /// Push.
    pub const PUSH: u8 = 0x1D;
    /// Declare.
    pub const DECLARE: u8 = 0x1E;
    /// OAM.
    pub const OAM: u8 = 0x1F;
}

/// Whether `header` starts a network message (id 0x19..=0x1F).
///
/// Transport and network ids do not overlap, which is how a reader finds where a Frame's
/// list of network messages ends.
#[inline]
pub const fn is_network_header(header: u8) -> bool {
    header & 0x1F >= mid::INTEREST
}

/// A network message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetworkMessage<'a> {
    /// Data: a Put or a Del on a key.
    Push(Push<'a>),
    /// A query.
    Request(Request<'a>),
    /// One answer to a query.
    Response(Response<'a>),
    /// The end of the answers to a query.
    ResponseFinal(ResponseFinal<'a>),
    /// A request to be told about declarations.
    Interest(Interest<'a>),
    /// One declaration.
    Declare(Declare<'a>),
    /// Operations and management (router link-state).
    Oam(NetworkOam<'a>),
}

impl<'a> NetworkMessage<'a> {
    /// Decodes one network message from `r`.
    pub fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let at = r.position();
        let header = r.u8()?;
        Ok(match header & 0x1F {
            mid::PUSH => Self::Push(Push::read(r, header)?),
            mid::DECLARE => Self::Declare(Declare::read(r, header)?),
            mid::REQUEST => Self::Request(Request::read(r, header)?),
            mid::RESPONSE => Self::Response(Response::read(r, header)?),
            mid::RESPONSE_FINAL => Self::ResponseFinal(ResponseFinal::read(r, header)?),
            mid::INTEREST => Self::Interest(Interest::read(r, header)?),
            mid::OAM => Self::Oam(NetworkOam::read(r, header)?),
            id => {
                return Err(r.error_at(
                    at,
                    DecodeErrorKind::UnknownMessage {
                        layer: Layer::Network,
                        id,
                    },
                ))
            }
        })
    }

    /// Decodes a buffer holding exactly one network message (e.g. a reassembled one).
    pub fn decode_exact(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes);
        let msg = Self::decode(&mut r)?;
        crate::zenoh::expect_end(&r, msg.name())?;
        Ok(msg)
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        match self {
            Self::Push(m) => m.encode(w),
            Self::Request(m) => m.encode(w),
            Self::Response(m) => m.encode(w),
            Self::ResponseFinal(m) => m.encode(w),
            Self::Interest(m) => m.encode(w),
            Self::Declare(m) => m.encode(w),
            Self::Oam(m) => m.encode(w),
        }
    }

    /// The bulk of the message, if it carries any: a Put's payload, a query's value or
    /// an Err's payload. A transport may send it from where it lies rather than copy it
    /// ([`NetworkMessage::encode_split`]).
    pub fn bulk(&self) -> Option<&'a [u8]> {
        let put_payload = |b: &PushBody<'a>| match b {
            PushBody::Put(p) => Some(p.payload),
            PushBody::Del(_) => None,
        };
        match self {
            Self::Push(m) => put_payload(&m.body),
            Self::Request(m) => m.query.body.as_ref().map(|b| b.payload),
            Self::Response(m) => match &m.body {
                ResponseBody::Reply(r) => put_payload(&r.body),
                ResponseBody::Err(e) => Some(e.payload),
            },
            _ => None,
        }
    }

    /// Encodes the message into `head` but for its [bulk](NetworkMessage::bulk), which
    /// stays where it is: the encoding is `head[..at]`, then the bulk, then `head[at..]`.
    /// A large message is so encoded without copying its payload.
    pub fn encode_split(&self, head: &mut Vec<u8>) -> Result<SplitEncoding<'a>, EncodeError> {
        let bulk = self.bulk().unwrap_or_default();
        let mut w = SkippingWriter::new(head, bulk);
        self.encode(&mut w)?;
        Ok(match w.skipped_at() {
            Some(at) => SplitEncoding { at, bulk },
            None => SplitEncoding {
                at: head.len(),
                bulk: &[],
            },
        })
    }

    /// The message's name as the specification writes it.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Push(_) => "Push",
            Self::Request(_) => "Request",
            Self::Response(_) => "Response",
            Self::ResponseFinal(_) => "ResponseFinal",
            Self::Interest(_) => "Interest",
            Self::Declare(_) => "Declare",
            Self::Oam(_) => "OAM",
        }
    }
}
