//! Writes reach weftd's storages in the order they were made: the router timestamps
//! deletes as it timestamps puts, so a key deleted then put again keeps the put; writers
//! racing on one key leave what last-writer-wins by timestamp says, the timestamps being
//! those the samples carried to a subscriber; a write a storage discards is counted in
//! the metrics and logged with its key escaped. Memory and SQLite volumes alike.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use weft::{
    CongestionControl, FifoReceiver, GetOptions, PutOptions, Sample, SampleKind, Timestamp,
};
use weft_testkit::free_port;

mod common;
use common::{wait_for_port, Weftd};

/// Operations each writer makes per key (a delete and a put each).
const ROUNDS: usize = 250;

/// The storages' prefixes: a memory volume and an SQLite one.
const PREFIXES: [&str; 2] = ["mem", "lite"];

/// A configuration with a memory storage on `mem/**` and an SQLite one on `lite/**` in
/// `dir`.
fn config(dir: &std::path::Path) -> String {
    format!(
        r#"{{ plugins: {{ storage_manager: {{
            volumes: {{ sqlite: {{ dir: "{}" }} }},
            storages: {{
                mem: {{ key_expr: "mem/**", volume: "memory" }},
                lite: {{ key_expr: "lite/**", volume: "sqlite" }},
            }},
        }} }} }}"#,
        dir.display()
    )
}

/// A fresh directory for an SQLite volume.
fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("weftd-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn blocking() -> PutOptions {
    PutOptions {
        congestion_control: CongestionControl::Block,
        ..PutOptions::default()
    }
}

/// What the storages answer for `key`: its value, or `None` when it holds none.
fn stored(s: &weft::Session, key: &str) -> Option<String> {
    let options = GetOptions {
        timeout: Some(Duration::from_secs(5)),
        ..GetOptions::default()
    };
    let values: Vec<String> = s
        .get(key, &options)
        .unwrap()
        .iter()
        .filter_map(|r| r.result.ok())
        .map(|s| String::from_utf8(s.payload.into_vec()).unwrap())
        .collect();
    assert!(values.len() <= 1, "{key}: {values:?}");
    values.into_iter().next()
}

