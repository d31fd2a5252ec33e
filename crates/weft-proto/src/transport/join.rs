//! Join: the periodic announcement of a member of a multicast transport.
//!
//! ```text
//! |Z|S|T|  JOIN   |   T: lease in seconds; S: size parameters present
//! |    version    |
//! |zid_len|x|x|wai|
//! ~   zid bytes   ~
//! |x|x|x|x|rid|fsn|   if S
//! |  batch size   |   if S: u16 little-endian (default 8192 when absent)
//! %     lease     %
//! % next_sn relbl %   next reliable SN (default priority)
//! % next_sn b.eff %   next best-effort SN
//! ~  [JoinExts]   ~   QoS 0x51 (mandatory): 8 x (reliable, best-effort) next SNs;
//!                     Shm 0x52 (mandatory); Patch 0x27
//! ```

use super::mid;
use crate::core::{Resolution, WhatAmI, ZenohId};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::ext::{self, id, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::{zint_len, Writer};

const FLAG_T: u8 = 0x20;
const FLAG_S: u8 = 0x40;

/// Batch size assumed when a Join carries no size parameters.
pub const DEFAULT_MULTICAST_BATCH_SIZE: u16 = 8192;

/// The next sequence numbers of one priority's two channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PrioritySn {
    /// Next reliable SN.
    pub reliable: u32,
    /// Next best-effort SN.
    pub best_effort: u32,
}

impl PrioritySn {
    fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            reliable: r.z32("reliable SN")?,
            best_effort: r.z32("best-effort SN")?,
        })
    }

    fn write<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        w.zint(u64::from(self.reliable))?;
        w.zint(u64::from(self.best_effort))
    }

    fn encoded_len(&self) -> usize {
        zint_len(u64::from(self.reliable)) + zint_len(u64::from(self.best_effort))
    }
}

/// A multicast member's announcement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join<'a> {
    /// Protocol version (0x09).
    pub version: u8,
    /// The sender's role.
    pub whatami: WhatAmI,
    /// The sender's id.
    pub zid: ZenohId,
    /// SN and request-id resolution.
    pub resolution: Resolution,
    /// Largest batch the sender accepts.
    pub batch_size: u16,
    /// How long others wait for traffic from the sender.
    pub lease_ms: u64,
    /// Next SNs of the default priority.
    pub next_sn: PrioritySn,
    /// Next SNs of each priority, when the sender uses QoS.
    pub qos: Option<[PrioritySn; 8]>,
    /// Shared memory (opaque).
    pub shm: Option<&'a [u8]>,
    /// Protocol patch level.
    pub patch: Option<u64>,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

impl<'a> Join<'a> {
    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let version = r.u8()?;
        let flags = r.u8()?;
        let whatami = WhatAmI::from_flags(r, flags)?;
        let zid = ZenohId::read(r, usize::from(flags >> 4) + 1)?;
        let (resolution, batch_size) = if header & FLAG_S != 0 {
            (Resolution::from_byte(r.u8()?), r.u16_le()?)
        } else {
            (Resolution::DEFAULT, DEFAULT_MULTICAST_BATCH_SIZE)
        };
        let at = r.position();
        let lease = r.zint()?;
        let lease_ms = if header & FLAG_T != 0 {
            lease.checked_mul(1000).ok_or_else(|| {
                r.error_at(
                    at,
                    DecodeErrorKind::OutOfBounds {
                        field: "lease (s)",
                        value: lease,
                        bound: u64::MAX / 1000,
                    },
                )
            })?
        } else {
            lease
        };
        let next_sn = PrioritySn::read(r)?;
        let mut join = Self {
            version,
            whatami,
            zid,
            resolution,
            batch_size,
            lease_ms,
            next_sn,
            qos: None,
            shm: None,
            patch: None,
            unknown: Unknown::new(),
        };
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            match e.id {
                id::JOIN_QOS => {
                    let mut qr = ext::zbuf_reader(r, &e);
                    let mut sns = [PrioritySn::default(); 8];
                    for sn in &mut sns {
                        *sn = PrioritySn::read(&mut qr)?;
                    }
                    crate::zenoh::expect_end(&qr, "Join QoS extension")?;
                    join.qos = Some(sns);
                }
                id::JOIN_SHM => join.shm = Some(ext::zbuf(&e)),
                id::PATCH => join.patch = Some(ext::z64(&e)),
                _ => ext::keep_unknown(r, "Join", e, at, &mut join.unknown)?,
            }
        }
        Ok(join)
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = usize::from(self.qos.is_some())
            + usize::from(self.shm.is_some())
            + usize::from(self.patch.is_some())
            + self.unknown.len();
        let in_seconds = self.lease_ms % 1000 == 0;
        let sized = self.resolution != Resolution::DEFAULT
            || self.batch_size != DEFAULT_MULTICAST_BATCH_SIZE;
        let mut header = mid::JOIN;
        if in_seconds {
            header |= FLAG_T;
        }
        if sized {
            header |= FLAG_S;
        }
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        w.u8(self.version)?;
        w.u8(self.zid.len_nibble() | self.whatami.code())?;
        self.zid.write(w)?;
        if sized {
            w.u8(self.resolution.to_byte())?;
            w.put(&self.batch_size.to_le_bytes())?;
        }
        w.zint(if in_seconds {
            self.lease_ms / 1000
        } else {
            self.lease_ms
        })?;
        self.next_sn.write(w)?;
        let mut ew = ExtWriter::new(n);
        if let Some(sns) = &self.qos {
            let len = sns.iter().map(PrioritySn::encoded_len).sum();
            ew.zbuf_with(w, id::JOIN_QOS, len, |w| {
                sns.iter().try_for_each(|sn| sn.write(w))
            })?;
        }
        if let Some(b) = self.shm {
            ew.zbuf(w, id::JOIN_SHM, b)?;
        }
        if let Some(p) = self.patch {
            ew.z64(w, id::PATCH, p)?;
        }
        ew.unknown(w, &self.unknown)
    }
}
