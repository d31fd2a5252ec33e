//! Priority under load: the latency of 64-byte RealTime messages while a 64 KiB DataLow
//! stream saturates the same link, against the same with no bulk load; and the bulk
//! stream's throughput with and without the real-time traffic.
//!
//! `cargo run --release -p weft --example priority_under_load [SECONDS] [--priority-link] [--echo] [--tcp-buffer SEND[,RECV]]`
//!
//! Two peers in one process on TCP loopback: B publishes the bulk stream and the
//! real-time messages, A subscribes to both. A real-time message's latency is measured
//! one way, from B's `put` to A's subscriber callback (one process, one clock: each
//! message carries its send time). B sends one every millisecond.
//! With `--echo`, A echoes each real-time message back on a link that carries nothing
//! else, and B sends the next one 1 ms after the echo arrives; the echo's round trip is
//! reported too (halved). The echo adds two thread wake-ups per message on the same two
//! cores (B's reader, then B's sending thread), which the one-way figure then includes.
//! `--tcp-buffer` sets the kernel buffers of the links in bytes (`so_sndbuf`, and
//! `so_rcvbuf`, the same when not given).
//! With `--priority-link`, B also connects a link reserved for RealTime
//! (`tcp/...?prio=1-1`) beside its session with A: the real-time messages then travel on
//! it, away from the bulk stream.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use weft::config::TcpBuffers;
use weft::{CongestionControl, Priority, PutOptions, WhatAmI};

fn session(listen: Option<&str>, connect: &[String], buffers: TcpBuffers) -> weft::Session {
    weft::open(weft::Config {
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        listen: listen.map(|l| vec![l.parse().unwrap()]).unwrap_or_default(),
        connect: connect.iter().map(|c| c.parse().unwrap()).collect(),
        tcp_buffers: buffers,
        ..weft::Config::default()
    })
    .expect("open")
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}

fn realtime() -> PutOptions {
    PutOptions {
        priority: Priority::RealTime,
        congestion_control: CongestionControl::Block,
        express: true,
        ..PutOptions::default()
    }
}

/// The clock of the real-time messages' send times, and the one-way latencies (µs) A's
/// callback records.
struct OneWay {
    epoch: Instant,
    latencies: Mutex<Vec<f64>>,
}

impl OneWay {
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// A real-time message's payload: its send time first.
    fn stamp(&self, payload: &mut [u8; 64]) {
        payload[..8].copy_from_slice(&self.now_ns().to_le_bytes());
    }

    fn received(&self, payload: &[u8]) {
        let mut sent = [0u8; 8];
        sent.copy_from_slice(&payload[..8]);
        let ns = self.now_ns() - u64::from_le_bytes(sent);
        self.latencies.lock().unwrap().push(ns as f64 / 1e3);
    }

    fn take(&self) -> Vec<f64> {
        std::mem::take(&mut *self.latencies.lock().unwrap())
    }
}

