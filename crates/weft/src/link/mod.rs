//! Links: the only socket code. TCP, TLS ([`tls`]), QUIC ([`quic`]) and Unix stream
//! sockets, framed with the 2-byte little-endian batch length; UDP, one batch per
//! datagram; and serial ports ([`serial`]), one batch per COBS frame.
//!
//! A link is made without waiting ([`Connecting`]) and is non-blocking during its
//! handshakes ([`Link::start_handshake`], [`Link::set_handshake_nonblocking`]) and once
//! its transport runs: the I/O threads read it when it is readable and write it without
//! ever waiting ([`Link::write_batch_from`]); an application thread writing it directly
//! ([`Link::write_batch_parts`]) waits for room with `poll(2)`, at most
//! [`BLOCKED_WRITE_LIMIT`], and an I/O thread never waits at all.

use std::cell::Cell;
use std::collections::HashMap;
use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use weft_transport::connection::{Transmit, GATHER_MAX};

use crate::endpoint::{parse_buffer_size, Endpoint, Protocol};

mod connect;
pub(crate) mod quic;
pub(crate) mod serial;

pub use serial::dropped_frames as serial_dropped_frames;
pub(crate) mod tls;

pub(crate) use connect::Connecting;
use quic::{QuicLink, QuicListener};
use serial::{SerialLink, SerialListener, SerialSettings};
use tls::{TlsLink, TlsSettings};

/// Kernel buffer sizes of a TCP link (`SO_SNDBUF` and `SO_RCVBUF`), in bytes.
///
/// The defaults (512 KiB each way) carry bulk data fastest. Everything in these buffers
/// goes out before a newer message of any priority; where high-priority messages share a
/// link with a saturating lower-priority stream, keeping the kernel's unsent queue short
/// (`net.ipv4.tcp_notsent_lowat`) cuts their tail latency more than smaller buffers. Set with
/// `transport.link.tcp.so_sndbuf` / `so_rcvbuf`, or per endpoint with
/// `#so_sndbuf=N;so_rcvbuf=N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpBuffers {
    /// `SO_SNDBUF`.
    pub send: usize,
    /// `SO_RCVBUF`.
    pub recv: usize,
}

impl Default for TcpBuffers {
    fn default() -> Self {
        Self {
            send: 512 * 1024,
            recv: 512 * 1024,
        }
    }
}

impl TcpBuffers {
    /// These sizes, overridden by the endpoint's `so_sndbuf` / `so_rcvbuf` configuration.
    pub fn for_endpoint(self, endpoint: &Endpoint) -> Self {
        let size = |key: &str, default: usize| {
            endpoint
                .config
                .iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| parse_buffer_size(v))
                .unwrap_or(default)
        };
        Self {
            send: size("so_sndbuf", self.send),
            recv: size("so_rcvbuf", self.recv),
        }
    }

    /// Applies the sizes to a socket.
    fn apply(self, s: &TcpStream) -> io::Result<()> {
        let sock = socket2::SockRef::from(s);
        sock.set_send_buffer_size(self.send)?;
        sock.set_recv_buffer_size(self.recv)
    }
}

/// What making a link takes beyond its endpoint: the TCP buffer sizes, and the TLS
/// settings of `tls/` and `quic/` endpoints (whose `#` configuration overrides them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkSettings {
    /// Kernel buffer sizes of TCP links (already overridden by the endpoint's).
    pub tcp: TcpBuffers,
    /// `transport.link.tls`.
    pub tls: TlsSettings,
}

impl From<TcpBuffers> for LinkSettings {
    fn from(tcp: TcpBuffers) -> Self {
        Self {
            tcp,
            tls: TlsSettings::default(),
        }
    }
}

impl LinkSettings {
    /// The TLS settings for `endpoint`: the node's, overridden by its `#` configuration.
    fn tls_for(&self, endpoint: &Endpoint) -> io::Result<TlsSettings> {
        self.tls.for_endpoint(&endpoint.config).map_err(|bad| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "endpoint {endpoint}: `{}`: expected {}",
                    bad.key, bad.expected
                ),
            )
        })
    }
}

/// Longest time a thread writing a batch waits for a non-blocking socket to take it.
pub(crate) const BLOCKED_WRITE_LIMIT: Duration = Duration::from_secs(5);

thread_local! {
    /// This thread must never wait for a socket (an I/O thread serving many links).
    static NEVER_WAIT: Cell<bool> = const { Cell::new(false) };
    /// A time past which this thread waits for no socket (see [`waiting_ends_by`]).
    static WAIT_ENDS_BY: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `f`, in which this thread waits for no socket past `deadline`, however many
/// writes it makes: closing every transport of a session, one peer that takes nothing
/// cannot make the others wait their turn (each would else wait its own
/// [`BLOCKED_WRITE_LIMIT`]).
pub(crate) fn waiting_ends_by<R>(deadline: Instant, f: impl FnOnce() -> R) -> R {
    /// Puts back the deadline before, even if `f` panics.
    struct Restore(Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            WAIT_ENDS_BY.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(WAIT_ENDS_BY.with(|d| d.replace(Some(deadline))));
    f()
}

/// The earlier of `deadline` and the time set by [`waiting_ends_by`], if any.
pub(crate) fn wait_deadline(deadline: Instant) -> Instant {
    WAIT_ENDS_BY
        .with(Cell::get)
        .map_or(deadline, |by| by.min(deadline))
}

/// Marks this thread as one that must never wait for a socket to take a write (`true`:
/// a write the socket does not take at once fails with `WouldBlock` instead), or as one
/// that may again (`false`).
pub(crate) fn never_wait_on_this_thread(never: bool) {
    NEVER_WAIT.with(|n| n.set(never));
}

/// Waits until `fd` can take more bytes, or `deadline`; `WouldBlock` on a thread that
/// never waits, `TimedOut` past the deadline.
fn wait_writable(fd: BorrowedFd<'_>, deadline: Instant) -> io::Result<()> {
    if NEVER_WAIT.with(Cell::get) {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    wait_room(fd, deadline)
}

/// Waits until `fd` can take more bytes, or `deadline` (`TimedOut`), on any thread: for
/// a write that cannot be left half done (a serial frame).
pub(crate) fn wait_room(fd: BorrowedFd<'_>, deadline: Instant) -> io::Result<()> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the peer took nothing while a batch waited to be written",
            ));
        }
        let ms = u16::try_from(left.as_millis().max(1)).unwrap_or(u16::MAX);
        match poll(
            &mut [PollFd::new(fd, PollFlags::POLLOUT)],
            PollTimeout::from(ms),
        ) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => {}
            Ok(_) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Waits until `fd` is readable (or, with `write`, writable), or `deadline`: `TimedOut`
/// past it. For a thread that runs a handshake to its end (the handshakes run by the
/// session's links loop never wait).
pub(crate) fn wait_ready(fd: BorrowedFd<'_>, write: bool, deadline: Instant) -> io::Result<()> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let flags = if write {
        PollFlags::POLLOUT
    } else {
        PollFlags::POLLIN
    };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline passed"));
        }
        let ms = u16::try_from(left.as_millis().max(1)).unwrap_or(u16::MAX);
        match poll(&mut [PollFd::new(fd, flags)], PollTimeout::from(ms)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => {}
            Ok(_) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
}

