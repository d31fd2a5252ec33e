//! TLS as a kind of link: [`TlsLink`] over TCP, its listener and its connecting side
//! (a TCP connection made without waiting, then the TLS handshake the link runs).

use std::io::{self, IoSlice, Write};
use std::net::{IpAddr, TcpListener};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::traffic::SEAL_STEP;
use super::{LinkOptions, TlsLink, TlsSettings};
use crate::endpoint::Endpoint;
use crate::link::kind::{Dialing, LinkKind, ListenerKind};
use crate::link::tcp::{accept_tcp, bind_tcp, first_address, TcpBuffers, TcpDialing};
use crate::link::Link;

impl LinkKind for TlsLink {
    fn protocol_name(&self) -> &'static str {
        "tls"
    }

    fn describe(&self) -> String {
        format!("tls/{}", self.peer())
    }

    fn local_describe(&self) -> String {
        match self.tcp().local_addr() {
            Ok(a) => format!("tls/{a}"),
            Err(_) => "tls/?".into(),
        }
    }

    fn local_ip(&self) -> Option<IpAddr> {
        self.tcp().local_addr().ok().map(|a| a.ip())
    }

    fn peer_ip(&self) -> Option<IpAddr> {
        Some(self.peer().ip())
    }

    fn seals_on_write(&self) -> bool {
        true
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.tcp().as_fd()
    }

    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        Self::read(self, buf)
    }

    fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        (&mut &*self).write_vectored(bufs)
    }

    fn write_now(&self, bufs: &mut &mut [IoSlice<'_>], written: &mut usize) -> io::Result<bool> {
        Self::write_now(self, bufs, written, SEAL_STEP)
    }

    /// The sender's own message, sealed whole before it is written: its reader would
    /// otherwise wake for each step (peer to peer 64 KiB samples over TLS: 56,000
    /// against 46,000 msg/s; bench/RESULTS.md).
    fn write_whole_now(
        &self,
        bufs: &mut &mut [IoSlice<'_>],
        written: &mut usize,
    ) -> io::Result<bool> {
        Self::write_now(self, bufs, written, usize::MAX)
    }

    fn flush_held(&self) -> io::Result<bool> {
        self.flush_unless_writing()
    }

    fn set_nonblocking(&self) -> io::Result<()> {
        Self::set_nonblocking(self)
    }

    fn set_blocking(&self) -> io::Result<()> {
        self.tcp().set_nonblocking(false)
    }

    fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.tcp().set_read_timeout(t)
    }

    fn handshake(&mut self, deadline: Instant) -> io::Result<()> {
        Self::handshake(self, deadline)
    }

    fn start_handshake(
        &mut self,
        deadline: Instant,
        _notify: Arc<dyn Fn() + Send + Sync>,
    ) -> io::Result<()> {
        Self::start_handshake(self, deadline)
    }

    fn advance_handshake(&mut self, now: Instant) -> io::Result<bool> {
        Self::advance_handshake(self, now)
    }

    fn handshake_wants_write(&self) -> bool {
        Self::handshake_wants_write(self)
    }

    fn peer_cert_common_name(&self) -> Option<&str> {
        self.peer_common_name()
    }

    fn closes_at(&self) -> Option<SystemTime> {
        self.expires()
    }

    fn shutdown(&self) {
        Self::shutdown(self);
    }

    fn shutdown_write(&self) {
        Self::shutdown_write(self);
    }

    fn has_own_stream_socket(&self) -> bool {
        true
    }
}

/// A TLS listener: a TCP listener, the accepted links' buffer sizes and how they are
/// served (certificate, key, client authentication).
#[derive(Debug)]
pub(crate) struct TlsListen {
    listener: TcpListener,
    buffers: TcpBuffers,
    config: Arc<rustls::ServerConfig>,
    options: LinkOptions,
}

impl TlsListen {
    /// Listens on `endpoint` with `tls` (its certificate and key are loaded now: a
    /// missing one refuses the endpoint).
    pub(crate) fn bind(endpoint: &Endpoint, tls: &TlsSettings) -> io::Result<Self> {
        Ok(Self {
            config: tls.server_config()?,
            options: options(tls),
            buffers: tls.buffers.for_endpoint(endpoint),
            listener: bind_tcp(first_address(endpoint)?)?,
        })
    }
}

impl ListenerKind for TlsListen {
    fn set_nonblocking(&self) -> io::Result<()> {
        self.listener.set_nonblocking(true)
    }

    fn raw_fd(&self) -> RawFd {
        self.listener.as_raw_fd()
    }

    fn local_endpoint(&self) -> io::Result<String> {
        Ok(format!("tls/{}", self.listener.local_addr()?))
    }

    fn accept(&self) -> io::Result<Link> {
        let s = accept_tcp(&self.listener, self.buffers)?;
        let link = TlsLink::server(s, self.config.clone(), self.options)?;
        Ok(Link::new(link))
    }
}

/// A TLS link being made: its TCP connection, then a [`TlsLink`] whose handshake the
/// link runs later ([`LinkKind::start_handshake`]).
#[derive(Debug)]
pub(crate) struct TlsDialing {
    tcp: TcpDialing,
    /// `HOST:PORT`, naming the server the certificate must be for.
    address: String,
    config: Arc<rustls::ClientConfig>,
    options: LinkOptions,
}

impl TlsDialing {
    /// Starts connecting to `endpoint` with `tls`.
    pub(crate) fn start(endpoint: &Endpoint, tls: &TlsSettings) -> io::Result<Self> {
        Ok(Self {
            config: tls.client_config()?,
            options: options(tls),
            address: endpoint.address.clone(),
            tcp: TcpDialing::start(endpoint, tls.buffers.for_endpoint(endpoint))?,
        })
    }
}

impl Dialing for TlsDialing {
    fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.tcp.socket_fd()
    }

    fn poll(&mut self) -> io::Result<Option<Link>> {
        let Some((s, peer)) = self.tcp.poll_stream()? else {
            return Ok(None);
        };
        let link = TlsLink::client(s, peer, &self.address, self.config.clone(), self.options)?;
        Ok(Some(Link::new(link)))
    }
}

/// What a link made with `tls` does beyond carrying bytes.
const fn options(tls: &TlsSettings) -> LinkOptions {
    LinkOptions {
        close_on_expiration: tls.close_link_on_expiration,
        handshake_timeout: tls.handshake_timeout,
    }
}
