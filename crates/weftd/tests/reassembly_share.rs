//! One session's endless fragments hold at most its share of the reassembly memory
//! (`transport.link.rx.reassembly_share`, 64 MiB by default), and never stop another
//! session's samples.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{peak_rss, reset_peak_rss, rss, Weftd};
use weft_proto::core::Priority;
use weft_testkit::free_port;
use weft_testkit::raw::RawClient;

const MIB: usize = 1 << 20;

/// The sum of the series of `family` whose labels hold `label`, in `GET /metrics`.
fn metric_sum(rest: u16, family: &str, label: &str) -> u64 {
    let mut s = TcpStream::connect(("127.0.0.1", rest)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    text.lines()
        .filter(|l| l.starts_with(family) && l.contains(label))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[test]
fn endless_fragments_hold_at_most_the_share_and_other_sessions_flow() {
    let (port, rest) = (free_port(), free_port());
    let weftd = Weftd::start(port, &["--rest-http-port", &format!("127.0.0.1:{rest}")]);
    let subscriber = weftd.weft_client();
    let (_sub, rx) = subscriber
        .declare_subscriber_channel("demo/share/**", 1024)
        .unwrap();
    let publisher = weftd.weft_client();
    // Settled: a first sample arrives.
    let deadline = Instant::now() + Duration::from_secs(10);
    while rx.try_recv().is_err() {
        assert!(Instant::now() < deadline, "no first sample");
        publisher
            .put("demo/share/warmup", b"w", &weft::PutOptions::default())
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    let baseline = rss(weftd.pid());
    let exact_peak = reset_peak_rss(weftd.pid());
    let start_peak = peak_rss(weftd.pid());
    // 4,000 fragments of about 64 KiB: a message of 256 MiB that never ends.
    let sender = std::thread::spawn(move || {
        let mut hostile = RawClient::connect(port, 0xbad).expect("the raw session opens");
        // One message: each call starts another.
        hostile
            .send_endless_fragments(Priority::Data, 4000)
            .expect("weftd reads on");
        hostile
    });
    // Meanwhile, samples keep flowing between the other two, each within a second.
    let mut flowed = 0;
    while !sender.is_finished() || flowed < 10 {
        let payload = format!("sample {flowed}");
        publisher
            .put(
                "demo/share/x",
                payload.as_bytes(),
                &weft::PutOptions::default(),
            )
            .unwrap();
        let got = rx
            .recv_timeout(Duration::from_secs(1))
            .unwrap_or_else(|_| panic!("sample {flowed} did not arrive within 1 s"));
        assert_eq!(got.payload, payload.as_bytes());
        flowed += 1;
        assert!(flowed < 100_000, "bounded");
    }
    let hostile = sender.join().expect("the sender ends");
    let peak = peak_rss(weftd.pid());
    let grew = if exact_peak {
        peak.saturating_sub(baseline)
    } else {
        // The peak since start is all that can be read: it counts only if it grew.
        peak.saturating_sub(start_peak.max(baseline))
    };
    println!(
        "256 MiB of endless fragments: weftd's peak resident memory grew {} MiB \
         (baseline {} MiB); {flowed} samples flowed meanwhile",
        grew / MIB,
        baseline / MIB
    );
    assert!(
        grew < 64 * MIB + 16 * MIB,
        "weftd grew {} MiB under one session's endless fragments",
        grew / MIB
    );
    // Discarded with its reason, counted.
    let deadline = Instant::now() + Duration::from_secs(10);
    while metric_sum(
        rest,
        "weft_session_discarded_total{",
        r#"reason="over_share""#,
    ) == 0
    {
        assert!(Instant::now() < deadline, "no over_share discard counted");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(hostile);
}