impl Link {
    /// Whether the link can take more bytes now, or does within `wait` (false on a
    /// thread that never waits, unless it can at once).
    pub fn writable_within(&self, wait: Duration) -> bool {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let now = poll(
            &mut [PollFd::new(self.fd(), PollFlags::POLLOUT)],
            PollTimeout::ZERO,
        );
        if matches!(now, Ok(n) if n > 0) {
            return true;
        }
        wait_writable(self.fd(), Instant::now() + wait).is_ok()
    }
}

/// Whether a socket error only says that a read timed out (no data yet).
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Applies weft's TCP socket options.
fn tune_tcp(s: &TcpStream, buffers: TcpBuffers) -> io::Result<()> {
    s.set_nodelay(true)?;
    buffers.apply(s)
}

/// Largest batch a stream link carries (length prefix included).
pub(crate) const STREAM_BATCH_SIZE: u16 = u16::MAX;

/// Largest batch a UDP datagram carries on Linux (65535 - 8 - 40).
pub(crate) const UDP_BATCH_SIZE: u16 = 65_487;

/// Datagrams queued per UDP peer of a listener before new ones are dropped.
const UDP_INBOX: usize = 1024;

/// One UDP peer: a connected socket (the connecting side), or a peer of a listening
/// socket whose datagrams the listener hands over.
#[derive(Debug, Clone)]
pub struct UdpLink {
    socket: Arc<UdpSocket>,
    peer: SocketAddr,
    inbox: Option<Arc<Mutex<Receiver<Vec<u8>>>>>,
    read_timeout: Option<Duration>,
}

/// An open link.
#[derive(Debug)]
pub enum Link {
    /// TCP.
    Tcp(TcpStream),
    /// Unix stream socket.
    Unix(UnixStream),
    /// UDP.
    Udp(UdpLink),
    /// TLS over TCP.
    Tls(Box<TlsLink>),
    /// QUIC: a socket pair bridged to the link's QUIC stream.
    Quic(Box<QuicLink>),
    /// A serial port.
    Serial(SerialLink),
}

impl Link {
    /// Connects to `endpoint`, giving up after `timeout`, with `settings` (TCP buffer
    /// sizes, TLS), waiting for the connection ([`Connecting`] makes it without waiting).
    /// A TLS or QUIC link's handshake is left to [`Link::handshake_tls`].
    pub fn connect(
        endpoint: &Endpoint,
        timeout: Duration,
        settings: &LinkSettings,
    ) -> io::Result<Self> {
        let deadline = Instant::now() + timeout;
        let mut connecting = Connecting::start(endpoint, settings)?;
        loop {
            if let Some(link) = connecting.poll()? {
                link.set_blocking()?;
                return Ok(link);
            }
            let fd = connecting.fd().expect("a connection in progress");
            let until = connecting.due().map_or(deadline, |d| d.min(deadline));
            match wait_ready(fd, connecting.wants_write(), until) {
                Err(e) if is_timeout(&e) && Instant::now() < deadline => {}
                other => other?,
            }
        }
    }

