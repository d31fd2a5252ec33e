//! Property tests of the codec: every valid message survives encode → decode unchanged and
//! re-encodes to the same bytes; batches decode into exactly the items they were built
//! from; arbitrary, mutated and truncated inputs give errors, never panics; fragments
//! reassemble into the message they were cut from.
//!
//! The generators are in `strategies/`; their module comment lists the canonical-form
//! rules that make a generated value exactly representable.

mod strategies;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::TestCaseResult;

use strategies as s;
use weft_proto::batch::compression::{unwrap_batch, wrap_batch};
use weft_proto::batch::defrag::{DefragError, Defragmented, Defragmenter};
use weft_proto::batch::framing::{next_batch, PrefixWidth};
use weft_proto::batch::{decode_batch, encode_batch, BatchItem, BatchMessage, BatchReader};
use weft_proto::core::{Bits, Encoding, Priority, Reliability, WhatAmI, WireExpr, ZenohId};
use weft_proto::error::DecodeErrorKind;
use weft_proto::ext::ExtBody;
use weft_proto::network::{
    is_network_header, linkstate, NetworkMessage, NetworkOam, Push, TsStack,
};
use weft_proto::scouting::{Hello, ScoutingMessage};
use weft_proto::transport::{
    Fragment, FragmentHeader, Frame, FrameHeader, Init, Open, TransportMessage,
};
use weft_proto::writer::{LenCounter, SliceWriter, Writer};
use weft_proto::zenoh::{PushBody, Put, Query};
use weft_proto::{EncodeError, Reader};

// ---------------------------------------------------------------------------------------
// Helpers.

/// Something with an `encode<W: Writer>` method.
trait Encode {
    fn enc<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError>;
}

macro_rules! impl_encode {
    ($($t:ty),*) => {$(
        impl Encode for $t {
            fn enc<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
                self.encode(w)
            }
        }
    )*};
}

impl_encode!(
    ScoutingMessage<'_>,
    TransportMessage<'_>,
    NetworkMessage<'_>,
    PushBody<'_>,
    Query<'_>,
    BatchItem<'_>,
    FrameHeader<'_>,
    FragmentHeader<'_>
);

impl<T: Encode> Encode for [T] {
    fn enc<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        self.iter().try_for_each(|m| m.enc(w))
    }
}

/// Encodes `m` into a `Vec`, and checks that the length counter and a slice writer agree:
/// an exact-size slice takes the same bytes, a slice one byte short reports `BufferFull`.
fn encoded<T: Encode + ?Sized>(m: &T) -> Vec<u8> {
    let mut out = Vec::new();
    m.enc(&mut out).expect("a valid message encodes");
    let mut counter = LenCounter::default();
    m.enc(&mut counter).unwrap();
    assert_eq!(counter.0, out.len(), "LenCounter disagrees with Vec");
    let mut buf = vec![0u8; out.len()];
    let mut sw = SliceWriter::new(&mut buf);
    m.enc(&mut sw).expect("an exact-size slice is enough");
    assert_eq!(sw.as_slice(), &out[..]);
    if !out.is_empty() {
        let mut short = vec![0u8; out.len() - 1];
        let mut sw = SliceWriter::new(&mut short);
        assert!(matches!(
            m.enc(&mut sw),
            Err(EncodeError::BufferFull { .. })
        ));
    }
    out
}

/// Decodes a batch into its items, failing on the first error.
fn items(batch: &[u8], low_latency: bool) -> Result<Vec<BatchItem<'_>>, String> {
    BatchReader::new(batch)
        .low_latency(low_latency)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{e}"))
}

