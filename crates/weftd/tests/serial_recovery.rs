//! How a serial line to weftd recovers, each case without a human and within two lease
//! periods (a 2 s lease here): the router restarted, the device reset mid-session, the
//! line torn down and made again, a new session after a clean close, line noise, and a
//! device started before its router; and around them: a listener whose line comes back
//! with no device waits without spinning, an `I` sent before weftd opened its port is
//! answered (once, however many copies), and zenohd on the device side comes back after
//! weftd restarted (with `WEFT_ZENOHD_SERIAL`). The line is two pseudo-terminals linked
//! by socat (`weft_testkit::pty`); weftd listens on one end, the device (a weft client,
//! as an MCU would be) connects on the other, and a weft client on TCP watches through
//! weftd.
//! Each test prints how long recovery took (`bench/RESULTS.md`, "Serial link recovery").
//! With `WEFT_RECOVERY_ZENOHD` naming a zenohd built with its serial link, zenohd is the
//! router instead of weftd: the tests then show where Zenoh's router differs
//! (`docs/router.md`, "Recovery on a serial line"); some fail by design.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use weft::{Config, FifoReceiver, PutOptions, Sample, SampleKind, WhatAmI};
use weft_testkit::pty::PtyPair;

mod common;
use common::{weft_client_at, Weftd};

/// The lease of every node here: two lease periods are 4 s.
const LEASE: Duration = Duration::from_secs(2);

/// weftd's configuration: the short lease.
fn router_config() -> String {
    format!(
        "{{ transport: {{ link: {{ tx: {{ lease: {} }} }} }} }}",
        LEASE.as_millis()
    )
}

/// weftd on `port` (TCP) listening on the line's end `a` (`extra`: more `#` settings),
/// its log in a file of its own ([`Router::log`]). With `WEFT_RECOVERY_ZENOHD` naming a
/// zenohd built with its serial link, that zenohd instead, with the same lease: the
/// tests then show what Zenoh's router does in each case (docs/router.md).
fn start_router(port: u16, line: &PtyPair, extra: &str) -> Router {
    static STARTED: AtomicU64 = AtomicU64::new(0);
    let log = std::env::temp_dir().join(format!(
        "weft-serial-recovery-{}-{}.log",
        std::process::id(),
        STARTED.fetch_add(1, Ordering::Relaxed)
    ));
    let serial = line.endpoint(&line.a, extra);
    let process = match std::env::var_os("WEFT_RECOVERY_ZENOHD") {
        Some(zenohd) => {
            let child = Command::new(zenohd)
                .args(["-l", &format!("tcp/127.0.0.1:{port}"), "-l", &serial])
                .arg("--no-multicast-scouting")
                .arg(format!(
                    "--cfg=transport/link/tx/lease:{}",
                    LEASE.as_millis()
                ))
                .env("RUST_LOG", "info")
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).expect("create the log file"))
                .spawn()
                .expect("start zenohd");
            weft_testkit::wait_for_port(port);
            Process::Zenohd(child)
        }
        None => Process::Weftd(Weftd::logging_to(
            port,
            &router_config(),
            &["-l", &serial],
            &log,
        )),
    };
    Router { process, log }
}

/// The router's process.
enum Process {
    Weftd(Weftd),
    Zenohd(Child),
}

/// A router process and its log file; dropped, the router is killed (`kill -9`) and the
/// log removed.
struct Router {
    process: Process,
    log: std::path::PathBuf,
}

