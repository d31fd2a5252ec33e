//! Network OAM: operations and management messages (link-state between routers).
//!
//! ```text
//! |Z|ENC|   OAM   |   ENC: body encoding, as for extensions (unit, z64, zbuf)
//! % id:z16        %   1 = link-state
//! ~ [oam_exts]    ~   QoS 0x21, Timestamp 0x42
//! ~ body          ~
//! ```

use super::common::{self, CommonExts};
use super::mid;
use crate::core::{NetworkQos, Timestamp};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::ext::{self, id, ExtBody, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const ENC_MASK: u8 = 0x60;

/// An operations-and-management message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkOam<'a> {
    /// What kind of OAM message (1 = link-state).
    pub id: u16,
    /// Priority, congestion control, express.
    pub qos: NetworkQos,
    /// Timestamp of the network message.
    pub timestamp: Option<Timestamp>,
    /// Extensions not understood, kept for forwarding.
    pub unknown: Unknown<'a>,
    /// The body.
    pub body: ExtBody<'a>,
}

impl<'a> NetworkOam<'a> {
    /// OAM id of router link-state messages.
    pub const LINK_STATE: u16 = 0x0001;

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
        let mut common = CommonExts::default();
        let mut unknown = Unknown::new();
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            let is_common = matches!(e.id, id::NET_QOS | id::NET_TIMESTAMP);
            if !(is_common && common.take(r, &e, at)?) {
                ext::keep_unknown(r, "OAM", e, at, &mut unknown)?;
            }
        }
        let body = ExtBody::read(r, enc)?;
        Ok(Self {
            id: oam_id,
            qos: common.qos,
            timestamp: common.timestamp,
            unknown,
            body,
        })
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = common::count(self.qos, &self.timestamp, 0, &None) + self.unknown.len();
        let mut header = mid::OAM | self.body.enc();
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        w.zint(u64::from(self.id))?;
        let mut ew = ExtWriter::new(n);
        common::write_head(w, &mut ew, self.qos, &self.timestamp)?;
        ew.unknown(w, &self.unknown)?;
        self.body.write(w)
    }
}
