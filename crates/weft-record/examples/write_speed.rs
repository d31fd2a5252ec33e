//! How fast a recording's file is written, without a network: `COUNT` samples of `SIZE`
//! bytes written through [`weft_record::Recorder`] into a file, per compression; prints
//! samples/s and MB/s of payload. `bench/record.sh` runs it beside the end-to-end rows.
//! Payloads are constant bytes (as `weft pub-thr`'s), or pseudo-random bytes that do not
//! compress with `WRITE_SPEED_RANDOM=1`.
//!
//! Usage: `write_speed SIZE COUNT DIR [zstd|lz4|none ...]`

use std::fs::File;
use std::io::BufWriter;
use std::time::Instant;

use weft::SampleKind;
use weft_record::{Compression, Recorder, SampleRef};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: write_speed SIZE COUNT DIR [zstd|lz4|none ...]");
        std::process::exit(2);
    }
    let size: usize = args[1].parse().expect("SIZE: a number of bytes");
    let count: u64 = args[2].parse().expect("COUNT: a number of samples");
    let dir = std::path::PathBuf::from(&args[3]);
    let compressions: Vec<Compression> = if args.len() > 4 {
        args[4..]
            .iter()
            .map(|c| c.parse().expect("a compression"))
            .collect()
    } else {
        Compression::ALL.to_vec()
    };
    let payload = if std::env::var_os("WRITE_SPEED_RANDOM").is_some() {
        noise(size)
    } else {
        vec![0xA5u8; size]
    };
    for compression in compressions {
        let path = dir.join(format!("write_speed.{}.mcap", compression.as_str()));
        let file = File::create(&path).expect("a file in DIR");
        let mut recorder =
            Recorder::create(BufWriter::with_capacity(1 << 20, file), compression).unwrap();
        let started = Instant::now();
        for i in 0..count {
            recorder
                .write_ref(SampleRef {
                    key: "test/thr",
                    encoding: "zenoh/bytes",
                    kind: SampleKind::Put,
                    payload: &payload,
                    attachment: None,
                    time_ns: i,
                })
                .unwrap();
        }
        recorder.finish().unwrap();
        let seconds = started.elapsed().as_secs_f64();
        let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
        let _ = std::fs::remove_file(&path);
        println!(
            "compression={} size={size} random={} samples={count} seconds={seconds:.3} \
             samples_per_s={:.0} mb_per_s={:.1} file_mb={:.1}",
            compression.as_str(),
            std::env::var_os("WRITE_SPEED_RANDOM").is_some(),
            count as f64 / seconds,
            count as f64 * size as f64 / seconds / 1e6,
            bytes as f64 / 1e6
        );
    }
}

/// `len` pseudo-random bytes (xorshift64): data no compressor shrinks.
fn noise(len: usize) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 56) as u8
        })
        .collect()
}
