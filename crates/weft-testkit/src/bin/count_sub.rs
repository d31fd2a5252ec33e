//! A subscriber that counts: a weft client of a router on 127.0.0.1 that counts the
//! samples on a key expression and the payload bytes they carry, for benchmarks whose
//! publisher cannot say what it sent (bench/uart.sh).
//!
//! Usage: `count_sub PORT KEY IDLE_SECONDS MAX_SECONDS`
//!
//! Prints `declared` once subscribed, then every 100 ms `at_ms=T samples=N` (the count so
//! far, T in milliseconds since the Unix epoch, as `uart_line` dates its byte counts, so
//! that a steady state's bytes per sample can be told from the start's), and ends
//! IDLE_SECONDS after the last sample (once one came) or after MAX_SECONDS, printing
//! `samples=N payload_bytes=B seconds=S` (S from the first sample to the last).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the callback saw.
#[derive(Default)]
struct Seen {
    samples: u64,
    payload_bytes: u64,
    first: Option<Instant>,
    last: Option<Instant>,
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, name: &str) -> T {
    args.get(i).and_then(|v| v.parse().ok()).unwrap_or_else(|| {
        eprintln!("usage: count_sub PORT KEY IDLE_SECONDS MAX_SECONDS ({name})");
        std::process::exit(2)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port: u16 = arg(&args, 0, "PORT");
    let key: String = arg(&args, 1, "KEY");
    let idle = Duration::from_secs_f64(arg(&args, 2, "IDLE_SECONDS"));
    let until = Instant::now() + Duration::from_secs_f64(arg(&args, 3, "MAX_SECONDS"));
    let session = weft_testkit::weft_client(port).unwrap_or_else(|e| {
        eprintln!("count_sub: open: {e}");
        std::process::exit(1)
    });
    let seen = Arc::new(Mutex::new(Seen::default()));
    let in_callback = seen.clone();
    let _sub = session
        .declare_subscriber(&key, move |s| {
            let now = Instant::now();
            let mut seen = in_callback.lock().unwrap();
            seen.samples += 1;
            seen.payload_bytes += s.payload.len() as u64;
            seen.first.get_or_insert(now);
            seen.last = Some(now);
        })
        .unwrap_or_else(|e| {
            eprintln!("count_sub: declare: {e}");
            std::process::exit(1)
        });
    println!("declared");
    loop {
        let now = Instant::now();
        let (last, samples) = {
            let seen = seen.lock().unwrap();
            (seen.last, seen.samples)
        };
        if now >= until || last.is_some_and(|t| now.duration_since(t) >= idle) {
            break;
        }
        println!("at_ms={} samples={samples}", weft_testkit::unix_ms());
        // The end is checked, and the count reported, ten times a second.
        std::thread::sleep(Duration::from_millis(100));
    }
    let seen = seen.lock().unwrap();
    let seconds = match (seen.first, seen.last) {
        (Some(f), Some(l)) => l.duration_since(f).as_secs_f64(),
        _ => 0.0,
    };
    println!(
        "samples={} payload_bytes={} seconds={seconds:.3}",
        seen.samples, seen.payload_bytes
    );
    drop(seen);
    session.close();
}
