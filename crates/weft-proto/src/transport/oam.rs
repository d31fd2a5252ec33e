//! Transport OAM: operations and management at the transport layer (decoded, never
//! produced by Zenoh 1.x).
//!
//! ```text
//! |Z|ENC|   OAM   |
//! %    id:z16     %
//! ~  [oam_exts]   ~   QoS 0x31 (mandatory)
//! ~    body       ~   unit, z64 or zbuf as ENC says
//! ```

use super::frame::read_priority;
use super::mid;
use crate::core::Priority;
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::ext::{self, id, ExtBody, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const ENC_MASK: u8 = 0x60;

/// A transport-level OAM message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportOam<'a> {
    /// What kind of OAM message.
    pub id: u16,
    /// Priority.
    pub priority: Priority,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
    /// The body.
    pub body: ExtBody<'a>,
}

impl<'a> TransportOam<'a> {
    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let enc = header & ENC_MASK;
        if enc == ENC_MASK {
            return Err(r.error_at(
                r.position() - 1,
                DecodeErrorKind::InvalidValue {
                    field: "OAM body encoding",
                    value: u64::from(enc >> 5),
                },
            ));
        }
        let oam_id = r.z16("OAM id")?;
        let mut priority = Priority::Data;
        let mut unknown = Unknown::new();
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            if e.id == id::FRAME_QOS {
                priority = read_priority(r, &e, at)?;
            } else {
                ext::keep_unknown(r, "OAM", e, at, &mut unknown)?;
            }
        }
        let body = ExtBody::read(r, enc)?;
        Ok(Self {
            id: oam_id,
            priority,
            unknown,
            body,
        })
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let with_qos = self.priority != Priority::Data;
        let n = usize::from(with_qos) + self.unknown.len();
        let mut header = mid::OAM | self.body.enc();
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        w.zint(u64::from(self.id))?;
        let mut ew = ExtWriter::new(n);
        if with_qos {
            ew.z64(w, id::FRAME_QOS, u64::from(self.priority.to_u8()))?;
        }
        ew.unknown(w, &self.unknown)?;
        self.body.write(w)
    }
}
