//! Hello: a node announces its role, id and locators.
//!
//! ```text
//! |Z|X|L|  HELLO  |   L: locator list present
//! |    version    |
//! |zid_len|X|X|wai|
//! ~   zid bytes   ~
//! ~  <locators>   ~   if L: %count% then count x <utf8;z8>
//! ~   [exts]      ~   if Z
//! ```

use alloc::vec::Vec;

use super::mid;
use crate::core::{WhatAmI, ZenohId};
use crate::error::{DecodeError, EncodeError};
use crate::ext::{read_unknown, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const FLAG_L: u8 = 0x20;

/// A node's announcement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello<'a> {
    /// Protocol version (0x09).
    pub version: u8,
    /// The node's role.
    pub whatami: WhatAmI,
    /// The node's id.
    pub zid: ZenohId,
    /// Where it can be reached; empty means "the datagram's source address".
    pub locators: Vec<&'a str>,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

impl<'a> Hello<'a> {
    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let version = r.u8()?;
        let flags = r.u8()?;
        let whatami = WhatAmI::from_flags(r, flags)?;
        let zid = ZenohId::read(r, usize::from(flags >> 4) + 1)?;
        let mut locators = Vec::new();
        if header & FLAG_L != 0 {
            let count = r.zint()?;
            for _ in 0..count {
                // Each locator takes at least one byte: a count larger than the input is
                // caught by the read, never by an allocation.
                locators.push(r.zstr(u64::from(u8::MAX), "locator")?);
            }
        }
        Ok(Self {
            version,
            whatami,
            zid,
            locators,
            unknown: read_unknown(r, header, "Hello")?,
        })
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let mut header = mid::HELLO;
        if !self.locators.is_empty() {
            header |= FLAG_L;
        }
        if !self.unknown.is_empty() {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        w.u8(self.version)?;
        w.u8(self.zid.len_nibble() | self.whatami.code())?;
        self.zid.write(w)?;
        if !self.locators.is_empty() {
            w.zint(self.locators.len() as u64)?;
            for l in &self.locators {
                if l.len() > usize::from(u8::MAX) {
                    return Err(EncodeError::OutOfBounds {
                        field: "locator length",
                        value: l.len() as u64,
                        bound: u64::from(u8::MAX),
                    });
                }
                w.zbytes(l.as_bytes())?;
            }
        }
        ExtWriter::new(self.unknown.len()).unknown(w, &self.unknown)
    }
}
