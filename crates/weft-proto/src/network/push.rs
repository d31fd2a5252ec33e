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
use crate::reader::{zint_at, Reader};
use crate::writer::Writer;
use crate::zenoh::{self, Del, PushBody, Put};

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
    #[inline]
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
    #[inline]
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        if self.qos == NetworkQos::DEFAULT
            && self.timestamp.is_none()
            && self.node_id == 0
            && self.ts_stack.is_none()
            && self.unknown.is_empty()
        {
            // No extension: the header, the key and the body.
            let header = self.header(false);
            if let PushBody::Put(put) = &self.body {
                if self.wire_expr.scope < 0x80
                    && !self.wire_expr.has_suffix()
                    && put.payload.len() < 0x80
                    && put.is_plain()
                {
                    // The commonest small message: its four fixed bytes in one write.
                    let fixed = [
                        header,
                        self.wire_expr.scope as u8,
                        zenoh::mid::PUT,
                        put.payload.len() as u8,
                    ];
                    w.put(&fixed)?;
                    return w.put(put.payload);
                }
            }
            w.u8(header)?;
            self.wire_expr.write(w)?;
            return self.body.encode(w);
        }
        self.encode_with_exts(w)
    }

    /// The header byte (the Z flag as given).
    #[inline]
    fn header(&self, z: bool) -> u8 {
        let mut header = mid::PUSH;
        if self.wire_expr.has_suffix() {
            header |= FLAG_N;
        }
        if self.wire_expr.mapping.is_sender() {
            header |= FLAG_M;
        }
        if z {
            header |= FLAG_Z;
        }
        header
    }

    #[inline(never)]
    fn encode_with_exts<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = common::count(self.qos, &self.timestamp, self.node_id, &self.ts_stack)
            + self.unknown.len();
        w.u8(self.header(n > 0))?;
        self.wire_expr.write(w)?;
        let mut ew = ExtWriter::new(n);
        common::write_head(w, &mut ew, self.qos, &self.timestamp)?;
        common::write_tail(w, &mut ew, self.node_id, &self.ts_stack)?;
        ew.unknown(w, &self.unknown)?;
        self.body.encode(w)
    }
}

/// The fields of the commonest Push: at most the QoS extension, and a Put or a Del with
/// every option but the timestamp at its default. Small enough to move freely; the full
/// [`Push`] is built once, in place.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlainPush<'a> {
    wire_expr: WireExpr<'a>,
    qos: NetworkQos,
    timestamp: Option<Timestamp>,
    /// The Put's payload, or `None` for a Del.
    payload: Option<&'a [u8]>,
}

/// The QoS extension alone: id 1, a z64 value, no further extension.
const QOS_EXT_ALONE: u8 = 0x21;
/// The timestamp flag of a Put or Del header.
const BODY_FLAG_T: u8 = 0x20;

impl<'a> PlainPush<'a> {
    /// Reads a plain Push (header included) if the next message is one; otherwise, or on
    /// any error, returns `None` and leaves `r` untouched, for the general decoder to
    /// handle (and report errors exactly as it always does).
    #[inline]
    pub(crate) fn read(r: &mut Reader<'a>) -> Option<Self> {
        let buf = r.rest();
        let header = *buf.first()?;
        if header & 0x1F != mid::PUSH {
            return None;
        }
        let mut at = 1;
        // The same bounds as `WireExpr::read` and `Put::read`.
        let scope = u16::try_from(zint_at(buf, &mut at)?).ok()?;
        let suffix = if header & FLAG_N != 0 {
            let len = zint_at(buf, &mut at)?;
            if len > u64::from(u16::MAX) {
                return None;
            }
            let bytes = buf.get(at..at + len as usize)?;
            at += bytes.len();
            core::str::from_utf8(bytes).ok()?
        } else {
            ""
        };
        let mut qos = NetworkQos::DEFAULT;
        if header & FLAG_Z != 0 {
            if *buf.get(at)? != QOS_EXT_ALONE {
                return None;
            }
            at += 1;
            qos = NetworkQos::from_byte(u8::try_from(zint_at(buf, &mut at)?).ok()?);
        }
        // A body header with at most the T flag: E and Z clear.
        let body = *buf.get(at)?;
        at += 1;
        let timestamp = if body & BODY_FLAG_T != 0 {
            let mut tr = Reader::new(buf.get(at..)?);
            let ts = Timestamp::read(&mut tr).ok()?;
            at += tr.position();
            Some(ts)
        } else {
            None
        };
        let payload = match body & !BODY_FLAG_T {
            zenoh::mid::PUT => {
                let len = zint_at(buf, &mut at)?;
                if len > u64::from(u32::MAX) {
                    return None;
                }
                let bytes = buf.get(at..at.checked_add(len as usize)?)?;
                at += bytes.len();
                Some(bytes)
            }
            zenoh::mid::DEL => None,
            _ => return None,
        };
        r.advance(at);
        Some(Self {
            wire_expr: WireExpr {
                scope,
                suffix,
                mapping: Mapping::from_flag(header & FLAG_M != 0),
            },
            qos,
            timestamp,
            payload,
        })
    }

    /// The full message.
    #[inline(always)]
    pub(crate) fn into_push(self) -> Push<'a> {
        let body = match self.payload {
            Some(payload) => {
                let mut put = Put::new(payload);
                put.timestamp = self.timestamp;
                PushBody::Put(put)
            }
            None => PushBody::Del(Del {
                timestamp: self.timestamp,
                ..Del::default()
            }),
        };
        let mut push = Push::new(self.wire_expr, body);
        push.qos = self.qos;
        push
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::*;

    #[test]
    fn the_plain_encoding_path_writes_what_the_general_one_writes() {
        let payloads: [&[u8]; 6] = [
            b"",
            b"12345678",
            &[6; 127],
            &[7; 128],
            &[8; 200],
            &[9; 20_000],
        ];
        for payload in payloads {
            for scope in [0u16, 5, 127, 128, 16_383, 16_384, u16::MAX] {
                for suffix in ["", "demo/**"] {
                    for mapping in [Mapping::Sender, Mapping::Receiver] {
                        let key = WireExpr {
                            scope,
                            suffix,
                            mapping,
                        };
                        for body in [
                            PushBody::Put(Put::new(payload)),
                            PushBody::Del(Del::default()),
                        ] {
                            let push = Push::new(key, body.clone());
                            let (mut fast, mut general) = (Vec::new(), Vec::new());
                            push.encode(&mut fast).unwrap();
                            push.encode_with_exts(&mut general).unwrap();
                            assert_eq!(fast, general);
                            if let PushBody::Put(put) = &body {
                                let (mut fast, mut general) = (Vec::new(), Vec::new());
                                put.encode(&mut fast).unwrap();
                                put.encode_full(&mut general).unwrap();
                                assert_eq!(fast, general);
                            }
                            let mut r = Reader::new(&fast);
                            assert_eq!(
                                PlainPush::read(&mut r).map(PlainPush::into_push),
                                Some(push)
                            );
                            assert!(r.is_empty());
                        }
                    }
                }
            }
        }
    }
}
