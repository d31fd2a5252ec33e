//! The listening side of a serial port: its line (the port and the rules its frames
//! follow), shared by the listener and the session it accepted.
//!
//! One reader at a time applies the rules, under the line's lock: the listener (on the
//! links loop) while no session is on or while the session's handshake runs, handing the
//! session's data frames to its inbox; then the session's link, once the I/O threads
//! serve it ([`Line::take_over`]), which reads the port itself on its I/O thread's
//! readable events, as a socket is read. The listener then leaves the port alone (it is
//! not even watched) until the session ends, whichever way: an `I` or an `R` on the line
//! (read by the link), the line hanging up, the transport closing. The line is then
//! handed back: the port watched again, and the listener woken (what the link read past
//! its session's end, a new session's `I` perhaps, waits in the line's reader).

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Interest, Token};
use weft_proto::batch::serial::Flags;

use super::port::Port;
use super::{Got, LineReader, Receiving, SerialLink, SerialSettings, MTU};

/// How long after answering `I+A`, and before the session's first data frame, a
/// listener takes another `I` for a copy of the one it answered rather than a new start.
const DUPLICATE_INIT_WINDOW: Duration = Duration::from_millis(100);

/// Data frames the listener holds for a session whose link does not read the line yet
/// (its handshake runs), before new ones are dropped (counted).
const INBOX: usize = 256;

/// How long a blocking read or accept waits for the port at a time before it looks again
/// at what the other reader did.
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// The port's token in the listener's watch.
const PORT: Token = Token(0);
/// The waker's.
const WAKE: Token = Token(1);

/// The session on a listener's port.
#[derive(Debug)]
struct Session {
    /// Its link's flag, set when the session ends; gone with the link (all its clones
    /// dropped): the session is then over too.
    ended: Weak<AtomicBool>,
    /// Data frames the listener read for it, until its link reads them.
    inbox: VecDeque<Vec<u8>>,
    /// When its `I+A` was sent, until its first data frame comes.
    opened_at: Option<Instant>,
    /// Its transport is closing: its link reads nothing more, and the listener drops
    /// the frames that still come for it.
    draining: bool,
}

impl Session {
    fn is(&self, link: &Arc<AtomicBool>) -> bool {
        self.ended.as_ptr() == Arc::as_ptr(link)
    }

    fn gone(&self) -> bool {
        self.ended
            .upgrade()
            .is_none_or(|e| e.load(Ordering::Acquire))
    }
}

/// What the line's reader holds, under the line's lock.
#[derive(Debug)]
struct Listening {
    /// The port; `None` from the moment its line hangs up (the device unplugged, the
    /// other end gone) until it opens again.
    port: Option<Arc<Port>>,
    /// Whether the port is registered in the listener's watch.
    watched: bool,
    reader: LineReader,
    session: Option<Session>,
    /// The session's link reads the line (the listener does not).
    link_reads: bool,
    /// A new session's `I` that a session's link read: the listener answers it.
    init_pending: bool,
    payload: Vec<u8>,
    /// Whether a data frame came with no session on, and was answered `R`, since the
    /// last session started (one `R` between two sessions: see [`Line::refuse_stray`]).
    stray_answered: bool,
}

/// What one frame read from the line comes to, once the line's rules are applied.
enum Step {
    /// A data frame for the session on, in `payload[..n]`.
    Data(usize),
    /// An `I` with no session on: a new session starts (the listener starts it).
    Init,
    /// A frame the rules dealt with (or a damaged one, dropped): read on.
    Handled,
    /// Nothing more in the port now.
    Empty,
}

/// A listener's port and its rules, shared by the listener and its session's link.
#[derive(Debug)]
pub(super) struct Line {
    settings: SerialSettings,
    /// What the listener waits on: an epoll instance watching the port (while the
    /// listener reads it), so that the descriptor stays the same when the port is opened
    /// again after a hang-up.
    watch: mio::Poll,
    /// Wakes the listener when the line is handed back to it.
    waker: mio::Waker,
    state: Mutex<Listening>,
}

