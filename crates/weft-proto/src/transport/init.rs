//! InitSyn / InitAck: the first two messages of unicast session establishment.
//!
//! ```text
//!  7 6 5 4 3 2 1 0
//! +-+-+-+-+-+-+-+-+
//! |Z|S|A|  INIT   |   A: 0 InitSyn, 1 InitAck; S: size parameters present
//! +-+-+-+---------+
//! |    version    |
//! |zid_len|x|x|wai|   wai: 2-bit role; zid_len: ZenohID size - 1
//! ~   zid bytes   ~
//! |x|x|x|x|rid|fsn|   if S: resolution
//! |  batch size   |   if S: u16 little-endian (2 bytes, not a zint)
//! ~ <u8;z16>      ~   InitAck only: cookie
//! ~  [InitExts]   ~   if Z: QoS 0x01, QoSLink 0x21, Shm 0x42, Auth 0x43, MultiLink 0x44,
//!                           LowLatency 0x05, Compression 0x06, Patch 0x27, RegionName 0x48
//! ```

use super::mid;
use crate::core::{Priority, Reliability, Resolution, WhatAmI, ZenohId};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::ext::{self, id, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const FLAG_A: u8 = 0x20;
const FLAG_S: u8 = 0x40;

/// Batch size assumed when a unicast Init carries no size parameters.
pub const DEFAULT_BATCH_SIZE: u16 = u16::MAX;

/// The QoSLink extension's value: QoS restricted to a priority range and/or a reliability
/// (sent when an endpoint has `prio=` or `rel=` metadata).
///
/// Bit 1: a priority range is present in bits 3..=10 (start) and 11..=18 (end); bit 2: a
/// reliability is present in bit 19 (1 = reliable). `0b001` means no restriction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QosLink(pub u64);

impl QosLink {
    /// QoS restricted to the priorities `start..=end` (no reliability restriction).
    pub const fn with_priorities(start: Priority, end: Priority) -> Self {
        Self(0b010 | (start.to_u8() as u64) << 3 | (end.to_u8() as u64) << 11)
    }

    /// The allowed priority range (inclusive), if restricted.
    pub fn priorities(self) -> Option<(Priority, Priority)> {
        if self.0 & 0b010 == 0 {
            return None;
        }
        let start = Priority::from_u8(((self.0 >> 3) & 0xFF) as u8)?;
        let end = Priority::from_u8(((self.0 >> 11) & 0xFF) as u8)?;
        Some((start, end))
    }

    /// The allowed reliability, if restricted.
    pub const fn reliability(self) -> Option<Reliability> {
        if self.0 & 0b100 == 0 {
            None
        } else {
            Some(Reliability::from_flag(self.0 & (1 << 19) != 0))
        }
    }
}

/// InitSyn (no cookie) or InitAck (with the acceptor's cookie).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Init<'a> {
    /// Protocol version (0x09).
    pub version: u8,
    /// The sender's role.
    pub whatami: WhatAmI,
    /// The sender's id.
    pub zid: ZenohId,
    /// SN and request-id resolution (proposed in InitSyn, negotiated in InitAck).
    pub resolution: Resolution,
    /// Largest batch the sender accepts (proposed in InitSyn, negotiated in InitAck).
    pub batch_size: u16,
    /// `Some` for InitAck: opaque state the initiator echoes in OpenSyn.
    pub cookie: Option<&'a [u8]>,
    /// QoS (8 priorities) supported.
    pub qos: bool,
    /// QoS restricted to a priority range and/or reliability.
    pub qos_link: Option<QosLink>,
    /// Shared-memory challenge (opaque).
    pub shm: Option<&'a [u8]>,
    /// Authentication (opaque).
    pub auth: Option<&'a [u8]>,
    /// Multi-link negotiation (opaque).
    pub multilink: Option<&'a [u8]>,
    /// Low-latency transport requested.
    pub low_latency: bool,
    /// Batch compression requested.
    pub compression: bool,
    /// Protocol patch level (1: fragment First/Drop markers are honoured).
    pub patch: Option<u64>,
    /// Region name (regions/gateway routing).
    pub region_name: Option<&'a str>,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

impl<'a> Init<'a> {
    /// An InitSyn with default parameters and no extensions.
    pub fn syn(whatami: WhatAmI, zid: ZenohId) -> Self {
        Self {
            version: crate::VERSION,
            whatami,
            zid,
            resolution: Resolution::DEFAULT,
            batch_size: DEFAULT_BATCH_SIZE,
            cookie: None,
            qos: false,
            qos_link: None,
            shm: None,
            auth: None,
            multilink: None,
            low_latency: false,
            compression: false,
            patch: None,
            region_name: None,
            unknown: Unknown::new(),
        }
    }

    /// Whether this is an InitAck.
    pub const fn is_ack(&self) -> bool {
        self.cookie.is_some()
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let version = r.u8()?;
        let flags = r.u8()?;
        let whatami = WhatAmI::from_flags(r, flags)?;
        let zid = ZenohId::read(r, usize::from(flags >> 4) + 1)?;
        let mut init = Self::syn(whatami, zid);
        init.version = version;
        if header & FLAG_S != 0 {
            init.resolution = Resolution::from_byte(r.u8()?);
            init.batch_size = r.u16_le()?;
        }
        if header & FLAG_A != 0 {
            init.cookie = Some(r.zbytes(u64::from(u16::MAX), "cookie length")?);
        }
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            match e.id {
                id::QOS => init.qos = true,
                id::QOS_LINK => init.qos_link = Some(QosLink(ext::z64(&e))),
                id::SHM => init.shm = Some(ext::zbuf(&e)),
                id::AUTH => init.auth = Some(ext::zbuf(&e)),
                id::MULTILINK => init.multilink = Some(ext::zbuf(&e)),
                id::LOW_LATENCY => init.low_latency = true,
                id::COMPRESSION => init.compression = true,
                id::PATCH => init.patch = Some(ext::z64(&e)),
                id::REGION_NAME => {
                    let name = core::str::from_utf8(ext::zbuf(&e)).map_err(|_| {
                        r.error_at(
                            at,
                            DecodeErrorKind::InvalidUtf8 {
                                field: "region name",
                            },
                        )
                    })?;
                    init.region_name = Some(name);
                }
                _ => ext::keep_unknown(r, "Init", e, at, &mut init.unknown)?,
            }
        }
        Ok(init)
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = usize::from(self.qos)
            + usize::from(self.qos_link.is_some())
            + usize::from(self.shm.is_some())
            + usize::from(self.auth.is_some())
            + usize::from(self.multilink.is_some())
            + usize::from(self.low_latency)
            + usize::from(self.compression)
            + usize::from(self.patch.is_some())
            + usize::from(self.region_name.is_some())
            + self.unknown.len();
        let sized = self.resolution != Resolution::DEFAULT || self.batch_size != DEFAULT_BATCH_SIZE;
        let mut header = mid::INIT;
        if self.cookie.is_some() {
            header |= FLAG_A;
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
        if let Some(cookie) = self.cookie {
            if cookie.len() > usize::from(u16::MAX) {
                return Err(EncodeError::OutOfBounds {
                    field: "cookie length",
                    value: cookie.len() as u64,
                    bound: u64::from(u16::MAX),
                });
            }
            w.zbytes(cookie)?;
        }
        let mut ew = ExtWriter::new(n);
        if self.qos {
            ew.unit(w, id::QOS)?;
        }
        if let Some(v) = self.qos_link {
            ew.z64(w, id::QOS_LINK, v.0)?;
        }
        if let Some(b) = self.shm {
            ew.zbuf(w, id::SHM, b)?;
        }
        if let Some(b) = self.auth {
            ew.zbuf(w, id::AUTH, b)?;
        }
        if let Some(b) = self.multilink {
            ew.zbuf(w, id::MULTILINK, b)?;
        }
        if self.low_latency {
            ew.unit(w, id::LOW_LATENCY)?;
        }
        if self.compression {
            ew.unit(w, id::COMPRESSION)?;
        }
        if let Some(p) = self.patch {
            ew.z64(w, id::PATCH, p)?;
        }
        if let Some(name) = self.region_name {
            ew.zbuf(w, id::REGION_NAME, name.as_bytes())?;
        }
        ew.unknown(w, &self.unknown)
    }
}
