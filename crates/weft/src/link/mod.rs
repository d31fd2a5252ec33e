//! Links: the only socket code. One module per kind of link, each plugging in through
//! the traits of [`kind`]: TCP ([`tcp`]), Unix stream sockets ([`unix`]), TLS ([`tls`])
//! and QUIC ([`quic`]), framed with the 2-byte little-endian batch length of weft-proto's
//! stream framing; UDP ([`udp`]), one batch per datagram; and serial ports ([`serial`]),
//! one batch per COBS frame. [`bind`] and [`Connecting::start`] are the two tables saying
//! which module serves which protocol.
//!
//! A link is made without waiting ([`Connecting`]) and is non-blocking during its
//! handshakes ([`Link::start_handshake`], [`Link::set_handshake_nonblocking`]) and once
//! its transport runs: the I/O threads read it when it is readable and write it without
//! ever waiting ([`Link::write_transmit`]); which thread writes is the transport's
//! decision. Writing a whole batch directly ([`Link::write_batch_parts`], for tests and
//! tools) waits for room with `poll(2)`, at most [`BLOCKED_WRITE_LIMIT`] ([`wait`]).

use std::io::{self, IoSlice, Read};
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};
use weft_proto::batch::framing::PrefixWidth;
use weft_transport::connection::{Transmit, GATHER_MAX};

use crate::endpoint::{Endpoint, Protocol};

mod batch_reader;
mod connect;
pub(crate) mod kind;
pub(crate) mod multicast;
pub(crate) mod quic;
pub(crate) mod serial;
mod tcp;
pub(crate) mod tls;
mod udp;
mod unix;
mod wait;

pub(crate) use batch_reader::BatchReader;
pub(crate) use connect::Connecting;
use kind::{LinkKind, ListenerKind};
pub use serial::dropped_frames as serial_dropped_frames;
use serial::{SerialListener, SerialSettings};
pub use tcp::TcpBuffers;
use tls::TlsSettings;
pub(crate) use wait::{is_timeout, wait_ready, wait_room, BLOCKED_WRITE_LIMIT};

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

/// Largest batch a stream link carries (length prefix included).
pub(crate) const STREAM_BATCH_SIZE: u16 = u16::MAX;

/// Largest batch a UDP datagram carries on Linux (65535 - 8 - 40).
pub(crate) const UDP_BATCH_SIZE: u16 = 65_487;

/// Most parts one batch may be written from ([`Link::write_batch_parts`]).
pub(crate) const MAX_BATCH_PARTS: usize = 4;

/// Most batches one vectored write carries ([`Link::write_batch_group`],
/// [`Link::write_batches_from`]).
pub(crate) const MAX_GROUP_BATCHES: usize = 4;

/// Width of the length prefix before each batch on a stream link.
pub(crate) const STREAM_PREFIX: PrefixWidth = PrefixWidth::U16;

/// An open link, of any kind.
#[derive(Debug)]
pub struct Link(Box<dyn LinkKind>);

impl Link {
    /// The link of one kind.
    pub(crate) fn new(kind: impl LinkKind + 'static) -> Self {
        Self(Box::new(kind))
    }

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
                link.0.set_blocking()?;
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

    /// Runs a TLS or QUIC link's handshake, to be done before `deadline`, waiting for it;
    /// nothing to do for other links.
    pub fn handshake_tls(&mut self, deadline: Instant) -> io::Result<()> {
        self.0.handshake(deadline)
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
        self.0.start_handshake(deadline, notify)
    }

    /// Goes on with the handshake [`Link::start_handshake`] started, as far as the socket
    /// lets it: `Ok(true)` once it is over (at once for links without one), `Ok(false)`
    /// while it waits: for the socket ([`Link::handshake_wants_write`] says which way)
    /// or, where [`Link::handshake_ends_by_notification`], for its `notify`.
    pub fn advance_handshake(&mut self, now: Instant) -> io::Result<bool> {
        self.0.advance_handshake(now)
    }

    /// Whether the handshake in progress waits for the socket to take bytes (else for
    /// the peer's).
    pub fn handshake_wants_write(&self) -> bool {
        self.0.handshake_wants_write()
    }

    /// Whether the handshake in progress runs elsewhere and ends with the `notify` given
    /// to [`Link::start_handshake`] (QUIC), rather than with the socket becoming ready.
    pub fn handshake_ends_by_notification(&self) -> bool {
        self.0.handshake_ends_by_notification()
    }