impl Router {
    /// What it logged so far.
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// CPU time it used so far (user and system, in clock ticks: 10 ms on Linux).
    fn cpu_ticks(&self) -> u64 {
        let pid = match &self.process {
            Process::Weftd(w) => w.pid(),
            Process::Zenohd(c) => c.id(),
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        // Fields after the command's closing parenthesis: utime and stime are the 12th
        // and 13th.
        let fields: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .collect();
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        if let Process::Zenohd(child) = &mut self.process {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_file(&self.log);
    }
}

/// A device's configuration: a client connecting to `endpoint`, with the short lease.
fn device_config(endpoint: &str) -> Config {
    Config {
        mode: WhatAmI::Client,
        multicast_scouting: false,
        connect: vec![endpoint.parse().unwrap()],
        lease: LEASE,
        ..Config::default()
    }
}

/// Numbered puts (`0`, `1`, ...) on `key` every 10 ms from a thread, until dropped.
struct Stream {
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Stream {
    fn start(session: &weft::Session, key: &str) -> Self {
        let (stop, sent) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicU64::new(0)),
        );
        let (session, key) = (session.clone(), key.to_owned());
        let (stop2, sent2) = (stop.clone(), sent.clone());
        let thread = std::thread::spawn(move || {
            // Bounded: a minute at most.
            for n in 0..6_000u64 {
                if stop2.load(Ordering::Relaxed) {
                    break;
                }
                let _ = session.put(&key, n.to_string().as_bytes(), &PutOptions::default());
                sent2.store(n + 1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Self {
            stop,
            sent,
            thread: Some(thread),
        }
    }

    /// How many were put so far.
    fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The numbers a subscriber received from a [`Stream`], with when.
#[derive(Default)]
struct Received {
    got: Vec<(u64, Instant)>,
}

impl Received {
    /// Receives from `rx` until `done` holds of what was received, within `within`;
    /// whether it did.
    fn until(
        &mut self,
        rx: &FifoReceiver<Sample>,
        within: Duration,
        done: impl Fn(&[(u64, Instant)]) -> bool,
    ) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if done(&self.got) {
                return true;
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            if let Ok(s) = rx.recv_timeout(left) {
                let n = std::str::from_utf8(&s.payload).unwrap().parse().unwrap();
                self.got.push((n, Instant::now()));
            }
        }
    }

    /// The first number received at or after `t`.
    fn first_after(&self, t: Instant) -> Option<(u64, Instant)> {
        self.got.iter().copied().find(|(_, at)| *at >= t)
    }

    /// The first number received that is `n` or more.
    fn first_from(&self, n: u64) -> Option<(u64, Instant)> {
        self.got.iter().copied().find(|(m, _)| *m >= n)
    }

    /// The numbers missing in what was received from `from` on (none: the stream came
    /// whole).
    fn missing_from(&self, from: u64) -> Vec<u64> {
        let mut seen: Vec<u64> = self
            .got
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| *n >= from)
            .collect();
        seen.sort_unstable();
        seen.dedup();
        let last = seen.last().copied().unwrap_or(from);
        (from..=last)
            .filter(|n| seen.binary_search(n).is_err())
            .collect()
    }
}

/// Liveliness events on `rec/**`: (kind, key, when).
type TokenEvents = Receiver<(SampleKind, String, Instant)>;

/// A liveliness subscriber of `session` on `rec/device/**`.
fn watch_tokens(session: &weft::Session) -> (weft::LivelinessSubscriber, TokenEvents) {
    let (tx, rx) = channel();
    let sub = session
        .declare_liveliness_subscriber("rec/device/**", true, move |s| {
            let _ = tx.send((s.kind, s.key_expr.to_string(), Instant::now()));
        })
        .unwrap();
    (sub, rx)
}

/// Waits for `kind` on `key` among `events`, within `within`: when it came.
fn wait_token(events: &TokenEvents, kind: SampleKind, key: &str, within: Duration) -> Instant {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok((k, ke, at)) if k == kind && ke == key => return at,
            Ok(_) => {}
            Err(_) => panic!("no {kind:?} of the token {key} within {within:?}"),
        }
    }
}

/// Asserts that `took` is within two lease periods; prints it for RESULTS.
fn recovered(case: &str, took: Duration) {
    eprintln!("serial recovery: {case}: {} ms", took.as_millis());
    assert!(
        took <= 2 * LEASE,
        "{case}: recovered in {took:?}, more than two lease periods ({:?})",
        2 * LEASE
    );
}

/// Case 1: weftd is killed and started again while the device keeps running; the device
/// opens a new session by itself (at once: the new weftd answers its frames `R`), its
/// stream reaches a TCP subscriber again, and from then on nothing it publishes is lost;
/// what weftd forwards to it reaches it again (its subscriber was declared again).
#[test]
fn a_device_reconnects_by_itself_when_the_router_restarts() {
    let Some(line) = PtyPair::new() else { return };
    let port = weft_testkit::free_port();
    let router = start_router(port, &line, "");
    let device = weft::open(device_config(&line.endpoint(&line.b, ""))).expect("the device");
    let (_back, at_device) = device.declare_subscriber_channel("rec/back", 64).unwrap();
    let watcher = weft_client_at(port);
    let (_sub, rx) = watcher
        .declare_subscriber_channel("rec/stream", 10_000)
        .unwrap();
    let stream = Stream::start(&device, "rec/stream");
    let mut before = Received::default();
    assert!(
        before.until(&rx, Duration::from_secs(10), |g| g.len() >= 50),
        "the stream never came through weftd"
    );
    let first = before.got[0].0;
    assert_eq!(before.missing_from(first), Vec::<u64>::new());
    watcher.close();
    // `kill -9`.
    drop(router);
    let restarted_at = Instant::now();
    let _router = start_router(port, &line, "");
    let up_at = Instant::now();
    eprintln!(
        "weftd started again in {} ms",
        (up_at - restarted_at).as_millis()
    );
    let watcher = weft_client_at(port);
    let (_sub, rx) = watcher
        .declare_subscriber_channel("rec/stream", 10_000)
        .unwrap();
    let mut after = Received::default();
    assert!(
        after.until(&rx, 3 * LEASE, |g| !g.is_empty()),
        "the device's stream never came back through the restarted weftd ({} put)",
        stream.sent()
    );
    let (resumed, at) = after.first_after(up_at).unwrap();
    recovered("router restarted", at - up_at);
    // Not at the end of the device's lease: the restarted weftd answers the first frame
    // of the session it no longer has with an `R`, and the device starts a new one.
    assert!(
        at - up_at < LEASE / 2,
        "the device waited for its lease ({:?}) to end its old session",
        at - up_at
    );
    // From then on, every number comes.
    assert!(after.until(&rx, Duration::from_secs(10), |g| g
        .last()
        .is_some_and(|(n, _)| *n >= resumed + 100)));
    assert_eq!(after.missing_from(resumed), Vec::<u64>::new());
    // And the device's subscriber was declared again to the new router.
    let deadline = Instant::now() + 2 * LEASE;
    loop {
        watcher
            .put("rec/back", b"back", &PutOptions::default())
            .unwrap();
        if at_device.recv_timeout(Duration::from_millis(100)).is_ok() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the device's subscriber was lost"
        );
    }
}

/// The device of [`a_device_that_resets_gets_a_new_session_and_its_old_one_is_withdrawn_at_once`]
/// and [`a_router_takes_a_new_session_after_a_clean_close`], run as a process of its own
/// by them: a client on the serial endpoint `WEFT_RECOVERY_DEVICE` holding the token
/// `rec/device/<WEFT_RECOVERY_TAG>` and putting a stream on `rec/<tag>`; it prints `up`
/// once open, and closes its session and exits when its input says `close` or ends (or
/// after a minute).
#[test]
#[ignore = "the device process of the serial recovery tests, started by them"]
fn device_process() {
    let (Ok(endpoint), Ok(tag)) = (
        std::env::var("WEFT_RECOVERY_DEVICE"),
        std::env::var("WEFT_RECOVERY_TAG"),
    ) else {
        panic!("run by the serial recovery tests only (WEFT_RECOVERY_DEVICE is not set)");
    };
    let session = weft::open(device_config(&endpoint)).expect("the device's session");
    let _token = session.declare_token(&format!("rec/device/{tag}")).unwrap();
    let _stream = Stream::start(&session, &format!("rec/{tag}"));
    println!("up");
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        while std::io::stdin().lock().read_line(&mut line).unwrap_or(0) > 0 {
            if line.trim() == "close" {
                break;
            }
            line.clear();
        }
        let _ = tx.send(());
    });
    let _ = rx.recv_timeout(Duration::from_secs(60));
    session.close();
}

