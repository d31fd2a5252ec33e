//! The key tree of a configuration file: every key of Eclipse Zenoh 1.10's configuration,
//! and weft's own few, declared once each as a field of a section below, with the kind of
//! value it takes.
//!
//! Each section refuses keys it does not declare (`deny_unknown_fields`), so a misspelled
//! key is an error naming its full path instead of a setting that silently does nothing:
//! Zenoh's own configuration refuses unknown keys the same way. The type of a field says
//! what weft does with the key:
//!
//! - [`Setting<T>`] or [`Checked<T>`]: read and checked as a `T` (`config::values`); any
//!   [`Setting`] may also be given per mode (`{ router: .., peer: .., client: .. }`).
//! - [`Leaf`]: a Zenoh key weft does not implement: any value, reported in a warning
//!   (the keys are collected by [`read`]).
//! - [`FailClosed`]: a security setting weft does not implement: refused unless it asks
//!   for nothing.
//! - [`Value`]: kept as written, for its own reader (`access_control`, `plugins`,
//!   `metadata`), or accepted silently where weft has nothing to do
//!   (`adminspace.enabled`, forced on as zenohd forces it; `connect.retry`, ...).

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use super::setting::{Checked, FailClosed, OrNull, Refusal, Setting, Why};
use super::values::{
    BatchSize, BufferSize, CertificateBase64, CertificateFile, Count, Endpoints as EndpointList,
    Flag, GossipTarget, Id, Interface, KeyBase64, KeyFile, Micros, Millis, Mode, MulticastAddress,
    Off, PositiveMicros, Roles, Strategy, Text, TimeoutMs, Ttl,
};
use super::ConfigError;

/// A Zenoh key weft does not implement: any value, reported.
pub(super) type Leaf = IgnoredAny;

/// The top level of a configuration.
#[derive(Deserialize, Default)]
#[serde(
    default,
    deny_unknown_fields,
    expecting = "an object of configuration sections"
)]
pub(super) struct Root {
    pub(super) id: Setting<Id>,
    pub(super) metadata: Option<Value>,
    pub(super) mode: Option<Checked<Mode>>,
    region_name: Leaf,
    gateway: Gateway,
    pub(super) connect: Connect,
    pub(super) listen: Listen,
    open: Open,
    pub(super) scouting: Scouting,
    pub(super) timestamping: Timestamping,
    pub(super) queries_default_timeout: Setting<Millis>,
    routing: Routing,
    aggregation: Aggregation,
    qos: Qos,
    pub(super) transport: Transport,
    pub(super) adminspace: AdminSpace,
    namespace: Leaf,
    downsampling: Leaf,
    /// Read and checked by `acl::config`, which knows Zenoh's keys and weft's own
    /// `deny_intersecting`.
    pub(super) access_control: Option<Value>,
    /// Messages dropped past a size: weft would let them through.
    low_pass_filter: FailClosed<LowPassFilter>,
    stats: Stats,
    plugins_loading: PluginsLoading,
    pub(super) plugins: Option<Value>,
}

/// `gateway`: how a router splits its regions.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Gateway {
    south: Leaf,
}

/// `connect`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Connect {
    pub(super) timeout_ms: Setting<OrNull<TimeoutMs>>,
    pub(super) endpoints: Setting<EndpointList>,
    pub(super) exit_on_failure: Setting<OrNull<Flag>>,
    /// weft retries on its own schedule.
    retry: Value,
}

/// `listen`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Listen {
    /// weft listens at once, or fails.
    timeout_ms: Value,
    pub(super) endpoints: Setting<EndpointList>,
    /// weft listens at once, or fails.
    exit_on_failure: Value,
    /// weft listens at once, or fails.
    retry: Value,
}

/// `open`: when opening a session returns.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Open {
    return_conditions: ReturnConditions,
}

/// `open.return_conditions`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct ReturnConditions {
    connect_scouted: Leaf,
    declares: Leaf,
}

/// `scouting`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Scouting {
    pub(super) timeout: Setting<Millis>,
    pub(super) delay: Setting<Millis>,
    pub(super) multicast: Multicast,
    pub(super) gossip: Gossip,
}

/// `scouting.multicast`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Multicast {
    pub(super) enabled: Setting<Flag>,
    pub(super) address: Setting<MulticastAddress>,
    pub(super) interface: Setting<Interface>,
    pub(super) ttl: Setting<Ttl>,
    pub(super) autoconnect: Setting<OrNull<Roles>>,
    autoconnect_strategy: Leaf,
    pub(super) listen: Setting<OrNull<Flag>>,
}

