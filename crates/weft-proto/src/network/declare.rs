//! Declare and the declarations it carries.
//!
//! ```text
//!  7 6 5 4 3 2 1 0
//! +-+-+-+-+-+-+-+-+
//! |Z|X|I| DECLARE |   I: interest_id present (this Declare answers that Interest)
//! +-+-+-+---------+
//! %interest_id:z32%   if I
//! ~ [decl_exts]   ~   if Z: QoS, Timestamp, NodeId
//! ~ declaration   ~   exactly one
//! ```
//!
//! Declarations (header: ID in bits 0-4, N = 0x20 suffix present, M = 0x40 mapping):
//! DeclareKeyExpr 0x00 `%id:z16% wire_expr`, UndeclareKeyExpr 0x01 `%id:z16%`,
//! DeclareSubscriber 0x02, DeclareQueryable 0x04 (ext QueryableInfo 0x21), DeclareToken 0x06
//! (`%id:z32% wire_expr`), their undeclarations 0x03, 0x05, 0x07 (`%id:z32%`, ext WireExpr
//! 0x5F), and DeclareFinal 0x1A.

use super::common::{self, CommonExts};
use super::mid;
use crate::core::{Mapping, NetworkQos, Timestamp, WireExpr};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError, Layer};
use crate::ext::{self, id, ExtWriter, Extension, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::{zint_len, Writer};

const FLAG_I: u8 = 0x20;
const FLAG_N: u8 = 0x20;
const FLAG_M: u8 = 0x40;

/// Declaration ids.
pub mod did {
    /// DeclareKeyExpr.
    pub const D_KEYEXPR: u8 = 0x00;
    /// UndeclareKeyExpr.
    pub const U_KEYEXPR: u8 = 0x01;
    /// DeclareSubscriber.
    pub const D_SUBSCRIBER: u8 = 0x02;
    /// UndeclareSubscriber.
    pub const U_SUBSCRIBER: u8 = 0x03;
    /// DeclareQueryable.
    pub const D_QUERYABLE: u8 = 0x04;
    /// UndeclareQueryable.
    pub const U_QUERYABLE: u8 = 0x05;
    /// DeclareToken.
    pub const D_TOKEN: u8 = 0x06;
    /// UndeclareToken.
    pub const U_TOKEN: u8 = 0x07;
    /// DeclareFinal.
    pub const D_FINAL: u8 = 0x1A;
}

/// Binds `id` to a key expression in the declaring side's table for this link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclareKeyExpr<'a> {
    /// The id being declared (non-zero).
    pub id: u16,
    /// The key expression (Zenoh always uses scope 0 and the full string).
    pub wire_expr: WireExpr<'a>,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

/// Releases a key-expression id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndeclareKeyExpr<'a> {
    /// The id being released.
    pub id: u16,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

/// A subscriber on a key expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclareSubscriber<'a> {
    /// Entity id chosen by the declaring side (0 for "current" answers and between routers).
    pub id: u32,
    /// The subscribed key expression.
    pub wire_expr: WireExpr<'a>,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

/// Whether a queryable answers for its whole key space, and how far away it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct QueryableInfo {
    /// The queryable answers for every key of its key expression.
    pub complete: bool,
    /// Number of hops to the queryable (0 = local).
    pub distance: u16,
}

impl QueryableInfo {
    const fn to_u64(self) -> u64 {
        (self.complete as u64) | ((self.distance as u64) << 8)
    }

    const fn from_u64(v: u64) -> Self {
        Self {
            complete: v & 1 != 0,
            distance: ((v >> 8) & 0xFFFF) as u16,
        }
    }
}

/// A queryable on a key expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclareQueryable<'a> {
    /// Entity id chosen by the declaring side.
    pub id: u32,
    /// The key expression it answers for.
    pub wire_expr: WireExpr<'a>,
    /// Completeness and distance.
    pub info: QueryableInfo,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

/// A liveliness token on a key expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclareToken<'a> {
    /// Entity id chosen by the declaring side.
    pub id: u32,
    /// The token's key expression.
    pub wire_expr: WireExpr<'a>,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

/// An undeclaration of a subscriber, queryable or token.
macro_rules! undeclaration {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name<'a> {
            /// The entity id given in the declaration.
            pub id: u32,
            /// The entity's key expression (WireExpr extension), for receivers that did not
            /// track the id; Zenoh sends an empty one (scope 0, no suffix) between clients.
            pub wire_expr: Option<WireExpr<'a>>,
            /// Extensions not understood.
            pub unknown: Unknown<'a>,
        }
    };
}

undeclaration!(
    /// Withdraws a subscriber.
    UndeclareSubscriber
);
undeclaration!(
    /// Withdraws a queryable.
    UndeclareQueryable
);
undeclaration!(
    /// Withdraws a liveliness token.
    UndeclareToken
);

