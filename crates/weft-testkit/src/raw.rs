//! A raw Zenoh client on a TCP socket, built from weft's sans-I/O handshake, transmitter
//! and receiver: for tests that must send exactly the bytes another implementation sends
//! (a Zenoh-Pico publisher's Interest) or misbehave on purpose, and see every message the
//! router answers.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use weft_proto::batch::framing::PrefixWidth;
use weft_proto::core::{Priority, Reliability, WhatAmI, WireExpr, ZenohId};
use weft_proto::network::{
    Declaration, Declare, DeclareQueryable, DeclareSubscriber, DeclareToken, Interest,
    InterestMode, InterestOptions, NetworkMessage, QueryableInfo,
};
use weft_proto::transport::CloseReason;
use weft_transport::establish::{
    close_batch, EstablishError, Initiator, LocalParams, Negotiated, Progress,
};
use weft_transport::rx::Receiver;
use weft_transport::tx::{Pushed, Transmitter, KEEP_ALIVE_BATCH};

/// An established client session on a raw socket.
pub struct RawClient {
    stream: TcpStream,
    tx: Transmitter,
    rx: Receiver,
    /// What the handshake agreed.
    pub session: Negotiated,
}

/// Why a raw session could not be opened.
#[derive(Debug)]
pub enum RawError {
    /// The socket failed (refused, reset, timed out).
    Io(io::Error),
    /// The router answered the handshake with something weft's initiator refuses.
    Handshake(String),
    /// The router closed the link during the handshake, with this reason.
    Closed(CloseReason),
}

impl From<io::Error> for RawError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

/// A number that differs from one call to the next (ZenohIDs of raw clients).
fn getrandom_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    h.finish()
}

/// Writes one batch with its 2-byte length prefix.
pub fn send_batch(stream: &mut TcpStream, batch: &[u8]) -> io::Result<()> {
    let mut framed = Vec::with_capacity(batch.len() + 2);
    PrefixWidth::U16
        .write(batch.len(), &mut framed)
        .map_err(|e| io::Error::other(format!("{e:?}")))?;
    framed.extend_from_slice(batch);
    stream.write_all(&framed)
}

/// Reads one length-prefixed batch.
pub fn recv_batch(stream: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 2];
    stream.read_exact(&mut len)?;
    let mut batch = vec![0u8; usize::from(u16::from_le_bytes(len))];
    stream.read_exact(&mut batch)?;
    Ok(batch)
}

impl RawClient {
    /// Opens a client session to `127.0.0.1:port` with Zenoh's default parameters and the
    /// id `zid`.
    pub fn connect(port: u16, zid: u128) -> Result<Self, RawError> {
        let zid = ZenohId::new(zid).expect("a non-zero ZenohId");
        Self::connect_with(port, LocalParams::new(zid, WhatAmI::Client))
    }

    /// Opens a client session to `addr` (a loopback address: `127.0.0.1` or `[::1]`)
    /// with Zenoh's default parameters and the id `zid`.
    pub fn connect_to(addr: std::net::SocketAddr, zid: u128) -> Result<Self, RawError> {
        let zid = ZenohId::new(zid).expect("a non-zero ZenohId");
        let stream = TcpStream::connect(addr)?;
        Self::handshake(
            stream,
            Initiator::new(LocalParams::new(zid, WhatAmI::Client)),
        )
    }

