//! QUIC links (`quic/HOST:PORT`), with quinn, interoperating with Zenoh's QUIC links.
//!
//! What goes on the wire (see docs/protocol-notes.md, "QUIC links"): TLS 1.3 inside QUIC
//! with the certificates and keys of `transport.link.tls` (the same settings as TLS links,
//! [`TlsSettings`]); ALPN `zenoh` (or `hq-29`, what Zenoh up to 1.8 offers); one
//! bidirectional stream per link, opened by the connecting side, carrying the batches
//! framed exactly as on TCP (2-byte little-endian length, then the batch). No datagrams,
//! no further streams: Zenoh's multi-stream and mixed-reliability variants are not
//! offered, and an endpoint asking for them is refused.
//!
//! quinn is async; weft's links are sockets read by epoll I/O threads. A QUIC link is
//! therefore given to weft as one end of a Unix socket pair, whose other end a task on a
//! small runtime (`runtime.rs`, one thread, started on first use) bridges to the QUIC
//! stream (`bridge.rs`). To the rest of weft a QUIC link behaves as a Unix stream link:
//! reads, non-blocking writes, back-pressure, leases and closing work unchanged. The QUIC
//! handshake runs where a TLS link's does, within the transport handshake's deadline
//! (`QuicLink::handshake`).

mod bridge;
mod kind;
mod runtime;

use std::io::{self, Read};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use quinn::crypto::rustls::{HandshakeData, QuicClientConfig, QuicServerConfig};
use quinn::{Connection, Endpoint, RecvStream, SendStream, TransportConfig, VarInt};
use rustls::pki_types::CertificateDer;
use thiserror::Error;

use super::tls::{self, TlsError, TlsSettings};
use crate::endpoint::Endpoint as WeftEndpoint;

/// The application protocols weft offers and accepts, most preferred first: Zenoh's
/// single-stream protocol, and the name Zenoh up to 1.8 used for the same thing.
const ALPN: [&[u8]; 2] = [b"zenoh", b"hq-29"];

/// Flow-control window of the link's stream, and of the connection (it has one stream):
/// the most the peer may send that weft has not read yet (bytes).
pub(crate) const RECEIVE_WINDOW: u32 = 2 * 1024 * 1024;

/// Most bytes quinn keeps for a link that the peer has not acknowledged yet.
pub(crate) const SEND_WINDOW: u64 = 2 * 1024 * 1024;

/// Kernel buffer size of each end of a link's socket pair (bytes).
const PAIR_BUFFER: usize = 512 * 1024;

/// Connections a QUIC listener keeps waiting for weft to accept them; more are refused.
const ACCEPT_QUEUE: usize = 64;

/// Most bytes quinn buffers for connections not yet accepted, on one listener.
const INCOMING_BUFFER: u64 = 4 * 1024 * 1024;

/// Endpoint `#` keys of QUIC's own (the others are the TLS link's).
const QUIC_KEYS: [&str; 2] = ["initial_mtu", "mtu_discovery_interval_secs"];

/// What went wrong with a QUIC link: a setting, the runtime, or the connection.
#[derive(Debug, Error)]
pub enum QuicError {
    /// The certificates, keys or TLS options.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// An endpoint setting weft cannot use.
    #[error("`{key}`: expected {expected}")]
    Setting {
        /// The setting, as written.
        key: String,
        /// What is accepted.
        expected: &'static str,
    },
    /// The runtime QUIC runs on could not start.
    #[error("the QUIC runtime: {0}")]
    Runtime(String),
    /// The UDP socket of a QUIC endpoint.
    #[error("QUIC socket: {0}")]
    Socket(io::Error),
    /// The connection could not be started (e.g. a host name a certificate cannot name).
    #[error("cannot connect to {peer} over QUIC: {reason}")]
    Connect {
        /// The peer's address.
        peer: SocketAddr,
        /// Why, as quinn says it.
        reason: quinn::ConnectError,
    },
    /// The handshake, or the opening of the link's stream, failed (a certificate
    /// refused, the peer gone...).
    #[error("QUIC with {peer} failed: {reason}")]
    Connection {
        /// The peer's address.
        peer: SocketAddr,
        /// Why, as quinn says it.
        reason: quinn::ConnectionError,
    },
    /// The handshake did not finish in time.
    #[error("the QUIC handshake with {0} did not finish in time")]
    Timeout(SocketAddr),
}

