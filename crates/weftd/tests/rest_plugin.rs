//! weftd's REST interface used as Zenoh's REST plugin is: real HTTP requests, with Eclipse
//! Zenoh clients answering the queries and publishing what the event streams receive.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use weft_testkit::{free_port, zenoh_python};

mod common;
use common::{wait_for_port, Weftd};

/// weftd with REST on its own port.
fn start() -> (Weftd, u16) {
    let (rest, port) = (free_port(), free_port());
    let weftd = Weftd::start(port, &["--rest-http-port", &rest.to_string()]);
    wait_for_port(rest);
    (weftd, rest)
}

/// An answer: status, headers (names in lower case), body.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.text()))
    }
}

/// Sends one request (`headers` as `Name: value` lines) and reads the answer to the
/// connection's close.
fn request(port: u16, method: &str, path: &str, headers: &[&str], body: &[u8]) -> Answer {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let split = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete head");
    let head = String::from_utf8(all[..split].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap()[9..12].parse().unwrap();
    let headers = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.trim().to_ascii_lowercase(), v.trim().to_string())
        })
        .collect();
    Answer {
        status,
        headers,
        body: all[split + 4..].to_vec(),
    }
}

/// GETs `path` until `done` holds for the answer (at most 10 s).
fn get_until(port: u16, path: &str, headers: &[&str], done: impl Fn(&Answer) -> bool) -> Answer {
    get_within(Duration::from_secs(10), port, path, headers, done)
}

/// GETs `path` until `done` holds for the answer (at most `time`).
fn get_within(
    time: Duration,
    port: u16,
    path: &str,
    headers: &[&str],
    done: impl Fn(&Answer) -> bool,
) -> Answer {
    let deadline = Instant::now() + time;
    loop {
        let answer = request(port, "GET", path, headers, b"");
        if done(&answer) {
            return answer;
        }
        assert!(Instant::now() < deadline, "never: {answer:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An event-stream client: the request sent, the head read.
struct EventStream {
    stream: TcpStream,
    received: String,
}

impl EventStream {
    fn open(port: u16, path: &str) -> (Self, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(15)))
            .unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n"
        )
        .unwrap();
        let mut es = Self {
            stream,
            received: String::new(),
        };
        while !es.received.contains("\r\n\r\n") {
            es.read_more();
        }
        let (head, rest) = es.received.split_once("\r\n\r\n").unwrap();
        let head = head.to_string();
        es.received = rest.to_string();
        (es, head)
    }

    fn read_more(&mut self) {
        let mut buf = [0u8; 4096];
        let n = self
            .stream
            .read(&mut buf)
            .expect("more of the event stream");
        assert!(n > 0, "the event stream ended");
        self.received.push_str(&String::from_utf8_lossy(&buf[..n]));
    }

    /// The next event: (its name, its data as JSON).
    fn next_event(&mut self) -> (String, Value) {
        loop {
            if let Some(start) = self.received.find("event: ") {
                if let Some(len) = self.received[start..].find("\n\n") {
                    let event = self.received[start..start + len].to_string();
                    self.received.drain(..start + len + 2);
                    let (name, data) = event.split_once('\n').unwrap();
                    let data = data.strip_prefix("data: ").unwrap();
                    return (
                        name["event: ".len()..].to_string(),
                        serde_json::from_str(data).unwrap(),
                    );
                }
            }
            self.read_more();
        }
    }
}