/// Sends `n` real-time messages, each 1 ms after the previous one (after its echo, with
/// `echoes`); returns the one-way latencies and the halved round trips (µs, empty without
/// echoes). Waits for the last messages to arrive.
fn pings(
    b: &weft::Session,
    echoes: Option<&weft::FifoReceiver<weft::Sample>>,
    one_way: &OneWay,
    n: usize,
) -> (Vec<f64>, Vec<f64>) {
    let mut payload = [0u8; 64];
    let mut half_rtt = Vec::with_capacity(n);
    one_way.take();
    for _ in 0..n {
        let start = Instant::now();
        one_way.stamp(&mut payload);
        b.put("prio/ping", &payload, &realtime()).unwrap();
        if let Some(echoes) = echoes {
            if echoes.recv_timeout(Duration::from_secs(5)).is_err() {
                panic!("an echo was lost");
            }
            half_rtt.push(start.elapsed().as_secs_f64() * 1e6 / 2.0);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while one_way.latencies.lock().unwrap().len() < n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let latencies = one_way.take();
    assert_eq!(latencies.len(), n, "real-time messages were lost");
    (latencies, half_rtt)
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

/// Waits (at most 5 s) until B's session with A has its real-time link.
fn wait_for_priority_link(b: &weft::Session) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if b.admin().faces.iter().any(|f| !f.priority_links.is_empty()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the real-time link was not attached");
}

fn main() {
    let mut secs = 5.0;
    let mut buffers = TcpBuffers::default();
    let mut echo = false;
    let mut priority_link = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--priority-link" {
            priority_link = true;
        } else if arg == "--echo" {
            echo = true;
        } else if arg == "--tcp-buffer" {
            let value = args.next().expect("--tcp-buffer SEND[,RECV]");
            let mut sizes = value
                .split(',')
                .map(|v| v.parse::<usize>().expect("--tcp-buffer SEND[,RECV]: bytes"));
            let send = sizes.next().expect("--tcp-buffer SEND[,RECV]");
            buffers = TcpBuffers {
                send,
                recv: sizes.next().unwrap_or(send),
            };
        } else {
            secs = arg.parse().expect("SECONDS");
        }
    }
    let one_way = Arc::new(OneWay {
        epoch: Instant::now(),
        latencies: Mutex::new(Vec::new()),
    });
    let a = session(Some("tcp/127.0.0.1:0"), &[], buffers);
    let received = Arc::new(AtomicU64::new(0));
    let r = received.clone();
    let _bulk_sub = a
        .declare_subscriber("prio/bulk", move |s| {
            r.fetch_add(s.payload.len() as u64, Ordering::Relaxed);
        })
        .unwrap();
    let echoer = a.clone();
    let ow = one_way.clone();
    let _ping_sub = a
        .declare_subscriber("prio/ping", move |s| {
            ow.received(&s.payload);
            if echo {
                let _ = echoer.put("prio/echo", &s.payload, &realtime());
            }
        })
        .unwrap();
    let to_a = a.listen_endpoints()[0].clone();
    let mut connect = vec![to_a.clone()];
    if priority_link {
        connect.push(format!("{to_a}?prio=1-1"));
    }
    let b = session(None, &connect, buffers);
    if priority_link {
        wait_for_priority_link(&b);
    }
    let (_echo_sub, echoes) = b.declare_subscriber_channel("prio/echo", 16).unwrap();
    let echoes = echo.then_some(&echoes);
    let n = (secs * 500.0) as usize;

    let (mut idle, mut idle_rtt) = pings(&b, echoes, &one_way, n);
    let bulk_alone = bulk(&b, &received, secs, || {});
    let (mut loaded, mut loaded_rtt) = (Vec::new(), Vec::new());
    let bulk_with_rt = bulk(&b, &received, secs, || {
        (loaded, loaded_rtt) = pings(&b, echoes, &one_way, n);
    });

    let (i50, i99) = (percentile(&mut idle, 0.5), percentile(&mut idle, 0.99));
    let (l50, l99) = (percentile(&mut loaded, 0.5), percentile(&mut loaded, 0.99));
    println!(
        "tcp_buffers={},{} samples={n} priority_link={priority_link} (one way, put to callback)",
        buffers.send, buffers.recv
    );
    println!("realtime_idle_p50_us={i50:.1} realtime_idle_p99_us={i99:.1}");
    println!("realtime_loaded_p50_us={l50:.1} realtime_loaded_p99_us={l99:.1}");
    if echo {
        println!(
            "echo_half_rtt_idle_p50_us={:.1} echo_half_rtt_idle_p99_us={:.1}",
            percentile(&mut idle_rtt, 0.5),
            percentile(&mut idle_rtt, 0.99)
        );
        println!(
            "echo_half_rtt_loaded_p50_us={:.1} echo_half_rtt_loaded_p99_us={:.1}",
            percentile(&mut loaded_rtt, 0.5),
            percentile(&mut loaded_rtt, 0.99)
        );
    }
    println!("bulk_alone_MBps={bulk_alone:.0} bulk_with_realtime_MBps={bulk_with_rt:.0}");
    println!(
        "p99_ratio={:.2} bulk_ratio={:.2}",
        l99 / i99,
        bulk_with_rt / bulk_alone
    );
}
