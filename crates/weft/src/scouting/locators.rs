//! The locators a Hello announces: the endpoints a node listens on, with unspecified
//! addresses (`0.0.0.0`, `[::]`) replaced by addresses others can reach.

use std::net::{IpAddr, SocketAddr};

/// Whether another node could use `ip` to reach this one (not loopback, not link-local
/// IPv6, which needs a scope, not multicast or unspecified).
fn announceable(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => !(a.is_loopback() || a.is_unspecified() || a.is_multicast()),
        IpAddr::V6(a) => {
            !(a.is_loopback()
                || a.is_unspecified()
                || a.is_multicast()
                || (a.segments()[0] & 0xffc0) == 0xfe80)
        }
    }
}

/// The concrete addresses that replace an unspecified one, best first: `toward_scouter`
/// (the local address from which the scouting node is reached), then the addresses of
/// the machine's interfaces, without duplicates. `[::]` listens on IPv4 too (dual
/// stack), so it expands to both families.
fn candidates(
    unspecified: IpAddr,
    toward_scouter: Option<IpAddr>,
    interfaces: &[IpAddr],
) -> Vec<IpAddr> {
    let fits = |ip: &IpAddr| unspecified.is_ipv6() || ip.is_ipv4();
    let mut out: Vec<IpAddr> = Vec::new();
    let first = toward_scouter.filter(|ip| fits(ip) && !ip.is_unspecified());
    for ip in first
        .into_iter()
        .chain(interfaces.iter().copied().filter(announceable))
    {
        if fits(&ip) && !out.contains(&ip) {
            out.push(ip);
        }
    }
    out
}

/// The locators to announce for the endpoints a node listens on (as bound, e.g.
/// `tcp/[::]:7447`). Endpoint configuration (`#...`) is not part of a locator and is
/// dropped; metadata (`?...`) is kept. Non-IP locators (Unix sockets) come last.
pub fn expand(
    listening: &[String],
    toward_scouter: Option<IpAddr>,
    interfaces: &[IpAddr],
) -> Vec<String> {
    let mut ip_locators = Vec::new();
    let mut others = Vec::new();
    for endpoint in listening {
        let locator = endpoint.split('#').next().unwrap_or_default();
        let Some((proto, rest)) = locator.split_once('/') else {
            continue;
        };
        let (address, metadata) = match rest.split_once('?') {
            Some((a, m)) => (a, format!("?{m}")),
            None => (rest, String::new()),
        };
        match address.parse::<SocketAddr>() {
            Ok(sa) if sa.ip().is_unspecified() => {
                for ip in candidates(sa.ip(), toward_scouter, interfaces) {
                    let concrete = SocketAddr::new(ip, sa.port());
                    ip_locators.push(format!("{proto}/{concrete}{metadata}"));
                }
            }
            Ok(_) => ip_locators.push(locator.to_string()),
            Err(_) => others.push(locator.to_string()),
        }
    }
    let mut out: Vec<String> = Vec::new();
    for l in ip_locators.into_iter().chain(others) {
        if !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|s| s.parse().unwrap()).collect()
    }

    #[test]
    fn unspecified_ipv4_becomes_the_scouter_facing_address_then_the_others() {
        let got = expand(
            &["tcp/0.0.0.0:7447".into()],
            Some("10.77.1.2".parse().unwrap()),
            &ips(&[
                "127.0.0.1",
                "192.168.5.5",
                "10.77.1.2",
                "fe80::1",
                "2001:db8::7",
            ]),
        );
        assert_eq!(got, ["tcp/10.77.1.2:7447", "tcp/192.168.5.5:7447"]);
    }

    #[test]
    fn unspecified_ipv6_listens_on_both_families() {
        let got = expand(
            &["tcp/[::]:7447".into()],
            Some("10.77.1.2".parse().unwrap()),
            &ips(&["::1", "fe80::1", "2001:db8::7", "10.77.1.2"]),
        );
        assert_eq!(got, ["tcp/10.77.1.2:7447", "tcp/[2001:db8::7]:7447"]);
    }

    #[test]
    fn concrete_addresses_metadata_and_unix_sockets_are_kept_config_dropped() {
        let got = expand(
            &[
                "unixsock-stream//tmp/w.sock".into(),
                "tcp/127.0.0.1:7447".into(),
                "udp/0.0.0.0:7448?rel=0#iface=eth0".into(),
                "tcp/127.0.0.1:7447".into(),
            ],
            Some("10.0.0.9".parse().unwrap()),
            &[],
        );
        assert_eq!(
            got,
            [
                "tcp/127.0.0.1:7447",
                "udp/10.0.0.9:7448?rel=0",
                "unixsock-stream//tmp/w.sock"
            ]
        );
    }

    #[test]
    fn nothing_concrete_known_means_no_locator_rather_than_an_unspecified_one() {
        assert!(expand(&["tcp/0.0.0.0:1".into()], None, &ips(&["127.0.0.1"])).is_empty());
        assert!(expand(&[], None, &[]).is_empty());
    }
}
