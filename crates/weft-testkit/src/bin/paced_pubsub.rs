//! A publisher at a fixed rate and a normal subscriber, two weft client sessions of a router
//! on 127.0.0.1: the measuring side of the slow-subscriber benchmark
//! (`bench/slow_subscriber.sh`), the same for weftd and zenohd.
//!
//! Usage: `paced_pubsub PORT KEY SIZE RATE SECONDS`.
//!
//! The subscriber listens on `KEY/**`. The publisher puts SIZE-byte samples on `KEY/data`
//! with congestion control `drop`, RATE per second for SECONDS (RATE × SECONDS samples, each
//! sent at its time; never faster), after a warm-up of empty samples on the same key that
//! lasts until the subscriber has one (so the router routes the key to it). Then it puts a
//! marker on `KEY/end` (congestion control `block`) and waits for the subscriber to get it:
//! every sample that will ever arrive has arrived then. Prints `published=N received=M
//! share=P publisher_drops=D stream_seconds=T marker=yes|no`: P is M / N in percent, D the
//! samples the publisher's own session dropped (its link to the router congested). Bounded:
//! 10 s for the warm-up, 2 × SECONDS + 5 s for the stream, 30 s for the marker.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft::{CongestionControl, PutOptions};
use weft_testkit::weft_client;

fn arg<T: std::str::FromStr>(args: &[String], i: usize, name: &str) -> Result<T, String> {
    let v = args.get(i).ok_or_else(|| format!("missing {name}"))?;
    v.parse().map_err(|_| format!("{name}: not valid: {v}"))
}

/// What the normal subscriber counted.
#[derive(Default)]
struct Counts {
    warm_up: AtomicU64,
    data: AtomicU64,
    markers: AtomicU64,
}

/// Waits until `count` is above zero, `within` at most; returns whether it is.
fn wait_for(count: &AtomicU64, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while count.load(Ordering::SeqCst) == 0 {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

fn run(args: &[String]) -> Result<(), String> {
    let port: u16 = arg(args, 1, "PORT")?;
    let key: String = arg(args, 2, "KEY")?;
    let size: usize = arg(args, 3, "SIZE")?;
    let rate: u64 = arg(args, 4, "RATE")?;
    let seconds: u64 = arg(args, 5, "SECONDS")?;
    if size == 0 || rate == 0 || !(1..=600).contains(&seconds) {
        return Err("SIZE and RATE must be positive, SECONDS 1 to 600".into());
    }
    let data_key = format!("{key}/data");
    let end_key = format!("{key}/end");

    let subscriber = weft_client(port).map_err(|e| format!("subscriber: {e}"))?;
    let counts = Arc::new(Counts::default());
    let c = counts.clone();
    let data = data_key.clone();
    let _sub = subscriber
        .declare_subscriber(&format!("{key}/**"), move |s| {
            let counter = if s.key_expr.as_str() != data {
                &c.markers
            } else if s.payload.is_empty() {
                &c.warm_up
            } else {
                &c.data
            };
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .map_err(|e| format!("subscriber: {e}"))?;

    let session = weft_client(port).map_err(|e| format!("publisher: {e}"))?;
    let options = PutOptions {
        congestion_control: CongestionControl::Drop,
        ..PutOptions::default()
    };
    let publisher = session
        .declare_publisher(&data_key, options)
        .map_err(|e| format!("publisher: {e}"))?;

    let warm_up_until = Instant::now() + Duration::from_secs(10);
    while !wait_for(&counts.warm_up, Duration::from_millis(20)) {
        if Instant::now() > warm_up_until {
            return Err("the subscriber got no warm-up sample in 10 s".into());
        }
        publisher.put(&[]).map_err(|e| format!("warm-up: {e}"))?;
    }

    let payload = vec![0x5Au8; size];
    let total = rate * seconds;
    let start = Instant::now();
    let hard_stop = start + Duration::from_secs(2 * seconds + 5);
    let mut published = 0u64;
    for i in 0..total {
        let due = start + Duration::from_secs_f64(i as f64 / rate as f64);
        let now = Instant::now();
        if now > hard_stop {
            break;
        }
        if due > now {
            std::thread::sleep(due - now);
        }
        publisher
            .put(&payload)
            .map_err(|e| format!("sample {i}: {e}"))?;
        published += 1;
    }
    let stream_seconds = start.elapsed().as_secs_f64();

    let block = PutOptions {
        congestion_control: CongestionControl::Block,
        ..PutOptions::default()
    };
    session
        .put(&end_key, b"end", &block)
        .map_err(|e| format!("marker: {e}"))?;
    let marker = wait_for(&counts.markers, Duration::from_secs(30));
    let received = counts.data.load(Ordering::SeqCst);
    let publisher_drops: u64 = session
        .drops()
        .iter()
        .filter(|(k, _)| *k == data_key)
        .map(|(_, n)| n)
        .sum();
    println!(
        "published={published} received={received} share={:.2} publisher_drops={publisher_drops} \
         stream_seconds={stream_seconds:.3} marker={}",
        100.0 * received as f64 / published.max(1) as f64,
        if marker { "yes" } else { "no" }
    );
    drop(publisher);
    session.close();
    subscriber.close();
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("paced_pubsub: {e}");
            ExitCode::FAILURE
        }
    }
}