/// A device process ([`device_process`]) on the line's end `b`.
struct Device {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Device {
    /// Starts it with `tag`, and waits (10 s at most) until it says it is up.
    fn start(line: &PtyPair, tag: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "device_process",
                "--ignored",
                "--nocapture",
                "-q",
            ])
            .env("WEFT_RECOVERY_DEVICE", line.endpoint(&line.b, ""))
            .env("WEFT_RECOVERY_TAG", tag)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a device process");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(Result::ok) {
                if l == "up" {
                    let _ = tx.send(());
                }
            }
        });
        let stdin = child.stdin.take();
        let mut device = Self { child, stdin };
        if rx.recv_timeout(Duration::from_secs(10)).is_err() {
            device.kill();
            panic!("the device {tag} did not open its session within 10 s");
        }
        device
    }

    /// SIGKILL: the device resets, saying nothing to the router.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes its session cleanly and waits (10 s at most) for it to exit.
    fn close(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"close\n");
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the device did not close");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Case 2: the device is killed mid-session (SIGKILL, no Close) and a new one opens a
/// session on the same line: weftd takes it at once (the line's `I` ends the old
/// session, `R`, `I` again, `I+A`), and withdraws the old session's entities at once: a
/// TCP liveliness subscriber sees its token deleted long before the lease would have
/// expired.
#[test]
fn a_device_that_resets_gets_a_new_session_and_its_old_one_is_withdrawn_at_once() {
    let Some(line) = PtyPair::new() else { return };
    let port = weft_testkit::free_port();
    let _router = start_router(port, &line, "");
    let watcher = weft_client_at(port);
    let (_tokens, events) = watch_tokens(&watcher);
    let (_sub, rx) = watcher
        .declare_subscriber_channel("rec/second", 10_000)
        .unwrap();
    let mut first = Device::start(&line, "first");
    wait_token(&events, SampleKind::Put, "rec/device/first", 2 * LEASE);
    first.kill();
    let reset_at = Instant::now();
    let _second = Device::start(&line, "second");
    let withdrawn_at = wait_token(&events, SampleKind::Delete, "rec/device/first", 2 * LEASE);
    let withdrawn = withdrawn_at - reset_at;
    eprintln!(
        "serial recovery: device reset: old session withdrawn in {} ms",
        withdrawn.as_millis()
    );
    assert!(
        withdrawn < LEASE / 2,
        "the old session was withdrawn after {withdrawn:?}, not at once (lease {LEASE:?})"
    );
    wait_token(&events, SampleKind::Put, "rec/device/second", 2 * LEASE);
    let mut got = Received::default();
    assert!(got.until(&rx, 2 * LEASE, |g| !g.is_empty()));
    recovered("device reset", got.got[0].1 - reset_at);
}

