//! The metrics weftd serves: OpenMetrics text, answered at `@/<zid>/router/metrics` in the
//! admin space (gzipped unless `compression=false`, as zenohd) and at `GET /metrics` on
//! the REST port (plain, for Prometheus). zenohd's `zenoh_build_info` first, then weft's
//! own families: per session and per subscriber key expression a session declared (never
//! per key published), per storage, and the process's gauges.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use weft::metrics::{HistogramSnapshot, QueryStats, DURATION_BUCKETS};
use weft::{AdminInfo, DeclarationTraffic, FaceInfo};
use weft_record::RecordingStats;
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
}

/// A label value of OpenMetrics text, escaped.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The metrics in OpenMetrics text: zenohd's `zenoh_build_info`, then weft's counters per
/// session (one series per connected node and direction: never per key), per storage,
/// and the process's gauges.
pub(crate) fn metrics_text(
    a: &AdminInfo,
    queries: &QueryStats,
    plugins: &PluginMetrics,
    descriptors: bool,
) -> String {
    let mut out = String::new();
    let mut family = |name: &str, kind: &str, help: &str, lines: Vec<String>| {
        if descriptors {
            out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
        }
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    };
    family(
        "zenoh_build",
        "info",
        "Zenoh build version.",
        vec![format!(
            "zenoh_build_info{{local_id=\"{}\",local_whatami=\"{}\",version=\"{}\"}} 1",
            a.zid,
            a.mode.as_str(),
            label(&version())
        )],
    );
    let per_session = |f: &FaceInfo| {
        format!(
            "local_id=\"{}\",remote_id=\"{}\",remote_whatami=\"{}\"",
            a.zid,
            f.zid,
            f.whatami.as_str()
        )
    };
    let mut sessions: BTreeMap<&str, u64> = BTreeMap::new();
    for f in &a.faces {
        *sessions.entry(f.whatami.as_str()).or_default() += 1;
    }
    family(
        "weft_sessions",
        "gauge",
        "Sessions open, by the remote node's role.",
        sessions
            .iter()
            .map(|(w, n)| {
                format!(
                    "weft_sessions{{local_id=\"{}\",remote_whatami=\"{w}\"}} {n}",
                    a.zid
                )
            })
            .collect(),
    );
    let directional = |name: &str, get: fn(&FaceInfo) -> (u64, u64)| -> Vec<String> {
        a.faces
            .iter()
            .flat_map(|f| {
                let (rx, tx) = get(f);
                let labels = per_session(f);
                [
                    format!("{name}_total{{{labels},direction=\"rx\"}} {rx}"),
                    format!("{name}_total{{{labels},direction=\"tx\"}} {tx}"),
                ]
            })
            .collect()
    };
    family(
        "weft_session_bytes",
        "counter",
        "Bytes read from (rx) and written to (tx) a session's links.",
        directional("weft_session_bytes", |f| (f.bytes_in, f.bytes_out)),
    );
    family(
        "weft_session_batches",
        "counter",
        "Batches read from (rx) and written to (tx) a session's links.",
        directional("weft_session_batches", |f| (f.batches_in, f.batches_out)),
    );
    let single = |name: &str, get: fn(&FaceInfo) -> u64| -> Vec<String> {
        a.faces
            .iter()
            .map(|f| format!("{name}_total{{{}}} {}", per_session(f), get(f)))
            .collect()
    };
    family(
        "weft_session_messages_received",
        "counter",
        "Network messages received from a session.",
        single("weft_session_messages_received", |f| f.messages_in),
    );
    family(
        "weft_session_dropped",
        "counter",
        "Messages to a session dropped, by reason: congestion (congestion control `drop`), \
         closed (waiting when the session was closed), unqueueable.",
        a.faces
            .iter()
            .flat_map(|f| {
                let labels = per_session(f);
                f.drops.iter().map(move |(reason, n)| {
                    format!("weft_session_dropped_total{{{labels},reason=\"{reason}\"}} {n}")
                })
            })
            .collect(),
    );
    // Per key expression a node declared (subscriber, or publisher by its interest):
    // bounded by its declarations (each with its limit), never per key published.
    type Declared = fn(&FaceInfo) -> &[DeclarationTraffic];
    let per_declaration = |name: &str, of: Declared, get: fn(&DeclarationTraffic) -> u64| {
        a.faces
            .iter()
            .flat_map(|f| {
                let labels = per_session(f);
                of(f).iter().map(move |t| {
                    format!(
                        "{name}_total{{{labels},key_expr=\"{}\"}} {}",
                        label(&t.key_expr),
                        get(t)
                    )
                })
            })
            .collect::<Vec<String>>()
    };
    let subscriptions: Declared = |f| &f.subscriber_traffic;
    let publications: Declared = |f| &f.publisher_traffic;
    family(
        "weft_subscription_messages",
        "counter",
        "Messages forwarded to a session because of one of its subscribers' key expressions.",
        per_declaration("weft_subscription_messages", subscriptions, |t| t.messages),
    );
    family(
        "weft_subscription_bytes",
        "counter",
        "Payload bytes forwarded to a session because of one of its subscribers' key \
         expressions.",
        per_declaration("weft_subscription_bytes", subscriptions, |t| t.bytes),
    );
    family(
        "weft_subscription_dropped",
        "counter",
        "Messages for one of a session's subscribers' key expressions that were dropped \
         (a full queue, a closed link).",
        per_declaration("weft_subscription_dropped", subscriptions, |t| t.dropped),
    );
    family(
        "weft_publication_messages",
        "counter",
        "Messages a session published on keys matching one of its publishers' key \
         expressions (as its interests declare them).",
        per_declaration("weft_publication_messages", publications, |t| t.messages),
    );
    family(
        "weft_publication_bytes",
        "counter",
        "Payload bytes a session published on keys matching one of its publishers' key \
         expressions.",
        per_declaration("weft_publication_bytes", publications, |t| t.bytes),
    );
    family(
        "weft_session_discarded",
        "counter",
        "Messages received from a session and discarded, by reason: too_large (over \
         transport.link.rx.max_message_size), over_budget (the reassembly memory budget), \
         malformed, no_route (nothing subscribed), expired (a reply after its query was over).",
        a.faces
            .iter()
            .flat_map(|f| {
                let labels = per_session(f);
                f.discarded.iter().map(move |(reason, n)| {
                    format!("weft_session_discarded_total{{{labels},reason=\"{reason}\"}} {n}")
                })
            })
            .collect(),
    );
    family(
        "weft_session_denied",
        "counter",
        "Messages from or to a session that access control denied.",
        single("weft_session_denied", |f| f.denied),
    );
    for (name, kind, help, lines) in query_families(queries)
        .into_iter()
        .chain(storage_families(&plugins.storages))
        .chain(recording_families(&plugins.recordings))
    {
        family(name, kind, help, lines);
    }
    for (name, help, value) in process_gauges() {
        family(name, "gauge", help, vec![format!("{name} {value}")]);
    }
    out.push_str("# EOF\n");
    out
}

