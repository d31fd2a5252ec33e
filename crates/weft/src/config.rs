//! Configuration, with Zenoh's key names so that a Zenoh configuration file works
//! unchanged for everything weft implements.
//!
//! Files are JSON5, parsed into a document that `--cfg KEY:VALUE` settings may edit
//! ([`Config::apply_setting`]) before it is read ([`Config::from_value`]). Reading is
//! strict, as Zenoh's own. The module is laid out as:
//!
//! - `config::schema`: the key tree, declared once: every key of Eclipse Zenoh 1.10's
//!   configuration, and weft's own (`transport.link.rx.reassembly_budget`,
//!   `transport.link.tx.overflow_budget`), as serde sections that deny unknown fields,
//!   each key with the kind of value it takes. A key it does not declare is an error
//!   naming its full path ([`ConfigError::UnknownKey`]); so is a value that does not pass
//!   ([`ConfigError::InvalidValue`], with the value as written).
//! - `config::values`: the kinds of values (milliseconds, counts, buffer sizes, roles,
//!   endpoints, ...), each read and checked once.
//! - `config::setting`: the forms a key takes (one value, or one per mode:
//!   `{ router: .., peer: .., client: .. }`), fail-closed security settings, and how a
//!   refused value travels through serde's error to come out with its key's path.
//! - `config::reader`: sets [`Config`] from the key tree, each key read once, for the
//!   node's mode. This module holds [`Config`], its defaults, and [`ConfigError`].
//! - `config::unimplemented`: the Zenoh keys weft does not implement that a
//!   configuration sets, reported once in a warning grouping them by section.
//! - `config::usrpwd` (`transport.auth.usrpwd.*`) and `config::gossip`
//!   (`scouting.gossip.*`): what those keys make. `access_control` is read and checked
//!   by `crate::acl` (its own serde declarations). `plugins` is kept as written: each
//!   plugin reads and checks its own section (weftd's storages, recorder and REST).
//!
//! Security settings fail closed: a key under `access_control`, `transport.auth` or
//! `transport.link.tls` that asks for something weft does not do (public-key
//! authentication, an older Zenoh's TLS key) is an error, never a warning.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use thiserror::Error;
use weft_proto::core::{WhatAmI, WhatAmIMatcher, ZenohId};
use weft_transport::establish::UsrPwd;

mod gossip;
mod reader;
mod schema;
mod setting;
mod unimplemented;
mod usrpwd;
mod values;

pub use gossip::{AutoconnectStrategy, GossipConfig};

use crate::endpoint::Endpoint;
pub use crate::link::tls::{PemSource, TlsSettings};
use crate::link::LinkSettings;
pub use crate::link::TcpBuffers;

