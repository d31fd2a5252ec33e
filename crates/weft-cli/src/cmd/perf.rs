//! Throughput and latency tools: `weft pub-thr`, `weft sub-thr`, `weft ping`, `weft pong`.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use weft::{CongestionControl, Priority, PutOptions};

use super::common::{stop_flag, stopped, SessionArgs};

const THR_KEY: &str = "test/thr";
const PING_KEY: &str = "test/ping";
const PONG_KEY: &str = "test/pong";

/// Arguments of `weft pub-thr`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example: weft pub-thr 8 -l tcp/127.0.0.1:7450 --duration 10")]
pub(crate) struct PubThrArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Payload size in bytes.
    size: usize,
    /// Priority, 1 to 7 (Zenoh's `-p`).
    #[arg(short, long, value_parser = clap::value_parser!(u8).range(1..=7))]
    priority: Option<u8>,
    /// Send every message at once, without batching.
    #[arg(long)]
    express: bool,
    /// Print the publishing rate every `--number` messages (Zenoh's `-t`).
    #[arg(short = 't', long)]
    print: bool,
    /// Messages per printed rate, with `--print` (Zenoh's `-n`).
    #[arg(short = 'n', long, default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    number: u64,
    /// Stop after this many seconds.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Publish at most this many messages per second (0: as fast as possible).
    #[arg(long, default_value_t = 0.0)]
    rate: f64,
    /// The key published on.
    #[arg(short, long, default_value = THR_KEY)]
    key: String,
    /// Publish on this many keys in turn, `KEY/0` to `KEY/<N-1>` (a new route for each
    /// message where they outnumber the routers' route caches).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    keys: u32,
    /// Number the messages: each payload starts with its number (8 bytes, little-endian,
    /// from 0), for `weft sub-thr --seq` to count what it missed. SIZE must be 8 or more.
    #[arg(long)]
    seq: bool,
}

/// Arguments of `weft sub-thr`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example: weft sub-thr -e tcp/127.0.0.1:7450 --samples 100000 --rounds 10")]
pub(crate) struct SubThrArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Messages per round (Zenoh's `-n`/`--number`; note that Zenoh's long `--samples`
    /// is the number of rounds, weft's `--rounds`).
    #[arg(short = 'n', long, visible_alias = "number", default_value_t = 100_000)]
    samples: u64,
    /// Rounds to measure (Zenoh's `-s`).
    #[arg(short = 's', long, default_value_t = 10)]
    rounds: u32,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 120.0)]
    max_seconds: f64,
    /// The key expression subscribed to.
    #[arg(short, long, default_value = THR_KEY)]
    key: String,
    /// The messages are numbered (`weft pub-thr --seq`): after each round, print
    /// `seq_received=R seq_lost=L seq_max_gap_us=G`, R and L counted from the first message
    /// received (L: numbers skipped), G the longest wait between two messages since the
    /// previous such line.
    #[arg(long)]
    seq: bool,
}

/// Arguments of `weft ping`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example: weft ping 64 -e tcp/127.0.0.1:7450 --samples 1000")]
pub(crate) struct PingArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Payload size in bytes.
    size: usize,
    /// Round trips to measure (after the warm-up); Zenoh's `-n`.
    #[arg(short = 'n', long, default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..))]
    samples: u64,
    /// Warm-up: this many seconds of round trips before measuring (Zenoh's `-w`); 100
    /// round trips when not given.
    #[arg(short = 'w', long)]
    warmup: Option<f64>,
    /// Pings are batched like other messages instead of sent at once (Zenoh's
    /// `--no-express`).
    #[arg(long)]
    no_express: bool,
}

/// Arguments of `weft pong`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example: weft pong -l tcp/127.0.0.1:7450")]
pub(crate) struct PongArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Pongs are batched like other messages instead of sent at once (Zenoh's
    /// `--no-express`).
    #[arg(long)]
    no_express: bool,
}

