//! Endpoints: where to listen or connect, in Zenoh's syntax.
//!
//! `<protocol>/<address>[?<metadata>][#<config>]`, e.g. `tcp/127.0.0.1:7447`,
//! `tcp/[::]:7447`, `tls/localhost:7447`, `quic/localhost:7447`, `udp/10.0.0.1:7447`,
//! `unixsock-stream/tmp/weft.sock`, `serial//dev/ttyUSB0#baudrate=115200`. Metadata and
//! configuration are `;`-separated `key=value` lists.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;
use weft_proto::core::Priority;

/// The link protocols weft speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// TCP.
    Tcp,
    /// UDP unicast.
    Udp,
    /// Unix stream sockets.
    UnixStream,
    /// TLS over TCP.
    Tls,
    /// QUIC.
    Quic,
    /// A serial port (the address is the device's path).
    Serial,
}

impl Protocol {
    /// The protocol's name in endpoints.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Tcp => "tcp",
            Self::Udp => "udp",
            Self::UnixStream => "unixsock-stream",
            Self::Tls => "tls",
            Self::Quic => "quic",
            Self::Serial => "serial",
        }
    }
}

/// An endpoint that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EndpointError {
    /// No `/` between protocol and address.
    #[error("endpoint `{0}` has no `<protocol>/` prefix")]
    MissingProtocol(String),
    /// A protocol weft does not speak.
    #[error(
        "endpoint `{0}`: unsupported protocol `{1}` (tcp, tls, quic, udp, unixsock-stream and serial are)"
    )]
    UnsupportedProtocol(String, String),
    /// An empty address.
    #[error("endpoint `{0}` has an empty address")]
    EmptyAddress(String),
    /// A host:port address without a valid port.
    #[error("endpoint `{0}`: `{1}` is not HOST:PORT with a port in 0..=65535")]
    BadPort(String, String),
    /// A metadata or config entry that is not `key=value`.
    #[error("endpoint `{0}`: `{1}` is not key=value")]
    BadParameter(String, String),
    /// A config entry weft reads, with a value it cannot use.
    #[error("endpoint `{0}`: `{1}={2}`: expected {3}")]
    BadValue(String, String, String, &'static str),
}

/// Smallest and largest kernel buffer size accepted for `so_sndbuf` / `so_rcvbuf`.
const BUFFER_SIZES: std::ops::RangeInclusive<usize> = 4096..=(1 << 30);

/// A kernel buffer size (`so_sndbuf`, `so_rcvbuf`): bytes in 4096..=1 GiB.
pub(crate) fn parse_buffer_size(text: &str) -> Option<usize> {
    text.parse::<usize>()
        .ok()
        .filter(|n| BUFFER_SIZES.contains(n))
}

/// Checks the values of the `#` configuration entries weft reads; a TLS endpoint takes
/// only the keys weft implements (any other could ask for a protection not given).
fn check_config(
    whole: &str,
    protocol: Protocol,
    config: &[(String, String)],
) -> Result<(), EndpointError> {
    if protocol == Protocol::Serial {
        return crate::link::serial::check_config(config).map_err(|(key, value, expected)| {
            EndpointError::BadValue(whole.into(), key, value, expected)
        });
    }
    for (key, value) in config {
        if protocol == Protocol::Tls && !crate::link::tls::is_endpoint_key(key) {
            // No value is repeated: a misspelt key may hold a private key.
            return Err(EndpointError::BadValue(
                shown(whole),
                key.clone(),
                "…".into(),
                "a TLS setting weft implements (root_ca_certificate_*, listen_certificate_*, \
                 listen_private_key_*, connect_certificate_*, connect_private_key_* with \
                 _file, _raw or _base64; enable_mtls; verify_name_on_connect; \
                 close_link_on_expiration; tls_handshake_timeout_ms; so_sndbuf; so_rcvbuf)",
            ));
        }
        if protocol == Protocol::Quic && !crate::link::quic::is_endpoint_key(key) {
            return Err(EndpointError::BadValue(
                shown(whole),
                key.clone(),
                "…".into(),
                "a QUIC setting weft implements (the certificates and keys of a TLS \
                 endpoint; enable_mtls; verify_name_on_connect; close_link_on_expiration; \
                 tls_handshake_timeout_ms; initial_mtu; mtu_discovery_interval_secs)",
            ));
        }
        if matches!(key.as_str(), "so_sndbuf" | "so_rcvbuf") && parse_buffer_size(value).is_none() {
            return Err(EndpointError::BadValue(
                shown(whole),
                key.clone(),
                value.clone(),
                "a buffer size in bytes, 4096..=1073741824",
            ));
        }
    }
    Ok(())
}

/// A priority range as endpoint metadata writes it: `START-END` or `N`, numbers 0..=7
/// (0 Control ... 7 Background), START <= END.
fn parse_priority_range(text: &str) -> Option<(Priority, Priority)> {
    let number = |t: &str| t.parse::<u8>().ok().and_then(Priority::from_u8);
    let (start, end) = match text.split_once('-') {
        Some((s, e)) => (number(s)?, number(e)?),
        None => (number(text)?, number(text)?),
    };
    (start <= end).then_some((start, end))
}

