//! A REST get over many large replies is answered within bounded memory: streamed as the
//! replies come, the repliers waiting for the HTTP client, and nothing kept after.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{peak_rss, reset_peak_rss, rss, Weftd};
use weft_testkit::free_port;

const MIB: usize = 1 << 20;

/// Replies the queryable sends, and the size of each.
const REPLIES: usize = 6000;
const REPLY_BYTES: usize = 16 << 10;

/// The body of a `Transfer-Encoding: chunked` answer, decoded.
fn unchunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("a size line");
        let size_text = std::str::from_utf8(&body[..line_end]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16)
            .expect("a chunk size");
        body = &body[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

#[test]
fn a_get_over_many_large_replies_streams_them_in_bounded_memory() {
    let (port, rest) = (free_port(), free_port());
    let weftd = Weftd::with_config(
        port,
        "{ queries_default_timeout: 120000 }",
        &["--rest-http-port", &format!("127.0.0.1:{rest}")],
    );
    weft_testkit::wait_for_port(rest);
    let queryable_session = weftd.weft_client();
    let (queries, received) = mpsc::channel();
    let _queryable = queryable_session
        .declare_queryable("big/**", true, move |q| {
            let _ = queries.send(q);
        })
        .unwrap();
    // Replies from a thread of their own: they wait for weftd, which waits for the
    // HTTP client.
    let replier = std::thread::spawn(move || {
        let options = weft::PutOptions {
            congestion_control: weft::CongestionControl::Block,
            ..weft::PutOptions::default()
        };
        let payload = vec![0x5a_u8; REPLY_BYTES];
        let mut answered = 0;
        while let Ok(query) = received.recv_timeout(Duration::from_secs(30)) {
            answered += 1;
            if query.key_expr() == "big/probe" {
                query.reply("big/probe", b"here", &options).unwrap();
                continue;
            }
            for i in 0..REPLIES {
                query
                    .reply(&format!("big/{i}"), &payload, &options)
                    .unwrap();
            }
        }
        answered
    });
    // The queryable is known to weftd once a first get finds it.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let probe = weftd.weft_client();
        let n = probe
            .get("big/probe", &weft::GetOptions::default())
            .unwrap()
            .iter()
            .count();
        if n > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the queryable never answered");
        std::thread::sleep(Duration::from_millis(20));
    }
    let baseline = rss(weftd.pid());
    let exact = reset_peak_rss(weftd.pid());
    let start_peak = peak_rss(weftd.pid());
    let started = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", rest)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(b"GET /big/** HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let took = started.elapsed();
    let split = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&all[..split]).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    let body = if head.contains("transfer-encoding: chunked") {
        unchunk(&all[split + 4..])
    } else {
        all[split + 4..].to_vec()
    };
    drop(all);
    let replies: serde_json::Value = serde_json::from_slice(&body).expect("a JSON array");
    let replies = replies.as_array().expect("an array");
    assert_eq!(replies.len(), REPLIES, "every reply arrives");
    let mut keys: Vec<&str> = replies.iter().map(|r| r["key"].as_str().unwrap()).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), REPLIES, "each key once");
    let peak = peak_rss(weftd.pid());
    let grew = if exact {
        peak.saturating_sub(baseline)
    } else {
        peak.saturating_sub(start_peak.max(baseline))
    };
    let after = rss(weftd.pid());
    println!(
        "GET of {REPLIES} replies of {} KiB ({} MiB) in {took:?}: weftd's peak resident \
         memory grew {} MiB over {} MiB; {} MiB resident after",
        REPLY_BYTES >> 10,
        REPLIES * REPLY_BYTES / MIB,
        grew / MIB,
        baseline / MIB,
        after / MIB
    );
    assert!(
        grew < 64 * MIB,
        "weftd grew {} MiB during the get",
        grew / MIB
    );
    assert!(
        after < baseline + 64 * MIB,
        "weftd kept {} MiB after the get",
        (after - baseline) / MIB
    );
    drop(_queryable);
    drop(queryable_session);
    assert_eq!(replier.join().unwrap(), 2, "the probe and the get");
}
