//! Robot net: ten nodes of a robot as ten weft sessions in one process, and the one-way
//! latency of their streams.
//!
//! `cargo run --release -p weft --example robotnet -- (--p2p PORT [--star] | --routed ENDPOINT) [--seconds S]`
//!
//! Nine sensor nodes each publish a 64-byte state sample at 10 kHz on `robot/<i>/state`;
//! a controller node subscribes to the nine and publishes a 64-byte command to each at
//! 10 kHz on `robot/<i>/cmd` (each sensor subscribes to its own). Every node also publishes
//! a 100 Hz event (priority RealTime, express) on `robot/<i>/event` (`robot/ctl/event` for
//! the controller), which the controller receives with one subscriber on `robot/*/event`.
//! The controller's own events reach it within its session, over no link: they are left
//! out of the figures. Every put uses congestion control `block`, so a loss is a sample the
//! transport lost, not one the publisher dropped.
//!
//! Topologies: `--p2p PORT`: peers, the controller listens on `tcp/127.0.0.1:PORT`, each
//! sensor listens on a port of its own on 127.0.0.1 and connects to the controller; gossip
//! (on by default, as in Zenoh) then has the sensors connect to each other: a full mesh,
//! whose sensor-to-sensor links carry declarations only. With `--star`, the sensors listen
//! nowhere and gossip is off, so only the nine sensor-controller links exist (what a build
//! without gossip does anyway). `--routed ENDPOINT`: every session is a client of the router at ENDPOINT.
//!
//! Each payload carries its send time (nanoseconds of one monotonic clock, the process's),
//! a sequence number, its phase and its source node. Each node has one thread that sleeps
//! until its next deadline (every 100 µs) and then publishes; a late thread publishes the
//! ticks it missed at once, never before their time. Warm-up: the nodes publish until every
//! stream has reached its subscriber and at least 0.5 s has passed; then every tick due in
//! the next S seconds (4 by default) is measured. Afterwards, the run waits until every
//! measured sample has arrived, or nothing arrived for 1 s. Prints a table and a JSON line:
//! per stream kind p50, p99, p99.9 and max latency (µs), sent, received, lost; and how late
//! the ticks were published (lateness from the deadline to the first put of the tick).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft::{CongestionControl, Priority, PutOptions};

mod scenario;
use scenario::*;

/// One node's publishers: per tick (10 kHz) its state or commands, every 100th tick its
/// event.
struct Node {
    index: usize,
    /// `(stream kind, receiving-end node index, publisher)` for every tick.
    every_tick: Vec<(Kind, usize, weft::Publisher)>,
    event: weft::Publisher,
}

impl Node {
    /// Publishes until the measured window has passed; returns how late the measured ticks
    /// were.
    fn run(self, net: &Net) -> Lateness {
        let period = 1_000_000_000 / RATE_HZ;
        let event_every = RATE_HZ / EVENT_HZ;
        let mut lateness = Lateness::default();
        let mut payload = [0u8; PAYLOAD];
        payload[17] = self.index as u8;
        // Ticks start on a common grid, offset per node so that they do not all wake at once.
        let mut tick = net.now_ns() / period + 1;
        let offset = period * self.index as u64 / (SENSORS as u64 + 1);
        let mut seq = 0u64;
        loop {
            if net.abort.load(Ordering::Relaxed) {
                return lateness;
            }
            let due = tick * period + offset;
            let from = net.measure_from.load(Ordering::Relaxed);
            let until = net.measure_until.load(Ordering::Relaxed);
            if due >= until {
                return lateness;
            }
            if lateness.ns.capacity() == 0 && from != u64::MAX {
                lateness.ns.reserve(((until - from) / period + 2) as usize);
            }
            let now = net.now_ns();
            if due > now {
                std::thread::sleep(Duration::from_nanos(due - now));
            }
            let phase = if due >= from { MEASURED } else { WARM_UP };
            let start = net.now_ns();
            if phase == MEASURED && lateness.ns.len() < lateness.ns.capacity() {
                lateness.ns.push(start.saturating_sub(due));
            }
            payload[8..16].copy_from_slice(&seq.to_le_bytes());
            payload[16] = phase;
            for (kind, to, publisher) in &self.every_tick {
                let stream = &net.streams[*kind as usize][*to];
                put(net, publisher, &mut payload, phase, Some(stream));
            }
            if tick % event_every == 0 {
                // The controller's own events are not measured.
                let stream = net.streams[Kind::Event as usize].get(self.index);
                put(net, &self.event, &mut payload, phase, stream);
            }
            seq += 1;
            tick += 1;
        }
    }
}

/// Stamps `payload` with the time and puts it; counts it on `stream` when measured.
fn put(
    net: &Net,
    publisher: &weft::Publisher,
    payload: &mut [u8],
    phase: u8,
    stream: Option<&Stream>,
) {
    payload[..8].copy_from_slice(&net.now_ns().to_le_bytes());
    let ok = publisher.put(payload).is_ok();
    if let (true, MEASURED, Some(stream)) = (ok, phase, stream) {
        stream.sent.fetch_add(1, Ordering::Relaxed);
    }
}

