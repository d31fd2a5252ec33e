//! Link-state lists: the body of network OAM messages with id 1, exchanged between
//! routers (and gossiping peers) to build the routing graph.
//!
//! ```text
//! %count%                          then, per entry:
//! %options%   P 0x01 zid, W 0x02 whatami, L 0x04 locators, H 0x08 weights, G 0x10 gateway
//! %psid%      the sender's local index of the node (each router calls itself 0)
//! %sn%        the node's link-state sequence number
//! ~ zid ~     if P: <u8;z8> little-endian ZenohID
//! |whatami|   if W: one byte, bitmask form (router 1, peer 2, client 4)
//! ~ locs  ~   if L: %count% x <utf8;z8>
//! %n_links%   then n x %psid%
//! % weight %  if H: n x z16, one per link
//! ```

use alloc::vec::Vec;

use crate::core::{WhatAmI, ZenohId};
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::reader::Reader;
use crate::writer::Writer;

const OPT_ZID: u64 = 0x01;
const OPT_WHATAMI: u64 = 0x02;
const OPT_LOCATORS: u64 = 0x04;
const OPT_WEIGHTS: u64 = 0x08;
const OPT_GATEWAY: u64 = 0x10;

/// One node of the routing graph, as its neighbour describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkState<'a> {
    /// The sender's local index of the node.
    pub psid: u64,
    /// The node's link-state sequence number.
    pub sn: u64,
    /// The node's id.
    pub zid: Option<ZenohId>,
    /// The node's role.
    pub whatami: Option<WhatAmI>,
    /// Where the node can be reached.
    pub locators: Option<Vec<&'a str>>,
    /// Local indexes of the nodes it is linked to.
    pub links: Vec<u64>,
    /// One weight per link.
    pub weights: Option<Vec<u16>>,
    /// The node is a gateway (regions).
    pub gateway: bool,
}

/// Decodes a link-state list (the whole OAM body).
pub fn decode_list(body: &[u8]) -> Result<Vec<LinkState<'_>>, DecodeError> {
    let mut r = Reader::new(body);
    let count = r.zint()?;
    let mut out = Vec::new();
    for _ in 0..count {
        out.push(read_entry(&mut r)?);
    }
    crate::zenoh::expect_end(&r, "link-state list")?;
    Ok(out)
}

fn read_entry<'a>(r: &mut Reader<'a>) -> Result<LinkState<'a>, DecodeError> {
    let options = r.zint()?;
    let psid = r.zint()?;
    let sn = r.zint()?;
    let zid = if options & OPT_ZID != 0 {
        let len = r.zint_max(16, "ZenohID length")? as usize;
        Some(ZenohId::read(r, len)?)
    } else {
        None
    };
    let whatami = if options & OPT_WHATAMI != 0 {
        let at = r.position();
        let b = r.u8()?;
        Some(WhatAmI::from_bit(b).ok_or_else(|| {
            r.error_at(
                at,
                DecodeErrorKind::InvalidValue {
                    field: "whatami",
                    value: u64::from(b),
                },
            )
        })?)
    } else {
        None
    };
    let locators = if options & OPT_LOCATORS != 0 {
        let n = r.zint()?;
        let mut locs = Vec::new();
        for _ in 0..n {
            locs.push(r.zstr(u64::from(u8::MAX), "locator")?);
        }
        Some(locs)
    } else {
        None
    };
    let n_links = r.zint()?;
    let mut links = Vec::new();
    for _ in 0..n_links {
        links.push(r.zint()?);
    }
    let weights = if options & OPT_WEIGHTS != 0 {
        let mut w = Vec::new();
        for _ in 0..n_links {
            w.push(r.z16("link weight")?);
        }
        Some(w)
    } else {
        None
    };
    Ok(LinkState {
        psid,
        sn,
        zid,
        whatami,
        locators,
        links,
        weights,
        gateway: options & OPT_GATEWAY != 0,
    })
}

/// Encodes a link-state list (the whole OAM body).
pub fn encode_list<W: Writer>(list: &[LinkState<'_>], w: &mut W) -> Result<(), EncodeError> {
    w.zint(list.len() as u64)?;
    for ls in list {
        let mut options = 0;
        if ls.zid.is_some() {
            options |= OPT_ZID;
        }
        if ls.whatami.is_some() {
            options |= OPT_WHATAMI;
        }
        if ls.locators.is_some() {
            options |= OPT_LOCATORS;
        }
        if ls.weights.is_some() {
            options |= OPT_WEIGHTS;
        }
        if ls.gateway {
            options |= OPT_GATEWAY;
        }
        w.zint(options)?;
        w.zint(ls.psid)?;
        w.zint(ls.sn)?;
        if let Some(zid) = ls.zid {
            w.u8(zid.size() as u8)?;
            zid.write(w)?;
        }
        if let Some(wai) = ls.whatami {
            w.u8(wai.bit())?;
        }
        if let Some(locs) = &ls.locators {
            w.zint(locs.len() as u64)?;
            for l in locs {
                if l.len() > usize::from(u8::MAX) {
                    return Err(EncodeError::OutOfBounds {
                        field: "locator length",
                        value: l.len() as u64,
                        bound: u64::from(u8::MAX),
                    });
                }
                w.zbytes(l.as_bytes())?;
            }
        }
        w.zint(ls.links.len() as u64)?;
        for l in &ls.links {
            w.zint(*l)?;
        }
        if let Some(weights) = &ls.weights {
            if weights.len() != ls.links.len() {
                return Err(EncodeError::Invalid {
                    field: "link weights (one per link)",
                });
            }
            for wt in weights {
                w.zint(u64::from(*wt))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_captured_two_router_list() {
        // Section 21.8 of the specification: two routers, A linked to B.
        let mut body = alloc::vec![0x02, 0x03, 0x00, 0x02, 0x10];
        body.extend_from_slice(&[0xAA; 16]);
        body.extend_from_slice(&[0x01, 0x01, 0x01, 0x03, 0x01, 0x00, 0x10]);
        body.extend_from_slice(&[0xBB; 16]);
        body.extend_from_slice(&[0x01, 0x00]);
        let list = decode_list(&body).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].psid, 0);
        assert_eq!(list[0].sn, 2);
        assert_eq!(list[0].whatami, Some(WhatAmI::Router));
        assert_eq!(list[0].links, [1]);
        assert_eq!(list[1].psid, 1);
        assert!(list[1].links.is_empty());
        let mut out = alloc::vec::Vec::new();
        encode_list(&list, &mut out).unwrap();
        assert_eq!(out, body);
    }

    #[test]
    fn locators_over_255_bytes_are_refused_by_the_encoder_as_by_the_decoder() {
        let long = "l".repeat(256);
        let entry = LinkState {
            psid: 0,
            sn: 1,
            zid: None,
            whatami: None,
            locators: Some(alloc::vec![long.as_str()]),
            links: Vec::new(),
            weights: None,
            gateway: false,
        };
        let mut out = Vec::new();
        assert!(matches!(
            encode_list(core::slice::from_ref(&entry), &mut out),
            Err(EncodeError::OutOfBounds { value: 256, .. })
        ));
        let at_bound = "l".repeat(255);
        let entry = LinkState {
            locators: Some(alloc::vec![at_bound.as_str()]),
            ..entry
        };
        let mut out = Vec::new();
        encode_list(core::slice::from_ref(&entry), &mut out).unwrap();
        assert_eq!(decode_list(&out).unwrap(), [entry]);
    }

    #[test]
    fn huge_counts_fail_without_allocating_for_them() {
        let body = [0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert!(decode_list(&body).is_err());
    }
}