/// `scouting.gossip`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Gossip {
    pub(super) enabled: Setting<Flag>,
    pub(super) multihop: Setting<Flag>,
    pub(super) target: Setting<OrNull<GossipTarget>>,
    pub(super) autoconnect: Setting<OrNull<Roles>>,
    pub(super) autoconnect_strategy: Setting<OrNull<Strategy>>,
}

/// `timestamping`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Timestamping {
    pub(super) enabled: Setting<Flag>,
    drop_future_timestamp: Leaf,
}

/// `routing`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Routing {
    router: RouterRouting,
    /// Removed from Zenoh's use, still accepted by it.
    peer: Leaf,
    interests: Interests,
}

/// `routing.router`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct RouterRouting {
    /// Removed from Zenoh's use, still accepted by it.
    peers_failover_brokering: Leaf,
    linkstate: Linkstate,
}

/// `routing.router.linkstate`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Linkstate {
    transport_weights: Leaf,
}

/// `routing.interests`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Interests {
    timeout: Leaf,
}

/// `aggregation`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Aggregation {
    subscribers: Leaf,
    publishers: Leaf,
}

/// `qos`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Qos {
    publication: Leaf,
    network: Leaf,
}

/// `transport`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Transport {
    pub(super) unicast: Unicast,
    pub(super) multicast: MulticastTransport,
    pub(super) link: Link,
    shared_memory: SharedMemory,
    pub(super) auth: Auth,
}

/// `transport.unicast`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Unicast {
    pub(super) open_timeout: Setting<Millis>,
    pub(super) accept_timeout: Setting<Millis>,
    pub(super) accept_pending: Setting<Count>,
    pub(super) max_sessions: Setting<Count>,
    max_links: Leaf,
    lowlatency: Leaf,
    pub(super) qos: QosEnabled,
    compression: Unimplemented,
}

/// `transport.unicast.qos`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct QosEnabled {
    pub(super) enabled: Setting<Flag>,
}

/// A section with an `enabled` switch weft does not implement.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Unimplemented {
    enabled: Leaf,
}

/// `transport.multicast`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct MulticastTransport {
    pub(super) join_interval: Setting<Millis>,
    pub(super) max_sessions: Setting<Count>,
    pub(super) qos: QosEnabled,
    pub(super) compression: MulticastCompression,
}

/// `transport.multicast.compression`: weft sends and reads uncompressed batches only.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct MulticastCompression {
    pub(super) enabled: Setting<Off>,
}

/// `transport.link`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Link {
    /// The protocols sessions may be accepted and opened on: weft would not restrict them.
    protocols: FailClosed<ProtocolWhitelist>,
    pub(super) tx: Tx,
    pub(super) rx: Rx,
    pub(super) tls: Tls,
    pub(super) tcp: Tcp,
    unixpipe: UnixPipe,
}

/// `transport.link.tx`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Tx {
    sequence_number_resolution: Leaf,
    pub(super) lease: Setting<Millis>,
    /// weft keeps links alive at a fixed fraction of the lease.
    keep_alive: Value,
    pub(super) batch_size: Setting<BatchSize>,
    pub(super) queue: Queue,
    threads: Leaf,
    /// weft's own: memory that forwarded `block` messages waiting for room may hold.
    pub(super) overflow_budget: Setting<Count>,
}

/// `transport.link.tx.queue`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Queue {
    size: QueueSize,
    pub(super) congestion_control: CongestionControl,
    batching: Batching,
    allocation: Allocation,
    /// Zenoh's before 1.0 (replaced by `batching`); ROS 2's rmw_zenoh still sets it:
    /// reported with the keys weft does not implement.
    backoff: Leaf,
}

/// `transport.link.tx.queue.size`: one per priority.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct QueueSize {
    control: Leaf,
    real_time: Leaf,
    interactive_high: Leaf,
    interactive_low: Leaf,
    data_high: Leaf,
    data: Leaf,
    data_low: Leaf,
    background: Leaf,
}

/// `transport.link.tx.queue.congestion_control`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct CongestionControl {
    pub(super) drop: DropWait,
    pub(super) block: Block,
}

/// `transport.link.tx.queue.congestion_control.drop`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct DropWait {
    /// Microseconds.
    pub(super) wait_before_drop: Setting<Micros>,
    max_wait_before_drop_fragments: Leaf,
}

/// `transport.link.tx.queue.congestion_control.block`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Block {
    /// Microseconds.
    pub(super) wait_before_close: Setting<PositiveMicros>,
}

/// `transport.link.tx.queue.batching`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Batching {
    enabled: Leaf,
    time_limit: Leaf,
}