    /// Makes reads and writes return `WouldBlock` instead of waiting, during a handshake
    /// run without waiting: as [`Link::set_nonblocking`], and a UDP link's reads too.
    pub fn set_handshake_nonblocking(&mut self, nonblocking: bool) -> io::Result<()> {
        self.0.set_handshake_nonblocking(nonblocking)
    }

    /// Whether its listener may hand this link datagrams or frames besides those its own
    /// socket receives (a UDP link accepted by a listener: what its peer sent before the
    /// link's socket was connected came to the listener's; a serial link accepted by a
    /// listener, which reads the port).
    pub fn fed_by_listener(&self) -> bool {
        self.0.fed_by_listener()
    }

    /// Whether this link's handshake has no socket of its own to wait on (a serial link
    /// accepted by a listener: its listener reads the port and hands it its frames until
    /// the I/O threads serve it).
    pub fn reads_from_listener(&self) -> bool {
        self.0.reads_from_listener()
    }

    /// The common name of the peer's TLS certificate, once the TLS handshake is done:
    /// the listener's for a connecting node, a client's for a listener with mTLS.
    /// `None` for other links, and when the peer presented no certificate or its
    /// subject has no readable common name.
    pub fn peer_cert_common_name(&self) -> Option<&str> {
        self.0.peer_cert_common_name()
    }

    /// When the peer's certificate chain expires, if the link is to close then
    /// (`close_link_on_expiration`).
    pub fn closes_at(&self) -> Option<std::time::SystemTime> {
        self.0.closes_at()
    }

    /// The socket's descriptor, borrowed.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.0.fd()
    }

    /// The socket's descriptor.
    pub fn raw_fd(&self) -> RawFd {
        self.fd().as_raw_fd()
    }

    /// Makes the link's reads and writes return `WouldBlock` instead of waiting.
    pub fn set_nonblocking(&self) -> io::Result<()> {
        self.0.set_nonblocking()
    }

    /// Whether the link can take more bytes now, or does within `wait`.
    pub fn writable_within(&self, wait: Duration) -> bool {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let now = poll(
            &mut [PollFd::new(self.fd(), PollFlags::POLLOUT)],
            PollTimeout::ZERO,
        );
        if matches!(now, Ok(n) if n > 0) {
            return true;
        }
        wait::wait_room(self.fd(), Instant::now() + wait).is_ok()
    }

    /// Whether batches travel one per datagram (no length prefix): UDP, and serial
    /// links (one per frame).
    pub fn is_datagram(&self) -> bool {
        self.0.is_datagram()
    }

    /// Whether a write costs more than the copy into the socket (TLS seals each
    /// record).
    pub fn seals_on_write(&self) -> bool {
        self.0.seals_on_write()
    }

    /// Whether the link encrypts what it carries (TLS, QUIC).
    pub fn encrypts(&self) -> bool {
        self.0.encrypts()
    }

    /// Largest batch the link can carry.
    pub fn mtu(&self) -> u16 {
        self.0.mtu()
    }

    /// A second handle on the same socket (one reads, the other writes); a TLS or QUIC
    /// link has one handle only.
    pub fn try_clone(&self) -> io::Result<Self> {
        self.0.try_clone()
    }

    /// Sets how long a read may block.
    pub fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.0.set_read_timeout(t)
    }

    /// Closes both directions.
    pub fn shutdown(&self) {
        self.0.shutdown();
    }

    /// Closes the sending direction (what was written is still delivered, then the end
    /// of stream); the link can still be read.
    pub fn shutdown_write(&self) {
        self.0.shutdown_write();
    }

    /// Whether the link is a stream on a socket of its own (TCP, TLS, a Unix socket).
    pub fn has_own_stream_socket(&self) -> bool {
        self.0.has_own_stream_socket()
    }

    /// Whether bytes from the peer wait to be read now (a stream link; false for others).
    pub fn has_input_now(&self) -> bool {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        if !self.has_own_stream_socket() {
            return false;
        }
        let mut fds = [PollFd::new(self.fd(), PollFlags::POLLIN)];
        matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
    }

    /// Reads nothing more from the link once its transport starts closing, where a link
    /// shares its line with the next one (a serial port this node connects to again):
    /// reads find nothing more (the transport's closed flag ends the link), writes go on.
    /// Nothing for other links.
    pub fn stop_reading(&self) {
        self.0.stop_reading();
    }

    /// The link's protocol, as Zenoh names it (`tcp`, `unixsock-stream`, `udp`, `tls`,
    /// `quic`, `serial`).
    pub fn protocol_name(&self) -> &'static str {
        self.0.protocol_name()
    }

    /// This end's address, for a link over IP.
    pub fn local_ip(&self) -> Option<std::net::IpAddr> {
        self.0.local_ip()
    }

    /// The peer's address, for a link over IP.
    pub fn peer_ip(&self) -> Option<std::net::IpAddr> {
        self.0.peer_ip()
    }

    /// A description for logs: `tcp/peer-address`.
    pub fn describe(&self) -> String {
        self.0.describe()
    }

    /// This end of the link as a locator, as Zenoh's admin space shows a link's `src`:
    /// `tcp/local-address` (a QUIC link's local port is not known: only its address).
    pub fn local_describe(&self) -> String {
        self.0.local_describe()
    }

    /// The next whole batch of a datagram link, copied into `buf`: its length, `None`
    /// once the link ended.
    pub(crate) fn receive_batch(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        self.0.receive_batch(buf)
    }
}