#[test]
fn put_patch_delete_and_get_answer_as_the_plugin_does() {
    let (_weftd, rest) = start();
    let put = request(
        rest,
        "PUT",
        "/rp/json",
        &["Content-Type: application/json"],
        br#"{"a": [1, 2]}"#,
    );
    assert_eq!((put.status, put.body.len()), (200, 0));
    assert_eq!(put.header("access-control-allow-origin"), Some("*"));
    assert_eq!(put.header("content-type"), None);
    // No Content-Type: the default encoding, zenoh/bytes.
    let (_session, received) = {
        let session = weft_testkit::weft_client(_weftd.port).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let sub = session
            .declare_subscriber("rp/**", move |s| {
                let _ = tx.send(s.clone());
            })
            .unwrap();
        ((session, sub), rx)
    };
    // The subscriber is known to weftd once a put through REST reaches it.
    let deadline = Instant::now() + Duration::from_secs(10);
    let sample = loop {
        assert_eq!(
            request(rest, "PATCH", "/rp/bytes", &[], b"\x00\x01").status,
            200
        );
        if let Ok(s) = received.recv_timeout(Duration::from_millis(100)) {
            break s;
        }
        assert!(Instant::now() < deadline, "the subscriber never got a put");
    };
    assert_eq!(&*sample.key_expr, "rp/bytes");
    assert_eq!(&sample.payload[..], b"\x00\x01");
    assert_eq!(sample.encoding, "zenoh/bytes");
    let del = request(rest, "DELETE", "/rp/bytes", &[], b"");
    assert_eq!((del.status, del.body.len()), (200, 0));
    let deleted = loop {
        let s = received.recv_timeout(Duration::from_secs(10)).unwrap();
        if s.kind == weft::SampleKind::Delete {
            break s;
        }
    };
    assert_eq!(&*deleted.key_expr, "rp/bytes");

    // A key expression that is not one: 400, with the reason.
    let bad = request(rest, "GET", "/rp/**/**", &[], b"");
    assert_eq!(bad.status, 400, "{}", bad.text());
    assert!(!bad.body.is_empty());
    assert_eq!(bad.header("access-control-allow-origin"), Some("*"));
    // No replies: an empty list, an empty raw answer, an empty list in HTML.
    let none = request(rest, "GET", "/rp/nothing", &[], b"");
    assert_eq!((none.status, none.text()), (200, "[]".to_string()));
    assert_eq!(none.header("content-type"), Some("application/json"));
    let raw = request(rest, "GET", "/rp/nothing?_raw=true", &[], b"");
    assert_eq!((raw.status, raw.body.len()), (200, 0));
    let html = request(rest, "GET", "/rp/nothing", &["Accept: text/html"], b"");
    assert_eq!(html.text(), "<dl>\n</dl>\n");
    assert_eq!(
        html.header("content-type"),
        Some("text/html; charset=utf-8")
    );
}

#[test]
fn cors_preflight_and_other_methods() {
    let (_weftd, rest) = start();
    let pre = request(
        rest,
        "OPTIONS",
        "/rp/a",
        &[
            "Origin: http://example.org",
            "Access-Control-Request-Method: PUT",
            "Access-Control-Request-Headers: content-type",
        ],
        b"",
    );
    assert_eq!(pre.status, 200);
    assert_eq!(pre.header("access-control-allow-origin"), Some("*"));
    assert_eq!(
        pre.header("access-control-allow-methods"),
        Some("GET,POST,PUT,PATCH,DELETE")
    );
    assert_eq!(
        pre.header("access-control-allow-headers"),
        Some("content-type")
    );
    assert_eq!(
        pre.header("vary"),
        Some("origin, access-control-request-method, access-control-request-headers")
    );
    // Any OPTIONS is a preflight, as the plugin's CORS layer answers it.
    let other = request(rest, "OPTIONS", "/", &[], b"");
    assert_eq!((other.status, other.body.len()), (200, 0));
    assert_eq!(
        other.header("access-control-allow-methods"),
        Some("GET,POST,PUT,PATCH,DELETE")
    );
    assert_eq!(other.header("access-control-allow-headers"), None);
    let trace = request(rest, "TRACE", "/rp/a", &[], b"");
    assert_eq!(trace.status, 405);
    // The status page stays at `/`.
    let page = request(rest, "GET", "/", &[], b"");
    assert!(page.text().contains("<h1>weftd</h1>"));
    // A HEAD is a GET without the body.
    let head = request(rest, "HEAD", "/rp/nothing", &[], b"");
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length"), Some("2"));
    assert!(head.body.is_empty());
}

#[test]
fn at_local_is_this_routers_admin_space() {
    let (weftd, rest) = start();
    let answer = get_until(rest, "/@/local/router", &[], |a| a.json() != json!([]));
    let list = answer.json();
    let key = list[0]["key"].as_str().unwrap();
    assert!(key.starts_with("@/") && key.ends_with("/router"), "{key}");
    assert!(!key.contains("local"));
    assert_eq!(list[0]["encoding"], "application/json");
    assert!(list[0]["value"]["locators"][0]
        .as_str()
        .unwrap()
        .ends_with(&weftd.port.to_string()));
    // Its raw form: the JSON text itself, typed.
    let raw = request(rest, "GET", "/@/local/router?_raw", &[], b"");
    assert_eq!(raw.header("content-type"), Some("application/json"));
    let value: Value = serde_json::from_slice(&raw.body).unwrap();
    assert_eq!(value["whatami"], "router");
}

