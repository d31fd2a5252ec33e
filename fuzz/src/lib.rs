//! Oracles shared by the weft-proto fuzz targets.
//!
//! Each target hands arbitrary bytes to a decoder entry point. Decoding must never panic,
//! and an error must point inside the input. Whatever decodes goes through the
//! canonical-form oracle:
//!
//! 1. encoding the decoded value gives bytes `canon` no longer than the bytes it was
//!    decoded from (the codec only ever drops redundancy);
//! 2. `canon` decodes, without error, into exactly the same value;
//! 3. encoding that value again gives `canon` byte for byte.
//!
//! The stronger oracle, "`canon` is the input itself", does not hold for valid inputs:
//! the wire format admits several encodings of one value (see docs/fuzzing.md for the
//! list found by fuzzing). Setting `WEFT_FUZZ_STRICT=1` enables it anyway, to list those
//! encodings: every input it stops on is a normalisation, not a bug, unless it also breaks
//! 1-3.

use std::sync::OnceLock;

use weft_proto::batch::compression::{unwrap_batch, wrap_batch};
use weft_proto::batch::defrag::{Defragmented, Defragmenter};
use weft_proto::batch::framing::{next_batch, PrefixWidth};
use weft_proto::batch::serial;
use weft_proto::batch::{decode_batch, encode_batch, BatchItem, BatchReader};
use weft_proto::core::{Bits, Priority, Reliability};
use weft_proto::network::{is_network_header, linkstate, NetworkMessage, NetworkOam, TsStack};
use weft_proto::scouting::ScoutingMessage;
use weft_proto::transport::auth::{encode_chain, AuthChain, UsrPwdResponse};
use weft_proto::transport::TransportMessage;
use weft_proto::zenoh::{PushBody, Query};
use weft_proto::{ext::ExtBody, Reader};

/// Whether the byte-identity oracle is on (`WEFT_FUZZ_STRICT=1`).
pub fn strict() -> bool {
    static STRICT: OnceLock<bool> = OnceLock::new();
    *STRICT.get_or_init(|| std::env::var_os("WEFT_FUZZ_STRICT").is_some_and(|v| v != "0"))
}

fn check_canon(canon: &[u8], consumed: &[u8]) {
    if strict() {
        assert_eq!(canon, consumed, "re-encoding differs from the input");
    }
    assert!(
        canon.len() <= consumed.len(),
        "canonical re-encoding ({} bytes) longer than its input ({} bytes)",
        canon.len(),
        consumed.len()
    );
}