    /// Makes a link made without waiting ([`Connecting`]) wait in its reads and writes.
    fn set_blocking(&self) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.set_nonblocking(false),
            Self::Tls(t) => t.tcp().set_nonblocking(false),
            _ => Ok(()),
        }
    }

    /// Runs a TLS or QUIC link's handshake, to be done before `deadline`, waiting for it;
    /// nothing to do for other links.
    pub fn handshake_tls(&mut self, deadline: Instant) -> io::Result<()> {
        match self {
            Self::Tls(t) => t.handshake(deadline),
            Self::Quic(q) => q.handshake(deadline),
            _ => Ok(()),
        }
    }

    /// Starts a TLS or QUIC link's handshake, to be done before `deadline`, which
    /// [`Link::advance_handshake`] runs without waiting; nothing to do for other links. A
    /// TLS link's socket is made non-blocking. `notify` is called when a QUIC handshake,
    /// which runs on the QUIC runtime, ends.
    pub fn start_handshake(
        &mut self,
        deadline: Instant,
        notify: Arc<dyn Fn() + Send + Sync>,
    ) -> io::Result<()> {
        match self {
            Self::Tls(t) => t.start_handshake(deadline),
            Self::Quic(q) => q.start_handshake(deadline, notify),
            _ => Ok(()),
        }
    }

    /// Goes on with the handshake [`Link::start_handshake`] started, as far as the socket
    /// lets it: `Ok(true)` once it is over (at once for links without one), `Ok(false)`
    /// while it waits: for the socket ([`Link::handshake_wants_write`] says which way)
    /// or, on a QUIC link, for its `notify`.
    pub fn advance_handshake(&mut self, now: Instant) -> io::Result<bool> {
        match self {
            Self::Tls(t) => t.advance_handshake(now),
            Self::Quic(q) => q.advance_handshake(),
            _ => Ok(true),
        }
    }

    /// Whether the handshake in progress waits for the socket to take bytes (else for
    /// the peer's).
    pub fn handshake_wants_write(&self) -> bool {
        match self {
            Self::Tls(t) => t.handshake_wants_write(),
            _ => false,
        }
    }

    /// Makes reads and writes return `WouldBlock` instead of waiting, during a handshake
    /// run without waiting: as [`Link::set_nonblocking`], and a UDP link's reads too.
    pub fn set_handshake_nonblocking(&mut self, nonblocking: bool) -> io::Result<()> {
        match self {
            Self::Udp(u) => u.socket.set_nonblocking(nonblocking),
            Self::Serial(s) => {
                s.set_nonblocking(nonblocking);
                Ok(())
            }
            _ if nonblocking => self.set_nonblocking(),
            _ => Ok(()),
        }
    }

    /// Whether its listener may hand this link datagrams or frames besides those its own
    /// socket receives (a UDP link accepted by a listener: what its peer sent before the
    /// link's socket was connected came to the listener's; a serial link accepted by a
    /// listener, which reads the port).
    pub const fn fed_by_listener(&self) -> bool {
        match self {
            Self::Udp(UdpLink { inbox, .. }) => inbox.is_some(),
            Self::Serial(s) => s.reads_from_listener(),
            _ => false,
        }
    }

    /// Whether this link has no socket of its own to read (a serial link accepted by a
    /// listener: its listener reads the port and hands it its frames).
    pub const fn reads_from_listener(&self) -> bool {
        match self {
            Self::Serial(s) => s.reads_from_listener(),
            _ => false,
        }
    }

    /// The common name of the peer's TLS certificate, once the TLS handshake is done:
    /// the listener's for a connecting node, a client's for a listener with mTLS.
    /// `None` for other links, and when the peer presented no certificate or its
    /// subject has no readable common name.
    pub fn peer_cert_common_name(&self) -> Option<&str> {
        match self {
            Self::Tls(t) => t.peer_common_name(),
            Self::Quic(q) => q.peer_common_name(),
            _ => None,
        }
    }

    /// When the peer's certificate chain expires, if the link is to close then
    /// (`close_link_on_expiration`).
    pub fn closes_at(&self) -> Option<std::time::SystemTime> {
        match self {
            Self::Tls(t) => t.expires(),
            Self::Quic(q) => q.expires(),
            _ => None,
        }
    }

    /// The socket's descriptor, borrowed.
    pub fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Self::Tcp(s) => s.as_fd(),
            Self::Tls(t) => t.tcp().as_fd(),
            Self::Quic(q) => q.socket().as_fd(),
            Self::Unix(s) => s.as_fd(),
            Self::Udp(u) => u.socket.as_fd(),
            Self::Serial(s) => s.fd(),
        }
    }

    /// The socket's descriptor.
    pub fn raw_fd(&self) -> RawFd {
        self.fd().as_raw_fd()
    }

    /// Makes the link's reads and writes return `WouldBlock` instead of waiting.
    pub fn set_nonblocking(&self) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.set_nonblocking(true),
            Self::Unix(s) => s.set_nonblocking(true),
            Self::Quic(q) => q.socket().set_nonblocking(true),
            Self::Udp(u) => u.socket.set_nonblocking(true),
            Self::Serial(_) => Ok(()),
            Self::Tls(t) => t.set_nonblocking(),
        }
    }

    /// Writes `batch` (framed as [`Link::write_batch`] frames it) without waiting, from
    /// byte `done` of the framed batch on, and advances `done`. `Ok(true)` once the whole
    /// batch is written; `Ok(false)` when the socket takes no more now (call again with
    /// the same `done` when it is writable).
    pub fn write_batch_from(&self, batch: &[u8], done: &mut usize) -> io::Result<bool> {
        if self.is_datagram() {
            self.write_batch(batch)?;
            return Ok(true);
        }
        let len = u16::try_from(batch.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "batch over 65535 bytes"))?;
        let prefix = len.to_le_bytes();
        let mut slices = [IoSlice::new(&prefix), IoSlice::new(batch)];
        let mut bufs = &mut slices[..];
        IoSlice::advance_slices(&mut bufs, *done);
        write_now(self, &mut bufs, done)
    }

    /// As [`Link::write_batch_from`], for `batches` written one after the other in one
    /// vectored write (stream links; a datagram link takes exactly one batch): `done`
    /// counts the bytes of the framed batches laid end to end.
    pub fn write_batches_from(&self, batches: &[Vec<u8>], done: &mut usize) -> io::Result<bool> {
        if let [batch] = batches {
            return self.write_batch_from(batch, done);
        }
        if self.is_datagram() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a datagram link writes one batch at a time",
            ));
        }
        const MOST: usize = MAX_GROUP_BATCHES;
        if batches.len() > MOST {
            return Err(too_many_batches());
        }
        let mut prefixes = [[0u8; 2]; MOST];
        for (prefix, batch) in prefixes.iter_mut().zip(batches) {
            *prefix = stream_prefix(batch.len())?;
        }
        let mut slices: [IoSlice<'_>; 2 * MOST] = [IoSlice::new(&[]); 2 * MOST];
        for (i, batch) in batches.iter().enumerate() {
            slices[2 * i] = IoSlice::new(&prefixes[i]);
            slices[2 * i + 1] = IoSlice::new(batch);
        }
        let mut bufs = &mut slices[..2 * batches.len()];
        IoSlice::advance_slices(&mut bufs, *done);
        write_now(self, &mut bufs, done)
    }

    /// Writes what the socket takes of `t` now, without waiting: the bytes taken (a
    /// stream link may take part; a datagram link sends the transmit's datagrams whole).
    pub fn write_transmit(&self, t: &Transmit) -> io::Result<usize> {
        if self.is_datagram() {
            let mut n = 0;
            for datagram in t.datagrams() {
                self.write_batch(datagram)?;
                n += datagram.len();
            }
            return Ok(n);
        }
        let mut slices = [IoSlice::new(&[]); 2 * GATHER_MAX];
        let count = t.io_slices(&mut slices);
        let mut bufs = &mut slices[..count];
        let mut written = 0;
        write_now(self, &mut bufs, &mut written)?;
        Ok(written)
    }

    /// Whether batches travel one per datagram (no length prefix): UDP, and serial
    /// links (one per frame).
    pub const fn is_datagram(&self) -> bool {
        matches!(self, Self::Udp(_) | Self::Serial(_))
    }

    /// Largest batch the link can carry.
    pub const fn mtu(&self) -> u16 {
        match self {
            Self::Udp(_) => UDP_BATCH_SIZE,
            Self::Serial(_) => serial::MTU,
            _ => STREAM_BATCH_SIZE,
        }
    }

    /// A second handle on the same socket (one reads, the other writes).
    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(match self {
            Self::Tcp(s) => Self::Tcp(s.try_clone()?),
            Self::Unix(s) => Self::Unix(s.try_clone()?),
            Self::Udp(u) => Self::Udp(u.clone()),
            Self::Serial(s) => Self::Serial(s.clone()),
            // One rustls session, one bridge: one handle.
            Self::Tls(_) | Self::Quic(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "a TLS or QUIC link has one handle",
                ))
            }
        })
    }

    /// Sets how long a read may block.
    pub fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.set_read_timeout(t),
            Self::Unix(s) => s.set_read_timeout(t),
            Self::Tls(l) => l.tcp().set_read_timeout(t),
            Self::Quic(q) => q.socket().set_read_timeout(t),
            Self::Udp(u) => {
                u.read_timeout = t;
                if u.inbox.is_none() {
                    u.socket.set_read_timeout(t)?;
                }
                Ok(())
            }
            Self::Serial(s) => {
                s.set_read_timeout(t);
                Ok(())
            }
        }
    }

    /// Closes both directions.
    pub fn shutdown(&self) {
        let _ = match self {
            Self::Tcp(s) => s.shutdown(Shutdown::Both),
            Self::Unix(s) => s.shutdown(Shutdown::Both),
            // The bridge sees the socket pair end and closes the QUIC connection.
            Self::Quic(q) => q.socket().shutdown(Shutdown::Both),
            // Nothing to shut: the reader stops on the transport's closed flag.
            Self::Udp(_) => Ok(()),
            // The link ends for its reader and its listener (the port stays open).
            Self::Serial(s) => {
                s.shutdown();
                Ok(())
            }
            Self::Tls(t) => {
                t.shutdown();
                Ok(())
            }
        };
    }

    /// Closes the sending direction (what was written is still delivered, then the end
    /// of stream); the link can still be read.
    pub fn shutdown_write(&self) {
        let _ = match self {
            Self::Tcp(s) => s.shutdown(Shutdown::Write),
            Self::Unix(s) => s.shutdown(Shutdown::Write),
            // The bridge finishes the QUIC stream after what was written.
            Self::Quic(q) => q.socket().shutdown(Shutdown::Write),
            Self::Udp(_) | Self::Serial(_) => Ok(()),
            Self::Tls(t) => {
                t.shutdown_write();
                Ok(())
            }
        };
    }

    /// Whether the link is a stream on a socket of its own (TCP, TLS, a Unix socket).
    pub const fn has_own_stream_socket(&self) -> bool {
        matches!(self, Self::Tcp(_) | Self::Tls(_) | Self::Unix(_))
    }

    /// Whether bytes from the peer wait to be read now (a stream link; false for others).
    pub fn has_input_now(&self) -> bool {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        if !matches!(self, Self::Tcp(_) | Self::Tls(_) | Self::Unix(_)) {
            return false;
        }
        let mut fds = [PollFd::new(self.fd(), PollFlags::POLLIN)];
        matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
    }

    /// Reads nothing more from the link once its transport starts closing, where a link
    /// shares its line with the next one (a serial port this node connects to again):
    /// reads give the end of the link, writes go on. Nothing for other links.
    pub fn stop_reading(&self) {
        if let Self::Serial(s) = self {
            s.stop_reading();
        }
    }

    /// The link's protocol, as Zenoh names it (`tcp`, `unixsock-stream`, `udp`, `tls`,
    /// `quic`, `serial`).
    pub const fn protocol_name(&self) -> &'static str {
        match self {
            Self::Tcp(_) => "tcp",
            Self::Unix(_) => "unixsock-stream",
            Self::Udp(_) => "udp",
            Self::Tls(_) => "tls",
            Self::Quic(_) => "quic",
            Self::Serial(_) => "serial",
        }
    }

    /// This end's address, for a link over IP.
    pub fn local_ip(&self) -> Option<std::net::IpAddr> {
        match self {
            Self::Tcp(s) => s.local_addr().ok().map(|a| a.ip()),
            Self::Unix(_) | Self::Serial(_) => None,
            Self::Udp(u) => u.socket.local_addr().ok().map(|a| a.ip()),
            Self::Tls(t) => t.tcp().local_addr().ok().map(|a| a.ip()),
            Self::Quic(q) => q.local_ip(),
        }
    }

    /// The peer's address, for a link over IP.
    pub fn peer_ip(&self) -> Option<std::net::IpAddr> {
        match self {
            Self::Tcp(s) => s.peer_addr().ok().map(|a| a.ip()),
            Self::Unix(_) | Self::Serial(_) => None,
            Self::Udp(u) => Some(u.peer.ip()),
            Self::Tls(t) => Some(t.peer().ip()),
            Self::Quic(q) => Some(q.peer().ip()),
        }
    }

    /// A description for logs: `tcp/peer-address`.
    pub fn describe(&self) -> String {
        match self {
            Self::Tcp(s) => match s.peer_addr() {
                Ok(a) => format!("tcp/{a}"),
                Err(_) => "tcp/?".into(),
            },
            Self::Unix(_) => "unixsock-stream".into(),
            Self::Udp(u) => format!("udp/{}", u.peer),
            Self::Tls(t) => format!("tls/{}", t.peer()),
            Self::Quic(q) => format!("quic/{}", q.peer()),
            Self::Serial(s) => format!("serial/{}", s.path()),
        }
    }

    /// This end of the link as a locator, as Zenoh's admin space shows a link's `src`:
    /// `tcp/local-address` (a QUIC link's local port is not known: only its address).
    pub fn local_describe(&self) -> String {
        let addr = |a: std::io::Result<std::net::SocketAddr>| {
            a.map_or_else(|_| "?".to_string(), |a| a.to_string())
        };
        match self {
            Self::Tcp(s) => format!("tcp/{}", addr(s.local_addr())),
            Self::Unix(_) => "unixsock-stream".into(),
            Self::Udp(u) => format!("udp/{}", addr(u.socket.local_addr())),
            Self::Tls(t) => format!("tls/{}", addr(t.tcp().local_addr())),
            Self::Quic(q) => match q.local_ip() {
                Some(ip) => format!("quic/{ip}"),
                None => "quic/?".into(),
            },
            Self::Serial(s) => format!("serial/{}", s.path()),
        }
    }

    /// Writes one batch: with its length prefix on streams, as one datagram on UDP.
    pub fn write_batch(&self, batch: &[u8]) -> io::Result<()> {
        self.write_batch_parts(&[batch])
    }

    /// Writes one batch made of `parts` (at most [`MAX_BATCH_PARTS`]) laid end to end,
    /// without joining them first: one vectored write per batch, whatever its size.
    pub fn write_batch_parts(&self, parts: &[&[u8]]) -> io::Result<()> {
        if parts.len() > MAX_BATCH_PARTS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "too many parts in one batch",
            ));
        }
        let total: usize = parts.iter().map(|p| p.len()).sum();
        // Streams: the length prefix, then the parts; datagrams: the parts alone.
        let len = u16::try_from(total);
        let prefix = len.unwrap_or_default().to_le_bytes();
        let mut slices = [IoSlice::new(&prefix); MAX_BATCH_PARTS + 1];
        for (slice, part) in slices[1..].iter_mut().zip(parts) {
            *slice = IoSlice::new(part);
        }
        let n = parts.len();
        if let Self::Serial(s) = self {
            return s.write_parts(parts);
        }
        if let Self::Udp(u) = self {
            let socket = socket2::SockRef::from(&*u.socket);
            let iov = &slices[1..=n];
            // Every UDP link's socket is connected to its peer.
            let sent = socket.send_vectored(iov)?;
            if sent != total {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "a datagram was cut short",
                ));
            }
            return Ok(());
        }
        if len.is_err() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "batch over 65535 bytes",
            ));
        }
        // A small single-part batch is joined to its prefix on the stack: one plain write.
        if let [batch] = parts {
            if batch.len() <= 1024 {
                let mut framed = [0u8; 1026];
                framed[..2].copy_from_slice(&prefix);
                framed[2..2 + batch.len()].copy_from_slice(batch);
                return write_all_vectored(self, &mut [IoSlice::new(&framed[..2 + batch.len()])]);
            }
        }
        write_all_vectored(self, &mut slices[..=n])
    }
}

