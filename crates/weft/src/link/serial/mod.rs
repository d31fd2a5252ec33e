//! Serial links, as Zenoh's serial link: one batch per COBS frame on a UART
//! (`weft_proto::batch::serial`), a session opened by the connecting side's `I` frame and
//! the listening side's `I+A` answer (`docs/protocol-notes.md`, "Serial link").
//!
//! - [`SerialConnecting`]: the connecting side's exchange, without waiting: it opens the
//!   port, sends `I`, and the link is made when `I+A` comes; an `R` (the listener still
//!   holds a session) has it send `I` again after the endpoint's `tout`, and so does an
//!   answer that never comes, every [`INIT_RESEND`].
//! - [`SerialListener`]: the listening side is the port, read by the session's links
//!   loop like a UDP listener: an `I` starts a link, whose data frames the listener then
//!   hands over (as datagrams to a UDP link accepted by its listener); an `I` while a
//!   session is on ends that session and is answered `R`, as Zenoh does, and the next
//!   `I` starts a new one. Any number of sessions follow one another on the port.
//!   weft's additions: the port is never emptied, so an `I` sent before the listener
//!   opened it is answered, and an `I` right after the one answered, before any data,
//!   is taken for a copy of it ([`DUPLICATE_INIT_WINDOW`]); a data frame with no session
//!   on is answered `R`, once until the next session (the other side still believes in
//!   a session this node no longer has: it starts a new one at once instead of at its
//!   lease's end); a line that hangs
//!   up ends its session at once and is opened again when it is back.
//! - [`SerialLink`]: an established link. A connecting side's link reads its port
//!   itself; an accepted one reads what its listener hands over. Writes send one frame
//!   per batch, at most [`MTU`] bytes.
//!
//! A frame that does not check (line noise, a cut frame) is dropped and counted; it
//! never ends the link.

mod kind;
mod port;

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{
    sync_channel, Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError,
};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use weft_proto::batch::serial::{Decoder, Flags, Frame, FrameError};

use crate::endpoint::Endpoint;
use port::Port;

/// Largest batch a serial frame carries (Zenoh's serial MTU).
pub(crate) const MTU: u16 = weft_proto::batch::serial::MTU as u16;

/// How long the connecting side waits for an answer to its `I` before sending it again.
pub(crate) const INIT_RESEND: Duration = Duration::from_secs(1);

/// How long after answering `I+A`, and before the session's first data frame, a
/// listener takes another `I` for a copy of the one it answered rather than a new start.
const DUPLICATE_INIT_WINDOW: Duration = Duration::from_millis(100);

/// Data frames queued for an accepted link before new ones are dropped.
const INBOX: usize = 256;

/// Bytes read from the port at once.
const READ_CHUNK: usize = 4096;

/// The `#` keys of a serial endpoint, as Zenoh names them.
const KEYS: [&str; 4] = ["baudrate", "exclusive", "tout", "release_on_close"];

/// A serial endpoint's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SerialSettings {
    /// The device.
    pub path: String,
    /// Bits per second (`#baudrate=`, 9,600 when absent, as Zenoh).
    pub baudrate: u32,
    /// Whether the port is opened exclusively (`#exclusive=`, true by default).
    pub exclusive: bool,
    /// How long the connecting side waits after an `R` before sending `I` again
    /// (`#tout=` in microseconds, 50 ms by default).
    pub reset_wait: Duration,
}

/// Checks a serial endpoint's `#` configuration: the keys Zenoh reads, each with a value
/// it can use. `Err((key, value, expected))` otherwise.
pub(crate) fn check_config(
    config: &[(String, String)],
) -> Result<(), (String, String, &'static str)> {
    for (key, value) in config {
        let bad = |expected| Err((key.clone(), value.clone(), expected));
        match key.as_str() {
            "baudrate" if value.parse::<u32>().map_or(true, |b| b == 0) => {
                return bad("a baud rate, a positive integer");
            }
            "exclusive" | "release_on_close" if value.parse::<bool>().is_err() => {
                return bad("true or false");
            }
            "tout" if value.parse::<u64>().is_err() => {
                return bad("microseconds, an integer");
            }
            k if !KEYS.contains(&k) => {
                return bad("a serial setting (baudrate, exclusive, tout, release_on_close)");
            }
            _ => {}
        }
    }
    Ok(())
}

