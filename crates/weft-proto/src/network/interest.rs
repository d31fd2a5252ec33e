//! Interest: a request to be told about declarations (subscribers, queryables, tokens,
//! key expressions), now, in the future, or both.
//!
//! ```text
//!  7 6 5 4 3 2 1 0
//! +-+-+-+-+-+-+-+-+
//! |Z|Mod|INTEREST |   Mod: 0 Final, 1 Current, 2 Future, 3 CurrentFuture
//! +-+-+-+---------+
//! % id:z32        %
//! |A|M|N|R|T|Q|S|K|   options, only if Mod != Final
//! % key_scope:z16 %   only if Mod != Final and R
//! ~ key_suffix    ~   only if Mod != Final and R and N
//! ~ [int_exts]    ~   if Z: QoS, Timestamp, NodeId
//! ```

use super::common::{self, CommonExts};
use super::mid;
use crate::core::{Mapping, NetworkQos, Timestamp, WireExpr};
use crate::error::{DecodeError, EncodeError};
use crate::ext::{self, id, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

/// When the interest applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InterestMode {
    /// Cancels a previous interest with the same id.
    Final,
    /// Declarations that exist now.
    Current,
    /// Declarations made from now on.
    Future,
    /// Both.
    CurrentFuture,
}

impl InterestMode {
    const fn from_bits(b: u8) -> Self {
        match b & 0b11 {
            0b00 => Self::Final,
            0b01 => Self::Current,
            0b10 => Self::Future,
            _ => Self::CurrentFuture,
        }
    }

    const fn bits(self) -> u8 {
        match self {
            Self::Final => 0b00,
            Self::Current => 0b01,
            Self::Future => 0b10,
            Self::CurrentFuture => 0b11,
        }
    }

    /// The name used in the specification.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Final => "Final",
            Self::Current => "Current",
            Self::Future => "Future",
            Self::CurrentFuture => "CurrentFuture",
        }
    }
}

/// What an interest asks for: the K, S, Q, T and A bits of the options byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct InterestOptions(u8);

impl InterestOptions {
    /// K: the replier may declare key expressions to the sender.
    pub const KEYEXPRS: Self = Self(0x01);
    /// S: subscribers.
    pub const SUBSCRIBERS: Self = Self(0x02);
    /// Q: queryables.
    pub const QUERYABLES: Self = Self(0x04);
    /// T: liveliness tokens.
    pub const TOKENS: Self = Self(0x08);
    /// A: aggregate replies.
    pub const AGGREGATE: Self = Self(0x80);
    const R: u8 = 0x10;
    const N: u8 = 0x20;
    const M: u8 = 0x40;
    const MASK: u8 = 0x8F;

    /// The union of two option sets.
    #[must_use]
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether every option of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The bits (K, S, Q, T, A positions).
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// From the options byte, keeping only K, S, Q, T and A.
    pub const fn from_byte(b: u8) -> Self {
        Self(b & Self::MASK)
    }
}

/// A request to be told about declarations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interest<'a> {
    /// Chosen by the sender, unique per link and direction.
    pub id: u32,
    /// When it applies.
    pub mode: InterestMode,
    /// What it asks for (ignored for `Final`).
    pub options: InterestOptions,
    /// Restriction to declarations intersecting this key expression (R); `None` = all.
    pub wire_expr: Option<WireExpr<'a>>,
    /// Priority, congestion control, express.
    pub qos: NetworkQos,
    /// Timestamp of the network message.
    pub timestamp: Option<Timestamp>,
    /// Routing context between routers (0 = none).
    pub node_id: u16,
    /// Extensions not understood, kept for forwarding.
    pub unknown: Unknown<'a>,
}

impl<'a> Interest<'a> {
    /// An interest with default QoS.
    pub fn new(
        id: u32,
        mode: InterestMode,
        options: InterestOptions,
        wire_expr: Option<WireExpr<'a>>,
    ) -> Self {
        Self {
            id,
            mode,
            options,
            wire_expr,
            qos: NetworkQos::DEFAULT,
            timestamp: None,
            node_id: 0,
            unknown: Unknown::new(),
        }
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let mode = InterestMode::from_bits(header >> 5);
        let id_ = r.z32("interest id")?;
        let mut msg = Self::new(id_, mode, InterestOptions::default(), None);
        if mode != InterestMode::Final {
            let options = r.u8()?;
            msg.options = InterestOptions::from_byte(options);
            if options & InterestOptions::R != 0 {
                msg.wire_expr = Some(WireExpr::read(
                    r,
                    options & InterestOptions::N != 0,
                    Mapping::from_flag(options & InterestOptions::M != 0),
                )?);
            }
        }
        let mut common = CommonExts::default();
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            if e.id == id::NET_TS_STACK || !common.take(r, &e, at)? {
                ext::keep_unknown(r, "Interest", e, at, &mut msg.unknown)?;
            }
        }
        msg.qos = common.qos;
        msg.timestamp = common.timestamp;
        msg.node_id = common.node_id;
        Ok(msg)
    }

    /// Encodes the message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let n = common::count(self.qos, &self.timestamp, self.node_id, &None) + self.unknown.len();
        let mut header = mid::INTEREST | (self.mode.bits() << 5);
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        w.zint(u64::from(self.id))?;
        if self.mode != InterestMode::Final {
            let mut options = self.options.bits();
            if let Some(we) = &self.wire_expr {
                options |= InterestOptions::R;
                if we.has_suffix() {
                    options |= InterestOptions::N;
                }
                if we.mapping.is_sender() {
                    options |= InterestOptions::M;
                }
            }
            w.u8(options)?;
            if let Some(we) = &self.wire_expr {
                we.write(w)?;
            }
        }
        let mut ew = ExtWriter::new(n);
        common::write_head(w, &mut ew, self.qos, &self.timestamp)?;
        common::write_tail(w, &mut ew, self.node_id, &None)?;
        ew.unknown(w, &self.unknown)
    }
}