#[test]
fn gets_answer_zenoh_queryables_replies_rendered_per_encoding() {
    if zenoh_python().is_none() {
        return;
    }
    let (weftd, rest) = start();
    let args = |key: &'static str, reply: &'static str, encoding: Option<&'static str>| {
        let mut a = vec!["--queryable", key, "--reply", reply, "--timeout", "60"];
        if let Some(e) = encoding {
            a.extend(["--reply-encoding", e]);
        }
        a
    };
    let _json = weftd.zenoh_client(&args("rq/json", r#"{"n": 1}"#, Some("application/json")));
    let _text = weftd.zenoh_client(&args("rq/text", "hello", Some("text/plain")));
    let _bytes = weftd.zenoh_client(&args("rq/bytes", "hello", None));
    let mut err_args = args("rq/err", "refused", Some("text/plain"));
    err_args.push("--reply-err");
    let _err = weftd.zenoh_client(&err_args);
    let list = get_until(rest, "/rq/*", &[], |a| {
        a.json().as_array().is_some_and(|l| l.len() == 4)
    })
    .json();
    let by_key = |k: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|v| v["key"] == k)
            .cloned()
            .unwrap_or_else(|| panic!("no {k} in {list}"))
    };
    assert_eq!(
        by_key("rq/json"),
        json!({ "key": "rq/json", "value": { "n": 1 }, "encoding": "application/json", "timestamp": null })
    );
    assert_eq!(
        by_key("rq/text"),
        json!({ "key": "rq/text", "value": "hello", "encoding": "text/plain", "timestamp": null })
    );
    assert_eq!(
        by_key("rq/bytes"),
        json!({ "key": "rq/bytes", "value": "aGVsbG8=", "encoding": "zenoh/bytes", "timestamp": null })
    );
    assert_eq!(
        by_key("ERROR"),
        json!({ "key": "ERROR", "value": "refused", "encoding": "text/plain", "timestamp": null })
    );
    // The first reply's bytes, typed by its encoding.
    let raw = request(rest, "GET", "/rq/text?_raw=true", &[], b"");
    assert_eq!((raw.status, raw.text()), (200, "hello".to_string()));
    assert_eq!(raw.header("content-type"), Some("text/plain"));
    let html = request(
        rest,
        "GET",
        "/rq/text",
        &["Accept: text/html; charset=utf-8"],
        b"",
    );
    assert_eq!(
        html.text(),
        "<dl>\n<dt>rq/text</dt>\n<dd>hello</dd>\n</dl>\n"
    );
    // An encoding saying how its bytes are compressed: a Content-Encoding header.
    let _gz = weftd.zenoh_client(&args(
        "rgz/a",
        "zipped",
        Some("text/plain;content-encoding=gzip"),
    ));
    let raw = get_until(rest, "/rgz/a?_raw", &[], |a| !a.body.is_empty());
    assert_eq!(raw.header("content-type"), Some("text/plain"));
    assert_eq!(raw.header("content-encoding"), Some("gzip"));
    assert_eq!(raw.text(), "zipped");
}

#[test]
fn a_post_sends_its_body_to_the_zenoh_queryable() {
    if zenoh_python().is_none() {
        return;
    }
    let (weftd, rest) = start();
    let queryable = weftd.zenoh_client(&[
        "--queryable",
        "rpost/q",
        "--reply",
        "ok",
        "--reply-encoding",
        "zenoh/string",
        "--timeout",
        "60",
    ]);
    let answer = get_until(rest, "/rpost/q?x=1", &[], |a| a.json() != json!([]));
    assert_eq!(answer.json()[0]["value"], "ok");
    let mut record = Value::Null;
    while record.get("payload").is_none() {
        let posted = request(
            rest,
            "POST",
            "/rpost/q?x=2&y",
            &["Content-Type: text/plain"],
            b"question",
        );
        assert_eq!(posted.json()[0]["value"], "ok");
        // What the queryable saw of each query, in order: the POST's has a payload.
        loop {
            record = serde_json::from_str(&queryable.line(10)).unwrap();
            if record["parameters"] == "x=2&y" {
                break;
            }
        }
    }
    assert_eq!(record["payload"], "question");
    assert_eq!(record["encoding"], "text/plain");
}

