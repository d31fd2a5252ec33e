//! Scout and Hello datagrams without sockets: what to send, what was received, and
//! whether a Scout deserves an answer.

use thiserror::Error;
use weft_proto::core::{WhatAmI, WhatAmIMatcher, ZenohId};
use weft_proto::scouting::{Hello as WireHello, Scout, ScoutingMessage};

/// The protocol version carried by Scout and Hello.
pub const VERSION: u8 = 0x09;

/// Largest scouting datagram read; longer ones are cut by the receive and then fail to
/// decode. A Hello with a few dozen locators fits.
pub const MAX_DATAGRAM: usize = 8192;

/// A node that answered a Scout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// The node's id.
    pub zid: ZenohId,
    /// Its role.
    pub whatami: WhatAmI,
    /// Where it can be reached, e.g. `tcp/10.0.0.1:7447`.
    pub locators: Vec<String>,
}

/// A scouting datagram that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DatagramError {
    /// Not a valid scouting message.
    #[error("not a scouting message: {0}")]
    Decode(#[from] weft_proto::error::DecodeError),
    /// A protocol version weft does not speak.
    #[error("scouting version {0:#04x} (weft speaks 0x09)")]
    Version(u8),
    /// A valid message of the other kind (a Hello where a Scout was expected...).
    #[error("unexpected {0}")]
    Unexpected(&'static str),
}

/// The Scout a node sends to find nodes of the roles in `what`.
pub fn scout_datagram(what: WhatAmIMatcher, zid: Option<ZenohId>) -> Vec<u8> {
    let msg = Scout {
        version: VERSION,
        what,
        zid,
        unknown: Vec::new(),
    };
    let mut out = Vec::with_capacity(20);
    // Encoding into a Vec only fails on out-of-bounds fields; a Scout has none.
    let _ = msg.encode(&mut out);
    out
}

/// The Hello a node answers with. Locators longer than the wire's 255 bytes are left out.
pub fn hello_datagram(zid: ZenohId, whatami: WhatAmI, locators: &[String]) -> Vec<u8> {
    let msg = WireHello {
        version: VERSION,
        whatami,
        zid,
        locators: locators
            .iter()
            .filter(|l| l.len() <= usize::from(u8::MAX))
            .map(String::as_str)
            .collect(),
        unknown: Vec::new(),
    };
    let mut out = Vec::with_capacity(64);
    let _ = msg.encode(&mut out);
    out
}

/// Decodes a datagram expected to hold a Scout; returns the roles it asks for.
pub fn read_scout(datagram: &[u8]) -> Result<WhatAmIMatcher, DatagramError> {
    match ScoutingMessage::decode(datagram)? {
        ScoutingMessage::Scout(s) if s.version == VERSION => Ok(s.what),
        ScoutingMessage::Scout(s) => Err(DatagramError::Version(s.version)),
        ScoutingMessage::Hello(_) => Err(DatagramError::Unexpected("Hello")),
    }
}

/// Decodes a datagram expected to hold a Hello.
pub fn read_hello(datagram: &[u8]) -> Result<Hello, DatagramError> {
    match ScoutingMessage::decode(datagram)? {
        ScoutingMessage::Hello(h) if h.version == VERSION => Ok(Hello {
            zid: h.zid,
            whatami: h.whatami,
            locators: h.locators.iter().map(|l| (*l).to_string()).collect(),
        }),
        ScoutingMessage::Hello(h) => Err(DatagramError::Version(h.version)),
        ScoutingMessage::Scout(_) => Err(DatagramError::Unexpected("Scout")),
    }
}

/// Whether a node of role `me` that answers Scouts (`listen`) answers one asking for
/// `what`.
pub const fn answers(what: WhatAmIMatcher, me: WhatAmI, listen: bool) -> bool {
    listen && what.matches(me)
}

/// Whether a node discovering `hello` opens a session to it: the role is one it
/// autoconnects to, it is not itself, and the Hello gives a locator. Like Zenoh's
/// default strategy (`always`), both of two peers discovering each other may connect;
/// the session keeps one of the two transports.
pub fn should_connect(me: ZenohId, autoconnect: WhatAmIMatcher, hello: &Hello) -> bool {
    hello.zid != me && autoconnect.matches(hello.whatami) && !hello.locators.is_empty()
}

/// Two peers that both connected to each other hold two transports; both keep the one
/// opened by the peer with the greater ZenohID. Whether a transport to `peer`, `opened`
/// by this node `me` (or accepted from `peer`), is that one.
pub const fn opened_by_greater(me: ZenohId, peer: ZenohId, opened: bool) -> bool {
    if opened {
        me.to_u128() > peer.to_u128()
    } else {
        peer.to_u128() > me.to_u128()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zid(v: u128) -> ZenohId {
        ZenohId::new(v).unwrap()
    }

    #[test]
    fn scout_bytes_match_the_captured_scout() {
        // Vector 07: `01 09 03` = Scout, version 9, what = router|peer, no zid.
        assert_eq!(
            scout_datagram(WhatAmIMatcher(0b011), None),
            [0x01, 0x09, 0x03]
        );
        assert_eq!(
            read_scout(&[0x01, 0x09, 0x03]).unwrap(),
            WhatAmIMatcher(0b011)
        );
    }

    #[test]
    fn hello_round_trips_and_drops_overlong_locators() {
        let long = format!("tcp/{}:1", "a".repeat(300));
        let d = hello_datagram(
            zid(0xabcd),
            WhatAmI::Router,
            &["tcp/10.0.0.1:7447".into(), long],
        );
        assert_eq!(d[0], 0x22, "Hello with the L flag");
        let h = read_hello(&d).unwrap();
        assert_eq!(h.zid, zid(0xabcd));
        assert_eq!(h.whatami, WhatAmI::Router);
        assert_eq!(h.locators, ["tcp/10.0.0.1:7447"]);
        assert!(read_hello(&hello_datagram(zid(1), WhatAmI::Peer, &[]))
            .unwrap()
            .locators
            .is_empty());
    }

    #[test]
    fn malformed_or_unexpected_datagrams_are_errors() {
        assert!(matches!(read_scout(&[]), Err(DatagramError::Decode(_))));
        assert!(matches!(
            read_scout(&[0x01, 0x09]),
            Err(DatagramError::Decode(_))
        ));
        assert!(matches!(
            read_scout(&[0x1f, 0x09, 0x03]),
            Err(DatagramError::Decode(_))
        ));
        assert!(matches!(
            read_scout(&[0x01, 0x08, 0x03]),
            Err(DatagramError::Version(8))
        ));
        assert!(matches!(
            read_scout(&[0x01, 0x09, 0x03, 0x00]),
            Err(DatagramError::Decode(_))
        ));
        let hello = hello_datagram(zid(5), WhatAmI::Peer, &["tcp/1.2.3.4:5".into()]);
        assert!(matches!(
            read_scout(&hello),
            Err(DatagramError::Unexpected("Hello"))
        ));
        assert!(matches!(
            read_hello(&[0x01, 0x09, 0x03]),
            Err(DatagramError::Unexpected("Scout"))
        ));
        // A locator count larger than what follows.
        assert!(matches!(
            read_hello(&[0x22, 0x09, 0x00, 0x07, 0xff, 0x01]),
            Err(DatagramError::Decode(_))
        ));
        // Reserved whatami code 0b11.
        assert!(read_hello(&[0x02, 0x09, 0x03, 0x07]).is_err());
    }

    #[test]
    fn only_matching_listening_roles_answer() {
        let router_or_peer = WhatAmIMatcher(0b011);
        assert!(answers(router_or_peer, WhatAmI::Router, true));
        assert!(answers(router_or_peer, WhatAmI::Peer, true));
        assert!(!answers(router_or_peer, WhatAmI::Client, true));
        assert!(!answers(router_or_peer, WhatAmI::Router, false));
        assert!(answers(WhatAmIMatcher(0b100), WhatAmI::Client, true));
        assert!(!answers(WhatAmIMatcher(0), WhatAmI::Router, true));
    }

    #[test]
    fn autoconnect_follows_roles() {
        let hello = |z, whatami| Hello {
            zid: zid(z),
            whatami,
            locators: vec!["tcp/10.0.0.1:7447".into()],
        };
        let both = WhatAmIMatcher(0b011);
        assert!(should_connect(zid(1), both, &hello(9, WhatAmI::Router)));
        assert!(should_connect(zid(9), both, &hello(1, WhatAmI::Peer)));
        assert!(should_connect(zid(1), both, &hello(9, WhatAmI::Peer)));
        // Never itself, never a role not asked for, never without a locator.
        assert!(!should_connect(zid(9), both, &hello(9, WhatAmI::Router)));
        assert!(!should_connect(
            zid(1),
            WhatAmIMatcher(0b001),
            &hello(2, WhatAmI::Peer)
        ));
        assert!(!should_connect(zid(1), both, &hello(2, WhatAmI::Client)));
        let mut bare = hello(2, WhatAmI::Router);
        bare.locators.clear();
        assert!(!should_connect(zid(1), both, &bare));
    }

    #[test]
    fn both_ends_keep_the_same_one_of_two_crossed_transports() {
        let (a, b) = (zid(0x20), zid(0x10));
        // T1 opened by a (accepted by b), T2 opened by b (accepted by a).
        let a_keeps_t1 = opened_by_greater(a, b, true);
        let b_keeps_t1 = opened_by_greater(b, a, false);
        let a_keeps_t2 = opened_by_greater(a, b, false);
        let b_keeps_t2 = opened_by_greater(b, a, true);
        assert!(a_keeps_t1 && b_keeps_t1);
        assert!(!a_keeps_t2 && !b_keeps_t2);
    }
}