/// Opens a session with the configuration `json5` (Zenoh's keys; a key this build does
/// not know, such as `scouting.gossip` in a build without gossip, is ignored).
fn open(json5: &str) -> Result<weft::Session, String> {
    let (config, _unknown) =
        weft::Config::from_json5(json5).map_err(|e| format!("configuration: {e}"))?;
    weft::open(config).map_err(|e| format!("open a session: {e}"))
}

/// The controller's session and the nine sensors'.
fn sessions(topology: &Topology) -> Result<(weft::Session, Vec<weft::Session>), String> {
    let (controller, sensor) = match topology {
        Topology::P2p(port, star) => {
            let scouting = format!(
                "scouting: {{ multicast: {{ enabled: false }}, gossip: {{ enabled: {} }} }}",
                !star
            );
            let at = format!("tcp/127.0.0.1:{port}");
            // Without a listen endpoint, a gossiping peer would listen on every interface.
            let sensor_listen = if *star { "" } else { "\"tcp/127.0.0.1:0\"" };
            (
                format!("{{ mode: \"peer\", listen: {{ endpoints: [\"{at}\"] }}, {scouting} }}"),
                format!(
                    "{{ mode: \"peer\", listen: {{ endpoints: [{sensor_listen}] }}, \
                     connect: {{ endpoints: [\"{at}\"] }}, {scouting} }}"
                ),
            )
        }
        Topology::Routed(router) => {
            let client = format!(
                "{{ mode: \"client\", connect: {{ endpoints: [\"{router}\"] }}, \
                 scouting: {{ multicast: {{ enabled: false }} }} }}"
            );
            (client.clone(), client)
        }
    };
    let controller = open(&controller)?;
    let sensors = (0..SENSORS)
        .map(|_| open(&sensor))
        .collect::<Result<_, _>>()?;
    Ok((controller, sensors))
}

fn options(priority: Priority, express: bool) -> PutOptions {
    PutOptions {
        priority,
        express,
        congestion_control: CongestionControl::Block,
        ..PutOptions::default()
    }
}

