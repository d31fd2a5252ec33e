//! What weft's robot net (`main.rs`) and its Eclipse Zenoh counterpart
//! (`bench/compare/src/bin/zrobotnet.rs`, which includes this file) share: the workload's
//! constants, the per-stream statistics and their report, and the command line. Each
//! keeps only its own sessions, publishers and subscribers.

#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Sensor nodes.
pub(crate) const SENSORS: usize = 9;
/// The controller's node index (in payloads and statistics).
pub(crate) const CONTROLLER: usize = SENSORS;
/// State and command rate, per stream.
pub(crate) const RATE_HZ: u64 = 10_000;
/// Event rate, per node.
pub(crate) const EVENT_HZ: u64 = 100;
/// Payload size.
pub(crate) const PAYLOAD: usize = 64;
/// The shortest warm-up.
pub(crate) const MIN_WARM_UP: Duration = Duration::from_millis(500);
/// The longest wait for every stream to reach its subscriber.
pub(crate) const MATCH_TIMEOUT: Duration = Duration::from_secs(20);
/// A tick published later than this after its deadline counts as sent late.
pub(crate) const LATE: Duration = Duration::from_micros(100);

/// Phases a payload is sent in.
pub(crate) const WARM_UP: u8 = 0;
pub(crate) const MEASURED: u8 = 1;

/// Stream kinds, the table's rows.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    State = 0,
    Command = 1,
    Event = 2,
}

pub(crate) const KINDS: [(Kind, &str); 3] = [
    (Kind::State, "state"),
    (Kind::Command, "command"),
    (Kind::Event, "event"),
];

/// One stream's receiving end: what its subscriber saw.
pub(crate) struct Stream {
    /// Warm-up samples received (the stream is matched once it has one).
    pub(crate) warm: AtomicU64,
    /// Measured samples received.
    pub(crate) received: AtomicU64,
    /// Measured samples sent.
    pub(crate) sent: AtomicU64,
    /// Latencies of the measured samples, nanoseconds; allocated before the run.
    pub(crate) latencies: Mutex<Vec<u32>>,
}

impl Stream {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            warm: AtomicU64::new(0),
            received: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            latencies: Mutex::new(Vec::with_capacity(capacity)),
        }
    }
}

/// What the whole run shares: the clock and every stream.
pub(crate) struct Net {
    pub(crate) epoch: Instant,
    /// `streams[kind][node]`.
    pub(crate) streams: [Vec<Stream>; 3],
    /// Start of the measured window, nanoseconds on `epoch`'s clock (u64::MAX: not yet).
    pub(crate) measure_from: AtomicU64,
    /// End of the measured window.
    pub(crate) measure_until: AtomicU64,
    /// Set when the warm-up could not finish: every node stops.
    pub(crate) abort: AtomicBool,
    /// The controller's own events, received within its session.
    pub(crate) own_events: AtomicU64,
}

impl Net {
    pub(crate) fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// A sample arrived on stream `kind` of sensor `sensor` (its payload as sent); an
    /// event's sensor is the one that sent it.
    pub(crate) fn received(&self, kind: Kind, sensor: Option<usize>, payload: &[u8]) {
        let now = self.now_ns();
        if payload.len() < 18 {
            return;
        }
        let sent = u64::from_le_bytes(payload[..8].try_into().unwrap_or([0; 8]));
        let sensor = sensor.unwrap_or(payload[17] as usize);
        if sensor == CONTROLLER {
            self.own_events.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let Some(stream) = self.streams[kind as usize].get(sensor) else {
            return;
        };
        if payload[16] == WARM_UP {
            stream.warm.fetch_add(1, Ordering::Relaxed);
            return;
        }
        stream.received.fetch_add(1, Ordering::Relaxed);
        let ns = now.saturating_sub(sent).min(u32::MAX as u64) as u32;
        let mut latencies = stream.latencies.lock().unwrap();
        if latencies.len() < latencies.capacity() {
            latencies.push(ns);
        }
    }

    /// Whether every stream has reached its subscriber.
    pub(crate) fn matched(&self) -> bool {
        self.streams
            .iter()
            .flatten()
            .all(|s| s.warm.load(Ordering::Relaxed) > 0)
    }

    /// Measured samples received and sent, over every stream.
    pub(crate) fn totals(&self) -> (u64, u64) {
        self.streams.iter().flatten().fold((0, 0), |(r, s), st| {
            (
                r + st.received.load(Ordering::Relaxed),
                s + st.sent.load(Ordering::Relaxed),
            )
        })
    }
}

/// How late one node's ticks were published.
#[derive(Default)]
pub(crate) struct Lateness {
    /// Nanoseconds, one per measured tick.
    pub(crate) ns: Vec<u64>,
}

/// Where the sessions are.
pub(crate) enum Topology {
    /// Peers: the controller listens on this port, sensors connect to it; with `true`,
    /// the sensors listen nowhere and gossip is off (a star rather than a mesh).
    P2p(u16, bool),
    /// Clients of the router at this endpoint.
    Routed(String),
}

/// Percentile `p` (0 to 1) of sorted `v`, in µs.
pub(crate) fn percentile(v: &[u32], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
    v[i] as f64 / 1e3
}

/// One row of figures.
pub(crate) struct Row {
    pub(crate) name: &'static str,
    pub(crate) p50: f64,
    pub(crate) p99: f64,
    pub(crate) p999: f64,
    pub(crate) max: f64,
    pub(crate) sent: u64,
    pub(crate) received: u64,
}

pub(crate) fn row(net: &Net, kind: Kind, name: &'static str) -> Row {
    let streams = &net.streams[kind as usize];
    let mut all: Vec<u32> = Vec::new();
    for s in streams {
        all.extend_from_slice(&s.latencies.lock().unwrap());
    }
    all.sort_unstable();
    Row {
        name,
        p50: percentile(&all, 0.5),
        p99: percentile(&all, 0.99),
        p999: percentile(&all, 0.999),
        max: all.last().map_or(f64::NAN, |&m| m as f64 / 1e3),
        sent: streams.iter().map(|s| s.sent.load(Ordering::Relaxed)).sum(),
        received: streams
            .iter()
            .map(|s| s.received.load(Ordering::Relaxed))
            .sum(),
    }
}

pub(crate) fn json_number(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "null".into()
    }
}

pub(crate) struct Args {
    pub(crate) topology: Topology,
    pub(crate) seconds: f64,
}

pub(crate) fn args() -> Result<Args, String> {
    let mut topology = None;
    let mut star = false;
    let mut seconds = 4.0;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--p2p" => {
                let v = value()?;
                let port = v.parse().map_err(|_| format!("not a port: {v}"))?;
                topology = Some(Topology::P2p(port, false));
            }
            "--star" => star = true,
            "--routed" => topology = Some(Topology::Routed(value()?)),
            "--seconds" => {
                let v = value()?;
                seconds = v.parse().map_err(|_| format!("not a number: {v}"))?;
            }
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    if !(0.1..=600.0).contains(&seconds) {
        return Err("--seconds: 0.1 to 600".into());
    }
    let topology = match topology {
        Some(Topology::P2p(port, _)) => Topology::P2p(port, star),
        Some(routed) if !star => routed,
        Some(_) => return Err("--star goes with --p2p".into()),
        None => return Err("--p2p PORT or --routed ENDPOINT is required".into()),
    };
    Ok(Args { topology, seconds })
}
