//! weftd's status page in a real headless browser (Chromium): the page's script polls
//! `/@/status.json` and shows the session that publishes, with its rate, the busiest
//! subscription with its rates from weftd's own counters (key expressions are user data,
//! escaped), the nodes in the mesh graph and the storage. Nothing of it is in the HTML
//! weftd serves: the script must have run for the test to pass.
//!
//! A second test serves the page itself with made-up snapshots, to check the rates the
//! page computes: a subscription that disappears and comes back, or whose counters went
//! back, starts over.
//!
//! Without a Chromium (`chromium` on the PATH, or `WEFT_CHROMIUM`) the tests say so and
//! pass, unless `WEFT_REQUIRE_BROWSER` is set.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft::PutOptions;
use weft_testkit::{free_port, wait_for_port, Prerequisite};

mod common;
use common::Weftd;

/// The key published on most.
const BUSY_KEY: &str = "robot/arm/pose";

/// The subscription that draws the samples on [`BUSY_KEY`].
const BUSY_SUBSCRIPTION: &str = "robot/**";

/// The payload published on [`BUSY_KEY`], in bytes.
const BUSY_SIZE: usize = 100;

/// A key expression, subscribed to and published on, that is markup if not escaped.
const MARKUP_KEY: &str = "status/<i>x</i>";

/// The Chromium to drive: `WEFT_CHROMIUM`, else `chromium` or `chromium-browser` on the
/// PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("WEFT_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

/// The browser to test with; none (the test is skipped, saying so) when there is none,
/// unless `WEFT_REQUIRE_BROWSER` is set (then the test fails).
fn browser_or_skip() -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        Prerequisite::Browser.missing("no chromium on the PATH (nor WEFT_CHROMIUM)");
    }
    found
}

/// `GET path` on the REST port; the body.
fn get(port: u16, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

/// The DOM of `url` once its script ran for `budget` of virtual time (Chromium advances
/// it while no fetch is pending), as `--dump-dom` prints it; the browser gets 60 s.
fn dump_dom(browser: &PathBuf, url: &str, budget: Duration) -> String {
    // A profile of its own: two browsers of this process may run at once.
    static PROFILES: AtomicU64 = AtomicU64::new(0);
    let profile = std::env::temp_dir().join(format!(
        "weft-chromium-{}-{}",
        std::process::id(),
        PROFILES.fetch_add(1, Ordering::Relaxed)
    ));
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--virtual-time-budget={}", budget.as_millis()))
        .args(["--dump-dom", url])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut dom = String::new();
        let _ = stdout.read_to_string(&mut dom);
        dom
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_dir_all(&profile);
    reader.join().unwrap()
}

/// The part of `dom` from `start` to the next `end` (empty when `start` is absent).
fn between<'a>(dom: &'a str, start: &str, end: &str) -> &'a str {
    let Some(i) = dom.find(start) else { return "" };
    let rest = &dom[i..];
    &rest[..rest.find(end).map_or(rest.len(), |j| j + end.len())]
}

/// The value of the first attribute `name` in `html`.
fn attribute<'a>(html: &'a str, name: &str) -> Option<&'a str> {
    let start = html.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = html[start..].find('"')?;
    Some(&html[start..start + len])
}

/// The rows of the table `id` in `dom`, each from `<tr` to `</tr>`, the header's included.
fn rows<'a>(dom: &'a str, id: &str) -> Vec<&'a str> {
    let table = between(dom, &format!("<table id=\"{id}\">"), "</table>");
    table
        .match_indices("<tr")
        .map(|(i, _)| between(&table[i..], "<tr", "</tr>"))
        .collect()
}

