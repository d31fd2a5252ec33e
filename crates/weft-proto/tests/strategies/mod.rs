//! Proptest strategies generating arbitrary *valid* weft-proto messages of every kind.
//!
//! Every value generated is one the encoder represents exactly, so that
//! `decode(encode(m)) == m` must hold. The canonical-form rules this relies on:
//!
//! - unknown extensions are never mandatory, their ENC bits match their body, and their
//!   identity (ENC|M|ID) differs from every extension the enclosing message knows
//!   (a known identity would be decoded into its typed field instead);
//! - `DeclareKeyExpr` has no M flag: its wire expression always uses `Mapping::Receiver`;
//! - an `Interest` in mode `Final` has no options byte: options are empty and there is no
//!   wire expression;
//! - the network QoS byte, the Frame/Fragment priority, `QueryTarget::BestMatching`,
//!   `Consolidation::Auto`, the default `Encoding`, `QueryableInfo::default()`, node id 0,
//!   an empty key suffix (no N flag), empty query parameters (no P flag) and an empty
//!   Hello locator list (no L flag) are omitted from the wire and decode to the same
//!   defaults, so generating them is fine;
//! - the Init/Join resolution byte keeps only its low 6 bits (generated in `0..=0x3F`);
//!   the S flag is derived (set iff resolution or batch size differ from the defaults);
//! - Open/Join leases travel in seconds (T flag) exactly when `lease_ms % 1000 == 0`,
//!   which represents every `u64` exactly.
//!
//! Borrowed fields (`&'a [u8]`, `&'a str`) are backed by leaked allocations, so generated
//! messages are `'static` like the ones decoded from a `'static` buffer. A full test run
//! leaks a few megabytes at most.

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;

use weft_proto::core::{
    Encoding, Mapping, NetworkQos, Priority, Reliability, Resolution, Timestamp, WhatAmI,
    WhatAmIMatcher, WireExpr, ZenohId,
};
use weft_proto::ext::{ExtBody, Extension};
use weft_proto::network::linkstate::LinkState;
use weft_proto::network::{
    Declaration, Declare, DeclareFinal, DeclareKeyExpr, DeclareQueryable, DeclareSubscriber,
    DeclareToken, EntityGlobalId, Interest, InterestMode, InterestOptions, NetworkMessage,
    NetworkOam, Push, QueryTarget, QueryableInfo, Request, Response, ResponseBody, ResponseFinal,
    TsStack, UndeclareKeyExpr, UndeclareQueryable, UndeclareSubscriber, UndeclareToken,
};
use weft_proto::scouting::{Hello, Scout, ScoutingMessage};
use weft_proto::transport::{
    Close, CloseReason, Fragment, FragmentHeader, Frame, FrameHeader, Init, Join, KeepAlive, Open,
    PrioritySn, QosLink, TransportMessage, TransportOam, DEFAULT_BATCH_SIZE,
    DEFAULT_MULTICAST_BATCH_SIZE,
};
use weft_proto::writer::Writer;
use weft_proto::zenoh::{
    Consolidation, Del, Err, PushBody, Put, Query, QueryBody, Reply, SourceInfo,
};

// ---------------------------------------------------------------------------------------
// Known extension identities (header without Z), per message: unknown extensions avoid them.