/// An invalid configuration.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// The file is not JSON5.
    #[error("configuration is not valid JSON5: {0}")]
    Syntax(String),
    /// A key that Eclipse Zenoh 1.10's configuration does not have (nor weft's own keys):
    /// a misspelling, most often, that would otherwise leave a setting silently undone.
    #[error(
        "unknown configuration key `{key}`: neither Eclipse Zenoh 1.10 nor weft has it, and \
         weft refuses to run with a setting it would not apply (expected one of: {expected})"
    )]
    UnknownKey {
        /// The key, dotted (`transport.unicast.acept_timeout`).
        key: String,
        /// The keys its section has.
        expected: String,
    },
    /// A section that is not an object of keys (`transport: 5`).
    #[error("invalid `{key}`: {reason}")]
    InvalidSection {
        /// The section, dotted.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A known key with a value of the wrong kind or out of range.
    #[error("invalid value {value} for `{key}`: expected {expected}")]
    InvalidValue {
        /// The key, dotted (`transport.link.tx.lease`).
        key: String,
        /// The value as written.
        value: String,
        /// What is accepted.
        expected: String,
    },
    /// An endpoint in a list of endpoints that does not parse.
    #[error("invalid endpoint in `{key}`: {reason}")]
    InvalidEndpoint {
        /// The key, dotted (`listen.endpoints`).
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A security setting weft cannot honour: the node must not run without it.
    #[error(
        "`{key}` = {value}: {reason}; weft does not implement it and refuses to run \
         without it (remove the setting, or set it to null or false)"
    )]
    UnsupportedSecurity {
        /// The key, dotted (`access_control.enabled`).
        key: String,
        /// The value as written.
        value: String,
        /// What the setting asks for.
        reason: String,
    },
    /// A `KEY:VALUE` setting (zenohd's and Zenoh's tools' `--cfg`) that does not parse.
    #[error("invalid --cfg {setting:?}: {reason}")]
    InvalidSetting {
        /// The setting as given.
        setting: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A mistake in the `access_control` section.
    #[error("invalid access control: {0}")]
    Acl(#[from] crate::acl::AclError),
    /// A file named by a key that cannot be read or does not parse.
    #[error("invalid file {path} for `{key}`: {reason}")]
    InvalidFile {
        /// The key, dotted (`transport.auth.usrpwd.dictionary_file`).
        key: String,
        /// The path, as written.
        path: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// A file that cannot be read.
    #[error("cannot read configuration file {path}: {reason}")]
    Unreadable {
        /// The path.
        path: String,
        /// Why.
        reason: String,
    },
}

/// A session's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `id`: this node's ZenohID (random when absent).
    pub id: Option<ZenohId>,
    /// `mode`: client, peer or router.
    pub mode: WhatAmI,
    /// `connect.endpoints`: where to connect.
    pub connect: Vec<Endpoint>,
    /// `listen.endpoints`: where to listen.
    pub listen: Vec<Endpoint>,
    /// `scouting.multicast.enabled`: when false, no multicast socket is opened at all.
    pub multicast_scouting: bool,
    /// The other `scouting.*` keys.
    pub scouting: ScoutingConfig,
    /// `transport.link.tx.lease` (ms): how long peers wait for traffic from this node.
    pub lease: Duration,
    /// `transport.link.tx.batch_size`: largest batch this node accepts.
    pub batch_size: u16,
    /// `transport.link.tcp.so_sndbuf` / `so_rcvbuf`: kernel buffer sizes of TCP links
    /// (an endpoint's `#so_sndbuf=N;so_rcvbuf=N` overrides them for its links).
    pub tcp_buffers: TcpBuffers,
    /// `transport.link.tls`: certificates, keys and options of `tls/` and `quic/`
    /// endpoints (an endpoint's `#` configuration overrides them for its links).
    pub tls: TlsSettings,
    /// `connect.timeout_ms`: how long a client's opening tries its connect endpoints: 0
    /// once each, -1 until one answers. `None`: Zenoh's default, 0 for clients. (A
    /// router opens at once; a peer waits at most `open_timeout` for its connect
    /// endpoints, then opens with whatever answered.)
    pub connect_timeout_ms: Option<i64>,
    /// `connect.exit_on_failure`: whether a client's opening fails when no endpoint
    /// answered in that time (else it goes on trying in the background). `None`: Zenoh's
    /// default, true for clients.
    pub connect_exit_on_failure: Option<bool>,
    /// `transport.unicast.open_timeout` (ms).
    pub open_timeout: Duration,
    /// `transport.unicast.accept_timeout` (ms).
    pub accept_timeout: Duration,
    /// `transport.link.rx.max_message_size`: the largest message reassembled from
    /// fragments (bytes); a larger one is discarded, counted and logged.
    pub max_message_size: usize,
    /// `transport.link.rx.reassembly_budget` (weft's own key): memory that partially
    /// reassembled messages may hold across all of this node's transports (bytes).
    pub reassembly_budget: usize,
    /// `transport.link.rx.reassembly_share` (weft's own key): what one transport's
    /// partially reassembled messages may hold together (bytes), so that one peer's
    /// endless fragments cannot hold the whole budget; a message that would take more is
    /// discarded (`over_share`). Default 64 MiB, or `max_message_size` when that is
    /// configured larger and this is not.
    pub reassembly_share: usize,
    /// `transport.link.tx.queue.congestion_control.drop.wait_before_drop` (µs): how long
    /// a `drop` message waits for room in its destination's queue before it is dropped.
    pub wait_before_drop: Duration,
    /// `transport.link.tx.queue.congestion_control.block.wait_before_close` (µs): how
    /// long a `block` message waits for room before its destination is closed.
    pub wait_before_close: Duration,
    /// `transport.link.tx.overflow_budget` (weft's own key): memory that forwarded
    /// `block` messages waiting for room may hold across all of this node's transports
    /// (bytes); a destination that would take more is closed.
    pub overflow_budget: usize,
    /// `transport.unicast.accept_pending`: handshakes in progress at most; a connection
    /// arriving beyond is closed at once.
    pub accept_pending: usize,
    /// `transport.unicast.max_sessions`: sessions at most; a handshake completed beyond
    /// is answered with Close(MAX_SESSIONS).
    pub max_sessions: usize,
    /// `transport.unicast.qos.enabled`.
    pub qos: bool,
    /// `transport.multicast.join_interval` (ms): time between two Joins sent to a
    /// multicast group.
    pub multicast_join_interval: Duration,
    /// `transport.multicast.max_sessions`: members of a multicast group kept at most.
    pub multicast_max_sessions: usize,
    /// `transport.multicast.qos.enabled`: QoS on multicast groups (members must agree).
    pub multicast_qos: bool,
    /// `queries_default_timeout` (ms).
    pub queries_default_timeout: Duration,
    /// `timestamping.enabled`: add a timestamp to published data.
    pub timestamping: Option<bool>,
    /// `plugins`: the plugins' sections, as written (each plugin validates its own).
    pub plugins: Option<Value>,
    /// `metadata`: what the configuration says about this node, as written (a router
    /// shows it in its admin space).
    pub metadata: Option<Value>,
    /// `access_control`: which messages each transport may carry (Zenoh's ACL).
    pub access_control: crate::acl::AclConfig,
    /// `adminspace.permissions.read` / `.write`: whether queries on a router's admin space
    /// are answered, and whether it takes writes (weft's has nothing to write).
    pub adminspace_read: bool,
    /// See `adminspace_read`.
    pub adminspace_write: bool,
    /// `transport.auth.usrpwd.*`: user/password authentication (the credentials this
    /// node presents, the dictionary it checks); `None` when off.
    pub usrpwd: Option<Arc<UsrPwd>>,
    /// `transport.auth.throttle.*` (weft's own keys): refusing, for a while, the
    /// handshakes of an address whose authentications keep failing; off by default.
    pub auth_throttle: AuthThrottle,
}

/// `transport.auth.throttle.*` (weft's own keys; Zenoh has none): after `failures`
/// failed authentications in a row from one IP address, further connections from that
/// address are closed at once, unanswered, for `backoff` after the last failure (a
/// success from it starts the count again). Other addresses are not affected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthThrottle {
    /// `transport.auth.throttle.failures`: failures in a row before an address is
    /// refused; 0 (`null`, the default) turns throttling off.
    pub failures: usize,
    /// `transport.auth.throttle.backoff_ms`: how long an address is refused after its
    /// last failure (default 60 s).
    pub backoff: Duration,
}

impl Default for AuthThrottle {
    fn default() -> Self {
        Self {
            failures: 0,
            backoff: Duration::from_secs(60),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            id: None,
            mode: WhatAmI::Peer,
            connect: Vec::new(),
            listen: Vec::new(),
            multicast_scouting: true,
            scouting: ScoutingConfig::default(),
            lease: Duration::from_millis(10_000),
            batch_size: u16::MAX,
            tcp_buffers: TcpBuffers::default(),
            tls: TlsSettings::default(),
            connect_timeout_ms: None,
            connect_exit_on_failure: None,
            open_timeout: Duration::from_millis(10_000),
            accept_timeout: Duration::from_millis(10_000),
            max_message_size: 1 << 30,
            reassembly_budget: 1 << 30,
            reassembly_share: 64 << 20,
            wait_before_drop: Duration::from_micros(1000),
            wait_before_close: Duration::from_secs(5),
            overflow_budget: 256 << 20,
            accept_pending: 100,
            max_sessions: 1000,
            qos: true,
            multicast_join_interval: Duration::from_millis(2500),
            multicast_max_sessions: 1000,
            multicast_qos: false,
            queries_default_timeout: Duration::from_millis(10_000),
            timestamping: None,
            plugins: None,
            metadata: None,
            access_control: crate::acl::AclConfig::default(),
            adminspace_read: true,
            adminspace_write: false,
            usrpwd: None,
            auth_throttle: AuthThrottle::default(),
        }
    }
}

