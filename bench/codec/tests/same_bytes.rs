//! Both codecs must do the same work: for every benchmarked case they produce the same
//! bytes, and each decodes the other's batch to the same messages.

#[path = "../support/zenoh.rs"]
mod zenoh;

use weft_bench_codec::{payload, weft_decode, weft_encode, weft_header, weft_push, Walked, CASES};
use zenoh_buffers::{BBuf, ZSlice};

#[test]
fn both_codecs_write_the_same_bytes() {
    for case in CASES {
        let data = payload(case.payload_len);

        let mut ours = Vec::new();
        weft_encode(&mut ours, &weft_header(), &weft_push(&data), case.count).unwrap();

        let mut theirs = Vec::new();
        zenoh::encode(
            &mut theirs,
            &zenoh::header(),
            &zenoh::push_put(&data),
            case.count,
        )
        .unwrap();

        assert_eq!(ours, theirs, "case {}", case.name);

        // The fixed buffers a transport batches into: the same bytes again.
        let mut storage = vec![0u8; ours.len()];
        let mut w = weft_proto::SliceWriter::new(&mut storage);
        weft_encode(&mut w, &weft_header(), &weft_push(&data), case.count).unwrap();
        assert_eq!(w.as_slice(), &ours[..], "case {}, SliceWriter", case.name);
        let mut bbuf = BBuf::with_capacity(ours.len());
        zenoh::encode(
            &mut bbuf,
            &zenoh::header(),
            &zenoh::push_put(&data),
            case.count,
        )
        .unwrap();
        assert_eq!(bbuf.as_slice(), &ours[..], "case {}, BBuf", case.name);
    }
}

#[test]
fn both_zero_copy_encodings_are_the_same_bytes() {
    let data = payload(64 * 1024);
    let expected = {
        let mut v = Vec::new();
        weft_encode(&mut v, &weft_header(), &weft_push(&data), 1).unwrap();
        v
    };
    let msg = weft_proto::network::NetworkMessage::Push(weft_push(&data));
    let mut head = Vec::new();
    let split = weft_bench_codec::weft_encode_zero_copy(&mut head, &weft_header(), &msg).unwrap();
    assert_eq!(
        split.bulk.len(),
        data.len(),
        "the payload is left out of the head"
    );
    assert_eq!(split.parts(&head).concat(), expected);
    let mut zbuf = zenoh_buffers::ZBuf::empty();
    zenoh::encode_zero_copy(&mut zbuf, &zenoh::header(), &zenoh::push_put(&data)).unwrap();
    assert_eq!(zbuf.to_zslice().as_slice(), &expected[..]);
}

#[test]
fn the_small_case_is_the_expected_frame() {
    let data = payload(8);
    let mut bytes = Vec::new();
    weft_encode(&mut bytes, &weft_header(), &weft_push(&data), 1).unwrap();
    let mut expected = vec![
        0x25, // Frame, R (reliable), no extension (priority Data)
        0xb9, 0x60, // SN 12345 as a zint
        0x5d, // Push, M (sender's mapping), no suffix, no extension
        0x07, // key-expression id 7
        0x01, // Put, no timestamp, default encoding, no extension
        0x08, // payload length
    ];
    expected.extend_from_slice(&data);
    assert_eq!(bytes, expected);
}

#[test]
fn each_codec_reads_the_whole_batch_of_the_other() {
    for case in CASES {
        let data = payload(case.payload_len);
        let expected = Walked {
            frames: 1,
            puts: case.count,
            payload_bytes: case.count * case.payload_len,
        };

        let mut ours = Vec::new();
        weft_encode(&mut ours, &weft_header(), &weft_push(&data), case.count).unwrap();
        let mut theirs = Vec::new();
        zenoh::encode(
            &mut theirs,
            &zenoh::header(),
            &zenoh::push_put(&data),
            case.count,
        )
        .unwrap();

        assert_eq!(
            weft_decode(&theirs).unwrap(),
            expected,
            "weft reading {}",
            case.name
        );
        let zs = ZSlice::from(ours);
        assert_eq!(
            zenoh::decode(&zs).unwrap(),
            expected,
            "Zenoh reading {}",
            case.name
        );
    }
}
