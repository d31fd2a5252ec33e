//! Runs one benchmark body in a loop, outside criterion, for instruction counts:
//!
//! ```sh
//! cargo build --release --example profile
//! valgrind --tool=callgrind target/release/examples/profile <case> <operation> <codec> [iterations]
//! ```
//!
//! `<case>` is `push_8B`, `push_64KiB` or `batch_100x8B`; `<operation>` is `encode`,
//! `encode_fixed`, `encode_zero_copy` (one message per batch only) or `decode`; `<codec>` is `weft` or `zenoh`. Two runs with different
//! iteration counts give the instructions per operation by difference.
//!
//! With a fifth argument `time`, it runs fifteen rounds and prints the fastest round's time
//! per iteration: a quick comparison that is robust to other work on the machine.

#[path = "../support/zenoh.rs"]
mod zenoh;

use std::hint::black_box;

use weft_bench_codec::{
    payload, weft_decode, weft_encode, weft_encode_zero_copy, weft_header, weft_push, CASES,
};
use zenoh_buffers::ZSlice;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: profile <case> <encode|encode_fixed|encode_zero_copy|decode> <weft|zenoh> [iterations] [time]";
    let (Some(name), Some(op), Some(side)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let iterations: usize = args.get(3).map_or(100_000, |n| n.parse().expect(usage));
    let case = CASES
        .iter()
        .find(|c| c.name == name.as_str())
        .expect("unknown case");

    let data = payload(case.payload_len);
    let (w_header, w_push) = (weft_header(), weft_push(&data));
    let (z_header, z_push) = (zenoh::header(), zenoh::push_put(&data));
    let mut bytes = Vec::new();
    weft_encode(&mut bytes, &w_header, &w_push, case.count).unwrap();
    let zslice = ZSlice::from(bytes.clone());
    let mut buf: Vec<u8> = Vec::with_capacity(bytes.len());

    let timed = args.get(4).is_some_and(|a| a == "time");
    let rounds = if timed { 15 } else { 1 };
    let mut best = f64::INFINITY;
    for _ in 0..rounds {
        let start = std::time::Instant::now();
        run(
            iterations,
            op,
            side,
            case.count,
            &mut buf,
            &bytes,
            &zslice,
            (&w_header, &w_push),
            (&z_header, &z_push),
        );
        best = best.min(start.elapsed().as_secs_f64() * 1e9 / iterations as f64);
    }
    if timed {
        println!("{name} {op} {side}: {best:.1} ns/iteration (best of {rounds})");
    }
}

#[allow(clippy::too_many_arguments)]
fn run(
    iterations: usize,
    op: &str,
    side: &str,
    count: usize,
    buf: &mut Vec<u8>,
    bytes: &[u8],
    zslice: &ZSlice,
    (w_header, w_push): (
        &weft_proto::transport::FrameHeader<'_>,
        &weft_proto::network::Push<'_>,
    ),
    (z_header, z_push): (
        &zenoh_protocol::transport::FrameHeader,
        &zenoh_protocol::network::Push,
    ),
) {
    match (op, side) {
        ("encode", "weft") => {
            for _ in 0..iterations {
                buf.clear();
                weft_encode(buf, black_box(w_header), w_push, count).unwrap();
                black_box(&buf);
            }
        }
        ("encode", "zenoh") => {
            for _ in 0..iterations {
                buf.clear();
                zenoh::encode(buf, black_box(z_header), z_push, count).unwrap();
                black_box(&buf);
            }
        }
        ("encode_fixed", "weft") => {
            let mut storage = vec![0u8; bytes.len()];
            for _ in 0..iterations {
                let mut w = weft_proto::SliceWriter::new(&mut storage);
                weft_encode(&mut w, black_box(w_header), w_push, count).unwrap();
                black_box(&w);
            }
        }
        ("encode_fixed", "zenoh") => {
            let mut bbuf = zenoh_buffers::BBuf::with_capacity(bytes.len());
            for _ in 0..iterations {
                bbuf.clear();
                zenoh::encode(&mut bbuf, black_box(z_header), z_push, count).unwrap();
                black_box(&bbuf);
            }
        }
        ("encode_zero_copy", "weft") => {
            let msg = weft_proto::network::NetworkMessage::Push(w_push.clone());
            for _ in 0..iterations {
                buf.clear();
                let split = weft_encode_zero_copy(buf, black_box(w_header), &msg).unwrap();
                black_box((buf.as_slice(), split));
            }
        }
        ("encode_zero_copy", "zenoh") => {
            let mut zbuf = zenoh_buffers::ZBuf::empty();
            for _ in 0..iterations {
                zenoh::encode_zero_copy(&mut zbuf, black_box(z_header), z_push).unwrap();
                black_box(&zbuf);
            }
        }
        ("decode", "weft") => {
            for _ in 0..iterations {
                black_box(weft_decode(black_box(bytes)).unwrap());
            }
        }
        ("decode", "zenoh") => {
            for _ in 0..iterations {
                black_box(zenoh::decode(black_box(zslice)).unwrap());
            }
        }
        _ => panic!(
            "usage: profile <case> <encode|encode_fixed|encode_zero_copy|decode> <weft|zenoh> [iterations] [time]"
        ),
    }
}