impl SerialSettings {
    /// The settings of `endpoint` (checked when it was parsed).
    pub(crate) fn of(endpoint: &Endpoint) -> Self {
        let get = |key: &str| {
            endpoint
                .config
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        Self {
            path: endpoint.address.clone(),
            baudrate: get("baudrate")
                .and_then(|v| v.parse().ok())
                .unwrap_or(9_600),
            exclusive: get("exclusive")
                .and_then(|v| v.parse().ok())
                .unwrap_or(true),
            reset_wait: Duration::from_micros(
                get("tout").and_then(|v| v.parse().ok()).unwrap_or(50_000),
            ),
        }
    }
}

/// Frames dropped on serial ports (line noise, cut frames), by every link and listener
/// of the process.
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Frames dropped on serial ports so far, process-wide.
pub fn dropped_frames() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

/// Counts and logs a dropped frame.
fn dropped(path: &str, e: FrameError) {
    DROPPED.fetch_add(1, Ordering::Relaxed);
    tracing::debug!("serial port {path}: frame dropped: {e}");
}

/// Frames from a port, read on demand.
#[derive(Debug)]
struct LineReader {
    decoder: Decoder,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

/// What a line reader gives.
enum Got {
    /// A frame.
    Frame(Flags, usize),
    /// Nothing more in the port now.
    Empty,
    /// The line hung up.
    HungUp,
}

impl LineReader {
    fn new() -> Self {
        Self {
            decoder: Decoder::new(),
            buf: vec![0; READ_CHUNK].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    /// The next frame from what was read, or from the port if it has bytes now; its
    /// payload is copied into `out` (cut to its size).
    fn next(&mut self, port: &Port, out: &mut [u8]) -> io::Result<Got> {
        loop {
            while self.start < self.end {
                let (used, got) = self.decoder.push(&self.buf[self.start..self.end]);
                self.start += used;
                match got {
                    Some(Ok(Frame { flags, payload })) => {
                        let n = payload.len().min(out.len());
                        out[..n].copy_from_slice(&payload[..n]);
                        return Ok(Got::Frame(flags, n));
                    }
                    Some(Err(e)) => dropped(port.path(), e),
                    None => {}
                }
            }
            let n = match port.read_now(&mut self.buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Got::Empty),
                other => other?,
            };
            if n == 0 {
                return Ok(Got::HungUp);
            }
            (self.start, self.end) = (0, n);
        }
    }
}

/// How an established link receives.
#[derive(Debug)]
enum Receiving {
    /// From its port (the connecting side).
    Line(LineReader),
    /// From its listener.
    Inbox(Receiver<Vec<u8>>),
}

/// An established serial link. Clones share the port and the receiving side.
#[derive(Debug, Clone)]
pub(crate) struct SerialLink {
    port: Arc<Port>,
    rx: Arc<Mutex<Receiving>>,
    /// Set when the link ends (by this node or by the line's exchange).
    ended: Arc<AtomicBool>,
    /// Set when its transport starts closing: nothing more is read from the line, which
    /// the next session on the same device (this node connecting again) reads.
    stopped_reading: Arc<AtomicBool>,
    /// Whether this node accepted it (its listener reads the port).
    accepted: bool,
    read_timeout: Option<Duration>,
    /// Reads return `WouldBlock` at once when no frame is there; shared by the clones,
    /// as a socket's `O_NONBLOCK` is by its duplicates.
    nonblocking: Arc<AtomicBool>,
}

impl SerialLink {
    /// The device path.
    pub(crate) fn path(&self) -> &str {
        self.port.path()
    }

    /// The port's descriptor.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.port.fd()
    }