/// Reads bytes from a stream link, or one whole batch from a datagram link.
impl Read for &Link {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Read for Link {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

/// The length prefix of a batch of `len` bytes on a stream link.
fn stream_prefix(len: usize) -> io::Result<[u8; 2]> {
    let mut prefix = [0u8; 2];
    STREAM_PREFIX
        .write(len, &mut weft_proto::SliceWriter::new(&mut prefix))
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "batch over 65535 bytes"))?;
    Ok(prefix)
}

fn too_many_batches() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "too many batches for one write",
    )
}

/// Writing batches: a stream link lays each batch's length prefix before it; a datagram
/// link sends each batch whole.
impl Link {
    /// Writes `batch` (framed as [`Link::write_batch`] frames it) without waiting, from
    /// byte `done` of the framed batch on, and advances `done`. `Ok(true)` once the whole
    /// batch is written; `Ok(false)` when the socket takes no more now (call again with
    /// the same `done` when it is writable).
    pub fn write_batch_from(&self, batch: &[u8], done: &mut usize) -> io::Result<bool> {
        if self.is_datagram() {
            return self.0.send_batch_now(batch);
        }
        let prefix = stream_prefix(batch.len())?;
        let mut slices = [IoSlice::new(&prefix), IoSlice::new(batch)];
        let mut bufs = &mut slices[..];
        IoSlice::advance_slices(&mut bufs, *done);
        self.0.write_now(&mut bufs, done)
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
        self.0.write_now(&mut bufs, done)
    }

    /// Writes what the socket takes of `t` now, without waiting: the bytes taken (a
    /// stream link may take part; a datagram link counts the datagrams it took whole,
    /// and stops at one it has not taken all of yet: a serial frame in flight, asked for
    /// again when the link is writable).
    pub fn write_transmit(&self, t: &Transmit) -> io::Result<usize> {
        if self.is_datagram() {
            let mut n = 0;
            for datagram in t.datagrams() {
                if !self.0.send_batch_now(datagram)? {
                    break;
                }
                n += datagram.len();
            }
            return Ok(n);
        }
        let mut slices = [IoSlice::new(&[]); 2 * GATHER_MAX];
        let count = t.io_slices(&mut slices);
        let mut bufs = &mut slices[..count];
        let mut written = 0;
        self.0.write_now(&mut bufs, &mut written)?;
        Ok(written)
    }

    /// Writes what the link's own layer holds beyond what its socket took (TLS records
    /// sealed ahead of the socket), without waiting: `Ok(true)` once nothing is held.
    pub fn flush_held(&self) -> io::Result<bool> {
        self.0.flush_held()
    }

    /// Writes `bufs`, laid end to end, on a stream link as far as the socket takes them
    /// now, without waiting: the bytes taken. For a sender's own message: a link that
    /// prepares writes in steps prepares these whole (`LinkKind::write_whole_now`).
    pub fn write_slices_now(&self, bufs: &mut [IoSlice<'_>]) -> io::Result<usize> {
        let mut bufs = bufs;
        let mut written = 0;
        self.0.write_whole_now(&mut bufs, &mut written)?;
        Ok(written)
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
        if self.is_datagram() {
            return self.0.send_batch(parts);
        }
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let prefix = stream_prefix(total)?;
        // A small single-part batch is joined to its prefix on the stack: one plain write.
        if let [batch] = parts {
            if batch.len() <= 1024 {
                let mut framed = [0u8; 1026];
                framed[..2].copy_from_slice(&prefix);
                framed[2..2 + batch.len()].copy_from_slice(batch);
                return self.write_all_vectored(&mut [IoSlice::new(&framed[..2 + batch.len()])]);
            }
        }
        let mut slices = [IoSlice::new(&prefix); MAX_BATCH_PARTS + 1];
        for (slice, part) in slices[1..].iter_mut().zip(parts) {
            *slice = IoSlice::new(part);
        }
        self.write_all_vectored(&mut slices[..=parts.len()])
    }

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
        self.write_all_vectored(&mut slices[..batches.len() * PER_BATCH])
    }

