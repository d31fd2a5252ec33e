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

use crate::error::{DecodeError, DecodeErrorKind, EncodeError, Layer};
use crate::reader::Reader;
use crate::writer::Writer;

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