/// Most parts one batch may be written from ([`Link::write_batch_parts`]).
pub(crate) const MAX_BATCH_PARTS: usize = 4;

/// Most batches one vectored write carries ([`Link::write_batch_group`],
/// [`Link::write_batches_from`]).
pub(crate) const MAX_GROUP_BATCHES: usize = 4;

/// The length prefix of a batch of `len` bytes on a stream link.
fn stream_prefix(len: usize) -> io::Result<[u8; 2]> {
    u16::try_from(len)
        .map(u16::to_le_bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "batch over 65535 bytes"))
}

fn too_many_batches() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "too many batches for one write",
    )
}

impl Link {
    /// Writes several batches, each made of [`MAX_BATCH_PARTS`] parts laid end to end
    /// (empty parts allowed), in one vectored write on a stream (at most
    /// [`MAX_GROUP_BATCHES`]); one datagram each on UDP. Loopback TCP moves large data
    /// about twice as fast in writes of 256 KiB as in writes of 64 KiB.
    pub fn write_batch_group(&self, batches: &[[&[u8]; MAX_BATCH_PARTS]]) -> io::Result<()> {
        if self.is_datagram() || batches.len() == 1 {
            for parts in batches {
                self.write_batch_parts(parts)?;
            }
            return Ok(());
        }
        if batches.len() > MAX_GROUP_BATCHES {
            return Err(too_many_batches());
        }
        let mut prefixes = [[0u8; 2]; MAX_GROUP_BATCHES];
        for (prefix, parts) in prefixes.iter_mut().zip(batches) {
            *prefix = stream_prefix(parts.iter().map(|p| p.len()).sum())?;
        }
        const PER_BATCH: usize = MAX_BATCH_PARTS + 1;
        let mut slices = [IoSlice::new(&[]); MAX_GROUP_BATCHES * PER_BATCH];
        for (i, parts) in batches.iter().enumerate() {
            slices[i * PER_BATCH] = IoSlice::new(&prefixes[i]);
            for (slice, part) in slices[i * PER_BATCH + 1..].iter_mut().zip(parts) {
                *slice = IoSlice::new(part);
            }
        }
        write_all_vectored(self, &mut slices[..batches.len() * PER_BATCH])
    }
}