    /// Writes every byte of `bufs`; on a non-blocking socket, waits for room at most
    /// [`BLOCKED_WRITE_LIMIT`].
    fn write_all_vectored(&self, mut bufs: &mut [IoSlice<'_>]) -> io::Result<()> {
        let mut written = 0;
        let mut deadline = None;
        while !self.0.write_now(&mut bufs, &mut written)? {
            let d = *deadline.get_or_insert_with(|| Instant::now() + BLOCKED_WRITE_LIMIT);
            wait::wait_room(self.fd(), d)?;
        }
        Ok(())
    }
}

/// A listening socket, of any kind.
#[derive(Debug)]
pub(crate) struct Listener(Box<dyn ListenerKind>);

/// Listens on `endpoint`, with `settings` for the links it accepts (TCP buffer sizes; a
/// TLS listener's certificate and key are loaded now, and a missing one refuses the
/// endpoint). The table of which module listens for which protocol.
pub(crate) fn bind(endpoint: &Endpoint, settings: &LinkSettings) -> io::Result<Listener> {
    let kind: Box<dyn ListenerKind> = match endpoint.protocol {
        Protocol::Tcp => Box::new(tcp::TcpListen::bind(endpoint, settings.tcp)?),
        Protocol::Tls => Box::new(tls::TlsListen::bind(
            endpoint,
            &settings.tls_for(endpoint)?,
        )?),
        Protocol::Quic => Box::new(quic::QuicListener::bind(endpoint, &settings.tls)?),
        Protocol::Serial => Box::new(SerialListener::bind(&SerialSettings::of(endpoint))?),
        Protocol::UnixStream => Box::new(unix::UnixListen::bind(endpoint)?),
        Protocol::Udp => Box::new(udp::UdpListener::bind(endpoint)?),
    };
    Ok(Listener(kind))
}

impl Listener {
    /// Listens on `endpoint` (see [`bind`]).
    pub(crate) fn bind(endpoint: &Endpoint, settings: &LinkSettings) -> io::Result<Self> {
        bind(endpoint, settings)
    }

    /// Makes `accept` return `WouldBlock` when nothing comes, instead of waiting (its
    /// caller waits for [`Listener::raw_fd`] to be readable). A UDP listener's `accept`
    /// also hands the datagrams of links it accepted before to those links.
    pub(crate) fn set_nonblocking(&self) -> io::Result<()> {
        self.0.set_nonblocking()
    }

    /// Whether this listener hands datagrams over to the links it accepted (a UDP or a
    /// serial listener): a handshake on such a link goes on after the listener is read.
    pub(crate) fn hands_datagrams_over(&self) -> bool {
        self.0.hands_datagrams_over()
    }

    /// The listening socket's descriptor.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.0.raw_fd()
    }

    /// The endpoint actually bound (with the real port when 0 was asked for).
    pub(crate) fn local_endpoint(&self) -> io::Result<String> {
        self.0.local_endpoint()
    }

    /// The next connection (`WouldBlock` when none waits on a non-blocking listener). A
    /// TLS or QUIC link's handshake is left to the link ([`Link::start_handshake`]).
    pub(crate) fn accept(&self) -> io::Result<Link> {
        self.0.accept()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The receive buffer the kernel gave a TCP link.
    fn recv_buffer(link: &Link) -> usize {
        assert_eq!(link.protocol_name(), "tcp");
        socket2::SockRef::from(&link.fd())
            .recv_buffer_size()
            .unwrap()
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
        let mut reader = BatchReader::new(Link::new(unix::UnixLink(ours)));
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
        let writer = Link::new(unix::UnixLink(ours));
        let mut reader = BatchReader::new(Link::new(unix::UnixLink(theirs)));
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
        let mut reader = BatchReader::new(Link::new(unix::UnixLink(ours)));
        theirs.write_all(&[3, 0, 7, 8, 9]).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        assert_eq!(
            reader.next_batch_before(deadline).unwrap(),
            Some(&[7u8, 8, 9][..])
        );
    }
}
