//! TLS links (`tls/HOST:PORT`): a TCP socket carrying TLS 1.3, inside which the batches
//! are framed exactly as on TCP (2-byte little-endian length, then the batch).
//!
//! rustls runs the handshake on the blocking socket, within the deadline of the
//! transport's handshake (`TlsLink::handshake`, module `handshake`), then hands its
//! traffic keys to weft's record layer (`record`), which encrypts and decrypts in
//! weft's own buffers: one copy per byte each way (module `traffic`), where rustls's
//! buffered connection makes three on the way in and allocates for every record, and its
//! unbuffered one two each way and an allocation per record (the benchmark
//! `examples/tls_records.rs`). Module `differential` holds weft's records to rustls's:
//! with the same keys, each must read what the other seals and refuse the same records.
//!
//! Then the link serves weft's I/O model unchanged: the I/O thread reading it gets
//! plaintext, and a read returns less than it asked for only once the socket has nothing
//! more (what the edge-triggered reader expects); a write seals plaintext into the link's
//! output (bounded by [`OUTPUT_LIMIT`]) and reports the batch written only once the socket
//! has taken all of it, so that the writer keeps the batch (and where it stopped) until
//! then and nothing is lost or sent twice. The receiving and the sending direction have a
//! lock each, held for one non-blocking step at a time: the thread reading a link never
//! waits for the threads writing it.

pub(crate) mod common_name;
#[cfg(any(test, feature = "tls-internals"))]
mod differential;
pub(crate) mod expiry;
mod handshake;
#[cfg(feature = "tls-internals")]
pub mod internals;
mod kind;
mod record;
mod settings;
mod traffic;

use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use rustls::client::UnbufferedClientConnection;
use rustls::pki_types::ServerName;
use rustls::server::UnbufferedServerConnection;
use rustls::{ClientConfig, ServerConfig};
use thiserror::Error;

use handshake::Setup;
use record::{Opener, Sealer};
use traffic::{Rx, Shared, Tx, SEAL_STEP};

pub(crate) use kind::{TlsDialing, TlsListen};
pub(crate) use settings::is_endpoint_key;
pub use settings::{PemSource, TlsSettings};

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
    /// rustls's connection, until the handshake starts.
    setup: Option<Setup>,
    /// The handshake, while it runs.
    handshaking: Option<handshake::Handshaking>,
    /// The two directions, once it is.
    traffic: Option<Traffic>,
    nonblocking: AtomicBool,
    options: LinkOptions,
    /// When the peer's certificate chain expires, once known (with
    /// `close_link_on_expiration` only).
    expires: Option<SystemTime>,
    /// The common name of the peer's certificate, once the handshake is done (a
    /// listener sees its clients' only with mTLS).
    peer_common_name: Option<String>,
}

/// A link's directions after the handshake, each behind its own lock.
struct Traffic {
    rx: Mutex<Rx>,
    tx: Mutex<Tx>,
    shared: Shared,
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

/// Takes a lock, whether or not a thread panicked holding it.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl TlsLink {
    /// The connecting side over a connected socket: `address` (`HOST:PORT`) names the
    /// server the certificate must be for. No byte is exchanged until
    /// [`TlsLink::handshake`].
    pub(crate) fn client(
        tcp: TcpStream,
        peer: SocketAddr,
        address: &str,
        config: Arc<ClientConfig>,
        options: LinkOptions,
    ) -> Result<Self, TlsError> {
        let host = host_of(address);
        let name = ServerName::try_from(host.to_string())
            .map_err(|_| TlsError::ServerName(host.to_string()))?;
        let session = UnbufferedClientConnection::new(config, name).map_err(TlsError::from)?;
        Ok(Self::new(tcp, peer, Setup::Client(session), options))
    }

    /// The listening side over an accepted socket.
    pub(crate) fn server(
        tcp: TcpStream,
        config: Arc<ServerConfig>,
        options: LinkOptions,
    ) -> Result<Self, TlsError> {
        let session = UnbufferedServerConnection::new(config).map_err(TlsError::from)?;
        let peer = tcp
            .peer_addr()
            .map_err(|e| TlsError::Config(format!("a socket without a peer: {e}")))?;
        Ok(Self::new(tcp, peer, Setup::Server(session), options))
    }