impl From<QuicError> for io::Error {
    fn from(e: QuicError) -> Self {
        let kind = match &e {
            QuicError::Tls(TlsError::Read { .. } | TlsError::Empty { .. }) => {
                io::ErrorKind::NotFound
            }
            QuicError::Tls(_) => io::ErrorKind::InvalidData,
            QuicError::Setting { .. } => io::ErrorKind::InvalidInput,
            QuicError::Socket(s) => s.kind(),
            QuicError::Timeout(_) => io::ErrorKind::TimedOut,
            QuicError::Connection { .. } => io::ErrorKind::ConnectionAborted,
            QuicError::Runtime(_) | QuicError::Connect { .. } => io::ErrorKind::Other,
        };
        Self::new(kind, e)
    }
}

/// Whether an endpoint `#` key is one a QUIC endpoint takes: the TLS link's certificate,
/// key and verification settings, `tls_handshake_timeout_ms`, and QUIC's `initial_mtu`
/// and `mtu_discovery_interval_secs`. (TCP buffer sizes do not apply.)
pub(crate) fn is_endpoint_key(key: &str) -> bool {
    QUIC_KEYS.contains(&key)
        || (tls::is_endpoint_key(key) && !matches!(key, "so_sndbuf" | "so_rcvbuf"))
}

/// Checks an endpoint's `?` metadata: Zenoh's `multistream` and `mixed_rel` may only ask
/// for what weft does (one stream, every message reliable). On failure, the key, its
/// value and what it accepts.
pub(crate) fn check_metadata(
    metadata: &[(String, String)],
) -> Result<(), (String, String, &'static str)> {
    for (key, value) in metadata {
        let expected = match key.as_str() {
            "multistream" if !matches!(value.as_str(), "0" | "auto") => {
                "0 or auto (weft's QUIC links have one stream)"
            }
            "mixed_rel" if value != "0" => {
                "0 (weft's QUIC links carry every message on their one reliable stream)"
            }
            _ => continue,
        };
        return Err((key.clone(), value.clone(), expected));
    }
    Ok(())
}

/// The settings of one QUIC endpoint: the node's TLS settings overridden by the
/// endpoint's, and QUIC's own.
#[derive(Debug, Clone)]
struct QuicOptions {
    tls: TlsSettings,
    initial_mtu: Option<u16>,
    mtu_discovery_interval: Option<Duration>,
}

impl QuicOptions {
    fn for_endpoint(endpoint: &WeftEndpoint, tls: &TlsSettings) -> Result<Self, QuicError> {
        let (own, tls_keys): (Vec<_>, Vec<_>) = endpoint
            .config
            .iter()
            .cloned()
            .partition(|(k, _)| QUIC_KEYS.contains(&k.as_str()));
        let mut options = Self {
            tls: tls
                .for_endpoint(&tls_keys)
                .map_err(|bad| QuicError::Setting {
                    key: bad.key,
                    expected: bad.expected,
                })?,
            initial_mtu: None,
            mtu_discovery_interval: None,
        };
        for (key, value) in own {
            if key == "initial_mtu" {
                let mtu = value.parse::<u16>().ok().filter(|m| *m >= 1200);
                options.initial_mtu = Some(mtu.ok_or(QuicError::Setting {
                    key,
                    expected: "a UDP payload size in bytes, 1200..=65535",
                })?);
            } else {
                let secs = value.parse::<u64>().ok().filter(|s| *s > 0);
                options.mtu_discovery_interval =
                    Some(Duration::from_secs(secs.ok_or(QuicError::Setting {
                        key,
                        expected: "a positive number of seconds",
                    })?));
            }
        }
        Ok(options)
    }

