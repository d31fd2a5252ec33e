//! Opens many weft client sessions to a router on 127.0.0.1 in one process, each with one
//! subscriber counting the samples it receives: the subscribers of the fan-out benchmark
//! (`bench/fanout.sh`), the same for weftd and zenohd.
//!
//! Usage: `fanout_subs PORT SUBSCRIBERS KEY SECONDS`.
//!
//! Prints `ready` once every subscriber is declared. Once every subscriber has received a
//! sample, lets a second pass, prints `measuring`, counts for SECONDS, and prints
//! `subscribers=N seconds=S delivered=D rate=R per_subscriber_min=.. per_subscriber_mean=..
//! per_subscriber_max=..` (rates in samples per second). Then waits until nothing has
//! arrived for half a second (the publisher stopped) and prints `all=A`: every sample
//! received since the start. Gives up 60 s after `ready` without a sample on every
//! subscriber, and 60 s after the window if samples keep coming.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft_testkit::weft_client;

/// How long to wait for the first samples, and for the publisher to stop.
const GIVE_UP: Duration = Duration::from_secs(60);
/// Time between the first sample on every subscriber and the measured window.
const WARM_UP: Duration = Duration::from_secs(1);
/// Silence that shows the publisher has stopped.
const QUIET: Duration = Duration::from_millis(500);

fn arg<T: std::str::FromStr>(args: &[String], i: usize, name: &str) -> Result<T, String> {
    let v = args.get(i).ok_or_else(|| format!("missing {name}"))?;
    v.parse().map_err(|_| format!("{name}: not valid: {v}"))
}

fn counts(counters: &[Arc<AtomicU64>]) -> Vec<u64> {
    counters.iter().map(|c| c.load(Ordering::Relaxed)).collect()
}

fn run(args: &[String]) -> Result<(), String> {
    let port: u16 = arg(args, 1, "PORT")?;
    let n: usize = arg(args, 2, "SUBSCRIBERS")?;
    let key: String = arg(args, 3, "KEY")?;
    let seconds: f64 = arg(args, 4, "SECONDS")?;
    if n == 0 || !(seconds > 0.0 && seconds <= 600.0) {
        return Err("SUBSCRIBERS must be positive and SECONDS in (0, 600]".into());
    }
    let mut sessions = Vec::with_capacity(n);
    let mut subscribers = Vec::with_capacity(n);
    let mut counters = Vec::with_capacity(n);
    for s in 0..n {
        let session = weft_client(port).map_err(|e| format!("session {s}: {e}"))?;
        let counter = Arc::new(AtomicU64::new(0));
        let c = counter.clone();
        let sub = session
            .declare_subscriber(&key, move |_| {
                c.fetch_add(1, Ordering::Relaxed);
            })
            .map_err(|e| format!("subscriber {s}: {e}"))?;
        sessions.push(session);
        subscribers.push(sub);
        counters.push(counter);
    }
    println!("ready");

    let give_up = Instant::now() + GIVE_UP;
    while counts(&counters).contains(&0) {
        if Instant::now() > give_up {
            let silent = counts(&counters).iter().filter(|&&c| c == 0).count();
            return Err(format!("{silent} of {n} subscribers received nothing"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(WARM_UP);
    let before = counts(&counters);
    let start = Instant::now();
    println!("measuring");
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let after = counts(&counters);
    let elapsed = start.elapsed().as_secs_f64();
    let per: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    let delivered: u64 = per.iter().sum();
    let min = per.iter().copied().min().unwrap_or(0);
    let max = per.iter().copied().max().unwrap_or(0);
    println!(
        "subscribers={n} seconds={elapsed:.3} delivered={delivered} rate={:.0} \
         per_subscriber_min={:.0} per_subscriber_mean={:.0} per_subscriber_max={:.0}",
        delivered as f64 / elapsed,
        min as f64 / elapsed,
        delivered as f64 / elapsed / n as f64,
        max as f64 / elapsed,
    );

    let give_up = Instant::now() + GIVE_UP;
    let mut last: u64 = counts(&counters).iter().sum();
    loop {
        std::thread::sleep(QUIET);
        let now: u64 = counts(&counters).iter().sum();
        if now == last {
            break;
        }
        if Instant::now() > give_up {
            return Err("samples still arriving 60 s after the window".into());
        }
        last = now;
    }
    println!("all={last}");
    drop(subscribers);
    for session in &sessions {
        session.close();
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fanout_subs: {e}");
            ExitCode::FAILURE
        }
    }
}