/// Writes what the socket takes of `bufs` now, advancing them and counting the bytes in
/// `written`: `Ok(true)` once every byte is written, `Ok(false)` when the socket takes
/// no more for now.
fn write_now(link: &Link, bufs: &mut &mut [IoSlice<'_>], written: &mut usize) -> io::Result<bool> {
    if let Link::Tls(t) = link {
        return t.write_now(bufs, written);
    }
    let mut w = link;
    while !bufs.is_empty() {
        match w.write_vectored(bufs) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                IoSlice::advance_slices(bufs, n);
                *written += n;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Writes every byte of `bufs`; on a non-blocking socket, waits for room at most
/// [`BLOCKED_WRITE_LIMIT`] (not at all on a thread that never waits).
fn write_all_vectored(link: &Link, mut bufs: &mut [IoSlice<'_>]) -> io::Result<()> {
    IoSlice::advance_slices(&mut bufs, 0);
    let mut written = 0;
    let mut deadline = None;
    while !write_now(link, &mut bufs, &mut written)? {
        let d =
            *deadline.get_or_insert_with(|| wait_deadline(Instant::now() + BLOCKED_WRITE_LIMIT));
        wait_writable(link.fd(), d)?;
    }
    Ok(())
}

impl Read for &Link {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match *self {
            Link::Tcp(s) => (&mut &*s).read(buf),
            Link::Unix(s) => (&mut &*s).read(buf),
            Link::Udp(u) => u.socket.recv(buf),
            Link::Tls(t) => t.read(buf),
            Link::Quic(q) => (&mut q.socket()).read(buf),
            Link::Serial(s) => match s.next_batch(buf)? {
                Some(n) => Ok(n),
                None => Ok(0),
            },
        }
    }
}

impl Read for Link {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&mut &*self).read(buf)
    }
}

impl Write for &Link {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match *self {
            Link::Tcp(s) => (&mut &*s).write(buf),
            Link::Unix(s) => (&mut &*s).write(buf),
            Link::Udp(u) => u.socket.send(buf),
            Link::Tls(t) => (&mut &**t).write(buf),
            Link::Quic(q) => (&mut q.socket()).write(buf),
            Link::Serial(s) => s.write_parts(&[buf]).map(|()| buf.len()),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match *self {
            Link::Tcp(s) => (&mut &*s).write_vectored(bufs),
            Link::Unix(s) => (&mut &*s).write_vectored(bufs),
            Link::Udp(u) => socket2::SockRef::from(&*u.socket).send_vectored(bufs),
            Link::Tls(t) => (&mut &**t).write_vectored(bufs),
            Link::Quic(q) => (&mut q.socket()).write_vectored(bufs),
            Link::Serial(s) => {
                let parts: Vec<&[u8]> = bufs.iter().map(|b| &**b).collect();
                let n = parts.iter().map(|p| p.len()).sum();
                s.write_parts(&parts).map(|()| n)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match *self {
            Link::Tls(t) => (&mut &**t).flush(),
            _ => Ok(()),
        }
    }
}

/// Reads length-prefixed batches from a stream link, with large reads split in memory.
#[derive(Debug)]
pub(crate) struct BatchReader {
    link: Link,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl BatchReader {
    /// A reader over `link`.
    pub(crate) fn new(link: Link) -> Self {
        Self {
            link,
            buf: vec![0; 2 * (usize::from(STREAM_BATCH_SIZE) + 2)],
            start: 0,
            end: 0,
        }
    }

    /// The link read from.
    pub(crate) const fn link(&self) -> &Link {
        &self.link
    }

    /// The link read from, to change its settings.
    pub(crate) fn link_mut(&mut self) -> &mut Link {
        &mut self.link
    }

    /// The link, and the bytes read from it but not returned yet (the start of the
    /// batches that came after the last one read).
    pub(crate) fn into_parts(self) -> (Link, Vec<u8>) {
        let rest = self.buf[self.start..self.end].to_vec();
        (self.link, rest)
    }

    /// Reads the next batch. `Ok(None)` on a clean end of stream between batches; a read
    /// timeout surfaces as an error of kind `WouldBlock` or `TimedOut`, and a later call
    /// resumes where it stopped.
    pub(crate) fn next_batch(&mut self) -> io::Result<Option<&[u8]>> {
        self.next_batch_until(None)
    }

    #[cfg(test)]
    /// As [`BatchReader::next_batch`], but the whole batch must arrive before `deadline`
    /// (an error of kind `TimedOut` otherwise), however slowly its bytes trickle in: each
    /// read waits at most for what is left. The read timeout stays changed afterwards.
    pub(crate) fn next_batch_before(&mut self, deadline: Instant) -> io::Result<Option<&[u8]>> {
        self.next_batch_until(Some(deadline))
    }

    /// Sets the read timeout to what is left before `deadline`; `TimedOut` if nothing is.
    fn arm(&mut self, deadline: Option<Instant>) -> io::Result<()> {
        let Some(d) = deadline else {
            return Ok(());
        };
        let left = d.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline passed"));
        }
        self.link.set_read_timeout(Some(left))
    }

    fn next_batch_until(&mut self, deadline: Option<Instant>) -> io::Result<Option<&[u8]>> {
        if let Link::Udp(u) = &self.link {
            let u = u.clone();
            self.arm(deadline)?;
            return self.next_datagram(&u);
        }
        if let Link::Serial(s) = &self.link {
            let s = s.clone();
            self.arm(deadline)?;
            return Ok(s.next_batch(&mut self.buf)?.map(|n| &self.buf[..n]));
        }
        loop {
            let available = self.end - self.start;
            if available >= 2 {
                let len = usize::from(u16::from_le_bytes([
                    self.buf[self.start],
                    self.buf[self.start + 1],
                ]));
                if available >= 2 + len {
                    let b = self.start + 2;
                    self.start = b + len;
                    return Ok(Some(&self.buf[b..b + len]));
                }
            }
            if self.start > 0 && self.buf.len() - self.end < usize::from(STREAM_BATCH_SIZE) + 2 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            self.arm(deadline)?;
            let n = match self.link.read(&mut self.buf[self.end..]) {
                Err(e) if deadline.is_some() && is_timeout(&e) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "deadline passed waiting for a batch",
                    ));
                }
                result => result?,
            };
            if n == 0 {
                return if self.end == self.start {
                    Ok(None)
                } else {
                    Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the link closed inside a batch",
                    ))
                };
            }
            self.end += n;
        }
    }
}

