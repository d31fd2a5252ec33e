//! The kinds of values configuration keys take, each read and checked once
//! ([`Read`]): durations, counts, sizes, roles, endpoints, names.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use weft_proto::core::{WhatAmI, WhatAmIMatcher, ZenohId};

use super::gossip::{parse_strategy, AutoconnectStrategy};
use super::parse_matcher;
use super::setting::{Read, Refusal};
use crate::endpoint::{parse_buffer_size, Endpoint};
use crate::link::tls::PemSource;

/// `mode`: client, peer or router.
#[derive(Debug)]
pub(super) struct Mode(pub(super) WhatAmI);

impl Read for Mode {
    fn read(v: &Value) -> Result<Self, Refusal> {
        match v.as_str() {
            Some("client") => Ok(Self(WhatAmI::Client)),
            Some("peer") => Ok(Self(WhatAmI::Peer)),
            Some("router") => Ok(Self(WhatAmI::Router)),
            _ => Err(Refusal::invalid(v, "\"client\", \"peer\" or \"router\"")),
        }
    }
}

/// `id`: a ZenohID.
#[derive(Debug)]
pub(super) struct Id(pub(super) ZenohId);

impl Read for Id {
    fn read(v: &Value) -> Result<Self, Refusal> {
        v.as_str()
            .and_then(|s| s.parse::<ZenohId>().ok())
            .map(Self)
            .ok_or_else(|| Refusal::invalid(v, "1 to 32 hexadecimal digits, not all zero"))
    }
}

/// A positive number of milliseconds.
#[derive(Debug)]
pub(super) struct Millis(pub(super) Duration);

impl Read for Millis {
    fn read(v: &Value) -> Result<Self, Refusal> {
        v.as_u64()
            .filter(|ms| *ms > 0)
            .map(|ms| Self(Duration::from_millis(ms)))
            .ok_or_else(|| Refusal::invalid(v, "a positive number of milliseconds"))
    }
}

/// A whole number of microseconds, zero included.
#[derive(Debug)]
pub(super) struct Micros(pub(super) Duration);

impl Read for Micros {
    fn read(v: &Value) -> Result<Self, Refusal> {
        v.as_u64()
            .map(|us| Self(Duration::from_micros(us)))
            .ok_or_else(|| Refusal::invalid(v, "a whole number of microseconds"))
    }
}

/// A positive number of microseconds.
#[derive(Debug)]
pub(super) struct PositiveMicros(pub(super) Duration);

impl Read for PositiveMicros {
    fn read(v: &Value) -> Result<Self, Refusal> {
        v.as_u64()
            .filter(|us| *us > 0)
            .map(|us| Self(Duration::from_micros(us)))
            .ok_or_else(|| Refusal::invalid(v, "a positive number of microseconds"))
    }
}

/// A positive whole number (a count, or a size in bytes).
#[derive(Debug)]
pub(super) struct Count(pub(super) usize);

impl Read for Count {
    fn read(v: &Value) -> Result<Self, Refusal> {
        v.as_u64()
            .filter(|n| *n > 0)
            .and_then(|n| usize::try_from(n).ok())
            .map(Self)
            .ok_or_else(|| Refusal::invalid(v, "a positive whole number"))
    }
}

/// A kernel buffer size in bytes.
#[derive(Debug)]
pub(super) struct BufferSize(pub(super) usize);

impl Read for BufferSize {
    fn read(v: &Value) -> Result<Self, Refusal> {
        v.as_u64()
            .and_then(|n| parse_buffer_size(&n.to_string()))
            .map(Self)
            .ok_or_else(|| Refusal::invalid(v, "a buffer size in bytes, 4096..=1073741824"))
    }
}

/// `transport.link.tx.batch_size`.
#[derive(Debug)]
pub(super) struct BatchSize(pub(super) u16);

impl Read for BatchSize {
    fn read(v: &Value) -> Result<Self, Refusal> {
        v.as_u64()
            .filter(|b| (64..=65535).contains(b))
            .and_then(|b| u16::try_from(b).ok())
            .map(Self)
            .ok_or_else(|| Refusal::invalid(v, "a batch size in 64..=65535"))
    }
}

/// True or false.
#[derive(Debug)]
pub(super) struct Flag(pub(super) bool);

impl Read for Flag {
    fn read(v: &Value) -> Result<Self, Refusal> {
        v.as_bool()
            .map(Self)
            .ok_or_else(|| Refusal::invalid(v, "true or false"))
    }
}

/// `connect.timeout_ms`: milliseconds, 0 or -1 (no limit).
#[derive(Debug)]
pub(super) struct TimeoutMs(pub(super) i64);

/// A switch weft has only in its off position (`false`): asking for it on is refused,
/// naming what weft does not do.
#[derive(Debug)]
pub(super) struct Off;

impl Read for Off {
    fn read(v: &Value) -> Result<Self, Refusal> {
        match v.as_bool() {
            Some(false) => Ok(Self),
            _ => Err(Refusal::invalid(
                v,
                "false (weft does not compress multicast batches)",
            )),
        }
    }
}

impl Read for TimeoutMs {
    fn read(v: &Value) -> Result<Self, Refusal> {
        v.as_i64()
            .filter(|t| *t >= -1)
            .map(Self)
            .ok_or_else(|| Refusal::invalid(v, "milliseconds, 0 or -1 (no limit)"))
    }
}

/// A list of endpoints; null is none.
#[derive(Debug)]
pub(super) struct Endpoints(pub(super) Vec<Endpoint>);