/// The process's own gauges, as Prometheus's client libraries name them: resident and
/// virtual memory, threads, open and most descriptors (from `/proc/self`; those it cannot
/// read are left out).
fn process_gauges() -> Vec<(&'static str, &'static str, u64)> {
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
    [
        (
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            field("VmRSS:").map(|kib| kib * 1024),
        ),
        (
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes.",
            field("VmSize:").map(|kib| kib * 1024),
        ),
        (
            "process_threads",
            "Threads of the process.",
            field("Threads:"),
        ),
        ("process_open_fds", "Open file descriptors.", open_fds),
        (
            "process_max_fds",
            "Most open file descriptors allowed.",
            max_fds,
        ),
    ]
    .into_iter()
    .filter_map(|(name, help, value)| value.map(|v| (name, help, v)))
    .collect()
}

/// One family of metrics: name, type, help and its sample lines.
type Family = (&'static str, &'static str, &'static str, Vec<String>);

/// The storages' families: keys and bytes held, samples written, stale and failed, and
/// the histogram of write durations.
/// Each recording's counters (labels `recording`, `key_expr`).
fn recording_families(recordings: &[RecordingMetrics]) -> Vec<Family> {
    // One reading per recording, for all its families.
    let read: Vec<(&RecordingMetrics, weft_record::RecordingStatus)> =
        recordings.iter().map(|r| (r, r.stats.status())).collect();
    let each = |name: &str, get: fn(&weft_record::RecordingStatus) -> u64| -> Vec<String> {
        read.iter()
            .map(|(r, status)| {
                format!(
                    "{name}_total{{recording=\"{}\",key_expr=\"{}\"}} {}",
                    label(&r.name),
                    label(&r.key_expr),
                    get(status)
                )
            })
            .collect()
    };
    vec![
        (
            "weft_recording_messages",
            "counter",
            "Samples a recording wrote.",
            each("weft_recording_messages", |s| s.messages),
        ),
        (
            "weft_recording_bytes",
            "counter",
            "Payload and attachment bytes a recording wrote.",
            each("weft_recording_bytes", |s| s.bytes),
        ),
        (
            "weft_recording_files",
            "counter",
            "Files a recording finished (closed with their summary and index).",
            each("weft_recording_files", |s| s.files),
        ),
        (
            "weft_recording_errors",
            "counter",
            "Write errors of a recording.",
            each("weft_recording_errors", |s| s.errors),
        ),
        (
            "weft_recording_dropped",
            "counter",
            "Samples a recording dropped because its queue was full (when_full: drop).",
            each("weft_recording_dropped", |s| s.dropped),
        ),
        (
            "weft_recording_lost",
            "counter",
            "Samples a recording did not write because of a write error.",
            each("weft_recording_lost", |s| s.lost),
        ),
    ]
}

fn storage_families(storages: &[StorageMetrics]) -> Vec<Family> {
    let labels = |s: &StorageMetrics| {
        format!(
            "storage=\"{}\",key_expr=\"{}\"",
            label(&s.name),
            label(&s.key_expr)
        )
    };
    let each = |name: &str, total: bool, get: fn(&StorageStats) -> u64| -> Vec<String> {
        let suffix = if total { "_total" } else { "" };
        storages
            .iter()
            .map(|s| format!("{name}{suffix}{{{}}} {}", labels(s), get(&s.stats)))
            .collect()
    };
    let histogram = storages
        .iter()
        .flat_map(|s| {
            histogram_lines(
                "weft_storage_write_seconds",
                &labels(s),
                &s.stats.write_durations.snapshot(),
            )
        })
        .collect();
    vec![
        (
            "weft_storage_keys",
            "gauge",
            "Keys a storage holds a value for.",
            each("weft_storage_keys", false, |s| {
                s.keys.load(Ordering::Relaxed)
            }),
        ),
        (
            "weft_storage_bytes",
            "gauge",
            "Bytes of the values a storage holds.",
            each("weft_storage_bytes", false, |s| {
                s.bytes.load(Ordering::Relaxed)
            }),
        ),
        (
            "weft_storage_writes",
            "counter",
            "Samples a storage wrote.",
            each("weft_storage_writes", true, |s| {
                s.writes.load(Ordering::Relaxed)
            }),
        ),
        (
            "weft_storage_stale",
            "counter",
            "Samples a storage did not write: older than the value it holds.",
            each("weft_storage_stale", true, |s| {
                s.stale.load(Ordering::Relaxed)
            }),
        ),
        (
            "weft_storage_errors",
            "counter",
            "Samples a storage's volume failed to write.",
            each("weft_storage_errors", true, |s| {
                s.errors.load(Ordering::Relaxed)
            }),
        ),
        (
            "weft_storage_write_seconds",
            "histogram",
            "Time a storage took to write a sample (read, compare and store).",
            histogram,
        ),
    ]
}

/// A selector parameter's value (`name=value`, separated by `;` or `&`).
pub(crate) fn parameter<'a>(parameters: &'a str, name: &str) -> Option<&'a str> {
    parameters
        .split([';', '&'])
        .filter_map(|p| p.split_once('=').or(Some((p, ""))))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The sample lines of one histogram: cumulative buckets (`le`), then `_count` (the
/// buckets' total, so that the two always agree) and `_sum` in seconds.
fn histogram_lines(name: &str, labels: &str, h: &HistogramSnapshot) -> Vec<String> {
    let sep = if labels.is_empty() { "" } else { "," };
    let mut lines = Vec::new();
    let mut cumulative = 0;
    for (i, count) in h.counts.iter().enumerate() {
        cumulative += count;
        let le = DURATION_BUCKETS
            .get(i)
            .map_or_else(|| "+Inf".to_string(), |b| format!("{b:e}"));
        lines.push(format!(
            "{name}_bucket{{{labels}{sep}le=\"{le}\"}} {cumulative}"
        ));
    }
    let braces = |l: &str| {
        if l.is_empty() {
            String::new()
        } else {
            format!("{{{l}}}")
        }
    };
    lines.push(format!("{name}_count{} {cumulative}", braces(labels)));
    lines.push(format!(
        "{name}_sum{} {}",
        braces(labels),
        h.sum_nanos as f64 / 1e9
    ));
    lines
}

/// The queries' families: this session's gets (counted, timed out, durations) and, in a
/// router, the queries it routed (counted, unanswered, durations to their final answer).
fn query_families(q: &QueryStats) -> Vec<Family> {
    let get = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    vec![
        (
            "weft_queries_routed",
            "counter",
            "Queries this router passed on for others.",
            vec![format!("weft_queries_routed_total {}", get(&q.routed))],
        ),
        (
            "weft_queries_unanswered",
            "counter",
            "Routed queries no queryable could answer (ended at once).",
            vec![format!(
                "weft_queries_unanswered_total {}",
                get(&q.routed_unanswered)
            )],
        ),
        (
            "weft_query_seconds",
            "histogram",
            "Time from a routed query's arrival to its final answer.",
            histogram_lines("weft_query_seconds", "", &q.routed_durations.snapshot()),
        ),
        (
            "weft_gets",
            "counter",
            "Gets this node made (the admin space and storages of a router included).",
            vec![format!("weft_gets_total {}", get(&q.gets))],
        ),
        (
            "weft_get_timeouts",
            "counter",
            "Gets that ended by their timeout.",
            vec![format!(
                "weft_get_timeouts_total {}",
                get(&q.gets_timed_out)
            )],
        ),
        (
            "weft_get_seconds",
            "histogram",
            "Time from a get sent to its end.",
            histogram_lines("weft_get_seconds", "", &q.get_durations.snapshot()),
        ),
    ]
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
