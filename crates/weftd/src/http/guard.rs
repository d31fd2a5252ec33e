//! The connection's socket as hyper reads and writes it, with the checks hyper leaves to
//! its user in front of it.
//!
//! Each request head is withheld from hyper until it is whole, then checked: its line and
//! headers within their limits, its body delimited one way only (one `Content-Length`
//! value, or `Transfer-Encoding: chunked` alone, never both, never in HTTP/1.0). A head
//! that fails is never shown to hyper: hyper reads a stand-in head in its place, and the
//! request it makes of it is answered with the refusal ([`Verdict::Refuse`]), in order
//! after the answers before it; then the connection closes. A chunked body's framing is
//! hyper's to check (a malformed chunk fails the body: 400), and the connection closes
//! after its request, so no byte after a chunked body is read as a request.
//!
//! Reads wait at most the idle limit for a new request (then the connection closes
//! quietly) and a head at most the head limit (then 408); a write waits at most the idle
//! limit for a client that does not read.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{ready, Context, Poll, Waker};

use hyper::rt::ReadBufCursor;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::Limits;

/// Headers one request may have, at most (431 beyond, as hyper counts them).
pub(super) const MAX_HEADERS: usize = 100;

/// Bytes of empty lines (CR, LF) taken before a request line, at most.
const MAX_EMPTY_LINES: usize = 8;

/// What hyper reads in place of a refused head: a request it serves with the refusal.
const STAND_IN: &[u8] = b"GET / HTTP/1.1\r\n\r\n";

/// How long a refused request's remaining bytes are read and discarded before the
/// connection closes (closing with bytes unread resets the connection, and the reset can
/// destroy the answer before the client reads it).
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// Why a request is answered with an error, and which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Refusal {
    /// The status code.
    pub(super) status: u16,
    /// What was wrong, as the answer's text.
    pub(super) why: String,
}

impl Refusal {
    /// A refusal of `status` for `why`.
    pub(super) fn new(status: u16, why: impl Into<String>) -> Self {
        Self {
            status,
            why: why.into(),
        }
    }
}

/// What is to be done with a request head hyper reads, in the order of the heads.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Serve it; with `close`, close the connection after the answer.
    Serve {
        /// Whether the connection closes after the answer.
        close: bool,
    },
    /// Answer it with the refusal, then close.
    Refuse(Refusal),
}

/// What the socket and the requests made of it share: the verdicts on the heads handed
/// to hyper, and the answers under way.
#[derive(Debug, Default)]
pub(super) struct Exchange(Mutex<Shared>);

#[derive(Debug, Default)]
struct Shared {
    verdicts: VecDeque<Verdict>,
    /// Answers begun and not yet written whole (or given up).
    open: usize,
    /// When the last answer ended.
    last_answer: Option<Instant>,
    /// Whether the connection closes after a refusal (its remaining bytes are drained).
    refused: bool,
    /// Whether an open answer is a stream (which ends when its client goes).
    streaming: bool,
    /// The reader to wake when the last open answer ends (its idle clock starts).
    reader: Option<Waker>,
}

impl Exchange {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The verdict on the next request; an answer is open until the returned guard is
    /// dropped.
    pub(super) fn next(self: &Arc<Self>) -> (Option<Verdict>, OpenAnswer) {
        let mut shared = self.lock();
        shared.open += 1;
        (shared.verdicts.pop_front(), OpenAnswer(self.clone()))
    }

    /// Marks the connection as closing after a refusal: what the client still sends is
    /// drained before it closes.
    pub(super) fn refused(&self) {
        self.lock().refused = true;
    }
}

/// An answer under way; the connection is not idle while one is.
#[derive(Debug)]
pub(super) struct OpenAnswer(Arc<Exchange>);

impl OpenAnswer {
    /// Marks the answer as a stream: a client that closes its side ends it.
    pub(super) fn streams(&self) {
        let mut shared = self.0.lock();
        shared.streaming = true;
        if let Some(reader) = shared.reader.take() {
            drop(shared);
            reader.wake();
        }
    }
}