impl Line {
    fn lock(&self) -> MutexGuard<'_, Listening> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn path(&self) -> &str {
        &self.settings.path
    }

    fn watch_port(&self, st: &mut Listening) -> io::Result<()> {
        if let (Some(port), false) = (&st.port, st.watched) {
            self.watch.registry().register(
                &mut SourceFd(&port.fd().as_raw_fd()),
                PORT,
                Interest::READABLE,
            )?;
            st.watched = true;
        }
        Ok(())
    }

    fn unwatch_port(&self, st: &mut Listening) {
        if let (Some(port), true) = (&st.port, st.watched) {
            let _ = self
                .watch
                .registry()
                .deregister(&mut SourceFd(&port.fd().as_raw_fd()));
        }
        st.watched = false;
    }

    /// The line goes back to the listener (its session's link stops reading it): the
    /// port is watched again, and the listener woken for what the link read past its
    /// session (or to open the port again).
    fn hand_back(&self, st: &mut Listening) {
        if !st.link_reads {
            return;
        }
        st.link_reads = false;
        if let Err(e) = self.watch_port(st) {
            tracing::warn!("serial port {}: cannot watch it again: {e}", self.path());
        }
        if let Err(e) = self.waker.wake() {
            tracing::warn!("serial port {}: cannot wake its listener: {e}", self.path());
        }
    }

    /// Ends the session on, if any: its link reads and writes no more.
    fn end_session(&self, st: &mut Listening) {
        if let Some(old) = st.session.take() {
            if let Some(ended) = old.ended.upgrade() {
                ended.store(true, Ordering::Release);
            }
        }
        self.hand_back(st);
    }

    /// Forgets a session whose link ended or went.
    fn forget_gone(&self, st: &mut Listening) {
        if st.session.as_ref().is_some_and(Session::gone) {
            self.end_session(st);
        }
    }

    /// The line hung up (or its port cannot be read): the session on it ends at once (as
    /// a socket's end would end it), and the port is closed until [`Line::reopen`].
    fn line_gone(&self, st: &mut Listening, why: &io::Error) -> io::Error {
        self.unwatch_port(st);
        st.port = None;
        st.reader = LineReader::new();
        st.stray_answered = false;
        st.init_pending = false;
        self.end_session(st);
        tracing::info!(
            "serial port {}: {why}; its session ends, and the port opens again when it is back",
            self.path()
        );
        io::Error::new(
            io::ErrorKind::ConnectionAborted,
            format!("serial port {}: {why}", self.path()),
        )
    }

    /// Opens the port again after its line hung up: the device's path may name a new
    /// device by now (an adapter plugged back, a new pseudo-terminal).
    fn reopen(&self, st: &mut Listening) -> io::Result<Arc<Port>> {
        let port = Arc::new(Port::open(&self.settings, false)?);
        st.port = Some(port.clone());
        st.watched = false;
        self.watch_port(st)?;
        tracing::info!("serial port {}: open again", self.path());
        Ok(port)
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

    /// Reads the next frame from the line and applies the line's rules to it.
    fn step(&self, st: &mut Listening, port: &Port) -> io::Result<Step> {
        let got = match st.reader.next(port, &mut st.payload) {
            Ok(got) => got,
            Err(e) => return Err(self.line_gone(st, &e)),
        };
        Ok(match got {
            Got::Frame(flags, _) if flags.contains(Flags::INIT) => {
                let Some(session) = &st.session else {
                    return Ok(Step::Init);
                };
                if session
                    .opened_at
                    .is_some_and(|at| at.elapsed() < DUPLICATE_INIT_WINDOW)
                {
                    // Another `I` right after the one answered, before any data: sent
                    // before that answer came (the port held several, or the answer was
                    // slow), not a new start.
                    tracing::debug!(
                        "serial port {}: an I again before the session's first frame; \
                         taken for a copy",
                        self.path()
                    );
                    return Ok(Step::Handled);
                }
                // The other side started again while its session was on.
                self.end_session(st);
                tracing::info!(
                    "serial port {}: the peer started again; its session ends",
                    self.path()
                );
                port.send(Flags::RESET, &[])?;
                Step::Handled
            }
            Got::Frame(flags, _) if flags.contains(Flags::RESET) => {
                self.end_session(st);
                Step::Handled
            }
            Got::Frame(_, 0) => Step::Handled,
            Got::Frame(_, n) => match &mut st.session {
                Some(session) => {
                    session.opened_at = None;
                    Step::Data(n)
                }
                None => {
                    self.refuse_stray(st, port)?;
                    Step::Handled
                }
            },
            Got::HungUp => {
                let e = io::Error::new(io::ErrorKind::ConnectionAborted, "the line hung up");
                return Err(self.line_gone(st, &e));
            }
            Got::Empty => Step::Empty,
        })
    }

    /// Whether `link`'s session is the one on.
    fn is_on(st: &Listening, link: &Arc<AtomicBool>) -> bool {
        st.session.as_ref().is_some_and(|s| s.is(link))
    }

    /// The link of session `link` reads the line from now on (the I/O threads serve it):
    /// the listener stops watching the port.
    pub(super) fn take_over(&self, link: &Arc<AtomicBool>) {
        let mut st = self.lock();
        if Self::is_on(&st, link)
            && !st.link_reads
            && !st.session.as_ref().is_some_and(|s| s.draining)
        {
            st.link_reads = true;
            self.unwatch_port(&mut st);
        }
    }

    /// The transport of session `link` is closing: the listener reads the line again,
    /// dropping what still comes for it, so that a new session's `I` is answered at once.
    pub(super) fn stop_reading(&self, link: &Arc<AtomicBool>) {
        let mut st = self.lock();
        if let Some(session) = st.session.as_mut().filter(|s| s.is(link)) {
            session.draining = true;
            session.inbox.clear();
            self.hand_back(&mut st);
        }
    }

    /// Session `link` ended on this node's side: the listener takes the next `I` as a
    /// new session.
    pub(super) fn end(&self, link: &Arc<AtomicBool>) {
        let mut st = self.lock();
        if Self::is_on(&st, link) {
            self.end_session(&mut st);
        }
    }

    /// The next data frame of session `link`, copied into `out`: its length; `None` once
    /// the session is over; `WouldBlock` when none is there now (or its transport is
    /// closing). Frames the listener read
    /// for it come first, then the port, read here.
    fn next_frame_now(&self, link: &Arc<AtomicBool>, out: &mut [u8]) -> io::Result<Option<usize>> {
        let mut st = self.lock();
        let st = &mut *st;
        loop {
            let Some(session) = st.session.as_mut().filter(|s| s.is(link)) else {
                return Ok(None);
            };
            if session.draining {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            if let Some(frame) = session.inbox.pop_front() {
                let n = frame.len().min(out.len());
                out[..n].copy_from_slice(&frame[..n]);
                return Ok(Some(n));
            }
            let Some(port) = st.port.clone() else {
                return Ok(None);
            };
            match self.step(st, &port) {
                Ok(Step::Data(n)) => {
                    let n = n.min(out.len());
                    out[..n].copy_from_slice(&st.payload[..n]);
                    return Ok(Some(n));
                }
                Ok(Step::Handled) => {}
                Ok(Step::Init) => {
                    // No session on (not reached while this one is): the listener answers.
                    st.init_pending = true;
                    self.hand_back(st);
                    return Ok(None);
                }
                Ok(Step::Empty) => return Err(io::ErrorKind::WouldBlock.into()),
                // The line hung up: the session ended with it.
                Err(_) => return Ok(None),
            }
        }
    }

    /// As [`Line::next_frame_now`], waiting until `deadline` (for ever with `None`)
    /// unless `nonblocking`.
    pub(super) fn next_frame(
        &self,
        link: &Arc<AtomicBool>,
        port: &Port,
        out: &mut [u8],
        nonblocking: bool,
        deadline: Option<Instant>,
    ) -> io::Result<Option<usize>> {
        loop {
            match self.next_frame_now(link, out) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && !nonblocking => {}
                other => return other,
            }
            let slice = deadline.map_or(WAIT_SLICE, |d| {
                d.saturating_duration_since(Instant::now()).min(WAIT_SLICE)
            });
            if slice.is_zero() {
                return Err(io::Error::new(io::ErrorKind::WouldBlock, "no frame"));
            }
            // The listener may read what comes meanwhile (into the inbox): looked at
            // again after each slice.
            port.wait_readable(Some(slice))?;
        }
    }
}