#[test]
fn an_event_stream_receives_a_zenoh_clients_puts_and_deletes() {
    if zenoh_python().is_none() {
        return;
    }
    let (weftd, rest) = start();
    let (mut events, head) = EventStream::open(rest, "/rsse/**");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("Content-Type: text/event-stream"), "{head}");
    assert!(head.contains("Access-Control-Allow-Origin: *"), "{head}");
    // weftd declared its subscriber before it answered: the Zenoh client's put reaches it.
    let publisher = weftd.zenoh_client(&[
        "--put",
        "rsse/a",
        "--payload",
        "hello",
        "--encoding",
        "text/plain",
        "--delete",
        "--block",
    ]);
    let (name, mut data) = events.next_event();
    assert_eq!(name, "PUT");
    // The router timestamps what it routes (as Zenoh's does): Zenoh's form, time/clock.
    let timestamp = data["timestamp"].take();
    let (time, clock) = timestamp.as_str().unwrap().split_once('/').unwrap();
    assert!(time.parse::<u64>().is_ok() && u128::from_str_radix(clock, 16).is_ok());
    assert_eq!(
        data,
        json!({ "key": "rsse/a", "value": "hello", "encoding": "text/plain", "timestamp": null })
    );
    let (name, data) = events.next_event();
    assert_eq!(name, "DELETE");
    assert_eq!(data["key"], "rsse/a");
    assert_eq!(data["value"], Value::Null);
    assert!(publisher.wait());
    // When the client goes, so does weftd's subscriber.
    let subscribed = |a: &Answer| a.text().contains("rsse/**");
    assert!(subscribed(&request(
        rest,
        "GET",
        "/@/local/router/subscriber/**",
        &[],
        b""
    )));
    drop(events);
    get_until(rest, "/@/local/router/subscriber/**", &[], |a| {
        !subscribed(a)
    });
}

#[test]
fn an_event_stream_client_that_never_reads_is_given_up_not_buffered_for() {
    let (weftd, rest) = start();
    let (events, head) = EventStream::open(rest, "/rslow/**");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    // 25 MiB for a client that reads none of it: more than its socket buffers hold.
    let session = weft_testkit::weft_client(weftd.port).unwrap();
    let payload = vec![b'x'; 64 << 10];
    let options = weft::PutOptions {
        congestion_control: weft::CongestionControl::Block,
        ..weft::PutOptions::default()
    };
    for _ in 0..400 {
        session.put("rslow/a", &payload, &options).unwrap();
    }
    // The router is not held up by it.
    let other = request(rest, "GET", "/rslow/nothing", &[], b"");
    assert_eq!((other.status, other.text()), (200, "[]".to_string()));
    // Once its writes have waited the idle limit (10 s), weftd gives the client up: its
    // subscriber goes, and the connection ends after what was already sent.
    get_within(
        Duration::from_secs(40),
        rest,
        "/@/local/router/subscriber/**",
        &[],
        |a| !a.text().contains("rslow/**"),
    );
    let mut stream = events.stream;
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut sink = Vec::new();
    let end = stream.read_to_end(&mut sink);
    assert!(
        end.is_ok()
            || end
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "{end:?}"
    );
    assert!(sink.len() < 25 << 20, "{} bytes", sink.len());
}

#[test]
fn five_thousand_replies_all_come_back() {
    let (weftd, rest) = start();
    let session = weft_testkit::weft_client(weftd.port).unwrap();
    let _queryable = session
        .declare_queryable("rmany/**", true, |q| {
            let options = weft::PutOptions {
                encoding: "text/plain".into(),
                ..weft::PutOptions::default()
            };
            for i in 0..5000 {
                q.reply(&format!("rmany/{i}"), i.to_string().as_bytes(), &options)
                    .unwrap();
            }
        })
        .unwrap();
    let answer = get_until(rest, "/rmany/**", &[], |a| a.json() != json!([]));
    let list = answer.json();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 5000);
    let mut values: Vec<u32> = list
        .iter()
        .map(|v| v["value"].as_str().unwrap().parse().unwrap())
        .collect();
    values.sort_unstable();
    assert!(values.iter().copied().eq(0..5000));
}
