//! Response and ResponseFinal: the answers to a Request, and their end.
//!
//! ```text
//! |Z|M|N|RESPONSE |             |Z|X|X|RES_FINAL|
//! %request_id:z32 %             %request_id:z32 %
//! % key_scope:z16 %             ~ [exts]        ~   QoS 0x21, Timestamp 0x42
//! ~ key_suffix    ~   if N
//! ~ [reply_exts]  ~   if Z: QoS, Timestamp, ResponderId 0x43, TsStack
//! ~ ResponseBody  ~   one Reply or Err
//! ```

use super::common::{self, CommonExts, TsStack};
use super::mid;
use super::push::{FLAG_M, FLAG_N};
use crate::core::{Mapping, NetworkQos, Timestamp, WireExpr, ZenohId};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError, Layer};
use crate::ext::{self, id, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::{zint_len, Writer};
use crate::zenoh::{self, Err, Reply};

/// The global identity of an entity: its session's ZenohID and its id in that session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EntityGlobalId {
    /// The session's id.
    pub zid: ZenohId,
    /// The entity's id within the session.
    pub eid: u32,
}

impl EntityGlobalId {
    fn read(mut r: Reader<'_>) -> Result<Self, DecodeError> {
        let flags = r.u8()?;
        let zid = ZenohId::read(&mut r, usize::from(flags >> 4) + 1)?;
        let eid = r.z32("responder entity id")?;
        zenoh::expect_end(&r, "ResponderId extension")?;
        Ok(Self { zid, eid })
    }

    fn encoded_len(&self) -> usize {
        1 + self.zid.size() + zint_len(u64::from(self.eid))
    }

    fn write<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        w.u8(self.zid.len_nibble())?;
        self.zid.write(w)?;
        w.zint(u64::from(self.eid))
    }
}

/// The body of a Response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponseBody<'a> {
    /// A successful answer.
    Reply(Reply<'a>),
    /// An error answer.
    Err(Err<'a>),
}

/// One answer to a Request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response<'a> {
    /// The id of the Request being answered, as chosen by the requester on this link.
    pub request_id: u32,
    /// The key of the answer.
    pub wire_expr: WireExpr<'a>,
    /// Priority, congestion control, express.
    pub qos: NetworkQos,
    /// Timestamp of the network message.
    pub timestamp: Option<Timestamp>,
    /// The answering entity.
    pub responder: Option<EntityGlobalId>,
    /// Timestamp-stack instrumentation.
    pub ts_stack: Option<TsStack<'a>>,
    /// Extensions not understood, kept for forwarding.
    pub unknown: Unknown<'a>,
    /// The Reply or Err.
    pub body: ResponseBody<'a>,
}

impl<'a> Response<'a> {
    /// A response to `request_id` on `wire_expr` with default options.
    pub fn new(request_id: u32, wire_expr: WireExpr<'a>, body: ResponseBody<'a>) -> Self {
        Self {
            request_id,
            wire_expr,
            qos: NetworkQos::DEFAULT,
            timestamp: None,
            responder: None,
            ts_stack: None,
            unknown: Unknown::new(),
            body,
        }
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let request_id = r.z32("request id")?;
        let wire_expr = WireExpr::read(
            r,
            header & FLAG_N != 0,
            Mapping::from_flag(header & FLAG_M != 0),
        )?;
        let mut common = CommonExts::default();
        let mut responder = None;
        let mut unknown = Unknown::new();
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            if e.id == id::RESPONDER_ID {
                responder = Some(EntityGlobalId::read(ext::zbuf_reader(r, &e))?);
            } else if e.id == id::NET_NODE_ID || !common.take(r, &e, at)? {
                ext::keep_unknown(r, "Response", e, at, &mut unknown)?;
            }
        }
        let at = r.position();
        let body_header = r.u8()?;
        let body = match body_header & 0x1F {
            zenoh::mid::REPLY => ResponseBody::Reply(Reply::read(r, body_header)?),
            zenoh::mid::ERR => ResponseBody::Err(Err::read(r, body_header)?),
            other => {
                return Err(r.error_at(
                    at,
                    DecodeErrorKind::UnknownMessage {
                        layer: Layer::Data,
                        id: other,
                    },
                ))
            }
        };
        Ok(Self {
            request_id,
            wire_expr,
            qos: common.qos,
            timestamp: common.timestamp,
            responder,
            ts_stack: common.ts_stack,
            unknown,
            body,
        })
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = common::count(self.qos, &self.timestamp, 0, &self.ts_stack)
            + usize::from(self.responder.is_some())
            + self.unknown.len();
        let mut header = mid::RESPONSE;
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
        w.zint(u64::from(self.request_id))?;
        self.wire_expr.write(w)?;
        let mut ew = ExtWriter::new(n);
        common::write_head(w, &mut ew, self.qos, &self.timestamp)?;
        if let Some(rid) = &self.responder {
            ew.zbuf_with(w, id::RESPONDER_ID, rid.encoded_len(), |w| rid.write(w))?;
        }
        common::write_tail(w, &mut ew, 0, &self.ts_stack)?;
        ew.unknown(w, &self.unknown)?;
        match &self.body {
            ResponseBody::Reply(m) => m.encode(w),
            ResponseBody::Err(m) => m.encode(w),
        }
    }
}

/// The end of the answers to a Request: sent exactly once per Request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseFinal<'a> {
    /// The id of the finished Request.
    pub request_id: u32,
    /// Priority, congestion control, express.
    pub qos: NetworkQos,
    /// Timestamp of the network message.
    pub timestamp: Option<Timestamp>,
    /// Extensions not understood, kept for forwarding.
    pub unknown: Unknown<'a>,
}

impl<'a> ResponseFinal<'a> {
    /// The final answer to `request_id`, with default options.
    pub fn new(request_id: u32) -> Self {
        Self {
            request_id,
            qos: NetworkQos::DEFAULT,
            timestamp: None,
            unknown: Unknown::new(),
        }
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let mut msg = Self::new(r.z32("request id")?);
        let mut common = CommonExts::default();
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            let is_common = matches!(e.id, id::NET_QOS | id::NET_TIMESTAMP);
            if !(is_common && common.take(r, &e, at)?) {
                ext::keep_unknown(r, "ResponseFinal", e, at, &mut msg.unknown)?;
            }
        }
        msg.qos = common.qos;
        msg.timestamp = common.timestamp;
        Ok(msg)
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = common::count(self.qos, &self.timestamp, 0, &None) + self.unknown.len();
        w.u8(if n > 0 {
            mid::RESPONSE_FINAL | FLAG_Z
        } else {
            mid::RESPONSE_FINAL
        })?;
        w.zint(u64::from(self.request_id))?;
        let mut ew = ExtWriter::new(n);
        common::write_head(w, &mut ew, self.qos, &self.timestamp)?;
        ew.unknown(w, &self.unknown)
    }
}