/// Case 3: the line is torn down and made again at the same paths (an adapter unplugged
/// and plugged back): both ports hang up; weftd ends the session on its port at once and
/// opens the port again once it is back, the device connects again, and its stream and
/// token come back.
#[test]
fn both_sides_recover_when_the_line_is_torn_down_and_made_again() {
    let Some(mut line) = PtyPair::new() else {
        return;
    };
    let port = weft_testkit::free_port();
    let router = start_router(port, &line, "");
    let watcher = weft_client_at(port);
    let (_tokens, events) = watch_tokens(&watcher);
    let (_sub, rx) = watcher
        .declare_subscriber_channel("rec/stream", 10_000)
        .unwrap();
    let device = weft::open(device_config(&line.endpoint(&line.b, ""))).expect("the device");
    let _token = device.declare_token("rec/device/line").unwrap();
    let stream = Stream::start(&device, "rec/stream");
    wait_token(&events, SampleKind::Put, "rec/device/line", 2 * LEASE);
    let mut got = Received::default();
    assert!(got.until(&rx, Duration::from_secs(10), |g| g.len() >= 20));
    for round in 0..2 {
        line.tear_down();
        let down_at = Instant::now();
        // Numbers put from now on can only come over a new session (the last ones put
        // before may still be on their way through weftd).
        let first_new = stream.sent() + 1;
        let gone_at = wait_token(&events, SampleKind::Delete, "rec/device/line", 2 * LEASE);
        eprintln!(
            "serial recovery: line torn down (round {round}): session ended in {} ms",
            (gone_at - down_at).as_millis()
        );
        line.reopen();
        let back_at = Instant::now();
        wait_token(&events, SampleKind::Put, "rec/device/line", 2 * LEASE);
        assert!(
            got.until(&rx, 2 * LEASE, |g| g.iter().any(|(n, _)| *n >= first_new)),
            "the stream did not come back ({} put)",
            stream.sent()
        );
        let (resumed, at) = got.first_from(first_new).unwrap();
        recovered("line torn down and made again", at - back_at);
        assert!(got.until(&rx, Duration::from_secs(10), |g| g
            .last()
            .is_some_and(|(n, _)| *n >= resumed + 50)));
        assert_eq!(
            got.missing_from(resumed),
            Vec::<u64>::new(),
            "weftd's log:\n{}",
            router.log()
        );
    }
}

