//! Reply: a successful answer to a query, carrying a Put or a Del.
//!
//! ```text
//! |Z|X|C|  REPLY  |   C: consolidation present
//! % consolidation %   if C
//! ~ [repl_exts]   ~   if Z (none defined; unknown ones kept)
//! ~ ReplyBody     ~   one Put or Del
//! ```

use super::{mid, Consolidation, PushBody};
use crate::error::{DecodeError, EncodeError};
use crate::ext::{self, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const FLAG_C: u8 = 0x20;

/// A successful answer to a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply<'a> {
    /// Consolidation applied by the replier.
    pub consolidation: Consolidation,
    /// Extensions not understood, kept for forwarding.
    pub unknown: Unknown<'a>,
    /// The answered value or deletion.
    pub body: PushBody<'a>,
}

impl<'a> Reply<'a> {
    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let consolidation = if header & FLAG_C != 0 {
            Consolidation::from_u64(r.zint()?)
        } else {
            Consolidation::Auto
        };
        let mut unknown = Unknown::new();
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            ext::keep_unknown(r, "Reply", e, at, &mut unknown)?;
        }
        let body = PushBody::decode(r)?;
        Ok(Self {
            consolidation,
            unknown,
            body,
        })
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let mut header = mid::REPLY;
        if self.consolidation != Consolidation::Auto {
            header |= FLAG_C;
        }
        if !self.unknown.is_empty() {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        if self.consolidation != Consolidation::Auto {
            w.zint(self.consolidation.to_u64())?;
        }
        ExtWriter::new(self.unknown.len()).unknown(w, &self.unknown)?;
        self.body.encode(w)
    }
}