    /// The transport parameters of a link: one bidirectional stream, opened by the
    /// connecting side; no datagrams; bounded windows.
    fn transport(&self, listening: bool) -> TransportConfig {
        let mut t = TransportConfig::default();
        t.max_concurrent_bidi_streams(VarInt::from_u32(u32::from(listening)))
            .max_concurrent_uni_streams(VarInt::from_u32(0))
            .stream_receive_window(VarInt::from_u32(RECEIVE_WINDOW))
            .receive_window(VarInt::from_u32(RECEIVE_WINDOW))
            .send_window(SEND_WINDOW)
            .datagram_receive_buffer_size(None);
        if let Some(mtu) = self.initial_mtu {
            t.initial_mtu(mtu);
        }
        if let Some(interval) = self.mtu_discovery_interval {
            let mut discovery = quinn::MtuDiscoveryConfig::default();
            discovery.interval(interval);
            t.mtu_discovery_config(Some(discovery));
        }
        t
    }

    fn link_options(&self) -> tls::LinkOptions {
        tls::LinkOptions {
            close_on_expiration: self.tls.close_link_on_expiration,
            handshake_timeout: self.tls.handshake_timeout,
        }
    }

    fn client_config(&self) -> Result<quinn::ClientConfig, QuicError> {
        let mut tls = (*self.tls.client_config()?).clone();
        tls.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
        let crypto =
            QuicClientConfig::try_from(tls).map_err(|e| TlsError::Config(format!("QUIC: {e}")))?;
        let mut config = quinn::ClientConfig::new(Arc::new(crypto));
        config.transport_config(Arc::new(self.transport(false)));
        Ok(config)
    }

    fn server_config(&self) -> Result<quinn::ServerConfig, QuicError> {
        let mut tls = (*self.tls.server_config()?).clone();
        tls.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
        let crypto =
            QuicServerConfig::try_from(tls).map_err(|e| TlsError::Config(format!("QUIC: {e}")))?;
        let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        config
            .transport_config(Arc::new(self.transport(true)))
            .max_incoming(ACCEPT_QUEUE)
            .incoming_buffer_size_total(INCOMING_BUFFER);
        Ok(config)
    }
}

/// The first address `address` resolves to.
fn resolve(address: &str) -> io::Result<SocketAddr> {
    address
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))
}

/// The endpoints (UDP sockets) connections are made from, one per address family,
/// made on first use and shared by every outgoing QUIC link of the process.
static CLIENTS: Mutex<[Option<Endpoint>; 2]> = Mutex::new([None, None]);

fn client_endpoint(ipv4: bool) -> Result<Endpoint, QuicError> {
    let mut clients = CLIENTS.lock().unwrap_or_else(|e| e.into_inner());
    let slot = &mut clients[usize::from(!ipv4)];
    if let Some(e) = slot {
        return Ok(e.clone());
    }
    let local: SocketAddr = if ipv4 {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let endpoint =
        runtime::run(async move { Endpoint::client(local) })?.map_err(QuicError::Socket)?;
    *slot = Some(endpoint.clone());
    Ok(endpoint)
}

/// How a link's QUIC connection starts: being made, or offered to a listener.
enum Start {
    Connecting(quinn::Connecting),
    Incoming(Box<quinn::Incoming>),
}

/// A link until its handshake: how it starts, and the socket-pair end its bridge will use.
struct Pending {
    start: Start,
    far: UnixStream,
}

/// What the handshake learnt.
struct Established {
    local_ip: Option<IpAddr>,
    expires: Option<SystemTime>,
    peer_common_name: Option<String>,
}

/// A QUIC link: weft's end of the socket pair bridged to the link's QUIC stream.
pub(crate) struct QuicLink {
    local: UnixStream,
    peer: SocketAddr,
    local_ip: Option<IpAddr>,
    pending: Option<Pending>,
    /// The handshake's outcome, while it runs.
    handshaking: Option<HandshakeOutcome>,
    options: tls::LinkOptions,
    expires: Option<SystemTime>,
    /// The common name of the peer's certificate, once the handshake is done.
    peer_common_name: Option<String>,
}

impl std::fmt::Debug for QuicLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuicLink")
            .field("peer", &self.peer)
            .field("handshake_done", &self.pending.is_none())
            .field("expires", &self.expires)
            .finish_non_exhaustive()
    }
}

/// A socket pair for a link, with its buffer sizes: (weft's end, the bridge's end).
fn socket_pair() -> io::Result<(UnixStream, UnixStream)> {
    let (local, far) = UnixStream::pair()?;
    for s in [&local, &far] {
        let sock = socket2::SockRef::from(s);
        sock.set_send_buffer_size(PAIR_BUFFER)?;
        sock.set_recv_buffer_size(PAIR_BUFFER)?;
    }
    far.set_nonblocking(true)?;
    Ok((local, far))
}