/// Init.
pub(crate) const KNOWN_INIT: &[u8] = &[0x01, 0x21, 0x42, 0x43, 0x44, 0x05, 0x06, 0x27, 0x48];
/// Open.
pub(crate) const KNOWN_OPEN: &[u8] = &[0x01, 0x42, 0x43, 0x44, 0x04, 0x05, 0x06, 0x27];
/// Frame and transport OAM.
pub(crate) const KNOWN_FRAME: &[u8] = &[0x31];
/// Fragment.
pub(crate) const KNOWN_FRAGMENT: &[u8] = &[0x31, 0x02, 0x03];
/// Join.
pub(crate) const KNOWN_JOIN: &[u8] = &[0x51, 0x52, 0x27];
/// Push.
pub(crate) const KNOWN_PUSH: &[u8] = &[0x21, 0x42, 0x33, 0x47];
/// Request.
pub(crate) const KNOWN_REQUEST: &[u8] = &[0x21, 0x42, 0x33, 0x47, 0x34, 0x25, 0x26];
/// Response.
pub(crate) const KNOWN_RESPONSE: &[u8] = &[0x21, 0x42, 0x43, 0x47];
/// ResponseFinal and network OAM (TsStack 0x47 is kept as an unknown extension there).
pub(crate) const KNOWN_QOS_TS: &[u8] = &[0x21, 0x42];
/// Interest and Declare (TsStack 0x47 is kept as an unknown extension there).
pub(crate) const KNOWN_QOS_TS_NODE: &[u8] = &[0x21, 0x42, 0x33];
/// DeclareQueryable.
pub(crate) const KNOWN_QUERYABLE: &[u8] = &[0x21];
/// Undeclarations.
pub(crate) const KNOWN_UNDECLARE: &[u8] = &[0x5F];
/// Put.
pub(crate) const KNOWN_PUT: &[u8] = &[0x41, 0x12, 0x43];
/// Del.
pub(crate) const KNOWN_DEL: &[u8] = &[0x41, 0x42];
/// Query.
pub(crate) const KNOWN_QUERY: &[u8] = &[0x41, 0x43, 0x45];
/// Err.
pub(crate) const KNOWN_ERR: &[u8] = &[0x41, 0x12];
/// Messages that know no extension.
pub(crate) const KNOWN_NONE: &[u8] = &[];

// ---------------------------------------------------------------------------------------
// Primitives.

/// Gives `v` the `'static` lifetime decoded messages borrow with.
pub(crate) fn leak_bytes(v: Vec<u8>) -> &'static [u8] {
    Box::leak(v.into_boxed_slice())
}

/// Gives `s` the `'static` lifetime decoded messages borrow with.
pub(crate) fn leak_str(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// Values on both sides of every zint length boundary (7, 14, ..., 56 bits), plus the ends.
fn zint_edges() -> Vec<u64> {
    let mut v = vec![0, 1, u64::MAX - 1, u64::MAX];
    for k in 1..=9u32 {
        if 7 * k < 64 {
            v.push((1u64 << (7 * k)) - 1);
            v.push(1u64 << (7 * k));
        }
    }
    v.push(1 << 63);
    v
}

/// Any `u64`, with zint edges often.
pub(crate) fn u64e() -> impl Strategy<Value = u64> {
    prop_oneof![3 => any::<u64>(), 2 => select(zint_edges()), 1 => 0u64..300]
}

/// Any `u32`, with zint edges and `u32::MAX` often.
pub(crate) fn u32e() -> impl Strategy<Value = u32> {
    let edges: Vec<u32> = zint_edges()
        .into_iter()
        .filter_map(|v| u32::try_from(v).ok())
        .chain([u32::MAX - 1, u32::MAX])
        .collect();
    prop_oneof![3 => any::<u32>(), 2 => select(edges), 1 => 0u32..300]
}

/// Any `u16`, with zint edges and `u16::MAX` often.
pub(crate) fn u16e() -> impl Strategy<Value = u16> {
    let edges: Vec<u16> = zint_edges()
        .into_iter()
        .filter_map(|v| u16::try_from(v).ok())
        .chain([u16::MAX - 1, u16::MAX])
        .collect();
    prop_oneof![3 => any::<u16>(), 2 => select(edges), 1 => 0u16..300]
}

/// A byte sequence: usually short, sometimes across the 1-byte/2-byte length boundary.
pub(crate) fn bytes() -> impl Strategy<Value = &'static [u8]> {
    prop_oneof![
        6 => vec(any::<u8>(), 0..8),
        1 => vec(any::<u8>(), 125..131),
    ]
    .prop_map(leak_bytes)
}

/// UTF-8 text: key-expression-like, arbitrary Unicode, or long enough for a 2-byte length.
pub(crate) fn text() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        4 => "[a-z0-9*$/_-]{0,12}",
        2 => ".{0,6}",
        1 => "[a-z/]{125,131}",
    ]
    .prop_map(leak_str)
}