    /// Whether its listener hands it its frames.
    pub(crate) const fn reads_from_listener(&self) -> bool {
        self.accepted
    }

    /// Sets how long a read waits for a frame (`None`: for ever).
    pub(crate) fn set_read_timeout(&mut self, t: Option<Duration>) {
        self.read_timeout = t;
    }

    /// Makes reads return `WouldBlock` at once when no frame is there (`true`), or wait
    /// for one (`false`), for this link and its clones. A link the I/O threads read must
    /// not wait: a silent line would hold the thread, and with it every lease it checks.
    pub(crate) fn set_nonblocking(&self, nonblocking: bool) {
        self.nonblocking.store(nonblocking, Ordering::Release);
    }

    /// Ends the link: reads give the end of the link, and its listener takes the next
    /// `I` as a new session; a connecting side's port can be opened again.
    pub(crate) fn shutdown(&self) {
        if !self.ended.swap(true, Ordering::AcqRel) && !self.accepted {
            self.port.release();
        }
    }

    /// Reads nothing more from the line (its transport is closing): reads give the end of
    /// the link; writes go on (the last batches and the Close).
    pub(crate) fn stop_reading(&self) {
        self.stopped_reading.store(true, Ordering::Release);
    }

    /// Writes one batch made of `parts` as one frame.
    pub(crate) fn write_parts(&self, parts: &[&[u8]]) -> io::Result<()> {
        if self.ended.load(Ordering::Acquire) {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the serial link ended",
            ));
        }
        self.port.send(Flags::DATA, parts)
    }

    /// Writes `batch` as one frame without waiting: `Ok(false)` while the line has not
    /// taken all of it (ask again with the same batch once the port is writable).
    pub(crate) fn write_now(&self, batch: &[u8]) -> io::Result<bool> {
        if self.ended.load(Ordering::Acquire) {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the serial link ended",
            ));
        }
        self.port.send_now(batch)
    }

    /// The next batch, copied into `out`: its length, `None` once the link ended;
    /// `WouldBlock` when none came within the read timeout (at once when non-blocking).
    pub(crate) fn next_batch(&self, out: &mut [u8]) -> io::Result<Option<usize>> {
        let mut rx = self.rx.lock().unwrap_or_else(|e| e.into_inner());
        let deadline = self.read_timeout.map(|t| Instant::now() + t);
        let nonblocking = self.nonblocking.load(Ordering::Acquire);
        loop {
            if self.ended.load(Ordering::Acquire) || self.stopped_reading.load(Ordering::Acquire) {
                return Ok(None);
            }
            match &mut *rx {
                Receiving::Inbox(inbox) => {
                    let got = if nonblocking {
                        inbox.try_recv().map_err(|e| match e {
                            TryRecvError::Empty => RecvTimeoutError::Timeout,
                            TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
                        })
                    } else {
                        // Wakes now and then to see whether the link ended.
                        let slice = deadline.map_or(Duration::from_millis(100), |d| {
                            d.saturating_duration_since(Instant::now())
                                .min(Duration::from_millis(100))
                        });
                        inbox.recv_timeout(slice)
                    };
                    match got {
                        Ok(batch) => {
                            let n = batch.len().min(out.len());
                            out[..n].copy_from_slice(&batch[..n]);
                            return Ok(Some(n));
                        }
                        Err(RecvTimeoutError::Disconnected) => return Ok(None),
                        Err(RecvTimeoutError::Timeout) => {}
                    }
                }
                Receiving::Line(reader) => match reader.next(&self.port, out)? {
                    Got::Frame(flags, n) => {
                        if flags.contains(Flags::INIT) {
                            // The other side started again: as Zenoh, refuse and end.
                            let _ = self.port.send(Flags::RESET, &[]);
                            tracing::info!("serial port {}: the peer started again", self.path());
                            self.shutdown();
                            return Ok(None);
                        }
                        if flags.contains(Flags::RESET) {
                            tracing::info!("serial port {}: the peer reset the line", self.path());
                            self.shutdown();
                            return Ok(None);
                        }
                        if n > 0 {
                            return Ok(Some(n));
                        }
                        continue;
                    }
                    Got::HungUp => {
                        self.shutdown();
                        return Ok(None);
                    }
                    Got::Empty if nonblocking => {}
                    Got::Empty => {
                        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
                        let slice = left.map_or(Duration::from_millis(100), |l| {
                            l.min(Duration::from_millis(100))
                        });
                        if !slice.is_zero() && self.port.wait_readable(Some(slice))? {
                            continue;
                        }
                    }
                },
            }
            let timed_out = nonblocking || deadline.is_some_and(|d| Instant::now() >= d);
            if timed_out {
                return Err(io::Error::new(io::ErrorKind::WouldBlock, "no frame"));
            }
        }
    }
}