impl Read for Endpoints {
    fn read(v: &Value) -> Result<Self, Refusal> {
        if v.is_null() {
            return Ok(Self(Vec::new()));
        }
        let list = v
            .as_array()
            .ok_or_else(|| Refusal::invalid(v, "a list of endpoints"))?;
        list.iter()
            .map(|e| {
                e.as_str()
                    .ok_or_else(|| Refusal::invalid(e, "an endpoint string"))?
                    .parse::<Endpoint>()
                    .map_err(|err| Refusal::Endpoint {
                        reason: err.to_string(),
                    })
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }
}

/// `scouting.multicast.address`: a multicast group and port.
#[derive(Debug)]
pub(super) struct MulticastAddress(pub(super) SocketAddr);

impl Read for MulticastAddress {
    fn read(v: &Value) -> Result<Self, Refusal> {
        v.as_str()
            .and_then(|s| s.parse::<SocketAddr>().ok())
            .filter(|a| a.ip().is_multicast())
            .map(Self)
            .ok_or_else(|| {
                Refusal::invalid(v, "a multicast group and port, e.g. \"224.0.0.224:7446\"")
            })
    }
}

/// `scouting.multicast.interface`: an interface name, `None` for `"auto"`.
#[derive(Debug)]
pub(super) struct Interface(pub(super) Option<String>);

impl Read for Interface {
    fn read(v: &Value) -> Result<Self, Refusal> {
        match v.as_str() {
            Some("auto") => Ok(Self(None)),
            Some(name) if !name.is_empty() => Ok(Self(Some(name.to_string()))),
            _ => Err(Refusal::invalid(v, "\"auto\" or an interface name")),
        }
    }
}

/// `scouting.multicast.ttl`.
#[derive(Debug)]
pub(super) struct Ttl(pub(super) u32);

impl Read for Ttl {
    fn read(v: &Value) -> Result<Self, Refusal> {
        v.as_u64()
            .filter(|t| (1..=255).contains(t))
            .and_then(|t| u32::try_from(t).ok())
            .map(Self)
            .ok_or_else(|| Refusal::invalid(v, "a TTL in 1..=255"))
    }
}

/// A set of roles (`"router|peer"`, `["router", "peer"]`).
#[derive(Debug)]
pub(super) struct Roles(pub(super) WhatAmIMatcher);

impl Read for Roles {
    fn read(v: &Value) -> Result<Self, Refusal> {
        parse_matcher(v).map(Self).ok_or_else(|| {
            Refusal::invalid(v, "roles such as \"router|peer\" or [\"router\", \"peer\"]")
        })
    }
}

/// `scouting.gossip.target`: roles among router and peer.
#[derive(Debug)]
pub(super) struct GossipTarget(pub(super) WhatAmIMatcher);

impl Read for GossipTarget {
    fn read(v: &Value) -> Result<Self, Refusal> {
        parse_matcher(v)
            .filter(|m| !m.matches(WhatAmI::Client))
            .map(Self)
            .ok_or_else(|| Refusal::invalid(v, "roles among \"router\" and \"peer\""))
    }
}

/// `scouting.gossip.autoconnect_strategy`: one strategy, or one per role connected to.
#[derive(Debug)]
pub(super) struct Strategy(pub(super) [AutoconnectStrategy; 3]);

impl Read for Strategy {
    fn read(v: &Value) -> Result<Self, Refusal> {
        parse_strategy(v).map(Self).ok_or_else(|| {
            Refusal::invalid(
                v,
                "\"always\", \"greater-zid\", or { to_router, to_peer, to_client }",
            )
        })
    }
}

/// A non-empty string.
#[derive(Debug)]
pub(super) struct Text(pub(super) String);

impl Read for Text {
    fn read(v: &Value) -> Result<Self, Refusal> {
        v.as_str()
            .filter(|s| !s.is_empty())
            .map(|s| Self(s.to_owned()))
            .ok_or_else(|| Refusal::invalid(v, "a non-empty string, or null"))
    }
}

/// A TLS certificate or key (`transport.link.tls`): a path, or with `BASE64` the PEM
/// document in base64; an empty string sets nothing. A `SECRET` one (a private key) is
/// never shown in an error.
#[derive(Debug)]
pub(super) struct Pem<const BASE64: bool, const SECRET: bool>(pub(super) Option<PemSource>);

impl<const BASE64: bool, const SECRET: bool> Read for Pem<BASE64, SECRET> {
    fn read(v: &Value) -> Result<Self, Refusal> {
        let refuse = |expected: &str| {
            if SECRET {
                Refusal::Invalid {
                    value: "(secret)".into(),
                    expected: expected.into(),
                }
            } else {
                Refusal::invalid(v, expected)
            }
        };
        let text = v
            .as_str()
            .ok_or_else(|| refuse("a string (a path, or base64 for *_base64)"))?;
        if text.is_empty() {
            return Ok(Self(None));
        }
        if BASE64 {
            PemSource::from_base64(text)
                .map(|pem| Self(Some(pem)))
                .ok_or_else(|| refuse("base64 of a PEM document"))
        } else {
            Ok(Self(Some(PemSource::File(text.into()))))
        }
    }
}

/// A certificate's path.
pub(super) type CertificateFile = Pem<false, false>;
/// A certificate, in base64.
pub(super) type CertificateBase64 = Pem<true, false>;
/// A private key's path.
pub(super) type KeyFile = Pem<false, true>;
/// A private key, in base64.
pub(super) type KeyBase64 = Pem<true, true>;
