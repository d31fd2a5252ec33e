//! Zenoh counterpart of `weft pong`: echoes every sample of `test/ping` on `test/pong`
//! (express, congestion control block) until SIGINT or SIGTERM, or `--max-seconds`.

use std::time::{Duration, Instant};

use weft_bench_compare::Args;
use zenoh::qos::CongestionControl;
use zenoh::Wait;

const USAGE: &str = "zpong [-m client|peer] [-e ENDPOINT] [-l ENDPOINT] \
[--no-multicast-scouting] [--max-seconds S]";

fn main() {
    let args = Args::parse(USAGE);
    let max_seconds: f64 = args.get("--max-seconds", 600.0);
    let session = zenoh::open(args.zenoh_config()).wait().unwrap_or_else(|e| {
        eprintln!("zpong: {e}");
        std::process::exit(1)
    });
    let publisher = session
        .declare_publisher("test/pong")
        .congestion_control(CongestionControl::Block)
        .express(true)
        .wait()
        .unwrap_or_else(|e| {
            eprintln!("zpong: {e}");
            std::process::exit(1)
        });
    let subscriber = session
        .declare_subscriber("test/ping")
        .callback(move |s| {
            let _ = publisher.put(s.payload().clone()).wait();
        })
        .wait()
        .unwrap_or_else(|e| {
            eprintln!("zpong: {e}");
            std::process::exit(1)
        });
    // Killed by the caller; the deadline bounds a forgotten process.
    let deadline = Instant::now() + Duration::from_secs_f64(max_seconds);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(subscriber);
    let _ = session.close().wait();
}