fn encode_items(items: &[BatchItem<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for i in items {
        i.encode(&mut out).expect("a decoded item encodes");
    }
    out
}

/// BatchReader over `data`: the items before the first error satisfy the oracle, and
/// `decode_batch` agrees with the reader.
pub fn check_batch(data: &[u8], low_latency: bool) {
    let mut reader = BatchReader::new(data).low_latency(low_latency);
    let mut items = Vec::new();
    let mut consumed = 0;
    let mut failed = false;
    let mut in_frame = false;
    while let Some(item) = reader.next() {
        // Where a network message may start, the batch reader (which has fast paths of
        // its own) must agree with the general decoder: same message and end, or the
        // same error.
        let network_here =
            (in_frame || low_latency) && data.get(consumed).is_some_and(|&h| is_network_header(h));
        let general = network_here.then(|| {
            let mut r = Reader::with_base(&data[consumed..], consumed);
            NetworkMessage::decode(&mut r).map(|m| (m, r.offset()))
        });
        match item {
            Ok(i) => {
                if let Some(general) = general {
                    let BatchItem::Network(m) = &i else {
                        panic!("a network header did not give a network message: {i:?}");
                    };
                    assert_eq!(general, Ok((m.clone(), reader.offset())));
                }
                if let BatchItem::Transport(t) = &i {
                    check_auth(data, t);
                }
                in_frame = match &i {
                    BatchItem::Frame(_) => true,
                    BatchItem::Network(_) => in_frame,
                    BatchItem::Transport(_) => false,
                };
                items.push(i);
                consumed = reader.offset();
            }
            Err(e) => {
                assert!(
                    e.offset <= data.len(),
                    "error offset {} past the end",
                    e.offset
                );
                if let Some(general) = general {
                    assert_eq!(general.map(|_| ()), Err(e));
                }
                failed = true;
                break;
            }
        }
    }
    assert!(failed || consumed == data.len());
    assert!(reader.next().is_none(), "the reader goes on after an error");

    let canon = encode_items(&items);
    check_canon(&canon, &data[..consumed]);
    let again = BatchReader::new(&canon)
        .low_latency(low_latency)
        .collect::<Result<Vec<_>, _>>()
        .expect("the canonical re-encoding decodes");
    assert_eq!(again, items);
    assert_eq!(encode_items(&again), canon);

    match decode_batch(data, low_latency) {
        Ok(nested) => {
            assert!(!failed, "decode_batch accepted what BatchReader refused");
            let mut out = Vec::new();
            encode_batch(&nested, &mut out).expect("a decoded batch encodes");
            assert_eq!(out, canon);
        }
        Err(_) => assert!(failed, "decode_batch refused what BatchReader accepted"),
    }
}

/// The Auth value of an Init or Open decoded from `data` (a sub-slice of it): its chain,
/// and any zbuf in it read as a user/password answer, decode without panicking, with
/// errors inside the input, and what decodes re-encodes to what it was decoded from.
fn check_auth(data: &[u8], message: &TransportMessage<'_>) {
    let value = match message {
        TransportMessage::Init(i) => i.auth,
        TransportMessage::Open(o) => o.auth,
        _ => None,
    };
    let Some(value) = value else {
        return;
    };
    let base = value.as_ptr() as usize - data.as_ptr() as usize;
    let chain = match AuthChain::decode(value, base) {
        Ok(chain) => chain,
        Err(e) => {
            assert!(
                e.offset <= data.len(),
                "error offset {} past the end",
                e.offset
            );
            return;
        }
    };
    let exts: Vec<_> = chain.entries.iter().map(|e| e.ext).collect();
    let mut canon = Vec::new();
    encode_chain(&exts, &mut canon).expect("a decoded chain encodes");
    assert!(canon.len() <= value.len());
    let again = AuthChain::decode(&canon, 0).expect("the re-encoded chain decodes");
    assert_eq!(
        again.entries.iter().map(|e| e.ext).collect::<Vec<_>>(),
        exts
    );
    for entry in &chain.entries {
        let ExtBody::ZBuf(body) = entry.ext.body else {
            continue;
        };
        let base = body.as_ptr() as usize - data.as_ptr() as usize;
        match UsrPwdResponse::decode(body, base) {
            Ok(r) => {
                let mut out = Vec::new();
                r.encode(&mut out).expect("a decoded answer encodes");
                assert!(out.len() <= body.len());
                assert_eq!(UsrPwdResponse::decode(&out, 0), Ok(r));
            }
            Err(e) => assert!(
                e.offset <= data.len(),
                "error offset {} past the end",
                e.offset
            ),
        }
    }
}

/// One network message at the start of `data` (and `decode_exact` on the whole of it).
pub fn check_network(data: &[u8]) {
    let mut r = Reader::new(data);
    match NetworkMessage::decode(&mut r) {
        Ok(m) => {
            let consumed = r.position();
            match NetworkMessage::decode_exact(data) {
                Ok(exact) => {
                    assert_eq!(consumed, data.len());
                    assert_eq!(exact, m);
                }
                Err(_) => assert!(consumed < data.len()),
            }
            let mut canon = Vec::new();
            m.encode(&mut canon).expect("a decoded message encodes");
            check_canon(&canon, &data[..consumed]);
            let again = NetworkMessage::decode_exact(&canon).expect("canonical form decodes");
            assert_eq!(again, m);
            let mut twice = Vec::new();
            again.encode(&mut twice).unwrap();
            assert_eq!(twice, canon);
            if let NetworkMessage::Oam(NetworkOam {
                id: NetworkOam::LINK_STATE,
                body: ExtBody::ZBuf(body),
                ..
            }) = m
            {
                check_linkstate(body);
            }
        }
        Err(e) => {
            assert!(e.offset <= data.len());
            assert!(NetworkMessage::decode_exact(data).is_err());
        }
    }
}

/// The data messages and extension bodies decoded on their own.
pub fn check_data(data: &[u8]) {
    let mut r = Reader::new(data);
    if let Ok(m) = PushBody::decode(&mut r) {
        let mut canon = Vec::new();
        m.encode(&mut canon).unwrap();
        check_canon(&canon, &data[..r.position()]);
        let mut cr = Reader::new(&canon);
        assert_eq!(
            PushBody::decode(&mut cr).expect("canonical form decodes"),
            m
        );
        assert!(cr.is_empty());
    }
    let mut r = Reader::new(data);
    if let Ok(q) = Query::decode(&mut r) {
        let mut canon = Vec::new();
        q.encode(&mut canon).unwrap();
        check_canon(&canon, &data[..r.position()]);
        let mut cr = Reader::new(&canon);
        assert_eq!(Query::decode(&mut cr).expect("canonical form decodes"), q);
        assert!(cr.is_empty());
    }
    if let Ok(ts) = TsStack::parse(data) {
        assert_ne!(ts.conf_flags(), 0);
        for (_, t) in ts.entries() {
            assert!(t.len() <= data.len());
        }
    }
    check_linkstate(data);
}

/// A link-state list (network OAM 1 body).
pub fn check_linkstate(body: &[u8]) {
    if let Ok(list) = linkstate::decode_list(body) {
        let mut canon = Vec::new();
        linkstate::encode_list(&list, &mut canon).expect("a decoded list encodes");
        check_canon(&canon, body);
        assert_eq!(
            linkstate::decode_list(&canon).expect("canonical form decodes"),
            list
        );
    }
}

/// One scouting datagram.
pub fn check_scouting(data: &[u8]) {
    match ScoutingMessage::decode(data) {
        Ok(m) => {
            let mut canon = Vec::new();
            m.encode(&mut canon).expect("a decoded message encodes");
            check_canon(&canon, data);
            let again = ScoutingMessage::decode(&canon).expect("canonical form decodes");
            assert_eq!(again, m);
            let mut twice = Vec::new();
            again.encode(&mut twice).unwrap();
            assert_eq!(twice, canon);
        }
        Err(e) => assert!(e.offset <= data.len()),
    }
}

/// Largest batch on a stream link.
const BATCH_MAX: usize = u16::MAX as usize;
/// Reassembly bound used by the stream target.
const MESSAGE_MAX: usize = 1 << 20;

fn channel(reliability: Reliability, priority: Priority) -> usize {
    usize::from(priority.to_u8()) * 2 + usize::from(reliability.is_reliable())
}

/// The receive path of a stream link: `data[0]` configures it (bit 0 low latency, bit 1
/// compression, bits 2-3 SN resolution, bit 4 First/Drop markers), the rest is the byte
/// stream. As on a real link, the low-latency prefix and the compression header apply
/// after the batch that carries an Open. Fragments are reassembled per channel and the
/// messages they complete decoded.
pub fn check_stream(data: &[u8]) {
    let Some((&config, stream)) = data.split_first() else {
        return;
    };
    let low_latency = config & 0x01 != 0;
    let compression = config & 0x02 != 0;
    let sn_bits = match (config >> 2) & 0x03 {
        0 => Bits::U8,
        1 => Bits::U16,
        2 => Bits::U32,
        _ => Bits::U64,
    };
    let markers = config & 0x10 != 0;
    let mut defrag: Vec<Defragmenter> = (0..16)
        .map(|_| Defragmenter::new(MESSAGE_MAX, sn_bits, markers))
        .collect();
    let mut scratch = Vec::new();
    let mut open = false;
    let mut pos = 0;
    loop {
        let ll = open && low_latency;
        let width = if ll {
            PrefixWidth::U32
        } else {
            PrefixWidth::U16
        };
        let (start, batch) = match next_batch(stream, pos, width) {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(e) => {
                assert!(e.offset <= stream.len());
                break;
            }
        };
        assert_eq!(start, pos + width.len());
        assert!(start + batch.len() <= stream.len());
        pos = start + batch.len();
        let plain = if open && compression {
            match unwrap_batch(batch, &mut scratch, BATCH_MAX) {
                Ok(p) => p,
                Err(e) => {
                    assert!(e.offset <= batch.len());
                    continue;
                }
            }
        } else {
            batch
        };
        assert!(plain.len() <= BATCH_MAX);
        if open && compression {
            // Compression round trip: whatever was unwrapped wraps and unwraps back.
            let mut wrapped = Vec::new();
            wrap_batch(plain, &mut Vec::new(), &mut wrapped).expect("wrapping succeeds");
            let mut out = Vec::new();
            let back = unwrap_batch(&wrapped, &mut out, BATCH_MAX).expect("wrapped unwraps");
            assert_eq!(back, plain);
        }
        check_batch(plain, ll);
        let mut saw_open = false;
        for item in BatchReader::new(plain).low_latency(ll) {
            match item {
                Ok(BatchItem::Transport(TransportMessage::Open(_))) => saw_open = true,
                Ok(BatchItem::Transport(TransportMessage::Fragment(f))) => {
                    let d = &mut defrag[channel(f.header.reliability, f.header.priority)];
                    match d.push(&f.header, f.payload) {
                        Ok(Defragmented::Complete(msg)) => {
                            assert!(msg.len() <= MESSAGE_MAX);
                            let msg = msg.to_vec();
                            assert_eq!(d.buffered(), 0);
                            assert!(!d.is_pending());
                            check_network(&msg);
                        }
                        Ok(Defragmented::Pending) => assert!(d.is_pending()),
                        Ok(Defragmented::Dropped) | Err(_) => {
                            assert!(!d.is_pending());
                            assert_eq!(d.buffered(), 0);
                        }
                    }
                    assert!(d.buffered() <= MESSAGE_MAX);
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        open |= saw_open;
    }
}

/// The handshake fed `data`: its first byte chooses the side (bit 0: the acceptor, else
/// the initiator) and user/password authentication (bit 1); the rest is the other
/// side's stream, batches behind their 2-byte length (as on TCP). Whatever comes, the
/// machine answers, refuses with an error, or establishes, and never panics; what it
/// establishes respects the negotiated bounds, and after an error or the end it
/// accepts nothing more.
pub fn check_handshake(data: &[u8]) {
    use std::sync::Arc;
    use weft_proto::core::{WhatAmI, ZenohId};
    use weft_transport::establish::{
        Acceptor, Dictionary, Initiator, LocalParams, Progress, UsrPwd, MIN_BATCH_SIZE,
    };

    let Some((&mode, stream)) = data.split_first() else {
        return;
    };
    let accepting = mode & 1 != 0;
    let usrpwd = mode & 2 != 0;
    let zid = ZenohId::new(0xF0).expect("a non-zero id");
    let local = LocalParams::new(zid, WhatAmI::Router);
    let own_batch = local.batch_size;
    let mut dictionary = Dictionary::default();
    dictionary.insert("user", "password");
    let auth = Arc::new(
        UsrPwd::new()
            .with_credentials("user", "password")
            .with_dictionary(dictionary),
    );
    enum Side {
        Accepting(Acceptor),
        Initiating(Initiator),
    }
    let mut out = Vec::new();
    let mut side = if accepting {
        let acceptor = Acceptor::new(local, [7; 16]);
        Side::Accepting(if usrpwd {
            acceptor.with_usrpwd(auth, 0x1234_5678)
        } else {
            acceptor
        })
    } else {
        let mut initiator = Initiator::new(local);
        if usrpwd {
            initiator = initiator.with_usrpwd(auth);
        }
        initiator.start(&mut out).expect("the first batch encodes");
        Side::Initiating(initiator)
    };
    let mut over = false;
    let mut pos = 0;
    while let Ok(Some((start, batch))) = next_batch(stream, pos, PrefixWidth::U16) {
        pos = start + batch.len();
        let result = match &mut side {
            Side::Accepting(a) => a.on_batch(batch, &mut out),
            Side::Initiating(i) => i.on_batch(batch, &mut out),
        };
        if over {
            assert!(result.is_err(), "a handshake went on after its end");
            continue;
        }
        match result {
            Ok(Progress::Reply) => {}
            Ok(Progress::Established(n)) => {
                assert!(
                    n.batch_size >= MIN_BATCH_SIZE,
                    "batch size {}",
                    n.batch_size
                );
                assert!(n.batch_size <= own_batch, "batch size {}", n.batch_size);
                over = true;
            }
            Err(e) => {
                // Every refusal can be told to the other side.
                let _ = e.close_reason();
                over = true;
            }
        }
    }
}

/// One thing a serial decoder gave: a frame (flags, payload) or why one was dropped.
type SerialEvent = Result<(u8, Vec<u8>), serial::FrameError>;

/// Feeds `line` to `d` in chunks of `chunk` bytes, checking that every call takes at
/// least one byte and at most what it was given.
fn serial_events(d: &mut serial::Decoder, line: &[u8], chunk: usize) -> Vec<SerialEvent> {
    let mut events = Vec::new();
    for piece in line.chunks(chunk) {
        let mut rest = piece;
        while !rest.is_empty() {
            let (used, got) = d.push(rest);
            assert!(
                used > 0 && used <= rest.len(),
                "took {used} of {}",
                rest.len()
            );
            rest = &rest[used..];
            if let Some(got) = got {
                events.push(got.map(|f| (f.flags.0, f.payload.to_vec())));
            }
        }
    }
    events
}

/// The serial line's decoder: `data[0]` sets the size of the chunks the rest is fed in
/// (1 to 256 bytes). Whatever the chunks, the same frames and drops come out; a frame that
/// comes out is within the MTU and is framed again into bytes that give it back; the
/// counters count what came out; after any input, a delimiter and a good frame give that
/// frame.
pub fn check_serial(data: &[u8]) {
    let Some((&config, line)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(config) + 1;
    let mut d = serial::Decoder::new();
    let events = serial_events(&mut d, line, chunk);
    let mut whole = serial::Decoder::new();
    assert_eq!(serial_events(&mut whole, line, line.len().max(1)), events);
    let stats = d.stats();
    let good = events.iter().filter(|e| e.is_ok()).count() as u64;
    assert_eq!(
        (stats.frames, stats.dropped),
        (good, events.len() as u64 - good)
    );
    for (flags, payload) in events.iter().flatten() {
        assert!(payload.len() <= serial::MTU);
        let mut again = Vec::new();
        serial::encode(serial::Flags(*flags), &[payload], &mut again).expect("within the MTU");
        assert!(again.len() <= serial::MAX_WIRE_LEN);
        let mut fresh = serial::Decoder::new();
        let (used, got) = fresh.push(&again);
        assert_eq!(used, again.len());
        let got = got.expect("a frame").expect("a good frame");
        assert_eq!((got.flags.0, got.payload), (*flags, &payload[..]));
    }
    let mut probe = vec![serial::DELIMITER];
    serial::encode(serial::Flags::DATA, &[b"probe"], &mut probe).expect("small");
    let after = serial_events(&mut d, &probe, chunk);
    assert_eq!(after.last(), Some(&Ok((0, b"probe".to_vec()))), "{after:?}");
}