/// Scouting settings (`scouting.*`), Zenoh's defaults when absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScoutingConfig {
    /// `scouting.timeout` (ms): how long a client scouts for a router to connect to.
    pub timeout: Duration,
    /// `scouting.delay` (ms): how long opening a peer waits for the nodes it discovers.
    pub delay: Duration,
    /// `scouting.multicast.address`: the group and port (default `224.0.0.224:7446`).
    pub address: SocketAddr,
    /// `scouting.multicast.interface`: an interface name, or `None` for `"auto"` (the
    /// system's route for the group decides).
    pub interface: Option<String>,
    /// `scouting.multicast.ttl`: hops a Scout may cross (default 1).
    pub ttl: u32,
    /// `scouting.multicast.autoconnect`: the roles to connect to when discovered; `None`
    /// for the mode's default, Eclipse Zenoh 1.10.2's: routers connect to nothing,
    /// peers and clients to routers and peers.
    pub autoconnect: Option<WhatAmIMatcher>,
    /// `scouting.multicast.listen`: whether to answer Scouts; `None` for the default
    /// (every mode answers, as Eclipse Zenoh 1.10.2 does).
    pub listen: Option<bool>,
    /// `scouting.gossip.*`: learning of other nodes through the nodes connected.
    pub gossip: GossipConfig,
}

impl Default for ScoutingConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_millis(3000),
            delay: Duration::from_millis(500),
            address: SocketAddr::from(([224, 0, 0, 224], 7446)),
            interface: None,
            ttl: 1,
            autoconnect: None,
            listen: None,
            gossip: GossipConfig::default(),
        }
    }
}

impl ScoutingConfig {
    /// The roles a node of `mode` connects to when it discovers them.
    pub fn autoconnect_for(&self, mode: WhatAmI) -> WhatAmIMatcher {
        self.autoconnect.unwrap_or(match mode {
            WhatAmI::Router => WhatAmIMatcher(0),
            WhatAmI::Peer => WhatAmIMatcher(WhatAmI::Router.bit() | WhatAmI::Peer.bit()),
            WhatAmI::Client => WhatAmIMatcher(WhatAmI::Router.bit() | WhatAmI::Peer.bit()),
        })
    }

    /// Whether this node answers Scouts (per-mode values are resolved when parsing).
    pub fn answers_scouts(&self) -> bool {
        self.listen.unwrap_or(true)
    }
}

/// Parses a set of roles: `"router|peer"`, `"router,peer"`, `""` (none), or a list
/// `["router", "peer"]`.
pub fn parse_matcher(v: &Value) -> Option<WhatAmIMatcher> {
    let mut bits = 0u8;
    let mut add = |name: &str| -> Option<()> {
        bits |= match name.trim() {
            "" => 0,
            "router" => WhatAmI::Router.bit(),
            "peer" => WhatAmI::Peer.bit(),
            "client" => WhatAmI::Client.bit(),
            _ => return None,
        };
        Some(())
    };
    match v {
        Value::String(s) => {
            for name in s.split(['|', ',']) {
                add(name)?;
            }
        }
        Value::Array(list) => {
            for item in list {
                add(item.as_str()?)?;
            }
        }
        _ => return None,
    }
    Some(WhatAmIMatcher(bits))
}

impl Config {
    /// Parses a JSON5 configuration; returns it with warnings about unknown keys.
    pub fn from_json5(text: &str) -> Result<(Self, Vec<String>), ConfigError> {
        let root: Value = json5::from_str(text).map_err(|e| ConfigError::Syntax(e.to_string()))?;
        Self::from_value(&root)
    }

    /// Applies a `KEY:VALUE` setting, as zenohd's and Zenoh's tools' `--cfg` do, to the
    /// parsed document `root`: KEY is a `/`-separated path (its objects are made where
    /// missing), VALUE is JSON5 and replaces what KEY held.
    pub fn apply_setting(root: &mut Value, setting: &str) -> Result<(), ConfigError> {
        let invalid = |reason: String| ConfigError::InvalidSetting {
            setting: setting.to_string(),
            reason,
        };
        let (path, value) = setting
            .split_once(':')
            .ok_or_else(|| invalid("expected KEY:VALUE".into()))?;
        let value: Value =
            json5::from_str(value).map_err(|e| invalid(format!("the value is not JSON5: {e}")))?;
        let mut node = root;
        for key in path.split('/').filter(|k| !k.is_empty()) {
            if !node.is_object() {
                *node = Value::Object(serde_json::Map::new());
            }
            node = node
                .as_object_mut()
                .expect("made an object")
                .entry(key)
                .or_insert(Value::Null);
        }
        *node = value;
        Ok(())
    }