impl Drop for OpenAnswer {
    fn drop(&mut self) {
        let mut shared = self.0.lock();
        shared.open -= 1;
        if shared.open == 0 {
            shared.last_answer = Some(Instant::now());
            shared.streaming = false;
            if let Some(reader) = shared.reader.take() {
                drop(shared);
                reader.wake();
            }
        }
    }
}

/// Where the next bytes from the client belong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// A request head.
    Head,
    /// A body of this many bytes still to come.
    Body(u64),
    /// A chunked body, then nothing hyper reads (the connection closes after it).
    Rest,
    /// Nothing more: a refused head's stand-in was handed over.
    Refused,
}

/// A head checked so far.
#[derive(Debug, PartialEq, Eq)]
enum Head {
    /// Not whole yet, within the limits.
    Partial,
    /// Whole and sound: its length, and where the bytes after it belong.
    Whole { len: usize, next: State },
    /// Refused.
    Refused(Refusal),
}

/// A connection's socket, as hyper reads and writes it.
pub(super) struct Guarded {
    socket: TcpStream,
    limits: Limits,
    exchange: Arc<Exchange>,
    state: State,
    /// Bytes read and not yet checked (a head not yet whole).
    input: Vec<u8>,
    /// How far `input` was searched for a head's end.
    searched: usize,
    /// Bytes checked and not yet handed to hyper.
    ready: Vec<u8>,
    ready_from: usize,
    /// When the first byte of the head under way came.
    head_started: Option<Instant>,
    last_read: Instant,
    read_timer: Pin<Box<Sleep>>,
    /// Set while a write waits for the client to read.
    write_timer: Option<Pin<Box<Sleep>>>,
    /// Set while a refused connection's remaining bytes are drained.
    draining: Option<Pin<Box<Sleep>>>,
}

impl Guarded {
    /// Guards `socket` within `limits`; the verdicts go to `exchange`.
    pub(super) fn new(socket: TcpStream, limits: Limits, exchange: Arc<Exchange>) -> Self {
        let now = Instant::now();
        Self {
            socket,
            limits,
            exchange,
            state: State::Head,
            input: Vec::new(),
            searched: 0,
            ready: Vec::new(),
            ready_from: 0,
            head_started: None,
            last_read: now,
            read_timer: Box::pin(tokio::time::sleep_until(now + limits.idle)),
            write_timer: None,
            draining: None,
        }
    }

    /// Sorts the bytes read: heads are checked and handed over whole, bodies as they come.
    fn sort_input(&mut self) {
        let mut at = 0;
        while at < self.input.len() {
            let bytes = &self.input[at..];
            match self.state {
                State::Refused => at = self.input.len(),
                State::Rest => {
                    self.ready.extend_from_slice(bytes);
                    at = self.input.len();
                }
                State::Body(left) => {
                    let n = bytes.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    self.ready.extend_from_slice(&bytes[..n]);
                    at += n;
                    self.state = match left - n as u64 {
                        0 => State::Head,
                        left => State::Body(left),
                    };
                }
                State::Head => {
                    if self.head_started.is_none() {
                        self.head_started = Some(Instant::now());
                    }
                    // Only a head left whole at the start of `input` was searched before.
                    match check_head(bytes, self.searched, &self.limits) {
                        (Head::Partial, searched) => {
                            self.searched = searched;
                            break;
                        }
                        (Head::Whole { len, next }, _) => {
                            self.ready.extend_from_slice(&bytes[..len]);
                            at += len;
                            self.searched = 0;
                            self.head_started = None;
                            self.state = next;
                            self.exchange.lock().verdicts.push_back(Verdict::Serve {
                                close: next == State::Rest,
                            });
                        }
                        (Head::Refused(refusal), _) => {
                            self.refuse(refusal);
                            at = self.input.len();
                        }
                    }
                }
            }
        }
        self.input.drain(..at);
        if self.state == State::Refused {
            self.input.clear();
        }
    }

    /// Hands hyper the stand-in for a refused head; nothing after it is read.
    fn refuse(&mut self, refusal: Refusal) {
        self.ready.extend_from_slice(STAND_IN);
        self.state = State::Refused;
        let mut shared = self.exchange.lock();
        shared.verdicts.push_back(Verdict::Refuse(refusal));
        shared.refused = true;
    }