/// A ZenohID of 1 to 16 significant bytes.
pub(crate) fn zid() -> impl Strategy<Value = ZenohId> {
    (1usize..=16, any::<u128>()).prop_map(|(size, v)| {
        let top = 8 * (size as u32 - 1);
        let mask = if size == 16 {
            u128::MAX
        } else {
            (1u128 << (8 * size)) - 1
        };
        let mut v = v & mask;
        if v >> top == 0 {
            v |= 1u128 << top;
        }
        let id = ZenohId::new(v).expect("non-zero by construction");
        assert_eq!(id.size(), size);
        id
    })
}

/// A role.
pub(crate) fn whatami() -> impl Strategy<Value = WhatAmI> {
    select(&[WhatAmI::Router, WhatAmI::Peer, WhatAmI::Client][..])
}

/// One of the eight priorities.
pub(crate) fn priority() -> impl Strategy<Value = Priority> {
    select(&Priority::ALL[..])
}

/// A reliability.
pub(crate) fn reliability() -> impl Strategy<Value = Reliability> {
    any::<bool>().prop_map(Reliability::from_flag)
}

/// A timestamp.
pub(crate) fn timestamp() -> BoxedStrategy<Timestamp> {
    (u64e(), zid())
        .prop_map(|(time, id)| Timestamp { time, id })
        .boxed()
}

/// An encoding, with or without a schema (up to the 255-byte bound).
pub(crate) fn encoding() -> BoxedStrategy<Encoding<'static>> {
    let schema = prop_oneof![
        5 => vec(any::<u8>(), 0..8),
        1 => vec(any::<u8>(), 255..=255),
    ]
    .prop_map(leak_bytes);
    (u16e(), option::of(schema))
        .prop_map(|(id, schema)| Encoding { id, schema })
        .boxed()
}

/// A wire expression with any mapping.
pub(crate) fn wire_expr() -> BoxedStrategy<WireExpr<'static>> {
    (u16e(), text(), any::<bool>())
        .prop_map(|(scope, suffix, m)| WireExpr {
            scope,
            suffix,
            mapping: Mapping::from_flag(m),
        })
        .boxed()
}

/// A network QoS byte (any of the 256 values; the default one often).
pub(crate) fn net_qos() -> impl Strategy<Value = NetworkQos> {
    prop_oneof![
        1 => Just(NetworkQos::DEFAULT),
        3 => any::<u8>().prop_map(NetworkQos::from_byte),
    ]
}

/// A valid TsStack extension body.
pub(crate) fn ts_stack() -> BoxedStrategy<TsStack<'static>> {
    (1u8..=255, vec((any::<u8>(), bytes()), 0..4))
        .prop_map(|(conf, entries)| {
            let mut raw = vec![conf];
            raw.zint(entries.len() as u64).unwrap();
            for (flags, ts) in entries {
                raw.push(flags);
                raw.zbytes(ts).unwrap();
            }
            TsStack::parse(leak_bytes(raw)).expect("valid by construction")
        })
        .boxed()
}

/// A source-info extension value.
pub(crate) fn source_info() -> BoxedStrategy<SourceInfo> {
    (zid(), u32e(), u32e())
        .prop_map(|(zid, eid, sn)| SourceInfo { zid, eid, sn })
        .boxed()
}

/// A responder-id extension value.
pub(crate) fn entity_global_id() -> BoxedStrategy<EntityGlobalId> {
    (zid(), u32e())
        .prop_map(|(zid, eid)| EntityGlobalId { zid, eid })
        .boxed()
}

/// A unit, z64 or zbuf value.
pub(crate) fn ext_body() -> impl Strategy<Value = ExtBody<'static>> {
    prop_oneof![
        Just(ExtBody::Unit),
        u64e().prop_map(ExtBody::Z64),
        bytes().prop_map(ExtBody::ZBuf),
    ]
}