impl QuicLink {
    /// Starts a connection to `endpoint` with `tls` (the node's TLS settings, which the
    /// endpoint's `#` configuration overrides). The handshake finishes in
    /// [`QuicLink::handshake`].
    pub(crate) fn connect(endpoint: &WeftEndpoint, tls: &TlsSettings) -> io::Result<Self> {
        let options = QuicOptions::for_endpoint(endpoint, tls)?;
        let config = options.client_config()?;
        let peer = resolve(&endpoint.address)?;
        let host = tls::host_of(&endpoint.address).to_string();
        let (local, far) = socket_pair()?;
        let client = client_endpoint(peer.is_ipv4())?;
        let connecting = runtime::run(async move { client.connect_with(config, peer, &host) })?
            .map_err(|reason| QuicError::Connect { peer, reason })?;
        Ok(Self {
            local,
            peer,
            local_ip: None,
            pending: Some(Pending {
                start: Start::Connecting(connecting),
                far,
            }),
            handshaking: None,
            options: options.link_options(),
            expires: None,
            peer_common_name: None,
        })
    }

    /// A connection offered to a listener bound to `bound`; its handshake runs in
    /// [`QuicLink::start_handshake`].
    fn accepted(
        incoming: quinn::Incoming,
        bound: SocketAddr,
        options: tls::LinkOptions,
    ) -> io::Result<Self> {
        let (local, far) = socket_pair()?;
        let bound_ip = Some(bound.ip()).filter(|ip| !ip.is_unspecified());
        Ok(Self {
            local,
            peer: incoming.remote_address(),
            local_ip: incoming.local_ip().or(bound_ip),
            pending: Some(Pending {
                start: Start::Incoming(Box::new(incoming)),
                far,
            }),
            handshaking: None,
            options,
            expires: None,
            peer_common_name: None,
        })
    }

    /// weft's end of the socket pair.
    pub(crate) const fn socket(&self) -> &UnixStream {
        &self.local
    }

    /// The peer's address.
    pub(crate) const fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// This end's address, once known.
    pub(crate) const fn local_ip(&self) -> Option<IpAddr> {
        self.local_ip
    }

    /// When the peer's certificate chain expires, if the link is to close then.
    pub(crate) const fn expires(&self) -> Option<SystemTime> {
        self.expires
    }

    /// The common name of the peer's certificate, if it sent one that has one (what
    /// access control's `cert_common_names` subjects match, as for TLS links).
    pub(crate) fn peer_common_name(&self) -> Option<&str> {
        self.peer_common_name.as_deref()
    }

    /// Starts the link's handshake (QUIC's, then opening or accepting the stream) on the
    /// QUIC runtime, to be done before `deadline` (and the endpoint's own
    /// `tls_handshake_timeout_ms`, if shorter); `notify` is called when it ends, and
    /// [`QuicLink::advance_handshake`] then says how. Nothing to do when it ran already.
    pub(crate) fn start_handshake(
        &mut self,
        deadline: Instant,
        notify: Arc<dyn Fn() + Send + Sync>,
    ) -> io::Result<()> {
        let Some(pending) = self.pending.take() else {
            return Ok(());
        };
        let deadline = match self.options.handshake_timeout {
            Some(t) => deadline.min(Instant::now() + t),
            None => deadline,
        };
        let peer = self.peer;
        let watch_expiry = self.options.close_on_expiration;
        let outcome: HandshakeOutcome = Arc::new(Mutex::new(None));
        let slot = outcome.clone();
        runtime::spawn(async move {
            let done = handshake(pending, peer, deadline, watch_expiry).await;
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(done);
            notify();
        })?;
        self.handshaking = Some(outcome);
        Ok(())
    }

