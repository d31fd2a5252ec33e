//! The server over raw TCP on 127.0.0.1: the bytes are written by hand, the answers read
//! as they come.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::*;

/// Serves on an ephemeral loopback port with `limits`; `/panic` panics, `/stream` sends
/// two parts then waits for its client to go, anything else is answered 200 with the
/// body it brought.
fn server(limits: Limits) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handler: Handler = Arc::new(|r: &Request| {
        assert_ne!(r.target, "/panic", "a handler that panics");
        let ended = match r.target.as_str() {
            "/stream" => Some(&STREAM_ENDED),
            "/stream-1.0" => Some(&STREAM_10_ENDED),
            _ => None,
        };
        if let Some(ended) = ended {
            return Response::stream(200, "text/event-stream", Box::new(TwoParts(0, ended)));
        }
        Response::new(200, "text/plain", r.body.clone())
    });
    serve(listener, limits, handler, &[("X-Every", "1")]).unwrap();
    addr
}

static STREAM_ENDED: AtomicBool = AtomicBool::new(false);
static STREAM_10_ENDED: AtomicBool = AtomicBool::new(false);

/// `one\n`, `two\n`, then nothing until dropped (then the flag is set).
struct TwoParts(u8, &'static AtomicBool);

impl Stream for TwoParts {
    fn poll_part(&mut self, _: &mut Context<'_>) -> Poll<Option<Vec<u8>>> {
        self.0 += 1;
        match self.0 {
            1 => Poll::Ready(Some(b"one\n".to_vec())),
            2 => Poll::Ready(Some(b"two\n".to_vec())),
            _ => Poll::Pending,
        }
    }
}

impl Drop for TwoParts {
    fn drop(&mut self) {
        self.1.store(true, Ordering::SeqCst);
    }
}

/// Writes `bytes` on a new connection (a refusal may come before all are written) and
/// reads what the server sends until it closes, or 5 s.
fn exchange(addr: std::net::SocketAddr, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    let _ = stream.write_all(bytes);
    answer(&stream)
}

/// Reads what the server sends until it closes, or 5 s.
fn answer(stream: &TcpStream) -> String {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut text = Vec::new();
    let _ = (&mut &*stream).read_to_end(&mut text);
    String::from_utf8_lossy(&text).into_owned()
}

/// The status of each answer in `text`, in order.
fn statuses(text: &str) -> Vec<&str> {
    text.match_indices("HTTP/1.")
        .filter_map(|(i, _)| text.get(i + 9..i + 12))
        .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        .collect()
}

#[test]
fn ambiguous_body_framing_is_refused_with_400_and_the_connection_closed() {
    let addr = server(Limits::default());
    let smuggled = "GET /smuggled HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
    for head in [
        "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: chunked, identity\r\n",
        "Transfer-Encoding: gzip\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
        "Content-Length: 5\r\nContent-Length: 6\r\n",
        "Content-Length: -5\r\n",
    ] {
        let request = format!("PUT /a HTTP/1.1\r\n{head}\r\n5\r\nhello\r\n0\r\n\r\n{smuggled}");
        let text = exchange(addr, request.as_bytes());
        assert_eq!(statuses(&text), ["400"], "{head:?}: {text:?}");
        assert!(text.contains("\r\nX-Every: 1\r\n"), "{text:?}");
    }
    // HTTP/1.0 has no chunked bodies.
    let text = exchange(
        addr,
        b"PUT /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    );
    assert_eq!(statuses(&text), ["400"], "{text:?}");
}

#[test]
fn bad_chunk_framing_is_refused_with_400_and_the_connection_closed() {
    let addr = server(Limits::default());
    let smuggled = "GET /smuggled HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
    for body in [
        // No CRLF after the chunk's data.
        "5\r\nhelloXX0\r\n\r\n",
        "5\r\nhello\n0\r\n\r\n",
        // Bad sizes.
        "z\r\nhello\r\n0\r\n\r\n",
        "-5\r\nhello\r\n0\r\n\r\n",
        "5 5\r\nhello\r\n0\r\n\r\n",
        "fffffffffffffffffff\r\nhello\r\n0\r\n\r\n",
    ] {
        let request =
            format!("PUT /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{body}{smuggled}");
        let text = exchange(addr, request.as_bytes());
        assert_eq!(statuses(&text), ["400"], "{body:?}: {text:?}");
    }
    // Sound chunks are read whole, and the connection closes after their request.
    let text = exchange(
        addr,
        format!(
            "PUT /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2;x=y\r\nlo\r\n0\r\n\r\n{smuggled}"
        )
        .as_bytes(),
    );
    assert_eq!(statuses(&text), ["200"], "{text:?}");
    assert!(text.ends_with("\r\n\r\nhello"), "{text:?}");
}

#[test]
fn an_http10_request_without_keep_alive_closes_after_its_answer() {
    let addr = server(Limits::default());
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .write_all(b"PUT /a HTTP/1.0\r\nContent-Length: 2\r\n\r\nok")
        .unwrap();
    let start = Instant::now();
    // The server closes: the read ends well before the idle limit (10 s).
    let text = answer(&stream);
    assert!(start.elapsed() < Duration::from_secs(4), "{text:?}");
    assert_eq!(statuses(&text), ["200"], "{text:?}");
    assert!(text.ends_with("\r\n\r\nok"), "{text:?}");
    // What a client sends after it is not read as a request.
    let text = exchange(
        addr,
        b"PUT /a HTTP/1.0\r\nContent-Length: 2\r\n\r\nokGET /b HTTP/1.0\r\n\r\n",
    );
    assert_eq!(statuses(&text), ["200"], "{text:?}");
}

#[test]
fn a_kept_alive_connection_serves_requests_in_order_and_closes_when_idle() {
    let addr = server(Limits {
        idle: Duration::from_millis(300),
        ..Limits::default()
    });
    let mut stream = TcpStream::connect(addr).unwrap();
    // Pipelined: two requests, then a third after the first answers.
    stream
        .write_all(b"PUT /a HTTP/1.1\r\nContent-Length: 3\r\n\r\none")
        .unwrap();
    stream
        .write_all(b"PUT /b HTTP/1.1\r\nContent-Length: 3\r\n\r\ntwo")
        .unwrap();
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut first = [0u8; 12];
    stream.read_exact(&mut first).unwrap();
    stream
        .write_all(b"PUT /c HTTP/1.1\r\nContent-Length: 5\r\n\r\nthree")
        .unwrap();
    let start = Instant::now();
    let text = answer(&stream);
    assert!(start.elapsed() < Duration::from_secs(4), "{text:?}");
    assert_eq!(statuses(&text), ["200", "200"], "{text:?}");
    assert!(text.contains("\r\n\r\ntwoHTTP/1.1 200"), "{text:?}");
    assert!(text.ends_with("\r\n\r\nthree"), "{text:?}");
}

#[test]
fn a_bad_head_after_a_good_one_is_answered_after_it() {
    let addr = server(Limits::default());
    let text = exchange(
        addr,
        b"PUT /a HTTP/1.1\r\nContent-Length: 2\r\n\r\nokPUT /b HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nok",
    );
    assert_eq!(statuses(&text), ["200", "400"], "{text:?}");
}

#[test]
fn a_streamed_body_is_chunked_and_ends_when_the_client_goes() {
    let addr = server(Limits::default());
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .write_all(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(b"4\r\ntwo\n\r\n") {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "{:?}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    let got = String::from_utf8_lossy(&got);
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got:?}");
    assert!(
        got.contains("\r\nContent-Type: text/event-stream\r\n")
            && got.contains("\r\nTransfer-Encoding: chunked\r\n")
            && got.contains("\r\nX-Every: 1\r\n"),
        "{got:?}"
    );
    assert!(
        got.ends_with("\r\n\r\n4\r\none\n\r\n4\r\ntwo\n\r\n"),
        "{got:?}"
    );
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !STREAM_ENDED.load(Ordering::SeqCst) {
        assert!(
            Instant::now() < deadline,
            "the stream never saw its client go"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_streamed_body_to_an_http10_client_ends_with_the_connection() {
    let addr = server(Limits::default());
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .write_all(b"GET /stream-1.0 HTTP/1.0\r\n\r\n")
        .unwrap();
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(b"one\ntwo\n") {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "{:?}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    let got = String::from_utf8_lossy(&got);
    assert!(got.starts_with("HTTP/1.0 200 OK\r\n"), "{got:?}");
    assert!(!got.contains("Transfer-Encoding"), "{got:?}");
    assert!(got.ends_with("\r\n\r\none\ntwo\n"), "{got:?}");
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !STREAM_10_ENDED.load(Ordering::SeqCst) {
        assert!(
            Instant::now() < deadline,
            "the stream never saw its client go"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn every_part_over_its_limit_is_refused_with_its_status() {
    let addr = server(Limits {
        request_line: 64,
        headers: 256,
        body: 8,
        ..Limits::default()
    });
    let long_target = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(100));
    assert_eq!(statuses(&exchange(addr, long_target.as_bytes())), ["414"]);
    let big_headers = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "b".repeat(300));
    assert_eq!(statuses(&exchange(addr, big_headers.as_bytes())), ["431"]);
    let text = exchange(
        addr,
        b"PUT /a HTTP/1.1\r\nContent-Length: 9\r\n\r\n123456789",
    );
    assert_eq!(statuses(&text), ["413"], "{text:?}");
    // Answers from the server itself carry the common headers.
    assert!(text.contains("\r\nX-Every: 1\r\n"), "{text:?}");
    let text = exchange(
        addr,
        b"PUT /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n12345\r\n5\r\n12345\r\n0\r\n\r\n",
    );
    assert_eq!(statuses(&text), ["413"], "{text:?}");
    let text = exchange(addr, b"GET / HTTP/1.1\r\nX: \xff\r\n\r\n");
    assert_eq!(statuses(&text), ["400"], "{text:?}");
    let text = exchange(addr, b"GET /a<b HTTP/1.1\r\n\r\n");
    assert_eq!(statuses(&text), ["400"], "{text:?}");
    assert!(text.contains("\r\nX-Every: 1\r\n"), "{text:?}");
}

#[test]
fn a_head_request_gets_the_head_alone() {
    let addr = server(Limits::default());
    let text = exchange(
        addr,
        b"HEAD /a HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    );
    assert!(
        text.starts_with("HTTP/1.1 200") && text.contains("\r\nContent-Length: 2\r\n"),
        "{text:?}"
    );
    assert!(text.ends_with("\r\n\r\n"), "{text:?}");
}

#[test]
fn a_request_head_trickling_in_is_cut_off_at_its_deadline() {
    let addr = server(Limits {
        idle: Duration::from_millis(500),
        head: Duration::from_millis(300),
        ..Limits::default()
    });
    let stream = TcpStream::connect(addr).unwrap();
    let writer = stream.try_clone().unwrap();
    // A byte every 50 ms: no read waits long, the head never ends.
    let trickle = std::thread::spawn(move || {
        for b in b"GET / HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
            if (&mut &writer).write_all(&[*b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let start = Instant::now();
    let text = answer(&stream);
    assert!(text.starts_with("HTTP/1.1 408"), "{text:?}");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    trickle.join().unwrap();
}

#[test]
fn a_request_begun_and_stalled_is_answered_408() {
    let addr = server(Limits {
        idle: Duration::from_millis(200),
        ..Limits::default()
    });
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(b"GET /dem").unwrap();
    let text = answer(&stream);
    assert!(text.starts_with("HTTP/1.1 408"), "{text:?}");
    // A body stalled, too.
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .write_all(b"PUT /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhe")
        .unwrap();
    let text = answer(&stream);
    assert!(text.starts_with("HTTP/1.1 408"), "{text:?}");
}

#[test]
fn a_client_expecting_100_continue_gets_it_before_sending_its_body() {
    let addr = server(Limits::default());
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .write_all(b"PUT /a HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        .unwrap();
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut interim = [0u8; 25];
    stream.read_exact(&mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(b"hello").unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let text = answer(&stream);
    assert!(
        text.starts_with("HTTP/1.1 200") && text.ends_with("hello"),
        "{text:?}"
    );
}

#[test]
fn a_handler_that_panics_is_answered_500_and_gives_its_place_back() {
    let addr = server(Limits {
        connections: 1,
        ..Limits::default()
    });
    // Sends `request` on a new connection until it is served rather than refused with
    // 503 (the previous connection's task may not have ended yet); returns the answer.
    let served = |request: &[u8]| {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let text = exchange(addr, request);
            if !text.starts_with("HTTP/1.1 503") {
                return text;
            }
            assert!(Instant::now() < deadline, "the one place never came back");
        }
    };
    for _ in 0..3 {
        let text = served(b"GET /panic HTTP/1.1\r\nConnection: close\r\n\r\n");
        assert!(text.starts_with("HTTP/1.1 500"), "{text:?}");
    }
    let text = served(b"PUT /a HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    assert!(text.starts_with("HTTP/1.1 200"), "{text:?}");
}

#[test]
fn a_connection_refused_for_lack_of_places_reads_503_not_a_reset() {
    let addr = server(Limits {
        connections: 1,
        ..Limits::default()
    });
    // The one place, held by an idle connection (served once it answers).
    let holder = TcpStream::connect(addr).unwrap();
    (&holder)
        .write_all(b"GET /a HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 12];
    let _ = holder.set_read_timeout(Some(Duration::from_secs(5)));
    (&holder).read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    for _ in 0..5 {
        // A request with a body the server never reads: it is answered all the same.
        let mut stream = TcpStream::connect(addr).unwrap();
        let body = vec![b'x'; 200_000];
        let head = format!("PUT /a HTTP/1.1\r\nContent-Length: {}\r\n\r\n", body.len());
        let sent = stream
            .write_all(head.as_bytes())
            .and_then(|()| stream.write_all(&body));
        let text = answer(&stream);
        assert!(
            sent.is_ok() && text.starts_with("HTTP/1.1 503") && text.contains("X-Every: 1"),
            "sent: {sent:?}, answered: {text:?}"
        );
    }
}
