//! The key tree of a configuration file: every key of Eclipse Zenoh 1.10's configuration,
//! and weft's own few, declared once each as a field of a section below.
//!
//! Each section refuses keys it does not declare (`deny_unknown_fields`), so a misspelled
//! key is an error naming its full path ([`check`]) instead of a setting that silently
//! does nothing: Zenoh's own configuration refuses unknown keys the same way. A field of
//! type [`Leaf`] accepts any value: its value is read and checked by the readers of
//! `config` (or, for keys weft does not implement, reported as such).
//!
//! Sections whose entries belong to someone else are leaves here and checked by their
//! owner: `access_control` (its rules, subjects and policies; `crate::acl`), `plugins`
//! (each plugin its own section), `metadata` (free-form).

// The fields are declared to be checked, not read: the readers of `config` read the values.
#![allow(dead_code)]

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use super::ConfigError;

/// A key whose value is checked by its reader, not here: any value (null included).
type Leaf = IgnoredAny;

/// The top level of a configuration.
#[derive(Deserialize, Default)]
#[serde(
    default,
    deny_unknown_fields,
    expecting = "an object of configuration sections"
)]
struct Root {
    id: Leaf,
    metadata: Leaf,
    mode: Leaf,
    region_name: Leaf,
    gateway: Gateway,
    connect: Endpoints,
    listen: Endpoints,
    open: Open,
    scouting: Scouting,
    timestamping: Timestamping,
    queries_default_timeout: Leaf,
    routing: Routing,
    aggregation: Aggregation,
    qos: Qos,
    transport: Transport,
    adminspace: AdminSpace,
    namespace: Leaf,
    downsampling: Leaf,
    access_control: AccessControl,
    low_pass_filter: Leaf,
    stats: Stats,
    plugins_loading: PluginsLoading,
    plugins: Leaf,
}

/// `gateway`: how a router splits its regions.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Gateway {
    south: Leaf,
}

/// `connect` and `listen`: endpoints and how hard to try them.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Endpoints {
    timeout_ms: Leaf,
    endpoints: Leaf,
    exit_on_failure: Leaf,
    retry: Leaf,
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
struct Scouting {
    timeout: Leaf,
    delay: Leaf,
    multicast: Multicast,
    gossip: Gossip,
}

/// `scouting.multicast`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Multicast {
    enabled: Leaf,
    address: Leaf,
    interface: Leaf,
    ttl: Leaf,
    autoconnect: Leaf,
    autoconnect_strategy: Leaf,
    listen: Leaf,
}

/// `scouting.gossip`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Gossip {
    enabled: Leaf,
    multihop: Leaf,
    target: Leaf,
    autoconnect: Leaf,
    autoconnect_strategy: Leaf,
}

/// `timestamping`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Timestamping {
    enabled: Leaf,
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
struct Transport {
    unicast: Unicast,
    multicast: MulticastTransport,
    link: Link,
    shared_memory: SharedMemory,
    auth: Auth,
}

/// `transport.unicast`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Unicast {
    open_timeout: Leaf,
    accept_timeout: Leaf,
    accept_pending: Leaf,
    max_sessions: Leaf,
    max_links: Leaf,
    lowlatency: Leaf,
    qos: Enabled,
    compression: Enabled,
}

/// `transport.multicast`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct MulticastTransport {
    join_interval: Leaf,
    max_sessions: Leaf,
    qos: Enabled,
    compression: Enabled,
}

/// A section with an `enabled` switch only (`transport.unicast.qos`, ...).
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Enabled {
    enabled: Leaf,
}

/// `transport.link`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Link {
    protocols: Leaf,
    tx: Tx,
    rx: Rx,
    tls: Tls,
    tcp: Tcp,
    unixpipe: UnixPipe,
}

/// `transport.link.tx`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Tx {
    sequence_number_resolution: Leaf,
    lease: Leaf,
    keep_alive: Leaf,
    batch_size: Leaf,
    queue: Queue,
    threads: Leaf,
    /// weft's own key.
    overflow_budget: Leaf,
}

