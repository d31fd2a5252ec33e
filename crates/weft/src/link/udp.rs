//! UDP links: one batch per datagram. A connecting node's link is a socket of its own
//! connected to the endpoint; a listener gives each new source a socket of its own too,
//! bound to the listener's address and connected to that source.

use std::collections::HashMap;
use std::io::{self, IoSlice};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::kind::{Dialing, LinkKind, ListenerKind, Ready};
use super::tcp::first_address;
use super::{Link, UDP_BATCH_SIZE};
use crate::endpoint::Endpoint;

/// Datagrams queued per UDP peer of a listener before new ones are dropped.
const UDP_INBOX: usize = 1024;

/// One UDP peer: a socket connected to it, and, for a peer of a listening socket, the
/// datagrams it sent before that socket was connected, which the listener hands over.
#[derive(Debug, Clone)]
pub(crate) struct UdpLink {
    socket: Arc<UdpSocket>,
    peer: SocketAddr,
    inbox: Option<Arc<Mutex<Receiver<Vec<u8>>>>>,
    read_timeout: Option<Duration>,
}

impl LinkKind for UdpLink {
    fn protocol_name(&self) -> &'static str {
        "udp"
    }

    fn describe(&self) -> String {
        format!("udp/{}", self.peer)
    }

    fn local_describe(&self) -> String {
        match self.socket.local_addr() {
            Ok(a) => format!("udp/{a}"),
            Err(_) => "udp/?".into(),
        }
    }

    fn local_ip(&self) -> Option<IpAddr> {
        self.socket.local_addr().ok().map(|a| a.ip())
    }

    fn peer_ip(&self) -> Option<IpAddr> {
        Some(self.peer.ip())
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }

    fn is_datagram(&self) -> bool {
        true
    }

    fn mtu(&self) -> u16 {
        UDP_BATCH_SIZE
    }

    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.socket.recv(buf)
    }

    fn send_batch(&self, parts: &[&[u8]]) -> io::Result<()> {
        let mut slices = [IoSlice::new(&[]); super::MAX_BATCH_PARTS];
        for (slice, part) in slices.iter_mut().zip(parts) {
            *slice = IoSlice::new(part);
        }
        let total: usize = parts.iter().map(|p| p.len()).sum();
        // Every UDP link's socket is connected to its peer.
        let sent = socket2::SockRef::from(&*self.socket).send_vectored(&slices[..parts.len()])?;
        if sent != total {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "a datagram was cut short",
            ));
        }
        Ok(())
    }

    /// A datagram its listener handed over first (see [`LinkKind::fed_by_listener`]),
    /// else one from its own socket.
    fn receive_batch(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        if let Some(inbox) = &self.inbox {
            let handed = inbox.lock().unwrap_or_else(|e| e.into_inner()).try_recv();
            if let Ok(d) = handed {
                let n = d.len().min(buf.len());
                buf[..n].copy_from_slice(&d[..n]);
                return Ok(Some(n));
            }
        }
        Ok(Some(self.socket.recv(buf)?))
    }

    fn set_nonblocking(&self) -> io::Result<()> {
        self.socket.set_nonblocking(true)
    }

    fn set_handshake_nonblocking(&mut self, nonblocking: bool) -> io::Result<()> {
        self.socket.set_nonblocking(nonblocking)
    }

    fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.read_timeout = t;
        if self.inbox.is_none() {
            self.socket.set_read_timeout(t)?;
        }
        Ok(())
    }

    fn try_clone(&self) -> io::Result<Link> {
        Ok(Link::new(self.clone()))
    }

    // Nothing to shut: the reader stops on the transport's closed flag.
    fn shutdown(&self) {}

    fn fed_by_listener(&self) -> bool {
        self.inbox.is_some()
    }
}

