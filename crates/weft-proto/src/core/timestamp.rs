//! Hybrid-logical-clock timestamps.

use crate::core::ZenohId;
use crate::error::{DecodeError, EncodeError};
use crate::reader::Reader;
use crate::writer::{zint_len, Writer};

/// A timestamp: a 64-bit NTP-style time (seconds since the UNIX epoch in the high 32
/// bits, binary fraction in the low 32) and the id of the clock that produced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp {
    /// NTP64 time relative to 1970-01-01.
    pub time: u64,
    /// The clock's ZenohID.
    pub id: ZenohId,
}

impl Timestamp {
    /// Whole seconds since the UNIX epoch.
    pub const fn seconds(&self) -> u32 {
        (self.time >> 32) as u32
    }

    /// Nanoseconds within the second.
    pub const fn subsec_nanos(&self) -> u32 {
        (((self.time & 0xFFFF_FFFF) * 1_000_000_000) >> 32) as u32
    }

    /// Decodes `%time% %len% ~id~`.
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let time = r.zint()?;
        let len = r.zint_max(16, "timestamp ZenohID length")? as usize;
        let id = ZenohId::read(r, len)?;
        Ok(Self { time, id })
    }

    /// Encodes `%time% %len% ~id~`.
    pub(crate) fn write<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        w.zint(self.time)?;
        w.u8(self.id.size() as u8)?;
        self.id.write(w)
    }

    /// Length of the encoded form.
    pub(crate) const fn encoded_len(&self) -> usize {
        zint_len(self.time) + 1 + self.id.size()
    }
}