    /// When no request is under way and nothing comes: `Ready` once the connection has
    /// waited long enough (for a new request: the idle limit; for a head begun: the idle
    /// limit since its last byte, the head limit since its first).
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let since = {
            let mut shared = self.exchange.lock();
            if shared.open > 0 {
                shared.reader = Some(cx.waker().clone());
                return Poll::Pending;
            }
            shared
                .last_answer
                .map_or(self.last_read, |t| t.max(self.last_read))
        };
        let mut deadline = since + self.limits.idle;
        if let Some(started) = self.head_started {
            deadline = deadline.min(started + self.limits.head);
        }
        if self.read_timer.deadline() != deadline {
            self.read_timer.as_mut().reset(deadline);
        }
        self.read_timer.as_mut().poll(cx)
    }

    /// The client's end, once its requests are answered: a client may close its side
    /// once it has sent its request (hyper would take that as going away), but a stream
    /// ends when its client closes.
    fn poll_end(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.state == State::Head {
            let mut shared = self.exchange.lock();
            if shared.open > 0 && !shared.streaming {
                shared.reader = Some(cx.waker().clone());
                return Poll::Pending;
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Reads what the client sends into `input`; `Ok(false)` at its end.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<bool>> {
        let mut scratch = [0u8; 16 << 10];
        let mut buf = ReadBuf::new(&mut scratch);
        ready!(Pin::new(&mut self.socket).poll_read(cx, &mut buf))?;
        if buf.filled().is_empty() {
            return Poll::Ready(Ok(false));
        }
        self.last_read = Instant::now();
        self.input.extend_from_slice(buf.filled());
        Poll::Ready(Ok(true))
    }

    /// Reads and discards what the client still sends, until it closes or the drain
    /// time has passed.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let timer = self
            .draining
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(DRAIN_TIME)));
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        let mut scratch = [0u8; 16 << 10];
        // A few reads a turn, then the other connections' turn.
        for _ in 0..4 {
            let mut buf = ReadBuf::new(&mut scratch);
            match ready!(Pin::new(&mut self.socket).poll_read(cx, &mut buf)) {
                Ok(()) if !buf.filled().is_empty() => {}
                _ => return Poll::Ready(()),
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Ends the wait of a write that went through; fails one that has waited the idle
    /// limit.
    fn timed_write<T>(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if written.is_ready() {
            self.write_timer = None;
            return written;
        }
        let idle = self.limits.idle;
        let timer = self
            .write_timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(idle)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::ErrorKind::TimedOut.into())),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl hyper::rt::Read for Guarded {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.ready_from < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.ready_from);
                buf.put_slice(&this.ready[this.ready_from..this.ready_from + n]);
                this.ready_from += n;
                if this.ready_from == this.ready.len() {
                    this.ready.clear();
                    this.ready_from = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.state == State::Refused {
                return Poll::Pending;
            }
            match this.poll_fill(cx) {
                Poll::Ready(Ok(true)) => this.sort_input(),
                // The end: what is left of a head is never handed over.
                Poll::Ready(Ok(false)) => return this.poll_end(cx),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending if this.state != State::Head => return Poll::Pending,
                Poll::Pending => {
                    ready!(this.poll_idle(cx));
                    if this.input.is_empty() {
                        // Idle between requests: the connection ends quietly.
                        return Poll::Ready(Ok(()));
                    }
                    this.refuse(Refusal::new(408, "the request did not arrive in time"));
                }
            }
        }
    }
}

impl hyper::rt::Write for Guarded {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.socket).poll_write(cx, buf);
        this.timed_write(cx, written)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.socket).poll_write_vectored(cx, bufs);
        this.timed_write(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.socket.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let flushed = Pin::new(&mut this.socket).poll_flush(cx);
        this.timed_write(cx, flushed)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.draining.is_none() {
            ready!(Pin::new(&mut this.socket).poll_shutdown(cx))?;
            if !this.exchange.lock().refused {
                return Poll::Ready(Ok(()));
            }
        }
        ready!(this.poll_drain(cx));
        Poll::Ready(Ok(()))
    }
}

