//! Scouting messages: Scout (who is there?) and Hello (here I am), each alone in a UDP
//! datagram, usually on the multicast group 224.0.0.224:7446.

mod hello;
mod scout;

pub use hello::Hello;
pub use scout::Scout;

use crate::error::{DecodeError, DecodeErrorKind, EncodeError, Layer};
use crate::reader::Reader;
use crate::writer::Writer;

/// Message ids of the scouting layer.
pub mod mid {
    /// Scout.
    pub const SCOUT: u8 = 0x01;
    /// Hello.
    pub const HELLO: u8 = 0x02;
}

/// A scouting message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScoutingMessage<'a> {
    /// Scout.
    Scout(Scout<'a>),
    /// Hello.
    Hello(Hello<'a>),
}

impl<'a> ScoutingMessage<'a> {
    /// Decodes a datagram holding exactly one scouting message.
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(datagram);
        let header = r.u8()?;
        let msg = match header & 0x1F {
            mid::SCOUT => Self::Scout(Scout::read(&mut r, header)?),
            mid::HELLO => Self::Hello(Hello::read(&mut r, header)?),
            id => {
                return Err(r.error_at(
                    0,
                    DecodeErrorKind::UnknownMessage {
                        layer: Layer::Scouting,
                        id,
                    },
                ))
            }
        };
        crate::zenoh::expect_end(&r, msg.name())?;
        Ok(msg)
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        match self {
            Self::Scout(m) => m.encode(w),
            Self::Hello(m) => m.encode(w),
        }
    }

    /// The message's name as the specification writes it.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Scout(_) => "Scout",
            Self::Hello(_) => "Hello",
        }
    }
}