    /// As [`Config::from_json5`], from the parsed document (for a tool that edits it
    /// first, e.g. weftd's `--cfg KEY:VALUE`).
    pub fn from_value(root: &Value) -> Result<(Self, Vec<String>), ConfigError> {
        if !root.is_object() {
            return Err(ConfigError::Syntax(
                "the top level must be an object".into(),
            ));
        }
        let (tree, unimplemented) = schema::read(root)?;
        let mut config = Self::default();
        // The mode first: per-mode values (`{ router: .., peer: .., client: .. }`) use it.
        if let Some(mode) = &tree.mode {
            config.mode = mode.0 .0;
        }
        let mode = config.mode;
        let mut warnings = Vec::new();
        config.read(&tree)?;
        // Keys weft does not implement: told once, grouped, after the others.
        let mut keys = Vec::new();
        for path in unimplemented {
            let pointer = format!("/{}", path.replace('.', "/"));
            match root.pointer(&pointer) {
                Some(v) => unimplemented::leaves(&path, v, &mut keys),
                None => keys.push(path),
            }
        }
        warnings.extend(unimplemented::warnings(&keys));
        let listens = !config.listen.is_empty();
        config.usrpwd =
            usrpwd::build(&tree.transport.auth.usrpwd, mode, listens, &mut warnings)?.map(Arc::new);
        Ok((config, warnings))
    }

    /// What making a link to or from `endpoint` takes: its TCP buffer sizes and the TLS
    /// settings.
    pub fn link_settings(&self, endpoint: &Endpoint) -> LinkSettings {
        LinkSettings {
            tcp: self.tcp_buffers.for_endpoint(endpoint),
            tls: self.tls.clone(),
        }
    }