/// Marks the end of the declarations sent in answer to an Interest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeclareFinal<'a> {
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

/// One declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declaration<'a> {
    /// DeclareKeyExpr.
    KeyExpr(DeclareKeyExpr<'a>),
    /// UndeclareKeyExpr.
    UndeclareKeyExpr(UndeclareKeyExpr<'a>),
    /// DeclareSubscriber.
    Subscriber(DeclareSubscriber<'a>),
    /// UndeclareSubscriber.
    UndeclareSubscriber(UndeclareSubscriber<'a>),
    /// DeclareQueryable.
    Queryable(DeclareQueryable<'a>),
    /// UndeclareQueryable.
    UndeclareQueryable(UndeclareQueryable<'a>),
    /// DeclareToken.
    Token(DeclareToken<'a>),
    /// UndeclareToken.
    UndeclareToken(UndeclareToken<'a>),
    /// DeclareFinal.
    Final(DeclareFinal<'a>),
}

impl Declaration<'_> {
    /// The declaration's name as the specification writes it.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::KeyExpr(_) => "DeclareKeyExpr",
            Self::UndeclareKeyExpr(_) => "UndeclareKeyExpr",
            Self::Subscriber(_) => "DeclareSubscriber",
            Self::UndeclareSubscriber(_) => "UndeclareSubscriber",
            Self::Queryable(_) => "DeclareQueryable",
            Self::UndeclareQueryable(_) => "UndeclareQueryable",
            Self::Token(_) => "DeclareToken",
            Self::UndeclareToken(_) => "UndeclareToken",
            Self::Final(_) => "DeclareFinal",
        }
    }
}

/// A Declare network message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declare<'a> {
    /// The Interest this Declare answers, if any.
    pub interest_id: Option<u32>,
    /// Priority, congestion control, express.
    pub qos: NetworkQos,
    /// Timestamp of the network message.
    pub timestamp: Option<Timestamp>,
    /// Routing context between routers (0 = none).
    pub node_id: u16,
    /// Extensions not understood, kept for forwarding.
    pub unknown: Unknown<'a>,
    /// The declaration.
    pub body: Declaration<'a>,
}

impl<'a> Declare<'a> {
    /// A Declare with the QoS Zenoh uses for declarations (Control, block).
    pub fn new(interest_id: Option<u32>, body: Declaration<'a>) -> Self {
        Self {
            interest_id,
            qos: NetworkQos::DECLARE,
            timestamp: None,
            node_id: 0,
            unknown: Unknown::new(),
            body,
        }
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let interest_id = if header & FLAG_I != 0 {
            Some(r.z32("interest id")?)
        } else {
            None
        };
        let mut common = CommonExts::default();
        let mut unknown = Unknown::new();
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            if e.id == id::NET_TS_STACK || !common.take(r, &e, at)? {
                ext::keep_unknown(r, "Declare", e, at, &mut unknown)?;
            }
        }
        let body = read_declaration(r)?;
        Ok(Self {
            interest_id,
            qos: common.qos,
            timestamp: common.timestamp,
            node_id: common.node_id,
            unknown,
            body,
        })
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = common::count(self.qos, &self.timestamp, self.node_id, &None) + self.unknown.len();
        let mut header = mid::DECLARE;
        if self.interest_id.is_some() {
            header |= FLAG_I;
        }
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        if let Some(i) = self.interest_id {
            w.zint(u64::from(i))?;
        }
        let mut ew = ExtWriter::new(n);
        common::write_head(w, &mut ew, self.qos, &self.timestamp)?;
        common::write_tail(w, &mut ew, self.node_id, &None)?;
        ew.unknown(w, &self.unknown)?;
        write_declaration(w, &self.body)
    }
}

/// Reads the extension chain of a declaration, letting `known` take the ones it knows.
fn read_exts<'a>(
    r: &mut Reader<'a>,
    header: u8,
    message: &'static str,
    mut known: impl FnMut(&Reader<'a>, &Extension<'a>, usize) -> Result<bool, DecodeError>,
) -> Result<Unknown<'a>, DecodeError> {
    let mut unknown = Unknown::new();
    let mut more = header & FLAG_Z != 0;
    while more {
        let (e, at, next) = ext::read(r)?;
        more = next;
        if !known(r, &e, at)? {
            ext::keep_unknown(r, message, e, at, &mut unknown)?;
        }
    }
    Ok(unknown)
}

fn no_known(_: &Reader<'_>, _: &Extension<'_>, _: usize) -> Result<bool, DecodeError> {
    Ok(false)
}

fn read_wire_expr<'a>(r: &mut Reader<'a>, header: u8) -> Result<WireExpr<'a>, DecodeError> {
    WireExpr::read(
        r,
        header & FLAG_N != 0,
        Mapping::from_flag(header & FLAG_M != 0),
    )
}

