//! QUIC as a kind of link: weft's end of the socket pair bridged to the link's QUIC
//! stream carries bytes as a stream link does; the handshake runs on the QUIC runtime and
//! ends with its notification.

use std::io::{self, IoSlice, Read, Write};
use std::net::{IpAddr, Shutdown};
use std::os::fd::{AsFd, BorrowedFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::{QuicLink, QuicListener};
use crate::link::kind::{LinkKind, ListenerKind};
use crate::link::Link;

impl LinkKind for QuicLink {
    fn protocol_name(&self) -> &'static str {
        "quic"
    }

    fn describe(&self) -> String {
        format!("quic/{}", self.peer())
    }

    /// Its local port is not known: only its address.
    fn local_describe(&self) -> String {
        match self.local_ip() {
            Some(ip) => format!("quic/{ip}"),
            None => "quic/?".into(),
        }
    }

    fn local_ip(&self) -> Option<IpAddr> {
        Self::local_ip(self)
    }

    fn peer_ip(&self) -> Option<IpAddr> {
        Some(self.peer().ip())
    }

    fn encrypts(&self) -> bool {
        true
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.socket().as_fd()
    }

    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        (&mut self.socket()).read(buf)
    }

    fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        (&mut self.socket()).write_vectored(bufs)
    }

    fn set_nonblocking(&self) -> io::Result<()> {
        self.socket().set_nonblocking(true)
    }

    fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.socket().set_read_timeout(t)
    }

    fn handshake(&mut self, deadline: Instant) -> io::Result<()> {
        Self::handshake(self, deadline)
    }

    fn start_handshake(
        &mut self,
        deadline: Instant,
        notify: Arc<dyn Fn() + Send + Sync>,
    ) -> io::Result<()> {
        Self::start_handshake(self, deadline, notify)
    }

    fn advance_handshake(&mut self, _now: Instant) -> io::Result<bool> {
        Self::advance_handshake(self)
    }

    fn handshake_ends_by_notification(&self) -> bool {
        true
    }

    fn peer_cert_common_name(&self) -> Option<&str> {
        self.peer_common_name()
    }

    fn closes_at(&self) -> Option<SystemTime> {
        self.expires()
    }

    /// The bridge sees the socket pair end and closes the QUIC connection.
    fn shutdown(&self) {
        let _ = self.socket().shutdown(Shutdown::Both);
    }

    /// The bridge finishes the QUIC stream after what was written.
    fn shutdown_write(&self) {
        let _ = self.socket().shutdown(Shutdown::Write);
    }
}

impl ListenerKind for QuicListener {
    /// Its descriptor is non-blocking already.
    fn set_nonblocking(&self) -> io::Result<()> {
        Ok(())
    }

    fn raw_fd(&self) -> RawFd {
        Self::raw_fd(self)
    }

    fn local_endpoint(&self) -> io::Result<String> {
        Ok(format!("quic/{}", self.local_addr()))
    }

    fn accept(&self) -> io::Result<Link> {
        Ok(Link::new(Self::accept(self)?))
    }
}