impl BatchReader {
    /// The next datagram: one its listener handed over first (see
    /// [`Link::fed_by_listener`]), else one from its own socket.
    fn next_datagram(&mut self, u: &UdpLink) -> io::Result<Option<&[u8]>> {
        if let Some(inbox) = &u.inbox {
            let handed = inbox.lock().unwrap_or_else(|e| e.into_inner()).try_recv();
            if let Ok(d) = handed {
                let n = d.len().min(self.buf.len());
                self.buf[..n].copy_from_slice(&d[..n]);
                return Ok(Some(&self.buf[..n]));
            }
        }
        let n = u.socket.recv(&mut self.buf)?;
        Ok(Some(&self.buf[..n]))
    }
}

/// A UDP listening socket: a datagram from a new source starts a new link, with a socket
/// of its own bound to the same address and connected to that source (the kernel then
/// gives it what the source sends next, and the I/O threads read it like any socket);
/// what the source sent before that socket was connected is handed to the link's inbox.
#[derive(Debug)]
pub(crate) struct UdpListener {
    socket: Arc<UdpSocket>,
    /// `accept` returns `WouldBlock` when the socket has nothing to read.
    nonblocking: std::sync::atomic::AtomicBool,
    peers: Mutex<HashMap<SocketAddr, SyncSender<Vec<u8>>>>,
}