fn run() -> Result<bool, String> {
    let Args { topology, seconds } = args()?;
    let capacity = (seconds * RATE_HZ as f64 * 1.1) as usize + 1000;
    let event_capacity = (seconds * EVENT_HZ as f64 * 1.1) as usize + 100;
    let streams = |n| (0..SENSORS).map(|_| Stream::new(n)).collect::<Vec<_>>();
    let net = Arc::new(Net {
        epoch: Instant::now(),
        streams: [
            streams(capacity),
            streams(capacity),
            streams(event_capacity),
        ],
        measure_from: AtomicU64::new(u64::MAX),
        measure_until: AtomicU64::new(u64::MAX),
        abort: AtomicBool::new(false),
        own_events: AtomicU64::new(0),
    });

    let (controller, sensors) = sessions(&topology)?;
    let err = |e: weft::SessionError| e.to_string();
    let mut subscribers = Vec::new();
    for (i, sensor) in sensors.iter().enumerate() {
        let n = net.clone();
        subscribers.push(
            controller
                .declare_subscriber(&format!("robot/{i}/state"), move |s| {
                    n.received(Kind::State, Some(i), &s.payload)
                })
                .map_err(err)?,
        );
        let n = net.clone();
        subscribers.push(
            sensor
                .declare_subscriber(&format!("robot/{i}/cmd"), move |s| {
                    n.received(Kind::Command, Some(i), &s.payload)
                })
                .map_err(err)?,
        );
    }
    let n = net.clone();
    subscribers.push(
        controller
            .declare_subscriber("robot/*/event", move |s| {
                n.received(Kind::Event, None, &s.payload)
            })
            .map_err(err)?,
    );

    let data = options(Priority::Data, false);
    let event = options(Priority::RealTime, true);
    let mut nodes = Vec::new();
    for (i, sensor) in sensors.iter().enumerate() {
        nodes.push(Node {
            index: i,
            every_tick: vec![(
                Kind::State,
                i,
                sensor
                    .declare_publisher(&format!("robot/{i}/state"), data.clone())
                    .map_err(err)?,
            )],
            event: sensor
                .declare_publisher(&format!("robot/{i}/event"), event.clone())
                .map_err(err)?,
        });
    }
    let commands = (0..SENSORS)
        .map(|i| {
            controller
                .declare_publisher(&format!("robot/{i}/cmd"), data.clone())
                .map(|p| (Kind::Command, i, p))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    nodes.push(Node {
        index: CONTROLLER,
        every_tick: commands,
        event: controller
            .declare_publisher("robot/ctl/event", event.clone())
            .map_err(err)?,
    });

    let threads: Vec<_> = nodes
        .into_iter()
        .map(|node| {
            let n = net.clone();
            std::thread::Builder::new()
                .name(format!("node-{}", node.index))
                .spawn(move || node.run(&n))
                .expect("spawn a node thread")
        })
        .collect();

    // Warm-up: until every stream is matched and at least MIN_WARM_UP has passed.
    let warm_start = Instant::now();
    while !net.matched() && warm_start.elapsed() < MATCH_TIMEOUT {
        std::thread::sleep(Duration::from_millis(5));
    }
    let matched = net.matched();
    let matched_after = warm_start.elapsed();
    if matched {
        std::thread::sleep(MIN_WARM_UP.saturating_sub(matched_after));
        let from = net.now_ns() + 1_000_000;
        net.measure_until
            .store(from + (seconds * 1e9) as u64, Ordering::SeqCst);
        net.measure_from.store(from, Ordering::SeqCst);
    } else {
        net.abort.store(true, Ordering::SeqCst);
    }
    let mut late: Vec<u64> = Vec::new();
    for t in threads {
        late.extend(t.join().map_err(|_| "a node thread panicked")?.ns);
    }
    if !matched {
        let missing: Vec<String> = KINDS
            .iter()
            .flat_map(|(k, name)| {
                net.streams[*k as usize]
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.warm.load(Ordering::Relaxed) == 0)
                    .map(move |(i, _)| format!("{name} {i}"))
            })
            .collect();
        return Err(format!(
            "not every stream reached its subscriber in {MATCH_TIMEOUT:?}; missing: {}",
            missing.join(", ")
        ));
    }

    // Drain: until everything sent has arrived, or nothing arrives for 1 s.
    let mut last = net.totals();
    let mut quiet_since = Instant::now();
    while last.0 < last.1 && quiet_since.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(10));
        let now = net.totals();
        if now.0 != last.0 {
            quiet_since = Instant::now();
        }
        last = now;
    }
    let links: Vec<usize> = std::iter::once(&controller)
        .chain(&sensors)
        .map(|s| s.admin().faces.len())
        .collect();
    drop(subscribers);
    for s in std::iter::once(&controller).chain(&sensors) {
        s.close();
    }

    late.sort_unstable();
    let ticks = late.len();
    let sent_late = late.iter().filter(|&&l| l > LATE.as_nanos() as u64).count();
    let late_pct = |p: f64| {
        if late.is_empty() {
            f64::NAN
        } else {
            late[((ticks as f64 * p).ceil() as usize).clamp(1, ticks) - 1] as f64 / 1e3
        }
    };
    let rows: Vec<Row> = KINDS.iter().map(|(k, name)| row(&net, *k, name)).collect();
    let (name, links_desc) = match &topology {
        Topology::P2p(_, false) => (
            "p2p",
            "peers: sensors connect to the controller, gossip meshes them",
        ),
        Topology::P2p(_, true) => (
            "p2p-star",
            "peers: sensors connect to the controller and listen nowhere",
        ),
        Topology::Routed(_) => ("routed", "clients of one router"),
    };

    println!(
        "robot net, {name} ({links_desc}): {SENSORS} sensors + 1 controller, {PAYLOAD} B, \
         {RATE_HZ} Hz state/command, {EVENT_HZ} Hz RealTime express events, {seconds} s \
         measured after {:.0} ms of warm-up (matched after {:.0} ms)",
        matched_after.max(MIN_WARM_UP).as_secs_f64() * 1e3,
        matched_after.as_secs_f64() * 1e3
    );
    println!(
        "{:<8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6}",
        "stream", "p50 µs", "p99 µs", "p99.9 µs", "max µs", "sent", "received", "lost"
    );
    let mut lost_total = 0;
    for r in &rows {
        let lost = r.sent.saturating_sub(r.received);
        lost_total += lost;
        println!(
            "{:<8} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9} {:>9} {:>6}",
            r.name, r.p50, r.p99, r.p999, r.max, r.sent, r.received, lost
        );
    }
    println!(
        "pacing: {sent_late} of {ticks} ticks published more than {} µs late; lateness p50 \
         {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        LATE.as_micros(),
        late_pct(0.5),
        late_pct(0.99),
        late.last().map_or(f64::NAN, |&m| m as f64 / 1e3)
    );
    println!(
        "links per session (controller first): {links:?}; the controller's own events, \
         delivered within its session and not counted: {}",
        net.own_events.load(Ordering::Relaxed)
    );

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    let kinds: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "\"{}\":{{\"p50_us\":{},\"p99_us\":{},\"p999_us\":{},\"max_us\":{},\"sent\":{},\"received\":{},\"lost\":{}}}",
                r.name,
                json_number(r.p50),
                json_number(r.p99),
                json_number(r.p999),
                json_number(r.max),
                r.sent,
                r.received,
                r.sent.saturating_sub(r.received)
            )
        })
        .collect();
    println!(
        "{{\"robotnet\":\"{name}\",\"seconds\":{seconds},{},\"ticks\":{ticks},\"sent_late\":{sent_late},\
         \"late_p99_us\":{},\"late_max_us\":{},\"links\":{links:?},\"loadavg\":\"{}\"}}",
        kinds.join(","),
        json_number(late_pct(0.99)),
        json_number(late.last().map_or(f64::NAN, |&m| m as f64 / 1e3)),
        load.join(" ")
    );
    Ok(lost_total == 0)
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("robotnet: samples were lost");
            std::process::ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("robotnet: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