/// Waits (at most 10 s) until the storages answer `expected` for `key`.
fn eventually(s: &weft::Session, key: &str, expected: Option<&str>) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = stored(s, key);
        if got.as_deref() == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{key}: the storage holds {got:?}, expected {expected:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One writer deleting `key` then putting it again, `ROUNDS` times; returns its last
/// value.
fn delete_then_put(s: &weft::Session, key: &str, writer: usize) -> String {
    let mut last = String::new();
    for i in 0..ROUNDS {
        s.delete(key, &blocking()).unwrap();
        last = format!("w{writer}-{i}");
        s.put(key, last.as_bytes(), &blocking()).unwrap();
    }
    last
}

/// The value of a counter of weftd's `/metrics` (on the REST port `rest`) whose labels
/// include `storage="NAME"`.
fn storage_counter(rest: u16, family: &str, name: &str) -> Option<f64> {
    let mut s = TcpStream::connect(("127.0.0.1", rest)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let label = format!("storage=\"{name}\"");
    response
        .lines()
        .find(|l| l.starts_with(&format!("{family}{{")) && l.contains(&label))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// A writer that deletes a key then puts it again, over and over, leaves its last put
/// in the storage, and no write of it is discarded: the router stamped each delete
/// before the put that followed it. Without router timestamps, the storage stamps both
/// from the session's clock in the order they came, with the same outcome.
#[test]
fn one_writer_deleting_then_putting_ends_with_its_last_put() {
    for args in [&[][..], &["--no-timestamp"][..]] {
        let dir = fresh_dir("order-one");
        let rest = free_port();
        let rest_arg = format!("127.0.0.1:{rest}");
        let mut all = vec!["--rest-http-port", rest_arg.as_str()];
        all.extend_from_slice(args);
        let weftd = Weftd::with_config(free_port(), &config(&dir), &all);
        wait_for_port(rest);
        let c = weftd.weft_client();
        for prefix in PREFIXES {
            let key = format!("{prefix}/one");
            let last = delete_then_put(&c, &key, 0);
            eventually(&c, &key, Some(&last));
            assert_eq!(
                storage_counter(rest, "weft_storage_stale_total", prefix),
                Some(0.0),
                "{args:?}: writes of {key} were discarded"
            );
        }
        c.close();
        drop(weftd);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Every sample on `key` a subscriber received, once `expected` of them came (at most
/// 20 s).
fn received(rx: &FifoReceiver<Sample>, expected: usize) -> Vec<Sample> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut samples = Vec::new();
    while samples.len() < expected {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(s) => samples.push(s),
            Err(_) => panic!("{} of {expected} samples received", samples.len()),
        }
    }
    samples
}

/// What last-writer-wins by timestamp leaves of `samples`: the value of the newest, or
/// `None` when it is a delete.
fn last_writer(samples: &[Sample]) -> Option<String> {
    let stamp = |s: &Sample| -> Timestamp {
        s.timestamp
            .unwrap_or_else(|| panic!("a {:?} of {} without a timestamp", s.kind, s.key_expr))
    };
    let newest = samples
        .iter()
        .max_by_key(|s| {
            let t = stamp(s);
            (t.time, t.id.to_u128())
        })
        .expect("samples");
    (newest.kind == SampleKind::Put).then(|| String::from_utf8(newest.payload.to_vec()).unwrap())
}

/// Four writers racing on one key, each deleting and putting it: the storage ends with
/// what last-writer-wins gives by the timestamps the samples carried, as a subscriber
/// received them.
#[test]
fn racing_writers_leave_the_last_writer_by_timestamp() {
    const WRITERS: usize = 4;
    let dir = fresh_dir("order-race");
    let weftd = Weftd::with_config(free_port(), &config(&dir), &[]);
    let watcher = weftd.weft_client();
    let subscriptions: Vec<_> = PREFIXES
        .iter()
        .map(|p| {
            watcher
                .declare_subscriber_channel(&format!("{p}/race"), 4 * ROUNDS * 2 + 64)
                .unwrap()
        })
        .collect();
    // The subscriptions reach weftd before the writers start: a probe comes back.
    let c = weftd.weft_client();
    for (prefix, (_, rx)) in PREFIXES.iter().zip(&subscriptions) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let key = format!("{prefix}/race");
        loop {
            c.put(&key, b"probe", &blocking()).unwrap();
            if rx.recv_timeout(Duration::from_millis(100)).is_ok() {
                break;
            }
            assert!(Instant::now() < deadline, "the subscriber never saw {key}");
        }
        while rx.recv_timeout(Duration::from_millis(200)).is_ok() {}
    }
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let s = weftd.weft_client();
            std::thread::spawn(move || {
                for prefix in PREFIXES {
                    delete_then_put(&s, &format!("{prefix}/race"), w);
                }
                s.close();
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    for (prefix, (_, rx)) in PREFIXES.iter().zip(&subscriptions) {
        let samples = received(rx, WRITERS * ROUNDS * 2);
        let expected = last_writer(&samples);
        eventually(&c, &format!("{prefix}/race"), expected.as_deref());
    }
    drop(weftd);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A write older than the value held is discarded, counted in the metrics, and logged
/// naming its key, whose control characters are escaped.
#[test]
fn a_discarded_write_is_counted_and_logged_with_its_key_escaped() {
    let dir = fresh_dir("order-discard");
    let log = dir.join("weftd.log");
    let rest = free_port();
    let weftd = Weftd::logging_to(
        free_port(),
        &config(&dir),
        &["--rest-http-port", &format!("127.0.0.1:{rest}")],
        &log,
    );
    wait_for_port(rest);
    let c = weftd.weft_client();
    let key = "mem/bell\u{7}/esc\u{1b}[2J/end";
    let (older, newer) = (c.new_timestamp(), c.new_timestamp());
    let at = |ts| PutOptions {
        timestamp: Some(ts),
        ..blocking()
    };
    c.put(key, b"new", &at(newer)).unwrap();
    c.put(key, b"old", &at(older)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while storage_counter(rest, "weft_storage_stale_total", "mem") != Some(1.0) {
        assert!(
            Instant::now() < deadline,
            "the discarded write was not counted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(stored(&c, key).as_deref(), Some("new"));
    let escaped = r"mem/bell\u{7}/esc\u{1b}[2J/end";
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains(escaped) {
            break text;
        }
        assert!(
            Instant::now() < deadline,
            "no log line names the key: {text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let line = text.lines().find(|l| l.contains(escaped)).unwrap();
    assert!(line.contains("discarded"), "{line}");
    assert!(
        !text.contains('\u{7}') && !text.contains("\u{1b}[2J"),
        "control characters reached the log raw: {text:?}"
    );
    drop(weftd);
    let _ = std::fs::remove_dir_all(&dir);
}