/// One non-mandatory extension unknown to a message that knows `known`.
pub(crate) fn unknown_ext(known: &'static [u8]) -> impl Strategy<Value = Extension<'static>> {
    (0u8..3, 0u8..16, u64e(), bytes())
        .prop_map(|(enc, num, z, b)| {
            let id = (enc << 5) | num;
            let body = match enc {
                0 => ExtBody::Unit,
                1 => ExtBody::Z64(z),
                _ => ExtBody::ZBuf(b),
            };
            Extension { id, body }
        })
        .prop_filter("identity of a known extension", move |e| {
            !known.contains(&e.id)
        })
}

/// Zero to two unknown extensions.
pub(crate) fn unknowns(known: &'static [u8]) -> BoxedStrategy<Vec<Extension<'static>>> {
    prop_oneof![2 => Just(Vec::new()), 1 => vec(unknown_ext(known), 1..3)].boxed()
}

fn opt<T: std::fmt::Debug>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Option<T>> {
    option::weighted(0.4, s)
}

// ---------------------------------------------------------------------------------------
// Zenoh data messages.

/// A Put with every optional field.
pub(crate) fn put() -> BoxedStrategy<Put<'static>> {
    (
        opt(timestamp()),
        prop_oneof![Just(Encoding::default()), encoding()],
        opt(source_info()),
        any::<bool>(),
        opt(bytes()),
        unknowns(KNOWN_PUT),
        bytes(),
    )
        .prop_map(
            |(timestamp, encoding, source_info, shm, attachment, unknown, payload)| Put {
                timestamp,
                encoding,
                source_info,
                shm,
                attachment,
                unknown,
                payload,
            },
        )
        .boxed()
}

/// A Del with every optional field.
pub(crate) fn del() -> BoxedStrategy<Del<'static>> {
    (
        opt(timestamp()),
        opt(source_info()),
        opt(bytes()),
        unknowns(KNOWN_DEL),
    )
        .prop_map(|(timestamp, source_info, attachment, unknown)| Del {
            timestamp,
            source_info,
            attachment,
            unknown,
        })
        .boxed()
}

/// A Put or a Del.
pub(crate) fn push_body() -> BoxedStrategy<PushBody<'static>> {
    prop_oneof![
        3 => put().prop_map(PushBody::Put),
        1 => del().prop_map(PushBody::Del),
    ]
    .boxed()
}

/// Any consolidation mode.
pub(crate) fn consolidation() -> impl Strategy<Value = Consolidation> {
    select(
        &[
            Consolidation::Auto,
            Consolidation::None,
            Consolidation::Monotonic,
            Consolidation::Latest,
        ][..],
    )
}

/// A Query with every optional field.
pub(crate) fn query() -> BoxedStrategy<Query<'static>> {
    let body =
        (encoding(), bytes()).prop_map(|(encoding, payload)| QueryBody { encoding, payload });
    (
        consolidation(),
        prop_oneof![Just(""), text()],
        opt(source_info()),
        opt(body),
        opt(bytes()),
        unknowns(KNOWN_QUERY),
    )
        .prop_map(
            |(consolidation, parameters, source_info, body, attachment, unknown)| Query {
                consolidation,
                parameters,
                source_info,
                body,
                attachment,
                unknown,
            },
        )
        .boxed()
}

/// A Reply.
pub(crate) fn reply() -> BoxedStrategy<Reply<'static>> {
    (consolidation(), unknowns(KNOWN_NONE), push_body())
        .prop_map(|(consolidation, unknown, body)| Reply {
            consolidation,
            unknown,
            body,
        })
        .boxed()
}