/// Decodes the WireExpr extension body: `|x|x|x|x|x|x|M|N|`, `%scope:z16%`, raw suffix.
fn read_ext_wire_expr<'a>(mut r: Reader<'a>) -> Result<WireExpr<'a>, DecodeError> {
    let flags = r.u8()?;
    let scope = r.z16("key scope")?;
    let at = r.position();
    let suffix = if flags & 0x01 != 0 {
        core::str::from_utf8(r.take_rest()).map_err(|_| {
            r.error_at(
                at,
                DecodeErrorKind::InvalidUtf8 {
                    field: "WireExpr extension suffix",
                },
            )
        })?
    } else {
        crate::zenoh::expect_end(&r, "WireExpr extension")?;
        ""
    };
    Ok(WireExpr {
        scope,
        suffix,
        mapping: Mapping::from_flag(flags & 0x02 != 0),
    })
}

fn ext_wire_expr_len(we: &WireExpr<'_>) -> usize {
    1 + zint_len(u64::from(we.scope)) + we.suffix.len()
}

fn write_ext_wire_expr<W: Writer>(w: &mut W, we: &WireExpr<'_>) -> Result<(), EncodeError> {
    let mut flags = 0u8;
    if we.has_suffix() {
        flags |= 0x01;
    }
    if we.mapping.is_sender() {
        flags |= 0x02;
    }
    w.u8(flags)?;
    w.zint(u64::from(we.scope))?;
    w.put(we.suffix.as_bytes())
}

fn read_undeclare<'a>(
    r: &mut Reader<'a>,
    header: u8,
    message: &'static str,
) -> Result<(u32, Option<WireExpr<'a>>, Unknown<'a>), DecodeError> {
    let entity = r.z32("entity id")?;
    let mut wire_expr = None;
    let unknown = read_exts(r, header, message, |r, e, _| {
        if e.id == id::WIRE_EXPR {
            wire_expr = Some(read_ext_wire_expr(ext::zbuf_reader(r, e))?);
            Ok(true)
        } else {
            Ok(false)
        }
    })?;
    Ok((entity, wire_expr, unknown))
}

fn read_declaration<'a>(r: &mut Reader<'a>) -> Result<Declaration<'a>, DecodeError> {
    let at = r.position();
    let header = r.u8()?;
    Ok(match header & 0x1F {
        did::D_KEYEXPR => {
            let id_ = r.z16("expr id")?;
            // DeclareKeyExpr has no M flag: its scope refers to the receiver's ids.
            let wire_expr = WireExpr::read(r, header & FLAG_N != 0, Mapping::Receiver)?;
            let unknown = read_exts(r, header, "DeclareKeyExpr", no_known)?;
            Declaration::KeyExpr(DeclareKeyExpr {
                id: id_,
                wire_expr,
                unknown,
            })
        }
        did::U_KEYEXPR => {
            let id_ = r.z16("expr id")?;
            let unknown = read_exts(r, header, "UndeclareKeyExpr", no_known)?;
            Declaration::UndeclareKeyExpr(UndeclareKeyExpr { id: id_, unknown })
        }
        did::D_SUBSCRIBER => {
            let id_ = r.z32("subscriber id")?;
            let wire_expr = read_wire_expr(r, header)?;
            let unknown = read_exts(r, header, "DeclareSubscriber", no_known)?;
            Declaration::Subscriber(DeclareSubscriber {
                id: id_,
                wire_expr,
                unknown,
            })
        }
        did::D_QUERYABLE => {
            let id_ = r.z32("queryable id")?;
            let wire_expr = read_wire_expr(r, header)?;
            let mut info = QueryableInfo::default();
            let unknown = read_exts(r, header, "DeclareQueryable", |_, e, _| {
                if e.id == id::QUERYABLE_INFO {
                    info = QueryableInfo::from_u64(ext::z64(e));
                    Ok(true)
                } else {
                    Ok(false)
                }
            })?;
            Declaration::Queryable(DeclareQueryable {
                id: id_,
                wire_expr,
                info,
                unknown,
            })
        }
        did::D_TOKEN => {
            let id_ = r.z32("token id")?;
            let wire_expr = read_wire_expr(r, header)?;
            let unknown = read_exts(r, header, "DeclareToken", no_known)?;
            Declaration::Token(DeclareToken {
                id: id_,
                wire_expr,
                unknown,
            })
        }
        did::U_SUBSCRIBER => {
            let (id_, wire_expr, unknown) = read_undeclare(r, header, "UndeclareSubscriber")?;
            Declaration::UndeclareSubscriber(UndeclareSubscriber {
                id: id_,
                wire_expr,
                unknown,
            })
        }
        did::U_QUERYABLE => {
            let (id_, wire_expr, unknown) = read_undeclare(r, header, "UndeclareQueryable")?;
            Declaration::UndeclareQueryable(UndeclareQueryable {
                id: id_,
                wire_expr,
                unknown,
            })
        }
        did::U_TOKEN => {
            let (id_, wire_expr, unknown) = read_undeclare(r, header, "UndeclareToken")?;
            Declaration::UndeclareToken(UndeclareToken {
                id: id_,
                wire_expr,
                unknown,
            })
        }
        did::D_FINAL => {
            let unknown = read_exts(r, header, "DeclareFinal", no_known)?;
            Declaration::Final(DeclareFinal { unknown })
        }
        other => {
            return Err(r.error_at(
                at,
                DecodeErrorKind::UnknownMessage {
                    layer: Layer::Declaration,
                    id: other,
                },
            ))
        }
    })
}

