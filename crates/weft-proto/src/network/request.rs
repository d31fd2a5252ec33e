//! Request: a query routed towards queryables.
//!
//! ```text
//! |Z|M|N| REQUEST |   same N/M/Z flags as Push
//! %request_id:z32 %
//! % key_scope:z16 %
//! ~ key_suffix    ~   if N
//! ~  [req_exts]   ~   if Z: QoS, Timestamp, Target 0x34, Budget 0x25, Timeout 0x26,
//! ~ RequestBody   ~        NodeId, TsStack; then one Query
//! ```

use super::common::{self, CommonExts, TsStack};
use super::mid;
use super::push::{FLAG_M, FLAG_N};
use crate::core::{Mapping, NetworkQos, Timestamp, WireExpr};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::ext::{self, id, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;
use crate::zenoh::Query;

/// Which queryables a query goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum QueryTarget {
    /// The best-matching queryables (the default, omitted from the wire).
    #[default]
    BestMatching,
    /// Every matching queryable.
    All,
    /// Every matching queryable that declared itself complete.
    AllComplete,
}

impl QueryTarget {
    /// From the wire value.
    pub const fn from_u64(v: u64) -> Option<Self> {
        match v {
            0 => Some(Self::BestMatching),
            1 => Some(Self::All),
            2 => Some(Self::AllComplete),
            _ => None,
        }
    }

    /// The wire value.
    pub const fn to_u64(self) -> u64 {
        match self {
            Self::BestMatching => 0,
            Self::All => 1,
            Self::AllComplete => 2,
        }
    }

    /// The name used in Zenoh's API.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::BestMatching => "best_matching",
            Self::All => "all",
            Self::AllComplete => "all_complete",
        }
    }
}

/// A query routed towards queryables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    /// Chosen by the sender; unique among its outstanding requests on the link.
    pub id: u32,
    /// The queried key expression.
    pub wire_expr: WireExpr<'a>,
    /// Priority, congestion control, express.
    pub qos: NetworkQos,
    /// Timestamp of the network message.
    pub timestamp: Option<Timestamp>,
    /// Which queryables to reach.
    pub target: QueryTarget,
    /// Maximum number of replies wanted.
    pub budget: Option<u32>,
    /// How long the querier waits, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Routing context between routers (0 = none).
    pub node_id: u16,
    /// Timestamp-stack instrumentation.
    pub ts_stack: Option<TsStack<'a>>,
    /// Extensions not understood, kept for forwarding.
    pub unknown: Unknown<'a>,
    /// The query.
    pub query: Query<'a>,
}

impl<'a> Request<'a> {
    /// A request `id` for `query` on `wire_expr` with default options.
    pub fn new(id: u32, wire_expr: WireExpr<'a>, query: Query<'a>) -> Self {
        Self {
            id,
            wire_expr,
            qos: NetworkQos::DEFAULT,
            timestamp: None,
            target: QueryTarget::BestMatching,
            budget: None,
            timeout_ms: None,
            node_id: 0,
            ts_stack: None,
            unknown: Unknown::new(),
            query,
        }
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let id_ = r.z32("request id")?;
        let wire_expr = WireExpr::read(
            r,
            header & FLAG_N != 0,
            Mapping::from_flag(header & FLAG_M != 0),
        )?;
        let mut req = Self::new(id_, wire_expr, Query::default());
        let mut common = CommonExts::default();
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            if common.take(r, &e, at)? {
                continue;
            }
            match e.id {
                id::REQUEST_TARGET => {
                    let v = ext::z64(&e);
                    req.target = QueryTarget::from_u64(v).ok_or_else(|| {
                        r.error_at(
                            at,
                            DecodeErrorKind::InvalidValue {
                                field: "query target",
                                value: v,
                            },
                        )
                    })?;
                }
                id::REQUEST_BUDGET => {
                    let v = ext::z64(&e);
                    if v > u64::from(u32::MAX) {
                        return Err(ext::malformed(r, at, "Budget", "value exceeds 32 bits"));
                    }
                    req.budget = Some(v as u32);
                }
                id::REQUEST_TIMEOUT => req.timeout_ms = Some(ext::z64(&e)),
                _ => ext::keep_unknown(r, "Request", e, at, &mut req.unknown)?,
            }
        }
        req.qos = common.qos;
        req.timestamp = common.timestamp;
        req.node_id = common.node_id;
        req.ts_stack = common.ts_stack;
        req.query = Query::decode(r)?;
        Ok(req)
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = common::count(self.qos, &self.timestamp, self.node_id, &self.ts_stack)
            + usize::from(self.target != QueryTarget::BestMatching)
            + usize::from(self.budget.is_some())
            + usize::from(self.timeout_ms.is_some())
            + self.unknown.len();
        let mut header = mid::REQUEST;
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
        w.zint(u64::from(self.id))?;
        self.wire_expr.write(w)?;
        let mut ew = ExtWriter::new(n);
        common::write_head(w, &mut ew, self.qos, &self.timestamp)?;
        if self.target != QueryTarget::BestMatching {
            ew.z64(w, id::REQUEST_TARGET, self.target.to_u64())?;
        }
        if let Some(b) = self.budget {
            ew.z64(w, id::REQUEST_BUDGET, u64::from(b))?;
        }
        if let Some(t) = self.timeout_ms {
            ew.z64(w, id::REQUEST_TIMEOUT, t)?;
        }
        common::write_tail(w, &mut ew, self.node_id, &self.ts_stack)?;
        ew.unknown(w, &self.unknown)?;
        self.query.encode(w)
    }
}