/// An Err.
pub(crate) fn err() -> BoxedStrategy<Err<'static>> {
    (
        prop_oneof![Just(Encoding::default()), encoding()],
        opt(source_info()),
        any::<bool>(),
        unknowns(KNOWN_ERR),
        bytes(),
    )
        .prop_map(|(encoding, source_info, shm, unknown, payload)| Err {
            encoding,
            source_info,
            shm,
            unknown,
            payload,
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------
// Declarations.

fn undeclare_parts(
) -> impl Strategy<Value = (u32, Option<WireExpr<'static>>, Vec<Extension<'static>>)> {
    (u32e(), opt(wire_expr()), unknowns(KNOWN_UNDECLARE))
}

/// Any of the nine declarations.
pub(crate) fn declaration() -> BoxedStrategy<Declaration<'static>> {
    prop_oneof![
        (u16e(), wire_expr(), unknowns(KNOWN_NONE)).prop_map(|(id, mut wire_expr, unknown)| {
            wire_expr.mapping = Mapping::Receiver;
            Declaration::KeyExpr(DeclareKeyExpr {
                id,
                wire_expr,
                unknown,
            })
        }),
        (u16e(), unknowns(KNOWN_NONE)).prop_map(|(id, unknown)| Declaration::UndeclareKeyExpr(
            UndeclareKeyExpr { id, unknown }
        )),
        (u32e(), wire_expr(), unknowns(KNOWN_NONE)).prop_map(|(id, wire_expr, unknown)| {
            Declaration::Subscriber(DeclareSubscriber {
                id,
                wire_expr,
                unknown,
            })
        }),
        (
            u32e(),
            wire_expr(),
            any::<bool>(),
            u16e(),
            unknowns(KNOWN_QUERYABLE)
        )
            .prop_map(|(id, wire_expr, complete, distance, unknown)| {
                Declaration::Queryable(DeclareQueryable {
                    id,
                    wire_expr,
                    info: QueryableInfo { complete, distance },
                    unknown,
                })
            }),
        (u32e(), wire_expr(), unknowns(KNOWN_NONE)).prop_map(|(id, wire_expr, unknown)| {
            Declaration::Token(DeclareToken {
                id,
                wire_expr,
                unknown,
            })
        }),
        undeclare_parts().prop_map(|(id, wire_expr, unknown)| {
            Declaration::UndeclareSubscriber(UndeclareSubscriber {
                id,
                wire_expr,
                unknown,
            })
        }),
        undeclare_parts().prop_map(|(id, wire_expr, unknown)| {
            Declaration::UndeclareQueryable(UndeclareQueryable {
                id,
                wire_expr,
                unknown,
            })
        }),
        undeclare_parts().prop_map(|(id, wire_expr, unknown)| {
            Declaration::UndeclareToken(UndeclareToken {
                id,
                wire_expr,
                unknown,
            })
        }),
        unknowns(KNOWN_NONE).prop_map(|unknown| Declaration::Final(DeclareFinal { unknown })),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------
// Network messages.

/// A Push.
pub(crate) fn push() -> BoxedStrategy<Push<'static>> {
    (
        wire_expr(),
        net_qos(),
        opt(timestamp()),
        prop_oneof![Just(0u16), u16e()],
        opt(ts_stack()),
        unknowns(KNOWN_PUSH),
        push_body(),
    )
        .prop_map(
            |(wire_expr, qos, timestamp, node_id, ts_stack, unknown, body)| Push {
                wire_expr,
                qos,
                timestamp,
                node_id,
                ts_stack,
                unknown,
                body,
            },
        )
        .boxed()
}

/// A Request.
pub(crate) fn request() -> BoxedStrategy<Request<'static>> {
    let target = select(
        &[
            QueryTarget::BestMatching,
            QueryTarget::All,
            QueryTarget::AllComplete,
        ][..],
    );
    (
        (u32e(), wire_expr(), net_qos(), opt(timestamp()), target),
        (
            opt(u32e()),
            opt(u64e()),
            prop_oneof![Just(0u16), u16e()],
            opt(ts_stack()),
            unknowns(KNOWN_REQUEST),
            query(),
        ),
    )
        .prop_map(
            |(
                (id, wire_expr, qos, timestamp, target),
                (budget, timeout_ms, node_id, ts_stack, unknown, query),
            )| Request {
                id,
                wire_expr,
                qos,
                timestamp,
                target,
                budget,
                timeout_ms,
                node_id,
                ts_stack,
                unknown,
                query,
            },
        )
        .boxed()
}

/// A Response carrying a Reply or an Err.
pub(crate) fn response() -> BoxedStrategy<Response<'static>> {
    let body = prop_oneof![
        reply().prop_map(ResponseBody::Reply),
        err().prop_map(ResponseBody::Err),
    ];
    (
        u32e(),
        wire_expr(),
        net_qos(),
        opt(timestamp()),
        opt(entity_global_id()),
        opt(ts_stack()),
        unknowns(KNOWN_RESPONSE),
        body,
    )
        .prop_map(
            |(request_id, wire_expr, qos, timestamp, responder, ts_stack, unknown, body)| {
                Response {
                    request_id,
                    wire_expr,
                    qos,
                    timestamp,
                    responder,
                    ts_stack,
                    unknown,
                    body,
                }
            },
        )
        .boxed()
}