/// Case 4: a device closes its session cleanly and exits, and the next one (a new
/// process on the same line) is taken at once, several times over.
#[test]
fn a_router_takes_a_new_session_after_a_clean_close() {
    let Some(line) = PtyPair::new() else { return };
    let port = weft_testkit::free_port();
    let _router = start_router(port, &line, "");
    let watcher = weft_client_at(port);
    let (_tokens, events) = watch_tokens(&watcher);
    for round in 0..3 {
        let tag = format!("clean{round}");
        let started_at = Instant::now();
        let mut device = Device::start(&line, &tag);
        let key = format!("rec/device/{tag}");
        let up_at = wait_token(&events, SampleKind::Put, &key, 2 * LEASE);
        recovered("new session after a clean close", up_at - started_at);
        device.close();
        let closed_at = Instant::now();
        let gone_at = wait_token(&events, SampleKind::Delete, &key, 2 * LEASE);
        assert!(
            gone_at - closed_at < LEASE / 2,
            "the closed session lingered"
        );
    }
}

/// Case 5: random bytes (fake delimiters among them) put on the line both ways between
/// frames while the device streams: frames keep flowing, the damaged ones are dropped
/// and counted (`weft::metrics::serial_dropped_frames` at the device,
/// `weft_serial_dropped_frames` in weftd's metrics), and the session never ends.
#[test]
fn line_noise_is_counted_and_never_ends_the_session() {
    let Some(line) = PtyPair::new() else { return };
    let port = weft_testkit::free_port();
    // Not exclusive: the test writes the noise into both ports.
    let _router = start_router(port, &line, ";exclusive=false");
    let watcher = weft_client_at(port);
    let (_tokens, events) = watch_tokens(&watcher);
    let (_sub, rx) = watcher
        .declare_subscriber_channel("rec/stream", 10_000)
        .unwrap();
    let device =
        weft::open(device_config(&line.endpoint(&line.b, ";exclusive=false"))).expect("the device");
    let (_back, at_device) = device
        .declare_subscriber_channel("rec/back", 10_000)
        .unwrap();
    let _token = device.declare_token("rec/device/noisy").unwrap();
    wait_token(&events, SampleKind::Put, "rec/device/noisy", 2 * LEASE);
    let stream = Stream::start(&device, "rec/stream");
    let _back_stream = Stream::start(&watcher, "rec/back");
    let mut got = Received::default();
    assert!(got.until(&rx, Duration::from_secs(10), |g| g.len() >= 20));
    let dropped = weft::metrics::serial_dropped_frames();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for burst in 0..40u64 {
        let len = 1 + random() % 300;
        let noise: Vec<u8> = (0..len)
            .map(|_| match random() % 16 {
                // Fake delimiters, and the bytes a frame starts with.
                0 | 1 => 0,
                2 => 0x02,
                _ => random() as u8,
            })
            .collect();
        line.inject(if burst % 2 == 0 { &line.a } else { &line.b }, &noise);
        // Frames between bursts: the next burst waits for one more number.
        let want = got.got.len() + 1;
        assert!(
            got.until(&rx, 2 * LEASE, |g| g.len() >= want),
            "frames stopped after {burst} bursts of noise"
        );
    }
    // The last burst may still cut the frame it ran into, the one being put then or the
    // next: the stream is whole from the number after those.
    let clean = stream.sent() + 1;
    assert!(got.until(&rx, Duration::from_secs(10), |g| g
        .last()
        .is_some_and(|(n, _)| *n >= clean + 50)));
    assert_eq!(got.missing_from(clean), Vec::<u64>::new());
    assert!(
        at_device.try_recv().is_ok(),
        "nothing came back to the device"
    );
    let counted = weft::metrics::serial_dropped_frames() - dropped;
    let at_router = router_dropped_frames(&watcher);
    eprintln!(
        "serial recovery: line noise: {counted} damaged frames dropped at the device, \
         {at_router} at weftd"
    );
    assert!(counted > 0, "no damaged frame was counted at the device");
    assert!(at_router > 0, "no damaged frame was counted at weftd");
    // The session lived on: its token was never withdrawn.
    while let Ok((kind, key, _)) = events.try_recv() {
        assert!(kind == SampleKind::Put, "{key} was withdrawn by the noise");
    }
}

