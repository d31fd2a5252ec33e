//! TLS links (`tls/HOST:PORT`): a TCP socket carrying a rustls session, inside which the
//! batches are framed exactly as on TCP (2-byte little-endian length, then the batch).
//!
//! The TLS handshake runs first, on the blocking socket, within the deadline of the
//! transport's handshake (`TlsLink::handshake`). Then the link serves weft's I/O model
//! unchanged: the I/O thread reading it gets plaintext, and a read returns less than it
//! asked for only once the socket has nothing more (what the edge-triggered reader
//! expects); a write hands plaintext to rustls, which encrypts it into its own buffer
//! (bounded by [`OUTPUT_LIMIT`]), and reports the batch written only once the socket has
//! taken all of its ciphertext, so that the writer keeps the batch (and where it
//! stopped) until then and nothing is lost or sent twice. The socket is read up to
//! 64 KiB at a time into the link's inbox (`inbox`), from which rustls takes its
//! records (rustls alone would read a few KiB per system call). Reader and writers share the
//! rustls session under a lock held for one non-blocking step at a time, never while
//! waiting.

pub(crate) mod common_name;
pub(crate) mod expiry;
mod inbox;
mod settings;

use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, Connection, ServerConfig, ServerConnection};
use thiserror::Error;

use inbox::{Filled, Inbox};

pub(crate) use settings::is_endpoint_key;
pub use settings::{BadSetting, PemSource, TlsSettings};

/// Most ciphertext rustls keeps for a link that the socket has not taken yet (bytes):
/// a whole batch of the largest size with its records' overhead, so that a batch leaves
/// in one write.
pub const OUTPUT_LIMIT: usize = 128 * 1024;

/// What went wrong with TLS: a configuration that cannot be used, or a handshake or
/// session the peer and weft could not agree on.
#[derive(Debug, Error)]
pub enum TlsError {
    /// A certificate or key file that cannot be read.
    #[error("cannot read {what} {path}: {reason}")]
    Read {
        /// The setting (`listen_certificate`...).
        what: &'static str,
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// An empty certificate or key file.
    #[error("{what} {path} is empty")]
    Empty {
        /// The setting.
        what: &'static str,
        /// The file.
        path: String,
    },
    /// A document that is not what its setting needs.
    #[error("{0}: {1}")]
    BadDocument(&'static str, String),
    /// A document the configuration needs and does not have.
    #[error("{0}")]
    Missing(&'static str),
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Config(String),
    /// The host to connect to is not a DNS name or an IP address.
    #[error("`{0}` is not a host name or an IP address a certificate can name")]
    ServerName(String),
    /// The handshake or the session failed (a certificate refused, an alert...).
    #[error("TLS with {peer} failed: {reason}")]
    Session {
        /// The peer's address.
        peer: String,
        /// Why, as rustls says it.
        reason: rustls::Error,
    },
    /// The handshake did not finish in time.
    #[error("the TLS handshake with {0} did not finish in time")]
    Timeout(String),
    /// The peer closed during the handshake.
    #[error("{0} closed the connection during the TLS handshake")]
    Closed(String),
}

impl From<rustls::Error> for TlsError {
    fn from(e: rustls::Error) -> Self {
        Self::Config(e.to_string())
    }
}

impl From<TlsError> for io::Error {
    fn from(e: TlsError) -> Self {
        let kind = match &e {
            TlsError::Read { .. } | TlsError::Empty { .. } => io::ErrorKind::NotFound,
            TlsError::Timeout(_) => io::ErrorKind::TimedOut,
            TlsError::Closed(_) => io::ErrorKind::UnexpectedEof,
            _ => io::ErrorKind::InvalidData,
        };
        Self::new(kind, e)
    }
}

/// What a TLS link does beyond carrying bytes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LinkOptions {
    /// Close the link when the peer's certificate chain expires.
    pub(crate) close_on_expiration: bool,
    /// The TLS handshake's own limit.
    pub(crate) handshake_timeout: Option<Duration>,
}

/// A TLS link.
pub struct TlsLink {
    tcp: TcpStream,
    peer: SocketAddr,
    session: Mutex<Connection>,
    /// Ciphertext read and not yet taken by rustls (locked before `session`, by the one
    /// thread reading the link).
    inbox: Mutex<Inbox>,
    nonblocking: AtomicBool,
    options: LinkOptions,
    /// When the peer's certificate chain expires, once known (with
    /// `close_link_on_expiration` only).
    expires: Option<SystemTime>,
    /// The common name of the peer's certificate, once the handshake is done (a
    /// listener sees its clients' only with mTLS).
    peer_common_name: Option<String>,
}

impl std::fmt::Debug for TlsLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsLink")
            .field("peer", &self.peer)
            .field("expires", &self.expires)
            .field("peer_common_name", &self.peer_common_name)
            .finish_non_exhaustive()
    }
}