/// A ResponseFinal.
pub(crate) fn response_final() -> BoxedStrategy<ResponseFinal<'static>> {
    (u32e(), net_qos(), opt(timestamp()), unknowns(KNOWN_QOS_TS))
        .prop_map(|(request_id, qos, timestamp, unknown)| ResponseFinal {
            request_id,
            qos,
            timestamp,
            unknown,
        })
        .boxed()
}

/// An Interest in any mode.
pub(crate) fn interest() -> BoxedStrategy<Interest<'static>> {
    let mode = select(
        &[
            InterestMode::Final,
            InterestMode::Current,
            InterestMode::Future,
            InterestMode::CurrentFuture,
        ][..],
    );
    (
        u32e(),
        mode,
        any::<u8>(),
        opt(wire_expr()),
        net_qos(),
        opt(timestamp()),
        prop_oneof![Just(0u16), u16e()],
        unknowns(KNOWN_QOS_TS_NODE),
    )
        .prop_map(
            |(id, mode, options, wire_expr, qos, timestamp, node_id, unknown)| {
                let fin = mode == InterestMode::Final;
                Interest {
                    id,
                    mode,
                    options: if fin {
                        InterestOptions::default()
                    } else {
                        InterestOptions::from_byte(options)
                    },
                    wire_expr: if fin { None } else { wire_expr },
                    qos,
                    timestamp,
                    node_id,
                    unknown,
                }
            },
        )
        .boxed()
}

/// A Declare carrying any declaration.
pub(crate) fn declare() -> BoxedStrategy<Declare<'static>> {
    (
        opt(u32e()),
        net_qos(),
        opt(timestamp()),
        prop_oneof![Just(0u16), u16e()],
        unknowns(KNOWN_QOS_TS_NODE),
        declaration(),
    )
        .prop_map(
            |(interest_id, qos, timestamp, node_id, unknown, body)| Declare {
                interest_id,
                qos,
                timestamp,
                node_id,
                unknown,
                body,
            },
        )
        .boxed()
}

/// A network OAM message.
pub(crate) fn network_oam() -> BoxedStrategy<NetworkOam<'static>> {
    (
        u16e(),
        net_qos(),
        opt(timestamp()),
        unknowns(KNOWN_QOS_TS),
        ext_body(),
    )
        .prop_map(|(id, qos, timestamp, unknown, body)| NetworkOam {
            id,
            qos,
            timestamp,
            unknown,
            body,
        })
        .boxed()
}

/// Any network message.
pub(crate) fn network() -> BoxedStrategy<NetworkMessage<'static>> {
    prop_oneof![
        3 => push().prop_map(NetworkMessage::Push),
        2 => request().prop_map(NetworkMessage::Request),
        2 => response().prop_map(NetworkMessage::Response),
        1 => response_final().prop_map(NetworkMessage::ResponseFinal),
        2 => interest().prop_map(NetworkMessage::Interest),
        3 => declare().prop_map(NetworkMessage::Declare),
        1 => network_oam().prop_map(NetworkMessage::Oam),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------
// Transport messages.

fn resolution() -> impl Strategy<Value = Resolution> {
    prop_oneof![
        Just(Resolution::DEFAULT),
        (0u8..=0x3F).prop_map(Resolution::from_byte)
    ]
}

fn batch_size(default: u16) -> impl Strategy<Value = u16> {
    prop_oneof![Just(default), u16e()]
}

/// A lease in milliseconds: whole seconds (T flag) or not, with the extremes.
pub(crate) fn lease_ms() -> impl Strategy<Value = u64> {
    prop_oneof![
        u64e(),
        (0u64..=u64::MAX / 1000).prop_map(|s| s * 1000),
        select(&[0u64, 1000, 10_000, 10_001, u64::MAX / 1000 * 1000, u64::MAX][..]),
    ]
}

/// An InitSyn or InitAck with every extension.
pub(crate) fn init() -> BoxedStrategy<Init<'static>> {
    (
        (
            prop_oneof![Just(0x09u8), any::<u8>()],
            whatami(),
            zid(),
            resolution(),
            batch_size(DEFAULT_BATCH_SIZE),
            opt(bytes()),
        ),
        (
            any::<bool>(),
            opt(u64e().prop_map(QosLink)),
            opt(bytes()),
            opt(bytes()),
            opt(bytes()),
            any::<bool>(),
            any::<bool>(),
            opt(u64e()),
            opt(text()),
        ),
        unknowns(KNOWN_INIT),
    )
        .prop_map(
            |(
                (version, whatami, zid, resolution, batch_size, cookie),
                (qos, qos_link, shm, auth, multilink, low_latency, compression, patch, region_name),
                unknown,
            )| Init {
                version,
                whatami,
                zid,
                resolution,
                batch_size,
                cookie,
                qos,
                qos_link,
                shm,
                auth,
                multilink,
                low_latency,
                compression,
                patch,
                region_name,
                unknown,
            },
        )
        .boxed()
}

