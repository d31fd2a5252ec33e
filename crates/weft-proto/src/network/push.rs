//! Push: data (a Put or a Del) on a key.
//!
//! ```text
//!  7 6 5 4 3 2 1 0
//! +-+-+-+-+-+-+-+-+
//! |Z|M|N|  PUSH   |   N: key suffix present; M: mapping = sender
//! +-+-+-+---------+
//! % key_scope:z16 %
//! ~ key_suffix    ~   if N: <utf8;z16>
//! ~ [push_exts]   ~   if Z: QoS 0x21, Timestamp 0x42, NodeId 0x33, TsStack 0x47
//! ~  PushBody     ~   one Put or Del
//! ```

use super::common::{self, CommonExts, TsStack};
use super::mid;
use crate::core::{Mapping, NetworkQos, Timestamp, WireExpr};
use crate::error::{DecodeError, EncodeError};
use crate::ext::{self, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;
use crate::zenoh::PushBody;

pub(crate) const FLAG_N: u8 = 0x20;
pub(crate) const FLAG_M: u8 = 0x40;

/// Data on a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Push<'a> {
    /// The key.
    pub wire_expr: WireExpr<'a>,
    /// Priority, congestion control, express.
    pub qos: NetworkQos,
    /// Timestamp of the network message (rarely used; data carries its own).
    pub timestamp: Option<Timestamp>,
    /// Routing context between routers (0 = none).
    pub node_id: u16,
    /// Timestamp-stack instrumentation.
    pub ts_stack: Option<TsStack<'a>>,
    /// Extensions not understood, kept for forwarding.
    pub unknown: Unknown<'a>,
    /// The Put or Del.
    pub body: PushBody<'a>,
}

impl<'a> Push<'a> {
    /// A push of `body` on `wire_expr` with default options.
    pub fn new(wire_expr: WireExpr<'a>, body: PushBody<'a>) -> Self {
        Self {
            wire_expr,
            qos: NetworkQos::DEFAULT,
            timestamp: None,
            node_id: 0,
            ts_stack: None,
            unknown: Unknown::new(),
            body,
        }
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let wire_expr = WireExpr::read(
            r,
            header & FLAG_N != 0,
            Mapping::from_flag(header & FLAG_M != 0),
        )?;
        let mut common = CommonExts::default();
        let mut unknown = Unknown::new();
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            if !common.take(r, &e, at)? {
                ext::keep_unknown(r, "Push", e, at, &mut unknown)?;
            }
        }
        let body = PushBody::decode(r)?;
        Ok(Self {
            wire_expr,
            qos: common.qos,
            timestamp: common.timestamp,
            node_id: common.node_id,
            ts_stack: common.ts_stack,
            unknown,
            body,
        })
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = common::count(self.qos, &self.timestamp, self.node_id, &self.ts_stack)
            + self.unknown.len();
        let mut header = mid::PUSH;
        if self.wire_expr.has_suffix() {
            header |= FLAG_N;
        }
        if self.wire_expr.mapping.is_sender() {
            header |= FLAG_M;
        }
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        self.wire_expr.write(w)?;
        let mut ew = ExtWriter::new(n);
        common::write_head(w, &mut ew, self.qos, &self.timestamp)?;
        common::write_tail(w, &mut ew, self.node_id, &self.ts_stack)?;
        ew.unknown(w, &self.unknown)?;
        self.body.encode(w)
    }
}