/// `transport.link.tx.queue.allocation`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Allocation {
    mode: Leaf,
}

/// `transport.link.rx`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Rx {
    buffer_size: Leaf,
    pub(super) max_message_size: Setting<Count>,
    /// weft's own: memory that partially reassembled messages may hold.
    pub(super) reassembly_budget: Setting<Count>,
    /// weft's own: what one transport's partial messages may hold of that.
    pub(super) reassembly_share: Setting<Count>,
}

/// `transport.link.tls`: certificates and keys (a path, or `*_base64`: the PEM document
/// in base64; one form per document), and options.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Tls {
    pub(super) root_ca_certificate: Setting<OrNull<CertificateFile>>,
    pub(super) root_ca_certificate_base64: Setting<OrNull<CertificateBase64>>,
    pub(super) listen_private_key: Setting<OrNull<KeyFile>>,
    pub(super) listen_private_key_base64: Setting<OrNull<KeyBase64>>,
    pub(super) listen_certificate: Setting<OrNull<CertificateFile>>,
    pub(super) listen_certificate_base64: Setting<OrNull<CertificateBase64>>,
    pub(super) enable_mtls: Setting<OrNull<Flag>>,
    pub(super) connect_private_key: Setting<OrNull<KeyFile>>,
    pub(super) connect_private_key_base64: Setting<OrNull<KeyBase64>>,
    pub(super) connect_certificate: Setting<OrNull<CertificateFile>>,
    pub(super) connect_certificate_base64: Setting<OrNull<CertificateBase64>>,
    pub(super) verify_name_on_connect: Setting<OrNull<Flag>>,
    pub(super) close_link_on_expiration: Setting<OrNull<Flag>>,
    pub(super) so_sndbuf: Setting<OrNull<BufferSize>>,
    pub(super) so_rcvbuf: Setting<OrNull<BufferSize>>,
    /// Zenoh's names before 0.11, which ROS 2's rmw_zenoh still sets (to null or false).
    server_private_key: FailClosed<OldTlsName>,
    /// See `server_private_key`.
    server_certificate: FailClosed<OldTlsName>,
    /// See `server_private_key`.
    server_name_verification: FailClosed<OldTlsName>,
    /// See `server_private_key`.
    client_auth: FailClosed<OldTlsName>,
    /// See `server_private_key`.
    client_private_key: FailClosed<OldTlsName>,
    /// See `server_private_key`.
    client_certificate: FailClosed<OldTlsName>,
}

/// `transport.link.protocols`.
#[derive(Debug)]
struct ProtocolWhitelist;

impl Why for ProtocolWhitelist {
    const REASON: &'static str = "a whitelist of link protocols is configured";
}

/// `low_pass_filter`.
#[derive(Debug)]
struct LowPassFilter;

impl Why for LowPassFilter {
    const REASON: &'static str = "a filter of messages by size is configured";
}

/// A TLS key of an older Zenoh.
#[derive(Debug)]
struct OldTlsName;

impl Why for OldTlsName {
    const REASON: &'static str = "a TLS setting of an older Zenoh is configured";
}

/// `transport.link.tcp`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Tcp {
    pub(super) so_sndbuf: Setting<OrNull<BufferSize>>,
    pub(super) so_rcvbuf: Setting<OrNull<BufferSize>>,
}

/// `transport.link.unixpipe`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct UnixPipe {
    file_access_mask: Leaf,
}

/// `transport.shared_memory`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct SharedMemory {
    enabled: Leaf,
    mode: Leaf,
    transport_optimization: TransportOptimization,
}

/// `transport.shared_memory.transport_optimization`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct TransportOptimization {
    enabled: Leaf,
    pool_size: Leaf,
    message_size_threshold: Leaf,
    messages: Leaf,
}

/// `transport.auth`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Auth {
    pub(super) usrpwd: UsrPwd,
    pubkey: PubKey,
    /// weft's own: refusing, for a while, a source whose authentications keep failing.
    pub(super) throttle: Throttle,
}

/// `transport.auth.throttle` (weft's own; Zenoh has no such key): after `failures`
/// failed authentications in a row from one address, the handshakes of that address are
/// refused for `backoff_ms`. Off (`failures: null`) by default.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Throttle {
    pub(super) failures: Setting<OrNull<Count>>,
    pub(super) backoff_ms: Setting<Millis>,
}

/// `transport.auth.usrpwd`: read by `config::usrpwd`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct UsrPwd {
    pub(super) user: Setting<OrNull<Text>>,
    pub(super) password: Setting<OrNull<Text>>,
    pub(super) dictionary_file: Setting<OrNull<Text>>,
}

