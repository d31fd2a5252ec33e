//! The metrics weftd serves: OpenMetrics text, answered at `@/<zid>/router/metrics` in the
//! admin space (gzipped unless `compression=false`, as zenohd) and at `GET /metrics` on
//! the REST port (plain, for Prometheus). zenohd's `zenoh_build_info` first, then weft's
//! own families: per session and per subscriber key expression a session declared (never
//! per key published), per storage, and the process's gauges.
//!
//! Each scrape reads weft's counters once into a `prometheus-client` registry, one
//! registration per family (its name, help, type and labels), which encodes the text.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use prometheus_client::encoding::{
    EncodeLabelSet, EncodeMetric, LabelSetEncoder, MetricEncoder, NoLabelSet,
};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;
use weft::metrics::{HistogramSnapshot, QueryStats, DURATION_BUCKETS};
use weft::{AdminInfo, DeclarationTraffic, FaceInfo};
use weft_record::{RecordingStats, RecordingStatus};
use weft_storage::StorageStats;

use crate::admin::version;

/// The encoding of `metrics`, as zenohd's (`;content-encoding=gzip` appended when
/// compressed).
pub(crate) const METRICS_ENCODING: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A storage as its metrics name it.
#[derive(Debug, Clone)]
pub(crate) struct StorageMetrics {
    /// Its name in the configuration.
    pub(crate) name: String,
    /// Its key expression.
    pub(crate) key_expr: String,
    /// Its counters.
    pub(crate) stats: Arc<StorageStats>,
}

/// A recording as its metrics name it.
#[derive(Debug, Clone)]
pub(crate) struct RecordingMetrics {
    /// Its name in the configuration.
    pub(crate) name: String,
    /// Its key expression.
    pub(crate) key_expr: String,
    /// Its counters.
    pub(crate) stats: Arc<RecordingStats>,
}

/// What weftd's built-in plugins count, for the metrics: its storages and recordings.
#[derive(Debug, Clone, Default)]
pub(crate) struct PluginMetrics {
    /// The storages.
    pub(crate) storages: Vec<StorageMetrics>,
    /// The recordings.
    pub(crate) recordings: Vec<RecordingMetrics>,
    /// Series shown one by one in each per-declaration family (`--metrics-declared-series`;
    /// `None`: [`DECLARED_SERIES`]).
    pub(crate) declared_series: Option<usize>,
}

/// zenohd's build labels: this node and weft's version.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct Build {
    local_id: String,
    local_whatami: &'static str,
    version: String,
}

/// The sessions of one role.
#[derive(Debug, Clone, EncodeLabelSet)]
struct Role {
    local_id: String,
    remote_whatami: &'static str,
}

/// One session: this node and the remote one.
#[derive(Debug, Clone, EncodeLabelSet)]
struct Session {
    local_id: String,
    remote_id: String,
    remote_whatami: &'static str,
}

/// Read from (`rx`) or written to (`tx`) a session.
#[derive(Debug, Clone, EncodeLabelSet)]
struct Direction {
    direction: &'static str,
}

/// Why messages were dropped or discarded.
#[derive(Debug, Clone, EncodeLabelSet)]
struct Reason {
    reason: &'static str,
}

/// A key expression a session declared.
#[derive(Debug, Clone, EncodeLabelSet)]
struct Declared {
    key_expr: String,
}

/// A storage: its name and key expression.
#[derive(Debug, Clone, EncodeLabelSet)]
struct Storage {
    storage: String,
    key_expr: String,
}

/// A recording: its name and key expression.
#[derive(Debug, Clone, EncodeLabelSet)]
struct Recording {
    recording: String,
    key_expr: String,
}

/// A family's series as read for one scrape: each label set with its metric.
#[derive(Debug)]
struct Series<L, M>(Vec<(L, M)>);

