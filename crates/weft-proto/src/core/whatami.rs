//! The role of a node, and the role masks used by Scout.

use core::fmt;

use crate::error::{DecodeError, DecodeErrorKind};
use crate::reader::Reader;

/// The role of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WhatAmI {
    /// A router: routes for others, meshes with other routers.
    Router,
    /// A peer: talks directly to other peers.
    Peer,
    /// A client: connects to one router or peer.
    Client,
}

impl WhatAmI {
    /// The 2-bit code used by Init, Join and Hello (router 0, peer 1, client 2).
    pub const fn code(self) -> u8 {
        match self {
            Self::Router => 0b00,
            Self::Peer => 0b01,
            Self::Client => 0b10,
        }
    }

    /// Decodes the 2-bit code; `0b11` is reserved.
    pub const fn from_code(code: u8) -> Option<Self> {
        match code & 0b11 {
            0b00 => Some(Self::Router),
            0b01 => Some(Self::Peer),
            0b10 => Some(Self::Client),
            _ => None,
        }
    }

    /// The bit of this role in a [`WhatAmIMatcher`] (router 1, peer 2, client 4).
    pub const fn bit(self) -> u8 {
        match self {
            Self::Router => 0b001,
            Self::Peer => 0b010,
            Self::Client => 0b100,
        }
    }

    /// Decodes the one-byte bitmask form (used in link-state lists).
    pub const fn from_bit(bit: u8) -> Option<Self> {
        match bit {
            0b001 => Some(Self::Router),
            0b010 => Some(Self::Peer),
            0b100 => Some(Self::Client),
            _ => None,
        }
    }

    /// The role's name: `router`, `peer` or `client`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Router => "router",
            Self::Peer => "peer",
            Self::Client => "client",
        }
    }

    /// Reads the 2-bit code from the low bits of `flags` (read just before `r`'s position).
    pub(crate) fn from_flags(r: &Reader<'_>, flags: u8) -> Result<Self, DecodeError> {
        Self::from_code(flags).ok_or_else(|| {
            r.error_at(
                r.position().saturating_sub(1),
                DecodeErrorKind::InvalidValue {
                    field: "whatami",
                    value: u64::from(flags & 0b11),
                },
            )
        })
    }
}

impl fmt::Display for WhatAmI {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of roles (bitmask: router 1, peer 2, client 4), as carried by Scout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WhatAmIMatcher(pub u8);

impl WhatAmIMatcher {
    /// Whether `role` is in the set.
    pub const fn matches(self, role: WhatAmI) -> bool {
        self.0 & role.bit() != 0
    }

    /// The roles in the set.
    pub fn roles(self) -> impl Iterator<Item = WhatAmI> {
        [WhatAmI::Router, WhatAmI::Peer, WhatAmI::Client]
            .into_iter()
            .filter(move |r| self.matches(*r))
    }
}