/// A serial port waiting for sessions (see the module's documentation).
#[derive(Debug)]
pub(crate) struct SerialListener {
    line: Arc<Line>,
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
        let waker = mio::Waker::new(watch.registry(), WAKE)?;
        let line = Line {
            settings: settings.clone(),
            watch,
            waker,
            state: Mutex::new(Listening {
                port: Some(port),
                watched: false,
                reader: LineReader::new(),
                session: None,
                link_reads: false,
                init_pending: false,
                payload: vec![0; usize::from(MTU)],
                stray_answered: false,
            }),
        };
        line.watch_port(&mut line.lock())?;
        Ok(Self {
            line: Arc::new(line),
            nonblocking: AtomicBool::new(false),
        })
    }

    /// The device path.
    pub(crate) fn path(&self) -> &str {
        self.line.path()
    }

    /// The descriptor to wait on (readable) for `accept`: the same for the listener's
    /// whole life, whichever port is open behind it.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.line.watch.as_raw_fd()
    }

    /// Makes `accept` return `WouldBlock` once the port is drained.
    pub(crate) fn set_nonblocking(&self) {
        self.nonblocking.store(true, Ordering::Relaxed);
    }

    /// Answers `I` with `I+A`: a new session on `port`, and its link.
    fn start_session(&self, st: &mut Listening, port: Arc<Port>) -> io::Result<SerialLink> {
        port.send(Flags::INIT_ACK, &[])?;
        st.stray_answered = false;
        let ended = Arc::new(AtomicBool::new(false));
        st.session = Some(Session {
            ended: Arc::downgrade(&ended),
            inbox: VecDeque::new(),
            opened_at: Some(Instant::now()),
            draining: false,
        });
        Ok(SerialLink {
            port,
            rx: Arc::new(Receiving::Listener(self.line.clone())),
            ended,
            stopped_reading: Arc::new(AtomicBool::new(false)),
            accepted: true,
            read_timeout: None,
            nonblocking: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Reads the port, handing data frames to the session on; a new session's link
    /// once an `I` starts one. Once the line hung up, each call tries to open the port
    /// again first (its caller calls again after a pause when it fails). While the
    /// session's link reads the line, there is nothing to do.
    pub(crate) fn accept(&self) -> io::Result<SerialLink> {
        let line = &*self.line;
        let mut st = line.lock();
        loop {
            line.forget_gone(&mut st);
            let port = match &st.port {
                Some(port) => port.clone(),
                None => line.reopen(&mut st)?,
            };
            if std::mem::take(&mut st.init_pending) {
                return self.start_session(&mut st, port);
            }
            let step = if st.link_reads {
                Step::Empty
            } else {
                line.step(&mut st, &port)?
            };
            match step {
                Step::Init => return self.start_session(&mut st, port),
                Step::Data(n) => {
                    let st = &mut *st;
                    if let Some(session) = st.session.as_mut().filter(|s| !s.draining) {
                        if session.inbox.len() < INBOX {
                            session.inbox.push_back(st.payload[..n].to_vec());
                        } else {
                            // As a full socket buffer: the batch is lost (best effort).
                            super::dropped_for(line.path(), "its session's inbox is full");
                        }
                    }
                }
                Step::Handled => {}
                Step::Empty => {
                    if self.nonblocking.load(Ordering::Relaxed) {
                        return Err(io::ErrorKind::WouldBlock.into());
                    }
                    drop(st);
                    port.wait_readable(Some(WAIT_SLICE))?;
                    st = line.lock();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::{AsFd, OwnedFd};

    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    use weft_proto::batch::serial::{encode, Decoder};

    use super::*;

    /// A pseudo-terminal's controlling side (the device at the far end of the line) and
    /// a listener on its port, accepting without waiting.
    fn line() -> (OwnedFd, SerialListener) {
        let far = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&far).unwrap();
        unlockpt(&far).unwrap();
        let path = ptsname(&far, Vec::new()).unwrap();
        rustix::io::ioctl_fionbio(&far, true).unwrap();
        let settings = SerialSettings {
            path: path.to_string_lossy().into_owned(),
            baudrate: 115_200,
            exclusive: false,
            reset_wait: Duration::from_millis(50),
        };
        let listener = SerialListener::bind(&settings).unwrap();
        listener.set_nonblocking();
        (far, listener)
    }

    /// The device sends a frame.
    fn send(far: &OwnedFd, flags: Flags, payload: &[u8]) {
        let mut frame = Vec::new();
        encode(flags, &[payload], &mut frame).unwrap();
        assert_eq!(rustix::io::write(far, &frame).unwrap(), frame.len());
    }

    fn readable(fd: impl AsFd) -> bool {
        let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
        matches!(poll(&mut fds, PollTimeout::from(100u16)), Ok(n) if n > 0)
    }

    /// `op` until it gives something other than `WouldBlock`, waiting for `fd` between
    /// tries (a pseudo-terminal passes bytes on a moment after they are written), 5 s
    /// at most.
    fn until<T>(fd: impl AsFd, mut op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match op() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    assert!(Instant::now() < deadline, "nothing came within 5 s");
                    readable(&fd);
                }
                other => return other,
            }
        }
    }

    /// The flags of the next frame the device receives, within 5 s.
    fn answer(far: &OwnedFd, decoder: &mut Decoder) -> Flags {
        let mut buf = [0u8; 64];
        let n = until(far, || Ok(rustix::io::read(far, &mut buf)?)).unwrap();
        let (used, frame) = decoder.push(&buf[..n]);
        assert_eq!(used, n, "one frame at a time");
        frame.expect("a whole frame").unwrap().flags
    }

    /// What the listener's caller waits on.
    fn listener_fd(l: &SerialListener) -> std::os::fd::BorrowedFd<'_> {
        l.line.watch.registry().as_fd()
    }

    #[test]
    fn a_session_reads_the_line_itself_once_served_and_hands_it_back_when_it_ends() {
        let (far, listener) = line();
        let mut decoder = Decoder::new();
        let mut buf = [0u8; 64];
        send(&far, Flags::INIT, &[]);
        let link = until(listener_fd(&listener), || listener.accept()).unwrap();
        assert_eq!(answer(&far, &mut decoder), Flags::INIT_ACK);

        // While its handshake runs, the listener reads the line and holds its frames.
        send(&far, Flags::DATA, b"one");
        assert!(readable(link.fd()));
        assert_eq!(
            listener.accept().unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        link.set_nonblocking(true);
        let n = until(link.fd(), || link.next_batch(&mut buf))
            .unwrap()
            .unwrap();
        assert_eq!(&buf[..n], b"one");

        // Served by the I/O threads: the link reads the port, the listener leaves it.
        link.serve_from_io_thread();
        send(&far, Flags::DATA, b"two");
        assert!(readable(link.fd()));
        assert_eq!(
            listener.accept().unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        assert!(readable(link.fd()), "the listener read the link's frame");
        let n = until(link.fd(), || link.next_batch(&mut buf))
            .unwrap()
            .unwrap();
        assert_eq!(&buf[..n], b"two");

        // The device starts again, twice: the first `I` ends the session (answered `R`)
        // and the second, read by the link too, is the listener's to answer.
        let mut twice = Vec::new();
        encode(Flags::INIT, &[], &mut twice).unwrap();
        twice.extend_from_slice(&twice.clone());
        assert_eq!(rustix::io::write(&far, &twice).unwrap(), twice.len());
        assert_eq!(
            until(link.fd(), || link.next_batch(&mut buf)).unwrap(),
            None
        );
        assert_eq!(answer(&far, &mut decoder), Flags::RESET);
        // The listener was woken, and answers the second `I` with a new session.
        assert!(
            readable(listener_fd(&listener)),
            "the listener was not woken"
        );
        let next = until(listener_fd(&listener), || listener.accept()).unwrap();
        assert_eq!(answer(&far, &mut decoder), Flags::INIT_ACK);
        assert!(
            link.write_now(b"late").is_err(),
            "the ended session still writes"
        );
        send(&far, Flags::DATA, b"three");
        next.serve_from_io_thread();
        let n = until(next.fd(), || next.next_batch(&mut buf))
            .unwrap()
            .unwrap();
        assert_eq!(&buf[..n], b"three");
    }
}