/// Checks the values of the `?` metadata entries weft reads.
fn check_metadata(whole: &str, metadata: &[(String, String)]) -> Result<(), EndpointError> {
    for (key, value) in metadata {
        if key == "prio" && parse_priority_range(value).is_none() {
            return Err(EndpointError::BadValue(
                whole.into(),
                key.clone(),
                value.clone(),
                "a priority range START-END of 0..=7 with START <= END",
            ));
        }
    }
    Ok(())
}

/// A parsed endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// The link protocol.
    pub protocol: Protocol,
    /// The address: `host:port` for IP protocols, a path for Unix sockets.
    pub address: String,
    /// `?` metadata, in order.
    pub metadata: Vec<(String, String)>,
    /// `#` configuration, in order.
    pub config: Vec<(String, String)>,
}

fn parameters(whole: &str, text: &str) -> Result<Vec<(String, String)>, EndpointError> {
    text.split(';')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(EndpointError::BadParameter(whole.into(), p.into())),
        })
        .collect()
}

impl FromStr for Endpoint {
    type Err = EndpointError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (main, config) = match s.split_once('#') {
            Some((m, c)) => (m, parameters(s, c)?),
            None => (s, Vec::new()),
        };
        let (locator, metadata) = match main.split_once('?') {
            Some((l, m)) => (l, parameters(s, m)?),
            None => (main, Vec::new()),
        };
        check_metadata(s, &metadata)?;
        let (proto, address) = locator
            .split_once('/')
            .ok_or_else(|| EndpointError::MissingProtocol(s.into()))?;
        let protocol = match proto {
            "tcp" => Protocol::Tcp,
            "udp" => Protocol::Udp,
            "unixsock-stream" => Protocol::UnixStream,
            "tls" => Protocol::Tls,
            "quic" => Protocol::Quic,
            "serial" => Protocol::Serial,
            other => return Err(EndpointError::UnsupportedProtocol(s.into(), other.into())),
        };
        check_config(s, protocol, &config)?;
        if protocol == Protocol::Quic {
            crate::link::quic::check_metadata(&metadata).map_err(|(key, value, expected)| {
                EndpointError::BadValue(s.into(), key, value, expected)
            })?;
        }
        if address.is_empty() {
            return Err(EndpointError::EmptyAddress(s.into()));
        }
        if !matches!(protocol, Protocol::UnixStream | Protocol::Serial) {
            let port = address.rsplit_once(':').map(|(_, p)| p);
            if port.is_none_or(|p| p.parse::<u16>().is_err()) {
                return Err(EndpointError::BadPort(s.into(), address.into()));
            }
        }
        Ok(Self {
            protocol,
            address: address.to_string(),
            metadata,
            config,
        })
    }
}

impl Endpoint {
    /// The priorities a link opened to this endpoint is reserved for (`?prio=START-END`).
    pub fn priorities(&self) -> Option<(Priority, Priority)> {
        self.metadata
            .iter()
            .find(|(k, _)| k == "prio")
            .and_then(|(_, v)| parse_priority_range(v))
    }

    /// The same endpoint without its `prio` metadata: where its link goes.
    pub fn without_priorities(&self) -> Self {
        let mut plain = self.clone();
        plain.metadata.retain(|(k, _)| k != "prio");
        plain
    }
}

/// An endpoint as written, for an error: its `#` configuration's values are left out
/// when one of them could be a private key.
fn shown(whole: &str) -> String {
    match whole.split_once('#') {
        Some((main, config)) if config.contains("private_key") || config.contains("_raw") => {
            let keys: Vec<&str> = config
                .split(';')
                .map(|p| p.split_once('=').map_or(p, |(k, _)| k))
                .collect();
            format!("{main}#{}=…", keys.join("=…;"))
        }
        _ => whole.into(),
    }
}

/// Whether a `#` configuration value is a secret, never printed: an inline private key.
fn is_secret(key: &str) -> bool {
    key.contains("private_key") && (key.ends_with("_raw") || key.ends_with("_base64"))
}

