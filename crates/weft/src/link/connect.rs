//! Connecting without waiting: a TCP (or TLS) connection in progress is a non-blocking
//! socket that becomes writable once the kernel has an answer; [`Connecting::poll`] asks
//! whether it has one and moves to the next address of the endpoint when one is refused.
//! Unix, UDP and QUIC links are made at once (QUIC's handshake is the link's, later). A
//! serial link is made once the line's exchange is over ([`SerialConnecting`]): the port
//! is waited on readable, and [`Connecting::due`] says when to send its `I` again.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Instant;

use super::quic::QuicLink;
use super::serial::{SerialConnecting, SerialSettings};
use super::tls::{self, TlsLink};
use super::{tune_tcp, Link, LinkSettings, TcpBuffers, UdpLink};
use crate::endpoint::{Endpoint, Protocol};

/// A link being made to an endpoint.
#[derive(Debug)]
pub(crate) struct Connecting {
    endpoint: Endpoint,
    settings: LinkSettings,
    /// The addresses not tried yet.
    addresses: VecDeque<SocketAddr>,
    /// The TCP connection in progress, to `at`.
    tcp: Option<(TcpStream, SocketAddr)>,
    /// A link made at once (Unix, UDP, QUIC), not handed over yet.
    ready: Option<Link>,
    /// A serial line's exchange in progress.
    serial: Option<SerialConnecting>,
    /// Why the last address failed.
    last_error: Option<io::Error>,
}

impl Connecting {
    /// Starts making a link to `endpoint` with `settings`. A TLS or QUIC link's
    /// handshake is left to the link ([`Link::start_handshake`]).
    pub(crate) fn start(endpoint: &Endpoint, settings: &LinkSettings) -> io::Result<Self> {
        let mut connecting = Self {
            endpoint: endpoint.clone(),
            settings: settings.clone(),
            addresses: VecDeque::new(),
            tcp: None,
            ready: None,
            serial: None,
            last_error: None,
        };
        match endpoint.protocol {
            Protocol::Tcp | Protocol::Tls => {
                connecting.addresses = endpoint.address.to_socket_addrs()?.collect();
                connecting.next_address()?;
            }
            Protocol::UnixStream => {
                connecting.ready = Some(Link::Unix(UnixStream::connect(&endpoint.address)?));
            }
            Protocol::Quic => {
                connecting.ready = Some(Link::Quic(Box::new(QuicLink::connect(
                    endpoint,
                    &settings.tls,
                )?)));
            }
            Protocol::Udp => connecting.ready = Some(connect_udp(endpoint)?),
            Protocol::Serial => {
                connecting.serial = Some(SerialConnecting::start(SerialSettings::of(endpoint))?);
            }
        }
        Ok(connecting)
    }

    /// The socket to wait on while a connection is in progress (writable, or readable
    /// when [`Connecting::wants_write`] says not).
    pub(crate) fn fd(&self) -> Option<BorrowedFd<'_>> {
        match &self.serial {
            Some(s) => Some(s.fd()),
            None => self.tcp.as_ref().map(|(s, _)| s.as_fd()),
        }
    }

    /// Whether the connection in progress waits for its socket to be writable (a TCP
    /// connection) rather than readable (a serial line's answer).
    pub(crate) const fn wants_write(&self) -> bool {
        self.serial.is_none()
    }

    /// When [`Connecting::poll`] has something to do whatever its socket says (a serial
    /// line's `I` to send again).
    pub(crate) const fn due(&self) -> Option<Instant> {
        match &self.serial {
            Some(s) => s.due(),
            None => None,
        }
    }

    fn buffers(&self) -> TcpBuffers {
        match self.endpoint.protocol {
            Protocol::Tls => self.settings.tls.buffers.for_endpoint(&self.endpoint),
            _ => self.settings.tcp,
        }
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
            match start_tcp(addr, self.buffers()) {
                Ok(s) => {
                    self.tcp = Some((s, addr));
                    return Ok(());
                }
                Err(e) => self.last_error = Some(e),
            }
        }
    }

    /// The link once it is made: `Ok(None)` while the connection is in progress (wait
    /// for [`Connecting::fd`] to be writable); an error once every address failed.
    pub(crate) fn poll(&mut self) -> io::Result<Option<Link>> {
        if let Some(link) = self.ready.take() {
            return Ok(Some(link));
        }
        if let Some(s) = &mut self.serial {
            return Ok(s.poll()?.map(Link::Serial));
        }
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
            let (s, addr) = self.tcp.take().expect("a connection in progress");
            return self.made(s, addr).map(Some);
        }
    }

    /// The link over the connected socket `s`.
    fn made(&self, s: TcpStream, peer: SocketAddr) -> io::Result<Link> {
        match self.endpoint.protocol {
            Protocol::Tls => {
                let tls = self.settings.tls_for(&self.endpoint)?;
                let config = tls.client_config()?;
                let options = tls::LinkOptions {
                    close_on_expiration: tls.close_link_on_expiration,
                    handshake_timeout: tls.handshake_timeout,
                };
                let link = TlsLink::client(s, peer, &self.endpoint.address, config, options)?;
                Ok(Link::Tls(Box::new(link)))
            }
            _ => Ok(Link::Tcp(s)),
        }
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

/// A UDP link: a socket of its own, connected to the endpoint's first address.
fn connect_udp(endpoint: &Endpoint) -> io::Result<Link> {
    let peer = endpoint
        .address
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))?;
    let local: SocketAddr = if peer.is_ipv4() {
        "0.0.0.0:0".parse().expect("an address")
    } else {
        "[::]:0".parse().expect("an address")
    };
    let socket = UdpSocket::bind(local)?;
    socket.connect(peer)?;
    Ok(Link::Udp(UdpLink {
        socket: Arc::new(socket),
        peer,
        inbox: None,
        read_timeout: None,
    }))
}