impl UdpListener {
    fn accept(&self) -> io::Result<Link> {
        let mut buf = vec![0u8; usize::from(UDP_BATCH_SIZE)];
        loop {
            if self.nonblocking.load(std::sync::atomic::Ordering::Relaxed) {
                use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
                let mut fds = [PollFd::new(self.socket.as_fd(), PollFlags::POLLIN)];
                if poll(&mut fds, PollTimeout::ZERO)? == 0 {
                    return Err(io::ErrorKind::WouldBlock.into());
                }
            }
            let (n, from) = self.socket.recv_from(&mut buf)?;
            let datagram = buf[..n].to_vec();
            let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(tx) = peers.get(&from) {
                match tx.try_send(datagram) {
                    Ok(()) | Err(TrySendError::Full(_)) => continue,
                    // The link is gone: this source starts a new one.
                    Err(TrySendError::Disconnected(d)) => {
                        peers.remove(&from);
                        return self.new_peer(&mut peers, from, d);
                    }
                }
            }
            return self.new_peer(&mut peers, from, datagram);
        }
    }

    fn new_peer(
        &self,
        peers: &mut HashMap<SocketAddr, SyncSender<Vec<u8>>>,
        from: SocketAddr,
        first: Vec<u8>,
    ) -> io::Result<Link> {
        let socket = udp_socket(self.socket.local_addr()?)?;
        socket.connect(from)?;
        let (tx, rx) = sync_channel(UDP_INBOX);
        let _ = tx.try_send(first);
        peers.insert(from, tx);
        Ok(Link::Udp(UdpLink {
            socket: Arc::new(socket),
            peer: from,
            inbox: Some(Arc::new(Mutex::new(rx))),
            read_timeout: None,
        }))
    }
}

/// A UDP socket bound to `addr` that other sockets may bind too (the listener's, and one
/// per peer, connected to it).
fn udp_socket(addr: SocketAddr) -> io::Result<UdpSocket> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.bind(&addr.into())?;
    Ok(socket.into())
}

/// Connections the kernel completes for a TCP listener before it is asked to accept them
/// (the standard library's 128 makes a burst of clients wait for SYN retries).
const LISTEN_BACKLOG: i32 = 1024;

/// A TCP listening socket on `addr`, with address reuse and [`LISTEN_BACKLOG`].
fn bind_tcp(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    if addr.is_ipv6() {
        // As the standard library's listener: `[::]` takes IPv4 too where the host allows.
        let _ = socket.set_only_v6(false);
    }
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}

/// A listening socket.
#[derive(Debug)]
pub(crate) enum Listener {
    /// TCP, and the buffer sizes of the links it accepts.
    Tcp(TcpListener, TcpBuffers),
    /// Unix stream socket (the path is removed on drop).
    Unix(UnixListener, String),
    /// UDP socket.
    Udp(UdpListener),
    /// TLS over TCP: the accepted links' buffer sizes and TLS configuration.
    Tls(TcpListener, TcpBuffers, TlsAcceptor),
    /// QUIC: the endpoint on its UDP socket, and the connections it was offered.
    Quic(QuicListener),
    /// A serial port waiting for sessions, one at a time.
    Serial(SerialListener),
}

/// How a TLS listener serves the links it accepts.
#[derive(Debug)]
pub(crate) struct TlsAcceptor {
    config: Arc<rustls::ServerConfig>,
    options: tls::LinkOptions,
}

