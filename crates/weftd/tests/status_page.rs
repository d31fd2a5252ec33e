//! weftd's status page in a real headless browser (Chromium): the page's script polls
//! `/@/status.json` and shows the session that publishes, with its rate, the busiest key
//! (user data, escaped), the node in the mesh graph and the storage. Nothing of it is in
//! the HTML weftd serves: the script must have run for the test to pass.
//!
//! Without a Chromium (`chromium` on the PATH, or `WEFT_CHROMIUM`) the test says so and
//! passes, unless `WEFT_REQUIRE_BROWSER` is set.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft::PutOptions;
use weft_testkit::{free_port, wait_for_port};

mod common;
use common::Weftd;

/// The busiest key the client publishes on.
const BUSY_KEY: &str = "robot/arm/pose";

/// A key that is markup if not escaped.
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
    let profile = std::env::temp_dir().join(format!("weft-chromium-{}", std::process::id()));
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

#[test]
fn the_status_page_shows_live_sessions_and_keys_in_a_browser() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("WEFT_REQUIRE_BROWSER").is_none(),
            "WEFT_REQUIRE_BROWSER is set, but no chromium is on the PATH (nor WEFT_CHROMIUM)"
        );
        eprintln!("status_page: no chromium on the PATH: the browser test is skipped");
        return;
    };
    let (rest, port) = (free_port(), free_port());
    let weftd = Weftd::with_config(
        port,
        r#"{ plugins: { storage_manager: { storages: { shelf: { key_expr: "shelf/**", volume: "memory" } } } } }"#,
        &["--rest-http-port", &rest.to_string()],
    );
    wait_for_port(rest);
    let client = weftd.weft_client();
    let zid = client.zid().to_string();
    client
        .put("shelf/item", b"kept", &PutOptions::default())
        .unwrap();

    // The page weftd serves holds no data: only its script can show the session.
    let page = get(rest, "/");
    assert!(page.contains("<h1>weftd</h1>"));
    assert!(!page.contains(&zid));
    assert!(!page.contains(BUSY_KEY));

    // The client publishes until the test ends (bounded: 2 ms apart, at most 60 s).
    let stop = Arc::new(AtomicBool::new(false));
    let publisher = {
        let (client, stop) = (client.clone(), stop.clone());
        std::thread::spawn(move || {
            let end = Instant::now() + Duration::from_secs(60);
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) && Instant::now() < end {
                client
                    .put(BUSY_KEY, &[7u8; 100], &PutOptions::default())
                    .unwrap();
                if n % 10 == 0 {
                    client
                        .put(MARKUP_KEY, b"x", &PutOptions::default())
                        .unwrap();
                }
                n += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };

    // weftd counts keys from the first poll on: wait until it sees both.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let snapshot: serde_json::Value =
            serde_json::from_str(&get(rest, "/@/status.json")).unwrap();
        let keys = snapshot["keys"]["totals"].to_string();
        if keys.contains(BUSY_KEY) && keys.contains("status/<i>x</i>") {
            assert!(snapshot["sessions"].to_string().contains(&zid));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "weftd never counted the keys: {snapshot}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let dom = dump_dom(
        &browser,
        &format!("http://127.0.0.1:{rest}/"),
        Duration::from_secs(10),
    );
    stop.store(true, Ordering::Relaxed);
    publisher.join().unwrap();

    // The session, with a rate of messages in.
    let row = between(&dom, &format!("<tr data-zid=\"{zid}\""), "</tr>");
    assert!(!row.is_empty(), "no row for the session {zid}:\n{dom}");
    let rate: f64 = attribute(row, "data-msgs-in")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no rate in {row}"));
    assert!(rate > 0.0, "the session's rate is 0: {row}");
    assert!(row.contains(">client<"), "{row}");

    // The busiest key first; the markup key shown as text.
    let keys = between(&dom, "<table id=\"keys\">", "</table>");
    let first = between(keys, "<tr data-msgs=", "</tr>");
    assert!(first.contains(BUSY_KEY), "top key: {keys}");
    assert!(keys.contains("status/&lt;i&gt;x&lt;/i&gt;"), "{keys}");
    assert!(!dom.contains("<i>x</i>"), "a key became markup");

    // The mesh graph has weftd and the client; the storage is listed.
    let mesh = between(&dom, "<svg id=\"mesh\"", "</svg>");
    assert!(
        mesh.contains(&format!("<g class=\"client\" data-zid=\"{zid}\"")),
        "{mesh}"
    );
    assert!(mesh.contains(" own\""), "{mesh}");
    let storages = between(&dom, "<table id=\"storages\">", "</table>");
    assert!(storages.contains("shelf/**"), "{storages}");
    client.close();
}