/// The number in the attribute `name` of `row`.
fn rate_in(row: &str, name: &str) -> f64 {
    attribute(row, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {row}"))
}

/// What weftd's snapshot counts for the subscription `key_expr` of the session `zid`:
/// its messages, when listed.
fn counted(snapshot: &serde_json::Value, zid: &str, key_expr: &str) -> Option<u64> {
    let session = snapshot["sessions"]
        .as_array()?
        .iter()
        .find(|s| s["zid"] == zid)?;
    let subscription = session["subscriptions"]
        .as_array()?
        .iter()
        .find(|t| t["key_expr"] == key_expr)?;
    subscription["messages"].as_u64()
}

#[test]
fn the_status_page_shows_live_sessions_and_subscriptions_in_a_browser() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let (rest, port) = (free_port(), free_port());
    let weftd = Weftd::with_config(
        port,
        r#"{ plugins: { storage_manager: { storages: { shelf: { key_expr: "shelf/**", volume: "memory" } } } } }"#,
        &["--rest-http-port", &rest.to_string()],
    );
    wait_for_port(rest);
    // One client subscribes through weftd, the other publishes.
    let (subscriber, publisher) = (weftd.weft_client(), weftd.weft_client());
    let (sub_zid, pub_zid) = (subscriber.zid().to_string(), publisher.zid().to_string());
    let received = Arc::new(AtomicU64::new(0));
    let _subscriptions = [BUSY_SUBSCRIPTION, MARKUP_KEY].map(|key_expr| {
        let received = received.clone();
        subscriber
            .declare_subscriber(key_expr, move |_| {
                received.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap()
    });
    publisher
        .put("shelf/item", b"kept", &PutOptions::default())
        .unwrap();

    // The page weftd serves holds no data: only its script can show the sessions.
    let page = get(rest, "/");
    assert!(page.contains("<h1>weftd</h1>"));
    assert!(!page.contains(&sub_zid) && !page.contains(&pub_zid));
    assert!(!page.contains(BUSY_KEY) && !page.contains(BUSY_SUBSCRIPTION));

    // The publisher publishes until the test ends (bounded: 2 ms apart, at most 60 s).
    let stop = Arc::new(AtomicBool::new(false));
    let publishing = {
        let (publisher, stop) = (publisher.clone(), stop.clone());
        std::thread::spawn(move || {
            let end = Instant::now() + Duration::from_secs(60);
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) && Instant::now() < end {
                publisher
                    .put(BUSY_KEY, &[7u8; BUSY_SIZE], &PutOptions::default())
                    .unwrap();
                if n % 10 == 0 {
                    publisher
                        .put(MARKUP_KEY, b"x", &PutOptions::default())
                        .unwrap();
                }
                n += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };

    // Until weftd's counters show both subscriptions drawing samples.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let snapshot: serde_json::Value =
            serde_json::from_str(&get(rest, "/@/status.json")).unwrap();
        let busy = counted(&snapshot, &sub_zid, BUSY_SUBSCRIPTION);
        let markup = counted(&snapshot, &sub_zid, MARKUP_KEY);
        if busy.is_some_and(|n| n > 0) && markup.is_some_and(|n| n > 0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "weftd never counted the subscriptions (the subscriber received {}): {snapshot}",
            received.load(Ordering::Relaxed)
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let dom = dump_dom(
        &browser,
        &format!("http://127.0.0.1:{rest}/"),
        Duration::from_secs(10),
    );
    stop.store(true, Ordering::Relaxed);
    publishing.join().unwrap();

    // The sessions: the publisher with a rate of messages in, the subscriber listed.
    let row = between(&dom, &format!("<tr data-zid=\"{pub_zid}\""), "</tr>");
    assert!(!row.is_empty(), "no row for the session {pub_zid}:\n{dom}");
    assert!(
        rate_in(row, "data-msgs-in") > 0.0,
        "the session's rate is 0: {row}"
    );
    assert!(row.contains(">client<"), "{row}");
    let row = between(&dom, &format!("<tr data-zid=\"{sub_zid}\""), "</tr>");
    assert!(
        row.contains(">client<"),
        "no row for the session {sub_zid}:\n{dom}"
    );

    // The busiest subscription first: the subscriber's node, its key expression, a rate,
    // the mean size of what it drew. The markup key expression shown as text.
    let subscriptions = rows(&dom, "subscriptions");
    let first = subscriptions
        .get(1)
        .unwrap_or_else(|| panic!("no subscription shown:\n{dom}"));
    assert_eq!(
        attribute(first, "data-node"),
        Some(sub_zid.as_str()),
        "{first}"
    );
    assert!(
        first.contains(&format!("<code>{}</code>", &sub_zid[..8])),
        "{first}"
    );
    assert!(
        first.contains(&format!("<code>{BUSY_SUBSCRIPTION}</code>")),
        "top subscription: {subscriptions:?}"
    );
    assert!(rate_in(first, "data-msgs") > 0.0, "its rate is 0: {first}");
    assert!(first.contains(&format!(">{BUSY_SIZE} B<")), "{first}");
    let markup = subscriptions
        .iter()
        .find(|r| r.contains("<code>status/&lt;i&gt;x&lt;/i&gt;</code>"))
        .unwrap_or_else(|| panic!("no markup subscription: {subscriptions:?}"));
    assert_eq!(attribute(markup, "data-node"), Some(sub_zid.as_str()));
    assert!(rate_in(markup, "data-msgs") > 0.0, "{markup}");
    assert!(!dom.contains("<i>x</i>"), "a key expression became markup");

    // The mesh graph has weftd and both clients; the storage is listed.
    let mesh = between(&dom, "<svg id=\"mesh\"", "</svg>");
    for zid in [&sub_zid, &pub_zid] {
        assert!(
            mesh.contains(&format!("<g class=\"client\" data-zid=\"{zid}\"")),
            "{mesh}"
        );
    }
    assert!(mesh.contains(" own\""), "{mesh}");
    let storages = between(&dom, "<table id=\"storages\">", "</table>");
    assert!(storages.contains("shelf/**"), "{storages}");
    subscriber.close();
    publisher.close();
}

/// A snapshot of a weftd with one client session whose subscriptions are `subscriptions`
/// (key expression, messages, bytes), read at `time_ms`.
fn made_up_snapshot(time_ms: u64, subscriptions: &[(&str, u64, u64)]) -> serde_json::Value {
    let subscriptions: Vec<serde_json::Value> = subscriptions
        .iter()
        .map(|(key_expr, messages, bytes)| {
            serde_json::json!({
                "key_expr": key_expr, "messages": messages, "bytes": bytes, "dropped": 0,
            })
        })
        .collect();
    serde_json::json!({
        "zid": "aa", "whatami": "router", "version": "weftd", "locators": [],
        "time_ms": time_ms,
        "sessions": [{
            "zid": "c1", "whatami": "client", "link": "tcp/127.0.0.1:40000",
            "messages_in": 0, "batches_in": 0, "batches_out": 0, "bytes_in": 0, "bytes_out": 0,
            "drops": { "congestion": 0, "closed": 0, "unqueueable": 0 }, "denied": 0,
            "subscriptions": subscriptions,
        }],
        "own": { "subscribers": 0, "queryables": 0, "tokens": 0 },
        "mesh": { "routers": ["aa"], "links": [] },
        "storages": [],
    })
}

/// Serves the status page at `/` and `snapshots` one after the other at
/// `/@/status.json` (the last one again once all were served), until `stop`; the port.
fn serve_made_up(snapshots: Vec<String>, stop: Arc<AtomicBool>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let mut served = 0;
        while !stop.load(Ordering::Relaxed) {
            let mut stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                }
                Err(e) => panic!("accept: {e}"),
            };
            stream.set_nonblocking(false).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.ends_with(b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let request = String::from_utf8_lossy(&request);
            let path = request.split(' ').nth(1).unwrap_or("");
            let (status, kind, body) = match path {
                "/" => ("200 OK", "text/html; charset=utf-8", PAGE.to_string()),
                "/@/status.json" => {
                    let body = snapshots[served.min(snapshots.len() - 1)].clone();
                    served += 1;
                    ("200 OK", "application/json", body)
                }
                _ => ("404 Not Found", "text/plain", String::new()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
                 Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// The page weftd serves.
const PAGE: &str = include_str!("../src/status_page.html");

#[test]
fn a_subscription_that_comes_back_or_starts_over_is_measured_from_then_on() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    // A second apart: `gone` disappears and comes back lower than it was; `restarted`
    // starts over between two readings. From the third reading on, each draws 20
    // messages of 100 bytes a second; `steady` draws 5 a second throughout. Listed after
    // 21 idle subscriptions whose names come first.
    let busy: [&[(&str, u64, u64)]; 4] = [
        &[
            ("robot/steady", 0, 0),
            ("robot/restarted", 100, 10_000),
            ("robot/gone", 5, 500),
        ],
        &[("robot/steady", 5, 50), ("robot/restarted", 200, 20_000)],
        &[
            ("robot/steady", 10, 100),
            ("robot/restarted", 5, 500),
            ("robot/gone", 10, 1_000),
        ],
        &[
            ("robot/steady", 15, 150),
            ("robot/restarted", 25, 2_500),
            ("robot/gone", 30, 3_000),
        ],
    ];
    let idle: Vec<String> = (0..21).map(|i| format!("a/idle/{i:02}")).collect();
    let snapshots = busy
        .iter()
        .zip(0u64..)
        .map(|(busy, i)| {
            let subscriptions: Vec<(&str, u64, u64)> = idle
                .iter()
                .map(|k| (k.as_str(), 0, 0))
                .chain(busy.iter().copied())
                .collect();
            made_up_snapshot(i * 1000, &subscriptions).to_string()
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let port = serve_made_up(snapshots, stop.clone());
    let dom = dump_dom(
        &browser,
        &format!("http://127.0.0.1:{port}/"),
        Duration::from_secs(8),
    );
    stop.store(true, Ordering::Relaxed);

    let subscriptions = rows(&dom, "subscriptions");
    let shown: Vec<(String, f64)> = subscriptions
        .iter()
        .skip(1)
        .map(|row| {
            let key = between(row, "<td class=\"key\"><code>", "</code>");
            let key = key
                .trim_start_matches("<td class=\"key\"><code>")
                .trim_end_matches("</code>");
            (key.to_string(), rate_in(row, "data-msgs"))
        })
        .collect();
    // The busiest first, `steady` over all four readings, then idle ones: 20 in all.
    let expected: Vec<(String, f64)> = [
        ("robot/gone", 20.0),
        ("robot/restarted", 20.0),
        ("robot/steady", 5.0),
    ]
    .into_iter()
    .chain(idle.iter().map(|k| (k.as_str(), 0.0)))
    .take(20)
    .map(|(k, rate)| (k.to_string(), rate))
    .collect();
    assert_eq!(shown, expected, "{dom}");
    for row in &subscriptions[1..3] {
        assert!(row.contains(">100 B<"), "mean size: {row}");
        assert!(row.contains(">2.0 kB/s<"), "bytes/s: {row}");
    }
    let count = between(&dom, "<span id=\"subscription-count\"", "</span>");
    assert!(count.contains(">(20 of 24)<"), "{count}");
}