/// The host part of `HOST:PORT` (without the brackets of an IPv6 address).
pub(crate) fn host_of(address: &str) -> &str {
    let host = address.rsplit_once(':').map_or(address, |(h, _)| h);
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

impl TlsLink {
    /// The connecting side over a connected socket: `address` (`HOST:PORT`) names the
    /// server the certificate must be for. No byte is exchanged until
    /// [`TlsLink::handshake`].
    pub(crate) fn client(
        tcp: TcpStream,
        address: &str,
        config: Arc<ClientConfig>,
        options: LinkOptions,
    ) -> Result<Self, TlsError> {
        let host = host_of(address);
        let name = ServerName::try_from(host.to_string())
            .map_err(|_| TlsError::ServerName(host.to_string()))?;
        let session = ClientConnection::new(config, name).map_err(TlsError::from)?;
        Self::new(tcp, session.into(), options)
    }

    /// The listening side over an accepted socket.
    pub(crate) fn server(
        tcp: TcpStream,
        config: Arc<ServerConfig>,
        options: LinkOptions,
    ) -> Result<Self, TlsError> {
        let session = ServerConnection::new(config).map_err(TlsError::from)?;
        Self::new(tcp, session.into(), options)
    }

    fn new(
        tcp: TcpStream,
        mut session: Connection,
        options: LinkOptions,
    ) -> Result<Self, TlsError> {
        session.set_buffer_limit(Some(OUTPUT_LIMIT));
        let peer = tcp
            .peer_addr()
            .map_err(|e| TlsError::Config(format!("a socket without a peer: {e}")))?;
        Ok(Self {
            tcp,
            peer,
            session: Mutex::new(session),
            inbox: Mutex::new(Inbox::default()),
            nonblocking: AtomicBool::new(false),
            options,
            expires: None,
            peer_common_name: None,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The TCP socket.
    pub(crate) const fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    /// The peer's address.
    pub(crate) const fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// When the peer's certificate chain expires, if the link is to close then.
    pub(crate) const fn expires(&self) -> Option<SystemTime> {
        self.expires
    }

    /// The common name of the peer's certificate (its end-entity certificate, the
    /// first of the chain it presented), once the handshake is done; `None` when it
    /// presented none or its subject has no readable common name.
    pub(crate) fn peer_common_name(&self) -> Option<&str> {
        self.peer_common_name.as_deref()
    }

    fn session_error(&self, reason: rustls::Error) -> io::Error {
        TlsError::Session {
            peer: self.peer.to_string(),
            reason,
        }
        .into()
    }

    /// Runs the TLS handshake on the blocking socket, to be done before `deadline` (and
    /// the endpoint's own `tls_handshake_timeout_ms`, if shorter). A peer refused (its
    /// certificate, or none when one is required) is an error naming why, after the
    /// alert telling the peer is sent.
    pub(crate) fn handshake(&mut self, deadline: Instant) -> io::Result<()> {
        let deadline = match self.options.handshake_timeout {
            Some(t) => deadline.min(Instant::now() + t),
            None => deadline,
        };
        let peer = self.peer.to_string();
        let session = self.session.get_mut().unwrap_or_else(|e| e.into_inner());
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(TlsError::Timeout(peer).into());
            }
            self.tcp.set_write_timeout(Some(left))?;
            while session.wants_write() {
                match session.write_tls(&mut &self.tcp) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if crate::link::is_timeout(&e) => {
                        return Err(TlsError::Timeout(peer).into())
                    }
                    Err(e) => return Err(e),
                }
            }
            if !session.is_handshaking() {
                break;
            }
            self.tcp.set_read_timeout(Some(left))?;
            match session.read_tls(&mut &self.tcp) {
                Ok(0) => return Err(TlsError::Closed(peer).into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if crate::link::is_timeout(&e) => return Err(TlsError::Timeout(peer).into()),
                Err(e) => return Err(e),
            }
            if let Err(reason) = session.process_new_packets() {
                // The alert saying why goes out, if the socket takes it.
                let _ = session.write_tls(&mut &self.tcp);
                return Err(TlsError::Session { peer, reason }.into());
            }
        }
        self.tcp.set_write_timeout(None)?;
        self.peer_common_name = session
            .peer_certificates()
            .and_then(|chain| chain.first())
            .and_then(|cert| common_name::common_name(cert.as_ref()));
        if self.options.close_on_expiration {
            self.expires = session
                .peer_certificates()
                .and_then(|chain| expiry::chain_not_after(chain.iter().map(|c| c.as_ref())));
            if self.expires.is_none() {
                tracing::warn!(
                    "TLS link with {peer}: no certificate to watch for expiration \
                     (a listener sees its clients' only with mTLS)"
                );
            }
        }
        Ok(())
    }

    /// Makes reads and writes return `WouldBlock` instead of waiting.
    pub(crate) fn set_nonblocking(&self) -> io::Result<()> {
        self.tcp.set_nonblocking(true)?;
        self.nonblocking.store(true, Ordering::Release);
        Ok(())
    }

    /// Reads plaintext. On a non-blocking link, fills `buf` unless the socket has
    /// nothing more: a short read means the socket is drained (an edge-triggered reader
    /// waits for the next event). A blocking link returns as soon as it has something.
    /// `Ok(0)` at the end of the stream (the peer's close_notify, or its TCP end between
    /// records, which Zenoh's links send without a close_notify).
    pub(crate) fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let nonblocking = self.nonblocking.load(Ordering::Acquire);
        let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
        let mut session = self.lock();
        let mut n = 0;
        loop {
            match session.reader().read(&mut buf[n..]) {
                Ok(0) => return Ok(n),
                Ok(k) => {
                    n += k;
                    if n == buf.len() {
                        return Ok(n);
                    }
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(n),
                Err(e) => return Err(e),
            }
            if n > 0 && !nonblocking {
                return Ok(n);
            }
            match inbox.fill(&mut &self.tcp) {
                Ok(Filled::Bytes(_)) => {
                    inbox.feed(|ciphertext| session.read_tls(ciphertext))?;
                }
                // The end of the stream: what it completed is read on the next turn,
                // then the reader says so.
                Ok(Filled::End) => {
                    session.read_tls(&mut io::empty())?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if n > 0 && is_would_block(&e) => return Ok(n),
                Err(e) => return Err(e),
            }
            if let Err(reason) = session.process_new_packets() {
                let _ = session.write_tls(&mut &self.tcp);
                return Err(self.session_error(reason));
            }
            // What the session answers by itself (a key update) leaves now if it can;
            // else with the next write.
            if nonblocking && session.wants_write() {
                let _ = flush(&mut session, &self.tcp);
            }
        }
    }

    /// Hands what the socket can take of `bufs` to rustls, advancing `bufs` and counting
    /// the bytes in `written`, and writes the ciphertext without waiting. `Ok(true)` once
    /// every byte is taken and all of its ciphertext is in the socket; `Ok(false)` when
    /// the socket takes no more for now (call again, with the same `bufs`, when it is
    /// writable).
    pub(crate) fn write_now(
        &self,
        bufs: &mut &mut [IoSlice<'_>],
        written: &mut usize,
    ) -> io::Result<bool> {
        let mut session = self.lock();
        loop {
            let blocked = flush(&mut session, &self.tcp)?;
            if bufs.is_empty() {
                return Ok(!blocked);
            }
            let n = session.writer().write_vectored(bufs)?;
            if n > 0 {
                IoSlice::advance_slices(bufs, n);
                *written += n;
            } else if blocked {
                return Ok(false);
            }
        }
    }

    /// Writes the ciphertext rustls holds, without waiting; `Ok(true)` once it is all
    /// in the socket.
    pub(crate) fn flush_now(&self) -> io::Result<bool> {
        Ok(!flush(&mut self.lock(), &self.tcp)?)
    }

    /// Closes both directions at once.
    pub(crate) fn shutdown(&self) {
        let _ = self.tcp.shutdown(Shutdown::Both);
    }

    /// Ends the sending side: a close_notify after what is written (if the socket takes
    /// it now), then the TCP end.
    pub(crate) fn shutdown_write(&self) {
        {
            let mut session = self.lock();
            session.send_close_notify();
            let _ = flush(&mut session, &self.tcp);
        }
        let _ = self.tcp.shutdown(Shutdown::Write);
    }
}

/// Whether a socket error only says "not now".
fn is_would_block(e: &io::Error) -> bool {
    crate::link::is_timeout(e)
}

/// Writes what ciphertext the session holds, as far as the socket takes it; `Ok(true)`
/// when some is left because the socket is full.
fn flush(session: &mut Connection, tcp: &TcpStream) -> io::Result<bool> {
    while session.wants_write() {
        match session.write_tls(&mut &*tcp) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

impl Read for &TlsLink {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        TlsLink::read(self, buf)
    }
}

impl Write for &TlsLink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[IoSlice::new(buf)])
    }

    /// Takes what rustls takes now; `WouldBlock` when it takes nothing.
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let mut session = self.lock();
        let blocked = flush(&mut session, &self.tcp)?;
        let n = session.writer().write_vectored(bufs)?;
        if n == 0 && blocked && bufs.iter().any(|b| !b.is_empty()) {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let _ = flush(&mut session, &self.tcp)?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.flush_now()? {
            Ok(())
        } else {
            Err(io::ErrorKind::WouldBlock.into())
        }
    }
}

#[cfg(test)]
mod tests;