/// Runs `weft pub-thr`.
pub(crate) fn pub_thr(args: &PubThrArgs) -> ExitCode {
    let stop = stop_flag();
    let session = match args.session.open("pub-thr") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let options = PutOptions {
        priority: args
            .priority
            .and_then(Priority::from_u8)
            .unwrap_or(Priority::Data),
        congestion_control: CongestionControl::Block,
        express: args.express,
        ..PutOptions::default()
    };
    if args.seq && args.size < 8 {
        eprintln!("weft pub-thr: --seq needs SIZE of 8 bytes or more");
        return ExitCode::from(2);
    }
    let mut payload = vec![0xA5u8; args.size];
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(args.duration);
    let pace = Pace::new(args.rate, started);
    let mut sent = 0u64;
    let mut rate = RatePrinter::new(args.print, args.number);
    if args.keys > 1 {
        let keys: Vec<String> = (0..args.keys)
            .map(|i| format!("{}/{i}", args.key))
            .collect();
        let mut next = keys.iter().cycle();
        'sending: while !stopped(&stop) && Instant::now() < deadline {
            pace.wait(sent);
            for key in next.by_ref().take(pace.burst) {
                if args.seq {
                    payload[..8].copy_from_slice(&sent.to_le_bytes());
                }
                if let Err(e) = session.put(key, &payload, &options) {
                    eprintln!("weft pub-thr: {key}: {e}");
                    break 'sending;
                }
                sent += 1;
                rate.count();
            }
        }
    } else {
        let publisher = match session.declare_publisher(&args.key, options) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("weft pub-thr: {e}");
                return ExitCode::from(1);
            }
        };
        while !stopped(&stop) && Instant::now() < deadline {
            pace.wait(sent);
            for _ in 0..pace.burst {
                if args.seq {
                    payload[..8].copy_from_slice(&sent.to_le_bytes());
                }
                if publisher.put(&payload).is_err() {
                    break;
                }
                sent += 1;
                rate.count();
            }
        }
    }
    outln!(
        "sent={sent} payload={} seconds={:.3}",
        args.size,
        started.elapsed().as_secs_f64()
    );
    session.close();
    ExitCode::SUCCESS
}

/// `weft pub-thr --rate`: messages go in bursts of about a millisecond's worth, each once
/// its time has come.
struct Pace {
    /// Messages per second; 0 for as fast as possible.
    rate: f64,
    started: Instant,
    /// Messages sent at a time.
    burst: usize,
}

impl Pace {
    fn new(rate: f64, started: Instant) -> Self {
        let burst = if rate > 0.0 {
            ((rate / 1000.0) as usize).clamp(1, 1000)
        } else {
            1000
        };
        Self {
            rate: rate.max(0.0),
            started,
            burst,
        }
    }

    /// Waits until message number `sent` is due.
    fn wait(&self, sent: u64) {
        if self.rate == 0.0 {
            return;
        }
        let due = self.started + Duration::from_secs_f64(sent as f64 / self.rate);
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
    }
}

/// Prints the rate every `every` messages when asked (`weft pub-thr --print`).
struct RatePrinter {
    on: bool,
    every: u64,
    counted: u64,
    since: Instant,
}

impl RatePrinter {
    fn new(on: bool, every: u64) -> Self {
        Self {
            on,
            every,
            counted: 0,
            since: Instant::now(),
        }
    }

    /// One more message.
    fn count(&mut self) {
        if !self.on {
            return;
        }
        self.counted += 1;
        if self.counted == self.every {
            let rate = self.every as f64 / self.since.elapsed().as_secs_f64();
            outln!("{rate:.0} msg/s");
            self.counted = 0;
            self.since = Instant::now();
        }
    }
}

