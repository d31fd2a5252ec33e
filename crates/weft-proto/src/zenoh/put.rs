//! Put: a value published on a key.
//!
//! ```text
//!  7 6 5 4 3 2 1 0
//! +-+-+-+-+-+-+-+-+
//! |Z|E|T|   PUT   |   T: timestamp present; E: encoding present
//! +-+-+-+---------+
//! ~ timestamp     ~   if T
//! ~ encoding      ~   if E
//! ~ [put_exts]    ~   if Z: SourceInfo 0x41, Shm 0x12, Attachment 0x43
//! ~ payload       ~   <u8;z32>
//! ```

use super::{mid, SourceInfo};
use crate::core::{Encoding, Timestamp};
use crate::error::{DecodeError, EncodeError};
use crate::ext::{self, id, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const FLAG_T: u8 = 0x20;
const FLAG_E: u8 = 0x40;

/// A value published on a key.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Put<'a> {
    /// When the value was produced.
    pub timestamp: Option<Timestamp>,
    /// The payload's encoding (default omitted).
    pub encoding: Encoding<'a>,
    /// The producing entity.
    pub source_info: Option<SourceInfo>,
    /// The payload is a shared-memory reference.
    pub shm: bool,
    /// User bytes attached to the value.
    pub attachment: Option<&'a [u8]>,
    /// Extensions not understood, kept for forwarding.
    pub unknown: Unknown<'a>,
    /// The value.
    pub payload: &'a [u8],
}

impl<'a> Put<'a> {
    /// A put of `payload` with every option at its default.
    #[inline]
    pub fn new(payload: &'a [u8]) -> Self {
        Self {
            payload,
            ..Self::default()
        }
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let mut put = Put::default();
        if header & FLAG_T != 0 {
            put.timestamp = Some(Timestamp::read(r)?);
        }
        if header & FLAG_E != 0 {
            put.encoding = Encoding::read(r)?;
        }
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            match e.id {
                id::SOURCE_INFO => {
                    put.source_info = Some(SourceInfo::read(ext::zbuf_reader(r, &e))?)
                }
                id::DATA_SHM => put.shm = true,
                id::PUT_ATTACHMENT => put.attachment = Some(ext::zbuf(&e)),
                _ => ext::keep_unknown(r, "Put", e, at, &mut put.unknown)?,
            }
        }
        put.payload = r.zbytes(u64::from(u32::MAX), "payload length")?;
        Ok(put)
    }

    /// Whether every option is at its default: the message is then its header without flags
    /// and the payload.
    #[inline(always)]
    pub(crate) fn is_plain(&self) -> bool {
        self.timestamp.is_none()
            && self.encoding.is_default()
            && self.source_info.is_none()
            && !self.shm
            && self.attachment.is_none()
            && self.unknown.is_empty()
    }

    /// Encodes the message.
    #[inline(always)]
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        if self.is_plain() {
            w.u8(mid::PUT)?;
            return w.zbytes(self.payload);
        }
        self.encode_full(w)
    }

    #[inline(never)]
    pub(crate) fn encode_full<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = usize::from(self.source_info.is_some())
            + usize::from(self.shm)
            + usize::from(self.attachment.is_some())
            + self.unknown.len();
        let mut header = mid::PUT;
        if self.timestamp.is_some() {
            header |= FLAG_T;
        }
        if !self.encoding.is_default() {
            header |= FLAG_E;
        }
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        if let Some(ts) = &self.timestamp {
            ts.write(w)?;
        }
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
        if let Some(att) = self.attachment {
            ew.zbuf(w, id::PUT_ATTACHMENT, att)?;
        }
        ew.unknown(w, &self.unknown)?;
        w.zbytes(self.payload)
    }
}
