//! The scouting sockets (the only socket code of scouting): the multicast socket that
//! receives Scouts, the unicast socket that sends Scouts or Hellos and receives answers,
//! and the machine's interface addresses.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};

use nix::ifaddrs::getifaddrs;
use nix::net::if_::InterfaceFlags;
use socket2::{Domain, Protocol, Socket, Type};

use crate::config::ScoutingConfig;

/// The IPv4 group of the configuration; IPv6 groups are not supported.
fn group_v4(cfg: &ScoutingConfig) -> io::Result<(Ipv4Addr, u16)> {
    match cfg.address {
        SocketAddr::V4(a) => Ok((*a.ip(), a.port())),
        SocketAddr::V6(_) => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "IPv6 scouting groups are not supported (use an IPv4 group)",
        )),
    }
}

/// The addresses of the interfaces that are up, loopback included.
pub(crate) fn interface_addresses() -> Vec<IpAddr> {
    let Ok(list) = getifaddrs() else {
        return Vec::new();
    };
    list.filter(|i| i.flags.contains(InterfaceFlags::IFF_UP))
        .filter_map(|i| {
            let a = i.address?;
            if let Some(v4) = a.as_sockaddr_in() {
                Some(IpAddr::V4(v4.ip()))
            } else {
                a.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
            }
        })
        .collect()
}

/// The IPv4 address of the interface called `name`.
fn interface_v4(name: &str) -> io::Result<Ipv4Addr> {
    getifaddrs()?
        .filter(|i| i.interface_name == name)
        .find_map(|i| i.address?.as_sockaddr_in().map(|a| a.ip()))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("no interface `{name}` with an IPv4 address"),
            )
        })
}

/// The interface address multicast is sent and received on: the configured
/// interface's, or unspecified (the system's route for the group decides).
fn multicast_interface(cfg: &ScoutingConfig) -> io::Result<Ipv4Addr> {
    match &cfg.interface {
        Some(name) => interface_v4(name),
        None => Ok(Ipv4Addr::UNSPECIFIED),
    }
}

/// The local address from which `peer` is reached (asks the routing table; nothing is
/// sent).
pub(crate) fn address_toward(peer: SocketAddr) -> Option<IpAddr> {
    let any: SocketAddr = if peer.is_ipv4() {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let probe = UdpSocket::bind(any).ok()?;
    probe.connect(peer).ok()?;
    probe.local_addr().ok().map(|a| a.ip())
}

/// The socket that receives the Scouts sent to the group: bound to the group's port
/// (shared with the other nodes of the machine), member of the group.
pub(crate) fn multicast_receiver(cfg: &ScoutingConfig) -> io::Result<UdpSocket> {
    let (group, port) = group_v4(cfg)?;
    let iface = multicast_interface(cfg)?;
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_address(true)?;
    s.set_reuse_port(true)?;
    // Bound to the group address: only datagrams sent to the group arrive.
    s.bind(&SocketAddr::from((group, port)).into())?;
    s.join_multicast_v4(&group, &iface)?;
    Ok(s.into())
}

/// A unicast socket on an ephemeral port that sends to the group (with the configured
/// TTL and interface) and receives the answers.
pub(crate) fn unicast(cfg: &ScoutingConfig) -> io::Result<UdpSocket> {
    group_v4(cfg)?;
    let iface = multicast_interface(cfg)?;
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    s.bind(&SocketAddr::from((iface, 0)).into())?;
    s.set_multicast_ttl_v4(cfg.ttl)?;
    s.set_multicast_loop_v4(true)?;
    if !iface.is_unspecified() {
        s.set_multicast_if_v4(&iface)?;
    }
    Ok(s.into())
}