    /// Whether the handshake started by [`QuicLink::start_handshake`] is over: `Ok(true)`
    /// once it succeeded (or when none was started), `Ok(false)` while it runs, an error
    /// naming quinn's reason when it failed (a refused certificate, a timeout).
    pub(crate) fn advance_handshake(&mut self) -> io::Result<bool> {
        let Some(outcome) = &self.handshaking else {
            return Ok(true);
        };
        let Some(done) = outcome.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return Ok(false);
        };
        self.handshaking = None;
        let peer = self.peer;
        match done {
            Ok(e) => {
                self.local_ip = e.local_ip.or(self.local_ip);
                self.expires = e.expires;
                self.peer_common_name = e.peer_common_name;
                if self.options.close_on_expiration && self.expires.is_none() {
                    tracing::warn!(
                        "QUIC link with {peer}: no certificate to watch for expiration \
                         (a listener sees its clients' only with mTLS)"
                    );
                }
                Ok(true)
            }
            Err(e) => {
                tracing::info!("QUIC handshake with {peer} failed: {e}");
                Err(e.into())
            }
        }
    }

    /// Runs the link's handshake and waits for its end (see
    /// [`QuicLink::start_handshake`]).
    pub(crate) fn handshake(&mut self, deadline: Instant) -> io::Result<()> {
        let me = std::thread::current();
        self.start_handshake(deadline, Arc::new(move || me.unpark()))?;
        // The handshake itself gives up at its deadline, and says so.
        while !self.advance_handshake()? {
            std::thread::park();
        }
        Ok(())
    }
}

/// Where a handshake running on the QUIC runtime leaves its outcome.
type HandshakeOutcome = Arc<Mutex<Option<Result<Established, QuicError>>>>;

/// The handshake of a link that starts as `pending`, before `deadline`: QUIC's, then the
/// stream; the link's bridge is started once it is done.
async fn handshake(
    pending: Pending,
    peer: SocketAddr,
    deadline: Instant,
    watch_expiry: bool,
) -> Result<Established, QuicError> {
    let Pending { start, far } = pending;
    let deadline = tokio::time::Instant::from_std(deadline);
    let (conn, send, recv) = tokio::time::timeout_at(deadline, open(start, peer))
        .await
        .map_err(|_| QuicError::Timeout(peer))??;
    let alpn = negotiated_alpn(&conn);
    tracing::debug!(
        "QUIC link with {peer}: ALPN {}",
        alpn.as_deref()
            .map_or("(none)".into(), String::from_utf8_lossy)
    );
    let established = Established {
        local_ip: conn.local_ip(),
        expires: watch_expiry.then(|| peer_expiry(&conn)).flatten(),
        peer_common_name: peer_common_name(&conn),
    };
    tokio::spawn(bridge::run(conn, send, recv, far, peer));
    Ok(established)
}

impl Drop for QuicLink {
    fn drop(&mut self) {
        // A connection that never finished its handshake is dropped on the runtime,
        // where quinn expects to run.
        if let Some(pending) = self.pending.take() {
            let _ = runtime::spawn(async move { drop(pending) });
        }
    }
}

/// Completes the connection and opens or accepts its stream.
async fn open(
    start: Start,
    peer: SocketAddr,
) -> Result<(Connection, SendStream, RecvStream), QuicError> {
    let failed = |reason| QuicError::Connection { peer, reason };
    match start {
        Start::Connecting(connecting) => {
            let conn = connecting.await.map_err(failed)?;
            // Announced to the peer with the first bytes weft writes.
            let (send, recv) = conn.open_bi().await.map_err(failed)?;
            Ok((conn, send, recv))
        }
        Start::Incoming(incoming) => {
            let conn = (*incoming)
                .accept()
                .map_err(failed)?
                .await
                .map_err(failed)?;
            // Known once the peer writes on it (its InitSyn).
            let (send, recv) = conn.accept_bi().await.map_err(failed)?;
            Ok((conn, send, recv))
        }
    }
}

fn negotiated_alpn(conn: &Connection) -> Option<Vec<u8>> {
    conn.handshake_data()?
        .downcast::<HandshakeData>()
        .ok()?
        .protocol
}

/// The common name of the peer's first certificate.
fn peer_common_name(conn: &Connection) -> Option<String> {
    let chain = conn
        .peer_identity()?
        .downcast::<Vec<CertificateDer<'static>>>()
        .ok()?;
    tls::common_name::common_name(chain.first()?.as_ref())
}