/// weftd's `weft_serial_dropped_frames` (its metrics, read in its admin space by
/// `session`, a client of it).
fn router_dropped_frames(session: &weft::Session) -> u64 {
    let replies = session
        .get(
            "@/*/router/metrics?descriptors=false;compression=false",
            &weft::GetOptions::default(),
        )
        .unwrap();
    let reply = replies
        .recv_timeout(Duration::from_secs(10))
        .expect("weftd's metrics");
    let text = String::from_utf8(reply.result.expect("weftd's metrics").payload.into_vec())
        .expect("metrics as text");
    text.lines()
        .find_map(|l| l.strip_prefix("weft_serial_dropped_frames_total "))
        .unwrap_or_else(|| panic!("no weft_serial_dropped_frames in weftd's metrics:\n{text}"))
        .trim()
        .parse()
        .unwrap()
}

/// Case 6: the device starts before its router: its `I` goes unanswered (the test reads
/// it off the line, twice: the device sends it again), and once weftd opens the port the
/// device's next `I` opens the session, its open returns and its stream comes through.
#[test]
fn a_device_started_before_its_router_connects_once_the_router_appears() {
    let Some(line) = PtyPair::new() else { return };
    let endpoint = line.endpoint(&line.b, "");
    let (tx, opened) = channel();
    let _opening = std::thread::spawn(move || {
        let config = Config {
            // Wait for the router however long it takes.
            connect_timeout_ms: Some(-1),
            ..device_config(&endpoint)
        };
        let _ = tx.send(weft::open(config));
    });
    // The device's `I`, twice, with nobody listening.
    let init: &[u8] = &[0x02, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00];
    {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let mut port = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(0o400 | 0o4000) // O_NOCTTY | O_NONBLOCK
            .open(&line.a)
            .unwrap();
        let (mut heard, mut seen) = (0, Vec::new());
        let deadline = Instant::now() + Duration::from_secs(10);
        while heard < 2 {
            assert!(
                Instant::now() < deadline,
                "the device sent no I: {seen:02x?}"
            );
            let mut buf = [0u8; 64];
            match port.read(&mut buf) {
                Ok(n) => seen.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => panic!("reading the line: {e}"),
            }
            while let Some(i) = seen.windows(init.len()).position(|w| w == init) {
                heard += 1;
                seen.drain(..i + init.len());
            }
        }
        assert!(
            opened.try_recv().is_err(),
            "the device's open returned without a router"
        );
    }
    let port = weft_testkit::free_port();
    let _router = start_router(port, &line, "");
    let up_at = Instant::now();
    let device = opened
        .recv_timeout(2 * LEASE)
        .expect("the device's open did not return once the router was up")
        .expect("the device's session");
    let watcher = weft_client_at(port);
    let (_sub, rx) = watcher
        .declare_subscriber_channel("rec/early", 10_000)
        .unwrap();
    let _stream = Stream::start(&device, "rec/early");
    let mut got = Received::default();
    assert!(got.until(&rx, 2 * LEASE, |g| !g.is_empty()));
    recovered("device started before the router", got.got[0].1 - up_at);
}

