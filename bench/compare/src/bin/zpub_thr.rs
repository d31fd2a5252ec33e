//! Zenoh counterpart of `weft pub-thr`: publishes SIZE-byte samples on `test/thr` as fast as
//! possible (congestion control block) for `--duration` seconds.

use std::time::{Duration, Instant};

use weft_bench_compare::{put_seq, Args};
use zenoh::qos::{CongestionControl, Priority};
use zenoh::Wait;

const USAGE: &str = "zpub_thr SIZE [-m client|peer] [-e ENDPOINT] [-l ENDPOINT] \
[--no-multicast-scouting] [--priority 1..7] [--express] [--duration SECONDS] [--seq]";

fn main() {
    let args = Args::parse(USAGE);
    let size: usize = args.positional(0, "SIZE", USAGE);
    let duration: f64 = args.get("--duration", 10.0);
    let priority = match args.get::<u8>("--priority", 5) {
        1 => Priority::RealTime,
        2 => Priority::InteractiveHigh,
        3 => Priority::InteractiveLow,
        4 => Priority::DataHigh,
        5 => Priority::Data,
        6 => Priority::DataLow,
        7 => Priority::Background,
        p => {
            eprintln!("--priority: 1 to 7, not {p}");
            std::process::exit(2);
        }
    };
    let session = zenoh::open(args.zenoh_config()).wait().unwrap_or_else(|e| {
        eprintln!("zpub_thr: {e}");
        std::process::exit(1)
    });
    let publisher = session
        .declare_publisher("test/thr")
        .congestion_control(CongestionControl::Block)
        .priority(priority)
        .express(args.flag("--express"))
        .wait()
        .unwrap_or_else(|e| {
            eprintln!("zpub_thr: {e}");
            std::process::exit(1)
        });
    let seq = args.flag("--seq");
    if seq && size < 8 {
        eprintln!("zpub_thr: --seq needs SIZE of 8 bytes or more");
        std::process::exit(2);
    }
    let mut numbered = vec![0xA5u8; size];
    let payload = zenoh::bytes::ZBytes::from(numbered.clone());
    let deadline = Instant::now() + Duration::from_secs_f64(duration);
    let mut sent = 0u64;
    'outer: while Instant::now() < deadline {
        for _ in 0..1000 {
            let p = if seq {
                put_seq(&mut numbered, sent);
                zenoh::bytes::ZBytes::from(numbered.clone())
            } else {
                payload.clone()
            };
            if publisher.put(p).wait().is_err() {
                break 'outer;
            }
            sent += 1;
        }
    }
    println!("sent={sent} payload={size}");
    drop(publisher);
    let _ = session.close().wait();
}