/// `cases` per property, or `PROPTEST_CASES` when set (for longer runs).
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------
// Round trips of single messages.

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn scouting_messages_round_trip(m in s::scouting()) {
        let bytes = encoded(&m);
        let d = ScoutingMessage::decode(&bytes).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(&d, &m);
        prop_assert_eq!(encoded(&d), bytes);
    }

    #[test]
    fn transport_messages_round_trip(m in s::transport()) {
        let bytes = encoded(&m);
        let d = decode_batch(&bytes, false).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(&d, &vec![BatchMessage::Transport(m.clone())]);
        let mut again = Vec::new();
        encode_batch(&d, &mut again).unwrap();
        prop_assert_eq!(again, bytes);
    }

    #[test]
    fn network_messages_round_trip(m in s::network()) {
        let bytes = encoded(&m);
        let d = NetworkMessage::decode_exact(&bytes)
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(&d, &m);
        prop_assert_eq!(encoded(&d), bytes);
    }

    #[test]
    fn a_split_encoding_is_the_encoding_in_three_parts(m in s::network()) {
        let whole = encoded(&m);
        let mut head = Vec::new();
        let split = m.encode_split(&mut head).unwrap();
        let [before, bulk, after] = split.parts(&head);
        prop_assert_eq!([before, bulk, after].concat(), whole);
        // The bulk is left out exactly when the message has a non-empty one.
        let bulk_len = m.bulk().map_or(0, <[u8]>::len);
        prop_assert_eq!(split.bulk.len(), bulk_len);
        prop_assert_eq!(head.len() + bulk_len, encoded(&m).len());
    }

    #[test]
    fn every_declaration_round_trips(m in s::declare()) {
        let m = NetworkMessage::Declare(m);
        let bytes = encoded(&m);
        let d = NetworkMessage::decode_exact(&bytes)
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(&d, &m);
        prop_assert_eq!(encoded(&d), bytes);
    }

    #[test]
    fn data_messages_round_trip(body in s::push_body(), query in s::query()) {
        let bytes = encoded(&body);
        let mut r = Reader::new(&bytes);
        let d = PushBody::decode(&mut r).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert!(r.is_empty());
        prop_assert_eq!(&d, &body);
        prop_assert_eq!(encoded(&d), bytes);

        let bytes = encoded(&query);
        let mut r = Reader::new(&bytes);
        let d = Query::decode(&mut r).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert!(r.is_empty());
        prop_assert_eq!(&d, &query);
        prop_assert_eq!(encoded(&d), bytes);
    }
}

// ---------------------------------------------------------------------------------------
// Batches.