/// A listening port whose line hangs up and comes back while no device is on it: weftd
/// opens it again (and says so), waits on it without spinning, and takes the next
/// device's session at once.
#[test]
fn a_listener_whose_line_comes_back_waits_quietly_for_the_next_device() {
    let Some(mut line) = PtyPair::new() else {
        return;
    };
    let port = weft_testkit::free_port();
    let router = start_router(port, &line, "");
    line.reopen();
    let deadline = Instant::now() + 2 * LEASE;
    while !router.log().contains("open again") {
        assert!(
            Instant::now() < deadline,
            "weftd did not open its port again: {}",
            router.log()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Half a second of weftd's CPU time, nothing on the line.
    let (ticks, wall) = (router.cpu_ticks(), Instant::now());
    while wall.elapsed() < Duration::from_millis(500) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let used = Duration::from_millis(10 * (router.cpu_ticks() - ticks));
    eprintln!("weftd used {used:?} of CPU in 500 ms on an idle line");
    assert!(
        used < Duration::from_millis(100),
        "weftd used {used:?} of CPU in 500 ms waiting on an idle line"
    );
    let started_at = Instant::now();
    let device = weft::open(device_config(&line.endpoint(&line.b, ""))).expect("the device");
    let watcher = weft_client_at(port);
    let (_tokens, events) = watch_tokens(&watcher);
    let _token = device.declare_token("rec/device/next").unwrap();
    let up_at = wait_token(&events, SampleKind::Put, "rec/device/next", 2 * LEASE);
    recovered("device on a line that came back", up_at - started_at);
}

/// A device that sent its only `I` before the router opened the port (Zenoh-Pico and
/// Zenoh's connecting side send it once, then wait for the answer): weftd reads what
/// the port received before it opened, and answers `I+A`. A device that sent it three
/// times (a weft device sends it every second until answered) gets one `I+A` and no
/// `R`: the copies that follow the one answered do not end the session they opened.
#[test]
fn a_device_whose_i_came_before_the_router_opened_is_answered_once() {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let init: &[u8] = &[0x02, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00];
    let init_ack: &[u8] = &[0x02, 0x03, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00];
    for copies in [1, 3] {
        let Some(line) = PtyPair::new() else { return };
        // The device's end, opened raw by the test.
        let mut device = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(0o400 | 0o4000) // O_NOCTTY | O_NONBLOCK
            .open(&line.b)
            .unwrap();
        for _ in 0..copies {
            device.write_all(init).unwrap();
        }
        let port = weft_testkit::free_port();
        let _router = start_router(port, &line, "");
        let up_at = Instant::now();
        let mut seen = Vec::new();
        let mut answered_at = None;
        // Until the answer, then 200 ms more: an `R` would follow it at once.
        while answered_at.is_none_or(|at: Instant| at.elapsed() < Duration::from_millis(200)) {
            assert!(
                up_at.elapsed() < 2 * LEASE,
                "weftd did not answer the I sent before it opened: {seen:02x?}"
            );
            let mut buf = [0u8; 64];
            match device.read(&mut buf) {
                Ok(n) => seen.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => panic!("reading the line: {e}"),
            }
            if answered_at.is_none() && seen.windows(init_ack.len()).any(|w| w == init_ack) {
                answered_at = Some(Instant::now());
                recovered(
                    &format!("I sent {copies} times before the router opened"),
                    up_at.elapsed(),
                );
            }
        }
        assert_eq!(
            seen, init_ack,
            "{copies} I sent before weftd opened: answered other than one I+A"
        );
    }
}

/// zenohd 1.10.2 built with its serial link, as `WEFT_ZENOHD_SERIAL` names it; `None`
/// (skipped, or failed where `WEFT_REQUIRE_ZENOHD_SERIAL` is set) otherwise.
fn zenohd_serial() -> Option<std::path::PathBuf> {
    match std::env::var_os("WEFT_ZENOHD_SERIAL").map(std::path::PathBuf::from) {
        Some(p) if p.exists() => Some(p),
        _ => {
            weft_testkit::Prerequisite::ZenohdSerial.missing(
                "WEFT_ZENOHD_SERIAL does not name a zenohd 1.10.2 built with the serial link",
            );
            None
        }
    }
}

/// Case 1 with zenohd as the device side (connecting over the line): weftd is killed and
/// started again; the new weftd answers zenohd's frames `R`, which zenohd reads as an
/// empty batch, so zenohd opens a new session when its lease expires, and samples flow
/// again through the line.
#[test]
fn zenohd_on_the_device_side_reconnects_when_weftd_restarts() {
    let Some(zenohd) = zenohd_serial() else {
        return;
    };
    let Some(line) = PtyPair::new() else { return };
    let port = weft_testkit::free_port();
    let router = start_router(port, &line, "");
    let zport = weft_testkit::free_port();
    struct Kill(Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _zenohd = Kill(
        Command::new(zenohd)
            .args(["-l", &format!("tcp/127.0.0.1:{zport}")])
            .args(["-e", &line.endpoint(&line.b, "")])
            .arg("--no-multicast-scouting")
            .arg(format!(
                "--cfg=transport/link/tx/lease:{}",
                LEASE.as_millis()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start zenohd"),
    );
    weft_testkit::wait_for_port(zport);
    let publisher = weft_client_at(zport);
    let _stream = Stream::start(&publisher, "rec/zenohd");
    let watcher = weft_client_at(port);
    let (_sub, rx) = watcher
        .declare_subscriber_channel("rec/zenohd", 10_000)
        .unwrap();
    let mut got = Received::default();
    assert!(
        got.until(&rx, Duration::from_secs(10), |g| g.len() >= 20),
        "nothing came from zenohd over the line"
    );
    watcher.close();
    drop(router);
    let router = start_router(port, &line, "");
    let up_at = Instant::now();
    let watcher = weft_client_at(port);
    let (_sub, rx) = watcher
        .declare_subscriber_channel("rec/zenohd", 10_000)
        .unwrap();
    let mut after = Received::default();
    assert!(
        after.until(&rx, 3 * LEASE, |g| !g.is_empty()),
        "zenohd's samples never came through the restarted weftd; weftd's log:\n{}",
        router.log()
    );
    recovered(
        "router restarted, zenohd on the device side",
        after.got[0].1 - up_at,
    );
}
