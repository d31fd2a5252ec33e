//! Connecting without waiting: each kind of link makes itself through its [`Dialing`]
//! (a TCP or TLS connection in progress is a non-blocking socket that becomes writable
//! once the kernel has an answer, and a refused address moves on to the next; Unix, UDP
//! and QUIC links are made at once, QUIC's handshake being the link's, later; a serial
//! link is made once the line's exchange is over, its port waited on readable, and
//! [`Connecting::due`] says when to send its `I` again).

use std::io;
use std::os::fd::BorrowedFd;
use std::time::Instant;

use super::kind::{Dialing, Ready};
use super::serial::{SerialConnecting, SerialSettings};
use super::tcp::TcpDialing;
use super::tls::TlsDialing;
use super::{quic, udp, unix, Link, LinkSettings};
use crate::endpoint::{Endpoint, Protocol};

/// A link being made to an endpoint.
#[derive(Debug)]
pub(crate) struct Connecting(Box<dyn Dialing>);

impl Connecting {
    /// Starts making a link to `endpoint` with `settings`. A TLS or QUIC link's
    /// handshake is left to the link ([`Link::start_handshake`]). The table of which
    /// module connects for which protocol.
    pub(crate) fn start(endpoint: &Endpoint, settings: &LinkSettings) -> io::Result<Self> {
        let dialing: Box<dyn Dialing> = match endpoint.protocol {
            Protocol::Tcp => Box::new(TcpDialing::start(endpoint, settings.tcp)?),
            Protocol::Tls => Box::new(TlsDialing::start(endpoint, &settings.tls_for(endpoint)?)?),
            Protocol::UnixStream => unix::dial(endpoint)?,
            Protocol::Quic => Box::new(Ready(Some(Link::new(quic::QuicLink::connect(
                endpoint,
                &settings.tls,
            )?)))),
            Protocol::Udp => udp::dial(endpoint)?,
            Protocol::Serial => Box::new(SerialConnecting::start(SerialSettings::of(endpoint))?),
        };
        Ok(Self(dialing))
    }

    /// The socket to wait on while a connection is in progress (writable, or readable
    /// when [`Connecting::wants_write`] says not).
    pub(crate) fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.0.fd()
    }

    /// Whether the connection in progress waits for its socket to be writable (a TCP
    /// connection) rather than readable (a serial line's answer).
    pub(crate) fn wants_write(&self) -> bool {
        self.0.wants_write()
    }

    /// When [`Connecting::poll`] has something to do whatever its socket says (a serial
    /// line's `I` to send again).
    pub(crate) fn due(&self) -> Option<Instant> {
        self.0.due()
    }

    /// The link once it is made: `Ok(None)` while the connection is in progress (wait
    /// for [`Connecting::fd`] to be writable); an error once every address failed.
    pub(crate) fn poll(&mut self) -> io::Result<Option<Link>> {
        self.0.poll()
    }
}
