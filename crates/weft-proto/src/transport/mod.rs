//! Transport messages: what a batch is made of.
//!
//! Init and Open establish a unicast session, Join announces a multicast member, Close
//! ends a link, KeepAlive keeps it alive, Frame and Fragment carry network messages.

pub mod auth;
mod close;
mod fragment;
mod frame;
mod init;
mod join;
mod oam;
mod open;

pub use close::{Close, CloseReason, KeepAlive};
pub use fragment::{Fragment, FragmentHeader};
pub use frame::{Frame, FrameHeader};
pub use init::{Init, QosLink, DEFAULT_BATCH_SIZE};
pub use join::{Join, PrioritySn, DEFAULT_MULTICAST_BATCH_SIZE};
pub use oam::TransportOam;
pub use open::Open;

use crate::error::{DecodeError, DecodeErrorKind, EncodeError, Layer};
use crate::reader::Reader;
use crate::writer::Writer;

/// Message ids of the transport layer.
pub mod mid {
    /// OAM.
    pub const OAM: u8 = 0x00;
    /// InitSyn / InitAck.
    pub const INIT: u8 = 0x01;
    /// OpenSyn / OpenAck.
    pub const OPEN: u8 = 0x02;
    /// Close.
    pub const CLOSE: u8 = 0x03;
    /// KeepAlive.
    pub const KEEP_ALIVE: u8 = 0x04;
    /// Frame.
    pub const FRAME: u8 = 0x05;
    /// Fragment.
    pub const FRAGMENT: u8 = 0x06;
    /// Join.
    pub const JOIN: u8 = 0x07;
}

/// A transport message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportMessage<'a> {
    /// InitSyn (no cookie) or InitAck (cookie).
    Init(Init<'a>),
    /// OpenSyn (cookie) or OpenAck (no cookie).
    Open(Open<'a>),
    /// Close.
    Close(Close<'a>),
    /// KeepAlive.
    KeepAlive(KeepAlive<'a>),
    /// Frame with its network messages.
    Frame(Frame<'a>),
    /// Fragment.
    Fragment(Fragment<'a>),
    /// Join.
    Join(Join<'a>),
    /// OAM.
    Oam(TransportOam<'a>),
}

impl TransportMessage<'_> {
    /// The message's name as the specification writes it.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Init(m) if m.is_ack() => "InitAck",
            Self::Init(_) => "InitSyn",
            Self::Open(m) if m.is_syn() => "OpenSyn",
            Self::Open(_) => "OpenAck",
            Self::Close(_) => "Close",
            Self::KeepAlive(_) => "KeepAlive",
            Self::Frame(_) => "Frame",
            Self::Fragment(_) => "Fragment",
            Self::Join(_) => "Join",
            Self::Oam(_) => "OAM",
        }
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        match self {
            Self::Init(m) => m.encode(w),
            Self::Open(m) => m.encode(w),
            Self::Close(m) => m.encode(w),
            Self::KeepAlive(m) => m.encode(w),
            Self::Frame(m) => m.encode(w),
            Self::Fragment(m) => m.encode(w),
            Self::Join(m) => m.encode(w),
            Self::Oam(m) => m.encode(w),
        }
    }
}

/// One transport message as read by the batch reader: a Frame is announced by its header
/// alone (its network messages follow as separate items).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TransportHead<'a> {
    Message(TransportMessage<'a>),
    Frame(FrameHeader<'a>),
}

/// Decodes the transport message whose header byte has just been read.
pub(crate) fn read_head<'a>(
    r: &mut Reader<'a>,
    header: u8,
    at: usize,
) -> Result<TransportHead<'a>, DecodeError> {
    let m = match header & 0x1F {
        mid::FRAME => return Ok(TransportHead::Frame(FrameHeader::read(r, header)?)),
        mid::INIT => TransportMessage::Init(Init::read(r, header)?),
        mid::OPEN => TransportMessage::Open(Open::read(r, header)?),
        mid::CLOSE => TransportMessage::Close(Close::read(r, header)?),
        mid::KEEP_ALIVE => TransportMessage::KeepAlive(KeepAlive::read(r, header)?),
        mid::FRAGMENT => {
            let fh = FragmentHeader::read(r, header)?;
            TransportMessage::Fragment(Fragment {
                header: fh,
                payload: r.take_rest(),
            })
        }
        mid::JOIN => TransportMessage::Join(Join::read(r, header)?),
        mid::OAM => TransportMessage::Oam(TransportOam::read(r, header)?),
        id => {
            return Err(r.error_at(
                at,
                DecodeErrorKind::UnknownMessage {
                    layer: Layer::Transport,
                    id,
                },
            ))
        }
    };
    Ok(TransportHead::Message(m))
}
