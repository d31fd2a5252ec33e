//! Close and KeepAlive.
//!
//! ```text
//! |Z|X|S|  CLOSE  |   S: close the whole session (else only this link)
//! |    reason     |
//! ~ [CloseExts]   ~
//!
//! |Z|X|X| KALIVE  |
//! ~ [exts]        ~
//! ```

use core::fmt;

use super::mid;
use crate::error::{DecodeError, EncodeError};
use crate::ext::{read_unknown, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const FLAG_S: u8 = 0x20;

/// Why a link or session is closed.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CloseReason(pub u8);

impl CloseReason {
    /// No specific reason (a user's close).
    pub const GENERIC: Self = Self(0x00);
    /// Something is not supported.
    pub const UNSUPPORTED: Self = Self(0x01);
    /// Something received was invalid.
    pub const INVALID: Self = Self(0x02);
    /// Too many sessions.
    pub const MAX_SESSIONS: Self = Self(0x03);
    /// Too many links in the session.
    pub const MAX_LINKS: Self = Self(0x04);
    /// The lease expired.
    pub const EXPIRED: Self = Self(0x05);
    /// The peer does not consume what it is sent.
    pub const UNRESPONSIVE: Self = Self(0x06);
    /// The node connected to itself.
    pub const CONNECTION_TO_SELF: Self = Self(0x07);

    /// The reason's name, if it is a known one.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0x00 => "GENERIC",
            0x01 => "UNSUPPORTED",
            0x02 => "INVALID",
            0x03 => "MAX_SESSIONS",
            0x04 => "MAX_LINKS",
            0x05 => "EXPIRED",
            0x06 => "UNRESPONSIVE",
            0x07 => "CONNECTION_TO_SELF",
            _ => return None,
        })
    }
}

impl fmt::Debug for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "CloseReason({:#04x})", self.0),
        }
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Closes a link, or the whole session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Close<'a> {
    /// Why.
    pub reason: CloseReason,
    /// Whether the whole session is closed (Zenoh 1.10 always sends `false`).
    pub session: bool,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

impl<'a> Close<'a> {
    /// A link close with `reason`.
    pub fn new(reason: CloseReason) -> Self {
        Self {
            reason,
            session: false,
            unknown: Unknown::new(),
        }
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let reason = CloseReason(r.u8()?);
        let unknown = read_unknown(r, header, "Close")?;
        Ok(Self {
            reason,
            session: header & FLAG_S != 0,
            unknown,
        })
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let mut header = mid::CLOSE;
        if self.session {
            header |= FLAG_S;
        }
        if !self.unknown.is_empty() {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        w.u8(self.reason.0)?;
        ExtWriter::new(self.unknown.len()).unknown(w, &self.unknown)
    }
}

/// Tells the other side this one is alive when it has nothing else to send.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeepAlive<'a> {
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

impl<'a> KeepAlive<'a> {
    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        Ok(Self {
            unknown: read_unknown(r, header, "KeepAlive")?,
        })
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        w.u8(if self.unknown.is_empty() {
            mid::KEEP_ALIVE
        } else {
            mid::KEEP_ALIVE | FLAG_Z
        })?;
        ExtWriter::new(self.unknown.len()).unknown(w, &self.unknown)
    }
}
