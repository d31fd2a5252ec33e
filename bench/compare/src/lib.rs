//! Shared by the comparison binaries: command-line parsing in the style of weft's tools,
//! Zenoh configuration, and the statistics printed in weft's format.

use std::io::ErrorKind;
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Command-line arguments: flags with values, boolean flags and positional arguments.
#[derive(Debug, Default)]
pub struct Args {
    /// `-m client|peer`.
    pub mode: Option<String>,
    /// `-e ENDPOINT` (repeatable).
    pub connect: Vec<String>,
    /// `-l ENDPOINT` (repeatable).
    pub listen: Vec<String>,
    /// Other `--name value` pairs.
    pub options: Vec<(String, String)>,
    /// Positional arguments.
    pub positional: Vec<String>,
}

/// Flags that take no value.
const SWITCHES: &[&str] = &["--no-multicast-scouting", "--express", "--seq"];

impl Args {
    /// Parses `std::env::args()`; exits with status 2 on a malformed command line.
    pub fn parse(usage: &str) -> Self {
        let mut args = Self::default();
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            if a == "-h" || a == "--help" {
                println!("usage: {usage}");
                std::process::exit(0);
            }
            if SWITCHES.contains(&a.as_str()) {
                args.options.push((a, String::new()));
                continue;
            }
            if a.starts_with('-') && a.len() > 1 && a.parse::<f64>().is_err() {
                let Some(v) = it.next() else {
                    eprintln!("{a} needs a value\nusage: {usage}");
                    std::process::exit(2);
                };
                match a.as_str() {
                    "-m" | "--mode" => args.mode = Some(v),
                    "-e" | "--connect" => args.connect.push(v),
                    "-l" | "--listen" => args.listen.push(v),
                    _ => args.options.push((a, v)),
                }
            } else {
                args.positional.push(a);
            }
        }
        args
    }

    /// Whether a switch was given.
    pub fn flag(&self, name: &str) -> bool {
        self.options.iter().any(|(k, _)| k == name)
    }

    /// The value of `--name`, parsed, or `default`; exits with status 2 if it does not parse.
    pub fn get<T: std::str::FromStr>(&self, name: &str, default: T) -> T {
        match self.options.iter().rev().find(|(k, _)| k == name) {
            None => default,
            Some((_, v)) => v.parse().unwrap_or_else(|_| {
                eprintln!("{name}: invalid value {v:?}");
                std::process::exit(2)
            }),
        }
    }

    /// The positional argument `i`, parsed; exits with status 2 if missing or invalid.
    pub fn positional<T: std::str::FromStr>(&self, i: usize, what: &str, usage: &str) -> T {
        self.positional
            .get(i)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                eprintln!("missing or invalid {what}\nusage: {usage}");
                std::process::exit(2)
            })
    }

    #[cfg(feature = "zenoh")]
    /// A Zenoh configuration: the `-c` file if any, then mode (peer by default), endpoints,
    /// multicast scouting off.
    /// A side that only connects listens nowhere (Zenoh's peers otherwise listen on every
    /// interface).
    pub fn zenoh_config(&self) -> zenoh::Config {
        // `-c FILE`: a configuration file first (TLS and QUIC settings for bench/tls.sh).
        let mut c = match self
            .options
            .iter()
            .rev()
            .find(|(k, _)| k == "-c" || k == "--config")
        {
            Some((_, path)) => zenoh::Config::from_file(path).unwrap_or_else(|e| {
                eprintln!("-c {path}: {e}");
                std::process::exit(2)
            }),
            None => zenoh::Config::default(),
        };
        let mode = self.mode.as_deref().unwrap_or("peer");
        if mode != "peer" && mode != "client" {
            eprintln!("-m: peer or client, not {mode:?}");
            std::process::exit(2);
        }
        let json_list = |v: &[String]| {
            let items: Vec<String> = v.iter().map(|e| format!("{e:?}")).collect();
            format!("[{}]", items.join(","))
        };
        let set = |c: &mut zenoh::Config, key: &str, value: &str| {
            if let Err(e) = c.insert_json5(key, value) {
                eprintln!("configuration {key}={value}: {e}");
                std::process::exit(2);
            }
        };
        set(&mut c, "mode", &format!("{mode:?}"));
        set(&mut c, "connect/endpoints", &json_list(&self.connect));
        set(&mut c, "listen/endpoints", &json_list(&self.listen));
        set(&mut c, "scouting/multicast/enabled", "false");
        c
    }
}

