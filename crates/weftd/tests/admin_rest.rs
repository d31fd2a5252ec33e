//! The admin space and the REST interface of weftd, used as Zenoh users use them (queries on
//! `@/*/router/**`, curl recipes).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::Value;
use weft_testkit::{free_port, zenoh_python, ZenohNode};

mod common;
use common::{wait_for_port, Weftd};

fn start(rest: u16, port: u16, config: &str) -> Weftd {
    let weftd = Weftd::with_config(port, config, &["--rest-http-port", &rest.to_string()]);
    wait_for_port(rest);
    weftd
}

/// One HTTP request; returns (status, body).
fn http(port: u16, method: &str, path: &str, body: &str, content_type: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn rest_round_trip_and_admin_space() {
    let (rest, port) = (free_port(), free_port());
    let _weftd = start(
        rest,
        port,
        r#"{ plugins: { storage_manager: { storages: { demo: { key_expr: "demo/**", volume: "memory" } } } } }"#,
    );
    // curl -X PUT -d '{"a": 1}' -H 'Content-Type: application/json' .../demo/json
    assert_eq!(
        http(rest, "PUT", "/demo/json", r#"{"a": 1}"#, "application/json").0,
        200
    );
    assert_eq!(
        http(rest, "PUT", "/demo/text", "hello", "text/plain").0,
        200
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let list = loop {
        let (status, body) = http(rest, "GET", "/demo/**", "", "text/plain");
        assert_eq!(status, 200);
        let list: Vec<Value> = serde_json::from_str(&body).unwrap();
        if list.len() == 2 || Instant::now() > deadline {
            break list;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let by_key = |k: &str| list.iter().find(|v| v["key"] == k).cloned().unwrap();
    assert_eq!(by_key("demo/json")["value"], serde_json::json!({ "a": 1 }));
    assert_eq!(by_key("demo/json")["encoding"], "application/json");
    assert_eq!(by_key("demo/text")["value"], "hello");
    assert!(by_key("demo/text")["timestamp"]
        .as_str()
        .unwrap()
        .contains('/'));
    assert_eq!(http(rest, "DELETE", "/demo/text", "", "text/plain").0, 200);
    std::thread::sleep(Duration::from_millis(200));
    let (_, body) = http(rest, "GET", "/demo/text", "", "text/plain");
    assert_eq!(body, "[]");
    // Bad input: a clear 400, the router keeps serving.
    let (status, body) = http(rest, "PUT", "/demo//x", "x", "text/plain");
    assert_eq!(status, 400, "{body}");
    // A key expression with wildcards publishes, as in Zenoh.
    let (status, body) = http(rest, "PUT", "/demo/*", "x", "text/plain");
    assert_eq!(status, 200, "{body}");
    // The admin space, over REST.
    let (status, body) = http(rest, "GET", "/@/*/router", "", "text/plain");
    assert_eq!(status, 200);
    let admin: Vec<Value> = serde_json::from_str(&body).unwrap();
    let router = &admin[0]["value"];
    assert_eq!(router["whatami"], "router");
    assert!(router["locators"][0]
        .as_str()
        .unwrap()
        .ends_with(&port.to_string()));
    let (_, page) = http(rest, "GET", "/", "", "text/plain");
    assert!(page.contains("<h1>weftd</h1>"));
}

#[test]
fn admin_space_lists_zenoh_sessions_and_their_declarations() {
    if zenoh_python().is_none() {
        return;
    }
    let (rest, port) = (free_port(), free_port());
    let _weftd = start(rest, port, "{}");
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let _sub = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--sub",
        "watched/**",
        "--timeout",
        "30",
    ])
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let getter = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--get",
        "@/*/router/**",
        "--timeout",
        "5",
    ])
    .unwrap();
    let replies = getter.replies(10);
    let router = replies
        .iter()
        .find(|r| r["key"].as_str().unwrap().ends_with("/router"))
        .expect("the router's description");
    let desc: Value = serde_json::from_str(router["payload"].as_str().unwrap()).unwrap();
    let sessions = desc["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{desc}");
    assert!(sessions.iter().all(|s| s["whatami"] == "client"));
    let subs = replies
        .iter()
        .find(|r| {
            r["key"]
                .as_str()
                .unwrap()
                .ends_with("/router/subscriber/watched/**")
        })
        .expect("the subscriber's entry");
    let sources: Value = serde_json::from_str(subs["payload"].as_str().unwrap()).unwrap();
    assert_eq!(sources["clients"].as_array().unwrap().len(), 1, "{sources}");
}

/// weftd's example configuration, which it runs when started with no arguments: REST on
/// port 8000 and an SQLite storage on `demo/**` in `./weft-data`, whose values survive
/// `kill -9` and a restart (the README's first steps). Run from the file, with multicast
/// scouting off (tests keep multicast inside network namespaces).
#[test]
fn the_example_configuration_serves_rest_and_keeps_demo_data() {
    if TcpStream::connect(("127.0.0.1", 7447)).is_ok()
        || TcpStream::connect(("127.0.0.1", 8000)).is_ok()
    {
        weft_testkit::Prerequisite::DefaultPorts
            .missing("port 7447 or 8000 is already in use on this machine");
        return;
    }
    let dir = std::env::temp_dir().join(format!("weftd-bare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let start = || {
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_weftd"))
            .args(["-c", concat!(env!("CARGO_MANIFEST_DIR"), "/weftd.json5")])
            .arg("--no-multicast-scouting")
            .current_dir(&dir)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start weftd");
        wait_for_port(7447);
        wait_for_port(8000);
        child
    };
    let read = || {
        let (status, body) = http(8000, "GET", "/demo/**", "", "text/plain");
        assert_eq!(status, 200);
        body
    };
    let mut weftd = start();
    assert_eq!(
        http(8000, "PUT", "/demo/kept", "survives", "text/plain").0,
        200
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !read().contains("survives") {
        assert!(
            Instant::now() < deadline,
            "the demo storage never had the value"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    weftd.kill().unwrap();
    weftd.wait().unwrap();
    let mut weftd = start();
    let body = read();
    weftd.kill().unwrap();
    weftd.wait().unwrap();
    let replies: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(replies[0]["key"], "demo/kept", "{body}");
    assert_eq!(replies[0]["value"], "survives", "{body}");
    assert!(dir.join("weft-data/demo.sqlite3").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends `head` then reads the whole response; returns its status.
fn raw_status(port: u16, head: &[u8]) -> u16 {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    // A refusal may come before everything is written.
    let _ = s.write_all(head);
    let mut response = Vec::new();
    let _ = s.read_to_end(&mut response);
    String::from_utf8_lossy(&response[9..12]).parse().unwrap()
}

#[test]
fn rest_refuses_what_is_over_its_limits() {
    let (rest, port) = (free_port(), free_port());
    let _weftd = start(rest, port, "{}");
    // A 100 MB body: 413 at once, from its Content-Length; nothing is read or stored.
    assert_eq!(
        raw_status(
            rest,
            b"PUT /demo/big HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n"
        ),
        413
    );
    // The same as chunks: 413 once the chunks pass the limit.
    let mut chunked = b"PUT /demo/big HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..70 {
        chunked.extend_from_slice(b"100000\r\n");
        chunked.extend_from_slice(&chunk);
        chunked.extend_from_slice(b"\r\n");
    }
    assert_eq!(raw_status(rest, &chunked), 413);
    // 1 MB of headers: 431 after the first 64 KiB.
    let mut headers = b"GET /demo/a HTTP/1.1\r\n".to_vec();
    for i in 0..1000 {
        headers.extend_from_slice(format!("X-{i}: {}\r\n", "h".repeat(1000)).as_bytes());
    }
    headers.extend_from_slice(b"\r\n");
    assert_eq!(raw_status(rest, &headers), 431);
    // A 10 KB URL: 414.
    let url = format!("GET /{} HTTP/1.1\r\n\r\n", "u".repeat(10_000));
    assert_eq!(raw_status(rest, url.as_bytes()), 414);
    // And normal requests are still served, a chunked body too.
    let (status, _) = http(rest, "PUT", "/demo/small", "fine", "text/plain");
    assert_eq!(status, 200);
    assert_eq!(
        raw_status(
            rest,
            b"PUT /demo/chunked HTTP/1.1\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nfine\r\n0\r\n\r\n"
        ),
        200
    );
}

/// Sends `bytes` on a new connection and reads to its close: the status of each answer.
fn raw_statuses(port: u16, bytes: &[u8]) -> Vec<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let _ = s.write_all(bytes);
    let mut response = Vec::new();
    let _ = s.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response);
    text.match_indices("HTTP/1.")
        .filter_map(|(i, _)| text.get(i + 9..i + 12)?.parse().ok())
        .collect()
}

#[test]
fn rest_refuses_ambiguous_request_framing() {
    let (rest, port) = (free_port(), free_port());
    let _weftd = start(
        rest,
        port,
        r#"{ plugins: { storage_manager: { storages: { demo: { key_expr: "demo/**", volume: "memory" } } } } }"#,
    );
    // Each request hides a second one where a server reading its framing another way
    // would find it: a put on demo/smuggled.
    let smuggled = "PUT /demo/smuggled HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx";
    for framing in [
        "Transfer-Encoding: gzip, chunked",
        "Content-Length: 5\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: chunked\r\nContent-Length: 5",
        "Content-Length: 5\r\nContent-Length: 0",
    ] {
        let request =
            format!("PUT /demo/a HTTP/1.1\r\nHost: x\r\n{framing}\r\n\r\n0\r\n\r\n{smuggled}");
        assert_eq!(raw_statuses(rest, request.as_bytes()), [400], "{framing}");
    }
    // Chunks badly framed: no CRLF after a chunk's data; a size that is not hexadecimal.
    for chunks in ["1\r\nxX0\r\n\r\n", "g\r\nx\r\n0\r\n\r\n"] {
        let request = format!(
            "PUT /demo/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n{chunks}{smuggled}"
        );
        assert_eq!(raw_statuses(rest, request.as_bytes()), [400], "{chunks:?}");
    }
    // HTTP/1.0 without keep-alive: the connection closes after the answer, and what
    // follows is not read.
    let request = format!(
        "PUT /demo/a HTTP/1.0\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok{smuggled}"
    );
    assert_eq!(raw_statuses(rest, request.as_bytes()), [200]);
    // Once the put that was served is stored, the one after it would be too, had it been
    // read.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !http(rest, "GET", "/demo/a", "", "text/plain")
        .1
        .contains("\"ok\"")
    {
        assert!(Instant::now() < deadline, "demo/a never stored");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        http(rest, "GET", "/demo/smuggled", "", "text/plain").1,
        "[]"
    );
}

#[test]
fn rest_serves_requests_concurrently() {
    use std::sync::{Arc, Mutex};
    const GETS: usize = 6;
    let (rest, port) = (free_port(), free_port());
    let weftd = start(rest, port, "{ queries_default_timeout: 5000 }");
    // A queryable that never answers: each GET waits for the timeout.
    let answering = weftd.weft_client();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    let _queryable = answering
        .declare_queryable("slow/**", false, move |q| keep.lock().unwrap().push(q))
        .unwrap();
    // Until the router knows the queryable, a GET returns at once with nothing.
    let deadline = Instant::now() + Duration::from_secs(10);
    while held.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the queryable never got a query");
        let mut s = TcpStream::connect(("127.0.0.1", rest)).unwrap();
        write!(s, "GET /slow/probe HTTP/1.1\r\nConnection: close\r\n\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    held.lock().unwrap().clear();
    let finished = Arc::new(Mutex::new(0usize));
    let gets: Vec<_> = (0..GETS)
        .map(|i| {
            let finished = finished.clone();
            std::thread::spawn(move || {
                let (status, _) = http(rest, "GET", &format!("/slow/{i}"), "", "text/plain");
                *finished.lock().unwrap() += 1;
                status
            })
        })
        .collect();
    // Every GET reaches the queryable while the first one still waits for its replies:
    // none waits for another.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let seen = held.lock().unwrap().len();
        if seen >= GETS {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {seen} of {GETS} GETs reached the queryable"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        *finished.lock().unwrap(),
        0,
        "a GET finished before the last one started"
    );
    for g in gets {
        assert_eq!(g.join().unwrap(), 200);
    }
}

/// weftd listening on a free loopback port with `extra` arguments, its standard error
/// read line by line: (the process, its lines, the port).
fn weftd_logging(extra: &[&str]) -> (std::process::Child, std::sync::mpsc::Receiver<String>, u16) {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let port = free_port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_weftd"))
        .args(["-l", &endpoint, "--no-multicast-scouting"])
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    wait_for_port(port);
    (child, lines, port)
}

#[test]
fn weftd_logs_sessions_opening_and_closing() {
    let (mut child, lines, port) = weftd_logging(&[]);
    let client = weft_testkit::weft_client(port).unwrap();
    let zid = client.zid().to_string();
    let wait_for = |zid: &str, what: &str| loop {
        let line = lines
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("weftd never logged {what}"));
        if line.contains(zid) && line.contains(what) {
            return line;
        }
    };
    wait_for(&zid, "session open");
    client.close();
    // With why: the client closed it.
    let line = wait_for(&zid, "session closed");
    assert!(line.contains("closed by the peer"), "{line}");
    // A node that goes away without a Close.
    let raw = weft_testkit::raw::RawClient::connect(port, 0xab12).unwrap();
    wait_for("ab12", "session open");
    drop(raw);
    let line = wait_for("ab12", "session closed");
    assert!(line.contains("its link ended without a Close"), "{line}");
    let _ = child.kill();
    let _ = child.wait();

    // The same as JSON lines, for log collectors: the peer, its role and the link as
    // fields of their own.
    let (mut child, lines, port) = weftd_logging(&["--log-format", "json"]);
    let client = weft_testkit::weft_client(port).unwrap();
    let zid = client.zid().to_string();
    let mut events = Vec::new();
    while events.len() < 2 {
        let line = lines
            .recv_timeout(Duration::from_secs(10))
            .expect("weftd's JSON log lines");
        let entry: Value = serde_json::from_str(&line).expect("one JSON object per line");
        if entry["fields"]["peer"] == zid.as_str() {
            assert_eq!(entry["level"], "INFO");
            assert_eq!(entry["fields"]["whatami"], "client");
            assert!(entry["fields"]["link"]
                .as_str()
                .unwrap()
                .starts_with("tcp/127.0.0.1:"));
            events.push(entry["fields"]["message"].as_str().unwrap().to_string());
            if events.len() == 1 {
                client.close();
            } else {
                let reason = entry["fields"]["reason"].as_str().unwrap();
                assert!(reason.starts_with("closed by the peer"), "{entry}");
            }
        }
    }
    assert_eq!(events, ["session open", "session closed"]);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn zenohds_command_line_flags_are_accepted_with_zenohds_meaning() {
    use weft_testkit::raw::RawClient;
    let port = free_port();
    let weftd = Weftd::start(
        port,
        &[
            "--cfg",
            "transport/unicast/max_sessions:2",
            "-i",
            "1234abcd",
            "--no-timestamp",
            "--adminspace-permissions",
            "rw",
        ],
    );
    // --id: the admin space is under that id.
    let client = weftd.weft_client();
    let replies: Vec<_> = client
        .get("@/1234abcd/router", &weft::GetOptions::default())
        .unwrap()
        .iter()
        .collect();
    assert_eq!(replies.len(), 1, "the admin space under --id");
    // --no-timestamp: a routed value has no timestamp added.
    let stamped = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = stamped.clone();
    let _sub = client
        .declare_subscriber("flags/**", move |s| {
            seen.lock().unwrap().push(s.timestamp.is_some())
        })
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    // --cfg max_sessions 2: the weft client and this one.
    let publisher = weftd.weft_client();
    while stamped.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "nothing routed");
        publisher
            .put("flags/a", b"x", &weft::PutOptions::default())
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!stamped.lock().unwrap()[0], "weftd added a timestamp");
    if let Ok(mut third) = RawClient::connect(port, 0x3333) {
        let closed = third.recv_until(Duration::from_secs(10), |_| false);
        assert!(
            closed.is_err_and(|e| e.kind() != std::io::ErrorKind::TimedOut),
            "a third session under --cfg max_sessions:2"
        );
    }
    // A bad value is refused, naming the key.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_weftd"))
        .args(["--cfg", "transport/unicast/max_sessions:0", "-l"])
        .arg(format!("tcp/127.0.0.1:{}", free_port()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("transport.unicast.max_sessions"));
}

#[test]
fn the_admin_space_honours_zenohs_permissions_key_and_the_flag_over_it() {
    let admin_replies = |weftd: &Weftd| {
        let client = weftd.weft_client();
        let replies = client
            .get("@/*/router", &weft::GetOptions::default())
            .unwrap()
            .iter()
            .count();
        client.close();
        replies
    };
    let closed = "{ adminspace: { enabled: true, permissions: { read: false, write: false } } }";
    let weftd = Weftd::with_config(free_port(), closed, &[]);
    assert_eq!(admin_replies(&weftd), 0, "read: false answered");
    drop(weftd);
    let weftd = Weftd::with_config(free_port(), closed, &["--adminspace-permissions", "r"]);
    assert_eq!(
        admin_replies(&weftd),
        1,
        "the flag did not override the file"
    );
    drop(weftd);
    let weftd = Weftd::with_config(free_port(), "{}", &[]);
    assert_eq!(admin_replies(&weftd), 1, "read by default");
}

/// The built-in REST interface and storage manager show in the admin space where zenohd
/// shows the plugins it loaded: in `@/<zid>/router`'s `plugins`, as
/// `@/<zid>/router/plugins/<id>` (the plugin's state) and under
/// `@/<zid>/router/status/plugins/<id>/` (REST's `version` and `port`, the storage
/// manager's `version` and each storage's configuration), with zenohd's encodings.
#[test]
fn the_built_in_plugins_show_in_the_admin_space_as_zenohds_plugins() {
    let (rest, port) = (free_port(), free_port());
    let weftd = start(
        rest,
        port,
        r#"{ plugins: { storage_manager: { storages: { demo: { key_expr: "demo/**", volume: "memory" } } } } }"#,
    );
    let client = weftd.weft_client();
    let get = |selector: &str| -> Vec<(String, String, Vec<u8>)> {
        let mut replies: Vec<_> = client
            .get(selector, &weft::GetOptions::default())
            .unwrap()
            .iter()
            .filter_map(|r| r.result.ok())
            .map(|s| {
                let key = s.key_expr.to_string();
                let key = key
                    .split_once("/router")
                    .map_or(key.clone(), |(_, k)| k.to_string());
                (key, s.encoding.to_string(), s.payload.to_vec())
            })
            .collect();
        replies.sort();
        replies
    };
    let json = |payload: &[u8]| -> Value { serde_json::from_slice(payload).unwrap() };

    let router = get("@/*/router");
    let plugins = &json(&router[0].2)["plugins"];
    assert_eq!(plugins["rest"]["name"], "rest", "{plugins}");
    assert_eq!(
        plugins["storage_manager"]["name"], "storage_manager",
        "{plugins}"
    );
    assert!(plugins["rest"]["path"].as_str().unwrap().contains("weftd"));

    let states = get("@/*/router/plugins/**");
    let ids: Vec<&str> = states.iter().map(|(k, _, _)| k.as_str()).collect();
    assert_eq!(ids, ["/plugins/rest", "/plugins/storage_manager"]);
    for (_, encoding, payload) in &states {
        assert_eq!(encoding, "application/json");
        let state = json(payload);
        assert_eq!(state["state"], "Started", "{state}");
        assert_eq!(state["report"]["level"], "Normal", "{state}");
        assert_eq!(state["id"], state["name"], "{state}");
    }

    let status = get("@/*/router/status/plugins/**");
    let keys: Vec<&str> = status.iter().map(|(k, _, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "/status/plugins/rest/__path__",
            "/status/plugins/rest/port",
            "/status/plugins/rest/version",
            "/status/plugins/storage_manager/__path__",
            "/status/plugins/storage_manager/storages/demo",
            "/status/plugins/storage_manager/version",
        ]
    );
    let value = |suffix: &str| {
        let (_, encoding, payload) = status.iter().find(|(k, _, _)| k.ends_with(suffix)).unwrap();
        (encoding.clone(), payload.clone())
    };
    let (encoding, path) = value("rest/__path__");
    assert_eq!(encoding, "text/plain");
    assert!(String::from_utf8(path).unwrap().contains("weftd"));
    let (encoding, port_status) = value("rest/port");
    assert_eq!(encoding, "application/json");
    let http_port = json(&port_status)["http_port"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(http_port.ends_with(&format!(":{rest}")), "{http_port}");
    assert!(json(&value("rest/version").1)
        .as_str()
        .unwrap()
        .starts_with('v'));
    let storage = json(&value("storages/demo").1);
    assert_eq!(storage["key_expr"], "demo/**", "{storage}");
    assert_eq!(storage["volume"], "memory", "{storage}");
    client.close();
}

/// The samples of weftd's `/metrics`, parsed by the Prometheus project's own OpenMetrics
/// parser (which refuses what a Prometheus server would).
fn scrape(rest: u16) -> Vec<Value> {
    let (status, body) = http(rest, "GET", "/metrics", "", "text/plain");
    assert_eq!(status, 200, "{body}");
    let python = zenoh_python().expect("the Python with Eclipse Zenoh");
    let mut parser = std::process::Command::new(python)
        .arg(weft_testkit::repo_root().join("tests/interop/openmetrics_parse.py"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    parser
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = parser.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "Prometheus's parser refused the metrics: {}\n{body}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The value of the sample `name` whose labels include `labels`.
fn metric(samples: &[Value], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|s| s["name"] == name && labels.iter().all(|(k, v)| s["labels"][*k] == *v))
        .and_then(|s| s["value"].as_f64())
}

/// `GET /metrics` on the REST port serves what Prometheus scrapes: the admin space's
/// metrics in OpenMetrics text, counting exactly what was sent, with the process's gauges.
#[test]
fn prometheus_scrapes_exact_counts_and_the_process_from_metrics() {
    if zenoh_python().is_none() {
        return;
    }
    let (rest, port) = (free_port(), free_port());
    let weftd = start(rest, port, "{}");
    let client = weftd.weft_client();
    let zid = client.zid().to_string();
    let received = |samples: &[Value]| {
        metric(
            samples,
            "weft_session_messages_received_total",
            &[("remote_id", zid.as_str())],
        )
        .unwrap_or_else(|| panic!("no counter for {zid} in {samples:#?}"))
    };
    // Once what the client sends on opening has arrived, the count stays put.
    let deadline = Instant::now() + Duration::from_secs(10);
    let before = loop {
        let first = received(&scrape(rest));
        std::thread::sleep(Duration::from_millis(200));
        let samples = scrape(rest);
        if received(&samples) == first {
            break samples;
        }
        assert!(Instant::now() < deadline, "the client never went quiet");
    };
    assert_eq!(
        metric(&before, "weft_sessions", &[("remote_whatami", "client")]),
        Some(1.0)
    );
    for _ in 0..10 {
        client
            .put("metrics/a", b"0123456789", &weft::PutOptions::default())
            .unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let after = loop {
        let samples = scrape(rest);
        if received(&samples) >= received(&before) + 10.0 || Instant::now() > deadline {
            break samples;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(received(&after) - received(&before), 10.0);
    // Nobody subscribes to metrics/a: weftd discarded all ten, for no route.
    let discarded = |samples: &[Value], reason: &str| {
        metric(
            samples,
            "weft_session_discarded_total",
            &[("remote_id", zid.as_str()), ("reason", reason)],
        )
        .unwrap_or_else(|| panic!("no {reason} discards for {zid}"))
    };
    assert_eq!(
        discarded(&after, "no_route") - discarded(&before, "no_route"),
        10.0
    );
    for reason in ["too_large", "over_budget", "malformed", "expired"] {
        assert_eq!(discarded(&after, reason), 0.0, "{reason}");
    }
    let rss = metric(&after, "process_resident_memory_bytes", &[]).unwrap();
    assert!(rss > 1e6 && rss < 1e9, "{rss}");
    let threads = metric(&after, "process_threads", &[]).unwrap();
    assert!(threads >= 2.0, "{threads}");
    let (open, max) = (
        metric(&after, "process_open_fds", &[]).unwrap(),
        metric(&after, "process_max_fds", &[]).unwrap(),
    );
    assert!(open >= 3.0 && open < max, "{open} of {max}");
    assert!(metric(&after, "zenoh_build_info", &[("local_whatami", "router")]).is_some());
    for reason in ["congestion", "closed", "unqueueable"] {
        let labels = [("remote_id", zid.as_str()), ("reason", reason)];
        assert_eq!(
            metric(&after, "weft_session_dropped_total", &labels),
            Some(0.0)
        );
    }
    client.close();
}

/// Each subscriber key expression a session declared counts exactly the messages and
/// payload bytes weftd forwarded to it for that expression, in the metrics and in the
/// admin space's session counters; each publisher's key expression, what it published.
#[test]
fn each_subscription_counts_what_it_drew_in_the_metrics() {
    if zenoh_python().is_none() {
        return;
    }
    let (rest, port) = (free_port(), free_port());
    let weftd = start(rest, port, "{}");
    let (s1, s2, publisher) = (
        weftd.weft_client(),
        weftd.weft_client(),
        weftd.weft_client(),
    );
    let (_all, all_rx) = s1.declare_subscriber_channel("traffic/**", 1024).unwrap();
    let (_a, a_rx) = s1.declare_subscriber_channel("traffic/a/*", 1024).unwrap();
    let (_b, b_rx) = s2.declare_subscriber_channel("traffic/b/*", 1024).unwrap();
    // A declared publisher: its interest tells weftd what it publishes on.
    let on_a = publisher
        .declare_publisher("traffic/a/x", weft::PutOptions::default())
        .unwrap();
    // Until both sessions' subscriptions have reached the publisher through weftd.
    let deadline = Instant::now() + Duration::from_secs(20);
    let put = |key: &str, payload: &[u8]| {
        publisher
            .put(key, payload, &weft::PutOptions::default())
            .unwrap()
    };
    let (mut warm, mut warm_puts) = ((0, 0), 0u64);
    while warm.0 == 0 || warm.1 == 0 {
        assert!(
            Instant::now() < deadline,
            "the subscriptions never reached weftd"
        );
        put("traffic/a/x", b"warm");
        warm_puts += 1;
        put("traffic/b/y", b"warm");
        warm.0 += a_rx.recv_timeout(Duration::from_millis(100)).iter().count();
        warm.1 += b_rx.recv_timeout(Duration::from_millis(100)).iter().count();
    }
    for _ in 0..10 {
        on_a.put(b"twelve bytes").unwrap();
    }
    for _ in 0..5 {
        put("traffic/b/y", b"abc");
    }
    // What each subscriber received in all, warming up included: (messages, bytes).
    let drain = |rx: &weft::FifoReceiver<weft::Sample>, last: &[u8], n: usize| {
        let (mut messages, mut bytes, mut lasts) = (0u64, 0u64, 0);
        while lasts < n {
            let s = rx
                .recv_timeout(Duration::from_secs(10))
                .expect("every sample");
            messages += 1;
            bytes += s.payload.len() as u64;
            lasts += usize::from(s.payload.to_vec() == last);
        }
        while let Ok(s) = rx.recv_timeout(Duration::from_millis(200)) {
            messages += 1;
            bytes += s.payload.len() as u64;
        }
        (messages, bytes)
    };
    // The samples taken while warming up count too ("warm", 4 bytes each).
    let with_warm = |(m, b): (u64, u64), warm: usize| (m + warm as u64, b + 4 * warm as u64);
    let a = with_warm(drain(&a_rx, b"twelve bytes", 10), warm.0);
    let b = with_warm(drain(&b_rx, b"abc", 5), warm.1);
    let all = drain(&all_rx, b"abc", 5);
    let (z1, z2) = (s1.zid().to_string(), s2.zid().to_string());
    let expected = [
        (z1.as_str(), "traffic/**", all),
        (z1.as_str(), "traffic/a/*", a),
        (z2.as_str(), "traffic/b/*", b),
    ];
    let counted = |samples: &[Value], zid: &str, key: &str| {
        let labels = [("remote_id", zid), ("key_expr", key)];
        (
            metric(samples, "weft_subscription_messages_total", &labels).map(|v| v as u64),
            metric(samples, "weft_subscription_bytes_total", &labels).map(|v| v as u64),
            metric(samples, "weft_subscription_dropped_total", &labels).map(|v| v as u64),
        )
    };
    // The counters follow the sends: wait until they reach what was received.
    let deadline = Instant::now() + Duration::from_secs(10);
    let samples = loop {
        let samples = scrape(rest);
        let reached = expected
            .iter()
            .all(|(zid, key, (m, _))| counted(&samples, zid, key).0.is_some_and(|n| n >= *m));
        if reached || Instant::now() > deadline {
            break samples;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    for (zid, key, (messages, bytes)) in expected {
        assert_eq!(
            counted(&samples, zid, key),
            (Some(messages), Some(bytes), Some(0)),
            "{zid} {key}"
        );
    }
    // The admin space's session counters say the same.
    let reply = publisher
        .get(
            &format!("@/{}/router", weftd_zid(&publisher)),
            &weft::GetOptions::default(),
        )
        .unwrap()
        .recv_timeout(Duration::from_secs(10))
        .expect("the router's description");
    let router: Value = serde_json::from_slice(&reply.result.expect("a value").payload).unwrap();
    let session = router["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["peer"] == z2.as_str())
        .unwrap()
        .clone();
    assert_eq!(
        session["counters"]["subscriptions"],
        serde_json::json!([{ "key_expr": "traffic/b/*", "messages": b.0, "bytes": b.1, "dropped": 0 }])
    );
    // What the publisher published on traffic/a/x: everything put there, through its
    // publisher or not (weftd knows the key expression, not which call sent it).
    let published = (warm_puts + 10, warm_puts * 4 + 10 * 12);
    let publisher_zid = publisher.zid().to_string();
    let labels = [
        ("remote_id", publisher_zid.as_str()),
        ("key_expr", "traffic/a/x"),
    ];
    let samples = scrape(rest);
    assert_eq!(
        (
            metric(&samples, "weft_publication_messages_total", &labels),
            metric(&samples, "weft_publication_bytes_total", &labels),
        ),
        (Some(published.0 as f64), Some(published.1 as f64))
    );
}

/// Thousands of subscriptions cost a bounded number of series: the busiest key
/// expressions one by one, the others added up in one `other` series, and the series
/// still add up to all that the subscriber was sent.
#[test]
fn many_subscriptions_show_as_the_busiest_and_one_other_series() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
    use std::sync::Arc;
    if zenoh_python().is_none() {
        return;
    }
    const SUBSCRIPTIONS: usize = 2_000;
    // What weftd shows one by one, and what the busiest ten draw.
    const SHOWN: usize = 100;
    const BUSY: u64 = 21;
    let (rest, port) = (free_port(), free_port());
    let weftd = start(rest, port, "{}");
    let (subscriber, publisher) = (weftd.weft_client(), weftd.weft_client());
    // Messages and bytes received, and whether the last put arrived.
    let received = Arc::new((AtomicU64::new(0), AtomicU64::new(0), AtomicBool::new(false)));
    let _subscribers: Vec<weft::Subscriber> = (0..SUBSCRIPTIONS)
        .map(|i| {
            let received = received.clone();
            subscriber
                .declare_subscriber(&format!("many/{i}"), move |s| {
                    let payload = s.payload.to_vec();
                    received.0.fetch_add(1, Relaxed);
                    received.1.fetch_add(payload.len() as u64, Relaxed);
                    if payload == b"last" {
                        received.2.store(true, Relaxed);
                    }
                })
                .unwrap()
        })
        .collect();
    let put = |key: &str, payload: &[u8]| {
        publisher
            .put(key, payload, &weft::PutOptions::default())
            .unwrap()
    };
    // Until the last declaration has reached the publisher through weftd (the others
    // went before it).
    let deadline = Instant::now() + Duration::from_secs(30);
    while received.0.load(Relaxed) == 0 {
        assert!(
            Instant::now() < deadline,
            "the subscriptions never reached weftd"
        );
        put(&format!("many/{}", SUBSCRIPTIONS - 1), b"warm");
        std::thread::sleep(Duration::from_millis(20));
    }
    // One message on each of 300 keys, 20 more on each of the first ten, then the last.
    for i in 0..300 {
        put(&format!("many/{i}"), b"one");
    }
    for _ in 1..BUSY {
        for i in 0..10 {
            put(&format!("many/{i}"), b"busy");
        }
    }
    put("many/1998", b"last");
    // Samples arrive in the order they were sent: after the last, all have arrived.
    while !received.2.load(Relaxed) {
        assert!(Instant::now() < deadline, "the last put never arrived");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (messages, bytes) = (received.0.load(Relaxed), received.1.load(Relaxed));
    let series = |samples: &[Value], name: &str| -> Vec<Value> {
        samples
            .iter()
            .filter(|s| s["name"] == name)
            .cloned()
            .collect()
    };
    let sum = |series: &[Value]| -> u64 {
        series
            .iter()
            .map(|s| s["value"].as_f64().unwrap() as u64)
            .sum()
    };
    let samples = loop {
        let samples = scrape(rest);
        let counted = sum(&series(&samples, "weft_subscription_messages_total"));
        if counted >= messages || Instant::now() > deadline {
            break samples;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let zid = subscriber.zid().to_string();
    for name in [
        "weft_subscription_messages_total",
        "weft_subscription_bytes_total",
        "weft_subscription_dropped_total",
    ] {
        let series = series(&samples, name);
        assert_eq!(series.len(), SHOWN + 1, "{name}");
        let other: Vec<&Value> = series
            .iter()
            .filter(|s| s["labels"]["key_expr"] == "other")
            .collect();
        assert_eq!(other.len(), 1, "{name}");
        assert!(other[0]["labels"].get("remote_id").is_none(), "{name}");
        let expected = match name {
            "weft_subscription_messages_total" => messages,
            "weft_subscription_bytes_total" => bytes,
            _ => 0,
        };
        assert_eq!(sum(&series), expected, "{name}");
    }
    for i in 0..10 {
        let key = format!("many/{i}");
        let labels = [("remote_id", zid.as_str()), ("key_expr", key.as_str())];
        assert_eq!(
            metric(&samples, "weft_subscription_messages_total", &labels),
            Some(BUSY as f64),
            "{key}"
        );
    }
    // A scrape's size does not grow with the declarations.
    let (status, body) = http(rest, "GET", "/metrics", "", "text/plain");
    assert_eq!(status, 200);
    assert!(body.len() < 100_000, "{} bytes", body.len());
}

/// The ZenohID of the router `client` is connected to.
fn weftd_zid(client: &weft::Session) -> String {
    client.peers()[0].to_string()
}

/// A storage's metrics count exactly what it holds and wrote: keys and bytes held, writes,
/// and a histogram of write durations whose count is every sample it handled.
#[test]
fn a_storage_shows_what_it_holds_and_wrote_in_the_metrics() {
    if zenoh_python().is_none() {
        return;
    }
    let (rest, port) = (free_port(), free_port());
    let weftd = start(
        rest,
        port,
        r#"{ plugins: { storage_manager: { storages: { demo: { key_expr: "demo/**", volume: "memory" } } } } }"#,
    );
    let client = weftd.weft_client();
    let options = weft::PutOptions::default();
    client.put("demo/a", b"12345", &options).unwrap();
    client.put("demo/b", b"1234567890", &options).unwrap();
    client.put("demo/a", b"123", &options).unwrap();
    client.put("demo/c", b"x", &options).unwrap();
    client.delete("demo/c", &options).unwrap();
    let storage = [("storage", "demo"), ("key_expr", "demo/**")];
    let deadline = Instant::now() + Duration::from_secs(10);
    let samples = loop {
        let samples = scrape(rest);
        if metric(&samples, "weft_storage_writes_total", &storage) == Some(5.0) {
            break samples;
        }
        assert!(Instant::now() < deadline, "{samples:#?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(metric(&samples, "weft_storage_keys", &storage), Some(2.0));
    assert_eq!(metric(&samples, "weft_storage_bytes", &storage), Some(13.0));
    assert_eq!(
        metric(&samples, "weft_storage_errors_total", &storage),
        Some(0.0)
    );
    assert_eq!(
        metric(&samples, "weft_storage_queries_refused_total", &storage),
        Some(0.0)
    );
    assert_eq!(
        metric(&samples, "weft_storage_write_seconds_count", &storage),
        Some(5.0)
    );
    let inf = [("storage", "demo"), ("key_expr", "demo/**"), ("le", "+Inf")];
    assert_eq!(
        metric(&samples, "weft_storage_write_seconds_bucket", &inf),
        Some(5.0)
    );
    client.close();
}

/// Queries routed through weftd are counted exactly, those nobody answers apart, with the
/// histogram of their durations counting every answered one.
#[test]
fn routed_queries_show_in_the_metrics() {
    if zenoh_python().is_none() {
        return;
    }
    let (rest, port) = (free_port(), free_port());
    let weftd = start(rest, port, "{}");
    let (answering, asking) = (weftd.weft_client(), weftd.weft_client());
    let _queryable = answering
        .declare_queryable("q/**", true, |q| {
            let _ = q.reply("q/a", b"answer", &weft::PutOptions::default());
        })
        .unwrap();
    let routed = |samples: &[Value]| metric(samples, "weft_queries_routed_total", &[]).unwrap();
    // The queryable known to weftd: a get answered.
    let deadline = Instant::now() + Duration::from_secs(10);
    while asking
        .get("q/a", &weft::GetOptions::default())
        .unwrap()
        .iter()
        .filter_map(|r| r.result.ok())
        .count()
        == 0
    {
        assert!(Instant::now() < deadline, "the queryable never answered");
    }
    let before = scrape(rest);
    for _ in 0..3 {
        let got = asking.get("q/a", &weft::GetOptions::default()).unwrap();
        assert_eq!(got.iter().filter_map(|r| r.result.ok()).count(), 1);
    }
    let none = asking
        .get("nobody/here", &weft::GetOptions::default())
        .unwrap();
    assert_eq!(none.iter().count(), 0);
    let after = scrape(rest);
    assert_eq!(routed(&after) - routed(&before), 4.0);
    let unanswered = |s: &[Value]| metric(s, "weft_queries_unanswered_total", &[]).unwrap();
    assert_eq!(unanswered(&after) - unanswered(&before), 1.0);
    let timed = |s: &[Value]| metric(s, "weft_query_seconds_count", &[]).unwrap();
    assert_eq!(timed(&after) - timed(&before), 3.0);
    answering.close();
    asking.close();
}

/// `--metrics-declared-series N` sets how many declarations each per-declaration family
/// shows one by one; the others are still added up in one `other` series.
#[test]
fn the_declarations_shown_one_by_one_are_configurable() {
    if zenoh_python().is_none() {
        return;
    }
    const SHOWN: usize = 3;
    const SUBSCRIPTIONS: usize = 20;
    let (rest, port) = (free_port(), free_port());
    let weftd = Weftd::start(
        port,
        &[
            "--rest-http-port",
            &rest.to_string(),
            "--metrics-declared-series",
            &SHOWN.to_string(),
        ],
    );
    wait_for_port(rest);
    let subscriber = weftd.weft_client();
    let _subscribers: Vec<weft::Subscriber> = (0..SUBSCRIPTIONS)
        .map(|i| {
            subscriber
                .declare_subscriber(&format!("few/{i}"), |_| {})
                .unwrap()
        })
        .collect();
    // Until weftd shows every declaration (one by one or in the sum).
    let deadline = Instant::now() + Duration::from_secs(30);
    let series = loop {
        let series: Vec<Value> = scrape(rest)
            .into_iter()
            .filter(|s| s["name"] == "weft_subscription_messages_total")
            .collect();
        if series.len() == SHOWN + 1 || Instant::now() > deadline {
            break series;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(series.len(), SHOWN + 1, "{series:?}");
    assert_eq!(
        series
            .iter()
            .filter(|s| s["labels"]["key_expr"] == "other")
            .count(),
        1
    );
    // Out of range: refused with the flag named.
    let (code, stderr) = common::run_weftd(&["--metrics-declared-series", "100001"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--metrics-declared-series"), "{stderr}");
}
