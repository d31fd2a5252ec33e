//! A subscriber that cannot keep up, client of a router on 127.0.0.1: the slow side of the
//! slow-subscriber benchmark (`bench/slow_subscriber.sh`), the same for weftd and zenohd.
//!
//! Usage: `slow_sub MODE PORT KEY MAX_SECONDS [STOP_FILE]`, MODE one of:
//!
//! - `never-reads`: a raw Zenoh client session that subscribes to KEY and never reads its
//!   socket again. It stays alive (a KeepAlive written each second), so the router keeps
//!   routing to it. At the end it reads what is waiting, 5 s at most, and prints
//!   `pending_bytes=B closed_by_router=yes|no`, with `closed_after_s=S` when the router
//!   closed it: when it saw that (a KeepAlive failed, or the read ended), from its
//!   declaration.
//! - `sleeps:MS`: a weft client session whose subscriber on KEY sleeps MS milliseconds in
//!   its callback for every sample. At the end it prints `received=N`.
//!
//! Prints `declared` once the subscription is declared (for `never-reads`, once the router
//! has handled it), then holds it until STOP_FILE exists (checked each second) or
//! MAX_SECONDS have passed.

use std::io::{ErrorKind, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft_proto::core::Priority;
use weft_testkit::raw::{send_batch, RawClient};
use weft_testkit::weft_client;
use weft_transport::tx::KEEP_ALIVE_BATCH;

/// Longest time spent reading what waits for the never-reading session at the end.
const DRAIN: Duration = Duration::from_secs(5);

fn arg<T: std::str::FromStr>(args: &[String], i: usize, name: &str) -> Result<T, String> {
    let v = args.get(i).ok_or_else(|| format!("missing {name}"))?;
    v.parse().map_err(|_| format!("{name}: not valid: {v}"))
}

/// Holds until `stop` exists or `until` passes, calling `tick` each second; stops early
/// when `tick` returns false.
fn hold(until: Instant, stop: Option<&Path>, mut tick: impl FnMut() -> bool) {
    while Instant::now() < until && !stop.is_some_and(Path::exists) {
        if !tick() {
            return;
        }
        std::thread::sleep(
            Duration::from_secs(1).min(until.saturating_duration_since(Instant::now())),
        );
    }
}

fn never_reads(port: u16, key: &str, until: Instant, stop: Option<&Path>) -> Result<(), String> {
    let zid = 0x510e_0000_0000_u128 + u128::from(std::process::id());
    let mut client = RawClient::connect(port, zid).map_err(|e| format!("connect: {e:?}"))?;
    client
        .declare_subscriber(1, key)
        .map_err(|e| format!("declare: {e}"))?;
    client
        .sync(Priority::Control, Duration::from_secs(10))
        .map_err(|e| format!("the router did not answer: {e}"))?;
    println!("declared");
    let declared = Instant::now();
    let stream = client.stream();
    stream
        .set_write_timeout(Some(Duration::from_secs(2)))
        .map_err(|e| e.to_string())?;
    let mut closed = None;
    hold(until, stop, || {
        if send_batch(stream, &KEEP_ALIVE_BATCH).is_err() {
            closed = Some(declared.elapsed());
        }
        closed.is_none()
    });
    let mut pending = 0u64;
    if closed.is_none() {
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; 64 * 1024];
        let deadline = Instant::now() + DRAIN;
        while Instant::now() < deadline {
            match stream.read(&mut buf) {
                Ok(0) => {
                    closed = Some(declared.elapsed());
                    break;
                }
                Ok(n) => pending += n as u64,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => break,
                Err(_) => {
                    closed = Some(declared.elapsed());
                    break;
                }
            }
        }
    }
    match closed {
        Some(after) => println!(
            "pending_bytes={pending} closed_by_router=yes closed_after_s={:.1}",
            after.as_secs_f64()
        ),
        None => println!("pending_bytes={pending} closed_by_router=no"),
    }
    Ok(())
}

fn sleeps(
    port: u16,
    key: &str,
    pause: Duration,
    until: Instant,
    stop: Option<&Path>,
) -> Result<(), String> {
    let session = weft_client(port).map_err(|e| format!("open: {e}"))?;
    let received = Arc::new(AtomicU64::new(0));
    let r = received.clone();
    let _sub = session
        .declare_subscriber(key, move |_| {
            r.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(pause);
        })
        .map_err(|e| format!("declare: {e}"))?;
    println!("declared");
    hold(until, stop, || true);
    println!("received={}", received.load(Ordering::SeqCst));
    Ok(())
}

fn run(args: &[String]) -> Result<(), String> {
    let mode: String = arg(args, 1, "MODE")?;
    let port: u16 = arg(args, 2, "PORT")?;
    let key: String = arg(args, 3, "KEY")?;
    let max_seconds: u64 = arg(args, 4, "MAX_SECONDS")?;
    if !(1..=3600).contains(&max_seconds) {
        return Err("MAX_SECONDS must be 1 to 3600".into());
    }
    let stop = args.get(5).map(Path::new);
    let until = Instant::now() + Duration::from_secs(max_seconds);
    if mode == "never-reads" {
        never_reads(port, &key, until, stop)
    } else if let Some(ms) = mode.strip_prefix("sleeps:") {
        let ms: u64 = ms.parse().map_err(|_| format!("MODE: not valid: {mode}"))?;
        sleeps(port, &key, Duration::from_millis(ms), until, stop)
    } else {
        Err(format!("MODE: never-reads or sleeps:MS, not {mode}"))
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let result = run(&args);
    if let Err(e) = &result {
        eprintln!("slow_sub: {e}");
    }
    // The sleeping callback may hold an I/O thread for a while yet: end without waiting
    // for it.
    std::process::exit(if result.is_ok() { 0 } else { 1 })
}
