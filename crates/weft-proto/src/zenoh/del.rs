//! Del: the deletion of a key.
//!
//! ```text
//! |Z|X|T|   DEL   |   T: timestamp present
//! ~ timestamp     ~   if T
//! ~ [del_exts]    ~   if Z: SourceInfo 0x41, Attachment 0x42
//! ```

use super::{mid, SourceInfo};
use crate::core::Timestamp;
use crate::error::{DecodeError, EncodeError};
use crate::ext::{self, id, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const FLAG_T: u8 = 0x20;

/// The deletion of a key.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Del<'a> {
    /// When the deletion happened.
    pub timestamp: Option<Timestamp>,
    /// The producing entity.
    pub source_info: Option<SourceInfo>,
    /// User bytes attached to the deletion.
    pub attachment: Option<&'a [u8]>,
    /// Extensions not understood, kept for forwarding.
    pub unknown: Unknown<'a>,
}

impl<'a> Del<'a> {
    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let mut del = Del::default();
        if header & FLAG_T != 0 {
            del.timestamp = Some(Timestamp::read(r)?);
        }
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            match e.id {
                id::SOURCE_INFO => {
                    del.source_info = Some(SourceInfo::read(ext::zbuf_reader(r, &e))?)
                }
                id::DEL_ATTACHMENT => del.attachment = Some(ext::zbuf(&e)),
                _ => ext::keep_unknown(r, "Del", e, at, &mut del.unknown)?,
            }
        }
        Ok(del)
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = usize::from(self.source_info.is_some())
            + usize::from(self.attachment.is_some())
            + self.unknown.len();
        let mut header = mid::DEL;
        if self.timestamp.is_some() {
            header |= FLAG_T;
        }
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        if let Some(ts) = &self.timestamp {
            ts.write(w)?;
        }
        let mut ew = ExtWriter::new(n);
        if let Some(si) = &self.source_info {
            ew.zbuf_with(w, id::SOURCE_INFO, si.encoded_len(), |w| si.write(w))?;
        }
        if let Some(att) = self.attachment {
            ew.zbuf(w, id::DEL_ATTACHMENT, att)?;
        }
        ew.unknown(w, &self.unknown)
    }
}
