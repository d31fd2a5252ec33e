//! A small HTTP/1.1 server with a bound on everything a client sends: the request line,
//! the headers, the body, the time between bytes, the time a request's head may take,
//! and the connections served at once.
//! Each connection has a thread of its own, so one slow request (a GET waiting for
//! replies) never delays another. Only what the REST interface needs: one request at a
//! time per connection (keep-alive), `Content-Length` and chunked request bodies, `HEAD`,
//! and responses whose body is written as it comes (chunked; an event stream), which a
//! client that stops reading cannot hold for longer than the idle limit.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// The longest time a request's line and headers may take, however their bytes
    /// trickle in (a client sending a byte now and then does not hold a connection).
    pub(crate) head: Duration,
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
            head: Duration::from_secs(30),
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
    /// Whether the client speaks HTTP/1.0 (no chunked bodies to it).
    pub(crate) http10: bool,
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

/// What a streamed body is written with: its chunks, and whether the client is gone.
pub(crate) struct StreamWriter<'a> {
    socket: &'a TcpStream,
    chunked: bool,
}

impl StreamWriter<'_> {
    /// Writes `bytes` as the body's next part and sends it at once. Fails when the client
    /// is gone or has not read for the idle limit (its socket buffers full).
    pub(crate) fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let mut w = self.socket;
        if self.chunked {
            // One write: the chunk goes out as one segment (the socket has no delay).
            let mut chunk = format!("{:x}\r\n", bytes.len()).into_bytes();
            chunk.extend_from_slice(bytes);
            chunk.extend_from_slice(b"\r\n");
            w.write_all(&chunk)?;
        } else {
            w.write_all(bytes)?;
        }
        w.flush()
    }

    /// Whether the client has closed its side (or the connection failed); what it sent
    /// meanwhile is read and discarded. Never waits.
    pub(crate) fn client_gone(&mut self) -> bool {
        if self.socket.set_nonblocking(true).is_err() {
            return true;
        }
        let mut scratch = [0u8; 4 << 10];
        let gone = loop {
            match (&mut &*self.socket).read(&mut scratch) {
                Ok(0) => break true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break true,
            }
        };
        self.socket.set_nonblocking(false).is_err() || gone
    }
}

/// A body written over time by its own code, on the connection's thread, until it returns;
/// the connection closes after it.
pub(crate) type Streamer = Box<dyn FnOnce(&mut StreamWriter<'_>) + Send>;

/// A response's body.
pub(crate) enum Body {
    /// All of it, known now.
    Full(Vec<u8>),
    /// Written as it comes (`Transfer-Encoding: chunked`, or up to the connection's close
    /// for an HTTP/1.0 client).
    Stream(Streamer),
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Full(b) => write!(f, "Full({} bytes)", b.len()),
            Self::Stream(_) => f.write_str("Stream"),
        }
    }
}

/// A response.
#[derive(Debug)]
pub(crate) struct Response {
    /// The status code.
    pub(crate) status: u16,
    /// Header names and values, Content-Type included when there is one (Content-Length,
    /// Transfer-Encoding and Connection are the server's).
    pub(crate) headers: Vec<(String, String)>,
    /// The body.
    pub(crate) body: Body,
}

impl Response {
    /// A response of `status` with a body of type `content_type`.
    pub(crate) fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: Body::Full(body.into()),
        }
    }

    /// A response of `status` with no body and no Content-Type.
    pub(crate) fn empty(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Body::Full(Vec::new()),
        }
    }

    /// A response whose body `streamer` writes as it comes.
    pub(crate) fn stream(status: u16, content_type: &str, streamer: Streamer) -> Self {
        Self {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: Body::Stream(streamer),
        }
    }

    /// A plain-text response.
    pub(crate) fn text(status: u16, text: &str) -> Self {
        Self::new(status, "text/plain; charset=utf-8", text)
    }

    /// The same response with header `name: value` added.
    pub(crate) fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
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
#[cfg(test)]
fn read_request<R: BufRead>(r: &mut R, limits: &Limits) -> Result<Request, ReadError> {
    let mut request = read_head(r, limits)?;
    read_body(r, &mut request, limits)?;
    Ok(request)
}

/// Whether the client waits for `100 Continue` before it sends the body.
fn expects_continue(request: &Request) -> bool {
    request
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
}