/// Runs `weft sub-thr`.
pub(crate) fn sub_thr(args: &SubThrArgs) -> ExitCode {
    let stop = stop_flag();
    let session = match args.session.open("sub-thr") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let count = Arc::new(AtomicU64::new(0));
    let size = Arc::new(AtomicUsize::new(0));
    let seq = args.seq.then(|| Arc::new(Mutex::new(SeqCheck::default())));
    let (c, z, q) = (count.clone(), size.clone(), seq.clone());
    let _sub = match session.declare_subscriber(&args.key, move |s| {
        z.store(s.payload.len(), Ordering::Relaxed);
        if let Some(q) = &q {
            let mut head = [0u8; 8];
            if s.payload.len() >= 8 {
                head.copy_from_slice(&s.payload[..8]);
            }
            q.lock()
                .unwrap_or_else(|e| e.into_inner())
                .record(u64::from_le_bytes(head));
        }
        c.fetch_add(1, Ordering::Relaxed);
    }) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("weft sub-thr: {e}");
            return ExitCode::from(1);
        }
    };
    let give_up = Instant::now() + Duration::from_secs_f64(args.max_seconds);
    // Wait for the first message, then measure rounds of `samples` messages.
    while count.load(Ordering::Relaxed) == 0 {
        if stopped(&stop) || Instant::now() > give_up {
            eprintln!("weft sub-thr: no message received");
            return ExitCode::from(1);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut rates = Vec::new();
    for round in 0..args.rounds {
        let start_count = count.load(Ordering::Relaxed);
        let start = Instant::now();
        while count.load(Ordering::Relaxed) - start_count < args.samples {
            if stopped(&stop) || Instant::now() > give_up {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let n = count.load(Ordering::Relaxed) - start_count;
        if n < args.samples {
            break;
        }
        let rate = n as f64 / start.elapsed().as_secs_f64();
        outln!("round {round}: {rate:.0} msgs/s");
        if let Some(q) = &seq {
            outln!("{}", q.lock().unwrap_or_else(|e| e.into_inner()).line());
        }
        rates.push(rate);
    }
    session.close();
    if rates.is_empty() {
        eprintln!("weft sub-thr: no complete round");
        return ExitCode::from(1);
    }
    rates.sort_by(f64::total_cmp);
    outln!(
        "median_msgs_per_s={:.0} payload={}",
        rates[rates.len() / 2],
        size.load(Ordering::Relaxed)
    );
    ExitCode::SUCCESS
}

/// `weft sub-thr --seq`: what the numbers of the messages received tell.
#[derive(Default)]
struct SeqCheck {
    /// The number expected next; none before the first message.
    next: Option<u64>,
    received: u64,
    /// Numbers skipped.
    lost: u64,
    last: Option<Instant>,
    max_gap: Duration,
}

impl SeqCheck {
    fn record(&mut self, seq: u64) {
        let now = Instant::now();
        if let Some(last) = self.last {
            self.max_gap = self.max_gap.max(now - last);
        }
        self.last = Some(now);
        self.received += 1;
        match self.next {
            Some(next) if seq > next => self.lost += seq - next,
            // Repeated or out of order: not a loss; the count goes on from the higher.
            Some(next) if seq < next => return,
            _ => {}
        }
        self.next = Some(seq + 1);
    }

    /// The line printed after a round; the longest wait starts again from there.
    fn line(&mut self) -> String {
        let line = format!(
            "seq_received={} seq_lost={} seq_max_gap_us={}",
            self.received,
            self.lost,
            self.max_gap.as_micros()
        );
        self.max_gap = Duration::ZERO;
        line
    }
}

/// Runs `weft ping`.
pub(crate) fn ping(args: &PingArgs) -> ExitCode {
    let session = match args.session.open("ping") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let (_sub, pongs) = match session.declare_subscriber_channel(PONG_KEY, 16) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("weft ping: {e}");
            return ExitCode::from(1);
        }
    };
    let options = PutOptions {
        congestion_control: CongestionControl::Block,
        express: !args.no_express,
        ..PutOptions::default()
    };
    let publisher = match session.declare_publisher(PING_KEY, options) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("weft ping: {e}");
            return ExitCode::from(1);
        }
    };
    let payload = vec![0x5Au8; args.size];
    // Wait for the pong to answer.
    let mut answered = false;
    for _ in 0..100 {
        let _ = publisher.put(&payload);
        if pongs.recv_timeout(Duration::from_millis(100)).is_ok() {
            answered = true;
            break;
        }
    }
    if !answered {
        eprintln!("weft ping: no pong answered within 10 s");
        return ExitCode::from(1);
    }
    while pongs.try_recv().is_ok() {}
    let round_trip = || -> Option<Duration> {
        let start = Instant::now();
        publisher.put(&payload).ok()?;
        pongs.recv_timeout(Duration::from_secs(5)).ok()?;
        Some(start.elapsed())
    };
    // The warm-up: a time (`-w`) or 100 round trips.
    let warm_until = args
        .warmup
        .map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0)));
    let mut warmed = 0;
    while warm_until.map_or(warmed < 100, |t| Instant::now() < t) {
        if round_trip().is_none() {
            eprintln!("weft ping: a pong was lost");
            return ExitCode::from(1);
        }
        warmed += 1;
    }
    let mut one_way = Vec::with_capacity(args.samples as usize);
    for _ in 0..args.samples {
        let Some(rtt) = round_trip() else {
            eprintln!("weft ping: a pong was lost");
            return ExitCode::from(1);
        };
        one_way.push(rtt.as_secs_f64() * 1e6 / 2.0);
    }
    one_way.sort_by(f64::total_cmp);
    let pct = |p: f64| one_way[((one_way.len() as f64 * p) as usize).min(one_way.len() - 1)];
    outln!(
        "p50_us={:.1} p99_us={:.1} payload={}",
        pct(0.5),
        pct(0.99),
        args.size
    );
    session.close();
    ExitCode::SUCCESS
}

/// Runs `weft pong`.
pub(crate) fn pong(args: &PongArgs) -> ExitCode {
    let stop = stop_flag();
    let session = match args.session.open("pong") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let options = PutOptions {
        congestion_control: CongestionControl::Block,
        express: !args.no_express,
        ..PutOptions::default()
    };
    let publisher = match session.declare_publisher(PONG_KEY, options) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            eprintln!("weft pong: {e}");
            return ExitCode::from(1);
        }
    };
    let p = publisher.clone();
    let _sub = session.declare_subscriber(PING_KEY, move |s| {
        let _ = p.put(&s.payload);
    });
    while !stopped(&stop) {
        std::thread::sleep(Duration::from_millis(100));
    }
    session.close();
    ExitCode::SUCCESS
}