/// An OpenSyn or OpenAck with every extension.
pub(crate) fn open() -> BoxedStrategy<Open<'static>> {
    (
        (lease_ms(), u32e(), opt(bytes())),
        (
            any::<bool>(),
            opt(bytes()),
            opt(bytes()),
            opt(bytes()),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            opt(u64e()),
        ),
        unknowns(KNOWN_OPEN),
    )
        .prop_map(
            |(
                (lease_ms, initial_sn, cookie),
                (qos, shm, auth, multilink, multilink_ack, low_latency, compression, remote_bound),
                unknown,
            )| Open {
                lease_ms,
                initial_sn,
                cookie,
                qos,
                shm,
                auth,
                multilink,
                multilink_ack,
                low_latency,
                compression,
                remote_bound,
                unknown,
            },
        )
        .boxed()
}

/// A Close.
pub(crate) fn close() -> BoxedStrategy<Close<'static>> {
    (any::<u8>(), any::<bool>(), unknowns(KNOWN_NONE))
        .prop_map(|(reason, session, unknown)| Close {
            reason: CloseReason(reason),
            session,
            unknown,
        })
        .boxed()
}

/// A KeepAlive.
pub(crate) fn keep_alive() -> BoxedStrategy<KeepAlive<'static>> {
    unknowns(KNOWN_NONE)
        .prop_map(|unknown| KeepAlive { unknown })
        .boxed()
}

/// A Frame header.
pub(crate) fn frame_header() -> BoxedStrategy<FrameHeader<'static>> {
    (reliability(), u32e(), priority(), unknowns(KNOWN_FRAME))
        .prop_map(|(reliability, sn, priority, unknown)| FrameHeader {
            reliability,
            sn,
            priority,
            unknown,
        })
        .boxed()
}

/// A Frame with zero to three network messages.
pub(crate) fn frame() -> BoxedStrategy<Frame<'static>> {
    (frame_header(), vec(network(), 0..4))
        .prop_map(|(header, messages)| Frame { header, messages })
        .boxed()
}

/// A Fragment header with every marker.
pub(crate) fn fragment_header() -> BoxedStrategy<FragmentHeader<'static>> {
    (
        reliability(),
        any::<bool>(),
        u32e(),
        priority(),
        any::<bool>(),
        any::<bool>(),
        unknowns(KNOWN_FRAGMENT),
    )
        .prop_map(
            |(reliability, more, sn, priority, first, drop, unknown)| FragmentHeader {
                reliability,
                more,
                sn,
                priority,
                first,
                drop,
                unknown,
            },
        )
        .boxed()
}

/// A Fragment.
pub(crate) fn fragment() -> BoxedStrategy<Fragment<'static>> {
    (fragment_header(), bytes())
        .prop_map(|(header, payload)| Fragment { header, payload })
        .boxed()
}

fn priority_sn() -> impl Strategy<Value = PrioritySn> {
    (u32e(), u32e()).prop_map(|(reliable, best_effort)| PrioritySn {
        reliable,
        best_effort,
    })
}