    fn new(tcp: TcpStream, peer: SocketAddr, setup: Setup, options: LinkOptions) -> Self {
        Self {
            tcp,
            peer,
            setup: Some(setup),
            handshaking: None,
            traffic: None,
            nonblocking: AtomicBool::new(false),
            options,
            expires: None,
            peer_common_name: None,
        }
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

    /// Starts the TLS handshake, to be done before `deadline` (and the endpoint's own
    /// `tls_handshake_timeout_ms`, if shorter); [`TlsLink::advance_handshake`] runs it.
    /// The socket is made non-blocking.
    pub(crate) fn start_handshake(&mut self, deadline: Instant) -> io::Result<()> {
        let deadline = match self.options.handshake_timeout {
            Some(t) => deadline.min(Instant::now() + t),
            None => deadline,
        };
        let Some(setup) = self.setup.take() else {
            return Ok(());
        };
        self.tcp.set_nonblocking(true)?;
        self.handshaking = Some(handshake::Handshaking::new(
            setup,
            self.peer.to_string(),
            deadline,
        ));
        Ok(())
    }

    /// Goes on with the handshake started by [`TlsLink::start_handshake`] as far as the
    /// socket lets it: `Ok(true)` once it is over (or when none was started), `Ok(false)`
    /// when it waits for the socket ([`TlsLink::handshake_wants_write`] says which way).
    /// A peer refused (its certificate, or none when one is required) is an error naming
    /// why, after the alert telling the peer is sent.
    pub(crate) fn advance_handshake(&mut self, now: Instant) -> io::Result<bool> {
        let Some(handshaking) = self.handshaking.as_mut() else {
            return Ok(true);
        };
        let Some(done) = handshaking.advance(&self.tcp, now)? else {
            return Ok(false);
        };
        self.handshaking = None;
        self.established(done)?;
        Ok(true)
    }

    /// Whether the handshake in progress waits for the socket to take bytes (else, for
    /// the peer's).
    pub(crate) fn handshake_wants_write(&self) -> bool {
        self.handshaking
            .as_ref()
            .is_some_and(handshake::Handshaking::wants_write)
    }

    /// When the handshake in progress must be done.
    pub(crate) fn handshake_deadline(&self) -> Option<Instant> {
        self.handshaking
            .as_ref()
            .map(handshake::Handshaking::deadline)
    }

    /// Runs the whole TLS handshake, waiting for the socket, to be done before
    /// `deadline` (see [`TlsLink::start_handshake`]).
    pub(crate) fn handshake(&mut self, deadline: Instant) -> io::Result<()> {
        self.start_handshake(deadline)?;
        while !self.advance_handshake(Instant::now())? {
            let until = self.handshake_deadline().unwrap_or(deadline);
            let write = self.handshake_wants_write();
            super::wait_ready(self.tcp.as_fd(), write, until).map_err(|e| {
                if super::is_timeout(&e) {
                    TlsError::Timeout(self.peer.to_string()).into()
                } else {
                    e
                }
            })?;
        }
        if !self.nonblocking.load(Ordering::Acquire) {
            self.tcp.set_nonblocking(false)?;
        }
        Ok(())
    }

    /// Takes what the finished handshake gave: the peer's certificate's name and expiry,
    /// the traffic keys.
    fn established(&mut self, done: handshake::Established) -> io::Result<()> {
        let peer = self.peer.to_string();
        let chain = done.peer_certificates.as_deref().unwrap_or_default();
        self.peer_common_name = chain
            .first()
            .and_then(|cert| common_name::common_name(cert.as_ref()));
        if self.options.close_on_expiration {
            self.expires = expiry::chain_not_after(chain.iter().map(|c| c.as_ref()));
            if self.expires.is_none() {
                tracing::warn!(
                    "TLS link with {peer}: no certificate to watch for expiration \
                     (a listener sees its clients' only with mTLS)"
                );
            }
        }
        let shared = Shared::new(done.kernel);
        let (tx_seq, tx_secrets) = &done.secrets.tx;
        let (rx_seq, rx_secrets) = &done.secrets.rx;
        let sealer = Sealer::new(tx_secrets, *tx_seq, shared.seal_limit())
            .map_err(|e| self.session_failed(e))?;
        let opener = Opener::new(rx_secrets, *rx_seq).map_err(|e| self.session_failed(e))?;
        self.traffic = Some(Traffic {
            rx: Mutex::new(Rx::new(opener, done.ciphertext)),
            tx: Mutex::new(Tx::new(sealer)),
            shared,
        });
        Ok(())
    }

    fn session_failed(&self, e: impl std::fmt::Display) -> io::Error {
        TlsError::Config(format!("TLS with {}: {e}", self.peer)).into()
    }

    fn traffic(&self) -> io::Result<&Traffic> {
        self.traffic
            .as_ref()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "TLS handshake not done"))
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
        let traffic = self.traffic()?;
        let nonblocking = self.nonblocking.load(Ordering::Acquire);
        lock(&traffic.rx).read(&mut &self.tcp, buf, nonblocking, &traffic.shared)
    }

    /// Seals what the link's output takes of `bufs`, advancing `bufs` and counting the
    /// bytes in `written`, and writes it without waiting, `step` bytes of plaintext at a
    /// time at most. `Ok(true)` once every byte is taken and all of it is in the socket;
    /// `Ok(false)` when the socket takes no more for now (call again, with the same
    /// `bufs`, when it is writable).
    pub(crate) fn write_now(
        &self,
        bufs: &mut &mut [IoSlice<'_>],
        written: &mut usize,
        step: usize,
    ) -> io::Result<bool> {
        let traffic = self.traffic()?;
        let mut tx = lock(&traffic.tx);
        loop {
            let blocked = tx.flush(&mut &self.tcp)?;
            if bufs.is_empty() {
                return Ok(!blocked);
            }
            let n = tx.seal(bufs, &traffic.shared, step)?;
            if n > 0 {
                IoSlice::advance_slices(bufs, n);
                *written += n;
            } else if blocked {
                return Ok(false);
            }
        }
    }

    /// Writes what the link's output holds, without waiting; `Ok(true)` once it is all
    /// in the socket.
    pub(crate) fn flush_now(&self) -> io::Result<bool> {
        let traffic = self.traffic()?;
        Ok(!lock(&traffic.tx).flush(&mut &self.tcp)?)
    }

    /// As [`TlsLink::flush_now`], unless a writer holds the output (`Ok(false)`): it
    /// writes what it sealed before it lets go, or leaves the socket full, which raises
    /// the next writable event. The I/O thread never waits for a sender's sealing.
    pub(crate) fn flush_unless_writing(&self) -> io::Result<bool> {
        let traffic = self.traffic()?;
        let mut tx = match traffic.tx.try_lock() {
            Ok(tx) => tx,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Ok(false),
        };
        Ok(!tx.flush(&mut &self.tcp)?)
    }

    /// Closes both directions at once.
    pub(crate) fn shutdown(&self) {
        let _ = self.tcp.shutdown(Shutdown::Both);
    }

    /// Ends the sending side: a close_notify after what is written (if the socket takes
    /// it now), then the TCP end.
    pub(crate) fn shutdown_write(&self) {
        if let Some(traffic) = &self.traffic {
            let mut tx = lock(&traffic.tx);
            if tx.close_notify().is_ok() {
                let _ = tx.flush(&mut &self.tcp);
            }
        }
        let _ = self.tcp.shutdown(Shutdown::Write);
    }
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

    /// Takes what the link's output takes now; `WouldBlock` when it takes nothing.
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let traffic = self.traffic()?;
        let mut tx = lock(&traffic.tx);
        let blocked = tx.flush(&mut &self.tcp)?;
        let n = tx.seal(bufs, &traffic.shared, SEAL_STEP)?;
        if n == 0 && blocked && bufs.iter().any(|b| !b.is_empty()) {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let _ = tx.flush(&mut &self.tcp)?;
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