/// A piece of a generated batch.
#[derive(Debug, Clone)]
enum Segment {
    /// A transport message other than Frame and Fragment.
    Single(TransportMessage<'static>),
    /// A Frame and its network messages.
    Frame(Frame<'static>),
    /// A network message outside any Frame (low-latency links only).
    Bare(Box<NetworkMessage<'static>>),
}

fn segment(low_latency: bool) -> BoxedStrategy<Segment> {
    let base = prop_oneof![
        s::transport_single().prop_map(Segment::Single),
        s::frame().prop_map(Segment::Frame),
    ];
    if low_latency {
        prop_oneof![2 => base, 1 => s::network().prop_map(|m| Segment::Bare(Box::new(m)))].boxed()
    } else {
        base.boxed()
    }
}

fn flatten(segments: &[Segment], last: &Option<Fragment<'static>>) -> Vec<BatchItem<'static>> {
    let mut out = Vec::new();
    for seg in segments {
        match seg {
            Segment::Single(m) => out.push(BatchItem::Transport(m.clone())),
            Segment::Frame(f) => {
                out.push(BatchItem::Frame(f.header.clone()));
                out.extend(f.messages.iter().cloned().map(BatchItem::Network));
            }
            Segment::Bare(m) => out.push(BatchItem::Network((**m).clone())),
        }
    }
    if let Some(f) = last {
        out.push(BatchItem::Transport(TransportMessage::Fragment(f.clone())));
    }
    out
}

fn check_batch(
    segments: &[Segment],
    last: &Option<Fragment<'static>>,
    low_latency: bool,
) -> TestCaseResult {
    let expected = flatten(segments, last);
    let bytes = encoded(&expected[..]);
    let got = items(&bytes, low_latency).map_err(TestCaseError::fail)?;
    prop_assert_eq!(&got, &expected);
    prop_assert_eq!(encoded(&got[..]), bytes.clone());

    let nested =
        decode_batch(&bytes, low_latency).map_err(|e| TestCaseError::fail(format!("{e}")))?;
    let mut again = Vec::new();
    encode_batch(&nested, &mut again).unwrap();
    prop_assert_eq!(&again, &bytes);
    if !low_latency {
        let mut want: Vec<BatchMessage<'_>> = segments
            .iter()
            .map(|seg| match seg {
                Segment::Single(m) => BatchMessage::Transport(m.clone()),
                Segment::Frame(f) => BatchMessage::Transport(TransportMessage::Frame(f.clone())),
                Segment::Bare(_) => unreachable!("bare network messages need low latency"),
            })
            .collect();
        if let Some(f) = last {
            want.push(BatchMessage::Transport(TransportMessage::Fragment(
                f.clone(),
            )));
        }
        prop_assert_eq!(nested, want);
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn batches_decode_into_the_items_they_were_built_from(
        segments in vec(segment(false), 0..5),
        last in proptest::option::of(s::fragment()),
    ) {
        check_batch(&segments, &last, false)?;
    }

    #[test]
    fn low_latency_batches_decode_into_the_items_they_were_built_from(
        segments in vec(segment(true), 0..5),
        last in proptest::option::of(s::fragment()),
    ) {
        check_batch(&segments, &last, true)?;
    }

    #[test]
    fn compressed_batches_unwrap_to_the_plain_batch(
        segments in vec(segment(false), 0..4),
        repeat in 1usize..4,
    ) {
        // Repeating the items makes the batch compressible, exercising both header forms.
        let mut plain = Vec::new();
        for _ in 0..repeat {
            plain.extend(encoded(&flatten(&segments, &None)[..]));
        }
        let mut scratch = Vec::new();
        let mut wrapped = Vec::new();
        wrap_batch(&plain, &mut scratch, &mut wrapped).unwrap();
        prop_assert!(wrapped.len() <= plain.len() + 1);
        let mut out = Vec::new();
        let unwrapped = unwrap_batch(&wrapped, &mut out, plain.len())
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(unwrapped, &plain[..]);
    }

    #[test]
    fn stream_framing_splits_back_into_the_batches(
        batches in vec(vec(any::<u8>(), 0..300), 0..6),
        wide in any::<bool>(),
    ) {
        let width = if wide { PrefixWidth::U32 } else { PrefixWidth::U16 };
        let mut stream = Vec::new();
        for b in &batches {
            width.write(b.len(), &mut stream).unwrap();
            stream.extend_from_slice(b);
        }
        let mut pos = 0;
        let mut got = Vec::new();
        while let Some((start, batch)) = next_batch(&stream, pos, width)
            .map_err(|e| TestCaseError::fail(format!("{e}")))?
        {
            prop_assert_eq!(&stream[start..start + batch.len()], batch);
            got.push(batch.to_vec());
            pos = start + batch.len();
        }
        prop_assert_eq!(&got, &batches);
        // A stream cut inside a prefix or a batch is an error, never a shorter batch.
        if let Some(last) = batches.last() {
            let cut = stream.len() - 1;
            let mut pos = 0;
            let mut n = 0;
            let err = loop {
                match next_batch(&stream[..cut], pos, width) {
                    Ok(Some((start, b))) => {
                        n += 1;
                        pos = start + b.len();
                    }
                    Ok(None) => break false,
                    Err(_) => break true,
                }
            };
            prop_assert!(err, "cut stream of {} batches (last {} bytes) read {} batches without error", batches.len(), last.len(), n);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Arbitrary, mutated and truncated inputs.

/// Runs `bytes` through every decoder. Nothing may panic; whatever decodes must re-encode
/// to a canonical form that decodes to the same value, is a fixed point of
/// decode∘encode, and is never longer than the bytes it was decoded from.
fn exercise(bytes: &[u8]) -> TestCaseResult {
    for low_latency in [false, true] {
        let mut reader = BatchReader::new(bytes).low_latency(low_latency);
        let mut ok = Vec::new();
        let mut consumed = 0;
        let mut in_frame = false;
        while let Some(item) = reader.next() {
            // Where a network message may start, the batch reader agrees with the general
            // decoder: same message and end, or the same error.
            let general = ((in_frame || low_latency)
                && bytes.get(consumed).is_some_and(|&h| is_network_header(h)))
            .then(|| {
                let mut r = Reader::with_base(&bytes[consumed..], consumed);
                NetworkMessage::decode(&mut r).map(|m| (m, r.offset()))
            });
            match item {
                Ok(i) => {
                    if let Some(general) = general {
                        let BatchItem::Network(m) = &i else {
                            return Err(TestCaseError::fail(format!("{i:?} at a network header")));
                        };
                        prop_assert_eq!(general, Ok((m.clone(), reader.offset())));
                    }
                    in_frame = match &i {
                        BatchItem::Frame(_) => true,
                        BatchItem::Network(_) => in_frame,
                        BatchItem::Transport(_) => false,
                    };
                    ok.push(i);
                }
                Err(e) => {
                    prop_assert!(e.offset <= bytes.len());
                    if let Some(general) = general {
                        prop_assert_eq!(general.map(|_| ()), Err(e));
                    }
                    break;
                }
            }
            consumed = reader.offset();
        }
        let canon = encoded(&ok[..]);
        prop_assert!(canon.len() <= consumed);
        let again = items(&canon, low_latency).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&again, &ok);
        prop_assert_eq!(encoded(&again[..]), canon);
        let _ = decode_batch(bytes, low_latency);
    }

    let mut r = Reader::new(bytes);
    if let Ok(m) = NetworkMessage::decode(&mut r) {
        let canon = encoded(&m);
        prop_assert!(canon.len() <= r.position());
        let d = NetworkMessage::decode_exact(&canon)
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(&d, &m);
        prop_assert_eq!(encoded(&d), canon);
    }
    if let Ok(m) = ScoutingMessage::decode(bytes) {
        let canon = encoded(&m);
        prop_assert!(canon.len() <= bytes.len());
        let d = ScoutingMessage::decode(&canon).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(&d, &m);
        prop_assert_eq!(encoded(&d), canon);
    }
    let mut r = Reader::new(bytes);
    if let Ok(m) = PushBody::decode(&mut r) {
        let canon = encoded(&m);
        let d = PushBody::decode(&mut Reader::new(&canon))
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(d, m);
    }
    let mut r = Reader::new(bytes);
    if let Ok(m) = Query::decode(&mut r) {
        let canon = encoded(&m);
        let d = Query::decode(&mut Reader::new(&canon))
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(d, m);
    }
    if let Ok(list) = linkstate::decode_list(bytes) {
        let mut canon = Vec::new();
        linkstate::encode_list(&list, &mut canon).unwrap();
        prop_assert!(canon.len() <= bytes.len());
        prop_assert_eq!(
            linkstate::decode_list(&canon).map_err(|e| TestCaseError::fail(format!("{e}")))?,
            list
        );
    }
    if let Ok(ts) = TsStack::parse(bytes) {
        prop_assert_eq!(ts.as_bytes(), bytes);
        prop_assert!(ts.conf_flags() != 0);
        let _ = ts.entries().count();
    }

    // Stream framing, compression and reassembly: the path of a receiving link.
    for width in [PrefixWidth::U16, PrefixWidth::U32] {
        let mut pos = 0;
        let mut scratch = Vec::new();
        let mut defrag = Defragmenter::new(4096, Bits::U32, true);
        while let Ok(Some((start, batch))) = next_batch(bytes, pos, width) {
            prop_assert!(start + batch.len() <= bytes.len());
            pos = start + batch.len();
            let Ok(plain) = unwrap_batch(batch, &mut scratch, 2048) else {
                continue;
            };
            prop_assert!(plain.len() <= 2048);
            for item in BatchReader::new(plain) {
                let Ok(BatchItem::Transport(TransportMessage::Fragment(f))) = item else {
                    continue;
                };
                if let Ok(Defragmented::Complete(msg)) = defrag.push(&f.header, f.payload) {
                    prop_assert!(msg.len() <= 4096);
                    let _ = NetworkMessage::decode_exact(msg);
                }
            }
        }
    }
    Ok(())
}

/// A valid encoding of some message or batch, as the seed of a mutation.
fn valid_encoding() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        s::network().prop_map(|m| encoded(&m)),
        s::transport().prop_map(|m| encoded(&m)),
        s::scouting().prop_map(|m| encoded(&m)),
        s::push_body().prop_map(|m| encoded(&m)),
        s::ts_stack().prop_map(|t| t.as_bytes().to_vec()),
        vec(s::link_state(), 0..3).prop_map(|l| {
            let mut body = Vec::new();
            linkstate::encode_list(&l, &mut body).unwrap();
            body
        }),
    ]
}

/// One edit of a byte string: overwrite, insert, remove, or flip a bit.
#[derive(Debug, Clone)]
enum Edit {
    Set(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Flip(usize, u8),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Set(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<usize>().prop_map(Edit::Remove),
        (any::<usize>(), 0u8..8).prop_map(|(i, b)| Edit::Flip(i, b)),
    ]
}

fn apply(bytes: &mut Vec<u8>, e: &Edit) {
    let n = bytes.len();
    match *e {
        Edit::Set(i, b) if n > 0 => bytes[i % n] = b,
        Edit::Insert(i, b) => bytes.insert(i % (n + 1), b),
        Edit::Remove(i) if n > 0 => {
            bytes.remove(i % n);
        }
        Edit::Flip(i, bit) if n > 0 => bytes[i % n] ^= 1 << bit,
        _ => {}
    }
}

proptest! {
    #![proptest_config(config(2048))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in vec(any::<u8>(), 0..160)) {
        exercise(&bytes)?;
    }

    #[test]
    fn mutated_encodings_never_panic(mut bytes in valid_encoding(), edits in vec(edit(), 1..4)) {
        for e in &edits {
            apply(&mut bytes, e);
        }
        exercise(&bytes)?;
    }
}

proptest! {
    #![proptest_config(config(384))]

    #[test]
    fn truncated_network_and_scouting_messages_are_errors(
        net in s::network(),
        scouting in s::scouting(),
        body in s::push_body(),
    ) {
        let bytes = encoded(&net);
        for cut in 0..bytes.len() {
            let mut r = Reader::new(&bytes[..cut]);
            prop_assert!(NetworkMessage::decode(&mut r).is_err(), "{:?} cut at {}", net, cut);
        }
        let bytes = encoded(&scouting);
        for cut in 0..bytes.len() {
            prop_assert!(ScoutingMessage::decode(&bytes[..cut]).is_err(), "{:?} cut at {}", scouting, cut);
        }
        let bytes = encoded(&body);
        for cut in 0..bytes.len() {
            prop_assert!(PushBody::decode(&mut Reader::new(&bytes[..cut])).is_err());
        }
    }

    #[test]
    fn truncated_transport_messages_are_errors(m in s::transport_single()) {
        let bytes = encoded(&m);
        prop_assert!(BatchReader::new(&bytes[..0]).next().is_none());
        for cut in 1..bytes.len() {
            let first = BatchReader::new(&bytes[..cut]).next();
            prop_assert!(matches!(first, Some(Err(_))), "{:?} cut at {} gave {:?}", m, cut, first);
        }
    }

    #[test]
    fn truncated_frames_end_at_a_message_boundary_or_fail(f in s::frame()) {
        let mut bounds = vec![encoded(&f.header).len()];
        for m in &f.messages {
            bounds.push(bounds.last().unwrap() + encoded(m).len());
        }
        let bytes = encoded(&TransportMessage::Frame(f.clone()));
        for cut in 1..=bytes.len() {
            let got: Result<Vec<_>, _> = BatchReader::new(&bytes[..cut]).collect();
            match bounds.iter().position(|&b| b == cut) {
                Some(k) => {
                    let got = got.map_err(|e| TestCaseError::fail(format!("cut {cut}: {e}")))?;
                    prop_assert_eq!(got.len(), k + 1);
                    prop_assert_eq!(&got[0], &BatchItem::Frame(f.header.clone()));
                }
                None => prop_assert!(got.is_err(), "cut at {} decoded", cut),
            }
        }
    }

    #[test]
    fn truncated_fragments_fail_in_the_header_and_shorten_the_payload(f in s::fragment()) {
        let header_len = encoded(&f.header).len();
        let bytes = encoded(&TransportMessage::Fragment(f.clone()));
        for cut in 1..=bytes.len() {
            let got: Result<Vec<_>, _> = BatchReader::new(&bytes[..cut]).collect();
            if cut < header_len {
                prop_assert!(got.is_err());
            } else {
                let want = Fragment { header: f.header.clone(), payload: &f.payload[..cut - header_len] };
                prop_assert_eq!(
                    got.map_err(|e| TestCaseError::fail(format!("{e}")))?,
                    vec![BatchItem::Transport(TransportMessage::Fragment(want))]
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reassembly.

/// The SN after `sn` in a space of `max + 1` values.
fn sn_add(sn: u32, k: u64, max: u64) -> u32 {
    ((u64::from(sn) + k) % (max + 1)) as u32
}

fn bits() -> impl Strategy<Value = Bits> {
    proptest::sample::select(&[Bits::U8, Bits::U16, Bits::U32, Bits::U64][..])
}

proptest! {
    #![proptest_config(config(384))]

    #[test]
    fn fragments_reassemble_into_the_message(
        m in s::network(),
        cuts in vec(any::<usize>(), 0..6),
        sn_bits in bits(),
        start in any::<u32>(),
        markers in any::<bool>(),
        reliability in s::reliability(),
        priority in s::priority(),
    ) {
        let bytes = encoded(&m);
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.push(0);
        cuts.push(bytes.len());
        cuts.sort_unstable();
        cuts.dedup();
        let pieces: Vec<&[u8]> = cuts.windows(2).map(|w| &bytes[w[0]..w[1]]).collect();
        let max = sn_bits.max_sn();
        let start = (u64::from(start) % (max + 1)) as u32;

        let mut d = Defragmenter::new(bytes.len(), sn_bits, markers);
        for (k, piece) in pieces.iter().enumerate() {
            let mut h = FragmentHeader::new(reliability, priority, sn_add(start, k as u64, max), k + 1 < pieces.len());
            h.first = k == 0;
            // Each fragment travels alone in a batch and is decoded from it.
            let wire = encoded(&TransportMessage::Fragment(Fragment { header: h, payload: piece }));
            let got = items(&wire, false).map_err(TestCaseError::fail)?;
            let [BatchItem::Transport(TransportMessage::Fragment(f))] = &got[..] else {
                return Err(TestCaseError::fail(format!("{got:?}")));
            };
            match d.push(&f.header, f.payload) {
                Ok(Defragmented::Pending) => prop_assert!(k + 1 < pieces.len()),
                Ok(Defragmented::Complete(whole)) => {
                    prop_assert_eq!(k + 1, pieces.len());
                    prop_assert_eq!(whole, &bytes[..]);
                    let back = NetworkMessage::decode_exact(whole).map_err(|e| TestCaseError::fail(format!("{e}")))?;
                    prop_assert_eq!(&back, &m);
                }
                other => return Err(TestCaseError::fail(format!("fragment {k}: {other:?}"))),
            }
        }
        prop_assert!(!d.is_pending());
        prop_assert_eq!(d.buffered(), 0);
    }

    #[test]
    fn a_gap_discards_the_partial_message(
        m in s::network(),
        sent in 1usize..4,
        skip in any::<u64>(),
        sn_bits in bits(),
        start in any::<u32>(),
        markers in any::<bool>(),
    ) {
        let bytes = encoded(&m);
        let max = sn_bits.max_sn();
        let start = (u64::from(start) % (max + 1)) as u32;
        let mut d = Defragmenter::new(usize::MAX, sn_bits, markers);
        let piece = &bytes[..bytes.len().min(3)];
        for k in 0..sent {
            let mut h = FragmentHeader::new(Reliability::Reliable, Priority::Data, sn_add(start, k as u64, max), true);
            h.first = k == 0;
            prop_assert_eq!(d.push(&h, piece), Ok(Defragmented::Pending));
        }
        let expected = sn_add(start, sent as u64, max);
        // Any SN but the expected one is a gap.
        let got = sn_add(expected, 1 + skip % max, max);
        let h = FragmentHeader::new(Reliability::Reliable, Priority::Data, got, false);
        prop_assert_eq!(d.push(&h, piece), Err(DefragError::Gap { expected, got }));
        prop_assert!(!d.is_pending());
        prop_assert_eq!(d.buffered(), 0);
        // What follows the gap without a First marker has no start.
        let h = FragmentHeader::new(Reliability::Reliable, Priority::Data, sn_add(got, 1, max), false);
        if markers {
            let r = d.push(&h, piece);
            prop_assert!(matches!(r, Err(DefragError::NoStart { .. })), "{:?}", r);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Link-state lists.

proptest! {
    #![proptest_config(config(384))]

    #[test]
    fn link_state_lists_round_trip_and_truncate_to_errors(
        list in vec(s::link_state(), 0..4),
        qos in s::net_qos(),
    ) {
        let mut body = Vec::new();
        linkstate::encode_list(&list, &mut body).unwrap();
        let d = linkstate::decode_list(&body).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(&d, &list);
        let mut again = Vec::new();
        linkstate::encode_list(&d, &mut again).unwrap();
        prop_assert_eq!(&again, &body);
        for cut in 0..body.len() {
            prop_assert!(linkstate::decode_list(&body[..cut]).is_err(), "cut at {}", cut);
        }
        // Carried by a network OAM message, as routers send it.
        let oam = NetworkMessage::Oam(NetworkOam {
            id: NetworkOam::LINK_STATE,
            qos,
            timestamp: None,
            unknown: Vec::new(),
            body: ExtBody::ZBuf(&body),
        });
        let bytes = encoded(&oam);
        let d = NetworkMessage::decode_exact(&bytes).map_err(|e| TestCaseError::fail(format!("{e}")))?;
        let NetworkMessage::Oam(NetworkOam { body: ExtBody::ZBuf(b), .. }) = d else {
            return Err(TestCaseError::fail(format!("{d:?}")));
        };
        prop_assert_eq!(linkstate::decode_list(b).map_err(|e| TestCaseError::fail(format!("{e}")))?, list);
    }
}

// ---------------------------------------------------------------------------------------
// Fields at and one past their bounds.

fn zid() -> ZenohId {
    ZenohId::new(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10).unwrap()
}

#[test]
fn fields_at_their_bounds_round_trip() {
    let suffix = "k".repeat(usize::from(u16::MAX));
    let schema = vec![7u8; 255];
    let locator = "l".repeat(255);
    let cookie = vec![9u8; usize::from(u16::MAX)];

    let put = Put {
        encoding: Encoding {
            id: u16::MAX,
            schema: Some(&schema),
        },
        ..Put::new(b"x")
    };
    let push = NetworkMessage::Push(Push::new(
        WireExpr {
            scope: u16::MAX,
            ..WireExpr::key(&suffix)
        },
        PushBody::Put(put),
    ));
    let bytes = encoded(&push);
    assert_eq!(NetworkMessage::decode_exact(&bytes).unwrap(), push);

    let hello = ScoutingMessage::Hello(Hello {
        version: 9,
        whatami: WhatAmI::Router,
        zid: zid(),
        locators: vec![&locator, ""],
        unknown: Vec::new(),
    });
    // An empty locator is valid too (zero length).
    let bytes = encoded(&hello);
    assert_eq!(ScoutingMessage::decode(&bytes).unwrap(), hello);

    let mut init = Init::syn(WhatAmI::Peer, zid());
    init.cookie = Some(&cookie);
    init.batch_size = 0;
    let open = Open::syn(u64::MAX, u32::MAX, &cookie);
    for m in [TransportMessage::Init(init), TransportMessage::Open(open)] {
        let bytes = encoded(&m);
        assert_eq!(
            decode_batch(&bytes, false).unwrap(),
            vec![BatchMessage::Transport(m)]
        );
    }
}

#[test]
fn fields_past_their_bounds_are_refused_both_ways() {
    let suffix = "k".repeat(usize::from(u16::MAX) + 1);
    let schema = vec![7u8; 256];
    let locator = "l".repeat(256);
    let cookie = vec![9u8; usize::from(u16::MAX) + 1];
    let out_of_bounds =
        |r: Result<(), EncodeError>| matches!(r, Err(EncodeError::OutOfBounds { .. }));

    let push = Push::new(WireExpr::key(&suffix), PushBody::Put(Put::new(b"")));
    assert!(out_of_bounds(push.encode(&mut Vec::new())));
    let put = Put {
        encoding: Encoding {
            id: 1,
            schema: Some(&schema),
        },
        ..Put::new(b"")
    };
    assert!(out_of_bounds(put.encode(&mut Vec::new())));
    let hello = Hello {
        version: 9,
        whatami: WhatAmI::Client,
        zid: zid(),
        locators: vec![&locator],
        unknown: Vec::new(),
    };
    assert!(out_of_bounds(hello.encode(&mut Vec::new())));
    assert!(out_of_bounds(
        Open::syn(1, 1, &cookie).encode(&mut Vec::new())
    ));
    let mut init = Init::syn(WhatAmI::Client, zid());
    init.cookie = Some(&cookie);
    assert!(out_of_bounds(init.encode(&mut Vec::new())));

    // The decoders refuse the same lengths, announced by hand-built headers.
    // Push, N and M flags, scope 0, suffix length 65536.
    let mut bytes = vec![0x7d, 0x00];
    bytes.zbytes(suffix.as_bytes()).unwrap();
    let e = NetworkMessage::decode_exact(&bytes).unwrap_err();
    assert!(
        matches!(e.kind, DecodeErrorKind::OutOfBounds { value: 65536, .. }),
        "{e}"
    );
    assert_eq!(e.offset, 2);
    // Put with E flag: encoding id 1 with schema (0x03), schema length 256.
    let mut bytes = vec![0x41, 0x03];
    bytes.zbytes(&schema).unwrap();
    let e = PushBody::decode(&mut Reader::new(&bytes)).unwrap_err();
    assert!(
        matches!(e.kind, DecodeErrorKind::OutOfBounds { value: 256, .. }),
        "{e}"
    );
    // A request id over 32 bits (ResponseFinal, id 2^35 - 1).
    let e = NetworkMessage::decode_exact(&[0x1a, 0xff, 0xff, 0xff, 0xff, 0x7f]).unwrap_err();
    assert!(
        matches!(
            e.kind,
            DecodeErrorKind::OutOfBounds {
                field: "request id",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn frames_carry_messages_until_a_transport_header() {
    // A Frame, one Push, then a KeepAlive: the KeepAlive ends the Frame.
    let push = NetworkMessage::Push(Push::new(WireExpr::key("a"), PushBody::Put(Put::new(b"v"))));
    let header = FrameHeader::new(Reliability::BestEffort, Priority::RealTime, 0x0FFF_FFFF);
    let mut bytes = encoded(&header);
    bytes.extend(encoded(&push));
    bytes.push(0x04);
    let got = items(&bytes, false).unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], BatchItem::Frame(header));
    assert_eq!(got[1], BatchItem::Network(push.clone()));
    assert!(matches!(
        got[2],
        BatchItem::Transport(TransportMessage::KeepAlive(_))
    ));
    // Outside a Frame a network message is only accepted on a low-latency link.
    let bare = encoded(&push);
    assert!(items(&bare, false).is_err());
    assert_eq!(items(&bare, true).unwrap(), vec![BatchItem::Network(push)]);
}