/// The connecting side's exchange in progress.
#[derive(Debug)]
pub(crate) struct SerialConnecting {
    port: Arc<Port>,
    reader: LineReader,
    settings: SerialSettings,
    /// When to send `I` (again).
    send_at: Option<Instant>,
}

impl SerialConnecting {
    /// Opens the port of `settings` and sends `I`.
    pub(crate) fn start(settings: SerialSettings) -> io::Result<Self> {
        // Emptied: an answer to an earlier attempt is not this one's.
        let port = Arc::new(Port::open(&settings, true)?);
        let mut me = Self {
            port,
            reader: LineReader::new(),
            settings,
            send_at: Some(Instant::now()),
        };
        me.send_init_if_due(Instant::now())?;
        Ok(me)
    }

    /// The port, to wait on (readable) while the exchange is in progress.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.port.fd()
    }

    /// When [`SerialConnecting::poll`] has something to do without the port's news (send
    /// `I` again).
    pub(crate) const fn due(&self) -> Option<Instant> {
        self.send_at
    }

    fn send_init_if_due(&mut self, now: Instant) -> io::Result<()> {
        if self.send_at.is_some_and(|t| t <= now) {
            self.port.send(Flags::INIT, &[])?;
            self.send_at = Some(now + INIT_RESEND);
        }
        Ok(())
    }

    /// The link once the listener answered `I+A`: `Ok(None)` meanwhile.
    pub(crate) fn poll(&mut self) -> io::Result<Option<SerialLink>> {
        let mut scratch = [0u8; 64];
        loop {
            match self.reader.next(&self.port, &mut scratch)? {
                Got::Frame(flags, _) if flags.contains(Flags::INIT_ACK) => {
                    let link = SerialLink {
                        port: self.port.clone(),
                        rx: Arc::new(Mutex::new(Receiving::Line(std::mem::replace(
                            &mut self.reader,
                            LineReader::new(),
                        )))),
                        ended: Arc::new(AtomicBool::new(false)),
                        stopped_reading: Arc::new(AtomicBool::new(false)),
                        accepted: false,
                        read_timeout: None,
                        nonblocking: Arc::new(AtomicBool::new(false)),
                    };
                    return Ok(Some(link));
                }
                Got::Frame(flags, _) if flags.contains(Flags::RESET) => {
                    // The listener still holds a session: ask again after the pause.
                    self.send_at = Some(Instant::now() + self.settings.reset_wait);
                }
                Got::Frame(flags, _) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "serial port {}: answered {:#04x} to the session's start",
                            self.port.path(),
                            flags.0
                        ),
                    ));
                }
                Got::HungUp => {
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        format!("serial port {}: the line hung up", self.port.path()),
                    ))
                }
                Got::Empty => {
                    self.send_init_if_due(Instant::now())?;
                    return Ok(None);
                }
            }
        }
    }
}

/// The session on a listener's port, if one is on.
#[derive(Debug)]
struct Session {
    inbox: SyncSender<Vec<u8>>,
    ended: Arc<AtomicBool>,
    /// When its `I+A` was sent, until its first data frame comes.
    opened_at: Option<Instant>,
}