/// `transport.auth.pubkey`: public-key authentication, which weft does not implement.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct PubKey {
    public_key_pem: FailClosed<PubKeyAuth>,
    private_key_pem: FailClosed<PubKeyAuth>,
    public_key_file: FailClosed<PubKeyAuth>,
    private_key_file: FailClosed<PubKeyAuth>,
    key_size: FailClosed<PubKeyAuth>,
    known_keys_file: FailClosed<PubKeyAuth>,
}

/// Public-key authentication.
#[derive(Debug)]
struct PubKeyAuth;

impl Why for PubKeyAuth {
    const REASON: &'static str = "public-key authentication is configured";
}

/// `adminspace`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct AdminSpace {
    /// Forced on, as zenohd forces it: only the permissions matter.
    enabled: Value,
    pub(super) permissions: Permissions,
}

/// `adminspace.permissions`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
pub(super) struct Permissions {
    pub(super) read: Setting<Flag>,
    pub(super) write: Setting<Flag>,
}

/// `stats`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Stats {
    filters: Leaf,
}

/// `plugins_loading`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct PluginsLoading {
    enabled: Leaf,
    search_dirs: Leaf,
}

/// Reads the document `root` into the key tree; returns it with the paths of the
/// [`Leaf`] keys it sets (Zenoh keys weft does not implement), in document order. The
/// first key that is not one of the tree's, or value that does not pass, is an error
/// naming its full path (`transport.unicast.acept_timeout`).
pub(super) fn read(root: &Value) -> Result<(Root, Vec<String>), ConfigError> {
    let mut unimplemented = Vec::new();
    let mut track = serde_path_to_error::Track::new();
    let de = serde_path_to_error::Deserializer::new(root, &mut track);
    let tree = serde_ignored::deserialize(de, |path| unimplemented.push(path.to_string()))
        .map_err(|e: serde_json::Error| from_serde(&track.path(), &e))?;
    Ok((tree, unimplemented))
}

/// The error of a failed read, with the key's full path.
fn from_serde(path: &serde_path_to_error::Path, e: &serde_json::Error) -> ConfigError {
    // The path ends with the offending key itself when a key is unknown.
    let key = path.to_string();
    let message = e.to_string();
    if let Some(refusal) = Refusal::decode(&message) {
        return refusal.at(key);
    }
    match unknown_field(&message) {
        Some((name, expected)) => ConfigError::UnknownKey {
            key: if key == "." { name.to_owned() } else { key },
            expected: expected.replace('`', ""),
        },
        None => ConfigError::InvalidSection {
            key,
            reason: message,
        },
    }
}

