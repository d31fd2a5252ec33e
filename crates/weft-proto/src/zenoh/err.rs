//! Err: an error answer to a query.
//!
//! ```text
//! |Z|E|X|   ERR   |   E: encoding present
//! ~ encoding      ~   if E
//! ~ [err_exts]    ~   if Z: SourceInfo 0x41, Shm 0x12
//! ~ payload       ~   <u8;z32>
//! ```

use super::{mid, SourceInfo};
use crate::core::Encoding;
use crate::error::{DecodeError, EncodeError};
use crate::ext::{self, id, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const FLAG_E: u8 = 0x40;

/// An error answer to a query.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Err<'a> {
    /// The payload's encoding (default omitted).
    pub encoding: Encoding<'a>,
    /// The producing entity.
    pub source_info: Option<SourceInfo>,
    /// The payload is a shared-memory reference.
    pub shm: bool,
    /// Extensions not understood, kept for forwarding.
    pub unknown: Unknown<'a>,
    /// The error value.
    pub payload: &'a [u8],
}

impl<'a> Err<'a> {
    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let mut err = Err::default();
        if header & FLAG_E != 0 {
            err.encoding = Encoding::read(r)?;
        }
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            match e.id {
                id::SOURCE_INFO => {
                    err.source_info = Some(SourceInfo::read(ext::zbuf_reader(r, &e))?)
                }
                id::DATA_SHM => err.shm = true,
                _ => ext::keep_unknown(r, "Err", e, at, &mut err.unknown)?,
            }
        }
        err.payload = r.zbytes(u64::from(u32::MAX), "payload length")?;
        Ok(err)
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n =
            usize::from(self.source_info.is_some()) + usize::from(self.shm) + self.unknown.len();
        let mut header = mid::ERR;
        if !self.encoding.is_default() {
            header |= FLAG_E;
        }
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        if !self.encoding.is_default() {
            self.encoding.write(w)?;
        }
        let mut ew = ExtWriter::new(n);
        if let Some(si) = &self.source_info {
            ew.zbuf_with(w, id::SOURCE_INFO, si.encoded_len(), |w| si.write(w))?;
        }
        if self.shm {
            ew.unit(w, id::DATA_SHM)?;
        }
        ew.unknown(w, &self.unknown)?;
        w.zbytes(self.payload)
    }
}
