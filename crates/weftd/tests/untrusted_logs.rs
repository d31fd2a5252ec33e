//! What peers and HTTP clients choose (user names, certificate names, paths) reaches
//! weftd's log escaped and cut; repeated refusals are logged at most once per period per
//! source address, counted in the metrics by reason; and with `transport.auth.throttle`
//! an address whose authentications keep failing is refused at once while others are not.

mod common;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::Weftd;
use weft_testkit::free_port;
use weft_testkit::raw::{RawClient, RawError};

/// A fresh directory for one test's files.
fn fresh_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weftd-logs-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// weftd's log once it holds every one of `wanted` (60 s at most: a loaded machine is slow
/// to refuse thousands of handshakes).
fn log_with(log: &Path, wanted: &[&str]) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if wanted.iter().all(|w| text.contains(w)) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{wanted:?} not in the log: {text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// No byte of `text` is a control character but the newlines ending its lines.
fn assert_no_control_bytes(text: &str) {
    let bad: Vec<(usize, char)> = text
        .char_indices()
        .filter(|(_, c)| c.is_control() && *c != '\n')
        .collect();
    assert!(
        bad.is_empty(),
        "control characters in the log {bad:?}: {text}"
    );
}

/// A router requiring user/password authentication (`alice:wonderland` only), with
/// `extra` configuration, logging to `log`, REST on `rest`.
fn router(port: u16, rest: u16, dir: &Path, extra: &str, log: &Path) -> Weftd {
    let users = dir.join("users.txt");
    std::fs::write(&users, "alice:wonderland\n").unwrap();
    let config = format!(
        "{{ transport: {{ auth: {{ usrpwd: {{ dictionary_file: {:?} }} {extra} }} }} }}",
        users.to_str().unwrap()
    );
    Weftd::logging_to(
        port,
        &config,
        &["--rest-http-port", &format!("127.0.0.1:{rest}")],
        log,
    )
}

/// `request` (a whole HTTP/1.1 request) sent to the REST port; the response.
fn http(port: u16, request: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request).unwrap();
    let mut response = Vec::new();
    let _ = s.read_to_end(&mut response);
    String::from_utf8_lossy(&response).into_owned()
}