impl fmt::Display for Endpoint {
    /// The endpoint as written, but for inline private keys, shown as `***`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.protocol.as_str(), self.address)?;
        let join = |list: &[(String, String)]| {
            list.iter()
                .map(|(k, v)| {
                    if is_secret(k) {
                        format!("{k}=***")
                    } else {
                        format!("{k}={v}")
                    }
                })
                .collect::<Vec<_>>()
                .join(";")
        };
        if !self.metadata.is_empty() {
            write!(f, "?{}", join(&self.metadata))?;
        }
        if !self.config.is_empty() {
            write!(f, "#{}", join(&self.config))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_zenoh_endpoints() {
        let e: Endpoint = "tcp/[::]:7447".parse().unwrap();
        assert_eq!(
            (e.protocol, e.address.as_str()),
            (Protocol::Tcp, "[::]:7447")
        );
        let e: Endpoint = "udp/127.0.0.1:7447?rel=0;prio=1-3#iface=lo"
            .parse()
            .unwrap();
        assert_eq!(e.protocol, Protocol::Udp);
        assert_eq!(
            e.metadata,
            [("rel".into(), "0".into()), ("prio".into(), "1-3".into())]
        );
        assert_eq!(e.config, [("iface".into(), "lo".into())]);
        assert_eq!(e.to_string(), "udp/127.0.0.1:7447?rel=0;prio=1-3#iface=lo");
        assert_eq!(
            e.priorities(),
            Some((Priority::RealTime, Priority::InteractiveLow))
        );
        assert_eq!(
            e.without_priorities().to_string(),
            "udp/127.0.0.1:7447?rel=0#iface=lo"
        );
        let e: Endpoint = "unixsock-stream//tmp/weft.sock".parse().unwrap();
        assert_eq!(e.address, "/tmp/weft.sock");
    }

    #[test]
    fn tls_endpoints_take_only_the_tls_settings_weft_implements() {
        let e: Endpoint = "tls/localhost:7447#root_ca_certificate_file=/ca.pem;enable_mtls=true;\
                           listen_private_key_base64=c2VjcmV0"
            .parse()
            .unwrap();
        assert_eq!(
            (e.protocol, e.address.as_str()),
            (Protocol::Tls, "localhost:7447")
        );
        assert_eq!(e.config.len(), 3);
        assert_eq!(
            e.to_string(),
            "tls/localhost:7447#root_ca_certificate_file=/ca.pem;enable_mtls=true;\
             listen_private_key_base64=***"
        );
        let text = "tls/h:1#listen_private_key_base64=c2VjcmV0;listen_privatekey_raw=KEY";
        let e = text.parse::<Endpoint>().unwrap_err().to_string();
        assert!(!e.contains("c2VjcmV0") && !e.contains("KEY"), "{e}");
        assert!(e.contains("listen_privatekey_raw"), "{e}");
        for bad in ["iface=lo", "root_ca_certificate=/ca.pem", "tls_unknown=1"] {
            let text = format!("tls/127.0.0.1:7447#{bad}");
            assert!(
                matches!(text.parse::<Endpoint>(), Err(EndpointError::BadValue(..))),
                "{text}"
            );
        }
        assert!(matches!(
            "tls/localhost".parse::<Endpoint>(),
            Err(EndpointError::BadPort(..))
        ));
    }

    #[test]
    fn buffer_sizes_in_the_configuration_are_checked() {
        let e: Endpoint = "tcp/127.0.0.1:7447#so_sndbuf=65536;so_rcvbuf=4096"
            .parse()
            .unwrap();
        assert_eq!(e.config.len(), 2);
        for bad in ["so_sndbuf=lots", "so_rcvbuf=4095", "so_rcvbuf=-1"] {
            let text = format!("tcp/127.0.0.1:7447#{bad}");
            let (key, value) = bad.split_once('=').unwrap();
            assert_eq!(
                text.parse::<Endpoint>(),
                Err(EndpointError::BadValue(
                    text.clone(),
                    key.into(),
                    value.into(),
                    "a buffer size in bytes, 4096..=1073741824"
                ))
            );
        }
    }

    #[test]
    fn priority_ranges_in_the_metadata_are_checked() {
        let one: Endpoint = "tcp/127.0.0.1:7447?prio=1".parse().unwrap();
        assert_eq!(
            one.priorities(),
            Some((Priority::RealTime, Priority::RealTime))
        );
        let all: Endpoint = "tcp/127.0.0.1:7447?prio=0-7".parse().unwrap();
        assert_eq!(
            all.priorities(),
            Some((Priority::Control, Priority::Background))
        );
        for bad in ["3-1", "0-8", "x", "1-", "-2"] {
            let text = format!("tcp/127.0.0.1:7447?prio={bad}");
            assert!(
                matches!(text.parse::<Endpoint>(), Err(EndpointError::BadValue(_, k, v, _)) if k == "prio" && v == bad),
                "{text}"
            );
        }
    }

    #[test]
    fn rejects_bad_endpoints_with_a_reason() {
        assert!(matches!(
            "127.0.0.1:7447".parse::<Endpoint>(),
            Err(EndpointError::MissingProtocol(_))
        ));
        assert!(
            matches!("ws/1.2.3.4:1".parse::<Endpoint>(), Err(EndpointError::UnsupportedProtocol(_, p)) if p == "ws")
        );
        assert!(matches!(
            "tcp/localhost".parse::<Endpoint>(),
            Err(EndpointError::BadPort(..))
        ));
        assert!(matches!(
            "tcp/h:99999".parse::<Endpoint>(),
            Err(EndpointError::BadPort(..))
        ));
        assert!(matches!(
            "tcp/h:1?x".parse::<Endpoint>(),
            Err(EndpointError::BadParameter(..))
        ));
    }
}