/// When the peer's certificate chain expires.
fn peer_expiry(conn: &Connection) -> Option<SystemTime> {
    let chain = conn
        .peer_identity()?
        .downcast::<Vec<CertificateDer<'static>>>()
        .ok()?;
    tls::expiry::chain_not_after(chain.iter().map(|c| c.as_ref()))
}

/// A QUIC listener: quinn's endpoint on its UDP socket, and the connections it was
/// offered, waiting for weft's listener thread (which waits for its descriptor
/// to be readable).
#[derive(Debug)]
pub(crate) struct QuicListener {
    endpoint: Endpoint,
    local: SocketAddr,
    offered: Mutex<Receiver<quinn::Incoming>>,
    /// Readable when a connection was offered: one byte per connection.
    bell: UnixStream,
    task: tokio::task::JoinHandle<()>,
    options: tls::LinkOptions,
}

impl QuicListener {
    /// Listens on `endpoint` with `tls` (overridden by the endpoint's `#` configuration):
    /// the certificate and key are loaded now, and a missing one refuses the endpoint.
    pub(crate) fn bind(endpoint: &WeftEndpoint, tls: &TlsSettings) -> io::Result<Self> {
        let options = QuicOptions::for_endpoint(endpoint, tls)?;
        let config = options.server_config()?;
        let addr = resolve(&endpoint.address)?;
        let socket = std::net::UdpSocket::bind(addr)?;
        let quic = runtime::run(async move {
            Endpoint::new(
                quinn::EndpointConfig::default(),
                Some(config),
                socket,
                Arc::new(quinn::TokioRuntime),
            )
        })?
        .map_err(QuicError::Socket)?;
        let local = quic.local_addr()?;
        let (bell, ringer) = UnixStream::pair()?;
        bell.set_nonblocking(true)?;
        ringer.set_nonblocking(true)?;
        let (offer, offered) = sync_channel(ACCEPT_QUEUE);
        let task = runtime::spawn(offer_connections(quic.clone(), offer, ringer, local))?;
        Ok(Self {
            endpoint: quic,
            local,
            offered: Mutex::new(offered),
            bell,
            task,
            options: options.link_options(),
        })
    }

    /// The descriptor that is readable when a connection is offered.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.bell.as_raw_fd()
    }

    /// The address bound.
    pub(crate) const fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The next connection offered, as a link whose handshake is still to run;
    /// `WouldBlock` when none is waiting.
    pub(crate) fn accept(&self) -> io::Result<QuicLink> {
        let mut rung = [0u8; 64];
        while matches!((&self.bell).read(&mut rung), Ok(n) if n > 0) {}
        let offered = self.offered.lock().unwrap_or_else(|e| e.into_inner());
        match offered.try_recv() {
            Ok(incoming) => QuicLink::accepted(incoming, self.local, self.options),
            Err(TryRecvError::Empty) => Err(io::ErrorKind::WouldBlock.into()),
            Err(TryRecvError::Disconnected) => Err(io::Error::other(format!(
                "the QUIC listener on {} stopped",
                self.local
            ))),
        }
    }
}

impl Drop for QuicListener {
    fn drop(&mut self) {
        // No new connection; the links already accepted keep the endpoint's socket.
        self.task.abort();
        self.endpoint.set_server_config(None);
    }
}

/// Hands the connections quinn is offered to weft's listener thread, ringing its bell;
/// refuses them while [`ACCEPT_QUEUE`] wait already.
async fn offer_connections(
    endpoint: Endpoint,
    offer: SyncSender<quinn::Incoming>,
    ringer: UnixStream,
    local: SocketAddr,
) {
    let mut refused = 0u64;
    while let Some(incoming) = endpoint.accept().await {
        match offer.try_send(incoming) {
            Ok(()) => {
                let _ = io::Write::write(&mut &ringer, &[1]);
            }
            Err(TrySendError::Full(incoming)) => {
                refused += 1;
                if refused.is_power_of_two() {
                    tracing::warn!(
                        "QUIC listener on {local}: {refused} connections refused \
                         ({ACCEPT_QUEUE} already waiting to be accepted)"
                    );
                }
                incoming.refuse();
            }
            Err(TrySendError::Disconnected(_)) => return,
        }
    }
}

#[cfg(test)]
mod tests;