    /// Opens a session to `127.0.0.1:port` proposing `params`.
    pub fn connect_with(port: u16, params: LocalParams) -> Result<Self, RawError> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        Self::handshake(stream, Initiator::new(params))
    }

    /// Opens a client session to `127.0.0.1:port` from the loopback address `from` (any
    /// of 127.0.0.0/8), authenticating as `user` with `password`.
    pub fn connect_usrpwd(
        from: std::net::Ipv4Addr,
        port: u16,
        user: &str,
        password: &str,
    ) -> Result<Self, RawError> {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
        socket.bind(&std::net::SocketAddr::from((from, 0)).into())?;
        socket.connect(&std::net::SocketAddr::from(([127, 0, 0, 1], port)).into())?;
        let zid = ZenohId::new(u128::from(getrandom_u64()) | 1).expect("non-zero");
        let usrpwd = weft_transport::establish::UsrPwd::new().with_credentials(user, password);
        let handshake = Initiator::new(LocalParams::new(zid, WhatAmI::Client))
            .with_usrpwd(std::sync::Arc::new(usrpwd));
        Self::handshake(socket.into(), handshake)
    }

    /// Runs `handshake` on `stream`.
    fn handshake(mut stream: TcpStream, mut handshake: Initiator) -> Result<Self, RawError> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut out = Vec::new();
        handshake
            .start(&mut out)
            .map_err(|e| RawError::Handshake(e.to_string()))?;
        send_batch(&mut stream, &out)?;
        let session = loop {
            let batch = recv_batch(&mut stream)?;
            match handshake.on_batch(&batch, &mut out) {
                Ok(Progress::Reply) => send_batch(&mut stream, &out)?,
                Ok(Progress::Established(n)) => break n,
                Err(EstablishError::Closed(reason)) => return Err(RawError::Closed(reason)),
                Err(e) => return Err(RawError::Handshake(e.to_string())),
            }
        };
        Ok(Self {
            stream,
            tx: Transmitter::new(&session, usize::from(session.batch_size) - 2),
            rx: Receiver::new(&session, 64 << 20),
            session,
        })
    }

    /// Sends one network message, reliably, at `priority`, in a batch of its own.
    pub fn send(&mut self, msg: &NetworkMessage<'_>, priority: Priority) -> io::Result<()> {
        match self.tx.push(msg, priority, Reliability::Reliable) {
            Ok(Pushed::Appended) => {}
            other => return Err(io::Error::other(format!("cannot batch: {other:?}"))),
        }
        let batch = self.tx.take_lane(priority).to_vec();
        send_batch(&mut self.stream, &batch)
    }

    /// Declares subscriber `id` on the key expression `key` (in full, no id mapping).
    pub fn declare_subscriber(&mut self, id: u32, key: &str) -> io::Result<()> {
        let decl = NetworkMessage::Declare(Declare::new(
            None,
            Declaration::Subscriber(DeclareSubscriber {
                id,
                wire_expr: WireExpr::key(key),
                unknown: Vec::new(),
            }),
        ));
        self.send(&decl, Priority::Control)
    }

    /// Declares queryable `id` on the key expression `key` (complete, distance 0).
    pub fn declare_queryable(&mut self, id: u32, key: &str) -> io::Result<()> {
        let decl = NetworkMessage::Declare(Declare::new(
            None,
            Declaration::Queryable(DeclareQueryable {
                id,
                wire_expr: WireExpr::key(key),
                info: QueryableInfo {
                    complete: true,
                    distance: 0,
                },
                unknown: Vec::new(),
            }),
        ));
        self.send(&decl, Priority::Control)
    }

    /// Declares liveliness token `id` on the key `key`.
    pub fn declare_token(&mut self, id: u32, key: &str) -> io::Result<()> {
        let decl = NetworkMessage::Declare(Declare::new(
            None,
            Declaration::Token(DeclareToken {
                id,
                wire_expr: WireExpr::key(key),
                unknown: Vec::new(),
            }),
        ));
        self.send(&decl, Priority::Control)
    }

    /// Closes the session as a client does: a Close (generic reason), then the socket.
    pub fn close(mut self) -> io::Result<()> {
        let mut batch = Vec::new();
        close_batch(CloseReason::GENERIC, &mut batch)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        send_batch(&mut self.stream, &batch)?;
        self.stream.shutdown(std::net::Shutdown::Both)
    }

    /// Waits, `timeout` at most, until the router has handled everything sent before on
    /// `priority`'s channel: sends an Interest (id 1, current and future subscribers) on
    /// it and reads until its DeclareFinal.
    pub fn sync(&mut self, priority: Priority, timeout: Duration) -> io::Result<()> {
        let interest = NetworkMessage::Interest(Interest::new(
            1,
            InterestMode::CurrentFuture,
            InterestOptions::SUBSCRIBERS,
            None,
        ));
        self.send(&interest, priority)?;
        self.recv_until(
            timeout,
            |m| matches!(m, NetworkMessage::Declare(d) if matches!(d.body, Declaration::Final(_))),
        )
    }

    /// Reads batches and hands every network message to `look` until it returns true (the
    /// rest of that batch is still shown to it); fails after `timeout` without that. Sends
    /// a KeepAlive whenever a second passes without a batch, so the session stays up.
    pub fn recv_until<F>(&mut self, timeout: Duration, mut look: F) -> io::Result<()>
    where
        F: FnMut(&NetworkMessage<'_>) -> bool,
    {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "nothing matched"));
            }
            // A whole batch or nothing: the length prefix is peeked before reading.
            self.stream
                .set_read_timeout(Some(left.min(Duration::from_secs(1))))?;
            let mut prefix = [0u8; 2];
            match self.stream.peek(&mut prefix) {
                Ok(2) => {}
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                // Half a prefix: the rest is on its way.
                Ok(_) => {
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    send_batch(&mut self.stream, &KEEP_ALIVE_BATCH)?;
                    continue;
                }
                Err(e) => return Err(e),
            }
            self.stream
                .set_read_timeout(Some(Duration::from_secs(10)))?;
            let batch = recv_batch(&mut self.stream)?;
            let mut done = false;
            self.rx
                .on_batch(&batch, |m| done |= look(m.message))
                .map_err(|e| io::Error::other(format!("{e:?}")))?;
            if done {
                return Ok(());
            }
        }
    }

    /// Reads until the peer closes the link with a Close message, within `timeout`, and
    /// returns its reason; what else comes is ignored. An error if the link ends without
    /// one, or nothing comes in time.
    pub fn wait_close(&mut self, timeout: Duration) -> io::Result<CloseReason> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "no Close came"));
            }
            self.stream.set_read_timeout(Some(left))?;
            let batch = recv_batch(&mut self.stream)?;
            let control = self
                .rx
                .on_batch(&batch, |_| {})
                .map_err(|e| io::Error::other(format!("{e:?}")))?;
            if let weft_transport::rx::Control::Closed { reason, .. } = control {
                return Ok(reason);
            }
        }
    }

    /// Sends `count` fragments of one message that never ends (a hostile peer), each as
    /// large as a batch allows, on the reliable channel of `priority`.
    pub fn send_endless_fragments(&mut self, priority: Priority, count: usize) -> io::Result<()> {
        // Planned longer than what is sent, so that the last fragment never comes.
        let never_ending = (count + 1) * usize::from(u16::MAX) + 1;
        let fragments = self
            .tx
            .plan_fragments(never_ending, priority, Reliability::Reliable)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        let mut batch = Vec::new();
        for fragment in fragments.take(count) {
            batch.clear();
            batch.extend_from_slice(fragment.head());
            batch.resize(batch.len() + fragment.range().len(), 0xAB);
            send_batch(&mut self.stream, &batch)?;
        }
        Ok(())
    }

    /// The socket, for tests that write or stop reading on purpose.
    pub fn stream(&mut self) -> &mut TcpStream {
        &mut self.stream
    }
}