impl Listener {
    /// Listens on `endpoint`, with `settings` for the links it accepts (TCP buffer sizes;
    /// a TLS listener's certificate and key are loaded now, and a missing one refuses
    /// the endpoint).
    pub(crate) fn bind(endpoint: &Endpoint, settings: &LinkSettings) -> io::Result<Self> {
        let first_addr = || {
            endpoint
                .address
                .to_socket_addrs()?
                .next()
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))
        };
        match endpoint.protocol {
            Protocol::Tcp => Ok(Self::Tcp(bind_tcp(first_addr()?)?, settings.tcp)),
            Protocol::Tls => {
                let tls = settings.tls_for(endpoint)?;
                let acceptor = TlsAcceptor {
                    config: tls.server_config()?,
                    options: tls::LinkOptions {
                        close_on_expiration: tls.close_link_on_expiration,
                        handshake_timeout: tls.handshake_timeout,
                    },
                };
                let buffers = tls.buffers.for_endpoint(endpoint);
                Ok(Self::Tls(bind_tcp(first_addr()?)?, buffers, acceptor))
            }
            Protocol::Quic => Ok(Self::Quic(QuicListener::bind(endpoint, &settings.tls)?)),
            Protocol::Serial => Ok(Self::Serial(SerialListener::bind(&SerialSettings::of(
                endpoint,
            ))?)),
            Protocol::UnixStream => Ok(Self::Unix(
                UnixListener::bind(&endpoint.address)?,
                endpoint.address.clone(),
            )),
            Protocol::Udp => {
                let addr = endpoint
                    .address
                    .to_socket_addrs()?
                    .next()
                    .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))?;
                Ok(Self::Udp(UdpListener {
                    socket: Arc::new(udp_socket(addr)?),
                    nonblocking: std::sync::atomic::AtomicBool::new(false),
                    peers: Mutex::new(HashMap::new()),
                }))
            }
        }
    }

    /// Makes `accept` return `WouldBlock` when nothing comes, instead of waiting (its
    /// caller waits for [`Listener::raw_fd`] to be readable). A UDP listener's `accept`
    /// also hands the datagrams of links it accepted before to those links.
    pub(crate) fn set_nonblocking(&self) -> io::Result<()> {
        match self {
            Self::Tcp(l, _) | Self::Tls(l, _, _) => l.set_nonblocking(true),
            Self::Unix(l, _) => l.set_nonblocking(true),
            // Its descriptor is non-blocking already.
            Self::Quic(_) => Ok(()),
            Self::Serial(s) => {
                s.set_nonblocking();
                Ok(())
            }
            // Its socket stays blocking for the links that send through it; `accept`
            // reads it only when it is readable.
            Self::Udp(u) => {
                u.nonblocking
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                Ok(())
            }
        }
    }

    /// Whether this listener hands datagrams over to the links it accepted (a UDP or a
    /// serial listener): a handshake on such a link goes on after the listener is read.
    pub(crate) const fn hands_datagrams_over(&self) -> bool {
        matches!(self, Self::Udp(_) | Self::Serial(_))
    }

    /// The listening socket's descriptor.
    pub(crate) fn raw_fd(&self) -> RawFd {
        match self {
            Self::Tcp(l, _) | Self::Tls(l, _, _) => l.as_raw_fd(),
            Self::Unix(l, _) => l.as_raw_fd(),
            Self::Quic(q) => q.raw_fd(),
            Self::Udp(u) => u.socket.as_raw_fd(),
            Self::Serial(s) => s.raw_fd(),
        }
    }

    /// The endpoint actually bound (with the real port when 0 was asked for).
    pub(crate) fn local_endpoint(&self) -> io::Result<String> {
        match self {
            Self::Tcp(l, _) => Ok(format!("tcp/{}", l.local_addr()?)),
            Self::Tls(l, _, _) => Ok(format!("tls/{}", l.local_addr()?)),
            Self::Quic(q) => Ok(format!("quic/{}", q.local_addr())),
            Self::Unix(_, path) => Ok(format!("unixsock-stream/{path}")),
            Self::Udp(u) => Ok(format!("udp/{}", u.socket.local_addr()?)),
            Self::Serial(s) => Ok(format!("serial/{}", s.path())),
        }
    }

    /// Waits for the next connection. A TLS or QUIC link's handshake is left to
    /// [`Link::handshake_tls`] (on the thread running the transport's handshake).
    pub(crate) fn accept(&self) -> io::Result<Link> {
        match self {
            Self::Tcp(l, buffers) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                tune_tcp(&s, *buffers)?;
                Ok(Link::Tcp(s))
            }
            Self::Tls(l, buffers, acceptor) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                tune_tcp(&s, *buffers)?;
                let link = TlsLink::server(s, acceptor.config.clone(), acceptor.options)?;
                Ok(Link::Tls(Box::new(link)))
            }
            Self::Unix(l, _) => {
                let s = l.accept()?.0;
                s.set_nonblocking(false)?;
                Ok(Link::Unix(s))
            }
            Self::Quic(q) => Ok(Link::Quic(Box::new(q.accept()?))),
            Self::Udp(u) => u.accept(),
            Self::Serial(s) => s.accept().map(Link::Serial),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Self::Unix(_, path) = self {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The receive buffer the kernel gave a TCP link.
    fn recv_buffer(link: &Link) -> usize {
        let Link::Tcp(s) = link else {
            panic!("not a TCP link")
        };
        socket2::SockRef::from(s).recv_buffer_size().unwrap()
    }

    #[test]
    fn tcp_links_get_the_buffer_sizes_of_their_endpoint_or_of_the_config() {
        let config = TcpBuffers {
            send: 64 * 1024,
            recv: 64 * 1024,
        };
        let ep: Endpoint = "tcp/127.0.0.1:0#so_rcvbuf=262144".parse().unwrap();
        let listener = Listener::bind(&ep, &config.for_endpoint(&ep).into()).unwrap();
        let bound: Endpoint = listener.local_endpoint().unwrap().parse().unwrap();
        let connected = Link::connect(&bound, Duration::from_secs(5), &config.into()).unwrap();
        let accepted = listener.accept().unwrap();
        // Linux reports twice the size asked for (its bookkeeping share included).
        let (small, large) = (recv_buffer(&connected), recv_buffer(&accepted));
        assert!((64 * 1024..256 * 1024).contains(&small), "{small}");
        assert!(large >= 256 * 1024, "{large}");
        assert_eq!(config.for_endpoint(&bound), config);
    }

    #[test]
    fn a_batch_trickling_in_past_its_deadline_times_out() {
        use std::io::Write;
        let (ours, mut theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut reader = BatchReader::new(Link::Unix(ours));
        // A 4-byte batch announced, one byte of it sent every 20 ms: no read waits long,
        // the whole batch never comes.
        theirs.write_all(&[4, 0]).unwrap();
        let trickler = std::thread::spawn(move || {
            for _ in 0..20 {
                std::thread::sleep(Duration::from_millis(20));
                if theirs.write_all(&[0]).is_err() {
                    break;
                }
            }
        });
        let start = Instant::now();
        let deadline = start + Duration::from_millis(50);
        let e = reader.next_batch_before(deadline).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(start.elapsed() < Duration::from_millis(200));
        trickler.join().unwrap();
    }

    #[test]
    fn a_group_of_batches_arrives_as_its_batches_each_joined_from_its_parts() {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let writer = Link::Unix(ours);
        let mut reader = BatchReader::new(Link::Unix(theirs));
        let big = vec![5u8; 60_000];
        let group = [
            [&b"h1"[..], &big[..10_000], &big[10_000..], &b""[..]],
            [&b"h2"[..], &b""[..], &b"tail"[..], &b"!"[..]],
            [&b"h3"[..], &b""[..], &b""[..], &b""[..]],
        ];
        // Larger than the socket takes at once: the write waits for the reader.
        std::thread::scope(|scope| {
            let written = scope.spawn(|| writer.write_batch_group(&group));
            let deadline = Instant::now() + Duration::from_secs(5);
            let first = reader
                .next_batch_before(deadline)
                .unwrap()
                .unwrap()
                .to_vec();
            assert_eq!(first.len(), 2 + 60_000);
            assert_eq!(&first[..2], b"h1");
            assert!(first[2..].iter().all(|b| *b == 5));
            let second = reader.next_batch_before(deadline).unwrap().unwrap();
            assert_eq!(second, b"h2tail!");
            let third = reader.next_batch_before(deadline).unwrap().unwrap();
            assert_eq!(third, b"h3");
            written.join().unwrap().unwrap();
        });
        let too_many = [[&b"x"[..], &b""[..], &b""[..], &b""[..]]; MAX_GROUP_BATCHES + 1];
        assert_eq!(
            writer.write_batch_group(&too_many).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }

    #[test]
    fn a_batch_complete_before_its_deadline_is_read() {
        use std::io::Write;
        let (ours, mut theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut reader = BatchReader::new(Link::Unix(ours));
        theirs.write_all(&[3, 0, 7, 8, 9]).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        assert_eq!(
            reader.next_batch_before(deadline).unwrap(),
            Some(&[7u8, 8, 9][..])
        );
    }
}
