//! A device that stops reading its serial line holds no other session up: weftd's writes
//! to the full line never wait, so the TCP clients served by the same I/O threads keep
//! their round trips short while a flood meant for the device piles up (and is dropped).
//! The device is a weft client in a process of its own, stopped with SIGSTOP once it
//! has subscribed; the line is two pseudo-terminals linked by socat.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::channel;
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft::{Config, PutOptions, WhatAmI};
use weft_testkit::pty::PtyPair;

mod common;
use common::{weft_client_at, Weftd};

/// The device: a client on the serial endpoint `WEFT_ISOLATION_DEVICE` subscribed to
/// `iso/data`; prints `up` once subscribed, and exits after a minute (the test kills it
/// before).
#[test]
#[ignore = "the device process of the serial isolation test, started by it"]
fn device_process() {
    let Ok(endpoint) = std::env::var("WEFT_ISOLATION_DEVICE") else {
        panic!("run by the serial isolation test only (WEFT_ISOLATION_DEVICE is not set)");
    };
    let session = weft::open(Config {
        mode: WhatAmI::Client,
        multicast_scouting: false,
        connect: vec![endpoint.parse().unwrap()],
        ..Config::default()
    })
    .expect("the device's session");
    let _sub = session.declare_subscriber("iso/data", |_| {}).unwrap();
    println!("up");
    std::thread::sleep(Duration::from_secs(60));
}

/// The device process; killed (after SIGCONT) when dropped.
struct Device(Child);

impl Device {
    fn start(line: &PtyPair) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "device_process",
                "--ignored",
                "--nocapture",
                "-q",
            ])
            .env("WEFT_ISOLATION_DEVICE", line.endpoint(&line.b, ""))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the device process");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(Result::ok) {
                if l == "up" {
                    let _ = tx.send(());
                }
            }
        });
        let device = Self(child);
        rx.recv_timeout(Duration::from_secs(10))
            .expect("the device opened its session within 10 s");
        device
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.0.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill {signal}");
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-CONT", &self.0.id().to_string()])
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_device_that_stops_reading_its_line_holds_no_tcp_session_up() {
    let Some(line) = PtyPair::new() else { return };
    let port = weft_testkit::free_port();
    let _weftd = Weftd::start(port, &["-l", &line.endpoint(&line.a, "")]);
    let device = Device::start(&line);

    // The flood's publisher knows of the device's subscriber before the device stops.
    let flooder = weft_client_at(port);
    let publisher = flooder
        .declare_publisher("iso/data", PutOptions::default())
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !publisher.matching_status() {
        assert!(
            Instant::now() < deadline,
            "the device's subscriber never showed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    device.signal("-STOP");

    // Two clients ping-pong through weftd; with the flooder they are spread over every
    // I/O thread, so some share the thread that reads the flood and writes it to the line.
    let pinger = weft_client_at(port);
    let ponger = weft_client_at(port);
    let answering = ponger.clone();
    let _echo = ponger
        .declare_subscriber("iso/ping", move |s| {
            let _ = answering.put("iso/pong", &s.payload, &PutOptions::default());
        })
        .unwrap();
    let (_pongs, pong) = pinger.declare_subscriber_channel("iso/pong", 16).unwrap();
    let ping = |n: u32| {
        pinger
            .put("iso/ping", &n.to_le_bytes(), &PutOptions::default())
            .unwrap()
    };
    // The round trip works before the flood.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        ping(u32::MAX);
        if pong.recv_timeout(Duration::from_millis(200)).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "no round trip through weftd");
    }
    while pong.try_recv().is_ok() {}

    let flooding = Arc::new(AtomicBool::new(true));
    let flood = {
        let flooding = flooding.clone();
        std::thread::spawn(move || {
            let payload = vec![7u8; 1400];
            let mut sent = 0u32;
            while flooding.load(Ordering::Relaxed) && sent < 200_000 {
                publisher.put(&payload).unwrap();
                sent += 1;
                if sent % 64 == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            sent
        })
    };
    // Let the line fill before measuring.
    std::thread::sleep(Duration::from_millis(500));
    let mut worst = Duration::ZERO;
    for n in 0..100u32 {
        let start = Instant::now();
        ping(n);
        loop {
            let sample = pong
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("round trip {n} never came back"));
            if sample.payload.to_vec() == n.to_le_bytes() {
                break;
            }
        }
        worst = worst.max(start.elapsed());
    }
    flooding.store(false, Ordering::Relaxed);
    let sent = flood.join().unwrap();
    println!("flood: {sent} samples of 1,400 B; worst round trip {worst:?}");
    assert!(
        worst < Duration::from_millis(250),
        "a round trip took {worst:?} while weftd wrote to a stalled serial line"
    );
}
