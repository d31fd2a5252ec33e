//! The HTTP/1.1 edge of weftd: hyper serves the connections, within a bound on everything
//! a client sends (the request line, the headers, the body, the time between bytes, the
//! time a request's head may take) and on the connections served at once.
//!
//! Threads: one, `weft-http`, runs a current-thread tokio runtime that accepts, reads,
//! writes and streams for every connection. The handlers call the session's synchronous
//! API, and a GET waits for its replies (up to the query timeout), so each runs on the
//! runtime's blocking pool (`weft-http-handler` threads), never on the runtime's thread
//! nor on weft's data path. That pool has at most as many threads as there may be
//! connections, so one slow request (a GET waiting for replies) never delays another, as
//! when each connection had a thread of its own; its threads exist only while requests
//! need them (they end after a few seconds unused), so an idle edge is one thread.
//!
//! hyper reads each request through [`guard`], which refuses what hyper would take but
//! a server must not (ambiguous body framing) and keeps the time limits. Responses are
//! `Content-Length` delimited, or written as they come (chunked; an event stream), which
//! a client that stops reading cannot hold for longer than the idle limit.

mod guard;

use std::convert::Infallible;
use std::io;
use std::net::TcpListener;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body as _, Bytes, Frame, Incoming, SizeHint};
use hyper::header::{HeaderName, HeaderValue};
use tokio::io::AsyncWriteExt;

use guard::{Exchange, Guarded, OpenAnswer, Refusal, Verdict};

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
    /// kept-alive connection), and for a client to read what is written to it.
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

/// A body whose parts come over time (an event stream). It is polled on the HTTP
/// thread: it never blocks, and is dropped there when its client goes.
pub(crate) trait Stream: Send + 'static {
    /// The next part of the body (never empty), or `None` at its end.
    fn poll_part(&mut self, cx: &mut Context<'_>) -> Poll<Option<Vec<u8>>>;
}

/// A response's body.
pub(crate) enum Body {
    /// All of it, known now.
    Full(Vec<u8>),
    /// Written as it comes (`Transfer-Encoding: chunked`, or up to the connection's close
    /// for an HTTP/1.0 client).
    Stream(Box<dyn Stream>),
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

