//! Zenoh counterpart of `weft ping`: puts SIZE bytes on `test/ping` (express, congestion
//! control block), waits for the echo on `test/pong`, and prints one-way latency (half the
//! round trip) as `p50_us=… p99_us=…`, after 100 warm-up round trips.

use std::time::{Duration, Instant};

use weft_bench_compare::{print_latency, Args};
use zenoh::qos::CongestionControl;
use zenoh::Wait;

const USAGE: &str = "zping SIZE [-m client|peer] [-e ENDPOINT] [-l ENDPOINT] \
[--no-multicast-scouting] [--samples N]";

fn main() {
    let args = Args::parse(USAGE);
    let size: usize = args.positional(0, "SIZE", USAGE);
    let samples: usize = args.get("--samples", 1000);
    let session = zenoh::open(args.zenoh_config()).wait().unwrap_or_else(|e| {
        eprintln!("zping: {e}");
        std::process::exit(1)
    });
    let pongs = session
        .declare_subscriber("test/pong")
        .wait()
        .unwrap_or_else(|e| {
            eprintln!("zping: {e}");
            std::process::exit(1)
        });
    let publisher = session
        .declare_publisher("test/ping")
        .congestion_control(CongestionControl::Block)
        .express(true)
        .wait()
        .unwrap_or_else(|e| {
            eprintln!("zping: {e}");
            std::process::exit(1)
        });
    let payload = zenoh::bytes::ZBytes::from(vec![0x5Au8; size]);
    let mut answered = false;
    for _ in 0..100 {
        let _ = publisher.put(payload.clone()).wait();
        if let Ok(Some(_)) = pongs.recv_timeout(Duration::from_millis(100)) {
            answered = true;
            break;
        }
    }
    if !answered {
        eprintln!("zping: no pong answered within 10 s");
        std::process::exit(1);
    }
    while let Ok(Some(_)) = pongs.try_recv() {}
    let mut one_way = Vec::with_capacity(samples);
    for i in 0..samples + 100 {
        let start = Instant::now();
        if publisher.put(payload.clone()).wait().is_err() {
            break;
        }
        match pongs.recv_timeout(Duration::from_secs(5)) {
            Ok(Some(_)) => {}
            _ => {
                eprintln!("zping: a pong was lost");
                std::process::exit(1);
            }
        }
        if i >= 100 {
            one_way.push(start.elapsed().as_secs_f64() * 1e6 / 2.0);
        }
    }
    if one_way.is_empty() {
        eprintln!("zping: no sample");
        std::process::exit(1);
    }
    print_latency(one_way, size);
    drop(publisher);
    drop(pongs);
    let _ = session.close().wait();
}