    /// Reads and parses a JSON5 file.
    pub fn from_file(path: &str) -> Result<(Self, Vec<String>), ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Unreadable {
            path: path.into(),
            reason: e.to_string(),
        })?;
        Self::from_json5(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_zenoh_keys_and_warns_about_unknown_ones() {
        let text = r#"{
            mode: "client",
            connect: { endpoints: ["tcp/127.0.0.1:7447"] },
            listen: { endpoints: { router: ["tcp/[::]:7447"], peer: ["tcp/[::]:0"] } },
            scouting: { multicast: { enabled: false } },
            transport: { link: { tx: { lease: 3000, batch_size: 8192 } } },
            open: { return_conditions: { declares: false } },
        }"#;
        let (c, warnings) = Config::from_json5(text).unwrap();
        assert_eq!(c.mode, WhatAmI::Client);
        assert_eq!(c.connect[0].to_string(), "tcp/127.0.0.1:7447");
        assert!(c.listen.is_empty(), "no listen endpoint for clients");
        assert!(!c.multicast_scouting);
        assert_eq!(c.lease, Duration::from_millis(3000));
        assert_eq!(c.batch_size, 8192);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].contains("open.return_conditions.declares"),
            "{warnings:?}"
        );
    }

    #[test]
    fn multicast_transport_keys_are_read_and_compression_is_refused() {
        let (c, warnings) = Config::from_json5("{}").unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(c.multicast_join_interval, Duration::from_millis(2500));
        assert_eq!(c.multicast_max_sessions, 1000);
        assert!(!c.multicast_qos);
        let text = r#"{ transport: { multicast: { join_interval: 300, max_sessions: 4,
            qos: { enabled: true }, compression: { enabled: false } } } }"#;
        let (c, warnings) = Config::from_json5(text).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(c.multicast_join_interval, Duration::from_millis(300));
        assert_eq!(c.multicast_max_sessions, 4);
        assert!(c.multicast_qos);
        let e =
            Config::from_json5("{ transport: { multicast: { compression: { enabled: true } } } }")
                .unwrap_err();
        assert!(
            e.to_string()
                .contains("transport.multicast.compression.enabled")
                && e.to_string()
                    .contains("weft does not compress multicast batches"),
            "{e}"
        );
    }

    #[test]
    fn a_key_zenoh_does_not_have_is_refused_naming_its_full_path() {
        for (text, key) in [
            ("{ acess_control: { enabled: true } }", "acess_control"),
            (
                "{ transport: { unicast: { acept_timeout: 1000 } } }",
                "transport.unicast.acept_timeout",
            ),
            (
                r#"{ transport: { auth: { usrpwd: { passwrd: "p" } } } }"#,
                "transport.auth.usrpwd.passwrd",
            ),
            (
                r#"{ transport: { link: { tls: { certificate_revocation_list: "crl.pem" } } } }"#,
                "transport.link.tls.certificate_revocation_list",
            ),
            (
                "{ transport: { link: { tls: { ocsp_stapling: true } } } }",
                "transport.link.tls.ocsp_stapling",
            ),
            ("{ frobnicate: 1 }", "frobnicate"),
        ] {
            match Config::from_json5(text) {
                Err(ConfigError::UnknownKey { key: k, .. }) => assert_eq!(k, key, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        // Inside access_control, its reader names the key.
        let e = Config::from_json5("{ access_control: { enable: true } }").unwrap_err();
        assert!(e.to_string().contains("access_control.enable"), "{e}");
        let e =
            Config::from_json5(r#"{ access_control: { rules: [{ id: "r", mesages: ["put"] }] } }"#)
                .unwrap_err();
        assert!(
            e.to_string().contains(
                "`access_control.rules[0].mesages`: unknown field (known: id, messages, flows"
            ),
            "{e}"
        );
        let mut root = json5::from_str("{}").unwrap();
        Config::apply_setting(&mut root, "transport/unicast/acept_timeout:5").unwrap();
        let e = Config::from_value(&root).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("unknown configuration key `transport.unicast.acept_timeout`"),
            "{e}"
        );
    }

    #[test]
    fn scouting_keys_with_zenoh_defaults_and_per_mode_values() {
        let (c, w) = Config::from_json5("{}").unwrap();
        assert!(w.is_empty());
        assert!(c.multicast_scouting);
        assert_eq!(c.scouting.address.to_string(), "224.0.0.224:7446");
        assert_eq!(c.scouting.ttl, 1);
        assert_eq!(c.scouting.timeout, Duration::from_millis(3000));
        let roles = |m: WhatAmIMatcher| m.roles().collect::<Vec<_>>();
        assert!(roles(c.scouting.autoconnect_for(WhatAmI::Router)).is_empty());
        assert_eq!(
            roles(c.scouting.autoconnect_for(WhatAmI::Peer)),
            [WhatAmI::Router, WhatAmI::Peer]
        );
        assert_eq!(
            roles(c.scouting.autoconnect_for(WhatAmI::Client)),
            [WhatAmI::Router, WhatAmI::Peer]
        );
        assert!(c.scouting.answers_scouts());

        let text = r#"{
            mode: "peer",
            scouting: { timeout: 500, delay: 100, multicast: {
                address: "224.0.0.225:17446", interface: "veth0", ttl: 4,
                autoconnect: { router: [], peer: "router" }, listen: { peer: false },
            } },
        }"#;
        let (c, w) = Config::from_json5(text).unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.scouting.address.to_string(), "224.0.0.225:17446");
        assert_eq!(c.scouting.interface.as_deref(), Some("veth0"));
        assert_eq!(c.scouting.ttl, 4);
        assert_eq!(c.scouting.delay, Duration::from_millis(100));
        assert_eq!(
            roles(c.scouting.autoconnect_for(WhatAmI::Peer)),
            [WhatAmI::Router]
        );
        assert!(!c.scouting.answers_scouts());

        for bad in [
            r#"{ scouting: { multicast: { address: "10.0.0.1:7446" } } }"#,
            r#"{ scouting: { multicast: { ttl: 0 } } }"#,
            r#"{ scouting: { multicast: { autoconnect: "router|server" } } }"#,
            r#"{ scouting: { multicast: { interface: "" } } }"#,
        ] {
            assert!(
                matches!(
                    Config::from_json5(bad),
                    Err(ConfigError::InvalidValue { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn gossip_keys_with_zenoh_defaults_and_per_mode_values() {
        let roles = |m: WhatAmIMatcher| m.roles().collect::<Vec<_>>();
        let (c, w) = Config::from_json5("{}").unwrap();
        assert!(w.is_empty());
        let g = &c.scouting.gossip;
        assert!(g.enabled && !g.multihop);
        assert_eq!(
            roles(g.target_for(WhatAmI::Router)),
            [WhatAmI::Router, WhatAmI::Peer]
        );
        assert!(roles(g.target_for(WhatAmI::Client)).is_empty());
        assert!(roles(g.autoconnect_for(WhatAmI::Router)).is_empty());
        assert_eq!(
            roles(g.autoconnect_for(WhatAmI::Peer)),
            [WhatAmI::Router, WhatAmI::Peer, WhatAmI::Client]
        );
        assert_eq!(g.strategy_to(WhatAmI::Peer), AutoconnectStrategy::Always);

        // Zenoh's own default file's shapes, and rmw_zenoh's.
        let text = r#"{
            mode: "peer",
            scouting: { gossip: {
                enabled: true, multihop: true,
                target: { router: ["router", "peer"], peer: ["router"] },
                autoconnect: { router: "", peer: "router|peer" },
                autoconnect_strategy: { peer: { to_router: "always", to_peer: "greater-zid" } },
            } },
        }"#;
        let (c, w) = Config::from_json5(text).unwrap();
        assert!(w.is_empty(), "{w:?}");
        let g = &c.scouting.gossip;
        assert!(g.multihop);
        assert_eq!(roles(g.target_for(WhatAmI::Peer)), [WhatAmI::Router]);
        assert_eq!(
            roles(g.autoconnect_for(WhatAmI::Peer)),
            [WhatAmI::Router, WhatAmI::Peer]
        );
        assert_eq!(g.strategy_to(WhatAmI::Router), AutoconnectStrategy::Always);
        assert_eq!(
            g.strategy_to(WhatAmI::Peer),
            AutoconnectStrategy::GreaterZid
        );
        let (c, _) = Config::from_json5(
            r#"{ scouting: { gossip: { enabled: false, autoconnect_strategy: "greater-zid" } } }"#,
        )
        .unwrap();
        assert!(!c.scouting.gossip.enabled);
        assert_eq!(
            c.scouting.gossip.strategy_to(WhatAmI::Client),
            AutoconnectStrategy::GreaterZid
        );

        for (bad, key) in [
            (
                r#"{ scouting: { gossip: { enabled: "yes" } } }"#,
                "scouting.gossip.enabled",
            ),
            (
                r#"{ scouting: { gossip: { multihop: 1 } } }"#,
                "scouting.gossip.multihop",
            ),
            (
                r#"{ scouting: { gossip: { target: ["router", "client"] } } }"#,
                "scouting.gossip.target",
            ),
            (
                r#"{ scouting: { gossip: { autoconnect: "peer|server" } } }"#,
                "scouting.gossip.autoconnect",
            ),
            (
                r#"{ scouting: { gossip: { autoconnect_strategy: "sometimes" } } }"#,
                "scouting.gossip.autoconnect_strategy",
            ),
            (
                r#"{ scouting: { gossip: { autoconnect_strategy: { to_robot: "always" } } } }"#,
                "scouting.gossip.autoconnect_strategy",
            ),
        ] {
            match Config::from_json5(bad) {
                Err(ConfigError::InvalidValue { key: k, .. }) => assert_eq!(k, key, "{bad}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn invalid_values_name_the_key_and_the_value() {
        let e = Config::from_json5(r#"{ transport: { link: { tx: { lease: "soon" } } } }"#)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid value \"soon\" for `transport.link.tx.lease`: expected a positive number of milliseconds"
        );
        let e = Config::from_json5(r#"{ mode: "server" }"#).unwrap_err();
        assert!(e.to_string().contains("`mode`"));
        let e =
            Config::from_json5(r#"{ connect: { endpoints: ["127.0.0.1:7447"] } }"#).unwrap_err();
        assert!(e.to_string().contains("connect.endpoints"));
        assert!(matches!(
            Config::from_json5("{ mode: "),
            Err(ConfigError::Syntax(_))
        ));
    }

    #[test]
    fn session_limits_are_read_from_zenoh_keys_with_zenoh_defaults() {
        let c = Config::default();
        assert_eq!((c.accept_pending, c.max_sessions), (100, 1000));
        let (c, warnings) = Config::from_json5(
            "{ transport: { unicast: { accept_pending: 7, max_sessions: 20000 } } }",
        )
        .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!((c.accept_pending, c.max_sessions), (7, 20000));
        let e = Config::from_json5("{ transport: { unicast: { max_sessions: 0 } } }").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid value 0 for `transport.unicast.max_sessions`: expected a positive whole number"
        );
    }

    #[test]
    fn security_sections_as_zenoh_ships_them_are_accepted_silently() {
        // Zenoh 1.10's DEFAULT_CONFIG.json5 values for these sections.
        let text = r#"{ transport: {
            auth: { usrpwd: { user: null, password: null, dictionary_file: null },
                    pubkey: { public_key_pem: null, private_key_pem: null, public_key_file: null,
                              private_key_file: null, key_size: null, known_keys_file: null } },
            link: { tls: { root_ca_certificate: null, listen_private_key: null,
                           listen_certificate: null, enable_mtls: false,
                           connect_private_key: null, connect_certificate: null,
                           verify_name_on_connect: true, close_link_on_expiration: false } } },
          access_control: { enabled: false, default_permission: "deny",
                            rules: [{ id: "r", messages: ["put"], permission: "allow",
                                      key_exprs: ["demo/**"] }] } }"#;
        let (_, warnings) = Config::from_json5(text).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn a_mistake_in_access_control_is_refused_even_when_it_is_disabled() {
        let text = r#"{ access_control: { enabled: false,
                         rules: [{ id: "r", messages: ["publish"], permission: "allow",
                                   key_exprs: ["a"] }] } }"#;
        let e = Config::from_json5(text).unwrap_err();
        assert!(matches!(e, ConfigError::Acl(_)), "{e}");
        assert!(
            e.to_string().contains("access_control.rules[0].messages"),
            "{e}"
        );
    }

    #[test]
    fn deny_intersecting_is_weft_s_own_access_control_key() {
        let (config, warnings) =
            Config::from_json5("{ access_control: { deny_intersecting: true } }").unwrap();
        assert!(config.access_control.deny_intersecting);
        assert!(warnings.is_empty(), "{warnings:?}");
        let (config, _) = Config::from_json5("{ access_control: {} }").unwrap();
        assert!(!config.access_control.deny_intersecting, "off by default");
        let e =
            Config::from_json5(r#"{ access_control: { deny_intersecting: "yes" } }"#).unwrap_err();
        assert!(
            e.to_string().contains("access_control.deny_intersecting"),
            "{e}"
        );
    }

    #[test]
    fn access_control_subjects_by_user_or_certificate_name_are_accepted() {
        let text = r#"{ access_control: { enabled: true, default_permission: "allow",
            rules: [{ id: "r", messages: ["put"], permission: "deny", key_exprs: ["**"] }],
            subjects: [{ id: "s" }, { id: "mallory", usernames: ["mallory"] },
                       { id: "cert", cert_common_names: ["client-a"] }],
            policies: [{ rules: ["r"], subjects: ["mallory", "cert"] }] } }"#;
        let (config, _) = Config::from_json5(text).unwrap();
        let subjects = &config.access_control.subjects;
        assert_eq!(subjects[1].usernames, Some(vec!["mallory".to_owned()]));
        assert_eq!(
            subjects[2].cert_common_names,
            Some(vec!["client-a".to_owned()])
        );
    }

    #[test]
    fn security_settings_weft_cannot_honour_refuse_the_configuration() {
        let refused = [
            (
                r#"{ transport: { auth: { pubkey: { known_keys_file: "k.pem" } } } }"#,
                "transport.auth.pubkey.known_keys_file",
            ),
            (
                r#"{ transport: { auth: { pubkey: { private_key_pem: "-----BEGIN" } } } }"#,
                "transport.auth.pubkey.private_key_pem",
            ),
            (
                "{ transport: { auth: { pubkey: { key_size: 2048 } } } }",
                "transport.auth.pubkey.key_size",
            ),
            (
                r#"{ transport: { link: { protocols: ["tls"] } } }"#,
                "transport.link.protocols",
            ),
            (
                r#"{ low_pass_filter: [{ messages: ["put"], key_exprs: ["**"], size_limit: 1024 }] }"#,
                "low_pass_filter",
            ),
            // An older Zenoh's name, accepted only when it asks for nothing.
            (
                r#"{ transport: { link: { tls: { server_private_key: "k.pem" } } } }"#,
                "transport.link.tls.server_private_key",
            ),
        ];
        for (text, key) in refused {
            let e = Config::from_json5(text).unwrap_err();
            assert!(
                matches!(e, ConfigError::UnsupportedSecurity { .. }),
                "{text}: {e}"
            );
            let message = e.to_string();
            assert!(message.starts_with(&format!("`{key}")), "{message}");
            assert!(message.contains("refuses to run"), "{message}");
        }
    }

    #[test]
    fn tls_keys_are_read_and_checked() {
        let text = r#"{ transport: { link: { tls: {
            root_ca_certificate: "/etc/ca.pem", listen_certificate: "/etc/cert.pem",
            listen_private_key_base64: "QUJD", enable_mtls: true,
            verify_name_on_connect: false, close_link_on_expiration: true, so_rcvbuf: 65536,
        } } } }"#;
        let (c, w) = Config::from_json5(text).unwrap();
        assert!(w.is_empty(), "{w:?}");
        use crate::link::tls::PemSource;
        assert_eq!(
            c.tls.root_ca_certificate,
            Some(PemSource::File("/etc/ca.pem".into()))
        );
        assert_eq!(
            c.tls.listen_private_key,
            Some(PemSource::Inline(b"ABC"[..].into()))
        );
        assert!(c.tls.enable_mtls && !c.tls.verify_name_on_connect);
        assert!(c.tls.close_link_on_expiration);
        assert_eq!(c.tls.buffers.recv, 65536);
        assert_eq!(Config::default().tls, TlsSettings::default());
        for (bad, key) in [
            (
                r#"{ transport: { link: { tls: { root_ca_certificate: "/a",
                     root_ca_certificate_base64: "QUJD" } } } }"#,
                "transport.link.tls.root_ca_certificate_base64",
            ),
            (
                r#"{ transport: { link: { tls: { connect_private_key_base64: "not base64!" } } } }"#,
                "transport.link.tls.connect_private_key_base64",
            ),
            (
                r#"{ transport: { link: { tls: { enable_mtls: "yes" } } } }"#,
                "transport.link.tls.enable_mtls",
            ),
        ] {
            let e = Config::from_json5(bad).unwrap_err();
            assert!(matches!(e, ConfigError::InvalidValue { .. }), "{bad}: {e}");
            assert!(e.to_string().contains(key), "{e}");
            assert!(
                !e.to_string().contains("not base64!"),
                "a key is never printed: {e}"
            );
        }
    }

    #[test]
    fn config_keys_set_their_slot_once() {
        use crate::link::tls::PemSource;
        let text = r#"{ transport: { link: { tls: {
            root_ca_certificate: "/ca.pem", listen_private_key_base64: "QUJD",
            enable_mtls: true, connect_certificate: null, connect_private_key: "",
        } } } }"#;
        let (c, _) = Config::from_json5(text).unwrap();
        let s = c.tls;
        assert_eq!(
            s.root_ca_certificate,
            Some(PemSource::File("/ca.pem".into()))
        );
        assert_eq!(
            s.listen_private_key,
            Some(PemSource::Inline(b"ABC"[..].into()))
        );
        assert!(s.enable_mtls && s.verify_name_on_connect);
        assert!(s.connect_certificate.is_none() && s.connect_private_key.is_none());
        assert_eq!(
            format!("{:?}", s.listen_private_key),
            "Some(Inline(3 bytes))"
        );
        // Per mode, as every key.
        let text = r#"{ mode: "client", transport: { link: { tls: {
            verify_name_on_connect: { client: false, router: true } } } } }"#;
        assert!(
            !Config::from_json5(text)
                .unwrap()
                .0
                .tls
                .verify_name_on_connect
        );
        for (bad, key) in [
            (
                r#"{ transport: { link: { tls: { listen_certificate: "/a",
                     listen_certificate_base64: "QUJD" } } } }"#,
                "transport.link.tls.listen_certificate_base64",
            ),
            (
                r#"{ transport: { link: { tls: { listen_certificate_base64: "*" } } } }"#,
                "transport.link.tls.listen_certificate_base64",
            ),
            (
                r#"{ transport: { link: { tls: { listen_private_key: 7 } } } }"#,
                "transport.link.tls.listen_private_key",
            ),
        ] {
            match Config::from_json5(bad) {
                Err(ConfigError::InvalidValue { key: k, value, .. }) => {
                    assert_eq!(k, key, "{bad}");
                    if k.contains("private_key") {
                        assert_eq!(value, "(secret)");
                    }
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
        // An endpoint's forms are not the configuration's.
        let e = Config::from_json5(
            r#"{ transport: { link: { tls: { listen_certificate_file: "/x" } } } }"#,
        )
        .unwrap_err();
        assert!(matches!(e, ConfigError::UnknownKey { .. }), "{e}");
    }

    #[test]
    fn the_reassembly_share_follows_a_larger_max_message_size_unless_set() {
        let share = |text: &str| Config::from_json5(text).unwrap().0.reassembly_share;
        assert_eq!(Config::default().reassembly_share, 64 << 20);
        assert_eq!(share("{}"), 64 << 20);
        let rx = |inner: &str| format!("{{ transport: {{ link: {{ rx: {{ {inner} }} }} }} }}");
        assert_eq!(share(&rx("max_message_size: 1048576")), 64 << 20);
        assert_eq!(share(&rx("max_message_size: 536870912")), 512 << 20);
        assert_eq!(
            share(&rx(
                "max_message_size: 536870912, reassembly_share: 1048576"
            )),
            1 << 20
        );
    }

    #[test]
    fn auth_throttling_is_off_unless_failures_are_set() {
        let throttle = |text: &str| Config::from_json5(text).unwrap().0.auth_throttle;
        assert_eq!(throttle("{}").failures, 0);
        let t =
            throttle("{ transport: { auth: { throttle: { failures: 5, backoff_ms: 2000 } } } }");
        assert_eq!(t.failures, 5);
        assert_eq!(t.backoff, Duration::from_secs(2));
        assert_eq!(
            throttle("{ transport: { auth: { throttle: { failures: null } } } }").failures,
            0
        );
    }

    #[test]
    fn congestion_waits_are_read_from_zenoh_keys_in_microseconds() {
        let c = Config::default();
        assert_eq!(c.wait_before_drop, Duration::from_micros(1000));
        assert_eq!(c.wait_before_close, Duration::from_secs(5));
        assert_eq!(c.overflow_budget, 256 << 20);
        let text = "{ transport: { link: { tx: { overflow_budget: 1048576, queue: { \
                    congestion_control: { drop: { wait_before_drop: 0 }, \
                    block: { wait_before_close: 250000 } } } } } } }";
        let (c, w) = Config::from_json5(text).unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.wait_before_drop, Duration::ZERO);
        assert_eq!(c.wait_before_close, Duration::from_millis(250));
        assert_eq!(c.overflow_budget, 1 << 20);
        let text = "{ transport: { link: { tx: { queue: { congestion_control: { \
                    block: { wait_before_close: 0 } } } } } } }";
        assert_eq!(
            Config::from_json5(text).unwrap_err().to_string(),
            "invalid value 0 for `transport.link.tx.queue.congestion_control.block.\
             wait_before_close`: expected a positive number of microseconds"
        );
    }

    #[test]
    fn tcp_buffer_sizes_are_read_from_zenoh_keys_and_checked() {
        let (c, w) = Config::from_json5("{}").unwrap();
        assert!(w.is_empty());
        assert_eq!(c.tcp_buffers, TcpBuffers::default());
        let text = "{ transport: { link: { tcp: { so_sndbuf: 65536, so_rcvbuf: 131072 } } } }";
        let (c, w) = Config::from_json5(text).unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!((c.tcp_buffers.send, c.tcp_buffers.recv), (65536, 131072));
        let e =
            Config::from_json5("{ transport: { link: { tcp: { so_rcvbuf: 100 } } } }").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid value 100 for `transport.link.tcp.so_rcvbuf`: expected a buffer size in bytes, 4096..=1073741824"
        );
        let e =
            Config::from_json5(r#"{ listen: { endpoints: ["tcp/127.0.0.1:0#so_sndbuf=big"] } }"#)
                .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid endpoint in `listen.endpoints`: endpoint `tcp/127.0.0.1:0#so_sndbuf=big`: \
             `so_sndbuf=big`: expected a buffer size in bytes, 4096..=1073741824"
        );
    }

    /// A file in a directory of its own under the system's temporary directory.
    fn temp_file(name: &str, contents: &str) -> String {
        let dir = std::env::temp_dir().join(format!("weft-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, contents).unwrap();
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn usrpwd_keys_give_credentials_and_a_dictionary() {
        let (c, w) = Config::from_json5("{}").unwrap();
        assert!(w.is_empty() && c.usrpwd.is_none());

        let dict = temp_file("users.txt", "alice:wonderland\n\nbob : builder\n");
        let text = format!(
            r#"{{ listen: {{ endpoints: ["tcp/127.0.0.1:0"] }}, transport: {{ auth: {{ usrpwd: {{
                user: "r1", password: "secret", dictionary_file: {dict:?} }} }} }} }}"#
        );
        let (c, w) = Config::from_json5(&text).unwrap();
        assert!(w.is_empty(), "{w:?}");
        let usrpwd = c.usrpwd.unwrap();
        assert_eq!(usrpwd.user(), Some("r1"));
        let d = usrpwd.dictionary().unwrap();
        assert!(d.contains("alice") && d.contains("bob") && d.len() == 2);
        assert!(!format!("{usrpwd:?}").contains("secret"));

        // Credentials alone: a client's settings.
        let text = r#"{ mode: "client", transport: { auth: { usrpwd: {
            user: "alice", password: "wonderland", dictionary_file: null } } } }"#;
        let (c, w) = Config::from_json5(text).unwrap();
        assert!(w.is_empty(), "{w:?}");
        let usrpwd = c.usrpwd.unwrap();
        assert_eq!(usrpwd.user(), Some("alice"));
        assert!(usrpwd.dictionary().is_none());

        // Credentials alone on a node that listens: it will refuse everyone, as Zenoh.
        let text = r#"{ listen: { endpoints: ["tcp/127.0.0.1:0"] },
            transport: { auth: { usrpwd: { user: "alice", password: "wonderland" } } } }"#;
        let (_, w) = Config::from_json5(text).unwrap();
        assert!(w[0].contains("will be refused"), "{w:?}");
        // An empty dictionary: accepted, with a warning.
        let empty = temp_file("empty.txt", "\n");
        let text =
            format!("{{ transport: {{ auth: {{ usrpwd: {{ dictionary_file: {empty:?} }} }} }} }}");
        let (c, w) = Config::from_json5(&text).unwrap();
        assert!(c.usrpwd.unwrap().dictionary().unwrap().is_empty());
        assert!(w[0].contains("lists no user"), "{w:?}");
    }

    #[test]
    fn bad_usrpwd_settings_are_errors_naming_the_key() {
        let e = Config::from_json5(r#"{ transport: { auth: { usrpwd: { user: "u" } } } }"#)
            .unwrap_err();
        assert!(
            e.to_string().contains("`transport.auth.usrpwd.password`"),
            "{e}"
        );
        let e = Config::from_json5(r#"{ transport: { auth: { usrpwd: { password: "p" } } } }"#)
            .unwrap_err();
        assert!(
            e.to_string().contains("`transport.auth.usrpwd.user`"),
            "{e}"
        );
        assert!(
            !e.to_string().contains("\"p\""),
            "the password is not shown: {e}"
        );
        let e = Config::from_json5("{ transport: { auth: { usrpwd: { user: 7 } } } }").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid value 7 for `transport.auth.usrpwd.user`: expected a non-empty string, or null"
        );

        let missing = std::env::temp_dir().join("weft-no-such-dir/users.txt");
        let text = format!(
            "{{ transport: {{ auth: {{ usrpwd: {{ dictionary_file: {:?} }} }} }} }}",
            missing.to_string_lossy()
        );
        let e = Config::from_json5(&text).unwrap_err();
        assert!(matches!(e, ConfigError::InvalidFile { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("`transport.auth.usrpwd.dictionary_file`"),
            "{e}"
        );
        let bad = temp_file("bad.txt", "alice:wonderland\nbob\n");
        let text =
            format!("{{ transport: {{ auth: {{ usrpwd: {{ dictionary_file: {bad:?} }} }} }} }}");
        let e = Config::from_json5(&text).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "invalid file {bad} for `transport.auth.usrpwd.dictionary_file`: line 2: \
                 expected `user:password`"
            )
        );
        let bad = temp_file("nopassword.txt", "alice:\n");
        let text =
            format!("{{ transport: {{ auth: {{ usrpwd: {{ dictionary_file: {bad:?} }} }} }} }}");
        assert!(Config::from_json5(&text)
            .unwrap_err()
            .to_string()
            .ends_with("line 1: empty password"));
    }

    #[test]
    fn keys_weft_does_not_implement_are_told_once_grouped_by_section() {
        let keys: Vec<String> = [
            "a.b.c",
            "a.b.d",
            "x",
            "routing.router.peers_failover_brokering",
            "a.e",
        ]
        .iter()
        .map(|k| (*k).to_string())
        .collect();
        let w = unimplemented::warnings(&keys);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("`routing.router.peers_failover_brokering` ignored: removed"));
        assert_eq!(
            w[1],
            "4 configuration keys weft does not implement, ignored: a.b.{c, d}, x, a.e"
        );
        assert!(unimplemented::warnings(&[]).is_empty());
    }
}
