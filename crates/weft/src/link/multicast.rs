//! The sockets of a UDP multicast group (Zenoh's `udp/224.0.0.224:7447#iface=eth0`, or
//! an IPv6 group `udp/[ff02::1:7]:7447#iface=eth0`), as Eclipse Zenoh opens them: a
//! socket bound to the group's port (shared with the other members on the machine) that
//! joins the group and receives, and a socket on an ephemeral port of the interface that
//! sends to the group. The second's address is where this node's datagrams come from:
//! they loop back to the first (so members on one machine hear each other), and are
//! recognised there and skipped.
//!
//! Endpoint options: `iface` (an interface name or one of its addresses; without it, the
//! interface of the route to the group), `ttl` (IPv4 hops, 1 by default).

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV6, UdpSocket};

use nix::ifaddrs::getifaddrs;
use socket2::{Domain, Protocol, Socket, Type};

use crate::endpoint::{Endpoint, Protocol as EndpointProtocol};

/// Whether `ep` names a UDP multicast group.
pub(crate) fn is_multicast(ep: &Endpoint) -> bool {
    ep.protocol == EndpointProtocol::Udp
        && ep
            .address
            .parse::<SocketAddr>()
            .is_ok_and(|a| a.ip().is_multicast())
}

/// The two sockets of a group.
#[derive(Debug)]
pub(crate) struct GroupSockets {
    /// Receives what is sent to the group (non-blocking).
    pub(crate) receive: UdpSocket,
    /// Sends to the group (non-blocking).
    pub(crate) send: UdpSocket,
    /// The group.
    pub(crate) group: SocketAddr,
    /// Where this node's datagrams come from.
    pub(crate) own: SocketAddr,
}