    /// A response whose body `stream` gives as it comes.
    pub(crate) fn stream(status: u16, content_type: &str, stream: Box<dyn Stream>) -> Self {
        Self {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: Body::Stream(stream),
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

/// Headers every response carries, whoever answers it (the handler, or the server for a
/// request over a limit or a connection beyond the limit).
pub(crate) type CommonHeaders = &'static [(&'static str, &'static str)];

/// What serves requests (on a handler thread: it may block).
pub(crate) type Handler = Arc<dyn Fn(&Request) -> Response + Send + Sync>;

/// How long a handler thread is kept unused before it ends.
const HANDLER_KEEP_ALIVE: Duration = Duration::from_secs(5);

/// What every connection is served with.
struct Server {
    limits: Limits,
    handler: Handler,
    common: CommonHeaders,
    /// The pace of the log lines about refused requests, per client address.
    refusals: std::sync::Mutex<weft::log_limit::LogLimit<std::net::IpAddr>>,
}

/// Serves `listener` on a thread of its own within `limits`, each handler on a thread of
/// the bounded pool; every response carries the `common` headers.
pub(crate) fn serve(
    listener: TcpListener,
    limits: Limits,
    handler: Handler,
    common: CommonHeaders,
) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(limits.connections.max(1))
        .thread_keep_alive(HANDLER_KEEP_ALIVE)
        .thread_name("weft-http-handler")
        .build()?;
    listener.set_nonblocking(true)?;
    let listener = {
        let _entered = runtime.enter();
        tokio::net::TcpListener::from_std(listener)?
    };
    let server = Arc::new(Server {
        limits,
        handler,
        common,
        refusals: std::sync::Mutex::default(),
    });
    std::thread::Builder::new()
        .name("weft-http".into())
        .spawn(move || runtime.block_on(accept(listener, server)))?;
    Ok(())
}

/// Accepts connections: each within the limit is served, each beyond it answered 503.
async fn accept(listener: tokio::net::TcpListener, server: Arc<Server>) {
    let active = Arc::new(AtomicUsize::new(0));
    let refusing = Arc::new(AtomicUsize::new(0));
    let mut refused = 0u64;
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors: let some connections end first.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let Some(place) = Place::take(&active, server.limits.connections) else {
            if refused == 0 {
                tracing::warn!(
                    "REST: {} connections served at once, the most there may be: \
                     new ones are answered 503 until one ends",
                    server.limits.connections
                );
            }
            refused += 1;
            // Beyond the refusals under way, closed unanswered.
            if let Some(place) = Place::take(&refusing, REFUSALS_PENDING) {
                tokio::spawn(refuse_busy(stream, server.common, place));
            }
            continue;
        };
        if refused > 0 {
            tracing::info!("REST: {refused} connections were answered 503");
            refused = 0;
        }
        tokio::spawn(connection(stream, server.clone(), place));
    }
}

/// Serves one connection: requests one after the other, until the client closes, goes
/// idle, asks to close, or sends something refused (answered, then closed).
async fn connection(stream: tokio::net::TcpStream, server: Arc<Server>, _place: Place) {
    // A response's head and body go out at once: no waiting for an ACK between writes.
    let _ = stream.set_nodelay(true);
    let exchange = Arc::new(Exchange::default());
    let client = stream
        .peer_addr()
        .map_or(std::net::IpAddr::from([0u8; 4]), |a| a.ip());
    let io = Guarded::new(stream, server.limits, exchange.clone());
    let service = hyper::service::service_fn(move |request| {
        answer(request, server.clone(), exchange.clone(), client)
    });
    let served = hyper::server::conn::http1::Builder::new()
        .title_case_headers(true)
        .max_headers(guard::MAX_HEADERS)
        // The guard keeps the time limits.
        .header_read_timeout(None)
        .serve_connection(io, service)
        .await;
    if let Err(e) = served {
        tracing::debug!("REST: a connection ended: {e}");
    }
}

/// Answers one request: the guard's refusal, or the handler's response.
async fn answer(
    request: hyper::Request<Incoming>,
    server: Arc<Server>,
    exchange: Arc<Exchange>,
    client: std::net::IpAddr,
) -> Result<hyper::Response<Outgoing>, Infallible> {
    let method = request.method().clone();
    let target = request
        .uri()
        .path_and_query()
        .map_or_else(String::new, |p| p.as_str().to_owned());
    let (verdict, open) = exchange.next();
    let (response, close) = match verdict {
        Some(Verdict::Refuse(refusal)) => (refused(&refusal), true),
        serve => {
            // Without a verdict (never so), the connection closes after the answer.
            let close = !matches!(serve, Some(Verdict::Serve { close: false }));
            match read_request(request, &server.limits).await {
                Ok(request) => {
                    let handler = server.handler.clone();
                    let response = tokio::task::spawn_blocking(move || handler(&request))
                        .await
                        .unwrap_or_else(|_| Response::text(500, "the request's handler failed"));
                    (response, close)
                }
                Err(refusal) => {
                    exchange.refused();
                    (refused(&refusal), true)
                }
            }
        }
    };
    if response.status >= 400 && response.status != 404 {
        log_refused(&server, client, method.as_str(), &target, response.status);
    }
    Ok(outgoing(response, close, server.common, open))
}

/// Logs a request answered with an error, at most once per period per client address:
/// its path and query percent-decoded, then escaped and cut (they are the client's).
fn log_refused(server: &Server, client: std::net::IpAddr, method: &str, target: &str, status: u16) {
    let tell = server
        .refusals
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .count(&client, std::time::Instant::now());
    let Some(tell) = tell else {
        return;
    };
    let decoded: Vec<u8> = percent_encoding::percent_decode_str(target).collect();
    tracing::info!(
        "REST: {client} {} {}: answered {status}{}",
        weft::printable(method),
        weft::printable_bytes(&decoded),
        tell.and_more(&client)
    );
}

/// The answer to a refused request.
fn refused(refusal: &Refusal) -> Response {
    Response::text(refusal.status, &refusal.why)
}

/// Reads `request`'s body, within the body limit, each part within the idle limit.
async fn read_request(
    request: hyper::Request<Incoming>,
    limits: &Limits,
) -> Result<Request, Refusal> {
    let (parts, mut incoming) = request.into_parts();
    let too_large = || Refusal::new(413, format!("the body is over {} bytes", limits.body));
    // Refused from its Content-Length, unread (hyper sends no 100 Continue for it).
    if incoming
        .size_hint()
        .exact()
        .is_some_and(|len| len > limits.body as u64)
    {
        return Err(too_large());
    }
    let mut headers = Vec::with_capacity(parts.headers.len());
    for (name, value) in &parts.headers {
        let value = std::str::from_utf8(value.as_bytes())
            .map_err(|_| Refusal::new(400, "a header is not UTF-8"))?;
        headers.push((name.as_str().to_owned(), value.to_owned()));
    }
    let mut body = Vec::new();
    loop {
        let next = std::future::poll_fn(|cx| Pin::new(&mut incoming).poll_frame(cx));
        let frame = match tokio::time::timeout(limits.idle, next).await {
            Err(_) => return Err(Refusal::new(408, "the request did not arrive in time")),
            Ok(None) => break,
            Ok(Some(Err(e))) => return Err(Refusal::new(400, format!("malformed body: {e}"))),
            Ok(Some(Ok(frame))) => frame,
        };
        if let Ok(data) = frame.into_data() {
            // `body` is within the limit: the subtraction cannot wrap (a sum could).
            if data.len() > limits.body - body.len() {
                return Err(too_large());
            }
            body.extend_from_slice(&data);
        }
    }
    Ok(Request {
        method: parts.method.as_str().to_owned(),
        target: parts.uri.to_string(),
        headers,
        body,
    })
}

/// `response` as hyper writes it, with the `common` headers, closing the connection
/// after it with `close`.
fn outgoing(
    response: Response,
    close: bool,
    common: CommonHeaders,
    open: OpenAnswer,
) -> hyper::Response<Outgoing> {
    let body = match response.body {
        Body::Full(bytes) => Out::Full(Some(Bytes::from(bytes))),
        Body::Stream(stream) => {
            open.streams();
            Out::Stream(stream)
        }
    };
    let mut out = hyper::Response::new(Outgoing { body, _open: open });
    *out.status_mut() = hyper::StatusCode::from_u16(response.status)
        .unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = out.headers_mut();
    let all = common.iter().map(|(n, v)| (*n, *v)).chain(
        response
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str())),
    );
    for (name, value) in all {
        // A header hyper cannot write (a value from a sample's encoding, say) is left out.
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.append(name, value);
        }
    }
    if close {
        headers.insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    }
    out
}

