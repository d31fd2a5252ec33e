//! TCP links: a stream socket with `TCP_NODELAY` and the configured kernel buffers; a
//! listener with a deep backlog; connecting without waiting, address after address.

use std::collections::VecDeque;
use std::io::{self, IoSlice, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::time::Duration;

use super::kind::{Dialing, LinkKind, ListenerKind};
use super::Link;
use crate::endpoint::{parse_buffer_size, Endpoint};

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

/// Applies weft's TCP socket options.
pub(crate) fn tune_tcp(s: &TcpStream, buffers: TcpBuffers) -> io::Result<()> {
    s.set_nodelay(true)?;
    buffers.apply(s)
}

/// A TCP link.
#[derive(Debug)]
pub(crate) struct TcpLink(pub(crate) TcpStream);

impl LinkKind for TcpLink {
    fn protocol_name(&self) -> &'static str {
        "tcp"
    }

    fn describe(&self) -> String {
        match self.0.peer_addr() {
            Ok(a) => format!("tcp/{a}"),
            Err(_) => "tcp/?".into(),
        }
    }

    fn local_describe(&self) -> String {
        match self.0.local_addr() {
            Ok(a) => format!("tcp/{a}"),
            Err(_) => "tcp/?".into(),
        }
    }

    fn local_ip(&self) -> Option<IpAddr> {
        self.0.local_addr().ok().map(|a| a.ip())
    }

    fn peer_ip(&self) -> Option<IpAddr> {
        self.0.peer_addr().ok().map(|a| a.ip())
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }

    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        (&self.0).read(buf)
    }

    fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        (&self.0).write_vectored(bufs)
    }

    fn set_nonblocking(&self) -> io::Result<()> {
        self.0.set_nonblocking(true)
    }

    fn set_blocking(&self) -> io::Result<()> {
        self.0.set_nonblocking(false)
    }

    fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.0.set_read_timeout(t)
    }

    fn try_clone(&self) -> io::Result<Link> {
        Ok(Link::new(Self(self.0.try_clone()?)))
    }

    fn shutdown(&self) {
        let _ = self.0.shutdown(Shutdown::Both);
    }

    fn shutdown_write(&self) {
        let _ = self.0.shutdown(Shutdown::Write);
    }

    fn has_own_stream_socket(&self) -> bool {
        true
    }
}

/// Connections the kernel completes for a TCP listener before it is asked to accept them
/// (the standard library's 128 makes a burst of clients wait for SYN retries).
const LISTEN_BACKLOG: i32 = 1024;

/// A TCP listening socket on `addr`, with address reuse and [`LISTEN_BACKLOG`].
pub(crate) fn bind_tcp(addr: SocketAddr) -> io::Result<TcpListener> {
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

/// The first address `endpoint` resolves to.
pub(crate) fn first_address(endpoint: &Endpoint) -> io::Result<SocketAddr> {
    endpoint
        .address
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))
}

/// Accepts one connection of a TCP listening socket, tuned, blocking until its transport
/// makes it non-blocking.
pub(crate) fn accept_tcp(listener: &TcpListener, buffers: TcpBuffers) -> io::Result<TcpStream> {
    let (s, _) = listener.accept()?;
    s.set_nonblocking(false)?;
    tune_tcp(&s, buffers)?;
    Ok(s)
}

/// A TCP listener, and the buffer sizes of the links it accepts.
#[derive(Debug)]
pub(crate) struct TcpListen {
    listener: TcpListener,
    buffers: TcpBuffers,
}

impl TcpListen {
    /// Listens on `endpoint`'s first address.
    pub(crate) fn bind(endpoint: &Endpoint, buffers: TcpBuffers) -> io::Result<Self> {
        Ok(Self {
            listener: bind_tcp(first_address(endpoint)?)?,
            buffers,
        })
    }
}

impl ListenerKind for TcpListen {
    fn set_nonblocking(&self) -> io::Result<()> {
        self.listener.set_nonblocking(true)
    }

    fn raw_fd(&self) -> RawFd {
        self.listener.as_raw_fd()
    }

    fn local_endpoint(&self) -> io::Result<String> {
        Ok(format!("tcp/{}", self.listener.local_addr()?))
    }

    fn accept(&self) -> io::Result<Link> {
        Ok(Link::new(TcpLink(accept_tcp(
            &self.listener,
            self.buffers,
        )?)))
    }
}

/// A TCP connection being made without waiting: a non-blocking socket that becomes
/// writable once the kernel has an answer; a refused address moves on to the next.
#[derive(Debug)]
pub(crate) struct TcpDialing {
    buffers: TcpBuffers,
    /// The addresses not tried yet.
    addresses: VecDeque<SocketAddr>,
    /// The connection in progress, to its address.
    tcp: Option<(TcpStream, SocketAddr)>,
    /// Why the last address failed.
    last_error: Option<io::Error>,
}

impl TcpDialing {
    /// Starts connecting to `endpoint`'s first address.
    pub(crate) fn start(endpoint: &Endpoint, buffers: TcpBuffers) -> io::Result<Self> {
        let mut dialing = Self {
            buffers,
            addresses: endpoint.address.to_socket_addrs()?.collect(),
            tcp: None,
            last_error: None,
        };
        dialing.next_address()?;
        Ok(dialing)
    }

    /// Starts connecting to the next address; an error when none is left.
    fn next_address(&mut self) -> io::Result<()> {
        loop {
            let Some(addr) = self.addresses.pop_front() else {
                return Err(self
                    .last_error
                    .take()
                    .unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address")));
            };
            match start_tcp(addr, self.buffers) {
                Ok(s) => {
                    self.tcp = Some((s, addr));
                    return Ok(());
                }
                Err(e) => self.last_error = Some(e),
            }
        }
    }

    /// The connected socket and its address once connected: `Ok(None)` while the
    /// connection is in progress; an error once every address failed.
    pub(crate) fn poll_stream(&mut self) -> io::Result<Option<(TcpStream, SocketAddr)>> {
        loop {
            let Some((s, _)) = &self.tcp else {
                return Err(io::Error::new(
                    io::ErrorKind::NotConnected,
                    "not connecting",
                ));
            };
            let failed = match s.take_error() {
                Ok(Some(e)) | Err(e) => Some(e),
                Ok(None) => match s.peer_addr() {
                    Ok(_) => None,
                    Err(e) if e.kind() == io::ErrorKind::NotConnected => return Ok(None),
                    Err(e) => Some(e),
                },
            };
            if let Some(e) = failed {
                self.last_error = Some(e);
                self.tcp = None;
                self.next_address()?;
                continue;
            }
            return Ok(self.tcp.take());
        }
    }

    /// The socket of the connection in progress.
    pub(crate) fn socket_fd(&self) -> Option<BorrowedFd<'_>> {
        self.tcp.as_ref().map(|(s, _)| s.as_fd())
    }
}

impl Dialing for TcpDialing {
    fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.socket_fd()
    }

    fn poll(&mut self) -> io::Result<Option<Link>> {
        Ok(self.poll_stream()?.map(|(s, _)| Link::new(TcpLink(s))))
    }
}

/// A non-blocking TCP socket connecting to `addr`, tuned before it connects.
fn start_tcp(addr: SocketAddr, buffers: TcpBuffers) -> io::Result<TcpStream> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    socket.set_nonblocking(true)?;
    match socket.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(nix::errno::Errno::EINPROGRESS as i32) => {}
        Err(e) => return Err(e),
    }
    let s: TcpStream = socket.into();
    tune_tcp(&s, buffers)?;
    Ok(s)
}