impl GroupSockets {
    /// Opens the sockets of the group `ep` names.
    pub(crate) fn open(ep: &Endpoint) -> io::Result<Self> {
        let group: SocketAddr = ep.address.parse().map_err(|_| invalid("not IP:PORT"))?;
        if !group.ip().is_multicast() {
            return Err(invalid("not a multicast address"));
        }
        if group.port() == 0 {
            return Err(invalid("a multicast group needs a port"));
        }
        let option = |k: &str| {
            ep.config
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        let ttl = match option("ttl") {
            Some(t) => t
                .parse::<u32>()
                .map_err(|_| invalid("ttl is not a number"))?,
            None => 1,
        };
        match group {
            SocketAddr::V4(g) => open_v4(*g.ip(), g.port(), option("iface"), ttl),
            SocketAddr::V6(g) => open_v6(*g.ip(), g.port(), option("iface")),
        }
    }

    /// Whether a datagram from `from` is this node's own, looped back.
    pub(crate) fn is_own(&self, from: SocketAddr) -> bool {
        from.port() == self.own.port()
            && (from.ip() == self.own.ip() || self.own.ip().is_unspecified())
    }

    /// Sends one datagram to the group without waiting: `Ok(false)` when the socket has
    /// no room for it now.
    pub(crate) fn send_now(&self, datagram: &[u8]) -> io::Result<bool> {
        match self.send.send_to(datagram, self.group) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Receives the next datagram sent to the group, without waiting: `None` when none
    /// has come.
    pub(crate) fn receive_now(&self, buf: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>> {
        loop {
            match self.receive.recv_from(buf) {
                Ok(got) => return Ok(Some(got)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) => return Err(e),
            }
        }
    }
}

fn invalid(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why.to_string())
}

/// The receiving socket: the group's port, shared with the machine's other members.
fn receiver(domain: Domain, bind: SocketAddr) -> io::Result<Socket> {
    let s = Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_address(true)?;
    s.set_reuse_port(true)?;
    if domain == Domain::IPV6 {
        s.set_only_v6(true)?;
    }
    // Bound to the group address: only what is sent to the group arrives.
    s.bind(&bind.into())?;
    // Room for bursts: the I/O thread reading it may be busy in callbacks.
    let _ = s.set_recv_buffer_size(1 << 20);
    s.set_nonblocking(true)?;
    Ok(s)
}

/// The IPv4 address of `iface` (a name or an address); without it, the address of the
/// route to `group`.
fn interface_v4(iface: Option<&str>, group: Ipv4Addr) -> io::Result<Ipv4Addr> {
    match iface {
        Some(text) => {
            if let Ok(a) = text.parse::<Ipv4Addr>() {
                return Ok(a);
            }
            getifaddrs()?
                .filter(|i| i.interface_name == text)
                .find_map(|i| i.address?.as_sockaddr_in().map(|a| a.ip()))
                .ok_or_else(|| invalid(&format!("no interface `{text}` with an IPv4 address")))
        }
        None => Ok(
            match crate::scouting::socket::address_toward((group, 9).into()) {
                Some(IpAddr::V4(a)) => a,
                _ => Ipv4Addr::UNSPECIFIED,
            },
        ),
    }
}

fn open_v4(group: Ipv4Addr, port: u16, iface: Option<&str>, ttl: u32) -> io::Result<GroupSockets> {
    let local = interface_v4(iface, group)?;
    let r = receiver(Domain::IPV4, (group, port).into())?;
    r.join_multicast_v4(&group, &local)?;
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    if !local.is_unspecified() {
        s.set_multicast_if_v4(&local)?;
    }
    s.set_multicast_ttl_v4(ttl)?;
    s.set_multicast_loop_v4(true)?;
    s.bind(&SocketAddr::from((local, 0)).into())?;
    s.set_nonblocking(true)?;
    let send: UdpSocket = s.into();
    let own = send.local_addr()?;
    Ok(GroupSockets {
        receive: r.into(),
        send,
        group: (group, port).into(),
        own,
    })
}

/// The index and an IPv6 address of `iface` (a name, or one of its addresses).
fn interface_v6(iface: &str) -> io::Result<(u32, Ipv6Addr)> {
    let by_address = iface.parse::<Ipv6Addr>().ok();
    let mut name = None;
    let mut address = None;
    for i in getifaddrs()? {
        let Some(a) = i.address.and_then(|a| a.as_sockaddr_in6().map(|s| s.ip())) else {
            continue;
        };
        let matches = match by_address {
            Some(wanted) => a == wanted,
            None => i.interface_name == iface,
        };
        if matches && address.is_none() {
            address = Some(a);
            name = Some(i.interface_name.clone());
        }
    }
    let (Some(name), Some(address)) = (name, address) else {
        return Err(invalid(&format!(
            "no interface `{iface}` with an IPv6 address"
        )));
    };
    let index = nix::net::if_::if_nametoindex(name.as_str()).map_err(io::Error::from)?;
    Ok((index, address))
}

fn open_v6(group: Ipv6Addr, port: u16, iface: Option<&str>) -> io::Result<GroupSockets> {
    let (index, local) = match iface {
        Some(i) => interface_v6(i)?,
        None => (0, Ipv6Addr::UNSPECIFIED),
    };
    // A link-scoped group is bound with its interface.
    let r = receiver(
        Domain::IPV6,
        SocketAddrV6::new(group, port, 0, index).into(),
    )?;
    r.join_multicast_v6(&group, index)?;
    let s = Socket::new(Domain::IPV6, Type::DGRAM, Some(Protocol::UDP))?;
    s.set_only_v6(true)?;
    if index != 0 {
        s.set_multicast_if_v6(index)?;
    }
    s.set_multicast_loop_v6(true)?;
    // A link-local address is bound with its interface.
    let scope = if local.is_unicast_link_local() {
        index
    } else {
        0
    };
    s.bind(&SocketAddrV6::new(local, 0, 0, scope).into())?;
    s.set_nonblocking(true)?;
    let send: UdpSocket = s.into();
    let own = send.local_addr()?;
    Ok(GroupSockets {
        receive: r.into(),
        send,
        group: SocketAddrV6::new(group, port, 0, index).into(),
        own,
    })
}
