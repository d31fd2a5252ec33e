//! Priority under load: the latency of 64-byte RealTime messages while a 64 KiB DataLow
//! stream saturates the same link, against the same with no bulk load; and the bulk
//! stream's throughput with and without the real-time traffic.
//!
//! `cargo run --release -p weft --example priority_under_load [SECONDS]`

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft::{CongestionControl, Priority, PutOptions, WhatAmI};

fn session(listen: Option<&str>, connect: Option<&str>) -> weft::Session {
    weft::open(weft::Config {
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        listen: listen.map(|l| vec![l.parse().unwrap()]).unwrap_or_default(),
        connect: connect
            .map(|c| vec![c.parse().unwrap()])
            .unwrap_or_default(),
        ..weft::Config::default()
    })
    .expect("open")
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}

/// One-way latencies (µs) of `n` real-time pings, one every millisecond.
fn pings(b: &weft::Session, pongs: &std::sync::mpsc::Receiver<weft::Sample>, n: usize) -> Vec<f64> {
    let rt = PutOptions {
        priority: Priority::RealTime,
        congestion_control: CongestionControl::Block,
        express: true,
        ..PutOptions::default()
    };
    let payload = [0u8; 64];
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        b.put("prio/ping", &payload, &rt).unwrap();
        if pongs.recv_timeout(Duration::from_secs(5)).is_err() {
            panic!("a pong was lost");
        }
        out.push(start.elapsed().as_secs_f64() * 1e6 / 2.0);
        std::thread::sleep(Duration::from_millis(1));
    }
    out
}

/// Bulk throughput (MB/s) over `secs` while `during` runs.
fn bulk(b: &weft::Session, received: &AtomicU64, secs: f64, during: impl FnOnce()) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let publisher = {
        let b = b.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let low = PutOptions {
                priority: Priority::DataLow,
                congestion_control: CongestionControl::Block,
                ..PutOptions::default()
            };
            let payload = vec![0u8; 64 * 1024];
            while !stop.load(Ordering::Relaxed) {
                let _ = b.put("prio/bulk", &payload, &low);
            }
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let start_bytes = received.load(Ordering::Relaxed);
    let start = Instant::now();
    during();
    let elapsed_min = Duration::from_secs_f64(secs);
    while start.elapsed() < elapsed_min {
        std::thread::sleep(Duration::from_millis(10));
    }
    let bytes = received.load(Ordering::Relaxed) - start_bytes;
    let rate = bytes as f64 / start.elapsed().as_secs_f64() / 1e6;
    stop.store(true, Ordering::Relaxed);
    let _ = publisher.join();
    rate
}

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let a = session(Some("tcp/127.0.0.1:0"), None);
    let received = Arc::new(AtomicU64::new(0));
    let r = received.clone();
    let _bulk_sub = a
        .declare_subscriber("prio/bulk", move |s| {
            r.fetch_add(s.payload.len() as u64, Ordering::Relaxed);
        })
        .unwrap();
    let echo = a.clone();
    let _ping_sub = a
        .declare_subscriber("prio/ping", move |s| {
            let rt = PutOptions {
                priority: Priority::RealTime,
                congestion_control: CongestionControl::Block,
                express: true,
                ..PutOptions::default()
            };
            let _ = echo.put("prio/pong", &s.payload, &rt);
        })
        .unwrap();
    let b = session(None, Some(&a.listen_endpoints()[0]));
    let (_pong_sub, pongs) = b.declare_subscriber_channel("prio/pong", 16).unwrap();
    let n = (secs * 500.0) as usize;

    let mut idle = pings(&b, &pongs, n);
    let bulk_alone = bulk(&b, &received, secs, || {});
    let mut loaded = Vec::new();
    let bulk_with_rt = bulk(&b, &received, secs, || loaded = pings(&b, &pongs, n));

    let (i50, i99) = (percentile(&mut idle, 0.5), percentile(&mut idle, 0.99));
    let (l50, l99) = (percentile(&mut loaded, 0.5), percentile(&mut loaded, 0.99));
    println!("realtime_idle_p50_us={i50:.1} realtime_idle_p99_us={i99:.1}");
    println!("realtime_loaded_p50_us={l50:.1} realtime_loaded_p99_us={l99:.1}");
    println!("bulk_alone_MBps={bulk_alone:.0} bulk_with_realtime_MBps={bulk_with_rt:.0}");
    println!(
        "p99_ratio={:.2} bulk_ratio={:.2}",
        l99 / i99,
        bulk_with_rt / bulk_alone
    );
}