/// What a listener reads and who it hands frames to.
#[derive(Debug)]
struct Listening {
    /// The port; `None` from the moment its line hangs up (the device unplugged, the
    /// other end gone) until it opens again.
    port: Option<Arc<Port>>,
    reader: LineReader,
    session: Option<Session>,
    payload: Vec<u8>,
    /// Whether a data frame came with no session on, and was answered `R`, since the
    /// last session started (one `R` between two sessions: see
    /// [`SerialListener::refuse_stray`]).
    stray_answered: bool,
}

/// A serial port waiting for sessions (see the module's documentation).
#[derive(Debug)]
pub(crate) struct SerialListener {
    settings: SerialSettings,
    /// What its reader waits on: an epoll instance watching the port, so that the
    /// descriptor stays the same when the port is opened again after a hang-up.
    watch: mio::Poll,
    /// Boxed: a listener is moved around among others much smaller.
    state: Box<Mutex<Listening>>,
    /// `accept` returns `WouldBlock` when the port has nothing to read.
    nonblocking: AtomicBool,
}

impl SerialListener {
    /// Opens the port of `settings` for sessions. What the port received before is read,
    /// not dropped (as Zenoh's listener does): an `I` sent before it opened (a device that
    /// started first and sends `I` once, as Zenoh-Pico does) is answered.
    pub(crate) fn bind(settings: &SerialSettings) -> io::Result<Self> {
        let port = Arc::new(Port::open(settings, false)?);
        let watch = mio::Poll::new()?;
        watch.registry().register(
            &mut mio::unix::SourceFd(&port.fd().as_raw_fd()),
            mio::Token(0),
            mio::Interest::READABLE,
        )?;
        Ok(Self {
            settings: settings.clone(),
            watch,
            state: Box::new(Mutex::new(Listening {
                port: Some(port),
                reader: LineReader::new(),
                session: None,
                payload: vec![0; usize::from(MTU)],
                stray_answered: false,
            })),
            nonblocking: AtomicBool::new(false),
        })
    }

    /// The device path.
    pub(crate) fn path(&self) -> &str {
        &self.settings.path
    }