/// `transport.link.tx.queue`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Queue {
    size: QueueSize,
    congestion_control: CongestionControl,
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
struct CongestionControl {
    drop: DropWait,
    block: Block,
}

/// `transport.link.tx.queue.congestion_control.drop`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct DropWait {
    wait_before_drop: Leaf,
    max_wait_before_drop_fragments: Leaf,
}

/// `transport.link.tx.queue.congestion_control.block`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Block {
    wait_before_close: Leaf,
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
struct Rx {
    buffer_size: Leaf,
    max_message_size: Leaf,
    /// weft's own key.
    reassembly_budget: Leaf,
}

/// `transport.link.tls`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Tls {
    root_ca_certificate: Leaf,
    root_ca_certificate_base64: Leaf,
    listen_private_key: Leaf,
    listen_private_key_base64: Leaf,
    listen_certificate: Leaf,
    listen_certificate_base64: Leaf,
    enable_mtls: Leaf,
    connect_private_key: Leaf,
    connect_private_key_base64: Leaf,
    connect_certificate: Leaf,
    connect_certificate_base64: Leaf,
    verify_name_on_connect: Leaf,
    close_link_on_expiration: Leaf,
    so_sndbuf: Leaf,
    so_rcvbuf: Leaf,
    /// Zenoh's names before 0.11, which ROS 2's rmw_zenoh still sets (to null or false):
    /// accepted only when they ask for nothing (see `config::security_setting`).
    server_private_key: Leaf,
    /// See `server_private_key`.
    server_certificate: Leaf,
    /// See `server_private_key`.
    server_name_verification: Leaf,
    /// See `server_private_key`.
    client_auth: Leaf,
    /// See `server_private_key`.
    client_private_key: Leaf,
    /// See `server_private_key`.
    client_certificate: Leaf,
}

/// `transport.link.tcp`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Tcp {
    so_sndbuf: Leaf,
    so_rcvbuf: Leaf,
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
struct Auth {
    usrpwd: UsrPwd,
    pubkey: PubKey,
}

/// `transport.auth.usrpwd`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct UsrPwd {
    user: Leaf,
    password: Leaf,
    dictionary_file: Leaf,
}

/// `transport.auth.pubkey`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct PubKey {
    public_key_pem: Leaf,
    private_key_pem: Leaf,
    public_key_file: Leaf,
    private_key_file: Leaf,
    key_size: Leaf,
    known_keys_file: Leaf,
}

/// `adminspace`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct AdminSpace {
    enabled: Leaf,
    permissions: Permissions,
}

/// `adminspace.permissions`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct Permissions {
    read: Leaf,
    write: Leaf,
}

/// `access_control`: its lists are checked by `crate::acl`.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields, expecting = "an object")]
struct AccessControl {
    enabled: Leaf,
    default_permission: Leaf,
    rules: Leaf,
    subjects: Leaf,
    policies: Leaf,
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

/// Checks that every key of `root` is one of the tree's: the first one that is not is an
/// error naming its full path (`transport.unicast.acept_timeout`).
pub(super) fn check(root: &Value) -> Result<(), ConfigError> {
    serde_path_to_error::deserialize::<_, Root>(root)
        .map(|_| ())
        .map_err(|e| from_serde(&e))
}

/// The error of a failed check, with the key's full path.
fn from_serde(e: &serde_path_to_error::Error<serde_json::Error>) -> ConfigError {
    // The path ends with the offending key itself when a key is unknown.
    let key = e.path().to_string();
    let message = e.inner().to_string();
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
        check(&json5::from_str::<Value>(text).unwrap())
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
                "{ access_control: { enable: true } }",
                "access_control.enable",
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
              rx: { buffer_size: 65535, max_message_size: 1073741824, reassembly_budget: 1024 },
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
                              private_key_file: null, key_size: null, known_keys_file: null } } },
          adminspace: { enabled: false, permissions: { read: true, write: false } },
          access_control: { enabled: false, default_permission: "deny", rules: [], subjects: [],
                            policies: [] },
          plugins_loading: { enabled: false, search_dirs: [] },
          plugins: { anything: { __required__: false } },
        }"#;
        check_text(text).unwrap();
        check_text("{}").unwrap();
    }
}
