//! Serial links, as Zenoh's serial link: one batch per COBS frame on a UART
//! (`weft_proto::batch::serial`), a session opened by the connecting side's `I` frame and
//! the listening side's `I+A` answer (`docs/protocol-notes.md`, "Serial link").
//!
//! - [`SerialConnecting`]: the connecting side's exchange, without waiting: it opens the
//!   port, sends `I`, and the link is made when `I+A` comes; an `R` (the listener still
//!   holds a session) has it send `I` again after the endpoint's `tout`, and so does an
//!   answer that never comes, every [`INIT_RESEND`].
//! - [`SerialListener`] (`listener`): the listening side is the port, read by the
//!   session's links loop like a UDP listener: an `I` starts a link, whose data frames
//!   the listener then hands over while its handshake runs (as datagrams to a UDP link
//!   accepted by its listener); an `I` while a session is on ends that session and is
//!   answered `R`, as Zenoh does, and the next `I` starts a new one. Any number of
//!   sessions follow one another on the port. weft's additions: the port is never
//!   emptied, so an `I` sent before the listener opened it is answered, and an `I` right
//!   after the one answered, before any data, is taken for a copy of it; a data frame
//!   with no session on is answered `R`, once until the next session (the other side
//!   still believes in a session this node no longer has: it starts a new one at once
//!   instead of at its lease's end); a line that hangs up ends its session at once and
//!   is opened again when it is back.
//! - [`SerialLink`]: an established link, read and written by the I/O threads like a
//!   socket: a connecting side's link reads its port; an accepted one reads its
//!   listener's port once its handshake is over, the listener leaving it alone until the
//!   session ends (`listener`). Writes send one frame per batch, at most [`MTU`] bytes.
//!
//! A frame that does not check (line noise, a cut frame) is dropped and counted; it
//! never ends the link.

mod kind;
mod listener;
mod port;

use std::io;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use weft_proto::batch::serial::{Decoder, Flags, Frame, FrameError};

use crate::endpoint::Endpoint;
pub(crate) use listener::SerialListener;
use port::Port;

/// Largest batch a serial frame carries (Zenoh's serial MTU).
pub(crate) const MTU: u16 = weft_proto::batch::serial::MTU as u16;

/// How long the connecting side waits for an answer to its `I` before sending it again.
pub(crate) const INIT_RESEND: Duration = Duration::from_secs(1);

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

/// Frames dropped on serial ports (line noise, cut frames, frames a listener could not
/// hold for a session whose handshake runs), by every link and listener of the process.
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Frames dropped on serial ports so far, process-wide.
pub fn dropped_frames() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

/// Counts and logs a dropped frame.
fn dropped(path: &str, e: FrameError) {
    dropped_for(path, &e.to_string());
}

/// Counts and logs a frame dropped for `why`.
fn dropped_for(path: &str, why: &str) {
    DROPPED.fetch_add(1, Ordering::Relaxed);
    tracing::debug!("serial port {path}: frame dropped: {why}");
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
    Line(Mutex<LineReader>),
    /// From its listener's line (an accepted link).
    Listener(Arc<listener::Line>),
}

/// An established serial link. Clones share the port and the receiving side.
#[derive(Debug, Clone)]
pub(crate) struct SerialLink {
    port: Arc<Port>,
    rx: Arc<Receiving>,
    /// Set when the link ends (by this node or by the line's exchange); for an accepted
    /// link, its session on its listener's line.
    ended: Arc<AtomicBool>,
    /// Set when its transport starts closing: nothing more is read from the line, which
    /// the next session on the same device (this node connecting again) reads.
    stopped_reading: Arc<AtomicBool>,
    /// Whether this node accepted it (its listener reads the port until its handshake
    /// is over).
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

    /// Whether its listener hands it its frames while its handshake runs.
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

    /// The I/O threads read this link from now on (non-blocking): an accepted link reads
    /// its listener's port itself, on its readable events, until its session ends.
    pub(crate) fn serve_from_io_thread(&self) {
        self.set_nonblocking(true);
        if let Receiving::Listener(line) = &*self.rx {
            line.take_over(&self.ended);
        }
    }

    /// Ends the link: reads give the end of the link, and its listener takes the next
    /// `I` as a new session; a connecting side's port can be opened again.
    pub(crate) fn shutdown(&self) {
        if self.ended.swap(true, Ordering::AcqRel) {
            return;
        }
        match &*self.rx {
            Receiving::Listener(line) => line.end(&self.ended),
            Receiving::Line(_) => self.port.release(),
        }
    }

    /// Reads nothing more from the line (its transport is closing): reads find nothing
    /// (the transport's closed flag ends the link); writes go on (the last batches and
    /// the Close). An accepted link's listener reads the line again.
    pub(crate) fn stop_reading(&self) {
        if self.stopped_reading.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Receiving::Listener(line) = &*self.rx {
            line.stop_reading(&self.ended);
        }
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
    /// `WouldBlock` when none came within the read timeout (at once when non-blocking,
    /// and always once it stopped reading).
    pub(crate) fn next_batch(&self, out: &mut [u8]) -> io::Result<Option<usize>> {
        let deadline = self.read_timeout.map(|t| Instant::now() + t);
        let nonblocking = self.nonblocking.load(Ordering::Acquire);
        if self.ended.load(Ordering::Acquire) {
            return Ok(None);
        }
        if self.stopped_reading.load(Ordering::Acquire) {
            // Its transport is closing: nothing more is read, but the link goes on until
            // the Close is written.
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "the link reads no more",
            ));
        }
        let reader = match &*self.rx {
            Receiving::Listener(line) => {
                return line.next_frame(&self.ended, &self.port, out, nonblocking, deadline)
            }
            Receiving::Line(reader) => reader,
        };
        let mut reader = reader.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.ended.load(Ordering::Acquire) {
                return Ok(None);
            }
            if self.stopped_reading.load(Ordering::Acquire) {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "the link reads no more",
                ));
            }
            match reader.next(&self.port, out)? {
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
                        rx: Arc::new(Receiving::Line(Mutex::new(std::mem::replace(
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
