//! A small HTTP/1.1 server with a bound on everything a client sends: the request line,
//! the headers, the body, the time between bytes, and the connections served at once.
//! Each connection has a thread of its own, so one slow request (a GET waiting for
//! replies) never delays another. Only what the REST interface needs: one request at a
//! time per connection (keep-alive), `Content-Length` and chunked bodies.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What one client may send and hold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// The request line (method, target, version), bytes.
    pub(crate) request_line: usize,
    /// All header lines together, bytes.
    pub(crate) headers: usize,
    /// The body, bytes.
    pub(crate) body: usize,
    /// The longest wait for the next bytes of a request (and for a new request on a
    /// kept-alive connection).
    pub(crate) idle: Duration,
    /// Connections served at once; beyond, a connection is answered 503 and closed.
    pub(crate) connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            request_line: 8 << 10,
            headers: 64 << 10,
            body: 64 << 20,
            idle: Duration::from_secs(10),
            connections: 64,
        }
    }
}

/// A request, read whole.
#[derive(Debug)]
pub(crate) struct Request {
    /// `GET`, `PUT`...
    pub(crate) method: String,
    /// The path and query, as sent (`/demo/**?a=1`).
    pub(crate) target: String,
    /// Header names (lower case) and values.
    pub(crate) headers: Vec<(String, String)>,
    /// The body.
    pub(crate) body: Vec<u8>,
}

impl Request {
    /// The value of header `name` (lower case), if sent.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A response.
#[derive(Debug)]
pub(crate) struct Response {
    /// The status code.
    pub(crate) status: u16,
    /// Its Content-Type.
    pub(crate) content_type: String,
    /// The body.
    pub(crate) body: Vec<u8>,
}

impl Response {
    /// A response of `status` with a body of type `content_type`.
    pub(crate) fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            content_type: content_type.into(),
            body: body.into(),
        }
    }

    /// A plain-text response.
    pub(crate) fn text(status: u16, text: &str) -> Self {
        Self::new(status, "text/plain", text)
    }
}

/// Why a request could not be read; each maps to the status it is answered with.
#[derive(Debug)]
enum ReadError {
    /// The connection ended (or timed out) between requests: nothing to answer.
    Closed,
    /// 400, with what was wrong.
    Bad(&'static str),
    /// 408: the client stopped sending in the middle of a request.
    Timeout,
    /// 414.
    UriTooLong,
    /// 431.
    HeadersTooLarge,
    /// 413.
    BodyTooLarge,
}

impl ReadError {
    fn response(&self, limits: &Limits) -> Option<Response> {
        let (status, text) = match self {
            Self::Closed => return None,
            Self::Bad(why) => (400, (*why).to_string()),
            Self::Timeout => (408, "the request did not arrive in time".into()),
            Self::UriTooLong => (
                414,
                format!("the request line is over {} bytes", limits.request_line),
            ),
            Self::HeadersTooLarge => (
                431,
                format!("the headers are over {} bytes", limits.headers),
            ),
            Self::BodyTooLarge => (413, format!("the body is over {} bytes", limits.body)),
        };
        Some(Response::text(status, &text))
    }
}

fn from_io(e: &io::Error, started: bool) -> ReadError {
    let timeout = matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    );
    match (timeout, started) {
        (true, true) => ReadError::Timeout,
        _ => ReadError::Closed,
    }
}

/// Reads one line of at most `max` bytes (its CRLF included); `None` if longer.
fn read_line<R: BufRead>(r: &mut R, max: usize, out: &mut Vec<u8>) -> io::Result<Option<()>> {
    out.clear();
    let n = r.take(max as u64 + 1).read_until(b'\n', out)?;
    if n == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    if !out.ends_with(b"\n") {
        return if n > max {
            Ok(None)
        } else {
            Err(io::ErrorKind::UnexpectedEof.into())
        };
    }
    while out.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        out.pop();
    }
    Ok(Some(()))
}