fn entity_header(base: u8, we: &WireExpr<'_>, n_exts: usize) -> u8 {
    let mut h = base;
    if we.has_suffix() {
        h |= FLAG_N;
    }
    if we.mapping.is_sender() {
        h |= FLAG_M;
    }
    if n_exts > 0 {
        h |= FLAG_Z;
    }
    h
}

fn write_undeclare<W: Writer>(
    w: &mut W,
    base: u8,
    entity: u32,
    wire_expr: &Option<WireExpr<'_>>,
    unknown: &[Extension<'_>],
) -> Result<(), EncodeError> {
    let n = usize::from(wire_expr.is_some()) + unknown.len();
    w.u8(if n > 0 { base | FLAG_Z } else { base })?;
    w.zint(u64::from(entity))?;
    let mut ew = ExtWriter::new(n);
    if let Some(we) = wire_expr {
        ew.zbuf_with(w, id::WIRE_EXPR, ext_wire_expr_len(we), |w| {
            write_ext_wire_expr(w, we)
        })?;
    }
    ew.unknown(w, unknown)
}

fn write_declaration<W: Writer>(w: &mut W, d: &Declaration<'_>) -> Result<(), EncodeError> {
    match d {
        Declaration::KeyExpr(m) => {
            let n = m.unknown.len();
            let mut h = did::D_KEYEXPR;
            if m.wire_expr.has_suffix() {
                h |= FLAG_N;
            }
            if n > 0 {
                h |= FLAG_Z;
            }
            w.u8(h)?;
            w.zint(u64::from(m.id))?;
            m.wire_expr.write(w)?;
            ExtWriter::new(n).unknown(w, &m.unknown)
        }
        Declaration::UndeclareKeyExpr(m) => {
            let n = m.unknown.len();
            w.u8(if n > 0 {
                did::U_KEYEXPR | FLAG_Z
            } else {
                did::U_KEYEXPR
            })?;
            w.zint(u64::from(m.id))?;
            ExtWriter::new(n).unknown(w, &m.unknown)
        }
        Declaration::Subscriber(m) => {
            let n = m.unknown.len();
            w.u8(entity_header(did::D_SUBSCRIBER, &m.wire_expr, n))?;
            w.zint(u64::from(m.id))?;
            m.wire_expr.write(w)?;
            ExtWriter::new(n).unknown(w, &m.unknown)
        }
        Declaration::Queryable(m) => {
            let has_info = m.info != QueryableInfo::default();
            let n = usize::from(has_info) + m.unknown.len();
            w.u8(entity_header(did::D_QUERYABLE, &m.wire_expr, n))?;
            w.zint(u64::from(m.id))?;
            m.wire_expr.write(w)?;
            let mut ew = ExtWriter::new(n);
            if has_info {
                ew.z64(w, id::QUERYABLE_INFO, m.info.to_u64())?;
            }
            ew.unknown(w, &m.unknown)
        }
        Declaration::Token(m) => {
            let n = m.unknown.len();
            w.u8(entity_header(did::D_TOKEN, &m.wire_expr, n))?;
            w.zint(u64::from(m.id))?;
            m.wire_expr.write(w)?;
            ExtWriter::new(n).unknown(w, &m.unknown)
        }
        Declaration::UndeclareSubscriber(m) => {
            write_undeclare(w, did::U_SUBSCRIBER, m.id, &m.wire_expr, &m.unknown)
        }
        Declaration::UndeclareQueryable(m) => {
            write_undeclare(w, did::U_QUERYABLE, m.id, &m.wire_expr, &m.unknown)
        }
        Declaration::UndeclareToken(m) => {
            write_undeclare(w, did::U_TOKEN, m.id, &m.wire_expr, &m.unknown)
        }
        Declaration::Final(m) => {
            let n = m.unknown.len();
            w.u8(if n > 0 {
                did::D_FINAL | FLAG_Z
            } else {
                did::D_FINAL
            })?;
            ExtWriter::new(n).unknown(w, &m.unknown)
        }
    }
}