/// The name and the expected names of serde's "unknown field `x`, expected one of ..."
/// (or "..., there are no fields").
fn unknown_field(message: &str) -> Option<(&str, &str)> {
    let rest = message.strip_prefix("unknown field `")?;
    let (name, rest) = rest.split_once('`')?;
    let expected = rest
        .strip_prefix(", expected one of ")
        .or_else(|| rest.strip_prefix(", expected "))
        .unwrap_or("");
    Some((name, expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_text(text: &str) -> Result<(), ConfigError> {
        read(&json5::from_str::<Value>(text).unwrap()).map(|_| ())
    }

    #[test]
    fn an_unknown_key_is_an_error_naming_its_full_path() {
        for (text, key) in [
            ("{ acess_control: { enabled: true } }", "acess_control"),
            (
                "{ transport: { unicast: { acept_timeout: 1 } } }",
                "transport.unicast.acept_timeout",
            ),
            (
                "{ transport: { link: { tx: { queue: { size: { ctrl: 1 } } } } } }",
                "transport.link.tx.queue.size.ctrl",
            ),
            (
                "{ transport: { auth: { usrpwd: { passwrd: \"p\" } } } }",
                "transport.auth.usrpwd.passwrd",
            ),
            (
                "{ transport: { link: { tls: { ocsp_stapling: true } } } }",
                "transport.link.tls.ocsp_stapling",
            ),
        ] {
            match check_text(text) {
                Err(ConfigError::UnknownKey { key: k, expected }) => {
                    assert_eq!(k, key, "{text}");
                    assert!(
                        !expected.is_empty() && !expected.contains('`'),
                        "{expected}"
                    );
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        let e = check_text("{ acess_control: {} }").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown configuration key `acess_control`"),
            "{e}"
        );
        assert!(
            e.contains("access_control"),
            "the section's keys are listed: {e}"
        );
    }

    #[test]
    fn a_section_that_is_not_an_object_is_an_error_naming_it() {
        match check_text("{ transport: { link: 5 } }") {
            Err(ConfigError::InvalidSection { key, reason }) => {
                assert_eq!(key, "transport.link");
                assert!(reason.contains("an object"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_key_of_zenohs_default_configuration_is_accepted() {
        // The keys and shapes of Eclipse Zenoh 1.10's default configuration file, with the
        // optional keys it leaves out, and weft's own.
        let text = r#"{
          id: "1234", mode: "peer", metadata: { name: "x", anything: [1] }, region_name: null,
          connect: { timeout_ms: { router: -1, peer: -1, client: 0 }, endpoints: [],
                     exit_on_failure: { client: true },
                     retry: { period_init_ms: 1000, period_max_ms: 4000, period_increase_factor: 2 } },
          listen: { timeout_ms: 0, endpoints: { router: ["tcp/[::]:7447"] }, exit_on_failure: true,
                    retry: { period_init_ms: 1000 } },
          open: { return_conditions: { connect_scouted: true, declares: true } },
          scouting: { timeout: 3000, delay: 500,
            multicast: { enabled: true, address: "224.0.0.224:7446", interface: "auto", ttl: 1,
                         autoconnect: { router: [] }, autoconnect_strategy: { peer: { to_router: "always" } },
                         listen: { router: true } },
            gossip: { enabled: true, multihop: false, target: { router: ["router"] },
                      autoconnect: { router: [] }, autoconnect_strategy: { peer: { to_peer: "always" } } } },
          timestamping: { enabled: { router: true }, drop_future_timestamp: false },
          queries_default_timeout: 10000,
          routing: { router: { peers_failover_brokering: true, linkstate: { transport_weights: [] } },
                     peer: { mode: "peer_to_peer" }, interests: { timeout: 10000 } },
          gateway: { south: "auto" },
          aggregation: { subscribers: [], publishers: [] },
          qos: { publication: [], network: [] },
          namespace: null, downsampling: [], low_pass_filter: [], stats: { filters: [] },
          transport: {
            unicast: { open_timeout: 10000, accept_timeout: 10000, accept_pending: 100,
                       max_sessions: 1000, max_links: 1, lowlatency: false,
                       qos: { enabled: true }, compression: { enabled: false } },
            multicast: { join_interval: 2500, max_sessions: 1000, qos: { enabled: false },
                         compression: { enabled: false } },
            link: { protocols: null,
              tx: { sequence_number_resolution: "32bit", lease: 10000, keep_alive: 4,
                    batch_size: 65535, threads: 4, overflow_budget: 1048576,
                    queue: { size: { control: 2, real_time: 2, interactive_high: 2,
                                     interactive_low: 2, data_high: 2, data: 2, data_low: 2,
                                     background: 2 },
                             congestion_control: { drop: { wait_before_drop: 1000,
                                                           max_wait_before_drop_fragments: 50000 },
                                                   block: { wait_before_close: 5000000 } },
                             batching: { enabled: true, time_limit: 1 },
                             allocation: { mode: "lazy" } } },
              rx: { buffer_size: 65535, max_message_size: 1073741824, reassembly_budget: 1024,
                    reassembly_share: 1024 },
              tls: { root_ca_certificate: null, root_ca_certificate_base64: null,
                     listen_private_key: null, listen_private_key_base64: null,
                     listen_certificate: null, listen_certificate_base64: null,
                     enable_mtls: false, connect_private_key: null,
                     connect_private_key_base64: null, connect_certificate: null,
                     connect_certificate_base64: null, verify_name_on_connect: true,
                     close_link_on_expiration: false, so_sndbuf: null, so_rcvbuf: null },
              tcp: { so_sndbuf: null, so_rcvbuf: null },
              unixpipe: { file_access_mask: null } },
            shared_memory: { enabled: true, mode: "lazy",
              transport_optimization: { enabled: true, pool_size: 16777216,
                                        message_size_threshold: 3072,
                                        messages: ["put", "query", "reply"] } },
            auth: { usrpwd: { user: null, password: null, dictionary_file: null },
                    pubkey: { public_key_pem: null, private_key_pem: null, public_key_file: null,
                              private_key_file: null, key_size: null, known_keys_file: null },
                    throttle: { failures: null, backoff_ms: 60000 } } },
          adminspace: { enabled: false, permissions: { read: true, write: false } },
          access_control: { enabled: false, default_permission: "deny", rules: [], subjects: [],
                            policies: [], deny_intersecting: false },
          plugins_loading: { enabled: false, search_dirs: [] },
          plugins: { anything: { __required__: false } },
        }"#;
        check_text(text).unwrap();
        check_text("{}").unwrap();
    }
}