/// Reads one request from `r`.
fn read_request<R: BufRead>(r: &mut R, limits: &Limits) -> Result<Request, ReadError> {
    let mut line = Vec::new();
    match read_line(r, limits.request_line, &mut line) {
        Ok(Some(())) => {}
        Ok(None) => return Err(ReadError::UriTooLong),
        Err(e) => return Err(from_io(&e, false)),
    }
    let text = std::str::from_utf8(&line).map_err(|_| ReadError::Bad("request line not UTF-8"))?;
    let mut parts = text.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ReadError::Bad("malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(ReadError::Bad("only HTTP/1.x is served"));
    }
    let (method, target) = (method.to_string(), target.to_string());
    let mut headers = Vec::new();
    let mut header_bytes = 0;
    loop {
        let left = limits.headers.saturating_sub(header_bytes);
        match read_line(r, left, &mut line) {
            Ok(Some(())) => {}
            Ok(None) => return Err(ReadError::HeadersTooLarge),
            Err(e) => return Err(from_io(&e, true)),
        }
        header_bytes += line.len() + 2;
        if line.is_empty() {
            break;
        }
        let text = std::str::from_utf8(&line).map_err(|_| ReadError::Bad("header not UTF-8"))?;
        let (name, value) = text
            .split_once(':')
            .ok_or(ReadError::Bad("malformed header"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let mut request = Request {
        method,
        target,
        headers,
        body: Vec::new(),
    };
    let chunked = request
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    if chunked {
        request.body = read_chunked(r, limits)?;
    } else if let Some(len) = request.header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| ReadError::Bad("invalid Content-Length"))?;
        if len > limits.body {
            return Err(ReadError::BodyTooLarge);
        }
        // Grown as the bytes come, not allocated from the announced length.
        let mut body = Vec::new();
        r.take(len as u64)
            .read_to_end(&mut body)
            .map_err(|e| from_io(&e, true))?;
        if body.len() < len {
            return Err(ReadError::Closed);
        }
        request.body = body;
    }
    Ok(request)
}

/// Reads a chunked body, within the body limit.
fn read_chunked<R: BufRead>(r: &mut R, limits: &Limits) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    let mut line = Vec::new();
    loop {
        match read_line(r, 64, &mut line) {
            Ok(Some(())) => {}
            Ok(None) => return Err(ReadError::Bad("malformed chunk size")),
            Err(e) => return Err(from_io(&e, true)),
        }
        let size = std::str::from_utf8(&line)
            .ok()
            .and_then(|l| usize::from_str_radix(l.split(';').next()?.trim(), 16).ok())
            .ok_or(ReadError::Bad("malformed chunk size"))?;
        if size == 0 {
            // Trailers, up to the empty line.
            loop {
                match read_line(r, limits.headers, &mut line) {
                    Ok(Some(())) if line.is_empty() => return Ok(body),
                    Ok(Some(())) => {}
                    Ok(None) => return Err(ReadError::HeadersTooLarge),
                    Err(e) => return Err(from_io(&e, true)),
                }
            }
        }
        if body.len() + size > limits.body {
            return Err(ReadError::BodyTooLarge);
        }
        let start = body.len();
        r.take(size as u64)
            .read_to_end(&mut body)
            .map_err(|e| from_io(&e, true))?;
        if body.len() < start + size {
            return Err(ReadError::Closed);
        }
        let mut crlf = [0u8; 2];
        r.read_exact(&mut crlf).map_err(|e| from_io(&e, true))?;
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

fn write_response(w: &mut impl Write, response: &Response, close: bool) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len(),
        if close { "close" } else { "keep-alive" }
    );
    w.write_all(head.as_bytes())?;
    w.write_all(&response.body)?;
    w.flush()
}

/// Ends a connection whose request was refused while the client may still be sending
/// (a body over the limit): closing with its bytes unread would reset the connection,
/// and the reset can destroy the answer before the client reads it. So the sending side
/// is shut and what arrives is read and thrown away, for at most `DRAIN_AFTER_REFUSAL`.
fn close_after_answer(reader: &mut BufReader<TcpStream>, writer: &TcpStream) {
    let _ = writer.shutdown(std::net::Shutdown::Write);
    let deadline = std::time::Instant::now() + DRAIN_AFTER_REFUSAL;
    let _ = reader
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(100)));
    let mut scratch = [0u8; 16 << 10];
    while std::time::Instant::now() < deadline {
        match reader.read(&mut scratch) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
    }
}