impl<L, M> FromIterator<(L, M)> for Series<L, M> {
    fn from_iter<I: IntoIterator<Item = (L, M)>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl<L, M: TypedMetric> TypedMetric for Series<L, M> {
    const TYPE: MetricType = M::TYPE;
}

impl<L: EncodeLabelSet, M: EncodeMetric + TypedMetric> EncodeMetric for Series<L, M> {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        for (labels, metric) in &self.0 {
            metric.encode(encoder.encode_family(labels)?)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        M::TYPE
    }
}

/// A histogram of durations as read once: the sum in seconds, and the count in each
/// bucket of [`DURATION_BUCKETS`] and beyond (not cumulative).
#[derive(Debug)]
struct Durations {
    sum: f64,
    buckets: Vec<(f64, u64)>,
}

impl From<&HistogramSnapshot> for Durations {
    fn from(h: &HistogramSnapshot) -> Self {
        let bounds = DURATION_BUCKETS.iter().copied().chain([f64::INFINITY]);
        Self {
            sum: h.sum_nanos as f64 / 1e9,
            buckets: bounds.zip(h.counts.iter().copied()).collect(),
        }
    }
}

impl TypedMetric for Durations {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for Durations {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        // `_count` is the buckets' total, so that the two always agree.
        let count = self.buckets.iter().map(|(_, n)| n).sum();
        encoder.encode_histogram::<NoLabelSet>(self.sum, count, &self.buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

/// The metrics in OpenMetrics text: zenohd's `zenoh_build_info`, then weft's counters per
/// session (one series per connected node and direction: never per key), per storage,
/// and the process's gauges; without `# HELP` and `# TYPE` unless `descriptors`.
pub(crate) fn metrics_text(
    a: &AdminInfo,
    queries: &QueryStats,
    plugins: &PluginMetrics,
    descriptors: bool,
) -> String {
    let mut registry = Registry::default();
    registry.register(
        "zenoh_build",
        "Zenoh build version",
        Info::new(Build {
            local_id: a.zid.to_string(),
            local_whatami: a.mode.as_str(),
            version: version(),
        }),
    );
    register_sessions(
        &mut registry,
        a,
        plugins.declared_series.unwrap_or(DECLARED_SERIES),
    );
    register_queries(&mut registry, queries);
    register_storages(&mut registry, &plugins.storages);
    register_recordings(&mut registry, &plugins.recordings);
    register_process(&mut registry);
    let mut text = String::new();
    if prometheus_client::encoding::text::encode(&mut text, &registry).is_err() {
        // Only the writer can fail, and a String's writes do not.
        text = "# EOF\n".to_string();
    }
    if descriptors {
        return text;
    }
    text.lines()
        .filter(|l| !l.starts_with("# HELP ") && !l.starts_with("# TYPE "))
        .flat_map(|l| [l, "\n"])
        .collect()
}

/// The families per session: sessions by role, bytes and batches by direction,
/// messages received, dropped (by reason), discarded (by reason) and denied, and the
/// traffic of each key expression a session declared.
fn register_sessions(registry: &mut Registry, a: &AdminInfo, declared_series: usize) {
    let session = |f: &FaceInfo| Session {
        local_id: a.zid.to_string(),
        remote_id: f.zid.to_string(),
        remote_whatami: f.whatami.as_str(),
    };
    let mut roles: BTreeMap<&'static str, u64> = BTreeMap::new();
    for f in &a.faces {
        *roles.entry(f.whatami.as_str()).or_default() += 1;
    }
    registry.register(
        "weft_sessions",
        "Sessions open, by the remote node's role",
        roles
            .into_iter()
            .map(|(remote_whatami, n)| {
                let role = Role {
                    local_id: a.zid.to_string(),
                    remote_whatami,
                };
                (role, ConstGauge::new(n))
            })
            .collect::<Series<_, _>>(),
    );
    let directional = |get: fn(&FaceInfo) -> (u64, u64)| -> Series<_, _> {
        a.faces
            .iter()
            .flat_map(|f| {
                let (rx, tx) = get(f);
                [("rx", rx), ("tx", tx)].map(|(direction, n)| {
                    ((session(f), Direction { direction }), ConstCounter::new(n))
                })
            })
            .collect()
    };
    registry.register(
        "weft_session_bytes",
        "Bytes read from (rx) and written to (tx) a session's links",
        directional(|f| (f.bytes_in, f.bytes_out)),
    );
    registry.register(
        "weft_session_batches",
        "Batches read from (rx) and written to (tx) a session's links",
        directional(|f| (f.batches_in, f.batches_out)),
    );
    let single = |get: fn(&FaceInfo) -> u64| -> Series<_, _> {
        a.faces
            .iter()
            .map(|f| (session(f), ConstCounter::new(get(f))))
            .collect()
    };
    let by_reason = |get: fn(&FaceInfo) -> &[(&'static str, u64)]| -> Series<_, _> {
        a.faces
            .iter()
            .flat_map(|f| {
                get(f).iter().map(move |&(reason, n)| {
                    ((session(f), Reason { reason }), ConstCounter::new(n))
                })
            })
            .collect()
    };
    registry.register(
        "weft_session_messages_received",
        "Network messages received from a session",
        single(|f| f.messages_in),
    );
    registry.register(
        "weft_session_dropped",
        "Messages to a session dropped, by reason: congestion (congestion control `drop`), \
         closed (waiting when the session was closed), unqueueable",
        by_reason(|f| &f.drops),
    );
    register_declarations(registry, a, session, declared_series);
    registry.register(
        "weft_session_discarded",
        "Messages received from a session and discarded, by reason: too_large (over \
         transport.link.rx.max_message_size), over_budget (the reassembly memory budget), \
         over_share (the session's share of it, transport.link.rx.reassembly_share), \
         malformed, no_route (nothing subscribed), expired (a reply after its query was over), \
         key_mismatch (a reply outside its query's key), unknown_key_expr (a multicast \
         member's undeclared key-expression id), not_on_multicast (a query, interest or \
         declaration from a multicast group)",
        by_reason(|f| &f.discarded),
    );
    registry.register(
        "weft_session_denied",
        "Messages from or to a session that access control denied",
        single(|f| f.denied),
    );
    registry.register(
        "weft_sessions_refused",
        "Sessions refused, by reason: max_sessions (transport.unicast.max_sessions \
         reached), duplicate_id (a node claimed the ZenohID of a live session), \
         auth_unknown_user, auth_wrong_password, auth_no_credentials (user/password \
         authentication failed), auth_throttled (closed unanswered: its address failed \
         transport.auth.throttle.failures times in a row)",
        a.refused
            .iter()
            .map(|&(reason, n)| (Reason { reason }, ConstCounter::new(n)))
            .collect::<Series<_, _>>(),
    );
    registry.register(
        "weft_serial_dropped_frames",
        "Frames dropped on serial ports because they did not check (line noise, cut \
         frames); the session goes on",
        ConstCounter::new(weft::metrics::serial_dropped_frames()),
    );
}

/// Most series of each family per declared key expression, unless weftd's
/// `--metrics-declared-series` says otherwise: the busiest key expressions (by messages,
/// then bytes) are shown one by one, the others added up in one series
/// (`key_expr="other"`, without a session). So that a scrape stays small whatever the
/// declarations: 50,000 subscribers cost as much as 100.
pub(crate) const DECLARED_SERIES: usize = 100;

/// The series of a family per declared key expression.
#[derive(Debug, Clone)]
enum DeclaredBy {
    /// A key expression one session declared.
    One(Session, Declared),
    /// The key expressions beyond the busiest, of all sessions.
    Others(Local),
}

/// This node alone.
#[derive(Debug, Clone, EncodeLabelSet)]
struct Local {
    local_id: String,
}

impl EncodeLabelSet for DeclaredBy {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> Result<(), std::fmt::Error> {
        match self {
            Self::One(session, declared) => {
                session.encode(encoder)?;
                declared.encode(encoder)
            }
            Self::Others(local) => {
                local.encode(encoder)?;
                let other = Declared {
                    key_expr: "other".to_string(),
                };
                other.encode(encoder)
            }
        }
    }
}

/// What each series of a per-declaration family counts: the `most` busiest
/// declarations in the order the sessions list them, then the sum of
/// the others if there are any. The sum goes down when a declaration joins the busiest
/// or is undeclared.
fn busiest(
    a: &AdminInfo,
    of: fn(&FaceInfo) -> &[DeclarationTraffic],
    session: impl Fn(&FaceInfo) -> Session,
    most: usize,
) -> Vec<(DeclaredBy, DeclarationTraffic)> {
    let all: Vec<(&FaceInfo, &DeclarationTraffic)> = a
        .faces
        .iter()
        .flat_map(|f| of(f).iter().map(move |t| (f, t)))
        .collect();
    let mut shown = vec![true; all.len()];
    if all.len() > most {
        let mut by_traffic: Vec<usize> = (0..all.len()).collect();
        by_traffic.sort_by_key(|&i| std::cmp::Reverse((all[i].1.messages, all[i].1.bytes)));
        for &i in &by_traffic[most..] {
            shown[i] = false;
        }
    }
    let mut others: Option<DeclarationTraffic> = None;
    let mut series = Vec::with_capacity(all.len().min(most) + 1);
    for ((f, t), shown) in all.into_iter().zip(shown) {
        if shown {
            let declared = Declared {
                key_expr: t.key_expr.clone(),
            };
            series.push((DeclaredBy::One(session(f), declared), t.clone()));
        } else {
            let sum = others.get_or_insert_with(DeclarationTraffic::default);
            sum.messages += t.messages;
            sum.bytes += t.bytes;
            sum.dropped += t.dropped;
        }
    }
    let local = Local {
        local_id: a.zid.to_string(),
    };
    series.extend(others.map(|sum| (DeclaredBy::Others(local), sum)));
    series
}

/// The families per key expression a session declared (subscriber, or publisher by its
/// interest): never per key published, and the `most` busiest only.
fn register_declarations(
    registry: &mut Registry,
    a: &AdminInfo,
    session: impl Fn(&FaceInfo) -> Session,
    most: usize,
) {
    let subscriptions = busiest(a, |f| &f.subscriber_traffic, &session, most);
    let publications = busiest(a, |f| &f.publisher_traffic, &session, most);
    type Traffic = [(DeclaredBy, DeclarationTraffic)];
    let each = |of: &Traffic, get: fn(&DeclarationTraffic) -> u64| -> Series<_, _> {
        of.iter()
            .map(|(labels, t)| (labels.clone(), ConstCounter::new(get(t))))
            .collect()
    };
    registry.register(
        "weft_subscription_messages",
        "Messages forwarded to a session because of one of its subscribers' key expressions",
        each(&subscriptions, |t| t.messages),
    );
    registry.register(
        "weft_subscription_bytes",
        "Payload bytes forwarded to a session because of one of its subscribers' key \
         expressions",
        each(&subscriptions, |t| t.bytes),
    );
    registry.register(
        "weft_subscription_dropped",
        "Messages for one of a session's subscribers' key expressions that were dropped \
         (a full queue, a closed link)",
        each(&subscriptions, |t| t.dropped),
    );
    registry.register(
        "weft_publication_messages",
        "Messages a session published on keys matching one of its publishers' key \
         expressions (as its interests declare them)",
        each(&publications, |t| t.messages),
    );
    registry.register(
        "weft_publication_bytes",
        "Payload bytes a session published on keys matching one of its publishers' key \
         expressions",
        each(&publications, |t| t.bytes),
    );
}

/// The queries' families: this session's gets (counted, timed out, durations) and, in a
/// router, the queries it routed (counted, unanswered, durations to their final answer).
fn register_queries(registry: &mut Registry, q: &QueryStats) {
    let count = |c: &AtomicU64| ConstCounter::new(c.load(Ordering::Relaxed));
    registry.register(
        "weft_queries_routed",
        "Queries this router passed on for others",
        count(&q.routed),
    );
    registry.register(
        "weft_queries_unanswered",
        "Routed queries no queryable could answer (ended at once)",
        count(&q.routed_unanswered),
    );
    registry.register(
        "weft_query_seconds",
        "Time from a routed query's arrival to its final answer",
        Durations::from(&q.routed_durations.snapshot()),
    );
    registry.register(
        "weft_gets",
        "Gets this node made (the admin space and storages of a router included)",
        count(&q.gets),
    );
    registry.register(
        "weft_get_timeouts",
        "Gets that ended by their timeout",
        count(&q.gets_timed_out),
    );
    registry.register(
        "weft_get_seconds",
        "Time from a get sent to its end",
        Durations::from(&q.get_durations.snapshot()),
    );
}

/// The storages' families: keys and bytes held, samples written, stale and failed, and
/// the histogram of write durations.
fn register_storages(registry: &mut Registry, storages: &[StorageMetrics]) {
    let labels = |s: &StorageMetrics| Storage {
        storage: s.name.clone(),
        key_expr: s.key_expr.clone(),
    };
    let read = |c: fn(&StorageStats) -> &AtomicU64| {
        move |s: &StorageMetrics| c(&s.stats).load(Ordering::Relaxed)
    };
    let gauge = |c: fn(&StorageStats) -> &AtomicU64| -> Series<_, _> {
        let read = read(c);
        storages
            .iter()
            .map(|s| (labels(s), ConstGauge::new(read(s))))
            .collect()
    };
    let counter = |c: fn(&StorageStats) -> &AtomicU64| -> Series<_, _> {
        let read = read(c);
        storages
            .iter()
            .map(|s| (labels(s), ConstCounter::new(read(s))))
            .collect()
    };
    registry.register(
        "weft_storage_keys",
        "Keys a storage holds a value for",
        gauge(|s| &s.keys),
    );
    registry.register(
        "weft_storage_bytes",
        "Bytes of the values a storage holds",
        gauge(|s| &s.bytes),
    );
    registry.register(
        "weft_storage_writes",
        "Samples a storage wrote",
        counter(|s| &s.writes),
    );
    registry.register(
        "weft_storage_stale",
        "Samples a storage did not write: older than the value it holds",
        counter(|s| &s.stale),
    );
    registry.register(
        "weft_storage_errors",
        "Samples a storage's volume failed to write",
        counter(|s| &s.errors),
    );
    registry.register(
        "weft_storage_queries_refused",
        "Queries a storage answered with an error at once: its queue of queries was full",
        counter(|s| &s.queries_refused),
    );
    registry.register(
        "weft_storage_write_seconds",
        "Time a storage took to write a sample (read, compare and store)",
        storages
            .iter()
            .map(|s| {
                let durations = Durations::from(&s.stats.write_durations.snapshot());
                (labels(s), durations)
            })
            .collect::<Series<_, _>>(),
    );
}

/// Each recording's counters (labels `recording`, `key_expr`).
fn register_recordings(registry: &mut Registry, recordings: &[RecordingMetrics]) {
    // One reading per recording, for all its families.
    let read: Vec<(Recording, RecordingStatus)> = recordings
        .iter()
        .map(|r| {
            let labels = Recording {
                recording: r.name.clone(),
                key_expr: r.key_expr.clone(),
            };
            (labels, r.stats.status())
        })
        .collect();
    let each = |get: fn(&RecordingStatus) -> u64| -> Series<_, _> {
        read.iter()
            .map(|(labels, status)| (labels.clone(), ConstCounter::new(get(status))))
            .collect()
    };
    registry.register(
        "weft_recording_messages",
        "Samples a recording wrote",
        each(|s| s.messages),
    );
    registry.register(
        "weft_recording_bytes",
        "Payload and attachment bytes a recording wrote",
        each(|s| s.bytes),
    );
    registry.register(
        "weft_recording_files",
        "Files a recording finished (closed with their summary and index)",
        each(|s| s.files),
    );
    registry.register(
        "weft_recording_errors",
        "Write errors of a recording",
        each(|s| s.errors),
    );
    registry.register(
        "weft_recording_dropped",
        "Samples a recording dropped because its queue was full (when_full: drop)",
        each(|s| s.dropped),
    );
    registry.register(
        "weft_recording_lost",
        "Samples a recording did not write because of a write error",
        each(|s| s.lost),
    );
}

/// The process's own gauges, as Prometheus's client libraries name them: resident and
/// virtual memory, threads, open and most descriptors (from `/proc/self`; those it cannot
/// read are left out).
fn register_process(registry: &mut Registry) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    let open_fds = std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count() as u64)
        .ok();
    let max_fds = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| {
            limits
                .lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|v| v.parse::<u64>().ok())
        });
    let gauges = [
        (
            "process_resident_memory_bytes",
            "Resident memory size in bytes",
            field("VmRSS:").map(|kib| kib * 1024),
        ),
        (
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes",
            field("VmSize:").map(|kib| kib * 1024),
        ),
        (
            "process_threads",
            "Threads of the process",
            field("Threads:"),
        ),
        ("process_open_fds", "Open file descriptors", open_fds),
        (
            "process_max_fds",
            "Most open file descriptors allowed",
            max_fds,
        ),
    ];
    for (name, help, value) in gauges {
        if let Some(v) = value {
            registry.register(name, help, ConstGauge::new(v));
        }
    }
}

/// A selector parameter's value (`name=value`, separated by `;` or `&`).
pub(crate) fn parameter<'a>(parameters: &'a str, name: &str) -> Option<&'a str> {
    parameters
        .split([';', '&'])
        .filter_map(|p| p.split_once('=').or(Some((p, ""))))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The metrics payload and its encoding for the query's parameters.
pub(crate) fn metrics_reply(
    a: &AdminInfo,
    queries: &QueryStats,
    plugins: &PluginMetrics,
    parameters: &str,
) -> (Vec<u8>, String) {
    let descriptors = parameter(parameters, "descriptors") != Some("false");
    let text = metrics_text(a, queries, plugins, descriptors);
    if parameter(parameters, "compression") == Some("false") {
        return (text.into_bytes(), METRICS_ENCODING.to_string());
    }
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing to a Vec cannot fail.
    let gzipped = encoder
        .write_all(text.as_bytes())
        .and_then(|()| encoder.finish())
        .unwrap_or_default();
    (gzipped, format!("{METRICS_ENCODING};content-encoding=gzip"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector_parameters_are_read_as_zenoh_reads_them() {
        assert_eq!(parameter("compression=false", "compression"), Some("false"));
        assert_eq!(
            parameter("descriptors=false;compression=false", "compression"),
            Some("false")
        );
        assert_eq!(
            parameter("a=1&descriptors=false", "descriptors"),
            Some("false")
        );
        assert_eq!(parameter("", "compression"), None);
    }
}
