//! A REST get over many large replies is answered within bounded memory: streamed as the
//! replies come, the repliers waiting for the HTTP client, and nothing kept after; whether
//! the replies come from another node's queryable or from weftd's own storage (memory or
//! SQLite), which reads its volume a page at a time on a thread of its own. A client's get
//! over such a storage gets every reply, the storage waiting for the client's link.

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
    get_in_bounded_memory(&weftd, rest, "big/**", REPLIES);
    drop(_queryable);
    drop(queryable_session);
    assert_eq!(replier.join().unwrap(), 2, "the probe and the get");
}

/// A REST get of `selector` on `weftd` answers `count` replies, each key once, while
/// weftd's peak resident memory grows less than 64 MiB, and keeps nothing after.
fn get_in_bounded_memory(weftd: &Weftd, rest: u16, selector: &str, count: usize) {
    let baseline = rss(weftd.pid());
    let exact = reset_peak_rss(weftd.pid());
    let start_peak = peak_rss(weftd.pid());
    let started = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", rest)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(
        format!("GET /{selector} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    )
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
    assert_eq!(replies.len(), count, "every reply arrives");
    let mut keys: Vec<&str> = replies.iter().map(|r| r["key"].as_str().unwrap()).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), count, "each key once");
    let peak = peak_rss(weftd.pid());
    let grew = if exact {
        peak.saturating_sub(baseline)
    } else {
        peak.saturating_sub(start_peak.max(baseline))
    };
    let after = rss(weftd.pid());
    println!(
        "GET of {count} replies of {} KiB ({} MiB) in {took:?}: weftd's peak resident \
         memory grew {} MiB over {} MiB; {} MiB resident after",
        REPLY_BYTES >> 10,
        count * REPLY_BYTES / MIB,
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
}

/// Fills a storage of weftd with `count` values of `REPLY_BYTES` under `big/`, through a
/// client, and waits until it holds the last.
fn fill_storage(weftd: &Weftd, count: usize) {
    let writer = weftd.weft_client();
    let options = weft::PutOptions {
        congestion_control: weft::CongestionControl::Block,
        ..weft::PutOptions::default()
    };
    let payload = vec![0x5a_u8; REPLY_BYTES];
    for i in 0..count {
        writer.put(&format!("big/{i}"), &payload, &options).unwrap();
    }
    let last = format!("big/{}", count - 1);
    let deadline = Instant::now() + Duration::from_secs(60);
    while writer
        .get(&last, &weft::GetOptions::default())
        .unwrap()
        .iter()
        .filter(|r| r.result.is_ok())
        .count()
        == 0
    {
        assert!(Instant::now() < deadline, "the storage never held {last}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// weftd's own storage answers a REST get over all it holds: it reads its volume a page at
/// a time and replies as the HTTP client takes the answer, instead of copying every
/// matching entry, then every reply, before the answer starts.
fn a_get_over_weftd_s_own_storage_streams_it(volume: &str, config: &str) {
    let (port, rest) = (free_port(), free_port());
    let weftd = Weftd::with_config(
        port,
        config,
        &["--rest-http-port", &format!("127.0.0.1:{rest}")],
    );
    weft_testkit::wait_for_port(rest);
    fill_storage(&weftd, REPLIES);
    println!("{volume} volume:");
    get_in_bounded_memory(&weftd, rest, "big/**", REPLIES);
}

#[test]
fn a_get_over_a_memory_storage_streams_it_in_bounded_memory() {
    a_get_over_weftd_s_own_storage_streams_it(
        "memory",
        r#"{ queries_default_timeout: 120000,
             plugins: { storage_manager: { storages: {
                 big: { key_expr: "big/**", volume: "memory" } } } } }"#,
    );
}

#[test]
fn a_get_over_an_sqlite_storage_streams_it_in_bounded_memory() {
    let dir = std::env::temp_dir().join(format!("weftd-rest-sqlite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    a_get_over_weftd_s_own_storage_streams_it(
        "sqlite",
        &format!(
            r#"{{ queries_default_timeout: 120000,
                 plugins: {{ storage_manager: {{
                     volumes: {{ sqlite: {{ dir: "{}" }} }},
                     storages: {{ big: {{ key_expr: "big/**", volume: "sqlite" }} }} }} }} }}"#,
            dir.display()
        ),
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A client's get over more than a destination's overflow (64 MiB) of stored values: the
/// storage's answering thread waits for room on the client's link, so every reply arrives
/// and weftd holds little of them (before, replies made on the I/O thread filled the
/// overflow and the client's session was closed: 0 of 6,000 arrived).
#[test]
fn a_client_s_get_over_a_large_storage_gets_every_reply() {
    let port = free_port();
    let weftd = Weftd::with_config(
        port,
        r#"{ queries_default_timeout: 120000,
             plugins: { storage_manager: { storages: {
                 big: { key_expr: "big/**", volume: "memory" } } } } }"#,
        &[],
    );
    fill_storage(&weftd, REPLIES);
    let baseline = rss(weftd.pid());
    let exact = reset_peak_rss(weftd.pid());
    let start_peak = peak_rss(weftd.pid());
    let reader = weftd.weft_client();
    let started = Instant::now();
    let replies = reader
        .get(
            "big/**",
            &weft::GetOptions {
                timeout: Some(Duration::from_secs(120)),
                ..weft::GetOptions::default()
            },
        )
        .unwrap();
    let mut ok = 0;
    let mut errors = Vec::new();
    for r in replies.iter() {
        match r.result {
            Ok(_) => ok += 1,
            Err(e) => errors.push(String::from_utf8_lossy(&e.payload).into_owned()),
        }
    }
    let peak = peak_rss(weftd.pid());
    let grew = if exact {
        peak.saturating_sub(baseline)
    } else {
        peak.saturating_sub(start_peak.max(baseline))
    };
    println!(
        "client get of {REPLIES} stored values in {:?}: {ok} replies, errors {errors:?}; \
         weftd grew {} MiB over {} MiB",
        started.elapsed(),
        grew / MIB,
        baseline / MIB
    );
    assert_eq!(ok, REPLIES, "{errors:?}");
    assert!(
        grew < 64 * MIB,
        "weftd grew {} MiB during the get",
        grew / MIB
    );
}