    /// The descriptor to wait on (readable) for `accept`: the same for the listener's
    /// whole life, whichever port is open behind it.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.watch.as_raw_fd()
    }

    /// Makes `accept` return `WouldBlock` once the port is drained.
    pub(crate) fn set_nonblocking(&self) {
        self.nonblocking.store(true, Ordering::Relaxed);
    }

    /// The line hung up (or its port cannot be read): the session on it ends at once (as
    /// a socket's end would end it), and the port is closed until [`Self::reopen`].
    fn line_gone(&self, st: &mut Listening, why: &io::Error) -> io::Error {
        if let Some(old) = st.session.take() {
            old.ended.store(true, Ordering::Release);
        }
        if let Some(port) = st.port.take() {
            let _ = self
                .watch
                .registry()
                .deregister(&mut mio::unix::SourceFd(&port.fd().as_raw_fd()));
        }
        st.reader = LineReader::new();
        st.stray_answered = false;
        tracing::info!(
            "serial port {}: {why}; its session ends, and the port opens again when it is back",
            self.path()
        );
        io::Error::new(
            io::ErrorKind::ConnectionAborted,
            format!("serial port {}: {why}", self.path()),
        )
    }

    /// A data frame came with no session on: the other side believes its session lives
    /// (this node started again, or ended the session). It is told with an `R`, once
    /// until the next session starts: a weft node then opens a new session at once
    /// rather than when its lease expires. Once only, because Zenoh's connecting side
    /// reads an `R` during its session as an empty batch, which counts as news from this
    /// node: an `R` to each of its frames would keep its dead session alive for ever.
    fn refuse_stray(&self, st: &mut Listening, port: &Port) -> io::Result<()> {
        if st.stray_answered {
            return Ok(());
        }
        st.stray_answered = true;
        tracing::debug!(
            "serial port {}: a data frame with no session on; answered R",
            self.path()
        );
        port.send(Flags::RESET, &[])
    }

    /// Opens the port again after its line hung up: the device's path may name a new
    /// device by now (an adapter plugged back, a new pseudo-terminal).
    fn reopen(&self, st: &mut Listening) -> io::Result<Arc<Port>> {
        let port = Arc::new(Port::open(&self.settings, false)?);
        self.watch.registry().register(
            &mut mio::unix::SourceFd(&port.fd().as_raw_fd()),
            mio::Token(0),
            mio::Interest::READABLE,
        )?;
        tracing::info!("serial port {}: open again", self.path());
        st.port = Some(port.clone());
        Ok(port)
    }

    /// Reads the port, handing data frames to the session on; a new session's link
    /// once an `I` starts one. Once the line hung up, each call tries to open the port
    /// again first (its caller calls again after a pause when it fails).
    pub(crate) fn accept(&self) -> io::Result<SerialLink> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let st = &mut *st;
        loop {
            if st
                .session
                .as_ref()
                .is_some_and(|s| s.ended.load(Ordering::Acquire))
            {
                st.session = None;
            }
            let port = match &st.port {
                Some(port) => port.clone(),
                None => self.reopen(st)?,
            };
            let got = match st.reader.next(&port, &mut st.payload) {
                Ok(got) => got,
                Err(e) => return Err(self.line_gone(st, &e)),
            };
            match got {
                Got::Frame(flags, _) if flags.contains(Flags::INIT) => {
                    if st.session.as_ref().is_some_and(|s| {
                        s.opened_at
                            .is_some_and(|at| at.elapsed() < DUPLICATE_INIT_WINDOW)
                    }) {
                        // Another `I` right after the one answered, before any data: sent
                        // before that answer came (the port held several, or the answer
                        // was slow), not a new start.
                        tracing::debug!(
                            "serial port {}: an I again before the session's first frame; \
                             taken for a copy",
                            self.path()
                        );
                        continue;
                    }
                    if let Some(old) = st.session.take() {
                        // The other side started again while its session was on.
                        old.ended.store(true, Ordering::Release);
                        tracing::info!(
                            "serial port {}: the peer started again; its session ends",
                            self.path()
                        );
                        port.send(Flags::RESET, &[])?;
                        continue;
                    }
                    port.send(Flags::INIT_ACK, &[])?;
                    st.stray_answered = false;
                    let (tx, rx) = sync_channel(INBOX);
                    let ended = Arc::new(AtomicBool::new(false));
                    st.session = Some(Session {
                        inbox: tx,
                        ended: ended.clone(),
                        opened_at: Some(Instant::now()),
                    });
                    return Ok(SerialLink {
                        port,
                        rx: Arc::new(Mutex::new(Receiving::Inbox(rx))),
                        ended,
                        stopped_reading: Arc::new(AtomicBool::new(false)),
                        accepted: true,
                        read_timeout: None,
                        nonblocking: Arc::new(AtomicBool::new(false)),
                    });
                }
                Got::Frame(flags, _) if flags.contains(Flags::RESET) => {
                    if let Some(old) = st.session.take() {
                        old.ended.store(true, Ordering::Release);
                    }
                }
                Got::Frame(_, 0) => {}
                Got::Frame(_, n) => {
                    let handed = st.session.as_mut().is_some_and(|s| {
                        s.opened_at = None;
                        match s.inbox.try_send(st.payload[..n].to_vec()) {
                            // As a full socket buffer: the batch is lost (best effort).
                            Ok(()) | Err(TrySendError::Full(_)) => true,
                            Err(TrySendError::Disconnected(_)) => false,
                        }
                    });
                    if !handed {
                        st.session = None;
                        self.refuse_stray(st, &port)?;
                    }
                }
                Got::HungUp => {
                    let e = io::Error::new(io::ErrorKind::ConnectionAborted, "the line hung up");
                    return Err(self.line_gone(st, &e));
                }
                Got::Empty => {
                    if self.nonblocking.load(Ordering::Relaxed) {
                        return Err(io::ErrorKind::WouldBlock.into());
                    }
                    port.wait_readable(None)?;
                }
            }
        }
    }
}