/// Median of a set of rates (upper median for an even count, as weft's tools print).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Prints `p50_us=… p99_us=… payload=…` from one-way latencies in microseconds.
pub fn print_latency(mut one_way_us: Vec<f64>, size: usize) {
    one_way_us.sort_by(f64::total_cmp);
    let n = one_way_us.len();
    let pct = |p: f64| one_way_us[((n as f64 * p) as usize).min(n - 1)];
    println!(
        "p50_us={:.1} p99_us={:.1} payload={size}",
        pct(0.5),
        pct(0.99)
    );
}

/// `--seq`: the publisher writes each message's number (8 bytes, little-endian, from 0) at
/// the start of its payload; the subscriber counts the numbers it missed from the first
/// message it received, and the longest wait between two messages, as weft's
/// `sub-thr --seq` does.
#[derive(Default)]
pub struct SeqCheck(Mutex<SeqState>);

#[derive(Default)]
struct SeqState {
    next: Option<u64>,
    received: u64,
    lost: u64,
    last: Option<Instant>,
    max_gap: Duration,
}

impl SeqCheck {
    /// A message received, its payload starting with its number.
    pub fn record(&self, payload: &[u8]) {
        let now = Instant::now();
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(last) = s.last {
            s.max_gap = s.max_gap.max(now - last);
        }
        s.last = Some(now);
        s.received += 1;
        let Some(head) = payload.get(..8) else {
            return;
        };
        let n = u64::from_le_bytes(head.try_into().unwrap_or_default());
        match s.next {
            // Repeated or out of order: not a loss.
            Some(next) if n < next => return,
            Some(next) => s.lost += n - next,
            None => {}
        }
        s.next = Some(n + 1);
    }

    /// `seq_received=R seq_lost=L seq_max_gap_us=G`, the line printed after each round: R
    /// and L since the first message, G the longest wait since the previous line.
    pub fn line(&self) -> String {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let line = format!(
            "seq_received={} seq_lost={} seq_max_gap_us={}",
            s.received,
            s.lost,
            s.max_gap.as_micros()
        );
        s.max_gap = Duration::ZERO;
        line
    }
}

/// Writes message number `n` at the start of `payload` (`--seq`; 8 bytes or more).
pub fn put_seq(payload: &mut [u8], n: u64) {
    payload[..8].copy_from_slice(&n.to_le_bytes());
}

/// Measures rounds of `samples` messages of a counter that another thread advances, as
/// weft's `sub-thr` does: wait for the first message, then time each round by polling
/// every 200 µs. Returns the rates of the complete rounds.
pub fn measure_rounds(
    count: impl Fn() -> u64,
    samples: u64,
    rounds: u32,
    max_seconds: f64,
) -> Vec<f64> {
    measure_rounds_then(count, samples, rounds, max_seconds, || {})
}

/// `measure_rounds`, calling `after_round` after each round's line is printed.
pub fn measure_rounds_then(
    count: impl Fn() -> u64,
    samples: u64,
    rounds: u32,
    max_seconds: f64,
    after_round: impl Fn(),
) -> Vec<f64> {
    let give_up = Instant::now() + Duration::from_secs_f64(max_seconds);
    while count() == 0 {
        if Instant::now() > give_up {
            return Vec::new();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut rates = Vec::new();
    for round in 0..rounds {
        let start_count = count();
        let start = Instant::now();
        while count() - start_count < samples {
            if Instant::now() > give_up {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let n = count() - start_count;
        if n < samples {
            break;
        }
        let rate = n as f64 / start.elapsed().as_secs_f64();
        println!("round {round}: {rate:.0} msgs/s");
        after_round();
        rates.push(rate);
    }
    rates
}

/// Connects to `addr`, retrying for up to 10 s while the other side starts; exits with
/// status 1 on any other failure.
pub fn connect_retrying(addr: &str) -> TcpStream {
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        match TcpStream::connect(addr) {
            Ok(s) => return s,
            Err(e) if Instant::now() < give_up && e.kind() == ErrorKind::ConnectionRefused => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => {
                eprintln!("connect {addr}: {e}");
                std::process::exit(1);
            }
        }
    }
}
