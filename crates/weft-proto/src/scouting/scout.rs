//! Scout: asks nodes of the given roles to answer with a Hello.
//!
//! ```text
//! |Z|X|X|  SCOUT  |
//! |    version    |
//! |zid_len|I| what|   what: role bitmask (router 1, peer 2, client 4); I: zid present
//! ~   zid bytes   ~   if I
//! ~   [exts]      ~   if Z
//! ```

use super::mid;
use crate::core::{WhatAmIMatcher, ZenohId};
use crate::error::{DecodeError, EncodeError};
use crate::ext::{read_unknown, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const FLAG_I: u8 = 0x08;

/// Asks nodes of the given roles to answer with a Hello.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scout<'a> {
    /// Protocol version (0x09).
    pub version: u8,
    /// Roles that should answer.
    pub what: WhatAmIMatcher,
    /// The scouting node's id, if it gives it.
    pub zid: Option<ZenohId>,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

impl<'a> Scout<'a> {
    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let version = r.u8()?;
        let flags = r.u8()?;
        let zid = if flags & FLAG_I != 0 {
            Some(ZenohId::read(r, usize::from(flags >> 4) + 1)?)
        } else {
            None
        };
        Ok(Self {
            version,
            what: WhatAmIMatcher(flags & 0b111),
            zid,
            unknown: read_unknown(r, header, "Scout")?,
        })
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let header = if self.unknown.is_empty() {
            mid::SCOUT
        } else {
            mid::SCOUT | FLAG_Z
        };
        w.u8(header)?;
        w.u8(self.version)?;
        let mut flags = self.what.0 & 0b111;
        if let Some(zid) = self.zid {
            flags |= FLAG_I | zid.len_nibble();
        }
        w.u8(flags)?;
        if let Some(zid) = self.zid {
            zid.write(w)?;
        }
        ExtWriter::new(self.unknown.len()).unknown(w, &self.unknown)
    }
}