/// Checks the head at the start of `bytes`, `searched` of which are known to hold no
/// head end; also returns how far `bytes` were searched.
fn check_head(bytes: &[u8], searched: usize, limits: &Limits) -> (Head, usize) {
    // Empty lines before a request line are skipped (as hyper skips them), a few.
    let start = bytes
        .iter()
        .take(MAX_EMPTY_LINES + 1)
        .position(|b| !matches!(b, b'\r' | b'\n'));
    let Some(start) = start.or((bytes.len() <= MAX_EMPTY_LINES).then_some(bytes.len())) else {
        let why = "empty lines where a request line belongs";
        return (Head::Refused(Refusal::new(400, why)), 0);
    };
    let line_len = bytes[start..].iter().position(|b| *b == b'\n');
    if line_len.unwrap_or(bytes.len() - start) > limits.request_line + 1 {
        let why = format!("the request line is over {} bytes", limits.request_line);
        return (Head::Refused(Refusal::new(414, why)), 0);
    }
    let too_large = || {
        let why = format!("the headers are over {} bytes", limits.headers);
        Head::Refused(Refusal::new(431, why))
    };
    // The head ends with an empty line; only then is it parsed.
    let from = searched.max(start).saturating_sub(2);
    let Some(end) = find_head_end(&bytes[from..]).map(|e| from + e) else {
        let partial = if bytes.len() - start > limits.request_line + 2 + limits.headers {
            too_large()
        } else {
            Head::Partial
        };
        return (partial, bytes.len());
    };
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let len = match request.parse(&bytes[..end]) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return (Head::Partial, end),
        Err(httparse::Error::TooManyHeaders) => {
            let why = format!("over {MAX_HEADERS} headers");
            return (Head::Refused(Refusal::new(431, why)), 0);
        }
        Err(e) => {
            let why = format!("malformed request head: {e}");
            return (Head::Refused(Refusal::new(400, why)), 0);
        }
    };
    let line_end = start + line_len.unwrap_or(0) + 1;
    if len - line_end > limits.headers + 2 {
        return (too_large(), 0);
    }
    // What hyper would refuse itself (without the headers every answer carries).
    let target = request.path.and_then(|p| hyper::Uri::try_from(p).ok());
    let method = request
        .method
        .map(|m| hyper::Method::from_bytes(m.as_bytes()));
    if target.is_none() || !matches!(method, Some(Ok(_))) {
        let why = "malformed request line";
        return (Head::Refused(Refusal::new(400, why)), 0);
    }
    let head = match framing(&request) {
        Ok(next) => Head::Whole { len, next },
        Err(why) => Head::Refused(Refusal::new(400, why)),
    };
    (head, 0)
}

/// Where an empty line (a head's end) ends in `bytes`, if it holds one.
fn find_head_end(bytes: &[u8]) -> Option<usize> {
    (0..bytes.len()).find_map(|i| match &bytes[i..] {
        [b'\n', b'\n', ..] => Some(i + 2),
        [b'\n', b'\r', b'\n', ..] => Some(i + 3),
        _ => None,
    })
}

/// How a request's body is delimited: refused unless one way only, as RFC 9112 section 6
/// asks of a server that must not be fooled into reading one request as two.
fn framing(request: &httparse::Request<'_, '_>) -> Result<State, &'static str> {
    let mut lengths = None;
    let mut codings = 0;
    let mut chunked = false;
    for header in request.headers.iter() {
        let value = header.value.trim_ascii();
        if header.name.eq_ignore_ascii_case("content-length") {
            let len = content_length(value).ok_or("invalid Content-Length")?;
            if lengths.is_some_and(|l| l != len) {
                return Err("two different Content-Length values");
            }
            lengths = Some(len);
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            codings += 1;
            chunked = value.eq_ignore_ascii_case(b"chunked");
        }
    }
    if codings == 0 {
        return Ok(match lengths {
            None | Some(0) => State::Head,
            Some(len) => State::Body(len),
        });
    }
    if request.version == Some(0) {
        return Err("Transfer-Encoding in an HTTP/1.0 request");
    }
    if lengths.is_some() {
        return Err("Content-Length together with Transfer-Encoding");
    }
    if codings > 1 || !chunked {
        return Err("a Transfer-Encoding other than chunked alone");
    }
    Ok(State::Rest)
}