/// Reads a request's line and headers from `r`.
fn read_head<R: BufRead>(r: &mut R, limits: &Limits) -> Result<Request, ReadError> {
    let mut line = Vec::new();
    match read_line(r, limits.request_line, &mut line) {
        Ok(Some(())) => {}
        Ok(None) => return Err(ReadError::UriTooLong),
        // A request line begun and not finished in time is answered (408); silence
        // between requests is not.
        Err(e) => return Err(from_io(&e, !line.is_empty())),
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
    let http10 = version == "HTTP/1.0";
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
    Ok(Request {
        method,
        target,
        headers,
        body: Vec::new(),
        http10,
    })
}

/// Reads the body announced by `request`'s headers.
fn read_body<R: BufRead>(
    r: &mut R,
    request: &mut Request,
    limits: &Limits,
) -> Result<(), ReadError> {
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
    Ok(())
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
        // `body` is within the limit: the subtraction cannot wrap (a sum could).
        if size > limits.body - body.len() {
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

/// Headers every response carries, whoever answers it (the handler, or the server for a
/// request over a limit or a connection beyond the limit).
pub(crate) type CommonHeaders = &'static [(&'static str, &'static str)];

/// How a response's body is delimited.
#[derive(Debug, Clone, Copy)]
enum Framing {
    /// `Content-Length`.
    Length(usize),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Up to the connection's close.
    Close,
}

fn write_head(
    w: &mut impl Write,
    response: &Response,
    framing: Framing,
    close: bool,
    common: CommonHeaders,
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in common {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    match framing {
        Framing::Length(n) => head.push_str(&format!("Content-Length: {n}\r\n")),
        Framing::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
        Framing::Close => {}
    }
    head.push_str(if close {
        "Connection: close\r\n\r\n"
    } else {
        "Connection: keep-alive\r\n\r\n"
    });
    w.write_all(head.as_bytes())
}

/// Writes a response whose body is known (a stream's is left out).
fn write_response(
    w: &mut impl Write,
    response: &Response,
    close: bool,
    common: CommonHeaders,
) -> io::Result<()> {
    let body: &[u8] = match &response.body {
        Body::Full(b) => b,
        Body::Stream(_) => &[],
    };
    write_head(w, response, Framing::Length(body.len()), close, common)?;
    w.write_all(body)?;
    w.flush()
}

/// Writes `response` to the request's connection; whether the connection may serve
/// another request.
fn respond(
    writer: &TcpStream,
    request: &Request,
    response: Response,
    close: bool,
    common: CommonHeaders,
) -> bool {
    let head_only = request.method == "HEAD";
    let mut w = writer;
    match response.body {
        Body::Full(ref body) => {
            let sent = write_head(
                &mut w,
                &response,
                Framing::Length(body.len()),
                close,
                common,
            )
            .and_then(|()| if head_only { Ok(()) } else { w.write_all(body) })
            .and_then(|()| w.flush());
            sent.is_ok() && !close
        }
        Body::Stream(_) => {
            let framing = if request.http10 {
                Framing::Close
            } else {
                Framing::Chunked
            };
            if write_head(&mut w, &response, framing, true, common).is_err() {
                return false;
            }
            let Body::Stream(streamer) = response.body else {
                return false;
            };
            if head_only {
                drop(streamer);
            } else {
                let mut stream = StreamWriter {
                    socket: writer,
                    chunked: matches!(framing, Framing::Chunked),
                };
                streamer(&mut stream);
            }
            if matches!(framing, Framing::Chunked) {
                let _ = w.write_all(b"0\r\n\r\n").and_then(|()| w.flush());
            }
            let _ = writer.shutdown(std::net::Shutdown::Both);
            false
        }
    }
}

/// Ends a connection whose request was refused while the client may still be sending
/// (a body over the limit): closing with its bytes unread would reset the connection,
/// and the reset can destroy the answer before the client reads it. So the sending side
/// is shut and what arrives is read and thrown away, for at most `DRAIN_AFTER_REFUSAL`.
fn close_after_answer(reader: &mut BufReader<TimedStream>, writer: &TcpStream) {
    let _ = writer.shutdown(std::net::Shutdown::Write);
    let deadline = Instant::now() + DRAIN_AFTER_REFUSAL;
    reader.get_mut().deadline = Some(deadline);
    let mut scratch = [0u8; 16 << 10];
    while Instant::now() < deadline {
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

/// A connection's socket as requests are read from it: each read waits at most the
/// idle limit, and while a deadline is set, never past it.
struct TimedStream {
    stream: TcpStream,
    idle: Duration,
    deadline: Option<Instant>,
    /// The read timeout the socket has now (set again only when it changes).
    timeout: Option<Duration>,
}

impl Read for TimedStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let wait = match self.deadline {
            None => self.idle,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                left.min(self.idle)
            }
        };
        if self.timeout != Some(wait) {
            self.stream.set_read_timeout(Some(wait))?;
            self.timeout = Some(wait);
        }
        self.stream.read(buf)
    }
}

/// How long a refused request's remaining bytes are read and discarded.
const DRAIN_AFTER_REFUSAL: Duration = Duration::from_secs(2);

/// What serves requests.
pub(crate) type Handler = Arc<dyn Fn(&Request) -> Response + Send + Sync>;

/// Serves one connection: requests one after the other, until the client closes, goes
/// idle, asks to close, or sends something over a limit (answered, then closed).
fn serve_connection(stream: TcpStream, limits: &Limits, handler: &Handler, common: CommonHeaders) {
    // A response's head and body go out as two writes: no waiting for an ACK between.
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(limits.idle));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(TimedStream {
        stream,
        idle: limits.idle,
        deadline: None,
        timeout: None,
    });
    loop {
        reader.get_mut().deadline = Some(Instant::now() + limits.head);
        let head = read_head(&mut reader, limits);
        reader.get_mut().deadline = None;
        let request = head.and_then(|mut request| {
            if expects_continue(&request) {
                writer
                    .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                    .map_err(|_| ReadError::Closed)?;
            }
            read_body(&mut reader, &mut request, limits)?;
            Ok(request)
        });
        let request = match request {
            Ok(r) => r,
            Err(e) => {
                if let Some(response) = e.response(limits) {
                    if write_response(&mut writer, &response, true, common).is_ok() {
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
        if !respond(&writer, &request, response, close, common) {
            return;
        }
    }
}

/// One of the `limits.connections` places, taken while a connection is served and given
/// back when it ends, however it ends (a handler that panics included).
struct ConnectionPlace(Arc<AtomicUsize>);

impl ConnectionPlace {
    fn take(active: &Arc<AtomicUsize>, limit: usize) -> Option<Self> {
        active
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .ok()
            .map(|_| Self(active.clone()))
    }
}

impl Drop for ConnectionPlace {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Connections waiting for their 503, at most.
const REFUSALS_PENDING: usize = 64;
/// What a refused connection may still send after its 503 (its request), read and
/// discarded so that closing it does not reset it before the client has read the 503.
const REFUSAL_DRAIN_BYTES: usize = 1 << 20;
/// How long a refused connection's request is read, at most.
const REFUSAL_DRAIN_TIME: Duration = Duration::from_secs(1);

/// Starts the thread that answers 503 to the connections beyond the limit, one at a
/// time, each for [`REFUSAL_DRAIN_TIME`] at most, so that the accepting thread never
/// waits for them; returns where to hand them.
fn start_refusing(common: CommonHeaders) -> io::Result<std::sync::mpsc::SyncSender<TcpStream>> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<TcpStream>(REFUSALS_PENDING);
    std::thread::Builder::new()
        .name("weftd-http-503".into())
        .spawn(move || {
            for mut stream in rx {
                let busy = Response::text(503, "too many connections, try again");
                let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
                if write_response(&mut stream, &busy, true, common).is_ok() {
                    let _ = stream.shutdown(std::net::Shutdown::Write);
                    drain(&mut stream, REFUSAL_DRAIN_BYTES, REFUSAL_DRAIN_TIME);
                }
            }
        })?;
    Ok(tx)
}

/// Reads and discards what `stream` sends until it ends, `bytes` are read, or `time`
/// has passed.
fn drain(stream: &mut TcpStream, bytes: usize, time: Duration) {
    let deadline = Instant::now() + time;
    let mut buf = [0u8; 16 << 10];
    let mut read = 0;
    while read < bytes {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => read += n,
        }
    }
}

/// Serves `listener` on a thread of its own, one thread per connection within
/// `limits.connections`; every response carries the `common` headers.
pub(crate) fn serve(
    listener: TcpListener,
    limits: Limits,
    handler: Handler,
    common: CommonHeaders,
) -> io::Result<()> {
    let active = Arc::new(AtomicUsize::new(0));
    let mut refused = 0u64;
    let refusals = start_refusing(common)?;
    std::thread::Builder::new()
        .name("weftd-http".into())
        .spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else {
                    // Out of descriptors: let some connections end first.
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                };
                let Some(place) = ConnectionPlace::take(&active, limits.connections) else {
                    if refused == 0 {
                        tracing::warn!(
                            "REST: {} connections served at once, the most there may be: \
                             new ones are answered 503 until one ends",
                            limits.connections
                        );
                    }
                    refused += 1;
                    // Beyond what the refusing thread holds, closed unanswered.
                    let _ = refusals.try_send(stream);
                    continue;
                };
                if refused > 0 {
                    tracing::info!("REST: {refused} connections were answered 503");
                    refused = 0;
                }
                let handler = handler.clone();
                // A failed spawn drops the closure, and the place with it.
                let _ = std::thread::Builder::new()
                    .name("weftd-http-conn".into())
                    .spawn(move || {
                        let _place = place;
                        serve_connection(stream, &limits, &handler, common);
                    });
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

    #[test]
    fn a_chunk_size_that_would_wrap_the_body_length_is_refused() {
        let limits = Limits {
            body: 8,
            ..Limits::default()
        };
        let e = read(
            b"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\nffffffffffffffff\r\n",
            &limits,
        )
        .unwrap_err();
        assert_eq!(e.response(&limits).unwrap().status, 413);
    }

    /// Serves on an ephemeral loopback port with `limits`; `/panic` panics, anything
    /// else is answered 200 with the body it brought.
    fn server(limits: Limits) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let handler: Handler = Arc::new(|r: &Request| {
            assert_ne!(r.target, "/panic", "a handler that panics");
            if r.target == "/stream" {
                // Two parts, then waits for the client to go.
                return Response::stream(
                    200,
                    "text/event-stream",
                    Box::new(|w: &mut StreamWriter<'_>| {
                        w.send(b"one\n").unwrap();
                        w.send(b"two\n").unwrap();
                        let deadline = Instant::now() + Duration::from_secs(10);
                        while !w.client_gone() && Instant::now() < deadline {
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        STREAM_ENDED.store(true, Ordering::SeqCst);
                    }),
                );
            }
            Response::new(200, "text/plain", r.body.clone())
        });
        serve(listener, limits, handler, &[("X-Every", "1")]).unwrap();
        addr
    }

    /// Reads what the server sends until it closes, or 5 s.
    fn answer(stream: &TcpStream) -> String {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut text = Vec::new();
        let _ = (&mut &*stream).read_to_end(&mut text);
        String::from_utf8_lossy(&text).into_owned()
    }

    static STREAM_ENDED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    #[test]
    fn a_streamed_body_is_chunked_and_ends_when_the_client_goes() {
        let addr = server(Limits::default());
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .write_all(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let expected = "HTTP/1.1 200 OK\r\nX-Every: 1\r\nContent-Type: text/event-stream\r\n\
                        Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n4\r\none\n\r\n4\r\ntwo\n\r\n";
        let mut got = vec![0u8; expected.len()];
        stream.read_exact(&mut got).unwrap();
        assert_eq!(String::from_utf8_lossy(&got), expected);
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
    fn answers_from_the_server_itself_carry_the_common_headers() {
        let addr = server(Limits {
            body: 4,
            ..Limits::default()
        });
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .write_all(b"PUT /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
            .unwrap();
        let text = answer(&stream);
        assert!(
            text.starts_with("HTTP/1.1 413") && text.contains("\r\nX-Every: 1\r\n"),
            "{text:?}"
        );
    }

    #[test]
    fn a_head_request_gets_the_head_alone() {
        let addr = server(Limits::default());
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .write_all(b"HEAD /a HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            .unwrap();
        let text = answer(&stream);
        assert!(
            text.starts_with("HTTP/1.1 200")
                && text.ends_with("Content-Length: 2\r\nConnection: close\r\n\r\n"),
            "{text:?}"
        );
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
            for b in
                b"GET / HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                    .iter()
            {
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
    fn a_request_line_begun_and_stalled_is_answered_408() {
        let addr = server(Limits {
            idle: Duration::from_millis(200),
            ..Limits::default()
        });
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(b"GET /dem").unwrap();
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
    fn a_handler_that_panics_gives_its_connection_place_back() {
        let addr = server(Limits {
            connections: 1,
            ..Limits::default()
        });
        // Sends `request` on a new connection until it is served rather than refused
        // with 503 (the accept thread may not have counted the previous connection out
        // yet); returns what it was answered.
        let served = |request: &[u8]| {
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                let mut stream = TcpStream::connect(addr).unwrap();
                stream.write_all(request).unwrap();
                let text = answer(&stream);
                if !text.starts_with("HTTP/1.1 503") {
                    return text;
                }
                assert!(Instant::now() < deadline, "the one place never came back");
            }
        };
        for _ in 0..3 {
            // The connection ends unanswered when its thread panics.
            assert_eq!(
                served(b"GET /panic HTTP/1.1\r\nConnection: close\r\n\r\n"),
                ""
            );
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
                sent.is_ok() && text.starts_with("HTTP/1.1 503"),
                "sent: {sent:?}, answered: {text:?}"
            );
        }
    }
}