/// How long a refused request's remaining bytes are read and discarded.
const DRAIN_AFTER_REFUSAL: Duration = Duration::from_secs(2);

/// What serves requests.
pub(crate) type Handler = Arc<dyn Fn(&Request) -> Response + Send + Sync>;

/// Serves one connection: requests one after the other, until the client closes, goes
/// idle, asks to close, or sends something over a limit (answered, then closed).
fn serve_connection(stream: TcpStream, limits: &Limits, handler: &Handler) {
    let _ = stream.set_read_timeout(Some(limits.idle));
    let _ = stream.set_write_timeout(Some(limits.idle));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let request = match read_request(&mut reader, limits) {
            Ok(r) => r,
            Err(e) => {
                if let Some(response) = e.response(limits) {
                    if write_response(&mut writer, &response, true).is_ok() {
                        close_after_answer(&mut reader, &writer);
                    }
                }
                return;
            }
        };
        let close = request
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let response = handler(&request);
        if write_response(&mut writer, &response, close).is_err() || close {
            return;
        }
    }
}

/// Serves `listener` on a thread of its own, one thread per connection within
/// `limits.connections`.
pub(crate) fn serve(listener: TcpListener, limits: Limits, handler: Handler) -> io::Result<()> {
    let active = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new()
        .name("weftd-http".into())
        .spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else {
                    // Out of descriptors: let some connections end first.
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                };
                let taken = active.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < limits.connections).then_some(n + 1)
                });
                if taken.is_err() {
                    let busy = Response::text(503, "too many connections, try again");
                    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
                    let _ = write_response(&mut stream, &busy, true);
                    continue;
                }
                let (done, handler) = (active.clone(), handler.clone());
                let spawned = std::thread::Builder::new()
                    .name("weftd-http-conn".into())
                    .spawn(move || {
                        serve_connection(stream, &limits, &handler);
                        done.fetch_sub(1, Ordering::AcqRel);
                    });
                if spawned.is_err() {
                    active.fetch_sub(1, Ordering::AcqRel);
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8], limits: &Limits) -> Result<Request, ReadError> {
        read_request(&mut io::Cursor::new(bytes.to_vec()), limits)
    }

    #[test]
    fn a_request_with_a_body_is_read_whole() {
        let r = read(
            b"PUT /demo/a HTTP/1.1\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!((r.method.as_str(), r.target.as_str()), ("PUT", "/demo/a"));
        assert_eq!(r.header("content-type"), Some("text/plain"));
        assert_eq!(r.body, b"hello");
    }

    #[test]
    fn a_chunked_body_is_read_whole() {
        let r = read(
            b"PUT /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2;x=y\r\nlo\r\n0\r\n\r\n",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(r.body, b"hello");
    }

    #[test]
    fn every_part_over_its_limit_is_refused_with_its_status() {
        let limits = Limits {
            request_line: 32,
            headers: 64,
            body: 8,
            ..Limits::default()
        };
        let long_target = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(40));
        let e = read(long_target.as_bytes(), &limits).unwrap_err();
        assert_eq!(e.response(&limits).unwrap().status, 414);
        let big_headers = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "b".repeat(100));
        let e = read(big_headers.as_bytes(), &limits).unwrap_err();
        assert_eq!(e.response(&limits).unwrap().status, 431);
        let e = read(
            b"PUT / HTTP/1.1\r\nContent-Length: 9\r\n\r\n123456789",
            &limits,
        )
        .unwrap_err();
        assert_eq!(e.response(&limits).unwrap().status, 413);
        let e = read(
            b"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n12345\r\n5\r\n12345\r\n0\r\n\r\n",
            &limits,
        )
        .unwrap_err();
        assert_eq!(e.response(&limits).unwrap().status, 413);
        let e = read(b"GET / HTTP/1.1\r\nno colon\r\n\r\n", &limits).unwrap_err();
        assert_eq!(e.response(&limits).unwrap().status, 400);
        // A connection that ends between requests is not answered.
        assert!(read(b"", &limits).unwrap_err().response(&limits).is_none());
    }
}
