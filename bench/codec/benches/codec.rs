//! Encoding and decoding of Frame + Push/Put batches, weft-proto side by side with the
//! Zenoh reference codec (zenoh-codec 1.10.2), in the same run.
//!
//! Benchmark ids are `<case>/<operation>/<codec>`:
//! - `encode`: into a reused `Vec<u8>` on both sides (cleared each iteration, so nothing is
//!   allocated once it has grown);
//! - `encode_fixed`: into a reused fixed buffer, as a transport fills its batch buffer:
//!   weft's `SliceWriter` over an array, Zenoh's `BBuf`;
//! - `decode`: the whole batch, every message, every payload handed to `black_box`: weft
//!   through `BatchReader`, Zenoh through `FrameReader` over a `ZSlice`, as its transport
//!   reads a received batch.
//!
//! - `encode_zero_copy` (64 KiB only): the message taken as each transport takes one it
//!   will fragment, its payload kept by reference: weft's `encode_split` into a reused
//!   `Vec<u8>`, Zenoh's codec into a reused `ZBuf` (its fragmentation buffer).
//!
//! `push_64KiB/encode/copy_only` is the floor of that case: the payload copied into the
//! `Vec<u8>`, nothing else. Results and how to read them: `bench/RESULTS.md`.
//!
//! Encoded buffers go to `black_box` by reference, on both sides. Handing over the slice
//! itself made the loop load its pointer and length as one 16-byte value right after the
//! encoder had stored the length: a store-forwarding stall of about 6 ns per iteration
//! that belongs to the harness, not to either codec.

#[path = "../support/zenoh.rs"]
mod zenoh;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use weft_bench_codec::{
    payload, weft_decode, weft_encode, weft_encode_zero_copy, weft_header, weft_push, CASES,
};
use weft_proto::network::NetworkMessage;
use weft_proto::SliceWriter;
use zenoh_buffers::{BBuf, ZBuf, ZSlice};

fn codec(c: &mut Criterion) {
    for case in CASES {
        let data = payload(case.payload_len);
        let w_header = weft_header();
        let w_push = weft_push(&data);
        let z_header = zenoh::header();
        let z_push = zenoh::push_put(&data);

        let mut bytes = Vec::new();
        weft_encode(&mut bytes, &w_header, &w_push, case.count).unwrap();
        let mut check = Vec::new();
        zenoh::encode(&mut check, &z_header, &z_push, case.count).unwrap();
        assert_eq!(
            bytes, check,
            "{}: the codecs disagree on the bytes",
            case.name
        );
        let expected = weft_decode(&bytes).unwrap();
        assert_eq!(expected.puts, case.count);
        assert_eq!(
            zenoh::decode(&ZSlice::from(bytes.clone())).unwrap(),
            expected
        );

        let mut g = c.benchmark_group(format!("{}/encode", case.name));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        let mut buf: Vec<u8> = Vec::with_capacity(bytes.len());
        g.bench_function("weft", |b| {
            b.iter(|| {
                buf.clear();
                weft_encode(&mut buf, black_box(&w_header), &w_push, case.count).unwrap();
                black_box(&buf);
            })
        });
        g.bench_function("zenoh", |b| {
            b.iter(|| {
                buf.clear();
                zenoh::encode(&mut buf, black_box(&z_header), &z_push, case.count).unwrap();
                black_box(&buf);
            })
        });
        if case.payload_len > 1024 {
            g.bench_function("copy_only", |b| {
                b.iter(|| {
                    buf.clear();
                    buf.extend_from_slice(black_box(&data));
                    black_box(&buf);
                })
            });
        }
        g.finish();

        let mut g = c.benchmark_group(format!("{}/encode_fixed", case.name));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        let mut storage = vec![0u8; bytes.len()];
        g.bench_function("weft", |b| {
            b.iter(|| {
                let mut w = SliceWriter::new(&mut storage);
                weft_encode(&mut w, black_box(&w_header), &w_push, case.count).unwrap();
                black_box(&w);
            })
        });
        let mut bbuf = BBuf::with_capacity(bytes.len());
        g.bench_function("zenoh", |b| {
            b.iter(|| {
                bbuf.clear();
                zenoh::encode(&mut bbuf, black_box(&z_header), &z_push, case.count).unwrap();
                black_box(&bbuf);
            })
        });
        g.finish();

        // Payload by reference: the way both transports take a message they fragment.
        if case.count == 1 && case.payload_len > 1024 {
            let msg = NetworkMessage::Push(w_push.clone());
            let mut head = Vec::new();
            let split = weft_encode_zero_copy(&mut head, &w_header, &msg).unwrap();
            assert_eq!(split.parts(&head).concat(), bytes, "weft, zero copy");
            let mut zbuf = ZBuf::empty();
            zenoh::encode_zero_copy(&mut zbuf, &z_header, &z_push).unwrap();
            assert_eq!(zbuf.to_zslice().as_slice(), &bytes[..], "Zenoh, zero copy");

            let mut g = c.benchmark_group(format!("{}/encode_zero_copy", case.name));
            g.throughput(Throughput::Bytes(bytes.len() as u64));
            g.bench_function("weft", |b| {
                b.iter(|| {
                    head.clear();
                    let split =
                        weft_encode_zero_copy(&mut head, black_box(&w_header), &msg).unwrap();
                    black_box((&head, &split));
                })
            });
            g.bench_function("zenoh", |b| {
                b.iter(|| {
                    zenoh::encode_zero_copy(&mut zbuf, black_box(&z_header), &z_push).unwrap();
                    black_box(&zbuf);
                })
            });
            g.finish();
        }

        let mut g = c.benchmark_group(format!("{}/decode", case.name));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function("weft", |b| {
            b.iter(|| black_box(weft_decode(black_box(&bytes)).unwrap()))
        });
        let zslice = ZSlice::from(bytes.clone());
        g.bench_function("zenoh", |b| {
            b.iter(|| black_box(zenoh::decode(black_box(&zslice)).unwrap()))
        });
        g.finish();
    }
}

criterion_group!(benches, codec);
criterion_main!(benches);
