//! What a kind of link must do to plug in: [`LinkKind`] for an open link, [`ListenerKind`]
//! for a listening socket and [`Dialing`] for a link being made. Each kind (`tcp`, `unix`,
//! `udp`, `tls`, `quic`, `serial`) implements them in its own module; [`super::Link`],
//! [`super::Listener`] and [`super::Connecting`] hold one behind a box, and the two tables
//! in `link/mod.rs` (`bind`, `dial`) say which module serves which protocol.
//!
//! The framing of batches is not a kind's business: a stream kind moves bytes, and the
//! length prefixes are laid by [`super::Link`] (weft-proto's stream framing); a datagram
//! kind sends and receives whole batches.

use std::fmt::Debug;
use std::io::{self, IoSlice};
use std::net::IpAddr;
use std::os::fd::{BorrowedFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::{Link, STREAM_BATCH_SIZE};

/// An open link of one kind: its socket, how it moves bytes, and its handshake if it has
/// one of its own (TLS, QUIC). Defaults fit a plain stream socket.
pub(crate) trait LinkKind: Debug + Send + Sync {
    /// The protocol, as Zenoh names it (`tcp`, `unixsock-stream`, `udp`, `tls`, `quic`,
    /// `serial`).
    fn protocol_name(&self) -> &'static str;

    /// The far end, for logs: `tcp/peer-address`.
    fn describe(&self) -> String;

    /// This end as a locator, as Zenoh's admin space shows a link's `src`.
    fn local_describe(&self) -> String;

    /// This end's address, for a link over IP.
    fn local_ip(&self) -> Option<IpAddr> {
        None
    }

    /// The peer's address, for a link over IP.
    fn peer_ip(&self) -> Option<IpAddr> {
        None
    }

    /// The descriptor the I/O threads wait on.
    fn fd(&self) -> BorrowedFd<'_>;

    /// Whether batches travel whole, one per datagram or frame (no length prefix).
    fn is_datagram(&self) -> bool {
        false
    }

    /// Largest batch the link carries.
    fn mtu(&self) -> u16 {
        STREAM_BATCH_SIZE
    }

    /// Whether a write costs more than the copy into the socket (TLS seals each record):
    /// a large message is then written by the link's I/O thread, its sealing running
    /// beside the sender's encoding of the next, rather than by the sender itself.
    fn seals_on_write(&self) -> bool {
        false
    }

    /// Whether the link encrypts what it carries, beyond the copy into its socket (TLS
    /// seals as it writes; QUIC's edge runtime encrypts what its bridge takes): an
    /// application's `block` message in fragments is then written by its sender from its
    /// own bytes whatever its size, its copy into the queue and hand-over to the I/O
    /// thread competing for the cores the encryption needs.
    fn encrypts(&self) -> bool {
        self.seals_on_write()
    }

    /// Reads bytes (a stream kind) or one whole batch (a datagram kind; `Ok(0)` once the
    /// link ended).
    fn read(&self, buf: &mut [u8]) -> io::Result<usize>;

    /// Writes what the socket takes of `bufs` (a stream kind).
    fn write_vectored(&self, _bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        Err(unsupported("a datagram link writes whole batches"))
    }

    /// Writes what the socket takes of `bufs` now, advancing them and counting the bytes
    /// in `written`: `Ok(true)` once every byte is written, `Ok(false)` when the socket
    /// takes no more for now. A stream kind with a layer of its own (TLS) overrides it.
    fn write_now(&self, bufs: &mut &mut [IoSlice<'_>], written: &mut usize) -> io::Result<bool> {
        while !bufs.is_empty() {
            match self.write_vectored(bufs) {
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

    /// As [`LinkKind::write_now`], for a sender writing its own message: a kind that
    /// prepares what it writes in steps for the I/O thread's gathered writes (TLS seals
    /// 32 KiB at a time, so that its reader starts while the rest is sealed) prepares
    /// the sender's bytes whole.
    fn write_whole_now(
        &self,
        bufs: &mut &mut [IoSlice<'_>],
        written: &mut usize,
    ) -> io::Result<bool> {
        self.write_now(bufs, written)
    }

    /// Writes what the link's own layer holds beyond what its socket took (TLS records
    /// sealed ahead), without waiting: `Ok(true)` once nothing is held (`Ok(false)` too
    /// while a writer holds the layer: it writes what it sealed, or leaves the socket
    /// full, which raises the next writable event). A write hands the bytes of a
    /// transmit to the link whole when they are sealed, so what is held goes out on the
    /// socket's next writable event, not with the next write.
    fn flush_held(&self) -> io::Result<bool> {
        Ok(true)
    }

    /// Sends one batch made of `parts` laid end to end (a datagram kind).
    fn send_batch(&self, _parts: &[&[u8]]) -> io::Result<()> {
        Err(unsupported("a stream link writes bytes"))
    }

    /// Sends one batch without waiting (a datagram kind): `Ok(false)` when the link takes
    /// none of it now, or has not taken all of it yet (ask again with the same batch
    /// once the descriptor is writable).
    fn send_batch_now(&self, batch: &[u8]) -> io::Result<bool> {
        match self.send_batch(&[batch]) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Receives the next whole batch into `buf` (a datagram kind): its length, or `None`
    /// once the link ended.
    fn receive_batch(&self, _buf: &mut [u8]) -> io::Result<Option<usize>> {
        Err(unsupported("a stream link reads bytes"))
    }

    /// Makes reads and writes return `WouldBlock` instead of waiting.
    fn set_nonblocking(&self) -> io::Result<()>;

    /// Makes a link made without waiting wait in its reads and writes.
    fn set_blocking(&self) -> io::Result<()> {
        Ok(())
    }

    /// Makes reads and writes return `WouldBlock` instead of waiting during a handshake
    /// run without waiting (`true`), or lets them wait again (`false`).
    fn set_handshake_nonblocking(&mut self, nonblocking: bool) -> io::Result<()> {
        if nonblocking {
            self.set_nonblocking()
        } else {
            Ok(())
        }
    }

    /// Sets how long a read may block.
    fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()>;

    /// Runs the link's own handshake, waiting for it, to be done before `deadline`.
    fn handshake(&mut self, _deadline: Instant) -> io::Result<()> {
        Ok(())
    }

    /// Starts the link's own handshake, which [`LinkKind::advance_handshake`] runs
    /// without waiting; `notify` is called where it runs elsewhere (QUIC) and ends.
    fn start_handshake(
        &mut self,
        _deadline: Instant,
        _notify: Arc<dyn Fn() + Send + Sync>,
    ) -> io::Result<()> {
        Ok(())
    }

    /// Goes on with the handshake as far as the socket lets it: `Ok(true)` once over.
    fn advance_handshake(&mut self, _now: Instant) -> io::Result<bool> {
        Ok(true)
    }

    /// Whether the handshake in progress waits for the socket to take bytes.
    fn handshake_wants_write(&self) -> bool {
        false
    }

    /// Whether the handshake in progress ends with its `notify` rather than with the
    /// socket becoming ready (it runs elsewhere).
    fn handshake_ends_by_notification(&self) -> bool {
        false
    }

    /// The common name of the peer's certificate, once the handshake is done.
    fn peer_cert_common_name(&self) -> Option<&str> {
        None
    }

    /// When the peer's certificate chain expires, if the link is to close then.
    fn closes_at(&self) -> Option<SystemTime> {
        None
    }

    /// A second handle on the same socket (one reads, the other writes).
    fn try_clone(&self) -> io::Result<Link> {
        Err(unsupported("this link has one handle"))
    }

    /// Closes both directions.
    fn shutdown(&self);

    /// Closes the sending direction after what was written.
    fn shutdown_write(&self) {}

    /// Reads nothing more once the transport starts closing, where the link shares its
    /// line with the next one.
    fn stop_reading(&self) {}

    /// Whether the link is a stream on a socket of its own (TCP, TLS, a Unix socket).
    fn has_own_stream_socket(&self) -> bool {
        false
    }

    /// Whether its listener may hand this link datagrams or frames besides those its
    /// own socket receives.
    fn fed_by_listener(&self) -> bool {
        false
    }

    /// Whether this link's handshake has no socket of its own to wait on: its listener
    /// reads the line and hands it its frames (until [`LinkKind::set_nonblocking`], when
    /// the I/O threads serve it).
    fn reads_from_listener(&self) -> bool {
        false
    }
}

/// A listening socket of one kind.
pub(crate) trait ListenerKind: Debug + Send + Sync {
    /// Makes `accept` return `WouldBlock` when nothing comes, instead of waiting.
    fn set_nonblocking(&self) -> io::Result<()>;

    /// Whether this listener hands datagrams or frames over to the links it accepted: a
    /// handshake on such a link goes on after the listener is read.
    fn hands_datagrams_over(&self) -> bool {
        false
    }

    /// The descriptor to wait on for the next connection.
    fn raw_fd(&self) -> RawFd;

    /// The endpoint actually bound (with the real port when 0 was asked for).
    fn local_endpoint(&self) -> io::Result<String>;

    /// The next connection; its handshake, if it has one, is left to the link.
    fn accept(&self) -> io::Result<Link>;
}

/// A link of one kind being made, without waiting.
pub(crate) trait Dialing: Debug + Send {
    /// The descriptor to wait on while it is being made, if any.
    fn fd(&self) -> Option<BorrowedFd<'_>> {
        None
    }

    /// Whether it waits for its descriptor to be writable (else readable).
    fn wants_write(&self) -> bool {
        true
    }

    /// When [`Dialing::poll`] has something to do whatever its descriptor says.
    fn due(&self) -> Option<Instant> {
        None
    }

    /// The link once it is made: `Ok(None)` while in progress; an error once it failed.
    fn poll(&mut self) -> io::Result<Option<Link>>;
}

/// A link made at once (Unix, UDP, QUIC), waiting to be handed over.
#[derive(Debug)]
pub(crate) struct Ready(pub(crate) Option<Link>);

impl Dialing for Ready {
    fn poll(&mut self) -> io::Result<Option<Link>> {
        self.0
            .take()
            .map(Some)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "handed over already"))
    }
}

/// An `Unsupported` error saying why.
pub(crate) fn unsupported(why: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, why)
}
