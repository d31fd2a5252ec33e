//! OpenSyn / OpenAck: the last two messages of unicast session establishment.
//!
//! ```text
//! |Z|T|A|  OPEN   |   A: 0 OpenSyn, 1 OpenAck; T: lease in seconds (else milliseconds)
//! %     lease     %
//! %  initial_sn   %
//! ~   <u8;z16>    ~   OpenSyn only: the cookie from InitAck, verbatim
//! ~  [OpenExts]   ~   if Z: QoS 0x01, Shm 0x42, Auth 0x43, MultiLink 0x44/0x04,
//!                           LowLatency 0x05, Compression 0x06, RemoteBound 0x27
//! ```

use super::mid;
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::ext::{self, id, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const FLAG_A: u8 = 0x20;
const FLAG_T: u8 = 0x40;

/// OpenSyn (with the echoed cookie) or OpenAck (without).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Open<'a> {
    /// How long the receiver waits for traffic from the sender before declaring it dead.
    pub lease_ms: u64,
    /// The first sequence number the sender uses on every channel.
    pub initial_sn: u32,
    /// `Some` for OpenSyn: the InitAck cookie, echoed verbatim.
    pub cookie: Option<&'a [u8]>,
    /// QoS (never sent by Zenoh 1.10 in Open; decided in Init).
    pub qos: bool,
    /// Shared-memory challenge response (opaque).
    pub shm: Option<&'a [u8]>,
    /// Authentication (opaque).
    pub auth: Option<&'a [u8]>,
    /// Multi-link negotiation, OpenSyn form (opaque).
    pub multilink: Option<&'a [u8]>,
    /// Multi-link accepted, OpenAck form.
    pub multilink_ack: bool,
    /// Low-latency transport.
    pub low_latency: bool,
    /// Batch compression.
    pub compression: bool,
    /// Regions: 0 = north, 1 = south.
    pub remote_bound: Option<u64>,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

impl<'a> Open<'a> {
    /// An OpenAck with no extensions.
    pub fn ack(lease_ms: u64, initial_sn: u32) -> Self {
        Self {
            lease_ms,
            initial_sn,
            cookie: None,
            qos: false,
            shm: None,
            auth: None,
            multilink: None,
            multilink_ack: false,
            low_latency: false,
            compression: false,
            remote_bound: None,
            unknown: Unknown::new(),
        }
    }

    /// An OpenSyn echoing `cookie`, with no extensions.
    pub fn syn(lease_ms: u64, initial_sn: u32, cookie: &'a [u8]) -> Self {
        Self {
            cookie: Some(cookie),
            ..Self::ack(lease_ms, initial_sn)
        }
    }

    /// Whether this is an OpenSyn.
    pub const fn is_syn(&self) -> bool {
        self.cookie.is_some()
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
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
        let initial_sn = r.z32("initial SN")?;
        let mut open = Self::ack(lease_ms, initial_sn);
        if header & FLAG_A == 0 {
            open.cookie = Some(r.zbytes(u64::from(u16::MAX), "cookie length")?);
        }
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            match e.id {
                id::QOS => open.qos = true,
                id::SHM => open.shm = Some(ext::zbuf(&e)),
                id::AUTH => open.auth = Some(ext::zbuf(&e)),
                id::MULTILINK => open.multilink = Some(ext::zbuf(&e)),
                id::MULTILINK_ACK => open.multilink_ack = true,
                id::LOW_LATENCY => open.low_latency = true,
                id::COMPRESSION => open.compression = true,
                id::REMOTE_BOUND => open.remote_bound = Some(ext::z64(&e)),
                _ => ext::keep_unknown(r, "Open", e, at, &mut open.unknown)?,
            }
        }
        Ok(open)
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = usize::from(self.qos)
            + usize::from(self.shm.is_some())
            + usize::from(self.auth.is_some())
            + usize::from(self.multilink.is_some())
            + usize::from(self.multilink_ack)
            + usize::from(self.low_latency)
            + usize::from(self.compression)
            + usize::from(self.remote_bound.is_some())
            + self.unknown.len();
        let in_seconds = self.lease_ms % 1000 == 0;
        let mut header = mid::OPEN;
        if self.cookie.is_none() {
            header |= FLAG_A;
        }
        if in_seconds {
            header |= FLAG_T;
        }
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        w.zint(if in_seconds {
            self.lease_ms / 1000
        } else {
            self.lease_ms
        })?;
        w.zint(u64::from(self.initial_sn))?;
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
        if let Some(b) = self.shm {
            ew.zbuf(w, id::SHM, b)?;
        }
        if let Some(b) = self.auth {
            ew.zbuf(w, id::AUTH, b)?;
        }
        if let Some(b) = self.multilink {
            ew.zbuf(w, id::MULTILINK, b)?;
        }
        if self.multilink_ack {
            ew.unit(w, id::MULTILINK_ACK)?;
        }
        if self.low_latency {
            ew.unit(w, id::LOW_LATENCY)?;
        }
        if self.compression {
            ew.unit(w, id::COMPRESSION)?;
        }
        if let Some(v) = self.remote_bound {
            ew.z64(w, id::REMOTE_BOUND, v)?;
        }
        ew.unknown(w, &self.unknown)
    }
}