/// A UDP listening socket: a datagram from a new source starts a new link, with a socket
/// of its own bound to the same address and connected to that source (the kernel then
/// gives it what the source sends next, and the I/O threads read it like any socket);
/// what the source sent before that socket was connected is handed to the link's inbox.
#[derive(Debug)]
pub(crate) struct UdpListener {
    socket: Arc<UdpSocket>,
    /// `accept` returns `WouldBlock` when the socket has nothing to read.
    nonblocking: AtomicBool,
    peers: Mutex<HashMap<SocketAddr, SyncSender<Vec<u8>>>>,
}

impl UdpListener {
    /// Listens on `endpoint`'s first address.
    pub(crate) fn bind(endpoint: &Endpoint) -> io::Result<Self> {
        Ok(Self {
            socket: Arc::new(udp_socket(first_address(endpoint)?)?),
            nonblocking: AtomicBool::new(false),
            peers: Mutex::new(HashMap::new()),
        })
    }

    fn new_peer(
        &self,
        peers: &mut HashMap<SocketAddr, SyncSender<Vec<u8>>>,
        from: SocketAddr,
        first: Vec<u8>,
    ) -> io::Result<Link> {
        let socket = udp_socket(self.socket.local_addr()?)?;
        socket.connect(from)?;
        let (tx, rx) = sync_channel(UDP_INBOX);
        let _ = tx.try_send(first);
        peers.insert(from, tx);
        Ok(Link::new(UdpLink {
            socket: Arc::new(socket),
            peer: from,
            inbox: Some(Arc::new(Mutex::new(rx))),
            read_timeout: None,
        }))
    }
}

impl ListenerKind for UdpListener {
    // Its socket stays blocking for the links that send through it; `accept` reads it
    // only when it is readable.
    fn set_nonblocking(&self) -> io::Result<()> {
        self.nonblocking.store(true, Ordering::Relaxed);
        Ok(())
    }

    fn hands_datagrams_over(&self) -> bool {
        true
    }

    fn raw_fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    fn local_endpoint(&self) -> io::Result<String> {
        Ok(format!("udp/{}", self.socket.local_addr()?))
    }

    fn accept(&self) -> io::Result<Link> {
        let mut buf = vec![0u8; usize::from(UDP_BATCH_SIZE)];
        loop {
            if self.nonblocking.load(Ordering::Relaxed) {
                use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
                let mut fds = [PollFd::new(self.socket.as_fd(), PollFlags::POLLIN)];
                if poll(&mut fds, PollTimeout::ZERO)? == 0 {
                    return Err(io::ErrorKind::WouldBlock.into());
                }
            }
            let (n, from) = self.socket.recv_from(&mut buf)?;
            let datagram = buf[..n].to_vec();
            let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(tx) = peers.get(&from) {
                match tx.try_send(datagram) {
                    Ok(()) | Err(TrySendError::Full(_)) => continue,
                    // The link is gone: this source starts a new one.
                    Err(TrySendError::Disconnected(d)) => {
                        peers.remove(&from);
                        return self.new_peer(&mut peers, from, d);
                    }
                }
            }
            return self.new_peer(&mut peers, from, datagram);
        }
    }
}

/// A UDP socket bound to `addr` that other sockets may bind too (the listener's, and one
/// per peer, connected to it).
fn udp_socket(addr: SocketAddr) -> io::Result<UdpSocket> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.bind(&addr.into())?;
    Ok(socket.into())
}

/// A UDP link made at once: a socket of its own, connected to the endpoint's first
/// address.
pub(crate) fn dial(endpoint: &Endpoint) -> io::Result<Box<dyn Dialing>> {
    let peer = first_address(endpoint)?;
    let local: SocketAddr = if peer.is_ipv4() {
        "0.0.0.0:0".parse().expect("an address")
    } else {
        "[::]:0".parse().expect("an address")
    };
    let socket = UdpSocket::bind(local)?;
    socket.connect(peer)?;
    Ok(Box::new(Ready(Some(Link::new(UdpLink {
        socket: Arc::new(socket),
        peer,
        inbox: None,
        read_timeout: None,
    })))))
}