/// The value of the metric series `series` (name and labels) in `GET /metrics`.
fn metric(rest: u16, series: &str) -> Option<u64> {
    let text = http(
        rest,
        b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

const LOCAL: Ipv4Addr = Ipv4Addr::LOCALHOST;

#[test]
fn a_hostile_user_name_is_one_escaped_bounded_log_line() {
    let dir = fresh_dir("user");
    let log = dir.join("weftd.log");
    let (port, rest) = (free_port(), free_port());
    let weftd = router(port, rest, &dir, "", &log);
    // A forged log line, a terminal escape, and 3,000 more characters (user names are
    // 4 KiB at most).
    let user = format!(
        "mallory\n2026-12-02T00:00:00Z  INFO weftd: session open\u{1b}[2K{}",
        "x".repeat(3_000)
    );
    match RawClient::connect_usrpwd(LOCAL, port, &user, "guess") {
        Err(RawError::Closed(_)) => {}
        other => panic!("not refused with a Close: {:?}", other.err()),
    }
    let text = log_with(&log, &["mallory"]);
    assert_no_control_bytes(&text);
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("mallory")).collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].contains(r"mallory\n2026-12-02T00:00:00Z  INFO weftd: session open\u{1b}[2K"),
        "{}",
        lines[0]
    );
    assert!(!text.contains("\nsession open"), "{text}");
    assert!(
        lines[0].len() < 1024,
        "{} bytes: {}",
        lines[0].len(),
        lines[0]
    );
    assert!(lines[0].contains("bytes)"), "said cut: {}", lines[0]);
    drop(weftd);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_brute_force_is_counted_but_logs_a_bounded_number_of_bytes() {
    let dir = fresh_dir("brute");
    let log = dir.join("weftd.log");
    let (port, rest) = (free_port(), free_port());
    let weftd = router(port, rest, &dir, "", &log);
    let before = std::fs::metadata(&log).map_or(0, |m| m.len());
    const GUESSES: u64 = 2000;
    // From an address of its own: its thousands of closed connections hold local ports
    // of 127.0.0.3, never one another test's weftd is about to listen on.
    let guesser = Ipv4Addr::new(127, 0, 0, 3);
    for i in 0..GUESSES {
        match RawClient::connect_usrpwd(guesser, port, "alice", &format!("guess-{i}")) {
            Err(RawError::Closed(_)) => {}
            other => panic!("guess {i} not refused with a Close: {:?}", other.err()),
        }
    }
    // Every guess is counted, with its reason.
    let series = r#"weft_sessions_refused_total{reason="auth_wrong_password"}"#;
    let deadline = Instant::now() + Duration::from_secs(60);
    while metric(rest, series) != Some(GUESSES) {
        assert!(
            Instant::now() < deadline,
            "{series} is {:?}",
            metric(rest, series)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let text = log_with(&log, &["wrong password for user `alice`"]);
    let logged = std::fs::metadata(&log).unwrap().len() - before;
    // 160 bytes per guess without a pace: 320 KB. With one line per 10 s, a few lines.
    println!("{GUESSES} guesses: {logged} bytes of log");
    assert!(
        logged < 4096,
        "{logged} bytes logged for {GUESSES} guesses: {text}"
    );
    drop(weftd);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_client_certificates_hostile_common_name_is_logged_escaped() {
    let dir = fresh_dir("cn");
    let log = dir.join("weftd.log");
    let (port, tls) = (free_port(), free_port());
    let pki = weft_testkit::certs::Pki::new("hostile-cn");
    let cn = "client\n2026-12-02T00:00:00Z  INFO weftd: forged\u{1b}[31m";
    let issued = pki.authority.issue_named(cn, &["client.weft.test"], None);
    let cert = pki.dir.write("hostile.pem", &issued.cert_pem);
    let key = pki.dir.write("hostile-key.pem", &issued.key_pem);
    let config = format!(
        r#"{{ transport: {{ link: {{ tls: {{ root_ca_certificate: {ca:?},
              listen_certificate: {c:?}, listen_private_key: {k:?}, enable_mtls: true }} }} }} }}"#,
        ca = pki.ca,
        c = pki.server_cert,
        k = pki.server_key,
    );
    let weftd = Weftd::logging_to(
        port,
        &config,
        &["-l", &format!("tls/127.0.0.1:{tls}")],
        &log,
    );
    weft_testkit::wait_for_port(tls);
    let text = format!(
        r#"{{ mode: "client", connect: {{ endpoints: ["tls/127.0.0.1:{tls}"] }},
             scouting: {{ multicast: {{ enabled: false }} }},
             transport: {{ link: {{ tls: {{ root_ca_certificate: {ca:?},
               connect_certificate: {cert:?}, connect_private_key: {key:?},
               enable_mtls: true }} }} }} }}"#,
        ca = pki.ca
    );
    let config = weft::Config::from_json5(&text).unwrap().0;
    let session = weft::open(config).expect("the mTLS client connects");
    let text = log_with(
        &log,
        &[r"client\n2026-12-02T00:00:00Z  INFO weftd: forged\u{1b}[31m"],
    );
    assert_no_control_bytes(&text);
    assert!(!text.contains("\n2026-12-02T00:00:00Z"), "{text}");
    drop(session);
    drop(weftd);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_http_path_with_control_characters_is_logged_escaped() {
    let dir = fresh_dir("http");
    let log = dir.join("weftd.log");
    let (port, rest) = (free_port(), free_port());
    let weftd = Weftd::logging_to(
        port,
        "{}",
        &["--rest-http-port", &format!("127.0.0.1:{rest}")],
        &log,
    );
    weft_testkit::wait_for_port(rest);
    // A path that is not UTF-8 once percent-decoded is refused (400); it holds a newline
    // and a terminal escape too.
    let response = http(
        rest,
        b"PUT /a%0a2026-12-02T00:00:00Z%20%20INFO%20forged%1b[31m/%ff?q=%0d%0aX HTTP/1.1\r\n\
          Host: localhost\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx",
    );
    assert!(response.starts_with("HTTP/1.1 400"), "{response}");
    // Raw control bytes in the request line: hyper refuses it before any handler.
    let response = http(
        rest,
        b"GET /b\x1b[31m\x07 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 400"), "{response}");
    let text = log_with(
        &log,
        &[r"PUT /a\n2026-12-02T00:00:00Z  INFO forged\u{1b}[31m/\xff?q=\r\nX: answered 400"],
    );
    assert_no_control_bytes(&text);
    assert!(!text.contains("\n2026-12-02T00:00:00Z"), "{text}");
    drop(weftd);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn with_throttling_a_guessing_address_is_refused_fast_and_others_still_connect() {
    let dir = fresh_dir("throttle");
    let log = dir.join("weftd.log");
    let (port, rest) = (free_port(), free_port());
    let weftd = router(
        port,
        rest,
        &dir,
        ", throttle: { failures: 5, backoff_ms: 60000 }",
        &log,
    );
    let guesser = Ipv4Addr::new(127, 0, 0, 2);
    for i in 0..5 {
        match RawClient::connect_usrpwd(guesser, port, "alice", &format!("guess-{i}")) {
            Err(RawError::Closed(_)) => {}
            other => panic!("guess {i} not refused with a Close: {:?}", other.err()),
        }
    }
    // From now on, refused unanswered, at once: not even the right password gets in.
    for i in 0..20 {
        let started = Instant::now();
        let outcome = RawClient::connect_usrpwd(guesser, port, "alice", "wonderland");
        let took = started.elapsed();
        match outcome {
            Err(RawError::Io(_)) => {}
            other => panic!("attempt {i} after the failures: {:?}", other.err()),
        }
        assert!(
            took < Duration::from_millis(500),
            "attempt {i} took {took:?}"
        );
    }
    // Another address still gets in, within a second.
    let started = Instant::now();
    let alice = RawClient::connect_usrpwd(LOCAL, port, "alice", "wonderland");
    assert!(alice.is_ok(), "{:?}", alice.err());
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let series = r#"weft_sessions_refused_total{reason="auth_throttled"}"#;
    assert_eq!(metric(rest, series), Some(20));
    log_with(&log, &["failed to authenticate too often"]);
    drop(weftd);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_nodes_flood_of_invalid_keys_is_paced_and_hides_no_other_nodes_first_one() {
    use weft_proto::core::Priority;
    let dir = fresh_dir("keys");
    let log = dir.join("weftd.log");
    let port = free_port();
    let weftd = Weftd::logging_to(port, "{}", &[] as &[&str], &log);
    let mut flooder = RawClient::connect(port, 0xf100d).unwrap();
    const FLOOD: u32 = 2000;
    for id in 1..=FLOOD {
        flooder
            .declare_subscriber(id, &format!("flood//{id}"))
            .unwrap();
    }
    flooder
        .sync(Priority::Data, Duration::from_secs(10))
        .unwrap();
    let mut other = RawClient::connect(port, 0x0_7e4).unwrap();
    other.declare_subscriber(1, "other/#/key").unwrap();
    other.sync(Priority::Data, Duration::from_secs(10)).unwrap();
    let text = log_with(&log, &["from", "f100d", "7e4", "forbidden character #"]);
    let flood_lines = text
        .lines()
        .filter(|l| l.contains("invalid key") && l.contains("f100d"))
        .count();
    // Before, the log's doubling count hid the other node's key after a flood (its line
    // came at the 2,048th such key), and told the flood 11 times.
    assert!(
        flood_lines <= 2,
        "{flood_lines} lines for one node's {FLOOD} invalid keys: {text}"
    );
    drop(weftd);
    let _ = std::fs::remove_dir_all(&dir);
}