/// A response's body as hyper takes it; the answer is open until hyper drops it.
struct Outgoing {
    body: Out,
    _open: OpenAnswer,
}

enum Out {
    Full(Option<Bytes>),
    Stream(Box<dyn Stream>),
}

impl hyper::body::Body for Outgoing {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().body {
            Out::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Out::Stream(stream) => stream
                .poll_part(cx)
                .map(|part| part.map(|p| Ok(Frame::data(Bytes::from(p))))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.body, Out::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.body {
            Out::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Out::Stream(_) => SizeHint::default(),
        }
    }
}

/// One of a bounded number of places (connections served, refusals under way), taken
/// while in use and given back when dropped, however its task ends.
struct Place(Arc<AtomicUsize>);

impl Place {
    fn take(taken: &Arc<AtomicUsize>, limit: usize) -> Option<Self> {
        taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .ok()
            .map(|_| Self(taken.clone()))
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Connections being answered 503 at once, at most.
const REFUSALS_PENDING: usize = 64;
/// What a refused connection may still send after its 503 (its request), read and
/// discarded so that closing it does not reset it before the client has read the 503.
const REFUSAL_DRAIN_BYTES: usize = 1 << 20;
/// How long a connection refused for lack of places is written to and read, at most.
const REFUSAL_TIME: Duration = Duration::from_secs(1);

/// Answers 503 to a connection beyond the limit, without reading its request first.
async fn refuse_busy(mut stream: tokio::net::TcpStream, common: CommonHeaders, _place: Place) {
    let body = "too many connections, try again";
    let mut head = String::from("HTTP/1.1 503 Service Unavailable\r\n");
    for (name, value) in common {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let answer = format!(
        "{head}Content-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(REFUSAL_TIME, async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await?;
        let mut scratch = [0u8; 16 << 10];
        let mut read = 0;
        while read < REFUSAL_DRAIN_BYTES {
            match tokio::io::AsyncReadExt::read(&mut stream, &mut scratch).await? {
                0 => break,
                n => read += n,
            }
        }
        io::Result::Ok(())
    })
    .await;
}

#[cfg(test)]
mod tests;
