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

/// The UTC date and time of a timestamp, RFC 3339 with nanoseconds
/// (`2026-11-22T03:06:29.940382670Z`).
#[derive(Debug, Clone, Copy)]
pub struct UtcTime(u64, u32);

impl Timestamp {
    /// The timestamp's time as a UTC date.
    pub const fn utc(&self) -> UtcTime {
        UtcTime(self.seconds() as u64, self.subsec_nanos())
    }
}

impl core::fmt::Display for UtcTime {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let (secs, nanos) = (self.0, self.1);
        let days = (secs / 86_400) as i64;
        let rem = secs % 86_400;
        // Days since 1970-01-01 to a proleptic Gregorian year/month/day.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
            rem / 3600,
            (rem / 60) % 60,
            rem % 60
        )
    }
}

/// `<UTC time>/<clock id>`, as Zenoh shows timestamps.
impl core::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}/{}", self.utc(), self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn at(secs: u64, frac: u32) -> Timestamp {
        Timestamp {
            time: (secs << 32) | u64::from(frac),
            id: ZenohId::new(0xab).unwrap(),
        }
    }

    #[test]
    fn utc_dates_of_known_instants() {
        assert_eq!(at(0, 0).to_string(), "1970-01-01T00:00:00.000000000Z/ab");
        assert_eq!(
            at(951_782_400, 0).utc().to_string(),
            "2000-02-29T00:00:00.000000000Z"
        );
        // Vector 02's router timestamp.
        let ts = Timestamp {
            time: 0x6b02_5c35_f0bc_eb30,
            id: ZenohId::new(1).unwrap(),
        };
        assert!(ts
            .utc()
            .to_string()
            .starts_with("2026-11-22T03:06:29.94038"));
    }
}