/// A Content-Length value: decimal digits only.
fn content_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(bytes: &[u8]) -> Head {
        let limits = Limits {
            request_line: 32,
            headers: 64,
            ..Limits::default()
        };
        check_head(bytes, 0, &limits).0
    }

    fn refused(status: u16, bytes: &[u8]) {
        match check(bytes) {
            Head::Refused(r) => assert_eq!(r.status, status, "{r:?}"),
            other => panic!("{other:?} for {:?}", String::from_utf8_lossy(bytes)),
        }
    }

    #[test]
    fn a_sound_head_is_whole_with_its_framing() {
        let head = b"PUT /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(
            check(head),
            Head::Whole {
                len: head.len() - 5,
                next: State::Body(5)
            }
        );
        let head = b"\r\nPUT /a HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n";
        assert_eq!(
            check(head),
            Head::Whole {
                len: head.len(),
                next: State::Rest
            }
        );
        let head = b"GET /a HTTP/1.0\nContent-Length: 0\n\n";
        assert_eq!(
            check(head),
            Head::Whole {
                len: head.len(),
                next: State::Head
            }
        );
        assert_eq!(check(b"GET /a HTTP/1.1\r\nHost: x\r\n"), Head::Partial);
        // Selectors as Zenoh's REST users send them.
        for target in ["/demo/**?_time=[now(-1h)..]", "/@/local/%7B%7D|^\"{}", "*"] {
            let head = format!("GET {target} HTTP/1.1\r\n\r\n");
            let len = head.len();
            assert_eq!(
                check_head(head.as_bytes(), 0, &Limits::default()).0,
                Head::Whole {
                    len,
                    next: State::Head
                },
                "{target}"
            );
        }
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        refused(
            400,
            b"PUT / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        );
        refused(
            400,
            b"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
        );
        refused(
            400,
            b"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        refused(
            400,
            b"PUT / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        refused(
            400,
            b"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
        );
        refused(
            400,
            b"PUT / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
        );
        refused(400, b"PUT / HTTP/1.1\r\nContent-Length: +3\r\n\r\n");
        refused(400, b"PUT / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n");
        refused(400, b"PUT / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n");
        refused(
            400,
            b"PUT / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n",
        );
        refused(400, b"GET / HTTP/1.1\r\nno colon\r\n\r\n");
        refused(400, &[b'\n'; MAX_EMPTY_LINES + 1]);
        refused(400, b"GET /a<b HTTP/1.1\r\n\r\n");
    }

    #[test]
    fn every_part_over_its_limit_is_refused_with_its_status() {
        refused(
            414,
            format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(40)).as_bytes(),
        );
        refused(414, format!("GET /{}", "a".repeat(40)).as_bytes());
        refused(
            431,
            format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "b".repeat(70)).as_bytes(),
        );
        refused(
            431,
            format!("GET / HTTP/1.1\r\nX: {}", "b".repeat(90)).as_bytes(),
        );
        let many: String = (0..=MAX_HEADERS).map(|_| "a:\n").collect();
        let limits = Limits::default();
        let head = format!("GET / HTTP/1.1\n{many}\n");
        assert!(matches!(
            check_head(head.as_bytes(), 0, &limits).0,
            Head::Refused(Refusal { status: 431, .. })
        ));
    }

    #[test]
    fn a_head_is_found_across_reads() {
        let head = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
        let limits = Limits::default();
        let mut searched = 0;
        for end in 1..head.len() {
            let (h, s) = check_head(&head[..end], searched, &limits);
            assert_eq!(h, Head::Partial);
            searched = s;
        }
        assert_eq!(
            check_head(head, searched, &limits).0,
            Head::Whole {
                len: head.len(),
                next: State::Head
            }
        );
    }
}