/// A Join with every extension.
pub(crate) fn join() -> BoxedStrategy<Join<'static>> {
    (
        (
            prop_oneof![Just(0x09u8), any::<u8>()],
            whatami(),
            zid(),
            resolution(),
            batch_size(DEFAULT_MULTICAST_BATCH_SIZE),
            lease_ms(),
        ),
        (
            priority_sn(),
            opt(prop::array::uniform8(priority_sn())),
            opt(bytes()),
            opt(u64e()),
            unknowns(KNOWN_JOIN),
        ),
    )
        .prop_map(
            |(
                (version, whatami, zid, resolution, batch_size, lease_ms),
                (next_sn, qos, shm, patch, unknown),
            )| Join {
                version,
                whatami,
                zid,
                resolution,
                batch_size,
                lease_ms,
                next_sn,
                qos,
                shm,
                patch,
                unknown,
            },
        )
        .boxed()
}

/// A transport OAM message.
pub(crate) fn transport_oam() -> BoxedStrategy<TransportOam<'static>> {
    (u16e(), priority(), unknowns(KNOWN_FRAME), ext_body())
        .prop_map(|(id, priority, unknown, body)| TransportOam {
            id,
            priority,
            unknown,
            body,
        })
        .boxed()
}

/// Any transport message but Frame and Fragment: one that is followed by the next
/// message of its batch.
pub(crate) fn transport_single() -> BoxedStrategy<TransportMessage<'static>> {
    prop_oneof![
        2 => init().prop_map(TransportMessage::Init),
        2 => open().prop_map(TransportMessage::Open),
        1 => close().prop_map(TransportMessage::Close),
        1 => keep_alive().prop_map(TransportMessage::KeepAlive),
        2 => join().prop_map(TransportMessage::Join),
        1 => transport_oam().prop_map(TransportMessage::Oam),
    ]
    .boxed()
}

/// Any transport message.
pub(crate) fn transport() -> BoxedStrategy<TransportMessage<'static>> {
    prop_oneof![
        3 => transport_single(),
        2 => frame().prop_map(TransportMessage::Frame),
        1 => fragment().prop_map(TransportMessage::Fragment),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------
// Scouting messages.

/// A Scout.
pub(crate) fn scout() -> BoxedStrategy<Scout<'static>> {
    (
        prop_oneof![Just(0x09u8), any::<u8>()],
        0u8..8,
        opt(zid()),
        unknowns(KNOWN_NONE),
    )
        .prop_map(|(version, what, zid, unknown)| Scout {
            version,
            what: WhatAmIMatcher(what),
            zid,
            unknown,
        })
        .boxed()
}

/// A locator: endpoint-like text, or exactly at the 255-byte bound.
fn locator() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        4 => "(tcp|udp|quic)/[0-9.]{7,15}:[0-9]{1,5}",
        1 => ".{0,8}",
        1 => "[a-z]{255}",
    ]
    .prop_map(leak_str)
}

/// A Hello.
pub(crate) fn hello() -> BoxedStrategy<Hello<'static>> {
    (
        prop_oneof![Just(0x09u8), any::<u8>()],
        whatami(),
        zid(),
        vec(locator(), 0..4),
        unknowns(KNOWN_NONE),
    )
        .prop_map(|(version, whatami, zid, locators, unknown)| Hello {
            version,
            whatami,
            zid,
            locators,
            unknown,
        })
        .boxed()
}

/// Any scouting message.
pub(crate) fn scouting() -> BoxedStrategy<ScoutingMessage<'static>> {
    prop_oneof![
        scout().prop_map(ScoutingMessage::Scout),
        hello().prop_map(ScoutingMessage::Hello),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------
// Link-state lists (the body of network OAM 1).

/// One link-state entry; `weights`, when present, has one weight per link.
pub(crate) fn link_state() -> BoxedStrategy<LinkState<'static>> {
    (
        (u64e(), u64e(), opt(zid()), opt(whatami())),
        (
            opt(vec(locator(), 0..3)),
            vec(u64e(), 0..4),
            any::<bool>(),
            any::<bool>(),
        ),
    )
        .prop_flat_map(
            |((psid, sn, zid, whatami), (locators, links, weighted, gateway))| {
                let n = links.len();
                let weights = if weighted {
                    vec(u16e(), n..=n).prop_map(Some).boxed()
                } else {
                    Just(None).boxed()
                };
                weights.prop_map(move |weights| LinkState {
                    psid,
                    sn,
                    zid,
                    whatami,
                    locators: locators.clone(),
                    links: links.clone(),
                    weights,
                    gateway,
                })
            },
        )
        .boxed()
}
